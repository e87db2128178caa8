//! The queue-pair API shared by the MRC model and the RC baseline.
//!
//! Quinn-proto style: a QP never reads a clock, opens a socket or spawns a
//! thread. The caller feeds it packets ([`QueuePair::handle_packet`]) and
//! expired timers ([`QueuePair::handle_timeout`]) with the current time, and
//! drains packets to send ([`QueuePair::poll_transmit`]), the next timer
//! deadline ([`QueuePair::poll_timeout`]) and events
//! ([`QueuePair::poll_event`]). Given the same inputs and seed it produces
//! the same outputs, bit for bit.

use bytes::Bytes;

use crate::model::cc::CcConfig;
use crate::model::ev::{EvConfigError, EvSet, EvSetConfig, EvStateChange};
use crate::model::memory::MemoryTable;
use crate::time::{Duration, Instant};
use crate::wire::mrc10::Profile;
use crate::wire::{NackKind, Packet, WireError};
use crate::Psn;

/// Largest message: RETH's DMA length is 32 bits; MRC limits it to 2 GiB.
pub const MAX_MESSAGE_LEN: u64 = 1 << 31;
/// MTU bounds (payload bytes per packet).
pub const MIN_MTU: u32 = 256;
pub const MAX_MTU: u32 = 9000;
pub const DEFAULT_MTU: u32 = 4096;
/// The MPR window is configured in units of this many PSNs.
pub const MPR_UNIT: u32 = 128;
/// Largest ACK timeout exponent: 1.024 us x 2^24.
pub const MAX_ACK_TIMEOUT_EXP: u8 = 24;
/// Most retries at the fixed interval.
pub const MAX_RETRY_LINEAR: u8 = 7;
/// Exponential retry count meaning "retry forever".
pub const RETRY_INFINITE: u8 = 25;

/// Which transport a QP runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Transport {
    /// Multipath Reliable Connection: spraying over an EV set, out-of-order
    /// acceptance inside the MPR window, SACKs, selective retransmission.
    Mrc,
    /// RoCEv2 RC baseline: one path, in-order only, NAK + go-back-N.
    Rc,
    /// MRC in the legacy profile the RTL still speaks
    /// ([`crate::model::legacy_mrc`]): the golden model of the RTL tests
    /// and the co-simulation only.
    MrcLegacy,
}

/// Verbs QP states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum QpState {
    Reset,
    Init,
    /// Ready to receive.
    Rtr,
    /// Ready to send.
    Rts,
    Error,
}

impl QpState {
    /// RTR and RTS: the QP accepts data packets and posted receives.
    pub fn can_receive(self) -> bool {
        matches!(self, QpState::Rtr | QpState::Rts)
    }
}

/// Fixed properties of a QP, given at creation.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QpConfig {
    pub transport: Transport,
    /// This QP's number (24 bits).
    pub qpn: u32,
    /// Payload bytes per packet, MIN_MTU..=MAX_MTU.
    pub mtu: u32,
    /// Seed of every random choice the QP makes.
    pub seed: u64,
    /// Responder: send a SACK after this many data packets...
    pub ack_every: u16,
    /// ...or this long after the first unacknowledged one, whichever first.
    pub ack_delay: Duration,
    /// MRC 1.0 wire choices: DSCP numbers of the traffic classes and the EV
    /// mode (MRC only; frames only, the packets carry classes).
    pub profile: Profile,
    /// Packets sent on one EV after a lost one before loss is inferred
    /// (reorder allowance; MRC only).
    pub reorder_allowance: u32,
    /// Capacity of the event queue; overflow is counted, never unbounded.
    pub event_queue_len: usize,
    /// What the peer supports (MRC 1.0's per-QP "the peer lacks trim NACK
    /// / dynamic MPR / service time"); MRC only.
    #[serde(default)]
    pub peer_caps: Capabilities,
    /// The responder's reverse EV set for SACKs and NACKs (MRC only; off
    /// by default: each acknowledgement echoes the EV of the packet it
    /// answers). See [`crate::model::reverse_ev`].
    #[serde(default)]
    pub reverse_evs: crate::model::reverse_ev::ReverseEvConfig,
}

