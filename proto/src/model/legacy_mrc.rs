//! The MRC queue pair of the legacy profile: the project's own MRC dialect
//! (RoCE RC opcodes, the BTH X bit, the `mrc_ext` extension headers) that
//! the RTL still implements. It is the golden model the RTL block tests and
//! the two-NIC co-simulation compare against, and nothing else uses it:
//! the project's MRC is [`super::mrc::MrcQp`], which speaks MRC 1.0. It
//! goes when the RTL speaks MRC 1.0.
//!
//! Its rules are those of `docs/model-mrc.md` with the legacy wire: 32-bit
//! ns timestamps and the service time in the SACK extension, EV indices
//! and per-EV sequence numbers on data packets, a 64-bit SACK bitmap (the
//! RTL's) starting at the in-order point.

use std::collections::VecDeque;

use bytes::Bytes;

use crate::model::api::*;
use crate::model::cc::{AckSample, CongestionControl};
use crate::model::ev::EvSet;
use crate::model::memory::MemoryTable;
use crate::model::received::{sack_base, ReceivedRing, RxInfo};
use crate::model::requester::{self, Retx, SendWr, Transmission};
use crate::model::timer::{self, Timer, Timers};
use crate::time::{Duration, Instant};
use crate::wire::{
    AethRepr, BthRepr, DataExtRepr, MrcExtRepr, NackExtRepr, NackKind, Opcode, Packet, PlacementRepr, ProbeExtRepr,
    RethRepr, RocePacket, SackBitmap, SackExtRepr, Syndrome,
};
use crate::Psn;

/// Work requests the send queue holds at most.
pub const SQ_DEPTH: usize = 1 << 16;
pub use crate::model::requester::RTO_MAX_SHIFT;

/// What only a legacy requester keeps beside the shared one.
#[derive(Debug, Default)]
struct LegacySending {
    /// The last reliability probe's id (wrapping).
    probe_id: u32,
}

impl requester::Dialect for LegacySending {
    const EXCUSE_TIMEOUT_AFTER_TRIM: bool = false;
}

/// Requester half (exists from RTS on).
type Requester = requester::Requester<LegacySending>;
/// WRITE-with-immediate completions the responder holds, fully received,
/// while no receive is posted. Beyond this, a further packet ending a
/// WRITE-IMM is dropped unacknowledged (the requester resends it later),
/// as in the RC baseline: without the cap a peer sending WRITE-IMMs to a
/// QP that posts no receives grows the held queue without bound.
pub const MAX_HELD_IMM: usize = 1 << 16;
/// SACK bitmap width of the legacy profile as the RTL implements it.
pub const LEGACY_SACK_BITS: u32 = 64;
/// AETH credit field meaning "no credit flow control".
const NO_CREDITS: u8 = 0x1F;

/// The packet a SACK reports on.
#[derive(Clone, Copy, Debug)]
struct Trigger {
    ev: u32,
    ev_index: u16,
    echo_ts: u32,
    arrival: Instant,
    psn: Psn,
}

/// Responder half (exists from RTR on).
#[derive(Debug)]
struct Responder {
    window: u32,
    expected: Psn,
    /// One past the highest PSN received (for gap detection).
    highest: Psn,
    /// Received PSNs not yet passed by the in-order point.
    rcvd: ReceivedRing,
    info: Vec<RxInfo>,
    /// Payload bytes of the message the in-order point is in (since its
    /// FIRST/ONLY).
    cur_msg_bytes: u64,
    /// The DMA length its FIRST/ONLY announced.
    cur_msg_len: u32,
    msn: u32,
    pending_imm: VecDeque<(u32, u32)>,
    rq: VecDeque<u64>,
    rq_cap: usize,
    unacked: u32,
    ack_deadline: Option<Instant>,
    sack_now: bool,
    trigger: Option<Trigger>,
    ecn_count: u32,
}

impl Responder {
    fn new(a: &RtrAttr) -> Responder {
        let window = a.mpr_units as u32 * MPR_UNIT;
        let rcvd = ReceivedRing::new(window);
        let size = rcvd.size();
        Responder {
            window,
            expected: a.rq_psn,
            highest: a.rq_psn,
            rcvd,
            info: vec![RxInfo::default(); size as usize],
            cur_msg_bytes: 0,
            cur_msg_len: 0,
            msn: 0,
            pending_imm: VecDeque::new(),
            rq: VecDeque::new(),
            rq_cap: (a.max_wimm as usize).max(1),
            unacked: 0,
            ack_deadline: None,
            sack_now: false,
            trigger: None,
            ecn_count: 0,
        }
    }
    /// The base of a SACK of `bits` PSNs ([`sack_base`]).
    fn sack_base(&self, bits: u32) -> Psn {
        sack_base(self.expected, self.window, self.trigger.map(|t| t.psn), bits)
    }
}

/// A control packet waiting to go out; probe responses get their service
/// time filled in when sent.
#[derive(Debug)]
struct Ctrl {
    pkt: RocePacket,
    arrival: Option<Instant>,
}

/// The MRC queue pair.
#[derive(Debug)]
pub struct LegacyMrcQp {
    cfg: QpConfig,
    state: QpState,
    memory: MemoryTable,
    counters: Counters,
    events: VecDeque<Event>,
    pkey: u16,
    dest_qp: u32,
    resp: Option<Box<Responder>>,
    req: Option<Box<Requester>>,
    ctrl: VecDeque<Ctrl>,
    /// Packets ending a WRITE-IMM dropped because [`MAX_HELD_IMM`]
    /// completions were already held.
    held_imm_dropped: u64,
}

