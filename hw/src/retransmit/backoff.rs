//! The backoff unit: `ack_timeout(min(t + shift, 24))` in ns, where `t`
//! is the QP's timeout exponent (RTO = 1.024 us x 2^t) and `shift` the
//! backoff's doubling count (0..=10). The model caps the backoff at
//! `ack_timeout(24)`; on exponents that cap is the `min`, and the value
//! is one bit: `1024 << e` ns, at most 2^34 ns (17.2 s), which the
//! engine's 36-bit time compares serially. The shift amount is
//! registered when loaded and the result registered every cycle, so
//! `value` is the backoff of the last loaded shift two cycles after the
//! load: the RAM output, the shift's selection, the exponent's add and
//! cap and the deadline add that uses it are never in one path.

use rust_hdl::prelude::*;

use super::TIME_BITS;

#[derive(LogicBlock)]
pub struct Backoff {
    pub clock: Signal<In, Clock>,
    /// The QP's timeout exponent `t`.
    pub exp: Signal<In, Bits<5>>,
    /// Take `shift` this cycle.
    pub load: Signal<In, Bit>,
    pub shift: Signal<In, Bits<5>>,
    /// `1024 << min(t + shift, 24)` ns.
    pub value: Signal<Out, Bits<TIME_BITS>>,
    shift_r: DFF<Bits<5>>,
    value_r: DFF<Bits<TIME_BITS>>,
    sum: Signal<Local, Bits<6>>,
    e: Signal<Local, Bits<6>>,
    /// 1.024 us in ns.
    unit: Constant<Bits<TIME_BITS>>,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            exp: Default::default(),
            load: Default::default(),
            shift: Default::default(),
            value: Default::default(),
            shift_r: Default::default(),
            value_r: Default::default(),
            sum: Default::default(),
            e: Default::default(),
            unit: Constant::new(1024u64.into()),
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
        self.sum.next = bit_cast::<6, 5>(self.exp.val()) + bit_cast::<6, 5>(self.shift_r.q.val());
        // The model's cap, `MAX_ACK_TIMEOUT_EXP` = 24 (of `t` and of the
        // backoff).
        if self.sum.val() > 24 {
            self.e.next = 24.into();
        } else {
            self.e.next = self.sum.val();
        }
        self.value_r.d.next = self.unit.val() << bit_cast::<TIME_BITS, 6>(self.e.val());
        self.value.next = self.value_r.q.val();
    }
}
