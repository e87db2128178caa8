//! Traffic: flows from htsim `.cm` connection matrices and built-in
//! generators (permutation, incast, all-to-all, ring AllReduce).

use proto::time::{Duration, Instant};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// One flow: a single RDMA WRITE (with immediate when `imm`) of `size`
/// bytes from host `src` to host `dst`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FlowSpec {
    /// Identifier reported in the results (the `.cm` id, or the index).
    pub id: u64,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    /// Earliest start.
    pub start: Instant,
    /// Also wait until the receiver of flow index `after` (an index into
    /// the flow list, not an id) has completed the WRITE-with-immediate
    /// (its RecvCompleted): the flow then starts at that instant. Used by
    /// ring AllReduce.
    pub after: Option<u32>,
    /// Send as WRITE-with-immediate (the receiver reports its completion).
    pub imm: bool,
    /// Start when this trigger (an index into the run's trigger table,
    /// `SimConfig::triggers`) fires, not at `start` (htsim `.cm` `trigger`).
    pub trigger: Option<u32>,
    /// Activate this trigger when the sender has everything acknowledged
    /// (htsim `send_done_trigger`).
    pub send_done_trigger: Option<u32>,
    /// Activate this trigger when the receiver has the whole message
    /// (htsim `recv_done_trigger`; the flow is then sent as
    /// WRITE-with-immediate, whose receive completion says so).
    pub recv_done_trigger: Option<u32>,
}

/// How an htsim `.cm` trigger starts its target flows (the flows naming it
/// with `trigger N`) when flows activate it (`send_done_trigger N`,
/// `recv_done_trigger N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum TriggerKind {
    /// The first activation starts every target; later ones do nothing.
    OneShot,
    /// Each activation starts the next target, in file order.
    MultiShot,
    /// The `count`-th activation starts every target (a barrier).
    Barrier { count: u32 },
}

/// A trigger of a `.cm` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TriggerSpec {
    /// Its id in the file.
    pub id: u32,
    pub kind: TriggerKind,
}

impl FlowSpec {
    pub fn new(id: u64, src: u32, dst: u32, size: u64, start: Instant) -> FlowSpec {
        FlowSpec {
            id,
            src,
            dst,
            size,
            start,
            after: None,
            imm: false,
            trigger: None,
            send_done_trigger: None,
            recv_done_trigger: None,
        }
    }
}

/// A malformed `.cm` file.
#[derive(Debug, thiserror::Error)]
pub enum TrafficError {
    #[error("{file}:{line}: {msg}")]
    Parse { file: String, line: usize, msg: String },
    #[error("cannot read {file}: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("invalid traffic: {0}")]
    Invalid(String),
}

/// A parsed connection matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnectionMatrix {
    pub nodes: u32,
    pub flows: Vec<FlowSpec>,
    /// The triggers the flows' trigger fields index.
    pub triggers: Vec<TriggerSpec>,
}

/// Read a `.cm` file.
pub fn read_cm(path: &std::path::Path) -> Result<ConnectionMatrix, TrafficError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| TrafficError::Io {
        file: file.clone(),
        source,
    })?;
    parse_cm(&text, &file)
}

