//! `EcmpMode::EvPath`: a flow's EVs spread over all paths whatever the EV
//! and path counts, and packets follow `trace_path`.

use std::collections::{BTreeMap, BTreeSet};

use proto::time::Instant;
use sim::fabric::net::{ev_path_values, gcd, path_count, trace_path};
use sim::fabric::topo::{NodeKind, TopoParams, Topology};
use sim::fabric::{run, EcmpMode, FlowSpec, SimConfig};

fn tier(topo: &Topology, node: u32) -> Option<u8> {
    match topo.nodes[node as usize].kind {
        NodeKind::Switch { tier, .. } => Some(tier),
        NodeKind::Host => None,
    }
}

/// Global index of (node, port) in `RunOutput::ports`.
fn port_index(topo: &Topology, node: u32, port: u16) -> usize {
    topo.nodes[..node as usize].iter().map(|n| n.ports.len()).sum::<usize>() + port as usize
}

/// 128-host fat tree (4 uplinks per ToR and per agg: 16 paths between
/// pods), 8 EVs per flow: fewer EVs than paths, as 128 EVs on the 8192-host
/// tree's 256. With EVs numbered from a 256-aligned base, every flow's
/// second digit was 0 or 1, so the aggs' uplinks 2 and 3 (half the core)
/// never carried a packet.
#[test]
fn fewer_evs_than_paths_cover_the_whole_core() {
    let topo = Topology::build(&TopoParams {
        hosts: 128,
        ..TopoParams::default()
    })
    .unwrap();
    let mut cfg = SimConfig::mrc();
    cfg.ecmp = EcmpMode::EvPath;
    cfg.n_evs = 8;
    cfg.min_active_evs = 4;
    // Pod 0's 16 hosts each send 8 packets to a host of pod 4.
    let flows: Vec<FlowSpec> = (0..16u32)
        .map(|h| FlowSpec::new(h as u64, h, 64 + (h * 7) % 16, 8 * 4096, Instant::ZERO))
        .collect();
    for f in &flows {
        assert_eq!(path_count(&topo, f.src, f.dst), 16);
    }
    let out = run(&topo, &cfg, &flows, None).unwrap();
    assert_eq!(out.summary.flows_completed, 16);
    let mut traced_uplinks = BTreeSet::new();
    for (i, f) in flows.iter().enumerate() {
        let evs = &out.flow_evs[i];
        assert_eq!(evs.len(), 8);
        let mut paths = BTreeSet::new();
        let mut per_tor_uplink: BTreeMap<u16, usize> = BTreeMap::new();
        let mut per_agg: BTreeMap<u32, BTreeSet<u16>> = BTreeMap::new();
        for &ev in evs {
            let hops = trace_path(&topo, cfg.ecmp, cfg.seed, f.src, f.dst, ev);
            assert_eq!(hops.len(), 6, "host, ToR, agg, core, agg, ToR");
            assert_eq!(tier(&topo, hops[1].0), Some(0));
            assert_eq!(tier(&topo, hops[2].0), Some(1));
            *per_tor_uplink.entry(hops[1].1).or_default() += 1;
            assert!(
                per_agg.entry(hops[2].0).or_default().insert(hops[2].1),
                "flow {i}: two EVs on one agg uplink while paths are left"
            );
            traced_uplinks.insert(hops[2]);
            paths.insert(hops);
        }
        assert_eq!(paths.len(), 8, "flow {i}: 8 EVs on 8 distinct paths");
        assert_eq!(per_tor_uplink.len(), 4, "flow {i}: every ToR uplink");
        assert!(per_tor_uplink.values().all(|&c| c == 2), "flow {i}: {per_tor_uplink:?}");
    }
    // The pod's 4 aggs x 4 uplinks: every one is on some flow's path, and
    // the packets went exactly where trace_path says (only pod 0's data
    // crosses pod 0's agg uplinks).
    assert_eq!(traced_uplinks.len(), 16, "every agg uplink of pod 0 is used");
    for node in 0..topo.nodes.len() as u32 {
        if tier(&topo, node) != Some(1) {
            continue;
        }
        for (p, port) in topo.nodes[node as usize].ports.iter().enumerate() {
            if tier(&topo, port.peer) != Some(2) {
                continue;
            }
            let sent = out.ports[port_index(&topo, node, p as u16)].tx_packets > 0;
            let pod0 = topo.nodes[node as usize].ports[0].peer < topo.n_hosts + 4;
            if pod0 {
                assert_eq!(sent, traced_uplinks.contains(&(node, p as u16)), "agg {node} port {p}");
                assert!(sent, "agg {node} uplink {p} carried nothing");
            }
        }
    }
}

