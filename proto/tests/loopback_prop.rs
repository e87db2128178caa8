//! Property: two endpoints through an impaired network deliver every
//! message exactly once and byte-identical, WRITE-with-immediate completions
//! in order, no panic and no QP error (retries are infinite).
//!
//! Generic over the transport: the RC baseline runs the same property by
//! flipping the parameter.

use proptest::prelude::*;
use proto::loopback::{EvMatch, LinkConfig, MessageSpec, Scenario};
use proto::model::{QpState, Transport};
use proto::time::{Duration, Instant};

#[derive(Clone, Debug)]
struct Impairments {
    loss: f64,
    jitter_ns: u64,
    duplicate: f64,
    corrupt: f64,
    blackhole: Option<(u16, u64)>,
    seed: u64,
    start_psn: u32,
}

fn impairments() -> impl Strategy<Value = Impairments> {
    (
        0.0f64..0.3,
        0u64..400,
        0.0f64..0.1,
        0.0f64..0.05,
        proptest::option::of((0u16..8, 0u64..20)),
        any::<u64>(),
        prop_oneof![Just(0u32), Just(0xFF_FF00), 0u32..(1 << 24)],
    )
        .prop_map(
            |(loss, jitter_ns, duplicate, corrupt, blackhole, seed, start_psn)| Impairments {
                loss,
                jitter_ns,
                duplicate,
                corrupt,
                blackhole,
                seed,
                start_psn,
            },
        )
}

fn messages() -> impl Strategy<Value = Vec<MessageSpec>> {
    proptest::collection::vec(
        (0u32..20_000, proptest::option::of(any::<u32>())).prop_map(|(len, imm)| MessageSpec { len, imm }),
        1..12,
    )
}

fn link(i: &Impairments) -> LinkConfig {
    LinkConfig {
        loss: i.loss,
        jitter: Duration::from_ns(i.jitter_ns),
        duplicate: i.duplicate,
        corrupt: i.corrupt,
        ..LinkConfig::default()
    }
}

fn check(transport: Transport, i: &Impairments, msgs: Vec<MessageSpec>) -> Result<(), TestCaseError> {
    let mut sc = Scenario::new(transport, 8, msgs).with_start_psn(i.start_psn);
    sc.link_ab = link(i);
    sc.link_ba = link(i);
    // RC has one path (EV 0): a permanent blackhole on it can never be
    // survived, which is the point of MRC. RC runs the rest of the property.
    let blackhole = if transport == Transport::Rc { None } else { i.blackhole };
    if let Some((ev, us)) = blackhole {
        sc.link_ab.blackholes.push((EvMatch::Index(ev), Instant::from_us(us)));
        sc.link_ba.blackholes.push((EvMatch::Index(ev), Instant::from_us(us)));
    }
    sc.seed = i.seed;
    sc.time_limit = Duration::from_ms(500);
    let r = sc.run();
    prop_assert!(r.ok, "report: {:#?}", {
        let mut r = r.clone();
        r.ev_changes.clear();
        r
    });
    prop_assert_eq!(r.final_state_a, QpState::Rts);
    prop_assert_eq!(r.final_state_b, QpState::Rts);
    prop_assert!(r.error_completions.is_empty());
    Ok(())
}

#[cfg(debug_assertions)]
const CASES: u32 = 64;
#[cfg(not(debug_assertions))]
const CASES: u32 = 512;

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn mrc_delivers_exactly_once_under_impairments(i in impairments(), msgs in messages()) {
        check(Transport::Mrc, &i, msgs)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    /// The RC baseline under the same property, without the blackhole: RC
    /// has one path, and a blackhole on it can only end in retry-exceeded
    /// (that case is `mrc/tests/cli.rs`'s RC half).
    #[test]
    fn rc_delivers_exactly_once_under_impairments(i in impairments(), msgs in messages()) {
        check(Transport::Rc, &i, msgs)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Garbled packets reach the QPs (no ICRC): nothing may panic.
    #[test]
    fn mrc_survives_undetected_corruption(seed in any::<u64>(), corrupt in 0.0f64..0.2) {
        let mut sc = Scenario::new(Transport::Mrc, 4, Scenario::messages(6, 9000, 2));
        sc.link_ab.corrupt = corrupt;
        sc.link_ba.corrupt = corrupt;
        sc.link_ab.deliver_corrupted = true;
        sc.link_ba.deliver_corrupted = true;
        sc.seed = seed;
        sc.time_limit = Duration::from_ms(20);
        let _ = sc.run();
    }
}