/// MRC 1.0 capabilities (`../shared/docs/mrc-1.0.md`: TRIM_NACK,
/// DYNAMIC_MPR, SVC_TIME; names C, what each changes is ours):
///
/// * `trim_nack`: NACKs trimmed packets. A peer without it would drop a
///   trimmed packet silently, so data towards it goes as NO_TRIM.
/// * `dynamic_mpr`: advertises its receive window in SACKs. Without it the
///   SETH MPR is ignored and the send window is the configured one.
/// * `svc_time`: takes its SACKs' echoed timestamps as advanced by the
///   receiver's service time. Towards a peer without it the echo goes back
///   untouched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Capabilities {
    pub trim_nack: bool,
    pub dynamic_mpr: bool,
    pub svc_time: bool,
}

impl Capabilities {
    /// Every capability.
    pub const ALL: Capabilities = Capabilities {
        trim_nack: true,
        dynamic_mpr: true,
        svc_time: true,
    };
}

impl Default for Capabilities {
    fn default() -> Capabilities {
        Capabilities::ALL
    }
}

/// The golden model's device capabilities: all three.
pub const MODEL_CAPABILITIES: Capabilities = Capabilities::ALL;

impl QpConfig {
    /// Defaults for `transport` with QP number `qpn`.
    pub fn new(transport: Transport, qpn: u32) -> QpConfig {
        QpConfig {
            transport,
            qpn: qpn & 0xFF_FFFF,
            mtu: DEFAULT_MTU,
            seed: 0,
            ack_every: 4,
            ack_delay: Duration::from_us(2),
            profile: Profile::DEFAULT,
            reorder_allowance: 3,
            event_queue_len: 1 << 16,
            peer_caps: Capabilities::ALL,
            reverse_evs: crate::model::reverse_ev::ReverseEvConfig::OFF,
        }
    }
}

/// Attributes set on RST -> INIT.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InitAttr {
    pub pkey: u16,
}

impl Default for InitAttr {
    fn default() -> Self {
        InitAttr { pkey: 0xFFFF }
    }
}

/// Attributes set on INIT -> RTR (receive side).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RtrAttr {
    /// The peer's QP number.
    pub dest_qp: u32,
    /// First PSN expected from the peer.
    pub rq_psn: Psn,
    /// Receive window in units of 128 PSNs (1..=255). RC ignores it.
    pub mpr_units: u8,
    /// WRITE-with-immediate messages that may be outstanding towards this
    /// QP (its receive queue depth bound).
    pub max_wimm: u16,
}

/// Attributes set on RTR -> RTS (send side).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RtsAttr {
    /// First PSN this QP sends.
    pub sq_psn: Psn,
    /// ACK timeout exponent t: RTO = 1.024 us x 2^t, t <= 24.
    pub ack_timeout_exp: u8,
    /// Retries at the fixed RTO, <= 7.
    pub retry_linear: u8,
    /// Further retries with exponential backoff, <= 25 (25 = infinite).
    pub retry_exp: u8,
    /// The peer's receive window in units of 128 PSNs (the send window).
    pub send_mpr_units: u8,
    /// WRITE-with-immediate messages this QP may have outstanding.
    pub max_wimm: u16,
    /// The EV set (MRC: all of it; RC: only the first EV is used).
    pub evs: EvSetConfig,
    pub cc: CcConfig,
}

/// A state transition with its attributes.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum QpTransition {
    Init(InitAttr),
    Rtr(RtrAttr),
    Rts(RtsAttr),
    /// Any state -> ERR: outstanding work completes with `Flushed`.
    Error,
    /// Any state -> RST: all state forgotten (memory regions stay).
    Reset,
}

