//! Receive SACK table: per-QP receive bitmap (a ring of 64-bit words in
//! block RAM) and per-QP expected PSN, implementing the responder rules of
//! `proto::model::mrc` (window `[expected, expected + MPR)`, duplicates
//! before `expected` or already received, out-of-window beyond, cumulative
//! advance over received PSNs). See `docs/hw/sack_table.md`.
//!
//! Packets go through a two-stage pipeline (read expected | read the
//! PSN's word, decide, write back), one per cycle for different QPs; a
//! packet whose QP is still in stage 1 stalls (`ready` low) for a cycle,
//! until its predecessor is deciding in stage 2 (it then reads its word a
//! cycle after the predecessor's write; behind an advance it waits in
//! stage 1 for the new expected PSN, `settle`). A verdict is registered 2 edges after
//! the request is taken when the expected PSN does not move; a new
//! in-order packet runs the cumulative advance (mode SCAN, pipeline held):
//! one 64-bit word per cycle with the shift-free trailing-ones step of
//! [`Advance`], whose carry chain ends in registers (the run's end, one-hot,
//! is encoded a cycle later, so the scan decides one cycle after its last
//! word): verdict 4 + c edges after acceptance (c = word boundaries
//! crossed). A packet with `req_nomark` (trimmed) gets its verdict but
//! is not recorded. Init and snapshot requests run on an empty pipeline;
//! a snapshot (64 bits from a requested base PSN) takes 2 edges.

use rust_hdl::prelude::*;

/// log2 of the number of QPs.
pub const QP_BITS: usize = 8;
/// Number of QPs.
pub const QPS: usize = 1 << QP_BITS;
/// log2 of the words in a QP's ring.
pub const WORD_BITS: usize = 2;
/// Words (64 PSNs each) in a QP's ring.
pub const WORDS: usize = 1 << WORD_BITS;
/// The MPR window in PSNs (= the ring, a power of two).
pub const MPR: u32 = 64 * WORDS as u32;
/// Bitmap RAM address: `{qp, ring word}`.
pub const ADDR_BITS: usize = QP_BITS + WORD_BITS;

/// Verdicts on `out_verdict`.
pub mod verdict {
    /// First arrival inside the window: recorded.
    pub const NEW: u8 = 1;
    /// Before the expected PSN or already received.
    pub const DUPLICATE: u8 = 2;
    /// At or beyond `expected + MPR`.
    pub const OUT_OF_WINDOW: u8 = 3;
}

/// Values of the mode register (written as literals in the `#[hdl_gen]`
/// body, which takes no const paths).
pub mod mode {
    /// Packet pipeline running.
    pub const PIPELINE: u8 = 0;
    /// Cumulative advance, one word per cycle; pipeline held.
    pub const SCAN: u8 = 3;
    /// Snapshot: expected PSN and the base's word in (masks decided);
    /// the next word in (shift, mask, register the bitmap).
    pub const SNAP_EXP: u8 = 4;
    pub const SNAP_W1: u8 = 5;
    /// Clearing a QP's ring.
    pub const INIT: u8 = 7;
}

/// One step of the cumulative advance on a ring word, without shifters:
/// with `below` = the bits under `off` (an input, registered by the
/// table: no shifter on this path) and `y = (w | below) + 1`, the increment
/// clears the run of ones from `off` and sets the bit `t` where it ends
/// (`carry` when it runs off the word's end, `t` = 64). `onehot = y & !(w |
/// below)` has exactly bit `t` set (none on carry); [`OneHotIndex`] encodes
/// it (a cycle later in the table), and `wnext = w & (y | below)` clears
/// exactly the run (bits below `off` are kept: the ring is exactly the
/// window, so in the word holding `expected` they are the window's top
/// PSNs).
#[derive(LogicBlock, Default)]
pub struct Advance {
    pub w: Signal<In, Bits<64>>,
    /// Bits under the start offset (`!(!0 << off)`).
    pub below: Signal<In, Bits<64>>,
    /// Bit `t` (where the run ends) set; zero on carry.
    pub onehot: Signal<Out, Bits<64>>,
    pub carry: Signal<Out, Bit>,
    pub wnext: Signal<Out, Bits<64>>,
}

