//! The device layer: what the rest of the driver needs from a NIC.
//!
//! A [`Device`] is BAR0 (32/64-bit MMIO), DMA-able memory ([`DmaBuffer`]:
//! a host pointer and the IO virtual address the card uses for it) and,
//! optionally, interrupts. Backends: [`NullDevice`] (accepts everything,
//! for benchmarks), [`crate::mock::MockDevice`] (a software register file
//! for tests), [`crate::vfio::VfioDevice`] (a real card). A co-simulation
//! backend (the verilated `MrcCore` serving its DMA from the buffers
//! handed out here) is one more implementation of the same trait:
//! [`Device::progress`] is where it advances the model.

use std::any::Any;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Errors of the device layer.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error("DMA allocation of {len} bytes failed: {why}")]
    DmaAlloc { len: usize, why: String },
    #[error("DMA access [{offset:#x}, +{len}) outside a buffer of {size} bytes")]
    DmaRange { offset: usize, len: usize, size: usize },
    #[error("{0} is not supported by this device")]
    Unsupported(&'static str),
    #[error("device reset failed: {0}")]
    Reset(String),
    /// A queue of the device is full for now (retry later).
    #[error("{0} is full")]
    Busy(&'static str),
}

/// A NIC as the driver sees it.
///
/// MMIO offsets are byte offsets into BAR0. An access outside the BAR or
/// not aligned to its width reads all-ones and writes nothing (what a
/// PCIe read of a missing device returns), so a garbage offset from a
/// broken card can never turn into a wild host access; discovery treats
/// all-ones as "device gone".
pub trait Device: Send + Sync {
    /// Human-readable identity (PCI address, "null", "mock").
    fn name(&self) -> String;
    /// Size of BAR0 in bytes.
    fn bar_len(&self) -> u64;
    fn read32(&self, offset: u64) -> u32;
    fn write32(&self, offset: u64, value: u32);
    /// 64-bit read as two 32-bit reads, low word first (the CSR port is
    /// 32 bits wide; a backend with a native 64-bit path may override).
    fn read64(&self, offset: u64) -> u64 {
        let lo = self.read32(offset);
        let hi = self.read32(offset.wrapping_add(4));
        u64::from(hi) << 32 | u64::from(lo)
    }
    /// 64-bit write as two 32-bit writes, low word first.
    fn write64(&self, offset: u64, value: u64) {
        self.write32(offset, value as u32);
        self.write32(offset.wrapping_add(4), (value >> 32) as u32);
    }
    /// Memory the card can read and write, zeroed, aligned to 4 KiB.
    fn alloc_dma(&self, len: usize) -> Result<DmaBuffer, DeviceError>;
    /// Make `len` bytes of the program's own memory at `ptr` reachable by
    /// the card (what `ibv_reg_mr` does with ordinary memory): a
    /// [`DmaBuffer`] over it, with the IOVA the card uses. A device that
    /// cannot (no IOMMU mapping of user memory written yet) says so.
    ///
    /// # Safety
    /// `ptr..ptr + len` must stay valid, readable and writable memory for
    /// as long as the returned buffer (or a clone) lives; the card may
    /// write it at any time meanwhile.
    unsafe fn map_host_memory(&self, _ptr: NonNull<u8>, _len: usize) -> Result<DmaBuffer, DeviceError> {
        Err(DeviceError::Unsupported("mapping program memory"))
    }
    /// Interrupt vectors the device offers (the MRC core has none: it is
    /// polled).
    fn interrupt_vectors(&self) -> u32 {
        0
    }
    /// Wait for an interrupt on `vector`; `Ok(false)` on timeout.
    fn wait_interrupt(&self, _vector: u32, _timeout: Duration) -> Result<bool, DeviceError> {
        Err(DeviceError::Unsupported("interrupts"))
    }
    /// Send an MRC 1.0 endpoint request of the host's own (QPN 0x2): an
    /// EV probe or a Port Status Update; the request id its result will
    /// carry ([`Device::endpoint_result`]). The card's host interface has
    /// no such operation; the soft NIC has.
    fn endpoint_request(&self, _req: EndpointRequest) -> Result<u16, DeviceError> {
        Err(DeviceError::Unsupported("endpoint requests of the host's own"))
    }
    /// The oldest result of this device's endpoint requests not yet taken
    /// (an answer, or `TimedOut`).
    fn endpoint_result(&self) -> Option<EndpointResult> {
        None
    }
    /// Run NSCC with `params` (`None`: the fixed window of the QP's CC
    /// row) on QP `qpn` from its next send context on. Only a device that
    /// runs NSCC has it (the soft NIC); the card's CC gate is a fixed
    /// window: `Unsupported`, and the driver keeps that window.
    fn set_qp_nscc(&self, _qpn: u32, _params: Option<crate::verbs::NsccParams>) -> Result<(), DeviceError> {
        Err(DeviceError::Unsupported("NSCC"))
    }
    /// Take NIC port `port` (0-based: MRC 1.0's port status mask bit, the
    /// verbs port number less one) administratively down or up again. Down:
    /// the NIC tells every peer it has QPs with (a Port Status Update with
    /// the new mask), then sends and takes nothing on the port, and its
    /// QPs' EVs on it are DENIED; up: the reverse (docs/host.md, "Ports").
    /// The card's host interface has no port control: `Unsupported`.
    fn set_port_up(&self, _port: u8, _up: bool) -> Result<(), DeviceError> {
        Err(DeviceError::Unsupported("taking a port down"))
    }
    /// Whether port `port` is administratively up; `None` for a port the
    /// device does not have. A device without port control has one port,
    /// always up.
    fn port_up(&self, port: u8) -> Option<bool> {
        (port == 0).then_some(true)
    }
    /// Reset the function (FLR on a real card).
    fn reset(&self) -> Result<(), DeviceError> {
        Ok(())
    }
    /// Give a simulated device time to run (a co-simulation steps its
    /// model here); called by pollers that found nothing. Real hardware:
    /// nothing.
    fn progress(&self) {}
    /// Whether [`Device::progress`] does anything (pollers skip the call
    /// otherwise: an empty poll is on the hot path).
    fn needs_progress(&self) -> bool {
        false
    }
    /// What the device adds to a QP's number on the wire: the BTH of the
    /// driver's QP `n` names `n + wire_qpn_offset()`, and a peer names it
    /// so (`RtrAttr::dest_qp`, `QueuePair::wire_qpn`). A card: 0. A soft
    /// NIC speaking MRC 1.0: 0x10, clear of the endpoint's QPN 0x2.
    fn wire_qpn_offset(&self) -> u32 {
        0
    }
    /// The program is about to wait for a completion's interrupt (it armed
    /// a CQ's notification) instead of polling: a device that its polls
    /// run (the soft NIC) has its own thread run it from now on, not once
    /// the polls have stopped for a while. Real hardware: nothing.
    fn program_waits(&self) {}
}

/// The host memory a device reaches, by IOVA: live buffers as weak
/// handles (a dropped buffer is no longer reachable). One memory may be
/// mapped more than once (a program's buffer registered twice, a region
/// registered inside another), so entries are keyed by IOVA and a
/// sequence number and a lookup looks for a buffer that contains the whole
/// range among those starting within the longest buffer's length below
/// it.
#[derive(Default)]
pub struct IovaMap {
    buffers: std::collections::BTreeMap<(u64, u64), WeakDmaBuffer>,
    seq: u64,
    /// The longest buffer ever added: none starting further below an
    /// address can contain it.
    longest: u64,
}

impl IovaMap {
    /// Make `b` reachable at its IOVA (entries of dropped buffers are
    /// pruned here).
    pub fn add(&mut self, b: &DmaBuffer) {
        self.buffers.retain(|_, w| w.upgrade().is_some());
        self.seq += 1;
        self.longest = self.longest.max(b.len() as u64);
        self.buffers.insert((b.iova(), self.seq), b.downgrade());
    }

    /// A live buffer holding all of `[iova, iova + len)` (the newest such
    /// registration) and the offset of `iova` in it.
    pub fn find(&self, iova: u64, len: usize) -> Option<(DmaBuffer, usize)> {
        let lowest = iova.saturating_sub(self.longest);
        self.buffers
            .range((lowest, 0)..=(iova, u64::MAX))
            .rev()
            .filter_map(|(_, w)| w.upgrade())
            .find(|b| b.contains_iova(iova, len as u64))
            .map(|b| {
                let off = (iova - b.iova()) as usize;
                (b, off)
            })
    }

    /// Buffers still alive.
    pub fn live(&self) -> usize {
        self.buffers.values().filter(|w| w.upgrade().is_some()).count()
    }
}

#[cfg(test)]
mod iova_map_tests {
    use super::*;

    /// Another mapping of `len` bytes of `b`'s memory from `off`.
    fn view(b: &DmaBuffer, off: usize, len: usize) -> DmaBuffer {
        // SAFETY: inside `b`, which the test keeps alive longer.
        unsafe {
            DmaBuffer::from_raw(
                NonNull::new(b.host_ptr().add(off)).unwrap(),
                len,
                b.iova() + off as u64,
                Box::new(HostBacking),
            )
        }
    }

    #[test]
    fn nested_and_repeated_mappings_are_all_found() {
        let iovas = IovaAllocator::new();
        let big = heap_dma(&iovas, 1 << 16).unwrap();
        let mut m = IovaMap::default();
        m.add(&big);
        // Nine regions inside the big one, each starting below the range
        // looked up but too short to hold it.
        let inner: Vec<DmaBuffer> = (0..9)
            .map(|i| {
                let sub = view(&big, 0x100 * i, 0x80);
                m.add(&sub);
                sub
            })
            .collect();
        let (b, off) = m.find(big.iova() + 0x1000, 0x100).expect("the big buffer holds it");
        assert_eq!((b.iova(), off), (big.iova(), 0x1000));
        // A second mapping of the same memory, dropped: the first is found.
        let again = view(&big, 0, 1 << 16);
        m.add(&again);
        drop(again);
        assert_eq!(m.find(big.iova() + 8, 8).map(|(b, _)| b.iova()), Some(big.iova()));
        drop(inner);
        assert_eq!(m.live(), 1);
    }
}

/// What an endpoint request came to ([`Device::endpoint_result`]), and
/// the model's time type its durations are in.
pub use proto::model::endpoint::EndpointResult;
pub use proto::time::Duration as ModelDuration;

/// An endpoint request of the host's own ([`Device::endpoint_request`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndpointRequest {
    /// Probe EV `ev`, leaving on port `port`, to the NIC at `peer`: the
    /// result carries the round trip and the peer's service time. `dscp`:
    /// the request's DSCP (0..=63; `None`: the NIC's own).
    EvProbe {
        peer: std::net::IpAddr,
        ev: u32,
        port: u8,
        dscp: Option<u8>,
    },
    /// Tell the NIC at `peer` which of our ports are up, on EV `ev`, with
    /// DSCP `dscp`.
    PortStatusUpdate {
        peer: std::net::IpAddr,
        ev: u32,
        dscp: Option<u8>,
    },
}

