//! Receive-side placement checks and WRITE-IMM completions: the rules of
//! `proto::model::mrc` section 3.1-3.2 and `proto::model::memory`
//! (`docs/model-mrc.md`). See `docs/hw/completion.md`.
//!
//! Two independent paths:
//! * packets (new, untrimmed data packets): a two-stage pipeline, one per
//!   cycle: the memory-registration row of the rkey is read, then the rkey
//!   and `[va, va + len)` bounds are checked; accepted -> a placement
//!   command and the packet's facts (first/last, length, DMA length or
//!   immediate) in the per-PSN info RAM; rejected -> a NACK request and a
//!   counter pulse; a WRITE-IMM end while the completion queue holds
//!   `HELD_MAX` entries -> dropped unacknowledged, counted.
//! * advances (the SACK table's new expected PSN per QP): the PSNs passed
//!   are walked one per cycle through the info RAM; message ends count the
//!   MSN and WRITE-IMM ends queue a completion, so completions leave in
//!   PSN order per QP.

use contract::config::table;
use rust_hdl::prelude::*;

use crate::bus::ConfigSink;

use crate::contract_rows::{MrRow, RecvInitRow, TableId};

/// log2 of the number of QPs.
pub const QP_BITS: usize = 8;
/// log2 of the memory-registration table (indexed by the rkey's low bits).
pub const MR_BITS: usize = 8;
/// Completions the queue holds (the model's `MAX_HELD_IMM`, scaled down).
pub const HELD_MAX: u32 = 16;

/// `res_code` values.
pub mod res {
    pub const PLACED: u8 = 0;
    pub const REJECTED: u8 = 1;
    pub const DROPPED: u8 = 2;
}

