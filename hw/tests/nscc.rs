//! NSCC unit against its integer reference
//! (`proto::model::nscc_fixed::NsccFixed`, itself checked against the f64
//! `proto::model::cc::Nscc`): several QPs with their own parameters
//! (tables 10 and 14), a seeded stream of feedback records (ACKs whose
//! delays wander around a per-QP congestion level, with ECN, RTT samples
//! or none, receiver penalties and restores; losses; timeouts; INITs),
//! the time crossing the 32-bit wrap, random gaps on the input and random
//! back-pressure on the output. Every window write (QP and window, in
//! order) must equal the reference's, and the same cycles are replayed on
//! the emitted Verilog.

use std::sync::{Arc, Mutex};

use contract::config::{cc, nscc, table, Row};
use hw::contract_rows::row_bits;
use hw::nscc::{kind, NsccUnit};
use proto::model::cc::NsccConfig;
use proto::model::nscc_fixed::{Feedback, NsccFixed, NsccFixedParams, Quadrant};
use proto::Duration;
use rust_hdl::prelude::*;

use tb::rng::Rng;
use tb::stall::Stall;
use tb::{lockstep, lockstep_sim};

const QP_IDS: [u8; 4] = [0, 7, 128, 255];

#[derive(Clone, Copy, Debug)]
struct Rec {
    qp: u8,
    now: u32,
    fb: Feedback,
}

fn params(q: usize) -> NsccFixedParams {
    let mut c = NsccConfig::for_fabric(
        [400.0, 100.0, 200.0, 50.0][q],
        Duration::from_ns([2000, 1500, 3000, 1000][q]),
        4096,
    );
    c.quick_adapt.enabled = false;
    c.min_cwnd = [4096, 10_000, 1, 512][q];
    c.decrease_gain = [0.5, 0.8, 0.25, 1.0][q];
    NsccFixedParams::from_config(&c)
}

/// What the stimulus must reach (counted on the reference).
const COVER: [&str; 10] = [
    "proportional increase",
    "fair increase",
    "hold",
    "decrease applied",
    "decrease suppressed or under target",
    "streak of a window (fast increase)",
    "penalty cap",
    "restore",
    "loss",
    "timeout",
];

/// Feedback perturbations whose windows must differ from the real ones
/// (the stimulus can see the branch; the RTL mutations in
/// `docs/hw/nscc.md` were run against it).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mutant {
    None,
    NoEcn,
    NoRtt,
    NoPenalty,
}

fn scenario(seed: u64, n: usize, mutant: Mutant) -> (Vec<Rec>, Vec<(u8, u32)>, [usize; 10]) {
    let mut r = Rng::from_state(seed);
    let ps: Vec<NsccFixedParams> = (0..QP_IDS.len()).map(params).collect();
    let mut st: Vec<NsccFixed> = vec![NsccFixed::default(); QP_IDS.len()];
    let mut level: Vec<u64> = ps.iter().map(|p| u64::from(p.target_ns)).collect();
    let mut recs = Vec::new();
    let mut want = Vec::new();
    let mut cov = [0usize; 10];
    // Crosses the 32-bit wrap of the ns clock early on.
    let mut now: u32 = 0xFFFF_0000;
    for &qp in &QP_IDS {
        recs.push(Rec {
            qp,
            now,
            fb: Feedback::Init,
        });
    }
    while recs.len() < n {
        // Now and then a pause longer than base + target (decreases
        // spaced far enough apart to apply).
        let step = if r.chance(15) {
            2000 + r.below(6000)
        } else {
            r.below(600)
        };
        now = now.wrapping_add(step as u32);
        let q = r.below(QP_IDS.len() as u64) as usize;
        let p = &ps[q];
        let t = u64::from(p.target_ns);
        if r.chance(4) {
            // An empty path a third of the time (fast increase).
            level[q] = if r.chance(33) { 0 } else { r.below(3 * t + 1) };
        }
        let jitter = (level[q] / 2 + t / 32).min(t / 2) + 1;
        let k = r.below(100);
        let fb = if k < 85 {
            let acked = if r.chance(10) { r.below(100_000) } else { r.below(9000) } as u32;
            let rtt = if r.chance(80) {
                let lo = u64::from(p.base_rtt_ns) + level[q];
                let x = (lo + r.below(jitter)).saturating_sub(r.below(jitter));
                // Now and then below the base RTT (the base moves down).
                Some(if r.chance(2) { x as u32 / 2 } else { x as u32 })
            } else {
                None
            };
            let ecn = r.chance(if level[q] > t { 60 } else { 15 });
            let penalty = if r.chance(6) { r.below(128) as u8 } else { 0 };
            Feedback::Ack {
                acked,
                ecn,
                rtt_ns: rtt,
                penalty,
                restore: r.chance(60),
            }
        } else if k < 94 {
            Feedback::Loss {
                bytes: r.below(30_000) as u32,
            }
        } else if k < 99 {
            Feedback::Timeout
        } else {
            Feedback::Init
        };
        recs.push(Rec { qp: QP_IDS[q], now, fb });
    }
    for rec in &recs {
        let q = QP_IDS.iter().position(|&x| x == rec.qp).unwrap();
        let p = &ps[q];
        let s = &mut st[q];
        let before = *s;
        let fb = match (mutant, rec.fb) {
            (
                Mutant::NoEcn,
                Feedback::Ack {
                    acked,
                    rtt_ns,
                    penalty,
                    restore,
                    ..
                },
            ) => Feedback::Ack {
                acked,
                ecn: false,
                rtt_ns,
                penalty,
                restore,
            },
            (
                Mutant::NoRtt,
                Feedback::Ack {
                    acked,
                    ecn,
                    penalty,
                    restore,
                    ..
                },
            ) => Feedback::Ack {
                acked,
                ecn,
                rtt_ns: None,
                penalty,
                restore,
            },
            (Mutant::NoPenalty, Feedback::Ack { acked, ecn, rtt_ns, .. }) => Feedback::Ack {
                acked,
                ecn,
                rtt_ns,
                penalty: 0,
                restore: false,
            },
            (_, fb) => fb,
        };
        let (w, quadrant) = s.step(p, rec.now, fb);
        want.push((rec.qp, w));
        match quadrant {
            Some(Quadrant::ProportionalIncrease) => {
                cov[0] += 1;
                // The near-zero-delay streak reached a window: the fast
                // increase (acked / 2) ran.
                cov[5] += usize::from(s.streak > 0 && u64::from(s.streak) << 8 >= before.cwnd_fx);
            }
            Some(Quadrant::FairIncrease) => cov[1] += 1,
            Some(Quadrant::Hold) => cov[2] += 1,
            Some(Quadrant::MultiplicativeDecrease) => {
                if s.last_dec_ns != before.last_dec_ns || s.last_dec_valid != before.last_dec_valid {
                    cov[3] += 1;
                } else {
                    cov[4] += 1;
                }
            }
            None => {}
        }
        if let Feedback::Ack { penalty, restore, .. } = fb {
            cov[6] += usize::from(penalty > 0 && s.pre_valid && s.cwnd_fx < before.cwnd_fx);
            cov[7] += usize::from(penalty == 0 && restore && before.pre_valid && before.pre_fx > before.cwnd_fx);
        }
        cov[8] += usize::from(matches!(fb, Feedback::Loss { .. }));
        cov[9] += usize::from(matches!(fb, Feedback::Timeout));
    }
    (recs, want, cov)
}