/// A transition refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModifyError {
    #[error("cannot go from {from:?} with {to}")]
    BadTransition { from: QpState, to: &'static str },
    #[error("invalid attribute {name}: {why}")]
    BadAttribute { name: &'static str, why: String },
    #[error("invalid EV set: {0}")]
    EvSet(#[from] EvConfigError),
}

/// An RDMA WRITE (with immediate if `imm` is set).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteRequest {
    /// Returned in the send completion.
    pub wr_id: u64,
    /// The bytes to write (`Bytes`: slicing per packet is zero-copy).
    pub data: Bytes,
    pub remote_va: u64,
    pub rkey: u32,
    pub imm: Option<u32>,
}

/// A post refused; nothing was queued.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PostError {
    #[error("QP is in {0:?}, posting needs RTS (sends) or RTR/RTS (receives)")]
    BadState(QpState),
    #[error("message of {0} bytes exceeds the 2 GiB limit")]
    TooLong(u64),
    #[error("send queue full ({0} work requests)")]
    SendQueueFull(usize),
    #[error("receive queue full ({0} entries)")]
    RecvQueueFull(usize),
}

/// How full a work queue is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueFill {
    /// Entries held.
    pub len: usize,
    /// The most it holds.
    pub capacity: usize,
}

/// The checks both transports make before queueing a WRITE of `msg_len`
/// bytes: the QP is in RTS, the message is at most [`MAX_MESSAGE_LEN`] and
/// the send queue has room. `send_queue` is asked only in RTS, where the
/// send queue exists.
pub fn check_post_write(state: QpState, msg_len: u64, send_queue: impl FnOnce() -> QueueFill) -> Result<(), PostError> {
    if state != QpState::Rts {
        return Err(PostError::BadState(state));
    }
    if msg_len > MAX_MESSAGE_LEN {
        return Err(PostError::TooLong(msg_len));
    }
    let sq = send_queue();
    if sq.len >= sq.capacity {
        return Err(PostError::SendQueueFull(sq.capacity));
    }
    Ok(())
}

/// The checks both transports make before queueing a receive: the QP is in
/// RTR or RTS and the receive queue has room. `recv_queue` is asked only in
/// those states, where the receive queue exists.
pub fn check_post_recv(state: QpState, recv_queue: impl FnOnce() -> QueueFill) -> Result<(), PostError> {
    if !state.can_receive() {
        return Err(PostError::BadState(state));
    }
    let rq = recv_queue();
    if rq.len >= rq.capacity {
        return Err(PostError::RecvQueueFull(rq.capacity));
    }
    Ok(())
}

/// Why a received packet was dropped. Every variant also increments a
/// counter in [`Counters`]; a dropped packet changes no other state.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RxError {
    #[error("packet for QP {got:#x}, this is QP {expected:#x}")]
    WrongQp { expected: u32, got: u32 },
    #[error("QP is in {0:?}, cannot receive")]
    BadState(QpState),
    #[error("opcode {0:?} not valid here")]
    UnexpectedOpcode(crate::wire::Opcode),
    #[error("MRC 1.0 opcode {0:?} not valid here")]
    UnexpectedMrc10Opcode(crate::wire::mrc10::Opcode),
    /// A packet of the other protocol (an RC packet to an MRC 1.0 QP, or
    /// the reverse).
    #[error("opcode {opcode:#04x} is not of this QP's protocol ({expected})")]
    WrongProtocol { opcode: u8, expected: &'static str },
    #[error("required header missing: {0}")]
    MissingHeader(&'static str),
    #[error("PSN {psn} outside the receive window starting at {expected}")]
    OutOfWindow { psn: Psn, expected: Psn },
    #[error("remote access error: rkey {rkey:#x} va {va:#x} len {len}")]
    RemoteAccess { rkey: u32, va: u64, len: u32 },
    #[error("acknowledgement for unsent PSN {0}")]
    AckForUnsent(Psn),
    #[error("malformed packet: {0}")]
    Malformed(&'static str),
    /// The frame did not parse (truncated, bad ICRC, unknown opcode, ...).
    #[error("wire: {0}")]
    Wire(#[from] WireError),
}

/// Status of a work completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum WcStatus {
    Success,
    /// Retries exhausted; the QP is in ERR.
    RetryExceeded,
    /// The responder NACKed with a remote access error; the QP is in ERR.
    RemoteAccessError,
    /// The QP went to ERR before this request completed.
    Flushed,
}

/// A work completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Completion {
    pub wr_id: u64,
    pub status: WcStatus,
    /// Message length in bytes.
    pub len: u32,
    /// The immediate value (receive completions of WRITE-with-immediate).
    pub imm: Option<u32>,
}

/// What a QP reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Event {
    /// A posted WRITE completed (strictly in posting order).
    SendCompleted(Completion),
    /// A WRITE-with-immediate arrived in full and consumed a posted receive
    /// (strictly in PSN order).
    RecvCompleted(Completion),
    /// An EV changed state.
    EvStateChanged(EvStateChange),
    /// A probe (control-plane or recovery) returned: RTT in ns.
    ProbeRtt { ev_index: u16, rtt_ns: u64 },
    /// The QP changed state (ERR on retry exhaustion, for example).
    StateChanged { from: QpState, to: QpState },
}

