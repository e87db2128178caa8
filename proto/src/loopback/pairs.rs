//! Several QP pairs over shared links (the golden model's side of a
//! co-simulated run with several QP pairs, `cosim::golden`): N pairs of
//! model QPs ([`Qp`]), A's QP `q` writing to B's QP `q`, over
//! the same two links, so their packets share each link's serialisation
//! queue (as the hardware's share the co-simulated fabric's).
//! [`Scenario::run`] runs one pair; this runner is its event loop with a pair index on every packet
//! and the per-pair state in a vector. Everything else is the runner's:
//! the links apply the same `LinkConfig` in the same order (serialisation
//! at the line rate, a degraded path's second queue, blackholes and flaps,
//! loss, base delay plus the EV's extra delay plus jitter), with one
//! seeded ChaCha RNG for the jitter; with one pair it reproduces
//! `Scenario::run` (`one_pair_is_the_loopback_runner` below).
//!
//! Keyed loss (`LinkConfig::loss_keyed`) keys on (opcode, PSN, n-th
//! carriage) as the runner and `cosim::fabric` do; the QPs of a
//! co-simulated system (`cosim::system::SystemConfig`) start at PSNs far
//! apart (`SystemConfig::start_psn_of`), so no two QPs send the same PSN and
//! each packet keeps its own loss decision whichever QP sends first.
//!
//! Duplication and corruption are not modelled here (`cosim::fabric`
//! refuses them too): a link with either is refused.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

// The link and the side are the one-pair runner's own (`super`): the
// same model of a link, shared by both runners.
use super::{data_placed, Delivery, Link, Side};
use crate::loopback::{Dir, Report, Scenario, WIRE_OVERHEAD};
use crate::model::ev::EvStateChange;
use crate::model::{Completion, Event, Qp, QpState, QueuePair, WcStatus, WriteRequest};
use crate::time::{Duration, Instant};
use crate::wire::Packet;
use bytes::Bytes;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One QP pair of a multi-QP run: its scenario (setups, messages, start
/// PSN, refused message, `max_outstanding`) and the data of its messages.
/// The links, seed and time limit of the run are the first pair's.
pub struct PairSpec {
    pub scenario: Scenario,
    /// The bytes of each of the pair's messages (the hardware's: the
    /// message's global index picks its data).
    pub data: Vec<Bytes>,
    /// The region's base on B and its rkey (the pair's own region).
    pub region_va: u64,
    pub rkey: u32,
    /// The rkey the pair's `refused_message` carries (B has no region
    /// with it).
    pub refused_rkey: u32,
}

/// Why a multi-QP model run cannot start.
#[derive(Debug, thiserror::Error)]
pub enum GoldenError {
    #[error("no QP pair to run")]
    NoPairs,
    #[error("the multi-QP model runs without duplication or corruption (the fabric has neither)")]
    Unsupported,
    #[error("a QP pair's setup is refused by the model: {0}")]
    Setup(String),
}

/// The state of one pair, as `proto::loopback`'s runner keeps it for its
/// one pair.
struct Pair {
    spec: PairSpec,
    a: Qp,
    b: Qp,
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
    packets: u64,
}

impl Pair {
    fn new(spec: PairSpec) -> Result<Pair, GoldenError> {
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
            spec,
        })
    }

    fn qp(&mut self, s: Side) -> &mut Qp {
        match s {
            Side::A => &mut self.a,
            Side::B => &mut self.b,
        }
    }

    /// Post what the send queue and `max_outstanding` admit; whether
    /// anything was posted.
    fn post_more(&mut self, now: Instant) -> bool {
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

    fn on_event(&mut self, now: Instant, s: Side, e: Event) {
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

    fn finished(&self) -> bool {
        let sends_done = self.next_done as usize >= self.spec.scenario.messages.len();
        (sends_done && self.recv_seen.len() >= self.n_imm) || self.a.state() == QpState::Error
    }

    /// The pair's report, in `proto::loopback::Report`'s terms; the link
    /// figures are the shared links'.
    fn report(mut self, links: &[Link; 2], timed_out: bool) -> Report {
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
            captured: Vec::new(),
        }
    }
}

struct InFlight {
    pair: usize,
    to: Side,
    pkt: Packet,
}

/// N QP pairs over two shared links: the event loop.
struct Runner {
    pairs: Vec<Pair>,
    now: Instant,
    rng: ChaCha8Rng,
    links: [Link; 2],
    /// (due time, sequence, slab index): earliest first, then in order sent.
    heap: BinaryHeap<Reverse<(u64, u64, u32)>>,
    slab: Vec<Option<InFlight>>,
    free: Vec<u32>,
    seq: u64,
    seed: u64,
    limit: Instant,
    limited: bool,
}

