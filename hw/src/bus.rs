//! The buses the blocks share, as rust-hdl interfaces: each is a pair of
//! `#[derive(LogicInterface)]` bundles, one per side, so a parent
//! connects a whole bus in one statement:
//!
//! * between two children, `join` (an output bundle to the matching input
//!   bundle): `ConfigSource::join(&mut self.csr.cfg, &mut self.req.cfg);`
//! * between the parent's own port and a child's port of the same side,
//!   `link`: `AxiLiteSubordinate::link(&mut self.s_axil, &mut self.axil.s_axil);`
//!
//! (`#[hdl_gen]` accepts only the `Type::join(&mut a, &mut b)` call form.)
//!
//! Signal names inside a bundle are the bus's own (`valid`, `tdata`, ...):
//! the Verilog port of field `f` of a block's bundle `b` is `b$f`
//! (`cfg$valid`, `s_axil$awaddr`, `dma_rd$req$addr`); `$` is legal in a
//! Verilog identifier and Verilator's C++ spells it `__024`.
//!
//! Every bus is valid/ready: a transfer happens in a cycle where both are
//! high, except the config port, a one-cycle strobe with no back-pressure
//! (the CSR block writes a row at most once per AXI-Lite write burst).

use contract::config::{ROW_BITS, TABLE_BITS};
use contract::regmap::ADDR_BITS;
use rust_hdl::prelude::*;

/// Width of a config row index (`cfg_index`: a QP, a ring, or
/// `INDEX_SELECT | n`).
pub const CFG_INDEX_BITS: usize = 16;
/// AXI-Lite data width.
pub const AXIL_DATA_BITS: usize = 32;
/// AXI-Lite write strobes (one per data byte).
pub const AXIL_STRB_BITS: usize = AXIL_DATA_BITS / 8;
/// AXI response code width (`bresp` / `rresp`).
pub const AXI_RESP_BITS: usize = 2;
/// Data path width: AXI-Stream beats and DMA beats.
pub const BEAT_BITS: usize = 512;
/// Byte enables of one beat.
pub const KEEP_BITS: usize = BEAT_BITS / 8;
/// DMA host address width.
pub const DMA_ADDR_BITS: usize = 64;
/// DMA request length in bytes.
pub const DMA_LEN_BITS: usize = 16;
/// DMA read tag: which requester a response belongs to.
pub const DMA_TAG_BITS: usize = 8;

// ---- Config write port: the CSR block writes one config-table row.

/// The config port, writing side (the CSR block).
#[derive(LogicInterface, Default)]
#[join = "ConfigSink"]
pub struct ConfigSource {
    /// One row is written this cycle.
    pub valid: Signal<Out, Bit>,
    /// Config table id (`contract::config::table`).
    pub table: Signal<Out, Bits<TABLE_BITS>>,
    /// Row index within the table.
    pub index: Signal<Out, Bits<CFG_INDEX_BITS>>,
    /// The row, byte 0 in bits 7:0 (`contract::config` row layouts).
    pub data: Signal<Out, Bits<ROW_BITS>>,
}

/// The config port, receiving side (every block with config rows).
#[derive(LogicInterface, Default)]
#[join = "ConfigSource"]
pub struct ConfigSink {
    pub valid: Signal<In, Bit>,
    pub table: Signal<In, Bits<TABLE_BITS>>,
    pub index: Signal<In, Bits<CFG_INDEX_BITS>>,
    pub data: Signal<In, Bits<ROW_BITS>>,
}

// ---- AXI-Lite (the host's register window).

