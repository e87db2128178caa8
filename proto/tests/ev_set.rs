//! Tests of the EV set: spraying, marking, probing, deny/allow, events.

use proptest::prelude::*;
use proto::model::ev::*;
use proto::time::{Duration, Instant};

fn cfg(n: u32, min_active: u16, policy: SprayPolicy) -> EvSetConfig {
    EvSetConfig {
        evs: (0..n).map(|i| 0xC000 + i).collect(),
        min_active,
        policy,
        probe_interval: Duration::from_us(100),
        event_queue_len: 1024,
        seed: 7,
        ..EvSetConfig::default()
    }
}

fn counts(set: &mut EvSet, packets: usize) -> Vec<usize> {
    let mut c = vec![0; set.len()];
    for _ in 0..packets {
        c[set.select(Instant::ZERO) as usize] += 1;
    }
    c
}

#[test]
fn config_errors() {
    assert_eq!(
        EvSet::new(cfg(0, 0, SprayPolicy::RoundRobin)).unwrap_err(),
        EvConfigError::Count(0)
    );
    assert!(EvSet::new(cfg(257, 1, SprayPolicy::RoundRobin)).is_err());
    assert!(EvSet::new(cfg(4, 5, SprayPolicy::RoundRobin)).is_err());
    assert!(EvSet::new(EvSetConfig::default()).is_ok());
}

#[test]
fn round_robin_is_fair_over_good_evs() {
    let mut s = EvSet::new(cfg(256, 1, SprayPolicy::RoundRobin)).unwrap();
    for i in (0..256).step_by(3) {
        assert!(s.on_loss(i, Instant::ZERO));
    }
    let good = s.good_count();
    assert_eq!(good, 256 - 86);
    let c = counts(&mut s, good * 10);
    for (i, n) in c.iter().enumerate() {
        if i % 3 == 0 {
            assert_eq!(*n, 0, "bad EV {i} selected");
        } else {
            assert_eq!(*n, 10, "EV {i}");
        }
    }
}

#[test]
fn never_selects_bad_or_denied_while_good_exists() {
    let mut s = EvSet::new(cfg(16, 1, SprayPolicy::Weighted)).unwrap();
    s.deny(0xF, 0x3, Instant::ZERO);
    for i in 4..15 {
        s.on_timeout(i, Instant::ZERO);
    }
    for _ in 0..1000 {
        let i = s.select(Instant::ZERO);
        assert_eq!(s.state(i), EvState::Good);
    }
}

#[test]
fn min_active_guard() {
    let mut s = EvSet::new(cfg(4, 2, SprayPolicy::RoundRobin)).unwrap();
    assert!(s.on_loss(0, Instant::ZERO));
    assert!(s.on_timeout(1, Instant::ZERO));
    assert!(!s.on_loss(2, Instant::ZERO));
    assert!(!s.on_timeout(3, Instant::ZERO));
    assert!(!s.on_loss(0, Instant::ZERO), "already bad: not a guard refusal");
    assert_eq!(s.good_count(), 2);
    let c = s.counters();
    assert_eq!(c.marked_bad, 2);
    assert_eq!(c.guard_refused, 2);
}

#[test]
fn fallback_when_nothing_is_good() {
    let mut s = EvSet::new(cfg(4, 0, SprayPolicy::RoundRobin)).unwrap();
    s.on_loss(2, Instant::from_us(1));
    s.on_loss(0, Instant::from_us(2));
    s.deny(0xFFFF, 0xC001, Instant::from_us(3));
    s.deny(0xFFFF, 0xC003, Instant::from_us(3));
    assert_eq!(s.good_count(), 0);
    // Least recently marked ASSUMED_BAD.
    assert_eq!(s.select(Instant::from_us(4)), 2);
    assert_eq!(s.select_other(Instant::from_us(4), 2), 2);
    // Everything denied: still returns in-range EVs, all of them in turn.
    s.deny(0, 0, Instant::from_us(5));
    let mut c = counts(&mut s, 40);
    c.sort();
    assert_eq!(c, vec![10; 4]);
}

#[test]
fn select_other_avoids() {
    for policy in [SprayPolicy::RoundRobin, SprayPolicy::Weighted] {
        let mut s = EvSet::new(cfg(8, 1, policy)).unwrap();
        for _ in 0..100 {
            assert_ne!(s.select_other(Instant::ZERO, 3), 3);
        }
        for i in 0..8 {
            if i != 3 {
                s.on_loss(i, Instant::ZERO);
            }
        }
        // Only EV 3 is left GOOD; avoiding it has no GOOD alternative.
        let g = (0..8).find(|&i| s.state(i) == EvState::Good).unwrap();
        assert_eq!(g, 3);
        assert_eq!(s.good_count(), 1);
        assert_eq!(s.select_other(Instant::ZERO, g), g);
    }
}

