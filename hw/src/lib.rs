//! RTL of the MRC NIC pipeline, written in rust-hdl 0.46 and emitted as
//! Verilog, plus the flow around it (Verilog emission with stable module
//! names, Verilator lint, Yosys synthesis estimates). See `docs/hw/`.
//!
//! Blocks (one module each, a page each in `docs/hw/`): [`csr`] (the
//! self-describing register map of `contract::regmap`: build ID, counter bank,
//! fault-injection settings, config-table writes, doorbells) behind
//! [`axil`]; [`fault_inject`]; [`rx_ingress`] (the RX admission: the one
//! place a received frame may be dropped); [`rx_parser`] (with its ICRC checker
//! [`rx_icrc`]); [`sack_table`];
//! [`ev_selector`]; [`rtt_est`] (the RTT estimate behind the retransmit
//! engine's stall bounds); [`requester`] (with the descriptor push cache
//! [`desc_push`] in front of its descriptor reads); [`tx_path`]; the DMA arbiters
//! [`dma_arb`] and adapter [`dma_axi`]; [`ring_writer`]; joined in the top
//! [`core::MrcCore`], with the EV prober [`ev_prober`]
//! (`docs/hw/ev_prober.md`), the NSCC window unit [`nscc`]
//! (`docs/hw/nscc.md`) and the MRC 1.0 transport header parser
//! [`rx_parser_mrc10`] and builder [`tx_header_mrc10`]
//! (`docs/hw/mrc10-wire.md`). The register map, host-memory layouts and config
//! rows shared with the driver are the `contract` crate's. The flow:
//! [`flow`].

pub mod ack_gen;
pub mod axil;
pub mod bus;
pub mod cc_gate;
pub mod completion;
pub mod contract_rows;
pub mod core;
pub mod crc32;
pub mod csr;
pub mod desc_push;
pub mod dma_arb;
pub mod dma_axi;
pub mod ev_prober;
pub mod ev_selector;
pub mod fault_inject;
pub mod flow;
pub mod nscc;
pub mod onehot;
pub mod param;
pub mod payload_push;
pub mod push_cache;
pub mod requester;
pub mod retransmit;
pub mod ring_writer;
pub mod rtt_est;
pub mod rx_buffer;
pub mod rx_icrc;
pub mod rx_ingress;
pub mod rx_parser;
pub mod rx_parser_mrc10;
pub mod rx_path;
pub mod sack_table;
pub mod send_cq;
pub mod thermometer;
pub mod tx_builder;
pub mod tx_header_mrc10;
pub mod tx_path;
