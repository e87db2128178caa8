//! The lowest set bit of a 64-bit word, as its index: the retransmit
//! engine's SACK pass picks the next newly acknowledged PSN of a word,
//! and the first PSN still open (the new una), with it.

use rust_hdl::prelude::*;

/// Combinational: `index` is the position of the lowest 1 of `bits`,
/// `any` whether there is one (`index` is 63 when there is none).
/// Found by halving: whether the low half is empty gives the top bit of
/// the index and the half to look in next.
#[derive(LogicBlock, Default)]
pub struct LowestSet {
    pub bits: Signal<In, Bits<64>>,
    pub index: Signal<Out, Bits<6>>,
    pub any: Signal<Out, Bit>,
    // The half still searched at each step, and whether the low half of
    // the one before was empty (that index bit is 1).
    h32: Signal<Local, Bits<32>>,
    h16: Signal<Local, Bits<16>>,
    h8: Signal<Local, Bits<8>>,
    h4: Signal<Local, Bits<4>>,
    h2: Signal<Local, Bits<2>>,
    e5: Signal<Local, Bit>,
    e4: Signal<Local, Bit>,
    e3: Signal<Local, Bit>,
    e2: Signal<Local, Bit>,
    e1: Signal<Local, Bit>,
    e0: Signal<Local, Bit>,
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
        self.e5.next = !self.bits.val().get_bits::<32>(0).any();
        if self.e5.val() {
            self.h32.next = self.bits.val().get_bits::<32>(32);
        } else {
            self.h32.next = self.bits.val().get_bits::<32>(0);
        }
        self.e4.next = !self.h32.val().get_bits::<16>(0).any();
        if self.e4.val() {
            self.h16.next = self.h32.val().get_bits::<16>(16);
        } else {
            self.h16.next = self.h32.val().get_bits::<16>(0);
        }
        self.e3.next = !self.h16.val().get_bits::<8>(0).any();
        if self.e3.val() {
            self.h8.next = self.h16.val().get_bits::<8>(8);
        } else {
            self.h8.next = self.h16.val().get_bits::<8>(0);
        }
        self.e2.next = !self.h8.val().get_bits::<4>(0).any();
        if self.e2.val() {
            self.h4.next = self.h8.val().get_bits::<4>(4);
        } else {
            self.h4.next = self.h8.val().get_bits::<4>(0);
        }
        self.e1.next = !self.h4.val().get_bits::<2>(0).any();
        if self.e1.val() {
            self.h2.next = self.h4.val().get_bits::<2>(2);
        } else {
            self.h2.next = self.h4.val().get_bits::<2>(0);
        }
        self.e0.next = !self.h2.val().get_bit(0);
        self.w5.next = 0.into();
        if self.e5.val() {
            self.w5.next = 32.into();
        }
        self.w4.next = 0.into();
        if self.e4.val() {
            self.w4.next = 16.into();
        }
        self.w3.next = 0.into();
        if self.e3.val() {
            self.w3.next = 8.into();
        }
        self.w2.next = 0.into();
        if self.e2.val() {
            self.w2.next = 4.into();
        }
        self.w1.next = 0.into();
        if self.e1.val() {
            self.w1.next = 2.into();
        }
        self.w0.next = 0.into();
        if self.e0.val() {
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
        assert!(!lowest(0).1);
    }
}
