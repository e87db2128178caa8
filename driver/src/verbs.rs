//! The verbs-style API with MRC's concepts.
//!
//! [`Context`] (an opened, discovered device) -> [`ProtectionDomain`] ->
//! [`MemoryRegion`] (rkeys in config table MR) and [`QueuePair`] on a
//! [`CompletionQueue`]; QPs move RST -> INIT -> RTR -> RTS with the
//! receive / send attributes of `proto::model` (P_Key; peer QP, receive
//! PSN, peer address; send PSN, MPR send window, WRITE-IMM budget,
//! timeout and retries, EV set, congestion-control window). Every
//! transition becomes config rows in the order `docs/hw/core.md` and the
//! core tests use (CC window before the send context, the send context
//! last because writing it starts the QP).
//!
//! What the hardware has and has not, and what the driver does about it:
//! * No receive queue: the card writes a WRITE-IMM's receive completion
//!   straight into the QP's CQ (`has_imm` set). [`QueuePair::post_recv`]
//!   keeps the model's semantics in software: receive completions consume
//!   posted receives in order, and wait (held) when none is posted.
//! * No WRITE-IMM budget on the send side: the driver enforces it
//!   (`RtsAttr::max_wimm` outstanding WRITE-IMM messages).
//! * No PDs or access rights in the MR table: the PD is checked by the
//!   driver on the local side only (a local region must belong to the
//!   QP's PD); any live rkey is accepted by the card for any QP.
//! * Unsignaled WRs produce no CQE; the driver signals one WR per half
//!   ring itself so it can reclaim slots, and hides that CQE.

use crate::config::{ConfigError, ConfigPort};
use crate::device::{DeviceError, DmaBuffer};
use crate::discovery::{discover, BuildExpectation, DeviceInfo, DiscoveryError};
use crate::ring::{PhaseRing, RingError, SendRing};
use crate::Device;
use contract::config::{self, table as cfg_table, Row};
use contract::layout::{self, cqe, CqStatus, LayoutError, SqContext, SqDescriptor, SqOpcode};
use contract::regmap;
use std::collections::VecDeque;
use std::net::IpAddr;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// QPs, CQs, MR slots and peer-address rows the core has (8-bit numbers).
pub const MAX_QPS: usize = 256;
pub const MAX_CQS: usize = 256;
pub const MR_SLOTS: usize = 256;
pub const ADDR_ROWS: usize = 256;
/// EVs per QP (`sq_ctx.ev_count`).
pub const MAX_EVS: usize = 128;
/// Largest RTO exponent (MRC 1.0: 1.024 us x 2^24 = 17.2 s), as the
/// model (`proto::model::MAX_ACK_TIMEOUT_EXP`); the card takes the
/// exponent itself (`contract::config::retx_qp::ACK_TIMEOUT_EXP`).
pub const MAX_ACK_TIMEOUT_EXP: u8 = proto::model::MAX_ACK_TIMEOUT_EXP;

/// Errors of the API.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Ring(#[from] RingError),
    #[error("no free {0} (the core has 256)")]
    Exhausted(&'static str),
    #[error("no counter named `{0}` in this driver's map")]
    UnknownCounter(String),
    #[error("counter `{name}` (slot {slot}) is not implemented by this bitstream ({num} counters)")]
    CounterAbsent { name: String, slot: usize, num: u32 },
    #[error("the EV-event controller is already open")]
    ControllerBusy,
    #[error("{0}")]
    Layout(#[from] LayoutError),
}

/// The QP life cycle (`proto::model::api::QpState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpState {
    Reset,
    Init,
    Rtr,
    Rts,
    Error,
}

/// A transition refused.
#[derive(Debug, thiserror::Error)]
pub enum ModifyError {
    #[error("cannot go from {from:?} with {to}")]
    BadTransition { from: QpState, to: &'static str },
    #[error("invalid attribute {name}: {why}")]
    BadAttribute { name: &'static str, why: String },
    #[error("no free peer-address row (256 distinct peers)")]
    NoAddressRow,
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// A work request refused (nothing was posted).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PostError {
    #[error("QP is {0:?}: posting sends needs RTS")]
    NotReady(QpState),
    #[error("QP is {0:?}: posting receives needs RTR or RTS")]
    RecvNotReady(QpState),
    #[error("message of {len} bytes exceeds the {max}-byte limit")]
    Oversize { len: u64, max: u64 },
    #[error("local range [{offset:#x}, +{len}) is outside the {size}-byte memory region")]
    OutOfRegion { offset: u64, len: u64, size: u64 },
    #[error("the memory region belongs to another protection domain")]
    PdMismatch,
    #[error("memory region is deregistered")]
    Deregistered,
    #[error("send queue full ({0} slots)")]
    QueueFull(u32),
    #[error("receive queue full ({0} receives)")]
    RecvQueueFull(u32),
    #[error("WRITE-IMM budget spent: {0} outstanding")]
    ImmBudget(u16),
    #[error("batch of {0} larger than the send queue")]
    BatchTooLarge(usize),
}

/// A CQE the driver refuses (it is consumed; the CQ goes on).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CqError {
    #[error("malformed CQE: {0}")]
    Malformed(LayoutError),
    #[error("CQE for QP {0}, which has no live QP on this CQ")]
    UnknownQp(u32),
    #[error("CQE for QP {qp} names SQ index {index}, outside the outstanding [{ci}, {pi})")]
    IndexOutOfRange { qp: u32, index: u32, ci: u32, pi: u32 },
    #[error("CQE for QP {qp} SQ index {index}: {field} {got:#x} disagrees with the posted {want:#x}")]
    Mismatch {
        qp: u32,
        index: u32,
        field: &'static str,
        got: u64,
        want: u64,
    },
    #[error("the card rejected QP {qp}'s doorbell (producer index {producer})")]
    DoorbellRejected { qp: u32, producer: u32 },
    #[error("receive CQE for QP {qp} is not a successful WRITE-IMM (status {status:?}, opcode {opcode})")]
    BadReceive { qp: u32, status: CqStatus, opcode: u8 },
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// A completion as the user sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkCompletion {
    pub wr_id: u64,
    pub status: CqStatus,
    pub opcode: WcOpcode,
    pub qp: u32,
    pub byte_len: u32,
    pub imm: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WcOpcode {
    Write,
    WriteImm,
    /// A WRITE-IMM received (its posted receive's `wr_id`).
    RecvWriteImm,
}

/// Options of [`Context::open`].
#[derive(Clone, Debug)]
pub struct OpenOptions {
    pub build: BuildExpectation,
    /// ACK generator: SACK every this many packets, or after this many
    /// clock cycles (table 4).
    pub ack_every: u16,
    pub ack_delay_cycles: u16,
    /// Push the descriptor of a single post through the push window
    /// before its doorbell (`regmap::push`, `docs/driver.md` "Descriptor
    /// push"), so the card need not read it from the ring; ignored when
    /// the bitstream has no push window.
    pub push_descriptors: bool,
    /// With a pushed descriptor, push the payload of a WRITE of at most
    /// `regmap::push::PAYLOAD_MAX` bytes too (`docs/driver.md` "Payload
    /// push"), so the card need not read it from host memory; ignored
    /// when descriptors are not pushed or the window takes no payloads.
    pub push_payloads: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            build: BuildExpectation::Any,
            ack_every: 4,
            ack_delay_cycles: 2000,
            push_descriptors: true,
            push_payloads: true,
        }
    }
}

/// A peer's Ethernet / IP address (a row of the address table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerAddress {
    pub mac: [u8; 6],
    pub ip: IpAddr,
}

/// The NIC's own address (the address table's local row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalAddress {
    pub mac: [u8; 6],
    pub ip: IpAddr,
    pub vlan_tci: Option<u16>,
    pub dscp: u8,
    pub ttl: u8,
    /// A card sends MRC 1.0 (the own row's `wire_mrc10`), else the legacy
    /// dialect (its reset value); it receives both. A soft NIC speaks the
    /// dialect of its configuration (`SoftNicConfig::dialect`) and takes
    /// no notice of this.
    pub wire_mrc10: bool,
}

fn mac_u64(mac: [u8; 6]) -> u64 {
    mac.iter().fold(0, |a, &b| a << 8 | u64::from(b))
}

fn ip_u128(ip: IpAddr) -> (u128, bool) {
    match ip {
        IpAddr::V4(v) => (u128::from(u32::from(v)), false),
        IpAddr::V6(v) => (u128::from(v), true),
    }
}

fn addr_row(mac: [u8; 6], ip: IpAddr) -> Row {
    let (ip, _) = ip_u128(ip);
    Row::new()
        .set(config::addr::MAC, mac_u64(mac))
        .set(config::addr::IP_LO, ip as u64)
        .set(config::addr::IP_HI, (ip >> 64) as u64)
}

