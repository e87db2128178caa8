//! TX path glue of `MrcCore`: turns the requester's packet records (after
//! the congestion-control gate) and the ACK generator's records into
//! complete header requests for the TX builder, with the encapsulation of
//! the QP's peer, the EV chosen by the EV selector and the MRC extension
//! packed as `docs/protocol.md` section 12 lays it out; issues the payload
//! DMA read; reports every data packet sent to the retransmit engine.
//! See `docs/hw/tx_path.md`.
//!
//! Two sequencers, one per source, share the TX builder's request port
//! through a fixed-priority arbiter (ACKs first: they are small and
//! unblock the peer's window). Each handles one packet at a time:
//!
//! * data: take the record and ask the EV selector (cycle 0), get the EV
//!   (cycle 2), read the peer's address row and the (QP, EV) send
//!   sequence (cycle 3), build (cycle 4), hand over the header request
//!   to the data header FIFO and the payload read (cycle 5, or later
//!   under back-pressure): one packet every 6 cycles at best. The send
//!   record goes with the header as the builder takes it, which is when
//!   the packet is stamped (its send time). The FIFO ([`DATA_HDR_FIFO_DEPTH`] headers) lets the payload
//!   reads run ahead of the builder: a read is issued while the builder
//!   is still busy with earlier frames, as long as the core's payload
//!   FIFO has room for its beats ([`PAYLOAD_FIFO_BEATS`], counted here
//!   from the reads issued and the beats the builder took, `pl_taken`).
//!   With one read in flight per header slot of the builder (as without
//!   the FIFO) a 1 KiB packet waited a whole host read latency every
//!   three packets;
//! * ACK: take the record and read the QP's row (cycle 0), read the
//!   address row (1), build (2), hand over (3): one every 4 cycles. The
//!   EV prober's probe records take the same sequencer when no ACK record
//!   waits (an MRC 1.0 RELIABILITY_PROBE, or on the legacy wire an ACK
//!   with the legacy probe extension, on the probed EV, its value read
//!   from the sequencer's copy of the EV values with the QP's row).
//!
//! The TX builder itself issues one packet per cycle; this front end does
//! not yet (see the page for the gap and the plan).

use contract::config::{addr, table};
use contract::field::span;
use rust_hdl::prelude::*;

use crate::bus::{ConfigSink, DmaReadRequestSource};
use crate::contract_rows::{AddrRow, SqCtxRow, TableId};
use crate::ev_selector::VALUE_BITS;
use crate::param::Param;
use crate::rx_parser::ByteRev;
use crate::rx_parser_mrc10::{opcode as mrc10_opcode, Mrc10RxHeader, WindowFields, WINDOW_BITS as MRC10_WINDOW_BITS};
use crate::tx_header_mrc10::TxHeaderMrc10;

/// Data header requests the block holds between its data sequencer and
/// the TX builder (log2). Each is a packet whose payload read may be in
/// flight while the builder is busy: 16 cover a host read latency of
/// 1 us at the 1 KiB packets' 8.7 M/s (Little's law: 8.7), but 64-byte
/// packets at 25-30 M/s over a 500 ns read and the builder (about 200
/// cycles, 620 ns) need 16-19, what 16 held them to (docs/benchmarks.md,
/// "32 reads ahead and 64 join credits"): 32, with the payload FIFO's
/// room, not this, bounding larger packets.
pub const DATA_HDR_FIFO_BITS: usize = 5;
pub const DATA_HDR_FIFO_DEPTH: usize = 1 << DATA_HDR_FIFO_BITS;
/// 64-byte beats of the core's payload FIFO (between the DMA read port
/// and the TX builder; `hw::core`): the payload reads in flight, in
/// bytes, are at most this many beats (16 KiB, 12.1 KB being what 97 Gb/s
/// needs with 1 us of read latency, docs/hw/microarchitecture.md
/// section 2). A packet must not have more beats than this (no MTU
/// allows one: 8 KiB is 128): its header is offered only once its
/// payload is all in the FIFO (`TxPath::head_paid`), which it would not
/// fit.
pub const PAYLOAD_FIFO_BITS: usize = 8;
pub const PAYLOAD_FIFO_BEATS: u64 = 1 << PAYLOAD_FIFO_BITS;
/// Bits of the payload-beat reservation count: one packet's beats
/// (`ceil(65535 / 64)` at most) above a full FIFO.
pub const PL_RESERVED_BITS: usize = 12;
const _: () = assert!(PAYLOAD_FIFO_BEATS + 1024 < 1 << PL_RESERVED_BITS);

/// Bits of an address-table row the block keeps per peer (MAC and IP).
pub const PEER_ROW_BITS: usize = span(&[addr::MAC, addr::IP_LO, addr::IP_HI]);

/// What the MRC 1.0 dialect puts in the outer headers and the TSETH
/// (`proto::wire::mrc10::choices` and `DscpMap::DEFAULT`; the tests check
/// each against `proto`). The legacy dialect keeps the own row's DSCP for
/// everything and ECN 0.
pub mod mrc10_wire {
    /// DSCP of the TRIMMABLE class (the own row's usual DSCP) and of its
    /// retransmissions: a retransmission of TRIMMABLE data goes as
    /// TRIMMABLE_RETX, so a switch can tell it from first transmissions.
    pub const DSCP_TRIMMABLE: u64 = 26;
    pub const DSCP_TRIMMABLE_RETX: u64 = 28;
    /// DSCP of the CONTROL class (SACK, NACK, ACK).
    pub const DSCP_CONTROL: u64 = 48;
    /// ECN of data (ECT(0)); control packets go Not-ECT (0).
    pub const ECN_DATA: u64 = 2;
    /// TSETH: the timestamp counts 64 ns (`TS_UNIT_NS`), so it is the
    /// nanosecond clock from this bit on (`update()` spells it 6, checked
    /// below); resolution bit 1 (spelled `true`), format 0.
    pub const TS_UNIT_SHIFT: usize = 6;
    pub const TS_RESOLUTION: bool = true;
    pub const TS_FORMAT: u64 = 0;
    /// The ns clock's bits kept in an MRC 1.0 send time (the TSETH's
    /// 64 ns grain).
    pub const TS_GRAIN_MASK: u64 = 0xFFFF_FFFF & !((1 << TS_UNIT_SHIFT) - 1);
    /// The RC opcode of a WRITE plus this is its MRC 1.0 opcode.
    pub const WRITE_OPCODE_BASE: u64 = 0xC0;
    /// NETH reasons for the ACK generator's NACK kinds 1 (trimmed) and 2
    /// (out of window); kind 3 (remote access) goes as an ACK whose AETH
    /// carries the NAK, as the golden responder sends it.
    pub const NACK_REASON_TRIMMED: u64 = 0x01;
    pub const NACK_REASON_PSN_OOR_WINDOW: u64 = 0x0B;
    /// SETH / NETH cc type (NSCC).
    pub const CC_TYPE_NSCC: u64 = 1;
    /// The largest CE count the SETH cc flags carry (saturating).
    pub const CC_FLAGS_CE_MAX: u64 = 0x0F;
    /// SETH MPR: the receive window (`hw::sack_table::MPR` PSNs) in units
    /// of 128 PSNs.
    pub const MPR_UNIT_PSNS: u32 = 128;
    pub const SACK_MPR: u64 = (crate::sack_table::MPR / MPR_UNIT_PSNS) as u64;
}

const _: () = assert!(1 << mrc10_wire::TS_UNIT_SHIFT == 64 && mrc10_wire::TS_RESOLUTION);

/// ACK record kinds (`hw::ack_gen::kind`).
pub mod ack_kind {
    pub const SACK: u8 = 1;
    pub const NACK: u8 = 2;
}

/// What rides beside a data header in the data header FIFO: its QP's
/// life as the sequencer took the packet (see `TxPath::life`) and its
/// payload's beats (`ceil(len / 64)`), which must all be in the core's
/// payload FIFO before the header is offered.
#[derive(LogicStruct, Default, Clone, Copy, PartialEq, Debug)]
pub struct QueuedHdr {
    pub life: Bit,
    pub beats: Bits<PL_RESERVED_BITS>,
}

/// The fields of a TX builder request, as one bundle (both sequencers
/// fill one, the arbiter forwards one).
#[derive(LogicStruct, Default, Clone, Copy, PartialEq, Debug)]
pub struct TxHeader {
    pub dst_mac: Bits<48>,
    pub src_mac: Bits<48>,
    pub vlan: Bit,
    pub vlan_tci: Bits<16>,
    pub ipv6: Bit,
    pub src_ip: Bits<128>,
    pub dst_ip: Bits<128>,
    pub dscp: Bits<6>,
    pub ttl: Bits<8>,
    pub ev: Bits<32>,
    pub opcode: Bits<8>,
    pub pad: Bits<2>,
    pub pkey: Bits<16>,
    pub dest_qp: Bits<24>,
    pub ack_req: Bit,
    pub psn: Bits<24>,
    pub reth_va: Bits<64>,
    pub reth_rkey: Bits<32>,
    pub reth_len: Bits<32>,
    pub imm: Bits<32>,
    pub aeth_syndrome: Bits<8>,
    pub aeth_msn: Bits<24>,
    pub ext: Bits<416>,
    pub ext_len: Bits<6>,
    pub payload_len: Bits<16>,
    /// IP ECN (legacy 0; MRC 1.0 data ECT(0)).
    pub ecn: Bits<2>,
    /// MRC 1.0: the transport bytes are `transport` (BTH to the end of
    /// the chain, byte 0 in bits 7-0, `transport_len` bytes, from
    /// `mrc_tx_header_mrc10`) instead of the legacy fields above
    /// (opcode to `ext_len`, which the builder then ignores but `pad`).
    pub mrc10: Bit,
    pub transport: Bits<MRC10_WINDOW_BITS>,
    pub transport_len: Bits<7>,
    /// The local QP the packet belongs to (not sent: the builder takes the
    /// peer's, `dest_qp`); the arbiter looks it up in the QPs in error.
    pub qp: Bits<8>,
    /// A data packet (the data sequencer's), which a flush of its QP
    /// drops; an ACK or probe is not.
    pub data: Bit,
}

