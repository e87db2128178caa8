//! The event loop of a loopback run: one or more QP pairs ([`Pair`]) over
//! the same two links ([`Link`]), A -> B and B -> A, so the pairs' packets
//! share each link's serialisation queue (as the hardware's share the
//! co-simulated fabric's). Time is integer picoseconds; packets in flight
//! wait in a heap ordered by due time, then by the order they were sent;
//! one seeded ChaCha RNG draws every random decision (unkeyed loss,
//! jitter, duplication, corruption) in the order the packets are sent, so
//! a run and its seed give the same reports, bit for bit.
//!
//! The links, the seed and the time limit are the first pair's scenario's.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::link::Link;
use super::pair::Pair;
use super::switch::{PacketKind, SwitchVerdict};
use super::{corrupt_frame, garble, Captured, Dir, Report, Side, PACED_BACKLOG_BYTES, WIRE_OVERHEAD};
use crate::model::QueuePair;
use crate::time::{Duration, Instant};
use crate::wire::{Encap, Packet};

/// A packet on its way to a pair's endpoint.
struct InFlight {
    pair: usize,
    to: Side,
    pkt: Packet,
    /// Bit-flipped frame to deliver as bytes instead of `pkt`.
    corrupted_frame: Option<Vec<u8>>,
}

/// Picoseconds between the two copies of a duplicated packet.
const DUPLICATE_GAP_PS: u64 = 1000;

pub(super) struct Runner {
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
    /// Some pair keeps at most `max_outstanding` messages posted.
    limited: bool,
    /// The first pair's `Scenario::paced`: an endpoint hands its link a
    /// packet only while at most [`PACED_BACKLOG_BYTES`] wait for the
    /// wire.
    paced: bool,
    /// Per link: an endpoint was held while the link was busy; the loop
    /// wakes when the backlog has drained to the allowance.
    blocked: [bool; 2],
    /// Per link: the pair after the last one that sent on it, which is
    /// pumped first when the link takes a packet again (paced pairs take
    /// turns on a shared link).
    turn: [usize; 2],
}

impl Runner {
    /// A run of `pairs` (at least one) over the first pair's links.
    pub(super) fn new(pairs: Vec<Pair>) -> Runner {
        let first = &pairs[0].spec.scenario;
        let evs = &first.a.rts.evs.evs;
        let links = [Link::new(&first.link_ab, evs), Link::new(&first.link_ba, evs)];
        let seed = first.seed;
        let limit = Instant::ZERO + first.time_limit;
        let limited = pairs.iter().any(|p| p.spec.scenario.max_outstanding.is_some());
        let rated = first.link_ab.line_rate_gbps.is_some() && first.link_ba.line_rate_gbps.is_some();
        debug_assert!(!first.paced || rated, "a paced run needs both links' line_rate_gbps");
        let paced = first.paced && rated;
        Runner {
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
            paced,
            blocked: [false; 2],
            turn: [0; 2],
        }
    }

    /// Put `pkt`, sent by `pair`'s endpoint `from`, on its link: serialised
    /// at the line rate (and again on a degraded EV's slower path),
    /// captured if the pair's scenario asks, then blackholed or lost,
    /// queued, marked or trimmed at the switch port, duplicated or
    /// corrupted as the link says, and scheduled for
    /// delivery after the base delay, the EV's extra delay and jitter.
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
        let mut on_wire = now;
        if let Some(g) = link.cfg.line_rate_gbps {
            on_wire = link.free_at.max(now);
            depart = on_wire + Duration::serialisation(pkt.payload().len() as u64 + WIRE_OVERHEAD, g);
            link.free_at = depart;
            let ev = pkt.ev();
            if let Some(d) = link.degraded.iter_mut().find(|d| d.0 == ev) {
                let start = d.2.max(depart);
                depart = start + Duration::serialisation(pkt.payload().len() as u64 + WIRE_OVERHEAD, g * d.1);
                d.2 = depart;
            }
        }
        if self.pairs[pair].spec.scenario.capture {
            self.pairs[pair].captured.push(Captured {
                at: on_wire,
                handed: now,
                dir,
                pkt: pkt.clone(),
            });
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
        let mut pkt = pkt;
        if let Some(port) = link.switch.as_mut() {
            let bytes = pkt.payload().len() as u64 + WIRE_OVERHEAD;
            match port.admit(depart, bytes, WIRE_OVERHEAD, PacketKind::of(&pkt)) {
                SwitchVerdict::Forward { depart: d, mark_ce } => {
                    depart = d;
                    if mark_ce {
                        pkt.mark_ce();
                        link.stats.ecn_marked += 1;
                    }
                }
                SwitchVerdict::Trim { depart: d } => {
                    depart = d;
                    pkt.trim(port.config().last_hop);
                    link.stats.trimmed += 1;
                }
                SwitchVerdict::Drop => {
                    link.stats.switch_dropped += 1;
                    return;
                }
            }
        }
        let cfg = &link.cfg;
        let copies = if cfg.duplicate > 0.0 && self.rng.gen_bool(cfg.duplicate.min(1.0)) {
            link.stats.duplicated += 1;
            2
        } else {
            1
        };
        let base = depart + cfg.base_delay + cfg.ev_extra_delay(ev);
        let mut pkt = Some(pkt);
        for c in 0..copies {
            let cfg = &self.links[li].cfg;
            let jitter = if cfg.jitter.as_ps() > 0 {
                self.rng.gen_range(0..cfg.jitter.as_ps())
            } else {
                0
            };
            let mut p = if c + 1 == copies {
                pkt.take().expect("one left")
            } else {
                pkt.clone().expect("kept")
            };
            let mut corrupted_frame = None;
            if cfg.corrupt > 0.0 && self.rng.gen_bool(cfg.corrupt.min(1.0)) {
                if cfg.deliver_corrupted {
                    garble(&mut p, &mut self.rng);
                } else {
                    let encap = if to == Side::B {
                        Encap::test_v6()
                    } else {
                        Encap::test_v6().reversed()
                    };
                    let profile = self.pairs[pair].qp(to).config().profile;
                    corrupted_frame = Some(corrupt_frame(&p, &encap, &profile, &mut self.rng));
                }
                self.links[li].stats.corrupted += 1;
            }
            let at = base + Duration::from_ps(jitter + c as u64 * DUPLICATE_GAP_PS);
            self.schedule(
                at,
                InFlight {
                    pair,
                    to,
                    pkt: p,
                    corrupted_frame,
                },
            );
        }
    }

