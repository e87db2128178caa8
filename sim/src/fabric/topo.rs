//! Topologies: leaf-spine (2 tiers) and fat trees (3 tiers), with
//! oversubscription and multiple planes, built from parameters or read from
//! htsim `.topo` files; plus the ECMP routing tables.
//!
//! CONTRACT FILE: the types and signatures below are what the simulator
//! engine uses. Additions since the contract: `Default for TopoParams`,
//! `BuildKnobs` with `Topology::build_with`, `Topology::from_htsim_str`.
//! Model, `.topo` mapping and routing: `docs/sim-topology.md`.

use proto::time::Duration;

/// Index of a node in [`Topology::nodes`]. Hosts come first: node `h` for
/// `h < n_hosts` is host `h`.
pub type NodeId = u32;
/// Index of a port within its node.
pub type PortId = u16;

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum NodeKind {
    /// An end host (a NIC port per plane).
    Host,
    /// A switch at `tier` (0 = top of rack / leaf, 1 = aggregation or spine,
    /// 2 = core) in `plane`.
    Switch { tier: u8, plane: u8 },
}

/// One end of a link: a port and the port it is cabled to.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Port {
    pub peer: NodeId,
    pub peer_port: PortId,
    /// Rate of this direction (the port's output), Gb/s.
    pub gbps: f64,
    /// Propagation delay to the peer.
    pub latency: Duration,
}

/// A node and its ports.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Node {
    pub kind: NodeKind,
    pub ports: Vec<Port>,
    /// Forwarding delay inside the node (switch latency; 0 for hosts).
    pub latency: Duration,
}

/// Parameters of a generated topology.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TopoParams {
    /// 2 = leaf-spine, 3 = fat tree.
    pub tiers: u8,
    pub hosts: u32,
    /// Host link rate, Gb/s (switch-to-switch links run at the same rate
    /// unless the .topo file says otherwise).
    pub link_gbps: f64,
    /// Per-link propagation delay.
    pub link_latency: Duration,
    pub switch_latency: Duration,
    /// Downlinks : uplinks at the ToR (1 = non-blocking, 4 = 4:1).
    pub oversubscription: u32,
    /// Parallel planes (a NIC split into `planes` ports, each into its own
    /// copy of the switch fabric).
    pub planes: u8,
}

impl Default for TopoParams {
    /// The 1024-host, 3-tier, non-blocking fat tree of the htsim anchors:
    /// 100 Gb/s, 1 us per link, no switch latency, one plane.
    fn default() -> TopoParams {
        TopoParams {
            tiers: 3,
            hosts: 1024,
            link_gbps: 100.0,
            link_latency: Duration::from_ns(1000),
            switch_latency: Duration::ZERO,
            oversubscription: 1,
            planes: 1,
        }
    }
}

/// Optional knobs for [`Topology::build_with`], kept out of [`TopoParams`]
/// so that existing struct literals keep compiling.
///
/// Radix rule when `hosts_per_tor` is `None` (oversubscription `o`):
/// * 3 tiers: a k-ary fat tree of even radix `K = 2u`, the smallest with
///   `2*o*u^3 >= hosts`: `o*u` hosts and `u` uplinks per ToR, `u` ToRs and
///   `u` aggregation switches per pod, `u*u` cores each with one link to every
///   pod. 128 hosts: u = 4; 1024: u = 8; 8192: u = 16 (as htsim's default).
/// * 2 tiers: `h` hosts per leaf, the smallest power of two with
///   `h*h >= hosts` (and `h >= o`), `h/o` uplinks, one spine per uplink, each
///   spine linked to every leaf. 1024 hosts, 4:1: 32 leaves of 32 hosts with
///   8 uplinks, 8 spines of radix 32.
///
/// With `hosts_per_tor = Some(h)`: `u = h/o` uplinks per ToR, and for 3 tiers
/// `u` ToRs and `u` aggs per pod and `u*u` cores.
///
/// Host counts that do not fill the fabric fill ToRs in order; the last ToR
/// and pod may be partial (switches above keep their full count).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BuildKnobs {
    #[serde(default)]
    pub hosts_per_tor: Option<u32>,
}

/// Why a topology could not be built or read.
#[derive(Debug, thiserror::Error)]
pub enum TopoError {
    #[error("{file}:{line}: {msg}")]
    Parse { file: String, line: usize, msg: String },
    #[error("invalid topology: {0}")]
    Invalid(String),
    #[error("cannot read {file}: {source}")]
    Io { file: String, source: std::io::Error },
}

/// A built fabric with its routing tables.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Topology {
    pub nodes: Vec<Node>,
    pub n_hosts: u32,
    pub planes: u8,
    /// Human-readable description ("3-tier fat tree, 1024 hosts, ...").
    pub description: String,
    #[serde(skip)]
    routes: Routes,
}

