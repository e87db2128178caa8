//! Hostile input: feed a queue pair arbitrary and mutated frames and check
//! the robustness contract after every one.
//!
//! The contract (the project's rule for bad input): a frame that is dropped
//! returns a typed error and increments exactly one drop counter; it places
//! no data, completes nothing and acknowledges nothing; nothing panics; and
//! whatever the QP sends afterwards is still a well-formed packet.
//!
//! Used by the fuzz target `fuzz/fuzz_targets/responder.rs` (coverage-guided,
//! unbounded) and by `proto/tests/hostile.rs` (seeded, bounded, in CI). The
//! input is a byte string decoded as a sequence of operations on a victim QP
//! that has real state: it has data in flight to its peer and receives data
//! from it, so mutated SACKs, NACKs and data packets reach deep code.

use bytes::Bytes;

use crate::loopback::{Scenario, REGION_RKEY, REGION_VA};
use crate::model::{Counters, Event, Qp, QueuePair, RxError, Transport, WriteRequest};
use crate::time::{Duration, Instant};
use crate::wire::mrc10::Profile;
use crate::wire::{icrc::reseal_frame, Encap, Packet};

/// A broken rule, with the operation that broke it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation(pub String);

/// What a run exercised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostileStats {
    pub frames: u64,
    pub accepted: u64,
    pub dropped: u64,
    pub sent: u64,
}

/// The victim, its peer's valid packets (templates to mutate), and the clock.
pub struct Rig {
    pub victim: Qp,
    templates: Vec<Vec<u8>>,
    now: Instant,
    stats: HostileStats,
}

const MSG_LEN: usize = 3 * 1024 + 100;

fn write(i: u64, seed: u8) -> WriteRequest {
    WriteRequest {
        wr_id: i,
        data: Bytes::from(vec![seed.wrapping_add(i as u8); MSG_LEN]),
        remote_va: REGION_VA + i * MSG_LEN as u64,
        rkey: REGION_RKEY,
        imm: (i % 2 == 1).then_some(i as u32),
    }
}

fn drain(qp: &mut Qp, now: Instant) -> Vec<Packet> {
    let mut v = Vec::new();
    while let Some(p) = qp.poll_transmit(now) {
        v.push(p);
    }
    while qp.poll_event().is_some() {}
    v
}

impl Rig {
    /// A victim QP of `transport` in RTS with 4 writes in flight to its peer,
    /// a registered region and receives posted, plus the peer's data and ACK
    /// frames as templates.
    pub fn new(transport: Transport) -> Rig {
        let mut sc = Scenario::new(transport, 4, Vec::new());
        for ep in [&mut sc.a, &mut sc.b] {
            ep.cfg.mtu = 1024;
            ep.cfg.ack_every = 2;
        }
        let (mut victim, mut peer): (Qp, Qp) = (
            sc.a.bring_up(Instant::ZERO).expect("valid scenario configuration"),
            sc.b.bring_up(Instant::ZERO).expect("valid scenario configuration"),
        );
        let region = 16 * MSG_LEN as u64;
        for qp in [&mut victim, &mut peer] {
            qp.memory_mut()
                .register(REGION_VA, region, REGION_RKEY)
                .expect("fresh table");
            for r in 0..8 {
                let _ = qp.post_recv(r);
            }
        }
        let t0 = Instant::ZERO;
        for i in 0..4 {
            let _ = victim.post_write(t0, write(i, 0x10));
            let _ = peer.post_write(t0, write(i, 0x80));
        }
        let from_victim = drain(&mut victim, t0);
        let mut templates_pkts = drain(&mut peer, t0);
        // The peer acknowledges what the victim sent: SACKs/ACKs for PSNs the
        // victim really has in flight.
        let t1 = Instant::from_us(3);
        for p in from_victim {
            let _ = peer.handle_packet(t1, p);
        }
        peer.handle_timeout(t1 + Duration::from_us(20));
        templates_pkts.extend(drain(&mut peer, t1 + Duration::from_us(20)));
        let encap = Encap::test_v6().reversed();
        let templates = templates_pkts
            .iter()
            .map(|p| {
                let mut f = Vec::new();
                p.emit_frame(&encap, &Profile::DEFAULT, &mut f);
                f
            })
            .collect();
        Rig {
            victim,
            templates,
            now: t1,
            stats: HostileStats::default(),
        }
    }

    /// Number of template frames.
    pub fn templates(&self) -> usize {
        self.templates.len()
    }

