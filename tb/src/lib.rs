//! Testbench components for the RTL under Verilator (the `verilated`
//! binding). They know the bus protocols, not the NIC: the system built
//! from them is the `cosim` crate. Each component owns a group of a
//! model's ports and has two calls per clock cycle, in this order for
//! every component: `drive` (set inputs, before
//! [`verilated::Model::step`]) and `observe` (read the outputs the step
//! sampled just before the edge, and so learn which `valid & ready`
//! handshakes happened at it).
//!
//! * [`axis`]: AXI-Stream frame source and sink (MAC RX / TX) with random
//!   valid / ready stalls.
//! * [`dma`]: host memory and the server of the core's transaction-level
//!   DMA read and write ports, with random latency and stalls, which also
//!   checks the protocol (lengths, `last`, keep masks).
//! * [`pcie`]: the PCIe link and host behind the DMA ports in
//!   performance runs (rates, TLP overheads, size limits, tags, latency).
//! * [`axil`]: AXI-Lite master for the CSRs.
//! * [`stall`]: the pause and back-pressure generator of every stream
//!   handshake (AXI-Stream, AXI-Lite, DMA, and the block tests' ports).
//! * [`rng`]: the seeded generators every testbench draws from.
//! * [`lockstep`]: a rust-hdl simulation recorded port by port and
//!   replayed on the block's emitted Verilog, every output compared in
//!   every cycle.

pub mod axil;
pub mod axis;
pub mod dma;
pub mod lockstep;
pub mod pcie;
pub mod rng;
pub mod stall;

pub use verilated::{Model, PortId, VerilatedError};