/// ECMP tables. Leaves are the switches hosts hang off; a switch routes to
/// a host through the host's leaf in its own plane, so tables are per
/// (switch, leaf) rather than per (switch, host): 8x smaller for 8 hosts
/// per leaf.
#[derive(Clone, Debug, Default)]
struct Routes {
    /// `host_leaf[h * planes + p]`: the leaf switch of host `h` in plane `p`.
    host_leaf: Vec<NodeId>,
    /// `host_down[h * planes + p]`: that leaf's port to `h`.
    host_down: Vec<PortId>,
    /// Index of each node among the leaves of its plane (`u32::MAX` if not
    /// a leaf).
    leaf_index: Vec<u32>,
    /// Most leaves in one plane.
    n_leaves: usize,
    /// `spans[(node - n_hosts) * n_leaves + leaf_index[leaf]]` = range of
    /// `ports` with the ECMP group of switch `node` toward `leaf` of the same
    /// plane. Indexed by switch and per-plane leaf so that hosts and other
    /// planes cost nothing (8192 hosts, 3 tiers: 1280 x 512 entries).
    spans: Vec<(u32, u16)>,
    ports: Vec<PortId>,
    /// Every port of each host (one per plane), as a span of `ports`.
    host_ports: Vec<(u32, u16)>,
}

impl Topology {
    /// Build from parameters, choosing radices by the rule in
    /// [`BuildKnobs`] (k-ary fat tree for 3 tiers, square-ish leaf-spine for
    /// 2 tiers). Same as [`Topology::build_with`] with default knobs.
    pub fn build(p: &TopoParams) -> Result<Topology, TopoError> {
        Topology::build_with(p, &BuildKnobs::default())
    }

    /// Build from parameters with extra knobs.
    pub fn build_with(p: &TopoParams, k: &BuildKnobs) -> Result<Topology, TopoError> {
        Topology::clos(p, k)?.build(format!("oversubscription {}:1", p.oversubscription))
    }

    /// Memory the topology built from `p` (default knobs) takes, in bytes,
    /// computed from its shape without building it: nodes, ports and the
    /// per-(switch, leaf) ECMP table, which grows faster than the host count
    /// (switches x leaves). Lets a caller refuse a fabric that cannot fit.
    pub fn estimated_bytes(p: &TopoParams) -> Result<u64, TopoError> {
        Topology::estimated_bytes_with(p, &BuildKnobs::default())
    }

    /// [`Topology::estimated_bytes`] of the topology built with knobs `k`.
    pub fn estimated_bytes_with(p: &TopoParams, k: &BuildKnobs) -> Result<u64, TopoError> {
        let c = Topology::clos(p, k)?;
        let (hosts, planes) = (c.hosts as u64, c.planes as u64);
        let tors = hosts.div_ceil(c.hpt as u64);
        let mids = c.pods as u64 * c.mid_per_pod as u64;
        let cores = if c.tiers == 3 { c.cores as u64 } else { 0 };
        let switches = planes * (tors + mids + cores);
        // Every link has a port at each end: host links, ToR and tier-1 uplinks.
        let links = planes * (hosts + tors * c.tor_up as u64 + mids * c.mid_up as u64);
        let ecmp_entries = switches * tors;
        let nodes = (hosts + switches) * std::mem::size_of::<Node>() as u64;
        let ports = 2 * links * (std::mem::size_of::<Port>() + std::mem::size_of::<PortId>()) as u64;
        Ok(nodes + ports + ecmp_entries * std::mem::size_of::<(u32, u16)>() as u64)
    }

    /// The Clos shape [`Topology::build_with`] builds (see [`BuildKnobs`]).
    fn clos(p: &TopoParams, k: &BuildKnobs) -> Result<Clos, TopoError> {
        let bad = |m: String| Err(TopoError::Invalid(m));
        if p.hosts == 0 {
            return bad("no hosts".into());
        }
        if p.planes == 0 {
            return bad("planes must be at least 1".into());
        }
        if p.oversubscription == 0 || p.oversubscription > PortId::MAX as u32 {
            return bad(format!("oversubscription {} (1..=65535)", p.oversubscription));
        }
        if k.hosts_per_tor.is_some_and(|h| h > PortId::MAX as u32) {
            return bad("hosts_per_tor above 65535".into());
        }
        if !(p.link_gbps > 0.0 && p.link_gbps.is_finite()) {
            return bad(format!("link rate {} Gb/s", p.link_gbps));
        }
        let o = p.oversubscription;
        let tiers = p.tiers;
        let (hpt, up) = match (tiers, k.hosts_per_tor) {
            (2 | 3, Some(h)) => {
                if h == 0 || !divides(o, h) {
                    return bad(format!(
                        "hosts_per_tor {h} not a positive multiple of oversubscription {o}"
                    ));
                }
                (h, h / o)
            }
            (3, None) => {
                // k-ary fat tree of even radix K = 2u: u uplinks per ToR,
                // o*u hosts per ToR, u ToRs and u aggs per pod, 2u pods,
                // u*u cores: 2*o*u^3 hosts. Smallest u that fits.
                let mut u = 1u64;
                while 2 * o as u64 * u * u * u < p.hosts as u64 {
                    u += 1;
                }
                ((o as u64 * u) as u32, u as u32)
            }
            (2, None) => {
                // Hosts per leaf: smallest power of two >= sqrt(hosts), at
                // least the oversubscription; uplinks = that / o.
                let mut h = 1u32;
                while (h as u64) * (h as u64) < p.hosts as u64 || h < o {
                    h *= 2;
                }
                let h = h.div_ceil(o) * o;
                (h, h / o)
            }
            (t, _) => return bad(format!("{t} tiers (2 or 3 supported)")),
        };
        let tors = p.hosts.div_ceil(hpt);
        let (tors_per_pod, mid_per_pod, cores) = if tiers == 3 { (up, up, up * up) } else { (tors, up, 0) };
        let pods = tors.div_ceil(tors_per_pod);
        let tier = TierLinks {
            gbps: p.link_gbps,
            latency: p.link_latency,
            switch_latency: p.switch_latency,
        };
        Ok(Clos {
            tiers,
            hosts: p.hosts,
            hpt,
            tor_up: up,
            tors_per_pod,
            pods,
            mid_per_pod,
            b1: 1,
            mid_up: if tiers == 3 { up } else { 0 },
            cores,
            b2: 1,
            tier: [tier; 3],
            planes: p.planes,
        })
    }