/// Parse `.cm` text: `Nodes N`, `Connections M`, optionally `Triggers T`,
/// then one line per flow `src->dst [id N] [start <us>] size <bytes>
/// [trigger T] [send_done_trigger T] [recv_done_trigger T]` and one per
/// trigger `trigger id T oneshot|multishot|barrier [count K]` (htsim's
/// format; blank lines and `#` comments ignored; `start` may be fractional
/// microseconds and defaults to 0). A flow with `trigger` starts when that
/// trigger fires and may not have a `start`; every trigger a flow names
/// must be declared, once, with its kind; a barrier needs `count` >= 1.
/// `file` names the source in errors.
pub fn parse_cm(text: &str, file: &str) -> Result<ConnectionMatrix, TrafficError> {
    let err = |line: usize, msg: String| TrafficError::Parse {
        file: file.to_string(),
        line,
        msg,
    };
    let mut nodes: Option<u32> = None;
    let mut conns: Option<usize> = None;
    let mut n_triggers: Option<usize> = None;
    let mut flows = Vec::new();
    // Trigger ids in order of first use by a flow (then of declaration),
    // with the line of that first mention.
    let mut trig_ids: Vec<(u32, usize)> = Vec::new();
    let mut trig_index = |id: u32, line: usize| -> u32 {
        match trig_ids.iter().position(|&(t, _)| t == id) {
            Some(i) => i as u32,
            None => {
                trig_ids.push((id, line));
                (trig_ids.len() - 1) as u32
            }
        }
    };
    let mut declared: Vec<(u32, TriggerKind, usize)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let ln = i + 1;
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut toks = line.split_whitespace();
        let first = toks.next().unwrap_or("");
        if first.eq_ignore_ascii_case("nodes") {
            let v = toks.next().ok_or_else(|| err(ln, "Nodes needs a count".into()))?;
            nodes = Some(v.parse().map_err(|_| err(ln, format!("bad node count {v:?}")))?);
            continue;
        }
        if first.eq_ignore_ascii_case("connections") {
            let v = toks.next().ok_or_else(|| err(ln, "Connections needs a count".into()))?;
            conns = Some(v.parse().map_err(|_| err(ln, format!("bad connection count {v:?}")))?);
            continue;
        }
        if first.eq_ignore_ascii_case("triggers") {
            let v = toks.next().ok_or_else(|| err(ln, "Triggers needs a count".into()))?;
            n_triggers = Some(v.parse().map_err(|_| err(ln, format!("bad trigger count {v:?}")))?);
            continue;
        }
        if first == "trigger" {
            let mut id: Option<u32> = None;
            let mut kind: Option<&str> = None;
            let mut count: Option<u32> = None;
            while let Some(k) = toks.next() {
                match k {
                    "id" | "count" => {
                        let v = toks.next().ok_or_else(|| err(ln, format!("{k} needs a value")))?;
                        let n: u32 = v.parse().map_err(|_| err(ln, format!("bad {k} {v:?}")))?;
                        if k == "id" {
                            id = Some(n);
                        } else {
                            count = Some(n);
                        }
                    }
                    "oneshot" | "multishot" | "barrier" => {
                        if let Some(other) = kind {
                            return Err(err(ln, format!("trigger is both {other} and {k}")));
                        }
                        kind = Some(k);
                    }
                    _ => return Err(err(ln, format!("unknown trigger field {k:?}"))),
                }
            }
            let id = id.ok_or_else(|| err(ln, "trigger without an id".into()))?;
            let kind = match (kind, count) {
                (None, _) => {
                    return Err(err(
                        ln,
                        format!("trigger {id} without a kind (oneshot, multishot, barrier)"),
                    ))
                }
                (Some("barrier"), Some(c)) if c >= 1 => TriggerKind::Barrier { count: c },
                (Some("barrier"), _) => return Err(err(ln, format!("barrier trigger {id} needs count >= 1"))),
                (Some(k), Some(_)) => return Err(err(ln, format!("count on a {k} trigger (barriers only)"))),
                (Some("oneshot"), None) => TriggerKind::OneShot,
                (Some(_), None) => TriggerKind::MultiShot,
            };
            if declared.iter().any(|&(d, _, _)| d == id) {
                return Err(err(ln, format!("trigger {id} declared twice")));
            }
            declared.push((id, kind, ln));
            continue;
        }
        let (s, d) = first
            .split_once("->")
            .ok_or_else(|| err(ln, format!("expected src->dst, got {first:?}")))?;
        let src: u32 = s.parse().map_err(|_| err(ln, format!("bad source {s:?}")))?;
        let dst: u32 = d.parse().map_err(|_| err(ln, format!("bad destination {d:?}")))?;
        let mut id = None;
        let mut start = None;
        let mut size = None;
        let (mut trigger, mut send_done, mut recv_done) = (None, None, None);
        while let Some(k) = toks.next() {
            let v = toks.next().ok_or_else(|| err(ln, format!("{k} needs a value")))?;
            let trigger_id = || v.parse::<u32>().map_err(|_| err(ln, format!("bad {k} {v:?}")));
            match k {
                "id" => id = Some(v.parse::<u64>().map_err(|_| err(ln, format!("bad id {v:?}")))?),
                "start" => {
                    let us: f64 = v.parse().map_err(|_| err(ln, format!("bad start {v:?}")))?;
                    if !(us.is_finite() && us >= 0.0) {
                        return Err(err(ln, format!("bad start {v:?}")));
                    }
                    start = Some(Instant((us * 1e6).round() as u64));
                }
                "size" => size = Some(v.parse::<u64>().map_err(|_| err(ln, format!("bad size {v:?}")))?),
                "trigger" => trigger = Some(trig_index(trigger_id()?, ln)),
                "send_done_trigger" => send_done = Some(trig_index(trigger_id()?, ln)),
                "recv_done_trigger" => recv_done = Some(trig_index(trigger_id()?, ln)),
                _ => return Err(err(ln, format!("unknown field {k:?}"))),
            }
        }
        let size = size.ok_or_else(|| err(ln, "missing size".into()))?;
        if size == 0 {
            return Err(err(ln, "size must be positive".into()));
        }
        if src == dst {
            return Err(err(ln, format!("flow from host {src} to itself")));
        }
        if trigger.is_some() && start.is_some() {
            return Err(err(ln, "both a start time and a trigger".into()));
        }
        if let Some(n) = nodes {
            if src >= n || dst >= n {
                return Err(err(ln, format!("host out of range (Nodes {n})")));
            }
        }
        let idx = flows.len() as u64;
        let mut f = FlowSpec::new(id.unwrap_or(idx), src, dst, size, start.unwrap_or(Instant::ZERO));
        f.trigger = trigger;
        f.send_done_trigger = send_done;
        f.recv_done_trigger = recv_done;
        // The receive completion of a WRITE-with-immediate is what says the
        // receiver has it all.
        f.imm = recv_done.is_some();
        flows.push(f);
    }
    let nodes = nodes.ok_or_else(|| err(0, "missing Nodes line".into()))?;
    if let Some(c) = conns {
        if c != flows.len() {
            return Err(err(0, format!("Connections says {c}, file has {}", flows.len())));
        }
    }
    for &(id, _, ln) in &declared {
        trig_index(id, ln);
    }
    let mut triggers = Vec::with_capacity(trig_ids.len());
    for &(id, first_use) in &trig_ids {
        let kind = declared
            .iter()
            .find(|d| d.0 == id)
            .map(|d| d.1)
            .ok_or_else(|| err(first_use, format!("trigger {id} is never declared")))?;
        triggers.push(TriggerSpec { id, kind });
    }
    if let Some(t) = n_triggers {
        if t != declared.len() {
            return Err(err(0, format!("Triggers says {t}, file has {}", declared.len())));
        }
    }
    Ok(ConnectionMatrix { nodes, flows, triggers })
}

