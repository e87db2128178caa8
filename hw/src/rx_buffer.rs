//! RX frame buffer and payload placement: stores every frame of the MAC RX
//! stream (store-and-forward, in parallel with the header parser) in a
//! block-RAM ring of 64-byte beats, and then executes one command per
//! stored frame, in arrival order: discard it, or write its payload bytes
//! `[off, off + len)` to host memory at an address through the shared DMA
//! write interface, realigned so that payload byte 0 is in byte lane 0.
//! See `docs/hw/rx_buffer.md`.
//!
//! The input is never backpressured (`s_tready` is high, as the parser's):
//! a frame that does not fit (ring or descriptor queue full) is dropped
//! whole, counted on `cnt_drop_full`, and reported with `rec_stored` low in
//! the cycle the parser emits its record for that frame, so the consumer
//! sends commands for stored frames only and the order stays aligned.
//!
//! Const generics (Rust cannot compute widths from other const generics):
//! `RB` ring address bits (the ring holds `2^RB` beats), `RP = RB + 1`
//! ring pointer bits (with the wrap bit), `DB` descriptor queue address
//! bits (`2^DB` stored frames at most), `DP = DB + 1`; `RB <= 10` (frame
//! offsets are 17 bits), `DB <= 15` (ids are 16 bits).

use rust_hdl::prelude::*;

use crate::bus::DmaWriteInitiator;

use crate::bus::AxisSink;

/// The instance: 1024 beats (64 KiB: seven 9000-byte jumbo frames
/// or 1024 minimum-size frames) and up to 512 stored frames.
pub type RxBuffer = RxBufferN<10, 11, 9, 10>;
/// The simulated instance: 64 beats (4 KiB) and up to 16 stored frames,
/// small so the test fills it often.
pub type RxBufferSmall = RxBufferN<6, 7, 4, 5>;

/// Index of the last valid byte of a beat: the highest set `tkeep` bit
/// (0 when none is set). AXI-Stream packs bytes from lane 0, so this is
/// the byte count minus one; computed as the one-hot `keep & ~(keep >> 1)`
/// encoded by six OR trees (two LUT levels), not as the 64-step priority
/// chain of `rx_parser::KeepCount` (which Yosys maps to a mux chain about
/// 30 cells deep).
#[derive(LogicBlock, Default)]
pub struct KeepLast {
    pub keep: Signal<In, Bits<64>>,
    pub idx: Signal<Out, Bits<6>>,
}

impl Logic for KeepLast {
    fn update(&mut self) {
        let k = self.keep.val().to_u64();
        self.idx.next = u64::from(if k == 0 { 0 } else { 63 - k.leading_zeros() }).into();
    }
    fn connect(&mut self) {
        self.idx.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut s = String::from(
            "wire [63:0] oh = keep & ~{1'b0, keep[63:1]};
always @(*) begin
",
        );
        for b in 0..6 {
            let bits: Vec<String> = (0..64)
                .filter(|i| i >> b & 1 == 1)
                .map(|i| format!("oh[{i}]"))
                .collect();
            s.push_str(&format!(
                "   idx[{b}] = {};
",
                bits.join(" | ")
            ));
        }
        s.push_str("end");
        Verilog::Custom(s)
    }
}

/// Funnel shift across two beats: `o` = bytes `s .. s + 63` of the
/// 128-byte `{hi, lo}` (byte 0 = `lo[7:0]`). Three stages of 4:1 muxes
/// (shift by 0-3, 0-12, 0-48 bytes), one LUT6 per bit and stage: three
/// LUT levels (a plain variable part-select becomes a six-level binary
/// shifter in Yosys). A leaf with its own Verilog because rust-hdl has
/// neither concatenation nor a variable part-select.
#[derive(LogicBlock, Default)]
pub struct Funnel {
    pub lo: Signal<In, Bits<512>>,
    pub hi: Signal<In, Bits<512>>,
    pub s: Signal<In, Bits<6>>,
    pub o: Signal<Out, Bits<512>>,
}

impl Funnel {
    /// The reference computation on byte arrays (also the test's model).
    pub fn bytes(lo: &[u8; 64], hi: &[u8; 64], s: usize) -> [u8; 64] {
        let mut o = [0u8; 64];
        for (k, b) in o.iter_mut().enumerate() {
            *b = if s + k < 64 { lo[s + k] } else { hi[s + k - 64] };
        }
        o
    }
}