#[derive(Default)]
struct Alloc {
    qps: Vec<bool>,
    cqs: Vec<bool>,
    /// Live rkey per MR slot (rkey mod 256).
    mrs: Vec<Option<u32>>,
    rkey_generation: u32,
    /// Peer rows: address and users.
    addrs: Vec<Option<(PeerAddress, u32)>>,
    next_pd: u32,
    controller: bool,
    /// Highest QP number moved to RTS (the RTO scanner's last QP).
    last_rts_qp: Option<u8>,
    /// Per QP number: EV slots `0..n` may hold a nonzero value (written
    /// by an RTS), to be cleared when a later set is smaller.
    ev_slots_used: Vec<u8>,
}

/// Bytes from which a single post is pushed even while the QP has
/// messages outstanding (`QueuePair::worth_pushing`): 1 KiB is about 26
/// core cycles on the 100 GbE wire, twice what the AXI-Lite port takes
/// for a push's up to 12 writes plus the doorbell at one write per cycle
/// (a message this large pushes no payload).
pub const PUSH_BUSY_MIN_LEN: u32 = 1024;

/// The control row that denies a QP's EV slots beyond its set (value 0).
fn deny_unused_slots() -> Row {
    Row::new()
        .set(config::ev_control::MASK, u64::from(u32::MAX))
        .set(config::ev_control::MATCH, UNUSED_EV_VALUE)
        .set(config::ev_control::ALLOW, 0)
}

/// The value of the EV slots beyond a QP's set (reserved: refused in an
/// `EvProfile`), denied by the driver.
pub const UNUSED_EV_VALUE: u64 = 0;

struct Shared {
    dev: Arc<dyn Device>,
    info: DeviceInfo,
    /// Opened without discovery: there is no row count to check.
    unverified: bool,
    cfg: Mutex<ConfigPort>,
    alloc: Mutex<Alloc>,
    /// The push window, when pushes are on and the card has one.
    push_window: Option<u64>,
    /// Small payloads are pushed too (on, and the window takes them).
    push_payload: bool,
    /// The window stages one push at a time: held from a push's first
    /// word to its commit.
    push_lock: Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded data is plain bookkeeping that a panicking holder
    // cannot leave half-updated in a way that matters more than losing
    // the device; keep going.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn row(&self, table: u8, index: u16, row: &Row) {
        lock(&self.cfg).write(&*self.dev, table, index, row);
    }
    fn sync(&self) -> Result<(), ConfigError> {
        if self.unverified {
            return Ok(());
        }
        lock(&self.cfg).sync(&*self.dev)
    }
    fn doorbell(&self, qpn: u32) -> u64 {
        self.info.doorbell_window + 4 * u64::from(qpn)
    }
    /// Push descriptor `sqe`, written to the ring slot at `slot_iova`,
    /// into the card's push cache: its nonzero words (the window zeroes
    /// the staged words after each push), then the slot's IOVA, whose high
    /// word commits. With `payload` (QP, IOVA and bytes of a message of at
    /// most `regmap::push::PAYLOAD_MAX` bytes) and payload pushes on, the
    /// payload goes first, into the payload cache, the same way: its
    /// nonzero words, its IOVA, then its key word (length and QP), which
    /// commits. Nothing when pushes are off.
    fn push(&self, slot_iova: u64, sqe: &[u8; SendRing::ENTRY], payload: Option<PushedPayload<'_>>) {
        let Some(window) = self.push_window else { return };
        let _one_pusher = lock(&self.push_lock);
        if let Some(p) = payload.filter(|_| self.push_payload) {
            self.push_payload_words(window, p);
        }
        for (k, w) in sqe.chunks_exact(4).enumerate() {
            let word = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            if word != 0 {
                self.dev.write32(window + 4 * k as u64, word);
            }
        }
        self.dev
            .write32(window + u64::from(regmap::push::SLOT_LO), slot_iova as u32);
        self.dev
            .write32(window + u64::from(regmap::push::SLOT_HI), (slot_iova >> 32) as u32);
    }

    /// The payload half of [`Self::push`] (the push lock held). A payload
    /// that cannot be read from its region is not pushed: the card reads
    /// it from host memory as it would without the push.
    fn push_payload_words(&self, window: u64, p: PushedPayload<'_>) {
        let len = p.len;
        if len == 0 || len > regmap::push::PAYLOAD_MAX as usize {
            return;
        }
        let mut staged = [0u8; regmap::push::PAYLOAD_MAX as usize];
        if p.buf.read(p.offset, &mut staged[..len]).is_err() {
            return;
        }
        let payload = window + u64::from(regmap::push::PAYLOAD);
        for (k, w) in staged.chunks_exact(4).enumerate() {
            let word = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            if word != 0 {
                self.dev.write32(payload + 4 * k as u64, word);
            }
        }
        self.dev
            .write32(window + u64::from(regmap::push::PAYLOAD_IOVA_LO), p.iova as u32);
        self.dev
            .write32(window + u64::from(regmap::push::PAYLOAD_IOVA_HI), (p.iova >> 32) as u32);
        let key = len as u32 | (p.qpn << regmap::push::PAYLOAD_KEY_QP_SHIFT);
        self.dev.write32(window + u64::from(regmap::push::PAYLOAD_KEY), key);
    }
}

/// A small WRITE's payload for [`Shared::push`]: the QP that sends it, the
/// IOVA of its first byte, and where its bytes lie in the region.
#[derive(Clone, Copy)]
struct PushedPayload<'a> {
    qpn: u32,
    iova: u64,
    buf: &'a DmaBuffer,
    offset: usize,
    len: usize,
}

/// An opened device: discovery done, global rows written.
#[derive(Clone)]
pub struct Context {
    shared: Arc<Shared>,
}

impl Context {
    /// Discover `dev` (refusing a bitstream this driver was not built
    /// for), then write the global rows: ACK parameters, the minimum of
    /// GOOD EVs.
    pub fn open(dev: Arc<dyn Device>, opts: &OpenOptions) -> Result<Context, Error> {
        let info = discover(&*dev, opts.build)?;
        Self::open_with(dev, info, false, opts)
    }

    /// Open without discovery, trusting `info`, and without checking
    /// that config rows arrive: for a device that has no register file
    /// (the null device of the benchmarks). Never for a real card.
    pub fn open_unverified(dev: Arc<dyn Device>, info: DeviceInfo, opts: &OpenOptions) -> Result<Context, Error> {
        Self::open_with(dev, info, true, opts)
    }

    fn open_with(
        dev: Arc<dyn Device>,
        info: DeviceInfo,
        unverified: bool,
        opts: &OpenOptions,
    ) -> Result<Context, Error> {
        let cfg = ConfigPort::new(&*dev, info.cfg_base)?;
        let push_window = info.push_window.filter(|_| opts.push_descriptors);
        let push_payload = push_window.is_some() && opts.push_payloads && info.push_payload;
        // MRC 1.0 reserves QPN 0x2 for the endpoint, and a NIC refuses a
        // data packet to it: no QP's wire number is it. A card's QP 2 is
        // never given out (it receives both dialects), nor a legacy soft
        // NIC's (offset 0, though its profile has no endpoint); an MRC 1.0
        // soft NIC's numbers start past it.
        let mut qps = vec![false; MAX_QPS];
        let endpoint = proto::wire::mrc10::choices::ENDPOINT_QPN;
        if let Some(slot) = endpoint
            .checked_sub(dev.wire_qpn_offset())
            .and_then(|n| qps.get_mut(n as usize))
        {
            *slot = true;
        }
        let shared = Arc::new(Shared {
            dev,
            info,
            unverified,
            push_window,
            push_payload,
            push_lock: Mutex::new(()),
            cfg: Mutex::new(cfg),
            alloc: Mutex::new(Alloc {
                qps,
                cqs: vec![false; MAX_CQS],
                mrs: vec![None; MR_SLOTS],
                addrs: vec![None; ADDR_ROWS],
                ev_slots_used: vec![0; MAX_QPS],
                ..Alloc::default()
            }),
        });
        let ctx = Context { shared };
        ctx.set_ack_params(opts.ack_every, opts.ack_delay_cycles);
        ctx.shared.sync()?;
        Ok(ctx)
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.shared.info
    }

    pub fn device(&self) -> &Arc<dyn Device> {
        &self.shared.dev
    }

    /// Check that every config row written so far reached the card.
    pub fn sync(&self) -> Result<(), ConfigError> {
        self.shared.sync()
    }

    /// The NIC's own MAC / IP / VLAN / DSCP / TTL.
    pub fn set_local_address(&self, a: &LocalAddress) {
        let (_, v6) = ip_u128(a.ip);
        let row = addr_row(a.mac, a.ip)
            .set(config::addr::IPV6, u64::from(v6))
            .set(config::addr::VLAN, u64::from(a.vlan_tci.is_some()))
            .set(config::addr::TCI, u64::from(a.vlan_tci.unwrap_or(0)))
            .set(config::addr::DSCP, u64::from(a.dscp))
            .set(config::addr::TTL, u64::from(a.ttl))
            .set(config::addr::WIRE_MRC10, u64::from(a.wire_mrc10));
        self.shared.row(cfg_table::ADDR, config::INDEX_SELECT, &row);
    }

    pub fn set_ack_params(&self, every: u16, delay_cycles: u16) {
        let row = Row::new()
            .set(config::ack_params::EVERY, u64::from(every))
            .set(config::ack_params::DELAY, u64::from(delay_cycles));
        self.shared.row(cfg_table::ACK_PARAMS, 0, &row);
    }

