//! Topologies built from parameters.

use proto::time::Duration;
use sim::fabric::topo::{BuildKnobs, NodeKind, TopoError, TopoParams, Topology};

fn params(tiers: u8, hosts: u32, oversubscription: u32, planes: u8) -> TopoParams {
    TopoParams {
        tiers,
        hosts,
        link_gbps: 100.0,
        link_latency: Duration::from_ns(1000),
        switch_latency: Duration::ZERO,
        oversubscription,
        planes,
    }
}

fn tiers(t: &Topology) -> [usize; 3] {
    let mut c = [0; 3];
    for n in &t.nodes {
        if let NodeKind::Switch { tier, .. } = n.kind {
            c[tier as usize] += 1;
        }
    }
    c
}

/// (uplinks, downlinks) summed over the switches of `tier` in plane 0.
fn up_down(t: &Topology, tier: u8) -> (usize, usize) {
    let (mut up, mut down) = (0, 0);
    for n in t
        .nodes
        .iter()
        .filter(|n| n.kind == (NodeKind::Switch { tier, plane: 0 }))
    {
        for p in &n.ports {
            match t.nodes[p.peer as usize].kind {
                NodeKind::Switch { tier: pt, .. } if pt > tier => up += 1,
                _ => down += 1,
            }
        }
    }
    (up, down)
}

/// Hops from `src` to `dst` via `plane`, checking every ECMP member leads on.
fn hops(t: &Topology, src: u32, dst: u32, plane: usize) -> usize {
    let mut node = t.nodes[src as usize].ports[plane].peer;
    let mut n = 1;
    while node != dst {
        let nh = t.next_hops(node, dst);
        assert!(!nh.is_empty(), "no route {src}->{dst} at {node}");
        node = t.nodes[node as usize].ports[nh[nh.len() - 1] as usize].peer;
        n += 1;
        assert!(n < 16);
    }
    n
}

#[test]
fn default_params_match_the_1024_anchor() {
    let t = Topology::build(&TopoParams::default()).unwrap();
    assert_eq!(tiers(&t), [128, 128, 64]);
    assert_eq!(up_down(&t, 0), (1024, 1024));
    assert_eq!(up_down(&t, 1), (1024, 1024));
    assert_eq!(t.base_latency(0, 1023, 4160).as_ps(), 6 * (1_000_000 + 332_800));
    assert_eq!(hops(&t, 0, 7, 0), 2);
    assert_eq!(hops(&t, 0, 8, 0), 4);
    assert_eq!(hops(&t, 0, 64, 0), 6);
    assert!(t.description.contains("3-tier fat tree"), "{}", t.description);
}

#[test]
fn fat_tree_128_and_8192_radices() {
    let t = Topology::build(&params(3, 128, 1, 1)).unwrap();
    assert_eq!(tiers(&t), [32, 32, 16]);
    let t = Topology::build(&params(3, 8192, 1, 1)).unwrap();
    assert_eq!(tiers(&t), [512, 512, 256]);
    assert_eq!(up_down(&t, 0), (8192, 8192));
    assert_eq!(up_down(&t, 1), (8192, 8192));
    let tor0 = t.nodes[0].ports[0].peer;
    assert_eq!(t.next_hops(tor0, 8191).len(), 16);
    assert_eq!(hops(&t, 0, 8191, 0), 6);
}

#[test]
fn leaf_spine_oversubscribed_matches_the_anchor() {
    let t = Topology::build(&params(2, 1024, 4, 1)).unwrap();
    assert_eq!(tiers(&t), [32, 8, 0]);
    assert_eq!(up_down(&t, 0), (256, 1024));
    assert_eq!(up_down(&t, 1), (0, 256));
    let t = Topology::build(&params(2, 1024, 1, 1)).unwrap();
    assert_eq!(tiers(&t), [32, 32, 0]);
    assert_eq!(up_down(&t, 0), (1024, 1024));
    for s in (0..1024).step_by(97) {
        for d in (0..1024).filter(|&d| d != s) {
            assert_eq!(hops(&t, s, d, 0), if s / 32 == d / 32 { 2 } else { 4 });
        }
    }
}

