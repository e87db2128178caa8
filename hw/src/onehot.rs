//! One-hot decode, `o[k] = (idx == k)`: a QP number into its bit of a
//! per-QP bitmap (the requester's pending, shut, backlog and queued sets,
//! the core's live, NSCC and deferred-resend sets).
//!
//! Why not `1 << idx`: Yosys maps a shift of a constant as a barrel
//! shifter, chains of LUTs and MUXF7/F8/F9 (the whole core's worst path at
//! 203b38c ran through the requester's `one_qp << cfg.index`, 14 levels;
//! with the requester's shifts decoded, 12: docs/benchmarks.md "hw"); N
//! compares of `idx` with a constant are N independent B-input ANDs.

use rust_hdl::prelude::*;

/// `o` = the one-hot code of `idx` (all zeros when `idx >= N`).
#[derive(LogicBlock, Default)]
pub struct OneHot<const N: usize, const B: usize> {
    pub idx: Signal<In, Bits<B>>,
    pub o: Signal<Out, Bits<N>>,
}

impl<const N: usize, const B: usize> Logic for OneHot<N, B> {
    fn update(&mut self) {
        let k = self.idx.val().index();
        let mut o = Bits::<N>::default();
        if k < N {
            o = o.replace_bit(k, true);
        }
        self.o.next = o;
    }
    fn connect(&mut self) {
        self.o.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut s = String::from("always @(*) begin\n");
        for k in 0..N {
            s.push_str(&format!("   o[{k}] = idx == {B}'d{k};\n"));
        }
        s.push_str("end");
        Verilog::Custom(s)
    }
}
