//! The htsim anchor `.topo` files: structure, routing and latency.

use proto::time::Duration;
use sim::fabric::topo::{NodeKind, Topology};
use std::path::PathBuf;

fn anchor(name: &str) -> PathBuf {
    sim::anchors::htsim_dir_or_panic().join(name)
}

fn load(name: &str, planes: u8) -> Topology {
    Topology::from_htsim_file(&anchor(name), planes).unwrap()
}

/// Switch counts per tier (all planes).
fn tiers(t: &Topology) -> [usize; 3] {
    let mut c = [0; 3];
    for n in &t.nodes {
        if let NodeKind::Switch { tier, .. } = n.kind {
            c[tier as usize] += 1;
        }
    }
    c
}

/// Undirected links between a tier-`a` node (host = None) and a tier-`b` switch.
fn links(t: &Topology) -> usize {
    t.nodes.iter().map(|n| n.ports.len()).sum::<usize>() / 2
}

fn tier_of(t: &Topology, n: u32) -> Option<u8> {
    match t.nodes[n as usize].kind {
        NodeKind::Host => None,
        NodeKind::Switch { tier, .. } => Some(tier),
    }
}

/// Uplinks and downlinks of every switch of `tier` (sum).
fn up_down(t: &Topology, tier: u8) -> (usize, usize) {
    let (mut up, mut down) = (0, 0);
    for n in &t.nodes {
        if n.kind == (NodeKind::Switch { tier, plane: 0 }) {
            for p in &n.ports {
                match tier_of(t, p.peer) {
                    Some(pt) if pt > tier => up += 1,
                    _ => down += 1,
                }
            }
        }
    }
    (up, down)
}

/// Hops from host `src` to host `dst` on plane `plane` following the first
/// ECMP choice; checks every ECMP choice is a valid next hop on the way.
fn hops(t: &Topology, src: u32, dst: u32, plane: usize) -> usize {
    let mut node = t.nodes[src as usize].ports[plane].peer;
    let mut n = 1;
    while node != dst {
        let nh = t.next_hops(node, dst);
        assert!(!nh.is_empty(), "no route {src}->{dst} at {node}");
        node = t.nodes[node as usize].ports[nh[0] as usize].peer;
        n += 1;
        assert!(n < 16);
    }
    n
}

#[test]
fn anchor_path_resolves() {
    assert!(anchor("fat_tree_1024.topo").is_file());
}

#[test]
fn fat_tree_1024_structure() {
    let t = load("fat_tree_1024.topo", 1);
    assert_eq!(t.n_hosts, 1024);
    assert_eq!(tiers(&t), [128, 128, 64]);
    assert_eq!(t.nodes.len(), 1024 + 320);
    // 1024 host links + 128 x 8 ToR-agg + 128 x 8 agg-core.
    assert_eq!(links(&t), 3 * 1024);
    // Full bisection: uplinks = downlinks at ToR and agg tiers.
    assert_eq!(up_down(&t, 0), (1024, 1024));
    assert_eq!(up_down(&t, 1), (1024, 1024));
    assert_eq!(up_down(&t, 2), (0, 1024));
    for n in &t.nodes[1024..] {
        assert_eq!(n.ports.len(), 16);
        assert!(n
            .ports
            .iter()
            .all(|p| p.gbps == 100.0 && p.latency == Duration::from_ns(1000)));
    }
    // Path lengths: same ToR 2, same pod 4, across pods 6.
    assert_eq!(hops(&t, 0, 7, 0), 2);
    assert_eq!(hops(&t, 0, 8, 0), 4);
    assert_eq!(hops(&t, 0, 63, 0), 4);
    assert_eq!(hops(&t, 0, 64, 0), 6);
    assert_eq!(hops(&t, 1023, 0, 0), 6);
    // ECMP groups: ToR toward a remote host: 8 uplinks; agg toward another
    // pod: 8 uplinks; agg toward its pod: 1 port; core: 1 port; ToR to its
    // own host: 1 port.
    let tor0 = t.nodes[0].ports[0].peer;
    assert_eq!(t.next_hops(tor0, 1000).len(), 8);
    assert_eq!(t.next_hops(tor0, 9).len(), 8);
    assert_eq!(t.next_hops(tor0, 3), &[3]);
    let agg = t.nodes[tor0 as usize].ports[8].peer;
    assert_eq!(tier_of(&t, agg), Some(1));
    assert_eq!(t.next_hops(agg, 1000).len(), 8);
    assert_eq!(t.next_hops(agg, 9).len(), 1);
    let core = t.nodes[agg as usize].ports[8].peer;
    assert_eq!(tier_of(&t, core), Some(2));
    assert_eq!(t.next_hops(core, 1000).len(), 1);
    assert_eq!(t.next_hops(0, 1000), &[0]);
    // Unloaded latency: 6 hops x (1 us + serialisation at 100 Gb/s).
    let bytes = 4096 + 64;
    let ser = Duration::serialisation(bytes as u64, 100.0);
    assert_eq!(ser, Duration::from_ps(332_800));
    let one_way = t.base_latency(0, 1000, bytes);
    assert_eq!(one_way.as_ps(), 6 * (1_000_000 + 332_800));
    // RTT with a 64-byte ack: about 14 us.
    let rtt = one_way + t.base_latency(1000, 0, 64);
    assert!((13.5..14.5).contains(&(rtt.as_secs_f64() * 1e6)), "{rtt:?}");
}

