//! EV prober (small instance, 4 QPs x 8 EVs): the scan, the backoff and
//! the back-pressure of the probe records.
//!
//! The testbench stands in for the EV selector's scan port: it keeps the
//! state of every slot, answers each scan read one cycle later with the
//! state the slot had when it was read (a registered RAM read), and
//! changes states at random between reads (slots 5 and 17 stay
//! ASSUMED_BAD for the whole run, so their backoff reaches its cap). The
//! probe records are taken with random back-pressure.
//!
//! Reference: the scan reads it reported (`scan_valid`), grouped into
//! sweeps (a sweep ends at the QP `qp_last`'s last EV); per sweep, the
//! state of each slot's last read in it counts (a slot read again, after
//! a blocked probe, is decided on its second read); per slot, the try
//! count moves by the rule of `hw::ev_prober` (`next_try`, cleared when
//! not ASSUMED_BAD) and a probe is due at `probe_due`. The probe records
//! taken must be exactly the due probes, in order, none dropped or added.
//! The backoff of the always-bad slots is compared with the golden model
//! (`EvSet::probe_due` with `probe_interval` = one sweep): the same gaps
//! between probes after the first. Sweeps start `sweep_cycles` apart at
//! the least.

use std::sync::{Arc, Mutex};

use hw::ev_prober::{next_try, probe_due, EvProberSmall};
use hw::ev_selector::state;
use proto::model::ev::{EvSet, EvSetConfig, SprayPolicy};
use proto::time::{Duration, Instant};
use rust_hdl::prelude::*;
use tb::rng::RngStar as Rng;
use tb::{lockstep, lockstep_sim};

const EVS: usize = 8;
/// Slots that are ASSUMED_BAD from the start to the end.
const ALWAYS_BAD: [usize; 2] = [5, 17];

#[derive(Default)]
struct Got {
    /// (cycle, slot, state returned for it).
    reads: Vec<(u64, usize, u64)>,
    probes: Vec<usize>,
    cnt_probe: usize,
}

struct Setup {
    seed: u64,
    cycles: u64,
    qp_last: usize,
    sweep_cycles: u64,
    /// Percent of cycles in which the probe consumer is ready.
    ready_pct: u64,
}