    /// Loop the card's MAC TX back into its own RX (the fault-injection
    /// stage's loopback, `regmap::fault_inject::CTRL_LOOPBACK`): QPs of one
    /// card then talk to each other with no cable and no peer. The other
    /// fault-injection controls are kept. Off after configuration.
    pub fn set_mac_loopback(&self, on: bool) {
        use regmap::fault_inject::{CTRL, CTRL_LOOPBACK};
        let at = self.shared.info.fault_inject_base + u64::from(CTRL);
        let ctrl = self.shared.dev.read32(at) & !CTRL_LOOPBACK;
        self.shared.dev.write32(at, ctrl | if on { CTRL_LOOPBACK } else { 0 });
    }

    /// Read a counter by its `regmap::COUNTERS` name.
    pub fn counter(&self, name: &str) -> Result<u32, Error> {
        counter(&self.shared, name)
    }

    pub fn alloc_pd(&self) -> ProtectionDomain {
        let mut a = lock(&self.shared.alloc);
        a.next_pd += 1;
        ProtectionDomain {
            shared: self.shared.clone(),
            id: a.next_pd,
        }
    }

    /// A completion queue of `2^log2_entries` CQEs (ring `n` of table 2).
    pub fn create_cq(&self, log2_entries: u8) -> Result<CompletionQueue, Error> {
        let ring = PhaseRing::new(&*self.shared.dev, log2_entries, cqe::SIZE)?;
        let cqn = take_slot(&mut lock(&self.shared.alloc).cqs).ok_or(Error::Exhausted("completion queue"))?;
        let row = Row::new()
            .set(config::ring::BASE, ring.iova())
            .set(config::ring::LOG2_SLOTS, u64::from(log2_entries));
        self.shared.row(cfg_table::CQ_RING, cqn as u16, &row);
        Ok(CompletionQueue {
            shared: self.shared.clone(),
            cqn: cqn as u16,
            ring,
            link: Arc::new(CqLink {
                pending: Mutex::new(VecDeque::new()),
                has_pending: AtomicBool::new(false),
            }),
            qps: (0..MAX_QPS).map(|_| Weak::new()).collect(),
            stale: 0,
            progress: self.shared.dev.needs_progress(),
        })
    }

    /// The control plane's view of the EVs: the EV-event ring (table 3,
    /// ring 0), deny / allow, re-admission. One per context.
    pub fn controller(&self, log2_entries: u8) -> Result<Controller, Error> {
        {
            let mut a = lock(&self.shared.alloc);
            if a.controller {
                return Err(Error::ControllerBusy);
            }
            a.controller = true;
        }
        let ring = match PhaseRing::new(&*self.shared.dev, log2_entries, layout::ev_event::SIZE) {
            Ok(r) => r,
            Err(e) => {
                lock(&self.shared.alloc).controller = false;
                return Err(e.into());
            }
        };
        let row = Row::new()
            .set(config::ring::BASE, ring.iova())
            .set(config::ring::LOG2_SLOTS, u64::from(log2_entries));
        self.shared.row(cfg_table::EV_RING, 0, &row);
        Ok(Controller {
            shared: self.shared.clone(),
            ring,
        })
    }
}

fn take_slot(v: &mut [bool]) -> Option<usize> {
    let i = v.iter().position(|used| !used)?;
    v[i] = true;
    Some(i)
}

/// A protection domain: groups memory regions and QPs (checked by the
/// driver on the local side; the card has no PDs).
pub struct ProtectionDomain {
    shared: Arc<Shared>,
    id: u32,
}

/// How a region may be accessed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Source of local WRITEs only: no rkey, no MR row.
    LocalOnly,
    /// Also a target of remote WRITEs: an rkey and an MR row.
    RemoteWrite,
}

impl ProtectionDomain {
    /// DMA memory from the device (zeroed).
    pub fn alloc_buffer(&self, len: usize) -> Result<DmaBuffer, Error> {
        Ok(self.shared.dev.alloc_dma(len)?)
    }

    /// Register `buf`. `RemoteWrite` allocates an rkey whose low byte is a
    /// free MR slot (the card's MR table is direct-mapped on it) and a
    /// generation in the upper bytes (a stale rkey misses).
    pub fn register(&self, buf: &DmaBuffer, access: Access) -> Result<MemoryRegion, Error> {
        let mut rkey = None;
        if access == Access::RemoteWrite {
            let key = {
                let mut a = lock(&self.shared.alloc);
                let slot = a
                    .mrs
                    .iter()
                    .position(Option::is_none)
                    .ok_or(Error::Exhausted("memory-region slot"))?;
                a.rkey_generation = a.rkey_generation.wrapping_add(1) & 0x00FF_FFFF;
                let key = a.rkey_generation << 8 | slot as u32;
                a.mrs[slot] = Some(key);
                key
            };
            let row = Row::new()
                .set(config::mr::RKEY, u64::from(key))
                .set(config::mr::BASE_VA, buf.iova())
                .set(config::mr::LENGTH, buf.len() as u64)
                .set(config::mr::VALID, 1);
            self.shared.row(cfg_table::MR, (key & 0xFF) as u16, &row);
            rkey = Some(key);
        }
        Ok(MemoryRegion {
            shared: self.shared.clone(),
            pd: self.id,
            buf: buf.clone(),
            rkey,
            live: true,
        })
    }

    /// Register `len` bytes of the program's own memory at `ptr` (what
    /// `ibv_reg_mr` does): the device maps it ([`Device::map_host_memory`]),
    /// then it is registered as [`ProtectionDomain::register`] registers a
    /// DMA buffer. Its `remote_va` is the address the card uses for it (on
    /// the soft NIC, `ptr` itself).
    ///
    /// # Safety
    /// The memory must stay valid until the region is deregistered and
    /// every clone of its buffer dropped; the card may write it meanwhile.
    pub unsafe fn register_host(&self, ptr: NonNull<u8>, len: usize, access: Access) -> Result<MemoryRegion, Error> {
        // SAFETY: the caller's promise.
        let buf = unsafe { self.shared.dev.map_host_memory(ptr, len)? };
        self.register(&buf, access)
    }

    /// A QP in RST whose send queue has `2^log2_sq` slots, completing on `cq`.
    pub fn create_qp(&self, cq: &mut CompletionQueue, log2_sq: u8) -> Result<QueuePair, Error> {
        let sq = SendRing::new(&*self.shared.dev, log2_sq)?;
        let qpn = take_slot(&mut lock(&self.shared.alloc).qps).ok_or(Error::Exhausted("queue pair"))?;
        let track = Arc::new(SqTrack {
            log2: log2_sq,
            pi: AtomicU32::new(0),
            ci: AtomicU32::new(0),
            slots: (0..1u32 << log2_sq)
                .map(|_| Slot {
                    wr_id: AtomicU64::new(0),
                    flags: AtomicU8::new(0),
                    len: AtomicU32::new(0),
                })
                .collect(),
            imm_outstanding: AtomicU32::new(0),
            error: AtomicBool::new(false),
            reset_pending: AtomicBool::new(false),
            recv: Mutex::new(RecvState::default()),
            cq: cq.link.clone(),
        });
        cq.qps[qpn] = Arc::downgrade(&track);
        Ok(QueuePair {
            shared: self.shared.clone(),
            pd: self.id,
            qpn: qpn as u32,
            cqn: cq.cqn,
            state: QpState::Reset,
            sq,
            track,
            pkey: 0xFFFF,
            rtr: None,
            rts: None,
            addr_row: None,
            since_signal: 0,
        })
    }
}

/// Registered memory. Deregistered (MR row invalidated) on drop.
pub struct MemoryRegion {
    shared: Arc<Shared>,
    pd: u32,
    buf: DmaBuffer,
    rkey: Option<u32>,
    live: bool,
}

impl MemoryRegion {
    /// The key a peer puts in its WRITEs (`None` for `LocalOnly`).
    pub fn rkey(&self) -> Option<u32> {
        self.rkey
    }
    /// The address a peer writes to (the card places at VA = IOVA).
    pub fn remote_va(&self) -> u64 {
        self.buf.iova()
    }
    pub fn buffer(&self) -> &DmaBuffer {
        &self.buf
    }
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    /// Invalidate the region now (the card rejects later WRITEs to it).
    pub fn deregister(&mut self) {
        if !self.live {
            return;
        }
        self.live = false;
        if let Some(key) = self.rkey {
            let slot = (key & 0xFF) as u16;
            self.shared
                .row(cfg_table::MR, slot, &Row::new().set(config::mr::RKEY, u64::from(key)));
            lock(&self.shared.alloc).mrs[usize::from(slot)] = None;
        }
    }
}

impl Drop for MemoryRegion {
    fn drop(&mut self) {
        self.deregister();
    }
}

/// Slot flags.
const F_IMM: u8 = 1;
const F_SIGNALED: u8 = 2;
/// Signaled by the driver (to reclaim slots), not by the user: hidden.
const F_FORCED: u8 = 4;

