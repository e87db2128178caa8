//! The sans-IO golden model of an MRC queue pair and of the RoCEv2 RC
//! baseline.

pub mod cc;
pub mod ev;