fn ns32(now: Instant) -> u32 {
    now.as_ns() as u32
}

impl LegacyMrcQp {
    /// A QP in RST.
    pub fn new(cfg: QpConfig) -> Result<LegacyMrcQp, ModifyError> {
        validate_config(&cfg)?;
        Ok(LegacyMrcQp {
            cfg,
            state: QpState::Reset,
            memory: MemoryTable::default(),
            counters: Counters::default(),
            events: VecDeque::new(),
            pkey: 0xFFFF,
            dest_qp: 0,
            resp: None,
            req: None,
            ctrl: VecDeque::new(),
            held_imm_dropped: 0,
        })
    }

    /// Responder: the next in-order PSN expected (after RTR).
    pub fn expected_psn(&self) -> Option<Psn> {
        self.resp.as_ref().map(|r| r.expected)
    }

    /// Requester: the oldest unacknowledged PSN and the next new PSN.
    pub fn send_window(&self) -> Option<(Psn, Psn)> {
        self.req.as_ref().map(|q| (q.una, q.next_psn))
    }

    /// Requester: payload bytes in flight.
    pub fn in_flight(&self) -> u64 {
        self.req.as_ref().map_or(0, |q| q.in_flight)
    }

    /// Responder: WRITE-with-immediate completions waiting for a posted
    /// receive.
    pub fn held_recv_completions(&self) -> usize {
        self.resp.as_ref().map_or(0, |r| r.pending_imm.len())
    }

    /// Responder: packets ending a WRITE-IMM dropped unacknowledged because
    /// [`MAX_HELD_IMM`] completions were already held.
    pub fn held_imm_dropped(&self) -> u64 {
        self.held_imm_dropped
    }

    /// Responder: receives posted and not consumed.
    pub fn posted_recvs(&self) -> usize {
        self.resp.as_ref().map_or(0, |r| r.rq.len())
    }

    /// Requester: PSNs waiting for retransmission.
    pub fn retransmit_queue_len(&self) -> usize {
        self.req
            .as_ref()
            .map_or(0, |q| q.retx.iter().filter(|p| q.is_outstanding(**p)).count())
    }

    /// Requester: replace the congestion controller built from
    /// `RtsAttr::cc` (after RTS; returns false before). For experiments and
    /// tests with controllers `cc::build` does not know.
    pub fn set_congestion_control(&mut self, cc: Box<dyn CongestionControl>) -> bool {
        match self.req.as_mut() {
            Some(q) => {
                q.cc = cc;
                true
            }
            None => false,
        }
    }

    fn push_event(&mut self, e: Event) {
        if self.events.len() >= self.cfg.event_queue_len {
            self.counters.events_dropped += 1;
        } else {
            self.events.push_back(e);
        }
    }

    fn drain_ev_changes(&mut self) {
        while let Some(c) = self.req.as_mut().and_then(|q| q.evs.poll_change()) {
            self.push_event(Event::EvStateChanged(c));
        }
    }

    fn bth(&self, opcode: Opcode, psn: Psn, ack_req: bool, pad: u8) -> BthRepr {
        BthRepr {
            opcode,
            solicited: false,
            mig_req: true,
            pad,
            pkey: self.pkey,
            fecn: false,
            becn: false,
            mrc_ext: true,
            dest_qp: self.dest_qp,
            ack_req,
            psn,
        }
    }

    fn ack_packet(&self, ev: u32, psn: Psn, syndrome: Syndrome, msn: u32, ext: MrcExtRepr) -> RocePacket {
        RocePacket {
            ev,
            ecn_ce: false,
            trimmed: false,
            bth: self.bth(Opcode::Ack, psn, false, 0),
            reth: None,
            imm: None,
            aeth: Some(AethRepr { syndrome, msn }),
            ext: Some(ext),
            payload: Bytes::new(),
        }
    }

    /// Go to ERR: the request `failed` (by sequence number) completes with
    /// its status, every other outstanding one with `Flushed`, in order;
    /// posted receives are flushed too.
    fn enter_error(&mut self, failed: Option<(u64, WcStatus)>, autonomous: bool) {
        let from = self.state;
        self.state = QpState::Error;
        if let Some(q) = self.req.as_mut() {
            for c in q.flush(failed) {
                self.push_event(Event::SendCompleted(c));
            }
        }
        if let Some(r) = self.resp.as_mut() {
            let rq: Vec<u64> = r.rq.drain(..).collect();
            // No receive can be posted in ERR: held completions are dead.
            r.pending_imm.clear();
            r.ack_deadline = None;
            r.sack_now = false;
            for wr_id in rq {
                self.push_event(Event::RecvCompleted(Completion {
                    wr_id,
                    status: WcStatus::Flushed,
                    len: 0,
                    imm: None,
                }));
            }
        }
        self.ctrl.clear();
        if autonomous && from != QpState::Error {
            self.push_event(Event::StateChanged {
                from,
                to: QpState::Error,
            });
        }
    }

    // ------------------------------------------------------------ responder

