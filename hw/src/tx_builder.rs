//! TX header builder (deparser): one header request record plus the
//! payload stream in, one Ethernet frame out on the MAC TX AXI-Stream,
//! byte-identical to `proto::wire::emit_frame` (plus an optional 802.1Q
//! tag). See `docs/hw/tx_builder.md`.
//!
//! Pipeline (every stage moves together when the output may move:
//! `adv = !out_valid | tx_tready`):
//! * R1: the request record, registered as taken, with its transport
//!   header length, UDP length and request checks.
//! * R2: the generator's packet: both header images (the wire bytes and
//!   the ICRC view, where the variant fields are all-ones and the
//!   Ethernet header is zero but for the four bytes before the IP header,
//!   which stand for the all-ones CRC seed), the IPv4 checksum, the byte
//!   positions. The generator emits beat `k` of the frame per cycle:
//!   header lanes from the header image, payload lanes from the current
//!   and previous payload beats shifted by `H mod 64`, pad and ICRC lanes
//!   zero.
//! * P1 (beat), P2 (ICRC view right-aligned on the last covered byte),
//!   P3 (`crc0` of the view; the state loop `S = M_64 S ^ D` runs here),
//!   F1-F4 (`M_n S ^ D` of the last covered beat, two conditional matrix
//!   steps per stage), OUT (ICRC bytes ORed in; the bytes past lane 63 are
//!   kept for the next beat).

use rust_hdl::prelude::*;

use crate::bus::{AxisSink, AxisSource};

use crate::crc32::{CrcAdvance, CrcBlock};
use crate::param::Param;
use crate::rx_parser::ByteRev;
use crate::rx_parser_mrc10::{
    chain as mrc10_chain, WINDOW_BITS as MRC10_WINDOW_BITS, WINDOW_BYTES as MRC10_WINDOW_BYTES,
};

/// MRC 1.0 requests (`req_mrc10`): where the transport's length is
/// checked, and the opcode range of the dialect (bits 7-5 = 0b110,
/// `hw::rx_parser::translate::MRC10_RANGE`).
pub mod mrc10_req {
    /// BTH byte 4 (FECN, BECN, reserved): all-ones in the ICRC view.
    pub const BTH_B4_BYTE: usize = 4;
    /// UDP header + ICRC: the part of the UDP length besides the
    /// transport headers, payload and pad.
    pub const UDP_AND_ICRC: u64 = 12;
    /// Opcode bits 7-5 of every MRC 1.0 opcode.
    pub const OPCODE_CLASS: u64 = 0b110;
    /// Lowest bit of BTH byte 4 in the big-endian transport word.
    pub const BTH_B4_LSB: usize = super::MRC10_WINDOW_BITS - 8 * (BTH_B4_BYTE + 1);
}
// `update()` spells these as literals (hdl_gen takes no const paths there).
const _: () = assert!(mrc10_req::BTH_B4_LSB == 472 && MRC10_WINDOW_BITS == 512);
// The transport word sits at the top of the image's 544-bit transport.
const _: () = assert!(544 - MRC10_WINDOW_BITS == 32);

/// The header image of one frame, big-endian (frame byte 0 in bits
/// 1535-1528), from fields given as they go on the wire. The builder runs
/// it twice: with the real fields, and with the ICRC's masked ones.
#[derive(LogicBlock, Default)]
pub struct HeaderImage {
    pub dst_mac: Signal<In, Bits<48>>,
    pub src_mac: Signal<In, Bits<48>>,
    pub vlan: Signal<In, Bit>,
    pub tpid: Signal<In, Bits<16>>,
    pub tci: Signal<In, Bits<16>>,
    pub ethertype: Signal<In, Bits<16>>,
    pub ipv6: Signal<In, Bit>,
    pub tos: Signal<In, Bits<8>>,
    pub ttl: Signal<In, Bits<8>>,
    pub v4_total: Signal<In, Bits<16>>,
    pub v4_csum: Signal<In, Bits<16>>,
    /// IPv6 traffic class and flow label (the low 28 bits of word 0).
    pub v6_tc_flow: Signal<In, Bits<28>>,
    pub src_ip: Signal<In, Bits<128>>,
    pub dst_ip: Signal<In, Bits<128>>,
    pub udp_sport: Signal<In, Bits<16>>,
    pub udp_len: Signal<In, Bits<16>>,
    pub udp_csum: Signal<In, Bits<16>>,
    pub opcode: Signal<In, Bits<8>>,
    pub bth_b1: Signal<In, Bits<8>>,
    pub pkey: Signal<In, Bits<16>>,
    pub bth_b4: Signal<In, Bits<8>>,
    pub dest_qp: Signal<In, Bits<24>>,
    pub bth_b8: Signal<In, Bits<8>>,
    pub psn: Signal<In, Bits<24>>,
    pub reth: Signal<In, Bits<128>>,
    pub imm: Signal<In, Bits<32>>,
    pub aeth: Signal<In, Bits<32>>,
    pub ext: Signal<In, Bits<416>>,
    /// MRC 1.0: the transport headers are `transport` (big-endian, byte 0
    /// in bits 511-504), not the legacy fields.
    pub mrc10: Signal<In, Bit>,
    pub transport: Signal<In, Bits<MRC10_WINDOW_BITS>>,
    pub hdr: Signal<Out, Bits<1536>>,
    bth: Signal<Local, Bits<96>>,
    t: Signal<Local, Bits<544>>,
    ip4: Signal<Local, Bits<160>>,
    ip6: Signal<Local, Bits<320>>,
    udp: Signal<Local, Bits<64>>,
    l3: Signal<Local, Bits<1024>>,
    eth14: Signal<Local, Bits<112>>,
    eth18: Signal<Local, Bits<144>>,
    ver_ihl: Signal<Local, Bits<8>>,
    flags_df: Signal<Local, Bits<8>>,
    proto_udp: Signal<Local, Bits<8>>,
    ver6: Signal<Local, Bits<4>>,
    roce_port: Signal<Local, Bits<16>>,
}

