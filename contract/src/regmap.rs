//! The CSR register map, defined once. The hardware (`hw::csr`), the
//! driver and `docs/hw/regmap.md` ([`render_markdown`]) all read it from
//! here.
//!
//! Layout (Corundum style): the BAR is a linked list of register blocks.
//! Every block starts with three words: `+0x0` type, `+0x4` version, `+0x8`
//! next pointer (byte address of the next block; 0 ends the list). The list
//! starts at address 0 with the build-ID block. A driver walks the list and
//! refuses any (type, version) it does not know, so a driver and a bitstream
//! from different revisions fail loudly instead of misbehaving.
//!
//! Addresses are byte addresses of 32-bit words; accesses are whole words.

/// Offset of the type word in every block.
pub const HDR_TYPE: u16 = 0x0;
/// Offset of the version word in every block.
pub const HDR_VERSION: u16 = 0x4;
/// Offset of the next-pointer word in every block.
pub const HDR_NEXT: u16 = 0x8;

/// Width of a CSR address in bits (64 KiB of register space).
pub const ADDR_BITS: usize = 16;

/// How software may access a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Access {
    /// Read only.
    Ro,
    /// Read and write.
    Rw,
    /// Write only; reads return 0. Writing 1 to a bit triggers an action.
    Wo,
}

/// One 32-bit register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Reg {
    pub name: &'static str,
    /// Byte offset within the block.
    pub offset: u16,
    pub access: Access,
    /// Value after configuration (FPGA initial value).
    pub reset: u32,
    pub doc: &'static str,
}

/// One register block of the linked list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RegBlock {
    pub name: &'static str,
    /// Block type (`+0x0`).
    pub block_type: u32,
    /// Block version (`+0x4`); bump on any incompatible change.
    pub version: u32,
    /// Byte address of the block.
    pub base: u16,
    pub doc: &'static str,
    /// Registers after the three header words.
    pub regs: &'static [Reg],
}

/// Build-ID block: type `"MRCB"`.
pub mod build_id {
    use super::*;
    pub const BASE: u16 = 0x0000;
    pub const TYPE: u32 = u32::from_be_bytes(*b"MRCB");
    pub const VERSION: u32 = 0x0001_0000;
    pub const GIT_HASH_HI: u16 = 0x0C;
    pub const GIT_HASH_LO: u16 = 0x10;
    pub const BUILD_DATE: u16 = 0x14;
    pub const SCRATCH: u16 = 0x18;
    pub const REGS: &[Reg] = &[
        Reg {
            name: "git_hash_hi",
            offset: GIT_HASH_HI,
            access: Access::Ro,
            reset: 0,
            doc: "first 8 hex digits of the source git commit (bits 63-32 of the 64-bit prefix)",
        },
        Reg {
            name: "git_hash_lo",
            offset: GIT_HASH_LO,
            access: Access::Ro,
            reset: 0,
            doc: "next 8 hex digits of the source git commit",
        },
        Reg {
            name: "build_date",
            offset: BUILD_DATE,
            access: Access::Ro,
            reset: 0,
            doc: "build time, UNIX seconds (UTC)",
        },
        Reg {
            name: "scratch",
            offset: SCRATCH,
            access: Access::Rw,
            reset: 0,
            doc: "free read/write word for bus tests",
        },
    ];
}

/// Counter bank block: type `"MRCC"`. Every `cnt_*` pulse of the datapath
/// counts in a 32-bit wrapping counter; the counters are listed once, in
/// [`COUNTERS`], and counter `i` sits at `BASE + FIRST + 4 * i`.
pub mod counters {
    use super::*;
    pub const BASE: u16 = 0x0100;
    pub const TYPE: u32 = u32::from_be_bytes(*b"MRCC");
    /// 2: counter 0 moved from `+0x80` to `+0x40` (48 slots instead of 32).
    pub const VERSION: u32 = 0x0002_0000;
    pub const CLEAR: u16 = 0x0C;
    pub const NUM: u16 = 0x10;
    /// Offset of counter 0; the bank decodes 48 slots (`0x40..=0xFC`).
    pub const FIRST: u16 = 0x40;
    /// Counter slots the address decode has room for (to the end of the
    /// block's 256 bytes).
    pub const MAX: usize = 48;
    pub const REGS: &[Reg] = &[
        Reg {
            name: "clear",
            offset: CLEAR,
            access: Access::Wo,
            reset: 0,
            doc: "bit g = 1 clears every counter of group g (see the counter table); 0xFF clears all",
        },
        Reg {
            name: "num",
            offset: NUM,
            access: Access::Ro,
            reset: COUNTERS.len() as u32,
            doc: "number of counters (slots FIRST.. beyond read 0)",
        },
    ];
}

