//! The RoCEv2 RC baseline: one path, in-order delivery, NAK + go-back-N.
//!
//! This is what MRC is compared against in simulation, so it models what a
//! RoCEv2 RC NIC does with RDMA WRITE / WRITE-with-immediate, behind the same
//! [`QueuePair`] API as the MRC QP:
//!
//! * every packet of a QP travels on one path: EV index 0 of the EV set
//!   (one UDP source port = one ECMP path); no MRC extension header;
//! * the responder accepts only the expected PSN. An earlier PSN is a
//!   duplicate (re-ACKed, not placed again); a later one is dropped and
//!   answered by ONE NAK (PSN sequence error) per gap;
//! * the requester, on that NAK or on a retransmission timeout, goes back N:
//!   it resends everything from the first unacknowledged PSN;
//! * DCQCN-style congestion control: the responder sends CNPs on CE-marked
//!   packets (at most one per [`CNP_INTERVAL`]), the requester's
//!   [`CongestionControl`] paces.
//!
//! Internally the requester numbers packets with a 64-bit absolute sequence
//! (0 = the first PSN sent after RTS) so nothing compares wrapped values; the
//! 24-bit wire PSN is `sq_psn + abs` and incoming PSNs are mapped back with
//! [`Psn::distance`] (serial arithmetic) relative to the oldest unacked one.
//! `docs/model-rc.md` describes the behaviour and its simplifications.

use std::collections::VecDeque;

use bytes::Bytes;

use crate::model::api::*;
use crate::model::cc::{self, AckSample, CongestionControl};
use crate::model::ev::EvSet;
use crate::model::memory::MemoryTable;
use crate::model::timer::{self, Timer, Timers};
use crate::time::{Duration, Instant};
use crate::wire::{AethRepr, BthRepr, Opcode, Packet, RethRepr, RocePacket, Syndrome};
use crate::Psn;

/// Minimum spacing of CNPs sent by one QP (DCQCN's CNP interval; NICs
/// default to 50 us).
pub const CNP_INTERVAL: Duration = Duration::from_us(50);
/// Payload of a CNP: 16 reserved zero bytes.
pub const CNP_PAYLOAD_LEN: usize = 16;
/// Besides the last packet of every message, the requester sets AckReq on
/// every packet whose sequence number (counted from RTS) is a multiple of
/// this minus one, so long messages are acknowledged while in flight even if
/// the responder coalesces.
pub const ACK_REQ_EVERY: u64 = 64;
/// Send queue capacity (work requests not yet completed).
pub const SEND_QUEUE_LEN: usize = 1 << 14;
/// WRITE-with-immediate messages the responder holds, fully received,
/// while no receive is posted. Beyond this, a further last packet of a
/// WRITE-IMM is dropped unacknowledged (the requester retries): the
/// stand-in for RNR, which neither MRC nor this baseline has.
pub const MAX_HELD_IMM: usize = 1 << 16;
/// AETH credit count meaning "invalid / no end-to-end credits".
const CREDITS_INVALID: u8 = 0x1F;
/// Largest backoff shift of the exponential retry phase.
const MAX_BACKOFF_SHIFT: u64 = 24;

/// One posted WRITE.
#[derive(Clone, Debug)]
struct SendWqe {
    wr_id: u64,
    data: Bytes,
    remote_va: u64,
    rkey: u32,
    imm: Option<u32>,
    /// Absolute sequence number of its first packet.
    first: u64,
    /// Packets (>= 1; a zero-length write is one empty WRITE ONLY).
    npkts: u64,
    /// Bytes of all earlier messages (absolute byte position of byte 0).
    byte_start: u64,
}

impl SendWqe {
    fn end(&self) -> u64 {
        self.first + self.npkts
    }
    fn len(&self) -> u64 {
        self.data.len() as u64
    }
}

/// Why the requester rewound (what its retransmissions are counted as).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RetxReason {
    Nak,
    Timeout,
}

/// Send-side state, created on RTR -> RTS.
#[derive(Debug)]
struct Requester {
    sq_psn: Psn,
    rto: Duration,
    retry_linear: u32,
    /// None = infinite.
    retry_limit: Option<u32>,
    window_psns: u64,
    max_wimm: u32,
    evs: EvSet,
    cc: Box<dyn CongestionControl>,
    /// Posted, not yet completed, in posting order.
    sq: VecDeque<SendWqe>,
    /// Sequence number after the last posted packet.
    sq_end: u64,
    sq_end_bytes: u64,
    /// Oldest unacknowledged packet.
    una: u64,
    /// Next packet to (re)send.
    nxt: u64,
    /// One past the highest packet ever sent.
    max: u64,
    /// Last (re)send time of every packet in `una..max`.
    sent_at: VecDeque<Instant>,
    /// RTOs since the last acknowledged progress.
    retries: u32,
    retx_reason: RetxReason,
    /// The PSN the last go-back-N restarted from (repeated NAKs for it are
    /// ignored until progress).
    rewound_at: Option<u64>,
    /// WRITE-IMMs whose first packet went out and that are not completed.
    wimm_outstanding: u32,
}

