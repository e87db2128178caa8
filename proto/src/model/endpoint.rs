//! The connectionless MRC 1.0 endpoint on the reserved QPN 0x2
//! ([`choices::ENDPOINT_QPN`]): EV probes and Port Status Updates.
//!
//! One per NIC, beside its queue pairs, sans-IO like them. It sends
//! requests on behalf of the control plane (libmrc's batched endpoint
//! operations: an EV probe measures one EV's round trip and the peer's
//! service time; a Port Status Update tells the peer which of our ports
//! are up) and answers the peer's. Packets are [`Mrc10Packet`]s with an
//! ERTH (and, for EV probes, an EETH naming the EV); a response carries
//! the request's id and echoes its timestamp.
//!
//! The public record gives the operations and the headers' fields
//! (`../shared/docs/mrc-1.0.md`: S); what an endpoint does with them is
//! ours: a response goes on the EV of its request (the path under test,
//! backwards), the RTT is measured on our clock from the request's
//! transmission, a Port Status Update is answered with our own port mask,
//! requests awaiting an answer are bounded (`max_pending`), the oldest
//! given up (`EndpointResult::TimedOut`) `timeout` after it left, and
//! peer requests waiting for their answer are bounded (`answer_queue_len`).

use std::collections::VecDeque;

use crate::model::api::RxError;
use crate::time::{Duration, Instant};
use crate::wire::mrc10::{choices, EethRepr, EndpointOp, ErthRepr, EvFormat, Headers, Mrc10Packet, Opcode};
use crate::Psn;

/// Configuration of an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EndpointConfig {
    /// Our ports that are up, one bit per port (sent in Port Status
    /// Updates and their answers).
    pub ports_up: u32,
    /// Requests awaiting an answer at most; a request beyond it is refused.
    pub max_pending: usize,
    /// A request unanswered this long is given up.
    pub timeout: Duration,
    /// Results waiting to be polled at most; beyond it they are counted
    /// and dropped.
    pub result_queue_len: usize,
    /// Peer requests waiting for their answer at most; beyond it a request
    /// is counted and dropped (the peer's own timeout covers it).
    pub answer_queue_len: usize,
    /// Partition key of the packets.
    pub pkey: u16,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        EndpointConfig {
            ports_up: 1,
            max_pending: 256,
            timeout: Duration::from_ms(1),
            result_queue_len: 1024,
            answer_queue_len: 1024,
            pkey: 0xFFFF,
        }
    }
}

/// What a request came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndpointResult {
    /// An EV probe came back.
    EvProbe {
        request_id: u16,
        ev: u32,
        port: u8,
        /// From our transmission of the request to its response.
        rtt: Duration,
        /// The peer's time between the request's arrival and its answer.
        service_time: Duration,
    },
    /// The peer acknowledged our Port Status Update with its own ports.
    PortStatus { request_id: u16, peer_ports_up: u32 },
    /// No answer within `timeout`.
    TimedOut { request_id: u16, op: EndpointOp },
}

/// A request refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    #[error("{0} endpoint requests already await an answer")]
    TooManyPending(usize),
}

/// Counters of an endpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EndpointCounters {
    pub probes_sent: u64,
    pub status_updates_sent: u64,
    pub requests_answered: u64,
    pub responses_matched: u64,
    /// Responses naming no request awaiting one (late, duplicate, forged).
    pub responses_unmatched: u64,
    pub timed_out: u64,
    /// Peer requests dropped because `answer_queue_len` were waiting.
    pub answers_dropped: u64,
    /// Packets refused by [`Endpoint::handle_packet`] (each a typed error).
    pub rx_errors: u64,
    pub results_dropped: u64,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    request_id: u16,
    op: EndpointOp,
    /// When the request left (`poll_transmit`); `None` while it waits.
    sent_at: Option<Instant>,
    ev: u32,
    port: u8,
}

/// A request received, to answer at the next [`Endpoint::poll_transmit`].
#[derive(Clone, Copy, Debug)]
struct Answer {
    arrival: Instant,
    ev: u32,
    erth: ErthRepr,
    eeth: Option<EethRepr>,
}

