//! Requester (send-queue engine): doorbells in, per-QP send context in
//! block RAM, descriptor fetch over the shared DMA read interface, decode
//! with the offsets of [`contract::layout::sqe`], and segmentation of each
//! WRITE / WRITE-IMM into MTU-sized packet work records exactly as
//! `proto::model::mrc` (`data_packet`): opcodes FIRST / MIDDLE / LAST /
//! ONLY (+IMM), RETH fields on FIRST / ONLY, placement VA / rkey on
//! MIDDLE / LAST, `msg_offset`, consecutive PSNs, `ack_req` on the last
//! packet. Retransmit requests `(qp, psn)` re-issue a packet's record from
//! a per-QP ring of the last [`RTX_SLOTS`] messages, found by a binary
//! search over the ring (messages' PSN ranges are consecutive). See
//! `docs/hw/requester.md`.
//!
//! A doorbell stores its producer index in the QP's entry of a RAM and
//! sets the QP's pending bit (a doorbell for a pending QP replaces the
//! value: producer indices are absolute, so nothing is lost and there is
//! no queue to fill). One engine serves one QP at a time, picked round
//! robin from the pending set: descriptors up to its producer index are
//! fetched in batches of up to 8 per DMA read (one descriptor per 512-bit
//! beat), and no more than the QP's free retransmit records: a record is
//! free once the cumulative ACK (`una_*`) has passed its message. After a
//! batch, a QP with descriptors left sets its pending bit again when
//! another QP is pending (round robin between QPs, batch by batch); a QP
//! without a free record is held the same way (or re-checked when it is
//! alone), so it blocks no other QP. While a message is being segmented
//! the output carries one record per cycle.

use contract::config::table;
use contract::layout::sqe;
use rust_hdl::prelude::*;

use crate::bus::DmaReadInitiator;

use crate::bus::ConfigSink;

use crate::contract_rows::{SqCtxRow, SqeRecord, TableId};
use crate::ev_selector::FindNext;
use crate::onehot::OneHot;
use crate::param::Param;

mod words;
pub use words::{
    PacketRecordWord, RtxRecordWord, SqContextWord, SqStateWord, RING_SIZE_BITS, RTX_COUNT_BITS, RTX_SLOT_BITS,
};

/// Messages remembered per QP for retransmission (a ring of records,
/// `2^RTX_SLOT_BITS`). A record is reused only once the cumulative
/// acknowledgement (`una_*`) has passed its message's last PSN: a QP with
/// all of them holding unacknowledged messages is held back (its doorbell
/// re-queued or the engine waiting on it), so at most this many messages
/// of a QP are in flight.
pub const RTX_SLOTS: usize = 1 << RTX_SLOT_BITS;
/// Descriptors fetched by one DMA read at most (8 x 64 bytes).
pub const MAX_BATCH: usize = 8;
/// Bytes of messages a QP's turn takes while another QP waits, about: a
/// turn fetches `MAX_BATCH` descriptors when the QP's latest message is
/// at most an eighth of this, 4 at most a quarter, 2 at most a half, else
/// one. With batches of 8 whatever their size, a QP with a window of
/// 16 KiB messages held the link for 128 KiB (about 11 us at 100 Gb/s)
/// before the next QP's first packet, so each QP met a failed EV on its
/// own at the full line rate (docs/hw/requester.md, "Turns").
pub const TURN_BYTES: u64 = 16 * 1024;
/// Register stages of the fetch-ahead decision (limits, target, size).
const AHEAD_STAGES: usize = 3;
/// Descriptor reads the engine has issued and not yet started on (the
/// read queue `rq`, `2^READ_QUEUE_BITS` entries): with several QPs
/// pending, the engine issues the reads of the next QPs in the round
/// robin's order before it works through the first one's beats, so that
/// their host round trips overlap.
pub const READ_QUEUE_BITS: usize = 3;
/// Reads in the read queue at most.
pub const READ_QUEUE: usize = 1 << READ_QUEUE_BITS;
/// Descriptor beats requested and not yet taken, at most: every queued
/// read and the batch in service, `MAX_BATCH` each (at most `READ_QUEUE`
/// of them: the batch in service was popped from the queue, or the queue
/// is empty). The core's descriptor FIFO must hold this many, so that
/// payload responses never wait behind descriptor beats
/// (`docs/hw/core.md`).
pub const DESC_BEATS_OUT: usize = READ_QUEUE * MAX_BATCH;
/// A read-queue entry: QP [7:0], descriptors [11:8]. (The producer index
/// the read was issued up to is the QP's `latest_pi`, which NEXT recorded
/// before the read.)
const RQ_ENTRY_BITS: usize = QP_BITS + 4;
const _: () = assert!(QP_BITS == 8, "the read queue's field offsets in `update` are literals");
/// Address width of the retransmit records' RAM: {QP, ring position}.
const RTX_ADDR_BITS: usize = QP_BITS + RTX_SLOT_BITS;
/// QP number width: the engine serves `QPS` = 256 QPs (the doorbell
/// window's, `contract::regmap::doorbell::QPS`), one pending bit each.
pub const QP_BITS: usize = 8;
/// QPs served (pending bits, RAM entries).
pub const QPS: usize = 1 << QP_BITS;
const _: () = assert!(QPS == contract::regmap::doorbell::QPS as usize);

/// BTH opcodes on `out_opcode` (`proto::wire::Opcode`).
pub mod opcode {
    pub const WRITE_FIRST: u8 = 0x06;
    pub const WRITE_MIDDLE: u8 = 0x07;
    pub const WRITE_LAST: u8 = 0x08;
    pub const WRITE_LAST_IMM: u8 = 0x09;
    pub const WRITE_ONLY: u8 = 0x0A;
    pub const WRITE_ONLY_IMM: u8 = 0x0B;
}

/// Engine states.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum ReqState {
    /// A retransmit request first, else the next pending QP.
    Idle,
    /// The QP's context and producer index are on the RAM outputs: check
    /// the doorbell.
    Load,
    /// All fetched? Else size the next batch of descriptors.
    NextBatch,
    /// The DMA read request for the batch.
    Request,
    /// One descriptor per 512-bit response beat.
    Beat,
    /// The descriptor's checks and its packet count.
    Decode,
    /// Commit the message (or its error record).
    Commit,
    /// One packet record per cycle (a retransmit request goes first).
    Segment,
    /// Hold the error record until taken.
    Error,
    /// Retransmit lookup: the QP's MTU and its ring (head, records filled).
    RtxContext,
    /// One probe of the binary search: does the probed record's message
    /// start at or before the PSN?
    RtxScan,
    /// The record found: is the PSN inside its message?
    RtxFind,
    /// The packet's offset in its message.
    RtxOffset,
    /// The packet record, as the first transmission had it.
    RtxEmit,
    /// Free the oldest records whose messages the cumulative
    /// acknowledgement has passed, one per cycle (between LOAD and NEXT).
    Reclaim,
    /// The QP's backlog: its next unsent PSN through the retransmit
    /// lookup (as a first transmission), or done (a resend goes first).
    ResumeNext,
}