/// More EVs than paths, and counts that are not powers of two: every path
/// gets floor or ceil of EVs / paths, every group member an equal share
/// (within one), values distinct.
#[test]
fn more_evs_than_paths_share_evenly() {
    // 128 hosts: 4 uplinks per ToR and agg, 16 paths between pods.
    let topo = Topology::build(&TopoParams {
        hosts: 128,
        ..TopoParams::default()
    })
    .unwrap();
    for n_evs in [1usize, 5, 16, 40, 128] {
        let mut cfg = SimConfig::mrc();
        cfg.ecmp = EcmpMode::EvPath;
        cfg.n_evs = n_evs;
        cfg.min_active_evs = cfg.min_active_evs.min(n_evs as u16);
        let flows = vec![
            FlowSpec::new(0, 3, 100, 64 * 1024, Instant::ZERO),
            FlowSpec::new(1, 40, 2, 64 * 1024, Instant::ZERO),
        ];
        assert_eq!(path_count(&topo, 3, 100), 16);
        let out = run(&topo, &cfg, &flows, None).unwrap();
        assert_eq!(out.summary.flows_completed, 2);
        for (i, f) in flows.iter().enumerate() {
            let evs = &out.flow_evs[i];
            let distinct: BTreeSet<u32> = evs.iter().copied().collect();
            assert_eq!(distinct.len(), n_evs, "distinct EV values");
            let mut per_path: BTreeMap<Vec<(u32, u16)>, usize> = BTreeMap::new();
            let mut per_tor_uplink: BTreeMap<u16, usize> = BTreeMap::new();
            for &ev in evs {
                assert!(ev < 1 << 16);
                let hops = trace_path(&topo, cfg.ecmp, cfg.seed, f.src, f.dst, ev);
                *per_tor_uplink.entry(hops[1].1).or_default() += 1;
                *per_path.entry(hops).or_default() += 1;
            }
            let (lo, hi) = (n_evs / 16, n_evs.div_ceil(16));
            assert_eq!(per_path.len(), n_evs.min(16), "{n_evs} EVs");
            assert!(
                per_path.values().all(|&c| c == lo || c == hi),
                "{n_evs} EVs: {per_path:?}"
            );
            let (lo, hi) = (n_evs / 4, n_evs.div_ceil(4));
            assert!(
                per_tor_uplink.values().all(|&c| c == lo || c == hi) && per_tor_uplink.len() == n_evs.min(4),
                "{n_evs} EVs: {per_tor_uplink:?}"
            );
        }
    }
}

/// The EV numbering itself: for any path count and coprime stride, a
/// window of `paths` consecutive EVs takes every path once.
#[test]
fn ev_path_values_are_a_permutation_per_round() {
    for paths in [1u32, 2, 3, 6, 12, 64, 100, 256] {
        // Strides coprime to the path count (the first 12).
        for stride in (1..paths.max(2)).filter(|&s| gcd(s, paths) == 1).take(12) {
            for base in [0, paths / 3, paths.saturating_sub(1)] {
                let n = 2 * paths as usize + 3;
                let v = ev_path_values(paths, n, base, stride);
                let distinct: BTreeSet<u32> = v.iter().copied().collect();
                assert_eq!(distinct.len(), n);
                for w in v.windows(paths as usize) {
                    let p: BTreeSet<u32> = w.iter().map(|e| e % paths).collect();
                    assert_eq!(p.len(), paths as usize, "paths {paths} stride {stride} base {base}");
                }
            }
        }
    }
}
