//! The hardware/software contract of the MRC NIC: everything the RTL
//! (`hw`) and the software (`driver`, the testbenches) must agree on,
//! defined once.
//!
//! * [`regmap`]: the CSR register map (register blocks, counters, the
//!   doorbell window); `docs/hw/regmap.md` is rendered from it.
//! * [`layout`]: host-memory records (SQE, CQE, EV event) and the QP
//!   send-context row, with `encode`/`decode`; `docs/hw/layout.md`.
//! * [`config`]: every config-table id and the row layouts of the tables
//!   other than the send context.
//!
//! A layout is a table of [`Field`]s. The RTL reads and writes rows
//! through accessors generated from these tables (`hw::contract_rows`),
//! never through bit positions of its own.
//!
//! No rust-hdl here: the driver builds on this crate alone.

pub mod config;
pub mod field;
pub mod layout;
pub mod regmap;

pub use field::Field;
