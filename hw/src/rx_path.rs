//! Receive-side glue of `MrcCore`: joins the RX parser's per-frame record
//! with the RX buffer's per-frame status, and dispatches every frame, in
//! frame order and one at a time, to the responder blocks (SACK table,
//! completion tracker, ACK generator, RX buffer command) or to the
//! requester's retransmit engine (MRC SACK / NACK), or discards it with a
//! counter pulse per kind. Completion records of the completion tracker
//! leave packed as CQEs (`contract::layout::cqe`) for a `RingWriter`, with the
//! receive CQ of the QP snooped from the send-context rows (config table
//! 1), and the QP's path MTU from the receive set-up rows (table 7): a data
//! packet whose payload is longer is malformed, as for the golden QP. The
//! join FIFOs never overflow: the ingress admission
//! (`hw::rx_ingress`) admits a frame only with a join credit, which comes
//! back on `join_release`. See `docs/hw/rx_path.md`.

use contract::config::table;
use rust_hdl::prelude::*;

use crate::bus::ConfigSink;

use crate::ack_gen::nack;
use crate::contract_rows::{CqeRecord, RecvInitRow, SqCtxRow, TableId};
use crate::ev_selector::VALUE_BITS;
use crate::param::Param;
use crate::retransmit::{kind, SackFeedback, KIND_BITS};

/// States of the dispatcher's head stage (the frame being classified,
/// judged and checked). A frame leaves it as soon as its last request to
/// the SACK table is issued (a marking request not taken at once is
/// offered by the tail): its ACK generator record and advance wait in
/// the tail stage, its RX buffer command in the command stage, so the
/// next frame is classified while they finish.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum DispatchState {
    /// No frame in the head stage: a joined FIFO head is classified and
    /// taken in the cycle it is on the RAM outputs.
    Idle,
    /// The judging request (`nomark`) to the SACK table.
    Judge,
    /// Waiting for its verdict; a new, untrimmed packet's record goes to
    /// the completion tracker in the verdict's cycle when it can.
    JudgeWait,
    /// The packet record to the completion tracker (it waits for the
    /// previous frame's advance, or the tracker's `pkt_ready`).
    CompletionPacket,
    /// Its result (and the placement address) from the completion tracker.
    CompletionResult,
    /// Waiting for the placement address alone.
    CompletionPlace,
    /// The marking request (the packet was judged new and the completion
    /// tracker accepted it), when it could not go in the result's cycle
    /// (the tail or the command stage busy, or the placement address
    /// still to come). Once the tail stage is empty the frame moves
    /// there with its request, which the tail offers until the SACK table
    /// takes it (`t_mark`), and the next frame is taken into the head
    /// stage in the same cycle.
    Mark,
    /// Waiting for the tail stage to take the frame's ACK generator record.
    Handover,
    /// A SACK / NACK record to the retransmit engine.
    RetransmitOp,
    /// A legacy probe response's readmit (`rdm_*`) to the core.
    Readmit,
}

/// Depth of each join FIFO, log2: `JOIN_DEPTH` is the ingress
/// admission's join credits (`hw::rx_ingress`), so a FIFO never
/// overflows. 64 frames of headers (a few hundred LUTs of LUT RAM)
/// absorb the bursts of small frames that come faster than the head
/// stage takes them (5 to 6 cycles per placed packet at best, a median of 8
/// for one QP's behind the SACK table's same-QP stall: a peer sends one every
/// 6, and the ACKs of 64-byte WRITEs arrive bunched by the EVs' spread);
/// 16 are too few once the TX path reads 32 payloads ahead
/// (docs/benchmarks.md, "32 reads ahead and 64 join credits").
pub const JOIN_BITS: usize = 6;
pub const JOIN_DEPTH: usize = 1 << JOIN_BITS;
/// The join FIFOs' pointers: one bit more than a slot index, so a full
/// FIFO and an empty one differ.
pub const JOIN_PTR_BITS: usize = JOIN_BITS + 1;

/// An ACK generator record as it leaves (`ag_*`), in the record stage.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct AgRecord {
    pub qp: Bits<8>,
    pub psn: Bits<24>,
    pub verdict: Bits<2>,
    pub ack_req: Bit,
    pub trimmed: Bit,
    pub ecn: Bit,
    pub reject: Bit,
    pub drop: Bit,
    pub expected: Bits<24>,
    /// The QP's MSN after the packet, when `msn_valid` (an accepted one).
    pub msn: Bits<24>,
    pub msn_valid: Bit,
    /// The EV of the packet (32 bits, MRC 1.0).
    pub ev: Bits<VALUE_BITS>,
    pub ev_index: Bits<16>,
    pub echo: Bits<32>,
    pub probe: Bit,
    pub probe_legacy: Bit,
    pub probe_id: Bits<32>,
}

/// A payload length against each path MTU the receive set-up rows can
/// name (`recv_init.log2_mtu` 8..=13): longer than it.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct LenOverMtu {
    pub mtu_256: Bit,
    pub mtu_512: Bit,
    pub mtu_1k: Bit,
    pub mtu_2k: Bit,
    pub mtu_4k: Bit,
    pub mtu_8k: Bit,
}

/// A parsed frame's header fields in the header join FIFO (`pf_hdr`).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct JoinHeader {
    pub opcode: Bits<8>,
    /// The destination QP's low 8 bits (the core's QP number).
    pub qp: Bits<8>,
    pub psn: Bits<24>,
    /// The frame's EV (32 bits, MRC 1.0: UDP source port and flow label).
    pub ev: Bits<VALUE_BITS>,
}

