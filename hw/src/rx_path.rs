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
use crate::param::Param;
use crate::retransmit::{kind, KIND_BITS};

/// Dispatcher states.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum DispatchState {
    Idle,
    /// Both FIFO heads are on the RAM outputs: join them.
    Peek,
    /// The joined record is in the head registers: classify it.
    Classify,
    /// A request to the SACK table (judging, or marking once accepted).
    SackRequest,
    /// Waiting for the SACK table's answer.
    SackWait,
    /// The packet record to the completion tracker.
    CompletionPacket,
    /// Its result (and the placement address) from the completion tracker.
    CompletionResult,
    /// Waiting for the placement address alone.
    CompletionPlace,
    /// The cumulative advance to the completion tracker.
    Advance,
    /// The record to the ACK generator.
    AckGen,
    /// A SACK / NACK record to the retransmit engine.
    RetransmitOp,
    /// The RX buffer command (buffer id order: the frame order).
    Command,
    /// Waiting for the RX buffer to take the command.
    CommandWait,
}

/// Depth of each join FIFO (log2 is 4): the ingress admission's join
/// credits (`hw::rx_ingress`), so a FIFO never overflows.
pub const JOIN_DEPTH: usize = 16;

/// The RX path glue. Ports are described in `docs/hw/rx_path.md`; the
/// RX buffer's ids are carried through, whatever their width.
#[derive(LogicBlock, Default)]
pub struct RxPath {
    pub clock: Signal<In, Clock>,
    // ---- RX parser record (one pulse per frame, no back-pressure: the
    // ingress admission keeps at most `JOIN_DEPTH` frames unjoined).
    pub prs_valid: Signal<In, Bit>,
    pub prs_drop: Signal<In, Bit>,
    pub prs_ecn_ce: Signal<In, Bit>,
    pub prs_trimmed: Signal<In, Bit>,
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
    pub ag_ev: Signal<Out, Bits<16>>,
    pub ag_ev_index: Signal<Out, Bits<16>>,
    pub ag_echo_ts: Signal<Out, Bits<32>>,
    /// The record is an MRC 1.0 reliability probe to answer (`ag_ev`,
    /// `ag_ev_index` = the probe id, `ag_echo_ts` = its timestamp; the
    /// other fields mean nothing).
    pub ag_probe: Signal<Out, Bit>,
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
    pub op_bitmap: Signal<Out, Bits<64>>,
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
    k_nack_oow: Param<KIND_BITS, { kind::NACK_OOW }>,
    k_nack_remote: Param<KIND_BITS, { kind::NACK_REMOTE }>,
    n_trimmed: Param<8, { nack::TRIMMED as u64 }>,
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