impl Logic for Funnel {
    fn update(&mut self) {
        let mut cat = Bits::<1024>::default();
        cat.set_bits::<512>(0, self.lo.val());
        cat.set_bits::<512>(512, self.hi.val());
        let s = self.s.val().to_u64() as usize;
        self.o.next = cat.get_bits::<512>(8 * s);
    }
    fn connect(&mut self) {
        self.o.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "wire [1023:0] c0 = {hi, lo};\n\
             reg [1023:0] c1;\n\
             reg [1023:0] c2;\n\
             always @(*) begin\n\
             \x20  case (s[1:0])\n\
             \x20     2'd0: c1 = c0;\n\
             \x20     2'd1: c1 = c0 >> 8;\n\
             \x20     2'd2: c1 = c0 >> 16;\n\
             \x20     default: c1 = c0 >> 24;\n\
             \x20  endcase\n\
             \x20  case (s[3:2])\n\
             \x20     2'd0: c2 = c1;\n\
             \x20     2'd1: c2 = c1 >> 32;\n\
             \x20     2'd2: c2 = c1 >> 64;\n\
             \x20     default: c2 = c1 >> 96;\n\
             \x20  endcase\n\
             \x20  case (s[5:4])\n\
             \x20     2'd0: o = c2[511:0];\n\
             \x20     2'd1: o = c2[639:128];\n\
             \x20     2'd2: o = c2[767:256];\n\
             \x20     default: o = c2[895:384];\n\
             \x20  endcase\n\
             end"
            .into(),
        )
    }
}

/// The buffer. Ports, timing and the command contract are in
/// `docs/hw/rx_buffer.md`.
#[derive(LogicBlock)]
pub struct RxBufferN<const RB: usize, const RP: usize, const DB: usize, const DP: usize> {
    pub clock: Signal<In, Clock>,
    // MAC RX stream (tapped in parallel with the parser).
    pub s_axis: AxisSink,
    // Per-frame status, in the cycle of the parser's record (3 cycles after
    // the frame's tlast beat).
    pub rec_valid: Signal<Out, Bit>,
    pub rec_stored: Signal<Out, Bit>,
    pub rec_id: Signal<Out, Bits<16>>,
    /// Free ring beats and free descriptor slots, registered (one cycle
    /// old): the ingress admission's view of the room (`hw::rx_ingress`).
    pub room_beats: Signal<Out, Bits<16>>,
    pub room_frames: Signal<Out, Bits<16>>,
    // Commands, one per stored frame, in order.
    pub cmd_valid: Signal<In, Bit>,
    pub cmd_ready: Signal<Out, Bit>,
    pub cmd_id: Signal<In, Bits<16>>,
    pub cmd_place: Signal<In, Bit>,
    pub cmd_addr: Signal<In, Bits<64>>,
    pub cmd_off: Signal<In, Bits<18>>,
    pub cmd_len: Signal<In, Bits<18>>,
    // DMA write.
    pub dma_wr: DmaWriteInitiator,
    // Counter pulses.
    pub cnt_drop_full: Signal<Out, Bit>,
    pub cnt_cmd_bad: Signal<Out, Bit>,
    pub cnt_place_range: Signal<Out, Bit>,
    pub cnt_placed: Signal<Out, Bit>,
    pub cnt_discarded: Signal<Out, Bit>,
    // Memories: the beat ring and the descriptor queue ({len, start}).
    ring: RAM<Bits<512>, RB>,
    desc: RAM<Bits<40>, DB>,
    kl: KeepLast,
    funnel: Funnel,
    // Constants.
    c_ring_beats: Constant<Bits<RP>>,
    c_desc_slots: Constant<Bits<DP>>,
    c_ones: Constant<Bits<64>>,
    // Ingress.
    wptr: DFF<Bits<RP>>,
    in_frame: DFF<Bit>,
    dropping: DFF<Bit>,
    fstart: DFF<Bits<RP>>,
    fbytes: DFF<Bits<17>>,
    desc_wr: DFF<Bits<DP>>,
    st1_v: DFF<Bit>,
    st1_stored: DFF<Bit>,
    st1_id: DFF<Bits<DP>>,
    st2_v: DFF<Bit>,
    st2_stored: DFF<Bit>,
    st2_id: DFF<Bits<DP>>,
    st3_v: DFF<Bit>,
    st3_stored: DFF<Bit>,
    st3_id: DFF<Bits<DP>>,
    drop_pulse: DFF<Bit>,
    free_beats: DFF<Bits<RP>>,
    free_frames: DFF<Bits<DP>>,
    // Egress: 0 idle, 2 head (on the descriptor RAM output; commands taken), 3 prime, 4 data.
    mode: DFF<Bits<3>>,
    desc_rd: DFF<Bits<DP>>,
    rd_ptr: DFF<Bits<RP>>,
    h_start: DFF<Bits<RP>>,
    h_len: DFF<Bits<17>>,
    cur: DFF<Bits<RP>>,
    shift: DFF<Bits<6>>,
    rem: DFF<Bits<12>>,
    last_keep: DFF<Bits<64>>,
    prev: DFF<Bits<512>>,
    req_v: DFF<Bit>,
    req_addr: DFF<Bits<64>>,
    req_len: DFF<Bits<16>>,
    o_v: DFF<Bit>,
    o_data: DFF<Bits<512>>,
    o_keep: DFF<Bits<64>>,
    o_last: DFF<Bit>,
    p_bad: DFF<Bit>,
    p_range: DFF<Bit>,
    p_placed: DFF<Bit>,
    p_discarded: DFF<Bit>,
    // Combinational locals.
    first: Signal<Local, Bit>,
    fstart_now: Signal<Local, Bits<RP>>,
    flast_now: Signal<Local, Bits<17>>,
    ring_full: Signal<Local, Bit>,
    desc_full: Signal<Local, Bit>,
    drop_now: Signal<Local, Bit>,
    desc_empty: Signal<Local, Bit>,
    head_id: Signal<Local, Bits<16>>,
    head_beats: Signal<Local, Bits<RP>>,
    hd_start: Signal<Local, Bits<RP>>,
    hd_len: Signal<Local, Bits<17>>,
    fr_start: Signal<Local, Bits<RP>>,
    fr_len: Signal<Local, Bits<17>>,
    end_off: Signal<Local, Bits<19>>,
    advance: Signal<Local, Bit>,
    ra: Signal<Local, Bits<RP>>,
    tail: Signal<Local, Bits<7>>,
    pop: Signal<Local, Bit>,
    rd_next: Signal<Local, Bits<DP>>,
}