/// The block. Ports are documented in `docs/hw/completion.md`.
#[derive(LogicBlock, Default)]
pub struct CompletionTracker {
    pub clock: Signal<In, Clock>,
    // New data packets.
    pub pkt_valid: Signal<In, Bit>,
    pub pkt_ready: Signal<Out, Bit>,
    pub pkt_qp: Signal<In, Bits<QP_BITS>>,
    pub pkt_psn: Signal<In, Bits<24>>,
    pub pkt_rkey: Signal<In, Bits<32>>,
    pub pkt_va: Signal<In, Bits<64>>,
    pub pkt_len: Signal<In, Bits<16>>,
    pub pkt_buf: Signal<In, Bits<16>>,
    pub pkt_first: Signal<In, Bit>,
    pub pkt_last: Signal<In, Bit>,
    pub pkt_has_imm: Signal<In, Bit>,
    pub pkt_dma_len: Signal<In, Bits<32>>,
    pub pkt_imm: Signal<In, Bits<32>>,
    // Placement command.
    pub place_valid: Signal<Out, Bit>,
    pub place_ready: Signal<In, Bit>,
    pub place_qp: Signal<Out, Bits<QP_BITS>>,
    pub place_addr: Signal<Out, Bits<64>>,
    pub place_len: Signal<Out, Bits<16>>,
    pub place_buf: Signal<Out, Bits<16>>,
    // NACK request (remote access error).
    pub nack_valid: Signal<Out, Bit>,
    pub nack_ready: Signal<In, Bit>,
    pub nack_qp: Signal<Out, Bits<QP_BITS>>,
    pub nack_psn: Signal<Out, Bits<24>>,
    pub nack_code: Signal<Out, Bits<5>>,
    // Per-packet outcome (pulse).
    pub res_valid: Signal<Out, Bit>,
    pub res_qp: Signal<Out, Bits<QP_BITS>>,
    pub res_psn: Signal<Out, Bits<24>>,
    pub res_code: Signal<Out, Bits<2>>,
    // Cumulative advances.
    pub adv_valid: Signal<In, Bit>,
    pub adv_ready: Signal<Out, Bit>,
    pub adv_qp: Signal<In, Bits<QP_BITS>>,
    pub adv_expected: Signal<In, Bits<24>>,
    /// Pulse: the advance taken last is walked; `done_msn` is its QP's
    /// MSN after it (the AETH MSN of the ACK for the packet that moved
    /// it, as the model's responder counts messages).
    pub done_valid: Signal<Out, Bit>,
    pub done_msn: Signal<Out, Bits<24>>,
    // Completions.
    pub cq_valid: Signal<Out, Bit>,
    pub cq_ready: Signal<In, Bit>,
    pub cq_qp: Signal<Out, Bits<QP_BITS>>,
    pub cq_imm: Signal<Out, Bits<32>>,
    pub cq_len: Signal<Out, Bits<32>>,
    pub cq_msn: Signal<Out, Bits<24>>,
    pub held_count: Signal<Out, Bits<5>>,
    // Config.
    pub cfg: ConfigSink,
    /// A QP-init row (table 7) is pending until the walk is idle: a
    /// second one now would overwrite it (the core holds it in the CSR).
    pub cfg_busy: Signal<Out, Bit>,
    t_mr: TableId<{ table::MR }>,
    t_qp_init: TableId<{ table::RECV_QP }>,
    // Counters.
    pub cnt_remote_access: Signal<Out, Bit>,
    pub cnt_imm_dropped: Signal<Out, Bit>,
    // Memory-registration table.
    mr_key: RAM<Bits<32>, MR_BITS>,
    mr_base: RAM<Bits<64>, MR_BITS>,
    mr_end: RAM<Bits<65>, MR_BITS>,
    mr_valid: RAM<Bit, MR_BITS>,
    // Per-PSN facts, address {qp, psn mod 256}: aux[31:0] (FIRST: DMA
    // length; IMM end: immediate), len[47:32]; and three flags.
    info: RAM<Bits<48>, 16>,
    info_first: RAM<Bit, 16>,
    info_last: RAM<Bit, 16>,
    info_imm: RAM<Bit, 16>,
    // Per-QP walk state.
    q_exp: RAM<Bits<24>, QP_BITS>,
    q_bytes: RAM<Bits<32>, QP_BITS>,
    q_len: RAM<Bits<32>, QP_BITS>,
    q_msn: RAM<Bits<24>, QP_BITS>,
    // Completion queue: a 16-entry RAM ring plus an output register.
    cq_ram: RAM<Bits<96>, 4>,
    cq_wp: DFF<Bits<4>>,
    cq_rp: DFF<Bits<4>>,
    // Entries in the RAM, and whether one was written at the last edge
    // (not readable yet: the read address is registered).
    cq_n: DFF<Bits<5>>,
    cq_wrote: DFF<Bit>,
    o_cq_v: DFF<Bit>,
    o_cq: DFF<Bits<96>>,
    held: DFF<Bits<5>>,
    // Packet stage 1 (MR row being read).
    s1_v: DFF<Bit>,
    s1_qp: DFF<Bits<QP_BITS>>,
    s1_psn: DFF<Bits<24>>,
    s1_rkey: DFF<Bits<32>>,
    s1_va: DFF<Bits<64>>,
    s1_len: DFF<Bits<16>>,
    /// `va + len`, added as the packet is taken so that the bounds check
    /// is one compare.
    s1_va_end: DFF<Bits<65>>,
    s1_buf: DFF<Bits<16>>,
    s1_first: DFF<Bit>,
    s1_last: DFF<Bit>,
    s1_imm_f: DFF<Bit>,
    s1_aux: DFF<Bits<32>>,
    // Output registers.
    p_v: DFF<Bit>,
    p_qp: DFF<Bits<QP_BITS>>,
    p_addr: DFF<Bits<64>>,
    p_len: DFF<Bits<16>>,
    p_buf: DFF<Bits<16>>,
    n_v: DFF<Bit>,
    n_qp: DFF<Bits<QP_BITS>>,
    n_psn: DFF<Bits<24>>,
    r_v: DFF<Bit>,
    r_qp: DFF<Bits<QP_BITS>>,
    r_psn: DFF<Bits<24>>,
    r_code: DFF<Bits<2>>,
    // Walk: 0 idle, 1 load the QP's state, 2 walk.
    mode: DFF<Bits<2>>,
    w_qp: DFF<Bits<QP_BITS>>,
    w_e: DFF<Bits<24>>,
    w_target: DFF<Bits<24>>,
    w_bytes: DFF<Bits<32>>,
    w_len: DFF<Bits<32>>,
    w_msn: DFF<Bits<24>>,
    // The walk's end (`done_*`).
    d_v: DFF<Bit>,
    d_msn: DFF<Bits<24>>,
    // Pending QP init.
    cfg_pend: DFF<Bit>,
    cfg_qp: DFF<Bits<QP_BITS>>,
    cfg_psn: DFF<Bits<24>>,
    // Locals.
    s1_go: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    hit: Signal<Local, Bit>,
    va_end: Signal<Local, Bits<65>>,
    in_bounds: Signal<Local, Bit>,
    cur: Signal<Local, Bits<48>>,
    cur_first: Signal<Local, Bit>,
    cur_last: Signal<Local, Bit>,
    cur_imm: Signal<Local, Bit>,
    c_len: Signal<Local, Bits<32>>,
    n_bytes: Signal<Local, Bits<32>>,
    n_clen: Signal<Local, Bits<32>>,
    n_msn: Signal<Local, Bits<24>>,
    sum: Signal<Local, Bits<33>>,
    push: Signal<Local, Bit>,
    step: Signal<Local, Bit>,
    e_next: Signal<Local, Bits<24>>,
    pop: Signal<Local, Bit>,
    fill: Signal<Local, Bit>,
    cq_write: Signal<Local, Bit>,
    cq_cnt_d: Signal<Local, Bits<5>>,
    cfg_mr: Signal<Local, Bit>,
}

