//! Fault injection on the MAC streams (`hw::fault_inject::FaultInject`,
//! Verilog `mrc_fault_inject`): drops whole frames on the way from the MAC
//! RX port to the parser, by a seeded pseudo-random draw and by EV, and
//! can loop the core's TX stream back to its RX path. Settings come from
//! the CSR block (`regmap::fault_inject`). See `docs/hw/fault_inject.md`.
//!
//! The drop decision is made on a frame's first beat and held for the
//! rest of the frame, so a frame is passed or dropped whole. Output beats
//! leave through one register stage (`m_rx`), which also cuts the EV
//! extraction off the parser's input.

use rust_hdl::prelude::*;

use crate::bus::{AxisSink, AxisSource};

/// The xorshift32 step (Marsaglia, shifts 13, 17, 5): the generator the
/// random drop advances once per frame. GF(2)-linear like an LFSR, but
/// every output bit is the XOR of a handful of state bits (two LUT
/// levels), where a 32-bit LFSR stepped 32 times per frame would not be.
pub fn xorshift32(x: u32) -> u32 {
    let x = x ^ (x << 13);
    let x = x ^ (x >> 17);
    x ^ (x << 5)
}

/// The state a `seed` write loads (0 is the generator's fixed point).
pub fn seed_state(seed: u32) -> u32 {
    if seed == 0 {
        1
    } else {
        seed
    }
}

/// The UDP destination port of RoCEv2.
pub const ROCE_PORT: u16 = 4791;

/// The UDP source port (EV bits 15-0) of a RoCEv2 frame from its first
/// 64-byte beat, or `None` when the beat does not show one: not
/// (optionally 802.1Q-tagged) IPv4/IPv6, not UDP, not destination port
/// 4791, or the UDP header not entirely inside the first 64 bytes (IPv4
/// options of more than 28 bytes untagged, 24 tagged). The simulation model
/// of [`EvExtract`]; the test compares the block against `proto::wire`
/// instead.
pub fn roce_sport(beat: &[u8; 64]) -> Option<u16> {
    let be16 = |k: usize| u16::from_be_bytes([beat[k], beat[k + 1]]);
    let l3 = if be16(12) == 0x8100 { 18 } else { 14 };
    let et = be16(l3 - 2);
    let ver = beat[l3] >> 4;
    let udp = if et == 0x0800 && ver == 4 && beat[l3 + 9] == 17 && (beat[l3] & 15) >= 5 {
        l3 + 4 * usize::from(beat[l3] & 15)
    } else if et == 0x86DD && ver == 6 && beat[l3 + 6] == 17 {
        l3 + 40
    } else {
        return None;
    };
    (udp + 4 <= 64 && be16(udp + 2) == ROCE_PORT).then(|| be16(udp))
}

/// Combinational leaf: [`roce_sport`] on the first beat, in Verilog as a
/// `case` over the few header layouts (the UDP header's position depends
/// only on the VLAN tag, the IP version and the IPv4 IHL).
#[derive(LogicBlock, Default)]
pub struct EvExtract {
    pub tdata: Signal<In, Bits<512>>,
    /// The beat is the start of a RoCEv2 frame with its UDP header inside.
    pub roce: Signal<Out, Bit>,
    pub sport: Signal<Out, Bits<16>>,
}

impl Logic for EvExtract {
    fn update(&mut self) {
        let d = self.tdata.val();
        let mut beat = [0u8; 64];
        for (k, b) in beat.iter_mut().enumerate() {
            *b = d.get_bits::<8>(8 * k).index() as u8;
        }
        let r = roce_sport(&beat);
        self.roce.next = r.is_some();
        self.sport.next = u64::from(r.unwrap_or(0)).into();
    }
    fn connect(&mut self) {
        self.roce.connect();
        self.sport.connect();
    }
    fn hdl(&self) -> Verilog {
        let b = |k: usize| format!("tdata[{}:{}]", 8 * k + 7, 8 * k);
        let be16 = |k: usize| format!("{{{}, {}}}", b(k), b(k + 1));
        // High nibble (IP version) and low nibble (IPv4 IHL) of byte k.
        let hi = |k: usize| format!("tdata[{}:{}]", 8 * k + 7, 8 * k + 4);
        let lo = |k: usize| format!("tdata[{}:{}]", 8 * k + 3, 8 * k);
        let mut s = String::new();
        s.push_str(&format!("wire vlan = {} == 16'h8100;\n", be16(12)));
        for (v, l3) in [(0, 14), (1, 18)] {
            s.push_str(&format!(
                "wire v4_{v} = {} == 16'h0800 && {} == 4'd4 && {} == 8'd17;\n",
                be16(l3 - 2),
                hi(l3),
                b(l3 + 9)
            ));
            s.push_str(&format!(
                "wire v6_{v} = {} == 16'h86dd && {} == 4'd6 && {} == 8'd17;\n",
                be16(l3 - 2),
                hi(l3),
                b(l3 + 6)
            ));
        }
        s.push_str("always @(*) begin\n   roce = 1'b0;\n   sport = 16'd0;\n");
        for (v, l3) in [(0usize, 14usize), (1, 18)] {
            let cond = if v == 0 { "!vlan" } else { "vlan" };
            s.push_str(&format!("   if ({cond}) begin\n"));
            let udp6 = l3 + 40;
            if udp6 + 4 <= 64 {
                s.push_str(&format!(
                    "      if (v6_{v} && {} == 16'd{ROCE_PORT}) begin roce = 1'b1; sport = {}; end\n",
                    be16(udp6 + 2),
                    be16(udp6)
                ));
            }
            s.push_str(&format!("      if (v4_{v}) begin\n         case ({})\n", lo(l3)));
            for ihl in 5..16 {
                let udp = l3 + 4 * ihl;
                if udp + 4 <= 64 {
                    s.push_str(&format!(
                        "            4'd{ihl}: if ({} == 16'd{ROCE_PORT}) begin roce = 1'b1; sport = {}; end\n",
                        be16(udp + 2),
                        be16(udp)
                    ));
                }
            }
            s.push_str("            default: ;\n         endcase\n      end\n   end\n");
        }
        s.push_str("end");
        Verilog::Custom(s)
    }
}

