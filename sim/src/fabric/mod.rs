//! Packet-level fabric simulator.
//!
//! htsim's economy: an event list, queues that serialise at line rate,
//! pipes that delay, routes chosen hop by hop by ECMP hashing of the
//! 5-tuple (so the EV, carried in the UDP source port, picks the path).
//!
//! * [`event`]: the event list (binary heap and radix heap).
//! * [`net`]: packets, output ports, the switch model, ECMP hashing.
//! * [`fault`]: faults on a schedule.
//! * [`traffic`]: `.cm` files and traffic generators.
//! * [`run`]: the engine (hosts driving golden-model QPs), `run`, `bench`.
//! * [`partition`]: runs cut into parts (threads or MPI ranks) and what
//!   the parts exchange; [`mail`]: the events that cross, as bytes.
//! * [`results`]: per-flow records, summary, time series, CSV/JSON.
//! * [`plot`]: FCT CDFs and goodput timelines as PNG and SVG.
//! * [`topo`]: topologies (generated or htsim `.topo`) and ECMP tables.
//! * [`testnets`]: small hand-cabled topologies (fat tree, leaf-spine,
//!   dumbbell) built with `Topology::from_nodes`.

pub mod event;
pub mod fault;
pub mod mail;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod net;
pub mod partition;
pub mod plot;
pub mod results;
pub mod run;
pub mod testnets;
pub mod topo;
pub mod traffic;

pub use fault::{Fault, FaultKind, LinkRef};
pub use net::{EcmpMode, EcnConfig, SwitchConfig};
pub use partition::{Exchange, Partition, Solo, ThreadGroup};
pub use results::{flows_csv, summary_json, FlowRecord, GoodputSeries, RunOutput, Summary};
pub use run::{bench, run, run_part, run_threads, BenchResult, Progress, SimConfig, SimError};
pub use traffic::FlowSpec;
