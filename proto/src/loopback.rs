//! A deterministic two-endpoint scenario runner.
//!
//! Endpoint A writes a list of messages into a region registered on
//! endpoint B through two simulated one-way links (A->B, B->A) with
//! per-EV delays, jitter, loss, duplication, corruption, EV blackholes and an
//! optional line rate. Everything is driven by one seeded ChaCha RNG and an
//! integer-picosecond event queue, so a scenario and its seed give the same
//! [`Report`], bit for bit. Both transports run through it ([`Qp`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bytes::Bytes;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::model::cc::CcConfig;
use crate::model::ev::{EvSetConfig, EvStateChange};
use crate::model::{Completion, Counters, Event, Qp, QpSetup, QpState, QueuePair, Transport, WcStatus, WriteRequest};
use crate::time::{Duration, Instant};
use crate::wire::mrc10::{self, Headers, Mrc10Packet, Profile};
use crate::wire::{Encap, Opcode, Packet, RocePacket};
use crate::Psn;

pub mod pairs;

/// Which EV a blackhole swallows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum EvMatch {
    /// Index in endpoint A's EV set (resolved to its entropy value).
    Index(u16),
    /// Entropy value as carried in [`RocePacket::ev`].
    Value(u32),
}

/// An EV that goes down and comes back, again and again (a flapping
/// path): from `from` on, it drops everything for `down` at the start of
/// every `period`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Flap {
    pub ev: EvMatch,
    pub from: Instant,
    pub period: Duration,
    pub down: Duration,
}

impl Flap {
    /// Whether the EV is down at `t`. A zero period is a path that never
    /// comes back (a blackhole from `from` on).
    pub fn is_down(&self, t: Instant) -> bool {
        if t < self.from {
            return false;
        }
        let since = t.as_ps() - self.from.as_ps();
        match self.period.as_ps() {
            0 => true,
            p => since % p < self.down.as_ps(),
        }
    }
}

/// One direction of the link.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LinkConfig {
    /// One-way delay every packet sees.
    pub base_delay: Duration,
    /// Extra delay per EV, spread deterministically over `[0, spread]` by a
    /// hash of the entropy value: EVs have different latencies, so packets
    /// sprayed over several EVs arrive out of order.
    pub ev_delay_spread: Duration,
    /// Uniform random extra delay in `[0, jitter)` per packet (reordering
    /// within one EV).
    pub jitter: Duration,
    /// Probability a packet is lost.
    pub loss: f64,
    /// Decide each loss by [`keyed_loss`] (a hash of the seed, the
    /// direction, the opcode, the PSN and how many times this link has
    /// carried that opcode and PSN) instead of a draw from the run's RNG.
    /// Two runs that send the same packets (the golden model and the RTL
    /// co-simulation, whose schedules differ) then lose the same ones.
    #[serde(default)]
    pub loss_keyed: bool,
    /// Probability a packet is delivered twice.
    pub duplicate: f64,
    /// Probability a packet is corrupted. By default the packet is encoded
    /// to its real frame, 1 to 3 random bits of the frame are flipped, and
    /// the receiving QP gets the bytes ([`QueuePair::handle_frame`]): its
    /// parser and ICRC check must catch it, and it counts the drop.
    pub corrupt: f64,
    /// Instead of flipping bits, garble one header field or payload byte of
    /// the packet with [`garble`] and deliver it as a valid packet
    /// (robustness testing of the QP's semantic checks: the corruption an
    /// ICRC cannot see, such as a buggy peer).
    pub deliver_corrupted: bool,
    /// From `Instant` on, the EV drops everything.
    pub blackholes: Vec<(EvMatch, Instant)>,
    /// EVs that go down and up periodically.
    #[serde(default)]
    pub flaps: Vec<Flap>,
    /// Serialisation at this rate (Gb/s) if set; packets queue behind each
    /// other.
    pub line_rate_gbps: Option<f64>,
    /// EVs whose path is degraded to `factor` x the line rate (the fabric
    /// simulator's `FaultKind::Degrade`: a rate, no loss): after the
    /// link's serialisation, a packet of such an EV is serialised again on
    /// the path's own queue at `factor x line_rate_gbps` (a slower hop of
    /// that path). Needs `line_rate_gbps`.
    #[serde(default)]
    pub degraded: Vec<(EvMatch, f64)>,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            base_delay: Duration::from_ns(1000),
            ev_delay_spread: Duration::from_ns(500),
            jitter: Duration::ZERO,
            loss: 0.0,
            loss_keyed: false,
            duplicate: 0.0,
            corrupt: 0.0,
            deliver_corrupted: false,
            blackholes: Vec::new(),
            flaps: Vec::new(),
            line_rate_gbps: Some(400.0),
            degraded: Vec::new(),
        }
    }
}

