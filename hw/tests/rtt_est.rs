//! RTT estimator against its integer reference
//! (`proto::model::rtt_fixed::RttFixed`, itself checked against the f64
//! `proto::model::ev::EvSet`): several QPs, a seeded stream of SACK echoes
//! whose RTTs wander around a per-QP congestion level that jumps (some
//! under the base, some zero, some echoes from the future: no sample), QP
//! starts (INIT) in between, the 32-bit ns clock crossing its wrap, random
//! gaps on the input. Every result (QP, allowance, age, in order) must
//! equal the reference's, and the same cycles are replayed on the emitted
//! Verilog.

mod common;

use std::sync::{Arc, Mutex};

use hw::rtt_est::{RttEstimator, STALL_MIN_NS, STALL_RTTS};
use proto::model::rtt_fixed::{RttFixed, NS_MAX};
use rust_hdl::prelude::*;

use tb::rng::Rng;
use tb::stall::Stall;
use tb::{lockstep, lockstep_sim};

use common::v64 as u;

const QP_IDS: [u8; 4] = [0, 7, 128, 255];

/// One input record: a QP start, or a SACK's echo at a time.
#[derive(Clone, Copy, Debug)]
struct Rec {
    qp: u8,
    init: bool,
    now: u32,
    echo: u32,
}

/// What a record gives: `(qp, allowance, age)`.
type Out = (u8, u32, u32);

/// What the stimulus must reach (counted on the reference).
const COVER: [&str; 8] = [
    "first sample",
    "later sample",
    "new base",
    "no sample (zero or from the future)",
    "allowance: the floor",
    "allowance: twice the base",
    "allowance: the spread",
    "a bound saturated (2^31 - 1 ns)",
];

fn scenario(seed: u64, n: usize) -> (Vec<Rec>, Vec<Out>, [u64; 8]) {
    let mut r = Rng::from_state(seed);
    let mut est = [RttFixed::default(); 4];
    let mut base = [0u64; 4];
    let mut level = [0u64; 4];
    // 200 us before the 32-bit wrap: the run crosses it.
    let mut now: u32 = u32::MAX - 200_000;
    let (mut recs, mut want, mut cov) = (Vec::new(), Vec::new(), [0u64; 8]);
    for _ in 0..n {
        now = now.wrapping_add(r.below(3000) as u32);
        let q = r.below(QP_IDS.len() as u64) as usize;
        let init = r.chance(3);
        if init || base[q] == 0 {
            // A path of its own: 300 ns to 30 us.
            base[q] = 300 + r.below(30_000);
            level[q] = 0;
        }
        if r.chance(5) {
            level[q] = if r.chance(30) { 0 } else { r.below(base[q] * 8) };
        }
        let rtt: u64 = match r.below(200) {
            0..=5 => 0,
            6..=11 => base[q] / 2 + r.below(base[q] / 2 + 1),
            // Now and then a sample of seconds (under 2^31 ns): the bounds
            // saturate.
            12 => (1 << 30) + r.below(1 << 30),
            _ => base[q] + level[q] + r.below(base[q] / 4 + 1),
        };
        // An echo from the future now and then: no sample.
        let echo = if r.chance(3) {
            now.wrapping_add(1 + r.below(5000) as u32)
        } else {
            now.wrapping_sub(rtt as u32)
        };
        let rec = Rec {
            qp: QP_IDS[q],
            init,
            now,
            echo,
        };
        let e = &mut est[q];
        if init {
            *e = RttFixed::default();
        } else {
            let d = now.wrapping_sub(echo);
            let sample = if (d as i32) > 0 { d } else { 0 };
            if sample == 0 {
                cov[3] += 1;
            } else {
                cov[if e.base == 0 { 0 } else { 1 }] += 1;
                if e.base != 0 && sample < e.base {
                    cov[2] += 1;
                }
            }
            e.sample(sample);
            if e.base != 0 {
                let a = u64::from(e.allowance());
                if a == STALL_MIN_NS {
                    cov[4] += 1;
                } else if a == STALL_RTTS * u64::from(e.base) {
                    cov[5] += 1;
                } else {
                    cov[6] += 1;
                }
                if u64::from(e.age()) == NS_MAX {
                    cov[7] += 1;
                }
            }
        }
        recs.push(rec);
        want.push((rec.qp, e.allowance(), e.age()));
    }
    (recs, want, cov)
}