/// The RX path glue. Ports are described in `docs/hw/rx_path.md`; the
/// RX buffer's ids are carried through, whatever their width.
#[derive(LogicBlock, Default)]
pub struct RxPath {
    pub clock: Signal<In, Clock>,
    /// The core's ns clock: a frame's record is stamped with it as the
    /// parser hands it over (`op_fb.arrival`).
    pub now_ns: Signal<In, Bits<32>>,
    // ---- RX parser record (one pulse per frame, no back-pressure: the
    // ingress admission keeps at most `JOIN_DEPTH` frames unjoined).
    pub prs_valid: Signal<In, Bit>,
    pub prs_drop: Signal<In, Bit>,
    pub prs_ecn_ce: Signal<In, Bit>,
    pub prs_trimmed: Signal<In, Bit>,
    /// The parser's `out_skip`: an MRC 1.0 TRIMMED NACK (the engine's
    /// `NACK_TRIM_SKIP`) or a SACK with m = SKIP_ONCE (`op_fb.skip`): the
    /// requester SKIPs the EV once.
    pub prs_skip: Signal<In, Bit>,
    /// The parser's `out_always_skip`: a SACK with m = ALWAYS_SKIP
    /// (`op_fb.always_skip`).
    pub prs_always_skip: Signal<In, Bit>,
    pub prs_ev: Signal<In, Bits<32>>,
    pub prs_opcode: Signal<In, Bits<8>>,
    pub prs_dest_qp: Signal<In, Bits<24>>,
    pub prs_ack_req: Signal<In, Bit>,
    pub prs_xbit: Signal<In, Bit>,
    pub prs_psn: Signal<In, Bits<24>>,
    pub prs_reth_va: Signal<In, Bits<64>>,
    pub prs_reth_rkey: Signal<In, Bits<32>>,
    pub prs_reth_len: Signal<In, Bits<32>>,
    pub prs_imm: Signal<In, Bits<32>>,
    pub prs_ext: Signal<In, Bits<224>>,
    pub prs_payload_off: Signal<In, Bits<18>>,
    pub prs_payload_len: Signal<In, Bits<18>>,
    // ---- RX buffer status (one pulse per frame) and command port.
    pub rec_valid: Signal<In, Bit>,
    pub rec_stored: Signal<In, Bit>,
    pub rec_id: Signal<In, Bits<16>>,
    pub cmd_valid: Signal<Out, Bit>,
    pub cmd_ready: Signal<In, Bit>,
    pub cmd_id: Signal<Out, Bits<16>>,
    pub cmd_place: Signal<Out, Bit>,
    pub cmd_addr: Signal<Out, Bits<64>>,
    pub cmd_off: Signal<Out, Bits<18>>,
    pub cmd_len: Signal<Out, Bits<18>>,
    // ---- SACK table packet port.
    pub sack_req_valid: Signal<Out, Bit>,
    pub sack_req_ready: Signal<In, Bit>,
    pub sack_req_qp: Signal<Out, Bits<8>>,
    pub sack_req_psn: Signal<Out, Bits<24>>,
    /// Verdict only (the SACK table's `req_nomark`): high on the judging
    /// request of every data packet, low on the marking request that
    /// follows only once the completion tracker accepted the packet.
    pub sack_req_nomark: Signal<Out, Bit>,
    pub sack_out_valid: Signal<In, Bit>,
    pub sack_out_verdict: Signal<In, Bits<2>>,
    pub sack_out_expected: Signal<In, Bits<24>>,
    // ---- Completion tracker.
    pub pkt_valid: Signal<Out, Bit>,
    pub pkt_ready: Signal<In, Bit>,
    pub pkt_qp: Signal<Out, Bits<8>>,
    pub pkt_psn: Signal<Out, Bits<24>>,
    pub pkt_rkey: Signal<Out, Bits<32>>,
    pub pkt_va: Signal<Out, Bits<64>>,
    pub pkt_len: Signal<Out, Bits<16>>,
    pub pkt_buf: Signal<Out, Bits<16>>,
    pub pkt_first: Signal<Out, Bit>,
    pub pkt_last: Signal<Out, Bit>,
    pub pkt_has_imm: Signal<Out, Bit>,
    pub pkt_dma_len: Signal<Out, Bits<32>>,
    pub pkt_imm: Signal<Out, Bits<32>>,
    pub place_valid: Signal<In, Bit>,
    pub place_ready: Signal<Out, Bit>,
    pub place_addr: Signal<In, Bits<64>>,
    pub nack_valid: Signal<In, Bit>,
    pub nack_ready: Signal<Out, Bit>,
    pub res_valid: Signal<In, Bit>,
    pub res_code: Signal<In, Bits<2>>,
    pub adv_valid: Signal<Out, Bit>,
    pub adv_ready: Signal<In, Bit>,
    pub adv_qp: Signal<Out, Bits<8>>,
    pub adv_expected: Signal<Out, Bits<24>>,
    /// The completion tracker's walk of the advance taken last is done:
    /// `done_msn` is the QP's MSN after it.
    pub done_valid: Signal<In, Bit>,
    pub done_msn: Signal<In, Bits<24>>,
    pub cq_valid: Signal<In, Bit>,
    pub cq_ready: Signal<Out, Bit>,
    pub cq_qp: Signal<In, Bits<8>>,
    pub cq_imm: Signal<In, Bits<32>>,
    pub cq_len: Signal<In, Bits<32>>,
    pub cq_msn: Signal<In, Bits<24>>,
    // ---- ACK generator input record.
    pub ag_valid: Signal<Out, Bit>,
    pub ag_ready: Signal<In, Bit>,
    pub ag_qp: Signal<Out, Bits<8>>,
    pub ag_psn: Signal<Out, Bits<24>>,
    pub ag_verdict: Signal<Out, Bits<2>>,
    pub ag_ack_req: Signal<Out, Bit>,
    pub ag_trimmed: Signal<Out, Bit>,
    pub ag_ecn_ce: Signal<Out, Bit>,
    pub ag_reject: Signal<Out, Bit>,
    pub ag_drop: Signal<Out, Bit>,
    pub ag_expected: Signal<Out, Bits<24>>,
    pub ag_msn: Signal<Out, Bits<24>>,
    /// `ag_msn` is the QP's MSN after this packet (it advanced the QP's
    /// expected PSN, walked by the completion tracker); clear, the ACK
    /// generator keeps the QP's stored MSN (nothing completed).
    pub ag_msn_valid: Signal<Out, Bit>,
    pub ag_ev: Signal<Out, Bits<VALUE_BITS>>,
    pub ag_ev_index: Signal<Out, Bits<16>>,
    pub ag_echo_ts: Signal<Out, Bits<32>>,
    /// The record is a reliability probe to answer (`ag_ev`,
    /// `ag_ev_index` = the MRC 1.0 probe id or the legacy probe's EV
    /// index, `ag_echo_ts` = its timestamp; the other fields mean
    /// nothing).
    pub ag_probe: Signal<Out, Bit>,
    /// The probe is a legacy one (extension type 4, a request), answered
    /// with a legacy probe response that echoes `ag_probe_id` (ext bytes
    /// 4-7) besides its EV index and timestamp.
    pub ag_probe_legacy: Signal<Out, Bit>,
    pub ag_probe_id: Signal<Out, Bits<32>>,
    // ---- Retransmit engine record port.
    pub op_valid: Signal<Out, Bit>,
    pub op_ready: Signal<In, Bit>,
    pub op_kind: Signal<Out, Bits<KIND_BITS>>,
    pub op_qp: Signal<Out, Bits<8>>,
    pub op_psn: Signal<Out, Bits<24>>,
    pub op_ev: Signal<Out, Bits<7>>,
    pub op_time: Signal<Out, Bits<32>>,
    pub op_len: Signal<Out, Bits<16>>,
    pub op_base: Signal<Out, Bits<24>>,
    /// An MRC 1.0 SACK's trigger, the packet it answers (its cumulative
    /// PSN plus the SETH ack PSN offset), when `op_fb.by_trigger`.
    pub op_trigger: Signal<Out, Bits<24>>,
    pub op_bitmap: Signal<Out, Bits<64>>,
    /// The record is a SACK answering our probe of EV `op_probe_ev` (an
    /// index of the QP's set, checked): the core readmits the EV
    /// (`hw::ev_selector` `adm_*`) when the engine takes the record.
    pub op_probe_answer: Signal<Out, Bit>,
    /// A SACK's congestion feedback (the extension's bytes 4-11: CE
    /// marks, CC_STATE, echo; `hw::rx_parser::translate::SACK_CC_RESTORE`);
    /// no sample on a probe answer or a positive MRC 1.0 ACK; and when
    /// the record's frame was parsed (`arrival`: `now_ns` then; the join
    /// FIFOs absorb the head stage's waits), the time its samples are
    /// taken at.
    pub op_fb: Signal<Out, SackFeedback>,
    pub op_probe_ev: Signal<Out, Bits<7>>,
    // ---- Readmit of the EV a legacy probe response names (extension
    // type 4, response bit set, its EV index in the QP's set): the
    // golden legacy requester's `on_probe_response`; the core readmits
    // the EV as for an MRC 1.0 probe answer.
    pub rdm_valid: Signal<Out, Bit>,
    pub rdm_ready: Signal<In, Bit>,
    pub rdm_qp: Signal<Out, Bits<8>>,
    pub rdm_ev: Signal<Out, Bits<7>>,
    // ---- CQE out (to a RingWriter).
    pub cqe_valid: Signal<Out, Bit>,
    pub cqe_ready: Signal<In, Bit>,
    pub cqe_ring: Signal<Out, Bits<8>>,
    pub cqe_entry: Signal<Out, Bits<256>>,
    // ---- Config write port (snooped).
    pub cfg: ConfigSink,
    t_sq_ctx: TableId<{ table::SQ_CTX }>,
    t_recv_qp: TableId<{ table::RECV_QP }>,
    // Retransmit record kinds and the NACK extension's kinds (wire).
    k_sack: Param<KIND_BITS, { kind::SACK }>,
    k_nack_trim: Param<KIND_BITS, { kind::NACK_TRIM }>,
    k_nack_trim_skip: Param<KIND_BITS, { kind::NACK_TRIM_SKIP }>,
    k_nack_oow: Param<KIND_BITS, { kind::NACK_OOW }>,
    k_nack_remote: Param<KIND_BITS, { kind::NACK_REMOTE }>,
    n_trimmed_kind: Param<8, { nack::TRIMMED as u64 }>,
    n_out_of_window: Param<8, { nack::OUT_OF_WINDOW as u64 }>,
    n_remote_access: Param<8, { nack::REMOTE_ACCESS as u64 }>,
    /// Pulse: a frame's two records left the join FIFOs (the ingress
    /// admission's join credit comes back).
    pub join_release: Signal<Out, Bit>,
    // ---- Counter pulses.
    /// The parser dropped the frame.
    pub cnt_parse_drop: Signal<Out, Bit>,
    /// A data packet the RX buffer did not store (lost, like a fabric drop).
    pub cnt_not_stored: Signal<Out, Bit>,
    /// A data packet the model rejects as malformed (payload longer than
    /// the QP's path MTU, ONLY length differs from the RETH DMA length,
    /// DMA length above 2 GiB).
    pub cnt_data_bad: Signal<Out, Bit>,
    /// A probe: an MRC 1.0 one (answered through the ACK generator) or a
    /// legacy one (discarded, also counted in `cnt_other`).
    pub cnt_probe: Signal<Out, Bit>,
    pub cnt_cnp: Signal<Out, Bit>,
    /// RoCE without the MRC extension (plain RC).
    pub cnt_rc: Signal<Out, Bit>,
    /// Dest QP >= 256.
    pub cnt_qp_range: Signal<Out, Bit>,
    /// Anything else (an ACK without SACK/NACK, an MRC 1.0 probe answer
    /// naming an EV index outside the QP's set, other opcodes).
    pub cnt_other: Signal<Out, Bit>,
    /// A data packet dispatched (SACK table path).
    pub cnt_data: Signal<Out, Bit>,
    /// An MRC SACK/NACK handed to the retransmit engine.
    pub cnt_ack: Signal<Out, Bit>,