/// Header bytes added to the payload for serialisation (Eth + IPv6 + UDP +
/// BTH + extension + ICRC, roughly).
pub const WIRE_OVERHEAD: u64 = 90;

/// One message A writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MessageSpec {
    pub len: u32,
    pub imm: Option<u32>,
}

/// A scenario: two endpoints, two links, messages A->B.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Scenario {
    pub transport: Transport,
    pub a: QpSetup,
    pub b: QpSetup,
    pub messages: Vec<MessageSpec>,
    pub link_ab: LinkConfig,
    pub link_ba: LinkConfig,
    /// Receives B posts before the run (the rest are posted one per receive
    /// completion); `None` = as many as its receive queue holds.
    pub recv_prepost: Option<usize>,
    /// A keeps at most this many messages posted and not yet completed
    /// (a driver's limit); `None` = as many as its send queue holds.
    #[serde(default)]
    pub max_outstanding: Option<usize>,
    /// Post this message (an index in `messages`) with an rkey B refuses
    /// (a remote-access violation: B NACKs it, A's QP goes to ERR, the
    /// message completes in error and the ones posted after it flushed).
    #[serde(default)]
    pub refused_message: Option<usize>,
    /// Simulated time after which the run stops.
    pub time_limit: Duration,
    /// Record every packet.
    pub capture: bool,
    /// Seed of the link RNG and the message data.
    pub seed: u64,
}

/// Remote region on B.
pub const REGION_VA: u64 = 0x1_0000_0000;
/// Its rkey.
pub const REGION_RKEY: u32 = 0x00C0_FFEE;
/// The rkey of [`Scenario::refused_message`]: no region of B has it.
pub const REFUSED_RKEY: u32 = REGION_RKEY ^ 0x0100;

impl Scenario {
    /// Defaults: `n_evs` EVs, MPR 64 x 128 PSNs, RTO 1.024 us x 2^5, 7
    /// linear and infinite exponential retries, a fixed 1 MiB window.
    pub fn new(transport: Transport, n_evs: usize, messages: Vec<MessageSpec>) -> Scenario {
        let mut a = QpSetup::new(transport, 0x11, 0x22);
        a.rtr.rq_psn = Psn::new(5000);
        a.rtr.mpr_units = 64;
        a.rtr.max_wimm = 1024;
        a.rts.sq_psn = Psn::new(100);
        a.rts.ack_timeout_exp = 5;
        a.rts.send_mpr_units = 64;
        a.rts.max_wimm = 1024;
        a.rts.evs = EvSetConfig {
            evs: (0..n_evs.max(1) as u32).map(|i| 0xC000 + i).collect(),
            min_active: 1,
            probe_interval: Duration::from_us(50),
            ..EvSetConfig::default()
        };
        a.rts.cc = CcConfig::Fixed { window: 1 << 20 };
        let mut b = a.mirrored();
        // Each endpoint draws its own random choices.
        for s in [&mut a, &mut b] {
            s.cfg.seed = s.cfg.qpn as u64;
            s.rts.evs.seed = s.cfg.qpn as u64;
        }
        Scenario {
            transport,
            a,
            b,
            messages,
            link_ab: LinkConfig::default(),
            link_ba: LinkConfig::default(),
            recv_prepost: None,
            max_outstanding: None,
            refused_message: None,
            time_limit: Duration::from_ms(100),
            capture: false,
            seed: 1,
        }
    }