    fn queue_nack(&mut self, pkt: &RocePacket, kind: NackKind, echo_ts: u32, ev_index: u16) {
        let (cum, msn) = match &self.resp {
            Some(r) => (r.expected.sub(1), r.msn),
            None => (Psn::new(0), 0),
        };
        let code = match kind {
            NackKind::RemoteAccess => Syndrome::NAK_REMOTE_ACCESS,
            NackKind::Trimmed | NackKind::OutOfWindow => Syndrome::NAK_PSN_SEQ_ERROR,
        };
        let ext = MrcExtRepr::Nack(NackExtRepr {
            kind,
            ev_index,
            cum_psn: cum,
            echo_ts,
        });
        let p = self.ack_packet(pkt.ev, pkt.bth.psn, Syndrome::Nak { code }, msn, ext);
        self.ctrl.push_back(Ctrl { pkt: p, arrival: None });
    }

    fn handle_data(&mut self, now: Instant, pkt: RocePacket) -> Result<(), RxError> {
        let op = pkt.bth.opcode;
        if !pkt.bth.mrc_ext {
            return Err(RxError::MissingHeader("BTH MRC extension bit"));
        }
        let ext = match pkt.ext {
            Some(MrcExtRepr::Data(d)) => d,
            Some(_) => return Err(RxError::Malformed("non-data MRC extension on a data packet")),
            None => return Err(RxError::MissingHeader("MRC data extension")),
        };
        let (va, rkey, first_len) = if op.has_reth() {
            let r = pkt.reth.ok_or(RxError::MissingHeader("RETH"))?;
            (r.va, r.rkey, Some(r.dma_len))
        } else {
            let p = ext.placement.ok_or(RxError::MissingHeader("placement"))?;
            (p.va, p.rkey, None)
        };
        if op.has_imm() && pkt.imm.is_none() {
            return Err(RxError::MissingHeader("ImmDt"));
        }
        let len = pkt.payload.len();
        if len > self.cfg.mtu as usize {
            return Err(RxError::Malformed("payload longer than the MTU"));
        }
        if let Some(l) = first_len {
            if l as u64 > MAX_MESSAGE_LEN {
                return Err(RxError::Malformed("RETH DMA length above 2 GiB"));
            }
            if op.is_last() && !pkt.trimmed && l as usize != len {
                return Err(RxError::Malformed(
                    "ONLY packet length differs from the RETH DMA length",
                ));
            }
        }
        let r = self.resp.as_mut().expect("responder exists in RTR/RTS");
        let psn = pkt.bth.psn;
        let dup = if psn.before(r.expected) {
            true
        } else if psn.offset_from(r.expected) < r.window {
            r.rcvd.contains(psn)
        } else {
            let expected = r.expected;
            self.queue_nack(&pkt, NackKind::OutOfWindow, ext.tx_ts, ext.ev_index);
            return Err(RxError::OutOfWindow { psn, expected });
        };
        let trigger = Trigger {
            ev: pkt.ev,
            ev_index: ext.ev_index,
            echo_ts: ext.tx_ts,
            arrival: now,
            psn,
        };
        if dup {
            self.counters.rx_duplicates += 1;
            r.trigger = Some(trigger);
            r.sack_now = true;
            return Ok(());
        }
        if pkt.trimmed {
            self.counters.rx_trimmed += 1;
            self.queue_nack(&pkt, NackKind::Trimmed, ext.tx_ts, ext.ev_index);
            return Ok(());
        }
        if op.has_imm() && r.pending_imm.len() >= MAX_HELD_IMM {
            // Nowhere to complete it (no receive posted, the held queue is
            // full): drop unacknowledged, the requester resends it.
            self.held_imm_dropped += 1;
            return Ok(());
        }
        if len > 0 {
            if let Err(_e) = self.memory.write(rkey, va, &pkt.payload) {
                self.queue_nack(&pkt, NackKind::RemoteAccess, ext.tx_ts, ext.ev_index);
                return Err(RxError::RemoteAccess {
                    rkey,
                    va,
                    len: len as u32,
                });
            }
        }
        let r = self.resp.as_mut().expect("responder exists in RTR/RTS");
        r.rcvd.insert(psn);
        let pos = r.rcvd.pos(psn);
        r.info[pos] = RxInfo {
            first_len,
            last: op.is_last(),
            imm: if op.has_imm() { pkt.imm } else { None },
            len: len as u32,
        };
        self.counters.rx_data_packets += 1;
        self.counters.rx_data_bytes += len as u64;
        if pkt.ecn_ce {
            self.counters.rx_ecn_ce += 1;
            r.ecn_count = r.ecn_count.saturating_add(1);
        }
        if psn != r.expected {
            self.counters.rx_out_of_order += 1;
        }
        let opens_gap = psn.after(r.highest);
        if !psn.before(r.highest) {
            r.highest = psn.next();
        }
        // Advance the in-order point.
        while r.rcvd.contains(r.expected) {
            let e = r.expected;
            r.rcvd.remove(e);
            let p = r.rcvd.pos(e);
            let info = std::mem::take(&mut r.info[p]);
            if let Some(l) = info.first_len {
                r.cur_msg_bytes = 0;
                r.cur_msg_len = l;
            }
            r.cur_msg_bytes = r.cur_msg_bytes.saturating_add(info.len as u64);
            if info.last {
                r.msn = (r.msn + 1) & 0xFF_FFFF;
                if let Some(imm) = info.imm {
                    // Equal for a well-behaved peer; never more than was
                    // announced or than was placed.
                    let len = r.cur_msg_bytes.min(r.cur_msg_len as u64) as u32;
                    r.pending_imm.push_back((imm, len));
                }
            }
            r.expected = e.next();
        }
        if r.highest.before(r.expected) {
            r.highest = r.expected;
        }
        r.trigger = Some(trigger);
        r.unacked += 1;
        if pkt.bth.ack_req || opens_gap || r.unacked >= self.cfg.ack_every as u32 {
            r.sack_now = true;
        } else if r.ack_deadline.is_none() {
            r.ack_deadline = Some(now + self.cfg.ack_delay);
        }
        self.deliver_recv_completions();
        Ok(())
    }