impl Runner {
    fn send(&mut self, pair: usize, from: Side, pkt: Packet) {
        self.pairs[pair].packets += 1;
        let (li, to, dir) = match from {
            Side::A => (0, Side::B, Dir::AtoB),
            Side::B => (1, Side::A, Dir::BtoA),
        };
        let now = self.now;
        let link = &mut self.links[li];
        link.stats.sent += 1;
        let mut depart = now;
        if let Some(g) = link.cfg.line_rate_gbps {
            let on_wire = link.free_at.max(now);
            depart = on_wire + Duration::serialisation(pkt.payload().len() as u64 + WIRE_OVERHEAD, g);
            link.free_at = depart;
            let ev = pkt.ev();
            if let Some(d) = link.degraded.iter_mut().find(|d| d.0 == ev) {
                let start = d.2.max(depart);
                depart = start + Duration::serialisation(pkt.payload().len() as u64 + WIRE_OVERHEAD, g * d.1);
                d.2 = depart;
            }
        }
        let ev = pkt.ev();
        if link.holes.iter().any(|&(v, t)| v == ev && depart >= t)
            || link.flaps.iter().any(|&(v, f)| v == ev && f.is_down(depart))
        {
            link.stats.blackholed += 1;
            return;
        }
        let lost = if link.cfg.loss_keyed {
            link.keyed_loss(self.seed, dir, &pkt)
        } else {
            link.cfg.loss > 0.0 && self.rng.gen_bool(link.cfg.loss.min(1.0))
        };
        if lost {
            link.stats.lost += 1;
            return;
        }
        let base = depart + link.cfg.base_delay + link.cfg.ev_extra_delay(ev);
        let jitter = if link.cfg.jitter.as_ps() > 0 {
            self.rng.gen_range(0..link.cfg.jitter.as_ps())
        } else {
            0
        };
        let at = base + Duration::from_ps(jitter);
        let f = InFlight { pair, to, pkt };
        let idx = match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = Some(f);
                i
            }
            None => {
                self.slab.push(Some(f));
                (self.slab.len() - 1) as u32
            }
        };
        self.seq += 1;
        self.heap.push(Reverse((at.as_ps(), self.seq, idx)));
    }

    fn pump(&mut self, pair: usize, s: Side) {
        let now = self.now;
        while let Some(p) = self.pairs[pair].qp(s).poll_transmit(now) {
            self.send(pair, s, p);
        }
        while let Some(e) = self.pairs[pair].qp(s).poll_event() {
            self.pairs[pair].on_event(now, s, e);
        }
    }

    fn run(mut self) -> Vec<Report> {
        let mut timed_out = false;
        let now = self.now;
        for p in &mut self.pairs {
            p.post_more(now);
        }
        loop {
            for i in 0..self.pairs.len() {
                self.pump(i, Side::A);
                self.pump(i, Side::B);
                let now = self.now;
                if self.pairs[i].post_more(now) && self.limited {
                    // As the loopback runner: under a `max_outstanding`
                    // limit every post follows a completion; send now.
                    self.pump(i, Side::A);
                }
            }
            if self.pairs.iter().all(Pair::finished) {
                break;
            }
            let next_pkt = self.heap.peek().map(|Reverse((t, _, _))| Instant(*t));
            let timers = self.pairs.iter().flat_map(|p| [p.a.poll_timeout(), p.b.poll_timeout()]);
            let Some(next) = std::iter::once(next_pkt).chain(timers).flatten().min() else {
                timed_out = true;
                break;
            };
            if next > self.limit {
                timed_out = true;
                break;
            }
            self.now = self.now.max(next);
            let now = self.now;
            while let Some(&Reverse((t, _, idx))) = self.heap.peek() {
                if t > now.as_ps() {
                    break;
                }
                self.heap.pop();
                let f = self.slab[idx as usize].take().expect("scheduled");
                self.free.push(idx);
                let li = if f.to == Side::B { 0 } else { 1 };
                self.links[li].stats.delivered += 1;
                let _ = self.pairs[f.pair].qp(f.to).handle_packet(now, f.pkt);
                self.pump(f.pair, f.to);
            }
            for p in &mut self.pairs {
                if matches!(p.a.poll_timeout(), Some(t) if t <= now) {
                    p.a.handle_timeout(now);
                }
                if matches!(p.b.poll_timeout(), Some(t) if t <= now) {
                    p.b.handle_timeout(now);
                }
            }
        }
        for i in 0..self.pairs.len() {
            self.pump(i, Side::A);
            self.pump(i, Side::B);
        }
        let links = self.links;
        self.pairs
            .into_iter()
            .map(|p| {
                let timed_out = timed_out && !p.finished();
                p.report(&links, timed_out)
            })
            .collect()
    }
}

