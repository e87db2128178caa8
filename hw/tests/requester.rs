//! Requester (send-queue engine) against the golden model's segmentation:
//! every valid descriptor the test posts to the hardware's SQ rings is
//! also posted to a `proto::model::legacy_mrc::LegacyMrcQp` (one per QP, same MTU and
//! start PSN, a fixed infinite congestion window), and the packets it
//! emits are the reference: PSN, BTH opcode, ack_req, payload length and
//! offset in the message, RETH (VA, rkey, DMA length) on FIRST / ONLY,
//! placement (VA, rkey) on MIDDLE / LAST, immediate. Descriptor validity
//! is decided by `contract::layout::SqDescriptor::decode` (the driver's rules);
//! rejected ones must come out as error records with their status, in
//! order, with one counter pulse each. A DMA read responder model answers
//! descriptor fetches with random latency and random valid stalls; the
//! output, error and DMA request handshakes are stalled at random.
//! Retransmit requests for PSNs of the last messages, and of any message
//! not yet acknowledged, must re-issue exactly the reference record
//! (flagged retransmit); requests for PSNs outside the table must be
//! counted as misses. Cumulative acknowledgements (`una_*`) lag behind
//! the output: a message may be committed only while fewer than
//! `RTX_SLOTS` = 4 older messages of its QP are unacknowledged (by the
//! acknowledgements the hardware has taken), and every message must still
//! go out once they are.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use contract::config::table;
use contract::layout::{self, CqStatus, SqContext, SqDescriptor, SqOpcode};
use hw::requester::{Requester, DESC_BEATS_OUT, MAX_BATCH, RTX_SLOTS};
use proto::model::cc::CcConfig;
use proto::model::ev::EvSetConfig;
use proto::model::legacy_mrc::LegacyMrcQp;
use proto::model::*;
use proto::time::Instant;
use proto::wire::{MrcExtRepr, Packet};
use proto::Psn;
use rust_hdl::prelude::*;

use tb::rng::Rng;
use tb::stall::Stall;
use tb::{lockstep, lockstep_sim};

/// The retransmit records per QP the requester once had: the random run
/// must have more messages than this unacknowledged at once on every QP.
const FORMER_RTX_SLOTS: usize = 4;

/// Back-pressure on the error records.
const ERR_BACKPRESSURE: Stall = Stall::go_percent(70);

/// A packet work record, as compared (fields that the opcode does not
/// carry are `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rec {
    psn: u32,
    opcode: u8,
    ack_req: bool,
    first: bool,
    /// Payload address minus the message's local IOVA.
    addr_off: u64,
    len: u32,
    remote_va: u64,
    rkey: u32,
    dma_len: Option<u32>,
    imm: Option<u32>,
    msg_offset: u32,
}

fn has_reth(op: u8) -> bool {
    matches!(op, 0x06 | 0x0A | 0x0B)
}
fn has_imm(op: u8) -> bool {
    matches!(op, 0x09 | 0x0B)
}

/// Test QP setups: (QP, log2 MTU, log2 ring size, start PSN, ring base).
const SETUPS: [(usize, u8, u8, u32, u64); 3] = [
    (0, 8, 2, 0xFF_FFFA, 0x1_0000_0000),
    (77, 10, 3, 0x12_3456, 0x2_0000_1000),
    (255, 12, 4, 0, 0xFFFF_FFFF_FFF0_0000),
];

/// Messages of one QP in flight in the deep runs: the ring of retransmit
/// records they fill (issue 15: 64, where the requester had 4).
const DEEP_IN_FLIGHT: usize = 64;

/// QP 255's ring in the deep runs (`Params::deep`): 128 SQEs, so that
/// more messages can be posted than it has retransmit records.
const DEEP_LOG2_SIZE: u8 = 7;
/// QP 255's start PSN in the deep runs: 96 PSNs before the 24-bit wrap,
/// so the messages in flight (1-3 packets each) straddle it.
const DEEP_START_PSN: u32 = 0xFF_FFA0;

/// `SETUPS[k]`, with QP 255's ring and start PSN of the deep runs.
fn setup(k: usize, deep: bool) -> (usize, u8, u8, u32, u64) {
    let (qp, lm, ls, psn, base) = SETUPS[k];
    if deep && k == 2 {
        (qp, lm, DEEP_LOG2_SIZE, DEEP_START_PSN, base)
    } else {
        (qp, lm, ls, psn, base)
    }
}

fn ctx(k: usize, deep: bool) -> SqContext {
    let (qp, lm, ls, psn, base) = setup(k, deep);
    SqContext {
        sq_base: base,
        cq_index: qp as u16,
        addr_index: 0,
        dest_qp: 0x100 + qp as u32,
        start_psn: psn,
        pkey: 0xFFFF,
        sq_log2_size: ls,
        log2_mtu: lm,
        ev_count: 4,
        enable: true,
        send_mpr_units: 255,
        ev_min_active: 1,
    }
}

fn model(k: usize, deep: bool) -> LegacyMrcQp {
    let (qp, lm, _, psn, _) = setup(k, deep);
    let mut s = QpSetup::new(Transport::Mrc, qp as u32, 0x100 + qp as u32);
    s.cfg.mtu = 1 << lm;
    s.rtr.mpr_units = 1;
    s.rtr.max_wimm = 1;
    s.rts = RtsAttr {
        sq_psn: Psn::new(psn),
        ack_timeout_exp: 20,
        retry_linear: 7,
        retry_exp: RETRY_INFINITE,
        send_mpr_units: 255,
        max_wimm: 60_000,
        evs: EvSetConfig {
            evs: (0..4).map(|i| 0xC000 + i).collect(),
            ..EvSetConfig::default()
        },
        cc: CcConfig::Fixed { window: u64::MAX },
    };
    proto::test_support::ready(&s)
}

/// The reference packets of one posted WRITE (all of them: the window is
/// infinite and nothing is in flight that could block).
fn reference(q: &mut LegacyMrcQp, d: &SqDescriptor) -> Vec<Rec> {
    let data = Bytes::from(vec![0u8; d.length as usize]);
    let imm = (d.opcode == SqOpcode::WriteImm).then_some(d.imm);
    q.post_write(
        Instant::ZERO,
        WriteRequest {
            wr_id: d.wr_id,
            data,
            remote_va: d.remote_va,
            rkey: d.rkey,
            imm,
        },
    )
    .unwrap();
    let mut v = Vec::new();
    while let Some(p) = q.poll_transmit(Instant::ZERO).and_then(Packet::into_roce) {
        let Some(MrcExtRepr::Data(ext)) = p.ext else {
            panic!("data packet without its extension")
        };
        let op = p.bth.opcode as u8;
        let (va, rkey) = match (p.reth, ext.placement) {
            (Some(r), None) => (r.va, r.rkey),
            (None, Some(pl)) => (pl.va, pl.rkey),
            other => panic!("RETH xor placement expected: {other:?}"),
        };
        v.push(Rec {
            psn: p.bth.psn.value(),
            opcode: op,
            ack_req: p.bth.ack_req,
            first: p.reth.is_some(),
            addr_off: u64::from(ext.msg_offset),
            len: p.payload.len() as u32,
            remote_va: va,
            rkey,
            dma_len: p.reth.map(|r| r.dma_len),
            imm: p.imm,
            msg_offset: ext.msg_offset,
        });
    }
    v
}

/// Retransmit requests for a QP whose first `committed` messages (`msgs`:
/// first PSN, packets) are committed, more than `RTX_SLOTS` of them, and
/// which is held: the last `RTX_SLOTS` messages' records are kept, so
/// their PSNs must hit (the oldest's and the newest's first and last,
/// every 7th message's, and both sides of the 24-bit PSN wrap when it is
/// among them); the PSN just before the oldest (a message whose record
/// was reused, or never sent) and the next message's first PSN (not
/// committed: held) must miss.
fn deep_rtx_requests(msgs: &[(u32, u32)], committed: usize) -> Vec<(u32, bool)> {
    assert!(committed >= RTX_SLOTS && committed < msgs.len());
    let oldest = committed - RTX_SLOTS;
    let last = |m: usize| Psn::new(msgs[m].0).add(msgs[m].1 - 1).value();
    let mut v = Vec::new();
    for m in (oldest..committed).step_by(7).chain([oldest, committed - 1]) {
        v.push((msgs[m].0, true));
        v.push((last(m), true));
    }
    for &(first, n) in &msgs[oldest..committed] {
        for p in [0xFF_FFFF, 0] {
            if Psn::new(p).sub(first).value() < n {
                v.push((p, true));
            }
        }
    }
    v.push((Psn::new(msgs[oldest].0).sub(1).value(), false));
    v.push((msgs[committed].0, false));
    v
}

fn bits<const N: usize>(bytes: &[u8]) -> Bits<N> {
    let mut b = Bits::<N>::default();
    for (i, &x) in bytes.iter().enumerate() {
        b.set_bits::<8>(8 * i, (x as u64).into());
    }
    b
}

fn descriptor(r: &mut Rng, lm: u8) -> SqDescriptor {
    let mtu = 1u64 << lm;
    let length = match r.below(100) {
        0..=5 => 0,
        6..=35 => 1 + r.below(mtu),
        36..=50 => mtu * (1 + r.below(4)),
        _ => 1 + r.below(6 * mtu),
    } as u32;
    let opcode = if r.chance(50) {
        SqOpcode::Write
    } else {
        SqOpcode::WriteImm
    };
    SqDescriptor {
        opcode,
        signaled: r.chance(50),
        length,
        wr_id: r.next_u64(),
        local_iova: r.next_u64() >> r.below(20),
        // Now and then a VA that wraps within the message.
        remote_va: if r.chance(5) {
            u64::MAX - r.below(3000)
        } else {
            r.next_u64()
        },
        rkey: r.next_u64() as u32,
        imm: if opcode == SqOpcode::WriteImm {
            r.next_u64() as u32
        } else {
            0
        },
    }
}

/// A descriptor the hardware must reject, with the status it reports.
fn bad_descriptor(r: &mut Rng, lm: u8) -> ([u8; 64], CqStatus) {
    let mut b = descriptor(r, lm).encode().unwrap();
    let status = match r.below(3) {
        0 => {
            let op = [0u8, 3, 0x0A, 0xFF][r.below(4) as usize];
            b[0] = op;
            if r.chance(50) {
                b[1] |= 0x80; // the opcode check comes first
            }
            CqStatus::BadOpcode
        }
        1 => {
            b[1] |= 2 << r.below(7);
            CqStatus::BadFlags
        }
        _ => {
            layout::sqe::LENGTH.put(&mut b, layout::MAX_MESSAGE_LEN + 1 + r.below(1 << 31));
            CqStatus::BadLength
        }
    };
    // The layout's decode is the driver's rule: it must agree.
    assert!(SqDescriptor::decode(&b).is_err());
    (b, status)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ErrRec {
    status: u8,
    opcode: u8,
    wr_id: u64,
    sq_index: u32,
    len: u32,
}

impl ErrRec {
    /// The record a doorbell of value `v` the engine refuses must give.
    fn bad_doorbell(v: u32) -> ErrRec {
        ErrRec {
            status: CqStatus::BadDoorbell as u8,
            opcode: 0,
            wr_id: 0,
            sq_index: v,
            len: 0,
        }
    }
}

/// A message record (`msg_*`): what the completion block needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MsgRec {
    wr_id: u64,
    opcode: u8,
    len: u32,
    sq_index: u32,
    signaled: bool,
    first_psn: u32,
    last_psn: u32,
}

