//! Host memory and the server of the core's DMA ports (the interface of
//! `docs/hw/README.md`, the `hw::bus` DMA bundles): read requests
//! (`dma_rd$req$*`) answered on the response stream (`dma_rd$rsp$*`)
//! in order, byte `addr` in lane 0 of the first beat; writes
//! (`dma_wr$req$*` then `dma_wr$beat$*` beats up to `dma_wr$beat$last`)
//! applied byte by byte, lane 0 of the first beat at `addr`.
//!
//! The host behind the ports ([`DmaHost`]) is either ideal (a random
//! latency per read, 16 reads outstanding, a beat per cycle each way: the
//! block and protocol tests) or a PCIe link ([`crate::pcie`]: its rate
//! each way, TLP overheads, request size limits, tags, read latency: the
//! performance runs).
//!
//! Protocol violations by the core (a write whose beats do not carry
//! exactly `len` bytes, `last` in the wrong place, a non-contiguous keep
//! mask, data before a request) are recorded in [`DmaServer::errors`], not
//! panicked on, so a test reports all of them.
//!
//! The memory behind the ports is pluggable ([`DmaMemory`]): the sparse
//! [`HostMemory`] of the core tests (every address exists), or the
//! driver's DMA buffers (`cosim::device::DriverMemory`), where an
//! access outside every buffer is an IOMMU fault: recorded in
//! [`DmaServer::faults`] and [`DmaServer::errors`], reads served as zeroes,
//! writes dropped.

use std::collections::{BTreeMap, VecDeque};

use verilated::{Model, PortId, VerilatedError};

use crate::axis::BEAT;
use crate::pcie::{Arrival, PcieConfig, PcieLink};
use crate::rng::Rng;
use crate::stall::Stall;

const PAGE: u64 = 4096;

/// Sparse byte-addressed host memory; unwritten bytes read as zero. Every
/// byte the core writes is also counted, so tests can check that each
/// byte was placed exactly once.
///
/// Reads and writes go page by page (one map lookup per 4 KiB page, not
/// per byte): the DMA server reads a beat on every cycle a read response
/// is pending, and this was most of the testbench's per-cycle cost.
#[derive(Default, Clone, Debug)]
pub struct HostMemory {
    pages: BTreeMap<u64, Box<[u8; PAGE as usize]>>,
    /// Times each address was written by the core (not by `fill`).
    pub writes: WriteCounts,
}

/// The pieces of `[addr, addr + len)` that lie in one page each:
/// `(page number, offset in the page, offset in the range, length)`.
fn page_chunks(addr: u64, len: usize) -> impl Iterator<Item = (u64, usize, usize, usize)> {
    let mut done = 0usize;
    std::iter::from_fn(move || {
        if done >= len {
            return None;
        }
        let a = addr.wrapping_add(done as u64);
        let in_page = (a % PAGE) as usize;
        let n = (PAGE as usize - in_page).min(len - done);
        let chunk = (a / PAGE, in_page, done, n);
        done += n;
        Some(chunk)
    })
}

impl HostMemory {
    pub fn read(&self, addr: u64, out: &mut [u8]) {
        for (page, at, from, n) in page_chunks(addr, out.len()) {
            let dst = &mut out[from..from + n];
            match self.pages.get(&page) {
                Some(p) => dst.copy_from_slice(&p[at..at + n]),
                None => dst.fill(0),
            }
        }
    }
    pub fn read_vec(&self, addr: u64, len: usize) -> Vec<u8> {
        let mut v = vec![0; len];
        self.read(addr, &mut v);
        v
    }
    /// Host-side write (set-up: buffers, descriptors); not counted.
    pub fn fill(&mut self, addr: u64, data: &[u8]) {
        for (page, at, from, n) in page_chunks(addr, data.len()) {
            let p = self.pages.entry(page).or_insert_with(|| Box::new([0; PAGE as usize]));
            p[at..at + n].copy_from_slice(&data[from..from + n]);
        }
    }
    /// A write by the core: stored and counted.
    fn store_counted(&mut self, addr: u64, data: &[u8]) {
        self.fill(addr, data);
        self.writes.count(addr, data.len());
    }
}

