//! Testbench components for the Verilator co-simulation of the `hw` RTL
//! (`verilated`). Each component owns a group of a model's ports and
//! has two calls per clock cycle, in this order for every component:
//! `drive` (set inputs, before [`verilated::Model::step`]) and
//! `observe` (read the outputs the step sampled just before the edge, and
//! so learn which `valid & ready` handshakes happened at it).
//!
//! * [`axis`]: AXI-Stream frame source and sink (MAC RX / TX) with random
//!   valid / ready stalls.
//! * [`dma`]: host memory and the server of the core's transaction-level
//!   DMA read and write ports, with random latency and stalls, which also
//!   checks the protocol (lengths, `last`, keep masks).
//! * [`axil`]: AXI-Lite master for the CSRs.
//! * [`nic`]: one verilated `MrcCore` with all of the above around it.
//! * [`rng`]: the small seeded generator they share.
//! * [`fabric`]: the multipath fabric between two NICs' MAC ports (per-EV
//!   delay, jitter, loss, blackholes; `proto::loopback::LinkConfig`).
//! * [`cosim`]: two NICs over the fabric, a message generator, the
//!   scoreboard, and the same run described for the golden model.
//! * [`cosim_device`]: the driver's co-simulation backend, a
//!   `driver::Device` over a [`nic::Nic`] whose DMA is served from the
//!   driver's own buffers.

pub mod axil;
pub mod axis;
pub mod cosim;
pub mod cosim_device;
pub mod dma;
pub mod fabric;
pub mod nic;
pub mod rng;

pub use verilated::{Model, PortId, VerilatedError};
