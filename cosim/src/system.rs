//! Two verilated NICs over the simulated multipath fabric ([`crate::fabric`]):
//! NIC A's QP writes a list of messages into a region on NIC B; B places
//! them and ACKs back through the fabric. Both NICs are configured through
//! config rows as a driver does it; the messages are posted into A's send
//! ring as it has room (one doorbell per batch), and both CQ rings and A's
//! EV-event ring are polled from host memory.
//!
//! A scoreboard checks the run (exactly-once, byte-identical placement,
//! in-order send and WRITE-IMM receive completions, no QP or DMA error)
//! and [`SystemConfig::golden_scenario`] describes the same run for the
//! golden model (`proto::loopback`), so the two can be compared
//! ([`compare_with_golden`]). docs/cosim.md has the parameter mapping.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant as WallClock;

use contract::layout::{Completion, CqStatus, EvEvent, EvNewState, SqContext, SqDescriptor, SqOpcode};
use proto::loopback::{message_data, LinkConfig, MessageSpec, Report, Scenario};
use proto::model::api::WcStatus;
use proto::model::cc::CcConfig;
use proto::model::Transport;
use proto::time::Duration;
use verilated::{Built, VerilatedError};

use crate::fabric::{cycles_to_ps, ps_to_cycles, Fabric, FabricError, PathStats};
use crate::nic::{Nic, ResponderParams, RetxParams, Stalls, Station};
use tb::dma::DmaTiming;
use tb::rng::Rng;
use tb::stall::Stall;

/// NIC A's requester QP.
pub const A_QP: u8 = 5;
/// NIC B's responder QP (A's destination QP).
pub const B_QP: u8 = 0x77;
/// A's send ring.
pub const SQ_BASE: u64 = 0x1000_0000;
/// A's send CQ (ring 0) and B's receive CQ (ring 1).
pub const SEND_CQ_BASE: u64 = 0x8000_0000;
pub const RECV_CQ_BASE: u64 = 0x8100_0000;
const CQ_LOG2: u8 = 10;
/// Every NIC's EV-event ring.
pub const EV_RING_BASE: u64 = 0x9000_0000;
const EV_RING_LOG2: u8 = 8;
/// Where message `i`'s bytes sit in A's memory: `LOCAL_BASE + offset(i)`.
pub const LOCAL_BASE: u64 = 0x2000_0000;
/// The region on B: message `i` goes to `REGION_VA + offset(i)`.
pub const REGION_VA: u64 = 0x5000_0000;
pub const RKEY: u32 = 0x1234;
/// The rkey of `SystemConfig::refused_message`: B has no region with it.
pub const REFUSED_RKEY: u32 = RKEY ^ 0x0100;
/// EV `i` of A's QP carries the value (UDP source port) `EV_BASE + i`.
pub const EV_BASE: u16 = 0x1000;
/// The send window the hardware supports (the retransmit engine's 256
/// slots per QP): 2 units of 128 PSNs.
pub const MAX_SEND_MPR_UNITS: u8 = 2;

const STATION_A: Station = Station {
    mac: 0x0200_0000_000A,
    ipv4: 0x0A00_000A,
};
const STATION_B: Station = Station {
    mac: 0x0200_0000_000B,
    ipv4: 0x0A00_000B,
};
/// Address-table row of the peer on either NIC.
const PEER_ROW: u16 = 3;

/// Responder turnaround the base RTT counts (ACK generation, ~0.3 us).
pub const TURNAROUND_NS: u64 = 300;
/// Floor of the stall allowance (the model's `proto::model::ev::STALL_MIN`).
pub const STALL_MIN_NS: u64 = 2000;
/// The send window in PSNs (the retransmit engine's 256 outstanding).
pub const SEND_WINDOW_PSNS: u64 = 256;
/// Header bytes per packet counted on the wire (the model's estimate,
/// `proto::loopback::WIRE_OVERHEAD`).
pub const PACKET_OVERHEAD: u64 = proto::loopback::WIRE_OVERHEAD;

/// Wire bytes one QP can have sent and not yet acknowledged: the least of
/// its congestion window, the 256-PSN send window and `messages` messages
/// of `max_len` bytes (the requester keeps `hw::requester::RTX_SLOTS` in
/// flight), each packet counted with [`PACKET_OVERHEAD`].
pub fn qp_window_wire_bytes(mtu: u32, max_len: u64, messages: u64, cwnd: u32) -> u64 {
    let mtu = u64::from(mtu.max(1));
    let packets = (messages * max_len.div_ceil(mtu).max(1)).min(SEND_WINDOW_PSNS);
    let wire = packets * (mtu + PACKET_OVERHEAD);
    wire.min(u64::from(cwnd) + packets * PACKET_OVERHEAD)
}

/// The stall rule's allowance and the tail check's age the driver writes
/// into the retransmit row (table 8), where the golden model derives them
/// from RTT samples (`proto::model::ev::EvSet::stall_allowance`,
/// `stall_age`). The hardware has no RTT samples (docs/hw/retransmit.md),
/// so the configuration must cover the worst RTT no loss can explain:
/// propagation, EV spread and jitter, and the time the link takes to
/// drain what the QPs sharing it can have queued (their windows at the
/// link rate; on a degraded path, at that path's rate).
///
/// * `queue = queued_bytes x 8 / rate` (0 without a rate);
/// * allowance = `max(2 us, 2 x base RTT, queue)` (the model's
///   `max(STALL_MIN, STALL_RTTS x base, srtt + 4 rttvar - base)`, with the
///   queue standing in for the RTT spread);
/// * age = `base RTT + spread + queue + allowance` (the model's `srtt +
///   allowance`, `srtt` at most `base + spread + queue`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StallTiming {
    /// One-way base delay of every path, ns.
    pub one_way_ns: u64,
    /// EV spread plus jitter, ns.
    pub spread_ns: u64,
    /// The slowest rate a packet of the QP crosses, Gb/s (None: no
    /// serialisation).
    pub rate_gbps: Option<f64>,
    /// Wire bytes that can be queued ahead of a packet on its way out.
    pub queued_bytes: u64,
}

