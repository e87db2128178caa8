//! RTL of the MRC NIC pipeline, written in rust-hdl 0.46 and emitted as
//! Verilog, plus the flow around it (Verilog emission with stable module
//! names, Verilator lint, Yosys synthesis estimates). See `docs/hw/`.
//!
//! Blocks: [`csr`] (the self-describing register map of [`regmap`]: build
//! ID, counter bank, fault-injection settings, config-table writes,
//! doorbells) behind [`axil`] (AXI-Lite slave), [`fault_inject`] (frame
//! drop and loopback on the MAC streams) and [`rx_parser`] (RX header
//! parser front end), joined in the top [`core::MrcCore`]. The flow is [`flow`].

pub mod axil;
pub mod core;
pub mod csr;
pub mod ev_selector;
pub mod fault_inject;
pub mod flow;
pub mod regmap;
pub mod rx_parser;
pub mod sack_table;
