//! The requester's RAM words, each a `LogicStruct` so that the engine
//! reads and writes named fields. Field order is bit order (the first
//! field at bit 0).

use rust_hdl::prelude::*;

/// Width of a ring size up to 2^16 SQEs (the config row's largest log2).
pub const RING_SIZE_BITS: usize = 17;

/// log2 of the retransmit records per QP (a ring of message records):
/// the records' ring position is this wide, and a retransmit request's
/// binary search takes this many probes.
pub const RTX_SLOT_BITS: usize = 6;
/// Width of a record count, 0..=`RTX_SLOTS` (one bit more than a position).
pub const RTX_COUNT_BITS: usize = RTX_SLOT_BITS + 1;

/// A QP's static send context, from its config row (table 1).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct SqContextWord {
    /// SQ base address >> 6 (SQEs are 64 bytes).
    pub base: Bits<58>,
    /// SQ size in SQEs, `2^log2_size` of the config row (1..=65536).
    /// Kept decoded, not as its log2: Load's doorbell check compares
    /// with it straight from the RAM, so the decoder of the log2 is not
    /// on the path to `judged` (9 logic levels with it, 8 is the budget).
    pub ring_size: Bits<RING_SIZE_BITS>,
    /// log2 of the MTU (8..=13).
    pub log2_mtu: Bits<4>,
    pub enable: Bit,
}

/// A QP's dynamic send state.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct SqStateWord {
    /// Consumer index (free-running).
    pub ci: Bits<32>,
    /// PSN of the next new packet.
    pub next_psn: Bits<24>,
    /// Ring position of the retransmit record the next message takes
    /// (the ring's head).
    pub head: Bits<RTX_SLOT_BITS>,
    /// Records holding a message not yet reclaimed (the `used` records
    /// before `head` are the ring's busy part; a record is reclaimed once
    /// the cumulative acknowledgement has passed its message).
    pub used: Bits<RTX_COUNT_BITS>,
    /// Records that hold a message at all (reclaimed or not), saturating
    /// at the ring's size: the window a retransmit request searches (the
    /// last `filled` messages committed).
    pub filled: Bits<RTX_COUNT_BITS>,
    /// The latest producer index the engine accepted (a popped doorbell
    /// behind it is redundant: dropped as stale).
    pub latest_pi: Bits<32>,
    /// Descriptors a turn may fetch while another QP waits (1, 2, 4 or 8),
    /// from the length of the QP's latest message: about
    /// [`crate::requester::TURN_BYTES`] a turn (1 before its first).
    pub turn: Bits<4>,
}

/// A retransmit record: one message, as its packets are re-issued.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct RtxRecordWord {
    pub first_psn: Bits<24>,
    /// Its packet count.
    pub packets: Bits<24>,
    /// Message length in bytes.
    pub len: Bits<32>,
    pub local_iova: Bits<64>,
    pub remote_va: Bits<64>,
    pub rkey: Bits<32>,
    pub imm: Bits<32>,
    /// WRITE-IMM (else WRITE).
    pub has_imm: Bit,
}

/// A packet work record, as the requester's output register holds it
/// (and its parked copy: a held first transmission that yielded to a
/// resend).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct PacketRecordWord {
    pub qp: Bits<8>,
    pub psn: Bits<24>,
    pub opcode: Bits<8>,
    /// A resend (else the PSN's first transmission).
    pub retransmit: Bit,
    pub first: Bit,
    pub last: Bit,
    /// Host address of the packet's payload.
    pub addr: Bits<64>,
    /// Payload bytes.
    pub len: Bits<16>,
    pub remote_va: Bits<64>,
    pub rkey: Bits<32>,
    /// The whole message's length.
    pub dma_len: Bits<32>,
    pub imm: Bits<32>,
    /// The packet's offset in its message.
    pub msg_offset: Bits<32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words keep the widths of the RAMs they describe.
    #[test]
    fn word_widths() {
        assert_eq!(SqContextWord::BITS, 80);
        assert_eq!(SqStateWord::BITS, 112);
        assert_eq!(RtxRecordWord::BITS, 273);
        assert_eq!(PacketRecordWord::BITS, 315);
    }
}
