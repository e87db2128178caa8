//! EV selector: the per-QP entropy-value (EV) table of MRC and its
//! round-robin spraying over GOOD EVs, in hardware. The rules are those of
//! the golden model `proto::model::ev::EvSet` (RoundRobin policy): a
//! select returns the next GOOD EV at or after the QP's pointer (wrapping)
//! and moves the pointer past it; mark-bad turns a GOOD EV ASSUMED_BAD
//! unless the QP has its `min_active` or fewer GOOD EVs (refused marks
//! are counted); deny/allow match EV values under a mask; every state
//! change is reported on the event port. A QP's EV set is EVs
//! `0..count` (set-count port, from the send context's `ev_count`): the
//! EVs beyond it are never selected, marked, denied or allowed, as the
//! model's set has only its own EVs. A readmit (a probe on the EV was
//! answered, `EvSet::on_probe_response`) turns an ASSUMED_BAD EV GOOD; a
//! scan port reads every slot's state for the EV prober
//! (`hw::ev_prober`). See `docs/hw/ev_selector.md` for the cycle timing.
//!
//! Not implemented (the model has them): the fallback when no EV is GOOD
//! (the hardware answers `rsp_none`), the slow-probe rule, the Weighted
//! policy.
//!
//! Const generics (Rust cannot compute widths from other const generics):
//! `Q` QP-id bits, `E` EV-index bits, `N = 2^E` EVs per QP, `A = Q + E`
//! table address bits, `C = E + 1` count bits.

use rust_hdl::prelude::*;

use crate::thermometer::Below;

/// EV state encodings (2 bits) on the event port.
/// (The contract's `EvNewState`, which the EV event carries.)
pub mod state {
    use contract::layout::EvNewState;
    pub const GOOD: u64 = EvNewState::Good as u64;
    pub const ASSUMED_BAD: u64 = EvNewState::AssumedBad as u64;
    pub const DENIED: u64 = EvNewState::Denied as u64;
}

/// Width of an entropy value in the table: MRC 1.0's 32-bit EV (the
/// contract's `ev_value::VALUE`).
pub const VALUE_BITS: usize = contract::config::ev_value::VALUE.bits;

/// The instance: 256 QPs x 128 EVs.
pub type EvSelectorFull = EvSelector<8, 7, 128, 15, 8>;
/// The simulated instance: 4 QPs x 8 EVs.
pub type EvSelectorSmall = EvSelector<2, 3, 8, 5, 4>;

/// log2 of the radix of the prefix-OR network in [`FindNext`].
const PREFIX_RADIX_LOG2: usize = 3;

/// Round-robin search over the GOOD bitmap with the rotation state kept as
/// a mask: `done` has bit k set iff EV k is at or before the last EV
/// selected in the current round. Outputs: `idx`, the first GOOD EV not in
/// `done` (or, when every GOOD EV is done, the first GOOD EV: the wrap);
/// `any` (false if `bits` is zero); `next_done`, the mask after selecting
/// `idx` (bits 0..=idx).
///
/// Why a mask and not an index: with the last index stored, the search
/// needs `ones << last` (a barrel shifter) in front of the tree and the
/// tree's binary answer goes back into the shifter on the next select of
/// the same QP: 6 LUTs and 15 MUXF on that loop (10 levels). With a mask
/// the loop is a prefix OR (log-depth, LUTs only) and the index tree is
/// off the loop (it only feeds the value read and the answer).
#[derive(LogicBlock, Default)]
pub struct FindNext<const N: usize, const E: usize> {
    pub bits: Signal<In, Bits<N>>,
    pub done: Signal<In, Bits<N>>,
    pub idx: Signal<Out, Bits<E>>,
    pub any: Signal<Out, Bit>,
    /// Some candidate lies outside `done` (the answer is not the wrap's).
    pub ahead: Signal<Out, Bit>,
    pub next_done: Signal<Out, Bits<N>>,
}

impl<const N: usize, const E: usize> Logic for FindNext<N, E> {
    fn update(&mut self) {
        let b = self.bits.val();
        let d = self.done.val();
        let first = |pending: &dyn Fn(usize) -> bool| (0..N).find(|&k| b.get_bit(k) && pending(k));
        let ahead = first(&|k| !d.get_bit(k));
        let pick = ahead.or_else(|| first(&|_| true));
        self.any.next = pick.is_some();
        self.ahead.next = ahead.is_some();
        // No candidate: the Verilog's tree (below) takes the right branch
        // at every level and answers N - 1; the same here, so that the
        // emitted Verilog and this model agree bit for bit (the lockstep
        // tests compare every output), even where `idx` is meaningless.
        self.idx.next = (pick.unwrap_or(N - 1) as u64).into();
        // With no GOOD EV every bit is "at or before" the (absent) pick.
        let last = pick.unwrap_or(N - 1);
        let mut nd = Bits::<N>::default();
        for k in 0..=last {
            nd = nd.replace_bit(k, true);
        }
        self.next_done.next = nd;
    }
    fn connect(&mut self) {
        self.idx.connect();
        self.any.connect();
        self.ahead.connect();
        self.next_done.connect();
    }
    fn hdl(&self) -> Verilog {
        // Index: a binary tree over the 2N-bit vector {bits, lo} (lo = the
        // GOOD EVs not yet done this round); the lowest set bit wins, its
        // position mod N is the answer. Level l has 2N >> l nodes, each an
        // (any, index) pair of l bits.
        let w = 2 * N;
        let mut s = format!(
            "wire [{h}:0] lo = bits & ~done;\nwire [{w1}:0] v = {{bits, lo}};\n",
            h = N - 1,
            w1 = w - 1
        );
        let levels = E + 1;
        for j in 0..w {
            s.push_str(&format!("wire a0_{j} = v[{j}];\n"));
        }
        for l in 1..=levels {
            for j in 0..(w >> l) {
                let (a, b) = (2 * j, 2 * j + 1);
                s.push_str(&format!("wire a{l}_{j} = a{p}_{a} | a{p}_{b};\n", p = l - 1));
                if l == 1 {
                    s.push_str(&format!("wire [0:0] i1_{j} = ~a0_{a};\n"));
                } else {
                    s.push_str(&format!(
                        "wire [{h}:0] i{l}_{j} = a{p}_{a} ? {{1'b0, i{p}_{a}}} : {{1'b1, i{p}_{b}}};\n",
                        h = l - 1,
                        p = l - 1
                    ));
                }
            }
        }
        // Next mask: inclusive prefix ORs of lo and of bits; bit k of the
        // new mask is set iff no candidate lies below k, i.e.
        // ~(prefix << 1). The prefix is a radix-8 Sklansky network (level
        // l: within blocks of 8^l, each bit ORs in the totals of the
        // earlier eighth-blocks: at most 8 inputs per gate), its levels
        // kept so that ABC cannot re-balance it into chains; the
        // shift-and-OR (Kogge-Stone) form and per-bit reductions let ABC
        // build 9- to 15-level chains of MUXF-widened LUTs, radix 4 costs
        // 360 LUTs more and radix 16 is deeper (measured, see the doc).
        let mut prefix_levels = 0;
        while (1usize << (PREFIX_RADIX_LOG2 * prefix_levels)) < N {
            prefix_levels += 1;
        }
        for (name, src) in [("pl", "lo"), ("pb", "bits")] {
            s.push_str(&format!("wire [{h}:0] {name}0 = {src};\n", h = N - 1));
            for l in 1..=prefix_levels {
                let (blk, sub) = (
                    1usize << (PREFIX_RADIX_LOG2 * l),
                    1usize << (PREFIX_RADIX_LOG2 * (l - 1)),
                );
                s.push_str(&format!("(* keep *) wire [{h}:0] {name}{l};\n", h = N - 1));
                for k in 0..N {
                    let start = k / blk * blk;
                    let mut terms = vec![format!("{name}{p}[{k}]", p = l - 1)];
                    let mut j = start;
                    while j + sub <= k / sub * sub {
                        terms.push(format!("{name}{p}[{e}]", p = l - 1, e = j + sub - 1));
                        j += sub;
                    }
                    if l == 1 {
                        // Level 1 ORs the bits themselves within its block.
                        terms = (start..=k).map(|i| format!("{name}0[{i}]")).collect();
                    }
                    s.push_str(&format!(
                        "assign {name}{l}[{k}] = {};
",
                        terms.join(" | ")
                    ));
                }
            }
        }
        s.push_str(&format!(
            "always @(*) begin\n   idx = i{levels}_0[{h}:0];\n   any = a{levels}_0;\n   ahead = pl{L}[{h1}];\n   next_done = pl{L}[{h1}] ? ~(pl{L} << 1) : ~(pb{L} << 1);\nend",
            h = E - 1,
            h1 = N - 1,
            L = prefix_levels
        ));
        Verilog::Custom(s)
    }
}