fn run(s: Setup) {
    let slots = (s.qp_last + 1) * EVS;
    let got = Arc::new(Mutex::new(Got::default()));
    let g = got.clone();
    let mut uut = EvProberSmall::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let (seed, cycles, qp_last, sweep, ready_pct) = (s.seed, s.cycles, s.qp_last, s.sweep_cycles, s.ready_pct);
    let mut sim = lockstep_sim!(EvProberSmall, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut rng = Rng::from_state(seed | 1);
        let mut states = vec![state::GOOD; 4 * EVS];
        for &b in &ALWAYS_BAD {
            states[b] = state::ASSUMED_BAD;
        }
        // The state the last cycle's read returns now.
        let mut read_state = state::GOOD;
        wait_clock_true!(sim, clock, x);
        for cycle in 0..cycles {
            x.qp_last.next = (qp_last as u64).into();
            x.sweep_cycles.next = sweep.into();
            x.scan_state.next = read_state.into();
            x.prb_ready.next = rng.below(100) < ready_pct;
            wait_clock_false!(sim, clock, x);
            {
                let mut g = g.lock().unwrap();
                if x.prb_valid.val() && x.prb_ready.val() {
                    let slot = x.prb_qp.val().index() * EVS + x.prb_ev.val().index();
                    g.probes.push(slot);
                }
                if x.cnt_probe.val() {
                    g.cnt_probe += 1;
                }
                let a = x.scan_addr.val().index();
                read_state = states[a];
                if x.scan_valid.val() {
                    g.reads.push((cycle, a, read_state));
                }
            }
            // A state change now and then (one per 64 cycles on average),
            // seen by the reads from the next cycle on.
            if rng.below(64) == 0 {
                let slot = rng.below(states.len() as u64) as usize;
                if !ALWAYS_BAD.contains(&slot) {
                    states[slot] = match rng.below(10) {
                        0..=4 => state::ASSUMED_BAD,
                        5..=8 => state::GOOD,
                        _ => state::DENIED,
                    };
                }
            }
            wait_clock_true!(sim, clock, x);
        }
        sim.done(x)
    });
    sim.run(Box::new(uut), 100_000_000_000).unwrap();
    rec.check_verilog("mrc_ev_prober", || {
        hw::flow::emit_block("mrc_ev_prober", &mut EvProberSmall::default()).verilog
    });
    let got = got.lock().unwrap();

    // Sweeps: a read of slot 0 after a read of the last slot starts one.
    let last = slots - 1;
    let mut sweeps: Vec<Vec<(u64, usize, u64)>> = vec![Vec::new()];
    let mut prev = None;
    // The scan reads slot 0 in the cycle before the testbench's first
    // (power-up); the testbench answered it GOOD (`read_state`).
    let first = got.reads.first().map_or(0, |r| r.1);
    let warm_up = (0..first).map(|slot| (0, slot, state::GOOD));
    for r in warm_up.chain(got.reads.iter().copied()) {
        assert!(r.1 < slots, "read of slot {} beyond QP {qp_last}", r.1);
        if r.1 == 0 && prev == Some(last) {
            sweeps.push(Vec::new());
        }
        sweeps.last_mut().unwrap().push(r);
        prev = Some(r.1);
    }
    // Pacing: each sweep starts `sweep` cycles after the one before, at
    // the least.
    for w in sweeps.windows(2) {
        let (a, b) = (w[0][0].0, w[1][0].0);
        assert!(b - a >= sweep, "sweeps at cycles {a} and {b}: closer than {sweep}");
    }
    // The reference: per sweep, each slot's last read decides.
    let mut count = vec![0u64; slots];
    let mut want = Vec::new();
    let mut probe_sweeps = vec![Vec::new(); slots];
    let complete = sweeps.len() - 1;
    for (k, sw) in sweeps.iter().enumerate() {
        // Every slot in order, each once or more (a blocked one again at
        // once).
        let mut decided: Vec<(usize, u64)> = Vec::new();
        for &(_, slot, st) in sw {
            match decided.last_mut() {
                Some(d) if d.0 == slot => d.1 = st,
                _ => decided.push((slot, st)),
            }
        }
        if k < complete {
            let order: Vec<usize> = decided.iter().map(|d| d.0).collect();
            assert_eq!(
                order,
                (0..slots).collect::<Vec<_>>(),
                "sweep {k}: every slot once, in order"
            );
        }
        for (slot, st) in decided {
            if st == state::ASSUMED_BAD {
                count[slot] = next_try(count[slot]);
                if probe_due(count[slot]) {
                    want.push(slot);
                    probe_sweeps[slot].push(k as u64);
                }
            } else {
                count[slot] = 0;
            }
        }
    }
    eprintln!(
        "seed {seed}: {} cycles, {} reads, {} sweeps, {} probes (want {})",
        cycles,
        got.reads.len(),
        sweeps.len(),
        got.probes.len(),
        want.len()
    );
    assert_eq!(
        got.cnt_probe,
        got.probes.len(),
        "cnt_probe pulses once per record taken"
    );
    // The last decisions may still be in the output register.
    assert!(want.len() >= got.probes.len() && want.len() - got.probes.len() <= 1);
    assert_eq!(got.probes[..], want[..got.probes.len()], "probe records");
    // Something to see: probes on slots other than the always-bad ones,
    // and back-pressure that blocked a due probe (a slot read twice).
    assert!(want.iter().any(|s| !ALWAYS_BAD.contains(s)));
    assert!(
        got.reads.windows(2).any(|w| w[0].1 == w[1].1),
        "no probe was ever blocked"
    );

    // The backoff against the golden model: an EV marked at time 0 with
    // `probe_interval` one sweep, asked at every sweep.
    let interval = Duration::from_us(100);
    let mut set = EvSet::new(EvSetConfig {
        evs: (0..2).collect(),
        min_active: 0,
        policy: SprayPolicy::RoundRobin,
        probe_interval: interval,
        ..EvSetConfig::default()
    })
    .unwrap();
    set.on_loss(1, Instant::ZERO);
    let mut model_sweeps = Vec::new();
    for k in 1..=complete as u64 {
        let now = Instant::ZERO + interval.saturating_mul(k);
        while let Some(e) = set.probe_due(now) {
            assert_eq!(e, 1);
            model_sweeps.push(k);
        }
    }
    let gaps = |v: &[u64]| v.windows(2).map(|w| w[1] - w[0]).collect::<Vec<_>>();
    for &b in ALWAYS_BAD.iter().filter(|&&b| b < slots) {
        let hw_gaps = gaps(&probe_sweeps[b]);
        let model_gaps = gaps(&model_sweeps);
        let n = hw_gaps.len().min(model_gaps.len());
        assert!(n >= 6, "slot {b}: too few probes to compare the backoff ({n} gaps)");
        assert_eq!(
            hw_gaps[..n],
            model_gaps[..n],
            "slot {b}: probe gaps (sweeps), hardware vs model"
        );
        // The first probe: the second sweep that sees the slot bad (the
        // model's: one interval after the mark).
        assert_eq!(probe_sweeps[b][0], 1, "slot {b}: first probe");
    }
}

