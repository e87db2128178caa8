//! The engine: hosts whose NICs drive golden-model QPs, switches, links,
//! faults, flows; `run` and `bench`.

use std::collections::VecDeque;

use bytes::Bytes;
use proto::model::cc::{CcConfig, DcqcnConfig, NsccConfig};
use proto::model::endpoint::{Endpoint, EndpointConfig};
use proto::model::ev::{BackupEv, EvChangeReason, EvSetConfig, EvState, SprayPolicy, MAX_EVS};
use proto::model::reverse_ev::ReverseEvConfig;
use proto::model::{
    Event as QpEvent, Qp, QpSetup, QpState, QueuePair, Transport, WcStatus, WriteRequest, RETRY_INFINITE,
};
use proto::time::{Duration, Instant};
use proto::wire::mrc10::choices;
use proto::wire::{Encap, Packet};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::event::{DefaultQueue, Event, EventList, TIE_SEQ_BITS};
use super::fault::{self, Action, Fault};
use super::mail;
use super::net::{self, at, mix64, ser_ps, DropReason, EcmpMode, PortStats, Ports, Slab, Slot, SwitchConfig, NO_PORT};
use super::partition::{Exchange, PartFailed, Partition, Solo, ThreadGroup};
use super::results::{
    fct_percentiles, Conservation, EvMark, FlowRecord, GoodputSeries, PartReport, QueueSample, RunOutput, Summary,
};
use super::topo::Topology;
use super::traffic::{FlowSpec, TriggerKind, TriggerSpec};

/// Everything about a run except the topology and the flows.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SimConfig {
    pub transport: Transport,
    /// EVs per flow (MRC); RC always uses 1.
    pub n_evs: usize,
    /// Backup EVs per flow (MRC): each replaces an EV of its port (plane)
    /// that leaves GOOD (`EvSetConfig::backup_evs`). `n_evs` plus these at
    /// most `MAX_EVS`.
    #[serde(default)]
    pub backup_evs: usize,
    /// Reverse EVs per plane of each MRC responder (`QpConfig::reverse_evs`;
    /// 0 = acknowledgements echo the EV of the packet they answer).
    #[serde(default)]
    pub reverse_evs_per_plane: u8,
    /// MRC: each receiving host sets the cwnd penalty of its responders'
    /// SACKs from the number of flows delivering data to it at once
    /// (`choices::cwnd_penalty_for_senders`), the receiver back-pressure
    /// of MRC 1.0's CC_STATE. Off: penalty 0.
    #[serde(default)]
    pub receiver_penalty: bool,
    /// MRC: a NIC whose port's link goes down denies the EVs of its QPs
    /// that leave on that port, lifts the denial when the link comes
    /// back (`deny_port_evs`), and sends a Port Status Update (QPN 0x2)
    /// to each host sending to it, whose QPs towards it do the same. Off:
    /// the EVs are lost to the dead link until marked ASSUMED_BAD, as on
    /// any path.
    #[serde(default = "port_status_default")]
    pub port_status: bool,
    /// Payload bytes per packet.
    pub mtu: u32,
    /// Seeds EV values, QP seeds, ECMP salts, ECN and loss draws.
    pub seed: u64,
    pub switch: SwitchConfig,
    /// How EVs map to paths.
    pub ecmp: EcmpMode,
    pub faults: Vec<Fault>,
    /// Random loss on every link, both directions (a fraction of the
    /// packets each link carries; `Loss` faults and `Restore` set and reset
    /// single links on top of it).
    #[serde(default)]
    pub loss: f64,
    /// The triggers flows start on and activate (htsim `.cm` triggers;
    /// `FlowSpec::trigger` and friends index this table).
    #[serde(default)]
    pub triggers: Vec<TriggerSpec>,
    /// After a link goes down, routing excludes it after this delay
    /// (`None`: routing never reconverges; packets hashed onto the dead
    /// link are lost until it comes back).
    pub reroute_after: Option<Duration>,
    /// ACK timeout exponent: RTO = 1.024 us x 2^t.
    pub ack_timeout_exp: u8,
    pub retry_linear: u8,
    /// 25 = infinite.
    pub retry_exp: u8,
    /// Receive/send window in units of 128 PSNs.
    pub mpr_units: u8,
    /// NSCC (MRC): window ceiling in bandwidth-delay products of the
    /// flow's unloaded RTT (`NsccConfig::for_fabric` uses 1.5).
    pub nscc_max_cwnd_bdp: f64,
    /// NSCC (MRC): initial window in BDPs (`for_fabric` uses 1; the
    /// default 1.5 starts at the ceiling, at line rate even with some
    /// queueing, as UEC's NSCC does).
    pub nscc_init_cwnd_bdp: f64,
    /// Override congestion control with a fixed window of this many bytes.
    pub fixed_window: Option<u64>,
    pub ack_every: u16,
    pub ack_delay: Duration,
    /// Minimum GOOD EVs kept by the ASSUMED_BAD guard.
    pub min_active_evs: u16,
    /// How long an ASSUMED_BAD EV waits before it is probed again.
    pub probe_interval: Duration,
    /// How the requester spreads packets over its GOOD EVs.
    pub spray: SprayPolicy,
    /// Bytes added to every frame's length on the wire (preamble, FCS,
    /// inter-frame gap...): 0 = the frame as `proto::wire::frame_len` says.
    pub wire_extra_bytes: u32,
    /// Stop at this simulated time even if flows are unfinished.
    pub time_limit: Duration,
    /// Width of a goodput time-series bin.
    pub series_bin: Duration,
    /// Record each switch port's deepest data queue per series bin
    /// (`RunOutput::queue_series`; memory grows with the ports busy per
    /// bin).
    #[serde(default)]
    pub queue_series: bool,
    /// Record the delivered payload per series bin of the first this-many
    /// flows (`RunOutput::flow_series`).
    #[serde(default)]
    pub flow_series: u32,
    /// Call the progress callback every this many events.
    pub progress_every: u64,
}

fn port_status_default() -> bool {
    true
}

impl SimConfig {
    /// Defaults for `transport`: 128 EVs (MRC), 4 KiB MTU, MPR 2 x 128
    /// PSNs, RTO 1.024 us x 2^7 (131 us), 7 linear + infinite exponential
    /// retries.
    pub fn new(transport: Transport) -> SimConfig {
        SimConfig {
            transport,
            n_evs: 128,
            backup_evs: 0,
            reverse_evs_per_plane: 0,
            receiver_penalty: false,
            port_status: true,
            mtu: 4096,
            seed: 1,
            // MRC 1.0 deployments keep ECN off at the last hop; DCQCN
            // (RC) needs the marks at the incast port.
            switch: SwitchConfig {
                ecn_last_hop: transport != Transport::Mrc,
                ..SwitchConfig::default()
            },
            ecmp: EcmpMode::Hash,
            faults: Vec::new(),
            loss: 0.0,
            triggers: Vec::new(),
            reroute_after: None,
            ack_timeout_exp: 7,
            retry_linear: 7,
            retry_exp: RETRY_INFINITE,
            mpr_units: 2,
            fixed_window: None,
            nscc_max_cwnd_bdp: 1.5,
            nscc_init_cwnd_bdp: 1.5,
            ack_every: 4,
            ack_delay: Duration::from_us(2),
            min_active_evs: 4,
            probe_interval: Duration::from_us(100),
            spray: SprayPolicy::RoundRobin,
            wire_extra_bytes: 0,
            time_limit: Duration::from_ms(1000),
            series_bin: Duration::from_us(10),
            queue_series: false,
            flow_series: 0,
            progress_every: 1 << 20,
        }
    }
    pub fn mrc() -> SimConfig {
        SimConfig::new(Transport::Mrc)
    }
    pub fn rc() -> SimConfig {
        SimConfig::new(Transport::Rc)
    }
}

/// Where a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Progress {
    pub now: Instant,
    pub flows_done: usize,
    pub flows_total: usize,
    pub events: u64,
}

/// A run could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("flow {index}: {msg}")]
    Flow { index: usize, msg: String },
    #[error("fault {index}: {msg}")]
    Fault { index: usize, msg: String },
    #[error("QP setup: {0}")]
    Qp(String),
    #[error("loss rate {0} not in [0, 1)")]
    Loss(f64),
    /// A setting outside what the simulator can run (PFC thresholds, the
    /// reverse EV set's size, the series bins).
    #[error("invalid setting: {0}")]
    Setting(String),
    /// A run cut into parts cannot have this (`partition`).
    #[error("partitioned run: {0}")]
    Partition(String),
}

/// Most bins a time series may have (`time_limit / series_bin`).
pub const MAX_SERIES_BINS: u64 = 10_000_000;

/// Remote VA of every flow's sink region.
const SINK_VA: u64 = 0x1_0000_0000;
const SINK_RKEY: u32 = 0x5151;
const NO_TIMER: u64 = u64::MAX;
/// QP index `i` (requester of flow f: 2f, responder: 2f + 1) has QP
/// number `QPN_BASE + i`: numbers below are reserved (0x2 is MRC 1.0's
/// endpoint, `choices::ENDPOINT_QPN`; 0x0 and 0x1 are InfiniBand's).
const QPN_BASE: u32 = 0x10;

struct QpEntry {
    qp: Qp,
    host: u32,
    peer_host: u32,
    flow: u32,
    is_req: bool,
    /// Time of the pending timer event (NO_TIMER if none).
    timer_at: u64,
    gen: u32,
    in_ring: bool,
}

struct HostState {
    /// Requester QPs that may have something to send, served round robin.
    ring: VecDeque<u32>,
    /// Responder QPs that may have something to send (acknowledgements
    /// only: MRC 1.0's CONTROL class), served round robin before `ring`.
    ctl: VecDeque<u32>,
    /// Global index of port 0.
    port0: u32,
    nports: u32,
    /// Packets waiting in this host's port queues (not being serialised).
    queued: u32,
    /// Flows that delivered data to this host and have not finished
    /// (`SimConfig::receiver_penalty`).
    rx_active: u32,
}

/// A host's endpoint on QPN 0x2 and where its queued packets go (the
/// endpoint's packets name no host: requests and answers leave in the
/// order they were queued, answers first).
struct HostEndpoint {
    ep: Endpoint,
    /// Destinations of the queued answers, in order.
    answer_to: VecDeque<u32>,
    /// Destinations of the queued requests, in order.
    request_to: VecDeque<u32>,
}

/// How often a trigger was activated (its kind decides what that starts).
#[derive(Clone, Copy, Debug, Default)]
struct TriggerState {
    activations: u32,
}

#[derive(Default, Clone)]
struct FlowState {
    started: Option<Instant>,
    end: Option<Instant>,
    recv_end: Option<Instant>,
    error: bool,
    done: bool,
    /// Counted in its destination's `rx_active`.
    rx_active: bool,
    ev_bad: u64,
    evs: Vec<u32>,
    /// The requester's counters, kept when its QPs are freed.
    counters: Option<proto::model::Counters>,
}

