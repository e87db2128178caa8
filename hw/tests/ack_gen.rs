//! ACK/SACK/NACK generator against the golden model's responder
//! (`proto::model::legacy_mrc::LegacyMrcQp`, docs/model-mrc.md 3.3-3.4): four QPs, each
//! a real requester `LegacyMrcQp` whose data packets are delivered reordered,
//! duplicated, trimmed, out of window, with bad rkeys and ECN marks, to a
//! responder `LegacyMrcQp` and (as the records the SACK table and placement
//! check would produce) to the block, in the same order at the same
//! cycle. Every SACK/NACK the model transmits must come out of the block
//! with the same fields, in the same per-QP order; a block SACK the model
//! has not sent yet must be its coalescing timer (the model's deadline has
//! passed; `handle_timeout` then yields the same SACK). Random stalls on
//! the record, snapshot and TX handshakes.

mod common;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use common::*;
use contract::config::{ack_params, recv_init, table, Row};
use hw::ack_gen::{kind, AckGen};
use hw::contract_rows::row_bits;
use proto::model::legacy_mrc::LegacyMrcQp;
use proto::model::QueuePair;
use proto::time::Instant;
use proto::wire::{MrcExtRepr, Packet, RocePacket, Syndrome};
use proto::Psn;
use rust_hdl::prelude::*;

use tb::stall::Stall;
use tb::{lockstep, lockstep_sim};

/// The record input's pauses and the outputs' back-pressure.
const PAUSE: Stall = Stall::go_percent(75);
const SNAP_BACKPRESSURE: Stall = Stall::go_percent(60);
const TX_BACKPRESSURE: Stall = Stall::go_percent(70);

/// The parameters row (table 4) as the driver encodes it.
fn params_row(every: u64, delay: u64) -> Row {
    Row::new().set(ack_params::EVERY, every).set(ack_params::DELAY, delay)
}

const QP_IDS: [usize; 4] = [0, 1, 77, 255];
const STARTS: [u32; 4] = [0xFF_FFA0, 100, 0x12_3456, 0];
const ACK_EVERY: u16 = 4;
const ACK_DELAY: u64 = 150;
/// How late (cycles) the block's timer SACK may be after the model's
/// deadline: the scanner visits the 256 QPs in idle cycles.
const TIMER_SLACK: u64 = 1500;

/// A TX request as compared (the block's ports, or the model's packet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tx {
    kind: u8,
    psn: u32,
    cum: u32,
    msn: u32,
    nack_kind: u8,
    code: u8,
    base: u32,
    bitmap: u64,
    ecn: u16,
    ev: u32,
    ev_index: u16,
    echo_ts: u32,
    /// SACK: when its trigger arrived, ns (the model's: `now` when it
    /// sends the SACK minus its `service_ns`); NACK: 0.
    arrival: u64,
    /// SACK: its trigger's PSN (`tx_trigger_psn`: the last new or
    /// duplicate data packet of the QP, the model's `Trigger::psn`); NACK: 0.
    trigger: u32,
}

/// The harnesses drive `now_ns` as the cycle count (the model's `now` in
/// ns is the cycle too), and the block stamps a record with it when it
/// takes it, as the model's trigger arrives when it handles the packet:
/// a SACK's arrival is its `tx_arrival_ns`; a NACK has none (0).
fn arrival_of(kind: u8, tx_arrival_ns: u64) -> u64 {
    if kind == kind::SACK {
        tx_arrival_ns
    } else {
        0
    }
}

/// The trigger PSN a TX request of `kind` is compared with (a NACK has
/// none: 0).
fn trigger_of(kind: u8, tx_trigger_psn: u32) -> u32 {
    if kind == kind::SACK {
        tx_trigger_psn
    } else {
        0
    }
}

/// The model's TX packet `p` as a TX request; a SACK's trigger (which the
/// legacy SACK does not carry) is `trigger`, the test's own record of it.
fn from_model(p: &RocePacket, now: Instant, trigger: u32) -> Tx {
    let aeth = p.aeth.unwrap();
    let mut t = Tx {
        kind: 0,
        psn: p.bth.psn.value(),
        cum: 0,
        msn: aeth.msn,
        nack_kind: 0,
        code: 0,
        base: 0,
        bitmap: 0,
        ecn: 0,
        ev: p.ev,
        ev_index: 0,
        echo_ts: 0,
        arrival: 0,
        trigger: 0,
    };
    match (aeth.syndrome, p.ext) {
        (Syndrome::Ack { .. }, Some(MrcExtRepr::Sack(s))) => {
            t.kind = kind::SACK;
            t.cum = p.bth.psn.value();
            t.base = s.base.value();
            t.bitmap = s.bitmap.words[0];
            t.ecn = s.ecn_ce_count;
            t.ev_index = s.ev_index;
            t.echo_ts = s.echo_ts;
            t.arrival = now.as_ns() - u64::from(s.service_ns);
            t.trigger = trigger;
        }
        (Syndrome::Nak { code }, Some(MrcExtRepr::Nack(n))) => {
            t.kind = kind::NACK;
            t.code = code;
            t.nack_kind = n.kind as u8;
            t.cum = n.cum_psn.value();
            t.ev_index = n.ev_index;
            t.echo_ts = n.echo_ts;
        }
        other => panic!("unexpected model output {other:?}"),
    }
    t
}