/// All 4 QPs, half the cycles ready: about 140 sweeps, so the always-bad
/// slots reach the every-16 part of the backoff.
#[test]
fn scan_backoff_and_back_pressure_all_qps() {
    run(Setup {
        seed: 1,
        cycles: 6000,
        qp_last: 3,
        sweep_cycles: 40,
        ready_pct: 50,
    });
}

/// Three QPs (`qp_last` = 2), a sweep gap longer than the sweep, a slow
/// consumer.
#[test]
fn scan_backoff_three_qps_slow_consumer() {
    run(Setup {
        seed: 0x5eed_0002,
        cycles: 8000,
        qp_last: 2,
        sweep_cycles: 60,
        ready_pct: 20,
    });
}

/// The prober on the real EV selector's scan port, with the readmit
/// closing the loop: the selector of the small instance and the prober
/// joined (scan port to scan port), mark-bads and readmits from the
/// testbench. Two EVs are marked ASSUMED_BAD; the testbench answers each
/// probe (a readmit `ANSWER_DELAY` cycles later) once the EV's path has
/// healed. EV 2 of QP 1 heals at `HEAL_AT`: its first probe after that
/// re-admits it (one ASSUMED_BAD -> GOOD event) and it is probed no more;
/// EV 5 of QP 3 never heals and is probed with the model's gaps to the
/// end. A readmit of the healed EV's probe answered late, after it is
/// GOOD, changes nothing.
#[derive(LogicBlock, Default)]
struct ProberOnSelector {
    pub clock: Signal<In, Clock>,
    pub mark_valid: Signal<In, Bit>,
    pub mark_qp: Signal<In, Bits<2>>,
    pub mark_ev: Signal<In, Bits<3>>,
    pub adm_valid: Signal<In, Bit>,
    pub adm_qp: Signal<In, Bits<2>>,
    pub adm_ev: Signal<In, Bits<3>>,
    pub prb_valid: Signal<Out, Bit>,
    pub prb_ready: Signal<In, Bit>,
    pub prb_qp: Signal<Out, Bits<2>>,
    pub prb_ev: Signal<Out, Bits<3>>,
    pub evt_valid: Signal<Out, Bit>,
    pub evt_qp: Signal<Out, Bits<2>>,
    pub evt_ev: Signal<Out, Bits<3>>,
    pub evt_from: Signal<Out, Bits<2>>,
    pub evt_to: Signal<Out, Bits<2>>,
    sel: hw::ev_selector::EvSelectorSmall,
    prober: EvProberSmall,
}

impl Logic for ProberOnSelector {
    #[hdl_gen]
    fn update(&mut self) {
        self.sel.clock.next = self.clock.val();
        self.prober.clock.next = self.clock.val();
        self.sel.sel_valid.next = false;
        self.sel.sel_qp.next = 0.into();
        self.sel.ctl_valid.next = false;
        self.sel.ctl_allow.next = false;
        self.sel.ctl_qp.next = 0.into();
        self.sel.ctl_mask.next = 0.into();
        self.sel.ctl_value.next = 0.into();
        self.sel.wr_valid.next = false;
        self.sel.wr_set_ptr.next = false;
        self.sel.wr_qp.next = 0.into();
        self.sel.wr_ev.next = 0.into();
        self.sel.wr_value.next = 0.into();
        self.sel.set_valid.next = false;
        self.sel.set_qp.next = 0.into();
        self.sel.set_count.next = 0.into();
        self.sel.set_min.next = 0.into();
        self.sel.mark_valid.next = self.mark_valid.val();
        self.sel.mark_qp.next = self.mark_qp.val();
        self.sel.mark_ev.next = self.mark_ev.val();
        self.sel.mark_timeout.next = false;
        self.sel.mark_skip.next = false;
        self.sel.adm_valid.next = self.adm_valid.val();
        self.sel.adm_qp.next = self.adm_qp.val();
        self.sel.adm_ev.next = self.adm_ev.val();
        self.sel.scan_addr.next = self.prober.scan_addr.val();
        self.prober.scan_state.next = self.sel.scan_state.val();
        self.prober.qp_last.next = 3.into();
        self.prober.sweep_cycles.next = 40.into();
        self.prober.prb_ready.next = self.prb_ready.val();
        self.prb_valid.next = self.prober.prb_valid.val();
        self.prb_qp.next = self.prober.prb_qp.val();
        self.prb_ev.next = self.prober.prb_ev.val();
        self.evt_valid.next = self.sel.evt_valid.val();
        self.evt_qp.next = self.sel.evt_qp.val();
        self.evt_ev.next = self.sel.evt_ev.val();
        self.evt_from.next = self.sel.evt_from.val();
        self.evt_to.next = self.sel.evt_to.val();
    }
}

