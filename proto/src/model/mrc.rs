//! The MRC queue pair: the golden model of Multipath Reliable Connection.
//!
//! One [`MrcQp`] is requester and responder at once. `docs/model-mrc.md` is
//! the prose half of this file: every rule below is stated there as a spec.
//!
//! Requester: WRITE / WRITE-with-immediate requests are segmented into MTU
//! packets and sprayed over the EV set; every outstanding packet lives in a
//! ring indexed by PSN (no hashing, no per-packet allocation); SACKs mark
//! packets acknowledged; a packet is inferred lost when a packet sent later
//! on the same EV has been acknowledged (beyond the reorder allowance); lost,
//! trimmed and timed-out packets are resent on another EV; completions are
//! reported strictly in posting order.
//!
//! Responder: data packets inside the MPR window are placed at once, in any
//! order, at the VA they carry; a bitmap of received PSNs drives the in-order
//! point, WRITE-with-immediate receive completions (in PSN order) and
//! coalesced SACKs.

use std::collections::VecDeque;

use crate::model::api::*;
use crate::model::cc::{AckSample, CongestionControl};
use crate::model::ev::{EvSet, EvSetConfig};
use crate::model::memory::MemoryTable;
use crate::model::received::{sack_base, ReceivedRing, RxInfo};
use crate::model::requester::{self, Retx, SendWr, Transmission};
use crate::model::reverse_ev::{ReverseEvConfig, ReverseEvs};
use crate::model::timer::{self, Timer, Timers};
use crate::time::{Duration, Instant};
use crate::wire::mrc10::choices::{self, TrafficClass};
use crate::wire::mrc10::seth::{self, SkipMode};
use crate::wire::mrc10::{
    BthRepr, CcStateRepr, Headers, MethRepr, Mrc10Packet, NackReason, NethRepr, Opcode, PethRepr, SethRepr, TsethRepr,
    WriteHeaders,
};
use crate::wire::packet::ECN_ECT0;
use crate::wire::{AethRepr, NackKind, Packet, RethRepr, Syndrome};
use crate::Psn;

/// Work requests the send queue holds at most.
pub const SQ_DEPTH: usize = 1 << 16;
pub use crate::model::requester::RTO_MAX_SHIFT;

/// What only an MRC 1.0 requester keeps beside the shared one.
#[derive(Debug, Default)]
struct Mrc10Sending {
    /// WRITE-with-immediate messages posted so far (wrapping; the next
    /// one's RQMSN).
    imm_posted: u16,
    /// The receiver's window as its SACKs advertise it (MPR field, in
    /// PSNs): new PSNs stay inside it as well as inside `window` (dynamic
    /// MPR). `None` until the first SACK.
    peer_window: Option<u32>,
}

impl requester::Dialect for Mrc10Sending {
    const EXCUSE_TIMEOUT_AFTER_TRIM: bool = true;
}

/// Requester half (exists from RTS on).
type Requester = requester::Requester<Mrc10Sending>;
/// WRITE-with-immediate completions the responder holds, fully received,
/// while no receive is posted. Beyond this, a further packet ending a
/// WRITE-IMM is dropped unacknowledged (the requester resends it later),
/// as in the RC baseline: without the cap a peer sending WRITE-IMMs to a
/// QP that posts no receives grows the held queue without bound.
pub const MAX_HELD_IMM: usize = 1 << 16;

/// Per-PSN entries a responder's reorder table starts with (it grows with
/// the PSN span received beyond the in-order point).
const RX_INFO_MIN: usize = 16;

/// The packet a SACK reports on.
#[derive(Clone, Copy, Debug)]
struct Trigger {
    ev: u32,
    /// It arrived ECN-CE marked (the SACK asks the sender to SKIP its EV).
    ce: bool,
    /// Its TSETH transmit timestamp, echoed in CC_STATE.
    echo_ts: u16,
    /// The timestamp counts [`choices::TS_UNIT_NS`] units (its resolution
    /// bit says so): the echo can carry the service time.
    known_unit: bool,
    arrival: Instant,
    psn: Psn,
}

/// What a SACK answering a reliability probe says about the probe (SETH
/// pr = 1).
#[derive(Clone, Copy, Debug)]
struct ProbeAnswer {
    ev: u32,
    probe_id: u16,
    /// The PETH timestamp, echoed.
    echo_ts: u16,
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
    /// Per-PSN facts by `psn & info_mask`: starts at `RX_INFO_MIN` entries
    /// and doubles (up to the bitmap's size) when a PSN lands beyond it.
    info: Vec<RxInfo>,
    info_mask: u32,
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
    /// Packets received out of order since the last SACK (CC_STATE).
    ooo_count: u16,
    /// The lowest and one past the highest PSN placed since the last SACK.
    unreported: Option<(Psn, Psn)>,
    /// PSNs `[from, to)` that placed packets may occupy and that the SACKs
    /// sent so far did not cover: one 64-bit bitmap reports 64 PSNs, so
    /// a burst placed between two SACKs can need more than one.
    backlog: Option<(Psn, Psn)>,
    /// Payload bytes received (wrapping; CC_STATE carries 24 bits).
    rcvd_bytes: u32,
    /// The EVs SACKs and NACKs travel on.
    reverse: ReverseEvs,
    /// The cwnd penalty SACKs carry (CC_STATE), set by the receiving
    /// host ([`QueuePair::set_receive_penalty`]).
    cwnd_penalty: u8,
    /// The penalty went back to 0: the next SACK sets the restore bit.
    restore_due: bool,
}

