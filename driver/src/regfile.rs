//! The NIC's register file as software: serves the register-block list of
//! [`contract::regmap`] (headers, build ID, counters, the config row count)
//! and decodes what a write means (a config row emitted by `cfg.go`, a
//! doorbell, a counter clear). The test model ([`crate::mock`]) and the
//! software NIC ([`crate::soft`]) both sit behind one, so the driver finds
//! the same map on either.

use contract::regmap::{self, HDR_NEXT, HDR_TYPE, HDR_VERSION};
use std::collections::HashMap;

/// One config-table row the driver wrote (`cfg.go`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CfgRow {
    pub table: u8,
    pub index: u16,
    pub data: [u8; 32],
}

impl CfgRow {
    /// Bits `[bit, bit + width)` of the row (width <= 64).
    pub fn bits(&self, bit: usize, width: usize) -> u64 {
        let mut v = 0u64;
        for i in 0..width {
            let b = bit + i;
            v |= u64::from((self.data[b / 8] >> (b % 8)) & 1) << i;
        }
        v
    }

    /// A field of the row.
    pub fn get(&self, f: contract::Field) -> u64 {
        f.get(&self.data)
    }
}

/// What an MMIO write did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MmioWrite {
    /// `cfg.go` emitted this row.
    Row(CfgRow),
    /// `cfg.go` was written but no row emitted (`emit_rows` false).
    RowSwallowed,
    /// A doorbell: QP and its new producer index.
    Doorbell { qp: u8, producer: u32 },
    /// A word of the descriptor push window (not kept: a software card
    /// reads every descriptor from the ring).
    Push,
    /// Counters of the groups in the mask were cleared.
    CountersCleared(u32),
    /// A plain register (scratch, cfg staging) took the value.
    Register,
    /// Misaligned or outside the BAR: nothing written.
    Ignored,
}

/// Register state. See the module doc.
#[derive(Debug)]
pub struct RegisterFile {
    /// Read-write registers (scratch, fault injection, cfg staging).
    regs: HashMap<u64, u32>,
    /// The counter bank, by slot.
    pub counters: [u32; regmap::counters::MAX],
    rows_emitted: u32,
    git_hash: u64,
}

impl RegisterFile {
    /// Bytes of BAR0.
    pub const BAR_LEN: u64 = 1 << regmap::ADDR_BITS;

    pub fn new(git_hash: u64) -> RegisterFile {
        RegisterFile {
            regs: HashMap::new(),
            counters: [0; regmap::counters::MAX],
            rows_emitted: 0,
            git_hash,
        }
    }

    /// The value the map defines at `offset` (misaligned or outside the
    /// BAR: all-ones, as a PCIe read of nothing).
    pub fn read(&self, offset: u64) -> u32 {
        if !offset.is_multiple_of(4) || offset >= Self::BAR_LEN {
            return u32::MAX;
        }
        for (i, b) in regmap::BLOCKS.iter().enumerate() {
            let base = u64::from(b.base);
            if offset < base || offset >= base + u64::from(regmap::block_span(b)) {
                continue;
            }
            let rel = (offset - base) as u16;
            match rel {
                HDR_TYPE => return b.block_type,
                HDR_VERSION => return b.version,
                HDR_NEXT => return u32::from(regmap::next_of(i)),
                _ => {}
            }
            if b.base == regmap::build_id::BASE {
                match rel {
                    regmap::build_id::GIT_HASH_HI => return (self.git_hash >> 32) as u32,
                    regmap::build_id::GIT_HASH_LO => return self.git_hash as u32,
                    _ => {}
                }
            }
            if b.base == regmap::counters::BASE && rel >= regmap::counters::FIRST {
                let slot = usize::from((rel - regmap::counters::FIRST) / 4);
                return if slot < regmap::N_COUNTERS {
                    self.counters[slot]
                } else {
                    0
                };
            }
            if b.base == regmap::cfg::BASE && rel == regmap::cfg::STATUS {
                return (self.rows_emitted & 0xFFFF) << 16;
            }
            if let Some(r) = b.regs.iter().find(|r| r.offset == rel) {
                return match r.access {
                    regmap::Access::Wo => 0,
                    regmap::Access::Ro => r.reset,
                    regmap::Access::Rw => self.regs.get(&offset).copied().unwrap_or(r.reset),
                };
            }
        }
        0
    }

    /// Apply a write; `emit_rows` false loses `cfg.go` rows (a fault).
    pub fn write(&mut self, offset: u64, value: u32, emit_rows: bool) -> MmioWrite {
        if !offset.is_multiple_of(4) || offset >= Self::BAR_LEN {
            return MmioWrite::Ignored;
        }
        let cfg = u64::from(regmap::cfg::BASE);
        let window = u64::from(regmap::doorbell::WINDOW);
        let push = u64::from(regmap::push::WINDOW);
        if (push..push + u64::from(regmap::push::SIZE)).contains(&offset) {
            // A descriptor push word: the card's cache stages it; nothing
            // here keeps it (the descriptor is in the ring too).
            MmioWrite::Push
        } else if (window..window + 4 * u64::from(regmap::doorbell::QPS)).contains(&offset) {
            MmioWrite::Doorbell {
                qp: ((offset - window) / 4) as u8,
                producer: value,
            }
        } else if offset == cfg + u64::from(regmap::cfg::GO) {
            if value & 1 == 0 {
                return MmioWrite::Register;
            }
            if !emit_rows {
                return MmioWrite::RowSwallowed;
            }
            let reg = |r: u16| self.regs.get(&(cfg + u64::from(r))).copied().unwrap_or(0);
            let table = (reg(regmap::cfg::TABLE) & 0xF) as u8;
            let index = (reg(regmap::cfg::INDEX) & 0xFFFF) as u16;
            let mut data = [0u8; 32];
            for k in 0..8u16 {
                let w = reg(regmap::cfg::DATA0 + 4 * k);
                data[4 * k as usize..4 * k as usize + 4].copy_from_slice(&w.to_le_bytes());
            }
            self.rows_emitted = self.rows_emitted.wrapping_add(1);
            MmioWrite::Row(CfgRow { table, index, data })
        } else if offset == u64::from(regmap::counters::BASE + regmap::counters::CLEAR) {
            for (i, c) in regmap::COUNTERS.iter().enumerate() {
                if value >> c.group & 1 == 1 {
                    self.counters[i] = 0;
                }
            }
            MmioWrite::CountersCleared(value)
        } else {
            self.regs.insert(offset, value);
            MmioWrite::Register
        }
    }
}