impl Requester {
    fn psn(&self, abs: u64) -> Psn {
        self.sq_psn.add(abs as u32)
    }

    /// Absolute sequence number of a PSN from the peer, relative to `una`.
    fn abs_of(&self, psn: Psn) -> Option<u64> {
        let d = psn.distance(self.psn(self.una)) as i64;
        let a = self.una as i64 + d;
        (a >= 0).then_some(a as u64)
    }

    /// Index in `sq` of the message holding packet `abs` (< sq_end).
    fn wqe_index(&self, abs: u64) -> usize {
        self.sq.partition_point(|w| w.end() <= abs)
    }

    /// Absolute byte position of the first payload byte of packet `abs`.
    fn byte_pos(&self, abs: u64, mtu: u64) -> u64 {
        if abs >= self.sq_end {
            return self.sq_end_bytes;
        }
        let w = &self.sq[self.wqe_index(abs)];
        w.byte_start + ((abs - w.first) * mtu).min(w.len())
    }

    fn in_flight(&self, mtu: u64) -> u64 {
        self.byte_pos(self.nxt, mtu) - self.byte_pos(self.una, mtu)
    }

    /// RTO interval after `retries` timeouts without progress.
    fn rto_interval(&self) -> Duration {
        if self.retries <= self.retry_linear {
            self.rto
        } else {
            let shift = ((self.retries - self.retry_linear) as u64).min(MAX_BACKOFF_SHIFT);
            let d = self.rto.saturating_mul(1 << shift);
            d.min(ack_timeout(MAX_ACK_TIMEOUT_EXP))
        }
    }

    fn rto_deadline(&self) -> Option<Instant> {
        self.sent_at.front().map(|t| *t + self.rto_interval())
    }

    fn go_back(&mut self, to: u64, why: RetxReason) {
        self.nxt = to;
        self.retx_reason = why;
        self.rewound_at = Some(to);
    }
}

/// The message being received (after its FIRST packet).
#[derive(Clone, Copy, Debug)]
struct RxMsg {
    va: u64,
    rkey: u32,
    dma_len: u32,
    /// Bytes placed so far.
    offset: u64,
}

/// Receive-side state, created on INIT -> RTR.
#[derive(Debug)]
struct Responder {
    dest_qp: u32,
    /// Expected PSN.
    epsn: Psn,
    recv_cap: usize,
    /// Posted receives (wr_ids) in order.
    rq: VecDeque<u64>,
    /// Completed WRITE-IMMs waiting for a receive: (len, imm).
    held: VecDeque<(u32, u32)>,
    cur: Option<RxMsg>,
    /// Messages completed (AETH MSN, 24 bits).
    msn: u32,
    /// A NAK for the current gap was sent; no more until `epsn` arrives.
    nak_sent: bool,
    /// Pending NAK: (code, PSN).
    nak: Option<(u8, Psn)>,
    /// An ACK is due now.
    ack_now: bool,
    /// Accepted packets not yet acknowledged.
    unacked: u32,
    /// Coalescing deadline of the pending ACK.
    ack_deadline: Option<Instant>,
    cnp_pending: bool,
    last_cnp: Option<Instant>,
    /// EV of the last accepted packet (used for replies before RTS).
    last_ev: u32,
}

/// A RoCEv2 RC queue pair (requester and responder).
#[derive(Debug)]
pub struct RcQp {
    cfg: QpConfig,
    state: QpState,
    pkey: u16,
    memory: MemoryTable,
    counters: Counters,
    events: VecDeque<Event>,
    rx: Option<Box<Responder>>,
    tx: Option<Box<Requester>>,
    /// Latest `now` seen (for `poll_timeout`'s pacing deadline).
    now: Instant,
    /// WRITE-IMM last packets dropped because [`MAX_HELD_IMM`] were held.
    held_dropped: u64,
}

impl RcQp {
    /// A QP in RST.
    pub fn new(cfg: QpConfig) -> Result<RcQp, ModifyError> {
        validate_config(&cfg)?;
        Ok(RcQp {
            cfg,
            state: QpState::Reset,
            pkey: 0xFFFF,
            memory: MemoryTable::default(),
            counters: Counters::default(),
            events: VecDeque::new(),
            rx: None,
            tx: None,
            now: Instant::ZERO,
            held_dropped: 0,
        })
    }

    /// Responder: the next PSN expected from the peer (after RTR).
    pub fn expected_psn(&self) -> Option<Psn> {
        self.rx.as_ref().map(|r| r.epsn)
    }

