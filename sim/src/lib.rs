//! Simulators.
//!
//! * [`fabric`]: a packet-level discrete-event simulator of datacenter
//!   fabrics at htsim scale, whose endpoints run the golden model from
//!   `proto` unchanged (MRC and the RoCEv2 RC baseline).
//!
//! The Verilator binding is the `verilated` crate.

pub mod anchors;
pub mod fabric;