    /// `n` messages of `len` bytes; every `imm_every`-th (if non-zero) is a
    /// WRITE-with-immediate carrying its index.
    pub fn messages(n: usize, len: u32, imm_every: usize) -> Vec<MessageSpec> {
        (0..n)
            .map(|i| MessageSpec {
                len,
                imm: (imm_every != 0 && i % imm_every == imm_every - 1).then_some(0xA000_0000 | i as u32),
            })
            .collect()
    }

    /// Set both PSN starts (A's send PSN is B's receive PSN).
    pub fn with_start_psn(mut self, psn: u32) -> Scenario {
        self.a.rts.sq_psn = Psn::new(psn);
        self.b.rtr.rq_psn = Psn::new(psn);
        self
    }

    /// Receive window (B) and send window (A) in units of 128 PSNs.
    pub fn with_mpr(mut self, units: u8) -> Scenario {
        for ep in [&mut self.a, &mut self.b] {
            ep.rtr.mpr_units = units;
            ep.rts.send_mpr_units = units;
        }
        self
    }

    /// ACK timeout exponent and retry budget of both ends.
    pub fn with_timeouts(mut self, ack_timeout_exp: u8, retry_linear: u8, retry_exp: u8) -> Scenario {
        for ep in [&mut self.a, &mut self.b] {
            ep.rts.ack_timeout_exp = ack_timeout_exp;
            ep.rts.retry_linear = retry_linear;
            ep.rts.retry_exp = retry_exp;
        }
        self
    }

    /// Congestion control of both ends.
    pub fn with_cc(mut self, cc: CcConfig) -> Scenario {
        self.a.rts.cc = cc;
        self.b.rts.cc = cc;
        self
    }

    /// Run it.
    pub fn run(&self) -> Report {
        Runner::new(self).run()
    }
}

/// The deterministic contents of message `i` (splitmix64 stream seeded by
/// the scenario seed and the index: cheap, so big transfers stay fast).
pub fn message_data(seed: u64, i: usize, len: u32) -> Bytes {
    let mut x = seed ^ (i as u64).wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut next = move || {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut v = vec![0u8; len as usize];
    let mut chunks = v.chunks_exact_mut(8);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&next().to_le_bytes());
    }
    let rest = chunks.into_remainder();
    let w = next().to_le_bytes();
    let n = rest.len();
    rest.copy_from_slice(&w[..n]);
    Bytes::from(v)
}

/// Direction of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Dir {
    AtoB,
    BtoA,
}

/// A captured packet, as sent, before the link acted on it (loss,
/// duplication, corruption are the link's).
#[derive(Clone, Debug)]
pub struct Captured {
    /// When its first bit goes on the wire: after the packets queued ahead
    /// of it on the link (with a line rate) have been serialised.
    pub at: Instant,
    pub dir: Dir,
    pub pkt: Packet,
}

/// What the links did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LinkStats {
    pub sent: u64,
    pub delivered: u64,
    pub lost: u64,
    pub duplicated: u64,
    pub corrupted: u64,
    /// Corrupted packets the receiver dropped (its parser or ICRC check).
    pub corrupted_dropped: u64,
    pub blackholed: u64,
}

/// The outcome of a run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    pub transport: Transport,
    pub messages_posted: usize,
    /// Successful send completions at A.
    pub messages_completed: usize,
    /// Bytes of the messages that completed successfully.
    pub bytes: u64,
    /// Time of the last successful completion (A's send or B's receive).
    pub completion_time_ps: u64,
    /// Time of the first error completion, if any (e.g. retry exceeded).
    pub first_error_ps: Option<u64>,
    pub goodput_gbps: f64,
    pub counters_a: Counters,
    pub counters_b: Counters,
    pub ev_changes: Vec<EvStateChange>,
    pub error_completions: Vec<Completion>,
    pub final_state_a: QpState,
    pub final_state_b: QpState,
    pub link_ab: LinkStats,
    pub link_ba: LinkStats,
    /// Each message completed exactly once, successfully, in posting order.
    pub delivered_exactly_once: bool,
    /// B's region equals the data written.
    pub data_identical: bool,
    /// B's WRITE-with-immediate completions: one per such message, in order,
    /// right immediate and length.
    pub imm_in_order: bool,
    /// The run hit its time limit before finishing.
    pub timed_out: bool,
    /// All of the above hold.
    pub ok: bool,
    /// Packets handed between the endpoints (both directions).
    pub packets: u64,
    #[serde(skip)]
    pub captured: Vec<Captured>,
}

