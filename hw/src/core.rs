//! Top `MrcCore`: every block of the NIC pipeline joined, with the MAC
//! streams, the transaction-level DMA port, AXI-Lite and (through the
//! CSR block) the doorbells as its only ports. `docs/hw/core.md` walks a
//! WRITE through it hop by hop; this file is the wiring plus the little
//! glue that belongs to no block: the congestion-control admission of
//! packet records, the operation muxes in front of the retransmit engine
//! and the CC gate, the EV-table writes into the EV selector, the probe
//! answers' readmits, the EV-event packing and the nanosecond clock.

use rust_hdl::prelude::*;

use crate::ack_gen::AckGen;
use crate::axil::AxiLiteSlave;
use crate::bus::{
    AxiLiteSubordinate, AxisSink, AxisSource, ConfigSource, DmaReadInitiator, DmaReadRequestSource, DmaWriteInitiator,
};
use crate::cc_gate::CcGate;
use crate::completion::CompletionTracker;
use crate::contract_rows::{EvControlRow, EvEventRecord, EvValueRow, NsccRow, RecvInitRow, SqCtxRow, TableId};
use crate::csr::{BuildInfo, Csr};
use crate::desc_push::DescPushCache;
use crate::dma_arb::{DmaReadArb, DmaWriteArb};
use crate::ev_prober::{EvProberFull, SWEEP_BITS};
use crate::ev_selector::EvSelectorFull;
use crate::fault_inject::FaultInject;
use crate::nscc::{NsccFeedback, NsccUnit};
use crate::onehot::OneHot;
use crate::param::Param;
use crate::payload_push::PayloadPushCache;
use crate::requester::Requester;
use crate::retransmit::{EngineRecord, RetransmitEngine, SackFeedback, TIME_BITS};
use crate::ring_writer::RingWriter;
use crate::rtt_est::RttEstimator;
use crate::rx_buffer::RxBuffer;
use crate::rx_ingress::RxIngress;
use crate::rx_parser::RxParser;
use crate::rx_path::RxPath;
use crate::sack_table::SackTable;
use crate::send_cq::SendCompletions;
use crate::tx_builder::TxBuilder;
use crate::tx_path::{TxPath, PAYLOAD_FIFO_BITS};
use contract::config::{ev_control, ev_value, table, INDEX_SELECT};
use contract::field::span;
use contract::regmap::{counter_slot, N_COUNTERS};

/// Entries of the descriptor FIFO (`desc_fifo`), `2^DESC_FIFO_BITS`: every
/// descriptor beat the requester may have requested and not taken.
const DESC_FIFO_BITS: usize = 6;
const _: () = assert!(1 << DESC_FIFO_BITS >= crate::requester::DESC_BEATS_OUT);

/// Bits of an EV-table row the core keeps (the wider of its two row
/// layouts, value and deny/allow).
const EV_ROW_BITS: usize = {
    let (v, c) = (span(ev_value::FIELDS), span(ev_control::FIELDS));
    if v > c {
        v
    } else {
        c
    }
};

/// Counters wired by `update`, in slot order (the `cnt_inc` bit of each
/// is a literal there; `MrcCore::new` checks this list against
/// `regmap::COUNTERS`).
pub const WIRED_COUNTERS: &[&str] = &[
    "rx_parser_ok",
    "rx_parser_drop",
    "fi_frames",
    "fi_rand_drop",
    "fi_ev_drop",
    "fi_lb_discard",
    "sack_duplicate",
    "sack_out_of_window",
    "nack_sent",
    "retransmit",
    "rto",
    "ev_marked_bad",
    "completion",
    "cq_overflow",
    "placement_reject",
    "tx_frames",
    "tx_bad_request",
    "tx_payload_mismatch",
    "data_sent",
    "ack_sent",
    "no_good_ev",
    "cc_held",
    "req_bad_descriptor",
    "req_bad_doorbell",
    "retx_drop",
    "ev_event_lost",
    "db_stale",
    "rx_buffer_full",
    "rx_placed",
    "rx_not_data",
    "rx_discards",
    "push_consumed",
    "push_dropped",
    "probes_sent",
    "ev_readmitted",
    "rx_discards_join",
    "retx_drop_acked",
    "nscc_windows",
    "tx_flushed",
    "payload_push_consumed",
    "payload_push_dropped",
    "adm_ack_backlog",
];

/// Cycles of the core clock from one EV prober sweep's start to the
/// next's at the least: the golden model's `probe_interval` (100 us,
/// `proto::model::ev::EvSetConfig`) at 99/32 ns per cycle (`now_acc`). A
/// sweep of all 256 QPs x 128 EV slots takes 32,768 cycles, a little
/// more, so the full instance probes every 101 us.
pub const PROBE_SWEEP_CYCLES: u64 = 100_000 * 32 / 99;
const _: () = assert!(PROBE_SWEEP_CYCLES < 1 << SWEEP_BITS);
/// The QPs the EV prober scans: all of them (`0..=PROBE_QP_LAST`).
pub const PROBE_QP_LAST: u64 = 255;
/// Cycles from one sweep's start to the next's: the pacing, or the scan
/// of every slot (one per cycle) when that takes longer. The card's probe
/// interval (the golden model's `probe_interval` in `mrc cosim`).
pub const PROBE_PERIOD_CYCLES: u64 = {
    // `EvProberFull`'s slots: 256 QPs x 2^7 EVs.
    let scan = (PROBE_QP_LAST + 1) << 7;
    if scan > PROBE_SWEEP_CYCLES {
        scan
    } else {
        PROBE_SWEEP_CYCLES
    }
};
/// The core's nanosecond clock (`tx_ts`, echoes, RTT samples, the RTO):
/// `NS_STEP_32THS` 32nds of a ns per cycle (3.09375 ns, the 323.2 MHz
/// core clock), kept in 32nds (`now_acc`), so `now_ns` after `k` cycles
/// is `k * NS_STEP_32THS >> NS_FRAC_BITS`.
pub const NS_STEP_32THS: u64 = 99;
pub const NS_FRAC_BITS: usize = 5;
const _: () = assert!(NS_STEP_32THS < 1 << (NS_FRAC_BITS + 2), "3 to 4 ns per cycle");

/// Join credits in use (of `rx_path::JOIN_DEPTH`, 64) at which the
/// admission of the requester's packets waits for the retransmit engine's
/// SACK / NACK records (`ack_backlog`). The engine takes the TX path's
/// send records before them, so while the core sends faster than the
/// engine can take both, the RX path's records wait, its join FIFOs
/// fill and the ingress discards ACK frames. Holding the admission stops
/// the send records and lets the ACKs through, which pushes back on the
/// sending instead. Half the credits: the packets already admitted (the
/// TX path's reads ahead, 32) still hand their send records over after
/// the admission stops.
pub const ACK_BACKLOG_CREDITS: u64 = crate::rx_path::JOIN_DEPTH as u64 / 2;

/// Entries of `adm_fifo` (log2): probe answers on their way to the EV
/// selector's readmit command, the lowest of its priorities.
pub const ADM_FIFO_BITS: usize = 4;
/// log2 of `nscc_fifo`'s depth: NSCC feedback records between the CC
/// gate's operations and the NSCC unit, which takes an ACK in 6 to 116
/// cycles; full, the CC gate's ACK, LOSS, TIMEOUT and INIT operations
/// wait (so does the engine behind them): nothing is dropped.
pub const NSCC_FIFO_BITS: usize = 4;

/// One EV state change on its way from the EV selector to the EV-event
/// ring (an `evt_fifo` word), decoded into the contract's `ev_event` entry
/// at the FIFO's output.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct EvtWord {
    /// The new state (`ev_selector::state`).
    pub to: Bits<2>,
    /// The EV's index in its QP's set.
    pub ev: Bits<7>,
    pub qp: Bits<8>,
    /// The EV's value (32 bits, MRC 1.0).
    pub value: Bits<{ crate::ev_selector::VALUE_BITS }>,
    /// An ASSUMED_BAD EV made GOOD again: an answered probe (PROBE_OK).
    pub readmit: Bit,
    /// The mark that made it ASSUMED_BAD was a timeout's (TIMEOUT).
    pub timeout: Bit,
}

/// Entries of `evt_fifo`.
pub const EVT_FIFO_DEPTH: usize = 1 << 8;
/// Free entries `evt_fifo` must have before the EV selector starts a pass
/// or takes a mark: a pass's 128 events plus 16 for marks taken before it
/// whose events are still in the selector's pipeline.
pub const EVT_PASS_ROOM: usize = 128 + 16;

/// Bits of a send record in `sent_fifo` (qp 8, psn 24, ev 7, time 32, len 16).
pub const SENT_BITS: usize = 8 + 24 + 7 + 32 + 16;
/// Entries of `sent_fifo` (its address width, 11, is in its type).
pub const SENT_FIFO_DEPTH: usize = 1 << 11;
/// Send records `sent_fifo` must hold so that it never fills during a
/// walk of the retransmit engine. Send records go to the engine before
/// anything else, but through its input stage (`rt_in`): a SACK or NACK
/// enters the stage only while the FIFO is empty, and then waits there
/// for the engine, which may be in a walk (an RTO walk the scanner began
/// as it entered, or the walk of the record before it). The send records
/// of that walk queue behind it, so a walk starts with at most one walk's
/// records in the FIFO (after a record from the stage the FIFO has the
/// stage again until it is empty): two walks' worth in all. One walk's
/// worth: while the walk waits for its `rtx`
/// register to be taken, every record the requester emits is a resend
/// (it serves a waiting resend first): at most one per PSN of the QP's
/// window (`WINDOW`). Otherwise a walk runs at most 5 + 4 x `WINDOW`
/// cycles (an RTO walk; a SACK at most 29 + 3 x `WINDOW`: 9, 4 per
/// 64-PSN word, up to 5, 2 per newly acknowledged PSN, 1 per outstanding
/// one), during which the TX path's sequencer builds at most one packet
/// per 6 cycles (fewer than `WINDOW`); their send records leave with
/// the headers as the TX builder takes them, so a burst of the data
/// header FIFO's (`DATA_HDR_FIFO_DEPTH`) may come on top. Plus the
/// packets between the requester and the engine when the walk starts.
pub const SENT_FIFO_MIN: usize = 2 * (2 * crate::retransmit::WINDOW as usize + crate::tx_path::DATA_HDR_FIFO_DEPTH + 4);
const _: () = assert!(SENT_FIFO_DEPTH >= SENT_FIFO_MIN);
/// Entries of `resend_fifo` (its address width, 10, is in its type). The
/// engine queues a PSN once until its resend's send record clears the
/// slot's `queued` flag, which comes after the requester took it from
/// the FIFO, so the FIFO holds at most one entry per PSN of each QP's
/// window: 4 QPs' whole windows. Beyond that the engine waits for room,
/// and the deadlock above is possible again (docs/hw/core.md "Known
/// gaps").
pub const RESEND_FIFO_DEPTH: usize = 1 << 10;

/// Entries of `defer_fifo` (log2): resends the CC gate refused, waiting
/// for their QP's window. A whole window of one QP fits
/// (`retransmit::WINDOW`, 256 PSNs); when it is full, a refused resend is
/// held in the requester's output as before (`AdmitState::Held`).
pub const DEFER_FIFO_BITS: usize = 8;
const _: () = assert!(1 << DEFER_FIFO_BITS >= crate::retransmit::WINDOW as usize);

/// CC admission of the requester's output record (`adm`).
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum AdmitState {
    /// No ADMIT asked: ask for the record in the requester's output
    /// register when the gate's op slot is granted (`cc_g_admit`).
    Idle,
    /// The ADMIT is in the gate; its answer comes 2 edges later.
    Asked,
    /// Admitted: hand the record to the TX path.
    Pass,
    /// Refused (window full): wait for bytes to leave the QP's flight,
    /// or `HELD_RETRY_CYCLES`, then ask again; withdrawn if its QP is in
    /// error.
    Held,
}

/// Cycles a held packet waits before it is asked again when no ACK comes.
pub const HELD_RETRY_CYCLES: u64 = 1023;

