//! Simulators.
//!
//! * [`fabric`]: a packet-level discrete-event simulator of datacenter
//!   fabrics at htsim scale, whose endpoints run the golden model from
//!   `proto` unchanged (MRC and the RoCEv2 RC baseline).
//! * Verilator co-simulation: not started (see the co-simulation issue).

pub mod anchors;
pub mod fabric;