    // ---- Join FIFOs (RAM, 16 deep each).
    pf_flags: RAM<Bits<8>, 4>,
    pf_hdr: RAM<Bits<56>, 4>,
    pf_va: RAM<Bits<64>, 4>,
    pf_rkey: RAM<Bits<32>, 4>,
    pf_dlen: RAM<Bits<32>, 4>,
    pf_imm: RAM<Bits<32>, 4>,
    pf_ext: RAM<Bits<224>, 4>,
    pf_pay: RAM<Bits<36>, 4>,
    bf: RAM<Bits<17>, 4>,
    p_wr: DFF<Bits<5>>,
    p_rd: DFF<Bits<5>>,
    b_wr: DFF<Bits<5>>,
    b_rd: DFF<Bits<5>>,
    // ---- Head of the joined frame.
    h_flags: DFF<Bits<8>>,
    h_hdr: DFF<Bits<56>>,
    h_va: DFF<Bits<64>>,
    h_rkey: DFF<Bits<32>>,
    h_dlen: DFF<Bits<32>>,
    h_imm: DFF<Bits<32>>,
    h_ext: DFF<Bits<224>>,
    h_pay: DFF<Bits<36>>,
    h_stored: DFF<Bit>,
    h_id: DFF<Bits<16>>,
    // ---- Dispatch state.
    st: DFF<DispatchState>,
    verdict: DFF<Bits<2>>,
    expected: DFF<Bits<24>>,
    res: DFF<Bits<2>>,
    paddr: DFF<Bits<64>>,
    got_place: DFF<Bit>,
    c_id: DFF<Bits<16>>,
    c_place: DFF<Bit>,
    /// The SACK request in flight is the marking one (the packet was
    /// judged new and the completion tracker accepted it).
    marking: DFF<Bit>,
    // ---- Path MTU per QP: log2 of it (`recv_init.log2_mtu`, 8..=13;
    // any other value checks nothing), read at the head's QP while it is
    // peeked, so that it is on the RAM output in Classify.
    mtu_of: RAM<Bits<4>, 8>,
    /// The head's payload is longer than 2^8 .. 2^13 bytes (registered in
    /// Peek, so Classify only selects one by the QP's MTU).
    h_over_8: DFF<Bit>,
    h_over_9: DFF<Bit>,
    h_over_10: DFF<Bit>,
    h_over_11: DFF<Bit>,
    h_over_12: DFF<Bit>,
    h_over_13: DFF<Bit>,
    // ---- EVs in each QP's set (`sq_ctx.ev_count`), read like `mtu_of`:
    // an MRC 1.0 probe answer must name one of them.
    evs_of: RAM<Bits<8>, 8>,
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
    p_count: Signal<Local, Bits<5>>,
    b_count: Signal<Local, Bits<5>>,
    opcode: Signal<Local, Bits<8>>,
    qp: Signal<Local, Bits<8>>,
    psn: Signal<Local, Bits<24>>,
    is_drop: Signal<Local, Bit>,
    trimmed: Signal<Local, Bit>,
    xbit: Signal<Local, Bit>,
    qp_ok: Signal<Local, Bit>,
    is_write: Signal<Local, Bit>,
    first: Signal<Local, Bit>,
    last: Signal<Local, Bit>,
    has_imm: Signal<Local, Bit>,
    pay_off: Signal<Local, Bits<18>>,
    pay_len: Signal<Local, Bits<18>>,
    ext_type: Signal<Local, Bits<4>>,
    nack_kind: Signal<Local, Bits<8>>,
    malformed: Signal<Local, Bit>,
    peek_len: Signal<Local, Bits<18>>,
    log2_mtu: Signal<Local, Bits<4>>,
    above_mtu: Signal<Local, Bit>,
    /// The head is an MRC 1.0 SACK answering a probe (record extension
    /// type 5, `rx_parser::translate::EXT_PROBE_ANSWER`), and the EV index
    /// it names is in the QP's set.
    probe_answer: Signal<Local, Bit>,
    probe_ev_ok: Signal<Local, Bit>,
    /// The head is an MRC 1.0 reliability probe (record extension type 6,
    /// `rx_parser::translate::EXT_MRC10_PROBE`) to a QP below 256.
    mrc10_probe: Signal<Local, Bit>,
    /// An acknowledgement for the retransmit engine: a SACK, a probe
    /// answer for an EV of the set, or a NACK of a known kind.
    is_ack_op: Signal<Local, Bit>,
    a_take: Signal<Local, Bit>,
    pw: Signal<Local, Bits<4>>,
    pr: Signal<Local, Bits<4>>,
    pwe: Signal<Local, Bit>,
    f_drop: Signal<Local, Bits<1>>,
    f_ecn: Signal<Local, Bits<1>>,
    f_trim: Signal<Local, Bits<1>>,
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
            h_stored,
            h_id,
            st,
            verdict,
            expected,
            res,
            paddr,
            got_place,
            c_id,
            c_place,
            marking,
            h_over_8,
            h_over_9,
            h_over_10,
            h_over_11,
            h_over_12,
            h_over_13,
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
        self.p_count.next = self.p_wr.q.val() - self.p_rd.q.val();
        self.b_count.next = self.b_wr.q.val() - self.b_rd.q.val();
        self.p_in.next = self.prs_valid.val() | self.prs_drop.val();
        self.pw.next = bit_cast::<4, 5>(self.p_wr.q.val());
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
        self.pf_flags.write_data.next = bit_cast::<8, 1>(self.f_drop.val())
            | (bit_cast::<8, 1>(self.f_ecn.val()) << 1)
            | (bit_cast::<8, 1>(self.f_trim.val()) << 2)
            | (bit_cast::<8, 1>(self.f_ackreq.val()) << 3)
            | (bit_cast::<8, 1>(self.f_x.val()) << 4)
            | (bit_cast::<8, 1>(self.f_qpok.val()) << 5);
        self.pf_hdr.write_data.next = bit_cast::<56, 8>(self.prs_opcode.val())
            | (bit_cast::<56, 8>(self.prs_dest_qp.val().get_bits::<8>(0)) << 8)
            | (bit_cast::<56, 24>(self.prs_psn.val()) << 16)
            | (bit_cast::<56, 16>(self.prs_ev.val().get_bits::<16>(0)) << 40);
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
        if self.p_in.val() {
            self.p_wr.d.next = self.p_wr.q.val() + 1;
        }
        self.bf.write_address.next = bit_cast::<4, 5>(self.b_wr.q.val());
        self.bf.write_data.next = bit_cast::<17, 1>(self.f_stored.val()) | (bit_cast::<17, 16>(self.rec_id.val()) << 1);
        self.bf.write_enable.next = self.rec_valid.val();
        if self.rec_valid.val() {
            self.b_wr.d.next = self.b_wr.q.val() + 1;
        }

