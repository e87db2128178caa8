//! The requester half of an MRC queue pair, shared by both dialects'
//! models ([`super::mrc`], MRC 1.0, and [`super::legacy_mrc`], the legacy
//! profile the RTL twins): the ring of outstanding packets, the per-EV
//! transmission order, loss inference from SACKs (docs/model-mrc.md 2.5.1),
//! the tail check and its probe (2.5.2) and the RTO's arming and backoff
//! (2.8). The dialects differ in their packets, not in these rules, so the
//! rules are written once here; what only one dialect keeps rides in
//! [`Requester::dialect`].

use std::collections::VecDeque;

use bytes::Bytes;

use crate::model::api::{
    ack_timeout, Completion, Counters, Event, RtsAttr, WcStatus, MAX_ACK_TIMEOUT_EXP, MPR_UNIT, RETRY_INFINITE,
};
use crate::model::cc::{self, CongestionControl};
use crate::model::ev::EvSet;
use crate::time::{Duration, Instant};
use crate::Psn;

/// Exponential backoff is capped at `2^RTO_MAX_SHIFT x RTO`.
pub const RTO_MAX_SHIFT: u32 = 10;

/// Why a PSN waits in the retransmission queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Retx {
    /// Not queued.
    No,
    /// Loss inferred from SACKs on its EV.
    Loss,
    /// Trim NACK.
    Trim,
    /// Retransmission timeout.
    Timeout,
    /// Out-of-window NACK: treated as never sent.
    Window,
    /// Tail probe (docs/model-mrc.md 2.5.2): resent to draw an
    /// acknowledgement, not declared lost.
    Probe,
}

/// Slots a requester ring starts with (it grows with the window in use).
pub(super) const RING_MIN: usize = 16;

/// Tail checks that may act in a row without an acknowledgement in between.
pub(super) const TAIL_BLIND_MAX: u32 = 2;

/// A transmission the tail check still judges: neither acknowledged nor
/// queued for a resend.
fn is_live(s: &TxSlot) -> bool {
    !s.acked && s.queued == Retx::No
}

/// One outstanding packet (requester ring slot).
#[derive(Clone, Copy, Debug)]
pub(super) struct TxSlot {
    /// Sequence number of the work request (index into the send queue).
    pub(super) wr_seq: u64,
    /// Packet index inside its message.
    pub(super) seg: u32,
    pub(super) len: u32,
    pub(super) ev_index: u16,
    pub(super) ev_seq: u32,
    /// Last transmission.
    pub(super) sent_at: Instant,
    /// Retransmissions caused by timeouts (drives the retry budget).
    pub(super) retries: u32,
    /// Sent more than once: its acknowledgement is ambiguous (Karn) and is
    /// not used to infer loss of other packets on its EV.
    pub(super) resent: bool,
    pub(super) acked: bool,
    /// Counted in `in_flight`.
    pub(super) in_flight: bool,
    pub(super) queued: Retx,
}

impl TxSlot {
    pub(super) const EMPTY: TxSlot = TxSlot {
        wr_seq: 0,
        seg: 0,
        len: 0,
        ev_index: 0,
        ev_seq: 0,
        sent_at: Instant::ZERO,
        retries: 0,
        resent: false,
        acked: true,
        in_flight: false,
        queued: Retx::No,
    };
}

/// A posted WRITE.
#[derive(Debug)]
pub(super) struct SendWr {
    pub(super) wr_id: u64,
    pub(super) data: Bytes,
    pub(super) remote_va: u64,
    pub(super) rkey: u32,
    pub(super) imm: Option<u32>,
    /// METH RQMSN (MRC 1.0; the legacy dialect has none and leaves 0):
    /// WRITE-with-immediate messages posted before this one (wrapping),
    /// i.e. the receive this message consumes if it has one.
    pub(super) rq_msn: u16,
    /// Set when its first packet is sent.
    pub(super) first_psn: Psn,
    pub(super) npkts: u32,
    /// Packets handed out so far (first transmissions).
    pub(super) segmented: u32,
}

impl SendWr {
    pub(super) fn last_psn(&self) -> Psn {
        self.first_psn.add(self.npkts - 1)
    }
}

