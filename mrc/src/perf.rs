//! `mrc perf`: perftest-style WRITE bandwidth and latency (ib_write_bw /
//! ib_write_lat) through the driver's verbs API on the co-simulated RTL
//! (`cosim::device::CosimDevice`): the verilated `MrcCore`, its DMA
//! served from the buffers the driver hands out.
//!
//! Endpoints (`--endpoints`): two cards on one clock joined by
//! `cosim::fabric` (requester QPs on card A, responders on card B), or QP
//! pairs of one card in loopback (the core's fault-injection stage loops
//! MAC TX to RX). Times are simulated (99/32 ns per core cycle).

use std::time::Instant;

use clap::{Args, ValueEnum};
use contract::layout::CqStatus;
use contract::regmap::fault_inject as fi;
use cosim::device::{cycles_to_ns, CosimDevice, CosimOptions, FabricInterconnect};
use cosim::fabric::{Fabric, LINE_BYTES_PER_FRAME};
use cosim::nic::Stalls;
use cosim::system::{qp_window_wire_bytes, StallTiming};
use driver::{
    Access, CcProfile, CompletionQueue, Context, Device, EvProfile, LocalAddress, OpenOptions, PeerAddress,
    QpTransition, QueuePair, RtrAttr, RtsAttr, Timeouts, WriteWr,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use proto::loopback::{EvMatch, LinkConfig};
use proto::model::ev::{STALL_MIN, STALL_RTTS};
use proto::model::{ack_timeout, MAX_ACK_TIMEOUT_EXP};
use serde::Serialize;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use tb::dma::{DmaHost, DmaTiming};
use tb::pcie::{PcieConfig, PcieCounters};
use tb::stall::Stall;

use crate::units::{parse_duration, parse_ev_failure, parse_size};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Endpoints {
    /// Two cards joined by `cosim::fabric` (one path per EV, delays, loss,
    /// blackholes), on one clock.
    Fabric,
    /// QP pairs of one card, its fault-injection stage looping MAC TX to RX.
    Loopback,
}

/// The host behind each card's DMA (docs/hw/host-model.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Host {
    /// PCIe 3.0 x16 (the U250's and U280's slot): the link's rate each
    /// way, 26 B per TLP, `--pcie-max-payload`, `--pcie-max-read`,
    /// `--pcie-tags` read tags, `--dma-latency` per read, `--posted-latency`
    /// per posted write (the card's DMA writes into memory, the driver's
    /// MMIO writes to the card).
    #[value(name = "gen3x16")]
    #[serde(rename = "gen3x16")]
    Gen3x16,
    /// A host without a link: `--dma-latency` per read, 16 reads
    /// outstanding, a 64-byte beat per core cycle each way (20.6 GB/s).
    Ideal,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Bandwidth: keep `--tx-depth` WRITEs outstanding per QP.
    Bw,
    /// Latency: one WRITE at a time, post to completion.
    Lat,
}

