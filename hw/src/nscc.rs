//! NSCC's ACK-driven window (issue 15): per QP, one feedback record
//! (ACK with acked bytes, ECN echo, RTT sample, receiver penalty; loss;
//! timeout; INIT) in, one window write (`qp`, `cwnd`) out, for the CC
//! gate's SETW. The rules and the arithmetic are those of
//! `proto::model::nscc_fixed::NsccFixed`, bit for bit: the integer form
//! of `proto::model::cc::Nscc` without quick adapt. See `docs/hw/nscc.md`.
//!
//! One record at a time (a sequencer): the QP's state and parameters are
//! read from block RAM, the rule runs on a shared 16-step restoring
//! divider (Q16 fractions) and a shift-add multiplier, the state is
//! written back before the next record is taken, so records of the same
//! QP back to back need no bypass (the input stalls instead).
//! `hw::core` queues its records (`NsccFeedback`) and applies its
//! window writes at the CC gate.

mod words;

use contract::config::{nscc, table};
use contract::field::span;
use rust_hdl::prelude::*;

pub use words::{NsccFeedback, NsccStateWord};

use crate::bus::ConfigSink;
use crate::contract_rows::{CcRow, NsccRow, TableId};

/// Bits of the table 14 row the block keeps per QP (not `enable`, which
/// the core's filter in front of the block reads).
pub const CFG_ROW_BITS: usize = span(nscc::PARAMS);

/// Record kinds on `fb_kind`.
pub mod kind {
    /// Start the QP: window `init_cwnd` (clamped), base RTT from the
    /// config, averages, streak, decrease time and penalty cleared.
    pub const INIT: u64 = 0;
    /// Acknowledgement (`Nscc::on_ack`): `fb_bytes` acked, `fb_ecn`,
    /// `fb_rtt_valid` / `fb_rtt_ns`, `fb_penalty`, `fb_restore`.
    pub const ACK: u64 = 1;
    /// Loss or trim of `fb_bytes` (`Nscc::on_loss`).
    pub const LOSS: u64 = 2;
    /// Retransmission timeout (`Nscc::on_timeout`).
    pub const TIMEOUT: u64 = 3;
}

/// The sequencer's states.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum NsccState {
    /// Take a record; its QP's RAM words are read.
    Idle,
    /// The RAM words are on the outputs: latch them.
    Load,
    /// By kind.
    Dispatch,
    /// ACK with an RTT sample: base RTT and delay.
    Rtt,
    /// Start the slow average's update.
    AvgStart,
    AvgApply,
    /// The quadrant's comparisons are registered.
    Judge,
    /// Pick the quadrant.
    React,
    /// Proportional increase: `acked / cwnd` done, `(T - d) / T` next.
    PiBelow,
    PiMul1,
    PiMul2,
    PiAdd,
    /// Fast increase check.
    PiFast,
    /// Fair increase.
    FiMul,
    FiAdd,
    /// Multiplicative decrease: gain x (D - T) / D, then the cut.
    MdMul1,
    MdMul2,
    MdApply,
    /// Clamp to `[min_cwnd, max_cwnd]`; an ACK then goes to the penalty.
    Clamp,
    /// Receiver penalty.
    Pen,
    PenCap,
    /// Write the state back, present the window.
    Write,
    /// Until the window is taken.
    Out,
    /// Divider and multiplier steps; they return to `ret`.
    Div,
    Mul,
}

