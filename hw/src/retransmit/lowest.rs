//! The lowest set bit of a 64-bit word, as its index: the retransmit
//! engine's SACK pass picks the next newly acknowledged PSN of a word,
//! and the first PSN still open (the new una), with it.

use rust_hdl::prelude::*;

/// Combinational: `index` is the position of the lowest 1 of `bits`,
/// `any` whether there is one (`index` is 63 when there is none).
/// In parallel, not by halving (a chain of six searches, each waiting
/// on the one before, was the retransmit engine's deepest path): the
/// lowest 1 alone is `bits & -bits` (the carry of `!bits + 1` stops at
/// it, on the carry chain), and index bit k is whether it sits at a
/// position with bit k set, one OR over 32 positions per bit.
#[derive(LogicBlock, Default)]
pub struct LowestSet {
    pub bits: Signal<In, Bits<64>>,
    pub index: Signal<Out, Bits<6>>,
    pub any: Signal<Out, Bit>,
    /// The lowest 1 of `bits`, the others cleared.
    alone: Signal<Local, Bits<64>>,
    /// Per index bit k, the positions whose index has bit k set.
    at5: Signal<Local, Bits<64>>,
    at4: Signal<Local, Bits<64>>,
    at3: Signal<Local, Bits<64>>,
    at2: Signal<Local, Bits<64>>,
    at1: Signal<Local, Bits<64>>,
    at0: Signal<Local, Bits<64>>,
    none: Signal<Local, Bit>,
    // The index bits as weights (ORed together).
    w5: Signal<Local, Bits<6>>,
    w4: Signal<Local, Bits<6>>,
    w3: Signal<Local, Bits<6>>,
    w2: Signal<Local, Bits<6>>,
    w1: Signal<Local, Bits<6>>,
    w0: Signal<Local, Bits<6>>,
}

impl Logic for LowestSet {
    #[hdl_gen]
    fn update(&mut self) {
        self.any.next = self.bits.val().any();
        self.none.next = !self.bits.val().any();
        self.alone.next = self.bits.val() & (!self.bits.val() + 1);
        self.at5.next = 0xFFFF_FFFF_0000_0000_u64.into();
        self.at4.next = 0xFFFF_0000_FFFF_0000_u64.into();
        self.at3.next = 0xFF00_FF00_FF00_FF00_u64.into();
        self.at2.next = 0xF0F0_F0F0_F0F0_F0F0_u64.into();
        self.at1.next = 0xCCCC_CCCC_CCCC_CCCC_u64.into();
        self.at0.next = 0xAAAA_AAAA_AAAA_AAAA_u64.into();
        self.w5.next = 0.into();
        if (self.alone.val() & self.at5.val()).any() | self.none.val() {
            self.w5.next = 32.into();
        }
        self.w4.next = 0.into();
        if (self.alone.val() & self.at4.val()).any() | self.none.val() {
            self.w4.next = 16.into();
        }
        self.w3.next = 0.into();
        if (self.alone.val() & self.at3.val()).any() | self.none.val() {
            self.w3.next = 8.into();
        }
        self.w2.next = 0.into();
        if (self.alone.val() & self.at2.val()).any() | self.none.val() {
            self.w2.next = 4.into();
        }
        self.w1.next = 0.into();
        if (self.alone.val() & self.at1.val()).any() | self.none.val() {
            self.w1.next = 2.into();
        }
        self.w0.next = 0.into();
        if (self.alone.val() & self.at0.val()).any() | self.none.val() {
            self.w0.next = 1.into();
        }
        self.index.next = self.w5.val() | self.w4.val() | self.w3.val() | self.w2.val() | self.w1.val() | self.w0.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowest(x: u64) -> (u64, bool) {
        let mut uut = LowestSet::default();
        uut.connect_all();
        uut.bits.next = x.into();
        // Settle the combinational chain (one pass per step of the halving).
        for _ in 0..16 {
            uut.update_all();
        }
        (uut.index.val().to_u64(), uut.any.val())
    }

    /// Every single bit, and words with several bits, give the lowest.
    #[test]
    fn finds_the_lowest_set_bit() {
        for i in 0..64 {
            assert_eq!(lowest(1 << i), (i, true));
            assert_eq!(lowest(u64::MAX << i), (i, true));
            assert_eq!(lowest((1 << i) | (1 << 63)), (i, true));
        }
        assert_eq!(lowest(0), (63, false));
        // Words of several bits from a fixed generator.
        let mut x = 0x9E37_79B9_7F4A_7C15_u64;
        for _ in 0..1000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let w = x & x.rotate_left(11);
            if w != 0 {
                assert_eq!(lowest(w), (u64::from(w.trailing_zeros()), true), "{w:#x}");
            }
        }
    }
}
