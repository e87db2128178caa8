//! `mrc sim`: the packet-level fabric simulator, MRC against the RoCEv2 RC
//! baseline on the same topology, traffic and faults.

use std::path::{Path, PathBuf};
use std::time::Instant as WallClock;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use proto::model::ev::SprayPolicy;
use proto::model::Transport;
use proto::time::{Duration, Instant};
use sim::fabric::fault::{Fault, FaultKind, LinkRef};
use sim::fabric::net::{EcmpMode, EcnConfig, PfcConfig};
use sim::fabric::partition::Exchange;
use sim::fabric::plot::{self, Series};
use sim::fabric::results::{self, write_flows_csv, write_summary_json, RunOutput};
use sim::fabric::run::{run, run_part, run_threads, Progress, SimConfig};
use sim::fabric::topo::{BuildKnobs, NodeKind, TopoParams, Topology};
use sim::fabric::traffic::{self, FlowSpec, TriggerSpec};

use crate::units::{parse_duration, parse_size};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SimTransport {
    Mrc,
    /// RoCEv2 RC with DCQCN on the same lossy, trimming fabric as MRC.
    Rc,
    /// RoCEv2 RC with DCQCN on a lossless fabric (PFC; `--pfc-xoff`,
    /// `--pfc-xon`, `--pfc-timeout-exp`): the RoCE deployments' baseline.
    RocePfc,
    /// Run MRC, then RC, on the same scenario; plots compare them.
    Both,
    /// MRC, RC and RoCE + PFC.
    All,
}

/// One run of `mrc sim`: a transport and the fabric it runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Run {
    Mrc,
    Rc,
    RocePfc,
}

impl Run {
    fn transport(self) -> Transport {
        match self {
            Run::Mrc => Transport::Mrc,
            Run::Rc | Run::RocePfc => Transport::Rc,
        }
    }