fn u<const N: usize>(b: Bits<N>) -> u64 {
    (0..N.min(64))
        .filter(|&i| b.get_bit(i))
        .fold(0, |acc, i| acc | (1 << i))
}

fn cfg_rows() -> Vec<(u8, u8, Row)> {
    let mut rows = Vec::new();
    for (q, &qp) in QP_IDS.iter().enumerate() {
        let p = params(q);
        rows.push((
            table::CC,
            qp,
            Row::new()
                .set(cc::MIN_CWND, u64::from(p.min_cwnd))
                .set(cc::MAX_CWND, u64::from(p.max_cwnd))
                .set(cc::SEND_WINDOW, 256),
        ));
        rows.push((
            table::NSCC,
            qp,
            Row::new()
                .set(nscc::BASE_RTT_NS, u64::from(p.base_rtt_ns))
                .set(nscc::TARGET_NS, u64::from(p.target_ns))
                .set(nscc::INCREASE_BYTES, u64::from(p.increase_bytes))
                .set(nscc::INIT_CWND, u64::from(p.init_cwnd))
                .set(nscc::DECREASE_GAIN, u64::from(p.decrease_gain_q16)),
        ));
    }
    rows
}

/// Runs the block; returns the window writes, the cycle each was taken
/// at, and the cycles the run took.
fn run(seed: u64, recs: &[Rec], gaps: Stall, backpressure: Stall) -> (Vec<(u8, u32)>, Vec<u64>, u64) {
    let got = Arc::new(Mutex::new(Vec::<(u8, u32)>::new()));
    let at = Arc::new(Mutex::new(Vec::<u64>::new()));
    let a2 = at.clone();
    let cycles = Arc::new(Mutex::new(0u64));
    let (g2, c2) = (got.clone(), cycles.clone());
    let recs2 = recs.to_vec();
    let rows = cfg_rows();
    let mut uut = NsccUnit::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(NsccUnit, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut r = Rng::from_state(seed ^ 0x5eed_0f6a_7e00);
        wait_clock_true!(sim, clock, x);
        for (t, idx, row) in &rows {
            x.cfg.valid.next = true;
            x.cfg.table.next = u64::from(*t).into();
            x.cfg.index.next = u64::from(*idx).into();
            x.cfg.data.next = row_bits(row);
            wait_clock_cycle!(sim, clock, x);
        }
        x.cfg.valid.next = false;
        let mut i = 0;
        let mut cycle = 0u64;
        while g2.lock().unwrap().len() < recs2.len() && cycle < 2_000_000 {
            let present = i < recs2.len() && gaps.go(&mut r);
            x.fb_valid.next = present;
            if i < recs2.len() {
                let rec = recs2[i];
                x.fb_qp.next = u64::from(rec.qp).into();
                x.fb_now_ns.next = u64::from(rec.now).into();
                x.fb_ecn.next = false;
                x.fb_rtt_valid.next = false;
                x.fb_rtt_ns.next = 0.into();
                x.fb_penalty.next = 0.into();
                x.fb_restore.next = false;
                x.fb_bytes.next = 0.into();
                match rec.fb {
                    Feedback::Init => x.fb_kind.next = kind::INIT.into(),
                    Feedback::Ack {
                        acked,
                        ecn,
                        rtt_ns,
                        penalty,
                        restore,
                    } => {
                        x.fb_kind.next = kind::ACK.into();
                        x.fb_bytes.next = u64::from(acked).into();
                        x.fb_ecn.next = ecn;
                        x.fb_rtt_valid.next = rtt_ns.is_some();
                        x.fb_rtt_ns.next = u64::from(rtt_ns.unwrap_or(0)).into();
                        x.fb_penalty.next = u64::from(penalty).into();
                        x.fb_restore.next = restore;
                    }
                    Feedback::Loss { bytes } => {
                        x.fb_kind.next = kind::LOSS.into();
                        x.fb_bytes.next = u64::from(bytes).into();
                    }
                    Feedback::Timeout => x.fb_kind.next = kind::TIMEOUT.into(),
                }
            }
            x.out_ready.next = backpressure.go(&mut r);
            wait_clock_false!(sim, clock, x);
            let taken = present && x.fb_ready.val();
            if x.out_valid.val() && x.out_ready.val() {
                g2.lock()
                    .unwrap()
                    .push((u(x.out_qp.val()) as u8, u(x.out_cwnd.val()) as u32));
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
    rec.check_verilog("mrc_nscc", || {
        hw::flow::emit_block("mrc_nscc", &mut NsccUnit::default()).verilog
    });
    let got = got.lock().unwrap().clone();
    let c = *cycles.lock().unwrap();
    let at = at.lock().unwrap().clone();
    (got, at, c)
}

fn check(recs: &[Rec], got: &[(u8, u32)], want: &[(u8, u32)]) {
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g, w, "record {k}: {:?}", recs[k]);
    }
    assert_eq!(got.len(), want.len());
}

#[test]
fn nscc_unit_matches_integer_reference() {
    let seed = std::env::var("NSCC_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x45CC_0015u64);
    let n = 1200;
    let (recs, want, cov) = scenario(seed, n, Mutant::None);
    eprintln!("coverage: {:?}", COVER.iter().zip(cov).collect::<Vec<_>>());
    for (name, k) in COVER.iter().zip(cov) {
        assert!(k > 0, "{name} never exercised");
    }
    // The stimulus tells the ECN, RTT and penalty branches apart.
    for m in [Mutant::NoEcn, Mutant::NoRtt, Mutant::NoPenalty] {
        let (_, w2, _) = scenario(seed, n, m);
        let diff = w2.iter().zip(&want).filter(|(a, b)| a != b).count();
        eprintln!("{m:?}: {diff} windows differ");
        assert!(diff > 10, "{m:?} changes only {diff} windows");
    }
    let (got, _, cycles) = run(seed, &recs, Stall::stall_percent(25), Stall::stall_percent(30));
    eprintln!("{n} records in {cycles} cycles");
    check(&recs, &got, &want);
}

/// Records back to back, the output always ready: the cycles each kind
/// takes (from one window write to the next: the record is taken the
/// cycle after the previous write left), and the same QP back to back
/// (one record at a time, so no hazard).
#[test]
fn nscc_unit_cycles_per_record() {
    let seed = 0x45CC_0016u64;
    let n = 600;
    let (recs, want, _) = scenario(seed, n, Mutant::None);
    let same_qp = recs.windows(2).filter(|w| w[0].qp == w[1].qp).count();
    let (got, at, cycles) = run(seed, &recs, Stall::NEVER, Stall::NEVER);
    check(&recs, &got, &want);
    assert!(same_qp > 100, "{same_qp} same-QP pairs");
    // [kind] = (count, total, max); kinds: INIT, ACK, LOSS, TIMEOUT.
    let mut per = [(0u64, 0u64, 0u64); 4];
    for i in 1..at.len() {
        let k = match recs[i].fb {
            Feedback::Init => 0,
            Feedback::Ack { .. } => 1,
            Feedback::Loss { .. } => 2,
            Feedback::Timeout => 3,
        };
        let c = at[i] - at[i - 1];
        per[k].0 += 1;
        per[k].1 += c;
        per[k].2 = per[k].2.max(c);
    }
    for (name, (count, total, max)) in ["INIT", "ACK", "LOSS", "TIMEOUT"].iter().zip(per) {
        eprintln!(
            "{name}: {count} records, mean {:.1} cycles, max {max}",
            total as f64 / count.max(1) as f64
        );
    }
    eprintln!("{n} records in {cycles} cycles, {same_qp} same-QP pairs back to back");
    // The bounds docs/hw/nscc.md states.
    assert!(per[0].2 <= 8 && per[2].2 <= 8 && per[3].2 <= 8, "{per:?}");
    assert!(per[1].2 <= 116, "{per:?}");
}
