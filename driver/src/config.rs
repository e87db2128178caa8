//! Config-table rows and the port that writes them.
//!
//! The `cfg` block stages one 256-bit row (`data0..7`, `table`, `index`)
//! and emits it on `go`; its staging registers keep their values, so
//! [`ConfigPort`] shadows them and writes only the words that change (a
//! CQ consumer-index update is `data0` and `go`, not 11 writes). The row
//! layouts of the send context are `layout::SqContext`'s; the other
//! tables' layouts are documented on the owning blocks' pages
//! (docs/hw/<block>.md) and written here as [`Field`] tables.

use crate::layout::Field;
use crate::regmap;
use crate::Device;

const fn f(name: &'static str, bit: usize, bits: usize, meaning: &'static str) -> Field {
    Field {
        name,
        offset: bit / 8,
        shift: bit % 8,
        bits,
        meaning,
    }
}

/// Table 10 (`cc_gate`), index = QP.
pub mod cc {
    use super::*;
    pub const MIN_CWND: Field = f("min_cwnd", 0, 32, "bytes, >= 1");
    pub const MAX_CWND: Field = f("max_cwnd", 32, 32, "bytes, >= min_cwnd");
    pub const SEND_WINDOW: Field = f("send_window", 64, 16, "PSNs: send_mpr_units x 128");
}

/// Table 8 (`retransmit`), index = QP.
pub mod retx_qp {
    use super::*;
    pub const RTO_NS: Field = f("rto_ns", 0, 32, "retransmission timeout, ns");
    pub const STALL_ALLOWANCE_NS: Field = f("stall_allowance_ns", 32, 32, "0: stall rule off");
    pub const REORDER: Field = f("reorder_allowance", 64, 16, "packets");
    pub const RETRY_LINEAR: Field = f("retry_linear", 80, 3, "<= 7");
    pub const RETRY_EXP: Field = f("retry_exp", 83, 5, "<= 25 (25 = infinite)");
    pub const STALL_AGE_NS: Field = f("stall_age_ns", 88, 32, "0: tail check off");
}

/// Table 9 (`retransmit`), index 0.
pub mod retx_global {
    use super::*;
    pub const LAST_QP: Field = f("last_qp", 0, 8, "last QP the RTO scanner visits");
}

/// Tables 2 (CQs) and 3 (EV events) (`ring_writer`).
pub mod ring {
    use super::*;
    /// Index = ring: set up (resets the producer index).
    pub const BASE: Field = f("base", 0, 64, "IOVA, aligned to the entry size");
    pub const LOG2_SLOTS: Field = f("log2_slots", 64, 8, "0..=16");
    /// Index = `0x8000 | ring`: the consumer index.
    pub const CONSUMER: Field = f("consumer", 0, 32, "entries consumed, free running");
    pub const CONSUMER_INDEX: u16 = 0x8000;
}

/// Table 4 (`ack_gen`), index 0.
pub mod ack_params {
    use super::*;
    pub const EVERY: Field = f("ack_every", 0, 16, "packets");
    pub const DELAY: Field = f("ack_delay", 16, 16, "clock cycles");
}

/// Tables 5 (`ack_gen`) and 7 (`completion`), index = QP.
pub mod recv_init {
    use super::*;
    pub const START_PSN: Field = f("start_psn", 0, 24, "first PSN expected");
}

/// Table 6 (`completion`), index = rkey mod 256.
pub mod mr {
    use super::*;
    pub const RKEY: Field = f("rkey", 0, 32, "full key, compared");
    pub const BASE_VA: Field = f("base_va", 32, 64, "= IOVA of byte 0");
    pub const LENGTH: Field = f("length", 96, 64, "bytes");
    pub const VALID: Field = f("valid", 160, 1, "0 deregisters");
}

/// Table 11 (`tx_path`): peer rows 0..=255 and the NIC's own row.
pub mod addr {
    use super::*;
    pub const MAC: Field = f("mac", 0, 48, "");
    /// IP: bits 48-175; IPv4 as an integer in 48-79.
    pub const IP_LO: Field = f("ip_lo", 48, 64, "");
    pub const IP_HI: Field = f("ip_hi", 112, 64, "");
    pub const IPV6: Field = f("ipv6", 176, 1, "own row");
    pub const VLAN: Field = f("vlan", 177, 1, "own row");
    pub const TCI: Field = f("tci", 178, 16, "own row");
    pub const DSCP: Field = f("dscp", 194, 6, "own row");
    pub const TTL: Field = f("ttl", 200, 8, "own row");
    pub const LOCAL_INDEX: u16 = 0x8000;
}

/// Table 12 (the core, into the EV selector).
pub mod ev {
    use super::*;
    /// Index `qp << 7 | ev`.
    pub const VALUE: Field = f("value", 0, 16, "EV value (UDP source port)");
    pub const RR_START: Field = f("rr_start", 16, 1, "start the round robin here");
    /// Index `0x8000 | qp`.
    pub const MASK: Field = f("mask", 0, 16, "");
    pub const MATCH: Field = f("value", 16, 16, "");
    pub const ALLOW: Field = f("allow", 32, 1, "1 allow (DENIED -> GOOD), 0 deny");
    pub const CONTROL_INDEX: u16 = 0x8000;
}