    // ---- Join FIFOs (RAM, `JOIN_DEPTH` deep each).
    pf_flags: RAM<Bits<8>, JOIN_BITS>,
    pf_hdr: RAM<JoinHeader, JOIN_BITS>,
    pf_va: RAM<Bits<64>, JOIN_BITS>,
    pf_rkey: RAM<Bits<32>, JOIN_BITS>,
    pf_dlen: RAM<Bits<32>, JOIN_BITS>,
    pf_imm: RAM<Bits<32>, JOIN_BITS>,
    pf_ext: RAM<Bits<224>, JOIN_BITS>,
    pf_pay: RAM<Bits<36>, JOIN_BITS>,
    /// The frame's arrival (`now_ns` at the parser's record).
    pf_at: RAM<Bits<32>, JOIN_BITS>,
    bf: RAM<Bits<17>, JOIN_BITS>,
    p_wr: DFF<Bits<JOIN_PTR_BITS>>,
    p_rd: DFF<Bits<JOIN_PTR_BITS>>,
    b_wr: DFF<Bits<JOIN_PTR_BITS>>,
    b_rd: DFF<Bits<JOIN_PTR_BITS>>,
    // ---- Head of the joined frame.
    h_flags: DFF<Bits<8>>,
    h_hdr: DFF<JoinHeader>,
    h_va: DFF<Bits<64>>,
    h_rkey: DFF<Bits<32>>,
    h_dlen: DFF<Bits<32>>,
    h_imm: DFF<Bits<32>>,
    h_ext: DFF<Bits<224>>,
    h_pay: DFF<Bits<36>>,
    h_at: DFF<Bits<32>>,
    h_id: DFF<Bits<16>>,
    // ---- Head stage (the frame being classified, judged and checked).
    st: DFF<DispatchState>,
    /// The RAM outputs hold the head of each join FIFO (the read address
    /// runs one pointer ahead, so a head is there the cycle after a pop).
    p_ok: DFF<Bit>,
    b_ok: DFF<Bit>,
    verdict: DFF<Bits<2>>,
    expected: DFF<Bits<24>>,
    res: DFF<Bits<2>>,
    paddr: DFF<Bits<64>>,
    got_place: DFF<Bit>,
    /// The head frame's RX buffer command is decided but the command stage
    /// was busy: it is loaded from `h_place` / `paddr` when it frees.
    h_cmd_due: DFF<Bit>,
    h_place: DFF<Bit>,
    // ---- Command stage (RX buffer command, frame order).
    cmd_v: DFF<Bit>,
    c_id: DFF<Bits<16>>,
    c_place: DFF<Bit>,
    c_addr: DFF<Bits<64>>,
    c_off: DFF<Bits<18>>,
    c_len: DFF<Bits<18>>,
    // ---- Tail stage: the ACK generator record and the completion
    // tracker advance of a frame the head stage finished. The one place
    // ACK generator records are emitted.
    t_ag_v: DFF<Bit>,
    t_adv_v: DFF<Bit>,
    /// Waiting for the marking request's answer (its `out_expected`).
    t_wait: DFF<Bit>,
    /// The marking request was not taken in its cycle (`mark_now`): the tail
    /// offers it (its record's QP and PSN) until it is, ahead of the
    /// head stage's next judging request.
    t_mark: DFF<Bit>,
    /// `cls_state` of the head that was on the RAM outputs last cycle and
    /// was not taken (`nx_ok`): a mark (`mark_now`) takes the next frame
    /// only on it, so the classification's path does not reach `st`
    /// through the mark.
    nx_state: DFF<DispatchState>,
    nx_ok: DFF<Bit>,
    /// That head needs an RX buffer command at its take (`n_needs_cmd`):
    /// a take in `CompletionResult`'s cycle, where the accepted frame's
    /// own command loads, waits for a head that needs none.
    nx_cmd: DFF<Bit>,
    /// Waiting for the completion tracker's walk of the advance
    /// (`done_*`): the record carries the MSN after it.
    t_msn_wait: DFF<Bit>,
    /// The record (a probe's: `probe`, a legacy one with its id); its
    /// `msn` is the walk's once `t_msn_wait` clears.
    t_rec: DFF<AgRecord>,
    // ---- Record stage: the ACK generator record, out of the tail so
    // that the next frame's marking request need not wait for the walk.
    g_v: DFF<Bit>,
    /// Its MSN is still to come (`done_*`).
    g_wait: DFF<Bit>,
    g_rec: DFF<AgRecord>,
    // ---- Per-QP tables read when a parser record is written, so that the
    // checks that need them are bits of the FIFO slot by the time the
    // frame is at the head. Path MTU per QP: log2 of it
    // (`recv_init.log2_mtu`, 8..=13; any other value checks nothing).
    mtu_of: RAM<Bits<4>, 8>,
    /// EVs in each QP's set (`sq_ctx.ev_count`): an MRC 1.0 probe answer
    /// must name one of them.
    evs_of: RAM<Bits<8>, 8>,
    /// The record written last cycle (its slot, payload length, probe
    /// answer EV index), while its QP's rows are read.
    w_v: DFF<Bit>,
    w_slot: DFF<Bits<JOIN_BITS>>,
    /// Its payload length against each path MTU, compared as it is
    /// written (bit i: longer than 256 << i bytes), so that the check
    /// after the row's read only selects.
    w_len_over: DFF<LenOverMtu>,
    w_ev_index: DFF<Bits<16>>,
    /// Per FIFO slot: the payload is longer than the QP's path MTU; the
    /// probe answer's EV index is in the QP's set.
    slot_over: DFF<Bits<JOIN_DEPTH>>,
    slot_ev_ok: DFF<Bits<JOIN_DEPTH>>,
    // ---- CQE stage.
    ring_of: RAM<Bits<8>, 8>,
    a_valid: DFF<Bit>,
    a_qp: DFF<Bits<8>>,
    a_imm: DFF<Bits<32>>,
    a_len: DFF<Bits<32>>,
    a_msn: DFF<Bits<24>>,
    o_valid: DFF<Bit>,
    o_ring: DFF<Bits<8>>,
    o_entry: DFF<Bits<256>>,
    k_join_release: DFF<Bit>,
    // ---- Counter registers.
    k_parse_drop: DFF<Bit>,
    k_not_stored: DFF<Bit>,
    k_data_bad: DFF<Bit>,
    k_probe: DFF<Bit>,
    k_cnp: DFF<Bit>,
    k_rc: DFF<Bit>,
    k_qp_range: DFF<Bit>,
    k_other: DFF<Bit>,
    k_data: DFF<Bit>,
    k_ack: DFF<Bit>,
    // ---- Combinational helpers.
    p_in: Signal<Local, Bit>,
    /// Read pointers after this cycle's pop (the RAM read addresses).
    p_rd_next: Signal<Local, Bits<JOIN_PTR_BITS>>,
    b_rd_next: Signal<Local, Bits<JOIN_PTR_BITS>>,
    p_rd_inc: Signal<Local, Bits<JOIN_PTR_BITS>>,
    b_rd_inc: Signal<Local, Bits<JOIN_PTR_BITS>>,
    p_left: Signal<Local, Bits<JOIN_PTR_BITS>>,
    b_left: Signal<Local, Bits<JOIN_PTR_BITS>>,
    p_left_pop: Signal<Local, Bits<JOIN_PTR_BITS>>,
    b_left_pop: Signal<Local, Bits<JOIN_PTR_BITS>>,
    // Head registers, decoded (the outputs of the head stage).
    opcode: Signal<Local, Bits<8>>,
    qp: Signal<Local, Bits<8>>,
    psn: Signal<Local, Bits<24>>,
    trimmed: Signal<Local, Bit>,
    first: Signal<Local, Bit>,
    last: Signal<Local, Bit>,
    has_imm: Signal<Local, Bit>,
    pay_off: Signal<Local, Bits<18>>,
    pay_len: Signal<Local, Bits<18>>,
    ext_type: Signal<Local, Bits<4>>,
    nack_kind: Signal<Local, Bits<8>>,
    /// The head is an MRC 1.0 SACK answering a probe (record extension
    /// type 5, `rx_parser::translate::EXT_PROBE_ANSWER`).
    probe_answer: Signal<Local, Bit>,
    /// A SACK's echo plus its service time (`SackFeedback::echo`).
    fb_echo: Signal<Local, Bits<32>>,
    /// The frame is an MRC 1.0 SACK that names its trigger
    /// (`rx_parser::translate::SACK_CC_TRIGGER`) ...
    by_trigger: Signal<Local, Bit>,
    /// ... by this offset from its cumulative PSN (bytes 12-13, signed,
    /// widened to 24 bits).
    trigger_off: Signal<Local, Bits<24>>,
    /// Bits 23-16 of a negative offset widened to 24 bits.
    k_off_sign: Param<24, 0xFF_0000>,
    // The FIFO heads on the RAM outputs, decoded for the classification.
    n_opcode: Signal<Local, Bits<8>>,
    n_drop: Signal<Local, Bit>,
    n_trimmed: Signal<Local, Bit>,
    n_xbit: Signal<Local, Bit>,
    n_qp_ok: Signal<Local, Bit>,
    n_stored: Signal<Local, Bit>,
    n_write: Signal<Local, Bit>,
    n_first: Signal<Local, Bit>,
    n_pay_len: Signal<Local, Bits<18>>,
    n_dlen: Signal<Local, Bits<32>>,
    n_ext_type: Signal<Local, Bits<4>>,
    n_nack_kind: Signal<Local, Bits<8>>,
    n_slot_over: Signal<Local, Bits<JOIN_DEPTH>>,
    n_slot_ev: Signal<Local, Bits<JOIN_DEPTH>>,
    n_malformed: Signal<Local, Bit>,
    /// The head is a reliability probe to a QP below 256: MRC 1.0 (record
    /// extension type 6, `rx_parser::translate::EXT_MRC10_PROBE`) or a
    /// legacy request (type 4, response bit clear); its answer goes to
    /// the ACK generator through the tail stage.
    n_probe: Signal<Local, Bit>,
    /// The head's extension is a legacy probe request (type 4, byte 1's
    /// response bit clear).
    n_legacy_probe: Signal<Local, Bit>,
    /// The head is a legacy probe response to a QP below 256 naming an EV
    /// index of the QP's set: a readmit.
    n_legacy_answer: Signal<Local, Bit>,
    /// An acknowledgement for the retransmit engine: a SACK, a probe
    /// answer for an EV of the set, or a NACK of a known kind.
    n_ack_op: Signal<Local, Bit>,
    /// A data packet for the SACK table (not dropped, stored, well formed).
    n_data: Signal<Local, Bit>,
    n_needs_cmd: Signal<Local, Bit>,
    /// The head stage takes the FIFO heads this cycle.
    take: Signal<Local, Bit>,
    head_free: Signal<Local, Bit>,
    cmd_free: Signal<Local, Bit>,
    tail_free: Signal<Local, Bit>,
    g_free: Signal<Local, Bit>,
    t_move: Signal<Local, Bit>,
    done_g: Signal<Local, Bit>,
    done_t: Signal<Local, Bit>,
    /// The SACK table's answer is the tail's marking request's.
    out_for_tail: Signal<Local, Bit>,
    /// `Mark` hands the frame and its marking request to the tail this
    /// cycle (the tail is empty).
    mark_now: Signal<Local, Bit>,
    /// The completion tracker's result accepts the packet this cycle with
    /// its placement address in hand (or an empty payload): the frame can
    /// be marked in this cycle, not `Mark`'s next one.
    result_marks: Signal<Local, Bit>,
    /// The SACK table's verdict this cycle judges the packet new and
    /// untrimmed: its packet record goes to the completion tracker in
    /// this cycle, not `CompletionPacket`'s next one.
    verdict_new: Signal<Local, Bit>,
    /// The head on the RAM outputs: its state once taken.
    cls_state: Signal<Local, DispatchState>,
    /// The head stage's RX buffer command this cycle (from the RAM
    /// outputs when `want_from_fifo`, else from the head registers).
    want_cmd: Signal<Local, Bit>,
    want_from_fifo: Signal<Local, Bit>,
    want_place: Signal<Local, Bit>,
    want_addr: Signal<Local, Bits<64>>,
    /// The tail stage takes the head frame's ACK generator record (and,
    /// for an accepted packet, its advance after the marking answer).
    tl_go: Signal<Local, Bit>,
    tl_verdict: Signal<Local, Bits<2>>,
    tl_expected: Signal<Local, Bits<24>>,
    tl_res: Signal<Local, Bits<2>>,
    tl_accepted: Signal<Local, Bit>,
    w_one: Signal<Local, Bits<JOIN_DEPTH>>,
    w_mask: Signal<Local, Bits<JOIN_DEPTH>>,
    w_over: Signal<Local, Bit>,
    w_log2_mtu: Signal<Local, Bits<4>>,
    a_take: Signal<Local, Bit>,
    pw: Signal<Local, Bits<JOIN_BITS>>,
    pr: Signal<Local, Bits<JOIN_BITS>>,
    pwe: Signal<Local, Bit>,
    f_drop: Signal<Local, Bits<1>>,
    f_ecn: Signal<Local, Bits<1>>,
    f_trim: Signal<Local, Bits<1>>,
    f_skip: Signal<Local, Bits<1>>,
    f_always: Signal<Local, Bits<1>>,
    f_ackreq: Signal<Local, Bits<1>>,
    f_x: Signal<Local, Bits<1>>,
    f_qpok: Signal<Local, Bits<1>>,
    f_stored: Signal<Local, Bits<1>>,
    a_move: Signal<Local, Bit>,
}