/// AXI-Lite, manager side (the host; the testbench's master).
#[derive(LogicInterface, Default)]
#[join = "AxiLiteSubordinate"]
pub struct AxiLiteManager {
    pub awaddr: Signal<Out, Bits<ADDR_BITS>>,
    pub awvalid: Signal<Out, Bit>,
    pub awready: Signal<In, Bit>,
    pub wdata: Signal<Out, Bits<AXIL_DATA_BITS>>,
    pub wstrb: Signal<Out, Bits<AXIL_STRB_BITS>>,
    pub wvalid: Signal<Out, Bit>,
    pub wready: Signal<In, Bit>,
    pub bresp: Signal<In, Bits<AXI_RESP_BITS>>,
    pub bvalid: Signal<In, Bit>,
    pub bready: Signal<Out, Bit>,
    pub araddr: Signal<Out, Bits<ADDR_BITS>>,
    pub arvalid: Signal<Out, Bit>,
    pub arready: Signal<In, Bit>,
    pub rdata: Signal<In, Bits<AXIL_DATA_BITS>>,
    pub rresp: Signal<In, Bits<AXI_RESP_BITS>>,
    pub rvalid: Signal<In, Bit>,
    pub rready: Signal<Out, Bit>,
}

/// AXI-Lite, subordinate side (the NIC's register window).
#[derive(LogicInterface, Default)]
#[join = "AxiLiteManager"]
pub struct AxiLiteSubordinate {
    pub awaddr: Signal<In, Bits<ADDR_BITS>>,
    pub awvalid: Signal<In, Bit>,
    pub awready: Signal<Out, Bit>,
    pub wdata: Signal<In, Bits<AXIL_DATA_BITS>>,
    pub wstrb: Signal<In, Bits<AXIL_STRB_BITS>>,
    pub wvalid: Signal<In, Bit>,
    pub wready: Signal<Out, Bit>,
    pub bresp: Signal<Out, Bits<AXI_RESP_BITS>>,
    pub bvalid: Signal<Out, Bit>,
    pub bready: Signal<In, Bit>,
    pub araddr: Signal<In, Bits<ADDR_BITS>>,
    pub arvalid: Signal<In, Bit>,
    pub arready: Signal<Out, Bit>,
    pub rdata: Signal<Out, Bits<AXIL_DATA_BITS>>,
    pub rresp: Signal<Out, Bits<AXI_RESP_BITS>>,
    pub rvalid: Signal<Out, Bit>,
    pub rready: Signal<In, Bit>,
}

// ---- AXI-Stream (frames; 512-bit beats).

/// AXI-Stream, sending side.
#[derive(LogicInterface, Default)]
#[join = "AxisSink"]
pub struct AxisSource {
    pub tdata: Signal<Out, Bits<BEAT_BITS>>,
    /// Byte enables (byte 0 in bits 7:0 of `tdata`).
    pub tkeep: Signal<Out, Bits<KEEP_BITS>>,
    /// Last beat of the frame.
    pub tlast: Signal<Out, Bit>,
    pub tvalid: Signal<Out, Bit>,
    pub tready: Signal<In, Bit>,
}

/// AXI-Stream, receiving side.
#[derive(LogicInterface, Default)]
#[join = "AxisSource"]
pub struct AxisSink {
    pub tdata: Signal<In, Bits<BEAT_BITS>>,
    pub tkeep: Signal<In, Bits<KEEP_BITS>>,
    pub tlast: Signal<In, Bit>,
    pub tvalid: Signal<In, Bit>,
    pub tready: Signal<Out, Bit>,
}

// ---- DMA read: requests (address, length, tag) and in-order response
// beats carrying the request's tag.

/// DMA read requests, issuing side.
#[derive(LogicInterface, Default)]
#[join = "DmaReadRequestSink"]
pub struct DmaReadRequestSource {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    /// Host address of the first byte.
    pub addr: Signal<Out, Bits<DMA_ADDR_BITS>>,
    /// Bytes to read (> 0).
    pub len: Signal<Out, Bits<DMA_LEN_BITS>>,
    /// Returned on every response beat of this request.
    pub tag: Signal<Out, Bits<DMA_TAG_BITS>>,
}

