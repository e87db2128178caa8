//! The driver's co-simulation backend: [`CosimDevice`] implements
//! [`driver::Device`] over a verilated `MrcCore` ([`Nic`]).
//!
//! * BAR0 MMIO is AXI-Lite. A write is posted: with
//!   [`CosimOptions::mmio_write_cycles`] above 0 it returns at once and
//!   reaches the NIC's [`tb::axil::AxilMaster`] that many cycles later
//!   (the link's one-way latency; writes stay in order, as PCIe keeps
//!   posted writes); with 0 it is issued at once and the clock runs until
//!   it has completed. A read first waits for the posted writes before it
//!   (a PCIe read does not pass them), then runs
//!   [`CosimOptions::mmio_read_cycles`] (a PCIe round trip, 1 us by
//!   default), then the access. An access outside the BAR, misaligned, that
//!   the core answers with an error response, or that does not complete
//!   within [`CosimOptions::csr_timeout_cycles`] reads all-ones (what the
//!   host sees of a broken or absent card).
//! * DMA memory is the driver's own: `alloc_dma` hands out heap buffers
//!   (`driver::device::heap_dma`, IOVAs from 64 GiB up) and registers a
//!   weak handle of each in the NIC's [`DriverMemory`], which the NIC's
//!   [`tb::dma::DmaServer`] serves from. The core's DMA reads and
//!   writes go through the buffer's host pointer: the very bytes the
//!   driver writes descriptors into and polls CQEs from, never a copy.
//!   An access outside every live buffer is an IOMMU fault: the server
//!   records it (`DmaServer::faults` / `errors`), serves zeroes for a
//!   read and drops a write.
//! * Time advances only when the driver touches the device: each MMIO
//!   access runs the clock until it completes, and [`Device::progress`]
//!   (called by pollers that found nothing) runs
//!   [`CosimOptions::progress_cycles`] cycles. One cycle is 99/32 ns of
//!   simulated time (the CMAC clock, 322 MHz: `docs/hw/core.md`).
//!
//! Several NICs can share one clock ([`CosimDevice::pair`]): every cycle
//! steps all of them and then the [`Interconnect`] between them (a
//! fabric moving frames from one NIC's MAC TX to the other's MAC RX), so
//! an MMIO access or a poll on either card advances the whole system.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use driver::device::{heap_dma, DeviceError, DmaBuffer, IovaAllocator};
use driver::Device;
use verilated::{Built, VerilatedError};

use crate::nic::{Nic, Stalls};
use tb::axil::AxilOp;
use tb::dma::{DmaAccess, DmaFault, DmaMemory};

/// Simulated nanoseconds per core clock cycle, as a fraction (99/32 ns:
/// the 322.27 MHz CMAC clock, the same conversion as the core's `now`).
pub const NS_PER_CYCLE: (u64, u64) = (99, 32);

/// Simulated time of `cycles` core cycles, in ns.
pub fn cycles_to_ns(cycles: u64) -> f64 {
    cycles as f64 * NS_PER_CYCLE.0 as f64 / NS_PER_CYCLE.1 as f64
}

/// The driver's DMA buffers by IOVA, as the core's DMA reaches them
/// (what an IOMMU's page table is to a real card).
///
/// Holds weak handles: a buffer the driver dropped is no longer
/// reachable, and an access to it faults. An access must lie inside one
/// buffer.
#[derive(Default)]
pub struct DriverMemory {
    /// One memory may be mapped more than once (a program's buffer
    /// registered twice, or inside another registration).
    buffers: driver::device::IovaMap,
    /// Count the core's writes per byte address (`writes`), for tests of
    /// exactly-once placement. Off by default: it costs a map update per
    /// byte.
    pub count_writes: bool,
    /// Times each address was written by the core (when `count_writes`).
    pub writes: BTreeMap<u64, u32>,
}

impl DriverMemory {
    /// Make `buf` reachable by the core at its IOVA. Entries of buffers
    /// dropped since are pruned here.
    pub fn register(&mut self, buf: &DmaBuffer) {
        self.buffers.add(buf);
    }

    /// Live buffers reachable by the core.
    pub fn live_buffers(&self) -> usize {
        self.buffers.live()
    }

    /// The live buffer holding all of `[iova, iova + len)`.
    pub fn find(&self, iova: u64, len: u64) -> Option<DmaBuffer> {
        self.buffers.find(iova, len as usize).map(|(b, _)| b)
    }

    /// Times byte `iova` was written by the core (needs `count_writes`).
    pub fn write_count(&self, iova: u64) -> u32 {
        self.writes.get(&iova).copied().unwrap_or(0)
    }
}

