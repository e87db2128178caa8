//! The RTL and the driver agree on every field of the contract.
//!
//! The blocks read config rows and records through the accessors of
//! `hw::contract_rows` and build CQEs through its setters. This test puts
//! every accessor of every contract layout (`contract::layout`: SQE, CQE,
//! EV event, send context; `contract::config`: every other config row) in
//! one block, [`AllRows`], which decodes one input word with every getter
//! and encodes one word per layout with every setter. Then, per layout:
//!
//! * decode: for each field alone, and for all fields at once, the
//!   driver's encoder (`Field::put`, which `config::Row::set` and the
//!   layouts' `encode` are made of) writes distinct values into a record;
//!   every getter of that layout must return exactly its field's value
//!   (0 for the fields not written);
//! * encode: the setters are driven with the same values; the word must
//!   be byte for byte the record the driver's encoder builds, so the
//!   driver's decoder (`Field::get`) reads back every value.
//!
//! Both directions are checked on rust-hdl's simulation, and the emitted
//! Verilog is run in lockstep under Verilator (every output, every cycle),
//! so the slices the kernels emit (`row[(offset)+:(width)]`) are the ones
//! checked. The accessor lists here must be the contract's `FIELDS`
//! (checked), so a field added to the contract without an accessor fails.
//!
//! What it does not show: that a block uses the right accessor for its
//! purpose; the block tests (against the golden model) cover that.

use std::sync::{Arc, Mutex};

use contract::Field;
use hw::contract_rows::*;
use rust_hdl::prelude::*;

use tb::{lockstep, lockstep_sim};

/// Bits of the widest record (an SQE: one DMA beat).
const WORD_BITS: usize = 512;
const WORD_BYTES: usize = WORD_BITS / 8;

/// Every layout: (accessor trait, layout module, its fields).
macro_rules! all_rows {
    ($($trait:ident: $row:ident in $module:ident { $($field:ident),* $(,)? })*) => {
        paste::paste! {
            /// One getter output and one setter input per field of every
            /// layout, one encoded word per layout.
            #[derive(LogicBlock, Default)]
            struct AllRows {
                pub clock: Signal<In, Clock>,
                pub row: Signal<In, Bits<WORD_BITS>>,
                $($(
                    pub [<out_ $row _ $field:lower>]: Signal<Out, Bits<{ contract::$module::$row::$field.bits }>>,
                    pub [<in_ $row _ $field:lower>]: Signal<In, Bits<{ contract::$module::$row::$field.bits }>>,
                )*
                    pub [<enc_ $row>]: Signal<Out, Bits<WORD_BITS>>,
                )*
            }

            impl Logic for AllRows {
                #[hdl_gen]
                fn update(&mut self) {
                    $(
                        $(
                            self.[<out_ $row _ $field:lower>].next = self.row.val().[<get_value_ $row _ $field:lower>]();
                        )*
                        self.[<enc_ $row>].next = 0.into();
                        $(
                            self.[<enc_ $row>].next.[<set_value_ $row _ $field:lower>](self.[<in_ $row _ $field:lower>].val());
                        )*
                    )*
                }
            }

            /// (layout name, the fields listed here, the accessor trait's
            /// fields, the contract's fields).
            fn layouts() -> Vec<(&'static str, Vec<Field>, &'static [Field], &'static [Field])> {
                vec![$((
                    stringify!($row),
                    vec![$(contract::$module::$row::$field),*],
                    <Bits<WORD_BITS> as $trait>::FIELDS,
                    contract::$module::$row::FIELDS,
                )),*]
            }

            /// Drive the setter inputs of layout `name` with `values`.
            fn drive(x: &mut AllRows, name: &str, values: &[u64]) {
                $(
                    if name == stringify!($row) {
                        let mut v = values.iter();
                        $(
                            x.[<in_ $row _ $field:lower>].next = (*v.next().unwrap()).into();
                        )*
                    }
                )*
            }

            /// The getter outputs and the encoded word of layout `name`.
            fn observe(x: &AllRows, name: &str) -> (Vec<u64>, Vec<u8>) {
                $(
                    if name == stringify!($row) {
                        return (vec![$(to_u64(x.[<out_ $row _ $field:lower>].val())),*], to_bytes(x.[<enc_ $row>].val()));
                    }
                )*
                panic!("no layout {name}")
            }
        }
    };
}

