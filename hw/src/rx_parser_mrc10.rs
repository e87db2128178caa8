//! MRC 1.0 transport header parser: the BTH and the header chain its
//! opcode selects (METH, TSETH, RETH, ImmDt, AETH, SETH + CC_STATE, NETH,
//! PETH, ERTH, EETH), decoded once into one named word
//! ([`Mrc10RxHeader`]), with every length checked before a field is
//! trusted and a typed drop reason. See `docs/hw/mrc10-wire.md`.
//!
//! Scope: the part of `proto::wire::mrc10::frame::parse_frame` after
//! `parse_outer` (Ethernet / IP / UDP / ICRC, which the legacy front end
//! `hw::rx_parser` already checks and which MRC 1.0 leaves unchanged):
//! `parse_transport` plus the pad and payload rules. Input: the first 64
//! bytes of the transport (the BTH onwards; every MRC 1.0 chain fits in
//! 64 bytes, the longest being BTH + ERTH + EETH = 64), its length (UDP
//! length less UDP header and ICRC) and the trimmed class. Output, two
//! cycles later: `out_valid` with the decoded word, or `out_drop` with
//! the reason (the numbering of `hw::rx_parser::reason`:
//! `proto::wire::WireErrorKind` index + 1), for one cycle. A frame per
//! cycle, no state besides the two pipeline stages: a malformed input
//! cannot hang it.

use rust_hdl::prelude::*;

use crate::param::Param;
use crate::rx_parser::ByteRev;

/// Bytes of transport the block sees: every MRC 1.0 header chain ends
/// within them ([`chain::EETH_END`] is the longest).
pub const WINDOW_BYTES: usize = 64;
/// The window in bits.
pub const WINDOW_BITS: usize = 8 * WINDOW_BYTES;

/// Drop reasons on `out_reason`: `proto::wire::WireErrorKind` index + 1
/// (the test checks each against the enum), 0 = accepted.
pub mod reason {
    pub const OK: u64 = 0;
    pub const TRUNCATED: u64 = 1;
    pub const UNKNOWN_OPCODE: u64 = 10;
    pub const BAD_TRANSPORT_VERSION: u64 = 11;
    pub const BAD_PAD_COUNT: u64 = 12;
    pub const UNKNOWN_NACK_REASON: u64 = 20;
    pub const UNKNOWN_ENDPOINT_OP: u64 = 21;
    pub const BAD_SKIP_MODE: u64 = 22;
    pub const UNKNOWN_EV_FORMAT: u64 = 23;
    pub const ENDPOINT_QP_MISMATCH: u64 = 24;
    pub const UNEXPECTED_TIMESTAMP: u64 = 25;
    pub const UNEXPECTED_PAYLOAD: u64 = 26;
}

/// The MRC 1.0 BTH opcodes (`proto::wire::mrc10::Opcode`; the test checks
/// each).
pub mod opcode {
    pub const WRITE_FIRST: u64 = 0xC6;
    pub const WRITE_MIDDLE: u64 = 0xC7;
    pub const WRITE_LAST: u64 = 0xC8;
    pub const WRITE_LAST_IMM: u64 = 0xC9;
    pub const WRITE_ONLY: u64 = 0xCA;
    pub const WRITE_ONLY_IMM: u64 = 0xCB;
    pub const ACK: u64 = 0xD1;
    pub const ENDPOINT_REQ: u64 = 0xD8;
    pub const ENDPOINT_RESP: u64 = 0xD9;
    pub const SACK: u64 = 0xDC;
    pub const NACK: u64 = 0xDD;
    pub const PROBE: u64 = 0xDE;
}

/// Header lengths in bytes (`HEADER_LEN` of each `proto::wire::mrc10`
/// module and of the shared RETH / ImmDt / AETH; the test checks each).
pub mod hlen {
    pub const BTH: usize = 12;
    pub const METH: usize = 4;
    pub const TSETH: usize = 4;
    pub const RETH: usize = 16;
    pub const IMMDT: usize = 4;
    pub const AETH: usize = 4;
    pub const SETH: usize = 28;
    pub const CC_STATE: usize = 8;
    pub const NETH: usize = 20;
    pub const PETH: usize = 16;
    pub const ERTH: usize = 16;
    pub const EETH: usize = 36;
}

/// Where each header starts and each chain ends, in transport bytes (BTH
/// byte 0 = 0). The opcode decides the chain; only TS (a TSETH before the
/// RETH) and the ImmDt opcodes move a WRITE's later headers, and only an
/// EV Probe endpoint operation adds the EETH.
pub mod chain {
    use super::hlen::*;
    pub const AFTER_BTH: usize = BTH;
    pub const METH_AT: usize = AFTER_BTH;
    pub const TSETH_AT: usize = METH_AT + METH;
    /// RETH without / with a TSETH before it.
    pub const RETH_AT: usize = METH_AT + METH;
    pub const RETH_AT_TS: usize = RETH_AT + TSETH;
    pub const IMM_AT: usize = RETH_AT + RETH;
    pub const IMM_AT_TS: usize = RETH_AT_TS + RETH;
    pub const AETH_AT: usize = AFTER_BTH;
    pub const SETH_AT: usize = AFTER_BTH;
    pub const CC_STATE_AT: usize = SETH_AT + SETH;
    pub const NETH_AT: usize = AFTER_BTH;
    pub const PETH_AT: usize = AFTER_BTH;
    pub const ERTH_AT: usize = AFTER_BTH;
    pub const EETH_AT: usize = ERTH_AT + ERTH;

