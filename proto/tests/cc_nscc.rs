//! Tests of the NSCC-style window controller.

use proptest::prelude::*;
use proto::model::cc::*;
use proto::time::{Duration, Instant};

const MTU: u32 = 4096;

fn cfg() -> NsccConfig {
    // 100 Gb/s, 10 us: BDP 125,000 B, max 187,500 B, target 5 us.
    NsccConfig::for_fabric(100.0, Duration::from_us(10), MTU)
}

fn ack(rtt_us: f64, ce: bool) -> AckSample {
    AckSample {
        acked_bytes: MTU as u64,
        rtt: Some(Duration::from_ps((rtt_us * 1e6) as u64)),
        ecn_ce: ce as u32,
        in_flight: 0,
        ..AckSample::default()
    }
}

#[test]
fn build_returns_nscc() {
    let cc = build(&CcConfig::Nscc(cfg()));
    assert_eq!(cc.name(), "nscc");
    assert_eq!(cc.window(), cfg().init_cwnd);
    assert_eq!(build(&CcConfig::Fixed { window: 9 }).window(), 9);
}

#[test]
fn grows_to_max_with_zero_delay() {
    let c = NsccConfig {
        init_cwnd: 4 * MTU as u64,
        ..cfg()
    };
    let mut cc = Nscc::new(c);
    let mut now = Instant::ZERO;
    let mut acks = 0;
    while cc.window() < c.max_cwnd {
        now += Duration::from_ns(330);
        cc.on_ack(now, ack(10.0, false));
        acks += 1;
        assert!(acks < 2000, "stuck at {}", cc.window());
    }
    assert_eq!(cc.window(), c.max_cwnd);
    assert_eq!(cc.last_quadrant(), Some(NsccQuadrant::ProportionalIncrease));
    // From 4 MTU to 1.5 BDP (46 MTU) in well under 2000 acks thanks to the
    // fast increase; it stays at max.
    assert!(acks < 200, "{acks} acks");
    for _ in 0..100 {
        cc.on_ack(now, ack(10.0, false));
    }
    assert_eq!(cc.window(), c.max_cwnd);
}

#[test]
fn proportional_increase_is_faster_near_zero_delay() {
    let step = |rtt| {
        let mut cc = Nscc::new(cfg());
        let w0 = cc.cwnd();
        cc.on_ack(Instant::ZERO, ack(rtt, false));
        cc.cwnd() - w0
    };
    let near_zero = step(10.0);
    let half = step(12.5);
    let at_target = step(14.99);
    assert!(near_zero > half && half > at_target && at_target > 0.0);
    // Fair increase (no ECN, delay above target) is smaller still.
    assert!(step(20.0) > 0.0 && step(20.0) < at_target);
}

#[test]
fn quadrants() {
    let mut cc = Nscc::new(cfg());
    let w = cc.cwnd();
    cc.on_ack(Instant::ZERO, ack(11.0, true));
    assert_eq!(cc.last_quadrant(), Some(NsccQuadrant::Hold));
    assert_eq!(cc.cwnd(), w);
    cc.on_ack(Instant::ZERO, ack(30.0, false));
    assert_eq!(cc.last_quadrant(), Some(NsccQuadrant::FairIncrease));
    // A decrease is sized by the slow delay average (gain 1/80), which two
    // samples barely moved: a delayed, marked ACK after a quiet history
    // (a hot path among many) picks the quadrant but cuts nothing.
    let w = cc.cwnd();
    cc.on_ack(Instant::ZERO, ack(30.0, true));
    assert_eq!(cc.last_quadrant(), Some(NsccQuadrant::MultiplicativeDecrease));
    assert_eq!(cc.cwnd(), w);
    // A sustained 20 us delay (target 5 us) moves the average: then
    // cut = 0.5 * (avg - 5) / avg.
    let mut avg = 0.0f64;
    for d in [1.0, 20.0, 20.0] {
        avg += NSCC_AVG_DELAY_GAIN * (d - avg);
    }
    let mut now = Instant::ZERO;
    for _ in 0..400 {
        now += Duration::from_us(1);
        cc.on_ack(now, ack(30.0, false));
        avg += NSCC_AVG_DELAY_GAIN * (20.0 - avg);
    }
    avg += NSCC_AVG_DELAY_GAIN * (20.0 - avg);
    let w = cc.cwnd();
    now += Duration::from_us(1);
    cc.on_ack(now, ack(30.0, true));
    let cut = 0.5 * (avg - 5.0) / avg;
    assert!(cut > 0.35, "{cut}");
    assert!(
        (cc.cwnd() - w * (1.0 - cut)).abs() < 1e-3 * w,
        "{} vs {}",
        cc.cwnd(),
        w * (1.0 - cut)
    );
    // At most once per base RTT + target (15 us).
    let w = cc.cwnd();
    cc.on_ack(now + Duration::from_us(14), ack(30.0, true));
    assert_eq!(cc.cwnd(), w);
    assert_eq!(cc.counters().decrease_suppressed, 1);
    cc.on_ack(now + Duration::from_us(15), ack(30.0, true));
    assert!(cc.cwnd() < w);
}

