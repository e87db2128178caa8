//! RTL of the MRC NIC pipeline, written in rust-hdl 0.46 and emitted as
//! Verilog, plus the flow around it (Verilog emission with stable module
//! names, Verilator lint, Yosys synthesis estimates). See `docs/hw/`.
//!
//! Blocks: [`csr`] (the self-describing register map of [`regmap`]) and
//! [`rx_parser`] (RX header parser front end), joined in the top
//! [`core::MrcCore`]; [`ev_selector`], [`sack_table`] and [`requester`]
//! (the send-queue engine) stand alone so far. The host-memory and
//! config layouts shared with the driver are in [`layout`]. The flow is
//! [`flow`].

pub mod cc_gate;
pub mod core;
pub mod csr;
pub mod dma_arb;
pub mod dma_axi;
pub mod ev_selector;
pub mod flow;
pub mod layout;
pub mod regmap;
pub mod ring_writer;
pub mod requester;
pub mod retransmit;
pub mod rx_parser;
pub mod sack_table;
pub mod send_cq;
pub mod tx_path;