/// How many times the core wrote each byte address (addresses never
/// written are absent). Looked up like a map: `writes.get(&addr)`.
/// Stored as one counter page per 4 KiB of host memory, so counting a
/// 64-byte beat is one lookup, not 64 map insertions.
#[derive(Default, Clone, Debug)]
pub struct WriteCounts {
    pages: BTreeMap<u64, Box<[u32; PAGE as usize]>>,
    /// Distinct addresses written at least once.
    distinct: usize,
}

impl WriteCounts {
    /// Times `addr` was written, `None` if never.
    pub fn get(&self, addr: &u64) -> Option<&u32> {
        self.pages
            .get(&(addr / PAGE))
            .map(|p| &p[(addr % PAGE) as usize])
            .filter(|&&n| n > 0)
    }
    pub fn contains_key(&self, addr: &u64) -> bool {
        self.get(addr).is_some()
    }
    /// Distinct addresses written.
    pub fn len(&self) -> usize {
        self.distinct
    }
    pub fn is_empty(&self) -> bool {
        self.distinct == 0
    }
    /// `(address, times written)` of every written address, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.pages.iter().flat_map(|(page, counts)| {
            counts
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(move |(i, &n)| (page * PAGE + i as u64, n))
        })
    }
    fn count(&mut self, addr: u64, len: usize) {
        for (page, at, _, n) in page_chunks(addr, len) {
            let counts = self.pages.entry(page).or_insert_with(|| Box::new([0; PAGE as usize]));
            for c in &mut counts[at..at + n] {
                self.distinct += usize::from(*c == 0);
                *c += 1;
            }
        }
    }
}

/// An access the memory could not serve: no mapping covers
/// `[addr, addr + len)` (what an IOMMU reports as a fault).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("IOMMU fault: {kind} of {len} bytes at {addr:#x} outside every DMA buffer")]
pub struct DmaFault {
    pub kind: DmaAccess,
    pub addr: u64,
    pub len: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DmaAccess {
    Read,
    Write,
}

impl std::fmt::Display for DmaAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DmaAccess::Read => "read",
            DmaAccess::Write => "write",
        })
    }
}

/// What the DMA server reads from and writes to, by bus address.
pub trait DmaMemory {
    /// Fill `out` from `[addr, addr + out.len())`.
    fn dma_read(&self, addr: u64, out: &mut [u8]) -> Result<(), DmaFault>;
    /// Store `data` at `addr` (a write by the core).
    fn dma_write(&mut self, addr: u64, data: &[u8]) -> Result<(), DmaFault>;
}

/// Every address exists; core writes are counted per byte.
impl DmaMemory for HostMemory {
    fn dma_read(&self, addr: u64, out: &mut [u8]) -> Result<(), DmaFault> {
        self.read(addr, out);
        Ok(())
    }
    fn dma_write(&mut self, addr: u64, data: &[u8]) -> Result<(), DmaFault> {
        self.store_counted(addr, data);
        Ok(())
    }
}

/// The DMA ports of a model.
#[derive(Clone, Copy, Debug)]
pub struct DmaPorts {
    pub rd_req_valid: PortId,
    pub rd_req_ready: PortId,
    pub rd_req_addr: PortId,
    pub rd_req_len: PortId,
    pub rd_req_tag: PortId,
    pub rd_rsp_valid: PortId,
    pub rd_rsp_ready: PortId,
    pub rd_rsp_data: PortId,
    pub rd_rsp_keep: PortId,
    pub rd_rsp_last: PortId,
    pub rd_rsp_tag: PortId,
    pub wr_req_valid: PortId,
    pub wr_req_ready: PortId,
    pub wr_req_addr: PortId,
    pub wr_req_len: PortId,
    pub wr_data_valid: PortId,
    pub wr_data_ready: PortId,
    pub wr_data: PortId,
    pub wr_keep: PortId,
    pub wr_last: PortId,
}

