//! RX header parser front end: 512-bit AXI-Stream in, one header record (or
//! a drop with its reason) out per frame. See `docs/hw/rx_parser.md`.
//!
//! The parser keeps the first two beats of a frame (128 bytes: enough for
//! Ethernet [+ 802.1Q] / IPv4 (no options, or short ones) | IPv6 / UDP /
//! BTH / RETH / ImmDt / AETH / the first 28 bytes of the MRC extension),
//! counts the frame's bytes, and from `tlast` on runs a six-stage pipeline
//! (every stage at most 7 equivalent LUT levels, for 322 MHz):
//! A registers the byte-reversed window aligned on the IP header (802.1Q
//! or not) and the EtherType facts; B computes the frame length, aligns
//! the UDP header, makes each Ethernet/IP check an independent bit and
//! the checksum's first two adder levels; C finishes the checksum sum,
//! applies the IP checks' priority, decodes the opcode (header lengths,
//! extension and ImmDt position) and makes the UDP/BTH check bits; D folds
//! and checks the checksum, decodes the extension and computes where the
//! headers end; E the payload bounds and the length checks on them; F
//! picks the first failure in the golden model's order (a priority
//! encoder over registered bits, with the ICRC verdict of the
//! [`RxIcrc`] checker that follows the same stream beat by beat) and
//! registers the record. Both dialects: an opcode of the MRC 1.0 range
//! (0xC0-0xDF) has its transport judged by [`RxParserMrc10`], fed the
//! UDP-aligned window in stage C, and its headers written into the same
//! record in stage E ([`translate`]; `docs/hw/mrc10-wire.md`, "The RX
//! core"). It takes a new frame every cycle (a one-beat frame
//! enters stage A in the cycle it arrives), `s_tready` is always high, and
//! the record appears six cycles after the `tlast` beat.

use rust_hdl::prelude::*;

use crate::bus::AxisSink;

use crate::param::Param;
use crate::rx_icrc::RxIcrc;
use crate::rx_parser_mrc10::{Mrc10RxHeader, RxParserMrc10, WINDOW_BITS as MRC10_WINDOW_BITS};

// The echo unwrap spells the timestamp's place in the ns clock as bits
// 21-6 (`update()` takes no const paths).
const _: () = assert!(crate::tx_path::mrc10_wire::TS_UNIT_SHIFT == 6);

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
    /// The ICRC trailer disagrees with the frame (`hw::rx_icrc` computes
    /// it; checked after the UDP checks, before any BTH field).
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

/// Bytes valid in a beat from its `tkeep`, which AXI-Stream packs (a
/// thermometer code: bits 0..n-1 set). Bit `b` of the count is set when the
/// code ends in the upper half of a `2^(b+1)`-aligned group, i.e. for some
/// `j`, `keep[j 2^(b+1) + 2^b - 1]` is set and `keep[(j+1) 2^(b+1) - 1]` is
/// clear; bit 6 is `keep[63]` (n = 64). An OR of at most 32 two-input terms
/// per bit: three LUT levels, where the priority search for the highest set
/// bit took 8 LUTs and 22 MUXF cells. A `tkeep` with holes (an AXI-Stream
/// violation) gives some count of 0-127, never a panic; the length checks
/// then see a wrong frame length.
#[derive(LogicBlock, Default)]
pub struct KeepCount {
    pub keep: Signal<In, Bits<64>>,
    pub count: Signal<Out, Bits<7>>,
}

impl KeepCount {
    /// The leaf's function (its simulation model; the Verilog is the same
    /// sum of products).
    pub fn count(keep: u64) -> u64 {
        let bit = |i: u64| keep >> i & 1 == 1;
        let mut c = u64::from(bit(63)) << 6;
        for b in 0..6u64 {
            let g = 1u64 << (b + 1);
            if (0..64 / g).any(|j| bit(j * g + g / 2 - 1) && !bit((j + 1) * g - 1)) {
                c |= 1 << b;
            }
        }
        c
    }
}

impl Logic for KeepCount {
    fn update(&mut self) {
        self.count.next = KeepCount::count(self.keep.val().to_u64()).into();
    }
    fn connect(&mut self) {
        self.count.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut s = String::from("always @(*) begin\n   count[6] = keep[63];\n");
        for b in 0..6 {
            let g = 1usize << (b + 1);
            let terms: Vec<String> = (0..64 / g)
                .map(|j| format!("(keep[{}] & ~keep[{}])", j * g + g / 2 - 1, (j + 1) * g - 1))
                .collect();
            s.push_str(&format!("   count[{b}] = {};\n", terms.join(" | ")));
        }
        s.push_str("end");
        Verilog::Custom(s)
    }
}

#[cfg(test)]
mod tests {
    use super::KeepCount;

    /// Every packed `tkeep` (0 to 64 bytes) gives its byte count.
    #[test]
    fn keep_count_of_every_packed_keep() {
        for n in 0..=64u32 {
            let keep = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
            assert_eq!(KeepCount::count(keep), u64::from(n), "n {n}");
        }
    }
}

/// How the record of an MRC 1.0 frame is written: the RX path, the
/// completion tracker, the ACK generator and the retransmit engine still
/// read the legacy record (`docs/hw/rx_path.md`), so the MRC 1.0 headers
/// are put where the legacy ones would carry the same facts (see
/// `docs/hw/mrc10-wire.md`, "The RX core"). The test checks every value
/// against `proto::wire` and `proto::wire::mrc10`.
pub mod translate {
    /// Opcode bits 7-5 of MRC 1.0: every `mrc10::Opcode` is in 0xC0-0xDF
    /// and no legacy opcode is; an opcode of the range that MRC 1.0 does
    /// not define is `UnknownOpcode` in both dialects.
    pub const MRC10_RANGE: u64 = 0b110;
    /// The DSCPs of the trimmed classes (`mrc10::DscpMap::DEFAULT`: TRIMMED
    /// is the legacy profile's 59, TRIMMED_LASTHOP 63).
    pub const DSCP_TRIMMED: u64 = 59;
    pub const DSCP_TRIMMED_LAST_HOP: u64 = 63;
    /// The legacy ACK opcode: MRC 1.0 ACK, SACK, NACK and probe become it,
    /// with the extension type saying which.
    pub const LEGACY_ACK: u64 = 0x11;
    /// Legacy extension byte 0: version 1 in bits 7-4, the type in 3-0
    /// (data 1, SACK 2, NACK 3, probe 4).
    pub const EXT_DATA: u64 = 0x11;
    pub const EXT_SACK: u64 = 0x12;
    pub const EXT_NACK: u64 = 0x13;
    pub const EXT_PROBE: u64 = 0x14;
    /// An MRC 1.0 SACK that answers a reliability probe (SETH pr = 1):
    /// type 5, which the legacy extension does not define (the parser
    /// refuses it on a legacy frame), so only this translation makes it.
    /// The SACK's layout, plus the probed EV index (SETH ack PSN offset)
    /// in bytes 4-5, which the RX path checks against the QP's EV set.
    pub const EXT_PROBE_ANSWER: u64 = 0x15;
    /// An MRC 1.0 reliability probe (PETH): type 6, which the legacy
    /// extension does not define either, so the RX path tells it from a
    /// legacy probe (type 4), which the core does not answer. The legacy
    /// probe layout otherwise: the probe id in bytes 2-3 (where a data
    /// extension has its `ev_index`, which the ACK generator echoes), the
    /// PETH timestamp zero-extended in bytes 8-11 (the echo).
    pub const EXT_MRC10_PROBE: u64 = 0x16;
    /// An MRC 1.0 SACK's congestion feedback in the legacy SACK: SETH
    /// cc_flags (the CE marks seen) zero-extended in bytes 4-5, the
    /// legacy `ecn_ce_count`; CC_STATE in bytes 6-7 (legacy reserved,
    /// ignored on a legacy frame, `hw::core` clears them): the cwnd
    /// penalty in bits 6-0, the restore bit in bit 15 ([`SACK_CC_RESTORE`])
    /// and, on a positive AETH ACK, which carries no CC_STATE and so no
    /// RTT sample, bit 14 ([`SACK_CC_NO_SAMPLE`]).
    pub const SACK_CC_RESTORE: u64 = 1 << 15;
    pub const SACK_CC_NO_SAMPLE: u64 = 1 << 14;
    /// An MRC 1.0 SACK (not a probe answer) names its trigger: bit 13 of
    /// bytes 6-7 set, and the SETH ack PSN offset (signed, the trigger's
    /// PSN minus the cumulative one) in bytes 12-13, where a legacy SACK
    /// has its service time (MRC 1.0 has none: the echo includes it).
    pub const SACK_CC_TRIGGER: u64 = 1 << 13;
    /// Legacy NACK kinds (`proto::wire::NackKind`, `hw::ack_gen::nack`).
    pub const KIND_TRIMMED: u64 = 1;
    pub const KIND_OUT_OF_WINDOW: u64 = 2;
    pub const KIND_REMOTE_ACCESS: u64 = 3;
    /// NETH reasons that are the legacy trimmed kind (a switch cut the
    /// payload: resend at once); the other five (no bitmap, no buffer, no
    /// resource, out of window, unexpected event) are the legacy
    /// out-of-window kind (the golden requester defers them to the RTO
    /// alike).
    pub const NACK_TRIMMED: u64 = 0x01;
    pub const NACK_TRIMMED_LAST_HOP: u64 = 0x02;
    /// SETH m: skip the EV once (as a TRIMMED NACK does: `out_skip`), or
    /// mark it ASSUMED_BAD (`out_always_skip`).
    pub const SKIP_ONCE: u64 = 1;
    pub const ALWAYS_SKIP: u64 = 2;
    /// AETH syndrome bits 6-0 of the remote-access NAK (`Syndrome::Nak`
    /// with `NAK_REMOTE_ACCESS`): the legacy remote-access NACK kind. An
    /// AETH with bits 6-5 clear is a positive ACK: a SACK with an empty
    /// bitmap.
    pub const SYNDROME_REMOTE_ACCESS: u64 = 0x62;
    /// Bits 23-16 set: a negative 16-bit SACK offset widened to 24 bits.
    pub const SIGN_EXTEND_16_TO_24: u64 = 0xFF_0000;
}