    /// A WRITE without TSETH or ImmDt; with one of them; with both.
    pub const WRITE_END: usize = IMM_AT;
    pub const WRITE_END_ONE: usize = IMM_AT + IMMDT;
    pub const WRITE_END_BOTH: usize = IMM_AT_TS + IMMDT;
    pub const ACK_END: usize = AETH_AT + AETH;
    /// The SETH alone (its skip mode is checked before the CC_STATE's
    /// length, as the golden parser does).
    pub const SETH_END: usize = CC_STATE_AT;
    pub const SACK_END: usize = CC_STATE_AT + CC_STATE;
    pub const NACK_END: usize = NETH_AT + NETH;
    pub const PROBE_END: usize = PETH_AT + PETH;
    pub const ERTH_END: usize = EETH_AT;
    pub const EETH_END: usize = EETH_AT + EETH;
}
const _: () = assert!(chain::EETH_END <= WINDOW_BYTES && chain::SACK_END <= WINDOW_BYTES);
const _: () = assert!(chain::WRITE_END_BOTH <= WINDOW_BYTES);

/// Bit offset, in the byte-reversed window (transport byte 0 in the top
/// byte), of a field that is the big-endian integer of `bytes` bytes at
/// `byte`, shifted right by `shift`: a big-endian field is a contiguous
/// slice there.
pub const fn at(byte: usize, bytes: usize, shift: usize) -> usize {
    WINDOW_BITS - 8 * (byte + bytes) + shift
}