impl DmaPorts {
    /// Ports `<prefix>rd_req_valid`, ... (prefix `dma_` on `MrcCore`).
    pub fn find(m: &Model, prefix: &str) -> Result<DmaPorts, VerilatedError> {
        let p = |n: &str| m.port(&format!("{prefix}{n}"));
        Ok(DmaPorts {
            rd_req_valid: p("rd$req$valid")?,
            rd_req_ready: p("rd$req$ready")?,
            rd_req_addr: p("rd$req$addr")?,
            rd_req_len: p("rd$req$len")?,
            rd_req_tag: p("rd$req$tag")?,
            rd_rsp_valid: p("rd$rsp$valid")?,
            rd_rsp_ready: p("rd$rsp$ready")?,
            rd_rsp_data: p("rd$rsp$data")?,
            rd_rsp_keep: p("rd$rsp$keep")?,
            rd_rsp_last: p("rd$rsp$last")?,
            rd_rsp_tag: p("rd$rsp$tag")?,
            wr_req_valid: p("wr$req$valid")?,
            wr_req_ready: p("wr$req$ready")?,
            wr_req_addr: p("wr$req$addr")?,
            wr_req_len: p("wr$req$len")?,
            wr_data_valid: p("wr$beat$valid")?,
            wr_data_ready: p("wr$beat$ready")?,
            wr_data: p("wr$beat$data")?,
            wr_keep: p("wr$beat$keep")?,
            wr_last: p("wr$beat$last")?,
        })
    }
}

/// Stall and latency settings.
#[derive(Clone, Copy, Debug)]
pub struct DmaTiming {
    /// How often each ready / valid of the server is up.
    pub ready: Stall,
    /// What answers the reads and takes the writes.
    pub host: DmaHost,
}

/// Reads the ideal host keeps outstanding.
pub const IDEAL_READS_OUTSTANDING: usize = 16;

/// The host behind the DMA ports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DmaHost {
    /// Each read answered after a latency in cycles drawn uniformly from
    /// the range, [`IDEAL_READS_OUTSTANDING`] at a time; data a beat per
    /// cycle each way.
    Ideal { read_latency: (u64, u64) },
    /// A PCIe link ([`crate::pcie`]); `cycle_ps` converts the core's
    /// cycles to the link's time.
    Pcie { link: PcieConfig, cycle_ps: f64 },
}

impl Default for DmaTiming {
    fn default() -> Self {
        DmaTiming {
            ready: Stall::go_percent(80),
            host: DmaHost::Ideal { read_latency: (8, 40) },
        }
    }
}

#[derive(Clone, Debug)]
struct PendingRead {
    /// Cycle from which the beats are available (the ideal host).
    due: u64,
    /// When each completion arrives (the PCIe host); empty for the ideal
    /// host. A beat is available once the completion holding its last
    /// byte has arrived.
    arrivals: Vec<Arrival>,
    addr: u64,
    len: u64,
    tag: u64,
    beat: u64,
    /// A beat of it faulted (recorded once; the rest is served as zeroes).
    faulted: bool,
}

/// The host behind the ports as it runs: [`DmaHost`] with the PCIe link's
/// state, so that each kind's data lives in one place.
enum HostState {
    Ideal { read_latency: (u64, u64) },
    Pcie { link: PcieLink, cycle_ps: f64 },
}

/// A write beat on its way to host memory (the PCIe host: the link and
/// the posted latency), applied when the link's time reaches `visible_ps`.
#[derive(Clone, Debug)]
struct PostedBeat {
    visible_ps: f64,
    /// The write it belongs to (its number in `writes_begun`), so that a
    /// fault is recorded once per write.
    write: u64,
    addr: u64,
    data: Vec<u8>,
}

#[derive(Clone, Copy, Debug)]
struct PendingWrite {
    addr: u64,
    len: u64,
    done: u64,
    faulted: bool,
}

/// Serves a model's DMA ports from a [`DmaMemory`] ([`HostMemory`] unless
/// built with [`DmaServer::with_memory`]).
pub struct DmaServer<M = HostMemory> {
    ports: DmaPorts,
    pub timing: DmaTiming,
    pub mem: M,
    reads: VecDeque<PendingRead>,
    rd_req_ready: bool,
    rsp_valid: bool,
    wr_req_ready: bool,
    wr_data_ready: bool,
    write: Option<PendingWrite>,
    /// Beats written by the core, not yet in host memory (oldest first;
    /// the PCIe host only).
    posted: VecDeque<PostedBeat>,
    /// Writes taken so far; the last one whose posted beat faulted.
    writes_begun: u64,
    posted_faulted: Option<u64>,
    host: HostState,
    cycle: u64,
    pub reads_done: u64,
    pub writes_done: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Protocol violations and IOMMU faults seen, in order.
    pub errors: Vec<String>,
    /// IOMMU faults seen (also in `errors`), at most one per transfer.
    pub faults: Vec<DmaFault>,
}