impl DmaMemory for DriverMemory {
    fn dma_read(&self, addr: u64, out: &mut [u8]) -> Result<(), DmaFault> {
        let fault = DmaFault {
            kind: DmaAccess::Read,
            addr,
            len: out.len() as u64,
        };
        let buf = self.find(addr, out.len() as u64).ok_or(fault)?;
        buf.read((addr - buf.iova()) as usize, out).map_err(|_| fault)
    }

    fn dma_write(&mut self, addr: u64, data: &[u8]) -> Result<(), DmaFault> {
        let fault = DmaFault {
            kind: DmaAccess::Write,
            addr,
            len: data.len() as u64,
        };
        let buf = self.find(addr, data.len() as u64).ok_or(fault)?;
        buf.write((addr - buf.iova()) as usize, data).map_err(|_| fault)?;
        if self.count_writes {
            for k in 0..data.len() as u64 {
                *self.writes.entry(addr + k).or_insert(0) += 1;
            }
        }
        Ok(())
    }
}

/// Moves frames between the NICs of a bench every cycle (after the NICs
/// were stepped): a fabric between their MAC ports.
pub trait Interconnect: Send {
    fn step(&mut self, cycle: u64, nics: &mut [Nic<DriverMemory>]);
    /// For reading a concrete interconnect's statistics back.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// [`crate::fabric::Fabric`] between NIC 0 (side A) and NIC 1 (side B):
/// frames from each NIC's MAC TX go through their direction's paths to
/// the other's MAC RX, each MAC taking frames at its link's pace. The
/// fabric's clock starts at `origin` (the bench cycle it was installed
/// at), so its blackhole times count from there.
pub struct FabricInterconnect {
    pub fabric: crate::fabric::Fabric,
    pub origin: u64,
}

impl Interconnect for FabricInterconnect {
    fn step(&mut self, cycle: u64, nics: &mut [Nic<DriverMemory>]) {
        let t = cycle.saturating_sub(self.origin);
        let (a, b) = nics.split_at_mut(1);
        let (a, b) = (&mut a[0], &mut b[0]);
        for f in a.tx.frames.drain(..) {
            self.fabric.ab.send(t, f);
        }
        for f in b.tx.frames.drain(..) {
            self.fabric.ba.send(t, f);
        }
        self.fabric.ab.deliver(t, &mut b.rx);
        self.fabric.ba.deliver(t, &mut a.rx);
        // Each MAC takes frames at its link's pace in the next cycle
        // (`FabricLink::mac_full`, as `System::step`).
        a.tx.hold = self.fabric.ab.mac_full(t + 1);
        b.tx.hold = self.fabric.ba.mac_full(t + 1);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Settings of a co-simulated device.
#[derive(Clone, Copy, Debug)]
pub struct CosimOptions {
    /// Stalls and latencies around the core (DMA, MAC, AXI-Lite).
    pub stalls: Stalls,
    pub seed: u64,
    /// Cycles one [`Device::progress`] call runs.
    pub progress_cycles: u64,
    /// An MMIO access not done after this many cycles reads all-ones.
    pub csr_timeout_cycles: u64,
    /// Cycles an MMIO read spends on the way before it reaches the core's
    /// AXI-Lite port: a PCIe read round trip is about 1 us (322 cycles);
    /// the AXI-Lite access itself adds a few cycles.
    pub mmio_read_cycles: u64,
    /// Cycles from the driver's MMIO write to its arrival at the core's
    /// AXI-Lite port (posted: the driver does not wait). 0: the write is
    /// issued at once and the driver's call runs the clock until the
    /// AXI-Lite write has completed (the block and protocol tests' bench).
    /// `mrc perf --host gen3x16` sets the link's posted latency
    /// (`tb::pcie::PcieConfig::posted_latency_ps`).
    pub mmio_write_cycles: u64,
    /// See [`DriverMemory::count_writes`].
    pub count_writes: bool,
}

impl Default for CosimOptions {
    fn default() -> Self {
        CosimOptions {
            stalls: Stalls::default(),
            seed: 1,
            progress_cycles: 32,
            csr_timeout_cycles: 10_000,
            mmio_read_cycles: 320,
            mmio_write_cycles: 0,
            count_writes: false,
        }
    }
}

/// The NICs, their interconnect and the shared clock.
pub struct Bench {
    pub nics: Vec<Nic<DriverMemory>>,
    pub link: Option<Box<dyn Interconnect>>,
    /// Cycles run since the bench was made.
    pub cycle: u64,
    opts: CosimOptions,
    /// MMIO writes on their way to a NIC, oldest first (one link's writes
    /// arrive in order; the latency is the same for all).
    posted: VecDeque<PostedMmio>,
}

/// A posted MMIO write: due at the NIC's AXI-Lite port at cycle `due`.
#[derive(Clone, Copy, Debug)]
struct PostedMmio {
    due: u64,
    port: usize,
    addr: u16,
    data: u32,
}

impl Bench {
    /// One cycle of every NIC, then of the interconnect.
    pub fn step(&mut self) {
        while self.posted.front().is_some_and(|w| w.due <= self.cycle) {
            let Some(w) = self.posted.pop_front() else { break };
            self.nics[w.port].axil.write(w.addr, w.data);
        }
        for nic in &mut self.nics {
            nic.step();
        }
        if self.opts.mmio_write_cycles > 0 {
            // A posted write has no response for anyone to read.
            for nic in &mut self.nics {
                nic.axil.results.retain(|r| matches!(r.op, AxilOp::Read { .. }));
            }
        }
        if let Some(link) = &mut self.link {
            link.step(self.cycle, &mut self.nics);
        }
        self.cycle += 1;
    }

    pub fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step();
        }
    }