/// Reachability over non-excluded links, per (node, destination
/// representative), while some link is excluded by rerouting.
struct Reach {
    rep_of: Vec<u32>,
    reps: Vec<u32>,
    n_reps: usize,
    ok: Vec<bool>,
}

struct Sim<'a, Q: EventList> {
    topo: &'a Topology,
    cfg: &'a SimConfig,
    specs: &'a [FlowSpec],
    /// The nodes this run simulates (all of them unless the run is cut
    /// into parts).
    part: &'a Partition,
    q: Q,
    /// The node whose work is under way: events it schedules carry its
    /// number and its count in their tie key ([`TIE_SEQ_BITS`]).
    gen: u32,
    /// Events scheduled so far, per node.
    gen_seq: Vec<u64>,
    /// Encoded events for other parts, per part (`mail`).
    outbox: Vec<Vec<u8>>,
    /// A finished flow's responder is freed this long after its requester:
    /// the longest link delay of the fabric, so that the news never needs
    /// to travel faster than a packet between parts.
    free_delay_ps: u64,
    /// What this part did (`PartReport`), filled in by `run`.
    report: PartReport,
    now: Instant,
    ports: Ports,
    slab: Slab,
    hosts: Vec<HostState>,
    qps: Vec<Option<QpEntry>>,
    flows: Vec<FlowState>,
    dependents: Vec<Vec<u32>>,
    /// Per trigger: the flows it starts, in file order, and its state.
    trig_targets: Vec<Vec<u32>>,
    trig_state: Vec<TriggerState>,
    actions: Vec<(Instant, fault::LinkRef, Action)>,
    zero: Bytes,
    encap: Encap,
    cons: Conservation,
    no_route: u64,
    reroute: Option<Reach>,
    flows_done: usize,
    /// Flows whose QPs are freed after the current event.
    to_free: Vec<u32>,
    /// Packets that arrived for a QP already freed (late duplicates).
    stale_packets: u64,
    events: u64,
    ev_marked_bad: u64,
    ev_promoted: u64,
    /// Reverse EV sets emptied, summed over freed responders.
    reverse_evictions: u64,
    qp_errors: u64,
    series: Vec<u64>,
    /// Each host's QPN 0x2 endpoint, created when it first sends or
    /// receives a Port Status Update (`SimConfig::port_status`).
    endpoints: Vec<Option<Box<HostEndpoint>>>,
    /// Port Status Updates sent, and requester QPs that denied or allowed
    /// EVs on one.
    status_updates: u64,
    status_applied: u64,
    queue_series: Vec<QueueSample>,
    flow_series: Vec<Vec<u64>>,
    ev_marks: Vec<EvMark>,
    ev_promotions: Vec<EvMark>,
    /// The tie key of the event under way.
    tie: u64,
    /// Time and tie of the last event that finished a flow here.
    last_done: (u64, u64),
    /// A run in parts: the payload the series counted in the current
    /// window (time, tie, bin, flow or `u32::MAX`, bytes), taken back at
    /// the end for what came after the event that finished the last flow
    /// (where the run in one part stops).
    window_series: Vec<(u64, u64, u32, u32, u64)>,
}

/// Run `flows` over `topo` with `cfg`. `progress`, if given, is called
/// every `cfg.progress_every` events and once at the end.
pub fn run(
    topo: &Topology,
    cfg: &SimConfig,
    flows: &[FlowSpec],
    progress: Option<&mut dyn FnMut(Progress)>,
) -> Result<RunOutput, SimError> {
    run_with::<DefaultQueue>(topo, cfg, flows, progress)
}

/// [`run`] with a chosen event queue implementation.
pub fn run_with<Q: EventList + Default>(
    topo: &Topology,
    cfg: &SimConfig,
    flows: &[FlowSpec],
    progress: Option<&mut dyn FnMut(Progress)>,
) -> Result<RunOutput, SimError> {
    let part = Partition::single(topo);
    let mut sim = Sim::<Q>::new(topo, cfg, flows, &part)?;
    sim.run(&mut Solo, progress);
    Ok(sim.finish())
}

/// One part of a run cut into `ex.ranks()` parts ([`Partition::by_pods`]),
/// this one `ex.rank()`; every part calls it with the same arguments. Part
/// 0 returns the whole run's output, merged from every part's, the others
/// `None`. Flow by flow it is the output [`run`] gives (a test holds every
/// partitioned run to that); of the summary, what happened after the last
/// flow finished (events, `sim_time_us`, packets in flight, ports' counts)
/// can differ, since each part runs to the end of the window in which the
/// last flow finished. `progress` is called on part 0 only.
pub fn run_part(
    topo: &Topology,
    cfg: &SimConfig,
    flows: &[FlowSpec],
    ex: &mut dyn Exchange,
    progress: Option<&mut dyn FnMut(Progress)>,
) -> Result<Option<RunOutput>, SimError> {
    let part = Partition::by_pods(topo, ex.ranks(), ex.rank());
    let mut sim = Sim::<DefaultQueue>::new(topo, cfg, flows, &part)?;
    let progress = if ex.rank() == 0 { progress } else { None };
    sim.run(ex, progress);
    let mine = sim.finish();
    if ex.ranks() == 1 {
        return Ok(Some(mine));
    }
    let bytes = serde_json::to_vec(&PartOutput::from(mine)).expect("a run's output serialises");
    let Some(all) = ex.gather(bytes) else {
        return Ok(None);
    };
    let parts = all
        .iter()
        .map(|b| serde_json::from_slice::<PartOutput>(b).expect("a part's output reads back"))
        .collect();
    Ok(Some(merge_parts(topo, &part, flows, parts)))
}

/// A run cut into `parts` parts, each a thread of this process
/// ([`ThreadGroup`]): the same outputs as [`run_part`] over MPI ranks.
/// Part 0 runs on the calling thread (and reports `progress`).
pub fn run_threads(
    topo: &Topology,
    cfg: &SimConfig,
    flows: &[FlowSpec],
    parts: u32,
    progress: Option<&mut dyn FnMut(Progress)>,
) -> Result<RunOutput, SimError> {
    let mut members = ThreadGroup::new(parts).into_iter();
    let mut first = members.next().expect("at least one part");
    std::thread::scope(|s| {
        // A part whose thread panics abandons the group (its member is
        // dropped unwinding): the others stop waiting for it.
        let others: Vec<_> = members
            .map(|mut m| s.spawn(move || run_part(topo, cfg, flows, &mut m, None)))
            .collect();
        let mine = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_part(topo, cfg, flows, &mut first, progress)
        }));
        if mine.is_err() {
            first.abandon();
        }
        // Report the panic that started it, not the others' PartFailed.
        let mut panic: Option<Box<dyn std::any::Any + Send>> = None;
        let mut keep = |p: Box<dyn std::any::Any + Send>| {
            if panic.as_ref().is_none_or(|q| q.is::<PartFailed>()) {
                panic = Some(p);
            }
        };
        let mine = mine.unwrap_or_else(|p| {
            keep(p);
            Ok(None)
        });
        let mut theirs = Ok(None);
        for h in others {
            // The others return nothing but errors (the same as part 0's).
            match h.join() {
                Ok(r) => theirs = theirs.and(r),
                Err(p) => keep(p),
            }
        }
        if let Some(p) = panic {
            std::panic::resume_unwind(p);
        }
        theirs?;
        Ok(mine?.expect("part 0 returns the output"))
    })
}

/// Peak resident set size of this process in bytes (Linux `VmHWM`), for
/// benchmark reports; `None` where /proc is not available.
pub fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// What [`bench`] measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchResult {
    pub events: u64,
    pub wall_s: f64,
    pub events_per_s: f64,
    pub summary: Summary,
}

/// Run a scenario and time it (wall clock: for benchmarks only, never in
/// the run's outputs).
pub fn bench(topo: &Topology, cfg: &SimConfig, flows: &[FlowSpec]) -> Result<BenchResult, SimError> {
    bench_with::<DefaultQueue>(topo, cfg, flows)
}

/// [`bench`] with a chosen event queue.
pub fn bench_with<Q: EventList + Default>(
    topo: &Topology,
    cfg: &SimConfig,
    flows: &[FlowSpec],
) -> Result<BenchResult, SimError> {
    let t0 = std::time::Instant::now();
    let out = run_with::<Q>(topo, cfg, flows, None)?;
    let wall_s = t0.elapsed().as_secs_f64();
    let events = out.summary.events;
    Ok(BenchResult {
        events,
        wall_s,
        events_per_s: events as f64 / wall_s.max(1e-9),
        summary: out.summary,
    })
}

/// Header bytes of a data packet on the wire for `mtu` payload (estimate
/// used for base-RTT figures given to congestion control).
fn header_estimate() -> u32 {
    90
}

