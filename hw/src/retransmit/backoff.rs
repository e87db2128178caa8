//! The backoff unit: the QP's RTO shifted by a shift amount, saturated
//! at 2^31 - 1 ns (the serial time comparisons need deadlines within half
//! the 32-bit range). The shift amount is registered when loaded and the
//! result registered every cycle, so `value` is the backoff of the last
//! loaded shift two cycles after the load: the RAM output, the shift's
//! selection, the barrel shift with its saturation and the deadline add
//! that uses it are never in one path.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct Backoff {
    pub clock: Signal<In, Clock>,
    /// The QP's base RTO, ns.
    pub rto: Signal<In, Bits<32>>,
    /// Take `shift` this cycle.
    pub load: Signal<In, Bit>,
    pub shift: Signal<In, Bits<5>>,
    /// `rto << shift`, saturated.
    pub value: Signal<Out, Bits<32>>,
    shift_r: DFF<Bits<5>>,
    value_r: DFF<Bits<32>>,
    wide: Signal<Local, Bits<64>>,
    /// The saturation line.
    max_backoff: Constant<Bits<32>>,
}

/// The saturation line: 2^31 - 1 ns.
pub const MAX_BACKOFF: u64 = 0x7FFF_FFFF;

impl Default for Backoff {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            rto: Default::default(),
            load: Default::default(),
            shift: Default::default(),
            value: Default::default(),
            shift_r: Default::default(),
            value_r: Default::default(),
            wide: Default::default(),
            max_backoff: Constant::new(MAX_BACKOFF.into()),
        }
    }
}

impl Logic for Backoff {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, shift_r, value_r);
        if self.load.val() {
            self.shift_r.d.next = self.shift.val();
        }
        self.wide.next = bit_cast::<64, 32>(self.rto.val()) << bit_cast::<64, 5>(self.shift_r.q.val());
        if self.wide.val().get_bits::<33>(31).any() {
            self.value_r.d.next = self.max_backoff.val();
        } else {
            self.value_r.d.next = self.wide.val().get_bits::<32>(0);
        }
        self.value.next = self.value_r.q.val();
    }
}