/// Which endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    A,
    B,
}

struct Link {
    cfg: LinkConfig,
    /// Entropy values blackholed and since when.
    holes: Vec<(u32, Instant)>,
    /// Flapping EVs, each with its entropy value.
    flaps: Vec<(u32, Flap)>,
    /// Degraded EVs: entropy value, rate factor, their path's queue.
    degraded: Vec<(u32, f64, Instant)>,
    free_at: Instant,
    stats: LinkStats,
    /// Times each (opcode, PSN) was carried (for `LinkConfig::loss_keyed`).
    seen: std::collections::HashMap<(u8, u32), u32>,
}

impl Link {
    fn new(cfg: &LinkConfig, evs: &[u32]) -> Link {
        let value = |m: EvMatch| match m {
            EvMatch::Index(i) => evs.get(i as usize).copied().unwrap_or(u32::MAX),
            EvMatch::Value(v) => v,
        };
        let holes = cfg.blackholes.iter().map(|&(m, t)| (value(m), t)).collect();
        let flaps = cfg.flaps.iter().map(|&f| (value(f.ev), f)).collect();
        let degraded = cfg
            .degraded
            .iter()
            .map(|&(m, f)| (value(m), f, Instant::ZERO))
            .collect();
        Link {
            cfg: cfg.clone(),
            holes,
            flaps,
            degraded,
            free_at: Instant::ZERO,
            stats: LinkStats::default(),
            seen: std::collections::HashMap::new(),
        }
    }

    fn ev_extra(&self, ev: u32) -> Duration {
        self.cfg.ev_extra_delay(ev)
    }

    /// The keyed loss decision of `pkt` on this link (counts the packet).
    fn keyed_loss(&mut self, seed: u64, dir: Dir, pkt: &Packet) -> bool {
        let key = (pkt.opcode_byte(), pkt.psn().value());
        let nth = self.seen.entry(key).or_insert(0);
        *nth += 1;
        keyed_loss(seed, dir, key.0, key.1, *nth, self.cfg.loss)
    }
}

impl LinkConfig {
    /// The fixed extra delay of EV value `ev`: `ev_delay_spread` spread
    /// over `[0, spread]` by a hash of the value (the same EV always gets
    /// the same path length).
    pub fn ev_extra_delay(&self, ev: u32) -> Duration {
        let spread = self.ev_delay_spread.as_ps();
        if spread == 0 {
            return Duration::ZERO;
        }
        let h = (ev.wrapping_mul(0x9E37_79B1) >> 16) as u64 % 1024;
        Duration::from_ps(spread * h / 1023)
    }
}

/// Whether the `nth` (from 1) packet with `opcode` and `psn` a link in
/// direction `dir` carries is lost, with probability `p`: a splitmix64
/// hash of the arguments against `p`. Deterministic in its arguments, so
/// any simulator of the same link loses the same packets.
pub fn keyed_loss(seed: u64, dir: Dir, opcode: u8, psn: u32, nth: u32, p: f64) -> bool {
    if p <= 0.0 {
        return false;
    }
    let d = match dir {
        Dir::AtoB => 1u64,
        Dir::BtoA => 2u64,
    };
    let mut z = seed
        ^ d.wrapping_mul(0xD1B5_4A32_D192_ED03)
        ^ (u64::from(opcode) << 56)
        ^ (u64::from(psn) << 24)
        ^ u64::from(nth);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    // The top 53 bits as a uniform number in [0, 1).
    ((z >> 11) as f64) * (1.0 / (1u64 << 53) as f64) < p
}

