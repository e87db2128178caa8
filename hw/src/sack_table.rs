//! Receive SACK table: per-QP receive bitmap (a ring of 64-bit words in
//! block RAM) and per-QP expected PSN, implementing the responder rules of
//! `proto::model::mrc` (window `[expected, expected + MPR)`, duplicates
//! before `expected` or already received, out-of-window beyond, cumulative
//! advance over received PSNs). See `docs/hw/sack_table.md`.
//!
//! One sequencer serves three request ports (priority init > packet >
//! snapshot), one request at a time: a request is taken at an edge where
//! `ready` and its valid are high. A packet verdict is registered 2 edges
//! later when the expected PSN does not move, 3 + c edges later when the
//! cumulative advance crosses c word boundaries (one 64-bit word per
//! cycle, shift-free trailing-ones step in [`Advance`]); a snapshot 3
//! edges later.

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

/// Sequencer states.
pub mod state {
    pub const IDLE: u8 = 0;
    pub const P_EXP: u8 = 1;
    pub const P_DECIDE: u8 = 2;
    pub const SCAN: u8 = 3;
    pub const S_EXP: u8 = 4;
    pub const S_W0: u8 = 5;
    pub const S_W1: u8 = 6;
    pub const INIT: u8 = 7;
}

/// One step of the cumulative advance on a ring word, without shifters:
/// with `below` = the bits under `off` and `y = (w | below) + 1`, the
/// increment clears the run of ones from `off` and sets the bit `t` where it
/// ends (`carry` when it runs off the word's end, `t` = 64). `t` is the
/// one-hot position of `y & !(w | below)` encoded by six OR trees, `n = t -
/// off`, and `wnext = w & (y | below)` clears exactly the run (bits below
/// `off` are kept: the ring is exactly the window, so in the word holding
/// `expected` they are the window's top PSNs).
#[derive(LogicBlock, Default)]
pub struct Advance {
    pub w: Signal<In, Bits<64>>,
    pub off: Signal<In, Bits<6>>,
    /// Position where the run ends (`off + n`), 64 on carry.
    pub t: Signal<Out, Bits<7>>,
    pub carry: Signal<Out, Bit>,
    pub wnext: Signal<Out, Bits<64>>,
}

impl Advance {
    /// The reference computation (also the simulation model).
    pub fn step(w: u64, off: u32) -> (u32, bool, u64) {
        let below = if off == 0 { 0 } else { u64::MAX >> (64 - off) };
        let wo = w | below;
        let (y, carry) = wo.overflowing_add(1);
        let t = if carry { 64 } else { (y & !wo).trailing_zeros() };
        (t, carry, w & (y | below))
    }
}

impl Logic for Advance {
    fn update(&mut self) {
        let (t, carry, wnext) = Advance::step(self.w.val().to_u64(), self.off.val().to_u64() as u32);
        self.t.next = u64::from(t).into();
        self.carry.next = carry;
        self.wnext.next = wnext.into();
    }
    fn connect(&mut self) {
        self.t.connect();
        self.carry.connect();
        self.wnext.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut s = String::from(
            "wire [63:0] below = ~({64{1'b1}} << off);\n\
             wire [63:0] wo = w | below;\n\
             wire [64:0] y = {1'b0, wo} + 65'd1;\n\
             wire [63:0] oh = y[63:0] & ~wo;\n\
             always @(*) begin\n   carry = y[64];\n   wnext = w & (y[63:0] | below);\n   t[6] = y[64];\n",
        );
        for b in 0..6 {
            let bits: Vec<String> = (0..64).filter(|i| i >> b & 1 == 1).map(|i| format!("oh[{i}]")).collect();
            s.push_str(&format!("   t[{b}] = {};\n", bits.join(" | ")));
        }
        s.push_str("end");
        Verilog::Custom(s)
    }
}