/// The `(ev_seq, psn)` of each transmission on one EV, oldest first; its
/// queue is allocated on the first push (an empty FIFO is one pointer: a QP
/// holds one per EV, most of them empty in short flows).
// The box is the point: an empty FIFO is 8 bytes, an unboxed `VecDeque` 32
// (4 KB per QP with 128 EVs, most of them empty in short flows).
#[allow(clippy::box_collection)]
#[derive(Clone, Debug, Default)]
pub(super) struct EvFifo(Option<Box<VecDeque<(u32, Psn)>>>);

impl EvFifo {
    pub(super) fn front(&self) -> Option<&(u32, Psn)> {
        self.0.as_ref().and_then(|d| d.front())
    }
    pub(super) fn pop_front(&mut self) -> Option<(u32, Psn)> {
        self.0.as_mut().and_then(|d| d.pop_front())
    }
    pub(super) fn push_back(&mut self, e: (u32, Psn)) {
        self.0.get_or_insert_with(Box::default).push_back(e);
    }
}

/// Requester half (exists from RTS on).
#[derive(Debug)]
pub(super) struct Requester<D> {
    pub(super) attr: RtsAttr,
    pub(super) evs: EvSet,
    pub(super) cc: Box<dyn CongestionControl>,
    pub(super) rto: Duration,
    /// Total timeout retries allowed per PSN; `None` = infinite.
    pub(super) retry_limit: Option<u32>,
    /// Send window in PSNs.
    pub(super) window: u32,
    /// Outstanding packets by `psn & mask`: starts at `RING_MIN` slots and
    /// doubles (up to `next_pow2(window)`) when a new packet finds it full.
    pub(super) ring: Vec<TxSlot>,
    pub(super) mask: u32,
    /// Oldest unacknowledged PSN.
    pub(super) una: Psn,
    /// Next new PSN.
    pub(super) next_psn: Psn,
    pub(super) sq: VecDeque<SendWr>,
    /// `wr_seq` of `sq[0]`.
    pub(super) sq_head_seq: u64,
    /// Index in `sq` of the request being segmented.
    pub(super) seg_idx: usize,
    pub(super) in_flight: u64,
    pub(super) wimm_outstanding: u32,
    pub(super) max_wimm: u32,
    pub(super) retx: VecDeque<Psn>,
    /// PSNs NACKed out-of-window: resent once the cumulative ack advances
    /// (the responder's window moved) or the RTO fires.
    pub(super) deferred: Vec<Psn>,
    pub(super) ev_next_seq: Vec<u32>,
    pub(super) ev_fifo: Vec<EvFifo>,
    pub(super) ev_max_acked: Vec<Option<u32>>,
    pub(super) touched: Vec<u16>,
    pub(super) touched_flag: Vec<bool>,
    /// Latest send time of a packet acknowledged so far (first
    /// transmissions only, Karn): the reference of stall inference (2.5.1).
    pub(super) acked_sent_hw: Option<Instant>,
    /// The last tail probe's packet and the send time of the transmission
    /// it repeated (2.5.2): whichever copy its acknowledgement is for, every
    /// live packet older than that transmission was sent before a packet
    /// delivered, so its acknowledgement advances `acked_sent_hw` to it.
    pub(super) probe_evidence: Option<(Psn, Instant)>,
    /// Stall cutoff of the last stall scan (a scan with the same cutoff
    /// finds nothing new).
    pub(super) stall_cutoff: Instant,
    /// Packets newly acknowledged so far (any transmission).
    pub(super) acked_total: u64,
    /// Tail check (2.5.2): when it is due, and `acked_total` at its last
    /// action (it acts again only after more packets were acknowledged).
    pub(super) tail_deadline: Option<Instant>,
    pub(super) tail_acked: u64,
    /// Tail actions in a row without any acknowledgement in between.
    pub(super) tail_blind: u32,
    pub(super) rto_deadline: Option<Instant>,
    pub(super) paced_until: Option<Instant>,
    /// The last trim NACK (TRIMMED or TRIMMED_LASTHOP): the fabric was
    /// congested enough to cut packets of this QP.
    pub(super) trim_nack_at: Option<Instant>,
    /// What only one dialect's requester keeps (the legacy probe counter;
    /// MRC 1.0's RQMSN count and the peer's advertised window).
    pub(super) dialect: D,
}