fn msg_rec(d: &SqDescriptor, sq_index: u32, recs: &[Rec]) -> MsgRec {
    MsgRec {
        wr_id: d.wr_id,
        opcode: d.opcode.code(),
        len: d.length,
        sq_index,
        signaled: d.signaled,
        first_psn: recs[0].psn,
        last_psn: recs[recs.len() - 1].psn,
    }
}

#[derive(Default)]
struct Outcome {
    /// Per QP: the reference packets in order, and those the hardware gave.
    want: HashMap<usize, Vec<Rec>>,
    got: HashMap<usize, Vec<Rec>>,
    want_err: HashMap<usize, Vec<ErrRec>>,
    /// Per QP: the message records expected (SQ order) and those taken.
    want_msg: HashMap<usize, Vec<MsgRec>>,
    got_msg: HashMap<usize, Vec<MsgRec>>,
    /// Cycles with msg_valid high and msg_ready low.
    msg_stalls: u64,
    got_err: HashMap<usize, Vec<ErrRec>>,
    rtx_want: Vec<(usize, Rec)>,
    rtx_got: Vec<(usize, Rec)>,
    rtx_misses_issued: u64,
    counters: HashMap<&'static str, u64>,
    /// Cycles with out_valid high and out_ready low.
    out_stalls: u64,
    /// Records of one message taken on consecutive cycles.
    back_to_back: u64,
    dma_reads: HashMap<usize, u64>,
    /// DMA read requests by descriptors per request.
    batches: std::collections::BTreeMap<u64, u64>,
    /// Every DMA read request taken (cycle, descriptors), and the cycle
    /// of the first response beat taken.
    fetches: Vec<(u64, u64)>,
    first_beat: Option<u64>,
    /// Read requests taken while beats of an earlier read were still
    /// to come (reads ahead in flight).
    overlapped: u64,
    /// The most descriptor beats requested and not yet taken at once (the
    /// core's descriptor FIFO must hold them: `DESC_BEATS_OUT`).
    max_beats_due: usize,
    cycles: u64,
    /// Take cycle of every first-transmission record, per QP.
    take_cycles: HashMap<usize, Vec<u64>>,
    /// Config writes issued while the engine was running.
    cfg_noise: u64,
    /// QP of every first-transmission record, in output order.
    order: Vec<usize>,
    /// Per QP: the most messages committed and not acknowledged at once
    /// (by the hardware's message records against the una it had taken).
    max_unacked: HashMap<usize, usize>,
    /// Acknowledgements taken; those that ended inside a message (its last
    /// PSN: releases nothing); cycles an acknowledgement waited (config
    /// write).
    una_taken: u64,
    una_partial: u64,
    una_stalls: u64,
    /// Retransmit hits for a message older than the last two seen (only
    /// possible because unacknowledged records are kept).
    rtx_old_hits: u64,
    /// The cycle QP 255's error report was taken, and its records (first
    /// transmissions and retransmits) taken after that cycle.
    qerr_cycle: Option<u64>,
    after_err: u64,
    /// Take cycle of every retransmitted record.
    rtx_cycles: Vec<u64>,
    /// Records yielded (`out_yield`), and first transmissions taken after
    /// a yield of their QP (its backlog's).
    yields: u64,
    after_yield: u64,
}

struct Params {
    seed: u64,
    /// Descriptors to post in total.
    n_desc: usize,
    /// Back-pressure on the packet output.
    out_ready: Stall,
    /// Back-pressure on the message records.
    msg_ready: Stall,
    dma_ready: Stall,
    /// Pauses of the DMA read responses.
    rsp_valid: Stall,
    max_latency: u64,
    /// Added to every DMA read's latency (a host round trip).
    latency: u64,
    /// The random mix posts to QP 255 only (so that it is often alone
    /// in the engine, where reads ahead are made).
    one_qp: bool,
    /// Percent of cycles in which the random mix posts (and rings).
    post_pct: u64,
    rtx: bool,
    bad: bool,
    /// Directed doorbell-burst scenario instead of the random mix.
    directed: bool,
    /// With `directed`: instead, 16 single-packet messages on one doorbell.
    burst: bool,
    /// With `burst`: and one message on another QP rung right after.
    fair: bool,
    /// With `burst` (0: off): the first doorbell announces 2 messages,
    /// a second one at this cycle all 16 (as a driver rings each post).
    split_at: u64,
    /// Instead of the random mix: every QP's ring filled with
    /// single-packet messages, then one doorbell per QP in consecutive
    /// cycles (QP 0, 77, 255).
    all_qps: bool,
    /// With `directed`: first 20 empty doorbells (producer index 0, each
    /// served before the next), then the burst.
    wrap_first: bool,
    /// Directed instead of the random mix: QP 0 posts two 3-packet
    /// messages from PSN 0xFFFFFA (the second ends at the 24-bit wrap),
    /// then three more on a second doorbell, then asks to retransmit the
    /// second one's first packet.
    rtx_wrap: bool,
    /// Percent of cycles in which an acknowledgement is issued (for a QP
    /// with messages whose records are all out and not yet acknowledged).
    ack_pct: u64,
    /// Before this cycle no acknowledgement is issued (the QPs fill their
    /// records and are held).
    ack_from: u64,
    /// With `fair`: QP 77's doorbell not before this cycle.
    fair_at: u64,
    /// With `fair`: QP 77 rings this many single-packet messages (at most
    /// its ring's 8) in its one doorbell (0: one).
    fair_msgs: u32,
    /// From this cycle (0: never) QP 255 is reported in error at the
    /// retransmit engine (`qerr_*`): it sends nothing more, its records
    /// are all free from then.
    err_at: u64,
    /// Instead (0: never): QP 255 is reported in error once this many of
    /// its records are out.
    err_after: usize,
    /// After the error report: one retransmit request for a PSN of QP 255
    /// that was sent (it must give no record, and is no miss).
    err_rtx: bool,
    /// With `burst`: QP 255's messages are 6 MTUs long instead of one
    /// packet.
    long: bool,
    /// With `long`: QP 255's messages are this many bytes instead (0: 6
    /// MTUs).
    long_len: u32,
    /// At this cycle (0: never) one bad doorbell (beyond the ring) for
    /// QP 255, in place of the burst's doorbell of that cycle.
    bad_at: u64,
    /// With `burst` and `bad_at` (0: off): the burst's doorbell is rung
    /// this many cycles after the bad one instead of at the start.
    good_after_bad: u64,
    /// QP 255 has a 128-SQE ring (`DEEP_LOG2_SIZE`) from PSN
    /// `DEEP_START_PSN`: with `directed`, 128 messages (with `burst`, of
    /// 1-3 packets), more than its retransmit records.
    deep: bool,
    /// At this cycle (0: never), one acknowledgement of QP 255's first
    /// `partial_ack_msgs` messages (una = the end of the last of them).
    partial_ack_at: u64,
    partial_ack_msgs: usize,
    /// At each (cycle, n) (cycle 0: never), the retransmit requests of
    /// `deep_rtx_requests` for QP 255 whose first `n` messages are
    /// committed, one after the other.
    rtx_script: [(u64, usize); 2],
    /// Percent of the first transmissions offered that the bench yields
    /// (`out_yield`), as the core's admission does when the CC gate
    /// refuses one: the record is taken back, and its QP is shut until an
    /// open (`open_*`) 1-2 times `reopen_after` cycles later, unless the
    /// yield says the window moved (`out_yield_reopen`, 1 in 5).
    yield_pct: u64,
    reopen_after: u64,
    /// QP 77's send-context row at this cycle instead of with the others
    /// at the start (0: at the start); with `fair`, ring it after.
    late_cfg_at: u64,
}

/// The directed tests' setting: no stalls, no latency, no scenario flag,
/// every acknowledgement issued at once; each test names what differs.
impl Default for Params {
    fn default() -> Params {
        Params {
            seed: 1,
            n_desc: 0,
            out_ready: Stall::NEVER,
            msg_ready: Stall::NEVER,
            dma_ready: Stall::NEVER,
            rsp_valid: Stall::NEVER,
            max_latency: 0,
            latency: 0,
            one_qp: false,
            post_pct: 25,
            rtx: false,
            bad: false,
            directed: false,
            burst: false,
            fair: false,
            split_at: 0,
            all_qps: false,
            wrap_first: false,
            rtx_wrap: false,
            ack_pct: 100,
            ack_from: 0,
            fair_at: 0,
            fair_msgs: 0,
            err_at: 0,
            err_after: 0,
            err_rtx: false,
            long: false,
            long_len: 0,
            bad_at: 0,
            good_after_bad: 0,
            deep: false,
            partial_ack_at: 0,
            partial_ack_msgs: 0,
            rtx_script: [(0, 0); 2],
            yield_pct: 0,
            reopen_after: 0,
            late_cfg_at: 0,
        }
    }
}

const COUNTERS: [&str; 8] = [
    "bad_opcode",
    "bad_flags",
    "bad_length",
    "bad_doorbell",
    "bad_cfg",
    "rtx_miss",
    "db_stale",
    "sq_held",
];

