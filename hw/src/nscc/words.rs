//! The NSCC unit's RAM word, a `LogicStruct` so that the block reads and
//! writes named fields. Field order is bit order (the first field at
//! bit 0). The fields are those of `proto::model::nscc_fixed::NsccFixed`.

use rust_hdl::prelude::*;

/// One QP's controller state (250 bits).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct NsccStateWord {
    /// Window, bytes with 8 fractional bits.
    pub cwnd: Bits<40>,
    /// Base RTT (smallest seen, at most the configured one), ns.
    pub base: Bits<32>,
    /// Queueing delay of the last RTT sample, ns.
    pub delay: Bits<32>,
    /// Slow delay average, ns with 8 fractional bits.
    pub avg: Bits<40>,
    /// Bytes acked in the current near-zero-delay streak (saturating).
    pub streak: Bits<32>,
    /// Time of the last decrease (or timeout), ns, and whether there was one.
    pub last_dec: Bits<32>,
    pub last_dec_valid: Bit,
    /// The window the receiver's penalty first capped, and whether it did.
    pub pre: Bits<40>,
    pub pre_valid: Bit,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_width() {
        assert_eq!(NsccStateWord::BITS, 250);
    }
}

/// One feedback record as the core queues it for the block (its `fb_*`
/// inputs): the CC gate's ACK, LOSS, TIMEOUT and INIT operations of a
/// QP, with what the ACK's SACK said about congestion.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct NsccFeedback {
    /// `kind::INIT`, `ACK`, `LOSS` or `TIMEOUT`.
    pub kind: Bits<2>,
    pub qp: Bits<8>,
    /// ACK: bytes newly acknowledged; LOSS: bytes lost or trimmed.
    pub bytes: Bits<32>,
    pub ecn: Bit,
    pub rtt_valid: Bit,
    pub rtt_ns: Bits<32>,
    pub penalty: Bits<7>,
    pub restore: Bit,
    /// When the operation happened, ns.
    pub now_ns: Bits<32>,
}
