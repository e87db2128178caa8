//! Retransmit engine: the requester's reliability state per QP (the record
//! of every outstanding PSN in block RAM), fed by "sent" records from the
//! requester and by SACK / NACK records from the RX parser, implementing
//! the loss rules of `proto::model::mrc` (docs/model-mrc.md 2.4-2.8):
//! cumulative + bitmap acknowledgement, per-EV reorder-allowance loss
//! inference (Karn), the stall rule across EVs, the tail check, trim
//! NACKs (resend at once), out-of-window NACKs (resend once `una`
//! advances or the RTO fires), and the RTO with the model's
//! linear/exponential backoff and retry budget. See
//! `docs/hw/retransmit.md`.
//!
//! One record is processed at a time by a state machine that walks the
//! QP's outstanding PSNs (`una .. next`) in the slot RAM: a SACK costs
//! 2 cycles per outstanding PSN for the acknowledgement pass and 3 per
//! PSN for the loss pass, an RTO firing 4 per PSN, an acting tail check 1
//! per PSN. The RTO and tail deadlines are checked by a scanner that
//! visits one QP per 2 idle cycles (QPs `0..=qp_last`).

use rust_hdl::prelude::*;

/// log2 of the number of QPs.
pub const QP_BITS: usize = 8;
/// log2 of the send window (PSN slots per QP).
pub const SLOT_BITS: usize = 8;
/// The send window in PSNs.
pub const WINDOW: u32 = 1 << SLOT_BITS;
/// EV index width.
pub const EV_BITS: usize = 7;
/// Slot RAM address `{qp, psn mod WINDOW}`.
pub const SLOT_ADDR_BITS: usize = QP_BITS + SLOT_BITS;
/// Per-(QP, EV) RAM address `{qp, ev}`.
pub const EV_ADDR_BITS: usize = QP_BITS + EV_BITS;
/// `retry_exp` value meaning "retry forever" (as the model).
pub const RETRY_INFINITE: u64 = 25;

/// Record kinds on `op_kind`.
pub mod kind {
    /// Start the QP: `una = next = op_psn`, clear its EV state and error.
    pub const INIT: u64 = 0;
    /// A packet left: `op_psn`, `op_ev`, `op_time` (send time), `op_len`.
    pub const SENT: u64 = 1;
    /// SACK: cumulative `op_psn`, `op_base`, `op_bitmap` (bit i = base + i).
    pub const SACK: u64 = 2;
    /// Trim NACK for `op_psn`, `op_time` = echoed tx timestamp.
    pub const NACK_TRIM: u64 = 3;
    /// Out-of-window NACK for `op_psn`, `op_time` = echoed tx timestamp.
    pub const NACK_OOW: u64 = 4;
}

/// Reasons on `rtx_reason`.
pub mod reason {
    pub const LOSS: u64 = 0;
    pub const TRIM: u64 = 1;
    pub const TIMEOUT: u64 = 2;
    pub const OUT_OF_WINDOW: u64 = 3;
}

/// Reasons on `mark_reason`.
pub mod mark_reason {
    pub const LOSS: u64 = 0;
    pub const STALL: u64 = 1;
    pub const TIMEOUT: u64 = 2;
}