impl Advance {
    /// The bits under `off`.
    pub fn below(off: u32) -> u64 {
        if off == 0 {
            0
        } else {
            u64::MAX >> (64 - off)
        }
    }

    /// The leaf's function: `(onehot, carry, wnext)` from the word and the
    /// mask of the bits under the start offset.
    pub fn step_masked(w: u64, below: u64) -> (u64, bool, u64) {
        let wo = w | below;
        let (y, carry) = wo.overflowing_add(1);
        (y & !wo, carry, w & (y | below))
    }

    /// The step as the table uses it: `(t, carry, wnext)` with `t` the
    /// position where the run from `off` ends (64 on carry).
    pub fn step(w: u64, off: u32) -> (u32, bool, u64) {
        let (onehot, carry, wnext) = Advance::step_masked(w, Advance::below(off));
        let t = if carry { 64 } else { OneHotIndex::index(onehot) };
        (t, carry, wnext)
    }
}

impl Logic for Advance {
    fn update(&mut self) {
        let (onehot, carry, wnext) = Advance::step_masked(self.w.val().to_u64(), self.below.val().to_u64());
        self.onehot.next = onehot.into();
        self.carry.next = carry;
        self.wnext.next = wnext.into();
    }
    fn connect(&mut self) {
        self.onehot.connect();
        self.carry.connect();
        self.wnext.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "wire [63:0] wo = w | below;\n\
             wire [64:0] y = {1'b0, wo} + 65'd1;\n\
             always @(*) begin\n   carry = y[64];\n   onehot = y[63:0] & ~wo;\n   wnext = w & (y[63:0] | below);\nend"
                .into(),
        )
    }
}

/// Index of the set bit of a one-hot 64-bit word (0 when none is set):
/// six OR trees of 32 inputs, no priority logic.
#[derive(LogicBlock, Default)]
pub struct OneHotIndex {
    pub onehot: Signal<In, Bits<64>>,
    pub index: Signal<Out, Bits<6>>,
}

impl OneHotIndex {
    /// The OR-tree encoding (for a one-hot input: its trailing zeros).
    pub fn index(onehot: u64) -> u32 {
        (0..6)
            .filter(|b| (0..64).any(|i| i >> b & 1 == 1 && onehot >> i & 1 == 1))
            .map(|b| 1 << b)
            .sum()
    }
}

impl Logic for OneHotIndex {
    fn update(&mut self) {
        self.index.next = u64::from(OneHotIndex::index(self.onehot.val().to_u64())).into();
    }
    fn connect(&mut self) {
        self.index.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut s = String::from("always @(*) begin\n");
        for b in 0..6 {
            let bits: Vec<String> = (0..64)
                .filter(|i| i >> b & 1 == 1)
                .map(|i| format!("onehot[{i}]"))
                .collect();
            s.push_str(&format!("   index[{b}] = {};\n", bits.join(" | ")));
        }
        s.push_str("end");
        Verilog::Custom(s)
    }
}