    fn deliver_recv_completions(&mut self) {
        loop {
            let Some(r) = self.resp.as_mut() else { return };
            if r.pending_imm.is_empty() || r.rq.is_empty() {
                return;
            }
            let (imm, len) = r.pending_imm.pop_front().expect("checked");
            let wr_id = r.rq.pop_front().expect("checked");
            self.counters.recv_completions += 1;
            self.push_event(Event::RecvCompleted(Completion {
                wr_id,
                status: WcStatus::Success,
                len,
                imm: Some(imm),
            }));
        }
    }

    fn build_sack(&mut self, now: Instant) -> RocePacket {
        let bits = LEGACY_SACK_BITS;
        let r = self.resp.as_mut().expect("responder exists");
        let base = r.sack_base(bits);
        let mut bitmap = SackBitmap::new(bits as u16);
        // Bits beyond the window are never valid (the ring aliases there).
        let valid = r.window.saturating_sub(base.offset_from(r.expected)).min(bits);
        for w in 0..(bits / 64) {
            let lo = w * 64;
            if lo >= valid {
                break;
            }
            let mut word = r.rcvd.bits64(base.add(lo));
            let n = valid - lo;
            if n < 64 {
                word &= (1u64 << n) - 1;
            }
            bitmap.words[w as usize] = word;
        }
        let t = r.trigger.unwrap_or(Trigger {
            ev: 0,
            ev_index: 0,
            echo_ts: 0,
            arrival: now,
            psn: r.expected,
        });
        let ext = SackExtRepr {
            ev_index: t.ev_index,
            ecn_ce_count: r.ecn_count.min(u16::MAX as u32) as u16,
            echo_ts: t.echo_ts,
            service_ns: now.saturating_since(t.arrival).as_ns().min(u32::MAX as u64) as u32,
            base,
            bitmap,
        };
        let (cum, msn) = (r.expected.sub(1), r.msn);
        r.unacked = 0;
        r.ack_deadline = None;
        r.sack_now = false;
        r.ecn_count = 0;
        self.counters.tx_acks += 1;
        self.ack_packet(
            t.ev,
            cum,
            Syndrome::Ack { credits: NO_CREDITS },
            msn,
            MrcExtRepr::Sack(ext),
        )
    }

    // ------------------------------------------------------------ requester

    fn handle_ack(&mut self, now: Instant, pkt: RocePacket) -> Result<(), RxError> {
        if !pkt.bth.mrc_ext {
            return Err(RxError::MissingHeader("BTH MRC extension bit"));
        }
        let aeth = pkt.aeth.ok_or(RxError::MissingHeader("AETH"))?;
        let ext = pkt.ext.ok_or(RxError::MissingHeader("MRC extension"))?;
        match ext {
            MrcExtRepr::Data(_) => Err(RxError::Malformed("data extension on an ACK")),
            MrcExtRepr::Probe(p) if !p.response => {
                // Answer on the EV it came on.
                let ext = MrcExtRepr::Probe(ProbeExtRepr {
                    response: true,
                    service_ns: 0,
                    ..p
                });
                let (cum, msn) = self
                    .resp
                    .as_ref()
                    .map_or((Psn::new(0), 0), |r| (r.expected.sub(1), r.msn));
                let resp = self.ack_packet(pkt.ev, cum, Syndrome::Ack { credits: NO_CREDITS }, msn, ext);
                self.ctrl.push_back(Ctrl {
                    pkt: resp,
                    arrival: Some(now),
                });
                Ok(())
            }
            _ if self.state != QpState::Rts => Err(RxError::BadState(self.state)),
            MrcExtRepr::Probe(p) => {
                let q = self.req.as_mut().expect("requester exists in RTS");
                if p.ev_index as usize >= q.evs.len() {
                    return Err(RxError::Malformed("probe response for an EV not in the set"));
                }
                let rtt_ns = ns32(now).wrapping_sub(p.tx_ts).wrapping_sub(p.service_ns);
                let rtt_ns = if (rtt_ns as i32) < 0 { 0 } else { rtt_ns as u64 };
                q.evs.on_probe_response(p.ev_index, now, Duration::from_ns(rtt_ns));
                self.counters.rx_probe_responses += 1;
                self.push_event(Event::ProbeRtt {
                    ev_index: p.ev_index,
                    rtt_ns,
                });
                Ok(())
            }
            MrcExtRepr::Sack(s) => {
                if !matches!(aeth.syndrome, Syndrome::Ack { .. }) {
                    return Err(RxError::Malformed("SACK without an ACK syndrome"));
                }
                self.handle_sack(now, pkt.bth.psn, &s)
            }
            MrcExtRepr::Nack(n) => {
                if !matches!(aeth.syndrome, Syndrome::Nak { .. }) {
                    return Err(RxError::Malformed("NACK without a NAK syndrome"));
                }
                self.handle_nack(now, pkt.bth.psn, &n)
            }
        }
    }

