//! A software model of the NIC's register file behind the [`Device`]
//! trait, for tests: it serves the register-block list of
//! [`crate::regmap`], records every MMIO write, decodes config-table rows
//! (`cfg` block: staging registers + `go`, with the `status` row count) and
//! doorbells, and lets a test play the card's DMA side (read the SQ ring,
//! write CQEs and EV events into host buffers by IOVA; a freed buffer is
//! no longer reachable). Knobs make it a
//! garbage device: every read all-ones (surprise removal), any register
//! overridden (wrong version, loops in the block list).

use crate::device::{heap_dma, DeviceError, DmaBuffer, IovaAllocator, WeakDmaBuffer};
pub use crate::regfile::CfgRow;
use crate::regfile::{MmioWrite, RegisterFile};
use crate::Device;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

struct State {
    regs: RegisterFile,
    /// Values a test forces on reads (garbage, other revisions).
    overrides: HashMap<u64, u32>,
    writes: Vec<(u64, u32)>,
    rows: Vec<CfgRow>,
    doorbells: Vec<(u8, u32)>,
    /// Live DMA buffers by IOVA (weak: freed buffers drop out).
    dma: BTreeMap<u64, WeakDmaBuffer>,
}

/// The register-file model. See the module doc.
pub struct MockDevice {
    state: Mutex<State>,
    all_ones: AtomicBool,
    /// When set, `go` writes are recorded but no row is emitted (the
    /// status count does not move): a lost config write.
    swallow_rows: AtomicBool,
    iovas: IovaAllocator,
}

/// Build ID the mock reports (as `hw::csr::BuildInfo::FIXED`).
pub const MOCK_GIT_HASH: u64 = 0x0123_4567_89ab_cdef;

impl Default for MockDevice {
    fn default() -> Self {
        Self::new()
    }
}

impl MockDevice {
    pub fn new() -> MockDevice {
        MockDevice {
            state: Mutex::new(State {
                regs: RegisterFile::new(MOCK_GIT_HASH),
                overrides: HashMap::new(),
                writes: Vec::new(),
                rows: Vec::new(),
                doorbells: Vec::new(),
                dma: BTreeMap::new(),
            }),
            all_ones: AtomicBool::new(false),
            swallow_rows: AtomicBool::new(false),
            iovas: IovaAllocator::new(),
        }
    }

    fn st(&self) -> std::sync::MutexGuard<'_, State> {
        // A test that panicked while holding the lock poisons it; the
        // register file itself is still consistent, so keep serving.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every read returns 0xFFFF_FFFF from now on (the card was removed).
    pub fn set_all_ones(&self, on: bool) {
        self.all_ones.store(on, Ordering::Relaxed);
    }

    /// Lose config rows: `go` no longer emits.
    pub fn set_swallow_rows(&self, on: bool) {
        self.swallow_rows.store(on, Ordering::Relaxed);
    }

    /// Force reads of `offset` to return `value`.
    pub fn override_reg(&self, offset: u64, value: u32) {
        self.st().overrides.insert(offset, value);
    }

    pub fn clear_override(&self, offset: u64) {
        self.st().overrides.remove(&offset);
    }

    /// Set counter slot `slot`.
    pub fn set_counter(&self, slot: usize, value: u32) {
        self.st().regs.counters[slot] = value;
    }

    /// Every MMIO write so far, in order.
    pub fn writes(&self) -> Vec<(u64, u32)> {
        self.st().writes.clone()
    }

    /// Config rows emitted so far, in order.
    pub fn rows(&self) -> Vec<CfgRow> {
        self.st().rows.clone()
    }

    /// The last row written to `(table, index)`.
    pub fn last_row(&self, table: u8, index: u16) -> Option<CfgRow> {
        self.st()
            .rows
            .iter()
            .rev()
            .find(|r| r.table == table && r.index == index)
            .cloned()
    }

    /// Doorbells so far: (QP, producer index).
    pub fn doorbells(&self) -> Vec<(u8, u32)> {
        self.st().doorbells.clone()
    }

    pub fn clear_log(&self) {
        let mut s = self.st();
        s.writes.clear();
        s.rows.clear();
        s.doorbells.clear();
    }

    fn find_dma(&self, iova: u64, len: usize) -> Option<(DmaBuffer, usize)> {
        let s = self.st();
        let (_, weak) = s.dma.range(..=iova).next_back()?;
        let buf = weak.upgrade()?;
        buf.contains_iova(iova, len as u64)
            .then(|| (buf.clone(), (iova - buf.iova()) as usize))
    }

