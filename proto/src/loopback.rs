//! A deterministic two-endpoint scenario runner.
//!
//! Endpoint A writes a list of messages into a region registered on
//! endpoint B through two simulated one-way links (A->B, B->A) with
//! per-EV delays, jitter, loss, duplication, corruption, EV blackholes and an
//! optional line rate. Everything is driven by one seeded ChaCha RNG and an
//! integer-picosecond event queue, so a scenario and its seed give the same
//! [`Report`], bit for bit. Every transport runs through it ([`Qp`](crate::model::Qp)).
//!
//! This file holds what a run is given and what it reports; the run
//! itself is in the submodules: `link` (one direction of the link),
//! `pair` (one QP pair and the judging of its delivery), [`switch`] (a
//! trimming switch port at the end of a link), `runner` (the
//! event loop), and [`pairs`] (several QP pairs over the same links, the
//! golden side of a co-simulation with several QPs).

use bytes::Bytes;
use rand::Rng;

use pair::Pair;
use pairs::PairSpec;
use runner::Runner;

use crate::model::cc::CcConfig;
use crate::model::ev::{EvSetConfig, EvStateChange};
use crate::model::{Completion, Counters, QpSetup, QpState, Transport};
use crate::time::{Duration, Instant};
use crate::wire::mrc10::{self, Headers, Mrc10Packet, Profile};
use crate::wire::{Encap, Opcode, Packet, RocePacket};
use crate::Psn;

mod link;
mod pair;
pub mod pairs;
mod runner;
pub mod switch;

pub use switch::SwitchQueue;

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
    /// A trimming switch port at the end of the link (the receiver's last
    /// hop): data queues there at its rate, is ECN-marked above a depth
    /// and trimmed beyond its capacity ([`switch`]).
    #[serde(default)]
    pub switch: Option<SwitchQueue>,
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
            switch: None,
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
    /// Each endpoint hands its link a packet only once at most
    /// [`PACED_BACKLOG_BYTES`] wait for the wire (a NIC's transmit path at
    /// the line rate, as the co-simulated cards' MACs take frames), so a
    /// packet's EV and send time are chosen within a jumbo frame's time
    /// of the wire; pairs sharing a link take turns when it takes a
    /// packet. Without it an endpoint hands over what its windows allow
    /// at once and the link queues it: a window of packets gets its EVs
    /// and send times at one instant and leaves over the time the link
    /// takes to carry it. Needs both links' `line_rate_gbps` (ignored
    /// without).
    #[serde(default)]
    pub paced: bool,
    /// Simulated time after which the run stops.
    pub time_limit: Duration,
    /// Record every packet.
    pub capture: bool,
    /// Seed of the link RNG and the message data.
    pub seed: u64,
}

/// What a paced link ([`Scenario::paced`]) lets wait for the wire: an
/// endpoint hands it a packet once no more than this many bytes, at its
/// line rate, are still to go out. One jumbo frame (9,216 bytes): a
/// 100 GbE MAC's transmit FIFO holds the next frame while one leaves, so
/// the wire stays busy, and little more. The co-simulated cards' MACs
/// take frames by the same rule (`cosim::fabric`).
pub const PACED_BACKLOG_BYTES: u64 = 9216;

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
            paced: false,
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
        let pair = Pair::new(PairSpec::of_scenario(self)).expect("valid scenario configuration");
        Runner::new(vec![pair]).run().remove(0)
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
    /// When its endpoint handed it to the link (and stamped it, and chose
    /// its EV): `at`, less the time it queued ([`Scenario::paced`]).
    pub handed: Instant,
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
    /// Data packets the switch port trimmed to their headers.
    #[serde(default)]
    pub trimmed: u64,
    /// Data packets the switch port marked ECN-CE.
    #[serde(default)]
    pub ecn_marked: u64,
    /// Data packets the full switch port dropped (not trimmable).
    #[serde(default)]
    pub switch_dropped: u64,
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