#[test]
fn shrinks_under_ecn_and_delay_then_recovers() {
    let c = cfg();
    let mut cc = Nscc::new(c);
    let mut now = Instant::ZERO;
    for _ in 0..300 {
        now += Duration::from_us(1);
        cc.on_ack(now, ack(25.0, true));
    }
    assert_eq!(cc.window(), c.min_cwnd);
    for _ in 0..1000 {
        now += Duration::from_us(1);
        cc.on_ack(now, ack(10.0, false));
    }
    assert_eq!(cc.window(), c.max_cwnd);
}

#[test]
fn loss_and_timeout() {
    let c = cfg();
    let mut cc = Nscc::new(c);
    let w = cc.window();
    cc.on_loss(Instant::ZERO, MTU as u64);
    assert_eq!(cc.window(), w - MTU as u64);
    cc.on_timeout(Instant::ZERO);
    // One packet: a timeout says a packet is gone, not how much is left.
    assert_eq!(cc.window(), MTU as u64);
    cc.on_loss(Instant::ZERO, 1 << 30);
    assert_eq!(cc.window(), c.min_cwnd);
    cc.on_cnp(Instant::from_us(100));
    assert!(cc.window() >= c.min_cwnd);
}

#[test]
fn pacing_at_cwnd_over_srtt() {
    let c = cfg();
    let mut cc = Nscc::new(c).with_pacing(true);
    let now = Instant::from_us(1);
    assert_eq!(cc.next_send_time(now, MTU), now);
    cc.on_send(now, MTU);
    // srtt 10 us, cwnd 125,000 B: 4096 B every 327.68 ns (100 Gb/s).
    let gap = cc.next_send_time(now, MTU) - now;
    assert!((gap.as_ps() as i64 - 327_680).abs() <= 50, "{gap:?}");
    let unpaced = Nscc::new(c);
    assert_eq!(unpaced.next_send_time(now, MTU), now);
}

fn ack_of(bytes: u64, rtt_us: f64, in_flight: u64) -> AckSample {
    AckSample {
        acked_bytes: bytes,
        rtt: Some(Duration::from_ps((rtt_us * 1e6) as u64)),
        ecn_ce: 0,
        in_flight,
        ..AckSample::default()
    }
}

#[test]
fn quick_adapt_sets_the_window_to_what_an_epoch_delivered() {
    // Epochs last base + target = 15 us; the gate is max_cwnd / 8.
    let c = cfg();
    let mut cc = Nscc::new(c);
    let w0 = cc.cwnd();
    // The first feedback opens an epoch; a trim in it arms quick adapt.
    cc.on_ack(Instant::from_us(1), ack_of(MTU as u64, 30.0, 100_000));
    cc.on_loss(Instant::from_us(2), MTU as u64);
    cc.on_ack(Instant::from_us(10), ack_of(1000, 30.0, 90_000));
    assert_eq!(cc.counters().quick_adapts, 0, "not before the epoch ends");
    // The epoch (opened by the first ACK, whose bytes count in it)
    // acknowledged 4096 + 1000 bytes, under the gate: the ACK that ends it
    // (its 500 bytes count for the next) sets the window to what it
    // delivered.
    cc.on_ack(Instant::from_us(17), ack_of(500, 30.0, 80_000));
    assert_eq!(cc.counters().quick_adapts, 1);
    assert_eq!(cc.cwnd(), 5096.0, "from {w0}");
    // Losses of bytes sent under the old window are ignored until that
    // much feedback has come back (80,000 bytes were in flight).
    cc.on_loss(Instant::from_us(18), MTU as u64);
    assert_eq!(cc.cwnd(), 5096.0);
    assert_eq!(cc.counters().qa_ignored, 1);
    cc.on_ack(Instant::from_us(19), ack_of(80_000, 30.0, 0));
    let w = cc.cwnd();
    cc.on_loss(Instant::from_us(20), 100);
    assert_eq!(cc.cwnd(), w - 100.0, "old window's feedback is over");
}