        // FIFO heads: the read address is the read pointer, so the RAM
        // outputs hold the heads from the cycle after a pointer moves.
        self.pr.next = bit_cast::<4, 5>(self.p_rd.q.val());
        self.pf_flags.read_address.next = self.pr.val();
        self.pf_hdr.read_address.next = self.pr.val();
        self.pf_va.read_address.next = self.pr.val();
        self.pf_rkey.read_address.next = self.pr.val();
        self.pf_dlen.read_address.next = self.pr.val();
        self.pf_imm.read_address.next = self.pr.val();
        self.pf_ext.read_address.next = self.pr.val();
        self.pf_pay.read_address.next = self.pr.val();
        self.bf.read_address.next = bit_cast::<4, 5>(self.b_rd.q.val());
        // The MTU of the parser FIFO head's QP: in Peek this is the frame
        // being joined, so its MTU is on the RAM output in Classify.
        self.mtu_of.read_address.next = self.pf_hdr.read_data.val().get_bits::<8>(8);
        self.evs_of.read_address.next = self.pf_hdr.read_data.val().get_bits::<8>(8);
        self.evs_of.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.evs_of.write_data.next = self.cfg.data.val().get_value_sq_ctx_ev_count();
        self.evs_of.write_enable.next =
            self.cfg.valid.val() & (self.cfg.table.val() == self.t_sq_ctx.val()) & (self.cfg.index.val() < 256);
        self.peek_len.next = self.pf_pay.read_data.val().get_bits::<18>(18);
        // Receive set-up rows (table 7) carry the QP's path MTU. A QP's
        // row is written while the QP is idle.
        self.mtu_of.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.mtu_of.write_data.next = self.cfg.data.val().get_value_recv_init_log2_mtu();
        self.mtu_of.write_enable.next =
            self.cfg.valid.val() & (self.cfg.table.val() == self.t_recv_qp.val()) & (self.cfg.index.val() < 256);

