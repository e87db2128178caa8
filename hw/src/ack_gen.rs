//! Responder ACK/SACK/NACK generator with coalescing, per QP: the rules of
//! `proto::model::mrc` sections 3.3 and 3.4 (`docs/model-mrc.md`). One
//! record per received data packet (after the SACK table's verdict and
//! the placement check) goes in; a TX header request (SACK or NACK) comes
//! out. See `docs/hw/ack_gen.md`.
//!
//! A one-stage read-modify-write pipeline over per-QP state held in RAM:
//! the record is taken at an edge (the RAM reads are issued), decided in
//! the next cycle (state written back, output fields registered). A SACK
//! then requests a bitmap snapshot from the SACK table and waits for it;
//! the TX request is held until `tx_ready`. The coalescing timer is a
//! per-QP deadline in RAM visited by a round-robin scanner that uses the
//! pipeline's idle cycles.

use contract::config::table;
use rust_hdl::prelude::*;

use crate::bus::ConfigSink;

use crate::contract_rows::{AckParamsRow, AddrRow, RecvInitRow, TableId};
use crate::ev_selector::VALUE_BITS;

/// log2 of the number of QPs.
pub const QP_BITS: usize = 8;

/// `tx_kind` values.
pub mod kind {
    /// SACK: ACK opcode, AETH ACK syndrome, MRC SACK extension.
    pub const SACK: u8 = 1;
    /// NACK: ACK opcode, AETH NAK syndrome, MRC NACK extension.
    pub const NACK: u8 = 2;
}

/// `tx_nack_kind` values (= `proto::wire::NackKind` discriminants).
pub mod nack {
    pub const TRIMMED: u8 = 1;
    pub const OUT_OF_WINDOW: u8 = 2;
    pub const REMOTE_ACCESS: u8 = 3;
}

/// The verdicts on `in_verdict` (as `hw::sack_table::verdict`).
pub mod verdict {
    pub const NEW: u8 = 1;
    pub const DUPLICATE: u8 = 2;
    pub const OUT_OF_WINDOW: u8 = 3;
}

