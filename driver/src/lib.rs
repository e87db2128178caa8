//! Userspace driver of the MRC NIC (docs/driver.md).
//!
//! Layers, bottom up:
//! * [`device`]: the [`Device`] trait (BAR0 MMIO, DMA memory, optional
//!   interrupts) and its backends: [`NullDevice`], [`mock::MockDevice`],
//!   [`vfio::VfioDevice`], the software NIC [`soft::SoftNic`]; a
//!   co-simulation backend is one more `Device`. [`select`] names them.
//! * [`discovery`]: the register-block walk that refuses a bitstream
//!   this driver was not built for.
//! * [`config`]: config-table rows and the port that writes them.
//! * [`ring`]: send queue, completion and EV-event rings with phase bits.
//! * [`verbs`]: the API: [`Context`], protection domains, memory
//!   regions, completion queues, queue pairs, the EV [`Controller`].
//!
//! The register map, the host-memory layouts and the config-table rows
//! are the hardware/software contract, the `contract` crate, shared with
//! the RTL without building it (or rust-hdl).

pub mod config;
pub mod device;
pub mod discovery;
pub mod mock;
pub mod regfile;
pub mod ring;
pub mod select;
pub mod soft;
pub mod verbs;
pub mod vfio;

/// The status of a completion, as [`WorkCompletion::status`] holds it.
pub use contract::layout::CqStatus;
pub use device::{Device, DeviceError, DmaBuffer, NullDevice};
pub use discovery::{discover, BuildExpectation, DeviceInfo, DiscoveryError};
pub use verbs::{
    Access, CcProfile, CompletionQueue, Context, Controller, CqError, Error, EvProfile, LocalAddress, MemoryRegion,
    ModifyError, NsccParams, OpenOptions, PeerAddress, PostError, ProtectionDomain, QpState, QpTransition, QueuePair,
    RtrAttr, RtsAttr, Timeouts, WcOpcode, WorkCompletion, WriteWr, MAX_ACK_TIMEOUT_EXP,
};