    fn schedule(&mut self, at: Instant, f: InFlight) {
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

    /// When link `li` takes a packet from a paced endpoint: once no more
    /// than [`PACED_BACKLOG_BYTES`] at its line rate wait for the wire.
    fn takes_at(&self, li: usize) -> Instant {
        let l = &self.links[li];
        let allowance = l
            .cfg
            .line_rate_gbps
            .map_or(0, |g| Duration::serialisation(PACED_BACKLOG_BYTES, g).as_ps());
        Instant(l.free_at.as_ps().saturating_sub(allowance))
    }

    /// Send what `pair`'s endpoint `s` has to send, then take its events.
    fn pump(&mut self, pair: usize, s: Side) {
        let now = self.now;
        let li = match s {
            Side::A => 0,
            Side::B => 1,
        };
        loop {
            if self.paced && self.takes_at(li) > now {
                // Asked again when the link takes a packet (it may have
                // nothing then).
                self.blocked[li] = true;
                break;
            }
            let Some(p) = self.pairs[pair].qp(s).poll_transmit(now) else {
                break;
            };
            self.send(pair, s, p);
            if self.paced {
                self.turn[li] = (pair + 1) % self.pairs.len();
            }
        }
        while let Some(e) = self.pairs[pair].qp(s).poll_event() {
            self.pairs[pair].on_event(now, s, e);
        }
    }

    /// Run until every pair is finished or nothing is left to happen
    /// before the time limit; one report per pair, in order.
    pub(super) fn run(mut self) -> Vec<Report> {
        let mut timed_out = false;
        let now = self.now;
        for p in &mut self.pairs {
            p.post_more(now);
        }
        loop {
            self.blocked = [false; 2];
            let n = self.pairs.len();
            // Paced: from the pair whose turn it is on A's link, the data
            // direction (unpaced: in order, as always).
            let start = if self.paced { self.turn[0] } else { 0 };
            for k in 0..n {
                let i = (start + k) % n;
                self.pump(i, Side::A);
                self.pump(i, Side::B);
                let now = self.now;
                if self.pairs[i].post_more(now) && self.limited {
                    // Under a `max_outstanding` limit every post follows a
                    // completion and nothing else may be pending: send
                    // now, not at the next event (there may be none).
                    // Without the limit the runner keeps its original
                    // schedule.
                    self.pump(i, Side::A);
                }
            }
            if self.pairs.iter().all(Pair::finished) {
                break;
            }
            let next_pkt = self.heap.peek().map(|Reverse((t, _, _))| Instant(*t));
            let timers = self.pairs.iter().flat_map(|p| [p.a.poll_timeout(), p.b.poll_timeout()]);
            // A paced endpoint waits for its link to take a packet.
            let frees = (0..2).map(|li| self.blocked[li].then_some(self.takes_at(li)));
            let Some(next) = std::iter::once(next_pkt).chain(timers).chain(frees).flatten().min() else {
                timed_out = true;
                break;
            };
            if next > self.limit {
                timed_out = true;
                break;
            }
            self.now = self.now.max(next);
            let now = self.now;
            // Deliver every packet due now.
            while let Some(&Reverse((t, _, idx))) = self.heap.peek() {
                if t > now.as_ps() {
                    break;
                }
                self.heap.pop();
                let f = self.slab[idx as usize].take().expect("scheduled");
                self.free.push(idx);
                let li = if f.to == Side::B { 0 } else { 1 };
                self.links[li].stats.delivered += 1;
                let qp = self.pairs[f.pair].qp(f.to);
                if let Some(frame) = f.corrupted_frame {
                    if qp.handle_frame(now, &frame).is_err() {
                        self.links[li].stats.corrupted_dropped += 1;
                    }
                } else {
                    let _ = qp.handle_packet(now, f.pkt);
                }
                // Send responses promptly (keeps SACK service times honest).
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
        // Drain late events.
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
