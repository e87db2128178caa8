//! A record's PSN against its QP's window: the retransmit engine's
//! classification of a SENT or NACK record, computed in the cycle that
//! takes the record (or in `Classify`) and registered for `Load`, once per
//! word it may come from (the state RAM's output, or the word being
//! stored, forwarded), so that the choice between the two comes after the
//! subtracts and compares, not before.

use rust_hdl::prelude::*;

use super::WINDOW;
use crate::param::Param;

/// Combinational: with `in_flight = next_psn - una` (mod 2^24),
/// `is_new`: `psn` is `next_psn` and the window has room (fewer than
/// `WINDOW` PSNs in flight); `is_resend`: `psn` is outstanding
/// (`psn - una < in_flight`). The model's `on_sent` rules. The room test
/// takes `psn - una`, equal to `in_flight` when `psn` is `next_psn`: the
/// two subtracts run side by side, and only the resend test waits for
/// both. `below_una` / `below_next`: `psn` is serially before `una` /
/// `next_psn` (the sign of the difference; the NACK rules).
#[derive(LogicBlock, Default)]
pub struct PsnClass {
    pub psn: Signal<In, Bits<24>>,
    pub next_psn: Signal<In, Bits<24>>,
    pub una: Signal<In, Bits<24>>,
    pub is_new: Signal<Out, Bit>,
    pub is_resend: Signal<Out, Bit>,
    pub below_una: Signal<Out, Bit>,
    pub below_next: Signal<Out, Bit>,
    /// `psn - next_psn`.
    past_next: Signal<Local, Bits<24>>,
    in_flight: Signal<Local, Bits<24>>,
    /// `psn - una`: how far into the window `psn` is.
    offset: Signal<Local, Bits<24>>,
    window: Param<24, { WINDOW as u64 }>,
}

impl Logic for PsnClass {
    #[hdl_gen]
    fn update(&mut self) {
        self.in_flight.next = self.next_psn.val() - self.una.val();
        self.offset.next = self.psn.val() - self.una.val();
        self.is_new.next = (self.psn.val() == self.next_psn.val()) & (self.offset.val() < self.window.val());
        self.is_resend.next = self.offset.val() < self.in_flight.val();
        self.past_next.next = self.psn.val() - self.next_psn.val();
        self.below_una.next = self.offset.val().get_bit(23);
        self.below_next.next = self.past_next.val().get_bit(23);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(psn: u32, next: u32, una: u32) -> (bool, bool, bool, bool) {
        let mut uut = PsnClass::default();
        uut.connect_all();
        uut.psn.next = u64::from(psn).into();
        uut.next_psn.next = u64::from(next).into();
        uut.una.next = u64::from(una).into();
        for _ in 0..4 {
            uut.update_all();
        }
        (
            uut.is_new.val(),
            uut.is_resend.val(),
            uut.below_una.val(),
            uut.below_next.val(),
        )
    }

    /// Around a window that wraps the PSN space: una, the PSNs in flight,
    /// next (new only while the window has room), and beyond.
    #[test]
    fn classifies_against_the_window() {
        const MASK: u32 = 0xFF_FFFF;
        for una in [0, 5, MASK - 3] {
            for in_flight in [0, 1, 7, WINDOW - 1, WINDOW] {
                let next = (una + in_flight) & MASK;
                for off in 0..WINDOW + 3 {
                    let psn = (una + off) & MASK;
                    let want = (
                        off == in_flight && in_flight < WINDOW,
                        off < in_flight,
                        false,
                        off < in_flight,
                    );
                    assert_eq!(classify(psn, next, una), want, "una {una:#x} +{in_flight}, psn +{off}");
                }
                // Serially before una: neither new nor a resend, below both.
                for back in [1, 2, WINDOW, 1 << 22] {
                    let psn = una.wrapping_sub(back) & MASK;
                    assert_eq!(
                        classify(psn, next, una),
                        (false, false, true, true),
                        "una {una:#x} -{back}"
                    );
                }
            }
        }
    }
}