/// One record for the block: the packet plus what upstream decided.
#[derive(Clone)]
struct Rec {
    k: usize,
    pkt: RocePacket,
    fate: Fate,
    expected: u32,
    msn: u32,
}

#[derive(Default, Debug)]
struct Stats {
    sacks: usize,
    timer_sacks: usize,
    nacks: [usize; 4],
    shifted_base: usize,
    ecn_sacks: usize,
    max_timer_late: u64,
    records: usize,
    cycles: u64,
}

fn build_records(seed: u64, per_qp: usize) -> Vec<Rec> {
    let mut r = Rng::from_state(seed);
    let mut streams: Vec<VecDeque<RocePacket>> = Vec::new();
    for (k, &s) in STARTS.iter().enumerate() {
        let (mut a, _) = pair(QP_IDS[k] as u32 + 1, s, ACK_EVERY, ACK_DELAY);
        let pk = requester_packets(&mut a, &mut r, per_qp);
        let p = Perturb {
            dup: 5,
            trim: 3,
            oow: 3,
            bad_rkey: 3,
            ecn: 15,
            swap: 20,
            jump: 3,
            late: 2,
        };
        streams.push(arrivals(&pk, &mut r, &p).into());
    }
    let mut mirrors: Vec<Mirror> = STARTS.iter().map(|&s| Mirror::new(s)).collect();
    let mut out = Vec::new();
    // Interleave the QPs in random runs (a run keeps one QP busy so that
    // same-QP stalls occur).
    while streams.iter().any(|s| !s.is_empty()) {
        let k = r.below(4) as usize;
        for _ in 0..1 + r.below(4) {
            if let Some(pkt) = streams[k].pop_front() {
                let fate = mirrors[k].arrive(&pkt);
                out.push(Rec {
                    k,
                    pkt,
                    fate,
                    expected: mirrors[k].expected.value(),
                    msn: mirrors[k].msn,
                });
            }
        }
    }
    out
}