/// Table 13 (the core), index 0.
pub mod core {
    use super::*;
    pub const MIN_GOOD_EVS: Field = f("min_good_evs", 0, 8, "minimum of GOOD EVs per QP");
}

/// One 256-bit row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Row(pub [u8; 32]);

impl Row {
    pub fn new() -> Row {
        Row::default()
    }
    /// Set `field` to `value` (masked to its width).
    pub fn set(mut self, field: Field, value: u64) -> Row {
        field.put(&mut self.0, value);
        self
    }
    /// A row holding `bytes` from byte 0 (a `layout` record).
    pub fn from_bytes(bytes: &[u8]) -> Row {
        let mut r = Row::new();
        let n = bytes.len().min(32);
        r.0[..n].copy_from_slice(&bytes[..n]);
        r
    }
    fn word(&self, k: usize) -> u32 {
        u32::from_le_bytes([self.0[4 * k], self.0[4 * k + 1], self.0[4 * k + 2], self.0[4 * k + 3]])
    }
}

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

    #[test]
    fn rows_land_bit_exact_and_unchanged_words_are_not_rewritten() {
        let dev = MockDevice::new();
        let mut port = ConfigPort::new(&dev, u64::from(regmap::cfg::BASE)).unwrap();
        let row = Row::new()
            .set(retx_qp::RTO_NS, 200_000)
            .set(retx_qp::RETRY_LINEAR, 7)
            .set(retx_qp::RETRY_EXP, 25)
            .set(retx_qp::STALL_AGE_NS, 0xABCD_EF01);
        port.write(&dev, 8, 5, &row);
        let got = dev.last_row(8, 5).unwrap();
        assert_eq!(got.bits(0, 32), 200_000);
        assert_eq!(got.bits(80, 3), 7);
        assert_eq!(got.bits(83, 5), 25);
        assert_eq!(got.bits(88, 32), 0xABCD_EF01);
        assert_eq!(got.data, row.0);
        assert_eq!(dev.writes().len(), 11, "8 data words, table, index, go");
        port.sync(&dev).unwrap();
        // A consumer-index update: only data0 (and table, index) change.
        dev.clear_log();
        port.write(&dev, 2, 0x8003, &Row::new().set(ring::CONSUMER, 17));
        let w = dev.writes();
        let cfg = u64::from(regmap::cfg::BASE);
        assert!(w.contains(&(cfg + u64::from(regmap::cfg::DATA0), 17)));
        assert!(w.len() < 11, "unchanged staging words skipped: {w:x?}");
        let got = dev.last_row(2, 0x8003).unwrap();
        assert_eq!(
            got.data,
            Row::new().set(ring::CONSUMER, 17).0,
            "the emitted row is the whole new row"
        );
        port.sync(&dev).unwrap();
    }

    #[test]
    fn sync_detects_lost_rows_and_removal() {
        let dev = MockDevice::new();
        let mut port = ConfigPort::new(&dev, u64::from(regmap::cfg::BASE)).unwrap();
        dev.set_swallow_rows(true);
        port.write(&dev, 13, 0, &Row::new().set(core::MIN_GOOD_EVS, 2));
        assert_eq!(port.sync(&dev), Err(ConfigError::RowsLost { expected: 1, seen: 0 }));
        dev.set_all_ones(true);
        assert_eq!(port.sync(&dev), Err(ConfigError::DeviceGone));
        assert!(matches!(
            ConfigPort::new(&dev, u64::from(regmap::cfg::BASE)),
            Err(ConfigError::DeviceGone)
        ));
    }

    #[test]
    fn field_tables_do_not_overlap_within_a_row() {
        let tables: &[&[Field]] = &[
            &[cc::MIN_CWND, cc::MAX_CWND, cc::SEND_WINDOW],
            &[
                retx_qp::RTO_NS,
                retx_qp::STALL_ALLOWANCE_NS,
                retx_qp::REORDER,
                retx_qp::RETRY_LINEAR,
                retx_qp::RETRY_EXP,
                retx_qp::STALL_AGE_NS,
            ],
            &[ring::BASE, ring::LOG2_SLOTS],
            &[ack_params::EVERY, ack_params::DELAY],
            &[mr::RKEY, mr::BASE_VA, mr::LENGTH, mr::VALID],
            &[
                addr::MAC,
                addr::IP_LO,
                addr::IP_HI,
                addr::IPV6,
                addr::VLAN,
                addr::TCI,
                addr::DSCP,
                addr::TTL,
            ],
            &[ev::VALUE, ev::RR_START],
            &[ev::MASK, ev::MATCH, ev::ALLOW],
        ];
        for t in tables {
            let mut used = [false; 256];
            for fl in *t {
                assert!(fl.bit() + fl.bits <= 256, "{} overflows the row", fl.name);
                for u in &mut used[fl.bit()..fl.bit() + fl.bits] {
                    assert!(!*u, "{} overlaps", fl.name);
                    *u = true;
                }
            }
        }
    }
}