impl DmaServer {
    pub fn new(ports: DmaPorts, timing: DmaTiming) -> DmaServer {
        DmaServer::with_memory(ports, timing, HostMemory::default())
    }
}

impl<M: DmaMemory> DmaServer<M> {
    pub fn with_memory(ports: DmaPorts, timing: DmaTiming, mem: M) -> DmaServer<M> {
        let host = match timing.host {
            DmaHost::Pcie { link, cycle_ps } => HostState::Pcie {
                link: PcieLink::new(link),
                cycle_ps,
            },
            DmaHost::Ideal { read_latency } => HostState::Ideal { read_latency },
        };
        DmaServer {
            ports,
            timing,
            mem,
            reads: VecDeque::new(),
            rd_req_ready: false,
            rsp_valid: false,
            wr_req_ready: false,
            wr_data_ready: false,
            write: None,
            posted: VecDeque::new(),
            writes_begun: 0,
            posted_faulted: None,
            host,
            cycle: 0,
            reads_done: 0,
            writes_done: 0,
            bytes_read: 0,
            bytes_written: 0,
            errors: Vec::new(),
            faults: Vec::new(),
        }
    }

    /// The PCIe link's state (a [`DmaHost::Pcie`] host), for its counters.
    pub fn link(&self) -> Option<&PcieLink> {
        match &self.host {
            HostState::Pcie { link, .. } => Some(link),
            HostState::Ideal { .. } => None,
        }
    }

    fn link_mut(&mut self) -> Option<&mut PcieLink> {
        match &mut self.host {
            HostState::Pcie { link, .. } => Some(link),
            HostState::Ideal { .. } => None,
        }
    }

    /// No read outstanding, no write in progress or on its way to memory.
    pub fn idle(&self) -> bool {
        self.reads.is_empty() && self.write.is_none() && self.posted.is_empty()
    }

    /// Write beats the core has handed over that host memory does not
    /// hold yet (on the link or within the posted latency).
    pub fn posted_beats(&self) -> usize {
        self.posted.len()
    }

    /// Store `data` at `addr`, recording a fault once per write.
    fn store(&mut self, addr: u64, data: &[u8], faulted: &mut bool) {
        if let Err(fault) = self.mem.dma_write(addr, data) {
            if !*faulted {
                *faulted = true;
                self.errors.push(format!("cycle {}: {fault}", self.cycle));
                self.faults.push(fault);
            }
        }
    }

    /// Apply the posted beats whose time has come, in order (posted
    /// writes are not reordered), a fault recorded once per write.
    fn apply_posted(&mut self, now_ps: f64) {
        while self.posted.front().is_some_and(|b| b.visible_ps <= now_ps) {
            let Some(b) = self.posted.pop_front() else { break };
            let mut faulted = self.posted_faulted == Some(b.write);
            self.store(b.addr, &b.data, &mut faulted);
            if faulted {
                self.posted_faulted = Some(b.write);
            }
        }
    }

    /// Put every posted beat into host memory now (the end of a run, or a
    /// bench that reads memory without waiting for the link).
    pub fn flush_posted(&mut self) {
        self.apply_posted(f64::INFINITY);
    }

    fn beats(len: u64) -> u64 {
        len.div_ceil(BEAT as u64).max(1)
    }

    /// The current cycle's time on the link, ps.
    fn now_ps(&self) -> f64 {
        match self.host {
            HostState::Pcie { cycle_ps, .. } => self.cycle as f64 * cycle_ps,
            HostState::Ideal { .. } => 0.0,
        }
    }

