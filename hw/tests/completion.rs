//! Completion tracker against the golden model's responder
//! (`proto::model::legacy_mrc::LegacyMrcQp` and its `MemoryTable`, docs/model-mrc.md
//! 3.1-3.2): four QPs, each a real requester `LegacyMrcQp` whose data packets
//! arrive reordered, duplicated, trimmed, out of window and with bad
//! rkeys / out-of-bounds addresses at a responder `LegacyMrcQp`. The new,
//! untrimmed ones (what the SACK table passes on) go to the block, and
//! every advance of the expected PSN to its advance port. Checked: the
//! accept/reject decision of every packet equals the model's (placement
//! command with the packet's VA, length and buffer id; NACK with code 2),
//! and the completions equal the model's `RecvCompleted` events per QP
//! (order, immediate, length) with the MSN of the message. A second test
//! holds the completion queue full and checks the held bound: WRITE-IMM
//! ends are dropped (counted) exactly while `HELD_MAX` completions wait,
//! and complete in order once resent.

mod common;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use common::*;
use contract::config::{mr, recv_init, table, Row};
use hw::completion::{res, CompletionTracker, HELD_MAX};
use hw::contract_rows::row_bits;
use proto::model::{Event, QueuePair};
use proto::time::Instant;
use proto::wire::RocePacket;
use proto::Psn;
use rust_hdl::prelude::*;

use tb::stall::Stall;
use tb::{lockstep, lockstep_sim};

/// The packet / advance inputs' pauses and the outputs' back-pressure.
const PAUSE: Stall = Stall::go_percent(80);
const BACKPRESSURE: Stall = Stall::go_percent(70);

const QP_IDS: [usize; 4] = [0, 1, 77, 255];
const STARTS: [u32; 4] = [0xFF_FFA0, 100, 0x12_3456, 0];

/// A packet record for the block.
#[derive(Clone)]
struct Pkt {
    qp: usize,
    psn: u32,
    rkey: u32,
    va: u64,
    len: u16,
    buf: u16,
    first: bool,
    last: bool,
    imm: Option<u32>,
    dma_len: u32,
}

fn record(qp: usize, p: &RocePacket, buf: u16) -> Pkt {
    let (va, rkey) = Mirror::placement(p);
    Pkt {
        qp,
        psn: p.bth.psn.value(),
        rkey,
        va,
        len: p.payload.len() as u16,
        buf,
        first: p.bth.opcode.has_reth(),
        last: p.bth.opcode.is_last(),
        imm: p.imm,
        dma_len: p.reth.map_or(0, |r| r.dma_len),
    }
}