#[test]
fn probe_scheduling_backoff_and_readmission() {
    let mut s = EvSet::new(cfg(8, 1, SprayPolicy::RoundRobin)).unwrap();
    let t0 = Instant::from_us(10);
    assert_eq!(s.next_probe_deadline(), None);
    assert!(s.on_loss(5, t0));
    assert!(s.on_loss(2, t0 + Duration::from_us(10)));
    assert_eq!(s.next_probe_deadline(), Some(Instant::from_us(110)));
    assert_eq!(s.probe_due(Instant::from_us(109)), None);
    assert_eq!(s.probe_due(Instant::from_us(110)), Some(5));
    assert_eq!(s.probe_due(Instant::from_us(110)), None);
    assert_eq!(s.next_probe_deadline(), Some(Instant::from_us(120)));
    assert_eq!(s.probe_due(Instant::from_us(500)), Some(2));
    // 5 was rescheduled at 110 + 200 = 310, 2 at 500 + 200 = 700.
    assert_eq!(s.next_probe_deadline(), Some(Instant::from_us(310)));
    // Unanswered probes back off x2 per try, capped at 16x the interval.
    let expect = [
        (310, 5),
        (700, 2),
        (710, 5),
        (1100, 2),
        (1510, 5),
        (1900, 2),
        (3110, 5),
        (3500, 2),
        (4710, 5),
    ];
    for (t, ev) in expect {
        assert_eq!(s.next_probe_deadline(), Some(Instant::from_us(t)));
        assert_eq!(s.probe_due(Instant::from_ns(t * 1000 - 1)), None);
        assert_eq!(s.probe_due(Instant::from_us(t)), Some(ev));
    }
    assert_eq!(s.counters().probes, 2 + 9);
    let t = Instant::from_us(5000);
    s.on_probe_response(5, t, Duration::from_us(3));
    assert_eq!(s.state(5), EvState::Good);
    assert_eq!(s.stats(5).srtt_ps, 3e6);
    assert_eq!(s.counters().readmitted, 1);
    s.on_probe_response(2, t, Duration::from_us(3));
    assert_eq!(s.next_probe_deadline(), None);
    assert_eq!(s.good_count(), 8);
    // Late response for a GOOD EV: no change.
    s.on_probe_response(2, t, Duration::from_us(3));
    assert_eq!(s.counters().readmitted, 2);
    let reasons: Vec<_> = std::iter::from_fn(|| s.poll_change())
        .map(|e| (e.ev_index, e.to, e.reason))
        .collect();
    assert_eq!(
        reasons,
        vec![
            (5, EvState::AssumedBad, EvChangeReason::Loss),
            (2, EvState::AssumedBad, EvChangeReason::Loss),
            (5, EvState::Good, EvChangeReason::ProbeOk),
            (2, EvState::Good, EvChangeReason::ProbeOk),
        ]
    );
}

#[test]
fn deny_and_allow_by_mask() {
    let mut c = cfg(0, 1, SprayPolicy::RoundRobin);
    // Plane in bits 0..3, second hop in bits 3..11.
    c.evs = entropy_from_masks(
        0xC000,
        &[
            EvField {
                shift: 0,
                width: 3,
                lo: 0,
                hi: 7,
            },
            EvField {
                shift: 3,
                width: 8,
                lo: 0,
                hi: 15,
            },
        ],
        128,
    );
    assert_eq!(c.evs.len(), 128);
    let mut s = EvSet::new(c).unwrap();
    s.on_loss(1, Instant::ZERO); // plane 1, hop 0: ASSUMED_BAD with a probe pending
    assert!(s.next_probe_deadline().is_some());
    let n = s.deny(0x7, 0x1, Instant::from_us(1)); // every EV on plane 1
    assert_eq!(n, 16);
    assert_eq!(s.counters().denied, 16);
    assert_eq!(s.next_probe_deadline(), None, "denied EVs are never probed");
    assert_eq!(s.probe_due(Instant::from_us(10_000)), None);
    for _ in 0..1000 {
        let i = s.select(Instant::ZERO);
        assert_ne!(s.value(i) & 7, 1);
    }
    assert_eq!(s.deny(0x7, 0x1, Instant::from_us(2)), 0);
    assert_eq!(s.allow(0x7, 0x1, Instant::from_us(3)), 16);
    assert_eq!(s.good_count(), 128);
    assert_eq!(s.allow(0x7, 0x1, Instant::from_us(3)), 0);
    // Deny ignores min_active.
    assert_eq!(s.deny(0, 0, Instant::from_us(4)), 128);
    assert_eq!(s.good_count(), 0);
}