    fn handle_sack(&mut self, now: Instant, cum: Psn, s: &SackExtRepr) -> Result<(), RxError> {
        let q = self.req.as_mut().expect("requester exists in RTS");
        if !matches!(s.bitmap.bits, 64 | 128 | 256) {
            return Err(RxError::Malformed("SACK bitmap width not 64, 128 or 256"));
        }
        if s.ev_index as usize >= q.evs.len() {
            return Err(RxError::Malformed("SACK names an EV not in the set"));
        }
        let out = q.outstanding() as i64;
        // Cumulative part: PSNs una ..= cum.
        let d = cum.next().distance(q.una) as i64;
        if d > out {
            return Err(RxError::AckForUnsent(cum));
        }
        // Selective part: bit i is PSN base + i, i.e. una + db + i.
        let db = s.base.distance(q.una) as i64;
        let bits = s.bitmap.bits as i64;
        let lo = (-db).clamp(0, bits) as usize;
        let hi = (out - db).clamp(0, bits) as usize;
        if let Some(i) = ones(&s.bitmap, hi, bits as usize).next() {
            return Err(RxError::AckForUnsent(s.base.add(i as u32)));
        }
        self.counters.rx_acks += 1;
        let rtt = {
            let raw = ns32(now).wrapping_sub(s.echo_ts);
            if (raw as i32) >= 0 && raw >= s.service_ns {
                Some(Duration::from_ns((raw - s.service_ns) as u64))
            } else {
                None
            }
        };
        let ecn = s.ecn_ce_count > 0;
        let mut acked_bytes = 0u64;
        let mut sample = Some((s.ev_index, rtt, ecn));
        let una = q.una;
        for k in 0..d.max(0) as u32 {
            acked_bytes += ack_one(q, una.add(k), now, &mut sample);
        }
        for i in ones(&s.bitmap, lo, hi) {
            acked_bytes += ack_one(q, s.base.add(i as u32), now, &mut sample);
        }
        // Loss inference on every EV that saw an acknowledgement.
        let allowance = self.cfg.reorder_allowance.min(i32::MAX as u32) as i32;
        while let Some(ev) = q.touched.pop() {
            q.touched_flag[ev as usize] = false;
            let Some(max) = q.ev_max_acked[ev as usize] else {
                continue;
            };
            while let Some(&(seq, psn)) = q.ev_fifo[ev as usize].front() {
                if (max.wrapping_sub(seq) as i32) <= allowance {
                    break;
                }
                q.ev_fifo[ev as usize].pop_front();
                if !q.is_outstanding(psn) {
                    continue;
                }
                let sl = q.slot_mut(psn);
                if sl.acked || sl.ev_index != ev || sl.ev_seq != seq || sl.queued != Retx::No {
                    continue;
                }
                sl.queued = Retx::Loss;
                let len = sl.len as u64;
                if sl.in_flight {
                    sl.in_flight = false;
                    q.in_flight -= len;
                }
                q.retx.push_back(psn);
                q.evs.on_loss(ev, now);
                q.cc.on_loss(now, len);
            }
        }
        q.infer_stalls(now);
        if q.tail_deadline.is_none() && q.una != q.next_psn {
            // First RTT sample: the tail check can be armed now.
            if let Some(age) = q.evs.stall_age() {
                q.tail_deadline = Some(q.slot(q.una).sent_at + age);
            }
        }
        if acked_bytes > 0 || ecn {
            let in_flight = q.in_flight;
            q.cc.on_ack(
                now,
                AckSample {
                    acked_bytes,
                    rtt,
                    ecn_ce: s.ecn_ce_count as u32,
                    in_flight,
                    ..AckSample::default()
                },
            );
        }
        self.advance_una();
        Ok(())
    }

    fn advance_una(&mut self) {
        let q = self.req.as_mut().expect("requester exists");
        q.advance_una(&mut self.counters, &mut self.events, self.cfg.event_queue_len);
    }

    fn handle_nack(&mut self, now: Instant, psn: Psn, n: &NackExtRepr) -> Result<(), RxError> {
        let q = self.req.as_mut().expect("requester exists in RTS");
        if !q.is_outstanding(psn) {
            if psn.distance(q.una) >= 0 {
                return Err(RxError::AckForUnsent(psn));
            }
            // Stale: already acknowledged.
            self.counters.rx_nacks += 1;
            return Ok(());
        }
        self.counters.rx_nacks += 1;
        if nack_status(n.kind).is_some() {
            let seq = q.slot(psn).wr_seq;
            let status = nack_status(n.kind).expect("checked");
            self.enter_error(Some((seq, status)), true);
            return Ok(());
        }
        let i = (psn.value() & q.mask) as usize;
        if q.ring[i].acked || q.ring[i].queued != Retx::No {
            return Ok(());
        }
        if n.echo_ts != ns32(q.ring[i].sent_at) {
            // About an earlier transmission of a PSN resent since: the
            // newest copy is still in flight, on its own EV. Stale.
            return Ok(());
        }
        let len = q.ring[i].len as u64;
        let ev = q.ring[i].ev_index;
        if q.ring[i].in_flight {
            q.ring[i].in_flight = false;
            q.in_flight -= len;
        }
        match n.kind {
            NackKind::Trimmed => {
                q.ring[i].queued = Retx::Trim;
                q.retx.push_front(psn);
                q.cc.on_loss(now, len);
                q.trim_nack_at = Some(now);
                q.evs.on_trim(ev, now);
            }
            _ => {
                q.ring[i].queued = Retx::Window;
                q.deferred.push(psn);
                if q.rto_deadline.is_none() {
                    q.rto_deadline = Some(now + q.rto);
                }
            }
        }
        Ok(())
    }