/// The fault-injection stage.
#[derive(LogicBlock, Default)]
pub struct FaultInject {
    pub clock: Signal<In, Clock>,
    // From the MAC RX port.
    pub s_rx: AxisSink,
    // To the RX parser.
    pub m_rx: AxisSource,
    // From the core's TX path.
    pub s_tx: AxisSink,
    // To the MAC TX port.
    pub m_tx: AxisSource,
    // Settings (CSR `fault_inject` block).
    /// Bit 0 random drop, bit 1 EV drop, bit 2 loopback.
    pub ctrl: Signal<In, Bits<3>>,
    pub seed: Signal<In, Bits<32>>,
    pub seed_load: Signal<In, Bit>,
    pub drop_prob: Signal<In, Bits<17>>,
    pub ev_en: Signal<In, Bits<4>>,
    pub ev_match0: Signal<In, Bits<32>>,
    pub ev_match1: Signal<In, Bits<32>>,
    pub ev_match2: Signal<In, Bits<32>>,
    pub ev_match3: Signal<In, Bits<32>>,
    // Counter pulses (registered: one cycle after the frame's first beat).
    pub cnt_frames: Signal<Out, Bit>,
    pub cnt_rand_drop: Signal<Out, Bit>,
    pub cnt_ev_drop: Signal<Out, Bit>,
    pub cnt_lb_discard: Signal<Out, Bit>,
    ev: EvExtract,
    // Selected source (MAC RX, or TX in loopback).
    src_valid: Signal<Local, Bit>,
    src_last: Signal<Local, Bit>,
    src_ready: Signal<Local, Bit>,
    // Stage A: the beat, with the EV extracted from it.
    a_valid: DFF<Bit>,
    a_data: DFF<Bits<512>>,
    a_keep: DFF<Bits<64>>,
    a_last: DFF<Bit>,
    a_first: DFF<Bit>,
    a_roce: DFF<Bit>,
    a_sport: DFF<Bits<16>>,
    /// Next input beat starts a frame's second or later beat.
    mid: DFF<Bit>,
    // Stage B: the per-frame decision, then the output register.
    b_ready: Signal<Local, Bit>,
    consume: Signal<Local, Bit>,
    ev_hit: Signal<Local, Bit>,
    rand_hit: Signal<Local, Bit>,
    drop_now: Signal<Local, Bit>,
    xs1: Signal<Local, Bits<32>>,
    xs2: Signal<Local, Bits<32>>,
    xs3: Signal<Local, Bits<32>>,
    lfsr: DFF<Bits<32>>,
    dropping: DFF<Bit>,
    o_valid: DFF<Bit>,
    o_data: DFF<Bits<512>>,
    o_keep: DFF<Bits<64>>,
    o_last: DFF<Bit>,
    c_frames: DFF<Bit>,
    c_rand: DFF<Bit>,
    c_ev: DFF<Bit>,
    c_lb: DFF<Bit>,
}