/// The send-queue engine (256 QPs).
#[derive(LogicBlock, Default)]
pub struct Requester {
    pub clock: Signal<In, Clock>,
    // Config write port (table 1 = QP send context, see contract::layout::sq_ctx).
    pub cfg: ConfigSink,
    // Doorbells: new SQ producer index (free-running, 32 bits).
    pub db_valid: Signal<In, Bit>,
    pub db_qp: Signal<In, Bits<8>>,
    pub db_value: Signal<In, Bits<32>>,
    // DMA read (descriptor fetch).
    pub dma_rd: DmaReadInitiator,
    // Retransmit requests.
    pub rtx_valid: Signal<In, Bit>,
    pub rtx_ready: Signal<Out, Bit>,
    pub rtx_qp: Signal<In, Bits<8>>,
    pub rtx_psn: Signal<In, Bits<24>>,
    // Cumulative acknowledgements (the retransmit engine's `ack_qp` /
    // `ack_una`, snooped by the top): every PSN serially before `una_psn`
    // is acknowledged, so a record whose message ends at or before it is
    // free. Not taken (`una_ready` low, a register) in the cycle after a
    // table-1 config row: the una RAM's one write port then resets the
    // QP's una (the row is applied a cycle late, `cw_*`).
    pub una_valid: Signal<In, Bit>,
    pub una_ready: Signal<Out, Bit>,
    pub una_qp: Signal<In, Bits<8>>,
    pub una_psn: Signal<In, Bits<24>>,
    // The retransmit engine put the QP in error (its `err_*` report,
    // snooped by the top): as the model in ERR, the QP sends nothing more
    // (no record of it is written to the output register after the
    // report's cycle, first transmission or retransmit), and since una
    // stops, its records are all treated as free; its remaining
    // descriptors are still fetched and committed (their message records
    // are what the send completions flush), until a config write for the
    // QP. `qerr_ready` is low when `una_ready` is.
    pub qerr_valid: Signal<In, Bit>,
    pub qerr_ready: Signal<Out, Bit>,
    pub qerr_qp: Signal<In, Bits<8>>,
    // Packet work records.
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    pub out_qp: Signal<Out, Bits<8>>,
    pub out_psn: Signal<Out, Bits<24>>,
    pub out_opcode: Signal<Out, Bits<8>>,
    pub out_ack_req: Signal<Out, Bit>,
    pub out_retransmit: Signal<Out, Bit>,
    pub out_first: Signal<Out, Bit>,
    pub out_last: Signal<Out, Bit>,
    pub out_addr: Signal<Out, Bits<64>>,
    pub out_len: Signal<Out, Bits<16>>,
    pub out_remote_va: Signal<Out, Bits<64>>,
    pub out_rkey: Signal<Out, Bits<32>>,
    pub out_dma_len: Signal<Out, Bits<32>>,
    pub out_imm: Signal<Out, Bits<32>>,
    pub out_msg_offset: Signal<Out, Bits<32>>,
    /// Pulse: the top's admission refused the first transmission in the
    /// output register (its QP's window is full). The record is taken
    /// back, not sent: from its PSN on, the QP's committed PSNs wait in
    /// its backlog, and other QPs go on ("A QP held by its window yields"
    /// in docs/hw/requester.md).
    pub out_yield: Signal<In, Bit>,
    /// With `out_yield`: bytes left the QP's flight (or its window moved)
    /// since the refused ADMIT, so the QP is not shut: it may be picked
    /// again at once.
    pub out_yield_reopen: Signal<In, Bit>,
    /// Pulse: the CC gate took an operation that may open QP `open_qp`'s
    /// window (ACK, LOSS, RELEASE, TIMEOUT, SETW): a QP shut by a yield
    /// may be picked again.
    pub open_valid: Signal<In, Bit>,
    pub open_qp: Signal<In, Bits<8>>,
    // Error completion records (rejected descriptors and doorbells).
    pub err_valid: Signal<Out, Bit>,
    pub err_ready: Signal<In, Bit>,
    pub err_qp: Signal<Out, Bits<8>>,
    pub err_status: Signal<Out, Bits<8>>,
    pub err_opcode: Signal<Out, Bits<8>>,
    pub err_wr_id: Signal<Out, Bits<64>>,
    pub err_sq_index: Signal<Out, Bits<32>>,
    pub err_len: Signal<Out, Bits<32>>,
    // Message records: one per committed (valid) descriptor, for the send
    // completion block (held until taken; the next COMMIT waits).
    pub msg_valid: Signal<Out, Bit>,
    pub msg_ready: Signal<In, Bit>,
    pub msg_qp: Signal<Out, Bits<8>>,
    pub msg_wr_id: Signal<Out, Bits<64>>,
    /// SQE opcode (1 WRITE, 2 WRITE-IMM).
    pub msg_opcode: Signal<Out, Bits<8>>,
    pub msg_len: Signal<Out, Bits<32>>,
    pub msg_sq_index: Signal<Out, Bits<32>>,
    pub msg_signaled: Signal<Out, Bit>,
    pub msg_first_psn: Signal<Out, Bits<24>>,
    pub msg_last_psn: Signal<Out, Bits<24>>,
    // Counter pulses.
    pub cnt_bad_opcode: Signal<Out, Bit>,
    pub cnt_bad_flags: Signal<Out, Bit>,
    pub cnt_bad_length: Signal<Out, Bit>,
    pub cnt_bad_doorbell: Signal<Out, Bit>,
    pub cnt_bad_cfg: Signal<Out, Bit>,
    pub cnt_rtx_miss: Signal<Out, Bit>,
    /// Pulse: doorbell value behind the consumer index or the latest
    /// producer index accepted for the QP (already served): ignored.
    pub cnt_db_stale: Signal<Out, Bit>,
    /// Pulse: the QP in service has descriptors left but all its
    /// retransmit records hold unacknowledged messages (held: its pending
    /// bit set again, or the engine checks again 3 cycles later). Repeats
    /// while it stays held.
    pub cnt_sq_held: Signal<Out, Bit>,
    // Storage.
    /// Per QP: the producer index of its latest doorbell (written by
    /// every doorbell, the RAM's only writer; read when the QP is picked).
    pi_ram: RAM<Bits<32>, QP_BITS>,
    /// Per QP: a doorbell (or the engine's round robin or hold) waits to
    /// be served. Set by a doorbell and by the engine's re-queue, cleared
    /// by a pick; a set in the cycle of the pick wins.
    pend: DFF<Bits<QPS>>,
    /// Round robin: bit k set iff QP k is at or before the last QP
    /// picked (`FindNext`'s rotation mask).
    rr_done: DFF<Bits<QPS>>,
    /// The next pick, registered (from `pend` and `rr_done` a cycle
    /// earlier, so the search's logic levels end at a register): a QP, its
    /// `rr_done` after the pick, and whether any QP is pending. Never
    /// stale when used: a pick clears one bit and IDLE comes back at the
    /// earliest two cycles later, after one recomputation.
    pick_qp: DFF<Bits<QP_BITS>>,
    pick_done: DFF<Bits<QPS>>,
    pick_any: DFF<Bit>,
    find: FindNext<QPS, QP_BITS>,
    /// Reads issued for QPs the engine has not started on, in request
    /// order (the DMA port answers in order: their beats come in this
    /// order, after those of the batch in service).
    rq: SynchronousFIFO<Bits<RQ_ENTRY_BITS>, READ_QUEUE_BITS, { READ_QUEUE_BITS + 1 }, 1>,
    /// Per QP: a read of it is in `rq`. The round robin skips such a QP:
    /// its consumer index in the RAM is still before that read's
    /// descriptors, so a second read would fetch them again.
    inq: DFF<Bits<QPS>>,
    /// The batch NEXT starts is a queued read's (requested when the QP
    /// was issued; IDLE popped it and LOAD / RECLAIM loaded the QP).
    queued: DFF<Bit>,
    /// A read was queued at the last edge: `pick_qp` was searched before
    /// that QP's `inq` bit was set, so IDLE must not pick it now.
    pushed: DFF<Bit>,
    /// LOAD was entered from a pick: the producer index is the RAM's (else
    /// `cur_pi`, a re-check of the QP in service).
    ld_new: DFF<Bit>,
    /// Per QP: the value in `pi_ram` was judged and refused (stale or
    /// bad), so a later pick of the QP (a re-queue) goes on from the
    /// latest producer index accepted instead of judging it again (one
    /// error record, one count per doorbell). Set by LOAD's refusal,
    /// cleared by the QP's next doorbell (a clear wins: the new value is
    /// unjudged).
    judged: DFF<Bits<QPS>>,
    /// The picked QP's `judged` bit, registered at the pick.
    ld_judged: DFF<Bit>,
    /// LOAD refused the value of the QP in service (a cycle ago), and no
    /// doorbell of the QP came in that cycle: its `judged` bit is set now.
    judge_q: DFF<Bit>,
    /// A doorbell of the QP came in the cycle of its pick: `pi_ram`'s read
    /// returned the value before it, so LOAD's refusal judges the older
    /// value, not the one now in `pi_ram` (it must not mark the QP judged).
    db_at_pick: DFF<Bit>,
    /// The current QP has had a batch (LOAD clears, REQ sets).
    served: DFF<Bit>,
    /// LOAD rejected the doorbell value (disabled QP, or more than the
    /// ring ahead): NEXT, the state after LOAD, goes to ERR for its error
    /// record. High only in that NEXT cycle.
    ld_bad: DFF<Bit>,
    /// The QP in service is in error: its messages are committed (their
    /// message records go to the send completions, which flush them) but
    /// not segmented. From its `qerr_ram` bit at LOAD, or a report for it
    /// (in the cycle of its pick, which that RAM read misses, or while it
    /// is in service).
    cur_err: DFF<Bit>,
    /// Static context: [57:0] SQ base >> 6, [74:58] ring size in SQEs
    /// (1..=2^16, decoded from the row's log2), [78:75] log2 MTU
    /// (8..=13), [79] enable.
    ctx_ram: RAM<SqContextWord, 8>,
    /// Dynamic state (`SqStateWord`): consumer index, next PSN, the
    /// retransmit ring's head, records in use and records filled, the
    /// latest producer index the engine accepted (a popped doorbell behind
    /// it is redundant: dropped as stale).
    dyn_ram: RAM<SqStateWord, 8>,
    /// Per QP: the latest cumulative acknowledgement (`una`), reset to
    /// `start_psn` by a config write.
    una_ram: RAM<Bits<24>, 8>,
    /// Per QP: in error at the retransmit engine (records all free).
    qerr_ram: RAM<Bit, 8>,
    /// Retransmit records, address {qp, ring position}: per QP a ring of
    /// `RTX_SLOTS` messages (`RtxRecordWord`: first PSN, packets, length,
    /// local IOVA, remote VA, rkey, imm, WRITE-IMM), written at the ring's
    /// head in COMMIT. Consecutive records hold consecutive PSN ranges, so
    /// a record's message ends where the next one's starts.
    rtx_ram: RAM<RtxRecordWord, RTX_ADDR_BITS>,
    // Engine.
    state: DFF<ReqState>,
    cur_qp: DFF<Bits<8>>,
    cur_pi: DFF<Bits<32>>,
    cur_ci: DFF<Bits<32>>,
    cur_psn: DFF<Bits<24>>,
    /// The QP's record ring: head (the next message's record), records in
    /// use (not reclaimed: from LOAD, less one per RECLAIM step, plus one
    /// per commit), records filled (the retransmit search window).
    cur_head: DFF<Bits<RTX_SLOT_BITS>>,
    cur_used: DFF<Bits<RTX_COUNT_BITS>>,
    cur_filled: DFF<Bits<RTX_COUNT_BITS>>,
    /// Free records, at most `MAX_BATCH` (the batch-size limit; 0: held),
    /// kept with `cur_used` so that NEXT does not compute it.
    cur_lim: DFF<Bits<4>>,
    /// The QP's turn (`SqStateWord::turn`): loaded by LOAD, set by a
    /// commit from the message's length (`turn_next`).
    cur_turn: DFF<Bits<4>>,
    /// The batch limit: `cur_lim`, or less, the QP's turn, while another
    /// QP waits (`a_other`).
    t_lim: Signal<Local, Bits<4>>,
    turn_next: Signal<Local, Bits<4>>,
    k_turn_8: Param<32, { TURN_BYTES / 8 }>,
    k_turn_4: Param<32, { TURN_BYTES / 4 }>,
    k_turn_2: Param<32, { TURN_BYTES / 2 }>,
    /// The QP's una, as LOAD read it (RECLAIM compares with it).
    cur_una: DFF<Bits<24>>,
    cur_base: DFF<Bits<58>>,
    cur_ring_mask: DFF<Bits<32>>,
    cur_mtu: DFF<Bits<32>>,
    cur_log2mtu: DFF<Bits<4>>,
    desc_addr: DFF<Bits<64>>,
    /// Descriptors in the current fetch (1..=8) and beats still to come.
    batch_n: DFF<Bits<4>>,
    beats_left: DFF<Bits<4>>,
    // Fetch ahead: while the engine works through a batch of the QP in
    // service, one more read of the QP's next descriptors (those a newer
    // doorbell announced, or those the batch left), so the next batch
    // does not wait a host round trip after this one. The DMA port
    // answers in order, so its beats follow the batch's.
    /// SQ index after the last descriptor requested.
    f_ci: DFF<Bits<32>>,
    /// Descriptors an ahead read may have: `MAX_BATCH` less the batch
    /// being worked through, so at most `MAX_BATCH` beats are ever
    /// requested and not taken (the core's descriptor FIFO holds 8; a
    /// fuller one would hold payload responses behind it).
    f_room: DFF<Bits<4>>,
    /// Records free once every requested descriptor is committed (a lower
    /// bound: RECLAIM runs only between batches).
    f_free: DFF<Bits<RTX_COUNT_BITS>>,
    /// Stage 1: the QP's latest doorbell value (`pi_ram`), whether it is
    /// beyond the producer index in service (`a_up`) and within the ring
    /// (`a_fit`: the checks LOAD makes, here only to choose; LOAD still
    /// judges the value when the QP is next picked), the ring slots after
    /// `f_ci`, and the ahead limit min(`f_room`, `f_free`).
    a_v: DFF<Bits<32>>,
    a_up: DFF<Bit>,
    a_fit: DFF<Bit>,
    f_to_end: DFF<Bits<32>>,
    a_lim: DFF<Bits<4>>,
    /// Another QP is pending: no fetch ahead (it would keep the engine).
    a_other: DFF<Bit>,
    /// Stage 2: the producer index to fetch up to.
    a_t: DFF<Bits<32>>,
    /// Stage 3: the ahead read's size, and whether there is one.
    a_n: DFF<Bits<4>>,
    a_go: DFF<Bit>,
    /// Cycles since `f_*` or `cur_pi` last changed (saturating at 3): the
    /// stages above are current when it is 3.
    a_age: DFF<Bits<2>>,
    /// The ahead read's request is up (held until taken).
    a_req: DFF<Bit>,
    /// An ahead read was requested and NEXT has not yet started its beats.
    ahead: DFF<Bit>,
    // The fetched descriptor.
    d_op: DFF<Bits<8>>,
    // Named values the kernel compares with (localparams).
    t_sq_ctx: TableId<{ table::SQ_CTX }>,
    p_op_write: Param<8, { sqe::OP_WRITE as u64 }>,
    p_op_write_imm: Param<8, { sqe::OP_WRITE_IMM as u64 }>,
    /// SQE flag bits other than the known ones (must be 0).
    p_flags_unknown: Param<8, { !sqe::FLAG_SIGNALED as u64 & 0xff }>,
    p_flag_signaled: Param<8, { sqe::FLAG_SIGNALED as u64 }>,
    /// Records per QP, and the batch-size limit, as record counts.
    p_slots: Param<RTX_COUNT_BITS, { RTX_SLOTS as u64 }>,
    p_max_batch: Param<RTX_COUNT_BITS, { MAX_BATCH as u64 }>,
    /// The binary search's first step: half the ring.
    p_first_step: Param<RTX_COUNT_BITS, { (RTX_SLOTS / 2) as u64 }>,
    /// Fetch ahead: cycles its stages take to follow a change of
    /// `f_*` / `cur_pi` (`a_age` saturates there).
    p_settled: Param<2, { AHEAD_STAGES as u64 }>,
    /// The ring position's width: the QP's shift in a record address.
    p_slot_bits: Param<4, { RTX_SLOT_BITS as u64 }>,
    d_flags: DFF<Bits<8>>,
    d_len: DFF<Bits<32>>,
    d_wrid: DFF<Bits<64>>,
    d_iova: DFF<Bits<64>>,
    d_rva: DFF<Bits<64>>,
    d_rkey: DFF<Bits<32>>,
    d_imm: DFF<Bits<32>>,
    d_bad: DFF<Bits<2>>,
    d_npkts: DFF<Bits<24>>,
    // Segmentation of the current message.
    s_first: DFF<Bit>,
    s_rem: DFF<Bits<32>>,
    s_off: DFF<Bits<32>>,
    s_la: DFF<Bits<64>>,
    s_ra: DFF<Bits<64>>,
    s_psn: DFF<Bits<24>>,
    s_imm: DFF<Bit>,
    // Retransmit lookup.
    r_ret: DFF<ReqState>,
    r_qp: DFF<Bits<8>>,
    r_psn: DFF<Bits<24>>,
    /// Binary search: ring position and offset from the oldest record of
    /// the best candidate so far (the last record starting at or before
    /// the PSN), the probe's step (halved per probe), and the window
    /// (records filled).
    r_pos: DFF<Bits<RTX_SLOT_BITS>>,
    r_j: DFF<Bits<RTX_COUNT_BITS>>,
    r_step: DFF<Bits<RTX_COUNT_BITS>>,
    r_filled: DFF<Bits<RTX_COUNT_BITS>>,
    r_mtu: DFF<Bits<32>>,
    r_log2mtu: DFF<Bits<4>>,
    r_ent: DFF<RtxRecordWord>,
    r_seg: DFF<Bits<24>>,
    r_off: DFF<Bits<32>>,
    /// The retransmit request's QP is in error: no record (the retransmit
    /// engine stops resending at the error, but requests it queued before
    /// still come). From its `qerr_ram` bit at R_CTX, or a report for it
    /// since the request was taken.
    r_err: DFF<Bit>,
    // Error record.
    e_ret: DFF<ReqState>,
    e_qp: DFF<Bits<8>>,
    e_status: DFF<Bits<8>>,
    e_opcode: DFF<Bits<8>>,
    e_wr_id: DFF<Bits<64>>,
    e_sq_index: DFF<Bits<32>>,
    e_len: DFF<Bits<32>>,
    // Message record.
    m_valid: DFF<Bit>,
    m_qp: DFF<Bits<8>>,
    m_wr_id: DFF<Bits<64>>,
    m_opcode: DFF<Bits<8>>,
    m_len: DFF<Bits<32>>,
    m_sq_index: DFF<Bits<32>>,
    m_signaled: DFF<Bit>,
    m_first_psn: DFF<Bits<24>>,
    m_last_psn: DFF<Bits<24>>,
    // Output record register.
    o_valid: DFF<Bit>,
    o: DFF<PacketRecordWord>,
    /// Per QP: committed PSNs wait unsent (a yield took its record back),
    /// from the PSN in `res_ram`.
    backlog: DFF<Bits<QPS>>,
    /// Per QP: its window was full at the yield and nothing has opened it
    /// since (`open_*`): not picked.
    shut: DFF<Bits<QPS>>,
    /// Per QP: the first PSN of its backlog (written at the yield).
    res_ram: RAM<Bits<24>, 8>,
    /// The QP in service has a backlog: its descriptors are committed,
    /// not segmented, until the backlog is sent.
    cur_backlog: DFF<Bit>,
    /// The next PSN of the backlog of the QP in service, once known
    /// (`res_known`: from the yield or read from `res_ram`).
    res_psn: DFF<Bits<24>>,
    res_known: DFF<Bit>,
    /// A yield of the QP in service during its resume: the lookup under
    /// way emits nothing and the resume stops.
    res_stop: DFF<Bit>,
    /// The retransmit lookup emits a first transmission (the resume of a
    /// backlog), not a resend.
    r_fresh: DFF<Bit>,
    // Counter pulses (registered).
    k_bad_opcode: DFF<Bit>,
    k_bad_flags: DFF<Bit>,
    k_bad_length: DFF<Bit>,
    k_bad_doorbell: DFF<Bit>,
    k_bad_cfg: DFF<Bit>,
    k_rtx_miss: DFF<Bit>,
    /// A send-context row that passed its checks, applied a cycle after
    /// the config bus carried it: the write, and the ready it takes from
    /// the acknowledgement snoop and the error reports, then depend on
    /// registers, not on the bus's index and value compares (those sat
    /// at the head of the core's deepest path, through `una_ready` into
    /// the CC gate's grants). The row's QP, context, and start PSN.
    cw_valid: DFF<Bit>,
    cw_qp: DFF<Bits<8>>,
    cw_ctx: DFF<SqContextWord>,
    cw_start_psn: DFF<Bits<24>>,
    k_db_stale: DFF<Bit>,
    k_sq_held: DFF<Bit>,
    // Combinational locals.
    /// An error report taken in this cycle, and whether it is for the QP
    /// in service, the retransmit request's, the request being taken or
    /// the QP being picked.
    qerr_take: Signal<Local, Bit>,
    qerr_cur: Signal<Local, Bit>,
    qerr_r: Signal<Local, Bit>,
    qerr_rtx_in: Signal<Local, Bit>,
    qerr_pick: Signal<Local, Bit>,
    cfg_mine: Signal<Local, Bit>,
    cfg_hit: Signal<Local, Bit>,
    cfg_ok: Signal<Local, Bit>,
    /// The row's sq_base (a slice cannot be sliced again in the Verilog).
    cfg_base: Signal<Local, Bits<64>>,
    cfg_log2size: Signal<Local, Bits<8>>,
    cfg_log2mtu: Signal<Local, Bits<8>>,
    /// The row's ring size, decoded from its log2 (checked <= 16).
    cfg_ring_size: Signal<Local, Bits<RING_SIZE_BITS>>,
    one_ring: Signal<Local, Bits<RING_SIZE_BITS>>,
    out_free: Signal<Local, Bit>,
    /// LOAD: the QP's ring size (SQEs) and its index mask (size - 1).
    ld_size: Signal<Local, Bits<32>>,
    ld_mask: Signal<Local, Bits<32>>,
    ld_ci: Signal<Local, Bits<32>>,
    /// LOAD: the producer index checked (the RAM's after a pick).
    ld_pi: Signal<Local, Bits<32>>,
    db_diff: Signal<Local, Bits<32>>,
    s_last: Signal<Local, Bit>,
    r_first: Signal<Local, Bits<24>>,
    r_npkts: Signal<Local, Bits<24>>,
    r_hit_off: Signal<Local, Bits<24>>,
    /// Binary search (RTX_SCAN): the probed candidate's offset and
    /// position, whether it is inside the window, `psn - first` of the
    /// probed record, whether the search takes it, the next probe's step
    /// and the next read address with and without taking it.
    r_cand_j: Signal<Local, Bits<RTX_COUNT_BITS>>,
    r_cand_pos: Signal<Local, Bits<RTX_SLOT_BITS>>,
    r_in: Signal<Local, Bit>,
    r_probe_d: Signal<Local, Bits<24>>,
    r_take: Signal<Local, Bit>,
    r_half: Signal<Local, Bits<RTX_COUNT_BITS>>,
    r_addr_take: Signal<Local, Bits<RTX_SLOT_BITS>>,
    r_addr_keep: Signal<Local, Bits<RTX_SLOT_BITS>>,
    /// RTX_CTX: the oldest record in the window (head - filled), and the
    /// first probe's position (a Local: inside the address's bit_cast the
    /// Verilog would add at the address's width and carry into the QP).
    r_oldest: Signal<Local, Bits<RTX_SLOT_BITS>>,
    r_probe0: Signal<Local, Bits<RTX_SLOT_BITS>>,
    /// The retransmit records' read: QP and ring position (the binary
    /// search's and RECLAIM's reads; the search's QP by default).
    rtx_rd_qp: Signal<Local, Bits<8>>,
    rtx_rd_pos: Signal<Local, Bits<RTX_SLOT_BITS>>,
    r_is_last: Signal<Local, Bit>,
    r_rem: Signal<Local, Bits<32>>,
    dyn_wr: Signal<Local, SqStateWord>,
    /// Consumer index written back: + 1 in COMMIT, as is in NEXT.
    dyn_ci: Signal<Local, Bits<32>>,
    /// LOAD: latest accepted producer index minus this doorbell's (a
    /// positive 32-bit difference: behind it, stale).
    ld_sup: Signal<Local, Bits<32>>,
    /// LOAD: the QP's records in use (none for a QP in error: nothing
    /// will acknowledge them), its free records and their batch limit, and
    /// the position after the oldest record in use (RECLAIM reads it: the
    /// oldest message ends where the next one starts).
    ld_used: Signal<Local, Bits<RTX_COUNT_BITS>>,
    ld_free: Signal<Local, Bits<RTX_COUNT_BITS>>,
    ld_lim: Signal<Local, Bits<4>>,
    ld_tail_next: Signal<Local, Bits<RTX_SLOT_BITS>>,
    /// RECLAIM: the oldest record's end PSN (the next record's first PSN,
    /// or the QP's next PSN when it is the only one), `una - end` in 24
    /// bits (a Local: an inline difference would be evaluated at 32 bits
    /// in Verilog), whether una has passed it, the free records and their
    /// batch limit after freeing it, and the read address for the record
    /// after the next oldest.
    rc_end: Signal<Local, Bits<24>>,
    rc_d: Signal<Local, Bits<24>>,
    rc_acked: Signal<Local, Bit>,
    rc_free: Signal<Local, Bits<RTX_COUNT_BITS>>,
    rc_lim: Signal<Local, Bits<4>>,
    rc_addr: Signal<Local, Bits<RTX_SLOT_BITS>>,
    /// COMMIT: the new message's end PSN, the ring's head, records in use
    /// and filled after it, and the free records' batch limit.
    new_end: Signal<Local, Bits<24>>,
    head_next: Signal<Local, Bits<RTX_SLOT_BITS>>,
    used_next: Signal<Local, Bits<RTX_COUNT_BITS>>,
    filled_next: Signal<Local, Bits<RTX_COUNT_BITS>>,
    cm_free: Signal<Local, Bits<RTX_COUNT_BITS>>,
    cm_lim: Signal<Local, Bits<4>>,
    /// NEXT: no record free for the QP in service.
    held: Signal<Local, Bit>,
    free32: Signal<Local, Bits<32>>,
    // Incremented counters narrowed to their own width before they are
    // packed or compared: the emitted Verilog evaluates an inline `x + 1`
    // at the width of the enclosing bit_cast (62) or compare (32), so
    // `bit_cast::<62, 2>(seq + 1)` put seq 3's carry into the valid mask,
    // ci 0xFFFFFFFF + 1 carried into the PSN field, and `r_seg + 1 == n`
    // missed n = 0 after 0xFFFFFF (the width check in hw::flow::widen).
    // `bit_cast::<62, 24>(psn + npkts) << 32` carried a message that
    // crosses the 24-bit PSN wrap into the stored seq field (now
    // `new_end`, below).
    ci_next: Signal<Local, Bits<32>>,
    r_seg_next: Signal<Local, Bits<24>>,
    one32: Signal<Local, Bits<32>>,
    avail: Signal<Local, Bits<32>>,
    to_end: Signal<Local, Bits<32>>,
    nb1: Signal<Local, Bits<4>>,
    nb: Signal<Local, Bits<4>>,
    /// Fetch-ahead locals (own widths: see `ci_next`).
    a_up_d: Signal<Local, Bits<32>>,
    a_fit_d: Signal<Local, Bits<32>>,
    a_ring: Signal<Local, Bits<32>>,
    a_d: Signal<Local, Bits<32>>,
    a_n1: Signal<Local, Bits<4>>,
    /// `f_room` at the record count's width, for the compare with `f_free`.
    f_room_wide: Signal<Local, Bits<RTX_COUNT_BITS>>,
    f_ci_req: Signal<Local, Bits<32>>,
    f_ci_ahead: Signal<Local, Bits<32>>,
    f_free_req: Signal<Local, Bits<RTX_COUNT_BITS>>,
    f_free_ahead: Signal<Local, Bits<RTX_COUNT_BITS>>,
    f_room_next: Signal<Local, Bits<4>>,
    a_age_next: Signal<Local, Bits<2>>,
    in_batch: Signal<Local, Bit>,
    a_issue: Signal<Local, Bit>,
    after_msg: Signal<Local, ReqState>,
    requeue: Signal<Local, Bit>,
    /// IDLE takes the registered pick (clears its pending bit).
    pick: Signal<Local, Bit>,
    /// Read queue: the head entry's fields, whether REQ queues its read
    /// (another QP waits, or reads are queued already) and IDLE pops the
    /// head; whether IDLE may issue a read for the pick; a report for the
    /// head's QP in this cycle; the `inq` bits set and cleared.
    rq_qp: Signal<Local, Bits<QP_BITS>>,
    rq_n: Signal<Local, Bits<4>>,
    rq_push: Signal<Local, Bit>,
    rq_pop: Signal<Local, Bit>,
    can_issue: Signal<Local, Bit>,
    qerr_rq: Signal<Local, Bit>,
    inq_set: Signal<Local, Bits<QPS>>,
    inq_clr: Signal<Local, Bits<QPS>>,
    /// The pending set's next value: a doorbell's bit and a re-queue's
    /// bit set, the pick's cleared (a set wins).
    pend_set_db: Signal<Local, Bits<QPS>>,
    pend_set_rq: Signal<Local, Bits<QPS>>,
    pend_clr: Signal<Local, Bits<QPS>>,
    /// One-hot codes of the QP numbers the per-QP bitmaps are set and
    /// cleared by: decoders, not `1 << qp` shifters (`hw::onehot`).
    oh_yield: OneHot<QPS, QP_BITS>,
    oh_cur: OneHot<QPS, QP_BITS>,
    oh_db: OneHot<QPS, QP_BITS>,
    oh_pick: OneHot<QPS, QP_BITS>,
    oh_open: OneHot<QPS, QP_BITS>,
    oh_qerr: OneHot<QPS, QP_BITS>,
    oh_cfg: OneHot<QPS, QP_BITS>,
    oh_rq: OneHot<QPS, QP_BITS>,
    /// A yield's one-hot (the record's QP), and the QP in service's.
    yield_bit: Signal<Local, Bits<QPS>>,
    cur_bit: Signal<Local, Bits<QPS>>,
    /// The yield is of the QP in service.
    yield_cur: Signal<Local, Bit>,
    /// The QP in service is shut.
    cur_shut: Signal<Local, Bit>,
    /// RES goes on (a backlog left, no error, no yield, not shut).
    res_go: Signal<Local, Bit>,
    /// NEXT leaves a shut QP with a backlog: its pending bit is set.
    bl_requeue: Signal<Local, Bit>,
    /// The resume of the QP in service is done (or dropped: QP in error):
    /// its backlog bit is cleared.
    bl_done: Signal<Local, Bit>,
    /// Bits cleared in `shut` (an open, a config write, an error report)
    /// and in `backlog` (a resume done or dropped, a config write).
    shut_clr: Signal<Local, Bits<QPS>>,
    bl_clr: Signal<Local, Bits<QPS>>,
    /// LOAD refused the QP's doorbell value (stale or bad).
    judge: Signal<Local, Bit>,
    judged_set: Signal<Local, Bits<QPS>>,
    /// `judged` shifted down by the pick's QP (bit 0 is its bit; a Local,
    /// since the Verilog cannot index an inline shift).
    judged_at_pick: Signal<Local, Bits<QPS>>,
}