/// The parser. Stream in on `s_*`; six cycles after a frame's `tlast`
/// beat, `out_valid` (accepted, fields valid) or `out_drop` (with
/// `out_reason`) pulses for one cycle.
#[derive(LogicBlock, Default)]
pub struct RxParser {
    pub clock: Signal<In, Clock>,
    /// The core's nanosecond clock (`tx_path`'s, whose send times MRC 1.0
    /// echoes): the 16-bit echoes of SACKs and NACKs (64 ns units) are
    /// unwrapped against it into the 32-bit ns the retransmit engine reads.
    pub now_ns: Signal<In, Bits<32>>,
    pub s_axis: AxisSink,
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
    /// The frame is MRC 1.0 (opcode 0xC0-0xDF): its transport was judged
    /// by [`RxParserMrc10`] and the record holds its translation into the
    /// legacy record (see [`translate`] and `docs/hw/mrc10-wire.md`).
    pub out_mrc10: Signal<Out, Bit>,
    /// MRC 1.0: the frame asks the requester to SKIP the EV of the packet
    /// it answers once (the golden MRC 1.0 requester's `skip_once`): a
    /// NACK with reason TRIMMED (a trim before the last hop; the legacy
    /// record has one trimmed kind for TRIMMED and TRIMMED_LASTHOP, this
    /// tells them apart), or a SACK that is no probe answer with SETH
    /// m = SKIP_ONCE. Low for every legacy frame.
    pub out_skip: Signal<Out, Bit>,
    /// MRC 1.0: a SACK that is no probe answer with SETH m = ALWAYS_SKIP
    /// (the requester marks the EV ASSUMED_BAD). Low for every legacy
    /// frame.
    pub out_always_skip: Signal<Out, Bit>,
    // Stream state: beat count, whether the next beat is the frame's
    // first (`not_first` low) or second, beats 0 and 1.
    beat: DFF<Bits<12>>,
    not_first: DFF<Bit>,
    second: DFF<Bit>,
    h0: DFF<Bits<512>>,
    h1: DFF<Bits<512>>,
    rev0: ByteRev<512>,
    rev1: ByteRev<512>,
    kc: KeepCount,
    /// The ICRC checker on the same stream: its verdict for a frame is
    /// registered in the cycle stage F reads stage E's registers.
    icrc: RxIcrc,
    /// The MRC 1.0 transport parser, fed the UDP-aligned window in stage C
    /// (its record comes two cycles later, beside stage D's registers).
    m10: RxParserMrc10,
    /// Transport byte 0 from the top byte of the window to bits 7-0, the
    /// MRC 1.0 parser's input order (wiring).
    m10_rev: ByteRev<MRC10_WINDOW_BITS>,
    // Combinational locals, stage A.
    hdr0: Signal<Local, Bits<512>>,
    hdr1: Signal<Local, Bits<512>>,
    win: Signal<Local, Bits<1024>>,
    et_outer: Signal<Local, Bits<16>>,
    et_vlan: Signal<Local, Bits<16>>,
    vlan: Signal<Local, Bit>,
    l3: Signal<Local, Bits<1024>>,
    // Stage B.
    flen: Signal<Local, Bits<18>>,
    l3off: Signal<Local, Bits<18>>,
    ip_avail: Signal<Local, Bits<18>>,
    ipver: Signal<Local, Bits<4>>,
    ihl: Signal<Local, Bits<4>>,
    iphl: Signal<Local, Bits<18>>,
    v4_total: Signal<Local, Bits<18>>,
    frag: Signal<Local, Bit>,
    ipproto: Signal<Local, Bits<8>>,
    dscp: Signal<Local, Bits<6>>,
    ecn: Signal<Local, Bits<2>>,
    v6_plen: Signal<Local, Bits<18>>,
    ip_payload: Signal<Local, Bits<18>>,
    l4sh: Signal<Local, Bits<11>>,
    l4: Signal<Local, Bits<1024>>,
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
    // Stage C.
    cs3_0: Signal<Local, Bits<22>>,
    cs3_1: Signal<Local, Bits<22>>,
    cs3_2: Signal<Local, Bits<22>>,
    cs3_3: Signal<Local, Bits<22>>,
    cs4_0: Signal<Local, Bits<22>>,
    cs4_1: Signal<Local, Bits<22>>,
    cs5_0: Signal<Local, Bits<22>>,
    reason_ip: Signal<Local, Bits<5>>,
    reason_post: Signal<Local, Bits<5>>,
    dport: Signal<Local, Bits<16>>,
    udp_len: Signal<Local, Bits<18>>,
    opcode: Signal<Local, Bits<8>>,
    tver: Signal<Local, Bits<4>>,
    xbit: Signal<Local, Bit>,
    op_known: Signal<Local, Bit>,
    has_reth: Signal<Local, Bit>,
    is_cnp: Signal<Local, Bit>,
    is_ack: Signal<Local, Bit>,
    at_hdr: Signal<Local, Bits<18>>,
    ext: Signal<Local, Bits<224>>,
    imm_c: Signal<Local, Bits<32>>,
    m10_len: Signal<Local, Bits<18>>,
    // Stage D.
    csum: Signal<Local, Bits<22>>,
    ext_ver: Signal<Local, Bits<4>>,
    ext_type: Signal<Local, Bits<4>>,
    ext_b1: Signal<Local, Bits<8>>,
    syndrome: Signal<Local, Bits<8>>,
    ext_len: Signal<Local, Bits<18>>,
    ext_read: Signal<Local, Bits<18>>,
    // Stage E.
    remaining: Signal<Local, Bits<18>>,
    // Stage E, MRC 1.0: where its headers end in the frame, the SACK
    // offset widened; stage F: the legacy extension bytes its headers are
    // written into.
    m10_end: Signal<Local, Bits<18>>,
    m10_ext: Signal<Local, Bits<224>>,
    m10_ext_b0: Signal<Local, Bits<8>>,
    m10_ext_b1: Signal<Local, Bits<8>>,
    m10_ext_ev: Signal<Local, Bits<16>>,
    m10_ext_ev_index: Signal<Local, Bits<16>>,
    m10_ext_echo: Signal<Local, Bits<32>>,
    m10_ext_lo: Signal<Local, Bits<96>>,
    /// Legacy SACK bytes 6-7: CC_STATE (`translate::SACK_CC_RESTORE`).
    m10_ext_cc: Signal<Local, Bits<16>>,
    /// Legacy SACK bytes 12-13: an MRC 1.0 SACK's ack PSN offset
    /// (`translate::SACK_CC_TRIGGER`).
    m10_ext_off: Signal<Local, Bits<16>>,
    m10_base_off: Signal<Local, Bits<24>>,
    m10_off16: Signal<Local, Bits<16>>,
    m10_syn: Signal<Local, Bits<8>>,
    // Stage F.
    reason_f: Signal<Local, Bits<5>>,
    // A: the IP-aligned window and the Ethernet facts.
    a_l3: DFF<Bits<1024>>,
    a_vlan: DFF<Bit>,
    a_is4: DFF<Bit>,
    a_is6: DFF<Bit>,
    a_count: DFF<Bits<7>>,
    a_beat: DFF<Bits<12>>,
    a_v: DFF<Bit>,
    // B: the UDP-aligned window, the checksum's second-level sums, the
    // IP check bits (each its own condition: C applies the priority).
    b_l4: DFF<Bits<1024>>,
    b_cs2_0: DFF<Bits<22>>,
    b_cs2_1: DFF<Bits<22>>,
    b_cs2_2: DFF<Bits<22>>,
    b_cs2_3: DFF<Bits<22>>,
    b_cs2_4: DFF<Bits<22>>,
    b_cs2_5: DFF<Bits<22>>,
    b_cs2_6: DFF<Bits<22>>,
    b_cs2_7: DFF<Bits<22>>,
    b_k_eth_short: DFF<Bit>,
    b_k_vlan_short: DFF<Bit>,
    b_k_ethertype: DFF<Bit>,
    b_k_ip_empty: DFF<Bit>,
    b_k_v4_ver: DFF<Bit>,
    b_k_v6_ver: DFF<Bit>,
    b_k_v4_short: DFF<Bit>,
    b_k_ihl: DFF<Bit>,
    b_k_v4_hdr: DFF<Bit>,
    b_k_v4_len: DFF<Bit>,
    b_k_frag: DFF<Bit>,
    b_k_v6_short: DFF<Bit>,
    b_k_v6_len: DFF<Bit>,
    b_k_proto: DFF<Bit>,
    b_is4: DFF<Bit>,
    b_is6: DFF<Bit>,
    b_vlan: DFF<Bit>,
    b_ip_payload: DFF<Bits<18>>,
    b_dscp: DFF<Bits<6>>,
    b_ecn: DFF<Bits<2>>,
    b_flow_lo: DFF<Bits<16>>,
    b_l4base: DFF<Bits<18>>,
    b_v: DFF<Bit>,
    // C: the raw checksum, the first IP failures, the transport decode.
    c_l4: DFF<Bits<1024>>,
    c_csum: DFF<Bits<22>>,
    c_reason_ip: DFF<Bits<5>>,
    c_reason_post: DFF<Bits<5>>,
    c_ext: DFF<Bits<224>>,
    c_imm: DFF<Bits<32>>,
    c_at_hdr: DFF<Bits<18>>,
    c_t_len: DFF<Bits<18>>,
    c_xbit: DFF<Bit>,
    c_is_ack: DFF<Bit>,
    c_is_cnp: DFF<Bit>,
    c_has_reth: DFF<Bit>,
    c_k_udp_short: DFF<Bit>,
    c_k_udp_len: DFF<Bit>,
    c_k_port: DFF<Bit>,
    c_k_udp_bth: DFF<Bit>,
    c_k_opcode: DFF<Bit>,
    c_k_tver: DFF<Bit>,
    c_is4: DFF<Bit>,
    c_is6: DFF<Bit>,
    c_vlan: DFF<Bit>,
    c_dscp: DFF<Bits<6>>,
    c_ecn: DFF<Bits<2>>,
    c_flow_lo: DFF<Bits<16>>,
    c_l4base: DFF<Bits<18>>,
    c_m10: DFF<Bit>,
    c_v: DFF<Bit>,
    // D: the checksum verdict, the extension's checks, its end.
    d_l4: DFF<Bits<1024>>,
    d_reason_ip: DFF<Bits<5>>,
    d_reason_post: DFF<Bits<5>>,
    d_k_csum: DFF<Bit>,
    d_ext: DFF<Bits<224>>,
    d_imm: DFF<Bits<32>>,
    d_xbit: DFF<Bit>,
    d_t_len: DFF<Bits<18>>,
    d_at_end: DFF<Bits<18>>,
    d_read_end: DFF<Bits<18>>,
    d_pad_eff: DFF<Bits<18>>,
    d_l4base: DFF<Bits<18>>,
    d_k_udp_short: DFF<Bit>,
    d_k_udp_len: DFF<Bit>,
    d_k_port: DFF<Bit>,
    d_k_udp_bth: DFF<Bit>,
    d_k_opcode: DFF<Bit>,
    d_k_tver: DFF<Bit>,
    d_k_t_short: DFF<Bit>,
    d_k_x_cnp: DFF<Bit>,
    d_k_x_short: DFF<Bit>,
    d_k_ext_ver: DFF<Bit>,
    d_k_sack_width: DFF<Bit>,
    d_k_ext_type: DFF<Bit>,
    d_k_ext_mismatch: DFF<Bit>,
    d_k_nack_kind: DFF<Bit>,
    d_k_nack_syndrome: DFF<Bit>,
    d_k_sack_syndrome: DFF<Bit>,
    d_is6: DFF<Bit>,
    d_vlan: DFF<Bit>,
    d_dscp: DFF<Bits<6>>,
    d_ecn: DFF<Bits<2>>,
    d_flow_lo: DFF<Bits<16>>,
    d_m10: DFF<Bit>,
    d_v: DFF<Bit>,
    // E: the payload bounds and the length checks on them.
    e_l4: DFF<Bits<1024>>,
    e_reason_ip: DFF<Bits<5>>,
    e_reason_post: DFF<Bits<5>>,
    e_k_csum: DFF<Bit>,
    e_ext: DFF<Bits<224>>,
    e_imm: DFF<Bits<32>>,
    e_xbit: DFF<Bit>,
    e_remaining: DFF<Bits<18>>,
    e_pad_eff: DFF<Bits<18>>,
    e_hdr_end: DFF<Bits<18>>,
    e_k_udp_short: DFF<Bit>,
    e_k_udp_len: DFF<Bit>,
    e_k_port: DFF<Bit>,
    e_k_udp_bth: DFF<Bit>,
    e_k_opcode: DFF<Bit>,
    e_k_tver: DFF<Bit>,
    e_k_t_short: DFF<Bit>,
    e_k_x_cnp: DFF<Bit>,
    e_k_x_short: DFF<Bit>,
    e_k_ext_ver: DFF<Bit>,
    e_k_sack_width: DFF<Bit>,
    e_k_ext_type: DFF<Bit>,
    e_k_ext_mismatch: DFF<Bit>,
    e_k_ext_short: DFF<Bit>,
    e_k_nack_kind: DFF<Bit>,
    e_k_nack_syndrome: DFF<Bit>,
    e_k_sack_syndrome: DFF<Bit>,
    e_k_pad: DFF<Bit>,
    e_k_window: DFF<Bit>,
    e_is6: DFF<Bit>,
    e_vlan: DFF<Bit>,
    e_dscp: DFF<Bits<6>>,
    e_ecn: DFF<Bits<2>>,
    e_flow_lo: DFF<Bits<16>>,
    // The transport fields the record takes, chosen by dialect in E.
    e_opcode: DFF<Bits<8>>,
    e_psn: DFF<Bits<24>>,
    e_reth_va: DFF<Bits<64>>,
    e_reth_rkey: DFF<Bits<32>>,
    e_reth_len: DFF<Bits<32>>,
    e_m10: DFF<Bit>,
    /// The MRC 1.0 parser's reason, or the window's (31) on an accepted
    /// chain that ends past the 128-byte window.
    e_m10_reason: DFF<Bits<5>>,
    /// The MRC 1.0 parser's word and the two bitmap bases (SACK: the
    /// cumulative PSN plus the offset; positive ACK: the PSN plus one),
    /// for stage F's extension bytes.
    e_m10_hdr: DFF<Mrc10RxHeader>,
    e_m10_base_sack: DFF<Bits<24>>,
    // The time, and its bits above the 16-bit timestamp less one (the
    // previous wrap), registered so the unwrap reads registers only.
    now_q: DFF<Bits<32>>,
    now_hi_m1: DFF<Bits<10>>,
    // A SACK's / NACK's echo unwrapped: the latest time at or before
    // `now` whose 64 ns count has the echo's 16 bits.
    e_m10_echo: DFF<Bits<32>>,
    m10_echo16: Signal<Local, Bits<16>>,
    m10_echo_hi: Signal<Local, Bits<10>>,
    e_m10_base_ack: DFF<Bits<24>>,
    e_v: DFF<Bit>,
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
    r_mrc10: DFF<Bit>,
    r_skip: DFF<Bit>,
    r_always_skip: DFF<Bit>,
    k_skip_once: Param<2, { translate::SKIP_ONCE }>,
    k_always_skip: Param<2, { translate::ALWAYS_SKIP }>,
    // Named constants of the MRC 1.0 switch (Verilog localparams).
    /// Opcode bits 7-5 of the MRC 1.0 range (0xC0-0xDF: every MRC 1.0
    /// opcode, and no legacy one).
    k_m10_range: Param<3, { translate::MRC10_RANGE }>,
    k_dscp_trimmed: Param<6, { translate::DSCP_TRIMMED }>,
    k_dscp_trimmed_last_hop: Param<6, { translate::DSCP_TRIMMED_LAST_HOP }>,
    k_legacy_ack: Param<8, { translate::LEGACY_ACK }>,
    k_ext_data: Param<8, { translate::EXT_DATA }>,
    k_ext_sack: Param<8, { translate::EXT_SACK }>,
    k_cc_no_sample: Param<16, { translate::SACK_CC_NO_SAMPLE }>,
    k_cc_restore: Param<16, { translate::SACK_CC_RESTORE }>,
    k_cc_trigger: Param<16, { translate::SACK_CC_TRIGGER }>,
    k_ext_nack: Param<8, { translate::EXT_NACK }>,
    k_ext_mrc10_probe: Param<8, { translate::EXT_MRC10_PROBE }>,
    k_ext_probe_answer: Param<8, { translate::EXT_PROBE_ANSWER }>,
    k_kind_trimmed: Param<8, { translate::KIND_TRIMMED }>,
    k_kind_oow: Param<8, { translate::KIND_OUT_OF_WINDOW }>,
    k_kind_remote: Param<8, { translate::KIND_REMOTE_ACCESS }>,
    k_reason_trimmed: Param<8, { translate::NACK_TRIMMED }>,
    k_reason_trimmed_last_hop: Param<8, { translate::NACK_TRIMMED_LAST_HOP }>,
    k_syn_remote: Param<7, { translate::SYNDROME_REMOTE_ACCESS }>,
    k_sext16: Param<24, { translate::SIGN_EXTEND_16_TO_24 }>,
    k_one24: Param<24, 1>,
}