/// The table.
///
/// * Packet: `req_valid` with `req_qp` / `req_psn`, taken at an edge
///   where `ready` is high. `ready` is low while a scan, snapshot or init
///   runs, while `init_valid` is high, for the cycle after a scan that
///   wrote stage 1's expected PSN (`settle`), and (combinationally from
///   `req_qp`) when the request's QP is in stage 1 (same-QP hazard: a
///   cycle's stall).
///   `out_valid` pulses with `out_verdict` and `out_expected` (after any
///   cumulative advance), in request order.
/// * Init: `init_valid` with `init_qp` / `init_psn`, taken when
///   `init_ready` (pipeline empty): sets the QP's expected PSN and clears
///   its ring (busy `WORDS` + 1 cycles).
///   With `req_nomark` the verdict is the same but a new PSN is neither
///   marked nor advanced over (`out_expected` unchanged).
/// * Snapshot: `snap_valid` with `snap_qp` and `snap_base`, taken when
///   `snap_ready` (pipeline empty, no packet or init request):
///   `snap_out_valid` pulses 2 edges later with `snap_cum` (expected - 1),
///   `snap_out_base` (= `snap_base`) and `snap_bitmap`: bit i = PSN
///   `snap_base + i` received; 1 for PSNs before `expected`, 0 for PSNs
///   at or beyond `expected + MPR`.
#[derive(LogicBlock)]
pub struct SackTable {
    pub clock: Signal<In, Clock>,
    pub req_valid: Signal<In, Bit>,
    pub req_qp: Signal<In, Bits<QP_BITS>>,
    pub req_psn: Signal<In, Bits<24>>,
    /// Verdict only: the PSN's bit is not set and `expected` does not move
    /// (trimmed packets, which the model NACKs without marking).
    pub req_nomark: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub out_valid: Signal<Out, Bit>,
    pub out_verdict: Signal<Out, Bits<2>>,
    pub out_expected: Signal<Out, Bits<24>>,
    pub init_valid: Signal<In, Bit>,
    pub init_qp: Signal<In, Bits<QP_BITS>>,
    pub init_psn: Signal<In, Bits<24>>,
    pub init_ready: Signal<Out, Bit>,
    pub snap_valid: Signal<In, Bit>,
    pub snap_qp: Signal<In, Bits<QP_BITS>>,
    /// The PSN of the bitmap's bit 0 (AckGen's choice: `expected`, or the
    /// trigger - 63 when the trigger lies beyond the 64 bits).
    pub snap_base: Signal<In, Bits<24>>,
    pub snap_ready: Signal<Out, Bit>,
    pub snap_out_valid: Signal<Out, Bit>,
    pub snap_cum: Signal<Out, Bits<24>>,
    /// The requested base, echoed with the bitmap.
    pub snap_out_base: Signal<Out, Bits<24>>,
    pub snap_bitmap: Signal<Out, Bits<64>>,
    // Memories.
    exp_ram: RAM<Bits<24>, QP_BITS>,
    bm_ram: RAM<Bits<64>, ADDR_BITS>,
    adv: Advance,
    enc: OneHotIndex,
    // Constants.
    c_mpr: Constant<Bits<24>>,
    c_last_word: Constant<Bits<WORD_BITS>>,
    c_one: Constant<Bits<64>>,
    c_ones: Constant<Bits<64>>,
    c_word_mask: Constant<Bits<24>>,
    c_mpr_top: Constant<Bits<24>>,
    // Mode: 0 pipeline, 3 scan, 4-5 snapshot, 7 init.
    mode: DFF<Bits<3>>,
    // Stage 1: the expected PSN is being read.
    s1_v: DFF<Bit>,
    s1_qp: DFF<Bits<QP_BITS>>,
    s1_psn: DFF<Bits<24>>,
    s1_nomark: DFF<Bit>,
    // Stage 2: the PSN's word is being read; decide and write back.
    s2_v: DFF<Bit>,
    s2_qp: DFF<Bits<QP_BITS>>,
    s2_psn: DFF<Bits<24>>,
    s2_exp: DFF<Bits<24>>,
    s2_before: DFF<Bit>,
    s2_inw: DFF<Bit>,
    s2_nomark: DFF<Bit>,
    // The scan that just ended wrote the expected PSN of stage 1's QP in
    // the cycle stage 1 re-read it: stage 1 reads it once more (no move,
    // no request taken) before it goes on.
    settle: DFF<Bit>,
    // Scan / snapshot / init state.
    qp: DFF<Bits<QP_BITS>>,
    exp: DFF<Bits<24>>,
    word: DFF<Bits<64>>,
    from_ram: DFF<Bit>,
    cnt: DFF<Bits<WORD_BITS>>,
    // Scan pipeline: `live` = the word on `adv.w` is part of the run; the
    // mask of the bits under the first word's start offset (`below`); the
    // previous word's base (`hi_r`) and where the run ended in it, one-hot
    // (`oh_r`).
    live: DFF<Bit>,
    below: DFF<Bits<64>>,
    hi_r: DFF<Bits<24>>,
    oh_r: DFF<Bits<64>>,
    // Snapshot masks, decided from `d = base - expected` in SNAP_EXP:
    // `d` in [0, MPR - 64) (all 64 bits in the window), in [MPR - 64, MPR)
    // (the low `MPR - d` bits), in [-64, 0) (the low `-d` bits before
    // `expected`: ones), before -64 (all ones); otherwise beyond the
    // window (zeros). `sn_j` = `d mod 64`: both partial cases are a
    // thermometer `!0 >> j`.
    sn_in_low: DFF<Bit>,
    sn_near_top: DFF<Bit>,
    sn_near_before: DFF<Bit>,
    sn_far_before: DFF<Bit>,
    sn_j: DFF<Bits<6>>,
    // Registered outputs.
    o_valid: DFF<Bit>,
    o_verdict: DFF<Bits<2>>,
    o_expected: DFF<Bits<24>>,
    s_valid: DFF<Bit>,
    s_cum: DFF<Bits<24>>,
    s_base: DFF<Bits<24>>,
    s_bitmap: DFF<Bits<64>>,
    // Combinational locals.
    hazard: Signal<Local, Bit>,
    empty: Signal<Local, Bit>,
    off: Signal<Local, Bits<24>>,
    bitmask: Signal<Local, Bits<64>>,
    snap_d: Signal<Local, Bits<24>>,
    therm: Signal<Local, Bits<64>>,
    keep: Signal<Local, Bits<64>>,
    set_ones: Signal<Local, Bits<64>>,
    shifted: Signal<Local, Bits<64>>,
    rd_word: Signal<Local, Bits<64>>,
    exp_done: Signal<Local, Bits<24>>,
    sh: Signal<Local, Bits<7>>,
    shinv: Signal<Local, Bits<7>>,
}