/// The endpoint of one NIC.
#[derive(Debug)]
pub struct Endpoint {
    cfg: EndpointConfig,
    next_id: u16,
    /// Oldest first. Requests leave in this order, so the sent ones are a
    /// prefix (with increasing send times) and `unsent` the rest.
    pending: VecDeque<Pending>,
    /// Requests built, waiting for `poll_transmit` (their timestamp is set
    /// when they leave).
    requests: VecDeque<Mrc10Packet>,
    answers: VecDeque<Answer>,
    results: VecDeque<EndpointResult>,
    /// The peer's ports as its last Port Status Update said.
    peer_ports_up: Option<u32>,
    counters: EndpointCounters,
}

impl Endpoint {
    pub fn new(cfg: EndpointConfig) -> Endpoint {
        Endpoint {
            cfg,
            next_id: 0,
            pending: VecDeque::new(),
            requests: VecDeque::new(),
            answers: VecDeque::new(),
            results: VecDeque::new(),
            peer_ports_up: None,
            counters: EndpointCounters::default(),
        }
    }

    pub fn counters(&self) -> EndpointCounters {
        self.counters
    }

    /// Our ports that are up from now on (sent in the next Port Status
    /// Updates and answers).
    pub fn set_ports_up(&mut self, mask: u32) {
        self.cfg.ports_up = mask;
    }

    /// The peer's ports that are up, as its last Port Status Update said.
    pub fn peer_ports_up(&self) -> Option<u32> {
        self.peer_ports_up
    }

    /// Probe EV `ev` (leaving on `port`); returns the request id its
    /// result will carry.
    pub fn probe_ev(&mut self, now: Instant, ev: u32, port: u8, format: EvFormat) -> Result<u16, EndpointError> {
        let eeth = EethRepr::for_ev32(format, port, ev);
        let id = self.request(now, EndpointOp::EvProbe, ev, port, Some(eeth))?;
        self.counters.probes_sent += 1;
        Ok(id)
    }

    /// Tell the peer which of our ports are up (`EndpointConfig::ports_up`),
    /// on EV `ev`; returns the request id.
    pub fn port_status_update(&mut self, now: Instant, ev: u32) -> Result<u16, EndpointError> {
        let id = self.request(now, EndpointOp::PortStatusUpdate, ev, 0, None)?;
        self.counters.status_updates_sent += 1;
        Ok(id)
    }

    fn request(
        &mut self,
        now: Instant,
        op: EndpointOp,
        ev: u32,
        port: u8,
        eeth: Option<EethRepr>,
    ) -> Result<u16, EndpointError> {
        self.expire(now);
        if self.pending.len() >= self.cfg.max_pending {
            return Err(EndpointError::TooManyPending(self.pending.len()));
        }
        let request_id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        let erth = ErthRepr {
            op,
            request_id,
            port_status_mask: self.cfg.ports_up,
            timestamp: 0,
        };
        self.requests
            .push_back(self.packet(ev, Opcode::EndpointRequest, erth, eeth));
        self.pending.push_back(Pending {
            request_id,
            op,
            sent_at: None,
            ev,
            port,
        });
        Ok(request_id)
    }

    fn packet(&self, ev: u32, opcode: Opcode, erth: ErthRepr, eeth: Option<EethRepr>) -> Mrc10Packet {
        // Connectionless: no PSN.
        let headers = Headers::Endpoint { erth, eeth };
        Mrc10Packet::control(ev, opcode, self.cfg.pkey, choices::ENDPOINT_QPN, Psn::new(0), headers)
    }

    /// A packet for QPN 0x2. Requests are answered (at the next
    /// [`Endpoint::poll_transmit`]); responses complete our requests.
    /// Anything else is refused with a typed error, counted once, and
    /// changes nothing.
    pub fn handle_packet(&mut self, now: Instant, pkt: &Mrc10Packet) -> Result<(), RxError> {
        let r = self.handle(now, pkt);
        if r.is_err() {
            self.counters.rx_errors += 1;
        }
        r
    }