impl StallTiming {
    /// From a link of the fabric (its slowest degraded path counted) and
    /// the wire bytes the QPs on it can have in flight.
    pub fn of_link(link: &LinkConfig, queued_bytes: u64) -> StallTiming {
        let slowest = link.degraded.iter().map(|d| d.1).fold(1.0f64, f64::min);
        StallTiming {
            one_way_ns: link.base_delay.as_ps() / 1000,
            spread_ns: (link.ev_delay_spread.as_ps() + link.jitter.as_ps()) / 1000,
            rate_gbps: link.line_rate_gbps.map(|g| g * slowest),
            queued_bytes,
        }
    }

    pub fn base_rtt_ns(&self) -> u64 {
        2 * self.one_way_ns + TURNAROUND_NS
    }

    /// Time the link takes to drain `queued_bytes`, ns (rounded up).
    pub fn queue_ns(&self) -> u64 {
        match self.rate_gbps {
            Some(g) if g > 0.0 => (self.queued_bytes as f64 * 8.0 / g).ceil() as u64,
            _ => 0,
        }
    }

    pub fn allowance_ns(&self) -> u32 {
        let a = (2 * self.base_rtt_ns()).max(STALL_MIN_NS).max(self.queue_ns());
        a.min(u64::from(u32::MAX)) as u32
    }

    pub fn age_ns(&self) -> u32 {
        let age = self.base_rtt_ns() + self.spread_ns + self.queue_ns() + u64::from(self.allowance_ns());
        age.min(u64::from(u32::MAX)) as u32
    }
}

/// Everything one run is made of. Times of the fabric in the golden
/// model's units (`proto::time`), those of the NIC configuration in ns.
#[derive(Clone, Debug)]
pub struct SystemConfig {
    /// EVs of A's QP (1..=128).
    pub evs: u16,
    pub log2_mtu: u8,
    pub messages: Vec<MessageSpec>,
    pub link_ab: LinkConfig,
    pub link_ba: LinkConfig,
    /// Seed of the fabric, the stalls and the message data.
    pub seed: u64,
    pub start_psn: u32,
    /// RTO = `ack_timeout(ack_timeout_exp)` = 1.024 us x 2^exp.
    pub ack_timeout_exp: u8,
    pub retry_linear: u8,
    pub retry_exp: u8,
    pub reorder_allowance: u16,
    /// The stall rule's allowance and the tail-check age (hardware takes
    /// them from config; the model derives them from RTT samples).
    pub stall_allowance_ns: u32,
    pub stall_age_ns: u32,
    pub ack_every: u16,
    pub ack_delay_cycles: u16,
    pub send_mpr_units: u8,
    /// Fixed congestion window in bytes (`min = max`).
    pub cwnd: u32,
    /// A's send ring holds `2^sq_log2_size` descriptors.
    pub sq_log2_size: u8,
    /// The driver keeps at most this many messages posted and not yet
    /// completed (default 16: the whole default ring). The requester
    /// itself keeps at most `hw::requester::RTX_SLOTS` = 64 messages of a
    /// QP in flight (it holds the next one back until an acknowledgement
    /// frees a retransmit record, docs/hw/requester.md), so the golden
    /// scenario gets the smaller of the two.
    pub max_outstanding: u32,
    pub min_good_evs: u8,
    /// Post this message (an index in `messages`) with an rkey B refuses
    /// (`REFUSED_RKEY`): a remote-access violation. The scoreboard then
    /// expects REMOTE_ACCESS for it, FLUSHED after it, and SUCCESS or
    /// FLUSHED before it (a message whose last packet is overtaken on
    /// another EV by the refused one is not acknowledged when the NACK
    /// arrives: timing, so hardware and model may differ there); the
    /// messages that succeeded placed once and intact, none of the refused
    /// one's bytes written, no byte of the others written twice (whether
    /// B placed packets that left before the error is not judged). A's
    /// `retx_drop` is not an error then: B's SACKs for packets placed
    /// after the refused one reach a QP whose records were flushed.
    pub refused_message: Option<usize>,
    /// Stop after this many cycles of traffic.
    pub cycle_limit: u64,
    pub stalls: Stalls,
    /// FST waveforms of NIC A and NIC B (the model must be built with
    /// trace), each with its GTKWave view beside it (`crate::waves`).
    pub trace: Option<(PathBuf, PathBuf)>,
}

impl SystemConfig {
    /// Defaults: MTU 1 KiB, RTO 16.4 us (exp 4), 7 + 7 retries, reorder
    /// allowance 3, SACK every 4 packets or 1 us, send window 256 PSNs,
    /// fixed 1 MiB window, a 64-entry send ring, at least one GOOD EV,
    /// 1 us base delay, 500 ns EV spread, 100 Gb/s links.
    pub fn new(evs: u16, messages: Vec<MessageSpec>, seed: u64) -> SystemConfig {
        let link = LinkConfig {
            base_delay: Duration::from_ns(1000),
            ev_delay_spread: Duration::from_ns(500),
            line_rate_gbps: Some(100.0),
            ..LinkConfig::default()
        };
        let mut cfg = SystemConfig {
            evs,
            log2_mtu: 10,
            messages,
            link_ab: link.clone(),
            link_ba: link,
            seed,
            start_psn: 0xFF_FF00,
            ack_timeout_exp: 4,
            retry_linear: 7,
            retry_exp: 7,
            reorder_allowance: 3,
            stall_allowance_ns: 0,
            stall_age_ns: 0,
            ack_every: 4,
            ack_delay_cycles: 323,
            send_mpr_units: MAX_SEND_MPR_UNITS,
            cwnd: 1 << 20,
            sq_log2_size: 4,
            max_outstanding: 16,
            min_good_evs: 1,
            refused_message: None,
            cycle_limit: 2_000_000,
            stalls: Stalls {
                tx_ready: Stall::NEVER,
                rx_valid: Stall::NEVER,
                dma: DmaTiming {
                    ready: Stall::go_percent(95),
                    ..DmaTiming::default()
                },
                axil_ready: Stall::NEVER,
            },
            trace: None,
        };
        cfg.derive_stall_timing();
        cfg
    }