all_rows! {
    SqCtxRow: sq_ctx in layout {
        SQ_BASE, CQ_INDEX, ADDR_INDEX, DEST_QP, START_PSN, PKEY, SQ_LOG2_SIZE, LOG2_MTU, EV_COUNT, ENABLE,
        SEND_MPR_UNITS, EV_MIN_ACTIVE,
    }
    SqeRecord: sqe in layout { OPCODE, FLAGS, LENGTH, WR_ID, LOCAL_IOVA, REMOTE_VA, RKEY, IMM }
    CqeRecord: cqe in layout { PHASE, STATUS, OPCODE, QP, WR_ID, BYTE_LEN, IMM, SQ_INDEX, HAS_IMM }
    EvEventRecord: ev_event in layout { PHASE, NEW_STATE, REASON, QP, EV, EV_INDEX, TIME }
    RingRow: ring in config { BASE, LOG2_SLOTS }
    RingConsumerRow: ring_consumer in config { CONSUMER }
    AckParamsRow: ack_params in config { EVERY, DELAY }
    RecvInitRow: recv_init in config { START_PSN, LOG2_MTU }
    MrRow: mr in config { RKEY, BASE_VA, LENGTH, VALID }
    RetxQpRow: retx_qp in config { ACK_TIMEOUT_EXP, STALL_ALLOWANCE_NS, REORDER, RETRY_LINEAR, RETRY_EXP, STALL_AGE_NS }
    RetxGlobalRow: retx_global in config { LAST_QP }
    CcRow: cc in config { MIN_CWND, MAX_CWND, SEND_WINDOW }
    NsccRow: nscc in config { BASE_RTT_NS, TARGET_NS, INCREASE_BYTES, INIT_CWND, DECREASE_GAIN, ENABLE }
    AddrRow: addr in config { MAC, IP_LO, IP_HI, IPV6, VLAN, TCI, DSCP, TTL, WIRE_MRC10 }
    EvValueRow: ev_value in config { VALUE, RR_START }
    EvControlRow: ev_control in config { MASK, MATCH, ALLOW }
}

fn to_u64<const N: usize>(b: Bits<N>) -> u64 {
    (0..N.min(64)).filter(|&i| b.get_bit(i)).fold(0, |acc, i| acc | 1 << i)
}

fn to_bytes<const N: usize>(b: Bits<N>) -> Vec<u8> {
    let mut out = vec![0u8; N / 8];
    for i in (0..N).filter(|&i| b.get_bit(i)) {
        out[i / 8] |= 1 << (i % 8);
    }
    out
}

fn from_bytes<const N: usize>(bytes: &[u8]) -> Bits<N> {
    let mut b = Bits::<N>::default();
    for (i, byte) in bytes.iter().enumerate() {
        b = b | (Bits::<N>::from(u64::from(*byte)) << (8 * i as u64));
    }
    b
}

/// A distinct, non-zero value for field `k` of a layout, in its width,
/// with its top bit set (so a slice one bit short or shifted shows).
fn value(f: &Field, k: usize) -> u64 {
    let v = 0xA5C3_9617_2B4E_D8F1u64.rotate_left(7 * k as u32 + 3) & f.mask();
    v | 1 << (f.bits - 1)
}

/// One check: layout `name`, the values written (0 for fields not
/// written), the record the driver's encoder builds from them.
struct Case {
    name: &'static str,
    values: Vec<u64>,
    record: Vec<u8>,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (name, fields, ..) in layouts() {
        let encode = |values: &[u64]| {
            let mut record = vec![0u8; WORD_BYTES];
            for (f, v) in fields.iter().zip(values) {
                f.put(&mut record, *v);
            }
            record
        };
        for k in 0..fields.len() {
            let mut values = vec![0u64; fields.len()];
            values[k] = value(&fields[k], k);
            out.push(Case {
                name,
                record: encode(&values),
                values,
            });
        }
        let values: Vec<u64> = fields.iter().enumerate().map(|(k, f)| value(f, k)).collect();
        out.push(Case {
            name,
            record: encode(&values),
            values,
        });
    }
    out
}

#[test]
fn accessors_cover_every_contract_field() {
    for (name, listed, accessors, contract) in layouts() {
        assert_eq!(
            listed.as_slice(),
            contract,
            "{name}: this test's list is not the contract's"
        );
        assert_eq!(
            accessors, contract,
            "{name}: hw::contract_rows does not cover the contract's fields"
        );
    }
    // Every config table has its layouts here.
    for row in contract::config::ROWS {
        assert!(
            layouts().iter().any(|(name, ..)| *name == row.name),
            "config row {} has no accessors",
            row.name
        );
    }
}

#[test]
fn rtl_and_driver_agree_on_every_field() {
    let cases = Arc::new(cases());
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let checked = Arc::new(Mutex::new(0usize));
    let (c2, f2, k2) = (cases.clone(), failures.clone(), checked.clone());
    let mut uut = AllRows::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(AllRows, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        for case in c2.iter() {
            x.row.next = from_bytes::<WORD_BITS>(&case.record);
            drive(&mut x, case.name, &case.values);
            wait_clock_cycle!(sim, clock, x);
            let (got, encoded) = observe(&x, case.name);
            let mut f = f2.lock().unwrap();
            if got != case.values {
                f.push(format!(
                    "{}: wrote {:x?}, the RTL read {:x?}",
                    case.name, case.values, got
                ));
            }
            if encoded != case.record {
                f.push(format!(
                    "{}: from {:x?} the RTL wrote {:02x?}, the driver {:02x?}",
                    case.name, case.values, encoded, case.record
                ));
            }
            *k2.lock().unwrap() += 1;
            // Idle inputs between cases, so a stale value cannot pass.
            x.row.next = 0.into();
            drive(&mut x, case.name, &vec![0; case.values.len()]);
            wait_clock_cycle!(sim, clock, x);
        }
        sim.done(x)
    });
    sim.run(Box::new(uut), 100_000_000_000).unwrap();
    let failures = failures.lock().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(*checked.lock().unwrap(), cases.len(), "every case ran");
    // The same cycles on the emitted Verilog.
    rec.check_verilog("mrc_contract_rows", || {
        hw::flow::emit_block("mrc_contract_rows", &mut AllRows::default()).verilog
    });
}