#[test]
fn oversubscribed_fat_tree() {
    let t = Topology::build(&params(3, 1024, 4, 1)).unwrap();
    // 2*4*u^3 >= 1024: u = 6, 24 hosts per ToR, 6 uplinks (4:1).
    let (up, down) = up_down(&t, 0);
    assert_eq!(down, 1024);
    assert_eq!(tiers(&t)[0], 1024usize.div_ceil(24));
    assert_eq!(up, tiers(&t)[0] * 6);
    // Above the ToRs the tree is non-blocking (the last pod is partial:
    // 43 ToRs in 8 pods of 6, so its aggs have spare uplinks).
    let (up1, down1) = up_down(&t, 1);
    assert_eq!((up1, down1), (8 * 6 * 6, 43 * 6));
    for d in 1..1024 {
        hops(&t, 0, d, 0);
    }
}

#[test]
fn hosts_per_tor_knob_and_partial_fill() {
    let k = BuildKnobs {
        hosts_per_tor: Some(16),
    };
    let t = Topology::build_with(&params(3, 1000, 2, 1), &k).unwrap();
    // 16 hosts, 8 uplinks per ToR; 8 ToRs and 8 aggs per pod; 64 cores.
    assert_eq!(tiers(&t), [63, 64, 64]);
    assert_eq!(t.nodes[t.nodes[999].ports[0].peer as usize].ports.len(), 8 + 8);
    for s in [0u32, 500, 999] {
        for d in (0..1000).filter(|&d| d != s) {
            hops(&t, s, d, 0);
        }
    }
    let t = Topology::build(&params(3, 100, 1, 1)).unwrap();
    assert_eq!(t.n_hosts, 100);
    for d in 1..100 {
        hops(&t, 0, d, 0);
    }
}

#[test]
fn planes_are_disjoint_copies() {
    let t = Topology::build(&params(3, 128, 1, 2)).unwrap();
    assert_eq!(t.planes, 2);
    assert_eq!(tiers(&t), [64, 64, 32]);
    for h in 0..128u32 {
        let ports = &t.nodes[h as usize].ports;
        assert_eq!(ports.len(), 2);
        for (p, port) in ports.iter().enumerate() {
            assert_eq!(
                t.nodes[port.peer as usize].kind,
                NodeKind::Switch {
                    tier: 0,
                    plane: p as u8
                }
            );
        }
        assert_eq!(t.next_hops(h, (h + 1) % 128), &[0, 1]);
    }
    for n in &t.nodes[128..] {
        let NodeKind::Switch { plane, .. } = n.kind else {
            panic!("host after switches")
        };
        for p in &n.ports {
            if let NodeKind::Switch { plane: q, .. } = t.nodes[p.peer as usize].kind {
                assert_eq!(q, plane);
            }
        }
    }
    for s in 0..128 {
        for d in (0..128).filter(|&d| d != s) {
            for plane in 0..2 {
                hops(&t, s, d, plane);
            }
        }
    }
}

#[test]
fn switch_latency_and_rates() {
    let mut p = params(2, 64, 1, 1);
    p.switch_latency = Duration::from_ns(300);
    p.link_gbps = 400.0;
    let t = Topology::build(&p).unwrap();
    // 8 per leaf: 4 hops, 3 switches.
    let ser = Duration::serialisation(4000, 400.0).as_ps();
    assert_eq!(t.base_latency(0, 63, 4000).as_ps(), 4 * (1_000_000 + ser) + 3 * 300_000);
}

#[test]
fn bad_params_are_errors() {
    for p in [
        params(4, 64, 1, 1),
        params(3, 0, 1, 1),
        params(3, 64, 0, 1),
        params(3, 64, 1, 0),
        params(1, 64, 1, 1),
    ] {
        assert!(matches!(Topology::build(&p), Err(TopoError::Invalid(_))), "{p:?}");
    }
    for o in [70_000, u32::MAX] {
        assert!(Topology::build(&params(2, 64, o, 1)).is_err());
    }
    let k = BuildKnobs {
        hosts_per_tor: Some(u32::MAX),
    };
    assert!(Topology::build_with(&params(3, 64, 1, 1), &k).is_err());
    let k = BuildKnobs { hosts_per_tor: Some(6) };
    assert!(matches!(
        Topology::build_with(&params(3, 64, 4, 1), &k),
        Err(TopoError::Invalid(_))
    ));
}

#[test]
fn build_8192_smoke() {
    let t0 = std::time::Instant::now();
    let t = Topology::build(&params(3, 8192, 1, 1)).unwrap();
    eprintln!("8192 hosts, 3 tiers: {} nodes in {:?}", t.nodes.len(), t0.elapsed());
    assert_eq!(t.nodes.len(), 8192 + 1280);
}