    /// Decode `input` as operations and apply them, checking the contract
    /// after each.
    pub fn run(&mut self, input: &[u8]) -> Result<HostileStats, Violation> {
        let mut it = input.iter().copied();
        let mut next = move || it.next();
        while let Some(op) = next() {
            let pick = next().unwrap_or(0) as usize;
            let t = if self.templates.is_empty() {
                Vec::new()
            } else {
                self.templates[pick % self.templates.len()].clone()
            };
            let frame = match op % 6 {
                // A valid frame from the peer: moves the victim legitimately.
                0 => t,
                // Mutated and resealed: reaches the transport parser and QP.
                1 | 2 => {
                    let mut f = t;
                    for _ in 0..=(op / 6 % 3) {
                        let at = u16::from_be_bytes([next().unwrap_or(0), next().unwrap_or(0)]) as usize;
                        let x = next().unwrap_or(1).max(1);
                        if !f.is_empty() {
                            let n = f.len();
                            f[at % n] ^= x;
                        }
                    }
                    if op % 6 == 1 {
                        reseal_frame(&mut f);
                    }
                    f
                }
                // Truncated.
                3 => {
                    let keep = next().unwrap_or(0) as usize * 8;
                    t[..keep.min(t.len())].to_vec()
                }
                // Raw bytes.
                4 => {
                    let n = next().unwrap_or(0) as usize;
                    (0..n).map(|_| next().unwrap_or(0)).collect()
                }
                // Time passes.
                _ => {
                    self.now += Duration::from_ns(next().unwrap_or(0) as u64 * 500);
                    if self.victim.poll_timeout().is_some_and(|d| d <= self.now) {
                        self.victim.handle_timeout(self.now);
                    }
                    self.check_output(op)?;
                    continue;
                }
            };
            self.feed(op, &frame)?;
        }
        Ok(self.stats)
    }

    fn feed(&mut self, op: u8, frame: &[u8]) -> Result<(), Violation> {
        self.stats.frames += 1;
        let before = *self.victim.counters();
        let mem_before = self.memory_digest();
        let r = self.victim.handle_frame(self.now, frame);
        let after = *self.victim.counters();
        match &r {
            Ok(()) => {
                self.stats.accepted += 1;
                if after.drops() != before.drops() {
                    return Err(Violation(format!("op {op}: accepted frame counted as dropped")));
                }
            }
            Err(e) => {
                self.stats.dropped += 1;
                if after.drops() != before.drops() + 1 {
                    return Err(Violation(format!(
                        "op {op}: {e} counted {} times",
                        after.drops() - before.drops()
                    )));
                }
                unchanged_on_drop(&before, &after, e)
                    .map_err(|what| Violation(format!("op {op}: {e} changed {what}")))?;
                if self.memory_digest() != mem_before {
                    return Err(Violation(format!("op {op}: dropped frame ({e}) changed memory")));
                }
            }
        }
        self.check_output(op)
    }

    fn check_output(&mut self, op: u8) -> Result<(), Violation> {
        while let Some(p) = self.victim.poll_transmit(self.now) {
            self.stats.sent += 1;
            if let Err(e) = p.validate(&Profile::DEFAULT) {
                return Err(Violation(format!(
                    "op {op}: victim sent a malformed packet ({e:?}): {p:?}"
                )));
            }
            let mut f = Vec::new();
            p.emit_frame(&Encap::test_v6(), &Profile::DEFAULT, &mut f);
            match Packet::parse_frame(&f, &Profile::DEFAULT) {
                Ok((q, _)) if q == p => {}
                other => {
                    return Err(Violation(format!(
                        "op {op}: sent packet does not round-trip: {other:?}"
                    )))
                }
            }
        }
        while let Some(ev) = self.victim.poll_event() {
            if let Event::RecvCompleted(c) = ev {
                if c.len as usize > MSG_LEN {
                    return Err(Violation(format!("op {op}: completion longer than any message: {c:?}")));
                }
            }
        }
        Ok(())
    }

    fn memory_digest(&self) -> u32 {
        let m = self.victim.memory();
        m.regions()
            .iter()
            .fold(0, |h, r| h ^ crate::wire::icrc::crc32(&r.data) ^ r.rkey)
    }
}

/// A dropped frame must not move the receive or send state: the counters of
/// accepted work stay where they were.
fn unchanged_on_drop(b: &Counters, a: &Counters, _e: &RxError) -> Result<(), &'static str> {
    let same = |x: u64, y: u64, what| if x == y { Ok(()) } else { Err(what) };
    same(b.rx_data_packets, a.rx_data_packets, "rx_data_packets")?;
    same(b.rx_data_bytes, a.rx_data_bytes, "rx_data_bytes")?;
    same(b.rx_acks, a.rx_acks, "rx_acks")?;
    same(b.messages_completed, a.messages_completed, "messages_completed")?;
    same(b.recv_completions, a.recv_completions, "recv_completions")?;
    same(
        b.retransmitted_packets,
        a.retransmitted_packets,
        "retransmitted_packets",
    )?;
    same(b.rx_duplicates, a.rx_duplicates, "rx_duplicates")?;
    Ok(())
}