    /// Read an htsim `.topo` file (see `../shared/anchors/htsim/README.md`
    /// and `docs/sim-topology.md` for how it maps to a fabric).
    pub fn from_htsim_file(path: &std::path::Path, planes: u8) -> Result<Topology, TopoError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| TopoError::Io {
            file: file.clone(),
            source,
        })?;
        Topology::from_htsim_str(&text, &file, planes)
    }

    /// Parse htsim `.topo` text; `file` names it in errors.
    pub fn from_htsim_str(text: &str, file: &str, planes: u8) -> Result<Topology, TopoError> {
        let f = HtsimFile::parse(text, file)?;
        let c = f.to_clos(planes)?;
        c.build(format!("from {file}"))
    }

    /// A topology from explicit nodes (hosts first), with its ECMP tables
    /// computed by breadth-first search from every leaf. Checks that links
    /// are cabled symmetrically, that every host has exactly one port per
    /// plane into a switch of that plane, and that every leaf reaches every
    /// other leaf of its plane.
    pub fn from_nodes(nodes: Vec<Node>, n_hosts: u32, planes: u8, description: String) -> Result<Topology, TopoError> {
        let bad = |m: String| Err(TopoError::Invalid(m));
        let n = nodes.len();
        let planes_n = planes.max(1) as usize;
        if (n_hosts as usize) > n {
            return bad(format!("{n_hosts} hosts but only {n} nodes"));
        }
        for (i, node) in nodes.iter().enumerate() {
            let is_host = i < n_hosts as usize;
            if is_host != (node.kind == NodeKind::Host) {
                return bad(format!("node {i}: hosts must come first, and only hosts"));
            }
            for (pi, port) in node.ports.iter().enumerate() {
                let back = nodes
                    .get(port.peer as usize)
                    .and_then(|p| p.ports.get(port.peer_port as usize));
                if !matches!(back, Some(b) if b.peer as usize == i && b.peer_port as usize == pi) {
                    return bad(format!("node {i} port {pi}: not cabled back symmetrically"));
                }
            }
        }
        let plane_of = |id: NodeId| match nodes[id as usize].kind {
            NodeKind::Switch { plane, .. } => Some(plane as usize),
            NodeKind::Host => None,
        };
        let mut host_leaf = vec![u32::MAX; n_hosts as usize * planes_n];
        let mut host_down = vec![0; n_hosts as usize * planes_n];
        let mut ports = Vec::new();
        let mut host_ports = Vec::with_capacity(n_hosts as usize);
        for h in 0..n_hosts as usize {
            let start = ports.len() as u32;
            for (pi, port) in nodes[h].ports.iter().enumerate() {
                let Some(p) = plane_of(port.peer).filter(|&p| p < planes_n) else {
                    return bad(format!("host {h} port {pi} does not lead to a switch of a valid plane"));
                };
                if host_leaf[h * planes_n + p] != u32::MAX {
                    return bad(format!("host {h} has two ports in plane {p}"));
                }
                host_leaf[h * planes_n + p] = port.peer;
                host_down[h * planes_n + p] = port.peer_port;
                ports.push(pi as PortId);
            }
            if ports.len() - start as usize != planes_n {
                return bad(format!("host {h} needs one port per plane ({planes_n})"));
            }
            host_ports.push((start, planes_n as u16));
        }
        let mut leaf_index = vec![u32::MAX; n];
        let mut leaves = Vec::new();
        let mut per_plane = vec![0u32; planes_n];
        for &l in &host_leaf {
            if leaf_index[l as usize] == u32::MAX {
                let p = plane_of(l).unwrap_or(0);
                leaf_index[l as usize] = per_plane[p];
                per_plane[p] += 1;
                leaves.push(l);
            }
        }
        let n_leaves = per_plane.iter().copied().max().unwrap_or(0) as usize;
        let hs = n_hosts as usize;
        let mut spans = vec![(0u32, 0u16); (n - hs) * n_leaves];
        let mut last = vec![(0u32, 0u16); n - hs];
        let mut dist = vec![u32::MAX; n];
        let mut queue = std::collections::VecDeque::new();
        for &leaf in &leaves {
            let li = leaf_index[leaf as usize] as usize;
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[leaf as usize] = 0;
            queue.clear();
            queue.push_back(leaf);
            while let Some(u) = queue.pop_front() {
                for port in &nodes[u as usize].ports {
                    let v = port.peer as usize;
                    if v >= n_hosts as usize && dist[v] == u32::MAX {
                        dist[v] = dist[u as usize] + 1;
                        queue.push_back(port.peer);
                    }
                }
            }
            for s in n_hosts as usize..n {
                if plane_of(s as NodeId) != plane_of(leaf) || s == leaf as usize {
                    continue;
                }
                if dist[s] == u32::MAX {
                    if leaf_index[s] != u32::MAX {
                        return bad(format!("leaf {s} cannot reach leaf {leaf}"));
                    }
                    continue;
                }
                let start = ports.len() as u32;
                for (pi, port) in nodes[s].ports.iter().enumerate() {
                    let v = port.peer as usize;
                    if v >= n_hosts as usize && dist[v] != u32::MAX && dist[v] + 1 == dist[s] {
                        ports.push(pi as PortId);
                    }
                }
                let mut span = (start, (ports.len() as u32 - start) as u16);
                // Share the group with this switch's previous one when equal
                // (a ToR's uplinks serve every remote leaf): keeps `ports`
                // small at 8192 hosts.
                let prev = last[s - hs];
                let slice = |(o, l): (u32, u16)| &ports[o as usize..o as usize + l as usize];
                if prev.1 == span.1 && slice(prev) == slice(span) {
                    ports.truncate(start as usize);
                    span = prev;
                }
                last[s - hs] = span;
                spans[(s - hs) * n_leaves + li] = span;
            }
        }
        let routes = Routes {
            host_leaf,
            host_down,
            leaf_index,
            n_leaves,
            spans,
            ports,
            host_ports,
        };
        Ok(Topology {
            nodes,
            n_hosts,
            planes: planes_n as u8,
            description,
            routes,
        })
    }

    /// The ECMP group at `node` toward host `dst`: the egress ports on a
    /// shortest path (for a host: its port on each plane). Empty when `dst`
    /// is not a host or is not reachable from `node`.
    pub fn next_hops(&self, node: NodeId, dst_host: u32) -> &[PortId] {
        let r = &self.routes;
        if dst_host >= self.n_hosts {
            return &[];
        }
        let span = match self.nodes.get(node as usize).map(|n| n.kind) {
            Some(NodeKind::Host) => r.host_ports[node as usize],
            Some(NodeKind::Switch { plane, .. }) => {
                let k = dst_host as usize * self.planes as usize + plane as usize;
                let Some(&leaf) = r.host_leaf.get(k) else { return &[] };
                if leaf == node {
                    return std::slice::from_ref(&r.host_down[k]);
                }
                let li = r.leaf_index[leaf as usize] as usize;
                r.spans[(node - self.n_hosts) as usize * r.n_leaves + li]
            }
            None => return &[],
        };
        &r.ports[span.0 as usize..span.0 as usize + span.1 as usize]
    }

    /// Unloaded one-way latency from host `src` to host `dst` for a packet of
    /// `bytes` on wire (propagation + switch latency + store-and-forward
    /// serialisation at every hop), following the first ECMP choice.
    pub fn base_latency(&self, src: u32, dst: u32, bytes: u32) -> Duration {
        let mut node = src;
        let mut total = Duration::ZERO;
        for _ in 0..64 {
            if node == dst {
                return total;
            }
            let Some(&p) = self.next_hops(node, dst).first() else {
                break;
            };
            let n = &self.nodes[node as usize];
            let port = &n.ports[p as usize];
            total = total + n.latency + port.latency + Duration::serialisation(bytes as u64, port.gbps);
            node = port.peer;
        }
        Duration::ZERO
    }
}

