//! Rings in DMA memory: power-of-two slot counts, free-running 32-bit
//! indices (slot = index mod size).
//!
//! * [`PhaseRing`]: a ring the card produces into (CQ: 32-byte CQEs;
//!   EV events: 16-byte entries). The card writes entry `pi` with bit 0 of
//!   byte 0 = `1 - (pi / size) mod 2` (`hw::ring_writer`): 1 on the first
//!   pass, 0 on the second, ... The driver zeroes the ring, so the entry
//!   at its consumer index `ci` is new when that bit equals
//!   `1 - (ci / size) mod 2`. Consumption is reported back to the card
//!   (a config row) in batches: see [`PhaseRing::report_due`].
//! * [`SendRing`]: the send queue the driver produces into (64-byte SQEs),
//!   its producer index rung through the QP's doorbell.

use crate::device::{DeviceError, DmaBuffer};
use crate::Device;
use std::sync::atomic::{fence, Ordering};

/// Largest ring: 2^16 slots (`sq_log2_size`, `ring_writer` log2 <= 16).
pub const MAX_LOG2_SLOTS: u8 = 16;

/// A ring size the hardware cannot take.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("ring of 2^{log2} slots: the hardware takes 2^0..=2^{MAX_LOG2_SLOTS}")]
pub struct BadRingSize {
    pub log2: u8,
}

/// A ring the card writes and the driver consumes, with phase bits.
#[derive(Debug)]
pub struct PhaseRing {
    buf: DmaBuffer,
    log2: u8,
    entry: usize,
    ci: u32,
    reported: u32,
    /// Byte offset of the consumer index's slot and the phase bit an
    /// entry written there on this pass carries (kept up to date by
    /// `advance`, so an empty poll is one byte read and a compare).
    off: usize,
    want: u8,
}

impl PhaseRing {
    pub fn new(dev: &dyn Device, log2: u8, entry: usize) -> Result<PhaseRing, RingError> {
        if log2 > MAX_LOG2_SLOTS {
            return Err(RingError::Size(BadRingSize { log2 }));
        }
        let buf = dev.alloc_dma(entry << log2)?;
        buf.zero();
        Ok(PhaseRing {
            buf,
            log2,
            entry,
            ci: 0,
            reported: 0,
            off: 0,
            want: 1,
        })
    }

    pub fn log2(&self) -> u8 {
        self.log2
    }

    pub fn slots(&self) -> u32 {
        1 << self.log2
    }

    pub fn iova(&self) -> u64 {
        self.buf.iova()
    }

    pub fn buffer(&self) -> &DmaBuffer {
        &self.buf
    }

    /// Entries consumed so far (free running).
    pub fn consumer(&self) -> u32 {
        self.ci
    }

    /// Copy the entry at the consumer index into `out` if the card has
    /// written it (phase check), without consuming it.
    #[inline]
    pub fn peek(&self, out: &mut [u8]) -> bool {
        let off = self.off;
        match self.buf.read_u8_volatile(off) {
            Ok(b) if b & 1 == self.want => {}
            _ => return false,
        }
        // The card writes an entry in one DMA beat; read the rest only
        // after seeing its phase.
        fence(Ordering::Acquire);
        let n = out.len().min(self.entry);
        self.buf.read(off, &mut out[..n]).is_ok()
    }

    /// Consume the entry at the consumer index.
    #[inline]
    pub fn advance(&mut self) {
        self.ci = self.ci.wrapping_add(1);
        let slot = self.ci & (self.slots() - 1);
        self.off = slot as usize * self.entry;
        if slot == 0 {
            // A new pass: the card flips the phase it writes.
            self.want ^= 1;
        }
    }

    /// Whether enough was consumed to tell the card (a quarter of the
    /// ring, at least one entry): batching keeps the consumer-index row
    /// writes off the per-completion path; the card can fill at most
    /// three quarters of the ring before it sees the update.
    #[inline]
    pub fn report_due(&self) -> bool {
        self.ci.wrapping_sub(self.reported) >= (self.slots() / 4).max(1)
    }

    /// Whether entries were consumed since the card was last told.
    pub fn unreported(&self) -> bool {
        self.ci != self.reported
    }

    /// Mark the consumer index reported; returns it.
    pub fn mark_reported(&mut self) -> u32 {
        self.reported = self.ci;
        self.ci
    }
}

