//! Send completions: per QP an in-order list of the messages the requester
//! committed (its `msg_*` records) and of its rejected work requests (its
//! `err_*` records), completed by the retransmit engine's cumulative
//! acknowledgement (`ack_*`: a message is done when `una` is serially after
//! its last PSN) or flushed by its QP-error report (`rtx_err_*`: retry
//! budget spent, or a remote-access NACK), the rules of
//! `proto::model::mrc` (`advance_una`, `enter_error`):
//!
//! * completions strictly in posting (SQ) order per QP;
//! * a signaled message completes with a success CQE, an unsignaled one is
//!   freed silently;
//! * on a QP error for PSN p: the outstanding message holding p gets
//!   `RETRY_EXCEEDED` or `REMOTE_ACCESS` (the report's reason), every other
//!   outstanding one `FLUSHED`, in order, and
//!   the QP is in error: later messages are flushed as they arrive, later
//!   acknowledgements dropped, until the QP's send context is written again;
//! * a requester error record completes with its own status when it reaches
//!   the head of its QP's list.
//!
//! CQEs leave packed per [`contract::layout::cqe`] for a `RingWriter`, the
//! ring being the QP's `cq_index` (send-context row, config table 1). See
//! `docs/hw/send_cq.md`.

use contract::config::table;
use rust_hdl::prelude::*;

use crate::bus::ConfigSink;

use contract::layout::CqStatus;

use crate::contract_rows::{CqeRecord, SqCtxRow, TableId};
use crate::param::Param;
use crate::retransmit::{err_reason, ERR_REASON_BITS};

/// log2 of the list entries per QP (64 outstanding messages + errors: as
/// many as the requester keeps in flight, `hw::requester::RTX_SLOTS`).
pub const LIST_LOG2: usize = 6;
/// Entries per QP list.
pub const LIST_DEPTH: usize = 1 << LIST_LOG2;
/// Width of a list pointer: one bit more than a slot, so that a full list
/// (tail - head = `LIST_DEPTH`) differs from an empty one.
pub const LIST_PTR_BITS: usize = LIST_LOG2 + 1;
/// Address width of the entry RAM: {QP, slot}.
const ENTRY_ADDR_BITS: usize = 8 + LIST_LOG2;

/// A QP's list pointers and completion state (the `ptr_ram` row).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct ListPtrWord {
    /// The oldest entry (free-running, `LIST_PTR_BITS`).
    pub head: Bits<LIST_PTR_BITS>,
    /// The next entry to append.
    pub tail: Bits<LIST_PTR_BITS>,
    /// The QP is in error (later messages flushed, acknowledgements dropped).
    pub in_error: Bit,
    /// The last acknowledgement's una (start_psn after a config write).
    pub una: Bits<24>,
}

/// The sequencer's states.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum SeqState {
    /// Take a record (QP errors, then acknowledgements, then message
    /// records, then requester errors) and read its QP's row.
    Idle,
    /// The QP's row on the RAM outputs: append the record, take the
    /// acknowledgement or the QP error, and write the row as the record
    /// changes it. A record that leaves nothing to walk ends here;
    /// otherwise the head entry's read is presented (`Walk` next), or,
    /// after an append, the head is read in `WalkRead`.
    Check,
    /// The head entry is being read: after an append (into an empty list
    /// whose message is due or whose QP is in error, or a requester error
    /// record), or again after a `Walk` cycle that could not pop (a CQE
    /// register still full, a config write). An empty list (or a reset
    /// row) ends the walk here.
    WalkRead,
    /// The head entry on the RAM output: pop it (a CQE when it is due or
    /// flushed) and read the next, or stop. The row, as the registers hold
    /// it, is written in every cycle; the walk ends in the cycle that
    /// finds the head not due, or goes to `WriteBack` after the pop that
    /// empties the list.
    Walk,
    /// Write the row from the registers: after the pop that empties the
    /// list, or for a record whose last write a config write kept out of
    /// the port (waiting for a cycle without one); nothing is written
    /// over a reset row.
    WriteBack,
}