#[test]
fn quick_adapt_sets_a_sub_packet_window_to_what_the_epoch_delivered() {
    // UET's rule: the window becomes what the epoch delivered, which for a
    // window below one packet may be a whole packet.
    let c = cfg();
    let mut cc = Nscc::new(NsccConfig { init_cwnd: 512, ..c });
    cc.on_ack(Instant::from_us(1), ack_of(100, 40.0, 0));
    cc.on_ack(Instant::from_us(3), ack_of(MTU as u64, 40.0, 0));
    cc.on_loss(Instant::from_us(4), 100);
    cc.on_ack(Instant::from_us(20), ack_of(100, 40.0, 0));
    assert_eq!(cc.counters().quick_adapts, 1);
    assert_eq!(cc.cwnd(), (100 + MTU) as f64);
}

#[test]
fn a_loss_arms_quick_adapt_for_its_epoch_only() {
    let c = cfg();
    let mut cc = Nscc::new(c);
    cc.on_ack(Instant::from_us(1), ack_of(100, 10.0, 0));
    cc.on_loss(Instant::from_us(2), 100);
    // This epoch delivered plenty: no quick adapt, and the loss's news ends
    // with it.
    cc.on_ack(Instant::from_us(3), ack_of(c.max_cwnd, 10.0, 0));
    cc.on_ack(Instant::from_us(17), ack_of(100, 10.0, 0));
    assert_eq!(cc.counters().quick_adapts, 0);
    // A quiet epoch later (no loss, no delay) that delivers little is an
    // application pause, not congestion: the window stays.
    let w = cc.cwnd();
    cc.on_ack(Instant::from_us(40), ack_of(100, 10.0, 0));
    cc.on_ack(Instant::from_us(60), ack_of(100, 10.0, 0));
    assert_eq!(cc.counters().quick_adapts, 0);
    assert!(cc.cwnd() >= w);
}

#[test]
fn quick_adapt_needs_a_signal_and_a_starved_epoch() {
    let c = cfg();
    // No loss and delay under qa_threshold (4 x target = 20 us): none.
    let mut cc = Nscc::new(c);
    cc.on_ack(Instant::from_us(1), ack_of(100, 25.0, 0));
    cc.on_ack(Instant::from_us(17), ack_of(100, 25.0, 0));
    assert_eq!(cc.counters().quick_adapts, 0);
    // Delay beyond qa_threshold is a signal by itself.
    cc.on_ack(Instant::from_us(20), ack_of(100, 40.0, 0));
    cc.on_ack(Instant::from_us(40), ack_of(100, 40.0, 0));
    assert_eq!(cc.counters().quick_adapts, 1);
    // An epoch that delivered at least max_cwnd / 8 is not starved.
    let mut cc = Nscc::new(c);
    cc.on_ack(Instant::from_us(1), ack_of(100, 40.0, 0));
    cc.on_ack(Instant::from_us(2), ack_of(c.max_cwnd / 8, 40.0, 0));
    cc.on_loss(Instant::from_us(3), MTU as u64);
    cc.on_ack(Instant::from_us(17), ack_of(MTU as u64, 40.0, 0));
    assert_eq!(cc.counters().quick_adapts, 0);
    // Disabled (libmrc's disable_qa): the per-event rules only.
    let mut off = c;
    off.quick_adapt.enabled = false;
    let mut cc = Nscc::new(off);
    cc.on_ack(Instant::from_us(1), ack_of(100, 40.0, 0));
    cc.on_loss(Instant::from_us(2), MTU as u64);
    cc.on_ack(Instant::from_us(17), ack_of(100, 40.0, 0));
    assert_eq!(cc.counters().quick_adapts, 0);
    assert!(cc.cwnd() > (c.init_cwnd - 2 * MTU as u64) as f64);
}