/// The table.
///
/// * Init: `init_valid` with `init_qp` / `init_psn` (accepted when
///   `ready`): sets the QP's expected PSN and clears its ring
///   (busy `WORDS` + 1 cycles).
/// * Packet: `req_valid` with `req_qp` / `req_psn` (accepted when `ready`
///   and no init): `out_valid` pulses with `out_verdict` and
///   `out_expected` (after any cumulative advance).
/// * Snapshot: `snap_valid` with `snap_qp` (accepted when `ready` and
///   neither of the above): `snap_out_valid` pulses after 3 edges with
///   `snap_cum` (expected - 1), `snap_base` (= expected) and
///   `snap_bitmap` (bit i = PSN base + i received).
#[derive(LogicBlock)]
pub struct SackTable {
    pub clock: Signal<In, Clock>,
    pub ready: Signal<Out, Bit>,
    pub init_valid: Signal<In, Bit>,
    pub init_qp: Signal<In, Bits<QP_BITS>>,
    pub init_psn: Signal<In, Bits<24>>,
    pub req_valid: Signal<In, Bit>,
    pub req_qp: Signal<In, Bits<QP_BITS>>,
    pub req_psn: Signal<In, Bits<24>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_verdict: Signal<Out, Bits<2>>,
    pub out_expected: Signal<Out, Bits<24>>,
    pub snap_valid: Signal<In, Bit>,
    pub snap_qp: Signal<In, Bits<QP_BITS>>,
    pub snap_out_valid: Signal<Out, Bit>,
    pub snap_cum: Signal<Out, Bits<24>>,
    pub snap_base: Signal<Out, Bits<24>>,
    pub snap_bitmap: Signal<Out, Bits<64>>,
    // Memories.
    exp_ram: RAM<Bits<24>, QP_BITS>,
    bm_ram: RAM<Bits<64>, ADDR_BITS>,
    adv: Advance,
    // Constants.
    c_mpr: Constant<Bits<24>>,
    c_last_word: Constant<Bits<WORD_BITS>>,
    c_one: Constant<Bits<64>>,
    c_word_mask: Constant<Bits<24>>,
    // Sequencer state.
    st: DFF<Bits<3>>,
    qp: DFF<Bits<QP_BITS>>,
    psn: DFF<Bits<24>>,
    exp: DFF<Bits<24>>,
    is_before: DFF<Bit>,
    inw: DFF<Bit>,
    word: DFF<Bits<64>>,
    from_ram: DFF<Bit>,
    cnt: DFF<Bits<WORD_BITS>>,
    o_valid: DFF<Bit>,
    o_verdict: DFF<Bits<2>>,
    o_expected: DFF<Bits<24>>,
    s_valid: DFF<Bit>,
    s_cum: DFF<Bits<24>>,
    s_base: DFF<Bits<24>>,
    s_bitmap: DFF<Bits<64>>,
    // Combinational locals.
    off: Signal<Local, Bits<24>>,
    bitmask: Signal<Local, Bits<64>>,
    rd_word: Signal<Local, Bits<64>>,
    exp_next: Signal<Local, Bits<24>>,
    sh: Signal<Local, Bits<7>>,
    shinv: Signal<Local, Bits<7>>,
}

impl Default for SackTable {
    fn default() -> Self {
        SackTable {
            clock: Default::default(),
            ready: Default::default(),
            init_valid: Default::default(),
            init_qp: Default::default(),
            init_psn: Default::default(),
            req_valid: Default::default(),
            req_qp: Default::default(),
            req_psn: Default::default(),
            out_valid: Default::default(),
            out_verdict: Default::default(),
            out_expected: Default::default(),
            snap_valid: Default::default(),
            snap_qp: Default::default(),
            snap_out_valid: Default::default(),
            snap_cum: Default::default(),
            snap_base: Default::default(),
            snap_bitmap: Default::default(),
            exp_ram: Default::default(),
            bm_ram: Default::default(),
            adv: Default::default(),
            c_mpr: Constant::new(u64::from(MPR).into()),
            c_last_word: Constant::new(((WORDS - 1) as u64).into()),
            c_one: Constant::new(1u64.into()),
            c_word_mask: Constant::new(0xFF_FFC0u64.into()),
            st: Default::default(),
            qp: Default::default(),
            psn: Default::default(),
            exp: Default::default(),
            is_before: Default::default(),
            inw: Default::default(),
            word: Default::default(),
            from_ram: Default::default(),
            cnt: Default::default(),
            o_valid: Default::default(),
            o_verdict: Default::default(),
            o_expected: Default::default(),
            s_valid: Default::default(),
            s_cum: Default::default(),
            s_base: Default::default(),
            s_bitmap: Default::default(),
            off: Default::default(),
            bitmask: Default::default(),
            rd_word: Default::default(),
            exp_next: Default::default(),
            sh: Default::default(),
            shinv: Default::default(),
        }
    }
}