impl Logic for RxPath {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            p_wr,
            p_rd,
            b_wr,
            b_rd,
            h_flags,
            h_hdr,
            h_va,
            h_rkey,
            h_dlen,
            h_imm,
            h_ext,
            h_pay,
            h_at,
            h_id,
            st,
            p_ok,
            b_ok,
            verdict,
            expected,
            res,
            paddr,
            got_place,
            h_cmd_due,
            h_place,
            cmd_v,
            c_id,
            c_place,
            c_addr,
            c_off,
            c_len,
            t_ag_v,
            t_adv_v,
            t_wait,
            t_mark,
            nx_state,
            nx_ok,
            nx_cmd,
            t_msn_wait,
            t_rec,
            g_v,
            g_wait,
            g_rec,
            w_v,
            w_slot,
            w_len_over,
            w_ev_index,
            slot_over,
            slot_ev_ok,
            a_valid,
            a_qp,
            a_imm,
            a_len,
            a_msn,
            o_valid,
            o_ring,
            o_entry,
            k_join_release,
            k_parse_drop,
            k_not_stored,
            k_data_bad,
            k_probe,
            k_cnp,
            k_rc,
            k_qp_range,
            k_other,
            k_data,
            k_ack
        );
        self.pf_flags.read_clock.next = self.clock.val();
        self.pf_flags.write_clock.next = self.clock.val();
        self.pf_hdr.read_clock.next = self.clock.val();
        self.pf_hdr.write_clock.next = self.clock.val();
        self.pf_va.read_clock.next = self.clock.val();
        self.pf_va.write_clock.next = self.clock.val();
        self.pf_rkey.read_clock.next = self.clock.val();
        self.pf_rkey.write_clock.next = self.clock.val();
        self.pf_dlen.read_clock.next = self.clock.val();
        self.pf_dlen.write_clock.next = self.clock.val();
        self.pf_imm.read_clock.next = self.clock.val();
        self.pf_imm.write_clock.next = self.clock.val();
        self.pf_ext.read_clock.next = self.clock.val();
        self.pf_ext.write_clock.next = self.clock.val();
        self.pf_pay.read_clock.next = self.clock.val();
        self.pf_pay.write_clock.next = self.clock.val();
        self.pf_at.read_clock.next = self.clock.val();
        self.pf_at.write_clock.next = self.clock.val();
        self.bf.read_clock.next = self.clock.val();
        self.bf.write_clock.next = self.clock.val();
        self.ring_of.read_clock.next = self.clock.val();
        self.ring_of.write_clock.next = self.clock.val();
        self.mtu_of.read_clock.next = self.clock.val();
        self.mtu_of.write_clock.next = self.clock.val();
        self.evs_of.read_clock.next = self.clock.val();
        self.evs_of.write_clock.next = self.clock.val();

        // Pulses default low.
        self.k_join_release.d.next = false;
        self.k_parse_drop.d.next = false;
        self.k_not_stored.d.next = false;
        self.k_data_bad.d.next = false;
        self.k_probe.d.next = false;
        self.k_cnp.d.next = false;
        self.k_rc.d.next = false;
        self.k_qp_range.d.next = false;
        self.k_other.d.next = false;
        self.k_data.d.next = false;
        self.k_ack.d.next = false;

        // ---- Join FIFO inputs. The ingress admission holds at most
        // `JOIN_DEPTH` frames unjoined, and each frame has exactly one
        // record in each stream, so neither FIFO is ever written full and
        // the k-th entries of the two are the same frame.
        self.p_in.next = self.prs_valid.val() | self.prs_drop.val();
        self.pw.next = bit_cast::<JOIN_BITS, JOIN_PTR_BITS>(self.p_wr.q.val());
        self.f_drop.next = 0.into();
        if self.prs_drop.val() {
            self.f_drop.next = 1.into();
        }
        self.f_ecn.next = 0.into();
        if self.prs_ecn_ce.val() {
            self.f_ecn.next = 1.into();
        }
        self.f_trim.next = 0.into();
        if self.prs_trimmed.val() {
            self.f_trim.next = 1.into();
        }
        self.f_skip.next = 0.into();
        if self.prs_skip.val() {
            self.f_skip.next = 1.into();
        }
        self.f_always.next = 0.into();
        if self.prs_always_skip.val() {
            self.f_always.next = 1.into();
        }
        self.f_ackreq.next = 0.into();
        if self.prs_ack_req.val() {
            self.f_ackreq.next = 1.into();
        }
        self.f_x.next = 0.into();
        if self.prs_xbit.val() {
            self.f_x.next = 1.into();
        }
        self.f_qpok.next = 0.into();
        if self.prs_dest_qp.val().get_bits::<16>(8) == 0 {
            self.f_qpok.next = 1.into();
        }
        self.f_stored.next = 0.into();
        if self.rec_stored.val() {
            self.f_stored.next = 1.into();
        }
        self.pf_flags.write_address.next = self.pw.val();
        self.pf_hdr.write_address.next = self.pw.val();
        self.pf_va.write_address.next = self.pw.val();
        self.pf_rkey.write_address.next = self.pw.val();
        self.pf_dlen.write_address.next = self.pw.val();
        self.pf_imm.write_address.next = self.pw.val();
        self.pf_ext.write_address.next = self.pw.val();
        self.pf_pay.write_address.next = self.pw.val();
        self.pf_at.write_address.next = self.pw.val();
        self.pf_at.write_data.next = self.now_ns.val();
        self.pf_flags.write_data.next = bit_cast::<8, 1>(self.f_drop.val())
            | (bit_cast::<8, 1>(self.f_ecn.val()) << 1)
            | (bit_cast::<8, 1>(self.f_trim.val()) << 2)
            | (bit_cast::<8, 1>(self.f_ackreq.val()) << 3)
            | (bit_cast::<8, 1>(self.f_x.val()) << 4)
            | (bit_cast::<8, 1>(self.f_qpok.val()) << 5)
            | (bit_cast::<8, 1>(self.f_skip.val()) << 6)
            | (bit_cast::<8, 1>(self.f_always.val()) << 7);
        self.pf_hdr.write_data.next.opcode = self.prs_opcode.val();
        self.pf_hdr.write_data.next.qp = self.prs_dest_qp.val().get_bits::<8>(0);
        self.pf_hdr.write_data.next.psn = self.prs_psn.val();
        self.pf_hdr.write_data.next.ev = self.prs_ev.val();
        self.pf_va.write_data.next = self.prs_reth_va.val();
        self.pf_rkey.write_data.next = self.prs_reth_rkey.val();
        self.pf_dlen.write_data.next = self.prs_reth_len.val();
        self.pf_imm.write_data.next = self.prs_imm.val();
        self.pf_ext.write_data.next = self.prs_ext.val();
        self.pf_pay.write_data.next =
            bit_cast::<36, 18>(self.prs_payload_off.val()) | (bit_cast::<36, 18>(self.prs_payload_len.val()) << 18);
        self.pwe.next = self.p_in.val();
        self.pf_flags.write_enable.next = self.pwe.val();
        self.pf_hdr.write_enable.next = self.pwe.val();
        self.pf_va.write_enable.next = self.pwe.val();
        self.pf_rkey.write_enable.next = self.pwe.val();
        self.pf_dlen.write_enable.next = self.pwe.val();
        self.pf_imm.write_enable.next = self.pwe.val();
        self.pf_ext.write_enable.next = self.pwe.val();
        self.pf_pay.write_enable.next = self.pwe.val();
        self.pf_at.write_enable.next = self.pwe.val();
        if self.p_in.val() {
            self.p_wr.d.next = self.p_wr.q.val() + 1;
        }
        self.bf.write_address.next = bit_cast::<JOIN_BITS, JOIN_PTR_BITS>(self.b_wr.q.val());
        self.bf.write_data.next = bit_cast::<17, 1>(self.f_stored.val()) | (bit_cast::<17, 16>(self.rec_id.val()) << 1);
        self.bf.write_enable.next = self.rec_valid.val();
        if self.rec_valid.val() {
            self.b_wr.d.next = self.b_wr.q.val() + 1;
        }

        // ---- Per-QP checks, when a parser record is written: the QP's
        // rows are read at its dest QP this cycle (on the RAM outputs the
        // next one), the results go into the record's slot bits, ready
        // before the frame can be at the head (two cycles after its write
        // at the earliest). A QP's rows are written while the QP is idle.
        self.mtu_of.read_address.next = self.prs_dest_qp.val().get_bits::<8>(0);
        self.evs_of.read_address.next = self.prs_dest_qp.val().get_bits::<8>(0);
        self.w_v.d.next = self.p_in.val();
        self.w_slot.d.next = self.pw.val();
        self.w_len_over.d.next.mtu_256 = self.prs_payload_len.val() > 256;
        self.w_len_over.d.next.mtu_512 = self.prs_payload_len.val() > 512;
        self.w_len_over.d.next.mtu_1k = self.prs_payload_len.val() > 1024;
        self.w_len_over.d.next.mtu_2k = self.prs_payload_len.val() > 2048;
        self.w_len_over.d.next.mtu_4k = self.prs_payload_len.val() > 4096;
        self.w_len_over.d.next.mtu_8k = self.prs_payload_len.val() > 8192;
        // (A probe answer's EV index: bytes 4-5 of the MRC 1.0 one's
        // record, type 5; bytes 2-3 of a legacy probe response, type 4.)
        self.w_ev_index.d.next = self.prs_ext.val().get_bits::<16>(176);
        if self.prs_ext.val().get_bits::<4>(216) == 4 {
            self.w_ev_index.d.next = self.prs_ext.val().get_bits::<16>(192);
        }
        self.evs_of.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.evs_of.write_data.next = self.cfg.data.val().get_value_sq_ctx_ev_count();
        self.evs_of.write_enable.next =
            self.cfg.valid.val() & (self.cfg.table.val() == self.t_sq_ctx.val()) & (self.cfg.index.val() < 256);
        // Receive set-up rows (table 7) carry the QP's path MTU.
        self.mtu_of.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.mtu_of.write_data.next = self.cfg.data.val().get_value_recv_init_log2_mtu();
        self.mtu_of.write_enable.next =
            self.cfg.valid.val() & (self.cfg.table.val() == self.t_recv_qp.val()) & (self.cfg.index.val() < 256);
        self.w_log2_mtu.next = self.mtu_of.read_data.val();
        self.w_over.next = ((self.w_log2_mtu.val() == 8) & self.w_len_over.q.val().mtu_256)
            | ((self.w_log2_mtu.val() == 9) & self.w_len_over.q.val().mtu_512)
            | ((self.w_log2_mtu.val() == 10) & self.w_len_over.q.val().mtu_1k)
            | ((self.w_log2_mtu.val() == 11) & self.w_len_over.q.val().mtu_2k)
            | ((self.w_log2_mtu.val() == 12) & self.w_len_over.q.val().mtu_4k)
            | ((self.w_log2_mtu.val() == 13) & self.w_len_over.q.val().mtu_8k);
        self.w_one.next = 1.into();
        self.w_mask.next = self.w_one.val() << bit_cast::<JOIN_DEPTH, JOIN_BITS>(self.w_slot.q.val());
        if self.w_v.q.val() {
            if self.w_over.val() {
                self.slot_over.d.next = self.slot_over.q.val() | self.w_mask.val();
            } else {
                self.slot_over.d.next = self.slot_over.q.val() & !self.w_mask.val();
            }
            // A probe answer's EV index (bytes 4-5) must be in the set:
            // the golden requester refuses it otherwise (`Malformed`).
            if self.w_ev_index.q.val() < bit_cast::<16, 8>(self.evs_of.read_data.val()) {
                self.slot_ev_ok.d.next = self.slot_ev_ok.q.val() | self.w_mask.val();
            } else {
                self.slot_ev_ok.d.next = self.slot_ev_ok.q.val() & !self.w_mask.val();
            }
        }

        // ---- The FIFO heads, decoded from the RAM outputs for the
        // classification (`pr` is the head's slot while `p_ok`).
        self.pr.next = bit_cast::<JOIN_BITS, JOIN_PTR_BITS>(self.p_rd.q.val());
        self.n_opcode.next = self.pf_hdr.read_data.val().opcode;
        self.n_drop.next = self.pf_flags.read_data.val().get_bit(0);
        self.n_trimmed.next = self.pf_flags.read_data.val().get_bit(2);
        self.n_xbit.next = self.pf_flags.read_data.val().get_bit(4);
        self.n_qp_ok.next = self.pf_flags.read_data.val().get_bit(5);
        self.n_stored.next = self.bf.read_data.val().get_bit(0);
        self.n_write.next = (self.n_opcode.val() >= 6) & (self.n_opcode.val() <= 11);
        // FIRST 0x06, ONLY 0x0A, ONLY-IMM 0x0B carry a RETH.
        self.n_first.next = (self.n_opcode.val() == 6) | (self.n_opcode.val() == 10) | (self.n_opcode.val() == 11);
        self.n_pay_len.next = self.pf_pay.read_data.val().get_bits::<18>(18);
        self.n_dlen.next = self.pf_dlen.read_data.val();
        self.n_ext_type.next = self.pf_ext.read_data.val().get_bits::<4>(216);
        self.n_nack_kind.next = self.pf_ext.read_data.val().get_bits::<8>(208);
        self.n_slot_over.next = self.slot_over.q.val() >> bit_cast::<JOIN_DEPTH, JOIN_BITS>(self.pr.val());
        self.n_slot_ev.next = self.slot_ev_ok.q.val() >> bit_cast::<JOIN_DEPTH, JOIN_BITS>(self.pr.val());
        // The model's checks before the window (`handle_data`): the
        // payload (trimmed or not) is no longer than the path MTU, an ONLY
        // packet's payload equals its DMA length (unless trimmed), and a
        // DMA length fits 2 GiB.
        self.n_malformed.next = self.n_slot_over.val().get_bit(0)
            | (self.n_first.val() & self.n_dlen.val().get_bit(31))
            | (((self.n_opcode.val() == 10) | (self.n_opcode.val() == 11))
                & !self.n_trimmed.val()
                & (self.n_dlen.val() != bit_cast::<32, 18>(self.n_pay_len.val())));
        self.n_legacy_probe.next = (self.n_ext_type.val() == 4) & !self.pf_ext.read_data.val().get_bit(215);
        self.n_legacy_answer.next = (self.n_opcode.val() == 17)
            & self.n_xbit.val()
            & self.n_qp_ok.val()
            & (self.n_ext_type.val() == 4)
            & self.pf_ext.read_data.val().get_bit(215)
            & self.n_slot_ev.val().get_bit(0);
        self.n_probe.next = (self.n_opcode.val() == 17)
            & self.n_xbit.val()
            & self.n_qp_ok.val()
            & ((self.n_ext_type.val() == 6) | self.n_legacy_probe.val());
        self.n_ack_op.next = (self.n_opcode.val() == 17)
            & self.n_xbit.val()
            & self.n_qp_ok.val()
            & ((self.n_ext_type.val() == 2)
                | ((self.n_ext_type.val() == 5) & self.n_slot_ev.val().get_bit(0))
                | ((self.n_ext_type.val() == 3)
                    & ((self.n_nack_kind.val() == self.n_trimmed_kind.val())
                        | (self.n_nack_kind.val() == self.n_out_of_window.val())
                        | (self.n_nack_kind.val() == self.n_remote_access.val()))));
        self.n_data.next = !self.n_drop.val()
            & self.n_write.val()
            & self.n_xbit.val()
            & self.n_qp_ok.val()
            & self.n_stored.val()
            & !self.n_malformed.val();
        // Every stored frame but a data packet for the SACK table is
        // discarded at once.
        self.n_needs_cmd.next = self.n_stored.val() & !self.n_data.val();
        // The head's next state once taken (the take's counters below
        // follow the same order): judged, handed to the retransmit engine,
        // answered as a probe, readmitted, or done at once.
        self.cls_state.next = DispatchState::Idle;
        if self.n_data.val() {
            self.cls_state.next = DispatchState::Judge;
        } else if !self.n_drop.val() & !(self.n_write.val() & self.n_xbit.val() & self.n_qp_ok.val()) {
            if self.n_ack_op.val() {
                self.cls_state.next = DispatchState::RetransmitOp;
            } else if self.n_probe.val() {
                self.cls_state.next = DispatchState::Handover;
            } else if self.n_legacy_answer.val() {
                self.cls_state.next = DispatchState::Readmit;
            }
        }

        // ---- Decoded head registers.
        self.opcode.next = self.h_hdr.q.val().opcode;
        self.qp.next = self.h_hdr.q.val().qp;
        self.psn.next = self.h_hdr.q.val().psn;
        self.trimmed.next = self.h_flags.q.val().get_bit(2);
        self.pay_off.next = self.h_pay.q.val().get_bits::<18>(0);
        self.pay_len.next = self.h_pay.q.val().get_bits::<18>(18);
        self.first.next = (self.opcode.val() == 6) | (self.opcode.val() == 10) | (self.opcode.val() == 11);
        self.last.next =
            (self.opcode.val() == 8) | (self.opcode.val() == 9) | (self.opcode.val() == 10) | (self.opcode.val() == 11);
        self.has_imm.next = (self.opcode.val() == 9) | (self.opcode.val() == 11);
        self.ext_type.next = self.h_ext.q.val().get_bits::<4>(216);
        self.nack_kind.next = self.h_ext.q.val().get_bits::<8>(208);
        self.probe_answer.next = self.ext_type.val() == 5;

        // The command stage is free, or its command leaves now.
        self.cmd_free.next = !self.cmd_v.q.val() | self.cmd_ready.val();
        // The SACK table answers in request order, and the head stage's
        // next judging request follows the tail's marking request.
        self.out_for_tail.next = self.t_wait.q.val();

        // ---- Outputs. From registers, except the marking request in the
        // completion result's cycle (`result_marks`: the tracker's
        // registered result and address, the command stage's `cmd_ready`)
        // and the packet record in the verdict's cycle (`verdict_new`: the
        // SACK table's registered verdict).
        // The tail's marking request first (it was issued before the head
        // stage's next judging request, and the table answers in order).
        // An accepted packet is marked in its result's cycle when its
        // placement address came with the result (or before it) and the
        // RX buffer command stage can take its command now; else in `Mark`.
        self.result_marks.next = (self.st.q.val() == DispatchState::CompletionResult)
            & self.res_valid.val()
            & (self.res_code.val() == 0)
            & ((self.pay_len.val() == 0) | self.got_place.q.val() | self.place_valid.val())
            & self.cmd_free.val();
        self.mark_now.next = ((self.st.q.val() == DispatchState::Mark) | self.result_marks.val())
            & !self.t_ag_v.q.val()
            & !self.t_adv_v.q.val();
        self.sack_req_valid.next =
            self.t_mark.q.val() | (self.st.q.val() == DispatchState::Judge) | self.mark_now.val();
        self.sack_req_qp.next = self.qp.val();
        self.sack_req_psn.next = self.psn.val();
        self.sack_req_nomark.next = !self.mark_now.val();
        if self.t_mark.q.val() {
            self.sack_req_qp.next = self.t_rec.q.val().qp;
            self.sack_req_psn.next = self.t_rec.q.val().psn;
            self.sack_req_nomark.next = false;
        }
        // The packet waits for the previous frame's advance: the
        // completion tracker sees packets and advances in frame order.
        // A packet judged new goes in its verdict's cycle.
        self.verdict_new.next = (self.st.q.val() == DispatchState::JudgeWait)
            & self.sack_out_valid.val()
            & !self.out_for_tail.val()
            & (self.sack_out_verdict.val() == 1)
            & !self.trimmed.val();
        self.pkt_valid.next =
            ((self.st.q.val() == DispatchState::CompletionPacket) | self.verdict_new.val()) & !self.t_adv_v.q.val();
        self.pkt_qp.next = self.qp.val();
        self.pkt_psn.next = self.psn.val();
        // Placement target: the RETH on FIRST/ONLY, the data extension's
        // placement block (bytes 16-23 VA, 24-27 R_Key) otherwise.
        if self.first.val() {
            self.pkt_rkey.next = self.h_rkey.q.val();
            self.pkt_va.next = self.h_va.q.val();
        } else {
            self.pkt_rkey.next = self.h_ext.q.val().get_bits::<32>(0);
            self.pkt_va.next = self.h_ext.q.val().get_bits::<64>(32);
        }
        self.pkt_len.next = self.pay_len.val().get_bits::<16>(0);
        self.pkt_buf.next = self.h_id.q.val();
        self.pkt_first.next = self.first.val();
        self.pkt_last.next = self.last.val();
        self.pkt_has_imm.next = self.has_imm.val();
        self.pkt_dma_len.next = self.h_dlen.q.val();
        self.pkt_imm.next = self.h_imm.q.val();
        self.place_ready.next =
            (self.st.q.val() == DispatchState::CompletionResult) | (self.st.q.val() == DispatchState::CompletionPlace);
        // NACK requests are not forwarded: `res_code` 1 carries the same
        // fact to the ACK generator (`in_reject`).
        self.nack_ready.next = true;
        self.adv_valid.next = self.t_adv_v.q.val() & !self.t_wait.q.val();
        self.adv_qp.next = self.t_rec.q.val().qp;
        self.adv_expected.next = self.t_rec.q.val().expected;
        self.ag_valid.next = self.g_v.q.val() & !self.g_wait.q.val();
        self.ag_qp.next = self.g_rec.q.val().qp;
        self.ag_psn.next = self.g_rec.q.val().psn;
        self.ag_verdict.next = self.g_rec.q.val().verdict;
        self.ag_ack_req.next = self.g_rec.q.val().ack_req;
        self.ag_trimmed.next = self.g_rec.q.val().trimmed;
        self.ag_ecn_ce.next = self.g_rec.q.val().ecn;
        self.ag_reject.next = self.g_rec.q.val().reject;
        self.ag_drop.next = self.g_rec.q.val().drop;
        self.ag_expected.next = self.g_rec.q.val().expected;
        self.ag_msn.next = self.g_rec.q.val().msn;
        self.ag_msn_valid.next = self.g_rec.q.val().msn_valid;
        self.ag_ev.next = self.g_rec.q.val().ev;
        self.ag_ev_index.next = self.g_rec.q.val().ev_index;
        self.ag_echo_ts.next = self.g_rec.q.val().echo;
        self.ag_probe.next = self.g_rec.q.val().probe;
        self.ag_probe_legacy.next = self.g_rec.q.val().probe_legacy;
        self.ag_probe_id.next = self.g_rec.q.val().probe_id;
        self.op_valid.next = self.st.q.val() == DispatchState::RetransmitOp;
        if (self.ext_type.val() == 2) | self.probe_answer.val() {
            self.op_kind.next = self.k_sack.val();
        } else if self.nack_kind.val() == self.n_trimmed_kind.val() {
            self.op_kind.next = self.k_nack_trim.val();
            if self.h_flags.q.val().get_bit(6) {
                self.op_kind.next = self.k_nack_trim_skip.val();
            }
        } else if self.nack_kind.val() == self.n_out_of_window.val() {
            self.op_kind.next = self.k_nack_oow.val();
        } else {
            // Remote access: fatal for the requester's QP (the engine
            // reports the QP error, the send completions flush).
            self.op_kind.next = self.k_nack_remote.val();
        }
        self.op_qp.next = self.qp.val();
        self.op_psn.next = self.psn.val();
        self.op_ev.next = self.h_ext.q.val().get_bits::<7>(192);
        self.op_time.next = self.h_ext.q.val().get_bits::<32>(128);
        self.op_len.next = 0.into();
        self.op_base.next = self.h_ext.q.val().get_bits::<24>(64);
        self.op_bitmap.next = self.h_ext.q.val().get_bits::<64>(0);
        // The probed EV's index: extension bytes 4-5 (only its low 7 bits
        // can be below `ev_count`, which the head stage checked).
        // The echo advanced by the legacy SACK's service time (bytes
        // 12-15), which the model takes off its sample; a translated MRC
        // 1.0 SACK has none (its echo includes it), and its trigger's
        // offset in bytes 12-13.
        self.by_trigger.next = !self.probe_answer.val() & self.h_ext.q.val().get_bit(173);
        self.fb_echo.next = self.h_ext.q.val().get_bits::<32>(128) + self.h_ext.q.val().get_bits::<32>(96);
        if self.by_trigger.val() {
            self.fb_echo.next = self.h_ext.q.val().get_bits::<32>(128);
        }
        self.trigger_off.next = bit_cast::<24, 16>(self.h_ext.q.val().get_bits::<16>(112));
        if self.h_ext.q.val().get_bit(127) {
            self.trigger_off.next = bit_cast::<24, 16>(self.h_ext.q.val().get_bits::<16>(112)) | self.k_off_sign.val();
        }
        self.op_trigger.next = self.psn.val() + self.trigger_off.val();
        self.op_fb.next.by_trigger = self.by_trigger.val();
        self.op_probe_answer.next = self.probe_answer.val();
        self.op_fb.next.sample = !self.probe_answer.val() & !self.h_ext.q.val().get_bit(174);
        self.op_fb.next.ecn = !self.probe_answer.val() & self.h_ext.q.val().get_bits::<16>(176).any();
        self.op_fb.next.penalty = self.h_ext.q.val().get_bits::<7>(160);
        self.op_fb.next.restore = self.h_ext.q.val().get_bit(175);
        self.op_fb.next.echo = self.fb_echo.val();
        self.op_fb.next.arrival = self.h_at.q.val();
        self.op_fb.next.skip = self.h_flags.q.val().get_bit(6);
        self.op_fb.next.always_skip = self.h_flags.q.val().get_bit(7);
        self.op_probe_ev.next = self.h_ext.q.val().get_bits::<7>(176);
        self.rdm_valid.next = self.st.q.val() == DispatchState::Readmit;
        self.rdm_qp.next = self.qp.val();
        self.rdm_ev.next = self.h_ext.q.val().get_bits::<7>(192);
        self.cmd_valid.next = self.cmd_v.q.val();
        self.cmd_id.next = self.c_id.q.val();
        self.cmd_place.next = self.c_place.q.val();
        self.cmd_addr.next = self.c_addr.q.val();
        self.cmd_off.next = self.c_off.q.val();
        self.cmd_len.next = self.c_len.q.val();

        // ---- Stage availability (this cycle's handshakes count).
        // The record stage is free, or its record leaves now.
        self.g_free.next = !self.g_v.q.val() | (self.ag_ready.val() & !self.g_wait.q.val());
        // The tail's record moves on once its marking answer is in.
        self.t_move.next = self.t_ag_v.q.val() & !self.t_wait.q.val() & self.g_free.val();
        // A walk's end is the oldest waiting record's: the record stage's,
        // else the tail's (whose advance was taken: a walk ends 2 cycles
        // after its advance at the least).
        self.done_g.next = self.done_valid.val() & self.g_v.q.val() & self.g_wait.q.val();
        self.done_t.next = self.done_valid.val() & !self.done_g.val();
        self.tail_free.next = (!self.t_ag_v.q.val() | self.t_move.val())
            & (!self.t_adv_v.q.val() | (self.adv_ready.val() & !self.t_wait.q.val()));
        // A frame leaving the head stage (its SACK / NACK record or its
        // readmit taken, or an accepted packet moving to the tail with its
        // marking request, the tail loading from the head registers this
        // same cycle) frees it for the next one in that cycle.
        self.head_free.next = ((self.st.q.val() == DispatchState::Idle)
            | ((self.st.q.val() == DispatchState::RetransmitOp) & self.op_ready.val())
            | ((self.st.q.val() == DispatchState::Readmit) & self.rdm_ready.val())
            | (self.mark_now.val() & self.nx_ok.q.val() & (!self.result_marks.val() | !self.nx_cmd.q.val())))
            & !self.h_cmd_due.q.val();
        // Every take waits for a free command stage (a discard loads it in
        // the same cycle), so `take` does not wait for the classification:
        // the read pointers' next values stay off the decode's path.
        self.take.next = self.head_free.val() & self.p_ok.q.val() & self.b_ok.q.val() & self.cmd_free.val();
        // Registered while the head waits on the RAM outputs: valid the
        // next cycle if it is not taken now (the same head is read again).
        self.nx_state.d.next = self.cls_state.val();
        self.nx_cmd.d.next = self.n_needs_cmd.val();
        self.nx_ok.d.next = self.p_ok.q.val() & self.b_ok.q.val() & !self.take.val();

        // ---- Join FIFO read side: the read address is the pointer after
        // this cycle's pop, so the next head is on the RAM outputs in the
        // next cycle; `p_ok` / `b_ok` say it was written before this edge.
        // Both outcomes are computed from registers, `take` only selects.
        self.p_rd_inc.next = self.p_rd.q.val() + 1;
        self.b_rd_inc.next = self.b_rd.q.val() + 1;
        self.p_left.next = self.p_wr.q.val() - self.p_rd.q.val();
        self.b_left.next = self.b_wr.q.val() - self.b_rd.q.val();
        self.p_left_pop.next = self.p_wr.q.val() - self.p_rd_inc.val();
        self.b_left_pop.next = self.b_wr.q.val() - self.b_rd_inc.val();
        self.p_rd_next.next = self.p_rd.q.val();
        self.b_rd_next.next = self.b_rd.q.val();
        self.p_ok.d.next = self.p_left.val() != 0;
        self.b_ok.d.next = self.b_left.val() != 0;
        if self.take.val() {
            self.p_rd_next.next = self.p_rd_inc.val();
            self.b_rd_next.next = self.b_rd_inc.val();
            self.p_ok.d.next = self.p_left_pop.val() != 0;
            self.b_ok.d.next = self.b_left_pop.val() != 0;
        }
        self.p_rd.d.next = self.p_rd_next.val();
        self.b_rd.d.next = self.b_rd_next.val();
        self.pf_flags.read_address.next = bit_cast::<JOIN_BITS, JOIN_PTR_BITS>(self.p_rd_next.val());
        self.pf_hdr.read_address.next = bit_cast::<JOIN_BITS, JOIN_PTR_BITS>(self.p_rd_next.val());
        self.pf_va.read_address.next = bit_cast::<JOIN_BITS, JOIN_PTR_BITS>(self.p_rd_next.val());
        self.pf_rkey.read_address.next = bit_cast::<JOIN_BITS, JOIN_PTR_BITS>(self.p_rd_next.val());
        self.pf_dlen.read_address.next = bit_cast::<JOIN_BITS, JOIN_PTR_BITS>(self.p_rd_next.val());
        self.pf_imm.read_address.next = bit_cast::<JOIN_BITS, JOIN_PTR_BITS>(self.p_rd_next.val());
        self.pf_ext.read_address.next = bit_cast::<JOIN_BITS, JOIN_PTR_BITS>(self.p_rd_next.val());
        self.pf_pay.read_address.next = bit_cast::<JOIN_BITS, JOIN_PTR_BITS>(self.p_rd_next.val());
        self.pf_at.read_address.next = bit_cast::<JOIN_BITS, JOIN_PTR_BITS>(self.p_rd_next.val());
        self.bf.read_address.next = bit_cast::<JOIN_BITS, JOIN_PTR_BITS>(self.b_rd_next.val());

        // ---- Head stage.
        self.want_cmd.next = false;
        self.want_from_fifo.next = false;
        self.want_place.next = false;
        self.want_addr.next = self.paddr.q.val();
        self.tl_go.next = false;
        self.tl_verdict.next = self.verdict.q.val();
        self.tl_expected.next = self.expected.q.val();
        self.tl_res.next = self.res.q.val();
        self.tl_accepted.next = false;
        if self.take.val() {
            // Classify the joined heads and take them in one cycle.
            self.res.d.next = 0.into();
            self.got_place.d.next = false;
            self.h_flags.d.next = self.pf_flags.read_data.val();
            self.h_hdr.d.next = self.pf_hdr.read_data.val();
            self.h_va.d.next = self.pf_va.read_data.val();
            self.h_rkey.d.next = self.pf_rkey.read_data.val();
            self.h_dlen.d.next = self.pf_dlen.read_data.val();
            self.h_imm.d.next = self.pf_imm.read_data.val();
            self.h_ext.d.next = self.pf_ext.read_data.val();
            self.h_pay.d.next = self.pf_pay.read_data.val();
            self.h_at.d.next = self.pf_at.read_data.val();
            self.h_id.d.next = self.bf.read_data.val().get_bits::<16>(1);
            self.k_join_release.d.next = true;
            self.want_cmd.next = self.n_needs_cmd.val();
            self.want_from_fifo.next = true;
            // The next state is the head's class: when the frame before is
            // marked now, the class registered while the head waited (off
            // the classification's path), else the one decoded from the RAM
            // outputs now.
            self.st.d.next = self.cls_state.val();
            if self.mark_now.val() {
                self.st.d.next = self.nx_state.q.val();
            }
            if self.n_drop.val() {
                self.k_parse_drop.d.next = true;
            } else if self.n_write.val() & self.n_xbit.val() & self.n_qp_ok.val() {
                if !self.n_stored.val() {
                    self.k_not_stored.d.next = true;
                } else if self.n_malformed.val() {
                    self.k_data_bad.d.next = true;
                } else {
                    // Trimmed or not, the packet is first judged without
                    // marking: the model marks a PSN only after the
                    // placement check passed.
                    self.k_data.d.next = true;
                }
            } else if self.n_ack_op.val() {
                self.k_ack.d.next = true;
            } else if self.n_probe.val() {
                // Answered by the ACK generator (MRC 1.0: a SACK, pr = 1;
                // legacy: a probe response), in frame order with the data
                // packets' records.
                self.k_probe.d.next = true;
            } else if self.n_legacy_answer.val() {
                self.k_probe.d.next = true;
            } else if !self.n_xbit.val() & (self.n_opcode.val() != 129) {
                self.k_rc.d.next = true;
            } else if self.n_opcode.val() == 129 {
                self.k_cnp.d.next = true;
            } else if !self.n_qp_ok.val() {
                self.k_qp_range.d.next = true;
            } else if (self.n_opcode.val() == 17) & (self.n_ext_type.val() == 4) {
                // A legacy probe response naming an EV outside the set
                // (the golden requester: `Malformed`): discarded.
                self.k_probe.d.next = true;
                self.k_other.d.next = true;
            } else {
                self.k_other.d.next = true;
            }
        } else if ((self.st.q.val() == DispatchState::RetransmitOp) & self.op_ready.val())
            | ((self.st.q.val() == DispatchState::Readmit) & self.rdm_ready.val())
        {
            self.st.d.next = DispatchState::Idle;
        }
        if (self.st.q.val() == DispatchState::Judge) & !self.t_mark.q.val() & self.sack_req_ready.val() {
            self.st.d.next = DispatchState::JudgeWait;
        }
        if (self.st.q.val() == DispatchState::JudgeWait) & self.sack_out_valid.val() & !self.out_for_tail.val() {
            self.verdict.d.next = self.sack_out_verdict.val();
            self.expected.d.next = self.sack_out_expected.val();
            if self.verdict_new.val() {
                self.st.d.next = DispatchState::CompletionPacket;
                if self.pkt_valid.val() & self.pkt_ready.val() {
                    self.st.d.next = DispatchState::CompletionResult;
                }
            } else {
                // Duplicate, out of window or trimmed: its ACK generator
                // record, and a discard.
                self.want_cmd.next = true;
                self.tl_verdict.next = self.sack_out_verdict.val();
                self.tl_expected.next = self.sack_out_expected.val();
                self.tl_go.next = self.tail_free.val();
                if self.tail_free.val() {
                    self.st.d.next = DispatchState::Idle;
                } else {
                    self.st.d.next = DispatchState::Handover;
                }
            }
        }
        if (self.st.q.val() == DispatchState::CompletionPacket) & self.pkt_valid.val() & self.pkt_ready.val() {
            self.st.d.next = DispatchState::CompletionResult;
        }
        if self.st.q.val() == DispatchState::CompletionResult {
            // A frame taken in this cycle (the accepted one marked in it)
            // keeps the take's cleared `got_place` and `res`.
            if self.place_valid.val() {
                if !self.take.val() {
                    self.got_place.d.next = true;
                    self.paddr.d.next = self.place_addr.val();
                }
                self.want_addr.next = self.place_addr.val();
            }
            if self.res_valid.val() {
                if !self.take.val() {
                    self.res.d.next = self.res_code.val();
                }
                if (self.res_code.val() == 0)
                    & (self.pay_len.val() != 0)
                    & !self.got_place.q.val()
                    & !self.place_valid.val()
                {
                    self.st.d.next = DispatchState::CompletionPlace;
                } else if self.res_code.val() == 0 {
                    // Accepted: placed (or an empty payload discarded)
                    // now, marked by the second SACK request, in this
                    // cycle when the tail is empty (`mark_now`, below).
                    // The command is this frame's: a frame taken in this
                    // cycle needs none (`nx_cmd`).
                    self.want_cmd.next = true;
                    self.want_from_fifo.next = false;
                    self.want_place.next = self.got_place.q.val() | self.place_valid.val();
                    if !self.mark_now.val() {
                        self.st.d.next = DispatchState::Mark;
                    }
                } else {
                    // Rejected or dropped: never marked, `expected` did
                    // not move, so no advance either.
                    self.want_cmd.next = true;
                    self.tl_res.next = self.res_code.val();
                    self.tl_go.next = self.tail_free.val();
                    if self.tail_free.val() {
                        self.st.d.next = DispatchState::Idle;
                    } else {
                        self.st.d.next = DispatchState::Handover;
                    }
                }
            }
        }
        if (self.st.q.val() == DispatchState::CompletionPlace) & self.place_valid.val() {
            self.got_place.d.next = true;
            self.paddr.d.next = self.place_addr.val();
            self.want_cmd.next = true;
            self.want_place.next = true;
            self.want_addr.next = self.place_addr.val();
            self.st.d.next = DispatchState::Mark;
        }
        if self.mark_now.val() {
            // The frame moves to the tail, its marking request with it
            // when the SACK table does not take it now (`t_mark`). The
            // verdict stays the judging request's (new: the SACK table
            // takes no other request for the QP in between); the tail
            // waits for the marking request's `out_expected`.
            self.tl_go.next = true;
            self.tl_accepted.next = true;
            self.t_mark.d.next = !self.sack_req_ready.val();
            if !self.take.val() {
                self.st.d.next = DispatchState::Idle;
            }
        }
        if self.t_mark.q.val() & self.sack_req_ready.val() {
            self.t_mark.d.next = false;
        }
        if (self.st.q.val() == DispatchState::Handover) & self.tail_free.val() {
            self.tl_go.next = true;
            self.st.d.next = DispatchState::Idle;
        }

        // ---- Command stage: one command per stored frame, in frame order
        // (so the commands follow the buffer's ids with no gap).
        if self.cmd_v.q.val() & self.cmd_ready.val() {
            self.cmd_v.d.next = false;
        }
        if self.h_cmd_due.q.val() & self.cmd_free.val() {
            self.cmd_v.d.next = true;
            self.c_id.d.next = self.h_id.q.val();
            self.c_place.d.next = self.h_place.q.val();
            self.c_addr.d.next = self.paddr.q.val();
            self.c_off.d.next = self.pay_off.val();
            self.c_len.d.next = self.pay_len.val();
            self.h_cmd_due.d.next = false;
        }
        if self.want_cmd.val() & self.want_from_fifo.val() {
            // A frame discarded at its classification (`take` waited for
            // a free command stage).
            self.cmd_v.d.next = true;
            self.c_id.d.next = self.bf.read_data.val().get_bits::<16>(1);
            self.c_place.d.next = false;
            self.c_off.d.next = self.pf_pay.read_data.val().get_bits::<18>(0);
            self.c_len.d.next = self.n_pay_len.val();
        }
        if self.want_cmd.val() & !self.want_from_fifo.val() {
            if self.cmd_free.val() {
                self.cmd_v.d.next = true;
                self.c_id.d.next = self.h_id.q.val();
                self.c_place.d.next = self.want_place.val();
                self.c_addr.d.next = self.want_addr.val();
                self.c_off.d.next = self.pay_off.val();
                self.c_len.d.next = self.pay_len.val();
            } else {
                self.h_cmd_due.d.next = true;
                self.h_place.d.next = self.want_place.val();
                self.paddr.d.next = self.want_addr.val();
            }
        }

        // ---- Tail stage: the ACK generator record (every judged data
        // packet) and, for an accepted one, the advance to the marking
        // request's `out_expected`, each leaving on its own handshake:
        // the record into the record stage, where the record of an
        // accepted packet waits for the completion tracker's walk of the
        // advance and takes its MSN (the AETH MSN after the packet).
        if self.ag_valid.val() & self.ag_ready.val() {
            self.g_v.d.next = false;
        }
        if self.done_g.val() {
            self.g_wait.d.next = false;
            self.g_rec.d.next.msn = self.done_msn.val();
        }
        if self.done_t.val() {
            self.t_msn_wait.d.next = false;
            self.t_rec.d.next.msn = self.done_msn.val();
        }
        if self.t_move.val() {
            self.t_ag_v.d.next = false;
            self.g_v.d.next = true;
            self.g_wait.d.next = self.t_msn_wait.q.val() & !self.done_t.val();
            self.g_rec.d.next = self.t_rec.q.val();
            if self.done_t.val() {
                self.g_rec.d.next.msn = self.done_msn.val();
            }
        }
        if self.t_adv_v.q.val() & self.adv_valid.val() & self.adv_ready.val() {
            self.t_adv_v.d.next = false;
        }
        if self.t_wait.q.val() & self.sack_out_valid.val() {
            self.t_wait.d.next = false;
            self.t_rec.d.next.expected = self.sack_out_expected.val();
        }
        if self.tl_go.val() {
            self.t_ag_v.d.next = true;
            self.t_adv_v.d.next = self.tl_accepted.val();
            self.t_wait.d.next = self.tl_accepted.val();
            self.t_msn_wait.d.next = self.tl_accepted.val();
            self.t_rec.d.next.msn_valid = self.tl_accepted.val();
            self.t_rec.d.next.qp = self.qp.val();
            self.t_rec.d.next.psn = self.psn.val();
            self.t_rec.d.next.verdict = self.tl_verdict.val();
            self.t_rec.d.next.ack_req = self.h_flags.q.val().get_bit(3);
            self.t_rec.d.next.trimmed = self.trimmed.val();
            self.t_rec.d.next.ecn = self.h_flags.q.val().get_bit(1);
            self.t_rec.d.next.reject = self.tl_res.val() == 1;
            self.t_rec.d.next.drop = self.tl_res.val() == 2;
            self.t_rec.d.next.expected = self.tl_expected.val();
            self.t_rec.d.next.ev = self.h_hdr.q.val().ev;
            self.t_rec.d.next.ev_index = self.h_ext.q.val().get_bits::<16>(192);
            self.t_rec.d.next.echo = self.h_ext.q.val().get_bits::<32>(128);
            // Only a probe reaches the tail with an ACK's opcode.
            self.t_rec.d.next.probe = self.opcode.val() == 17;
            self.t_rec.d.next.probe_legacy = self.ext_type.val() == 4;
            self.t_rec.d.next.probe_id = self.h_ext.q.val().get_bits::<32>(160);
        }

        // ---- CQE stage: A holds the completion while the ring RAM is read
        // at its QP; O is the output register.
        self.a_take.next = self.cq_valid.val() & !self.a_valid.q.val();
        self.a_move.next = self.a_valid.q.val() & (!self.o_valid.q.val() | self.cqe_ready.val());
        self.cq_ready.next = !self.a_valid.q.val();
        if self.a_valid.q.val() {
            self.ring_of.read_address.next = self.a_qp.q.val();
        } else {
            self.ring_of.read_address.next = self.cq_qp.val();
        }
        self.ring_of.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.ring_of.write_data.next = bit_cast::<8, 16>(self.cfg.data.val().get_value_sq_ctx_cq_index());
        self.ring_of.write_enable.next =
            self.cfg.valid.val() & (self.cfg.table.val() == self.t_sq_ctx.val()) & (self.cfg.index.val() < 256);
        if self.a_take.val() {
            self.a_valid.d.next = true;
            self.a_qp.d.next = self.cq_qp.val();
            self.a_imm.d.next = self.cq_imm.val();
            self.a_len.d.next = self.cq_len.val();
            self.a_msn.d.next = self.cq_msn.val();
        }
        if self.o_valid.q.val() & self.cqe_ready.val() {
            self.o_valid.d.next = false;
        }
        if self.a_move.val() {
            self.a_valid.d.next = false;
            self.o_valid.d.next = true;
            self.o_ring.d.next = self.ring_of.read_data.val();
            // A CQE: status 0 (success), opcode 2 (WRITE-IMM), sq_index =
            // the message's MSN. The ring writer owns the phase bit.
            self.o_entry.d.next = 0.into();
            self.o_entry.d.next.set_value_cqe_opcode(2.into());
            self.o_entry
                .d
                .next
                .set_value_cqe_qp(bit_cast::<24, 8>(self.a_qp.q.val()));
            self.o_entry.d.next.set_value_cqe_byte_len(self.a_len.q.val());
            self.o_entry.d.next.set_value_cqe_imm(self.a_imm.q.val());
            self.o_entry
                .d
                .next
                .set_value_cqe_sq_index(bit_cast::<32, 24>(self.a_msn.q.val()));
            self.o_entry.d.next.set_value_cqe_has_imm(1.into());
        }
        self.cqe_valid.next = self.o_valid.q.val();
        self.cqe_ring.next = self.o_ring.q.val();
        self.cqe_entry.next = self.o_entry.q.val();

        self.join_release.next = self.k_join_release.q.val();
        self.cnt_parse_drop.next = self.k_parse_drop.q.val();
        self.cnt_not_stored.next = self.k_not_stored.q.val();
        self.cnt_data_bad.next = self.k_data_bad.q.val();
        self.cnt_probe.next = self.k_probe.q.val();
        self.cnt_cnp.next = self.k_cnp.q.val();
        self.cnt_rc.next = self.k_rc.q.val();
        self.cnt_qp_range.next = self.k_qp_range.q.val();
        self.cnt_other.next = self.k_other.q.val();
        self.cnt_data.next = self.k_data.q.val();
        self.cnt_ack.next = self.k_ack.q.val();
    }
}
