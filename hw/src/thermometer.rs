//! Thermometer decode, `o[k] = (idx > k)`: the bits below a position set,
//! the mask of a 64-PSN word before (or, inverted, at and after) an
//! offset: the retransmit engine's SACK masks (`m_cum`, `m_lo`, `m_hi`,
//! `bm_beyond`), and the EV selector's done mask below a slot.
//!
//! Why not `!(ones << idx)`: Yosys maps a shift of a constant as a barrel
//! shifter, which ABC may map as a long chain of LUTs (docs/benchmarks.md,
//! "Logic depth: the SENT classification ..."). Emitted as a case over
//! the index, each output bit is a function of the B index bits alone:
//! one LUT for B <= 6 (as [`crate::onehot::OneHot`] is for `1 << idx`).

use rust_hdl::prelude::*;

/// `o` = the positions below `idx` (all ones when `idx >= N`).
#[derive(LogicBlock, Default)]
pub struct Below<const N: usize, const B: usize> {
    pub idx: Signal<In, Bits<B>>,
    pub o: Signal<Out, Bits<N>>,
}

impl<const N: usize, const B: usize> Logic for Below<N, B> {
    fn update(&mut self) {
        let k = self.idx.val().index();
        let mut o = Bits::<N>::default();
        for i in 0..N.min(k) {
            o = o.replace_bit(i, true);
        }
        self.o.next = o;
    }
    fn connect(&mut self) {
        self.o.connect();
    }
    fn hdl(&self) -> Verilog {
        // A case over every index, one constant each: per output bit a
        // function of the B index bits, which ABC maps to one LUT for
        // B <= 6. (Yosys maps `idx > k` per bit as a carry-chain compare
        // each, and `~(ones << idx)` as a barrel shifter.)
        assert!(B <= 8, "Below decodes indices of at most 8 bits");
        let mut s = String::from("always @(*) begin\n   case (idx)\n");
        for k in 0..1usize << B {
            let mut v = 0u128;
            for i in 0..N.min(k) {
                v |= 1 << i;
            }
            s.push_str(&format!("      {B}'d{k}: o = {N}'h{v:x};\n"));
        }
        s.push_str("   endcase\nend");
        Verilog::Custom(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn below<const B: usize>(idx: u64) -> u64 {
        let mut uut = Below::<64, B>::default();
        uut.connect_all();
        uut.idx.next = idx.into();
        // One pass moves the input to `val()`, the next computes `o`.
        for _ in 0..2 {
            uut.update_all();
        }
        uut.o.val().to_u64()
    }

    /// The same masks as the shifts it replaces, `!(ones << idx)`, for
    /// every 6-bit index and for 8-bit indices past the word.
    #[test]
    fn sets_the_bits_below_the_index() {
        for idx in 0..64u64 {
            assert_eq!(below::<6>(idx), !(u64::MAX << idx), "{idx}");
            assert_eq!(below::<8>(idx), !(u64::MAX << idx), "{idx}");
        }
        for idx in [64, 65, 255] {
            assert_eq!(below::<8>(idx), u64::MAX, "{idx}");
        }
    }
}
