//! The sans-IO golden model of an MRC queue pair and of the RoCEv2 RC
//! baseline, behind one API ([`api::QueuePair`], [`qp::Qp`]), and the one way to
//! bring a QP up ([`setup::QpSetup`]).

pub mod api;
pub mod cc;
pub mod endpoint;
pub mod ev;
pub mod legacy_mrc;
pub mod memory;
pub mod mrc;
pub mod nscc_fixed;
pub mod qp;
pub mod rc;
mod received;
mod requester;
pub mod reverse_ev;
pub mod rtt_fixed;
pub mod setup;
mod timer;

pub use api::*;
pub use qp::Qp;
pub use setup::{CreateQp, QpSetup};