/// The kind of the record in service.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum RecordKind {
    /// A message record from the requester.
    Msg,
    /// A requester error record (its status known).
    ReqErr,
    /// A cumulative acknowledgement from the retransmit engine.
    Ack,
    /// A QP error from the retransmit engine.
    RtxErr,
}

/// The send completion block (256 QPs, `LIST_DEPTH` list entries each).
#[derive(LogicBlock, Default)]
pub struct SendCompletions {
    pub clock: Signal<In, Clock>,
    // Config write port (snoops table 1 = QP send context: cq_index, start_psn).
    pub cfg: ConfigSink,
    t_sq_ctx: TableId<{ table::SQ_CTX }>,
    // Message records from the requester.
    pub msg_valid: Signal<In, Bit>,
    pub msg_ready: Signal<Out, Bit>,
    pub msg_qp: Signal<In, Bits<8>>,
    pub msg_wr_id: Signal<In, Bits<64>>,
    pub msg_opcode: Signal<In, Bits<8>>,
    pub msg_len: Signal<In, Bits<32>>,
    pub msg_sq_index: Signal<In, Bits<32>>,
    pub msg_signaled: Signal<In, Bit>,
    /// Unused (the list is in PSN order; only the last PSN decides).
    pub msg_first_psn: Signal<In, Bits<24>>,
    pub msg_last_psn: Signal<In, Bits<24>>,
    // Error records from the requester (rejected descriptors / doorbells).
    pub req_err_valid: Signal<In, Bit>,
    pub req_err_ready: Signal<Out, Bit>,
    pub req_err_qp: Signal<In, Bits<8>>,
    pub req_err_status: Signal<In, Bits<8>>,
    pub req_err_opcode: Signal<In, Bits<8>>,
    pub req_err_wr_id: Signal<In, Bits<64>>,
    pub req_err_sq_index: Signal<In, Bits<32>>,
    pub req_err_len: Signal<In, Bits<32>>,
    // Cumulative acknowledgements from the retransmit engine.
    pub ack_valid: Signal<In, Bit>,
    pub ack_ready: Signal<Out, Bit>,
    pub ack_qp: Signal<In, Bits<8>>,
    pub ack_una: Signal<In, Bits<24>>,
    // QP error (the retransmit engine's err_*): retry budget spent or a
    // remote-access NACK, `rtx_err_reason` (`hw::retransmit::ErrReason`).
    pub rtx_err_valid: Signal<In, Bit>,
    pub rtx_err_ready: Signal<Out, Bit>,
    pub rtx_err_qp: Signal<In, Bits<8>>,
    pub rtx_err_psn: Signal<In, Bits<24>>,
    pub rtx_err_reason: Signal<In, Bits<ERR_REASON_BITS>>,
    // CQEs for the ring writer.
    pub cqe_valid: Signal<Out, Bit>,
    pub cqe_ready: Signal<In, Bit>,
    pub cqe_ring: Signal<Out, Bits<8>>,
    pub cqe_entry: Signal<Out, Bits<256>>,
    // Counter pulses.
    /// A push (message or error record) found its QP's list full and waits.
    pub cnt_list_full: Signal<Out, Bit>,
    /// An acknowledgement for a QP in error: dropped.
    pub cnt_ack_dropped: Signal<Out, Bit>,
    /// A QP-error report for a QP already in error: dropped.
    pub cnt_err_dropped: Signal<Out, Bit>,
    /// A CQE with a status other than success left.
    pub cnt_cqe_error: Signal<Out, Bit>,
    // Storage.
    /// List entries, address {qp, slot}: [63:0] wr_id, [95:64] length,
    /// [127:96] sq_index, [151:128] last PSN, [159:152] SQE opcode,
    /// [160] signaled, [163:161] status already known (0: a message
    /// waiting for its acknowledgement; 1-4: a requester error record).
    entry_ram: RAM<Bits<164>, ENTRY_ADDR_BITS>,
    /// Per QP: head, tail (full = tail - head = `LIST_DEPTH`), in error,
    /// una (last acknowledged, start_psn after config).
    ptr_ram: RAM<ListPtrWord, 8>,
    /// Per QP: the completion ring (cq_index, low 8 bits).
    ring_ram: RAM<Bits<8>, 8>,
    // Engine.
    state: DFF<SeqState>,
    kind: DFF<RecordKind>,
    qp: DFF<Bits<8>>,
    head: DFF<Bits<LIST_PTR_BITS>>,
    tail: DFF<Bits<LIST_PTR_BITS>>,
    qerr: DFF<Bit>,
    una: DFF<Bits<24>>,
    ring: DFF<Bits<8>>,
    in_una: DFF<Bits<24>>,
    fail_psn: DFF<Bits<24>>,
    /// The failed message's completion (`fail_status`) is still to be
    /// given in this walk.
    fail_pending: DFF<Bit>,
    /// RETRY_EXCEEDED or REMOTE_ACCESS, from the report's reason.
    fail_status: DFF<Bits<8>>,
    /// A send-context row of the QP in service came after its row was
    /// read: the row's reset stands, so the walk stops and nothing is
    /// written back (the registers hold the QP as it was before).
    reset_seen: DFF<Bit>,
    // Named values (localparams): the report's reason, the CQE statuses.
    k_err_remote: Param<ERR_REASON_BITS, { err_reason::REMOTE_ACCESS }>,
    s_flushed: Param<8, { CqStatus::Flushed as u64 }>,
    s_retry_exceeded: Param<8, { CqStatus::RetryExceeded as u64 }>,
    s_remote_access: Param<8, { CqStatus::RemoteAccess as u64 }>,
    /// Entries per list (a full list's occupancy), and the slot's width
    /// (the QP's shift in an entry address).
    p_depth: Param<LIST_PTR_BITS, { LIST_DEPTH as u64 }>,
    p_list_log2: Param<4, { LIST_LOG2 as u64 }>,
    // CQE output register.
    c_valid: DFF<Bit>,
    c_ring: DFF<Bits<8>>,
    c_entry: DFF<Bits<256>>,
    // Counter pulses (registered).
    k_list_full: DFF<Bit>,
    k_ack_dropped: DFF<Bit>,
    k_err_dropped: DFF<Bit>,
    k_cqe_error: DFF<Bit>,
    // Combinational locals.
    cfg_hit: Signal<Local, Bit>,
    /// The row's QP (the low 8 bits of its index).
    cfg_qp: Signal<Local, Bits<8>>,
    /// `cfg_hit` for the QP in service.
    cfg_here: Signal<Local, Bit>,
    cqe_free: Signal<Local, Bit>,
    p_head: Signal<Local, Bits<LIST_PTR_BITS>>,
    p_tail: Signal<Local, Bits<LIST_PTR_BITS>>,
    p_used: Signal<Local, Bits<LIST_PTR_BITS>>,
    /// The entry slots read (the head, or the one after it in a pop)
    /// and written (the tail), narrowed to their width before they enter
    /// an address (an inline `head + 1` would carry into the QP).
    rd_slot: Signal<Local, Bits<LIST_LOG2>>,
    head_next: Signal<Local, Bits<LIST_PTR_BITS>>,
    wr_slot: Signal<Local, Bits<LIST_LOG2>>,
    p_full: Signal<Local, Bit>,
    p_empty: Signal<Local, Bit>,
    e_last: Signal<Local, Bits<24>>,
    e_pre: Signal<Local, Bits<3>>,
    e_signaled: Signal<Local, Bit>,
    una_diff: Signal<Local, Bits<24>>,
    fail_diff: Signal<Local, Bits<24>>,
    e_due: Signal<Local, Bit>,
    e_fail_after: Signal<Local, Bit>,
    /// The head entry is the failed message (it gets `fail_status`).
    e_failed: Signal<Local, Bit>,
    e_pop: Signal<Local, Bit>,
    e_status: Signal<Local, Bits<8>>,
    e_emit: Signal<Local, Bit>,
    msg_entry: Signal<Local, Bits<164>>,
    err_entry: Signal<Local, Bits<164>>,
    err_opcode: Signal<Local, Bits<8>>,
    /// The row written (`wb_now`): the RAM's as the record changes it in
    /// `Check`, the registers' in a walk.
    ptr_wb: Signal<Local, ListPtrWord>,
    /// Ask to write the row in this cycle (made only in a cycle without a
    /// config write and with no reset since the row was read).
    wb_now: Signal<Local, Bit>,
    /// The record ends in this cycle: `Idle` next, or `WriteBack` when a
    /// config write kept the row's write out of the port.
    wb_end: Signal<Local, Bit>,
    /// A record waits; the one `Idle` takes (by priority) and its QP.
    take_any: Signal<Local, Bit>,
    take_kind: Signal<Local, RecordKind>,
    take_qp: Signal<Local, Bits<8>>,
    /// The row's una against a message's last PSN (`Check`).
    msg_diff: Signal<Local, Bits<24>>,
    /// The row's una is serially after the message's last PSN: it is due
    /// as it arrives.
    msg_due: Signal<Local, Bit>,
    signaled_bit: Signal<Local, Bits<1>>,
}

