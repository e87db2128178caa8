//! EV prober: finds the ASSUMED_BAD EVs whose probe is due and emits a
//! probe record (QP, EV index) for each, the hardware form of the golden
//! model's `EvSet::probe_due` (`proto/src/model/ev.rs`) and
//! `MrcQp::probe_ev` (`proto/src/model/mrc.rs`). The answer to a probe
//! re-admits the EV through the EV selector's readmit command
//! (`hw::ev_selector`, `adm_*`), as the model's `on_probe_response`.
//!
//! How: a scan over the EV selector's slot states, one slot {QP, EV} per
//! cycle, on the selector's scan read port (`scan_addr` / `scan_state`, a
//! copy of its state RAM). Each slot has a try count in the prober's own
//! RAM: a scan that finds the slot ASSUMED_BAD counts it up, one that
//! finds it in any other state clears it. A probe goes out on the scans
//! where the new count is 2, 4, 8, 16, 32 or 48, and the count runs from
//! 63 back to 48 (see [`probe_due`], [`next_try`]): with a sweep per
//! probe interval that is the model's backoff (the first probe one to
//! two intervals after the mark, then 2, 4, 8 and 16 intervals, then
//! every 16). A sweep starts at most every `sweep_cycles` cycles.
//!
//! Back-pressure: one probe record waits in the output register
//! (`prb_valid` until `prb_ready`); a slot whose probe is due while the
//! register is full is scanned again (the scan goes back to it), so no
//! probe is ever dropped and its count moves only when its probe is
//! taken. See `docs/hw/ev_prober.md` for the cycles.
//!
//! Const generics: `Q` QP-id bits, `E` EV-index bits, `A = Q + E` (the
//! slot address, as the selector's).

use rust_hdl::prelude::*;

use crate::ev_selector::{state, Cat};

/// Width of a slot's try count (the backoff state).
pub const TRY_BITS: usize = 6;
/// Width of the sweep pacing counter and of `sweep_cycles`.
pub const SWEEP_BITS: usize = 24;
/// The try count after the last one: the count runs 1, 2, ..., 63 and then
/// 48..=63 again, so a probe every 16 scans goes on for ever.
pub const TRY_WRAP_TO: u64 = 48;
/// The try counts at which a probe goes out: a power of two up to 32, then
/// every 16th scan (the low 4 bits zero); with one sweep per probe
/// interval the model's backoff of `probe_interval * 2^k`, k capped at
/// `PROBE_BACKOFF_MAX_SHIFT` = 4.
pub const PROBE_AT: [u64; 6] = [2, 4, 8, 16, 32, 48];

/// Whether a slot whose new try count is `count` is probed on this scan
/// (the Rust statement of the block's rule; the test's reference).
pub fn probe_due(count: u64) -> bool {
    PROBE_AT.contains(&count)
}

/// The try count after `count` (a scan that found the slot ASSUMED_BAD).
pub fn next_try(count: u64) -> u64 {
    if count == (1 << TRY_BITS) - 1 {
        TRY_WRAP_TO
    } else {
        count + 1
    }
}

/// The full instance: 256 QPs x 128 EVs (the core's EV selector).
pub type EvProberFull = EvProber<8, 7, 15>;
/// The simulated instance: 4 QPs x 8 EVs (`EvSelectorSmall`).
pub type EvProberSmall = EvProber<2, 3, 5>;

/// Scan phase.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum ScanPhase {
    /// Issuing one slot address per cycle.
    Scan,
    /// The sweep has issued its last slot; the next starts when
    /// `sweep_cycles` have passed since this one started.
    Wait,
}