    fn on_rto(&mut self, now: Instant) {
        let q = self.req.as_mut().expect("requester exists");
        if let Some(wr_seq) = q.on_rto(now, &mut self.counters) {
            self.enter_error(Some((wr_seq, WcStatus::RetryExceeded)), true);
        }
    }

    fn queue_probe(&mut self, now: Instant, ev_index: u16) {
        let Some(q) = self.req.as_mut() else { return };
        q.dialect.probe_id = q.dialect.probe_id.wrapping_add(1);
        let ext = MrcExtRepr::Probe(ProbeExtRepr {
            response: false,
            ev_index,
            probe_id: q.dialect.probe_id,
            tx_ts: ns32(now),
            service_ns: 0,
        });
        let ev = q.evs.value(ev_index);
        let psn = q.next_psn;
        let p = self.ack_packet(ev, psn, Syndrome::Ack { credits: NO_CREDITS }, 0, ext);
        self.ctrl.push_back(Ctrl { pkt: p, arrival: None });
    }

    /// Can a packet of `len` go now (window and pacing)? Records the pacing
    /// deadline when not.
    /// The next resend, built.
    fn next_retransmission(&mut self, now: Instant) -> Option<RocePacket> {
        let t = self.req.as_mut()?.take_resend(now, &mut self.counters)?;
        self.data_packet_of(&t, now, true)
    }

    /// The data packet of `t`, a first transmission or a resend.
    fn data_packet_of(&self, t: &Transmission, now: Instant, resent: bool) -> Option<RocePacket> {
        let q = self.req.as_ref()?;
        let wr = &q.sq[(t.wr_seq - q.sq_head_seq) as usize];
        let h = Hdr {
            mtu: self.cfg.mtu,
            pkey: self.pkey,
            dest_qp: self.dest_qp,
        };
        let ev_value = q.evs.value(t.ev);
        Some(data_packet(&h, wr, t.seg, t.psn, t.ev, ev_value, t.ev_seq, now, resent))
    }
}

impl LegacyMrcQp {
    fn next_new_packet(&mut self, now: Instant) -> Option<RocePacket> {
        let mtu = self.cfg.mtu;
        let q = self.req.as_mut()?;
        let window = q.window;
        let t = q.take_new_segment(now, mtu, window, &mut self.counters)?;
        self.data_packet_of(&t, now, false)
    }
}

/// Mark `psn` acknowledged; returns the newly acknowledged bytes. The first
/// newly acknowledged packet on the SACK's EV carries its RTT/ECN sample.
fn ack_one(q: &mut Requester, psn: Psn, now: Instant, sample: &mut Option<(u16, Option<Duration>, bool)>) -> u64 {
    let sl = q.slot_mut(psn);
    if sl.acked {
        return 0;
    }
    sl.acked = true;
    let (len, ev, seq, resent, sent_at) = (sl.len as u64, sl.ev_index, sl.ev_seq, sl.resent, sl.sent_at);
    if sl.in_flight {
        sl.in_flight = false;
        q.in_flight -= len;
    }
    q.acked_total += 1;
    match *sample {
        Some((sev, rtt, ecn)) if sev == ev => {
            q.evs.on_ack(ev, now, rtt, ecn);
            *sample = None;
        }
        _ => q.evs.on_ack(ev, now, None, false),
    }
    if let Some((probed, repeated_sent_at)) = q.probe_evidence {
        if probed == psn {
            q.probe_evidence = None;
            if q.acked_sent_hw.is_none_or(|t| repeated_sent_at > t) {
                q.acked_sent_hw = Some(repeated_sent_at);
            }
        }
    }
    if resent {
        // Which transmission arrived is unknown: no loss inference from it.
        return len;
    }
    if q.acked_sent_hw.is_none_or(|t| sent_at > t) {
        q.acked_sent_hw = Some(sent_at);
    }
    let m = &mut q.ev_max_acked[ev as usize];
    match *m {
        Some(x) if (seq.wrapping_sub(x) as i32) <= 0 => {}
        _ => *m = Some(seq),
    }
    if !q.touched_flag[ev as usize] {
        q.touched_flag[ev as usize] = true;
        q.touched.push(ev);
    }
    len
}

/// Set bits of `b` with index in `[lo, hi)`, ascending. Word by word with
/// `trailing_zeros`: `bitvec`'s `iter_ones` over the same bits was the
/// largest single cost of the bitvec variant (docs/benchmarks.md, "bit
/// sets").
fn ones(b: &SackBitmap, lo: usize, hi: usize) -> impl Iterator<Item = usize> + '_ {
    let hi = hi.min(b.bits as usize);
    let lo = lo.min(hi);
    (lo / 64..hi.div_ceil(64)).flat_map(move |w| {
        let mut word = b.words[w];
        let start = w * 64;
        if lo > start {
            word &= !0u64 << (lo - start);
        }
        if hi < start + 64 {
            word &= (1u64 << (hi - start)) - 1;
        }
        std::iter::from_fn(move || {
            if word == 0 {
                None
            } else {
                let t = word.trailing_zeros() as usize;
                word &= word - 1;
                Some(start + t)
            }
        })
    })
}