impl Logic for RxParser {
    // The priority chains give the same reason on several arms (e.g.
    // Truncated at each layer), in the golden model's order.
    #[allow(clippy::if_same_then_else)]
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            beat,
            not_first,
            second,
            h0,
            h1,
            a_l3,
            a_vlan,
            a_is4,
            a_is6,
            a_count,
            a_beat,
            a_v,
            b_l4,
            b_cs2_0,
            b_cs2_1,
            b_cs2_2,
            b_cs2_3,
            b_cs2_4,
            b_cs2_5,
            b_cs2_6,
            b_cs2_7,
            b_k_eth_short,
            b_k_vlan_short,
            b_k_ethertype,
            b_k_ip_empty,
            b_k_v4_ver,
            b_k_v6_ver,
            b_k_v4_short,
            b_k_ihl,
            b_k_v4_hdr,
            b_k_v4_len,
            b_k_frag,
            b_k_v6_short,
            b_k_v6_len,
            b_k_proto,
            b_is4,
            b_is6,
            b_vlan,
            b_ip_payload,
            b_dscp,
            b_ecn,
            b_flow_lo,
            b_l4base,
            b_v,
            c_l4,
            c_csum,
            c_reason_ip,
            c_reason_post,
            c_ext,
            c_imm,
            c_at_hdr,
            c_t_len,
            c_xbit,
            c_is_ack,
            c_is_cnp,
            c_has_reth,
            c_k_udp_short,
            c_k_udp_len,
            c_k_port,
            c_k_udp_bth,
            c_k_opcode,
            c_k_tver,
            c_is4,
            c_is6,
            c_vlan,
            c_dscp,
            c_ecn,
            c_flow_lo,
            c_l4base,
            c_m10,
            c_v,
            d_l4,
            d_reason_ip,
            d_reason_post,
            d_k_csum,
            d_ext,
            d_imm,
            d_xbit,
            d_t_len,
            d_at_end,
            d_read_end,
            d_pad_eff,
            d_l4base,
            d_k_udp_short,
            d_k_udp_len,
            d_k_port,
            d_k_udp_bth,
            d_k_opcode,
            d_k_tver,
            d_k_t_short,
            d_k_x_cnp,
            d_k_x_short,
            d_k_ext_ver,
            d_k_sack_width,
            d_k_ext_type,
            d_k_ext_mismatch,
            d_k_nack_kind,
            d_k_nack_syndrome,
            d_k_sack_syndrome,
            d_is6,
            d_vlan,
            d_dscp,
            d_ecn,
            d_flow_lo,
            d_m10,
            d_v,
            e_l4,
            e_reason_ip,
            e_reason_post,
            e_k_csum,
            e_ext,
            e_imm,
            e_xbit,
            e_remaining,
            e_pad_eff,
            e_hdr_end,
            e_k_udp_short,
            e_k_udp_len,
            e_k_port,
            e_k_udp_bth,
            e_k_opcode,
            e_k_tver,
            e_k_t_short,
            e_k_x_cnp,
            e_k_x_short,
            e_k_ext_ver,
            e_k_sack_width,
            e_k_ext_type,
            e_k_ext_mismatch,
            e_k_ext_short,
            e_k_nack_kind,
            e_k_nack_syndrome,
            e_k_sack_syndrome,
            e_k_pad,
            e_k_window,
            e_is6,
            e_vlan,
            e_dscp,
            e_ecn,
            e_flow_lo,
            e_opcode,
            e_psn,
            e_reth_va,
            e_reth_rkey,
            e_reth_len,
            e_m10,
            e_m10_reason,
            e_m10_hdr,
            e_m10_base_sack,
            now_q,
            now_hi_m1,
            e_m10_echo,
            e_m10_base_ack,
            e_v,
            r_valid,
            r_drop,
            r_reason,
            r_ipv6,
            r_vlan,
            r_ecn_ce,
            r_trimmed,
            r_ev,
            r_opcode,
            r_se,
            r_mig,
            r_pad,
            r_pkey,
            r_fecn,
            r_becn,
            r_dest_qp,
            r_ack_req,
            r_xbit,
            r_psn,
            r_reth_va,
            r_reth_rkey,
            r_reth_len,
            r_imm,
            r_aeth_syndrome,
            r_aeth_msn,
            r_ext,
            r_payload_off,
            r_payload_len,
            r_mrc10,
            r_skip,
            r_always_skip
        );
        clock!(self, clock, icrc, m10);
        self.s_axis.tready.next = true;
        self.icrc.s_tdata.next = self.s_axis.tdata.val();
        self.icrc.s_tlast.next = self.s_axis.tlast.val();
        self.icrc.s_tvalid.next = self.s_axis.tvalid.val();
        // ==== Stream side: keep beats 0 and 1, count beats. `not_first`
        // and `second` are registered so the window's beat select is one
        // LUT (a compare of the 12-bit counter was three levels).
        self.hdr0.next = self.h0.q.val();
        self.hdr1.next = self.h1.q.val();
        if !self.not_first.q.val() {
            self.hdr0.next = self.s_axis.tdata.val();
            self.hdr1.next = 0.into();
        }
        if self.second.q.val() {
            self.hdr1.next = self.s_axis.tdata.val();
        }
        if self.s_axis.tvalid.val() {
            if !self.not_first.q.val() {
                self.h0.d.next = self.s_axis.tdata.val();
                self.h1.d.next = 0.into();
            }
            if self.second.q.val() {
                self.h1.d.next = self.s_axis.tdata.val();
            }
            if self.s_axis.tlast.val() {
                self.beat.d.next = 0.into();
                self.not_first.d.next = false;
                self.second.d.next = false;
            } else {
                self.beat.d.next = self.beat.q.val() + 1;
                self.not_first.d.next = true;
                self.second.d.next = !self.not_first.q.val();
            }
        }
        self.kc.keep.next = self.s_axis.tkeep.val();
        // Byte-reversed window: frame byte 0 in bits 1023-1016.
        self.rev0.i.next = self.hdr0.val();
        self.rev1.i.next = self.hdr1.val();
        self.win.next = (bit_cast::<1024, 512>(self.rev0.o.val()) << 512) | bit_cast::<1024, 512>(self.rev1.o.val());
        // ==== Stage A: Ethernet [+ 802.1Q]; both EtherType candidates are
        // compared in parallel with the tag test, then selected.
        self.et_outer.next = self.win.val().get_bits::<16>(912);
        self.et_vlan.next = self.win.val().get_bits::<16>(880);
        self.vlan.next = self.et_outer.val() == 0x8100;
        self.l3.next = self.win.val() << 112;
        self.a_is4.d.next = self.et_outer.val() == 0x0800;
        self.a_is6.d.next = self.et_outer.val() == 0x86DD;
        if self.vlan.val() {
            self.l3.next = self.win.val() << 144;
            self.a_is4.d.next = self.et_vlan.val() == 0x0800;
            self.a_is6.d.next = self.et_vlan.val() == 0x86DD;
        }
        self.a_l3.d.next = self.l3.val();
        self.a_vlan.d.next = self.vlan.val();
        self.a_count.d.next = self.kc.count.val();
        self.a_beat.d.next = self.beat.q.val();
        self.a_v.d.next = self.s_axis.tvalid.val() & self.s_axis.tlast.val();
        // ==== Stage B: frame length, IP fields (IP header at byte 0 of
        // a_l3), the UDP-aligned window, checksum levels 1-2, IP checks.
        self.flen.next = (bit_cast::<18, 12>(self.a_beat.q.val()) << 6) + bit_cast::<18, 7>(self.a_count.q.val());
        self.l3off.next = 14.into();
        if self.a_vlan.q.val() {
            self.l3off.next = 18.into();
        }
        self.ip_avail.next = self.flen.val() - self.l3off.val();
        self.ipver.next = self.a_l3.q.val().get_bits::<4>(1020);
        self.ihl.next = self.a_l3.q.val().get_bits::<4>(1016);
        self.v4_total.next = bit_cast::<18, 16>(self.a_l3.q.val().get_bits::<16>(992));
        self.frag.next = self.a_l3.q.val().get_bit(973) | self.a_l3.q.val().get_bits::<13>(960).any();
        self.v6_plen.next = bit_cast::<18, 16>(self.a_l3.q.val().get_bits::<16>(976));
        self.cs1_0.next = 0.into();
        if self.ihl.val() > 0 {
            self.cs1_0.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(1008))
                + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(992));
        }
        self.cs1_1.next = 0.into();
        if self.ihl.val() > 1 {
            self.cs1_1.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(976))
                + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(960));
        }
        self.cs1_2.next = 0.into();
        if self.ihl.val() > 2 {
            self.cs1_2.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(944))
                + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(928));
        }
        self.cs1_3.next = 0.into();
        if self.ihl.val() > 3 {
            self.cs1_3.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(912))
                + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(896));
        }
        self.cs1_4.next = 0.into();
        if self.ihl.val() > 4 {
            self.cs1_4.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(880))
                + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(864));
        }
        self.cs1_5.next = 0.into();
        if self.ihl.val() > 5 {
            self.cs1_5.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(848))
                + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(832));
        }
        self.cs1_6.next = 0.into();
        if self.ihl.val() > 6 {
            self.cs1_6.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(816))
                + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(800));
        }
        self.cs1_7.next = 0.into();
        if self.ihl.val() > 7 {
            self.cs1_7.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(784))
                + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(768));
        }
        self.cs1_8.next = 0.into();
        if self.ihl.val() > 8 {
            self.cs1_8.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(752))
                + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(736));
        }
        self.cs1_9.next = 0.into();
        if self.ihl.val() > 9 {
            self.cs1_9.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(720))
                + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(704));
        }
        self.cs1_10.next = 0.into();
        if self.ihl.val() > 10 {
            self.cs1_10.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(688))
                + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(672));
        }
        self.cs1_11.next = 0.into();
        if self.ihl.val() > 11 {
            self.cs1_11.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(656))
                + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(640));
        }
        self.cs1_12.next = 0.into();
        if self.ihl.val() > 12 {
            self.cs1_12.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(624))
                + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(608));
        }
        self.cs1_13.next = 0.into();
        if self.ihl.val() > 13 {
            self.cs1_13.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(592))
                + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(576));
        }
        self.cs1_14.next = 0.into();
        if self.ihl.val() > 14 {
            self.cs1_14.next = bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(560))
                + bit_cast::<22, 16>(self.a_l3.q.val().get_bits::<16>(544));
        }
        self.cs2_0.next = self.cs1_0.val() + self.cs1_1.val();
        self.cs2_1.next = self.cs1_2.val() + self.cs1_3.val();
        self.cs2_2.next = self.cs1_4.val() + self.cs1_5.val();
        self.cs2_3.next = self.cs1_6.val() + self.cs1_7.val();
        self.cs2_4.next = self.cs1_8.val() + self.cs1_9.val();
        self.cs2_5.next = self.cs1_10.val() + self.cs1_11.val();
        self.cs2_6.next = self.cs1_12.val() + self.cs1_13.val();
        self.cs2_7.next = self.cs1_14.val();
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
            self.ipproto.next = self.a_l3.q.val().get_bits::<8>(944);
        }
        self.l4.next = self.a_l3.q.val() << self.l4sh.val();
        // Ethernet and IP checks, each an independent bit (stage C applies
        // the golden model's order: the first failure wins).
        self.b_k_eth_short.d.next = self.flen.val() < 14;
        self.b_k_vlan_short.d.next = self.a_vlan.q.val() & (self.flen.val() < 18);
        self.b_k_ethertype.d.next = !(self.a_is4.q.val() | self.a_is6.q.val());
        self.b_k_ip_empty.d.next = self.ip_avail.val() < 1;
        self.b_k_v4_ver.d.next = self.a_is4.q.val() & (self.ipver.val() != 4);
        self.b_k_v6_ver.d.next = self.a_is6.q.val() & (self.ipver.val() != 6);
        self.b_k_v4_short.d.next = self.a_is4.q.val() & (self.ip_avail.val() < 20);
        self.b_k_ihl.d.next = self.a_is4.q.val() & (self.ihl.val() < 5);
        self.b_k_v4_hdr.d.next = self.a_is4.q.val() & (self.ip_avail.val() < self.iphl.val());
        self.b_k_v4_len.d.next = self.a_is4.q.val()
            & ((self.v4_total.val() < self.iphl.val()) | (self.v4_total.val() > self.ip_avail.val()));
        // (the checksum, checked in stage D, comes here in the order)
        self.b_k_frag.d.next = self.a_is4.q.val() & self.frag.val();
        self.b_k_v6_short.d.next = self.a_is6.q.val() & (self.ip_avail.val() < 40);
        self.b_k_v6_len.d.next = self.a_is6.q.val() & (self.v6_plen.val() + 40 > self.ip_avail.val());
        self.b_k_proto.d.next = self.ipproto.val() != 17;
        self.b_cs2_0.d.next = self.cs2_0.val();
        self.b_cs2_1.d.next = self.cs2_1.val();
        self.b_cs2_2.d.next = self.cs2_2.val();
        self.b_cs2_3.d.next = self.cs2_3.val();
        self.b_cs2_4.d.next = self.cs2_4.val();
        self.b_cs2_5.d.next = self.cs2_5.val();
        self.b_cs2_6.d.next = self.cs2_6.val();
        self.b_cs2_7.d.next = self.cs2_7.val();
        self.b_l4.d.next = self.l4.val();
        self.b_is4.d.next = self.a_is4.q.val();
        self.b_is6.d.next = self.a_is6.q.val();
        self.b_vlan.d.next = self.a_vlan.q.val();
        self.b_ip_payload.d.next = self.ip_payload.val();
        self.b_dscp.d.next = self.dscp.val();
        self.b_ecn.d.next = self.ecn.val();
        self.b_flow_lo.d.next = self.a_l3.q.val().get_bits::<16>(992);
        // Where the transport header (BTH) starts in the frame.
        self.b_l4base.d.next = self.l3off.val() + self.iphl.val() + 8;
        self.b_v.d.next = self.a_v.q.val();
        // ==== Stage C: checksum levels 3-5; the first IP failure before
        // and after the checksum; UDP and BTH (UDP at byte 0 of b_l4).
        self.cs3_0.next = self.b_cs2_0.q.val() + self.b_cs2_1.q.val();
        self.cs3_1.next = self.b_cs2_2.q.val() + self.b_cs2_3.q.val();
        self.cs3_2.next = self.b_cs2_4.q.val() + self.b_cs2_5.q.val();
        self.cs3_3.next = self.b_cs2_6.q.val() + self.b_cs2_7.q.val();
        self.cs4_0.next = self.cs3_0.val() + self.cs3_1.val();
        self.cs4_1.next = self.cs3_2.val() + self.cs3_3.val();
        self.cs5_0.next = self.cs4_0.val() + self.cs4_1.val();
        self.reason_ip.next = 0.into();
        if self.b_k_eth_short.q.val() {
            self.reason_ip.next = 1.into();
        } else if self.b_k_vlan_short.q.val() {
            self.reason_ip.next = 1.into();
        } else if self.b_k_ethertype.q.val() {
            self.reason_ip.next = 2.into();
        } else if self.b_k_ip_empty.q.val() {
            self.reason_ip.next = 1.into();
        } else if self.b_k_v4_ver.q.val() {
            self.reason_ip.next = 3.into();
        } else if self.b_k_v6_ver.q.val() {
            self.reason_ip.next = 3.into();
        } else if self.b_k_v4_short.q.val() {
            self.reason_ip.next = 1.into();
        } else if self.b_k_ihl.q.val() {
            self.reason_ip.next = 4.into();
        } else if self.b_k_v4_hdr.q.val() {
            self.reason_ip.next = 1.into();
        } else if self.b_k_v4_len.q.val() {
            self.reason_ip.next = 9.into();
        }
        self.reason_post.next = 0.into();
        if self.b_k_frag.q.val() {
            self.reason_post.next = 6.into();
        } else if self.b_k_v6_short.q.val() {
            self.reason_post.next = 1.into();
        } else if self.b_k_v6_len.q.val() {
            self.reason_post.next = 9.into();
        } else if self.b_k_proto.q.val() {
            self.reason_post.next = 7.into();
        }
        self.dport.next = self.b_l4.q.val().get_bits::<16>(992);
        self.udp_len.next = bit_cast::<18, 16>(self.b_l4.q.val().get_bits::<16>(976));
        self.opcode.next = self.b_l4.q.val().get_bits::<8>(952);
        self.tver.next = self.b_l4.q.val().get_bits::<4>(944);
        self.xbit.next = self.b_l4.q.val().get_bit(894);
        self.op_known.next = false;
        self.has_reth.next = false;
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
            self.at_hdr.next = 32.into();
            self.ext.next = self.b_l4.q.val().get_bits::<224>(480);
            self.imm_c.next = self.b_l4.q.val().get_bits::<32>(704);
        }
        if self.opcode.val() == 0x11 {
            self.op_known.next = true;
            self.is_ack.next = true;
            self.at_hdr.next = 16.into();
            self.ext.next = self.b_l4.q.val().get_bits::<224>(608);
        }
        if self.opcode.val() == 0x81 {
            self.op_known.next = true;
            self.is_cnp.next = true;
            self.at_hdr.next = 28.into();
        }
        self.c_k_udp_short.d.next = self.b_ip_payload.q.val() < 8;
        self.c_k_udp_len.d.next = self.udp_len.val() != self.b_ip_payload.q.val();
        self.c_k_port.d.next = self.dport.val() != 4791;
        self.c_k_udp_bth.d.next = self.udp_len.val() < 24;
        self.c_k_opcode.d.next = !self.op_known.val();
        self.c_k_tver.d.next = self.tver.val() != 0;
        self.c_l4.d.next = self.b_l4.q.val();
        self.c_csum.d.next = self.cs5_0.val();
        self.c_reason_ip.d.next = self.reason_ip.val();
        self.c_reason_post.d.next = self.reason_post.val();
        self.c_ext.d.next = self.ext.val();
        self.c_imm.d.next = self.imm_c.val();
        self.c_at_hdr.d.next = self.at_hdr.val();
        self.c_t_len.d.next = self.udp_len.val() - 12;
        self.c_xbit.d.next = self.xbit.val();
        self.c_is_ack.d.next = self.is_ack.val();
        self.c_has_reth.d.next = self.has_reth.val();
        self.c_is_cnp.d.next = self.is_cnp.val();
        self.c_is4.d.next = self.b_is4.q.val();
        self.c_is6.d.next = self.b_is6.q.val();
        self.c_vlan.d.next = self.b_vlan.q.val();
        self.c_dscp.d.next = self.b_dscp.q.val();
        self.c_ecn.d.next = self.b_ecn.q.val();
        self.c_flow_lo.d.next = self.b_flow_lo.q.val();
        self.c_l4base.d.next = self.b_l4base.q.val();
        self.c_v.d.next = self.b_v.q.val();
        // The split: the same UDP-aligned window goes to the MRC 1.0
        // transport parser (the first 64 bytes after the UDP header); its
        // verdict replaces the legacy transport checks for an opcode of
        // the MRC 1.0 range (stage F), after every encapsulation check
        // and the ICRC, as `mrc10::parse_frame` orders them.
        self.m10_rev.i.next = self.b_l4.q.val().get_bits::<512>(448);
        self.m10.in_data.next = self.m10_rev.o.val();
        self.m10.in_valid.next = self.b_v.q.val();
        self.m10_len.next = self.udp_len.val() - 12;
        self.m10.in_len.next = self.m10_len.val().get_bits::<16>(0);
        self.m10.in_trimmed.next = (self.b_dscp.q.val() == self.k_dscp_trimmed.val())
            | (self.b_dscp.q.val() == self.k_dscp_trimmed_last_hop.val());
        self.c_m10.d.next = self.opcode.val().get_bits::<3>(5) == self.k_m10_range.val();
        // ==== Stage D: fold and check the checksum (ones' complement);
        // the MRC extension (X bit) and the payload bounds.
        self.csum.next = self.c_csum.q.val();
        self.csum.next = bit_cast::<22, 16>(self.csum.val().get_bits::<16>(0)) + (self.csum.val() >> 16);
        self.csum.next = bit_cast::<22, 16>(self.csum.val().get_bits::<16>(0)) + (self.csum.val() >> 16);
        self.d_k_csum.d.next = self.c_is4.q.val() & (self.csum.val() != 0xFFFF);
        self.ext_ver.next = self.c_ext.q.val().get_bits::<4>(220);
        self.ext_type.next = self.c_ext.q.val().get_bits::<4>(216);
        self.ext_b1.next = self.c_ext.q.val().get_bits::<8>(208);
        self.syndrome.next = self.c_l4.q.val().get_bits::<8>(856);
        // Extension length, and how much of it this front end reads (up to
        // 28 bytes: the rest of a SACK bitmap is left to a later stage).
        self.ext_len.next = 0.into();
        self.ext_read.next = 0.into();
        if self.ext_type.val() == 1 {
            if self.c_has_reth.q.val() {
                self.ext_len.next = 16.into();
                self.ext_read.next = 16.into();
            } else {
                self.ext_len.next = 28.into();
                self.ext_read.next = 28.into();
            }
        }
        if self.ext_type.val() == 2 {
            self.ext_len.next = 28.into();
            self.ext_read.next = 28.into();
            if self.ext_b1.val().get_bits::<2>(0) == 1 {
                self.ext_len.next = 36.into();
            }
            if self.ext_b1.val().get_bits::<2>(0) == 2 {
                self.ext_len.next = 52.into();
            }
        }
        if self.ext_type.val() == 3 {
            self.ext_len.next = 12.into();
            self.ext_read.next = 12.into();
        }
        if self.ext_type.val() == 4 {
            self.ext_len.next = 16.into();
            self.ext_read.next = 16.into();
        }
        // Where the headers end (transport-relative) and where this front
        // end stops reading (frame-relative); the subtractions and compares
        // on them are stage E's.
        self.d_at_end.d.next = self.c_at_hdr.q.val();
        self.d_read_end.d.next = self.c_l4base.q.val() + self.c_at_hdr.q.val();
        if self.c_xbit.q.val() {
            self.d_at_end.d.next = self.c_at_hdr.q.val() + self.ext_len.val();
            self.d_read_end.d.next = self.c_l4base.q.val() + self.c_at_hdr.q.val() + self.ext_read.val();
        }
        self.d_pad_eff.d.next = bit_cast::<18, 2>(self.c_l4.q.val().get_bits::<2>(948));
        if self.c_dscp.q.val() == 59 {
            self.d_pad_eff.d.next = 0.into();
        }
        self.d_k_t_short.d.next = self.c_t_len.q.val() < self.c_at_hdr.q.val();
        self.d_k_x_cnp.d.next = self.c_xbit.q.val() & self.c_is_cnp.q.val();
        self.d_k_x_short.d.next = self.c_xbit.q.val() & (self.c_t_len.q.val() < self.c_at_hdr.q.val() + 2);
        self.d_k_ext_ver.d.next = self.c_xbit.q.val() & (self.ext_ver.val() != 1);
        self.d_k_sack_width.d.next =
            self.c_xbit.q.val() & (self.ext_type.val() == 2) & (self.ext_b1.val().get_bits::<2>(0) == 3);
        self.d_k_ext_type.d.next = self.c_xbit.q.val() & ((self.ext_type.val() == 0) | (self.ext_type.val() > 4));
        self.d_k_ext_mismatch.d.next = self.c_xbit.q.val() & (self.c_is_ack.q.val() != (self.ext_type.val() != 1));
        self.d_k_nack_kind.d.next =
            self.c_xbit.q.val() & (self.ext_type.val() == 3) & ((self.ext_b1.val() == 0) | (self.ext_b1.val() > 3));
        self.d_k_nack_syndrome.d.next = self.c_xbit.q.val()
            & (self.ext_type.val() == 3)
            & (((self.ext_b1.val() == 3) & (self.syndrome.val().get_bits::<7>(0) != 0x62))
                | ((self.ext_b1.val() != 3) & (self.syndrome.val().get_bits::<7>(0) != 0x60)));
        self.d_k_sack_syndrome.d.next = self.c_xbit.q.val()
            & ((self.ext_type.val() == 2) | (self.ext_type.val() == 4))
            & (self.syndrome.val().get_bits::<2>(5) != 0);
        self.d_l4.d.next = self.c_l4.q.val();
        self.d_reason_ip.d.next = self.c_reason_ip.q.val();
        self.d_reason_post.d.next = self.c_reason_post.q.val();
        self.d_ext.d.next = self.c_ext.q.val();
        self.d_imm.d.next = self.c_imm.q.val();
        self.d_xbit.d.next = self.c_xbit.q.val();
        self.d_t_len.d.next = self.c_t_len.q.val();
        self.d_k_udp_short.d.next = self.c_k_udp_short.q.val();
        self.d_k_udp_len.d.next = self.c_k_udp_len.q.val();
        self.d_k_port.d.next = self.c_k_port.q.val();
        self.d_k_udp_bth.d.next = self.c_k_udp_bth.q.val();
        self.d_k_opcode.d.next = self.c_k_opcode.q.val();
        self.d_k_tver.d.next = self.c_k_tver.q.val();
        self.d_is6.d.next = self.c_is6.q.val();
        self.d_vlan.d.next = self.c_vlan.q.val();
        self.d_dscp.d.next = self.c_dscp.q.val();
        self.d_ecn.d.next = self.c_ecn.q.val();
        self.d_flow_lo.d.next = self.c_flow_lo.q.val();
        self.d_v.d.next = self.c_v.q.val();
        self.d_m10.d.next = self.c_m10.q.val();
        self.d_l4base.d.next = self.c_l4base.q.val();
        // ==== Stage E: the payload bounds and the length checks on them.
        self.remaining.next = self.d_t_len.q.val() - self.d_at_end.q.val();
        self.e_remaining.d.next = self.remaining.val();
        self.e_hdr_end.d.next = self.d_l4base.q.val() + self.d_at_end.q.val();
        self.e_k_ext_short.d.next = self.d_xbit.q.val() & (self.d_t_len.q.val() < self.d_at_end.q.val());
        self.e_k_pad.d.next = self.d_pad_eff.q.val() > self.remaining.val();
        self.e_k_window.d.next = self.d_read_end.q.val() > 128;
        self.e_k_udp_short.d.next = self.d_k_udp_short.q.val();
        self.e_k_udp_len.d.next = self.d_k_udp_len.q.val();
        self.e_k_port.d.next = self.d_k_port.q.val();
        self.e_k_udp_bth.d.next = self.d_k_udp_bth.q.val();
        self.e_k_opcode.d.next = self.d_k_opcode.q.val();
        self.e_k_tver.d.next = self.d_k_tver.q.val();
        self.e_k_t_short.d.next = self.d_k_t_short.q.val();
        self.e_k_x_cnp.d.next = self.d_k_x_cnp.q.val();
        self.e_k_x_short.d.next = self.d_k_x_short.q.val();
        self.e_k_ext_ver.d.next = self.d_k_ext_ver.q.val();
        self.e_k_sack_width.d.next = self.d_k_sack_width.q.val();
        self.e_k_ext_type.d.next = self.d_k_ext_type.q.val();
        self.e_k_ext_mismatch.d.next = self.d_k_ext_mismatch.q.val();
        self.e_k_nack_kind.d.next = self.d_k_nack_kind.q.val();
        self.e_k_nack_syndrome.d.next = self.d_k_nack_syndrome.q.val();
        self.e_k_sack_syndrome.d.next = self.d_k_sack_syndrome.q.val();
        self.e_l4.d.next = self.d_l4.q.val();
        self.e_reason_ip.d.next = self.d_reason_ip.q.val();
        self.e_reason_post.d.next = self.d_reason_post.q.val();
        self.e_k_csum.d.next = self.d_k_csum.q.val();
        self.e_ext.d.next = self.d_ext.q.val();
        self.e_imm.d.next = self.d_imm.q.val();
        self.e_xbit.d.next = self.d_xbit.q.val();
        self.e_pad_eff.d.next = self.d_pad_eff.q.val();
        self.e_is6.d.next = self.d_is6.q.val();
        self.e_vlan.d.next = self.d_vlan.q.val();
        self.e_dscp.d.next = self.d_dscp.q.val();
        self.e_ecn.d.next = self.d_ecn.q.val();
        self.e_flow_lo.d.next = self.d_flow_lo.q.val();
        self.e_v.d.next = self.d_v.q.val();
        // ==== Stage E, MRC 1.0: the parser's record for this frame is on
        // its outputs; it is written into the legacy record (`translate`).
        self.e_opcode.d.next = self.d_l4.q.val().get_bits::<8>(952);
        self.e_psn.d.next = self.d_l4.q.val().get_bits::<24>(864);
        self.e_reth_va.d.next = self.d_l4.q.val().get_bits::<64>(800);
        self.e_reth_rkey.d.next = self.d_l4.q.val().get_bits::<32>(768);
        self.e_reth_len.d.next = self.d_l4.q.val().get_bits::<32>(736);
        self.e_m10.d.next = self.d_m10.q.val();
        // Where the chain ends in the frame; past the window (long IPv4
        // options, or an EETH behind IPv6 + 802.1Q) the parser read zeros
        // there, so an accepted chain is dropped as the legacy one is.
        self.m10_end.next = self.d_l4base.q.val() + bit_cast::<18, 7>(self.m10.out_hdr.val().payload_off);
        self.e_m10_reason.d.next = self.m10.out_reason.val();
        if !self.m10.out_reason.val().any() & (self.m10_end.val() > 128) {
            self.e_m10_reason.d.next = 31.into();
        }
        // The bitmap bases, both computed (no operand mux before the
        // adders): the cumulative PSN plus the signed SACK offset; for a
        // positive ACK (no bitmap), the PSN after the acknowledged one, as
        // the golden requester takes it.
        self.e_m10_hdr.d.next = self.m10.out_hdr.val();
        self.m10_off16.next = self.m10.out_hdr.val().sack_offset;
        self.m10_base_off.next = bit_cast::<24, 16>(self.m10_off16.val());
        if self.m10_off16.val().get_bit(15) {
            self.m10_base_off.next = bit_cast::<24, 16>(self.m10_off16.val()) | self.k_sext16.val();
        }
        self.e_m10_base_sack.d.next = self.m10.out_hdr.val().ctl_psn + self.m10_base_off.val();
        self.e_m10_base_ack.d.next = self.m10.out_hdr.val().psn + self.k_one24.val();
        // MRC 1.0 echoes are 16 bits of 64 ns (ns bits 21-6, as the TX
        // path stamps them; `tx_path::mrc10_wire::TS_UNIT_SHIFT`): take
        // the time's bits 31-22 with them, or those of the previous wrap
        // when the echo lies above the time's own 16 bits. Exact for an
        // echo less than 2^22 ns (4.2 ms) old; the TX path's send times
        // are kept at the same 64 ns grain, so a NACK's echo equals its
        // slot's send time.
        self.now_q.d.next = self.now_ns.val();
        self.now_hi_m1.d.next = self.now_ns.val().get_bits::<10>(22) - 1;
        self.m10_echo16.next = self.m10.out_hdr.val().nack_ts;
        if self.m10.out_hdr.val().is_sack {
            self.m10_echo16.next = self.m10.out_hdr.val().echo_ts;
        }
        self.m10_echo_hi.next = self.now_q.q.val().get_bits::<10>(22);
        if self.m10_echo16.val() > self.now_q.q.val().get_bits::<16>(6) {
            self.m10_echo_hi.next = self.now_hi_m1.q.val();
        }
        self.e_m10_echo.d.next =
            (bit_cast::<32, 10>(self.m10_echo_hi.val()) << 22) | (bit_cast::<32, 16>(self.m10_echo16.val()) << 6);
        if self.d_m10.q.val() {
            self.e_xbit.d.next = true;
            self.e_imm.d.next = self.m10.out_hdr.val().imm;
            self.e_reth_va.d.next = self.m10.out_hdr.val().va;
            self.e_reth_rkey.d.next = self.m10.out_hdr.val().rkey;
            self.e_reth_len.d.next = self.m10.out_hdr.val().dma_len;
            self.e_remaining.d.next = bit_cast::<18, 16>(self.m10.out_hdr.val().payload_len);
            self.e_pad_eff.d.next = 0.into();
            self.e_hdr_end.d.next = self.m10_end.val();
            // WRITE 0xC6-0xCB are the legacy 0x06-0x0B in the same order;
            // the control opcodes become the legacy ACK; the endpoint
            // operations keep theirs (the RX path counts them as other).
            self.e_opcode.d.next = self.m10.out_hdr.val().opcode;
            if self.m10.out_hdr.val().is_write {
                self.e_opcode.d.next = bit_cast::<8, 6>(bit_cast::<6, 8>(self.m10.out_hdr.val().opcode));
            }
            if self.m10.out_hdr.val().is_ack
                | self.m10.out_hdr.val().is_sack
                | self.m10.out_hdr.val().is_nack
                | self.m10.out_hdr.val().is_probe
            {
                self.e_opcode.d.next = self.k_legacy_ack.val();
            }
            // The cumulative ACK PSN (SETH) or the NACK PSN (NETH).
            if self.m10.out_hdr.val().is_sack | self.m10.out_hdr.val().is_nack {
                self.e_psn.d.next = self.m10.out_hdr.val().ctl_psn;
            }
        }
        // ==== Stage F: the first failure in the golden model's order (a
        // priority encoder over registered bits), then the record.
        self.reason_f.next = 0.into();
        if self.e_reason_ip.q.val() != 0 {
            self.reason_f.next = self.e_reason_ip.q.val();
        } else if self.e_k_csum.q.val() {
            self.reason_f.next = 5.into();
        } else if self.e_reason_post.q.val() != 0 {
            self.reason_f.next = self.e_reason_post.q.val();
        } else if self.e_k_udp_short.q.val() {
            self.reason_f.next = 1.into();
        } else if self.e_k_udp_len.q.val() {
            self.reason_f.next = 9.into();
        } else if self.e_k_port.q.val() {
            self.reason_f.next = 8.into();
        } else if self.e_k_udp_bth.q.val() {
            self.reason_f.next = 1.into();
        } else if !self.icrc.out_ok.val() {
            self.reason_f.next = 19.into();
        } else if self.e_m10.q.val() {
            // MRC 1.0: its parser's verdict (0 = accepted).
            self.reason_f.next = self.e_m10_reason.q.val();
        } else if self.e_k_opcode.q.val() {
            self.reason_f.next = 10.into();
        } else if self.e_k_tver.q.val() {
            self.reason_f.next = 11.into();
        } else if self.e_k_t_short.q.val() {
            self.reason_f.next = 1.into();
        } else if self.e_k_x_cnp.q.val() {
            self.reason_f.next = 17.into();
        } else if self.e_k_x_short.q.val() {
            self.reason_f.next = 1.into();
        } else if self.e_k_ext_ver.q.val() {
            self.reason_f.next = 14.into();
        } else if self.e_k_sack_width.q.val() {
            self.reason_f.next = 15.into();
        } else if self.e_k_ext_type.q.val() {
            self.reason_f.next = 13.into();
        } else if self.e_k_ext_mismatch.q.val() {
            self.reason_f.next = 17.into();
        } else if self.e_k_ext_short.q.val() {
            self.reason_f.next = 1.into();
        } else if self.e_k_nack_kind.q.val() {
            self.reason_f.next = 16.into();
        } else if self.e_k_nack_syndrome.q.val() {
            self.reason_f.next = 18.into();
        } else if self.e_k_sack_syndrome.q.val() {
            self.reason_f.next = 18.into();
        } else if self.e_k_pad.q.val() {
            self.reason_f.next = 12.into();
        } else if self.e_k_window.q.val() {
            self.reason_f.next = 31.into();
        }
        // ==== Stage F, MRC 1.0: the legacy extension bytes its headers
        // are written into (`translate`), from stage E's registered word.
        // Legacy extension bytes 0 (version, type), 1 (NACK kind), 2-3
        // (EV), 8-11 (echoed timestamp), 16-27 (placement block, or SACK
        // base and bitmap).
        self.m10_syn.next = self.e_m10_hdr.q.val().syndrome;
        self.m10_ext_b0.next = 0.into();
        self.m10_ext_b1.next = 0.into();
        self.m10_ext_ev.next = 0.into();
        self.m10_ext_ev_index.next = 0.into();
        self.m10_ext_echo.next = 0.into();
        self.m10_ext_lo.next = 0.into();
        self.m10_ext_cc.next = 0.into();
        self.m10_ext_off.next = 0.into();
        if self.e_m10_hdr.q.val().is_write {
            // MRC 1.0 data carries no EV index (the EV is the UDP source
            // port, `out_ev`): 0. The echo is the TSETH's, 0 without one.
            self.m10_ext_b0.next = self.k_ext_data.val();
            if self.e_m10_hdr.q.val().ts {
                self.m10_ext_echo.next = bit_cast::<32, 16>(self.e_m10_hdr.q.val().tx_ts);
            }
            // The RETH is on every packet: its VA is this packet's, the
            // legacy placement block's meaning.
            self.m10_ext_lo.next =
                (bit_cast::<96, 64>(self.e_m10_hdr.q.val().va) << 32) | bit_cast::<96, 32>(self.e_m10_hdr.q.val().rkey);
        }
        if self.e_m10_hdr.q.val().is_sack | self.e_m10_hdr.q.val().is_nack {
            // The EV of the packet acknowledged (SETH / NETH), its low 16
            // bits where the legacy extension has the EV index.
            self.m10_ext_ev.next = bit_cast::<16, 32>(self.e_m10_hdr.q.val().ctl_ev);
        }
        if self.e_m10_hdr.q.val().is_sack {
            self.m10_ext_b0.next = self.k_ext_sack.val();
            if self.e_m10_hdr.q.val().probe_response {
                // The answer to our probe of the EV whose index it names.
                self.m10_ext_b0.next = self.k_ext_probe_answer.val();
                self.m10_ext_ev_index.next = self.e_m10_hdr.q.val().ack_psn_offset;
            } else {
                // Congestion feedback (`translate::SACK_CC_RESTORE`); a
                // probe answer carries none the requester takes.
                // And its trigger (`translate::SACK_CC_TRIGGER`).
                self.m10_ext_ev_index.next = bit_cast::<16, 4>(self.e_m10_hdr.q.val().ctl_cc_flags);
                self.m10_ext_cc.next = bit_cast::<16, 7>(self.e_m10_hdr.q.val().cwnd_penalty) | self.k_cc_trigger.val();
                if self.e_m10_hdr.q.val().restore {
                    self.m10_ext_cc.next = bit_cast::<16, 7>(self.e_m10_hdr.q.val().cwnd_penalty)
                        | self.k_cc_trigger.val()
                        | self.k_cc_restore.val();
                }
                self.m10_ext_off.next = self.e_m10_hdr.q.val().ack_psn_offset;
            }
            self.m10_ext_echo.next = self.e_m10_echo.q.val();
            self.m10_ext_lo.next = (bit_cast::<96, 24>(self.e_m10_base_sack.q.val()) << 64)
                | bit_cast::<96, 64>(self.e_m10_hdr.q.val().bitmap);
        }
        if self.e_m10_hdr.q.val().is_ack {
            if !self.m10_syn.val().get_bits::<2>(5).any() {
                self.m10_ext_b0.next = self.k_ext_sack.val();
                self.m10_ext_lo.next = bit_cast::<96, 24>(self.e_m10_base_ack.q.val()) << 64;
                self.m10_ext_cc.next = self.k_cc_no_sample.val();
            } else if self.m10_syn.val().get_bits::<7>(0) == self.k_syn_remote.val() {
                self.m10_ext_b0.next = self.k_ext_nack.val();
                self.m10_ext_b1.next = self.k_kind_remote.val();
            }
        }
        if self.e_m10_hdr.q.val().is_nack {
            self.m10_ext_b0.next = self.k_ext_nack.val();
            self.m10_ext_b1.next = self.k_kind_oow.val();
            if (self.e_m10_hdr.q.val().nack_reason == self.k_reason_trimmed.val())
                | (self.e_m10_hdr.q.val().nack_reason == self.k_reason_trimmed_last_hop.val())
            {
                self.m10_ext_b1.next = self.k_kind_trimmed.val();
            }
            self.m10_ext_echo.next = self.e_m10_echo.q.val();
        }
        if self.e_m10_hdr.q.val().is_probe {
            // What the answer carries back: the probe id and timestamp.
            self.m10_ext_b0.next = self.k_ext_mrc10_probe.val();
            self.m10_ext_ev.next = self.e_m10_hdr.q.val().probe_id;
            self.m10_ext_echo.next = bit_cast::<32, 16>(self.e_m10_hdr.q.val().probe_ts);
        }
        self.m10_ext.next = (bit_cast::<224, 8>(self.m10_ext_b0.val()) << 216)
            | (bit_cast::<224, 8>(self.m10_ext_b1.val()) << 208)
            | (bit_cast::<224, 16>(self.m10_ext_ev.val()) << 192)
            | (bit_cast::<224, 16>(self.m10_ext_ev_index.val()) << 176)
            | (bit_cast::<224, 16>(self.m10_ext_cc.val()) << 160)
            | (bit_cast::<224, 32>(self.m10_ext_echo.val()) << 128)
            | (bit_cast::<224, 16>(self.m10_ext_off.val()) << 112)
            | bit_cast::<224, 96>(self.m10_ext_lo.val());
        self.r_valid.d.next = false;
        self.r_drop.d.next = false;
        if self.e_v.q.val() {
            self.r_valid.d.next = self.reason_f.val() == 0;
            self.r_drop.d.next = self.reason_f.val() != 0;
            self.r_reason.d.next = self.reason_f.val();
            self.r_ipv6.d.next = self.e_is6.q.val();
            self.r_vlan.d.next = self.e_vlan.q.val();
            self.r_ecn_ce.d.next = self.e_ecn.q.val() == 3;
            self.r_trimmed.d.next = (self.e_dscp.q.val() == self.k_dscp_trimmed.val())
                | (self.e_m10.q.val() & (self.e_dscp.q.val() == self.k_dscp_trimmed_last_hop.val()));
            self.r_mrc10.d.next = self.e_m10.q.val();
            self.r_skip.d.next = self.e_m10.q.val()
                & ((self.e_m10_hdr.q.val().is_nack
                    & (self.e_m10_hdr.q.val().nack_reason == self.k_reason_trimmed.val()))
                    | (self.e_m10_hdr.q.val().is_sack
                        & !self.e_m10_hdr.q.val().probe_response
                        & (self.e_m10_hdr.q.val().skip_mode == self.k_skip_once.val())));
            self.r_always_skip.d.next = self.e_m10.q.val()
                & self.e_m10_hdr.q.val().is_sack
                & !self.e_m10_hdr.q.val().probe_response
                & (self.e_m10_hdr.q.val().skip_mode == self.k_always_skip.val());
            self.r_ev.d.next = bit_cast::<32, 16>(self.e_l4.q.val().get_bits::<16>(1008));
            if self.e_is6.q.val() {
                self.r_ev.d.next = (bit_cast::<32, 16>(self.e_flow_lo.q.val()) << 16)
                    | bit_cast::<32, 16>(self.e_l4.q.val().get_bits::<16>(1008));
            }
            self.r_opcode.d.next = self.e_opcode.q.val();
            self.r_se.d.next = self.e_l4.q.val().get_bit(951);
            self.r_mig.d.next = self.e_l4.q.val().get_bit(950);
            self.r_pad.d.next = self.e_l4.q.val().get_bits::<2>(948);
            self.r_pkey.d.next = self.e_l4.q.val().get_bits::<16>(928);
            self.r_fecn.d.next = self.e_l4.q.val().get_bit(927);
            self.r_becn.d.next = self.e_l4.q.val().get_bit(926);
            self.r_dest_qp.d.next = self.e_l4.q.val().get_bits::<24>(896);
            self.r_ack_req.d.next = self.e_l4.q.val().get_bit(895);
            self.r_xbit.d.next = self.e_xbit.q.val();
            self.r_psn.d.next = self.e_psn.q.val();
            self.r_reth_va.d.next = self.e_reth_va.q.val();
            self.r_reth_rkey.d.next = self.e_reth_rkey.q.val();
            self.r_reth_len.d.next = self.e_reth_len.q.val();
            self.r_imm.d.next = self.e_imm.q.val();
            self.r_aeth_syndrome.d.next = self.e_l4.q.val().get_bits::<8>(856);
            self.r_aeth_msn.d.next = self.e_l4.q.val().get_bits::<24>(832);
            self.r_ext.d.next = self.e_ext.q.val();
            if self.e_m10.q.val() {
                self.r_ext.d.next = self.m10_ext.val();
            }
            self.r_payload_off.d.next = self.e_hdr_end.q.val();
            self.r_payload_len.d.next = self.e_remaining.q.val() - self.e_pad_eff.q.val();
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
        self.out_mrc10.next = self.r_mrc10.q.val();
        self.out_skip.next = self.r_skip.q.val();
        self.out_always_skip.next = self.r_always_skip.q.val();
    }
}
