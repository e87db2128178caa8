//! RX header parser front end: 512-bit AXI-Stream in, one header record (or
//! a drop with its reason) out per frame. See `docs/hw/rx_parser.md`.
//!
//! The parser keeps the first two beats of a frame (128 bytes: enough for
//! Ethernet [+ 802.1Q] / IPv4 (no options, or short ones) | IPv6 / UDP /
//! BTH / RETH / ImmDt / AETH / the first 28 bytes of the MRC extension),
//! counts the frame's bytes, and from `tlast` on runs a three-stage
//! pipeline: A registers the byte-reversed window aligned on the IP header
//! (802.1Q or not) and the frame length; B aligns the UDP header, checks
//! Ethernet and IP, sums the IPv4 header and registers the UDP-aligned
//! window; C checks the checksum, extracts the transport fields, runs the
//! remaining checks and registers the record. It takes a
//! new frame every cycle (a one-beat frame enters stage A in the cycle it
//! arrives), `s_tready` is always high, and the record appears three
//! cycles after the `tlast` beat.

use rust_hdl::prelude::*;

/// Drop reasons on `out_reason`: the index of `proto::wire::WireErrorKind`
/// plus one (0 = accepted), so the CSR counters and the golden model use
/// the same numbering.
pub mod reason {
    pub const OK: u8 = 0;
    pub const TRUNCATED: u8 = 1;
    pub const BAD_ETHER_TYPE: u8 = 2;
    pub const BAD_IP_VERSION: u8 = 3;
    pub const BAD_IP_HEADER_LEN: u8 = 4;
    pub const BAD_IP_CHECKSUM: u8 = 5;
    pub const IP_FRAGMENT: u8 = 6;
    pub const NOT_UDP: u8 = 7;
    pub const WRONG_UDP_PORT: u8 = 8;
    pub const BAD_LENGTH: u8 = 9;
    pub const UNKNOWN_OPCODE: u8 = 10;
    pub const BAD_TRANSPORT_VERSION: u8 = 11;
    pub const BAD_PAD_COUNT: u8 = 12;
    pub const UNKNOWN_EXT_TYPE: u8 = 13;
    pub const BAD_EXT_VERSION: u8 = 14;
    pub const BAD_SACK_WIDTH: u8 = 15;
    pub const UNKNOWN_NACK_KIND: u8 = 16;
    pub const EXT_MISMATCH: u8 = 17;
    pub const SYNDROME_MISMATCH: u8 = 18;
    /// Not checked yet (the ICRC engine is a later block).
    pub const BAD_ICRC: u8 = 19;
    /// The headers extend past the 128-byte window (long IPv4 options):
    /// valid for the golden model, unsupported by this front end.
    pub const HEADER_BEYOND_WINDOW: u8 = 31;
}

/// Byte reversal of an `N`-bit vector: byte `k` of the input (bits
/// `8k+7..8k`) goes to byte `N/8-1-k`. Pure wiring; a leaf with custom
/// Verilog because rust-hdl has no concatenation.
#[derive(LogicBlock, Default)]
pub struct ByteRev<const N: usize> {
    pub i: Signal<In, Bits<N>>,
    pub o: Signal<Out, Bits<N>>,
}

impl<const N: usize> Logic for ByteRev<N> {
    fn update(&mut self) {
        let x = self.i.val();
        let mut o = Bits::<N>::default();
        for k in 0..N / 8 {
            o.set_bits::<8>(N - 8 - 8 * k, x.get_bits::<8>(8 * k));
        }
        self.o.next = o;
    }
    fn connect(&mut self) {
        self.o.connect();
    }
    fn hdl(&self) -> Verilog {
        let parts: Vec<String> = (0..N / 8).map(|k| format!("i[{}:{}]", 8 * k + 7, 8 * k)).collect();
        Verilog::Custom(format!("always @(*) o = {{{}}};", parts.join(", ")))
    }
}

/// Bytes valid in a beat: index of the highest set `tkeep` bit plus one
/// (AXI-Stream packs bytes, so this equals the number of set bits).
#[derive(LogicBlock, Default)]
pub struct KeepCount {
    pub keep: Signal<In, Bits<64>>,
    pub count: Signal<Out, Bits<7>>,
}

impl Logic for KeepCount {
    fn update(&mut self) {
        let k = self.keep.val();
        let mut c = 0u64;
        for i in 0..64 {
            if k.get_bit(i) {
                c = i as u64 + 1;
            }
        }
        self.count.next = c.into();
    }
    fn connect(&mut self) {
        self.count.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut s = String::from("always @(*) begin\n   count = 7'd0;\n");
        for i in 0..64 {
            s.push_str(&format!("   if (keep[{i}]) count = 7'd{};\n", i + 1));
        }
        s.push_str("end");
        Verilog::Custom(s)
    }
}

