//! The Rust core of libmrc: a flat C ABI (`mrcx_*`) over the driver's
//! verbs API, which the C layer (`libmrc/c/`, compiled against the
//! system's `<infiniband/verbs.h>` so every struct has the layout programs
//! expect) turns into libibverbs' and libmrc's public functions. The two
//! are linked into one `lib_mrc.so` by `scripts/libmrc.sh`
//! (docs/host.md, "libmrc").
//!
//! Handles are boxed Rust objects behind opaque pointers; every function
//! checks for null and returns an errno value (or null) instead of
//! panicking, and a panic that escapes anyway is caught at the boundary.

#![allow(clippy::missing_safety_doc)]

pub mod ctl;
pub mod events;

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::raw::{c_char, c_int};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use events::{Channel, Events, MrcxAsyncEvent, Notifier, IBV_EVENT_CQ_ERR, IBV_EVENT_QP_FATAL};

use driver::select::{DeviceSpec, DEVICE_ENV};
use driver::{
    Access, CcProfile, CompletionQueue, Context, EvProfile, LocalAddress, MemoryRegion, OpenOptions, PeerAddress,
    ProtectionDomain, QpState, QpTransition, QueuePair, RtrAttr, RtsAttr, Timeouts, WcOpcode, WriteWr,
    MAX_ACK_TIMEOUT_EXP,
};

/// The devices libmrc offers: one per spec in `$MRC_DEVICE`, separated by
/// commas (`soft:10.0.0.1,soft:10.0.0.2`), named `mrc0`, `mrc1`, ...
fn device_specs() -> Vec<DeviceSpec> {
    #[cfg(feature = "cosim")]
    cosim::udp_bridge::register_with_driver();
    std::env::var(DEVICE_ENV)
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_default()
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Run `f`, turning a panic into `err` (nothing unwinds into C).
fn guard<R>(err: R, f: impl FnOnce() -> R) -> R {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(err)
}

/// A completion as the C layer reads it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MrcxWc {
    pub wr_id: u64,
    /// `contract::layout::CqStatus` as u8.
    pub status: u32,
    /// 0 WRITE, 1 WRITE-IMM, 2 receive of a WRITE-IMM.
    pub opcode: u32,
    pub byte_len: u32,
    /// Host order.
    pub imm: u32,
    pub has_imm: u32,
    pub qp_num: u32,
}

/// One completion queue: the driver's CQ (the send CQ of the QPs created
/// on it) and the completions routed to it (receives of QPs whose receive
/// CQ it is).
pub struct Cq {
    driver: Mutex<Option<CompletionQueue>>,
    queue: Mutex<VecDeque<MrcxWc>>,
    /// The C layer's handle (`struct mrc_cq *`), which events name.
    handle: usize,
    channel: Option<Arc<Channel>>,
    /// `mrc_req_notify_cq` was called and no event has fired since.
    armed: AtomicBool,
    /// The context it was made on: an EV-event CQ's events are the
    /// context's (`ctl::ev_cq_ready`).
    ctx: std::sync::Weak<Ctx>,
}

impl Cq {
    /// If armed and holding a completion: one event on the channel, and
    /// disarm. The queue is looked at after the flag is read (and the
    /// flag is set before the arming caller looks at the queue), so a
    /// completion queued while arming is never missed by both.
    fn fire_if_ready(&self) {
        // The EV-event CQ holds EV events, not completions.
        if let Some(ready) = self.ctx.upgrade().and_then(|c| ctl::ev_cq_ready(&c, self.handle)) {
            self.fire_when(|| ready);
            return;
        }
        self.fire_when(|| !lock(&self.queue).is_empty());
    }

    /// If armed and `ready()`: one event on the channel, and disarm.
    fn fire_when(&self, ready: impl FnOnce() -> bool) {
        let Some(ch) = &self.channel else { return };
        if self.armed.load(Ordering::SeqCst) && ready() && self.armed.swap(false, Ordering::SeqCst) {
            ch.push(self.handle);
        }
    }
}

pub struct Ctx {
    ctx: Context,
    ip: IpAddr,
    /// A soft NIC (its network's MTU applies).
    soft: bool,
    cqs: Mutex<Vec<Arc<Cq>>>,
    /// Receive CQ of each QP number.
    recv_cq: Mutex<HashMap<u32, Arc<Cq>>>,
    /// The C handle of each QP number (for asynchronous events).
    qp_handles: Mutex<HashMap<u32, usize>>,
    /// QPs whose fatal error was reported already.
    qp_failed: Mutex<HashSet<u32>>,
    /// Each live QP by number (`*const Qp`), for the controller's
    /// operations on the QPs of a profile.
    qp_objs: Mutex<HashMap<u32, usize>>,
    /// `mrc_ctl.h`'s profiles and EV-event CQ. Locked before any QP.
    ctl: Mutex<ctl::Ctl>,
    events: Events,
    /// Runs once a CQ has a completion channel.
    notifier: Mutex<Option<Notifier>>,
}

pub struct Pd {
    pd: ProtectionDomain,
    mrs: Mutex<Vec<(u32, Arc<MemoryRegion>)>>,
    next_lkey: Mutex<u32>,
    /// What zero-length WRITEs name (made on first use).
    empty: Mutex<Option<Arc<MemoryRegion>>>,
}