impl<'a, Q: EventList + Default> Sim<'a, Q> {
    fn new(
        topo: &'a Topology,
        cfg: &'a SimConfig,
        specs: &'a [FlowSpec],
        part: &'a Partition,
    ) -> Result<Self, SimError> {
        let n_hosts = topo.n_hosts;
        // Tie keys name a node in the bits above TIE_SEQ_BITS (and the
        // initial schedule one past the last node).
        if topo.nodes.len() as u64 >= (1 << (64 - TIE_SEQ_BITS)) - 1 {
            return Err(SimError::Setting(format!(
                "{} nodes: at most 2^{} - 2",
                topo.nodes.len(),
                64 - TIE_SEQ_BITS
            )));
        }
        if part.ranks > 1 {
            check_partitioned(cfg, specs, part)?;
        }
        let mut dependents = vec![Vec::new(); specs.len()];
        let mut trig_targets = vec![Vec::new(); cfg.triggers.len()];
        let mut max_size = 0u64;
        for (i, f) in specs.iter().enumerate() {
            let bad = |msg: String| Err(SimError::Flow { index: i, msg });
            if f.src >= n_hosts || f.dst >= n_hosts {
                return bad(format!("host out of range ({} hosts)", n_hosts));
            }
            if f.src == f.dst {
                return bad("source equals destination".into());
            }
            if f.size == 0 || f.size > proto::model::MAX_MESSAGE_LEN {
                return bad(format!("size {} out of range", f.size));
            }
            if let Some(a) = f.after {
                if a as usize >= specs.len() || a as usize == i {
                    return bad(format!("after {a} is not another flow"));
                }
                dependents[a as usize].push(i as u32);
            }
            for t in [f.trigger, f.send_done_trigger, f.recv_done_trigger]
                .into_iter()
                .flatten()
            {
                if t as usize >= cfg.triggers.len() {
                    return bad(format!(
                        "trigger {t} not in the table ({} triggers)",
                        cfg.triggers.len()
                    ));
                }
            }
            if f.recv_done_trigger.is_some() && !f.imm {
                return bad("recv_done_trigger needs a WRITE-with-immediate (imm)".into());
            }
            if let Some(t) = f.trigger {
                trig_targets[t as usize].push(i as u32);
            }
            max_size = max_size.max(f.size);
        }
        for (i, f) in cfg.faults.iter().enumerate() {
            let ok = topo
                .nodes
                .get(f.link.node as usize)
                .is_some_and(|n| (f.link.port as usize) < n.ports.len());
            if !ok {
                return Err(SimError::Fault {
                    index: i,
                    msg: format!("no port {} on node {}", f.link.port, f.link.node),
                });
            }
        }
        if !(cfg.loss.is_finite() && (0.0..1.0).contains(&cfg.loss)) {
            return Err(SimError::Loss(cfg.loss));
        }
        let bad = |msg: String| Err(SimError::Setting(msg));
        if let Some(p) = cfg.switch.pfc {
            if p.xoff_bytes == 0 || p.xon_bytes > p.xoff_bytes {
                return bad(format!(
                    "PFC XON {} must not exceed XOFF {}, which must be positive",
                    p.xon_bytes, p.xoff_bytes
                ));
            }
        }
        let reverse = ReverseEvConfig {
            per_plane: cfg.reverse_evs_per_plane,
            planes: topo.planes,
        };
        if let Err(why) = reverse.check() {
            return bad(format!("reverse EV set: {why}"));
        }
        let bins = cfg.time_limit.as_ps() / cfg.series_bin.as_ps().max(1);
        if cfg.series_bin == Duration::ZERO || bins > MAX_SERIES_BINS {
            return bad(format!(
                "series bin {} ps: the time limit needs {bins} bins, at most {MAX_SERIES_BINS}",
                cfg.series_bin.as_ps()
            ));
        }
        let mut ports = Ports::new(topo, cfg.seed);
        for p in &mut ports.ports {
            p.loss = cfg.loss;
        }
        let hosts = (0..n_hosts)
            .map(|h| HostState {
                ring: VecDeque::new(),
                ctl: VecDeque::new(),
                port0: ports.base[h as usize],
                nports: topo.nodes[h as usize].ports.len() as u32,
                queued: 0,
                rx_active: 0,
            })
            .collect();
        let mut qps = Vec::with_capacity(specs.len() * 2);
        qps.resize_with(specs.len() * 2, || None);
        // The initial events are scheduled by no node: their ties are the
        // generator past the last node and their index, in every part.
        let init_gen = topo.nodes.len() as u64;
        let init_tie = |i: usize| tie_key(init_gen as u32, i as u64 + 1);
        let mut q = Q::default();
        for (i, f) in specs.iter().enumerate() {
            if f.after.is_none() && f.trigger.is_none() {
                if part.owns(f.src) {
                    q.push(f.start, init_tie(i), Event::FlowStart(i as u32));
                } else if part.owns(f.dst) {
                    q.push(f.start, init_tie(i), Event::ResponderStart(i as u32));
                }
            }
        }
        // Every part applies every fault (links' states steer every node's
        // routing); each acts for its own hosts.
        let actions = fault::expand(&cfg.faults, cfg.reroute_after);
        for (i, a) in actions.iter().enumerate() {
            q.push(a.0, init_tie(specs.len() + i), Event::Fault(i as u32));
        }
        let free_delay_ps = ports.ports.iter().map(|p| p.delay_ps).max().unwrap_or(0);
        Ok(Sim {
            topo,
            cfg,
            specs,
            part,
            q,
            gen: init_gen as u32,
            gen_seq: vec![0; topo.nodes.len() + 1],
            outbox: vec![Vec::new(); part.ranks as usize],
            free_delay_ps,
            report: PartReport {
                rank: part.rank,
                nodes: part.sizes()[part.rank as usize],
                ..PartReport::default()
            },
            now: Instant::ZERO,
            ports,
            slab: Slab::default(),
            hosts,
            qps,
            flows: vec![FlowState::default(); specs.len()],
            dependents,
            trig_state: vec![TriggerState::default(); cfg.triggers.len()],
            trig_targets,
            actions,
            zero: Bytes::from(vec![0u8; max_size as usize]),
            encap: Encap::test_v6(),
            cons: Conservation::default(),
            no_route: 0,
            reroute: None,
            flows_done: 0,
            to_free: Vec::new(),
            stale_packets: 0,
            events: 0,
            ev_marked_bad: 0,
            ev_promoted: 0,
            reverse_evictions: 0,
            qp_errors: 0,
            series: Vec::new(),
            endpoints: Vec::new(),
            status_updates: 0,
            status_applied: 0,
            queue_series: Vec::new(),
            flow_series: vec![Vec::new(); (cfg.flow_series as usize).min(specs.len())],
            ev_marks: Vec::new(),
            ev_promotions: Vec::new(),
            tie: 0,
            last_done: (0, 0),
            window_series: Vec::new(),
        })
    }

    fn run(&mut self, ex: &mut dyn Exchange, mut progress: Option<&mut dyn FnMut(Progress)>) {
        let limit = self.cfg.time_limit.as_ps();
        let every = self.cfg.progress_every.max(1);
        let mut countdown = every;
        let total = self.specs.len();
        let solo = self.part.ranks == 1;
        // Flows finished in every part, as of the last window.
        let mut done_all;
        let started = std::time::Instant::now();
        let mut waited = std::time::Duration::ZERO;
        loop {
            let next = self.q.peek_time().map_or(u64::MAX, |t| t.as_ps());
            let w0 = std::time::Instant::now();
            let (first, done) = ex.reduce(next, self.flows_done as u64);
            waited += w0.elapsed();
            done_all = done as usize;
            // Every flow done, past the time limit, or nothing left to
            // happen anywhere (a limit of u64::MAX ps is never passed).
            if done_all >= total || first > limit || first == u64::MAX {
                break;
            }
            // The window: no event before `end` can be caused by one not
            // already here, since whatever one part does to another
            // crosses a link of at least the lookahead (one window, with
            // one part: the whole run).
            let end = first
                .saturating_add(self.part.lookahead_ps)
                .min(limit.saturating_add(1));
            self.window_series.clear();
            loop {
                // Between parts, the next window's mail may come before
                // the first event past this one: look without popping.
                if !solo && self.q.peek_time().is_none_or(|t| t.as_ps() >= end) {
                    break;
                }
                let Some((t, tie, ev)) = self.q.pop() else { break };
                if t.as_ps() >= end {
                    // One part: past the time limit, the end of the run.
                    self.q.push(t, tie, ev);
                    break;
                }
                self.now = t;
                self.tie = tie;
                self.events += 1;
                self.dispatch(ev);
                if !self.to_free.is_empty() {
                    self.free_finished();
                }
                countdown -= 1;
                if countdown == 0 {
                    countdown = every;
                    if let Some(cb) = progress.as_deref_mut() {
                        cb(Progress {
                            now: self.now,
                            flows_done: if solo { self.flows_done } else { done_all },
                            flows_total: total,
                            events: self.events,
                        });
                    }
                }
                if solo && self.flows_done >= total {
                    break;
                }
            }
            self.report.windows += 1;
            if !solo {
                self.report.mail_bytes += self.outbox.iter().map(|b| b.len() as u64).sum::<u64>();
                let w0 = std::time::Instant::now();
                let got = ex.exchange(&mut self.outbox);
                waited += w0.elapsed();
                for buf in got {
                    self.receive(&buf);
                }
            }
        }
        if !solo && done_all >= total {
            self.take_back_after_last_done(ex);
        }
        self.report.events = self.events;
        self.report.wait_s = waited.as_secs_f64();
        self.report.busy_s = (started.elapsed() - waited).as_secs_f64();
        if let Some(cb) = progress {
            cb(Progress {
                now: self.now,
                flows_done: done_all,
                flows_total: total,
                events: self.events,
            });
        }
    }

    /// A run in parts ends with the window in which the last flow
    /// finished; the run in one part, with the event that finished it.
    /// Take back from the goodput series what this part delivered after
    /// that event (copies of data still in flight), so that the series is
    /// the same in any cut. Collective: every part calls it.
    fn take_back_after_last_done(&mut self, ex: &mut dyn Exchange) {
        let (t, k) = self.last_done;
        let at = u64::MAX - ex.reduce(u64::MAX - t, 0).0;
        let tie = u64::MAX - ex.reduce(if t == at { u64::MAX - k } else { u64::MAX }, 0).0;
        let mut taken = false;
        for &(t, k, bin, f, bytes) in &self.window_series {
            if (t, k) > (at, tie) {
                taken = true;
                self.series[bin as usize] -= bytes;
                if let Some(s) = self.flow_series.get_mut(f as usize) {
                    s[bin as usize] -= bytes;
                }
            }
        }
        if taken {
            // The series end with the last bin that counted something.
            let trim = |v: &mut Vec<u64>| v.truncate(v.iter().rposition(|&b| b > 0).map_or(0, |i| i + 1));
            trim(&mut self.series);
            self.flow_series.iter_mut().for_each(trim);
        }
    }