impl Logic for CompletionTracker {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, cq_wp, cq_rp, cq_n, cq_wrote, o_cq_v, o_cq, held, s1_v, s1_qp, s1_psn, s1_rkey, s1_va, s1_len,
            s1_va_end, s1_buf, s1_first, s1_last, s1_imm_f, s1_aux, p_v, p_qp, p_addr, p_len, p_buf, n_v, n_qp, n_psn,
            r_v, r_qp, r_psn, r_code, mode, w_qp, w_e, w_target, w_bytes, w_len, w_msn, d_v, d_msn, cfg_pend, cfg_qp,
            cfg_psn
        );
        self.mr_key.read_clock.next = self.clock.val();
        self.mr_key.write_clock.next = self.clock.val();
        self.mr_base.read_clock.next = self.clock.val();
        self.mr_base.write_clock.next = self.clock.val();
        self.mr_end.read_clock.next = self.clock.val();
        self.mr_end.write_clock.next = self.clock.val();
        self.mr_valid.read_clock.next = self.clock.val();
        self.mr_valid.write_clock.next = self.clock.val();
        self.info.read_clock.next = self.clock.val();
        self.info.write_clock.next = self.clock.val();
        self.info_first.read_clock.next = self.clock.val();
        self.info_first.write_clock.next = self.clock.val();
        self.info_last.read_clock.next = self.clock.val();
        self.info_last.write_clock.next = self.clock.val();
        self.info_imm.read_clock.next = self.clock.val();
        self.info_imm.write_clock.next = self.clock.val();
        self.q_exp.read_clock.next = self.clock.val();
        self.q_exp.write_clock.next = self.clock.val();
        self.q_bytes.read_clock.next = self.clock.val();
        self.q_bytes.write_clock.next = self.clock.val();
        self.q_len.read_clock.next = self.clock.val();
        self.q_len.write_clock.next = self.clock.val();
        self.q_msn.read_clock.next = self.clock.val();
        self.q_msn.write_clock.next = self.clock.val();
        self.cq_ram.read_clock.next = self.clock.val();
        self.cq_ram.write_clock.next = self.clock.val();

        // ---------------- Packets.
        self.r_v.d.next = false;
        // Stage 1 leaves when both output registers can take its result.
        self.s1_go.next = self.s1_v.q.val()
            & (!self.p_v.q.val() | self.place_ready.val())
            & (!self.n_v.q.val() | self.nack_ready.val());
        self.pkt_ready.next = !self.s1_v.q.val() | self.s1_go.val();
        self.take.next = self.pkt_valid.val() & self.pkt_ready.val();
        if self.p_v.q.val() & self.place_ready.val() {
            self.p_v.d.next = false;
        }
        if self.n_v.q.val() & self.nack_ready.val() {
            self.n_v.d.next = false;
        }
        // The MR row of stage 1's rkey stays addressed while it waits.
        self.mr_key.read_address.next = bit_cast::<MR_BITS, 32>(self.s1_rkey.q.val());
        self.mr_base.read_address.next = bit_cast::<MR_BITS, 32>(self.s1_rkey.q.val());
        self.mr_end.read_address.next = bit_cast::<MR_BITS, 32>(self.s1_rkey.q.val());
        self.mr_valid.read_address.next = bit_cast::<MR_BITS, 32>(self.s1_rkey.q.val());
        if self.take.val() {
            self.mr_key.read_address.next = bit_cast::<MR_BITS, 32>(self.pkt_rkey.val());
            self.mr_base.read_address.next = bit_cast::<MR_BITS, 32>(self.pkt_rkey.val());
            self.mr_end.read_address.next = bit_cast::<MR_BITS, 32>(self.pkt_rkey.val());
            self.mr_valid.read_address.next = bit_cast::<MR_BITS, 32>(self.pkt_rkey.val());
            self.s1_qp.d.next = self.pkt_qp.val();
            self.s1_psn.d.next = self.pkt_psn.val();
            self.s1_rkey.d.next = self.pkt_rkey.val();
            self.s1_va.d.next = self.pkt_va.val();
            self.s1_len.d.next = self.pkt_len.val();
            self.s1_va_end.d.next = bit_cast::<65, 64>(self.pkt_va.val()) + bit_cast::<65, 16>(self.pkt_len.val());
            self.s1_buf.d.next = self.pkt_buf.val();
            self.s1_first.d.next = self.pkt_first.val();
            self.s1_last.d.next = self.pkt_last.val();
            self.s1_imm_f.d.next = self.pkt_has_imm.val();
            // One aux word: the immediate for an IMM end, else the DMA
            // length (an ONLY packet's DMA length equals its payload).
            if self.pkt_has_imm.val() {
                self.s1_aux.d.next = self.pkt_imm.val();
            } else {
                self.s1_aux.d.next = self.pkt_dma_len.val();
            }
        }
        if self.take.val() {
            self.s1_v.d.next = true;
        } else if self.s1_go.val() {
            self.s1_v.d.next = false;
        }
        // Checks: rkey hit, va >= base, va + len <= base + length (the end
        // is precomputed at registration; 65 bits, no wrap).
        self.hit.next = self.mr_valid.read_data.val() & (self.mr_key.read_data.val() == self.s1_rkey.q.val());
        self.va_end.next = self.s1_va_end.q.val();
        self.in_bounds.next =
            (self.s1_va.q.val() >= self.mr_base.read_data.val()) & (self.va_end.val() <= self.mr_end.read_data.val());
        self.info.write_address.next =
            (bit_cast::<16, QP_BITS>(self.s1_qp.q.val()) << 8) | bit_cast::<16, 24>(self.s1_psn.q.val() & 255);
        self.info.write_data.next =
            bit_cast::<48, 32>(self.s1_aux.q.val()) | (bit_cast::<48, 16>(self.s1_len.q.val()) << 32);
        self.info_first.write_address.next = self.info.write_address.val();
        self.info_last.write_address.next = self.info.write_address.val();
        self.info_imm.write_address.next = self.info.write_address.val();
        self.info_first.write_data.next = self.s1_first.q.val();
        self.info_last.write_data.next = self.s1_last.q.val();
        self.info_imm.write_data.next = self.s1_imm_f.q.val();
        self.info.write_enable.next = false;
        self.info_first.write_enable.next = false;
        self.info_last.write_enable.next = false;
        self.info_imm.write_enable.next = false;
        self.r_qp.d.next = self.s1_qp.q.val();
        self.r_psn.d.next = self.s1_psn.q.val();
        if self.s1_go.val() {
            self.r_v.d.next = true;
            if self.s1_imm_f.q.val() & (self.held.q.val() >= 16) {
                // The completion queue is full: drop unacknowledged.
                self.r_code.d.next = 2.into();
            } else if self.s1_len.q.val().any() & !(self.hit.val() & self.in_bounds.val()) {
                self.r_code.d.next = 1.into();
                self.n_v.d.next = true;
                self.n_qp.d.next = self.s1_qp.q.val();
                self.n_psn.d.next = self.s1_psn.q.val();
            } else {
                self.r_code.d.next = 0.into();
                self.info.write_enable.next = true;
                self.info_first.write_enable.next = true;
                self.info_last.write_enable.next = true;
                self.info_imm.write_enable.next = true;
                if self.s1_len.q.val().any() {
                    self.p_v.d.next = true;
                    self.p_qp.d.next = self.s1_qp.q.val();
                    self.p_addr.d.next = self.s1_va.q.val();
                    self.p_len.d.next = self.s1_len.q.val();
                    self.p_buf.d.next = self.s1_buf.q.val();
                }
            }
        }

        // ---------------- Walk.
        self.adv_ready.next = (self.mode.q.val() == 0) & !self.cfg_pend.q.val() & !self.cfg.valid.val();
        self.q_exp.read_address.next = self.w_qp.q.val();
        self.q_bytes.read_address.next = self.w_qp.q.val();
        self.q_len.read_address.next = self.w_qp.q.val();
        self.q_msn.read_address.next = self.w_qp.q.val();
        self.q_exp.write_address.next = self.w_qp.q.val();
        self.q_bytes.write_address.next = self.w_qp.q.val();
        self.q_len.write_address.next = self.w_qp.q.val();
        self.q_msn.write_address.next = self.w_qp.q.val();
        self.q_exp.write_data.next = self.w_target.q.val();
        self.q_exp.write_enable.next = false;
        self.q_bytes.write_enable.next = false;
        self.q_len.write_enable.next = false;
        self.q_msn.write_enable.next = false;
        self.info.read_address.next =
            (bit_cast::<16, QP_BITS>(self.w_qp.q.val()) << 8) | bit_cast::<16, 24>(self.w_e.q.val() & 255);
        // One PSN's facts.
        self.cur.next = self.info.read_data.val();
        self.cur_first.next = self.info_first.read_data.val();
        self.cur_last.next = self.info_last.read_data.val();
        self.cur_imm.next = self.info_imm.read_data.val();
        self.sum.next =
            bit_cast::<33, 32>(self.w_bytes.q.val()) + bit_cast::<33, 16>(self.cur.val().get_bits::<16>(32));
        if self.cur_first.val() {
            self.n_bytes.next = bit_cast::<32, 16>(self.cur.val().get_bits::<16>(32));
            if self.cur_last.val() {
                self.n_clen.next = bit_cast::<32, 16>(self.cur.val().get_bits::<16>(32));
            } else {
                self.n_clen.next = self.cur.val().get_bits::<32>(0);
            }
        } else {
            // On overflow hold the count: it is then above 2^32 - 2^16,
            // beyond any DMA length (< 2^31), so min(bytes, length) is the
            // model's (whose u64 count saturates).
            if self.sum.val().get_bit(32) {
                self.n_bytes.next = self.w_bytes.q.val();
            } else {
                self.n_bytes.next = bit_cast::<32, 33>(self.sum.val());
            }
            self.n_clen.next = self.w_len.q.val();
        }
        if self.cur_last.val() {
            self.n_msn.next = self.w_msn.q.val() + 1;
        } else {
            self.n_msn.next = self.w_msn.q.val();
        }
        if self.n_bytes.val() < self.n_clen.val() {
            self.c_len.next = self.n_bytes.val();
        } else {
            self.c_len.next = self.n_clen.val();
        }
        self.q_bytes.write_data.next = self.n_bytes.val();
        self.q_len.write_data.next = self.n_clen.val();
        self.q_msn.write_data.next = self.n_msn.val();
        self.push.next = (self.mode.q.val() == 2) & self.cur_last.val() & self.cur_imm.val();
        self.step.next = (self.mode.q.val() == 2) & !(self.push.val() & (self.held.q.val() == 16));
        self.e_next.next = self.w_e.q.val() + 1;
        self.cq_write.next = self.push.val() & self.step.val();
        self.cq_ram.write_data.next = bit_cast::<96, QP_BITS>(self.w_qp.q.val())
            | (bit_cast::<96, 32>(self.cur.val().get_bits::<32>(0)) << 8)
            | (bit_cast::<96, 32>(self.c_len.val()) << 40)
            | (bit_cast::<96, 24>(self.n_msn.val()) << 72);
        self.d_v.d.next = false;
        if self.mode.q.val() == 0 {
            if self.adv_valid.val() & self.adv_ready.val() {
                self.q_exp.read_address.next = self.adv_qp.val();
                self.q_bytes.read_address.next = self.adv_qp.val();
                self.q_len.read_address.next = self.adv_qp.val();
                self.q_msn.read_address.next = self.adv_qp.val();
                self.w_qp.d.next = self.adv_qp.val();
                self.w_target.d.next = self.adv_expected.val();
                self.mode.d.next = 1.into();
            }
        } else if self.mode.q.val() == 1 {
            self.w_e.d.next = self.q_exp.read_data.val();
            self.w_bytes.d.next = self.q_bytes.read_data.val();
            self.w_len.d.next = self.q_len.read_data.val();
            self.w_msn.d.next = self.q_msn.read_data.val();
            self.info.read_address.next = (bit_cast::<16, QP_BITS>(self.w_qp.q.val()) << 8)
                | bit_cast::<16, 24>(self.q_exp.read_data.val() & 255);
            if self.q_exp.read_data.val() == self.w_target.q.val() {
                self.mode.d.next = 0.into();
                self.d_v.d.next = true;
                self.d_msn.d.next = self.q_msn.read_data.val();
            } else {
                self.mode.d.next = 2.into();
            }
        } else if self.step.val() {
            self.w_e.d.next = self.e_next.val();
            self.w_bytes.d.next = self.n_bytes.val();
            self.w_len.d.next = self.n_clen.val();
            self.w_msn.d.next = self.n_msn.val();
            self.info.read_address.next =
                (bit_cast::<16, QP_BITS>(self.w_qp.q.val()) << 8) | bit_cast::<16, 24>(self.e_next.val() & 255);
            if self.e_next.val() == self.w_target.q.val() {
                self.q_exp.write_enable.next = true;
                self.q_bytes.write_enable.next = true;
                self.q_len.write_enable.next = true;
                self.q_msn.write_enable.next = true;
                self.mode.d.next = 0.into();
                self.d_v.d.next = true;
                self.d_msn.d.next = self.n_msn.val();
            }
        }
        self.info_first.read_address.next = self.info.read_address.val();
        self.info_last.read_address.next = self.info.read_address.val();
        self.info_imm.read_address.next = self.info.read_address.val();
        // Completion queue: the output register is refilled from the RAM
        // (an entry is readable from the second cycle after its write).
        self.pop.next = self.o_cq_v.q.val() & self.cq_ready.val();
        if self.cq_wrote.q.val() {
            self.cq_cnt_d.next = self.cq_n.q.val() - 1;
        } else {
            self.cq_cnt_d.next = self.cq_n.q.val();
        }
        self.fill.next = (!self.o_cq_v.q.val() | self.pop.val()) & self.cq_cnt_d.val().any();
        self.cq_ram.write_address.next = self.cq_wp.q.val();
        self.cq_ram.write_enable.next = self.cq_write.val();
        self.cq_wrote.d.next = self.cq_write.val();
        if self.cq_write.val() {
            self.cq_wp.d.next = self.cq_wp.q.val() + 1;
        }
        self.cq_ram.read_address.next = self.cq_rp.q.val();
        if self.fill.val() {
            self.o_cq.d.next = self.cq_ram.read_data.val();
            self.o_cq_v.d.next = true;
            self.cq_rp.d.next = self.cq_rp.q.val() + 1;
            self.cq_ram.read_address.next = self.cq_rp.q.val() + 1;
        } else if self.pop.val() {
            self.o_cq_v.d.next = false;
        }
        if self.cq_write.val() & !self.fill.val() {
            self.cq_n.d.next = self.cq_n.q.val() + 1;
        } else if !self.cq_write.val() & self.fill.val() {
            self.cq_n.d.next = self.cq_n.q.val() - 1;
        }
        // Held = waiting in the RAM or the output register.
        if self.cq_write.val() & !self.pop.val() {
            self.held.d.next = self.held.q.val() + 1;
        } else if !self.cq_write.val() & self.pop.val() {
            self.held.d.next = self.held.q.val() - 1;
        }

        // ---------------- Config.
        self.cfg_mr.next = self.cfg.valid.val() & (self.cfg.table.val() == self.t_mr.val());
        self.mr_key.write_address.next = bit_cast::<MR_BITS, 16>(self.cfg.index.val());
        self.mr_base.write_address.next = bit_cast::<MR_BITS, 16>(self.cfg.index.val());
        self.mr_end.write_address.next = bit_cast::<MR_BITS, 16>(self.cfg.index.val());
        self.mr_valid.write_address.next = bit_cast::<MR_BITS, 16>(self.cfg.index.val());
        self.mr_key.write_data.next = self.cfg.data.val().get_value_mr_rkey();
        self.mr_base.write_data.next = self.cfg.data.val().get_value_mr_base_va();
        self.mr_end.write_data.next = bit_cast::<65, 64>(self.cfg.data.val().get_value_mr_base_va())
            + bit_cast::<65, 64>(self.cfg.data.val().get_value_mr_length());
        self.mr_valid.write_data.next = self.cfg.data.val().get_value_mr_valid().any();
        self.mr_key.write_enable.next = self.cfg_mr.val();
        self.mr_base.write_enable.next = self.cfg_mr.val();
        self.mr_end.write_enable.next = self.cfg_mr.val();
        self.mr_valid.write_enable.next = self.cfg_mr.val();
        // QP init waits for an idle walk (the walk owns the state RAMs).
        if self.cfg_pend.q.val() & (self.mode.q.val() == 0) {
            self.cfg_pend.d.next = false;
            self.q_exp.write_address.next = self.cfg_qp.q.val();
            self.q_bytes.write_address.next = self.cfg_qp.q.val();
            self.q_len.write_address.next = self.cfg_qp.q.val();
            self.q_msn.write_address.next = self.cfg_qp.q.val();
            self.q_exp.write_data.next = self.cfg_psn.q.val();
            self.q_bytes.write_data.next = 0.into();
            self.q_len.write_data.next = 0.into();
            self.q_msn.write_data.next = 0.into();
            self.q_exp.write_enable.next = true;
            self.q_bytes.write_enable.next = true;
            self.q_len.write_enable.next = true;
            self.q_msn.write_enable.next = true;
        }
        if self.cfg.valid.val() & (self.cfg.table.val() == self.t_qp_init.val()) {
            self.cfg_pend.d.next = true;
            self.cfg_qp.d.next = bit_cast::<QP_BITS, 16>(self.cfg.index.val());
            self.cfg_psn.d.next = self.cfg.data.val().get_value_recv_init_start_psn();
        }

        // ---------------- Ports.
        self.place_valid.next = self.p_v.q.val();
        self.place_qp.next = self.p_qp.q.val();
        self.place_addr.next = self.p_addr.q.val();
        self.place_len.next = self.p_len.q.val();
        self.place_buf.next = self.p_buf.q.val();
        self.nack_valid.next = self.n_v.q.val();
        self.nack_qp.next = self.n_qp.q.val();
        self.nack_psn.next = self.n_psn.q.val();
        self.nack_code.next = 2.into();
        self.res_valid.next = self.r_v.q.val();
        self.res_qp.next = self.r_qp.q.val();
        self.res_psn.next = self.r_psn.q.val();
        self.res_code.next = self.r_code.q.val();
        self.cnt_remote_access.next = self.r_v.q.val() & (self.r_code.q.val() == 1);
        self.cnt_imm_dropped.next = self.r_v.q.val() & (self.r_code.q.val() == 2);
        self.cq_valid.next = self.o_cq_v.q.val();
        self.cq_qp.next = self.o_cq.q.val().get_bits::<QP_BITS>(0);
        self.cq_imm.next = self.o_cq.q.val().get_bits::<32>(8);
        self.cq_len.next = self.o_cq.q.val().get_bits::<32>(40);
        self.cq_msn.next = self.o_cq.q.val().get_bits::<24>(72);
        self.done_valid.next = self.d_v.q.val();
        self.done_msn.next = self.d_msn.q.val();
        self.held_count.next = self.held.q.val();
        self.cfg_busy.next = self.cfg_pend.q.val();
    }
}
