//! Outputs: per-flow records, the summary, the goodput time series,
//! conservation accounting; CSV and JSON writers.

use proto::time::{Duration, Instant};

use super::net::PortStats;

/// One flow's outcome.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FlowRecord {
    pub id: u64,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    /// When it started (its start time, or the trigger for chained flows).
    pub start_ps: Option<u64>,
    /// When the requester got its successful SendCompleted.
    pub end_ps: Option<u64>,
    /// When the receiver completed (WRITE-with-immediate flows).
    pub recv_end_ps: Option<u64>,
    pub fct_ps: Option<u64>,
    /// size / FCT, Gb/s.
    pub goodput_gbps: Option<f64>,
    pub retransmissions: u64,
    pub timeouts: u64,
    /// EV transitions into ASSUMED_BAD on the requester.
    pub ev_marked_bad: u64,
    /// The requester QP went to ERR.
    pub error: bool,
}

/// Counter identity over every packet handed to the fabric.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Conservation {
    /// Packets the NICs took from QPs.
    pub injected: u64,
    /// Delivered intact to a host.
    pub delivered: u64,
    /// Delivered to a host as a trimmed header.
    pub trimmed_delivered: u64,
    /// Dropped anywhere (every reason).
    pub dropped: u64,
    /// Still in the fabric when the run stopped.
    pub in_flight: u64,
}

impl Conservation {
    /// `injected == delivered + trimmed_delivered + dropped + in_flight`.
    pub fn balanced(&self) -> bool {
        self.injected == self.delivered + self.trimmed_delivered + self.dropped + self.in_flight
    }
    /// Add another part's counts (a run cut into parts).
    pub fn add(&mut self, o: &Conservation) {
        self.injected += o.injected;
        self.delivered += o.delivered;
        self.trimmed_delivered += o.trimmed_delivered;
        self.dropped += o.dropped;
        self.in_flight += o.in_flight;
    }
}

/// Whole-run figures.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    pub flows: usize,
    pub flows_completed: usize,
    pub fct_p50_us: Option<f64>,
    pub fct_p99_us: Option<f64>,
    pub fct_max_us: Option<f64>,
    /// Mean per-flow goodput, % of the source's line rate.
    pub mean_goodput_pct: Option<f64>,
    pub drops: u64,
    pub drop_overflow: u64,
    pub drop_link_down: u64,
    pub drop_loss: u64,
    pub drop_blackhole: u64,
    pub drop_no_route: u64,
    /// Packets trimmed by switches.
    pub trims: u64,
    /// Of `trims`, at the last hop (the port to the destination host).
    pub trims_last_hop: u64,
    /// PFC pause frames sent (XOFF), all links (`SwitchConfig::pfc`).
    #[serde(default)]
    pub pfc_pauses: u64,
    pub ecn_marks: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    /// EV transitions into ASSUMED_BAD, all QPs.
    pub ev_marked_bad: u64,
    /// Backup EVs that took the place of an EV leaving GOOD, all QPs
    /// (`SimConfig::backup_evs`).
    #[serde(default)]
    pub ev_promoted: u64,
    /// Reverse EV sets emptied by a probe or a duplicate, all responders
    /// (`SimConfig::reverse_evs_per_plane`).
    #[serde(default)]
    pub reverse_evictions: u64,
    /// Port Status Updates sent (QPN 0x2, `SimConfig::port_status`), and
    /// requester QPs that denied or allowed EVs on receiving one.
    #[serde(default)]
    pub port_status_updates: u64,
    #[serde(default)]
    pub port_status_applied: u64,
    /// QPs that went to ERR.
    pub qp_errors: u64,
    pub events: u64,
    pub sim_time_us: f64,
    /// Last flow completion, us (makespan).
    pub last_completion_us: Option<f64>,
    pub conservation: Conservation,
    /// Largest switch data queue seen, bytes.
    pub max_queue_bytes: u64,
    /// Packets delivered to a host for a QP already freed (its flow had
    /// finished): late duplicates and ACKs (counted in `delivered`).
    pub stale_packets: u64,
    /// Largest number of packets in flight at once.
    pub peak_packets: usize,
}