#[derive(LogicBlock, Default)]
pub struct MrcCore {
    pub clock: Signal<In, Clock>,
    // MAC RX, 512-bit AXI-Stream (never back-pressured: the RX stages take
    // a beat every cycle, and a frame without room is discarded whole at
    // the ingress admission).
    pub s_rx: AxisSink,
    // MAC TX.
    pub m_tx: AxisSource,
    // AXI-Lite slave (CSRs, config tables, doorbells).
    pub s_axil: AxiLiteSubordinate,
    // DMA (the core masters host memory; see docs/hw/README.md).
    pub dma_rd: DmaReadInitiator,
    pub dma_wr: DmaWriteInitiator,
    // ---- Blocks.
    fault: FaultInject,
    ingress: RxIngress,
    parser: RxParser,
    rxbuf: RxBuffer,
    rxpath: RxPath,
    sack: SackTable,
    compl: CompletionTracker,
    ackgen: AckGen,
    axil: AxiLiteSlave,
    csr: Csr,
    req: Requester,
    push: DescPushCache,
    pl_push: PayloadPushCache,
    cc: CcGate,
    evsel: EvSelectorFull,
    prober: EvProberFull,
    txpath: TxPath,
    txb: TxBuilder,
    retx: RetransmitEngine,
    rtt: RttEstimator,
    sendcq: SendCompletions,
    cq_rw: RingWriter,
    ev_rw: RingWriter,
    rd_arb: DmaReadArb,
    wr_arb_a: DmaWriteArb,
    wr_arb_b: DmaWriteArb,
    // ---- Glue state.
    /// Time in 1/32 ns (`now_ns` = bits 36-5; the retransmit engine's
    /// 36-bit RTO time, `now_rto`, bits 40-5).
    now_acc: DFF<Bits<41>>,
    /// CC admission of the requester's packet records (`admit`).
    adm: DFF<AdmitState>,
    adm_wait: DFF<Bits<10>>,
    /// Since the ADMIT of the record in the requester's output, the CC
    /// gate took an operation that may open its QP's window (`open_*`):
    /// a refused first transmission's QP is then not shut.
    adm_reopen: DFF<Bit>,
    /// The RX path's SACK / NACK record waits for the retransmit engine
    /// with `ACK_BACKLOG_CREDITS` or more join credits in use: new
    /// admissions wait (`ACK_BACKLOG_CREDITS`). Not while `resend_fifo`
    /// is full: the engine may then be waiting on the requester, whose
    /// output the admission would hold.
    ack_backlog: DFF<Bit>,
    /// The admission could ask an ADMIT this cycle but for `ack_backlog`:
    /// a packet waits in the requester's output and the gate's operation
    /// slot is free.
    adm_free: Signal<Local, Bit>,
    /// `adm_free` while `ack_backlog` holds the admission (counter
    /// `adm_ack_backlog`).
    adm_ack_held: Signal<Local, Bit>,
    c_ack_backlog: Param<{ crate::rx_ingress::CREDIT_BITS }, ACK_BACKLOG_CREDITS>,
    /// The record in the requester's output register belongs to a QP the
    /// retransmit engine has put in error (a report for its QP while it is
    /// there, or in the cycle it was written, which `qerr_prev_*` keeps
    /// one cycle for the compare). Such a record held at CC admission is
    /// withdrawn: nothing will release its QP's bytes in flight any more,
    /// so it would hold the requester's output, every QP, until the QP is
    /// configured again.
    out_err: DFF<Bit>,
    qerr_prev_v: DFF<Bit>,
    qerr_prev_qp: DFF<Bits<8>>,
    /// QP start pending (a send-context row was written): INIT to the
    /// retransmit engine and to the CC gate.
    init_retx: DFF<Bit>,
    init_cc: DFF<Bit>,
    init_qp: DFF<Bits<8>>,
    init_psn: DFF<Bits<24>>,
    /// Receive-side QP start pending (config table 5) for the SACK table.
    rinit: DFF<Bit>,
    rinit_qp: DFF<Bits<8>>,
    rinit_psn: DFF<Bits<24>>,
    /// EV-table write pending for the EV selector.
    evc_valid: DFF<Bit>,
    evc_ctl: DFF<Bit>,
    evc_index: DFF<Bits<16>>,
    evc_data: DFF<Bits<EV_ROW_BITS>>,
    /// EV-set size pending for the EV selector (a send-context row's
    /// `ev_count`): presented after any pending EV-table write, which the
    /// driver writes before the context.
    evn_valid: DFF<Bit>,
    evn_qp: DFF<Bits<8>>,
    evn_count: DFF<Bits<8>>,
    /// The QP's floor of GOOD EVs (`ev_min_active`), with its set size.
    evn_min: DFF<Bits<8>>,
    /// Bit q: QP q's send context was last written with `enable` set (the
    /// QP is started). Frames for any other QP are discarded at the RX
    /// path's QP check, as the model drops them (`WrongQp` / `BadState`):
    /// without this, a frame for an unconfigured QP below 256 was placed
    /// through the global MR table and acknowledged from QP state nobody
    /// wrote.
    qp_live: DFF<Bits<256>>,
    /// EV events waiting for the EV-event ring (value 16 | qp 8 | ev 7 |
    /// to 2). 256 deep; `almost_full` at `EVT_FIFO_DEPTH - EVT_PASS_ROOM`
    /// entries. A deny / allow changes up to 128 EVs in as many cycles and
    /// the ring writer takes one entry per 4 cycles, so the EV selector
    /// starts a pass, or takes a mark, only while the FIFO has room for a
    /// whole pass plus the events of marks still in its pipeline: no EV
    /// event is dropped inside the core (`evt_room`).
    evt_fifo: SynchronousFIFO<EvtWord, 8, 9, { EVT_PASS_ROOM as u32 }>,
    /// Probe answers ({qp 8, EV index 7}) the retransmit engine took, on
    /// their way to the EV selector's readmit command (taken when no
    /// mark, EV-table row or set-count waits). Full, it holds the RX
    /// path's next probe answer back (the RX path waits, nothing is
    /// dropped).
    adm_fifo: SynchronousFIFO<Bits<15>, ADM_FIFO_BITS, { ADM_FIFO_BITS + 1 }, 1>,
    /// The EV selector's state changes that the retransmit engine did not
    /// ask for ({qp 8, EV index 7}: readmits, denials, allows; every event
    /// but a change to ASSUMED_BAD, which only the engine's marks make),
    /// on their way to the engine as EV_CHANGED records: its stall
    /// suspicion of the EV goes, as the model's state change clears it. A
    /// deny / allow or readmit starts only while it has room for a whole
    /// pass (`chg_room`, as `evt_room`); marks never wait for it, so the
    /// engine, which drains it, is never held by it.
    chg_fifo: SynchronousFIFO<Bits<15>, 8, 9, { EVT_PASS_ROOM as u32 }>,
    /// NSCC's ACK-driven window (`hw::nscc`, docs/hw/nscc.md): fed from
    /// the CC gate's operations through `nscc_fifo`, its window writes go
    /// back to the gate as SETW.
    nscc: NsccUnit,
    /// The CC gate's ACK, LOSS, TIMEOUT and INIT operations, as NSCC
    /// feedback; a record of a QP without NSCC (`nscc_on`) leaves it in
    /// one cycle without reaching the unit.
    nscc_fifo: SynchronousFIFO<NsccFeedback, NSCC_FIFO_BITS, { NSCC_FIFO_BITS + 1 }, 1>,
    /// Bit q: QP q's table 14 row has `enable` set (its window is NSCC's).
    nscc_on: DFF<Bits<256>>,
    /// Descriptor read responses (data 512 | keep 64 | last 1 | tag 8)
    /// between the read arbiter and the requester. The DMA port answers
    /// in order; without this buffer a fetch of 3 or more descriptors
    /// deadlocked: the requester stops taking descriptor beats while its
    /// record is not taken, the TX path does not take the record until
    /// its payload read returns, and that read's response waits behind
    /// the descriptor beats. The requester has at most
    /// `requester::DESC_BEATS_OUT` (64) descriptor beats requested and not
    /// taken (its queued reads of several QPs and the batch in service),
    /// so `2^DESC_FIFO_BITS` entries take them whole.
    desc_fifo: SynchronousFIFO<Bits<585>, DESC_FIFO_BITS, { DESC_FIFO_BITS + 1 }, 1>,
    /// The TX path's send records (qp 8 | psn 24 | ev 7 | time 32 |
    /// len 16) on their way to the retransmit engine, which takes them
    /// before the RX path's SACK / NACK records. Without it the core
    /// deadlocked whenever a walk of the engine (SACK loss pass, RTO, tail
    /// check) had to queue a resend while a packet was on its way out:
    /// the walk waits for its `rtx` register, the requester takes that
    /// only when its own output is free, its output waits for the TX path,
    /// and the TX path waited for the engine to take the send record of
    /// the packet before, which it does only when idle (issue 15,
    /// docs/hw/core.md "Glue"). Depth: see `SENT_FIFO_MIN`.
    sent_fifo: SynchronousFIFO<Bits<SENT_BITS>, 11, 12, 1>,
    /// The retransmit engine's resends (qp 8 | psn 24) on their way to the
    /// requester. The engine's `rtx` is taken into it whenever it has
    /// room, and its bytes leave flight at the CC gate (LOSS / RELEASE) in
    /// that cycle. Without it the core deadlocked when a walk had to queue
    /// a resend while the requester's output held a packet the CC gate
    /// would not admit: the requester takes a resend only when its output
    /// is free, the gate admits only when bytes leave flight (an ACK, or a
    /// resend taken), and the engine reports ACKs only after its walk
    /// (issue 15). Depth: see `RESEND_FIFO_DEPTH`.
    resend_fifo: SynchronousFIFO<Bits<32>, 10, 11, 1>,
    /// Resends the CC gate refused (qp 8 | psn 24), waiting here for their
    /// QP's window instead of in the requester's one output register,
    /// where they held every QP (docs/hw/core.md, step 3). The head goes
    /// to the requester before `resend_fifo` once its QP is out of
    /// `defer_shut`; a head whose QP is still shut goes round to the tail.
    defer_fifo: SynchronousFIFO<Bits<32>, DEFER_FIFO_BITS, { DEFER_FIFO_BITS + 1 }, 1>,
    /// Per QP: a resend of it was refused and, since, the CC gate took no
    /// operation that may open its window (`open_*`, INIT) and no error
    /// was reported for it (its deferred resends then go to the
    /// requester, which drops those of a QP in error).
    defer_shut: DFF<Bits<256>>,
    /// The head of `defer_fifo` may go to the requester (its QP not shut).
    defer_head_open: Signal<Local, Bit>,
    /// A refused resend goes into `defer_fifo` this cycle (`adm` Asked).
    defer_put: Signal<Local, Bit>,
    /// A shut head goes from `defer_fifo`'s head to its tail.
    defer_rotate: Signal<Local, Bit>,
    defer_set: Signal<Local, Bits<256>>,
    defer_clr: Signal<Local, Bits<256>>,
    /// The operations that take a QP out of `defer_shut` (one the CC gate
    /// took that may open its window, or an INIT; an error report), and
    /// their QPs, registered: the bits clear a cycle after them. The CC
    /// gate's operation QP is chosen late in its cycle (by the gate's
    /// arbitration), and its decode on top of it was the bits' path. A
    /// clear one cycle late keeps a QP shut one cycle more (its deferred
    /// resend goes round the FIFO once more), never less.
    defer_clr_op: DFF<Bit>,
    defer_clr_op_qp: DFF<Bits<8>>,
    defer_clr_err: DFF<Bit>,
    defer_clr_err_qp: DFF<Bits<8>>,
    /// Payload read responses (data 512 | keep 64 | last 1) on their way
    /// to the TX builder. The TX path issues a read only when its beats
    /// fit here beside those of the reads before it (`hw::tx_path`,
    /// `PAYLOAD_FIFO_BEATS`), so a response is always taken at once and
    /// the reads run ahead of the builder: a host read latency is
    /// covered by the reads in flight, not paid per header slot of the
    /// builder (docs/hw/tx_path.md, "Timing").
    pl_fifo: SynchronousFIFO<Bits<577>, PAYLOAD_FIFO_BITS, { PAYLOAD_FIFO_BITS + 1 }, 1>,
    /// The send record the retransmit engine is working on (taken from
    /// `sent_fifo`, no other record since): its QP and length. If the
    /// engine drops it (`cnt_drop_acked`: a resend of a PSN acknowledged
    /// meanwhile, below `una`; `cnt_drop`: the QP in error, a new PSN
    /// beyond the window), its bytes were admitted into flight at the CC gate and no
    /// ACK will ever take them out: `rel_pend` releases them (RELEASE).
    /// Without it, resends of PSNs acknowledged while they waited in
    /// `resend_fifo` or the requester leaked their bytes until the window
    /// was full of them and the QP stopped (issue 15).
    sent_track: DFF<Bit>,
    sent_qp: DFF<Bits<8>>,
    sent_len: DFF<Bits<16>>,
    rel_pend: DFF<Bit>,
    rel_qp: DFF<Bits<8>>,
    rel_len: DFF<Bits<16>>,
    // ---- Locals.
    now_ns: Signal<Local, Bits<32>>,
    now_rto: Signal<Local, Bits<TIME_BITS>>,
    cc_g_init: Signal<Local, Bit>,
    cc_g_rel: Signal<Local, Bit>,
    cc_g_ack: Signal<Local, Bit>,
    cc_g_rto: Signal<Local, Bit>,
    cc_g_rtx: Signal<Local, Bit>,
    cc_g_admit: Signal<Local, Bit>,
    /// The CC gate takes the NSCC unit's window write this cycle.
    cc_g_setw: Signal<Local, Bit>,
    /// `nscc_fifo` has room: the CC gate's ACK, LOSS, TIMEOUT and INIT
    /// operations may go.
    nscc_room: Signal<Local, Bit>,
    /// The CC gate's operation this cycle is NSCC feedback.
    nscc_push: Signal<Local, Bit>,
    /// `nscc_fifo`'s head record is of a QP with NSCC on.
    nscc_head_on: Signal<Local, Bit>,
    /// A table 14 row is written this cycle (its `enable` to `nscc_on`).
    cfg_nscc: Signal<Local, Bit>,
    /// `nscc_on`'s bit of the row's QP, and the row's `enable` there.
    nscc_sel: Signal<Local, Bits<256>>,
    nscc_set: Signal<Local, Bits<256>>,
    k_ns_step: Param<41, NS_STEP_32THS>,
    qerr_fire: Signal<Local, Bit>,
    out_taken: Signal<Local, Bit>,
    rt_g_init: Signal<Local, Bit>,
    rt_g_rx: Signal<Local, Bit>,
    /// The engine's next record goes to the RTT estimator too and the
    /// estimator is busy: the record waits.
    rt_est_hold: Signal<Local, Bit>,
    /// The engine's next record goes to the RTT estimator too.
    rt_est_rec: Signal<Local, Bit>,
    /// The record the arbiter chose enters the engine's input stage this
    /// cycle (`rt_in`).
    rt_take: Signal<Local, Bit>,
    /// The arbiter's record (valid while `rt_valid`): the engine's input
    /// stage takes it.
    rt_valid: Signal<Local, Bit>,
    rt_rec: Signal<Local, EngineRecord>,
    /// The retransmit engine's input stage: one record between the
    /// arbiter and the engine, so that the engine's inputs are registers
    /// (it classifies a record's PSN in the cycle it takes it: with the
    /// arbiter's FIFO flags and muxes ahead, that was the core's deepest
    /// path). It takes the arbiter's record when empty or when the engine
    /// takes its own in that cycle, so records follow each other as
    /// before, a cycle later. `rt_in_sent`: the record is a send record
    /// (from `sent_fifo`, for `sent_track`).
    rt_in_valid: DFF<Bit>,
    rt_in_sent: DFF<Bit>,
    rt_in: DFF<EngineRecord>,
    rt_in_fb: DFF<SackFeedback>,
    /// The engine takes the input stage's record this cycle.
    rt_eng_take: Signal<Local, Bit>,
    p_kind_sack: Param<{ crate::retransmit::KIND_BITS }, { crate::retransmit::kind::SACK }>,
    /// CQE source: the send completions this cycle (else the RX path's).
    cqe_send: Signal<Local, Bit>,
    cqe_prio_send: DFF<Bit>,
    rt_g_sent: Signal<Local, Bit>,
    /// The engine's record this cycle is an EV_CHANGED from `chg_fifo`.
    rt_g_chg: Signal<Local, Bit>,
    /// `chg_fifo` has room for a whole pass.
    chg_room: Signal<Local, Bit>,
    p_kind_ev_changed: Param<{ crate::retransmit::KIND_BITS }, { crate::retransmit::kind::EV_CHANGED }>,
    ev_free: Signal<Local, Bit>,
    /// `evt_fifo` has room for a whole pass (`EVT_PASS_ROOM`).
    evt_room: Signal<Local, Bit>,
    evc_take: Signal<Local, Bit>,
    evn_take: Signal<Local, Bit>,
    adm_take: Signal<Local, Bit>,
    /// The RX path's record is a probe answer and `adm_fifo` is full.
    adm_block: Signal<Local, Bit>,
    /// The EV selector's event is a readmit (ASSUMED_BAD -> GOOD).
    evt_readmit: Signal<Local, Bit>,
    cfg_sq: Signal<Local, Bit>,
    cfg_ev: Signal<Local, Bit>,
    /// The config row the CSR holds can be taken this cycle: the pending
    /// register it would fill is free (see `cfg_ready` in the CSR).
    cfg_ready: Signal<Local, Bit>,
    evt_entry: Signal<Local, Bits<256>>,
    qp_live_mask: Signal<Local, Bits<256>>,
    /// One-hot codes of the QP numbers the core's per-QP bitmaps are set
    /// and cleared by (`qp_live`, `nscc_on`, `defer_shut`): decoders, not
    /// `1 << qp` shifters (`hw::onehot`).
    oh_cfg: OneHot<256, 8>,
    oh_out: OneHot<256, 8>,
    oh_ccop: OneHot<256, 8>,
    oh_qerr: OneHot<256, 8>,
    /// `qp_live` shifted down by the parsed dest QP: bit 0 is its bit.
    qp_live_at: Signal<Local, Bits<256>>,
    rx_qp_live: Signal<Local, Bit>,
    rx_qp_dead: Signal<Local, Bit>,
    // ---- Named values the kernel compares with (localparams).
    t_sq_ctx: TableId<{ table::SQ_CTX }>,
    t_nscc: TableId<{ table::NSCC }>,
    p_nscc_ack: Param<2, { crate::nscc::kind::ACK }>,
    p_nscc_loss: Param<2, { crate::nscc::kind::LOSS }>,
    p_nscc_timeout: Param<2, { crate::nscc::kind::TIMEOUT }>,
    p_nscc_init: Param<2, { crate::nscc::kind::INIT }>,
    p_setw: Param<3, { crate::cc_gate::kind::SETW }>,
    /// Extension type of a legacy SACK (`rx_parser::translate::EXT_SACK`'s
    /// low nibble).
    p_ext_type_sack: Param<4, { crate::rx_parser::translate::EXT_SACK & 0xF }>,
    t_ack_qp_init: TableId<{ table::ACK_QP_INIT }>,
    t_recv_qp: TableId<{ table::RECV_QP }>,
    t_ev: TableId<{ table::EV }>,
    /// The EV table's index bit that selects a deny/allow row.
    p_index_select: Param<16, { INDEX_SELECT as u64 }>,
    p_state_assumed_bad: Param<2, { crate::ev_selector::state::ASSUMED_BAD }>,
    p_reason_loss: Param<8, { contract::layout::EvReason::Loss as u64 }>,
    p_reason_probe_ok: Param<8, { contract::layout::EvReason::ProbeOk as u64 }>,
    p_reason_timeout: Param<8, { contract::layout::EvReason::Timeout as u64 }>,
    p_mark_timeout: Param<2, { crate::retransmit::mark_reason::TIMEOUT }>,
    p_mark_skip: Param<2, { crate::retransmit::mark_reason::SKIP }>,
    p_rtx_oow: Param<{ crate::retransmit::RTX_REASON_BITS }, { crate::retransmit::reason::OUT_OF_WINDOW }>,
    p_rtx_release: Param<{ crate::retransmit::RTX_REASON_BITS }, { crate::retransmit::reason::RELEASE }>,
    p_state_good: Param<2, { crate::ev_selector::state::GOOD }>,
    p_probe_sweep: Param<SWEEP_BITS, PROBE_SWEEP_CYCLES>,
    p_probe_qp_last: Param<8, PROBE_QP_LAST>,
}

