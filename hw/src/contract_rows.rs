//! The RTL's names for the fields of the hardware/software contract
//! (`contract::layout`, `contract::config`): accessors on [`Bits`]
//! generated from the contract's [`Field`] tables, and config-table ids as
//! block constants. A block reads the config row (`cfg.data`) or a packed word through
//! these names, never through bit positions of its own.
//!
//! Why accessors: `#[hdl_gen]` turns a Rust const path into a Verilog
//! signal name, so `get_bits::<W>(retx_qp::ACK_TIMEOUT_EXP.bit())` cannot be
//! written in a kernel. It does expand methods named `get_value_<f>` /
//! `set_value_<f>` (rust-hdl's `LogicStruct` field access): the kernel
//! becomes the slice `x[(offset)+:(width)]`, with `offset` and `width`
//! taken from `get_my_offset_<f>` / `get_my_width_<f>` on the receiver
//! when the Verilog is generated. [`row_accessors!`] implements those four
//! methods on every `Bits<N>` for each field of a layout, so
//!
//! ```ignore
//! self.exp.next = self.cfg.data.val().get_value_retx_qp_ack_timeout_exp();
//! ```
//!
//! simulates as `get_bits::<5>(0)` and emits `cfg$data[(32'h0)+:(5)]`,
//! the same Verilog as the literal form. The accessor of field `F` of
//! layout `row` is `get_value_<row>_<f>`; writes are
//! `x.next.set_value_<row>_<f>(v)` (a slice assignment).
//!
//! Table ids: `#[hdl_gen]` compares with literals or signals only, so a
//! block holds the ids it decodes as [`TableId`] fields (Verilog
//! localparams), e.g. `t_cc: TableId<{ table::CC }>` and
//! `self.cfg.table.val() == self.t_cc.val()`.
//!
//! `tests/contract_rows.rs` checks every accessor against the driver's
//! encoder, in rust-hdl's simulation and in the emitted Verilog.

use contract::config::{Row, ROW_BITS, TABLE_BITS};
pub use contract::Field;
use rust_hdl::prelude::*;