/// The select with SKIP (the model's `EvSet::select` with `take_skip`):
/// the answers of two searches, one over the candidates `cand` = the GOOD
/// EVs not to be skipped (`c_*`, a [`FindNext`] on `g & ~skip`) and one
/// over every GOOD EV (`g_*`, a [`FindNext`] on `g`), merged:
/// * a candidate exists: the first at or after the pointer (wrapping);
///   the GOOD EVs the rotation passed over on its way are to-be-skipped
///   ones (the others would have been the answer), and their skip bits
///   are cleared (each SKIP passes its EV over once). Passed over: those
///   not done and below the answer, or, when the search wrapped, those
///   not done and all below the answer;
/// * none, but some GOOD EV (every GOOD EV is to be skipped): the model's
///   rotation passes each once, clearing it, and comes back to the first:
///   the first GOOD EV at or after the pointer, every skip bit cleared.
///   With one GOOD EV or none (`many` low), the model skips nothing and
///   clears nothing (its `take_skip` needs another GOOD EV);
/// * no GOOD EV: `any` low, the skip bits unchanged.
///
/// Bit formulas, the same in `update` and the Verilog (the lockstep tests
/// compare every output): `nd` = `next_done` (the EVs up to the answer);
/// the answer is never a to-be-skipped EV, so `skip & nd` = the skip bits
/// below it.
#[derive(LogicBlock, Default)]
pub struct SkipMerge<const N: usize, const E: usize> {
    /// The QP's GOOD bitmap, its to-be-skipped bits and done mask.
    pub bits: Signal<In, Bits<N>>,
    pub skip: Signal<In, Bits<N>>,
    pub done: Signal<In, Bits<N>>,
    /// The QP has more than one GOOD EV.
    pub many: Signal<In, Bit>,
    /// The search over the candidates.
    pub c_idx: Signal<In, Bits<E>>,
    pub c_any: Signal<In, Bit>,
    pub c_ahead: Signal<In, Bit>,
    pub c_next_done: Signal<In, Bits<N>>,
    /// The search over every GOOD EV.
    pub g_idx: Signal<In, Bits<E>>,
    pub g_next_done: Signal<In, Bits<N>>,
    pub idx: Signal<Out, Bits<E>>,
    pub next_done: Signal<Out, Bits<N>>,
    pub next_skip: Signal<Out, Bits<N>>,
}

impl<const N: usize, const E: usize> Logic for SkipMerge<N, E> {
    fn update(&mut self) {
        let (sk, d) = (self.skip.val(), self.done.val());
        if self.c_any.val() {
            let nd = self.c_next_done.val();
            self.idx.next = self.c_idx.val();
            self.next_done.next = nd;
            self.next_skip.next = if self.c_ahead.val() {
                sk & (d | !nd)
            } else {
                sk & d & !nd
            };
        } else {
            self.idx.next = self.g_idx.val();
            self.next_done.next = self.g_next_done.val();
            self.next_skip.next = if self.many.val() { sk & !self.bits.val() } else { sk };
        }
    }
    fn connect(&mut self) {
        self.idx.connect();
        self.next_done.connect();
        self.next_skip.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "always @(*) begin\n   idx = c_any ? c_idx : g_idx;\n   next_done = c_any ? c_next_done : g_next_done;\n   next_skip = c_any ? (c_ahead ? (skip & (done | ~c_next_done)) : (skip & done & ~c_next_done)) : (many ? (skip & ~bits) : skip);\nend"
                .into(),
        )
    }
}

/// `o` = `i` with bit `idx` set to `val`; `cur` = `i[idx]`.
#[derive(LogicBlock, Default)]
pub struct BitUpd<const N: usize, const E: usize> {
    pub i: Signal<In, Bits<N>>,
    pub idx: Signal<In, Bits<E>>,
    pub val: Signal<In, Bit>,
    pub o: Signal<Out, Bits<N>>,
    pub cur: Signal<Out, Bit>,
}

impl<const N: usize, const E: usize> Logic for BitUpd<N, E> {
    fn update(&mut self) {
        let k = self.idx.val().index();
        let i = self.i.val();
        self.cur.next = k < N && i.get_bit(k);
        self.o.next = if k < N { i.replace_bit(k, self.val.val()) } else { i };
    }
    fn connect(&mut self) {
        self.o.connect();
        self.cur.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "wire [{h}:0] oh = {{{{{z}{{1'b0}}}}, 1'b1}} << idx;\nalways @(*) begin\n   o = val ? (i | oh) : (i & ~oh);\n   cur = |(i & oh);\nend",
            h = N - 1,
            z = N - 1
        ))
    }
}

/// `o = {hi, lo}`.
#[derive(LogicBlock, Default)]
pub struct Cat<const H: usize, const L: usize, const O: usize> {
    pub hi: Signal<In, Bits<H>>,
    pub lo: Signal<In, Bits<L>>,
    pub o: Signal<Out, Bits<O>>,
}

impl<const H: usize, const L: usize, const O: usize> Logic for Cat<H, L, O> {
    fn update(&mut self) {
        let mut o = Bits::<O>::default();
        o.set_bits::<L>(0, self.lo.val());
        o.set_bits::<H>(L, self.hi.val());
        self.o.next = o;
    }
    fn connect(&mut self) {
        self.o.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom("always @(*) o = {hi, lo};".into())
    }
}

