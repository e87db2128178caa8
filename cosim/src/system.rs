//! Two verilated NICs over the simulated multipath fabric ([`crate::fabric`]):
//! NIC A's QPs write a list of messages into regions on NIC B; B places
//! them and ACKs back through the fabric. With `qps` QP pairs, message `i`
//! goes over pair `i % qps` (A's QP `A_QP + q` to B's QP `B_QP + q`, each
//! with its own send ring, region, EV set and PSN range), so the QPs'
//! traffic is interleaved on the same two NICs and fabric. Both NICs are
//! configured through config rows as a driver does it; the messages are
//! posted into each QP's send ring as it has room (one doorbell per batch),
//! and both CQ rings (shared by the QPs) and A's EV-event ring are polled
//! from host memory.
//!
//! A scoreboard checks the run per QP (exactly-once, byte-identical
//! placement in the QP's own region, in-order send and WRITE-IMM receive
//! completions carrying the QP's number, no QP or DMA error) and
//! [`SystemConfig::golden_scenario`] / [`SystemConfig::run_golden`]
//! describe the same run for the golden model (`proto::loopback` for one
//! pair, [`crate::golden`] for several), so the two can be compared
//! ([`compare_with_golden`], [`compare_with_golden_qps`]). docs/cosim.md
//! has the parameter mapping.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::time::Instant as WallClock;

use contract::layout::{Completion, CqStatus, EvEvent, EvNewState, SqContext, SqDescriptor, SqOpcode};
use proto::loopback::{message_data, LinkConfig, MessageSpec, Report, Scenario};
use proto::model::api::WcStatus;
use proto::model::cc::{CcConfig, NsccConfig};
use proto::model::nscc_fixed::NsccFixedParams;
use proto::model::Transport;
use proto::time::Duration;
use proto::wire::mrc10;
use verilated::{Built, VerilatedError};

use crate::fabric::{cycles_to_ps, frame_key, ps_to_cycles, Fabric, FabricError, PathStats};
use crate::golden::{run_pairs, GoldenError, PairSpec};
use crate::nic::{Nic, ResponderParams, RetxParams, Stalls, Station};
use tb::dma::DmaTiming;
use tb::rng::Rng;
use tb::stall::Stall;

/// NIC A's requester QP of pair 0 (pair `q` has `A_QP + q`, mod 256).
pub const A_QP: u8 = 5;
/// NIC B's responder QP of pair 0, A's destination QP (pair `q`: `B_QP +
/// q`, mod 256).
pub const B_QP: u8 = 0x77;
/// The QP pairs the core can carry: every QP number of a NIC
/// (`hw::requester::QPS`, the doorbell window's).
pub const MAX_QPS: u16 = hw::requester::QPS as u16;
/// A's send ring of pair 0; pair `q`'s is `q x SQ_STRIDE` above (a ring
/// holds at most 4096 descriptors of 64 bytes: 256 KiB).
pub const SQ_BASE: u64 = 0x1000_0000;
pub const SQ_STRIDE: u64 = 1 << 20;
/// B's send rings (the ACKs' send contexts), one per pair.
const B_SQ_BASE: u64 = 0x1800_0000;
/// Pair `q`'s source buffer on A and region on B are `q x
/// QP_REGION_STRIDE` above pair 0's (beyond any run's bytes: at most
/// 60,000 messages of 1 MiB).
pub const QP_REGION_STRIDE: u64 = 1 << 36;
/// The 24-bit PSN space the pairs' first PSNs are spread over.
pub const PSN_SPACE: u32 = 1 << 24;
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
pub const REFUSED_RKEY: u32 = RKEY ^ REFUSED_RKEY_BIT;
/// The bit that makes an rkey one B refuses (pair `q`'s region has `RKEY +
/// q`; its refused message carries that with this bit flipped, the same
/// MR slot, a different key).
const REFUSED_RKEY_BIT: u32 = 0x0100;
/// EV `i` of A's QP carries the value (UDP source port) `EV_BASE + i`
/// over IPv4 ...
pub const EV_BASE: u32 = 0x1000;
/// ... and `EV_BASE_V6 + i` over IPv6: MRC 1.0's 32-bit EVs, bits 31-16
/// in the flow label, on a base that is not a multiple of 128 (an EV's
/// index is not in its value's low bits: the card finds a SACK's EV from
/// its trigger's slot).
pub const EV_BASE_V6: u32 = 0xA5C3_1234;
/// The send window the hardware supports (the retransmit engine's 256
/// slots per QP): 2 units of 128 PSNs.
pub const MAX_SEND_MPR_UNITS: u8 = 2;

const STATION_A: Station = Station::v4(0x0200_0000_000A, 0x0A00_000A);
const STATION_B: Station = Station::v4(0x0200_0000_000B, 0x0A00_000B);
/// fd00::a and fd00::b.
const STATION_A_V6: Station = Station::v6(0x0200_0000_000A, 0xfd00 << 112 | 0xa);
const STATION_B_V6: Station = Station::v6(0x0200_0000_000B, 0xfd00 << 112 | 0xb);
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
/// Bits per byte (rates in Gb/s are bits per ns).
const BITS_PER_BYTE: f64 = 8.0;

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