#[test]
fn event_queue_overflow_is_counted() {
    let mut c = cfg(16, 0, SprayPolicy::RoundRobin);
    c.event_queue_len = 4;
    let mut s = EvSet::new(c).unwrap();
    for i in 0..10 {
        s.on_loss(i, Instant::ZERO);
    }
    assert_eq!(s.counters().events_dropped, 6);
    assert_eq!(std::iter::from_fn(|| s.poll_change()).count(), 4);
    s.on_loss(10, Instant::ZERO);
    assert_eq!(s.poll_change().unwrap().ev_index, 10);
}

#[test]
fn weighted_sends_fewer_packets_to_congested_ev() {
    let mut s = EvSet::new(cfg(8, 1, SprayPolicy::Weighted)).unwrap();
    let base = Duration::from_us(10);
    for k in 0..200u64 {
        let now = Instant::from_us(k);
        for i in 0..8u16 {
            let (rtt, ce) = match i {
                2 => (base, true),                   // ECN marks
                5 => (Duration::from_us(25), false), // high delay
                _ => (base, false),
            };
            s.on_ack(i, now, Some(rtt), ce);
        }
    }
    let c = counts(&mut s, 80_000);
    let clean = c[0] as f64;
    for i in [1, 3, 4, 6, 7] {
        assert!((c[i] as f64 - clean).abs() <= 1.0, "{c:?}");
    }
    for i in [2, 5] {
        assert!(c[i] > 0 && (c[i] as f64) < 0.6 * clean, "{c:?}");
    }
    // Recovery: clean feedback restores the share.
    for k in 0..200u64 {
        for i in 0..8u16 {
            s.on_ack(i, Instant::from_us(1000 + k), Some(base), false);
        }
    }
    let c = counts(&mut s, 8_000);
    assert!(c[2] as f64 > 0.95 * c[0] as f64, "{c:?}");
}

#[test]
fn weighted_trims_lower_weight_but_not_to_zero() {
    let mut s = EvSet::new(cfg(4, 1, SprayPolicy::Weighted)).unwrap();
    for _ in 0..100 {
        s.on_trim(1, Instant::ZERO);
    }
    assert_eq!(s.state(1), EvState::Good);
    assert!(s.weight(1) >= W_MIN && s.weight(1) < 0.25);
    let c = counts(&mut s, 10_000);
    assert!(c[1] > 0 && c[1] < c[0] / 3, "{c:?}");
}