        // ---- Decoded head fields.
        self.opcode.next = self.h_hdr.q.val().get_bits::<8>(0);
        self.qp.next = self.h_hdr.q.val().get_bits::<8>(8);
        self.psn.next = self.h_hdr.q.val().get_bits::<24>(16);
        self.is_drop.next = self.h_flags.q.val().get_bit(0);
        self.trimmed.next = self.h_flags.q.val().get_bit(2);
        self.xbit.next = self.h_flags.q.val().get_bit(4);
        self.qp_ok.next = self.h_flags.q.val().get_bit(5);
        self.pay_off.next = self.h_pay.q.val().get_bits::<18>(0);
        self.pay_len.next = self.h_pay.q.val().get_bits::<18>(18);
        self.is_write.next = (self.opcode.val() >= 6) & (self.opcode.val() <= 11);
        // FIRST 0x06, ONLY 0x0A, ONLY-IMM 0x0B carry a RETH.
        self.first.next = (self.opcode.val() == 6) | (self.opcode.val() == 10) | (self.opcode.val() == 11);
        self.last.next =
            (self.opcode.val() == 8) | (self.opcode.val() == 9) | (self.opcode.val() == 10) | (self.opcode.val() == 11);
        self.has_imm.next = (self.opcode.val() == 9) | (self.opcode.val() == 11);
        self.ext_type.next = self.h_ext.q.val().get_bits::<4>(216);
        self.nack_kind.next = self.h_ext.q.val().get_bits::<8>(208);
        // A probe answer's EV index (bytes 4-5) must be in the set: the
        // golden requester refuses it otherwise (`Malformed`).
        self.probe_answer.next = self.ext_type.val() == 5;
        self.probe_ev_ok.next = self.h_ext.q.val().get_bits::<16>(176) < bit_cast::<16, 8>(self.evs_of.read_data.val());
        self.is_ack_op.next = (self.opcode.val() == 17)
            & self.xbit.val()
            & self.qp_ok.val()
            & ((self.ext_type.val() == 2)
                | (self.probe_answer.val() & self.probe_ev_ok.val())
                | ((self.ext_type.val() == 3)
                    & ((self.nack_kind.val() == self.n_trimmed.val())
                        | (self.nack_kind.val() == self.n_out_of_window.val())
                        | (self.nack_kind.val() == self.n_remote_access.val()))));
        self.mrc10_probe.next =
            (self.opcode.val() == 17) & self.xbit.val() & self.qp_ok.val() & (self.ext_type.val() == 6);
        // The model's checks before the window (`handle_data`): the
        // payload (trimmed or not) is no longer than the path MTU, an ONLY
        // packet's payload equals its DMA length (unless trimmed), and a
        // DMA length fits 2 GiB.
        self.log2_mtu.next = self.mtu_of.read_data.val();
        self.above_mtu.next = ((self.log2_mtu.val() == 8) & self.h_over_8.q.val())
            | ((self.log2_mtu.val() == 9) & self.h_over_9.q.val())
            | ((self.log2_mtu.val() == 10) & self.h_over_10.q.val())
            | ((self.log2_mtu.val() == 11) & self.h_over_11.q.val())
            | ((self.log2_mtu.val() == 12) & self.h_over_12.q.val())
            | ((self.log2_mtu.val() == 13) & self.h_over_13.q.val());
        self.malformed.next = self.above_mtu.val()
            | (self.first.val() & self.h_dlen.q.val().get_bit(31))
            | (((self.opcode.val() == 10) | (self.opcode.val() == 11))
                & !self.trimmed.val()
                & (self.h_dlen.q.val() != bit_cast::<32, 18>(self.pay_len.val())));