    /// Requester: the next new PSN to be sent and the oldest unacknowledged
    /// one (after RTS).
    pub fn send_psns(&self) -> Option<(Psn, Psn)> {
        self.tx.as_ref().map(|t| (t.psn(t.max), t.psn(t.una)))
    }

    /// Responder: WRITE-IMMs received in full but waiting for a posted
    /// receive (no RNR; see the module docs).
    pub fn held_imm(&self) -> usize {
        self.rx.as_ref().map_or(0, |r| r.held.len())
    }

    /// Responder: last packets of WRITE-IMMs dropped because
    /// [`MAX_HELD_IMM`] were already held.
    pub fn held_imm_dropped(&self) -> u64 {
        self.held_dropped
    }

    /// Requester: replace the congestion controller built from
    /// `RtsAttr::cc` (after RTS; returns false before). For experiments and
    /// tests with controllers `cc::build` does not know.
    pub fn set_congestion_control(&mut self, cc: Box<dyn CongestionControl>) -> bool {
        match self.tx.as_mut() {
            Some(tx) => {
                tx.cc = cc;
                true
            }
            None => false,
        }
    }

    /// Requester: RTOs since the last acknowledged progress.
    pub fn retries(&self) -> u32 {
        self.tx.as_ref().map_or(0, |t| t.retries)
    }

    fn mtu(&self) -> u64 {
        self.cfg.mtu as u64
    }

    fn push_event(&mut self, e: Event) {
        if self.events.len() >= self.cfg.event_queue_len {
            self.counters.events_dropped += 1;
        } else {
            self.events.push_back(e);
        }
    }

    fn tick(&mut self, now: Instant) {
        self.now = self.now.max(now);
    }

    /// Move to ERR: flush outstanding sends (the first with `first_status`
    /// if given) and posted receives, in order.
    fn enter_error(&mut self, first_status: Option<WcStatus>, announce: bool) {
        let from = self.state;
        self.state = QpState::Error;
        let mut status = first_status;
        if let Some(tx) = self.tx.as_mut() {
            let sq: Vec<SendWqe> = tx.sq.drain(..).collect();
            tx.wimm_outstanding = 0;
            tx.sent_at.clear();
            tx.una = tx.sq_end;
            tx.nxt = tx.sq_end;
            tx.max = tx.sq_end;
            for w in sq {
                let st = status.take().unwrap_or(WcStatus::Flushed);
                self.push_event(Event::SendCompleted(Completion {
                    wr_id: w.wr_id,
                    status: st,
                    len: w.data.len() as u32,
                    imm: None,
                }));
            }
        }
        if let Some(rx) = self.rx.as_mut() {
            let rq: Vec<u64> = rx.rq.drain(..).collect();
            rx.held.clear();
            rx.nak = None;
            rx.ack_now = false;
            rx.ack_deadline = None;
            rx.cnp_pending = false;
            for wr_id in rq {
                self.push_event(Event::RecvCompleted(Completion {
                    wr_id,
                    status: WcStatus::Flushed,
                    len: 0,
                    imm: None,
                }));
            }
        }
        if announce && from != QpState::Error {
            self.push_event(Event::StateChanged {
                from,
                to: QpState::Error,
            });
        }
    }

    fn reply_ev(&self) -> u32 {
        match (&self.tx, &self.rx) {
            (Some(t), _) => t.evs.value(0),
            (None, Some(r)) => r.last_ev,
            _ => 0,
        }
    }

    fn bth(&self, opcode: Opcode, dest_qp: u32, psn: Psn, ack_req: bool, pad: u8) -> BthRepr {
        BthRepr {
            opcode,
            solicited: false,
            mig_req: true,
            pad,
            pkey: self.pkey,
            fecn: false,
            becn: false,
            mrc_ext: false,
            dest_qp,
            ack_req,
            psn,
        }
    }

    fn control_packet(&self, opcode: Opcode, psn: Psn, aeth: Option<AethRepr>, payload: Bytes) -> RocePacket {
        let dest = self.rx.as_ref().map_or(0, |r| r.dest_qp);
        RocePacket {
            ev: self.reply_ev(),
            ecn_ce: false,
            trimmed: false,
            bth: self.bth(opcode, dest, psn, false, 0),
            reth: None,
            imm: None,
            aeth,
            ext: None,
            payload,
        }
    }

    // ----------------------------------------------------------------
    // Responder
    // ----------------------------------------------------------------