/// `d` divides `n` (false for `d == 0`); MSRV-friendly `is_multiple_of`.
fn divides(d: u32, n: u32) -> bool {
    n.checked_rem(d) == Some(0)
}

/// Rate and delays of one tier: `gbps`/`latency` of the links below its
/// switches (tier 0: host links), `switch_latency` of its switches.
#[derive(Clone, Copy, Debug)]
struct TierLinks {
    gbps: f64,
    latency: Duration,
    switch_latency: Duration,
}

/// A 2- or 3-tier Clos in numbers. Tier 0 (ToRs) of `hpt` host ports and
/// `tor_up` uplinks; within a pod of `tors_per_pod` ToRs, every ToR has `b1`
/// links to each of the pod's `mid_per_pod` tier-1 switches. 3 tiers: tier-1
/// switch `m` of every pod has `b2` links to each core of group `m` (cores
/// `m*g..(m+1)*g`, `g = mid_up/b2`), so every core reaches every pod once.
/// 2 tiers: one pod.
#[derive(Clone, Debug)]
struct Clos {
    tiers: u8,
    hosts: u32,
    hpt: u32,
    tor_up: u32,
    tors_per_pod: u32,
    pods: u32,
    mid_per_pod: u32,
    b1: u32,
    mid_up: u32,
    cores: u32,
    b2: u32,
    tier: [TierLinks; 3],
    planes: u8,
}