/// Accessors for the fields of one contract layout: a trait `$trait`
/// implemented on every `Bits<N>` with, per field `F` of `$row`,
/// `get_value_<row>_<f>`, `set_value_<row>_<f>`, `get_my_width_<row>_<f>`
/// and `get_my_offset_<row>_<f>` (see the module doc), and `$trait::FIELDS`,
/// the fields covered (a test checks they are the layout's `FIELDS`).
macro_rules! row_accessors {
    ($(#[$doc:meta])* $trait:ident: $row:ident in $krate:ident :: $module:ident { $($field:ident),* $(,)? }) => {
        paste::paste! {
            $(#[$doc])*
            pub trait $trait {
                /// The layout's fields these accessors cover, in order.
                const FIELDS: &'static [Field] = &[$($krate::$module::$row::$field),*];
                $(
                    #[doc = "Field `" $field:lower "` of `" $row "`."]
                    fn [<get_value_ $row _ $field:lower>](&self) -> Bits<{ $krate::$module::$row::$field.bits }>;
                    #[doc = "Write field `" $field:lower "`, keeping the other bits."]
                    fn [<set_value_ $row _ $field:lower>](&mut self, value: Bits<{ $krate::$module::$row::$field.bits }>);
                    #[doc = "Width of `" $field:lower "`, for the Verilog slice."]
                    fn [<get_my_width_ $row _ $field:lower>](&self) -> usize {
                        $krate::$module::$row::$field.bits
                    }
                    #[doc = "Bit offset of `" $field:lower "`, for the Verilog slice (a 32-bit literal, as an untyped integer literal)."]
                    fn [<get_my_offset_ $row _ $field:lower>](&self) -> u32 {
                        $krate::$module::$row::$field.bit() as u32
                    }
                )*
            }

            impl<const N: usize> $trait for Bits<N> {
                $(
                    fn [<get_value_ $row _ $field:lower>](&self) -> Bits<{ $krate::$module::$row::$field.bits }> {
                        self.get_bits::<{ $krate::$module::$row::$field.bits }>($krate::$module::$row::$field.bit())
                    }
                    fn [<set_value_ $row _ $field:lower>](&mut self, value: Bits<{ $krate::$module::$row::$field.bits }>) {
                        self.set_bits::<{ $krate::$module::$row::$field.bits }>($krate::$module::$row::$field.bit(), value)
                    }
                )*
            }
        }
    };
}

row_accessors! {
    /// The QP send-context row (table 1), snooped by several blocks.
    SqCtxRow: sq_ctx in contract::layout {
        SQ_BASE, CQ_INDEX, ADDR_INDEX, DEST_QP, START_PSN, PKEY, SQ_LOG2_SIZE, LOG2_MTU, EV_COUNT, ENABLE,
        SEND_MPR_UNITS, EV_MIN_ACTIVE,
    }
}

row_accessors! {
    /// A send-queue work descriptor (one 512-bit DMA beat).
    SqeRecord: sqe in contract::layout { OPCODE, FLAGS, LENGTH, WR_ID, LOCAL_IOVA, REMOTE_VA, RKEY, IMM }
}

row_accessors! {
    /// A completion-queue entry.
    CqeRecord: cqe in contract::layout { PHASE, STATUS, OPCODE, QP, WR_ID, BYTE_LEN, IMM, SQ_INDEX, HAS_IMM }
}

row_accessors! {
    /// An EV-event queue entry.
    EvEventRecord: ev_event in contract::layout { PHASE, NEW_STATE, REASON, QP, EV, EV_INDEX, TIME }
}

row_accessors! {
    /// Ring set-up row (tables 2 and 3).
    RingRow: ring in contract::config { BASE, LOG2_SLOTS }
}

row_accessors! {
    /// Ring consumer-index row (tables 2 and 3, index `0x8000 | ring`).
    RingConsumerRow: ring_consumer in contract::config { CONSUMER }
}

row_accessors! {
    /// ACK generator parameters (table 4).
    AckParamsRow: ack_params in contract::config { EVERY, DELAY }
}

row_accessors! {
    /// Receive-side QP start (tables 5 and 7).
    RecvInitRow: recv_init in contract::config { START_PSN, LOG2_MTU }
}

row_accessors! {
    /// Memory registration (table 6).
    MrRow: mr in contract::config { RKEY, BASE_VA, LENGTH, VALID }
}

row_accessors! {
    /// Retransmit engine, per QP (table 8).
    RetxQpRow: retx_qp in contract::config {
        ACK_TIMEOUT_EXP, STALL_ALLOWANCE_NS, REORDER, RETRY_LINEAR, RETRY_EXP, STALL_AGE_NS,
    }
}

row_accessors! {
    /// Retransmit engine, global (table 9).
    RetxGlobalRow: retx_global in contract::config { LAST_QP }
}

row_accessors! {
    /// Congestion-control gate, per QP (table 10).
    CcRow: cc in contract::config { MIN_CWND, MAX_CWND, SEND_WINDOW }
}

row_accessors! {
    /// NSCC window controller, per QP (table 14).
    NsccRow: nscc in contract::config { BASE_RTT_NS, TARGET_NS, INCREASE_BYTES, INIT_CWND, DECREASE_GAIN, ENABLE }
}

row_accessors! {
    /// Address table (table 11).
    AddrRow: addr in contract::config { MAC, IP_LO, IP_HI, IPV6, VLAN, TCI, DSCP, TTL, WIRE_MRC10 }
}

row_accessors! {
    /// EV table, value rows (table 12).
    EvValueRow: ev_value in contract::config { VALUE, RR_START }
}

row_accessors! {
    /// EV table, deny/allow rows (table 12, index `0x8000 | qp`).
    EvControlRow: ev_control in contract::config { MASK, MATCH, ALLOW }
}

/// `row` as the `cfg.data` a block sees (byte 0 in bits 7:0): how the hw
/// tests configure blocks with the driver's encoder.
pub fn row_bits(row: &Row) -> Bits<ROW_BITS> {
    let mut b = Bits::<ROW_BITS>::default();
    for k in 0..ROW_BITS / 32 {
        b.set_bits::<32>(32 * k, u64::from(row.word(k)).into());
    }
    b
}

/// A config-table id as a constant of the block that decodes it: a
/// Verilog localparam (a `#[hdl_gen]` kernel cannot name a Rust const).
/// `Default` holds `ID`, so blocks keep `#[derive(Default)]`.
#[derive(Clone, Copy, Debug)]
pub struct TableId<const ID: u8>(Constant<Bits<TABLE_BITS>>);

impl<const ID: u8> Default for TableId<ID> {
    fn default() -> Self {
        TableId(Constant::new(u64::from(ID).into()))
    }
}

crate::param::constant_block!(TableId<const ID: u8>, TABLE_BITS);
