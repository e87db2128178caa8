//! Tests of the DCQCN rate controller.

use proto::model::cc::*;
use proto::time::{Duration, Instant};

fn dcqcn() -> Dcqcn {
    Dcqcn::new(DcqcnConfig::for_line_rate(100.0)).with_byte_counter(0)
}

/// Fire the increase timer until it stops or `limit` events ran; returns
/// the stages seen.
fn recover(cc: &mut Dcqcn, limit: usize) -> Vec<DcqcnStage> {
    let mut stages = Vec::new();
    while let Some(t) = cc.next_timer() {
        stages.push(cc.stage());
        cc.on_timer(t);
        if stages.len() >= limit {
            break;
        }
    }
    stages
}

#[test]
fn build_returns_dcqcn() {
    let cc = build(&CcConfig::Dcqcn(DcqcnConfig::for_line_rate(100.0)));
    assert_eq!(cc.name(), "dcqcn");
    assert_eq!(cc.window(), u64::MAX);
    assert_eq!(cc.next_timer(), None);
}

#[test]
fn cnp_cuts_by_alpha_over_two() {
    let mut cc = dcqcn();
    assert_eq!(cc.rate_gbps(), 100.0);
    assert_eq!(cc.alpha(), 1.0);
    cc.on_cnp(Instant::from_us(1));
    assert_eq!(cc.rate_gbps(), 50.0);
    assert_eq!(cc.target_gbps(), 100.0);
    assert_eq!(cc.alpha(), 1.0); // (1-g) * 1 + g
    assert_eq!(cc.next_timer(), Some(Instant::from_us(56)));
    // Alpha decays by (1-g) per period without CNPs: a CNP 100 periods
    // later first applies (1-g)^100, then its own update.
    let g = 1.0 / 256.0;
    cc.on_cnp(Instant::from_us(1 + 100 * 55));
    let expect = (1.0 - g) * (1.0f64 - g).powi(100) + g;
    assert!((cc.alpha() - expect).abs() < 1e-12, "{}", cc.alpha());
}

#[test]
fn successive_cnps_follow_the_formula() {
    let mut cc = dcqcn();
    let g = 1.0 / 256.0;
    let mut alpha = 1.0;
    let mut rc: f64 = 100.0;
    for k in 0..20u64 {
        cc.on_cnp(Instant::from_us(1 + k));
        let rt = rc;
        rc = (rc * (1.0 - alpha / 2.0)).max(0.1);
        alpha = (1.0 - g) * alpha + g;
        assert!((cc.rate_gbps() - rc).abs() < 1e-9, "step {k}");
        assert_eq!(cc.target_gbps(), rt);
    }
}

#[test]
fn never_below_min_rate() {
    let mut cc = dcqcn();
    for k in 0..1000u64 {
        cc.on_cnp(Instant::from_ns(k * 10));
        assert!(cc.rate_gbps() >= 0.1 - 1e-12);
    }
    assert_eq!(cc.rate_gbps(), 0.1);
}

#[test]
fn recovers_fast_then_additive_to_line_rate() {
    let mut cc = dcqcn();
    cc.on_cnp(Instant::from_us(1)); // 100 -> 50, Rt 100
    cc.on_cnp(Instant::from_us(2)); // 50 -> 25, Rt 50
    assert_eq!(cc.target_gbps(), 50.0);
    let mut rates = Vec::new();
    let mut targets = Vec::new();
    let mut stages = Vec::new();
    while let Some(t) = cc.next_timer() {
        stages.push(cc.stage());
        cc.on_timer(t);
        rates.push(cc.rate_gbps());
        targets.push(cc.target_gbps());
        assert!(stages.len() < 1000);
    }
    // Five fast-recovery steps halve the gap to Rt = 50 each time.
    assert!(stages[..5].iter().all(|s| *s == DcqcnStage::FastRecovery));
    assert!((rates[4] - (50.0 - 25.0 / 32.0)).abs() < 1e-9);
    assert!(targets[..5].iter().all(|t| *t == 50.0));
    // Then additive increase: Rt += Rai (0.5 Gb/s) per step, never hyper
    // without byte-counter events.
    assert!(stages[5..].iter().all(|s| *s == DcqcnStage::AdditiveIncrease));
    assert!((targets[5] - 50.5).abs() < 1e-9);
    assert!((targets[6] - 51.0).abs() < 1e-9);
    assert_eq!(cc.rate_gbps(), 100.0);
    assert_eq!(cc.stage(), DcqcnStage::Idle);
    // Rates never decrease during recovery.
    assert!(rates.windows(2).all(|w| w[1] >= w[0]));
}

#[test]
fn byte_counter_enables_hyper_increase() {
    let mut cc = Dcqcn::new(DcqcnConfig::for_line_rate(100.0)).with_byte_counter(1_000_000);
    cc.on_cnp(Instant::from_us(1));
    cc.on_cnp(Instant::from_us(2));
    let stages = {
        let mut s = Vec::new();
        let mut now = Instant::from_us(2);
        while let Some(t) = cc.next_timer() {
            // 1 MB sent per timer period: one byte-counter event per period.
            for _ in 0..250 {
                cc.on_send(now, 4000);
            }
            now = t;
            s.push(cc.stage());
            cc.on_timer(t);
            assert!(s.len() < 1000);
        }
        s
    };
    assert!(stages.contains(&DcqcnStage::HyperIncrease));
    assert_eq!(cc.rate_gbps(), 100.0);
}

#[test]
fn pacing_gap_matches_rate() {
    let mut cc = dcqcn();
    let now = Instant::from_us(10);
    assert_eq!(cc.next_send_time(now, 4096), now);
    cc.on_send(now, 4096);
    // 4096 B at 100 Gb/s = 327.68 ns.
    assert_eq!(cc.next_send_time(now, 4096) - now, Duration::from_ps(327_680));
    cc.on_cnp(now);
    let t1 = cc.next_send_time(now, 4096);
    cc.on_send(t1, 4096);
    // At 50 Gb/s: 655.36 ns after the previous slot.
    assert_eq!(cc.next_send_time(t1, 4096) - t1, Duration::from_ps(655_360));
    // Sending later than the slot does not bank credit.
    let late = t1 + Duration::from_us(100);
    cc.on_send(late, 4096);
    assert_eq!(cc.next_send_time(late, 4096) - late, Duration::from_ps(655_360));
}

#[test]
fn timer_stops_at_line_rate() {
    let mut cc = dcqcn();
    cc.on_cnp(Instant::from_us(1));
    let stages = recover(&mut cc, 10_000);
    assert!(stages.len() < 100, "{}", stages.len());
    assert_eq!(cc.next_timer(), None);
    // on_timer when nothing is due is harmless.
    cc.on_timer(Instant::from_us(1_000_000));
    assert_eq!(cc.rate_gbps(), 100.0);
    // Loss and timeouts are not DCQCN signals.
    cc.on_loss(Instant::ZERO, 1 << 20);
    cc.on_timeout(Instant::ZERO);
    assert_eq!(cc.rate_gbps(), 100.0);
}