/// Stage-1 meta: the per-QP RAM outputs, or the write of the previous
/// cycle when it was to the same QP (`hit`, registered in stage 0).
#[derive(LogicBlock, Default)]
pub struct Fwd<const Q: usize, const N: usize, const E: usize, const C: usize> {
    pub hit: Signal<In, Bit>,
    pub fw_nb: Signal<In, Bits<N>>,
    pub fw_done: Signal<In, Bits<N>>,
    pub fw_cnt: Signal<In, Bits<C>>,
    pub fw_sk: Signal<In, Bits<N>>,
    pub ram_nb: Signal<In, Bits<N>>,
    pub ram_done: Signal<In, Bits<N>>,
    pub ram_cnt: Signal<In, Bits<C>>,
    pub ram_sk: Signal<In, Bits<N>>,
    pub nb: Signal<Out, Bits<N>>,
    pub done: Signal<Out, Bits<N>>,
    pub cnt: Signal<Out, Bits<C>>,
    pub sk: Signal<Out, Bits<N>>,
}

impl<const Q: usize, const N: usize, const E: usize, const C: usize> Logic for Fwd<Q, N, E, C> {
    fn update(&mut self) {
        let f = self.hit.val();
        self.nb.next = if f { self.fw_nb.val() } else { self.ram_nb.val() };
        self.done.next = if f { self.fw_done.val() } else { self.ram_done.val() };
        self.cnt.next = if f { self.fw_cnt.val() } else { self.ram_cnt.val() };
        self.sk.next = if f { self.fw_sk.val() } else { self.ram_sk.val() };
    }
    fn connect(&mut self) {
        self.nb.connect();
        self.done.connect();
        self.cnt.connect();
        self.sk.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "always @(*) begin\n   nb = hit ? fw_nb : ram_nb;\n   done = hit ? fw_done : ram_done;\n   cnt = hit ? fw_cnt : ram_cnt;\n   sk = hit ? fw_sk : ram_sk;\nend"
                .into(),
        )
    }
}

/// `o = sel ? {hi1, lo1} : {hi0, lo0}`.
#[derive(LogicBlock, Default)]
pub struct AddrMux<const H: usize, const L: usize, const O: usize> {
    pub sel: Signal<In, Bit>,
    pub hi0: Signal<In, Bits<H>>,
    pub lo0: Signal<In, Bits<L>>,
    pub hi1: Signal<In, Bits<H>>,
    pub lo1: Signal<In, Bits<L>>,
    pub o: Signal<Out, Bits<O>>,
}

impl<const H: usize, const L: usize, const O: usize> Logic for AddrMux<H, L, O> {
    fn update(&mut self) {
        let (h, l) = if self.sel.val() {
            (self.hi1.val(), self.lo1.val())
        } else {
            (self.hi0.val(), self.lo0.val())
        };
        let mut o = Bits::<O>::default();
        o.set_bits::<L>(0, l);
        o.set_bits::<H>(L, h);
        self.o.next = o;
    }
    fn connect(&mut self) {
        self.o.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom("always @(*) o = sel ? {hi1, lo1} : {hi0, lo0};".into())
    }
}

// Operation codes in pipeline stage 1 (`s1_op`; literals in the hdl_gen
// body, which emits Rust constants as undefined Verilog names):
// 0 none, 1 select, 2 mark-bad, 3 deny/allow (or set-count), 4 write,
// 5 readmit, 6 skip.
// EV states in `st_ram` / the event port: see [`state`].