/// The block. Ports are documented in `docs/hw/ack_gen.md`.
#[derive(LogicBlock, Default)]
pub struct AckGen {
    pub clock: Signal<In, Clock>,
    // Packet record.
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub in_qp: Signal<In, Bits<QP_BITS>>,
    pub in_psn: Signal<In, Bits<24>>,
    pub in_verdict: Signal<In, Bits<2>>,
    pub in_ack_req: Signal<In, Bit>,
    pub in_trimmed: Signal<In, Bit>,
    pub in_ecn_ce: Signal<In, Bit>,
    pub in_reject: Signal<In, Bit>,
    pub in_drop: Signal<In, Bit>,
    pub in_expected: Signal<In, Bits<24>>,
    pub in_msn: Signal<In, Bits<24>>,
    /// `in_msn` is the QP's MSN after this packet; clear, the stored MSN
    /// stays (the packet completed nothing: the RX path knows the MSN
    /// only from the completion tracker's walk of an advance).
    pub in_msn_valid: Signal<In, Bit>,
    pub in_ev: Signal<In, Bits<VALUE_BITS>>,
    pub in_ev_index: Signal<In, Bits<16>>,
    pub in_echo_ts: Signal<In, Bits<32>>,
    /// The record is a reliability probe: `in_ev`, `in_ev_index` (the MRC
    /// 1.0 probe id, or the legacy probe's EV index) and `in_echo_ts` (its
    /// timestamp) are the probe's, the other fields are not read.
    pub in_probe: Signal<In, Bit>,
    /// The probe is a legacy one (`in_probe_id` its id): answered with a
    /// legacy probe response, which leaves the ECN count alone (the
    /// legacy model's answer reports none).
    pub in_probe_legacy: Signal<In, Bit>,
    pub in_probe_id: Signal<In, Bits<32>>,
    /// The core's ns clock (`hw::core`'s `now_ns`): a record is stamped
    /// with it when it is taken, so that a SACK it triggers can say how
    /// long the responder held it (the legacy `service_ns`, the MRC 1.0
    /// echo's advance).
    pub now_ns: Signal<In, Bits<32>>,
    // Config port.
    pub cfg: ConfigSink,
    t_params: TableId<{ table::ACK_PARAMS }>,
    t_qp_init: TableId<{ table::ACK_QP_INIT }>,
    t_addr: TableId<{ table::ADDR }>,
    /// The own address row's index (`contract::config::INDEX_SELECT`).
    k_own_row: crate::param::Param<16, { contract::config::INDEX_SELECT as u64 }>,
    // Snapshot request to the SACK table and its answer.
    pub snap_valid: Signal<Out, Bit>,
    pub snap_ready: Signal<In, Bit>,
    pub snap_qp: Signal<Out, Bits<QP_BITS>>,
    pub snap_base: Signal<Out, Bits<24>>,
    pub snap_out_valid: Signal<In, Bit>,
    pub snap_bitmap: Signal<In, Bits<64>>,
    // TX header request.
    pub tx_valid: Signal<Out, Bit>,
    pub tx_ready: Signal<In, Bit>,
    pub tx_qp: Signal<Out, Bits<QP_BITS>>,
    pub tx_kind: Signal<Out, Bits<2>>,
    pub tx_psn: Signal<Out, Bits<24>>,
    pub tx_cum: Signal<Out, Bits<24>>,
    /// A SACK's trigger: the data packet it answers (the record's own,
    /// or the stored one for a coalescing timer's SACK). An MRC 1.0 SACK
    /// names it by its offset from `tx_cum` (SETH ack_psn_offset).
    pub tx_trigger_psn: Signal<Out, Bits<24>>,
    pub tx_msn: Signal<Out, Bits<24>>,
    pub tx_nack_kind: Signal<Out, Bits<2>>,
    pub tx_nak_code: Signal<Out, Bits<5>>,
    pub tx_base: Signal<Out, Bits<24>>,
    pub tx_bitmap: Signal<Out, Bits<64>>,
    pub tx_ecn_count: Signal<Out, Bits<16>>,
    /// The SACK's trigger (the packet it answers at once: a new one, or a
    /// duplicate) arrived ECN-CE marked: an MRC 1.0 SACK asks the sender
    /// to SKIP its EV once (SETH m = SKIP_ONCE, the model's
    /// `choices::skip_mode_for`). Low for a timer's SACK (a CE-marked
    /// packet is acknowledged at once on the MRC 1.0 wire, so a stored
    /// trigger is never one) and a probe's answer.
    pub tx_trigger_ce: Signal<Out, Bit>,
    pub tx_ev: Signal<Out, Bits<VALUE_BITS>>,
    pub tx_ev_index: Signal<Out, Bits<16>>,
    pub tx_echo_ts: Signal<Out, Bits<32>>,
    /// The SACK answers a probe: SETH pr = 1, `tx_ev_index` is the probe
    /// id (the ack PSN offset), `tx_echo_ts` its timestamp.
    pub tx_probe: Signal<Out, Bit>,
    /// The probe answered is a legacy one: a legacy probe response with
    /// `tx_ev_index` (its EV index), `tx_probe_id` and `tx_echo_ts`.
    pub tx_probe_legacy: Signal<Out, Bit>,
    pub tx_probe_id: Signal<Out, Bits<32>>,
    /// When the SACK's trigger was taken (`now_ns`): the TX path sends the
    /// time since as the responder's service time.
    pub tx_arrival_ns: Signal<Out, Bits<32>>,
    // Counter pulses.
    pub cnt_timer_sack: Signal<Out, Bit>,
    /// Pulse: a record was absorbed without any effect (`in_drop`, or
    /// the invalid verdict 0).
    pub cnt_dropped: Signal<Out, Bit>,
    // Per-QP state, one RAM per field, all addressed by QP.
    exp_ram: RAM<Bits<24>, QP_BITS>,
    high_ram: RAM<Bits<24>, QP_BITS>,
    msn_ram: RAM<Bits<24>, QP_BITS>,
    unack_ram: RAM<Bits<16>, QP_BITS>,
    ecn_ram: RAM<Bits<16>, QP_BITS>,
    armed_ram: RAM<Bit, QP_BITS>,
    dl_ram: RAM<Bits<16>, QP_BITS>,
    tpsn_ram: RAM<Bits<24>, QP_BITS>,
    tev_ram: RAM<Bits<VALUE_BITS>, QP_BITS>,
    tevi_ram: RAM<Bits<16>, QP_BITS>,
    techo_ram: RAM<Bits<32>, QP_BITS>,
    /// The stored trigger's arrival (`now_ns` when it was taken).
    tarr_ram: RAM<Bits<32>, QP_BITS>,
    // Parameters.
    ack_every: DFF<Bits<16>>,
    /// `ack_every - 1`, inverted, and `ack_every != 0`, kept with it (both
    /// reset to 0, which matches `ack_every` = 0): the coalescing test
    /// `saturating(unack + 1) >= ack_every` becomes `ack_every == 0 |
    /// unack >= ack_every - 1`, one compare on the RAM output.
    ack_every_m1_n: DFF<Bits<16>>,
    ack_every_nz: DFF<Bit>,
    /// The card sends MRC 1.0 (its own address row's `wire_mrc10`): a
    /// CE-marked packet is acknowledged at once
    /// (`proto::wire::mrc10::choices::sack_at_once_for`), as the MRC 1.0
    /// model does; the legacy model coalesces it.
    ce_at_once: DFF<Bit>,
    ack_delay: DFF<Bits<16>>,
    // Free-running cycle counter for the coalescing deadlines.
    now: DFF<Bits<16>>,
    // Pending QP init (applied in a cycle without a write-back).
    cfg_pend: DFF<Bit>,
    cfg_qp: DFF<Bits<QP_BITS>>,
    cfg_psn: DFF<Bits<24>>,
    // Timer scanner position.
    scan_qp: DFF<Bits<QP_BITS>>,
    // Stage 1: a packet record or a scan visit, RAM data arriving.
    s1_v: DFF<Bit>,
    s1_scan: DFF<Bit>,
    s1_qp: DFF<Bits<QP_BITS>>,
    s1_psn: DFF<Bits<24>>,
    s1_verdict: DFF<Bits<2>>,
    s1_ack_req: DFF<Bit>,
    s1_trimmed: DFF<Bit>,
    s1_ecn: DFF<Bit>,
    s1_reject: DFF<Bit>,
    s1_drop: DFF<Bit>,
    s1_exp: DFF<Bits<24>>,
    s1_msn: DFF<Bits<24>>,
    s1_msn_v: DFF<Bit>,
    s1_ev: DFF<Bits<VALUE_BITS>>,
    s1_evi: DFF<Bits<16>>,
    s1_echo: DFF<Bits<32>>,
    /// `now_ns` when the record was taken: its arrival if it becomes the
    /// trigger (stage 1 may hold it while a SACK goes out).
    s1_now: DFF<Bits<32>>,
    s1_probe: DFF<Bit>,
    s1_plegacy: DFF<Bit>,
    s1_pid: DFF<Bits<32>>,
    // Output side: 0 run, 1 snapshot request, 2 snapshot wait, 3 emit.
    mode: DFF<Bits<2>>,
    o_qp: DFF<Bits<QP_BITS>>,
    o_kind: DFF<Bits<2>>,
    o_psn: DFF<Bits<24>>,
    o_tpsn: DFF<Bits<24>>,
    o_cum: DFF<Bits<24>>,
    o_msn: DFF<Bits<24>>,
    o_nack_kind: DFF<Bits<2>>,
    o_code: DFF<Bits<5>>,
    o_base: DFF<Bits<24>>,
    o_bitmap: DFF<Bits<64>>,
    o_ecn: DFF<Bits<16>>,
    o_tce: DFF<Bit>,
    o_ev: DFF<Bits<VALUE_BITS>>,
    o_evi: DFF<Bits<16>>,
    o_echo: DFF<Bits<32>>,
    o_arr: DFF<Bits<32>>,
    o_timer: DFF<Bit>,
    o_drop: DFF<Bit>,
    o_probe: DFF<Bit>,
    o_plegacy: DFF<Bit>,
    o_pid: DFF<Bits<32>>,
    // Combinational locals.
    take: Signal<Local, Bit>,
    cur_msn: Signal<Local, Bits<24>>,
    scan_go: Signal<Local, Bit>,
    accepted: Signal<Local, Bit>,
    gap_d: Signal<Local, Bits<24>>,
    opens_gap: Signal<Local, Bit>,
    high1: Signal<Local, Bits<24>>,
    high2: Signal<Local, Bits<24>>,
    unack1: Signal<Local, Bits<16>>,
    ecn1: Signal<Local, Bits<16>>,
    expired: Signal<Local, Bit>,
    h_d: Signal<Local, Bits<24>>,
    dl_d: Signal<Local, Bits<16>>,
    t_psn: Signal<Local, Bits<24>>,
    t_exp: Signal<Local, Bits<24>>,
    t_off: Signal<Local, Bits<24>>,
    sack_base: Signal<Local, Bits<24>>,
    /// A probe answer while new packets wait for their SACK: its bitmap
    /// starts at the expected PSN whatever the trigger (the model's
    /// `build_sack` with packets unreported).
    probe_at_exp: Signal<Local, Bit>,
}

