//! Small hand-cabled topologies for tests and benchmarks, built with
//! [`Topology::from_nodes`] (which computes the ECMP tables): a 3-tier fat
//! tree, a 2-tier leaf-spine and a dumbbell. `Topology::build` (from
//! parameters / `.topo` files) is the general builder; these exist so the
//! engine can be tested on its own.

use proto::time::Duration;

use super::topo::{Node, NodeId, NodeKind, Port, PortId, Topology};

/// Link parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkSpec {
    pub gbps: f64,
    pub latency: Duration,
    pub switch_latency: Duration,
}

impl Default for LinkSpec {
    /// 100 Gb/s, 1 us links, zero switch latency (the htsim reference set).
    fn default() -> Self {
        LinkSpec {
            gbps: 100.0,
            latency: Duration::from_us(1),
            switch_latency: Duration::ZERO,
        }
    }
}

struct Builder {
    nodes: Vec<Node>,
    link: LinkSpec,
}

impl Builder {
    fn new(n_hosts: usize, link: LinkSpec) -> Builder {
        let nodes = (0..n_hosts)
            .map(|_| Node {
                kind: NodeKind::Host,
                ports: Vec::new(),
                latency: Duration::ZERO,
            })
            .collect();
        Builder { nodes, link }
    }
    fn switch(&mut self, tier: u8, plane: u8) -> NodeId {
        self.nodes.push(Node {
            kind: NodeKind::Switch { tier, plane },
            ports: Vec::new(),
            latency: self.link.switch_latency,
        });
        (self.nodes.len() - 1) as NodeId
    }
    fn connect_at(&mut self, a: NodeId, b: NodeId, gbps: f64) -> (PortId, PortId) {
        let pa = self.nodes[a as usize].ports.len() as PortId;
        let pb = self.nodes[b as usize].ports.len() as PortId;
        let lat = self.link.latency;
        self.nodes[a as usize].ports.push(Port {
            peer: b,
            peer_port: pb,
            gbps,
            latency: lat,
        });
        self.nodes[b as usize].ports.push(Port {
            peer: a,
            peer_port: pa,
            gbps,
            latency: lat,
        });
        (pa, pb)
    }
    fn connect(&mut self, a: NodeId, b: NodeId) -> (PortId, PortId) {
        let g = self.link.gbps;
        self.connect_at(a, b, g)
    }
}

/// Shape of a 3-tier fat tree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FatTreeShape {
    pub hosts_per_tor: u32,
    pub tors_per_pod: u32,
    pub aggs_per_pod: u32,
    pub pods: u32,
    /// Core switches; agg `j` of every pod connects to cores
    /// `j*c .. (j+1)*c` with `c = cores / aggs_per_pod`.
    pub cores: u32,
    pub planes: u8,
}

impl FatTreeShape {
    /// The k-ary fat tree: k/2 hosts per ToR, k/2 ToRs and aggs per pod, k
    /// pods, (k/2)^2 cores: k^3/4 hosts, non-blocking.
    pub fn k_ary(k: u32) -> FatTreeShape {
        FatTreeShape {
            hosts_per_tor: k / 2,
            tors_per_pod: k / 2,
            aggs_per_pod: k / 2,
            pods: k,
            cores: k * k / 4,
            planes: 1,
        }
    }
    /// 1024 hosts: 8 per ToR, 16 pods of 8 ToRs + 8 aggs, 64 cores.
    pub fn hosts_1024() -> FatTreeShape {
        FatTreeShape {
            hosts_per_tor: 8,
            tors_per_pod: 8,
            aggs_per_pod: 8,
            pods: 16,
            cores: 64,
            planes: 1,
        }
    }
    pub fn hosts(&self) -> u32 {
        self.hosts_per_tor * self.tors_per_pod * self.pods
    }
}

/// Node ids of a built fat tree (per plane 0).
#[derive(Clone, Debug)]
pub struct FatTreeIds {
    /// `tors[plane][pod * tors_per_pod + t]`
    pub tors: Vec<Vec<NodeId>>,
    pub aggs: Vec<Vec<NodeId>>,
    pub cores: Vec<Vec<NodeId>>,
}