impl Responder {
    fn new(a: &RtrAttr, reverse: ReverseEvConfig) -> Responder {
        let window = a.mpr_units as u32 * MPR_UNIT;
        let rcvd = ReceivedRing::new(window);
        let size = rcvd.size();
        Responder {
            window,
            expected: a.rq_psn,
            highest: a.rq_psn,
            rcvd,
            info: vec![RxInfo::default(); (size as usize).min(RX_INFO_MIN)],
            info_mask: (size.min(RX_INFO_MIN as u32)) - 1,
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
            ooo_count: 0,
            unreported: None,
            backlog: None,
            rcvd_bytes: 0,
            reverse: ReverseEvs::new(reverse),
            cwnd_penalty: 0,
            restore_due: false,
        }
    }
    /// The facts slot of `psn` (`expected <= psn < expected + window`),
    /// growing the table (re-placing the entries from `expected` on) when
    /// `psn` lies beyond it.
    fn info_mut(&mut self, psn: Psn) -> &mut RxInfo {
        let off = psn.offset_from(self.expected) as usize;
        let max = self.rcvd.size() as usize;
        while off >= self.info.len() && self.info.len() < max {
            let size = self.info.len() * 2;
            let mask = size as u32 - 1;
            let mut info = vec![RxInfo::default(); size];
            for k in 0..self.info.len() as u32 {
                let p = self.expected.add(k);
                info[(p.value() & mask) as usize] = self.info[(p.value() & self.info_mask) as usize];
            }
            self.info = info;
            self.info_mask = mask;
        }
        let m = self.info_mask;
        &mut self.info[(psn.value() & m) as usize]
    }
    /// The base of a SACK of `bits` PSNs ([`sack_base`]).
    fn sack_base(&self, bits: u32) -> Psn {
        sack_base(self.expected, self.window, self.trigger.map(|t| t.psn), bits)
    }
}

/// A control packet waiting to go out (NACKs, probes, probe answers,
/// fatal-error ACKs); a probe gets its timestamp when sent.
#[derive(Debug)]
struct Ctrl {
    pkt: Mrc10Packet,
}

