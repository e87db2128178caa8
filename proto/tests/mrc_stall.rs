//! Stall inference (docs/model-mrc.md 2.5.1) and the slow-probe gate
//! (docs/model-ev-cc.md 1.3): two QPs joined by per-EV delay lines.

mod mrc_common;

use mrc_common::*;
use proto::model::ev::{EvChangeReason, EvState};
use proto::model::mrc::MrcQp;
use proto::model::*;
use proto::time::{Duration, Instant};
use proto::wire::mrc10::Mrc10Packet;

/// One-way delay of a packet on EV value `ev` sent at `now`; `None` drops it.
type Path<'a> = &'a dyn Fn(u32, Instant) -> Option<Duration>;

/// Run for `until`, in 100 ns steps, both directions through `path`.
fn run_paths(a: &mut MrcQp, b: &mut MrcQp, now: &mut Instant, until: Instant, path: Path) {
    let mut wire: Vec<(Instant, bool, Mrc10Packet)> = Vec::new();
    while *now < until {
        a.handle_timeout(*now);
        b.handle_timeout(*now);
        while let Some(p) = a.poll_transmit(*now).map(mrc10) {
            if let Some(d) = path(p.ev, *now) {
                wire.push((*now + d, true, p));
            }
        }
        while let Some(p) = b.poll_transmit(*now).map(mrc10) {
            if let Some(d) = path(p.ev, *now) {
                wire.push((*now + d, false, p));
            }
        }
        *now += Duration::from_ns(100);
        // Deliver in arrival order (stable for equal times).
        wire.sort_by_key(|w| w.0);
        let n = wire.iter().take_while(|w| w.0 <= *now).count();
        for (_, to_b, p) in wire.drain(..n) {
            let _ = if to_b {
                b.handle_packet(*now, p.into())
            } else {
                a.handle_packet(*now, p.into())
            };
        }
    }
}

const EV: u32 = 0xC000;

fn post(a: &mut MrcQp, n: u64, now: Instant) {
    for i in 0..n {
        a.post_write(now, write(i, data(4 * MTU as usize, i as u8), i * 4 * MTU as u64, None))
            .unwrap();
    }
}

/// `n` messages of 4 packets spread over time so that the requester keeps
/// sending across the failure.
fn post_spread(a: &mut MrcQp, b: &mut MrcQp, now: &mut Instant, n: u64, every: Duration, path: Path) {
    for i in 0..n {
        a.post_write(
            *now,
            write(i, data(4 * MTU as usize, i as u8), i * 4 * MTU as u64, None),
        )
        .unwrap();
        let t = *now + every;
        run_paths(a, b, now, t, path);
    }
}

#[test]
fn dead_ev_is_marked_stalled_long_before_the_rto() {
    let o = Opts {
        n_evs: 8,
        min_active: 2,
        ..Opts::default()
    };
    let (mut a, mut b) = pair(&o);
    let mut now = Instant::ZERO;
    let dead_from = Instant::from_us(20);
    // 1 us each way; EV 3 dies (both directions) at 20 us.
    let path = |ev: u32, t: Instant| {
        if ev == EV + 3 && t >= dead_from {
            None
        } else {
            Some(Duration::from_us(1))
        }
    };
    post_spread(&mut a, &mut b, &mut now, 60, Duration::from_us(1), &path);
    run_paths(&mut a, &mut b, &mut now, Instant::from_us(200), &path);
    let ev = events(&mut a);
    assert_eq!(completions(&ev).len(), 60, "every message completes");
    let mark = ev
        .iter()
        .find_map(|e| match e {
            Event::EvStateChanged(c) if c.to == EvState::AssumedBad => Some(*c),
            _ => None,
        })
        .expect("the dead EV is marked");
    assert_eq!(mark.ev_index, 3);
    assert_eq!(mark.reason, EvChangeReason::Stall);
    // RTT 2 us: allowance max(2 us, 2 x 2 us) = 4 us; detection after about
    // one RTT plus the allowance, far below the 16.4 us RTO.
    let rto = ack_timeout(4);
    let took = mark.at.saturating_since(dead_from);
    eprintln!("dead EV marked {took:?} after the failure");
    assert!(took < Duration::from_us(10), "stall detected after {took:?}");
    assert!(took < rto);
    assert_eq!(a.counters().rto_fired, 0, "no timeout needed");
    assert!(a.counters().retx_loss_inferred > 0);
    // No other EV was marked.
    assert!(ev
        .iter()
        .all(|e| !matches!(e, Event::EvStateChanged(c) if c.to == EvState::AssumedBad && c.ev_index != 3)));
    assert_eq!(a.ev_set().unwrap().state(3), EvState::AssumedBad);
}