/// Counter groups: one per source block, the unit of `counters.clear`.
pub mod group {
    pub const RX_PARSER: u8 = 0;
    pub const FAULT_INJECT: u8 = 1;
    pub const SACK: u8 = 2;
    pub const REQUESTER: u8 = 3;
    pub const RESPONDER: u8 = 4;
    pub const EV: u8 = 5;
    pub const COMPLETION: u8 = 6;
    pub const PLACEMENT: u8 = 7;
    /// Names, by group number.
    pub const NAMES: [&str; 8] = [
        "rx_parser",
        "fault_inject",
        "sack",
        "requester",
        "responder",
        "ev",
        "completion",
        "placement",
    ];
}

/// One event counter: a `cnt_*` pulse of some block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Counter {
    pub name: &'static str,
    /// [`group`] of the source block (the clear unit).
    pub group: u8,
    pub doc: &'static str,
}

/// Every counter, in slot order: bit `i` of the CSR block's `cnt_inc`
/// port is the increment pulse of `COUNTERS[i]`. Adding a counter is one
/// line here (at the end, so the slots of the others stay put) plus the
/// wire of its pulse in `MrcCore`.
pub const COUNTERS: &[Counter] = &[
    Counter {
        name: "rx_parser_ok",
        group: group::RX_PARSER,
        doc: "frames the RX parser accepted",
    },
    Counter {
        name: "rx_parser_drop",
        group: group::RX_PARSER,
        doc: "malformed frames the RX parser dropped",
    },
    Counter {
        name: "fi_frames",
        group: group::FAULT_INJECT,
        doc: "frames that entered the fault-injection drop stage",
    },
    Counter {
        name: "fi_rand_drop",
        group: group::FAULT_INJECT,
        doc: "frames dropped by the seeded pseudo-random drop",
    },
    Counter {
        name: "fi_ev_drop",
        group: group::FAULT_INJECT,
        doc: "frames dropped because their EV matched an EV compare register",
    },
    Counter {
        name: "fi_lb_discard",
        group: group::FAULT_INJECT,
        doc: "MAC RX frames discarded while loopback is on",
    },
    Counter {
        name: "sack_duplicate",
        group: group::SACK,
        doc: "data packets the SACK table found duplicate",
    },
    Counter {
        name: "sack_out_of_window",
        group: group::SACK,
        doc: "data packets beyond the MPR window",
    },
    Counter {
        name: "nack_sent",
        group: group::RESPONDER,
        doc: "NACKs the responder sent",
    },
    Counter {
        name: "retransmit",
        group: group::REQUESTER,
        doc: "packets the requester retransmitted",
    },
    Counter {
        name: "rto",
        group: group::REQUESTER,
        doc: "retransmission timeouts",
    },
    Counter {
        name: "ev_marked_bad",
        group: group::EV,
        doc: "EVs the EV selector marked BAD",
    },
    Counter {
        name: "completion",
        group: group::COMPLETION,
        doc: "completions written",
    },
    Counter {
        name: "cq_overflow",
        group: group::COMPLETION,
        doc: "completions lost to a full CQ",
    },
    Counter {
        name: "placement_reject",
        group: group::PLACEMENT,
        doc: "writes rejected by the memory-registration check",
    },
    Counter {
        name: "tx_frames",
        group: group::REQUESTER,
        doc: "frames the TX builder sent (data and ACKs)",
    },
    Counter {
        name: "tx_bad_request",
        group: group::REQUESTER,
        doc: "header requests the TX builder dropped (unknown opcode, extension mismatch, too long)",
    },
    Counter {
        name: "tx_payload_mismatch",
        group: group::REQUESTER,
        doc: "payload streams whose end disagreed with the header's length",
    },
    Counter {
        name: "data_sent",
        group: group::REQUESTER,
        doc: "data packets the TX path handed to the TX builder",
    },
    Counter {
        name: "ack_sent",
        group: group::RESPONDER,
        doc: "ACK / SACK / NACK packets the TX path handed to the TX builder",
    },
    Counter {
        name: "no_good_ev",
        group: group::EV,
        doc: "selects retried because the QP had no GOOD EV",
    },
    Counter {
        name: "cc_held",
        group: group::REQUESTER,
        doc: "packet admissions the congestion-control gate held",
    },
    Counter {
        name: "req_bad_descriptor",
        group: group::REQUESTER,
        doc: "send descriptors rejected (opcode, flags or length)",
    },
    Counter {
        name: "req_bad_doorbell",
        group: group::REQUESTER,
        doc: "doorbells rejected (beyond the ring, or QP disabled); stale ones, normal, are not counted",
    },
    Counter {
        name: "retx_drop",
        group: group::REQUESTER,
        doc: "records the retransmit engine dropped that no correct peer or requester causes: a send beyond the window or of a PSN never sent, a SACK or NACK for an unsent PSN, a record for a QP in error (resends of PSNs acknowledged meanwhile are retx_drop_acked)",
    },
    Counter {
        name: "ev_event_lost",
        group: group::EV,
        doc: "EV state changes the EV-event ring had no room for (the host did not consume); the core's own event FIFO makes the EV selector wait instead",
    },
    Counter {
        name: "db_stale",
        group: group::REQUESTER,
        doc: "doorbells ignored as stale (a producer index behind the consumer or behind one already accepted); normal when software rings a QP the requester holds",
    },
    Counter {
        name: "rx_buffer_full",
        group: group::PLACEMENT,
        doc: "frames the RX buffer dropped whole (ring or descriptor queue full)",
    },
    Counter {
        name: "rx_placed",
        group: group::PLACEMENT,
        doc: "frames whose payload the RX buffer placed in host memory",
    },
    Counter {
        name: "rx_not_data",
        group: group::RESPONDER,
        doc: "frames discarded by the RX path: probes, CNPs, plain RC, QP out of range or not enabled, malformed data",
    },
    Counter {
        name: "rx_discards",
        group: group::RESPONDER,
        doc: "frames discarded whole at the RX ingress (the MAC cannot be held): the RX path's join or the RX buffer had no room for them; the link's drop, recovered by MRC like any loss",
    },
    Counter {
        name: "push_consumed",
        group: group::REQUESTER,
        doc: "pushed descriptors the push cache answered a descriptor read with (no host read)",
    },
    Counter {
        name: "push_dropped",
        group: group::REQUESTER,
        doc: "cycles in which the push cache dropped pushed descriptors unused: covered by a read it forwarded, replaced (cache full, or the same slot pushed again); a QP reset's clear is not counted",
    },
    Counter {
        name: "probes_sent",
        group: group::EV,
        doc: "reliability probes the EV prober handed to the TX path, one per ASSUMED_BAD EV due (MRC 1.0 wire; the legacy wire sends none and the prober waits)",
    },
    Counter {
        name: "ev_readmitted",
        group: group::EV,
        doc: "EVs readmitted (ASSUMED_BAD -> GOOD) by an answered probe",
    },
    Counter {
        name: "rx_discards_join",
        group: group::RESPONDER,
        doc: "of rx_discards, the frames refused for want of a join credit of the RX path (its head stage had not yet taken the frames admitted before); the rest lacked only RX buffer room",
    },
    Counter {
        name: "retx_drop_acked",
        group: group::REQUESTER,
        doc: "send records the retransmit engine dropped because their PSN is before una: from a correct requester, resends whose PSN was acknowledged while they waited (in its resend FIFO or the requester), harmless, their bytes released at the CC gate",
    },
    Counter {
        name: "nscc_windows",
        group: group::REQUESTER,
        doc: "windows the NSCC unit wrote to the CC gate (SETW), one per feedback record (ACK, loss, timeout, start) of a QP whose table 14 row has enable set",
    },
    Counter {
        name: "tx_flushed",
        group: group::REQUESTER,
        doc: "data packets the TX path dropped, none of them sent: of a QP in error (past the requester when the error came), or of an earlier life of a QP set up again",
    },
    Counter {
        name: "payload_push_consumed",
        group: group::REQUESTER,
        doc: "pushed payloads the payload cache answered a payload read with (no host read)",
    },
    Counter {
        name: "payload_push_dropped",
        group: group::REQUESTER,
        doc: "cycles in which the payload cache dropped pushed payloads unused: a read of their QP it forwarded, replaced (cache full, or the same payload pushed again), or a push whose length is not 1-64 bytes; a QP reset's clear is not counted",
    },
    Counter {
        name: "adm_ack_backlog",
        group: group::REQUESTER,
        doc: "cycles in which the admission could have asked the CC gate to admit the requester's next packet but held it: the RX path's SACK / NACK record waited for the retransmit engine with half the RX path's join credits in use (not while the resend FIFO is full); sending pushed back instead of ACK frames discarded",
    },
];