/// Static stall bounds for a link: the worst RTT no loss can explain
/// (propagation, EV spread and jitter, and the time the link takes to
/// drain what the QPs sharing it can have queued: their windows at the
/// link rate; on a degraded path, at that path's rate). The golden model
/// derives its bounds from RTT samples
/// (`proto::model::ev::EvSet::stall_allowance`, `stall_age`), and so does
/// the card's RTT estimator (docs/hw/rtt_est.md): `mrc cosim` writes no
/// floor under it (0 in the retransmit row, table 8) and uses the queue
/// figure only to put RTOs above it; `mrc perf` writes its own floors
/// from it (`mrc/src/perf.rs`).
///
/// * `queue = queued_bytes x 8 / rate` (0 without a rate), plus, with a
///   switch port at the link's end, what it holds at its rate;
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
    /// The longest a packet waits at the link's switch port, ns: its
    /// capacity at its rate (a packet that would wait longer is trimmed).
    pub switch_queue_ns: u64,
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
            switch_queue_ns: link.switch.map_or(0, |p| {
                (p.capacity_bytes.min(queued_bytes) as f64 * BITS_PER_BYTE / p.rate_gbps).ceil() as u64
            }),
        }
    }

    pub fn base_rtt_ns(&self) -> u64 {
        2 * self.one_way_ns + TURNAROUND_NS
    }

    /// Time the link takes to drain `queued_bytes`, ns (rounded up), and
    /// its switch port's queue after it.
    pub fn queue_ns(&self) -> u64 {
        let line = match self.rate_gbps {
            Some(g) if g > 0.0 => (self.queued_bytes as f64 * BITS_PER_BYTE / g).ceil() as u64,
            _ => 0,
        };
        line + self.switch_queue_ns
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
    /// EVs of each of A's QPs (1..=128); every QP has its own EV set of
    /// the same values (the fabric's paths).
    pub evs: u16,
    /// QP pairs (1..=`MAX_QPS`): message `i` goes over pair `i % qps`.
    pub qps: u16,
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
    /// Floors under the card's stall allowance and tail-check age (the
    /// retransmit row; the card takes the larger of each and its RTT
    /// estimate's). 0, the default: the estimate alone, as the model's
    /// bounds come from its RTT samples alone.
    pub stall_allowance_ns: u32,
    pub stall_age_ns: u32,
    pub ack_every: u16,
    pub ack_delay_cycles: u16,
    pub send_mpr_units: u8,
    /// Fixed congestion window in bytes (`min = max`), without `nscc`.
    pub cwnd: u32,
    /// A's QPs run NSCC with these parameters, the model's controller and
    /// the card's NSCC unit (table 14; its integer rules have no quick
    /// adapt and cut at most half the window: set `quick_adapt.enabled`
    /// false and `max_cut` 0.5 to compare like with like), their window
    /// bounds in table 10. `cwnd` should then be `max_cwnd`.
    pub nscc: Option<NsccConfig>,
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
    /// The dialect both NICs send (their own address rows' `wire_mrc10`)
    /// and the golden model's profile.
    pub wire: Wire,
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
    /// Both NICs send IPv6, and A's EVs are 32 bits (`EV_BASE_V6`: the
    /// flow label carries their upper half); else IPv4 and 16-bit EVs.
    pub ipv6: bool,
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
            line_rate_gbps: Some(DEFAULT_LINE_GBPS),
            ..LinkConfig::default()
        };
        SystemConfig {
            evs,
            qps: 1,
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
            nscc: None,
            sq_log2_size: 4,
            max_outstanding: 16,
            min_good_evs: 1,
            wire: Wire::Legacy,
            refused_message: None,
            ipv6: false,
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
        }
    }

    /// Run NSCC on A's QPs, model and card alike, for A's link: its line
    /// rate (100 Gb/s if it has none) and base RTT
    /// (`NsccConfig::for_fabric`), with the card's rules: no quick adapt
    /// (the card has none, docs/hw/nscc.md) and whole packets as the floor
    /// (the card's CC gate does not pace a window below one packet). The
    /// fixed window's stand-in for the queue bounds (`cwnd`) becomes NSCC's
    /// ceiling.
    pub fn use_nscc(&mut self) {
        let line = self.link_ab.line_rate_gbps.unwrap_or(DEFAULT_LINE_GBPS);
        let base_rtt = Duration::from_ns(StallTiming::of_link(&self.link_ab, 0).base_rtt_ns());
        let mut n = NsccConfig::for_fabric(line, base_rtt, self.mtu());
        n.quick_adapt.enabled = false;
        n.min_cwnd = u64::from(self.mtu());
        self.cwnd = u32::try_from(n.max_cwnd).unwrap_or(u32::MAX);
        self.nscc = Some(n);
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

    /// Byte offset of every message in its pair's source buffer and
    /// region (the messages of a pair one after the other).
    pub fn offsets(&self) -> Vec<u64> {
        let mut off = vec![0u64; usize::from(self.qps.max(1))];
        self.messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let q = self.qp_of(i);
                let o = off[q];
                off[q] += u64::from(m.len);
                o
            })
            .collect()
    }

    /// The pair message `i` goes over.
    pub fn qp_of(&self, i: usize) -> usize {
        i % usize::from(self.qps.max(1))
    }

    /// The messages of pair `q`, in posting order.
    pub fn qp_messages(&self, q: usize) -> Vec<usize> {
        (q..self.messages.len()).step_by(usize::from(self.qps.max(1))).collect()
    }

    /// A's QP number of pair `q`.
    pub fn a_qp(q: usize) -> u8 {
        ((usize::from(A_QP) + q) % usize::from(MAX_QPS)) as u8
    }

    /// B's QP number of pair `q`.
    pub fn b_qp(q: usize) -> u8 {
        ((usize::from(B_QP) + q) % usize::from(MAX_QPS)) as u8
    }

    /// The most QP pairs whose QPs on both NICs all avoid MRC 1.0's
    /// endpoint QPN 0x2 (to which a NIC refuses data in MRC 1.0): B's
    /// numbers, counting up from 0x77, wrap to it first.
    pub fn max_qps_mrc10() -> u16 {
        let endpoint = proto::wire::mrc10::choices::ENDPOINT_QPN as u8;
        (0..usize::from(MAX_QPS))
            .position(|q| Self::a_qp(q) == endpoint || Self::b_qp(q) == endpoint)
            .map_or(MAX_QPS, |q| q as u16)
    }

    /// The rkey of pair `q`'s region on B (its MR slot, rkey mod 256, is
    /// its own for up to 256 pairs).
    pub fn rkey_of(q: usize) -> u32 {
        RKEY + q as u32
    }

    /// The rkey pair `q`'s refused message carries.
    pub fn refused_rkey_of(q: usize) -> u32 {
        Self::rkey_of(q) ^ REFUSED_RKEY_BIT
    }

    /// Pair `q`'s first PSN: `start_psn` for pair 0, the others spread
    /// over the PSN space (`PSN_SPACE / qps` apart), so no two pairs send
    /// the same PSN (and keyed loss, which keys on opcode and PSN, decides
    /// each packet alone whichever pair sends first).
    pub fn start_psn_of(&self, q: usize) -> u32 {
        let stride = PSN_SPACE / u32::from(self.qps.max(1));
        (self.start_psn.wrapping_add(stride.wrapping_mul(q as u32))) % PSN_SPACE
    }

    /// The most PSNs one pair uses: its messages' packets.
    pub fn max_qp_psns(&self) -> u64 {
        let mtu = u64::from(self.mtu());
        (0..usize::from(self.qps.max(1)))
            .map(|q| {
                self.qp_messages(q)
                    .iter()
                    .map(|&i| u64::from(self.messages[i].len).div_ceil(mtu).max(1))
                    .sum::<u64>()
            })
            .max()
            .unwrap_or(0)
    }

    /// Where message `i`'s bytes sit in A's memory.
    pub fn local_addr(&self, i: usize, offsets: &[u64]) -> u64 {
        LOCAL_BASE + QP_REGION_STRIDE * self.qp_of(i) as u64 + offsets[i]
    }

    /// Where message `i` goes in B's memory (its pair's region).
    pub fn remote_addr(&self, i: usize, offsets: &[u64]) -> u64 {
        REGION_VA + QP_REGION_STRIDE * self.qp_of(i) as u64 + offsets[i]
    }

    /// The bytes of pair `q`'s messages (its region's length).
    pub fn qp_bytes(&self, q: usize) -> u64 {
        self.qp_messages(q)
            .iter()
            .map(|&i| u64::from(self.messages[i].len))
            .sum()
    }

    pub fn total_bytes(&self) -> u64 {
        self.messages.iter().map(|m| u64::from(m.len)).sum()
    }

    /// EV values of A's QP.
    pub fn ev_values(&self) -> Vec<u32> {
        (0..self.evs).map(|i| self.ev_base() + u32::from(i)).collect()
    }

    /// The value of A's EV 0 (`EV_BASE`, or `EV_BASE_V6` over IPv6).
    pub fn ev_base(&self) -> u32 {
        if self.ipv6 {
            EV_BASE_V6
        } else {
            EV_BASE
        }
    }

    /// NIC A's and NIC B's stations.
    fn stations(&self) -> (Station, Station) {
        if self.ipv6 {
            (STATION_A_V6, STATION_B_V6)
        } else {
            (STATION_A, STATION_B)
        }
    }

    /// The same run for the golden model of the dialect the NICs send
    /// (`wire`: `proto::model::legacy_mrc` or, for MRC 1.0,
    /// `proto::model::mrc`). Mapping (docs/cosim.md): same
    /// messages, data seed, start PSN, MTU, EV values, links (the
    /// `LinkConfig`s themselves), RTO exponent and retry budget, reorder
    /// allowance, ACK coalescing, send window, a fixed window of `cwnd`,
    /// minimum GOOD EVs. Differences the hardware forces: 64-bit SACK
    /// bitmaps; no probing of ASSUMED_BAD EVs (the model's probe interval
    /// is set beyond the run); the receive window is the send window.
    ///
    /// With one pair (`qps` = 1) this is the whole run; with more, pair
    /// 0's part of it ([`SystemConfig::golden_scenario_of`],
    /// [`SystemConfig::run_golden`] runs them all together).
    pub fn golden_scenario(&self) -> Scenario {
        self.golden_scenario_of(0)
    }

    /// Pair `q`'s part of the run for the golden model: its messages, its
    /// first PSN, its refused message (an index among its own messages),
    /// the model QP numbers `0x11` / `0x22` (pair 0, as
    /// `proto::loopback::Scenario::new`) plus `q << 8`, and each QP's
    /// random choices seeded by its number (as `Scenario::new` does).
    pub fn golden_scenario_of(&self, q: usize) -> Scenario {
        let pair_messages = self.qp_messages(q);
        let messages = pair_messages.iter().map(|&i| self.messages[i]).collect();
        let mut s = Scenario::new(self.wire.transport(), usize::from(self.evs), messages)
            .with_start_psn(self.start_psn_of(q))
            .with_mpr(self.send_mpr_units)
            .with_timeouts(self.ack_timeout_exp, self.retry_linear, self.retry_exp)
            .with_cc(match self.nscc {
                Some(c) => CcConfig::Nscc(c),
                None => CcConfig::Fixed {
                    window: u64::from(self.cwnd),
                },
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
            // The card probes its ASSUMED_BAD EVs once per sweep of its
            // EV prober (docs/hw/ev_prober.md), on either wire: the
            // model's `probe_interval` is that sweep's period.
            ep.rts.evs.probe_interval = Duration::from_ps(cycles_to_ps(hw::core::PROBE_PERIOD_CYCLES));
        }
        // The hardware's own limit: messages beyond RTX_SLOTS per QP are
        // posted and rung but not sent until a record is free.
        s.max_outstanding = Some(self.messages_in_flight());
        s.refused_message = self
            .refused_message
            .and_then(|k| pair_messages.iter().position(|&i| i == k));
        if q > 0 {
            let (a, b) = (s.a.cfg.qpn + ((q as u32) << 8), s.b.cfg.qpn + ((q as u32) << 8));
            for (ep, own, peer) in [(&mut s.a, a, b), (&mut s.b, b, a)] {
                ep.cfg.qpn = own;
                ep.rtr.dest_qp = peer;
                ep.cfg.seed = u64::from(own);
                ep.rts.evs.seed = u64::from(own);
            }
        }
        s.link_ab = self.link_ab.clone();
        s.link_ba = self.link_ba.clone();
        // The cards' MACs take frames at the line rate, a jumbo frame's
        // time at most waiting for the wire (`FabricLink::mac_full`): the
        // model's endpoints hand their links packets by the same rule.
        s.paced = true;
        s.time_limit = time_limit;
        s.seed = self.seed;
        s
    }

    /// Run the golden model on the same run: one report per pair. One
    /// pair is `proto::loopback`'s runner; several run together over the
    /// same two links ([`crate::golden::run_pairs`]).
    pub fn run_golden(&self) -> Result<Vec<Report>, GoldenError> {
        if self.qps <= 1 {
            return Ok(vec![self.golden_scenario().run()]);
        }
        let pairs = (0..usize::from(self.qps))
            .map(|q| PairSpec {
                scenario: self.golden_scenario_of(q),
                data: self
                    .qp_messages(q)
                    .iter()
                    .map(|&i| message_data(self.seed, i, self.messages[i].len))
                    .collect(),
                region_va: proto::loopback::REGION_VA,
                rkey: proto::loopback::REGION_RKEY,
                refused_rkey: proto::loopback::REFUSED_RKEY,
            })
            .collect();
        run_pairs(pairs)
    }
}

