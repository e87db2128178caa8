//! Topologies: leaf-spine (2 tiers) and fat trees (3 tiers), with
//! oversubscription and multiple planes, built from parameters or read from
//! htsim `.topo` files; plus the ECMP routing tables.
//!
//! CONTRACT FILE: the types and signatures below are what the simulator
//! engine uses. Bodies are being written in their own branch.

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
    /// Index of each node among the leaves (`u32::MAX` if not a leaf).
    leaf_index: Vec<u32>,
    n_leaves: usize,
    /// `spans[node * n_leaves + leaf]` = range of `ports` with the ECMP
    /// group of `node` toward `leaf` (switches only).
    spans: Vec<(u32, u16)>,
    ports: Vec<PortId>,
    /// Every port of each host (one per plane), as a span of `ports`.
    host_ports: Vec<(u32, u16)>,
}

impl Topology {
    /// Build from parameters.
    pub fn build(_p: &TopoParams) -> Result<Topology, TopoError> {
        Err(TopoError::Invalid("not implemented yet".into()))
    }

    /// Read an htsim `.topo` file (see `../shared/anchors/htsim/README.md`).
    pub fn from_htsim_file(_path: &std::path::Path, _planes: u8) -> Result<Topology, TopoError> {
        Err(TopoError::Invalid("not implemented yet".into()))
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
                let back = nodes.get(port.peer as usize).and_then(|p| p.ports.get(port.peer_port as usize));
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
        for &l in &host_leaf {
            if leaf_index[l as usize] == u32::MAX {
                leaf_index[l as usize] = leaves.len() as u32;
                leaves.push(l);
            }
        }
        let n_leaves = leaves.len();
        let mut spans = vec![(0u32, 0u16); n * n_leaves];
        let mut dist = vec![u32::MAX; n];
        let mut queue = std::collections::VecDeque::new();
        for (li, &leaf) in leaves.iter().enumerate() {
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
                spans[s * n_leaves + li] = (start, (ports.len() as u32 - start) as u16);
            }
        }
        let routes = Routes { host_leaf, host_down, leaf_index, n_leaves, spans, ports, host_ports };
        Ok(Topology { nodes, n_hosts, planes: planes_n as u8, description, routes })
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
                r.spans[node as usize * r.n_leaves + li]
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
            let Some(&p) = self.next_hops(node, dst).first() else { break };
            let n = &self.nodes[node as usize];
            let port = &n.ports[p as usize];
            total = total + n.latency + port.latency + Duration::serialisation(bytes as u64, port.gbps);
            node = port.peer;
        }
        Duration::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two hosts on one switch, one plane.
    fn star() -> Topology {
        let link = |peer, peer_port| Port { peer, peer_port, gbps: 100.0, latency: Duration::from_ns(1000) };
        let nodes = vec![
            Node { kind: NodeKind::Host, ports: vec![link(2, 0)], latency: Duration::ZERO },
            Node { kind: NodeKind::Host, ports: vec![link(2, 1)], latency: Duration::ZERO },
            Node { kind: NodeKind::Switch { tier: 0, plane: 0 }, ports: vec![link(0, 0), link(1, 0)], latency: Duration::ZERO },
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
    fn asymmetric_cabling_is_refused() {
        let mut t = star().nodes;
        t[2].ports[1].peer_port = 3;
        assert!(matches!(Topology::from_nodes(t, 2, 1, "x".into()), Err(TopoError::Invalid(_))));
    }
}