/// Header facts every data packet shares.
struct Hdr {
    mtu: u32,
    pkey: u16,
    dest_qp: u32,
}

/// Packet `seg` of `wr` (first transmission or retransmission).
#[allow(clippy::too_many_arguments)]
fn data_packet(
    h: &Hdr,
    wr: &SendWr,
    seg: u32,
    psn: Psn,
    ev_index: u16,
    ev_value: u32,
    ev_seq: u32,
    now: Instant,
    retransmit: bool,
) -> RocePacket {
    let off = seg as u64 * h.mtu as u64;
    let total = wr.data.len() as u64;
    let end = (off + h.mtu as u64).min(total);
    let single = wr.npkts == 1;
    let first = seg == 0;
    let last = seg + 1 == wr.npkts;
    let imm = wr.imm.is_some();
    let opcode = match (single, first, last, imm) {
        (true, _, _, false) => Opcode::WriteOnly,
        (true, _, _, true) => Opcode::WriteOnlyImm,
        (false, true, _, _) => Opcode::WriteFirst,
        (false, false, true, false) => Opcode::WriteLast,
        (false, false, true, true) => Opcode::WriteLastImm,
        (false, false, false, _) => Opcode::WriteMiddle,
    };
    let va = wr.remote_va.wrapping_add(off);
    let reth = opcode.has_reth().then_some(RethRepr {
        va,
        rkey: wr.rkey,
        dma_len: total as u32,
    });
    let placement = (!opcode.has_reth()).then_some(PlacementRepr { va, rkey: wr.rkey });
    let payload = wr.data.slice(off as usize..end as usize);
    let pad = ((4 - payload.len() % 4) % 4) as u8;
    RocePacket {
        ev: ev_value,
        ecn_ce: false,
        trimmed: false,
        bth: BthRepr {
            opcode,
            solicited: false,
            mig_req: true,
            pad,
            pkey: h.pkey,
            fecn: false,
            becn: false,
            mrc_ext: true,
            dest_qp: h.dest_qp,
            ack_req: last,
            psn,
        },
        reth,
        imm: if opcode.has_imm() { wr.imm } else { None },
        aeth: None,
        ext: Some(MrcExtRepr::Data(DataExtRepr {
            ev_index,
            retransmit,
            ev_seq,
            tx_ts: ns32(now),
            msg_offset: off as u32,
            placement,
        })),
        payload,
    }
}

impl Timers for LegacyMrcQp {
    const FIRING_ORDER: &'static [Timer] = &[
        Timer::Ack,
        Timer::Pacing,
        Timer::CongestionControl,
        Timer::TailCheck,
        Timer::Retransmit,
        Timer::Probe,
    ];

    fn deadline(&self, timer: Timer) -> Option<Instant> {
        if !self.state.can_receive() {
            return None;
        }
        // The requester's timers run in RTS only.
        let q = self.req.as_ref().filter(|_| self.state == QpState::Rts);
        match timer {
            Timer::Ack => self.resp.as_ref()?.ack_deadline,
            Timer::Pacing => q?.paced_until,
            Timer::CongestionControl => q?.cc.next_timer(),
            Timer::TailCheck => q?.tail_deadline,
            Timer::Retransmit => q?.rto_deadline,
            Timer::Probe => q?.evs.next_probe_deadline(),
        }
    }

    fn fire(&mut self, timer: Timer, now: Instant) {
        match timer {
            Timer::Ack => {
                let r = self.resp.as_mut().expect("the ACK timer runs on a responder");
                r.ack_deadline = None;
                r.sack_now = true;
            }
            Timer::Pacing => self.req.as_mut().expect("requester exists in RTS").paced_until = None,
            Timer::CongestionControl => self.req.as_mut().expect("requester exists in RTS").cc.on_timer(now),
            Timer::TailCheck => self.req.as_mut().expect("requester exists in RTS").on_tail_check(now),
            Timer::Retransmit => self.on_rto(now),
            Timer::Probe => {
                let n = self.req.as_ref().map_or(0, |q| q.evs.len());
                for _ in 0..n {
                    let Some(ev) = self.req.as_mut().and_then(|q| q.evs.probe_due(now)) else {
                        break;
                    };
                    self.queue_probe(now, ev);
                }
            }
        }
    }
}

impl LegacyMrcQp {
    /// The next packet to send (what `poll_transmit` wraps).
    fn poll_roce(&mut self, now: Instant) -> Option<RocePacket> {
        if !self.state.can_receive() {
            return None;
        }
        if let Some(mut c) = self.ctrl.pop_front() {
            if let Some(MrcExtRepr::Probe(p)) = &mut c.pkt.ext {
                if p.response {
                    let at = c.arrival.unwrap_or(now);
                    p.service_ns = now.saturating_since(at).as_ns().min(u32::MAX as u64) as u32;
                    self.counters.tx_acks += 1;
                } else {
                    p.tx_ts = ns32(now);
                    self.counters.tx_probes += 1;
                }
            } else {
                self.counters.tx_nacks += 1;
            }
            return Some(c.pkt);
        }
        if self.resp.as_ref().is_some_and(|r| r.sack_now) {
            return Some(self.build_sack(now));
        }
        if self.state != QpState::Rts {
            return None;
        }
        if let Some(p) = self.next_retransmission(now) {
            return Some(p);
        }
        let p = self.next_new_packet(now);
        self.drain_ev_changes();
        p
    }
}