/// DMA read requests, serving side.
#[derive(LogicInterface, Default)]
#[join = "DmaReadRequestSource"]
pub struct DmaReadRequestSink {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub addr: Signal<In, Bits<DMA_ADDR_BITS>>,
    pub len: Signal<In, Bits<DMA_LEN_BITS>>,
    pub tag: Signal<In, Bits<DMA_TAG_BITS>>,
}

/// DMA read response beats, serving side.
#[derive(LogicInterface, Default)]
#[join = "DmaReadResponseSink"]
pub struct DmaReadResponseSource {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    /// Bytes of the request in order, byte 0 of the first beat in bits 7:0.
    pub data: Signal<Out, Bits<BEAT_BITS>>,
    pub keep: Signal<Out, Bits<KEEP_BITS>>,
    /// Last beat of the request.
    pub last: Signal<Out, Bit>,
    pub tag: Signal<Out, Bits<DMA_TAG_BITS>>,
}

/// DMA read response beats, receiving side.
#[derive(LogicInterface, Default)]
#[join = "DmaReadResponseSource"]
pub struct DmaReadResponseSink {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub data: Signal<In, Bits<BEAT_BITS>>,
    pub keep: Signal<In, Bits<KEEP_BITS>>,
    pub last: Signal<In, Bit>,
    pub tag: Signal<In, Bits<DMA_TAG_BITS>>,
}

/// A DMA read port, initiating side: requests out, responses in.
#[derive(LogicInterface, Default)]
#[join = "DmaReadTarget"]
pub struct DmaReadInitiator {
    pub req: DmaReadRequestSource,
    pub rsp: DmaReadResponseSink,
}

/// A DMA read port, serving side (an arbiter input, the host bridge).
#[derive(LogicInterface, Default)]
#[join = "DmaReadInitiator"]
pub struct DmaReadTarget {
    pub req: DmaReadRequestSink,
    pub rsp: DmaReadResponseSource,
}

// ---- DMA write: a request (address, length), then its data beats.

/// DMA write requests, issuing side.
#[derive(LogicInterface, Default)]
#[join = "DmaWriteRequestSink"]
pub struct DmaWriteRequestSource {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    /// Host address of the first byte.
    pub addr: Signal<Out, Bits<DMA_ADDR_BITS>>,
    /// Bytes to write (> 0).
    pub len: Signal<Out, Bits<DMA_LEN_BITS>>,
}

/// DMA write requests, serving side.
#[derive(LogicInterface, Default)]
#[join = "DmaWriteRequestSource"]
pub struct DmaWriteRequestSink {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub addr: Signal<In, Bits<DMA_ADDR_BITS>>,
    pub len: Signal<In, Bits<DMA_LEN_BITS>>,
}

/// DMA write data beats, issuing side (in request order).
#[derive(LogicInterface, Default)]
#[join = "DmaWriteBeatSink"]
pub struct DmaWriteBeatSource {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub data: Signal<Out, Bits<BEAT_BITS>>,
    pub keep: Signal<Out, Bits<KEEP_BITS>>,
    /// Last beat of the request.
    pub last: Signal<Out, Bit>,
}

/// DMA write data beats, serving side.
#[derive(LogicInterface, Default)]
#[join = "DmaWriteBeatSource"]
pub struct DmaWriteBeatSink {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub data: Signal<In, Bits<BEAT_BITS>>,
    pub keep: Signal<In, Bits<KEEP_BITS>>,
    pub last: Signal<In, Bit>,
}

/// A DMA write port, initiating side.
#[derive(LogicInterface, Default)]
#[join = "DmaWriteTarget"]
pub struct DmaWriteInitiator {
    pub req: DmaWriteRequestSource,
    pub beat: DmaWriteBeatSource,
}

/// A DMA write port, serving side.
#[derive(LogicInterface, Default)]
#[join = "DmaWriteInitiator"]
pub struct DmaWriteTarget {
    pub req: DmaWriteRequestSink,
    pub beat: DmaWriteBeatSink,
}