/// Number of counters (width of the CSR block's `cnt_inc`).
pub const N_COUNTERS: usize = COUNTERS.len();
const _: () = assert!(N_COUNTERS <= counters::MAX);

/// Slot of the counter named `name` (panics on an unknown name: a typo in
/// the wiring is a build-time bug).
pub fn counter_slot(name: &str) -> usize {
    COUNTERS
        .iter()
        .position(|c| c.name == name)
        .unwrap_or_else(|| panic!("no counter {name}"))
}

/// Fault-injection block: type `"MRCF"`. Drives `hw::fault_inject`.
pub mod fault_inject {
    use super::*;
    pub const BASE: u16 = 0x0200;
    pub const TYPE: u32 = u32::from_be_bytes(*b"MRCF");
    pub const VERSION: u32 = 0x0001_0000;
    pub const CTRL: u16 = 0x0C;
    pub const SEED: u16 = 0x10;
    pub const DROP_PROB: u16 = 0x14;
    pub const EV_EN: u16 = 0x18;
    pub const EV_MATCH0: u16 = 0x1C;
    pub const EV_MATCH1: u16 = 0x20;
    pub const EV_MATCH2: u16 = 0x24;
    pub const EV_MATCH3: u16 = 0x28;
    /// `CTRL` bits.
    pub const CTRL_RAND_DROP: u32 = 1;
    pub const CTRL_EV_DROP: u32 = 2;
    pub const CTRL_LOOPBACK: u32 = 4;
    /// `DROP_PROB` for "every frame" (the probability is `DROP_PROB / 65536`).
    pub const PROB_ONE: u32 = 1 << 16;
    pub const REGS: &[Reg] = &[
        Reg { name: "ctrl", offset: CTRL, access: Access::Rw, reset: 0, doc: "bit 0: seeded random drop on; bit 1: per-EV drop on; bit 2: loopback (MAC TX looped to the RX path, MAC RX discarded, MAC TX idle); change bit 2 only while both streams are idle" },
        Reg { name: "seed", offset: SEED, access: Access::Rw, reset: 0, doc: "writing loads the xorshift32 generator state (0 loads 1: 0 is its fixed point); reads the last value written" },
        Reg { name: "drop_prob", offset: DROP_PROB, access: Access::Rw, reset: 0, doc: "bits 16-0: a frame is dropped when the generator's bits 31-16 are below this (probability drop_prob / 65536; 65536 drops every frame)" },
        Reg { name: "ev_en", offset: EV_EN, access: Access::Rw, reset: 0, doc: "bits 3-0: enables of ev_match0..3" },
        Reg { name: "ev_match0", offset: EV_MATCH0, access: Access::Rw, reset: 0, doc: "bits 31-16 mask, 15-0 value: a RoCEv2 frame (UDP dst 4791) whose UDP source port (EV bits 15-0) p has (p ^ value) & mask == 0 is dropped" },
        Reg { name: "ev_match1", offset: EV_MATCH1, access: Access::Rw, reset: 0, doc: "as ev_match0" },
        Reg { name: "ev_match2", offset: EV_MATCH2, access: Access::Rw, reset: 0, doc: "as ev_match0" },
        Reg { name: "ev_match3", offset: EV_MATCH3, access: Access::Rw, reset: 0, doc: "as ev_match0" },
    ];
}