/// Counters of one QP. Never reset except by `QpTransition::Reset`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counters {
    // --- requester ---
    pub tx_data_packets: u64,
    pub tx_data_bytes: u64,
    pub retransmitted_packets: u64,
    /// Retransmissions because of inferred loss (per-EV SACK inference).
    pub retx_loss_inferred: u64,
    /// Retransmissions because of a trim NACK.
    pub retx_trim: u64,
    /// Retransmissions because of an RTO.
    pub retx_timeout: u64,
    /// Packets resent by go-back-N (RC).
    pub retx_go_back_n: u64,
    pub rto_fired: u64,
    /// Packets timed out after a trim NACK of the same QP (since they were
    /// sent): resent, without blaming their EV (MRC 1.0 marks an EV on a
    /// timeout without a trim).
    pub rto_trim_excused: u64,
    pub rx_acks: u64,
    pub rx_nacks: u64,
    /// NACKs of packets trimmed at the last hop (MRC 1.0
    /// TRIMMED_LASTHOP): resent without blaming their EV.
    pub rx_nacks_last_hop: u64,
    pub rx_cnps: u64,
    pub tx_probes: u64,
    pub rx_probe_responses: u64,
    pub messages_completed: u64,
    // --- responder ---
    pub rx_data_packets: u64,
    pub rx_data_bytes: u64,
    pub rx_duplicates: u64,
    /// Reverse EV sets emptied because a probe or a duplicate said
    /// acknowledgements were lost ([`crate::model::reverse_ev`]).
    pub reverse_evictions: u64,
    pub rx_out_of_order: u64,
    pub rx_ecn_ce: u64,
    pub rx_trimmed: u64,
    pub tx_acks: u64,
    pub tx_nacks: u64,
    pub tx_cnps: u64,
    pub recv_completions: u64,
    // --- drops of bad input, one per RxError kind ---
    pub drop_wrong_qp: u64,
    pub drop_bad_state: u64,
    pub drop_unexpected_opcode: u64,
    pub drop_missing_header: u64,
    pub drop_out_of_window: u64,
    pub drop_remote_access: u64,
    pub drop_ack_for_unsent: u64,
    pub drop_malformed: u64,
    pub drop_wire: u64,
    /// Events lost because the event queue was full.
    pub events_dropped: u64,
}

impl Counters {
    /// Count one dropped packet under its error kind.
    pub fn count_drop(&mut self, e: &RxError) {
        let c = match e {
            RxError::WrongQp { .. } => &mut self.drop_wrong_qp,
            RxError::BadState(_) => &mut self.drop_bad_state,
            RxError::UnexpectedOpcode(_) | RxError::UnexpectedMrc10Opcode(_) | RxError::WrongProtocol { .. } => {
                &mut self.drop_unexpected_opcode
            }
            RxError::MissingHeader(_) => &mut self.drop_missing_header,
            RxError::OutOfWindow { .. } => &mut self.drop_out_of_window,
            RxError::RemoteAccess { .. } => &mut self.drop_remote_access,
            RxError::AckForUnsent(_) => &mut self.drop_ack_for_unsent,
            RxError::Malformed(_) => &mut self.drop_malformed,
            RxError::Wire(_) => &mut self.drop_wire,
        };
        *c += 1;
    }