    /// Set the stall rule's allowance and the tail check's age from the
    /// links, the MTU and what A's QP can have in flight
    /// ([`StallTiming`]). Call again after changing any of those (`mrc
    /// cosim` does, after its options and the scenario's changes).
    pub fn derive_stall_timing(&mut self) {
        let max_len = self.messages.iter().map(|m| u64::from(m.len)).max().unwrap_or(0);
        let t = StallTiming::of_link(
            &self.link_ab,
            qp_window_wire_bytes(self.mtu(), max_len, self.messages_in_flight() as u64, self.cwnd),
        );
        self.stall_allowance_ns = t.allowance_ns();
        self.stall_age_ns = t.age_ns();
    }

    /// Messages of A's QP in flight at most: what the driver keeps posted
    /// (`max_outstanding`), and no more than the requester's retransmit
    /// records (`hw::requester::RTX_SLOTS`). The queue the stall timing
    /// allows for is of these, not of the records a QP does not use.
    pub fn messages_in_flight(&self) -> usize {
        (self.max_outstanding as usize).min(hw::requester::RTX_SLOTS)
    }

    pub fn mtu(&self) -> u32 {
        1 << self.log2_mtu
    }

    /// Byte offset of every message in the source buffer and the region.
    pub fn offsets(&self) -> Vec<u64> {
        let mut off = 0;
        self.messages
            .iter()
            .map(|m| {
                let o = off;
                off += u64::from(m.len);
                o
            })
            .collect()
    }

    pub fn total_bytes(&self) -> u64 {
        self.messages.iter().map(|m| u64::from(m.len)).sum()
    }

    /// EV values of A's QP.
    pub fn ev_values(&self) -> Vec<u32> {
        (0..self.evs).map(|i| u32::from(EV_BASE + i)).collect()
    }

    /// The same run for the golden model of the legacy profile the RTL
    /// speaks (`proto::model::legacy_mrc`). Mapping (docs/cosim.md): same
    /// messages, data seed, start PSN, MTU, EV values, links (the
    /// `LinkConfig`s themselves), RTO exponent and retry budget, reorder
    /// allowance, ACK coalescing, send window, a fixed window of `cwnd`,
    /// minimum GOOD EVs. Differences the hardware forces: 64-bit SACK
    /// bitmaps; no probing of ASSUMED_BAD EVs (the model's probe interval
    /// is set beyond the run); the receive window is the send window.
    pub fn golden_scenario(&self) -> Scenario {
        let mut s = Scenario::new(Transport::MrcLegacy, usize::from(self.evs), self.messages.clone())
            .with_start_psn(self.start_psn)
            .with_mpr(self.send_mpr_units)
            .with_timeouts(self.ack_timeout_exp, self.retry_linear, self.retry_exp)
            .with_cc(CcConfig::Fixed {
                window: u64::from(self.cwnd),
            });
        let ack_delay = Duration::from_ps(cycles_to_ps(u64::from(self.ack_delay_cycles)));
        let time_limit = Duration::from_ps(cycles_to_ps(self.cycle_limit));
        for ep in [&mut s.a, &mut s.b] {
            ep.cfg.mtu = self.mtu();
            ep.cfg.ack_every = self.ack_every;
            ep.cfg.ack_delay = ack_delay;
            ep.cfg.reorder_allowance = u32::from(self.reorder_allowance);
            ep.rts.evs.evs = self.ev_values();
            ep.rts.evs.min_active = u16::from(self.min_good_evs);
            ep.rts.evs.probe_interval = time_limit + Duration::from_ms(1);
        }
        // The hardware's own limit: messages beyond RTX_SLOTS per QP are
        // posted and rung but not sent until a record is free.
        s.max_outstanding = Some(self.messages_in_flight());
        s.refused_message = self.refused_message;
        s.link_ab = self.link_ab.clone();
        s.link_ba = self.link_ba.clone();
        s.time_limit = time_limit;
        s.seed = self.seed;
        s
    }
}

/// `n` messages of 1 to `max_size` bytes (uniform), `imm_pct` percent of
/// them WRITE-with-immediate carrying a random immediate.
pub fn random_messages(seed: u64, n: usize, max_size: u32, imm_pct: u32) -> Vec<MessageSpec> {
    let mut rng = Rng::new(seed ^ 0x6D65_7373);
    (0..n)
        .map(|_| {
            let len = 1 + rng.below(u64::from(max_size.max(1))) as u32;
            let imm = rng.chance(u64::from(imm_pct)).then(|| rng.next_u64() as u32);
            MessageSpec { len, imm }
        })
        .collect()
}

/// An EV state change read from A's EV-event ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct EvChange {
    /// Simulated time it was seen, ns.
    pub at_ns: u64,
    pub ev_index: u8,
    pub new_state: &'static str,
    pub reason: &'static str,
}

/// Results of the scoreboard.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Scoreboard {
    /// Every message's send completion arrived, once, successfully.
    pub all_completed: bool,
    /// Send completions came in posting order with success.
    pub send_in_order: bool,
    /// Every byte of the region equals the message data.
    pub data_identical: bool,
    /// Every byte of the region was written exactly once.
    pub placed_once: bool,
    /// WRITE-IMM receive completions: one each, in order, right immediate
    /// and length.
    pub imm_in_order: bool,
    /// No error completion, no bad descriptor or doorbell.
    pub no_qp_error: bool,
    /// No DMA or MAC-stream protocol error on either NIC.
    pub no_protocol_error: bool,
    /// What went wrong, in words (first few of each kind).
    pub failures: Vec<String>,
}

impl Scoreboard {
    pub fn ok(&self) -> bool {
        self.all_completed
            && self.send_in_order
            && self.data_identical
            && self.placed_once
            && self.imm_in_order
            && self.no_qp_error
            && self.no_protocol_error
    }
}