/// The EV selector. See the module doc and `docs/hw/ev_selector.md`.
///
/// At most one of `sel_valid`, `mark_valid`, `ctl_valid`, `wr_valid`,
/// `set_valid`, `adm_valid` is taken per cycle (priority in that order;
/// the others are dropped), and none while `busy` is high.
#[derive(LogicBlock)]
pub struct EvSelector<const Q: usize, const E: usize, const N: usize, const A: usize, const C: usize> {
    pub clock: Signal<In, Clock>,
    /// Select: the next EV of `sel_qp`; the answer two cycles later.
    pub sel_valid: Signal<In, Bit>,
    pub sel_qp: Signal<In, Bits<Q>>,
    pub rsp_valid: Signal<Out, Bit>,
    pub rsp_qp: Signal<Out, Bits<Q>>,
    pub rsp_ev: Signal<Out, Bits<E>>,
    pub rsp_value: Signal<Out, Bits<VALUE_BITS>>,
    /// No GOOD EV in the QP: `rsp_ev` / `rsp_value` meaningless.
    pub rsp_none: Signal<Out, Bit>,
    /// Mark-bad (loss / timeout / stall on `mark_ev` of `mark_qp`).
    pub mark_valid: Signal<In, Bit>,
    pub mark_qp: Signal<In, Bits<Q>>,
    pub mark_ev: Signal<In, Bits<E>>,
    /// The mark is a retransmission timeout's (its event says so), else
    /// a loss's (inferred from SACKs, or a stall).
    pub mark_timeout: Signal<In, Bit>,
    /// The mark is a SKIP instead (the model's `EvSet::skip_once`, also
    /// what its stall suspicion sets): a GOOD EV is passed over by the
    /// QP's next visit of the rotation while another GOOD EV exists; any
    /// other EV is left alone. No event, no guard.
    pub mark_skip: Signal<In, Bit>,
    /// Deny (`ctl_allow` low) or allow every EV of `ctl_qp` whose value
    /// matches `ctl_value` under `ctl_mask`. Iterates: `busy` for N + 3 cycles.
    pub ctl_valid: Signal<In, Bit>,
    pub ctl_allow: Signal<In, Bit>,
    pub ctl_qp: Signal<In, Bits<Q>>,
    pub ctl_mask: Signal<In, Bits<VALUE_BITS>>,
    pub ctl_value: Signal<In, Bits<VALUE_BITS>>,
    /// Control plane: load the value of EV `wr_ev` of `wr_qp`; with
    /// `wr_set_ptr` the QP's next select also starts its search at `wr_ev`
    /// (the done mask is set to the EVs below `wr_ev`).
    pub wr_valid: Signal<In, Bit>,
    pub wr_set_ptr: Signal<In, Bit>,
    pub wr_qp: Signal<In, Bits<Q>>,
    pub wr_ev: Signal<In, Bits<E>>,
    pub wr_value: Signal<In, Bits<VALUE_BITS>>,
    /// Control plane: the QP (re)starts with the EV set `0..set_count`
    /// (the send context's `ev_count`); the others are never selected,
    /// marked, denied or allowed. The QP's ASSUMED_BAD EVs become GOOD
    /// (those were the NIC's verdicts for the QP number's previous user;
    /// the model's new QP starts with every EV GOOD), without events;
    /// DENIED EVs stay DENIED (the control plane's, which it allows
    /// itself). Iterates (`busy` for N + 3 cycles). Power-up: every QP
    /// has all N EVs.
    pub set_valid: Signal<In, Bit>,
    pub set_qp: Signal<In, Bits<Q>>,
    pub set_count: Signal<In, Bits<C>>,
    /// With the set-count: the QP's `min_active` (the send context's
    /// `ev_min_active`): a mark-bad that would leave fewer GOOD EVs than
    /// this is refused. Power-up: 0 (no guard).
    pub set_min: Signal<In, Bits<C>>,
    /// Readmit (a probe on EV `adm_ev` of `adm_qp` was answered, the
    /// model's `EvSet::on_probe_response`): an ASSUMED_BAD EV of the QP's
    /// set becomes GOOD, with an event; any other EV is left alone.
    pub adm_valid: Signal<In, Bit>,
    pub adm_qp: Signal<In, Bits<Q>>,
    pub adm_ev: Signal<In, Bits<E>>,
    /// Scan read port (the EV prober's): `scan_state` is the state of
    /// slot `scan_addr` = {QP, EV} one cycle after the address, from a
    /// copy of the state RAM that every state write also writes, so the
    /// scan never waits for the command pipeline.
    pub scan_addr: Signal<In, Bits<A>>,
    pub scan_state: Signal<Out, Bits<2>>,
    pub busy: Signal<Out, Bit>,
    /// State change (one per cycle at most): the EV's index and its
    /// value (the control plane knows EVs by value, as the model's
    /// `EvStateChange::ev`).
    pub evt_valid: Signal<Out, Bit>,
    pub evt_qp: Signal<Out, Bits<Q>>,
    pub evt_ev: Signal<Out, Bits<E>>,
    pub evt_value: Signal<Out, Bits<VALUE_BITS>>,
    pub evt_from: Signal<Out, Bits<2>>,
    pub evt_to: Signal<Out, Bits<2>>,
    /// The change is a mark-bad with `mark_timeout` set.
    pub evt_timeout: Signal<Out, Bit>,
    /// Mark-bad commands refused by the guard, all QPs.
    pub refused: Signal<Out, Bits<32>>,
    // ---- Storage. Per QP: not-GOOD bitmap, done mask (the RR pointer: EVs at or before the last selected), not-GOOD count
    // (all zero at power-up: every EV GOOD, pointer 0). Per EV: state, value.
    // An EV outside the QP's set counts as not GOOD in the bitmap and the
    // count: the search and the guard then need no per-QP limit (the
    // select path is unchanged), and GOOD = N - count stays exact.
    nb_ram: RAM<Bits<N>, Q>,
    done_ram: RAM<Bits<N>, Q>,
    cnt_ram: RAM<Bits<C>, Q>,
    /// Per QP: the to-be-skipped bitmap (bit i: GOOD EV i is passed over
    /// by its next visit; only GOOD EVs have the bit, as the model's state
    /// changes clear it). Written and forwarded with the other meta.
    sk_ram: RAM<Bits<N>, Q>,
    /// Per QP: N - the set's size (zero at power-up: all N EVs in the set).
    /// Written only by a set-count command, which holds stage 0 for a
    /// cycle at least, so its reads need no forwarding.
    xcl_ram: RAM<Bits<C>, Q>,
    /// Per QP: the guard's threshold on the not-GOOD count, N - min_active,
    /// stored inverted so that the RAM's power-up zeros mean "never
    /// refuse" (min_active 0), and read without a subtract on the mark's
    /// path. Written like `xcl_ram`, so no forwarding either.
    thr_ram: RAM<Bits<C>, Q>,
    st_ram: RAM<Bits<2>, A>,
    /// The scan port's copy of `st_ram` (same writes, its own read port).
    st_scan: RAM<Bits<2>, A>,
    val_ram: RAM<Bits<VALUE_BITS>, A>,
    n_const: Constant<Bits<C>>,
    /// N - 1: a not-GOOD count below it leaves two GOOD EVs or more.
    n1_const: Constant<Bits<C>>,
    // ---- Stage 1 registers.
    s1_op: DFF<Bits<3>>,
    s1_qp: DFF<Bits<Q>>,
    s1_ev: DFF<Bits<E>>,
    s1_timeout: DFF<Bit>,
    s1_allow: DFF<Bit>,
    s1_mask: DFF<Bits<VALUE_BITS>>,
    s1_value: DFF<Bits<VALUE_BITS>>,
    s1_setptr: DFF<Bit>,
    /// Operation 3 is a set-count (`s1_count`), not a deny/allow.
    s1_lim: DFF<Bit>,
    s1_count: DFF<Bits<C>>,
    s1_min: DFF<Bits<C>>,
    /// The command in stage 1 is a readmit (operation 5): the bitmap bit
    /// of `s1_ev` is cleared, not set.
    s1_adm: DFF<Bit>,
    /// `s1_ev` as a count, compared with the set's size (a readmit).
    s1_ev_c: Signal<Local, Bits<C>>,
    /// N - `s1_min` (to store, inverted), and the QP's threshold read back.
    thr_new: Signal<Local, Bits<C>>,
    thr_cur: Signal<Local, Bits<C>>,
    /// The QP's set size (from `xcl_ram`), and N - `s1_count` (to store).
    /// Local C-bit signals: an inline `a - b` in a compare is evaluated
    /// wider in the emitted Verilog.
    lim_cur: Signal<Local, Bits<C>>,
    lim_xcl: Signal<Local, Bits<C>>,
    /// The command in stage 1 is a mark-bad: the value read is the marked
    /// EV's, for its event (a register, so that the read address only
    /// selects: the select's index is the stage's deepest path).
    s1_mark: DFF<Bit>,
    // ---- Forwarding of the last per-QP write.
    /// Stage 0's QP is stage 1's: compared with each command's QP beside
    /// the pick, not after it (the compare after the pick's address mux
    /// was a path of 11 levels from the core's TX signals).
    addr_hit: Signal<Local, Bit>,
    fw_hit: DFF<Bit>,
    fw_nb: DFF<Bits<N>>,
    fw_done: DFF<Bits<N>>,
    fw_cnt: DFF<Bits<C>>,
    fw_sk: DFF<Bits<N>>,
    // ---- Stage 1 combinational.
    fwd: Fwd<Q, N, E, C>,
    /// The select: the search over the candidates (GOOD, not to be
    /// skipped), the one over every GOOD EV, and their merge.
    findc: FindNext<N, E>,
    find: FindNext<N, E>,
    merge: SkipMerge<N, E>,
    /// The QP has two GOOD EVs or more (the model skips only then).
    many: Signal<Local, Bit>,
    /// A skip: the to-be-skipped bitmap with the EV's bit set.
    upd_sk: BitUpd<N, E>,
    /// The to-be-skipped bitmap to write with a mark-bad (the marked EV's
    /// bit cleared) and at the end of a pass (the bits of EVs no longer
    /// GOOD cleared).
    sk_mark: Signal<Local, Bits<N>>,
    below: Below<N, E>,
    upd1: BitUpd<N, E>,
    // ---- Stage 2 (response) registers.
    s2_valid: DFF<Bit>,
    s2_qp: DFF<Bits<Q>>,
    s2_ev: DFF<Bits<E>>,
    s2_none: DFF<Bit>,
    // ---- Deny/allow iteration.
    f_busy: DFF<Bit>,
    f_qp: DFF<Bits<Q>>,
    f_allow: DFF<Bit>,
    f_mask: DFF<Bits<VALUE_BITS>>,
    f_value: DFF<Bits<VALUE_BITS>>,
    f_nb: DFF<Bits<N>>,
    f_done: DFF<Bits<N>>,
    f_cnt: DFF<Bits<C>>,
    f_sk: DFF<Bits<N>>,
    f_i: DFF<Bits<C>>,
    f_v: DFF<Bit>,
    f_e: DFF<Bits<E>>,
    /// The iteration is a set-count (rebuild the bitmap and count), not a
    /// deny/allow.
    f_set: DFF<Bit>,
    /// The set's size during the iteration, and whether EV `f_e` is in it.
    f_lim: DFF<Bits<C>>,
    f_in: DFF<Bit>,
    f_match: Signal<Local, Bit>,
    /// The new bitmap bit (not GOOD) of EV `f_e`.
    f_bit: Signal<Local, Bit>,
    upd2: BitUpd<N, E>,
    // ---- Address concatenation.
    cat_vr: AddrMux<Q, E, A>,
    cat_vw: Cat<Q, E, A>,
    cat_sr: AddrMux<Q, E, A>,
    cat_sw: AddrMux<Q, E, A>,
    // ---- Outputs.
    e_valid: DFF<Bit>,
    e_qp: DFF<Bits<Q>>,
    e_ev: DFF<Bits<E>>,
    e_from: DFF<Bits<2>>,
    e_to: DFF<Bits<2>>,
    /// The event's EV value: a deny/allow takes it from the value read
    /// for its match; a mark's is on the value RAM's output in the
    /// event's cycle (`e_mark`).
    e_value: DFF<Bits<VALUE_BITS>>,
    e_mark: DFF<Bit>,
    e_timeout: DFF<Bit>,
    n_refused: DFF<Bits<32>>,
    take: Signal<Local, Bit>,
}