impl Logic for FaultInject {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, a_valid, a_data, a_keep, a_last, a_first, a_roce, a_sport, mid, lfsr, dropping, o_valid,
            o_data, o_keep, o_last, c_frames, c_rand, c_ev, c_lb
        );
        // ---- Handshakes: the output register frees B, B frees A.
        self.b_ready.next = !self.o_valid.q.val() | self.m_rx.tready.val();
        self.consume.next = self.a_valid.q.val() & self.b_ready.val();
        self.src_ready.next = !self.a_valid.q.val() | self.b_ready.val();
        // ---- Source select: loopback takes the TX stream, discards MAC RX
        // and idles MAC TX.
        self.m_tx.tdata.next = self.s_tx.tdata.val();
        self.m_tx.tkeep.next = self.s_tx.tkeep.val();
        self.m_tx.tlast.next = self.s_tx.tlast.val();
        if self.ctrl.val().get_bit(2) {
            self.src_valid.next = self.s_tx.tvalid.val();
            self.src_last.next = self.s_tx.tlast.val();
            self.ev.tdata.next = self.s_tx.tdata.val();
            self.s_tx.tready.next = self.src_ready.val();
            self.s_rx.tready.next = true;
            self.m_tx.tvalid.next = false;
        } else {
            self.src_valid.next = self.s_rx.tvalid.val();
            self.src_last.next = self.s_rx.tlast.val();
            self.ev.tdata.next = self.s_rx.tdata.val();
            self.s_tx.tready.next = self.m_tx.tready.val();
            self.s_rx.tready.next = self.src_ready.val();
            self.m_tx.tvalid.next = self.s_tx.tvalid.val();
        }
        self.c_lb.d.next = self.ctrl.val().get_bit(2) & self.s_rx.tvalid.val() & self.s_rx.tlast.val();
        // ---- Stage A: register the beat and its EV.
        if self.consume.val() {
            self.a_valid.d.next = false;
        }
        if self.src_valid.val() & self.src_ready.val() {
            self.a_valid.d.next = true;
            if self.ctrl.val().get_bit(2) {
                self.a_data.d.next = self.s_tx.tdata.val();
                self.a_keep.d.next = self.s_tx.tkeep.val();
            } else {
                self.a_data.d.next = self.s_rx.tdata.val();
                self.a_keep.d.next = self.s_rx.tkeep.val();
            }
            self.a_last.d.next = self.src_last.val();
            self.a_first.d.next = !self.mid.q.val();
            self.a_roce.d.next = self.ev.roce.val();
            self.a_sport.d.next = self.ev.sport.val();
            self.mid.d.next = !self.src_last.val();
        }
        // ---- Stage B: the decision on a frame's first beat, held after.
        self.ev_hit.next = self.ctrl.val().get_bit(1)
            & self.a_roce.q.val()
            & ((self.ev_en.val().get_bit(0)
                & (((self.a_sport.q.val() ^ self.ev_match0.val().get_bits::<16>(0))
                    & self.ev_match0.val().get_bits::<16>(16))
                    == 0))
                | (self.ev_en.val().get_bit(1)
                    & (((self.a_sport.q.val() ^ self.ev_match1.val().get_bits::<16>(0))
                        & self.ev_match1.val().get_bits::<16>(16))
                        == 0))
                | (self.ev_en.val().get_bit(2)
                    & (((self.a_sport.q.val() ^ self.ev_match2.val().get_bits::<16>(0))
                        & self.ev_match2.val().get_bits::<16>(16))
                        == 0))
                | (self.ev_en.val().get_bit(3)
                    & (((self.a_sport.q.val() ^ self.ev_match3.val().get_bits::<16>(0))
                        & self.ev_match3.val().get_bits::<16>(16))
                        == 0)));
        self.rand_hit.next = self.ctrl.val().get_bit(0)
            & (bit_cast::<17, 16>(self.lfsr.q.val().get_bits::<16>(16)) < self.drop_prob.val());
        if self.a_first.q.val() {
            self.drop_now.next = self.ev_hit.val() | self.rand_hit.val();
        } else {
            self.drop_now.next = self.dropping.q.val();
        }
        // xorshift32: the generator advances once per frame.
        self.xs1.next = self.lfsr.q.val() ^ (self.lfsr.q.val() << 13);
        self.xs2.next = self.xs1.val() ^ (self.xs1.val() >> 17);
        self.xs3.next = self.xs2.val() ^ (self.xs2.val() << 5);
        self.c_frames.d.next = false;
        self.c_rand.d.next = false;
        self.c_ev.d.next = false;
        if self.consume.val() & self.a_first.q.val() {
            self.dropping.d.next = self.ev_hit.val() | self.rand_hit.val();
            self.lfsr.d.next = self.xs3.val();
            self.c_frames.d.next = true;
            self.c_ev.d.next = self.ev_hit.val();
            self.c_rand.d.next = self.rand_hit.val() & !self.ev_hit.val();
        }
        if self.seed_load.val() {
            if self.seed.val() == 0 {
                self.lfsr.d.next = 1.into();
            } else {
                self.lfsr.d.next = self.seed.val();
            }
        }
        // ---- Output register.
        if self.o_valid.q.val() & self.m_rx.tready.val() {
            self.o_valid.d.next = false;
        }
        if self.consume.val() & !self.drop_now.val() {
            self.o_valid.d.next = true;
            self.o_data.d.next = self.a_data.q.val();
            self.o_keep.d.next = self.a_keep.q.val();
            self.o_last.d.next = self.a_last.q.val();
        }
        self.m_rx.tvalid.next = self.o_valid.q.val();
        self.m_rx.tdata.next = self.o_data.q.val();
        self.m_rx.tkeep.next = self.o_keep.q.val();
        self.m_rx.tlast.next = self.o_last.q.val();
        self.cnt_frames.next = self.c_frames.q.val();
        self.cnt_rand_drop.next = self.c_rand.q.val();
        self.cnt_ev_drop.next = self.c_ev.q.val();
        self.cnt_lb_discard.next = self.c_lb.q.val();
    }
}