/// An operation for the bench: a packet (with the outcome wanted), or an
/// advance of a QP's expected PSN.
#[derive(Clone)]
enum Op {
    Pkt(Pkt, u8),
    Adv(usize, u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cqe {
    qp: usize,
    imm: u32,
    len: u32,
    msn: u32,
}

fn mr_row(rkey: u32, va: u64, len: u64) -> Bits<256> {
    row_bits(
        &Row::new()
            .set(mr::RKEY, u64::from(rkey))
            .set(mr::BASE_VA, va)
            .set(mr::LENGTH, len)
            .set(mr::VALID, 1),
    )
}

/// Run `ops` (packets wait for their outcome before the next op; advances
/// follow the packet that caused them). Returns (outcomes, placements,
/// nacks, completions, drops seen with the held count before them).
#[derive(Default, Debug)]
struct Seen {
    outcomes: Vec<(usize, u32, u8)>,
    places: Vec<(usize, u64, u16, u16)>,
    nacks: Vec<(usize, u32, u8)>,
    cqes: Vec<Cqe>,
    /// `done_msn` of every walk's end, in order.
    dones: Vec<u32>,
    held_at_decision: Vec<u32>,
    max_held: u32,
    cnt_ra: usize,
    cnt_drop: usize,
    cycles: u64,
}

fn simulate(
    ops: Vec<Op>,
    starts: Vec<(usize, u32)>,
    cq_backpressure: Stall,
    cq_block_until: u64,
    seed: u64,
    resend_drops: bool,
) -> Seen {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let s2 = seen.clone();
    let mut uut = CompletionTracker::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(CompletionTracker, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        let mut cfgs = vec![
            (table::MR, 0x77u16, mr_row(RKEY, VA, REGION)),
            (table::MR, 0x12, mr_row(0x4412, 0x9000_0000, 4096)),
        ];
        for (q, s) in starts.iter() {
            cfgs.push((
                table::RECV_QP,
                *q as u16,
                row_bits(&Row::new().set(recv_init::START_PSN, u64::from(*s))),
            ));
        }
        for (t, i, d) in cfgs {
            x.cfg.valid.next = true;
            x.cfg.table.next = u64::from(t).into();
            x.cfg.index.next = u64::from(i).into();
            x.cfg.data.next = d;
            wait_clock_cycle!(sim, clock, x);
        }
        x.cfg.valid.next = false;
        wait_clock_cycle!(sim, clock, x);
        let mut r = Rng::from_state(seed);
        let mut ops: VecDeque<Op> = ops.clone().into();
        let mut sn = Seen::default();
        let mut waiting: Option<Pkt> = None; // taken, outcome not seen yet
        let mut cycle = 0u64;
        let mut held_prev = 0u32;
        let mut quiet = 0;
        loop {
            let busy = waiting.is_some();
            let head = if busy { None } else { ops.front().cloned() };
            x.pkt_valid.next = false;
            x.adv_valid.next = false;
            let go = quiet == 0 && PAUSE.go(&mut r);
            match &head {
                Some(Op::Pkt(p, _)) if go => {
                    x.pkt_valid.next = true;
                    x.pkt_qp.next = (p.qp as u64).into();
                    x.pkt_psn.next = u64::from(p.psn).into();
                    x.pkt_rkey.next = u64::from(p.rkey).into();
                    x.pkt_va.next = p.va.into();
                    x.pkt_len.next = u64::from(p.len).into();
                    x.pkt_buf.next = u64::from(p.buf).into();
                    x.pkt_first.next = p.first;
                    x.pkt_last.next = p.last;
                    x.pkt_has_imm.next = p.imm.is_some();
                    x.pkt_imm.next = u64::from(p.imm.unwrap_or(0)).into();
                    x.pkt_dma_len.next = u64::from(p.dma_len).into();
                }
                Some(Op::Adv(q, e)) if go => {
                    x.adv_valid.next = true;
                    x.adv_qp.next = (*q as u64).into();
                    x.adv_expected.next = u64::from(*e).into();
                }
                _ => {}
            }
            let place_ready = BACKPRESSURE.go(&mut r);
            let nack_ready = BACKPRESSURE.go(&mut r);
            let cq_ready = cycle >= cq_block_until && cq_backpressure.go(&mut r);
            x.place_ready.next = place_ready;
            x.nack_ready.next = nack_ready;
            x.cq_ready.next = cq_ready;
            wait_clock_false!(sim, clock, x);
            let taken = match &head {
                Some(Op::Pkt(..)) => x.pkt_valid.val() && x.pkt_ready.val(),
                Some(Op::Adv(..)) => x.adv_valid.val() && x.adv_ready.val(),
                None => false,
            };
            let held = x.held_count.val().index() as u32;
            sn.max_held = sn.max_held.max(held);
            if x.res_valid.val() {
                let code = x.res_code.val().index() as u8;
                let p = waiting.take().expect("an outcome for a taken packet");
                assert_eq!((x.res_qp.val().index(), x.res_psn.val().index() as u32), (p.qp, p.psn));
                sn.outcomes.push((p.qp, p.psn, code));
                if p.imm.is_some() {
                    sn.held_at_decision.push(held_prev);
                }
                if let Some(Op::Pkt(_, want)) = ops.front() {
                    if code == res::DROPPED && resend_drops {
                        // The requester resends it later: keep the op.
                        quiet = 5 + r.below(20);
                    } else {
                        assert_eq!(code, *want, "cycle {cycle}: outcome of QP {} PSN {:#x}", p.qp, p.psn);
                        ops.pop_front();
                    }
                }
            }
            sn.cnt_ra += usize::from(x.cnt_remote_access.val());
            sn.cnt_drop += usize::from(x.cnt_imm_dropped.val());
            if x.place_valid.val() && place_ready {
                sn.places.push((
                    x.place_qp.val().index(),
                    x.place_addr.val().to_u64(),
                    x.place_len.val().index() as u16,
                    x.place_buf.val().index() as u16,
                ));
            }
            if x.nack_valid.val() && nack_ready {
                sn.nacks.push((
                    x.nack_qp.val().index(),
                    x.nack_psn.val().index() as u32,
                    x.nack_code.val().index() as u8,
                ));
            }
            if x.cq_valid.val() && cq_ready {
                sn.cqes.push(Cqe {
                    qp: x.cq_qp.val().index(),
                    imm: x.cq_imm.val().index() as u32,
                    len: x.cq_len.val().index() as u32,
                    msn: x.cq_msn.val().index() as u32,
                });
            }
            if x.done_valid.val() {
                sn.dones.push(x.done_msn.val().index() as u32);
            }
            held_prev = held;
            wait_clock_true!(sim, clock, x);
            if taken {
                match ops.front().cloned() {
                    Some(Op::Pkt(p, _)) => waiting = Some(p),
                    Some(Op::Adv(..)) => {
                        ops.pop_front();
                    }
                    None => {}
                }
            }
            quiet = quiet.saturating_sub(1);
            cycle += 1;
            if ops.is_empty() && waiting.is_none() && held == 0 && !x.cq_valid.val() {
                // Let the last walk finish.
                if cycle > 0 && sn.cycles == 0 {
                    sn.cycles = cycle;
                }
                if cycle > sn.cycles + 300 {
                    break;
                }
            }
            assert!(cycle < 100_000, "ran away");
        }
        *s2.lock().unwrap() = sn;
        sim.done(x)
    });
    sim.run(Box::new(uut), 100_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_completion", || {
        hw::flow::emit_block("mrc_completion", &mut CompletionTracker::default()).verilog
    });
    let out = std::mem::take(&mut *seen.lock().unwrap());
    out
}