        // ---- Outputs driven from the state and the head registers.
        self.sack_req_valid.next = self.st.q.val() == DispatchState::SackRequest;
        self.sack_req_qp.next = self.qp.val();
        self.sack_req_psn.next = self.psn.val();
        self.sack_req_nomark.next = !self.marking.q.val();
        self.pkt_valid.next = self.st.q.val() == DispatchState::CompletionPacket;
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
        self.adv_valid.next = self.st.q.val() == DispatchState::Advance;
        self.adv_qp.next = self.qp.val();
        self.adv_expected.next = self.expected.q.val();
        self.ag_valid.next = self.st.q.val() == DispatchState::AckGen;
        self.ag_qp.next = self.qp.val();
        self.ag_psn.next = self.psn.val();
        self.ag_verdict.next = self.verdict.q.val();
        self.ag_ack_req.next = self.h_flags.q.val().get_bit(3);
        self.ag_trimmed.next = self.trimmed.val();
        self.ag_ecn_ce.next = self.h_flags.q.val().get_bit(1);
        self.ag_reject.next = self.res.q.val() == 1;
        self.ag_drop.next = self.res.q.val() == 2;
        self.ag_expected.next = self.expected.q.val();
        self.ag_msn.next = 0.into();
        self.ag_ev.next = self.h_hdr.q.val().get_bits::<16>(40);
        self.ag_ev_index.next = self.h_ext.q.val().get_bits::<16>(192);
        self.ag_echo_ts.next = self.h_ext.q.val().get_bits::<32>(128);
        self.ag_probe.next = self.mrc10_probe.val();
        self.op_valid.next = self.st.q.val() == DispatchState::RetransmitOp;
        if (self.ext_type.val() == 2) | self.probe_answer.val() {
            self.op_kind.next = self.k_sack.val();
        } else if self.nack_kind.val() == self.n_trimmed.val() {
            self.op_kind.next = self.k_nack_trim.val();
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
        self.cmd_valid.next = self.st.q.val() == DispatchState::CommandWait;
        self.cmd_id.next = self.c_id.q.val();
        self.cmd_place.next = self.c_place.q.val();
        self.cmd_addr.next = self.paddr.q.val();
        self.cmd_off.next = self.pay_off.val();
        self.cmd_len.next = self.pay_len.val();

        // ---- Dispatcher.
        if (self.st.q.val() == DispatchState::Idle) & (self.p_count.val() != 0) & (self.b_count.val() != 0) {
            // Both halves of the oldest frame are in.
            self.st.d.next = DispatchState::Peek;
        }
        if self.st.q.val() == DispatchState::Peek {
            // Defaults for a new frame.
            self.res.d.next = 0.into();
            self.got_place.d.next = false;
            self.marking.d.next = false;
            self.h_flags.d.next = self.pf_flags.read_data.val();
            self.h_hdr.d.next = self.pf_hdr.read_data.val();
            self.h_va.d.next = self.pf_va.read_data.val();
            self.h_rkey.d.next = self.pf_rkey.read_data.val();
            self.h_dlen.d.next = self.pf_dlen.read_data.val();
            self.h_imm.d.next = self.pf_imm.read_data.val();
            self.h_ext.d.next = self.pf_ext.read_data.val();
            self.h_pay.d.next = self.pf_pay.read_data.val();
            self.h_stored.d.next = self.bf.read_data.val().get_bit(0);
            self.h_id.d.next = self.bf.read_data.val().get_bits::<16>(1);
            self.h_over_8.d.next = self.peek_len.val() > 256;
            self.h_over_9.d.next = self.peek_len.val() > 512;
            self.h_over_10.d.next = self.peek_len.val() > 1024;
            self.h_over_11.d.next = self.peek_len.val() > 2048;
            self.h_over_12.d.next = self.peek_len.val() > 4096;
            self.h_over_13.d.next = self.peek_len.val() > 8192;
            self.p_rd.d.next = self.p_rd.q.val() + 1;
            self.b_rd.d.next = self.b_rd.q.val() + 1;
            self.k_join_release.d.next = true;
            self.st.d.next = DispatchState::Classify;
        }
        if self.st.q.val() == DispatchState::Classify {
            self.c_place.d.next = false;
            if self.is_drop.val() {
                self.k_parse_drop.d.next = true;
                if self.h_stored.q.val() {
                    self.st.d.next = DispatchState::Command;
                } else {
                    self.st.d.next = DispatchState::Idle;
                }
            } else if self.is_write.val() & self.xbit.val() & self.qp_ok.val() {
                if !self.h_stored.q.val() {
                    self.k_not_stored.d.next = true;
                    self.st.d.next = DispatchState::Idle;
                } else if self.malformed.val() {
                    self.k_data_bad.d.next = true;
                    self.st.d.next = DispatchState::Command;
                } else {
                    // Trimmed or not, the packet is first judged without
                    // marking (`marking` is low): the model marks a PSN
                    // only after the placement check passed.
                    self.k_data.d.next = true;
                    self.st.d.next = DispatchState::SackRequest;
                }
            } else if self.is_ack_op.val() {
                self.k_ack.d.next = true;
                self.st.d.next = DispatchState::RetransmitOp;
            } else if self.mrc10_probe.val() {
                // Answered by the ACK generator (a SACK, pr = 1).
                self.k_probe.d.next = true;
                self.st.d.next = DispatchState::AckGen;
            } else {
                if !self.xbit.val() & (self.opcode.val() != 129) {
                    self.k_rc.d.next = true;
                } else if self.opcode.val() == 129 {
                    self.k_cnp.d.next = true;
                } else if !self.qp_ok.val() {
                    self.k_qp_range.d.next = true;
                } else if (self.opcode.val() == 17) & (self.ext_type.val() == 4) {
                    // A legacy probe: not answered, so discarded too.
                    self.k_probe.d.next = true;
                    self.k_other.d.next = true;
                } else {
                    self.k_other.d.next = true;
                }
                if self.h_stored.q.val() {
                    self.st.d.next = DispatchState::Command;
                } else {
                    self.st.d.next = DispatchState::Idle;
                }
            }
        }
        if (self.st.q.val() == DispatchState::SackRequest) & self.sack_req_ready.val() {
            self.st.d.next = DispatchState::SackWait;
        }
        if (self.st.q.val() == DispatchState::SackWait) & self.sack_out_valid.val() {
            self.expected.d.next = self.sack_out_expected.val();
            if self.marking.q.val() {
                // The marking request: the verdict stays the judging
                // request's (new; nothing else touched the QP in between,
                // frames are dispatched one at a time), `expected` is the
                // one after the cumulative advance.
                self.st.d.next = DispatchState::Advance;
            } else {
                self.verdict.d.next = self.sack_out_verdict.val();
                if (self.sack_out_verdict.val() == 1) & !self.trimmed.val() {
                    self.st.d.next = DispatchState::CompletionPacket;
                } else {
                    self.st.d.next = DispatchState::AckGen;
                }
            }
        }
        if (self.st.q.val() == DispatchState::CompletionPacket) & self.pkt_ready.val() {
            self.st.d.next = DispatchState::CompletionResult;
        }
        if self.st.q.val() == DispatchState::CompletionResult {
            if self.place_valid.val() {
                self.got_place.d.next = true;
                self.paddr.d.next = self.place_addr.val();
            }
            if self.res_valid.val() {
                self.res.d.next = self.res_code.val();
                if (self.res_code.val() == 0) & (self.pay_len.val() != 0) & !self.place_valid.val() {
                    self.st.d.next = DispatchState::CompletionPlace;
                } else if self.res_code.val() == 0 {
                    // Accepted: now mark it (second SACK request).
                    self.marking.d.next = true;
                    self.st.d.next = DispatchState::SackRequest;
                } else {
                    // Rejected or dropped: never marked, `expected` did
                    // not move, so no advance either.
                    self.st.d.next = DispatchState::AckGen;
                }
            }
        }
        if (self.st.q.val() == DispatchState::CompletionPlace) & self.place_valid.val() {
            self.got_place.d.next = true;
            self.paddr.d.next = self.place_addr.val();
            self.marking.d.next = true;
            self.st.d.next = DispatchState::SackRequest;
        }
        if (self.st.q.val() == DispatchState::Advance) & self.adv_ready.val() {
            self.st.d.next = DispatchState::AckGen;
        }
        if (self.st.q.val() == DispatchState::AckGen) & self.ag_ready.val() {
            self.c_place.d.next = self.got_place.q.val() & (self.res.q.val() == 0) & (self.verdict.q.val() == 1);
            // A probe the buffer did not store has no command (a data
            // packet here is always stored).
            if self.h_stored.q.val() {
                self.st.d.next = DispatchState::Command;
            } else {
                self.st.d.next = DispatchState::Idle;
            }
        }
        if (self.st.q.val() == DispatchState::RetransmitOp) & self.op_ready.val() {
            self.c_place.d.next = false;
            if self.h_stored.q.val() {
                self.st.d.next = DispatchState::Command;
            } else {
                self.st.d.next = DispatchState::Idle;
            }
        }
        if self.st.q.val() == DispatchState::Command {
            // Every stored frame is joined and commanded, in frame order,
            // so the commands follow the buffer's ids with no gap.
            self.c_id.d.next = self.h_id.q.val();
            self.st.d.next = DispatchState::CommandWait;
        }
        if (self.st.q.val() == DispatchState::CommandWait) & self.cmd_ready.val() {
            self.st.d.next = DispatchState::Idle;
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