fn run(seed: u64, per_qp: usize) -> Stats {
    let recs = build_records(seed, per_qp);
    let n_recs = recs.len();
    let stats = Arc::new(Mutex::new(Stats::default()));
    let st2 = stats.clone();
    let mut uut = AckGen::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(AckGen, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        // The model and the mirrors live in this closure's thread.
        let models: Rc<RefCell<Vec<LegacyMrcQp>>> = Rc::new(RefCell::new(
            STARTS
                .iter()
                .enumerate()
                .map(|(k, &s)| pair(QP_IDS[k] as u32 + 1, s, ACK_EVERY, ACK_DELAY).1)
                .collect(),
        ));
        let mut mirrors: Vec<Mirror> = STARTS.iter().map(|&s| Mirror::new(s)).collect();
        let mut want: Vec<VecDeque<Tx>> = vec![VecDeque::new(); 4];
        // Each QP's SACK trigger: its last new or duplicate packet.
        let mut triggers = [0u32; 4];
        let mut r = Rng::from_state(seed ^ 0x51AC);
        let mut snap_pipe: VecDeque<(u64, u64)> = VecDeque::new();
        let mut i = 0usize;
        let mut cycle = 0u64;
        let mut quiet = 0u64;
        let mut presented = false;
        wait_clock_true!(sim, clock, x);
        // Parameters and QP init through the config port.
        let mut cfgs: Vec<(u8, u16, Row)> = vec![(table::ACK_PARAMS, 0, params_row(u64::from(ACK_EVERY), ACK_DELAY))];
        for (k, &s) in STARTS.iter().enumerate() {
            cfgs.push((
                table::ACK_QP_INIT,
                QP_IDS[k] as u16,
                Row::new().set(recv_init::START_PSN, u64::from(s)),
            ));
        }
        for (t, idx, d) in cfgs {
            x.cfg.valid.next = true;
            x.cfg.table.next = u64::from(t).into();
            x.cfg.index.next = u64::from(idx).into();
            x.cfg.data.next = row_bits(&d);
            wait_clock_cycle!(sim, clock, x);
        }
        x.cfg.valid.next = false;
        wait_clock_cycle!(sim, clock, x);
        let mut st = Stats::default();
        let mut idle_end = 0u64;
        loop {
            let now = Instant::from_ns(cycle);
            let done = i >= n_recs && want.iter().all(|w| w.is_empty()) && snap_pipe.is_empty();
            if done {
                // Wait until every model deadline has been served.
                let pending = models.borrow().iter().any(|m| m.poll_timeout().is_some());
                if !pending {
                    idle_end += 1;
                    if idle_end > 20 {
                        break;
                    }
                }
            }
            assert!(cycle < 200_000, "ran away");
            // Present a record (valid held until taken), with idle gaps
            // and now and then a quiet stretch for the timers.
            if !presented && i < n_recs {
                if quiet > 0 {
                    quiet -= 1;
                } else if r.chance(3) {
                    quiet = 100 + r.below(300);
                } else if PAUSE.go(&mut r) {
                    presented = true;
                }
            }
            if presented {
                let rc = &recs[i];
                let p = &rc.pkt;
                let d = match p.ext {
                    Some(MrcExtRepr::Data(d)) => d,
                    _ => unreachable!(),
                };
                x.in_valid.next = true;
                x.in_qp.next = (QP_IDS[rc.k] as u64).into();
                x.in_psn.next = u64::from(p.bth.psn.value()).into();
                x.in_verdict.next = match rc.fate {
                    Fate::Duplicate => 2u64,
                    Fate::OutOfWindow => 3,
                    _ => 1,
                }
                .into();
                x.in_ack_req.next = p.bth.ack_req;
                x.in_trimmed.next = p.trimmed;
                x.in_ecn_ce.next = p.ecn_ce;
                x.in_reject.next = rc.fate == Fate::Rejected;
                x.in_drop.next = false;
                x.in_expected.next = u64::from(rc.expected).into();
                // The RX path sends an MSN only with a new packet (only
                // one can advance the expected PSN); the others carry
                // none, and a value the block must not take.
                let new = rc.fate == Fate::New;
                x.in_msn_valid.next = new;
                x.in_msn.next = u64::from(if new { rc.msn } else { !rc.msn & 0xFF_FFFF }).into();
                x.in_ev.next = u64::from(p.ev).into();
                x.in_ev_index.next = u64::from(d.ev_index).into();
                x.in_echo_ts.next = u64::from(d.tx_ts).into();
            } else {
                x.in_valid.next = false;
            }
            x.now_ns.next = (cycle & 0xFFFF_FFFF).into();
            let snap_ready = SNAP_BACKPRESSURE.go(&mut r);
            let tx_ready = TX_BACKPRESSURE.go(&mut r);
            x.snap_ready.next = snap_ready;
            x.tx_ready.next = tx_ready;
            // Snapshot answers, 3 cycles after the request.
            x.snap_out_valid.next = false;
            if snap_pipe.front().is_some_and(|s| s.0 == cycle) {
                let (_, bm) = snap_pipe.pop_front().unwrap();
                x.snap_out_valid.next = true;
                x.snap_bitmap.next = bm.into();
            }
            wait_clock_false!(sim, clock, x);
            let taken = presented && x.in_ready.val();
            let snap_taken = x.snap_valid.val() && snap_ready;
            let snap_req = (x.snap_qp.val().index(), x.snap_base.val().index() as u32);
            let tx = if x.tx_valid.val() && tx_ready {
                Some((
                    x.tx_qp.val().index(),
                    Tx {
                        kind: x.tx_kind.val().index() as u8,
                        psn: x.tx_psn.val().index() as u32,
                        cum: x.tx_cum.val().index() as u32,
                        msn: x.tx_msn.val().index() as u32,
                        nack_kind: x.tx_nack_kind.val().index() as u8,
                        code: x.tx_nak_code.val().index() as u8,
                        base: x.tx_base.val().index() as u32,
                        bitmap: v64(x.tx_bitmap.val()),
                        ecn: x.tx_ecn_count.val().index() as u16,
                        ev: x.tx_ev.val().index() as u32,
                        ev_index: x.tx_ev_index.val().index() as u16,
                        echo_ts: x.tx_echo_ts.val().index() as u32,
                        arrival: arrival_of(x.tx_kind.val().index() as u8, x.tx_arrival_ns.val().index() as u64),
                        trigger: trigger_of(x.tx_kind.val().index() as u8, x.tx_trigger_psn.val().index() as u32),
                    },
                ))
            } else {
                None
            };
            wait_clock_true!(sim, clock, x);
            let mut m = models.borrow_mut();
            if taken {
                // The model gets the packet at the cycle the block takes it.
                let rc = &recs[i];
                let res = m[rc.k].handle_packet(now, rc.pkt.clone().into());
                let fate = mirrors[rc.k].arrive(&rc.pkt);
                assert_eq!(fate, rc.fate);
                if matches!(fate, Fate::New | Fate::Duplicate) {
                    triggers[rc.k] = rc.pkt.bth.psn.value();
                }
                match fate {
                    Fate::OutOfWindow => assert!(res.is_err()),
                    Fate::Rejected => assert!(res.is_err()),
                    _ => assert!(res.is_ok(), "{res:?}"),
                }
                assert_eq!(
                    m[rc.k].expected_psn().map(|p| p.value()),
                    Some(rc.expected),
                    "mirror agrees with the model"
                );
                while let Some(p) = m[rc.k].poll_transmit(now).and_then(Packet::into_roce) {
                    want[rc.k].push_back(from_model(&p, now, triggers[rc.k]));
                }
                i += 1;
                st.records += 1;
                presented = false;
            }
            if snap_taken {
                let k = QP_IDS
                    .iter()
                    .position(|&q| q == snap_req.0)
                    .expect("snapshot for a known QP");
                snap_pipe.push_back((cycle + 3, mirrors[k].bitmap(Psn::new(snap_req.1))));
            }
            if let Some((q, got)) = tx {
                let k = QP_IDS.iter().position(|&x| x == q).expect("TX for a known QP");
                let w = match want[k].pop_front() {
                    Some(w) => w,
                    None => {
                        // Must be the coalescing timer.
                        let d = m[k]
                            .poll_timeout()
                            .unwrap_or_else(|| panic!("cycle {cycle}: unexpected TX {got:?}"));
                        assert!(d <= now, "cycle {cycle}: timer SACK before the model's deadline {d:?}");
                        st.max_timer_late = st.max_timer_late.max(now.as_ns() - d.as_ns());
                        m[k].handle_timeout(now);
                        let p = m[k]
                            .poll_transmit(now)
                            .and_then(Packet::into_roce)
                            .expect("model SACK on its timer");
                        assert!(m[k].poll_transmit(now).and_then(Packet::into_roce).is_none());
                        st.timer_sacks += 1;
                        from_model(&p, now, triggers[k])
                    }
                };
                assert_eq!(got, w, "cycle {cycle} QP {q}");
                if w.kind == kind::SACK {
                    st.sacks += 1;
                    st.shifted_base += usize::from(w.base != w.cum.wrapping_add(1) & 0xFF_FFFF);
                    st.ecn_sacks += usize::from(w.ecn > 0);
                } else {
                    st.nacks[w.nack_kind as usize] += 1;
                }
            }
            // No model deadline may be missed by more than the slack.
            for (k, mq) in m.iter().enumerate() {
                if let Some(d) = mq.poll_timeout() {
                    assert!(
                        now.as_ns() < d.as_ns() + TIMER_SLACK,
                        "cycle {cycle}: QP {} timer missed (deadline {d:?})",
                        QP_IDS[k]
                    );
                }
            }
            cycle += 1;
        }
        st.cycles = cycle;
        *st2.lock().unwrap() = st;
        sim.done(x)
    });
    let t = std::time::Instant::now();
    sim.run(Box::new(uut), 100_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_ack_gen", || {
        hw::flow::emit_block("mrc_ack_gen", &mut AckGen::default()).verilog
    });
    let st = std::mem::take(&mut *stats.lock().unwrap());
    eprintln!("{st:?} simulated in {:?}", t.elapsed());
    st
}