/// Config-table write block: type `"MRCT"`. Stages one 256-bit row and
/// emits it on the shared config port (`cfg$valid/table/index/data`).
pub mod cfg {
    use super::*;
    pub const BASE: u16 = 0x0300;
    pub const TYPE: u32 = u32::from_be_bytes(*b"MRCT");
    pub const VERSION: u32 = 0x0001_0000;
    pub const TABLE: u16 = 0x0C;
    pub const INDEX: u16 = 0x10;
    pub const GO: u16 = 0x14;
    pub const STATUS: u16 = 0x18;
    /// Data word `k` (bits `32k+31..32k` of `cfg$data`) at `DATA0 + 4k`.
    pub const DATA0: u16 = 0x20;
    pub const REGS: &[Reg] = &[
        Reg { name: "table", offset: TABLE, access: Access::Rw, reset: 0, doc: "bits 3-0: table id (each datapath block decodes its own ids)" },
        Reg { name: "index", offset: INDEX, access: Access::Rw, reset: 0, doc: "bits 15-0: row index" },
        Reg { name: "go", offset: GO, access: Access::Wo, reset: 0, doc: "bit 0 = 1: emit one cfg$valid pulse with table, index and data0..7 (in the cycle after the write)" },
        Reg { name: "status", offset: STATUS, access: Access::Ro, reset: 0, doc: "bit 0: busy (a row is being emitted this cycle); bits 31-16: rows emitted (wrapping): poll it to see a write acknowledged" },
        Reg { name: "data0", offset: DATA0, access: Access::Rw, reset: 0, doc: "row bits 31-0" },
        Reg { name: "data1", offset: DATA0 + 4, access: Access::Rw, reset: 0, doc: "row bits 63-32" },
        Reg { name: "data2", offset: DATA0 + 8, access: Access::Rw, reset: 0, doc: "row bits 95-64" },
        Reg { name: "data3", offset: DATA0 + 12, access: Access::Rw, reset: 0, doc: "row bits 127-96" },
        Reg { name: "data4", offset: DATA0 + 16, access: Access::Rw, reset: 0, doc: "row bits 159-128" },
        Reg { name: "data5", offset: DATA0 + 20, access: Access::Rw, reset: 0, doc: "row bits 191-160" },
        Reg { name: "data6", offset: DATA0 + 24, access: Access::Rw, reset: 0, doc: "row bits 223-192" },
        Reg { name: "data7", offset: DATA0 + 28, access: Access::Rw, reset: 0, doc: "row bits 255-224" },
    ];
}