/// A 3-tier fat tree.
pub fn fat_tree(s: FatTreeShape, link: LinkSpec) -> (Topology, FatTreeIds) {
    let n_hosts = s.hosts();
    let mut b = Builder::new(n_hosts as usize, link);
    let mut ids = FatTreeIds {
        tors: Vec::new(),
        aggs: Vec::new(),
        cores: Vec::new(),
    };
    let cpa = (s.cores / s.aggs_per_pod).max(1);
    for plane in 0..s.planes.max(1) {
        let tors: Vec<NodeId> = (0..s.pods * s.tors_per_pod).map(|_| b.switch(0, plane)).collect();
        let aggs: Vec<NodeId> = (0..s.pods * s.aggs_per_pod).map(|_| b.switch(1, plane)).collect();
        let cores: Vec<NodeId> = (0..s.cores).map(|_| b.switch(2, plane)).collect();
        for h in 0..n_hosts {
            b.connect(h, tors[(h / s.hosts_per_tor) as usize]);
        }
        for pod in 0..s.pods {
            for t in 0..s.tors_per_pod {
                for a in 0..s.aggs_per_pod {
                    b.connect(
                        tors[(pod * s.tors_per_pod + t) as usize],
                        aggs[(pod * s.aggs_per_pod + a) as usize],
                    );
                }
            }
        }
        for pod in 0..s.pods {
            for a in 0..s.aggs_per_pod {
                for c in 0..cpa {
                    let core = (a * cpa + c) % s.cores;
                    b.connect(aggs[(pod * s.aggs_per_pod + a) as usize], cores[core as usize]);
                }
            }
        }
        ids.tors.push(tors);
        ids.aggs.push(aggs);
        ids.cores.push(cores);
    }
    let desc = format!(
        "3-tier fat tree, {n_hosts} hosts, {} per ToR, {} pods, {} cores, {} Gb/s, {:?} links, {} plane(s)",
        s.hosts_per_tor, s.pods, s.cores, link.gbps, link.latency, s.planes
    );
    let t = Topology::from_nodes(b.nodes, n_hosts, s.planes.max(1), desc).expect("fat tree is well formed");
    (t, ids)
}

/// A 2-tier leaf-spine: `leaves` leaves of `hosts_per_leaf` hosts, each
/// cabled to every one of `spines` spines at `uplink_gbps`.
pub fn leaf_spine(leaves: u32, hosts_per_leaf: u32, spines: u32, uplink_gbps: f64, link: LinkSpec) -> Topology {
    let n_hosts = leaves * hosts_per_leaf;
    let mut b = Builder::new(n_hosts as usize, link);
    let ls: Vec<NodeId> = (0..leaves).map(|_| b.switch(0, 0)).collect();
    let ss: Vec<NodeId> = (0..spines).map(|_| b.switch(1, 0)).collect();
    for h in 0..n_hosts {
        b.connect(h, ls[(h / hosts_per_leaf) as usize]);
    }
    for &l in &ls {
        for &s in &ss {
            b.connect_at(l, s, uplink_gbps);
        }
    }
    let desc = format!("leaf-spine, {n_hosts} hosts, {leaves} leaves, {spines} spines");
    Topology::from_nodes(b.nodes, n_hosts, 1, desc).expect("leaf-spine is well formed")
}

/// A dumbbell: hosts `0..n` on switch L, hosts `n..2n` on switch R, one
/// L-R link at `bottleneck_gbps`. Returns the topology and the (node, port)
/// of L's end of the bottleneck.
pub fn dumbbell(n: u32, bottleneck_gbps: f64, link: LinkSpec) -> (Topology, (NodeId, PortId)) {
    let mut b = Builder::new(2 * n as usize, link);
    let l = b.switch(0, 0);
    let r = b.switch(0, 0);
    for h in 0..2 * n {
        b.connect(h, if h < n { l } else { r });
    }
    let (pl, _) = b.connect_at(l, r, bottleneck_gbps);
    let t = Topology::from_nodes(b.nodes, 2 * n, 1, format!("dumbbell {n}+{n}")).expect("dumbbell is well formed");
    (t, (l, pl))
}

/// `n` hosts on one switch.
pub fn star(n: u32, link: LinkSpec) -> Topology {
    let mut b = Builder::new(n as usize, link);
    let s = b.switch(0, 0);
    for h in 0..n {
        b.connect(h, s);
    }
    Topology::from_nodes(b.nodes, n, 1, format!("star of {n}")).expect("star is well formed")
}