#[test]
fn reordering_within_the_allowance_marks_nothing() {
    let o = Opts {
        n_evs: 8,
        min_active: 1,
        ..Opts::default()
    };
    let (mut a, mut b) = pair(&o);
    let mut now = Instant::ZERO;
    post(&mut a, 40, now);
    // EV i adds (i mod 4) x 600 ns each way: up to 3.6 us of round-trip
    // skew between EVs (packets reorder across EVs), inside the 4 us
    // allowance (2 x the 2 us base RTT).
    let path = |ev: u32, _t: Instant| Some(Duration::from_us(1) + Duration::from_ns(600 * ((ev - EV) as u64 % 4)));
    run_paths(&mut a, &mut b, &mut now, Instant::from_us(300), &path);
    let ev = events(&mut a);
    assert_eq!(completions(&ev).len(), 40);
    assert_eq!(a.counters().retransmitted_packets, 0);
    assert_eq!(a.ev_set().unwrap().counters().marked_bad, 0);
}

#[test]
fn slow_ev_is_marked_and_kept_out_until_its_probe_is_fast() {
    let o = Opts {
        n_evs: 4,
        min_active: 1,
        ..Opts::default()
    };
    let (mut a, mut b) = pair(&o);
    let mut now = Instant::ZERO;
    let heal = std::cell::Cell::new(Instant::from_us(1_000_000));
    // EV 1 is 15 us slower each way until `heal`.
    let path = |ev: u32, t: Instant| {
        let slow = ev == EV + 1 && t < heal.get();
        Some(Duration::from_us(if slow { 16 } else { 1 }))
    };
    post_spread(&mut a, &mut b, &mut now, 40, Duration::from_us(1), &path);
    run_paths(&mut a, &mut b, &mut now, Instant::from_us(150), &path);
    let ev = events(&mut a);
    assert_eq!(completions(&ev).len(), 40);
    assert!(ev.iter().any(|e| matches!(e, Event::EvStateChanged(c)
        if c.ev_index == 1 && c.to == EvState::AssumedBad && c.reason == EvChangeReason::Stall)));
    // Probes (every 10 us, backing off) come back in ~32 us > 3 x 2 us:
    // too slow to re-admit.
    assert_eq!(a.ev_set().unwrap().state(1), EvState::AssumedBad);
    assert!(a.ev_set().unwrap().counters().probe_slow >= 1);
    assert_eq!(a.ev_set().unwrap().counters().readmitted, 0);
    // The path recovers: the next probe re-admits it.
    heal.set(now);
    let until = now + Duration::from_us(400);
    run_paths(&mut a, &mut b, &mut now, until, &path);
    assert_eq!(a.ev_set().unwrap().state(1), EvState::Good);
    assert_eq!(a.ev_set().unwrap().counters().readmitted, 1);
}

#[test]
fn tail_packet_on_a_dead_ev_is_resent_before_the_rto() {
    let o = Opts {
        n_evs: 8,
        min_active: 1,
        ..Opts::default()
    };
    let (mut a, mut b) = pair(&o);
    let mut now = Instant::ZERO;
    // One message, one packet per EV, all sent at once: no packet is sent
    // after the one on the dead EV, so only the tail check can find it.
    a.post_write(now, write(1, data(8 * MTU as usize, 1), 0, None)).unwrap();
    // (SACKs triggered by packets on other EVs come back; the RTT is about
    // 0.6 us, so the tail check fires a few us after the send.)
    let path = |ev: u32, _t: Instant| {
        if ev == EV + 3 {
            None
        } else {
            Some(Duration::from_ns(300))
        }
    };
    run_paths(&mut a, &mut b, &mut now, Instant::from_us(15), &path);
    let ev = events(&mut a);
    assert_eq!(completions(&ev).len(), 1, "completed before the 16.4 us RTO");
    assert_eq!(a.counters().rto_fired, 0);
    assert_eq!(a.counters().retx_loss_inferred, 1);
    // One lost packet is not evidence of a failed path (a packet stuck in a
    // congested queue looks the same): EV 3 is suspect, not ASSUMED_BAD.
    assert!(a.ev_set().unwrap().is_suspect(3));
    assert_eq!(a.ev_set().unwrap().state(3), EvState::Good);
    assert!(!ev.iter().any(|e| matches!(e, Event::EvStateChanged(_))));
}