/// Flip 1 to 3 random bits of `pkt`'s frame: what a bad link or a faulty
/// switch buffer does. The result is handed to the receiver as bytes.
pub fn corrupt_frame(pkt: &Packet, encap: &Encap, profile: &Profile, rng: &mut impl Rng) -> Vec<u8> {
    let mut frame = Vec::new();
    pkt.emit_frame(encap, profile, &mut frame);
    for _ in 0..rng.gen_range(1..=3) {
        let i = rng.gen_range(0..frame.len());
        frame[i] ^= 1 << rng.gen_range(0..8);
    }
    frame
}

/// Garble one field of `pkt` (header or payload) while keeping it a
/// packet the wire can carry: corruption that an ICRC does not catch (a
/// buggy peer).
pub fn garble(pkt: &mut Packet, rng: &mut impl Rng) {
    match pkt {
        Packet::Roce(p) => garble_roce(p, rng),
        Packet::Mrc10(p) => garble_mrc10(p, rng),
    }
}

fn flip_payload(payload: &mut Bytes, rng: &mut impl Rng) {
    let mut v = payload.to_vec();
    let i = rng.gen_range(0..v.len());
    v[i] ^= 1 << rng.gen_range(0..8);
    *payload = Bytes::from(v);
}

fn garble_roce(pkt: &mut RocePacket, rng: &mut impl Rng) {
    match rng.gen_range(0..5) {
        0 if !pkt.payload.is_empty() => flip_payload(&mut pkt.payload, rng),
        1 => pkt.bth.psn = Psn::new(pkt.bth.psn.value() ^ (1 << rng.gen_range(0..24))),
        2 => pkt.bth.dest_qp ^= 1 << rng.gen_range(0..24),
        3 => pkt.bth.opcode = Opcode::ALL[rng.gen_range(0..Opcode::ALL.len())],
        _ => {
            if let Some(r) = &mut pkt.reth {
                r.rkey ^= 1 << rng.gen_range(0..32);
            } else {
                pkt.aeth = None;
            }
        }
    }
}

fn garble_mrc10(pkt: &mut Mrc10Packet, rng: &mut impl Rng) {
    match rng.gen_range(0..6) {
        0 if !pkt.payload.is_empty() => flip_payload(&mut pkt.payload, rng),
        1 => pkt.bth.psn = Psn::new(pkt.bth.psn.value() ^ (1 << rng.gen_range(0..24))),
        2 => pkt.bth.dest_qp ^= 1 << rng.gen_range(0..24),
        3 => pkt.bth.opcode = mrc10::Opcode::ALL[rng.gen_range(0..mrc10::Opcode::ALL.len())],
        4 => match &mut pkt.headers {
            Headers::Write(w) => {
                w.reth.va ^= 1 << rng.gen_range(0..64);
                w.meth.msn ^= rng.gen::<u16>();
            }
            Headers::Sack { seth, cc_state } => {
                seth.sack_offset ^= rng.gen::<i16>();
                seth.bitmap ^= rng.gen::<u64>();
                cc_state.echo_ts ^= rng.gen::<u16>();
            }
            Headers::Nack(n) => n.nack_psn = Psn::new(n.nack_psn.value() ^ (1 << rng.gen_range(0..24))),
            Headers::Probe(p) => p.probe_id ^= rng.gen::<u16>(),
            Headers::Ack(a) => a.msn ^= 1 << rng.gen_range(0..24),
            Headers::Endpoint { erth, .. } => erth.timestamp ^= rng.gen::<u16>(),
        },
        _ => match &mut pkt.headers {
            Headers::Write(w) => w.reth.rkey ^= 1 << rng.gen_range(0..32),
            Headers::Sack { seth, .. } => {
                seth.cum_ack_psn = Psn::new(seth.cum_ack_psn.value() ^ (1 << rng.gen_range(0..24)))
            }
            _ => pkt.ev ^= rng.gen::<u32>(),
        },
    }
}

/// What a runner judges of one pair's sends and receives at the end of
/// its run (this runner's and `pairs`').
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

