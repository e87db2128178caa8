//! Per-QP RTT estimate from the SACKs' timestamp echoes, and the stall
//! allowance and stall age derived from it, as the golden model's EV set
//! keeps them (`EvSet::on_ack`, `stall_allowance`, `stall_age`). The
//! arithmetic is `proto::model::rtt_fixed::RttFixed`'s, bit for bit. The
//! retransmit engine takes each result into a RAM of its own and uses it
//! beside its configured allowance and age. See `docs/hw/rtt_est.md`.
//!
//! One sample at a time (a sequencer of 8 states, a sample every 8 cycles): the QP's state is read
//! from block RAM, updated with additions only (`srtt` and `rttvar` are
//! kept as `8 srtt` and `4 rttvar`, RFC 6298's integer form), the bounds
//! are derived, the state is written back and the result presented before
//! the next sample is taken, so samples of the same QP back to back need
//! no bypass.

use rust_hdl::prelude::*;

use crate::param::Param;

/// One QP's estimate (101 bits; `base` 0: no sample yet).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct RttWord {
    /// `8 * srtt`, ns.
    pub srtt8: Bits<35>,
    /// `4 * rttvar`, ns.
    pub rttvar4: Bits<34>,
    /// Smallest sample, ns.
    pub base: Bits<32>,
}

/// The floor of the allowance, ns (`proto::model::ev::STALL_MIN`; the
/// block's test checks the two agree).
pub const STALL_MIN_NS: u64 = 2_000;
/// The allowance is at least this many base RTTs
/// (`proto::model::ev::STALL_RTTS`): the block doubles the base with a
/// shift.
pub const STALL_RTTS: u64 = 2;

/// The sequencer's states.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum RttState {
    /// Take a sample; its QP's word is read.
    Idle,
    /// The word is on the RAM's output: the parts the update keeps.
    Load,
    /// The sample's deviation from `srtt`.
    Dev,
    /// The new `srtt8`, `rttvar4` and base.
    Update,
    /// `srtt + 4 rttvar` and twice the base.
    Spread,
    /// The spread less the base (0 if below).
    Over,
    /// The allowance: the largest of that, twice the base and the floor.
    Allow,
    /// The age; the word is written back.
    Write,
}

/// The estimator. Ports are described in `docs/hw/rtt_est.md`.
#[derive(LogicBlock, Default)]
pub struct RttEstimator {
    pub clock: Signal<In, Clock>,
    /// The sample's time, ns (the clock the echoes were unwrapped
    /// against): the core drives the SACK's arrival (the RX path's
    /// `op_fb.arrival`), so a wait for the retransmit engine is no part of
    /// the sample.
    pub now_ns: Signal<In, Bits<32>>,
    // Samples.
    pub s_valid: Signal<In, Bit>,
    pub s_ready: Signal<Out, Bit>,
    /// Start the QP: its estimate cleared (no sample).
    pub s_init: Signal<In, Bit>,
    pub s_qp: Signal<In, Bits<8>>,
    /// The SACK's timestamp echo, ns.
    pub s_echo_ns: Signal<In, Bits<32>>,
    // Results, one per sample (no ready: the taker has a RAM write port).
    pub out_valid: Signal<Out, Bit>,
    pub out_qp: Signal<Out, Bits<8>>,
    /// Stall allowance, ns (0: no sample).
    pub out_allowance: Signal<Out, Bits<32>>,
    /// Stall age, ns (0: no sample).
    pub out_age: Signal<Out, Bits<32>>,
    ram: RAM<RttWord, 8>,
    k_floor: Param<36, STALL_MIN_NS>,
    /// Where the results saturate: 2^31 - 1 ns (the engine compares its
    /// 32-bit times modulo 2^32, so a deadline is within 2^31 ns).
    k_ns_max: Param<32, 0x7FFF_FFFF>,
    state: DFF<RttState>,
    // The sample.
    r_qp: DFF<Bits<8>>,
    r_init: DFF<Bit>,
    /// `now - echo`; 0 when that is 0 or negative (not a sample).
    r_rtt: DFF<Bits<32>>,
    // What the update keeps of the old word, and its results.
    k_srtt: DFF<Bits<32>>,
    k_srtt8: DFF<Bits<35>>,
    k_rv4: DFF<Bits<34>>,
    s_srtt8: DFF<Bits<35>>,
    s_rv4: DFF<Bits<34>>,
    s_base: DFF<Bits<32>>,
    dev: DFF<Bits<32>>,
    sum: DFF<Bits<36>>,
    base2: DFF<Bits<33>>,
    over: DFF<Bits<36>>,
    allow: DFF<Bits<36>>,
    // Output.
    o_valid: DFF<Bit>,
    o_allow: DFF<Bits<32>>,
    o_age: DFF<Bits<32>>,
    // Combinational.
    interval: Signal<Local, Bits<32>>,
    /// The word's fields on the RAM's output (a field's bits are taken
    /// from these: Yosys reads no part-select of a struct field).
    ld_srtt8: Signal<Local, Bits<35>>,
    ld_rv4: Signal<Local, Bits<34>>,
    first: Signal<Local, Bit>,
    srtt_new: Signal<Local, Bits<32>>,
    spread: Signal<Local, Bits<36>>,
    a_floor: Signal<Local, Bits<36>>,
    a_max: Signal<Local, Bits<36>>,
    age: Signal<Local, Bits<37>>,
}

