//! Completion channels, CQ notification and asynchronous events: what a
//! program that sleeps instead of spinning uses.
//!
//! - A [`Channel`] is an eventfd in semaphore mode (its descriptor is the
//!   `fd` of `struct ibv_comp_channel`, so a program may `poll(2)` it)
//!   and the queue of CQs whose events it holds, one per read.
//! - A CQ armed by `mrc_req_notify_cq` puts one event on its channel when
//!   it next holds a completion, and disarms.
//! - A context with a channel CQ runs a notifier thread: it sleeps on the
//!   device's interrupt (the soft NIC raises one per completion written;
//!   a device without interrupts is polled every [`NO_IRQ_POLL`]), drains
//!   the device's CQ rings into the CQs' queues and fires armed CQs.
//! - Asynchronous events (an [`Events`] per context, its own eventfd):
//!   `IBV_EVENT_QP_FATAL` the first time a QP's completion reports it in
//!   error, `IBV_EVENT_CQ_ERR` for a completion the driver refused.

use std::collections::VecDeque;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::{drain, lock, Ctx};

/// How often the notifier polls a device that has no interrupts.
const NO_IRQ_POLL: Duration = Duration::from_micros(50);
/// The longest the notifier sleeps on an interrupt before it looks at
/// its stop flag again.
const IRQ_WAIT: Duration = Duration::from_millis(2);

/// An eventfd counting queued entries (semaphore mode: a read takes one).
pub struct EventFd(c_int);

impl EventFd {
    pub fn new() -> Option<EventFd> {
        // SAFETY: plain syscall; the descriptor is owned by the result.
        let fd = unsafe { libc::eventfd(0, libc::EFD_SEMAPHORE | libc::EFD_CLOEXEC) };
        (fd >= 0).then_some(EventFd(fd))
    }

    pub fn raw(&self) -> c_int {
        self.0
    }

    fn post(&self) {
        let one: u64 = 1;
        // SAFETY: 8 bytes from a live u64 to our eventfd.
        let _ = unsafe { libc::write(self.0, (&one as *const u64).cast(), 8) };
    }

    /// Take one entry: blocks unless the program made the descriptor
    /// non-blocking; 0, or the errno of the read (EAGAIN: none).
    fn take(&self) -> c_int {
        let mut v: u64 = 0;
        loop {
            // SAFETY: 8 bytes into a live u64 from our eventfd.
            let n = unsafe { libc::read(self.0, (&mut v as *mut u64).cast(), 8) };
            if n == 8 {
                return 0;
            }
            let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO);
            if e != libc::EINTR {
                return e;
            }
        }
    }
}

impl Drop for EventFd {
    fn drop(&mut self) {
        // SAFETY: our descriptor, closed once.
        unsafe { libc::close(self.0) };
    }
}

/// Events a program takes one at a time from a descriptor it may
/// `poll(2)`: a queue and an eventfd counting what was queued.
pub struct EventQueue<T> {
    fd: EventFd,
    queue: Mutex<VecDeque<T>>,
}

impl<T> EventQueue<T> {
    pub fn new() -> Option<EventQueue<T>> {
        Some(EventQueue {
            fd: EventFd::new()?,
            queue: Mutex::new(VecDeque::new()),
        })
    }

    pub fn fd(&self) -> c_int {
        self.fd.raw()
    }

    pub fn push(&self, e: T) {
        lock(&self.queue).push_back(e);
        self.fd.post();
    }

    /// The next event, or the errno of the descriptor's read (EAGAIN when
    /// the program made it non-blocking and none is queued). A count on
    /// the descriptor whose event was forgotten is skipped.
    pub fn take(&self) -> Result<T, c_int> {
        loop {
            match self.fd.take() {
                0 => {
                    if let Some(e) = lock(&self.queue).pop_front() {
                        return Ok(e);
                    }
                }
                e => return Err(e),
            }
        }
    }

    /// Drop the queued events `gone` names: an object that is going takes
    /// its events with it (the kernel's verbs do the same), so none names
    /// it afterwards.
    pub fn forget(&self, gone: impl Fn(&T) -> bool) {
        lock(&self.queue).retain(|e| !gone(e));
    }
}

/// A completion channel: the C handle (`struct mrc_cq *`) of each event's
/// CQ, in order.
pub type Channel = EventQueue<usize>;

/// An asynchronous event as the C layer reads it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MrcxAsyncEvent {
    /// `enum ibv_event_type`.
    pub event_type: u32,
    /// The C handle of the QP or CQ it is about.
    pub handle: usize,
}

/// `enum ibv_event_type` values (verbs.h; stable ABI).
pub const IBV_EVENT_CQ_ERR: u32 = 0;
pub const IBV_EVENT_QP_FATAL: u32 = 1;

/// A context's asynchronous events.
pub type Events = EventQueue<MrcxAsyncEvent>;

/// A context's notifier thread.
pub struct Notifier {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Notifier {
    pub fn start(ctx: &Arc<Ctx>) -> std::io::Result<Notifier> {
        let stop = Arc::new(AtomicBool::new(false));
        let weak = Arc::downgrade(ctx);
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new().name("mrc-notify".into()).spawn(move || {
            while !flag.load(Ordering::Acquire) {
                let Some(ctx) = weak.upgrade() else { return };
                let dev = Arc::clone(ctx.ctx.device());
                let irq = dev.interrupt_vectors() > 0;
                // Hold no strong reference while asleep.
                drop(ctx);
                if irq {
                    let _ = dev.wait_interrupt(0, IRQ_WAIT);
                } else {
                    std::thread::sleep(NO_IRQ_POLL);
                }
                let Some(ctx) = weak.upgrade() else { return };
                // With interrupts the rings are read as they are; without,
                // the device is driven as a polling program would.
                drain(&ctx, !irq);
                fire_armed(&ctx);
            }
        })?;
        Ok(Notifier {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Notifier {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            // The last strong reference may be dropped on the notifier
            // itself (it upgrades its weak one): it cannot join itself.
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }
}

/// Put an event on the channel of every armed CQ that holds completions
/// (the EV-event CQ: EV events, taken from the device's ring first).
pub fn fire_armed(ctx: &Ctx) {
    let ev_cq = crate::ctl::ev_cq_take(ctx);
    for cq in lock(&ctx.cqs).iter() {
        match ev_cq {
            Some((h, ready)) if h == cq.handle => cq.fire_when(|| ready),
            _ => cq.fire_when(|| !lock(&cq.queue).is_empty()),
        }
    }
}