/// Doorbell block: type `"MRCD"`. Describes the doorbell window: a write
/// to `WINDOW + 4 * qp` emits one `db_valid` pulse with `db_qp = qp` and
/// `db_value` = the written word (the new SQ producer index); nothing is
/// stored, reads of the window return 0.
pub mod doorbell {
    use super::*;
    pub const BASE: u16 = 0x0400;
    pub const TYPE: u32 = u32::from_be_bytes(*b"MRCD");
    pub const VERSION: u32 = 0x0001_0000;
    pub const WINDOW_REG: u16 = 0x0C;
    pub const QPS_REG: u16 = 0x10;
    /// Byte address of the window (1 KiB: 256 QPs x 4 bytes).
    pub const WINDOW: u16 = 0x1000;
    pub const QPS: u32 = 256;
    pub const REGS: &[Reg] = &[
        Reg { name: "window", offset: WINDOW_REG, access: Access::Ro, reset: WINDOW as u32, doc: "byte address of the doorbell window; QP q's doorbell is window + 4q (write only: new SQ producer index)" },
        Reg { name: "qps", offset: QPS_REG, access: Access::Ro, reset: QPS, doc: "doorbells in the window" },
    ];
}

/// Descriptor push block: type `"MRCS"`. Describes the push window, the
/// way a driver hands the card a descriptor, and a small WRITE's payload,
/// with the MMIO writes before its doorbell instead of the card reading
/// them from host memory (`hw::desc_push`, `docs/hw/desc_push.md`;
/// `hw::payload_push`, `docs/hw/payload_push.md`).
///
/// * Descriptor: words `0..16` of the window stage the 64-byte descriptor
///   (word k = bytes 4k..4k+3), `SLOT_LO` the low word of the IOVA of the
///   ring slot it was written to, and a write of `SLOT_HI` (the high word)
///   commits the push into the descriptor cache and zeroes the staged
///   words, so a driver writes only the nonzero words of the next one.
/// * Payload: `PAYLOAD_WORDS` words from `PAYLOAD` stage up to 64 bytes of
///   the message (word k = bytes 4k..4k+3), `PAYLOAD_IOVA_LO` / `_HI` the
///   IOVA of its first byte, and a write of `PAYLOAD_KEY` (the length in
///   bits 15-0, 1..=64, and the QP in bits 23-16) commits it into the
///   payload cache and zeroes the staged payload words.
pub mod push {
    use super::*;
    pub const BASE: u16 = 0x0500;
    pub const TYPE: u32 = u32::from_be_bytes(*b"MRCS");
    pub const VERSION: u32 = 0x0002_0000;
    pub const WINDOW_REG: u16 = 0x0C;
    pub const SIZE_REG: u16 = 0x10;
    pub const ENTRIES_REG: u16 = 0x14;
    pub const PAYLOAD_ENTRIES_REG: u16 = 0x18;
    /// Byte address of the window (256 bytes, 64 word slots).
    pub const WINDOW: u16 = 0x1400;
    /// Bytes the window decodes.
    pub const SIZE: u16 = 0x100;
    /// Staged descriptor word k at `WINDOW + 4k`, k < `DESC_WORDS`.
    pub const DESC_WORDS: u16 = 16;
    /// Slot IOVA bits 31-0.
    pub const SLOT_LO: u16 = 0x40;
    /// Slot IOVA bits 63-32; the write commits the push.
    pub const SLOT_HI: u16 = 0x44;
    /// Staged payload word k at `WINDOW + PAYLOAD + 4k`, k < `PAYLOAD_WORDS`.
    pub const PAYLOAD: u16 = 0x80;
    /// Words of a pushed payload: 64 bytes, one DMA beat.
    pub const PAYLOAD_WORDS: u16 = 16;
    /// The pushed payload's IOVA, bits 31-0.
    pub const PAYLOAD_IOVA_LO: u16 = 0xC0;
    /// The pushed payload's IOVA, bits 63-32.
    pub const PAYLOAD_IOVA_HI: u16 = 0xC4;
    /// Length (bits 15-0, 1..=64) and QP (bits 23-16); the write commits the payload.
    pub const PAYLOAD_KEY: u16 = 0xC8;
    /// Bit offset of the QP in the `PAYLOAD_KEY` word.
    pub const PAYLOAD_KEY_QP_SHIFT: u32 = 16;
    /// Largest payload a push carries (bytes).
    pub const PAYLOAD_MAX: u32 = 4 * PAYLOAD_WORDS as u32;
    /// Entries of the push cache.
    pub const ENTRIES: u32 = 4;
    /// Entries of the payload cache.
    pub const PAYLOAD_ENTRIES: u32 = 4;
    pub const REGS: &[Reg] = &[
        Reg { name: "window", offset: WINDOW_REG, access: Access::Ro, reset: WINDOW as u32, doc: "byte address of the push window: descriptor word k at window + 4k (k < 16), the ring slot's IOVA at window + 0x40 (bits 31-0) and window + 0x44 (bits 63-32; this write commits the push and zeroes the staged words); payload word k at window + 0x80 + 4k (k < 16), its IOVA at window + 0xC0 and + 0xC4, its length (bits 15-0, 1..=64) and QP (bits 23-16) at window + 0xC8 (this write commits the payload and zeroes its staged words); write only, one pusher at a time" },
        Reg { name: "size", offset: SIZE_REG, access: Access::Ro, reset: SIZE as u32, doc: "bytes the window decodes (words 0x48-0x7C and beyond 0xC8 are ignored)" },
        Reg { name: "entries", offset: ENTRIES_REG, access: Access::Ro, reset: ENTRIES, doc: "descriptors the push cache holds (a push into a full cache replaces the oldest)" },
        Reg { name: "payload_entries", offset: PAYLOAD_ENTRIES_REG, access: Access::Ro, reset: PAYLOAD_ENTRIES, doc: "payloads the payload cache holds (a push into a full cache replaces the oldest)" },
    ];
}