impl<const Q: usize, const E: usize, const N: usize, const A: usize, const C: usize> Default
    for EvSelector<Q, E, N, A, C>
{
    fn default() -> Self {
        assert_eq!(N, 1 << E, "N = 2^E");
        assert_eq!(A, Q + E, "A = Q + E");
        assert_eq!(C, E + 1, "C = E + 1");
        EvSelector {
            clock: Default::default(),
            sel_valid: Default::default(),
            sel_qp: Default::default(),
            rsp_valid: Default::default(),
            rsp_qp: Default::default(),
            rsp_ev: Default::default(),
            rsp_value: Default::default(),
            rsp_none: Default::default(),
            mark_valid: Default::default(),
            mark_qp: Default::default(),
            mark_ev: Default::default(),
            mark_timeout: Default::default(),
            mark_skip: Default::default(),
            ctl_valid: Default::default(),
            ctl_allow: Default::default(),
            ctl_qp: Default::default(),
            ctl_mask: Default::default(),
            ctl_value: Default::default(),
            wr_valid: Default::default(),
            wr_set_ptr: Default::default(),
            wr_qp: Default::default(),
            wr_ev: Default::default(),
            wr_value: Default::default(),
            set_valid: Default::default(),
            set_qp: Default::default(),
            set_count: Default::default(),
            set_min: Default::default(),
            adm_valid: Default::default(),
            adm_qp: Default::default(),
            adm_ev: Default::default(),
            scan_addr: Default::default(),
            scan_state: Default::default(),
            busy: Default::default(),
            evt_valid: Default::default(),
            evt_qp: Default::default(),
            evt_ev: Default::default(),
            evt_value: Default::default(),
            evt_from: Default::default(),
            evt_to: Default::default(),
            evt_timeout: Default::default(),
            refused: Default::default(),
            nb_ram: Default::default(),
            done_ram: Default::default(),
            cnt_ram: Default::default(),
            sk_ram: Default::default(),
            xcl_ram: Default::default(),
            thr_ram: Default::default(),
            st_ram: Default::default(),
            st_scan: Default::default(),
            val_ram: Default::default(),
            n_const: Constant::new((N as u64).into()),
            n1_const: Constant::new((N as u64 - 1).into()),
            s1_op: Default::default(),
            s1_qp: Default::default(),
            s1_ev: Default::default(),
            s1_timeout: Default::default(),
            s1_allow: Default::default(),
            s1_mask: Default::default(),
            s1_value: Default::default(),
            s1_setptr: Default::default(),
            s1_lim: Default::default(),
            s1_count: Default::default(),
            s1_min: Default::default(),
            s1_adm: Default::default(),
            s1_ev_c: Default::default(),
            thr_new: Default::default(),
            thr_cur: Default::default(),
            lim_cur: Default::default(),
            lim_xcl: Default::default(),
            s1_mark: Default::default(),
            addr_hit: Default::default(),
            fw_hit: Default::default(),
            fw_nb: Default::default(),
            fw_done: Default::default(),
            fw_cnt: Default::default(),
            fw_sk: Default::default(),
            fwd: Default::default(),
            findc: Default::default(),
            find: Default::default(),
            merge: Default::default(),
            many: Default::default(),
            upd_sk: Default::default(),
            sk_mark: Default::default(),
            below: Default::default(),
            upd1: Default::default(),
            s2_valid: Default::default(),
            s2_qp: Default::default(),
            s2_ev: Default::default(),
            s2_none: Default::default(),
            f_busy: Default::default(),
            f_qp: Default::default(),
            f_allow: Default::default(),
            f_mask: Default::default(),
            f_value: Default::default(),
            f_nb: Default::default(),
            f_done: Default::default(),
            f_cnt: Default::default(),
            f_sk: Default::default(),
            f_i: Default::default(),
            f_v: Default::default(),
            f_e: Default::default(),
            f_set: Default::default(),
            f_lim: Default::default(),
            f_in: Default::default(),
            f_match: Default::default(),
            f_bit: Default::default(),
            upd2: Default::default(),
            cat_vr: Default::default(),
            cat_vw: Default::default(),
            cat_sr: Default::default(),
            cat_sw: Default::default(),
            e_valid: Default::default(),
            e_qp: Default::default(),
            e_ev: Default::default(),
            e_from: Default::default(),
            e_to: Default::default(),
            e_value: Default::default(),
            e_mark: Default::default(),
            e_timeout: Default::default(),
            n_refused: Default::default(),
            take: Default::default(),
        }
    }
}

