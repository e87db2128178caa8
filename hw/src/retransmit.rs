//! Retransmit engine: the requester's reliability state per QP (the record
//! of every outstanding PSN in block RAM), fed by "sent" records from the
//! requester and by SACK / NACK records from the RX parser, implementing
//! the loss rules of `proto::model::mrc` (docs/model-mrc.md 2.4-2.8):
//! cumulative + bitmap acknowledgement, per-EV reorder-allowance loss
//! inference (Karn), the stall rule across EVs, the tail check (loss only
//! with evidence, else one tail probe: RACK-TLP), trim
//! NACKs (resend at once), out-of-window NACKs (resend once `una`
//! advances or the RTO fires), and the RTO with the model's
//! linear/exponential backoff and retry budget. See
//! `docs/hw/retransmit.md`.
//!
//! One record is processed at a time by a state machine that walks the
//! QP's outstanding PSNs (`una .. next`) in the slot RAM. A SACK's
//! acknowledgement pass goes by 64-PSN words of a per-QP bitmap of
//! acknowledged PSNs (the bits it newly acknowledges found and set 64 at
//! a time; 2 cycles per newly acknowledged PSN for the byte count, Karn's
//! send-time line and the per-EV sequence); its loss pass is pipelined,
//! one outstanding PSN per cycle, and skipped when the SACK acknowledged
//! nothing new, or only PSNs below the new una (the in-order case: no
//! rule can take an outstanding slot then). An RTO firing costs 4 cycles
//! per PSN, an acting tail
//! check 1 per PSN (in the loss pipeline). The RTO and tail deadlines are
//! checked by a scanner that visits one QP per 2 idle cycles (QPs
//! `0..=qp_last`).

use rust_hdl::prelude::*;

use crate::bus::ConfigSink;

mod backoff;
mod classify;
mod lowest;
mod resend;
mod scanner;
mod words;
use backoff::Backoff;
use classify::PsnClass;
use lowest::LowestSet;
pub use resend::{EvMark, ResendQueue, RtxRequest};
use scanner::RtoScanner;
pub use words::{EngineRecord, EvWord, QpWord, SackFeedback, SlotWord, TailWord};

use crate::contract_rows::{RetxGlobalRow, RetxQpRow, TableId};
use crate::param::Param;
use crate::thermometer::Below;
use contract::config::{retx_qp, table};
use contract::field::span;

/// The per-QP config row (table 8) as the config RAM stores it: bit 0
/// through the end of its last field.
pub const QP_CONFIG_BITS: usize = span(retx_qp::FIELDS);

/// log2 of the number of QPs.
pub const QP_BITS: usize = 8;
/// log2 of the send window (PSN slots per QP).
pub const SLOT_BITS: usize = 8;
/// The send window in PSNs.
pub const WINDOW: u32 = 1 << SLOT_BITS;
/// EV index width.
pub const EV_BITS: usize = 7;
/// Slot RAM address `{qp, psn mod WINDOW}`.
pub const SLOT_ADDR_BITS: usize = QP_BITS + SLOT_BITS;
/// log2 of the PSNs per word of the acknowledged bitmap.
pub const ACK_WORD_BITS: usize = 6;
/// PSNs per word of the acknowledged bitmap (one SACK bitmap's worth).
pub const ACK_WORD: u32 = 1 << ACK_WORD_BITS;
/// Acknowledged-bitmap RAM address `{qp, (psn mod WINDOW) / ACK_WORD}`.
pub const ACK_ADDR_BITS: usize = QP_BITS + SLOT_BITS - ACK_WORD_BITS;
/// Per-(QP, EV) RAM address `{qp, ev}`.
pub const EV_ADDR_BITS: usize = QP_BITS + EV_BITS;
/// `retry_exp` value meaning "retry forever" (as the model).
pub const RETRY_INFINITE: u64 = 25;

/// Width of the RTO's time (`now`, deadlines): ns, 36 bits, compared
/// serially, so a deadline may be up to 2^35 ns (34 s) away; the longest
/// backoff is `ack_timeout(24)` = 2^34 ns (17.2 s).
pub const TIME_BITS: usize = 36;

/// Width of `op_kind`.
pub const KIND_BITS: usize = 3;

/// Record kinds on `op_kind`.
pub mod kind {
    /// Start the QP: `una = next = op_psn`, clear its EV state and error.
    pub const INIT: u64 = 0;
    /// A packet left: `op_psn`, `op_ev`, `op_time` (send time), `op_len`.
    pub const SENT: u64 = 1;
    /// SACK: cumulative `op_psn`, `op_base`, `op_bitmap` (bit i = base + i).
    pub const SACK: u64 = 2;
    /// Trim NACK for `op_psn`, `op_time` = echoed tx timestamp.
    pub const NACK_TRIM: u64 = 3;
    /// Out-of-window NACK for `op_psn`, `op_time` = echoed tx timestamp.
    pub const NACK_OOW: u64 = 4;
    /// Remote-access NACK for `op_psn` (the responder refused the rkey or
    /// the bounds): fatal, the QP goes to error (`err_reason` REMOTE_ACCESS).
    pub const NACK_REMOTE: u64 = 5;
    /// The EV selector changed EV `op_ev`'s state (a readmit, a denial,
    /// an allow: any change it makes but a mark of this engine's, which
    /// clears the bits itself): the EV's stall suspicion goes, as the
    /// model's state change clears it. No output.
    pub const EV_CHANGED: u64 = 6;
    /// Trim NACK for `op_psn` that also asks to SKIP the EV of the
    /// packet's last transmission once (MRC 1.0 TRIMMED; the golden MRC 1.0
    /// requester's `skip_once`): as `NACK_TRIM`, plus a SKIP on `mark_*`.
    /// A legacy trim NACK and an MRC 1.0 TRIMMED_LASTHOP come as `NACK_TRIM`.
    pub const NACK_TRIM_SKIP: u64 = 7;
}

/// Reasons on `rtx_reason`.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum RtxReason {
    Loss,
    Trim,
    Timeout,
    OutOfWindow,
    /// The tail check's probe (docs/model-mrc.md 2.5.2): the newest live
    /// packet resent to draw an acknowledgement, declared lost by nobody
    /// (no EV mark; to the CC gate bytes leaving flight, not a loss).
    Probe,
    /// Not a resend: an out-of-window NACK took the packet out of flight
    /// (the model's `in_flight -= len` at the NACK). Its bytes leave
    /// flight (the CC gate's RELEASE) and nothing is queued; the resend
    /// comes later with reason `OutOfWindow`, whose bytes have left
    /// already.
    Release,
}

/// Width of `rtx_reason`.
pub const RTX_REASON_BITS: usize = RtxReason::BITS;

/// Reasons on `mark_reason`.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum MarkReason {
    Loss,
    Stall,
    Timeout,
    /// Not a mark: the selector passes the EV over once (the model's SKIP:
    /// `EvSet::on_stall` sets it for a suspect EV, `skip_once` for an
    /// MRC 1.0 TRIMMED NACK or a SACK's SKIP_ONCE).
    Skip,
}

/// Why the QP went to error, on `err_reason`: the completion status of
/// the request holding `err_psn`.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum ErrReason {
    /// The retry budget of `err_psn` is spent (`RETRY_EXCEEDED`).
    RetryExceeded,
    /// The responder NACKed `err_psn` as a remote-access error
    /// (`REMOTE_ACCESS`).
    RemoteAccess,
}

/// Width of `err_reason`.
pub const ERR_REASON_BITS: usize = ErrReason::BITS;

/// The `err_reason` values, as numbers.
pub mod err_reason {
    use super::ErrReason;
    pub const RETRY_EXCEEDED: u64 = ErrReason::RetryExceeded as u64;
    pub const REMOTE_ACCESS: u64 = ErrReason::RemoteAccess as u64;
}

/// The `rtx_reason` values, as numbers.
pub mod reason {
    use super::RtxReason;
    pub const LOSS: u64 = RtxReason::Loss as u64;
    pub const TRIM: u64 = RtxReason::Trim as u64;
    pub const TIMEOUT: u64 = RtxReason::Timeout as u64;
    pub const OUT_OF_WINDOW: u64 = RtxReason::OutOfWindow as u64;
    pub const PROBE: u64 = RtxReason::Probe as u64;
    pub const RELEASE: u64 = RtxReason::Release as u64;
}

/// The `mark_reason` values, as numbers.
pub mod mark_reason {
    use super::MarkReason;
    pub const LOSS: u64 = MarkReason::Loss as u64;
    pub const STALL: u64 = MarkReason::Stall as u64;
    pub const TIMEOUT: u64 = MarkReason::Timeout as u64;
    pub const SKIP: u64 = MarkReason::Skip as u64;
}

/// The engine's state machine. Each walk reads a slot in one state and
/// decides on it in a later one: the slot RAM, the EV RAM and the backoff
/// unit each take a registered cycle between address and use.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum EngineState {
    /// Take a record, else let the RTO scanner visit a QP.
    Idle,
    /// The QP's state is on the RAM outputs: classify the record.
    Load,
    /// A SENT or NACK record taken without its classification (its QP was
    /// not looked ahead): the QP word on the RAM output is classified and
    /// registered, and the RAMs are read again for `Load`.
    Classify,
    /// Acknowledgement pass, one 64-PSN word `wq` of the window at a time
    /// (W1): the word's acknowledged bits are being read; the SACK's
    /// offsets from the word are registered.
    AckWordRead,
    /// W2: the word on the RAM output, the PSNs of it the SACK covers and
    /// the PSNs of it in the window are registered. The SACK's first word
    /// (read in `Load`) also validates the SACK (`validate`).
    AckWordMask,
    /// W3: the word is written back with the PSNs newly acknowledged
    /// (covered, in the window, not acknowledged before: 64 PSNs at once);
    /// the first open PSN, if this word has the first, is the new una;
    /// the first newly acknowledged slot is picked (read).
    AckWordWrite,
    /// A word with no newly acknowledged slot (the write picked none):
    /// go to the next word, else end the pass (the new una's slot, or
    /// `SackDone` / `AckDone`).
    AckPick,
    /// A2: slot `p` on the RAM output; read its EV entry.
    AckEvRead,
    /// A3: slot `p`'s bytes, Karn's send-time line and its EV's highest
    /// acknowledged sequence; read the next newly acknowledged slot.
    AckDecide,
    /// The new una's slot on the RAM output: its send time and retries
    /// (the RTO's re-arm); the loss pass starts from here when due, or
    /// `AckStallCheck` decides whether it is.
    AckUna,
    /// End of an acknowledgement pass that left no PSN open (una = next)
    /// while a loss pass is due: start it there. (`AckUna` starts the
    /// loss pass itself when una stops at an open PSN.)
    AckDone,
    /// Loss pass, one PSN per cycle in three stages: slot `p1` on the
    /// slot RAM output (its EV entry read), slot `p2`'s EV entry on the EV
    /// RAM output (the rules registered), the decision on slot `p3`
    /// (the whole pipeline holds while a resend waits). The tail check's
    /// walk runs in it too (`tail_mode`), its rule registered likewise.
    LossPipe,
    /// SACK done: una advance, report the acknowledgement.
    SackDone,
    /// RTO walk (R1): slot `p` is being read.
    RtoRead,
    /// R2a: register the slot's backoff shift and whether its budget is spent.
    RtoRetry,
    /// R2b: the backoff unit registers the slot's backoff.
    RtoBackoff,
    /// R2c: the slot's deadline and its test against now, registered.
    RtoDue,
    /// R2d: timeout decision for slot `p`.
    RtoDecide,
    /// RTO walk done: report one firing, re-arm.
    RtoDone,
    /// Trim NACK: resend at once (no EV mark; an MRC 1.0 TRIMMED one
    /// SKIPs the EV).
    TrimResend,
    /// Out-of-window NACK: the packet's bytes leave flight (a `Release`
    /// on the retransmit port, once it is free), the slot waits.
    OowRelease,
    /// Remote-access NACK for an outstanding PSN: report the QP error once
    /// the error register is free.
    FatalNack,
    /// The tail check fired: decide whether it acts; its line and the
    /// evidence (the later of `hw` and the last trim NACK) registered.
    TailCheck,
    /// T1: the cut (the earlier of the line and the evidence) registered;
    /// then the walk, in the loss pipeline (`tail_mode`): every live slot
    /// sent at or before the cut is lost; the first live slot's age and
    /// the newest live slot noted for the probe.
    TailRead,
    /// T3: nothing lost but the first live slot aged: read the newest live
    /// slot for the tail probe, else done.
    TailEnd,
    /// T4: the newest live slot on the RAM output: resent as the probe.
    TailProbe,
    /// Arm the RTO of a send that found it idle: the backoff is being
    /// registered (its deadline is written in `Store`, `arm_dl`).
    ArmBackoff,
    /// INIT: clear the QP's EV entries one per cycle.
    InitClear,
    /// Store the QP's state.
    Store,
    /// A SACK whose only reason for a loss pass is a PSN newly
    /// acknowledged above the new una, on a QP with no per-EV hole: the
    /// stall rule's test of the new una's slot (registered in `AckUna`)
    /// decides whether the pass runs (`una_stall`).
    AckStallCheck,
}