/// Every block, in list order.
pub const BLOCKS: &[RegBlock] = &[
    RegBlock {
        name: "build_id",
        block_type: build_id::TYPE,
        version: build_id::VERSION,
        base: build_id::BASE,
        doc: "Identifies the bitstream: git commit and build date. Always first, at address 0.",
        regs: build_id::REGS,
    },
    RegBlock {
        name: "counters",
        block_type: counters::TYPE,
        version: counters::VERSION,
        base: counters::BASE,
        doc: "Event counters of every block (32-bit, wrapping), cleared per group. Counter i at base + 0x80 + 4i, listed below.",
        regs: counters::REGS,
    },
    RegBlock {
        name: "fault_inject",
        block_type: fault_inject::TYPE,
        version: fault_inject::VERSION,
        base: fault_inject::BASE,
        doc: "Fault injection on the MAC RX path (hw::fault_inject): seeded random frame drop, per-EV drop, loopback.",
        regs: fault_inject::REGS,
    },
    RegBlock {
        name: "cfg",
        block_type: cfg::TYPE,
        version: cfg::VERSION,
        base: cfg::BASE,
        doc: "Config-table writes: stage table, index and a 256-bit row, then write go; the row goes out on the shared config port.",
        regs: cfg::REGS,
    },
    RegBlock {
        name: "doorbell",
        block_type: doorbell::TYPE,
        version: doorbell::VERSION,
        base: doorbell::BASE,
        doc: "Describes the doorbell window at 0x1000-0x13FC (one write-only word per QP: new SQ producer index, emitted as a pulse, not stored).",
        regs: doorbell::REGS,
    },
    RegBlock {
        name: "push",
        block_type: push::TYPE,
        version: push::VERSION,
        base: push::BASE,
        doc: "Describes the push window at 0x1400-0x14FC (hw::desc_push, hw::payload_push): a descriptor and its ring slot's IOVA written before the doorbell answer the requester's read of that slot from the card; a small WRITE's payload, its IOVA, length and QP answer the TX path's read of it.",
        regs: push::REGS,
    },
];

