//! A small local two-QP loop for the RC tests: delivers packets between two
//! RC QPs with a fixed latency, seeded random loss / reordering /
//! duplication and an optional per-packet filter. (The shared two-endpoint
//! harness lands separately; this keeps the RC tests self-contained.)
#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bytes::Bytes;
use proto::model::cc::CcConfig;
use proto::model::ev::EvSetConfig;
use proto::model::rc::RcQp;
use proto::model::*;
use proto::test_support::ready;
use proto::wire::{Packet, RocePacket};
use proto::{Duration, Instant, Psn};

/// The RoCEv2 packet an RC QP sent (RC QPs send nothing else).
pub fn roce(p: Packet) -> RocePacket {
    p.into_roce().expect("an RC QP sends RoCEv2 packets")
}
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub const QPN: [u32; 2] = [0x11, 0x22];
pub const RKEY: u32 = 0x1234;
pub const VA: u64 = 0x10_0000;
pub const REGION: u64 = 1 << 20;
pub const LATENCY: Duration = Duration::from_ns(1000);

/// Per-side attributes.
#[derive(Clone, Debug)]
pub struct Setup {
    pub mtu: u32,
    pub sq_psn: [Psn; 2],
    pub ack_timeout_exp: u8,
    pub retry_linear: u8,
    pub retry_exp: u8,
    pub send_mpr_units: u8,
    pub max_wimm: u16,
    pub ack_every: u16,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            mtu: 1024,
            sq_psn: [Psn::new(100), Psn::new(5000)],
            ack_timeout_exp: 4, // 16.384 us
            retry_linear: 7,
            retry_exp: RETRY_INFINITE,
            send_mpr_units: 1,
            max_wimm: 64,
            ack_every: 4,
        }
    }
}

/// Verdict of a filter on a packet about to enter the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Deliver,
    Drop,
}

pub type Filter = Box<dyn FnMut(usize, &RocePacket) -> Verdict>;

pub struct Pair {
    pub qp: [RcQp; 2],
    pub now: Instant,
    pub setup: Setup,
    /// Every packet each side transmitted, in order, with its time.
    pub sent: Vec<(Instant, usize, RocePacket)>,
    /// Every packet delivered: (time, to side, result was Ok).
    pub rx_errors: Vec<(usize, RxError)>,
    pub events: [Vec<Event>; 2],
    pub loss: f64,
    pub dup: f64,
    pub reorder: f64,
    pub filter: Option<Filter>,
    rng: ChaCha8Rng,
    heap: BinaryHeap<Reverse<(Instant, u64, usize)>>,
    in_flight: Vec<Option<RocePacket>>,
    seq: u64,
}

pub fn rts_attr(s: &Setup, side: usize) -> RtsAttr {
    RtsAttr {
        sq_psn: s.sq_psn[side],
        ack_timeout_exp: s.ack_timeout_exp,
        retry_linear: s.retry_linear,
        retry_exp: s.retry_exp,
        send_mpr_units: s.send_mpr_units,
        max_wimm: s.max_wimm,
        evs: EvSetConfig::default(),
        cc: CcConfig::Fixed { window: u64::MAX },
    }
}

pub fn rtr_attr(s: &Setup, side: usize) -> RtrAttr {
    RtrAttr {
        dest_qp: QPN[1 - side],
        rq_psn: s.sq_psn[1 - side],
        mpr_units: 1,
        max_wimm: s.max_wimm,
    }
}

/// Side `side`'s setup against the other side's numbers.
pub fn setup(s: &Setup, side: usize) -> QpSetup {
    let mut cfg = QpConfig::new(Transport::Rc, QPN[side]);
    cfg.mtu = s.mtu;
    cfg.ack_every = s.ack_every;
    QpSetup {
        cfg,
        init: InitAttr::default(),
        rtr: rtr_attr(s, side),
        rts: rts_attr(s, side),
    }
}

/// One QP brought up to RTS against the other side's numbers, with the
/// test region registered.
pub fn qp(s: &Setup, side: usize) -> RcQp {
    let mut q: RcQp = ready(&setup(s, side));
    q.memory_mut().register(VA, REGION, RKEY).unwrap();
    q
}

pub fn write(wr_id: u64, data: &[u8], offset: u64, imm: Option<u32>) -> WriteRequest {
    WriteRequest {
        wr_id,
        data: Bytes::copy_from_slice(data),
        remote_va: VA + offset,
        rkey: RKEY,
        imm,
    }
}

/// Deterministic test bytes.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