/// Delivered payload bytes (data packets reaching their destination
/// intact, retransmissions included) per time bin.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GoodputSeries {
    pub bin_ps: u64,
    pub bytes: Vec<u64>,
}

impl GoodputSeries {
    /// Gb/s of bin `i`.
    pub fn gbps(&self, i: usize) -> f64 {
        self.bytes.get(i).copied().unwrap_or(0) as f64 * 8.0 / (self.bin_ps as f64 / 1000.0)
    }
}

/// The deepest data queue one switch port held in one bin of the series
/// (`SimConfig::queue_series`), as packets arriving in that bin found it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QueueSample {
    /// Bin index (`GoodputSeries::bin_ps` wide).
    pub bin: u32,
    /// The switch and its port.
    pub node: u32,
    pub port: u16,
    pub max_bytes: u64,
}

/// An EV marked ASSUMED_BAD.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EvMark {
    /// Flow index.
    pub flow: u32,
    pub ev_index: u16,
    /// Its entropy value.
    pub ev: u32,
    pub at_ps: u64,
    pub reason: proto::model::ev::EvChangeReason,
}

/// Everything a run produces.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunOutput {
    pub flows: Vec<FlowRecord>,
    pub summary: Summary,
    pub series: GoodputSeries,
    pub ev_marks: Vec<EvMark>,
    /// Backup EVs promoted on requesters (reason `Promoted`), in time order.
    pub ev_promotions: Vec<EvMark>,
    /// Switch data queues per bin (`SimConfig::queue_series`; empty if off),
    /// ordered by bin.
    pub queue_series: Vec<QueueSample>,
    /// Payload bytes delivered intact per bin to each of the first
    /// `SimConfig::flow_series` flows (index = flow).
    pub flow_series: Vec<Vec<u64>>,
    /// Each flow's EV values, in EV-index order (empty if it never started).
    #[serde(skip)]
    pub flow_evs: Vec<Vec<u32>>,
    /// Per-port counters (global port order: node by node).
    #[serde(skip)]
    pub ports: Vec<PortStats>,
    /// How each part of the run spent its time, in part order (one entry
    /// for a run in one part). Wall clock: for benchmarks, never in the
    /// written outputs.
    #[serde(skip)]
    pub parts: Vec<PartReport>,
}

/// What one part of a run did, and how long it waited for the others.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PartReport {
    pub rank: u32,
    /// Nodes (hosts and switches) it simulated.
    pub nodes: u32,
    pub events: u64,
    /// Synchronisation windows (one for a run in one part).
    pub windows: u64,
    /// Wall time handling events, s.
    pub busy_s: f64,
    /// Wall time in the window's reduction and exchange (waiting for the
    /// slowest part, and moving the events), s.
    pub wait_s: f64,
    /// Bytes of events sent to other parts.
    pub mail_bytes: u64,
    /// Peak resident memory of its process (`VmHWM`; shared by the parts
    /// of one process when they are threads).
    pub peak_rss_bytes: Option<u64>,
}

fn pct(sorted: &[u64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    Some(sorted[i] as f64 / 1e6)
}

/// Percentiles (nearest rank) of FCTs in ps, reported in us.
pub fn fct_percentiles(flows: &[FlowRecord]) -> (Option<f64>, Option<f64>, Option<f64>) {
    let mut f: Vec<u64> = flows.iter().filter_map(|r| r.fct_ps).collect();
    f.sort_unstable();
    (pct(&f, 0.5), pct(&f, 0.99), f.last().map(|&x| x as f64 / 1e6))
}

/// Per-flow CSV (one header line, one line per flow, fixed formatting).
pub fn flows_csv(flows: &[FlowRecord]) -> String {
    let mut s = String::from(
        "id,src,dst,size,start_us,end_us,recv_end_us,fct_us,goodput_gbps,retransmissions,timeouts,ev_marked_bad,error\n",
    );
    let us = |v: Option<u64>| v.map(|x| format!("{:.6}", x as f64 / 1e6)).unwrap_or_default();
    for f in flows {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            f.id,
            f.src,
            f.dst,
            f.size,
            us(f.start_ps),
            us(f.end_ps),
            us(f.recv_end_ps),
            us(f.fct_ps),
            f.goodput_gbps.map(|g| format!("{g:.4}")).unwrap_or_default(),
            f.retransmissions,
            f.timeouts,
            f.ev_marked_bad,
            f.error as u8
        ));
    }
    s
}

