//! Config-table rows and the port that writes them.
//!
//! The `cfg` block stages one 256-bit row (`data0..7`, `table`, `index`)
//! and emits it on `go`; its staging registers keep their values, so
//! [`ConfigPort`] shadows them and writes only the words that change (a
//! CQ consumer-index update is `data0` and `go`, not 11 writes). Table ids
//! and row layouts are the contract's (`contract::config`,
//! `contract::layout::sq_ctx`); [`Row`] encodes a row from them.

use contract::config::Row;
use contract::regmap;

use crate::Device;

/// A config write that did not take.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("config status read all-ones: the card is gone")]
    DeviceGone,
    #[error("config rows lost: the card counted {seen} rows (mod 2^16), the driver wrote {expected}")]
    RowsLost { expected: u16, seen: u16 },
}

/// The `cfg` block, with a shadow of its staging registers.
#[derive(Debug)]
pub struct ConfigPort {
    base: u64,
    /// data0..7, table, index as last written (None: unknown).
    shadow: [Option<u32>; 10],
    /// Rows written (mod 2^16, as the status count).
    rows: u16,
    writes: u64,
}

impl ConfigPort {
    /// The port of the `cfg` block at `base`, its row count read from the card.
    pub fn new(dev: &dyn Device, base: u64) -> Result<ConfigPort, ConfigError> {
        let status = dev.read32(base + u64::from(regmap::cfg::STATUS));
        if status == u32::MAX {
            return Err(ConfigError::DeviceGone);
        }
        Ok(ConfigPort {
            base,
            shadow: [None; 10],
            rows: (status >> 16) as u16,
            writes: 0,
        })
    }

    fn put(&mut self, dev: &dyn Device, slot: usize, offset: u16, value: u32) {
        if self.shadow[slot] != Some(value) {
            dev.write32(self.base + u64::from(offset), value);
            self.shadow[slot] = Some(value);
            self.writes += 1;
        }
    }

    /// Write one row of `table` at `index`.
    pub fn write(&mut self, dev: &dyn Device, table: u8, index: u16, row: &Row) {
        for k in 0..8 {
            self.put(dev, k, regmap::cfg::DATA0 + 4 * k as u16, row.word(k));
        }
        self.put(dev, 8, regmap::cfg::TABLE, u32::from(table));
        self.put(dev, 9, regmap::cfg::INDEX, u32::from(index));
        dev.write32(self.base + u64::from(regmap::cfg::GO), 1);
        self.writes += 1;
        self.rows = self.rows.wrapping_add(1);
    }

    /// Check that the card emitted every row written so far (the read
    /// also flushes the posted writes ahead of it on PCIe).
    pub fn sync(&self, dev: &dyn Device) -> Result<(), ConfigError> {
        let status = dev.read32(self.base + u64::from(regmap::cfg::STATUS));
        if status == u32::MAX {
            return Err(ConfigError::DeviceGone);
        }
        let seen = (status >> 16) as u16;
        if seen != self.rows {
            return Err(ConfigError::RowsLost {
                expected: self.rows,
                seen,
            });
        }
        Ok(())
    }

    /// Forget the shadow (after a device reset).
    pub fn invalidate(&mut self) {
        self.shadow = [None; 10];
    }

    /// MMIO writes issued so far.
    pub fn mmio_writes(&self) -> u64 {
        self.writes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::MockDevice;
    use contract::config::{retx_qp, ring_consumer, table, INDEX_SELECT};

    #[test]
    fn rows_land_bit_exact_and_unchanged_words_are_not_rewritten() {
        let dev = MockDevice::new();
        let mut port = ConfigPort::new(&dev, u64::from(regmap::cfg::BASE)).unwrap();
        let row = Row::new()
            .set(retx_qp::ACK_TIMEOUT_EXP, 24)
            .set(retx_qp::RETRY_LINEAR, 7)
            .set(retx_qp::RETRY_EXP, 25)
            .set(retx_qp::STALL_AGE_NS, 0xABCD_EF01);
        port.write(&dev, table::RETX_QP, 5, &row);
        let got = dev.last_row(table::RETX_QP, 5).unwrap();
        assert_eq!(got.bits(0, 5), 24);
        assert_eq!(got.bits(80, 3), 7);
        assert_eq!(got.bits(83, 5), 25);
        assert_eq!(got.bits(88, 32), 0xABCD_EF01);
        assert_eq!(got.data, row.0);
        assert_eq!(dev.writes().len(), 11, "8 data words, table, index, go");
        port.sync(&dev).unwrap();
        // A consumer-index update: only data0 (and table, index) change.
        dev.clear_log();
        port.write(
            &dev,
            table::CQ_RING,
            INDEX_SELECT | 3,
            &Row::new().set(ring_consumer::CONSUMER, 17),
        );
        let w = dev.writes();
        let cfg = u64::from(regmap::cfg::BASE);
        assert!(w.contains(&(cfg + u64::from(regmap::cfg::DATA0), 17)));
        assert!(w.len() < 11, "unchanged staging words skipped: {w:x?}");
        let got = dev.last_row(table::CQ_RING, INDEX_SELECT | 3).unwrap();
        assert_eq!(
            got.data,
            Row::new().set(ring_consumer::CONSUMER, 17).0,
            "the emitted row is the whole new row"
        );
        port.sync(&dev).unwrap();
    }

    #[test]
    fn sync_detects_lost_rows_and_removal() {
        let dev = MockDevice::new();
        let mut port = ConfigPort::new(&dev, u64::from(regmap::cfg::BASE)).unwrap();
        dev.set_swallow_rows(true);
        port.write(&dev, table::RETX_QP, 0, &Row::new().set(retx_qp::RETRY_LINEAR, 2));
        assert_eq!(port.sync(&dev), Err(ConfigError::RowsLost { expected: 1, seen: 0 }));
        dev.set_all_ones(true);
        assert_eq!(port.sync(&dev), Err(ConfigError::DeviceGone));
        assert!(matches!(
            ConfigPort::new(&dev, u64::from(regmap::cfg::BASE)),
            Err(ConfigError::DeviceGone)
        ));
    }
}