/// What a run measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SystemReport {
    pub messages: usize,
    pub messages_completed: usize,
    pub bytes: u64,
    /// Cycles from the first doorbell to the last completion.
    pub cycles: u64,
    /// Cycles simulated in all (to the end of the drain).
    pub cycles_simulated: u64,
    pub sim_time_ns: f64,
    pub goodput_gbps: f64,
    pub latency_p50_ns: f64,
    pub latency_p99_ns: f64,
    pub latency_max_ns: f64,
    /// A's `retransmit` counter.
    pub retransmissions: u64,
    /// A's `rto` counter.
    pub rtos: u64,
    pub ev_marked_bad: u64,
    pub ev_changes: Vec<EvChange>,
    /// A's send completions with an error status (QP errors).
    pub error_completions: u64,
    /// The first of them that is not FLUSHED (the one that moved the QP
    /// to ERR): wr_id and status (`CqStatus` by name).
    pub fatal_error: Option<(u64, String)>,
    pub counters_a: BTreeMap<String, u64>,
    pub counters_b: BTreeMap<String, u64>,
    pub link_ab: Vec<PathStats>,
    pub link_ba: Vec<PathStats>,
    pub wall_seconds: f64,
    pub cycles_per_second: f64,
    pub scoreboard: Scoreboard,
    pub timed_out: bool,
    pub ok: bool,
}

/// Progress of a run, for a progress bar.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub completed: usize,
    pub total: usize,
    pub cycle: u64,
}