struct Slot {
    wr_id: AtomicU64,
    flags: AtomicU8,
    len: AtomicU32,
}

#[derive(Default)]
struct RecvState {
    posted: VecDeque<u64>,
    /// Receive completions that came before a receive was posted: (len, imm).
    held: VecDeque<(u32, u32)>,
    max: u32,
}

/// Software completions (flushes, held receives matched late) a QP hands
/// its CQ.
struct CqLink {
    pending: Mutex<VecDeque<WorkCompletion>>,
    has_pending: AtomicBool,
}

impl CqLink {
    fn push(&self, wc: WorkCompletion) {
        lock(&self.pending).push_back(wc);
        self.has_pending.store(true, Ordering::Release);
    }
}

/// What the QP and its CQ share: the send queue's shadow (wr_id and
/// flags per slot, producer and consumer indices) and the receive state.
struct SqTrack {
    log2: u8,
    pi: AtomicU32,
    ci: AtomicU32,
    slots: Box<[Slot]>,
    imm_outstanding: AtomicU32,
    error: AtomicBool,
    /// Reset since the last send CQE that matched a posted WR: the card
    /// may still have written CQEs of the QP's previous life (before it
    /// saw the disable row); one that matches nothing posted now is stale
    /// and counted, not an error.
    reset_pending: AtomicBool,
    recv: Mutex<RecvState>,
    cq: Arc<CqLink>,
}

impl SqTrack {
    fn slot(&self, index: u32) -> &Slot {
        &self.slots[(index & ((1 << self.log2) - 1)) as usize]
    }

    /// Put the QP in error and complete every outstanding send (consumer
    /// to producer index, posting order) with `Flushed`; afterwards
    /// nothing is outstanding. Both ways into ERR use it: the user's move
    /// to ERR and the card's error CQE (the card's CQEs for this QP are
    /// then stale and counted, not delivered).
    fn flush_sends(&self, qp: u32) {
        self.error.store(true, Ordering::Release);
        let pi = self.pi.load(Ordering::Acquire);
        let mut ci = self.ci.load(Ordering::Acquire);
        while ci != pi {
            let s = self.slot(ci);
            let flags = s.flags.load(Ordering::Relaxed);
            self.cq.push(WorkCompletion {
                wr_id: s.wr_id.load(Ordering::Relaxed),
                status: CqStatus::Flushed,
                opcode: if flags & F_IMM != 0 {
                    WcOpcode::WriteImm
                } else {
                    WcOpcode::Write
                },
                qp,
                byte_len: s.len.load(Ordering::Relaxed),
                imm: None,
            });
            ci = ci.wrapping_add(1);
        }
        self.ci.store(pi, Ordering::Release);
        self.imm_outstanding.store(0, Ordering::Release);
    }
}

/// Receive-side attributes (INIT -> RTR).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RtrAttr {
    /// The peer's QP number on the wire (its `QueuePair::wire_qpn`).
    pub dest_qp: u32,
    /// First PSN expected from the peer.
    pub rq_psn: u32,
    /// The peer's address (a row of the address table, shared by QPs
    /// with the same peer).
    pub peer: PeerAddress,
    /// Path MTU, log2 bytes (8..=13).
    pub log2_mtu: u8,
    /// Receives that may be posted (the model's receive queue bound,
    /// `max(max_wimm, 1)`).
    pub max_wimm: u16,
}

/// Timeout and retry attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// RTO = 1.024 us x 2^exp, exp <= 24 (17.2 s).
    pub ack_timeout_exp: u8,
    /// Retries at the fixed RTO, <= 7.
    pub retry_linear: u8,
    /// Further retries with exponential backoff, <= 25 (25 = infinite).
    pub retry_exp: u8,
    /// Packets of reordering tolerated before loss is inferred.
    pub reorder_allowance: u16,
    /// The stall rule's allowance and the tail check's age, ns: floors
    /// under the card's RTT estimate (0: the estimate's alone, both off
    /// until the QP's first RTT sample, as the model).
    pub stall_allowance_ns: u32,
    pub stall_age_ns: u32,
}

impl Default for Timeouts {
    fn default() -> Self {
        // 1.024 us x 2^8 = 262 us, as the model's default order of magnitude.
        Timeouts {
            ack_timeout_exp: 8,
            retry_linear: 7,
            retry_exp: 7,
            reorder_allowance: 3,
            stall_allowance_ns: 0,
            stall_age_ns: 0,
        }
    }
}

/// The EV set of a QP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvProfile {
    /// EV values, 1..=128, distinct: MRC 1.0's 32-bit EVs (bits 15-0
    /// in the UDP source port, bits 31-16 in the IPv6 flow label). An
    /// IPv4 peer's EVs are 16 bits (the source port alone): a wider value
    /// is refused at RTS.
    pub values: Vec<u32>,
    /// GOOD EVs the NIC keeps (MRC 1.0's `ev_min_active`): a loss mark
    /// that would leave fewer is refused. `0..=values.len()`.
    pub min_active: u8,
}

/// The congestion-control window of a QP (CC gate, table 10), and the
/// NSCC parameters (the soft NIC: [`Device::set_qp_nscc`]; the card:
/// its NSCC unit's table 14 row). Without NSCC the window is `max_cwnd`,
/// moved only by losses and timeouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcProfile {
    pub min_cwnd: u32,
    pub max_cwnd: u32,
    pub nscc: Option<NsccParams>,
}

impl Default for CcProfile {
    fn default() -> Self {
        CcProfile {
            min_cwnd: 4096,
            max_cwnd: 1 << 20,
            nscc: None,
        }
    }
}

/// UET 1.0 NSCC's parameters as libmrc's `struct mrc_ctl_cc_nscc_cfg`
/// names them (times in ns, sizes in bytes); the window ceiling is the
/// profile's `max_cwnd`. Which of them the soft NIC's controller uses:
/// `soft::engine::nscc_config`.
#[derive(Clone, Copy, Debug, Default)]
pub struct NsccParams {
    pub base_rtt_ns: u32,
    pub target_delay_ns: u32,
    pub disable_qa: bool,
    pub qa_gate: u8,
    pub qa_threshold_ns: u32,
    pub gamma: f32,
    pub max_md_jump: f32,
    pub eta: f32,
    pub fi: f32,
    pub fi_scale: f32,
    pub adjust_bytes_threshold: u32,
    pub adjust_period_threshold_ns: u32,
}

impl NsccParams {
    /// The fields as bits, floats included: equality is bit equality (a
    /// NaN equals itself, so a profile compares equal to its copy).
    fn bits(&self) -> [u32; 12] {
        [
            self.base_rtt_ns,
            self.target_delay_ns,
            u32::from(self.disable_qa),
            u32::from(self.qa_gate),
            self.qa_threshold_ns,
            self.gamma.to_bits(),
            self.max_md_jump.to_bits(),
            self.eta.to_bits(),
            self.fi.to_bits(),
            self.fi_scale.to_bits(),
            self.adjust_bytes_threshold,
            self.adjust_period_threshold_ns,
        ]
    }
}

impl PartialEq for NsccParams {
    fn eq(&self, other: &Self) -> bool {
        self.bits() == other.bits()
    }
}

impl Eq for NsccParams {}

/// Send-side attributes (RTR -> RTS).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RtsAttr {
    /// First PSN sent.
    pub sq_psn: u32,
    /// The peer's receive window, units of 128 PSNs (1..=255).
    pub send_mpr_units: u8,
    /// WRITE-IMM messages this QP may have outstanding (>= 1).
    pub max_wimm: u16,
    pub timeouts: Timeouts,
    pub evs: EvProfile,
    pub cc: CcProfile,
}

/// A state change with its attributes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QpTransition {
    /// RST -> INIT: the P_Key.
    Init {
        pkey: u16,
    },
    Rtr(RtrAttr),
    Rts(RtsAttr),
    /// Any -> ERR: the send context is disabled, outstanding sends and
    /// posted receives complete `Flushed`.
    Error,
    /// Any -> RST.
    Reset,
}

/// One WRITE: `len` bytes from `local` at `local_offset` to the peer's
/// `remote_va` under `rkey`.
#[derive(Clone, Copy)]
pub struct WriteWr<'a> {
    pub wr_id: u64,
    pub local: &'a MemoryRegion,
    pub local_offset: u64,
    pub len: u32,
    pub remote_va: u64,
    pub rkey: u32,
    pub signaled: bool,
    /// WRITE-IMM with this immediate.
    pub imm: Option<u32>,
}

/// A queue pair.
pub struct QueuePair {
    shared: Arc<Shared>,
    pd: u32,
    qpn: u32,
    cqn: u16,
    state: QpState,
    sq: SendRing,
    track: Arc<SqTrack>,
    pkey: u16,
    rtr: Option<RtrAttr>,
    rts: Option<RtsAttr>,
    addr_row: Option<u16>,
    /// WRs posted since the last signaled one.
    since_signal: u32,
}

fn bad(name: &'static str, why: impl Into<String>) -> ModifyError {
    ModifyError::BadAttribute { name, why: why.into() }
}

