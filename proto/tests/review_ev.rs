//! Review findings on the EV set.

use proto::model::ev::*;
use proto::time::{Duration, Instant};

/// A zero probe interval re-schedules an unanswered probe at `now` itself:
/// `next_probe_deadline()` never moves past `now`, so a QP's `poll_timeout`
/// keeps returning an expired deadline and every `handle_timeout` sends
/// another round of probes (a timer that fires forever). Such a set must be
/// refused.
#[test]
fn review_ev_zero_probe_interval_is_refused() {
    let cfg = EvSetConfig {
        probe_interval: Duration::ZERO,
        min_active: 0,
        ..EvSetConfig::default()
    };
    match EvSet::new(cfg.clone()) {
        Err(_) => {}
        Ok(mut s) => {
            let now = Instant::from_us(1);
            assert!(s.on_loss(0, now));
            // Demonstrate the storm: the deadline never leaves `now`.
            for _ in 0..3 {
                assert_eq!(s.probe_due(now), Some(0));
            }
            panic!(
                "zero probe interval accepted; next deadline {:?} <= now",
                s.next_probe_deadline()
            );
        }
    }
}