    /// Do what `ev` says, as the node it happens at.
    #[inline]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::PortDone(p) => {
                self.gen = self.ports.ports[p as usize].node;
                self.port_done(p)
            }
            Event::Arrive { node, pkt } => {
                self.gen = node;
                self.arrive(node, pkt)
            }
            Event::QpTimer { qp, gen } => {
                self.gen = match &self.qps[qp as usize] {
                    Some(e) => e.host,
                    None => self.home(ev),
                };
                self.qp_timer(qp, gen)
            }
            _ => {
                self.gen = self.home(ev);
                match ev {
                    Event::FlowStart(f) | Event::ResponderStart(f) => self.start_flow(f),
                    Event::ResponderFree(f) => self.free_responder(f),
                    Event::Fault(i) => self.apply_fault(i),
                    Event::Pfc { port, pause } => self.pfc_frame(port, pause),
                    _ => unreachable!("handled above"),
                }
            }
        }
    }

    // ---------------------------------------------------------------- events

    /// The node an event happens at (the generator past the last node for
    /// faults, which happen everywhere).
    #[inline]
    fn home(&self, ev: Event) -> u32 {
        match ev {
            Event::PortDone(g) | Event::Pfc { port: g, .. } => self.ports.ports[g as usize].node,
            Event::Arrive { node, .. } => node,
            Event::QpTimer { qp, .. } => {
                let f = &self.specs[qp as usize / 2];
                if qp % 2 == 0 {
                    f.src
                } else {
                    f.dst
                }
            }
            Event::FlowStart(f) => self.specs[f as usize].src,
            Event::ResponderStart(f) | Event::ResponderFree(f) => self.specs[f as usize].dst,
            Event::Fault(_) => self.topo.nodes.len() as u32,
        }
    }

    /// Schedule `ev` at `at` as the work of node `self.gen`: its tie is
    /// that node and its count, and it goes to the part of the node it
    /// happens at.
    #[inline]
    fn schedule(&mut self, at: Instant, ev: Event) {
        let seq = &mut self.gen_seq[self.gen as usize];
        *seq += 1;
        let tie = tie_key(self.gen, *seq);
        if self.part.ranks > 1 {
            let to = self.part.owner(self.home(ev));
            if to != self.part.rank {
                return self.post(to, at, tie, ev);
            }
        }
        self.q.push(at, tie, ev);
    }

    /// Encode `ev` for part `to` ([`mail`]): a packet leaves this part's
    /// slab and travels as its frame.
    #[inline(never)]
    fn post(&mut self, to: u32, at: Instant, tie: u64, ev: Event) {
        let buf = &mut self.outbox[to as usize];
        match ev {
            Event::Arrive { node, pkt } => {
                let slot = self.slab.take(pkt);
                mail::put_arrive(buf, at, tie, node, &slot, &self.encap, &self.zero);
            }
            Event::Pfc { port, pause } => mail::put_pfc(buf, at, tie, port, pause),
            Event::ResponderFree(f) => mail::put_responder_free(buf, at, tie, f),
            other => unreachable!("{other:?} stays in the part that schedules it"),
        }
    }

    /// Schedule the events another part sent.
    fn receive(&mut self, buf: &[u8]) {
        let zero = self.zero.clone();
        for m in mail::Reader::new(buf, &zero) {
            let (at, tie, ev) = match m {
                mail::Mail::Arrive { at, tie, node, slot } => {
                    let pkt = self.slab.insert(slot);
                    (at, tie, Event::Arrive { node, pkt })
                }
                mail::Mail::Event { at, tie, ev } => (at, tie, ev),
            };
            debug_assert!(at >= self.now, "mail into the past: {at:?} < {:?}", self.now);
            self.q.push(at, tie, ev);
        }
    }

    // ---------------------------------------------------------------- flows

    fn start_flow(&mut self, f: u32) {
        let fi = f as usize;
        if self.flows[fi].started.is_some() {
            return;
        }
        let spec = &self.specs[fi];
        let cfg = self.cfg;
        let now = self.now;
        self.flows[fi].started = Some(now);
        let mut rng = ChaCha8Rng::seed_from_u64(mix64(cfg.seed ^ mix64(f as u64 + 1)));
        let n_evs = match cfg.transport {
            Transport::Mrc | Transport::MrcLegacy => cfg.n_evs.clamp(1, MAX_EVS),
            Transport::Rc => 1,
        };
        let n_backup = match cfg.transport {
            Transport::Mrc => cfg.backup_evs.min(MAX_EVS - n_evs),
            Transport::MrcLegacy | Transport::Rc => 0,
        };
        let n_all = n_evs + n_backup;
        let mut evs: Vec<u32> = Vec::with_capacity(n_all);
        match cfg.ecmp {
            EcmpMode::Hash => {
                while evs.len() < n_all {
                    let v: u32 = rng.gen::<u16>() as u32;
                    if !evs.contains(&v) {
                        evs.push(v);
                    }
                }
            }
            // One EV (RC): a random 16-bit value, a uniformly random path
            // where the path count divides 2^16 (as in every tree built here).
            EcmpMode::EvPath if n_all == 1 => evs.push(rng.gen::<u16>() as u32),
            EcmpMode::EvPath => {
                // Path indices with a per-flow random base and a random
                // stride coprime to the path count (EcmpMode::EvPath).
                let paths = net::path_count(self.topo, spec.src, spec.dst);
                let base = rng.gen_range(0..paths);
                let stride = if paths <= 2 {
                    1
                } else {
                    loop {
                        let s = rng.gen_range(1..paths);
                        if net::gcd(s, paths) == 1 {
                            break s;
                        }
                    }
                };
                // Backups continue the sequence: the paths after the EVs'.
                evs.extend(net::ev_path_values(paths, n_all, base, stride));
                // Spraying walks the set in order: shuffle it per flow so
                // flows do not visit the paths in lockstep (with one cyclic
                // order, flows in phase collide persistently).
                rand::seq::SliceRandom::shuffle(&mut evs[..n_evs], &mut rng);
            }
        }
        // One port's rate (RC keeps to one path, so to one plane), and the
        // NIC's (MRC sprays over every plane: its window is sized for all
        // of the host's ports).
        let src_ports = &self.topo.nodes[spec.src as usize].ports;
        let gbps = src_ports.first().map_or(100.0, |p| p.gbps);
        let nic_gbps: f64 = src_ports.iter().map(|p| p.gbps).sum::<f64>().max(gbps);
        let data_wire = cfg.mtu + header_estimate() + cfg.wire_extra_bytes;
        let ack_wire = header_estimate() + cfg.wire_extra_bytes;
        let base_rtt = self.topo.base_latency(spec.src, spec.dst, data_wire)
            + self.topo.base_latency(spec.dst, spec.src, ack_wire);
        let cc = match (cfg.fixed_window, cfg.transport) {
            (Some(w), _) => CcConfig::Fixed { window: w },
            (None, Transport::Mrc | Transport::MrcLegacy) => {
                let mut n = NsccConfig::for_fabric(nic_gbps, base_rtt, cfg.mtu);
                let bdp = (nic_gbps * 1e9 / 8.0 * base_rtt.as_secs_f64()).max(cfg.mtu as f64 * 4.0);
                n.max_cwnd = ((bdp * cfg.nscc_max_cwnd_bdp) as u64).max(n.min_cwnd);
                n.init_cwnd = ((bdp * cfg.nscc_init_cwnd_bdp) as u64).clamp(n.min_cwnd, n.max_cwnd);
                CcConfig::Nscc(n)
            }
            (None, Transport::Rc) => CcConfig::Dcqcn(DcqcnConfig::for_line_rate(gbps)),
        };
        let req_id = 2 * f;
        let resp_id = 2 * f + 1;
        let qpn = |id: u32| id + QPN_BASE;
        // Each EV's port is the plane the source's NIC sends it on (none
        // with one plane: every EV on port 0).
        let planes = self.topo.next_hops(spec.src, spec.dst).len();
        let ports: Vec<u8> = if planes > 1 {
            let salt = self.ports.salt[spec.src as usize];
            evs.iter()
                .map(|&ev| {
                    let mut route = ev & 0xFFFF;
                    net::ecmp_pick(cfg.ecmp, salt, spec.src, spec.dst, ev, &mut route, planes) as u8
                })
                .collect()
        } else {
            Vec::new()
        };
        let port_of = |i: usize| ports.get(i).copied().unwrap_or(0);
        let evset = EvSetConfig {
            evs: evs[..n_evs].to_vec(),
            backup_evs: (n_evs..n_all)
                .map(|i| BackupEv {
                    ev: evs[i],
                    port: port_of(i),
                })
                .collect(),
            ports: if ports.is_empty() {
                Vec::new()
            } else {
                ports[..n_evs].to_vec()
            },
            min_active: cfg.min_active_evs.min(n_evs as u16).max(1),
            probe_interval: cfg.probe_interval,
            policy: cfg.spray,
            event_queue_len: 64,
            seed: rng.gen(),
            ..EvSetConfig::default()
        };
        let mut req_setup = QpSetup::new(cfg.transport, qpn(req_id), qpn(resp_id));
        req_setup.cfg.mtu = cfg.mtu;
        req_setup.cfg.ack_every = cfg.ack_every;
        req_setup.cfg.ack_delay = cfg.ack_delay;
        req_setup.cfg.event_queue_len = 64;
        if cfg.transport == Transport::Mrc {
            req_setup.cfg.reverse_evs = ReverseEvConfig {
                per_plane: cfg.reverse_evs_per_plane,
                planes: planes as u8,
            };
        }
        req_setup.rtr.mpr_units = cfg.mpr_units;
        req_setup.rtr.max_wimm = 16;
        req_setup.rts.ack_timeout_exp = cfg.ack_timeout_exp;
        req_setup.rts.retry_linear = cfg.retry_linear;
        req_setup.rts.retry_exp = cfg.retry_exp;
        req_setup.rts.send_mpr_units = cfg.mpr_units;
        req_setup.rts.max_wimm = 16;
        req_setup.rts.evs = evset;
        req_setup.rts.cc = cc;
        let mut resp_setup = req_setup.mirrored();
        req_setup.cfg.seed = rng.gen();
        resp_setup.cfg.seed = rng.gen();
        let (src, dst) = (spec.src, spec.dst);
        if self.part.owns(src) {
            // The flow's EV values are reported from its source's part.
            self.flows[fi].evs = evs;
        }
        let caller = self.gen;
        // Each half is created by the part of its host, as that host's
        // work (in one part, both at once: the responder first).
        if self.part.owns(dst) {
            self.gen = dst;
            // The responder QP only receives and acknowledges: RTR, no
            // requester half (no EV set, ring or timers of its own).
            let mut resp: Qp = resp_setup
                .bring_up_receiver(now)
                .unwrap_or_else(|e| panic!("QP setup refused a valid configuration: {e}"));
            resp.memory_mut()
                .register_sink(SINK_VA, spec.size, SINK_RKEY)
                .expect("sink region");
            if spec.imm {
                resp.post_recv(f as u64).expect("post_recv");
            }
            self.qps[resp_id as usize] = Some(QpEntry {
                qp: resp,
                host: dst,
                peer_host: src,
                flow: f,
                is_req: false,
                timer_at: NO_TIMER,
                gen: 0,
                in_ring: false,
            });
            self.touch(resp_id);
        }
        if self.part.owns(src) {
            self.gen = src;
            let mut req: Qp = req_setup
                .bring_up(now)
                .unwrap_or_else(|e| panic!("QP setup refused a valid configuration: {e}"));
            req.post_write(
                now,
                WriteRequest {
                    wr_id: f as u64,
                    data: self.zero.slice(0..spec.size as usize),
                    remote_va: SINK_VA,
                    rkey: SINK_RKEY,
                    imm: spec.imm.then_some(f),
                },
            )
            .expect("post_write");
            if cfg.port_status {
                // A NIC port already down: the new QP's EVs on it start denied.
                let hs = &self.hosts[src as usize];
                for p in 0..hs.nports {
                    if !self.ports.ports[(hs.port0 + p) as usize].up {
                        req.deny_port_evs(now, p as u8);
                    }
                }
            }
            self.qps[req_id as usize] = Some(QpEntry {
                qp: req,
                host: src,
                peer_host: dst,
                flow: f,
                is_req: true,
                timer_at: NO_TIMER,
                gen: 0,
                in_ring: false,
            });
            self.ready(req_id);
            self.touch(req_id);
            self.kick(src);
        }
        self.gen = caller;
    }

    fn trigger_dependents(&mut self, f: u32) {
        if self.dependents[f as usize].is_empty() {
            return;
        }
        let deps = std::mem::take(&mut self.dependents[f as usize]);
        for &d in &deps {
            let start = self.specs[d as usize].start;
            if start <= self.now {
                self.start_flow(d);
            } else {
                self.schedule(start, Event::FlowStart(d));
            }
        }
    }

    /// A flow activated trigger `t`: start what its kind says.
    fn activate(&mut self, t: u32) {
        let ti = t as usize;
        let st = &mut self.trig_state[ti];
        st.activations += 1;
        let start: Vec<u32> = match self.cfg.triggers[ti].kind {
            TriggerKind::OneShot if st.activations == 1 => self.trig_targets[ti].clone(),
            TriggerKind::Barrier { count } if st.activations == count => self.trig_targets[ti].clone(),
            TriggerKind::MultiShot => self.trig_targets[ti]
                .get(st.activations as usize - 1)
                .map_or_else(Vec::new, |&f| vec![f]),
            _ => Vec::new(),
        };
        for f in start {
            self.start_flow(f);
        }
    }

    fn flow_done(&mut self, f: u32, error: bool) {
        let st = &mut self.flows[f as usize];
        if st.done {
            return;
        }
        st.done = true;
        if std::mem::take(&mut st.rx_active) {
            let dst = self.specs[f as usize].dst;
            self.hosts[dst as usize].rx_active -= 1;
        }
        let st = &mut self.flows[f as usize];
        if error {
            st.error = true;
        } else {
            st.end = Some(self.now);
        }
        self.flows_done += 1;
        self.last_done = self.last_done.max((self.now.as_ps(), self.tie));
        self.to_free.push(f);
        if !error && !self.specs[f as usize].imm {
            self.trigger_dependents(f);
        }
        if let (false, Some(t)) = (error, self.specs[f as usize].send_done_trigger) {
            self.activate(t);
        }
    }

    /// The queue series, the bins still open on each port included,
    /// ordered by bin.
    fn take_queue_series(&mut self) -> Vec<QueueSample> {
        let mut out = std::mem::take(&mut self.queue_series);
        for (g, p) in self.ports.ports.iter().enumerate() {
            if p.series_max > 0 {
                out.push(QueueSample {
                    bin: p.series_bin,
                    node: p.node,
                    port: (g as u32 - self.ports.base[p.node as usize]) as u16,
                    max_bytes: p.series_max,
                });
            }
        }
        out.sort_by_key(|q| (q.bin, q.node, q.port));
        out
    }

    /// Free the QPs of finished flows (the requester after the event that
    /// finished them, the responder [`Sim::free_delay_ps`] later): the
    /// requester has everything acknowledged (or is in ERR) and the
    /// responder has placed everything, so neither has work left; packets
    /// still in flight to them are counted as stale. Keeps memory bounded
    /// by the flows active at once, not the flows in the file.
    fn free_finished(&mut self) {
        let caller = self.gen;
        while let Some(f) = self.to_free.pop() {
            let req = self.qps[2 * f as usize].take();
            self.flows[f as usize].counters = req.map(|e| *e.qp.counters());
            // The responder goes a link delay later, in its own part.
            self.gen = self.specs[f as usize].src;
            self.schedule(at(self.now, self.free_delay_ps), Event::ResponderFree(f));
        }
        self.gen = caller;
    }

    /// Flow `f` finished `free_delay_ps` ago: free its responder.
    fn free_responder(&mut self, f: u32) {
        if let Some(resp) = self.qps[2 * f as usize + 1].take() {
            self.reverse_evictions += resp.qp.counters().reverse_evictions;
        }
    }

    // ---------------------------------------------------------------- QPs

    /// Put a QP in its host's round-robin ring.
    #[inline]
    fn ready(&mut self, id: u32) {
        let Some(e) = self.qps[id as usize].as_mut() else {
            return;
        };
        if !e.in_ring {
            e.in_ring = true;
            let hs = &mut self.hosts[e.host as usize];
            if e.is_req {
                hs.ring.push_back(id);
            } else {
                hs.ctl.push_back(id);
            }
        }
    }

    /// Drain a QP's events and make sure a timer event is pending no later
    /// than its next deadline. Timer events are lazy: a later deadline
    /// leaves the earlier event in place (it fires, finds nothing due and
    /// re-arms), so deadlines that move on every ACK cost no heap pushes.
    fn touch(&mut self, id: u32) {
        loop {
            let Some(e) = self.qps[id as usize].as_mut() else {
                return;
            };
            let Some(ev) = e.qp.poll_event() else { break };
            let (flow, is_req) = (e.flow, e.is_req);
            self.on_qp_event(flow, is_req, ev);
        }
        let now = self.now.as_ps();
        let Some(e) = self.qps[id as usize].as_mut() else {
            return;
        };
        let t = e.qp.poll_timeout().map_or(NO_TIMER, |t| t.as_ps());
        if t < e.timer_at {
            e.gen = e.gen.wrapping_add(1);
            e.timer_at = t.max(now);
            let gen = e.gen;
            self.schedule(Instant(t.max(now)), Event::QpTimer { qp: id, gen });
        }
    }

    fn on_qp_event(&mut self, f: u32, is_req: bool, ev: QpEvent) {
        match ev {
            QpEvent::SendCompleted(c) if is_req => {
                self.flow_done(f, c.status != WcStatus::Success);
            }
            QpEvent::RecvCompleted(c) if !is_req && c.status == WcStatus::Success => {
                let st = &mut self.flows[f as usize];
                if st.recv_end.is_none() {
                    st.recv_end = Some(self.now);
                    self.trigger_dependents(f);
                    if let Some(t) = self.specs[f as usize].recv_done_trigger {
                        self.activate(t);
                    }
                }
            }
            QpEvent::EvStateChanged(ch) if ch.to == EvState::AssumedBad => {
                self.ev_marked_bad += 1;
                if is_req {
                    let st = &mut self.flows[f as usize];
                    st.ev_bad += 1;
                    let ev = st.evs.get(ch.ev_index as usize).copied().unwrap_or(u32::MAX);
                    self.ev_marks.push(EvMark {
                        flow: f,
                        ev_index: ch.ev_index,
                        ev,
                        at_ps: self.now.as_ps(),
                        reason: ch.reason,
                    });
                }
            }
            QpEvent::EvStateChanged(ch) if ch.reason == EvChangeReason::Promoted => {
                self.ev_promoted += 1;
                if is_req {
                    let ev = self.flows[f as usize]
                        .evs
                        .get(ch.ev_index as usize)
                        .copied()
                        .unwrap_or(u32::MAX);
                    self.ev_promotions.push(EvMark {
                        flow: f,
                        ev_index: ch.ev_index,
                        ev,
                        at_ps: self.now.as_ps(),
                        reason: ch.reason,
                    });
                }
            }
            QpEvent::StateChanged { to: QpState::Error, .. } => {
                self.qp_errors += 1;
                if is_req {
                    self.flow_done(f, true);
                }
            }
            _ => {}
        }
    }

    fn qp_timer(&mut self, id: u32, gen: u32) {
        let now = self.now;
        let Some(e) = self.qps[id as usize].as_mut() else {
            return;
        };
        if e.gen != gen {
            return;
        }
        e.timer_at = NO_TIMER;
        if matches!(e.qp.poll_timeout(), Some(t) if t <= now) {
            e.qp.handle_timeout(now);
            let host = e.host;
            // A deadline the model did not consume must not spin at `now`.
            if matches!(e.qp.poll_timeout(), Some(t) if t <= now) {
                e.gen = e.gen.wrapping_add(1);
                e.timer_at = now.as_ps() + 1000;
                let gen = e.gen;
                self.schedule(at(now, 1000), Event::QpTimer { qp: id, gen });
            }
            self.ready(id);
            self.touch(id);
            self.kick(host);
        } else {
            self.touch(id);
        }
    }

    // ---------------------------------------------------------------- NICs

    /// Let host `h`'s NIC pull packets from its ready QPs, round robin,
    /// while one of its ports is idle and fewer than one packet per port is
    /// waiting.
    fn kick(&mut self, h: u32) {
        let pfc = self.cfg.switch.pfc.is_some();
        loop {
            let hs = &self.hosts[h as usize];
            let idle = (hs.port0..hs.port0 + hs.nports).any(|p| self.ports.ports[p as usize].busy.is_none());
            if !idle {
                return;
            }
            // Under PFC acknowledgements are another priority: data waiting
            // on a paused port does not hold them back.
            let full = hs.queued >= hs.nports;
            if full && (!pfc || hs.ctl.is_empty()) {
                return;
            }
            let hs = &mut self.hosts[h as usize];
            let next = if full {
                hs.ctl.pop_front()
            } else {
                hs.ctl.pop_front().or_else(|| hs.ring.pop_front())
            };
            let Some(id) = next else {
                return;
            };
            let now = self.now;
            let Some(e) = self.qps[id as usize].as_mut() else {
                continue;
            };
            e.in_ring = false;
            let pkt = e.qp.poll_transmit(now);
            let dst = e.peer_host;
            if let Some(pkt) = pkt {
                self.inject(h, dst, pkt);
                self.ready(id);
            }
            self.touch(id);
        }
    }

    fn wire_len(&self, pkt: &Packet) -> u32 {
        pkt.frame_len(&self.encap) as u32 + self.cfg.wire_extra_bytes
    }

    fn inject(&mut self, h: u32, dst: u32, pkt: Packet) {
        self.cons.injected += 1;
        let wire = self.wire_len(&pkt);
        let group = self.topo.next_hops(h, dst);
        let mut route = pkt.ev() & 0xFFFF;
        let n = group.len();
        let mut i = net::ecmp_pick(
            self.cfg.ecmp,
            self.ports.salt[h as usize],
            h,
            dst,
            pkt.ev(),
            &mut route,
            n,
        );
        if self.reroute.is_some() && n > 1 && !self.member_ok(h, group[i], dst) {
            if let Some(j) = (1..n).map(|k| (i + k) % n).find(|&j| self.member_ok(h, group[j], dst)) {
                i = j;
            }
        }
        let port = group.get(i).copied().unwrap_or(0);
        let g = self.ports.index(h, port);
        let data = pkt.is_data();
        let id = self.slab.insert(Slot {
            pkt,
            src: h,
            dst,
            wire,
            route,
            ingress: NO_PORT,
        });
        let p = &mut self.ports.ports[g as usize];
        if p.busy.is_none() && !(data && p.paused) {
            self.start_tx(g, id);
        } else if !data && self.cfg.switch.pfc.is_some() {
            // Acknowledgements are another priority than the data PFC
            // pauses: they do not wait behind it.
            p.hdr.push_back(id);
            p.hdr_bytes += wire as u64;
            self.hosts[h as usize].queued += 1;
        } else {
            p.data.push_back(id);
            p.data_bytes += wire as u64;
            self.hosts[h as usize].queued += 1;
        }
    }

    // ---------------------------------------------------------------- ports

    #[inline]
    fn start_tx(&mut self, g: u32, id: u32) {
        let wire = self.slab.get(id).wire;
        let p = &mut self.ports.ports[g as usize];
        p.busy = Some(id);
        let t = at(self.now, ser_ps(wire, p.ps_per_byte));
        self.schedule(t, Event::PortDone(g));
    }

    fn port_done(&mut self, g: u32) {
        let now = self.now;
        let p = &mut self.ports.ports[g as usize];
        let id = p.busy.take().expect("port was busy");
        let wire = self.slab.get(id).wire as u64;
        if self.cfg.switch.pfc.is_some() {
            self.pfc_release(id, g);
        }
        let p = &mut self.ports.ports[g as usize];
        p.stats.tx_packets += 1;
        p.stats.tx_bytes += wire;
        let fate = if !p.up {
            Some(DropReason::LinkDown)
        } else if p.blackhole {
            Some(DropReason::Blackhole)
        } else if p.loss > 0.0 && p.rng.unit() < p.loss {
            Some(DropReason::Loss)
        } else {
            None
        };
        let p = &mut self.ports.ports[g as usize];
        match fate {
            Some(r) => {
                p.stats.count(r);
                self.cons.dropped += 1;
                self.slab.take(id);
            }
            None => {
                let t = at(now, p.delay_ps);
                let node = p.peer_node;
                self.schedule(t, Event::Arrive { node, pkt: id });
            }
        }
        self.send_next(g);
    }

    /// Start port `g`'s next packet, if any: trimmed headers and control
    /// first, data unless PFC paused the port.
    fn send_next(&mut self, g: u32) {
        let p = &mut self.ports.ports[g as usize];
        if p.busy.is_some() {
            return;
        }
        let next = if let Some(n) = p.hdr.pop_front() {
            p.hdr_bytes -= self.slab.get(n).wire as u64;
            Some(n)
        } else if p.paused {
            None
        } else if let Some(n) = p.data.pop_front() {
            p.data_bytes -= self.slab.get(n).wire as u64;
            Some(n)
        } else {
            None
        };
        let is_switch = p.is_switch;
        let node = p.node;
        if let Some(n) = next {
            if !is_switch {
                self.hosts[node as usize].queued -= 1;
            }
            self.start_tx(g, n);
        }
        if !is_switch {
            self.kick(node);
        }
    }

    /// PFC: packet `id` leaves the switch port `g`: it no longer counts
    /// against the link it came in on (which may resume), and counts
    /// against `g`'s link at the next switch.
    fn pfc_release(&mut self, id: u32, g: u32) {
        let pfc = self.cfg.switch.pfc.expect("PFC on");
        let slot = self.slab.get_mut(id);
        let up = std::mem::replace(&mut slot.ingress, NO_PORT);
        let wire = slot.wire as u64;
        if up != NO_PORT {
            let u = &mut self.ports.ports[up as usize];
            u.pfc_held -= wire;
            if u.pfc_xoff_sent && u.pfc_held <= pfc.xon_bytes {
                u.pfc_xoff_sent = false;
                let t = at(self.now, u.delay_ps);
                self.schedule(t, Event::Pfc { port: up, pause: false });
            }
        }
        if self.ports.ports[g as usize].peer_node >= self.topo.n_hosts {
            self.slab.get_mut(id).ingress = g;
        }
    }

    /// PFC: data packet `id`, which came in over port `up`'s link, is
    /// held by this switch; past XOFF, pause that port.
    fn pfc_hold(&mut self, id: u32) {
        let pfc = self.cfg.switch.pfc.expect("PFC on");
        let slot = self.slab.get(id);
        let (up, wire) = (slot.ingress, slot.wire as u64);
        if up == NO_PORT {
            return;
        }
        let u = &mut self.ports.ports[up as usize];
        u.pfc_held += wire;
        u.stats.pfc_max_held = u.stats.pfc_max_held.max(u.pfc_held);
        if !u.pfc_xoff_sent && u.pfc_held > pfc.xoff_bytes {
            u.pfc_xoff_sent = true;
            // The frame crosses the link back to the sender.
            let t = at(self.now, u.delay_ps);
            self.schedule(t, Event::Pfc { port: up, pause: true });
        }
    }

    /// A PFC frame reached port `g`.
    fn pfc_frame(&mut self, g: u32, pause: bool) {
        let p = &mut self.ports.ports[g as usize];
        p.paused = pause;
        if pause {
            p.stats.pfc_pauses += 1;
        } else {
            self.send_next(g);
        }
    }

    fn arrive(&mut self, node: u32, id: u32) {
        if node < self.topo.n_hosts {
            return self.deliver(node, id);
        }
        let (src, dst, ev) = {
            let s = self.slab.get(id);
            (s.src, s.dst, s.pkt.ev())
        };
        let group = self.topo.next_hops(node, dst);
        if group.is_empty() {
            self.no_route += 1;
            self.cons.dropped += 1;
            self.slab.take(id);
            return;
        }
        let n = group.len();
        let salt = self.ports.salt[node as usize];
        let mode = self.cfg.ecmp;
        let mut i = net::ecmp_pick(mode, salt, src, dst, ev, &mut self.slab.get_mut(id).route, n);
        let base = self.ports.base[node as usize];
        if self.reroute.is_some() && n > 1 && !self.member_ok(node, group[i], dst) {
            // Rerouted: the next member that avoids excluded links.
            for k in 1..n {
                let j = (i + k) % n;
                if self.member_ok(node, group[j], dst) {
                    i = j;
                    break;
                }
            }
        }
        let g = base + group[i] as u32;
        self.enqueue(g, id);
    }

    fn enqueue(&mut self, g: u32, id: u32) {
        let sw = self.cfg.switch;
        let slot = self.slab.get_mut(id);
        let p = &mut self.ports.ports[g as usize];
        let mut wire = slot.wire as u64;
        // MRC 1.0's CONTROL class (ACK / SACK / NACK / probes and trimmed
        // headers) goes in the priority queue; a control packet that does
        // not fit there (`header_buffer_bytes`) queues with data.
        let control = !slot.pkt.is_data();
        let to_hdr = if slot.pkt.trimmed() || (control && p.hdr_bytes + wire <= sw.header_buffer_bytes) {
            true
        } else if sw.pfc.is_none() && p.data_bytes + wire > sw.buffer_bytes {
            // (With PFC the fabric is lossless: the ingress pauses bound
            // the queues, nothing is trimmed or dropped for space.)
            if sw.trimming && slot.pkt.trimmable() {
                // The port leads to a host: the packet's destination, whose
                // link every path shares (MRC 1.0 TRIMMED_LASTHOP).
                let last_hop = p.peer_node < self.topo.n_hosts;
                slot.pkt.trim(last_hop);
                if last_hop {
                    p.stats.trims_last_hop += 1;
                }
                let w = slot.pkt.frame_len(&self.encap) as u32 + self.cfg.wire_extra_bytes;
                slot.wire = w;
                wire = w as u64;
                p.stats.trims += 1;
                true
            } else {
                p.stats.count(DropReason::Overflow);
                self.cons.dropped += 1;
                self.slab.take(id);
                return;
            }
        } else {
            false
        };
        if to_hdr {
            // Not data PFC counts (another priority).
            slot.ingress = NO_PORT;
            if p.hdr_bytes + wire > sw.header_buffer_bytes {
                p.stats.count(DropReason::Overflow);
                self.cons.dropped += 1;
                self.slab.take(id);
                return;
            }
            if p.busy.is_none() {
                return self.start_tx(g, id);
            }
            p.hdr.push_back(id);
            p.hdr_bytes += wire;
            return;
        }
        let marks_here = sw.ecn_last_hop || p.peer_node >= self.topo.n_hosts;
        if let Some(e) = sw.ecn.filter(|_| marks_here) {
            let q = p.data_bytes;
            let mark = if q >= e.kmax_bytes {
                true
            } else if q > e.kmin_bytes {
                let prob = e.pmax * (q - e.kmin_bytes) as f64 / (e.kmax_bytes - e.kmin_bytes).max(1) as f64;
                p.rng.unit() < prob
            } else {
                false
            };
            if mark && !slot.pkt.ecn_ce() {
                slot.pkt.mark_ce();
                p.stats.ecn_marks += 1;
            }
        }
        let paused = p.paused;
        if sw.pfc.is_some() {
            self.pfc_hold(id);
        }
        let p = &mut self.ports.ports[g as usize];
        if p.busy.is_none() && !paused {
            return self.start_tx(g, id);
        }
        p.data.push_back(id);
        p.data_bytes += wire;
        p.stats.max_queue_bytes = p.stats.max_queue_bytes.max(p.data_bytes);
        if self.cfg.queue_series {
            let bin = (self.now.as_ps() / self.cfg.series_bin.as_ps().max(1)) as u32;
            if p.series_bin != bin {
                if p.series_max > 0 {
                    self.queue_series.push(QueueSample {
                        bin: p.series_bin,
                        node: p.node,
                        port: (g - self.ports.base[p.node as usize]) as u16,
                        max_bytes: p.series_max,
                    });
                }
                p.series_bin = bin;
                p.series_max = 0;
            }
            p.series_max = p.series_max.max(p.data_bytes);
        }
    }

    fn deliver(&mut self, h: u32, id: u32) {
        let slot = self.slab.take(id);
        let pkt = slot.pkt;
        if pkt.dest_qp() == choices::ENDPOINT_QPN {
            if pkt.trimmed() {
                self.cons.trimmed_delivered += 1;
            } else {
                self.cons.delivered += 1;
                self.endpoint_packet(h, slot.src, pkt);
            }
            return;
        }
        if pkt.trimmed() {
            self.cons.trimmed_delivered += 1;
        } else {
            self.cons.delivered += 1;
            if pkt.is_data() && !pkt.payload().is_empty() {
                let bin = (self.now.as_ps() / self.cfg.series_bin.as_ps().max(1)) as usize;
                if bin >= self.series.len() {
                    self.series.resize(bin + 1, 0);
                }
                self.series[bin] += pkt.payload().len() as u64;
                // Data to flow f's responder, QP index 2f + 1.
                let qid = pkt.dest_qp().wrapping_sub(QPN_BASE);
                let f = (qid / 2) as usize;
                let mut in_flow = u32::MAX;
                if let Some(s) = self.flow_series.get_mut(f).filter(|_| qid % 2 == 1) {
                    if bin >= s.len() {
                        s.resize(bin + 1, 0);
                    }
                    s[bin] += pkt.payload().len() as u64;
                    in_flow = f as u32;
                }
                if self.part.ranks > 1 {
                    let n = pkt.payload().len() as u64;
                    self.window_series
                        .push((self.now.as_ps(), self.tie, bin as u32, in_flow, n));
                }
            }
        }
        let qid = pkt.dest_qp().wrapping_sub(QPN_BASE);
        let ok = self
            .qps
            .get(qid as usize)
            .and_then(|e| e.as_ref())
            .is_some_and(|e| e.host == h);
        if !ok {
            // For a QP already freed (its flow finished): a late duplicate.
            self.stale_packets += 1;
            return;
        }
        let now = self.now;
        if self.cfg.receiver_penalty && pkt.is_data() && qid % 2 == 1 {
            let f = (qid / 2) as usize;
            if !self.flows[f].rx_active && !self.flows[f].done {
                self.flows[f].rx_active = true;
                self.hosts[h as usize].rx_active += 1;
            }
            let p = choices::cwnd_penalty_for_senders(self.hosts[h as usize].rx_active);
            if let Some(e) = self.qps[qid as usize].as_mut() {
                e.qp.set_receive_penalty(p);
            }
        }
        let e = self.qps[qid as usize].as_mut().expect("checked");
        let _ = e.qp.handle_packet(now, pkt);
        self.ready(qid);
        self.touch(qid);
        self.kick(h);
    }

    // ---------------------------------------------------------------- faults

    /// With rerouting active: port `port` of `node` is not excluded and
    /// its peer still reaches `dst` over non-excluded shortest paths.
    fn member_ok(&self, node: u32, port: u16, dst: u32) -> bool {
        let Some(r) = &self.reroute else { return true };
        let g = self.ports.index(node, port);
        let p = &self.ports.ports[g as usize];
        if p.excluded {
            return false;
        }
        let peer = p.peer_node;
        peer < self.topo.n_hosts || r.ok[peer as usize * r.n_reps + r.rep_of[dst as usize] as usize]
    }

    /// Recompute which switches still reach which destinations over
    /// non-excluded links (after a reroute or a link coming back).
    fn recompute_reach(&mut self) {
        let any = self.ports.ports.iter().any(|p| p.excluded);
        if !any {
            self.reroute = None;
            return;
        }
        let topo = self.topo;
        let n_hosts = topo.n_hosts as usize;
        let mut r = self.reroute.take().unwrap_or_else(|| {
            // Hosts behind the same leaves route identically everywhere but
            // at those leaves: one representative per set of leaves.
            let mut keys: std::collections::BTreeMap<Vec<u32>, u32> = std::collections::BTreeMap::new();
            let mut rep_of = Vec::with_capacity(n_hosts);
            let mut reps = Vec::new();
            for h in 0..n_hosts {
                let key: Vec<u32> = topo.nodes[h].ports.iter().map(|p| p.peer).collect();
                let next = keys.len() as u32;
                let r = *keys.entry(key).or_insert_with(|| {
                    reps.push(h as u32);
                    next
                });
                rep_of.push(r);
            }
            let n_reps = reps.len();
            Reach {
                rep_of,
                reps,
                n_reps,
                ok: Vec::new(),
            }
        });
        let n_nodes = topo.nodes.len();
        r.ok.clear();
        r.ok.resize(n_nodes * r.n_reps, false);
        loop {
            let mut changed = false;
            for node in n_hosts..n_nodes {
                for (ri, &rep) in r.reps.iter().enumerate() {
                    let k = node * r.n_reps + ri;
                    if r.ok[k] {
                        continue;
                    }
                    let base = self.ports.base[node];
                    let reach = topo.next_hops(node as u32, rep).iter().any(|&pp| {
                        let p = &self.ports.ports[(base + pp as u32) as usize];
                        !p.excluded && (p.peer_node < topo.n_hosts || r.ok[p.peer_node as usize * r.n_reps + ri])
                    });
                    if reach {
                        r.ok[k] = true;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        self.reroute = Some(r);
    }

    fn apply_fault(&mut self, i: u32) {
        let (_, link, action) = self.actions[i as usize];
        let a = self.ports.index(link.node, link.port);
        let peer = self.topo.nodes[link.node as usize].ports[link.port as usize];
        let b = self.ports.index(peer.peer, peer.peer_port);
        for g in [a, b] {
            let p = &mut self.ports.ports[g as usize];
            match action {
                Action::Down => p.up = false,
                Action::Up => {
                    p.up = true;
                    p.excluded = false;
                }
                Action::Reroute => {
                    if !p.up {
                        p.excluded = true;
                    }
                }
                Action::Degrade(f) => p.ps_per_byte = p.nominal_ps_per_byte / f.max(1e-6),
                Action::Loss(r) => p.loss = r,
                Action::Blackhole => {
                    if g == a {
                        p.blackhole = true;
                    }
                }
                Action::Restore => {
                    p.ps_per_byte = p.nominal_ps_per_byte;
                    p.loss = self.cfg.loss;
                    p.blackhole = false;
                }
            }
        }
        if matches!(action, Action::Reroute | Action::Up) && (self.reroute.is_some() || action == Action::Reroute) {
            self.recompute_reach();
        }
        if self.cfg.port_status && matches!(action, Action::Down | Action::Up) {
            // A host end of the link: its NIC sees its port go down or up.
            let ends = [(link.node, link.port), (peer.peer, peer.peer_port)];
            let mine = ends
                .into_iter()
                .filter(|&(n, _)| n < self.topo.n_hosts && self.part.owns(n));
            for (node, port) in mine {
                self.gen = node;
                self.port_status(node, port as u8, action == Action::Up);
            }
        }
    }

    /// Host `h`'s port `port` went down (`up` false) or came back: its
    /// requesters deny or re-allow their EVs on that port.
    fn port_status(&mut self, h: u32, port: u8, up: bool) {
        let now = self.now;
        let mut touched = Vec::new();
        for (id, e) in self.qps.iter_mut().enumerate() {
            let Some(e) = e.as_mut().filter(|e| e.is_req && e.host == h) else {
                continue;
            };
            let n = if up {
                e.qp.allow_port_evs(now, port)
            } else {
                e.qp.deny_port_evs(now, port)
            };
            if n > 0 {
                touched.push(id as u32);
            }
        }
        for id in touched {
            self.touch(id);
        }
        self.send_port_status(h);
    }

    /// Host `h`'s endpoint, created on first use with the ports up now.
    fn endpoint(&mut self, h: u32) -> &mut HostEndpoint {
        if self.endpoints.is_empty() {
            self.endpoints.resize_with(self.topo.n_hosts as usize, || None);
        }
        let hs = &self.hosts[h as usize];
        let ports = &self.ports.ports;
        let up = (0..hs.nports.min(32))
            .filter(|&p| ports[(hs.port0 + p) as usize].up)
            .fold(0u32, |m, p| m | 1 << p);
        let e = self.endpoints[h as usize].get_or_insert_with(|| {
            Box::new(HostEndpoint {
                ep: Endpoint::new(EndpointConfig::default()),
                answer_to: VecDeque::new(),
                request_to: VecDeque::new(),
            })
        });
        e.ep.set_ports_up(up);
        e
    }

    /// MRC 1.0's Port Status Update: host `h` tells every host that sends
    /// to it which of its ports are up, on a port that is.
    fn send_port_status(&mut self, h: u32) {
        // The hosts sending to `h`: its responders' peers (the requesters
        // are in their own hosts' parts).
        let mut peers: Vec<u32> = self
            .qps
            .iter()
            .flatten()
            .filter(|e| !e.is_req && e.host == h && e.peer_host != h)
            .map(|e| e.peer_host)
            .collect();
        peers.sort_unstable();
        peers.dedup();
        let now = self.now;
        for x in peers {
            let Some(ev) = self.live_ev(h, x) else {
                continue;
            };
            let e = self.endpoint(h);
            if e.ep.port_status_update(now, ev).is_ok() {
                e.request_to.push_back(x);
                self.status_updates += 1;
            }
        }
        self.flush_endpoint(h);
    }

    /// An EV that leaves host `h` towards `dst` on a port that is up.
    fn live_ev(&self, h: u32, dst: u32) -> Option<u32> {
        let group = self.topo.next_hops(h, dst);
        let salt = self.ports.salt[h as usize];
        (0..1024u32).find(|&ev| {
            let mut route = ev;
            let i = net::ecmp_pick(self.cfg.ecmp, salt, h, dst, ev, &mut route, group.len());
            group
                .get(i)
                .is_some_and(|&p| self.ports.ports[self.ports.index(h, p) as usize].up)
        })
    }

    /// Send what host `h`'s endpoint has queued.
    fn flush_endpoint(&mut self, h: u32) {
        let now = self.now;
        loop {
            let Some(e) = self.endpoints.get_mut(h as usize).and_then(|e| e.as_mut()) else {
                return;
            };
            let answer = !e.answer_to.is_empty();
            let Some(pkt) = e.ep.poll_transmit(now) else {
                return;
            };
            let to = if answer {
                e.answer_to.pop_front()
            } else {
                e.request_to.pop_front()
            };
            if let Some(dst) = to {
                self.inject(h, dst, pkt.into());
            }
        }
    }

    /// A packet for host `h`'s endpoint from host `src`: a Port Status
    /// Update makes `h`'s requesters towards `src` deny the EVs on its
    /// ports that are down and allow those on its ports that are up; it
    /// is answered.
    fn endpoint_packet(&mut self, h: u32, src: u32, pkt: Packet) {
        let Some(p) = pkt.as_mrc10().cloned() else {
            return;
        };
        let now = self.now;
        let e = self.endpoint(h);
        let dropped = e.ep.counters().answers_dropped;
        let request = p.bth.opcode == proto::wire::mrc10::Opcode::EndpointRequest;
        if e.ep.handle_packet(now, &p).is_err() {
            return;
        }
        while e.ep.poll_result().is_some() {}
        if !request {
            return;
        }
        if e.ep.counters().answers_dropped == dropped {
            e.answer_to.push_back(src);
        }
        let peer_up = e.ep.peer_ports_up();
        if let Some(up) = peer_up {
            let n = self.hosts[src as usize].nports.min(32);
            let mut touched = Vec::new();
            for (id, q) in self.qps.iter_mut().enumerate() {
                let Some(q) = q.as_mut().filter(|q| q.is_req && q.host == h && q.peer_host == src) else {
                    continue;
                };
                let mut changed = 0;
                for port in 0..n {
                    changed += if up >> port & 1 == 1 {
                        q.qp.allow_port_evs(now, port as u8)
                    } else {
                        q.qp.deny_port_evs(now, port as u8)
                    };
                }
                if changed > 0 {
                    touched.push(id as u32);
                }
            }
            self.status_applied += touched.len() as u64;
            for id in touched {
                self.touch(id);
            }
        }
        self.flush_endpoint(h);
    }

    // ---------------------------------------------------------------- results

    fn finish(mut self) -> RunOutput {
        let mut records = Vec::with_capacity(self.specs.len());
        for (i, spec) in self.specs.iter().enumerate() {
            let st = &self.flows[i];
            let c = self.qps[2 * i]
                .as_ref()
                .map(|e| *e.qp.counters())
                .or(st.counters)
                .unwrap_or_default();
            let fct = match (st.started, st.end) {
                (Some(s), Some(e)) => Some(e.as_ps() - s.as_ps()),
                _ => None,
            };
            let goodput = fct.map(|f| goodput_gbps(spec.size, f));
            records.push(FlowRecord {
                id: spec.id,
                src: spec.src,
                dst: spec.dst,
                size: spec.size,
                start_ps: st.started.map(|t| t.as_ps()),
                end_ps: st.end.map(|t| t.as_ps()),
                recv_end_ps: st.recv_end.map(|t| t.as_ps()),
                fct_ps: fct,
                goodput_gbps: goodput,
                retransmissions: c.retransmitted_packets,
                timeouts: c.rto_fired,
                ev_marked_bad: st.ev_bad,
                error: st.error,
            });
        }
        self.cons.in_flight = self.slab.live;
        // EV events in time order, equal times by flow and EV (a stable
        // sort: one flow's events keep their order), as a run in parts
        // merges them: the order of equal times otherwise follows the
        // events' ties, which the merge cannot see.
        self.ev_marks.sort_by_key(|m| (m.at_ps, m.flow, m.ev_index));
        self.ev_promotions.sort_by_key(|m| (m.at_ps, m.flow, m.ev_index));
        // The counters of this part; what records and ports give is
        // filled in by `derive_summary` (again after merging parts).
        let summary = Summary {
            drop_no_route: self.no_route,
            ev_marked_bad: self.ev_marked_bad,
            ev_promoted: self.ev_promoted,
            port_status_updates: self.status_updates,
            port_status_applied: self.status_applied,
            reverse_evictions: self.reverse_evictions
                + self
                    .qps
                    .iter()
                    .skip(1)
                    .step_by(2)
                    .flatten()
                    .map(|e| e.qp.counters().reverse_evictions)
                    .sum::<u64>(),
            qp_errors: self.qp_errors,
            events: self.events,
            sim_time_us: self.now.as_ps() as f64 / 1e6,
            conservation: self.cons,
            stale_packets: self.stale_packets,
            peak_packets: self.slab.capacity(),
            ..Summary::default()
        };
        let mut out = RunOutput {
            flows: records,
            summary,
            series: GoodputSeries {
                bin_ps: self.cfg.series_bin.as_ps(),
                bytes: std::mem::take(&mut self.series),
            },
            ev_marks: std::mem::take(&mut self.ev_marks),
            ev_promotions: std::mem::take(&mut self.ev_promotions),
            queue_series: self.take_queue_series(),
            flow_series: std::mem::take(&mut self.flow_series),
            flow_evs: self.flows.iter_mut().map(|f| std::mem::take(&mut f.evs)).collect(),
            ports: self.ports.ports.iter().map(|p| p.stats).collect(),
            parts: vec![PartReport {
                peak_rss_bytes: peak_rss_bytes(),
                ..std::mem::take(&mut self.report)
            }],
        };
        derive_summary(self.topo, &mut out);
        if self.part.ranks == 1 {
            check_accounting(&out.summary);
            if self.cons.in_flight == 0 {
                // PFC: with no packet left, no switch holds bytes of any link.
                let held: u64 = self.ports.ports.iter().map(|p| p.pfc_held).sum();
                assert_eq!(held, 0, "PFC accounting leaked");
            }
        }
        out
    }
}

/// The tie key of generator `gen`'s `seq`-th event: unique (the mix is a
/// bijection of the 64-bit name), the same in any cut, and in no
/// particular order between generators, so simultaneous events are not
/// served lowest node first.
#[inline]
fn tie_key(gen: u32, seq: u64) -> u64 {
    mix64((gen as u64) << TIE_SEQ_BITS | seq)
}

/// A flow's goodput, Gb/s: its size over its FCT.
fn goodput_gbps(size: u64, fct_ps: u64) -> f64 {
    size as f64 * 8.0 / (fct_ps.max(1) as f64 / 1000.0)
}

/// Fill in what the summary takes from the flow records and the ports.
fn derive_summary(topo: &Topology, out: &mut RunOutput) {
    let records = &out.flows;
    let mut ps = PortStats::default();
    for p in &out.ports {
        ps.add(p);
    }
    let goodput_pct: Vec<f64> = records
        .iter()
        .filter_map(|r| {
            let g = r.goodput_gbps?;
            let line: f64 = topo.nodes[r.src as usize].ports.iter().map(|p| p.gbps).sum();
            Some(100.0 * g / line.max(1e-9))
        })
        .collect();
    let (p50, p99, max) = fct_percentiles(records);
    let s = &mut out.summary;
    s.flows = records.len();
    s.flows_completed = records.iter().filter(|r| r.end_ps.is_some()).count();
    s.fct_p50_us = p50;
    s.fct_p99_us = p99;
    s.fct_max_us = max;
    s.mean_goodput_pct = (!goodput_pct.is_empty()).then(|| goodput_pct.iter().sum::<f64>() / goodput_pct.len() as f64);
    s.drops = ps.drops() + s.drop_no_route;
    s.drop_overflow = ps.drop_overflow;
    s.drop_link_down = ps.drop_link_down;
    s.drop_loss = ps.drop_loss;
    s.drop_blackhole = ps.drop_blackhole;
    s.trims = ps.trims;
    s.trims_last_hop = ps.trims_last_hop;
    s.pfc_pauses = ps.pfc_pauses;
    s.ecn_marks = ps.ecn_marks;
    s.retransmissions = records.iter().map(|r| r.retransmissions).sum();
    s.timeouts = records.iter().map(|r| r.timeouts).sum();
    s.last_completion_us = records.iter().filter_map(|r| r.end_ps).max().map(|x| x as f64 / 1e6);
    s.max_queue_bytes = ps.max_queue_bytes;
}

/// Every drop has a reason, and every packet injected is accounted for.
fn check_accounting(s: &Summary) {
    assert_eq!(s.drops, s.conservation.dropped, "every drop counted with a reason");
    assert!(
        s.conservation.balanced(),
        "packet conservation violated: {:?}",
        s.conservation
    );
}

/// A part's output as it travels to part 0 (`RunOutput` leaves the EVs
/// and ports out of its JSON).
#[derive(serde::Serialize, serde::Deserialize)]
struct PartOutput {
    flows: Vec<FlowRecord>,
    summary: Summary,
    series: GoodputSeries,
    ev_marks: Vec<EvMark>,
    ev_promotions: Vec<EvMark>,
    queue_series: Vec<QueueSample>,
    flow_series: Vec<Vec<u64>>,
    flow_evs: Vec<Vec<u32>>,
    ports: Vec<PortStats>,
    parts: Vec<PartReport>,
}

impl From<RunOutput> for PartOutput {
    fn from(o: RunOutput) -> PartOutput {
        PartOutput {
            flows: o.flows,
            summary: o.summary,
            series: o.series,
            ev_marks: o.ev_marks,
            ev_promotions: o.ev_promotions,
            queue_series: o.queue_series,
            flow_series: o.flow_series,
            flow_evs: o.flow_evs,
            ports: o.ports,
            parts: o.parts,
        }
    }
}

/// Add `b` into `a` element by element.
fn add_into(a: &mut Vec<u64>, b: &[u64]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// The whole run's output from its parts' (in part order): each flow's
/// record from its source's part (the requester's), with the receive
/// completion from its destination's; counters summed.
fn merge_parts(topo: &Topology, part: &Partition, specs: &[FlowSpec], parts: Vec<PartOutput>) -> RunOutput {
    let mut flows = Vec::with_capacity(specs.len());
    let mut flow_evs = Vec::with_capacity(specs.len());
    for (i, f) in specs.iter().enumerate() {
        let (s, d) = (part.owner(f.src) as usize, part.owner(f.dst) as usize);
        let mut r = parts[s].flows[i].clone();
        r.recv_end_ps = parts[d].flows[i].recv_end_ps;
        // From the integers again: a float through JSON can come back a
        // bit off (serde_json parses floats to the nearest only with its
        // float_roundtrip feature).
        r.goodput_gbps = r.fct_ps.map(|fct| goodput_gbps(f.size, fct));
        flows.push(r);
        flow_evs.push(parts[s].flow_evs[i].clone());
    }
    let mut summary = Summary::default();
    let mut series = GoodputSeries {
        bin_ps: parts[0].series.bin_ps,
        bytes: Vec::new(),
    };
    let mut flow_series = vec![Vec::new(); parts[0].flow_series.len()];
    let mut ports = vec![PortStats::default(); parts[0].ports.len()];
    let (mut ev_marks, mut ev_promotions, mut queue_series) = (Vec::new(), Vec::new(), Vec::new());
    let mut reports = Vec::new();
    for p in parts {
        reports.extend(p.parts);
        let (s, c) = (&mut summary, &p.summary);
        s.drop_no_route += c.drop_no_route;
        s.ev_marked_bad += c.ev_marked_bad;
        s.ev_promoted += c.ev_promoted;
        s.port_status_updates += c.port_status_updates;
        s.port_status_applied += c.port_status_applied;
        s.reverse_evictions += c.reverse_evictions;
        s.qp_errors += c.qp_errors;
        s.events += c.events;
        s.sim_time_us = s.sim_time_us.max(c.sim_time_us);
        s.stale_packets += c.stale_packets;
        s.peak_packets += c.peak_packets;
        s.conservation.add(&c.conservation);
        add_into(&mut series.bytes, &p.series.bytes);
        for (a, b) in flow_series.iter_mut().zip(&p.flow_series) {
            add_into(a, b);
        }
        for (a, b) in ports.iter_mut().zip(&p.ports) {
            a.add(b);
        }
        ev_marks.extend(p.ev_marks);
        ev_promotions.extend(p.ev_promotions);
        queue_series.extend(p.queue_series);
    }
    ev_marks.sort_by_key(|m| (m.at_ps, m.flow, m.ev_index));
    ev_promotions.sort_by_key(|m| (m.at_ps, m.flow, m.ev_index));
    queue_series.sort_by_key(|q| (q.bin, q.node, q.port));
    let mut out = RunOutput {
        flows,
        summary,
        series,
        ev_marks,
        ev_promotions,
        queue_series,
        flow_series,
        flow_evs,
        ports,
        parts: reports,
    };
    derive_summary(topo, &mut out);
    check_accounting(&out.summary);
    out
}

/// What a run cut into parts cannot have: anything that passes between
/// hosts without crossing a link (a flow started by another's completion,
/// the receiver penalty counting flows from their senders' side), and a
/// cut through links without delay.
fn check_partitioned(cfg: &SimConfig, specs: &[FlowSpec], part: &Partition) -> Result<(), SimError> {
    let bad = |msg: String| Err(SimError::Partition(msg));
    if let Some(i) = specs.iter().position(|f| {
        f.after.is_some() || f.trigger.is_some() || f.send_done_trigger.is_some() || f.recv_done_trigger.is_some()
    }) {
        return bad(format!(
            "flow {i} depends on another flow or a trigger: run flows with dependencies in one part"
        ));
    }
    if cfg.receiver_penalty {
        return bad("the receiver penalty needs one part".into());
    }
    if part.lookahead_ps == 0 {
        return bad("a link between parts has no delay (no lookahead): run in one part".into());
    }
    Ok(())
}