    fn handle(&mut self, now: Instant, pkt: &Mrc10Packet) -> Result<(), RxError> {
        if pkt.bth.dest_qp != choices::ENDPOINT_QPN {
            return Err(RxError::WrongQp {
                expected: choices::ENDPOINT_QPN,
                got: pkt.bth.dest_qp,
            });
        }
        let Headers::Endpoint { erth, eeth } = pkt.headers else {
            return Err(RxError::UnexpectedMrc10Opcode(pkt.bth.opcode));
        };
        if choices::eeth_follows(erth.op) != eeth.is_some() {
            return Err(RxError::MissingHeader("EETH"));
        }
        match pkt.bth.opcode {
            Opcode::EndpointRequest => {
                if erth.op == EndpointOp::PortStatusUpdate {
                    self.peer_ports_up = Some(erth.port_status_mask);
                }
                if self.answers.len() >= self.cfg.answer_queue_len {
                    self.counters.answers_dropped += 1;
                    return Ok(());
                }
                self.answers.push_back(Answer {
                    arrival: now,
                    ev: pkt.ev,
                    erth,
                    eeth,
                });
                Ok(())
            }
            Opcode::EndpointResponse => {
                self.expire(now);
                let Some(i) = self
                    .pending
                    .iter()
                    .position(|p| p.request_id == erth.request_id && p.op == erth.op && p.sent_at.is_some())
                else {
                    self.counters.responses_unmatched += 1;
                    return Ok(());
                };
                let p = self.pending.remove(i).expect("found");
                self.counters.responses_matched += 1;
                let result = match erth.op {
                    EndpointOp::EvProbe => EndpointResult::EvProbe {
                        request_id: p.request_id,
                        ev: p.ev,
                        port: p.port,
                        rtt: now.saturating_since(p.sent_at.expect("matched only if sent")),
                        service_time: Duration::from_ns(u64::from(eeth.map_or(0, |e| e.service_time))),
                    },
                    EndpointOp::PortStatusUpdate => {
                        self.peer_ports_up = Some(erth.port_status_mask);
                        EndpointResult::PortStatus {
                            request_id: p.request_id,
                            peer_ports_up: erth.port_status_mask,
                        }
                    }
                };
                self.push_result(result);
                Ok(())
            }
            o => Err(RxError::UnexpectedMrc10Opcode(o)),
        }
    }

    /// The next packet to send: answers first, then our requests.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Mrc10Packet> {
        if let Some(a) = self.answers.pop_front() {
            self.counters.requests_answered += 1;
            let held = now.saturating_since(a.arrival).as_ns();
            let eeth = a.eeth.map(|e| EethRepr {
                service_time: held.min(u64::from(u16::MAX)) as u16,
                ..e
            });
            let erth = ErthRepr {
                port_status_mask: self.cfg.ports_up,
                ..a.erth
            };
            return Some(self.packet(a.ev, Opcode::EndpointResponse, erth, eeth));
        }
        let mut req = self.requests.pop_front()?;
        if let Headers::Endpoint { erth, .. } = &mut req.headers {
            erth.timestamp = choices::ts16(now);
        }
        if let Some(p) = self.pending.iter_mut().find(|p| p.sent_at.is_none()) {
            p.sent_at = Some(now);
        }
        Some(req)
    }

    /// When the oldest request awaiting an answer is given up (counted
    /// from its transmission).
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.pending
            .front()
            .and_then(|p| p.sent_at)
            .map(|t| t + self.cfg.timeout)
    }

    /// Give up requests older than `timeout`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.expire(now);
    }

    fn expire(&mut self, now: Instant) {
        while let Some(p) = self.pending.front().copied() {
            match p.sent_at {
                Some(t) if now >= t + self.cfg.timeout => {}
                _ => break,
            }
            self.pending.pop_front();
            self.counters.timed_out += 1;
            self.push_result(EndpointResult::TimedOut {
                request_id: p.request_id,
                op: p.op,
            });
        }
    }

    fn push_result(&mut self, r: EndpointResult) {
        if self.results.len() >= self.cfg.result_queue_len {
            self.counters.results_dropped += 1;
        } else {
            self.results.push_back(r);
        }
    }

    /// The oldest result not yet polled.
    pub fn poll_result(&mut self) -> Option<EndpointResult> {
        self.results.pop_front()
    }
}