impl QueuePair {
    /// The QP's number in this driver (its rows, its completions).
    pub fn qpn(&self) -> u32 {
        self.qpn
    }
    /// The QP's number on the wire, which the peer's QP names as its
    /// destination (`RtrAttr::dest_qp`): `qpn` plus the device's
    /// `Device::wire_qpn_offset`.
    pub fn wire_qpn(&self) -> u32 {
        self.qpn + self.shared.dev.wire_qpn_offset()
    }
    pub fn state(&self) -> QpState {
        // An error completion put the QP in error behind our back.
        if self.track.error.load(Ordering::Acquire) {
            QpState::Error
        } else {
            self.state
        }
    }
    /// Send-queue slots.
    pub fn sq_slots(&self) -> u32 {
        self.sq.slots()
    }
    /// Work requests posted and not yet known complete.
    pub fn outstanding(&self) -> u32 {
        self.sq.producer().wrapping_sub(self.track.ci.load(Ordering::Acquire))
    }

    /// Move the QP. Refused transitions and attributes change nothing.
    pub fn modify(&mut self, t: QpTransition) -> Result<(), ModifyError> {
        let from = self.state();
        match t {
            QpTransition::Init { pkey } => {
                if from != QpState::Reset {
                    return Err(ModifyError::BadTransition { from, to: "INIT" });
                }
                self.pkey = pkey;
                self.state = QpState::Init;
            }
            QpTransition::Rtr(a) => {
                if from != QpState::Init {
                    return Err(ModifyError::BadTransition { from, to: "RTR" });
                }
                if a.dest_qp >= 1 << 24 {
                    return Err(bad("dest_qp", "24 bits"));
                }
                if a.rq_psn >= 1 << 24 {
                    return Err(bad("rq_psn", "24 bits"));
                }
                if !(8..=13).contains(&a.log2_mtu) {
                    return Err(bad("log2_mtu", "8..=13 (256 B to 8 KiB)"));
                }
                let row = self.take_addr_row(a.peer)?;
                // One row for both tables: the start PSN, and the path MTU
                // the card's RX path checks received payloads against.
                let init = Row::new()
                    .set(config::recv_init::START_PSN, u64::from(a.rq_psn))
                    .set(config::recv_init::LOG2_MTU, u64::from(a.log2_mtu));
                self.shared.row(cfg_table::ACK_QP_INIT, self.qpn as u16, &init);
                self.shared.row(cfg_table::RECV_QP, self.qpn as u16, &init);
                lock(&self.track.recv).max = u32::from(a.max_wimm.max(1));
                self.addr_row = Some(row);
                self.rtr = Some(a);
                self.state = QpState::Rtr;
            }
            QpTransition::Rts(a) => {
                if from != QpState::Rtr {
                    return Err(ModifyError::BadTransition { from, to: "RTS" });
                }
                let rtr = self.rtr.clone().ok_or(ModifyError::BadTransition { from, to: "RTS" })?;
                check_rts(&a, &rtr)?;
                let q = self.qpn as u16;
                // NSCC on the soft NIC (its golden model's controller);
                // the card takes it from table 14 below. Said at every
                // RTS, `None` too: a QP number used again does not
                // inherit its last user's controller.
                match self.shared.dev.set_qp_nscc(self.qpn, a.cc.nscc) {
                    Ok(()) | Err(DeviceError::Unsupported(_)) => {}
                    Err(e) => return Err(bad("cc.nscc", e.to_string())),
                }
                // The card's NSCC unit (table 14): the same controller as
                // the soft NIC's (`nscc_config`), in its integer form; with
                // it, the window's floor is NSCC's (table 10 `min_cwnd`, to
                // which a timeout cuts). The row is written with enable 0
                // when the QP has no NSCC, so a QP number used again does
                // not inherit it.
                let nscc = a.cc.nscc.map(|p| {
                    let c = crate::soft::engine::nscc_config(&p, u64::from(a.cc.max_cwnd), 1 << rtr.log2_mtu);
                    proto::model::nscc_fixed::NsccFixedParams::from_config(&c)
                });
                let nscc_row = match nscc {
                    Some(n) => Row::new()
                        .set(config::nscc::BASE_RTT_NS, u64::from(n.base_rtt_ns))
                        .set(config::nscc::TARGET_NS, u64::from(n.target_ns))
                        .set(config::nscc::INCREASE_BYTES, u64::from(n.increase_bytes))
                        .set(config::nscc::INIT_CWND, u64::from(n.init_cwnd))
                        .set(config::nscc::DECREASE_GAIN, u64::from(n.decrease_gain_q16))
                        .set(config::nscc::ENABLE, 1),
                    None => Row::new(),
                };
                self.shared.row(cfg_table::NSCC, q, &nscc_row);
                let min_cwnd = nscc.map_or(a.cc.min_cwnd, |n| n.min_cwnd);
                let cc = Row::new()
                    .set(config::cc::MIN_CWND, u64::from(min_cwnd))
                    .set(config::cc::MAX_CWND, u64::from(a.cc.max_cwnd))
                    .set(config::cc::SEND_WINDOW, u64::from(a.send_mpr_units) * 128);
                self.shared.row(cfg_table::CC, q, &cc);
                let t = a.timeouts;
                let retx = Row::new()
                    .set(config::retx_qp::ACK_TIMEOUT_EXP, u64::from(t.ack_timeout_exp))
                    .set(config::retx_qp::STALL_ALLOWANCE_NS, u64::from(t.stall_allowance_ns))
                    .set(config::retx_qp::REORDER, u64::from(t.reorder_allowance))
                    .set(config::retx_qp::RETRY_LINEAR, u64::from(t.retry_linear))
                    .set(config::retx_qp::RETRY_EXP, u64::from(t.retry_exp))
                    .set(config::retx_qp::STALL_AGE_NS, u64::from(t.stall_age_ns));
                self.shared.row(cfg_table::RETX_QP, q, &retx);
                {
                    let mut al = lock(&self.shared.alloc);
                    if al.last_rts_qp.is_none_or(|l| u32::from(l) < self.qpn) {
                        al.last_rts_qp = Some(self.qpn as u8);
                        drop(al);
                        self.shared.row(
                            cfg_table::RETX_GLOBAL,
                            0,
                            &Row::new().set(config::retx_global::LAST_QP, u64::from(self.qpn)),
                        );
                    }
                }
                // The card's EV selector uses only the set's slots
                // (`ev_count`); the slots beyond it are also DENIED, which
                // keeps them out of any deny / allow by value. They hold
                // value 0 (reserved, refused in `check_rts`) and are
                // denied by value after the allow-all. Slots a previous user of this QP number
                // filled are cleared back to 0 first.
                let n = a.evs.values.len();
                let stale = {
                    let mut al = lock(&self.shared.alloc);
                    std::mem::replace(&mut al.ev_slots_used[self.qpn as usize], n as u8)
                };
                for (i, &v) in a.evs.values.iter().enumerate() {
                    self.shared.row(
                        cfg_table::EV,
                        q << 7 | i as u16,
                        &Row::new().set(config::ev_value::VALUE, u64::from(v)),
                    );
                }
                for i in n..usize::from(stale) {
                    self.shared.row(
                        cfg_table::EV,
                        q << 7 | i as u16,
                        &Row::new().set(config::ev_value::VALUE, 0),
                    );
                }
                // Allow every EV of the set if a previous user of this QP
                // number may have denied some (the allow-all only for a
                // reused QP number), then deny the unused slots. Rows
                // written while the card's EV selector runs a pass wait in
                // its config port (docs/hw/core.md), so they need no
                // spacing.
                if stale > 0 {
                    let allow = Row::new()
                        .set(config::ev_control::MASK, 0)
                        .set(config::ev_control::MATCH, 0)
                        .set(config::ev_control::ALLOW, 1);
                    self.shared.row(cfg_table::EV, config::INDEX_SELECT | q, &allow);
                }
                self.shared
                    .row(cfg_table::EV, config::INDEX_SELECT | q, &deny_unused_slots());
                self.sq.reset();
                self.track.pi.store(0, Ordering::Release);
                self.track.ci.store(0, Ordering::Release);
                let ctx = self.context(&a, &rtr, true);
                let bytes = ctx.encode().map_err(|e| bad("send context", e.to_string()))?;
                self.shared.row(cfg_table::SQ_CTX, q, &Row::from_bytes(&bytes));
                self.shared.sync()?;
                self.rts = Some(a);
                self.state = QpState::Rts;
            }
            QpTransition::Error => {
                self.disable();
                self.flush();
                self.state = QpState::Error;
            }
            QpTransition::Reset => {
                self.disable();
                self.flush_silently();
                self.release_addr_row();
                self.rtr = None;
                self.rts = None;
                self.state = QpState::Reset;
                self.track.reset_pending.store(true, Ordering::Release);
                self.track.error.store(false, Ordering::Release);
            }
        }
        Ok(())
    }

