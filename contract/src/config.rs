//! Config tables: the `cfg$table` id of every table and the row layout of
//! every table other than the QP send context (that one is
//! [`crate::layout::sq_ctx`]).
//!
//! The `cfg` register block stages one 256-bit row and emits it on the
//! shared config port (`cfg$valid/table/index/data`, byte 0 of the row in
//! bits `[7:0]` of `cfg$data`); each datapath block decodes the ids it
//! owns. The driver encodes rows with these [`Field`]s; the RTL decodes
//! them through accessors generated from the same fields
//! (`hw::contract_rows`). [`ROWS`] lists every row layout with the tables
//! that carry it; `docs/hw/layout.md` renders it.

use crate::field::Field;
use crate::layout::sq_ctx;

/// Bits of a config row (`cfg$data`).
pub const ROW_BITS: usize = 256;
/// Bytes of a config row.
pub const ROW_BYTES: usize = ROW_BITS / 8;
/// Bits of a table id (`cfg$table`).
pub const TABLE_BITS: usize = 4;

/// `cfg$table` ids, defined once: the driver writes them, each block
/// decodes its own.
pub mod table {
    /// QP send context ([`crate::layout::sq_ctx`]; requester, snooped by
    /// the TX / RX paths and the send-completion tracker).
    pub const SQ_CTX: u8 = 1;
    /// Completion-queue rings (`hw::ring_writer`, CQ instance).
    pub const CQ_RING: u8 = 2;
    /// EV-event ring (`hw::ring_writer`, EV-event instance, ring 0).
    pub const EV_RING: u8 = 3;
    /// ACK generator parameters (index 0).
    pub const ACK_PARAMS: u8 = 4;
    /// Receive-side QP start PSN (ACK generator; the top also initialises
    /// the SACK table from it).
    pub const ACK_QP_INIT: u8 = 5;
    /// Memory registrations (completion tracker).
    pub const MR: u8 = 6;
    /// Receive-side QP set-up of the completion tracker.
    pub const RECV_QP: u8 = 7;
    /// Retransmit engine, per QP.
    pub const RETX_QP: u8 = 8;
    /// Retransmit engine, global (index 0).
    pub const RETX_GLOBAL: u8 = 9;
    /// Congestion-control gate, per QP.
    pub const CC: u8 = 10;
    /// Address table: peer rows and the NIC's own row (`hw::tx_path`).
    pub const ADDR: u8 = 11;
    /// EV table: EV values (index `qp << 7 | ev`) and deny/allow
    /// (index `0x8000 | qp`) (the top, into the EV selector).
    pub const EV: u8 = 12;
    // 13: unused (the floor of GOOD EVs is per QP, `sq_ctx.ev_min_active`).
    /// NSCC window controller, per QP (`hw::nscc`; its window bounds are
    /// table 10's, snooped).
    pub const NSCC: u8 = 14;
    /// (name, id, owner) of every table, for the docs and the driver.
    pub const ALL: &[(&str, u8, &str)] = &[
        ("sq_ctx", SQ_CTX, "requester (snooped by tx_path, rx_path, send_cq)"),
        ("cq_ring", CQ_RING, "ring_writer (CQs)"),
        ("ev_ring", EV_RING, "ring_writer (EV events)"),
        ("ack_params", ACK_PARAMS, "ack_gen"),
        ("ack_qp_init", ACK_QP_INIT, "ack_gen, sack_table (via the top)"),
        ("mr", MR, "completion"),
        ("recv_qp", RECV_QP, "completion (log2_mtu snooped by rx_path)"),
        ("retx_qp", RETX_QP, "retransmit"),
        ("retx_global", RETX_GLOBAL, "retransmit"),
        ("cc", CC, "cc_gate"),
        ("addr", ADDR, "tx_path"),
        ("ev", EV, "core -> ev_selector"),
        ("nscc", NSCC, "nscc"),
    ];
}

/// Index bit that selects the second row kind of a table (ring consumer
/// index, the NIC's own address row, EV deny/allow rows).
pub const INDEX_SELECT: u16 = 0x8000;

/// Table 10 (`cc_gate`), index = QP.
pub mod cc {
    use super::Field;
    pub const MIN_CWND: Field = Field::at_bit("min_cwnd", 0, 32, "bytes, >= 1");
    pub const MAX_CWND: Field = Field::at_bit("max_cwnd", 32, 32, "bytes, >= min_cwnd");
    pub const SEND_WINDOW: Field = Field::at_bit("send_window", 64, 16, "PSNs: send_mpr_units x 128");
    pub const FIELDS: &[Field] = &[MIN_CWND, MAX_CWND, SEND_WINDOW];
}