#[test]
fn a_window_below_one_packet_is_a_paced_rate() {
    let c = cfg();
    assert!(c.min_cwnd < MTU as u64, "the floor is a fraction of a packet");
    let mut cc = Nscc::new(NsccConfig { init_cwnd: 1024, ..c });
    let now = Instant::from_us(1);
    assert_eq!(cc.next_send_time(now, MTU), now);
    cc.on_send(now, MTU);
    // 1024 B per (10 + 5) us: one 4096 B packet every 60 us.
    assert_eq!(cc.next_send_time(now, MTU) - now, Duration::from_us(60));
    // A packet that fits the window is not held back.
    assert_eq!(cc.next_send_time(now, 1000), now);
}

#[test]
fn an_ack_that_grows_a_sub_packet_window_brings_its_next_packet_forward() {
    let c = cfg();
    let mut cc = Nscc::new(NsccConfig { init_cwnd: 512, ..c });
    let sent = Instant::from_us(1);
    cc.on_send(sent, MTU);
    // 512 B per 15 us: the next 4096 B packet is due 120 us later.
    assert_eq!(cc.next_send_time(sent, MTU) - sent, Duration::from_us(120));
    // The ACK of a packet sent earlier reports a queue at the target
    // (no ECN): the fair increase grows the window a little, and the
    // packet held back is re-timed one new gap after the last send.
    let at = Instant::from_us(20);
    cc.on_ack(at, ack(15.0, false));
    let w = cc.cwnd();
    assert!(w > 512.0 && w < MTU as f64, "still below one packet: {w}");
    let gap = Duration::from_ps((MTU as f64 * 15e6 / w).round() as u64);
    assert_eq!(cc.next_send_time(at, MTU), sent + gap);
    // A cut does not push it back: it applies from the next packet on.
    let due = cc.next_send_time(at, MTU);
    cc.on_ack(Instant::from_us(21), ack(60.0, true));
    assert_eq!(cc.next_send_time(Instant::from_us(21), MTU), due);
    // A window that reaches one packet sends at once.
    cc.on_ack(Instant::from_us(40), ack(10.0, false));
    assert!(cc.cwnd() >= MTU as f64);
    assert_eq!(cc.next_send_time(Instant::from_us(40), MTU), Instant::from_us(40));
}

#[test]
fn qa_gate_is_a_shift_of_a_64_bit_window() {
    let mut c = cfg();
    c.quick_adapt.gate = 64;
    assert!(CcConfig::Nscc(c).validate().is_err());
    c.quick_adapt.gate = 63;
    assert!(CcConfig::Nscc(c).validate().is_ok());
}

proptest! {
    #[test]
    fn never_outside_bounds(events in prop::collection::vec((0u8..5, 0u64..100_000, any::<bool>(), 0u64..200_000), 1..400)) {
        let c = cfg();
        let mut cc = Nscc::new(c);
        let mut now = Instant::ZERO;
        for (kind, rtt_ns, ce, bytes) in events {
            now += Duration::from_ns(rtt_ns % 3000);
            match kind {
                0 | 1 => cc.on_ack(now, AckSample { acked_bytes: bytes, rtt: Some(Duration::from_ns(rtt_ns)), ecn_ce: ce as u32, in_flight: 0, ..AckSample::default() }),
                2 => cc.on_ack(now, AckSample { acked_bytes: bytes, rtt: None, ecn_ce: ce as u32, in_flight: 0, ..AckSample::default() }),
                3 => cc.on_loss(now, bytes),
                _ => if ce { cc.on_timeout(now) } else { cc.on_cnp(now) },
            }
            prop_assert!(cc.window() >= c.min_cwnd && cc.window() <= c.max_cwnd);
        }
    }
}