    /// Whether the head read's next beat has arrived.
    fn head_due(&self) -> bool {
        let Some(r) = self.reads.front() else {
            return false;
        };
        if self.link().is_none() {
            return r.due <= self.cycle;
        }
        let end = ((r.beat + 1) * BEAT as u64).min(r.len);
        let now = self.now_ps();
        // Completions arrive in order: the first one reaching `end`.
        r.arrivals.iter().find(|a| a.end >= end).is_some_and(|a| a.at_ps <= now)
    }

    pub fn drive(&mut self, m: &mut Model, rng: &mut Rng) {
        let stall = self.timing.ready;
        let now = self.now_ps();
        // Before a read beat is served this cycle: the link's reads never
        // pass its writes, and a read answered now was asked for after
        // every write whose time has come.
        self.apply_posted(now);
        let room = match self.link_mut() {
            None => self.reads.len() < IDEAL_READS_OUTSTANDING,
            // Not from `valid`: what the model shows before its step is
            // the last cycle's (a request raised at this edge would pass
            // unchecked). Waits are counted in `observe`.
            Some(link) => link.can_read(now),
        };
        self.rd_req_ready = room && stall.go(rng);
        m.set(self.ports.rd_req_ready, u64::from(self.rd_req_ready));
        // Response: the head read's next beat once it has arrived; valid
        // stays up until taken.
        let head_due = self.head_due();
        self.rsp_valid = stall.offer(self.rsp_valid, head_due, rng);
        m.set(self.ports.rd_rsp_valid, u64::from(self.rsp_valid));
        if let Some(r) = self.reads.front_mut() {
            let off = r.beat * BEAT as u64;
            let n = (r.len - off.min(r.len)).min(BEAT as u64) as usize;
            let mut buf = [0u8; BEAT];
            if let Err(fault) = self.mem.dma_read(r.addr.wrapping_add(off), &mut buf[..n]) {
                buf = [0; BEAT];
                if !r.faulted {
                    r.faulted = true;
                    self.errors.push(format!("cycle {}: {fault}", self.cycle));
                    self.faults.push(fault);
                }
            }
            m.set_bytes(self.ports.rd_rsp_data, &buf);
            m.set(self.ports.rd_rsp_keep, if n >= 64 { u64::MAX } else { (1u64 << n) - 1 });
            m.set(self.ports.rd_rsp_last, u64::from(r.beat + 1 == Self::beats(r.len)));
            m.set(self.ports.rd_rsp_tag, r.tag);
        }
        self.wr_req_ready = self.write.is_none() && stall.go(rng);
        m.set(self.ports.wr_req_ready, u64::from(self.wr_req_ready));
        let link_free = self.link().is_none_or(|l| l.write_ready(now));
        self.wr_data_ready = link_free && stall.go(rng);
        m.set(self.ports.wr_data_ready, u64::from(self.wr_data_ready));
    }

