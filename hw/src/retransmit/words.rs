//! The retransmit engine's RAM words, each a `LogicStruct` so that the
//! engine reads and writes named fields. Field order is bit order (the
//! first field at bit 0); `spare_*` fields are unused bits of the word,
//! always written 0.

use rust_hdl::prelude::*;

/// One outstanding PSN, in the slot RAM at `{qp, psn mod WINDOW}`.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct SlotWord {
    /// EV of the PSN's last transmission.
    pub ev: Bits<7>,
    pub spare_ev: Bit,
    /// Its sequence on that EV (the per-EV reorder rule).
    pub seq: Bits<16>,
    /// Send time of the last transmission, ns (bits 31-0: the packet's
    /// `tx_ts`, the stall rule, the tail check and the NACK echo) ...
    pub time: Bits<32>,
    /// ... and its bits 35-32 (the RTO's 36-bit time).
    pub time_hi: Bits<4>,
    pub len: Bits<16>,
    /// Timeouts so far (the backoff's k and the retry budget).
    pub retries: Bits<5>,
    pub spare_retries: Bits<3>,
    /// Acknowledged.
    pub acked: Bit,
    /// Sent more than once (Karn: no RTT or stall-rule sample from it).
    pub resent: Bit,
    /// A resend has been queued and not yet sent.
    pub queued: Bit,
    /// An out-of-window NACK waits for una to advance or the RTO.
    pub oow: Bit,
}

/// Per (QP, EV), in the EV RAM at `{qp, ev}`.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct EvWord {
    /// Sequence of the next transmission on the EV.
    pub next_seq: Bits<16>,
    /// Highest acknowledged sequence (first transmissions only) ...
    pub max_seq: Bits<16>,
    /// ... if there is one.
    pub max_valid: Bit,
}

/// Per QP, in the QP state RAM.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct QpWord {
    pub una: Bits<24>,
    pub next_psn: Bits<24>,
    /// Latest send time among acknowledged first transmissions (the stall
    /// rule's line) ...
    pub hw: Bits<32>,
    /// ... if there is one.
    pub hw_valid: Bit,
    /// RTO deadline, ns, 36 bits ...
    pub deadline: Bits<36>,
    /// ... if armed.
    pub armed: Bit,
    /// The QP is in error (retry budget spent).
    pub error: Bit,
    /// A slot may be waiting after an out-of-window NACK: set by the
    /// NACK, cleared by a loss pass that ran with `una` advancing (which
    /// queues every waiting slot). While it is set a SACK that moves
    /// `una` runs the loss pass (the waiting slots' rule reads `una`).
    pub oow_wait: Bit,
    /// No per-EV hole: every live slot's sequence is above its EV's
    /// highest acknowledged one, so the per-EV rule can take none. Set by
    /// INIT and when nothing is outstanding; kept by a SACK whose every
    /// newly acknowledged first transmission is the next sequence on its
    /// EV (a send takes a sequence above every acknowledged one, and an
    /// acknowledgement, a queued slot or a resend only removes live
    /// slots); cleared by any other SACK. It lets a SACK with PSNs above
    /// the new una skip the loss pass (docs/hw/retransmit.md).
    pub no_ev_hole: Bit,
    pub spare: Bits<7>,
}

/// Per QP, the tail check (docs/model-mrc.md 2.5.2), in the tail RAM.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct TailWord {
    pub deadline: Bits<32>,
    pub armed: Bit,
    /// Checks that acted in a row without an acknowledgement.
    pub blind: Bits<2>,
    /// An acknowledgement arrived since the last check.
    pub acked: Bit,
    /// Arrival of the last trim NACK, ns (low 32 bits of `now`) ...
    pub trim_at: Bits<32>,
    /// ... if there was one: evidence against every live packet sent
    /// before it (the fabric was cutting this QP's packets).
    pub trim_valid: Bit,
    /// The last tail probe's slot (`psn mod WINDOW`: the probed PSN stays
    /// outstanding until acknowledged, so its slot names it) ...
    pub probe_slot: Bits<8>,
    /// ... and the send time of the transmission it repeated: its
    /// acknowledgement, whichever copy arrived, raises `hw` to that time ...
    pub probe_time: Bits<32>,
    /// ... while it is not acknowledged.
    pub probe_valid: Bit,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words keep the widths of the RAMs they describe.
    #[test]
    fn word_widths() {
        assert_eq!(SlotWord::BITS, 88);
        assert_eq!(EvWord::BITS, 33);
        assert_eq!(QpWord::BITS, 128);
        assert_eq!(TailWord::BITS, 110);
    }
}

/// A record for the engine as the core's arbiter chooses it and the
/// core's input stage holds it (`rt_rec`, `rt_in`): the fields of the
/// engine's `op_*` ports but the SACK's feedback (`SackFeedback`, held
/// beside it).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct EngineRecord {
    /// `op_kind`: a `kind::*` value.
    pub kind: Bits<{ super::KIND_BITS }>,
    pub qp: Bits<8>,
    pub psn: Bits<24>,
    pub ev: Bits<7>,
    pub time: Bits<32>,
    pub len: Bits<16>,
    pub base: Bits<24>,
    pub bitmap: Bits<64>,
    pub trigger: Bits<24>,
}

/// What a SACK tells the congestion controller besides the PSNs it
/// acknowledges (the model's `AckSample` minus the bytes, which the
/// engine counts): taken with the SACK record, reported with its
/// acknowledgement (`ack_*`), for the NSCC unit.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct SackFeedback {
    /// The SACK carries feedback (a SACK, not the answer to a probe,
    /// which the model takes no sample from): `echo` is an RTT sample.
    pub sample: Bit,
    /// The SACK echoes CE marks (MRC 1.0 SETH cc_flags, legacy
    /// ecn_ce_count: non-zero).
    pub ecn: Bit,
    /// CC_STATE cwnd penalty (MRC 1.0; 0 on the legacy wire).
    pub penalty: Bits<7>,
    /// CC_STATE restore bit (MRC 1.0; 0 on the legacy wire).
    pub restore: Bit,
    /// SETH m = SKIP_ONCE (MRC 1.0; 0 on the legacy wire): the EV the
    /// SACK names (`op_ev`) is skipped once and noted congested.
    pub skip: Bit,
    /// SETH m = ALWAYS_SKIP (MRC 1.0): the EV the SACK names is marked.
    pub always_skip: Bit,
    /// MRC 1.0: the SACK names its trigger (`op_trigger`, the model's
    /// `cum + ack_psn_offset`): the trigger's own EV, found from its slot,
    /// takes the sample and the m field, not `op_ev`. Legacy: the EV index
    /// the SACK carries (`op_ev`).
    pub by_trigger: Bit,
    /// The echoed send time plus the responder's service time, ns (legacy
    /// SACK `echo_ts + service_ns`; MRC 1.0 has no service time): `now -
    /// echo` is the model's RTT sample.
    pub echo: Bits<32>,
    /// When the SACK's frame was parsed, ns (the RX path's stamp; the
    /// parser keeps pace with the MAC): the time its RTT and delay samples
    /// are taken at, `arrival - echo`, so that the SACK's wait for the
    /// retransmit engine and the engine's walk are not in them, as the
    /// model samples a SACK as it arrives.
    pub arrival: Bits<32>,
}