impl Clos {
    fn check(&self) -> Result<(), String> {
        let c = self;
        if c.hpt == 0 || c.tor_up == 0 || c.tors_per_pod == 0 || c.mid_per_pod == 0 || c.b1 == 0 || c.planes == 0 {
            return Err(format!("zero count in {c:?}"));
        }
        if c.tor_up as u64 != c.mid_per_pod as u64 * c.b1 as u64 {
            return Err(format!(
                "ToR has {} uplinks but {} tier-1 switches per pod x bundle {}",
                c.tor_up, c.mid_per_pod, c.b1
            ));
        }
        if c.tiers == 3 {
            if c.b2 == 0 || c.mid_up == 0 || !divides(c.b2, c.mid_up) {
                return Err(format!("tier-1 uplinks {} not a multiple of bundle {}", c.mid_up, c.b2));
            }
            if c.cores as u64 != c.mid_per_pod as u64 * (c.mid_up / c.b2) as u64 {
                return Err(format!(
                    "{} cores, but {} aggs per pod x {} uplinks / bundle {} need {}",
                    c.cores,
                    c.mid_per_pod,
                    c.mid_up,
                    c.b2,
                    c.mid_per_pod as u64 * (c.mid_up / c.b2) as u64
                ));
            }
        }
        let ports = |x: u64| x <= PortId::MAX as u64;
        let w = |x: u32| x as u64;
        if !ports(w(c.hpt) + w(c.tor_up))
            || !ports(w(c.tors_per_pod) * w(c.b1) + w(c.mid_up))
            || !ports(w(c.pods) * w(c.b2))
        {
            return Err("more than 65535 ports on a switch".into());
        }
        let switches =
            c.planes as u64 * (c.hosts.div_ceil(c.hpt) as u64 + c.pods as u64 * c.mid_per_pod as u64 + c.cores as u64);
        if c.hosts as u64 + switches > u32::MAX as u64 / 2 {
            return Err("too many nodes".into());
        }
        Ok(())
    }

    fn build(&self, extra: String) -> Result<Topology, TopoError> {
        self.check().map_err(TopoError::Invalid)?;
        let c = self;
        let h = c.hosts;
        let tors = h.div_ceil(c.hpt);
        let pods = c.pods;
        debug_assert!(tors.div_ceil(c.tors_per_pod) <= pods);
        let mids = pods * c.mid_per_pod;
        let cores = if c.tiers == 3 { c.cores } else { 0 };
        let per_plane = tors + mids + cores;
        let g2 = if c.tiers == 3 { c.mid_up / c.b2 } else { 0 };
        let hosts_on = |t: u32| c.hpt.min(h - t * c.hpt);
        let tors_in = |pod: u32| c.tors_per_pod.min(tors.saturating_sub(pod * c.tors_per_pod));
        let port = |peer: u32, peer_port: u32, t: usize| Port {
            peer,
            peer_port: peer_port as PortId,
            gbps: c.tier[t].gbps,
            latency: c.tier[t].latency,
        };
        let mut nodes = Vec::with_capacity((h + c.planes as u32 * per_plane) as usize);
        let base = |plane: u32| h + plane * per_plane;
        for x in 0..h {
            let ports = (0..c.planes as u32)
                .map(|p| port(base(p) + x / c.hpt, x % c.hpt, 0))
                .collect();
            nodes.push(Node {
                kind: NodeKind::Host,
                ports,
                latency: Duration::ZERO,
            });
        }
        for plane in 0..c.planes as u32 {
            let b = base(plane);
            let (tor0, mid0, core0) = (b, b + tors, b + tors + mids);
            let sw = |tier: u8| NodeKind::Switch {
                tier,
                plane: plane as u8,
            };
            for t in 0..tors {
                let n = hosts_on(t);
                let mut ports = Vec::with_capacity((n + c.tor_up) as usize);
                ports.extend((0..n).map(|i| port(t * c.hpt + i, plane, 0)));
                let (pod, local) = (t / c.tors_per_pod, t % c.tors_per_pod);
                for m in 0..c.mid_per_pod {
                    for k in 0..c.b1 {
                        ports.push(port(mid0 + pod * c.mid_per_pod + m, local * c.b1 + k, 1));
                    }
                }
                nodes.push(Node {
                    kind: sw(0),
                    ports,
                    latency: c.tier[0].switch_latency,
                });
            }
            for g in 0..mids {
                let (pod, m) = (g / c.mid_per_pod, g % c.mid_per_pod);
                let below = tors_in(pod);
                let mut ports = Vec::with_capacity((below * c.b1 + g2 * c.b2) as usize);
                for i in 0..below {
                    let t = pod * c.tors_per_pod + i;
                    for k in 0..c.b1 {
                        ports.push(port(tor0 + t, hosts_on(t) + m * c.b1 + k, 1));
                    }
                }
                for j in 0..g2 {
                    for k in 0..c.b2 {
                        ports.push(port(core0 + m * g2 + j, pod * c.b2 + k, 2));
                    }
                }
                nodes.push(Node {
                    kind: sw(1),
                    ports,
                    latency: c.tier[1].switch_latency,
                });
            }
            for core in 0..cores {
                let (m, j) = (core / g2, core % g2);
                let mut ports = Vec::with_capacity((pods * c.b2) as usize);
                for pod in 0..pods {
                    for k in 0..c.b2 {
                        ports.push(port(
                            mid0 + pod * c.mid_per_pod + m,
                            tors_in(pod) * c.b1 + j * c.b2 + k,
                            2,
                        ));
                    }
                }
                nodes.push(Node {
                    kind: sw(2),
                    ports,
                    latency: c.tier[2].switch_latency,
                });
            }
        }
        let desc = if c.tiers == 3 {
            format!(
                "3-tier fat tree, {h} hosts, {} per ToR, {tors} ToRs ({} uplinks), {pods} pods, {mids} aggs, {cores} cores, \
                 {} plane(s), {} Gb/s, {:?} per link, {extra}",
                c.hpt, c.tor_up, c.planes, c.tier[0].gbps, c.tier[0].latency
            )
        } else {
            format!(
                "2-tier leaf-spine, {h} hosts, {} per leaf, {tors} leaves ({} uplinks), {mids} spines, {} plane(s), \
                 {} Gb/s, {:?} per link, {extra}",
                c.hpt, c.tor_up, c.planes, c.tier[0].gbps, c.tier[0].latency
            )
        };
        Topology::from_nodes(nodes, h, c.planes, desc)
    }
}