#[test]
fn ack_gen_matches_model_responder() {
    let seed = std::env::var("ACK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0xACC_0001);
    let st = run(seed, 120);
    // Coverage: every output kind and the interesting fields occurred.
    assert!(st.sacks >= 40, "{st:?}");
    assert!(st.timer_sacks >= 5, "{st:?}");
    assert!(st.nacks[1] >= 2 && st.nacks[2] >= 2 && st.nacks[3] >= 2, "{st:?}");
    assert!(st.shifted_base >= 1, "{st:?}");
    assert!(st.ecn_sacks >= 5, "{st:?}");
}

/// Records that produce no ACK are taken one per cycle across QPs; two of
/// the same QP back to back are 2 cycles apart (the same-QP stall).
#[test]
fn one_record_per_cycle_across_qps() {
    let taken = Arc::new(Mutex::new(Vec::<(u64, usize)>::new()));
    let t2 = taken.clone();
    let mut uut = AckGen::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(AckGen, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        // ack_every 1000 and a far deadline: new in-order packets only
        // update the coalescing state.
        let mut cfgs: Vec<(u8, u16, Row)> = vec![(table::ACK_PARAMS, 0, params_row(1000, 30_000))];
        for (k, &s) in STARTS.iter().enumerate() {
            cfgs.push((
                table::ACK_QP_INIT,
                QP_IDS[k] as u16,
                Row::new().set(recv_init::START_PSN, u64::from(s)),
            ));
        }
        for (t, idx, d) in cfgs {
            x.cfg.valid.next = true;
            x.cfg.table.next = u64::from(t).into();
            x.cfg.index.next = u64::from(idx).into();
            x.cfg.data.next = row_bits(&d);
            wait_clock_cycle!(sim, clock, x);
        }
        x.cfg.valid.next = false;
        wait_clock_cycle!(sim, clock, x);
        // 200 round robin over the 4 QPs, then 20 of QP 77.
        let mut seq: Vec<usize> = (0..200).map(|j| j % 4).collect();
        seq.extend(std::iter::repeat_n(2, 20));
        let mut next: Vec<Psn> = STARTS.iter().map(|&s| Psn::new(s)).collect();
        let mut i = 0;
        let mut cycle = 0u64;
        x.tx_ready.next = true;
        while i < seq.len() {
            let k = seq[i];
            x.in_valid.next = true;
            x.in_qp.next = (QP_IDS[k] as u64).into();
            x.in_psn.next = u64::from(next[k].value()).into();
            x.in_verdict.next = 1u64.into();
            x.in_expected.next = u64::from(next[k].next().value()).into();
            wait_clock_false!(sim, clock, x);
            let ok = x.in_ready.val();
            assert!(!x.tx_valid.val() && !x.snap_valid.val(), "no ACK is due");
            wait_clock_true!(sim, clock, x);
            if ok {
                t2.lock().unwrap().push((cycle, k));
                next[k] = next[k].next();
                i += 1;
            }
            cycle += 1;
        }
        x.in_valid.next = false;
        wait_clock_cycle!(sim, clock, x);
        sim.done(x)
    });
    sim.run(Box::new(uut), 100_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_ack_gen", || {
        hw::flow::emit_block("mrc_ack_gen", &mut AckGen::default()).verilog
    });
    let t = taken.lock().unwrap();
    assert_eq!(t[199].0 - t[0].0, 199, "round robin: one per cycle");
    assert!(
        t[200..].windows(2).all(|w| w[1].0 - w[0].0 == 2),
        "same QP: every 2 cycles"
    );
}