/// The largest DSCP (6 bits).
pub const MAX_DSCP: u8 = 63;

/// Keeps the memory behind a [`DmaBuffer`] alive and mapped; dropping it
/// unmaps (IOMMU) and frees.
pub trait DmaBacking: Any + Send + Sync {}

struct DmaInner {
    ptr: NonNull<u8>,
    len: usize,
    iova: u64,
    _backing: Box<dyn DmaBacking>,
}

// SAFETY: the pointer is owned by `_backing` for the lifetime of the
// inner value; all accesses go through bounds-checked copies or volatile
// reads, never through Rust references (the device may write at any time).
unsafe impl Send for DmaInner {}
unsafe impl Sync for DmaInner {}

/// DMA-able memory: a host pointer and its IO virtual address. Cheap to
/// clone (shared); freed when the last clone is dropped.
#[derive(Clone)]
pub struct DmaBuffer {
    inner: Arc<DmaInner>,
}

impl std::fmt::Debug for DmaBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DmaBuffer {{ iova: {:#x}, len: {} }}",
            self.inner.iova, self.inner.len
        )
    }
}

impl DmaBuffer {
    /// Wrap memory a backend owns. `ptr` must stay valid for `len` bytes
    /// for as long as `backing` lives.
    ///
    /// # Safety
    /// `ptr..ptr + len` must be readable and writable memory owned by
    /// `backing`, not referenced by any Rust reference.
    pub unsafe fn from_raw(ptr: NonNull<u8>, len: usize, iova: u64, backing: Box<dyn DmaBacking>) -> DmaBuffer {
        DmaBuffer {
            inner: Arc::new(DmaInner {
                ptr,
                len,
                iova,
                _backing: backing,
            }),
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.inner.len
    }

    pub fn is_empty(&self) -> bool {
        self.inner.len == 0
    }

    /// IO virtual address of byte 0 (what the card is given).
    #[inline]
    pub fn iova(&self) -> u64 {
        self.inner.iova
    }

    /// Host address of byte 0 (for zero-copy users; raw: the device may
    /// write behind it).
    #[inline]
    /// Handles on this buffer alive now (clones; weak ones not counted):
    /// more than its owner's one means someone still uses the memory, as
    /// the soft NIC's WRITEs not yet complete do (they read it in place).
    pub fn handles(&self) -> usize {
        Arc::strong_count(&self.inner)
    }

    pub fn host_ptr(&self) -> *mut u8 {
        self.inner.ptr.as_ptr()
    }

    #[inline]
    fn check(&self, offset: usize, len: usize) -> Result<(), DeviceError> {
        match offset.checked_add(len) {
            Some(end) if end <= self.inner.len => Ok(()),
            _ => Err(DeviceError::DmaRange {
                offset,
                len,
                size: self.inner.len,
            }),
        }
    }

    /// Copy `data` into the buffer at `offset`.
    #[inline]
    pub fn write(&self, offset: usize, data: &[u8]) -> Result<(), DeviceError> {
        self.check(offset, data.len())?;
        // SAFETY: bounds checked; raw copy, no reference into DMA memory.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.inner.ptr.as_ptr().add(offset), data.len()) };
        Ok(())
    }

    /// Copy bytes at `offset` out of the buffer.
    #[inline]
    pub fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), DeviceError> {
        self.check(offset, out.len())?;
        // SAFETY: bounds checked; raw copy.
        unsafe { std::ptr::copy_nonoverlapping(self.inner.ptr.as_ptr().add(offset), out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// One byte, read volatile (a ring's phase byte, written by the card).
    #[inline]
    pub fn read_u8_volatile(&self, offset: usize) -> Result<u8, DeviceError> {
        self.check(offset, 1)?;
        // SAFETY: bounds checked.
        Ok(unsafe { std::ptr::read_volatile(self.inner.ptr.as_ptr().add(offset)) })
    }

    /// Fill with zeroes.
    pub fn zero(&self) {
        // SAFETY: the whole buffer, owned by the backing.
        unsafe { std::ptr::write_bytes(self.inner.ptr.as_ptr(), 0, self.inner.len) };
    }

    /// Whether `[iova, iova + len)` lies in this buffer.
    pub fn contains_iova(&self, iova: u64, len: u64) -> bool {
        iova >= self.inner.iova
            && iova
                .checked_add(len)
                .is_some_and(|e| e <= self.inner.iova + self.inner.len as u64)
    }

    /// A handle that does not keep the memory alive (a device's registry
    /// of buffers by IOVA: a dropped buffer must not stay reachable).
    pub fn downgrade(&self) -> WeakDmaBuffer {
        WeakDmaBuffer {
            inner: Arc::downgrade(&self.inner),
        }
    }

    /// The same memory (for identity checks).
    pub fn same_memory(&self, other: &DmaBuffer) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

/// See [`DmaBuffer::downgrade`].
#[derive(Clone)]
pub struct WeakDmaBuffer {
    inner: std::sync::Weak<DmaInner>,
}

impl WeakDmaBuffer {
    /// The buffer, if it is still alive.
    pub fn upgrade(&self) -> Option<DmaBuffer> {
        self.inner.upgrade().map(|inner| DmaBuffer { inner })
    }
}

/// The backing of memory the program owns ([`Device::map_host_memory`]):
/// nothing to free.
pub struct HostBacking;

impl DmaBacking for HostBacking {}

/// Page-aligned zeroed heap memory: the DMA memory of devices without an
/// IOMMU (null, mock, co-simulation).
pub struct HeapBacking {
    ptr: NonNull<u8>,
    layout: std::alloc::Layout,
}

// SAFETY: plain owned heap memory.
unsafe impl Send for HeapBacking {}
unsafe impl Sync for HeapBacking {}
impl DmaBacking for HeapBacking {}

impl Drop for HeapBacking {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `heap_dma`.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// Hands out IOVAs for heap DMA memory. They start far from any host
/// address a test would use, so a driver bug that gives the card a host
/// pointer instead of an IOVA is caught.
#[derive(Debug)]
pub struct IovaAllocator {
    next: AtomicU64,
}

impl IovaAllocator {
    pub const BASE: u64 = 0x10_0000_0000;

    pub fn new() -> IovaAllocator {
        IovaAllocator {
            next: AtomicU64::new(Self::BASE),
        }
    }

    /// `len` bytes at an address aligned to `align` (a power of two);
    /// addresses are never reused (a stale IOVA in a descriptor never
    /// names a newer buffer).
    pub fn take(&self, len: usize, align: u64) -> u64 {
        let span = (len as u64).max(1).div_ceil(align) * align;
        let mut cur = self.next.load(Ordering::Relaxed);
        loop {
            let start = cur.div_ceil(align) * align;
            match self
                .next
                .compare_exchange(cur, start + span, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return start,
                Err(now) => cur = now,
            }
        }
    }
}

impl Default for IovaAllocator {
    fn default() -> Self {
        Self::new()
    }
}

/// Zeroed, 4 KiB-aligned heap memory with an IOVA from `iovas`.
pub fn heap_dma(iovas: &IovaAllocator, len: usize) -> Result<DmaBuffer, DeviceError> {
    const ALIGN: usize = 4096;
    let size = len.max(1).div_ceil(ALIGN) * ALIGN;
    let layout = std::alloc::Layout::from_size_align(size, ALIGN).map_err(|e| DeviceError::DmaAlloc {
        len,
        why: e.to_string(),
    })?;
    // SAFETY: non-zero size.
    let raw = unsafe { std::alloc::alloc_zeroed(layout) };
    let ptr = NonNull::new(raw).ok_or(DeviceError::DmaAlloc {
        len,
        why: "out of memory".into(),
    })?;
    let iova = iovas.take(size, ALIGN as u64);
    // SAFETY: `ptr` is `size >= len` bytes owned by the backing.
    Ok(unsafe { DmaBuffer::from_raw(ptr, len, iova, Box::new(HeapBacking { ptr, layout })) })
}

/// A device that accepts every write and reads 0: the cost of the driver
/// alone (benchmarks). Discovery fails on it (there is no block list).
#[derive(Debug, Default)]
pub struct NullDevice {
    iovas: IovaAllocator,
}

impl NullDevice {
    pub fn new() -> NullDevice {
        NullDevice::default()
    }
}

impl Device for NullDevice {
    fn name(&self) -> String {
        "null".into()
    }
    fn bar_len(&self) -> u64 {
        1 << contract::regmap::ADDR_BITS
    }
    #[inline]
    fn read32(&self, _offset: u64) -> u32 {
        0
    }
    #[inline]
    fn write32(&self, _offset: u64, _value: u32) {}
    fn alloc_dma(&self, len: usize) -> Result<DmaBuffer, DeviceError> {
        heap_dma(&self.iovas, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_dma_is_zeroed_aligned_and_bounds_checked() {
        let iovas = IovaAllocator::new();
        let a = heap_dma(&iovas, 100).unwrap();
        let b = heap_dma(&iovas, 5000).unwrap();
        assert_eq!(a.iova() % 4096, 0);
        assert_eq!(b.iova() % 4096, 0);
        assert!(b.iova() >= a.iova() + 4096, "IOVAs do not overlap");
        assert_eq!(a.host_ptr() as usize % 4096, 0);
        let mut out = [1u8; 100];
        a.read(0, &mut out).unwrap();
        assert!(out.iter().all(|&x| x == 0));
        a.write(98, &[7, 8]).unwrap();
        assert_eq!(a.read_u8_volatile(99).unwrap(), 8);
        assert!(matches!(
            a.write(99, &[1, 2]),
            Err(DeviceError::DmaRange {
                offset: 99,
                len: 2,
                size: 100
            })
        ));
        assert!(a.read(usize::MAX, &mut [0u8; 2]).is_err(), "overflowing offset");
        assert!(a.contains_iova(a.iova() + 10, 90));
        assert!(!a.contains_iova(a.iova() + 10, 91));
        assert!(!a.contains_iova(u64::MAX, 2));
        let c = a.clone();
        assert!(c.same_memory(&a) && !c.same_memory(&b));
        let w = b.downgrade();
        assert!(w.upgrade().is_some_and(|x| x.same_memory(&b)));
        drop(b);
        assert!(w.upgrade().is_none(), "a weak handle does not keep the memory");
    }

    #[test]
    fn null_device_reads_zero_and_splits_64_bit_accesses() {
        let d = NullDevice::new();
        d.write64(0x10, u64::MAX);
        assert_eq!(d.read64(0x10), 0);
        assert!(matches!(
            d.wait_interrupt(0, Duration::from_millis(1)),
            Err(DeviceError::Unsupported(_))
        ));
    }
}