    /// Its name in file names, JSON and plots.
    fn name(self) -> &'static str {
        match self {
            Run::Mrc => "mrc",
            Run::Rc => "rc",
            Run::RocePfc => "roce-pfc",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TrafficKind {
    /// Random permutation: every host sends one flow, every host receives one.
    Perm,
    /// N senders to one receiver.
    Incast,
    /// Every host to every other host.
    AllToAll,
    /// Ring AllReduce: 2(N-1) dependent steps of size/N.
    Ring,
}

/// ECN marking on the switch ports to hosts (`--ecn-last-hop`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EcnLastHop {
    /// Off for MRC, as MRC 1.0 deployments run (congestion at the last
    /// hop, which every path shares, is the receiver's to signal); on for
    /// RC and RoCE + PFC, whose DCQCN needs the marks at the incast port.
    Auto,
    On,
    Off,
}

impl EcnLastHop {
    /// Whether the ports to hosts mark in a run of `transport`.
    fn marks(self, transport: Transport) -> bool {
        match self {
            EcnLastHop::Auto => transport != Transport::Mrc,
            EcnLastHop::On => true,
            EcnLastHop::Off => false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EcmpArg {
    /// 5-tuple hash with a per-switch salt (commodity ECMP).
    Hash,
    /// The EV names the path hop by hop (NIC-generated EVs).
    EvPath,
}

/// Options of `mrc sim`.
#[derive(Args, Debug)]
pub struct SimArgs {
    /// htsim topology file (.topo). Without it, --tiers/--hosts/... build one.
    #[arg(long, conflicts_with_all = ["tiers", "hosts", "link_gbps", "link_latency", "oversub"])]
    pub topo: Option<PathBuf>,
    /// Generated topology: 2 = leaf-spine, 3 = fat tree.
    #[arg(long, default_value_t = 3)]
    pub tiers: u8,
    /// Generated topology: number of hosts.
    #[arg(long, default_value_t = 128)]
    pub hosts: u32,
    /// Link rate, Gb/s (generated topologies).
    #[arg(long, default_value_t = 100.0)]
    pub link_gbps: f64,
    /// Link latency (generated topologies).
    #[arg(long, value_parser = parse_duration, default_value = "1us")]
    pub link_latency: Duration,
    /// ToR oversubscription, downlinks:uplinks (generated topologies).
    #[arg(long, default_value_t = 1)]
    pub oversub: u32,
    /// Switch radix (generated topologies): each ToR (leaf) has this many
    /// ports, split into hosts and uplinks by --oversub, so every tier
    /// has this radix when the host count fills the fabric. The MRC
    /// paper's fabric: `--tiers 2 --radix 512 --hosts 131072 --planes 8`
    /// (512 leaves of 256 hosts and 256 spines per plane). Without it the
    /// radix follows from the host count (docs/sim-topology.md).
    #[arg(long, conflicts_with = "topo")]
    pub radix: Option<u32>,
    /// Parallel planes: each NIC is split into this many ports, each into
    /// its own copy of the switch fabric.
    #[arg(long, default_value_t = 1)]
    pub planes: u8,
    /// htsim connection matrix (.cm). Without it, --traffic generates flows.
    #[arg(long, conflicts_with_all = ["traffic", "size", "incast_senders"])]
    pub tm: Option<PathBuf>,
    /// Generated traffic.
    #[arg(long, value_enum, default_value_t = TrafficKind::Perm)]
    pub traffic: TrafficKind,
    /// Flow size for generated traffic (per flow; the whole buffer for ring).
    #[arg(long, value_parser = parse_size, default_value = "2MB")]
    pub size: u64,
    /// Incast: number of senders (default: every other host).
    #[arg(long)]
    pub incast_senders: Option<u32>,
    /// Transport(s) to run.
    #[arg(long, value_enum, default_value_t = SimTransport::Mrc)]
    pub transport: SimTransport,
    /// EVs per MRC flow (RC always uses one path).
    #[arg(long, default_value_t = 128)]
    pub evs: usize,
    /// Backup EVs per MRC flow: each takes the place of an EV of its plane
    /// that leaves GOOD (MRC 1.0's backup EV set); `--evs` plus these at
    /// most 256.
    #[arg(long, default_value_t = 0)]
    pub backup_evs: usize,
    /// Reverse EVs per plane of each MRC responder: SACKs and NACKs travel
    /// on EVs taken from arriving packets, refreshed when a probe or a
    /// duplicate says acknowledgements were lost (MRC 1.0's reverse EV
    /// set); 0 = each echoes the EV of the packet it answers. At most 64
    /// over all planes.
    #[arg(long, default_value_t = 0)]
    pub reverse_evs: u8,
    /// Receiver back-pressure (MRC): each host's SACKs carry a cwnd
    /// penalty from the number of flows delivering data to it at once, so
    /// n senders keep 1/n of their window ceiling each.
    #[arg(long)]
    pub receiver_penalty: bool,
    /// A NIC whose link goes down keeps sending on its EVs of that port
    /// until they are marked, and its senders too (by default it denies
    /// them at once, tells its senders in a Port Status Update, and allows
    /// them back when the link returns).
    #[arg(long)]
    pub no_port_status: bool,
    /// With --out: write each switch port's deepest queue per series bin
    /// (`queues-<transport>.csv`).
    #[arg(long, requires = "out")]
    pub queue_series: bool,
    /// With --out: write the goodput per series bin of the first N flows
    /// (`flow-goodput-<transport>.csv`).
    #[arg(long, default_value_t = 0, requires = "out")]
    pub flow_series: u32,
    /// Width of a time-series bin (the goodput plot and the CSV series).
    #[arg(long, value_parser = parse_duration, default_value = "10us")]
    pub series_bin: Duration,
    /// How EVs map to paths: `ev-path` (default) models MRC deployments
    /// where the NIC generates EVs from per-hop fields and switches take the
    /// path from them; `hash` models commodity 5-tuple ECMP, where a flow's
    /// EVs land on paths unevenly. RC's single random EV picks a uniformly
    /// random path either way.
    #[arg(long, value_enum, default_value_t = EcmpArg::EvPath)]
    pub ecmp: EcmpArg,
    /// Weighted spraying (by per-EV loss, ECN and delay) instead of round robin.
    #[arg(long)]
    pub weighted_spray: bool,
    /// Payload bytes per packet.
    #[arg(long, default_value_t = 4096)]
    pub mtu: u32,
    /// Switch buffer per port.
    #[arg(long, value_parser = parse_size, default_value = "400000")]
    pub buffer: u64,
    /// ECN marking thresholds KMIN,KMAX in bytes ("off" disables).
    #[arg(long, default_value = "80000,320000")]
    pub ecn: String,
    /// Disable packet trimming (full queues drop instead of cutting payloads).
    #[arg(long)]
    pub no_trim: bool,
    /// ECN marking on the switch ports to hosts: auto is off for MRC (as
    /// MRC 1.0 deployments run: congestion at the last hop is the
    /// receiver's to signal) and on for RC and RoCE + PFC (DCQCN).
    #[arg(long, value_enum, default_value_t = EcnLastHop::Auto)]
    pub ecn_last_hop: EcnLastHop,
    /// Random loss on every link, both directions: the fraction of packets
    /// each link drops, in [0, 1) (`--fault loss=RATE@...` sets one link).
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// A fault, repeatable: KIND@TIME:LINK. KIND: down, up, blackhole,
    /// restore, degrade=FACTOR, loss=RATE, flap=PERIOD/DOWNTIME. LINK:
    /// hostH (its port in plane 0), hostH.pP (in plane P), torI.upJ,
    /// aggI.upJ (tier-1 switch I's J-th uplink, plane 0), NODE/PORT; or
    /// several: planeP (every link of plane P), planeP.torI, planeP.aggI,
    /// planeP.coreI (every link of that switch; leafI and spineI name a
    /// leaf-spine's), planeP.torI.upJ.
    /// Example: down@50us:agg0.up0, degrade=0.25@0us:tor3.up1,
    /// down@20us:plane3, down@20us:plane1.agg0.
    #[arg(long = "fault")]
    pub faults: Vec<String>,
    /// After a link goes down, routing avoids it after this delay (default:
    /// never, as when the failure is not yet seen by the control plane).
    #[arg(long, value_parser = parse_duration)]
    pub reroute_after: Option<Duration>,
    /// ACK timeout exponent t: RTO = 1.024 us x 2^t.
    #[arg(long, default_value_t = 7)]
    pub timeout_exp: u8,
    /// RoCE + PFC: a switch pauses an ingress link once it holds more than
    /// this many of its data bytes...
    #[arg(long, value_parser = parse_size, default_value = "64000")]
    pub pfc_xoff: u64,
    /// ...and resumes it below this many.
    #[arg(long, value_parser = parse_size, default_value = "32000")]
    pub pfc_xon: u64,
    /// RoCE + PFC: the RC timeout exponent (RTO = 1.024 us x 2^t). Under
    /// pauses a round trip lasts as long as the queues upstream take to
    /// drain, so PFC deployments run RTOs of milliseconds (12: 4.2 ms).
    #[arg(long, default_value_t = 12)]
    pub pfc_timeout_exp: u8,
    /// Exponential retries after the 7 linear ones (25 = forever).
    #[arg(long, default_value_t = 25)]
    pub retry_exp: u8,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Simulated time limit.
    #[arg(long, value_parser = parse_duration, default_value = "1s")]
    pub time_limit: Duration,
    /// Output folder: per-flow CSV, summary JSON, FCT CDF and goodput plots.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Cut the fabric into this many parts, simulated in parallel by as
    /// many threads of this process (docs/sim-mpi.md). Flow by flow the
    /// results are those of one part. Under `mpirun -np N` the parts are
    /// the N ranks instead, and this must stay 1.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub parts: u32,
    /// Benchmark mode: print events/s, wall time and peak RSS; write nothing.
    #[arg(long, conflicts_with = "out")]
    pub bench: bool,
}

/// Errors of `mrc sim`.
#[derive(Debug, thiserror::Error)]
pub enum SimCliError {
    #[error("invalid option: {0}")]
    Usage(String),
    #[error("{0}")]
    Topo(#[from] sim::fabric::topo::TopoError),
    #[error("{0}")]
    Traffic(#[from] sim::fabric::traffic::TrafficError),
    #[error("{0}")]
    Sim(#[from] sim::fabric::run::SimError),
    #[error("cannot write {path}: {msg}")]
    Output { path: PathBuf, msg: String },
    #[error("{0}")]
    Mpi(String),
}

fn usage<T>(s: impl Into<String>) -> Result<T, SimCliError> {
    Err(SimCliError::Usage(s.into()))
}

/// The `i`-th switch of `tier` in `plane`, in node order.
fn nth_switch(topo: &Topology, tier: u8, plane: u8, i: u32) -> Option<u32> {
    (topo.n_hosts..topo.nodes.len() as u32)
        .filter(|&n| topo.nodes[n as usize].kind == NodeKind::Switch { tier, plane })
        .nth(i as usize)
}

/// Every link of switch `node`, each named from the switch's side.
fn links_of(topo: &Topology, node: u32) -> impl Iterator<Item = LinkRef> + '_ {
    (0..topo.nodes[node as usize].ports.len()).map(move |p| LinkRef { node, port: p as u16 })
}

/// What a fault's LINK names: one link, or every link of a switch or of
/// a plane (see `--fault`).
pub fn parse_links(topo: &Topology, s: &str) -> Result<Vec<LinkRef>, SimCliError> {
    let bad = || {
        SimCliError::Usage(format!(
            "'{s}' names no link (hostH, hostH.pP, torI.upJ, aggI.upJ, planeP, planeP.torI, planeP.aggI, \
             planeP.coreI, planeP.torI.upJ, planeP.aggI.upJ or NODE/PORT; leaf and spine name tiers 0 and 1 too)"
        ))
    };
    let num = |t: &str| t.parse::<u32>().map_err(|_| bad());
    let Some(rest) = s.strip_prefix("plane") else {
        return Ok(vec![parse_link(topo, s)?]);
    };
    let (plane, what) = rest.split_once('.').map_or((rest, None), |(p, w)| (p, Some(w)));
    let plane = num(plane)?;
    if plane >= topo.planes as u32 {
        return Err(bad());
    }
    let plane = plane as u8;
    let Some(what) = what else {
        // Every link with a switch of the plane at one end, once.
        let mut links = Vec::new();
        for n in topo.n_hosts..topo.nodes.len() as u32 {
            if matches!(topo.nodes[n as usize].kind, NodeKind::Switch { plane: p, .. } if p == plane) {
                links.extend(links_of(topo, n).filter(|l| {
                    let peer = topo.nodes[n as usize].ports[l.port as usize].peer;
                    peer < topo.n_hosts || peer > n
                }));
            }
        }
        return Ok(links);
    };
    let (sw, up) = what.split_once(".up").map_or((what, None), |(s, u)| (s, Some(u)));
    // A leaf-spine's leaves and spines are tiers 0 and 1, as a fat tree's
    // ToRs and aggregation switches.
    let tiers = [("tor", 0), ("leaf", 0), ("agg", 1), ("spine", 1), ("core", 2)];
    let (tier, i) = tiers
        .iter()
        .find_map(|&(name, tier)| sw.strip_prefix(name).map(|i| (tier, i)))
        .ok_or_else(bad)?;
    let node = nth_switch(topo, tier, plane, num(i)?).ok_or_else(bad)?;
    match up {
        None => Ok(links_of(topo, node).collect()),
        Some(j) => Ok(vec![LinkRef {
            node,
            port: nth_uplink(topo, node, num(j)?).ok_or_else(bad)?,
        }]),
    }
}

/// The `j`-th uplink (port to a switch of a higher tier) of `node`.
fn nth_uplink(topo: &Topology, node: u32, j: u32) -> Option<u16> {
    let tier = match topo.nodes[node as usize].kind {
        NodeKind::Switch { tier, .. } => tier,
        NodeKind::Host => return None,
    };
    topo.nodes[node as usize]
        .ports
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(topo.nodes[p.peer as usize].kind, NodeKind::Switch { tier: t, .. } if t > tier))
        .nth(j as usize)
        .map(|(i, _)| i as u16)
}

/// Parse a link name (see `--fault`).
pub fn parse_link(topo: &Topology, s: &str) -> Result<LinkRef, SimCliError> {
    let bad = || {
        SimCliError::Usage(format!(
            "'{s}' names no link (hostH, hostH.pP, torI.upJ, aggI.upJ or NODE/PORT)"
        ))
    };
    let num = |t: &str| t.parse::<u32>().map_err(|_| bad());
    let link = if let Some(h) = s.strip_prefix("host") {
        // hostH (its port in plane 0) or hostH.pP (its port in plane P).
        let (h, port) = h.split_once(".p").map_or(Ok((h, 0)), |(h, p)| num(p).map(|p| (h, p)))?;
        let h = num(h)?;
        if h >= topo.n_hosts {
            return Err(bad());
        }
        LinkRef {
            node: h,
            port: port as u16,
        }
    } else if let Some((node, port)) = s.split_once('/') {
        LinkRef {
            node: num(node)?,
            port: num(port)? as u16,
        }
    } else {
        let (sw, up) = s.split_once(".up").ok_or_else(bad)?;
        let (tier, i) = if let Some(i) = sw.strip_prefix("tor") {
            (0, num(i)?)
        } else if let Some(i) = sw.strip_prefix("agg") {
            (1, num(i)?)
        } else {
            return Err(bad());
        };
        let node = nth_switch(topo, tier, 0, i).ok_or_else(bad)?;
        LinkRef {
            node,
            port: nth_uplink(topo, node, num(up)?).ok_or_else(bad)?,
        }
    };
    match topo.nodes.get(link.node as usize) {
        Some(n) if (link.port as usize) < n.ports.len() => Ok(link),
        _ => Err(bad()),
    }
}

/// Parse `KIND@TIME:LINK`.
pub fn parse_fault(topo: &Topology, s: &str, limit: Duration) -> Result<Vec<Fault>, SimCliError> {
    let bad = |why: &str| SimCliError::Usage(format!("fault '{s}': {why} (expected KIND@TIME:LINK)"));
    let (kind, rest) = s.split_once('@').ok_or_else(|| bad("no '@'"))?;
    let (time, link) = rest.split_once(':').ok_or_else(|| bad("no ':LINK'"))?;
    let at = Instant(parse_duration(time).map_err(|_| bad("bad time"))?.as_ps());
    let (name, arg) = kind.split_once('=').map_or((kind, None), |(k, a)| (k, Some(a)));
    let factor = |a: Option<&str>| -> Result<f64, SimCliError> {
        a.and_then(|a| a.parse::<f64>().ok())
            .filter(|f| f.is_finite() && (0.0..=1.0).contains(f))
            .ok_or_else(|| bad("needs =VALUE in [0, 1]"))
    };
    let kind = match name {
        "down" => FaultKind::Down,
        "up" => FaultKind::Up,
        "blackhole" => FaultKind::Blackhole,
        "restore" => FaultKind::Restore,
        "degrade" => FaultKind::Degrade { factor: factor(arg)? },
        "loss" => FaultKind::Loss { rate: factor(arg)? },
        "flap" => {
            let (period, down) = arg
                .and_then(|a| a.split_once('/'))
                .ok_or_else(|| bad("flap=PERIOD/DOWNTIME"))?;
            let period = parse_duration(period).map_err(|_| bad("bad flap period"))?;
            let down_for = parse_duration(down).map_err(|_| bad("bad flap downtime"))?;
            if down_for >= period || period == Duration::ZERO {
                return Err(bad("flap downtime must be shorter than its period"));
            }
            FaultKind::Flap {
                period,
                down_for,
                until: Instant(limit.as_ps()),
            }
        }
        _ => return Err(bad("unknown kind")),
    };
    Ok(parse_links(topo, link)?
        .into_iter()
        .map(|link| Fault { at, link, kind })
        .collect())
}

fn topology(a: &SimArgs) -> Result<Topology, SimCliError> {
    if let Some(path) = &a.topo {
        return Ok(Topology::from_htsim_file(path, a.planes)?);
    }
    if !(a.link_gbps > 0.0 && a.link_gbps.is_finite()) {
        return usage("--link-gbps must be positive");
    }
    let p = TopoParams {
        tiers: a.tiers,
        hosts: a.hosts,
        link_gbps: a.link_gbps,
        link_latency: a.link_latency,
        oversubscription: a.oversub,
        planes: a.planes,
        ..TopoParams::default()
    };
    let knobs = BuildKnobs {
        hosts_per_tor: a.radix.map(|k| hosts_per_tor(k, a.oversub)).transpose()?,
    };
    check_fits_in_memory(&p, &knobs, a.parts)?;
    Ok(Topology::build_with(&p, &knobs)?)
}

/// The hosts of a ToR of `radix` ports with `oversub`:1 oversubscription:
/// `h` hosts and `h / oversub` uplinks fill the radix, so the radix is a
/// multiple of `oversub + 1` (`h = radix / (oversub + 1) * oversub`).
fn hosts_per_tor(radix: u32, oversub: u32) -> Result<u32, SimCliError> {
    let o = oversub.max(1) as u64;
    let h = radix as u64 / (o + 1) * o;
    if radix < 2 || !(radix as u64).is_multiple_of(o + 1) {
        return usage(format!(
            "--radix {radix} cannot be split into hosts and uplinks at {oversub}:1 (a multiple of {} is needed)",
            o + 1
        ));
    }
    Ok(h as u32)
}

/// Run state per host beyond the topology itself (NIC, flow and port
/// queues): peak RSS / hosts of `--bench` runs at the default 128 EVs on
/// permutation traffic, 76 to 80 KB from 2048 to 65536 hosts (docs/cli.md).
const RUN_BYTES_PER_HOST: u64 = 76_000;

/// Memory a run on the generated topology `p` in `parts` threads needs:
/// the topology (its ECMP table grows faster than the host count) once,
/// plus the per-host run state, which the parts share out, plus each
/// further part's copy of the topology-sized state (its ports and tables:
/// docs/sim-mpi.md, "Memory per part").
fn estimated_run_bytes(p: &TopoParams, k: &BuildKnobs, parts: u32) -> Result<u64, SimCliError> {
    let topo = Topology::estimated_bytes_with(p, k)?;
    Ok(topo * parts.max(1) as u64 + RUN_BYTES_PER_HOST * p.hosts as u64)
}

/// `MemAvailable` of /proc/meminfo, in bytes (None where it cannot be read).
fn available_memory_bytes() -> Option<u64> {
    const BYTES_PER_KB: u64 = 1024;
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * BYTES_PER_KB)
}

/// Refuse, before building it, a generated topology whose run would not fit
/// in the available memory; say how many hosts fit.
fn check_fits_in_memory(p: &TopoParams, k: &BuildKnobs, parts: u32) -> Result<(), SimCliError> {
    let Some(available) = available_memory_bytes() else {
        return Ok(());
    };
    let needed = estimated_run_bytes(p, k, parts)?;
    if needed <= available {
        return Ok(());
    }
    let fits =
        |hosts: u32| estimated_run_bytes(&TopoParams { hosts, ..p.clone() }, k, parts).is_ok_and(|b| b <= available);
    // Largest host count that fits: the estimate grows with the host count.
    let (mut lo, mut hi) = (0u32, p.hosts);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    const BYTES_PER_GB: f64 = 1e9;
    usage(format!(
        "--hosts {}: the run needs about {:.1} GB, {:.1} GB of memory is available; at most {lo} hosts fit \
         with --tiers {} --planes {}",
        p.hosts,
        needed as f64 / BYTES_PER_GB,
        available as f64 / BYTES_PER_GB,
        p.tiers,
        p.planes
    ))
}

/// The flows of the run, and the triggers of a `.cm` file (empty for
/// generated traffic).
fn flows(a: &SimArgs, topo: &Topology) -> Result<(Vec<FlowSpec>, Vec<TriggerSpec>), SimCliError> {
    let n = topo.n_hosts;
    if let Some(path) = &a.tm {
        let cm = traffic::read_cm(path)?;
        if cm.nodes > n {
            return usage(format!(
                "{} has {} nodes, the topology {} hosts",
                path.display(),
                cm.nodes,
                n
            ));
        }
        return Ok((cm.flows, cm.triggers));
    }
    if n < 2 {
        return usage("traffic needs at least 2 hosts");
    }
    if a.incast_senders.is_some() && a.traffic != TrafficKind::Incast {
        let traffic = a.traffic.to_possible_value().expect("no variant is skipped");
        return usage(format!(
            "--incast-senders cannot be used with --traffic {}",
            traffic.get_name()
        ));
    }
    let generated = match a.traffic {
        TrafficKind::Perm => traffic::permutation(n, a.size, a.seed),
        TrafficKind::Incast => {
            let senders = a.incast_senders.unwrap_or(n - 1);
            if senders == 0 || senders >= n {
                return usage(format!("--incast-senders must be 1..{n}"));
            }
            traffic::incast(n, senders, 0, a.size)
        }
        TrafficKind::AllToAll => traffic::all_to_all(n, a.size),
        TrafficKind::Ring => traffic::ring_allreduce(n, a.size),
    };
    Ok((generated, Vec::new()))
}

fn config(a: &SimArgs, run: Run, topo: &Topology) -> Result<SimConfig, SimCliError> {
    let transport = run.transport();
    let mut c = SimConfig::new(transport);
    if a.evs == 0 || a.evs > proto::model::ev::MAX_EVS {
        return usage(format!(
            "--evs must be 1..={} (the golden model's EV set per QP)",
            proto::model::ev::MAX_EVS
        ));
    }
    if a.evs
        .checked_add(a.backup_evs)
        .is_none_or(|n| n > proto::model::ev::MAX_EVS)
    {
        return usage(format!(
            "--evs {} plus --backup-evs {} exceed the {} EVs a QP may hold",
            a.evs,
            a.backup_evs,
            proto::model::ev::MAX_EVS
        ));
    }
    if !(proto::model::MIN_MTU..=proto::model::MAX_MTU).contains(&a.mtu) {
        return usage("--mtu must be 256..=9000");
    }
    if !(a.loss.is_finite() && (0.0..1.0).contains(&a.loss)) {
        return usage(format!("--loss {} must be in [0, 1)", a.loss));
    }
    c.loss = a.loss;
    if a.timeout_exp.max(a.pfc_timeout_exp) > proto::model::MAX_ACK_TIMEOUT_EXP
        || a.retry_exp > proto::model::RETRY_INFINITE
    {
        return usage("--timeout-exp and --pfc-timeout-exp must be <= 24 and --retry-exp <= 25");
    }
    c.n_evs = if transport == Transport::Rc { 1 } else { a.evs };
    c.min_active_evs = c.min_active_evs.min(c.n_evs as u16);
    c.backup_evs = if transport == Transport::Mrc { a.backup_evs } else { 0 };
    let reverse = proto::model::reverse_ev::ReverseEvConfig {
        per_plane: a.reverse_evs,
        planes: topo.planes,
    };
    if let Err(why) = reverse.check() {
        return usage(format!("--reverse-evs {}: {why}", a.reverse_evs));
    }
    c.reverse_evs_per_plane = a.reverse_evs;
    c.receiver_penalty = a.receiver_penalty;
    c.port_status = !a.no_port_status;
    c.queue_series = a.queue_series;
    if a.series_bin == Duration::ZERO {
        return usage("--series-bin must be positive");
    }
    c.series_bin = a.series_bin;
    c.flow_series = a.flow_series;
    c.mtu = a.mtu;
    c.seed = a.seed;
    c.ecmp = match a.ecmp {
        EcmpArg::Hash => EcmpMode::Hash,
        EcmpArg::EvPath => EcmpMode::EvPath,
    };
    if a.weighted_spray {
        c.spray = SprayPolicy::Weighted;
    }
    c.switch.buffer_bytes = a.buffer;
    c.switch.trimming = !a.no_trim;
    if run == Run::RocePfc {
        if a.pfc_xon > a.pfc_xoff || a.pfc_xoff == 0 {
            return usage(format!(
                "--pfc-xon {} must not exceed --pfc-xoff {}, which must be positive",
                a.pfc_xon, a.pfc_xoff
            ));
        }
        c.switch.pfc = Some(PfcConfig {
            xoff_bytes: a.pfc_xoff,
            xon_bytes: a.pfc_xon,
        });
    }
    c.switch.ecn_last_hop = a.ecn_last_hop.marks(transport);
    c.switch.ecn = if a.ecn == "off" {
        None
    } else {
        let (kmin, kmax) = a
            .ecn
            .split_once(',')
            .ok_or_else(|| SimCliError::Usage("--ecn KMIN,KMAX or off".into()))?;
        let (kmin, kmax) = (parse_size(kmin), parse_size(kmax));
        match (kmin, kmax) {
            (Ok(kmin), Ok(kmax)) if kmin <= kmax => Some(EcnConfig {
                kmin_bytes: kmin,
                kmax_bytes: kmax,
                pmax: 1.0,
            }),
            _ => return usage("--ecn KMIN,KMAX with KMIN <= KMAX, or off"),
        }
    };
    c.faults = a
        .faults
        .iter()
        .map(|f| parse_fault(topo, f, a.time_limit))
        .collect::<Result<Vec<_>, _>>()?
        .concat();
    c.reroute_after = a.reroute_after;
    c.ack_timeout_exp = if run == Run::RocePfc {
        a.pfc_timeout_exp
    } else {
        a.timeout_exp
    };
    c.retry_exp = a.retry_exp;
    c.time_limit = a.time_limit;
    Ok(c)
}

/// The process's part in a run over MPI ranks, if it was launched as one
/// of several (`mpirun -np N`, `srun`).
pub struct Ranks {
    ex: Box<dyn Exchange>,
}

impl Ranks {
    /// This process's rank and the number of ranks.
    pub fn rank(&self) -> (u32, u32) {
        (self.ex.rank(), self.ex.ranks())
    }
}

/// Launched by an MPI launcher: OpenMPI's, Hydra's (MPICH) or a PMIx one
/// (Slurm) sets one of these.
fn launched_by_mpi() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// Join the MPI world when launched by an MPI launcher with more than one
/// rank; `None` otherwise.
pub fn join_ranks() -> Result<Option<Ranks>, SimCliError> {
    if !launched_by_mpi() {
        return Ok(None);
    }
    #[cfg(feature = "mpi")]
    {
        let ex = sim::fabric::mpi::MpiExchange::init()
            .ok_or_else(|| SimCliError::Mpi("MPI could not be initialised".into()))?;
        if ex.ranks() == 1 {
            return Ok(None);
        }
        Ok(Some(Ranks { ex: Box::new(ex) }))
    }
    #[cfg(not(feature = "mpi"))]
    {
        // A PMIx launch (Slurm's `srun --mpi=pmix`) names no size of its
        // own: Slurm's task count says it.
        let size = [
            "OMPI_COMM_WORLD_SIZE",
            "PMI_SIZE",
            "SLURM_STEP_NUM_TASKS",
            "SLURM_NTASKS",
        ]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .and_then(|s| s.parse::<u32>().ok());
        match size {
            Some(n) if n > 1 => Err(SimCliError::Mpi(format!(
                "launched as one of {n} MPI ranks, but this mrc was built without the `mpi` feature"
            ))),
            _ => Ok(None),
        }
    }
}

/// Over MPI ranks, every rank's `r` succeeds or every rank fails: an
/// error on any rank ends all of them (a collective each rank calls once,
/// at the same point), rank 0 reporting the first (its own, else the
/// lowest rank's, named). The other ranks' errors are not printed.
fn agree<T>(ranks: &mut Option<Ranks>, r: Result<T, SimCliError>) -> Result<T, SimCliError> {
    let Some(rk) = ranks.as_mut() else {
        return r;
    };
    let msg = r.as_ref().err().map_or_else(String::new, |e| e.to_string());
    let all = rk.ex.gather(msg.into_bytes());
    let (_, failed) = rk.ex.reduce(0, r.is_err() as u64);
    if failed == 0 {
        return r;
    }
    // This rank's own error, else the first other rank's.
    r?;
    let why = all
        .and_then(|all| {
            all.iter()
                .enumerate()
                .find(|(_, m)| !m.is_empty())
                .map(|(k, m)| format!("rank {k}: {}", String::from_utf8_lossy(m)))
        })
        .unwrap_or_else(|| "another rank failed".into());
    Err(SimCliError::Mpi(why))
}

/// Not rank 0 of a run over MPI ranks: prints nothing (rank 0 speaks for
/// the run), and only runs its part.
fn silent(ranks: &Option<Ranks>) -> bool {
    ranks.as_ref().is_some_and(|r| r.ex.rank() != 0)
}

fn run_one(
    a: &SimArgs,
    topo: &Topology,
    flows: &[FlowSpec],
    triggers: &[TriggerSpec],
    t: Run,
    ranks: &mut Option<Ranks>,
) -> Result<Option<(RunOutput, f64)>, SimCliError> {
    let mut cfg = config(a, t, topo)?;
    cfg.triggers = triggers.to_vec();
    let limit_ps = cfg.time_limit.as_ps().max(1);
    let bar = if a.quiet || a.json || silent(ranks) {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(flows.len() as u64);
        b.set_style(
            ProgressStyle::with_template("{prefix:>4} [{elapsed_precise}] {bar:40} {pos}/{len} flows  {msg}")
                .expect("valid template"),
        );
        b.set_prefix(t.name());
        b
    };
    let mut on_progress = |p: Progress| {
        bar.set_position(p.flows_done as u64);
        bar.set_message(format!(
            "t={:.1} us  {:.1} M events  ({:.0}% of limit)",
            p.now.as_ps() as f64 / 1e6,
            p.events as f64 / 1e6,
            100.0 * p.now.as_ps() as f64 / limit_ps as f64
        ));
    };
    let t0 = WallClock::now();
    let out = match ranks {
        Some(r) => run_part(topo, &cfg, flows, r.ex.as_mut(), Some(&mut on_progress))?,
        None if a.parts > 1 => Some(run_threads(topo, &cfg, flows, a.parts, Some(&mut on_progress))?),
        None => Some(run(topo, &cfg, flows, Some(&mut on_progress))?),
    };
    let wall = t0.elapsed().as_secs_f64();
    bar.finish_and_clear();
    Ok(out.map(|o| (o, wall)))
}

/// Per part: nodes, events, events per second of its busy time, the share
/// of its time spent waiting on the window, and its process's peak memory
/// (benchmark mode of a run in several parts).
fn print_parts(out: &RunOutput) {
    for p in &out.parts {
        let total = (p.busy_s + p.wait_s).max(1e-9);
        let rss = p
            .peak_rss_bytes
            .map_or("-".to_string(), |b| format!("{:.1} MB", b as f64 / 1e6));
        println!(
            "part {:>3}: {} nodes, {:.2} M events, {:.2} M events/s busy, {:.0}% waiting, {} windows, {:.1} MB sent, peak RSS {rss}",
            p.rank,
            p.nodes,
            p.events as f64 / 1e6,
            p.events as f64 / p.busy_s.max(1e-9) / 1e6,
            100.0 * p.wait_s / total,
            p.windows,
            p.mail_bytes as f64 / 1e6,
        );
    }
}

fn print_summary(t: Run, out: &RunOutput, wall: f64, gbps: f64) {
    let s = &out.summary;
    let f = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.1}"));
    println!("== {} ==", t.name().to_uppercase());
    println!("flows completed     {} / {}", s.flows_completed, s.flows);
    println!(
        "FCT p50/p99/max     {} / {} / {} us",
        f(s.fct_p50_us),
        f(s.fct_p99_us),
        f(s.fct_max_us)
    );
    println!("mean goodput        {} % of {gbps} Gb/s", f(s.mean_goodput_pct));
    println!(
        "drops               {} (overflow {}, link down {}, loss {}, blackhole {}, no route {})",
        s.drops, s.drop_overflow, s.drop_link_down, s.drop_loss, s.drop_blackhole, s.drop_no_route
    );
    println!(
        "trims / ECN marks   {} ({} at the last hop) / {}",
        s.trims, s.trims_last_hop, s.ecn_marks
    );
    println!("retransmissions     {} ({} timeouts)", s.retransmissions, s.timeouts);
    if s.port_status_updates > 0 {
        println!(
            "port status updates {} ({} QPs changed EVs on one)",
            s.port_status_updates, s.port_status_applied
        );
    }
    if s.pfc_pauses > 0 {
        println!("PFC pauses          {}", s.pfc_pauses);
    }
    println!("EV state changes    {} to ASSUMED_BAD", s.ev_marked_bad);
    if s.ev_promoted > 0 {
        println!("backup EVs promoted {}", s.ev_promoted);
    }
    if s.reverse_evictions > 0 {
        println!(
            "reverse EV sets emptied {} (a probe or a duplicate)",
            s.reverse_evictions
        );
    }
    if let Some(first) = out.ev_marks.iter().map(|m| m.at_ps).min() {
        println!("first EV marked bad {:.1} us", first as f64 / 1e6);
    }
    println!("QP errors           {}", s.qp_errors);
    println!(
        "events              {:.2} M in {:.2} s wall ({:.2} M events/s), {:.1} us simulated",
        s.events as f64 / 1e6,
        wall,
        s.events as f64 / 1e6 / wall.max(1e-9),
        s.sim_time_us
    );
    println!(
        "conservation        {}",
        if s.conservation.balanced() {
            "balanced"
        } else {
            "UNBALANCED"
        }
    );
}

fn write_outputs(
    dir: &Path,
    results: &[(Run, RunOutput)],
    markers: &[(f64, String)],
) -> Result<Vec<PathBuf>, SimCliError> {
    let err = |path: &Path, e: &dyn std::fmt::Display| SimCliError::Output {
        path: path.to_path_buf(),
        msg: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(|e| err(dir, &e))?;
    let mut written = Vec::new();
    for (t, out) in results {
        let csv = dir.join(format!("flows-{}.csv", t.name()));
        write_flows_csv(&csv, &out.flows).map_err(|e| err(&csv, &e))?;
        let json = dir.join(format!("summary-{}.json", t.name()));
        write_summary_json(&json, &out.summary).map_err(|e| err(&json, &e))?;
        written.extend([csv, json]);
        let bin_ps = out.series.bin_ps;
        let mut series = vec![
            ("goodput", results::goodput_csv(&out.series)),
            ("ev-events", results::ev_events_csv(&out.ev_marks, &out.ev_promotions)),
        ];
        if !out.queue_series.is_empty() {
            series.push(("queues", results::queues_csv(&out.queue_series, bin_ps)));
        }
        if !out.flow_series.is_empty() {
            series.push(("flow-goodput", results::flow_goodput_csv(&out.flow_series, bin_ps)));
        }
        for (stem, text) in series {
            let path = dir.join(format!("{stem}-{}.csv", t.name()));
            std::fs::write(&path, text).map_err(|e| err(&path, &e))?;
            written.push(path);
        }
    }
    let cdf: Vec<(String, Vec<f64>)> = results
        .iter()
        .map(|(t, o)| {
            (
                t.name().to_uppercase(),
                // An unfinished flow is +inf: the curve stops at the
                // completed share instead of reaching 1.
                o.flows
                    .iter()
                    .map(|f| f.fct_ps.map_or(f64::INFINITY, |p| p as f64 / 1e6))
                    .collect(),
            )
        })
        .collect();
    let stem = dir.join("fct_cdf");
    match plot::fct_cdf(&stem, "Flow completion time", &cdf, false) {
        Ok(paths) => written.extend(paths),
        Err(plot::PlotError::NoData) => {}
        Err(e) => return Err(err(&stem, &e)),
    }
    let series: Vec<Series> = results
        .iter()
        .map(|(t, o)| Series {
            label: t.name().to_uppercase(),
            points: (0..o.series.bytes.len())
                .map(|i| ((i as f64 + 0.5) * o.series.bin_ps as f64 / 1e6, o.series.gbps(i)))
                .collect(),
        })
        .collect();
    let stem = dir.join("goodput");
    match plot::goodput_timeline(&stem, "Fabric goodput over time", &series, markers) {
        Ok(paths) => written.extend(paths),
        Err(plot::PlotError::NoData) => {}
        Err(e) => return Err(err(&stem, &e)),
    }
    Ok(written)
}

/// Create `dir` and check that a file can be written in it, so that a bad
/// `--out` is refused before the run rather than after it.
fn check_writable(dir: &Path) -> Result<(), SimCliError> {
    let err = |e: std::io::Error| SimCliError::Output {
        path: dir.to_path_buf(),
        msg: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(err)?;
    let probe = dir.join(".mrc-write-check");
    std::fs::write(&probe, b"").map_err(err)?;
    std::fs::remove_file(&probe).map_err(err)
}

/// Why a run counts as failed (exit 1): unfinished flows and QP errors.
fn failure_reason(t: Run, out: &RunOutput, time_limit: Duration) -> Option<String> {
    let s = &out.summary;
    (s.flows_completed != s.flows || s.qp_errors != 0).then(|| {
        format!(
            "{}: {} of {} flows did not complete within the {:.1} us time limit; {} QP errors",
            t.name().to_uppercase(),
            s.flows - s.flows_completed,
            s.flows,
            time_limit.as_ps() as f64 / 1e6,
            s.qp_errors
        )
    })
}

/// The run's settings as `--json` records them (times in us, sizes in
/// bytes, as the summary).
fn settings_json(a: &SimArgs, topo: &Topology, n_flows: usize) -> serde_json::Value {
    let value_name = |v: &dyn Fn() -> Option<clap::builder::PossibleValue>| v().map(|p| p.get_name().to_string());
    let us = |d: Duration| d.as_ps() as f64 / 1e6;
    serde_json::json!({
        "topology": topo.description,
        "topo_file": a.topo.as_ref().map(|p| p.display().to_string()),
        "hosts": topo.n_hosts,
        "planes": a.planes,
        "radix": a.radix,
        "tm_file": a.tm.as_ref().map(|p| p.display().to_string()),
        "traffic": if a.tm.is_some() { None } else { value_name(&|| a.traffic.to_possible_value()) },
        "size_bytes": if a.tm.is_some() { None } else { Some(a.size) },
        "incast_senders": a.incast_senders,
        "flows": n_flows,
        "transport": value_name(&|| a.transport.to_possible_value()),
        "evs": a.evs,
        "backup_evs": a.backup_evs,
        "reverse_evs_per_plane": a.reverse_evs,
        "receiver_penalty": a.receiver_penalty,
        "port_status": !a.no_port_status,
        "ecmp": value_name(&|| a.ecmp.to_possible_value()),
        "weighted_spray": a.weighted_spray,
        "mtu_bytes": a.mtu,
        "buffer_bytes": a.buffer,
        "ecn": a.ecn,
        "trim": !a.no_trim,
        "pfc_xoff_bytes": a.pfc_xoff,
        "pfc_xon_bytes": a.pfc_xon,
        "pfc_timeout_exp": a.pfc_timeout_exp,
        "ecn_last_hop": value_name(&|| a.ecn_last_hop.to_possible_value()),
        "loss": a.loss,
        "faults": a.faults,
        "reroute_after_us": a.reroute_after.map(us),
        "timeout_exp": a.timeout_exp,
        "retry_exp": a.retry_exp,
        "seed": a.seed,
        "time_limit_us": us(a.time_limit),
        "series_bin_us": us(a.series_bin),
    })
}

/// The runs `--transport` asks for, in order.
fn transports(a: &SimArgs) -> &'static [Run] {
    match a.transport {
        SimTransport::Mrc => &[Run::Mrc],
        SimTransport::Rc => &[Run::Rc],
        SimTransport::RocePfc => &[Run::RocePfc],
        SimTransport::Both => &[Run::Mrc, Run::Rc],
        SimTransport::All => &[Run::Mrc, Run::Rc, Run::RocePfc],
    }
}

/// Run `mrc sim`; returns whether every flow completed without QP error.
pub fn run_cli(a: &SimArgs, ranks: &mut Option<Ranks>) -> Result<bool, SimCliError> {
    if let Some(r) = ranks.as_ref() {
        if a.parts > 1 {
            return usage(format!(
                "--parts {} under {} MPI ranks: the ranks are the parts (leave --parts at 1)",
                a.parts,
                r.ex.ranks()
            ));
        }
    }
    // What each rank sets up on its own (rank 0 alone checks --out; each
    // reads its files): every rank must learn of a failure on any, or
    // the others would wait for it in the run's first collective.
    let setup = (|| {
        if let Some(dir) = a.out.as_ref().filter(|_| !silent(ranks)) {
            check_writable(dir)?;
        }
        let topo = topology(a)?;
        let (flows, triggers) = flows(a, &topo)?;
        if flows.is_empty() {
            return usage("no flows");
        }
        Ok((topo, flows, triggers))
    })();
    let (topo, flows, triggers) = agree(ranks, setup)?;
    // A host's NIC: all its ports (one per plane).
    let gbps: f64 = topo.nodes.first().map_or(0.0, |n| n.ports.iter().map(|p| p.gbps).sum());
    let parts = ranks.as_ref().map_or(a.parts, |r| r.ex.ranks());
    if silent(ranks) {
        // The same runs as rank 0, in the same order (collectives); rank 0
        // reports them.
        for t in transports(a) {
            run_one(a, &topo, &flows, &triggers, *t, ranks)?;
        }
        return Ok(true);
    }
    if !a.json {
        let cut = match (ranks.is_some(), parts) {
            (_, 1) => String::new(),
            (true, n) => format!("; {n} parts (MPI ranks)"),
            (false, n) => format!("; {n} parts (threads)"),
        };
        println!("{}; {} flows{cut}", topo.description, flows.len());
    }
    let transports = transports(a);
    let mut results = Vec::new();
    let mut runs_json = Vec::new();
    let mut all_ok = true;
    for &t in transports {
        let (out, wall) = run_one(a, &topo, &flows, &triggers, t, ranks)?.expect("rank 0 has the output");
        let failure = failure_reason(t, &out, a.time_limit);
        all_ok &= failure.is_none();
        // Ring AllReduce is judged against its ideal 2(N-1)/N x S/B.
        let ring = (a.tm.is_none() && a.traffic == TrafficKind::Ring).then(|| {
            let ideal = traffic::ring_allreduce_ideal(topo.n_hosts, a.size, gbps).as_ps() as f64 / 1e6;
            let took = out.summary.last_completion_us;
            (took, ideal)
        });
        if a.json {
            let ring = ring.map(|(took, ideal)| serde_json::json!({ "completion_us": took, "ideal_us": ideal }));
            runs_json.push(serde_json::json!({
                "transport": t.name(),
                "summary": out.summary,
                "ring_allreduce": ring,
                "wall_s": wall,
            }));
        } else {
            print_summary(t, &out, wall, gbps);
            if a.bench && parts > 1 {
                print_parts(&out);
            }
            if let Some((took, ideal)) = ring {
                match took {
                    Some(took) => println!(
                        "ring AllReduce      {took:.1} us, ideal 2(N-1)/N x S/B = {ideal:.1} us ({:.2}x)",
                        took / ideal
                    ),
                    None => println!("ring AllReduce      did not complete (ideal {ideal:.1} us)"),
                }
            }
        }
        if let Some(why) = failure {
            eprintln!("mrc sim: {why}");
        }
        results.push((t, out));
    }
    if a.json {
        // One document whatever the transports: the run's settings, then
        // one entry per transport.
        let mut doc = serde_json::json!({ "settings": settings_json(a, &topo, flows.len()), "runs": runs_json });
        if a.bench {
            doc["peak_rss_bytes"] = serde_json::json!(sim::fabric::run::peak_rss_bytes());
        }
        println!("{doc}");
    }
    if a.bench {
        if !a.json {
            let rss =
                sim::fabric::run::peak_rss_bytes().map_or("-".to_string(), |b| format!("{:.1} MB", b as f64 / 1e6));
            println!("bench: peak RSS {rss} (whole process, including the topology and every run above)");
        }
        return Ok(all_ok);
    }
    if let Some(dir) = &a.out {
        // Label each fault as the user wrote it: "down agg0.up0" (one
        // marker for a fault of a whole switch or plane).
        let mut markers: Vec<(f64, String)> = Vec::new();
        for text in &a.faults {
            let faults = parse_fault(&topo, text, a.time_limit)?;
            if let Some(f) = faults.first() {
                let kind = text.split('@').next().unwrap_or(text);
                let link = text.rsplit(':').next().unwrap_or("");
                markers.push((f.at.as_ps() as f64 / 1e6, format!("{kind} {link}")));
            }
        }
        let written = write_outputs(dir, &results, &markers)?;
        if !a.json {
            for p in written {
                println!("wrote {}", p.display());
            }
        }
    }
    Ok(all_ok)
}