/// Accessors `get_value_w_<field>` on the window for every wire field the
/// block reads, defined once here from [`chain`] and the header layouts
/// of `proto::wire::mrc10` (`#[hdl_gen]` turns a Rust const path into a
/// signal name but expands `get_value_<f>` into the slice
/// `x[(offset)+:(width)]` using `get_my_offset_<f>` / `get_my_width_<f>`,
/// as `contract_rows` does for the contract's rows).
macro_rules! window_fields {
    ($($(#[$doc:meta])* $name:ident : $bits:literal @ ($byte:expr, $bytes:expr, $shift:expr);)*) => {
        paste::paste! {
            /// Field accessors on the byte-reversed transport window.
            pub trait WindowFields {
                $(
                    $(#[$doc])*
                    fn [<get_value_w_ $name>](&self) -> Bits<$bits>;
                    /// Write the field, keeping the other bits (the TX
                    /// builder's side).
                    fn [<set_value_w_ $name>](&mut self, value: Bits<$bits>);
                    fn [<get_my_width_w_ $name>](&self) -> usize {
                        $bits
                    }
                    fn [<get_my_offset_w_ $name>](&self) -> u32 {
                        at($byte, $bytes, $shift) as u32
                    }
                )*
            }
            impl WindowFields for Bits<WINDOW_BITS> {
                $(
                    fn [<get_value_w_ $name>](&self) -> Bits<$bits> {
                        self.get_bits::<$bits>(at($byte, $bytes, $shift))
                    }
                    fn [<set_value_w_ $name>](&mut self, value: Bits<$bits>) {
                        self.set_bits::<$bits>(at($byte, $bytes, $shift), value)
                    }
                )*
            }
            /// Every field: name, width, bit offset (the test checks each
            /// against `proto::wire::mrc10`'s emitters).
            pub const WINDOW_FIELDS: &[(&str, usize, usize)] = &[
                $((stringify!($name), $bits, at($byte, $bytes, $shift)),)*
            ];
        }
    };
}

use chain::*;

window_fields! {
    // BTH: byte 0 opcode; byte 1 SE, M, PadCnt, TVer; 2-3 P_Key; byte 4
    // FECN, BECN; 5-7 DestQP; byte 8 AckReq, retransmission, TS; 9-11 PSN.
    opcode: 8 @ (0, 1, 0);
    se: 1 @ (1, 1, 7);
    mig: 1 @ (1, 1, 6);
    pad: 2 @ (1, 1, 4);
    tver: 4 @ (1, 1, 0);
    pkey: 16 @ (2, 2, 0);
    fecn: 1 @ (4, 1, 7);
    becn: 1 @ (4, 1, 6);
    dest_qp: 24 @ (5, 3, 0);
    ack_req: 1 @ (8, 1, 7);
    retransmit: 1 @ (8, 1, 5);
    ts: 1 @ (8, 1, 4);
    psn: 24 @ (9, 3, 0);
    // METH: RQ MSN, MSN.
    rq_msn: 16 @ (METH_AT, 2, 0);
    msn: 16 @ (METH_AT + 2, 2, 0);
    // TSETH: tx timestamp; byte 2 resolution bit 7, format bits 3-0.
    tx_ts: 16 @ (TSETH_AT, 2, 0);
    ts_res: 1 @ (TSETH_AT + 2, 1, 7);
    ts_format: 4 @ (TSETH_AT + 2, 1, 0);
    // RETH (VA, R_Key, DMA length) and ImmDt, without and with a TSETH.
    va: 64 @ (RETH_AT, 8, 0);
    rkey: 32 @ (RETH_AT + 8, 4, 0);
    dma_len: 32 @ (RETH_AT + 12, 4, 0);
    imm: 32 @ (IMM_AT, 4, 0);
    va_ts: 64 @ (RETH_AT_TS, 8, 0);
    rkey_ts: 32 @ (RETH_AT_TS + 8, 4, 0);
    dma_len_ts: 32 @ (RETH_AT_TS + 12, 4, 0);
    imm_ts: 32 @ (IMM_AT_TS, 4, 0);
    // AETH: syndrome, MSN.
    syndrome: 8 @ (AETH_AT, 1, 0);
    aeth_msn: 24 @ (AETH_AT + 1, 3, 0);
    // SETH: byte 0 m (bits 7-6) and pr (bit 5); ack PSN offset; then the
    // EV, contexts, PSN and cc byte at the offsets the NETH uses too
    // (decoded once, `ctl_*`); MPR, SACK offset, bitmap.
    skip_mode: 2 @ (SETH_AT, 1, 6);
    probe_response: 1 @ (SETH_AT, 1, 5);
    ack_psn_offset: 16 @ (SETH_AT + 2, 2, 0);
    ctl_ev: 32 @ (SETH_AT + 4, 4, 0);
    ctl_sctx: 16 @ (SETH_AT + 8, 2, 0);
    ctl_rctx: 16 @ (SETH_AT + 10, 2, 0);
    ctl_psn: 24 @ (SETH_AT + 13, 3, 0);
    ctl_cc_type: 4 @ (SETH_AT + 16, 1, 4);
    ctl_cc_flags: 4 @ (SETH_AT + 16, 1, 0);
    mpr: 8 @ (SETH_AT + 17, 1, 0);
    sack_offset: 16 @ (SETH_AT + 18, 2, 0);
    bitmap: 64 @ (SETH_AT + 20, 8, 0);
    // CC_STATE: echo timestamp; restore (bit 15) and OOO count (14-0);
    // cwnd penalty (byte 4 bits 6-0); received bytes (24).
    echo_ts: 16 @ (CC_STATE_AT, 2, 0);
    restore: 1 @ (CC_STATE_AT + 2, 1, 7);
    ooo_count: 15 @ (CC_STATE_AT + 2, 2, 0);
    cwnd_penalty: 7 @ (CC_STATE_AT + 4, 1, 0);
    rcvd_bytes: 24 @ (CC_STATE_AT + 5, 3, 0);
    // NETH: reason, vendor info; EV, contexts, PSN, cc byte as the SETH;
    // timestamp.
    nack_reason: 8 @ (NETH_AT, 1, 0);
    vendor_info: 16 @ (NETH_AT + 2, 2, 0);
    nack_ts: 16 @ (NETH_AT + 18, 2, 0);
    // PETH: probe id, contexts, timestamp.
    probe_id: 16 @ (PETH_AT, 2, 0);
    probe_sctx: 16 @ (PETH_AT + 2, 2, 0);
    probe_rctx: 16 @ (PETH_AT + 4, 2, 0);
    probe_ts: 16 @ (PETH_AT + 6, 2, 0);
    // ERTH: operation, request id, port status mask, timestamp.
    ep_op: 8 @ (ERTH_AT, 1, 0);
    /// Bits 7-1 of the operation: any set is undefined (0 and 1 exist).
    ep_op_hi: 7 @ (ERTH_AT, 1, 1);
    request_id: 16 @ (ERTH_AT + 2, 2, 0);
    port_status_mask: 32 @ (ERTH_AT + 4, 4, 0);
    ep_ts: 16 @ (ERTH_AT + 8, 2, 0);
    // EETH: EV format, port, service time, the 32-byte EV (big-endian).
    ev_format: 8 @ (EETH_AT, 1, 0);
    /// Bits 7-2 of the EV format: any set is undefined (0-3 exist).
    ev_format_hi: 6 @ (EETH_AT, 1, 2);
    ev_port: 8 @ (EETH_AT + 1, 1, 0);
    service_time: 16 @ (EETH_AT + 2, 2, 0);
    eeth_ev: 256 @ (EETH_AT + 4, 32, 0);
}

/// The SETH / NETH enum values the golden parser accepts.
pub mod value {
    /// SETH m: None 0, SkipOnce 1, AlwaysSkip 2; 3 is undefined.
    pub const SKIP_MODE_UNDEFINED: u64 = 3;
    /// NETH reason codes (`proto::wire::mrc10::NackReason`).
    pub const NACK_REASONS: [u64; 7] = [0x01, 0x02, 0x06, 0x07, 0x0A, 0x0B, 0x19];
    /// ERTH operations: Port Status Update 0, EV Probe 1 (the only one
    /// followed by an EETH).
    pub const EP_OP_EV_PROBE: u64 = 1;
    /// The endpoint QP (`proto::wire::mrc10::choices::ENDPOINT_QPN`).
    pub const ENDPOINT_QPN: u64 = 0x2;
}

/// The decoded header word: every field the core may need, by name. A
/// field is meaningful when the opcode carries its header (the flags say
/// which); the others hold whatever bytes were at that place.
#[derive(LogicStruct, Default, Clone, Copy, PartialEq, Debug)]
pub struct Mrc10RxHeader {
    // BTH.
    pub opcode: Bits<8>,
    pub se: Bit,
    pub mig: Bit,
    pub pad: Bits<2>,
    pub pkey: Bits<16>,
    pub fecn: Bit,
    pub becn: Bit,
    pub dest_qp: Bits<24>,
    pub ack_req: Bit,
    pub retransmit: Bit,
    pub ts: Bit,
    pub psn: Bits<24>,
    // Header-chain flags, decoded from the opcode (and TS, ERTH op).
    pub is_write: Bit,
    pub has_imm: Bit,
    pub is_ack: Bit,
    pub is_sack: Bit,
    pub is_nack: Bit,
    pub is_probe: Bit,
    pub is_endpoint: Bit,
    pub has_eeth: Bit,
    /// The input's trimmed class, passed through (PadCnt was ignored).
    pub trimmed: Bit,
    // METH.
    pub rq_msn: Bits<16>,
    pub msn: Bits<16>,
    // TSETH.
    pub tx_ts: Bits<16>,
    pub ts_res: Bit,
    pub ts_format: Bits<4>,
    // RETH (from its place with or without the TSETH) and ImmDt.
    pub va: Bits<64>,
    pub rkey: Bits<32>,
    pub dma_len: Bits<32>,
    pub imm: Bits<32>,
    // AETH.
    pub syndrome: Bits<8>,
    pub aeth_msn: Bits<24>,
    // SETH.
    pub skip_mode: Bits<2>,
    pub probe_response: Bit,
    pub ack_psn_offset: Bits<16>,
    pub mpr: Bits<8>,
    pub sack_offset: Bits<16>,
    pub bitmap: Bits<64>,
    // SETH and NETH: the same bytes in both.
    pub ctl_ev: Bits<32>,
    pub ctl_sctx: Bits<16>,
    pub ctl_rctx: Bits<16>,
    /// Cumulative ACK PSN (SACK) or NACK PSN.
    pub ctl_psn: Bits<24>,
    pub ctl_cc_type: Bits<4>,
    pub ctl_cc_flags: Bits<4>,
    // CC_STATE.
    pub echo_ts: Bits<16>,
    pub restore: Bit,
    pub ooo_count: Bits<15>,
    pub cwnd_penalty: Bits<7>,
    pub rcvd_bytes: Bits<24>,
    // NETH.
    pub nack_reason: Bits<8>,
    pub vendor_info: Bits<16>,
    pub nack_ts: Bits<16>,
    // PETH.
    pub probe_id: Bits<16>,
    pub probe_sctx: Bits<16>,
    pub probe_rctx: Bits<16>,
    pub probe_ts: Bits<16>,
    // ERTH.
    pub ep_op: Bits<8>,
    pub request_id: Bits<16>,
    pub port_status_mask: Bits<32>,
    pub ep_ts: Bits<16>,
    // EETH.
    pub ev_format: Bits<8>,
    pub ev_port: Bits<8>,
    pub service_time: Bits<16>,
    pub eeth_ev: Bits<256>,
    /// Payload offset in the transport (the chain's length) and length
    /// (pad excluded).
    pub payload_off: Bits<7>,
    pub payload_len: Bits<16>,
}

/// The parser. Inputs are sampled when `in_valid` is high; two cycles
/// later `out_valid` (accepted, `out_hdr` valid) or `out_drop` (with
/// `out_reason`) is high for one cycle.
#[derive(LogicBlock, Default)]
pub struct RxParserMrc10 {
    pub clock: Signal<In, Clock>,
    pub in_valid: Signal<In, Bit>,
    /// The first [`WINDOW_BYTES`] of the transport, byte 0 (the opcode) in
    /// bits 7-0 (AXI-Stream order); bytes at or past `in_len` are ignored.
    pub in_data: Signal<In, Bits<WINDOW_BITS>>,
    /// Transport bytes: UDP length less the UDP header and the ICRC.
    pub in_len: Signal<In, Bits<16>>,
    /// The DSCP class is TRIMMED or TRIMMED_LASTHOP.
    pub in_trimmed: Signal<In, Bit>,
    pub out_valid: Signal<Out, Bit>,
    pub out_drop: Signal<Out, Bit>,
    pub out_reason: Signal<Out, Bits<5>>,
    pub out_hdr: Signal<Out, Mrc10RxHeader>,
    rev: ByteRev<WINDOW_BITS>,
    // Stage 1 -> 2 registers: the window, the length, and the facts the
    // opcode decides.
    s1_valid: DFF<Bit>,
    s1_win: DFF<Bits<WINDOW_BITS>>,
    s1_len: DFF<Bits<16>>,
    s1_trimmed: DFF<Bit>,
    s1_known: DFF<Bit>,
    s1_write: DFF<Bit>,
    s1_imm: DFF<Bit>,
    s1_ack: DFF<Bit>,
    s1_sack: DFF<Bit>,
    s1_nack: DFF<Bit>,
    s1_probe: DFF<Bit>,
    s1_ep: DFF<Bit>,
    s1_eeth: DFF<Bit>,
    s1_k_tver: DFF<Bit>,
    s1_k_qp: DFF<Bit>,
    s1_k_ts: DFF<Bit>,
    s1_k_enum1: DFF<Bit>,
    s1_reason_enum1: DFF<Bits<5>>,
    s1_k_enum2: DFF<Bit>,
    s1_k_pad_ctl: DFF<Bit>,
    /// End of the whole chain, and the chain end plus the effective pad:
    /// the least length that holds both.
    s1_end: DFF<Bits<16>>,
    s1_need: DFF<Bits<16>>,
    /// The length compares, made in stage 1 so that stage 2 only
    /// prioritises registered bits (a compare ahead of the priority was
    /// the block's deepest path, 9 levels): shorter than the BTH, than
    /// the first checked header's end (`end1`), than the chain, than the
    /// chain and its pad; not exactly the chain.
    s1_lt_bth: DFF<Bit>,
    s1_lt_end1: DFF<Bit>,
    s1_lt_end: DFF<Bit>,
    s1_lt_need: DFF<Bit>,
    s1_ne_end: DFF<Bit>,
    // Stage 1 combinational.
    op: Signal<Local, Bits<8>>,
    is_write: Signal<Local, Bit>,
    is_ep: Signal<Local, Bit>,
    is_imm: Signal<Local, Bit>,
    eeth: Signal<Local, Bit>,
    chain_end: Signal<Local, Bits<16>>,
    /// End of the first header after the BTH whose enum field is checked
    /// (or of the whole chain when none is).
    end1: Signal<Local, Bits<16>>,
    pad_eff: Signal<Local, Bits<16>>,
    need: Signal<Local, Bits<16>>,
    // Stage 2 combinational.
    rem: Signal<Local, Bits<16>>,
    // Output registers.
    valid_q: DFF<Bit>,
    drop_q: DFF<Bit>,
    reason_q: DFF<Bits<5>>,
    hdr_q: DFF<Mrc10RxHeader>,
    // Named constants (Verilog localparams).
    k_write_first: Param<8, { opcode::WRITE_FIRST }>,
    k_write_middle: Param<8, { opcode::WRITE_MIDDLE }>,
    k_write_last: Param<8, { opcode::WRITE_LAST }>,
    k_write_last_imm: Param<8, { opcode::WRITE_LAST_IMM }>,
    k_write_only: Param<8, { opcode::WRITE_ONLY }>,
    k_write_only_imm: Param<8, { opcode::WRITE_ONLY_IMM }>,
    k_ack: Param<8, { opcode::ACK }>,
    k_ep_req: Param<8, { opcode::ENDPOINT_REQ }>,
    k_ep_resp: Param<8, { opcode::ENDPOINT_RESP }>,
    k_sack: Param<8, { opcode::SACK }>,
    k_nack: Param<8, { opcode::NACK }>,
    k_probe: Param<8, { opcode::PROBE }>,
    k_ep_qpn: Param<24, { value::ENDPOINT_QPN }>,
    k_skip_undef: Param<2, { value::SKIP_MODE_UNDEFINED }>,
    k_nr0: Param<8, { value::NACK_REASONS[0] }>,
    k_nr1: Param<8, { value::NACK_REASONS[1] }>,
    k_nr2: Param<8, { value::NACK_REASONS[2] }>,
    k_nr3: Param<8, { value::NACK_REASONS[3] }>,
    k_nr4: Param<8, { value::NACK_REASONS[4] }>,
    k_nr5: Param<8, { value::NACK_REASONS[5] }>,
    k_nr6: Param<8, { value::NACK_REASONS[6] }>,
    k_ev_probe: Param<8, { value::EP_OP_EV_PROBE }>,
    k_bth_end: Param<16, { hlen::BTH as u64 }>,
    k_write_end: Param<16, { WRITE_END as u64 }>,
    k_write_end_one: Param<16, { WRITE_END_ONE as u64 }>,
    k_write_end_both: Param<16, { WRITE_END_BOTH as u64 }>,
    k_ack_end: Param<16, { ACK_END as u64 }>,
    k_seth_end: Param<16, { SETH_END as u64 }>,
    k_sack_end: Param<16, { SACK_END as u64 }>,
    k_nack_end: Param<16, { NACK_END as u64 }>,
    k_probe_end: Param<16, { PROBE_END as u64 }>,
    k_erth_end: Param<16, { ERTH_END as u64 }>,
    k_eeth_end: Param<16, { EETH_END as u64 }>,
    r_truncated: Param<5, { reason::TRUNCATED }>,
    r_unknown_opcode: Param<5, { reason::UNKNOWN_OPCODE }>,
    r_tver: Param<5, { reason::BAD_TRANSPORT_VERSION }>,
    r_pad: Param<5, { reason::BAD_PAD_COUNT }>,
    r_nack_reason: Param<5, { reason::UNKNOWN_NACK_REASON }>,
    r_ep_op: Param<5, { reason::UNKNOWN_ENDPOINT_OP }>,
    r_skip_mode: Param<5, { reason::BAD_SKIP_MODE }>,
    r_ev_format: Param<5, { reason::UNKNOWN_EV_FORMAT }>,
    r_qp: Param<5, { reason::ENDPOINT_QP_MISMATCH }>,
    r_ts: Param<5, { reason::UNEXPECTED_TIMESTAMP }>,
    r_payload: Param<5, { reason::UNEXPECTED_PAYLOAD }>,
}

impl Logic for RxParserMrc10 {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            s1_valid,
            s1_win,
            s1_len,
            s1_trimmed,
            s1_known,
            s1_write,
            s1_imm,
            s1_ack,
            s1_sack,
            s1_nack,
            s1_probe,
            s1_ep,
            s1_eeth,
            s1_k_tver,
            s1_k_qp,
            s1_k_ts,
            s1_k_enum1,
            s1_reason_enum1,
            s1_k_enum2,
            s1_k_pad_ctl,
            s1_end,
            s1_need,
            s1_lt_bth,
            s1_lt_end1,
            s1_lt_end,
            s1_lt_need,
            s1_ne_end,
            valid_q,
            drop_q,
            reason_q,
            hdr_q
        );
        // Stage 1: byte-reverse (wiring) and decode what the opcode
        // decides; each check is its own bit so stage 2 only prioritises.
        self.rev.i.next = self.in_data.val();
        self.s1_valid.d.next = self.in_valid.val();
        self.s1_win.d.next = self.rev.o.val();
        self.s1_len.d.next = self.in_len.val();
        self.s1_trimmed.d.next = self.in_trimmed.val();
        self.op.next = self.rev.o.val().get_value_w_opcode();
        self.is_write.next = (self.op.val() == self.k_write_first.val())
            | (self.op.val() == self.k_write_middle.val())
            | (self.op.val() == self.k_write_last.val())
            | (self.op.val() == self.k_write_last_imm.val())
            | (self.op.val() == self.k_write_only.val())
            | (self.op.val() == self.k_write_only_imm.val());
        self.is_ep.next = (self.op.val() == self.k_ep_req.val()) | (self.op.val() == self.k_ep_resp.val());
        self.s1_write.d.next = self.is_write.val();
        self.is_imm.next =
            (self.op.val() == self.k_write_last_imm.val()) | (self.op.val() == self.k_write_only_imm.val());
        self.s1_imm.d.next = self.is_imm.val();
        self.s1_ack.d.next = self.op.val() == self.k_ack.val();
        self.s1_sack.d.next = self.op.val() == self.k_sack.val();
        self.s1_nack.d.next = self.op.val() == self.k_nack.val();
        self.s1_probe.d.next = self.op.val() == self.k_probe.val();
        self.s1_ep.d.next = self.is_ep.val();
        self.s1_known.d.next = self.is_write.val()
            | self.is_ep.val()
            | (self.op.val() == self.k_ack.val())
            | (self.op.val() == self.k_sack.val())
            | (self.op.val() == self.k_nack.val())
            | (self.op.val() == self.k_probe.val());
        self.s1_k_tver.d.next = self.rev.o.val().get_value_w_tver().any();
        // Endpoint operations exactly on the endpoint QP.
        self.s1_k_qp.d.next = self.is_ep.val() != (self.rev.o.val().get_value_w_dest_qp() == self.k_ep_qpn.val());
        // TS (a TSETH) only on data packets.
        self.s1_k_ts.d.next = self.rev.o.val().get_value_w_ts().any() & !self.is_write.val();
        self.eeth.next = self.is_ep.val() & (self.rev.o.val().get_value_w_ep_op() == self.k_ev_probe.val());
        self.s1_eeth.d.next = self.eeth.val();
        // The enum field of the first header after the BTH.
        self.s1_k_enum1.d.next = false;
        self.s1_reason_enum1.d.next = self.r_skip_mode.val();
        if self.op.val() == self.k_sack.val() {
            self.s1_k_enum1.d.next = self.rev.o.val().get_value_w_skip_mode() == self.k_skip_undef.val();
        }
        if self.op.val() == self.k_nack.val() {
            self.s1_reason_enum1.d.next = self.r_nack_reason.val();
            self.s1_k_enum1.d.next = !((self.rev.o.val().get_value_w_nack_reason() == self.k_nr0.val())
                | (self.rev.o.val().get_value_w_nack_reason() == self.k_nr1.val())
                | (self.rev.o.val().get_value_w_nack_reason() == self.k_nr2.val())
                | (self.rev.o.val().get_value_w_nack_reason() == self.k_nr3.val())
                | (self.rev.o.val().get_value_w_nack_reason() == self.k_nr4.val())
                | (self.rev.o.val().get_value_w_nack_reason() == self.k_nr5.val())
                | (self.rev.o.val().get_value_w_nack_reason() == self.k_nr6.val()));
        }
        if self.is_ep.val() {
            self.s1_reason_enum1.d.next = self.r_ep_op.val();
            // Operations 0 and 1 are defined: any bit above bit 0 is not.
            self.s1_k_enum1.d.next = self.rev.o.val().get_value_w_ep_op_hi().any();
        }
        // The EETH's EV format: 0-3 defined.
        self.s1_k_enum2.d.next = self.eeth.val() & self.rev.o.val().get_value_w_ev_format_hi().any();
        // Where the chain ends, and where its first checked header ends.
        self.chain_end.next = self.k_write_end.val();
        self.end1.next = self.k_write_end.val();
        if self.is_write.val() {
            if self.rev.o.val().get_value_w_ts().any() & self.is_imm.val() {
                self.chain_end.next = self.k_write_end_both.val();
            } else if self.rev.o.val().get_value_w_ts().any() | self.is_imm.val() {
                self.chain_end.next = self.k_write_end_one.val();
            }
            self.end1.next = self.chain_end.val();
        }
        if self.op.val() == self.k_ack.val() {
            self.chain_end.next = self.k_ack_end.val();
            self.end1.next = self.k_ack_end.val();
        }
        if self.op.val() == self.k_sack.val() {
            self.chain_end.next = self.k_sack_end.val();
            self.end1.next = self.k_seth_end.val();
        }
        if self.op.val() == self.k_nack.val() {
            self.chain_end.next = self.k_nack_end.val();
            self.end1.next = self.k_nack_end.val();
        }
        if self.op.val() == self.k_probe.val() {
            self.chain_end.next = self.k_probe_end.val();
            self.end1.next = self.k_probe_end.val();
        }
        if self.is_ep.val() {
            self.chain_end.next = self.k_erth_end.val();
            if self.eeth.val() {
                self.chain_end.next = self.k_eeth_end.val();
            }
            self.end1.next = self.k_erth_end.val();
        }
        self.s1_end.d.next = self.chain_end.val();
        // A trimmed WRITE lost its pad with its payload: PadCnt ignored.
        self.pad_eff.next = bit_cast::<16, 2>(self.rev.o.val().get_value_w_pad());
        if self.is_write.val() & self.in_trimmed.val() {
            self.pad_eff.next = 0.into();
        }
        self.need.next = self.chain_end.val() + self.pad_eff.val();
        self.s1_need.d.next = self.need.val();
        self.s1_lt_bth.d.next = self.in_len.val() < self.k_bth_end.val();
        self.s1_lt_end1.d.next = self.in_len.val() < self.end1.val();
        self.s1_lt_end.d.next = self.in_len.val() < self.chain_end.val();
        self.s1_lt_need.d.next = self.in_len.val() < self.need.val();
        self.s1_ne_end.d.next = self.in_len.val() != self.chain_end.val();
        // Only data packets may carry a pad.
        self.s1_k_pad_ctl.d.next = !self.is_write.val() & self.rev.o.val().get_value_w_pad().any();

        // Stage 2: the first failure in the golden parser's order
        // (`parse_transport`: BTH length, opcode, TVer, endpoint QP, TS;
        // then each header's length before its enum field; then PadCnt
        // and payload), and the record.
        self.rem.next = self.s1_len.q.val() - self.s1_need.q.val();
        self.valid_q.d.next = false;
        self.drop_q.d.next = false;
        self.reason_q.d.next = 0.into();
        if self.s1_valid.q.val() {
            self.drop_q.d.next = true;
            if self.s1_lt_bth.q.val() {
                self.reason_q.d.next = self.r_truncated.val();
            } else if !self.s1_known.q.val() {
                self.reason_q.d.next = self.r_unknown_opcode.val();
            } else if self.s1_k_tver.q.val() {
                self.reason_q.d.next = self.r_tver.val();
            } else if self.s1_k_qp.q.val() {
                self.reason_q.d.next = self.r_qp.val();
            } else if self.s1_k_ts.q.val() {
                self.reason_q.d.next = self.r_ts.val();
            } else if self.s1_lt_end1.q.val() {
                self.reason_q.d.next = self.r_truncated.val();
            } else if self.s1_k_enum1.q.val() {
                self.reason_q.d.next = self.s1_reason_enum1.q.val();
            } else if self.s1_lt_end.q.val() {
                self.reason_q.d.next = self.r_truncated.val();
            } else if self.s1_k_enum2.q.val() {
                self.reason_q.d.next = self.r_ev_format.val();
            } else if self.s1_lt_need.q.val() | self.s1_k_pad_ctl.q.val() {
                self.reason_q.d.next = self.r_pad.val();
            } else if !self.s1_write.q.val() & self.s1_ne_end.q.val() {
                self.reason_q.d.next = self.r_payload.val();
            } else {
                self.drop_q.d.next = false;
                self.valid_q.d.next = true;
            }
        }
        // The decoded word: wiring from the window, but for the RETH and
        // ImmDt, which a TSETH moves by four bytes.
        self.hdr_q.d.next.opcode = self.s1_win.q.val().get_value_w_opcode();
        self.hdr_q.d.next.se = self.s1_win.q.val().get_value_w_se().any();
        self.hdr_q.d.next.mig = self.s1_win.q.val().get_value_w_mig().any();
        self.hdr_q.d.next.pad = self.s1_win.q.val().get_value_w_pad();
        self.hdr_q.d.next.pkey = self.s1_win.q.val().get_value_w_pkey();
        self.hdr_q.d.next.fecn = self.s1_win.q.val().get_value_w_fecn().any();
        self.hdr_q.d.next.becn = self.s1_win.q.val().get_value_w_becn().any();
        self.hdr_q.d.next.dest_qp = self.s1_win.q.val().get_value_w_dest_qp();
        self.hdr_q.d.next.ack_req = self.s1_win.q.val().get_value_w_ack_req().any();
        self.hdr_q.d.next.retransmit = self.s1_win.q.val().get_value_w_retransmit().any();
        self.hdr_q.d.next.ts = self.s1_win.q.val().get_value_w_ts().any();
        self.hdr_q.d.next.psn = self.s1_win.q.val().get_value_w_psn();
        self.hdr_q.d.next.is_write = self.s1_write.q.val();
        self.hdr_q.d.next.has_imm = self.s1_imm.q.val();
        self.hdr_q.d.next.is_ack = self.s1_ack.q.val();
        self.hdr_q.d.next.is_sack = self.s1_sack.q.val();
        self.hdr_q.d.next.is_nack = self.s1_nack.q.val();
        self.hdr_q.d.next.is_probe = self.s1_probe.q.val();
        self.hdr_q.d.next.is_endpoint = self.s1_ep.q.val();
        self.hdr_q.d.next.has_eeth = self.s1_eeth.q.val();
        self.hdr_q.d.next.trimmed = self.s1_trimmed.q.val();
        self.hdr_q.d.next.rq_msn = self.s1_win.q.val().get_value_w_rq_msn();
        self.hdr_q.d.next.msn = self.s1_win.q.val().get_value_w_msn();
        self.hdr_q.d.next.tx_ts = self.s1_win.q.val().get_value_w_tx_ts();
        self.hdr_q.d.next.ts_res = self.s1_win.q.val().get_value_w_ts_res().any();
        self.hdr_q.d.next.ts_format = self.s1_win.q.val().get_value_w_ts_format();
        if self.s1_win.q.val().get_value_w_ts().any() {
            self.hdr_q.d.next.va = self.s1_win.q.val().get_value_w_va_ts();
            self.hdr_q.d.next.rkey = self.s1_win.q.val().get_value_w_rkey_ts();
            self.hdr_q.d.next.dma_len = self.s1_win.q.val().get_value_w_dma_len_ts();
            self.hdr_q.d.next.imm = self.s1_win.q.val().get_value_w_imm_ts();
        } else {
            self.hdr_q.d.next.va = self.s1_win.q.val().get_value_w_va();
            self.hdr_q.d.next.rkey = self.s1_win.q.val().get_value_w_rkey();
            self.hdr_q.d.next.dma_len = self.s1_win.q.val().get_value_w_dma_len();
            self.hdr_q.d.next.imm = self.s1_win.q.val().get_value_w_imm();
        }
        self.hdr_q.d.next.syndrome = self.s1_win.q.val().get_value_w_syndrome();
        self.hdr_q.d.next.aeth_msn = self.s1_win.q.val().get_value_w_aeth_msn();
        self.hdr_q.d.next.skip_mode = self.s1_win.q.val().get_value_w_skip_mode();
        self.hdr_q.d.next.probe_response = self.s1_win.q.val().get_value_w_probe_response().any();
        self.hdr_q.d.next.ack_psn_offset = self.s1_win.q.val().get_value_w_ack_psn_offset();
        self.hdr_q.d.next.mpr = self.s1_win.q.val().get_value_w_mpr();
        self.hdr_q.d.next.sack_offset = self.s1_win.q.val().get_value_w_sack_offset();
        self.hdr_q.d.next.bitmap = self.s1_win.q.val().get_value_w_bitmap();
        self.hdr_q.d.next.ctl_ev = self.s1_win.q.val().get_value_w_ctl_ev();
        self.hdr_q.d.next.ctl_sctx = self.s1_win.q.val().get_value_w_ctl_sctx();
        self.hdr_q.d.next.ctl_rctx = self.s1_win.q.val().get_value_w_ctl_rctx();
        self.hdr_q.d.next.ctl_psn = self.s1_win.q.val().get_value_w_ctl_psn();
        self.hdr_q.d.next.ctl_cc_type = self.s1_win.q.val().get_value_w_ctl_cc_type();
        self.hdr_q.d.next.ctl_cc_flags = self.s1_win.q.val().get_value_w_ctl_cc_flags();
        self.hdr_q.d.next.echo_ts = self.s1_win.q.val().get_value_w_echo_ts();
        self.hdr_q.d.next.restore = self.s1_win.q.val().get_value_w_restore().any();
        self.hdr_q.d.next.ooo_count = self.s1_win.q.val().get_value_w_ooo_count();
        self.hdr_q.d.next.cwnd_penalty = self.s1_win.q.val().get_value_w_cwnd_penalty();
        self.hdr_q.d.next.rcvd_bytes = self.s1_win.q.val().get_value_w_rcvd_bytes();
        self.hdr_q.d.next.nack_reason = self.s1_win.q.val().get_value_w_nack_reason();
        self.hdr_q.d.next.vendor_info = self.s1_win.q.val().get_value_w_vendor_info();
        self.hdr_q.d.next.nack_ts = self.s1_win.q.val().get_value_w_nack_ts();
        self.hdr_q.d.next.probe_id = self.s1_win.q.val().get_value_w_probe_id();
        self.hdr_q.d.next.probe_sctx = self.s1_win.q.val().get_value_w_probe_sctx();
        self.hdr_q.d.next.probe_rctx = self.s1_win.q.val().get_value_w_probe_rctx();
        self.hdr_q.d.next.probe_ts = self.s1_win.q.val().get_value_w_probe_ts();
        self.hdr_q.d.next.ep_op = self.s1_win.q.val().get_value_w_ep_op();
        self.hdr_q.d.next.request_id = self.s1_win.q.val().get_value_w_request_id();
        self.hdr_q.d.next.port_status_mask = self.s1_win.q.val().get_value_w_port_status_mask();
        self.hdr_q.d.next.ep_ts = self.s1_win.q.val().get_value_w_ep_ts();
        self.hdr_q.d.next.ev_format = self.s1_win.q.val().get_value_w_ev_format();
        self.hdr_q.d.next.ev_port = self.s1_win.q.val().get_value_w_ev_port();
        self.hdr_q.d.next.service_time = self.s1_win.q.val().get_value_w_service_time();
        self.hdr_q.d.next.eeth_ev = self.s1_win.q.val().get_value_w_eeth_ev();
        self.hdr_q.d.next.payload_off = self.s1_end.q.val().get_bits::<7>(0);
        self.hdr_q.d.next.payload_len = self.rem.val();
        self.out_valid.next = self.valid_q.q.val();
        self.out_drop.next = self.drop_q.q.val();
        self.out_reason.next = self.reason_q.q.val();
        self.out_hdr.next = self.hdr_q.q.val();
    }
}