    fn on_data(&mut self, now: Instant, pkt: RocePacket) -> Result<(), RxError> {
        let op = pkt.bth.opcode;
        if pkt.trimmed {
            // RC has no trim support: the packet is lost; the next one opens
            // a gap (NAK) or the requester's RTO recovers.
            self.counters.rx_trimmed += 1;
            return Ok(());
        }
        if pkt.payload.len() as u64 > self.mtu() {
            return Err(RxError::Malformed("payload larger than the MTU"));
        }
        if op.has_reth() && pkt.reth.is_none() {
            return Err(RxError::MissingHeader("RETH"));
        }
        if op.has_imm() && pkt.imm.is_none() {
            return Err(RxError::MissingHeader("ImmDt"));
        }
        let ack_every = self.cfg.ack_every as u32;
        let ack_delay = self.cfg.ack_delay;
        let rx = self.rx.as_mut().expect("responder exists in RTR/RTS");
        let d = pkt.bth.psn.distance(rx.epsn);
        if d < 0 {
            // Duplicate: already placed. Re-ACK cumulatively, do not place.
            self.counters.rx_duplicates += 1;
            rx.ack_now = true;
            self.note_ce(now, pkt.ecn_ce);
            return Ok(());
        }
        if d > 0 {
            // A gap: drop; NAK it once until the expected PSN arrives.
            self.counters.rx_out_of_order += 1;
            if !rx.nak_sent {
                rx.nak_sent = true;
                rx.nak = Some((Syndrome::NAK_PSN_SEQ_ERROR, rx.epsn));
            }
            self.note_ce(now, pkt.ecn_ce);
            return Ok(());
        }
        // In order. Opcode sequence.
        let in_msg = rx.cur.is_some();
        if op.is_first() == in_msg {
            return Err(RxError::UnexpectedOpcode(op));
        }
        let len = pkt.payload.len() as u64;
        let mut msg = match (op.is_first(), pkt.reth) {
            (true, Some(reth)) => {
                let RethRepr { va, rkey, dma_len } = reth;
                let ok = dma_len == 0 || self.memory.check(rkey, va, dma_len as u64).is_ok();
                if !ok {
                    self.access_nak(pkt.bth.psn);
                    return Err(RxError::RemoteAccess { rkey, va, len: dma_len });
                }
                RxMsg {
                    va,
                    rkey,
                    dma_len,
                    offset: 0,
                }
            }
            _ => rx.cur.expect("in a message"),
        };
        let is_last = op.is_last();
        if is_last && op.has_imm() && rx.held.len() >= MAX_HELD_IMM && rx.rq.is_empty() {
            // Nowhere to complete it: drop unacknowledged (RNR stand-in).
            self.held_dropped += 1;
            self.note_ce(now, pkt.ecn_ce);
            return Ok(());
        }
        let end = msg.offset + len;
        let full = !is_last && len != self.mtu();
        if end > msg.dma_len as u64 || (is_last && end != msg.dma_len as u64) || full {
            return Err(RxError::Malformed("packet length does not match the RETH DMA length"));
        }
        if len > 0 {
            let va = msg.va.wrapping_add(msg.offset);
            if self.memory.write(msg.rkey, va, &pkt.payload).is_err() {
                self.access_nak(pkt.bth.psn);
                return Err(RxError::RemoteAccess {
                    rkey: msg.rkey,
                    va,
                    len: len as u32,
                });
            }
        }
        msg.offset = end;
        self.note_ce(now, pkt.ecn_ce);
        let rx = self.rx.as_mut().expect("responder");
        rx.epsn = rx.epsn.next();
        rx.nak_sent = false;
        rx.last_ev = pkt.ev;
        self.counters.rx_data_packets += 1;
        self.counters.rx_data_bytes += len;
        if is_last {
            rx.cur = None;
            rx.msn = (rx.msn + 1) & Psn::MASK;
            if let Some(imm) = pkt.imm {
                rx.held.push_back((msg.dma_len, imm));
                self.deliver_held();
            }
        } else {
            rx.cur = Some(msg);
        }
        let rx = self.rx.as_mut().expect("responder");
        rx.unacked += 1;
        if rx.unacked >= ack_every || pkt.bth.ack_req {
            rx.ack_now = true;
        } else if rx.ack_deadline.is_none() {
            rx.ack_deadline = Some(now + ack_delay);
        }
        Ok(())
    }

    /// A CE-marked data packet the responder did not drop as bad input
    /// (in order, duplicate or out of order): count it and schedule a CNP
    /// unless one went out less than [`CNP_INTERVAL`] ago. Called only on
    /// the `Ok` paths, so a dropped packet changes nothing but its drop
    /// counter.
    fn note_ce(&mut self, now: Instant, ce: bool) {
        if !ce {
            return;
        }
        let Some(rx) = self.rx.as_mut() else { return };
        self.counters.rx_ecn_ce += 1;
        let due = match rx.last_cnp {
            Some(t) => now >= t + CNP_INTERVAL,
            None => true,
        };
        if due {
            rx.last_cnp = Some(now);
            rx.cnp_pending = true;
        }
    }

    fn access_nak(&mut self, psn: Psn) {
        let rx = self.rx.as_mut().expect("responder");
        rx.nak = Some((Syndrome::NAK_REMOTE_ACCESS, psn));
        // No more sequence NAKs: the requester goes to ERR.
        rx.nak_sent = true;
    }