/// Why a system could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SystemError {
    #[error(transparent)]
    Verilated(#[from] VerilatedError),
    #[error(transparent)]
    Fabric(#[from] FabricError),
    #[error("invalid system configuration: {0}")]
    Config(String),
}

/// The two NICs, the fabric and the driver state.
pub struct System {
    pub cfg: SystemConfig,
    pub a: Nic,
    pub b: Nic,
    pub fabric: Fabric,
    cycle: u64,
    offsets: Vec<u64>,
    /// Descriptors posted so far (A's SQ producer index).
    posted: u32,
    /// Cycle each message was posted.
    post_cycle: Vec<u64>,
    /// Send completions consumed (A's CQ consumer index).
    send_ci: u32,
    recv_ci: u32,
    ev_ci: u32,
    /// Per message: send completions seen.
    send_done: Vec<u32>,
    latencies: Vec<u64>,
    last_completion_cycle: u64,
    /// Immediates / lengths expected at B, in order, and how many arrived.
    expect_imm: Vec<(u32, u32)>,
    recv_seen: usize,
    ev_changes: Vec<EvChange>,
    failures: Vec<String>,
    send_in_order: bool,
    imm_in_order: bool,
    no_qp_error: bool,
    /// Send completions with a status other than SUCCESS.
    error_completions: u64,
    /// The first of them that is not FLUSHED (the one that moved the QP
    /// to ERR): wr_id and status.
    fatal_error: Option<(u64, String)>,
    /// Per message: completed with SUCCESS.
    succeeded: Vec<bool>,
    a_writes_seen: u64,
    b_writes_seen: u64,
}

impl System {
    /// Load both NICs from `built`, configure them, fill A's memory with
    /// the messages.
    pub fn new(built: &Built, cfg: SystemConfig) -> Result<System, SystemError> {
        if cfg.evs == 0 || cfg.evs > 128 {
            return Err(SystemError::Config(format!("evs must be 1..=128, got {}", cfg.evs)));
        }
        if cfg.send_mpr_units == 0 || cfg.send_mpr_units > MAX_SEND_MPR_UNITS {
            return Err(SystemError::Config(format!(
                "the hardware's send window is at most {MAX_SEND_MPR_UNITS} x 128 PSNs"
            )));
        }
        if !(8..=13).contains(&cfg.log2_mtu) || cfg.sq_log2_size > 12 || cfg.messages.len() > 60_000 {
            return Err(SystemError::Config(
                "MTU 2^8..2^13, send ring <= 4096, <= 60,000 messages".into(),
            ));
        }
        if cfg.refused_message.is_some_and(|k| k >= cfg.messages.len()) {
            return Err(SystemError::Config("refused_message beyond the messages".into()));
        }
        let fabric = Fabric::new(&cfg.link_ab, &cfg.link_ba, &cfg.ev_values(), cfg.seed)?;
        let mut a = Nic::new(built, cfg.stalls, cfg.seed.wrapping_mul(3).wrapping_add(1))?;
        let mut b = Nic::new(built, cfg.stalls, cfg.seed.wrapping_mul(5).wrapping_add(2))?;
        if let Some((ta, tb)) = &cfg.trace {
            a.trace(ta)?;
            b.trace(tb)?;
        }
        let offsets = cfg.offsets();
        for (i, m) in cfg.messages.iter().enumerate() {
            a.dma
                .mem
                .fill(LOCAL_BASE + offsets[i], &message_data(cfg.seed, i, m.len));
        }
        configure_requester(&mut a, &cfg);
        configure_responder(&mut b, &cfg);
        let expect_imm = cfg
            .messages
            .iter()
            .take(cfg.refused_message.unwrap_or(usize::MAX))
            .filter_map(|m| m.imm.map(|imm| (imm, m.len)))
            .collect();
        let n = cfg.messages.len();
        let mut sys = System {
            a,
            b,
            fabric,
            cycle: 0,
            offsets,
            posted: 0,
            post_cycle: vec![0; n],
            send_ci: 0,
            recv_ci: 0,
            ev_ci: 0,
            send_done: vec![0; n],
            latencies: Vec::with_capacity(n),
            last_completion_cycle: 0,
            expect_imm,
            recv_seen: 0,
            ev_changes: Vec::new(),
            failures: Vec::new(),
            send_in_order: true,
            imm_in_order: true,
            no_qp_error: true,
            error_completions: 0,
            fatal_error: None,
            succeeded: vec![false; n],
            a_writes_seen: 0,
            b_writes_seen: 0,
            cfg,
        };
        // The deny of the EVs beyond the set produced DENIED events at
        // configuration: consume them (not state changes of the run).
        let want = 128 - usize::from(sys.cfg.evs);
        let mut config_events = 0;
        for _ in 0..50 {
            sys.a.run(100);
            config_events += sys.poll_ev_events(false);
            if config_events >= want {
                break;
            }
        }
        if config_events != want {
            sys.failures
                .push(format!("{config_events} EV events at configuration, expected {want}"));
        }
        sys.a.queue_ev_consumed(sys.ev_ci);
        sys.a.finish_csr(10_000);
        Ok(sys)
    }

    /// Cycles of traffic so far.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    fn completed(&self) -> usize {
        self.send_ci as usize
    }

    fn finished(&self) -> bool {
        self.completed() >= self.cfg.messages.len() && self.recv_seen >= self.expect_imm.len()
    }

    /// Post descriptors while A's ring has room; one doorbell per batch.
    fn post(&mut self) {
        let size = 1u32 << self.cfg.sq_log2_size;
        let n = self.cfg.messages.len() as u32;
        let room = size
            .min(self.cfg.max_outstanding)
            .saturating_sub(self.posted - self.send_ci);
        let left = n - self.posted;
        // Batch: wait for room for up to 8 descriptors (the requester
        // fetches up to 8 per read; fewer if the window is smaller or
        // fewer are left).
        if left == 0 || room < left.min(8).min(self.cfg.max_outstanding.div_ceil(2)) {
            return;
        }
        for _ in 0..room.min(left) {
            let i = self.posted as usize;
            let m = self.cfg.messages[i];
            let wr = SqDescriptor {
                opcode: if m.imm.is_some() {
                    SqOpcode::WriteImm
                } else {
                    SqOpcode::Write
                },
                signaled: true,
                length: m.len,
                wr_id: i as u64,
                local_iova: LOCAL_BASE + self.offsets[i],
                remote_va: REGION_VA + self.offsets[i],
                rkey: if self.cfg.refused_message == Some(i) {
                    REFUSED_RKEY
                } else {
                    RKEY
                },
                imm: m.imm.unwrap_or(0),
            };
            let slot = u64::from(self.posted % size);
            self.a
                .dma
                .mem
                .fill(SQ_BASE + 64 * slot, &wr.encode().expect("a valid descriptor"));
            self.post_cycle[i] = self.cycle;
            self.posted += 1;
        }
        self.a
            .axil
            .write(contract::regmap::doorbell::WINDOW + 4 * u16::from(A_QP), self.posted);
    }

    /// Read new entries of A's send CQ.
    fn poll_send_cq(&mut self) {
        let size = 1u32 << CQ_LOG2;
        loop {
            let slot = u64::from(self.send_ci % size);
            let phase = (self.send_ci / size).is_multiple_of(2);
            let Ok(c) = Completion::decode(&self.a.dma.mem.read_vec(SEND_CQ_BASE + 32 * slot, 32)) else {
                self.failures.push(format!("send CQE {} does not decode", self.send_ci));
                self.no_qp_error = false;
                return;
            };
            if c.phase != phase {
                break;
            }
            let want = u64::from(self.send_ci);
            let expected: &[CqStatus] = match self.cfg.refused_message.map(|k| (c.wr_id as usize).cmp(&k)) {
                None => &[CqStatus::Success],
                Some(std::cmp::Ordering::Less) => &[CqStatus::Success, CqStatus::Flushed],
                Some(std::cmp::Ordering::Equal) => &[CqStatus::RemoteAccess],
                Some(std::cmp::Ordering::Greater) => &[CqStatus::Flushed],
            };
            if c.status != CqStatus::Success {
                self.error_completions += 1;
                if c.status != CqStatus::Flushed {
                    self.fatal_error.get_or_insert((c.wr_id, format!("{:?}", c.status)));
                }
            } else if let Some(ok) = self.succeeded.get_mut(c.wr_id as usize) {
                *ok = true;
            }
            if !expected.contains(&c.status) || c.qp != u32::from(A_QP) {
                self.no_qp_error = false;
                if self.failures.len() < 20 {
                    self.failures.push(format!("send CQE {want}: {c:?}"));
                }
            } else if c.wr_id != want {
                self.send_in_order = false;
                if self.failures.len() < 20 {
                    self.failures.push(format!("send CQE {want} carries wr_id {}", c.wr_id));
                }
            }
            if let Some(d) = self.send_done.get_mut(c.wr_id as usize) {
                *d += 1;
                if *d == 1 {
                    self.latencies.push(self.cycle - self.post_cycle[c.wr_id as usize]);
                }
            }
            self.last_completion_cycle = self.cycle;
            self.send_ci += 1;
            if self.send_ci.is_multiple_of(256) {
                self.a.queue_cq_consumed(0, self.send_ci);
            }
        }
    }

    /// Read new entries of B's receive CQ.
    fn poll_recv_cq(&mut self) {
        let size = 1u32 << CQ_LOG2;
        loop {
            let slot = u64::from(self.recv_ci % size);
            let phase = (self.recv_ci / size).is_multiple_of(2);
            let Ok(c) = Completion::decode(&self.b.dma.mem.read_vec(RECV_CQ_BASE + 32 * slot, 32)) else {
                self.failures
                    .push(format!("receive CQE {} does not decode", self.recv_ci));
                self.imm_in_order = false;
                return;
            };
            if c.phase != phase {
                break;
            }
            let k = self.recv_ci as usize;
            let good = c.status == CqStatus::Success
                && c.qp == u32::from(B_QP)
                && self
                    .expect_imm
                    .get(k)
                    .is_some_and(|&(imm, len)| c.imm == Some(imm) && c.byte_len == len);
            if !good {
                self.imm_in_order = false;
                if self.failures.len() < 20 {
                    self.failures
                        .push(format!("receive CQE {k}: {c:?}, expected {:?}", self.expect_imm.get(k)));
                }
            }
            self.recv_seen += 1;
            self.last_completion_cycle = self.cycle;
            self.recv_ci += 1;
            if self.recv_ci.is_multiple_of(256) {
                self.b.queue_cq_consumed(1, self.recv_ci);
            }
        }
    }

    /// Read new entries of A's EV-event ring; returns how many.
    fn poll_ev_events(&mut self, record: bool) -> usize {
        let size = 1u32 << EV_RING_LOG2;
        let mut n = 0;
        loop {
            let slot = u64::from(self.ev_ci % size);
            let phase = (self.ev_ci / size).is_multiple_of(2);
            let Ok(e) = EvEvent::decode(&self.a.dma.mem.read_vec(EV_RING_BASE + 16 * slot, 16)) else {
                self.failures.push(format!("EV event {} does not decode", self.ev_ci));
                return n;
            };
            if e.phase != phase {
                break;
            }
            if record {
                self.ev_changes.push(EvChange {
                    at_ns: cycles_to_ps(self.cycle) / 1000,
                    ev_index: e.ev_index,
                    new_state: match e.new_state {
                        EvNewState::Good => "good",
                        EvNewState::AssumedBad => "assumed_bad",
                        EvNewState::Denied => "denied",
                    },
                    reason: match e.reason {
                        contract::layout::EvReason::Control => "control",
                        contract::layout::EvReason::Loss => "loss",
                        contract::layout::EvReason::Timeout => "timeout",
                        contract::layout::EvReason::ProbeOk => "probe_ok",
                    },
                });
            }
            self.ev_ci += 1;
            n += 1;
            if self.ev_ci.is_multiple_of(64) {
                self.a.queue_ev_consumed(self.ev_ci);
            }
        }
        n
    }

    /// One cycle of both NICs and the fabric, then the driver's work.
    pub fn step(&mut self) {
        self.a.step();
        self.b.step();
        for f in self.a.tx.frames.drain(..) {
            self.fabric.ab.send(self.cycle, f);
        }
        for f in self.b.tx.frames.drain(..) {
            self.fabric.ba.send(self.cycle, f);
        }
        self.fabric.ab.deliver(self.cycle, &mut self.b.rx);
        self.fabric.ba.deliver(self.cycle, &mut self.a.rx);
        // Host memory changes only by DMA writes: poll the rings then.
        if self.a.dma.writes_done != self.a_writes_seen {
            self.a_writes_seen = self.a.dma.writes_done;
            self.poll_send_cq();
            self.poll_ev_events(true);
        }
        if self.b.dma.writes_done != self.b_writes_seen {
            self.b_writes_seen = self.b.dma.writes_done;
            self.poll_recv_cq();
        }
        self.post();
        // The AXI-Lite results of queued doorbells and consumer updates.
        self.a.axil.results.clear();
        self.b.axil.results.clear();
        self.cycle += 1;
    }

    /// Run to the end (all completions, or the cycle limit); `progress`
    /// is called every 4096 cycles.
    pub fn run(&mut self, progress: &mut dyn FnMut(Progress)) -> SystemReport {
        let wall = WallClock::now();
        let start = self.cycle;
        while !self.finished() && self.cycle - start < self.cfg.cycle_limit {
            self.step();
            if self.cycle.is_multiple_of(4096) {
                progress(Progress {
                    completed: self.completed(),
                    total: self.cfg.messages.len(),
                    cycle: self.cycle,
                });
            }
        }
        let timed_out = !self.finished();
        // Let late duplicates and ACKs land (anything written twice shows).
        for _ in 0..2000 {
            self.step();
        }
        let wall_seconds = wall.elapsed().as_secs_f64();
        progress(Progress {
            completed: self.completed(),
            total: self.cfg.messages.len(),
            cycle: self.cycle,
        });
        self.report(timed_out, wall_seconds)
    }

    fn read_counters(nic: &mut Nic) -> BTreeMap<String, u64> {
        hw::core::WIRED_COUNTERS
            .iter()
            .map(|&c| (c.to_string(), u64::from(nic.counter(c))))
            .collect()
    }

    fn report(&mut self, timed_out: bool, wall_seconds: f64) -> SystemReport {
        let cycles_simulated = self.cycle;
        let counters_a = Self::read_counters(&mut self.a);
        let counters_b = Self::read_counters(&mut self.b);
        let mut sb = Scoreboard {
            all_completed: self.send_done.iter().all(|&d| d == 1) && self.recv_seen == self.expect_imm.len(),
            send_in_order: self.send_in_order,
            imm_in_order: self.imm_in_order && self.recv_seen == self.expect_imm.len(),
            no_qp_error: self.no_qp_error,
            ..Scoreboard::default()
        };
        sb.failures = std::mem::take(&mut self.failures);
        let twice = self.send_done.iter().filter(|&&d| d > 1).count();
        let missing = self.send_done.iter().filter(|&&d| d == 0).count();
        if twice + missing > 0 {
            sb.failures.push(format!(
                "{missing} messages without a send completion, {twice} with more than one"
            ));
        }
        for (name, nic) in [
            ("req_bad_descriptor", &counters_a),
            ("req_bad_doorbell", &counters_a),
            ("retx_drop", &counters_a),
        ] {
            if nic[name] != 0 && !(name == "retx_drop" && self.cfg.refused_message.is_some()) {
                sb.no_qp_error = false;
                sb.failures.push(format!("NIC A counter {name} = {}", nic[name]));
            }
        }
        // Placement: every byte once, equal to the data.
        let mut identical = true;
        let mut once = true;
        for (i, m) in self.cfg.messages.iter().enumerate() {
            let va = REGION_VA + self.offsets[i];
            if let Some(k) = self.cfg.refused_message.filter(|_| !self.succeeded[i]) {
                // The refused message: no byte written; the others that
                // did not succeed: none written twice.
                let max = if i == k { 0 } else { 1 };
                let bad = (va..va + u64::from(m.len))
                    .filter(|a| self.b.dma.mem.writes.get(a).is_some_and(|&w| w > max))
                    .count();
                if bad > 0 {
                    once = false;
                    if sb.failures.len() < 40 {
                        sb.failures.push(format!(
                            "message {i} (refused or flushed): {bad} bytes written more than {max} times"
                        ));
                    }
                }
                continue;
            }
            let data = message_data(self.cfg.seed, i, m.len);
            if self.b.dma.mem.read_vec(va, m.len as usize) != data[..] {
                identical = false;
                if sb.failures.len() < 40 {
                    sb.failures
                        .push(format!("message {i} ({} bytes at {va:#x}) not placed as sent", m.len));
                }
            }
            let bad = (va..va + u64::from(m.len))
                .filter(|a| self.b.dma.mem.writes.get(a) != Some(&1))
                .count();
            if bad > 0 {
                once = false;
                if sb.failures.len() < 40 {
                    sb.failures
                        .push(format!("message {i}: {bad} bytes not written exactly once"));
                }
            }
        }
        sb.data_identical = identical;
        sb.placed_once = once;
        let mut proto_errors: Vec<String> = Vec::new();
        for (name, nic) in [("A", &self.a), ("B", &self.b)] {
            proto_errors.extend(nic.dma.errors.iter().take(5).map(|e| format!("NIC {name} DMA: {e}")));
            if nic.tx.bad_keep > 0 {
                proto_errors.push(format!("NIC {name} MAC TX: {} beats with a bad keep", nic.tx.bad_keep));
            }
        }
        sb.no_protocol_error = proto_errors.is_empty();
        sb.failures.extend(proto_errors);
        if timed_out {
            sb.failures
                .push(format!("cycle limit {} reached", self.cfg.cycle_limit));
        }

        let bytes: u64 = self
            .cfg
            .messages
            .iter()
            .zip(&self.succeeded)
            .filter(|(_, &ok)| ok)
            .map(|(m, _)| u64::from(m.len))
            .sum();
        let cycles = self.last_completion_cycle;
        let sim_time_ns = cycles_to_ps(cycles) as f64 / 1000.0;
        let goodput_gbps = if cycles > 0 {
            bytes as f64 * 8.0 / sim_time_ns
        } else {
            0.0
        };
        let mut lat = self.latencies.clone();
        lat.sort_unstable();
        let pct = |p: f64| -> f64 {
            if lat.is_empty() {
                return 0.0;
            }
            let k = ((p * lat.len() as f64).ceil() as usize).clamp(1, lat.len()) - 1;
            cycles_to_ps(lat[k]) as f64 / 1000.0
        };
        let ok = sb.ok() && !timed_out;
        SystemReport {
            messages: self.cfg.messages.len(),
            messages_completed: self.succeeded.iter().filter(|&&ok| ok).count(),
            bytes,
            cycles,
            cycles_simulated,
            sim_time_ns,
            goodput_gbps,
            latency_p50_ns: pct(0.5),
            latency_p99_ns: pct(0.99),
            latency_max_ns: pct(1.0),
            retransmissions: counters_a["retransmit"],
            rtos: counters_a["rto"],
            ev_marked_bad: counters_a["ev_marked_bad"],
            ev_changes: self.ev_changes.clone(),
            error_completions: self.error_completions,
            fatal_error: self.fatal_error.clone(),
            counters_a,
            counters_b,
            link_ab: self.fabric.ab.stats.clone(),
            link_ba: self.fabric.ba.stats.clone(),
            wall_seconds,
            cycles_per_second: cycles_simulated as f64 / wall_seconds.max(1e-9),
            scoreboard: sb,
            timed_out,
            ok,
        }
    }
}