    /// Total dropped packets.
    pub fn drops(&self) -> u64 {
        self.drop_wrong_qp
            + self.drop_bad_state
            + self.drop_unexpected_opcode
            + self.drop_missing_header
            + self.drop_out_of_window
            + self.drop_remote_access
            + self.drop_ack_for_unsent
            + self.drop_malformed
            + self.drop_wire
    }
}

/// The operations every queue pair supports, MRC and RC alike.
pub trait QueuePair {
    /// The fixed configuration.
    fn config(&self) -> &QpConfig;
    /// Current state.
    fn state(&self) -> QpState;
    /// Move through the verbs life cycle.
    fn modify(&mut self, now: Instant, transition: QpTransition) -> Result<(), ModifyError>;
    /// The responder-side memory (register regions here; read placed data).
    fn memory(&self) -> &MemoryTable;
    fn memory_mut(&mut self) -> &mut MemoryTable;
    /// Queue an RDMA WRITE / WRITE-with-immediate.
    fn post_write(&mut self, now: Instant, wr: WriteRequest) -> Result<(), PostError>;
    /// Post a receive for an incoming WRITE-with-immediate.
    fn post_recv(&mut self, wr_id: u64) -> Result<(), PostError>;
    /// Feed a received packet. `Err` means it was dropped (and counted).
    fn handle_packet(&mut self, now: Instant, pkt: Packet) -> Result<(), RxError>;
    /// Count a packet dropped on its way in (a frame that did not parse).
    fn count_drop(&mut self, e: &RxError);
    /// Feed a received Ethernet frame: parse it (lengths, UDP port, opcode,
    /// ICRC, ...) and hand the packet to [`QueuePair::handle_packet`]. A frame
    /// that does not parse is dropped, counted in `drop_wire`, and changes
    /// nothing else.
    fn handle_frame(&mut self, now: Instant, frame: &[u8]) -> Result<(), RxError> {
        match Packet::parse_frame(frame, &self.config().profile) {
            Ok((pkt, _encap)) => self.handle_packet(now, pkt),
            Err(e) => {
                let e = RxError::Wire(e);
                self.count_drop(&e);
                Err(e)
            }
        }
    }
    /// Fire the timers due at `now` (call when `poll_timeout` has passed).
    fn handle_timeout(&mut self, now: Instant);
    /// The next packet to send at `now`, if any.
    fn poll_transmit(&mut self, now: Instant) -> Option<Packet>;
    /// The earliest time `handle_timeout` (or a paced `poll_transmit`) is due.
    fn poll_timeout(&self) -> Option<Instant>;
    /// The next event.
    fn poll_event(&mut self) -> Option<Event>;
    /// Counters.
    fn counters(&self) -> &Counters;
    /// The EV set (after RTS).
    fn ev_set(&self) -> Option<&EvSet>;
    /// Control plane: deny EVs matching `value` under `mask`; returns how many.
    fn deny_evs(&mut self, now: Instant, mask: u32, value: u32) -> usize;
    /// Control plane: lift a denial.
    fn allow_evs(&mut self, now: Instant, mask: u32, value: u32) -> usize;
    /// The NIC's port `port` went down: deny every EV leaving on it (MRC
    /// only; [`crate::model::ev::EvSet::deny_port`]). Returns how many.
    fn deny_port_evs(&mut self, _now: Instant, _port: u8) -> usize {
        0
    }
    /// Port `port` is up again: lift the denials of its EVs.
    fn allow_port_evs(&mut self, _now: Instant, _port: u8) -> usize {
        0
    }
    /// Control plane: send an out-of-band probe on EV `ev_index`; its RTT is
    /// reported as [`Event::ProbeRtt`].
    fn probe_ev(&mut self, now: Instant, ev_index: u16) -> bool;
    /// The receiving host's back-pressure (MRC 1.0's receiver cwnd
    /// penalty, [`crate::wire::mrc10::choices::cwnd_penalty_share`]): the
    /// penalty this QP's SACKs carry from now on, saturating at 127; going
    /// back to 0 sets the restore bit of the next SACK. MRC only; other
    /// transports ignore it.
    fn set_receive_penalty(&mut self, _penalty: u8) {}
}