impl Logic for SendCompletions {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            kind,
            qp,
            head,
            tail,
            qerr,
            una,
            ring,
            in_una,
            fail_psn,
            fail_pending,
            fail_status,
            reset_seen,
            c_valid,
            c_ring,
            c_entry,
            k_list_full,
            k_ack_dropped,
            k_err_dropped,
            k_cqe_error
        );
        self.entry_ram.read_clock.next = self.clock.val();
        self.entry_ram.write_clock.next = self.clock.val();
        self.ptr_ram.read_clock.next = self.clock.val();
        self.ptr_ram.write_clock.next = self.clock.val();
        self.ring_ram.read_clock.next = self.clock.val();
        self.ring_ram.write_clock.next = self.clock.val();

        // Send-context rows, QP < 256: the ring is cq_index (low 8 bits
        // used), the list is emptied, the error cleared and una set to
        // start_psn.
        self.cfg_hit.next = self.cfg.valid.val()
            & (self.cfg.table.val() == self.t_sq_ctx.val())
            & (self.cfg.index.val().get_bits::<8>(8) == 0);
        self.cfg_qp.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.cfg_here.next = self.cfg_hit.val() & (self.cfg_qp.val() == self.qp.q.val());
        self.ring_ram.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.ring_ram.write_data.next = bit_cast::<8, 16>(self.cfg.data.val().get_value_sq_ctx_cq_index());
        self.ring_ram.write_enable.next = self.cfg_hit.val();

        self.signaled_bit.next = 0.into();
        if self.msg_signaled.val() {
            self.signaled_bit.next = 1.into();
        }
        // The per-QP row written back: the registers' (a walk's), unless a
        // state sets it; written where `wb_now` is set, in a cycle without
        // a config write (which owns the port: then `WriteBack` waits for
        // one) and not over a reset row.
        self.ptr_wb.next.head = self.head.q.val();
        self.ptr_wb.next.tail = self.tail.q.val();
        self.ptr_wb.next.in_error = self.qerr.q.val();
        self.ptr_wb.next.una = self.una.q.val();
        self.wb_now.next = false;
        self.wb_end.next = false;
        self.ptr_ram.read_address.next = self.qp.q.val();
        self.ring_ram.read_address.next = self.qp.q.val();

        // List entries as written by a push.
        self.msg_entry.next = bit_cast::<164, 64>(self.msg_wr_id.val())
            | (bit_cast::<164, 32>(self.msg_len.val()) << 64)
            | (bit_cast::<164, 32>(self.msg_sq_index.val()) << 96)
            | (bit_cast::<164, 24>(self.msg_last_psn.val()) << 128)
            | (bit_cast::<164, 8>(self.msg_opcode.val()) << 152)
            | (bit_cast::<164, 1>(self.signaled_bit.val()) << 160);
        // A BAD_OPCODE record's opcode byte is not an SQE opcode the CQE
        // layout can carry (1 or 2): the CQE says 0 (none).
        self.err_opcode.next = self.req_err_opcode.val();
        if self.req_err_status.val() == 1 {
            self.err_opcode.next = 0.into();
        }
        self.err_entry.next = bit_cast::<164, 64>(self.req_err_wr_id.val())
            | (bit_cast::<164, 32>(self.req_err_len.val()) << 64)
            | (bit_cast::<164, 32>(self.req_err_sq_index.val()) << 96)
            | (bit_cast::<164, 8>(self.err_opcode.val()) << 152)
            | (bit_cast::<164, 3>(bit_cast::<3, 8>(self.req_err_status.val())) << 161);
        self.entry_ram.write_data.next = self.msg_entry.val();
        self.entry_ram.write_enable.next = false;
        self.rd_slot.next = bit_cast::<LIST_LOG2, LIST_PTR_BITS>(self.head.q.val());
        self.head_next.next = self.head.q.val() + 1;

        // The row just read (valid in `Check`).
        self.p_head.next = self.ptr_ram.read_data.val().head;
        self.p_tail.next = self.ptr_ram.read_data.val().tail;
        // The occupancy goes through a signal of the pointers' width before
        // the compare: in the emitted Verilog `(tail - head) == 32'h10` was
        // evaluated at 32 bits, so a tail that had wrapped past the head's
        // range (tail 1, head 17 of 5-bit pointers) gave -16, not 16, and a
        // full list took a 17th push over its head entry.
        self.p_used.next = self.p_tail.val() - self.p_head.val();
        self.p_full.next = self.p_used.val() == self.p_depth.val();
        self.p_empty.next = self.p_tail.val() == self.p_head.val();
        self.wr_slot.next = bit_cast::<LIST_LOG2, LIST_PTR_BITS>(self.p_tail.val());
        self.entry_ram.write_address.next = (bit_cast::<ENTRY_ADDR_BITS, 8>(self.qp.q.val()) << self.p_list_log2.val())
            | bit_cast::<ENTRY_ADDR_BITS, LIST_LOG2>(self.wr_slot.val());
        // A message appended to an empty list is due at once when the
        // row's una is already serially after its last PSN (its
        // acknowledgement came first): only then, or in error, is it walked.
        self.msg_diff.next = self.ptr_ram.read_data.val().una - self.msg_last_psn.val();
        self.msg_due.next = (self.msg_diff.val() != 0) & !self.msg_diff.val().get_bit(23);

        // The head entry (valid in `Walk`) and its fate.
        self.e_last.next = self.entry_ram.read_data.val().get_bits::<24>(128);
        self.e_pre.next = self.entry_ram.read_data.val().get_bits::<3>(161);
        self.e_signaled.next = self.entry_ram.read_data.val().get_bit(160);
        // una serially after the last PSN: 0 < una - last < 2^23.
        self.una_diff.next = self.una.q.val() - self.e_last.val();
        self.e_due.next = (self.una_diff.val() != 0) & !self.una_diff.val().get_bit(23);
        // The failed PSN after the last PSN: the failure is a later message.
        self.fail_diff.next = self.fail_psn.q.val() - self.e_last.val();
        self.e_fail_after.next = (self.fail_diff.val() != 0) & !self.fail_diff.val().get_bit(23);
        self.e_pop.next = (self.e_pre.val() != 0) | self.qerr.q.val() | self.e_due.val();
        self.e_failed.next =
            (self.e_pre.val() == 0) & self.qerr.q.val() & self.fail_pending.q.val() & !self.e_fail_after.val();
        self.e_status.next = 0.into();
        if self.e_pre.val() != 0 {
            self.e_status.next = bit_cast::<8, 3>(self.e_pre.val());
        } else if self.e_failed.val() {
            self.e_status.next = self.fail_status.q.val();
        } else if self.qerr.q.val() {
            self.e_status.next = self.s_flushed.val();
        }
        self.e_emit.next = self.e_pop.val() & ((self.e_status.val() != 0) | self.e_signaled.val());

        // CQE register: free when empty or being taken.
        self.cqe_free.next = !self.c_valid.q.val() | self.cqe_ready.val();
        if self.cqe_ready.val() {
            self.c_valid.d.next = false;
        }
        self.msg_ready.next = false;
        self.req_err_ready.next = false;
        self.ack_ready.next = false;
        self.rtx_err_ready.next = false;
        self.k_list_full.d.next = false;
        self.k_ack_dropped.d.next = false;
        self.k_err_dropped.d.next = false;
        self.k_cqe_error.d.next = false;

        // A send-context row for the QP in service, after its row was read.
        if self.cfg_here.val() {
            self.reset_seen.d.next = true;
        }
        // The record `Idle` takes, by priority (see there), and its QP.
        self.take_kind.next = RecordKind::ReqErr;
        self.take_qp.next = self.req_err_qp.val();
        if self.msg_valid.val() {
            self.take_kind.next = RecordKind::Msg;
            self.take_qp.next = self.msg_qp.val();
        }
        if self.ack_valid.val() {
            self.take_kind.next = RecordKind::Ack;
            self.take_qp.next = self.ack_qp.val();
        }
        if self.rtx_err_valid.val() {
            self.take_kind.next = RecordKind::RtxErr;
            self.take_qp.next = self.rtx_err_qp.val();
        }
        self.take_any.next =
            self.rtx_err_valid.val() | self.ack_valid.val() | self.msg_valid.val() | self.req_err_valid.val();
        match self.state.q.val() {
            SeqState::Idle => {
                // QP errors, then acks, then message records, then
                // requester errors (only while no message record waits: the
                // requester holds a message record, then goes on, so a
                // waiting one is older than an error record). A record taken
                // in the cycle of its QP's row reads the row the row
                // replaces: it is `reset_seen` from the start. (Not taking
                // records in a row's cycle would put the config bus's
                // compares ahead of `ack_ready`, which the core's CC gate
                // and requester take in the same cycle.)
                self.reset_seen.d.next = false;
                if self.take_any.val() {
                    self.kind.d.next = self.take_kind.val();
                    self.qp.d.next = self.take_qp.val();
                    self.reset_seen.d.next = self.cfg_hit.val() & (self.cfg_qp.val() == self.take_qp.val());
                    self.ptr_ram.read_address.next = self.take_qp.val();
                    self.ring_ram.read_address.next = self.take_qp.val();
                    self.state.d.next = SeqState::Check;
                }
                // Taken here: a QP error and an acknowledgement; a message
                // record or a requester error record is taken in `Check`,
                // once its list is known not to be full.
                if self.rtx_err_valid.val() {
                    self.rtx_err_ready.next = true;
                    self.fail_psn.d.next = self.rtx_err_psn.val();
                    self.fail_status.d.next = self.s_retry_exceeded.val();
                    if self.rtx_err_reason.val() == self.k_err_remote.val() {
                        self.fail_status.d.next = self.s_remote_access.val();
                    }
                } else if self.ack_valid.val() {
                    self.ack_ready.next = true;
                    self.in_una.d.next = self.ack_una.val();
                }
            }
            SeqState::Check => {
                // The QP's row is here: registered for the walk; a record
                // that changes the row writes it back now (a walk that
                // follows writes it again as it goes), and one that leaves
                // nothing to walk ends here.
                self.head.d.next = self.p_head.val();
                self.tail.d.next = self.p_tail.val();
                self.qerr.d.next = self.ptr_ram.read_data.val().in_error;
                self.una.d.next = self.ptr_ram.read_data.val().una;
                self.ring.d.next = self.ring_ram.read_data.val();
                self.fail_pending.d.next = false;
                self.ptr_wb.next = self.ptr_ram.read_data.val();
                self.rd_slot.next = bit_cast::<LIST_LOG2, LIST_PTR_BITS>(self.p_head.val());
                match self.kind.q.val() {
                    RecordKind::Msg => {
                        if self.p_full.val() {
                            self.k_list_full.d.next = true;
                            self.state.d.next = SeqState::Idle;
                        } else {
                            // Append. The list is walked only if it was
                            // empty and the message is already due (or the
                            // QP is in error): a non-empty list's head is
                            // older and was not due at the last walk.
                            self.msg_ready.next = true;
                            self.entry_ram.write_enable.next = true;
                            self.tail.d.next = self.p_tail.val() + 1;
                            self.ptr_wb.next.tail = self.p_tail.val() + 1;
                            self.wb_now.next = true;
                            if self.p_empty.val() & (self.msg_due.val() | self.ptr_ram.read_data.val().in_error) {
                                self.state.d.next = SeqState::WalkRead;
                            } else {
                                self.wb_end.next = true;
                            }
                        }
                    }
                    RecordKind::ReqErr => {
                        if self.p_full.val() {
                            self.k_list_full.d.next = true;
                            self.state.d.next = SeqState::Idle;
                        } else {
                            // An error entry completes as soon as it is the
                            // head.
                            self.req_err_ready.next = true;
                            self.entry_ram.write_data.next = self.err_entry.val();
                            self.entry_ram.write_enable.next = true;
                            self.tail.d.next = self.p_tail.val() + 1;
                            self.ptr_wb.next.tail = self.p_tail.val() + 1;
                            self.wb_now.next = true;
                            self.state.d.next = SeqState::WalkRead;
                        }
                    }
                    RecordKind::Ack => {
                        if self.ptr_ram.read_data.val().in_error {
                            self.k_ack_dropped.d.next = true;
                            self.state.d.next = SeqState::Idle;
                        } else {
                            self.una.d.next = self.in_una.q.val();
                            self.ptr_wb.next.una = self.in_una.q.val();
                            self.wb_now.next = true;
                            if self.p_empty.val() {
                                self.wb_end.next = true;
                            } else {
                                self.state.d.next = SeqState::Walk;
                            }
                        }
                    }
                    RecordKind::RtxErr => {
                        if self.ptr_ram.read_data.val().in_error {
                            self.k_err_dropped.d.next = true;
                            self.state.d.next = SeqState::Idle;
                        } else {
                            // QP error: the QP goes to error, the list is
                            // flushed.
                            self.qerr.d.next = true;
                            self.fail_pending.d.next = true;
                            self.ptr_wb.next.in_error = true;
                            self.wb_now.next = true;
                            if self.p_empty.val() {
                                self.wb_end.next = true;
                            } else {
                                self.state.d.next = SeqState::Walk;
                            }
                        }
                    }
                }
            }
            SeqState::WalkRead => {
                // The head entry is being read (address from head). A reset
                // QP's list is empty: the walk stops.
                self.wb_now.next = true;
                if (self.head.q.val() == self.tail.q.val()) | self.reset_seen.q.val() {
                    self.wb_end.next = true;
                } else {
                    self.state.d.next = SeqState::Walk;
                }
            }
            SeqState::Walk => {
                // The row as the walk left it so far is written in every
                // cycle that can (so the cycle that stops needs no decision
                // of its own to write), and the next entry's read is
                // presented whenever the head is to be popped (so the read
                // address does not wait for the CQE register). A config
                // write, which owns the row's port, or a pop that waits for
                // the CQE register, reads the head again (`WalkRead`).
                if self.cfg_hit.val() {
                    self.state.d.next = SeqState::WalkRead;
                } else {
                    self.wb_now.next = true;
                    if !self.e_pop.val() | self.reset_seen.q.val() {
                        self.state.d.next = SeqState::Idle;
                    } else if self.e_emit.val() & !self.cqe_free.val() {
                        self.state.d.next = SeqState::WalkRead;
                    } else {
                        if self.e_emit.val() {
                            self.c_valid.d.next = true;
                            self.c_ring.d.next = self.ring.q.val();
                            // A CQE; phase, imm and has_imm 0 (the ring
                            // writer sets the phase).
                            self.c_entry.d.next = 0.into();
                            self.c_entry.d.next.set_value_cqe_status(self.e_status.val());
                            self.c_entry
                                .d
                                .next
                                .set_value_cqe_opcode(self.entry_ram.read_data.val().get_bits::<8>(152));
                            self.c_entry.d.next.set_value_cqe_qp(bit_cast::<24, 8>(self.qp.q.val()));
                            self.c_entry
                                .d
                                .next
                                .set_value_cqe_wr_id(self.entry_ram.read_data.val().get_bits::<64>(0));
                            self.c_entry
                                .d
                                .next
                                .set_value_cqe_byte_len(self.entry_ram.read_data.val().get_bits::<32>(64));
                            self.c_entry
                                .d
                                .next
                                .set_value_cqe_sq_index(self.entry_ram.read_data.val().get_bits::<32>(96));
                            self.k_cqe_error.d.next = self.e_status.val() != 0;
                        }
                        if self.e_failed.val() {
                            self.fail_pending.d.next = false;
                        }
                        // The pop that empties the list leaves the row's
                        // last write (the new head) to `WriteBack`.
                        self.head.d.next = self.head_next.val();
                        if self.head_next.val() == self.tail.q.val() {
                            self.state.d.next = SeqState::WriteBack;
                        }
                    }
                }
                // The next entry's read, evaluated here in the next cycle
                // when the head is popped.
                if self.e_pop.val() {
                    self.rd_slot.next = bit_cast::<LIST_LOG2, LIST_PTR_BITS>(self.head_next.val());
                }
            }
            SeqState::WriteBack => {
                self.wb_now.next = true;
                self.wb_end.next = true;
            }
        }
        // The row is written where `wb_now` asks, unless a config write
        // owns the port in this cycle or has reset the row since it was
        // read (`reset_seen`: the registers hold the QP as it was before).
        // Where the record ends (`wb_end`), a write the config write
        // pushed out is made in `WriteBack`.
        self.ptr_ram.write_enable.next = self.wb_now.val() & !self.cfg_hit.val() & !self.reset_seen.q.val();
        if self.wb_end.val() {
            if self.cfg_hit.val() & !self.reset_seen.q.val() {
                self.state.d.next = SeqState::WriteBack;
            } else {
                self.state.d.next = SeqState::Idle;
            }
        }
        self.ptr_ram.write_address.next = self.qp.q.val();
        self.ptr_ram.write_data.next = self.ptr_wb.val();
        // Send-context rows, QP < 256: the list is emptied, the error
        // cleared and una set to start_psn (the port is the config's in
        // its cycle).
        if self.cfg_hit.val() {
            self.ptr_ram.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
            self.ptr_ram.write_data.next.head = 0.into();
            self.ptr_ram.write_data.next.tail = 0.into();
            self.ptr_ram.write_data.next.in_error = false;
            self.ptr_ram.write_data.next.una = self.cfg.data.val().get_value_sq_ctx_start_psn();
            self.ptr_ram.write_enable.next = true;
        }
        // The entry read: {QP, slot} (the head's, or the next one's after
        // a pop).
        self.entry_ram.read_address.next = (bit_cast::<ENTRY_ADDR_BITS, 8>(self.qp.q.val()) << self.p_list_log2.val())
            | bit_cast::<ENTRY_ADDR_BITS, LIST_LOG2>(self.rd_slot.val());

        self.cqe_valid.next = self.c_valid.q.val();
        self.cqe_ring.next = self.c_ring.q.val();
        self.cqe_entry.next = self.c_entry.q.val();
        self.cnt_list_full.next = self.k_list_full.q.val();
        self.cnt_ack_dropped.next = self.k_ack_dropped.q.val();
        self.cnt_err_dropped.next = self.k_err_dropped.q.val();
        self.cnt_cqe_error.next = self.k_cqe_error.q.val();
    }
}

#[cfg(test)]
mod tests {
    use contract::layout::CqStatus;

    /// The `#[hdl_gen]` body compares statuses with literals (it takes no
    /// const paths): they must stay those of `contract::layout`.
    #[test]
    fn status_literals_match_layout() {
        assert_eq!(
            CqStatus::BadDoorbell as u8,
            4,
            "requester statuses fit the entry's 3 bits"
        );
    }
}
