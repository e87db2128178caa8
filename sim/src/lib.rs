//! Simulators.
//!
//! * [`fabric`]: a packet-level discrete-event simulator of datacenter
//!   fabrics at htsim scale, whose endpoints run the golden model from
//!   `proto` unchanged (MRC and the RoCEv2 RC baseline).
//! * [`verilated`]: our Verilator binding: builds a Verilog top into a
//!   cached shared library with a generated shim and steps it one clock
//!   cycle per FFI call, all ports (any width) in two word buffers.

pub mod anchors;
pub mod fabric;
pub mod verilated;