/// The parser. Stream in on `s_*`; three cycles after a frame's `tlast`
/// beat, `out_valid` (accepted, fields valid) or `out_drop` (with
/// `out_reason`) pulses for one cycle.
#[derive(LogicBlock, Default)]
pub struct RxParser {
    pub clock: Signal<In, Clock>,
    pub s_tdata: Signal<In, Bits<512>>,
    pub s_tkeep: Signal<In, Bits<64>>,
    pub s_tlast: Signal<In, Bit>,
    pub s_tvalid: Signal<In, Bit>,
    pub s_tready: Signal<Out, Bit>,
    pub out_valid: Signal<Out, Bit>,
    pub out_drop: Signal<Out, Bit>,
    pub out_reason: Signal<Out, Bits<5>>,
    pub out_ipv6: Signal<Out, Bit>,
    pub out_vlan: Signal<Out, Bit>,
    pub out_ecn_ce: Signal<Out, Bit>,
    pub out_trimmed: Signal<Out, Bit>,
    pub out_ev: Signal<Out, Bits<32>>,
    pub out_opcode: Signal<Out, Bits<8>>,
    pub out_se: Signal<Out, Bit>,
    pub out_mig: Signal<Out, Bit>,
    pub out_pad: Signal<Out, Bits<2>>,
    pub out_pkey: Signal<Out, Bits<16>>,
    pub out_fecn: Signal<Out, Bit>,
    pub out_becn: Signal<Out, Bit>,
    pub out_dest_qp: Signal<Out, Bits<24>>,
    pub out_ack_req: Signal<Out, Bit>,
    pub out_xbit: Signal<Out, Bit>,
    pub out_psn: Signal<Out, Bits<24>>,
    pub out_reth_va: Signal<Out, Bits<64>>,
    pub out_reth_rkey: Signal<Out, Bits<32>>,
    pub out_reth_len: Signal<Out, Bits<32>>,
    pub out_imm: Signal<Out, Bits<32>>,
    pub out_aeth_syndrome: Signal<Out, Bits<8>>,
    pub out_aeth_msn: Signal<Out, Bits<24>>,
    /// First 28 bytes of the MRC extension, byte 0 in bits 223-216.
    pub out_ext: Signal<Out, Bits<224>>,
    /// Payload position in the frame (bytes) and length (pad excluded).
    pub out_payload_off: Signal<Out, Bits<18>>,
    pub out_payload_len: Signal<Out, Bits<18>>,
    // Stream state.
    beat: DFF<Bits<12>>,
    h0: DFF<Bits<512>>,
    h1: DFF<Bits<512>>,
    rev0: ByteRev<512>,
    rev1: ByteRev<512>,
    kc: KeepCount,
    // Combinational locals.
    hdr0: Signal<Local, Bits<512>>,
    hdr1: Signal<Local, Bits<512>>,
    win: Signal<Local, Bits<1024>>,
    flen: Signal<Local, Bits<18>>,
    et_outer: Signal<Local, Bits<16>>,
    et: Signal<Local, Bits<16>>,
    vlan: Signal<Local, Bit>,
    is4: Signal<Local, Bit>,
    is6: Signal<Local, Bit>,
    l3: Signal<Local, Bits<1024>>,
    l3off: Signal<Local, Bits<18>>,
    ip_avail: Signal<Local, Bits<18>>,
    ipver: Signal<Local, Bits<4>>,
    ihl: Signal<Local, Bits<4>>,
    iphl: Signal<Local, Bits<18>>,
    v4_total: Signal<Local, Bits<18>>,
    csum: Signal<Local, Bits<22>>,
    cs1_0: Signal<Local, Bits<22>>,
    cs1_1: Signal<Local, Bits<22>>,
    cs1_2: Signal<Local, Bits<22>>,
    cs1_3: Signal<Local, Bits<22>>,
    cs1_4: Signal<Local, Bits<22>>,
    cs1_5: Signal<Local, Bits<22>>,
    cs1_6: Signal<Local, Bits<22>>,
    cs1_7: Signal<Local, Bits<22>>,
    cs1_8: Signal<Local, Bits<22>>,
    cs1_9: Signal<Local, Bits<22>>,
    cs1_10: Signal<Local, Bits<22>>,
    cs1_11: Signal<Local, Bits<22>>,
    cs1_12: Signal<Local, Bits<22>>,
    cs1_13: Signal<Local, Bits<22>>,
    cs1_14: Signal<Local, Bits<22>>,
    cs2_0: Signal<Local, Bits<22>>,
    cs2_1: Signal<Local, Bits<22>>,
    cs2_2: Signal<Local, Bits<22>>,
    cs2_3: Signal<Local, Bits<22>>,
    cs2_4: Signal<Local, Bits<22>>,
    cs2_5: Signal<Local, Bits<22>>,
    cs2_6: Signal<Local, Bits<22>>,
    cs2_7: Signal<Local, Bits<22>>,
    cs3_0: Signal<Local, Bits<22>>,
    cs3_1: Signal<Local, Bits<22>>,
    cs3_2: Signal<Local, Bits<22>>,
    cs3_3: Signal<Local, Bits<22>>,
    cs4_0: Signal<Local, Bits<22>>,
    cs4_1: Signal<Local, Bits<22>>,
    cs5_0: Signal<Local, Bits<22>>,
    frag: Signal<Local, Bit>,
    ipproto: Signal<Local, Bits<8>>,
    dscp: Signal<Local, Bits<6>>,
    ecn: Signal<Local, Bits<2>>,
    v6_plen: Signal<Local, Bits<18>>,
    flow_lo: Signal<Local, Bits<16>>,
    ip_payload: Signal<Local, Bits<18>>,
    l4sh: Signal<Local, Bits<11>>,
    l4: Signal<Local, Bits<1024>>,
    sport: Signal<Local, Bits<16>>,
    dport: Signal<Local, Bits<16>>,
    udp_len: Signal<Local, Bits<18>>,
    opcode: Signal<Local, Bits<8>>,
    tver: Signal<Local, Bits<4>>,
    op_known: Signal<Local, Bit>,
    has_reth: Signal<Local, Bit>,
    has_imm: Signal<Local, Bit>,
    has_aeth: Signal<Local, Bit>,
    is_cnp: Signal<Local, Bit>,
    is_ack: Signal<Local, Bit>,
    xbit: Signal<Local, Bit>,
    pad: Signal<Local, Bits<2>>,
    syndrome: Signal<Local, Bits<8>>,
    t_len: Signal<Local, Bits<18>>,
    at_hdr: Signal<Local, Bits<18>>,
    ext: Signal<Local, Bits<224>>,
    ext_ver: Signal<Local, Bits<4>>,
    ext_type: Signal<Local, Bits<4>>,
    ext_b1: Signal<Local, Bits<8>>,
    ext_len: Signal<Local, Bits<18>>,
    at_end: Signal<Local, Bits<18>>,
    remaining: Signal<Local, Bits<18>>,
    pad_eff: Signal<Local, Bits<18>>,
    hdr_end: Signal<Local, Bits<18>>,
    read_end: Signal<Local, Bits<18>>,
    reason_c: Signal<Local, Bits<5>>,
    reason_ip: Signal<Local, Bits<5>>,
    reason_post: Signal<Local, Bits<5>>,
    imm_c: Signal<Local, Bits<32>>,
    // Pipeline registers: A (IP-aligned window), B (UDP-aligned window, IP facts).
    a_l3: DFF<Bits<1024>>,
    a_l3off: DFF<Bits<18>>,
    a_vlan: DFF<Bit>,
    a_is4: DFF<Bit>,
    a_is6: DFF<Bit>,
    a_ip_avail: DFF<Bits<18>>,
    a_flen: DFF<Bits<18>>,
    a_v: DFF<Bit>,
    b_l4: DFF<Bits<1024>>,
    b_reason: DFF<Bits<5>>,
    b_reason_post: DFF<Bits<5>>,
    b_csum: DFF<Bits<22>>,
    b_is4: DFF<Bit>,
    b_ip_payload: DFF<Bits<18>>,
    b_is6: DFF<Bit>,
    b_vlan: DFF<Bit>,
    b_dscp: DFF<Bits<6>>,
    b_ecn: DFF<Bits<2>>,
    b_flow_lo: DFF<Bits<16>>,
    b_l3off: DFF<Bits<18>>,
    b_iphl: DFF<Bits<18>>,
    b_v: DFF<Bit>,
    // Output registers.
    r_valid: DFF<Bit>,
    r_drop: DFF<Bit>,
    r_reason: DFF<Bits<5>>,
    r_ipv6: DFF<Bit>,
    r_vlan: DFF<Bit>,
    r_ecn_ce: DFF<Bit>,
    r_trimmed: DFF<Bit>,
    r_ev: DFF<Bits<32>>,
    r_opcode: DFF<Bits<8>>,
    r_se: DFF<Bit>,
    r_mig: DFF<Bit>,
    r_pad: DFF<Bits<2>>,
    r_pkey: DFF<Bits<16>>,
    r_fecn: DFF<Bit>,
    r_becn: DFF<Bit>,
    r_dest_qp: DFF<Bits<24>>,
    r_ack_req: DFF<Bit>,
    r_xbit: DFF<Bit>,
    r_psn: DFF<Bits<24>>,
    r_reth_va: DFF<Bits<64>>,
    r_reth_rkey: DFF<Bits<32>>,
    r_reth_len: DFF<Bits<32>>,
    r_imm: DFF<Bits<32>>,
    r_aeth_syndrome: DFF<Bits<8>>,
    r_aeth_msn: DFF<Bits<24>>,
    r_ext: DFF<Bits<224>>,
    r_payload_off: DFF<Bits<18>>,
    r_payload_len: DFF<Bits<18>>,
}