    /// Match held WRITE-IMMs with posted receives, in order.
    fn deliver_held(&mut self) {
        while let Some(rx) = self.rx.as_mut() {
            if rx.held.is_empty() || rx.rq.is_empty() {
                break;
            }
            let (len, imm) = rx.held.pop_front().expect("non-empty");
            let wr_id = rx.rq.pop_front().expect("non-empty");
            self.counters.recv_completions += 1;
            self.push_event(Event::RecvCompleted(Completion {
                wr_id,
                status: WcStatus::Success,
                len,
                imm: Some(imm),
            }));
        }
    }

    fn poll_response(&mut self, now: Instant) -> Option<RocePacket> {
        let rx = self.rx.as_mut()?;
        if rx.ack_deadline.is_some_and(|t| t <= now) {
            rx.ack_now = true;
        }
        if let Some((code, psn)) = rx.nak.take() {
            let msn = rx.msn;
            self.counters.tx_nacks += 1;
            let aeth = AethRepr {
                syndrome: Syndrome::Nak { code },
                msn,
            };
            return Some(self.control_packet(Opcode::Ack, psn, Some(aeth), Bytes::new()));
        }
        if rx.ack_now {
            rx.ack_now = false;
            rx.unacked = 0;
            rx.ack_deadline = None;
            let (psn, msn) = (rx.epsn.sub(1), rx.msn);
            self.counters.tx_acks += 1;
            let aeth = AethRepr {
                syndrome: Syndrome::Ack {
                    credits: CREDITS_INVALID,
                },
                msn,
            };
            return Some(self.control_packet(Opcode::Ack, psn, Some(aeth), Bytes::new()));
        }
        if rx.cnp_pending {
            rx.cnp_pending = false;
            self.counters.tx_cnps += 1;
            let payload = Bytes::from_static(&[0; CNP_PAYLOAD_LEN]);
            return Some(self.control_packet(Opcode::Cnp, Psn::new(0), None, payload));
        }
        None
    }

    // ----------------------------------------------------------------
    // Requester
    // ----------------------------------------------------------------

    fn on_ack(&mut self, now: Instant, pkt: RocePacket) -> Result<(), RxError> {
        let aeth = pkt.aeth.ok_or(RxError::MissingHeader("AETH"))?;
        let mtu = self.mtu();
        let tx = self.tx.as_ref().expect("requester exists in RTS");
        let psn = pkt.bth.psn;
        let abs = tx.abs_of(psn);
        match aeth.syndrome {
            Syndrome::Ack { .. } => {
                // Acknowledges every packet up to and including `psn`.
                match abs {
                    Some(a) if a >= tx.max => Err(RxError::AckForUnsent(psn)),
                    Some(a) => {
                        self.counters.rx_acks += 1;
                        self.ack_through(now, a + 1, mtu);
                        Ok(())
                    }
                    None => {
                        self.counters.rx_acks += 1;
                        Ok(()) // stale: before una - 1
                    }
                }
            }
            Syndrome::Nak {
                code: Syndrome::NAK_PSN_SEQ_ERROR,
            } => {
                // `psn` is the responder's expected PSN: everything before
                // it arrived; resend from it.
                match abs {
                    Some(e) if e >= tx.max => Err(RxError::AckForUnsent(psn)),
                    Some(e) if e >= tx.una => {
                        self.counters.rx_nacks += 1;
                        let progress = e > tx.una;
                        self.ack_through(now, e, mtu);
                        let tx = self.tx.as_mut().expect("requester");
                        if progress || tx.rewound_at != Some(e) || tx.nxt <= e {
                            tx.go_back(e, RetxReason::Nak);
                            let bytes = tx.byte_pos(e + 1, mtu) - tx.byte_pos(e, mtu);
                            tx.cc.on_loss(now, bytes.max(1));
                        }
                        Ok(())
                    }
                    _ => {
                        self.counters.rx_nacks += 1;
                        Ok(()) // stale
                    }
                }
            }
            Syndrome::Nak { .. } => {
                // Remote access error (and the codes our responder never
                // sends: invalid request, remote operational error) are
                // fatal: the WR they name fails, the rest is flushed.
                match abs {
                    Some(e) if e >= tx.max => Err(RxError::AckForUnsent(psn)),
                    Some(e) if e >= tx.una => {
                        self.counters.rx_nacks += 1;
                        self.ack_through(now, e, mtu);
                        self.enter_error(Some(WcStatus::RemoteAccessError), true);
                        Ok(())
                    }
                    _ => {
                        self.counters.rx_nacks += 1;
                        Ok(())
                    }
                }
            }
            Syndrome::Rnr { .. } => Err(RxError::Malformed("RNR NAK: RC baseline has no RNR")),
            Syndrome::Reserved(_) => Err(RxError::Malformed("reserved AETH syndrome")),
        }
    }