#[derive(LogicBlock, Default)]
pub struct TxPath {
    pub clock: Signal<In, Clock>,
    /// Free-running nanosecond clock (the extension's `tx_ts`).
    pub now_ns: Signal<In, Bits<32>>,
    pub cfg: ConfigSink,
    t_sq_ctx: TableId<{ table::SQ_CTX }>,
    t_addr: TableId<{ table::ADDR }>,
    // Data packet records (the requester's `out_*`, through the CC gate).
    pub pkt_valid: Signal<In, Bit>,
    pub pkt_ready: Signal<Out, Bit>,
    pub pkt_qp: Signal<In, Bits<8>>,
    pub pkt_psn: Signal<In, Bits<24>>,
    pub pkt_opcode: Signal<In, Bits<8>>,
    pub pkt_ack_req: Signal<In, Bit>,
    pub pkt_retransmit: Signal<In, Bit>,
    pub pkt_addr: Signal<In, Bits<64>>,
    pub pkt_len: Signal<In, Bits<16>>,
    pub pkt_remote_va: Signal<In, Bits<64>>,
    pub pkt_rkey: Signal<In, Bits<32>>,
    pub pkt_dma_len: Signal<In, Bits<32>>,
    pub pkt_imm: Signal<In, Bits<32>>,
    pub pkt_msg_offset: Signal<In, Bits<32>>,
    // EV selector (select port).
    pub sel_valid: Signal<Out, Bit>,
    pub sel_qp: Signal<Out, Bits<8>>,
    pub ev_busy: Signal<In, Bit>,
    pub rsp_valid: Signal<In, Bit>,
    pub rsp_ev: Signal<In, Bits<7>>,
    pub rsp_value: Signal<In, Bits<VALUE_BITS>>,
    pub rsp_none: Signal<In, Bit>,
    // ACK records (the ACK generator's `tx_*`).
    pub ack_valid: Signal<In, Bit>,
    pub ack_ready: Signal<Out, Bit>,
    pub ack_qp: Signal<In, Bits<8>>,
    pub ack_kind: Signal<In, Bits<2>>,
    pub ack_psn: Signal<In, Bits<24>>,
    pub ack_cum: Signal<In, Bits<24>>,
    /// The SACK's trigger PSN (`hw::ack_gen`'s `tx_trigger_psn`): an MRC
    /// 1.0 SACK carries its offset from `ack_cum` in the SETH.
    pub ack_trigger_psn: Signal<In, Bits<24>>,
    pub ack_msn: Signal<In, Bits<24>>,
    pub ack_nack_kind: Signal<In, Bits<2>>,
    pub ack_nak_code: Signal<In, Bits<5>>,
    pub ack_base: Signal<In, Bits<24>>,
    pub ack_bitmap: Signal<In, Bits<64>>,
    pub ack_ecn_count: Signal<In, Bits<16>>,
    /// The SACK's trigger arrived CE-marked (`hw::ack_gen`'s
    /// `tx_trigger_ce`): an MRC 1.0 SACK carries SETH m = SKIP_ONCE.
    pub ack_trigger_ce: Signal<In, Bit>,
    pub ack_ev: Signal<In, Bits<VALUE_BITS>>,
    pub ack_ev_index: Signal<In, Bits<16>>,
    pub ack_echo_ts: Signal<In, Bits<32>>,
    /// When the SACK's trigger arrived (`hw::ack_gen` `tx_arrival_ns`, on
    /// the `now_ns` clock): `now_ns` minus it is the service time a SACK
    /// reports (legacy `service_ns`; the MRC 1.0 echo advanced by it).
    pub ack_arrival_ns: Signal<In, Bits<32>>,
    /// The SACK answers a reliability probe (`hw::ack_gen` `tx_probe`):
    /// SETH pr = 1, `ack_ev_index` is the probe id.
    pub ack_probe: Signal<In, Bit>,
    /// The probe answered is a legacy one (`hw::ack_gen`
    /// `tx_probe_legacy`): on the legacy wire the answer is a legacy probe
    /// response (extension type 4, response bit, `ack_ev_index` its EV
    /// index, `ack_probe_id`, `ack_echo_ts` its `tx_ts`, the service time),
    /// not a SACK; on the MRC 1.0 wire a SACK with pr = 1 as for any probe.
    pub ack_probe_legacy: Signal<In, Bit>,
    pub ack_probe_id: Signal<In, Bits<32>>,
    // Probe records (`hw::ev_prober`): probe EV `prb_ev` of QP `prb_qp`,
    // after any waiting ACK record; sent in the wire's dialect.
    pub prb_valid: Signal<In, Bit>,
    pub prb_ready: Signal<Out, Bit>,
    pub prb_qp: Signal<In, Bits<8>>,
    pub prb_ev: Signal<In, Bits<7>>,
    /// EV value rows as the EV selector takes them (`{qp, ev}`, value):
    /// the copy a probe reads its EV's value from.
    pub evv_we: Signal<In, Bit>,
    pub evv_addr: Signal<In, Bits<15>>,
    pub evv_value: Signal<In, Bits<VALUE_BITS>>,
    // Header requests to the TX builder.
    pub hdr_valid: Signal<Out, Bit>,
    pub hdr_ready: Signal<In, Bit>,
    pub hdr: Signal<Out, TxHeader>,
    /// The header offered is a data packet of a QP in error, or of an
    /// earlier life of its QP: the builder drops it (its payload, read
    /// already, is consumed, no frame leaves).
    pub hdr_drop: Signal<Out, Bit>,
    // QP errors (the retransmit engine's reports, as taken: a pulse and
    // the QP named). From the next cycle on no data packet of the QP is
    // built or sent, as the model sends nothing once in ERR, until the
    // QP's send-context row sets it up again.
    pub qerr_valid: Signal<In, Bit>,
    pub qerr_qp: Signal<In, Bits<8>>,
    /// The TX builder counts a dropped frame in this cycle (`tx_flushed`
    /// is one counter for both): a drop in hand waits a cycle.
    pub flushed_elsewhere: Signal<In, Bit>,
    // Payload read, and the QP of the packet it reads for (valid with the
    // request: the payload push cache keys on it).
    pub dma_rd_req: DmaReadRequestSource,
    pub dma_rd_qp: Signal<Out, Bits<8>>,
    /// A payload beat left the core's payload FIFO for the TX builder
    /// (frees one beat of the read reservation).
    pub pl_taken: Signal<In, Bit>,
    /// A payload beat entered the core's payload FIFO (a read's response
    /// or a pushed payload): a data header is offered only once its
    /// payload is all there.
    pub pl_arrived: Signal<In, Bit>,
    // Send record to the retransmit engine.
    pub sent_valid: Signal<Out, Bit>,
    pub sent_ready: Signal<In, Bit>,
    pub sent_qp: Signal<Out, Bits<8>>,
    pub sent_psn: Signal<Out, Bits<24>>,
    pub sent_ev: Signal<Out, Bits<7>>,
    pub sent_time: Signal<Out, Bits<32>>,
    pub sent_len: Signal<Out, Bits<16>>,
    /// The QP had no GOOD EV: the select is retried (pulse per try).
    pub cnt_no_ev: Signal<Out, Bit>,
    pub cnt_data_sent: Signal<Out, Bit>,
    pub cnt_ack_sent: Signal<Out, Bit>,
    /// A data packet of a QP in error dropped in hand, before its header
    /// and payload read were issued (those dropped at the data header
    /// FIFO's head, `hdr_drop`, the TX builder counts).
    pub cnt_flushed: Signal<Out, Bit>,
    // Per-QP peer (dest_qp 24 | addr_index 8 | pkey 16), one copy per
    // sequencer (one read port each).
    peer_d: RAM<Bits<48>, 8>,
    peer_a: RAM<Bits<48>, 8>,
    // Peer addresses (MAC 48 | IP 128), one copy per sequencer.
    addr_d: RAM<Bits<PEER_ROW_BITS>, 8>,
    addr_a: RAM<Bits<PEER_ROW_BITS>, 8>,
    // Per (QP, EV) send sequence numbers.
    ev_seq: RAM<Bits<32>, 15>,
    // Per (QP, EV) value, for the probes (the EV selector's values).
    ev_val_a: RAM<Bits<VALUE_BITS>, 15>,
    // Per QP, MRC 1.0 METH: MSN (bits 15-0: messages whose last packet
    // went out, i.e. the next message's number) and RQ MSN (bits 31-16:
    // WRITE-with-immediate messages sent). Reset by the QP's send-context
    // row.
    msn_ram: RAM<Bits<32>, 8>,
    // The MRC 1.0 header builders, one per sequencer, and their words.
    d_t10: TxHeaderMrc10,
    a_t10: TxHeaderMrc10,
    d_word: DFF<Mrc10RxHeader>,
    a_word: DFF<Mrc10RxHeader>,
    d_last: Signal<Local, Bit>,
    /// SACK base - cumulative PSN (24 bits; the SETH carries 16, signed).
    a_sack_offset: Signal<Local, Bits<24>>,
    /// Trigger PSN - cumulative PSN (24 bits) ...
    a_trigger_offset: Signal<Local, Bits<24>>,
    /// ... as the SETH's signed 16-bit ack PSN offset, clamped as the
    /// model's `build_sack` clamps it (a duplicate far behind).
    a_ack_psn_offset: Signal<Local, Bits<16>>,
    /// How long the SACK's trigger has been held, ns: `now_ns` minus its
    /// arrival (the model's `now - trigger.arrival` when the SACK leaves).
    a_service: Signal<Local, Bits<32>>,
    d_imm_last: Signal<Local, Bit>,
    /// The METH counters after this packet (RQMSN, MSN), 16 bits each.
    d_rq_msn_next: Signal<Local, Bits<16>>,
    d_msn_next: Signal<Local, Bits<16>>,
    k_dscp_trimmable: Param<6, { mrc10_wire::DSCP_TRIMMABLE }>,
    k_dscp_retx: Param<6, { mrc10_wire::DSCP_TRIMMABLE_RETX }>,
    k_dscp_control: Param<6, { mrc10_wire::DSCP_CONTROL }>,
    k_ecn_data: Param<2, { mrc10_wire::ECN_DATA }>,
    k_write_base: Param<8, { mrc10_wire::WRITE_OPCODE_BASE }>,
    k_ts_format: Param<4, { mrc10_wire::TS_FORMAT }>,
    k_ts_grain: Param<32, { mrc10_wire::TS_GRAIN_MASK }>,
    k_op_sack: Param<8, { mrc10_opcode::SACK }>,
    k_op_nack: Param<8, { mrc10_opcode::NACK }>,
    k_op_ack: Param<8, { mrc10_opcode::ACK }>,
    k_op_probe: Param<8, { mrc10_opcode::PROBE }>,
    k_nack_trimmed: Param<8, { mrc10_wire::NACK_REASON_TRIMMED }>,
    k_nack_oor: Param<8, { mrc10_wire::NACK_REASON_PSN_OOR_WINDOW }>,
    k_cc_type: Param<4, { mrc10_wire::CC_TYPE_NSCC }>,
    k_ce_max: Param<16, { mrc10_wire::CC_FLAGS_CE_MAX }>,
    k_sack_mpr: Param<8, { mrc10_wire::SACK_MPR }>,
    /// The SETH ack PSN offset's range (signed 16 bits): the first 24-bit
    /// difference beyond `i16::MAX` and the last below `i16::MIN`, and the
    /// two ends.
    k_off_above: Param<24, { i16::MAX as u64 + 1 }>,
    k_off_below: Param<24, { (1 << 24) - (i16::MAX as u64 + 1) }>,
    k_off_max: Param<16, { i16::MAX as u64 }>,
    k_off_min: Param<16, { i16::MIN as u16 as u64 }>,
    // Own addresses and header constants.
    loc_mac: DFF<Bits<48>>,
    loc_ip: DFF<Bits<128>>,
    loc_ipv6: DFF<Bit>,
    loc_vlan: DFF<Bit>,
    loc_tci: DFF<Bits<16>>,
    loc_dscp: DFF<Bits<6>>,
    loc_ttl: DFF<Bits<8>>,
    loc_mrc10: DFF<Bit>,
    // Data sequencer: 0 idle, 1-2 wait EV, 3 lookup, 4 build, 5 issue,
    // 6 retry select.
    d_state: DFF<Bits<3>>,
    d_qp: DFF<Bits<8>>,
    d_psn: DFF<Bits<24>>,
    d_opcode: DFF<Bits<8>>,
    d_ack_req: DFF<Bit>,
    d_rtx: DFF<Bit>,
    d_addr: DFF<Bits<64>>,
    d_len: DFF<Bits<16>>,
    d_va: DFF<Bits<64>>,
    d_rkey: DFF<Bits<32>>,
    d_dma_len: DFF<Bits<32>>,
    d_imm: DFF<Bits<32>>,
    d_off: DFF<Bits<32>>,
    d_ev: DFF<Bits<7>>,
    d_seq_wa: DFF<Bits<15>>,
    d_value: DFF<Bits<VALUE_BITS>>,
    d_hdr: DFF<TxHeader>,
    d_hdr_done: DFF<Bit>,
    d_rd_done: DFF<Bit>,
    /// Data header requests waiting for the builder (the arbiter's data
    /// input), in the order of their payload reads.
    d_fifo: SynchronousFIFO<TxHeader, DATA_HDR_FIFO_BITS, { DATA_HDR_FIFO_BITS + 1 }, 1>,
    /// The payload-FIFO room of the reads, one register stage per
    /// arithmetic step (the logic-depth budget): beats of the reads issued
    /// and beats the builder took (both counting modulo 2^12), their
    /// difference (reserved), the room left (0 when over), and the room
    /// test of the packet in hand. Each lags what it reads by a cycle:
    /// a read's beats reach `d_rd_room` 4 cycles after it was issued, and
    /// the sequencer issues its next read 6 cycles later at the soonest
    /// (states 0 to 5), so the test never misses a read of its own; a
    /// late `pl_taken` only makes it cautious.
    pl_issued: DFF<Bits<PL_RESERVED_BITS>>,
    pl_done: DFF<Bits<PL_RESERVED_BITS>>,
    pl_reserved: DFF<Bits<PL_RESERVED_BITS>>,
    pl_free: DFF<Bits<PL_RESERVED_BITS>>,
    d_rd_room: DFF<Bit>,
    k_pl_fifo_beats: Param<PL_RESERVED_BITS, { PAYLOAD_FIFO_BEATS }>,
    /// The packet's payload beats, `ceil(len / 64)` (valid from state 2).
    d_beats: DFF<Bits<PL_RESERVED_BITS>>,
    d_len_up: Signal<Local, Bits<17>>,
    pl_over: Signal<Local, Bit>,
    d_rd_fire: Signal<Local, Bit>,
    d_push: Signal<Local, TxHeader>,
    /// QPs in error, a bit per QP: set by a report (`qerr_*`), cleared by
    /// the QP's send-context row.
    dead: DFF<Bits<256>>,
    /// The packet in hand is of a QP in error or of an earlier life of
    /// its QP: `d_dead_r`, read in the states that drop such a packet (4
    /// and 6).
    d_dead: Signal<Local, Bit>,
    /// The in-hand QP's bit of `dead` as the next cycle holds it, and
    /// that registered. The 256-to-1 select then ends at a register
    /// instead of heading the sequencer's handshakes into the EV
    /// selector. Exact where it is read: `d_qp` is loaded in state 0, at
    /// least three cycles before states 4 and 6.
    d_dead_next: Signal<Local, Bit>,
    /// The QP's send-context row in this cycle is of the in-hand QP.
    d_row_hit: Signal<Local, Bit>,
    d_dead_r: DFF<Bit>,
    /// The data header at the FIFO's head is of a QP in error.
    head_dead: Signal<Local, Bit>,
    /// A QP's life, a bit per QP: flipped by its send-context row (the QP
    /// set up again). A packet carries its QP's bit as the sequencer took
    /// it (`d_life`, then `d_side` beside its queued header), so a
    /// header of an earlier life still queued when the QP is set up again
    /// is told from the new life's at the FIFO's head (`head_stale`):
    /// dropped there with no send record, for its record would reach the
    /// retransmit engine after the QP's INIT and release its bytes at the
    /// CC gate against the new life's flight. One bit tells two lives
    /// apart: a QP set up twice while a header of its first life waits
    /// (the FIFO drains in microseconds) would send that header.
    life: DFF<Bits<256>>,
    d_life: DFF<Bit>,
    d_side: SynchronousFIFO<QueuedHdr, DATA_HDR_FIFO_BITS, { DATA_HDR_FIFO_BITS + 1 }, 1>,
    d_side_in: Signal<Local, QueuedHdr>,
    /// A frame leaves whole: the builder streams a data packet's payload
    /// behind its header with no gap, and a MAC aborts a frame whose next
    /// beat is missing (a transmit underrun). So the header at the FIFO's
    /// head is offered only once its payload's beats are all in the
    /// core's payload FIFO, beyond those of the headers offered before:
    /// beats arrived (`pl_arr`) less beats of the headers offered
    /// (`pl_hdr`), both modulo 2^12, at least the head's (`head_paid`).
    /// Read ahead, a packet's payload is there long before its turn; the
    /// first packet of a burst and a resend wait for their read here
    /// rather than on the wire.
    pl_arr: DFF<Bits<PL_RESERVED_BITS>>,
    pl_hdr: DFF<Bits<PL_RESERVED_BITS>>,
    pl_avail: Signal<Local, Bits<PL_RESERVED_BITS>>,
    head_paid: Signal<Local, Bit>,
    /// The data header at the FIFO's head is of an earlier life of its QP.
    head_stale: Signal<Local, Bit>,
    /// The extension bits of the data header at the FIFO's head, read
    /// through a signal: a field select of a field select is a Verilog
    /// expression Yosys rejects.
    head_ext: Signal<Local, Bits<416>>,
    /// The send time the data header at the FIFO's head gets as the
    /// builder takes it (`now_ns`): a TSETH of it, byte-reversed as the
    /// MRC 1.0 field table lays it out (`ts_rev`), and in transport byte
    /// order (`ts_tr`), which the header's transport bytes, their TSETH
    /// left zero, are ORed with.
    ts_rev: Signal<Local, Bits<MRC10_WINDOW_BITS>>,
    ts_flip: ByteRev<MRC10_WINDOW_BITS>,
    ts_tr: Signal<Local, Bits<MRC10_WINDOW_BITS>>,
    dead_set: Signal<Local, Bits<256>>,
    dead_clr: Signal<Local, Bits<256>>,
    // ACK sequencer: 0 idle, 1 peer read, 2 build, 3 address, 4 issue.
    a_state: DFF<Bits<3>>,
    a_qp: DFF<Bits<8>>,
    a_kind: DFF<Bits<2>>,
    a_psn: DFF<Bits<24>>,
    a_cum: DFF<Bits<24>>,
    a_tpsn: DFF<Bits<24>>,
    a_msn: DFF<Bits<24>>,
    a_nack_kind: DFF<Bits<2>>,
    a_nak_code: DFF<Bits<5>>,
    a_base: DFF<Bits<24>>,
    a_bitmap: DFF<Bits<64>>,
    a_ecn: DFF<Bits<16>>,
    a_tce: DFF<Bit>,
    a_ev: DFF<Bits<VALUE_BITS>>,
    a_ev_index: DFF<Bits<16>>,
    a_echo: DFF<Bits<32>>,
    a_arrival: DFF<Bits<32>>,
    a_probe: DFF<Bit>,
    a_probe_legacy: DFF<Bit>,
    a_probe_id: DFF<Bits<32>>,
    /// The record is a probe of ours (`prb_*`), not an ACK record.
    a_send_probe: DFF<Bit>,
    a_hdr: DFF<TxHeader>,
    // Locals.
    d_issue: Signal<Local, Bit>,
    a_issue: Signal<Local, Bit>,
    placement: Signal<Local, Bit>,
    is_sack: Signal<Local, Bit>,
    cfg_peer: Signal<Local, Bit>,
    cfg_addr: Signal<Local, Bit>,
    peer_row: Signal<Local, Bits<48>>,
    d_peer: Signal<Local, Bits<48>>,
    a_peer: Signal<Local, Bits<48>>,
    d_ext: Signal<Local, Bits<416>>,
    r_bit: Signal<Local, Bits<416>>,
    d_place: Signal<Local, Bits<416>>,
    a_ext: Signal<Local, Bits<416>>,
}