#[test]
fn tail_check_does_not_defeat_the_retry_budget() {
    let o = Opts {
        n_evs: 4,
        min_active: 1,
        retry_linear: 2,
        retry_exp: 1,
        ..Opts::default()
    };
    let (mut a, mut b) = pair(&o);
    let mut now = Instant::ZERO;
    let dead_from = Instant::from_us(10);
    // Every path dies at 10 us.
    let path = |_ev: u32, t: Instant| {
        if t >= dead_from {
            None
        } else {
            Some(Duration::from_us(1))
        }
    };
    post_spread(&mut a, &mut b, &mut now, 20, Duration::from_us(1), &path);
    run_paths(&mut a, &mut b, &mut now, Instant::from_us(2000), &path);
    let ev = events(&mut a);
    assert!(
        completions(&ev).iter().any(|c| c.status == WcStatus::RetryExceeded),
        "the QP still gives up"
    );
    assert_eq!(a.state(), QpState::Error);
}

/// The tail check is armed at the oldest live packet's send time plus the
/// stall age of that moment; RTT samples arriving before it fires can
/// raise the age, so that when it fires the packet is not yet `age` old.
/// It must come back when the packet is (here 15 us after the send: the
/// check fired at 9.6 us, the age then 15 us), not a whole age after the
/// check (24.6 us), which is beyond the 16.4 us RTO: the loss is found by
/// the tail check and no RTO fires.
#[test]
fn a_tail_check_that_fires_before_its_packet_aged_comes_back_when_it_has() {
    let o = Opts {
        n_evs: 8,
        min_active: 1,
        ack_every: 1,
        ..Opts::default()
    };
    let (mut a, mut b) = pair(&o);
    let mut now = Instant::ZERO;
    let t0 = Instant::from_us(60);
    // About 1.5 us each way, EV i 100 ns x i more (so that each packet of
    // a message arrives on its own and is answered by its own SACK); from
    // t0 EV 3 drops everything and the answers on EVs 6 and 7 take 4 us
    // longer: their samples raise the stall age while the check waits.
    let path = |ev: u32, t: Instant| {
        let i = u64::from(ev - EV);
        if t >= t0 && i == 3 {
            None
        } else if t >= t0 + Duration::from_ns(500) && i >= 6 {
            Some(Duration::from_ns(5_500 + 100 * i))
        } else {
            Some(Duration::from_ns(1_500 + 100 * i))
        }
    };
    // Warm-up: 8-packet messages, one packet per EV, until t0.
    for i in 0..5 {
        a.post_write(now, write(i, data(8 * MTU as usize, i as u8), 0, None))
            .unwrap();
        let t = now + Duration::from_us(10);
        run_paths(&mut a, &mut b, &mut now, t, &path);
    }
    let age0 = a.ev_set().unwrap().stall_age().expect("sampled");
    run_paths(&mut a, &mut b, &mut now, t0, &path);
    let before = (a.counters().retx_loss_inferred, a.counters().rto_fired);
    a.post_write(now, write(9, data(8 * MTU as usize, 9), 0, None)).unwrap();
    run_paths(&mut a, &mut b, &mut now, t0 + Duration::from_us(40), &path);
    let age1 = a.ev_set().unwrap().stall_age().unwrap();
    eprintln!("stall age {age0:?} before, {age1:?} after");
    let ev = events(&mut a);
    assert_eq!(completions(&ev).len(), 6, "every message completes");
    assert!(age1 > age0, "the samples raised the age");
    assert!(
        age0 + age1 > ack_timeout(4),
        "a whole age after the check is beyond the RTO"
    );
    assert_eq!(
        a.counters().rto_fired,
        before.1,
        "no RTO: the tail check found the loss"
    );
    assert_eq!(a.counters().retx_loss_inferred, before.0 + 1);
}
