//! What both MRC dialects' responders keep of the PSNs they received
//! beyond their in-order point: which PSNs arrived ([`ReceivedRing`]),
//! the facts of each ([`RxInfo`]), and where a SACK's bitmap starts
//! ([`sack_base`]). The dialects differ in what they put on the wire, not
//! in this bookkeeping.

use crate::Psn;

/// Received PSNs not yet passed by the in-order point, a ring of bits
/// indexed by `psn & mask` over at least the MPR window. Plain words, not
/// a `bitvec::BitVec`: with bitvec (indexing, `copy_from_bitslice` into
/// the SACK) the model benches executed 14-21% more instructions
/// (docs/benchmarks.md, "bit sets").
#[derive(Debug)]
pub(crate) struct ReceivedRing {
    bits: Vec<u64>,
    mask: u32,
}

/// Bits in a ring word, and the fewest a ring holds (one word).
const WORD_BITS: u32 = u64::BITS;

impl ReceivedRing {
    /// A ring for a window of `window` PSNs: the next power of two, at
    /// least one word.
    pub(crate) fn new(window: u32) -> ReceivedRing {
        let size = window.next_power_of_two().max(WORD_BITS);
        ReceivedRing {
            bits: vec![0; (size / WORD_BITS) as usize],
            mask: size - 1,
        }
    }

    /// The PSNs the ring holds.
    pub(crate) fn size(&self) -> u32 {
        self.mask + 1
    }

    /// `psn`'s place in the ring (also the index of a table as large).
    pub(crate) fn pos(&self, psn: Psn) -> usize {
        (psn.value() & self.mask) as usize
    }

    pub(crate) fn contains(&self, psn: Psn) -> bool {
        let p = self.pos(psn);
        self.bits[p / 64] >> (p % 64) & 1 == 1
    }

    pub(crate) fn insert(&mut self, psn: Psn) {
        let p = self.pos(psn);
        self.bits[p / 64] |= 1 << (p % 64);
    }

    pub(crate) fn remove(&mut self, psn: Psn) {
        let p = self.pos(psn);
        self.bits[p / 64] &= !(1 << (p % 64));
    }

    /// 64 received-bits starting at `psn` (bit 0 = `psn`).
    pub(crate) fn bits64(&self, psn: Psn) -> u64 {
        let p = self.pos(psn);
        let (w, sh) = (p / 64, p % 64);
        let n = self.bits.len();
        let lo = self.bits[w] >> sh;
        if sh == 0 {
            lo
        } else {
            lo | self.bits[(w + 1) % n] << (64 - sh)
        }
    }
}

/// Per-PSN facts the responder keeps until the in-order point passes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RxInfo {
    /// FIRST/ONLY: the message length (RETH DMA length).
    pub(crate) first_len: Option<u32>,
    /// Ends a message.
    pub(crate) last: bool,
    /// Ends a WRITE-with-immediate: the immediate.
    pub(crate) imm: Option<u32>,
    /// Payload bytes.
    pub(crate) len: u32,
}

/// The base of a SACK of `bits` PSNs: the in-order point `expected`,
/// unless the PSN that triggered the SACK lies inside the window but
/// beyond the bitmap from there; then the bitmap ends at the trigger.
pub(crate) fn sack_base(expected: Psn, window: u32, trigger: Option<Psn>, bits: u32) -> Psn {
    match trigger {
        Some(t) => {
            let off = t.offset_from(expected);
            if !t.before(expected) && off < window && off >= bits {
                t.sub(bits - 1)
            } else {
                expected
            }
        }
        None => expected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring across the PSN wrap: bits set near 2^24 - 1 and past 0 read
    /// back in one 64-bit word, and removing one clears only it.
    #[test]
    fn bits64_reads_across_the_ring_and_the_psn_wrap() {
        let mut r = ReceivedRing::new(100);
        assert_eq!(r.size(), 128);
        let top = Psn::new(0xFF_FFFE);
        for k in [0, 1, 2, 5] {
            r.insert(top.add(k));
        }
        assert_eq!(r.bits64(top), 0b10_0111);
        r.remove(top.add(1));
        assert!(!r.contains(top.add(1)) && r.contains(top.add(2)));
        assert_eq!(r.bits64(top), 0b10_0101);
    }

    /// The bitmap starts at the in-order point unless the trigger lies
    /// beyond it inside the window.
    #[test]
    fn sack_base_ends_the_bitmap_at_a_far_trigger() {
        let e = Psn::new(1000);
        assert_eq!(sack_base(e, 256, None, 64), e);
        assert_eq!(sack_base(e, 256, Some(e.add(10)), 64), e);
        assert_eq!(sack_base(e, 256, Some(e.add(100)), 64), e.add(37));
        assert_eq!(sack_base(e, 256, Some(e.add(300)), 64), e);
    }
}