    fn context(&self, a: &RtsAttr, rtr: &RtrAttr, enable: bool) -> SqContext {
        SqContext {
            sq_base: self.sq.iova(),
            cq_index: self.cqn,
            addr_index: self.addr_row.unwrap_or(0),
            dest_qp: rtr.dest_qp,
            start_psn: a.sq_psn,
            pkey: self.pkey,
            sq_log2_size: self.sq.log2(),
            log2_mtu: rtr.log2_mtu,
            ev_count: a.evs.values.len() as u8,
            enable,
            send_mpr_units: a.send_mpr_units,
            ev_min_active: a.evs.min_active,
        }
    }

    /// Stop the card sending on this QP: rewrite the send context with
    /// `enable` clear (the card then rejects its doorbells). The core
    /// documents that a send-context write resets the QP's send state
    /// and should happen while the QP is idle: packets in flight are
    /// abandoned, as the model's move to ERR abandons them.
    fn disable(&mut self) {
        if let (Some(a), Some(rtr)) = (&self.rts, &self.rtr) {
            if let Ok(bytes) = self.context(a, rtr, false).encode() {
                self.shared
                    .row(cfg_table::SQ_CTX, self.qpn as u16, &Row::from_bytes(&bytes));
            }
        }
    }

    /// Complete every outstanding send, then every posted receive, with
    /// `Flushed` (posting order), as the model's move to ERR.
    fn flush(&mut self) {
        let t = &self.track;
        // `track.pi` follows `sq.producer()` after every post.
        t.flush_sends(self.qpn);
        let mut r = lock(&t.recv);
        while let Some(wr_id) = r.posted.pop_front() {
            t.cq.push(WorkCompletion {
                wr_id,
                status: CqStatus::Flushed,
                opcode: WcOpcode::RecvWriteImm,
                qp: self.qpn,
                byte_len: 0,
                imm: None,
            });
        }
        r.held.clear();
    }

    fn flush_silently(&mut self) {
        let t = &self.track;
        t.ci.store(self.sq.producer(), Ordering::Release);
        t.imm_outstanding.store(0, Ordering::Release);
        let mut r = lock(&t.recv);
        r.posted.clear();
        r.held.clear();
    }

    fn take_addr_row(&mut self, peer: PeerAddress) -> Result<u16, ModifyError> {
        let mut a = lock(&self.shared.alloc);
        if let Some(i) = a.addrs.iter().position(|e| e.is_some_and(|(p, _)| p == peer)) {
            if let Some((_, users)) = &mut a.addrs[i] {
                *users += 1;
            }
            return Ok(i as u16);
        }
        let i = a
            .addrs
            .iter()
            .position(Option::is_none)
            .ok_or(ModifyError::NoAddressRow)?;
        a.addrs[i] = Some((peer, 1));
        drop(a);
        self.shared.row(cfg_table::ADDR, i as u16, &addr_row(peer.mac, peer.ip));
        Ok(i as u16)
    }

    fn release_addr_row(&mut self) {
        if let Some(i) = self.addr_row.take() {
            let mut a = lock(&self.shared.alloc);
            let slot = &mut a.addrs[usize::from(i)];
            if let Some((_, users)) = slot {
                *users -= 1;
                if *users == 0 {
                    *slot = None;
                }
            }
        }
    }

    /// Check one WR and write its descriptor (no doorbell); the
    /// descriptor's bytes.
    #[inline]
    fn queue(&mut self, wr: &WriteWr) -> Result<[u8; SendRing::ENTRY], PostError> {
        let state = self.state();
        if state != QpState::Rts {
            return Err(PostError::NotReady(state));
        }
        if u64::from(wr.len) > layout::MAX_MESSAGE_LEN {
            return Err(PostError::Oversize {
                len: u64::from(wr.len),
                max: layout::MAX_MESSAGE_LEN,
            });
        }
        if wr.local.pd != self.pd {
            return Err(PostError::PdMismatch);
        }
        if !wr.local.live {
            return Err(PostError::Deregistered);
        }
        let size = wr.local.buf.len() as u64;
        if wr
            .local_offset
            .checked_add(u64::from(wr.len))
            .is_none_or(|end| end > size)
        {
            return Err(PostError::OutOfRegion {
                offset: wr.local_offset,
                len: u64::from(wr.len),
                size,
            });
        }
        let t = &*self.track;
        let pi = self.sq.producer();
        if pi.wrapping_sub(t.ci.load(Ordering::Acquire)) >= self.sq.slots() {
            return Err(PostError::QueueFull(self.sq.slots()));
        }
        if wr.imm.is_some() {
            let max = self.rts.as_ref().map_or(1, |a| a.max_wimm);
            if t.imm_outstanding.load(Ordering::Acquire) >= u32::from(max) {
                return Err(PostError::ImmBudget(max));
            }
            t.imm_outstanding.fetch_add(1, Ordering::AcqRel);
        }
        // Reclaiming needs a CQE now and then: signal one WR per half
        // ring if the user signals none.
        self.since_signal += 1;
        let forced = !wr.signaled && self.since_signal >= self.sq.slots() / 2;
        let signaled = wr.signaled || forced;
        if signaled {
            self.since_signal = 0;
        }
        let desc = SqDescriptor {
            opcode: if wr.imm.is_some() {
                SqOpcode::WriteImm
            } else {
                SqOpcode::Write
            },
            signaled,
            length: wr.len,
            wr_id: wr.wr_id,
            local_iova: wr.local.buf.iova() + wr.local_offset,
            remote_va: wr.remote_va,
            rkey: wr.rkey,
            imm: wr.imm.unwrap_or(0),
        };
        // The length was checked above, so encode cannot fail.
        let bytes = desc.encode().map_err(|_| PostError::Oversize {
            len: u64::from(wr.len),
            max: layout::MAX_MESSAGE_LEN,
        })?;
        let s = t.slot(pi);
        s.wr_id.store(wr.wr_id, Ordering::Relaxed);
        s.len.store(wr.len, Ordering::Relaxed);
        let flags = if wr.imm.is_some() { F_IMM } else { 0 }
            | if signaled { F_SIGNALED } else { 0 }
            | if forced { F_FORCED } else { 0 };
        s.flags.store(flags, Ordering::Relaxed);
        self.sq.push(&bytes);
        t.pi.store(self.sq.producer(), Ordering::Release);
        Ok(bytes)
    }

    /// Ring the doorbell; when it carries one new descriptor (`last`,
    /// the one just queued) and `push` names its WR, push that descriptor
    /// first, and its payload when it is at most
    /// `regmap::push::PAYLOAD_MAX` bytes (the policy,
    /// [`Self::worth_pushing`]: a single post is pushed, a batch is read
    /// by the card).
    fn ring(&mut self, last: &[u8; SendRing::ENTRY], push: Option<&WriteWr>) {
        if let Some(wr) = push.filter(|_| self.sq.unrung_count() == 1) {
            let slot = self.sq.producer().wrapping_sub(1);
            let payload = (wr.len <= regmap::push::PAYLOAD_MAX).then(|| PushedPayload {
                qpn: self.qpn,
                iova: wr.local.buf.iova() + wr.local_offset,
                buf: &wr.local.buf,
                offset: wr.local_offset as usize,
                len: wr.len as usize,
            });
            self.shared.push(self.sq.slot_iova(slot), last, payload);
        }
        let db = self.shared.doorbell(self.qpn);
        self.sq.ring(&*self.shared.dev, db);
    }

    /// Whether a single post of `wr` is pushed: when the QP has nothing
    /// outstanding (the card's requester is idle for it: the pushed
    /// descriptor saves the whole read round trip of a lone post), or
    /// when the message is at least [`PUSH_BUSY_MIN_LEN`] bytes (its wire
    /// time covers the push's MMIO writes). Small messages posted while
    /// others are in flight are not pushed: at one 32-bit AXI-Lite write
    /// per cycle, a push's up to 12 writes (31 with a 64-byte payload)
    /// take longer than a 64-byte message's turn, and the card's MMIO
    /// port, not its wire, would bound the message rate
    /// (docs/benchmarks.md "Descriptor push").
    fn worth_pushing(&self, wr: &WriteWr) -> bool {
        self.outstanding() == 0 || wr.len >= PUSH_BUSY_MIN_LEN
    }

    /// Post one WRITE (or WRITE-IMM if `wr.imm` is set) and ring the doorbell.
    #[inline]
    pub fn post_write(&mut self, wr: &WriteWr) -> Result<(), PostError> {
        let push = self.worth_pushing(wr).then_some(wr);
        let sqe = self.queue(wr)?;
        self.ring(&sqe, push);
        Ok(())
    }

    /// Post a WRITE-IMM.
    pub fn post_write_imm(&mut self, wr: &WriteWr, imm: u32) -> Result<(), PostError> {
        self.post_write(&WriteWr { imm: Some(imm), ..*wr })
    }