impl Logic for HeaderImage {
    #[hdl_gen]
    fn update(&mut self) {
        self.bth.next = (bit_cast::<96, 8>(self.opcode.val()) << 88)
            | (bit_cast::<96, 8>(self.bth_b1.val()) << 80)
            | (bit_cast::<96, 16>(self.pkey.val()) << 64)
            | (bit_cast::<96, 8>(self.bth_b4.val()) << 56)
            | (bit_cast::<96, 24>(self.dest_qp.val()) << 32)
            | (bit_cast::<96, 8>(self.bth_b8.val()) << 24)
            | bit_cast::<96, 24>(self.psn.val());
        // Transport headers, BTH at byte 0; the extension follows the
        // opcode's fixed headers (at byte 12, 16, 28 or 32).
        self.t.next = (bit_cast::<544, 96>(self.bth.val()) << 448) | (bit_cast::<544, 416>(self.ext.val()) << 32);
        if (self.opcode.val() == 0x06) | (self.opcode.val() == 0x0A) {
            self.t.next = (bit_cast::<544, 96>(self.bth.val()) << 448)
                | (bit_cast::<544, 128>(self.reth.val()) << 320)
                | (bit_cast::<544, 416>(self.ext.val()) >> 96);
        }
        if self.opcode.val() == 0x0B {
            self.t.next = (bit_cast::<544, 96>(self.bth.val()) << 448)
                | (bit_cast::<544, 128>(self.reth.val()) << 320)
                | (bit_cast::<544, 32>(self.imm.val()) << 288)
                | (bit_cast::<544, 416>(self.ext.val()) >> 128);
        }
        if self.opcode.val() == 0x09 {
            self.t.next = (bit_cast::<544, 96>(self.bth.val()) << 448)
                | (bit_cast::<544, 32>(self.imm.val()) << 416)
                | bit_cast::<544, 416>(self.ext.val());
        }
        if self.opcode.val() == 0x11 {
            self.t.next = (bit_cast::<544, 96>(self.bth.val()) << 448)
                | (bit_cast::<544, 32>(self.aeth.val()) << 416)
                | bit_cast::<544, 416>(self.ext.val());
        }
        if self.opcode.val() == 0x81 {
            // CNP: 16 reserved zero bytes, never an extension.
            self.t.next = bit_cast::<544, 96>(self.bth.val()) << 448;
        }
        if self.mrc10.val() {
            // MRC 1.0: the chain as `mrc_tx_header_mrc10` wrote it (zero
            // past its end), at most 64 bytes.
            self.t.next = bit_cast::<544, 512>(self.transport.val()) << 32;
        }
        self.ver_ihl.next = 0x45.into();
        self.flags_df.next = 0x40.into();
        self.proto_udp.next = 17.into();
        self.ver6.next = 6.into();
        self.roce_port.next = 4791.into();
        // IPv4: version 4, IHL 5, identification 0, DF, protocol UDP.
        self.ip4.next = (bit_cast::<160, 8>(self.tos.val()) << 144)
            | (bit_cast::<160, 16>(self.v4_total.val()) << 128)
            | (bit_cast::<160, 8>(self.ttl.val()) << 88)
            | (bit_cast::<160, 16>(self.v4_csum.val()) << 64)
            | (bit_cast::<160, 32>(self.src_ip.val().get_bits::<32>(0)) << 32)
            | bit_cast::<160, 32>(self.dst_ip.val().get_bits::<32>(0))
            | (bit_cast::<160, 8>(self.ver_ihl.val()) << 152)
            | (bit_cast::<160, 8>(self.flags_df.val()) << 104)
            | (bit_cast::<160, 8>(self.proto_udp.val()) << 80);
        // IPv6: version 6, next header UDP, hop limit from the TTL field.
        self.ip6.next = (bit_cast::<320, 28>(self.v6_tc_flow.val()) << 288)
            | (bit_cast::<320, 4>(self.ver6.val()) << 316)
            | (bit_cast::<320, 16>(self.udp_len.val()) << 272)
            | (bit_cast::<320, 8>(self.proto_udp.val()) << 264)
            | (bit_cast::<320, 8>(self.ttl.val()) << 256)
            | (bit_cast::<320, 128>(self.src_ip.val()) << 128)
            | bit_cast::<320, 128>(self.dst_ip.val());
        self.udp.next = (bit_cast::<64, 16>(self.udp_sport.val()) << 48)
            | (bit_cast::<64, 16>(self.roce_port.val()) << 32)
            | (bit_cast::<64, 16>(self.udp_len.val()) << 16)
            | bit_cast::<64, 16>(self.udp_csum.val());
        // IP, UDP and transport, IP at the top.
        if self.ipv6.val() {
            self.l3.next = (bit_cast::<1024, 320>(self.ip6.val()) << 704)
                | (bit_cast::<1024, 64>(self.udp.val()) << 640)
                | (bit_cast::<1024, 544>(self.t.val()) << 96);
        } else {
            self.l3.next = (bit_cast::<1024, 160>(self.ip4.val()) << 864)
                | (bit_cast::<1024, 64>(self.udp.val()) << 800)
                | (bit_cast::<1024, 544>(self.t.val()) << 256);
        }
        self.eth14.next = (bit_cast::<112, 48>(self.dst_mac.val()) << 64)
            | (bit_cast::<112, 48>(self.src_mac.val()) << 16)
            | bit_cast::<112, 16>(self.ethertype.val());
        self.eth18.next = (bit_cast::<144, 48>(self.dst_mac.val()) << 96)
            | (bit_cast::<144, 48>(self.src_mac.val()) << 48)
            | (bit_cast::<144, 16>(self.tpid.val()) << 32)
            | (bit_cast::<144, 16>(self.tci.val()) << 16)
            | bit_cast::<144, 16>(self.ethertype.val());
        if self.vlan.val() {
            self.hdr.next =
                (bit_cast::<1536, 144>(self.eth18.val()) << 1392) | (bit_cast::<1536, 1024>(self.l3.val()) << 368);
        } else {
            self.hdr.next =
                (bit_cast::<1536, 112>(self.eth14.val()) << 1424) | (bit_cast::<1536, 1024>(self.l3.val()) << 400);
        }
    }
}