/// A record on the block's input in [`probe_answers_leave_the_coalescing_alone`].
#[derive(Clone, Copy)]
struct In {
    probe: bool,
    /// A legacy probe (`in_probe_legacy`) and its id (`in_probe_id`).
    legacy: bool,
    probe_id: u64,
    psn: u32,
    verdict: u64,
    ecn: bool,
    expected: u32,
    msn: u32,
    ev: u64,
    ev_index: u64,
    echo: u64,
}

/// A TX request seen by [`run_directed`]: the cycle it was taken, the
/// probe flag, the fields, and the legacy probe flag and id.
type SeenTx = (u64, bool, Tx, bool, u32);

/// Run the block on QP `qp` with the config rows `cfgs`, then `schedule`
/// (the cycle to present each record from, the record), until cycle
/// `end`, with no back-pressure and snapshot answers 3 cycles after each
/// request (a bitmap made from the base); replayed on the Verilog. The
/// TX requests seen.
fn run_directed(qp: usize, cfgs: Vec<(u8, u16, Row)>, schedule: Vec<(u64, In)>, end: u64) -> Vec<SeenTx> {
    let seen = Arc::new(Mutex::new(Vec::<SeenTx>::new()));
    let seen2 = seen.clone();
    let mut uut = AckGen::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(AckGen, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        for (t, idx, d) in cfgs.iter().cloned() {
            x.cfg.valid.next = true;
            x.cfg.table.next = u64::from(t).into();
            x.cfg.index.next = u64::from(idx).into();
            x.cfg.data.next = row_bits(&d);
            wait_clock_cycle!(sim, clock, x);
        }
        x.cfg.valid.next = false;
        wait_clock_cycle!(sim, clock, x);
        x.snap_ready.next = true;
        x.tx_ready.next = true;
        let mut i = 0;
        let mut snap_pipe: VecDeque<(u64, u64)> = VecDeque::new();
        for cycle in 0..end {
            x.now_ns.next = (cycle & 0xFFFF_FFFF).into();
            let present = i < schedule.len() && schedule[i].0 <= cycle;
            x.in_valid.next = present;
            if present {
                let r = schedule[i].1;
                x.in_qp.next = (qp as u64).into();
                x.in_probe.next = r.probe;
                x.in_probe_legacy.next = r.legacy;
                x.in_probe_id.next = r.probe_id.into();
                x.in_psn.next = u64::from(r.psn).into();
                x.in_verdict.next = r.verdict.into();
                x.in_ack_req.next = false;
                x.in_trimmed.next = false;
                x.in_ecn_ce.next = r.ecn;
                x.in_reject.next = false;
                x.in_drop.next = false;
                x.in_expected.next = u64::from(r.expected).into();
                x.in_msn.next = u64::from(r.msn).into();
                x.in_msn_valid.next = !r.probe;
                x.in_ev.next = r.ev.into();
                x.in_ev_index.next = r.ev_index.into();
                x.in_echo_ts.next = r.echo.into();
            }
            // Snapshot answers, 3 cycles after the request: a bitmap
            // made from the base, so the test can tell it came through.
            x.snap_out_valid.next = false;
            if snap_pipe.front().is_some_and(|s| s.0 == cycle) {
                let (_, bm) = snap_pipe.pop_front().unwrap();
                x.snap_out_valid.next = true;
                x.snap_bitmap.next = bm.into();
            }
            wait_clock_false!(sim, clock, x);
            if present && x.in_ready.val() {
                i += 1;
            }
            if x.snap_valid.val() {
                assert_eq!(x.snap_qp.val().index(), qp, "snapshot of QP {qp}");
                snap_pipe.push_back((cycle + 3, 0x5A5A_0000_0000_0000 ^ x.snap_base.val().index() as u64));
            }
            if x.tx_valid.val() {
                assert_eq!(x.tx_qp.val().index(), qp);
                seen2.lock().unwrap().push((
                    cycle,
                    x.tx_probe.val(),
                    Tx {
                        kind: x.tx_kind.val().index() as u8,
                        psn: x.tx_psn.val().index() as u32,
                        cum: x.tx_cum.val().index() as u32,
                        msn: x.tx_msn.val().index() as u32,
                        nack_kind: x.tx_nack_kind.val().index() as u8,
                        code: x.tx_nak_code.val().index() as u8,
                        base: x.tx_base.val().index() as u32,
                        bitmap: v64(x.tx_bitmap.val()),
                        ecn: x.tx_ecn_count.val().index() as u16,
                        ev: x.tx_ev.val().index() as u32,
                        ev_index: x.tx_ev_index.val().index() as u16,
                        echo_ts: x.tx_echo_ts.val().index() as u32,
                        arrival: arrival_of(x.tx_kind.val().index() as u8, x.tx_arrival_ns.val().index() as u64),
                        trigger: trigger_of(x.tx_kind.val().index() as u8, x.tx_trigger_psn.val().index() as u32),
                    },
                    x.tx_probe_legacy.val(),
                    x.tx_probe_id.val().index() as u32,
                ));
            }
            wait_clock_true!(sim, clock, x);
        }
        assert_eq!(i, schedule.len(), "every record taken");
        sim.done(x)
    });
    sim.run(Box::new(uut), 100_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_ack_gen", || {
        hw::flow::emit_block("mrc_ack_gen", &mut AckGen::default()).verilog
    });
    let seen = seen.lock().unwrap().clone();
    seen
}