impl Pd {
    /// A local region of the PD for WRITEs of no bytes (the driver's
    /// descriptor names one; no byte of it is read).
    fn empty_region(&self) -> Option<Arc<MemoryRegion>> {
        /// The smallest buffer the device hands out.
        const EMPTY_REGION_BYTES: usize = 64;
        let mut e = lock(&self.empty);
        if e.is_none() {
            let buf = self.pd.alloc_buffer(EMPTY_REGION_BYTES).ok()?;
            *e = Some(Arc::new(self.pd.register(&buf, Access::LocalOnly).ok()?));
        }
        e.clone()
    }
}

/// Its PD outlives it: the C layer refuses to free a PD with MRs (EBUSY).
pub struct Mr {
    pd: *const Pd,
    lkey: u32,
}

/// Its PD and context outlive it (the C layer's reference counts).
pub struct Qp {
    qp: Mutex<QueuePair>,
    pd: *const Pd,
    ctx: *const Ctx,
    /// The profiles it was bound to at INIT (`mrc_ctl.h`).
    binding: Mutex<ctl::Binding>,
}

#[no_mangle]
pub extern "C" fn mrcx_device_count() -> c_int {
    guard(0, || device_specs().len() as c_int)
}

/// Open device `i`; null if it cannot be opened.
#[no_mangle]
pub extern "C" fn mrcx_open(i: c_int) -> *mut Ctx {
    guard(std::ptr::null_mut(), || {
        let Some(spec) = device_specs().into_iter().nth(i.max(0) as usize) else {
            return std::ptr::null_mut();
        };
        let (ip, soft) = match &spec {
            DeviceSpec::Soft(c) => (c.ip, true),
            DeviceSpec::Cosim { ip, .. } => (*ip, false),
            _ => (IpAddr::V4(Ipv4Addr::UNSPECIFIED), false),
        };
        let Ok(dev) = spec.open() else {
            return std::ptr::null_mut();
        };
        let Ok(ctx) = Context::open(dev, &OpenOptions::default()) else {
            return std::ptr::null_mut();
        };
        ctx.set_local_address(&LocalAddress {
            mac: driver::soft::mac_for(ip),
            ip,
            vlan_tci: None,
            dscp: 26,
            ttl: 64,
            // MRC 1.0 on every device: a card sends it under its own row's
            // bit (a soft NIC speaks it by default and ignores the bit).
            wire_mrc10: true,
        });
        let Some(events) = Events::new() else {
            return std::ptr::null_mut();
        };
        Arc::into_raw(Arc::new(Ctx {
            ctx,
            ip,
            soft,
            cqs: Mutex::new(Vec::new()),
            recv_cq: Mutex::new(HashMap::new()),
            qp_handles: Mutex::new(HashMap::new()),
            qp_failed: Mutex::new(HashSet::new()),
            qp_objs: Mutex::new(HashMap::new()),
            ctl: Mutex::new(ctl::Ctl::default()),
            events,
            notifier: Mutex::new(None),
        })) as *mut Ctx
    })
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_close(c: *mut Ctx) {
    if !c.is_null() {
        guard((), || {
            // SAFETY: made by `mrcx_open` (an Arc), closed once by the C
            // layer, which refuses while objects of the context live.
            let c = unsafe { Arc::from_raw(c as *const Ctx) };
            // Stop the notifier before the context goes.
            drop(lock(&c.notifier).take());
            drop(c);
        });
    }
}

/// The descriptor of the context's asynchronous events (readable while
/// one is queued).
#[no_mangle]
pub unsafe extern "C" fn mrcx_async_fd(c: *const Ctx) -> c_int {
    // SAFETY: a live context.
    unsafe { c.as_ref() }.map_or(-1, |c| c.events.fd())
}

/// The next asynchronous event into `out` (blocks unless the descriptor
/// is non-blocking); 0 or an errno.
#[no_mangle]
pub unsafe extern "C" fn mrcx_get_async_event(c: *const Ctx, out: *mut MrcxAsyncEvent) -> c_int {
    // SAFETY: a live context and an out pointer.
    let (Some(c), false) = (unsafe { c.as_ref() }, out.is_null()) else {
        return libc_einval();
    };
    match c.events.take() {
        Ok(e) => {
            // SAFETY: checked non-null above.
            unsafe { *out = e };
            0
        }
        Err(e) => e,
    }
}

/// The device's GID (RoCE v2: the IPv4-mapped or IPv6 address), 16 bytes.
#[no_mangle]
pub unsafe extern "C" fn mrcx_gid(c: *const Ctx, out: *mut u8) -> c_int {
    // SAFETY: the C layer passes a live context and 16 bytes.
    let (Some(c), false) = (unsafe { c.as_ref() }, out.is_null()) else {
        return libc_einval();
    };
    let g = match c.ip {
        IpAddr::V4(v) => v.to_ipv6_mapped().octets(),
        IpAddr::V6(v) => v.octets(),
    };
    // SAFETY: `out` holds 16 bytes.
    unsafe { std::ptr::copy_nonoverlapping(g.as_ptr(), out, 16) };
    0
}

/// The largest payload per packet the device's network carries (the
/// port's active MTU is the largest verbs MTU within it): for a soft NIC,
/// its interface's MTU less the headers; a card's MAC takes 4 KiB frames.
#[no_mangle]
pub unsafe extern "C" fn mrcx_port_mtu(c: *const Ctx) -> c_int {
    /// What a card's path carries (the core's largest MTU).
    const CARD_PAYLOAD: usize = 4096;
    // SAFETY: a live context.
    let Some(c) = (unsafe { c.as_ref() }) else {
        return -libc_einval();
    };
    guard(-libc_einval(), || {
        let bytes = if c.soft {
            driver::soft::max_payload(c.ip).unwrap_or(0)
        } else {
            CARD_PAYLOAD
        };
        bytes.min(c_int::MAX as usize) as c_int
    })
}

/// Whether port `port` (0-based) of the context's device is up: 1, 0, or
/// `-EINVAL` (no such port).
#[no_mangle]
pub unsafe extern "C" fn mrcx_port_up(c: *const Ctx, port: u8) -> c_int {
    // SAFETY: a live context.
    let Some(c) = (unsafe { c.as_ref() }) else {
        return -libc_einval();
    };
    guard(-libc_einval(), || match c.ctx.device().port_up(port) {
        Some(up) => c_int::from(up),
        None => -libc_einval(),
    })
}

/// Take port `port` (0-based) of the context's device down (`up` 0) or
/// up: 0, `EINVAL` (no such port), or `EOPNOTSUPP` (the device has no
/// port control: a card, whose port is always up, so asking for up is 0).
#[no_mangle]
pub unsafe extern "C" fn mrcx_port_set_up(c: *const Ctx, port: u8, up: c_int) -> c_int {
    const EOPNOTSUPP: c_int = 95;
    // SAFETY: a live context.
    let Some(c) = (unsafe { c.as_ref() }) else {
        return libc_einval();
    };
    let up = up != 0;
    guard(libc_einval(), || {
        let dev = c.ctx.device();
        match dev.port_up(port) {
            None => libc_einval(),
            Some(now) if now == up => 0,
            Some(_) => match dev.set_port_up(port, up) {
                Ok(()) => 0,
                Err(driver::DeviceError::Unsupported(_)) => EOPNOTSUPP,
                Err(_) => libc_einval(),
            },
        }
    })
}

/// `EBUSY`: an object still in use.
const EBUSY: c_int = 16;

fn libc_einval() -> c_int {
    22
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_alloc_pd(c: *const Ctx) -> *mut Pd {
    // SAFETY: a live context.
    let Some(c) = (unsafe { c.as_ref() }) else {
        return std::ptr::null_mut();
    };
    Box::into_raw(Box::new(Pd {
        pd: c.ctx.alloc_pd(),
        mrs: Mutex::new(Vec::new()),
        next_lkey: Mutex::new(1),
        empty: Mutex::new(None),
    }))
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_dealloc_pd(p: *mut Pd) {
    if !p.is_null() {
        // SAFETY: made by `mrcx_alloc_pd`, freed once.
        guard((), || drop(unsafe { Box::from_raw(p) }));
    }
}

/// Register `len` bytes at `addr`; `remote` allows remote writes. The
/// keys are written to `lkey` / `rkey`.
#[no_mangle]
pub unsafe extern "C" fn mrcx_reg_mr(
    p: *const Pd,
    addr: *mut u8,
    len: usize,
    remote: c_int,
    lkey: *mut u32,
    rkey: *mut u32,
) -> *mut Mr {
    guard(std::ptr::null_mut(), || {
        // SAFETY: a live PD from the C layer.
        let (Some(pd), Some(ptr)) = (unsafe { p.as_ref() }, NonNull::new(addr)) else {
            return std::ptr::null_mut();
        };
        let access = if remote != 0 {
            Access::RemoteWrite
        } else {
            Access::LocalOnly
        };
        // SAFETY: ibv_reg_mr's contract: the program keeps the memory
        // valid until it deregisters it.
        let Ok(mr) = (unsafe { pd.pd.register_host(ptr, len, access) }) else {
            return std::ptr::null_mut();
        };
        let key = {
            let mut n = lock(&pd.next_lkey);
            *n = n.wrapping_add(1).max(1);
            *n
        };
        // SAFETY: the out pointers are the C layer's ibv_mr fields.
        unsafe {
            if !lkey.is_null() {
                *lkey = key;
            }
            if !rkey.is_null() {
                *rkey = mr.rkey().unwrap_or(key);
            }
        }
        lock(&pd.mrs).push((key, Arc::new(mr)));
        Box::into_raw(Box::new(Mr { pd: p, lkey: key }))
    })
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_dereg_mr(m: *mut Mr) -> c_int {
    if m.is_null() {
        return libc_einval();
    }
    guard(libc_einval(), || {
        // SAFETY: made by `mrcx_reg_mr`, live until freed below; its PD
        // outlives it.
        let mr = unsafe { &*m };
        if let Some(pd) = unsafe { mr.pd.as_ref() } {
            let mut mrs = lock(&pd.mrs);
            // WRITEs not yet complete still read this memory (the soft NIC
            // reads a WRITE's data in place, through whichever registration
            // of the memory it finds): the program may not free it yet, so
            // the region stays while any registration overlapping it is in
            // use.
            let span = |r: &MemoryRegion| {
                let a = r.buffer().host_ptr() as usize;
                a..a + r.buffer().len()
            };
            if let Some((_, me)) = mrs.iter().find(|(k, _)| *k == mr.lkey) {
                let mine = span(me);
                let in_use = mrs.iter().any(|(_, r)| {
                    let s = span(r);
                    s.start < mine.end && mine.start < s.end && r.buffer().handles() > 1
                });
                if in_use {
                    return EBUSY;
                }
            }
            mrs.retain(|(k, _)| *k != mr.lkey);
        }
        // SAFETY: made by `mrcx_reg_mr`, freed once (the C layer frees its
        // handle only when this returns 0).
        drop(unsafe { Box::from_raw(m) });
        0
    })
}

/// A CQ of at least `entries`; `handle` is the C layer's (events name
/// it), `channel` its completion channel or null.
#[no_mangle]
pub unsafe extern "C" fn mrcx_create_cq(
    c: *const Ctx,
    entries: c_int,
    handle: usize,
    channel: *const Channel,
) -> *mut Cq {
    guard(std::ptr::null_mut(), || {
        if c.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: a live context (an Arc made by `mrcx_open`): take a
        // strong reference for the notifier without consuming the C's.
        let ctx = unsafe {
            Arc::increment_strong_count(c);
            Arc::from_raw(c)
        };
        let log2 = (entries.max(1) as u32)
            .next_power_of_two()
            .trailing_zeros()
            .clamp(4, 16) as u8;
        let Ok(cq) = ctx.ctx.create_cq(log2) else {
            return std::ptr::null_mut();
        };
        let channel = if channel.is_null() {
            None
        } else {
            // SAFETY: a live channel (an Arc made by
            // `mrcx_channel_create`): the CQ holds its own reference.
            Some(unsafe {
                Arc::increment_strong_count(channel);
                Arc::from_raw(channel)
            })
        };
        if channel.is_some() {
            let mut n = lock(&ctx.notifier);
            if n.is_none() {
                match Notifier::start(&ctx) {
                    Ok(t) => *n = Some(t),
                    Err(_) => return std::ptr::null_mut(),
                }
            }
        }
        let cq = Arc::new(Cq {
            driver: Mutex::new(Some(cq)),
            queue: Mutex::new(VecDeque::new()),
            handle,
            channel,
            armed: AtomicBool::new(false),
            ctx: Arc::downgrade(&ctx),
        });
        lock(&ctx.cqs).push(cq.clone());
        Arc::into_raw(cq) as *mut Cq
    })
}

/// Arm `cq`: its next completion puts one event on its channel (one
/// already queued does at once). EINVAL without a channel.
#[no_mangle]
pub unsafe extern "C" fn mrcx_req_notify(q: *const Cq) -> c_int {
    // SAFETY: a live CQ.
    let Some(q) = (unsafe { q.as_ref() }) else {
        return libc_einval();
    };
    if q.channel.is_none() {
        return libc_einval();
    }
    q.armed.store(true, Ordering::SeqCst);
    q.fire_if_ready();
    // A program arms a CQ to wait on its channel rather than poll: a soft
    // NIC its polls ran goes back to its own thread now (unless the event
    // fired already: the program takes it at once).
    if q.armed.load(Ordering::SeqCst) {
        if let Some(c) = q.ctx.upgrade() {
            c.ctx.device().program_waits();
        }
    }
    0
}

/// A completion channel; null if no descriptor is left.
#[no_mangle]
pub extern "C" fn mrcx_channel_create() -> *mut Channel {
    guard(std::ptr::null_mut(), || {
        Channel::new().map_or(std::ptr::null_mut(), |ch| Arc::into_raw(Arc::new(ch)) as *mut Channel)
    })
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_channel_fd(ch: *const Channel) -> c_int {
    // SAFETY: a live channel.
    unsafe { ch.as_ref() }.map_or(-1, Channel::fd)
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_channel_destroy(ch: *mut Channel) {
    if !ch.is_null() {
        // SAFETY: made by `mrcx_channel_create`, released once (CQs hold
        // their own references).
        guard((), || drop(unsafe { Arc::from_raw(ch as *const Channel) }));
    }
}

/// The next event of `ch`: its CQ's handle into `cq_handle`; 0 or an
/// errno (EAGAIN on a non-blocking descriptor with none queued).
#[no_mangle]
pub unsafe extern "C" fn mrcx_channel_get_event(ch: *const Channel, cq_handle: *mut usize) -> c_int {
    // SAFETY: a live channel and an out pointer.
    let (Some(ch), false) = (unsafe { ch.as_ref() }, cq_handle.is_null()) else {
        return libc_einval();
    };
    match ch.take() {
        Ok(h) => {
            // SAFETY: checked non-null above.
            unsafe { *cq_handle = h };
            0
        }
        Err(e) => e,
    }
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_destroy_cq(c: *const Ctx, q: *mut Cq) -> c_int {
    if q.is_null() {
        return libc_einval();
    }
    guard(libc_einval(), || {
        // SAFETY: made by `mrcx_create_cq` (an Arc), released once.
        let q = unsafe { Arc::from_raw(q as *const Cq) };
        if let Some(c) = unsafe { c.as_ref() } {
            // Out of the context's list first: no event is queued for it
            // afterwards (both queueing paths hold the list's lock), then
            // the queued ones go.
            lock(&c.cqs).retain(|x| !Arc::ptr_eq(x, &q));
            c.events.forget(|e| e.handle == q.handle);
            // An EV-event CQ (mrc_ctl.h) is destroyed as any CQ.
            ctl::ev_cq_gone(c, q.handle);
        }
        if let Some(ch) = &q.channel {
            ch.forget(|&h| h == q.handle);
        }
        0
    })
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_create_qp(
    c: *const Ctx,
    p: *const Pd,
    send_cq: *const Cq,
    recv_cq: *const Cq,
    max_send_wr: u32,
    handle: usize,
) -> *mut Qp {
    guard(std::ptr::null_mut(), || {
        // SAFETY: live objects from the C layer.
        let (Some(ctx), Some(pd), Some(scq), Some(_)) = (
            unsafe { c.as_ref() },
            unsafe { p.as_ref() },
            unsafe { send_cq.as_ref() },
            unsafe { recv_cq.as_ref() },
        ) else {
            return std::ptr::null_mut();
        };
        let log2 = max_send_wr.max(2).next_power_of_two().trailing_zeros().clamp(1, 16) as u8;
        let mut dcq = lock(&scq.driver);
        let Some(dcq) = dcq.as_mut() else {
            return std::ptr::null_mut();
        };
        let Ok(qp) = pd.pd.create_qp(dcq, log2) else {
            return std::ptr::null_mut();
        };
        // The receive CQ: find the Arc the context holds for it.
        let rcq = lock(&ctx.cqs).iter().find(|x| Arc::as_ptr(x) == recv_cq).cloned();
        if let Some(rcq) = rcq {
            lock(&ctx.recv_cq).insert(qp.qpn(), rcq);
        }
        lock(&ctx.qp_handles).insert(qp.qpn(), handle);
        lock(&ctx.qp_failed).remove(&qp.qpn());
        let qpn = qp.qpn();
        let q = Box::into_raw(Box::new(Qp {
            qp: Mutex::new(qp),
            pd: p,
            ctx: c,
            binding: Mutex::new(ctl::Binding::default()),
        }));
        lock(&ctx.qp_objs).insert(qpn, q as usize);
        q
    })
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_qpn(q: *const Qp) -> u32 {
    // SAFETY: a live QP.
    // The number a peer names it by (`qp_num`, exchanged out of band):
    // its number on the wire.
    unsafe { q.as_ref() }.map_or(0, |q| lock(&q.qp).wire_qpn())
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_destroy_qp(q: *mut Qp) -> c_int {
    if q.is_null() {
        return libc_einval();
    }
    guard(libc_einval(), || {
        // SAFETY: made by `mrcx_create_qp`, freed once.
        let q = unsafe { Box::from_raw(q) };
        if let Some(ctx) = unsafe { q.ctx.as_ref() } {
            let qpn = lock(&q.qp).qpn();
            {
                // The controller's lock over the unbinding and the removal:
                // its EV-event poll finds the QP either bound and live or
                // not at all.
                let mut ctl = lock(&ctx.ctl);
                ctl.unbind(&lock(&q.binding));
                ctl.forget_marks(qpn);
                lock(&ctx.qp_objs).remove(&qpn);
            }
            lock(&ctx.recv_cq).remove(&qpn);
            // Out of the handle map first (events are queued under its
            // lock), then its queued events go.
            if let Some(h) = lock(&ctx.qp_handles).remove(&qpn) {
                ctx.events.forget(|e| e.handle == h);
            }
            lock(&ctx.qp_failed).remove(&qpn);
        }
        0
    })
}

/// The QP's state: 0 RESET, 1 INIT, 2 RTR, 3 RTS, 4 ERR (an error
/// completion or a transition to ERR put it there).
#[no_mangle]
pub unsafe extern "C" fn mrcx_qp_state(q: *const Qp) -> c_int {
    // SAFETY: a live QP.
    let Some(q) = (unsafe { q.as_ref() }) else {
        return -libc_einval();
    };
    guard(-libc_einval(), || match lock(&q.qp).state() {
        QpState::Reset => 0,
        QpState::Init => 1,
        QpState::Rtr => 2,
        QpState::Rts => 3,
        QpState::Error => 4,
    })
}

/// Any -> ERR (outstanding WRs complete flushed) or, `reset`, any -> RST.
#[no_mangle]
pub unsafe extern "C" fn mrcx_to_err_or_reset(q: *const Qp, reset: c_int) -> c_int {
    // SAFETY: a live QP.
    let Some(q) = (unsafe { q.as_ref() }) else {
        return libc_einval();
    };
    guard(libc_einval(), || {
        let t = if reset != 0 {
            QpTransition::Reset
        } else {
            QpTransition::Error
        };
        let mut qp = lock(&q.qp);
        let r = qp.modify(t).map_or(libc_einval(), |_| 0);
        let qpn = qp.qpn();
        drop(qp);
        if r == 0 {
            // The flushed completions are the driver's, not the NIC's: no
            // interrupt announces them, so a program asleep on a channel
            // is woken here.
            if let Some(ctx) = unsafe { q.ctx.as_ref() } {
                drain(ctx, false);
                events::fire_armed(ctx);
            }
        }
        if r == 0 && reset != 0 {
            // A QP back in RESET may fail again, and say so again; it
            // leaves its profiles (INIT binds it anew).
            if let Some(ctx) = unsafe { q.ctx.as_ref() } {
                lock(&ctx.qp_failed).remove(&qpn);
                let b = std::mem::take(&mut *lock(&q.binding));
                let mut ctl = lock(&ctx.ctl);
                ctl.unbind(&b);
                ctl.forget_marks(qpn);
            }
        }
        r
    })
}

/// RST -> INIT.
#[no_mangle]
pub unsafe extern "C" fn mrcx_to_init(q: *const Qp) -> c_int {
    // SAFETY: a live QP.
    let Some(q) = (unsafe { q.as_ref() }) else {
        return libc_einval();
    };
    guard(libc_einval(), || {
        lock(&q.qp)
            .modify(QpTransition::Init { pkey: 0xFFFF })
            .map_or(libc_einval(), |_| 0)
    })
}

/// INIT -> RTR: the peer's QP, first PSN, GID (16 bytes), path MTU and
/// the receives the QP may hold (0: [`DEFAULT_MAX_WIMM`]).
#[no_mangle]
pub unsafe extern "C" fn mrcx_to_rtr(
    q: *const Qp,
    dest_qp: u32,
    rq_psn: u32,
    gid: *const u8,
    log2_mtu: u8,
    max_wimm_dest: u16,
) -> c_int {
    // SAFETY: a live QP and 16 bytes of GID.
    let (Some(q), false) = (unsafe { q.as_ref() }, gid.is_null()) else {
        return libc_einval();
    };
    guard(libc_einval(), || {
        let mut g = [0u8; 16];
        // SAFETY: 16 bytes.
        unsafe { std::ptr::copy_nonoverlapping(gid, g.as_mut_ptr(), 16) };
        let v6 = Ipv6Addr::from(g);
        let ip = v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4);
        lock(&q.qp)
            .modify(QpTransition::Rtr(RtrAttr {
                dest_qp,
                rq_psn: rq_psn & 0xFF_FFFF,
                peer: PeerAddress {
                    mac: driver::soft::mac_for(ip),
                    ip,
                },
                log2_mtu,
                max_wimm: or_default(max_wimm_dest, DEFAULT_MAX_WIMM),
            }))
            .map_or(libc_einval(), |_| 0)
    })
}

/// The EV set of a QP when the program names no EV profile: 8 EVs (UDP
/// source ports) from 0xC000, a block of 16 per QP number.
const DEFAULT_EVS: u16 = 8;
const DEFAULT_EV_BASE: u16 = 0xC000;

/// The shortest timeout a QP gets, as an exponent (1.024 us x 2^12 = 4.2
/// ms): a soft NIC's packets queue in two kernels' socket buffers, and a
/// window of full-size packets takes longer than the 131 us a program
/// may ask for (the OCP benchmark asks 2^7): spurious timeouts then spend
/// the retries and fail the QP. A card may take less; it is the same
/// floor for now.
const MIN_TIMEOUT_EXP: u8 = 12;

/// WRITE-with-immediate messages a QP may have outstanding, either way,
/// when the program names no bound.
const DEFAULT_MAX_WIMM: u16 = 256;
/// The peer's receive window when the program names none, units of 128
/// PSNs.
const DEFAULT_MPR_UNITS: u8 = 16;

/// `value`, or `default` when the program left it 0.
fn or_default<T: PartialEq + Default>(value: T, default: T) -> T {
    if value == T::default() {
        default
    } else {
        value
    }
}

/// RTR -> RTS: first PSN, timeout exponent (1.024 us x 2^t), retries at
/// the fixed timeout and then with backoff, the peer's window (units of
/// 128 PSNs) and the WRITE-with-immediate bound (0: the defaults).
#[no_mangle]
pub unsafe extern "C" fn mrcx_to_rts(
    q: *const Qp,
    sq_psn: u32,
    timeout: u8,
    retry_linear: u8,
    retry_exp: u8,
    mpr_units: u8,
    max_wimm: u16,
) -> c_int {
    // SAFETY: a live QP.
    let Some(q) = (unsafe { q.as_ref() }) else {
        return libc_einval();
    };
    guard(libc_einval(), || {
        let qpn = lock(&q.qp).qpn();
        // The bound profiles' EVs, and window ceiling and NSCC parameters
        // (the context's lock first, then the QP's, as everywhere).
        let (values, min_active, cc) = {
            // SAFETY: the QP's context outlives it.
            let Some(ctx) = (unsafe { q.ctx.as_ref() }) else {
                return libc_einval();
            };
            let ctl = lock(&ctx.ctl);
            let b = lock(&q.binding);
            let profile = b.ev.and_then(|id| ctl.ev.get(&id));
            let values = profile.map(|p| p.values_for(qpn));
            // The profile's floor of GOOD EVs, at most the QP's set (a
            // profile's ev_min_active is at most its ev_count).
            let min_active = profile.map(|p| p.ev_min_active);
            let cc = b.cc.and_then(|id| ctl.cc.get(&id)).and_then(ctl::CcProfile::window);
            (values, min_active, cc)
        };
        let values = values.unwrap_or_else(|| {
            let base = DEFAULT_EV_BASE.wrapping_add((qpn as u16 & 0x3FF) * 16);
            (0..DEFAULT_EVS).map(|i| base + i).collect()
        });
        let t = Timeouts {
            // MRC's timeouts go up to 2^24 x 1.024 us (17.2 s): a verbs
            // timeout above (5 bits, IB's up to 31) gets the longest, as
            // the model's `ack_timeout`; a timeout of 0 means "the
            // default".
            ack_timeout_exp: if timeout == 0 {
                14
            } else {
                timeout.clamp(MIN_TIMEOUT_EXP, MAX_ACK_TIMEOUT_EXP)
            },
            retry_linear: retry_linear.min(MAX_RETRY_LINEAR),
            retry_exp: retry_exp.min(MAX_RETRY_EXP),
            ..Timeouts::default()
        };
        let r = lock(&q.qp)
            .modify(QpTransition::Rts(RtsAttr {
                sq_psn: sq_psn & 0xFF_FFFF,
                send_mpr_units: or_default(mpr_units, DEFAULT_MPR_UNITS),
                max_wimm: or_default(max_wimm, DEFAULT_MAX_WIMM),
                timeouts: t,
                evs: EvProfile {
                    min_active: min_active.unwrap_or(DEFAULT_MIN_ACTIVE).min(values.len() as u32) as u8,
                    // The UDP format's 16-bit EVs as the driver's 32-bit
                    // ones (the flow-label half 0).
                    values: values.iter().map(|&v| u32::from(v)).collect(),
                },
                cc: CcProfile {
                    min_cwnd: MIN_CWND.min(cc.map_or(DEFAULT_MAX_CWND, |(w, _)| w)),
                    max_cwnd: cc.map_or(DEFAULT_MAX_CWND, |(w, _)| w),
                    nscc: cc.map(|(_, n)| n),
                },
            }))
            .map_or(libc_einval(), |_| 0);
        if r == 0 {
            lock(&q.binding).ev_values = values;
            // The EVs the controller DENIED in the profile are denied on
            // the QP from its first packet.
            // SAFETY: the QP's context outlives it.
            if let Some(ctx) = unsafe { q.ctx.as_ref() } {
                if let Err(e) = ctl::deny_at_rts(ctx, q) {
                    return e;
                }
            }
        }
        r
    })
}

/// Retries at the fixed timeout, and then with backoff (25: without end).
const MAX_RETRY_LINEAR: u8 = 7;
const MAX_RETRY_EXP: u8 = 25;

/// GOOD EVs a QP keeps when no EV profile names its floor.
const DEFAULT_MIN_ACTIVE: u32 = 1;

/// A QP's window when no CC profile names one, and the least it takes.
const DEFAULT_MAX_CWND: u32 = 4 << 20;
const MIN_CWND: u32 = 4096;

/// Bind a QP moving to INIT to an EV and a CC profile (0: none); they
/// must be ONLINE. 0 or an errno.
#[no_mangle]
pub unsafe extern "C" fn mrcx_bind_profiles(q: *const Qp, ev_profile: u32, cc_profile: u32) -> c_int {
    // SAFETY: a live QP and its context.
    let Some(q) = (unsafe { q.as_ref() }) else {
        return libc_einval();
    };
    let Some(ctx) = (unsafe { q.ctx.as_ref() }) else {
        return libc_einval();
    };
    guard(libc_einval(), || {
        let mut ctl = lock(&ctx.ctl);
        let b = (ev_profile != 0).then_some(ev_profile);
        let c = (cc_profile != 0).then_some(cc_profile);
        match ctl.bind(b, c) {
            Ok(new) => {
                let old = std::mem::replace(&mut *lock(&q.binding), new);
                ctl.unbind(&old);
                ctl.forget_marks(lock(&q.qp).qpn());
                0
            }
            Err(e) => e,
        }
    })
}

/// Post one WRITE (`has_imm`: with immediate `imm`, host order).
#[no_mangle]
pub unsafe extern "C" fn mrcx_post_write(
    q: *const Qp,
    wr_id: u64,
    laddr: u64,
    len: u32,
    lkey: u32,
    raddr: u64,
    rkey: u32,
    signaled: c_int,
    has_imm: c_int,
    imm: u32,
) -> c_int {
    // SAFETY: a live QP whose PD is alive.
    let Some(q) = (unsafe { q.as_ref() }) else {
        return libc_einval();
    };
    let Some(pd) = (unsafe { q.pd.as_ref() }) else {
        return libc_einval();
    };
    guard(libc_einval(), || {
        // A zero-length WRITE (an immediate alone, often) names no memory:
        // it goes out on the PD's own empty region.
        let mr = if len == 0 {
            match pd.empty_region() {
                Some(m) => m,
                None => return 12, // ENOMEM
            }
        } else {
            let mr = lock(&pd.mrs).iter().find(|(k, _)| *k == lkey).map(|(_, m)| m.clone());
            let Some(mr) = mr else { return libc_einval() };
            mr
        };
        let off = if len == 0 {
            0
        } else {
            let base = mr.buffer().host_ptr() as u64;
            let Some(off) = laddr.checked_sub(base) else {
                return libc_einval();
            };
            off
        };
        let wr = WriteWr {
            wr_id,
            local: &mr,
            local_offset: off,
            len,
            remote_va: raddr,
            rkey,
            signaled: signaled != 0,
            imm: (has_imm != 0).then_some(imm),
        };
        match lock(&q.qp).post_write(&wr) {
            Ok(()) => 0,
            Err(driver::PostError::QueueFull(_)) => 12, // ENOMEM, as verbs
            Err(_) => libc_einval(),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn mrcx_post_recv(q: *const Qp, wr_id: u64) -> c_int {
    // SAFETY: a live QP.
    let Some(q) = (unsafe { q.as_ref() }) else {
        return libc_einval();
    };
    guard(libc_einval(), || match lock(&q.qp).post_recv(wr_id) {
        Ok(()) => 0,
        Err(driver::PostError::RecvQueueFull(_)) => 12,
        Err(_) => libc_einval(),
    })
}

/// A completion as the C layer reports it; `wire_qpn_offset`: the
/// device's, so `qp_num` is the QP's `qp_num` (its wire number).
fn to_wc(w: &driver::WorkCompletion, wire_qpn_offset: u32) -> MrcxWc {
    MrcxWc {
        wr_id: w.wr_id,
        status: w.status as u32,
        opcode: match w.opcode {
            WcOpcode::Write => 0,
            WcOpcode::WriteImm => 1,
            WcOpcode::RecvWriteImm => 2,
        },
        byte_len: w.byte_len,
        imm: w.imm.unwrap_or(0),
        has_imm: u32::from(w.imm.is_some()),
        qp_num: w.qp + wire_qpn_offset,
    }
}

/// Move what the device's CQ rings hold into the CQs' queues, routing
/// each receive to its QP's receive CQ, and queue the asynchronous events
/// they report. `drive`: an empty ring gives the device time to run (a
/// polling program); otherwise the rings are read as they are (the
/// notifier, woken by an interrupt). A CQ another thread is draining is
/// skipped when `drive` (that thread takes its completions), waited for
/// otherwise (nothing the interrupt announced is left behind).
pub(crate) fn drain(ctx: &Ctx, drive: bool) {
    const BATCH: usize = 64;
    let cqs: Vec<Arc<Cq>> = lock(&ctx.cqs).clone();
    let mut got = Vec::with_capacity(BATCH);
    for src in &cqs {
        let mut guard = if drive {
            match src.driver.try_lock() {
                Ok(g) => g,
                Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => continue,
            }
        } else {
            lock(&src.driver)
        };
        let Some(d) = guard.as_mut() else { continue };
        loop {
            got.clear();
            let r = if drive {
                d.poll_batch(&mut got, BATCH)
            } else {
                d.poll_ready(&mut got, BATCH)
            };
            for w in &got {
                route(ctx, src, w);
            }
            match r {
                // Another full batch may be waiting (the notifier takes
                // them all; a polling program comes back for more).
                Ok(n) if n == BATCH && !drive => continue,
                Ok(_) => break,
                // A CQE the driver refused (counted by the driver): the
                // CQ's owner hears of it; the rest of the ring is read.
                // Queued under the CQ list's lock, for a CQ still in it
                // (one being destroyed has its events forgotten after).
                Err(_) => {
                    let live = lock(&ctx.cqs);
                    if live.iter().any(|x| Arc::ptr_eq(x, src)) {
                        ctx.events.push(MrcxAsyncEvent {
                            event_type: IBV_EVENT_CQ_ERR,
                            handle: src.handle,
                        });
                    }
                }
            }
        }
    }
}

fn route(ctx: &Ctx, src: &Arc<Cq>, w: &driver::WorkCompletion) {
    let wc = to_wc(w, ctx.ctx.device().wire_qpn_offset());
    let target = if w.opcode == WcOpcode::RecvWriteImm {
        lock(&ctx.recv_cq).get(&w.qp).cloned().unwrap_or_else(|| src.clone())
    } else {
        src.clone()
    };
    lock(&target.queue).push_back(wc);
    // A QP whose completion reports an error is in ERR: say so once
    // (a flushed WR is the consequence, not the cause).
    if w.status != driver::CqStatus::Success
        && w.status != driver::CqStatus::Flushed
        && lock(&ctx.qp_failed).insert(w.qp)
    {
        // Queued under the handle map's lock: a QP being destroyed is
        // either still there (and its event is forgotten after) or gone.
        let handles = lock(&ctx.qp_handles);
        if let Some(&handle) = handles.get(&w.qp) {
            ctx.events.push(MrcxAsyncEvent {
                event_type: IBV_EVENT_QP_FATAL,
                handle,
            });
        }
    }
}

/// Up to `max` completions of `cq` into `out`; the count, or a negative
/// errno. Polling drains every driver CQ of the context and routes each
/// receive to its QP's receive CQ.
#[no_mangle]
pub unsafe extern "C" fn mrcx_poll(c: *const Ctx, cq: *const Cq, max: c_int, out: *mut MrcxWc) -> c_int {
    // SAFETY: live context and CQ; `out` holds `max` entries.
    let (Some(ctx), Some(me)) = (unsafe { c.as_ref() }, unsafe { cq.as_ref() }) else {
        return -libc_einval();
    };
    if out.is_null() || max < 0 {
        return -libc_einval();
    }
    guard(-libc_einval(), || {
        if lock(&me.queue).is_empty() {
            drain(ctx, true);
        }
        let mut q = lock(&me.queue);
        let n = (max as usize).min(q.len());
        for i in 0..n {
            let wc = q.pop_front().unwrap_or_default();
            // SAFETY: `out` holds `max` entries.
            unsafe { *out.add(i) = wc };
        }
        n as c_int
    })
}

/// The name of device `i` (`mrc0`, ...) into `buf` (NUL-terminated).
#[no_mangle]
pub unsafe extern "C" fn mrcx_device_name(i: c_int, buf: *mut c_char, len: usize) -> c_int {
    if buf.is_null() || len == 0 {
        return libc_einval();
    }
    let name = format!("mrc{i}");
    let n = name.len().min(len - 1);
    // SAFETY: `buf` holds `len` bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(name.as_ptr() as *const c_char, buf, n);
        *buf.add(n) = 0;
    }
    0
}