    /// Everything before `upto` (absolute) is acknowledged.
    fn ack_through(&mut self, now: Instant, upto: u64, mtu: u64) {
        let tx = self.tx.as_mut().expect("requester");
        if upto <= tx.una {
            return;
        }
        let acked_bytes = tx.byte_pos(upto, mtu) - tx.byte_pos(tx.una, mtu);
        let rtt = tx
            .sent_at
            .get((upto - 1 - tx.una) as usize)
            .map(|t| now.saturating_since(*t));
        for _ in tx.una..upto {
            tx.sent_at.pop_front();
        }
        tx.una = upto;
        tx.nxt = tx.nxt.max(upto);
        tx.retries = 0;
        if tx.rewound_at.is_some_and(|r| r < upto) {
            tx.rewound_at = None;
        }
        let in_flight = tx.in_flight(mtu);
        tx.cc.on_ack(
            now,
            AckSample {
                acked_bytes,
                rtt,
                ecn_ce: 0,
                in_flight,
                ..AckSample::default()
            },
        );
        let mut done = Vec::new();
        while tx.sq.front().is_some_and(|w| w.end() <= upto) {
            let w = tx.sq.pop_front().expect("non-empty");
            if w.imm.is_some() {
                tx.wimm_outstanding = tx.wimm_outstanding.saturating_sub(1);
            }
            done.push(w);
        }
        for w in done {
            self.counters.messages_completed += 1;
            self.push_event(Event::SendCompleted(Completion {
                wr_id: w.wr_id,
                status: WcStatus::Success,
                len: w.data.len() as u32,
                imm: None,
            }));
        }
    }

    fn on_timeout_rto(&mut self, now: Instant) {
        let Some(tx) = self.tx.as_mut() else { return };
        let Some(deadline) = tx.rto_deadline() else { return };
        if deadline > now {
            return;
        }
        self.counters.rto_fired += 1;
        tx.retries += 1;
        if tx.retry_limit.is_some_and(|l| tx.retries > l) {
            self.enter_error(Some(WcStatus::RetryExceeded), true);
            return;
        }
        tx.cc.on_timeout(now);
        let una = tx.una;
        tx.go_back(una, RetxReason::Timeout);
        // Restart the timer from now even if pacing delays the resend.
        if let Some(t) = tx.sent_at.front_mut() {
            *t = now;
        }
    }

    /// Whether a data packet can go now; `Err(t)` = paced until `t`.
    fn data_ready(&self, now: Instant) -> Option<Result<(), Instant>> {
        if self.state != QpState::Rts {
            return None;
        }
        let tx = self.tx.as_ref()?;
        if tx.nxt >= tx.sq_end || tx.nxt - tx.una >= tx.window_psns {
            return None;
        }
        let mtu = self.mtu();
        let w = &tx.sq[tx.wqe_index(tx.nxt)];
        if w.imm.is_some() && tx.nxt == w.first && tx.nxt >= tx.max && tx.wimm_outstanding >= tx.max_wimm {
            return None;
        }
        let len = (tx.byte_pos(tx.nxt + 1, mtu) - tx.byte_pos(tx.nxt, mtu)) as u32;
        let in_flight = tx.in_flight(mtu);
        if in_flight > 0 && in_flight.saturating_add(len as u64) > tx.cc.window() {
            return None;
        }
        let t = tx.cc.next_send_time(now, len);
        Some(if t > now { Err(t) } else { Ok(()) })
    }

    fn poll_data(&mut self, now: Instant) -> Option<RocePacket> {
        if self.data_ready(now)? != Ok(()) {
            return None;
        }
        let mtu = self.mtu();
        let tx = self.tx.as_mut().expect("requester");
        let abs = tx.nxt;
        let w = &tx.sq[tx.wqe_index(abs)];
        let idx = abs - w.first;
        let start = (idx * mtu).min(w.len()) as usize;
        let end = ((idx + 1) * mtu).min(w.len()) as usize;
        let payload = w.data.slice(start..end);
        let last = idx + 1 == w.npkts;
        let opcode = match (w.npkts == 1, idx == 0, last, w.imm.is_some()) {
            (true, _, _, false) => Opcode::WriteOnly,
            (true, _, _, true) => Opcode::WriteOnlyImm,
            (false, true, _, _) => Opcode::WriteFirst,
            (false, false, true, false) => Opcode::WriteLast,
            (false, false, true, true) => Opcode::WriteLastImm,
            (false, false, false, _) => Opcode::WriteMiddle,
        };
        let reth = opcode.has_reth().then_some(RethRepr {
            va: w.remote_va,
            rkey: w.rkey,
            dma_len: w.data.len() as u32,
        });
        let imm = if opcode.has_imm() { w.imm } else { None };
        let is_imm_start = idx == 0 && w.imm.is_some();
        let ack_req = last || abs % ACK_REQ_EVERY == ACK_REQ_EVERY - 1;
        let psn = tx.psn(abs);
        let ev = tx.evs.value(0);
        let len = payload.len() as u32;
        // Bookkeeping.
        if abs < tx.max {
            self.counters.retransmitted_packets += 1;
            match tx.retx_reason {
                RetxReason::Nak => self.counters.retx_go_back_n += 1,
                RetxReason::Timeout => self.counters.retx_timeout += 1,
            }
            tx.sent_at[(abs - tx.una) as usize] = now;
        } else {
            tx.max = abs + 1;
            tx.sent_at.push_back(now);
            if is_imm_start {
                tx.wimm_outstanding += 1;
            }
        }
        tx.nxt = abs + 1;
        tx.cc.on_send(now, len);
        self.counters.tx_data_packets += 1;
        self.counters.tx_data_bytes += len as u64;
        let dest_qp = self.rx.as_ref().map_or(0, |r| r.dest_qp);
        let pad = ((4 - payload.len() % 4) % 4) as u8;
        Some(RocePacket {
            ev,
            ecn_ce: false,
            trimmed: false,
            bth: self.bth(opcode, dest_qp, psn, ack_req, pad),
            reth,
            imm,
            aeth: None,
            ext: None,
            payload,
        })
    }
}

