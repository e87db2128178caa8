//! The sans-IO golden model of an MRC queue pair and of the RoCEv2 RC
//! baseline, behind one API ([`api::QueuePair`], [`qp::Qp`]).

pub mod api;
pub mod cc;
pub mod ev;
pub mod memory;
pub mod mrc;
pub mod qp;
pub mod rc;
mod timer;

pub use api::*;
pub use qp::Qp;
