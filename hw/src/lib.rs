//! RTL of the MRC NIC pipeline, written in rust-hdl 0.46 and emitted as
//! Verilog, plus the flow around it (Verilog emission with stable module
//! names, Verilator lint, Yosys synthesis estimates). See `docs/hw/`.
//!
//! Blocks: [`csr`] (the self-describing register map of [`regmap`]) and
//! [`rx_parser`] (RX header parser front end), joined in the top
//! [`core::MrcCore`]; [`rx_buffer`] (RX frame buffer and payload placement)
//! and the other blocks are not in the top yet. The flow is [`flow`].

pub mod core;
pub mod csr;
pub mod ev_selector;
pub mod flow;
pub mod regmap;
pub mod rx_buffer;
pub mod rx_parser;
pub mod sack_table;