/// One NSCC sender into one FIFO bottleneck of `gbps` with ECN marking
/// above `k_bytes`, `base_rtt` of propagation; ACK-clocked, sender bursts
/// at infinite speed. Returns (delivered fraction of capacity over the
/// second half, max queue over the second half, final window, BDP).
fn closed_loop(gbps: f64, base_us: u64, k_bytes: f64, run_us: u64) -> (f64, f64, u64, f64) {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let base = Duration::from_us(base_us);
    let mut c = NsccConfig::for_fabric(gbps, base, MTU);
    let bdp = gbps * 1e9 / 8.0 * base.as_secs_f64();
    c.max_cwnd = (4.0 * bdp) as u64; // let the controller, not the cap, bound the queue
    c.init_cwnd = 8 * MTU as u64;
    let mut cc = Nscc::new(c);
    let ser = Duration::serialisation(MTU as u64, gbps).as_ps();
    let end = Instant::from_us(run_us);
    let half = Instant::from_us(run_us / 2);
    let mut link_free = Instant::ZERO;
    let mut in_flight = 0u64;
    let mut acks: BinaryHeap<Reverse<(Instant, Instant, bool)>> = BinaryHeap::new();
    let mut now = Instant::ZERO;
    let (mut delivered, mut max_q) = (0u64, 0f64);
    loop {
        while in_flight + MTU as u64 <= cc.window() {
            let q_ps = link_free.as_ps().saturating_sub(now.as_ps());
            let q_bytes = q_ps as f64 / ser as f64 * MTU as f64;
            if now >= half {
                max_q = max_q.max(q_bytes);
            }
            let depart = now.max(link_free) + Duration::from_ps(ser);
            link_free = depart;
            acks.push(Reverse((depart + base, now, q_bytes > k_bytes)));
            in_flight += MTU as u64;
            cc.on_send(now, MTU);
        }
        let Reverse((t, sent, ce)) = acks.pop().expect("window >= 1 MTU keeps a packet in flight");
        now = t;
        if now > end {
            break;
        }
        in_flight -= MTU as u64;
        if now >= half {
            delivered += MTU as u64;
        }
        cc.on_ack(
            now,
            AckSample {
                acked_bytes: MTU as u64,
                rtt: Some(now - sent),
                ecn_ce: ce as u32,
                in_flight,
                ..AckSample::default()
            },
        );
    }
    let capacity = gbps * 1e9 / 8.0 * (end - half).as_secs_f64();
    (delivered as f64 / capacity, max_q, cc.window(), bdp)
}

#[test]
fn closed_loop_converges_near_bdp_with_bounded_queue() {
    // 100 Gb/s, 10 us base RTT (BDP 125 kB), ECN above 40 kB, 2 ms.
    let (util, max_q, w, bdp) = closed_loop(100.0, 10, 40_000.0, 2_000);
    eprintln!("util {util:.3} max queue {max_q:.0} B window {w} B BDP {bdp:.0} B");
    assert!(util > 0.95, "utilisation {util}");
    assert!(max_q < bdp, "queue {max_q} vs BDP {bdp}");
    assert!(
        w as f64 > 0.9 * bdp && (w as f64) < 2.0 * bdp,
        "window {w} vs BDP {bdp}"
    );
}

#[test]
fn closed_loop_fast_short_fabric() {
    // 400 Gb/s, 4 us base RTT (BDP 200 kB), ECN above 60 kB, 1 ms.
    let (util, max_q, w, bdp) = closed_loop(400.0, 4, 60_000.0, 1_000);
    eprintln!("util {util:.3} max queue {max_q:.0} B window {w} B BDP {bdp:.0} B");
    assert!(util > 0.95, "utilisation {util}");
    assert!(max_q < bdp, "queue {max_q} vs BDP {bdp}");
    assert!(
        w as f64 > 0.9 * bdp && (w as f64) < 2.0 * bdp,
        "window {w} vs BDP {bdp}"
    );
}