#[test]
fn completion_matches_model_responder() {
    let seed = std::env::var("CMP_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0xC0_0001);
    let mut r = Rng::from_state(seed);
    let mut streams: Vec<VecDeque<RocePacket>> = Vec::new();
    let mut models = Vec::new();
    for (k, &s) in STARTS.iter().enumerate() {
        let (mut a, mut b) = pair(QP_IDS[k] as u32 + 1, s, 4, 1000);
        for w in 0..255 {
            b.post_recv(w).unwrap();
        }
        let pk = requester_packets(&mut a, &mut r, 110);
        let p = Perturb {
            dup: 5,
            trim: 3,
            oow: 3,
            bad_rkey: 5,
            ecn: 0,
            swap: 25,
            jump: 4,
            late: 2,
        };
        streams.push(arrivals(&pk, &mut r, &p).into());
        models.push(b);
    }
    let mut mirrors: Vec<Mirror> = STARTS.iter().map(|&s| Mirror::new(s)).collect();
    let mut msn: Vec<u32> = vec![0; 4];
    let mut ops = Vec::new();
    let mut want_places = Vec::new();
    let mut want_nacks = Vec::new();
    let mut want_cqes: Vec<Cqe> = Vec::new();
    // The MSN after each advance (the AETH MSN of the model's ACK).
    let mut want_dones: Vec<u32> = Vec::new();
    let mut ends: Vec<std::collections::HashMap<u32, (bool, bool)>> = vec![Default::default(); 4];
    // The MSN right after each WRITE-IMM end passed, per QP, in order.
    let mut imm_msn: Vec<VecDeque<u32>> = vec![VecDeque::new(); 4];
    let mut buf = 0u16;
    let now = Instant::ZERO;
    while streams.iter().any(|s| !s.is_empty()) {
        let k = r.below(4) as usize;
        for _ in 0..1 + r.below(4) {
            let Some(p) = streams[k].pop_front() else { break };
            let e0 = mirrors[k].expected;
            let fate = mirrors[k].arrive(&p);
            let res_model = models[k].handle_packet(now, p.clone().into());
            match fate {
                Fate::New => assert!(res_model.is_ok()),
                Fate::Rejected => assert!(res_model.is_err()),
                _ => {}
            }
            let want = match fate {
                Fate::New => res::PLACED,
                Fate::Rejected => res::REJECTED,
                _ => continue,
            };
            buf = buf.wrapping_add(1);
            let rec = record(QP_IDS[k], &p, buf);
            if fate == Fate::New {
                ends[k].insert(rec.psn, (rec.last, rec.imm.is_some()));
                if rec.len > 0 {
                    want_places.push((QP_IDS[k], rec.va, rec.len, buf));
                }
            } else {
                want_nacks.push((QP_IDS[k], rec.psn, 2u8));
            }
            ops.push(Op::Pkt(rec, want));
            let e1 = mirrors[k].expected;
            if e1 != e0 {
                ops.push(Op::Adv(QP_IDS[k], e1.value()));
                let mut e = e0;
                while e != e1 {
                    if let Some((last, imm)) = ends[k].remove(&e.value()) {
                        if last {
                            msn[k] = (msn[k] + 1) & 0xFF_FFFF;
                        }
                        if imm {
                            imm_msn[k].push_back(msn[k]);
                        }
                    }
                    e = e.next();
                }
                want_dones.push(msn[k]);
            }
            // The model's completions, in order, with the MSN reached.
            while let Some(ev) = models[k].poll_event() {
                if let Event::RecvCompleted(c) = ev {
                    let m = imm_msn[k].pop_front().expect("a WRITE-IMM end passed");
                    want_cqes.push(Cqe {
                        qp: QP_IDS[k],
                        imm: c.imm.unwrap(),
                        len: c.len,
                        msn: m,
                    });
                    models[k].post_recv(1000 + c.wr_id).unwrap();
                }
            }
        }
    }
    let starts: Vec<(usize, u32)> = QP_IDS.iter().copied().zip(STARTS).collect();
    let seen = simulate(ops.clone(), starts, Stall::go_percent(85), 0, seed ^ 0x77, false);
    eprintln!(
        "{} ops, {} placements, {} NACKs, {} completions, max held {}, {} cycles",
        ops.len(),
        seen.places.len(),
        seen.nacks.len(),
        seen.cqes.len(),
        seen.max_held,
        seen.cycles
    );
    assert_eq!(seen.places, want_places);
    assert_eq!(seen.nacks, want_nacks);
    assert_eq!(seen.cnt_ra, want_nacks.len());
    assert_eq!(seen.cnt_drop, 0);
    assert_eq!(seen.dones, want_dones, "the MSN after each advance");
    assert!(
        want_dones.iter().filter(|&&m| m > 0).count() >= 40,
        "advances past a message end"
    );
    // Completions leave in PSN order per QP: compare per QP.
    for &q in &QP_IDS {
        let g: Vec<Cqe> = seen.cqes.iter().copied().filter(|c| c.qp == q).collect();
        let w: Vec<Cqe> = want_cqes.iter().copied().filter(|c| c.qp == q).collect();
        assert_eq!(g, w, "QP {q}");
    }
    // Coverage.
    assert!(want_cqes.len() >= 40, "completions {}", want_cqes.len());
    assert!(want_nacks.len() >= 5, "rejections {}", want_nacks.len());
    assert!(want_places.len() >= 200, "placements {}", want_places.len());
    let multi = ops
        .iter()
        .filter(|o| matches!(o, Op::Pkt(p, 0) if !p.first && !p.last))
        .count();
    assert!(multi >= 20, "MIDDLE packets {multi}");
}

/// The held bound: with the completion queue not drained, WRITE-IMM ends
/// are dropped exactly while HELD_MAX completions wait; resent, they
/// complete in order.
#[test]
fn held_completions_are_bounded() {
    let start = 0xFF_FFF0u32;
    let mut ops = Vec::new();
    let n = 40u32;
    for i in 0..n {
        let psn = Psn::new(start).add(i).value();
        let p = Pkt {
            qp: 9,
            psn,
            rkey: RKEY,
            va: VA + 64 * u64::from(i),
            len: 16 + i as u16,
            buf: i as u16,
            first: true,
            last: true,
            imm: Some(0xA000 + i),
            dma_len: 16 + i,
        };
        ops.push(Op::Pkt(p, res::PLACED));
        ops.push(Op::Adv(9, Psn::new(psn).next().value()));
    }
    let seen = simulate(ops, vec![(9, start)], Stall::go_percent(50), 400, 0xB0B, true);
    eprintln!(
        "drops {} max held {} cycles {}",
        seen.cnt_drop, seen.max_held, seen.cycles
    );
    assert!(seen.cnt_drop >= 1, "the bound was reached");
    assert_eq!(seen.max_held, HELD_MAX);
    // Every drop happened with HELD_MAX held, every placement below it.
    for ((_, _, code), held) in seen.outcomes.iter().zip(&seen.held_at_decision) {
        if *code == res::DROPPED {
            assert!(*held >= HELD_MAX, "dropped with {held} held");
        } else {
            assert!(*held < HELD_MAX, "placed with {held} held");
        }
    }
    let want: Vec<Cqe> = (0..n)
        .map(|i| Cqe {
            qp: 9,
            imm: 0xA000 + i,
            len: 16 + i,
            msn: i + 1,
        })
        .collect();
    assert_eq!(seen.cqes, want);
}

/// With the outputs ready, packets are taken one per cycle (any QPs).
#[test]
fn one_packet_per_cycle() {
    let taken = Arc::new(Mutex::new(Vec::<u64>::new()));
    let t2 = taken.clone();
    let mut uut = CompletionTracker::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(CompletionTracker, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        x.cfg.valid.next = true;
        x.cfg.table.next = u64::from(table::MR).into();
        x.cfg.index.next = 0x77u64.into();
        x.cfg.data.next = mr_row(RKEY, VA, REGION);
        wait_clock_cycle!(sim, clock, x);
        x.cfg.valid.next = false;
        x.place_ready.next = true;
        x.nack_ready.next = true;
        let mut i = 0u32;
        let mut cycle = 0u64;
        let mut outcomes = 0;
        while i < 200 || outcomes < 200 {
            x.pkt_valid.next = i < 200;
            x.pkt_qp.next = u64::from(i % 7).into();
            x.pkt_psn.next = u64::from(i).into();
            x.pkt_rkey.next = u64::from(RKEY).into();
            // Every 5th is out of bounds: a NACK instead of a placement.
            x.pkt_va.next = if i % 5 == 4 {
                VA + REGION - 8
            } else {
                VA + 64 * u64::from(i)
            }
            .into();
            x.pkt_len.next = 64u64.into();
            x.pkt_first.next = true;
            x.pkt_last.next = true;
            x.pkt_dma_len.next = 64u64.into();
            wait_clock_false!(sim, clock, x);
            let ok = i < 200 && x.pkt_ready.val();
            if x.res_valid.val() {
                let want = if outcomes % 5 == 4 { res::REJECTED } else { res::PLACED };
                assert_eq!(x.res_code.val().index() as u8, want);
                outcomes += 1;
            }
            wait_clock_true!(sim, clock, x);
            if ok {
                t2.lock().unwrap().push(cycle);
                i += 1;
            }
            cycle += 1;
            assert!(cycle < 1000);
        }
        sim.done(x)
    });
    sim.run(Box::new(uut), 100_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_completion", || {
        hw::flow::emit_block("mrc_completion", &mut CompletionTracker::default()).verilog
    });
    let t = taken.lock().unwrap();
    assert_eq!(t[199] - t[0], 199, "one packet per cycle");
}