impl<const RB: usize, const RP: usize, const DB: usize, const DP: usize> Default for RxBufferN<RB, RP, DB, DP> {
    fn default() -> Self {
        assert!(
            RP == RB + 1 && DP == DB + 1 && DB <= 15 && RB <= 10,
            "RxBufferN widths (a frame offset is 17 bits)"
        );
        Self {
            clock: Default::default(),
            s_axis: Default::default(),
            rec_valid: Default::default(),
            rec_stored: Default::default(),
            rec_id: Default::default(),
            room_beats: Default::default(),
            room_frames: Default::default(),
            cmd_valid: Default::default(),
            cmd_ready: Default::default(),
            cmd_id: Default::default(),
            cmd_place: Default::default(),
            cmd_addr: Default::default(),
            cmd_off: Default::default(),
            cmd_len: Default::default(),
            dma_wr: Default::default(),
            cnt_drop_full: Default::default(),
            cnt_cmd_bad: Default::default(),
            cnt_place_range: Default::default(),
            cnt_placed: Default::default(),
            cnt_discarded: Default::default(),
            ring: Default::default(),
            desc: Default::default(),
            kl: Default::default(),
            funnel: Default::default(),
            c_ring_beats: Constant::new((1u64 << RB).into()),
            c_desc_slots: Constant::new((1u64 << DB).into()),
            c_ones: Constant::new(u64::MAX.into()),
            wptr: Default::default(),
            in_frame: Default::default(),
            dropping: Default::default(),
            fstart: Default::default(),
            fbytes: Default::default(),
            desc_wr: Default::default(),
            st1_v: Default::default(),
            st1_stored: Default::default(),
            st1_id: Default::default(),
            st2_v: Default::default(),
            st2_stored: Default::default(),
            st2_id: Default::default(),
            st3_v: Default::default(),
            st3_stored: Default::default(),
            st3_id: Default::default(),
            drop_pulse: Default::default(),
            free_beats: Default::default(),
            free_frames: Default::default(),
            mode: Default::default(),
            desc_rd: Default::default(),
            rd_ptr: Default::default(),
            h_start: Default::default(),
            h_len: Default::default(),
            cur: Default::default(),
            shift: Default::default(),
            rem: Default::default(),
            last_keep: Default::default(),
            prev: Default::default(),
            req_v: Default::default(),
            req_addr: Default::default(),
            req_len: Default::default(),
            o_v: Default::default(),
            o_data: Default::default(),
            o_keep: Default::default(),
            o_last: Default::default(),
            p_bad: Default::default(),
            p_range: Default::default(),
            p_placed: Default::default(),
            p_discarded: Default::default(),
            first: Default::default(),
            fstart_now: Default::default(),
            flast_now: Default::default(),
            ring_full: Default::default(),
            desc_full: Default::default(),
            drop_now: Default::default(),
            desc_empty: Default::default(),
            head_id: Default::default(),
            head_beats: Default::default(),
            hd_start: Default::default(),
            hd_len: Default::default(),
            fr_start: Default::default(),
            fr_len: Default::default(),
            end_off: Default::default(),
            advance: Default::default(),
            ra: Default::default(),
            tail: Default::default(),
            pop: Default::default(),
            rd_next: Default::default(),
        }
    }
}