struct InFlight {
    to: Side,
    pkt: Packet,
    /// Bit-flipped frame to deliver as bytes instead of `pkt`.
    corrupted_frame: Option<Vec<u8>>,
}

struct Runner<'a> {
    sc: &'a Scenario,
    a: Qp,
    b: Qp,
    now: Instant,
    rng: ChaCha8Rng,
    links: [Link; 2],
    heap: BinaryHeap<Reverse<(u64, u64, u32)>>,
    slab: Vec<Option<InFlight>>,
    free: Vec<u32>,
    seq: u64,
    captured: Vec<Captured>,
    data: Vec<Bytes>,
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

impl<'a> Runner<'a> {
    fn new(sc: &'a Scenario) -> Runner<'a> {
        let mut a: Qp = sc.a.bring_up(Instant::ZERO).expect("valid scenario configuration");
        let mut b: Qp = sc.b.bring_up(Instant::ZERO).expect("valid scenario configuration");
        let total: u64 = sc.messages.iter().map(|m| m.len as u64).sum();
        b.memory_mut()
            .register(REGION_VA, total.max(1), REGION_RKEY)
            .expect("region");
        let data: Vec<Bytes> = sc
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| message_data(sc.seed, i, m.len))
            .collect();
        let mut offsets = Vec::with_capacity(data.len());
        let mut off = 0;
        for m in &sc.messages {
            offsets.push(off);
            off += m.len as u64;
        }
        let n_imm = sc.messages.iter().filter(|m| m.imm.is_some()).count();
        // The QPs treat max_wimm = 0 as 1 (a receive queue of one entry).
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
        let _ = &mut a;
        Runner {
            a,
            b,
            now: Instant::ZERO,
            rng: ChaCha8Rng::seed_from_u64(sc.seed),
            links: [
                Link::new(&sc.link_ab, &sc.a.rts.evs.evs),
                Link::new(&sc.link_ba, &sc.a.rts.evs.evs),
            ],
            heap: BinaryHeap::new(),
            slab: Vec::new(),
            free: Vec::new(),
            seq: 0,
            captured: Vec::new(),
            data,
            offsets,
            send_done: vec![0; sc.messages.len()],
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
            sc,
        }
    }

    /// Returns whether anything was posted.
    fn post_more(&mut self) -> bool {
        let before = self.next_send;
        // Keep A's send queue fed (it holds SQ_DEPTH requests).
        while self.next_send < self.sc.messages.len() {
            if self
                .sc
                .max_outstanding
                .is_some_and(|m| self.next_send - self.next_done as usize >= m)
            {
                break;
            }
            let i = self.next_send;
            let m = self.sc.messages[i];
            let wr = WriteRequest {
                wr_id: i as u64,
                data: self.data[i].clone(),
                remote_va: REGION_VA + self.offsets[i],
                rkey: if self.sc.refused_message == Some(i) {
                    REFUSED_RKEY
                } else {
                    REGION_RKEY
                },
                imm: m.imm,
            };
            if self.a.post_write(self.now, wr).is_err() {
                break;
            }
            self.next_send += 1;
        }
        self.next_send != before
    }