/// NACK kind -> the error a requester's completions carry. Shared so both
/// transports agree.
pub fn nack_status(kind: NackKind) -> Option<WcStatus> {
    match kind {
        NackKind::RemoteAccess => Some(WcStatus::RemoteAccessError),
        NackKind::Trimmed | NackKind::OutOfWindow => None,
    }
}

/// `1.024 us x 2^t`.
pub fn ack_timeout(exp: u8) -> Duration {
    Duration::from_ns(1024).saturating_mul(1u64 << exp.min(MAX_ACK_TIMEOUT_EXP))
}

/// Check `from -> to` against the verbs life cycle.
pub fn check_transition(from: QpState, t: &QpTransition) -> Result<QpState, ModifyError> {
    let (ok, to, name) = match t {
        QpTransition::Init(_) => (from == QpState::Reset, QpState::Init, "INIT"),
        QpTransition::Rtr(_) => (from == QpState::Init, QpState::Rtr, "RTR"),
        QpTransition::Rts(_) => (from == QpState::Rtr, QpState::Rts, "RTS"),
        QpTransition::Error => (true, QpState::Error, "ERR"),
        QpTransition::Reset => (true, QpState::Reset, "RST"),
    };
    if ok {
        Ok(to)
    } else {
        Err(ModifyError::BadTransition { from, to: name })
    }
}

/// Validate the fixed configuration.
pub fn validate_config(cfg: &QpConfig) -> Result<(), ModifyError> {
    let bad = |name, why: String| Err(ModifyError::BadAttribute { name, why });
    if cfg.qpn > Psn::MASK {
        return bad("qpn", format!("{:#x} is wider than the 24-bit BTH DestQP", cfg.qpn));
    }
    if !(MIN_MTU..=MAX_MTU).contains(&cfg.mtu) {
        return bad("mtu", format!("{} not in {MIN_MTU}..={MAX_MTU}", cfg.mtu));
    }
    if let Err(e) = cfg.profile.check() {
        return bad("profile", e.to_string());
    }
    if cfg.ack_every == 0 {
        return bad("ack_every", "must be at least 1".into());
    }
    if let Err(why) = cfg.reverse_evs.check() {
        return bad("reverse_evs", why);
    }
    Ok(())
}

/// Validate RTR attributes.
pub fn validate_rtr(a: &RtrAttr) -> Result<(), ModifyError> {
    if a.mpr_units == 0 {
        return Err(ModifyError::BadAttribute {
            name: "mpr_units",
            why: "must be 1..=255".into(),
        });
    }
    Ok(())
}

/// Validate RTS attributes.
pub fn validate_rts(a: &RtsAttr) -> Result<(), ModifyError> {
    let bad = |name, why: String| Err(ModifyError::BadAttribute { name, why });
    if a.ack_timeout_exp > MAX_ACK_TIMEOUT_EXP {
        return bad(
            "ack_timeout_exp",
            format!("{} > {MAX_ACK_TIMEOUT_EXP}", a.ack_timeout_exp),
        );
    }
    if a.retry_linear > MAX_RETRY_LINEAR {
        return bad("retry_linear", format!("{} > {MAX_RETRY_LINEAR}", a.retry_linear));
    }
    if a.retry_exp > RETRY_INFINITE {
        return bad("retry_exp", format!("{} > {RETRY_INFINITE}", a.retry_exp));
    }
    if a.send_mpr_units == 0 {
        return bad("send_mpr_units", "must be 1..=255".into());
    }
    if let Err(why) = a.cc.validate() {
        return bad("cc", why);
    }
    EvSet::new(a.evs.clone())?;
    Ok(())
}