    /// Post an MMIO write to NIC `port` (with `mmio_write_cycles` above
    /// 0): it reaches the AXI-Lite port that many cycles from now.
    fn post(&mut self, port: usize, addr: u16, data: u32) {
        self.posted.push_back(PostedMmio {
            due: self.cycle + self.opts.mmio_write_cycles,
            port,
            addr,
            data,
        });
    }

    /// One CSR access of NIC `port`, the clock run until it completes.
    /// A read first lets every posted write arrive and complete.
    fn csr(&mut self, port: usize, op: AxilOp) -> Option<u32> {
        if matches!(op, AxilOp::Read { .. }) {
            let mut n = 0;
            while !self.posted.is_empty() || !self.nics.iter().all(|nic| nic.axil.idle()) {
                if n == self.opts.csr_timeout_cycles + self.opts.mmio_write_cycles {
                    return None;
                }
                self.step();
                n += 1;
            }
            self.run(self.opts.mmio_read_cycles);
        }
        self.nics[port].axil.push(op);
        let mut n = 0;
        while !self.nics[port].axil.idle() {
            if n == self.opts.csr_timeout_cycles {
                return None;
            }
            self.step();
            n += 1;
        }
        let r = self.nics[port].axil.results.pop_back()?;
        self.nics[port].axil.results.clear();
        (r.resp == 0).then_some(r.data)
    }
}

/// Cycles a free-running clock runs per hold of the bench
/// ([`CosimDevice::run_free`]): long enough to amortise the lock, short
/// enough (a few hundred microseconds of wall time) that the driver's
/// accesses wait little.
const FREE_RUN_CYCLES: u64 = 256;

/// The bench behind a mutex. The verilated models hold raw pointers to
/// their C++ instances, so the bench is not `Send` by itself; it is only
/// ever touched with the mutex held (one thread at a time), and a
/// single-threaded Verilator model has no affinity to the thread that
/// created it.
struct BenchCell(Bench);

// SAFETY: see the type's comment: access is serialised by the mutex.
unsafe impl Send for BenchCell {}

/// One NIC of a co-simulated bench as a [`driver::Device`].
pub struct CosimDevice {
    bench: Arc<Mutex<BenchCell>>,
    port: usize,
    iovas: IovaAllocator,
}

fn lock(m: &Mutex<BenchCell>) -> MutexGuard<'_, BenchCell> {
    // A panic while stepping leaves the model in some state of the
    // simulation, not a torn data structure: keep using it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl CosimDevice {
    fn bench(
        built: &Built,
        n: usize,
        opts: &CosimOptions,
        link: Option<Box<dyn Interconnect>>,
    ) -> Result<Arc<Mutex<BenchCell>>, VerilatedError> {
        let mut nics = Vec::with_capacity(n);
        for i in 0..n {
            let mem = DriverMemory {
                count_writes: opts.count_writes,
                ..DriverMemory::default()
            };
            nics.push(Nic::with_memory(
                built,
                opts.stalls,
                opts.seed.wrapping_add(i as u64 * 0x9E37),
                mem,
            )?);
        }
        Ok(Arc::new(Mutex::new(BenchCell(Bench {
            nics,
            link,
            cycle: 0,
            opts: *opts,
            posted: VecDeque::new(),
        }))))
    }

    /// One card on its own (its MAC ports idle unless the core loops
    /// back through its fault-injection stage).
    pub fn single(built: &Built, opts: &CosimOptions) -> Result<CosimDevice, VerilatedError> {
        let bench = Self::bench(built, 1, opts, None)?;
        Ok(CosimDevice {
            bench,
            port: 0,
            iovas: IovaAllocator::new(),
        })
    }