/// The builder. Request record on `req_*` (taken at an edge where
/// `req_valid` and `req_ready` are high), payload on `pl_*`, frame on
/// `tx_*`.
#[derive(LogicBlock, Default)]
pub struct TxBuilder {
    pub clock: Signal<In, Clock>,
    // ---- Header request record (mirrors the RX parser's out_* record).
    pub req_valid: Signal<In, Bit>,
    pub req_ready: Signal<Out, Bit>,
    pub req_dst_mac: Signal<In, Bits<48>>,
    pub req_src_mac: Signal<In, Bits<48>>,
    pub req_vlan: Signal<In, Bit>,
    /// 802.1Q tag control (PCP, DEI, VID) when `req_vlan`.
    pub req_vlan_tci: Signal<In, Bits<16>>,
    pub req_ipv6: Signal<In, Bit>,
    /// IPv4 addresses in bits 31-0.
    pub req_src_ip: Signal<In, Bits<128>>,
    pub req_dst_ip: Signal<In, Bits<128>>,
    pub req_dscp: Signal<In, Bits<6>>,
    pub req_ecn: Signal<In, Bits<2>>,
    /// IPv4 TTL or IPv6 hop limit.
    pub req_ttl: Signal<In, Bits<8>>,
    /// Entropy value: bits 15-0 the UDP source port, bits 31-16 the IPv6
    /// flow label (IPv4 carries bits 15-0 only).
    pub req_ev: Signal<In, Bits<32>>,
    pub req_opcode: Signal<In, Bits<8>>,
    pub req_se: Signal<In, Bit>,
    pub req_mig: Signal<In, Bit>,
    pub req_pad: Signal<In, Bits<2>>,
    pub req_pkey: Signal<In, Bits<16>>,
    pub req_fecn: Signal<In, Bit>,
    pub req_becn: Signal<In, Bit>,
    pub req_dest_qp: Signal<In, Bits<24>>,
    pub req_ack_req: Signal<In, Bit>,
    pub req_xbit: Signal<In, Bit>,
    pub req_psn: Signal<In, Bits<24>>,
    pub req_reth_va: Signal<In, Bits<64>>,
    pub req_reth_rkey: Signal<In, Bits<32>>,
    pub req_reth_len: Signal<In, Bits<32>>,
    pub req_imm: Signal<In, Bits<32>>,
    pub req_aeth_syndrome: Signal<In, Bits<8>>,
    pub req_aeth_msn: Signal<In, Bits<24>>,
    /// MRC extension, pre-packed: byte 0 in bits 415-408, `req_ext_len`
    /// bytes used (0 without the X bit; 12..52).
    pub req_ext: Signal<In, Bits<416>>,
    pub req_ext_len: Signal<In, Bits<6>>,
    /// Payload bytes (pad and ICRC excluded).
    pub req_payload_len: Signal<In, Bits<16>>,
    /// MRC 1.0: `req_transport` (BTH to the end of the chain, byte 0 in
    /// bits 7-0, `req_transport_len` bytes, from `mrc_tx_header_mrc10`)
    /// are the transport headers; the legacy transport fields (opcode to
    /// `req_ext_len`, but `req_pad`, which sizes the wire pad) are ignored.
    pub req_mrc10: Signal<In, Bit>,
    pub req_transport: Signal<In, Bits<MRC10_WINDOW_BITS>>,
    pub req_transport_len: Signal<In, Bits<7>>,
    /// Drop this request, as a malformed one (its payload consumed, no
    /// frame), without counting it in `cnt_bad_request`: the TX path's
    /// data packet of a QP in error (it counts those).
    pub req_drop: Signal<In, Bit>,
    /// The request's QP, and whether a flush of that QP drops it (a data
    /// packet; an ACK of the QP's responder is not dropped).
    pub req_qp: Signal<In, Bits<8>>,
    pub req_flushable: Signal<In, Bit>,
    /// Flush (a pulse): the QP went to error. A flushable request of it
    /// taken in this cycle, or waiting in R1 for the generator, is dropped
    /// as `req_drop` drops it; the frame the generator has begun leaves.
    pub flush_valid: Signal<In, Bit>,
    pub flush_qp: Signal<In, Bits<8>>,
    // ---- Payload stream (byte 0 of the payload in lane 0).
    pub s_payload: AxisSink,
    // ---- MAC TX stream.
    pub m_axis: AxisSource,
    // ---- Counter pulses.
    /// A frame's last beat left.
    pub cnt_tx_frame: Signal<Out, Bit>,
    /// A request was dropped (unknown opcode, extension/X-bit mismatch,
    /// headers or frame too long); its payload was consumed.
    pub cnt_bad_request: Signal<Out, Bit>,
    /// A payload beat's `tlast` disagreed with the request's length.
    pub cnt_payload_mismatch: Signal<Out, Bit>,
    /// A request dropped on purpose (`req_drop` or a flush) ended: its
    /// payload consumed, no frame.
    pub cnt_flushed: Signal<Out, Bit>,
    // ---- R1: the request as taken.
    r1_v: DFF<Bit>,
    r1_bad: DFF<Bit>,
    /// The request is dropped on purpose (`req_drop`), not malformed.
    r1_drop: DFF<Bit>,
    r1_qp: DFF<Bits<8>>,
    r1_flushable: DFF<Bit>,
    r1_dst_mac: DFF<Bits<48>>,
    r1_src_mac: DFF<Bits<48>>,
    r1_vlan: DFF<Bit>,
    r1_tci: DFF<Bits<16>>,
    r1_ipv6: DFF<Bit>,
    r1_src_ip: DFF<Bits<128>>,
    r1_dst_ip: DFF<Bits<128>>,
    r1_tos: DFF<Bits<8>>,
    r1_ttl: DFF<Bits<8>>,
    r1_ev: DFF<Bits<32>>,
    r1_opcode: DFF<Bits<8>>,
    r1_bth_b1: DFF<Bits<8>>,
    r1_pkey: DFF<Bits<16>>,
    r1_bth_b4: DFF<Bits<8>>,
    r1_dest_qp: DFF<Bits<24>>,
    r1_bth_b8: DFF<Bits<8>>,
    r1_psn: DFF<Bits<24>>,
    r1_reth: DFF<Bits<128>>,
    r1_imm: DFF<Bits<32>>,
    r1_aeth: DFF<Bits<32>>,
    r1_ext: DFF<Bits<416>>,
    r1_h: DFF<Bits<8>>,
    r1_hp: DFF<Bits<18>>,
    r1_e: DFF<Bits<18>>,
    r1_f: DFF<Bits<18>>,
    r1_udp_len: DFF<Bits<18>>,
    r1_v4_total: DFF<Bits<16>>,
    r1_psum: DFF<Bits<19>>,
    r1_plen: DFF<Bits<16>>,
    r1_mrc10: DFF<Bit>,
    r1_transport: DFF<Bits<MRC10_WINDOW_BITS>>,
    // R1 input-side locals.
    ext_n: Signal<Local, Bits<7>>,
    t_rev: ByteRev<MRC10_WINDOW_BITS>,
    t_view: Signal<Local, Bits<MRC10_WINDOW_BITS>>,
    k_m10_min: Param<7, { mrc10_chain::AFTER_BTH as u64 }>,
    k_m10_max: Param<7, { MRC10_WINDOW_BYTES as u64 }>,
    k_m10_fixed: Param<8, { mrc10_req::UDP_AND_ICRC }>,
    k_m10_class: Param<3, { mrc10_req::OPCODE_CLASS }>,
    at_hdr: Signal<Local, Bits<8>>,
    op_known: Signal<Local, Bit>,
    l2l3: Signal<Local, Bits<8>>,
    h_in: Signal<Local, Bits<8>>,
    hp_in: Signal<Local, Bits<18>>,
    f_in: Signal<Local, Bits<18>>,
    e_in: Signal<Local, Bits<18>>,
    fixed_udp: Signal<Local, Bits<8>>,
    ext_over: Signal<Local, Bit>,
    wire_pad: Signal<Local, Bits<2>>,
    udp_len: Signal<Local, Bits<18>>,
    bad: Signal<Local, Bit>,
    v4_total_in: Signal<Local, Bits<16>>,
    psum: Signal<Local, Bits<19>>,
    tos_in: Signal<Local, Bits<8>>,
    b1: Signal<Local, Bits<8>>,
    b4: Signal<Local, Bits<8>>,
    b8: Signal<Local, Bits<8>>,
    // R1 -> R2 locals.
    tos_view: Signal<Local, Bits<8>>,
    v4_total: Signal<Local, Bits<16>>,
    cs: Signal<Local, Bits<20>>,
    cs_lo: Signal<Local, Bits<17>>,
    cs_hi: Signal<Local, Bits<17>>,
    csum: Signal<Local, Bits<16>>,
    img_wire: HeaderImage,
    img_view: HeaderImage,
    wire_rev: ByteRev<1536>,
    view_rev: ByteRev<1536>,
    // ---- R2: the generator's packet.
    r2_v: DFF<Bit>,
    r2_bad: DFF<Bit>,
    r2_drop: DFF<Bit>,
    /// A flush names the request being taken / the one in R1.
    flush_in: Signal<Local, Bit>,
    flush_r1: Signal<Local, Bit>,
    r2_hdr: DFF<Bits<1536>>,
    r2_view: DFF<Bits<1536>>,
    r2_h: DFF<Bits<8>>,
    // Bytes from this beat's start to the header end, the payload end,
    // the ICRC-covered end and the frame end (two's complement, 19 bits,
    // minus 64 per beat), and the payload bytes not yet taken (minus 64
    // per payload beat): the generator compares them with 0 and 64 only,
    // no subtractor on its path.
    g_hrem: DFF<Bits<19>>,
    g_prem: DFF<Bits<19>>,
    g_erem: DFF<Bits<19>>,
    g_frem: DFF<Bits<19>>,
    g_qrem: DFF<Bits<19>>,
    g_k: DFF<Bits<11>>,
    g_prev: DFF<Bits<512>>,
    // Generator locals.
    adv: Signal<Local, Bit>,
    f_more: Signal<Local, Bit>,
    e_more: Signal<Local, Bit>,
    q_more: Signal<Local, Bit>,
    crc_last: Signal<Local, Bit>,
    spill: Signal<Local, Bit>,
    hdr_n: Signal<Local, Bits<7>>,
    pay_n: Signal<Local, Bits<7>>,
    crc_n: Signal<Local, Bits<7>>,
    frm_n: Signal<Local, Bits<7>>,
    g_last: Signal<Local, Bit>,
    need_pl: Signal<Local, Bit>,
    gen_go: Signal<Local, Bit>,
    r2_free: Signal<Local, Bit>,
    hdr_beat: Signal<Local, Bits<512>>,
    view_beat: Signal<Local, Bits<512>>,
    pay_pair: Signal<Local, Bits<1024>>,
    pay_shifted: Signal<Local, Bits<1024>>,
    pay_beat: Signal<Local, Bits<512>>,
    pay_only: Signal<Local, Bits<512>>,
    zero512: Signal<Local, Bits<512>>,
    zero64: Signal<Local, Bits<64>>,
    hmask: Signal<Local, Bits<512>>,
    pmask: Signal<Local, Bits<512>>,
    kmask: Signal<Local, Bits<64>>,
    // ---- P1: the beat.
    p1_v: DFF<Bit>,
    p1_data: DFF<Bits<512>>,
    p1_view: DFF<Bits<512>>,
    p1_keep: DFF<Bits<64>>,
    p1_last: DFF<Bit>,
    p1_first: DFF<Bit>,
    p1_crc_n: DFF<Bits<7>>,
    p1_crc_last: DFF<Bit>,
    p1_spill: DFF<Bit>,
    // ---- P2: view right-aligned.
    p2_v: DFF<Bit>,
    p2_data: DFF<Bits<512>>,
    p2_aligned: DFF<Bits<512>>,
    p2_keep: DFF<Bits<64>>,
    p2_last: DFF<Bit>,
    p2_first: DFF<Bit>,
    p2_crc_n: DFF<Bits<7>>,
    p2_crc_last: DFF<Bit>,
    p2_spill: DFF<Bit>,
    // ---- P3: crc0 of the beat; the state loop.
    p3_v: DFF<Bit>,
    p3_data: DFF<Bits<512>>,
    p3_d: DFF<Bits<32>>,
    p3_keep: DFF<Bits<64>>,
    p3_last: DFF<Bit>,
    p3_first: DFF<Bit>,
    p3_crc_n: DFF<Bits<7>>,
    p3_crc_last: DFF<Bit>,
    p3_spill: DFF<Bit>,
    crc_state: DFF<Bits<32>>,
    blk: CrcBlock,
    m64: CrcAdvance<64>,
    m32: CrcAdvance<32>,
    m24: CrcAdvance<24>,
    m16: CrcAdvance<16>,
    m8: CrcAdvance<8>,
    m6: CrcAdvance<6>,
    m4: CrcAdvance<4>,
    m2: CrcAdvance<2>,
    m1: CrcAdvance<1>,
    s_1: Signal<Local, Bits<32>>,
    s_2: Signal<Local, Bits<32>>,
    s_3: Signal<Local, Bits<32>>,
    s_4: Signal<Local, Bits<32>>,
    icrc: Signal<Local, Bits<32>>,
    state_next: Signal<Local, Bits<32>>,
    blk_o: Signal<Local, Bits<32>>,
    beat_data: Signal<Local, Bits<512>>,
    beat_view: Signal<Local, Bits<512>>,
    beat_keep: Signal<Local, Bits<64>>,
    // ---- F1..F4: the last covered beat's M_n S, then the ICRC.
    f1_v: DFF<Bit>,
    f1_data: DFF<Bits<512>>,
    f1_keep: DFF<Bits<64>>,
    f1_last: DFF<Bit>,
    f1_crc_n: DFF<Bits<7>>,
    f1_crc_last: DFF<Bit>,
    f1_spill: DFF<Bit>,
    f1_acc: DFF<Bits<32>>,
    f1_d: DFF<Bits<32>>,
    f2_v: DFF<Bit>,
    f2_data: DFF<Bits<512>>,
    f2_keep: DFF<Bits<64>>,
    f2_last: DFF<Bit>,
    f2_crc_n: DFF<Bits<7>>,
    f2_crc_last: DFF<Bit>,
    f2_spill: DFF<Bit>,
    f2_acc: DFF<Bits<32>>,
    f2_d: DFF<Bits<32>>,
    f3_v: DFF<Bit>,
    f3_data: DFF<Bits<512>>,
    f3_keep: DFF<Bits<64>>,
    f3_last: DFF<Bit>,
    f3_crc_n: DFF<Bits<7>>,
    f3_crc_last: DFF<Bit>,
    f3_spill: DFF<Bit>,
    f3_acc: DFF<Bits<32>>,
    f3_d: DFF<Bits<32>>,
    f4_v: DFF<Bit>,
    f4_data: DFF<Bits<512>>,
    f4_keep: DFF<Bits<64>>,
    f4_last: DFF<Bit>,
    f4_crc_n: DFF<Bits<7>>,
    f4_crc_last: DFF<Bit>,
    f4_spill: DFF<Bit>,
    f4_icrc: DFF<Bits<32>>,
    ins: Signal<Local, Bits<576>>,
    // ---- OUT.
    o_v: DFF<Bit>,
    o_data: DFF<Bits<512>>,
    o_keep: DFF<Bits<64>>,
    o_last: DFF<Bit>,
    o_spill: DFF<Bits<32>>,
    o_mismatch: DFF<Bit>,
    o_bad: DFF<Bit>,
    o_drop: DFF<Bit>,
}