#[test]
fn fat_tree_1024_all_pairs_reachable() {
    let t = load("fat_tree_1024.topo", 1);
    for s in (0..1024).step_by(7) {
        for d in 0..1024 {
            if s != d {
                let h = hops(&t, s, d, 0);
                let expect = if s / 8 == d / 8 {
                    2
                } else if s / 64 == d / 64 {
                    4
                } else {
                    6
                };
                assert_eq!(h, expect, "{s}->{d}");
            }
        }
    }
}

#[test]
fn fat_tree_128_structure() {
    let t = load("fat_tree_128_1os.topo", 1);
    assert_eq!(tiers(&t), [32, 32, 16]);
    assert_eq!(links(&t), 3 * 128);
    assert_eq!(up_down(&t, 0), (128, 128));
    assert_eq!(up_down(&t, 1), (128, 128));
    for s in 0..128 {
        for d in 0..128 {
            if s != d {
                let expect = if s / 4 == d / 4 {
                    2
                } else if s / 16 == d / 16 {
                    4
                } else {
                    6
                };
                assert_eq!(hops(&t, s, d, 0), expect);
            }
        }
    }
    let tor0 = t.nodes[0].ports[0].peer;
    assert_eq!(t.next_hops(tor0, 127).len(), 4);
}

#[test]
fn leaf_spine_1024_oversub_structure() {
    let t = load("leaf_spine_1024_oversub.topo", 1);
    assert_eq!(tiers(&t), [32, 8, 0]);
    // 1024 host links + 32 leaves x 8 uplinks.
    assert_eq!(links(&t), 1024 + 256);
    // 4:1 at the leaves.
    let (up, down) = up_down(&t, 0);
    assert_eq!((up, down), (256, 1024));
    assert_eq!(down / up, 4);
    for n in t
        .nodes
        .iter()
        .filter(|n| n.kind == (NodeKind::Switch { tier: 1, plane: 0 }))
    {
        assert_eq!(n.ports.len(), 32);
    }
    let leaf0 = t.nodes[0].ports[0].peer;
    assert_eq!(t.next_hops(leaf0, 1000).len(), 8);
    assert_eq!(hops(&t, 0, 31, 0), 2);
    assert_eq!(hops(&t, 0, 32, 0), 4);
    assert_eq!(t.base_latency(0, 1023, 4160).as_ps(), 4 * (1_000_000 + 332_800));
    for s in (0..1024).step_by(31) {
        for d in 0..1024 {
            if s != d {
                assert_eq!(hops(&t, s, d, 0), if s / 32 == d / 32 { 2 } else { 4 });
            }
        }
    }
}

#[test]
fn two_planes_from_file() {
    let t = load("fat_tree_128_1os.topo", 2);
    assert_eq!(tiers(&t), [64, 64, 32]);
    assert!(t.nodes[..128].iter().all(|n| n.ports.len() == 2));
    for s in 0..128u32 {
        for plane in 0..2 {
            let leaf = t.nodes[s as usize].ports[plane].peer;
            assert_eq!(
                t.nodes[leaf as usize].kind,
                NodeKind::Switch {
                    tier: 0,
                    plane: plane as u8
                }
            );
            for d in (0..128).filter(|&d| d != s) {
                hops(&t, s, d, plane);
            }
        }
    }
    // Switches link only to switches of their own plane (or hosts).
    for n in &t.nodes[128..] {
        let NodeKind::Switch { plane, .. } = n.kind else {
            panic!()
        };
        for p in &n.ports {
            match t.nodes[p.peer as usize].kind {
                NodeKind::Host => {}
                NodeKind::Switch { plane: q, .. } => assert_eq!(q, plane),
            }
        }
    }
}