impl Logic for RxParser {
    // The checks are one if/else-if chain in the golden model's order, so
    // several arms give the same reason (e.g. Truncated at each layer).
    #[allow(clippy::if_same_then_else)]
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, beat, h0, h1, a_l3, a_l3off, a_vlan, a_is4, a_is6, a_ip_avail, a_flen, a_v, b_l4, b_reason, b_reason_post, b_csum, b_is4, b_ip_payload, b_is6, b_vlan, b_dscp, b_ecn, b_flow_lo,
            b_l3off, b_iphl, b_v, r_valid, r_drop, r_reason, r_ipv6, r_vlan, r_ecn_ce, r_trimmed, r_ev, r_opcode, r_se,
            r_mig, r_pad, r_pkey, r_fecn, r_becn, r_dest_qp, r_ack_req, r_xbit, r_psn, r_reth_va, r_reth_rkey, r_reth_len,
            r_imm, r_aeth_syndrome, r_aeth_msn, r_ext, r_payload_off, r_payload_len
        );
        self.s_tready.next = true;
        // ---- Stream side: keep beats 0 and 1, count beats.
        self.hdr0.next = self.h0.q.val();
        self.hdr1.next = self.h1.q.val();
        if self.beat.q.val() == 0 {
            self.hdr0.next = self.s_tdata.val();
            self.hdr1.next = 0.into();
        }
        if self.beat.q.val() == 1 {
            self.hdr1.next = self.s_tdata.val();
        }
        if self.s_tvalid.val() {
            if self.beat.q.val() == 0 {
                self.h0.d.next = self.s_tdata.val();
                self.h1.d.next = 0.into();
            }
            if self.beat.q.val() == 1 {
                self.h1.d.next = self.s_tdata.val();
            }
            if self.s_tlast.val() {
                self.beat.d.next = 0.into();
            } else {
                self.beat.d.next = self.beat.q.val() + 1;
            }
        }
        self.kc.keep.next = self.s_tkeep.val();
        self.flen.next = (bit_cast::<18, 12>(self.beat.q.val()) << 6) + bit_cast::<18, 7>(self.kc.count.val());
        // Byte-reversed window: frame byte 0 in bits 1023-1016.
        self.rev0.i.next = self.hdr0.val();
        self.rev1.i.next = self.hdr1.val();
        self.win.next = (bit_cast::<1024, 512>(self.rev0.o.val()) << 512) | bit_cast::<1024, 512>(self.rev1.o.val());
        // ---- Ethernet [+ 802.1Q].
        self.et_outer.next = self.win.val().get_bits::<16>(912);
        self.vlan.next = self.et_outer.val() == 0x8100;
        self.et.next = self.et_outer.val();
        self.l3.next = self.win.val() << 112;
        self.l3off.next = 14.into();
        if self.vlan.val() {
            self.et.next = self.win.val().get_bits::<16>(880);
            self.l3.next = self.win.val() << 144;
            self.l3off.next = 18.into();
        }
        self.is4.next = self.et.val() == 0x0800;
        self.is6.next = self.et.val() == 0x86DD;
        self.ip_avail.next = self.flen.val() - self.l3off.val();
        // ==== Stage A -> B register: the IP-aligned window and facts.
        self.a_l3.d.next = self.l3.val();
        self.a_l3off.d.next = self.l3off.val();
        self.a_flen.d.next = self.flen.val();
        self.a_vlan.d.next = self.vlan.val();
        self.a_is4.d.next = self.is4.val();
        self.a_is6.d.next = self.is6.val();
        self.a_ip_avail.d.next = self.ip_avail.val();
        self.a_v.d.next = self.s_tvalid.val() & self.s_tlast.val();
        // ---- IPv4 / IPv6 fields (IP header at byte 0 of l3).
        self.ipver.next = self.a_l3.q.val().get_bits::<4>(1020);
        self.ihl.next = self.a_l3.q.val().get_bits::<4>(1016);
        self.v4_total.next = bit_cast::<18, 16>(self.a_l3.q.val().get_bits::<16>(992));
        self.frag.next = self.a_l3.q.val().get_bit(973) | self.a_l3.q.val().get_bits::<13>(960).any();
        self.ipproto.next = self.a_l3.q.val().get_bits::<8>(944);
        self.v6_plen.next = bit_cast::<18, 16>(self.a_l3.q.val().get_bits::<16>(976));
        self.flow_lo.next = self.a_l3.q.val().get_bits::<16>(992);
        // IPv4 header checksum as an adder tree: word pair j (words 2j,
        // 2j+1) counts when IHL > j; 15 pair sums, then 8, 4, 2, 1.
        self.cs1_0.next = 0.into();
        if self.ihl.val() > 0 {
            self.cs1_0.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(1008)) + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(992));
        }
        self.cs1_1.next = 0.into();
        if self.ihl.val() > 1 {
            self.cs1_1.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(976)) + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(960));
        }
        self.cs1_2.next = 0.into();
        if self.ihl.val() > 2 {
            self.cs1_2.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(944)) + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(928));
        }
        self.cs1_3.next = 0.into();
        if self.ihl.val() > 3 {
            self.cs1_3.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(912)) + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(896));
        }
        self.cs1_4.next = 0.into();
        if self.ihl.val() > 4 {
            self.cs1_4.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(880)) + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(864));
        }
        self.cs1_5.next = 0.into();
        if self.ihl.val() > 5 {
            self.cs1_5.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(848)) + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(832));
        }
        self.cs1_6.next = 0.into();
        if self.ihl.val() > 6 {
            self.cs1_6.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(816)) + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(800));
        }
        self.cs1_7.next = 0.into();
        if self.ihl.val() > 7 {
            self.cs1_7.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(784)) + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(768));
        }
        self.cs1_8.next = 0.into();
        if self.ihl.val() > 8 {
            self.cs1_8.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(752)) + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(736));
        }
        self.cs1_9.next = 0.into();
        if self.ihl.val() > 9 {
            self.cs1_9.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(720)) + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(704));
        }
        self.cs1_10.next = 0.into();
        if self.ihl.val() > 10 {
            self.cs1_10.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(688)) + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(672));
        }
        self.cs1_11.next = 0.into();
        if self.ihl.val() > 11 {
            self.cs1_11.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(656)) + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(640));
        }
        self.cs1_12.next = 0.into();
        if self.ihl.val() > 12 {
            self.cs1_12.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(624)) + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(608));
        }
        self.cs1_13.next = 0.into();
        if self.ihl.val() > 13 {
            self.cs1_13.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(592)) + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(576));
        }
        self.cs1_14.next = 0.into();
        if self.ihl.val() > 14 {
            self.cs1_14.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(560)) + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(544));
        }
        self.cs2_0.next = self.cs1_0.val() + self.cs1_1.val();
        self.cs2_1.next = self.cs1_2.val() + self.cs1_3.val();
        self.cs2_2.next = self.cs1_4.val() + self.cs1_5.val();
        self.cs2_3.next = self.cs1_6.val() + self.cs1_7.val();
        self.cs2_4.next = self.cs1_8.val() + self.cs1_9.val();
        self.cs2_5.next = self.cs1_10.val() + self.cs1_11.val();
        self.cs2_6.next = self.cs1_12.val() + self.cs1_13.val();
        self.cs2_7.next = self.cs1_14.val();
        self.cs3_0.next = self.cs2_0.val() + self.cs2_1.val();
        self.cs3_1.next = self.cs2_2.val() + self.cs2_3.val();
        self.cs3_2.next = self.cs2_4.val() + self.cs2_5.val();
        self.cs3_3.next = self.cs2_6.val() + self.cs2_7.val();
        self.cs4_0.next = self.cs3_0.val() + self.cs3_1.val();
        self.cs4_1.next = self.cs3_2.val() + self.cs3_3.val();
        self.cs5_0.next = self.cs4_0.val() + self.cs4_1.val();
        if self.a_is6.q.val() {
            self.iphl.next = 40.into();
            self.ip_payload.next = self.v6_plen.val();
            self.l4sh.next = 320.into();
            self.dscp.next = self.a_l3.q.val().get_bits::<6>(1014);
            self.ecn.next = self.a_l3.q.val().get_bits::<2>(1012);
            self.ipproto.next = self.a_l3.q.val().get_bits::<8>(968);
        } else {
            self.iphl.next = bit_cast::<18, 4>(self.ihl.val()) << 2;
            self.ip_payload.next = self.v4_total.val() - (bit_cast::<18, 4>(self.ihl.val()) << 2);
            self.l4sh.next = bit_cast::<11, 4>(self.ihl.val()) << 5;
            self.dscp.next = self.a_l3.q.val().get_bits::<6>(1010);
            self.ecn.next = self.a_l3.q.val().get_bits::<2>(1008);
        }
        // ---- UDP and transport (UDP at byte 0 of l4).
        self.l4.next = self.a_l3.q.val() << self.l4sh.val();
        // ---- Ethernet and IP checks, in the golden model's order (first
        // failure wins); the transport checks follow in stage C.
        self.reason_ip.next = 0.into();
        if self.a_flen.q.val() < 14 {
            self.reason_ip.next = 1.into();
        } else if self.a_vlan.q.val() & (self.a_flen.q.val() < 18) {
            self.reason_ip.next = 1.into();
        } else if !(self.a_is4.q.val() | self.a_is6.q.val()) {
            self.reason_ip.next = 2.into();
        } else if self.a_ip_avail.q.val() < 1 {
            self.reason_ip.next = 1.into();
        } else if self.a_is4.q.val() & (self.ipver.val() != 4) {
            self.reason_ip.next = 3.into();
        } else if self.a_is6.q.val() & (self.ipver.val() != 6) {
            self.reason_ip.next = 3.into();
        } else if self.a_is4.q.val() & (self.a_ip_avail.q.val() < 20) {
            self.reason_ip.next = 1.into();
        } else if self.a_is4.q.val() & (self.ihl.val() < 5) {
            self.reason_ip.next = 4.into();
        } else if self.a_is4.q.val() & (self.a_ip_avail.q.val() < self.iphl.val()) {
            self.reason_ip.next = 1.into();
        } else if self.a_is4.q.val() & ((self.v4_total.val() < self.iphl.val()) | (self.v4_total.val() > self.a_ip_avail.q.val())) {
            self.reason_ip.next = 9.into();
        }
        // The checks after the checksum (which stage C makes, from the
        // registered sum, to keep it out of this stage's critical path).
        self.reason_post.next = 0.into();
        if self.a_is4.q.val() & self.frag.val() {
            self.reason_post.next = 6.into();
        } else if self.a_is6.q.val() & (self.a_ip_avail.q.val() < 40) {
            self.reason_post.next = 1.into();
        } else if self.a_is6.q.val() & (self.v6_plen.val() + 40 > self.a_ip_avail.q.val()) {
            self.reason_post.next = 9.into();
        } else if self.ipproto.val() != 17 {
            self.reason_post.next = 7.into();
        }
        // ==== Stage B -> C register: the UDP-aligned window and IP facts.
        self.b_l4.d.next = self.l4.val();
        self.b_reason.d.next = self.reason_ip.val();
        self.b_reason_post.d.next = self.reason_post.val();
        self.b_csum.d.next = self.cs5_0.val();
        self.b_is4.d.next = self.a_is4.q.val();
        self.b_ip_payload.d.next = self.ip_payload.val();
        self.b_is6.d.next = self.a_is6.q.val();
        self.b_vlan.d.next = self.a_vlan.q.val();
        self.b_dscp.d.next = self.dscp.val();
        self.b_ecn.d.next = self.ecn.val();
        self.b_flow_lo.d.next = self.flow_lo.val();
        self.b_l3off.d.next = self.a_l3off.q.val();
        self.b_iphl.d.next = self.iphl.val();
        self.b_v.d.next = self.a_v.q.val();
        self.sport.next = self.b_l4.q.val().get_bits::<16>(1008);
        self.dport.next = self.b_l4.q.val().get_bits::<16>(992);
        self.udp_len.next = bit_cast::<18, 16>(self.b_l4.q.val().get_bits::<16>(976));
        self.opcode.next = self.b_l4.q.val().get_bits::<8>(952);
        self.tver.next = self.b_l4.q.val().get_bits::<4>(944);
        self.pad.next = self.b_l4.q.val().get_bits::<2>(948);
        self.xbit.next = self.b_l4.q.val().get_bit(894);
        self.syndrome.next = self.b_l4.q.val().get_bits::<8>(856);
        self.op_known.next = false;
        self.has_reth.next = false;
        self.has_imm.next = false;
        self.has_aeth.next = false;
        self.is_cnp.next = false;
        self.is_ack.next = false;
        self.at_hdr.next = 12.into();
        self.ext.next = self.b_l4.q.val().get_bits::<224>(640);
        self.imm_c.next = self.b_l4.q.val().get_bits::<32>(832);
        if (self.opcode.val() == 0x07) | (self.opcode.val() == 0x08) {
            self.op_known.next = true;
        }
        if self.opcode.val() == 0x09 {
            self.op_known.next = true;
            self.has_imm.next = true;
            self.at_hdr.next = 16.into();
            self.ext.next = self.b_l4.q.val().get_bits::<224>(608);
        }
        if (self.opcode.val() == 0x06) | (self.opcode.val() == 0x0A) {
            self.op_known.next = true;
            self.has_reth.next = true;
            self.at_hdr.next = 28.into();
            self.ext.next = self.b_l4.q.val().get_bits::<224>(512);
        }
        if self.opcode.val() == 0x0B {
            self.op_known.next = true;
            self.has_reth.next = true;
            self.has_imm.next = true;
            self.at_hdr.next = 32.into();
            self.ext.next = self.b_l4.q.val().get_bits::<224>(480);
            self.imm_c.next = self.b_l4.q.val().get_bits::<32>(704);
        }
        if self.opcode.val() == 0x11 {
            self.op_known.next = true;
            self.has_aeth.next = true;
            self.is_ack.next = true;
            self.at_hdr.next = 16.into();
            self.ext.next = self.b_l4.q.val().get_bits::<224>(608);
        }
        if self.opcode.val() == 0x81 {
            self.op_known.next = true;
            self.is_cnp.next = true;
            self.at_hdr.next = 28.into();
        }
        self.t_len.next = self.udp_len.val() - 12;
        // ---- MRC extension.
        self.ext_ver.next = self.ext.val().get_bits::<4>(220);
        self.ext_type.next = self.ext.val().get_bits::<4>(216);
        self.ext_b1.next = self.ext.val().get_bits::<8>(208);
        self.ext_len.next = 0.into();
        if self.ext_type.val() == 1 {
            if self.has_reth.val() {
                self.ext_len.next = 16.into();
            } else {
                self.ext_len.next = 28.into();
            }
        }
        if self.ext_type.val() == 2 {
            self.ext_len.next = 28.into();
            if self.ext_b1.val().get_bits::<2>(0) == 1 {
                self.ext_len.next = 36.into();
            }
            if self.ext_b1.val().get_bits::<2>(0) == 2 {
                self.ext_len.next = 52.into();
            }
        }
        if self.ext_type.val() == 3 {
            self.ext_len.next = 12.into();
        }
        if self.ext_type.val() == 4 {
            self.ext_len.next = 16.into();
        }
        self.at_end.next = self.at_hdr.val();
        if self.xbit.val() {
            self.at_end.next = self.at_hdr.val() + self.ext_len.val();
        }
        self.remaining.next = self.t_len.val() - self.at_end.val();
        self.pad_eff.next = bit_cast::<18, 2>(self.pad.val());
        if self.b_dscp.q.val() == 59 {
            self.pad_eff.next = 0.into();
        }
        self.hdr_end.next = self.b_l3off.q.val() + self.b_iphl.q.val() + 8 + self.at_end.val();
        // Bytes this front end reads: the extension only up to 28 bytes (the
        // rest of a SACK bitmap is left to a later stage).
        self.read_end.next = self.b_l3off.q.val() + self.b_iphl.q.val() + 8 + self.at_hdr.val();
        if self.xbit.val() {
            if self.ext_len.val() > 28 {
                self.read_end.next = self.b_l3off.q.val() + self.b_iphl.q.val() + 8 + self.at_hdr.val() + 28;
            } else {
                self.read_end.next = self.hdr_end.val();
            }
        }
        // ---- Transport checks (after the IP ones from stage B).
        // IPv4 checksum: fold the registered sum twice (ones' complement).
        self.csum.next = self.b_csum.q.val();
        self.csum.next = bit_cast::<22, 16>(self.csum.val().get_bits::<16>(0)) + (self.csum.val() >> 16);
        self.csum.next = bit_cast::<22, 16>(self.csum.val().get_bits::<16>(0)) + (self.csum.val() >> 16);
        self.reason_c.next = self.b_reason.q.val();
        if self.b_reason.q.val() != 0 {
            self.reason_c.next = self.b_reason.q.val();
        } else if self.b_is4.q.val() & (self.csum.val() != 0xFFFF) {
            self.reason_c.next = 5.into();
        } else if self.b_reason_post.q.val() != 0 {
            self.reason_c.next = self.b_reason_post.q.val();
        } else if self.b_ip_payload.q.val() < 8 {
            self.reason_c.next = 1.into();
        } else if self.udp_len.val() != self.b_ip_payload.q.val() {
            self.reason_c.next = 9.into();
        } else if self.dport.val() != 4791 {
            self.reason_c.next = 8.into();
        } else if self.udp_len.val() < 24 {
            self.reason_c.next = 1.into();
        } else if !self.op_known.val() {
            self.reason_c.next = 10.into();
        } else if self.tver.val() != 0 {
            self.reason_c.next = 11.into();
        } else if self.t_len.val() < self.at_hdr.val() {
            self.reason_c.next = 1.into();
        } else if self.xbit.val() & self.is_cnp.val() {
            self.reason_c.next = 17.into();
        } else if self.xbit.val() & (self.t_len.val() < self.at_hdr.val() + 2) {
            self.reason_c.next = 1.into();
        } else if self.xbit.val() & (self.ext_ver.val() != 1) {
            self.reason_c.next = 14.into();
        } else if self.xbit.val() & (self.ext_type.val() == 2) & (self.ext_b1.val().get_bits::<2>(0) == 3) {
            self.reason_c.next = 15.into();
        } else if self.xbit.val() & ((self.ext_type.val() == 0) | (self.ext_type.val() > 4)) {
            self.reason_c.next = 13.into();
        } else if self.xbit.val() & (self.is_ack.val() != (self.ext_type.val() != 1)) {
            self.reason_c.next = 17.into();
        } else if self.xbit.val() & (self.t_len.val() < self.at_end.val()) {
            self.reason_c.next = 1.into();
        } else if self.xbit.val() & (self.ext_type.val() == 3) & ((self.ext_b1.val() == 0) | (self.ext_b1.val() > 3)) {
            self.reason_c.next = 16.into();
        } else if self.xbit.val()
            & (self.ext_type.val() == 3)
            & (((self.ext_b1.val() == 3) & (self.syndrome.val().get_bits::<7>(0) != 0x62))
                | ((self.ext_b1.val() != 3) & (self.syndrome.val().get_bits::<7>(0) != 0x60)))
        {
            self.reason_c.next = 18.into();
        } else if self.xbit.val() & ((self.ext_type.val() == 2) | (self.ext_type.val() == 4)) & (self.syndrome.val().get_bits::<2>(5) != 0) {
            self.reason_c.next = 18.into();
        } else if self.pad_eff.val() > self.remaining.val() {
            self.reason_c.next = 12.into();
        } else if self.read_end.val() > 128 {
            self.reason_c.next = 31.into();
        }
        // ---- Register the record at the frame's last beat.
        self.r_valid.d.next = false;
        self.r_drop.d.next = false;
        if self.b_v.q.val() {
            self.r_valid.d.next = self.reason_c.val() == 0;
            self.r_drop.d.next = self.reason_c.val() != 0;
            self.r_reason.d.next = self.reason_c.val();
            self.r_ipv6.d.next = self.b_is6.q.val();
            self.r_vlan.d.next = self.b_vlan.q.val();
            self.r_ecn_ce.d.next = self.b_ecn.q.val() == 3;
            self.r_trimmed.d.next = self.b_dscp.q.val() == 59;
            self.r_ev.d.next = bit_cast::<32, 16>(self.sport.val());
            if self.b_is6.q.val() {
                self.r_ev.d.next = (bit_cast::<32, 16>(self.b_flow_lo.q.val()) << 16) | bit_cast::<32, 16>(self.sport.val());
            }
            self.r_opcode.d.next = self.opcode.val();
            self.r_se.d.next = self.b_l4.q.val().get_bit(951);
            self.r_mig.d.next = self.b_l4.q.val().get_bit(950);
            self.r_pad.d.next = self.pad.val();
            self.r_pkey.d.next = self.b_l4.q.val().get_bits::<16>(928);
            self.r_fecn.d.next = self.b_l4.q.val().get_bit(927);
            self.r_becn.d.next = self.b_l4.q.val().get_bit(926);
            self.r_dest_qp.d.next = self.b_l4.q.val().get_bits::<24>(896);
            self.r_ack_req.d.next = self.b_l4.q.val().get_bit(895);
            self.r_xbit.d.next = self.xbit.val();
            self.r_psn.d.next = self.b_l4.q.val().get_bits::<24>(864);
            self.r_reth_va.d.next = self.b_l4.q.val().get_bits::<64>(800);
            self.r_reth_rkey.d.next = self.b_l4.q.val().get_bits::<32>(768);
            self.r_reth_len.d.next = self.b_l4.q.val().get_bits::<32>(736);
            self.r_imm.d.next = self.imm_c.val();
            self.r_aeth_syndrome.d.next = self.syndrome.val();
            self.r_aeth_msn.d.next = self.b_l4.q.val().get_bits::<24>(832);
            self.r_ext.d.next = self.ext.val();
            self.r_payload_off.d.next = self.hdr_end.val();
            self.r_payload_len.d.next = self.remaining.val() - self.pad_eff.val();
        }
        self.out_valid.next = self.r_valid.q.val();
        self.out_drop.next = self.r_drop.q.val();
        self.out_reason.next = self.r_reason.q.val();
        self.out_ipv6.next = self.r_ipv6.q.val();
        self.out_vlan.next = self.r_vlan.q.val();
        self.out_ecn_ce.next = self.r_ecn_ce.q.val();
        self.out_trimmed.next = self.r_trimmed.q.val();
        self.out_ev.next = self.r_ev.q.val();
        self.out_opcode.next = self.r_opcode.q.val();
        self.out_se.next = self.r_se.q.val();
        self.out_mig.next = self.r_mig.q.val();
        self.out_pad.next = self.r_pad.q.val();
        self.out_pkey.next = self.r_pkey.q.val();
        self.out_fecn.next = self.r_fecn.q.val();
        self.out_becn.next = self.r_becn.q.val();
        self.out_dest_qp.next = self.r_dest_qp.q.val();
        self.out_ack_req.next = self.r_ack_req.q.val();
        self.out_xbit.next = self.r_xbit.q.val();
        self.out_psn.next = self.r_psn.q.val();
        self.out_reth_va.next = self.r_reth_va.q.val();
        self.out_reth_rkey.next = self.r_reth_rkey.q.val();
        self.out_reth_len.next = self.r_reth_len.q.val();
        self.out_imm.next = self.r_imm.q.val();
        self.out_aeth_syndrome.next = self.r_aeth_syndrome.q.val();
        self.out_aeth_msn.next = self.r_aeth_msn.q.val();
        self.out_ext.next = self.r_ext.q.val();
        self.out_payload_off.next = self.r_payload_off.q.val();
        self.out_payload_len.next = self.r_payload_len.q.val();
    }
}