/// Options of `mrc perf`.
#[derive(Args, Debug)]
pub struct PerfArgs {
    /// bw (ib_write_bw) or lat (ib_write_lat).
    #[arg(long, value_enum, default_value_t = Mode::Bw)]
    pub mode: Mode,
    /// Where the two endpoints are.
    #[arg(long, value_enum, default_value_t = Endpoints::Fabric)]
    pub endpoints: Endpoints,
    /// The dialect both cards send (their own address rows'
    /// `wire_mrc10`): MRC 1.0, or the legacy profile the cards reset to;
    /// both receive either. The wire limit is MRC 1.0's.
    #[arg(long, value_enum, default_value_t = crate::cosim::WireArg::Mrc10)]
    pub wire: crate::cosim::WireArg,
    /// Fabric: one-way base delay of every path.
    #[arg(long, value_parser = parse_duration, default_value = "1us")]
    pub delay: proto::time::Duration,
    /// Fabric: extra delay spread across the paths (EVs).
    #[arg(long, value_parser = parse_duration, default_value = "500ns")]
    pub ev_spread: proto::time::Duration,
    /// Fabric: random loss probability per frame, both directions.
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// Bytes per WRITE (e.g. 4096, 64KiB); with `-a`, the largest size.
    #[arg(short = 's', long, value_parser = parse_size, default_value = "4KiB")]
    pub size: u64,
    /// All sizes (perftest's `-a`): 2 bytes, doubling, up to `--size`, one
    /// run and one row each.
    #[arg(short = 'a', long)]
    pub all: bool,
    /// WRITEs per QP.
    #[arg(short = 'n', long, default_value_t = 100)]
    pub iters: u32,
    /// WRITEs outstanding per QP (bw mode; lat uses 1). The core's
    /// requester holds 64 messages per QP in flight (it holds the rest
    /// back). The RTO is chosen to outlast what the windows queue.
    #[arg(short = 't', long, default_value_t = 4)]
    pub tx_depth: u32,
    /// QP pairs.
    #[arg(short = 'q', long, default_value_t = 1)]
    pub qps: u32,
    /// EVs per QP.
    #[arg(long, default_value_t = 8)]
    pub evs: u16,
    /// EV INDEX drops everything from simulated TIME on (counted from the
    /// first post; the fabric's path, or in loopback the core's
    /// fault-injection stage), e.g. 3@20us; up to 4.
    #[arg(long = "fail-ev", value_parser = parse_ev_failure)]
    pub fail_ev: Vec<(u16, proto::Instant)>,
    /// Path MTU in bytes (256..8192, a power of two).
    #[arg(short = 'm', long, default_value_t = 1024)]
    pub mtu: u32,
    /// DMA read latency of the host (PCIe + memory), simulated: from a
    /// read request's arrival at the host to its first data leaving it.
    #[arg(long, value_parser = parse_duration, default_value = "500ns")]
    pub dma_latency: proto::time::Duration,
    /// Latency of a posted PCIe write (`--host gen3x16`), simulated: from
    /// its last byte crossing the link to the card's DMA write showing in
    /// host memory, or the driver's MMIO write (a doorbell) reaching the
    /// card. Default: half the default read latency.
    #[arg(long, value_parser = parse_duration, default_value = "250ns")]
    pub posted_latency: proto::time::Duration,
    /// The host behind each card's DMA.
    #[arg(long, value_enum, default_value_t = Host::Gen3x16)]
    pub host: Host,
    /// Do not push descriptors (the driver's `push_descriptors` off: every
    /// descriptor is read from the ring by the card).
    #[arg(long)]
    pub no_push: bool,
    /// Push descriptors but not small payloads (the driver's
    /// `push_payloads` off: a WRITE of up to 64 bytes is read from host
    /// memory by the card).
    #[arg(long)]
    pub no_payload_push: bool,
    /// PCIe Max_Payload_Size in bytes (128..=4096, a power of two).
    #[arg(long, default_value_t = tb::pcie::MAX_PAYLOAD_DEFAULT)]
    pub pcie_max_payload: u32,
    /// PCIe Max_Read_Request_Size in bytes (128..=4096, a power of two).
    #[arg(long, default_value_t = tb::pcie::MAX_READ_REQUEST_DEFAULT)]
    pub pcie_max_read: u32,
    /// PCIe read tags the card may have outstanding.
    #[arg(long, default_value_t = tb::pcie::READ_TAGS_DEFAULT)]
    pub pcie_tags: u32,
    /// Give up after this much simulated time.
    #[arg(long, value_parser = parse_duration, default_value = "5ms")]
    pub time_limit: proto::time::Duration,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Bandwidth in Gb/s in the perftest table (perftest's
    /// `--report_gbits`; its default, and ours, is MB/s).
    #[arg(long = "report_gbits", alias = "report-gbits")]
    pub report_gbits: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Write FST waveforms: FILE with `.a` / `.b` before the extension
    /// (card A, and card B over the fabric), each with a GTKWave view
    /// beside it, as `mrc cosim --trace` (a traced model is a build of its
    /// own).
    #[arg(long)]
    pub trace: Option<std::path::PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum PerfError {
    #[error("invalid option: {0}")]
    Usage(String),
    #[error("`verilator` not found: run scripts/deps.sh ({0})")]
    NoVerilator(String),
    #[error("model: {0}")]
    Model(#[from] verilated::VerilatedError),
    #[error("driver: {0}")]
    Driver(#[from] driver::Error),
    #[error("QP bring-up: {0}")]
    Modify(#[from] driver::ModifyError),
    #[error("post: {0}")]
    Post(#[from] driver::PostError),
    #[error("completion refused by the driver: {0}")]
    Cq(#[from] driver::CqError),
}

/// Latency statistics, simulated ns.
#[derive(Debug, Serialize)]
pub struct Latency {
    pub p50_ns: f64,
    pub p99_ns: f64,
    pub p999_ns: f64,
    pub max_ns: f64,
    pub min_ns: f64,
    pub avg_ns: f64,
    pub stdev_ns: f64,
}

#[derive(Debug, Serialize)]
pub struct PerfReport {
    pub mode: Mode,
    pub endpoints: Endpoints,
    /// The dialect the cards sent: "legacy" or "mrc10".
    pub wire: &'static str,
    pub endpoints_desc: &'static str,
    pub host: Host,
    /// The host's parameters, in words.
    pub host_desc: String,
    pub size: u64,
    pub iters: u32,
    pub tx_depth: u32,
    pub qps: u32,
    pub evs: u16,
    pub mtu: u32,
    pub messages: u64,
    pub completed: u64,
    pub bytes: u64,
    /// First post to last completion, simulated.
    pub sim_time_us: f64,
    pub bandwidth_gbps: f64,
    /// The payload rate 100 GbE allows for this size and MTU in MRC 1.0
    /// framing over IPv4, the cards' addresses ([`wire_limit_gbps`]), and
    /// the run's share of it.
    pub wire_limit_gbps: f64,
    pub wire_ratio: f64,
    pub msg_rate_mps: f64,
    /// Post to send completion (the ACK is back), per WRITE.
    pub latency: Option<Latency>,
    pub retransmits: u32,
    pub rtos: u32,
    pub evs_marked_bad: u32,
    /// Frames dropped by --fail-ev (both directions).
    pub frames_blackholed: u64,
    /// Frames dropped by --loss (both directions).
    pub frames_lost: u64,
    /// Every counter of the core (`contract::regmap::COUNTERS`) that is
    /// not 0, per card: `[(name, value)]` of A (requester side), then of
    /// B (responder side; empty in loopback, where A is both).
    pub counters_a: Vec<(String, u32)>,
    pub counters_b: Vec<(String, u32)>,
    /// What each card's PCIe link carried (with `--host gen3x16`).
    pub pcie_a: Option<PcieReport>,
    pub pcie_b: Option<PcieReport>,
    pub cycles: u64,
    pub wall_s: f64,
    pub cycles_per_s: f64,
    /// Every completion succeeded and every destination holds the source bytes.
    pub data_ok: bool,
    pub errors: Vec<String>,
    pub ok: bool,
}

/// The Ethernet line the wire limit is computed for, Gb/s.
const LINE_GBPS: f64 = 100.0;

/// Bytes an MRC 1.0 WRITE packet adds to its payload on the wire over
/// IPv6 (`ipv6`, 126: docs/hw/microarchitecture.md, section 1) or IPv4
/// (106).
fn mrc10_wire_overhead(ipv6: bool) -> u64 {
    use proto::wire::{ethernet, frame::ICRC_LEN, ipv4, ipv6, mrc10, reth, udp};
    let ip = if ipv6 { ipv6::HEADER_LEN } else { ipv4::HEADER_LEN };
    (ethernet::HEADER_LEN
        + ip
        + udp::HEADER_LEN
        + mrc10::bth::HEADER_LEN
        + mrc10::meth::HEADER_LEN
        + mrc10::tseth::HEADER_LEN
        + reth::HEADER_LEN
        + ICRC_LEN) as u64
        + LINE_BYTES_PER_FRAME
}

/// The payload rate 100 GbE carries for `size`-byte WRITEs cut into
/// `mtu`-byte packets in MRC 1.0 framing over IPv6 or IPv4: the wire
/// limit a run's bandwidth is measured against (`mrc perf`'s cards use
/// IPv4 addresses).
pub fn wire_limit_gbps(size: u64, mtu: u32, ipv6: bool) -> f64 {
    let packets = size.div_ceil(u64::from(mtu)).max(1);
    // Payloads are padded to 4 bytes (the BTH pad count); the MTU is a
    // power of two, so only the last packet's can need it.
    let last = size - (packets - 1) * u64::from(mtu);
    let pad = (4 - last % 4) % 4;
    let wire = size + pad + packets * mrc10_wire_overhead(ipv6);
    LINE_GBPS * size as f64 / wire as f64
}

/// What one card's PCIe link carried in a run.
#[derive(Debug, Serialize)]
pub struct PcieReport {
    pub read_requests: u64,
    pub completions: u64,
    pub write_tlps: u64,
    /// Cycles a read waited for a free tag.
    pub tag_wait_cycles: u64,
    /// Payload read and written by the card, Gb/s over the run.
    pub read_gbps: f64,
    pub write_gbps: f64,
}

/// The PCIe link of `--host gen3x16` with the run's options.
fn pcie_config(a: &PerfArgs) -> PcieConfig {
    PcieConfig {
        max_payload: a.pcie_max_payload,
        max_read_request: a.pcie_max_read,
        read_tags: a.pcie_tags,
        read_latency_ps: a.dma_latency.as_ps(),
        posted_latency_ps: a.posted_latency.as_ps(),
        ..PcieConfig::gen3_x16()
    }
}

fn host_desc(a: &PerfArgs) -> String {
    match a.host {
        Host::Gen3x16 => {
            let c = pcie_config(a);
            format!(
                "PCIe 3.0 x16: {:.2} GB/s each way, {:.2} GB/s of payload in {} B TLPs (+{} B), \
                 {} B read requests, {} tags, {} ns read latency, {} ns posted write latency",
                c.link_bytes_per_s() / 1e9,
                c.payload_bytes_per_s() / 1e9,
                c.max_payload,
                c.tlp_overhead,
                c.max_read_request,
                c.read_tags,
                c.read_latency_ps / 1000,
                c.posted_latency_ps / 1000
            )
        }
        Host::Ideal => format!(
            "ideal: {} ns read latency, {} reads outstanding, a 64 B beat per cycle each way",
            a.dma_latency.as_ps() / 1000,
            tb::dma::IDEAL_READS_OUTSTANDING
        ),
    }
}

fn pcie_report(c: Option<PcieCounters>, read: u64, written: u64, sim_ns: f64) -> Option<PcieReport> {
    let gbps = |b: u64| if sim_ns > 0.0 { b as f64 * 8.0 / sim_ns } else { 0.0 };
    c.map(|c| PcieReport {
        read_requests: c.read_requests,
        completions: c.completions,
        write_tlps: c.write_tlps,
        tag_wait_cycles: c.tag_waits,
        read_gbps: gbps(read),
        write_gbps: gbps(written),
    })
}

fn check(a: &PerfArgs) -> Result<(), PerfError> {
    let usage = |s: &str| Err(PerfError::Usage(s.into()));
    if a.size == 0 || a.size > 1 << 31 {
        return usage("--size must be 1 B..=2 GiB");
    }
    if a.all && a.size < 2 {
        return usage("-a runs sizes 2 B..=--size: --size must be >= 2");
    }
    if a.iters == 0 {
        return usage("--iters must be >= 1");
    }
    if a.tx_depth == 0 || a.tx_depth > 4096 {
        return usage("--tx-depth must be 1..=4096");
    }
    if a.qps == 0 || a.qps > 64 {
        return usage("--qps must be 1..=64 (two QPs per pair on one card)");
    }
    if a.evs == 0 || a.evs > 128 {
        return usage("--evs must be 1..=128 (the hardware's EV table holds 128 per QP)");
    }
    if !a.mtu.is_power_of_two() || !(256..=8192).contains(&a.mtu) {
        return usage("--mtu must be a power of two in 256..=8192 (the hardware's MTU is a power of two)");
    }
    if a.fail_ev.len() > 4 {
        return usage("at most 4 --fail-ev (the fault-injection stage has 4 EV matches)");
    }
    if let Some((ev, _)) = a.fail_ev.iter().find(|(ev, _)| *ev >= a.evs) {
        return usage(&format!("--fail-ev {ev}: the QPs have EVs 0..{}", a.evs));
    }
    if !(0.0..1.0).contains(&a.loss) {
        return usage("--loss must be in [0, 1)");
    }
    if a.loss > 0.0 && a.endpoints == Endpoints::Loopback {
        return usage("--loss needs --endpoints fabric");
    }
    if let Err(e) = pcie_config(a).validate() {
        return usage(&format!("--pcie-*: {e}"));
    }
    if (a.size as u128) * u128::from(a.qps) > 1 << 32 {
        return usage("--size x --qps must fit in 4 GiB of simulated host memory");
    }
    Ok(())
}

const LOCAL: LocalAddress = LocalAddress {
    mac: [2, 0, 0, 0, 0, 1],
    ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
    vlan_tci: None,
    dscp: 26,
    ttl: 64,
    wire_mrc10: false,
};
const EV_BASE: u16 = 0x1000;

fn ceil_log2(n: u32) -> u8 {
    (32 - n.saturating_sub(1).leading_zeros()) as u8
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

/// The smallest RTO `mrc perf` uses: 2^4 x 1.024 us = 16.4 us.
const MIN_RTO_EXP: u8 = 4;
/// How many times the worst round trip with no loss the RTO must last
/// (RFC 6298's RTO is the smoothed RTT plus four deviations; a full window
/// queued is the deviation here).
const RTO_RTT_FACTOR: u64 = 2;

/// The worst round trip of this run with nothing lost: the path (none in
/// loopback) and what every QP's window of `depth` messages queues at the
/// line ahead of a packet (`cosim::system::qp_window_wire_bytes`).
fn stall_timing(a: &PerfArgs, depth: u32, fabric: bool) -> StallTiming {
    let link = LinkConfig {
        base_delay: if fabric { a.delay } else { proto::time::Duration::ZERO },
        ev_delay_spread: if fabric {
            a.ev_spread
        } else {
            proto::time::Duration::ZERO
        },
        line_rate_gbps: Some(LINE_GBPS),
        ..LinkConfig::default()
    };
    let window = qp_window_wire_bytes(a.mtu, a.size, u64::from(depth), CcProfile::default().max_cwnd);
    StallTiming::of_link(&link, window * u64::from(a.qps.max(1)))
}

/// The stall rule's allowance `mrc perf` writes, ns: how much later than
/// an acknowledged packet another may have been sent before its missing
/// acknowledgement makes it lost. It covers the reordering between EVs,
/// on this fabric the paths' delay spread: every EV's packets cross one
/// line in the order they were sent (unlike [`StallTiming::allowance_ns`],
/// written for fabrics whose paths queue apart, e.g. `mrc cosim`'s
/// degraded paths). The model's floors stay (`max(STALL_MIN, STALL_RTTS x
/// base RTT)`, `proto::model::ev`), and the spread counts once each way
/// (data and acknowledgement). Not covered: two packets next to each
/// other on the line were sent as far apart as the sender paused while
/// the line's queue drained, so a later one overtaking an earlier one by
/// the spread can be an allowance later in send time, and the earlier is
/// resent with nothing lost (8 QPs at 1 KiB MTU: docs/benchmarks.md). An
/// allowance of the queue would cover that and leave a dead EV to the
/// tail check. The card's RTT estimate raises the bound above this floor
/// from its samples; without the floors, 8 QPs' windows filling the line
/// at once outran it (1-6 resends of packets only queued, not traced:
/// docs/benchmarks.md, "Issue 16's targets on main").
fn stall_allowance_ns(t: &StallTiming) -> u32 {
    let floor = STALL_MIN.as_ns();
    let round_trip_spread = PATH_SPREAD_CROSSINGS * t.spread_ns;
    let a = floor.max(STALL_RTTS * t.base_rtt_ns()).max(round_trip_spread);
    a.min(u64::from(u32::MAX)) as u32
}

/// The tail check's age `mrc perf` writes, ns: the model's `srtt +
/// allowance` with `srtt` at its worst, the base RTT, the spread and the
/// queue of every QP's window at the line ([`stall_timing`]); so no
/// packet is probed while it can still be queued.
fn stall_age_ns(t: &StallTiming) -> u32 {
    let age = t.base_rtt_ns() + t.spread_ns + t.queue_ns() + u64::from(stall_allowance_ns(t));
    age.min(u64::from(u32::MAX)) as u32
}

/// A round trip crosses the paths' delay spread twice: the data packet
/// out, its acknowledgement back.
const PATH_SPREAD_CROSSINGS: u64 = 2;

/// The RTO exponent for this run: the smallest at or above
/// [`MIN_RTO_EXP`] whose timeout (1.024 us x 2^exp) is at least
/// [`RTO_RTT_FACTOR`] times the worst round trip with nothing lost (the
/// base RTT plus the queue of [`stall_timing`]). Without it, 16 WRITEs of
/// 64 KiB (84 us queued at 100 Gb/s) time out behind a 16 us RTO with
/// nothing lost.
fn rto_exp(t: &StallTiming) -> u8 {
    let worst_rtt_ns = t.base_rtt_ns() + t.queue_ns();
    (MIN_RTO_EXP..=MAX_ACK_TIMEOUT_EXP)
        .find(|&e| ack_timeout(e).as_ps() / 1000 >= RTO_RTT_FACTOR * worst_rtt_ns)
        .unwrap_or(MAX_ACK_TIMEOUT_EXP)
}

/// One requester QP and what is in flight on it.
struct Flow {
    qp: QueuePair,
    /// Offset of its destination in the destination region.
    dst_offset: u64,
    posted: u32,
    completed: u32,
    /// Post cycle of each outstanding WRITE, oldest first.
    in_flight: std::collections::VecDeque<u64>,
}

/// Run `mrc perf`; whether every WRITE completed with its data in place.
/// With `-a`, one run per size (2 bytes, doubling, up to `--size`), one
/// row each in the perftest table (one JSON array with `--json`).
pub fn run(a: &PerfArgs) -> Result<bool, PerfError> {
    check(a)?;
    let sizes: Vec<u64> = if a.all {
        std::iter::successors(Some(2u64), |s| Some(s * 2))
            .take_while(|s| *s <= a.size)
            .collect()
    } else {
        vec![a.size]
    };
    let mut reports = Vec::new();
    for (k, &size) in sizes.iter().enumerate() {
        let report = run_size(a, size)?;
        if !a.json {
            if a.all {
                if k == 0 {
                    print_perftest_header(a);
                }
                print_perftest_row(a, &report);
            } else {
                print_report(a, &report);
            }
        }
        reports.push(report);
    }
    if a.json {
        let text = if a.all {
            serde_json::to_string_pretty(&reports)
        } else {
            serde_json::to_string_pretty(&reports[0])
        };
        println!("{}", text.expect("report serialises"));
    }
    Ok(reports.iter().all(|r| r.ok))
}

/// One run of `size`-byte WRITEs.
fn run_size(a: &PerfArgs, size: u64) -> Result<PerfReport, PerfError> {
    verilated::verilator_version().map_err(|e| PerfError::NoVerilator(e.to_string()))?;
    let depth = if a.mode == Mode::Lat { 1 } else { a.tx_depth };
    let built = cosim::nic::build_core(&verilated::BuildOptions {
        trace: a.trace.is_some(),
        ..verilated::BuildOptions::default()
    })?;
    let ns_per_cycle = cycles_to_ns(1);
    let dma_cycles = ((a.dma_latency.as_ps() as f64 / 1000.0) / ns_per_cycle).round() as u64;
    let opts = CosimOptions {
        stalls: Stalls {
            tx_ready: Stall::NEVER,
            rx_valid: Stall::NEVER,
            dma: DmaTiming {
                ready: Stall::NEVER,
                host: match a.host {
                    Host::Gen3x16 => DmaHost::Pcie {
                        link: pcie_config(a),
                        cycle_ps: ns_per_cycle * 1000.0,
                    },
                    Host::Ideal => DmaHost::Ideal {
                        read_latency: (dma_cycles, dma_cycles),
                    },
                },
            },
            axil_ready: Stall::NEVER,
        },
        seed: a.seed,
        // Latency mode polls every cycle: completion times are exact.
        progress_cycles: if a.mode == Mode::Lat { 1 } else { 8 },
        mmio_write_cycles: match a.host {
            Host::Gen3x16 => ((a.posted_latency.as_ps() as f64 / 1000.0) / ns_per_cycle).round() as u64,
            Host::Ideal => 0,
        },
        ..CosimOptions::default()
    };
    let fabric = a.endpoints == Endpoints::Fabric;
    let (dev_a, dev_b) = if fabric {
        let (x, y) = CosimDevice::pair(&built, &opts, None)?;
        (Arc::new(x), Arc::new(y))
    } else {
        let x = Arc::new(CosimDevice::single(&built, &opts)?);
        (x.clone(), x)
    };
    if let Some(path) = &a.trace {
        let (pa, pb) = crate::cosim::trace_paths(path);
        dev_a.with_nic(|nic| nic.trace(&pa))?;
        if fabric {
            dev_b.with_nic(|nic| nic.trace(&pb))?;
        }
    }
    let open = OpenOptions {
        push_descriptors: !a.no_push,
        push_payloads: !a.no_payload_push,
        ..OpenOptions::default()
    };
    let ctx_a = Context::open(dev_a.clone(), &open)?;
    let ctx_b = if fabric {
        Context::open(dev_b.clone(), &open)?
    } else {
        ctx_a.clone()
    };
    let local = LocalAddress {
        wire_mrc10: a.wire == crate::cosim::WireArg::Mrc10,
        ..LOCAL
    };
    let (addr_a, addr_b) = if fabric {
        (
            local,
            LocalAddress {
                mac: [2, 0, 0, 0, 0, 2],
                ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
                ..local
            },
        )
    } else {
        (local, local)
    };
    ctx_a.set_local_address(&addr_a);
    ctx_b.set_local_address(&addr_b);
    // The controllers' EV-event rings must exist before any QP reaches
    // RTS (the card reports the EV slots the driver denies there).
    let _ctl_a = ctx_a.controller(10)?;
    let _ctl_b = if fabric { Some(ctx_b.controller(10)?) } else { None };
    let pd_a = ctx_a.alloc_pd();
    let pd_b = ctx_b.alloc_pd();
    let cq_log2 = ceil_log2(a.qps * depth * 2).clamp(6, 16);
    let mut cq_send = ctx_a.create_cq(cq_log2)?;
    let mut cq_recv = ctx_b.create_cq(6)?;
    let src_buf = pd_a.alloc_buffer(size as usize)?;
    let dst_buf = pd_b.alloc_buffer((size * u64::from(a.qps)) as usize)?;
    let mut data = vec![0u8; size as usize];
    let mut rng = tb::rng::Rng::new(a.seed);
    rng.fill(&mut data);
    src_buf.write(0, &data).map_err(driver::Error::from)?;
    let src = pd_a.register(&src_buf, Access::LocalOnly)?;
    let dst = pd_b.register(&dst_buf, Access::RemoteWrite)?;
    let rkey = dst.rkey().expect("registered for remote write");
    let peer_of_a = PeerAddress {
        mac: addr_b.mac,
        ip: addr_b.ip,
    };
    let peer_of_b = PeerAddress {
        mac: addr_a.mac,
        ip: addr_a.ip,
    };
    // Timeouts from this run's fabric (`cosim::system::StallTiming`),
    // floors under the card's RTT estimate: the tail check's age covers
    // propagation, the EV spread and what this run's own windows queue at
    // the line ahead of a packet, and the RTO outlasts that round trip
    // too (`rto_exp`); the stall rule's allowance covers what can reorder
    // packets of different EVs, the spread (`stall_allowance_ns`).
    let timing = stall_timing(a, depth, fabric);
    let timeout_exp = rto_exp(&timing);
    let rts = |sq_psn: u32| RtsAttr {
        sq_psn,
        send_mpr_units: 2,
        max_wimm: 1,
        timeouts: Timeouts {
            ack_timeout_exp: timeout_exp,
            retry_linear: 7,
            retry_exp: 7,
            reorder_allowance: 3,
            stall_allowance_ns: stall_allowance_ns(&timing),
            stall_age_ns: stall_age_ns(&timing),
        },
        evs: EvProfile {
            values: (0..a.evs).map(|i| u32::from(EV_BASE + i)).collect(),
            min_active: 1,
        },
        cc: CcProfile::default(),
    };
    let log2_mtu = a.mtu.trailing_zeros() as u8;
    let mut flows = Vec::new();
    let mut responders = Vec::new();
    for i in 0..a.qps {
        let mut qa = pd_a.create_qp(&mut cq_send, ceil_log2(depth * 2).max(1))?;
        let mut qb = pd_b.create_qp(&mut cq_recv, 1)?;
        let (na, nb) = (qa.wire_qpn(), qb.wire_qpn());
        qa.modify(QpTransition::Init { pkey: 0xFFFF })?;
        qa.modify(QpTransition::Rtr(RtrAttr {
            dest_qp: nb,
            rq_psn: 0,
            peer: peer_of_a,
            log2_mtu,
            max_wimm: 1,
        }))?;
        qb.modify(QpTransition::Init { pkey: 0xFFFF })?;
        qb.modify(QpTransition::Rtr(RtrAttr {
            dest_qp: na,
            rq_psn: 0,
            peer: peer_of_b,
            log2_mtu,
            max_wimm: 1,
        }))?;
        qa.modify(QpTransition::Rts(rts(0)))?;
        qb.modify(QpTransition::Rts(rts(0)))?;
        flows.push(Flow {
            qp: qa,
            dst_offset: u64::from(i) * size,
            posted: 0,
            completed: 0,
            in_flight: Default::default(),
        });
        responders.push(qb);
    }
    ctx_a.sync().map_err(driver::Error::from)?;
    ctx_b.sync().map_err(driver::Error::from)?;
    let fib = ctx_a.info().fault_inject_base;
    let dev = dev_a.clone();
    if fabric {
        // The fabric's clock starts now: --fail-ev times count from here.
        let evs: Vec<u32> = (0..a.evs).map(|i| u32::from(EV_BASE + i)).collect();
        let link = LinkConfig {
            base_delay: a.delay,
            ev_delay_spread: a.ev_spread,
            line_rate_gbps: Some(100.0),
            loss: a.loss,
            blackholes: a.fail_ev.iter().map(|&(ev, at)| (EvMatch::Index(ev), at)).collect(),
            ..LinkConfig::default()
        };
        let f = Fabric::new(&link, &link, &evs, a.seed).map_err(|e| PerfError::Usage(e.to_string()))?;
        dev.with_bench(|b| {
            b.link = Some(Box::new(FabricInterconnect {
                fabric: f,
                origin: b.cycle,
            }))
        });
    } else {
        ctx_a.set_mac_loopback(true);
    }

    let total = u64::from(a.iters) * u64::from(a.qps);
    let bar = if a.quiet || a.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr())
    };
    bar.set_style(
        ProgressStyle::with_template("perf [{elapsed_precise}] {bar:40} {pos}/{len} WRITEs  {msg}")
            .expect("valid template"),
    );
    // Loopback: the fault-injection stage blackholes the EV values at
    // their time (the fabric has its own blackholes).
    let mut fails: Vec<(u16, u64)> = if fabric {
        vec![]
    } else {
        a.fail_ev.iter().map(|&(ev, at)| (ev, at.0 / 1000)).collect()
    };
    fails.sort_by_key(|f| f.1);
    let mut fails_armed = 0usize;
    let mut errors = Vec::new();
    let mut latencies = Vec::with_capacity(total as usize);
    let wall = Instant::now();
    let t0 = dev.cycles();
    let limit_cycles = ((a.time_limit.as_ps() as f64 / 1000.0) / ns_per_cycle) as u64;
    let mut completed = 0u64;
    let mut last_done = t0;
    while completed < total {
        let now = dev.cycles();
        if now - t0 > limit_cycles {
            errors.push(format!(
                "time limit: {completed} of {total} WRITEs completed after {:.1} us",
                cycles_to_ns(now - t0) / 1000.0
            ));
            break;
        }
        // Path failures due by now: blackhole their EV values.
        while fails_armed < fails.len() && cycles_to_ns(now - t0) >= fails[fails_armed].1 as f64 {
            let ev = fails[fails_armed].0;
            dev.write32(
                fib + u64::from(fi::EV_MATCH0) + 4 * fails_armed as u64,
                0xFFFF_0000 | u32::from(EV_BASE + ev),
            );
            fails_armed += 1;
            dev.write32(fib + u64::from(fi::EV_EN), (1 << fails_armed) - 1);
            dev.write32(fib + u64::from(fi::CTRL), fi::CTRL_LOOPBACK | fi::CTRL_EV_DROP);
        }
        for f in &mut flows {
            while f.posted < a.iters && f.posted - f.completed < depth {
                let wr = WriteWr {
                    wr_id: u64::from(f.posted),
                    local: &src,
                    local_offset: 0,
                    len: size as u32,
                    remote_va: dst.remote_va() + f.dst_offset,
                    rkey,
                    signaled: true,
                    imm: None,
                };
                f.in_flight.push_back(dev.cycles());
                f.qp.post_write(&wr)?;
                f.posted += 1;
            }
        }
        if let Some((qpn, status, wr_id)) = poll_one(&mut cq_send)? {
            let done = dev.cycles();
            let Some(f) = flows.iter_mut().find(|f| f.qp.qpn() == qpn) else {
                errors.push(format!("completion for unknown QP {qpn}"));
                continue;
            };
            if status != CqStatus::Success {
                errors.push(format!("QP {qpn} WRITE {wr_id}: {status:?}"));
            }
            if wr_id != u64::from(f.completed) {
                errors.push(format!(
                    "QP {qpn}: completion {wr_id} out of order (expected {})",
                    f.completed
                ));
            }
            if let Some(posted) = f.in_flight.pop_front() {
                latencies.push(cycles_to_ns(done - posted));
            }
            f.completed += 1;
            completed += 1;
            last_done = done;
            if completed.is_multiple_of(16) || completed == total {
                bar.set_position(completed);
                bar.set_message(format!("t={:.1} us", cycles_to_ns(done - t0) / 1000.0));
            }
        }
    }
    bar.finish_and_clear();
    let wall_s = wall.elapsed().as_secs_f64();
    let cycles = dev.cycles() - t0;
    // Every destination holds the source bytes (the last WRITE of each
    // QP wrote them; all WRITEs carry the same bytes).
    let mut got = vec![0u8; size as usize];
    let mut data_ok = errors.is_empty();
    for f in &flows {
        dst_buf
            .read(f.dst_offset as usize, &mut got)
            .map_err(driver::Error::from)?;
        if got != data || f.completed != a.iters {
            data_ok = false;
            errors.push(format!(
                "QP {}: destination differs from the source or incomplete ({}/{})",
                f.qp.qpn(),
                f.completed,
                a.iters
            ));
        }
    }
    dev_a.with_nic(|nic| errors.extend(nic.dma.errors.iter().cloned()));
    if fabric {
        dev_b.with_nic(|nic| errors.extend(nic.dma.errors.iter().cloned()));
    }
    let sim_ns = cycles_to_ns(last_done - t0);
    latencies.sort_by(f64::total_cmp);
    let latency = (!latencies.is_empty()).then(|| {
        let n = latencies.len() as f64;
        let avg = latencies.iter().sum::<f64>() / n;
        let var = latencies.iter().map(|x| (x - avg) * (x - avg)).sum::<f64>() / n;
        Latency {
            p50_ns: percentile(&latencies, 0.50),
            p99_ns: percentile(&latencies, 0.99),
            p999_ns: percentile(&latencies, 0.999),
            max_ns: *latencies.last().unwrap_or(&0.0),
            min_ns: latencies[0],
            avg_ns: avg,
            stdev_ns: var.sqrt(),
        }
    });
    let bytes = completed * size;
    let counter = |n: &str| ctx_a.counter(n).unwrap_or(0);
    let (blackholed, lost) = if fabric {
        fabric_drops(&dev)
    } else {
        (u64::from(counter("fi_ev_drop")), 0)
    };
    let nonzero = |ctx: &Context| -> Vec<(String, u32)> {
        contract::regmap::COUNTERS
            .iter()
            .filter_map(|c| {
                ctx.counter(c.name)
                    .ok()
                    .filter(|&v| v != 0)
                    .map(|v| (c.name.to_string(), v))
            })
            .collect()
    };
    let counters_a = nonzero(&ctx_a);
    let counters_b = if fabric { nonzero(&ctx_b) } else { Vec::new() };
    // The link's figures over the whole run (setup included, which moves
    // a few descriptors), per simulated time of the measured part.
    let pcie_of = |d: &CosimDevice| {
        d.with_nic(|nic| {
            let l = nic.dma.link().map(|l| l.counters);
            pcie_report(l, nic.dma.bytes_read, nic.dma.bytes_written, sim_ns)
        })
    };
    let bandwidth_gbps = if sim_ns > 0.0 { bytes as f64 * 8.0 / sim_ns } else { 0.0 };
    let wire_limit = wire_limit_gbps(size, a.mtu, LOCAL.ip.is_ipv6());
    let pcie_a = pcie_of(&dev_a);
    let pcie_b = if fabric { pcie_of(&dev_b) } else { None };
    let report = PerfReport {
        mode: a.mode,
        wire: match a.wire {
            crate::cosim::WireArg::Legacy => "legacy",
            crate::cosim::WireArg::Mrc10 => "mrc10",
        },
        endpoints: a.endpoints,
        endpoints_desc: if fabric {
            "two cards, requester QPs on A, responder QPs on B, over cosim::fabric (one path per EV)"
        } else {
            "QP pairs of one card in loopback (fault_inject)"
        },
        host: a.host,
        host_desc: host_desc(a),
        size,
        iters: a.iters,
        tx_depth: depth,
        qps: a.qps,
        evs: a.evs,
        mtu: a.mtu,
        messages: total,
        completed,
        bytes,
        sim_time_us: sim_ns / 1000.0,
        bandwidth_gbps,
        wire_limit_gbps: wire_limit,
        wire_ratio: bandwidth_gbps / wire_limit,
        msg_rate_mps: if sim_ns > 0.0 {
            completed as f64 * 1000.0 / sim_ns
        } else {
            0.0
        },
        latency,
        retransmits: counter("retransmit"),
        rtos: counter("rto"),
        evs_marked_bad: counter("ev_marked_bad"),
        frames_blackholed: blackholed,
        frames_lost: lost,
        counters_a,
        counters_b,
        pcie_a,
        pcie_b,
        cycles,
        wall_s,
        cycles_per_s: cycles as f64 / wall_s.max(1e-9),
        data_ok: data_ok && errors.is_empty(),
        ok: data_ok && errors.is_empty() && completed == total,
        errors,
    };
    drop(responders);
    Ok(report)
}

/// perftest's column header (`ib_write_bw` / `ib_write_lat`).
fn print_perftest_header(a: &PerfArgs) {
    let unit = if a.report_gbits { "Gb/sec" } else { "MB/sec" };
    match a.mode {
        Mode::Bw => println!(
            " #bytes     #iterations    BW average[{unit}]   MsgRate[Mpps]"
        ),
        Mode::Lat => println!(
            " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]"
        ),
    }
}

/// One row of perftest's table (simulated time). perftest's `BW peak`
/// column is not printed: it is the best interval of a run, which a
/// co-simulated run of a few hundred WRITEs does not have.
fn print_perftest_row(a: &PerfArgs, r: &PerfReport) {
    match (a.mode, &r.latency) {
        (Mode::Lat, Some(l)) => println!(
            " {:<6} {:<10}   {:<7.2}        {:<7.2}      {:<7.2}          {:<7.2}        {:<7.2}          {:<7.2}                {:<7.2}",
            r.size,
            r.completed,
            l.min_ns / 1e3,
            l.max_ns / 1e3,
            l.p50_ns / 1e3,
            l.avg_ns / 1e3,
            l.stdev_ns / 1e3,
            l.p99_ns / 1e3,
            l.p999_ns / 1e3
        ),
        _ => {
            // perftest's MB is 2^20 bytes.
            let bw = if a.report_gbits {
                r.bandwidth_gbps
            } else {
                r.bandwidth_gbps * 1e9 / 8.0 / f64::from(1u32 << 20)
            };
            println!(" {:<10} {:<10}       {:<10.2}           {:<10.6}", r.size, r.completed, bw, r.msg_rate_mps)
        }
    }
}

/// Frames the fabric blackholed and lost, both directions.
fn fabric_drops(dev: &CosimDevice) -> (u64, u64) {
    dev.with_bench(|b| {
        let Some(f) = b
            .link
            .as_ref()
            .and_then(|l| l.as_any().downcast_ref::<FabricInterconnect>())
        else {
            return (0, 0);
        };
        let (ab, ba) = (f.fabric.ab.total(), f.fabric.ba.total());
        (ab.blackholed + ba.blackholed, ab.lost + ba.lost)
    })
}

/// The next send completion: (QP, status, wr_id).
fn poll_one(cq: &mut CompletionQueue) -> Result<Option<(u32, CqStatus, u64)>, PerfError> {
    Ok(cq.poll_cq()?.map(|wc| (wc.qp, wc.status, wc.wr_id)))
}

fn print_report(a: &PerfArgs, r: &PerfReport) {
    println!(
        "mrc perf: RDMA WRITE {} on the co-simulated RTL (verilated MrcCore, driver verbs API)",
        match r.mode {
            Mode::Bw => "bandwidth",
            Mode::Lat => "latency",
        }
    );
    println!("endpoints: {}", r.endpoints_desc);
    println!(
        "wire: {}",
        match r.wire {
            "mrc10" => "MRC 1.0 (both cards' wire_mrc10)",
            _ => "the legacy profile",
        }
    );
    println!("host: {}", r.host_desc);
    println!();
    println!(
        "{:>10} {:>7} {:>5} {:>4} {:>4} {:>6}",
        "size", "iters", "depth", "qps", "evs", "mtu"
    );
    println!(
        "{:>10} {:>7} {:>5} {:>4} {:>4} {:>6}",
        r.size, r.iters, r.tx_depth, r.qps, r.evs, r.mtu
    );
    println!();
    println!(
        "completed        {}/{} WRITEs, {} bytes",
        r.completed, r.messages, r.bytes
    );
    println!(
        "simulated time   {:.2} us (first post to last completion)",
        r.sim_time_us
    );
    println!(
        "bandwidth        {:.3} Gb/s, {:.1}% of the wire limit ({:.2} Gb/s: 100 GbE, MRC 1.0 frames over IPv4)",
        r.bandwidth_gbps,
        100.0 * r.wire_ratio,
        r.wire_limit_gbps
    );
    println!("message rate     {:.4} M/s", r.msg_rate_mps);
    if let Some(l) = &r.latency {
        println!(
            "latency (ns)     min {:.0}  p50 {:.0}  p99 {:.0}  max {:.0}  (post to send completion)",
            l.min_ns, l.p50_ns, l.p99_ns, l.max_ns
        );
    }
    println!(
        "retransmits      {}  (RTOs {}, EVs marked bad {}; frames blackholed {}, lost {})",
        r.retransmits, r.rtos, r.evs_marked_bad, r.frames_blackholed, r.frames_lost
    );
    println!(
        "simulation       {} cycles in {:.2} s wall: {:.0} cycles/s",
        r.cycles, r.wall_s, r.cycles_per_s
    );
    for (card, counters) in [("A", &r.counters_a), ("B", &r.counters_b)] {
        if !counters.is_empty() {
            let list: Vec<String> = counters.iter().map(|(n, v)| format!("{n} {v}")).collect();
            println!("counters {card}       {}", list.join(", "));
        }
    }
    for (card, p) in [("A", &r.pcie_a), ("B", &r.pcie_b)] {
        if let Some(p) = p {
            println!(
                "PCIe {card}           read {:.1} Gb/s, written {:.1} Gb/s; {} read requests, {} completions, \
                 {} write TLPs; {} cycles waiting for a tag",
                p.read_gbps, p.write_gbps, p.read_requests, p.completions, p.write_tlps, p.tag_wait_cycles
            );
        }
    }
    for e in &r.errors {
        println!("error: {e}");
    }
    println!();
    print_perftest_header(a);
    print_perftest_row(a, r);
    println!();
    println!(
        "{}",
        if r.ok {
            "OK: every WRITE completed, data placed byte-identically"
        } else {
            "FAILED"
        }
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The figures of docs/hw/microarchitecture.md, section 1 (IPv6),
    /// and the same over IPv4.
    #[test]
    fn wire_limits_match_the_design_pages_table() {
        assert_eq!(mrc10_wire_overhead(true), 126);
        assert_eq!(mrc10_wire_overhead(false), 106);
        let near = |a: f64, b: f64| (a - b).abs() < 0.05;
        assert!(near(wire_limit_gbps(4096, 4096, true), 97.0));
        assert!(near(wire_limit_gbps(65536, 4096, true), 97.0));
        assert!(near(wire_limit_gbps(65536, 1024, true), 89.0));
        assert!(near(wire_limit_gbps(64, 4096, true), 33.7));
        assert!(near(wire_limit_gbps(4096, 4096, false), 97.5));
        assert!(near(wire_limit_gbps(65536, 1024, false), 90.6));
        assert!(near(wire_limit_gbps(64, 4096, false), 37.6));
        // A 2-byte WRITE pads to 4.
        assert!(near(wire_limit_gbps(2, 4096, true), 100.0 * 2.0 / 132.0));
    }

    /// The issue-16 row's options (`--mtu 4096 --size 64KiB --tx-depth
    /// DEPTH`, fabric defaults).
    fn row_args(depth: &str) -> PerfArgs {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            perf: PerfArgs,
        }
        <Cli as clap::Parser>::parse_from(["perf", "--mtu", "4096", "--size", "64KiB", "--tx-depth", depth]).perf
    }

    /// The stall rule's allowance does not grow with what the run's own
    /// windows queue at the line (that queue is one FIFO for every EV and
    /// reorders nothing): with 16 WRITEs of 64 KiB in flight it stays the
    /// model's floor of two base RTTs, where the queue of the window (85.7
    /// us) once made it 85.7 us and left a dead EV unfound until the tail
    /// check (docs/benchmarks.md, "`mrc perf` with 0.1% loss and a failed
    /// EV"). The age still covers the queue: no packet is probed while
    /// it can be queued.
    #[test]
    fn stall_allowance_covers_the_paths_spread_not_the_lines_queue() {
        let (deep, shallow) = (row_args("16"), row_args("1"));
        let (t_deep, t_shallow) = (stall_timing(&deep, 16, true), stall_timing(&shallow, 1, true));
        assert!(t_deep.queue_ns() > 80_000, "the window queues {} ns", t_deep.queue_ns());
        assert_eq!(stall_allowance_ns(&t_deep), stall_allowance_ns(&t_shallow));
        assert_eq!(
            u64::from(stall_allowance_ns(&t_deep)),
            STALL_RTTS * t_deep.base_rtt_ns()
        );
        let worst_rtt = t_deep.base_rtt_ns() + t_deep.spread_ns + t_deep.queue_ns();
        assert!(u64::from(stall_age_ns(&t_deep)) > worst_rtt);
        assert!(
            u64::from(stall_age_ns(&t_deep)) - u64::from(stall_age_ns(&t_shallow))
                >= t_deep.queue_ns() - t_shallow.queue_ns()
        );
    }
}
