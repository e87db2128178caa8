//! The soft NIC's sockets: UDP datagrams with the IP traffic class (DSCP
//! and ECN) passed per packet as ancillary data, so the receiver sees the
//! class the sender chose as a card's parser would (`IP_TOS` /
//! `IPV6_TCLASS` on send, `IP_RECVTOS` / `IPV6_RECVTCLASS` on receive).

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};

/// A bound, non-blocking UDP socket.
#[derive(Debug)]
pub struct UdpPort {
    sock: UdpSocket,
    v6: bool,
    /// The kernel refused the traffic class as ancillary data once: send
    /// without it from then on.
    no_tos_cmsg: AtomicBool,
    /// Runs of equal-size datagrams to one loopback destination leave as
    /// one segmentation-offload send (`UDP_SEGMENT`); cleared if the
    /// kernel refuses one.
    gso: AtomicBool,
    /// The kernel hands runs of datagrams up as one buffer (`UDP_GRO`).
    pub gro: bool,
}

/// `UDP_SEGMENT` and `UDP_GRO` (linux/udp.h), level `SOL_UDP`.
const UDP_SEGMENT: i32 = 103;
const UDP_GRO: i32 = 104;
const SOL_UDP: i32 = 17;

/// Segments of one offloaded send at most (the kernel's
/// `UDP_MAX_SEGMENTS` is 64 on older kernels) and its bytes at most (one
/// IP datagram's payload).
const GSO_MAX_SEGMENTS: usize = 64;
const GSO_MAX_BYTES: usize = 65_000;

/// `IPV6_AUTOFLOWLABEL` (linux/in6.h; not in every libc crate version).
const IPV6_AUTOFLOWLABEL: i32 = 70;

/// Bytes of the control buffer: one `int` message, with room.
const CMSG_BUF: usize = 64;