/// Write flows and the triggers their trigger fields index (as
/// `ConnectionMatrix::triggers`) in `.cm` format. [`parse_cm`] reads back
/// the same flows and triggers when the table is in the order it builds
/// (first use by a flow, then declaration); another order comes back
/// reordered, with the flows' indices to match. A flow started by a
/// trigger has no start time (htsim allows one or the other); `after`
/// chains and `imm` without a `recv_done_trigger` have no `.cm` form and
/// are not written; a trigger index outside the table is written as the
/// index, which `parse_cm` refuses as undeclared.
pub fn write_cm(nodes: u32, flows: &[FlowSpec], triggers: &[TriggerSpec]) -> String {
    let mut s = format!("Nodes {nodes}\nConnections {}\n", flows.len());
    if !triggers.is_empty() {
        s.push_str(&format!("Triggers {}\n", triggers.len()));
        for t in triggers {
            let kind = match t.kind {
                TriggerKind::OneShot => "oneshot".to_string(),
                TriggerKind::MultiShot => "multishot".to_string(),
                TriggerKind::Barrier { count } => format!("barrier count {count}"),
            };
            s.push_str(&format!("trigger id {} {kind}\n", t.id));
        }
    }
    // A trigger index the table does not have is written as the index.
    let id = |i: u32| triggers.get(i as usize).map_or(i, |t| t.id);
    for f in flows {
        s.push_str(&format!("{}->{} id {}", f.src, f.dst, f.id));
        match f.trigger {
            Some(t) => s.push_str(&format!(" trigger {}", id(t))),
            None => s.push_str(&format!(" start {}", f.start.as_ps() as f64 / 1e6)),
        }
        s.push_str(&format!(" size {}", f.size));
        if let Some(t) = f.send_done_trigger {
            s.push_str(&format!(" send_done_trigger {}", id(t)));
        }
        if let Some(t) = f.recv_done_trigger {
            s.push_str(&format!(" recv_done_trigger {}", id(t)));
        }
        s.push('\n');
    }
    s
}

/// A random permutation: every host sends `size` bytes to a distinct host
/// (never itself), all at `start`.
pub fn permutation(hosts: u32, size: u64, seed: u64) -> Vec<FlowSpec> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut dst: Vec<u32> = (0..hosts).collect();
    if hosts < 2 {
        return Vec::new();
    }
    // Shuffle until derangement-free of fixed points by repair: swap each
    // fixed point with its neighbour (keeps it a permutation).
    dst.shuffle(&mut rng);
    for i in 0..hosts as usize {
        if dst[i] == i as u32 {
            let j = (i + 1) % hosts as usize;
            dst.swap(i, j);
        }
    }
    for i in 0..hosts as usize {
        if dst[i] == i as u32 {
            let j = (i + hosts as usize - 1) % hosts as usize;
            dst.swap(i, j);
        }
    }
    (0..hosts)
        .map(|s| FlowSpec::new(s as u64, s, dst[s as usize], size, Instant::ZERO))
        .collect()
}