/// The wire dialect both NICs send (`mrc cosim --wire`): the own address
/// row's `wire_mrc10` bit of each NIC, and the golden model's profile.
/// Both NICs receive both dialects whatever it is (the RX core tells them
/// apart by opcode), so it only chooses what they send.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Wire {
    /// The legacy profile (`wire_mrc10` = 0, the reset value); the model
    /// `proto::model::legacy_mrc`.
    #[default]
    Legacy,
    /// MRC 1.0 (`wire_mrc10` = 1); the model `proto::model::mrc`.
    Mrc10,
}

impl Wire {
    /// Every dialect, in `--wire`'s order.
    pub const ALL: [Wire; 2] = [Wire::Legacy, Wire::Mrc10];

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Wire::Legacy => "legacy",
            Wire::Mrc10 => "mrc10",
        }
    }

    /// The dialect named `name` (`legacy`, `mrc10`).
    pub fn from_name(name: &str) -> Option<Wire> {
        Wire::ALL.into_iter().find(|w| w.name() == name)
    }

    /// The golden model's transport of the same dialect.
    pub fn transport(self) -> Transport {
        match self {
            Wire::Legacy => Transport::MrcLegacy,
            Wire::Mrc10 => Transport::Mrc,
        }
    }

    /// The dialect a frame is, by the golden parsers (every header, the
    /// checksum and the ICRC checked), or `None` if neither accepts it.
    pub fn of_frame(frame: &[u8]) -> Option<Wire> {
        if mrc10::parse_frame(frame, &mrc10::Profile::DEFAULT).is_ok() {
            Some(Wire::Mrc10)
        } else if proto::wire::frame::parse_frame(frame).is_ok() {
            Some(Wire::Legacy)
        } else {
            None
        }
    }
}

/// A distribution of delays, ns: how many, median, 99th percentile,
/// largest (0 without samples).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LagSummary {
    pub samples: u64,
    pub p50: u32,
    pub p99: u32,
    pub max: u32,
}

impl LagSummary {
    pub fn of(mut v: Vec<u32>) -> LagSummary {
        v.sort_unstable();
        let Some(&max) = v.last() else {
            return LagSummary::default();
        };
        let at = |f: f64| v[((v.len() - 1) as f64 * f).round() as usize];
        LagSummary {
            samples: v.len() as u64,
            p50: at(0.5),
            p99: at(0.99),
            max,
        }
    }
}