/// Configure NIC A: the requester QP `A_QP` -> `B_QP` on B.
fn configure_requester(nic: &mut Nic, cfg: &SystemConfig) {
    let window = u16::from(cfg.send_mpr_units) * 128;
    nic.set_cc(A_QP, cfg.cwnd, cfg.cwnd, window);
    let retx = RetxParams {
        ack_timeout_exp: cfg.ack_timeout_exp,
        stall_allowance_ns: cfg.stall_allowance_ns,
        reorder_allowance: cfg.reorder_allowance,
        retry_linear: cfg.retry_linear,
        retry_exp: cfg.retry_exp,
        stall_age_ns: cfg.stall_age_ns,
    };
    // The RTO scanner visits QPs 0..=A_QP only: the resolution of the
    // RTO is one sweep.
    nic.set_retransmit(A_QP, &retx, A_QP);
    nic.set_addresses(STATION_A, PEER_ROW, STATION_B);
    nic.set_ev_ring(EV_RING_BASE, EV_RING_LOG2);
    nic.set_ev_set(A_QP, cfg.evs, EV_BASE);
    nic.set_cq_ring(0, SEND_CQ_BASE, CQ_LOG2);
    nic.start_send_qp(
        A_QP,
        &SqContext {
            sq_base: SQ_BASE,
            cq_index: 0,
            addr_index: PEER_ROW,
            dest_qp: u32::from(B_QP),
            start_psn: cfg.start_psn,
            pkey: 0xFFFF,
            sq_log2_size: cfg.sq_log2_size,
            log2_mtu: cfg.log2_mtu,
            ev_count: cfg.evs as u8,
            enable: true,
            send_mpr_units: cfg.send_mpr_units,
            ev_min_active: cfg.min_good_evs,
        },
    );
}