fn run(p: Params) -> Outcome {
    let out = Arc::new(Mutex::new(Outcome::default()));
    let out2 = out.clone();
    let mut uut = Requester::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(Requester, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut r = Rng::from_state(p.seed);
        let trace = std::env::var("REQ_TRACE").is_ok();
        let mut o = out2.lock().unwrap();
        let mut models: Vec<LegacyMrcQp> = (0..SETUPS.len()).map(|k| model(k, p.deep)).collect();
        // Host memory: ring slot address -> descriptor bytes.
        let mut mem: HashMap<u64, [u8; 64]> = HashMap::new();
        let mut slot_qp: HashMap<u64, usize> = HashMap::new();
        let mut posted = [0u32; 3]; // producer index
        let mut fetched = [0u32; 3]; // descriptors delivered by DMA
        let mut iova: HashMap<(usize, u32), u64> = HashMap::new(); // (k, psn) -> local IOVA of its message
                                                                   // Messages per QP: (first psn, npkts); the last one seen output.
        let mut msgs: Vec<Vec<(u32, u32)>> = vec![Vec::new(); 3];
        let mut psn_msg: HashMap<(usize, u32), usize> = HashMap::new();
        let mut last_seen: Vec<Option<usize>> = vec![None; 3];
        let mut ref_by_psn: HashMap<(usize, u32), Rec> = HashMap::new();
        // Doorbells in flight: good ones (k, value), bad ones per QP.
        let mut db_good: Vec<(usize, u32)> = Vec::new();
        let mut db_bad = [0u32; 3];
        // Bad doorbells rung after the last post (one per QP, in QP order).
        let mut bad_tail = 0usize;
        let mut n_posted = 0usize;
        let mut dma_q: VecDeque<(u64, u64, u64, bool)> = VecDeque::new(); // beats: (addr, tag, ready cycle, last)
        let mut rtx_pending: Option<(usize, u32)> = None;
        let mut cfg_at: Option<u64> = None;
        // A table-1 row was on the bus last cycle: the requester applies it
        // now (an acknowledgement offered now must wait: `una_ready` low).
        let mut cfg_t1_last = false;
        let mut cycle = 0u64;
        let mut idle = 0u64;
        let mut last_take: HashMap<usize, (u64, u32)> = HashMap::new();
        // Yields: the opens due (cycle, QP), and the QPs yielded so far.
        let mut opens: Vec<(u64, usize)> = Vec::new();
        let mut yielded: std::collections::HashSet<usize> = std::collections::HashSet::new();
        // Acknowledgements: per QP, messages whose records are all out,
        // messages acknowledged by the una issued, by the una the hardware
        // took, and the una itself (start PSN until the first).
        let mut out_done = [0usize; 3];
        let mut acked = [0usize; 3];
        let mut released = [0usize; 3];
        let mut una: [u32; 3] = [0, 1, 2].map(|k| setup(k, p.deep).3);
        let mut una_pending: Option<(usize, u32, usize, bool)> = None; // (k, una, released count, partial)
        let mut qerr_taken = false;
        let mut err_rtx_sent = false;
        // Scripted retransmit requests (PSN, whether it must hit).
        let mut rtx_script: Vec<(u32, bool)> = Vec::new();
        for s in &SETUPS {
            o.want.insert(s.0, Vec::new());
            o.got.insert(s.0, Vec::new());
            o.want_err.insert(s.0, Vec::new());
            o.got_err.insert(s.0, Vec::new());
        }
        // Config writes: the three QPs, one row rejected (log2 MTU 7,
        // counted), one for another table (ignored), one beyond the QPs.
        let mut cfgs: Vec<(u64, u64, Bits<256>)> = (0..3)
            .filter(|&k| p.late_cfg_at == 0 || k != 1)
            .map(|k| (1, SETUPS[k].0 as u64, bits::<256>(&ctx(k, p.deep).encode().unwrap())))
            .collect();
        let mut bad_row = ctx(1, false).encode().unwrap();
        bad_row[23] = 7;
        cfgs.push((u64::from(table::SQ_CTX), 77, bits::<256>(&bad_row)));
        cfgs.push((2, 0, bits::<256>(&[0xFFu8; 32])));
        // A good row for a QP beyond the 256: counted, and it must not
        // alias QP 300 mod 256 = 44 (unused, its doorbells would fail).
        cfgs.push((
            u64::from(table::SQ_CTX),
            300,
            bits::<256>(&ctx(0, false).encode().unwrap()),
        ));
        let expect_bad_cfg = 2u64;
        // Burst scenario: QP 255's 16 slots filled, then 20 doorbells in
        // consecutive cycles while descriptor fetches are refused.
        let mut phase = 0u8;
        let mut warm_sent = 0u32;
        let mut wrap_phase = 0u8;
        let mut warm_last = 0u64;
        wait_clock_true!(sim, clock, x);
        loop {
            // ---- drive inputs ----
            x.cfg.valid.next = false;
            x.db_valid.next = false;
            // A table-1 config write in this cycle.
            let cfg_t1_applied = cfg_t1_last;
            let mut cfg_t1_now = false;
            if p.late_cfg_at != 0 && cycle == p.late_cfg_at {
                x.cfg.valid.next = true;
                x.cfg.table.next = u64::from(table::SQ_CTX).into();
                x.cfg.index.next = (SETUPS[1].0 as u64).into();
                x.cfg.data.next = bits::<256>(&ctx(1, p.deep).encode().unwrap());
            } else if let Some((t, i, d)) = cfgs.first().copied() {
                x.cfg.valid.next = true;
                x.cfg.table.next = t.into();
                x.cfg.index.next = i.into();
                x.cfg.data.next = d;
                cfgs.remove(0);
            } else if p.rtx_wrap {
                let k = 0;
                let (qp, lm, _, _, base) = SETUPS[k];
                let mut post = |n: u32, o: &mut Outcome, r: &mut Rng| {
                    for _ in 0..n {
                        let mut d = descriptor(r, lm);
                        d.length = 3 << lm;
                        let slot = base + 64 * u64::from(posted[k] & 3);
                        mem.insert(slot, d.encode().unwrap());
                        slot_qp.insert(slot, k);
                        let recs = reference(&mut models[k], &d);
                        assert_eq!(recs.len(), 3);
                        o.want_msg.entry(qp).or_default().push(msg_rec(&d, posted[k], &recs));
                        for rec in &recs {
                            iova.insert((k, rec.psn), d.local_iova);
                            ref_by_psn.insert((k, rec.psn), *rec);
                            psn_msg.insert((k, rec.psn), msgs[k].len());
                        }
                        msgs[k].push((recs[0].psn, 3));
                        o.want.get_mut(&qp).unwrap().extend(recs);
                        posted[k] += 1;
                    }
                };
                if wrap_phase == 0 {
                    // Two messages, the second ending at the wrap: the
                    // engine's last commit of the batch stores the QP's
                    // next PSN and slot sequence for the next doorbell.
                    post(2, &mut o, &mut r);
                    x.db_valid.next = true;
                    x.db_qp.next = (qp as u64).into();
                    x.db_value.next = 2u64.into();
                    wrap_phase = 1;
                } else if wrap_phase == 1 && fetched[k] >= 2 && o.got[&qp].len() == o.want[&qp].len() && idle > 10 {
                    // Three more on a new doorbell: loaded from that word.
                    post(3, &mut o, &mut r);
                    x.db_valid.next = true;
                    x.db_qp.next = (qp as u64).into();
                    x.db_value.next = 5u64.into();
                    wrap_phase = 2;
                } else if wrap_phase == 2 && o.got[&qp].len() == o.want[&qp].len() && idle > 10 {
                    // Five committed: slots hold messages 4, 1, 2, 3, so the
                    // second message (PSNs 0xFFFFFD..0xFFFFFF) is still there
                    // (with the carry in the stored sequence, the second
                    // batch took slots 3, 0, 1 and the fifth replaced it).
                    let psn = msgs[k][1].0;
                    assert_eq!(psn, 0xFF_FFFD);
                    o.rtx_want.push((qp, ref_by_psn[&(k, psn)]));
                    rtx_pending = Some((k, psn));
                    wrap_phase = 3;
                }
            } else if p.all_qps {
                if phase == 0 {
                    for (k, &(qp, lm, ls, _, base)) in SETUPS.iter().enumerate() {
                        let size = 1u32 << ls;
                        for _ in 0..size {
                            let mut d = descriptor(&mut r, lm);
                            d.length = r.below(1 << lm) as u32 + 1;
                            let slot = base.wrapping_add(64 * u64::from(posted[k] & (size - 1)));
                            mem.insert(slot, d.encode().unwrap());
                            slot_qp.insert(slot, k);
                            let recs = reference(&mut models[k], &d);
                            o.want_msg.entry(qp).or_default().push(msg_rec(&d, posted[k], &recs));
                            for rec in &recs {
                                iova.insert((k, rec.psn), d.local_iova);
                                ref_by_psn.insert((k, rec.psn), *rec);
                                psn_msg.insert((k, rec.psn), msgs[k].len());
                            }
                            msgs[k].push((recs[0].psn, recs.len() as u32));
                            o.want.get_mut(&qp).unwrap().extend(recs);
                            posted[k] += 1;
                        }
                    }
                    phase = 1;
                } else if (1..=3).contains(&phase) {
                    let k = usize::from(phase - 1);
                    if trace {
                        eprintln!("{cycle}: doorbell QP {} {}", SETUPS[k].0, posted[k]);
                    }
                    x.db_valid.next = true;
                    x.db_qp.next = (SETUPS[k].0 as u64).into();
                    x.db_value.next = u64::from(posted[k]).into();
                    phase = if phase == 3 { 22 } else { phase + 1 };
                }
            } else if p.directed && p.wrap_first && (warm_sent < 20 || cycle < warm_last + 20) {
                if warm_sent < 20 && cycle >= warm_last + 8 {
                    x.db_valid.next = true;
                    x.db_qp.next = (SETUPS[2].0 as u64).into();
                    x.db_value.next = 0u64.into();
                    warm_sent += 1;
                    warm_last = cycle;
                }
            } else if p.directed {
                let k = 2;
                let (qp, lm, ls, _, base) = setup(k, p.deep);
                let size = 1u32 << ls;
                if phase == 0 {
                    for _ in 0..size {
                        let mut d = descriptor(&mut r, lm);
                        if p.burst && p.long && p.long_len != 0 {
                            d.length = p.long_len;
                        } else if p.burst && p.long {
                            d.length = 6 << lm;
                        } else if p.burst && p.deep {
                            // 1-3 packets: PSN ranges of unequal sizes for
                            // the retransmit search.
                            d.length = r.below(3 << lm) as u32 + 1;
                        } else if p.burst {
                            // Single-packet messages: the per-message cost.
                            d.length = r.below(1 << lm) as u32 + 1;
                        }
                        let slot = base + 64 * u64::from(posted[k] & (size - 1));
                        mem.insert(slot, d.encode().unwrap());
                        slot_qp.insert(slot, k);
                        let recs = reference(&mut models[k], &d);
                        o.want_msg.entry(qp).or_default().push(msg_rec(&d, posted[k], &recs));
                        for rec in &recs {
                            iova.insert((k, rec.psn), d.local_iova);
                            ref_by_psn.insert((k, rec.psn), *rec);
                            psn_msg.insert((k, rec.psn), msgs[k].len());
                        }
                        msgs[k].push((recs[0].psn, recs.len() as u32));
                        o.want.get_mut(&qp).unwrap().extend(recs);
                        posted[k] += 1;
                    }
                    phase = 1;
                }
                if p.bad_at != 0 && cycle == p.bad_at {
                    if std::env::var_os("REQ_TRACE").is_some() {
                        eprintln!("cycle {cycle}: bad doorbell");
                    }
                    let v = size * 4 + 7;
                    x.db_valid.next = true;
                    x.db_qp.next = (qp as u64).into();
                    x.db_value.next = u64::from(v).into();
                    db_bad[k] += 1;
                    o.want_err.get_mut(&qp).unwrap().push(ErrRec::bad_doorbell(v));
                } else if p.burst {
                    if phase == 1 && p.split_at != 0 {
                        if std::env::var_os("REQ_TRACE").is_some() {
                            eprintln!("cycle {cycle}: doorbell, producer index 2");
                        }
                        x.db_valid.next = true;
                        x.db_qp.next = (qp as u64).into();
                        x.db_value.next = 2u64.into();
                        phase = 3;
                    } else if phase == 3 && cycle >= p.split_at {
                        if std::env::var_os("REQ_TRACE").is_some() {
                            eprintln!("cycle {cycle}: doorbell, producer index {size}");
                        }
                        x.db_valid.next = true;
                        x.db_qp.next = (qp as u64).into();
                        x.db_value.next = u64::from(size).into();
                        phase = 22;
                    } else if phase == 1 && (p.good_after_bad == 0 || cycle == p.bad_at + p.good_after_bad) {
                        if std::env::var_os("REQ_TRACE").is_some() {
                            eprintln!("cycle {cycle}: burst doorbell, producer index {size}");
                        }
                        x.db_valid.next = true;
                        x.db_qp.next = (qp as u64).into();
                        x.db_value.next = u64::from(size).into();
                        phase = if p.fair { 2 } else { 22 };
                    } else if phase == 2 && cycle >= p.fair_at {
                        // Messages on QP 77 (one unless `fair_msgs`), rung
                        // right after.
                        let (qp1, lm1, _, _, base1) = SETUPS[1];
                        let n = p.fair_msgs.max(1);
                        for _ in 0..n {
                            let mut d = descriptor(&mut r, lm1);
                            d.length = 1;
                            let slot = base1 + 64 * u64::from(posted[1]);
                            mem.insert(slot, d.encode().unwrap());
                            slot_qp.insert(slot, 1);
                            let recs = reference(&mut models[1], &d);
                            o.want_msg.entry(qp1).or_default().push(msg_rec(&d, posted[1], &recs));
                            for rec in &recs {
                                iova.insert((1, rec.psn), d.local_iova);
                                psn_msg.insert((1, rec.psn), msgs[1].len());
                            }
                            msgs[1].push((recs[0].psn, recs.len() as u32));
                            o.want.get_mut(&qp1).unwrap().extend(recs);
                            posted[1] += 1;
                        }
                        x.db_valid.next = true;
                        x.db_qp.next = (qp1 as u64).into();
                        x.db_value.next = u64::from(n).into();
                        phase = 22;
                    }
                } else if (1..=20).contains(&phase) {
                    // Producer indices 1, 1, 1, 1, 1, 2, 3, ... 16: the last
                    // ones carry the largest (a 16-entry FIFO dropped them).
                    x.db_valid.next = true;
                    x.db_qp.next = (qp as u64).into();
                    x.db_value.next = u64::from(u32::from(phase).saturating_sub(4).max(1)).into();
                    phase += 1;
                } else if phase == 21 {
                    // No later doorbell: the burst's must do all the work.
                    phase = 22;
                }
            } else {
                // Config writes while the engine runs: rows for QP 5 (never
                // rung) and for another table; they must disturb nothing
                // (COMMIT waits for a cycle without a config write).
                if p.bad && (r.chance(5) || cfg_at == Some(cycle)) {
                    let idle_row = bits::<256>(&ctx(2, false).encode().unwrap());
                    x.cfg.valid.next = true;
                    let table = if r.chance(50) { 1u64 } else { 3 };
                    cfg_t1_now = table == 1;
                    x.cfg.table.next = table.into();
                    x.cfg.index.next = 5u64.into();
                    x.cfg.data.next = idle_row;
                    o.cfg_noise += 1;
                }
                // Post and ring, gated by ring space. Doorbells of a QP
                // merge (its latest producer index is served), so a bad
                // one is rung only when none of the QP's good ones waits
                // (it would replace it) and no good one follows it before
                // its error record is out (it would replace the bad one);
                // good ones are not limited.
                if n_posted < p.n_desc && r.chance(p.post_pct) {
                    let k = r.below(3) as usize;
                    let k = if p.one_qp { 2 } else { k };
                    let (qp, lm, ls, _, base) = SETUPS[k];
                    let size = 1u32 << ls;
                    let space = size - (posted[k] - fetched[k]);
                    let good_waits = db_good.iter().any(|&(kk, _)| kk == k);
                    if db_bad[k] > 0 {
                        // The bad doorbell's error record first.
                    } else if p.bad && !good_waits && r.chance(20) {
                        // A doorbell beyond the ring: rejected whatever the
                        // engine's consumer index is by then.
                        let v = posted[k] + size + 1 + r.below(1000) as u32;
                        x.db_valid.next = true;
                        x.db_qp.next = (qp as u64).into();
                        x.db_value.next = u64::from(v).into();
                        db_bad[k] += 1;
                        o.want_err.get_mut(&qp).unwrap().push(ErrRec::bad_doorbell(v));
                    } else if space > 0 {
                        let n = 1 + r.below(u64::from(space.min(6))) as u32;
                        for _ in 0..n {
                            let slot = base.wrapping_add(64 * u64::from(posted[k] & (size - 1)));
                            if p.bad && r.chance(12) {
                                let (b, status) = bad_descriptor(&mut r, lm);
                                mem.insert(slot, b);
                                o.want_err.get_mut(&qp).unwrap().push(ErrRec {
                                    status: status as u8,
                                    opcode: b[0],
                                    wr_id: layout::sqe::WR_ID.get(&b),
                                    sq_index: posted[k],
                                    len: layout::sqe::LENGTH.get(&b) as u32,
                                });
                            } else {
                                let mut d = descriptor(&mut r, lm);
                                if n_posted % 20 == 7 {
                                    d.length = 0; // zero-length coverage on every seed
                                }
                                mem.insert(slot, d.encode().unwrap());
                                let recs = reference(&mut models[k], &d);
                                o.want_msg.entry(qp).or_default().push(msg_rec(&d, posted[k], &recs));
                                for rec in &recs {
                                    iova.insert((k, rec.psn), d.local_iova);
                                    ref_by_psn.insert((k, rec.psn), *rec);
                                    psn_msg.insert((k, rec.psn), msgs[k].len());
                                }
                                msgs[k].push((recs[0].psn, recs.len() as u32));
                                o.want.get_mut(&qp).unwrap().extend(recs);
                            }
                            slot_qp.insert(slot, k);
                            posted[k] += 1;
                            n_posted += 1;
                        }
                        x.db_valid.next = true;
                        x.db_qp.next = (qp as u64).into();
                        x.db_value.next = u64::from(posted[k]).into();
                        if trace {
                            eprintln!("{cycle}: doorbell QP {qp} {}", posted[k]);
                        }
                        db_good.push((k, posted[k]));
                    }
                } else if p.bad && n_posted >= p.n_desc && bad_tail < 3 && r.chance(5) {
                    // After the last post: a bad doorbell per QP once its
                    // good ones are served (while descriptors are posted the
                    // held QPs seldom have none waiting).
                    let k = bad_tail;
                    let (qp, _, ls, _, _) = SETUPS[k];
                    if db_bad[k] == 0 && !db_good.iter().any(|&(kk, _)| kk == k) {
                        let v = posted[k] + (1u32 << ls) + 1 + r.below(1000) as u32;
                        x.db_valid.next = true;
                        x.db_qp.next = (qp as u64).into();
                        x.db_value.next = u64::from(v).into();
                        db_bad[k] += 1;
                        bad_tail += 1;
                        o.want_err.get_mut(&qp).unwrap().push(ErrRec::bad_doorbell(v));
                    }
                }
            }
            // Retransmit requests.
            if p.rtx && rtx_pending.is_none() && r.chance(3) {
                let k = r.below(3) as usize;
                let start = SETUPS[k].3;
                if let Some(ls) = last_seen[k] {
                    let pick = if r.chance(40) {
                        // One of the last two messages seen: at most two
                        // more can be committed before the request is taken
                        // (one whose record waits in the output register, the
                        // one after it), so it is still among the records.
                        Some((ls - r.below(2.min(ls as u64 + 1)) as usize, true))
                    } else if acked[k] <= ls && r.chance(70) {
                        // Any message not acknowledged (no acknowledgement
                        // is issued while the request waits): its record
                        // cannot have been reused.
                        let m = acked[k] + r.below((ls - acked[k] + 1) as u64) as usize;
                        if m + 2 <= ls {
                            o.rtx_old_hits += 1;
                        }
                        Some((m, true))
                    } else if r.chance(50) {
                        // Any of the last `RTX_SLOTS - 2` messages seen,
                        // acknowledged or not: at most two more are
                        // committed before the request is taken (above), so
                        // its record is not reused yet.
                        let lo = ls.saturating_sub(RTX_SLOTS - 3);
                        let m = lo + r.below((ls - lo + 1) as u64) as usize;
                        if m + 2 <= ls {
                            o.rtx_old_hits += 1;
                        }
                        Some((m, true))
                    } else if ls >= RTX_SLOTS && r.chance(50) {
                        // More than the records back: reused.
                        Some((r.below((ls + 1 - RTX_SLOTS) as u64) as usize, false))
                    } else {
                        None
                    };
                    let psn = match pick {
                        Some((m, _)) => {
                            let (f, n) = msgs[k][m];
                            Psn::new(f).add(r.below(u64::from(n)) as u32).value()
                        }
                        // Never sent: before the start PSN.
                        None => Psn::new(start).sub(1 + r.below(5000) as u32).value(),
                    };
                    if matches!(pick, Some((_, true))) {
                        o.rtx_want.push((SETUPS[k].0, ref_by_psn[&(k, psn)]));
                    } else {
                        o.rtx_misses_issued += 1;
                    }
                    rtx_pending = Some((k, psn));
                }
            }
            for (at, committed) in p.rtx_script {
                if at != 0 && cycle == at {
                    rtx_script.extend(deep_rtx_requests(&msgs[2], committed));
                }
            }
            if rtx_pending.is_none() && !rtx_script.is_empty() {
                let (psn, hit) = rtx_script.remove(0);
                if hit {
                    o.rtx_want.push((SETUPS[2].0, ref_by_psn[&(2, psn)]));
                } else {
                    o.rtx_misses_issued += 1;
                }
                rtx_pending = Some((2, psn));
            }
            if p.err_rtx && qerr_taken && !err_rtx_sent && rtx_pending.is_none() {
                // A resend the retransmit engine queued before the error:
                // dropped (no record, not a miss).
                let psn = o.got[&SETUPS[2].0][0].psn;
                rtx_pending = Some((2, psn));
                err_rtx_sent = true;
            }
            x.rtx_valid.next = rtx_pending.is_some();
            // Acknowledgements: for a QP with messages all out and not yet
            // acknowledged, up to a random one of them; in 20% of cases
            // the last PSN of the oldest instead (the record stays in use:
            // the message ends after it). None while a retransmit request
            // waits (its record must stay).
            cfg_t1_last = cfg_t1_now;
            if una_pending.is_none()
                && rtx_pending.is_none()
                && cycle >= p.ack_from
                && (r.chance(p.ack_pct) || (cfg_t1_applied && r.chance(30)))
            {
                let cand: Vec<usize> = (0..3).filter(|&k| out_done[k] > acked[k]).collect();
                if !cand.is_empty() {
                    let k = cand[r.below(cand.len() as u64) as usize];
                    if r.chance(20) {
                        let (f, n) = msgs[k][acked[k]];
                        una[k] = Psn::new(f).add(n - 1).value();
                        una_pending = Some((k, una[k], acked[k], true));
                    } else {
                        let upto = acked[k] + 1 + r.below((out_done[k] - acked[k]) as u64) as usize;
                        let (f, n) = msgs[k][upto - 1];
                        una[k] = Psn::new(f).add(n).value();
                        acked[k] = upto;
                        una_pending = Some((k, una[k], upto, false));
                    }
                }
            }
            if p.partial_ack_at != 0 && cycle == p.partial_ack_at {
                assert!(una_pending.is_none() && rtx_pending.is_none());
                let k = 2;
                let (f, n) = msgs[k][p.partial_ack_msgs - 1];
                una[k] = Psn::new(f).add(n).value();
                acked[k] = p.partial_ack_msgs;
                una_pending = Some((k, una[k], p.partial_ack_msgs, false));
            }
            x.qerr_valid.next = !qerr_taken
                && ((p.err_at != 0 && cycle >= p.err_at)
                    || (p.err_after != 0 && o.got[&SETUPS[2].0].len() >= p.err_after));
            x.qerr_qp.next = (SETUPS[2].0 as u64).into();
            x.una_valid.next = una_pending.is_some();
            if let Some((k, u, _, _)) = una_pending {
                x.una_qp.next = (SETUPS[k].0 as u64).into();
                x.una_psn.next = u64::from(u).into();
            }
            if let Some((k, psn)) = rtx_pending {
                x.rtx_qp.next = (SETUPS[k].0 as u64).into();
                x.rtx_psn.next = u64::from(psn).into();
            }
            // DMA: request handshake, responses after their latency.
            let fetch_blocked = p.directed && !p.burst && phase <= 20;
            x.dma_rd.req.ready.next = !fetch_blocked && p.dma_ready.go(&mut r);
            x.dma_rd.rsp.valid.next = false;
            if let Some(&(addr, tag, ready, last)) = dma_q.front() {
                if cycle >= ready && p.rsp_valid.go(&mut r) {
                    x.dma_rd.rsp.valid.next = true;
                    x.dma_rd.rsp.data.next = bits::<512>(&mem[&addr]);
                    x.dma_rd.rsp.keep.next = u64::MAX.into();
                    x.dma_rd.rsp.last.next = last;
                    x.dma_rd.rsp.tag.next = tag.into();
                }
            }
            x.out_ready.next = p.out_ready.go(&mut r);
            // Admission: a refused first transmission yields (the core's
            // `out_yield`); its QP opens later.
            let yielding = x.out_valid.val() && !x.out_retransmit.val() && r.below(100) < p.yield_pct;
            x.out_yield.next = yielding;
            x.out_yield_reopen.next = yielding && r.below(5) == 0;
            if yielding {
                x.out_ready.next = false;
                let qp = x.out_qp.val().index();
                opens.push((cycle + p.reopen_after + r.below(p.reopen_after + 1), qp));
                yielded.insert(qp);
                o.yields += 1;
                if trace {
                    eprintln!(
                        "{cycle}: QP {qp} yield psn {} reopen {}",
                        x.out_psn.val().index(),
                        x.out_yield_reopen.val()
                    );
                }
            }
            x.open_valid.next = false;
            if let Some(i) = opens.iter().position(|&(c, _)| c <= cycle) {
                let (_, qp) = opens.remove(i);
                x.open_valid.next = true;
                x.open_qp.next = (qp as u64).into();
                if trace {
                    eprintln!("{cycle}: QP {qp} open");
                }
            }
            x.err_ready.next = ERR_BACKPRESSURE.go(&mut r);
            x.msg_ready.next = p.msg_ready.go(&mut r);

            // ---- sample at the falling edge ----
            wait_clock_false!(sim, clock, x);
            let mut activity = false;
            let out_ready = x.out_ready.val();
            if x.dma_rd.req.valid.val() && x.dma_rd.req.ready.val() {
                let addr = x.dma_rd.req.addr.val().to_u64();
                let len = x.dma_rd.req.len.val().to_u64();
                let tag = x.dma_rd.req.tag.val().to_u64();
                assert!(
                    len % 64 == 0 && (64..=512).contains(&len),
                    "batch of 1-8 descriptors: {len} bytes"
                );
                let n = len / 64;
                let ready = cycle + p.latency + r.below(p.max_latency + 1);
                o.fetches.push((cycle, n));
                if !dma_q.is_empty() {
                    o.overlapped += 1;
                }
                for i in 0..n {
                    let a = addr.wrapping_add(64 * i);
                    // Every beat a posted slot of this QP's ring: a batch
                    // never runs past the ring's end.
                    let k = *slot_qp
                        .get(&a)
                        .unwrap_or_else(|| panic!("DMA read of {a:#x}: not a posted ring slot"));
                    assert_eq!(tag, SETUPS[k].0 as u64 & 127, "tag = the QP's low 7 bits");
                    dma_q.push_back((a, tag, ready, i + 1 == n));
                }
                o.max_beats_due = o.max_beats_due.max(dma_q.len());
                *o.batches.entry(n).or_insert(0) += 1;
                if trace {
                    eprintln!("{cycle}: fetch {addr:#x} (QP {tag})");
                }
                activity = true;
            }
            if x.dma_rd.rsp.valid.val() && x.dma_rd.rsp.ready.val() {
                let (addr, _, _, _) = dma_q.pop_front().unwrap();
                o.first_beat.get_or_insert(cycle);
                let k = slot_qp[&addr];
                if trace {
                    eprintln!(
                        "{cycle}: fetched {addr:#x} len {}",
                        layout::sqe::LENGTH.get(&mem[&addr])
                    );
                }
                fetched[k] += 1;
                if r.chance(50) {
                    // Aim a config write at the descriptor's COMMIT cycle
                    // (its beat is taken at this edge; DECODE, then COMMIT).
                    cfg_at = Some(cycle + 2);
                }
                *o.dma_reads.entry(k).or_insert(0) += 1;
                db_good.retain(|&(kk, v)| !(kk == k && fetched[k] >= v));
                activity = true;
            }
            if x.rtx_valid.val() && x.rtx_ready.val() {
                rtx_pending = None;
                activity = true;
            }
            if x.qerr_valid.val() && x.qerr_ready.val() {
                // In error: no record is held for QP 255 any more.
                qerr_taken = true;
                o.qerr_cycle = Some(cycle);
                released[2] = usize::MAX;
                activity = true;
            }
            if x.una_valid.val() && !x.una_ready.val() {
                o.una_stalls += 1;
            }
            if x.una_valid.val() && x.una_ready.val() {
                let (k, _, n, partial) = una_pending.take().unwrap();
                released[k] = released[k].max(n);
                o.una_taken += 1;
                o.una_partial += u64::from(partial);
                activity = true;
            }
            if x.out_valid.val() && !out_ready {
                o.out_stalls += 1;
            }
            if x.out_valid.val() && out_ready {
                let qp = x.out_qp.val().index();
                let k = SETUPS
                    .iter()
                    .position(|s| s.0 == qp)
                    .expect("record for a configured QP");
                let psn = x.out_psn.val().index() as u32;
                let op = x.out_opcode.val().index() as u8;
                let local = *iova
                    .get(&(k, psn))
                    .unwrap_or_else(|| panic!("record for QP {qp} PSN {psn:#x}: never posted"));
                let rec = Rec {
                    psn,
                    opcode: op,
                    ack_req: x.out_ack_req.val(),
                    first: x.out_first.val(),
                    addr_off: x.out_addr.val().to_u64().wrapping_sub(local),
                    len: x.out_len.val().index() as u32,
                    remote_va: x.out_remote_va.val().to_u64(),
                    rkey: x.out_rkey.val().to_u64() as u32,
                    dma_len: has_reth(op).then(|| x.out_dma_len.val().to_u64() as u32),
                    imm: has_imm(op).then(|| x.out_imm.val().to_u64() as u32),
                    msg_offset: x.out_msg_offset.val().to_u64() as u32,
                };
                assert_eq!(x.out_last.val(), x.out_ack_req.val());
                if trace {
                    eprintln!("{cycle}: QP {qp} rtx {} {rec:?}", x.out_retransmit.val());
                }
                if k == 2 && o.qerr_cycle.is_some_and(|c| cycle > c) {
                    o.after_err += 1;
                }
                if x.out_retransmit.val() {
                    o.rtx_got.push((qp, rec));
                    o.rtx_cycles.push(cycle);
                } else {
                    let m = psn_msg.get(&(k, psn)).copied();
                    if let Some(m) = m {
                        last_seen[k] = Some(last_seen[k].map_or(m, |l| l.max(m)));
                        if x.out_last.val() {
                            out_done[k] = out_done[k].max(m + 1);
                        }
                    }
                    if let Some(&(c, pp)) = last_take.get(&qp) {
                        if c + 1 == cycle && Psn::new(pp).next().value() == psn && !rec.first {
                            o.back_to_back += 1;
                        }
                    }
                    last_take.insert(qp, (cycle, psn));
                    o.take_cycles.entry(qp).or_default().push(cycle);
                    o.order.push(qp);
                    let n = o.got[&qp].len();
                    let want = o.want[&qp].get(n).copied();
                    assert_eq!(Some(rec), want, "QP {qp} record {n}");
                    o.after_yield += u64::from(yielded.contains(&qp));
                    o.got.get_mut(&qp).unwrap().push(rec);
                }
                activity = true;
            }
            if x.msg_valid.val() && !x.msg_ready.val() {
                o.msg_stalls += 1;
            }
            if x.msg_valid.val() {
                // Committed: at most RTX_SLOTS messages of the QP (this one
                // included) not acknowledged by the una the hardware took.
                let qp = x.msg_qp.val().index();
                let k = SETUPS
                    .iter()
                    .position(|s| s.0 == qp)
                    .expect("message record for a configured QP");
                let m = psn_msg[&(k, x.msg_first_psn.val().index() as u32)];
                let unacked = (m + 1).saturating_sub(released[k]);
                assert!(
                    unacked <= RTX_SLOTS,
                    "QP {qp}: message {m} committed with {} older messages unacknowledged (una taken releases {})",
                    unacked - 1,
                    released[k]
                );
                let e = o.max_unacked.entry(qp).or_insert(0);
                *e = (*e).max(unacked);
            }
            if x.msg_valid.val() && x.msg_ready.val() {
                let qp = x.msg_qp.val().index();
                let m = MsgRec {
                    wr_id: x.msg_wr_id.val().to_u64(),
                    opcode: x.msg_opcode.val().index() as u8,
                    len: x.msg_len.val().to_u64() as u32,
                    sq_index: x.msg_sq_index.val().to_u64() as u32,
                    signaled: x.msg_signaled.val(),
                    first_psn: x.msg_first_psn.val().index() as u32,
                    last_psn: x.msg_last_psn.val().index() as u32,
                };
                let n = o.got_msg.get(&qp).map_or(0, |v| v.len());
                let want = o.want_msg.get(&qp).and_then(|v| v.get(n)).copied();
                assert_eq!(Some(m), want, "QP {qp} message record {n}");
                o.got_msg.entry(qp).or_default().push(m);
                activity = true;
            }
            if x.err_valid.val() && x.err_ready.val() {
                let qp = x.err_qp.val().index();
                let e = ErrRec {
                    status: x.err_status.val().index() as u8,
                    opcode: x.err_opcode.val().index() as u8,
                    wr_id: x.err_wr_id.val().to_u64(),
                    sq_index: x.err_sq_index.val().to_u64() as u32,
                    len: x.err_len.val().to_u64() as u32,
                };
                // Descriptor errors come in SQ order, doorbell errors in
                // doorbell order; between the two kinds the order depends
                // on when a re-queued doorbell comes round again.
                let kind = |x: &ErrRec| x.status == CqStatus::BadDoorbell as u8;
                let n = o
                    .got_err
                    .get(&qp)
                    .map_or(0, |v| v.iter().filter(|x| kind(x) == kind(&e)).count());
                let want = o
                    .want_err
                    .get(&qp)
                    .and_then(|v| v.iter().filter(|x| kind(x) == kind(&e)).nth(n))
                    .copied();
                assert_eq!(Some(e), want, "QP {qp} error record {n} of its kind");
                o.got_err.entry(qp).or_default().push(e);
                if e.status == CqStatus::BadDoorbell as u8 {
                    let k = SETUPS.iter().position(|s| s.0 == qp).unwrap();
                    db_bad[k] -= 1;
                }
                activity = true;
            }
            let pulses = [
                x.cnt_bad_opcode.val(),
                x.cnt_bad_flags.val(),
                x.cnt_bad_length.val(),
                x.cnt_bad_doorbell.val(),
                x.cnt_bad_cfg.val(),
                x.cnt_rtx_miss.val(),
                x.cnt_db_stale.val(),
                x.cnt_sq_held.val(),
            ];
            if trace && (x.cnt_sq_held.val() || x.cnt_db_stale.val()) {
                eprintln!("{cycle}: held {} stale {}", x.cnt_sq_held.val(), x.cnt_db_stale.val());
            }
            if trace && x.una_valid.val() && x.una_ready.val() {
                eprintln!(
                    "{cycle}: una QP {} {:#x}",
                    x.una_qp.val().index(),
                    x.una_psn.val().index()
                );
            }
            for (name, v) in COUNTERS.iter().zip(pulses) {
                *o.counters.entry(name).or_insert(0) += u64::from(v);
            }
            wait_clock_true!(sim, clock, x);
            cycle += 1;
            if activity {
                idle = 0;
            } else {
                idle += 1;
            }
            // QP 255 in error sends nothing more: its records stop.
            let all_out = o
                .want
                .iter()
                .all(|(q, w)| o.got[q].len() == w.len() || (*q == SETUPS[2].0 && qerr_taken));
            let all_err = o
                .want_err
                .iter()
                .all(|(q, w)| o.got_err.get(q).map_or(0, |v| v.len()) == w.len());
            let all_msg = o
                .want_msg
                .iter()
                .all(|(q, w)| o.got_msg.get(q).map_or(0, |v| v.len()) == w.len());
            let posted_all = if p.rtx_wrap {
                wrap_phase == 3
            } else if p.directed || p.all_qps {
                phase == 22
            } else {
                n_posted >= p.n_desc && (!p.bad || bad_tail == 3)
            };
            if posted_all
                && all_out
                && all_err
                && all_msg
                && rtx_pending.is_none()
                && una_pending.is_none()
                && idle > 50
            {
                break;
            }
            if idle > 3000 || cycle > 200_000 {
                panic!(
                    "stuck at cycle {cycle}: posted {posted:?} fetched {fetched:?} out {all_out} err {all_err} \
                     messages out {out_done:?} acknowledged {acked:?} released {released:?}"
                );
            }
        }
        o.cycles = cycle;
        assert_eq!(o.counters["bad_cfg"], expect_bad_cfg);
        drop(o);
        sim.done(x)
    });
    let t = std::time::Instant::now();
    sim.run(Box::new(uut), 100_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_requester", || {
        hw::flow::emit_block("mrc_requester", &mut Requester::default()).verilog
    });
    let o = Arc::try_unwrap(out).ok().unwrap().into_inner().unwrap();
    eprintln!("{} cycles simulated in {:?}", o.cycles, t.elapsed());
    o
}

