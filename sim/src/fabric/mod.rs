//! Packet-level fabric simulator.
//!
//! htsim's economy: an event list, queues that serialise at line rate,
//! pipes that delay, routes chosen hop by hop by ECMP hashing of the
//! 5-tuple (so the EV, carried in the UDP source port, picks the path).

pub mod plot;
pub mod topo;