/// The EV prober. See the module doc and `docs/hw/ev_prober.md`.
#[derive(LogicBlock)]
pub struct EvProber<const Q: usize, const E: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    /// The scan visits QPs `0..=qp_last` (all their EV slots).
    pub qp_last: Signal<In, Bits<Q>>,
    /// Cycles from a sweep's start to the next sweep's at the least (the
    /// probe interval); a sweep that takes longer starts the next at once.
    pub sweep_cycles: Signal<In, Bits<SWEEP_BITS>>,
    /// The EV selector's scan port: the slot read now, its state one
    /// cycle later.
    pub scan_addr: Signal<Out, Bits<A>>,
    pub scan_state: Signal<In, Bits<2>>,
    /// `scan_addr` is a slot read this cycle (its state is decided on in
    /// the next); low between sweeps and while the scan goes back to a
    /// blocked slot. The selector's port does not need it (a read is
    /// free); it says which reads count.
    pub scan_valid: Signal<Out, Bit>,
    /// A probe to send on EV `prb_ev` of QP `prb_qp` (held until
    /// `prb_ready`).
    pub prb_valid: Signal<Out, Bit>,
    pub prb_ready: Signal<In, Bit>,
    pub prb_qp: Signal<Out, Bits<Q>>,
    pub prb_ev: Signal<Out, Bits<E>>,
    /// One cycle per probe record taken (the `probes_sent` counter).
    pub cnt_probe: Signal<Out, Bit>,
    /// Per slot: the try count (0: not ASSUMED_BAD at the last scan).
    tries: RAM<Bits<TRY_BITS>, A>,
    // ---- Scan pointer (stage A: the slot whose state is read now).
    phase: DFF<ScanPhase>,
    p_qp: DFF<Bits<Q>>,
    p_ev: DFF<Bits<E>>,
    since: DFF<Bits<SWEEP_BITS>>,
    cat_rd: Cat<Q, E, A>,
    // ---- Stage B: the slot read in the cycle before, decided now.
    b_valid: DFF<Bit>,
    b_qp: DFF<Bits<Q>>,
    b_ev: DFF<Bits<E>>,
    cat_wr: Cat<Q, E, A>,
    /// The try count after this scan, if the slot is ASSUMED_BAD.
    b_count: Signal<Local, Bits<TRY_BITS>>,
    b_due: Signal<Local, Bit>,
    /// A due probe with the output register full: scan the slot again.
    b_blocked: Signal<Local, Bit>,
    run: Signal<Local, Bit>,
    last_slot: Signal<Local, Bit>,
    // ---- Output register.
    o_valid: DFF<Bit>,
    o_qp: DFF<Bits<Q>>,
    o_ev: DFF<Bits<E>>,
    // ---- Named constants.
    k_bad: Constant<Bits<2>>,
    k_try_max: Constant<Bits<TRY_BITS>>,
    k_try_wrap: Constant<Bits<TRY_BITS>>,
    k_ev_last: Constant<Bits<E>>,
    k_since_max: Constant<Bits<SWEEP_BITS>>,
    /// The counts of `PROBE_AT`.
    k_at0: Constant<Bits<TRY_BITS>>,
    k_at1: Constant<Bits<TRY_BITS>>,
    k_at2: Constant<Bits<TRY_BITS>>,
    k_at3: Constant<Bits<TRY_BITS>>,
    k_at4: Constant<Bits<TRY_BITS>>,
    k_at5: Constant<Bits<TRY_BITS>>,
}

impl<const Q: usize, const E: usize, const A: usize> Default for EvProber<Q, E, A> {
    fn default() -> Self {
        assert_eq!(A, Q + E, "A = Q + E");
        EvProber {
            clock: Default::default(),
            qp_last: Default::default(),
            sweep_cycles: Default::default(),
            scan_addr: Default::default(),
            scan_state: Default::default(),
            scan_valid: Default::default(),
            prb_valid: Default::default(),
            prb_ready: Default::default(),
            prb_qp: Default::default(),
            prb_ev: Default::default(),
            cnt_probe: Default::default(),
            tries: Default::default(),
            phase: Default::default(),
            p_qp: Default::default(),
            p_ev: Default::default(),
            since: Default::default(),
            cat_rd: Default::default(),
            b_valid: Default::default(),
            b_qp: Default::default(),
            b_ev: Default::default(),
            cat_wr: Default::default(),
            b_count: Default::default(),
            b_due: Default::default(),
            b_blocked: Default::default(),
            run: Default::default(),
            last_slot: Default::default(),
            o_valid: Default::default(),
            o_qp: Default::default(),
            o_ev: Default::default(),
            k_bad: Constant::new(state::ASSUMED_BAD.into()),
            k_try_max: Constant::new(((1u64 << TRY_BITS) - 1).into()),
            k_try_wrap: Constant::new(TRY_WRAP_TO.into()),
            k_ev_last: Constant::new(((1u64 << E) - 1).into()),
            k_since_max: Constant::new(((1u64 << SWEEP_BITS) - 1).into()),
            k_at0: Constant::new(PROBE_AT[0].into()),
            k_at1: Constant::new(PROBE_AT[1].into()),
            k_at2: Constant::new(PROBE_AT[2].into()),
            k_at3: Constant::new(PROBE_AT[3].into()),
            k_at4: Constant::new(PROBE_AT[4].into()),
            k_at5: Constant::new(PROBE_AT[5].into()),
        }
    }
}