/// The engine. Ports are described in `docs/hw/retransmit.md`.
#[derive(LogicBlock, Default)]
pub struct RetransmitEngine {
    pub clock: Signal<In, Clock>,
    /// Time now, ns (wrapping, serial comparisons).
    pub now: Signal<In, Bits<32>>,
    pub op_valid: Signal<In, Bit>,
    pub op_ready: Signal<Out, Bit>,
    pub op_kind: Signal<In, Bits<3>>,
    pub op_qp: Signal<In, Bits<8>>,
    pub op_psn: Signal<In, Bits<24>>,
    pub op_ev: Signal<In, Bits<7>>,
    pub op_time: Signal<In, Bits<32>>,
    pub op_len: Signal<In, Bits<16>>,
    pub op_base: Signal<In, Bits<24>>,
    pub op_bitmap: Signal<In, Bits<64>>,
    pub cfg_valid: Signal<In, Bit>,
    pub cfg_table: Signal<In, Bits<4>>,
    pub cfg_index: Signal<In, Bits<16>>,
    pub cfg_data: Signal<In, Bits<256>>,
    pub rtx_valid: Signal<Out, Bit>,
    pub rtx_ready: Signal<In, Bit>,
    pub rtx_qp: Signal<Out, Bits<8>>,
    pub rtx_psn: Signal<Out, Bits<24>>,
    pub rtx_ev: Signal<Out, Bits<7>>,
    pub rtx_len: Signal<Out, Bits<16>>,
    pub rtx_reason: Signal<Out, Bits<2>>,
    pub mark_valid: Signal<Out, Bit>,
    pub mark_ready: Signal<In, Bit>,
    pub mark_qp: Signal<Out, Bits<8>>,
    pub mark_ev: Signal<Out, Bits<7>>,
    pub mark_reason: Signal<Out, Bits<2>>,
    pub ack_valid: Signal<Out, Bit>,
    pub ack_ready: Signal<In, Bit>,
    pub ack_qp: Signal<Out, Bits<8>>,
    pub ack_una: Signal<Out, Bits<24>>,
    pub ack_bytes: Signal<Out, Bits<32>>,
    pub rto_valid: Signal<Out, Bit>,
    pub rto_ready: Signal<In, Bit>,
    pub rto_qp: Signal<Out, Bits<8>>,
    pub err_valid: Signal<Out, Bit>,
    pub err_ready: Signal<In, Bit>,
    pub err_qp: Signal<Out, Bits<8>>,
    pub err_psn: Signal<Out, Bits<24>>,
    /// SACK acknowledging a PSN never sent (dropped).
    pub cnt_ack_unsent: Signal<Out, Bit>,
    /// Record dropped: SENT outside the window, NACK for an unsent PSN,
    /// unknown kind, or any record but INIT for a QP in error.
    pub cnt_drop: Signal<Out, Bit>,
    /// NACK about an older copy, an acknowledged or already queued PSN.
    pub cnt_stale_nack: Signal<Out, Bit>,
    /// A record or an RTO walk is in progress (for the top and tests).
    pub busy: Signal<Out, Bit>,
    // Memories.
    slot_ram: RAM<Bits<88>, 16>,
    ev_ram: RAM<Bits<33>, 15>,
    qs_ram: RAM<Bits<128>, 8>,
    cfg_ram: RAM<Bits<120>, 8>,
    // Tail check per QP: deadline 32, armed, blind count 2, acked-since.
    tail_ram: RAM<Bits<36>, 8>,
    // State machine.
    st: DFF<Bits<5>>,
    due_r: DFF<Bit>,
    /// Registered backoff shift amount (see the backoff unit).
    bok: DFF<Bits<5>>,
    /// The backoff value of `bok`, registered every cycle (see the backoff
    /// unit): users read it two cycles after setting `bok`.
    bo_r: DFF<Bits<32>>,
    /// The SACK's `next - base`, registered in LOAD for the validation.
    nb_off_r: DFF<Bits<24>>,
    /// Walk decisions registered a cycle ahead (every cycle, from the
    /// slot on the RAM output; the walk states that use them hold the
    /// same slot for at least two cycles).
    acked_r: DFF<Bit>,
    lost_stall_r: DFF<Bit>,
    /// The per-EV rule, registered in L3a from the EV RAM output (which
    /// comes through the cascade's output muxes) for the decision in L3.
    lost_reorder_r: DFF<Bit>,
    /// The slot's per-EV sequence, registered for the loss decision (the
    /// slot RAM's read data comes through the cascade's output muxes).
    s_seq_r: DFF<Bits<16>>,
    /// The tail check's line `now - stall_age`, taken once when the check
    /// starts (the model checks every PSN at one instant).
    tail_thr: DFF<Bits<32>>,
    spent_r: DFF<Bit>,
    dlp_r: DFF<Bits<32>>,
    scan_qp: DFF<Bits<8>>,
    /// The last QP the scanner visits, stored inverted so that the reset
    /// value (0) means 255: every QP is scanned until configured.
    qp_last_n: DFF<Bits<8>>,
    is_timer: DFF<Bit>,
    // The record being processed.
    kind: DFF<Bits<3>>,
    qp: DFF<Bits<8>>,
    psn: DFF<Bits<24>>,
    ev: DFF<Bits<7>>,
    t_op: DFF<Bits<32>>,
    len: DFF<Bits<16>>,
    base: DFF<Bits<24>>,
    bitmap: DFF<Bits<64>>,
    // The QP's state while it is processed.
    una: DFF<Bits<24>>,
    nxt: DFF<Bits<24>>,
    hw: DFF<Bits<32>>,
    hwv: DFF<Bits<1>>,
    dl: DFF<Bits<32>>,
    armed: DFF<Bits<1>>,
    err: DFF<Bits<1>>,
    tdl: DFF<Bits<32>>,
    tarm: DFF<Bits<1>>,
    tblind: DFF<Bits<2>>,
    tack: DFF<Bits<1>>,
    // Walk state.
    p: DFF<Bits<24>>,
    cur_ev: DFF<Bits<7>>,
    found: DFF<Bit>,
    una_new: DFF<Bits<24>>,
    una_time: DFF<Bits<32>>,
    una_ret: DFF<Bits<5>>,
    bytes: DFF<Bits<32>>,
    fired: DFF<Bit>,
    have_rem: DFF<Bit>,
    min_rem: DFF<Bits<32>>,
    clr: DFF<Bits<7>>,
    // Output registers.
    o_rtx_v: DFF<Bit>,
    o_rtx_qp: DFF<Bits<8>>,
    o_rtx_psn: DFF<Bits<24>>,
    o_rtx_ev: DFF<Bits<7>>,
    o_rtx_len: DFF<Bits<16>>,
    o_rtx_reason: DFF<Bits<2>>,
    o_mark_v: DFF<Bit>,
    o_mark_qp: DFF<Bits<8>>,
    o_mark_ev: DFF<Bits<7>>,
    o_mark_reason: DFF<Bits<2>>,
    o_ack_v: DFF<Bit>,
    o_ack_qp: DFF<Bits<8>>,
    o_ack_una: DFF<Bits<24>>,
    o_ack_bytes: DFF<Bits<32>>,
    o_rto_v: DFF<Bit>,
    o_rto_qp: DFF<Bits<8>>,
    o_err_v: DFF<Bit>,
    o_err_qp: DFF<Bits<8>>,
    o_err_psn: DFF<Bits<24>>,
    o_cnt_unsent: DFF<Bit>,
    o_cnt_drop: DFF<Bit>,
    o_cnt_stale: DFF<Bit>,
    // Slot fields as read.
    s_ev: Signal<Local, Bits<7>>,
    s_seq: Signal<Local, Bits<16>>,
    s_time: Signal<Local, Bits<32>>,
    s_len: Signal<Local, Bits<16>>,
    s_ret: Signal<Local, Bits<5>>,
    s_flags: Signal<Local, Bits<4>>,
    // Slot fields to write (default: as read).
    w_ev: Signal<Local, Bits<7>>,
    w_seq: Signal<Local, Bits<16>>,
    w_time: Signal<Local, Bits<32>>,
    w_len: Signal<Local, Bits<16>>,
    w_ret: Signal<Local, Bits<5>>,
    w_flags: Signal<Local, Bits<4>>,
    // Per-(QP, EV) fields: next send sequence, highest acknowledged
    // sequence and whether there is one.
    e_next: Signal<Local, Bits<16>>,
    e_max: Signal<Local, Bits<16>>,
    e_mv: Signal<Local, Bits<1>>,
    we_next: Signal<Local, Bits<16>>,
    we_max: Signal<Local, Bits<16>>,
    we_mv: Signal<Local, Bits<1>>,
    // Per-QP config.
    c_rto: Signal<Local, Bits<32>>,
    c_allow: Signal<Local, Bits<32>>,
    c_reorder: Signal<Local, Bits<16>>,
    c_lin: Signal<Local, Bits<5>>,
    c_exp: Signal<Local, Bits<5>>,
    // Backoff unit: bo_k timeouts so far -> bo_val.
    bo_k: Signal<Local, Bits<5>>,
    bo_shift: Signal<Local, Bits<5>>,
    bo_shift_new: Signal<Local, Bits<5>>,
    bo_shift_una: Signal<Local, Bits<5>>,
    bm_beyond: Signal<Local, Bits<64>>,
    ones64: Signal<Local, Bits<64>>,
    bo_wide: Signal<Local, Bits<64>>,
    bo_val: Signal<Local, Bits<32>>,
    // Walk helpers.
    p_next: Signal<Local, Bits<24>>,
    acked_now: Signal<Local, Bit>,
    off_cum: Signal<Local, Bits<24>>,
    off_base: Signal<Local, Bits<24>>,
    reorder_gap: Signal<Local, Bits<16>>,
    stall_line: Signal<Local, Bits<32>>,
    live: Signal<Local, Bit>,
    lost_reorder: Signal<Local, Bit>,
    lost_stall: Signal<Local, Bit>,
    dl_p: Signal<Local, Bits<32>>,
    out_free: Signal<Local, Bit>,
    // SACK validation.
    bad_cum: Signal<Local, Bit>,
    bad_bits: Signal<Local, Bit>,
    nb_off: Signal<Local, Bits<24>>,
    // SENT classification.
    in_flight_n: Signal<Local, Bits<24>>,
    is_new: Signal<Local, Bit>,
    is_resend: Signal<Local, Bit>,
    // NACK classification.
    nack_unsent: Signal<Local, Bit>,
    nack_stale: Signal<Local, Bit>,
    due: Signal<Local, Bit>,
    retry_spent: Signal<Local, Bit>,
    go: Signal<Local, Bit>,
    bm_shift: Signal<Local, Bits<64>>,
    due_d: Signal<Local, Bits<32>>,
    cum_d: Signal<Local, Bits<24>>,
    nu_d: Signal<Local, Bits<24>>,
    ns_d: Signal<Local, Bits<24>>,
    tdue_d: Signal<Local, Bits<32>>,
    hw_d: Signal<Local, Bits<32>>,
    seq_d: Signal<Local, Bits<16>>,
    rem_d: Signal<Local, Bits<32>>,
    c_age: Signal<Local, Bits<32>>,
    tail_due_d: Signal<Local, Bits<32>>,
    tail_line: Signal<Local, Bits<32>>,
    lost_tail: Signal<Local, Bit>,
}