impl<const RB: usize, const RP: usize, const DB: usize, const DP: usize> Logic for RxBufferN<RB, RP, DB, DP> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            wptr,
            in_frame,
            dropping,
            fstart,
            fbytes,
            desc_wr,
            st1_v,
            st1_stored,
            st1_id,
            st2_v,
            st2_stored,
            st2_id,
            st3_v,
            st3_stored,
            st3_id,
            drop_pulse,
            free_beats,
            free_frames,
            mode,
            desc_rd,
            rd_ptr,
            h_start,
            h_len,
            cur,
            shift,
            rem,
            last_keep,
            prev,
            req_v,
            req_addr,
            req_len,
            o_v,
            o_data,
            o_keep,
            o_last,
            p_bad,
            p_range,
            p_placed,
            p_discarded
        );
        self.ring.read_clock.next = self.clock.val();
        self.ring.write_clock.next = self.clock.val();
        self.desc.read_clock.next = self.clock.val();
        self.desc.write_clock.next = self.clock.val();

        // ---- Ingress: one beat per cycle, never backpressured.
        self.s_axis.tready.next = true;
        self.kl.keep.next = self.s_axis.tkeep.val();
        self.first.next = !self.in_frame.q.val();
        // Index of the beat's last byte in the frame: the beat's offset (a
        // multiple of 64: every beat but the last is full) ORed with the
        // lane index, no adder. The descriptor keeps this (length - 1).
        if self.first.val() {
            self.fstart_now.next = self.wptr.q.val();
            self.flast_now.next = bit_cast::<17, 6>(self.kl.idx.val());
        } else {
            self.fstart_now.next = self.fstart.q.val();
            self.flast_now.next = self.fbytes.q.val() | bit_cast::<17, 6>(self.kl.idx.val());
        }
        // Full: the beat would overwrite the oldest live frame (the view of
        // the egress read pointer is one cycle old: conservative).
        self.ring_full.next = (self.wptr.q.val() - self.rd_ptr.q.val()) == self.c_ring_beats.val();
        self.desc_full.next = (self.desc_wr.q.val() - self.desc_rd.q.val()) == self.c_desc_slots.val();
        self.drop_now.next = (self.dropping.q.val() & !self.first.val()) | self.ring_full.val();
        self.ring.write_address.next = bit_cast::<RB, RP>(self.wptr.q.val());
        self.ring.write_data.next = self.s_axis.tdata.val();
        self.ring.write_enable.next = false;
        self.desc.write_address.next = bit_cast::<DB, DP>(self.desc_wr.q.val());
        self.desc.write_data.next =
            bit_cast::<40, RP>(self.fstart_now.val()) | (bit_cast::<40, 17>(self.flast_now.val()) << 20);
        self.desc.write_enable.next = false;
        self.st1_v.d.next = false;
        self.st1_stored.d.next = false;
        self.st1_id.d.next = self.desc_wr.q.val();
        self.drop_pulse.d.next = false;
        if self.s_axis.tvalid.val() {
            if !self.drop_now.val() {
                self.ring.write_enable.next = true;
                self.wptr.d.next = self.wptr.q.val() + 1;
            }
            if self.s_axis.tlast.val() {
                self.in_frame.d.next = false;
                self.dropping.d.next = false;
                self.st1_v.d.next = true;
                if self.drop_now.val() | self.desc_full.val() {
                    // Drop the whole frame: forget its beats.
                    self.wptr.d.next = self.fstart_now.val();
                    self.drop_pulse.d.next = true;
                } else {
                    self.desc.write_enable.next = true;
                    self.desc_wr.d.next = self.desc_wr.q.val() + 1;
                    self.st1_stored.d.next = true;
                }
            } else {
                self.in_frame.d.next = true;
                self.dropping.d.next = self.drop_now.val();
                self.fstart.d.next = self.fstart_now.val();
                // Offset of the next beat.
                if self.first.val() {
                    self.fbytes.d.next = 64.into();
                } else {
                    self.fbytes.d.next = self.fbytes.q.val() + 64;
                }
            }
        }
        // Status delay line: lines up with the parser's record.
        self.st2_v.d.next = self.st1_v.q.val();
        self.st2_stored.d.next = self.st1_stored.q.val();
        self.st2_id.d.next = self.st1_id.q.val();
        self.st3_v.d.next = self.st2_v.q.val();
        self.st3_stored.d.next = self.st2_stored.q.val();
        self.st3_id.d.next = self.st2_id.q.val();
        self.rec_valid.next = self.st3_v.q.val();
        self.rec_stored.next = self.st3_stored.q.val();
        self.rec_id.next = bit_cast::<16, DP>(self.st3_id.q.val());
        self.cnt_drop_full.next = self.drop_pulse.q.val();
        // Room left: the same occupancy the drop rules compare.
        self.free_beats.d.next = self.c_ring_beats.val() - (self.wptr.q.val() - self.rd_ptr.q.val());
        self.free_frames.d.next = self.c_desc_slots.val() - (self.desc_wr.q.val() - self.desc_rd.q.val());
        self.room_beats.next = bit_cast::<16, RP>(self.free_beats.q.val());
        self.room_frames.next = bit_cast::<16, DP>(self.free_frames.q.val());

        // ---- Egress.
        self.desc.read_address.next = bit_cast::<DB, DP>(self.desc_rd.q.val());
        self.desc_empty.next = self.desc_wr.q.val() == self.desc_rd.q.val();
        self.head_id.next = bit_cast::<16, DP>(self.desc_rd.q.val());
        // Beats of the head frame: ceil(len / 64).
        // The head descriptor straight from the RAM output (its read address
        // is held until the pop), registered for the placement that follows.
        self.hd_start.next = bit_cast::<RP, 40>(self.desc.read_data.val());
        self.hd_len.next = bit_cast::<17, 40>(self.desc.read_data.val() >> 20) + 1;
        if self.mode.q.val() == 2 {
            self.fr_start.next = self.hd_start.val();
            self.fr_len.next = self.hd_len.val();
        } else {
            self.fr_start.next = self.h_start.q.val();
            self.fr_len.next = self.h_len.q.val();
        }
        self.head_beats.next = bit_cast::<RP, 17>((self.fr_len.val() + 63) >> 6);
        self.end_off.next = bit_cast::<19, 18>(self.cmd_off.val()) + bit_cast::<19, 18>(self.cmd_len.val());
        self.tail.next = bit_cast::<7, 18>(self.cmd_len.val() & 63);
        self.funnel.lo.next = self.prev.q.val();
        self.funnel.hi.next = self.ring.read_data.val();
        self.funnel.s.next = self.shift.q.val();
        // The beat stream advances when the output register is free or
        // taken, and only after the DMA request was accepted.
        self.advance.next = !self.req_v.q.val() & (!self.o_v.q.val() | self.dma_wr.beat.ready.val());
        // The ring read address is the beat wanted next cycle: held while
        // stalled so the RAM output keeps the unconsumed beat.
        self.ra.next = self.cur.q.val();
        self.cmd_ready.next = (self.mode.q.val() == 2) | ((self.mode.q.val() == 0) & self.desc_empty.val());
        self.p_bad.d.next = false;
        self.p_range.d.next = false;
        self.p_placed.d.next = false;
        self.p_discarded.d.next = false;
        self.pop.next = false;
        self.rd_next.next = self.desc_rd.q.val() + 1;
        if self.req_v.q.val() & self.dma_wr.req.ready.val() {
            self.req_v.d.next = false;
        }
        if self.o_v.q.val() & self.dma_wr.beat.ready.val() {
            self.o_v.d.next = false;
        }
        if self.mode.q.val() == 0 {
            // IDLE: a command with no stored frame is bad.
            if self.desc_empty.val() {
                if self.cmd_valid.val() {
                    self.p_bad.d.next = true;
                }
            } else {
                // The head's descriptor is read at this edge.
                self.mode.d.next = 2.into();
            }
        } else if self.mode.q.val() == 2 {
            self.h_start.d.next = self.hd_start.val();
            self.h_len.d.next = self.hd_len.val();
            // HEAD: take the command for the oldest stored frame.
            if self.cmd_valid.val() {
                if self.cmd_id.val() != self.head_id.val() {
                    self.p_bad.d.next = true;
                } else if !self.cmd_place.val() | (self.cmd_len.val() == 0) {
                    // Discard, or a zero-length placement: free the frame.
                    self.pop.next = true;
                    if self.cmd_place.val() {
                        self.p_placed.d.next = true;
                    } else {
                        self.p_discarded.d.next = true;
                    }
                } else if (self.end_off.val() > bit_cast::<19, 17>(self.hd_len.val()))
                    | self.cmd_len.val().get_bit(16)
                    | self.cmd_len.val().get_bit(17)
                {
                    // Outside the frame (or too long for one request):
                    // free the frame without writing.
                    self.p_range.d.next = true;
                    self.pop.next = true;
                } else {
                    self.req_v.d.next = true;
                    self.req_addr.d.next = self.cmd_addr.val();
                    self.req_len.d.next = bit_cast::<16, 18>(self.cmd_len.val());
                    self.ra.next = self.hd_start.val() + bit_cast::<RP, 18>(self.cmd_off.val() >> 6);
                    self.shift.d.next = bit_cast::<6, 18>(self.cmd_off.val() & 63);
                    self.rem.d.next = bit_cast::<12, 18>((self.cmd_len.val() + 63) >> 6);
                    if self.tail.val() == 0 {
                        self.last_keep.d.next = self.c_ones.val();
                    } else {
                        self.last_keep.d.next = self.c_ones.val() >> (64 - self.tail.val());
                    }
                    self.mode.d.next = 3.into();
                }
            }
        } else if self.mode.q.val() == 3 {
            // PRIME: the first beat is on the RAM output.
            self.prev.d.next = self.ring.read_data.val();
            self.ra.next = self.cur.q.val() + 1;
            self.mode.d.next = 4.into();
        } else if self.mode.q.val() == 4 {
            // DATA: one output beat per advance.
            if self.advance.val() {
                self.o_v.d.next = true;
                self.o_data.d.next = self.funnel.o.val();
                self.prev.d.next = self.ring.read_data.val();
                self.ra.next = self.cur.q.val() + 1;
                self.rem.d.next = self.rem.q.val() - 1;
                if self.rem.q.val() == 1 {
                    self.o_keep.d.next = self.last_keep.q.val();
                    self.o_last.d.next = true;
                    // The last beat is in the output register: free the frame.
                    self.p_placed.d.next = true;
                    self.pop.next = true;
                } else {
                    self.o_keep.d.next = self.c_ones.val();
                    self.o_last.d.next = false;
                }
            }
        } else {
            self.mode.d.next = 0.into();
        }
        // Free the head frame. The descriptor RAM reads the next entry at
        // this edge, so a waiting frame is loaded right away (no idle cycle).
        if self.pop.val() {
            self.desc_rd.d.next = self.rd_next.val();
            self.rd_ptr.d.next = self.fr_start.val() + self.head_beats.val();
            self.desc.read_address.next = bit_cast::<DB, DP>(self.rd_next.val());
            if self.desc_wr.q.val() != self.rd_next.val() {
                self.mode.d.next = 2.into();
            } else {
                self.mode.d.next = 0.into();
            }
        }
        self.cur.d.next = self.ra.val();
        self.ring.read_address.next = bit_cast::<RB, RP>(self.ra.val());
        self.dma_wr.req.valid.next = self.req_v.q.val();
        self.dma_wr.req.addr.next = self.req_addr.q.val();
        self.dma_wr.req.len.next = self.req_len.q.val();
        self.dma_wr.beat.valid.next = self.o_v.q.val();
        self.dma_wr.beat.data.next = self.o_data.q.val();
        self.dma_wr.beat.keep.next = self.o_keep.q.val();
        self.dma_wr.beat.last.next = self.o_last.q.val();
        self.cnt_cmd_bad.next = self.p_bad.q.val();
        self.cnt_place_range.next = self.p_range.q.val();
        self.cnt_placed.next = self.p_placed.q.val();
        self.cnt_discarded.next = self.p_discarded.q.val();
    }
}