/// The MRC queue pair.
#[derive(Debug)]
pub struct MrcQp {
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

use choices::ts16;

/// Time since the TSETH clock read `ts`: exact to one unit while it is less
/// than one wrap ([`choices::TS_RANGE_NS`]) old.
fn ts_age(now: Instant, ts: u16) -> Duration {
    Duration::from_ns(u64::from(ts16(now).wrapping_sub(ts)) * choices::TS_UNIT_NS)
}

/// What an acknowledgement says to congestion control besides the PSNs.
#[derive(Clone, Copy, Debug, Default)]
struct Feedback {
    /// The RTT sample of its trigger packet.
    rtt: Option<Duration>,
    /// CE-marked packets since the previous SACK.
    ce: u32,
    /// CC_STATE: the receiver's cwnd penalty and restore bit.
    cwnd_penalty: u8,
    restore: bool,
}

impl MrcQp {
    /// A QP in RST.
    pub fn new(cfg: QpConfig) -> Result<MrcQp, ModifyError> {
        validate_config(&cfg)?;
        // (The legacy profile's QPs, the RTL's reference, number QPs as
        // the hardware does; only MRC 1.0 reserves 0x2.)
        if cfg.qpn == choices::ENDPOINT_QPN {
            return Err(ModifyError::BadAttribute {
                name: "qpn",
                why: "0x2 is MRC 1.0's endpoint QPN, not a queue pair's".into(),
            });
        }
        Ok(MrcQp {
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

    /// Requester: the congestion controller's name and window, bytes
    /// (`None` before RTS).
    pub fn congestion_window(&self) -> Option<(&'static str, u64)> {
        self.req.as_ref().map(|q| (q.cc.name(), q.cc.window()))
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

    /// A control packet (class CONTROL, no payload) to the peer on EV `ev`.
    fn control_packet(&self, ev: u32, opcode: Opcode, psn: Psn, headers: Headers) -> Mrc10Packet {
        Mrc10Packet::control(ev, opcode, self.pkey, self.dest_qp, psn, headers)
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

    /// NACK the data packet `pkt` (its TSETH timestamp `echo_ts`): a NETH
    /// with `reason`.
    fn queue_nack(&mut self, pkt: &Mrc10Packet, reason: NackReason, echo_ts: u16) {
        let neth = NethRepr {
            reason,
            vendor_info: 0,
            ev: pkt.ev,
            sender_context: choices::context_of(self.cfg.qpn),
            receiver_context: choices::context_of(self.dest_qp),
            nack_psn: pkt.bth.psn,
            cc_type: choices::CC_TYPE_NSCC,
            cc_flags: 0,
            timestamp: echo_ts,
        };
        let travel = self.resp.as_mut().map_or(pkt.ev, |r| r.reverse.pick(pkt.ev));
        let p = self.control_packet(travel, Opcode::Nack, pkt.bth.psn, Headers::Nack(neth));
        self.ctrl.push_back(Ctrl { pkt: p });
    }

    /// Answer `pkt` with an ACK whose AETH carries a fatal NAK syndrome
    /// (remote access error). MRC 1.0's NACK reasons are all recoverable;
    /// a fatal error goes as its RC counterpart does, in an AETH.
    fn queue_fatal_ack(&mut self, pkt: &Mrc10Packet, code: u8) {
        let msn = self.resp.as_ref().map_or(0, |r| r.msn);
        let aeth = AethRepr {
            syndrome: Syndrome::Nak { code },
            msn,
        };
        let p = self.control_packet(pkt.ev, Opcode::Ack, pkt.bth.psn, Headers::Ack(aeth));
        self.ctrl.push_back(Ctrl { pkt: p });
    }

    fn handle_data(&mut self, now: Instant, pkt: Mrc10Packet) -> Result<(), RxError> {
        let op = pkt.bth.opcode;
        let Headers::Write(w) = pkt.headers else {
            return Err(RxError::MissingHeader("METH and RETH"));
        };
        // RETH on every data packet: this packet's VA; the message length.
        let (va, rkey) = (w.reth.va, w.reth.rkey);
        let first_len = op.is_first().then_some(w.reth.dma_len);
        if op.has_imm() != w.imm.is_some() {
            return Err(RxError::MissingHeader("ImmDt"));
        }
        // Without a TSETH there is nothing to echo; 0 (the sender that
        // leaves it out gets no RTT sample from it).
        let echo_ts = w.tseth.map_or(0, |t| t.tx_ts);
        // The echo carries our service time only for a peer that has
        // SVC_TIME (one without it would take the advanced echo for a
        // shorter network RTT than it can account for).
        let known_unit = self.cfg.peer_caps.svc_time && w.tseth.is_some_and(|t| t.resolution == choices::TS_RESOLUTION);
        let trimmed = pkt.trimmed();
        let len = pkt.payload.len();
        if len > self.cfg.mtu as usize {
            return Err(RxError::Malformed("payload longer than the MTU"));
        }
        if let Some(l) = first_len {
            if l as u64 > MAX_MESSAGE_LEN {
                return Err(RxError::Malformed("RETH DMA length above 2 GiB"));
            }
            if op.is_last() && !trimmed && l as usize != len {
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
            self.queue_nack(&pkt, NackReason::PsnOorWindow, echo_ts);
            return Err(RxError::OutOfWindow { psn, expected });
        };
        let trigger = Trigger {
            ev: pkt.ev,
            ce: pkt.ecn_ce(),
            echo_ts,
            known_unit,
            arrival: now,
            psn,
        };
        if dup {
            self.counters.rx_duplicates += 1;
            // A resent packet: the requester missed acknowledgements.
            if r.reverse.evict() {
                self.counters.reverse_evictions += 1;
            }
            r.reverse.learn(pkt.ev);
            r.trigger = Some(trigger);
            r.sack_now = true;
            return Ok(());
        }
        r.reverse.learn(pkt.ev);
        if trimmed {
            self.counters.rx_trimmed += 1;
            let reason = if pkt.class == TrafficClass::TrimmedLastHop {
                NackReason::TrimmedLastHop
            } else {
                NackReason::Trimmed
            };
            self.queue_nack(&pkt, reason, echo_ts);
            return Ok(());
        }
        if op.has_imm() && r.pending_imm.len() >= MAX_HELD_IMM {
            // Nowhere to complete it (no receive posted, the held queue is
            // full): drop unacknowledged, the requester resends it.
            self.held_imm_dropped += 1;
            return Ok(());
        }
        if len > 0 {
            if let Err(_e) = self.memory.write_bytes(rkey, va, &pkt.payload) {
                self.queue_fatal_ack(&pkt, Syndrome::NAK_REMOTE_ACCESS);
                return Err(RxError::RemoteAccess {
                    rkey,
                    va,
                    len: len as u32,
                });
            }
        }
        let r = self.resp.as_mut().expect("responder exists in RTR/RTS");
        r.rcvd.insert(psn);
        r.unreported = Some(match r.unreported {
            Some((lo, hi)) => (
                if psn.before(lo) { psn } else { lo },
                if psn.before(hi) { hi } else { psn.next() },
            ),
            None => (psn, psn.next()),
        });
        *r.info_mut(psn) = RxInfo {
            first_len,
            last: op.is_last(),
            imm: w.imm,
            len: len as u32,
        };
        self.counters.rx_data_packets += 1;
        self.counters.rx_data_bytes += len as u64;
        r.rcvd_bytes = r.rcvd_bytes.wrapping_add(len as u32);
        if pkt.ecn_ce() {
            self.counters.rx_ecn_ce += 1;
            r.ecn_count = r.ecn_count.saturating_add(1);
        }
        if psn != r.expected {
            self.counters.rx_out_of_order += 1;
            r.ooo_count = r.ooo_count.saturating_add(1);
        }
        let opens_gap = psn.after(r.highest);
        if !psn.before(r.highest) {
            r.highest = psn.next();
        }
        // Advance the in-order point.
        while r.rcvd.contains(r.expected) {
            let e = r.expected;
            r.rcvd.remove(e);
            let info = std::mem::take(r.info_mut(e));
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
        let marked = choices::sack_at_once_for(pkt.ecn_ce());
        if pkt.bth.ack_req || opens_gap || marked || r.unacked >= self.cfg.ack_every as u32 {
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

    /// A SACK of the receive state: cumulative ack, the 64-bit bitmap
    /// around the triggering packet, CC_STATE. With `probe`, the SACK
    /// answers a reliability probe (pr = 1, the probe id in
    /// ack_psn_offset, the probe's timestamp echoed).
    fn build_sack(&mut self, now: Instant, probe: Option<ProbeAnswer>) -> Mrc10Packet {
        let bits = seth::BITMAP_BITS;
        let (qpn, dest_qp) = (self.cfg.qpn, self.dest_qp);
        let r = self.resp.as_mut().expect("responder exists");
        // The first SACK after new packets starts at `expected` (the holes
        // the requester must learn about, reported again by every such
        // SACK, so a lost SACK costs nothing); what it cannot name of the
        // packets placed since the last SACK follows in more SACKs,
        // lowest first (`backlog`).
        let lower = |a: Psn, b: Psn| if a.before(b) { a } else { b };
        let higher = |a: Psn, b: Psn| if a.before(b) { b } else { a };
        let expected = r.expected;
        let clip = |(from, to): (Psn, Psn)| Some((higher(from, expected), to)).filter(|(f, t)| f.before(*t));
        let backlog = if probe.is_some() {
            None
        } else {
            r.backlog.and_then(clip)
        };
        let pending = match (backlog, r.unreported) {
            (Some((f1, t1)), Some((f2, t2))) => Some((lower(f1, f2), higher(t1, t2))),
            (b, u) => b.or(u),
        }
        .and_then(clip);
        let base = match (backlog, r.unreported) {
            (Some((from, _)), _) => from,
            (None, Some(_)) => expected,
            (None, None) => r.sack_base(bits),
        };
        // Bits beyond the window are never valid (the ring aliases there).
        let valid = r.window.saturating_sub(base.offset_from(r.expected)).min(bits);
        let mut bitmap = if valid == 0 { 0 } else { r.rcvd.bits64(base) };
        if valid < bits {
            bitmap &= (1u64 << valid) - 1;
        }
        let cum = r.expected.sub(1);
        let offset = |psn: Psn| psn.distance(cum).clamp(i16::MIN as i32, i16::MAX as i32) as i16;
        let (ev, ack_psn_offset, echo_ts) = match (probe, r.trigger) {
            (Some(p), _) => (p.ev, p.probe_id as i16, p.echo_ts),
            (None, Some(t)) => (
                t.ev,
                offset(t.psn),
                choices::echo_with_service_time(t.echo_ts, t.known_unit, now.saturating_since(t.arrival).as_ns()),
            ),
            (None, None) => (0, 0, 0),
        };
        let skip_mode = match (probe, r.trigger) {
            (None, Some(t)) => choices::skip_mode_for(t.ce),
            _ => SkipMode::None,
        };
        let seth = SethRepr {
            skip_mode,
            probe_response: probe.is_some(),
            ack_psn_offset,
            ev,
            sender_context: choices::context_of(qpn),
            receiver_context: choices::context_of(dest_qp),
            cum_ack_psn: cum,
            cc_type: choices::CC_TYPE_NSCC,
            cc_flags: choices::cc_flags_from_ce_count(r.ecn_count),
            mpr: (r.window / MPR_UNIT).min(u8::MAX as u32) as u8,
            sack_offset: offset(base),
            bitmap,
        };
        let cc_state = CcStateRepr {
            echo_ts,
            ooo_count: r.ooo_count.min(crate::wire::mrc10::cc_state::OOO_COUNT_MASK),
            // The requester takes no CC feedback from a probe answer: the
            // bit waits for the next SACK.
            restore: probe.is_none() && std::mem::take(&mut r.restore_due),
            cwnd_penalty: r.cwnd_penalty,
            rcvd_bytes: r.rcvd_bytes & crate::wire::mrc10::cc_state::RCVD_BYTES_MASK,
        };
        r.ecn_count = 0;
        r.ooo_count = 0;
        // What lies above this SACK's bitmap goes out in the SACKs that
        // follow at once, in ascending order: a sender that learns of
        // later packets on an EV before earlier ones would infer a loss.
        // A probe answer leaves the coalescing alone: a SACK due (or its
        // timer) still goes out for the packets it reports on.
        if probe.is_none() {
            r.unacked = 0;
            r.ack_deadline = None;
            r.unreported = None;
            r.backlog = pending
                .map(|(from, to)| (higher(from, base.add(bits)), to))
                .filter(|(from, to)| from.before(*to));
            r.sack_now = r.backlog.is_some();
        }
        let travel = r.reverse.pick(ev);
        self.counters.tx_acks += 1;
        self.control_packet(travel, Opcode::Sack, cum, Headers::Sack { seth, cc_state })
    }

    // ------------------------------------------------------------ requester

    /// ACK (AETH): a fatal NAK ends the request it names; a positive ACK
    /// is a cumulative acknowledgement up to its PSN.
    fn handle_ack(&mut self, now: Instant, psn: Psn, aeth: AethRepr) -> Result<(), RxError> {
        if self.state != QpState::Rts {
            return Err(RxError::BadState(self.state));
        }
        match aeth.syndrome {
            Syndrome::Ack { .. } => self.acknowledge(now, psn, psn.next(), 0, None, Feedback::default()),
            Syndrome::Nak { code } if code == Syndrome::NAK_REMOTE_ACCESS => {
                self.handle_fatal_nak(psn, NackKind::RemoteAccess)
            }
            _ => Err(RxError::Malformed("ACK syndrome MRC 1.0 does not use")),
        }
    }

    /// Count a NACK (or fatal NAK) for `psn`: `Ok(true)` when `psn` is
    /// outstanding, `Ok(false)` when it is stale (already acknowledged),
    /// `AckForUnsent` (not counted here) when it was never sent.
    fn nack_names_outstanding(&mut self, psn: Psn) -> Result<bool, RxError> {
        let q = self.req.as_ref().expect("requester exists in RTS");
        if !q.is_outstanding(psn) && psn.distance(q.una) >= 0 {
            return Err(RxError::AckForUnsent(psn));
        }
        self.counters.rx_nacks += 1;
        Ok(q.is_outstanding(psn))
    }

    /// A fatal NAK for `psn`: its request completes with the error and the
    /// QP goes to ERR.
    fn handle_fatal_nak(&mut self, psn: Psn, kind: NackKind) -> Result<(), RxError> {
        if !self.nack_names_outstanding(psn)? {
            return Ok(());
        }
        let q = self.req.as_mut().expect("requester exists in RTS");
        let seq = q.slot(psn).wr_seq;
        let status = nack_status(kind).expect("a fatal kind");
        self.enter_error(Some((seq, status)), true);
        Ok(())
    }

    /// A reliability probe: answer with a SACK (pr = 1) on the EV it came
    /// on.
    fn handle_probe(&mut self, now: Instant, pkt: &Mrc10Packet, peth: &PethRepr) -> Result<(), RxError> {
        if self.resp.is_none() {
            return Err(RxError::BadState(self.state));
        }
        let r = self.resp.as_mut().expect("checked above");
        // The requester probes when it hears nothing: acknowledgements
        // may be lost on the reverse EVs.
        if r.reverse.evict() {
            self.counters.reverse_evictions += 1;
        }
        r.reverse.learn(pkt.ev);
        let answer = ProbeAnswer {
            ev: pkt.ev,
            probe_id: peth.probe_id,
            echo_ts: peth.timestamp,
        };
        let p = self.build_sack(now, Some(answer));
        self.ctrl.push_back(Ctrl { pkt: p });
        Ok(())
    }

    /// SACK: the acknowledgements; with pr = 1 also the answer to our
    /// reliability probe.
    fn handle_sack(&mut self, now: Instant, seth: &SethRepr, cc_state: &CcStateRepr) -> Result<(), RxError> {
        if self.state != QpState::Rts {
            return Err(RxError::BadState(self.state));
        }
        let cum = seth.cum_ack_psn;
        let at = |off: i16| Psn::new(cum.value().wrapping_add(off as i32 as u32) & Psn::MASK);
        let base = at(seth.sack_offset);
        if seth.probe_response {
            let ev_index = seth.ack_psn_offset as u16;
            let q = self.req.as_ref().expect("requester exists in RTS");
            if ev_index as usize >= q.evs.len() {
                return Err(RxError::Malformed("probe answer for an EV not in the set"));
            }
            self.acknowledge(now, cum, base, seth.bitmap, None, Feedback::default())?;
            let rtt = ts_age(now, cc_state.echo_ts);
            let q = self.req.as_mut().expect("requester exists in RTS");
            q.evs.on_probe_response(ev_index, now, rtt);
            self.counters.rx_probe_responses += 1;
            self.push_event(Event::ProbeRtt {
                ev_index,
                rtt_ns: rtt.as_ns(),
            });
            return Ok(());
        }
        let trigger = at(seth.ack_psn_offset);
        let rtt = Some(ts_age(now, cc_state.echo_ts));
        let ce = u32::from(seth.cc_flags);
        // The EV the m field is about: the acknowledged packet's, looked up
        // before the acknowledgement frees its slot.
        let skip_ev = {
            let q = self.req.as_ref().expect("requester exists in RTS");
            // Only if the copy it acknowledges went on that EV (a resend may
            // have moved the PSN to another EV since).
            (seth.skip_mode != SkipMode::None && q.is_outstanding(trigger))
                .then(|| q.slot(trigger).ev_index)
                .filter(|&i| q.evs.value(i) == seth.ev)
        };
        let fb = Feedback {
            rtt,
            ce,
            cwnd_penalty: cc_state.cwnd_penalty,
            restore: cc_state.restore,
        };
        self.acknowledge(now, cum, base, seth.bitmap, Some(trigger), fb)?;
        if let Some(ev) = skip_ev {
            let q = self.req.as_mut().expect("requester exists in RTS");
            match seth.skip_mode {
                SkipMode::SkipOnce => q.evs.skip_once(ev),
                SkipMode::AlwaysSkip => {
                    q.evs.on_always_skip(ev, now);
                }
                SkipMode::None => {}
            }
        }
        // Dynamic MPR only from a peer that has it (a peer without it may
        // fill the field with its static window or nothing meaningful).
        if seth.mpr > 0 && self.cfg.peer_caps.dynamic_mpr {
            let q = self.req.as_mut().expect("requester exists in RTS");
            q.dialect.peer_window = Some(u32::from(seth.mpr) * MPR_UNIT);
        }
        Ok(())
    }

    /// Acknowledge PSNs up to `cum` and those `bitmap` names from `base` on;
    /// `trigger` is the packet whose echo gave `rtt` (its EV gets the RTT
    /// and ECN sample), `ce` the CE-marked packets the receiver saw.
    #[allow(clippy::too_many_arguments)]
    fn acknowledge(
        &mut self,
        now: Instant,
        cum: Psn,
        base: Psn,
        bitmap: u64,
        trigger: Option<Psn>,
        fb: Feedback,
    ) -> Result<(), RxError> {
        let Feedback { rtt, ce, .. } = fb;
        let q = self.req.as_mut().expect("requester exists in RTS");
        let out = q.outstanding() as i64;
        // Cumulative part: PSNs una ..= cum.
        let d = cum.next().distance(q.una) as i64;
        if d > out {
            return Err(RxError::AckForUnsent(cum));
        }
        // Selective part: bit i is PSN base + i, i.e. una + db + i.
        let db = base.distance(q.una) as i64;
        let bits = i64::from(seth::BITMAP_BITS);
        let lo = (-db).clamp(0, bits) as u32;
        let hi = (out - db).clamp(0, bits) as u32;
        if let Some(i) = ones(bitmap, hi, bits as u32).next() {
            return Err(RxError::AckForUnsent(base.add(i)));
        }
        self.counters.rx_acks += 1;
        let ecn = ce > 0;
        let mut acked_bytes = 0u64;
        // The trigger's EV gets the sample when the trigger is newly
        // acknowledged here.
        let mut sample = trigger
            .filter(|&t| q.is_outstanding(t) && !q.slot(t).acked)
            .map(|t| (t, rtt, ecn));
        let una = q.una;
        for k in 0..d.max(0) as u32 {
            acked_bytes += ack_one(q, una.add(k), now, &mut sample);
        }
        for i in ones(bitmap, lo, hi) {
            acked_bytes += ack_one(q, base.add(i), now, &mut sample);
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
        // A restore bit is news even on a SACK that acknowledges nothing.
        if acked_bytes > 0 || ecn || fb.restore {
            let in_flight = q.in_flight;
            q.cc.on_ack(
                now,
                AckSample {
                    acked_bytes,
                    rtt,
                    ecn_ce: ce,
                    in_flight,
                    cwnd_penalty: fb.cwnd_penalty,
                    restore: fb.restore,
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

    /// NACK: every MRC 1.0 reason is recoverable. A trim resends at
    /// once, and blames the EV only when the trim was not at the last hop
    /// (the receiver's port is shared by every path); the others resend
    /// when the window moves or at the RTO.
    fn handle_nack(&mut self, now: Instant, n: &NethRepr) -> Result<(), RxError> {
        if self.state != QpState::Rts {
            return Err(RxError::BadState(self.state));
        }
        let psn = n.nack_psn;
        if !self.nack_names_outstanding(psn)? {
            return Ok(());
        }
        let q = self.req.as_mut().expect("requester exists in RTS");
        let i = (psn.value() & q.mask) as usize;
        if q.ring[i].acked || q.ring[i].queued != Retx::No {
            return Ok(());
        }
        if n.timestamp != ts16(q.ring[i].sent_at) {
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
        match n.reason {
            NackReason::Trimmed | NackReason::TrimmedLastHop => {
                q.ring[i].queued = Retx::Trim;
                q.retx.push_front(psn);
                q.cc.on_loss(now, len);
                q.trim_nack_at = Some(now);
                if n.reason == NackReason::Trimmed {
                    // MRC 1.0: a TRIMMED NACK SKIPs the EV for one rotation.
                    q.evs.on_trim(ev, now);
                    q.evs.skip_once(ev);
                } else {
                    self.counters.rx_nacks_last_hop += 1;
                }
            }
            NackReason::PsnOorWindow
            | NackReason::NoBitmap
            | NackReason::NoPktBuffer
            | NackReason::NoResource
            | NackReason::UnexpEvent => {
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

    /// Queue a reliability probe on EV `ev_index` (its timestamp is set
    /// when it goes out).
    fn queue_probe(&mut self, ev_index: u16) {
        let Some(q) = self.req.as_ref() else { return };
        let peth = PethRepr {
            probe_id: choices::probe_id_of_ev(ev_index),
            sender_context: choices::context_of(self.cfg.qpn),
            receiver_context: choices::context_of(self.dest_qp),
            timestamp: 0,
        };
        let ev = q.evs.value(ev_index);
        // A probe uses no PSN: 0.
        let p = self.control_packet(ev, Opcode::ReliabilityProbe, Psn::new(0), Headers::Probe(peth));
        self.ctrl.push_back(Ctrl { pkt: p });
    }

    /// The next resend, built.
    fn next_retransmission(&mut self, now: Instant) -> Option<Mrc10Packet> {
        let t = self.req.as_mut()?.take_resend(now, &mut self.counters)?;
        self.data_packet_of(&t, now, true)
    }

    /// The data packet of `t`, a first transmission or a resend (MRC 1.0
    /// data packets carry no per-EV sequence number).
    fn data_packet_of(&self, t: &Transmission, now: Instant, resent: bool) -> Option<Mrc10Packet> {
        let q = self.req.as_ref()?;
        let wr = &q.sq[(t.wr_seq - q.sq_head_seq) as usize];
        let h = Hdr {
            mtu: self.cfg.mtu,
            pkey: self.pkey,
            dest_qp: self.dest_qp,
            trimmable: self.cfg.peer_caps.trim_nack,
        };
        Some(data_packet(
            &h,
            wr,
            t.wr_seq,
            t.seg,
            t.psn,
            q.evs.value(t.ev),
            now,
            resent,
        ))
    }
}

impl MrcQp {
    fn next_new_packet(&mut self, now: Instant) -> Option<Mrc10Packet> {
        let mtu = self.cfg.mtu;
        let q = self.req.as_mut()?;
        let window = q.dialect.peer_window.map_or(q.window, |w| w.min(q.window));
        let t = q.take_new_segment(now, mtu, window, &mut self.counters)?;
        self.data_packet_of(&t, now, false)
    }
}

/// Mark `psn` acknowledged; returns the newly acknowledged bytes. The SACK's
/// trigger (the packet whose timestamp it echoes) carries its RTT/ECN
/// sample to its EV.
fn ack_one(q: &mut Requester, psn: Psn, now: Instant, sample: &mut Option<(Psn, Option<Duration>, bool)>) -> u64 {
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
        Some((trigger, rtt, ecn)) if trigger == psn => {
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

/// Set bits of `word` with index in `[lo, hi)`, ascending
/// (`trailing_zeros`, one step per set bit).
fn ones(word: u64, lo: u32, hi: u32) -> impl Iterator<Item = u32> {
    let hi = hi.min(u64::BITS);
    let lo = lo.min(hi);
    // Bits at and above `lo`, below `hi` (a shift by 64 clears all).
    let from_lo = (!0u64).checked_shl(lo).unwrap_or(0);
    let below_hi = 1u64.checked_shl(hi).map_or(!0u64, |b| b - 1);
    let mut w = word & from_lo & below_hi;
    std::iter::from_fn(move || {
        if w == 0 {
            None
        } else {
            let t = w.trailing_zeros();
            w &= w - 1;
            Some(t)
        }
    })
}

/// Header facts every data packet shares.
struct Hdr {
    mtu: u32,
    pkey: u16,
    dest_qp: u32,
    /// The peer NACKs trimmed packets (`Capabilities::trim_nack`): data may
    /// be trimmed; otherwise it goes as NO_TRIM.
    trimmable: bool,
}

/// Packet `seg` of `wr` (request number `wr_seq`), first transmission or
/// retransmission: METH, TSETH (every data packet is stamped), RETH with
/// this packet's VA and the message length, ImmDt on the last packet of a
/// WRITE-with-immediate.
#[allow(clippy::too_many_arguments)]
fn data_packet(
    h: &Hdr,
    wr: &SendWr,
    wr_seq: u64,
    seg: u32,
    psn: Psn,
    ev_value: u32,
    now: Instant,
    retransmit: bool,
) -> Mrc10Packet {
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
    let payload = wr.data.slice(off as usize..end as usize);
    let pad = ((4 - payload.len() % 4) % 4) as u8;
    let headers = WriteHeaders {
        meth: MethRepr {
            rq_msn: wr.rq_msn,
            // The message sequence number: the request's, wrapping.
            msn: wr_seq as u16,
        },
        tseth: Some(TsethRepr {
            tx_ts: ts16(now),
            resolution: choices::TS_RESOLUTION,
            format: choices::TS_FORMAT,
        }),
        reth: RethRepr {
            va: wr.remote_va.wrapping_add(off),
            rkey: wr.rkey,
            dma_len: total as u32,
        },
        imm: if opcode.has_imm() { wr.imm } else { None },
    };
    Mrc10Packet {
        ev: ev_value,
        ecn: ECN_ECT0,
        class: match (h.trimmable, retransmit) {
            (false, _) => TrafficClass::NoTrim,
            (true, true) => TrafficClass::TrimmableRetx,
            (true, false) => TrafficClass::Trimmable,
        },
        bth: BthRepr {
            opcode,
            solicited: false,
            mig_req: true,
            pad,
            pkey: h.pkey,
            fecn: false,
            becn: false,
            dest_qp: h.dest_qp,
            ack_req: last,
            retransmit,
            timestamp: true,
            psn,
        },
        headers: Headers::Write(headers),
        payload,
    }
}

impl Timers for MrcQp {
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
                    self.queue_probe(ev);
                }
            }
        }
    }
}

impl QueuePair for MrcQp {
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
                if a.dest_qp & 0xFF_FFFF == choices::ENDPOINT_QPN {
                    return Err(ModifyError::BadAttribute {
                        name: "dest_qp",
                        why: "0x2 is MRC 1.0's endpoint QPN, not a queue pair's".into(),
                    });
                }
                self.dest_qp = a.dest_qp & 0xFF_FFFF;
                self.resp = Some(Box::new(Responder::new(&a, self.cfg.reverse_evs)));
            }
            QpTransition::Rts(mut a) => {
                validate_rts(&a)?;
                // The EV list moves into the EV set (not kept twice).
                let evs = EvSet::new(EvSetConfig {
                    evs: std::mem::take(&mut a.evs.evs),
                    ..a.evs.clone()
                })?;
                self.req = Some(Box::new(Requester::new(a, evs, Mrc10Sending::default())));
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
        let rq_msn = q.dialect.imm_posted;
        if wr.imm.is_some() {
            q.dialect.imm_posted = q.dialect.imm_posted.wrapping_add(1);
        }
        q.sq.push_back(SendWr {
            wr_id: wr.wr_id,
            data: wr.data,
            remote_va: wr.remote_va,
            rkey: wr.rkey,
            imm: wr.imm,
            rq_msn,
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
        let r = match pkt {
            Packet::Roce(p) => Err(RxError::WrongProtocol {
                opcode: p.bth.opcode as u8,
                expected: "MRC 1.0",
            }),
            Packet::Mrc10(p) if p.bth.dest_qp != self.cfg.qpn => Err(RxError::WrongQp {
                expected: self.cfg.qpn,
                got: p.bth.dest_qp,
            }),
            Packet::Mrc10(_) if !self.state.can_receive() => Err(RxError::BadState(self.state)),
            Packet::Mrc10(p) => match (p.bth.opcode, &p.headers) {
                (op, _) if op.is_write() => self.handle_data(now, p),
                (Opcode::Ack, Headers::Ack(aeth)) => self.handle_ack(now, p.bth.psn, *aeth),
                (Opcode::Sack, Headers::Sack { seth, cc_state }) => self.handle_sack(now, seth, cc_state),
                (Opcode::Nack, Headers::Nack(neth)) => self.handle_nack(now, neth),
                (Opcode::ReliabilityProbe, Headers::Probe(peth)) => self.handle_probe(now, &p, peth),
                (Opcode::Ack | Opcode::Sack | Opcode::Nack | Opcode::ReliabilityProbe, _) => {
                    Err(RxError::Malformed("headers do not fit the opcode"))
                }
                // Endpoint operations go to the endpoint QP, not to a QP.
                (op, _) => Err(RxError::UnexpectedMrc10Opcode(op)),
            },
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
        if !self.state.can_receive() {
            return None;
        }
        if let Some(mut c) = self.ctrl.pop_front() {
            match &mut c.pkt.headers {
                Headers::Probe(p) => {
                    p.timestamp = ts16(now);
                    self.counters.tx_probes += 1;
                }
                // Probe answers were counted when built.
                Headers::Sack { .. } => {}
                _ => self.counters.tx_nacks += 1,
            }
            return Some(Packet::Mrc10(c.pkt));
        }
        if self.resp.as_ref().is_some_and(|r| r.sack_now) {
            return Some(Packet::Mrc10(self.build_sack(now, None)));
        }
        if self.state != QpState::Rts {
            return None;
        }
        if let Some(p) = self.next_retransmission(now) {
            return Some(Packet::Mrc10(p));
        }
        let p = self.next_new_packet(now);
        self.drain_ev_changes();
        p.map(Packet::Mrc10)
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

    fn deny_port_evs(&mut self, now: Instant, port: u8) -> usize {
        let n = self.req.as_mut().map_or(0, |q| q.evs.deny_port(port, now));
        self.drain_ev_changes();
        n
    }

    fn allow_port_evs(&mut self, now: Instant, port: u8) -> usize {
        let n = self.req.as_mut().map_or(0, |q| q.evs.allow_port(port, now));
        self.drain_ev_changes();
        n
    }

    fn probe_ev(&mut self, _now: Instant, ev_index: u16) -> bool {
        if self.state != QpState::Rts {
            return false;
        }
        match &self.req {
            Some(q) if (ev_index as usize) < q.evs.len() => {
                self.queue_probe(ev_index);
                true
            }
            _ => false,
        }
    }
    fn set_receive_penalty(&mut self, penalty: u8) {
        if let Some(r) = self.resp.as_mut() {
            let p = penalty.min(choices::CWND_PENALTY_MAX);
            if r.cwnd_penalty > 0 && p == 0 {
                r.restore_due = true;
            } else if p > 0 {
                r.restore_due = false;
            }
            r.cwnd_penalty = p;
        }
    }
}