impl<D> Requester<D> {
    /// The requester a QP gets on its way to RTS: nothing outstanding, the
    /// send window `send_mpr_units` x [`MPR_UNIT`] PSNs, a ring of at most
    /// [`RING_MIN`] slots (it grows with the window in use), the per-EV
    /// tables allocated on the first send (`make_room`).
    pub(super) fn new(attr: RtsAttr, evs: EvSet, dialect: D) -> Requester<D> {
        let window = attr.send_mpr_units as u32 * MPR_UNIT;
        let size = window.next_power_of_two().min(RING_MIN as u32);
        let retry_limit =
            (attr.retry_exp != RETRY_INFINITE).then_some(attr.retry_linear as u32 + attr.retry_exp as u32);
        Requester {
            cc: cc::build(&attr.cc),
            rto: ack_timeout(attr.ack_timeout_exp),
            retry_limit,
            window,
            ring: vec![TxSlot::EMPTY; size as usize],
            mask: size - 1,
            una: attr.sq_psn,
            next_psn: attr.sq_psn,
            sq: VecDeque::new(),
            sq_head_seq: 0,
            seg_idx: 0,
            in_flight: 0,
            wimm_outstanding: 0,
            max_wimm: (attr.max_wimm as u32).max(1),
            retx: VecDeque::new(),
            deferred: Vec::new(),
            ev_next_seq: Vec::new(),
            ev_fifo: Vec::new(),
            ev_max_acked: Vec::new(),
            touched: Vec::new(),
            touched_flag: Vec::new(),
            acked_sent_hw: None,
            probe_evidence: None,
            stall_cutoff: Instant::ZERO,
            tail_deadline: None,
            acked_total: 0,
            tail_acked: 0,
            tail_blind: 0,
            rto_deadline: None,
            paced_until: None,
            trim_nack_at: None,
            dialect,
            evs,
            attr,
        }
    }
    /// Whether a packet of `len` bytes may go now: inside the congestion
    /// window (one packet always may when nothing is in flight) and not
    /// before the pacing time (which it then records).
    pub(super) fn may_send(&mut self, now: Instant, len: u32) -> bool {
        if self.in_flight > 0 && self.in_flight + len as u64 > self.cc.window() {
            return false;
        }
        let t = self.cc.next_send_time(now, len);
        if t > now {
            self.paced_until = Some(t);
            return false;
        }
        true
    }
    pub(super) fn slot(&self, psn: Psn) -> &TxSlot {
        &self.ring[(psn.value() & self.mask) as usize]
    }
    pub(super) fn slot_mut(&mut self, psn: Psn) -> &mut TxSlot {
        &mut self.ring[(psn.value() & self.mask) as usize]
    }
    pub(super) fn outstanding(&self) -> u32 {
        self.next_psn.offset_from(self.una)
    }
    /// Before a new packet is sent: the ring grows (doubling, re-placing
    /// the outstanding slots) when it is full, and the per-EV tables are
    /// allocated on the first send (a QP that never sends has none).
    pub(super) fn make_room(&mut self) {
        if self.ev_next_seq.is_empty() {
            let n = self.evs.len();
            self.ev_next_seq = vec![0; n];
            self.ev_fifo = vec![EvFifo::default(); n];
            self.ev_max_acked = vec![None; n];
            self.touched = Vec::with_capacity(n);
            self.touched_flag = vec![false; n];
        }
        let out = self.outstanding();
        let max = self.window.next_power_of_two() as usize;
        if out as usize >= self.ring.len() && self.ring.len() < max {
            let size = (self.ring.len() * 2).min(max);
            let mut ring = vec![TxSlot::EMPTY; size];
            let mask = size as u32 - 1;
            for k in 0..out {
                let psn = self.una.add(k);
                ring[(psn.value() & mask) as usize] = *self.slot(psn);
            }
            self.ring = ring;
            self.mask = mask;
        }
    }
    pub(super) fn is_outstanding(&self, psn: Psn) -> bool {
        psn.offset_from(self.una) < self.outstanding()
    }
    /// The RTO for a packet that has already timed out `retries` times.
    pub(super) fn backoff(&self, retries: u32) -> Duration {
        let lin = self.attr.retry_linear as u32;
        if retries < lin {
            self.rto
        } else {
            let shift = (retries - lin + 1).min(RTO_MAX_SHIFT);
            let d = self.rto.saturating_mul(1 << shift);
            d.min(ack_timeout(MAX_ACK_TIMEOUT_EXP).max(self.rto))
        }
    }
    pub(super) fn push_fifo(&mut self, ev: u16, seq: u32, psn: Psn) {
        let una = self.una;
        let fifo = &mut self.ev_fifo[ev as usize];
        while let Some(&(_, p)) = fifo.front() {
            if p.before(una) {
                fifo.pop_front();
            } else {
                break;
            }
        }
        fifo.push_back((seq, psn));
    }
    /// Stall inference (docs/model-mrc.md 2.5.1): every transmission sent
    /// more than the EV set's stall allowance before the latest-sent packet
    /// already acknowledged, and still unacknowledged, is lost; its EV is
    /// reported stalled (`EvSet::on_stall`, ASSUMED_BAD subject to
    /// `min_active`).
    pub(super) fn infer_stalls(&mut self, now: Instant) {
        let (Some(hw), Some(allow)) = (self.acked_sent_hw, self.evs.stall_allowance()) else {
            return;
        };
        if hw.as_ps() <= allow.as_ps() {
            return;
        }
        let cutoff = Instant(hw.as_ps() - allow.as_ps());
        if cutoff <= self.stall_cutoff {
            return;
        }
        self.stall_cutoff = cutoff;
        self.lose_sent_before(cutoff, now);
    }
    /// Every live transmission sent before `cutoff` is lost; EVs that lost
    /// one are reported stalled.
    pub(super) fn lose_sent_before(&mut self, cutoff: Instant, now: Instant) {
        for ev in 0..self.ev_fifo.len() {
            let mut stalled = false;
            while let Some(&(seq, psn)) = self.ev_fifo[ev].front() {
                let live = self.is_outstanding(psn) && {
                    let sl = self.slot(psn);
                    !sl.acked && sl.ev_index as usize == ev && sl.ev_seq == seq && sl.queued == Retx::No
                };
                if live && self.slot(psn).sent_at >= cutoff {
                    break;
                }
                self.ev_fifo[ev].pop_front();
                if !live {
                    continue;
                }
                let sl = self.slot_mut(psn);
                sl.queued = Retx::Loss;
                let len = sl.len as u64;
                if sl.in_flight {
                    sl.in_flight = false;
                    self.in_flight -= len;
                }
                self.retx.push_back(psn);
                self.cc.on_loss(now, len);
                stalled = true;
            }
            if stalled {
                self.evs.on_stall(ev as u16, now);
            }
        }
    }
    /// Tail check (docs/model-mrc.md 2.5.2): at `sent_at(una) + stall_age`,
    /// unless it already acted `TAIL_BLIND_MAX` times in a row without any
    /// acknowledgement in between (then only the RTO, which consumes the
    /// retry budget, resends), every live transmission older than
    /// `stall_age` and sent no later than a packet already acknowledged (or
    /// than a trim NACK's arrival) is lost. Age alone is no evidence: a
    /// packet that only waits in a queue that grew since the RTT was
    /// sampled is as old as a lost one, but nothing sent after it has come
    /// back either (RACK's timer, RFC 8985 6.2, looks only at packets sent
    /// before the latest one delivered).
    /// When that finds nothing and a packet has aged without evidence, the
    /// newest live packet is resent once as a probe (RFC 8985's TLP),
    /// declared lost by nobody: its EV is not blamed and the window not cut.
    pub(super) fn on_tail_check(&mut self, now: Instant) {
        self.tail_deadline = None;
        let Some(age) = self.evs.stall_age() else { return };
        if self.una == self.next_psn {
            return;
        }
        if self.acked_total != self.tail_acked {
            self.tail_acked = self.acked_total;
            self.tail_blind = 0;
        }
        if self.tail_blind < TAIL_BLIND_MAX && now.as_ps() > age.as_ps() {
            self.tail_blind += 1;
            let aged = now.as_ps() - age.as_ps();
            let queued = self.retx.len();
            // Evidence against a packet: one sent no earlier was
            // acknowledged, or the fabric cut a packet of this QP (a trim
            // NACK) after it was sent, so its queues were dropping.
            if let Some(evidence) = self.acked_sent_hw.into_iter().chain(self.trim_nack_at).max() {
                // Strictly older than `age` (sent at or before `now - age`)
                // and sent at or before the evidence.
                self.lose_sent_before(Instant(aged.min(evidence.as_ps()) + 1), now);
            }
            if self.retx.len() == queued {
                // Nothing lost: the oldest live packet decides.
                match self.oldest_live() {
                    Some(oldest) if self.slot(oldest).sent_at.as_ps() <= aged => self.probe_tail(oldest),
                    Some(oldest) => {
                        // Not `age` old yet: the age grew since the check
                        // was armed at the packet's send time plus the age
                        // then (a new RTT sample). The check did nothing, so
                        // it is not counted, and it comes back when the
                        // packet is `age` old rather than a whole age from
                        // now, which can be after the RTO.
                        self.tail_blind -= 1;
                        self.tail_deadline = Some(self.slot(oldest).sent_at + age);
                        return;
                    }
                    None => {}
                }
            }
        }
        self.tail_deadline = Some(now + age);
    }
    /// The oldest live transmission (lowest PSN neither acknowledged nor
    /// queued for a resend), if any.
    fn oldest_live(&self) -> Option<Psn> {
        (0..self.outstanding())
            .map(|k| self.una.add(k))
            .find(|&p| is_live(self.slot(p)))
    }
    /// The tail probe, once the oldest live packet (`oldest`) has aged: the
    /// newest live packet is queued for one resend (reason `Probe`).
    pub(super) fn probe_tail(&mut self, oldest: Psn) {
        // The newest live transmission (latest sent; the highest PSN of
        // those sent at that instant).
        let newest = (0..self.outstanding())
            .map(|k| self.una.add(k))
            .filter(|&p| is_live(self.slot(p)))
            .max_by_key(|&p| (self.slot(p).sent_at, p.offset_from(self.una)))
            .unwrap_or(oldest);
        self.probe_evidence = Some((newest, self.slot(newest).sent_at));
        let sl = self.slot_mut(newest);
        sl.queued = Retx::Probe;
        let len = sl.len as u64;
        if sl.in_flight {
            sl.in_flight = false;
            self.in_flight -= len;
        }
        self.retx.push_back(newest);
    }
    pub(super) fn arm_rto(&mut self) {
        if self.una == self.next_psn {
            self.rto_deadline = None;
            self.tail_deadline = None;
            return;
        }
        let s = *self.slot(self.una);
        if let Some(age) = self.evs.stall_age() {
            self.tail_deadline = Some(s.sent_at + age);
        }
        self.rto_deadline = if s.queued == Retx::No {
            Some(s.sent_at + self.backoff(s.retries))
        } else {
            // Waiting to be resent: keep the current timer (its expiry scan
            // recomputes the exact deadline).
            self.rto_deadline.or(Some(s.sent_at + self.rto))
        };
    }
}