/// Configure NIC B: the responder QP `B_QP` with the region, and its send
/// context (the ACKs' destination QP and address).
fn configure_responder(nic: &mut Nic, cfg: &SystemConfig) {
    nic.set_ack_params(cfg.ack_every, cfg.ack_delay_cycles);
    nic.set_responder(&ResponderParams {
        qp: B_QP,
        start_psn: cfg.start_psn,
        rkey: RKEY,
        region_va: REGION_VA,
        region_len: cfg.total_bytes().max(1),
    });
    nic.set_addresses(STATION_B, PEER_ROW, STATION_A);
    nic.set_ev_ring(EV_RING_BASE, EV_RING_LOG2);
    nic.set_cq_ring(1, RECV_CQ_BASE, CQ_LOG2);
    nic.start_send_qp(
        B_QP,
        &SqContext {
            sq_base: 0x1800_0000,
            cq_index: 1,
            addr_index: PEER_ROW,
            dest_qp: u32::from(A_QP),
            start_psn: 0,
            pkey: 0xFFFF,
            sq_log2_size: 4,
            log2_mtu: cfg.log2_mtu,
            ev_count: cfg.evs as u8,
            enable: true,
            send_mpr_units: cfg.send_mpr_units,
            ev_min_active: cfg.min_good_evs,
        },
    );
}

