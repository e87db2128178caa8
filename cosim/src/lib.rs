//! The co-simulated system: the verilated `hw` core with the testbench
//! components (`tb`) around it, and what is built from such NICs.
//!
//! * [`nic`]: one verilated `MrcCore` with an AXI-Lite master, a DMA
//!   server and host memory, and MAC RX / TX streams around it, and the
//!   driver's config helpers.
//! * [`fabric`]: the multipath fabric between two NICs' MAC ports (per-EV
//!   delay, jitter, loss, blackholes; `proto::loopback::LinkConfig`).
//! * [`system`]: two NICs over the fabric, a message generator, the
//!   scoreboard, and the same run described for the golden model.
//! * [`golden`]: the golden model's side of a run with several QP pairs
//!   (N pairs of model QPs over the same two links).
//! * [`verdict`]: the judged verdict of a named scenario (comparisons with
//!   the golden model, allowances, expected QP errors).
//! * [`device`]: the driver's co-simulation backend, a `driver::Device`
//!   over a [`nic::Nic`] whose DMA is served from the driver's own
//!   buffers.
//! * [`waves`]: the saved GTKWave view written beside every FST trace of
//!   a [`nic::Nic`].

pub mod device;
pub mod fabric;
pub mod golden;
pub mod nic;
pub mod system;
pub mod udp_bridge;
pub mod verdict;
pub mod waves;