/// Runs the block; returns the results, the cycle each appeared at, and
/// the cycles the run took.
fn run(seed: u64, recs: &[Rec], gaps: Stall) -> (Vec<Out>, Vec<u64>, u64) {
    let got = Arc::new(Mutex::new(Vec::<Out>::new()));
    let at = Arc::new(Mutex::new(Vec::<u64>::new()));
    let cycles = Arc::new(Mutex::new(0u64));
    let (g2, a2, c2) = (got.clone(), at.clone(), cycles.clone());
    let recs2 = recs.to_vec();
    let mut uut = RttEstimator::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(RttEstimator, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut r = Rng::from_state(seed ^ 0x7e57_0a11);
        wait_clock_true!(sim, clock, x);
        let mut i = 0;
        let mut cycle = 0u64;
        while g2.lock().unwrap().len() < recs2.len() && cycle < 1_000_000 {
            let present = i < recs2.len() && gaps.go(&mut r);
            x.s_valid.next = present;
            if i < recs2.len() {
                let rec = recs2[i];
                x.s_qp.next = u64::from(rec.qp).into();
                x.s_init.next = rec.init;
                x.s_echo_ns.next = u64::from(rec.echo).into();
                x.now_ns.next = u64::from(rec.now).into();
            }
            wait_clock_false!(sim, clock, x);
            let taken = present && x.s_ready.val();
            if x.out_valid.val() {
                g2.lock().unwrap().push((
                    u(x.out_qp.val()) as u8,
                    u(x.out_allowance.val()) as u32,
                    u(x.out_age.val()) as u32,
                ));
                a2.lock().unwrap().push(cycle);
            }
            wait_clock_true!(sim, clock, x);
            if taken {
                i += 1;
            }
            cycle += 1;
        }
        *c2.lock().unwrap() = cycle;
        sim.done(x)
    });
    sim.run(Box::new(uut), 100_000_000_000).unwrap();
    rec.check_verilog("mrc_rtt_est", || {
        hw::flow::emit_block("mrc_rtt_est", &mut RttEstimator::default()).verilog
    });
    let got = got.lock().unwrap().clone();
    let at = at.lock().unwrap().clone();
    let c = *cycles.lock().unwrap();
    (got, at, c)
}

fn check(recs: &[Rec], got: &[Out], want: &[Out]) {
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g, w, "record {k}: {:?}", recs[k]);
    }
    assert_eq!(got.len(), want.len());
}

/// The block's constants are the golden model's.
#[test]
fn rtt_estimator_constants_are_the_models() {
    assert_eq!(STALL_MIN_NS, proto::model::ev::STALL_MIN.as_ns());
    assert_eq!(STALL_RTTS, proto::model::ev::STALL_RTTS);
}

#[test]
fn rtt_estimator_matches_integer_reference() {
    let seed = std::env::var("RTT_EST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x0077_E570u64);
    let n = 1500;
    let (recs, want, cov) = scenario(seed, n);
    eprintln!("coverage: {:?}", COVER.iter().zip(cov).collect::<Vec<_>>());
    for (name, k) in COVER.iter().zip(cov) {
        assert!(k >= 5, "{name}: {k} times");
    }
    let (got, _, cycles) = run(seed, &recs, Stall::stall_percent(40));
    eprintln!("{n} records in {cycles} cycles");
    check(&recs, &got, &want);
}

/// Samples back to back: one every 8 cycles, the same QP back to back
/// included (one sample at a time, so no hazard).
#[test]
fn rtt_estimator_takes_a_sample_every_eight_cycles() {
    let seed = 0x0077_E571u64;
    let n = 400;
    let (recs, want, _) = scenario(seed, n);
    let same_qp = recs.windows(2).filter(|w| w[0].qp == w[1].qp).count();
    let (got, at, _) = run(seed, &recs, Stall::NEVER);
    check(&recs, &got, &want);
    assert!(same_qp > 50, "{same_qp} same-QP pairs");
    for w in at.windows(2) {
        assert_eq!(w[1] - w[0], 8, "results at cycles {} and {}", w[0], w[1]);
    }
}