    pub fn observe(&mut self, m: &Model, rng: &mut Rng) {
        let p = self.ports;
        let now = self.now_ps();
        let waiting = !self.rd_req_ready && m.get_bit(p.rd_req_valid);
        if let Some(link) = self.link_mut() {
            if waiting {
                link.counters.tag_waits += 1;
            }
        }
        if self.rd_req_ready && m.get_bit(p.rd_req_valid) {
            let len = m.get(p.rd_req_len);
            if len == 0 {
                self.errors.push(format!("cycle {}: read of length 0", self.cycle));
            } else {
                let (due, arrivals) = match &mut self.host {
                    HostState::Pcie { link, .. } => (0, link.read(now, len)),
                    HostState::Ideal { read_latency: (lo, hi) } => {
                        (self.cycle + *lo + rng.below(hi.saturating_sub(*lo) + 1), Vec::new())
                    }
                };
                self.reads.push_back(PendingRead {
                    due,
                    arrivals,
                    addr: m.get(p.rd_req_addr),
                    len,
                    tag: m.get(p.rd_req_tag),
                    beat: 0,
                    faulted: false,
                });
            }
        }
        if self.rsp_valid && m.get_bit(p.rd_rsp_ready) {
            self.rsp_valid = false;
            if let Some(r) = self.reads.front_mut() {
                r.beat += 1;
                self.bytes_read += (r.len - ((r.beat - 1) * BEAT as u64).min(r.len)).min(BEAT as u64);
                if r.beat == Self::beats(r.len) {
                    self.reads.pop_front();
                    self.reads_done += 1;
                }
            }
        }
        if self.wr_req_ready && m.get_bit(p.wr_req_valid) {
            let len = m.get(p.wr_req_len);
            if len == 0 {
                self.errors.push(format!("cycle {}: write of length 0", self.cycle));
            }
            if let Some(link) = self.link_mut() {
                link.write_begin();
            }
            self.writes_begun += 1;
            self.write = Some(PendingWrite {
                addr: m.get(p.wr_req_addr),
                len,
                done: 0,
                faulted: false,
            });
        }
        if self.wr_data_ready && m.get_bit(p.wr_data_valid) {
            let keep = m.get(p.wr_keep);
            let last = m.get_bit(p.wr_last);
            let Some(w) = self.write.as_mut() else {
                self.errors
                    .push(format!("cycle {}: write data without a request", self.cycle));
                self.cycle += 1;
                return;
            };
            let n = keep.trailing_ones() as u64;
            let bad_keep = keep.checked_shr(n as u32).unwrap_or(0) != 0 || (!last && n != BEAT as u64);
            let addr = w.addr.wrapping_add(w.done);
            w.done += n;
            let (len, done, mut faulted) = (w.len, w.done, w.faulted);
            if bad_keep {
                self.errors
                    .push(format!("cycle {}: write keep {keep:#x} (last {last})", self.cycle));
            }
            let mut data = m.get_bytes(p.wr_data);
            data.truncate(n as usize);
            self.bytes_written += n;
            match &mut self.host {
                HostState::Pcie { link, .. } => {
                    let crossed = link.write(now, n as u32);
                    let visible_ps = crossed + link.config().posted_latency_ps as f64;
                    self.posted.push_back(PostedBeat {
                        visible_ps,
                        write: self.writes_begun,
                        addr,
                        data,
                    });
                }
                HostState::Ideal { .. } => self.store(addr, &data, &mut faulted),
            }
            if last {
                if done != len {
                    self.errors
                        .push(format!("cycle {}: write of {len} bytes carried {done}", self.cycle));
                }
                self.write = None;
                self.writes_done += 1;
            } else {
                if let Some(w) = self.write.as_mut() {
                    w.faulted = faulted;
                }
                if done >= len {
                    self.errors.push(format!(
                        "cycle {}: write of {len} bytes: no last after {done}",
                        self.cycle
                    ));
                }
            }
        }
        self.cycle += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_cross_pages_and_count_each_byte() {
        let mut mem = HostMemory::default();
        // A write straddling two pages, then a second one overlapping it.
        let a = 3 * PAGE - 10;
        let data: Vec<u8> = (1..=30).collect();
        mem.dma_write(a, &data).unwrap();
        mem.dma_write(a + 20, &[0xEE; 4]).unwrap();
        let got = mem.read_vec(a - 2, 34);
        assert_eq!(&got[..2], &[0, 0], "unwritten bytes read as zero");
        assert_eq!(&got[2..22], &data[..20]);
        assert_eq!(&got[22..26], &[0xEE; 4]);
        assert_eq!(&got[26..32], &data[24..30]);
        assert_eq!(&got[32..], &[0, 0]);
        assert_eq!(mem.writes.get(&(a - 1)), None);
        assert_eq!(mem.writes.get(&a), Some(&1));
        assert_eq!(mem.writes.get(&(a + 21)), Some(&2), "written twice");
        assert_eq!(mem.writes.get(&(a + 29)), Some(&1), "last byte, second page");
        assert_eq!(mem.writes.get(&(a + 30)), None);
        assert_eq!(mem.writes.len(), 30);
        let counted: Vec<(u64, u32)> = mem.writes.iter().collect();
        assert_eq!(counted.len(), 30);
        assert_eq!(counted[0], (a, 1));
        assert_eq!(counted[29], (a + 29, 1));
        assert_eq!(counted.iter().filter(|&&(_, n)| n == 2).count(), 4);
        // `fill` stores without counting.
        mem.fill(10 * PAGE - 1, &[7, 8]);
        assert_eq!(mem.read_vec(10 * PAGE - 1, 2), vec![7, 8]);
        assert!(!mem.writes.contains_key(&(10 * PAGE)));
    }
}