/// The unit. Ports are described in `docs/hw/nscc.md`.
#[derive(LogicBlock, Default)]
pub struct NsccUnit {
    pub clock: Signal<In, Clock>,
    // Feedback records.
    pub fb_valid: Signal<In, Bit>,
    pub fb_ready: Signal<Out, Bit>,
    pub fb_kind: Signal<In, Bits<2>>,
    pub fb_qp: Signal<In, Bits<8>>,
    /// ACK: bytes acked; LOSS: bytes lost.
    pub fb_bytes: Signal<In, Bits<32>>,
    pub fb_ecn: Signal<In, Bit>,
    pub fb_rtt_valid: Signal<In, Bit>,
    pub fb_rtt_ns: Signal<In, Bits<32>>,
    pub fb_penalty: Signal<In, Bits<7>>,
    pub fb_restore: Signal<In, Bit>,
    /// Time of the record, ns (free-running, wrapping).
    pub fb_now_ns: Signal<In, Bits<32>>,
    pub cfg: ConfigSink,
    t_cc: TableId<{ table::CC }>,
    t_nscc: TableId<{ table::NSCC }>,
    // Window writes.
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    pub out_qp: Signal<Out, Bits<8>>,
    pub out_cwnd: Signal<Out, Bits<32>>,
    // Memories.
    st_ram: RAM<NsccStateWord, 8>,
    /// Table 10's `{max_cwnd, min_cwnd}`.
    cc_ram: RAM<Bits<64>, 8>,
    ncfg_ram: RAM<Bits<CFG_ROW_BITS>, 8>,
    // Sequencer.
    state: DFF<NsccState>,
    ret: DFF<NsccState>,
    // The record.
    r_kind: DFF<Bits<2>>,
    r_qp: DFF<Bits<8>>,
    r_bytes: DFF<Bits<32>>,
    r_ecn: DFF<Bit>,
    r_rv: DFF<Bit>,
    r_rtt: DFF<Bits<32>>,
    r_pen: DFF<Bits<7>>,
    r_restore: DFF<Bit>,
    r_now: DFF<Bits<32>>,
    // The QP's state (the window is wider while a rule runs).
    s_cwnd: DFF<Bits<48>>,
    s_base: DFF<Bits<32>>,
    s_delay: DFF<Bits<32>>,
    s_avg: DFF<Bits<40>>,
    s_streak: DFF<Bits<32>>,
    s_ldec: DFF<Bits<32>>,
    s_ldec_v: DFF<Bit>,
    s_pre: DFF<Bits<40>>,
    s_pre_v: DFF<Bit>,
    // Its parameters.
    c_min: DFF<Bits<48>>,
    c_max: DFF<Bits<48>>,
    p_base: DFF<Bits<32>>,
    p_target: DFF<Bits<32>>,
    p_inc: DFF<Bits<32>>,
    p_init: DFF<Bits<32>>,
    p_gain: DFF<Bits<17>>,
    // Intermediate results.
    r_share: DFF<Bits<17>>,
    r_up: DFF<Bit>,
    r_pen_done: DFF<Bit>,
    // Comparisons registered every cycle (read one state later).
    f_dlt: DFF<Bit>,
    f_supp: DFF<Bit>,
    f_avg_le: DFF<Bit>,
    f_fast: DFF<Bit>,
    // Divider: `min(floor(n * 65536 / d), 65536)`.
    d_rem: DFF<Bits<41>>,
    d_den: DFF<Bits<41>>,
    d_q: DFF<Bits<17>>,
    d_cnt: DFF<Bits<5>>,
    // Multiplier: `m_acc = x * y`, the result `m_acc >> 16`.
    m_acc: DFF<Bits<64>>,
    m_x: DFF<Bits<64>>,
    m_y: DFF<Bits<20>>,
    // Output.
    o_valid: DFF<Bit>,
    o_qp: DFF<Bits<8>>,
    o_cwnd: DFF<Bits<32>>,
    // Combinational.
    ld_min0: Signal<Local, Bits<32>>,
    ld_max0: Signal<Local, Bits<32>>,
    ld_min: Signal<Local, Bits<32>>,
    ld_max: Signal<Local, Bits<32>>,
    div_go: Signal<Local, Bit>,
    div_n: Signal<Local, Bits<41>>,
    div_d: Signal<Local, Bits<41>>,
    div_ret: Signal<Local, NsccState>,
    mul_go: Signal<Local, Bit>,
    mul_x: Signal<Local, Bits<64>>,
    mul_y: Signal<Local, Bits<20>>,
    mul_ret: Signal<Local, NsccState>,
    dv_t: Signal<Local, Bits<41>>,
    dv_sub: Signal<Local, Bits<41>>,
    mu_sum: Signal<Local, Bits<64>>,
    mu_y2: Signal<Local, Bits<20>>,
    m_res: Signal<Local, Bits<48>>,
    bytes_fx: Signal<Local, Bits<48>>,
    inc_fx: Signal<Local, Bits<48>>,
    rtt_lt: Signal<Local, Bit>,
    new_base: Signal<Local, Bits<32>>,
    delay_fx: Signal<Local, Bits<40>>,
    avg_d_up: Signal<Local, Bits<40>>,
    avg_d_dn: Signal<Local, Bits<40>>,
    below4: Signal<Local, Bits<20>>,
    gain_pi: Signal<Local, Bits<20>>,
    avg_up: Signal<Local, Bits<40>>,
    avg_dn: Signal<Local, Bits<40>>,
    t_minus_d: Signal<Local, Bits<32>>,
    d8: Signal<Local, Bits<35>>,
    cw_sum: Signal<Local, Bits<48>>,
    cw_diff: Signal<Local, Bits<48>>,
    streak_sum: Signal<Local, Bits<33>>,
    streak_fx: Signal<Local, Bits<48>>,
    half_acked: Signal<Local, Bits<48>>,
    elapsed: Signal<Local, Bits<32>>,
    period: Signal<Local, Bits<33>>,
    target_fx: Signal<Local, Bits<40>>,
    avg_over: Signal<Local, Bits<40>>,
    pen_sh: Signal<Local, Bits<4>>,
    cap: Signal<Local, Bits<48>>,
}