impl Logic for Requester {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            cur_qp,
            cur_pi,
            cur_ci,
            cur_psn,
            cur_head,
            cur_used,
            cur_filled,
            cur_lim,
            cur_turn,
            cur_una,
            cur_base,
            cur_ring_mask,
            cur_mtu,
            cur_log2mtu,
            desc_addr,
            d_op,
            d_flags,
            d_len,
            d_wrid,
            d_iova,
            d_rva,
            d_rkey,
            d_imm,
            d_bad,
            d_npkts,
            s_first,
            s_rem,
            s_off,
            s_la,
            s_ra,
            s_psn,
            s_imm,
            r_ret,
            r_qp,
            r_psn,
            r_pos,
            r_j,
            r_step,
            r_filled,
            r_mtu,
            r_log2mtu,
            r_ent,
            r_seg,
            r_off,
            r_err,
            e_ret,
            e_qp,
            e_status,
            e_opcode,
            e_wr_id,
            e_sq_index,
            e_len,
            o_valid,
            o,
            backlog,
            shut,
            cur_backlog,
            res_psn,
            res_known,
            res_stop,
            r_fresh,
            k_bad_opcode,
            k_bad_flags,
            k_bad_length,
            k_bad_doorbell,
            k_bad_cfg,
            k_rtx_miss,
            cw_valid,
            cw_qp,
            cw_ctx,
            cw_start_psn,
            batch_n,
            beats_left,
            f_ci,
            f_room,
            f_free,
            a_v,
            a_up,
            a_fit,
            f_to_end,
            a_lim,
            a_other,
            a_t,
            a_n,
            a_go,
            a_age,
            a_req,
            ahead,
            inq,
            queued,
            pushed,
            pend,
            rr_done,
            pick_qp,
            pick_done,
            pick_any,
            ld_new,
            judged,
            ld_judged,
            judge_q,
            db_at_pick,
            served,
            ld_bad,
            cur_err,
            k_db_stale,
            m_valid,
            m_qp,
            m_wr_id,
            m_opcode,
            m_len,
            m_sq_index,
            m_signaled,
            m_first_psn,
            m_last_psn,
            k_sq_held
        );
        self.one32.next = 1.into();
        self.one_ring.next = 1.into();
        self.oh_yield.idx.next = self.o.q.val().qp;
        self.oh_cur.idx.next = self.cur_qp.q.val();
        self.oh_db.idx.next = self.db_qp.val();
        self.oh_pick.idx.next = self.pick_qp.q.val();
        self.oh_open.idx.next = self.open_qp.val();
        self.oh_qerr.idx.next = self.qerr_qp.val();
        self.oh_cfg.idx.next = self.cw_qp.q.val();
        // Yields and backlogs ("A QP held by its window yields").
        self.yield_bit.next = self.oh_yield.o.val();
        self.cur_bit.next = self.oh_cur.o.val();
        self.yield_cur.next = self.out_yield.val() & (self.o.q.val().qp == self.cur_qp.q.val());
        self.cur_shut.next = self.shut.q.val().get_bit(self.cur_qp.q.val().index());
        self.bl_done.next = false;
        self.res_go.next = false;
        self.bl_requeue.next = false;
        self.res_ram.read_address.next = self.cur_qp.q.val();
        self.res_ram.write_address.next = self.o.q.val().qp;
        self.res_ram.write_data.next = self.o.q.val().psn;
        self.res_ram.write_enable.next = self.out_yield.val();
        self.rq.clock.next = self.clock.val();
        self.pi_ram.read_clock.next = self.clock.val();
        self.res_ram.read_clock.next = self.clock.val();
        self.res_ram.write_clock.next = self.clock.val();
        self.pi_ram.write_clock.next = self.clock.val();
        self.ctx_ram.read_clock.next = self.clock.val();
        self.ctx_ram.write_clock.next = self.clock.val();
        self.dyn_ram.read_clock.next = self.clock.val();
        self.dyn_ram.write_clock.next = self.clock.val();
        self.rtx_ram.read_clock.next = self.clock.val();
        self.rtx_ram.write_clock.next = self.clock.val();
        self.una_ram.read_clock.next = self.clock.val();
        self.una_ram.write_clock.next = self.clock.val();
        self.qerr_ram.read_clock.next = self.clock.val();
        self.qerr_ram.write_clock.next = self.clock.val();

        // Doorbells: the producer index into the QP's RAM entry, its
        // pending bit set (below). Nothing to fill: a doorbell for a QP
        // already pending replaces the value (producer indices are
        // absolute: the latest one covers the earlier ones' work).
        self.pi_ram.write_address.next = self.db_qp.val();
        self.pi_ram.write_data.next = self.db_value.val();
        self.pi_ram.write_enable.next = self.db_valid.val();
        self.pi_ram.read_address.next = self.cur_qp.q.val();
        // The round-robin search, registered: the first pending QP after
        // the last one picked (wrapping).
        // QPs with a read in the read queue are skipped (see `inq`).
        // ... and QPs shut by a yield (their window is full).
        self.find.bits.next = self.pend.q.val() & !self.inq.q.val() & !self.shut.q.val();
        self.find.done.next = self.rr_done.q.val();
        self.pick_qp.d.next = self.find.idx.val();
        self.pick_done.d.next = self.find.next_done.val();
        self.pick_any.d.next = self.find.any.val();
        // Round robin between QPs, one batch at a time: after a batch, a QP
        // with descriptors left sets its pending bit again when another QP
        // is pending (`pick_any`: then IDLE picks the next one after it);
        // otherwise it keeps the engine. A held QP (no free retransmit
        // record) goes back the same way even before its first batch, so
        // it never blocks others. Its producer index stays in the RAM (or
        // a newer doorbell's replaced it), and LOAD falls back to the
        // latest accepted one if that value is stale or bad.
        self.held.next = self.cur_lim.q.val() == 0;
        // Queued reads count as waiting QPs: their beats come first, and
        // a QP that kept the engine would issue a read behind them.
        self.requeue.next = (self.state.q.val() == ReqState::NextBatch)
            & !self.ahead.q.val()
            & !self.queued.q.val()
            & (self.cur_ci.q.val() != self.cur_pi.q.val())
            & (self.served.q.val() | self.held.val())
            & (self.pick_any.q.val() | !self.rq.empty.val());
        // The read queue (see `rq`): pushed by REQ, popped by IDLE.
        self.rq_qp.next = self.rq.data_out.val().get_bits::<QP_BITS>(0);
        self.oh_rq.idx.next = self.rq_qp.val();
        // (The count's offset as a literal: `RQ_ENTRY_BITS`' layout.)
        self.rq_n.next = self.rq.data_out.val().get_bits::<4>(8);
        self.rq.data_in.next = bit_cast::<RQ_ENTRY_BITS, QP_BITS>(self.cur_qp.q.val())
            | (bit_cast::<RQ_ENTRY_BITS, 4>(self.batch_n.q.val()) << 8);
        self.rq_push.next = false;
        self.rq_pop.next = false;
        self.pushed.d.next = false;
        // IDLE may issue a read for the pick while the queue has room; but
        // not in the cycle after a read was queued if the pick is that QP
        // (`pick_qp` was searched before its `inq` bit was set) or beats
        // are waiting (they are the queue head's: IDLE works through them
        // first, so issues and batches alternate once the reads return).
        self.can_issue.next = self.pick_any.q.val()
            & !self.rq.full.val()
            & !(self.pushed.q.val() & (self.dma_rd.rsp.valid.val() | (self.pick_qp.q.val() == self.cur_qp.q.val())));
        self.pick.next = false;
        self.judge.next = false;
        self.judged_at_pick.next = self.judged.q.val() >> self.pick_qp.q.val();
        self.ld_new.d.next = false;

        // Config: table 1, index < 256. The row's checks (sq_base aligned,
        // log2 size <= 16, log2 MTU 8..=13) as contract::layout::SqContext.
        self.cfg_mine.next = self.cfg.valid.val() & (self.cfg.table.val() == self.t_sq_ctx.val());
        self.cfg_hit.next = self.cfg_mine.val() & (self.cfg.index.val().get_bits::<8>(8) == 0);
        self.cfg_log2size.next = self.cfg.data.val().get_value_sq_ctx_sq_log2_size();
        self.cfg_log2mtu.next = self.cfg.data.val().get_value_sq_ctx_log2_mtu();
        // sq_base is aligned to the 64-byte SQE (2^6): its low 6 bits are 0
        // and the context stores the rest.
        self.cfg_base.next = self.cfg.data.val().get_value_sq_ctx_sq_base();
        self.cfg_ok.next = (self.cfg_base.val().get_bits::<6>(0) == 0)
            & (self.cfg_log2size.val() <= 16)
            & (self.cfg_log2mtu.val() >= 8)
            & (self.cfg_log2mtu.val() <= 13);
        // A row of this table with a QP index >= 256 or a bad value: dropped, counted.
        self.k_bad_cfg.d.next = self.cfg_mine.val() & !(self.cfg_hit.val() & self.cfg_ok.val());
        self.cw_valid.d.next = self.cfg_hit.val() & self.cfg_ok.val();
        self.cw_qp.d.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.cw_start_psn.d.next = self.cfg.data.val().get_value_sq_ctx_start_psn();
        self.cw_ctx.d.next.base = self.cfg_base.val().get_bits::<58>(6);
        self.cfg_ring_size.next = self.one_ring.val() << bit_cast::<RING_SIZE_BITS, 8>(self.cfg_log2size.val());
        self.cw_ctx.d.next.ring_size = self.cfg_ring_size.val();
        self.cw_ctx.d.next.log2_mtu = bit_cast::<4, 8>(self.cfg_log2mtu.val());
        self.cw_ctx.d.next.enable = self.cfg.data.val().get_value_sq_ctx_enable().any();
        self.ctx_ram.write_address.next = self.cw_qp.q.val();
        self.ctx_ram.write_data.next = self.cw_ctx.q.val();
        self.ctx_ram.write_enable.next = self.cw_valid.q.val();
        // una: the acknowledgement snoop, or a config write's reset to
        // start_psn (which has the port: the snoop waits a cycle).
        self.una_ready.next = !self.cw_valid.q.val();
        self.una_ram.write_address.next = self.una_qp.val();
        self.una_ram.write_data.next = self.una_psn.val();
        self.una_ram.write_enable.next = self.una_valid.val();
        self.qerr_ready.next = !self.cw_valid.q.val();
        self.qerr_ram.write_address.next = self.qerr_qp.val();
        self.qerr_ram.write_data.next = true;
        self.qerr_ram.write_enable.next = self.qerr_valid.val();
        // The report as the engine sees it (taken: not in a config write's
        // cycle), by the QP it names.
        self.qerr_take.next = self.qerr_valid.val() & self.qerr_ready.val();
        self.qerr_cur.next = self.qerr_take.val() & (self.qerr_qp.val() == self.cur_qp.q.val());
        self.qerr_r.next = self.qerr_take.val() & (self.qerr_qp.val() == self.r_qp.q.val());
        self.qerr_rtx_in.next = self.qerr_take.val() & (self.qerr_qp.val() == self.rtx_qp.val());
        self.qerr_pick.next = self.qerr_take.val() & (self.qerr_qp.val() == self.pick_qp.q.val());
        self.qerr_rq.next = self.qerr_take.val() & (self.qerr_qp.val() == self.rq_qp.val());
        self.cur_err.d.next = self.cur_err.q.val() | self.qerr_cur.val();
        self.r_err.d.next = self.r_err.q.val() | self.qerr_r.val();
        if self.cw_valid.q.val() {
            self.qerr_ram.write_address.next = self.cw_qp.q.val();
            self.qerr_ram.write_data.next = false;
            self.qerr_ram.write_enable.next = true;
            self.una_ram.write_address.next = self.cw_qp.q.val();
            self.una_ram.write_data.next = self.cw_start_psn.q.val();
            self.una_ram.write_enable.next = true;
        }
        // The dynamic state: a config write resets it (ci 0, next PSN =
        // start_psn, no retransmit slot valid); otherwise the engine writes
        // it in COMMIT (which waits while a config write is present).
        self.ci_next.next = self.cur_ci.q.val() + 1;
        self.r_seg_next.next = self.r_seg.q.val() + 1;
        // COMMIT: the message takes the record at the ring's head.
        self.new_end.next = self.cur_psn.q.val() + self.d_npkts.q.val();
        self.head_next.next = self.cur_head.q.val() + 1;
        self.used_next.next = self.cur_used.q.val() + 1;
        self.filled_next.next = self.cur_filled.q.val();
        if self.cur_filled.q.val() != self.p_slots.val() {
            self.filled_next.next = self.cur_filled.q.val() + 1;
        }
        self.cm_free.next = self.p_slots.val() - self.used_next.val();
        self.cm_lim.next = bit_cast::<4, RTX_COUNT_BITS>(self.cm_free.val());
        if self.cm_free.val() > self.p_max_batch.val() {
            self.cm_lim.next = bit_cast::<4, RTX_COUNT_BITS>(self.p_max_batch.val());
        }
        self.dyn_ci.next = self.cur_ci.q.val();
        if self.state.q.val() == ReqState::Commit {
            self.dyn_ci.next = self.ci_next.val();
        }
        self.dyn_wr.next.ci = self.dyn_ci.val();
        self.dyn_wr.next.next_psn = self.cur_psn.q.val();
        self.dyn_wr.next.head = self.cur_head.q.val();
        self.dyn_wr.next.used = self.cur_used.q.val();
        self.dyn_wr.next.filled = self.cur_filled.q.val();
        self.dyn_wr.next.latest_pi = self.cur_pi.q.val();
        self.dyn_wr.next.turn = self.cur_turn.q.val();
        // The turn a message of this length gives its QP.
        self.turn_next.next = 1.into();
        if self.d_len.q.val() <= self.k_turn_2.val() {
            self.turn_next.next = 2.into();
        }
        if self.d_len.q.val() <= self.k_turn_4.val() {
            self.turn_next.next = 4.into();
        }
        if self.d_len.q.val() <= self.k_turn_8.val() {
            self.turn_next.next = 8.into();
        }
        self.dyn_ram.write_address.next = self.cur_qp.q.val();
        self.dyn_ram.write_data.next = self.dyn_wr.val();
        self.dyn_ram.write_enable.next = false;
        if self.cw_valid.q.val() {
            self.dyn_ram.write_address.next = self.cw_qp.q.val();
            self.dyn_ram.write_data.next.ci = 0.into();
            self.dyn_ram.write_data.next.next_psn = self.cw_start_psn.q.val();
            self.dyn_ram.write_data.next.head = 0.into();
            self.dyn_ram.write_data.next.used = 0.into();
            self.dyn_ram.write_data.next.filled = 0.into();
            self.dyn_ram.write_data.next.latest_pi = 0.into();
            self.dyn_ram.write_data.next.turn = 1.into();
            self.dyn_ram.write_enable.next = true;
        }
        self.ctx_ram.read_address.next = self.cur_qp.q.val();
        self.dyn_ram.read_address.next = self.cur_qp.q.val();
        self.una_ram.read_address.next = self.cur_qp.q.val();
        self.qerr_ram.read_address.next = self.cur_qp.q.val();
        self.rtx_rd_qp.next = self.r_qp.q.val();
        self.rtx_rd_pos.next = self.r_pos.q.val();
        self.rtx_ram.write_address.next = (bit_cast::<RTX_ADDR_BITS, 8>(self.cur_qp.q.val()) << self.p_slot_bits.val())
            | bit_cast::<RTX_ADDR_BITS, RTX_SLOT_BITS>(self.cur_head.q.val());
        self.rtx_ram.write_data.next.first_psn = self.cur_psn.q.val();
        self.rtx_ram.write_data.next.packets = self.d_npkts.q.val();
        self.rtx_ram.write_data.next.len = self.d_len.q.val();
        self.rtx_ram.write_data.next.local_iova = self.d_iova.q.val();
        self.rtx_ram.write_data.next.remote_va = self.d_rva.q.val();
        self.rtx_ram.write_data.next.rkey = self.d_rkey.q.val();
        self.rtx_ram.write_data.next.imm = self.d_imm.q.val();
        self.rtx_ram.write_data.next.has_imm = self.d_op.q.val() == self.p_op_write_imm.val();
        self.rtx_ram.write_enable.next = false;

        // Output register: free when empty or being taken.
        self.out_free.next = !self.o_valid.q.val() | self.out_ready.val();
        if self.out_ready.val() {
            self.o_valid.d.next = false;
        }
        if self.msg_ready.val() {
            self.m_valid.d.next = false;
        }
        self.dma_rd.req.valid.next = false;
        self.dma_rd.req.addr.next = self.desc_addr.q.val();
        self.dma_rd.req.len.next = bit_cast::<16, 4>(self.batch_n.q.val()) << 6;
        // The QP, for waveforms; its low 7 bits only: a read arbiter's
        // source keeps its tags below 128 (docs/hw/dma_arb.md).
        self.dma_rd.req.tag.next = bit_cast::<8, 7>(self.cur_qp.q.val().get_bits::<7>(0));
        self.dma_rd.rsp.ready.next = false;
        self.rtx_ready.next = false;
        self.err_valid.next = false;
        self.k_bad_opcode.d.next = false;
        self.k_bad_flags.d.next = false;
        self.k_bad_length.d.next = false;
        self.k_bad_doorbell.d.next = false;
        self.k_rtx_miss.d.next = false;
        self.k_db_stale.d.next = false;
        self.k_sq_held.d.next = false;
        self.ld_bad.d.next = false;
        self.db_at_pick.d.next = false;

        // LOAD locals.
        self.ld_size.next = bit_cast::<32, RING_SIZE_BITS>(self.ctx_ram.read_data.val().ring_size);
        self.ld_mask.next = self.ld_size.val() - 1;
        self.ld_ci.next = self.dyn_ram.read_data.val().ci;
        self.ld_pi.next = self.cur_pi.q.val();
        if self.ld_new.q.val() & !self.ld_judged.q.val() {
            self.ld_pi.next = self.pi_ram.read_data.val();
        }
        if self.ld_new.q.val() & self.ld_judged.q.val() {
            self.ld_pi.next = self.dyn_ram.read_data.val().latest_pi;
        }
        self.db_diff.next = self.ld_pi.val() - self.ld_ci.val();
        self.ld_sup.next = self.dyn_ram.read_data.val().latest_pi - self.ld_pi.val();
        // Records in use as last written back (RECLAIM frees those una
        // has passed since); a QP in error has none: nothing will
        // acknowledge them, and its messages are not sent.
        self.ld_used.next = self.dyn_ram.read_data.val().used;
        if self.qerr_ram.read_data.val() {
            self.ld_used.next = 0.into();
        }
        self.ld_free.next = self.p_slots.val() - self.ld_used.val();
        self.ld_lim.next = bit_cast::<4, RTX_COUNT_BITS>(self.ld_free.val());
        if self.ld_free.val() > self.p_max_batch.val() {
            self.ld_lim.next = bit_cast::<4, RTX_COUNT_BITS>(self.p_max_batch.val());
        }
        self.ld_tail_next.next =
            self.dyn_ram.read_data.val().head - bit_cast::<RTX_SLOT_BITS, RTX_COUNT_BITS>(self.ld_used.val()) + 1;
        // RECLAIM: the oldest record in use (at head - used) ends where the
        // record after it starts (consecutive PSN ranges), or at the QP's
        // next PSN when it is the only one; it is free once una has passed
        // that end (una - end not negative, serially).
        self.rc_end.next = self.cur_psn.q.val();
        if self.cur_used.q.val() > 1 {
            self.rc_end.next = self.rtx_ram.read_data.val().first_psn;
        }
        self.rc_d.next = self.cur_una.q.val() - self.rc_end.val();
        self.rc_acked.next = (self.cur_used.q.val() != 0) & !self.rc_d.val().get_bit(23);
        self.rc_free.next = self.p_slots.val() - self.cur_used.q.val() + 1;
        self.rc_lim.next = bit_cast::<4, RTX_COUNT_BITS>(self.rc_free.val());
        if self.rc_free.val() > self.p_max_batch.val() {
            self.rc_lim.next = bit_cast::<4, RTX_COUNT_BITS>(self.p_max_batch.val());
        }
        self.rc_addr.next =
            self.cur_head.q.val() - bit_cast::<RTX_SLOT_BITS, RTX_COUNT_BITS>(self.cur_used.q.val()) + 2;
        self.s_last.next = self.s_rem.q.val() <= self.cur_mtu.q.val();
        // Batch size: min(8, pi - ci, slots to the ring's end, free
        // records, and the QP's turn while another QP waits); `cur_lim`
        // (free records, at most 8, kept in a register) stands in for the
        // 8. The turn's compare ahead of the others costs levels (batch_n
        // at 8.75, docs/benchmarks.md); registering the limit would read a
        // `cur_lim` a cycle old, which in NextBatch after Reclaim may
        // still say 0 (held) for a QP just freed. A batch never has to
        // stop for a record: una only moves forward.
        self.avail.next = self.cur_pi.q.val() - self.cur_ci.q.val();
        self.to_end.next = (self.cur_ring_mask.q.val() + 1) - (self.cur_ci.q.val() & self.cur_ring_mask.q.val());
        // A turn (`TURN_BYTES`): while another QP waits, no more
        // descriptors than the QP's latest message says fit.
        self.t_lim.next = self.cur_lim.q.val();
        if self.a_other.q.val() & (self.cur_turn.q.val() < self.cur_lim.q.val()) {
            self.t_lim.next = self.cur_turn.q.val();
        }
        self.free32.next = bit_cast::<32, 4>(self.t_lim.val());
        self.nb1.next = self.t_lim.val();
        if self.avail.val() < self.free32.val() {
            self.nb1.next = bit_cast::<4, 32>(self.avail.val());
        }
        self.nb.next = self.nb1.val();
        if self.to_end.val() < bit_cast::<32, 4>(self.nb1.val()) {
            self.nb.next = bit_cast::<4, 32>(self.to_end.val());
        }
        // Fetch ahead (see `f_ci`), in registered stages so that no path
        // adds logic levels. Stage 1, from registers and the QP's
        // `pi_ram` entry (read at `cur_qp` outside IDLE): a newer
        // doorbell's value is taken only if it is beyond the producer
        // index in service and within the ring; the limits.
        self.a_ring.next = self.cur_ring_mask.q.val() + 1;
        self.a_up_d.next = self.pi_ram.read_data.val() - self.cur_pi.q.val();
        self.a_fit_d.next = self.pi_ram.read_data.val() - self.cur_ci.q.val();
        self.a_v.d.next = self.pi_ram.read_data.val();
        self.a_up.d.next = (self.a_up_d.val() != 0) & !self.a_up_d.val().get_bit(31);
        self.a_fit.d.next = self.a_fit_d.val() <= self.a_ring.val();
        self.f_to_end.d.next = self.a_ring.val() - (self.f_ci.q.val() & self.cur_ring_mask.q.val());
        self.f_room_wide.next = bit_cast::<RTX_COUNT_BITS, 4>(self.f_room.q.val());
        self.a_lim.d.next = self.f_room.q.val();
        if self.f_free.q.val() < self.f_room_wide.val() {
            self.a_lim.d.next = bit_cast::<4, RTX_COUNT_BITS>(self.f_free.q.val());
        }
        // The search never offers the QP it last picked while another is
        // pending (it comes last in the wrap).
        // Queued reads of other QPs: their beats come before an ahead read's.
        self.a_other.d.next =
            (self.pick_any.q.val() & (self.pick_qp.q.val() != self.cur_qp.q.val())) | !self.rq.empty.val();
        // Stage 2: fetch up to the newer doorbell's value, or to the
        // producer index in service (descriptors a batch left: the ring's
        // end or MAX_BATCH cut it).
        self.a_t.d.next = self.cur_pi.q.val();
        if self.a_up.q.val() & self.a_fit.q.val() {
            self.a_t.d.next = self.a_v.q.val();
        }
        // Stage 3: min(descriptors announced and not requested, limit,
        // slots to the ring's end), as the batch size.
        self.a_d.next = self.a_t.q.val() - self.f_ci.q.val();
        self.a_n1.next = self.a_lim.q.val();
        if self.a_d.val() < bit_cast::<32, 4>(self.a_lim.q.val()) {
            self.a_n1.next = bit_cast::<4, 32>(self.a_d.val());
        }
        self.a_n.d.next = self.a_n1.val();
        if self.f_to_end.q.val() < bit_cast::<32, 4>(self.a_n1.val()) {
            self.a_n.d.next = bit_cast::<4, 32>(self.f_to_end.q.val());
        }
        self.a_go.d.next = (self.a_d.val() != 0) & !self.a_d.val().get_bit(31) & (self.a_lim.q.val() != 0);
        self.a_age_next.next = self.a_age.q.val();
        if self.a_age.q.val() != self.p_settled.val() {
            self.a_age_next.next = self.a_age.q.val() + 1;
        }
        self.a_age.d.next = self.a_age_next.val();
        // What REQ and an ahead read leave for the next ahead read.
        self.f_ci_req.next = self.cur_ci.q.val() + bit_cast::<32, 4>(self.batch_n.q.val());
        self.f_ci_ahead.next = self.f_ci.q.val() + bit_cast::<32, 4>(self.a_n.q.val());
        self.f_free_req.next =
            self.p_slots.val() - self.cur_used.q.val() - bit_cast::<RTX_COUNT_BITS, 4>(self.batch_n.q.val());
        self.f_free_ahead.next = self.f_free.q.val() - bit_cast::<RTX_COUNT_BITS, 4>(self.a_n.q.val());
        self.f_room_next.next = bit_cast::<4, RTX_COUNT_BITS>(self.p_max_batch.val()) - self.batch_n.q.val();
        self.in_batch.next = (self.state.q.val() == ReqState::Beat)
            | (self.state.q.val() == ReqState::Decode)
            | (self.state.q.val() == ReqState::Commit)
            | (self.state.q.val() == ReqState::Segment);
        self.a_issue.next = self.in_batch.val()
            & !self.ahead.q.val()
            & !self.a_req.q.val()
            & self.a_go.q.val()
            & (self.a_age.q.val() == self.p_settled.val())
            & !self.a_other.q.val();
        // After a descriptor: its batch's next beat, or the next batch.
        self.after_msg.next = ReqState::NextBatch;
        if self.beats_left.q.val() != 0 {
            self.after_msg.next = ReqState::Beat;
        }
        // Retransmit entry fields.
        self.r_first.next = self.rtx_ram.read_data.val().first_psn;
        self.r_npkts.next = self.rtx_ram.read_data.val().packets;
        // Binary search probe: the record at `r_pos + r_step` (offset
        // `r_j + r_step` from the oldest) is taken as the new candidate when
        // it is inside the window and starts at or before the PSN (`psn -
        // first` not negative, serially: PSN ranges are consecutive, so
        // first PSNs rise along the ring, across the 24-bit wrap too). Both
        // next read addresses come from registers; the compare only picks.
        self.r_cand_j.next = self.r_j.q.val() + self.r_step.q.val();
        self.r_cand_pos.next = self.r_pos.q.val() + bit_cast::<RTX_SLOT_BITS, RTX_COUNT_BITS>(self.r_step.q.val());
        self.r_in.next = self.r_cand_j.val() < self.r_filled.q.val();
        self.r_probe_d.next = self.r_psn.q.val() - self.r_first.val();
        self.r_take.next = self.r_in.val() & !self.r_probe_d.val().get_bit(23);
        self.r_half.next = self.r_step.q.val() >> 1;
        self.r_addr_take.next = self.r_cand_pos.val() + bit_cast::<RTX_SLOT_BITS, RTX_COUNT_BITS>(self.r_half.val());
        self.r_addr_keep.next = self.r_pos.q.val() + bit_cast::<RTX_SLOT_BITS, RTX_COUNT_BITS>(self.r_half.val());
        self.r_oldest.next = self.dyn_ram.read_data.val().head
            - bit_cast::<RTX_SLOT_BITS, RTX_COUNT_BITS>(self.dyn_ram.read_data.val().filled);
        self.r_probe0.next = self.r_oldest.val() + bit_cast::<RTX_SLOT_BITS, RTX_COUNT_BITS>(self.p_first_step.val());
        self.r_hit_off.next = self.r_psn.q.val() - self.r_first.val();
        self.r_is_last.next = self.r_seg_next.val() == self.r_ent.q.val().packets;
        self.r_rem.next = self.r_ent.q.val().len - self.r_off.q.val();

        match self.state.q.val() {
            ReqState::Idle => {
                // IDLE: a retransmit first, else the next pending QP.
                self.rtx_ready.next = true;
                if self.rtx_valid.val() {
                    self.r_qp.d.next = self.rtx_qp.val();
                    self.r_psn.d.next = self.rtx_psn.val();
                    self.r_ret.d.next = ReqState::Idle;
                    self.r_fresh.d.next = false;
                    self.ctx_ram.read_address.next = self.rtx_qp.val();
                    self.dyn_ram.read_address.next = self.rtx_qp.val();
                    self.qerr_ram.read_address.next = self.rtx_qp.val();
                    self.r_err.d.next = self.qerr_rtx_in.val();
                    self.state.d.next = ReqState::RtxContext;
                } else if !self.rq.empty.val() & (self.dma_rd.rsp.valid.val() | !self.can_issue.val()) {
                    // The oldest queued read: its beats are here, or no
                    // further read can be issued. Its QP is loaded as a
                    // judged pick's (its pending bit stays: a newer
                    // doorbell), so LOAD takes the producer index NEXT
                    // recorded before the read (`latest_pi`, not behind
                    // itself: no count); NEXT starts its beats.
                    self.rq_pop.next = true;
                    self.queued.d.next = true;
                    self.ld_new.d.next = true;
                    self.ld_judged.d.next = true;
                    self.cur_qp.d.next = self.rq_qp.val();
                    self.batch_n.d.next = self.rq_n.val();
                    self.pi_ram.read_address.next = self.rq_qp.val();
                    self.ctx_ram.read_address.next = self.rq_qp.val();
                    self.dyn_ram.read_address.next = self.rq_qp.val();
                    self.una_ram.read_address.next = self.rq_qp.val();
                    self.qerr_ram.read_address.next = self.rq_qp.val();
                    self.cur_err.d.next = self.qerr_rq.val();
                    self.state.d.next = ReqState::Load;
                } else if self.can_issue.val() {
                    self.pick.next = true;
                    self.ld_new.d.next = true;
                    self.ld_judged.d.next = self.judged_at_pick.val().get_bit(0);
                    self.cur_qp.d.next = self.pick_qp.q.val();
                    self.pi_ram.read_address.next = self.pick_qp.q.val();
                    self.ctx_ram.read_address.next = self.pick_qp.q.val();
                    self.dyn_ram.read_address.next = self.pick_qp.q.val();
                    self.una_ram.read_address.next = self.pick_qp.q.val();
                    self.qerr_ram.read_address.next = self.pick_qp.q.val();
                    // The RAM read misses a report written at this edge,
                    // and a doorbell's value written at this edge.
                    self.cur_err.d.next = self.qerr_pick.val();
                    self.db_at_pick.d.next = self.db_valid.val() & (self.db_qp.val() == self.pick_qp.q.val());
                    self.rr_done.d.next = self.pick_done.q.val();
                    self.state.d.next = ReqState::Load;
                }
            }
            ReqState::Load => {
                // LOAD: the QP's context; check the doorbell.
                self.cur_base.d.next = self.ctx_ram.read_data.val().base;
                self.cur_ring_mask.d.next = self.ld_mask.val();
                self.cur_log2mtu.d.next = self.ctx_ram.read_data.val().log2_mtu;
                self.cur_mtu.d.next = self.one32.val() << bit_cast::<32, 4>(self.ctx_ram.read_data.val().log2_mtu);
                self.cur_ci.d.next = self.ld_ci.val();
                self.cur_psn.d.next = self.dyn_ram.read_data.val().next_psn;
                self.cur_head.d.next = self.dyn_ram.read_data.val().head;
                self.cur_used.d.next = self.ld_used.val();
                self.cur_filled.d.next = self.dyn_ram.read_data.val().filled;
                self.cur_lim.d.next = self.ld_lim.val();
                self.cur_turn.d.next = self.dyn_ram.read_data.val().turn;
                self.cur_una.d.next = self.una_ram.read_data.val();
                // RECLAIM's first read: the record after the oldest in use.
                self.rtx_rd_qp.next = self.cur_qp.q.val();
                self.rtx_rd_pos.next = self.ld_tail_next.val();
                self.cur_err.d.next = self.cur_err.q.val() | self.qerr_ram.read_data.val() | self.qerr_cur.val();
                self.served.d.next = false;
                self.cur_pi.d.next = self.ld_pi.val();
                // A backlog waits: its PSN is read in NEXT (`res_ram`).
                self.cur_backlog.d.next = self.backlog.q.val().get_bit(self.cur_qp.q.val().index());
                self.res_known.d.next = false;
                self.res_stop.d.next = false;
                // A refused doorbell's error record, loaded whatever the
                // check finds (no error record is pending in LOAD), so
                // that its registers do not wait for the check.
                self.e_ret.d.next = ReqState::NextBatch;
                self.e_qp.d.next = self.cur_qp.q.val();
                self.e_status.d.next = 4.into();
                self.e_opcode.d.next = 0.into();
                self.e_wr_id.d.next = 0.into();
                self.e_sq_index.d.next = self.ld_pi.val();
                self.e_len.d.next = 0.into();
                // LOAD always goes on (through RECLAIM) to NEXT, which starts
                // the error record of a rejected value (`ld_bad`): the state
                // register does not wait for the check (9 logic levels when
                // it did, the budget is 8), at the cost of one cycle per
                // rejected doorbell.
                self.state.d.next = ReqState::Reclaim;
                if self.queued.q.val() {
                    // A queued read's QP: its records were counted (and
                    // reclaimed) when the read was issued.
                    self.state.d.next = ReqState::NextBatch;
                }
                if self.ctx_ram.read_data.val().enable
                    & (self.db_diff.val().get_bit(31) | ((self.ld_sup.val() != 0) & !self.ld_sup.val().get_bit(31)))
                {
                    // Behind the consumer index (pi - ci >= 2^31), or behind the
                    // latest producer index accepted for the QP: stale. The QP
                    // goes on to the accepted one (work a re-queue left).
                    self.k_db_stale.d.next = true;
                    self.judge.next = true;
                    self.cur_pi.d.next = self.dyn_ram.read_data.val().latest_pi;
                } else if !self.ctx_ram.read_data.val().enable | (self.db_diff.val() > self.ld_size.val()) {
                    // Rejected; the QP goes on to the latest producer index
                    // accepted for it (work a re-queue left; none after a
                    // config write, which resets it to the consumer index).
                    self.cur_pi.d.next = self.dyn_ram.read_data.val().latest_pi;
                    self.k_bad_doorbell.d.next = true;
                    self.judge.next = true;
                    self.ld_bad.d.next = true;
                }
            }
            ReqState::NextBatch => {
                // NEXT: all fetched? else the next batch: up to 8 descriptors,
                // not beyond the producer index nor the ring's end, nor the
                // free records. The doorbell's producer index is recorded as
                // the QP's latest (state as it is; in a cycle with a config
                // write NEXT waits before a read: a queued read's LOAD takes
                // it, see IDLE). A config row's reset has the port then
                // (its enable set above stays).
                if !self.cw_valid.q.val() {
                    self.dyn_ram.write_enable.next = true;
                }
                self.k_sq_held.d.next = !self.ld_bad.q.val()
                    & !self.ahead.q.val()
                    & !self.queued.q.val()
                    & (self.cur_ci.q.val() != self.cur_pi.q.val())
                    & self.held.val();
                if self.queued.q.val() {
                    // A queued read: its beats (requested when the QP was
                    // issued, its records counted then) are the batch.
                    self.queued.d.next = false;
                    self.served.d.next = true;
                    self.beats_left.d.next = self.batch_n.q.val();
                    self.f_ci.d.next = self.f_ci_req.val();
                    self.f_room.d.next = self.f_room_next.val();
                    self.f_free.d.next = self.f_free_req.val();
                    self.a_age.d.next = 0.into();
                    self.state.d.next = ReqState::Beat;
                } else if self.ahead.q.val() {
                    // The ahead read's descriptors are the next batch (its
                    // records were counted when it was requested); the
                    // next ahead read may have what this one leaves.
                    self.ahead.d.next = false;
                    self.beats_left.d.next = self.batch_n.q.val();
                    self.f_room.d.next = self.f_room_next.val();
                    self.a_age.d.next = 0.into();
                    self.state.d.next = ReqState::Beat;
                } else if self.ld_bad.q.val() {
                    // LOAD rejected the doorbell value: its error record
                    // (loaded there) first, then back here.
                    self.state.d.next = ReqState::Error;
                } else if self.cur_backlog.q.val() & self.cur_err.q.val() {
                    // A QP in error sends nothing: its backlog is dropped
                    // (its messages' records are out: flushed).
                    self.bl_done.next = true;
                    self.cur_backlog.d.next = false;
                } else if self.cur_backlog.q.val() {
                    // The backlog before any new descriptor. Shut: the QP
                    // waits, pending (the yield's bit), for its window.
                    if self.cur_shut.val() {
                        // Pending again: the pick that brought it here may
                        // have been searched before its shut bit was set.
                        self.bl_requeue.next = true;
                        self.state.d.next = ReqState::Idle;
                    } else {
                        if !self.res_known.q.val() {
                            self.res_psn.d.next = self.res_ram.read_data.val();
                            self.res_known.d.next = true;
                        }
                        self.res_stop.d.next = false;
                        self.state.d.next = ReqState::ResumeNext;
                    }
                } else if (self.cur_ci.q.val() == self.cur_pi.q.val()) | self.requeue.val() {
                    self.state.d.next = ReqState::Idle;
                } else if self.held.val() {
                    // Held, and no other QP pending: look again after a LOAD
                    // (the QP's una re-read). Retransmits go first: the acknowledgements
                    // that free a record may need them.
                    self.rtx_ready.next = true;
                    if self.rtx_valid.val() {
                        self.r_qp.d.next = self.rtx_qp.val();
                        self.r_psn.d.next = self.rtx_psn.val();
                        self.r_ret.d.next = ReqState::Load;
                        self.r_fresh.d.next = false;
                        self.ctx_ram.read_address.next = self.rtx_qp.val();
                        self.dyn_ram.read_address.next = self.rtx_qp.val();
                        self.qerr_ram.read_address.next = self.rtx_qp.val();
                        self.r_err.d.next = self.qerr_rtx_in.val();
                        self.state.d.next = ReqState::RtxContext;
                    } else {
                        self.state.d.next = ReqState::Load;
                    }
                } else if self.cw_valid.q.val() {
                    // A config write has the dynamic-state RAM's port: the
                    // producer index is recorded (the read queue relies on
                    // it) before the read, a cycle later.
                    self.state.d.next = ReqState::NextBatch;
                } else {
                    self.batch_n.d.next = self.nb.val();
                    self.beats_left.d.next = self.nb.val();
                    self.desc_addr.d.next = (bit_cast::<64, 58>(self.cur_base.q.val())
                        + bit_cast::<64, 32>(self.cur_ci.q.val() & self.cur_ring_mask.q.val()))
                        << 6;
                    self.state.d.next = ReqState::Request;
                }
            }
            ReqState::Request => {
                // REQ: the read request (batch_n x 64 bytes).
                self.dma_rd.req.valid.next = true;
                self.served.d.next = true;
                // What an ahead read may fetch after this batch.
                self.f_ci.d.next = self.f_ci_req.val();
                self.f_room.d.next = self.f_room_next.val();
                self.f_free.d.next = self.f_free_req.val();
                self.a_age.d.next = 0.into();
                if self.dma_rd.req.ready.val() {
                    if !self.rq.empty.val() | (self.pick_any.q.val() & (self.pick_qp.q.val() != self.cur_qp.q.val())) {
                        // Another QP waits, or reads are queued (their beats
                        // come first): queue this read and issue the next
                        // QP's while it is out.
                        self.rq_push.next = true;
                        self.pushed.d.next = true;
                        self.state.d.next = ReqState::Idle;
                    } else {
                        self.state.d.next = ReqState::Beat;
                    }
                }
            }
            ReqState::Beat => {
                // BEAT: one descriptor per 512-bit beat (byte 0 in bits 7:0,
                // offsets of contract::layout::sqe).
                self.dma_rd.rsp.ready.next = true;
                if self.dma_rd.rsp.valid.val() {
                    self.d_op.d.next = self.dma_rd.rsp.data.val().get_value_sqe_opcode();
                    self.d_flags.d.next = self.dma_rd.rsp.data.val().get_value_sqe_flags();
                    self.d_len.d.next = self.dma_rd.rsp.data.val().get_value_sqe_length();
                    self.d_wrid.d.next = self.dma_rd.rsp.data.val().get_value_sqe_wr_id();
                    self.d_iova.d.next = self.dma_rd.rsp.data.val().get_value_sqe_local_iova();
                    self.d_rva.d.next = self.dma_rd.rsp.data.val().get_value_sqe_remote_va();
                    self.d_rkey.d.next = self.dma_rd.rsp.data.val().get_value_sqe_rkey();
                    self.d_imm.d.next = self.dma_rd.rsp.data.val().get_value_sqe_imm();
                    if self.dma_rd.rsp.last.val() {
                        self.beats_left.d.next = 0.into();
                    } else {
                        self.beats_left.d.next = self.beats_left.q.val() - 1;
                    }
                    self.state.d.next = ReqState::Decode;
                }
            }
            ReqState::Decode => {
                // DECODE: the checks in contract::layout's order, and the packet count.
                self.d_bad.d.next = 0.into();
                if (self.d_op.q.val() != self.p_op_write.val()) & (self.d_op.q.val() != self.p_op_write_imm.val()) {
                    self.d_bad.d.next = 1.into();
                } else if (self.d_flags.q.val() & self.p_flags_unknown.val()) != 0 {
                    self.d_bad.d.next = 2.into();
                } else if self.d_len.q.val().get_bit(31) & (self.d_len.q.val().get_bits::<31>(0) != 0) {
                    // Longer than contract::layout::MAX_MESSAGE_LEN (2^31 bytes).
                    self.d_bad.d.next = 3.into();
                }
                if self.d_len.q.val() == 0 {
                    self.d_npkts.d.next = 1.into();
                } else {
                    self.d_npkts.d.next = bit_cast::<24, 32>(
                        ((self.d_len.q.val() - 1) >> bit_cast::<32, 4>(self.cur_log2mtu.q.val())) + 1,
                    );
                }
                self.state.d.next = ReqState::Commit;
            }
            ReqState::Commit => {
                // COMMIT (waits while a config write owns the dyn RAM port, and
                // while the previous message record has not been taken).
                if !self.cw_valid.q.val() & !self.m_valid.q.val() {
                    self.cur_ci.d.next = self.cur_ci.q.val() + 1;
                    self.dyn_ram.write_enable.next = true;
                    if self.d_bad.q.val() != 0 {
                        self.e_ret.d.next = self.after_msg.val();
                        self.e_qp.d.next = self.cur_qp.q.val();
                        self.e_status.d.next = bit_cast::<8, 2>(self.d_bad.q.val());
                        self.e_opcode.d.next = self.d_op.q.val();
                        self.e_wr_id.d.next = self.d_wrid.q.val();
                        self.e_sq_index.d.next = self.cur_ci.q.val();
                        self.e_len.d.next = self.d_len.q.val();
                        self.k_bad_opcode.d.next = self.d_bad.q.val() == 1;
                        self.k_bad_flags.d.next = self.d_bad.q.val() == 2;
                        self.k_bad_length.d.next = self.d_bad.q.val() == 3;
                        self.state.d.next = ReqState::Error;
                    } else {
                        // Commit the whole message: PSNs, retransmit slot, and
                        // its record for the completion block.
                        self.m_valid.d.next = true;
                        self.m_qp.d.next = self.cur_qp.q.val();
                        self.m_wr_id.d.next = self.d_wrid.q.val();
                        self.m_opcode.d.next = self.d_op.q.val();
                        self.m_len.d.next = self.d_len.q.val();
                        self.m_sq_index.d.next = self.cur_ci.q.val();
                        self.m_signaled.d.next = (self.d_flags.q.val() & self.p_flag_signaled.val()).any();
                        self.m_first_psn.d.next = self.cur_psn.q.val();
                        self.m_last_psn.d.next = self.cur_psn.q.val() + self.d_npkts.q.val() - 1;
                        self.dyn_ram.write_data.next.next_psn = self.new_end.val();
                        self.dyn_ram.write_data.next.head = self.head_next.val();
                        self.dyn_ram.write_data.next.used = self.used_next.val();
                        self.dyn_ram.write_data.next.filled = self.filled_next.val();
                        self.dyn_ram.write_data.next.turn = self.turn_next.val();
                        self.cur_turn.d.next = self.turn_next.val();
                        self.cur_head.d.next = self.head_next.val();
                        self.cur_used.d.next = self.used_next.val();
                        self.cur_filled.d.next = self.filled_next.val();
                        self.cur_lim.d.next = self.cm_lim.val();
                        self.rtx_ram.write_enable.next = true;
                        self.cur_psn.d.next = self.cur_psn.q.val() + self.d_npkts.q.val();
                        self.s_first.d.next = true;
                        self.s_rem.d.next = self.d_len.q.val();
                        self.s_off.d.next = 0.into();
                        self.s_la.d.next = self.d_iova.q.val();
                        self.s_ra.d.next = self.d_rva.q.val();
                        self.s_psn.d.next = self.cur_psn.q.val();
                        self.s_imm.d.next = self.d_op.q.val() == self.p_op_write_imm.val();
                        self.state.d.next = ReqState::Segment;
                        if self.cur_backlog.q.val() {
                            // Behind a backlog: committed, sent by its
                            // resume (PSN order).
                            self.state.d.next = self.after_msg.val();
                        }
                    }
                }
            }
            ReqState::Segment => {
                // SEG: one record per cycle; a retransmit request goes first.
                // A QP in error sends nothing (the model in ERR): the rest of
                // the message is dropped at once (its message record is
                // out: the send completions flush it or fail it).
                self.rtx_ready.next = self.out_free.val() & !self.cur_err.q.val() & !self.cur_backlog.q.val();
                if self.cur_err.q.val() | self.cur_backlog.q.val() {
                    // In error: dropped. A yield of this QP: the rest of
                    // the message is its backlog's (committed, unsent).
                    self.state.d.next = self.after_msg.val();
                } else if self.out_free.val() & self.rtx_valid.val() {
                    self.r_qp.d.next = self.rtx_qp.val();
                    self.r_psn.d.next = self.rtx_psn.val();
                    self.r_fresh.d.next = false;
                    self.r_ret.d.next = ReqState::Segment;
                    self.ctx_ram.read_address.next = self.rtx_qp.val();
                    self.dyn_ram.read_address.next = self.rtx_qp.val();
                    self.qerr_ram.read_address.next = self.rtx_qp.val();
                    self.r_err.d.next = self.qerr_rtx_in.val();
                    self.state.d.next = ReqState::RtxContext;
                } else if self.out_free.val() {
                    self.o_valid.d.next = true;
                    self.o.d.next.qp = self.cur_qp.q.val();
                    self.o.d.next.psn = self.s_psn.q.val();
                    self.o.d.next.retransmit = false;
                    self.o.d.next.first = self.s_first.q.val();
                    self.o.d.next.last = self.s_last.val();
                    self.o.d.next.addr = self.s_la.q.val();
                    self.o.d.next.remote_va = self.s_ra.q.val();
                    self.o.d.next.rkey = self.d_rkey.q.val();
                    self.o.d.next.dma_len = self.d_len.q.val();
                    self.o.d.next.imm = self.d_imm.q.val();
                    self.o.d.next.msg_offset = self.s_off.q.val();
                    if self.s_last.val() {
                        self.o.d.next.len = bit_cast::<16, 32>(self.s_rem.q.val());
                    } else {
                        self.o.d.next.len = bit_cast::<16, 32>(self.cur_mtu.q.val());
                    }
                    if self.s_first.q.val() & self.s_last.val() {
                        if self.s_imm.q.val() {
                            self.o.d.next.opcode = 0x0B.into();
                        } else {
                            self.o.d.next.opcode = 0x0A.into();
                        }
                    } else if self.s_first.q.val() {
                        self.o.d.next.opcode = 0x06.into();
                    } else if self.s_last.val() {
                        if self.s_imm.q.val() {
                            self.o.d.next.opcode = 0x09.into();
                        } else {
                            self.o.d.next.opcode = 0x08.into();
                        }
                    } else {
                        self.o.d.next.opcode = 0x07.into();
                    }
                    self.s_first.d.next = false;
                    self.s_rem.d.next = self.s_rem.q.val() - self.cur_mtu.q.val();
                    self.s_off.d.next = self.s_off.q.val() + self.cur_mtu.q.val();
                    self.s_la.d.next = self.s_la.q.val() + bit_cast::<64, 32>(self.cur_mtu.q.val());
                    self.s_ra.d.next = self.s_ra.q.val() + bit_cast::<64, 32>(self.cur_mtu.q.val());
                    self.s_psn.d.next = self.s_psn.q.val() + 1;
                    if self.s_last.val() {
                        self.state.d.next = self.after_msg.val();
                    }
                }
            }
            ReqState::Error => {
                // ERR: hold the error record until taken.
                self.err_valid.next = true;
                if self.err_ready.val() {
                    self.state.d.next = self.e_ret.q.val();
                }
            }
            ReqState::RtxContext => {
                // R_CTX: the QP's MTU and its ring: the window is the last
                // `filled` records before the head; the search starts at its
                // oldest (offset 0) and probes half the ring further first.
                self.r_log2mtu.d.next = self.ctx_ram.read_data.val().log2_mtu;
                self.r_mtu.d.next = self.one32.val() << bit_cast::<32, 4>(self.ctx_ram.read_data.val().log2_mtu);
                self.r_filled.d.next = self.dyn_ram.read_data.val().filled;
                self.r_pos.d.next = self.r_oldest.val();
                self.r_j.d.next = 0.into();
                self.r_step.d.next = self.p_first_step.val();
                self.r_err.d.next = self.r_err.q.val() | self.qerr_ram.read_data.val() | self.qerr_r.val();
                self.rtx_rd_qp.next = self.r_qp.q.val();
                self.rtx_rd_pos.next = self.r_probe0.val();
                self.state.d.next = ReqState::RtxScan;
            }
            ReqState::RtxScan => {
                // R_SCAN: one probe per cycle (`RTX_SLOT_BITS` of them):
                // keep the last record starting at or before the PSN, and
                // read the next probe's record (after the last probe, the
                // record found).
                if self.r_take.val() {
                    self.r_pos.d.next = self.r_cand_pos.val();
                    self.r_j.d.next = self.r_cand_j.val();
                    self.rtx_rd_qp.next = self.r_qp.q.val();
                    self.rtx_rd_pos.next = self.r_addr_take.val();
                } else {
                    self.rtx_rd_qp.next = self.r_qp.q.val();
                    self.rtx_rd_pos.next = self.r_addr_keep.val();
                }
                self.r_step.d.next = self.r_half.val();
                if self.r_half.val() == 0 {
                    self.state.d.next = ReqState::RtxFind;
                }
            }
            ReqState::RtxFind => {
                // R_FIND: the PSN is in the record found if the window is not
                // empty and the PSN is inside its message (a PSN before the
                // oldest record's gives a negative offset, one after the
                // newest an offset past its end: a miss, counted).
                if (self.r_filled.q.val() != 0) & (self.r_hit_off.val() < self.r_npkts.val()) {
                    self.r_ent.d.next = self.rtx_ram.read_data.val();
                    self.r_seg.d.next = self.r_hit_off.val();
                    self.state.d.next = ReqState::RtxOffset;
                } else {
                    self.k_rtx_miss.d.next = true;
                    self.state.d.next = self.r_ret.q.val();
                    if self.r_fresh.q.val() {
                        // Cannot happen (a committed PSN's record stays
                        // until una passes it, and una cannot pass an
                        // unsent PSN); counted, and the backlog dropped
                        // rather than looked up for ever.
                        self.bl_done.next = true;
                        self.cur_backlog.d.next = false;
                    }
                }
            }
            ReqState::RtxOffset => {
                // R_CALC: the packet's offset in its message.
                self.r_off.d.next = bit_cast::<32, 24>(self.r_seg.q.val()) << bit_cast::<32, 4>(self.r_log2mtu.q.val());
                self.state.d.next = ReqState::RtxEmit;
            }
            ReqState::RtxEmit => {
                // R_EMIT: the record, as the first transmission had it; none
                // for a QP in error (the request is dropped).
                if self.r_err.q.val() | (self.r_fresh.q.val() & self.res_stop.q.val()) {
                    // A QP in error: dropped; a resume a yield stopped:
                    // the PSN stays in the backlog.
                    self.state.d.next = self.r_ret.q.val();
                } else if self.out_free.val() {
                    self.o_valid.d.next = true;
                    self.o.d.next.qp = self.r_qp.q.val();
                    self.o.d.next.psn = self.r_psn.q.val();
                    self.o.d.next.retransmit = !self.r_fresh.q.val();
                    if self.r_fresh.q.val() {
                        self.res_psn.d.next = self.res_psn.q.val() + 1;
                    }
                    self.o.d.next.first = self.r_seg.q.val() == 0;
                    self.o.d.next.last = self.r_is_last.val();
                    self.o.d.next.addr = self.r_ent.q.val().local_iova + bit_cast::<64, 32>(self.r_off.q.val());
                    self.o.d.next.remote_va = self.r_ent.q.val().remote_va + bit_cast::<64, 32>(self.r_off.q.val());
                    self.o.d.next.rkey = self.r_ent.q.val().rkey;
                    self.o.d.next.dma_len = self.r_ent.q.val().len;
                    self.o.d.next.imm = self.r_ent.q.val().imm;
                    self.o.d.next.msg_offset = self.r_off.q.val();
                    if self.r_is_last.val() {
                        self.o.d.next.len = bit_cast::<16, 32>(self.r_rem.val());
                    } else {
                        self.o.d.next.len = bit_cast::<16, 32>(self.r_mtu.q.val());
                    }
                    if (self.r_seg.q.val() == 0) & self.r_is_last.val() {
                        if self.r_ent.q.val().has_imm {
                            self.o.d.next.opcode = 0x0B.into();
                        } else {
                            self.o.d.next.opcode = 0x0A.into();
                        }
                    } else if self.r_seg.q.val() == 0 {
                        self.o.d.next.opcode = 0x06.into();
                    } else if self.r_is_last.val() {
                        if self.r_ent.q.val().has_imm {
                            self.o.d.next.opcode = 0x09.into();
                        } else {
                            self.o.d.next.opcode = 0x08.into();
                        }
                    } else {
                        self.o.d.next.opcode = 0x07.into();
                    }
                    self.state.d.next = self.r_ret.q.val();
                }
            }
            ReqState::ResumeNext => {
                // RES: the backlog's next PSN through the retransmit lookup
                // (RtxContext .. RtxEmit, as a first transmission), a
                // resend first; done at the committed end (`cur_psn`).
                // Stopped by an error, a yield, the QP shut, or the
                // backlog dropped (a lookup miss): NEXT decides.
                self.res_go.next =
                    self.cur_backlog.q.val() & !self.cur_err.q.val() & !self.res_stop.q.val() & !self.cur_shut.val();
                // A request is taken only where it is served.
                self.rtx_ready.next = self.out_free.val() & self.res_go.val();
                if !self.res_go.val() {
                    self.state.d.next = ReqState::NextBatch;
                } else if self.out_free.val() & self.rtx_valid.val() {
                    self.r_qp.d.next = self.rtx_qp.val();
                    self.r_psn.d.next = self.rtx_psn.val();
                    self.r_ret.d.next = ReqState::ResumeNext;
                    self.r_fresh.d.next = false;
                    self.ctx_ram.read_address.next = self.rtx_qp.val();
                    self.dyn_ram.read_address.next = self.rtx_qp.val();
                    self.qerr_ram.read_address.next = self.rtx_qp.val();
                    self.r_err.d.next = self.qerr_rtx_in.val();
                    self.state.d.next = ReqState::RtxContext;
                } else if self.res_psn.q.val() == self.cur_psn.q.val() {
                    self.bl_done.next = true;
                    self.cur_backlog.d.next = false;
                    self.state.d.next = ReqState::NextBatch;
                } else {
                    self.r_qp.d.next = self.cur_qp.q.val();
                    self.r_psn.d.next = self.res_psn.q.val();
                    self.r_ret.d.next = ReqState::ResumeNext;
                    self.r_fresh.d.next = true;
                    self.ctx_ram.read_address.next = self.cur_qp.q.val();
                    self.dyn_ram.read_address.next = self.cur_qp.q.val();
                    self.qerr_ram.read_address.next = self.cur_qp.q.val();
                    self.r_err.d.next = self.cur_err.q.val();
                    self.state.d.next = ReqState::RtxContext;
                }
            }
            ReqState::Reclaim => {
                // RECLAIM: free the oldest record in use while una has passed
                // its message (one per cycle: the next one's end is the record
                // after it, read now), then NEXT. A rejected doorbell's
                // `ld_bad` waits here for NEXT.
                self.ld_bad.d.next = self.ld_bad.q.val();
                if self.rc_acked.val() {
                    self.cur_used.d.next = self.cur_used.q.val() - 1;
                    self.cur_lim.d.next = self.rc_lim.val();
                    self.rtx_rd_qp.next = self.cur_qp.q.val();
                    self.rtx_rd_pos.next = self.rc_addr.val();
                } else {
                    self.state.d.next = ReqState::NextBatch;
                }
            }
        }

        // The ahead read: requested from any state of the batch (its
        // registers are not the batch's: `batch_n` and `desc_addr` serve
        // only the request), held until taken.
        if self.a_req.q.val() {
            self.dma_rd.req.valid.next = true;
            if self.dma_rd.req.ready.val() {
                self.a_req.d.next = false;
            }
        }
        if self.a_issue.val() {
            self.a_req.d.next = true;
            self.ahead.d.next = true;
            self.batch_n.d.next = self.a_n.q.val();
            self.desc_addr.d.next = (bit_cast::<64, 58>(self.cur_base.q.val())
                + bit_cast::<64, 32>(self.f_ci.q.val() & self.cur_ring_mask.q.val()))
                << 6;
            self.cur_pi.d.next = self.a_t.q.val();
            self.f_ci.d.next = self.f_ci_ahead.val();
            self.f_free.d.next = self.f_free_ahead.val();
            self.a_age.d.next = 0.into();
        }

        // The retransmit records' read address, {QP, ring position}, as
        // the state chose it.
        self.rtx_ram.read_address.next = (bit_cast::<RTX_ADDR_BITS, 8>(self.rtx_rd_qp.val()) << self.p_slot_bits.val())
            | bit_cast::<RTX_ADDR_BITS, RTX_SLOT_BITS>(self.rtx_rd_pos.val());

        // The pending set: a doorbell's and a re-queue's bits set, the
        // pick's cleared; a set wins (a doorbell in the cycle of its QP's
        // pick is served again: the RAM read may have had the older value).
        self.pend_set_db.next = 0.into();
        if self.db_valid.val() {
            self.pend_set_db.next = self.oh_db.o.val();
        }
        self.pend_set_rq.next = 0.into();
        if self.requeue.val() {
            self.pend_set_rq.next = self.oh_cur.o.val();
        }
        self.pend_clr.next = 0.into();
        if self.pick.val() {
            self.pend_clr.next = self.oh_pick.o.val();
        }
        if self.bl_requeue.val() {
            self.pend_set_rq.next = self.pend_set_rq.val() | self.cur_bit.val();
        }
        self.pend.d.next = (self.pend.q.val() & !self.pend_clr.val()) | self.pend_set_db.val() | self.pend_set_rq.val();
        // A yield: the record is taken back; its QP's backlog starts at its
        // PSN (`res_ram`, written above), the QP is pending again and,
        // unless its window moved since the ADMIT, shut until an open.
        if self.out_yield.val() {
            self.o_valid.d.next = false;
            self.pend.d.next = (self.pend.q.val() & !self.pend_clr.val())
                | self.pend_set_db.val()
                | self.pend_set_rq.val()
                | self.yield_bit.val();
            if self.yield_cur.val() {
                self.cur_backlog.d.next = true;
                self.res_psn.d.next = self.o.q.val().psn;
                self.res_known.d.next = true;
                self.res_stop.d.next = true;
            }
        }
        self.shut_clr.next = 0.into();
        if self.open_valid.val() {
            self.shut_clr.next = self.oh_open.o.val();
        }
        if self.qerr_take.val() {
            // A QP in error must be picked: its descriptors are flushed.
            self.shut_clr.next = self.shut_clr.val() | self.oh_qerr.o.val();
        }
        self.bl_clr.next = 0.into();
        if self.bl_done.val() {
            self.bl_clr.next = self.cur_bit.val();
        }
        if self.cw_valid.q.val() {
            // A config write resets the QP's send state.
            self.shut_clr.next = self.shut_clr.val() | self.oh_cfg.o.val();
            self.bl_clr.next = self.bl_clr.val() | self.oh_cfg.o.val();
            if self.cw_qp.q.val() == self.cur_qp.q.val() {
                self.cur_backlog.d.next = false;
            }
        }
        self.shut.d.next = self.shut.q.val() & !self.shut_clr.val();
        if self.out_yield.val() & !self.out_yield_reopen.val() {
            self.shut.d.next = (self.shut.q.val() & !self.shut_clr.val()) | self.yield_bit.val();
        }
        self.backlog.d.next = self.backlog.q.val() & !self.bl_clr.val();
        if self.out_yield.val() {
            self.backlog.d.next = (self.backlog.q.val() & !self.bl_clr.val()) | self.yield_bit.val();
        }
        // The read queue and its QPs' bits.
        self.rq.write.next = self.rq_push.val();
        self.rq.read.next = self.rq_pop.val();
        self.inq_set.next = 0.into();
        if self.rq_push.val() {
            self.inq_set.next = self.oh_cur.o.val();
        }
        self.inq_clr.next = 0.into();
        if self.rq_pop.val() {
            self.inq_clr.next = self.oh_rq.o.val();
        }
        self.inq.d.next = (self.inq.q.val() & !self.inq_clr.val()) | self.inq_set.val();
        // The judged set: LOAD's refusal sets the QP's bit, its next
        // doorbell clears it (the doorbell's one-hot is `pend_set_db`).
        // The refusal is registered first (`judge_q`, set in the cycle
        // after LOAD, when the QP in service is still the same: a pick
        // comes no sooner than the cycle after that), so the check's
        // carry chains do not also feed the 256-bit decode (9 logic levels
        // when they did, the budget is 8). A doorbell for the QP in LOAD's
        // cycle or in its pick's cycle (`db_at_pick`: the RAM read missed
        // it) cancels it: the new value in `pi_ram` is unjudged.
        self.judge_q.d.next = self.judge.val()
            & !self.db_at_pick.q.val()
            & !(self.db_valid.val() & (self.db_qp.val() == self.cur_qp.q.val()));
        self.judged_set.next = 0.into();
        if self.judge_q.q.val() {
            self.judged_set.next = self.oh_cur.o.val();
        }
        self.judged.d.next = (self.judged.q.val() | self.judged_set.val()) & !self.pend_set_db.val();

        self.out_valid.next = self.o_valid.q.val();
        self.out_qp.next = self.o.q.val().qp;
        self.out_psn.next = self.o.q.val().psn;
        self.out_opcode.next = self.o.q.val().opcode;
        self.out_ack_req.next = self.o.q.val().last;
        self.out_retransmit.next = self.o.q.val().retransmit;
        self.out_first.next = self.o.q.val().first;
        self.out_last.next = self.o.q.val().last;
        self.out_addr.next = self.o.q.val().addr;
        self.out_len.next = self.o.q.val().len;
        self.out_remote_va.next = self.o.q.val().remote_va;
        self.out_rkey.next = self.o.q.val().rkey;
        self.out_dma_len.next = self.o.q.val().dma_len;
        self.out_imm.next = self.o.q.val().imm;
        self.out_msg_offset.next = self.o.q.val().msg_offset;
        self.err_qp.next = self.e_qp.q.val();
        self.err_status.next = self.e_status.q.val();
        self.err_opcode.next = self.e_opcode.q.val();
        self.err_wr_id.next = self.e_wr_id.q.val();
        self.err_sq_index.next = self.e_sq_index.q.val();
        self.err_len.next = self.e_len.q.val();
        self.msg_valid.next = self.m_valid.q.val();
        self.msg_qp.next = self.m_qp.q.val();
        self.msg_wr_id.next = self.m_wr_id.q.val();
        self.msg_opcode.next = self.m_opcode.q.val();
        self.msg_len.next = self.m_len.q.val();
        self.msg_sq_index.next = self.m_sq_index.q.val();
        self.msg_signaled.next = self.m_signaled.q.val();
        self.msg_first_psn.next = self.m_first_psn.q.val();
        self.msg_last_psn.next = self.m_last_psn.q.val();
        self.cnt_bad_opcode.next = self.k_bad_opcode.q.val();
        self.cnt_bad_flags.next = self.k_bad_flags.q.val();
        self.cnt_bad_length.next = self.k_bad_length.q.val();
        self.cnt_bad_doorbell.next = self.k_bad_doorbell.q.val();
        self.cnt_bad_cfg.next = self.k_bad_cfg.q.val();
        self.cnt_rtx_miss.next = self.k_rtx_miss.q.val();
        self.cnt_db_stale.next = self.k_db_stale.q.val();
        self.cnt_sq_held.next = self.k_sq_held.q.val();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn opcodes_are_protos() {
        use super::opcode::*;
        use proto::wire::Opcode;
        for (ours, theirs) in [
            (WRITE_FIRST, Opcode::WriteFirst),
            (WRITE_MIDDLE, Opcode::WriteMiddle),
            (WRITE_LAST, Opcode::WriteLast),
            (WRITE_LAST_IMM, Opcode::WriteLastImm),
            (WRITE_ONLY, Opcode::WriteOnly),
            (WRITE_ONLY_IMM, Opcode::WriteOnlyImm),
        ] {
            assert_eq!(ours, theirs as u8);
        }
    }
}