impl Timers for RcQp {
    /// Pacing has no action: the next `poll_transmit` sends once it passed.
    const FIRING_ORDER: &'static [Timer] = &[Timer::Ack, Timer::Retransmit, Timer::CongestionControl];

    fn deadline(&self, timer: Timer) -> Option<Instant> {
        if !self.state.can_receive() {
            return None;
        }
        // The requester's timers run in RTS only.
        let tx = self.tx.as_ref().filter(|_| self.state == QpState::Rts);
        match timer {
            Timer::Ack => self.rx.as_ref()?.ack_deadline,
            Timer::Pacing => self.data_ready(self.now)?.err(),
            Timer::CongestionControl => tx?.cc.next_timer(),
            Timer::Retransmit => tx?.rto_deadline(),
            Timer::TailCheck | Timer::Probe => None,
        }
    }

    fn fire(&mut self, timer: Timer, now: Instant) {
        match timer {
            Timer::Ack => {
                let rx = self.rx.as_mut().expect("the ACK timer runs on a responder");
                rx.ack_now = true;
                rx.ack_deadline = None;
            }
            Timer::Retransmit => self.on_timeout_rto(now),
            Timer::CongestionControl => self.tx.as_mut().expect("requester exists in RTS").cc.on_timer(now),
            Timer::Pacing | Timer::TailCheck | Timer::Probe => {}
        }
    }
}

impl QueuePair for RcQp {
    fn config(&self) -> &QpConfig {
        &self.cfg
    }

    fn state(&self) -> QpState {
        self.state
    }

    fn modify(&mut self, now: Instant, transition: QpTransition) -> Result<(), ModifyError> {
        self.tick(now);
        let to = check_transition(self.state, &transition)?;
        match transition {
            QpTransition::Init(a) => {
                self.pkey = a.pkey;
            }
            QpTransition::Rtr(a) => {
                validate_rtr(&a)?;
                self.rx = Some(Box::new(Responder {
                    dest_qp: a.dest_qp & Psn::MASK,
                    epsn: a.rq_psn,
                    recv_cap: a.max_wimm.max(1) as usize,
                    rq: VecDeque::new(),
                    held: VecDeque::new(),
                    cur: None,
                    msn: 0,
                    nak_sent: false,
                    nak: None,
                    ack_now: false,
                    unacked: 0,
                    ack_deadline: None,
                    cnp_pending: false,
                    last_cnp: None,
                    last_ev: 0,
                }));
            }
            QpTransition::Rts(a) => {
                validate_rts(&a)?;
                let evs = EvSet::new(a.evs.clone())?;
                self.tx = Some(Box::new(Requester {
                    sq_psn: a.sq_psn,
                    rto: ack_timeout(a.ack_timeout_exp),
                    retry_linear: a.retry_linear as u32,
                    retry_limit: (a.retry_exp < RETRY_INFINITE).then_some(a.retry_linear as u32 + a.retry_exp as u32),
                    window_psns: a.send_mpr_units as u64 * MPR_UNIT as u64,
                    max_wimm: (a.max_wimm as u32).max(1),
                    evs,
                    cc: cc::build(&a.cc),
                    sq: VecDeque::new(),
                    sq_end: 0,
                    sq_end_bytes: 0,
                    una: 0,
                    nxt: 0,
                    max: 0,
                    sent_at: VecDeque::new(),
                    retries: 0,
                    retx_reason: RetxReason::Nak,
                    rewound_at: None,
                    wimm_outstanding: 0,
                }));
            }
            QpTransition::Error => {
                self.enter_error(None, false);
            }
            QpTransition::Reset => {
                self.rx = None;
                self.tx = None;
                self.events.clear();
                self.counters = Counters::default();
                self.pkey = 0xFFFF;
                self.held_dropped = 0;
            }
        }
        self.state = to;
        Ok(())
    }