/// `senders` hosts (0.., skipping `dst`) each send `size` bytes to `dst`.
pub fn incast(hosts: u32, senders: u32, dst: u32, size: u64) -> Vec<FlowSpec> {
    (0..hosts)
        .filter(|&h| h != dst)
        .take(senders as usize)
        .enumerate()
        .map(|(i, s)| FlowSpec::new(i as u64, s, dst, size, Instant::ZERO))
        .collect()
}

/// Every host sends `size` bytes to every other host.
pub fn all_to_all(hosts: u32, size: u64) -> Vec<FlowSpec> {
    let mut v = Vec::new();
    for s in 0..hosts {
        for d in 0..hosts {
            if s != d {
                v.push(FlowSpec::new(v.len() as u64, s, d, size, Instant::ZERO));
            }
        }
    }
    v
}

/// Ring AllReduce of `size` bytes over `hosts` (host i sends to i+1):
/// `2(N-1)` steps of `size/N` bytes each; the step-`k+1` send of host `i`
/// starts when host `i` has received its step-`k` chunk from host `i-1`.
/// Flow index = step * N + i.
pub fn ring_allreduce(hosts: u32, size: u64) -> Vec<FlowSpec> {
    let n = hosts as u64;
    let chunk = size.div_ceil(n).max(1);
    let steps = 2 * (n - 1);
    let mut v = Vec::new();
    for k in 0..steps {
        for i in 0..n {
            let after = (k > 0).then(|| ((k - 1) * n + (i + n - 1) % n) as u32);
            v.push(FlowSpec {
                id: k * n + i,
                src: i as u32,
                dst: ((i + 1) % n) as u32,
                size: chunk,
                start: Instant::ZERO,
                after,
                imm: true,
                trigger: None,
                send_done_trigger: None,
                recv_done_trigger: None,
            });
        }
    }
    v
}

/// Ideal ring AllReduce time: `2(N-1)/N x S / B`.
pub fn ring_allreduce_ideal(hosts: u32, size: u64, gbps: f64) -> Duration {
    let n = hosts as f64;
    let secs = 2.0 * (n - 1.0) / n * size as f64 * 8.0 / (gbps * 1e9);
    Duration::from_ps((secs * 1e12).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cm_round_trip_and_errors() {
        let t = "Nodes 4\nConnections 2\n0->1 id 7 start 0 size 100\n2->3 start 1.5 size 5\n";
        let cm = parse_cm(t, "x.cm").unwrap();
        assert_eq!(cm.flows[0].id, 7);
        assert_eq!(cm.flows[1].start, Instant(1_500_000));
        assert_eq!(parse_cm(&write_cm(4, &cm.flows, &[]), "y").unwrap().flows, cm.flows);
        // Triggers survive the round trip: kinds, ids and every flow field.
        let t = "Nodes 4\nTriggers 3\ntrigger id 9 barrier count 2\ntrigger id 4 multishot\n\
                 trigger id 5 oneshot\n0->1 id 1 start 0 size 100 send_done_trigger 9\n\
                 2->3 id 2 start 0 size 100 recv_done_trigger 9\n1->2 id 3 trigger 9 size 50 send_done_trigger 4\n\
                 3->0 id 4 trigger 4 size 10 recv_done_trigger 5\n0->2 id 5 trigger 5 size 10\n";
        let cm = parse_cm(t, "t.cm").unwrap();
        let again = parse_cm(&write_cm(4, &cm.flows, &cm.triggers), "again.cm").unwrap();
        assert_eq!(again, cm);
        let e = parse_cm("Nodes 4\n0->9 size 1\n", "z.cm").unwrap_err().to_string();
        assert!(e.starts_with("z.cm:2:"), "{e}");
        let e = parse_cm("Nodes 4\n0-1 size 1\n", "z.cm").unwrap_err().to_string();
        assert!(e.starts_with("z.cm:2:"), "{e}");
        let e = parse_cm("Nodes 4\n0->1 size x\n", "z.cm").unwrap_err().to_string();
        assert!(e.contains(":2:"), "{e}");
    }

    #[test]
    fn permutation_is_a_derangement() {
        for seed in 0..20 {
            let p = permutation(16, 1, seed);
            let mut d: Vec<u32> = p.iter().map(|f| f.dst).collect();
            assert!(p.iter().all(|f| f.src != f.dst));
            d.sort();
            assert_eq!(d, (0..16).collect::<Vec<_>>());
        }
    }
}
