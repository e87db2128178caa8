//! The executable specification of MRC (Multipath Reliable Connection).
//!
//! * [`wire`]: packet formats as zero-copy typed views over byte slices plus
//!   owned representations that parse and emit (RoCEv2 encapsulation, BTH,
//!   RETH, ImmDt, AETH and MRC's own extension headers), MRC 1.0 as published
//!   (`wire::mrc10`), the ICRC and a pcap writer and reader.
//!   `docs/protocol.md` is the prose half of the same spec.
//! * [`model`]: the sans-IO golden model of an MRC queue pair and of the
//!   RoCEv2 RC (go-back-N) baseline behind the same API: packets and `now` in;
//!   packets, timer deadlines and events out. No clocks, sockets or threads.
//! * `test_support` (feature `test-support`): conveniences for tests and
//!   benches that bring golden-model QPs up.
//!
//! Everything else in the workspace (fabric simulator, RTL, co-simulation,
//! driver) is checked against this crate.

pub mod hostile;
pub mod loopback;
pub mod model;
pub mod psn;
#[cfg(feature = "test-support")]
pub mod test_support;
pub mod time;
pub mod wire;

pub use psn::Psn;
pub use time::{Duration, Instant};