    fn memory(&self) -> &MemoryTable {
        &self.memory
    }

    fn memory_mut(&mut self) -> &mut MemoryTable {
        &mut self.memory
    }

    fn post_write(&mut self, now: Instant, wr: WriteRequest) -> Result<(), PostError> {
        self.tick(now);
        let len = wr.data.len() as u64;
        check_post_write(self.state, len, || QueueFill {
            len: self.tx.as_ref().expect("requester exists in RTS").sq.len(),
            capacity: SEND_QUEUE_LEN,
        })?;
        let mtu = self.mtu();
        let tx = self.tx.as_mut().expect("requester exists in RTS");
        let npkts = len.div_ceil(mtu).max(1);
        tx.sq.push_back(SendWqe {
            wr_id: wr.wr_id,
            data: wr.data,
            remote_va: wr.remote_va,
            rkey: wr.rkey,
            imm: wr.imm,
            first: tx.sq_end,
            npkts,
            byte_start: tx.sq_end_bytes,
        });
        tx.sq_end += npkts;
        tx.sq_end_bytes += len;
        Ok(())
    }

    fn post_recv(&mut self, wr_id: u64) -> Result<(), PostError> {
        check_post_recv(self.state, || {
            let rx = self.rx.as_ref().expect("responder exists in RTR/RTS");
            QueueFill {
                len: rx.rq.len(),
                capacity: rx.recv_cap,
            }
        })?;
        let rx = self.rx.as_mut().expect("responder exists in RTR/RTS");
        rx.rq.push_back(wr_id);
        self.deliver_held();
        Ok(())
    }

    fn count_drop(&mut self, e: &RxError) {
        self.counters.count_drop(e);
    }

    fn handle_packet(&mut self, now: Instant, pkt: Packet) -> Result<(), RxError> {
        self.tick(now);
        let r = match pkt {
            Packet::Roce(p) => self.dispatch(now, p),
            Packet::Mrc10(p) => Err(RxError::WrongProtocol {
                opcode: p.bth.opcode.as_u8(),
                expected: "RoCEv2 RC",
            }),
        };
        if let Err(e) = &r {
            self.counters.count_drop(e);
        }
        r
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.tick(now);
        timer::handle_timeout(self, now);
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        self.tick(now);
        if !self.state.can_receive() {
            return None;
        }
        if let Some(p) = self.poll_response(now) {
            return Some(Packet::Roce(p));
        }
        self.poll_data(now).map(Packet::Roce)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        timer::poll_timeout(self)
    }

    fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn ev_set(&self) -> Option<&EvSet> {
        self.tx.as_ref().map(|t| &t.evs)
    }

    fn deny_evs(&mut self, now: Instant, mask: u32, value: u32) -> usize {
        self.tick(now);
        let Some(tx) = self.tx.as_mut() else { return 0 };
        // Marks only: an RC flow cannot move off its one path.
        let n = tx.evs.deny(mask, value, now);
        self.drain_ev_changes();
        n
    }

    fn allow_evs(&mut self, now: Instant, mask: u32, value: u32) -> usize {
        self.tick(now);
        let Some(tx) = self.tx.as_mut() else { return 0 };
        let n = tx.evs.allow(mask, value, now);
        self.drain_ev_changes();
        n
    }

    fn probe_ev(&mut self, _now: Instant, _ev_index: u16) -> bool {
        false
    }
}

impl RcQp {
    fn dispatch(&mut self, now: Instant, pkt: RocePacket) -> Result<(), RxError> {
        if pkt.bth.dest_qp != self.cfg.qpn {
            return Err(RxError::WrongQp {
                expected: self.cfg.qpn,
                got: pkt.bth.dest_qp,
            });
        }
        if pkt.bth.mrc_ext || pkt.ext.is_some() {
            return Err(RxError::Malformed("MRC extension on an RC packet"));
        }
        let op = pkt.bth.opcode;
        if op.is_write() {
            if !self.state.can_receive() {
                return Err(RxError::BadState(self.state));
            }
            return self.on_data(now, pkt);
        }
        if self.state != QpState::Rts {
            return Err(RxError::BadState(self.state));
        }
        match op {
            Opcode::Cnp => {
                self.counters.rx_cnps += 1;
                if let Some(tx) = self.tx.as_mut() {
                    tx.cc.on_cnp(now);
                }
                Ok(())
            }
            _ => self.on_ack(now, pkt),
        }
    }

    fn drain_ev_changes(&mut self) {
        let mut changes = Vec::new();
        if let Some(tx) = self.tx.as_mut() {
            while let Some(c) = tx.evs.poll_change() {
                changes.push(c);
            }
        }
        for c in changes {
            self.push_event(Event::EvStateChanged(c));
        }
    }
}