    /// Two cards on one clock, joined by `link` (which may also be
    /// installed later: `with_bench(|b| b.link = ..)`; until then frames
    /// wait in the MAC TX sinks).
    pub fn pair(
        built: &Built,
        opts: &CosimOptions,
        link: Option<Box<dyn Interconnect>>,
    ) -> Result<(CosimDevice, CosimDevice), VerilatedError> {
        let bench = Self::bench(built, 2, opts, link)?;
        Ok((
            CosimDevice {
                bench: bench.clone(),
                port: 0,
                iovas: IovaAllocator::new(),
            },
            CosimDevice {
                bench,
                port: 1,
                iovas: IovaAllocator::new(),
            },
        ))
    }

    /// Which NIC of the bench this is.
    pub fn port(&self) -> usize {
        self.port
    }

    /// Cycles the bench has run.
    pub fn cycles(&self) -> u64 {
        lock(&self.bench).0.cycle
    }

    /// Simulated time, ns.
    pub fn now_ns(&self) -> f64 {
        cycles_to_ns(self.cycles())
    }

    /// Run the bench `cycles` cycles.
    pub fn run(&self, cycles: u64) {
        lock(&self.bench).0.run(cycles);
    }

    /// Look at (or adjust) this device's NIC: DMA errors and faults,
    /// write counts, MAC streams.
    pub fn with_nic<R>(&self, f: impl FnOnce(&mut Nic<DriverMemory>) -> R) -> R {
        f(&mut lock(&self.bench).0.nics[self.port])
    }

    /// The whole bench (both NICs and the interconnect).
    pub fn with_bench<R>(&self, f: impl FnOnce(&mut Bench) -> R) -> R {
        f(&mut lock(&self.bench).0)
    }

    /// Run the bench's clock on a thread of its own, as a card's runs,
    /// [`FREE_RUN_CYCLES`] at a time between other users of the bench
    /// (the driver's MMIO and polls still run it too). The thread ends
    /// when the last handle on the bench goes.
    pub fn run_free(&self) -> std::io::Result<()> {
        let weak = Arc::downgrade(&self.bench);
        std::thread::Builder::new()
            .name("cosim-clock".into())
            .spawn(move || {
                while let Some(bench) = weak.upgrade() {
                    lock(&bench).0.run(FREE_RUN_CYCLES);
                    drop(bench);
                    // Let the driver's thread take the bench between runs.
                    std::thread::yield_now();
                }
            })
            .map(|_| ())
    }

    fn mmio_ok(&self, offset: u64) -> bool {
        offset < self.bar_len() && offset.is_multiple_of(4)
    }
}

impl Device for CosimDevice {
    fn name(&self) -> String {
        format!("cosim:{}", self.port)
    }

    fn bar_len(&self) -> u64 {
        1 << contract::regmap::ADDR_BITS
    }

    fn read32(&self, offset: u64) -> u32 {
        if !self.mmio_ok(offset) {
            return u32::MAX;
        }
        lock(&self.bench)
            .0
            .csr(self.port, AxilOp::Read { addr: offset as u16 })
            .unwrap_or(u32::MAX)
    }

    fn write32(&self, offset: u64, value: u32) {
        if !self.mmio_ok(offset) {
            return;
        }
        let mut bench = lock(&self.bench);
        if bench.0.opts.mmio_write_cycles > 0 {
            bench.0.post(self.port, offset as u16, value);
        } else {
            bench.0.csr(
                self.port,
                AxilOp::Write {
                    addr: offset as u16,
                    data: value,
                },
            );
        }
    }

    fn alloc_dma(&self, len: usize) -> Result<DmaBuffer, DeviceError> {
        let buf = heap_dma(&self.iovas, len)?;
        lock(&self.bench).0.nics[self.port].dma.mem.register(&buf);
        Ok(buf)
    }

    /// The program's memory at its own address as IOVA (as the soft NIC
    /// maps it), so the address a peer is told is the one the core
    /// writes. Program addresses lie far above [`IovaAllocator::BASE`]'s
    /// range, so the two kinds of buffer do not meet.
    unsafe fn map_host_memory(&self, ptr: std::ptr::NonNull<u8>, len: usize) -> Result<DmaBuffer, DeviceError> {
        if len == 0 {
            return Err(DeviceError::DmaAlloc {
                len,
                why: "an empty region".into(),
            });
        }
        // SAFETY: the caller's promise (the trait's contract).
        let b = unsafe { DmaBuffer::from_raw(ptr, len, ptr.as_ptr() as u64, Box::new(driver::device::HostBacking)) };
        lock(&self.bench).0.nics[self.port].dma.mem.register(&b);
        Ok(b)
    }

    fn reset(&self) -> Result<(), DeviceError> {
        Err(DeviceError::Unsupported("reset of the co-simulated core"))
    }

    fn progress(&self) {
        let mut b = lock(&self.bench);
        let n = b.0.opts.progress_cycles;
        b.0.run(n);
    }

    fn needs_progress(&self) -> bool {
        true
    }
}