impl Logic for RetransmitEngine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            st,
            bok,
            bo_r,
            nb_off_r,
            acked_r,
            lost_stall_r,
            lost_reorder_r,
            s_seq_r,
            tail_thr,
            due_r,
            spent_r,
            dlp_r,
            tdl,
            tarm,
            tblind,
            tack,
            scan_qp,
            qp_last_n,
            is_timer,
            kind,
            qp,
            psn,
            ev,
            t_op,
            len,
            base,
            bitmap,
            una,
            nxt,
            hw,
            hwv,
            dl,
            armed,
            err,
            p,
            cur_ev,
            found,
            una_new,
            una_time,
            una_ret,
            bytes,
            fired,
            have_rem,
            min_rem,
            clr,
            o_rtx_v,
            o_rtx_qp,
            o_rtx_psn,
            o_rtx_ev,
            o_rtx_len,
            o_rtx_reason,
            o_mark_v,
            o_mark_qp,
            o_mark_ev,
            o_mark_reason,
            o_ack_v,
            o_ack_qp,
            o_ack_una,
            o_ack_bytes,
            o_rto_v,
            o_rto_qp,
            o_err_v,
            o_err_qp,
            o_err_psn,
            o_cnt_unsent,
            o_cnt_drop,
            o_cnt_stale
        );
        self.slot_ram.read_clock.next = self.clock.val();
        self.slot_ram.write_clock.next = self.clock.val();
        self.ev_ram.read_clock.next = self.clock.val();
        self.ev_ram.write_clock.next = self.clock.val();
        self.qs_ram.read_clock.next = self.clock.val();
        self.qs_ram.write_clock.next = self.clock.val();
        self.cfg_ram.read_clock.next = self.clock.val();
        self.cfg_ram.write_clock.next = self.clock.val();
        self.tail_ram.read_clock.next = self.clock.val();
        self.tail_ram.write_clock.next = self.clock.val();

        // Output handshakes: a register is freed when taken.
        if self.o_rtx_v.q.val() & self.rtx_ready.val() {
            self.o_rtx_v.d.next = false;
        }
        if self.o_mark_v.q.val() & self.mark_ready.val() {
            self.o_mark_v.d.next = false;
        }
        if self.o_ack_v.q.val() & self.ack_ready.val() {
            self.o_ack_v.d.next = false;
        }
        if self.o_rto_v.q.val() & self.rto_ready.val() {
            self.o_rto_v.d.next = false;
        }
        if self.o_err_v.q.val() & self.err_ready.val() {
            self.o_err_v.d.next = false;
        }
        self.o_cnt_unsent.d.next = false;
        self.o_cnt_drop.d.next = false;
        self.o_cnt_stale.d.next = false;
        // A lost packet needs both the retransmit and the mark register.
        self.out_free.next = !self.o_rtx_v.q.val() & !self.o_mark_v.q.val();

        // Config: per-QP rows to the config RAM, the global row to a register.
        self.cfg_ram.write_address.next = bit_cast::<8, 16>(self.cfg_index.val());
        self.cfg_ram.write_data.next = bit_cast::<120, 256>(self.cfg_data.val());
        self.cfg_ram.write_enable.next = self.cfg_valid.val() & (self.cfg_table.val() == 8);
        if self.cfg_valid.val() & (self.cfg_table.val() == 9) & (self.cfg_index.val() == 0) {
            self.qp_last_n.d.next = !bit_cast::<8, 256>(self.cfg_data.val());
        }
        self.cfg_ram.read_address.next = self.qp.q.val();
        self.c_rto.next = self.cfg_ram.read_data.val().get_bits::<32>(0);
        self.c_allow.next = self.cfg_ram.read_data.val().get_bits::<32>(32);
        self.c_reorder.next = self.cfg_ram.read_data.val().get_bits::<16>(64);
        self.c_lin.next = bit_cast::<5, 3>(self.cfg_ram.read_data.val().get_bits::<3>(80));
        self.c_exp.next = self.cfg_ram.read_data.val().get_bits::<5>(83);
        self.c_age.next = self.cfg_ram.read_data.val().get_bits::<32>(88);
        // Tail RAM: read with the QP state, written at STORE.
        self.tail_ram.read_address.next = self.qp.q.val();
        self.tail_ram.write_address.next = self.qp.q.val();
        self.tail_ram.write_data.next = bit_cast::<36, 32>(self.tdl.q.val())
            | (bit_cast::<36, 1>(self.tarm.q.val()) << 32)
            | (bit_cast::<36, 2>(self.tblind.q.val()) << 33)
            | (bit_cast::<36, 1>(self.tack.q.val()) << 35);
        self.tail_ram.write_enable.next = false;

        // Slot RAM: default read address {qp, p}; fields as read; write
        // data packed from w_* (default: unchanged).
        self.slot_ram.read_address.next =
            (bit_cast::<16, 8>(self.qp.q.val()) << 8) | bit_cast::<16, 24>(self.p.q.val() & 255);
        self.slot_ram.write_address.next =
            (bit_cast::<16, 8>(self.qp.q.val()) << 8) | bit_cast::<16, 24>(self.p.q.val() & 255);
        self.slot_ram.write_enable.next = false;
        self.s_ev.next = self.slot_ram.read_data.val().get_bits::<7>(0);
        self.s_seq.next = self.slot_ram.read_data.val().get_bits::<16>(8);
        self.s_time.next = self.slot_ram.read_data.val().get_bits::<32>(24);
        self.s_len.next = self.slot_ram.read_data.val().get_bits::<16>(56);
        self.s_ret.next = self.slot_ram.read_data.val().get_bits::<5>(72);
        self.s_flags.next = self.slot_ram.read_data.val().get_bits::<4>(80);
        self.w_ev.next = self.s_ev.val();
        self.w_seq.next = self.s_seq.val();
        self.w_time.next = self.s_time.val();
        self.w_len.next = self.s_len.val();
        self.w_ret.next = self.s_ret.val();
        self.w_flags.next = self.s_flags.val();

        // EV RAM: default read address {qp, cur_ev}.
        self.ev_ram.read_address.next =
            (bit_cast::<15, 8>(self.qp.q.val()) << 7) | bit_cast::<15, 7>(self.cur_ev.q.val());
        self.ev_ram.write_address.next =
            (bit_cast::<15, 8>(self.qp.q.val()) << 7) | bit_cast::<15, 7>(self.cur_ev.q.val());
        self.ev_ram.write_enable.next = false;
        self.e_next.next = self.ev_ram.read_data.val().get_bits::<16>(0);
        self.e_max.next = self.ev_ram.read_data.val().get_bits::<16>(16);
        self.e_mv.next = self.ev_ram.read_data.val().get_bits::<1>(32);
        self.we_next.next = self.e_next.val();
        self.we_max.next = self.e_max.val();
        self.we_mv.next = self.e_mv.val();

        // QP state RAM.
        self.qs_ram.read_address.next = self.qp.q.val();
        self.qs_ram.write_address.next = self.qp.q.val();
        self.qs_ram.write_data.next = bit_cast::<128, 24>(self.una.q.val())
            | (bit_cast::<128, 24>(self.nxt.q.val()) << 24)
            | (bit_cast::<128, 32>(self.hw.q.val()) << 48)
            | (bit_cast::<128, 1>(self.hwv.q.val()) << 80)
            | (bit_cast::<128, 32>(self.dl.q.val()) << 81)
            | (bit_cast::<128, 1>(self.armed.q.val()) << 113)
            | (bit_cast::<128, 1>(self.err.q.val()) << 114);
        self.qs_ram.write_enable.next = false;

        // Backoff: RTO for the first retry_linear timeouts, then RTO x
        // 2^min(k - linear + 1, 10); saturated at 2^31 - 1 ns (the serial
        // time comparisons need deadlines within half the 32-bit range).
        // SENT classification (in LOAD).
        self.in_flight_n.next =
            self.qs_ram.read_data.val().get_bits::<24>(24) - self.qs_ram.read_data.val().get_bits::<24>(0);
        self.is_new.next =
            (self.psn.q.val() == self.qs_ram.read_data.val().get_bits::<24>(24)) & (self.in_flight_n.val() < 256);
        self.is_resend.next =
            (self.psn.q.val() - self.qs_ram.read_data.val().get_bits::<24>(0)) < self.in_flight_n.val();
        // Backoff in three steps, each in a cycle of its own: the shift
        // amount of a retry count k is registered (`bok`; k is the slot's
        // timeouts in the RTO walk and on a resend, 0 for a new packet,
        // the new una's after a SACK), the shifted and saturated RTO is
        // registered (`bo_r`, every cycle), and only then added to a send
        // time. So the RAM output, the selection, the comparisons with
        // retry_linear, the barrel shift with its saturation and the
        // deadline add and compare are never in one path.
        self.bo_k.next = self.s_ret.val();
        if self.bo_k.val() < self.c_lin.val() {
            self.bo_shift.next = 0.into();
        } else if (self.bo_k.val() - self.c_lin.val()) >= 9 {
            self.bo_shift.next = 10.into();
        } else {
            self.bo_shift.next = self.bo_k.val() - self.c_lin.val() + 1;
        }
        // The same for the new una's retry count after a SACK.
        if self.una_ret.q.val() < self.c_lin.val() {
            self.bo_shift_una.next = 0.into();
        } else if (self.una_ret.q.val() - self.c_lin.val()) >= 9 {
            self.bo_shift_una.next = 10.into();
        } else {
            self.bo_shift_una.next = self.una_ret.q.val() - self.c_lin.val() + 1;
        }
        // The shift of a new packet (k = 0), apart, so that the SENT
        // classification only selects between the two.
        if self.c_lin.val() == 0 {
            self.bo_shift_new.next = 1.into();
        } else {
            self.bo_shift_new.next = 0.into();
        }
        self.bo_wide.next = bit_cast::<64, 32>(self.c_rto.val()) << bit_cast::<64, 5>(self.bok.q.val());
        if self.bo_wide.val().get_bits::<33>(31).any() {
            self.bo_val.next = 0x7FFF_FFFF.into();
        } else {
            self.bo_val.next = self.bo_wide.val().get_bits::<32>(0);
        }
        self.bo_r.d.next = self.bo_val.val();

        // Differences whose sign bit is tested (Verilog cannot index an
        // expression).
        self.tdue_d.next = self.now.val() - self.qs_ram.read_data.val().get_bits::<32>(81);
        self.hw_d.next = self.s_time.val() - self.hw.q.val();
        self.seq_d.next = self.s_seq.val() - self.e_max.val();
        self.rem_d.next = self.dlp_r.q.val() - self.now.val();
        self.tail_due_d.next = self.now.val() - self.tail_ram.read_data.val().get_bits::<32>(0);
        // Tail check: sent at or before now - stall_age.
        self.tail_line.next = self.tail_thr.q.val() - self.s_time.val();
        self.lost_tail.next = !self.tail_line.val().get_bit(31);
        // Walk helpers.
        self.p_next.next = self.p.q.val() + 1;
        // p at or before cum: p - (cum + 1) negative.
        self.off_cum.next = self.p.q.val() - self.psn.q.val() - 1;
        self.off_base.next = self.p.q.val() - self.base.q.val();
        // Shift by the 24-bit signal, not by `bit_cast(p - base)`: the
        // emitted Verilog `(p - base) & 64'hff..` evaluates the subtraction
        // at 64 bits, so across the PSN wrap (base 0xFFFFF8, p 0x000002)
        // the shift was huge, SACKed packets past the wrap were not seen as
        // acknowledged and were inferred lost (spurious resends and EV
        // marks; with a blackholed EV the QP stalled for good).
        self.bm_shift.next = self.bitmap.q.val() >> bit_cast::<64, 24>(self.off_base.val());
        self.acked_now.next =
            self.off_cum.val().get_bit(23) | ((self.off_base.val() < 64) & self.bm_shift.val().get_bit(0));
        self.acked_r.d.next = self.acked_now.val();
        self.live.next = !self.s_flags.val().get_bit(0) & !self.s_flags.val().get_bit(2);
        // Per-EV rule: highest acked sequence on the EV more than the
        // reorder allowance ahead of this transmission.
        self.s_seq_r.d.next = self.s_seq.val();
        self.reorder_gap.next = self.e_max.val() - self.s_seq_r.q.val();
        self.lost_reorder.next = self.e_mv.val().any()
            & !self.reorder_gap.val().get_bit(15)
            & (self.reorder_gap.val() > self.c_reorder.val());
        self.lost_reorder_r.d.next = self.lost_reorder.val();
        // Stall rule: sent before hw - allowance (allowance 0: no RTT
        // sample yet, rule off).
        self.stall_line.next = self.s_time.val() - (self.hw.q.val() - self.c_allow.val());
        self.lost_stall.next = self.hwv.q.val().any() & self.c_allow.val().any() & self.stall_line.val().get_bit(31);
        self.lost_stall_r.d.next = self.lost_stall.val();
        self.dl_p.next = self.s_time.val() + self.bo_r.q.val();
        self.due_d.next = self.now.val() - self.dl_p.val();
        self.due.next = !self.due_d.val().get_bit(31);
        self.retry_spent.next = (self.c_exp.val() != 25) & (self.s_ret.val() >= self.c_lin.val() + self.c_exp.val());

        // SACK validation (in LOAD; una/nxt come from the qs RAM there).
        // `next - base` is registered in LOAD (`nb_off_r`); the checks run
        // in the state after it (22), from `nxt` as loaded.
        self.nb_off.next = self.qs_ram.read_data.val().get_bits::<24>(24) - self.base.q.val();
        self.cum_d.next = self.psn.q.val() + 1 - self.nxt.q.val();
        // cum + 1 != nxt tested on the 24-bit difference: an inline
        // `psn + 1 != nxt` is a 32-bit compare in Verilog (0xFFFFFF + 1 is
        // not 0 there).
        self.bad_cum.next = !self.cum_d.val().get_bit(23) & self.cum_d.val().any();
        // Bits at or beyond next: a mask of the bitmap positions i >=
        // next - base (a function of the offset alone), not a shift of
        // the bitmap.
        self.ones64.next = 0xFFFF_FFFF_FFFF_FFFF_u64.into();
        self.bm_beyond.next = self.bitmap.q.val() & (self.ones64.val() << bit_cast::<64, 24>(self.nb_off_r.q.val()));
        if self.nb_off_r.q.val().get_bit(23) | !self.nb_off_r.q.val().any() {
            self.bad_bits.next = self.bitmap.q.val().any();
        } else if self.nb_off_r.q.val() < 64 {
            self.bad_bits.next = self.bm_beyond.val().any();
        } else {
            self.bad_bits.next = false;
        }
        // NACK classification (in LOAD).
        self.nu_d.next = self.psn.q.val() - self.qs_ram.read_data.val().get_bits::<24>(24);
        self.nack_unsent.next = !self.nu_d.val().get_bit(23);
        self.ns_d.next = self.psn.q.val() - self.qs_ram.read_data.val().get_bits::<24>(0);
        self.nack_stale.next = self.ns_d.val().get_bit(23)
            | self.s_flags.val().get_bit(0)
            | self.s_flags.val().get_bit(2)
            | self.s_flags.val().get_bit(3)
            | (self.s_time.val() != self.t_op.q.val());

        self.op_ready.next = false;
        self.go.next = true;
        if self.st.q.val() == 0 {
            // IDLE: take a record, else let the scanner visit a QP.
            // Present the QP's state, config, slot and EV reads.
            self.op_ready.next = true;
            if self.op_valid.val() {
                self.kind.d.next = self.op_kind.val();
                self.qp.d.next = self.op_qp.val();
                self.psn.d.next = self.op_psn.val();
                self.p.d.next = self.op_psn.val();
                self.ev.d.next = self.op_ev.val();
                self.cur_ev.d.next = self.op_ev.val();
                self.t_op.d.next = self.op_time.val();
                self.len.d.next = self.op_len.val();
                self.base.d.next = self.op_base.val();
                self.bitmap.d.next = self.op_bitmap.val();
                self.is_timer.d.next = false;
                self.qs_ram.read_address.next = self.op_qp.val();
                self.tail_ram.read_address.next = self.op_qp.val();
                self.cfg_ram.read_address.next = self.op_qp.val();
                self.slot_ram.read_address.next =
                    (bit_cast::<16, 8>(self.op_qp.val()) << 8) | bit_cast::<16, 24>(self.op_psn.val() & 255);
                self.ev_ram.read_address.next =
                    (bit_cast::<15, 8>(self.op_qp.val()) << 7) | bit_cast::<15, 7>(self.op_ev.val());
            } else {
                self.qp.d.next = self.scan_qp.q.val();
                self.is_timer.d.next = true;
                self.qs_ram.read_address.next = self.scan_qp.q.val();
                self.tail_ram.read_address.next = self.scan_qp.q.val();
                self.cfg_ram.read_address.next = self.scan_qp.q.val();
                if self.scan_qp.q.val() == !self.qp_last_n.q.val() {
                    self.scan_qp.d.next = 0.into();
                } else {
                    self.scan_qp.d.next = self.scan_qp.q.val() + 1;
                }
            }
            self.st.d.next = 1.into();
        } else if self.st.q.val() == 1 {
            // LOAD: the QP's state is on the qs RAM output.
            self.una.d.next = self.qs_ram.read_data.val().get_bits::<24>(0);
            self.nxt.d.next = self.qs_ram.read_data.val().get_bits::<24>(24);
            self.hw.d.next = self.qs_ram.read_data.val().get_bits::<32>(48);
            self.hwv.d.next = self.qs_ram.read_data.val().get_bits::<1>(80);
            self.dl.d.next = self.qs_ram.read_data.val().get_bits::<32>(81);
            self.armed.d.next = self.qs_ram.read_data.val().get_bits::<1>(113);
            self.err.d.next = self.qs_ram.read_data.val().get_bits::<1>(114);
            self.tdl.d.next = self.tail_ram.read_data.val().get_bits::<32>(0);
            self.tarm.d.next = self.tail_ram.read_data.val().get_bits::<1>(32);
            self.tblind.d.next = self.tail_ram.read_data.val().get_bits::<2>(33);
            self.tack.d.next = self.tail_ram.read_data.val().get_bits::<1>(35);
            self.found.d.next = false;
            self.bytes.d.next = 0.into();
            self.fired.d.next = false;
            self.have_rem.d.next = false;
            self.min_rem.d.next = 0.into();
            self.st.d.next = 0.into();
            if self.is_timer.q.val() | (self.kind.q.val() == 2) {
                // Walks start at una; other records keep p = their PSN.
                self.p.d.next = self.qs_ram.read_data.val().get_bits::<24>(0);
            }
            if self.is_timer.q.val() {
                // RTO due: walk from una (R1).
                if !self.qs_ram.read_data.val().get_bit(114)
                    & self.qs_ram.read_data.val().get_bit(113)
                    & !self.tdue_d.val().get_bit(31)
                {
                    self.st.d.next = 7.into();
                } else if !self.qs_ram.read_data.val().get_bit(114)
                    & self.tail_ram.read_data.val().get_bit(32)
                    & !self.tail_due_d.val().get_bit(31)
                {
                    // Tail check due (state 17).
                    self.st.d.next = 17.into();
                }
            } else if self.kind.q.val() == 0 {
                // INIT: clear the QP's 128 EV entries (state 10).
                self.una.d.next = self.psn.q.val();
                self.nxt.d.next = self.psn.q.val();
                self.hwv.d.next = 0.into();
                self.armed.d.next = 0.into();
                self.err.d.next = 0.into();
                self.tarm.d.next = 0.into();
                self.tblind.d.next = 0.into();
                self.tack.d.next = 0.into();
                self.clr.d.next = 0.into();
                self.st.d.next = 10.into();
            } else if self.qs_ram.read_data.val().get_bit(114) | (self.kind.q.val() > 4) {
                self.o_cnt_drop.d.next = true;
            } else if self.kind.q.val() == 1 {
                // SENT: a new PSN (next, window not full) or a resend of
                // an outstanding one.
                if self.is_new.val() | self.is_resend.val() {
                    self.w_ev.next = self.ev.q.val();
                    self.w_seq.next = self.e_next.val();
                    self.w_time.next = self.t_op.q.val();
                    self.w_len.next = self.len.q.val();
                    if self.is_new.val() {
                        self.w_ret.next = 0.into();
                        self.w_flags.next = 0.into();
                        self.nxt.d.next = self.psn.q.val() + 1;
                    } else {
                        self.w_flags.next = 2.into();
                    }
                    self.slot_ram.write_enable.next = true;
                    self.we_next.next = self.e_next.val() + 1;
                    self.ev_ram.write_enable.next = true;
                    if !self.qs_ram.read_data.val().get_bit(113) {
                        // Arm on a send when idle (the tail check too).
                        if self.c_age.val().any() {
                            self.tarm.d.next = 1.into();
                            self.tdl.d.next = self.t_op.q.val() + self.c_age.val();
                        }
                        // The deadline in state 20, from the registered
                        // retry count.
                        self.armed.d.next = 1.into();
                        if self.is_new.val() {
                            self.bok.d.next = self.bo_shift_new.val();
                        } else {
                            self.bok.d.next = self.bo_shift.val();
                        }
                        self.st.d.next = 20.into();
                    } else {
                        self.st.d.next = 12.into();
                    }
                } else {
                    self.o_cnt_drop.d.next = true;
                }
            } else if self.kind.q.val() == 2 {
                // SACK: validate, then the acknowledgement pass (A1).
                self.nb_off_r.d.next = self.nb_off.val();
                self.st.d.next = 22.into();
            } else if self.nack_unsent.val() {
                self.o_cnt_drop.d.next = true;
            } else if self.nack_stale.val() {
                self.o_cnt_stale.d.next = true;
            } else if self.kind.q.val() == 3 {
                self.st.d.next = 9.into();
            } else {
                // Out of window: waits for una to advance or the RTO.
                self.w_flags.next = self.s_flags.val() | 8;
                self.slot_ram.write_enable.next = true;
            }
        } else if self.st.q.val() == 2 {
            // A1: slot p is being read.
            if self.p.q.val() == self.nxt.q.val() {
                self.st.d.next = 5.into();
            } else {
                self.st.d.next = 3.into();
            }
        } else if self.st.q.val() == 3 {
            // A2: slot p on the RAM output; read its EV entry.
            self.cur_ev.d.next = self.s_ev.val();
            self.ev_ram.read_address.next =
                (bit_cast::<15, 8>(self.qp.q.val()) << 7) | bit_cast::<15, 7>(self.s_ev.val());
            self.st.d.next = 4.into();
        } else if self.st.q.val() == 4 {
            // A3: acknowledge slot p if the SACK covers it.
            if !self.s_flags.val().get_bit(0) & self.acked_r.q.val() {
                self.w_flags.next = self.s_flags.val() | 1;
                self.slot_ram.write_enable.next = true;
                self.bytes.d.next = self.bytes.q.val() + bit_cast::<32, 16>(self.s_len.val());
                if !self.s_flags.val().get_bit(1) {
                    // First transmission (Karn): feeds the stall rule's
                    // hw and the EV's highest acknowledged sequence.
                    if !self.hwv.q.val().any() | !self.hw_d.val().get_bit(31) {
                        self.hw.d.next = self.s_time.val();
                    }
                    self.hwv.d.next = 1.into();
                    if !self.e_mv.val().any() | !self.seq_d.val().get_bit(15) {
                        self.we_max.next = self.s_seq.val();
                        self.we_mv.next = 1.into();
                        self.ev_ram.write_enable.next = true;
                    }
                }
            } else if !self.s_flags.val().get_bit(0) & !self.found.q.val() {
                // The first PSN still unacknowledged: the new una.
                self.found.d.next = true;
                self.una_new.d.next = self.p.q.val();
                self.una_time.d.next = self.s_time.val();
                self.una_ret.d.next = self.s_ret.val();
            }
            self.p.d.next = self.p_next.val();
            self.slot_ram.read_address.next =
                (bit_cast::<16, 8>(self.qp.q.val()) << 8) | bit_cast::<16, 24>(self.p_next.val() & 255);
            if self.p_next.val() == self.nxt.q.val() {
                self.st.d.next = 5.into();
            } else {
                self.st.d.next = 3.into();
            }
        } else if self.st.q.val() == 5 {
            // End of the acknowledgement pass: start the loss pass at
            // the new una (L1).
            if !self.found.q.val() {
                self.una_new.d.next = self.nxt.q.val();
                self.p.d.next = self.nxt.q.val();
            } else {
                self.p.d.next = self.una_new.q.val();
            }
            self.bok.d.next = self.bo_shift_una.val();
            self.st.d.next = 6.into();
        } else if self.st.q.val() == 6 {
            // L1: slot p is being read.
            if self.p.q.val() == self.nxt.q.val() {
                self.st.d.next = 11.into();
            } else {
                self.st.d.next = 13.into();
            }
        } else if self.st.q.val() == 13 {
            // L2: read the EV entry of slot p.
            self.cur_ev.d.next = self.s_ev.val();
            self.ev_ram.read_address.next =
                (bit_cast::<15, 8>(self.qp.q.val()) << 7) | bit_cast::<15, 7>(self.s_ev.val());
            self.st.d.next = 25.into();
        } else if self.st.q.val() == 25 {
            // L3a: the EV entry on the RAM output; the per-EV rule is
            // registered (`lost_reorder_r`).
            self.st.d.next = 14.into();
        } else if self.st.q.val() == 14 {
            // L3: loss decision for slot p (holds while an output is busy).
            if self.live.val() & self.s_flags.val().get_bit(3) {
                if self.una_new.q.val() != self.una.q.val() {
                    if self.o_rtx_v.q.val() {
                        self.go.next = false;
                    } else {
                        self.w_flags.next = (self.s_flags.val() | 4) & 7;
                        self.slot_ram.write_enable.next = true;
                        self.o_rtx_v.d.next = true;
                        self.o_rtx_qp.d.next = self.qp.q.val();
                        self.o_rtx_psn.d.next = self.p.q.val();
                        self.o_rtx_ev.d.next = self.s_ev.val();
                        self.o_rtx_len.d.next = self.s_len.val();
                        self.o_rtx_reason.d.next = 3.into();
                    }
                }
            } else if self.live.val() & (self.lost_reorder_r.q.val() | self.lost_stall_r.q.val()) {
                if !self.out_free.val() {
                    self.go.next = false;
                } else {
                    self.w_flags.next = self.s_flags.val() | 4;
                    self.slot_ram.write_enable.next = true;
                    self.o_rtx_v.d.next = true;
                    self.o_rtx_qp.d.next = self.qp.q.val();
                    self.o_rtx_psn.d.next = self.p.q.val();
                    self.o_rtx_ev.d.next = self.s_ev.val();
                    self.o_rtx_len.d.next = self.s_len.val();
                    self.o_rtx_reason.d.next = 0.into();
                    self.o_mark_v.d.next = true;
                    self.o_mark_qp.d.next = self.qp.q.val();
                    self.o_mark_ev.d.next = self.s_ev.val();
                    if self.lost_reorder_r.q.val() {
                        self.o_mark_reason.d.next = 0.into();
                    } else {
                        self.o_mark_reason.d.next = 1.into();
                    }
                }
            }
            if self.go.val() {
                self.p.d.next = self.p_next.val();
                self.slot_ram.read_address.next =
                    (bit_cast::<16, 8>(self.qp.q.val()) << 8) | bit_cast::<16, 24>(self.p_next.val() & 255);
                if self.p_next.val() == self.nxt.q.val() {
                    self.st.d.next = 11.into();
                } else {
                    self.st.d.next = 13.into();
                }
            }
        } else if self.st.q.val() == 11 {
            // SACK done: una advance (re-arm the RTO and the tail check from
            // the new una's last send), report the acknowledgement, store.
            // The tail check is also armed by a SACK that finds it unarmed
            // with packets outstanding.
            if !self.o_ack_v.q.val() | !(self.bytes.q.val().any() | (self.una_new.q.val() != self.una.q.val())) {
                if self.bytes.q.val().any() | (self.una_new.q.val() != self.una.q.val()) {
                    self.o_ack_v.d.next = true;
                    self.o_ack_qp.d.next = self.qp.q.val();
                    self.o_ack_una.d.next = self.una_new.q.val();
                    self.o_ack_bytes.d.next = self.bytes.q.val();
                    self.tack.d.next = 1.into();
                }
                self.una.d.next = self.una_new.q.val();
                if self.una_new.q.val() == self.nxt.q.val() {
                    if self.una_new.q.val() != self.una.q.val() {
                        self.armed.d.next = 0.into();
                        self.tarm.d.next = 0.into();
                    }
                } else {
                    if self.una_new.q.val() != self.una.q.val() {
                        self.armed.d.next = 1.into();
                        self.dl.d.next = self.una_time.q.val() + self.bo_r.q.val();
                    }
                    if self.c_age.val().any() & ((self.una_new.q.val() != self.una.q.val()) | !self.tarm.q.val().any())
                    {
                        self.tarm.d.next = 1.into();
                        self.tdl.d.next = self.una_time.q.val() + self.c_age.val();
                    }
                }
                self.st.d.next = 12.into();
            }
        } else if self.st.q.val() == 7 {
            // R1: slot p is being read.
            if self.p.q.val() == self.nxt.q.val() {
                self.st.d.next = 8.into();
            } else {
                self.st.d.next = 15.into();
            }
        } else if self.st.q.val() == 15 {
            // R2a: slot p on the RAM output; register its retry count and
            // whether its budget is spent.
            self.bok.d.next = self.bo_shift.val();
            self.spent_r.d.next = self.retry_spent.val();
            self.st.d.next = 23.into();
        } else if self.st.q.val() == 23 {
            // R2b: the backoff of `bok` is being registered (`bo_r`).
            self.st.d.next = 21.into();
        } else if self.st.q.val() == 21 {
            // R2c: its deadline (send time + backoff) and the test against
            // now, registered.
            self.due_r.d.next = self.due.val();
            self.dlp_r.d.next = self.dl_p.val();
            self.st.d.next = 16.into();
        } else if self.st.q.val() == 16 {
            // R2d: timeout decision for slot p.
            if self.live.val() & self.s_flags.val().get_bit(3) {
                // Out-of-window resend on the RTO, no retry consumed.
                if self.o_rtx_v.q.val() {
                    self.go.next = false;
                } else {
                    self.w_flags.next = (self.s_flags.val() | 4) & 7;
                    self.slot_ram.write_enable.next = true;
                    self.o_rtx_v.d.next = true;
                    self.o_rtx_qp.d.next = self.qp.q.val();
                    self.o_rtx_psn.d.next = self.p.q.val();
                    self.o_rtx_ev.d.next = self.s_ev.val();
                    self.o_rtx_len.d.next = self.s_len.val();
                    self.o_rtx_reason.d.next = 3.into();
                }
            } else if self.live.val() & self.due_r.q.val() {
                if self.spent_r.q.val() {
                    // Budget spent: QP to error, report the PSN.
                    self.go.next = false;
                    if !self.o_err_v.q.val() {
                        self.o_err_v.d.next = true;
                        self.o_err_qp.d.next = self.qp.q.val();
                        self.o_err_psn.d.next = self.p.q.val();
                        self.err.d.next = 1.into();
                        self.tarm.d.next = 0.into();
                        self.armed.d.next = 0.into();
                        self.st.d.next = 12.into();
                    }
                } else if !self.out_free.val() {
                    self.go.next = false;
                } else {
                    self.w_flags.next = self.s_flags.val() | 4;
                    self.w_ret.next = self.s_ret.val() + 1;
                    self.slot_ram.write_enable.next = true;
                    self.fired.d.next = true;
                    self.o_rtx_v.d.next = true;
                    self.o_rtx_qp.d.next = self.qp.q.val();
                    self.o_rtx_psn.d.next = self.p.q.val();
                    self.o_rtx_ev.d.next = self.s_ev.val();
                    self.o_rtx_len.d.next = self.s_len.val();
                    self.o_rtx_reason.d.next = 2.into();
                    self.o_mark_v.d.next = true;
                    self.o_mark_qp.d.next = self.qp.q.val();
                    self.o_mark_ev.d.next = self.s_ev.val();
                    self.o_mark_reason.d.next = 2.into();
                }
            } else if self.live.val() {
                // Not due: the earliest remaining deadline re-arms.
                if !self.have_rem.q.val() | (self.rem_d.val() < self.min_rem.q.val()) {
                    self.min_rem.d.next = self.rem_d.val();
                }
                self.have_rem.d.next = true;
            }
            if self.go.val() {
                self.p.d.next = self.p_next.val();
                self.slot_ram.read_address.next =
                    (bit_cast::<16, 8>(self.qp.q.val()) << 8) | bit_cast::<16, 24>(self.p_next.val() & 255);
                if self.p_next.val() == self.nxt.q.val() {
                    self.st.d.next = 8.into();
                } else {
                    self.st.d.next = 15.into();
                }
            }
        } else if self.st.q.val() == 8 {
            // RTO walk done: report one firing, re-arm, store.
            if !self.fired.q.val() | !self.o_rto_v.q.val() {
                if self.fired.q.val() {
                    self.o_rto_v.d.next = true;
                    self.o_rto_qp.d.next = self.qp.q.val();
                }
                if self.have_rem.q.val() {
                    self.armed.d.next = 1.into();
                } else {
                    self.armed.d.next = 0.into();
                }
                self.dl.d.next = self.now.val() + self.min_rem.q.val();
                self.st.d.next = 12.into();
            }
        } else if self.st.q.val() == 9 {
            // Trim NACK: resend at once (no EV mark).
            if !self.o_rtx_v.q.val() {
                self.w_flags.next = self.s_flags.val() | 4;
                self.slot_ram.write_enable.next = true;
                self.o_rtx_v.d.next = true;
                self.o_rtx_qp.d.next = self.qp.q.val();
                self.o_rtx_psn.d.next = self.p.q.val();
                self.o_rtx_ev.d.next = self.s_ev.val();
                self.o_rtx_len.d.next = self.s_len.val();
                self.o_rtx_reason.d.next = 1.into();
                self.st.d.next = 0.into();
            }
        } else if self.st.q.val() == 17 {
            // Tail check fired (2.5.2): nothing outstanding -> disarm; an
            // acknowledgement since the last check resets the blind count;
            // at most 2 checks act in a row without one. Re-armed at
            // now + stall_age.
            if self.una.q.val() == self.nxt.q.val() {
                self.tarm.d.next = 0.into();
                self.st.d.next = 12.into();
            } else {
                self.tarm.d.next = 1.into();
                self.tdl.d.next = self.now.val() + self.c_age.val();
                self.tack.d.next = 0.into();
                self.tail_thr.d.next = self.now.val() - self.c_age.val();
                if self.tack.q.val().any() {
                    self.tblind.d.next = 1.into();
                    self.st.d.next = 18.into();
                } else if self.tblind.q.val() < 2 {
                    self.tblind.d.next = self.tblind.q.val() + 1;
                    self.st.d.next = 18.into();
                } else {
                    self.st.d.next = 12.into();
                }
            }
        } else if self.st.q.val() == 18 {
            // T1: slot p (= una) is being read.
            self.st.d.next = 19.into();
        } else if self.st.q.val() == 19 {
            // T2: every live slot sent at or before now - stall_age is lost
            // (its EV stalled), one PSN per cycle.
            if self.live.val() & !self.s_flags.val().get_bit(3) & self.lost_tail.val() {
                if !self.out_free.val() {
                    self.go.next = false;
                } else {
                    self.w_flags.next = self.s_flags.val() | 4;
                    self.slot_ram.write_enable.next = true;
                    self.o_rtx_v.d.next = true;
                    self.o_rtx_qp.d.next = self.qp.q.val();
                    self.o_rtx_psn.d.next = self.p.q.val();
                    self.o_rtx_ev.d.next = self.s_ev.val();
                    self.o_rtx_len.d.next = self.s_len.val();
                    self.o_rtx_reason.d.next = 0.into();
                    self.o_mark_v.d.next = true;
                    self.o_mark_qp.d.next = self.qp.q.val();
                    self.o_mark_ev.d.next = self.s_ev.val();
                    self.o_mark_reason.d.next = 1.into();
                }
            }
            if self.go.val() {
                self.p.d.next = self.p_next.val();
                self.slot_ram.read_address.next =
                    (bit_cast::<16, 8>(self.qp.q.val()) << 8) | bit_cast::<16, 24>(self.p_next.val() & 255);
                if self.p_next.val() == self.nxt.q.val() {
                    self.st.d.next = 12.into();
                }
            }
        } else if self.st.q.val() == 20 {
            // Arm the RTO of a send that found it idle: the backoff of
            // `bok` is being registered (`bo_r`).
            self.st.d.next = 24.into();
        } else if self.st.q.val() == 24 {
            self.dl.d.next = self.t_op.q.val() + self.bo_r.q.val();
            self.st.d.next = 12.into();
        } else if self.st.q.val() == 22 {
            // SACK validation (V), from `next - base` registered in LOAD.
            if self.bad_cum.val() | self.bad_bits.val() {
                self.o_cnt_unsent.d.next = true;
                self.st.d.next = 0.into();
            } else {
                self.st.d.next = 2.into();
            }
        } else if self.st.q.val() == 10 {
            // INIT: clear the EV entries one per cycle, then store.
            self.ev_ram.write_address.next =
                (bit_cast::<15, 8>(self.qp.q.val()) << 7) | bit_cast::<15, 7>(self.clr.q.val());
            self.we_next.next = 0.into();
            self.we_max.next = 0.into();
            self.we_mv.next = 0.into();
            self.ev_ram.write_enable.next = true;
            self.clr.d.next = self.clr.q.val() + 1;
            if self.clr.q.val() == 127 {
                self.st.d.next = 12.into();
            }
        } else if self.st.q.val() == 12 {
            // STORE the QP's state.
            self.qs_ram.write_enable.next = true;
            self.tail_ram.write_enable.next = true;
            self.st.d.next = 0.into();
        } else {
            self.st.d.next = 0.into();
        }
        // A new scanner range restarts the sweep at QP 0 (after the state
        // machine, whose idle state also moves the scanner).
        if self.cfg_valid.val() & (self.cfg_table.val() == 9) & (self.cfg_index.val() == 0) {
            self.scan_qp.d.next = 0.into();
        }
        self.slot_ram.write_data.next = bit_cast::<88, 7>(self.w_ev.val())
            | (bit_cast::<88, 16>(self.w_seq.val()) << 8)
            | (bit_cast::<88, 32>(self.w_time.val()) << 24)
            | (bit_cast::<88, 16>(self.w_len.val()) << 56)
            | (bit_cast::<88, 5>(self.w_ret.val()) << 72)
            | (bit_cast::<88, 4>(self.w_flags.val()) << 80);
        self.ev_ram.write_data.next = bit_cast::<33, 16>(self.we_next.val())
            | (bit_cast::<33, 16>(self.we_max.val()) << 16)
            | (bit_cast::<33, 1>(self.we_mv.val()) << 32);
        self.rtx_valid.next = self.o_rtx_v.q.val();
        self.rtx_qp.next = self.o_rtx_qp.q.val();
        self.rtx_psn.next = self.o_rtx_psn.q.val();
        self.rtx_ev.next = self.o_rtx_ev.q.val();
        self.rtx_len.next = self.o_rtx_len.q.val();
        self.rtx_reason.next = self.o_rtx_reason.q.val();
        self.mark_valid.next = self.o_mark_v.q.val();
        self.mark_qp.next = self.o_mark_qp.q.val();
        self.mark_ev.next = self.o_mark_ev.q.val();
        self.mark_reason.next = self.o_mark_reason.q.val();
        self.ack_valid.next = self.o_ack_v.q.val();
        self.ack_qp.next = self.o_ack_qp.q.val();
        self.ack_una.next = self.o_ack_una.q.val();
        self.ack_bytes.next = self.o_ack_bytes.q.val();
        self.rto_valid.next = self.o_rto_v.q.val();
        self.rto_qp.next = self.o_rto_qp.q.val();
        self.err_valid.next = self.o_err_v.q.val();
        self.err_qp.next = self.o_err_qp.q.val();
        self.err_psn.next = self.o_err_psn.q.val();
        self.cnt_ack_unsent.next = self.o_cnt_unsent.q.val();
        self.cnt_drop.next = self.o_cnt_drop.q.val();
        self.cnt_stale_nack.next = self.o_cnt_stale.q.val();
        self.busy.next = self.st.q.val() > 1;
    }
}