impl Default for SackTable {
    fn default() -> Self {
        SackTable {
            clock: Default::default(),
            req_valid: Default::default(),
            req_qp: Default::default(),
            req_psn: Default::default(),
            req_nomark: Default::default(),
            ready: Default::default(),
            out_valid: Default::default(),
            out_verdict: Default::default(),
            out_expected: Default::default(),
            init_valid: Default::default(),
            init_qp: Default::default(),
            init_psn: Default::default(),
            init_ready: Default::default(),
            snap_valid: Default::default(),
            snap_qp: Default::default(),
            snap_base: Default::default(),
            snap_ready: Default::default(),
            snap_out_valid: Default::default(),
            snap_cum: Default::default(),
            snap_out_base: Default::default(),
            snap_bitmap: Default::default(),
            exp_ram: Default::default(),
            bm_ram: Default::default(),
            adv: Default::default(),
            enc: Default::default(),
            c_mpr: Constant::new(u64::from(MPR).into()),
            c_last_word: Constant::new(((WORDS - 1) as u64).into()),
            c_one: Constant::new(1u64.into()),
            c_ones: Constant::new(u64::MAX.into()),
            c_word_mask: Constant::new(0xFF_FFC0u64.into()),
            c_mpr_top: Constant::new(u64::from(MPR - 64).into()),
            mode: Default::default(),
            s1_v: Default::default(),
            s1_qp: Default::default(),
            s1_psn: Default::default(),
            s1_nomark: Default::default(),
            s2_v: Default::default(),
            s2_qp: Default::default(),
            s2_psn: Default::default(),
            s2_exp: Default::default(),
            s2_before: Default::default(),
            s2_inw: Default::default(),
            s2_nomark: Default::default(),
            settle: Default::default(),
            qp: Default::default(),
            exp: Default::default(),
            word: Default::default(),
            from_ram: Default::default(),
            cnt: Default::default(),
            live: Default::default(),
            below: Default::default(),
            hi_r: Default::default(),
            oh_r: Default::default(),
            sn_in_low: Default::default(),
            sn_near_top: Default::default(),
            sn_near_before: Default::default(),
            sn_far_before: Default::default(),
            sn_j: Default::default(),
            o_valid: Default::default(),
            o_verdict: Default::default(),
            o_expected: Default::default(),
            s_valid: Default::default(),
            s_cum: Default::default(),
            s_base: Default::default(),
            s_bitmap: Default::default(),
            hazard: Default::default(),
            empty: Default::default(),
            off: Default::default(),
            bitmask: Default::default(),
            snap_d: Default::default(),
            therm: Default::default(),
            keep: Default::default(),
            set_ones: Default::default(),
            shifted: Default::default(),
            rd_word: Default::default(),
            exp_done: Default::default(),
            sh: Default::default(),
            shinv: Default::default(),
        }
    }
}