#[test]
fn probe_answers_readmit_through_the_selector() {
    const HEAL_AT: u64 = 1200;
    const ANSWER_DELAY: u64 = 20;
    const CYCLES: u64 = 5000;
    const HEALS: (usize, usize) = (1, 2);
    const DEAD: (usize, usize) = (3, 5);
    #[derive(Default)]
    struct Seen {
        /// (cycle, qp, ev) of each probe taken.
        probes: Vec<(u64, usize, usize)>,
        /// (cycle, qp, ev, from, to).
        events: Vec<(u64, usize, usize, u64, u64)>,
    }
    let seen = Arc::new(Mutex::new(Seen::default()));
    let s2 = seen.clone();
    let mut uut = ProberOnSelector::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(ProberOnSelector, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut rng = Rng::from_state(7);
        // Answers in flight: (cycle due, qp, ev).
        let mut answers: Vec<(u64, usize, usize)> = Vec::new();
        wait_clock_true!(sim, clock, x);
        for cycle in 0..CYCLES {
            x.mark_valid.next = false;
            x.adm_valid.next = false;
            if cycle == 10 || cycle == 11 {
                let (q, e) = if cycle == 10 { HEALS } else { DEAD };
                x.mark_valid.next = true;
                x.mark_qp.next = (q as u64).into();
                x.mark_ev.next = (e as u64).into();
            } else if let Some(i) = answers.iter().position(|a| a.0 <= cycle) {
                let (_, q, e) = answers.remove(i);
                x.adm_valid.next = true;
                x.adm_qp.next = (q as u64).into();
                x.adm_ev.next = (e as u64).into();
            }
            x.prb_ready.next = rng.below(100) < 60;
            wait_clock_false!(sim, clock, x);
            {
                let mut s = s2.lock().unwrap();
                if x.prb_valid.val() && x.prb_ready.val() {
                    let (q, e) = (x.prb_qp.val().index(), x.prb_ev.val().index());
                    s.probes.push((cycle, q, e));
                    // The healed path answers (and a late second answer
                    // of the same probe, to be ignored).
                    if (q, e) == HEALS && cycle >= HEAL_AT {
                        answers.push((cycle + ANSWER_DELAY, q, e));
                        answers.push((cycle + 3 * ANSWER_DELAY, q, e));
                    }
                }
                if x.evt_valid.val() {
                    s.events.push((
                        cycle,
                        x.evt_qp.val().index(),
                        x.evt_ev.val().index(),
                        x.evt_from.val().index() as u64,
                        x.evt_to.val().index() as u64,
                    ));
                }
            }
            wait_clock_true!(sim, clock, x);
        }
        sim.done(x)
    });
    sim.run(Box::new(uut), 100_000_000_000).unwrap();
    rec.check_verilog("prober_on_selector", || {
        hw::flow::emit_block("prober_on_selector", &mut ProberOnSelector::default()).verilog
    });
    let s = seen.lock().unwrap();
    eprintln!("probes {:?}\nevents {:?}", s.probes, s.events);
    let (bad, good) = (state::ASSUMED_BAD, state::GOOD);
    let ev = |q: usize, e: usize| -> Vec<(usize, usize, u64, u64)> {
        s.events
            .iter()
            .filter(|x| (x.1, x.2) == (q, e))
            .map(|x| (x.1, x.2, x.3, x.4))
            .collect()
    };
    // The healed EV: marked, then re-admitted once by its probe's answer.
    assert_eq!(
        ev(HEALS.0, HEALS.1),
        vec![(HEALS.0, HEALS.1, good, bad), (HEALS.0, HEALS.1, bad, good)]
    );
    let readmit_at = s
        .events
        .iter()
        .find(|x| (x.1, x.2, x.4) == (HEALS.0, HEALS.1, good))
        .unwrap()
        .0;
    let first_after_heal = s
        .probes
        .iter()
        .find(|p| (p.1, p.2) == HEALS && p.0 >= HEAL_AT)
        .expect("a probe after the heal")
        .0;
    assert!(readmit_at > first_after_heal && readmit_at <= first_after_heal + ANSWER_DELAY + 3);
    // Probed before the heal (unanswered), not after the readmit.
    assert!(s.probes.iter().any(|p| (p.1, p.2) == HEALS && p.0 < HEAL_AT));
    assert!(!s.probes.iter().any(|p| (p.1, p.2) == HEALS && p.0 > readmit_at));
    // The dead EV: marked, never re-admitted, probed to the end.
    assert_eq!(ev(DEAD.0, DEAD.1), vec![(DEAD.0, DEAD.1, good, bad)]);
    let dead: Vec<u64> = s.probes.iter().filter(|p| (p.1, p.2) == DEAD).map(|p| p.0).collect();
    assert!(dead.len() >= 6, "the dead EV probed {} times", dead.len());
    // No probe of an EV that was never marked.
    assert!(s.probes.iter().all(|p| (p.1, p.2) == HEALS || (p.1, p.2) == DEAD));
}