fn check_common(o: &Outcome) {
    assert!(
        o.max_beats_due <= DESC_BEATS_OUT,
        "{} descriptor beats requested and not taken: more than the core's FIFO holds",
        o.max_beats_due
    );
    for (q, w) in &o.want_msg {
        assert_eq!(
            o.got_msg.get(q),
            Some(w),
            "QP {q}: one message record per valid descriptor, in SQ order"
        );
    }
    for (q, w) in &o.want {
        // A QP in error (255) stops: its records are the reference's first.
        let w = match o.qerr_cycle {
            Some(_) if *q == SETUPS[2].0 => &w[..o.got[q].len().min(w.len())],
            _ => &w[..],
        };
        assert_eq!(&o.got[q][..], w, "QP {q}: every reference packet, in order");
    }
    // Nothing new of a QP in error after its report's cycle: only the
    // record the output register held (or took) in that cycle.
    assert!(o.after_err <= 1, "{} records after the error report", o.after_err);
    for (q, w) in &o.want_err {
        for db in [false, true] {
            let kind = |x: &&ErrRec| (x.status == CqStatus::BadDoorbell as u8) == db;
            let got: Vec<ErrRec> = o
                .got_err
                .get(q)
                .map(|v| v.iter().filter(kind).copied().collect())
                .unwrap_or_default();
            let want: Vec<ErrRec> = w.iter().filter(kind).copied().collect();
            assert_eq!(got, want, "QP {q}: error records (doorbell kind: {db})");
        }
    }
    // Counters: one pulse per rejected descriptor / doorbell, by status.
    let count = |s: CqStatus| o.want_err.values().flatten().filter(|e| e.status == s as u8).count() as u64;
    assert_eq!(o.counters["bad_opcode"], count(CqStatus::BadOpcode));
    assert_eq!(o.counters["bad_flags"], count(CqStatus::BadFlags));
    assert_eq!(o.counters["bad_length"], count(CqStatus::BadLength));
    assert_eq!(o.counters["bad_doorbell"], count(CqStatus::BadDoorbell));
    // Retransmits: exactly the requested hits, each the reference record.
    let mut want = o.rtx_want.clone();
    let mut got = o.rtx_got.clone();
    let key = |a: &(usize, Rec)| (a.0, a.1.psn, a.1.msg_offset);
    want.sort_by_key(key);
    got.sort_by_key(key);
    assert_eq!(got, want, "retransmitted records");
    assert_eq!(o.counters["rtx_miss"], o.rtx_misses_issued);
}