impl QueuePair for LegacyMrcQp {
    fn config(&self) -> &QpConfig {
        &self.cfg
    }

    fn state(&self) -> QpState {
        self.state
    }

    fn modify(&mut self, _now: Instant, t: QpTransition) -> Result<(), ModifyError> {
        let to = check_transition(self.state, &t)?;
        match t {
            QpTransition::Init(a) => self.pkey = a.pkey,
            QpTransition::Rtr(a) => {
                validate_rtr(&a)?;
                self.dest_qp = a.dest_qp & 0xFF_FFFF;
                self.resp = Some(Box::new(Responder::new(&a)));
            }
            QpTransition::Rts(a) => {
                validate_rts(&a)?;
                let evs = EvSet::new(a.evs.clone())?;
                self.req = Some(Box::new(Requester::new(a, evs, LegacySending::default())));
            }
            QpTransition::Error => {
                self.enter_error(None, false);
                return Ok(());
            }
            QpTransition::Reset => {
                self.resp = None;
                self.req = None;
                self.ctrl.clear();
                self.events.clear();
                self.counters = Counters::default();
                self.pkey = 0xFFFF;
                self.dest_qp = 0;
                self.held_imm_dropped = 0;
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

    fn post_write(&mut self, _now: Instant, wr: WriteRequest) -> Result<(), PostError> {
        let len = wr.data.len() as u64;
        check_post_write(self.state, len, || QueueFill {
            len: self.req.as_ref().expect("requester exists in RTS").sq.len(),
            capacity: SQ_DEPTH,
        })?;
        let q = self.req.as_mut().expect("requester exists in RTS");
        let npkts = (len.div_ceil(self.cfg.mtu as u64)).max(1) as u32;
        q.sq.push_back(SendWr {
            wr_id: wr.wr_id,
            data: wr.data,
            remote_va: wr.remote_va,
            rkey: wr.rkey,
            imm: wr.imm,
            // The legacy dialect carries no RQMSN.
            rq_msn: 0,
            first_psn: Psn::new(0),
            npkts,
            segmented: 0,
        });
        Ok(())
    }

    fn post_recv(&mut self, wr_id: u64) -> Result<(), PostError> {
        check_post_recv(self.state, || {
            let r = self.resp.as_ref().expect("responder exists in RTR/RTS");
            QueueFill {
                len: r.rq.len(),
                capacity: r.rq_cap,
            }
        })?;
        let r = self.resp.as_mut().expect("responder exists in RTR/RTS");
        r.rq.push_back(wr_id);
        self.deliver_recv_completions();
        Ok(())
    }

    fn count_drop(&mut self, e: &RxError) {
        self.counters.count_drop(e);
    }

    fn handle_packet(&mut self, now: Instant, pkt: Packet) -> Result<(), RxError> {
        let pkt = match pkt {
            Packet::Roce(p) => p,
            Packet::Mrc10(p) => {
                let e = RxError::WrongProtocol {
                    opcode: p.bth.opcode.as_u8(),
                    expected: "the legacy MRC profile",
                };
                self.counters.count_drop(&e);
                return Err(e);
            }
        };
        let r = if pkt.bth.dest_qp != self.cfg.qpn {
            Err(RxError::WrongQp {
                expected: self.cfg.qpn,
                got: pkt.bth.dest_qp,
            })
        } else if !self.state.can_receive() {
            Err(RxError::BadState(self.state))
        } else {
            match pkt.bth.opcode {
                Opcode::Ack => self.handle_ack(now, pkt),
                Opcode::Cnp => match self.req.as_mut() {
                    Some(q) if self.state == QpState::Rts => {
                        q.cc.on_cnp(now);
                        self.counters.rx_cnps += 1;
                        Ok(())
                    }
                    _ => Err(RxError::UnexpectedOpcode(Opcode::Cnp)),
                },
                _ => self.handle_data(now, pkt),
            }
        };
        if let Err(e) = &r {
            self.counters.count_drop(e);
        }
        self.drain_ev_changes();
        r
    }

    fn handle_timeout(&mut self, now: Instant) {
        timer::handle_timeout(self, now);
        self.drain_ev_changes();
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        self.poll_roce(now).map(Packet::Roce)
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
        self.req.as_ref().map(|q| &q.evs)
    }

    fn deny_evs(&mut self, now: Instant, mask: u32, value: u32) -> usize {
        let n = self.req.as_mut().map_or(0, |q| q.evs.deny(mask, value, now));
        self.drain_ev_changes();
        n
    }

    fn allow_evs(&mut self, now: Instant, mask: u32, value: u32) -> usize {
        let n = self.req.as_mut().map_or(0, |q| q.evs.allow(mask, value, now));
        self.drain_ev_changes();
        n
    }

    fn probe_ev(&mut self, now: Instant, ev_index: u16) -> bool {
        if self.state != QpState::Rts {
            return false;
        }
        match &self.req {
            Some(q) if (ev_index as usize) < q.evs.len() => {
                self.queue_probe(now, ev_index);
                true
            }
            _ => false,
        }
    }
}