/// Run the pairs together over the first pair's links (seed, time limit):
/// one report per pair, in order.
pub fn run_pairs(pairs: Vec<PairSpec>) -> Result<Vec<Report>, GoldenError> {
    let first = &pairs.first().ok_or(GoldenError::NoPairs)?.scenario;
    for l in [&first.link_ab, &first.link_ba] {
        if l.duplicate > 0.0 || l.corrupt > 0.0 {
            return Err(GoldenError::Unsupported);
        }
    }
    let evs = first.a.rts.evs.evs.clone();
    let links = [Link::new(&first.link_ab, &evs), Link::new(&first.link_ba, &evs)];
    let seed = first.seed;
    let limit = Instant::ZERO + first.time_limit;
    let limited = pairs.iter().any(|p| p.scenario.max_outstanding.is_some());
    let pairs = pairs.into_iter().map(Pair::new).collect::<Result<Vec<_>, _>>()?;
    Ok(Runner {
        pairs,
        now: Instant::ZERO,
        rng: ChaCha8Rng::seed_from_u64(seed),
        links,
        heap: BinaryHeap::new(),
        slab: Vec::new(),
        free: Vec::new(),
        seq: 0,
        seed,
        limit,
        limited,
    }
    .run())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loopback::{message_data, EvMatch, MessageSpec, REFUSED_RKEY, REGION_RKEY, REGION_VA};
    use crate::model::Transport;

    fn pair(sc: &Scenario) -> PairSpec {
        PairSpec {
            data: sc
                .messages
                .iter()
                .enumerate()
                .map(|(i, m)| message_data(sc.seed, i, m.len))
                .collect(),
            scenario: sc.clone(),
            region_va: REGION_VA,
            rkey: REGION_RKEY,
            refused_rkey: REFUSED_RKEY,
        }
    }

    fn scenario(loss: f64, blackhole: bool, refused: Option<usize>) -> Scenario {
        let messages: Vec<MessageSpec> = (0..120)
            .map(|i| MessageSpec {
                len: 1 + (i * 977 % 3000),
                imm: (i % 3 == 0).then_some(i),
            })
            .collect();
        let mut s = Scenario::new(Transport::MrcLegacy, 8, messages)
            .with_start_psn(0xFF_FF00)
            .with_mpr(2);
        for l in [&mut s.link_ab, &mut s.link_ba] {
            l.loss = loss;
            l.loss_keyed = true;
            l.jitter = Duration::from_ns(200);
            l.line_rate_gbps = Some(100.0);
            if blackhole {
                l.blackholes = vec![(EvMatch::Index(3), Instant::from_us(20))];
            }
        }
        s.max_outstanding = Some(4);
        s.refused_message = refused;
        s.seed = 9;
        s
    }

    /// With one pair the runner is the loopback runner: the same report,
    /// figure for figure, under loss, a blackhole and a QP error.
    #[test]
    fn one_pair_is_the_loopback_runner() {
        for sc in [
            scenario(0.0, false, None),
            scenario(0.02, true, None),
            scenario(0.0, false, Some(60)),
        ] {
            let want = sc.run();
            let got = run_pairs(vec![pair(&sc)]).unwrap().remove(0);
            assert_eq!(got.messages_completed, want.messages_completed);
            assert_eq!(got.completion_time_ps, want.completion_time_ps);
            assert_eq!(got.counters_a, want.counters_a);
            assert_eq!(got.counters_b, want.counters_b);
            assert_eq!(got.ev_changes, want.ev_changes);
            assert_eq!(got.error_completions, want.error_completions);
            assert_eq!(got.link_ab, want.link_ab);
            assert_eq!(got.link_ba, want.link_ba);
            assert_eq!(
                (got.ok, got.data_identical, got.imm_in_order),
                (want.ok, want.data_identical, want.imm_in_order)
            );
            assert_eq!(got.packets, want.packets);
        }
    }

    /// Two pairs share the link: each completes its own messages, and the
    /// run takes longer than one pair alone (the pairs queue behind each
    /// other at the line rate).
    #[test]
    fn two_pairs_share_the_link() {
        let one = scenario(0.0, false, None);
        let alone = run_pairs(vec![pair(&one)]).unwrap().remove(0);
        let mut other = one.clone();
        other = other.with_start_psn(0x10_0000);
        for ep in [&mut other.a, &mut other.b] {
            ep.cfg.qpn += 1;
            ep.rtr.dest_qp += 1;
        }
        let both = run_pairs(vec![pair(&one), pair(&other)]).unwrap();
        assert!(both.iter().all(|r| r.ok && r.messages_completed == 120));
        assert!(both[0].completion_time_ps > alone.completion_time_ps);
        assert_eq!(both[0].link_ab.sent, alone.link_ab.sent * 2);
    }
}