/// Table 14 (`nscc`), index = QP: the parameters of NSCC's ACK-driven
/// window (`proto::model::cc::NsccConfig`); the window bounds are
/// table 10's. Takes effect from the QP's next record; its INIT record
/// starts the window at `init_cwnd`.
pub mod nscc {
    use super::Field;
    pub const BASE_RTT_NS: Field = Field::at_bit("base_rtt_ns", 0, 32, "unloaded RTT, ns");
    pub const TARGET_NS: Field = Field::at_bit("target_ns", 32, 32, "target queueing delay, ns");
    pub const INCREASE_BYTES: Field = Field::at_bit("increase_bytes", 64, 32, "additive increase per RTT (MTU)");
    pub const INIT_CWND: Field = Field::at_bit("init_cwnd", 96, 32, "bytes (clamped to table 10's bounds)");
    pub const DECREASE_GAIN: Field = Field::at_bit("decrease_gain", 128, 17, "Q16: decrease_gain x 65536, <= 65536");
    pub const ENABLE: Field = Field::at_bit(
        "enable",
        160,
        1,
        "1: the QP's window follows NSCC (from its next INIT); 0: table 10's max_cwnd, moved only by losses and timeouts",
    );
    /// The parameters the NSCC unit keeps (its config RAM's word).
    pub const PARAMS: &[Field] = &[BASE_RTT_NS, TARGET_NS, INCREASE_BYTES, INIT_CWND, DECREASE_GAIN];
    pub const FIELDS: &[Field] = &[BASE_RTT_NS, TARGET_NS, INCREASE_BYTES, INIT_CWND, DECREASE_GAIN, ENABLE];
}

/// Table 8 (`retransmit`), index = QP.
pub mod retx_qp {
    use super::Field;
    pub const ACK_TIMEOUT_EXP: Field =
        Field::at_bit("ack_timeout_exp", 0, 5, "RTO = 1.024 us x 2^t, t <= 24 (larger: 24)");
    pub const STALL_ALLOWANCE_NS: Field = Field::at_bit("stall_allowance_ns", 32, 32, "floor under the RTT estimate");
    pub const REORDER: Field = Field::at_bit("reorder_allowance", 64, 16, "packets");
    pub const RETRY_LINEAR: Field = Field::at_bit("retry_linear", 80, 3, "<= 7");
    pub const RETRY_EXP: Field = Field::at_bit("retry_exp", 83, 5, "<= 25 (25 = infinite)");
    pub const STALL_AGE_NS: Field = Field::at_bit("stall_age_ns", 88, 32, "floor under the RTT estimate");
    pub const FIELDS: &[Field] = &[
        ACK_TIMEOUT_EXP,
        STALL_ALLOWANCE_NS,
        REORDER,
        RETRY_LINEAR,
        RETRY_EXP,
        STALL_AGE_NS,
    ];
}

/// Table 9 (`retransmit`), index 0.
pub mod retx_global {
    use super::Field;
    pub const LAST_QP: Field = Field::at_bit("last_qp", 0, 8, "last QP the RTO scanner visits");
    pub const FIELDS: &[Field] = &[LAST_QP];
}

/// Tables 2 (CQs) and 3 (EV events) (`ring_writer`), index = ring: set
/// up (resets the producer index).
pub mod ring {
    use super::Field;
    pub const BASE: Field = Field::at_bit("base", 0, 64, "IOVA, aligned to the entry size");
    pub const LOG2_SLOTS: Field = Field::at_bit("log2_slots", 64, 8, "0..=16");
    pub const FIELDS: &[Field] = &[BASE, LOG2_SLOTS];
}

/// Tables 2 and 3 (`ring_writer`), index = [`INDEX_SELECT`](super::INDEX_SELECT)
/// `| ring`: the consumer index.
pub mod ring_consumer {
    use super::Field;
    pub const CONSUMER: Field = Field::at_bit("consumer", 0, 32, "entries consumed, free running");
    pub const FIELDS: &[Field] = &[CONSUMER];
}

/// Table 4 (`ack_gen`), index 0.
pub mod ack_params {
    use super::Field;
    pub const EVERY: Field = Field::at_bit("ack_every", 0, 16, "packets");
    pub const DELAY: Field = Field::at_bit("ack_delay", 16, 16, "clock cycles");
    pub const FIELDS: &[Field] = &[EVERY, DELAY];
}