/// Errors setting up a ring.
#[derive(Debug, thiserror::Error)]
pub enum RingError {
    #[error(transparent)]
    Size(#[from] BadRingSize),
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// The send queue: 64-byte descriptor slots the card reads.
#[derive(Debug)]
pub struct SendRing {
    buf: DmaBuffer,
    log2: u8,
    /// Descriptors written (free running): the doorbell value.
    pi: u32,
    /// The producer index last rung.
    rung: u32,
}

impl SendRing {
    pub const ENTRY: usize = contract::layout::sqe::SIZE;

    pub fn new(dev: &dyn Device, log2: u8) -> Result<SendRing, RingError> {
        if log2 > MAX_LOG2_SLOTS {
            return Err(RingError::Size(BadRingSize { log2 }));
        }
        let buf = dev.alloc_dma(Self::ENTRY << log2)?;
        Ok(SendRing {
            buf,
            log2,
            pi: 0,
            rung: 0,
        })
    }

    pub fn log2(&self) -> u8 {
        self.log2
    }

    pub fn slots(&self) -> u32 {
        1 << self.log2
    }

    pub fn iova(&self) -> u64 {
        self.buf.iova()
    }

    pub fn buffer(&self) -> &DmaBuffer {
        &self.buf
    }

    pub fn producer(&self) -> u32 {
        self.pi
    }

    /// Write a descriptor at the producer index and advance it (the
    /// caller has checked for room).
    #[inline]
    pub fn push(&mut self, sqe: &[u8; SendRing::ENTRY]) {
        let off = (self.pi & (self.slots() - 1)) as usize * Self::ENTRY;
        // In bounds by construction (slot < slots); an error is impossible.
        let _ = self.buf.write(off, sqe);
        self.pi = self.pi.wrapping_add(1);
    }

    /// Descriptors written since the last doorbell.
    pub fn unrung_count(&self) -> u32 {
        self.pi.wrapping_sub(self.rung)
    }

    /// IOVA of the slot of descriptor `index` (free running).
    pub fn slot_iova(&self, index: u32) -> u64 {
        self.buf.iova() + u64::from(index & (self.slots() - 1)) * Self::ENTRY as u64
    }

    /// Whether descriptors were pushed since the last doorbell.
    pub fn unrung(&self) -> bool {
        self.pi != self.rung
    }

    /// Ring the doorbell at `doorbell` (byte offset in BAR0): the card
    /// reads every descriptor up to the producer index. The release fence
    /// orders the descriptor stores before the MMIO write.
    #[inline]
    pub fn ring(&mut self, dev: &dyn Device, doorbell: u64) {
        fence(Ordering::Release);
        dev.write32(doorbell, self.pi);
        self.rung = self.pi;
    }

    /// Back to empty (QP reset); the memory is zeroed.
    pub fn reset(&mut self) {
        self.buf.zero();
        self.pi = 0;
        self.rung = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::MockDevice;

    #[test]
    fn phase_ring_sees_entries_by_pass() {
        let dev = MockDevice::new();
        let mut r = PhaseRing::new(&dev, 2, 16).unwrap();
        let mut e = [0u8; 16];
        assert!(!r.peek(&mut e), "zeroed ring is empty");
        // The card's writer: entry pi at slot pi mod 4, phase 1 - pass % 2.
        let iova = r.iova();
        let write = |pi: u32, tag: u8| {
            let mut b = [tag; 16];
            b[0] = (1 - ((pi >> 2) & 1)) as u8;
            assert!(dev.dma_write(iova + u64::from(pi & 3) * 16, &b));
        };
        for pi in 0..10u32 {
            write(pi, pi as u8 + 0x10);
            assert!(r.peek(&mut e), "entry {pi}");
            assert_eq!(e[1], pi as u8 + 0x10);
            r.advance();
            // The next slot still holds the previous pass's entry: not new.
            assert!(!r.peek(&mut e), "after {pi}");
        }
        assert_eq!(r.consumer(), 10);
        assert!(r.report_due());
        assert_eq!(r.mark_reported(), 10);
        assert!(!r.report_due());
        assert!(matches!(
            PhaseRing::new(&dev, 17, 16),
            Err(RingError::Size(BadRingSize { log2: 17 }))
        ));
    }

    #[test]
    fn send_ring_wraps_and_rings_the_producer_index() {
        let dev = MockDevice::new();
        let mut s = SendRing::new(&dev, 1).unwrap();
        for i in 0..3u8 {
            s.push(&[i + 1; 64]);
        }
        assert!(s.unrung());
        s.ring(&dev, 0x1000 + 4 * 9);
        assert!(!s.unrung());
        assert_eq!(dev.doorbells(), vec![(9, 3)]);
        // Slot 0 was overwritten by the third descriptor.
        assert_eq!(dev.dma_read(s.iova(), 1).unwrap(), vec![3]);
        assert_eq!(dev.dma_read(s.iova() + 64, 1).unwrap(), vec![2]);
    }
}