#[test]
fn deterministic_for_a_seed() {
    let run = |seed| {
        let mut c = cfg(32, 2, SprayPolicy::Weighted);
        c.seed = seed;
        let mut s = EvSet::new(c).unwrap();
        let mut out = Vec::new();
        for k in 0..2000u64 {
            let now = Instant::from_ns(k * 100);
            let i = s.select(now);
            out.push(i);
            s.on_ack(
                i,
                now,
                Some(Duration::from_ns(5000 + (i as u64 * 37 + k) % 3000)),
                k % 7 == 0,
            );
            if k % 97 == 0 {
                s.on_loss(i, now);
            }
            if let Some(p) = s.probe_due(now) {
                s.on_probe_response(p, now, Duration::from_us(5));
            }
        }
        out
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
}

#[test]
fn entropy_generator() {
    let evs = entropy_from_masks(
        0xFFFF_0000,
        &[
            EvField {
                shift: 0,
                width: 3,
                lo: 0,
                hi: 7,
            },
            EvField {
                shift: 3,
                width: 8,
                lo: 10,
                hi: 11,
            },
            EvField {
                shift: 11,
                width: 4,
                lo: 0,
                hi: 15,
            },
        ],
        1000,
    );
    assert_eq!(evs.len(), 8 * 2 * 16);
    assert_eq!(evs[0], 0xFFFF_0000 | (10 << 3));
    assert_eq!(evs[1], 0xFFFF_0000 | (10 << 3) | 1);
    assert_eq!(evs[8], 0xFFFF_0000 | (11 << 3));
    let mut d = evs.clone();
    d.sort();
    d.dedup();
    assert_eq!(d.len(), evs.len());
    assert!(entropy_from_masks(
        0,
        &[EvField {
            shift: 0,
            width: 2,
            lo: 3,
            hi: 2
        }],
        4
    )
    .is_empty());
}

#[derive(Clone, Debug)]
enum Op {
    Select,
    Loss(u16),
    Timeout(u16),
    Trim(u16),
    Ack(u16, u32, bool),
    Probe(u64),
    Deny(u32, u32),
    Allow(u32, u32),
}

fn op(with_deny: bool) -> impl Strategy<Value = Op> {
    let base = prop_oneof![
        Just(Op::Select),
        any::<u16>().prop_map(Op::Loss),
        any::<u16>().prop_map(Op::Timeout),
        any::<u16>().prop_map(Op::Trim),
        (any::<u16>(), 1u32..100_000, any::<bool>()).prop_map(|(i, r, c)| Op::Ack(i, r, c)),
        (0u64..500).prop_map(Op::Probe),
    ];
    if with_deny {
        prop_oneof![
            6 => base,
            1 => (0u32..16, 0u32..16).prop_map(|(m, v)| Op::Deny(m, v)),
            1 => (0u32..16, 0u32..16).prop_map(|(m, v)| Op::Allow(m, v)),
        ]
        .boxed()
    } else {
        base.boxed()
    }
}

fn run_ops(n: u32, min_active: u16, weighted: bool, ops: &[Op], strict: bool) -> Result<(), TestCaseError> {
    let policy = if weighted {
        SprayPolicy::Weighted
    } else {
        SprayPolicy::RoundRobin
    };
    let mut s = EvSet::new(cfg(n, min_active, policy)).unwrap();
    let mut now = Instant::ZERO;
    for o in ops {
        now += Duration::from_us(7);
        let before = s.good_count();
        match *o {
            Op::Select => {
                let i = s.select(now);
                prop_assert!((i as usize) < s.len());
                if s.good_count() > 0 {
                    prop_assert_eq!(s.state(i), EvState::Good);
                }
            }
            Op::Loss(i) | Op::Timeout(i) => {
                let i = i % (n as u16 + 2); // sometimes out of range
                let r = if matches!(o, Op::Loss(_)) {
                    s.on_loss(i, now)
                } else {
                    s.on_timeout(i, now)
                };
                let after = s.good_count();
                prop_assert_eq!(after, before - r as usize);
                if r {
                    prop_assert!(after >= min_active as usize);
                }
            }
            Op::Trim(i) => s.on_trim(i % n as u16, now),
            Op::Ack(i, r, c) => s.on_ack(i % n as u16, now, Some(Duration::from_ns(r as u64)), c),
            Op::Probe(dt) => {
                if let Some(i) = s.probe_due(now + Duration::from_us(dt)) {
                    prop_assert_eq!(s.state(i), EvState::AssumedBad);
                    s.on_probe_response(i, now, Duration::from_us(4));
                }
            }
            Op::Deny(m, v) => {
                s.deny(m, v, now);
            }
            Op::Allow(m, v) => {
                s.allow(m, v, now);
            }
        }
        let good = (0..n as u16).filter(|&i| s.state(i) == EvState::Good).count();
        prop_assert_eq!(good, s.good_count());
        let non_denied = (0..n as u16).filter(|&i| s.state(i) != EvState::Denied).count();
        if strict {
            prop_assert!(s.good_count() >= (min_active as usize).min(non_denied));
        }
        // Probe deadline = earliest probe of an ASSUMED_BAD EV, none for others.
        let bad = (0..n as u16).filter(|&i| s.state(i) == EvState::AssumedBad).count();
        prop_assert_eq!(s.next_probe_deadline().is_some(), bad > 0);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn invariants_without_control_plane(n in 1u32..=256, min in 0u16..8, w in any::<bool>(),
                                        ops in prop::collection::vec(op(false), 0..300)) {
        let min = min.min(n as u16);
        run_ops(n, min, w, &ops, true)?;
    }

    #[test]
    fn invariants_with_deny_allow(n in 1u32..=64, min in 0u16..8, w in any::<bool>(),
                                  ops in prop::collection::vec(op(true), 0..300)) {
        let min = min.min(n as u16);
        run_ops(n, min, w, &ops, false)?;
    }
}

#[test]
fn stall_allowance_follows_the_base_rtt_and_the_spread() {
    let mut s = EvSet::new(cfg(4, 1, SprayPolicy::RoundRobin)).unwrap();
    assert_eq!(s.stall_allowance(), None, "no RTT sample yet");
    // First sample r: srtt = r, rttvar = r / 2: max(2 base, r + 2r - r) = 2r.
    s.on_ack(0, Instant::ZERO, Some(Duration::from_us(4)), false);
    assert_eq!(s.stall_allowance(), Some(Duration::from_us(4 * STALL_RTTS)));
    // 12 us: rttvar = 2 + (8 - 2) / 4 = 3.5, srtt = 4 + 8 / 8 = 5, base 4:
    // srtt + 4 rttvar - base = 15 us > 2 base.
    s.on_ack(1, Instant::ZERO, Some(Duration::from_us(12)), false);
    assert_eq!(s.base_rtt(), Some(Duration::from_us(4)));
    assert_eq!(s.stall_allowance(), Some(Duration::from_us(15)));
    // A steady RTT: the spread decays and the allowance returns to 2 base.
    for _ in 0..200 {
        s.on_ack(2, Instant::ZERO, Some(Duration::from_us(4)), false);
    }
    let a = s.stall_allowance().unwrap();
    assert!(a >= Duration::from_us(8) && a < Duration::from_ns(8_001), "{a:?}");
    let mut t = EvSet::new(cfg(4, 1, SprayPolicy::RoundRobin)).unwrap();
    t.on_ack(0, Instant::ZERO, Some(Duration::from_ns(100)), false);
    assert_eq!(t.stall_allowance(), Some(STALL_MIN), "floor");
}

#[test]
fn second_stall_marks_bad_with_its_reason_and_respects_the_guard() {
    let mut s = EvSet::new(cfg(3, 2, SprayPolicy::RoundRobin)).unwrap();
    assert!(!s.on_stall(1, Instant::from_us(5)), "one stall: suspect only");
    assert!(s.is_suspect(1));
    assert_eq!(s.state(1), EvState::Good);
    assert_eq!(s.counters().stall_suspected, 1);
    assert!(s.poll_change().is_none());
    assert!(s.on_stall(1, Instant::from_us(6)));
    assert_eq!(s.state(1), EvState::AssumedBad);
    assert!(!s.is_suspect(1));
    let c = s.poll_change().unwrap();
    assert_eq!((c.ev_index, c.reason), (1, EvChangeReason::Stall));
    assert!(!s.on_stall(2, Instant::from_us(7)));
    assert!(!s.on_stall(2, Instant::from_us(8)), "min_active guard");
    assert_eq!(s.counters().guard_refused, 1);
    assert_eq!(s.state(2), EvState::Good);
}

#[test]
fn prompt_ack_clears_suspicion_a_late_one_does_not() {
    let mut s = EvSet::new(cfg(4, 1, SprayPolicy::RoundRobin)).unwrap();
    s.on_ack(0, Instant::ZERO, Some(Duration::from_us(4)), false);
    // stall_age = 4 + 8 = 12 us.
    assert!(!s.on_stall(1, Instant::from_us(20)));
    s.on_ack(1, Instant::from_us(21), Some(Duration::from_us(40)), false);
    s.on_ack(1, Instant::from_us(21), None, false);
    assert!(
        s.is_suspect(1),
        "a late or unsampled acknowledgement is no proof of a working path"
    );
    s.on_ack(1, Instant::from_us(22), Some(Duration::from_us(5)), false);
    assert!(!s.is_suspect(1));
    assert!(!s.on_stall(1, Instant::from_us(30)), "suspect again, not marked");
    assert_eq!(s.state(1), EvState::Good);
}

#[test]
fn suspect_ev_is_skipped_once_and_avoided_by_retransmissions() {
    for policy in [SprayPolicy::RoundRobin, SprayPolicy::Weighted] {
        let mut s = EvSet::new(cfg(4, 1, policy)).unwrap();
        assert!(!s.on_stall(2, Instant::ZERO));
        // The next visit to EV 2 is skipped: the first three picks are the
        // three others.
        let first: Vec<u16> = (0..3).map(|_| s.select(Instant::ZERO)).collect();
        assert!(!first.contains(&2), "{policy:?}: skipped once: {first:?}");
        let later: Vec<u16> = (0..8).map(|_| s.select(Instant::ZERO)).collect();
        assert!(later.contains(&2), "{policy:?}: back in the rotation: {later:?}");
        for _ in 0..16 {
            let e = s.select_other(Instant::ZERO, 0);
            assert!(e != 0 && e != 2, "{policy:?}: retransmission on {e}");
        }
    }
}

#[test]
fn slow_probe_does_not_readmit() {
    let mut s = EvSet::new(cfg(4, 1, SprayPolicy::RoundRobin)).unwrap();
    s.on_ack(0, Instant::ZERO, Some(Duration::from_us(2)), false);
    assert!(!s.on_stall(1, Instant::ZERO));
    assert!(s.on_stall(1, Instant::ZERO));
    let mut now = Instant::ZERO;
    let mut due = None;
    while due.is_none() {
        now += Duration::from_us(1);
        due = s.probe_due(now);
    }
    assert_eq!(due, Some(1));
    // 3 x 2 us is the limit: 7 us is too slow.
    s.on_probe_response(1, now, Duration::from_us(7));
    assert_eq!(s.state(1), EvState::AssumedBad);
    assert_eq!(s.counters().probe_slow, 1);
    assert!(s.next_probe_deadline().is_some(), "still probed");
    // At the limit: re-admitted.
    s.on_probe_response(1, now, Duration::from_us(6));
    assert_eq!(s.state(1), EvState::Good);
    assert_eq!(s.counters().readmitted, 1);
}

#[test]
fn stall_age_is_srtt_plus_the_allowance() {
    let mut s = EvSet::new(cfg(4, 1, SprayPolicy::RoundRobin)).unwrap();
    assert_eq!(s.stall_age(), None);
    s.on_ack(0, Instant::ZERO, Some(Duration::from_us(4)), false);
    assert_eq!(s.stall_age(), Some(Duration::from_us(4 + 4 * STALL_RTTS)));
    // srtt <- 4 + (12 - 4) / 8 = 5 us, allowance 15 us (see above).
    s.on_ack(1, Instant::ZERO, Some(Duration::from_us(12)), false);
    assert_eq!(s.stall_age(), Some(Duration::from_us(5 + 15)));
}

/// EV events carry what MRC 1.0's EV event names: the profile, the EV
/// value and its port, the drop count, the new state.
#[test]
fn ev_events_name_profile_value_port_and_drops() {
    let mut c = cfg(4, 1, SprayPolicy::RoundRobin);
    c.profile_id = 9;
    c.ports = vec![0, 1, 2, 3];
    let mut s = EvSet::new(c.clone()).unwrap();
    let t = Instant::from_us(1);
    // EV 2: one stall (suspect, counted), then a loss marks it.
    assert!(!s.on_stall(2, t));
    assert!(s.on_loss(2, t));
    // Further losses while ASSUMED_BAD count towards its next event.
    s.on_timeout(2, t);
    s.on_probe_response(2, Instant::from_us(200), Duration::from_us(3));
    let ev: Vec<_> = std::iter::from_fn(|| s.poll_change()).collect();
    assert_eq!(ev.len(), 2);
    let (bad, good) = (ev[0], ev[1]);
    assert_eq!((bad.ev_index, bad.ev, bad.port, bad.profile_id), (2, 0xC002, 2, 9));
    assert_eq!((bad.to, bad.drops), (EvState::AssumedBad, 2));
    assert_eq!(
        (good.to, good.drops, good.reason),
        (EvState::Good, 1, EvChangeReason::ProbeOk)
    );
    // Ports: one per EV or none.
    c.ports = vec![0, 1];
    assert_eq!(EvSet::new(c).unwrap_err(), EvConfigError::Ports { ports: 2, count: 4 });
}

/// A suspect EV whose path reported congestion (a trim NACK, a SACK with
/// m = SKIP_ONCE) since its stall is not marked by the next stall: a
/// queue, not a failure. The stall after that, with no fresh news of
/// congestion, marks it.
#[test]
fn congestion_news_excuses_one_more_stall() {
    let mut s = EvSet::new(cfg(4, 1, SprayPolicy::RoundRobin)).unwrap();
    let t = Instant::from_us(1);
    assert!(!s.on_stall(1, t), "first stall: suspect");
    s.skip_once(1);
    assert!(!s.on_stall(1, t), "congested since: still suspect");
    assert_eq!(s.counters().stall_congestion_excused, 1);
    assert_eq!(s.state(1), EvState::Good);
    assert!(s.on_stall(1, t), "no news since: marked");
    assert_eq!(s.state(1), EvState::AssumedBad);
    // Without the congestion news the second stall marks, as before.
    assert!(!s.on_stall(2, t));
    assert!(s.on_stall(2, t));
    // News from before the first stall does not count.
    s.skip_once(3);
    assert!(!s.on_stall(3, t));
    assert!(s.on_stall(3, t), "congested before the stall, not since");
}

/// Four EVs on ports 0, 0, 1, 1 and backups `backup_ports`.
fn with_backups(min_active: u16, backup_ports: &[u8]) -> EvSet {
    EvSet::new(EvSetConfig {
        ports: vec![0, 0, 1, 1],
        backup_evs: backup_ports
            .iter()
            .enumerate()
            .map(|(i, &port)| BackupEv {
                ev: 0xD000 + i as u32,
                port,
            })
            .collect(),
        ..cfg(4, min_active, SprayPolicy::RoundRobin)
    })
    .unwrap()
}

#[test]
fn a_backup_of_the_same_port_replaces_an_ev_leaving_good() {
    // Backups: index 4 on port 1, index 5 on port 0.
    let mut s = with_backups(1, &[1, 0]);
    assert_eq!((s.len(), s.good_count(), s.backup_count()), (6, 4, 2));
    assert!(s.is_backup(4) && s.is_backup(5) && s.state(5) == EvState::Good);
    assert_eq!(s.value(5), 0xD001);
    assert_eq!(s.port(5), 0);
    let sprayed: std::collections::BTreeSet<u16> = (0..16).map(|_| s.select(Instant::ZERO)).collect();
    assert_eq!(sprayed, [0, 1, 2, 3].into());

    let t = Instant::from_us(5);
    assert!(s.on_loss(0, t));
    assert_eq!((s.good_count(), s.backup_count()), (4, 1));
    assert!(!s.is_backup(5) && s.is_backup(4));
    let ev: Vec<_> = std::iter::from_fn(|| s.poll_change()).collect();
    assert_eq!(ev.len(), 2);
    assert_eq!(
        (ev[0].ev_index, ev[0].to, ev[0].reason),
        (0, EvState::AssumedBad, EvChangeReason::Loss)
    );
    assert_eq!(
        (ev[1].ev_index, ev[1].ev, ev[1].port, ev[1].from, ev[1].to, ev[1].reason),
        (5, 0xD001, 0, EvState::Good, EvState::Good, EvChangeReason::Promoted)
    );
    let sprayed: std::collections::BTreeSet<u16> = (0..16).map(|_| s.select(Instant::ZERO)).collect();
    assert_eq!(sprayed, [1, 2, 3, 5].into());

    // Port 0 has no backup left: a second loss there shrinks the spray
    // (port 1's backup stays on port 1), counted as no_backup.
    assert!(s.on_loss(1, t));
    assert_eq!((s.good_count(), s.backup_count()), (3, 1));
    assert!(s.is_backup(4));
    assert_eq!((s.counters().promoted, s.counters().no_backup), (1, 1));

    // The first EV re-admitted by a probe takes the free place in the
    // spray; the next one, with the spray full again, becomes a backup.
    let due = Instant::from_us(200);
    let p = s.probe_due(due).unwrap();
    s.on_probe_response(p, due, Duration::from_us(4));
    assert_eq!((s.good_count(), s.backup_count()), (4, 1));
    let q = s.probe_due(due).unwrap();
    s.on_probe_response(q, due, Duration::from_us(4));
    assert_eq!(s.state(q), EvState::Good);
    assert!(s.is_backup(q));
    assert_eq!((s.good_count(), s.backup_count()), (4, 2));
}

#[test]
fn backups_lift_the_min_active_guard_only_for_their_port() {
    // min_active 4 = every EV: without a backup nothing may be marked.
    let mut s = with_backups(4, &[1]);
    let t = Instant::from_us(5);
    assert!(!s.on_loss(0, t), "port 0 has no backup");
    assert_eq!(s.counters().guard_refused, 1);
    assert!(s.on_loss(2, t), "port 1's backup replaces it");
    assert_eq!(s.good_count(), 4);
    assert!(!s.on_loss(3, t), "no backup left");
}

#[test]
fn a_set_with_no_good_ev_left_takes_a_backup_of_any_port() {
    let mut s = EvSet::new(EvSetConfig {
        ports: vec![0],
        backup_evs: vec![BackupEv { ev: 0xD000, port: 1 }],
        ..cfg(1, 0, SprayPolicy::RoundRobin)
    })
    .unwrap();
    assert!(s.on_timeout(0, Instant::from_us(1)));
    assert_eq!((s.good_count(), s.backup_count()), (1, 0));
    assert_eq!(s.select(Instant::ZERO), 1);
}

#[test]
fn backup_config_errors() {
    let base = cfg(200, 1, SprayPolicy::RoundRobin);
    let too_many = EvSetConfig {
        backup_evs: (0..57).map(|ev| BackupEv { ev, port: 0 }).collect(),
        ..base
    };
    assert_eq!(
        EvSet::new(too_many).unwrap_err(),
        EvConfigError::Backups { evs: 200, backups: 57 }
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// With backups (all on one port): GOOD EVs are the spray plus the
    /// backups, the spray never exceeds the configured EVs nor falls short
    /// of them while a backup waits, and spraying never picks a backup.
    #[test]
    fn backups_keep_the_spray_full(n in 1u32..=16, b in 0u32..=8, min in 0u16..4,
                                   ops in prop::collection::vec(op(true), 0..300)) {
        let min = min.min(n as u16);
        let mut s = EvSet::new(EvSetConfig {
            backup_evs: (0..b).map(|i| BackupEv { ev: 0xD000 + i, port: 0 }).collect(),
            ..cfg(n, min, SprayPolicy::RoundRobin)
        })
        .unwrap();
        let total = (n + b) as u16;
        let mut now = Instant::ZERO;
        for o in &ops {
            now += Duration::from_us(7);
            match *o {
                Op::Select => {
                    let i = s.select(now);
                    if s.good_count() > 0 {
                        prop_assert!(!s.is_backup(i));
                        prop_assert_eq!(s.state(i), EvState::Good);
                    }
                }
                Op::Loss(i) => { s.on_loss(i % (total + 2), now); }
                Op::Timeout(i) => { s.on_timeout(i % (total + 2), now); }
                Op::Trim(i) => s.on_trim(i % total, now),
                Op::Ack(i, r, c) => s.on_ack(i % total, now, Some(Duration::from_ns(r as u64)), c),
                Op::Probe(dt) => {
                    if let Some(i) = s.probe_due(now + Duration::from_us(dt)) {
                        s.on_probe_response(i, now, Duration::from_us(4));
                    }
                }
                Op::Deny(m, v) => { s.deny(m, v, now); }
                Op::Allow(m, v) => { s.allow(m, v, now); }
            }
            let good = (0..total).filter(|&i| s.state(i) == EvState::Good).count();
            prop_assert_eq!(good, s.good_count() + s.backup_count());
            prop_assert!(s.good_count() <= n as usize);
            if s.good_count() < n as usize {
                prop_assert_eq!(s.backup_count(), 0);
            }
        }
    }
}

#[test]
fn a_dead_port_denies_its_evs_and_backups_and_allows_them_back() {
    // EVs 0, 1 on port 0, 2, 3 on port 1; backups 4 (port 1), 5 (port 0).
    let mut s = with_backups(1, &[1, 0]);
    let t = Instant::from_us(5);
    assert_eq!(s.deny_port(0, t), 3, "EVs 0, 1 and the port's backup 5");
    assert_eq!((s.good_count(), s.backup_count()), (2, 1));
    assert!(s.is_backup(4), "port 1's backup stays a backup");
    for _ in 0..8 {
        let i = s.select(t);
        assert_eq!(s.port(i), 1);
    }
    assert_eq!(s.allow_port(0, t), 3);
    assert_eq!(
        (s.good_count(), s.backup_count()),
        (4, 2),
        "the spray is full again, one of them a backup"
    );
    assert_eq!(s.deny_port(7, t), 0, "no EV on that port");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Backups on two ports: each port sprays on at most its configured
    /// EVs, and falls short only while no backup of its own port waits.
    /// (min_active >= 1 and no denials, so the set never runs out of GOOD
    /// EVs and never takes a backup of another port.)
    #[test]
    fn each_port_keeps_its_share_of_the_spray(n in 2u32..=16, b in 0u32..=8, min in 1u16..4,
                                              ops in prop::collection::vec(op(false), 0..300)) {
        let min = min.min(n as u16);
        let mut s = EvSet::new(EvSetConfig {
            ports: (0..n).map(|i| (i % 2) as u8).collect(),
            backup_evs: (0..b).map(|i| BackupEv { ev: 0xD000 + i, port: (i % 2) as u8 }).collect(),
            ..cfg(n, min, SprayPolicy::RoundRobin)
        })
        .unwrap();
        let total = (n + b) as u16;
        let target = |p: u8| (0..n).filter(|i| (i % 2) as u8 == p).count();
        let mut now = Instant::ZERO;
        for o in &ops {
            now += Duration::from_us(7);
            match *o {
                Op::Select => { s.select(now); }
                Op::Loss(i) => { s.on_loss(i % total, now); }
                Op::Timeout(i) => { s.on_stall(i % total, now); }
                Op::Trim(i) => s.on_trim(i % total, now),
                Op::Ack(i, r, c) => s.on_ack(i % total, now, Some(Duration::from_ns(r as u64)), c),
                Op::Probe(dt) => {
                    if let Some(i) = s.probe_due(now + Duration::from_us(dt)) {
                        s.on_probe_response(i, now, Duration::from_us(4));
                    }
                }
                Op::Deny(..) | Op::Allow(..) => {}
            }
            for p in 0..2u8 {
                let on = |backup: bool| (0..total)
                    .filter(|&i| s.port(i) == p && s.state(i) == EvState::Good && s.is_backup(i) == backup)
                    .count();
                prop_assert!(on(false) <= target(p), "port {p}: {} sprayed of {}", on(false), target(p));
                if on(false) < target(p) {
                    prop_assert_eq!(on(true), 0, "port {} short while a backup of it waits", p);
                }
            }
        }
    }
}