/// Tables 5 (`ack_gen`) and 7 (`completion`; snooped by `rx_path`),
/// index = QP.
pub mod recv_init {
    use super::Field;
    pub const START_PSN: Field = Field::at_bit("start_psn", 0, 24, "first PSN expected");
    /// The QP's path MTU on receive: the RX path refuses a data packet
    /// whose payload is longer (as the golden QP does, `Malformed`). Read
    /// from table 7's row; 0 (a row written without it) checks nothing.
    pub const LOG2_MTU: Field = Field::at_bit(
        "log2_mtu",
        24,
        4,
        "log2 of the path MTU (RtrAttr::log2_mtu), 8..=13; 0: not checked",
    );
    pub const FIELDS: &[Field] = &[START_PSN, LOG2_MTU];
}

/// Table 6 (`completion`), index = rkey mod 256.
pub mod mr {
    use super::Field;
    pub const RKEY: Field = Field::at_bit("rkey", 0, 32, "full key, compared");
    pub const BASE_VA: Field = Field::at_bit("base_va", 32, 64, "= IOVA of byte 0");
    pub const LENGTH: Field = Field::at_bit("length", 96, 64, "bytes");
    pub const VALID: Field = Field::at_bit("valid", 160, 1, "0 deregisters");
    pub const FIELDS: &[Field] = &[RKEY, BASE_VA, LENGTH, VALID];
}

/// Table 11 (`tx_path`): peer rows 0..=255 (MAC and IP) and the NIC's own
/// row at index [`INDEX_SELECT`](super::INDEX_SELECT) (all fields).
pub mod addr {
    use super::Field;
    pub const MAC: Field = Field::at_bit("mac", 0, 48, "MAC address as an integer");
    /// IP: bits 48-175; IPv4 as an integer in 48-79.
    pub const IP_LO: Field = Field::at_bit("ip_lo", 48, 64, "IP bits 63-0 (IPv4: bits 31-0)");
    pub const IP_HI: Field = Field::at_bit("ip_hi", 112, 64, "IP bits 127-64");
    pub const IPV6: Field = Field::at_bit("ipv6", 176, 1, "own row");
    pub const VLAN: Field = Field::at_bit("vlan", 177, 1, "own row");
    pub const TCI: Field = Field::at_bit("tci", 178, 16, "own row");
    pub const DSCP: Field = Field::at_bit("dscp", 194, 6, "own row");
    pub const TTL: Field = Field::at_bit("ttl", 200, 8, "own row");
    /// The wire dialect the core sends (it receives both): one bit for
    /// the NIC, beside the other per-NIC wire choices of this row.
    pub const WIRE_MRC10: Field = Field::at_bit("wire_mrc10", 208, 1, "own row: 1 send MRC 1.0, 0 legacy");
    pub const FIELDS: &[Field] = &[MAC, IP_LO, IP_HI, IPV6, VLAN, TCI, DSCP, TTL, WIRE_MRC10];
}

/// Table 12 (the core, into the EV selector), index `qp << 7 | ev`: one
/// EV of a QP's set.
pub mod ev_value {
    use super::Field;
    /// MRC 1.0's 32-bit EV: bits 15-0 go in the UDP source port, bits
    /// 31-16 in the IPv6 flow label (IPv4, UDP mode, carries bits 15-0).
    pub const VALUE: Field = Field::at_bit("value", 0, 32, "EV value (UDP source port, flow label)");
    pub const RR_START: Field = Field::at_bit("rr_start", 32, 1, "start the round robin here");
    pub const FIELDS: &[Field] = &[VALUE, RR_START];
}

/// Table 12, index [`INDEX_SELECT`](super::INDEX_SELECT) `| qp`: deny or
/// allow the QP's EVs whose value matches.
pub mod ev_control {
    use super::Field;
    pub const MASK: Field = Field::at_bit("mask", 0, 32, "bits of the EV value compared");
    pub const MATCH: Field = Field::at_bit("match", 32, 32, "EVs with (value ^ match) & mask == 0");
    pub const ALLOW: Field = Field::at_bit("allow", 64, 1, "1 allow (DENIED -> GOOD), 0 deny");
    pub const FIELDS: &[Field] = &[MASK, MATCH, ALLOW];
}