/// What a dialect decides in the requester's shared rules.
pub(super) trait Dialect {
    /// A timeout after a trim NACK of the QP (any EV) since the packet went
    /// out does not count against the packet's EV (MRC 1.0's "a timeout
    /// without a trim"; the legacy profile the RTL follows counts it).
    const EXCUSE_TIMEOUT_AFTER_TRIM: bool;
}

impl<D> Requester<D> {
    /// The cumulative point moves past every acknowledged packet; deferred
    /// resends are released when it moved, the RTO re-armed, and the
    /// messages it passed complete, strictly in posting order, into the
    /// QP's event queue (`event_cap` events at most; beyond, counted in
    /// `events_dropped`).
    pub(super) fn advance_una(&mut self, counters: &mut Counters, events: &mut VecDeque<Event>, event_cap: usize) {
        let q = self;
        let before = q.una;
        while q.una != q.next_psn && q.slot(q.una).acked {
            q.una = q.una.next();
        }
        if q.una != before {
            let d = std::mem::take(&mut q.deferred);
            q.retx.extend(d);
        }
        if q.una != before || q.rto_deadline.is_none() {
            q.arm_rto();
        }
        // Completions strictly in posting order (pushed straight into the
        // event queue: no allocation).
        while let Some(wr) = q.sq.front() {
            if q.seg_idx == 0 || wr.segmented != wr.npkts || !q.una.after(wr.last_psn()) {
                break;
            }
            let wr = q.sq.pop_front().expect("checked");
            q.sq_head_seq += 1;
            q.seg_idx -= 1;
            if wr.imm.is_some() {
                q.wimm_outstanding -= 1;
            }
            counters.messages_completed += 1;
            let c = Completion {
                wr_id: wr.wr_id,
                status: WcStatus::Success,
                len: wr.data.len() as u32,
                imm: None,
            };
            if events.len() >= event_cap {
                counters.events_dropped += 1;
            } else {
                events.push_back(Event::SendCompleted(c));
            }
        }
    }
}