impl Logic for RttEstimator {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, r_qp, r_init, r_rtt, k_srtt, k_srtt8, k_rv4, s_srtt8, s_rv4, s_base, dev, sum, base2,
            over, allow, o_valid, o_allow, o_age
        );
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();

        self.s_ready.next = self.state.q.val() == RttState::Idle;
        if self.state.q.val() == RttState::Idle {
            self.ram.read_address.next = self.s_qp.val();
        } else {
            self.ram.read_address.next = self.r_qp.q.val();
        }
        self.ram.write_address.next = self.r_qp.q.val();
        self.ram.write_data.next.srtt8 = self.s_srtt8.q.val();
        self.ram.write_data.next.rttvar4 = self.s_rv4.q.val();
        self.ram.write_data.next.base = self.s_base.q.val();
        self.ram.write_enable.next = self.state.q.val() == RttState::Write;

        self.out_valid.next = self.o_valid.q.val();
        self.out_qp.next = self.r_qp.q.val();
        self.out_allowance.next = self.o_allow.q.val();
        self.out_age.next = self.o_age.q.val();
        self.o_valid.d.next = false;

        // A sample is a positive interval: an echo from the future (or
        // from before a wrap of the 32-bit clock) is none.
        self.interval.next = self.now_ns.val() - self.s_echo_ns.val();
        self.ld_srtt8.next = self.ram.read_data.val().srtt8;
        self.ld_rv4.next = self.ram.read_data.val().rttvar4;
        self.first.next = !self.s_base.q.val().any();
        self.srtt_new.next = self.s_srtt8.q.val().get_bits::<32>(3);
        self.spread.next = 0.into();
        if self.sum.q.val() > bit_cast::<36, 32>(self.s_base.q.val()) {
            self.spread.next = self.sum.q.val() - bit_cast::<36, 32>(self.s_base.q.val());
        }
        // max(spread, floor), then max(that, twice the base).
        self.a_floor.next = self.k_floor.val();
        if self.over.q.val() > self.k_floor.val() {
            self.a_floor.next = self.over.q.val();
        }
        self.a_max.next = self.a_floor.val();
        if bit_cast::<36, 33>(self.base2.q.val()) > self.a_floor.val() {
            self.a_max.next = bit_cast::<36, 33>(self.base2.q.val());
        }
        self.age.next = bit_cast::<37, 32>(self.srtt_new.val()) + bit_cast::<37, 36>(self.allow.q.val());

        match self.state.q.val() {
            RttState::Idle => {
                if self.s_valid.val() {
                    self.r_qp.d.next = self.s_qp.val();
                    self.r_init.d.next = self.s_init.val();
                    self.r_rtt.d.next = self.interval.val();
                    if self.interval.val().get_bit(31) {
                        self.r_rtt.d.next = 0.into();
                    }
                    self.state.d.next = RttState::Load;
                }
            }
            RttState::Load => {
                self.k_srtt.d.next = self.ld_srtt8.val().get_bits::<32>(3);
                self.k_srtt8.d.next = self.ld_srtt8.val() - bit_cast::<35, 32>(self.ld_srtt8.val().get_bits::<32>(3));
                self.k_rv4.d.next = self.ld_rv4.val() - (self.ld_rv4.val() >> 2);
                self.s_srtt8.d.next = self.ld_srtt8.val();
                self.s_rv4.d.next = self.ld_rv4.val();
                self.s_base.d.next = self.ram.read_data.val().base;
                if self.r_init.q.val() {
                    self.s_srtt8.d.next = 0.into();
                    self.s_rv4.d.next = 0.into();
                    self.s_base.d.next = 0.into();
                }
                self.state.d.next = RttState::Dev;
            }
            RttState::Dev => {
                if self.r_rtt.q.val() > self.k_srtt.q.val() {
                    self.dev.d.next = self.r_rtt.q.val() - self.k_srtt.q.val();
                } else {
                    self.dev.d.next = self.k_srtt.q.val() - self.r_rtt.q.val();
                }
                self.state.d.next = RttState::Update;
            }
            RttState::Update => {
                // An INIT, or a record that was no sample, leaves the word
                // as loaded (cleared for an INIT).
                if !self.r_init.q.val() & self.r_rtt.q.val().any() {
                    if self.first.val() {
                        self.s_srtt8.d.next = bit_cast::<35, 32>(self.r_rtt.q.val()) << 3;
                        self.s_rv4.d.next = bit_cast::<34, 32>(self.r_rtt.q.val()) << 1;
                    } else {
                        self.s_srtt8.d.next = self.k_srtt8.q.val() + bit_cast::<35, 32>(self.r_rtt.q.val());
                        self.s_rv4.d.next = self.k_rv4.q.val() + bit_cast::<34, 32>(self.dev.q.val());
                    }
                    if self.first.val() | (self.r_rtt.q.val() < self.s_base.q.val()) {
                        self.s_base.d.next = self.r_rtt.q.val();
                    }
                }
                self.state.d.next = RttState::Spread;
            }
            RttState::Spread => {
                self.sum.d.next = bit_cast::<36, 32>(self.srtt_new.val()) + bit_cast::<36, 34>(self.s_rv4.q.val());
                self.base2.d.next = bit_cast::<33, 32>(self.s_base.q.val()) << 1;
                self.state.d.next = RttState::Over;
            }
            RttState::Over => {
                self.over.d.next = self.spread.val();
                self.state.d.next = RttState::Allow;
            }
            RttState::Allow => {
                self.allow.d.next = self.a_max.val();
                self.state.d.next = RttState::Write;
            }
            RttState::Write => {
                // No sample yet: both 0 (the rules off).
                self.o_valid.d.next = true;
                self.o_allow.d.next = 0.into();
                self.o_age.d.next = 0.into();
                if self.s_base.q.val().any() {
                    self.o_allow.d.next = self.k_ns_max.val();
                    if !self.allow.q.val().get_bits::<5>(31).any() {
                        self.o_allow.d.next = self.allow.q.val().get_bits::<32>(0);
                    }
                    self.o_age.d.next = self.k_ns_max.val();
                    if !self.age.val().get_bits::<6>(31).any() {
                        self.o_age.d.next = self.age.val().get_bits::<32>(0);
                    }
                }
                self.state.d.next = RttState::Idle;
            }
            _ => {
                self.state.d.next = RttState::Idle;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_width() {
        assert_eq!(RttWord::BITS, 101);
    }
}