    /// Post several WRs with one doorbell. Each WR is checked as it is
    /// queued; the batch stops at the first refusal: the WRs before it are
    /// posted and rung, and their count is returned with the error.
    pub fn post_writes(&mut self, wrs: &[WriteWr]) -> Result<usize, (usize, PostError)> {
        if wrs.len() > self.sq.slots() as usize {
            return Err((0, PostError::BatchTooLarge(wrs.len())));
        }
        let push = (wrs.len() == 1 && self.worth_pushing(&wrs[0])).then(|| &wrs[0]);
        let mut n = 0;
        let mut err = None;
        let mut last = [0; SendRing::ENTRY];
        for wr in wrs {
            match self.queue(wr) {
                Ok(sqe) => last = sqe,
                Err(e) => {
                    err = Some(e);
                    break;
                }
            }
            n += 1;
        }
        if n > 0 {
            self.ring(&last, push);
        }
        match err {
            Some(e) => Err((n, e)),
            None => Ok(n),
        }
    }

    /// Post a receive for a future WRITE-IMM (software queue: the card
    /// has no receive queue). A receive completion already held is
    /// matched at once and appears on the CQ.
    pub fn post_recv(&mut self, wr_id: u64) -> Result<(), PostError> {
        let state = self.state();
        if state != QpState::Rtr && state != QpState::Rts {
            return Err(PostError::RecvNotReady(state));
        }
        let mut r = lock(&self.track.recv);
        if let Some((len, imm)) = r.held.pop_front() {
            self.track.cq.push(WorkCompletion {
                wr_id,
                status: CqStatus::Success,
                opcode: WcOpcode::RecvWriteImm,
                qp: self.qpn,
                byte_len: len,
                imm: Some(imm),
            });
            return Ok(());
        }
        if r.posted.len() as u32 >= r.max {
            return Err(PostError::RecvQueueFull(r.max));
        }
        r.posted.push_back(wr_id);
        Ok(())
    }

    /// Receive completions that arrived with no receive posted.
    pub fn held_receives(&self) -> usize {
        lock(&self.track.recv).held.len()
    }
}

fn check_rts(a: &RtsAttr, rtr: &RtrAttr) -> Result<(), ModifyError> {
    if a.sq_psn >= 1 << 24 {
        return Err(bad("sq_psn", "24 bits"));
    }
    if a.send_mpr_units == 0 {
        return Err(bad("send_mpr_units", "1..=255"));
    }
    if a.max_wimm == 0 {
        return Err(bad("max_wimm", ">= 1"));
    }
    let t = a.timeouts;
    if t.ack_timeout_exp > MAX_ACK_TIMEOUT_EXP {
        return Err(bad("ack_timeout_exp", format!("<= {MAX_ACK_TIMEOUT_EXP}")));
    }
    if t.retry_linear > 7 {
        return Err(bad("retry_linear", "<= 7"));
    }
    if t.retry_exp > 25 {
        return Err(bad("retry_exp", "<= 25"));
    }
    let n = a.evs.values.len();
    if n == 0 || n > MAX_EVS {
        return Err(bad("evs", format!("1..={MAX_EVS} EVs, got {n}")));
    }
    if a.evs.values.iter().any(|&v| u64::from(v) == UNUSED_EV_VALUE) {
        return Err(bad(
            "evs",
            "EV value 0 is reserved (the card's unused EV slots hold it and are denied)",
        ));
    }
    // An IPv4 packet carries the EV in its UDP source port alone (MRC
    // 1.0's 16-bit UDP mode): a wider value would leave as its low 16
    // bits, and the peer's SACK would name an EV the set does not hold.
    if rtr.peer.ip.is_ipv4() {
        if let Some(v) = a.evs.values.iter().find(|&&v| v > u32::from(u16::MAX)) {
            return Err(bad(
                "evs",
                format!("EV value {v:#x} above 16 bits: an IPv4 peer's EVs are the UDP source port alone"),
            ));
        }
    }
    let mut v = a.evs.values.clone();
    v.sort_unstable();
    if v.windows(2).any(|w| w[0] == w[1]) {
        return Err(bad("evs", "EV values must be distinct"));
    }
    if usize::from(a.evs.min_active) > n {
        return Err(bad(
            "evs",
            format!("min_active {} above the set's {n} EVs", a.evs.min_active),
        ));
    }
    if a.cc.min_cwnd == 0 || a.cc.max_cwnd < a.cc.min_cwnd {
        return Err(bad("cc", "1 <= min_cwnd <= max_cwnd"));
    }
    if let Some(n) = a.cc.nscc {
        if !(0.0..=1.0).contains(&n.gamma) {
            return Err(bad(
                "cc.nscc.gamma",
                "0..=1 (the share of the window one decrease may cut)",
            ));
        }
        if u32::from(n.qa_gate) >= u64::BITS {
            return Err(bad("cc.nscc.qa_gate", "a shift of a 64-bit window: 0..=63"));
        }
    }
    Ok(())
}

impl Drop for QueuePair {
    fn drop(&mut self) {
        if self.state() == QpState::Rts {
            self.disable();
        }
        self.release_addr_row();
        lock(&self.shared.alloc).qps[self.qpn as usize] = false;
    }
}

/// A completion queue (ring `cqn` of table 2).
pub struct CompletionQueue {
    shared: Arc<Shared>,
    cqn: u16,
    ring: PhaseRing,
    link: Arc<CqLink>,
    /// The QPs completing here, by number.
    qps: Vec<Weak<SqTrack>>,
    stale: u64,
    /// The device wants `progress` calls (co-simulation).
    progress: bool,
}

impl CompletionQueue {
    pub fn cqn(&self) -> u16 {
        self.cqn
    }

    /// The ring's memory (what the card writes CQEs into).
    pub fn buffer(&self) -> &DmaBuffer {
        self.ring.buffer()
    }

    /// Ring slots.
    pub fn slots(&self) -> u32 {
        self.ring.slots()
    }

    /// CQEs consumed for QPs that had moved to ERR or RST (the card may
    /// still complete work the driver already flushed).
    pub fn stale_entries(&self) -> u64 {
        self.stale
    }

    /// The next completion, `Ok(None)` if there is none. A CQE the driver
    /// refuses is consumed and returned as a typed error; polling goes on
    /// with the next entry.
    #[inline]
    pub fn poll_cq(&mut self) -> Result<Option<WorkCompletion>, CqError> {
        self.poll_one(self.progress)
    }

    /// Like [`CompletionQueue::poll_batch`], but an empty ring does not
    /// give a simulated device time to run ([`Device::progress`]): for a
    /// poller that woke on an interrupt and must not pose as the program
    /// driving the device.
    pub fn poll_ready(&mut self, out: &mut Vec<WorkCompletion>, max: usize) -> Result<usize, CqError> {
        self.batch(out, max, false)
    }