/// The engine. Ports are described in `docs/hw/retransmit.md`.
#[derive(LogicBlock, Default)]
pub struct RetransmitEngine {
    pub clock: Signal<In, Clock>,
    /// Time now, ns, 36 bits (wrapping, serial comparisons): the RTO's
    /// time; the stall rule and the tail check use its low 32 bits.
    pub now: Signal<In, Bits<TIME_BITS>>,
    pub op_valid: Signal<In, Bit>,
    pub op_ready: Signal<Out, Bit>,
    pub op_kind: Signal<In, Bits<KIND_BITS>>,
    pub op_qp: Signal<In, Bits<8>>,
    pub op_psn: Signal<In, Bits<24>>,
    pub op_ev: Signal<In, Bits<7>>,
    pub op_time: Signal<In, Bits<32>>,
    pub op_len: Signal<In, Bits<16>>,
    pub op_base: Signal<In, Bits<24>>,
    pub op_bitmap: Signal<In, Bits<64>>,
    /// MRC 1.0 SACK (`op_fb.by_trigger`): the PSN of its trigger, the
    /// packet whose echo it carries.
    pub op_trigger: Signal<In, Bits<24>>,
    /// SACK: its congestion feedback, reported with its acknowledgement
    /// (`ack_fb`); ignored for other kinds.
    pub op_fb: Signal<In, SackFeedback>,
    pub cfg: ConfigSink,
    /// The RTT estimator's result for QP `est_qp` (`hw::rtt_est`): its
    /// stall allowance and stall age (ns, 0: no sample), used where they
    /// exceed the configured ones. One write per pulse, always taken.
    pub est_valid: Signal<In, Bit>,
    pub est_qp: Signal<In, Bits<8>>,
    pub est_allowance: Signal<In, Bits<32>>,
    pub est_age: Signal<In, Bits<32>>,
    pub rtx_valid: Signal<Out, Bit>,
    pub rtx_ready: Signal<In, Bit>,
    pub rtx_qp: Signal<Out, Bits<8>>,
    pub rtx_psn: Signal<Out, Bits<24>>,
    pub rtx_ev: Signal<Out, Bits<7>>,
    pub rtx_len: Signal<Out, Bits<16>>,
    pub rtx_reason: Signal<Out, Bits<RTX_REASON_BITS>>,
    /// An EV for the selector: marked (loss, stall, timeout) or, reason
    /// SKIP, passed over once (its first stall made it suspect).
    pub mark_valid: Signal<Out, Bit>,
    pub mark_ready: Signal<In, Bit>,
    pub mark_qp: Signal<Out, Bits<8>>,
    pub mark_ev: Signal<Out, Bits<7>>,
    pub mark_reason: Signal<Out, Bits<2>>,
    pub ack_valid: Signal<Out, Bit>,
    pub ack_ready: Signal<In, Bit>,
    pub ack_qp: Signal<Out, Bits<8>>,
    pub ack_una: Signal<Out, Bits<24>>,
    pub ack_bytes: Signal<Out, Bits<32>>,
    /// The feedback of the SACK that made this acknowledgement.
    pub ack_fb: Signal<Out, SackFeedback>,
    pub rto_valid: Signal<Out, Bit>,
    pub rto_ready: Signal<In, Bit>,
    pub rto_qp: Signal<Out, Bits<8>>,
    pub err_valid: Signal<Out, Bit>,
    pub err_ready: Signal<In, Bit>,
    pub err_qp: Signal<Out, Bits<8>>,
    pub err_psn: Signal<Out, Bits<24>>,
    /// Why: `ErrReason` (the completion status of the request holding
    /// `err_psn`).
    pub err_reason: Signal<Out, Bits<ERR_REASON_BITS>>,
    /// SACK acknowledging a PSN never sent (dropped).
    pub cnt_ack_unsent: Signal<Out, Bit>,
    /// Record dropped: SENT beyond the window or of a PSN never sent,
    /// NACK for an unsent PSN, unknown kind, or any record but INIT for a
    /// QP in error.
    pub cnt_drop: Signal<Out, Bit>,
    /// SENT record dropped because its PSN is below `una`: from a correct
    /// requester, a resend of a packet acknowledged while the resend
    /// waited (in `resend_fifo` or the requester), which is harmless (its
    /// bytes are released as for any dropped SENT). The record carries no
    /// resend flag, so a requester that sent a PSN below `una` for another
    /// reason would be counted here too.
    pub cnt_drop_acked: Signal<Out, Bit>,
    /// NACK about an older copy, an acknowledged or already queued PSN.
    pub cnt_stale_nack: Signal<Out, Bit>,
    /// A record or an RTO walk is in progress (for the top and tests).
    pub busy: Signal<Out, Bit>,
    // Sub-blocks.
    resend: ResendQueue,
    backoff: Backoff,
    scanner: RtoScanner,
    /// The next newly acknowledged PSN of the word (`pend`), and the first
    /// PSN of the word still open (`open`).
    pick: LowestSet,
    first_open: LowestSet,
    // Memories.
    slot_ram: RAM<SlotWord, SLOT_ADDR_BITS>,
    ev_ram: RAM<EvWord, EV_ADDR_BITS>,
    /// Per EV, the model's stall suspicion (`EvSet::on_stall`): the EV
    /// stalled once (`sus_ram`), and a SACK on the EV acknowledged one of
    /// its first transmissions promptly since (`dlv_ram`). Bits of their
    /// own so that each is written blind where it is set.
    sus_ram: RAM<Bit, EV_ADDR_BITS>,
    dlv_ram: RAM<Bit, EV_ADDR_BITS>,
    /// Per EV, its path said it was congested (an MRC 1.0 TRIMMED NACK on
    /// it, or a SACK's SKIP_ONCE naming it) since its last stall, prompt
    /// delivery or state change: the
    /// model's `congested`, which excuses a suspect EV's next stall (a
    /// SKIP again, no mark). Written at the `dlv_ram` address, cleared
    /// wherever that bit is written.
    cng_ram: RAM<Bit, EV_ADDR_BITS>,
    /// Per QP, whether each slot is acknowledged, 64 slots a word: the
    /// same bit as the slot's `acked`, kept so that a SACK finds the PSNs
    /// it newly acknowledges a word at a time.
    ack_ram: RAM<Bits<64>, ACK_ADDR_BITS>,
    qs_ram: RAM<QpWord, QP_BITS>,
    /// Per-QP config rows (table 8), read through `RetxQpRow`.
    cfg_ram: RAM<Bits<QP_CONFIG_BITS>, QP_BITS>,
    /// The RTT estimator's `{age, allowance}` per QP, read with `cfg_ram`.
    est_ram: RAM<Bits<64>, QP_BITS>,
    tail_ram: RAM<TailWord, QP_BITS>,
    // State machine.
    st: DFF<EngineState>,
    due_r: DFF<Bit>,
    /// The SACK's `next - base`, registered in `Load` for the validation.
    nb_off_r: DFF<Bits<24>>,
    /// The word in `AckWordMask` is the SACK's first, read in `Load`: the
    /// SACK is validated there (`bad_cum`, `bad_bits`) before any write.
    validate: DFF<Bit>,
    /// The first word of a SACK's pass (una's) and the SACK's offsets
    /// from it, on the QP word `Load` sees (`qs_rd`): registered in `Load`
    /// as `wq` and the `wd_*` offsets, so that the word is read in `Load`
    /// and its masks come in the next state.
    first_wq: Signal<Local, Bits<24>>,
    first_cum: Signal<Local, Bits<24>>,
    first_next: Signal<Local, Bits<24>>,
    first_base: Signal<Local, Bits<24>>,
    /// The acknowledgement pass's word: the PSN of its bit 0 (a multiple
    /// of 64), and the SACK's offsets from it, registered for the masks:
    /// `wq - base` (its sign alone is read: the cover's end), `cum + 1 -
    /// wq`, `una - wq`, `next - wq`.
    wq: DFF<Bits<24>>,
    wd_base: DFF<Bits<24>>,
    wd_cum: DFF<Bits<24>>,
    /// `cum + 1 - wq >= 64`: cum covers the whole word.
    wd_cum_all: DFF<Bit>,
    /// `next - wq` (`next_off`) is 64 or more: the window covers the
    /// word's top, registered with the offset (as `wd_cum_all`).
    next_off: Signal<Local, Bits<24>>,
    wd_next_all: DFF<Bit>,
    /// The word is base's word (`wq == bw0`) / the next one (`bw1`):
    /// it takes `bm_word0` / `bm_word1` as the bitmap's part of it.
    wd_bm0: DFF<Bit>,
    wd_bm1: DFF<Bit>,
    wd_una: DFF<Bits<24>>,
    wd_next: DFF<Bits<24>>,
    /// The word as read, the PSNs of it the SACK covers (cumulative or
    /// bitmap), the PSNs of it in the window: registered apart, so that
    /// the masks' shifts and the AND with the RAM output are not one
    /// path; the newly acknowledged bits whose slots are still to be
    /// visited.
    aw_r: DFF<Bits<64>>,
    cover_r: DFF<Bits<64>>,
    win_r: DFF<Bits<64>>,
    pend: DFF<Bits<64>>,
    /// The SACK acknowledged something new (else the loss pass is
    /// skipped: nothing it tests has changed since the last one) ...
    any_new: DFF<Bit>,
    /// ... at or above the new una (a hole stays below it), or it
    /// acknowledged the last tail probe's slot (`hw` raised to the probed
    /// transmission's send time, which live slots may precede). With
    /// neither, and no slot waiting after an out-of-window NACK, the loss
    /// pass is skipped too: every newly acknowledged PSN is below every
    /// outstanding one, so neither the per-EV rule nor the stall rule can
    /// take an outstanding slot (docs/hw/retransmit.md, "Behaviour").
    ack_above: DFF<Bit>,
    probe_seen: DFF<Bit>,
    /// Every first transmission this SACK newly acknowledged was the next
    /// sequence on its EV (one above the EV's highest acknowledged, or
    /// its first): with the QP word's `no_ev_hole`, no live slot's
    /// sequence is at or below its EV's highest acknowledged one after
    /// the SACK, so the per-EV rule can take nothing.
    ack_in_order: DFF<Bit>,
    /// The new una's slot could be taken by the stall rule (registered in
    /// `AckUna`): resent (a later PSN may have been sent before its
    /// resend), or sent before `hw - A`. Not resent and sent at or after
    /// that line, it is the earliest sent of the live slots, so the stall
    /// rule can take none.
    una_stall: DFF<Bit>,
    /// The SACK covers no PSN past the current word (cumulative point and
    /// bitmap end in it or before): once the new una is found, the words
    /// after it have nothing to acknowledge and are not visited.
    cover_end: DFF<Bit>,
    /// The loss pipeline: the PSN at each stage and whether it holds one
    /// (`p` is the next PSN to read), the slots of stages 2 and 3.
    p1: DFF<Bits<24>>,
    p2: DFF<Bits<24>>,
    p3: DFF<Bits<24>>,
    v1: DFF<Bit>,
    v2: DFF<Bit>,
    v3: DFF<Bit>,
    s2: DFF<SlotWord>,
    s3: DFF<SlotWord>,
    /// The stall rule and the per-EV rule of stage 3's slot, registered
    /// from stage 2 (the EV RAM output comes through the cascade's
    /// output muxes).
    lost_stall_r: DFF<Bit>,
    lost_reorder_r: DFF<Bit>,
    /// Stage 3's EV's suspicion bits (read with its EV entry).
    sus3: DFF<Bit>,
    dlv3: DFF<Bit>,
    cng3: DFF<Bit>,
    /// EVs reported stalled (or marked) in this loss pass: the model
    /// reports an EV once per pass, whatever number of its packets it
    /// finds lost.
    pass_seen: DFF<Bits<128>>,
    /// Stage 3's slot is a first transmission sent at or after `hw`
    /// (or `hw` has no value yet), registered from stage 2: no rule can
    /// take it nor any slot after it, and a SACK's loss pass ends there
    /// (docs/hw/retransmit.md, "Behaviour").
    past_hw_r: DFF<Bit>,
    /// The loss pass must visit every slot: it queues the slots waiting
    /// after an out-of-window NACK (`una` moved with `oow_wait` set).
    full_pass: DFF<Bit>,
    /// The pipeline walks for the tail check (else for a SACK's loss
    /// pass); stage 3's slot sent at or before the cut, and at or before
    /// the line, registered from stage 2.
    tail_mode: DFF<Bit>,
    lost_tail_r: DFF<Bit>,
    aged_r: DFF<Bit>,
    /// The tail check's line `now - stall_age`, taken once when the check
    /// starts (the model checks every PSN at one instant).
    tail_thr: DFF<Bits<32>>,
    /// The evidence against a live packet (docs/model-mrc.md 2.5.2): the
    /// later of `hw` and the last trim NACK's arrival, if either exists;
    /// then the cut, the earlier of the line and the evidence: a slot is
    /// lost if sent at or before it.
    tail_ev: DFF<Bits<32>>,
    tail_ev_valid: DFF<Bit>,
    tail_cut: DFF<Bits<32>>,
    /// This check lost a slot (then no probe) ...
    t_lost: DFF<Bit>,
    /// ... it has seen a live slot, and whether the first (lowest PSN) was
    /// sent at or before the line (the probe's condition) ...
    t_first: DFF<Bit>,
    t_aged: DFF<Bit>,
    /// ... and its send time (a first live slot not yet `age` old
    /// re-arms the check for when it will be) ...
    t_first_time: DFF<Bits<32>>,
    /// ... and the newest live slot (latest sent, the highest PSN of those
    /// sent at that time): the one the probe resends.
    t_newest_v: DFF<Bit>,
    t_newest_p: DFF<Bits<24>>,
    t_newest_time: DFF<Bits<32>>,
    spent_r: DFF<Bit>,
    dlp_r: DFF<Bits<TIME_BITS>>,
    is_timer: DFF<Bit>,
    // The record being processed.
    kind: DFF<Bits<KIND_BITS>>,
    // Named values the kernel compares with (localparams).
    t_retx_qp: TableId<{ table::RETX_QP }>,
    t_retx_global: TableId<{ table::RETX_GLOBAL }>,
    k_init: Param<KIND_BITS, { kind::INIT }>,
    k_sent: Param<KIND_BITS, { kind::SENT }>,
    k_sack: Param<KIND_BITS, { kind::SACK }>,
    k_nack_trim: Param<KIND_BITS, { kind::NACK_TRIM }>,
    k_nack_oow: Param<KIND_BITS, { kind::NACK_OOW }>,
    k_nack_remote: Param<KIND_BITS, { kind::NACK_REMOTE }>,
    k_ev_changed: Param<KIND_BITS, { kind::EV_CHANGED }>,
    k_nack_trim_skip: Param<KIND_BITS, { kind::NACK_TRIM_SKIP }>,
    qp: DFF<Bits<8>>,
    psn: DFF<Bits<24>>,
    ev: DFF<Bits<7>>,
    /// `op_time` extended to 36 bits from `now` (`t_ext`).
    t_op: DFF<Bits<TIME_BITS>>,
    len: DFF<Bits<16>>,
    base: DFF<Bits<24>>,
    bitmap: DFF<Bits<64>>,
    /// The SACK's bitmap cut at word boundaries, registered from `base`
    /// and `bitmap` the cycle after the record is taken (in `Load`, ready
    /// for the first word's masks; the words `bw0` and `bw1` are
    /// registered in the take, for `Load`'s compares): the bitmap spans
    /// base's word `bw0` (its part `bitmap << base mod 64`) and the next,
    /// `bw1` (`bitmap >> (64 - base mod 64)`, nothing when base is a
    /// multiple of 64). A word of the pass picks its part instead of
    /// shifting the bitmap by its own offset from base, which was the
    /// cover mask's path.
    bm_word0: DFF<Bits<64>>,
    bm_word1: DFF<Bits<64>>,
    bw0: DFF<Bits<24>>,
    bw1: DFF<Bits<24>>,
    /// `64 - base mod 64` (mod 64), the shift of `bm_word1`.
    bm_shift1: Signal<Local, Bits<6>>,
    /// `cum + 1 - wq`, registered as `wd_cum` and its flag.
    cum_off: Signal<Local, Bits<24>>,
    // The QP's state and tail check while it is processed.
    qs: DFF<QpWord>,
    tail: DFF<TailWord>,
    /// The record taken in `Store` belongs to the QP being stored: its
    /// `Load` takes the QP's state and tail check from `qs` / `tail`
    /// (what the RAMs are writing), not from the RAMs' outputs, which
    /// were read in the same cycle as the write and hold the old word.
    fwd: DFF<Bit>,
    /// The QP's state and tail check as `Load` sees them: the RAMs'
    /// outputs, or the stored words forwarded (`fwd`).
    qs_rd: Signal<Local, QpWord>,
    tail_rd: Signal<Local, TailWord>,
    /// `Idle` or `Store`: a record may be taken this cycle.
    take: Signal<Local, Bit>,
    /// The state RAM reads the input's head QP in every cycle that takes
    /// nothing, so that a SENT or NACK record's classification is computed
    /// in the cycle that takes it and registered (`cls_*`): the subtracts
    /// and compares on the QP word are then not in `Load`'s path. `la_ok`: the last cycle's read was of a record waiting and no
    /// take (no `Store`, the one writer of the state RAM); `la_qp` its
    /// QP, which the record taken must have (the input's head may change
    /// without a take: `core`'s arbiter).
    la_ok: DFF<Bit>,
    la_qp: DFF<Bits<8>>,
    /// The record taken has its classification this cycle: forwarded
    /// (`Store` of its own QP) or looked ahead (`la_ok`, its QP).
    cls_now: Signal<Local, Bit>,
    /// The state after a take: `Load`, or `Classify` for a SENT or NACK
    /// record without its classification (`cls_now`).
    take_next: Signal<Local, EngineState>,
    /// The state is `Classify` (a register of its own: the classifier's
    /// PSN choice must not wait for the state's decode).
    in_classify: DFF<Bit>,
    /// A SENT or NACK record's classification (`PsnClass`), registered
    /// for `Load`.
    cls_new: DFF<Bit>,
    cls_resend: DFF<Bit>,
    cls_below_una: DFF<Bit>,
    cls_below_next: DFF<Bit>,
    /// The record on the input is a SENT or a NACK: its `Load` needs its
    /// classification.
    op_classed: Signal<Local, Bit>,
    /// `SackDone`: the SACK acknowledged bytes or moved `una` ...
    ack_moved: Signal<Local, Bit>,
    /// ... or echoes CE marks or a restore bit: it is reported (`ack_*`).
    ack_news: Signal<Local, Bit>,
    // Walk state.
    p: DFF<Bits<24>>,
    cur_ev: DFF<Bits<7>>,
    /// An MRC 1.0 SACK's trigger PSN (`op_trigger`) ...
    trigger: DFF<Bits<24>>,
    /// ... newly acknowledged by it (the walk met it) ...
    trig_hit: DFF<Bit>,
    /// ... on this EV (its slot's) ...
    trig_ev: DFF<Bits<7>>,
    /// ... whose copy the SACK surely names: the trigger's only
    /// transmission (the model checks that the slot's EV value is the
    /// SETH EV; a resent trigger's copy that arrived may be an older one,
    /// and the engine has no EV values to compare).
    trig_named: DFF<Bit>,
    /// The walk is at the SACK's trigger (MRC 1.0).
    at_trigger: Signal<Local, Bit>,
    /// The EV a SACK's m field is about: the trigger's (MRC 1.0), else the
    /// one the SACK names.
    skip_ev: Signal<Local, Bits<7>>,
    found: DFF<Bit>,
    una_new: DFF<Bits<24>>,
    /// The word's first open PSN, registered in `AckWordWrite` and taken
    /// into `found` / `una_new` in the next state (`AckPick`, or
    /// `AckEvRead` when the write picked a slot): the 64-bit search is then
    /// not in one path with the pick's slot address (the word's masks,
    /// the search and `p` in one cycle are too deep).
    fo_any: DFF<Bit>,
    fo_index: DFF<Bits<6>>,
    /// `c_age` a cycle later, for the stall rule's promptness test in
    /// `AckDecide` (the config and estimate RAMs are read by the QP from
    /// `Load` on): their compare is then not in one path with the
    /// sample's age and the delivered and congestion RAM writes.
    c_age_r: DFF<Bits<32>>,
    una_time: DFF<Bits<TIME_BITS>>,
    /// `Store` writes the RTO deadline: its base (`una_time` after a SACK
    /// moved una, else the send's `t_op`) plus the backoff unit's value,
    /// which is registered two cycles after its load (in `AckUna` or the
    /// send's `Load`): the state before `Store` need not wait for it.
    arm_dl: DFF<Bit>,
    arm_dl_una: DFF<Bit>,
    dl_sum: Signal<Local, Bits<TIME_BITS>>,
    bytes: DFF<Bits<32>>,
    fired: DFF<Bit>,
    have_rem: DFF<Bit>,
    min_rem: DFF<Bits<TIME_BITS>>,
    clr: DFF<Bits<7>>,
    // Output registers (the resend outputs are `resend`'s).
    o_ack_v: DFF<Bit>,
    o_ack_qp: DFF<Bits<8>>,
    o_ack_una: DFF<Bits<24>>,
    o_ack_bytes: DFF<Bits<32>>,
    o_ack_fb: DFF<SackFeedback>,
    /// The feedback of the record being worked on (a SACK's).
    fb: DFF<SackFeedback>,
    o_rto_v: DFF<Bit>,
    o_rto_qp: DFF<Bits<8>>,
    o_err_v: DFF<Bit>,
    o_err_qp: DFF<Bits<8>>,
    o_err_psn: DFF<Bits<24>>,
    o_err_reason: DFF<ErrReason>,
    o_cnt_unsent: DFF<Bit>,
    o_cnt_drop: DFF<Bit>,
    o_cnt_drop_acked: DFF<Bit>,
    o_cnt_stale: DFF<Bit>,
    /// The slot on the slot RAM's output, and the slot to write (default:
    /// as read).
    slot: Signal<Local, SlotWord>,
    slot_wr: Signal<Local, SlotWord>,
    /// The slot a resend decision is about, and its PSN: the slot RAM
    /// output and `p`, except in the loss pipeline (stage 3).
    dec_slot: Signal<Local, SlotWord>,
    dec_p: Signal<Local, Bits<24>>,
    /// The (QP, EV) entry on the EV RAM's output, and the entry to write
    /// (default: as read).
    ev_entry: Signal<Local, EvWord>,
    ev_entry_wr: Signal<Local, EvWord>,
    /// Stage 3's loss is a stall (the stall rule or the tail check); its
    /// EV already reported in this pass; the EV marked (its first report
    /// of the pass, suspect and nothing delivered on it since).
    sv_stall: Signal<Local, Bit>,
    sv_seen: Signal<Local, Bit>,
    sv_mark: Signal<Local, Bit>,
    /// An MRC 1.0 trim resend is queued, or a SACK's SKIP_ONCE taken: the
    /// EV's congestion bit is set.
    cng_set: Signal<Local, Bit>,
    /// The SACK in `SackDone` asks for a mark of its own (its SETH m).
    lone_mark_want: Signal<Local, Bit>,
    /// The stage-3 decision writes the EV's suspicion bits.
    sv_write: Signal<Local, Bit>,
    /// An RTO resend marks its EV (reason TIMEOUT), which clears the EV's
    /// suspicion bits (the model's state change clears its suspicion).
    sv_rto: Signal<Local, Bit>,
    one128: Signal<Local, Bits<128>>,
    /// A SACK's sample within the stall age (`EvSet::on_ack`'s prompt
    /// delivery).
    prompt: Signal<Local, Bit>,
    prompt_d: Signal<Local, Bits<32>>,
    // Per-QP config.
    c_texp: Signal<Local, Bits<5>>,
    c_allow: Signal<Local, Bits<32>>,
    /// The configured allowance and age, and the estimator's.
    c_cfg_allow: Signal<Local, Bits<32>>,
    c_cfg_age: Signal<Local, Bits<32>>,
    c_est_allow: Signal<Local, Bits<32>>,
    c_est_age: Signal<Local, Bits<32>>,
    c_reorder: Signal<Local, Bits<16>>,
    c_lin: Signal<Local, Bits<5>>,
    c_exp: Signal<Local, Bits<5>>,
    // Backoff shift amounts: of the slot's retry count (in the RTO walk,
    // on a resend and for the new una after a SACK), of a new packet.
    bo_shift: Signal<Local, Bits<5>>,
    bo_shift_new: Signal<Local, Bits<5>>,
    bm_beyond: Signal<Local, Bits<64>>,
    ones64: Signal<Local, Bits<64>>,
    one64: Signal<Local, Bits<64>>,
    // The resend the current state asks for on slot `p`: with an EV mark
    // or not, and whether it consumes a retry (a timeout).
    rs_want: Signal<Local, Bit>,
    rs_reason: Signal<Local, RtxReason>,
    rs_mark: Signal<Local, Bit>,
    rs_mark_reason: Signal<Local, MarkReason>,
    rs_retry: Signal<Local, Bit>,
    /// It waits: a register it needs is full.
    rs_blocked: Signal<Local, Bit>,
    // The walk over slots `p .. next`: step to `p + 1` this cycle (when
    // not held), then to `walk_end` past the last slot, else `walk_next`.
    walk_step: Signal<Local, Bit>,
    /// The acknowledgement pass picks its next slot (or word) this cycle,
    /// at `pick_psn` when the word has one left.
    ack_pick: Signal<Local, Bit>,
    /// Whether the new una is known and which it is, this cycle: in
    /// `AckPick` and `AckEvRead` the word's search (`fo_*`) counts
    /// already (`AckEvRead` follows its own word's write or `AckDecide`,
    /// never another word's).
    found_now: Signal<Local, Bit>,
    una_now: Signal<Local, Bits<24>>,
    pick_psn: Signal<Local, Bits<24>>,
    walk_end: Signal<Local, EngineState>,
    /// `Load`'s next state (assigned after the state's case).
    load_next: Signal<Local, EngineState>,
    walk_next: Signal<Local, EngineState>,
    // Walk helpers.
    p_next: Signal<Local, Bits<24>>,
    // The acknowledgement pass's masks of the word (bit i: PSN wq + i):
    // PSNs at or before cum, PSNs the bitmap acknowledges, the window
    // [una, next); the ack RAM's address of the word and of `psn`.
    m_cum: Signal<Local, Bits<64>>,
    m_bits: Signal<Local, Bits<64>>,
    m_win: Signal<Local, Bits<64>>,
    m_lo: Signal<Local, Bits<64>>,
    m_hi: Signal<Local, Bits<64>>,
    /// The masks' thermometer decodes (bit i: i below the offset), not
    /// shifts of a constant: `cum`'s, `una`'s and `next`'s offsets in the
    /// word, and the SACK validation's `next - base`.
    below_cum: Below<64, 6>,
    below_una: Below<64, 6>,
    below_next: Below<64, 6>,
    below_nb: Below<64, 6>,
    /// The word's PSNs the SACK newly acknowledges (covered, in the
    /// window, not acknowledged before), and those still open (in the
    /// window, acknowledged by neither).
    newly: Signal<Local, Bits<64>>,
    open: Signal<Local, Bits<64>>,
    /// `newly` of the word on the RAM output (`AckWordMask`).
    newly_early: Signal<Local, Bits<64>>,
    /// The acknowledgement pass needs the loss pass (the rule explained
    /// in `AckDone`'s state), from registers: decided in `AckUna`, or
    /// when the pick ends with no open PSN (`needs_pass_end`, the probe
    /// seen this cycle counted), so that a pass without it goes to
    /// `SackDone`.
    needs_pass: Signal<Local, Bit>,
    needs_pass_end: Signal<Local, Bit>,
    /// The loss pass starts next cycle (from `AckUna`, whose `p` is the
    /// new una already, or from `AckDone`): its pipeline's valid bits,
    /// mode and bookkeeping cleared.
    pass_start: Signal<Local, Bit>,
    wq_addr: Signal<Local, Bits<ACK_ADDR_BITS>>,
    psn_addr: Signal<Local, Bits<ACK_ADDR_BITS>>,
    /// `psn`'s bit cleared (a SENT makes its slot unacknowledged).
    psn_unacked: Signal<Local, Bits<64>>,
    // Where the next word starts, from una's word: more words while it is
    // before next.
    ua: Signal<Local, Bits<24>>,
    wq_off_next: Signal<Local, Bits<24>>,
    w_span: Signal<Local, Bits<24>>,
    /// Whether a word follows `wq`, registered: `wq` and the QP's una and
    /// next are set at least two cycles before a pick reads it (`Load`,
    /// or the pick that moves to the next word, then `AckWordRead`), so
    /// the compare is not in one path with the pick's mux.
    more_words: DFF<Bit>,
    reorder_gap: Signal<Local, Bits<16>>,
    stall_line: Signal<Local, Bits<32>>,
    /// Stage 2's send time minus `hw` (its sign: sent before `hw`).
    hw_gap: Signal<Local, Bits<32>>,
    past_hw: Signal<Local, Bit>,
    live: Signal<Local, Bit>,
    lost_reorder: Signal<Local, Bit>,
    lost_stall: Signal<Local, Bit>,
    dl_p: Signal<Local, Bits<TIME_BITS>>,
    /// The slot's 36-bit send time.
    s_time: Signal<Local, Bits<TIME_BITS>>,
    /// The low 32 bits of `now` (the stall rule's and the tail check's
    /// time), and `op_time` extended to 36 bits: `now - (now32 -
    /// op_time)`, the difference sign-extended (send times and echoes
    /// within 2^31 ns of now, either side).
    now32: Signal<Local, Bits<32>>,
    op_age: Signal<Local, Bits<32>>,
    op_back: Signal<Local, Bits<TIME_BITS>>,
    t_ext: Signal<Local, Bits<TIME_BITS>>,
    sext_hi: Signal<Local, Bits<TIME_BITS>>,
    t_op32: Signal<Local, Bits<32>>,
    // SACK validation.
    /// The SACK's cumulative PSN is past `next - 1`, registered in `Load`.
    bad_cum: DFF<Bit>,
    bad_bits: Signal<Local, Bit>,
    nb_off: Signal<Local, Bits<24>>,
    // SENT classification, registered in the cycle that takes the record
    // (or in `Classify`): on the state RAM's word and on the forwarded one
    // (a `Store` of the record's QP), then chosen.
    class_ram: PsnClass,
    class_fwd: PsnClass,
    is_new: Signal<Local, Bit>,
    is_resend: Signal<Local, Bit>,
    // NACK classification.
    nack_unsent: Signal<Local, Bit>,
    nack_stale: Signal<Local, Bit>,
    due: Signal<Local, Bit>,
    retry_spent: Signal<Local, Bit>,
    go: Signal<Local, Bit>,
    due_d: Signal<Local, Bits<TIME_BITS>>,
    cum_d: Signal<Local, Bits<24>>,
    tdue_d: Signal<Local, Bits<TIME_BITS>>,
    hw_d: Signal<Local, Bits<32>>,
    seq_d: Signal<Local, Bits<16>>,
    rem_d: Signal<Local, Bits<TIME_BITS>>,
    c_age: Signal<Local, Bits<32>>,
    tail_due_d: Signal<Local, Bits<32>>,
    tail_line: Signal<Local, Bits<32>>,
    lost_tail: Signal<Local, Bit>,
    /// Trim NACK minus `hw` (the evidence's choice), the evidence minus
    /// the line (the cut's), the slot's age against the line, the slot's
    /// send time against the newest so far.
    ev_d: Signal<Local, Bits<32>>,
    cut_d: Signal<Local, Bits<32>>,
    aged_d: Signal<Local, Bits<32>>,
    newest_d: Signal<Local, Bits<32>>,
    /// Live for the tail check: neither acknowledged, queued nor waiting
    /// after an out-of-window NACK.
    tail_live: Signal<Local, Bit>,
    /// The slot the acknowledgement pass visits is the last tail probe's,
    /// and the send time it raises `hw` to: its own for a first
    /// transmission, the probed transmission's for a probed one.
    probe_hit: Signal<Local, Bit>,
    ack_time: Signal<Local, Bits<32>>,
    /// The visited slot's PSN minus the new una (its sign: below it).
    above_d: Signal<Local, Bits<24>>,
    /// A newly acknowledged first transmission's sequence is the next on
    /// its EV (`ack_in_order`'s test).
    seq_next: Signal<Local, Bit>,
    /// The stall rule's line against the new una's slot (`una_stall`).
    una_line: Signal<Local, Bits<32>>,
    /// `AckUna`'s loss pass may be proven empty by `AckStallCheck`: the
    /// only reason for it is a PSN newly acknowledged above the new una,
    /// and the QP has no per-EV hole after this SACK.
    pass_check: Signal<Local, Bit>,
    /// A slot waits after an out-of-window NACK and this SACK moves `una`:
    /// the loss pass must run, over every PSN, to queue it (`full_pass`).
    oow_release: Signal<Local, Bit>,
}