impl Logic for NsccUnit {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, ret, r_kind, r_qp, r_bytes, r_ecn, r_rv, r_rtt, r_pen, r_restore, r_now, s_cwnd,
            s_base, s_delay, s_avg, s_streak, s_ldec, s_ldec_v, s_pre, s_pre_v, c_min, c_max, p_base, p_target, p_inc,
            p_init, p_gain, r_share, r_up, r_pen_done, f_dlt, f_supp, f_avg_le, f_fast, d_rem, d_den, d_q, d_cnt,
            m_acc, m_x, m_y, o_valid, o_qp, o_cwnd
        );
        self.st_ram.read_clock.next = self.clock.val();
        self.st_ram.write_clock.next = self.clock.val();
        self.cc_ram.read_clock.next = self.clock.val();
        self.cc_ram.write_clock.next = self.clock.val();
        self.ncfg_ram.read_clock.next = self.clock.val();
        self.ncfg_ram.write_clock.next = self.clock.val();

        // Config: table 10's bounds (snooped; the CC gate owns the table)
        // and table 14's parameters.
        self.cc_ram.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.cc_ram.write_data.next = bit_cast::<64, 32>(self.cfg.data.val().get_value_cc_min_cwnd())
            | (bit_cast::<64, 32>(self.cfg.data.val().get_value_cc_max_cwnd()) << 32);
        self.cc_ram.write_enable.next = self.cfg.valid.val() & (self.cfg.table.val() == self.t_cc.val());
        self.ncfg_ram.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.ncfg_ram.write_data.next = bit_cast::<CFG_ROW_BITS, 256>(self.cfg.data.val());
        self.ncfg_ram.write_enable.next = self.cfg.valid.val() & (self.cfg.table.val() == self.t_nscc.val());

        // Reads: the record's QP while idle, then held.
        self.fb_ready.next = self.state.q.val() == NsccState::Idle;
        if self.state.q.val() == NsccState::Idle {
            self.st_ram.read_address.next = self.fb_qp.val();
            self.cc_ram.read_address.next = self.fb_qp.val();
            self.ncfg_ram.read_address.next = self.fb_qp.val();
        } else {
            self.st_ram.read_address.next = self.r_qp.q.val();
            self.cc_ram.read_address.next = self.r_qp.q.val();
            self.ncfg_ram.read_address.next = self.r_qp.q.val();
        }
        self.st_ram.write_address.next = self.r_qp.q.val();
        self.st_ram.write_data.next.cwnd = self.s_cwnd.q.val().get_bits::<40>(0);
        self.st_ram.write_data.next.base = self.s_base.q.val();
        self.st_ram.write_data.next.delay = self.s_delay.q.val();
        self.st_ram.write_data.next.avg = self.s_avg.q.val();
        self.st_ram.write_data.next.streak = self.s_streak.q.val();
        self.st_ram.write_data.next.last_dec = self.s_ldec.q.val();
        self.st_ram.write_data.next.last_dec_valid = self.s_ldec_v.q.val();
        self.st_ram.write_data.next.pre = self.s_pre.q.val();
        self.st_ram.write_data.next.pre_valid = self.s_pre_v.q.val();
        self.st_ram.write_enable.next = self.state.q.val() == NsccState::Write;

        self.out_valid.next = self.o_valid.q.val();
        self.out_qp.next = self.o_qp.q.val();
        self.out_cwnd.next = self.o_cwnd.q.val();

        // Shared arithmetic, from registers.
        self.m_res.next = self.m_acc.q.val().get_bits::<48>(16);
        self.dv_t.next = self.d_rem.q.val() << 1;
        self.dv_sub.next = self.dv_t.val() - self.d_den.q.val();
        self.mu_sum.next = self.m_acc.q.val() + self.m_x.q.val();
        self.mu_y2.next = self.m_y.q.val() >> 1;
        self.bytes_fx.next = bit_cast::<48, 32>(self.r_bytes.q.val()) << 8;
        self.inc_fx.next = bit_cast::<48, 32>(self.p_inc.q.val()) << 8;
        self.half_acked.next = bit_cast::<48, 32>(self.r_bytes.q.val()) << 7;
        self.ld_min0.next = self.cc_ram.read_data.val().get_bits::<32>(0);
        self.ld_max0.next = self.cc_ram.read_data.val().get_bits::<32>(32);
        if self.ld_min0.val().any() {
            self.ld_min.next = self.ld_min0.val();
        } else {
            self.ld_min.next = 1.into();
        }
        if self.ld_max0.val() < self.ld_min.val() {
            self.ld_max.next = self.ld_min.val();
        } else {
            self.ld_max.next = self.ld_max0.val();
        }
        self.rtt_lt.next = self.r_rtt.q.val().any() & (self.r_rtt.q.val() < self.s_base.q.val());
        if self.rtt_lt.val() {
            self.new_base.next = self.r_rtt.q.val();
        } else {
            self.new_base.next = self.s_base.q.val();
        }
        self.delay_fx.next = bit_cast::<40, 32>(self.s_delay.q.val()) << 8;
        self.avg_d_up.next = self.delay_fx.val() - self.s_avg.q.val();
        self.avg_d_dn.next = self.s_avg.q.val() - self.delay_fx.val();
        // 1 + 4 (T - d) / T, Q16.
        self.below4.next = bit_cast::<20, 17>(self.d_q.q.val()) << 2;
        self.gain_pi.next = self.below4.val() + 65536;
        self.avg_up.next = self.s_avg.q.val() + self.m_res.val().get_bits::<40>(0);
        self.avg_dn.next = self.s_avg.q.val() - self.m_res.val().get_bits::<40>(0);
        self.t_minus_d.next = self.p_target.q.val() - self.s_delay.q.val();
        self.d8.next = bit_cast::<35, 32>(self.s_delay.q.val()) << 3;
        self.cw_sum.next = self.s_cwnd.q.val() + self.m_res.val();
        self.cw_diff.next = self.s_cwnd.q.val() - self.m_res.val();
        self.streak_sum.next = bit_cast::<33, 32>(self.s_streak.q.val()) + bit_cast::<33, 32>(self.r_bytes.q.val());
        self.streak_fx.next = bit_cast::<48, 32>(self.s_streak.q.val()) << 8;
        self.elapsed.next = self.r_now.q.val() - self.s_ldec.q.val();
        self.period.next = bit_cast::<33, 32>(self.s_base.q.val()) + bit_cast::<33, 32>(self.p_target.q.val());
        self.target_fx.next = bit_cast::<40, 32>(self.p_target.q.val()) << 8;
        self.avg_over.next = self.s_avg.q.val() - self.target_fx.val();
        self.pen_sh.next = self.r_pen.q.val().get_bits::<4>(3);
        self.cap.next = self.m_res.val() >> self.pen_sh.val();

        self.f_dlt.d.next = self.s_delay.q.val() < self.p_target.q.val();
        self.f_supp.d.next = self.s_ldec_v.q.val() & (bit_cast::<33, 32>(self.elapsed.val()) < self.period.val());
        self.f_avg_le.d.next = self.s_avg.q.val() <= self.target_fx.val();
        self.f_fast.d.next = self.d8.val() <= bit_cast::<35, 32>(self.p_target.q.val());

        self.div_go.next = false;
        self.div_n.next = 0.into();
        self.div_d.next = 0.into();
        self.div_ret.next = NsccState::Idle;
        self.mul_go.next = false;
        self.mul_x.next = 0.into();
        self.mul_y.next = 0.into();
        self.mul_ret.next = NsccState::Idle;

        match self.state.q.val() {
            NsccState::Idle => {
                if self.fb_valid.val() {
                    self.r_kind.d.next = self.fb_kind.val();
                    self.r_qp.d.next = self.fb_qp.val();
                    self.r_bytes.d.next = self.fb_bytes.val();
                    self.r_ecn.d.next = self.fb_ecn.val();
                    self.r_rv.d.next = self.fb_rtt_valid.val();
                    self.r_rtt.d.next = self.fb_rtt_ns.val();
                    self.r_pen.d.next = self.fb_penalty.val();
                    self.r_restore.d.next = self.fb_restore.val();
                    self.r_now.d.next = self.fb_now_ns.val();
                    self.r_pen_done.d.next = false;
                    self.state.d.next = NsccState::Load;
                }
            }
            NsccState::Load => {
                self.s_cwnd.d.next = bit_cast::<48, 40>(self.st_ram.read_data.val().cwnd);
                self.s_base.d.next = self.st_ram.read_data.val().base;
                self.s_delay.d.next = self.st_ram.read_data.val().delay;
                self.s_avg.d.next = self.st_ram.read_data.val().avg;
                self.s_streak.d.next = self.st_ram.read_data.val().streak;
                self.s_ldec.d.next = self.st_ram.read_data.val().last_dec;
                self.s_ldec_v.d.next = self.st_ram.read_data.val().last_dec_valid;
                self.s_pre.d.next = self.st_ram.read_data.val().pre;
                self.s_pre_v.d.next = self.st_ram.read_data.val().pre_valid;
                self.c_min.d.next = bit_cast::<48, 32>(self.ld_min.val()) << 8;
                self.c_max.d.next = bit_cast::<48, 32>(self.ld_max.val()) << 8;
                self.p_base.d.next = self.ncfg_ram.read_data.val().get_value_nscc_base_rtt_ns();
                self.p_target.d.next = self.ncfg_ram.read_data.val().get_value_nscc_target_ns();
                self.p_inc.d.next = self.ncfg_ram.read_data.val().get_value_nscc_increase_bytes();
                self.p_init.d.next = self.ncfg_ram.read_data.val().get_value_nscc_init_cwnd();
                self.p_gain.d.next = self.ncfg_ram.read_data.val().get_value_nscc_decrease_gain();
                self.state.d.next = NsccState::Dispatch;
            }
            NsccState::Dispatch => {
                if self.r_kind.q.val() == 0 {
                    self.s_cwnd.d.next = bit_cast::<48, 32>(self.p_init.q.val()) << 8;
                    self.s_base.d.next = self.p_base.q.val();
                    self.s_delay.d.next = 0.into();
                    self.s_avg.d.next = 0.into();
                    self.s_streak.d.next = 0.into();
                    self.s_ldec.d.next = 0.into();
                    self.s_ldec_v.d.next = false;
                    self.s_pre.d.next = 0.into();
                    self.s_pre_v.d.next = false;
                    self.state.d.next = NsccState::Clamp;
                } else if self.r_kind.q.val() == 1 {
                    if self.r_rv.q.val() {
                        self.state.d.next = NsccState::Rtt;
                    } else {
                        self.state.d.next = NsccState::Judge;
                    }
                } else if self.r_kind.q.val() == 2 {
                    if self.bytes_fx.val() >= self.s_cwnd.q.val() {
                        self.s_cwnd.d.next = 0.into();
                    } else {
                        self.s_cwnd.d.next = self.s_cwnd.q.val() - self.bytes_fx.val();
                    }
                    self.s_streak.d.next = 0.into();
                    self.state.d.next = NsccState::Clamp;
                } else {
                    if self.inc_fx.val() < self.s_cwnd.q.val() {
                        self.s_cwnd.d.next = self.inc_fx.val();
                    }
                    self.s_streak.d.next = 0.into();
                    self.s_ldec.d.next = self.r_now.q.val();
                    self.s_ldec_v.d.next = true;
                    self.state.d.next = NsccState::Clamp;
                }
            }
            NsccState::Rtt => {
                self.s_base.d.next = self.new_base.val();
                if self.r_rtt.q.val() > self.new_base.val() {
                    self.s_delay.d.next = self.r_rtt.q.val() - self.new_base.val();
                } else {
                    self.s_delay.d.next = 0.into();
                }
                self.state.d.next = NsccState::AvgStart;
            }
            NsccState::AvgStart => {
                self.r_up.d.next = self.delay_fx.val() >= self.s_avg.q.val();
                self.mul_go.next = true;
                if self.delay_fx.val() >= self.s_avg.q.val() {
                    self.mul_x.next = bit_cast::<64, 40>(self.avg_d_up.val());
                } else {
                    self.mul_x.next = bit_cast::<64, 40>(self.avg_d_dn.val());
                }
                self.mul_y.next = 819.into();
                self.mul_ret.next = NsccState::AvgApply;
            }
            NsccState::AvgApply => {
                if self.r_up.q.val() {
                    self.s_avg.d.next = self.avg_up.val();
                } else {
                    self.s_avg.d.next = self.avg_dn.val();
                }
                self.state.d.next = NsccState::Judge;
            }
            NsccState::Judge => {
                self.state.d.next = NsccState::React;
            }
            NsccState::React => {
                if !self.r_ecn.q.val() {
                    // Both increases start with acked / cwnd.
                    self.div_go.next = true;
                    self.div_n.next = bit_cast::<41, 48>(self.bytes_fx.val());
                    self.div_d.next = bit_cast::<41, 48>(self.s_cwnd.q.val());
                    if self.f_dlt.q.val() {
                        self.div_ret.next = NsccState::PiBelow;
                    } else {
                        self.div_ret.next = NsccState::FiMul;
                    }
                } else if self.f_dlt.q.val() {
                    // Hold.
                    self.s_streak.d.next = 0.into();
                    self.state.d.next = NsccState::Clamp;
                } else if self.f_supp.q.val() {
                    // A decrease less than base + target ago.
                    self.state.d.next = NsccState::Clamp;
                } else if self.f_avg_le.q.val() {
                    self.state.d.next = NsccState::Clamp;
                } else {
                    self.div_go.next = true;
                    self.div_n.next = bit_cast::<41, 40>(self.avg_over.val());
                    self.div_d.next = bit_cast::<41, 40>(self.s_avg.q.val());
                    self.div_ret.next = NsccState::MdMul1;
                }
            }
            NsccState::PiBelow => {
                self.r_share.d.next = self.d_q.q.val();
                self.div_go.next = true;
                self.div_n.next = bit_cast::<41, 32>(self.t_minus_d.val());
                self.div_d.next = bit_cast::<41, 32>(self.p_target.q.val());
                self.div_ret.next = NsccState::PiMul1;
            }
            NsccState::PiMul1 => {
                // d_q: (T - d) / T, kept in the divider's register.
                self.mul_go.next = true;
                self.mul_x.next = bit_cast::<64, 48>(self.inc_fx.val());
                self.mul_y.next = bit_cast::<20, 17>(self.r_share.q.val());
                self.mul_ret.next = NsccState::PiMul2;
            }
            NsccState::PiMul2 => {
                self.mul_go.next = true;
                self.mul_x.next = bit_cast::<64, 48>(self.m_res.val());
                self.mul_y.next = self.gain_pi.val();
                self.mul_ret.next = NsccState::PiAdd;
            }
            NsccState::PiAdd => {
                self.s_cwnd.d.next = self.cw_sum.val();
                if self.f_fast.q.val() {
                    if self.streak_sum.val().get_bit(32) {
                        self.s_streak.d.next = 0xFFFF_FFFF_u64.into();
                    } else {
                        self.s_streak.d.next = self.streak_sum.val().get_bits::<32>(0);
                    }
                    self.state.d.next = NsccState::PiFast;
                } else {
                    self.s_streak.d.next = 0.into();
                    self.state.d.next = NsccState::Clamp;
                }
            }
            NsccState::PiFast => {
                if self.streak_fx.val() >= self.s_cwnd.q.val() {
                    self.s_cwnd.d.next = self.s_cwnd.q.val() + self.half_acked.val();
                }
                self.state.d.next = NsccState::Clamp;
            }
            NsccState::FiMul => {
                self.mul_go.next = true;
                self.mul_x.next = bit_cast::<64, 48>(self.inc_fx.val()) >> 2;
                self.mul_y.next = bit_cast::<20, 17>(self.d_q.q.val());
                self.mul_ret.next = NsccState::FiAdd;
            }
            NsccState::FiAdd => {
                self.s_cwnd.d.next = self.cw_sum.val();
                self.s_streak.d.next = 0.into();
                self.state.d.next = NsccState::Clamp;
            }
            NsccState::MdMul1 => {
                self.mul_go.next = true;
                self.mul_x.next = bit_cast::<64, 17>(self.p_gain.q.val());
                self.mul_y.next = bit_cast::<20, 17>(self.d_q.q.val());
                self.mul_ret.next = NsccState::MdMul2;
            }
            NsccState::MdMul2 => {
                if !self.m_res.val().any() {
                    self.state.d.next = NsccState::Clamp;
                } else {
                    self.mul_go.next = true;
                    self.mul_x.next = bit_cast::<64, 48>(self.s_cwnd.q.val());
                    if self.m_res.val() > 32768 {
                        self.mul_y.next = 32768.into();
                    } else {
                        self.mul_y.next = self.m_res.val().get_bits::<20>(0);
                    }
                    self.mul_ret.next = NsccState::MdApply;
                }
            }
            NsccState::MdApply => {
                self.s_cwnd.d.next = self.cw_diff.val();
                self.s_ldec.d.next = self.r_now.q.val();
                self.s_ldec_v.d.next = true;
                self.s_streak.d.next = 0.into();
                self.state.d.next = NsccState::Clamp;
            }
            NsccState::Clamp => {
                if self.s_cwnd.q.val() < self.c_min.q.val() {
                    self.s_cwnd.d.next = self.c_min.q.val();
                } else if self.s_cwnd.q.val() > self.c_max.q.val() {
                    self.s_cwnd.d.next = self.c_max.q.val();
                }
                if (self.r_kind.q.val() == 1) & !self.r_pen_done.q.val() {
                    self.state.d.next = NsccState::Pen;
                } else {
                    self.state.d.next = NsccState::Write;
                }
            }
            NsccState::Pen => {
                self.r_pen_done.d.next = true;
                if self.r_pen.q.val().any() {
                    // cap = max_cwnd x 2^(-(p & 7) / 8) >> (p >> 3)
                    self.mul_go.next = true;
                    self.mul_x.next = bit_cast::<64, 48>(self.c_max.q.val());
                    self.mul_y.next = 65536.into();
                    if self.r_pen.q.val().get_bits::<3>(0) == 1 {
                        self.mul_y.next = 60097.into();
                    } else if self.r_pen.q.val().get_bits::<3>(0) == 2 {
                        self.mul_y.next = 55109.into();
                    } else if self.r_pen.q.val().get_bits::<3>(0) == 3 {
                        self.mul_y.next = 50535.into();
                    } else if self.r_pen.q.val().get_bits::<3>(0) == 4 {
                        self.mul_y.next = 46341.into();
                    } else if self.r_pen.q.val().get_bits::<3>(0) == 5 {
                        self.mul_y.next = 42495.into();
                    } else if self.r_pen.q.val().get_bits::<3>(0) == 6 {
                        self.mul_y.next = 38968.into();
                    } else if self.r_pen.q.val().get_bits::<3>(0) == 7 {
                        self.mul_y.next = 35734.into();
                    }
                    self.mul_ret.next = NsccState::PenCap;
                } else if self.s_pre_v.q.val() {
                    self.s_pre_v.d.next = false;
                    if self.r_restore.q.val() & (bit_cast::<48, 40>(self.s_pre.q.val()) > self.s_cwnd.q.val()) {
                        self.s_cwnd.d.next = bit_cast::<48, 40>(self.s_pre.q.val());
                    }
                    self.state.d.next = NsccState::Clamp;
                } else {
                    self.state.d.next = NsccState::Write;
                }
            }
            NsccState::PenCap => {
                if self.s_cwnd.q.val() > self.cap.val() {
                    if !self.s_pre_v.q.val() {
                        self.s_pre.d.next = self.s_cwnd.q.val().get_bits::<40>(0);
                        self.s_pre_v.d.next = true;
                    }
                    self.s_cwnd.d.next = self.cap.val();
                    self.state.d.next = NsccState::Clamp;
                } else {
                    self.state.d.next = NsccState::Write;
                }
            }
            NsccState::Write => {
                self.o_valid.d.next = true;
                self.o_qp.d.next = self.r_qp.q.val();
                self.o_cwnd.d.next = self.s_cwnd.q.val().get_bits::<32>(8);
                self.state.d.next = NsccState::Out;
            }
            NsccState::Out => {
                if self.out_ready.val() {
                    self.o_valid.d.next = false;
                    self.state.d.next = NsccState::Idle;
                }
            }
            NsccState::Div => {
                if self.d_cnt.q.val() == 17 {
                    // n >= d: a quotient of 1 at once.
                    if self.d_rem.q.val() >= self.d_den.q.val() {
                        self.d_q.d.next = 65536.into();
                        self.state.d.next = self.ret.q.val();
                    }
                } else if self.dv_t.val() >= self.d_den.q.val() {
                    self.d_rem.d.next = self.dv_sub.val();
                    self.d_q.d.next = (self.d_q.q.val() << 1) | 1;
                } else {
                    self.d_rem.d.next = self.dv_t.val();
                    self.d_q.d.next = self.d_q.q.val() << 1;
                }
                self.d_cnt.d.next = self.d_cnt.q.val() - 1;
                if self.d_cnt.q.val() == 1 {
                    self.state.d.next = self.ret.q.val();
                }
            }
            NsccState::Mul => {
                if self.m_y.q.val().get_bit(0) {
                    self.m_acc.d.next = self.mu_sum.val();
                }
                self.m_x.d.next = self.m_x.q.val() << 1;
                self.m_y.d.next = self.mu_y2.val();
                if !self.mu_y2.val().any() {
                    self.state.d.next = self.ret.q.val();
                }
            }
        }

        // Start the divider or the multiplier.
        if self.div_go.val() {
            self.ret.d.next = self.div_ret.val();
            self.d_rem.d.next = self.div_n.val();
            self.d_den.d.next = self.div_d.val();
            self.d_q.d.next = 0.into();
            self.d_cnt.d.next = 17.into();
            self.state.d.next = NsccState::Div;
        }
        if self.mul_go.val() {
            self.ret.d.next = self.mul_ret.val();
            self.m_acc.d.next = 0.into();
            self.m_x.d.next = self.mul_x.val();
            self.m_y.d.next = self.mul_y.val();
            self.state.d.next = NsccState::Mul;
        }
    }
}