impl MrcCore {
    pub fn new(build: BuildInfo) -> MrcCore {
        let slots: Vec<usize> = WIRED_COUNTERS.iter().map(|n| counter_slot(n)).collect();
        assert_eq!(
            slots,
            (0..WIRED_COUNTERS.len()).collect::<Vec<_>>(),
            "counter slots are wired in order"
        );
        assert_eq!(N_COUNTERS, WIRED_COUNTERS.len(), "every counter is wired");
        MrcCore {
            csr: Csr::new(build),
            cq_rw: RingWriter::new(contract::config::table::CQ_RING, 5),
            ev_rw: RingWriter::new(contract::config::table::EV_RING, 4),
            ..Default::default()
        }
    }
}

impl Logic for MrcCore {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            now_acc,
            adm,
            adm_wait,
            adm_reopen,
            ack_backlog,
            out_err,
            qerr_prev_v,
            qerr_prev_qp,
            init_retx,
            init_cc,
            init_qp,
            init_psn,
            rinit,
            rinit_qp,
            rinit_psn,
            cqe_prio_send,
            evc_valid,
            evc_ctl,
            evc_index,
            evc_data,
            evn_valid,
            evn_qp,
            evn_count,
            evn_min,
            qp_live,
            sent_track,
            sent_qp,
            sent_len,
            rt_in_valid,
            rt_in_sent,
            rt_in,
            rt_in_fb,
            rel_pend,
            rel_qp,
            rel_len,
            nscc_on,
            defer_shut,
            defer_clr_op,
            defer_clr_op_qp,
            defer_clr_err,
            defer_clr_err_qp
        );
        clock!(
            self,
            clock,
            fault,
            ingress,
            parser,
            rxbuf,
            rxpath,
            sack,
            compl,
            ackgen,
            axil,
            csr,
            req,
            push,
            pl_push,
            cc,
            evsel,
            prober,
            txpath,
            txb,
            rtt,
            retx,
            sendcq,
            cq_rw,
            ev_rw,
            rd_arb,
            wr_arb_a,
            wr_arb_b,
            evt_fifo,
            adm_fifo,
            chg_fifo,
            nscc,
            nscc_fifo,
            desc_fifo,
            sent_fifo,
            resend_fifo,
            defer_fifo,
            pl_fifo
        );
        // ---- Time: 99/32 ns per cycle (3.094 ns; the CMAC clock is
        // 322.27 MHz, 3.103 ns: 0.3% slow, which only scales RTTs).
        self.now_acc.d.next = self.now_acc.q.val() + self.k_ns_step.val();
        // (Offset 5 is `NS_FRAC_BITS`: a literal, which the emitted Verilog
        // can name.)
        self.now_ns.next = self.now_acc.q.val().get_bits::<32>(5);
        self.now_rto.next = self.now_acc.q.val().get_bits::<36>(5);

        // ---- MAC RX -> fault injection -> ingress admission -> parser and
        // RX buffer. The admission is the only place a received frame may
        // be dropped (whole, at its first beat, `rx_discards`): it admits a
        // frame only with a join credit of the RX path and RX buffer room
        // for a frame of the largest size, so nothing after it loses one.
        AxisSink::link(&mut self.s_rx, &mut self.fault.s_rx);
        AxisSource::join(&mut self.fault.m_rx, &mut self.ingress.s_axis);
        self.ingress.joined.next = self.rxpath.join_release.val();
        self.ingress.buf_room_beats.next = self.rxbuf.room_beats.val();
        self.ingress.buf_room_frames.next = self.rxbuf.room_frames.val();
        // The admitted stream goes to the parser and the RX buffer at once
        // (a broadcast, so signal by signal: both must take a beat; each
        // takes one every cycle).
        self.parser.s_axis.tdata.next = self.ingress.m_axis.tdata.val();
        self.parser.s_axis.tkeep.next = self.ingress.m_axis.tkeep.val();
        self.parser.s_axis.tlast.next = self.ingress.m_axis.tlast.val();
        self.parser.s_axis.tvalid.next = self.ingress.m_axis.tvalid.val();
        self.rxbuf.s_axis.tdata.next = self.ingress.m_axis.tdata.val();
        self.rxbuf.s_axis.tkeep.next = self.ingress.m_axis.tkeep.val();
        self.rxbuf.s_axis.tlast.next = self.ingress.m_axis.tlast.val();
        self.rxbuf.s_axis.tvalid.next = self.ingress.m_axis.tvalid.val();
        self.ingress.m_axis.tready.next = self.parser.s_axis.tready.val() & self.rxbuf.s_axis.tready.val();
        // ---- RX path: the parser's record and the buffer's frame id, in
        // frame order, dispatched to the SACK table, the completion
        // tracker, the ACK generator and the retransmit engine.
        self.rxpath.now_ns.next = self.now_ns.val();
        self.rxpath.prs_valid.next = self.parser.out_valid.val();
        self.rxpath.prs_drop.next = self.parser.out_drop.val();
        self.rxpath.prs_ecn_ce.next = self.parser.out_ecn_ce.val();
        self.rxpath.prs_trimmed.next = self.parser.out_trimmed.val();
        self.rxpath.prs_skip.next = self.parser.out_skip.val();
        self.rxpath.prs_always_skip.next = self.parser.out_always_skip.val();
        self.rxpath.prs_ev.next = self.parser.out_ev.val();
        self.rxpath.prs_opcode.next = self.parser.out_opcode.val();
        // A QP that is not live is presented as out of range (bit 8 set):
        // the RX path discards the frame and counts it (`rx_not_data`).
        self.oh_cfg.idx.next = self.csr.cfg.index.val().get_bits::<8>(0);
        self.qp_live_mask.next = self.oh_cfg.o.val();
        if self.csr.cfg.valid.val()
            & (self.csr.cfg.table.val() == self.t_sq_ctx.val())
            & (self.csr.cfg.index.val() < 256)
        {
            if self.csr.cfg.data.val().get_value_sq_ctx_enable().any() {
                self.qp_live.d.next = self.qp_live.q.val() | self.qp_live_mask.val();
            } else {
                self.qp_live.d.next = self.qp_live.q.val() & !self.qp_live_mask.val();
            }
        }
        self.qp_live_at.next =
            self.qp_live.q.val() >> bit_cast::<256, 8>(self.parser.out_dest_qp.val().get_bits::<8>(0));
        self.rx_qp_live.next = self.qp_live_at.val().get_bit(0);
        // (The negation goes through its own 1-bit signal: inside a wider
        // Verilog expression `~x` is taken after x is widened.)
        self.rx_qp_dead.next = !self.rx_qp_live.val();
        self.rxpath.prs_dest_qp.next =
            self.parser.out_dest_qp.val() | (bit_cast::<24, 1>(self.rx_qp_dead.val().into()) << 8);
        self.rxpath.prs_ack_req.next = self.parser.out_ack_req.val();
        self.rxpath.prs_xbit.next = self.parser.out_xbit.val();
        self.rxpath.prs_psn.next = self.parser.out_psn.val();
        self.rxpath.prs_reth_va.next = self.parser.out_reth_va.val();
        self.rxpath.prs_reth_rkey.next = self.parser.out_reth_rkey.val();
        self.rxpath.prs_reth_len.next = self.parser.out_reth_len.val();
        self.rxpath.prs_imm.next = self.parser.out_imm.val();
        self.rxpath.prs_ext.next = self.parser.out_ext.val();
        // A legacy SACK's bytes 6-7 are reserved (ignored on receive);
        // an MRC 1.0 SACK's CC_STATE goes there (`rx_parser::translate::
        // SACK_CC_RESTORE`): cleared on a legacy one, so that only MRC 1.0
        // sets a penalty.
        if !self.parser.out_mrc10.val() & (self.parser.out_ext.val().get_bits::<4>(216) == self.p_ext_type_sack.val()) {
            self.rxpath.prs_ext.next = bit_cast::<224, 160>(self.parser.out_ext.val().get_bits::<160>(0))
                | (bit_cast::<224, 48>(self.parser.out_ext.val().get_bits::<48>(176)) << 176);
        }
        self.rxpath.prs_payload_off.next = self.parser.out_payload_off.val();
        self.rxpath.prs_payload_len.next = self.parser.out_payload_len.val();
        self.rxpath.rec_valid.next = self.rxbuf.rec_valid.val();
        self.rxpath.rec_stored.next = self.rxbuf.rec_stored.val();
        self.rxpath.rec_id.next = self.rxbuf.rec_id.val();
        self.rxbuf.cmd_valid.next = self.rxpath.cmd_valid.val();
        self.rxpath.cmd_ready.next = self.rxbuf.cmd_ready.val();
        self.rxbuf.cmd_id.next = self.rxpath.cmd_id.val();
        self.rxbuf.cmd_place.next = self.rxpath.cmd_place.val();
        self.rxbuf.cmd_addr.next = self.rxpath.cmd_addr.val();
        self.rxbuf.cmd_off.next = self.rxpath.cmd_off.val();
        self.rxbuf.cmd_len.next = self.rxpath.cmd_len.val();
        // SACK table: packets from the RX path (each data packet is judged
        // with a no-mark request first and marked by a second request only
        // once the completion tracker accepted it; trimmed packets are only
        // judged; see rx_path.md), QP starts from config table 5,
        // snapshots for the ACK generator.
        self.sack.req_valid.next = self.rxpath.sack_req_valid.val();
        self.rxpath.sack_req_ready.next = self.sack.ready.val();
        self.sack.req_qp.next = self.rxpath.sack_req_qp.val();
        self.sack.req_psn.next = self.rxpath.sack_req_psn.val();
        self.sack.req_nomark.next = self.rxpath.sack_req_nomark.val();
        self.rxpath.sack_out_valid.next = self.sack.out_valid.val();
        self.rxpath.sack_out_verdict.next = self.sack.out_verdict.val();
        self.rxpath.sack_out_expected.next = self.sack.out_expected.val();
        if self.csr.cfg.valid.val()
            & (self.csr.cfg.table.val() == self.t_ack_qp_init.val())
            & (self.csr.cfg.index.val() < 256)
        {
            self.rinit.d.next = true;
            self.rinit_qp.d.next = bit_cast::<8, 16>(self.csr.cfg.index.val());
            self.rinit_psn.d.next = self.csr.cfg.data.val().get_value_recv_init_start_psn();
        }
        self.sack.init_valid.next = self.rinit.q.val();
        self.sack.init_qp.next = self.rinit_qp.q.val();
        self.sack.init_psn.next = self.rinit_psn.q.val();
        if self.rinit.q.val()
            & self.sack.init_ready.val()
            & !(self.csr.cfg.valid.val() & (self.csr.cfg.table.val() == self.t_ack_qp_init.val()))
        {
            self.rinit.d.next = false;
        }
        self.sack.snap_valid.next = self.ackgen.snap_valid.val();
        self.ackgen.snap_ready.next = self.sack.snap_ready.val();
        self.sack.snap_qp.next = self.ackgen.snap_qp.val();
        self.sack.snap_base.next = self.ackgen.snap_base.val();
        self.ackgen.snap_out_valid.next = self.sack.snap_out_valid.val();
        self.ackgen.snap_bitmap.next = self.sack.snap_bitmap.val();
        // Completion tracker.
        self.compl.pkt_valid.next = self.rxpath.pkt_valid.val();
        self.rxpath.pkt_ready.next = self.compl.pkt_ready.val();
        self.compl.pkt_qp.next = self.rxpath.pkt_qp.val();
        self.compl.pkt_psn.next = self.rxpath.pkt_psn.val();
        self.compl.pkt_rkey.next = self.rxpath.pkt_rkey.val();
        self.compl.pkt_va.next = self.rxpath.pkt_va.val();
        self.compl.pkt_len.next = self.rxpath.pkt_len.val();
        self.compl.pkt_buf.next = self.rxpath.pkt_buf.val();
        self.compl.pkt_first.next = self.rxpath.pkt_first.val();
        self.compl.pkt_last.next = self.rxpath.pkt_last.val();
        self.compl.pkt_has_imm.next = self.rxpath.pkt_has_imm.val();
        self.compl.pkt_dma_len.next = self.rxpath.pkt_dma_len.val();
        self.compl.pkt_imm.next = self.rxpath.pkt_imm.val();
        self.rxpath.place_valid.next = self.compl.place_valid.val();
        self.compl.place_ready.next = self.rxpath.place_ready.val();
        self.rxpath.place_addr.next = self.compl.place_addr.val();
        self.rxpath.nack_valid.next = self.compl.nack_valid.val();
        self.compl.nack_ready.next = self.rxpath.nack_ready.val();
        self.rxpath.res_valid.next = self.compl.res_valid.val();
        self.rxpath.res_code.next = self.compl.res_code.val();
        self.compl.adv_valid.next = self.rxpath.adv_valid.val();
        self.rxpath.adv_ready.next = self.compl.adv_ready.val();
        self.compl.adv_qp.next = self.rxpath.adv_qp.val();
        self.compl.adv_expected.next = self.rxpath.adv_expected.val();
        self.rxpath.done_valid.next = self.compl.done_valid.val();
        self.rxpath.done_msn.next = self.compl.done_msn.val();
        self.rxpath.cq_valid.next = self.compl.cq_valid.val();
        self.compl.cq_ready.next = self.rxpath.cq_ready.val();
        self.rxpath.cq_qp.next = self.compl.cq_qp.val();
        self.rxpath.cq_imm.next = self.compl.cq_imm.val();
        self.rxpath.cq_len.next = self.compl.cq_len.val();
        self.rxpath.cq_msn.next = self.compl.cq_msn.val();
        // ACK generator: records from the RX path, ACK records to the TX
        // path's ACK sequencer.
        self.ackgen.in_valid.next = self.rxpath.ag_valid.val();
        self.rxpath.ag_ready.next = self.ackgen.in_ready.val();
        self.ackgen.in_qp.next = self.rxpath.ag_qp.val();
        self.ackgen.in_psn.next = self.rxpath.ag_psn.val();
        self.ackgen.in_verdict.next = self.rxpath.ag_verdict.val();
        self.ackgen.in_ack_req.next = self.rxpath.ag_ack_req.val();
        self.ackgen.in_trimmed.next = self.rxpath.ag_trimmed.val();
        self.ackgen.in_ecn_ce.next = self.rxpath.ag_ecn_ce.val();
        self.ackgen.in_reject.next = self.rxpath.ag_reject.val();
        self.ackgen.in_drop.next = self.rxpath.ag_drop.val();
        self.ackgen.in_expected.next = self.rxpath.ag_expected.val();
        self.ackgen.in_msn.next = self.rxpath.ag_msn.val();
        self.ackgen.in_msn_valid.next = self.rxpath.ag_msn_valid.val();
        self.ackgen.in_ev.next = self.rxpath.ag_ev.val();
        self.ackgen.in_ev_index.next = self.rxpath.ag_ev_index.val();
        self.ackgen.in_echo_ts.next = self.rxpath.ag_echo_ts.val();
        self.ackgen.now_ns.next = self.now_ns.val();
        self.ackgen.in_probe.next = self.rxpath.ag_probe.val();
        self.ackgen.in_probe_legacy.next = self.rxpath.ag_probe_legacy.val();
        self.ackgen.in_probe_id.next = self.rxpath.ag_probe_id.val();
        self.txpath.ack_valid.next = self.ackgen.tx_valid.val();
        self.ackgen.tx_ready.next = self.txpath.ack_ready.val();
        self.txpath.ack_qp.next = self.ackgen.tx_qp.val();
        self.txpath.ack_kind.next = self.ackgen.tx_kind.val();
        self.txpath.ack_psn.next = self.ackgen.tx_psn.val();
        self.txpath.ack_cum.next = self.ackgen.tx_cum.val();
        self.txpath.ack_trigger_psn.next = self.ackgen.tx_trigger_psn.val();
        self.txpath.ack_msn.next = self.ackgen.tx_msn.val();
        self.txpath.ack_nack_kind.next = self.ackgen.tx_nack_kind.val();
        self.txpath.ack_nak_code.next = self.ackgen.tx_nak_code.val();
        self.txpath.ack_base.next = self.ackgen.tx_base.val();
        self.txpath.ack_bitmap.next = self.ackgen.tx_bitmap.val();
        self.txpath.ack_ecn_count.next = self.ackgen.tx_ecn_count.val();
        self.txpath.ack_trigger_ce.next = self.ackgen.tx_trigger_ce.val();
        self.txpath.ack_ev.next = self.ackgen.tx_ev.val();
        self.txpath.ack_ev_index.next = self.ackgen.tx_ev_index.val();
        self.txpath.ack_echo_ts.next = self.ackgen.tx_echo_ts.val();
        self.txpath.ack_arrival_ns.next = self.ackgen.tx_arrival_ns.val();
        self.txpath.ack_probe.next = self.ackgen.tx_probe.val();
        self.txpath.ack_probe_legacy.next = self.ackgen.tx_probe_legacy.val();
        self.txpath.ack_probe_id.next = self.ackgen.tx_probe_id.val();
        // ---- TX builder -> fault injection (drop / loopback) -> MAC TX.
        AxisSource::join(&mut self.txb.m_axis, &mut self.fault.s_tx);
        AxisSource::link(&mut self.m_tx, &mut self.fault.m_tx);
        self.fault.ctrl.next = self.csr.fi_ctrl.val();
        self.fault.seed.next = self.csr.fi_seed.val();
        self.fault.seed_load.next = self.csr.fi_seed_load.val();
        self.fault.drop_prob.next = self.csr.fi_drop_prob.val();
        self.fault.ev_en.next = self.csr.fi_ev_en.val();
        self.fault.ev_match0.next = self.csr.fi_ev_match0.val();
        self.fault.ev_match1.next = self.csr.fi_ev_match1.val();
        self.fault.ev_match2.next = self.csr.fi_ev_match2.val();
        self.fault.ev_match3.next = self.csr.fi_ev_match3.val();

        // ---- AXI-Lite -> CSR.
        AxiLiteSubordinate::link(&mut self.s_axil, &mut self.axil.s_axil);
        self.csr.wr_en.next = self.axil.wr_en.val();
        self.csr.wr_addr.next = self.axil.wr_addr.val();
        self.csr.wr_data.next = self.axil.wr_data.val();
        self.csr.rd_en.next = self.axil.rd_en.val();
        self.csr.rd_addr.next = self.axil.rd_addr.val();
        self.axil.rd_data.next = self.csr.rd_data.val();
        self.axil.rd_valid.next = self.csr.rd_valid.val();
        self.axil.wr_hold.next = self.csr.wr_hold.val();
        // A row waits in the CSR (and the host's next write waits on
        // AXI-Lite) while the pending register it fills is still full:
        // an EV-table row behind the EV selector's busy pass, a send
        // context behind the previous QP start or EV-set size, a receive
        // start behind the previous one. Nothing is dropped. Decided from
        // the held row's table and index (registers), not from its valid.
        self.cfg_ready.next = !(((self.csr.cfg.table.val() == self.t_ev.val()) & self.evc_valid.q.val())
            | ((self.csr.cfg.table.val() == self.t_sq_ctx.val())
                & (self.csr.cfg.index.val() < 256)
                & (self.evn_valid.q.val() | self.init_retx.q.val() | self.init_cc.q.val()))
            | ((self.csr.cfg.table.val() == self.t_ack_qp_init.val())
                & (self.csr.cfg.index.val() < 256)
                & self.rinit.q.val())
            | ((self.csr.cfg.table.val() == self.t_recv_qp.val()) & self.compl.cfg_busy.val()));
        self.csr.cfg_ready.next = self.cfg_ready.val();

        // ---- Config port to every block that decodes tables.
        ConfigSource::join(&mut self.csr.cfg, &mut self.req.cfg);
        ConfigSource::join(&mut self.csr.cfg, &mut self.push.cfg);
        ConfigSource::join(&mut self.csr.cfg, &mut self.pl_push.cfg);
        ConfigSource::join(&mut self.csr.cfg, &mut self.cc.cfg);
        ConfigSource::join(&mut self.csr.cfg, &mut self.nscc.cfg);
        ConfigSource::join(&mut self.csr.cfg, &mut self.txpath.cfg);
        ConfigSource::join(&mut self.csr.cfg, &mut self.retx.cfg);
        ConfigSource::join(&mut self.csr.cfg, &mut self.rxpath.cfg);
        ConfigSource::join(&mut self.csr.cfg, &mut self.compl.cfg);
        ConfigSource::join(&mut self.csr.cfg, &mut self.ackgen.cfg);
        ConfigSource::join(&mut self.csr.cfg, &mut self.sendcq.cfg);
        ConfigSource::join(&mut self.csr.cfg, &mut self.cq_rw.cfg);
        ConfigSource::join(&mut self.csr.cfg, &mut self.ev_rw.cfg);
        // NSCC on or off per QP: a table 14 row's `enable` (the unit keeps
        // the row's parameters itself).
        self.cfg_nscc.next = self.csr.cfg.valid.val()
            & (self.csr.cfg.table.val() == self.t_nscc.val())
            & (self.csr.cfg.index.val() < 256);
        // The QP's bit, and the row's enable bit in its place.
        self.nscc_sel.next = self.oh_cfg.o.val();
        self.nscc_set.next = 0.into();
        if self.csr.cfg.data.val().get_value_nscc_enable().any() {
            self.nscc_set.next = self.oh_cfg.o.val();
        }
        if self.cfg_nscc.val() {
            self.nscc_on.d.next = (self.nscc_on.q.val() & !self.nscc_sel.val()) | self.nscc_set.val();
        }
        // QP start: a send-context row (table 1) starts the QP's requester
        // state in the retransmit engine and the CC gate at its start PSN
        // (bits 128-151); the CC gate's own row (table 10: window limits)
        // is written before it. One pending start at a time: the driver
        // writes rows tens of cycles apart (8 AXI-Lite words each).
        self.cfg_sq.next = self.csr.cfg.valid.val()
            & (self.csr.cfg.table.val() == self.t_sq_ctx.val())
            & (self.csr.cfg.index.val() < 256);
        if self.cfg_sq.val() {
            self.init_retx.d.next = true;
            self.init_cc.d.next = true;
            self.init_qp.d.next = bit_cast::<8, 16>(self.csr.cfg.index.val());
            self.init_psn.d.next = self.csr.cfg.data.val().get_value_sq_ctx_start_psn();
            // The QP's EV set is EVs 0..ev_count (the selector never
            // uses the slots beyond it).
            self.evn_valid.d.next = true;
            self.evn_qp.d.next = bit_cast::<8, 16>(self.csr.cfg.index.val());
            self.evn_count.d.next = self.csr.cfg.data.val().get_value_sq_ctx_ev_count();
            self.evn_min.d.next = self.csr.cfg.data.val().get_value_sq_ctx_ev_min_active();
        }
        // EV table: EV value rows (contract `ev_value`, index qp << 7 | ev)
        // and deny/allow rows (`ev_control`, index INDEX_SELECT | qp).
        self.cfg_ev.next = self.csr.cfg.valid.val() & (self.csr.cfg.table.val() == self.t_ev.val());
        if self.cfg_ev.val() {
            self.evc_valid.d.next = true;
            self.evc_ctl.d.next = (self.csr.cfg.index.val() & self.p_index_select.val()).any();
            self.evc_index.d.next = self.csr.cfg.index.val();
            self.evc_data.d.next = self.csr.cfg.data.val().get_bits::<EV_ROW_BITS>(0);
        }

        // ---- Doorbells -> requester; its descriptor reads and the TX
        // path's payload reads share the DMA read port.
        self.req.db_valid.next = self.csr.db_valid.val();
        self.req.db_qp.next = self.csr.db_qp.val();
        self.req.db_value.next = self.csr.db_value.val();
        // The descriptor reads pass the push cache (`desc_push`), which
        // answers a one-descriptor read of a pushed slot itself and
        // forwards the others to the arbiter.
        DmaReadRequestSource::join(&mut self.req.dma_rd.req, &mut self.push.s.req);
        DmaReadInitiator::join(&mut self.push.m, &mut self.rd_arb.a);
        self.push.push_valid.next = self.csr.push_valid.val();
        self.push.push_word.next = self.csr.push_word.val();
        self.push.push_data.next = self.csr.push_data.val();
        // Descriptor beats are always taken into `desc_fifo` (see its
        // comment), the requester reads them from there.
        self.push.s.rsp.ready.next = !self.desc_fifo.full.val();
        self.desc_fifo.write.next = self.push.s.rsp.valid.val() & !self.desc_fifo.full.val();
        self.desc_fifo.data_in.next = bit_cast::<585, 512>(self.push.s.rsp.data.val())
            | (bit_cast::<585, 64>(self.push.s.rsp.keep.val()) << 512)
            | (bit_cast::<585, 8>(self.push.s.rsp.tag.val()) << 577);
        if self.push.s.rsp.last.val() {
            self.desc_fifo.data_in.next = bit_cast::<585, 512>(self.push.s.rsp.data.val())
                | (bit_cast::<585, 64>(self.push.s.rsp.keep.val()) << 512)
                | (bit_cast::<585, 1>(1.into()) << 576)
                | (bit_cast::<585, 8>(self.push.s.rsp.tag.val()) << 577);
        }
        self.req.dma_rd.rsp.valid.next = !self.desc_fifo.empty.val();
        self.desc_fifo.read.next = !self.desc_fifo.empty.val() & self.req.dma_rd.rsp.ready.val();
        self.req.dma_rd.rsp.data.next = self.desc_fifo.data_out.val().get_bits::<512>(0);
        self.req.dma_rd.rsp.keep.next = self.desc_fifo.data_out.val().get_bits::<64>(512);
        self.req.dma_rd.rsp.last.next = self.desc_fifo.data_out.val().get_bit(576);
        self.req.dma_rd.rsp.tag.next = self.desc_fifo.data_out.val().get_bits::<8>(577);
        // The payload reads pass the payload push cache (`payload_push`),
        // which answers the read of a pushed small payload itself and
        // forwards the others to the arbiter.
        DmaReadRequestSource::join(&mut self.txpath.dma_rd_req, &mut self.pl_push.s.req);
        self.pl_push.s_qp.next = self.txpath.dma_rd_qp.val();
        DmaReadInitiator::join(&mut self.pl_push.m, &mut self.rd_arb.b);
        self.pl_push.push_valid.next = self.csr.push_valid.val();
        self.pl_push.push_word.next = self.csr.push_word.val();
        self.pl_push.push_data.next = self.csr.push_data.val();
        // Payload responses go through `pl_fifo` into the TX builder, in
        // the order the TX path issued the reads (one tag: in order); each
        // beat the builder takes frees its room in the TX path's count.
        self.pl_push.s.rsp.ready.next = !self.pl_fifo.full.val();
        self.pl_fifo.write.next = self.pl_push.s.rsp.valid.val() & !self.pl_fifo.full.val();
        self.pl_fifo.data_in.next = bit_cast::<577, 512>(self.pl_push.s.rsp.data.val())
            | (bit_cast::<577, 64>(self.pl_push.s.rsp.keep.val()) << 512);
        if self.pl_push.s.rsp.last.val() {
            self.pl_fifo.data_in.next = bit_cast::<577, 512>(self.pl_push.s.rsp.data.val())
                | (bit_cast::<577, 64>(self.pl_push.s.rsp.keep.val()) << 512)
                | (bit_cast::<577, 1>(1.into()) << 576);
        }
        self.txb.s_payload.tdata.next = self.pl_fifo.data_out.val().get_bits::<512>(0);
        self.txb.s_payload.tkeep.next = self.pl_fifo.data_out.val().get_bits::<64>(512);
        self.txb.s_payload.tlast.next = self.pl_fifo.data_out.val().get_bit(576);
        self.txb.s_payload.tvalid.next = !self.pl_fifo.empty.val();
        self.pl_fifo.read.next = !self.pl_fifo.empty.val() & self.txb.s_payload.tready.val();
        // The TX path counts the FIFO's own read and write strobes.
        self.txpath.pl_taken.next = self.pl_fifo.read.val();
        self.txpath.pl_arrived.next = self.pl_fifo.write.val();
        DmaReadInitiator::link(&mut self.dma_rd, &mut self.rd_arb.m);

        // ---- CC gate operations, by priority: release of a dropped send
        // record, QP start, ACK advance, RTO, resend (its bytes leave
        // flight), admission.
        self.cc_g_rel.next = self.rel_pend.q.val();
        self.nscc_room.next = !self.nscc_fifo.full.val();
        self.cc_g_init.next = !self.cc_g_rel.val() & self.init_cc.q.val() & self.nscc_room.val();
        // An ACK advance goes to the CC gate and the send completions in the
        // same cycle (taken when both can).
        // (The send completions' `ack_ready` depends on `ack_valid`, so the
        // offer to them must not depend on their ready.) The requester
        // snoops the same advance to free its retransmit records
        // (`una_*`); its `una_ready` is low only in the cycle after a QP
        // send-context config row, and is a register.
        self.sendcq.ack_valid.next = !self.cc_g_rel.val()
            & !self.cc_g_init.val()
            & self.retx.ack_valid.val()
            & self.req.una_ready.val()
            & self.nscc_room.val();
        self.cc_g_ack.next = self.sendcq.ack_valid.val() & self.sendcq.ack_ready.val();
        self.cc_g_rto.next = !self.cc_g_rel.val()
            & !self.cc_g_init.val()
            & !self.cc_g_ack.val()
            & self.retx.rto_valid.val()
            & self.nscc_room.val();
        // A resend is taken from the engine into `resend_fifo` when the
        // slot is granted and the FIFO has room; its bytes leave flight in
        // that cycle (the model's on_loss at detection), whatever the
        // requester is doing.
        self.cc_g_rtx.next = !self.cc_g_rel.val()
            & !self.cc_g_init.val()
            & !self.cc_g_ack.val()
            & !self.cc_g_rto.val()
            & self.retx.rtx_valid.val()
            & !self.resend_fifo.full.val()
            & self.nscc_room.val();
        // The NSCC unit's window write: after every operation that feeds
        // it (it waits, `out_ready`), before the admissions, which would
        // otherwise hold it back as long as packets wait.
        self.cc_g_setw.next = !self.cc_g_rel.val()
            & !self.cc_g_init.val()
            & !self.cc_g_ack.val()
            & !self.cc_g_rto.val()
            & !self.cc_g_rtx.val()
            & self.nscc.out_valid.val();
        self.adm_free.next = !self.cc_g_rel.val()
            & !self.cc_g_init.val()
            & !self.cc_g_ack.val()
            & !self.cc_g_rto.val()
            & !self.cc_g_rtx.val()
            & !self.cc_g_setw.val()
            & (self.adm.q.val() == AdmitState::Idle)
            & self.req.out_valid.val();
        self.cc_g_admit.next = self.adm_free.val() & !self.ack_backlog.q.val();
        self.adm_ack_held.next = self.adm_free.val() & self.ack_backlog.q.val();
        // Not only while send records are queued ahead of the RX path's
        // record: the hold would then end as soon as they drained, with
        // the engine still behind (801-957 ACK frames discarded of 16,000
        // at depths 32-128, docs/benchmarks.md).
        self.ack_backlog.d.next = (self.ingress.in_flight.val() >= self.c_ack_backlog.val())
            & self.rxpath.op_valid.val()
            & !self.rxpath.op_ready.val()
            & !self.resend_fifo.full.val();
        self.cc.op_valid.next = self.cc_g_rel.val()
            | self.cc_g_init.val()
            | self.cc_g_ack.val()
            | self.cc_g_rto.val()
            | self.cc_g_admit.val()
            | self.cc_g_rtx.val()
            | self.cc_g_setw.val();
        self.cc.op_qp.next = self.req.out_qp.val();
        self.cc.op_kind.next = 1.into();
        self.cc.op_len.next = bit_cast::<32, 16>(self.req.out_len.val());
        self.cc.op_new.next = !self.req.out_retransmit.val();
        self.cc.op_psn.next = self.req.out_psn.val();
        // INIT: the widest window (the gate clamps it to its row's max_cwnd).
        self.cc.op_cwnd.next = 0x7FFF_FFFF.into();
        if self.cc_g_rel.val() {
            self.cc.op_kind.next = 4.into();
            self.cc.op_qp.next = self.rel_qp.q.val();
            self.cc.op_len.next = bit_cast::<32, 16>(self.rel_len.q.val());
            self.rel_pend.d.next = false;
        } else if self.cc_g_init.val() {
            self.cc.op_kind.next = 0.into();
            self.cc.op_qp.next = self.init_qp.q.val();
            self.cc.op_psn.next = self.init_psn.q.val();
            self.init_cc.d.next = false;
        } else if self.cc_g_ack.val() {
            self.cc.op_kind.next = 2.into();
            self.cc.op_qp.next = self.retx.ack_qp.val();
            self.cc.op_len.next = self.retx.ack_bytes.val();
            self.cc.op_psn.next = self.retx.ack_una.val();
        } else if self.cc_g_rto.val() {
            self.cc.op_kind.next = 5.into();
            self.cc.op_qp.next = self.retx.rto_qp.val();
        } else if self.cc_g_rtx.val() {
            // Loss or trim: LOSS (the window shrinks); timeout, tail probe
            // or an out-of-window NACK's release: RELEASE (only the bytes
            // leave flight). An out-of-window resend releases nothing:
            // its bytes left at the NACK.
            if self.retx.rtx_reason.val() < 2 {
                self.cc.op_kind.next = 3.into();
            } else {
                self.cc.op_kind.next = 4.into();
            }
            self.cc.op_qp.next = self.retx.rtx_qp.val();
            self.cc.op_len.next = bit_cast::<32, 16>(self.retx.rtx_len.val());
            if self.retx.rtx_reason.val() == self.p_rtx_oow.val() {
                self.cc.op_len.next = 0.into();
            }
        } else if self.cc_g_setw.val() {
            self.cc.op_kind.next = self.p_setw.val();
            self.cc.op_qp.next = self.nscc.out_qp.val();
            self.cc.op_cwnd.next = self.nscc.out_cwnd.val();
        }
        self.nscc.out_ready.next = self.cc_g_setw.val();
        // ---- NSCC feedback: the operations above that the model's
        // controller sees (`on_ack`, `on_loss` for a loss or trim,
        // `on_timeout`, and the QP's start), in the CC gate's order. The
        // delay sample is the SACK's echo against its arrival (the model's
        // `ts_age` as the SACK arrives), not against now: the SACK may
        // have waited for the engine, and the engine walked its slots.
        self.nscc_push.next = self.cc_g_init.val()
            | self.cc_g_ack.val()
            | self.cc_g_rto.val()
            | (self.cc_g_rtx.val() & (self.retx.rtx_reason.val() < 2));
        self.nscc_fifo.write.next = self.nscc_push.val();
        self.nscc_fifo.data_in.next.kind = self.p_nscc_loss.val();
        self.nscc_fifo.data_in.next.qp = self.retx.rtx_qp.val();
        self.nscc_fifo.data_in.next.bytes = bit_cast::<32, 16>(self.retx.rtx_len.val());
        self.nscc_fifo.data_in.next.ecn = false;
        self.nscc_fifo.data_in.next.rtt_valid = false;
        self.nscc_fifo.data_in.next.rtt_ns = self.retx.ack_fb.val().arrival - self.retx.ack_fb.val().echo;
        self.nscc_fifo.data_in.next.penalty = 0.into();
        self.nscc_fifo.data_in.next.restore = false;
        self.nscc_fifo.data_in.next.now_ns = self.now_ns.val();
        if self.cc_g_init.val() {
            self.nscc_fifo.data_in.next.kind = self.p_nscc_init.val();
            self.nscc_fifo.data_in.next.qp = self.init_qp.q.val();
        } else if self.cc_g_ack.val() {
            self.nscc_fifo.data_in.next.kind = self.p_nscc_ack.val();
            self.nscc_fifo.data_in.next.qp = self.retx.ack_qp.val();
            self.nscc_fifo.data_in.next.bytes = self.retx.ack_bytes.val();
            self.nscc_fifo.data_in.next.ecn = self.retx.ack_fb.val().ecn;
            self.nscc_fifo.data_in.next.rtt_valid = self.retx.ack_fb.val().sample;
            self.nscc_fifo.data_in.next.penalty = self.retx.ack_fb.val().penalty;
            self.nscc_fifo.data_in.next.restore = self.retx.ack_fb.val().restore;
        } else if self.cc_g_rto.val() {
            self.nscc_fifo.data_in.next.kind = self.p_nscc_timeout.val();
            self.nscc_fifo.data_in.next.qp = self.retx.rto_qp.val();
        }
        // The head record goes to the unit if its QP has NSCC on, else it
        // is dropped here, one per cycle.
        self.nscc_head_on.next = self.nscc_on.q.val().get_bit(self.nscc_fifo.data_out.val().qp.index());
        self.nscc.fb_valid.next = !self.nscc_fifo.empty.val() & self.nscc_head_on.val();
        self.nscc.fb_kind.next = self.nscc_fifo.data_out.val().kind;
        self.nscc.fb_qp.next = self.nscc_fifo.data_out.val().qp;
        self.nscc.fb_bytes.next = self.nscc_fifo.data_out.val().bytes;
        self.nscc.fb_ecn.next = self.nscc_fifo.data_out.val().ecn;
        self.nscc.fb_rtt_valid.next = self.nscc_fifo.data_out.val().rtt_valid;
        self.nscc.fb_rtt_ns.next = self.nscc_fifo.data_out.val().rtt_ns;
        self.nscc.fb_penalty.next = self.nscc_fifo.data_out.val().penalty;
        self.nscc.fb_restore.next = self.nscc_fifo.data_out.val().restore;
        self.nscc.fb_now_ns.next = self.nscc_fifo.data_out.val().now_ns;
        self.nscc_fifo.read.next = !self.nscc_fifo.empty.val() & (!self.nscc_head_on.val() | self.nscc.fb_ready.val());
        self.retx.ack_ready.next = self.cc_g_ack.val();
        self.sendcq.ack_qp.next = self.retx.ack_qp.val();
        self.sendcq.ack_una.next = self.retx.ack_una.val();
        self.req.una_valid.next = self.cc_g_ack.val();
        self.req.una_qp.next = self.retx.ack_qp.val();
        self.req.una_psn.next = self.retx.ack_una.val();
        self.retx.rto_ready.next = self.cc_g_rto.val();
        // Resends go to the requester, which re-issues the packet (through
        // the admission below, as a non-new PSN).
        self.retx.rtx_ready.next = self.cc_g_rtx.val();
        // A release is no resend: it goes to the CC gate only.
        self.resend_fifo.write.next = self.cc_g_rtx.val() & (self.retx.rtx_reason.val() != self.p_rtx_release.val());
        self.resend_fifo.data_in.next =
            bit_cast::<32, 8>(self.retx.rtx_qp.val()) | (bit_cast::<32, 24>(self.retx.rtx_psn.val()) << 8);
        // A deferred resend whose QP may have window again goes first (it
        // is older than those in `resend_fifo`).
        self.defer_head_open.next = !self.defer_fifo.empty.val()
            & !self
                .defer_shut
                .q
                .val()
                .get_bit(self.defer_fifo.data_out.val().get_bits::<8>(0).index());
        self.req.rtx_valid.next = self.defer_head_open.val() | !self.resend_fifo.empty.val();
        self.req.rtx_qp.next = self.resend_fifo.data_out.val().get_bits::<8>(0);
        self.req.rtx_psn.next = self.resend_fifo.data_out.val().get_bits::<24>(8);
        if self.defer_head_open.val() {
            self.req.rtx_qp.next = self.defer_fifo.data_out.val().get_bits::<8>(0);
            self.req.rtx_psn.next = self.defer_fifo.data_out.val().get_bits::<24>(8);
        }
        self.resend_fifo.read.next =
            !self.defer_head_open.val() & !self.resend_fifo.empty.val() & self.req.rtx_ready.val();
        // The retransmit engine's QP errors (retry budget spent, or a
        // remote-access NACK): to the send completions (RETRY_EXCEEDED or
        // REMOTE_ACCESS for the failed request, FLUSHED for the rest).
        // The requester snoops the report (a QP in error frees its
        // retransmit records: nothing acknowledges them any more); its
        // `qerr_ready` depends on the config write only.
        self.sendcq.rtx_err_valid.next = self.retx.err_valid.val() & self.req.qerr_ready.val();
        self.retx.err_ready.next = self.sendcq.rtx_err_ready.val() & self.req.qerr_ready.val();
        self.req.qerr_valid.next = self.sendcq.rtx_err_valid.val() & self.sendcq.rtx_err_ready.val();
        self.req.qerr_qp.next = self.retx.err_qp.val();
        // ... and so does the TX path: it drops the QP's data packets it
        // holds (in hand, or queued for the builder with their payload).
        self.txpath.qerr_valid.next = self.req.qerr_valid.val() & self.req.qerr_ready.val();
        self.txpath.qerr_qp.next = self.retx.err_qp.val();
        self.sendcq.rtx_err_qp.next = self.retx.err_qp.val();
        self.sendcq.rtx_err_psn.next = self.retx.err_psn.val();
        self.sendcq.rtx_err_reason.next = self.retx.err_reason.val();

        // ---- Error mark of the record in the requester's output register
        // (`out_err`). The requester writes no record of a QP after the
        // cycle of its error report, but one written in that cycle (or
        // before) stays in its output register; the report is compared
        // with the register's QP in its own cycle and, registered, in the
        // next (the record written in the report's cycle shows then).
        self.qerr_fire.next = self.req.qerr_valid.val() & self.req.qerr_ready.val();
        self.out_taken.next = self.req.out_valid.val() & self.req.out_ready.val();
        self.qerr_prev_v.d.next = self.qerr_fire.val();
        self.qerr_prev_qp.d.next = self.req.qerr_qp.val();
        self.out_err.d.next = !self.out_taken.val()
            & self.req.out_valid.val()
            & (self.out_err.q.val()
                | (self.qerr_fire.val() & (self.req.qerr_qp.val() == self.req.out_qp.val()))
                | (self.qerr_prev_v.q.val() & (self.qerr_prev_qp.q.val() == self.req.out_qp.val())));

        // ---- Admission of the requester's packet records.
        self.req.out_ready.next = false;
        self.txpath.pkt_valid.next = false;
        // The CC gate's operations that may open a QP's window (all but
        // ADMIT and INIT): the requester's shut QPs may be picked again.
        self.req.open_valid.next = self.cc_g_rel.val()
            | self.cc_g_ack.val()
            | self.cc_g_rto.val()
            | self.cc_g_rtx.val()
            | self.cc_g_setw.val();
        self.req.open_qp.next = self.cc.op_qp.val();
        self.req.out_yield.next = false;
        self.defer_put.next = false;
        self.req.out_yield_reopen.next =
            self.adm_reopen.q.val() | (self.req.open_valid.val() & (self.cc.op_qp.val() == self.req.out_qp.val()));
        self.adm_reopen.d.next = self.req.out_yield_reopen.val();
        match self.adm.q.val() {
            AdmitState::Idle => {
                self.adm_reopen.d.next = false;
                if self.cc_g_admit.val() {
                    self.adm.d.next = AdmitState::Asked;
                }
            }
            AdmitState::Asked => {
                // The gate answers 2 edges after the ADMIT; only ADMITs
                // (`cc_gate::kind::ADMIT`, 1) carry `out_ok == 0`, and this
                // is the only ADMIT in flight.
                if self.cc.out_valid.val() & (self.cc.out_kind.val() == 1) {
                    if self.cc.out_ok.val() {
                        self.adm.d.next = AdmitState::Pass;
                    } else if !self.req.out_retransmit.val() {
                        // A first transmission refused: the requester
                        // takes it back and serves other QPs; its QP's
                        // unsent PSNs wait for an open
                        // (docs/hw/requester.md, "A QP held by its window
                        // yields").
                        self.req.out_yield.next = true;
                        self.adm.d.next = AdmitState::Idle;
                    } else if !self.defer_fifo.full.val() & !self.out_err.q.val() {
                        // A resend refused: taken from the requester
                        // (withdrawn, not sent) into `defer_fifo`, where
                        // it waits for its QP's window while the requester
                        // serves every other QP; the gate took no bytes
                        // for it, and the engine keeps its PSN queued
                        // until it is sent.
                        self.req.out_ready.next = true;
                        self.defer_put.next = true;
                        self.adm.d.next = AdmitState::Idle;
                    } else {
                        self.adm.d.next = AdmitState::Held;
                        self.adm_wait.d.next = 0.into();
                    }
                }
            }
            AdmitState::Pass => {
                self.txpath.pkt_valid.next = self.req.out_valid.val();
                self.req.out_ready.next = self.txpath.pkt_ready.val();
                if self.req.out_valid.val() & self.txpath.pkt_ready.val() {
                    self.adm.d.next = AdmitState::Idle;
                }
            }
            AdmitState::Held => {
                if self.out_err.q.val() {
                    // Its QP is in error: withdrawn (taken from the
                    // requester, not sent). The gate refused it, so it took
                    // no bytes into flight and there is nothing to release;
                    // nothing would release the QP's bytes in flight either
                    // (no ACK, resend or RTO comes for a QP in error), so
                    // asking again would hold the output for ever.
                    self.req.out_ready.next = true;
                    self.adm.d.next = AdmitState::Idle;
                } else {
                    // Ask again after an ACK of this QP's window or a
                    // resend of it (bytes left flight), or after
                    // HELD_RETRY_CYCLES (1023).
                    self.adm_wait.d.next = self.adm_wait.q.val() + 1;
                    if (self.cc_g_ack.val() & (self.retx.ack_qp.val() == self.req.out_qp.val()))
                        | (self.cc_g_rtx.val() & (self.retx.rtx_qp.val() == self.req.out_qp.val()))
                        | (self.cc_g_rel.val() & (self.rel_qp.q.val() == self.req.out_qp.val()))
                        | (self.adm_wait.q.val() == 1023)
                    {
                        self.adm.d.next = AdmitState::Idle;
                    }
                }
            }
        }
        // ---- Refused resends (`defer_fifo`): a put from the admission,
        // else a head whose QP is shut goes round to the tail (not when
        // full: a write would be refused). A QP leaves `defer_shut` on an
        // operation that may open its window (as the requester's shut
        // QPs), an INIT or its error report; one refused since the
        // ADMIT's operations (`out_yield_reopen`) is not shut.
        self.defer_rotate.next = !self.defer_put.val()
            & !self.defer_fifo.empty.val()
            & !self.defer_head_open.val()
            & !self.defer_fifo.full.val();
        self.defer_fifo.write.next = self.defer_put.val() | self.defer_rotate.val();
        self.defer_fifo.data_in.next =
            bit_cast::<32, 8>(self.req.out_qp.val()) | (bit_cast::<32, 24>(self.req.out_psn.val()) << 8);
        self.defer_fifo.read.next = self.defer_head_open.val() & self.req.rtx_ready.val();
        if self.defer_rotate.val() {
            self.defer_fifo.data_in.next = self.defer_fifo.data_out.val();
            self.defer_fifo.read.next = true;
        }
        self.oh_out.idx.next = self.req.out_qp.val();
        self.defer_clr_op.d.next = self.req.open_valid.val() | self.cc_g_init.val();
        self.defer_clr_op_qp.d.next = self.cc.op_qp.val();
        self.defer_clr_err.d.next = self.qerr_fire.val();
        self.defer_clr_err_qp.d.next = self.req.qerr_qp.val();
        self.oh_ccop.idx.next = self.defer_clr_op_qp.q.val();
        self.oh_qerr.idx.next = self.defer_clr_err_qp.q.val();
        self.defer_set.next = 0.into();
        if self.defer_put.val() & !self.req.out_yield_reopen.val() {
            self.defer_set.next = self.oh_out.o.val();
        }
        self.defer_clr.next = 0.into();
        if self.defer_clr_op.q.val() {
            self.defer_clr.next = self.oh_ccop.o.val();
        }
        if self.defer_clr_err.q.val() {
            self.defer_clr.next = self.defer_clr.val() | self.oh_qerr.o.val();
        }
        // A set wins over the last cycle's clear: a resend refused after
        // the operation that opened its QP's window shuts the QP again
        // (as when the clear was applied in the operation's own cycle).
        self.defer_shut.d.next = (self.defer_shut.q.val() & !self.defer_clr.val()) | self.defer_set.val();
        self.txpath.pkt_qp.next = self.req.out_qp.val();
        self.txpath.pkt_psn.next = self.req.out_psn.val();
        self.txpath.pkt_opcode.next = self.req.out_opcode.val();
        self.txpath.pkt_ack_req.next = self.req.out_ack_req.val();
        self.txpath.pkt_retransmit.next = self.req.out_retransmit.val();
        self.txpath.pkt_addr.next = self.req.out_addr.val();
        self.txpath.pkt_len.next = self.req.out_len.val();
        self.txpath.pkt_remote_va.next = self.req.out_remote_va.val();
        self.txpath.pkt_rkey.next = self.req.out_rkey.val();
        self.txpath.pkt_dma_len.next = self.req.out_dma_len.val();
        self.txpath.pkt_imm.next = self.req.out_imm.val();
        self.txpath.pkt_msg_offset.next = self.req.out_msg_offset.val();
        self.txpath.now_ns.next = self.now_ns.val();
        self.parser.now_ns.next = self.now_ns.val();
        // The requester's message records and error records: to the send
        // completions.
        self.sendcq.msg_valid.next = self.req.msg_valid.val();
        self.req.msg_ready.next = self.sendcq.msg_ready.val();
        self.sendcq.msg_qp.next = self.req.msg_qp.val();
        self.sendcq.msg_wr_id.next = self.req.msg_wr_id.val();
        self.sendcq.msg_opcode.next = self.req.msg_opcode.val();
        self.sendcq.msg_len.next = self.req.msg_len.val();
        self.sendcq.msg_sq_index.next = self.req.msg_sq_index.val();
        self.sendcq.msg_signaled.next = self.req.msg_signaled.val();
        self.sendcq.msg_first_psn.next = self.req.msg_first_psn.val();
        self.sendcq.msg_last_psn.next = self.req.msg_last_psn.val();
        self.sendcq.req_err_valid.next = self.req.err_valid.val();
        self.req.err_ready.next = self.sendcq.req_err_ready.val();
        self.sendcq.req_err_qp.next = self.req.err_qp.val();
        self.sendcq.req_err_status.next = self.req.err_status.val();
        self.sendcq.req_err_opcode.next = self.req.err_opcode.val();
        self.sendcq.req_err_wr_id.next = self.req.err_wr_id.val();
        self.sendcq.req_err_sq_index.next = self.req.err_sq_index.val();
        self.sendcq.req_err_len.next = self.req.err_len.val();

        // ---- EV selector: selects from the TX path (priority 1), marks
        // from the retransmit engine (2), table writes (3 and 4: the
        // selector drops all but the first command of a cycle, so each
        // source is presented only when the ones before it are idle).
        self.evsel.sel_valid.next = self.txpath.sel_valid.val();
        self.evsel.sel_qp.next = self.txpath.sel_qp.val();
        self.txpath.ev_busy.next = self.evsel.busy.val();
        self.txpath.rsp_valid.next = self.evsel.rsp_valid.val();
        self.txpath.rsp_ev.next = self.evsel.rsp_ev.val();
        self.txpath.rsp_value.next = self.evsel.rsp_value.val();
        self.txpath.rsp_none.next = self.evsel.rsp_none.val();
        // Selects come first (they are on the TX path), and nothing that
        // can make EV events starts unless the event FIFO has room for all
        // of them.
        self.evt_room.next = !self.evt_fifo.almost_full.val();
        self.ev_free.next = !self.evsel.busy.val() & !self.txpath.sel_valid.val() & self.evt_room.val();
        self.evsel.mark_valid.next = self.ev_free.val() & self.retx.mark_valid.val();
        self.evsel.mark_qp.next = self.retx.mark_qp.val();
        self.evsel.mark_ev.next = self.retx.mark_ev.val();
        self.evsel.mark_timeout.next = self.retx.mark_reason.val() == self.p_mark_timeout.val();
        self.evsel.mark_skip.next = self.retx.mark_reason.val() == self.p_mark_skip.val();
        self.retx.mark_ready.next = self.ev_free.val();
        self.chg_room.next = !self.chg_fifo.almost_full.val();
        self.evc_take.next =
            self.ev_free.val() & self.chg_room.val() & !self.retx.mark_valid.val() & self.evc_valid.q.val();
        self.evsel.ctl_valid.next = self.evc_take.val() & self.evc_ctl.q.val();
        self.evsel.ctl_allow.next = self.evc_data.q.val().get_value_ev_control_allow().any();
        self.evsel.ctl_qp.next = self.evc_index.q.val().get_bits::<8>(0);
        self.evsel.ctl_mask.next = self.evc_data.q.val().get_value_ev_control_mask();
        self.evsel.ctl_value.next = self.evc_data.q.val().get_value_ev_control_match();
        self.evsel.wr_valid.next = self.evc_take.val() & !self.evc_ctl.q.val();
        self.evsel.wr_set_ptr.next = self.evc_data.q.val().get_value_ev_value_rr_start().any();
        self.evsel.wr_qp.next = self.evc_index.q.val().get_bits::<8>(7);
        self.evsel.wr_ev.next = self.evc_index.q.val().get_bits::<7>(0);
        self.evsel.wr_value.next = self.evc_data.q.val().get_value_ev_value_value();
        if self.evc_take.val() & !self.cfg_ev.val() {
            self.evc_valid.d.next = false;
        }
        self.evn_take.next = self.ev_free.val()
            & self.chg_room.val()
            & !self.retx.mark_valid.val()
            & !self.evc_valid.q.val()
            & self.evn_valid.q.val();
        self.evsel.set_valid.next = self.evn_take.val();
        self.evsel.set_qp.next = self.evn_qp.q.val();
        self.evsel.set_count.next = self.evn_count.q.val();
        self.evsel.set_min.next = self.evn_min.q.val();
        // EV prober: it reads the selector's states on the scan port and
        // hands its probe records to the TX path's ACK sequencer, which
        // reads the EV's value from its copy of the selector's values (the
        // rows the selector takes, written there in the same cycle).
        self.prober.qp_last.next = self.p_probe_qp_last.val();
        self.prober.sweep_cycles.next = self.p_probe_sweep.val();
        self.evsel.scan_addr.next = self.prober.scan_addr.val();
        self.prober.scan_state.next = self.evsel.scan_state.val();
        self.txpath.prb_valid.next = self.prober.prb_valid.val();
        self.txpath.prb_qp.next = self.prober.prb_qp.val();
        self.txpath.prb_ev.next = self.prober.prb_ev.val();
        self.prober.prb_ready.next = self.txpath.prb_ready.val();
        self.txpath.evv_we.next = self.evsel.wr_valid.val();
        self.txpath.evv_addr.next = self.evc_index.q.val().get_bits::<15>(0);
        self.txpath.evv_value.next = self.evsel.wr_value.val();
        // Readmits (an answered probe), the lowest priority.
        self.adm_take.next = self.ev_free.val()
            & self.chg_room.val()
            & !self.retx.mark_valid.val()
            & !self.evc_valid.q.val()
            & !self.evn_valid.q.val()
            & !self.adm_fifo.empty.val();
        self.evsel.adm_valid.next = self.adm_take.val();
        self.evsel.adm_qp.next = self.adm_fifo.data_out.val().get_bits::<8>(7);
        self.evsel.adm_ev.next = self.adm_fifo.data_out.val().get_bits::<7>(0);
        self.adm_fifo.read.next = self.adm_take.val();
        if self.evn_take.val() & !self.cfg_sq.val() {
            self.evn_valid.d.next = false;
        }
        // EV state changes -> EV-event ring 0 (contract `ev_event`: the new
        // state; reason LOSS for a change to ASSUMED_BAD (TIMEOUT when the
        // retransmit engine's mark was a timeout's; a stall is a loss, as
        // the model's events say), CONTROL for one to GOOD or DENIED; QP;
        // the EV's value and its index; time): an `EvtWord`.
        self.evt_readmit.next = (self.evsel.evt_from.val() == self.p_state_assumed_bad.val())
            & (self.evsel.evt_to.val() == self.p_state_good.val());
        self.evt_fifo.write.next = self.evsel.evt_valid.val() & !self.evt_fifo.full.val();
        // ... and those the engine did not ask for, to the engine.
        self.chg_fifo.write.next = self.evsel.evt_valid.val()
            & (self.evsel.evt_to.val() != self.p_state_assumed_bad.val())
            & !self.chg_fifo.full.val();
        self.chg_fifo.data_in.next =
            (bit_cast::<15, 8>(self.evsel.evt_qp.val()) << 7) | bit_cast::<15, 7>(self.evsel.evt_ev.val());
        self.evt_fifo.data_in.next.to = self.evsel.evt_to.val();
        self.evt_fifo.data_in.next.ev = self.evsel.evt_ev.val();
        self.evt_fifo.data_in.next.qp = self.evsel.evt_qp.val();
        self.evt_fifo.data_in.next.value = self.evsel.evt_value.val();
        self.evt_fifo.data_in.next.readmit = self.evt_readmit.val();
        self.evt_fifo.data_in.next.timeout = self.evsel.evt_timeout.val();
        self.evt_entry.next = 0.into();
        self.evt_entry
            .next
            .set_value_ev_event_new_state(bit_cast::<8, 2>(self.evt_fifo.data_out.val().to));
        if self.evt_fifo.data_out.val().to == self.p_state_assumed_bad.val() {
            self.evt_entry.next.set_value_ev_event_reason(self.p_reason_loss.val());
            if self.evt_fifo.data_out.val().timeout {
                self.evt_entry
                    .next
                    .set_value_ev_event_reason(self.p_reason_timeout.val());
            }
        }
        if self.evt_fifo.data_out.val().readmit {
            self.evt_entry
                .next
                .set_value_ev_event_reason(self.p_reason_probe_ok.val());
        }
        self.evt_entry
            .next
            .set_value_ev_event_qp(bit_cast::<24, 8>(self.evt_fifo.data_out.val().qp));
        self.evt_entry
            .next
            .set_value_ev_event_ev(self.evt_fifo.data_out.val().value);
        self.evt_entry
            .next
            .set_value_ev_event_ev_index(self.evt_fifo.data_out.val().ev);
        self.evt_entry.next.set_value_ev_event_time(self.now_ns.val());
        self.ev_rw.in_entry.next = self.evt_entry.val();
        self.ev_rw.in_valid.next = !self.evt_fifo.empty.val();
        self.ev_rw.in_ring.next = 0.into();
        self.evt_fifo.read.next = !self.evt_fifo.empty.val() & self.ev_rw.in_ready.val();

        // ---- TX path -> TX builder (the header bundle into the request
        // fields; the flags MRC never sets are constants).
        self.txb.req_valid.next = self.txpath.hdr_valid.val();
        self.txpath.hdr_ready.next = self.txb.req_ready.val();
        self.txb.req_dst_mac.next = self.txpath.hdr.val().dst_mac;
        self.txb.req_src_mac.next = self.txpath.hdr.val().src_mac;
        self.txb.req_vlan.next = self.txpath.hdr.val().vlan;
        self.txb.req_vlan_tci.next = self.txpath.hdr.val().vlan_tci;
        self.txb.req_ipv6.next = self.txpath.hdr.val().ipv6;
        self.txb.req_src_ip.next = self.txpath.hdr.val().src_ip;
        self.txb.req_dst_ip.next = self.txpath.hdr.val().dst_ip;
        self.txb.req_dscp.next = self.txpath.hdr.val().dscp;
        self.txb.req_ecn.next = self.txpath.hdr.val().ecn;
        self.txb.req_ttl.next = self.txpath.hdr.val().ttl;
        self.txb.req_ev.next = self.txpath.hdr.val().ev;
        self.txb.req_opcode.next = self.txpath.hdr.val().opcode;
        self.txb.req_se.next = false;
        self.txb.req_mig.next = true;
        self.txb.req_pad.next = self.txpath.hdr.val().pad;
        self.txb.req_pkey.next = self.txpath.hdr.val().pkey;
        self.txb.req_fecn.next = false;
        self.txb.req_becn.next = false;
        self.txb.req_dest_qp.next = self.txpath.hdr.val().dest_qp;
        self.txb.req_ack_req.next = self.txpath.hdr.val().ack_req;
        self.txb.req_xbit.next = true;
        self.txb.req_psn.next = self.txpath.hdr.val().psn;
        self.txb.req_reth_va.next = self.txpath.hdr.val().reth_va;
        self.txb.req_reth_rkey.next = self.txpath.hdr.val().reth_rkey;
        self.txb.req_reth_len.next = self.txpath.hdr.val().reth_len;
        self.txb.req_imm.next = self.txpath.hdr.val().imm;
        self.txb.req_aeth_syndrome.next = self.txpath.hdr.val().aeth_syndrome;
        self.txb.req_aeth_msn.next = self.txpath.hdr.val().aeth_msn;
        self.txb.req_ext.next = self.txpath.hdr.val().ext;
        self.txb.req_ext_len.next = self.txpath.hdr.val().ext_len;
        self.txb.req_payload_len.next = self.txpath.hdr.val().payload_len;
        self.txb.req_mrc10.next = self.txpath.hdr.val().mrc10;
        self.txb.req_transport.next = self.txpath.hdr.val().transport;
        self.txb.req_transport_len.next = self.txpath.hdr.val().transport_len;
        self.txb.req_drop.next = self.txpath.hdr_drop.val();
        self.txb.req_qp.next = self.txpath.hdr.val().qp;
        self.txb.req_flushable.next = self.txpath.hdr.val().data;
        self.txb.flush_valid.next = self.req.qerr_valid.val() & self.req.qerr_ready.val();
        self.txb.flush_qp.next = self.retx.err_qp.val();
        self.txpath.flushed_elsewhere.next = self.txb.cnt_flushed.val();

        // ---- Retransmit engine operations: QP start, then the EV
        // selector's changes (`chg_fifo`), then the TX path's
        // send records (through `sent_fifo`, which takes them whenever it
        // has room), then the SACK/NACK records from the RX path. Send
        // records first: a walk then starts with the FIFO empty (its
        // depth bound, see `sent_fifo`), and a SACK never finds a PSN
        // whose send record is still queued (it would be dropped as
        // acknowledging a PSN never sent).
        self.sent_fifo.write.next = self.txpath.sent_valid.val() & !self.sent_fifo.full.val();
        self.sent_fifo.data_in.next = bit_cast::<SENT_BITS, 8>(self.txpath.sent_qp.val())
            | (bit_cast::<SENT_BITS, 24>(self.txpath.sent_psn.val()) << 8)
            | (bit_cast::<SENT_BITS, 7>(self.txpath.sent_ev.val()) << 32)
            | (bit_cast::<SENT_BITS, 32>(self.txpath.sent_time.val()) << 39)
            | (bit_cast::<SENT_BITS, 16>(self.txpath.sent_len.val()) << 71);
        self.txpath.sent_ready.next = !self.sent_fifo.full.val();
        self.retx.now.next = self.now_rto.val();
        self.rt_g_init.next = self.init_retx.q.val();
        // EV_CHANGED records next (rare: a deny / allow or a readmit).
        self.rt_g_chg.next = !self.rt_g_init.val() & !self.chg_fifo.empty.val();
        self.rt_g_sent.next = !self.rt_g_init.val() & !self.rt_g_chg.val() & !self.sent_fifo.empty.val();
        // A probe answer waits while `adm_fifo` has no room for its readmit.
        self.adm_block.next = self.rxpath.op_probe_answer.val() & self.adm_fifo.full.val();
        self.rt_g_rx.next = !self.rt_g_init.val()
            & !self.rt_g_chg.val()
            & !self.rt_g_sent.val()
            & self.rxpath.op_valid.val()
            & !self.adm_block.val();
        // A SACK's echo is an RTT sample, but not a probe answer's (the
        // model's probe RTT goes to the probed EV alone).
        self.rt_est_rec.next = self.rt_g_init.val()
            | (self.rt_g_rx.val()
                & (self.rxpath.op_kind.val() == self.p_kind_sack.val())
                & !self.rxpath.op_probe_answer.val());
        self.rt_est_hold.next = !self.rtt.s_ready.val() & self.rt_est_rec.val();
        self.rt_valid.next = (self.rt_g_init.val() | self.rt_g_chg.val() | self.rt_g_rx.val() | self.rt_g_sent.val())
            & !self.rt_est_hold.val();
        // The input stage takes a record when empty or when the engine takes
        // its record in this cycle.
        self.rt_eng_take.next = self.rt_in_valid.q.val() & self.retx.op_ready.val();
        self.rt_take.next = self.rt_valid.val() & (!self.rt_in_valid.q.val() | self.retx.op_ready.val());
        self.rt_rec.next.kind = 1.into();
        self.rt_rec.next.qp = self.sent_fifo.data_out.val().get_bits::<8>(0);
        self.rt_rec.next.psn = self.sent_fifo.data_out.val().get_bits::<24>(8);
        self.rt_rec.next.ev = self.sent_fifo.data_out.val().get_bits::<7>(32);
        self.rt_rec.next.time = self.sent_fifo.data_out.val().get_bits::<32>(39);
        self.rt_rec.next.len = self.sent_fifo.data_out.val().get_bits::<16>(71);
        self.rt_rec.next.base = 0.into();
        self.rt_rec.next.bitmap = 0.into();
        // Read only with a SACK.
        self.rt_rec.next.trigger = self.rxpath.op_trigger.val();
        if self.rt_g_init.val() {
            self.rt_rec.next.kind = 0.into();
            self.rt_rec.next.qp = self.init_qp.q.val();
            self.rt_rec.next.psn = self.init_psn.q.val();
            if self.rt_take.val() {
                self.init_retx.d.next = false;
            }
        }
        if self.rt_g_chg.val() {
            self.rt_rec.next.kind = self.p_kind_ev_changed.val();
            self.rt_rec.next.qp = self.chg_fifo.data_out.val().get_bits::<8>(7);
            self.rt_rec.next.ev = self.chg_fifo.data_out.val().get_bits::<7>(0);
        }
        if self.rt_g_rx.val() {
            self.rt_rec.next.kind = self.rxpath.op_kind.val();
            self.rt_rec.next.qp = self.rxpath.op_qp.val();
            self.rt_rec.next.psn = self.rxpath.op_psn.val();
            self.rt_rec.next.ev = self.rxpath.op_ev.val();
            self.rt_rec.next.time = self.rxpath.op_time.val();
            self.rt_rec.next.len = self.rxpath.op_len.val();
            self.rt_rec.next.base = self.rxpath.op_base.val();
            self.rt_rec.next.bitmap = self.rxpath.op_bitmap.val();
        }
        self.rxpath.op_ready.next = self.rt_g_rx.val() & self.rt_take.val();
        self.adm_fifo.write.next = self.rt_g_rx.val() & self.rt_take.val() & self.rxpath.op_probe_answer.val();
        self.adm_fifo.data_in.next =
            (bit_cast::<15, 8>(self.rxpath.op_qp.val()) << 7) | bit_cast::<15, 7>(self.rxpath.op_probe_ev.val());
        // A legacy probe response's readmit (no SACK: the legacy model
        // takes only the EV's answer from it) in a cycle the engine's
        // probe answer does not write.
        self.rxpath.rdm_ready.next =
            !self.adm_fifo.full.val() & !(self.rt_g_rx.val() & self.rt_take.val() & self.rxpath.op_probe_answer.val());
        if self.rxpath.rdm_valid.val() & self.rxpath.rdm_ready.val() {
            self.adm_fifo.write.next = true;
            self.adm_fifo.data_in.next =
                (bit_cast::<15, 8>(self.rxpath.rdm_qp.val()) << 7) | bit_cast::<15, 7>(self.rxpath.rdm_ev.val());
        }
        if self.rt_eng_take.val() {
            self.rt_in_valid.d.next = false;
        }
        if self.rt_take.val() {
            self.rt_in_valid.d.next = true;
            self.rt_in_sent.d.next = self.rt_g_sent.val();
            self.rt_in.d.next = self.rt_rec.val();
            // Read only with a SACK.
            self.rt_in_fb.d.next = self.rxpath.op_fb.val();
        }
        self.retx.op_valid.next = self.rt_in_valid.q.val();
        self.retx.op_kind.next = self.rt_in.q.val().kind;
        self.retx.op_qp.next = self.rt_in.q.val().qp;
        self.retx.op_psn.next = self.rt_in.q.val().psn;
        self.retx.op_ev.next = self.rt_in.q.val().ev;
        self.retx.op_time.next = self.rt_in.q.val().time;
        self.retx.op_len.next = self.rt_in.q.val().len;
        self.retx.op_base.next = self.rt_in.q.val().base;
        self.retx.op_bitmap.next = self.rt_in.q.val().bitmap;
        self.retx.op_fb.next = self.rt_in_fb.q.val();
        self.retx.op_trigger.next = self.rt_in.q.val().trigger;
        self.sent_fifo.read.next = self.rt_g_sent.val() & self.rt_take.val();
        self.chg_fifo.read.next = self.rt_g_chg.val() & self.rt_take.val();
        // The RTT estimator: a QP's start clears its estimate, a SACK's
        // echo is a sample; its results go to the engine's bounds.
        // A SACK's sample is taken at its arrival (the RX path's
        // `op_fb.arrival`), not when the engine's input stage takes it: its
        // wait for a busy engine is the card's, not the path's (the
        // model samples a SACK as it arrives).
        self.rtt.now_ns.next = self.rxpath.op_fb.val().arrival;
        self.rtt.s_valid.next = self.rt_take.val() & self.rt_est_rec.val();
        self.rtt.s_init.next = self.rt_g_init.val();
        self.rtt.s_qp.next = self.rt_rec.val().qp;
        // The echo net of the responder's service time (legacy SACKs), as
        // the model samples.
        self.rtt.s_echo_ns.next = self.rxpath.op_fb.val().echo;
        self.retx.est_valid.next = self.rtt.out_valid.val();
        self.retx.est_qp.next = self.rtt.out_qp.val();
        self.retx.est_allowance.next = self.rtt.out_allowance.val();
        self.retx.est_age.next = self.rtt.out_age.val();
        // Which record the engine works on (see `sent_track`); a drop of
        // a send record releases its bytes at the CC gate. (The engine
        // reports a drop at the latest in the cycle it takes its next
        // record, so the tracked record is still the dropped one.)
        if (self.retx.cnt_drop.val() | self.retx.cnt_drop_acked.val()) & self.sent_track.q.val() {
            self.sent_track.d.next = false;
            self.rel_pend.d.next = true;
            self.rel_qp.d.next = self.sent_qp.q.val();
            self.rel_len.d.next = self.sent_len.q.val();
        }
        if self.rt_eng_take.val() {
            self.sent_track.d.next = self.rt_in_sent.q.val();
            self.sent_qp.d.next = self.rt_in.q.val().qp;
            self.sent_len.d.next = self.rt_in.q.val().len;
        }

        // ---- Completion rings and DMA writes.
        // CQEs of the receive side (RX path) and the send side (send
        // completions) share the CQ ring writer, round robin.
        self.cqe_send.next = self.sendcq.cqe_valid.val() & (!self.rxpath.cqe_valid.val() | self.cqe_prio_send.q.val());
        self.cq_rw.in_valid.next = self.rxpath.cqe_valid.val() | self.sendcq.cqe_valid.val();
        self.rxpath.cqe_ready.next = self.cq_rw.in_ready.val() & !self.cqe_send.val();
        self.sendcq.cqe_ready.next = self.cq_rw.in_ready.val() & self.cqe_send.val();
        if self.cqe_send.val() {
            self.cq_rw.in_ring.next = self.sendcq.cqe_ring.val();
            self.cq_rw.in_entry.next = self.sendcq.cqe_entry.val();
        } else {
            self.cq_rw.in_ring.next = self.rxpath.cqe_ring.val();
            self.cq_rw.in_entry.next = self.rxpath.cqe_entry.val();
        }
        if self.cq_rw.in_valid.val() & self.cq_rw.in_ready.val() {
            self.cqe_prio_send.d.next = !self.cqe_send.val();
        }
        // Two levels of write arbitration: the RX buffer and the CQ ring
        // writer, then that and the EV-event ring writer.
        DmaWriteInitiator::join(&mut self.rxbuf.dma_wr, &mut self.wr_arb_a.a);
        DmaWriteInitiator::join(&mut self.cq_rw.dma_wr, &mut self.wr_arb_a.b);
        DmaWriteInitiator::join(&mut self.wr_arb_a.m, &mut self.wr_arb_b.a);
        DmaWriteInitiator::join(&mut self.ev_rw.dma_wr, &mut self.wr_arb_b.b);
        DmaWriteInitiator::link(&mut self.dma_wr, &mut self.wr_arb_b.m);

        // ---- Counters (slot order = WIRED_COUNTERS).
        self.csr.cnt_inc.next = bit_cast::<{ N_COUNTERS }, 1>(self.parser.out_valid.val().into())
            | (bit_cast::<{ N_COUNTERS }, 1>(self.parser.out_drop.val().into()) << 1)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.fault.cnt_frames.val().into()) << 2)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.fault.cnt_rand_drop.val().into()) << 3)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.fault.cnt_ev_drop.val().into()) << 4)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.fault.cnt_lb_discard.val().into()) << 5)
            | (bit_cast::<{ N_COUNTERS }, 1>((self.sack.out_valid.val() & (self.sack.out_verdict.val() == 2)).into()) << 6)
            | (bit_cast::<{ N_COUNTERS }, 1>((self.sack.out_valid.val() & (self.sack.out_verdict.val() == 3)).into()) << 7)
            | (bit_cast::<{ N_COUNTERS }, 1>(
                (self.ackgen.tx_valid.val() & self.ackgen.tx_ready.val() & (self.ackgen.tx_kind.val() == 2)).into(),
            ) << 8)
            | (bit_cast::<{ N_COUNTERS }, 1>(
                (self.retx.rtx_valid.val()
                    & self.retx.rtx_ready.val()
                    & (self.retx.rtx_reason.val() != self.p_rtx_release.val()))
                .into(),
            ) << 9)
            | (bit_cast::<{ N_COUNTERS }, 1>((self.retx.rto_valid.val() & self.retx.rto_ready.val()).into()) << 10)
            | (bit_cast::<{ N_COUNTERS }, 1>((self.evsel.evt_valid.val() & (self.evsel.evt_to.val() == 1)).into()) << 11)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.cq_rw.cnt_written.val().into()) << 12)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.cq_rw.cnt_overflow.val().into()) << 13)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.compl.cnt_remote_access.val().into()) << 14)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.txb.cnt_tx_frame.val().into()) << 15)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.txb.cnt_bad_request.val().into()) << 16)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.txb.cnt_payload_mismatch.val().into()) << 17)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.txpath.cnt_data_sent.val().into()) << 18)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.txpath.cnt_ack_sent.val().into()) << 19)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.txpath.cnt_no_ev.val().into()) << 20)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.cc.cnt_held.val().into()) << 21)
            | (bit_cast::<{ N_COUNTERS }, 1>(
                (self.req.cnt_bad_opcode.val() | self.req.cnt_bad_flags.val() | self.req.cnt_bad_length.val()).into(),
            ) << 22)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.req.cnt_bad_doorbell.val().into()) << 23)
            // A SACK acknowledging a PSN never sent is a dropped record too
            // (the counter's doc); without it a forged SACK left no trace.
            | (bit_cast::<{ N_COUNTERS }, 1>((self.retx.cnt_drop.val() | self.retx.cnt_ack_unsent.val()).into()) << 24)
            | (bit_cast::<{ N_COUNTERS }, 1>(
                ((self.evsel.evt_valid.val() & self.evt_fifo.full.val()) | self.ev_rw.cnt_overflow.val()).into(),
            ) << 25)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.req.cnt_db_stale.val().into()) << 26)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.rxbuf.cnt_drop_full.val().into()) << 27)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.rxbuf.cnt_placed.val().into()) << 28)
            | (bit_cast::<{ N_COUNTERS }, 1>(
                // (An answered probe is not discarded; a legacy probe,
                // which the core does not answer, pulses `cnt_other` too.)
                (self.rxpath.cnt_cnp.val()
                    | self.rxpath.cnt_rc.val()
                    | self.rxpath.cnt_other.val()
                    | self.rxpath.cnt_qp_range.val()
                    | self.rxpath.cnt_data_bad.val())
                .into(),
            ) << 29)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.ingress.cnt_discard.val().into()) << 30)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.push.cnt_consumed.val().into()) << 31)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.push.cnt_dropped.val().into()) << 32)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.prober.cnt_probe.val().into()) << 33)
            | (bit_cast::<{ N_COUNTERS }, 1>((self.evsel.evt_valid.val() & self.evt_readmit.val()).into()) << 34)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.ingress.cnt_discard_join.val().into()) << 35)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.retx.cnt_drop_acked.val().into()) << 36)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.cc_g_setw.val().into()) << 37)
            | (bit_cast::<{ N_COUNTERS }, 1>((self.txpath.cnt_flushed.val() | self.txb.cnt_flushed.val()).into()) << 38)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.pl_push.cnt_consumed.val().into()) << 39)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.pl_push.cnt_dropped.val().into()) << 40)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.adm_ack_held.val().into()) << 41);
    }
}