impl<const Q: usize, const E: usize, const A: usize> Logic for EvProber<Q, E, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, phase, p_qp, p_ev, since, b_valid, b_qp, b_ev, o_valid, o_qp, o_ev);
        self.tries.read_clock.next = self.clock.val();
        self.tries.write_clock.next = self.clock.val();

        // ---- Output register: a taken record frees it.
        self.prb_valid.next = self.o_valid.q.val();
        self.prb_qp.next = self.o_qp.q.val();
        self.prb_ev.next = self.o_ev.q.val();
        self.cnt_probe.next = self.o_valid.q.val() & self.prb_ready.val();
        if self.o_valid.q.val() & self.prb_ready.val() {
            self.o_valid.d.next = false;
        }

        // ---- Stage B: decide on the slot read in the cycle before.
        self.b_count.next = self.tries.read_data.val() + 1;
        if self.tries.read_data.val() == self.k_try_max.val() {
            self.b_count.next = self.k_try_wrap.val();
        }
        self.b_due.next = self.b_valid.q.val()
            & (self.scan_state.val() == self.k_bad.val())
            & ((self.b_count.val() == self.k_at0.val())
                | (self.b_count.val() == self.k_at1.val())
                | (self.b_count.val() == self.k_at2.val())
                | (self.b_count.val() == self.k_at3.val())
                | (self.b_count.val() == self.k_at4.val())
                | (self.b_count.val() == self.k_at5.val()));
        // The register is judged as it was at the start of the cycle (a
        // record taken now frees it for the next cycle): no path from
        // `prb_ready` into the scan.
        self.b_blocked.next = self.b_due.val() & self.o_valid.q.val();
        self.cat_wr.hi.next = self.b_qp.q.val();
        self.cat_wr.lo.next = self.b_ev.q.val();
        self.tries.write_address.next = self.cat_wr.o.val();
        self.tries.write_data.next = 0.into();
        if self.scan_state.val() == self.k_bad.val() {
            self.tries.write_data.next = self.b_count.val();
        }
        self.tries.write_enable.next = self.b_valid.q.val() & !self.b_blocked.val();
        if self.b_due.val() & !self.b_blocked.val() {
            self.o_valid.d.next = true;
            self.o_qp.d.next = self.b_qp.q.val();
            self.o_ev.d.next = self.b_ev.q.val();
        }

        // ---- Stage A: issue the next slot, or go back to a blocked one.
        if self.since.q.val() != self.k_since_max.val() {
            self.since.d.next = self.since.q.val() + 1;
        }
        self.run.next = (self.phase.q.val() == ScanPhase::Scan) & !self.b_blocked.val();
        self.last_slot.next = (self.p_qp.q.val() == self.qp_last.val()) & (self.p_ev.q.val() == self.k_ev_last.val());
        self.cat_rd.hi.next = self.p_qp.q.val();
        self.cat_rd.lo.next = self.p_ev.q.val();
        self.scan_addr.next = self.cat_rd.o.val();
        self.tries.read_address.next = self.cat_rd.o.val();
        self.scan_valid.next = self.run.val();
        self.b_valid.d.next = self.run.val();
        self.b_qp.d.next = self.p_qp.q.val();
        self.b_ev.d.next = self.p_ev.q.val();
        if self.run.val() {
            self.p_ev.d.next = self.p_ev.q.val() + 1;
            if self.p_ev.q.val() == self.k_ev_last.val() {
                self.p_qp.d.next = self.p_qp.q.val() + 1;
            }
            if self.last_slot.val() {
                self.p_qp.d.next = 0.into();
                self.phase.d.next = ScanPhase::Wait;
            }
        }
        if (self.phase.q.val() == ScanPhase::Wait) & (self.since.q.val() >= self.sweep_cycles.val()) {
            self.phase.d.next = ScanPhase::Scan;
            self.since.d.next = 0.into();
        }
        if self.b_blocked.val() {
            self.p_qp.d.next = self.b_qp.q.val();
            self.p_ev.d.next = self.b_ev.q.val();
            self.phase.d.next = ScanPhase::Scan;
        }
    }
}