/// The `tx_ts` a data frame carries, ns on the sender's 32-bit ns clock
/// at `now_ns`: the legacy data extension's, or an MRC 1.0 TSETH's (64 ns
/// units, 16 bits) placed in the last 2^16 units before `now_ns`. None
/// for other frames.
fn data_tx_ts(frame: &[u8], now_ns: u32) -> Option<u32> {
    if let Ok((p, _)) = mrc10::parse_frame(frame, &mrc10::Profile::DEFAULT) {
        let mrc10::Headers::Write(w) = p.headers else {
            return None;
        };
        let unit = mrc10::choices::TS_UNIT_NS as u32;
        let ago = u32::from(((now_ns / unit) as u16).wrapping_sub(w.tseth?.tx_ts));
        return Some((now_ns / unit).wrapping_sub(ago).wrapping_mul(unit));
    }
    match proto::wire::frame::parse_frame(frame).ok()?.0.ext? {
        proto::wire::MrcExtRepr::Data(d) => Some(d.tx_ts),
        _ => None,
    }
}

/// Frames one direction of the fabric was given, by the dialect the
/// golden parsers find in them ([`Wire::of_frame`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FramesByWire {
    pub legacy: u64,
    pub mrc10: u64,
    /// Neither parser accepts it.
    pub unparsed: u64,
}

impl FramesByWire {
    fn count(&mut self, frame: &[u8]) {
        match Wire::of_frame(frame) {
            Some(Wire::Legacy) => self.legacy += 1,
            Some(Wire::Mrc10) => self.mrc10 += 1,
            None => self.unparsed += 1,
        }
    }

    /// Frames of another dialect than `wire`, or of none.
    pub fn not_of(&self, wire: Wire) -> u64 {
        self.unparsed
            + match wire {
                Wire::Legacy => self.mrc10,
                Wire::Mrc10 => self.legacy,
            }
    }

    pub fn total(&self) -> u64 {
        self.legacy + self.mrc10 + self.unparsed
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
    /// A's QP whose EV it is.
    pub qp: u32,
    pub ev_index: u8,
    /// The EV's value, as the event carries it (32 bits).
    pub ev: u32,
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
    /// Every frame either NIC sent is of the configured wire, whole
    /// (the golden parser of that dialect accepts it, ICRC included).
    pub frames_of_wire: bool,
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
            && self.frames_of_wire
    }
}

/// What a run measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SystemReport {
    /// The dialect both NICs were set to send.
    pub wire: Wire,
    /// The frames each NIC sent into the fabric (A -> B, B -> A), by the
    /// dialect the golden parsers find.
    pub frames_ab: FramesByWire,
    pub frames_ba: FramesByWire,
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
    /// How long A's data packets took from their `tx_ts` (the core's ns
    /// clock when the TX builder took the header) to their last byte
    /// leaving A's MAC: the part of every RTT sample the card adds on its
    /// send side (the model stamps a packet as it hands it to its link).
    pub tx_stamp_lag_ns: LagSummary,
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
    /// Per pair: its figures and its part of the scoreboard.
    pub per_qp: Vec<QpReport>,
    pub timed_out: bool,
    pub ok: bool,
}

/// One pair's figures and scoreboard.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct QpReport {
    pub a_qp: u8,
    pub b_qp: u8,
    pub messages: usize,
    /// Send completions with SUCCESS.
    pub messages_completed: usize,
    /// Data packets of the pair A sent again (a PSN of its QP seen before
    /// on A's MAC TX; A's `retransmit` counter counts all QPs').
    pub resends: u64,
    /// EV state changes to ASSUMED_BAD of A's QP (A's EV-event ring).
    pub ev_marked_bad: u64,
    /// Its EVs readmitted by an answered probe (events to GOOD, reason
    /// PROBE_OK).
    pub ev_readmitted: u64,
    /// Send completions with an error status.
    pub error_completions: u64,
    /// The first of them that is not FLUSHED: wr_id (the message's index
    /// in the whole run) and status.
    pub fatal_error: Option<(u64, String)>,
    /// Send completions of the QP in its posting order.
    pub send_in_order: bool,
    /// B's receive completions of the QP's WRITE-IMMs, in order.
    pub imm_in_order: bool,
    /// Every byte of the QP's region as sent, and written once.
    pub data_identical: bool,
    pub placed_once: bool,
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

/// The driver's state of one pair.
struct QpDriver {
    a_qp: u8,
    b_qp: u8,
    /// The pair's messages (indices in the run), in posting order.
    messages: Vec<usize>,
    /// Descriptors posted so far (its send ring's producer index).
    posted: u32,
    /// Send completions seen (of any status).
    completed: u32,
    /// Immediates / lengths expected at B's QP, in order, and how many
    /// arrived.
    expect_imm: Vec<(u32, u32)>,
    recv_seen: usize,
    send_in_order: bool,
    imm_in_order: bool,
    error_completions: u64,
    fatal_error: Option<(u64, String)>,
    /// Data packets sent again (PSN seen before on A's MAC TX).
    resends: u64,
}

/// The two NICs, the fabric and the driver state.
pub struct System {
    pub cfg: SystemConfig,
    pub a: Nic,
    pub b: Nic,
    pub fabric: Fabric,
    cycle: u64,
    offsets: Vec<u64>,
    qps: Vec<QpDriver>,
    /// Pair of each of A's / B's QP numbers.
    pair_of_a: BTreeMap<u32, usize>,
    pair_of_b: BTreeMap<u32, usize>,
    /// Cycle each message was posted.
    post_cycle: Vec<u64>,
    /// Send completions consumed (A's CQ consumer index; the QPs share
    /// CQ 0).
    send_ci: u32,
    /// B's receive CQ (ring 1, shared by B's QPs).
    recv_ci: u32,
    ev_ci: u32,
    /// Per message: send completions seen.
    send_done: Vec<u32>,
    latencies: Vec<u64>,
    last_completion_cycle: u64,
    ev_changes: Vec<EvChange>,
    failures: Vec<String>,
    no_qp_error: bool,
    /// Send completions with a status other than SUCCESS.
    error_completions: u64,
    /// The first of them that is not FLUSHED (the one that moved a QP to
    /// ERR): wr_id and status.
    fatal_error: Option<(u64, String)>,
    /// Per message: completed with SUCCESS.
    succeeded: Vec<bool>,
    /// (destination QP, PSN) of every data packet A sent.
    sent_psns: HashSet<(u32, u32)>,
    frames_ab: FramesByWire,
    /// A's data frames: ns from `tx_ts` to leaving the MAC.
    tx_stamp_lag_ns: Vec<u32>,
    frames_ba: FramesByWire,
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
        if cfg.qps == 0 || cfg.qps > MAX_QPS {
            return Err(SystemError::Config(format!(
                "qps must be 1..={MAX_QPS} (the core's QPs), got {}",
                cfg.qps
            )));
        }
        if cfg.wire == Wire::Mrc10 && cfg.qps > SystemConfig::max_qps_mrc10() {
            return Err(SystemError::Config(format!(
                "at most {} QP pairs in MRC 1.0 (pair {}'s QP would be the endpoint QPN 0x2), got {}",
                SystemConfig::max_qps_mrc10(),
                SystemConfig::max_qps_mrc10(),
                cfg.qps
            )));
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
        // The pairs' PSN ranges must not meet (keyed loss and the per-QP
        // resend count key on the PSN): a pair's packets plus its send
        // window within its share of the PSN space.
        let psn_share = u64::from(PSN_SPACE / u32::from(cfg.qps));
        if cfg.qps > 1 && cfg.max_qp_psns() + SEND_WINDOW_PSNS > psn_share {
            return Err(SystemError::Config(format!(
                "a QP sends {} packets, beyond its share of the PSN space ({psn_share} PSNs with {} QPs)",
                cfg.max_qp_psns(),
                cfg.qps
            )));
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
                .fill(cfg.local_addr(i, &offsets), &message_data(cfg.seed, i, m.len));
        }
        configure_requester(&mut a, &cfg);
        configure_responder(&mut b, &cfg);
        let qps: Vec<QpDriver> = (0..usize::from(cfg.qps))
            .map(|q| {
                let messages = cfg.qp_messages(q);
                let expect_imm = messages
                    .iter()
                    .take_while(|&&i| cfg.refused_message != Some(i))
                    .filter_map(|&i| cfg.messages[i].imm.map(|imm| (imm, cfg.messages[i].len)))
                    .collect();
                QpDriver {
                    a_qp: SystemConfig::a_qp(q),
                    b_qp: SystemConfig::b_qp(q),
                    messages,
                    posted: 0,
                    completed: 0,
                    expect_imm,
                    recv_seen: 0,
                    send_in_order: true,
                    imm_in_order: true,
                    error_completions: 0,
                    fatal_error: None,
                    resends: 0,
                }
            })
            .collect();
        let pair_of_a = qps.iter().enumerate().map(|(q, d)| (u32::from(d.a_qp), q)).collect();
        let pair_of_b = qps.iter().enumerate().map(|(q, d)| (u32::from(d.b_qp), q)).collect();
        let n = cfg.messages.len();
        let mut sys = System {
            a,
            b,
            fabric,
            cycle: 0,
            offsets,
            qps,
            pair_of_a,
            pair_of_b,
            post_cycle: vec![0; n],
            send_ci: 0,
            recv_ci: 0,
            ev_ci: 0,
            send_done: vec![0; n],
            latencies: Vec::with_capacity(n),
            last_completion_cycle: 0,
            ev_changes: Vec::new(),
            failures: Vec::new(),
            no_qp_error: true,
            error_completions: 0,
            fatal_error: None,
            succeeded: vec![false; n],
            sent_psns: HashSet::new(),
            frames_ab: FramesByWire::default(),
            tx_stamp_lag_ns: Vec::new(),
            frames_ba: FramesByWire::default(),
            a_writes_seen: 0,
            b_writes_seen: 0,
            cfg,
        };
        sys.configure_ev_sets();
        Ok(sys)
    }