    fn send(&mut self, from: Side, pkt: Packet) {
        self.packets += 1;
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
        if self.sc.capture {
            self.captured.push(Captured {
                at: on_wire,
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
            link.keyed_loss(self.sc.seed, dir, &pkt)
        } else {
            link.cfg.loss > 0.0 && self.rng.gen_bool(link.cfg.loss.min(1.0))
        };
        if lost {
            link.stats.lost += 1;
            return;
        }
        let cfg = &link.cfg;
        let copies = if cfg.duplicate > 0.0 && self.rng.gen_bool(cfg.duplicate.min(1.0)) {
            link.stats.duplicated += 1;
            2
        } else {
            1
        };
        let base = depart + cfg.base_delay + link.ev_extra(pkt.ev());
        let mut pkt = Some(pkt);
        for c in 0..copies {
            let link = &mut self.links[li];
            let cfg = &link.cfg;
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
                    let profile = self.qp(to).config().profile;
                    corrupted_frame = Some(corrupt_frame(&p, &encap, &profile, &mut self.rng));
                }
                self.links[li].stats.corrupted += 1;
            }
            let at = base + Duration::from_ps(jitter + c as u64 * 1000);
            self.schedule(
                at,
                InFlight {
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

    fn qp(&mut self, s: Side) -> &mut Qp {
        match s {
            Side::A => &mut self.a,
            Side::B => &mut self.b,
        }
    }

    fn pump(&mut self, s: Side) {
        let now = self.now;
        while let Some(p) = self.qp(s).poll_transmit(now) {
            self.send(s, p);
        }
        while let Some(e) = self.qp(s).poll_event() {
            self.on_event(s, e);
        }
    }

    fn on_event(&mut self, s: Side, e: Event) {
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
                    self.last_completion = self.now;
                } else {
                    self.first_error.get_or_insert(self.now);
                    self.errors.push(c);
                }
            }
            (Side::B, Event::RecvCompleted(c)) => {
                if c.status == WcStatus::Success {
                    self.recv_seen.push(c);
                    self.last_completion = self.last_completion.max(self.now);
                    if self.recvs_to_post > 0 && self.b.post_recv(self.next_recv_id).is_ok() {
                        self.next_recv_id += 1;
                        self.recvs_to_post -= 1;
                    }
                } else {
                    self.errors.push(c);
                }
            }
            (_, Event::SendCompleted(c)) | (_, Event::RecvCompleted(c)) if c.status != WcStatus::Success => {
                self.first_error.get_or_insert(self.now);
                self.errors.push(c);
            }
            (Side::A, Event::EvStateChanged(c)) => self.ev_changes.push(c),
            _ => {}
        }
    }

    fn finished(&self) -> bool {
        let sends_done = self.next_done as usize >= self.sc.messages.len();
        (sends_done && self.recv_seen.len() >= self.n_imm) || self.a.state() == QpState::Error
    }

    fn run(mut self) -> Report {
        let limit = Instant::ZERO + self.sc.time_limit;
        let mut timed_out = false;
        self.post_more();
        loop {
            self.pump(Side::A);
            self.pump(Side::B);
            if self.post_more() && self.sc.max_outstanding.is_some() {
                // Under a `max_outstanding` limit every post follows a
                // completion and nothing else may be pending: send now,
                // not at the next event (there may be none). Without the
                // limit the runner keeps its original schedule.
                self.pump(Side::A);
            }
            if self.finished() {
                break;
            }
            let next_pkt = self.heap.peek().map(|Reverse((t, _, _))| Instant(*t));
            let ta = self.a.poll_timeout();
            let tb = self.b.poll_timeout();
            let next = [next_pkt, ta, tb].into_iter().flatten().min();
            let Some(next) = next else {
                timed_out = true;
                break;
            };
            if next > limit {
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
                if let Some(frame) = f.corrupted_frame {
                    if self.qp(f.to).handle_frame(now, &frame).is_err() {
                        self.links[li].stats.corrupted_dropped += 1;
                    }
                } else {
                    let _ = self.qp(f.to).handle_packet(now, f.pkt);
                }
                // Send responses promptly (keeps SACK service times honest).
                self.pump(f.to);
            }
            if matches!(self.a.poll_timeout(), Some(t) if t <= now) {
                self.a.handle_timeout(now);
            }
            if matches!(self.b.poll_timeout(), Some(t) if t <= now) {
                self.b.handle_timeout(now);
            }
        }
        self.report(timed_out)
    }

    fn report(mut self, timed_out: bool) -> Report {
        // Drain late events.
        self.pump(Side::A);
        self.pump(Side::B);
        let sc = self.sc;
        let n = sc.messages.len();
        let total: u64 = sc.messages.iter().map(|m| u64::from(m.len)).sum();
        let data_identical = data_placed(&self.b, REGION_RKEY, REGION_VA, total, &self.data, &self.offsets);
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
            ev_changes: self.ev_changes,
            error_completions: self.errors,
            final_state_a: self.a.state(),
            final_state_b: self.b.state(),
            link_ab: self.links[0].stats,
            link_ba: self.links[1].stats,
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