    #[inline]
    fn poll_one(&mut self, drive: bool) -> Result<Option<WorkCompletion>, CqError> {
        if self.link.has_pending.load(Ordering::Acquire) {
            let mut p = lock(&self.link.pending);
            let wc = p.pop_front();
            if p.is_empty() {
                self.link.has_pending.store(false, Ordering::Release);
            }
            if wc.is_some() {
                return Ok(wc);
            }
        }
        loop {
            let mut e = [0u8; cqe::SIZE];
            if !self.ring.peek(&mut e) {
                if drive {
                    self.shared.dev.progress();
                }
                return Ok(None);
            }
            self.ring.advance();
            let r = self.check(&e);
            if self.ring.report_due() {
                let ci = self.ring.mark_reported();
                let row = Row::new().set(config::ring_consumer::CONSUMER, u64::from(ci));
                self.shared
                    .row(cfg_table::CQ_RING, config::INDEX_SELECT | self.cqn, &row);
            }
            match r {
                Ok(Some(wc)) => return Ok(Some(wc)),
                // A hidden (driver-signaled) or held completion: next entry.
                Ok(None) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Up to `max` completions into `out`; stops at the first refused CQE
    /// (the completions before it are in `out`).
    pub fn poll_batch(&mut self, out: &mut Vec<WorkCompletion>, max: usize) -> Result<usize, CqError> {
        self.batch(out, max, self.progress)
    }

    fn batch(&mut self, out: &mut Vec<WorkCompletion>, max: usize, drive: bool) -> Result<usize, CqError> {
        let mut n = 0;
        while n < max {
            match self.poll_one(drive)? {
                Some(wc) => {
                    out.push(wc);
                    n += 1;
                }
                None => break,
            }
        }
        Ok(n)
    }

    fn check(&mut self, e: &[u8]) -> Result<Option<WorkCompletion>, CqError> {
        let c = layout::Completion::decode(e).map_err(CqError::Malformed)?;
        let t = self
            .qps
            .get(c.qp as usize)
            .and_then(Weak::upgrade)
            .ok_or(CqError::UnknownQp(c.qp))?;
        if t.error.load(Ordering::Acquire) {
            self.stale += 1;
            return Ok(None);
        }
        if let Some(imm) = c.imm {
            if c.status != CqStatus::Success || c.opcode != layout::sqe::OP_WRITE_IMM {
                return Err(CqError::BadReceive {
                    qp: c.qp,
                    status: c.status,
                    opcode: c.opcode,
                });
            }
            let mut r = lock(&t.recv);
            return Ok(match r.posted.pop_front() {
                Some(wr_id) => Some(WorkCompletion {
                    wr_id,
                    status: CqStatus::Success,
                    opcode: WcOpcode::RecvWriteImm,
                    qp: c.qp,
                    byte_len: c.byte_len,
                    imm: Some(imm),
                }),
                None => {
                    r.held.push_back((c.byte_len, imm));
                    None
                }
            });
        }
        if c.status == CqStatus::BadDoorbell {
            return Err(CqError::DoorbellRejected {
                qp: c.qp,
                producer: c.sq_index,
            });
        }
        let ci = t.ci.load(Ordering::Acquire);
        let pi = t.pi.load(Ordering::Acquire);
        let reset_pending = t.reset_pending.load(Ordering::Acquire);
        let stale_shadow = |s: &Slot| {
            s.wr_id.load(Ordering::Relaxed) != c.wr_id || {
                let imm = s.flags.load(Ordering::Relaxed) & F_IMM != 0;
                c.opcode
                    != if imm {
                        layout::sqe::OP_WRITE_IMM
                    } else {
                        layout::sqe::OP_WRITE
                    }
            }
        };
        if reset_pending && (c.sq_index.wrapping_sub(ci) >= pi.wrapping_sub(ci) || stale_shadow(t.slot(c.sq_index))) {
            // A CQE of the QP's life before its reset.
            self.stale += 1;
            return Ok(None);
        }
        t.reset_pending.store(false, Ordering::Release);
        if c.sq_index.wrapping_sub(ci) >= pi.wrapping_sub(ci) {
            return Err(CqError::IndexOutOfRange {
                qp: c.qp,
                index: c.sq_index,
                ci,
                pi,
            });
        }
        let s = t.slot(c.sq_index);
        let want_id = s.wr_id.load(Ordering::Relaxed);
        let flags = s.flags.load(Ordering::Relaxed);
        let mismatch = |field, got: u64, want: u64| CqError::Mismatch {
            qp: c.qp,
            index: c.sq_index,
            field,
            got,
            want,
        };
        if c.wr_id != want_id {
            return Err(mismatch("wr_id", c.wr_id, want_id));
        }
        let want_op = if flags & F_IMM != 0 {
            layout::sqe::OP_WRITE_IMM
        } else {
            layout::sqe::OP_WRITE
        };
        if c.opcode != want_op {
            return Err(mismatch("opcode", u64::from(c.opcode), u64::from(want_op)));
        }
        if c.status == CqStatus::Success && flags & F_SIGNALED == 0 {
            return Err(mismatch("signaled", 0, 1));
        }
        // Everything up to this descriptor is complete (unsignaled WRs
        // before it included).
        let mut i = ci;
        let end = c.sq_index.wrapping_add(1);
        while i != end {
            if t.slot(i).flags.load(Ordering::Relaxed) & F_IMM != 0 {
                t.imm_outstanding.fetch_sub(1, Ordering::AcqRel);
            }
            i = i.wrapping_add(1);
        }
        t.ci.store(end, Ordering::Release);
        if c.status != CqStatus::Success && c.status != CqStatus::Flushed {
            // An error completion means the card put the QP in error
            // (retries exceeded, a remote access NACK, a descriptor it
            // refused): flush the rest (after `end`), as verbs do.
            t.flush_sends(c.qp);
        } else if c.status == CqStatus::Success && flags & F_FORCED != 0 {
            return Ok(None);
        }
        Ok(Some(WorkCompletion {
            wr_id: c.wr_id,
            status: c.status,
            opcode: if flags & F_IMM != 0 {
                WcOpcode::WriteImm
            } else {
                WcOpcode::Write
            },
            qp: c.qp,
            byte_len: c.byte_len,
            imm: None,
        }))
    }
}

impl Drop for CompletionQueue {
    fn drop(&mut self) {
        lock(&self.shared.alloc).cqs[usize::from(self.cqn)] = false;
    }
}

/// An EV event the driver refuses (consumed).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    #[error("malformed EV event: {0}")]
    Malformed(LayoutError),
    #[error("EV event for QP {0}, which is not open")]
    UnknownQp(u32),
}

/// The counter `name` of `regmap::COUNTERS` on the device of `shared`.
fn counter(shared: &Shared, name: &str) -> Result<u32, Error> {
    let slot = regmap::COUNTERS
        .iter()
        .position(|c| c.name == name)
        .ok_or_else(|| Error::UnknownCounter(name.into()))?;
    if slot as u32 >= shared.info.counters {
        return Err(Error::CounterAbsent {
            name: name.into(),
            slot,
            num: shared.info.counters,
        });
    }
    let v = shared
        .dev
        .read32(shared.info.counters_base + u64::from(regmap::counters::FIRST) + 4 * slot as u64);
    Ok(v)
}

/// The NIC's counter of EV events its EV-event ring had no room for.
const EV_EVENT_LOST: &str = "ev_event_lost";

/// The EV control plane: events (state changes the card made or was
/// told to make), deny / allow, re-admission.
///
/// The card has no probe packets (`docs/hw/ev_selector.md`: probing and
/// re-admission of ASSUMED_BAD EVs are not in hardware). A controller
/// that decides an ASSUMED_BAD EV may be healthy again re-admits it with
/// [`Controller::readmit`] (deny then allow: ASSUMED_BAD -> DENIED ->
/// GOOD); the data sent on it afterwards is the probe, and the card marks
/// it bad again if it still loses packets.
///
/// The card's events carry the EV's index in the QP's set (`ev_index`);
/// their `ev` (value) field is written as 0 (docs/hw/core.md, known gaps):
/// the value is `RtsAttr::evs.values[ev_index]`.
pub struct Controller {
    shared: Arc<Shared>,
    ring: PhaseRing,
}

impl Controller {
    /// The next EV event, `Ok(None)` if there is none. Events of the EV
    /// slots beyond a QP's set (the driver denies them at RTS) are
    /// consumed silently.
    pub fn poll_event(&mut self) -> Result<Option<layout::EvEvent>, EventError> {
        loop {
            match self.next_event()? {
                Some(ev) if ev.ev_index >= lock(&self.shared.alloc).ev_slots_used[ev.qp as usize] => continue,
                other => return Ok(other),
            }
        }
    }

    fn next_event(&mut self) -> Result<Option<layout::EvEvent>, EventError> {
        let mut e = [0u8; layout::ev_event::SIZE];
        if !self.ring.peek(&mut e) {
            // Caught up: the NIC is told of every slot it may write, so a
            // burst of events loses none to room the driver has freed
            // (the NIC drops what the ring has no room for).
            if self.ring.unreported() {
                self.report_consumer();
            }
            self.shared.dev.progress();
            return Ok(None);
        }
        self.ring.advance();
        if self.ring.report_due() {
            self.report_consumer();
        }
        let ev = layout::EvEvent::decode(&e).map_err(EventError::Malformed)?;
        let open = lock(&self.shared.alloc)
            .qps
            .get(ev.qp as usize)
            .copied()
            .unwrap_or(false);
        if !open {
            return Err(EventError::UnknownQp(ev.qp));
        }
        Ok(Some(ev))
    }

    fn report_consumer(&mut self) {
        let ci = self.ring.mark_reported();
        self.shared.row(
            cfg_table::EV_RING,
            config::INDEX_SELECT,
            &Row::new().set(config::ring_consumer::CONSUMER, u64::from(ci)),
        );
    }

    /// EV events the NIC dropped because the ring had no room (its
    /// `ev_event_lost` counter, free running and wrapping at 2^32): a
    /// controller that compares two readings knows how many it lost
    /// between them.
    pub fn events_lost(&self) -> Result<u32, Error> {
        counter(&self.shared, EV_EVENT_LOST)
    }

    fn control(&self, qp: &QueuePair, mask: u32, value: u32, allow: bool) {
        let row = Row::new()
            .set(config::ev_control::MASK, u64::from(mask))
            .set(config::ev_control::MATCH, u64::from(value))
            .set(config::ev_control::ALLOW, u64::from(allow));
        self.shared
            .row(cfg_table::EV, config::INDEX_SELECT | qp.qpn as u16, &row);
    }

    /// Deny every EV of `qp` whose value matches `value` under `mask`
    /// (GOOD or ASSUMED_BAD -> DENIED; `min_good_evs` does not apply).
    pub fn deny(&self, qp: &QueuePair, mask: u32, value: u32) {
        self.control(qp, mask, value, false);
    }

    /// Allow the matching DENIED EVs again (DENIED -> GOOD). An allow
    /// that matches value 0 would also wake the unused EV slots beyond
    /// the QP's set (the card sprays over all 128): they are denied again.
    pub fn allow(&self, qp: &QueuePair, mask: u32, value: u32) {
        self.control(qp, mask, value, true);
        if u64::from(value & mask) == UNUSED_EV_VALUE & u64::from(mask) {
            self.shared.row(
                cfg_table::EV,
                config::INDEX_SELECT | qp.qpn as u16,
                &deny_unused_slots(),
            );
        }
    }

    /// Re-admit one EV by value (see the type's doc: the card has no probes).
    pub fn readmit(&self, qp: &QueuePair, ev_value: u32) {
        self.control(qp, u32::MAX, ev_value, false);
        self.allow(qp, u32::MAX, ev_value);
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        lock(&self.shared.alloc).controller = false;
    }
}