impl Pair {
    pub fn new(setup: Setup, seed: u64) -> Pair {
        Pair {
            qp: [qp(&setup, 0), qp(&setup, 1)],
            now: Instant::ZERO,
            setup,
            sent: Vec::new(),
            rx_errors: Vec::new(),
            events: [Vec::new(), Vec::new()],
            loss: 0.0,
            dup: 0.0,
            reorder: 0.0,
            filter: None,
            rng: ChaCha8Rng::seed_from_u64(seed),
            heap: BinaryHeap::new(),
            in_flight: Vec::new(),
            seq: 0,
        }
    }

    fn schedule(&mut self, at: Instant, to: usize, p: RocePacket) {
        self.heap.push(Reverse((at, self.seq, to)));
        self.in_flight.push(Some(p));
        self.seq += 1;
    }

    /// Drain both sides' transmissions into the link.
    pub fn flush_tx(&mut self) {
        for side in 0..2 {
            while let Some(p) = self.qp[side].poll_transmit(self.now).map(roce) {
                self.sent.push((self.now, side, p.clone()));
                if let Some(f) = self.filter.as_mut() {
                    if f(side, &p) == Verdict::Drop {
                        continue;
                    }
                }
                if self.loss > 0.0 && self.rng.gen_bool(self.loss) {
                    continue;
                }
                let mut at = self.now + LATENCY;
                if self.reorder > 0.0 && self.rng.gen_bool(self.reorder) {
                    at += Duration::from_ns(self.rng.gen_range(1..3000));
                }
                if self.dup > 0.0 && self.rng.gen_bool(self.dup) {
                    let later = at + Duration::from_ns(self.rng.gen_range(0..2000));
                    self.schedule(later, 1 - side, p.clone());
                }
                self.schedule(at, 1 - side, p);
            }
        }
    }

    /// Deliver one packet straight to `to` now (bypassing the link).
    pub fn inject(&mut self, to: usize, p: RocePacket) -> Result<(), RxError> {
        let r = self.qp[to].handle_packet(self.now, p.into());
        self.drain_events();
        r
    }

    fn drain_events(&mut self) {
        for side in 0..2 {
            while let Some(e) = self.qp[side].poll_event() {
                self.events[side].push(e);
            }
        }
    }

    /// Run until idle (no packet in flight, no timer) or `limit` passes.
    /// Returns true if it went idle.
    pub fn run_until(&mut self, limit: Instant) -> bool {
        let mut steps = 0u64;
        loop {
            self.flush_tx();
            self.drain_events();
            let mut next = self.heap.peek().map(|Reverse((t, _, _))| *t);
            for q in &self.qp {
                if let Some(t) = q.poll_timeout() {
                    next = Some(next.map_or(t, |n: Instant| n.min(t)));
                }
            }
            let Some(next) = next else { return true };
            if next > limit {
                return false;
            }
            self.now = self.now.max(next);
            while let Some(Reverse((t, _, _))) = self.heap.peek() {
                if *t > self.now {
                    break;
                }
                let Reverse((_, id, to)) = self.heap.pop().unwrap();
                let p = self.in_flight[id as usize].take().unwrap();
                if let Err(e) = self.qp[to].handle_packet(self.now, p.into()) {
                    self.rx_errors.push((to, e));
                }
            }
            for side in 0..2 {
                if self.qp[side].poll_timeout().is_some_and(|t| t <= self.now) {
                    self.qp[side].handle_timeout(self.now);
                }
            }
            steps += 1;
            assert!(steps < 5_000_000, "harness livelock");
        }
    }

    pub fn run(&mut self) -> bool {
        self.run_until(Instant::from_us(1_000_000))
    }

    /// Send completions of `side`.
    pub fn send_completions(&self, side: usize) -> Vec<Completion> {
        self.events[side]
            .iter()
            .filter_map(|e| match e {
                Event::SendCompleted(c) => Some(*c),
                _ => None,
            })
            .collect()
    }

    /// Receive completions of `side`.
    pub fn recv_completions(&self, side: usize) -> Vec<Completion> {
        self.events[side]
            .iter()
            .filter_map(|e| match e {
                Event::RecvCompleted(c) => Some(*c),
                _ => None,
            })
            .collect()
    }

    /// Data packets `side` sent.
    pub fn data_sent(&self, side: usize) -> Vec<&RocePacket> {
        self.sent
            .iter()
            .filter(|(_, s, p)| *s == side && p.bth.opcode.is_write())
            .map(|(_, _, p)| p)
            .collect()
    }

    /// Bytes at `offset` of `side`'s region.
    pub fn mem(&self, side: usize, offset: u64, len: usize) -> Vec<u8> {
        self.qp[side]
            .memory()
            .read(RKEY, VA + offset, len as u64)
            .unwrap()
            .to_vec()
    }
}