/// A data packet the requester sends now, new or resent: what the
/// dialect needs to build it.
pub(super) struct Transmission {
    pub(super) psn: Psn,
    /// The EV (index) it goes out on, and its sequence number there.
    pub(super) ev: u16,
    pub(super) ev_seq: u32,
    /// Its message (sequence number in the send queue) and segment.
    pub(super) wr_seq: u64,
    pub(super) seg: u32,
}

impl<D> Requester<D> {
    /// The next new packet, if the send queue has one and `window` (PSNs
    /// past the cumulative point), the WRITE-with-immediate limit and
    /// pacing allow it: the next segment (of at most `mtu` bytes) of the
    /// first message not wholly sent, on the EV the set selects, recorded
    /// in flight and counted in `counters`. The dialect builds the packet
    /// (`wr_seq` and `seg` name the message and the segment).
    pub(super) fn take_new_segment(
        &mut self,
        now: Instant,
        mtu: u32,
        window: u32,
        counters: &mut Counters,
    ) -> Option<Transmission> {
        let q = self;
        let idx = q.seg_idx;
        let wr = q.sq.get(idx)?;
        if q.next_psn.offset_from(q.una) >= window {
            return None;
        }
        if wr.segmented == 0 && wr.imm.is_some() && q.wimm_outstanding >= q.max_wimm {
            return None;
        }
        let off = wr.segmented as u64 * mtu as u64;
        let len = (wr.data.len() as u64 - off).min(mtu as u64) as u32;
        if !q.may_send(now, len) {
            return None;
        }
        q.make_room();
        let psn = q.next_psn;
        let ev = q.evs.select(now);
        let seq = q.ev_next_seq[ev as usize];
        q.ev_next_seq[ev as usize] = seq.wrapping_add(1);
        let wr_seq = q.sq_head_seq + idx as u64;
        let wr = &mut q.sq[idx];
        if wr.segmented == 0 {
            wr.first_psn = psn;
            if wr.imm.is_some() {
                q.wimm_outstanding += 1;
            }
        }
        let seg = wr.segmented;
        wr.segmented += 1;
        if wr.segmented == wr.npkts {
            q.seg_idx += 1;
        }
        *q.slot_mut(psn) = TxSlot {
            wr_seq,
            seg,
            len,
            ev_index: ev,
            ev_seq: seq,
            sent_at: now,
            retries: 0,
            resent: false,
            acked: false,
            in_flight: true,
            queued: Retx::No,
        };
        q.next_psn = psn.next();
        q.in_flight += len as u64;
        q.push_fifo(ev, seq, psn);
        q.cc.on_send(now, len);
        if q.rto_deadline.is_none() {
            q.arm_rto();
        }
        counters.tx_data_packets += 1;
        counters.tx_data_bytes += len as u64;
        Some(Transmission {
            psn,
            ev,
            ev_seq: seq,
            wr_seq,
            seg,
        })
    }