/// The golden model's figures next to the hardware's and whether they
/// agree.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GoldenComparison {
    pub golden_ok: bool,
    pub golden_messages_completed: usize,
    pub golden_retransmissions: u64,
    pub golden_rtos: u64,
    pub golden_ev_marked_bad: usize,
    /// EV state changes of every kind the model reported.
    pub golden_ev_changes: usize,
    /// The model's error completions (QP errors).
    pub golden_error_completions: usize,
    /// The first of them that is not FLUSHED: wr_id and status (named as
    /// the hardware's `CqStatus`).
    pub golden_fatal_error: Option<(u64, String)>,
    pub golden_goodput_gbps: f64,
    pub golden_completion_ns: f64,
    pub hw_retransmissions: u64,
    /// |hw - golden| / golden (0 when both are 0).
    pub retransmission_difference: f64,
    /// Both delivered and completed every message, in order.
    pub same_delivery: bool,
    pub retransmissions_within_10pct: bool,
}

/// Compare a hardware run with the golden model's run of the same
/// scenario.
pub fn compare_with_golden(hw: &SystemReport, golden: &Report) -> GoldenComparison {
    let g = golden.counters_a.retransmitted_packets;
    let h = hw.retransmissions;
    let golden_fatal_error = golden
        .error_completions
        .iter()
        .find(|c| c.status != WcStatus::Flushed)
        .map(|c| {
            let status = match c.status {
                WcStatus::Success => "Success".to_string(),
                WcStatus::RemoteAccessError => "RemoteAccess".to_string(),
                other => format!("{other:?}"),
            };
            (c.wr_id, status)
        });
    let diff = if g == 0 && h == 0 {
        0.0
    } else {
        (h as f64 - g as f64).abs() / (g.max(1) as f64)
    };
    GoldenComparison {
        golden_ok: golden.ok,
        golden_messages_completed: golden.messages_completed,
        golden_retransmissions: g,
        golden_rtos: golden.counters_a.rto_fired,
        golden_ev_marked_bad: golden
            .ev_changes
            .iter()
            .filter(|c| c.to == proto::model::ev::EvState::AssumedBad)
            .count(),
        golden_ev_changes: golden.ev_changes.len(),
        golden_error_completions: golden.error_completions.len(),
        golden_fatal_error: golden_fatal_error.clone(),
        golden_goodput_gbps: golden.goodput_gbps,
        golden_completion_ns: golden.completion_time_ps as f64 / 1000.0,
        hw_retransmissions: h,
        retransmission_difference: diff,
        // With a QP error the model stops at it (its report is then not
        // `ok`): the same message failed, with the same status; which
        // messages in flight at the error succeeded and which were flushed
        // depends on timing (`SystemConfig::refused_message`), so the
        // counts of successes are not compared then.
        same_delivery: if golden_fatal_error.is_some() || hw.fatal_error.is_some() {
            !golden.timed_out && hw.scoreboard.ok() && golden_fatal_error == hw.fatal_error
        } else {
            golden.ok
                && hw.scoreboard.ok()
                && golden.messages_completed == hw.messages_completed
                && golden.messages_posted == hw.messages
        },
        retransmissions_within_10pct: diff <= 0.10,
    }
}

/// Cycles of `d` (fabric times to the core's clock).
pub fn duration_cycles(d: Duration) -> u64 {
    ps_to_cycles(d.as_ps())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The defaults' timing: at 100 Gb/s the propagation terms rule the
    /// allowance (the figures `mrc cosim` wrote before, plus the queue in
    /// the age); at 25 Gb/s the QP's window queued at the link does.
    #[test]
    fn stall_timing_counts_the_window_queued_at_the_link_rate() {
        // 4 messages of 8 KiB in 1 KiB packets: 32 x (1024 + 90) bytes.
        let window = qp_window_wire_bytes(1024, 8192, 4, 1 << 20);
        assert_eq!(window, 32 * 1114);
        // The send window caps it: 256 packets.
        assert_eq!(qp_window_wire_bytes(1024, 1 << 20, 4, 1 << 30), 256 * 1114);
        let mut link = LinkConfig {
            base_delay: Duration::from_ns(1000),
            ev_delay_spread: Duration::from_ns(500),
            jitter: Duration::from_ns(200),
            line_rate_gbps: Some(100.0),
            ..LinkConfig::default()
        };
        let t = StallTiming::of_link(&link, window);
        assert_eq!(t.base_rtt_ns(), 2300);
        assert_eq!(t.queue_ns(), 2852);
        assert_eq!(t.allowance_ns(), 4600);
        assert_eq!(t.age_ns(), 2300 + 700 + 2852 + 4600);
        link.line_rate_gbps = Some(25.0);
        let t = StallTiming::of_link(&link, window);
        assert_eq!(t.queue_ns(), 11_408);
        assert_eq!(t.allowance_ns(), 11_408);
        assert_eq!(t.age_ns(), 2300 + 700 + 2 * 11_408);
        // A degraded path drains at its own rate.
        link.degraded = vec![(proto::loopback::EvMatch::Index(3), 0.25)];
        assert_eq!(StallTiming::of_link(&link, window).queue_ns(), 45_630);
        // Without a rate, propagation only.
        link.line_rate_gbps = None;
        let t = StallTiming::of_link(&link, window);
        assert_eq!((t.allowance_ns(), t.age_ns()), (4600, 2300 + 700 + 4600));
    }
}