/// One value read from a `.topo` file and the line it was on.
#[derive(Clone, Copy, Debug)]
struct Val {
    v: f64,
    line: usize,
}

#[derive(Clone, Debug, Default)]
struct TierBlock {
    line: usize,
    gbps: Option<Val>,
    radix_down: Option<Val>,
    radix_up: Option<Val>,
    latency_ns: Option<Val>,
    switch_ns: Option<Val>,
    oversub: Option<Val>,
    bundle: Option<Val>,
}

/// An htsim `.topo` file, parsed but not yet checked for consistency.
#[derive(Debug)]
struct HtsimFile {
    file: String,
    nodes: Option<Val>,
    tiers: Option<Val>,
    podsize: Option<Val>,
    blocks: Vec<Option<TierBlock>>,
}

impl HtsimFile {
    fn parse(text: &str, file: &str) -> Result<HtsimFile, TopoError> {
        let err = |line: usize, msg: String| TopoError::Parse {
            file: file.to_string(),
            line,
            msg,
        };
        let mut f = HtsimFile {
            file: file.to_string(),
            nodes: None,
            tiers: None,
            podsize: None,
            blocks: Vec::new(),
        };
        let mut cur: Option<usize> = None;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let body = raw.split('#').next().unwrap_or("");
            let mut toks = body.split_whitespace();
            let Some(key) = toks.next() else { continue };
            let Some(vs) = toks.next() else {
                return Err(err(line, format!("`{key}` needs a value")));
            };
            if let Some(extra) = toks.next() {
                return Err(err(line, format!("unexpected `{extra}` after `{key} {vs}`")));
            }
            let v: f64 = match vs.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => v,
                _ => return Err(err(line, format!("`{key}`: `{vs}` is not a non-negative number"))),
            };
            let int = |v: f64| -> Result<u32, TopoError> {
                if v.fract() == 0.0 && v <= u32::MAX as f64 {
                    Ok(v as u32)
                } else {
                    Err(err(line, format!("`{key}`: `{vs}` is not an integer")))
                }
            };
            let val = Val { v, line };
            let k = key.to_ascii_lowercase();
            let set = |slot: &mut Option<Val>| -> Result<(), TopoError> {
                if let Some(prev) = slot {
                    return Err(err(line, format!("`{key}` repeated (first on line {})", prev.line)));
                }
                *slot = Some(val);
                Ok(())
            };
            match k.as_str() {
                "nodes" | "tiers" | "podsize" => {
                    int(v)?;
                    set(match k.as_str() {
                        "nodes" => &mut f.nodes,
                        "tiers" => &mut f.tiers,
                        _ => &mut f.podsize,
                    })?
                }
                "tier" => {
                    let n = int(v)? as usize;
                    if n > 2 {
                        return Err(err(line, format!("tier {n}: at most 3 tiers (0..2) supported")));
                    }
                    if f.blocks.len() <= n {
                        f.blocks.resize(n + 1, None);
                    }
                    if let Some(b) = &f.blocks[n] {
                        return Err(err(line, format!("tier {n} repeated (first on line {})", b.line)));
                    }
                    f.blocks[n] = Some(TierBlock {
                        line,
                        ..Default::default()
                    });
                    cur = Some(n);
                }
                _ => {
                    let Some(b) = cur.and_then(|c| f.blocks[c].as_mut()) else {
                        return Err(err(line, format!("unknown key `{key}` outside a Tier block")));
                    };
                    let slot = match k.as_str() {
                        "downlink_speed_gbps" => &mut b.gbps,
                        "radix_down" => &mut b.radix_down,
                        "radix_up" => &mut b.radix_up,
                        "downlink_latency_ns" => &mut b.latency_ns,
                        "switch_latency_ns" => &mut b.switch_ns,
                        "oversubscribed" => &mut b.oversub,
                        "bundle" => &mut b.bundle,
                        _ => return Err(err(line, format!("unknown key `{key}`"))),
                    };
                    if k != "downlink_speed_gbps" && k != "downlink_latency_ns" && k != "switch_latency_ns" {
                        int(v)?;
                    }
                    set(slot)?;
                }
            }
        }
        Ok(f)
    }

    fn to_clos(&self, planes: u8) -> Result<Clos, TopoError> {
        let err = |line: usize, msg: String| TopoError::Parse {
            file: self.file.clone(),
            line,
            msg,
        };
        let need = |v: Option<Val>, line: usize, what: &str| v.ok_or_else(|| err(line, format!("missing `{what}`")));
        if planes == 0 {
            return Err(TopoError::Invalid("planes must be at least 1".into()));
        }
        let nodes = need(self.nodes, 1, "Nodes")?;
        let tiers_v = need(self.tiers, 1, "Tiers")?;
        let hosts = nodes.v as u32;
        if hosts == 0 {
            return Err(err(nodes.line, "Nodes must be positive".into()));
        }
        let tiers = tiers_v.v as u32;
        if tiers != 2 && tiers != 3 {
            return Err(err(tiers_v.line, format!("{tiers} tiers (2 or 3 supported)")));
        }
        let end = self.blocks.len().max(1);
        if self.blocks.len() > tiers as usize {
            let b = self.blocks[tiers as usize..]
                .iter()
                .flatten()
                .next()
                .map_or(tiers_v.line, |b| b.line);
            return Err(err(b, format!("tier block beyond Tiers {tiers}")));
        }
        let mut blk = Vec::new();
        for t in 0..tiers as usize {
            match self.blocks.get(t).cloned().flatten() {
                Some(b) => blk.push(b),
                None => {
                    return Err(err(
                        tiers_v.line,
                        format!("missing `Tier {t}` block (file has {end} block slots)"),
                    ))
                }
            }
        }
        let mut links = [TierLinks {
            gbps: 0.0,
            latency: Duration::ZERO,
            switch_latency: Duration::ZERO,
        }; 3];
        let mut down = [0u32; 3];
        let mut up = [0u32; 3];
        let mut bundle = [1u32; 3];
        for (t, b) in blk.iter().enumerate() {
            let g = need(b.gbps, b.line, "Downlink_speed_Gbps")?;
            if g.v <= 0.0 {
                return Err(err(g.line, "Downlink_speed_Gbps must be positive".into()));
            }
            let lat = need(b.latency_ns, b.line, "Downlink_Latency_ns")?;
            let sw = b.switch_ns.map_or(0.0, |v| v.v);
            links[t] = TierLinks {
                gbps: g.v,
                latency: Duration::from_ps((lat.v * 1000.0).round() as u64),
                switch_latency: Duration::from_ps((sw * 1000.0).round() as u64),
            };
            let rd = need(b.radix_down, b.line, "Radix_Down")?;
            down[t] = rd.v as u32;
            if down[t] == 0 {
                return Err(err(rd.line, "Radix_Down must be positive".into()));
            }
            if let Some(bu) = b.bundle {
                if t == 0 && bu.v as u32 != 1 {
                    return Err(err(bu.line, "Bundle at tier 0 (host links) must be 1".into()));
                }
                bundle[t] = bu.v as u32;
                if bundle[t] == 0 {
                    return Err(err(bu.line, "Bundle must be positive".into()));
                }
                if !divides(bundle[t], down[t]) {
                    return Err(err(
                        bu.line,
                        format!("Radix_Down {} not a multiple of Bundle {}", down[t], bundle[t]),
                    ));
                }
            }
            let top = t + 1 == tiers as usize;
            match (b.radix_up, b.oversub) {
                (Some(ru), _) if top => return Err(err(ru.line, "Radix_Up on the top tier".into())),
                (None, _) if top => {}
                (Some(ru), os) => {
                    up[t] = ru.v as u32;
                    if up[t] == 0 {
                        return Err(err(ru.line, "Radix_Up must be positive".into()));
                    }
                    if let Some(os) = os {
                        if (down[t] as f64) != os.v * up[t] as f64 {
                            return Err(err(
                                os.line,
                                format!(
                                    "Oversubscribed {} but Radix_Down/Radix_Up = {}/{}",
                                    os.v, down[t], up[t]
                                ),
                            ));
                        }
                    }
                }
                (None, Some(os)) => {
                    let o = os.v as u32;
                    if !divides(o, down[t]) {
                        return Err(err(
                            os.line,
                            format!("Radix_Down {} not divisible by Oversubscribed {o}", down[t]),
                        ));
                    }
                    up[t] = down[t] / o;
                }
                (None, None) => return Err(err(b.line, "missing `Radix_Up` (or `Oversubscribed`)".into())),
            }
        }
        let rd = |t: usize| blk[t].radix_down.map_or(blk[t].line, |v| v.line);
        if !divides(down[0], hosts) {
            return Err(err(
                nodes.line,
                format!("Nodes {hosts} not a multiple of tier-0 Radix_Down {}", down[0]),
            ));
        }
        let tors = hosts / down[0];
        let mut c = Clos {
            tiers: tiers as u8,
            hosts,
            hpt: down[0],
            tor_up: up[0],
            tors_per_pod: tors,
            pods: 1,
            mid_per_pod: 0,
            b1: bundle[1],
            mid_up: 0,
            cores: 0,
            b2: 1,
            tier: links,
            planes,
        };
        if tiers == 3 {
            let ps = need(self.podsize, 1, "Podsize")?;
            let podsize = ps.v as u32;
            if podsize == 0 || !divides(down[0], podsize) || !divides(podsize, hosts) {
                return Err(err(
                    ps.line,
                    format!(
                        "Podsize {podsize} must divide Nodes {hosts} and be a multiple of tier-0 Radix_Down {}",
                        down[0]
                    ),
                ));
            }
            c.tors_per_pod = podsize / down[0];
            c.pods = hosts / podsize;
        }
        // Tier 1: every ToR of the pod (or fabric) below, `b1` links each.
        let w = |x: u32| x as u64;
        let tor_links = w(c.tors_per_pod) * w(up[0]);
        if w(down[1]) != w(c.tors_per_pod) * w(bundle[1]) || tor_links % w(down[1]) != 0 {
            return Err(err(
                rd(1),
                format!(
                    "tier-1 Radix_Down {} must be {} ToRs per {} x Bundle {}",
                    down[1],
                    c.tors_per_pod,
                    if tiers == 3 { "pod" } else { "fabric" },
                    bundle[1]
                ),
            ));
        }
        c.mid_per_pod = (tor_links / w(down[1])) as u32;
        if tiers == 3 {
            c.mid_up = up[1];
            c.b2 = bundle[2];
            let agg_links = w(c.pods) * w(c.mid_per_pod) * w(up[1]);
            if w(down[2]) != w(c.pods) * w(bundle[2]) || agg_links % w(down[2]) != 0 {
                return Err(err(
                    rd(2),
                    format!(
                        "tier-2 Radix_Down {} must be {} pods x Bundle {}",
                        down[2], c.pods, bundle[2]
                    ),
                ));
            }
            c.cores = u32::try_from(agg_links / w(down[2])).map_err(|_| err(rd(2), "too many cores".into()))?;
        }
        c.check().map_err(|m| err(rd(tiers as usize - 1), m))?;
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two hosts on one switch, one plane.
    fn star() -> Topology {
        let link = |peer, peer_port| Port {
            peer,
            peer_port,
            gbps: 100.0,
            latency: Duration::from_ns(1000),
        };
        let nodes = vec![
            Node {
                kind: NodeKind::Host,
                ports: vec![link(2, 0)],
                latency: Duration::ZERO,
            },
            Node {
                kind: NodeKind::Host,
                ports: vec![link(2, 1)],
                latency: Duration::ZERO,
            },
            Node {
                kind: NodeKind::Switch { tier: 0, plane: 0 },
                ports: vec![link(0, 0), link(1, 0)],
                latency: Duration::ZERO,
            },
        ];
        Topology::from_nodes(nodes, 2, 1, "star".into()).unwrap()
    }

    #[test]
    fn star_routes_and_latency() {
        let t = star();
        assert_eq!(t.next_hops(0, 1), &[0]);
        assert_eq!(t.next_hops(2, 1), &[1]);
        assert_eq!(t.next_hops(2, 0), &[0]);
        assert!(t.next_hops(2, 7).is_empty());
        // 2 hops of 1 us + 2 x 4000 B at 100 Gb/s (320 ns each).
        assert_eq!(t.base_latency(0, 1, 4000), Duration::from_ns(2 * 1000 + 2 * 320));
    }

    #[test]
    fn htsim_numbers_derive_the_clos() {
        let text = "Nodes 1024\nTiers 3\nPodsize 64\nTier 0\nRadix_Down 8\nRadix_Up 8\nDownlink_speed_Gbps 100\n\
                    Downlink_Latency_ns 1000\nTier 1\nRadix_Down 8\nRadix_Up 8\nDownlink_speed_Gbps 100\n\
                    Downlink_Latency_ns 1000\nTier 2\nRadix_Down 16\nDownlink_speed_Gbps 100\nDownlink_Latency_ns 1000";
        let c = HtsimFile::parse(text, "x").unwrap().to_clos(1).unwrap();
        assert_eq!((c.hpt, c.tor_up, c.tors_per_pod, c.pods), (8, 8, 8, 16));
        assert_eq!((c.mid_per_pod, c.mid_up, c.cores, c.b1, c.b2), (8, 8, 64, 1, 1));
        let two = "Nodes 1024\nTiers 2\nTier 0\nRadix_Down 32\nOversubscribed 4\nDownlink_speed_Gbps 100\n\
                   Downlink_Latency_ns 1000\nTier 1\nRadix_Down 32\nDownlink_speed_Gbps 100\nDownlink_Latency_ns 1000";
        let c = HtsimFile::parse(two, "x").unwrap().to_clos(1).unwrap();
        assert_eq!(
            (c.hpt, c.tor_up, c.tors_per_pod, c.pods, c.mid_per_pod),
            (32, 8, 32, 1, 8)
        );
    }

    #[test]
    fn equal_groups_share_storage() {
        let t = Topology::build(&TopoParams::default()).unwrap();
        // 128 ToRs x 2 distinct groups (uplinks; nothing else) + aggs + cores:
        // far fewer than one group per (switch, leaf).
        assert!(t.routes.ports.len() < 20_000, "{}", t.routes.ports.len());
        assert_eq!(t.routes.n_leaves, 128);
        assert_eq!(t.routes.spans.len(), 320 * 128);
    }

    #[test]
    fn asymmetric_cabling_is_refused() {
        let mut t = star().nodes;
        t[2].ports[1].peer_port = 3;
        assert!(matches!(
            Topology::from_nodes(t, 2, 1, "x".into()),
            Err(TopoError::Invalid(_))
        ));
    }
}