    /// The card writes host memory at `iova` (false: no buffer there).
    pub fn dma_write(&self, iova: u64, data: &[u8]) -> bool {
        self.find_dma(iova, data.len())
            .is_some_and(|(b, off)| b.write(off, data).is_ok())
    }

    /// The card reads host memory at `iova`.
    pub fn dma_read(&self, iova: u64, len: usize) -> Option<Vec<u8>> {
        let (b, off) = self.find_dma(iova, len)?;
        let mut v = vec![0u8; len];
        b.read(off, &mut v).ok()?;
        Some(v)
    }
}

impl Device for MockDevice {
    fn name(&self) -> String {
        "mock".into()
    }

    fn bar_len(&self) -> u64 {
        RegisterFile::BAR_LEN
    }

    fn read32(&self, offset: u64) -> u32 {
        if self.all_ones.load(Ordering::Relaxed) {
            return u32::MAX;
        }
        let s = self.st();
        if offset.is_multiple_of(4) && offset < self.bar_len() {
            if let Some(&v) = s.overrides.get(&offset) {
                return v;
            }
        }
        s.regs.read(offset)
    }

    fn write32(&self, offset: u64, value: u32) {
        let emit = !self.swallow_rows.load(Ordering::Relaxed);
        let mut s = self.st();
        match s.regs.write(offset, value, emit) {
            MmioWrite::Ignored => return,
            MmioWrite::Row(r) => s.rows.push(r),
            MmioWrite::Doorbell { qp, producer } => s.doorbells.push((qp, producer)),
            MmioWrite::RowSwallowed | MmioWrite::CountersCleared(_) | MmioWrite::Register | MmioWrite::Push => {}
        }
        s.writes.push((offset, value));
    }

    fn alloc_dma(&self, len: usize) -> Result<DmaBuffer, DeviceError> {
        let b = heap_dma(&self.iovas, len)?;
        let mut s = self.st();
        s.dma.retain(|_, w| w.upgrade().is_some());
        s.dma.insert(b.iova(), b.downgrade());
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use contract::regmap;

    #[test]
    fn dma_by_iova_reaches_live_buffers_only() {
        let dev = MockDevice::new();
        let a = dev.alloc_dma(100).unwrap();
        let b = dev.alloc_dma(100).unwrap();
        assert!(dev.dma_write(a.iova() + 98, &[1, 2]));
        assert!(!dev.dma_write(a.iova() + 99, &[1, 2]), "straddles the end");
        assert_eq!(dev.dma_read(a.iova() + 98, 2), Some(vec![1, 2]));
        assert!(dev.dma_read(a.iova() - 1, 1).is_none(), "below every buffer");
        let bi = b.iova();
        drop(b);
        assert!(!dev.dma_write(bi, &[1]), "a freed buffer is not reachable");
    }

    #[test]
    fn registers_behave_as_the_map_says() {
        let dev = MockDevice::new();
        let scratch = u64::from(regmap::build_id::SCRATCH);
        dev.write32(scratch, 0x1234);
        assert_eq!(dev.read32(scratch), 0x1234, "RW");
        let go = u64::from(regmap::cfg::BASE + regmap::cfg::GO);
        assert_eq!(dev.read32(go), 0, "WO reads 0");
        dev.write32(u64::from(regmap::build_id::GIT_HASH_HI), 5);
        assert_eq!(
            dev.read32(u64::from(regmap::build_id::GIT_HASH_HI)),
            (MOCK_GIT_HASH >> 32) as u32,
            "RO ignores writes"
        );
        assert_eq!(dev.read32(2), u32::MAX, "misaligned");
        assert_eq!(dev.read32(1 << 16), u32::MAX, "outside the BAR");
        // A group clear clears only that group's counters.
        let rx = regmap::counter_slot("rx_parser_ok");
        let rt = regmap::counter_slot("retransmit");
        dev.set_counter(rx, 3);
        dev.set_counter(rt, 4);
        dev.write32(
            u64::from(regmap::counters::BASE + regmap::counters::CLEAR),
            1 << regmap::group::RX_PARSER,
        );
        let at =
            |slot: usize| dev.read32(u64::from(regmap::counters::BASE + regmap::counters::FIRST) + 4 * slot as u64);
        assert_eq!((at(rx), at(rt)), (0, 4));
    }
}