impl Logic for SackTable {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            mode,
            s1_v,
            s1_qp,
            s1_psn,
            s1_nomark,
            s2_v,
            s2_qp,
            s2_psn,
            s2_exp,
            s2_before,
            s2_inw,
            s2_nomark,
            settle,
            qp,
            exp,
            word,
            from_ram,
            cnt,
            live,
            below,
            hi_r,
            oh_r,
            sn_in_low,
            sn_near_top,
            sn_near_before,
            sn_far_before,
            sn_j,
            o_valid,
            o_verdict,
            o_expected,
            s_valid,
            s_cum,
            s_base,
            s_bitmap
        );
        self.exp_ram.read_clock.next = self.clock.val();
        self.exp_ram.write_clock.next = self.clock.val();
        self.bm_ram.read_clock.next = self.clock.val();
        self.bm_ram.write_clock.next = self.clock.val();
        // Defaults: stage 1 keeps reading its expected PSN and stage 2 its
        // word (so both survive a stall); no writes.
        self.exp_ram.read_address.next = self.s1_qp.q.val();
        self.exp_ram.write_address.next = self.qp.q.val();
        self.exp_ram.write_data.next = self.exp.q.val();
        self.exp_ram.write_enable.next = false;
        self.bm_ram.read_address.next = (bit_cast::<ADDR_BITS, QP_BITS>(self.s2_qp.q.val()) << 2)
            | bit_cast::<ADDR_BITS, 24>((self.s2_psn.q.val() >> 6) & 3);
        self.bm_ram.write_address.next = (bit_cast::<ADDR_BITS, QP_BITS>(self.qp.q.val()) << 2)
            | bit_cast::<ADDR_BITS, 24>((self.exp.q.val() >> 6) & 3);
        self.bm_ram.write_data.next = self.adv.wnext.val();
        self.bm_ram.write_enable.next = false;
        self.o_valid.d.next = false;
        self.s_valid.d.next = false;
        // Hazard: a request for the QP in stage 1 waits a cycle, so that
        // it reads its word only after its predecessor's write (stage 2's,
        // in the cycle the request enters stage 1). One behind stage 2
        // reads `expected` as stage 2 decides: unchanged unless stage 2
        // advances it, and then the scan holds the request in stage 1
        // until `expected` is written (`settle`).
        self.hazard.next = self.s1_v.q.val() & (self.req_qp.val() == self.s1_qp.q.val());
        self.empty.next = (self.mode.q.val() == 0) & !self.s1_v.q.val() & !self.s2_v.q.val();
        self.ready.next = (self.mode.q.val() == 0) & !self.hazard.val() & !self.init_valid.val() & !self.settle.q.val();
        self.init_ready.next = self.empty.val();
        self.snap_ready.next = self.empty.val() & !self.req_valid.val() & !self.init_valid.val();
        // Stage 1 checks: offset from expected.
        self.off.next = self.s1_psn.q.val() - self.exp_ram.read_data.val();
        // Stage 2: the PSN's bit in its word.
        self.bitmask.next = self.c_one.val() << bit_cast::<64, 24>(self.s2_psn.q.val() & 63);
        self.rd_word.next = self.bm_ram.read_data.val();
        // Cumulative advance: the first word comes from the register (just
        // updated), the following ones straight from the RAM.
        if self.from_ram.q.val() {
            self.adv.w.next = self.bm_ram.read_data.val();
        } else {
            self.adv.w.next = self.word.q.val();
        }
        self.adv.below.next = self.below.q.val();
        self.enc.onehot.next = self.oh_r.q.val();
        // The advanced expected PSN: the base of the word where the run
        // ended plus the registered end position (t < 64 there: no adder).
        self.exp_done.next = self.hi_r.q.val() | bit_cast::<24, 6>(self.enc.index.val());
        // Snapshot funnel shift.
        self.sh.next = bit_cast::<7, 24>(self.exp.q.val() & 63);
        self.shinv.next = 64 - self.sh.val();
        // Snapshot: where the base lies relative to `expected` (read in
        // SNAP_EXP), and the masks from the registered decision.
        self.snap_d.next = self.exp.q.val() - self.exp_ram.read_data.val();
        self.therm.next = self.c_ones.val() >> bit_cast::<64, 6>(self.sn_j.q.val());
        self.keep.next = 0.into();
        self.set_ones.next = 0.into();
        if self.sn_in_low.q.val() {
            self.keep.next = self.c_ones.val();
        }
        if self.sn_near_top.q.val() {
            self.keep.next = self.therm.val();
        }
        if self.sn_near_before.q.val() {
            self.keep.next = !self.therm.val();
            self.set_ones.next = self.therm.val();
        }
        if self.sn_far_before.q.val() {
            self.set_ones.next = self.c_ones.val();
        }
        if self.sh.val() == 0 {
            self.shifted.next = self.word.q.val();
        } else {
            self.shifted.next = (self.word.q.val() >> self.sh.val()) | (self.rd_word.val() << self.shinv.val());
        }
        if self.mode.q.val() == 0 {
            // The first scan word's mask, from stage 2's expected PSN
            // (registered whether or not a scan starts: off its path).
            self.below.d.next = !(self.c_ones.val() << bit_cast::<64, 24>(self.s2_exp.q.val() & 63));
            // PIPELINE. Stage 2: decide.
            if self.s2_v.q.val() {
                self.o_expected.d.next = self.s2_exp.q.val();
                if self.s2_before.q.val() {
                    self.o_valid.d.next = true;
                    self.o_verdict.d.next = 2.into();
                } else if !self.s2_inw.q.val() {
                    self.o_valid.d.next = true;
                    self.o_verdict.d.next = 3.into();
                } else if (self.rd_word.val() & self.bitmask.val()).any() {
                    self.o_valid.d.next = true;
                    self.o_verdict.d.next = 2.into();
                } else if self.s2_nomark.q.val() {
                    // New, but not marked (trimmed): verdict only.
                    self.o_valid.d.next = true;
                    self.o_verdict.d.next = 1.into();
                } else if self.s2_psn.q.val() == self.s2_exp.q.val() {
                    // In order: set the bit and scan from the register.
                    self.word.d.next = self.rd_word.val() | self.bitmask.val();
                    self.from_ram.d.next = false;
                    self.qp.d.next = self.s2_qp.q.val();
                    self.exp.d.next = self.s2_exp.q.val();
                    self.live.d.next = true;
                    self.mode.d.next = 3.into();
                } else {
                    self.bm_ram.write_address.next = (bit_cast::<ADDR_BITS, QP_BITS>(self.s2_qp.q.val()) << 2)
                        | bit_cast::<ADDR_BITS, 24>((self.s2_psn.q.val() >> 6) & 3);
                    self.bm_ram.write_data.next = self.rd_word.val() | self.bitmask.val();
                    self.bm_ram.write_enable.next = true;
                    self.o_valid.d.next = true;
                    self.o_verdict.d.next = 1.into();
                }
            }
            // Stage 1 -> 2: issue the word read. After a scan that wrote
            // stage 1's expected PSN (`settle`), stage 1 stays a cycle and
            // re-reads it (the default address), and nothing is taken.
            self.settle.d.next = false;
            self.s2_v.d.next = self.s1_v.q.val() & !self.settle.q.val();
            self.s2_qp.d.next = self.s1_qp.q.val();
            self.s2_psn.d.next = self.s1_psn.q.val();
            self.s2_nomark.d.next = self.s1_nomark.q.val();
            self.s2_exp.d.next = self.exp_ram.read_data.val();
            self.s2_before.d.next = self.off.val().get_bit(23);
            self.s2_inw.d.next = self.off.val() < self.c_mpr.val();
            if !self.settle.q.val() {
                self.bm_ram.read_address.next = (bit_cast::<ADDR_BITS, QP_BITS>(self.s1_qp.q.val()) << 2)
                    | bit_cast::<ADDR_BITS, 24>((self.s1_psn.q.val() >> 6) & 3);
                self.s1_v.d.next = false;
            }
            // Accept into stage 1: issue the expected-PSN read. Under
            // `settle` nothing is taken (stage 1 is full, so the pipeline
            // is not empty, and `ready` is low).
            if self.init_valid.val() & self.empty.val() {
                self.exp_ram.write_address.next = self.init_qp.val();
                self.exp_ram.write_data.next = self.init_psn.val();
                self.exp_ram.write_enable.next = true;
                self.qp.d.next = self.init_qp.val();
                self.cnt.d.next = 0.into();
                self.mode.d.next = 7.into();
            } else if self.req_valid.val() & self.ready.val() {
                self.exp_ram.read_address.next = self.req_qp.val();
                self.s1_v.d.next = true;
                self.s1_qp.d.next = self.req_qp.val();
                self.s1_psn.d.next = self.req_psn.val();
                self.s1_nomark.d.next = self.req_nomark.val();
            } else if self.snap_valid.val() & self.snap_ready.val() {
                // Read `expected` and the base's word at once.
                self.exp_ram.read_address.next = self.snap_qp.val();
                self.bm_ram.read_address.next = (bit_cast::<ADDR_BITS, QP_BITS>(self.snap_qp.val()) << 2)
                    | bit_cast::<ADDR_BITS, 24>((self.snap_base.val() >> 6) & 3);
                self.qp.d.next = self.snap_qp.val();
                self.exp.d.next = self.snap_base.val();
                self.mode.d.next = 4.into();
            }
        } else if self.mode.q.val() == 3 {
            // SCAN (stages 1 and 2 hold), one word per cycle with the
            // decision a cycle behind: while `live`, the word on `adv.w`
            // belongs to the run: write it back with the run cleared,
            // register where the run ends in it (`oh_r`, one-hot; the word's
            // base in `hi_r`) and whether it runs on (`live`), move `exp` to the
            // next word and read that word (speculatively: the carry is
            // only looked at in the next cycle, so the adder's carry chain
            // ends in registers). Once not live, the previous word ended the
            // run: `expected` = its base + the encoded end position. One cycle more than deciding
            // in the same cycle; the carry chain no longer feeds `exp` and
            // the RAM address.
            if self.live.q.val() {
                self.bm_ram.write_enable.next = true;
                self.live.d.next = self.adv.carry.val();
                self.oh_r.d.next = self.adv.onehot.val();
                self.below.d.next = 0.into();
                self.hi_r.d.next = self.exp.q.val() & self.c_word_mask.val();
                self.exp.d.next = (self.exp.q.val() & self.c_word_mask.val()) + 64;
                self.bm_ram.read_address.next = (bit_cast::<ADDR_BITS, QP_BITS>(self.qp.q.val()) << 2)
                    | bit_cast::<ADDR_BITS, 24>(((self.exp.q.val() >> 6) + 1) & 3);
                self.from_ram.d.next = true;
            } else {
                // Done; the default read address re-issues stage 2's read.
                // Stage 1 re-reads its expected PSN at this edge too: when
                // it is this QP's, the read misses the write (`settle`).
                self.exp_ram.write_data.next = self.exp_done.val();
                self.exp_ram.write_enable.next = true;
                self.settle.d.next = self.s1_v.q.val() & (self.s1_qp.q.val() == self.qp.q.val());
                self.o_valid.d.next = true;
                self.o_verdict.d.next = 1.into();
                self.o_expected.d.next = self.exp_done.val();
                self.mode.d.next = 0.into();
            }
        } else if self.mode.q.val() == 4 {
            // SNAP_EXP: `expected` and the base's word are in; classify
            // `d = base - expected` (the masks' inputs, registered), keep
            // the word, read the next one.
            self.s_cum.d.next = self.exp_ram.read_data.val() - 1;
            self.sn_j.d.next = bit_cast::<6, 24>(self.snap_d.val() & 63);
            self.sn_in_low.d.next = self.snap_d.val() < self.c_mpr_top.val();
            self.sn_near_top.d.next =
                (self.snap_d.val() >= self.c_mpr_top.val()) & (self.snap_d.val() < self.c_mpr.val());
            self.sn_near_before.d.next = (self.snap_d.val() >> 6) == 0x3_FFFF;
            self.sn_far_before.d.next = self.snap_d.val().get_bit(23) & ((self.snap_d.val() >> 6) != 0x3_FFFF);
            self.word.d.next = self.rd_word.val();
            self.bm_ram.read_address.next = (bit_cast::<ADDR_BITS, QP_BITS>(self.qp.q.val()) << 2)
                | bit_cast::<ADDR_BITS, 24>(((self.exp.q.val() >> 6) + 1) & 3);
            self.mode.d.next = 5.into();
        } else if self.mode.q.val() == 5 {
            // SNAP_W1: funnel shift of the two words from the base's
            // offset; ring bits outside the window are replaced (zeros
            // beyond it, ones before `expected`).
            self.s_valid.d.next = true;
            self.s_base.d.next = self.exp.q.val();
            self.s_bitmap.d.next = (self.shifted.val() & self.keep.val()) | self.set_ones.val();
            self.mode.d.next = 0.into();
        } else if self.mode.q.val() == 7 {
            // INIT
            self.bm_ram.write_address.next = (bit_cast::<ADDR_BITS, QP_BITS>(self.qp.q.val()) << 2)
                | bit_cast::<ADDR_BITS, WORD_BITS>(self.cnt.q.val());
            self.bm_ram.write_data.next = 0.into();
            self.bm_ram.write_enable.next = true;
            self.cnt.d.next = self.cnt.q.val() + 1;
            if self.cnt.q.val() == self.c_last_word.val() {
                self.mode.d.next = 0.into();
            }
        } else {
            self.mode.d.next = 0.into();
        }
        self.out_valid.next = self.o_valid.q.val();
        self.out_verdict.next = self.o_verdict.q.val();
        self.out_expected.next = self.o_expected.q.val();
        self.snap_out_valid.next = self.s_valid.q.val();
        self.snap_cum.next = self.s_cum.q.val();
        self.snap_out_base.next = self.s_base.q.val();
        self.snap_bitmap.next = self.s_bitmap.q.val();
    }
}