impl Logic for SackTable {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, qp, psn, exp, is_before, inw, word, from_ram, cnt, o_valid, o_verdict, o_expected, s_valid,
            s_cum, s_base, s_bitmap
        );
        self.exp_ram.read_clock.next = self.clock.val();
        self.exp_ram.write_clock.next = self.clock.val();
        self.bm_ram.read_clock.next = self.clock.val();
        self.bm_ram.write_clock.next = self.clock.val();
        // RAM ports idle unless a state drives them.
        self.exp_ram.read_address.next = self.qp.q.val();
        self.exp_ram.write_address.next = self.qp.q.val();
        self.exp_ram.write_data.next = self.exp.q.val();
        self.exp_ram.write_enable.next = false;
        self.bm_ram.read_address.next =
            (bit_cast::<ADDR_BITS, QP_BITS>(self.qp.q.val()) << 2) | bit_cast::<ADDR_BITS, 24>((self.exp.q.val() >> 6) & 3);
        self.bm_ram.write_address.next =
            (bit_cast::<ADDR_BITS, QP_BITS>(self.qp.q.val()) << 2) | bit_cast::<ADDR_BITS, 24>((self.exp.q.val() >> 6) & 3);
        self.bm_ram.write_data.next = self.adv.wnext.val();
        self.bm_ram.write_enable.next = false;
        // Packet checks: offset from expected; the PSN's bit in its word.
        self.off.next = self.psn.q.val() - self.exp_ram.read_data.val();
        self.bitmask.next = self.c_one.val() << bit_cast::<64, 24>(self.psn.q.val() & 63);
        self.rd_word.next = self.bm_ram.read_data.val();
        // Cumulative advance: the first word comes from the register (just
        // updated), the following ones straight from the RAM.
        if self.from_ram.q.val() {
            self.adv.w.next = self.bm_ram.read_data.val();
        } else {
            self.adv.w.next = self.word.q.val();
        }
        self.adv.off.next = bit_cast::<6, 24>(self.exp.q.val() & 63);
        // exp + n = exp rounded down to its word + t (no adder on n).
        self.exp_next.next = (self.exp.q.val() & self.c_word_mask.val()) + bit_cast::<24, 7>(self.adv.t.val());
        // Snapshot funnel shift.
        self.sh.next = bit_cast::<7, 24>(self.exp.q.val() & 63);
        self.shinv.next = 64 - self.sh.val();
        self.o_valid.d.next = false;
        self.s_valid.d.next = false;
        self.ready.next = self.st.q.val() == 0;
        if self.st.q.val() == 0 {
            // IDLE
                if self.init_valid.val() {
                    self.exp_ram.write_address.next = self.init_qp.val();
                    self.exp_ram.write_data.next = self.init_psn.val();
                    self.exp_ram.write_enable.next = true;
                    self.qp.d.next = self.init_qp.val();
                    self.cnt.d.next = 0.into();
                    self.st.d.next = 7.into();
                } else if self.req_valid.val() {
                    self.exp_ram.read_address.next = self.req_qp.val();
                    self.qp.d.next = self.req_qp.val();
                    self.psn.d.next = self.req_psn.val();
                    self.st.d.next = 1.into();
                } else if self.snap_valid.val() {
                    self.exp_ram.read_address.next = self.snap_qp.val();
                    self.qp.d.next = self.snap_qp.val();
                    self.st.d.next = 4.into();
                }
            } else if self.st.q.val() == 7 {
            // INIT
                self.bm_ram.write_address.next =
                    (bit_cast::<ADDR_BITS, QP_BITS>(self.qp.q.val()) << 2) | bit_cast::<ADDR_BITS, WORD_BITS>(self.cnt.q.val());
                self.bm_ram.write_data.next = 0.into();
                self.bm_ram.write_enable.next = true;
                self.cnt.d.next = self.cnt.q.val() + 1;
                if self.cnt.q.val() == self.c_last_word.val() {
                    self.st.d.next = 0.into();
                }
            } else if self.st.q.val() == 1 {
            // P_EXP
                self.exp.d.next = self.exp_ram.read_data.val();
                self.is_before.d.next = self.off.val().get_bit(23);
                self.inw.d.next = self.off.val() < self.c_mpr.val();
                self.bm_ram.read_address.next =
                    (bit_cast::<ADDR_BITS, QP_BITS>(self.qp.q.val()) << 2) | bit_cast::<ADDR_BITS, 24>((self.psn.q.val() >> 6) & 3);
                self.st.d.next = 2.into();
            } else if self.st.q.val() == 2 {
            // P_DECIDE
                self.o_expected.d.next = self.exp.q.val();
                self.st.d.next = 0.into();
                if self.is_before.q.val() {
                    self.o_valid.d.next = true;
                    self.o_verdict.d.next = 2.into();
                } else if !self.inw.q.val() {
                    self.o_valid.d.next = true;
                    self.o_verdict.d.next = 3.into();
                } else if (self.rd_word.val() & self.bitmask.val()).any() {
                    self.o_valid.d.next = true;
                    self.o_verdict.d.next = 2.into();
                } else if self.psn.q.val() == self.exp.q.val() {
                    // In order: set the bit and scan from the register.
                    self.word.d.next = self.rd_word.val() | self.bitmask.val();
                    self.from_ram.d.next = false;
                    self.st.d.next = 3.into();
                } else {
                    self.bm_ram.write_address.next = (bit_cast::<ADDR_BITS, QP_BITS>(self.qp.q.val()) << 2)
                        | bit_cast::<ADDR_BITS, 24>((self.psn.q.val() >> 6) & 3);
                    self.bm_ram.write_data.next = self.rd_word.val() | self.bitmask.val();
                    self.bm_ram.write_enable.next = true;
                    self.o_valid.d.next = true;
                    self.o_verdict.d.next = 1.into();
                }
            } else if self.st.q.val() == 3 {
            // SCAN
                // Write back the scanned word (cleared run) at exp's word.
                self.bm_ram.write_enable.next = true;
                self.exp.d.next = self.exp_next.val();
                if self.adv.carry.val() {
                    // Read the next ring word (exp_next is word-aligned).
                    self.bm_ram.read_address.next = (bit_cast::<ADDR_BITS, QP_BITS>(self.qp.q.val()) << 2)
                        | bit_cast::<ADDR_BITS, 24>((self.exp_next.val() >> 6) & 3);
                    self.from_ram.d.next = true;
                } else {
                    self.exp_ram.write_data.next = self.exp_next.val();
                    self.exp_ram.write_enable.next = true;
                    self.o_valid.d.next = true;
                    self.o_verdict.d.next = 1.into();
                    self.o_expected.d.next = self.exp_next.val();
                    self.st.d.next = 0.into();
                }
            } else if self.st.q.val() == 4 {
            // S_EXP
                self.exp.d.next = self.exp_ram.read_data.val();
                self.bm_ram.read_address.next = (bit_cast::<ADDR_BITS, QP_BITS>(self.qp.q.val()) << 2)
                    | bit_cast::<ADDR_BITS, 24>((self.exp_ram.read_data.val() >> 6) & 3);
                self.st.d.next = 5.into();
            } else if self.st.q.val() == 5 {
            // S_W0
                self.word.d.next = self.rd_word.val();
                self.bm_ram.read_address.next = (bit_cast::<ADDR_BITS, QP_BITS>(self.qp.q.val()) << 2)
                    | bit_cast::<ADDR_BITS, 24>(((self.exp.q.val() + 64) >> 6) & 3);
                self.st.d.next = 6.into();
            } else if self.st.q.val() == 6 {
            // S_W1
                self.s_valid.d.next = true;
                self.s_cum.d.next = self.exp.q.val() - 1;
                self.s_base.d.next = self.exp.q.val();
                if self.sh.val() == 0 {
                    self.s_bitmap.d.next = self.word.q.val();
                } else {
                    self.s_bitmap.d.next =
                        (self.word.q.val() >> self.sh.val()) | (self.rd_word.val() << self.shinv.val());
                }
                self.st.d.next = 0.into();
            } else {
                self.st.d.next = 0.into();
            }
        self.out_valid.next = self.o_valid.q.val();
        self.out_verdict.next = self.o_verdict.q.val();
        self.out_expected.next = self.o_expected.q.val();
        self.snap_out_valid.next = self.s_valid.q.val();
        self.snap_cum.next = self.s_cum.q.val();
        self.snap_base.next = self.s_base.q.val();
        self.snap_bitmap.next = self.s_bitmap.q.val();
    }
}