impl Logic for TxPath {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            loc_mac,
            loc_ip,
            loc_ipv6,
            loc_vlan,
            loc_tci,
            loc_dscp,
            loc_ttl,
            loc_mrc10,
            d_word,
            a_word,
            d_state,
            d_qp,
            d_psn,
            d_opcode,
            d_ack_req,
            d_rtx,
            d_addr,
            d_len,
            d_va,
            d_rkey,
            d_dma_len,
            d_imm,
            d_off,
            d_ev,
            d_seq_wa,
            d_value,
            d_hdr,
            d_hdr_done,
            d_rd_done,
            pl_issued,
            pl_done,
            pl_reserved,
            pl_free,
            d_rd_room,
            d_beats,
            a_state,
            a_qp,
            a_kind,
            a_psn,
            a_cum,
            a_tpsn,
            a_msn,
            a_nack_kind,
            a_nak_code,
            a_base,
            a_bitmap,
            a_ecn,
            a_tce,
            a_ev,
            a_ev_index,
            a_echo,
            a_arrival,
            a_probe,
            a_probe_legacy,
            a_probe_id,
            a_send_probe,
            a_hdr,
            dead,
            d_dead_r,
            life,
            d_life,
            pl_arr,
            pl_hdr
        );
        self.peer_d.read_clock.next = self.clock.val();
        self.peer_d.write_clock.next = self.clock.val();
        self.peer_a.read_clock.next = self.clock.val();
        self.peer_a.write_clock.next = self.clock.val();
        self.addr_d.read_clock.next = self.clock.val();
        self.addr_d.write_clock.next = self.clock.val();
        self.addr_a.read_clock.next = self.clock.val();
        self.addr_a.write_clock.next = self.clock.val();
        self.ev_seq.read_clock.next = self.clock.val();
        self.ev_seq.write_clock.next = self.clock.val();
        self.ev_val_a.read_clock.next = self.clock.val();
        self.ev_val_a.write_clock.next = self.clock.val();
        self.ev_val_a.write_address.next = self.evv_addr.val();
        self.ev_val_a.write_data.next = self.evv_value.val();
        self.ev_val_a.write_enable.next = self.evv_we.val();
        // A probe's EV value: read with the peer row (state 1), out in
        // state 2.
        self.ev_val_a.read_address.next =
            (bit_cast::<15, 8>(self.a_qp.q.val()) << 7) | bit_cast::<15, 7>(self.a_ev_index.q.val().get_bits::<7>(0));
        self.msn_ram.read_clock.next = self.clock.val();
        self.msn_ram.write_clock.next = self.clock.val();
        self.d_t10.clock.next = self.clock.val();
        self.a_t10.clock.next = self.clock.val();
        self.d_fifo.clock.next = self.clock.val();
        self.d_side.clock.next = self.clock.val();

        // ---- Configuration: snoop the QP rows, own the address rows.
        // Peer row: dest_qp (bits 96-119 of the SQ context), addr_index
        // (bits 80-87), pkey (bits 160-175).
        self.cfg_peer.next = self.cfg.valid.val() & (self.cfg.table.val() == self.t_sq_ctx.val());
        self.cfg_addr.next = self.cfg.valid.val() & (self.cfg.table.val() == self.t_addr.val());
        // QPs in error: a report sets the QP's bit; its send-context row
        // (the QP set up again) clears it, and wins a report of the same
        // cycle for the same QP (the requester, which applies the row a
        // cycle later, takes no report in that later cycle).
        self.dead_set.next = 0.into();
        if self.qerr_valid.val() {
            self.dead_set.next = bit_cast::<256, 1>(true.into()) << self.qerr_qp.val();
        }
        self.dead_clr.next = 0.into();
        if self.cfg_peer.val() & (self.cfg.index.val() < 256) {
            self.dead_clr.next = bit_cast::<256, 1>(true.into()) << self.cfg.index.val().get_bits::<8>(0);
        }
        self.dead.d.next = (self.dead.q.val() | self.dead_set.val()) & !self.dead_clr.val();
        self.life.d.next = self.life.q.val() ^ self.dead_clr.val();
        // A packet of an earlier life in hand (the row came after it was
        // taken) is dropped the same way, before it advances the new
        // life's METH counters or reads its payload.
        self.d_row_hit.next = self.cfg_peer.val()
            & (self.cfg.index.val() < 256)
            & (self.cfg.index.val().get_bits::<8>(0) == self.d_qp.q.val());
        self.d_dead_next.next = ((self.dead.q.val().get_bit(self.d_qp.q.val().index())
            | (self.qerr_valid.val() & (self.qerr_qp.val() == self.d_qp.q.val())))
            & !self.d_row_hit.val())
            | ((self.life.q.val().get_bit(self.d_qp.q.val().index()) ^ self.d_row_hit.val()) != self.d_life.q.val());
        self.d_dead_r.d.next = self.d_dead_next.val();
        self.d_dead.next = self.d_dead_r.q.val();
        self.peer_row.next = (bit_cast::<48, 24>(self.cfg.data.val().get_value_sq_ctx_dest_qp()) << 24)
            | (bit_cast::<48, 8>(bit_cast::<8, 16>(self.cfg.data.val().get_value_sq_ctx_addr_index())) << 16)
            | bit_cast::<48, 16>(self.cfg.data.val().get_value_sq_ctx_pkey());
        self.peer_d.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.peer_d.write_data.next = self.peer_row.val();
        self.peer_d.write_enable.next = self.cfg_peer.val() & (self.cfg.index.val() < 256);
        self.peer_a.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.peer_a.write_data.next = self.peer_row.val();
        self.peer_a.write_enable.next = self.cfg_peer.val() & (self.cfg.index.val() < 256);
        self.addr_d.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.addr_d.write_data.next = self.cfg.data.val().get_bits::<PEER_ROW_BITS>(0);
        self.addr_d.write_enable.next = self.cfg_addr.val() & (self.cfg.index.val() < 256);
        self.addr_a.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.addr_a.write_data.next = self.cfg.data.val().get_bits::<PEER_ROW_BITS>(0);
        self.addr_a.write_enable.next = self.cfg_addr.val() & (self.cfg.index.val() < 256);
        if self.cfg.valid.val() & (self.cfg.table.val() == self.t_addr.val()) & (self.cfg.index.val() == 0x8000) {
            self.loc_mac.d.next = self.cfg.data.val().get_value_addr_mac();
            self.loc_ip.d.next = (bit_cast::<128, 64>(self.cfg.data.val().get_value_addr_ip_hi()) << 64)
                | bit_cast::<128, 64>(self.cfg.data.val().get_value_addr_ip_lo());
            self.loc_ipv6.d.next = self.cfg.data.val().get_value_addr_ipv6().any();
            self.loc_vlan.d.next = self.cfg.data.val().get_value_addr_vlan().any();
            self.loc_tci.d.next = self.cfg.data.val().get_value_addr_tci();
            self.loc_dscp.d.next = self.cfg.data.val().get_value_addr_dscp();
            self.loc_ttl.d.next = self.cfg.data.val().get_value_addr_ttl();
            self.loc_mrc10.d.next = self.cfg.data.val().get_value_addr_wire_mrc10().any();
        }
        // Row fields as read (registered RAM outputs).
        self.d_peer.next = self.peer_d.read_data.val();
        self.a_peer.next = self.peer_a.read_data.val();
        self.peer_d.read_address.next = self.d_qp.q.val();
        self.peer_a.read_address.next = self.a_qp.q.val();
        self.addr_d.read_address.next = self.d_peer.val().get_bits::<8>(16);
        self.addr_a.read_address.next = self.a_peer.val().get_bits::<8>(16);
        self.ev_seq.read_address.next =
            (bit_cast::<15, 8>(self.d_qp.q.val()) << 7) | bit_cast::<15, 7>(self.d_ev.q.val());
        // The write address is a register of its own, not the read
        // address expression: with one shared address Yosys 0.23 takes the
        // RAM for single-port and maps it to LUTRAM with an ABITS/WIDTH
        // combination its own map file rejects. (Equal values: d_qp and
        // d_ev are stable from cycle 3 to the write in cycle 4.)
        self.d_seq_wa.d.next = (bit_cast::<15, 8>(self.d_qp.q.val()) << 7) | bit_cast::<15, 7>(self.d_ev.q.val());
        self.ev_seq.write_address.next = self.d_seq_wa.q.val();
        self.ev_seq.write_data.next = self.ev_seq.read_data.val() + 1;
        self.ev_seq.write_enable.next = false;
        // METH counters: read with the peer row; advanced (state 4) by a
        // message's last packet sent for the first time (a retransmission
        // carries the counters as they are: see the page's gaps); a QP's
        // send-context row restarts them at 0 (it wins a same-cycle
        // advance: the QP is being set up).
        self.msn_ram.read_address.next = self.d_qp.q.val();
        self.d_last.next = (self.d_opcode.q.val() == 0x08)
            | (self.d_opcode.q.val() == 0x09)
            | (self.d_opcode.q.val() == 0x0A)
            | (self.d_opcode.q.val() == 0x0B);
        self.d_imm_last.next = (self.d_opcode.q.val() == 0x09) | (self.d_opcode.q.val() == 0x0B);
        self.msn_ram.write_address.next = self.d_seq_wa.q.val().get_bits::<8>(7);
        // The advanced counters through 16-bit locals: they wrap at 2^16
        // (METH's width) in the Verilog as in rust-hdl, instead of carrying
        // into the other half of the RAM word.
        self.d_rq_msn_next.next =
            self.d_word.q.val().rq_msn + bit_cast::<16, 1>((self.d_imm_last.val() & !self.d_rtx.q.val()).into());
        self.d_msn_next.next =
            self.d_word.q.val().msn + bit_cast::<16, 1>((self.d_last.val() & !self.d_rtx.q.val()).into());
        self.msn_ram.write_data.next =
            (bit_cast::<32, 16>(self.d_rq_msn_next.val()) << 16) | bit_cast::<32, 16>(self.d_msn_next.val());
        self.msn_ram.write_enable.next = false;
        // The MRC 1.0 builders read the words (registered by the
        // sequencers) and answer a cycle later; the words hold still from
        // the build to the hand-over, so their outputs do too.
        self.d_t10.in_valid.next = true;
        self.d_t10.in_hdr.next = self.d_word.q.val();
        self.a_t10.in_valid.next = true;
        self.a_t10.in_hdr.next = self.a_word.q.val();

        // ---- Extension fields, big-endian, byte 0 in bits 415-408.
        // Data (type 1): 0x11, R, ev_index, ev_seq, tx_ts, msg_offset and,
        // on WRITE MIDDLE / LAST / LAST-IMM (0x07-0x09), the placement VA
        // and R_Key (28 bytes; 16 without placement).
        self.placement.next =
            (self.d_opcode.q.val() == 0x07) | (self.d_opcode.q.val() == 0x08) | (self.d_opcode.q.val() == 0x09);
        if self.d_rtx.q.val() {
            self.r_bit.next = bits::<416>(1) << 407;
        } else {
            self.r_bit.next = 0.into();
        }
        if self.placement.val() {
            self.d_place.next =
                (bit_cast::<416, 64>(self.d_va.q.val()) << 224) | (bit_cast::<416, 32>(self.d_rkey.q.val()) << 192);
        } else {
            self.d_place.next = 0.into();
        }
        self.d_ext.next = (bits::<416>(0x11) << 408)
            | self.r_bit.val()
            | self.d_place.val()
            | (bit_cast::<416, 7>(self.d_ev.q.val()) << 384)
            | (bit_cast::<416, 32>(self.ev_seq.read_data.val()) << 352)
            | (bit_cast::<416, 32>(self.d_off.q.val()) << 288);
        // SACK (type 2, 64-bit bitmap, 28 bytes): 0x12, width code 0,
        // ev_index, ecn_ce_count, reserved, echo_ts, service_ns (how long
        // the trigger was held), reserved, base, bitmap.
        // NACK (type 3, 12 bytes): 0x13, kind, ev_index, reserved,
        // cum_psn, echo_ts.
        self.is_sack.next = self.a_kind.q.val() == 1;
        self.a_sack_offset.next = self.a_base.q.val() - self.a_cum.q.val();
        self.a_trigger_offset.next = self.a_tpsn.q.val() - self.a_cum.q.val();
        self.a_ack_psn_offset.next = self.a_trigger_offset.val().get_bits::<16>(0);
        if !self.a_trigger_offset.val().get_bit(23) & (self.a_trigger_offset.val() >= self.k_off_above.val()) {
            self.a_ack_psn_offset.next = self.k_off_max.val();
        }
        if self.a_trigger_offset.val().get_bit(23) & (self.a_trigger_offset.val() < self.k_off_below.val()) {
            self.a_ack_psn_offset.next = self.k_off_min.val();
        }
        self.a_service.next = self.now_ns.val() - self.a_arrival.q.val();
        if self.a_send_probe.q.val() {
            // Our legacy reliability probe (`proto::model::legacy_mrc`'s
            // `queue_probe`): a request (response bit clear) naming the
            // probed EV's index, the index again as the probe id (as MRC
            // 1.0's `choices::probe_id_of_ev`), the send time, no service
            // time.
            self.a_ext.next = (bits::<416>(0x14) << 408)
                | (bit_cast::<416, 16>(self.a_ev_index.q.val()) << 384)
                | (bit_cast::<416, 16>(self.a_ev_index.q.val()) << 352)
                | (bit_cast::<416, 32>(self.now_ns.val()) << 320);
        } else if self.is_sack.val() & self.a_probe_legacy.q.val() {
            // The legacy probe response (`proto::model::legacy_mrc`'s
            // `handle_ack`): the probe's EV index, id and `tx_ts` echoed,
            // the service time filled in as it goes (`poll_roce`).
            self.a_ext.next = (bits::<416>(0x14) << 408)
                | (bits::<416>(0x80) << 400)
                | (bit_cast::<416, 16>(self.a_ev_index.q.val()) << 384)
                | (bit_cast::<416, 32>(self.a_probe_id.q.val()) << 352)
                | (bit_cast::<416, 32>(self.a_echo.q.val()) << 320)
                | (bit_cast::<416, 32>(self.a_service.val()) << 288);
        } else if self.is_sack.val() {
            self.a_ext.next = (bits::<416>(0x12) << 408)
                | (bit_cast::<416, 16>(self.a_ev_index.q.val()) << 384)
                | (bit_cast::<416, 16>(self.a_ecn.q.val()) << 368)
                | (bit_cast::<416, 32>(self.a_echo.q.val()) << 320)
                | (bit_cast::<416, 32>(self.a_service.val()) << 288)
                | (bit_cast::<416, 24>(self.a_base.q.val()) << 256)
                | (bit_cast::<416, 64>(self.a_bitmap.q.val()) << 192);
        } else {
            self.a_ext.next = (bits::<416>(0x13) << 408)
                | (bit_cast::<416, 2>(self.a_nack_kind.q.val()) << 400)
                | (bit_cast::<416, 16>(self.a_ev_index.q.val()) << 384)
                | (bit_cast::<416, 24>(self.a_cum.q.val()) << 352)
                | (bit_cast::<416, 32>(self.a_echo.q.val()) << 320);
        }

        // ---- Defaults of the handshakes.
        self.pkt_ready.next = false;
        self.ack_ready.next = false;
        self.prb_ready.next = false;
        self.sel_valid.next = false;
        self.sel_qp.next = self.d_qp.q.val();
        self.cnt_no_ev.next = false;
        self.cnt_data_sent.next = false;
        self.cnt_ack_sent.next = false;
        self.cnt_flushed.next = false;
        // Payload read room (see the fields): the packet's beats fit in
        // what the reads before it left free, or nothing is reserved (a
        // packet larger than the FIFO).
        self.d_len_up.next = bit_cast::<17, 16>(self.d_len.q.val()) + 63;
        self.d_beats.d.next = bit_cast::<PL_RESERVED_BITS, 11>(self.d_len_up.val().get_bits::<11>(6));
        self.pl_reserved.d.next = self.pl_issued.q.val() - self.pl_done.q.val();
        self.pl_over.next = self.pl_reserved.q.val() > self.k_pl_fifo_beats.val();
        self.pl_free.d.next = self.k_pl_fifo_beats.val() - self.pl_reserved.q.val();
        if self.pl_over.val() {
            self.pl_free.d.next = 0.into();
        }
        self.d_rd_room.d.next = (self.d_beats.q.val() <= self.pl_free.q.val()) | !self.pl_reserved.q.val().any();
        self.dma_rd_req.valid.next = (self.d_state.q.val() == 5) & !self.d_rd_done.q.val() & self.d_rd_room.q.val();
        self.dma_rd_req.addr.next = self.d_addr.q.val();
        self.dma_rd_req.len.next = self.d_len.q.val();
        self.dma_rd_req.tag.next = 0.into();
        self.dma_rd_qp.next = self.d_qp.q.val();

        // ---- Reservation: the beats of a read issued, a beat taken.
        self.d_rd_fire.next = self.dma_rd_req.valid.val() & self.dma_rd_req.ready.val();
        if self.d_rd_fire.val() {
            self.pl_issued.d.next = self.pl_issued.q.val() + self.d_beats.q.val();
        }
        if self.pl_taken.val() {
            self.pl_done.d.next = self.pl_done.q.val() + 1;
        }

        // ---- Data header FIFO: the sequencer's header in, the arbiter's
        // data input out.
        self.d_push.next = self.d_hdr.q.val();
        self.d_push.next.transport = self.d_t10.out_data.val();
        self.d_push.next.transport_len = self.d_t10.out_len.val();
        self.d_fifo.data_in.next = self.d_push.val();
        self.d_fifo.write.next = (self.d_state.q.val() == 5) & !self.d_hdr_done.q.val() & !self.d_fifo.full.val();
        // The life bit and the payload's beats beside the header, written
        // and read in step.
        self.d_side_in.next.life = self.d_life.q.val();
        self.d_side_in.next.beats = self.d_beats.q.val();
        self.d_side.data_in.next = self.d_side_in.val();
        self.d_side.write.next = self.d_fifo.write.val();

        // ---- A TSETH of `now_ns` in transport byte order (the arbiter's
        // stamp).
        self.ts_rev.next = 0.into();
        self.ts_rev.next.set_value_w_tx_ts(self.now_ns.val().get_bits::<16>(6));
        self.ts_flip.i.next = self.ts_rev.val();
        self.ts_tr.next = self.ts_flip.o.val();

        // ---- Arbiter: the ACK sequencer's header first.
        self.a_issue.next = self.a_state.q.val() == 4;
        // A data header goes with its send record (`sent_*`), so only
        // while the retransmit engine's FIFO takes one.
        // And only with its payload all in the payload FIFO.
        self.pl_avail.next = self.pl_arr.q.val() - self.pl_hdr.q.val();
        self.head_paid.next = self.d_side.data_out.val().beats <= self.pl_avail.val();
        self.d_issue.next =
            !self.d_fifo.empty.val() & !self.a_issue.val() & self.sent_ready.val() & self.head_paid.val();
        self.hdr_valid.next = self.a_issue.val() | self.d_issue.val();
        self.d_fifo.read.next = self.d_issue.val() & self.hdr_ready.val();
        self.d_side.read.next = self.d_fifo.read.val();
        if self.d_fifo.read.val() {
            self.pl_hdr.d.next = self.pl_hdr.q.val() + self.d_side.data_out.val().beats;
        }
        if self.pl_arrived.val() {
            self.pl_arr.d.next = self.pl_arr.q.val() + 1;
        }
        if self.a_issue.val() {
            self.hdr.next = self.a_hdr.q.val();
            self.hdr.next.transport = self.a_t10.out_data.val();
            self.hdr.next.transport_len = self.a_t10.out_len.val();
        } else {
            // Stamped as the builder takes it, not when it was built: the
            // header may have waited behind the frames ahead and for its
            // payload, and the RTT a SACK's echo gives, and the send time
            // the retransmit engine ages a slot from, should not hold that
            // wait (the golden model stamps a packet as it hands it to its
            // link). The legacy extension's `tx_ts` (bytes 8-11, the full
            // ns clock) and the MRC 1.0 TSETH (64 ns) were left zero.
            self.hdr.next = self.d_fifo.data_out.val();
            self.hdr.next.ext = self.d_fifo.data_out.val().ext | (bit_cast::<416, 32>(self.now_ns.val()) << 320);
            self.hdr.next.transport = self.d_fifo.data_out.val().transport | self.ts_tr.val();
        }
        // A data header of a QP in error is still taken by the builder, in
        // its turn, which consumes its payload (read already) and sends
        // nothing: the payload FIFO's beats stay in step with the headers.
        // So is one of an earlier life of its QP, but with no send record
        // (see `life`).
        self.head_dead.next = self.dead.q.val().get_bit(self.d_fifo.data_out.val().qp.index());
        self.head_stale.next =
            self.life.q.val().get_bit(self.d_fifo.data_out.val().qp.index()) != self.d_side.data_out.val().life;
        self.hdr_drop.next = self.d_issue.val() & (self.head_dead.val() | self.head_stale.val());
        // The send record goes with the data header as the builder takes
        // it, stamped then.
        self.sent_valid.next = self.d_issue.val() & self.hdr_ready.val() & !self.head_stale.val();
        self.sent_qp.next = self.d_fifo.data_out.val().qp;
        self.sent_psn.next = self.d_fifo.data_out.val().psn;
        self.head_ext.next = self.d_fifo.data_out.val().ext;
        self.sent_ev.next = self.head_ext.val().get_bits::<7>(384);
        self.sent_time.next = self.now_ns.val();
        if self.d_fifo.data_out.val().mrc10 {
            // The send time at the TSETH's 64 ns grain: what an MRC 1.0
            // echo of it unwraps to (`hw::rx_parser`), so the retransmit
            // engine finds a NACK's echo equal to its slot's send time.
            self.sent_time.next = self.now_ns.val() & self.k_ts_grain.val();
        }
        self.sent_len.next = self.d_fifo.data_out.val().payload_len;

        // ---- Data sequencer.
        if self.d_state.q.val() == 0 {
            if self.pkt_valid.val() & !self.ev_busy.val() {
                self.pkt_ready.next = true;
                self.sel_valid.next = true;
                self.sel_qp.next = self.pkt_qp.val();
                self.d_qp.d.next = self.pkt_qp.val();
                // The QP's life as the requester sent the packet: a row
                // in this cycle is applied by the requester a cycle later.
                self.d_life.d.next = self.life.q.val().get_bit(self.pkt_qp.val().index());
                self.d_psn.d.next = self.pkt_psn.val();
                self.d_opcode.d.next = self.pkt_opcode.val();
                self.d_ack_req.d.next = self.pkt_ack_req.val();
                self.d_rtx.d.next = self.pkt_retransmit.val();
                self.d_addr.d.next = self.pkt_addr.val();
                self.d_len.d.next = self.pkt_len.val();
                self.d_va.d.next = self.pkt_remote_va.val();
                self.d_rkey.d.next = self.pkt_rkey.val();
                self.d_dma_len.d.next = self.pkt_dma_len.val();
                self.d_imm.d.next = self.pkt_imm.val();
                self.d_off.d.next = self.pkt_msg_offset.val();
                self.d_state.d.next = 1.into();
            }
        } else if self.d_state.q.val() == 1 {
            self.d_state.d.next = 2.into();
        } else if self.d_state.q.val() == 2 {
            // The selector answers two cycles after the select.
            if self.rsp_valid.val() & !self.rsp_none.val() {
                self.d_ev.d.next = self.rsp_ev.val();
                self.d_value.d.next = self.rsp_value.val();
                self.d_state.d.next = 3.into();
            } else {
                self.cnt_no_ev.next = true;
                self.d_state.d.next = 6.into();
            }
        } else if self.d_state.q.val() == 3 {
            // Peer row (read since cycle 1) -> address row; (QP, EV) seq.
            // The MRC 1.0 word of the packet (`proto::model::mrc`'s
            // `data_packet`): every packet stamped, RETH on every packet
            // (this packet's VA, the message's length).
            self.d_word.d.next.opcode = self.k_write_base.val() | self.d_opcode.q.val();
            self.d_word.d.next.se = false;
            self.d_word.d.next.mig = true;
            self.d_word.d.next.pad = bit_cast::<2, 16>((!self.d_len.q.val() + 1) & 3);
            self.d_word.d.next.pkey = self.d_peer.val().get_bits::<16>(0);
            self.d_word.d.next.fecn = false;
            self.d_word.d.next.becn = false;
            self.d_word.d.next.dest_qp = self.d_peer.val().get_bits::<24>(24);
            self.d_word.d.next.ack_req = self.d_ack_req.q.val();
            self.d_word.d.next.retransmit = self.d_rtx.q.val();
            self.d_word.d.next.ts = true;
            self.d_word.d.next.psn = self.d_psn.q.val();
            self.d_word.d.next.is_write = true;
            self.d_word.d.next.has_imm = (self.d_opcode.q.val() == 0x09) | (self.d_opcode.q.val() == 0x0B);
            self.d_word.d.next.msn = self.msn_ram.read_data.val().get_bits::<16>(0);
            self.d_word.d.next.rq_msn = self.msn_ram.read_data.val().get_bits::<16>(16);
            // The TSETH's time is filled in as the builder takes the
            // header (the arbiter).
            self.d_word.d.next.tx_ts = 0.into();
            self.d_word.d.next.ts_res = true;
            self.d_word.d.next.ts_format = self.k_ts_format.val();
            self.d_word.d.next.va = self.d_va.q.val();
            self.d_word.d.next.rkey = self.d_rkey.q.val();
            self.d_word.d.next.dma_len = self.d_dma_len.q.val();
            self.d_word.d.next.imm = self.d_imm.q.val();
            self.d_state.d.next = 4.into();
        } else if (self.d_state.q.val() == 4) & self.d_dead.val() {
            // Its QP went to error since the record was taken: dropped
            // before anything is issued (no header, payload read or send
            // record; no METH or EV sequence advanced). A cycle later if
            // the builder's drop takes this cycle's count.
            if !self.flushed_elsewhere.val() {
                self.cnt_flushed.next = true;
                self.d_state.d.next = 0.into();
            }
        } else if self.d_state.q.val() == 4 {
            self.d_hdr.d.next.qp = self.d_qp.q.val();
            self.d_hdr.d.next.data = true;
            self.d_hdr.d.next.dst_mac = self.addr_d.read_data.val().get_value_addr_mac();
            self.d_hdr.d.next.src_mac = self.loc_mac.q.val();
            self.d_hdr.d.next.vlan = self.loc_vlan.q.val();
            self.d_hdr.d.next.vlan_tci = self.loc_tci.q.val();
            self.d_hdr.d.next.ipv6 = self.loc_ipv6.q.val();
            self.d_hdr.d.next.src_ip = self.loc_ip.q.val();
            self.d_hdr.d.next.dst_ip = self.addr_d.read_data.val().get_bits::<128>(48);
            self.d_hdr.d.next.dscp = self.loc_dscp.q.val();
            self.d_hdr.d.next.ttl = self.loc_ttl.q.val();
            self.d_hdr.d.next.ev = self.d_value.q.val();
            self.d_hdr.d.next.opcode = self.d_opcode.q.val();
            self.d_hdr.d.next.pad = bit_cast::<2, 16>((!self.d_len.q.val() + 1) & 3);
            self.d_hdr.d.next.pkey = self.d_peer.val().get_bits::<16>(0);
            self.d_hdr.d.next.dest_qp = self.d_peer.val().get_bits::<24>(24);
            self.d_hdr.d.next.ack_req = self.d_ack_req.q.val();
            self.d_hdr.d.next.psn = self.d_psn.q.val();
            self.d_hdr.d.next.reth_va = self.d_va.q.val();
            self.d_hdr.d.next.reth_rkey = self.d_rkey.q.val();
            self.d_hdr.d.next.reth_len = self.d_dma_len.q.val();
            self.d_hdr.d.next.imm = self.d_imm.q.val();
            self.d_hdr.d.next.aeth_syndrome = 0.into();
            self.d_hdr.d.next.aeth_msn = 0.into();
            self.d_hdr.d.next.ext = self.d_ext.val();
            if self.placement.val() {
                self.d_hdr.d.next.ext_len = 28.into();
            } else {
                self.d_hdr.d.next.ext_len = 16.into();
            }
            self.d_hdr.d.next.payload_len = self.d_len.q.val();
            self.d_hdr.d.next.mrc10 = self.loc_mrc10.q.val();
            self.d_hdr.d.next.ecn = 0.into();
            if self.loc_mrc10.q.val() {
                self.d_hdr.d.next.ecn = self.k_ecn_data.val();
                if self.d_rtx.q.val() & (self.loc_dscp.q.val() == self.k_dscp_trimmable.val()) {
                    self.d_hdr.d.next.dscp = self.k_dscp_retx.val();
                }
            }
            self.ev_seq.write_enable.next = true;
            self.msn_ram.write_enable.next = true;
            self.d_hdr_done.d.next = false;
            // No payload: nothing to read.
            self.d_rd_done.d.next = self.d_len.q.val() == 0;
            self.d_state.d.next = 5.into();
        } else if self.d_state.q.val() == 5 {
            if self.d_fifo.write.val() {
                self.d_hdr_done.d.next = true;
            }
            if self.d_rd_fire.val() {
                self.d_rd_done.d.next = true;
            }
            if (self.d_hdr_done.q.val() | self.d_fifo.write.val()) & (self.d_rd_done.q.val() | self.d_rd_fire.val()) {
                self.cnt_data_sent.next = true;
                self.d_state.d.next = 0.into();
            }
        } else if self.d_dead.val() {
            // No GOOD EV and the QP in error: dropped instead of retried
            // (no report or probe brings an EV of a QP in error back).
            if !self.flushed_elsewhere.val() {
                self.cnt_flushed.next = true;
                self.d_state.d.next = 0.into();
            }
        } else {
            // Retry the select (the QP had no GOOD EV).
            if !self.ev_busy.val() {
                self.sel_valid.next = true;
                self.d_state.d.next = 1.into();
            }
        }

        // ---- ACK sequencer.
        if self.a_state.q.val() == 0 {
            self.ack_ready.next = true;
            if self.ack_valid.val() {
                self.a_qp.d.next = self.ack_qp.val();
                self.a_kind.d.next = self.ack_kind.val();
                self.a_psn.d.next = self.ack_psn.val();
                self.a_cum.d.next = self.ack_cum.val();
                self.a_tpsn.d.next = self.ack_trigger_psn.val();
                self.a_msn.d.next = self.ack_msn.val();
                self.a_nack_kind.d.next = self.ack_nack_kind.val();
                self.a_nak_code.d.next = self.ack_nak_code.val();
                self.a_base.d.next = self.ack_base.val();
                self.a_bitmap.d.next = self.ack_bitmap.val();
                self.a_ecn.d.next = self.ack_ecn_count.val();
                self.a_tce.d.next = self.ack_trigger_ce.val();
                self.a_ev.d.next = self.ack_ev.val();
                self.a_ev_index.d.next = self.ack_ev_index.val();
                self.a_echo.d.next = self.ack_echo_ts.val();
                self.a_arrival.d.next = self.ack_arrival_ns.val();
                self.a_probe.d.next = self.ack_probe.val();
                self.a_probe_legacy.d.next = self.ack_probe.val() & self.ack_probe_legacy.val();
                self.a_probe_id.d.next = self.ack_probe_id.val();
                self.a_send_probe.d.next = false;
                self.a_state.d.next = 1.into();
            } else {
                self.prb_ready.next = true;
                if self.prb_valid.val() {
                    self.a_qp.d.next = self.prb_qp.val();
                    self.a_kind.d.next = 0.into();
                    self.a_ev_index.d.next = bit_cast::<16, 7>(self.prb_ev.val());
                    self.a_probe.d.next = false;
                    self.a_probe_legacy.d.next = false;
                    self.a_send_probe.d.next = true;
                    self.a_state.d.next = 1.into();
                }
            }
        } else if self.a_state.q.val() == 1 {
            // Peer row read in flight (address = a_qp).
            self.a_state.d.next = 2.into();
        } else if self.a_state.q.val() == 2 {
            // Address row read in flight (address = the peer row's index):
            // build in the next cycle from both.
            self.a_hdr.d.next.src_mac = self.loc_mac.q.val();
            self.a_hdr.d.next.vlan = self.loc_vlan.q.val();
            self.a_hdr.d.next.vlan_tci = self.loc_tci.q.val();
            self.a_hdr.d.next.ipv6 = self.loc_ipv6.q.val();
            self.a_hdr.d.next.src_ip = self.loc_ip.q.val();
            self.a_hdr.d.next.dscp = self.loc_dscp.q.val();
            self.a_hdr.d.next.ttl = self.loc_ttl.q.val();
            self.a_hdr.d.next.ev = self.a_ev.q.val();
            self.a_hdr.d.next.opcode = 0x11.into();
            self.a_hdr.d.next.pad = 0.into();
            self.a_hdr.d.next.pkey = self.a_peer.val().get_bits::<16>(0);
            self.a_hdr.d.next.dest_qp = self.a_peer.val().get_bits::<24>(24);
            self.a_hdr.d.next.ack_req = false;
            self.a_hdr.d.next.reth_va = 0.into();
            self.a_hdr.d.next.reth_rkey = 0.into();
            self.a_hdr.d.next.reth_len = 0.into();
            self.a_hdr.d.next.imm = 0.into();
            self.a_hdr.d.next.aeth_msn = self.a_msn.q.val();
            self.a_hdr.d.next.ext = self.a_ext.val();
            self.a_hdr.d.next.payload_len = 0.into();
            self.a_hdr.d.next.ecn = 0.into();
            self.a_hdr.d.next.mrc10 = self.loc_mrc10.q.val();
            if self.loc_mrc10.q.val() {
                self.a_hdr.d.next.dscp = self.k_dscp_control.val();
            }
            // The MRC 1.0 word (`proto::model::mrc`'s `build_sack` /
            // `queue_nack` / `queue_fatal_ack`, with what the ACK record
            // carries; the rest zero, see the page): contexts are the low
            // 16 bits of the QP numbers.
            self.a_word.d.next.se = false;
            self.a_word.d.next.mig = true;
            self.a_word.d.next.pad = 0.into();
            self.a_word.d.next.pkey = self.a_peer.val().get_bits::<16>(0);
            self.a_word.d.next.fecn = false;
            self.a_word.d.next.becn = false;
            self.a_word.d.next.dest_qp = self.a_peer.val().get_bits::<24>(24);
            self.a_word.d.next.ack_req = false;
            self.a_word.d.next.retransmit = false;
            self.a_word.d.next.ts = false;
            self.a_word.d.next.is_write = false;
            self.a_word.d.next.has_imm = false;
            self.a_word.d.next.is_probe = false;
            self.a_word.d.next.is_endpoint = false;
            self.a_word.d.next.has_eeth = false;
            self.a_word.d.next.ctl_ev = self.a_ev.q.val();
            self.a_word.d.next.ctl_sctx = bit_cast::<16, 8>(self.a_qp.q.val());
            self.a_word.d.next.ctl_rctx = self.a_peer.val().get_bits::<16>(24);
            self.a_word.d.next.ctl_cc_type = self.k_cc_type.val();
            self.a_word.d.next.ctl_cc_flags = 0.into();
            // SETH: cumulative PSN, base as an offset from it, the bitmap,
            // the receive window, the CE count (saturating), m (below);
            // CC_STATE: the trigger's TSETH timestamp (the record's echo,
            // 16 bits).
            self.a_word.d.next.skip_mode = 0.into();
            // A probe answer carries the probe id in the ack PSN offset
            // (`build_sack` with a probe); any other SACK its trigger's
            // offset from the cumulative PSN.
            self.a_word.d.next.probe_response = self.a_probe.q.val();
            self.a_word.d.next.ack_psn_offset = self.a_ack_psn_offset.val();
            if self.a_probe.q.val() {
                self.a_word.d.next.ack_psn_offset = self.a_ev_index.q.val();
            }
            self.a_word.d.next.mpr = self.k_sack_mpr.val();
            self.a_word.d.next.sack_offset = self.a_sack_offset.val().get_bits::<16>(0);
            self.a_word.d.next.bitmap = self.a_bitmap.q.val();
            // The echo advanced by the service time in TSETH units
            // (`choices::echo_with_service_time`, the model's for a peer
            // with SVC_TIME): the requester's sample is then the network's
            // round trip. A probe answer echoes the probe's stamp as is.
            self.a_word.d.next.echo_ts = self.a_echo.q.val().get_bits::<16>(0);
            if !self.a_probe.q.val() {
                // 6: `mrc10_wire::TS_UNIT_SHIFT` (asserted above).
                self.a_word.d.next.echo_ts =
                    self.a_echo.q.val().get_bits::<16>(0) + self.a_service.val().get_bits::<16>(6);
            }
            self.a_word.d.next.restore = false;
            self.a_word.d.next.ooo_count = 0.into();
            self.a_word.d.next.cwnd_penalty = 0.into();
            self.a_word.d.next.rcvd_bytes = 0.into();
            // NETH: the NACKed PSN, the reason, the echo.
            self.a_word.d.next.vendor_info = 0.into();
            self.a_word.d.next.nack_ts = self.a_echo.q.val().get_bits::<16>(0);
            self.a_word.d.next.nack_reason = self.k_nack_oor.val();
            if self.a_nack_kind.q.val() == 1 {
                self.a_word.d.next.nack_reason = self.k_nack_trimmed.val();
            }
            // AETH (remote access NAK): the NAK syndrome, the MSN.
            self.a_word.d.next.syndrome = bits::<8>(0x60) | bit_cast::<8, 5>(self.a_nak_code.q.val());
            self.a_word.d.next.aeth_msn = self.a_msn.q.val();
            self.a_word.d.next.is_sack = false;
            self.a_word.d.next.is_nack = false;
            self.a_word.d.next.is_ack = false;
            if self.is_sack.val() {
                self.a_word.d.next.opcode = self.k_op_sack.val();
                self.a_word.d.next.psn = self.a_cum.q.val();
                self.a_word.d.next.is_sack = true;
                self.a_word.d.next.ctl_psn = self.a_cum.q.val();
                // SKIP_ONCE for a CE-marked trigger (1: `SkipMode::SkipOnce`);
                // a probe's answer carries no m.
                if self.a_tce.q.val() & !self.a_probe.q.val() {
                    self.a_word.d.next.skip_mode = 1.into();
                }
                if self.a_ecn.q.val() > self.k_ce_max.val() {
                    self.a_word.d.next.ctl_cc_flags = self.k_ce_max.val().get_bits::<4>(0);
                } else {
                    self.a_word.d.next.ctl_cc_flags = self.a_ecn.q.val().get_bits::<4>(0);
                }
            } else if self.a_nack_kind.q.val() == 3 {
                self.a_word.d.next.opcode = self.k_op_ack.val();
                self.a_word.d.next.psn = self.a_psn.q.val();
                self.a_word.d.next.is_ack = true;
            } else {
                self.a_word.d.next.opcode = self.k_op_nack.val();
                self.a_word.d.next.psn = self.a_psn.q.val();
                self.a_word.d.next.is_nack = true;
                self.a_word.d.next.ctl_psn = self.a_psn.q.val();
            }
            if self.a_send_probe.q.val() {
                // Our reliability probe (`proto::model::mrc`'s
                // `queue_probe`, timestamped as it goes out): PSN 0, the
                // PETH with the probed EV's index as the probe id
                // (`choices::probe_id_of_ev`), the contexts, the TSETH
                // grain's timestamp; on the probed EV.
                self.a_hdr.d.next.ev = self.ev_val_a.read_data.val();
                self.a_word.d.next.opcode = self.k_op_probe.val();
                self.a_word.d.next.psn = 0.into();
                self.a_word.d.next.is_probe = true;
                self.a_word.d.next.probe_id = self.a_ev_index.q.val();
                self.a_word.d.next.probe_sctx = bit_cast::<16, 8>(self.a_qp.q.val());
                self.a_word.d.next.probe_rctx = self.a_peer.val().get_bits::<16>(24);
                self.a_word.d.next.probe_ts = self.now_ns.val().get_bits::<16>(6);
                self.a_word.d.next.is_sack = false;
                self.a_word.d.next.is_nack = false;
                self.a_word.d.next.is_ack = false;
            }
            if self.is_sack.val() {
                // ACK syndrome with "no credits" (0x1F), the cumulative PSN.
                self.a_hdr.d.next.aeth_syndrome = 0x1F.into();
                self.a_hdr.d.next.psn = self.a_cum.q.val();
                self.a_hdr.d.next.ext_len = 28.into();
                if self.a_probe_legacy.q.val() {
                    self.a_hdr.d.next.ext_len = 16.into();
                }
            } else if self.a_send_probe.q.val() {
                // Our legacy probe: an ACK syndrome, PSN 0 (the peer reads
                // neither), the 16-byte probe extension.
                self.a_hdr.d.next.aeth_syndrome = 0x1F.into();
                self.a_hdr.d.next.psn = 0.into();
                self.a_hdr.d.next.ext_len = 16.into();
            } else {
                // NAK (0x60 | code), the NACKed PSN.
                self.a_hdr.d.next.aeth_syndrome = bits::<8>(0x60) | bit_cast::<8, 5>(self.a_nak_code.q.val());
                self.a_hdr.d.next.psn = self.a_psn.q.val();
                self.a_hdr.d.next.ext_len = 12.into();
            }
            self.a_state.d.next = 3.into();
        } else if self.a_state.q.val() == 3 {
            // The address row (read since cycle 2) is out now.
            self.a_hdr.d.next.qp = self.a_qp.q.val();
            self.a_hdr.d.next.data = false;
            self.a_hdr.d.next.dst_mac = self.addr_a.read_data.val().get_value_addr_mac();
            self.a_hdr.d.next.dst_ip = self.addr_a.read_data.val().get_bits::<128>(48);
            self.a_state.d.next = 4.into();
        } else {
            if self.a_issue.val() & self.hdr_ready.val() {
                self.cnt_ack_sent.next = !self.a_send_probe.q.val();
                self.a_state.d.next = 0.into();
            }
        }

        // A send-context row restarts the QP's METH counters (after the
        // sequencer: it wins a same-cycle advance, the QP is being set up).
        if self.cfg_peer.val() & (self.cfg.index.val() < 256) {
            self.msn_ram.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
            self.msn_ram.write_data.next = 0.into();
            self.msn_ram.write_enable.next = true;
        }
    }
}