    /// The next resend the window and pacing allow, if one is queued:
    /// resends of packets acknowledged or no longer outstanding since they
    /// were queued are dropped on the way; the one taken moves to another
    /// EV than its last ([`EvSet::select_other`]), is in flight again and
    /// counted in `counters` by the reason it was queued.
    pub(super) fn take_resend(&mut self, now: Instant, counters: &mut Counters) -> Option<Transmission> {
        let q = self;
        loop {
            let psn = *q.retx.front()?;
            let live = q.is_outstanding(psn) && {
                let s = q.slot(psn);
                !s.acked && s.queued != Retx::No
            };
            if !live {
                q.retx.pop_front();
                continue;
            }
            let len = q.slot(psn).len;
            if !q.may_send(now, len) {
                return None;
            }
            q.retx.pop_front();
            let old = q.slot(psn).ev_index;
            let ev = q.evs.select_other(now, old);
            let seq = q.ev_next_seq[ev as usize];
            q.ev_next_seq[ev as usize] = seq.wrapping_add(1);
            let sl = q.slot_mut(psn);
            let reason = sl.queued;
            sl.queued = Retx::No;
            sl.ev_index = ev;
            sl.ev_seq = seq;
            sl.sent_at = now;
            sl.in_flight = true;
            sl.resent = true;
            let (wr_seq, seg) = (sl.wr_seq, sl.seg);
            q.in_flight += len as u64;
            q.push_fifo(ev, seq, psn);
            q.cc.on_send(now, len);
            if q.rto_deadline.is_none() {
                q.arm_rto();
            }
            counters.retransmitted_packets += 1;
            match reason {
                Retx::Loss => counters.retx_loss_inferred += 1,
                Retx::Trim => counters.retx_trim += 1,
                Retx::Timeout => counters.retx_timeout += 1,
                Retx::Window | Retx::Probe | Retx::No => {}
            }
            return Some(Transmission {
                psn,
                ev,
                ev_seq: seq,
                wr_seq,
                seg,
            });
        }
    }