impl Logic for AckGen {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            ack_every,
            ack_every_m1_n,
            ack_every_nz,
            ce_at_once,
            ack_delay,
            now,
            cfg_pend,
            cfg_qp,
            cfg_psn,
            scan_qp,
            s1_v,
            s1_scan,
            s1_qp,
            s1_psn,
            s1_verdict,
            s1_ack_req,
            s1_trimmed,
            s1_ecn,
            s1_reject,
            s1_drop,
            s1_exp,
            s1_msn,
            s1_msn_v,
            s1_ev,
            s1_evi,
            s1_echo,
            s1_now,
            s1_probe,
            s1_plegacy,
            s1_pid,
            mode,
            o_qp,
            o_kind,
            o_psn,
            o_tpsn,
            o_cum,
            o_msn,
            o_nack_kind,
            o_code,
            o_base,
            o_bitmap,
            o_ecn,
            o_tce,
            o_ev,
            o_evi,
            o_echo,
            o_arr,
            o_timer,
            o_drop,
            o_probe,
            o_plegacy,
            o_pid
        );
        self.exp_ram.read_clock.next = self.clock.val();
        self.exp_ram.write_clock.next = self.clock.val();
        self.high_ram.read_clock.next = self.clock.val();
        self.high_ram.write_clock.next = self.clock.val();
        self.msn_ram.read_clock.next = self.clock.val();
        self.msn_ram.write_clock.next = self.clock.val();
        self.unack_ram.read_clock.next = self.clock.val();
        self.unack_ram.write_clock.next = self.clock.val();
        self.ecn_ram.read_clock.next = self.clock.val();
        self.ecn_ram.write_clock.next = self.clock.val();
        self.armed_ram.read_clock.next = self.clock.val();
        self.armed_ram.write_clock.next = self.clock.val();
        self.dl_ram.read_clock.next = self.clock.val();
        self.dl_ram.write_clock.next = self.clock.val();
        self.tpsn_ram.read_clock.next = self.clock.val();
        self.tpsn_ram.write_clock.next = self.clock.val();
        self.tev_ram.read_clock.next = self.clock.val();
        self.tev_ram.write_clock.next = self.clock.val();
        self.tevi_ram.read_clock.next = self.clock.val();
        self.tevi_ram.write_clock.next = self.clock.val();
        self.techo_ram.read_clock.next = self.clock.val();
        self.tarr_ram.read_clock.next = self.clock.val();
        self.techo_ram.write_clock.next = self.clock.val();
        self.tarr_ram.write_clock.next = self.clock.val();
        self.now.d.next = self.now.q.val() + 1;
        self.o_timer.d.next = false;
        self.o_drop.d.next = false;
        // Reads: by default keep reading stage 1's QP (so its data stays
        // valid while stage 1 holds); a take or scan re-addresses them.
        self.exp_ram.read_address.next = self.s1_qp.q.val();
        self.high_ram.read_address.next = self.s1_qp.q.val();
        self.msn_ram.read_address.next = self.s1_qp.q.val();
        self.unack_ram.read_address.next = self.s1_qp.q.val();
        self.ecn_ram.read_address.next = self.s1_qp.q.val();
        self.armed_ram.read_address.next = self.s1_qp.q.val();
        self.dl_ram.read_address.next = self.s1_qp.q.val();
        self.tpsn_ram.read_address.next = self.s1_qp.q.val();
        self.tev_ram.read_address.next = self.s1_qp.q.val();
        self.tevi_ram.read_address.next = self.s1_qp.q.val();
        self.techo_ram.read_address.next = self.s1_qp.q.val();
        self.tarr_ram.read_address.next = self.s1_qp.q.val();
        // Writes: stage 1's QP and the record's facts by default (the
        // enables decide); a pending QP init overrides in a free cycle.
        self.exp_ram.write_address.next = self.s1_qp.q.val();
        self.high_ram.write_address.next = self.s1_qp.q.val();
        self.msn_ram.write_address.next = self.s1_qp.q.val();
        self.unack_ram.write_address.next = self.s1_qp.q.val();
        self.ecn_ram.write_address.next = self.s1_qp.q.val();
        self.armed_ram.write_address.next = self.s1_qp.q.val();
        self.dl_ram.write_address.next = self.s1_qp.q.val();
        self.tpsn_ram.write_address.next = self.s1_qp.q.val();
        self.tev_ram.write_address.next = self.s1_qp.q.val();
        self.tevi_ram.write_address.next = self.s1_qp.q.val();
        self.techo_ram.write_address.next = self.s1_qp.q.val();
        self.tarr_ram.write_address.next = self.s1_qp.q.val();
        self.exp_ram.write_data.next = self.s1_exp.q.val();
        self.high_ram.write_data.next = self.high_ram.read_data.val();
        // The record's MSN, or the stored one when it carries none.
        if self.s1_msn_v.q.val() {
            self.cur_msn.next = self.s1_msn.q.val();
        } else {
            self.cur_msn.next = self.msn_ram.read_data.val();
        }
        self.msn_ram.write_data.next = self.cur_msn.val();
        self.unack_ram.write_data.next = 0.into();
        self.ecn_ram.write_data.next = 0.into();
        self.armed_ram.write_data.next = false;
        self.dl_ram.write_data.next = self.dl_ram.read_data.val();
        self.tpsn_ram.write_data.next = self.s1_psn.q.val();
        self.tev_ram.write_data.next = self.s1_ev.q.val();
        self.tevi_ram.write_data.next = self.s1_evi.q.val();
        self.techo_ram.write_data.next = self.s1_echo.q.val();
        self.tarr_ram.write_data.next = self.s1_now.q.val();
        self.exp_ram.write_enable.next = false;
        self.high_ram.write_enable.next = false;
        self.msn_ram.write_enable.next = false;
        self.unack_ram.write_enable.next = false;
        self.ecn_ram.write_enable.next = false;
        self.armed_ram.write_enable.next = false;
        self.dl_ram.write_enable.next = false;
        self.tpsn_ram.write_enable.next = false;
        self.tev_ram.write_enable.next = false;
        self.tevi_ram.write_enable.next = false;
        self.techo_ram.write_enable.next = false;
        self.tarr_ram.write_enable.next = false;

        // Accept: run mode, no config pending, and (same-QP hazard) not
        // the QP stage 1 is about to write back.
        self.in_ready.next = (self.mode.q.val() == 0)
            & !self.cfg_pend.q.val()
            & !self.cfg.valid.val()
            & !(self.s1_v.q.val() & (self.s1_qp.q.val() == self.in_qp.val()));
        self.take.next = self.in_valid.val() & self.in_ready.val();
        // The scanner uses a cycle nothing else is taken in.
        self.scan_go.next = (self.mode.q.val() == 0)
            & !self.take.val()
            & !self.cfg_pend.q.val()
            & !self.cfg.valid.val()
            & !(self.s1_v.q.val() & (self.s1_qp.q.val() == self.scan_qp.q.val()));

        // ---- Stage 1 computations (all from registers and RAM data).
        self.accepted.next =
            (self.s1_verdict.q.val() == 1) & !self.s1_trimmed.q.val() & !self.s1_drop.q.val() & !self.s1_reject.q.val();
        // Gap: the PSN is after one past the highest received.
        self.gap_d.next = self.s1_psn.q.val() - self.high_ram.read_data.val();
        self.opens_gap.next = self.gap_d.val().any() & !self.gap_d.val().get_bit(23);
        if self.gap_d.val().get_bit(23) {
            self.high1.next = self.high_ram.read_data.val();
        } else {
            self.high1.next = self.s1_psn.q.val() + 1;
        }
        self.h_d.next = self.high1.val() - self.s1_exp.q.val();
        if self.h_d.val().get_bit(23) {
            self.high2.next = self.s1_exp.q.val();
        } else {
            self.high2.next = self.high1.val();
        }
        if self.unack_ram.read_data.val() == 0xFFFF {
            self.unack1.next = self.unack_ram.read_data.val();
        } else {
            self.unack1.next = self.unack_ram.read_data.val() + 1;
        }
        if self.s1_ecn.q.val() & (self.ecn_ram.read_data.val() != 0xFFFF) {
            self.ecn1.next = self.ecn_ram.read_data.val() + 1;
        } else {
            self.ecn1.next = self.ecn_ram.read_data.val();
        }
        // Deadline reached: now - deadline is "not negative" (16-bit serial).
        self.dl_d.next = self.now.q.val() - self.dl_ram.read_data.val();
        self.expired.next = self.armed_ram.read_data.val() & !self.dl_d.val().get_bit(15);
        // SACK trigger and base: the record itself, or (timer, probe) the
        // stored one.
        if self.s1_scan.q.val() | self.s1_probe.q.val() {
            self.t_psn.next = self.tpsn_ram.read_data.val();
            self.t_exp.next = self.exp_ram.read_data.val();
        } else {
            self.t_psn.next = self.s1_psn.q.val();
            self.t_exp.next = self.s1_exp.q.val();
        }
        self.t_off.next = self.t_psn.val() - self.t_exp.val();
        // Base = expected, unless the trigger lies 64..256 PSNs beyond it
        // (inside the window): then the bitmap ends at the trigger.
        self.probe_at_exp.next = self.s1_probe.q.val() & !self.s1_scan.q.val() & self.unack_ram.read_data.val().any();
        if (self.t_off.val() >> 8).any() | !(self.t_off.val() >> 6).any() | self.probe_at_exp.val() {
            self.sack_base.next = self.t_exp.val();
        } else {
            self.sack_base.next = self.t_psn.val() - 63;
        }

        // Common output fields of a SACK (overridden for NACK / timer).
        self.o_qp.d.next = self.s1_qp.q.val();
        self.o_kind.d.next = 1.into();
        self.o_psn.d.next = self.t_exp.val() - 1;
        self.o_cum.d.next = self.t_exp.val() - 1;
        self.o_tpsn.d.next = self.s1_psn.q.val();
        self.o_msn.d.next = self.cur_msn.val();
        self.o_nack_kind.d.next = 0.into();
        self.o_code.d.next = 0.into();
        self.o_base.d.next = self.sack_base.val();
        self.o_ecn.d.next = 0.into();
        self.o_tce.d.next = false;
        self.o_ev.d.next = self.s1_ev.q.val();
        self.o_evi.d.next = self.s1_evi.q.val();
        self.o_echo.d.next = self.s1_echo.q.val();
        self.o_arr.d.next = self.s1_now.q.val();
        self.o_bitmap.d.next = 0.into();
        self.o_probe.d.next = false;
        self.o_plegacy.d.next = self.s1_plegacy.q.val();
        self.o_pid.d.next = self.s1_pid.q.val();

        if self.mode.q.val() == 0 {
            if self.s1_v.q.val() {
                if self.s1_scan.q.val() {
                    if self.expired.val() {
                        // Coalescing timer: SACK from the stored trigger.
                        self.o_msn.d.next = self.msn_ram.read_data.val();
                        self.o_ecn.d.next = self.ecn_ram.read_data.val();
                        self.o_tpsn.d.next = self.tpsn_ram.read_data.val();
                        self.o_ev.d.next = self.tev_ram.read_data.val();
                        self.o_evi.d.next = self.tevi_ram.read_data.val();
                        self.o_echo.d.next = self.techo_ram.read_data.val();
                        self.o_arr.d.next = self.tarr_ram.read_data.val();
                        self.o_timer.d.next = true;
                        self.unack_ram.write_enable.next = true;
                        self.ecn_ram.write_enable.next = true;
                        self.armed_ram.write_enable.next = true;
                        self.mode.d.next = 1.into();
                    }
                } else if self.s1_probe.q.val() {
                    // A probe: the SACK of the stored receive state, with
                    // the probe's EV, id and timestamp (the defaults
                    // above). As the model's `build_sack` with a probe, it
                    // reports and clears the ECN count but leaves the
                    // rest alone: expected PSN, MSN, the trigger, the
                    // unacked count and the deadline, so a SACK due (or
                    // its timer) still goes out for the packets it is due
                    // for.
                    // A legacy probe's answer reports no ECN count (the
                    // legacy model's `handle_ack`): the count stays.
                    self.o_msn.d.next = self.msn_ram.read_data.val();
                    self.o_ecn.d.next = self.ecn_ram.read_data.val();
                    self.o_probe.d.next = true;
                    self.ecn_ram.write_enable.next = !self.s1_plegacy.q.val();
                    self.mode.d.next = 1.into();
                } else {
                    // Every record carries the current expected PSN and MSN.
                    self.exp_ram.write_enable.next = true;
                    self.msn_ram.write_enable.next = true;
                    if self.s1_verdict.q.val() == 3 {
                        self.o_kind.d.next = 2.into();
                        self.o_psn.d.next = self.s1_psn.q.val();
                        self.o_cum.d.next = self.s1_exp.q.val() - 1;
                        self.o_base.d.next = 0.into();
                        self.o_nack_kind.d.next = 2.into();
                        self.mode.d.next = 3.into();
                    } else if self.s1_verdict.q.val() == 2 {
                        // Duplicate: SACK at once, it becomes the trigger.
                        self.unack_ram.write_enable.next = true;
                        self.ecn_ram.write_enable.next = true;
                        self.armed_ram.write_enable.next = true;
                        self.tpsn_ram.write_enable.next = true;
                        self.tev_ram.write_enable.next = true;
                        self.tevi_ram.write_enable.next = true;
                        self.techo_ram.write_enable.next = true;
                        self.tarr_ram.write_enable.next = true;
                        self.o_ecn.d.next = self.ecn_ram.read_data.val();
                        self.o_tce.d.next = self.s1_ecn.q.val();
                        self.mode.d.next = 1.into();
                    } else if self.s1_verdict.q.val() == 1 {
                        if self.s1_trimmed.q.val() {
                            self.o_kind.d.next = 2.into();
                            self.o_psn.d.next = self.s1_psn.q.val();
                            self.o_cum.d.next = self.s1_exp.q.val() - 1;
                            self.o_base.d.next = 0.into();
                            self.o_nack_kind.d.next = 1.into();
                            self.mode.d.next = 3.into();
                        } else if self.s1_drop.q.val() {
                            // Held-completion overflow: silently not
                            // acknowledged (the requester resends).
                            self.o_drop.d.next = true;
                        } else if self.s1_reject.q.val() {
                            self.o_kind.d.next = 2.into();
                            self.o_psn.d.next = self.s1_psn.q.val();
                            self.o_cum.d.next = self.s1_exp.q.val() - 1;
                            self.o_base.d.next = 0.into();
                            self.o_nack_kind.d.next = 3.into();
                            self.o_code.d.next = 2.into();
                            self.mode.d.next = 3.into();
                        } else {
                            // New packet placed: coalesce.
                            self.high_ram.write_data.next = self.high2.val();
                            self.high_ram.write_enable.next = true;
                            self.tpsn_ram.write_enable.next = true;
                            self.tev_ram.write_enable.next = true;
                            self.tevi_ram.write_enable.next = true;
                            self.techo_ram.write_enable.next = true;
                            self.tarr_ram.write_enable.next = true;
                            self.unack_ram.write_enable.next = true;
                            self.ecn_ram.write_enable.next = true;
                            if self.s1_ack_req.q.val()
                                | self.opens_gap.val()
                                | !self.ack_every_nz.q.val()
                                | (self.ce_at_once.q.val() & self.s1_ecn.q.val())
                                | (self.unack_ram.read_data.val() >= !self.ack_every_m1_n.q.val())
                            {
                                self.armed_ram.write_enable.next = true;
                                self.o_ecn.d.next = self.ecn1.val();
                                self.o_tce.d.next = self.s1_ecn.q.val();
                                self.mode.d.next = 1.into();
                            } else {
                                self.unack_ram.write_data.next = self.unack1.val();
                                self.ecn_ram.write_data.next = self.ecn1.val();
                                if !self.armed_ram.read_data.val() {
                                    self.armed_ram.write_data.next = true;
                                    self.armed_ram.write_enable.next = true;
                                    self.dl_ram.write_data.next = self.now.q.val() + self.ack_delay.q.val();
                                    self.dl_ram.write_enable.next = true;
                                }
                            }
                        }
                    } else {
                        // Verdict 0 is not a verdict: ignored, counted.
                        self.o_drop.d.next = true;
                    }
                }
            }
            // Stage 1 is refilled (or emptied) in every run-mode cycle.
            self.s1_v.d.next = self.take.val() | self.scan_go.val();
            self.s1_scan.d.next = !self.take.val();
            if self.take.val() {
                self.s1_qp.d.next = self.in_qp.val();
                self.s1_psn.d.next = self.in_psn.val();
                self.s1_verdict.d.next = self.in_verdict.val();
                self.s1_ack_req.d.next = self.in_ack_req.val();
                self.s1_trimmed.d.next = self.in_trimmed.val();
                self.s1_ecn.d.next = self.in_ecn_ce.val();
                self.s1_reject.d.next = self.in_reject.val();
                self.s1_drop.d.next = self.in_drop.val();
                self.s1_exp.d.next = self.in_expected.val();
                self.s1_msn.d.next = self.in_msn.val();
                self.s1_msn_v.d.next = self.in_msn_valid.val();
                self.s1_ev.d.next = self.in_ev.val();
                self.s1_evi.d.next = self.in_ev_index.val();
                self.s1_echo.d.next = self.in_echo_ts.val();
                self.s1_now.d.next = self.now_ns.val();
                self.s1_probe.d.next = self.in_probe.val();
                self.s1_plegacy.d.next = self.in_probe_legacy.val();
                self.s1_pid.d.next = self.in_probe_id.val();
            } else if self.scan_go.val() {
                self.s1_qp.d.next = self.scan_qp.q.val();
                self.scan_qp.d.next = self.scan_qp.q.val() + 1;
            }
            if self.take.val() {
                self.exp_ram.read_address.next = self.in_qp.val();
                self.high_ram.read_address.next = self.in_qp.val();
                self.msn_ram.read_address.next = self.in_qp.val();
                self.unack_ram.read_address.next = self.in_qp.val();
                self.ecn_ram.read_address.next = self.in_qp.val();
                self.armed_ram.read_address.next = self.in_qp.val();
                self.dl_ram.read_address.next = self.in_qp.val();
                self.tpsn_ram.read_address.next = self.in_qp.val();
                self.tev_ram.read_address.next = self.in_qp.val();
                self.tevi_ram.read_address.next = self.in_qp.val();
                self.techo_ram.read_address.next = self.in_qp.val();
                self.tarr_ram.read_address.next = self.in_qp.val();
            } else if self.scan_go.val() {
                self.exp_ram.read_address.next = self.scan_qp.q.val();
                self.high_ram.read_address.next = self.scan_qp.q.val();
                self.msn_ram.read_address.next = self.scan_qp.q.val();
                self.unack_ram.read_address.next = self.scan_qp.q.val();
                self.ecn_ram.read_address.next = self.scan_qp.q.val();
                self.armed_ram.read_address.next = self.scan_qp.q.val();
                self.dl_ram.read_address.next = self.scan_qp.q.val();
                self.tpsn_ram.read_address.next = self.scan_qp.q.val();
                self.tev_ram.read_address.next = self.scan_qp.q.val();
                self.tevi_ram.read_address.next = self.scan_qp.q.val();
                self.techo_ram.read_address.next = self.scan_qp.q.val();
                self.tarr_ram.read_address.next = self.scan_qp.q.val();
            }
        } else {
            // Stage 1 holds (its reads stay addressed); outputs hold.
            self.o_qp.d.next = self.o_qp.q.val();
            self.o_kind.d.next = self.o_kind.q.val();
            self.o_psn.d.next = self.o_psn.q.val();
            self.o_cum.d.next = self.o_cum.q.val();
            self.o_tpsn.d.next = self.o_tpsn.q.val();
            self.o_msn.d.next = self.o_msn.q.val();
            self.o_nack_kind.d.next = self.o_nack_kind.q.val();
            self.o_code.d.next = self.o_code.q.val();
            self.o_base.d.next = self.o_base.q.val();
            self.o_ecn.d.next = self.o_ecn.q.val();
            self.o_ev.d.next = self.o_ev.q.val();
            self.o_evi.d.next = self.o_evi.q.val();
            self.o_echo.d.next = self.o_echo.q.val();
            self.o_arr.d.next = self.o_arr.q.val();
            self.o_bitmap.d.next = self.o_bitmap.q.val();
            self.o_probe.d.next = self.o_probe.q.val();
            self.o_plegacy.d.next = self.o_plegacy.q.val();
            self.o_pid.d.next = self.o_pid.q.val();
            if self.mode.q.val() == 1 {
                if self.snap_ready.val() {
                    self.mode.d.next = 2.into();
                }
            } else if self.mode.q.val() == 2 {
                if self.snap_out_valid.val() {
                    self.o_bitmap.d.next = self.snap_bitmap.val();
                    self.mode.d.next = 3.into();
                }
            } else if self.tx_ready.val() {
                self.mode.d.next = 0.into();
            }
        }

        // Config: parameters at once; a QP init waits for a cycle in which
        // stage 1 writes nothing back (never more than one cycle).
        if self.cfg.valid.val() & (self.cfg.table.val() == self.t_params.val()) & (self.cfg.index.val() == 0) {
            self.ack_every.d.next = self.cfg.data.val().get_value_ack_params_every();
            self.ack_every_m1_n.d.next = !(self.cfg.data.val().get_value_ack_params_every() - 1);
            self.ack_every_nz.d.next = self.cfg.data.val().get_value_ack_params_every().any();
            self.ack_delay.d.next = self.cfg.data.val().get_value_ack_params_delay();
        }
        if self.cfg.valid.val()
            & (self.cfg.table.val() == self.t_addr.val())
            & (self.cfg.index.val() == self.k_own_row.val())
        {
            self.ce_at_once.d.next = self.cfg.data.val().get_value_addr_wire_mrc10().any();
        }
        if self.cfg_pend.q.val() & !self.s1_v.q.val() {
            self.cfg_pend.d.next = false;
            self.exp_ram.write_address.next = self.cfg_qp.q.val();
            self.high_ram.write_address.next = self.cfg_qp.q.val();
            self.msn_ram.write_address.next = self.cfg_qp.q.val();
            self.unack_ram.write_address.next = self.cfg_qp.q.val();
            self.ecn_ram.write_address.next = self.cfg_qp.q.val();
            self.armed_ram.write_address.next = self.cfg_qp.q.val();
            self.exp_ram.write_data.next = self.cfg_psn.q.val();
            self.high_ram.write_data.next = self.cfg_psn.q.val();
            self.msn_ram.write_data.next = 0.into();
            self.unack_ram.write_data.next = 0.into();
            self.ecn_ram.write_data.next = 0.into();
            self.armed_ram.write_data.next = false;
            self.exp_ram.write_enable.next = true;
            self.high_ram.write_enable.next = true;
            self.msn_ram.write_enable.next = true;
            self.unack_ram.write_enable.next = true;
            self.ecn_ram.write_enable.next = true;
            self.armed_ram.write_enable.next = true;
        }
        if self.cfg.valid.val() & (self.cfg.table.val() == self.t_qp_init.val()) {
            self.cfg_pend.d.next = true;
            self.cfg_qp.d.next = bit_cast::<QP_BITS, 16>(self.cfg.index.val());
            self.cfg_psn.d.next = self.cfg.data.val().get_value_recv_init_start_psn();
        }

        // Ports.
        self.snap_valid.next = self.mode.q.val() == 1;
        self.snap_qp.next = self.o_qp.q.val();
        self.snap_base.next = self.o_base.q.val();
        self.tx_valid.next = self.mode.q.val() == 3;
        self.tx_qp.next = self.o_qp.q.val();
        self.tx_kind.next = self.o_kind.q.val();
        self.tx_psn.next = self.o_psn.q.val();
        self.tx_cum.next = self.o_cum.q.val();
        self.tx_trigger_psn.next = self.o_tpsn.q.val();
        self.tx_msn.next = self.o_msn.q.val();
        self.tx_nack_kind.next = self.o_nack_kind.q.val();
        self.tx_nak_code.next = self.o_code.q.val();
        self.tx_base.next = self.o_base.q.val();
        self.tx_bitmap.next = self.o_bitmap.q.val();
        self.tx_ecn_count.next = self.o_ecn.q.val();
        self.tx_trigger_ce.next = self.o_tce.q.val();
        self.tx_ev.next = self.o_ev.q.val();
        self.tx_ev_index.next = self.o_evi.q.val();
        self.tx_echo_ts.next = self.o_echo.q.val();
        self.tx_arrival_ns.next = self.o_arr.q.val();
        self.tx_probe.next = self.o_probe.q.val();
        self.tx_probe_legacy.next = self.o_plegacy.q.val();
        self.tx_probe_id.next = self.o_pid.q.val();
        self.cnt_timer_sack.next = self.o_timer.q.val();
        self.cnt_dropped.next = self.o_drop.q.val();
    }
}