/// The next pointer of block `i` of [`BLOCKS`] (0 for the last).
pub fn next_of(i: usize) -> u16 {
    BLOCKS.get(i + 1).map_or(0, |b| b.base)
}

/// Render the register map as markdown (`docs/hw/regmap.md`).
pub fn render_markdown() -> String {
    let mut s = String::new();
    s.push_str("# CSR register map\n\n");
    s.push_str(
        "Generated from `contract::regmap` by `mrc rtl regmap` (do not edit by hand; \
`contract`'s test `regmap_doc_is_current` fails when this page is stale).\n\n",
    );
    s.push_str(
        "The BAR is a linked list of register blocks. Every block starts with \
`+0x0` type, `+0x4` version, `+0x8` next (byte address of the next block, 0 = end). \
The list starts at address 0 with the build-ID block. All registers are 32-bit words at \
byte addresses; reads of unmapped addresses return 0, writes to them are ignored. \
Through the AXI-Lite slave (`mrc_axil`) every access answers OKAY, except a write whose \
strobes are not all set: not performed, answered SLVERR.\n\n",
    );
    s.push_str("| block | base | type | version | next |\n|---|---|---|---|---|\n");
    for (i, b) in BLOCKS.iter().enumerate() {
        let t = b.block_type.to_be_bytes();
        s.push_str(&format!(
            "| {} | 0x{:04x} | 0x{:08x} (`{}`) | 0x{:08x} | 0x{:04x} |\n",
            b.name,
            b.base,
            b.block_type,
            String::from_utf8_lossy(&t),
            b.version,
            next_of(i)
        ));
    }
    s.push_str("\n## Config tables\n\nRows written through the config block's staging registers (one 256-bit row of one table per `go`); each block's page documents its rows.\n\n| id | table | decoded by |\n|---|---|---|\n");
    for (name, id, owner) in crate::config::table::ALL {
        s.push_str(&format!("| {id} | {name} | {owner} |\n"));
    }
    for (i, b) in BLOCKS.iter().enumerate() {
        s.push_str(&format!("\n## {} (0x{:04x})\n\n{}\n\n", b.name, b.base, b.doc));
        s.push_str("| address | offset | name | access | reset | description |\n|---|---|---|---|---|---|\n");
        let hdr = [
            ("type", HDR_TYPE, b.block_type, "block type"),
            ("version", HDR_VERSION, b.version, "block version"),
            (
                "next",
                HDR_NEXT,
                u32::from(next_of(i)),
                "byte address of the next block (0 = last)",
            ),
        ];
        for (name, off, val, doc) in hdr {
            s.push_str(&format!(
                "| 0x{:04x} | 0x{:02x} | {name} | RO | 0x{val:08x} | {doc} |\n",
                b.base + off,
                off
            ));
        }
        for r in b.regs {
            let acc = match r.access {
                Access::Ro => "RO",
                Access::Rw => "RW",
                Access::Wo => "WO",
            };
            s.push_str(&format!(
                "| 0x{:04x} | 0x{:02x} | {} | {acc} | 0x{:08x} | {} |\n",
                b.base + r.offset,
                r.offset,
                r.name,
                r.reset,
                r.doc
            ));
        }
        if b.base == counters::BASE {
            for (i, c) in COUNTERS.iter().enumerate() {
                let off = counters::FIRST + 4 * i as u16;
                s.push_str(&format!(
                    "| 0x{:04x} | 0x{:02x} | {} | RO | 0x00000000 | counter {i}, group {} ({}): {} |\n",
                    b.base + off,
                    off,
                    c.name,
                    c.group,
                    group::NAMES[usize::from(c.group)],
                    c.doc
                ));
            }
        }
    }
    s.push_str(&format!(
        "\n## doorbell window (0x{:04x}-0x{:04x})\n\nWrite only: a write to 0x{:04x} + 4q emits one doorbell for QP q with the written word \
(the new SQ producer index). Nothing is stored; reads return 0.\n",
        doorbell::WINDOW,
        doorbell::WINDOW + 4 * doorbell::QPS as u16 - 4,
        doorbell::WINDOW
    ));
    s.push_str(&format!(
        "\n## push window (0x{:04x}-0x{:04x})\n\nWrite only: 0x{:04x} + 4k (k < {}) stages descriptor word k (bytes 4k..4k+3 of the 64-byte SQE); \
0x{:04x} stages bits 31-0 of the IOVA of the ring slot the descriptor was written to; 0x{:04x} takes bits 63-32 and commits the push \
into the cache (the staged words are zeroed: write only the nonzero words of the next descriptor). Writes are staged in one set of \
registers: a driver pushes from one thread at a time. \
0x{:04x} + 4k (k < {}) stages payload word k (bytes 4k..4k+3 of a WRITE of at most {} bytes); 0x{:04x} and 0x{:04x} stage bits 31-0 and 63-32 \
of the IOVA of its first byte; 0x{:04x} takes its length (bits 15-0, 1..=64) and QP (bits 23-16) and commits the payload into the payload cache \
(the staged payload words are zeroed). Other words are ignored; reads return 0.\n",
        push::WINDOW,
        push::WINDOW + push::SIZE - 4,
        push::WINDOW,
        push::DESC_WORDS,
        push::WINDOW + push::SLOT_LO,
        push::WINDOW + push::SLOT_HI,
        push::WINDOW + push::PAYLOAD,
        push::PAYLOAD_WORDS,
        push::PAYLOAD_MAX,
        push::WINDOW + push::PAYLOAD_IOVA_LO,
        push::WINDOW + push::PAYLOAD_IOVA_HI,
        push::WINDOW + push::PAYLOAD_KEY,
    ));
    s
}