    /// Write each requester QP's EV set, start the QPs, and consume the
    /// DENIED events the deny of the EVs beyond each set produces (not
    /// state changes of the run). The event ring holds 256 and the core
    /// drops what does not fit, so the events of one QP are read before
    /// the next QP's set is written, as a driver reads its ring.
    fn configure_ev_sets(&mut self) {
        let per_qp = 128 - usize::from(self.cfg.evs);
        let mut config_events = 0;
        for q in 0..usize::from(self.cfg.qps) {
            if q > 0 {
                config_events += self.drain_config_events(per_qp * q - config_events);
                // Free the ring before the next QP's events.
                self.a.queue_ev_consumed(self.ev_ci);
                self.a.finish_csr(10_000);
            }
            self.a
                .set_ev_set(SystemConfig::a_qp(q), self.cfg.evs, self.cfg.ev_base());
        }
        start_requester(&mut self.a, &self.cfg);
        let want = per_qp * usize::from(self.cfg.qps);
        config_events += self.drain_config_events(want - config_events);
        if config_events != want {
            self.no_qp_error = false;
            self.failures
                .push(format!("{config_events} EV events at configuration, expected {want}"));
        }
        self.a.queue_ev_consumed(self.ev_ci);
        self.a.finish_csr(10_000);
    }

    /// Read EV events until `want` came (or 50 rounds of 100 cycles);
    /// returns how many.
    fn drain_config_events(&mut self, want: usize) -> usize {
        let mut got = 0;
        for _ in 0..50 {
            self.a.run(100);
            got += self.poll_ev_events(false);
            if got >= want {
                break;
            }
        }
        got
    }

