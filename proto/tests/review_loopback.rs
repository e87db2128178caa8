//! Review findings on the loopback harness.

use proto::loopback::{MessageSpec, Scenario};
use proto::model::Transport;
use proto::time::Duration;

/// `max_wimm = 0` is documented as "treated as 1" by both QPs; the harness
/// used the raw 0 as the number of receives to pre-post, posted none, and
/// (posting only one receive per receive completion) never posted any: every
/// WRITE-with-immediate hung until the time limit.
#[test]
fn review_loopback_max_wimm_zero_posts_one_receive() {
    for t in [Transport::Mrc, Transport::Rc] {
        let msgs = vec![
            MessageSpec { len: 100, imm: Some(1) },
            MessageSpec {
                len: 5000,
                imm: Some(2),
            },
        ];
        let mut sc = Scenario::new(t, 4, msgs);
        sc.b.rtr.max_wimm = 0;
        sc.time_limit = Duration::from_ms(10);
        let r = sc.run();
        assert!(
            r.ok && !r.timed_out,
            "{t:?}: imm_in_order {} timed_out {}",
            r.imm_in_order,
            r.timed_out
        );
    }
}