/// Bytes a block occupies from its base (header, registers, counter slots).
pub fn block_span(b: &RegBlock) -> u16 {
    let regs_end = b.regs.iter().map(|r| r.offset + 4).max().unwrap_or(HDR_NEXT + 4);
    if b.base == counters::BASE {
        counters::FIRST + 4 * counters::MAX as u16
    } else {
        regs_end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_ordered_and_disjoint() {
        for w in BLOCKS.windows(2) {
            let end = w[0].base + block_span(&w[0]);
            assert!(end <= w[1].base, "{} overlaps {}", w[0].name, w[1].name);
        }
        let last = BLOCKS.last().unwrap();
        assert!(last.base + block_span(last) <= doorbell::WINDOW);
        assert_eq!(doorbell::WINDOW % 1024, 0, "window decode uses address bits 15-10");
        assert!(
            doorbell::WINDOW + 4 * doorbell::QPS as u16 <= push::WINDOW,
            "push window after the doorbells"
        );
        assert_eq!(
            push::WINDOW % push::SIZE,
            0,
            "push window decode uses address bits 15-8"
        );
        assert_eq!(push::SIZE, 0x100);
        const { assert!(push::SLOT_HI < push::PAYLOAD && push::SLOT_LO == 4 * push::DESC_WORDS) };
        const {
            assert!(
                push::PAYLOAD_IOVA_LO == push::PAYLOAD + 4 * push::PAYLOAD_WORDS
                    && push::PAYLOAD_KEY + 4 <= push::SIZE
                    && push::PAYLOAD_MAX as usize == crate::layout::sqe::SIZE
            )
        };
        assert_eq!(
            counters::FIRST + 4 * counters::MAX as u16,
            0x100,
            "counter slots end with the block"
        );
        // Every counter fits a slot, names are unique and group numbers valid.
        for (i, c) in COUNTERS.iter().enumerate() {
            assert!(usize::from(c.group) < group::NAMES.len());
            assert_eq!(counter_slot(c.name), i);
        }
        for b in BLOCKS {
            for w in b.regs.windows(2) {
                assert!(w[0].offset < w[1].offset, "{}.{} out of order", b.name, w[1].name);
            }
        }
        for b in BLOCKS {
            for r in b.regs {
                assert!(r.offset > HDR_NEXT && r.offset % 4 == 0, "{}.{}", b.name, r.name);
            }
        }
        assert_eq!(BLOCKS[0].base, 0);
    }

    #[test]
    fn regmap_doc_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/hw/regmap.md");
        let want = render_markdown();
        let have = std::fs::read_to_string(path).unwrap_or_default();
        if have != want {
            if std::env::var_os("MRC_BLESS").is_some() {
                std::fs::write(path, &want).unwrap();
            } else {
                panic!(
                    "docs/hw/regmap.md is stale: run `MRC_BLESS=1 cargo test -p contract regmap` or `mrc rtl regmap`"
                );
            }
        }
    }
}