/// A new data packet `start + k` of QP records placed in order (the
/// expected PSN after it), with message number `msn`, EV 0x1111 (index
/// 5) and an echo that names it.
fn new_packet(start: u32, msn: u32, k: u32, ecn: bool) -> In {
    In {
        probe: false,
        legacy: false,
        probe_id: 0,
        psn: start + k,
        verdict: 1,
        ecn,
        expected: start + k + 1,
        msn,
        ev: 0x1111,
        ev_index: 5,
        echo: 0xAAAA_0000 + u64::from(k),
    }
}

/// An MRC 1.0 probe record on EV 0x2222 with probe id `id` (`ev_index`)
/// and timestamp `ts`, nonsense where a probe record's fields are not
/// read.
fn probe_record(id: u64, ts: u64) -> In {
    In {
        probe: true,
        legacy: false,
        probe_id: 0,
        psn: 0xBAD,
        verdict: 3,
        ecn: true,
        expected: 0x77_7777,
        msn: 0xDEAD,
        ev: 0x2222,
        ev_index: id,
        echo: ts,
    }
}

/// MRC 1.0 reliability probes (`in_probe`, as the golden QP's
/// `handle_probe` / `build_sack` with a probe): a probe record of QP 77
/// whose other fields are nonsense is answered at once with a SACK of the
/// stored receive state (cumulative PSN and base from the expected PSN,
/// the MSN, the ECN count, which it clears) carrying the probe's EV, id
/// and timestamp, `tx_probe` high; the coalescing goes on as if no probe
/// had come: with `ack_every` 5, the fifth new packet after the last SACK
/// is SACKed at once although a probe came after the third (the unacked
/// count survived), and a deadline armed before a probe still fires, with
/// the stored trigger's fields and no ECN count (the probe answer took
/// it). Replayed on the Verilog.
#[test]
fn probe_answers_leave_the_coalescing_alone() {
    const QP: usize = 77;
    const START: u32 = 0x12_3456;
    const DELAY: u64 = 400;
    const MSN: u32 = 7;
    let data = |k: u32, ecn: bool| new_packet(START, MSN, k, ecn);
    // A new packet beyond a hole: the expected PSN stays after PSN 5.
    let ahead = |k: u32| In {
        expected: START + 6,
        ..data(k, false)
    };
    let probe = probe_record;
    // (cycle to present it from, record).
    let schedule = [
        (0, data(0, false)),
        (1, data(1, true)),
        (2, data(2, false)),
        (10, probe(0xBEEF, 0x1234)),
        (40, data(3, false)),
        (41, data(4, false)),
        (80, data(5, true)),
        (90, probe(0x8001, 0xFFFF)),
        // PSN 70 opens a gap (SACKed at once, the bitmap ending at it);
        // a probe with nothing unacked: the same base; PSN 71 (unacked,
        // deadline armed); a probe now starts at the expected PSN, as the
        // model's answer while packets are unreported.
        (750, ahead(70)),
        (800, probe(0x0101, 0x0202)),
        (820, ahead(71)),
        (830, probe(0x0303, 0x0404)),
    ];
    let end = 820 + DELAY + 400;
    let cfgs = vec![
        (table::ACK_PARAMS, 0, params_row(5, DELAY)),
        (
            table::ACK_QP_INIT,
            QP as u16,
            Row::new().set(recv_init::START_PSN, u64::from(START)),
        ),
    ];
    let seen = run_directed(QP, cfgs, schedule.to_vec(), end);
    // A SACK of the state after PSN `START + k`, as the block sends it.
    let sack_at = |k: u32, base: u32, ecn: u16, ev: u32, ev_index: u16, echo_ts: u32| {
        let cum = START + k;
        Tx {
            kind: kind::SACK,
            psn: cum,
            cum,
            msn: MSN,
            nack_kind: 0,
            code: 0,
            base,
            bitmap: 0x5A5A_0000_0000_0000 ^ u64::from(base),
            ecn,
            ev,
            ev_index,
            echo_ts,
            arrival: 0,
            trigger: 0,
        }
    };
    let sack =
        |k: u32, ecn: u16, ev: u32, ev_index: u16, echo_ts: u32| sack_at(k, START + k + 1, ecn, ev, ev_index, echo_ts);
    // The arrivals depend on the take cycles, and a probe answer's
    // trigger field means nothing: both checked below.
    let got: Vec<(bool, Tx)> = seen
        .iter()
        .map(|s| {
            (
                s.1,
                Tx {
                    arrival: 0,
                    trigger: 0,
                    ..s.2
                },
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            // The first probe: the state after PSN 2, one CE mark.
            (true, sack(2, 1, 0x2222, 0xBEEF, 0x1234)),
            // The fifth new packet: SACKed at once, its own fields, the
            // CE count cleared by the probe answer.
            (false, sack(4, 0, 0x1111, 5, 0xAAAA_0004)),
            // The second probe: after PSN 5, its CE mark.
            (true, sack(5, 1, 0x2222, 0x8001, 0xFFFF)),
            // PSN 5's deadline: the timer SACK, the trigger's fields.
            (false, sack(5, 0, 0x1111, 5, 0xAAAA_0005)),
            // PSN 70's gap SACK: the bitmap ends at it.
            (false, sack_at(5, START + 7, 0, 0x1111, 5, 0xAAAA_0046)),
            (true, sack_at(5, START + 7, 0, 0x2222, 0x0101, 0x0202)),
            // PSN 71 unacked: the probe answer starts at the expected PSN.
            (true, sack_at(5, START + 6, 0, 0x2222, 0x0303, 0x0404)),
            // PSN 71's deadline: its timer SACK ends at it.
            (false, sack_at(5, START + 8, 0, 0x1111, 5, 0xAAAA_0047)),
        ],
        "TX requests (probe flag, fields)"
    );
    // The timer SACK came at PSN 5's deadline, not before (its record
    // was taken at cycle 80 or a cycle later).
    let timer_at = seen[3].0;
    assert!(
        (80 + DELAY..80 + DELAY + 300).contains(&timer_at),
        "timer SACK at cycle {timer_at}"
    );
    // Its trigger's arrival is the cycle PSN 5 was taken, kept through the
    // coalescing delay: the SACK reports at least that delay as held.
    let arrival = seen[3].2.arrival;
    assert!((80..90).contains(&arrival), "PSN 5's arrival {arrival}");
    assert!(timer_at - arrival >= DELAY, "held {} cycles", timer_at - arrival);
    // A SACK sent at once reports its trigger taken a few cycles before.
    let at_once = seen[1];
    assert!(
        at_once.0 - at_once.2.arrival < 10,
        "held {} cycles",
        at_once.0 - at_once.2.arrival
    );
    let timer_at = seen[7].0;
    assert!(
        (820 + DELAY..820 + DELAY + 300).contains(&timer_at),
        "second timer SACK at cycle {timer_at}"
    );
    // Each data SACK's trigger is the packet its echo names (PSN `START +
    // k` carries echo 0xAAAA_0000 + k): PSN 4 at once, 5 and 71 kept for
    // their timers, 70 for its gap.
    let triggers: Vec<u32> = seen.iter().filter(|s| !s.1).map(|s| s.2.trigger).collect();
    assert_eq!(triggers, vec![START + 4, START + 5, START + 70, START + 71]);
}

/// A legacy reliability probe (`in_probe_legacy`, as the legacy model's
/// `handle_ack` answers one): answered at once from the stored receive
/// state with the probe's EV, EV index, id and timestamp, `tx_probe` and
/// `tx_probe_legacy` high; unlike an MRC 1.0 probe's answer it takes no
/// ECN count, so the CE mark before it is still reported by the timer
/// SACK after it. Replayed on the Verilog. Fails if the legacy answer
/// clears the count as the MRC 1.0 one does.
#[test]
fn legacy_probe_answers_keep_the_ecn_count() {
    const QP: usize = 9;
    const START: u32 = 0x40;
    const DELAY: u64 = 300;
    const MSN: u32 = 2;
    let data = |k: u32, ecn: bool| new_packet(START, MSN, k, ecn);
    let probe = In {
        legacy: true,
        probe_id: 0xCAFE_BABE,
        ..probe_record(3, 0x1234_5678)
    };
    let schedule = vec![
        (0, data(0, false)),
        (1, data(1, true)),
        (10, probe),
        (20, data(2, false)),
    ];
    let cfgs = vec![
        (table::ACK_PARAMS, 0, params_row(5, DELAY)),
        (
            table::ACK_QP_INIT,
            QP as u16,
            Row::new().set(recv_init::START_PSN, u64::from(START)),
        ),
    ];
    let seen = run_directed(QP, cfgs, schedule, 20 + DELAY + 300);
    assert_eq!(seen.len(), 2, "the probe's answer and the timer SACK: {seen:?}");
    let (_, probe_flag, answer, legacy, id) = seen[0];
    assert!(probe_flag && legacy, "a legacy probe answer first");
    assert_eq!(
        (answer.kind, answer.cum, answer.ev, answer.ev_index, answer.echo_ts, id),
        (kind::SACK, START + 1, 0x2222, 3, 0x1234_5678, 0xCAFE_BABE),
        "the state after PSN 1, the probe's EV, EV index, timestamp and id"
    );
    let (_, probe_flag, timer, legacy, _) = seen[1];
    assert!(!probe_flag && !legacy, "then the timer SACK");
    assert_eq!(
        (timer.cum, timer.ecn),
        (START + 2, 1),
        "the CE mark before the probe, still counted"
    );
}

/// A CE-marked packet on a card sending MRC 1.0 (its own address row's
/// `wire_mrc10`, snooped from the config port) is SACKed at once, as the
/// MRC 1.0 model acknowledges one (`mrc10::choices::sack_at_once_for`);
/// on a legacy card it is coalesced (the legacy model's rule) and waits
/// for the deadline. `ack_every` 5: neither run reaches it.
#[test]
fn an_mrc10_card_acknowledges_a_ce_mark_at_once() {
    const QP: usize = 1;
    const START: u32 = 1000;
    const DELAY: u64 = 300;
    const MSN: u32 = 3;
    let data = |k: u32, ecn: bool| new_packet(START, MSN, k, ecn);
    let schedule = vec![(0, data(0, false)), (1, data(1, true)), (2, data(2, false))];
    let run = |mrc10: bool| {
        let cfgs = vec![
            (table::ACK_PARAMS, 0, params_row(5, DELAY)),
            (
                table::ADDR,
                contract::config::INDEX_SELECT,
                Row::new().set(contract::config::addr::WIRE_MRC10, u64::from(mrc10)),
            ),
            (
                table::ACK_QP_INIT,
                QP as u16,
                Row::new().set(recv_init::START_PSN, u64::from(START)),
            ),
        ];
        run_directed(QP, cfgs, schedule.clone(), DELAY + 600)
    };
    // (cycle, cumulative PSN, CE count) of each SACK.
    let sacks = |seen: Vec<SeenTx>| -> Vec<(u64, u32, u16)> { seen.iter().map(|s| (s.0, s.2.cum, s.2.ecn)).collect() };
    let mrc10 = sacks(run(true));
    assert_eq!(mrc10.len(), 2, "{mrc10:?}");
    assert!(mrc10[0].0 < 20, "the mark is SACKed at once: {mrc10:?}");
    assert_eq!((mrc10[0].1, mrc10[0].2), (START + 1, 1), "{mrc10:?}");
    assert!(mrc10[1].0 >= DELAY, "PSN 2 waits for its deadline: {mrc10:?}");
    assert_eq!((mrc10[1].1, mrc10[1].2), (START + 2, 0), "{mrc10:?}");
    let legacy = sacks(run(false));
    assert_eq!(legacy.len(), 1, "{legacy:?}");
    assert!(legacy[0].0 >= DELAY, "coalesced until the deadline: {legacy:?}");
    assert_eq!((legacy[0].1, legacy[0].2), (START + 2, 1), "{legacy:?}");
}