fn sockaddr_of(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: zeroed sockaddr_storage is a valid value.
    let mut ss: libc::sockaddr_storage = unsafe { zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from(*a.ip()).to_be(),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than sockaddr_in.
            unsafe { std::ptr::write(&mut ss as *mut _ as *mut libc::sockaddr_in, sin) };
            size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo().to_be(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_storage is larger than sockaddr_in6.
            unsafe { std::ptr::write(&mut ss as *mut _ as *mut libc::sockaddr_in6, sin6) };
            size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

fn addr_of(ss: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match i32::from(ss.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says this is a sockaddr_in.
            let sin = unsafe { &*(ss as *const _ as *const libc::sockaddr_in) };
            Some(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)),
                u16::from_be(sin.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says this is a sockaddr_in6.
            let sin6 = unsafe { &*(ss as *const _ as *const libc::sockaddr_in6) };
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(sin6.sin6_addr.s6_addr),
                u16::from_be(sin6.sin6_port),
                u32::from_be(sin6.sin6_flowinfo),
                sin6.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

fn setsockopt_int(fd: i32, level: i32, name: i32, v: i32) -> io::Result<()> {
    // SAFETY: a valid fd and a pointer to an int of the stated size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &v as *const i32 as *const libc::c_void,
            size_of::<i32>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `SO_MEMINFO` (asm-generic/socket.h; not in the libc crate): the
/// socket's memory counters, `SK_MEMINFO_DROPS` among them.
const SO_MEMINFO: i32 = 55;

/// Why a datagram was not sent.
#[derive(Debug)]
pub enum SendError {
    /// The socket buffer is full (the datagram is lost; the protocol
    /// recovers it).
    Busy,
    /// Larger than the path MTU (IP fragmentation is off).
    TooBig,
    Io(io::Error),
}

/// Datagrams one `sendmmsg` takes at most.
pub const SEND_BATCH: usize = 64;

/// One datagram waiting in a [`SendBatch`]: its frame (the UDP payload
/// from `payload_at`), where it goes, its class, and the source port (the
/// socket) it leaves from. A large payload is not in the frame: it goes
/// at `split`, sent from where it lies in host memory (`payload`, an
/// `iovec` of its own), and the kernel's copy is its only one.
#[derive(Debug)]
pub struct Queued {
    pub frame: Vec<u8>,
    pub payload_at: usize,
    /// A payload sent from where it lies; empty when the frame holds it.
    pub payload: Bytes,
    /// Where in `frame` `payload` goes.
    pub split: usize,
    pub to: SocketAddr,
    pub tos: u8,
    pub src_port: u16,
}

impl Queued {
    /// The datagram's length (the UDP payload).
    pub fn len(&self) -> usize {
        self.frame.len() - self.payload_at + self.payload.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The datagram in order: the frame up to the payload, the payload,
    /// the rest of the frame (pad and ICRC).
    pub fn parts(&self) -> [&[u8]; IOVS_PER_DATAGRAM] {
        let split = self.split.clamp(self.payload_at, self.frame.len());
        [
            &self.frame[self.payload_at..split],
            &self.payload[..],
            &self.frame[split..],
        ]
    }
}

/// `iovec`s of one datagram at most ([`Queued::parts`]).
pub const IOVS_PER_DATAGRAM: usize = 3;

/// The datagrams a NIC produced in one pass, sent together
/// ([`UdpPort::send_batch`]): grouped by the socket they leave from, in
/// the order they were produced within each socket (an EV's packets stay
/// in order; packets of different EVs may pass each other, as they may in
/// a network). Frames are kept for reuse: no allocation per datagram.
#[derive(Debug, Default)]
pub struct SendBatch {
    items: Vec<Queued>,
    len: usize,
    /// `items[..len]` by source port, stable.
    pub order: Vec<usize>,
    /// The system call's headers, kept between sends: only the entries a
    /// send uses are written (zeroing all of them, 17 KiB, cost as much
    /// as a small send).
    scratch: SendScratch,
}

/// What one `sendmmsg` points at: per message its header, address and
/// control buffer, per datagram its `iovec`.
struct SendScratch {
    hdrs: Box<[libc::mmsghdr; SEND_BATCH]>,
    iovs: Box<[libc::iovec; SEND_BATCH * IOVS_PER_DATAGRAM]>,
    addrs: Box<[libc::sockaddr_storage; SEND_BATCH]>,
    cbufs: Box<[[u64; CMSG_BUF / 8]; SEND_BATCH]>,
}

impl Default for SendScratch {
    fn default() -> Self {
        // SAFETY: zeroed headers, iovecs and addresses are valid values
        // (null pointers, zero lengths), rewritten before each use.
        unsafe {
            SendScratch {
                hdrs: Box::new(zeroed()),
                iovs: Box::new(zeroed()),
                addrs: Box::new(zeroed()),
                cbufs: Box::new([[0; CMSG_BUF / 8]; SEND_BATCH]),
            }
        }
    }
}

impl std::fmt::Debug for SendScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SendScratch")
    }
}

// SAFETY: the raw pointers in the scratch headers point into the batch's
// own buffers and are rewritten before every use.
unsafe impl Send for SendScratch {}

impl SendBatch {
    /// Datagrams waiting.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A slot for the next datagram, its frame buffer cleared (the caller
    /// fills every field).
    pub fn push(&mut self) -> &mut Queued {
        if self.len == self.items.len() {
            self.items.push(Queued {
                frame: Vec::with_capacity(9216 + 64),
                payload_at: 0,
                payload: Bytes::new(),
                split: 0,
                to: SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
                tos: 0,
                src_port: 0,
            });
        }
        self.len += 1;
        let o = &mut self.items[self.len - 1];
        o.frame.clear();
        o.payload = Bytes::new();
        o.split = 0;
        o
    }

    /// Give back the last slot taken (its datagram is not sent).
    pub fn pop(&mut self) {
        self.len = self.len.saturating_sub(1);
    }

    /// Order the waiting datagrams by source port and return the runs
    /// `(source port, from, to)` of [`SendBatch::order`], one per socket.
    pub fn runs(&mut self) -> Vec<(u16, usize, usize)> {
        self.order.clear();
        self.order.extend(0..self.len);
        let items = &self.items;
        self.order.sort_by_key(|&i| items[i].src_port);
        let mut runs = Vec::new();
        let mut from = 0;
        for k in 1..=self.len {
            if k == self.len || items[self.order[k]].src_port != items[self.order[from]].src_port {
                runs.push((items[self.order[from]].src_port, from, k));
                from = k;
            }
        }
        runs
    }

    /// Forget the datagrams (their buffers stay for the next pass; the
    /// payloads they held from host memory are let go).
    pub fn clear(&mut self) {
        for o in &mut self.items[..self.len] {
            o.payload = Bytes::new();
        }
        self.len = 0;
        self.order.clear();
    }
}

/// What [`UdpPort::send_batch`] did with the datagrams.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendOutcome {
    pub sent: u64,
    pub busy: u64,
    pub too_big: u64,
    pub errors: u64,
    /// A segmentation-offload send the kernel refused (it is not used
    /// again on that socket).
    pub gso_refused: u64,
}

/// One received datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    pub len: usize,
    pub from: SocketAddr,
    /// The IP traffic class byte (DSCP << 2 | ECN); 0 if the kernel did not
    /// report it.
    pub tos: u8,
    /// Larger than the buffer it was read into: cut, to be refused.
    pub truncated: bool,
    /// A run of datagrams handed up as one buffer (`UDP_GRO`): each
    /// `segment` bytes long but the last. 0: one datagram.
    pub segment: usize,
}

impl Received {
    /// Where its datagrams lie in what was read: (offset, length) pairs,
    /// a run cut at its segment size.
    pub fn datagrams(self) -> impl Iterator<Item = (usize, usize)> {
        let step = if self.segment == 0 || self.segment >= self.len {
            self.len.max(1)
        } else {
            self.segment
        };
        // An empty datagram is one, to be counted and refused.
        (0..self.len.max(1))
            .step_by(step)
            .map(move |at| (at, step.min(self.len - at)))
    }
}

/// Smallest segment of a run that [`RecvBatch`] lays its buffers out
/// for, one slot per segment: smaller datagrams cost more per datagram
/// than their copy, and a slot per 64-byte datagram would ask the kernel
/// to fill a thousand buffers per read.
pub const MIN_SLOT_SEGMENT: usize = 1024;

/// Buffers for [`UdpPort::recv_batch`]: one arena that every message of a
/// `recvmmsg` is read into, each datagram (where the batch can tell where
/// they fall) with `headroom` bytes free before it, so a frame can be
/// made of it by writing its outer headers there, with no copy
/// ([`RecvBatch::frame`]).
///
/// A message's buffer is cut in slots, each after its headroom: one slot
/// of the message's whole size until a run handed up whole (`UDP_GRO`)
/// tells the size of the peer's segments, then one slot per segment of
/// that size ([`MIN_SLOT_SEGMENT`] and more). A datagram that starts a
/// slot and fits it is in place; any other (a run of other sizes) is
/// copied out ([`RecvBatch::copy_datagram`]).
pub struct RecvBatch {
    /// The messages' slots, one after the other; what was cut from it
    /// ([`RecvBatch::frame`]) is left behind, the rest is its tail.
    arena: BytesMut,
    /// Bytes of the arena at this layout, and where its memory was when
    /// it was made zeroed: the same memory reclaimed is initialized.
    arena_size: usize,
    arena_base: usize,
    /// How far the arena was cut this batch (from its start).
    cut: usize,
    /// Bytes free before each slot.
    headroom: usize,
    /// Bytes one message takes: the largest run (or datagram) it reads.
    msg_bytes: usize,
    /// Bytes of a slot (`msg_bytes` until a run's segment size is seen).
    slot: usize,
    /// The slot of the next read (the last run's segment size).
    next_slot: usize,
    /// The (arena address, slot) the iovecs were written for.
    layout: Option<(usize, usize)>,
    /// The message each of `got` was read as.
    msg_of: Vec<usize>,
    addrs: Vec<libc::sockaddr_storage>,
    cmsgs: Vec<[u64; CMSG_BUF / 8]>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    /// What the last call received, in order; datagram `i` is
    /// [`RecvBatch::datagram`]`(i)`.
    pub got: Vec<Received>,
}

// SAFETY: the raw pointers in `iovs` and `hdrs` point into the batch's own
// buffers and are rewritten whenever those move.
unsafe impl Send for RecvBatch {}

impl RecvBatch {
    /// `n` buffers of `size` bytes, no headroom.
    pub fn new(n: usize, size: usize) -> RecvBatch {
        RecvBatch::framed(n, size, 0)
    }

    /// `n` buffers of `size` bytes, each datagram read with `headroom`
    /// bytes free before it (where it can be told where they fall).
    pub fn framed(n: usize, size: usize, headroom: usize) -> RecvBatch {
        // SAFETY: zeroed sockaddr_storage / iovec / mmsghdr are valid
        // values (null pointers, zero lengths), all rewritten before use.
        let mut b = unsafe {
            RecvBatch {
                arena: BytesMut::new(),
                arena_size: 0,
                arena_base: 0,
                cut: 0,
                headroom,
                msg_bytes: size,
                slot: size,
                next_slot: size,
                layout: None,
                msg_of: Vec::with_capacity(n),
                addrs: vec![zeroed(); n],
                cmsgs: vec![[0; CMSG_BUF / 8]; n],
                iovs: Vec::new(),
                hdrs: vec![zeroed(); n],
                got: Vec::with_capacity(n),
            }
        };
        b.prepare();
        b
    }

    /// Slots per message.
    fn slots(&self) -> usize {
        self.msg_bytes.div_ceil(self.slot).max(1)
    }

    /// Bytes of a slot and its headroom.
    fn stride(&self) -> usize {
        self.headroom + self.slot
    }

    /// Where message `i`'s first slot starts in the arena (its headroom).
    fn msg_at(&self, i: usize) -> usize {
        i * self.slots() * self.stride()
    }

    /// The arena whole again for the next read (the memory of the last
    /// if every frame cut from it is gone, else new zeroed memory), and
    /// the iovecs pointing into it.
    fn prepare(&mut self) {
        let n = self.hdrs.len();
        self.slot = self.next_slot;
        let size = n * self.slots() * self.stride();
        self.arena.clear();
        self.cut = 0;
        let reclaimed =
            size <= self.arena_size && self.arena.try_reclaim(size) && self.arena.as_ptr() as usize == self.arena_base;
        if reclaimed {
            // SAFETY: the arena is its first memory again, made zeroed
            // (`BytesMut::zeroed`) and written only with bytes since: all
            // `size` (<= `arena_size`) bytes are initialized.
            unsafe { self.arena.set_len(size) };
        } else {
            self.arena = BytesMut::zeroed(size);
            self.arena_size = size;
            self.arena_base = self.arena.as_ptr() as usize;
        }
        let base = self.arena.as_mut_ptr() as usize;
        if self.layout != Some((base, self.slot)) {
            let slots = self.slots();
            self.iovs.clear();
            for i in 0..n {
                for k in 0..slots {
                    let at = self.msg_at(i) + k * self.stride() + self.headroom;
                    self.iovs.push(libc::iovec {
                        iov_base: (base + at) as *mut libc::c_void,
                        iov_len: self.slot,
                    });
                }
            }
            self.layout = Some((base, self.slot));
        }
        let slots = self.slots();
        for i in 0..n {
            // SAFETY: plain data.
            let mut h: libc::msghdr = unsafe { zeroed() };
            h.msg_name = &mut self.addrs[i] as *mut _ as *mut libc::c_void;
            h.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_iov = &mut self.iovs[i * slots];
            h.msg_iovlen = slots as _;
            h.msg_control = self.cmsgs[i].as_mut_ptr() as *mut libc::c_void;
            h.msg_controllen = CMSG_BUF as _;
            self.hdrs[i] = libc::mmsghdr { msg_hdr: h, msg_len: 0 };
        }
    }

    /// The next read's slots for runs of `segment`-byte datagrams, if
    /// that size is worth a slot each.
    fn learn_segment(&mut self, segment: usize) {
        if (MIN_SLOT_SEGMENT..self.msg_bytes).contains(&segment) {
            self.next_slot = segment;
        }
    }

    /// The bytes of received datagram `i` of a batch whose messages are
    /// one slot each (made by [`RecvBatch::new`] and never handed a run
    /// of [`MIN_SLOT_SEGMENT`]-byte segments or more; else its first
    /// slot's).
    pub fn datagram(&self, i: usize) -> &[u8] {
        let at = self.msg_at(self.msg_of[i]) + self.headroom - self.cut;
        &self.arena[at..at + self.got[i].len.min(self.slot)]
    }

    /// Where in the arena byte `at` of message `i` was read, and how many
    /// bytes of its slot follow it.
    fn place(&self, i: usize, at: usize) -> (usize, usize) {
        let (k, within) = (at / self.slot, at % self.slot);
        (
            self.msg_at(self.msg_of[i]) + k * self.stride() + self.headroom + within,
            self.slot - within,
        )
    }

    /// The `len` bytes at `at` of message `i` if they fell in one slot
    /// (not yet cut); else copy them out ([`RecvBatch::copy_datagram`]).
    pub fn datagram_at(&self, i: usize, at: usize, len: usize) -> Option<&[u8]> {
        let (from, room) = self.place(i, at);
        let from = from.checked_sub(self.cut)?;
        (len <= room).then(|| &self.arena[from..from + len])
    }

    /// Copy the `len` bytes at `at` of message `i` into `out` (cleared
    /// first), wherever they fell.
    pub fn copy_datagram(&self, i: usize, at: usize, len: usize, out: &mut Vec<u8>) {
        out.clear();
        let mut done = 0;
        while done < len {
            let (from, room) = self.place(i, at + done);
            let n = room.min(len - done);
            let from = from - self.cut;
            out.extend_from_slice(&self.arena[from..from + n]);
            done += n;
        }
    }

    /// The datagram of `len` bytes at `at` of message `i` (the batch's
    /// datagrams taken in order) with its headroom before it, cut from the
    /// arena without a copy, if it starts a slot and fits it; `None` if it
    /// does not (copy it out) or the batch has no headroom.
    pub fn frame(&mut self, i: usize, at: usize, len: usize) -> Option<BytesMut> {
        let (from, room) = self.place(i, at);
        if self.headroom == 0 || !at.is_multiple_of(self.slot) || len > room {
            return None;
        }
        let start = from - self.headroom;
        if start < self.cut {
            return None;
        }
        self.arena.advance(start - self.cut);
        let frame = self.arena.split_to(self.headroom + len);
        self.cut = start + self.headroom + len;
        Some(frame)
    }

    /// Bytes free before each datagram read in place.
    pub fn headroom(&self) -> usize {
        self.headroom
    }
}

/// The traffic class and the `UDP_GRO` segment size (0: none) in the
/// control messages of a received `msg`.
///
/// # Safety
/// `msg`'s control buffer holds what the kernel wrote for it.
unsafe fn cmsgs_of(msg: &libc::msghdr) -> (u8, usize) {
    let mut tos = 0u8;
    let mut segment = 0;
    // SAFETY: the caller's promise: walking the kernel's control messages.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            let l = (*c).cmsg_level;
            let t = (*c).cmsg_type;
            if l == libc::IPPROTO_IP && t == libc::IP_TOS {
                tos = *libc::CMSG_DATA(c);
            } else if l == libc::IPPROTO_IPV6 && t == libc::IPV6_TCLASS {
                tos = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const i32) as u8;
            } else if l == SOL_UDP && t == UDP_GRO {
                segment = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const i32).max(0) as usize;
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    (tos, segment)
}

impl UdpPort {
    /// Bind `addr`, non-blocking, reporting the traffic class of what
    /// arrives.
    pub fn bind(addr: SocketAddr) -> io::Result<UdpPort> {
        let sock = UdpSocket::bind(addr)?;
        sock.set_nonblocking(true)?;
        let fd = sock.as_raw_fd();
        let v6 = addr.is_ipv6();
        // Don't fragment, and let the kernel number the datagrams as a
        // NIC does (IPv4 identification 0 with DF): the ICRC covers the
        // identification, so a kernel-chosen one would make every packet
        // on the wire fail its ICRC. A datagram above the path MTU is
        // refused (`SendError::TooBig`) instead of fragmented. For the
        // same reason no socket is ever connected, though it would spare
        // the kernel a route lookup per send: Linux numbers a connected
        // socket's identifications from a counter of its own, DF or not
        // (docs/benchmarks.md, "Tried and not kept: connected EV sockets").
        if v6 {
            setsockopt_int(fd, libc::IPPROTO_IPV6, libc::IPV6_RECVTCLASS, 1)?;
            setsockopt_int(fd, libc::IPPROTO_IPV6, libc::IPV6_MTU_DISCOVER, libc::IPV6_PMTUDISC_DO)?;
            // The flow label carries EV bits 31-16 (`EvMode`): not a hash
            // of the kernel's choosing.
            setsockopt_int(fd, libc::IPPROTO_IPV6, IPV6_AUTOFLOWLABEL, 0)?;
        } else {
            setsockopt_int(fd, libc::IPPROTO_IP, libc::IP_RECVTOS, 1)?;
            setsockopt_int(fd, libc::IPPROTO_IP, libc::IP_MTU_DISCOVER, libc::IP_PMTUDISC_DO)?;
        }
        Ok(UdpPort {
            sock,
            v6,
            no_tos_cmsg: AtomicBool::new(false),
            gso: AtomicBool::new(false),
            gro: false,
        })
    }

    /// Send runs of equal-size datagrams to a loopback destination as one
    /// segmentation-offload send (`UDP_SEGMENT`): the kernel splits them
    /// into the same datagrams. Only to loopback: the kernel numbers the
    /// segments' IPv4 identifications 0, 1, 2, ..., which the ICRC covers,
    /// and on loopback no wire carries them (the peer's socket gets
    /// either the run whole, with `UDP_GRO`, or the datagrams).
    pub fn enable_gso(&self, on: bool) {
        self.gso.store(on, Ordering::Relaxed);
    }

    /// Ask the kernel to hand runs of datagrams from one sender up as one
    /// buffer with their segment size (`UDP_GRO`, Linux 5.0 on); false
    /// if it does not. [`UdpPort::recv_batch`] splits them.
    pub fn enable_gro(&mut self) -> bool {
        self.gro = setsockopt_int(self.sock.as_raw_fd(), SOL_UDP, UDP_GRO, 1).is_ok();
        self.gro
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.sock.local_addr()
    }

    /// Ask for a receive buffer of `bytes` (`SO_RCVBUF`; the kernel caps
    /// the request at `net.core.rmem_max`) and return what the socket got,
    /// in the kernel's accounting: every queued datagram is charged its
    /// buffer's true size, about twice its length for a 4 KiB datagram, and
    /// the kernel doubles the request to allow for that.
    pub fn set_receive_buffer(&self, bytes: usize) -> io::Result<usize> {
        let fd = self.sock.as_raw_fd();
        setsockopt_int(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            bytes.min(i32::MAX as usize) as i32,
        )?;
        let mut v: i32 = 0;
        let mut len = size_of::<i32>() as libc::socklen_t;
        // SAFETY: a valid fd and an int of the stated size.
        let r = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                &mut v as *mut i32 as *mut libc::c_void,
                &mut len,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(v.max(0) as usize)
    }

    /// Datagrams the kernel dropped on arrival because this socket's
    /// receive buffer was full (`SK_MEMINFO_DROPS`; the host-wide sum is
    /// `RcvbufErrors` in /proc/net/snmp). `None` if the kernel does not say.
    pub fn receive_drops(&self) -> Option<u64> {
        let mut m = [0u32; libc::SK_MEMINFO_DROPS as usize + 1];
        let mut len = std::mem::size_of_val(&m) as libc::socklen_t;
        // SAFETY: a valid fd and a u32 array of the stated size (the kernel
        // writes at most `len` bytes and says how many).
        let r = unsafe {
            libc::getsockopt(
                self.sock.as_raw_fd(),
                libc::SOL_SOCKET,
                SO_MEMINFO,
                m.as_mut_ptr() as *mut libc::c_void,
                &mut len,
            )
        };
        (r == 0 && len as usize >= std::mem::size_of_val(&m)).then(|| u64::from(m[libc::SK_MEMINFO_DROPS as usize]))
    }

    /// Send `payload` to `to` with traffic class `tos`.
    pub fn send(&self, payload: &[u8], to: SocketAddr, tos: u8) -> Result<(), SendError> {
        let (mut ss, sslen) = sockaddr_of(to);
        let mut iov = libc::iovec {
            iov_base: payload.as_ptr() as *mut libc::c_void,
            iov_len: payload.len(),
        };
        let mut cbuf = [0u64; CMSG_BUF / 8];
        // SAFETY: msghdr is plain data; every pointer set below outlives
        // the call.
        let mut msg: libc::msghdr = unsafe { zeroed() };
        msg.msg_name = &mut ss as *mut _ as *mut libc::c_void;
        msg.msg_namelen = sslen;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if !self.no_tos_cmsg.load(Ordering::Relaxed) {
            let (level, ty) = if self.v6 {
                (libc::IPPROTO_IPV6, libc::IPV6_TCLASS)
            } else {
                (libc::IPPROTO_IP, libc::IP_TOS)
            };
            msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
            // SAFETY: CMSG_SPACE of an int fits CMSG_BUF.
            msg.msg_controllen = unsafe { libc::CMSG_SPACE(size_of::<i32>() as u32) } as _;
            // SAFETY: the control buffer holds one header and an int.
            unsafe {
                let c = libc::CMSG_FIRSTHDR(&msg);
                (*c).cmsg_level = level;
                (*c).cmsg_type = ty;
                (*c).cmsg_len = libc::CMSG_LEN(size_of::<i32>() as u32) as _;
                std::ptr::write_unaligned(libc::CMSG_DATA(c) as *mut i32, i32::from(tos));
            }
        }
        loop {
            // SAFETY: msg is fully initialised above.
            let r = unsafe { libc::sendmsg(self.sock.as_raw_fd(), &msg, 0) };
            if r >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::ENOBUFS) => return Err(SendError::Busy),
                Some(libc::EMSGSIZE) => return Err(SendError::TooBig),
                Some(libc::EINTR) => continue,
                Some(libc::EINVAL) if !msg.msg_control.is_null() => {
                    // Perhaps this kernel takes no class per packet: try
                    // without, and stop sending it only if that works.
                    msg.msg_control = std::ptr::null_mut();
                    msg.msg_controllen = 0;
                    // SAFETY: as above.
                    if unsafe { libc::sendmsg(self.sock.as_raw_fd(), &msg, 0) } >= 0 {
                        self.no_tos_cmsg.store(true, Ordering::Relaxed);
                        return Ok(());
                    }
                    return Err(SendError::Io(io::Error::last_os_error()));
                }
                _ => return Err(SendError::Io(e)),
            }
        }
    }

    /// Send `batch`'s datagrams `batch.order[from..to]` (all of them
    /// leaving from this socket) with as few system calls as the kernel
    /// takes: one `sendmmsg` per up to [`SEND_BATCH`] datagrams. Each
    /// datagram stays its own UDP datagram with its own destination and
    /// traffic class. What was refused is counted in `out`.
    pub fn send_batch(&self, batch: &mut SendBatch, from: usize, to: usize, out: &mut SendOutcome) {
        let SendBatch {
            items, order, scratch, ..
        } = batch;
        let SendScratch {
            hdrs,
            iovs,
            addrs,
            cbufs,
        } = scratch;
        let mut at = from;
        while at < to {
            let n = (to - at).min(SEND_BATCH);
            // Datagrams of message `m`: `segs[m]`.
            let mut segs = [0usize; SEND_BATCH];
            let tos_cmsg = !self.no_tos_cmsg.load(Ordering::Relaxed);
            let gso = self.gso.load(Ordering::Relaxed);
            let mut msgs = 0;
            let mut k = 0;
            // `iovec`s written so far.
            let mut v = 0;
            while k < n {
                let d = &items[order[at + k]];
                let len = d.len();
                // A run: the same destination and class, every datagram
                // but the last of the first one's length.
                let mut run = 1;
                if gso && d.to.ip().is_loopback() {
                    let mut bytes = len;
                    while k + run < n && run < GSO_MAX_SEGMENTS {
                        let e = &items[order[at + k + run]];
                        let l = e.len();
                        if e.to != d.to || e.tos != d.tos || l > len || bytes + l > GSO_MAX_BYTES {
                            break;
                        }
                        bytes += l;
                        run += 1;
                        if l < len {
                            break;
                        }
                    }
                }
                let first_iov = v;
                for j in 0..run {
                    let e = &items[order[at + k + j]];
                    for part in e.parts().into_iter().filter(|p| !p.is_empty()) {
                        iovs[v] = libc::iovec {
                            iov_base: part.as_ptr() as *mut libc::c_void,
                            iov_len: part.len(),
                        };
                        v += 1;
                    }
                }
                let (ss, sslen) = sockaddr_of(d.to);
                addrs[msgs] = ss;
                // SAFETY: plain data; every field a send reads is set here
                // or left zero.
                hdrs[msgs] = unsafe { zeroed() };
                // `CMSG_NXTHDR` reads the header after the one written.
                cbufs[msgs] = [0; CMSG_BUF / 8];
                let msg = &mut hdrs[msgs].msg_hdr;
                msg.msg_name = &mut addrs[msgs] as *mut _ as *mut libc::c_void;
                msg.msg_namelen = sslen;
                msg.msg_iov = &mut iovs[first_iov];
                msg.msg_iovlen = (v - first_iov) as _;
                // SAFETY: the control buffer holds both messages.
                unsafe {
                    self.put_cmsgs(
                        msg,
                        &mut cbufs[msgs],
                        tos_cmsg.then_some(d.tos),
                        (run > 1).then_some(len),
                    )
                };
                segs[msgs] = run;
                msgs += 1;
                k += run;
            }
            // SAFETY: `msgs` headers pointing at live buffers of the stated sizes.
            let r = unsafe { libc::sendmmsg(self.sock.as_raw_fd(), hdrs.as_mut_ptr(), msgs as libc::c_uint, 0) };
            if r > 0 {
                let done: usize = segs[..r as usize].iter().sum();
                out.sent += done as u64;
                at += done;
                continue;
            }
            // The first message was refused.
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            if segs[0] > 1 && !matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::ENOBUFS)) {
                // This kernel or route takes no segmentation offload:
                // datagram by datagram from now on.
                self.gso.store(false, Ordering::Relaxed);
                out.gso_refused += 1;
                continue;
            }
            // Say why, send its first datagram alone (the single send's
            // fallbacks included) and go on after it.
            let d = &items[order[at]];
            let whole;
            let datagram = if d.payload.is_empty() {
                &d.frame[d.payload_at..]
            } else {
                whole = d.parts().concat();
                &whole[..]
            };
            match self.send(datagram, d.to, d.tos) {
                Ok(()) => out.sent += 1,
                Err(SendError::Busy) => out.busy += 1,
                Err(SendError::TooBig) => out.too_big += 1,
                Err(SendError::Io(_)) => out.errors += 1,
            }
            at += 1;
        }
    }

    /// Write `msg`'s control messages into `cbuf`: the traffic class
    /// `tos`, and the segment size `gso` of an offloaded run.
    ///
    /// # Safety
    /// `cbuf` outlives every use of `msg`.
    unsafe fn put_cmsgs(
        &self,
        msg: &mut libc::msghdr,
        cbuf: &mut [u64; CMSG_BUF / 8],
        tos: Option<u8>,
        gso: Option<usize>,
    ) {
        if tos.is_none() && gso.is_none() {
            return;
        }
        msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
        // SAFETY: CMSG_SPACE of an int and of a u16 fit CMSG_BUF together;
        // each header is written where CMSG_FIRSTHDR / CMSG_NXTHDR put it
        // inside the buffer.
        unsafe {
            let int = libc::CMSG_SPACE(size_of::<i32>() as u32) as usize;
            let short = libc::CMSG_SPACE(size_of::<u16>() as u32) as usize;
            msg.msg_controllen = (tos.map_or(0, |_| int) + gso.map_or(0, |_| short)) as _;
            let mut c = libc::CMSG_FIRSTHDR(msg);
            if let Some(tos) = tos {
                let (level, ty) = if self.v6 {
                    (libc::IPPROTO_IPV6, libc::IPV6_TCLASS)
                } else {
                    (libc::IPPROTO_IP, libc::IP_TOS)
                };
                (*c).cmsg_level = level;
                (*c).cmsg_type = ty;
                (*c).cmsg_len = libc::CMSG_LEN(size_of::<i32>() as u32) as _;
                std::ptr::write_unaligned(libc::CMSG_DATA(c) as *mut i32, i32::from(tos));
                c = libc::CMSG_NXTHDR(msg, c);
            }
            if let Some(size) = gso {
                (*c).cmsg_level = SOL_UDP;
                (*c).cmsg_type = UDP_SEGMENT;
                (*c).cmsg_len = libc::CMSG_LEN(size_of::<u16>() as u32) as _;
                std::ptr::write_unaligned(libc::CMSG_DATA(c) as *mut u16, size as u16);
            }
        }
    }

    /// Receive one datagram into `buf` if one is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<Received>> {
        // SAFETY: zeroed storage, filled by the kernel.
        let mut ss: libc::sockaddr_storage = unsafe { zeroed() };
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr() as *mut libc::c_void,
            iov_len: buf.len(),
        };
        let mut cbuf = [0u64; CMSG_BUF / 8];
        // SAFETY: as in `send`.
        let mut msg: libc::msghdr = unsafe { zeroed() };
        msg.msg_name = &mut ss as *mut _ as *mut libc::c_void;
        msg.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = CMSG_BUF as _;
        let n = loop {
            // SAFETY: msg points at live buffers of the stated sizes.
            let r = unsafe { libc::recvmsg(self.sock.as_raw_fd(), &mut msg, 0) };
            if r >= 0 {
                break r as usize;
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EAGAIN) => return Ok(None),
                Some(libc::EINTR) => continue,
                _ => return Err(e),
            }
        };
        if msg.msg_flags & libc::MSG_TRUNC != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "datagram larger than the buffer",
            ));
        }
        // SAFETY: the kernel wrote the control messages of `msg`.
        let (tos, _) = unsafe { cmsgs_of(&msg) };
        let from = addr_of(&ss).ok_or_else(|| io::Error::other("datagram from an unknown address family"))?;
        Ok(Some(Received {
            len: n.min(buf.len()),
            from,
            tos,
            truncated: false,
            segment: 0,
        }))
    }

    /// Receive up to `batch.len()` waiting datagrams with one system call
    /// (`recvmmsg`); they are `batch.got`, in arrival order. A datagram
    /// larger than its buffer is flagged `truncated`.
    pub fn recv_batch(&self, batch: &mut RecvBatch) -> io::Result<usize> {
        batch.got.clear();
        batch.msg_of.clear();
        batch.prepare();
        let n = batch.hdrs.len();
        let got = loop {
            // SAFETY: every header points at live buffers of the stated
            // sizes, owned by `batch` for the duration of the call.
            let r = unsafe {
                libc::recvmmsg(
                    self.sock.as_raw_fd(),
                    batch.hdrs.as_mut_ptr(),
                    n as libc::c_uint,
                    libc::MSG_DONTWAIT,
                    std::ptr::null_mut(),
                )
            };
            if r >= 0 {
                break r as usize;
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EAGAIN) => return Ok(0),
                Some(libc::EINTR) => continue,
                _ => return Err(e),
            }
        };
        let capacity = batch.slots() * batch.slot;
        let mut segment_seen = 0;
        for i in 0..got {
            let h = &batch.hdrs[i];
            // SAFETY: the kernel filled this header's control buffer.
            let (tos, segment) = unsafe { cmsgs_of(&h.msg_hdr) };
            let Some(from) = addr_of(&batch.addrs[i]) else { continue };
            segment_seen = segment_seen.max(segment);
            batch.msg_of.push(i);
            batch.got.push(Received {
                len: (h.msg_len as usize).min(capacity),
                from,
                tos,
                truncated: h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0,
                segment,
            });
        }
        // The next read's slots (this batch's are read with the ones it
        // was laid out with).
        batch.learn_segment(segment_seen);
        Ok(got)
    }

    /// The socket's descriptor (to wait on without holding the port).
    pub fn raw_fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }
}