impl<const Q: usize, const E: usize, const N: usize, const A: usize, const C: usize> Logic
    for EvSelector<Q, E, N, A, C>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, s1_op, s1_qp, s1_ev, s1_allow, s1_mask, s1_value, s1_setptr, s1_lim, s1_count, s1_min, s1_adm,
            s1_mark, fw_hit, fw_nb, fw_done, fw_cnt, fw_sk, f_sk, s2_valid, s2_qp, s2_ev, s2_none, f_busy, f_qp,
            f_allow, f_mask, f_value, f_nb, f_done, f_cnt, f_i, f_v, f_e, f_set, f_lim, f_in, e_valid, e_qp, e_ev,
            e_from, e_to, e_value, e_mark, n_refused, s1_timeout, e_timeout
        );
        self.nb_ram.read_clock.next = self.clock.val();
        self.nb_ram.write_clock.next = self.clock.val();
        self.done_ram.read_clock.next = self.clock.val();
        self.done_ram.write_clock.next = self.clock.val();
        self.cnt_ram.read_clock.next = self.clock.val();
        self.cnt_ram.write_clock.next = self.clock.val();
        self.sk_ram.read_clock.next = self.clock.val();
        self.sk_ram.write_clock.next = self.clock.val();
        self.xcl_ram.read_clock.next = self.clock.val();
        self.xcl_ram.write_clock.next = self.clock.val();
        self.thr_ram.read_clock.next = self.clock.val();
        self.thr_ram.write_clock.next = self.clock.val();
        self.st_ram.read_clock.next = self.clock.val();
        self.st_ram.write_clock.next = self.clock.val();
        self.st_scan.read_clock.next = self.clock.val();
        self.st_scan.write_clock.next = self.clock.val();
        self.val_ram.read_clock.next = self.clock.val();
        self.val_ram.write_clock.next = self.clock.val();

        // ---- Stage 0: take one command, read the QP's meta.
        self.take.next = !self.f_busy.q.val() & (self.s1_op.q.val() != 3);
        self.busy.next = !self.take.val();
        self.s1_op.d.next = 0.into();
        self.s1_mark.d.next = false;
        self.s1_timeout.d.next = false;
        self.s1_lim.d.next = false;
        self.s1_adm.d.next = false;
        self.nb_ram.read_address.next = self.sel_qp.val();
        self.addr_hit.next = self.s1_qp.q.val() == self.sel_qp.val();
        if self.take.val() {
            if self.sel_valid.val() {
                self.s1_op.d.next = 1.into();
                self.nb_ram.read_address.next = self.sel_qp.val();
                self.addr_hit.next = self.s1_qp.q.val() == self.sel_qp.val();
                self.s1_qp.d.next = self.sel_qp.val();
            } else if self.mark_valid.val() {
                self.s1_op.d.next = 2.into();
                if self.mark_skip.val() {
                    self.s1_op.d.next = 6.into();
                }
                self.s1_mark.d.next = true;
                self.nb_ram.read_address.next = self.mark_qp.val();
                self.addr_hit.next = self.s1_qp.q.val() == self.mark_qp.val();
                self.s1_qp.d.next = self.mark_qp.val();
                self.s1_ev.d.next = self.mark_ev.val();
                self.s1_timeout.d.next = self.mark_timeout.val();
            } else if self.ctl_valid.val() {
                self.s1_op.d.next = 3.into();
                self.nb_ram.read_address.next = self.ctl_qp.val();
                self.addr_hit.next = self.s1_qp.q.val() == self.ctl_qp.val();
                self.s1_qp.d.next = self.ctl_qp.val();
                self.s1_allow.d.next = self.ctl_allow.val();
                self.s1_mask.d.next = self.ctl_mask.val();
                self.s1_value.d.next = self.ctl_value.val();
            } else if self.wr_valid.val() {
                self.s1_op.d.next = 4.into();
                self.nb_ram.read_address.next = self.wr_qp.val();
                self.addr_hit.next = self.s1_qp.q.val() == self.wr_qp.val();
                self.s1_qp.d.next = self.wr_qp.val();
                self.s1_ev.d.next = self.wr_ev.val();
                self.s1_value.d.next = self.wr_value.val();
                self.s1_setptr.d.next = self.wr_set_ptr.val();
            } else if self.set_valid.val() {
                self.s1_op.d.next = 3.into();
                self.s1_lim.d.next = true;
                self.nb_ram.read_address.next = self.set_qp.val();
                self.addr_hit.next = self.s1_qp.q.val() == self.set_qp.val();
                self.s1_qp.d.next = self.set_qp.val();
                self.s1_count.d.next = self.set_count.val();
                self.s1_min.d.next = self.set_min.val();
            } else if self.adm_valid.val() {
                // Readmit: its stage 1 decides on the bitmap bit and the
                // EV's state (read now, on `cat_sr`), like a mark-bad
                // reads the EV's value for its event.
                self.s1_op.d.next = 5.into();
                self.s1_adm.d.next = true;
                self.s1_mark.d.next = true;
                self.nb_ram.read_address.next = self.adm_qp.val();
                self.addr_hit.next = self.s1_qp.q.val() == self.adm_qp.val();
                self.s1_qp.d.next = self.adm_qp.val();
                self.s1_ev.d.next = self.adm_ev.val();
            }
        }
        self.done_ram.read_address.next = self.nb_ram.read_address.val();
        self.cnt_ram.read_address.next = self.nb_ram.read_address.val();
        self.sk_ram.read_address.next = self.nb_ram.read_address.val();
        self.xcl_ram.read_address.next = self.nb_ram.read_address.val();
        self.thr_ram.read_address.next = self.nb_ram.read_address.val();
        // Forward next cycle iff the command now in stage 1 is to the same
        // QP and writes (or writes back) its meta this cycle: select, mark
        // and write always present the QP's current meta on the write data
        // (changed or not), so forwarding it is right even when the write
        // enable stays low. Deny/allow writes at its end, while `busy`
        // holds stage 0 empty.
        self.fw_hit.d.next = ((self.s1_op.q.val() == 1)
            | (self.s1_op.q.val() == 2)
            | (self.s1_op.q.val() == 4)
            | (self.s1_op.q.val() == 5)
            | (self.s1_op.q.val() == 6))
            & self.addr_hit.val();

        // ---- Stage 1: meta with forwarding of last cycle's write.
        self.fwd.hit.next = self.fw_hit.q.val();
        self.fwd.fw_nb.next = self.fw_nb.q.val();
        self.fwd.fw_done.next = self.fw_done.q.val();
        self.fwd.fw_cnt.next = self.fw_cnt.q.val();
        self.fwd.fw_sk.next = self.fw_sk.q.val();
        self.fwd.ram_nb.next = self.nb_ram.read_data.val();
        self.fwd.ram_done.next = self.done_ram.read_data.val();
        self.fwd.ram_cnt.next = self.cnt_ram.read_data.val();
        self.fwd.ram_sk.next = self.sk_ram.read_data.val();
        self.find.bits.next = !self.fwd.nb.val();
        self.find.done.next = self.fwd.done.val();
        self.findc.bits.next = !self.fwd.nb.val() & !self.fwd.sk.val();
        self.findc.done.next = self.fwd.done.val();
        self.many.next = self.fwd.cnt.val() < self.n1_const.val();
        self.merge.bits.next = !self.fwd.nb.val();
        self.merge.skip.next = self.fwd.sk.val();
        self.merge.done.next = self.fwd.done.val();
        self.merge.many.next = self.many.val();
        self.merge.c_idx.next = self.findc.idx.val();
        self.merge.c_any.next = self.findc.any.val();
        self.merge.c_ahead.next = self.findc.ahead.val();
        self.merge.c_next_done.next = self.findc.next_done.val();
        self.merge.g_idx.next = self.find.idx.val();
        self.merge.g_next_done.next = self.find.next_done.val();
        self.upd_sk.i.next = self.fwd.sk.val();
        self.upd_sk.idx.next = self.s1_ev.q.val();
        self.upd_sk.val.next = true;
        self.below.idx.next = self.s1_ev.q.val();
        self.upd1.i.next = self.fwd.nb.val();
        self.upd1.idx.next = self.s1_ev.q.val();
        self.upd1.val.next = !self.s1_adm.q.val();

        // Per-QP write port (defaults: write back what was read).
        self.nb_ram.write_enable.next = false;
        self.done_ram.write_enable.next = false;
        self.cnt_ram.write_enable.next = false;
        self.nb_ram.write_address.next = self.s1_qp.q.val();
        self.done_ram.write_address.next = self.s1_qp.q.val();
        self.cnt_ram.write_address.next = self.s1_qp.q.val();
        self.nb_ram.write_data.next = self.fwd.nb.val();
        self.done_ram.write_data.next = self.fwd.done.val();
        self.cnt_ram.write_data.next = self.fwd.cnt.val();
        self.sk_ram.write_data.next = self.fwd.sk.val();
        self.sk_mark.next = self.fwd.sk.val() & !self.upd1.o.val();

        // Table ports.
        self.cat_vr.sel.next = self.f_busy.q.val();
        self.cat_vr.hi0.next = self.s1_qp.q.val();
        // A select reads the value of the EV it found; a mark-bad that of
        // the marked EV (its event carries it).
        self.cat_vr.lo0.next = self.merge.idx.val();
        if self.s1_mark.q.val() {
            self.cat_vr.lo0.next = self.s1_ev.q.val();
        }
        self.cat_vr.hi1.next = self.f_qp.q.val();
        self.cat_vr.lo1.next = bit_cast::<E, C>(self.f_i.q.val());
        self.cat_vw.hi.next = self.s1_qp.q.val();
        self.cat_vw.lo.next = self.s1_ev.q.val();
        // The state read: the deny/allow pass's EV while busy, else a
        // readmit's EV in stage 0 (read for its stage 1).
        self.cat_sr.sel.next = self.f_busy.q.val();
        self.cat_sr.hi0.next = self.adm_qp.val();
        self.cat_sr.lo0.next = self.adm_ev.val();
        self.cat_sr.hi1.next = self.f_qp.q.val();
        self.cat_sr.lo1.next = bit_cast::<E, C>(self.f_i.q.val());
        self.cat_sw.sel.next = self.f_busy.q.val();
        self.cat_sw.hi0.next = self.s1_qp.q.val();
        self.cat_sw.lo0.next = self.s1_ev.q.val();
        self.cat_sw.hi1.next = self.f_qp.q.val();
        self.cat_sw.lo1.next = self.f_e.q.val();
        self.val_ram.read_address.next = self.cat_vr.o.val();
        self.val_ram.write_address.next = self.cat_vw.o.val();
        self.val_ram.write_data.next = self.s1_value.q.val();
        self.val_ram.write_enable.next = false;
        self.st_ram.read_address.next = self.cat_sr.o.val();
        self.st_ram.write_address.next = self.cat_sw.o.val();
        self.st_ram.write_data.next = 1.into();
        self.st_ram.write_enable.next = false;

        self.s2_valid.d.next = false;
        self.e_valid.d.next = false;
        self.e_mark.d.next = false;
        self.e_timeout.d.next = false;

        if self.s1_op.q.val() == 1 {
            self.s2_valid.d.next = true;
            self.s2_qp.d.next = self.s1_qp.q.val();
            self.s2_ev.d.next = self.merge.idx.val();
            self.s2_none.d.next = !self.find.any.val();
            if self.find.any.val() {
                self.nb_ram.write_enable.next = true;
                self.done_ram.write_enable.next = true;
                self.cnt_ram.write_enable.next = true;
            }
        }
        if (self.s1_op.q.val() == 2) & !self.upd1.cur.val() {
            if self.fwd.cnt.val() >= self.thr_cur.val() {
                self.n_refused.d.next = self.n_refused.q.val() + 1;
            } else {
                self.nb_ram.write_data.next = self.upd1.o.val();
                self.cnt_ram.write_data.next = self.fwd.cnt.val() + 1;
                self.sk_ram.write_data.next = self.sk_mark.val();
                self.nb_ram.write_enable.next = true;
                self.done_ram.write_enable.next = true;
                self.cnt_ram.write_enable.next = true;
                self.st_ram.write_enable.next = true;
                self.e_valid.d.next = true;
                self.e_qp.d.next = self.s1_qp.q.val();
                self.e_ev.d.next = self.s1_ev.q.val();
                self.e_from.d.next = 0.into();
                self.e_to.d.next = 1.into();
                self.e_mark.d.next = true;
                self.e_timeout.d.next = self.s1_timeout.q.val();
            }
        }
        // Skip: a GOOD EV's bit set (the model's `skip_once`; the bitmap
        // says GOOD only for EVs inside the set).
        if (self.s1_op.q.val() == 6) & !self.upd1.cur.val() {
            self.sk_ram.write_data.next = self.upd_sk.o.val();
            self.nb_ram.write_enable.next = true;
            self.done_ram.write_enable.next = true;
            self.cnt_ram.write_enable.next = true;
        }
        if self.s1_op.q.val() == 4 {
            self.val_ram.write_enable.next = true;
            if self.s1_setptr.q.val() {
                self.done_ram.write_data.next = self.below.o.val();
                self.nb_ram.write_enable.next = true;
                self.done_ram.write_enable.next = true;
                self.cnt_ram.write_enable.next = true;
            }
        }
        // Set size: stored as N - count so that the RAM's power-up zeros
        // mean "all N EVs" (modulo 2^C both ways: any count round-trips).
        self.lim_cur.next = self.n_const.val() - self.xcl_ram.read_data.val();
        self.lim_xcl.next = self.n_const.val() - self.s1_count.q.val();
        self.xcl_ram.write_enable.next = false;
        self.xcl_ram.write_address.next = self.s1_qp.q.val();
        self.xcl_ram.write_data.next = self.lim_xcl.val();
        self.thr_new.next = self.n_const.val() - self.s1_min.q.val();
        self.thr_cur.next = !self.thr_ram.read_data.val();
        self.thr_ram.write_enable.next = false;
        self.thr_ram.write_address.next = self.s1_qp.q.val();
        self.thr_ram.write_data.next = !self.thr_new.val();
        // Readmit: only an ASSUMED_BAD EV of the set, i.e. not GOOD in
        // the (forwarded) bitmap, not DENIED, and inside the set. The
        // state read in stage 0 can be one write old only where a mark-bad
        // in the cycle before made the EV ASSUMED_BAD (the read says
        // GOOD): DENIED is written only by the deny/allow pass, which
        // holds stage 0 until its writes are done.
        self.s1_ev_c.next = bit_cast::<C, E>(self.s1_ev.q.val());
        if (self.s1_op.q.val() == 5)
            & self.upd1.cur.val()
            & (self.st_ram.read_data.val() != 2)
            & (self.s1_ev_c.val() < self.lim_cur.val())
        {
            self.nb_ram.write_data.next = self.upd1.o.val();
            self.cnt_ram.write_data.next = self.fwd.cnt.val() - 1;
            self.nb_ram.write_enable.next = true;
            self.done_ram.write_enable.next = true;
            self.cnt_ram.write_enable.next = true;
            self.st_ram.write_data.next = 0.into();
            self.st_ram.write_enable.next = true;
            self.e_valid.d.next = true;
            self.e_qp.d.next = self.s1_qp.q.val();
            self.e_ev.d.next = self.s1_ev.q.val();
            self.e_from.d.next = 1.into();
            self.e_to.d.next = 0.into();
            self.e_mark.d.next = true;
        }
        if self.s1_op.q.val() == 3 {
            if self.s1_lim.q.val() {
                self.xcl_ram.write_enable.next = true;
                self.thr_ram.write_enable.next = true;
            }
            // Every deny / allow and set-count passes (a set-count also
            // clears ASSUMED_BAD, so it passes even at the same size).
            self.f_busy.d.next = true;
            self.f_qp.d.next = self.s1_qp.q.val();
            self.f_allow.d.next = self.s1_allow.q.val();
            self.f_mask.d.next = self.s1_mask.q.val();
            self.f_value.d.next = self.s1_value.q.val();
            self.f_nb.d.next = self.fwd.nb.val();
            self.f_done.d.next = self.fwd.done.val();
            self.f_cnt.d.next = self.fwd.cnt.val();
            self.f_sk.d.next = self.fwd.sk.val();
            self.f_i.d.next = 0.into();
            self.f_v.d.next = false;
            self.f_set.d.next = self.s1_lim.q.val();
            self.f_lim.d.next = self.lim_cur.val();
            if self.s1_lim.q.val() {
                self.f_lim.d.next = self.s1_count.q.val();
            }
        }

        // ---- Deny/allow iteration: read EV f_i, decide on EV f_e.
        self.upd2.i.next = self.f_nb.q.val();
        self.upd2.idx.next = self.f_e.q.val();
        // Deny sets the bit, allow clears it; a set-count makes it "outside
        // the set, or DENIED" (ASSUMED_BAD becomes GOOD, in the set or
        // not; DENIED is kept, so an EV that comes back into the set keeps
        // the control plane's verdict).
        self.f_bit.next = !self.f_allow.q.val();
        if self.f_set.q.val() {
            self.f_bit.next = !self.f_in.q.val() | (self.st_ram.read_data.val() == 2);
        }
        self.upd2.val.next = self.f_bit.val();
        self.f_match.next =
            (self.val_ram.read_data.val() & self.f_mask.q.val()) == (self.f_value.q.val() & self.f_mask.q.val());
        if self.f_busy.q.val() {
            self.f_v.d.next = false;
            if self.f_i.q.val() != self.n_const.val() {
                self.f_v.d.next = true;
                self.f_e.d.next = bit_cast::<E, C>(self.f_i.q.val());
                self.f_in.d.next = self.f_i.q.val() < self.f_lim.q.val();
                self.f_i.d.next = self.f_i.q.val() + 1;
            }
            // A set-count: ASSUMED_BAD -> GOOD without an event; the
            // bitmap and the not-GOOD count follow the set.
            if self.f_v.q.val() & self.f_set.q.val() {
                // (States as in `state`: 0 GOOD, 1 ASSUMED_BAD, 2 DENIED.)
                if self.st_ram.read_data.val() == 1 {
                    self.st_ram.write_data.next = 0.into();
                    self.st_ram.write_enable.next = true;
                }
                self.f_nb.d.next = self.upd2.o.val();
                if self.f_bit.val() & !self.upd2.cur.val() {
                    self.f_cnt.d.next = self.f_cnt.q.val() + 1;
                }
                if !self.f_bit.val() & self.upd2.cur.val() {
                    self.f_cnt.d.next = self.f_cnt.q.val() - 1;
                }
            }
            // Deny/allow: EVs outside the set do not exist for it (as the
            // model's set has only `0..len()`).
            if self.f_v.q.val() & self.f_match.val() & self.f_in.q.val() & !self.f_set.q.val() {
                if self.f_allow.q.val() {
                    if self.st_ram.read_data.val() == 2 {
                        self.st_ram.write_data.next = 0.into();
                        self.st_ram.write_enable.next = true;
                        self.f_nb.d.next = self.upd2.o.val();
                        self.f_cnt.d.next = self.f_cnt.q.val() - 1;
                        self.e_valid.d.next = true;
                        self.e_from.d.next = 2.into();
                        self.e_to.d.next = 0.into();
                    }
                } else if self.st_ram.read_data.val() != 2 {
                    self.st_ram.write_data.next = 2.into();
                    self.st_ram.write_enable.next = true;
                    self.f_nb.d.next = self.upd2.o.val();
                    if self.st_ram.read_data.val() == 0 {
                        self.f_cnt.d.next = self.f_cnt.q.val() + 1;
                    }
                    self.e_valid.d.next = true;
                    self.e_from.d.next = self.st_ram.read_data.val();
                    self.e_to.d.next = 2.into();
                }
                self.e_qp.d.next = self.f_qp.q.val();
                self.e_ev.d.next = self.f_e.q.val();
                self.e_value.d.next = self.val_ram.read_data.val();
            }
            if (self.f_i.q.val() == self.n_const.val()) & !self.f_v.q.val() {
                self.f_busy.d.next = false;
                self.nb_ram.write_address.next = self.f_qp.q.val();
                self.done_ram.write_address.next = self.f_qp.q.val();
                self.cnt_ram.write_address.next = self.f_qp.q.val();
                self.nb_ram.write_data.next = self.f_nb.q.val();
                self.done_ram.write_data.next = self.f_done.q.val();
                self.cnt_ram.write_data.next = self.f_cnt.q.val();
                // The model's state changes clear the changed EVs' skips.
                self.sk_ram.write_data.next = self.f_sk.q.val() & !self.f_nb.q.val();
                self.nb_ram.write_enable.next = true;
                self.done_ram.write_enable.next = true;
                self.cnt_ram.write_enable.next = true;
            }
        }
        // The select's new mask is assigned last (the conditions above are
        // exclusive of it) so that it is the last mux before the RAM write
        // data and `fw_done`: it is on the select-to-select loop.
        if (self.s1_op.q.val() == 1) & self.find.any.val() {
            self.done_ram.write_data.next = self.merge.next_done.val();
            self.sk_ram.write_data.next = self.merge.next_skip.val();
        }
        // Every per-QP write writes the whole meta (`nb`, `done`, `cnt`,
        // `sk`) under one enable and one address.
        self.sk_ram.write_enable.next = self.nb_ram.write_enable.val();
        self.sk_ram.write_address.next = self.nb_ram.write_address.val();
        // The scan port's copy takes every state write.
        self.st_scan.write_address.next = self.st_ram.write_address.val();
        self.st_scan.write_data.next = self.st_ram.write_data.val();
        self.st_scan.write_enable.next = self.st_ram.write_enable.val();
        self.st_scan.read_address.next = self.scan_addr.val();
        self.scan_state.next = self.st_scan.read_data.val();
        self.fw_nb.d.next = self.nb_ram.write_data.val();
        self.fw_done.d.next = self.done_ram.write_data.val();
        self.fw_cnt.d.next = self.cnt_ram.write_data.val();
        self.fw_sk.d.next = self.sk_ram.write_data.val();

        // ---- Stage 2: response.
        self.rsp_valid.next = self.s2_valid.q.val();
        self.rsp_qp.next = self.s2_qp.q.val();
        self.rsp_ev.next = self.s2_ev.q.val();
        self.rsp_none.next = self.s2_none.q.val();
        self.rsp_value.next = self.val_ram.read_data.val();
        self.evt_valid.next = self.e_valid.q.val();
        self.evt_qp.next = self.e_qp.q.val();
        self.evt_ev.next = self.e_ev.q.val();
        self.evt_value.next = self.e_value.q.val();
        if self.e_mark.q.val() {
            self.evt_value.next = self.val_ram.read_data.val();
        }
        self.evt_from.next = self.e_from.q.val();
        self.evt_to.next = self.e_to.q.val();
        self.evt_timeout.next = self.e_timeout.q.val();
        self.refused.next = self.n_refused.q.val();
    }
}