    /// Cycles of traffic so far.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    fn completed(&self) -> usize {
        self.send_ci as usize
    }

    fn finished(&self) -> bool {
        self.completed() >= self.cfg.messages.len() && self.qps.iter().all(|d| d.recv_seen >= d.expect_imm.len())
    }

    /// Post descriptors while a QP's ring has room; one doorbell per QP
    /// and batch.
    fn post(&mut self) {
        let size = 1u32 << self.cfg.sq_log2_size;
        for q in 0..self.qps.len() {
            let d = &self.qps[q];
            let n = d.messages.len() as u32;
            let room = size
                .min(self.cfg.max_outstanding)
                .saturating_sub(d.posted - d.completed);
            let left = n - d.posted;
            // Batch: wait for room for up to 8 descriptors (the requester
            // fetches up to 8 per read; fewer if the window is smaller or
            // fewer are left).
            if left == 0 || room < left.min(8).min(self.cfg.max_outstanding.div_ceil(2)) {
                continue;
            }
            let ring = SQ_BASE + SQ_STRIDE * q as u64;
            for _ in 0..room.min(left) {
                let d = &self.qps[q];
                let i = d.messages[d.posted as usize];
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
                    local_iova: self.cfg.local_addr(i, &self.offsets),
                    remote_va: self.cfg.remote_addr(i, &self.offsets),
                    rkey: if self.cfg.refused_message == Some(i) {
                        SystemConfig::refused_rkey_of(q)
                    } else {
                        SystemConfig::rkey_of(q)
                    },
                    imm: m.imm.unwrap_or(0),
                };
                let slot = u64::from(d.posted % size);
                self.a
                    .dma
                    .mem
                    .fill(ring + 64 * slot, &wr.encode().expect("a valid descriptor"));
                self.post_cycle[i] = self.cycle;
                self.qps[q].posted += 1;
            }
            let d = &self.qps[q];
            self.a
                .axil
                .write(contract::regmap::doorbell::WINDOW + 4 * u16::from(d.a_qp), d.posted);
        }
    }

    /// The statuses message `i` may complete with.
    fn expected_statuses(&self, i: usize) -> &'static [CqStatus] {
        let refused = self
            .cfg
            .refused_message
            .filter(|&k| self.cfg.qp_of(k) == self.cfg.qp_of(i));
        match refused.map(|k| i.cmp(&k)) {
            None => &[CqStatus::Success],
            Some(std::cmp::Ordering::Less) => &[CqStatus::Success, CqStatus::Flushed],
            Some(std::cmp::Ordering::Equal) => &[CqStatus::RemoteAccess],
            Some(std::cmp::Ordering::Greater) => &[CqStatus::Flushed],
        }
    }

    /// Read new entries of A's send CQ (every QP's).
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
            let seen = self.send_ci;
            self.send_ci += 1;
            self.last_completion_cycle = self.cycle;
            if self.send_ci.is_multiple_of(256) {
                self.a.queue_cq_consumed(0, self.send_ci);
            }
            let Some(&q) = self.pair_of_a.get(&c.qp) else {
                self.no_qp_error = false;
                if self.failures.len() < 20 {
                    self.failures
                        .push(format!("send CQE {seen} of QP {}, not one of A's: {c:?}", c.qp));
                }
                continue;
            };
            let i = c.wr_id as usize;
            let d = &self.qps[q];
            let want = d.messages.get(d.completed as usize).copied();
            if c.status != CqStatus::Success {
                self.error_completions += 1;
                self.qps[q].error_completions += 1;
                if c.status != CqStatus::Flushed {
                    let fatal = (c.wr_id, format!("{:?}", c.status));
                    self.fatal_error.get_or_insert(fatal.clone());
                    self.qps[q].fatal_error.get_or_insert(fatal);
                }
            }
            let ours = i < self.cfg.messages.len() && self.cfg.qp_of(i) == q;
            if !ours || !self.expected_statuses(i).contains(&c.status) {
                self.no_qp_error = false;
                if self.failures.len() < 20 {
                    self.failures
                        .push(format!("send CQE {seen} (QP {}): {c:?}", self.qps[q].a_qp));
                }
            } else if Some(i) != want {
                self.qps[q].send_in_order = false;
                if self.failures.len() < 20 {
                    self.failures.push(format!(
                        "send CQE {seen} of QP {} carries wr_id {}, expected {want:?}",
                        self.qps[q].a_qp, c.wr_id
                    ));
                }
            }
            self.qps[q].completed += 1;
            if ours {
                if c.status == CqStatus::Success {
                    self.succeeded[i] = true;
                }
                self.send_done[i] += 1;
                if self.send_done[i] == 1 {
                    self.latencies.push(self.cycle - self.post_cycle[i]);
                }
            }
        }
    }

    /// Read new entries of B's receive CQ (every QP's).
    fn poll_recv_cq(&mut self) {
        let size = 1u32 << CQ_LOG2;
        loop {
            let slot = u64::from(self.recv_ci % size);
            let phase = (self.recv_ci / size).is_multiple_of(2);
            let Ok(c) = Completion::decode(&self.b.dma.mem.read_vec(RECV_CQ_BASE + 32 * slot, 32)) else {
                self.failures
                    .push(format!("receive CQE {} does not decode", self.recv_ci));
                for d in &mut self.qps {
                    d.imm_in_order = false;
                }
                return;
            };
            if c.phase != phase {
                break;
            }
            let seen = self.recv_ci;
            self.recv_ci += 1;
            self.last_completion_cycle = self.cycle;
            if self.recv_ci.is_multiple_of(256) {
                self.b.queue_cq_consumed(1, self.recv_ci);
            }
            let Some(&q) = self.pair_of_b.get(&c.qp) else {
                self.qps[0].imm_in_order = false;
                if self.failures.len() < 20 {
                    self.failures
                        .push(format!("receive CQE {seen} of QP {}, not one of B's: {c:?}", c.qp));
                }
                continue;
            };
            let d = &mut self.qps[q];
            let k = d.recv_seen;
            let good = c.status == CqStatus::Success
                && d.expect_imm
                    .get(k)
                    .is_some_and(|&(imm, len)| c.imm == Some(imm) && c.byte_len == len);
            if !good {
                d.imm_in_order = false;
                if self.failures.len() < 20 {
                    self.failures.push(format!(
                        "receive CQE {k} of QP {}: {c:?}, expected {:?}",
                        d.b_qp,
                        d.expect_imm.get(k)
                    ));
                }
            }
            d.recv_seen += 1;
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
                    qp: e.qp,
                    ev_index: e.ev_index,
                    ev: e.ev,
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

    /// Count a frame A sent: a data packet whose (QP, PSN) left before is
    /// a resend of its pair.
    fn count_sent(&mut self, frame: &[u8]) {
        let Some(k) = frame_key(frame) else { return };
        if !self.sent_psns.insert((k.dest_qp, k.psn)) {
            if let Some(&q) = self.pair_of_b.get(&k.dest_qp) {
                self.qps[q].resends += 1;
            }
        }
    }

    /// One cycle of both NICs and the fabric, then the driver's work.
    pub fn step(&mut self) {
        // Each MAC takes frames at its link's pace.
        self.a.tx.hold = self.fabric.ab.mac_full(self.cycle);
        self.b.tx.hold = self.fabric.ba.mac_full(self.cycle);
        self.a.step();
        self.b.step();
        let sent: Vec<Vec<u8>> = self.a.tx.frames.drain(..).collect();
        for f in sent {
            let now = self.a.now_ns();
            if let Some(ts) = data_tx_ts(&f, now) {
                self.tx_stamp_lag_ns.push(now.wrapping_sub(ts));
            }
            self.count_sent(&f);
            self.frames_ab.count(&f);
            self.fabric.ab.send(self.cycle, f);
        }
        for f in self.b.tx.frames.drain(..) {
            self.frames_ba.count(&f);
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
        let all_imm_seen = self.qps.iter().all(|d| d.recv_seen == d.expect_imm.len());
        let mut sb = Scoreboard {
            all_completed: self.send_done.iter().all(|&d| d == 1) && all_imm_seen,
            send_in_order: self.qps.iter().all(|d| d.send_in_order),
            imm_in_order: self.qps.iter().all(|d| d.imm_in_order) && all_imm_seen,
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
        // Placement: every byte once, equal to the data, in the message's
        // pair's region.
        let mut identical = vec![true; self.qps.len()];
        let mut once = vec![true; self.qps.len()];
        for (i, m) in self.cfg.messages.iter().enumerate() {
            let q = self.cfg.qp_of(i);
            let va = self.cfg.remote_addr(i, &self.offsets);
            if let Some(k) = self.cfg.refused_message.filter(|_| !self.succeeded[i]) {
                // The refused message: no byte written; the others that
                // did not succeed: none written twice.
                let max = if i == k { 0 } else { 1 };
                let bad = (va..va + u64::from(m.len))
                    .filter(|a| self.b.dma.mem.writes.get(a).is_some_and(|&w| w > max))
                    .count();
                if bad > 0 {
                    once[q] = false;
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
                identical[q] = false;
                if sb.failures.len() < 40 {
                    sb.failures
                        .push(format!("message {i} ({} bytes at {va:#x}) not placed as sent", m.len));
                }
            }
            let bad = (va..va + u64::from(m.len))
                .filter(|a| self.b.dma.mem.writes.get(a) != Some(&1))
                .count();
            if bad > 0 {
                once[q] = false;
                if sb.failures.len() < 40 {
                    sb.failures
                        .push(format!("message {i}: {bad} bytes not written exactly once"));
                }
            }
        }
        sb.data_identical = identical.iter().all(|&ok| ok);
        sb.placed_once = once.iter().all(|&ok| ok);
        let per_qp: Vec<QpReport> = self
            .qps
            .iter()
            .enumerate()
            .map(|(q, d)| QpReport {
                a_qp: d.a_qp,
                b_qp: d.b_qp,
                messages: d.messages.len(),
                messages_completed: d.messages.iter().filter(|&&i| self.succeeded[i]).count(),
                resends: d.resends,
                ev_marked_bad: self
                    .ev_changes
                    .iter()
                    .filter(|c| c.qp == u32::from(d.a_qp) && c.new_state == "assumed_bad")
                    .count() as u64,
                ev_readmitted: self
                    .ev_changes
                    .iter()
                    .filter(|c| c.qp == u32::from(d.a_qp) && c.reason == "probe_ok")
                    .count() as u64,
                error_completions: d.error_completions,
                fatal_error: d.fatal_error.clone(),
                send_in_order: d.send_in_order && d.messages.iter().all(|&i| self.send_done[i] == 1),
                imm_in_order: d.imm_in_order && d.recv_seen == d.expect_imm.len(),
                data_identical: identical[q],
                placed_once: once[q],
            })
            .collect();
        let mut proto_errors: Vec<String> = Vec::new();
        for (name, nic) in [("A", &self.a), ("B", &self.b)] {
            proto_errors.extend(nic.dma.errors.iter().take(5).map(|e| format!("NIC {name} DMA: {e}")));
            if nic.tx.bad_keep > 0 {
                proto_errors.push(format!("NIC {name} MAC TX: {} beats with a bad keep", nic.tx.bad_keep));
            }
            if nic.tx.underruns > 0 {
                proto_errors.push(format!(
                    "NIC {name} MAC TX: {} cycles with no beat inside a frame (underruns: a MAC aborts such a frame)",
                    nic.tx.underruns
                ));
            }
        }
        sb.no_protocol_error = proto_errors.is_empty();
        sb.failures.extend(proto_errors);
        let wire = self.cfg.wire;
        for (name, frames) in [("A", &self.frames_ab), ("B", &self.frames_ba)] {
            if frames.not_of(wire) > 0 {
                sb.failures.push(format!(
                    "NIC {name} sent {} of {} frames not {} (legacy {}, MRC 1.0 {}, neither {})",
                    frames.not_of(wire),
                    frames.total(),
                    wire.name(),
                    frames.legacy,
                    frames.mrc10,
                    frames.unparsed
                ));
            }
        }
        sb.frames_of_wire = self.frames_ab.not_of(wire) == 0 && self.frames_ba.not_of(wire) == 0;
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
            wire,
            frames_ab: self.frames_ab,
            tx_stamp_lag_ns: LagSummary::of(std::mem::take(&mut self.tx_stamp_lag_ns)),
            frames_ba: self.frames_ba,
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
            per_qp,
            timed_out,
            ok,
        }
    }
}

/// The links' line rate by default, Gb/s.
pub const DEFAULT_LINE_GBPS: f64 = 100.0;

/// Configure NIC A: the requester QPs `a_qp(q)` -> `b_qp(q)` on B, each
/// with its CC and retransmit rows; then the addresses and the EV-event
/// ring. Their EV sets follow (`System::configure_ev_sets`), then
/// [`start_requester`].
fn configure_requester(nic: &mut Nic, cfg: &SystemConfig) {
    let window = u16::from(cfg.send_mpr_units) * 128;
    let retx = RetxParams {
        ack_timeout_exp: cfg.ack_timeout_exp,
        stall_allowance_ns: cfg.stall_allowance_ns,
        reorder_allowance: cfg.reorder_allowance,
        retry_linear: cfg.retry_linear,
        retry_exp: cfg.retry_exp,
        stall_age_ns: cfg.stall_age_ns,
    };
    // The RTO scanner visits QPs 0..=last only: the resolution of the RTO
    // is one sweep, so it stops at the highest QP in use.
    let pairs = usize::from(cfg.qps.max(1));
    let last_qp = (0..pairs).map(SystemConfig::a_qp).max().unwrap_or(A_QP);
    // The rows in the order a one-QP driver writes them (the send context
    // last: it starts the QP).
    for q in 0..pairs {
        let qp = SystemConfig::a_qp(q);
        match cfg.nscc {
            Some(c) => {
                let p = NsccFixedParams::from_config(&c);
                nic.set_nscc(qp, &p);
                nic.set_cc(qp, p.min_cwnd, p.max_cwnd, window);
            }
            None => nic.set_cc(qp, cfg.cwnd, cfg.cwnd, window),
        }
        nic.set_retransmit(qp, &retx, last_qp);
    }
    let (a, b) = cfg.stations();
    nic.set_addresses_wire(a, PEER_ROW, b, cfg.wire == Wire::Mrc10);
    nic.set_ev_ring(EV_RING_BASE, EV_RING_LOG2);
}

/// Start NIC A's requester QPs (after their EV sets): CQ ring 0, then
/// each QP's send context (which starts it).
fn start_requester(nic: &mut Nic, cfg: &SystemConfig) {
    let pairs = usize::from(cfg.qps.max(1));
    nic.set_cq_ring(0, SEND_CQ_BASE, CQ_LOG2);
    for q in 0..pairs {
        let qp = SystemConfig::a_qp(q);
        nic.start_send_qp(
            qp,
            &SqContext {
                sq_base: SQ_BASE + SQ_STRIDE * q as u64,
                cq_index: 0,
                addr_index: PEER_ROW,
                dest_qp: u32::from(SystemConfig::b_qp(q)),
                start_psn: cfg.start_psn_of(q),
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
}

/// Configure NIC B: the responder QPs `b_qp(q)`, each with its region
/// (rkey `rkey_of(q)`) and its send context (the ACKs' destination QP and
/// address), all completing on CQ 1.
fn configure_responder(nic: &mut Nic, cfg: &SystemConfig) {
    let pairs = usize::from(cfg.qps.max(1));
    nic.set_ack_params(cfg.ack_every, cfg.ack_delay_cycles);
    for q in 0..pairs {
        nic.set_responder(&ResponderParams {
            qp: SystemConfig::b_qp(q),
            start_psn: cfg.start_psn_of(q),
            rkey: SystemConfig::rkey_of(q),
            region_va: REGION_VA + QP_REGION_STRIDE * q as u64,
            region_len: cfg.qp_bytes(q).max(1),
            log2_mtu: cfg.log2_mtu,
        });
    }
    let (a, b) = cfg.stations();
    nic.set_addresses_wire(b, PEER_ROW, a, cfg.wire == Wire::Mrc10);
    nic.set_ev_ring(EV_RING_BASE, EV_RING_LOG2);
    nic.set_cq_ring(1, RECV_CQ_BASE, CQ_LOG2);
    for q in 0..pairs {
        let qp = SystemConfig::b_qp(q);
        nic.start_send_qp(
            qp,
            &SqContext {
                sq_base: B_SQ_BASE + SQ_STRIDE * q as u64,
                cq_index: 1,
                addr_index: PEER_ROW,
                dest_qp: u32::from(SystemConfig::a_qp(q)),
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
}

/// The golden model's figures next to the hardware's and whether they
/// agree: totals over the pairs, and per pair ([`QpComparison`]).
#[derive(Clone, Debug, serde::Serialize)]
pub struct GoldenComparison {
    pub golden_ok: bool,
    pub golden_messages_completed: usize,
    pub golden_retransmissions: u64,
    pub golden_rtos: u64,
    pub golden_ev_marked_bad: usize,
    /// EV state changes of every kind the model reported.
    pub golden_ev_changes: usize,
    /// EVs the model readmitted (a probe answered).
    pub golden_ev_readmitted: usize,
    /// The model's error completions (QP errors).
    pub golden_error_completions: usize,
    /// The first of them that is not FLUSHED: wr_id (the message's index
    /// in the whole run) and status (named as the hardware's `CqStatus`).
    pub golden_fatal_error: Option<(u64, String)>,
    pub golden_goodput_gbps: f64,
    pub golden_completion_ns: f64,
    /// The model's A -> B link (shared by its pairs): what its switch
    /// port marked ECN-CE and trimmed.
    pub golden_ecn_marked_ab: u64,
    pub golden_trimmed_ab: u64,
    /// Data packets its fault (a blackholed or flapping EV) dropped A -> B.
    pub golden_blackholed_ab: u64,
    pub hw_retransmissions: u64,
    /// |hw - golden| / golden (0 when both are 0).
    pub retransmission_difference: f64,
    /// Both delivered and completed every message, in order, every pair
    /// the same messages.
    pub same_delivery: bool,
    pub retransmissions_within_10pct: bool,
    /// Per pair (one entry per QP pair, in order).
    pub per_qp: Vec<QpComparison>,
}

/// One pair's figures, hardware beside model.
#[derive(Clone, Debug, serde::Serialize)]
pub struct QpComparison {
    pub a_qp: u8,
    pub hw_messages_completed: usize,
    pub golden_messages_completed: usize,
    /// The pair's resent data packets: seen on A's MAC TX; the model QP's
    /// `retransmitted_packets`.
    pub hw_resends: u64,
    pub golden_resends: u64,
    pub hw_ev_marked_bad: u64,
    pub golden_ev_marked_bad: u64,
    pub hw_ev_readmitted: u64,
    pub golden_ev_readmitted: u64,
    pub hw_error_completions: u64,
    pub golden_error_completions: u64,
    pub golden_fatal_error: Option<(u64, String)>,
    /// The pair delivered and completed the same messages as its model
    /// pair (or failed at the same message with the same status).
    pub same_delivery: bool,
}

/// The first error completion of `golden` that is not FLUSHED, its wr_id
/// (an index among pair `q`'s messages) turned into the message's index
/// in the run of `pairs` pairs (message `i` is pair `i % pairs`'s).
fn golden_fatal(golden: &Report, q: usize, pairs: usize) -> Option<(u64, String)> {
    golden
        .error_completions
        .iter()
        .find(|c| c.status != WcStatus::Flushed)
        .map(|c| {
            let status = match c.status {
                WcStatus::Success => "Success".to_string(),
                WcStatus::RemoteAccessError => "RemoteAccess".to_string(),
                other => format!("{other:?}"),
            };
            (c.wr_id * pairs as u64 + q as u64, status)
        })
}

fn marked_bad(golden: &Report) -> usize {
    golden
        .ev_changes
        .iter()
        .filter(|c| c.to == proto::model::ev::EvState::AssumedBad)
        .count()
}

/// The model's EVs readmitted by an answered probe.
fn readmitted(golden: &Report) -> usize {
    golden
        .ev_changes
        .iter()
        .filter(|c| c.reason == proto::model::ev::EvChangeReason::ProbeOk)
        .count()
}

/// Compare a hardware run of one pair with the golden model's run of the
/// same scenario.
pub fn compare_with_golden(hw: &SystemReport, golden: &Report) -> GoldenComparison {
    compare_with_golden_qps(hw, std::slice::from_ref(golden))
}

/// Compare a hardware run with the golden model's run of the same pairs
/// ([`SystemConfig::run_golden`]: one report per pair).
pub fn compare_with_golden_qps(hw: &SystemReport, golden: &[Report]) -> GoldenComparison {
    let pairs = golden.len();
    let g: u64 = golden.iter().map(|r| r.counters_a.retransmitted_packets).sum();
    let h = hw.retransmissions;
    // With a QP error the model stops that pair at it (its report is then
    // not `ok`): the same message failed, with the same status; which
    // messages in flight at the error succeeded and which were flushed
    // depends on timing (`SystemConfig::refused_message`), so the counts
    // of successes are not compared then.
    let per_qp: Vec<QpComparison> = golden
        .iter()
        .enumerate()
        .map(|(q, gr)| {
            let hq = hw.per_qp.get(q).cloned().unwrap_or_default();
            let fatal = golden_fatal(gr, q, pairs);
            let hw_pair_ok = hq.send_in_order && hq.imm_in_order && hq.data_identical && hq.placed_once;
            let same_delivery = if fatal.is_some() || hq.fatal_error.is_some() {
                !gr.timed_out && hw_pair_ok && fatal == hq.fatal_error
            } else {
                gr.ok
                    && hw_pair_ok
                    && hq.error_completions == 0
                    && gr.messages_completed == hq.messages_completed
                    && gr.messages_posted == hq.messages
            };
            QpComparison {
                a_qp: hq.a_qp,
                hw_messages_completed: hq.messages_completed,
                golden_messages_completed: gr.messages_completed,
                hw_resends: hq.resends,
                golden_resends: gr.counters_a.retransmitted_packets,
                hw_ev_marked_bad: hq.ev_marked_bad,
                golden_ev_marked_bad: marked_bad(gr) as u64,
                hw_ev_readmitted: hq.ev_readmitted,
                golden_ev_readmitted: readmitted(gr) as u64,
                hw_error_completions: hq.error_completions,
                golden_error_completions: gr.error_completions.len() as u64,
                golden_fatal_error: fatal,
                same_delivery,
            }
        })
        .collect();
    // The run's first fatal error: the pair's whose error came first.
    let golden_fatal_error = golden
        .iter()
        .enumerate()
        .filter_map(|(q, gr)| Some((gr.first_error_ps?, golden_fatal(gr, q, pairs)?)))
        .min_by_key(|(t, _)| *t)
        .map(|(_, f)| f);
    let diff = if g == 0 && h == 0 {
        0.0
    } else {
        (h as f64 - g as f64).abs() / (g.max(1) as f64)
    };
    let completion_ps = golden.iter().map(|r| r.completion_time_ps).max().unwrap_or(0);
    let golden_bytes: u64 = golden.iter().map(|r| r.bytes).sum();
    GoldenComparison {
        golden_ok: golden.iter().all(|r| r.ok),
        golden_messages_completed: golden.iter().map(|r| r.messages_completed).sum(),
        golden_retransmissions: g,
        golden_rtos: golden.iter().map(|r| r.counters_a.rto_fired).sum(),
        golden_ev_marked_bad: golden.iter().map(marked_bad).sum(),
        golden_ev_changes: golden.iter().map(|r| r.ev_changes.len()).sum(),
        golden_ev_readmitted: golden.iter().map(readmitted).sum(),
        golden_error_completions: golden.iter().map(|r| r.error_completions.len()).sum(),
        golden_fatal_error,
        golden_goodput_gbps: if completion_ps > 0 {
            golden_bytes as f64 * 8.0 / completion_ps as f64 * 1000.0
        } else {
            0.0
        },
        golden_completion_ns: completion_ps as f64 / 1000.0,
        golden_ecn_marked_ab: golden.first().map_or(0, |r| r.link_ab.ecn_marked),
        golden_trimmed_ab: golden.first().map_or(0, |r| r.link_ab.trimmed),
        golden_blackholed_ab: golden.first().map_or(0, |r| r.link_ab.blackholed),
        hw_retransmissions: h,
        retransmission_difference: diff,
        same_delivery: hw.scoreboard.ok() && golden.len() == hw.per_qp.len() && per_qp.iter().all(|c| c.same_delivery),
        retransmissions_within_10pct: diff <= 0.10,
        per_qp,
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