/// Wait until `fd` or `wake` is readable, or `timeout` passed; a wake-up
/// is consumed. Returns whether either was readable (with a zero
/// `timeout`: a look that does not sleep).
pub fn wait_readable(fd: RawFd, wake: &Wake, timeout: Duration) -> bool {
    let mut p = [
        libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: wake.fd,
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: two valid pollfds, a valid timespec, no signal mask.
    let ready = unsafe { libc::ppoll(p.as_mut_ptr(), 2, &ts, std::ptr::null()) } > 0;
    if p[1].revents & libc::POLLIN != 0 {
        wake.drain();
    }
    ready
}

/// An eventfd that ends a [`wait_readable`] early (a doorbell armed a
/// timer earlier than the one the NIC's thread sleeps towards).
#[derive(Debug)]
pub struct Wake {
    fd: RawFd,
}

impl Wake {
    pub fn new() -> io::Result<Wake> {
        // SAFETY: plain system call.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Wake { fd })
    }

    /// Wake the waiter (or its next wait).
    pub fn wake(&self) {
        let one = 1u64;
        // SAFETY: 8 bytes from a live u64 to our eventfd; a full counter
        // (EAGAIN) already wakes the waiter.
        unsafe { libc::write(self.fd, &one as *const u64 as *const libc::c_void, 8) };
    }

    fn drain(&self) {
        let mut v = 0u64;
        // SAFETY: 8 bytes into a live u64; non-blocking.
        unsafe { libc::read(self.fd, &mut v as *mut u64 as *mut libc::c_void, 8) };
    }
}

impl Drop for Wake {
    fn drop(&mut self) {
        // SAFETY: our own descriptor, closed once.
        unsafe { libc::close(self.fd) };
    }
}

/// Sockets a NIC binds for EVs at most (each holds a file descriptor).
pub const MAX_EV_SOCKETS: usize = 4096;

/// A NIC's sockets: its own on `ip:port` (receives everything; sends what
/// has no socket of its own) and, when `per_ev`, one per EV value bound to
/// `ip:EV`, so each EV leaves from its own UDP source port as on a card.
/// Only EVs [allowed](EvSockets::allow) get a socket: an acknowledgement
/// goes back on the EV its packet came on, and a peer (or anyone on the
/// network) choosing source ports must not make the NIC open sockets.
#[derive(Debug)]
pub struct EvSockets {
    pub own: UdpPort,
    ip: std::net::IpAddr,
    port: u16,
    per_ev: bool,
    /// EV ports that may have a socket; `None`: any.
    allowed: Option<rustc_hash::FxHashSet<u16>>,
    /// `None`: the EV's port could not be bound (in use, privileged).
    evs: rustc_hash::FxHashMap<u16, Option<UdpPort>>,
    /// EV ports that could not be bound, or were beyond
    /// [`MAX_EV_SOCKETS`].
    pub unavailable: u64,
    /// Sockets send with segmentation offload ([`UdpPort::enable_gso`]).
    gso: bool,
}

impl EvSockets {
    /// The NIC's sockets; with `gso` runs of datagrams to loopback leave
    /// with segmentation offload ([`UdpPort::enable_gso`]).
    pub fn bind(ip: std::net::IpAddr, port: u16, per_ev: bool, gso: bool) -> io::Result<EvSockets> {
        let own = UdpPort::bind(SocketAddr::new(ip, port))?;
        own.enable_gso(gso);
        Ok(EvSockets {
            own,
            gso,
            ip,
            port,
            per_ev,
            allowed: Some(Default::default()),
            evs: Default::default(),
            unavailable: 0,
        })
    }

    /// EV port `ev_port` may leave from a socket of its own (an EV a QP
    /// was configured with).
    pub fn allow(&mut self, ev_port: u16) {
        if let Some(a) = &mut self.allowed {
            a.insert(ev_port);
        }
    }

    /// Every EV port may (a card's MAC bridge: its EVs are the card's
    /// own, whatever they are).
    pub fn allow_all(&mut self) {
        self.allowed = None;
    }

    /// Sockets bound to EV ports.
    pub fn bound(&self) -> usize {
        self.evs.values().filter(|s| s.is_some()).count()
    }

    /// The socket a packet on EV port `ev_port` leaves from (bound on
    /// first use) and its source port.
    pub fn for_ev(&mut self, ev_port: u16) -> (&UdpPort, u16) {
        let allowed = self.allowed.as_ref().is_none_or(|a| a.contains(&ev_port));
        if !self.per_ev || ev_port == self.port || !allowed {
            return (&self.own, self.port);
        }
        if !self.evs.contains_key(&ev_port) && self.evs.len() >= MAX_EV_SOCKETS {
            self.unavailable += 1;
            return (&self.own, self.port);
        }
        let (ip, unavailable, gso) = (self.ip, &mut self.unavailable, self.gso);
        let s = self
            .evs
            .entry(ev_port)
            .or_insert_with(|| match UdpPort::bind(SocketAddr::new(ip, ev_port)) {
                Ok(s) => {
                    s.enable_gso(gso);
                    Some(s)
                }
                Err(_) => {
                    *unavailable += 1;
                    None
                }
            });
        match s {
            Some(s) => (s, ev_port),
            None => (&self.own, self.port),
        }
    }
}

impl EvSockets {
    /// The socket bound to source port `src` ([`EvSockets::for_ev`]
    /// returned it), else the NIC's own.
    pub fn by_port(&self, src: u16) -> &UdpPort {
        match self.evs.get(&src) {
            Some(Some(s)) if src != self.port => s,
            _ => &self.own,
        }
    }
}

/// The MTU of the interface that holds `ip`: the one with that address,
/// else the one whose subnet holds it (127.0.19.1 is `lo`'s); `None` if
/// none does. From `getifaddrs`, then `/sys/class/net/<name>/mtu`.
pub fn interface_mtu(ip: std::net::IpAddr) -> Option<usize> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list`, freed below.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return None;
    }
    let target = ip_bits(ip);
    // (name, prefix length matched): the longest match wins; an exact
    // address is the longest.
    let mut best: Option<(String, u32)> = None;
    let mut at = list;
    while !at.is_null() {
        // SAFETY: a node of the list getifaddrs made.
        let ifa = unsafe { &*at };
        at = ifa.ifa_next;
        // SAFETY: sockaddrs of the node, read by their family.
        let (Some(addr), Some(mask)) = (unsafe { sockaddr_ip(ifa.ifa_addr) }, unsafe {
            sockaddr_ip(ifa.ifa_netmask)
        }) else {
            continue;
        };
        if addr.is_ipv4() != ip.is_ipv4() {
            continue;
        }
        let (a, m) = (ip_bits(addr), ip_bits(mask));
        let prefix = if a == target { u32::MAX } else { m.count_ones() };
        if a & m == target & m && best.as_ref().is_none_or(|(_, p)| prefix > *p) {
            // SAFETY: a NUL-terminated name while the list lives.
            let name = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) }
                .to_string_lossy()
                .into_owned();
            best = Some((name, prefix));
        }
    }
    // SAFETY: the list getifaddrs made, freed once.
    unsafe { libc::freeifaddrs(list) };
    std::fs::read_to_string(format!("/sys/class/net/{}/mtu", best?.0))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// An address as bits (IPv4 in the low 32).
fn ip_bits(ip: std::net::IpAddr) -> u128 {
    match ip {
        std::net::IpAddr::V4(v) => u128::from(u32::from(v)),
        std::net::IpAddr::V6(v) => u128::from(v),
    }
}

/// The address in a `sockaddr` of family AF_INET or AF_INET6.
///
/// # Safety
/// `sa` is null or points to a sockaddr of the size its family says.
unsafe fn sockaddr_ip(sa: *const libc::sockaddr) -> Option<std::net::IpAddr> {
    if sa.is_null() {
        return None;
    }
    // SAFETY: the caller's contract.
    unsafe {
        match i32::from((*sa).sa_family) {
            libc::AF_INET => {
                let a = &*(sa as *const libc::sockaddr_in);
                Some(std::net::IpAddr::V4(Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr))))
            }
            libc::AF_INET6 => {
                let a = &*(sa as *const libc::sockaddr_in6);
                Some(std::net::IpAddr::V6(Ipv6Addr::from(a.sin6_addr.s6_addr)))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// Bytes of IPv4 outer headers (Ethernet, IP, UDP): the room a soft
    /// NIC on an IPv4 address leaves.
    const HEADROOM: usize = 14 + 20 + 8;

    /// Send `lens` as one run (segmentation offload) from `tx` to `to`,
    /// datagram `i` filled with `fill + i`.
    fn send_run(tx: &UdpPort, to: SocketAddr, lens: &[usize], fill: u8) {
        let mut batch = SendBatch::default();
        for (i, &len) in lens.iter().enumerate() {
            let o = batch.push();
            o.frame.resize(len, fill + i as u8);
            o.payload_at = 0;
            o.to = to;
            o.tos = 0;
            o.src_port = 0;
        }
        let runs = batch.runs();
        assert_eq!(runs.len(), 1);
        let mut out = SendOutcome::default();
        tx.send_batch(&mut batch, runs[0].1, runs[0].2, &mut out);
        assert_eq!(out.sent, lens.len() as u64, "{out:?}");
    }

    /// Read until `want` datagrams arrived; each as (in place, bytes, the
    /// frame if in place).
    fn read(rx: &UdpPort, rb: &mut RecvBatch, want: usize) -> Vec<(bool, Vec<u8>, Option<BytesMut>)> {
        let mut got = Vec::new();
        let start = Instant::now();
        while got.len() < want {
            assert!(start.elapsed() < Duration::from_secs(10), "datagrams lost on loopback");
            rx.recv_batch(rb).unwrap();
            for i in 0..rb.got.len() {
                let r = rb.got[i];
                for (at, len) in r.datagrams() {
                    match rb.frame(i, at, len) {
                        Some(f) => {
                            assert_eq!(f.len(), HEADROOM + len, "the room, then the datagram");
                            got.push((true, f[HEADROOM..].to_vec(), Some(f)));
                        }
                        None => {
                            let mut v = Vec::new();
                            rb.copy_datagram(i, at, len, &mut v);
                            if let Some(d) = rb.datagram_at(i, at, len) {
                                assert_eq!(d, &v[..], "one slot's bytes as they were read");
                            }
                            got.push((false, v, None));
                        }
                    }
                }
            }
        }
        got
    }

    /// Datagrams whose payload lies outside their frame (sent from host
    /// memory with an `iovec` of its own) arrive as the frame with the
    /// payload at its place: in a run of one size (segmentation offload),
    /// beside datagrams held whole, and the payloads are let go once sent.
    #[test]
    fn payloads_gathered_from_where_they_lie_arrive_in_place() {
        let tx = UdpPort::bind("127.0.44.103:0".parse().unwrap()).unwrap();
        tx.enable_gso(true);
        let mut rx = UdpPort::bind("127.0.44.104:0".parse().unwrap()).unwrap();
        rx.enable_gro();
        let to = rx.local_addr().unwrap();
        let payload = Bytes::from(vec![0x5A; 3 * 1024]);
        let mut batch = SendBatch::default();
        let mut want = Vec::new();
        for i in 0..4u8 {
            let o = batch.push();
            // Room, 30 header bytes, then (after the payload) 4 trailer bytes.
            o.frame.extend_from_slice(&[0xEE; HEADROOM]);
            o.frame.extend_from_slice(&[i; 30]);
            o.frame.extend_from_slice(&[0xC0 | i; 4]);
            o.payload_at = HEADROOM;
            o.split = HEADROOM + 30;
            o.payload = payload.slice(usize::from(i) * 8..usize::from(i) * 8 + 1024);
            o.to = to;
            let mut d = vec![i; 30];
            d.extend_from_slice(&o.payload);
            d.extend_from_slice(&[0xC0 | i; 4]);
            want.push(d);
        }
        // One held whole, shorter: ends the run.
        let o = batch.push();
        o.frame.extend_from_slice(&[0x77; 100]);
        o.to = to;
        want.push(vec![0x77; 100]);
        let runs = batch.runs();
        let mut out = SendOutcome::default();
        tx.send_batch(&mut batch, runs[0].1, runs[0].2, &mut out);
        assert_eq!(out.sent, 5, "{out:?}");
        batch.clear();
        let got = read(&rx, &mut RecvBatch::framed(8, 65_536, HEADROOM), want.len());
        assert_eq!(got.into_iter().map(|g| g.1).collect::<Vec<_>>(), want);
        assert!(payload.is_unique(), "the batch let the payloads go");
    }

    /// A run handed up whole (`UDP_GRO`) is read in place once its segment
    /// size is known: the first read lays a message out as one slot (only
    /// the run's first datagram starts one; the others are copied out,
    /// intact), the next as one slot per segment, each datagram after its
    /// room, the last and shorter one too. Frames dropped, the next read
    /// uses the same memory; a frame held keeps its bytes while the next
    /// read lands elsewhere.
    #[test]
    fn runs_are_read_in_place_with_room_for_the_outer_headers() {
        let tx = UdpPort::bind("127.0.44.101:0".parse().unwrap()).unwrap();
        tx.enable_gso(true);
        let mut rx = UdpPort::bind("127.0.44.102:0".parse().unwrap()).unwrap();
        let has_gro = rx.enable_gro();
        let to = rx.local_addr().unwrap();
        let mut rb = RecvBatch::framed(4, 65_536, HEADROOM);
        let lens = [1500, 1500, 1500, 700];
        let want =
            |fill: u8| -> Vec<Vec<u8>> { lens.iter().enumerate().map(|(i, &l)| vec![fill + i as u8; l]).collect() };

        send_run(&tx, to, &lens, 10);
        let first = read(&rx, &mut rb, lens.len());
        assert_eq!(first.iter().map(|g| g.1.clone()).collect::<Vec<_>>(), want(10));
        assert!(first[0].0, "a message's first datagram starts its slot");
        if has_gro {
            assert!(
                first[1..].iter().all(|g| !g.0),
                "the rest of a run in a one-slot message is copied out"
            );
        }
        drop(first);

        send_run(&tx, to, &lens, 20);
        let second = read(&rx, &mut rb, lens.len());
        assert_eq!(second.iter().map(|g| g.1.clone()).collect::<Vec<_>>(), want(20));
        assert!(
            second.iter().all(|g| g.0),
            "every datagram in place once the segment size is known"
        );
        let mut held = second.into_iter().next().unwrap().2.unwrap();
        held[..HEADROOM].fill(0xEE);

        // One frame held: the next read lands in new memory.
        send_run(&tx, to, &lens, 30);
        let third = read(&rx, &mut rb, lens.len());
        assert_eq!(third.iter().map(|g| g.1.clone()).collect::<Vec<_>>(), want(30));
        assert_eq!(
            &held[HEADROOM..],
            &vec![20; 1500][..],
            "a held frame is not overwritten"
        );
        assert_eq!(&held[..HEADROOM], &[0xEE; HEADROOM][..]);
        drop((held, third));

        // Nothing held: the same memory again (the arena made at the
        // third read).
        send_run(&tx, to, &lens, 40);
        let fourth = read(&rx, &mut rb, lens.len());
        let fourth_addrs: Vec<usize> = fourth.iter().map(|g| g.2.as_ref().unwrap().as_ptr() as usize).collect();
        drop(fourth);
        send_run(&tx, to, &lens, 50);
        let fifth = read(&rx, &mut rb, lens.len());
        assert_eq!(fifth.iter().map(|g| g.1.clone()).collect::<Vec<_>>(), want(50));
        let fifth_addrs: Vec<usize> = fifth.iter().map(|g| g.2.as_ref().unwrap().as_ptr() as usize).collect();
        assert_eq!(
            fifth_addrs, fourth_addrs,
            "the arena's memory is reused once its frames are gone"
        );
        drop(fifth);

        // Segments larger than the slots: each spans two, copied out
        // whole; the next read has slots of their size.
        let larger = [2000, 2000, 900];
        send_run(&tx, to, &larger, 60);
        let sixth = read(&rx, &mut rb, larger.len());
        let want_larger: Vec<Vec<u8>> = larger.iter().enumerate().map(|(i, &l)| vec![60 + i as u8; l]).collect();
        assert_eq!(sixth.iter().map(|g| g.1.clone()).collect::<Vec<_>>(), want_larger);
        if has_gro {
            assert!(!sixth[0].0 && !sixth[1].0, "a datagram over two slots is not in place");
        }
        drop(sixth);
        send_run(&tx, to, &larger, 70);
        let seventh = read(&rx, &mut rb, larger.len());
        assert!(seventh.iter().all(|g| g.0), "in place again at the new size");
    }
}