/// One config row, encoded with the [`Field`]s of its layout (the
/// driver's encoder; the hw tests configure blocks with it too).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Row(pub [u8; ROW_BYTES]);

impl Row {
    pub fn new() -> Row {
        Row::default()
    }
    /// Set `field` to `value` (masked to its width).
    pub fn set(mut self, field: Field, value: u64) -> Row {
        field.put(&mut self.0, value);
        self
    }
    /// A row holding `bytes` from byte 0 (a `layout` record).
    pub fn from_bytes(bytes: &[u8]) -> Row {
        let mut r = Row::new();
        let n = bytes.len().min(ROW_BYTES);
        r.0[..n].copy_from_slice(&bytes[..n]);
        r
    }
    /// Data word `k` (row bits `32k + 31..32k`), as the `cfg` block's `data<k>` register.
    pub fn word(&self, k: usize) -> u32 {
        u32::from_le_bytes([self.0[4 * k], self.0[4 * k + 1], self.0[4 * k + 2], self.0[4 * k + 3]])
    }
}

/// One row layout and the tables (and indices) that carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowLayout {
    pub name: &'static str,
    /// `cfg$table` ids whose rows have this layout.
    pub tables: &'static [u8],
    /// Which `cfg$index` values carry it.
    pub index: &'static str,
    pub fields: &'static [Field],
}

/// Every config row layout.
pub const ROWS: &[RowLayout] = &[
    RowLayout {
        name: "sq_ctx",
        tables: &[table::SQ_CTX],
        index: "QP",
        fields: sq_ctx::FIELDS,
    },
    RowLayout {
        name: "ring",
        tables: &[table::CQ_RING, table::EV_RING],
        index: "ring (set up; resets the producer index)",
        fields: ring::FIELDS,
    },
    RowLayout {
        name: "ring_consumer",
        tables: &[table::CQ_RING, table::EV_RING],
        index: "0x8000 | ring",
        fields: ring_consumer::FIELDS,
    },
    RowLayout {
        name: "ack_params",
        tables: &[table::ACK_PARAMS],
        index: "0",
        fields: ack_params::FIELDS,
    },
    RowLayout {
        name: "recv_init",
        tables: &[table::ACK_QP_INIT, table::RECV_QP],
        index: "QP",
        fields: recv_init::FIELDS,
    },
    RowLayout {
        name: "mr",
        tables: &[table::MR],
        index: "rkey mod 256",
        fields: mr::FIELDS,
    },
    RowLayout {
        name: "retx_qp",
        tables: &[table::RETX_QP],
        index: "QP",
        fields: retx_qp::FIELDS,
    },
    RowLayout {
        name: "retx_global",
        tables: &[table::RETX_GLOBAL],
        index: "0",
        fields: retx_global::FIELDS,
    },
    RowLayout {
        name: "cc",
        tables: &[table::CC],
        index: "QP",
        fields: cc::FIELDS,
    },
    RowLayout {
        name: "nscc",
        tables: &[table::NSCC],
        index: "QP",
        fields: nscc::FIELDS,
    },
    RowLayout {
        name: "addr",
        tables: &[table::ADDR],
        index: "peer 0..=255 (mac, ip); 0x8000: the NIC's own row (all fields)",
        fields: addr::FIELDS,
    },
    RowLayout {
        name: "ev_value",
        tables: &[table::EV],
        index: "qp << 7 | ev",
        fields: ev_value::FIELDS,
    },
    RowLayout {
        name: "ev_control",
        tables: &[table::EV],
        index: "0x8000 | qp",
        fields: ev_control::FIELDS,
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::assert_disjoint;

    #[test]
    fn rows_fit_and_fields_do_not_overlap() {
        for row in ROWS {
            assert_disjoint(ROW_BYTES, row.fields);
        }
    }

    #[test]
    fn every_table_has_a_row_layout_and_ids_are_unique() {
        for (i, (name, id, _)) in table::ALL.iter().enumerate() {
            assert!(u32::from(*id) < 1 << TABLE_BITS, "{name}");
            assert!(
                ROWS.iter().any(|r| r.tables.contains(id)),
                "table {name} has no row layout"
            );
            assert!(
                table::ALL[..i].iter().all(|(_, other, _)| other != id),
                "{name}: id reused"
            );
        }
        for row in ROWS {
            for id in row.tables {
                assert!(
                    table::ALL.iter().any(|(_, t, _)| t == id),
                    "{}: unknown table",
                    row.name
                );
            }
        }
    }
}