    /// The QP went to ERR: every request still in the send queue completes,
    /// in posting order, the one with sequence number `failed.0` with
    /// status `failed.1` and the others `Flushed`; nothing is left to send,
    /// resend or time out.
    pub(super) fn flush(&mut self, failed: Option<(u64, WcStatus)>) -> Vec<Completion> {
        let q = self;
        let mut done = Vec::with_capacity(q.sq.len());
        for (i, wr) in q.sq.drain(..).enumerate() {
            let seq = q.sq_head_seq + i as u64;
            let status = match failed {
                Some((s, st)) if s == seq => st,
                _ => WcStatus::Flushed,
            };
            done.push(Completion {
                wr_id: wr.wr_id,
                status,
                len: wr.data.len() as u32,
                imm: None,
            });
        }
        q.sq_head_seq += done.len() as u64;
        q.seg_idx = 0;
        q.retx.clear();
        q.deferred.clear();
        q.rto_deadline = None;
        q.paced_until = None;
        q.una = q.next_psn;
        q.in_flight = 0;
        done
    }
}

impl<D: Dialect> Requester<D> {
    /// The RTO fired (docs/model-mrc.md 2.8): deferred resends are released
    /// and every packet whose backoff has run out is queued again
    /// (`Retx::Timeout`), its EV told of the timeout unless the dialect
    /// excuses timeouts after a trim; the timer is re-armed at the earliest
    /// deadline left. A packet out of retries instead returns its work
    /// request's sequence number: the QP goes to ERR (RetryExceeded).
    pub(super) fn on_rto(&mut self, now: Instant, counters: &mut Counters) -> Option<u64> {
        let q = self;
        let d = std::mem::take(&mut q.deferred);
        q.retx.extend(d);
        let mut fired = false;
        let mut next: Option<Instant> = None;
        let out = q.outstanding();
        for k in 0..out {
            let psn = q.una.add(k);
            let s = *q.slot(psn);
            if s.acked || s.queued != Retx::No {
                continue;
            }
            let due = s.sent_at + q.backoff(s.retries);
            if due > now {
                next = Some(next.map_or(due, |n| n.min(due)));
                continue;
            }
            if let Some(limit) = q.retry_limit {
                if s.retries >= limit {
                    counters.rto_fired += 1;
                    return Some(s.wr_seq);
                }
            }
            if !fired {
                fired = true;
                q.cc.on_timeout(now);
            }
            let sl = q.slot_mut(psn);
            sl.retries += 1;
            sl.queued = Retx::Timeout;
            if sl.in_flight {
                sl.in_flight = false;
                q.in_flight -= s.len as u64;
            }
            q.retx.push_back(psn);
            // MRC 1.0 (not the legacy profile the RTL follows) marks an EV on "a timeout without a trim": after a
            // trim NACK of this QP (any EV) since the packet went out, the
            // fabric was congested enough to cut packets and likely dropped
            // what it could not even trim (a full header queue), which is
            // not the EV's fault. Any EV, not only the packet's: in an
            // incast the drops are at the destination's ToR and the links
            // into it, which the trimmed packets' paths share with it
            // (excusing the packet's own EV only left 5,651 EVs marked in
            // the 1023 -> 1 incast, against 2). A dead path among
            // congested ones is still found by stall inference.
            if D::EXCUSE_TIMEOUT_AFTER_TRIM && q.trim_nack_at.is_some_and(|t| t >= s.sent_at) {
                counters.rto_trim_excused += 1;
            } else {
                q.evs.on_timeout(s.ev_index, now);
            }
        }
        if fired {
            counters.rto_fired += 1;
        }
        q.rto_deadline = next;
        None
    }
}
