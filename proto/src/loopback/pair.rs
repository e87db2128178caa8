//! One QP pair of a loopback run: A's QP writing its scenario's messages
//! into a region registered on B's QP, and what the run records of it
//! (sends and receives completed, error completions, EV state changes,
//! packets) to judge it at the end ([`Report`]). The runner
//! ([`super::runner`]) moves packets and time; this file is the endpoints'
//! side.

use super::link::Link;
use super::pairs::{GoldenError, PairSpec};
use super::{Captured, Report, Scenario, Side};
use crate::model::ev::EvStateChange;
use crate::model::{Completion, Event, Qp, QpState, QueuePair, WcStatus, WriteRequest};
use crate::time::Instant;
use bytes::Bytes;

/// The state of one pair.
pub(super) struct Pair {
    pub(super) spec: PairSpec,
    pub(super) a: Qp,
    pub(super) b: Qp,
    offsets: Vec<u64>,
    send_done: Vec<u32>,
    send_order_ok: bool,
    next_done: u64,
    n_imm: usize,
    next_send: usize,
    recv_seen: Vec<Completion>,
    errors: Vec<Completion>,
    ev_changes: Vec<EvStateChange>,
    recvs_to_post: usize,
    next_recv_id: u64,
    last_completion: Instant,
    first_error: Option<Instant>,
    pub(super) packets: u64,
    /// Every packet the pair sent, when its scenario asks for them.
    pub(super) captured: Vec<Captured>,
}

impl Pair {
    pub(super) fn new(spec: PairSpec) -> Result<Pair, GoldenError> {
        let sc = &spec.scenario;
        let setup = |e: crate::model::ModifyError| GoldenError::Setup(format!("{e:?}"));
        let a: Qp = sc.a.bring_up(Instant::ZERO).map_err(setup)?;
        let mut b: Qp = sc.b.bring_up(Instant::ZERO).map_err(setup)?;
        let total: u64 = sc.messages.iter().map(|m| u64::from(m.len)).sum();
        b.memory_mut()
            .register(spec.region_va, total.max(1), spec.rkey)
            .map_err(|e| GoldenError::Setup(format!("{e:?}")))?;
        let mut offsets = Vec::with_capacity(sc.messages.len());
        let mut off = 0;
        for m in &sc.messages {
            offsets.push(off);
            off += u64::from(m.len);
        }
        let n_imm = sc.messages.iter().filter(|m| m.imm.is_some()).count();
        let prepost = sc
            .recv_prepost
            .unwrap_or((sc.b.rtr.max_wimm as usize).max(1))
            .min(n_imm);
        let mut next_recv_id = 0;
        for _ in 0..prepost {
            if b.post_recv(next_recv_id).is_err() {
                break;
            }
            next_recv_id += 1;
        }
        let n = sc.messages.len();
        Ok(Pair {
            a,
            b,
            offsets,
            send_done: vec![0; n],
            send_order_ok: true,
            next_done: 0,
            n_imm,
            next_send: 0,
            recv_seen: Vec::new(),
            errors: Vec::new(),
            ev_changes: Vec::new(),
            recvs_to_post: n_imm - next_recv_id as usize,
            next_recv_id,
            last_completion: Instant::ZERO,
            first_error: None,
            packets: 0,
            captured: Vec::new(),
            spec,
        })
    }

    pub(super) fn qp(&mut self, s: Side) -> &mut Qp {
        match s {
            Side::A => &mut self.a,
            Side::B => &mut self.b,
        }
    }

    /// Post what the send queue and `max_outstanding` admit; whether
    /// anything was posted.
    pub(super) fn post_more(&mut self, now: Instant) -> bool {
        let before = self.next_send;
        let sc = &self.spec.scenario;
        while self.next_send < sc.messages.len() {
            if sc
                .max_outstanding
                .is_some_and(|m| self.next_send - self.next_done as usize >= m)
            {
                break;
            }
            let i = self.next_send;
            let wr = WriteRequest {
                wr_id: i as u64,
                data: self.spec.data[i].clone(),
                remote_va: self.spec.region_va + self.offsets[i],
                rkey: if sc.refused_message == Some(i) {
                    self.spec.refused_rkey
                } else {
                    self.spec.rkey
                },
                imm: sc.messages[i].imm,
            };
            if self.a.post_write(now, wr).is_err() {
                break;
            }
            self.next_send += 1;
        }
        self.next_send != before
    }

