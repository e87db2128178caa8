//! Congestion-control window gate: per QP, bytes in flight against the
//! congestion window, and the PSN send window for new packets (rules 2
//! and 4 of docs/model-mrc.md 2.2); one admit-or-hold decision per cycle.
//! The window follows the integer-exact rules of `proto::model::cc::Nscc`
//! (`on_loss`: `cwnd -= bytes`, `on_timeout`: `cwnd = min_cwnd`, both
//! clamped to `[min_cwnd, max_cwnd]`) on `floor(cwnd)`, for a floor of at
//! least one packet (the model's timeout takes the window to one packet;
//! its quick adapt and windows below one packet are not in the RTL); the ACK-driven
//! increase/decrease (which divides by `cwnd` and by the delay) arrives as
//! a window write from outside (SETW). See `docs/hw/cc_gate.md`.
//!
//! Two stages: the QP's state (`cwnd`, in flight, next PSN, una) and
//! config are read from block RAM in the cycle a record is taken; the
//! next cycle decides, writes back and registers the result. A record for
//! the QP decided in the same cycle takes the just-computed state from a
//! bypass register, so records for any QPs go back to back.

use contract::config::{cc, table};
use contract::field::span;
use rust_hdl::prelude::*;

use crate::bus::ConfigSink;

use crate::contract_rows::{CcRow, TableId};

/// Bits of the config row the block keeps per QP (through `send_window`).
pub const CFG_ROW_BITS: usize = span(cc::FIELDS);

/// Record kinds on `op_kind`.
pub mod kind {
    /// Start the QP: `una = next = op_psn`, `cwnd = op_cwnd` (clamped),
    /// nothing in flight.
    pub const INIT: u64 = 0;
    /// May a packet of `op_len` bytes go (`op_new`: a new PSN)? If so it
    /// is counted in flight (and `next` advances for a new PSN).
    pub const ADMIT: u64 = 1;
    /// Acknowledgement: `op_len` bytes leave flight, una = `op_psn`.
    pub const ACK: u64 = 2;
    /// Loss or trim (`cc.on_loss`): `op_len` bytes leave flight and the
    /// window shrinks by as much.
    pub const LOSS: u64 = 3;
    /// `op_len` bytes leave flight, window unchanged (a timed-out or
    /// out-of-window packet).
    pub const RELEASE: u64 = 4;
    /// Retransmission timeout (`cc.on_timeout`): window to `min_cwnd`.
    pub const TIMEOUT: u64 = 5;
    /// Window write (`op_cwnd`, clamped) from the ACK-driven controller.
    pub const SETW: u64 = 6;
}

/// The gate. Ports are described in `docs/hw/cc_gate.md`.
#[derive(LogicBlock, Default)]
pub struct CcGate {
    pub clock: Signal<In, Clock>,
    pub op_valid: Signal<In, Bit>,
    pub op_ready: Signal<Out, Bit>,
    pub op_kind: Signal<In, Bits<3>>,
    pub op_qp: Signal<In, Bits<8>>,
    pub op_len: Signal<In, Bits<32>>,
    pub op_new: Signal<In, Bit>,
    pub op_psn: Signal<In, Bits<24>>,
    pub op_cwnd: Signal<In, Bits<32>>,
    pub cfg: ConfigSink,
    t_cc: TableId<{ table::CC }>,
    /// One result per record, 2 edges after it was taken.
    pub out_valid: Signal<Out, Bit>,
    pub out_qp: Signal<Out, Bits<8>>,
    pub out_kind: Signal<Out, Bits<3>>,
    /// ADMIT: admitted (1) or held (0); other kinds: 1.
    pub out_ok: Signal<Out, Bit>,
    /// The QP's window and bytes in flight after the record.
    pub out_cwnd: Signal<Out, Bits<32>>,
    pub out_inflight: Signal<Out, Bits<32>>,
    /// An ADMIT was held.
    pub cnt_held: Signal<Out, Bit>,
    /// A release of more bytes than were in flight (clamped to 0).
    pub cnt_underflow: Signal<Out, Bit>,
    // Memories: {una 24, next 24, inflight 32, cwnd 32} and config.
    st_ram: RAM<Bits<112>, 8>,
    cfg_ram: RAM<Bits<CFG_ROW_BITS>, 8>,
    // Stage 1.
    s1_v: DFF<Bit>,
    s1_kind: DFF<Bits<3>>,
    s1_qp: DFF<Bits<8>>,
    s1_len: DFF<Bits<32>>,
    s1_new: DFF<Bit>,
    s1_psn: DFF<Bits<24>>,
    s1_cwnd: DFF<Bits<32>>,
    // Bypass: the state stage 1 wrote, for the same QP right behind.
    fwd_hit: DFF<Bit>,
    fwd_state: DFF<Bits<112>>,
    // Outputs.
    o_v: DFF<Bit>,
    o_qp: DFF<Bits<8>>,
    o_kind: DFF<Bits<3>>,
    o_ok: DFF<Bit>,
    o_cwnd: DFF<Bits<32>>,
    o_infl: DFF<Bits<32>>,
    o_held: DFF<Bit>,
    o_under: DFF<Bit>,
    // Stage 1 combinational.
    cur: Signal<Local, Bits<112>>,
    cwnd: Signal<Local, Bits<32>>,
    infl: Signal<Local, Bits<32>>,
    nxt: Signal<Local, Bits<24>>,
    una: Signal<Local, Bits<24>>,
    c_min: Signal<Local, Bits<32>>,
    c_max: Signal<Local, Bits<32>>,
    c_win: Signal<Local, Bits<24>>,
    sum: Signal<Local, Bits<33>>,
    fits: Signal<Local, Bit>,
    win_ok: Signal<Local, Bit>,
    ok: Signal<Local, Bit>,
    under: Signal<Local, Bit>,
    rel: Signal<Local, Bits<32>>,
    shrunk: Signal<Local, Bits<32>>,
    set_w: Signal<Local, Bits<32>>,
    n_cwnd: Signal<Local, Bits<32>>,
    n_infl: Signal<Local, Bits<32>>,
    n_nxt: Signal<Local, Bits<24>>,
    n_una: Signal<Local, Bits<24>>,
    n_state: Signal<Local, Bits<112>>,
    una_d: Signal<Local, Bits<24>>,
}