impl Logic for RetransmitEngine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            st,
            nb_off_r,
            validate,
            bad_cum,
            wq,
            wd_base,
            wd_cum,
            wd_cum_all,
            wd_next_all,
            wd_bm0,
            wd_bm1,
            bm_word0,
            bm_word1,
            bw0,
            bw1,
            wd_una,
            wd_next,
            aw_r,
            cover_r,
            win_r,
            pend,
            any_new,
            ack_above,
            probe_seen,
            ack_in_order,
            una_stall,
            cover_end,
            p1,
            p2,
            p3,
            v1,
            v2,
            v3,
            s2,
            s3,
            lost_stall_r,
            lost_reorder_r,
            sus3,
            dlv3,
            cng3,
            pass_seen,
            past_hw_r,
            full_pass,
            tail_mode,
            lost_tail_r,
            aged_r,
            tail_thr,
            tail_ev,
            tail_ev_valid,
            tail_cut,
            t_lost,
            t_first,
            t_aged,
            t_first_time,
            t_newest_v,
            t_newest_p,
            t_newest_time,
            due_r,
            spent_r,
            dlp_r,
            is_timer,
            qs,
            tail,
            fwd,
            la_ok,
            la_qp,
            in_classify,
            cls_new,
            cls_resend,
            cls_below_una,
            cls_below_next,
            kind,
            qp,
            psn,
            ev,
            t_op,
            len,
            base,
            bitmap,
            p,
            cur_ev,
            trigger,
            trig_hit,
            trig_ev,
            trig_named,
            found,
            una_new,
            fo_any,
            fo_index,
            c_age_r,
            una_time,
            more_words,
            arm_dl,
            arm_dl_una,
            bytes,
            fired,
            have_rem,
            min_rem,
            clr,
            o_ack_v,
            o_ack_qp,
            o_ack_una,
            o_ack_bytes,
            o_ack_fb,
            fb,
            o_rto_v,
            o_rto_qp,
            o_err_v,
            o_err_qp,
            o_err_psn,
            o_err_reason,
            o_cnt_unsent,
            o_cnt_drop,
            o_cnt_drop_acked,
            o_cnt_stale
        );
        self.slot_ram.read_clock.next = self.clock.val();
        self.slot_ram.write_clock.next = self.clock.val();
        self.ev_ram.read_clock.next = self.clock.val();
        self.ev_ram.write_clock.next = self.clock.val();
        self.sus_ram.read_clock.next = self.clock.val();
        self.sus_ram.write_clock.next = self.clock.val();
        self.dlv_ram.read_clock.next = self.clock.val();
        self.dlv_ram.write_clock.next = self.clock.val();
        self.cng_ram.read_clock.next = self.clock.val();
        self.cng_ram.write_clock.next = self.clock.val();
        self.qs_ram.read_clock.next = self.clock.val();
        self.qs_ram.write_clock.next = self.clock.val();
        self.cfg_ram.read_clock.next = self.clock.val();
        self.cfg_ram.write_clock.next = self.clock.val();
        self.est_ram.read_clock.next = self.clock.val();
        self.est_ram.write_clock.next = self.clock.val();
        self.tail_ram.read_clock.next = self.clock.val();
        self.tail_ram.write_clock.next = self.clock.val();
        self.ack_ram.read_clock.next = self.clock.val();
        self.ack_ram.write_clock.next = self.clock.val();
        self.resend.clock.next = self.clock.val();
        self.backoff.clock.next = self.clock.val();
        self.scanner.clock.next = self.clock.val();

        // Word constants of the acknowledged bitmap and the SACK masks.
        self.ones64.next = 0xFFFF_FFFF_FFFF_FFFF_u64.into();
        self.one64.next = 1.into();

        // Output handshakes: a register is freed when taken.
        if self.o_ack_v.q.val() & self.ack_ready.val() {
            self.o_ack_v.d.next = false;
        }
        if self.o_rto_v.q.val() & self.rto_ready.val() {
            self.o_rto_v.d.next = false;
        }
        if self.o_err_v.q.val() & self.err_ready.val() {
            self.o_err_v.d.next = false;
        }
        self.o_cnt_unsent.d.next = false;
        self.o_cnt_drop.d.next = false;
        self.o_cnt_drop_acked.d.next = false;
        self.o_cnt_stale.d.next = false;

        // Config: per-QP rows to the config RAM, the global row to a register.
        self.cfg_ram.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.cfg_ram.write_data.next = bit_cast::<QP_CONFIG_BITS, 256>(self.cfg.data.val());
        self.cfg_ram.write_enable.next = self.cfg.valid.val() & (self.cfg.table.val() == self.t_retx_qp.val());
        self.scanner.restart.next =
            self.cfg.valid.val() & (self.cfg.table.val() == self.t_retx_global.val()) & (self.cfg.index.val() == 0);
        self.scanner.last_qp.next = self.cfg.data.val().get_value_retx_global_last_qp();
        self.scanner.advance.next = false;
        self.cfg_ram.read_address.next = self.qp.q.val();
        self.est_ram.read_address.next = self.qp.q.val();
        self.est_ram.write_address.next = self.est_qp.val();
        self.est_ram.write_data.next =
            bit_cast::<64, 32>(self.est_allowance.val()) | (bit_cast::<64, 32>(self.est_age.val()) << 32);
        self.est_ram.write_enable.next = self.est_valid.val();
        self.c_texp.next = self.cfg_ram.read_data.val().get_value_retx_qp_ack_timeout_exp();
        // The larger of the configured and the estimated bound (the model
        // derives its bounds from RTT samples alone; a configured one is a
        // floor, 0 to leave them to the samples).
        self.c_cfg_allow.next = self.cfg_ram.read_data.val().get_value_retx_qp_stall_allowance_ns();
        self.c_est_allow.next = self.est_ram.read_data.val().get_bits::<32>(0);
        self.c_allow.next = self.c_cfg_allow.val();
        if self.c_est_allow.val() > self.c_cfg_allow.val() {
            self.c_allow.next = self.c_est_allow.val();
        }
        self.c_reorder.next = self.cfg_ram.read_data.val().get_value_retx_qp_reorder();
        self.c_lin.next = bit_cast::<5, 3>(self.cfg_ram.read_data.val().get_value_retx_qp_retry_linear());
        self.c_exp.next = self.cfg_ram.read_data.val().get_value_retx_qp_retry_exp();
        self.c_cfg_age.next = self.cfg_ram.read_data.val().get_value_retx_qp_stall_age_ns();
        self.c_est_age.next = self.est_ram.read_data.val().get_bits::<32>(32);
        self.c_age.next = self.c_cfg_age.val();
        if self.c_est_age.val() > self.c_cfg_age.val() {
            self.c_age.next = self.c_est_age.val();
        }
        // Tail RAM: read with the QP state, written in `Store`.
        self.tail_ram.read_address.next = self.qp.q.val();
        self.tail_ram.write_address.next = self.qp.q.val();
        self.tail_ram.write_data.next = self.tail.q.val();
        self.tail_ram.write_enable.next = false;

        // Slot RAM: default read address {qp, p}; fields as read; write
        // data from `slot_wr` (default: unchanged).
        self.slot_ram.read_address.next =
            (bit_cast::<16, 8>(self.qp.q.val()) << 8) | bit_cast::<16, 24>(self.p.q.val() & 255);
        self.slot_ram.write_address.next =
            (bit_cast::<16, 8>(self.qp.q.val()) << 8) | bit_cast::<16, 24>(self.p.q.val() & 255);
        self.slot_ram.write_enable.next = false;
        self.slot.next = self.slot_ram.read_data.val();
        if self.st.q.val() == EngineState::LossPipe {
            self.dec_slot.next = self.s3.q.val();
            self.dec_p.next = self.p3.q.val();
        } else {
            self.dec_slot.next = self.slot.val();
            self.dec_p.next = self.p.q.val();
        }
        self.slot_wr.next = self.dec_slot.val();
        self.slot_wr.next.spare_ev = false;
        self.slot_wr.next.spare_retries = 0.into();

        // EV RAM: default read address {qp, cur_ev}.
        self.ev_ram.read_address.next =
            (bit_cast::<15, 8>(self.qp.q.val()) << 7) | bit_cast::<15, 7>(self.cur_ev.q.val());
        self.ev_ram.write_address.next =
            (bit_cast::<15, 8>(self.qp.q.val()) << 7) | bit_cast::<15, 7>(self.cur_ev.q.val());
        self.ev_ram.write_enable.next = false;
        self.ev_entry.next = self.ev_ram.read_data.val();
        self.ev_entry_wr.next = self.ev_entry.val();

        // Acknowledged bitmap: read the pass's word `wq` by default (a
        // record's word when it is taken; una's word, read by a SACK's
        // `Load` itself); written by the pass and by a SENT.
        self.wq_addr.next = (bit_cast::<ACK_ADDR_BITS, 8>(self.qp.q.val()) << 2)
            | bit_cast::<ACK_ADDR_BITS, 2>(self.wq.q.val().get_bits::<2>(6));
        // W1 (`AckWordRead`; a SACK's first word in `Load`, below): the
        // SACK's offsets from the word being read, registered.
        self.wd_base.d.next = self.wq.q.val() - self.base.q.val();
        self.cum_off.next = self.psn.q.val() + 1 - self.wq.q.val();
        self.wd_cum.d.next = self.cum_off.val();
        self.wd_cum_all.d.next = !self.cum_off.val().get_bit(23) & (self.cum_off.val() & 0x7F_FFC0).any();
        self.wd_bm0.d.next = self.wq.q.val() == self.bw0.q.val();
        self.wd_bm1.d.next = self.wq.q.val() == self.bw1.q.val();
        self.wd_una.d.next = self.qs.q.val().una - self.wq.q.val();
        self.next_off.next = self.qs.q.val().next_psn - self.wq.q.val();
        self.wd_next.d.next = self.next_off.val();
        self.wd_next_all.d.next = (self.next_off.val() & 0xFF_FFC0).any();
        self.validate.d.next = false;
        self.psn_addr.next = (bit_cast::<ACK_ADDR_BITS, 8>(self.qp.q.val()) << 2)
            | bit_cast::<ACK_ADDR_BITS, 2>(self.psn.q.val().get_bits::<2>(6));
        self.ack_ram.read_address.next = self.wq_addr.val();
        self.ack_ram.write_address.next = self.wq_addr.val();
        self.newly.next = self.cover_r.q.val() & self.win_r.q.val() & !self.aw_r.q.val();
        self.open.next = !self.cover_r.q.val() & self.win_r.q.val() & !self.aw_r.q.val();
        self.ack_ram.write_data.next = self.aw_r.q.val() | self.newly.val();
        self.ack_ram.write_enable.next = false;
        self.psn_unacked.next =
            self.ack_ram.read_data.val() & !(self.one64.val() << bit_cast::<64, 6>(self.psn.q.val().get_bits::<6>(0)));

        // QP state RAM: read with the input's head QP whenever nothing
        // else needs it (the look-ahead, `la_ok`); the record's own QP in
        // `Classify`, for `Load`.
        self.qs_ram.read_address.next = self.op_qp.val();
        if self.in_classify.q.val() {
            self.qs_ram.read_address.next = self.qp.q.val();
        }
        self.qs_ram.write_address.next = self.qp.q.val();
        self.qs_ram.write_data.next = self.qs.q.val();
        self.qs_ram.write_data.next.spare = 0.into();
        self.qs_ram.write_enable.next = false;
        if self.fwd.q.val() {
            self.qs_rd.next = self.qs.q.val();
            self.qs_rd.next.spare = 0.into();
            self.tail_rd.next = self.tail.q.val();
        } else {
            self.qs_rd.next = self.qs_ram.read_data.val();
            self.tail_rd.next = self.tail_ram.read_data.val();
        }
        // The same offsets for a SACK's first word, una's, on the QP word
        // `Load` sees: `Load` registers them in place of the offsets of W1 above
        // (its `wq` not yet set), and reads the word.
        self.first_wq.next = self.qs_rd.val().una & 0xFF_FFC0;
        self.first_cum.next = self.psn.q.val() + 1 - self.first_wq.val();
        self.first_next.next = self.qs_rd.val().next_psn - self.first_wq.val();
        self.first_base.next = self.first_wq.val() - self.base.q.val();
        self.fwd.d.next = false;
        // The RTO deadline `Store` writes (`arm_dl`).
        self.arm_dl.d.next = false;
        if self.arm_dl_una.q.val() {
            self.dl_sum.next = self.una_time.q.val() + self.backoff.value.val();
        } else {
            self.dl_sum.next = self.t_op.q.val() + self.backoff.value.val();
        }

        // Backoff: RTO for the first retry_linear timeouts, then RTO x
        // 2^min(k - linear + 1, 10), capped at ack_timeout(24) (the
        // backoff unit adds the shift to the exponent t).
        // SENT classification, registered for `Load`: in the cycle that
        // takes the record (its PSN on the input, the QP word looked ahead
        // on the RAM output or forwarded from `qs`), else in `Classify`
        // (its PSN registered, the QP word read in the take).
        if self.in_classify.q.val() {
            self.class_ram.psn.next = self.psn.q.val();
        } else {
            self.class_ram.psn.next = self.op_psn.val();
        }
        self.class_ram.next_psn.next = self.qs_ram.read_data.val().next_psn;
        self.class_ram.una.next = self.qs_ram.read_data.val().una;
        self.class_fwd.psn.next = self.op_psn.val();
        self.class_fwd.next_psn.next = self.qs.q.val().next_psn;
        self.class_fwd.una.next = self.qs.q.val().una;
        self.cls_new.d.next = self.class_ram.is_new.val();
        self.cls_resend.d.next = self.class_ram.is_resend.val();
        self.cls_below_una.d.next = self.class_ram.below_una.val();
        self.cls_below_next.d.next = self.class_ram.below_next.val();
        if (self.st.q.val() == EngineState::Store) & (self.op_qp.val() == self.qp.q.val()) {
            self.cls_new.d.next = self.class_fwd.is_new.val();
            self.cls_resend.d.next = self.class_fwd.is_resend.val();
            self.cls_below_una.d.next = self.class_fwd.below_una.val();
            self.cls_below_next.d.next = self.class_fwd.below_next.val();
        }
        self.is_new.next = self.cls_new.q.val();
        self.is_resend.next = self.cls_resend.q.val();
        // The backoff unit's shift amount of a retry count k (k is the
        // slot's timeouts in the RTO walk and on a resend, 0 for a new
        // packet, the new una's after a SACK), loaded in the states that
        // use it: the unit registers it and its value, so the RAM output,
        // the selection, the comparisons with retry_linear, the barrel
        // shift with its saturation and the deadline add and compare are
        // never in one path.
        if self.slot.val().retries < self.c_lin.val() {
            self.bo_shift.next = 0.into();
        } else if (self.slot.val().retries - self.c_lin.val()) >= 9 {
            self.bo_shift.next = 10.into();
        } else {
            self.bo_shift.next = self.slot.val().retries - self.c_lin.val() + 1;
        }
        // The shift of a new packet (k = 0), apart, so that the SENT
        // classification only selects between the two.
        if self.c_lin.val() == 0 {
            self.bo_shift_new.next = 1.into();
        } else {
            self.bo_shift_new.next = 0.into();
        }
        self.backoff.exp.next = self.c_texp.val();
        self.backoff.load.next = false;
        self.backoff.shift.next = self.bo_shift.val();

        // Time: the RTO's 36 bits, the low 32 for the rest; a record's
        // time extended (a send time to arm the RTO from).
        self.now32.next = self.now.val().get_bits::<32>(0);
        self.op_age.next = self.now32.val() - self.op_time.val();
        self.sext_hi.next = 0xF_0000_0000_u64.into();
        self.op_back.next = bit_cast::<TIME_BITS, 32>(self.op_age.val());
        if self.op_age.val().get_bit(31) {
            self.op_back.next = bit_cast::<TIME_BITS, 32>(self.op_age.val()) | self.sext_hi.val();
        }
        self.t_ext.next = self.now.val() - self.op_back.val();
        self.t_op32.next = self.t_op.q.val().get_bits::<32>(0);
        self.s_time.next =
            (bit_cast::<TIME_BITS, 4>(self.slot.val().time_hi) << 32) | bit_cast::<TIME_BITS, 32>(self.slot.val().time);
        // Differences whose sign bit is tested (Verilog cannot index an
        // expression).
        self.tdue_d.next = self.now.val() - self.qs_rd.val().deadline;
        self.probe_hit.next =
            self.tail.q.val().probe_valid & (self.p.q.val().get_bits::<8>(0) == self.tail.q.val().probe_slot);
        if self.slot.val().resent {
            self.ack_time.next = self.tail.q.val().probe_time;
        } else {
            self.ack_time.next = self.slot.val().time;
        }
        self.hw_d.next = self.ack_time.val() - self.qs.q.val().hw;
        self.seq_d.next = self.slot.val().seq - self.ev_entry.val().max_seq;
        self.rem_d.next = self.dlp_r.q.val() - self.now.val();
        self.tail_due_d.next = self.now32.val() - self.tail_rd.val().deadline;
        // Tail check (2.5.2): the evidence is the later of hw and the last
        // trim NACK; the cut the earlier of it and the line now -
        // stall_age. Lost: sent at or before the cut (no evidence: none).
        self.ev_d.next = self.tail.q.val().trim_at - self.qs.q.val().hw;
        self.cut_d.next = self.tail_ev.q.val() - self.tail_thr.q.val();
        // Stage 2 of the pipeline (slot s2), registered for stage 3.
        self.tail_line.next = self.tail_cut.q.val() - self.s2.q.val().time;
        self.lost_tail.next = self.tail_ev_valid.q.val() & !self.tail_line.val().get_bit(31);
        // The probe's inputs: the slot aged (sent at or before the line;
        // stage 2), and sent no earlier than the newest live slot so far
        // (stage 3).
        self.aged_d.next = self.tail_thr.q.val() - self.s2.q.val().time;
        self.newest_d.next = self.s3.q.val().time - self.t_newest_time.q.val();
        // Walk helpers.
        self.p_next.next = self.p.q.val() + 1;
        // The acknowledgement pass's masks of word `wq` (bit i: PSN wq + i),
        // from the offsets registered in `AckWordRead`; every offset is a
        // 24-bit signal (an inline difference is evaluated at 32 or 64
        // bits in the emitted Verilog, wrong across the PSN wrap). The
        // masks below an offset are thermometer decodes of its 6 low bits
        // (`Below`), taken only where the offset is within 0..=63: 64
        // six-input functions, not a shifter of a constant.
        // At or before cum: i < cum + 1 - wq.
        self.below_cum.idx.next = self.wd_cum.q.val().get_bits::<6>(0);
        self.below_una.idx.next = self.wd_una.q.val().get_bits::<6>(0);
        self.below_next.idx.next = self.wd_next.q.val().get_bits::<6>(0);
        if self.wd_cum.q.val().get_bit(23) {
            self.m_cum.next = 0.into();
        } else if self.wd_cum_all.q.val() {
            self.m_cum.next = self.ones64.val();
        } else {
            self.m_cum.next = self.below_cum.o.val();
        }
        // The bitmap's bit j is PSN base + j = wq + i: its part in the
        // word, cut once per SACK (`bm_word0`, `bm_word1`).
        self.bm_shift1.next = Bits::<6>::from(0) - self.base.q.val().get_bits::<6>(0);
        self.bm_word0.d.next = self.bitmap.q.val() << bit_cast::<64, 6>(self.base.q.val().get_bits::<6>(0));
        if self.base.q.val().get_bits::<6>(0) == 0 {
            self.bm_word1.d.next = 0.into();
        } else {
            self.bm_word1.d.next = self.bitmap.q.val() >> bit_cast::<64, 6>(self.bm_shift1.val());
        }
        self.m_bits.next = 0.into();
        if self.wd_bm0.q.val() {
            self.m_bits.next = self.bm_word0.q.val();
        }
        if self.wd_bm1.q.val() {
            self.m_bits.next = self.bm_word1.q.val();
        }
        // The window [una, next): i >= una - wq (una's word only), i < next - wq.
        if self.wd_una.q.val().get_bit(23) {
            self.m_lo.next = self.ones64.val();
        } else {
            self.m_lo.next = !self.below_una.o.val();
        }
        if self.wd_next_all.q.val() {
            self.m_hi.next = self.ones64.val();
        } else {
            self.m_hi.next = self.below_next.o.val();
        }
        self.m_win.next = self.m_lo.val() & self.m_hi.val();
        self.newly_early.next =
            (self.m_cum.val() | self.m_bits.val()) & self.m_win.val() & !self.ack_ram.read_data.val();
        // The words of the window: from una's, while the next starts before
        // next (a full window not aligned to a word visits una's word twice:
        // its high part first, its low part last).
        self.ua.next = self.qs.q.val().una & 0xFF_FFC0;
        self.wq_off_next.next = self.wq.q.val() + 64 - self.ua.val();
        self.w_span.next = self.qs.q.val().next_psn - self.ua.val();
        self.more_words.d.next = self.wq_off_next.val() < self.w_span.val();
        self.pick.bits.next = self.pend.q.val();
        self.found_now.next = self.found.q.val();
        self.una_now.next = self.una_new.q.val();
        // The word's search counts from the cycle after it is registered:
        // `AckPick`, or `AckEvRead` when `AckWordWrite` picked a slot.
        if ((self.st.q.val() == EngineState::AckPick) | (self.st.q.val() == EngineState::AckEvRead))
            & !self.found.q.val()
            & self.fo_any.q.val()
        {
            self.found_now.next = true;
            self.una_now.next = self.wq.q.val() | bit_cast::<24, 6>(self.fo_index.q.val());
        }
        self.first_open.bits.next = self.open.val();
        // A picked PSN's place against the new una known so far.
        self.above_d.next = self.p.q.val() - self.una_now.val();
        // `AckDone`'s rule for the loss pass (its comment): nothing new
        // acknowledged, or only PSNs below the new una with no probe among
        // them and no slot waiting after an out-of-window NACK while una
        // moves, leave every verdict of the last pass standing.
        self.oow_release.next = self.qs.q.val().oow_wait & (self.una_new.q.val() != self.qs.q.val().una);
        self.needs_pass.next =
            self.any_new.q.val() & (self.ack_above.q.val() | self.probe_seen.q.val() | self.oow_release.val());
        self.pass_check.next =
            self.qs.q.val().no_ev_hole & self.ack_in_order.q.val() & !self.probe_seen.q.val() & !self.oow_release.val();
        // The stall rule (as the pass's stage 2 tests it) against the new
        // una's slot on the RAM output (`AckUna`).
        self.una_line.next = self.slot.val().time - (self.qs.q.val().hw - self.c_allow.val());
        // A first transmission's sequence one above its EV's highest
        // acknowledged (`seq_d`), or 0 when the EV has none (INIT starts
        // every EV at 0).
        self.seq_next.next = self.seq_d.val() == 1;
        if !self.ev_entry.val().max_valid {
            self.seq_next.next = !self.slot.val().seq.any();
        }
        // The same where the pick ends with every PSN acknowledged (the new
        // una is `next`), in `AckPick` or `AckDecide`, whose probe is seen
        // in this cycle.
        self.needs_pass_end.next = self.any_new.q.val()
            & (self.ack_above.q.val()
                | self.probe_seen.q.val()
                | ((self.st.q.val() == EngineState::AckDecide) & self.probe_hit.val())
                | (self.qs.q.val().oow_wait & (self.qs.q.val().next_psn != self.qs.q.val().una)));
        self.live.next = !self.dec_slot.val().acked & !self.dec_slot.val().queued;
        self.tail_live.next = self.live.val() & !self.dec_slot.val().oow;
        // Per-EV rule (loss stage 2, slot s2 and its EV entry): highest
        // acked sequence on the EV more than the reorder allowance ahead
        // of this transmission.
        self.reorder_gap.next = self.ev_entry.val().max_seq - self.s2.q.val().seq;
        self.lost_reorder.next = self.ev_entry.val().max_valid
            & !self.reorder_gap.val().get_bit(15)
            & (self.reorder_gap.val() > self.c_reorder.val());
        // Stall rule (stage 2): sent before hw - allowance (allowance 0: no
        // RTT sample yet, rule off).
        self.stall_line.next = self.s2.q.val().time - (self.qs.q.val().hw - self.c_allow.val());
        self.lost_stall.next = self.qs.q.val().hw_valid & self.c_allow.val().any() & self.stall_line.val().get_bit(31);
        // The loss pass's end (stage 2): a first transmission sent at or
        // after `hw`. Every slot either rule takes was last sent before
        // `hw` (the stall rule: before `hw - A`; the per-EV rule: before
        // an acknowledged first transmission on its EV, sent at or before
        // `hw`), and every slot after this one was first sent after it.
        self.hw_gap.next = self.s2.q.val().time - self.qs.q.val().hw;
        self.past_hw.next = !self.s2.q.val().resent & (!self.qs.q.val().hw_valid | !self.hw_gap.val().get_bit(31));
        self.dl_p.next = self.s_time.val() + self.backoff.value.val();
        self.due_d.next = self.now.val() - self.dl_p.val();
        self.due.next = !self.due_d.val().get_bit(35);
        self.retry_spent.next =
            (self.c_exp.val() != 25) & (self.slot.val().retries >= self.c_lin.val() + self.c_exp.val());

        // SACK validation (in `Load`; una/next come from the qs RAM there).
        // `next - base` and the cumulative PSN's test are registered in
        // `Load` (`nb_off_r`, `bad_cum`); the checks run with the first
        // word's masks (`AckWordMask`, `validate`).
        self.nb_off.next = self.qs_rd.val().next_psn - self.base.q.val();
        self.cum_d.next = self.psn.q.val() + 1 - self.qs_rd.val().next_psn;
        // cum + 1 != next tested on the 24-bit difference: an inline
        // `psn + 1 != next` is a 32-bit compare in Verilog (0xFFFFFF + 1 is
        // not 0 there).
        self.bad_cum.d.next = !self.cum_d.val().get_bit(23) & self.cum_d.val().any();
        // Bits at or beyond next: a mask of the bitmap positions i >=
        // next - base (a function of the offset alone), not a shift of
        // the bitmap.
        // (Used only where `next - base` is within 1..=63.)
        self.below_nb.idx.next = self.nb_off_r.q.val().get_bits::<6>(0);
        self.bm_beyond.next = self.bitmap.q.val() & !self.below_nb.o.val();
        if self.nb_off_r.q.val().get_bit(23) | !self.nb_off_r.q.val().any() {
            self.bad_bits.next = self.bitmap.q.val().any();
        } else if self.nb_off_r.q.val() < 64 {
            self.bad_bits.next = self.bm_beyond.val().any();
        } else {
            self.bad_bits.next = false;
        }
        // NACK classification (in `Load`), on the registered window class.
        self.nack_unsent.next = !self.cls_below_next.q.val();
        self.nack_stale.next = self.cls_below_una.q.val()
            | self.slot.val().acked
            | self.slot.val().queued
            | self.slot.val().oow
            | (self.slot.val().time != self.t_op32.val());

        // The stall suspicion (the model's `EvSet::on_stall`): stage 3's EV
        // is reported stalled once per pass; its first report marks it only
        // if it is suspect and nothing was delivered on it since, else makes
        // it suspect. Per-EV losses (the reorder rule) mark it as before.
        self.one128.next = 1.into();
        self.sv_seen.next = self.pass_seen.q.val().get_bit(self.s3.q.val().ev.index());
        self.sv_mark.next = !self.sv_seen.val() & self.sus3.q.val() & !self.dlv3.q.val() & !self.cng3.q.val();
        self.sv_stall.next = self.tail_mode.q.val() | !self.lost_reorder_r.q.val();

        // Resends: the rules of the states that resend the slot on the RAM
        // output (`p`), and the one way a resend is queued. A resend
        // waits while the registers it needs are full (a lost packet needs
        // the retransmit and the mark register), and so does the walk.
        self.cng_set.next = false;
        self.lone_mark_want.next = false;
        self.resend.push_mark.next = false;
        self.resend.lone_mark.next.qp = self.qp.q.val();
        self.at_trigger.next = self.fb.q.val().by_trigger & (self.p.q.val() == self.trigger.q.val());
        self.skip_ev.next = self.ev.q.val();
        if self.fb.q.val().by_trigger {
            self.skip_ev.next = self.trig_ev.q.val();
        }
        self.resend.lone_mark.next.ev = self.skip_ev.val();
        self.resend.lone_mark.next.reason = MarkReason::Skip;
        if self.fb.q.val().always_skip {
            self.resend.lone_mark.next.reason = MarkReason::Loss;
        }
        self.rs_want.next = false;
        self.rs_reason.next = RtxReason::Loss;
        self.rs_mark.next = false;
        self.rs_mark_reason.next = MarkReason::Loss;
        self.rs_retry.next = false;
        match self.st.q.val() {
            EngineState::LossPipe => {
                // Stage 3's slot (`dec_slot`), when the stage holds one.
                if self.tail_mode.q.val() {
                    // The tail check: sent at or before the cut: lost, its EV
                    // stalled (marked as the suspicion rule says).
                    self.rs_want.next = self.v3.q.val() & self.tail_live.val() & self.lost_tail_r.q.val();
                    self.rs_mark.next = !self.sv_seen.val();
                    self.rs_mark_reason.next = MarkReason::Skip;
                    if self.sv_mark.val() {
                        self.rs_mark_reason.next = MarkReason::Stall;
                    }
                } else if self.v3.q.val() & self.live.val() & self.dec_slot.val().oow {
                    // Out of window: resent once una has advanced.
                    self.rs_want.next = self.una_new.q.val() != self.qs.q.val().una;
                    self.rs_reason.next = RtxReason::OutOfWindow;
                } else if self.v3.q.val() & self.live.val() & (self.lost_reorder_r.q.val() | self.lost_stall_r.q.val())
                {
                    self.rs_want.next = true;
                    self.rs_mark.next = true;
                    if !self.lost_reorder_r.q.val() {
                        self.rs_mark.next = !self.sv_seen.val();
                        self.rs_mark_reason.next = MarkReason::Skip;
                        if self.sv_mark.val() {
                            self.rs_mark_reason.next = MarkReason::Stall;
                        }
                    }
                }
            }
            EngineState::RtoDecide => {
                if self.live.val() & self.slot.val().oow {
                    // Out of window: resent on the RTO, no retry consumed.
                    self.rs_want.next = true;
                    self.rs_reason.next = RtxReason::OutOfWindow;
                } else if self.live.val() & self.due_r.q.val() & !self.spent_r.q.val() {
                    self.rs_want.next = true;
                    self.rs_reason.next = RtxReason::Timeout;
                    self.rs_mark.next = true;
                    self.rs_mark_reason.next = MarkReason::Timeout;
                    self.rs_retry.next = true;
                }
            }
            EngineState::OowRelease => {
                self.rs_want.next = true;
                self.rs_reason.next = RtxReason::Release;
            }
            EngineState::TrimResend => {
                self.rs_want.next = true;
                self.rs_reason.next = RtxReason::Trim;
                // MRC 1.0 TRIMMED: the EV the packet was trimmed on is
                // SKIPped once.
                self.rs_mark.next = self.kind.q.val() == self.k_nack_trim_skip.val();
                self.rs_mark_reason.next = MarkReason::Skip;
            }
            EngineState::TailProbe => {
                // The probe: resent, no EV blamed, no retry consumed.
                self.rs_want.next = self.tail_live.val();
                self.rs_reason.next = RtxReason::Probe;
            }
            _ => {}
        }
        self.rs_blocked.next =
            self.rs_want.val() & (self.resend.rtx_full.val() | (self.rs_mark.val() & self.resend.mark_full.val()));
        self.resend.push.next = self.rs_want.val() & !self.rs_blocked.val();
        // A loss of stage 3 leaves: its EV's first report of the pass (or a
        // per-EV loss, which marks it: the model's state change clears the
        // suspicion) writes the EV's bits.
        self.sv_write.next = (self.st.q.val() == EngineState::LossPipe)
            & self.rs_want.val()
            & !self.rs_blocked.val()
            & (self.rs_reason.val() == RtxReason::Loss)
            & (!self.sv_stall.val() | !self.sv_seen.val());
        self.sv_rto.next = (self.st.q.val() == EngineState::RtoDecide)
            & self.rs_want.val()
            & !self.rs_blocked.val()
            & (self.rs_reason.val() == RtxReason::Timeout);
        self.sus_ram.write_address.next =
            (bit_cast::<15, 8>(self.qp.q.val()) << 7) | bit_cast::<15, 7>(self.dec_slot.val().ev);
        self.dlv_ram.write_address.next = self.sus_ram.write_address.val();
        self.sus_ram.write_data.next = self.sv_write.val() & self.sv_stall.val() & !self.sv_mark.val();
        self.dlv_ram.write_data.next = false;
        self.sus_ram.write_enable.next = self.sv_write.val() | self.sv_rto.val();
        self.dlv_ram.write_enable.next = self.sv_write.val() | self.sv_rto.val();
        if self.sv_write.val() {
            self.pass_seen.d.next = self.pass_seen.q.val() | (self.one128.val() << self.s3.q.val().ev);
        }
        // The SACK's RTT sample within the stall age.
        self.c_age_r.d.next = self.c_age.val();
        self.prompt_d.next = self.c_age_r.q.val() - (self.now32.val() - self.t_op32.val());
        self.prompt.next = self.c_age_r.q.val().any() & !self.prompt_d.val().get_bit(31);
        self.resend.request.next.qp = self.qp.q.val();
        self.resend.request.next.psn = self.dec_p.val();
        self.resend.request.next.ev = self.dec_slot.val().ev;
        self.resend.request.next.len = self.dec_slot.val().len;
        self.resend.request.next.reason = self.rs_reason.val();
        self.resend.with_mark.next = self.rs_mark.val();
        self.resend.mark_reason.next = self.rs_mark_reason.val();
        self.resend.rtx_ready.next = self.rtx_ready.val();
        self.resend.mark_ready.next = self.mark_ready.val();
        if self.rs_want.val() & !self.rs_blocked.val() {
            // Queued: the slot is not live until it is sent again (which
            // also ends an out-of-window wait). A release queues nothing:
            // the slot waits out of window.
            self.slot_wr.next.queued = true;
            self.slot_wr.next.oow = false;
            if self.rs_reason.val() == RtxReason::Release {
                self.slot_wr.next.queued = false;
                self.slot_wr.next.oow = true;
            }
            if self.rs_retry.val() {
                self.slot_wr.next.retries = self.slot.val().retries + 1;
                self.fired.d.next = true;
            }
            self.slot_ram.write_address.next =
                (bit_cast::<16, 8>(self.qp.q.val()) << 8) | bit_cast::<16, 24>(self.dec_p.val() & 255);
            self.slot_ram.write_enable.next = true;
        }

        self.go.next = !self.rs_blocked.val();
        self.walk_step.next = false;
        self.ack_pick.next = false;
        self.pass_start.next = false;
        self.walk_end.next = EngineState::Store;
        self.walk_next.next = EngineState::Store;
        // What `SackDone` reports (the acknowledgement output).
        self.ack_moved.next = self.bytes.q.val().any() | (self.una_new.q.val() != self.qs.q.val().una);
        self.ack_news.next = self.ack_moved.val()
            | ((self.kind.q.val() == self.k_sack.val()) & (self.fb.q.val().ecn | self.fb.q.val().restore));
        // A record is taken in `Idle` and in `Store`: the cycle that stores
        // one record presents the next one's reads, so back-to-back records
        // cost no `Idle` cycle between them (the QP's state of a record of
        // the same QP is forwarded, `fwd`). The RTO scanner visits a QP
        // only from `Idle`, as before: records come first.
        self.take.next = (self.st.q.val() == EngineState::Idle) | (self.st.q.val() == EngineState::Store);
        self.op_ready.next = self.take.val();
        self.la_ok.d.next = self.op_valid.val() & !self.take.val();
        self.la_qp.d.next = self.op_qp.val();
        self.cls_now.next = (self.la_ok.q.val() & (self.la_qp.q.val() == self.op_qp.val()))
            | ((self.st.q.val() == EngineState::Store) & (self.op_qp.val() == self.qp.q.val()));
        self.op_classed.next = (self.op_kind.val() != self.k_init.val())
            & (self.op_kind.val() != self.k_sack.val())
            & (self.op_kind.val() != self.k_ev_changed.val());
        self.take_next.next = EngineState::Load;
        self.in_classify.d.next = false;
        if self.take.val() & self.op_valid.val() & self.op_classed.val() & !self.cls_now.val() {
            self.take_next.next = EngineState::Classify;
            self.in_classify.d.next = true;
        }
        if self.take.val() & self.op_valid.val() {
            // Present the QP's state, config, slot and EV reads.
            self.kind.d.next = self.op_kind.val();
            self.qp.d.next = self.op_qp.val();
            self.psn.d.next = self.op_psn.val();
            self.p.d.next = self.op_psn.val();
            self.ev.d.next = self.op_ev.val();
            self.cur_ev.d.next = self.op_ev.val();
            self.t_op.d.next = self.t_ext.val();
            self.len.d.next = self.op_len.val();
            self.base.d.next = self.op_base.val();
            self.bitmap.d.next = self.op_bitmap.val();
            self.bw0.d.next = self.op_base.val() & 0xFF_FFC0;
            self.bw1.d.next = (self.op_base.val() & 0xFF_FFC0) + 64;
            self.fb.d.next = self.op_fb.val();
            self.trigger.d.next = self.op_trigger.val();
            self.trig_hit.d.next = false;
            self.is_timer.d.next = false;
            self.qs_ram.read_address.next = self.op_qp.val();
            self.tail_ram.read_address.next = self.op_qp.val();
            self.cfg_ram.read_address.next = self.op_qp.val();
            self.est_ram.read_address.next = self.op_qp.val();
            self.slot_ram.read_address.next =
                (bit_cast::<16, 8>(self.op_qp.val()) << 8) | bit_cast::<16, 24>(self.op_psn.val() & 255);
            self.ev_ram.read_address.next =
                (bit_cast::<15, 8>(self.op_qp.val()) << 7) | bit_cast::<15, 7>(self.op_ev.val());
            self.ack_ram.read_address.next = (bit_cast::<ACK_ADDR_BITS, 8>(self.op_qp.val()) << 2)
                | bit_cast::<ACK_ADDR_BITS, 2>(self.op_psn.val().get_bits::<2>(6));
        }
        match self.st.q.val() {
            EngineState::Idle => {
                // IDLE: a record (taken above), else the scanner visits a QP.
                if !self.op_valid.val() {
                    self.qp.d.next = self.scanner.qp.val();
                    self.is_timer.d.next = true;
                    self.scanner.advance.next = true;
                    self.qs_ram.read_address.next = self.scanner.qp.val();
                    self.tail_ram.read_address.next = self.scanner.qp.val();
                    self.cfg_ram.read_address.next = self.scanner.qp.val();
                    self.est_ram.read_address.next = self.scanner.qp.val();
                }
                self.st.d.next = self.take_next.val();
            }
            EngineState::Classify => {
                // The record's QP word on the RAM output (read in the
                // take): its classification is registered (above), and the
                // RAMs are read again for `Load` (the state RAM with the
                // record's QP, above; the acknowledged word of its PSN).
                self.ack_ram.read_address.next = self.psn_addr.val();
                self.st.d.next = EngineState::Load;
            }
            EngineState::Load => {
                // `Load`: the QP's state is on the qs RAM output.
                self.qs.d.next = self.qs_rd.val();
                self.tail.d.next = self.tail_rd.val();
                self.found.d.next = false;
                self.bytes.d.next = 0.into();
                self.fired.d.next = false;
                self.have_rem.d.next = false;
                self.min_rem.d.next = 0.into();
                if self.is_timer.q.val() | (self.kind.q.val() == self.k_sack.val()) {
                    // Walks start at una; other records keep p = their PSN.
                    self.p.d.next = self.qs_rd.val().una;
                }
                // The next state is `load_next` (after this match); a timer
                // visit has nothing else to do here.
                if !self.is_timer.q.val() {
                    if self.kind.q.val() == self.k_init.val() {
                        // INIT: clear the QP's 128 EV entries.
                        self.qs.d.next.una = self.psn.q.val();
                        self.qs.d.next.next_psn = self.psn.q.val();
                        self.qs.d.next.hw_valid = false;
                        self.qs.d.next.armed = false;
                        self.qs.d.next.error = false;
                        self.qs.d.next.oow_wait = false;
                        self.qs.d.next.no_ev_hole = true;
                        self.tail.d.next.armed = false;
                        self.tail.d.next.blind = 0.into();
                        self.tail.d.next.acked = false;
                        self.tail.d.next.trim_valid = false;
                        self.tail.d.next.probe_valid = false;
                        self.clr.d.next = 0.into();
                    } else if self.kind.q.val() == self.k_ev_changed.val() {
                        // EV_CHANGED: the EV's suspicion bits cleared (a QP in
                        // error too: its INIT clears them anyway).
                        self.sus_ram.write_address.next =
                            (bit_cast::<15, 8>(self.qp.q.val()) << 7) | bit_cast::<15, 7>(self.ev.q.val());
                        self.sus_ram.write_data.next = false;
                        self.sus_ram.write_enable.next = true;
                        self.dlv_ram.write_address.next =
                            (bit_cast::<15, 8>(self.qp.q.val()) << 7) | bit_cast::<15, 7>(self.ev.q.val());
                        self.dlv_ram.write_data.next = false;
                        self.dlv_ram.write_enable.next = true;
                    } else if self.qs_rd.val().error {
                        // In error (every kind of the 3 bits has a meaning).
                        self.o_cnt_drop.d.next = true;
                    } else if self.kind.q.val() == self.k_sent.val() {
                        // SENT: a new PSN (next, window not full) or a resend of
                        // an outstanding one.
                        if self.is_new.val() | self.is_resend.val() {
                            self.slot_wr.next.ev = self.ev.q.val();
                            self.slot_wr.next.seq = self.ev_entry.val().next_seq;
                            self.slot_wr.next.time = self.t_op32.val();
                            self.slot_wr.next.time_hi = self.t_op.q.val().get_bits::<4>(32);
                            self.slot_wr.next.len = self.len.q.val();
                            self.slot_wr.next.acked = false;
                            self.slot_wr.next.queued = false;
                            self.slot_wr.next.oow = false;
                            if self.is_new.val() {
                                self.slot_wr.next.retries = 0.into();
                                self.slot_wr.next.resent = false;
                                self.qs.d.next.next_psn = self.psn.q.val() + 1;
                            } else {
                                self.slot_wr.next.resent = true;
                            }
                            self.slot_ram.write_enable.next = true;
                            // Its acknowledged bit too (the same as `acked`).
                            self.ack_ram.write_address.next = self.psn_addr.val();
                            self.ack_ram.write_data.next = self.psn_unacked.val();
                            self.ack_ram.write_enable.next = true;
                            self.ev_entry_wr.next.next_seq = self.ev_entry.val().next_seq + 1;
                            self.ev_ram.write_enable.next = true;
                            if !self.qs_rd.val().armed {
                                // Arm on a send when idle (the tail check too).
                                if self.c_age.val().any() {
                                    self.tail.d.next.armed = true;
                                    self.tail.d.next.deadline = self.t_op32.val() + self.c_age.val();
                                }
                                // The deadline is written in `Store`, two cycles
                                // on (`ArmBackoff` between), from the backoff
                                // loaded here.
                                self.qs.d.next.armed = true;
                                if self.is_new.val() {
                                    self.backoff.load.next = true;
                                    self.backoff.shift.next = self.bo_shift_new.val();
                                } else {
                                    self.backoff.load.next = true;
                                    self.backoff.shift.next = self.bo_shift.val();
                                }
                            }
                        } else if self.cls_below_una.q.val() {
                            // Below una: acknowledged while its resend waited.
                            self.o_cnt_drop_acked.d.next = true;
                        } else {
                            self.o_cnt_drop.d.next = true;
                        }
                    } else if self.kind.q.val() == self.k_sack.val() {
                        // SACK: the acknowledgement pass (W1) from una's
                        // word, read now, its offsets registered; the SACK
                        // is validated with the word's masks
                        // (`AckWordMask`), before anything is written.
                        self.nb_off_r.d.next = self.nb_off.val();
                        self.validate.d.next = true;
                        self.wq.d.next = self.first_wq.val();
                        self.ack_ram.read_address.next = (bit_cast::<ACK_ADDR_BITS, 8>(self.qp.q.val()) << 2)
                            | bit_cast::<ACK_ADDR_BITS, 2>(self.first_wq.val().get_bits::<2>(6));
                        self.wd_base.d.next = self.first_base.val();
                        self.wd_cum.d.next = self.first_cum.val();
                        self.wd_cum_all.d.next =
                            !self.first_cum.val().get_bit(23) & (self.first_cum.val() & 0x7F_FFC0).any();
                        self.wd_bm0.d.next = self.first_wq.val() == self.bw0.q.val();
                        self.wd_bm1.d.next = self.first_wq.val() == self.bw1.q.val();
                        self.wd_una.d.next = self.qs_rd.val().una & 0x3F;
                        self.wd_next.d.next = self.first_next.val();
                        self.wd_next_all.d.next = (self.first_next.val() & 0xFF_FFC0).any();
                        self.any_new.d.next = false;
                        self.ack_above.d.next = false;
                        self.probe_seen.d.next = false;
                        self.ack_in_order.d.next = true;
                    } else if self.nack_unsent.val() {
                        self.o_cnt_drop.d.next = true;
                    } else if self.kind.q.val() == self.k_nack_remote.val() {
                        // Remote access (the model's fatal NAK): any PSN in
                        // [una, next) ends its request and the QP, whatever the
                        // slot's state or echo (an acknowledged or resent PSN
                        // included); before una it is stale.
                        if self.cls_below_una.q.val() {
                            self.o_cnt_stale.d.next = true;
                        }
                    } else if self.nack_stale.val() {
                        self.o_cnt_stale.d.next = true;
                    }
                }
            }
            EngineState::AckWordRead => {
                // W1: word wq's acknowledged bits are being read (the
                // default address); the SACK's offsets from it registered
                // (above).
                self.st.d.next = EngineState::AckWordMask;
            }
            EngineState::AckWordMask => {
                // W2: the word on the RAM output and the SACK's masks of it,
                // registered.
                self.aw_r.d.next = self.ack_ram.read_data.val();
                self.cover_r.d.next = self.m_cum.val() | self.m_bits.val();
                self.win_r.d.next = self.m_win.val();
                // The newly acknowledged bits too (`newly` of the registers
                // above), so that `AckWordWrite` picks the first slot.
                self.pend.d.next = self.newly_early.val();
                // Nothing covered past this word: cum + 1 - wq <= 64, and the
                // bitmap empty or based at or before wq (its last bit,
                // base + 63, in this word or before).
                self.cover_end.d.next = (self.wd_cum.q.val().get_bit(23) | (self.wd_cum.q.val() <= 64))
                    & (!self.wd_base.q.val().get_bit(23) | !self.bitmap.q.val().any());
                // The SACK's first word: a SACK of a PSN never sent
                // (cumulative past `next - 1`, or a bitmap bit at or past
                // `next`) is counted and dropped, nothing written.
                if self.validate.q.val() & (self.bad_cum.q.val() | self.bad_bits.val()) {
                    self.o_cnt_unsent.d.next = true;
                    self.st.d.next = EngineState::Idle;
                } else {
                    self.st.d.next = EngineState::AckWordWrite;
                }
            }
            EngineState::AckWordWrite => {
                // W3: the newly acknowledged bits set, the whole word at once
                // (default address and data); their slots are visited next,
                // the first picked now. The word's first open PSN is
                // searched (`fo_*`).
                self.ack_ram.write_enable.next = true;
                if self.newly.val().any() {
                    self.any_new.d.next = true;
                }
                self.fo_any.d.next = self.first_open.any.val();
                self.fo_index.d.next = self.first_open.index.val();
                // A newly acknowledged slot is picked now (`pend` holds
                // them); a word with none goes through `AckPick`, where
                // the search registered here decides the next word or
                // the end.
                self.ack_pick.next = self.pend.q.val().any();
                self.st.d.next = EngineState::AckPick;
            }
            EngineState::AckPick => {
                // The first word with an open PSN holds the new una. The
                // next newly acknowledged slot of the word (the pick below).
                self.found.d.next = self.found_now.val();
                self.una_new.d.next = self.una_now.val();
                self.ack_pick.next = true;
            }
            EngineState::AckEvRead => {
                // A2: slot p on the RAM output; read its EV entry.
                self.cur_ev.d.next = self.slot.val().ev;
                self.ev_ram.read_address.next =
                    (bit_cast::<15, 8>(self.qp.q.val()) << 7) | bit_cast::<15, 7>(self.slot.val().ev);
                // The word's search, when `AckWordWrite` picked this slot.
                self.found.d.next = self.found_now.val();
                self.una_new.d.next = self.una_now.val();
                // A newly acknowledged PSN at or above the new una (known
                // from its word on: the words go up from una's).
                if self.found_now.val() & !self.above_d.val().get_bit(23) {
                    self.ack_above.d.next = true;
                }
                self.st.d.next = EngineState::AckDecide;
            }
            EngineState::AckDecide => {
                // A3: slot p is newly acknowledged: its bytes; for a first
                // transmission (Karn) the stall rule's hw and the EV's
                // highest acknowledged sequence. Then the next pick.
                self.slot_wr.next.acked = true;
                self.slot_ram.write_enable.next = true;
                self.bytes.d.next = self.bytes.q.val() + bit_cast::<32, 16>(self.slot.val().len);
                // The last tail probe's slot: whichever copy arrived, every
                // live packet sent before the probed transmission was sent
                // before a packet delivered (hw raised to its send time).
                if self.probe_hit.val() {
                    self.tail.d.next.probe_valid = false;
                    self.probe_seen.d.next = true;
                }
                if !self.slot.val().resent | self.probe_hit.val() {
                    if !self.qs.q.val().hw_valid | !self.hw_d.val().get_bit(31) {
                        self.qs.d.next.hw = self.ack_time.val();
                    }
                    self.qs.d.next.hw_valid = true;
                }
                // A packet sent on the SACK's own EV (legacy), or the
                // SACK's trigger (MRC 1.0: the model's `ack_one` gives the
                // sample to the trigger's EV), its sample within the stall
                // age: delivered (the model's `on_ack` clears the EV's
                // suspicion). A resent one too: the model gives the sample
                // to the EV before it asks whether the slot was resent.
                if self.at_trigger.val() {
                    self.trig_hit.d.next = true;
                    self.trig_ev.d.next = self.slot.val().ev;
                    self.trig_named.d.next = !self.slot.val().resent;
                }
                if ((!self.fb.q.val().by_trigger & (self.slot.val().ev == self.ev.q.val())) | self.at_trigger.val())
                    & self.fb.q.val().sample
                    & self.prompt.val()
                {
                    self.dlv_ram.write_address.next =
                        (bit_cast::<15, 8>(self.qp.q.val()) << 7) | bit_cast::<15, 7>(self.cur_ev.q.val());
                    self.dlv_ram.write_data.next = true;
                    self.dlv_ram.write_enable.next = true;
                }
                // The EV's highest acknowledged sequence: first transmissions only.
                if !self.slot.val().resent & !self.seq_next.val() {
                    self.ack_in_order.d.next = false;
                }
                if !self.slot.val().resent & (!self.ev_entry.val().max_valid | !self.seq_d.val().get_bit(15)) {
                    self.ev_entry_wr.next.max_seq = self.slot.val().seq;
                    self.ev_entry_wr.next.max_valid = true;
                    self.ev_ram.write_enable.next = true;
                }
                self.ack_pick.next = true;
            }
            EngineState::AckUna => {
                // The new una's slot on the RAM output: the RTO and the tail
                // check re-arm from its last send; its backoff is loaded. Its
                // value is registered two cycles later: `Store` (never
                // sooner than that after this state, `SackDone` between)
                // adds it to `una_time` (`arm_dl`).
                self.una_time.d.next = self.s_time.val();
                self.backoff.load.next = true;
                self.backoff.shift.next = self.bo_shift.val();
                self.una_stall.d.next = self.slot.val().resent
                    | (self.qs.q.val().hw_valid & self.c_allow.val().any() & self.una_line.val().get_bit(31));
                if !self.needs_pass.val() {
                    self.st.d.next = EngineState::SackDone;
                } else if self.pass_check.val() {
                    self.st.d.next = EngineState::AckStallCheck;
                } else {
                    self.pass_start.next = true;
                }
            }
            EngineState::AckStallCheck => {
                // The loss pass's only reason is a PSN newly acknowledged
                // above the new una, and no live slot's sequence is at or
                // below its EV's highest acknowledged (`no_ev_hole` and
                // `ack_in_order`): the per-EV rule takes nothing. If the
                // stall rule can take nothing either (the new una's slot,
                // the earliest sent of the live ones, is not resent and was
                // sent at or after `hw - A`), the pass would find nothing:
                // it is passed over. `p` is the new una's, as from `AckUna`.
                if self.una_stall.q.val() {
                    self.pass_start.next = true;
                } else {
                    self.st.d.next = EngineState::SackDone;
                }
            }
            EngineState::AckDone => {
                // End of the acknowledgement pass: the loss pass from the new
                // una, when a rule can take an outstanding slot. Nothing new
                // acknowledged: no rule's input moved, the last pass's
                // verdicts stand. Only PSNs below the new una newly
                // acknowledged (no probe among them): each was first sent
                // before every outstanding slot was last sent, so the EV
                // sequence it raises is below theirs and the send time it
                // raises `hw` to is not after theirs; only slots waiting
                // after an out-of-window NACK (`oow_wait`) then still need
                // the pass, when una moved.
                // Reached only where the pick ended with every PSN
                // acknowledged and `needs_pass_end` held (`AckUna` starts
                // the pass itself): the walk from the new una, `next`.
                self.p.d.next = self.una_new.q.val();
                self.pass_start.next = true;
            }
            EngineState::LossPipe => {
                // The tail check's walk: a loss, and for the probe the first
                // live slot's age and the newest live slot (stage 3).
                if self.rs_want.val() {
                    self.t_lost.d.next = true;
                }
                if self.tail_mode.q.val() & self.go.val() & self.v3.q.val() & self.tail_live.val() {
                    if !self.t_first.q.val() {
                        self.t_first.d.next = true;
                        self.t_aged.d.next = self.aged_r.q.val();
                        self.t_first_time.d.next = self.s3.q.val().time;
                    }
                    if !self.t_newest_v.q.val() | !self.newest_d.val().get_bit(31) {
                        self.t_newest_v.d.next = true;
                        self.t_newest_p.d.next = self.p3.q.val();
                        self.t_newest_time.d.next = self.s3.q.val().time;
                    }
                }
                // One PSN per cycle: stage 3 decides (the resend rules above),
                // stage 2's slot and EV entry give the rules, stage 1's slot
                // gives the EV read, the next PSN is read. A waiting resend
                // holds every stage: the RAMs are given the same addresses.
                if self.go.val() {
                    self.v3.d.next = self.v2.q.val();
                    self.p3.d.next = self.p2.q.val();
                    self.s3.d.next = self.s2.q.val();
                    self.lost_reorder_r.d.next = self.lost_reorder.val();
                    self.sus3.d.next = self.sus_ram.read_data.val();
                    self.dlv3.d.next = self.dlv_ram.read_data.val();
                    self.cng3.d.next = self.cng_ram.read_data.val();
                    self.lost_stall_r.d.next = self.lost_stall.val();
                    self.past_hw_r.d.next = self.past_hw.val();
                    self.lost_tail_r.d.next = self.lost_tail.val();
                    self.aged_r.d.next = !self.aged_d.val().get_bit(31);
                    self.v2.d.next = self.v1.q.val();
                    self.p2.d.next = self.p1.q.val();
                    self.s2.d.next = self.slot.val();
                    self.ev_ram.read_address.next =
                        (bit_cast::<15, 8>(self.qp.q.val()) << 7) | bit_cast::<15, 7>(self.slot.val().ev);
                    self.p1.d.next = self.p.q.val();
                    if self.p.q.val() == self.qs.q.val().next_psn {
                        self.v1.d.next = false;
                        if !self.v1.q.val() & !self.v2.q.val() & self.tail_mode.q.val() {
                            self.st.d.next = EngineState::TailEnd;
                        } else if !self.v1.q.val() & !self.v2.q.val() {
                            self.st.d.next = EngineState::SackDone;
                        }
                    } else {
                        self.v1.d.next = true;
                        self.p.d.next = self.p_next.val();
                        self.slot_ram.read_address.next =
                            (bit_cast::<16, 8>(self.qp.q.val()) << 8) | bit_cast::<16, 24>(self.p.q.val() & 255);
                    }
                } else {
                    self.slot_ram.read_address.next =
                        (bit_cast::<16, 8>(self.qp.q.val()) << 8) | bit_cast::<16, 24>(self.p1.q.val() & 255);
                    self.ev_ram.read_address.next =
                        (bit_cast::<15, 8>(self.qp.q.val()) << 7) | bit_cast::<15, 7>(self.s2.q.val().ev);
                }
                // A SACK's pass ends at the first slot no rule can take and
                // after which none can (`past_hw_r`; stage 3 decided it this
                // cycle, stages 1 and 2 hold later PSNs): a pass costs the
                // slots sent before `hw`, not every slot outstanding. Not
                // for the tail check (its probe wants the newest live slot)
                // nor a pass that queues out-of-window slots.
                if self.go.val()
                    & self.v3.q.val()
                    & self.past_hw_r.q.val()
                    & !self.tail_mode.q.val()
                    & !self.full_pass.q.val()
                {
                    self.v1.d.next = false;
                    self.v2.d.next = false;
                    self.v3.d.next = false;
                    self.st.d.next = EngineState::SackDone;
                }
            }
            EngineState::SackDone => {
                // SACK done: una advance (re-arm the RTO and the tail check from
                // the new una's last send), report the acknowledgement, store.
                // The tail check is also armed by a SACK that finds it unarmed
                // with packets outstanding.
                // A SACK that acknowledges nothing new is still reported
                // when it echoes CE marks or a restore bit (the model's
                // `on_ack` for it): news for NSCC only.
                // The SACK's SETH m field (MRC 1.0), applied after its
                // acknowledgements and losses as the model applies it: the
                // trigger's EV (`skip_ev`; only when the trigger was newly
                // acknowledged here and not resent) is skipped
                // once and noted congested (SKIP_ONCE), or marked
                // (ALWAYS_SKIP, reason LOSS), once the mark register is
                // free.
                self.lone_mark_want.next = (self.fb.q.val().skip | self.fb.q.val().always_skip)
                    & (!self.fb.q.val().by_trigger | (self.trig_hit.q.val() & self.trig_named.q.val()));
                if (!self.o_ack_v.q.val() | !self.ack_news.val())
                    & (!self.lone_mark_want.val() | !self.resend.mark_full.val())
                {
                    self.resend.push_mark.next = self.lone_mark_want.val();
                    self.cng_set.next = self.fb.q.val().skip & self.lone_mark_want.val();
                    self.sus_ram.write_address.next =
                        (bit_cast::<15, 8>(self.qp.q.val()) << 7) | bit_cast::<15, 7>(self.skip_ev.val());
                    self.dlv_ram.write_address.next = self.sus_ram.write_address.val();
                    if self.ack_news.val() {
                        self.o_ack_v.d.next = true;
                        self.o_ack_qp.d.next = self.qp.q.val();
                        self.o_ack_una.d.next = self.una_new.q.val();
                        self.o_ack_bytes.d.next = self.bytes.q.val();
                        self.o_ack_fb.d.next = self.fb.q.val();
                    }
                    // Any PSN newly acknowledged resets the tail check's
                    // blind count, also a zero-length one that moves
                    // neither the bytes nor una (the model counts every
                    // acknowledgement, not bytes).
                    if self.any_new.q.val() {
                        self.tail.d.next.acked = true;
                    }
                    self.qs.d.next.una = self.una_new.q.val();
                    // No per-EV hole: kept while every first transmission
                    // acknowledged is the next on its EV, restored when
                    // nothing is outstanding.
                    self.qs.d.next.no_ev_hole = (self.qs.q.val().no_ev_hole & self.ack_in_order.q.val())
                        | (self.una_new.q.val() == self.qs.q.val().next_psn);
                    if self.una_new.q.val() == self.qs.q.val().next_psn {
                        if self.una_new.q.val() != self.qs.q.val().una {
                            self.qs.d.next.armed = false;
                            self.tail.d.next.armed = false;
                        }
                    } else {
                        if self.una_new.q.val() != self.qs.q.val().una {
                            self.qs.d.next.armed = true;
                            self.arm_dl.d.next = true;
                            self.arm_dl_una.d.next = true;
                        }
                        if self.c_age.val().any()
                            & ((self.una_new.q.val() != self.qs.q.val().una) | !self.tail.q.val().armed)
                        {
                            self.tail.d.next.armed = true;
                            self.tail.d.next.deadline = self.una_time.q.val().get_bits::<32>(0) + self.c_age.val();
                        }
                    }
                    self.st.d.next = EngineState::Store;
                }
            }
            EngineState::RtoRead => {
                // R1: slot p is being read.
                if self.p.q.val() == self.qs.q.val().next_psn {
                    self.st.d.next = EngineState::RtoDone;
                } else {
                    self.st.d.next = EngineState::RtoRetry;
                }
            }
            EngineState::RtoRetry => {
                // R2a: slot p on the RAM output; register its retry count and
                // whether its budget is spent.
                self.backoff.load.next = true;
                self.backoff.shift.next = self.bo_shift.val();
                self.spent_r.d.next = self.retry_spent.val();
                self.st.d.next = EngineState::RtoBackoff;
            }
            EngineState::RtoBackoff => {
                // R2b: the backoff unit registers the slot's backoff.
                self.st.d.next = EngineState::RtoDue;
            }
            EngineState::RtoDue => {
                // R2c: its deadline (send time + backoff) and the test against
                // now, registered.
                self.due_r.d.next = self.due.val();
                self.dlp_r.d.next = self.dl_p.val();
                self.st.d.next = EngineState::RtoDecide;
            }
            EngineState::RtoDecide => {
                // R2d: timeout decision for slot p (the resend rules above):
                // a spent budget puts the QP in error, a slot not due yet
                // gives the earliest remaining deadline.
                if self.live.val() & !self.slot.val().oow & self.due_r.q.val() & self.spent_r.q.val() {
                    // Budget spent: QP to error, report the PSN, and the
                    // firing (the model counts an RTO that ends in error as
                    // one that fired, with or without resends before it).
                    self.go.next = false;
                    if !self.o_err_v.q.val() & !self.o_rto_v.q.val() {
                        self.o_err_v.d.next = true;
                        self.o_err_qp.d.next = self.qp.q.val();
                        self.o_err_psn.d.next = self.p.q.val();
                        self.o_err_reason.d.next = ErrReason::RetryExceeded;
                        self.o_rto_v.d.next = true;
                        self.o_rto_qp.d.next = self.qp.q.val();
                        self.qs.d.next.error = true;
                        self.tail.d.next.armed = false;
                        self.qs.d.next.armed = false;
                        self.st.d.next = EngineState::Store;
                    }
                } else if self.live.val() & !self.slot.val().oow & !self.due_r.q.val() {
                    // Not due: the earliest remaining deadline re-arms.
                    if !self.have_rem.q.val() | (self.rem_d.val() < self.min_rem.q.val()) {
                        self.min_rem.d.next = self.rem_d.val();
                    }
                    self.have_rem.d.next = true;
                }
                self.walk_step.next = true;
                self.walk_end.next = EngineState::RtoDone;
                self.walk_next.next = EngineState::RtoRetry;
            }
            EngineState::RtoDone => {
                // RTO walk done: report one firing, re-arm, store.
                if !self.fired.q.val() | !self.o_rto_v.q.val() {
                    if self.fired.q.val() {
                        self.o_rto_v.d.next = true;
                        self.o_rto_qp.d.next = self.qp.q.val();
                    }
                    self.qs.d.next.armed = self.have_rem.q.val();
                    self.qs.d.next.deadline = self.now.val() + self.min_rem.q.val();
                    self.st.d.next = EngineState::Store;
                }
            }
            EngineState::TrimResend => {
                // Trim NACK: resend at once (no EV mark, a SKIP for
                // NACK_TRIM_SKIP), once the registers it needs are free. Its arrival is the tail check's evidence
                // (written here: the record stores nothing else).
                if self.go.val() {
                    // MRC 1.0 TRIMMED: the EV's path is congested (the
                    // model's `skip_once` sets `congested` with the SKIP).
                    self.cng_set.next = self.kind.q.val() == self.k_nack_trim_skip.val();
                    self.tail_ram.write_data.next.trim_at = self.now32.val();
                    self.tail_ram.write_data.next.trim_valid = true;
                    self.tail_ram.write_enable.next = true;
                    self.st.d.next = EngineState::Idle;
                }
            }
            EngineState::OowRelease => {
                // The release is out: the QP notes that a slot waits (the
                // next SACK moving una runs the loss pass).
                if self.go.val() {
                    self.qs.d.next.oow_wait = true;
                    self.st.d.next = EngineState::Store;
                }
            }
            EngineState::FatalNack => {
                // Remote-access NACK: the QP goes to error, the PSN's request
                // completes REMOTE_ACCESS, the rest are flushed (the send
                // completions); nothing of the QP is resent or timed any
                // more (records but INIT are dropped for a QP in error).
                if !self.o_err_v.q.val() {
                    self.o_err_v.d.next = true;
                    self.o_err_qp.d.next = self.qp.q.val();
                    self.o_err_psn.d.next = self.psn.q.val();
                    self.o_err_reason.d.next = ErrReason::RemoteAccess;
                    self.qs.d.next.error = true;
                    self.tail.d.next.armed = false;
                    self.qs.d.next.armed = false;
                    self.st.d.next = EngineState::Store;
                }
            }
            EngineState::TailCheck => {
                // Tail check fired (2.5.2): nothing outstanding -> disarm; an
                // acknowledgement since the last check resets the blind count;
                // at most 2 checks act in a row without one. Re-armed at
                // now + stall_age.
                if self.qs.q.val().una == self.qs.q.val().next_psn {
                    self.tail.d.next.armed = false;
                    self.st.d.next = EngineState::Store;
                } else {
                    self.tail.d.next.armed = true;
                    self.tail.d.next.deadline = self.now32.val() + self.c_age.val();
                    self.tail.d.next.acked = false;
                    self.tail_thr.d.next = self.now32.val() - self.c_age.val();
                    // The evidence: the later of hw and the last trim NACK.
                    self.tail_ev_valid.d.next = self.qs.q.val().hw_valid | self.tail.q.val().trim_valid;
                    if !self.qs.q.val().hw_valid | (self.tail.q.val().trim_valid & !self.ev_d.val().get_bit(31)) {
                        self.tail_ev.d.next = self.tail.q.val().trim_at;
                    } else {
                        self.tail_ev.d.next = self.qs.q.val().hw;
                    }
                    self.t_lost.d.next = false;
                    self.t_first.d.next = false;
                    self.t_aged.d.next = false;
                    self.t_newest_v.d.next = false;
                    if self.tail.q.val().acked {
                        self.tail.d.next.blind = 1.into();
                        self.st.d.next = EngineState::TailRead;
                    } else if self.tail.q.val().blind < 2 {
                        self.tail.d.next.blind = self.tail.q.val().blind + 1;
                        self.st.d.next = EngineState::TailRead;
                    } else {
                        self.st.d.next = EngineState::Store;
                    }
                }
            }
            EngineState::TailRead => {
                // T1: the cut, the earlier of the line and the evidence; then
                // the walk from una (p) in the loss pipeline, in tail mode:
                // every live slot sent at or before the cut is lost (its EV
                // stalled; the resend rules above), one PSN per cycle. Age
                // alone is no evidence: a packet sent after every one
                // acknowledged may only wait in a queue that grew since the
                // RTT was sampled (RACK, RFC 8985 6.2).
                if self.cut_d.val().get_bit(31) {
                    self.tail_cut.d.next = self.tail_ev.q.val();
                } else {
                    self.tail_cut.d.next = self.tail_thr.q.val();
                }
                self.v1.d.next = false;
                self.v2.d.next = false;
                self.v3.d.next = false;
                self.tail_mode.d.next = true;
                self.pass_seen.d.next = 0.into();
                self.st.d.next = EngineState::LossPipe;
            }
            EngineState::TailEnd => {
                // T3: nothing lost, but the oldest live packet aged: the tail
                // probe (RACK-TLP, RFC 8985 7) resends the newest live one.
                if !self.t_lost.q.val() & self.t_aged.q.val() & self.t_newest_v.q.val() {
                    self.p.d.next = self.t_newest_p.q.val();
                    self.slot_ram.read_address.next =
                        (bit_cast::<16, 8>(self.qp.q.val()) << 8) | bit_cast::<16, 24>(self.t_newest_p.q.val() & 255);
                    self.st.d.next = EngineState::TailProbe;
                } else {
                    if !self.t_lost.q.val() & self.t_first.q.val() & !self.t_aged.q.val() {
                        // The first live slot is not `age` old yet (the age
                        // grew since the check was armed): the check did
                        // nothing, so it is not counted, and it comes back
                        // when the slot is `age` old, not a whole age from
                        // now (which can be after the RTO).
                        self.tail.d.next.deadline = self.t_first_time.q.val() + self.c_age.val();
                        self.tail.d.next.blind = self.tail.q.val().blind - 1;
                    }
                    self.st.d.next = EngineState::Store;
                }
            }
            EngineState::TailProbe => {
                // T4: the probe (the resend rules above); its slot and the
                // send time it repeats are kept for the acknowledgement pass.
                if self.go.val() {
                    if self.rs_want.val() {
                        self.tail.d.next.probe_valid = true;
                        self.tail.d.next.probe_slot = self.p.q.val().get_bits::<8>(0);
                        self.tail.d.next.probe_time = self.slot.val().time;
                    }
                    self.st.d.next = EngineState::Store;
                }
            }
            EngineState::ArmBackoff => {
                // Arm the RTO of a send that found it idle: the backoff
                // unit registers the send's backoff; `Store`, the second
                // cycle after its load in `Load`, writes the deadline from
                // it (a state merged here would read the value too soon).
                self.arm_dl.d.next = true;
                self.arm_dl_una.d.next = false;
                self.st.d.next = EngineState::Store;
            }
            EngineState::InitClear => {
                // INIT: clear the EV entries one per cycle, then store.
                self.ev_ram.write_address.next =
                    (bit_cast::<15, 8>(self.qp.q.val()) << 7) | bit_cast::<15, 7>(self.clr.q.val());
                self.ev_entry_wr.next.next_seq = 0.into();
                self.ev_entry_wr.next.max_seq = 0.into();
                self.ev_entry_wr.next.max_valid = false;
                self.ev_ram.write_enable.next = true;
                self.sus_ram.write_address.next = self.ev_ram.write_address.val();
                self.sus_ram.write_data.next = false;
                self.sus_ram.write_enable.next = true;
                self.dlv_ram.write_address.next = self.ev_ram.write_address.val();
                self.dlv_ram.write_data.next = false;
                self.dlv_ram.write_enable.next = true;
                self.clr.d.next = self.clr.q.val() + 1;
                if self.clr.q.val() == 127 {
                    self.st.d.next = EngineState::Store;
                }
            }
            EngineState::Store => {
                // Store the QP's state; a record waiting is taken (above)
                // and loaded next.
                self.qs_ram.write_enable.next = true;
                self.tail_ram.write_enable.next = true;
                // The RTO deadline armed in the state before, its backoff
                // registered now; `qs` too, for a record of the same QP
                // taken now (`fwd`).
                if self.arm_dl.q.val() {
                    self.qs_ram.write_data.next.deadline = self.dl_sum.val();
                    self.qs.d.next.deadline = self.dl_sum.val();
                }
                if self.op_valid.val() {
                    self.fwd.d.next = self.op_qp.val() == self.qp.q.val();
                    self.st.d.next = self.take_next.val();
                } else {
                    self.st.d.next = EngineState::Idle;
                }
            }
        }

        // The loss pass's start (`AckUna`, `AckStallCheck` or `AckDone`).
        // A pass with una moving queues every waiting slot.
        if self.pass_start.val() {
            self.v1.d.next = false;
            self.v2.d.next = false;
            self.v3.d.next = false;
            self.tail_mode.d.next = false;
            self.full_pass.d.next = self.oow_release.val();
            if self.una_new.q.val() != self.qs.q.val().una {
                self.qs.d.next.oow_wait = false;
            }
            self.pass_seen.d.next = 0.into();
            self.st.d.next = EngineState::LossPipe;
        }
        // The acknowledgement pass's pick: the word's next newly
        // acknowledged slot is read, else the next word (unless the new una
        // is found and the SACK covers nothing beyond), else the new una's
        // slot (the first open PSN; none: una = next).
        self.pick_psn.next = self.wq.q.val() | bit_cast::<24, 6>(self.pick.index.val());
        if self.ack_pick.val() {
            if self.pick.any.val() {
                self.p.d.next = self.pick_psn.val();
                self.slot_ram.read_address.next =
                    (bit_cast::<16, 8>(self.qp.q.val()) << 8) | bit_cast::<16, 24>(self.pick_psn.val() & 255);
                self.pend.d.next = self.pend.q.val() & (self.pend.q.val() - 1);
                self.st.d.next = EngineState::AckEvRead;
            } else if self.more_words.q.val() & !(self.found_now.val() & self.cover_end.q.val()) {
                self.wq.d.next = self.wq.q.val() + 64;
                self.st.d.next = EngineState::AckWordRead;
            } else if self.found_now.val() {
                self.p.d.next = self.una_now.val();
                self.slot_ram.read_address.next =
                    (bit_cast::<16, 8>(self.qp.q.val()) << 8) | bit_cast::<16, 24>(self.una_now.val() & 255);
                self.st.d.next = EngineState::AckUna;
            } else {
                self.una_new.d.next = self.qs.q.val().next_psn;
                if self.needs_pass_end.val() {
                    self.st.d.next = EngineState::AckDone;
                } else {
                    self.st.d.next = EngineState::SackDone;
                }
            }
        }
        // `Load`'s next state, by the record's kind (the rules of `Load`'s
        // branch above). It is assigned after the state's case, so that the
        // SENT classification, `Load`'s latest signal (the QP word against
        // the record's PSN), meets one mux and not the case's too.
        self.load_next.next = EngineState::Idle;
        if self.is_timer.q.val() {
            // RTO due: walk from una (R1); else a tail check due.
            if !self.qs_rd.val().error & self.qs_rd.val().armed & !self.tdue_d.val().get_bit(35) {
                self.load_next.next = EngineState::RtoRead;
            } else if !self.qs_rd.val().error & self.tail_rd.val().armed & !self.tail_due_d.val().get_bit(31) {
                self.load_next.next = EngineState::TailCheck;
            }
        } else if self.kind.q.val() == self.k_init.val() {
            self.load_next.next = EngineState::InitClear;
        } else if (self.kind.q.val() == self.k_ev_changed.val()) | self.qs_rd.val().error {
            self.load_next.next = EngineState::Idle;
        } else if self.kind.q.val() == self.k_sent.val() {
            if self.is_new.val() | self.is_resend.val() {
                if self.qs_rd.val().armed {
                    self.load_next.next = EngineState::Store;
                } else {
                    self.load_next.next = EngineState::ArmBackoff;
                }
            }
        } else if self.kind.q.val() == self.k_sack.val() {
            self.load_next.next = EngineState::AckWordMask;
        } else if self.nack_unsent.val() {
            self.load_next.next = EngineState::Idle;
        } else if self.kind.q.val() == self.k_nack_remote.val() {
            if !self.cls_below_una.q.val() {
                self.load_next.next = EngineState::FatalNack;
            }
        } else if self.nack_stale.val() {
            self.load_next.next = EngineState::Idle;
        } else if (self.kind.q.val() == self.k_nack_trim.val()) | (self.kind.q.val() == self.k_nack_trim_skip.val()) {
            self.load_next.next = EngineState::TrimResend;
        } else {
            // Out of window: its bytes leave flight now; the slot waits for
            // una to advance or the RTO.
            self.load_next.next = EngineState::OowRelease;
        }
        if self.st.q.val() == EngineState::Load {
            self.st.d.next = self.load_next.val();
        }
        // The walk: the next slot is read, and the walk ends past the last.
        if self.walk_step.val() & self.go.val() {
            self.p.d.next = self.p_next.val();
            self.slot_ram.read_address.next =
                (bit_cast::<16, 8>(self.qp.q.val()) << 8) | bit_cast::<16, 24>(self.p_next.val() & 255);
            if self.p_next.val() == self.qs.q.val().next_psn {
                self.st.d.next = self.walk_end.val();
            } else {
                self.st.d.next = self.walk_next.val();
            }
        }
        self.slot_ram.write_data.next = self.slot_wr.val();
        self.ev_ram.write_data.next = self.ev_entry_wr.val();
        // The suspicion bits are read with the EV entry (after every
        // assignment of its address: the emitted Verilog reads it in order).
        self.sus_ram.read_address.next = self.ev_ram.read_address.val();
        self.dlv_ram.read_address.next = self.ev_ram.read_address.val();
        self.cng_ram.read_address.next = self.ev_ram.read_address.val();
        // The congestion bit: set by an MRC 1.0 trim (below), cleared by
        // every other write of the EV's suspicion bits.
        self.cng_ram.write_address.next = self.dlv_ram.write_address.val();
        self.cng_ram.write_data.next = self.cng_set.val();
        self.cng_ram.write_enable.next = self.dlv_ram.write_enable.val() | self.cng_set.val();
        self.rtx_valid.next = self.resend.rtx_valid.val();
        self.rtx_qp.next = self.resend.rtx.val().qp;
        self.rtx_psn.next = self.resend.rtx.val().psn;
        self.rtx_ev.next = self.resend.rtx.val().ev;
        self.rtx_len.next = self.resend.rtx.val().len;
        self.rtx_reason.next = self.resend.rtx.val().reason.into();
        self.mark_valid.next = self.resend.mark_valid.val();
        self.mark_qp.next = self.resend.mark.val().qp;
        self.mark_ev.next = self.resend.mark.val().ev;
        self.mark_reason.next = self.resend.mark.val().reason.into();
        self.ack_valid.next = self.o_ack_v.q.val();
        self.ack_qp.next = self.o_ack_qp.q.val();
        self.ack_una.next = self.o_ack_una.q.val();
        self.ack_bytes.next = self.o_ack_bytes.q.val();
        self.ack_fb.next = self.o_ack_fb.q.val();
        self.rto_valid.next = self.o_rto_v.q.val();
        self.rto_qp.next = self.o_rto_qp.q.val();
        self.err_valid.next = self.o_err_v.q.val();
        self.err_qp.next = self.o_err_qp.q.val();
        self.err_psn.next = self.o_err_psn.q.val();
        self.err_reason.next = self.o_err_reason.q.val().into();
        self.cnt_ack_unsent.next = self.o_cnt_unsent.q.val();
        self.cnt_drop.next = self.o_cnt_drop.q.val();
        self.cnt_drop_acked.next = self.o_cnt_drop_acked.q.val();
        self.cnt_stale_nack.next = self.o_cnt_stale.q.val();
        self.busy.next = (self.st.q.val() != EngineState::Idle)
            & (self.st.q.val() != EngineState::Classify)
            & (self.st.q.val() != EngineState::Load);
    }
}