    pub(super) fn on_event(&mut self, now: Instant, s: Side, e: Event) {
        match (s, e) {
            (Side::A, Event::SendCompleted(c)) => {
                if c.status == WcStatus::Success {
                    let i = c.wr_id as usize;
                    if c.wr_id != self.next_done {
                        self.send_order_ok = false;
                    }
                    self.next_done += 1;
                    if i < self.send_done.len() {
                        self.send_done[i] += 1;
                    }
                    self.last_completion = now;
                } else {
                    self.first_error.get_or_insert(now);
                    self.errors.push(c);
                }
            }
            (Side::B, Event::RecvCompleted(c)) => {
                if c.status == WcStatus::Success {
                    self.recv_seen.push(c);
                    self.last_completion = self.last_completion.max(now);
                    if self.recvs_to_post > 0 && self.b.post_recv(self.next_recv_id).is_ok() {
                        self.next_recv_id += 1;
                        self.recvs_to_post -= 1;
                    }
                } else {
                    self.errors.push(c);
                }
            }
            (_, Event::SendCompleted(c)) | (_, Event::RecvCompleted(c)) if c.status != WcStatus::Success => {
                self.first_error.get_or_insert(now);
                self.errors.push(c);
            }
            (Side::A, Event::EvStateChanged(c)) => self.ev_changes.push(c),
            _ => {}
        }
    }

    pub(super) fn finished(&self) -> bool {
        let sends_done = self.next_done as usize >= self.spec.scenario.messages.len();
        (sends_done && self.recv_seen.len() >= self.n_imm) || self.a.state() == QpState::Error
    }

    /// The pair's report, in `proto::loopback::Report`'s terms; the link
    /// figures are the shared links'.
    pub(super) fn report(mut self, links: &[Link; 2], timed_out: bool) -> Report {
        let sc = &self.spec.scenario;
        let n = sc.messages.len();
        let total: u64 = sc.messages.iter().map(|m| u64::from(m.len)).sum();
        let data_identical = data_placed(
            &self.b,
            self.spec.rkey,
            self.spec.region_va,
            total,
            &self.spec.data,
            &self.offsets,
        );
        let Delivery {
            completed,
            exactly_once,
            imm_in_order,
            delivered,
            goodput,
        } = Delivery::judge(
            sc,
            &self.send_done,
            self.send_order_ok,
            &self.recv_seen,
            self.last_completion,
        );
        let t = self.last_completion.as_ps();
        let ok = exactly_once && data_identical && imm_in_order && !timed_out && completed == n;
        Report {
            transport: sc.transport,
            messages_posted: n,
            messages_completed: completed,
            bytes: delivered,
            completion_time_ps: t,
            first_error_ps: self.first_error.map(|t| t.as_ps()),
            goodput_gbps: goodput,
            counters_a: *self.a.counters(),
            counters_b: *self.b.counters(),
            ev_changes: std::mem::take(&mut self.ev_changes),
            error_completions: std::mem::take(&mut self.errors),
            final_state_a: self.a.state(),
            final_state_b: self.b.state(),
            link_ab: links[0].stats,
            link_ba: links[1].stats,
            delivered_exactly_once: exactly_once,
            data_identical,
            imm_in_order,
            timed_out,
            ok,
            packets: self.packets,
            captured: std::mem::take(&mut self.captured),
        }
    }
}

/// What the run judges of one pair's sends and receives at its end.
struct Delivery {
    /// Messages whose send completed.
    completed: usize,
    /// Every send completed once, in posting order.
    exactly_once: bool,
    /// The WRITE-with-immediate receives, in posting order with their
    /// lengths.
    imm_in_order: bool,
    /// Bytes of the messages completed.
    delivered: u64,
    /// `delivered` over the time of the last completion, Gb/s.
    goodput: f64,
}

impl Delivery {
    fn judge(
        sc: &Scenario,
        send_done: &[u32],
        send_order_ok: bool,
        recv_seen: &[Completion],
        last_completion: Instant,
    ) -> Delivery {
        let completed = send_done.iter().filter(|&&c| c >= 1).count();
        let exactly_once = send_order_ok && send_done.iter().all(|&c| c == 1);
        let expect_imm: Vec<(u32, u32)> = sc
            .messages
            .iter()
            .filter_map(|m| m.imm.map(|imm| (imm, m.len)))
            .collect();
        let got_imm: Vec<(u32, u32)> = recv_seen.iter().map(|c| (c.imm.unwrap_or(0), c.len)).collect();
        // Goodput counts only messages that completed successfully.
        let delivered: u64 = sc
            .messages
            .iter()
            .zip(send_done)
            .filter(|(_, &done)| done >= 1)
            .map(|(m, _)| u64::from(m.len))
            .sum();
        let t = last_completion.as_ps();
        let goodput = if t > 0 {
            delivered as f64 * 8.0 / (t as f64 * 1e-12) / 1e9
        } else {
            0.0
        };
        Delivery {
            completed,
            exactly_once,
            imm_in_order: expect_imm == got_imm,
            delivered,
            goodput,
        }
    }
}

/// Whether the receiver's region holds every message's data at its offset.
fn data_placed(b: &Qp, rkey: u32, va: u64, total: u64, data: &[Bytes], offsets: &[u64]) -> bool {
    match b.memory().read(rkey, va, total.max(1)) {
        Ok(mem) => data.iter().zip(offsets).all(|(d, &off)| {
            let off = off as usize;
            mem[off..off + d.len()] == d[..]
        }),
        Err(_) => false,
    }
}