/// The receiver's cwnd penalty (CC_STATE): eighths of a halving of the
/// ceiling, a cap while it lasts; the restore bit gives back the window
/// the first cap took.
#[test]
fn receiver_penalty_caps_the_window_and_restore_gives_it_back() {
    use proto::wire::mrc10::choices::{cwnd_penalty_for_senders, cwnd_penalty_share};
    assert_eq!(cwnd_penalty_share(0), 1.0);
    assert_eq!(cwnd_penalty_share(8), 0.5);
    assert_eq!(cwnd_penalty_share(80), 1.0 / 1024.0);
    assert_eq!(cwnd_penalty_share(255), cwnd_penalty_share(127), "7 bits");
    // Two halvings of headroom: nothing for up to 4 senders, 1023 senders
    // keep 4/1023 each (8 log2 1023 = 79.98 -> 80, minus 16).
    assert_eq!(
        [1, 2, 4, 8, 1023, u32::MAX].map(cwnd_penalty_for_senders),
        [0, 0, 0, 8, 64, 127]
    );

    let c = cfg();
    let mut cc = Nscc::new(c);
    let now = Instant::from_us(1);
    let w0 = cc.cwnd();
    let penalised = |p: u8, restore: bool| AckSample {
        acked_bytes: 0,
        cwnd_penalty: p,
        restore,
        ..AckSample::default()
    };
    cc.on_ack(now, penalised(16, false));
    assert_eq!(cc.cwnd(), c.max_cwnd as f64 / 4.0, "a quarter of the ceiling");
    // Zero delay would grow the window; the cap holds it.
    for _ in 0..50 {
        cc.on_ack(
            now,
            AckSample {
                cwnd_penalty: 16,
                ..ack(10.0, false)
            },
        );
    }
    assert_eq!(cc.cwnd(), c.max_cwnd as f64 / 4.0);
    // A deeper cap below the floor stops at the floor.
    cc.on_ack(now, penalised(127, false));
    assert_eq!(cc.window(), c.min_cwnd);
    // The restore bit on the first SACK without a penalty: back to the
    // window before the first cap.
    cc.on_ack(now, penalised(0, true));
    assert_eq!(cc.cwnd(), w0);
    assert_eq!(cc.counters().receiver_restores, 1);
    assert!(cc.counters().receiver_penalties >= 2);
    // A second restore has nothing to give back.
    cc.on_ack(now, penalised(0, true));
    assert_eq!(cc.counters().receiver_restores, 1);
    // A penalty whose restore bit was lost: the next SACK without one
    // forgets the old window, and a late restore gives nothing back.
    cc.on_ack(now, penalised(16, false));
    let capped = cc.cwnd();
    cc.on_ack(now, penalised(0, false));
    cc.on_ack(now, penalised(0, true));
    assert_eq!(cc.cwnd(), capped);
    assert_eq!(cc.counters().receiver_restores, 1);
}

/// `max_cut` (libmrc's `max_md_jump`) bounds every multiplicative
/// decrease: under marks and a delay far above target each cut is the
/// bound, half the window by default, a tenth with 0.1; a share outside
/// `[0, 1]` is refused.
#[test]
fn max_cut_bounds_each_multiplicative_decrease() {
    let cuts = |max_cut: f64| {
        let c = NsccConfig {
            max_cut,
            // The whole excess delay's share: beyond the bound.
            decrease_gain: 1.0,
            quick_adapt: QuickAdapt {
                enabled: false,
                ..QuickAdapt::default()
            },
            ..cfg()
        };
        let mut cc = Nscc::new(c);
        let mut now = Instant::ZERO;
        let mut ratios = Vec::new();
        // Each ACK one decrease period (base + T = 15 us) after the last.
        for _ in 0..400 {
            now += Duration::from_us(15);
            let before = cc.cwnd();
            cc.on_ack(now, ack(1000.0, true));
            if cc.cwnd() < before && cc.cwnd() > c.min_cwnd as f64 {
                ratios.push(cc.cwnd() / before);
            }
        }
        ratios
    };
    let half = cuts(NSCC_MAX_CUT);
    let tenth = cuts(0.1);
    assert!(!half.is_empty() && !tenth.is_empty());
    assert!(half.iter().all(|&r| r >= 0.5 - 1e-9), "{half:?}");
    assert!(half.iter().any(|&r| (r - 0.5).abs() < 1e-9), "{half:?}");
    assert!(tenth.iter().all(|&r| r >= 0.9 - 1e-9), "{tenth:?}");
    assert!(tenth.iter().any(|&r| (r - 0.9).abs() < 1e-9), "{tenth:?}");
    for bad in [-0.1, 1.5, f64::NAN] {
        let c = NsccConfig { max_cut: bad, ..cfg() };
        assert!(CcConfig::Nscc(c).validate().is_err(), "{bad}");
    }
}