impl Logic for TxBuilder {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            r1_v,
            r1_bad,
            r1_drop,
            r1_qp,
            r1_flushable,
            r1_dst_mac,
            r1_src_mac,
            r1_vlan,
            r1_tci,
            r1_ipv6,
            r1_src_ip,
            r1_dst_ip,
            r1_tos,
            r1_ttl,
            r1_ev,
            r1_opcode,
            r1_bth_b1,
            r1_pkey,
            r1_bth_b4,
            r1_dest_qp,
            r1_bth_b8,
            r1_psn,
            r1_reth,
            r1_imm,
            r1_aeth,
            r1_ext,
            r1_h,
            r1_hp,
            r1_e,
            r1_f,
            r1_udp_len,
            r1_v4_total,
            r1_psum,
            r1_plen,
            r1_mrc10,
            r1_transport,
            r2_v,
            r2_bad,
            r2_drop,
            r2_hdr,
            r2_view,
            r2_h,
            g_hrem,
            g_prem,
            g_erem,
            g_frem,
            g_qrem,
            g_k,
            g_prev,
            p1_v,
            p1_data,
            p1_view,
            p1_keep,
            p1_last,
            p1_first,
            p1_crc_n,
            p1_crc_last,
            p1_spill,
            p2_v,
            p2_data,
            p2_aligned,
            p2_keep,
            p2_last,
            p2_first,
            p2_crc_n,
            p2_crc_last,
            p2_spill,
            p3_v,
            p3_data,
            p3_d,
            p3_keep,
            p3_last,
            p3_first,
            p3_crc_n,
            p3_crc_last,
            p3_spill,
            crc_state,
            f1_v,
            f1_data,
            f1_keep,
            f1_last,
            f1_crc_n,
            f1_crc_last,
            f1_spill,
            f1_acc,
            f1_d,
            f2_v,
            f2_data,
            f2_keep,
            f2_last,
            f2_crc_n,
            f2_crc_last,
            f2_spill,
            f2_acc,
            f2_d,
            f3_v,
            f3_data,
            f3_keep,
            f3_last,
            f3_crc_n,
            f3_crc_last,
            f3_spill,
            f3_acc,
            f3_d,
            f4_v,
            f4_data,
            f4_keep,
            f4_last,
            f4_crc_n,
            f4_crc_last,
            f4_spill,
            f4_icrc,
            o_v,
            o_data,
            o_keep,
            o_last,
            o_spill,
            o_mismatch,
            o_bad,
            o_drop
        );
        // Every stage from the generator to the output moves together.
        self.adv.next = !self.o_v.q.val() | self.m_axis.tready.val();

        // ==== Request side: header lengths and checks (into R1).
        // Fixed headers after the BTH by opcode (BTH 12, RETH 16, ImmDt 4,
        // AETH 4, CNP reserved 16): where the extension starts.
        // `fixed_udp` = UDP header + fixed transport headers + ICRC and
        // `ext_max` = the longest extension that keeps the transport
        // headers within 68 bytes, decoded as constants (no adder before
        // the length sums).
        self.op_known.next = false;
        self.at_hdr.next = 12.into();
        self.fixed_udp.next = 24.into();
        self.ext_over.next = self.req_ext_len.val() > 52;
        if (self.req_opcode.val() == 0x07) | (self.req_opcode.val() == 0x08) {
            self.op_known.next = true;
        }
        if (self.req_opcode.val() == 0x09) | (self.req_opcode.val() == 0x11) {
            self.op_known.next = true;
            self.at_hdr.next = 16.into();
            self.fixed_udp.next = 28.into();
        }
        if (self.req_opcode.val() == 0x06) | (self.req_opcode.val() == 0x0A) | (self.req_opcode.val() == 0x81) {
            self.op_known.next = true;
            self.at_hdr.next = 28.into();
            self.fixed_udp.next = 40.into();
            self.ext_over.next = self.req_ext_len.val() > 40;
        }
        if self.req_opcode.val() == 0x0B {
            self.op_known.next = true;
            self.at_hdr.next = 32.into();
            self.fixed_udp.next = 44.into();
            self.ext_over.next = self.req_ext_len.val() > 36;
        }
        // The bytes after the fixed headers: the extension, or (MRC 1.0)
        // the whole transport chain, with no fixed headers before it.
        self.ext_n.next = bit_cast::<7, 6>(self.req_ext_len.val());
        if self.req_mrc10.val() {
            self.ext_n.next = self.req_transport_len.val();
            self.at_hdr.next = 0.into();
            self.fixed_udp.next = self.k_m10_fixed.val();
        }
        // Ethernet [+ tag] + IP header bytes.
        self.l2l3.next = 34.into();
        if self.req_vlan.val() {
            self.l2l3.next = 38.into();
        }
        if self.req_ipv6.val() {
            self.l2l3.next = 54.into();
            if self.req_vlan.val() {
                self.l2l3.next = 58.into();
            }
        }
        // Trimmed (DSCP 59) packets carry no pad bytes, as in proto::wire.
        self.wire_pad.next = self.req_pad.val();
        if self.req_dscp.val() == 59 {
            self.wire_pad.next = 0.into();
        }
        // UDP header, transport headers, payload, pad, ICRC.
        self.udp_len.next = bit_cast::<18, 8>(self.fixed_udp.val())
            + bit_cast::<18, 7>(self.ext_n.val())
            + bit_cast::<18, 16>(self.req_payload_len.val())
            + bit_cast::<18, 2>(self.wire_pad.val());
        // Frame positions: header end, payload end, frame end (the ICRC
        // covers up to 4 before it), each one sum of the request's fields.
        self.h_in.next = self.at_hdr.val() + self.l2l3.val() + bit_cast::<8, 7>(self.ext_n.val()) + 8;
        self.hp_in.next = bit_cast::<18, 8>(self.at_hdr.val())
            + bit_cast::<18, 8>(self.l2l3.val())
            + bit_cast::<18, 7>(self.ext_n.val())
            + bit_cast::<18, 16>(self.req_payload_len.val())
            + 8;
        self.f_in.next = bit_cast::<18, 8>(self.fixed_udp.val())
            + bit_cast::<18, 8>(self.l2l3.val())
            + bit_cast::<18, 7>(self.ext_n.val())
            + bit_cast::<18, 16>(self.req_payload_len.val())
            + bit_cast::<18, 2>(self.wire_pad.val());
        // The ICRC-covered end: F - 4 = l2l3 + 8 (UDP) + at_hdr + ext +
        // payload + pad, summed directly (no subtractor after the sum).
        self.e_in.next = bit_cast::<18, 8>(self.at_hdr.val())
            + bit_cast::<18, 8>(self.l2l3.val())
            + bit_cast::<18, 7>(self.ext_n.val())
            + bit_cast::<18, 16>(self.req_payload_len.val())
            + bit_cast::<18, 2>(self.wire_pad.val())
            + 8;
        // The IPv4 total length and the checksum's sum of the words that do
        // not depend on the lengths, here so the R1 -> R2 path holds only
        // the last add and the fold.
        self.v4_total_in.next = bit_cast::<16, 8>(self.fixed_udp.val())
            + bit_cast::<16, 7>(self.ext_n.val())
            + self.req_payload_len.val()
            + bit_cast::<16, 2>(self.wire_pad.val())
            + 20;
        self.tos_in.next = (bit_cast::<8, 6>(self.req_dscp.val()) << 2) | bit_cast::<8, 2>(self.req_ecn.val());
        self.psum.next = bit_cast::<19, 16>(bit_cast::<16, 8>(self.tos_in.val()) | 0x4500)
            + bit_cast::<19, 16>((bit_cast::<16, 8>(self.req_ttl.val()) << 8) | 17)
            + bit_cast::<19, 16>(self.req_src_ip.val().get_bits::<16>(16))
            + bit_cast::<19, 16>(self.req_src_ip.val().get_bits::<16>(0))
            + bit_cast::<19, 16>(self.req_dst_ip.val().get_bits::<16>(16))
            + bit_cast::<19, 16>(self.req_dst_ip.val().get_bits::<16>(0))
            + 0x4000;
        self.bad.next = !self.op_known.val()
            | (self.req_xbit.val() != (self.req_ext_len.val() != 0))
            | (self.req_xbit.val() & (self.req_opcode.val() == 0x81))
            | self.ext_over.val();
        // MRC 1.0: a chain from the BTH to at most the window, an opcode of
        // the dialect's range (the chain itself is the header builder's).
        self.t_rev.i.next = self.req_transport.val();
        if self.req_mrc10.val() {
            self.bad.next = (self.req_transport_len.val() < self.k_m10_min.val())
                | (self.req_transport_len.val() > self.k_m10_max.val())
                | (self.req_transport.val().get_bits::<3>(5) != self.k_m10_class.val());
        }

        // ==== Generator (R2) and handshakes.
        // Lanes of this beat below each boundary, clamped to 0..64:
        // negative -> 0, bits 17-6 set (>= 64) -> 64, else the low bits.
        self.hdr_n.next = bit_cast::<7, 6>(self.g_hrem.q.val().get_bits::<6>(0));
        if self.g_hrem.q.val().get_bits::<12>(6).any() {
            self.hdr_n.next = 64.into();
        }
        if self.g_hrem.q.val().get_bit(18) {
            self.hdr_n.next = 0.into();
        }
        self.pay_n.next = bit_cast::<7, 6>(self.g_prem.q.val().get_bits::<6>(0));
        if self.g_prem.q.val().get_bits::<12>(6).any() {
            self.pay_n.next = 64.into();
        }
        if self.g_prem.q.val().get_bit(18) {
            self.pay_n.next = 0.into();
        }
        self.crc_n.next = bit_cast::<7, 6>(self.g_erem.q.val().get_bits::<6>(0));
        if self.g_erem.q.val().get_bits::<12>(6).any() {
            self.crc_n.next = 64.into();
        }
        if self.g_erem.q.val().get_bit(18) {
            self.crc_n.next = 0.into();
        }
        self.frm_n.next = bit_cast::<7, 6>(self.g_frem.q.val().get_bits::<6>(0));
        if self.g_frem.q.val().get_bits::<12>(6).any() {
            self.frm_n.next = 64.into();
        }
        // More than 64 bytes left (> 64: bits 17-7, or bit 6 and any low bit).
        self.f_more.next = !self.g_frem.q.val().get_bit(18)
            & (self.g_frem.q.val().get_bits::<11>(7).any()
                | (self.g_frem.q.val().get_bit(6) & self.g_frem.q.val().get_bits::<6>(0).any()));
        self.e_more.next = !self.g_erem.q.val().get_bit(18)
            & (self.g_erem.q.val().get_bits::<11>(7).any()
                | (self.g_erem.q.val().get_bit(6) & self.g_erem.q.val().get_bits::<6>(0).any()));
        self.q_more.next = !self.g_qrem.q.val().get_bit(18)
            & (self.g_qrem.q.val().get_bits::<11>(7).any()
                | (self.g_qrem.q.val().get_bit(6) & self.g_qrem.q.val().get_bits::<6>(0).any()));
        self.g_last.next = !self.f_more.val();
        // The last covered byte is in this beat: 0 < E - 64k <= 64.
        self.crc_last.next = !self.g_erem.q.val().get_bit(18) & self.g_erem.q.val().any() & !self.e_more.val();
        // Past the covered bytes: the beat of ICRC bytes only.
        self.spill.next = self.g_erem.q.val().get_bit(18) | !self.g_erem.q.val().any();
        // A payload beat is due from the beat holding the header's end
        // (H - 64k < 64) while payload beats remain.
        self.need_pl.next = (self.g_hrem.q.val().get_bit(18) | !self.g_hrem.q.val().get_bits::<12>(6).any())
            & !self.g_qrem.q.val().get_bit(18)
            & self.g_qrem.q.val().any();
        self.gen_go.next = self.r2_v.q.val() & self.adv.val() & (!self.need_pl.val() | self.s_payload.tvalid.val());
        self.s_payload.tready.next = self.r2_v.q.val() & self.adv.val() & self.need_pl.val();
        self.r2_free.next = !self.r2_v.q.val() | (self.gen_go.val() & self.g_last.val());
        self.req_ready.next = !self.r1_v.q.val() | self.r2_free.val();

        // BTH bytes 1, 4 and 8 from their flag bits.
        self.b1.next = bit_cast::<8, 2>(self.req_pad.val()) << 4;
        if self.req_se.val() {
            self.b1.next = self.b1.val() | 0x80;
        }
        if self.req_mig.val() {
            self.b1.next = self.b1.val() | 0x40;
        }
        self.b4.next = 0.into();
        if self.req_fecn.val() {
            self.b4.next = self.b4.val() | 0x80;
        }
        if self.req_becn.val() {
            self.b4.next = self.b4.val() | 0x40;
        }
        self.b8.next = 0.into();
        if self.req_ack_req.val() {
            self.b8.next = self.b8.val() | 0x80;
        }
        if self.req_xbit.val() {
            self.b8.next = self.b8.val() | 0x40;
        }
        // Flush of a QP in error: the request taken now, or the one R1
        // holds while the generator is busy (R1 keeps it, marked dropped,
        // or hands it to R2 marked so).
        self.flush_in.next = self.flush_valid.val()
            & self.req_valid.val()
            & self.req_flushable.val()
            & (self.req_qp.val() == self.flush_qp.val());
        self.flush_r1.next = self.flush_valid.val()
            & self.r1_v.q.val()
            & self.r1_flushable.q.val()
            & (self.r1_qp.q.val() == self.flush_qp.val());
        if self.flush_r1.val() {
            self.r1_bad.d.next = true;
            self.r1_drop.d.next = true;
        }
        // R1 register.
        if !self.r1_v.q.val() | self.r2_free.val() {
            self.r1_v.d.next = self.req_valid.val();
            self.r1_bad.d.next = self.bad.val() | self.req_drop.val() | self.flush_in.val();
            self.r1_drop.d.next = self.req_drop.val() | self.flush_in.val();
            self.r1_qp.d.next = self.req_qp.val();
            self.r1_flushable.d.next = self.req_flushable.val();
            self.r1_dst_mac.d.next = self.req_dst_mac.val();
            self.r1_src_mac.d.next = self.req_src_mac.val();
            self.r1_vlan.d.next = self.req_vlan.val();
            self.r1_tci.d.next = self.req_vlan_tci.val();
            self.r1_ipv6.d.next = self.req_ipv6.val();
            self.r1_src_ip.d.next = self.req_src_ip.val();
            self.r1_dst_ip.d.next = self.req_dst_ip.val();
            self.r1_tos.d.next = self.tos_in.val();
            self.r1_ttl.d.next = self.req_ttl.val();
            self.r1_ev.d.next = self.req_ev.val();
            self.r1_opcode.d.next = self.req_opcode.val();
            self.r1_bth_b1.d.next = self.b1.val();
            self.r1_pkey.d.next = self.req_pkey.val();
            self.r1_bth_b4.d.next = self.b4.val();
            self.r1_dest_qp.d.next = self.req_dest_qp.val();
            self.r1_bth_b8.d.next = self.b8.val();
            self.r1_psn.d.next = self.req_psn.val();
            self.r1_reth.d.next = (bit_cast::<128, 64>(self.req_reth_va.val()) << 64)
                | (bit_cast::<128, 32>(self.req_reth_rkey.val()) << 32)
                | bit_cast::<128, 32>(self.req_reth_len.val());
            self.r1_imm.d.next = self.req_imm.val();
            self.r1_aeth.d.next =
                (bit_cast::<32, 8>(self.req_aeth_syndrome.val()) << 24) | bit_cast::<32, 24>(self.req_aeth_msn.val());
            self.r1_ext.d.next = self.req_ext.val();
            self.r1_h.d.next = self.h_in.val();
            self.r1_hp.d.next = self.hp_in.val();
            self.r1_e.d.next = self.e_in.val();
            self.r1_f.d.next = self.f_in.val();
            self.r1_udp_len.d.next = self.udp_len.val();
            self.r1_v4_total.d.next = self.v4_total_in.val();
            self.r1_psum.d.next = self.psum.val();
            self.r1_plen.d.next = self.req_payload_len.val();
            self.r1_mrc10.d.next = self.req_mrc10.val();
            self.r1_transport.d.next = self.t_rev.o.val();
        }

        // ==== R1 -> R2: header images, checksum, positions.
        self.v4_total.next = self.r1_v4_total.q.val();
        // IPv4 header checksum: the registered partial sum plus the total
        // length, folded to 16 bits; the end-around carry of the fold is
        // taken by choosing between the fold and the fold + 1 (two adders
        // side by side instead of a third one in series).
        self.cs.next = bit_cast::<20, 19>(self.r1_psum.q.val()) + bit_cast::<20, 16>(self.v4_total.val());
        self.cs_lo.next =
            bit_cast::<17, 16>(self.cs.val().get_bits::<16>(0)) + bit_cast::<17, 4>(self.cs.val().get_bits::<4>(16));
        self.cs_hi.next = bit_cast::<17, 16>(self.cs.val().get_bits::<16>(0))
            + bit_cast::<17, 4>(self.cs.val().get_bits::<4>(16))
            + 1;
        self.csum.next = !self.cs_lo.val().get_bits::<16>(0);
        if self.cs_lo.val().get_bit(16) {
            self.csum.next = !self.cs_hi.val().get_bits::<16>(0);
        }
        // The wire image.
        self.img_wire.dst_mac.next = self.r1_dst_mac.q.val();
        self.img_wire.src_mac.next = self.r1_src_mac.q.val();
        self.img_wire.vlan.next = self.r1_vlan.q.val();
        self.img_wire.tpid.next = 0x8100.into();
        self.img_wire.tci.next = self.r1_tci.q.val();
        self.img_wire.ethertype.next = 0x0800.into();
        if self.r1_ipv6.q.val() {
            self.img_wire.ethertype.next = 0x86DD.into();
        }
        self.img_wire.ipv6.next = self.r1_ipv6.q.val();
        self.img_wire.tos.next = self.r1_tos.q.val();
        self.img_wire.ttl.next = self.r1_ttl.q.val();
        self.img_wire.v4_total.next = self.v4_total.val();
        self.img_wire.v4_csum.next = self.csum.val();
        self.img_wire.v6_tc_flow.next =
            (bit_cast::<28, 8>(self.r1_tos.q.val()) << 20) | bit_cast::<28, 16>(self.r1_ev.q.val().get_bits::<16>(16));
        self.img_wire.src_ip.next = self.r1_src_ip.q.val();
        self.img_wire.dst_ip.next = self.r1_dst_ip.q.val();
        self.img_wire.udp_sport.next = self.r1_ev.q.val().get_bits::<16>(0);
        self.img_wire.udp_len.next = bit_cast::<16, 18>(self.r1_udp_len.q.val());
        self.img_wire.udp_csum.next = 0.into();
        self.img_wire.opcode.next = self.r1_opcode.q.val();
        self.img_wire.bth_b1.next = self.r1_bth_b1.q.val();
        self.img_wire.pkey.next = self.r1_pkey.q.val();
        self.img_wire.bth_b4.next = self.r1_bth_b4.q.val();
        self.img_wire.dest_qp.next = self.r1_dest_qp.q.val();
        self.img_wire.bth_b8.next = self.r1_bth_b8.q.val();
        self.img_wire.psn.next = self.r1_psn.q.val();
        self.img_wire.reth.next = self.r1_reth.q.val();
        self.img_wire.imm.next = self.r1_imm.q.val();
        self.img_wire.aeth.next = self.r1_aeth.q.val();
        self.img_wire.ext.next = self.r1_ext.q.val();
        self.img_wire.mrc10.next = self.r1_mrc10.q.val();
        self.img_wire.transport.next = self.r1_transport.q.val();
        // The ICRC view: Ethernet zero but the four bytes before the IP
        // header (all-ones: the CRC seed), the variant fields all-ones.
        self.tos_view.next = 0xFF.into();
        self.img_view.dst_mac.next = 0.into();
        self.img_view.src_mac.next = 0xFFFF.into();
        if self.r1_vlan.q.val() {
            self.img_view.src_mac.next = 0.into();
        }
        self.img_view.vlan.next = self.r1_vlan.q.val();
        self.img_view.tpid.next = 0.into();
        self.img_view.tci.next = 0xFFFF.into();
        self.img_view.ethertype.next = 0xFFFF.into();
        self.img_view.ipv6.next = self.r1_ipv6.q.val();
        self.img_view.tos.next = self.tos_view.val();
        self.img_view.ttl.next = 0xFF.into();
        self.img_view.v4_total.next = self.v4_total.val();
        self.img_view.v4_csum.next = 0xFFFF.into();
        self.img_view.v6_tc_flow.next = 0xFFF_FFFF.into();
        self.img_view.src_ip.next = self.r1_src_ip.q.val();
        self.img_view.dst_ip.next = self.r1_dst_ip.q.val();
        self.img_view.udp_sport.next = self.r1_ev.q.val().get_bits::<16>(0);
        self.img_view.udp_len.next = bit_cast::<16, 18>(self.r1_udp_len.q.val());
        self.img_view.udp_csum.next = 0xFFFF.into();
        self.img_view.opcode.next = self.r1_opcode.q.val();
        self.img_view.bth_b1.next = self.r1_bth_b1.q.val();
        self.img_view.pkey.next = self.r1_pkey.q.val();
        self.img_view.bth_b4.next = 0xFF.into();
        self.img_view.dest_qp.next = self.r1_dest_qp.q.val();
        self.img_view.bth_b8.next = self.r1_bth_b8.q.val();
        self.img_view.psn.next = self.r1_psn.q.val();
        self.img_view.reth.next = self.r1_reth.q.val();
        self.img_view.imm.next = self.r1_imm.q.val();
        self.img_view.aeth.next = self.r1_aeth.q.val();
        self.img_view.ext.next = self.r1_ext.q.val();
        // The ICRC masks BTH byte 4 in MRC 1.0 as in the legacy dialect.
        // (Bit 472 = `mrc10_req::BTH_B4_LSB`, checked below the module.)
        self.t_view.next = self.r1_transport.q.val() | (bits::<512>(0xFF) << 472);
        self.img_view.mrc10.next = self.r1_mrc10.q.val();
        self.img_view.transport.next = self.t_view.val();
        // Lane order: frame byte 0 in bits 7-0.
        self.wire_rev.i.next = self.img_wire.hdr.val();
        self.view_rev.i.next = self.img_view.hdr.val();
        if self.r2_free.val() {
            self.r2_v.d.next = self.r1_v.q.val();
            // Too long for the 16-bit IP lengths (golden `TooLong`), checked
            // here on the registered length.
            self.r2_bad.d.next = self.r1_bad.q.val() | self.flush_r1.val() | (self.r1_udp_len.q.val() > 65515);
            self.r2_drop.d.next = self.r1_drop.q.val() | self.flush_r1.val();
            self.r2_hdr.d.next = self.wire_rev.o.val();
            self.r2_view.d.next = self.view_rev.o.val();
            self.r2_h.d.next = self.r1_h.q.val();
        }

        // ==== Generator: beat g_k of the R2 packet.
        self.hdr_beat.next = self.r2_hdr.q.val().get_bits::<512>(0);
        self.view_beat.next = self.r2_view.q.val().get_bits::<512>(0);
        if self.g_k.q.val() == 1 {
            self.hdr_beat.next = self.r2_hdr.q.val().get_bits::<512>(512);
            self.view_beat.next = self.r2_view.q.val().get_bits::<512>(512);
        }
        if self.g_k.q.val() == 2 {
            self.hdr_beat.next = self.r2_hdr.q.val().get_bits::<512>(1024);
            self.view_beat.next = self.r2_view.q.val().get_bits::<512>(1024);
        }
        // Payload realigned behind the header: lanes from H mod 64 up take
        // the current beat, the lanes below it the previous beat's top.
        self.pay_pair.next =
            (bit_cast::<1024, 512>(self.s_payload.tdata.val()) << 512) | bit_cast::<1024, 512>(self.g_prev.q.val());
        self.pay_shifted.next =
            self.pay_pair.val() >> (bit_cast::<10, 7>(64 - bit_cast::<7, 6>(self.r2_h.q.val().get_bits::<6>(0))) << 3);
        self.pay_beat.next = self.pay_shifted.val().get_bits::<512>(0);
        // Lane masks: bytes below each count all-ones.
        self.zero512.next = 0.into();
        self.zero64.next = 0.into();
        self.hmask.next = !((!self.zero512.val()) << (bit_cast::<10, 7>(self.hdr_n.val()) << 3));
        self.pmask.next = !((!self.zero512.val()) << (bit_cast::<10, 7>(self.pay_n.val()) << 3));
        self.kmask.next = !((!self.zero64.val()) << self.frm_n.val());
        self.pay_only.next = self.pay_beat.val() & self.pmask.val() & !self.hmask.val();
        if self.gen_go.val() {
            if self.need_pl.val() {
                self.g_prev.d.next = self.s_payload.tdata.val();
            }
            self.g_hrem.d.next = self.g_hrem.q.val() - 64;
            self.g_prem.d.next = self.g_prem.q.val() - 64;
            self.g_erem.d.next = self.g_erem.q.val() - 64;
            self.g_frem.d.next = self.g_frem.q.val() - 64;
            if self.need_pl.val() {
                self.g_qrem.d.next = self.g_qrem.q.val() - 64;
            }
            if self.g_last.val() {
                self.g_k.d.next = 0.into();
            } else {
                self.g_k.d.next = self.g_k.q.val() + 1;
            }
        }
        if self.r2_free.val() {
            self.g_k.d.next = 0.into();
            self.g_hrem.d.next = bit_cast::<19, 8>(self.r1_h.q.val());
            self.g_prem.d.next = bit_cast::<19, 18>(self.r1_hp.q.val());
            self.g_erem.d.next = bit_cast::<19, 18>(self.r1_e.q.val());
            self.g_frem.d.next = bit_cast::<19, 18>(self.r1_f.q.val());
            self.g_qrem.d.next = bit_cast::<19, 16>(self.r1_plen.q.val());
        }

        // ==== Beat pipeline (all stages move on adv).
        // The CRC leaves take registers only (a leaf fed from this block's
        // locals and read back by it makes Verilator report UNOPTFLAT).
        // F1 from S (zero at a frame's first beat): M_64 or M_32 (n <= 64).
        self.m64.i.next = self.crc_state.q.val();
        self.m32.i.next = self.crc_state.q.val();
        self.s_1.next = self.crc_state.q.val();
        if self.p3_crc_n.q.val().get_bit(6) {
            self.s_1.next = self.m64.o.val();
        } else if self.p3_crc_n.q.val().get_bit(5) {
            self.s_1.next = self.m32.o.val();
        }
        if self.p3_first.q.val() {
            self.s_1.next = 0.into();
        }
        self.state_next.next = self.m64.o.val() ^ self.p3_d.q.val();
        if self.p3_first.q.val() {
            self.state_next.next = self.p3_d.q.val();
        }
        self.blk.d.next = self.p2_aligned.q.val();
        self.blk_o.next = self.blk.o.val();
        // F2: M_16, M_8 or both (M_24).
        self.m16.i.next = self.f1_acc.q.val();
        self.m8.i.next = self.f1_acc.q.val();
        self.m24.i.next = self.f1_acc.q.val();
        self.s_2.next = self.f1_acc.q.val();
        if self.f1_crc_n.q.val().get_bit(4) & self.f1_crc_n.q.val().get_bit(3) {
            self.s_2.next = self.m24.o.val();
        } else if self.f1_crc_n.q.val().get_bit(4) {
            self.s_2.next = self.m16.o.val();
        } else if self.f1_crc_n.q.val().get_bit(3) {
            self.s_2.next = self.m8.o.val();
        }
        // F3: M_4, M_2 or M_6.
        self.m4.i.next = self.f2_acc.q.val();
        self.m2.i.next = self.f2_acc.q.val();
        self.m6.i.next = self.f2_acc.q.val();
        self.s_3.next = self.f2_acc.q.val();
        if self.f2_crc_n.q.val().get_bit(2) & self.f2_crc_n.q.val().get_bit(1) {
            self.s_3.next = self.m6.o.val();
        } else if self.f2_crc_n.q.val().get_bit(2) {
            self.s_3.next = self.m4.o.val();
        } else if self.f2_crc_n.q.val().get_bit(1) {
            self.s_3.next = self.m2.o.val();
        }
        // F4: M_1, then the data part and the final inversion.
        self.m1.i.next = self.f3_acc.q.val();
        self.s_4.next = self.f3_acc.q.val();
        if self.f3_crc_n.q.val().get_bit(0) {
            self.s_4.next = self.m1.o.val();
        }
        self.icrc.next = !(self.s_4.val() ^ self.f3_d.q.val());
        self.beat_data.next = (self.hdr_beat.val() & self.hmask.val()) | self.pay_only.val();
        self.beat_view.next = (self.view_beat.val() & self.hmask.val()) | self.pay_only.val();
        self.beat_keep.next = self.kmask.val();
        // ICRC bytes at lane `crc_n` of the last covered beat (LSB first);
        // those past lane 63 go to the next beat.
        self.ins.next = bit_cast::<576, 32>(self.f4_icrc.q.val()) << (bit_cast::<10, 7>(self.f4_crc_n.q.val()) << 3);
        self.cnt_tx_frame.next = self.o_v.q.val() & self.m_axis.tready.val() & self.o_last.q.val();
        self.cnt_bad_request.next = self.o_bad.q.val();
        self.cnt_flushed.next = self.o_drop.q.val();
        self.o_drop.d.next = false;
        self.cnt_payload_mismatch.next = self.o_mismatch.q.val();
        self.o_bad.d.next = false;
        self.o_mismatch.d.next = false;
        if self.adv.val() {
            // P1.
            self.p1_v.d.next = self.gen_go.val() & !self.r2_bad.q.val();
            self.p1_data.d.next = self.beat_data.val();
            self.p1_view.d.next = self.beat_view.val();
            self.p1_keep.d.next = self.beat_keep.val();
            self.p1_last.d.next = self.g_last.val();
            self.p1_first.d.next = self.g_k.q.val() == 0;
            self.p1_crc_n.d.next = self.crc_n.val();
            self.p1_crc_last.d.next = self.crc_last.val();
            self.p1_spill.d.next = self.spill.val();
            self.o_bad.d.next = self.gen_go.val() & self.g_last.val() & self.r2_bad.q.val() & !self.r2_drop.q.val();
            self.o_drop.d.next = self.gen_go.val() & self.g_last.val() & self.r2_drop.q.val();
            // A payload beat's tlast must mark exactly the last one.
            self.o_mismatch.d.next =
                self.gen_go.val() & self.need_pl.val() & (self.s_payload.tlast.val() == self.q_more.val());
            // P2: the view shifted so its last covered byte is lane 63
            // (leading zeros leave the zero state unchanged).
            self.p2_v.d.next = self.p1_v.q.val();
            self.p2_data.d.next = self.p1_data.q.val();
            self.p2_aligned.d.next = self.p1_view.q.val() << (bit_cast::<10, 7>(64 - self.p1_crc_n.q.val()) << 3);
            self.p2_keep.d.next = self.p1_keep.q.val();
            self.p2_last.d.next = self.p1_last.q.val();
            self.p2_first.d.next = self.p1_first.q.val();
            self.p2_crc_n.d.next = self.p1_crc_n.q.val();
            self.p2_crc_last.d.next = self.p1_crc_last.q.val();
            self.p2_spill.d.next = self.p1_spill.q.val();
            // P3.
            self.p3_v.d.next = self.p2_v.q.val();
            self.p3_data.d.next = self.p2_data.q.val();
            self.p3_d.d.next = self.blk_o.val();
            self.p3_keep.d.next = self.p2_keep.q.val();
            self.p3_last.d.next = self.p2_last.q.val();
            self.p3_first.d.next = self.p2_first.q.val();
            self.p3_crc_n.d.next = self.p2_crc_n.q.val();
            self.p3_crc_last.d.next = self.p2_crc_last.q.val();
            self.p3_spill.d.next = self.p2_spill.q.val();
            // The state loop over the full covered beats.
            if self.p3_v.q.val() & !self.p3_crc_last.q.val() & (self.p3_crc_n.q.val() != 0) {
                self.crc_state.d.next = self.state_next.val();
            }
            // F1: M_64, M_32 steps.
            self.f1_v.d.next = self.p3_v.q.val();
            self.f1_data.d.next = self.p3_data.q.val();
            self.f1_keep.d.next = self.p3_keep.q.val();
            self.f1_last.d.next = self.p3_last.q.val();
            self.f1_crc_n.d.next = self.p3_crc_n.q.val();
            self.f1_crc_last.d.next = self.p3_crc_last.q.val();
            self.f1_spill.d.next = self.p3_spill.q.val();
            self.f1_acc.d.next = self.s_1.val();
            self.f1_d.d.next = self.p3_d.q.val();
            // F2: M_16, M_8.
            self.f2_v.d.next = self.f1_v.q.val();
            self.f2_data.d.next = self.f1_data.q.val();
            self.f2_keep.d.next = self.f1_keep.q.val();
            self.f2_last.d.next = self.f1_last.q.val();
            self.f2_crc_n.d.next = self.f1_crc_n.q.val();
            self.f2_crc_last.d.next = self.f1_crc_last.q.val();
            self.f2_spill.d.next = self.f1_spill.q.val();
            self.f2_acc.d.next = self.s_2.val();
            self.f2_d.d.next = self.f1_d.q.val();
            // F3: M_4, M_2.
            self.f3_v.d.next = self.f2_v.q.val();
            self.f3_data.d.next = self.f2_data.q.val();
            self.f3_keep.d.next = self.f2_keep.q.val();
            self.f3_last.d.next = self.f2_last.q.val();
            self.f3_crc_n.d.next = self.f2_crc_n.q.val();
            self.f3_crc_last.d.next = self.f2_crc_last.q.val();
            self.f3_spill.d.next = self.f2_spill.q.val();
            self.f3_acc.d.next = self.s_3.val();
            self.f3_d.d.next = self.f2_d.q.val();
            // F4: M_1, the data part, the final inversion.
            self.f4_v.d.next = self.f3_v.q.val();
            self.f4_data.d.next = self.f3_data.q.val();
            self.f4_keep.d.next = self.f3_keep.q.val();
            self.f4_last.d.next = self.f3_last.q.val();
            self.f4_crc_n.d.next = self.f3_crc_n.q.val();
            self.f4_crc_last.d.next = self.f3_crc_last.q.val();
            self.f4_spill.d.next = self.f3_spill.q.val();
            self.f4_icrc.d.next = self.icrc.val();
            // OUT.
            self.o_v.d.next = self.f4_v.q.val();
            self.o_data.d.next = self.f4_data.q.val();
            if self.f4_crc_last.q.val() {
                self.o_data.d.next = self.f4_data.q.val() | self.ins.val().get_bits::<512>(0);
                self.o_spill.d.next = self.ins.val().get_bits::<32>(512);
            }
            if self.f4_spill.q.val() {
                self.o_data.d.next = self.f4_data.q.val() | bit_cast::<512, 32>(self.o_spill.q.val());
            }
            self.o_keep.d.next = self.f4_keep.q.val();
            self.o_last.d.next = self.f4_last.q.val();
        }
        self.m_axis.tdata.next = self.o_data.q.val();
        self.m_axis.tkeep.next = self.o_keep.q.val();
        self.m_axis.tlast.next = self.o_last.q.val();
        self.m_axis.tvalid.next = self.o_v.q.val();
    }
}