/// Summary as pretty JSON.
pub fn summary_json(s: &Summary) -> String {
    serde_json::to_string_pretty(s).expect("summary serialises")
}

/// Write the per-flow CSV.
pub fn write_flows_csv(path: &std::path::Path, flows: &[FlowRecord]) -> std::io::Result<()> {
    std::fs::write(path, flows_csv(flows))
}

/// The fabric's goodput series as CSV: `bin_start_us,goodput_gbps`.
pub fn goodput_csv(series: &GoodputSeries) -> String {
    let mut s = String::from("bin_start_us,goodput_gbps\n");
    for i in 0..series.bytes.len() {
        s.push_str(&format!("{:.3},{:.3}\n", bin_us(series.bin_ps, i), series.gbps(i)));
    }
    s
}

/// EV events of the requesters as CSV: `at_us,flow,ev_index,ev,event,reason`
/// (event `assumed_bad` or `promoted`), in time order.
pub fn ev_events_csv(marks: &[EvMark], promotions: &[EvMark]) -> String {
    let mut all: Vec<(&EvMark, &str)> = marks
        .iter()
        .map(|m| (m, "assumed_bad"))
        .chain(promotions.iter().map(|m| (m, "promoted")))
        .collect();
    all.sort_by_key(|(m, _)| (m.at_ps, m.flow, m.ev_index));
    let mut s = String::from("at_us,flow,ev_index,ev,event,reason\n");
    for (m, event) in all {
        s.push_str(&format!(
            "{:.6},{},{},{:#x},{},{:?}\n",
            m.at_ps as f64 / 1e6,
            m.flow,
            m.ev_index,
            m.ev,
            event,
            m.reason
        ));
    }
    s
}

/// The queue series as CSV: `bin_start_us,node,port,max_queue_bytes`.
pub fn queues_csv(samples: &[QueueSample], bin_ps: u64) -> String {
    let mut s = String::from("bin_start_us,node,port,max_queue_bytes\n");
    for q in samples {
        s.push_str(&format!(
            "{:.3},{},{},{}\n",
            bin_us(bin_ps, q.bin as usize),
            q.node,
            q.port,
            q.max_bytes
        ));
    }
    s
}

/// The per-flow goodput series as CSV: `flow,bin_start_us,goodput_gbps`,
/// the bins in which a flow received something.
pub fn flow_goodput_csv(flows: &[Vec<u64>], bin_ps: u64) -> String {
    let mut s = String::from("flow,bin_start_us,goodput_gbps\n");
    for (f, bins) in flows.iter().enumerate() {
        for (i, &b) in bins.iter().enumerate().filter(|(_, &b)| b > 0) {
            let gbps = b as f64 * 8.0 / (bin_ps as f64 / 1000.0);
            s.push_str(&format!("{f},{:.3},{gbps:.3}\n", bin_us(bin_ps, i)));
        }
    }
    s
}

fn bin_us(bin_ps: u64, i: usize) -> f64 {
    (bin_ps as f64 * i as f64) / 1e6
}

/// Write the summary JSON.
pub fn write_summary_json(path: &std::path::Path, s: &Summary) -> std::io::Result<()> {
    std::fs::write(path, summary_json(s))
}

/// Time helpers for callers.
pub fn us(d: Duration) -> f64 {
    d.as_ps() as f64 / 1e6
}

/// Instant in us.
pub fn at_us(t: Instant) -> f64 {
    t.as_ps() as f64 / 1e6
}