/// The random mix of `requester_matches_proto_segmentation`: 90
/// descriptors (some bad), stalls on every port, short DMA latencies,
/// retransmit requests, and acknowledgements from cycle 400 on that free
/// records now and then.
fn random_mix(seed: u64) -> Params {
    Params {
        seed,
        n_desc: 90,
        out_ready: Stall::go_percent(75),
        msg_ready: Stall::go_percent(60),
        dma_ready: Stall::go_percent(70),
        rsp_valid: Stall::go_percent(75),
        max_latency: 8,
        rtx: true,
        bad: true,
        ack_pct: 4,
        ack_from: 400,
        ..Params::default()
    }
}

#[test]
fn requester_matches_proto_segmentation() {
    // REQ_SEED=<n> runs another seed.
    let seed = std::env::var("REQ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5E9_0001);
    let o = run(random_mix(seed));
    check_common(&o);
    // Coverage.
    let all: Vec<&Rec> = o.want.values().flatten().collect();
    let ops: std::collections::BTreeSet<u8> = all.iter().map(|r| r.opcode).collect();
    let n_err = |s: CqStatus| o.want_err.values().flatten().filter(|e| e.status == s as u8).count();
    let multi = all.iter().filter(|r| r.opcode == 0x07).count();
    let empty = all.iter().filter(|r| r.len == 0).count();
    let wrap = o.want[&0].windows(2).filter(|w| w[1].psn < w[0].psn).count();
    eprintln!(
        "records {} opcodes {ops:x?} middles {multi} empty {empty} psn wraps {wrap}; errors: opcode {} flags {} length {} doorbell {}; \
         retransmits {} misses {}; out stalls {} back-to-back {}; descriptors per QP {:?}, batches (size: count) {:?}, stale doorbells {}",
        all.len(),
        n_err(CqStatus::BadOpcode),
        n_err(CqStatus::BadFlags),
        n_err(CqStatus::BadLength),
        n_err(CqStatus::BadDoorbell),
        o.rtx_want.len(),
        o.rtx_misses_issued,
        o.out_stalls,
        o.back_to_back,
        o.dma_reads,
        o.batches,
        o.counters["db_stale"]
    );
    assert!(o.batches.keys().any(|&n| n >= 3), "batched fetches: {:?}", o.batches);
    assert_eq!(ops.len(), 6, "every WRITE opcode: {ops:x?}");
    assert!(
        multi >= 20 && empty >= 1 && wrap >= 1,
        "middles {multi} empty {empty} wrap {wrap}"
    );
    for s in [
        CqStatus::BadOpcode,
        CqStatus::BadFlags,
        CqStatus::BadLength,
        CqStatus::BadDoorbell,
    ] {
        assert!(n_err(s) >= 1, "{s:?} unexercised");
    }
    assert!(o.rtx_want.len() >= 5 && o.rtx_misses_issued >= 2, "retransmit coverage");
    assert!(o.out_stalls >= 20 && o.back_to_back >= 10);
    let n_msg: usize = o.got_msg.values().map(|v| v.len()).sum();
    let signaled = o.got_msg.values().flatten().filter(|m| m.signaled).count();
    assert!(o.msg_stalls >= 20, "message record stalls: {}", o.msg_stalls);
    assert!(
        signaled >= 5 && n_msg - signaled >= 5,
        "signaled {signaled} of {n_msg} message records"
    );
    assert!(o.cfg_noise >= 50, "config writes during operation: {}", o.cfg_noise);
    // The 4-slot ring of QP 0 went round at least twice.
    assert!(o.dma_reads[&0] >= 8, "ring wrap on QP 0: {:?}", o.dma_reads);
    // Many messages in flight (the rule above holds each commit to
    // `RTX_SLOTS`; this run's 90 descriptors do not fill the records, the
    // deep tests below do and are held); acknowledgements ending on a
    // message's last PSN, and some waiting for a config write; retransmits
    // of older unacknowledged messages.
    eprintln!(
        "most unacknowledged {:?}, held pulses {}, acknowledgements {} ({} on a last PSN, {} stall cycles), old retransmit hits {}",
        o.max_unacked, o.counters["sq_held"], o.una_taken, o.una_partial, o.una_stalls, o.rtx_old_hits
    );
    assert!(
        o.max_unacked.values().all(|&n| n > FORMER_RTX_SLOTS) && o.max_unacked.len() == 3,
        "{:?}",
        o.max_unacked
    );
    assert!(o.una_partial >= 3 && o.una_taken >= 20 && o.una_stalls >= 1);
    assert!(
        o.rtx_old_hits >= 3,
        "retransmits of older unacknowledged messages: {}",
        o.rtx_old_hits
    );
}

/// Doorbells while the engine is stuck on a fetch (QP 255, 16 slots):
/// 20 in consecutive cycles (producer indices 1, 1, 1, 1, 1, 2, ..., 16)
/// and no later one. The first is in service; the others merge into the
/// QP's pending bit and producer index, so all 16 messages go out (the
/// run stops with "stuck" otherwise) and none is stale. The 16-entry
/// doorbell FIFO this replaced dropped the last 3 (producer indices 14-16)
/// and left the last 3 messages unsent. Also: with the output always
/// ready, a message's records leave one per cycle.
/// The random mix (retransmit requests, bad descriptors, acknowledgements
/// that free records) with the admission refusing a fifth of the first
/// transmissions (docs/hw/requester.md, "A QP held by its window
/// yields"): each refused record is taken back, its QP shut until an
/// open 40-80 cycles later. Every QP's first transmissions must still be
/// the reference's, each once and in PSN order (the yielded records come
/// back from the QP's backlog), the resends exactly those requested, the
/// message records one per descriptor. Replayed on the Verilog.
#[test]
fn yields_keep_every_qps_records_in_order() {
    // REQ_YIELD_SEED=<n> runs another seed. Seed 7 found a pick searched
    // before its QP was shut (the QP then lost its pending bit), seed 8 a
    // resend request taken and dropped in a yield's cycle.
    let seeds: Vec<u64> = match std::env::var("REQ_YIELD_SEED").ok().and_then(|s| s.parse().ok()) {
        Some(s) => vec![s],
        None => vec![7, 8],
    };
    for seed in seeds {
        let o = run(Params {
            yield_pct: 20,
            reopen_after: 40,
            ..random_mix(seed)
        });
        check_common(&o);
        eprintln!(
            "seed {seed}: yields {}, first transmissions after a yield of their QP {}",
            o.yields, o.after_yield
        );
        assert!(o.yields >= 40, "{} yields", o.yields);
        assert!(o.after_yield >= 100, "{} records after a yield", o.after_yield);
        assert!(!o.rtx_want.is_empty(), "resends interleave with the backlogs");
    }
}

#[test]
fn doorbell_burst_loses_nothing() {
    let o = run(Params {
        seed: 0x0F10_0001,
        directed: true,
        ..Params::default()
    });
    check_common(&o);
    assert_eq!(o.got[&255].len(), o.want[&255].len());
    assert_eq!(o.got_msg[&255].len(), 16, "every message");
    assert_eq!(o.counters["db_stale"], 0, "merged doorbells are not stale");
    for msg in o.want[&255]
        .iter()
        .zip(&o.take_cycles[&255])
        .collect::<Vec<_>>()
        .windows(2)
    {
        if !msg[1].0.first {
            assert_eq!(msg[1].1 - msg[0].1, 1, "one record per cycle within a message");
        }
    }
}

/// The same burst after 20 empty doorbells (each served before the next):
/// nothing of the burst is lost either, and the empty doorbells are not
/// stale. (For the FIFO this was the test of its full flag across a
/// pointer wrap.)
#[test]
fn doorbell_burst_after_empty_doorbells() {
    let o = run(Params {
        seed: 0x0F10_0002,
        directed: true,
        wrap_first: true,
        ..Params::default()
    });
    check_common(&o);
    assert_eq!(o.got_msg[&255].len(), 16, "every message");
    assert_eq!(o.counters["db_stale"], 0, "empty doorbells are not stale");
}

/// A message that ends at the 24-bit PSN wrap (0xFFFFFD + 3 packets): the
/// engine stores its next PSN and retransmit slot sequence in one 62-bit
/// word. Packed inline as `bit_cast::<62, 24>(psn + npkts) << 32`, the
/// emitted Verilog added at 62 bits and carried the wrap into the stored
/// slot sequence (2 became 3): the next doorbell's batch loaded it, took
/// the wrong slots and the fifth message overwrote the second early, so
/// its retransmit request missed in the Verilog while rust-hdl found it
/// (the lockstep replay failed at cycle 81). Since the requester holds a
/// 5th message until the first is acknowledged, the old packing no longer
/// changes this test's outcome; the flow's width check (`hw::flow::widen`,
/// tests/flow.rs) is what rejects that expression now. The test stays as
/// a directed run of a message ending at the PSN wrap.
#[test]
fn retransmit_slot_after_psn_wrap() {
    let o = run(Params {
        seed: 0x5E0_0001,
        max_latency: 2,
        rtx_wrap: true,
        ..Params::default()
    });
    check_common(&o);
    assert_eq!(o.rtx_got.len(), 1, "the retransmitted packet");
    assert_eq!(o.rtx_got[0].1.psn, 0xFF_FFFD);
    assert!(o.want[&0].windows(2).any(|w| w[1].psn < w[0].psn), "the PSNs wrap");
}

/// 16 single-packet messages posted with one doorbell, DMA answering at
/// once, the output always ready and each message acknowledged as soon as
/// its record is out: two batches of `MAX_BATCH` (the retransmit records
/// are far from full); each message costs 4 cycles (beat, decode, commit,
/// its record), each batch 2 more (next, request) plus the DMA's
/// turnaround and the QP's LOAD and RECLAIM.
#[test]
fn batched_fetch_throughput() {
    let o = run(Params {
        seed: 0xBA7C_0001,
        directed: true,
        burst: true,
        ..Params::default()
    });
    check_common(&o);
    eprintln!("batches (size: count) {:?}", o.batches);
    assert_eq!(
        o.batches.get(&(MAX_BATCH as u64)),
        Some(&2),
        "two full batches: {:?}",
        o.batches
    );
    assert_eq!(o.batches.iter().map(|(n, c)| n * c).sum::<u64>(), 16);
    let t = &o.take_cycles[&255];
    assert_eq!(t.len(), 16);
    let gaps: Vec<u64> = t.windows(2).map(|w| w[1] - w[0]).collect();
    eprintln!("cycles between single-packet records: {gaps:?}");
    // Inside a batch: one message every 4 cycles.
    assert!(gaps[..MAX_BATCH - 1].iter().all(|&g| g == 4), "{gaps:?}");
    assert_eq!(
        gaps.iter().filter(|&&g| g == 4).count(),
        16 - o.batches.values().sum::<u64>() as usize,
        "{gaps:?}"
    );
}

/// Fetch ahead: QP 255 rings 2 single-packet messages, then (cycle 20,
/// while that read is out: 40 cycles of DMA latency) 16. The requester
/// must not wait for the first read's beats to ask for the next
/// descriptors: its second read is taken before the first beat comes
/// back, and holds the 6 descriptors the batch of 2 leaves of the 8 the
/// engine may have requested and not taken (the core's descriptor FIFO).
/// All 16 messages go out in order. On the requester that fetched after
/// each batch (main before this test) the second read came after the
/// first batch's beats.
#[test]
fn doorbell_during_a_fetch_reads_ahead() {
    let o = run(Params {
        seed: 0xA4EA_0001,
        directed: true,
        burst: true,
        split_at: 20,
        latency: 40,
        ..Params::default()
    });
    check_common(&o);
    eprintln!(
        "fetches (cycle, descriptors) {:?}, first beat {:?}",
        o.fetches, o.first_beat
    );
    assert_eq!(o.got_msg[&255].len(), 16, "every message");
    assert_eq!(o.counters["db_stale"], 0);
    let first_beat = o.first_beat.expect("a descriptor beat");
    assert!(o.fetches.len() >= 2, "{:?}", o.fetches);
    assert_eq!(o.fetches[0].1, 2, "the first doorbell's batch: {:?}", o.fetches);
    assert!(
        o.fetches[1].0 < first_beat,
        "second read before the first one's beats: {:?}, first beat at {first_beat}",
        o.fetches
    );
    assert_eq!(
        o.fetches[1].1,
        (MAX_BATCH - 2) as u64,
        "the ahead read fills the descriptor FIFO's room: {:?}",
        o.fetches
    );
    assert_eq!(o.fetches.iter().map(|f| f.1).sum::<u64>(), 16, "{:?}", o.fetches);
}

/// The random mix of `requester_matches_proto_segmentation` (stalls,
/// bad descriptors and doorbells, config writes, retransmits, held QPs),
/// posted to QP 255 only and sparsely (3% of cycles, 1-6 descriptors),
/// with a 30-40 cycle host latency, so that reads ahead are in flight
/// under all of it: every record, message and error record as the
/// reference, and at least 10 reads taken while an earlier one's beats
/// were still to come. On the requester without the read ahead there are
/// none.
#[test]
fn random_mix_with_reads_ahead() {
    let o = run(Params {
        seed: 0x5E9_0A11,
        n_desc: 90,
        out_ready: Stall::go_percent(75),
        msg_ready: Stall::go_percent(60),
        dma_ready: Stall::go_percent(70),
        rsp_valid: Stall::go_percent(75),
        latency: 30,
        max_latency: 10,
        one_qp: true,
        post_pct: 3,
        rtx: true,
        bad: true,
        ack_pct: 4,
        ack_from: 400,
        ..Params::default()
    });
    check_common(&o);
    eprintln!(
        "reads {}, taken while an earlier read's beats were due: {}",
        o.fetches.len(),
        o.overlapped
    );
    assert!(o.overlapped >= 10, "reads ahead in flight: {}", o.overlapped);
}

/// Descriptor reads of several QPs in flight at once: QPs 0, 77 and 255
/// have full rings (4, 8 and 16 single-packet messages) and ring their
/// doorbells in consecutive cycles, with a 40-cycle host latency. The
/// requester must issue a read for each of the three QPs before the first
/// read's beats come back (their round trips overlap), take the beats in
/// request order, and send every message as the reference. On the
/// requester with one read in flight across QPs (main before this test,
/// where a read ahead was made only for the QP in service and only with no
/// other QP pending) the second read came after the first one's beats.
#[test]
fn doorbells_on_several_qps_overlap_their_reads() {
    let o = run(Params {
        seed: 0x3A11_0001,
        all_qps: true,
        latency: 40,
        ..Params::default()
    });
    check_common(&o);
    eprintln!(
        "fetches (cycle, descriptors) {:?}, first beat {:?}",
        o.fetches, o.first_beat
    );
    let first_beat = o.first_beat.expect("a descriptor beat");
    let before = o.fetches.iter().filter(|f| f.0 < first_beat).count();
    assert!(
        before >= SETUPS.len(),
        "a read per QP before the first beat: {:?}, first beat at {first_beat}",
        o.fetches
    );
    let total: u64 = o.fetches.iter().map(|f| f.1).sum();
    assert_eq!(total, 4 + 8 + 16, "every descriptor read once: {:?}", o.fetches);
    for (qp, n) in [(0, 4), (77, 8), (255, 16)] {
        assert_eq!(o.got_msg[&qp].len(), n, "QP {qp}: every message");
    }
    assert_eq!(o.counters["db_stale"], 0);
}

/// Round robin between QPs, one batch at a time: QP 255 rings 16
/// single-packet messages, QP 77 one message a cycle later. QP 77's
/// record must come right after QP 255's first turn (one message: none
/// of the QP's is known yet, `TURN_BYTES`) rather than after all 16; QP
/// 255's re-queued doorbell then finishes.
#[test]
fn qps_share_the_engine_batch_by_batch() {
    let o = run(Params {
        seed: 0xFA1E_0001,
        directed: true,
        burst: true,
        fair: true,
        ..Params::default()
    });
    check_common(&o);
    eprintln!("output order: {:?}", o.order);
    let pos = o.order.iter().position(|&q| q == 77).expect("QP 77 served");
    assert_eq!(pos, 1, "QP 77 after QP 255's first turn: {:?}", o.order);
    assert_eq!(o.order.len(), 17);
    assert_eq!(o.counters["db_stale"], 0);
}

/// Turns of about `TURN_BYTES`: QP 255 rings 16 messages of one length,
/// QP 77 eight single-packet ones right after. While the other waits,
/// QP 255 takes one message on its first turn (no message of it known
/// yet), QP 77 one, then QP 255 its turn from its length (8 messages up
/// to 2 KiB, 4 up to 4 KiB, 2 up to 8 KiB, else 1: each bound and the
/// byte past it), QP 77 its other 7 (its messages are small), then QP
/// 255 the rest. With batches of `MAX_BATCH` whatever their size, QP 255
/// sent 8 messages before QP 77's first.
#[test]
fn qps_take_turns_of_about_turn_bytes() {
    // QP 255's MTU is 4 KiB (`SETUPS`).
    const MTU: u32 = 4096;
    for (len, turn) in [
        (6 * MTU, 1),
        (8192, 2),
        (8193, 1),
        (4096, 4),
        (4097, 2),
        (2048, 8),
        (2049, 4),
    ] {
        let o = run(Params {
            seed: 0xFA1E_0002,
            directed: true,
            burst: true,
            long: true,
            long_len: len,
            fair: true,
            fair_msgs: 8,
            ..Params::default()
        });
        check_common(&o);
        let p = len.div_ceil(MTU) as usize;
        let want: Vec<usize> = [(255, p), (77, 1), (255, turn * p), (77, 7), (255, (15 - turn) * p)]
            .iter()
            .flat_map(|&(qp, n)| std::iter::repeat_n(qp, n))
            .collect();
        assert_eq!(o.order, want, "{len}-byte messages: a turn of {turn}");
    }
}

/// A send-context row sets its QP up whatever the engine is doing for
/// another: QP 77's row comes while QP 255's burst is in service (at each
/// of 40 cycles in turn, so some land in NextBatch, Commit, Idle ...),
/// then its one message must leave from its start PSN. (A row applied
/// in NextBatch once lost its reset of the QP's dynamic state: the QP
/// then sent from PSN 0.)
#[test]
fn a_send_context_row_during_another_qps_service_sets_the_qp_up() {
    for at in 2..42 {
        let o = run(Params {
            seed: 0xC0F1_0000 + at,
            directed: true,
            burst: true,
            fair: true,
            late_cfg_at: at,
            fair_at: at + 1,
            ..Params::default()
        });
        check_common(&o);
        assert_eq!(o.got[&77].len(), 1, "row at cycle {at}");
    }
}

/// QP 255's messages completely out (their last record taken) before
/// `cycle`, and its records taken before it.
fn out_before(o: &Outcome, cycle: u64) -> (usize, usize) {
    let taken: Vec<(&Rec, &u64)> = o.got[&255].iter().zip(&o.take_cycles[&255]).collect();
    let records = taken.iter().filter(|(_, &c)| c < cycle).count();
    let messages = taken.iter().filter(|(r, &c)| c < cycle && r.ack_req).count();
    (messages, records)
}

/// The records of QP 255's first `n` reference messages.
fn records_of_first(o: &Outcome, n: usize) -> usize {
    let mut ends = o.want[&255].iter().enumerate().filter(|(_, r)| r.ack_req);
    ends.nth(n - 1).map_or(0, |(i, _)| i + 1)
}

/// A held QP does not block the others, and waits for its
/// acknowledgements: QP 255 rings 128 messages of 1-3 packets (a 128-SQE
/// ring) and gets no acknowledgement before cycle 1000; exactly its
/// `DEEP_IN_FLIGHT` (its retransmit records' worth) of messages go out, then it is held
/// (re-checked, `cnt_sq_held`). QP 77 rings one message at cycle 700,
/// while QP 255 is held: it must be served at once. From cycle 1000 every
/// message is acknowledged as soon as it is out, and QP 255's other 64
/// follow. Fails on the 4-record requester (4 messages before cycle 1000).
#[test]
fn held_qp_waits_for_acks_and_blocks_no_other() {
    let o = run(Params {
        seed: 0x401D_0001,
        directed: true,
        burst: true,
        fair: true,
        deep: true,
        ack_from: 1000,
        fair_at: 700,
        ..Params::default()
    });
    check_common(&o);
    let t77 = &o.take_cycles[&77];
    let (messages, records) = out_before(&o, 1000);
    eprintln!(
        "QP 255: {messages} messages ({records} records) before cycle 1000, the last at {:?}; QP 77 at {t77:?}; held pulses {}; batches {:?}",
        o.take_cycles[&255].iter().rfind(|&&c| c < 1000),
        o.counters["sq_held"],
        o.batches
    );
    assert_eq!(
        messages, DEEP_IN_FLIGHT,
        "a ring of messages before any acknowledgement"
    );
    assert_eq!(
        records,
        records_of_first(&o, DEEP_IN_FLIGHT),
        "nothing of the next message"
    );
    assert!(
        t77[0] >= 700 && t77[0] < 700 + 20,
        "QP 77 served while QP 255 is held: cycle {}",
        t77[0]
    );
    assert!(
        o.counters["sq_held"] >= 50,
        "QP 255 re-checked while held: {}",
        o.counters["sq_held"]
    );
    assert_eq!(o.got_msg[&255].len(), 128);
    assert_eq!(o.max_unacked[&255], DEEP_IN_FLIGHT);
    assert_eq!(o.counters["db_stale"], 0);
}

/// One QP keeps `DEEP_IN_FLIGHT` messages in flight and resends from any of
/// them: QP 255 rings 128 messages of 1-3 packets from PSN 0xFFFFA0 (the
/// messages in flight straddle the 24-bit wrap) and gets no
/// acknowledgement: `DEEP_IN_FLIGHT` messages go out, then it is held. At cycle
/// 600, retransmit requests (`deep_rtx_requests`): the oldest and newest
/// messages' first and last PSNs, every 7th message's, both sides of the
/// wrap (all must come back as the reference record: the binary search
/// over the ring), the PSN before the oldest and the next message's first
/// (misses). At cycle 1000 one acknowledgement of the first 10 messages:
/// exactly 10 more go out (RECLAIM frees exactly those records) and it is
/// held again; at 1100 the same requests over the ring as it is then (the
/// 10th message's last PSN now misses: its record was reused). From 1400
/// every message is acknowledged and all 128 go out. Fails on the
/// 4-record requester (4 messages in flight, the requests miss).
#[test]
fn many_messages_in_flight_resend_old_ones() {
    let o = run(Params {
        seed: 0xDEE9_0001,
        directed: true,
        burst: true,
        deep: true,
        rtx_script: [(600, DEEP_IN_FLIGHT), (1100, DEEP_IN_FLIGHT + 10)],
        partial_ack_at: 1000,
        partial_ack_msgs: 10,
        ack_from: 1400,
        ..Params::default()
    });
    check_common(&o);
    let (m1, r1) = out_before(&o, 1000);
    let (m2, r2) = out_before(&o, 1400);
    eprintln!(
        "QP 255: {m1} messages ({r1} records) before cycle 1000, {m2} ({r2}) before 1400; held pulses {}; \
         retransmits {} misses {}; PSNs {:x?}",
        o.counters["sq_held"],
        o.rtx_got.len(),
        o.counters["rtx_miss"],
        o.rtx_want.iter().map(|(_, r)| r.psn).collect::<Vec<_>>()
    );
    assert_eq!((m1, r1), (DEEP_IN_FLIGHT, records_of_first(&o, DEEP_IN_FLIGHT)));
    assert_eq!(
        (m2, r2),
        (DEEP_IN_FLIGHT + 10, records_of_first(&o, DEEP_IN_FLIGHT + 10))
    );
    assert_eq!(o.got_msg[&255].len(), 128);
    assert_eq!(o.got[&255].len(), o.want[&255].len());
    assert_eq!(o.max_unacked[&255], DEEP_IN_FLIGHT);
    assert!(o.counters["sq_held"] >= 50, "held pulses {}", o.counters["sq_held"]);
    // check_common compared the retransmitted records with the requests;
    // here: the requests covered the wrap and the misses.
    assert!(o.rtx_want.iter().any(|(_, r)| r.psn == 0xFF_FFFF));
    assert!(o.rtx_want.iter().any(|(_, r)| r.psn == 0));
    assert!(o.rtx_want.len() >= 30, "retransmit hits {}", o.rtx_want.len());
    assert_eq!(o.rtx_misses_issued, 4);
}

/// A QP in error at the retransmit engine is not held, and sends nothing
/// more: nothing will acknowledge its records any more, so its remaining
/// descriptors are fetched and committed at once (their message records
/// are what the send completions flush), but none of their packets goes
/// out (the model sends nothing in ERR). QP 255 rings 128 messages, never
/// gets an acknowledgement, and is reported in error at cycle 1000 (held
/// since its ring of records filled): exactly `DEEP_IN_FLIGHT` messages out
/// before, none after; all 128 message records.
#[test]
fn qp_in_error_is_not_held() {
    let o = run(Params {
        seed: 0xE220_0001,
        directed: true,
        burst: true,
        deep: true,
        ack_pct: 0,
        ack_from: u64::MAX,
        err_at: 1000,
        ..Params::default()
    });
    check_common(&o);
    let (messages, records) = out_before(&o, 1000);
    eprintln!(
        "QP 255: {messages} messages before the report; held pulses {}",
        o.counters["sq_held"]
    );
    assert_eq!(messages, DEEP_IN_FLIGHT, "a ring of messages before the error report");
    assert_eq!(o.got[&255].len(), records, "none after it");
    assert_eq!(records, records_of_first(&o, DEEP_IN_FLIGHT));
    assert_eq!(o.after_err, 0);
    assert_eq!(o.got_msg[&255].len(), 128, "every message committed (to be flushed)");
    assert!(o.counters["sq_held"] >= 50);
}

/// An error report in the middle of a message: QP 255 rings 16 messages of
/// 6 packets each (acknowledged as they go out, output always ready) and
/// is reported in error once 8 of its records are out (the second
/// message's third). From the report's cycle on, nothing of it leaves but
/// the record the output register took in that cycle: not the rest of
/// the second message, not the 14 messages fetched or queued behind it
/// (their message records all come), not a retransmit the retransmit
/// engine had queued (requested after the report: dropped, no miss).
/// QP 77 rings one message after the report and is served (no stall of
/// the engine for the other QPs).
#[test]
fn qp_in_error_stops_mid_message_and_blocks_no_other() {
    let o = run(Params {
        seed: 0xE220_0002,
        directed: true,
        burst: true,
        long: true,
        fair: true,
        fair_at: 200,
        err_after: 8,
        err_rtx: true,
        ..Params::default()
    });
    check_common(&o);
    let t255 = &o.take_cycles[&255];
    let err = o.qerr_cycle.expect("the error report taken");
    eprintln!(
        "error report at {err}; QP 255 records at {t255:?}; QP 77 at {:?}",
        o.take_cycles[&77]
    );
    assert!(err < 200, "the report before QP 77's doorbell");
    assert!(o.after_err <= 1, "records after the report: {}", o.after_err);
    assert!(t255.len() < 12, "the second message cut short: {} records", t255.len());
    assert_eq!(o.got_msg[&255].len(), 16, "every message committed (to be flushed)");
    assert_eq!(o.got[&77].len(), 1, "QP 77 served");
    assert!(o.rtx_got.is_empty() && o.counters["rtx_miss"] == 0);
}

/// One bad doorbell rung for QP 255 while it sends its accepted work
/// (128 messages, held once `RTX_SLOTS` are out, no ack before cycle
/// 1000); QP 77 rings at cycle 700 so the held QP 255 is re-queued, and
/// picked again while its doorbell RAM still holds the bad value. One
/// doorbell, one BAD_DOORBELL record (a re-queue goes on from the latest
/// producer index accepted), and the 128 messages all go.
#[test]
fn one_bad_doorbell_gives_one_error_record_across_requeues() {
    let o = run(Params {
        seed: 0x401D_0001,
        directed: true,
        burst: true,
        fair: true,
        deep: true,
        ack_from: 1000,
        fair_at: 700,
        bad_at: 100,
        ..Params::default()
    });
    check_common(&o);
    assert_eq!(o.got_err[&255].len(), 1, "{:?}", o.got_err.get(&255));
    assert_eq!(o.got_msg[&255].len(), 128);
}

/// A bad doorbell for the idle QP 255 (beyond the ring), then the good
/// doorbell of its 16 messages 2..=6 cycles later: one of these lands in
/// the cycle in which LOAD refuses the bad value. That refusal marks the
/// QP's value judged (`judged`) a cycle later, through `judge_q`; a
/// doorbell in LOAD's cycle must cancel it (its value in `pi_ram` is new
/// and unjudged), else the next pick goes on from the latest accepted
/// producer index (none) and the 16 messages are never sent. Each run:
/// one BAD_DOORBELL record, every message. (Fails without the cancel.)
#[test]
fn good_doorbell_in_the_cycle_of_a_refusal_is_served() {
    for k in 2..=6 {
        eprintln!("good doorbell {k} cycles after the bad one");
        let o = run(Params {
            seed: 0x401D_0002,
            directed: true,
            burst: true,
            bad_at: 100,
            good_after_bad: k,
            ..Params::default()
        });
        check_common(&o);
        assert_eq!(
            o.got_err[&255].len(),
            1,
            "good doorbell {k} cycles after: {:?}",
            o.got_err.get(&255)
        );
        assert_eq!(o.got[&255].len(), 16, "good doorbell {k} cycles after: every message");
    }
}