impl Logic for CcGate {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, s1_v, s1_kind, s1_qp, s1_len, s1_new, s1_psn, s1_cwnd, fwd_hit, fwd_state, o_v, o_qp, o_kind,
            o_ok, o_cwnd, o_infl, o_held, o_under
        );
        self.st_ram.read_clock.next = self.clock.val();
        self.st_ram.write_clock.next = self.clock.val();
        self.cfg_ram.read_clock.next = self.clock.val();
        self.cfg_ram.write_clock.next = self.clock.val();
        self.cfg_ram.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.cfg_ram.write_data.next = bit_cast::<CFG_ROW_BITS, 256>(self.cfg.data.val());
        self.cfg_ram.write_enable.next = self.cfg.valid.val() & (self.cfg.table.val() == self.t_cc.val());

        // Stage 0: take a record every cycle, read its QP.
        self.op_ready.next = true;
        self.st_ram.read_address.next = self.op_qp.val();
        self.cfg_ram.read_address.next = self.op_qp.val();
        self.s1_v.d.next = self.op_valid.val();
        self.s1_kind.d.next = self.op_kind.val();
        self.s1_qp.d.next = self.op_qp.val();
        self.s1_len.d.next = self.op_len.val();
        self.s1_new.d.next = self.op_new.val();
        self.s1_psn.d.next = self.op_psn.val();
        self.s1_cwnd.d.next = self.op_cwnd.val();
        self.fwd_hit.d.next = self.op_valid.val() & self.s1_v.q.val() & (self.s1_qp.q.val() == self.op_qp.val());

        // Stage 1: the state (bypassed when the previous record was for
        // the same QP: its write lands at the edge this read was taken).
        if self.fwd_hit.q.val() {
            self.cur.next = self.fwd_state.q.val();
        } else {
            self.cur.next = self.st_ram.read_data.val();
        }
        self.cwnd.next = self.cur.val().get_bits::<32>(0);
        self.infl.next = self.cur.val().get_bits::<32>(32);
        self.nxt.next = self.cur.val().get_bits::<24>(64);
        self.una.next = self.cur.val().get_bits::<24>(88);
        self.c_min.next = self.cfg_ram.read_data.val().get_value_cc_min_cwnd();
        self.c_max.next = self.cfg_ram.read_data.val().get_value_cc_max_cwnd();
        self.c_win.next = bit_cast::<24, 16>(self.cfg_ram.read_data.val().get_value_cc_send_window());
        // Rule 2: fits the window, or nothing in flight (a window below
        // one packet cannot deadlock).
        self.sum.next = bit_cast::<33, 32>(self.infl.val()) + bit_cast::<33, 32>(self.s1_len.q.val());
        self.fits.next = !self.infl.val().any() | (self.sum.val() <= bit_cast::<33, 32>(self.cwnd.val()));
        // Rule 4: a new PSN inside the send window.
        self.win_ok.next = !self.s1_new.q.val() | ((self.nxt.val() - self.una.val()) < self.c_win.val());
        self.ok.next = self.fits.val() & self.win_ok.val();
        self.under.next = self.s1_len.q.val() > self.infl.val();
        if self.under.val() {
            self.rel.next = 0.into();
        } else {
            self.rel.next = self.infl.val() - self.s1_len.q.val();
        }
        // on_loss: cwnd - bytes, clamped up to min_cwnd.
        if (self.s1_len.q.val() >= self.cwnd.val()) | ((self.cwnd.val() - self.s1_len.q.val()) < self.c_min.val()) {
            self.shrunk.next = self.c_min.val();
        } else {
            self.shrunk.next = self.cwnd.val() - self.s1_len.q.val();
        }
        // Window write: clamped to [min_cwnd, max_cwnd].
        if self.s1_cwnd.q.val() < self.c_min.val() {
            self.set_w.next = self.c_min.val();
        } else if self.s1_cwnd.q.val() > self.c_max.val() {
            self.set_w.next = self.c_max.val();
        } else {
            self.set_w.next = self.s1_cwnd.q.val();
        }
        self.una_d.next = self.s1_psn.q.val() - self.una.val();
        self.n_cwnd.next = self.cwnd.val();
        self.n_infl.next = self.infl.val();
        self.n_nxt.next = self.nxt.val();
        self.n_una.next = self.una.val();
        self.o_ok.d.next = true;
        self.o_held.d.next = false;
        self.o_under.d.next = false;
        if self.s1_kind.q.val() == 0 {
            self.n_cwnd.next = self.set_w.val();
            self.n_infl.next = 0.into();
            self.n_nxt.next = self.s1_psn.q.val();
            self.n_una.next = self.s1_psn.q.val();
        } else if self.s1_kind.q.val() == 1 {
            self.o_ok.d.next = self.ok.val();
            self.o_held.d.next = self.s1_v.q.val() & !self.ok.val();
            if self.ok.val() {
                self.n_infl.next = self.sum.val().get_bits::<32>(0);
                if self.s1_new.q.val() {
                    self.n_nxt.next = self.nxt.val() + 1;
                }
            }
        } else if self.s1_kind.q.val() == 2 {
            self.n_infl.next = self.rel.val();
            self.o_under.d.next = self.s1_v.q.val() & self.under.val();
            // una only moves forward.
            if !self.una_d.val().get_bit(23) {
                self.n_una.next = self.s1_psn.q.val();
            }
        } else if self.s1_kind.q.val() == 3 {
            self.n_infl.next = self.rel.val();
            self.o_under.d.next = self.s1_v.q.val() & self.under.val();
            self.n_cwnd.next = self.shrunk.val();
        } else if self.s1_kind.q.val() == 4 {
            self.n_infl.next = self.rel.val();
            self.o_under.d.next = self.s1_v.q.val() & self.under.val();
        } else if self.s1_kind.q.val() == 5 {
            self.n_cwnd.next = self.c_min.val();
        } else if self.s1_kind.q.val() == 6 {
            self.n_cwnd.next = self.set_w.val();
        } else {
            self.o_ok.d.next = false;
        }
        self.n_state.next = bit_cast::<112, 32>(self.n_cwnd.val())
            | (bit_cast::<112, 32>(self.n_infl.val()) << 32)
            | (bit_cast::<112, 24>(self.n_nxt.val()) << 64)
            | (bit_cast::<112, 24>(self.n_una.val()) << 88);
        self.st_ram.write_address.next = self.s1_qp.q.val();
        self.st_ram.write_data.next = self.n_state.val();
        self.st_ram.write_enable.next = self.s1_v.q.val();
        self.fwd_state.d.next = self.n_state.val();
        self.o_v.d.next = self.s1_v.q.val();
        self.o_qp.d.next = self.s1_qp.q.val();
        self.o_kind.d.next = self.s1_kind.q.val();
        self.o_cwnd.d.next = self.n_cwnd.val();
        self.o_infl.d.next = self.n_infl.val();
        self.out_valid.next = self.o_v.q.val();
        self.out_qp.next = self.o_qp.q.val();
        self.out_kind.next = self.o_kind.q.val();
        self.out_ok.next = self.o_ok.q.val();
        self.out_cwnd.next = self.o_cwnd.q.val();
        self.out_inflight.next = self.o_infl.q.val();
        self.cnt_held.next = self.o_held.q.val();
        self.cnt_underflow.next = self.o_under.q.val();
    }
}
