//! Planes, rerouting, blackholes, degraded links, the time series,
//! all-to-all, the receiver penalty, ECN at the last hop.

use proto::time::{Duration, Instant};
use sim::fabric::net::trace_path;
use sim::fabric::testnets::{fat_tree, leaf_spine, FatTreeShape, LinkSpec};
use sim::fabric::traffic::{all_to_all, permutation};
use sim::fabric::{run, Fault, FaultKind, LinkRef, SimConfig};

#[test]
fn two_planes_both_carry_traffic() {
    let mut shape = FatTreeShape::k_ary(4);
    shape.planes = 2;
    let (topo, ids) = fat_tree(shape, LinkSpec::default());
    let flows = permutation(16, 500_000, 2);
    let out = run(&topo, &SimConfig::mrc(), &flows, None).unwrap();
    assert_eq!(out.summary.flows_completed, 16);
    // Each host's two ports both sent data.
    for h in 0..16 {
        assert!(
            out.ports[2 * h].tx_packets > 0 && out.ports[2 * h + 1].tx_packets > 0,
            "host {h}"
        );
    }
    // Two planes of 100 Gb/s: a lone flow runs faster than one plane allows.
    let lone = vec![sim::fabric::FlowSpec::new(0, 0, 15, 2_000_000, Instant::ZERO)];
    let out = run(&topo, &SimConfig::mrc(), &lone, None).unwrap();
    let g = out.flows[0].goodput_gbps.unwrap();
    assert!(g > 120.0, "goodput over two planes {g}");
    let _ = ids;
}

#[test]
fn rc_recovers_when_routing_reconverges() {
    let shape = FatTreeShape::k_ary(4);
    let (topo, ids) = fat_tree(shape, LinkSpec::default());
    let link = LinkRef {
        node: ids.aggs[0][0],
        port: shape.tors_per_pod as u16,
    };
    let mut cfg = SimConfig::rc();
    cfg.ack_timeout_exp = 5;
    cfg.time_limit = Duration::from_ms(3);
    cfg.faults.push(Fault {
        at: Instant::from_us(20),
        link,
        kind: FaultKind::Down,
    });
    let flows = permutation(16, 1_000_000, 3);
    // Without reconvergence the flows hashed onto the dead link never finish
    // (infinite retries)...
    let dead = run(&topo, &cfg, &flows, None).unwrap();
    assert!(dead.summary.flows_completed < 16);
    assert_eq!(dead.summary.qp_errors, 0);
    // ...with it (10 us later) every flow completes, after an RTO.
    cfg.reroute_after = Some(Duration::from_us(10));
    let out = run(&topo, &cfg, &flows, None).unwrap();
    assert_eq!(
        out.summary.flows_completed,
        16,
        "{}",
        sim::fabric::summary_json(&out.summary)
    );
    assert_eq!(out.summary.qp_errors, 0);
    assert!(out.summary.timeouts > 0, "packets lost before rerouting cost an RTO");
    assert!(out.summary.drop_link_down > 0);
}

#[test]
fn mrc_marks_blackholed_evs() {
    let (topo, ids) = fat_tree(FatTreeShape::k_ary(4), LinkSpec::default());
    // Silent blackhole of one ToR uplink (one ECMP member).
    let tor = ids.tors[0][0];
    let port = 2; // ToR ports: 2 hosts, then uplinks
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 16;
    cfg.faults.push(Fault {
        at: Instant::from_us(5),
        link: LinkRef { node: tor, port },
        kind: FaultKind::Blackhole,
    });
    let flows = permutation(16, 1_000_000, 4);
    let out = run(&topo, &cfg, &flows, None).unwrap();
    for f in &out.flows {
        if f.end_ps.is_none() {
            eprintln!("{f:?}");
        }
    }
    eprintln!("{}", sim::fabric::summary_json(&out.summary));
    assert_eq!(out.summary.flows_completed, 16);
    assert_eq!(out.summary.qp_errors, 0);
    assert!(out.summary.drop_blackhole > 0);
    for (i, f) in flows.iter().enumerate() {
        for (k, &ev) in out.flow_evs[i].iter().enumerate() {
            let through = trace_path(&topo, cfg.ecmp, cfg.seed, f.src, f.dst, ev).contains(&(tor, port));
            if through {
                assert!(
                    out.ev_marks
                        .iter()
                        .any(|m| m.flow == i as u32 && m.ev_index == k as u16),
                    "flow {i} EV {ev:#x} is blackholed but not marked"
                );
            }
        }
    }
}

#[test]
fn degraded_link_slows_only_its_share() {
    let topo = leaf_spine(2, 4, 4, 100.0, LinkSpec::default());
    let flows: Vec<_> = (0..4)
        .map(|i| sim::fabric::FlowSpec::new(i, i as u32, 4 + i as u32, 500_000, Instant::ZERO))
        .collect();
    let base = run(&topo, &SimConfig::mrc(), &flows, None).unwrap();
    let mut cfg = SimConfig::mrc();
    // Leaf 0 is node 8; its port 4 is its first spine uplink.
    cfg.faults.push(Fault {
        at: Instant::ZERO,
        link: LinkRef { node: 8, port: 4 },
        kind: FaultKind::Degrade { factor: 0.25 },
    });
    let slow = run(&topo, &cfg, &flows, None).unwrap();
    assert_eq!(slow.summary.flows_completed, 4);
    let (a, b) = (base.summary.fct_max_us.unwrap(), slow.summary.fct_max_us.unwrap());
    eprintln!("max FCT {a:.1} us healthy, {b:.1} us with one uplink at 25%");
    assert!(b > a, "a slower link costs something");
    // Serialisation at 25 Gb/s on the degraded port.
    let g: usize = topo.nodes[..8].iter().map(|n| n.ports.len()).sum::<usize>() + 4;
    assert!(
        slow.ports[g].tx_packets > 0,
        "the degraded uplink still carries its share"
    );
}

#[test]
fn goodput_series_accounts_for_delivered_payload() {
    let (topo, _) = fat_tree(FatTreeShape::k_ary(4), LinkSpec::default());
    let flows = permutation(16, 300_000, 9);
    let out = run(&topo, &SimConfig::mrc(), &flows, None).unwrap();
    let total: u64 = out.series.bytes.iter().sum();
    assert!(total >= 16 * 300_000, "{total}");
    assert!(
        out.series.bytes.len() as u64 * out.series.bin_ps >= (out.summary.sim_time_us * 1e6) as u64 - out.series.bin_ps
    );
    // Peak bin rate is at most 16 hosts x 100 Gb/s.
    let peak = (0..out.series.bytes.len())
        .map(|i| out.series.gbps(i))
        .fold(0.0, f64::max);
    assert!(peak <= 1600.0 + 1.0 && peak > 100.0, "{peak}");
}

#[test]
fn all_to_all_completes() {
    let topo = leaf_spine(2, 4, 2, 100.0, LinkSpec::default());
    let flows = all_to_all(8, 50_000);
    assert_eq!(flows.len(), 56);
    for cfg in [SimConfig::mrc(), SimConfig::rc()] {
        let out = run(&topo, &cfg, &flows, None).unwrap();
        assert_eq!(out.summary.flows_completed, 56, "{:?}", cfg.transport);
        assert!(out.summary.conservation.balanced());
    }
}

/// The receiver's cwnd penalty reaches the senders: a 15 -> 1 incast runs
/// differently with it (15 senders: penalty 15, each keeps 2^-15/8 of its
/// ceiling) and still completes every flow without loss of data.
#[test]
fn receiver_penalty_reaches_the_senders_of_an_incast() {
    let (topo, _) = fat_tree(FatTreeShape::k_ary(4), LinkSpec::default());
    let flows = sim::fabric::traffic::incast(16, 15, 0, 400_000);
    let mut cfg = SimConfig::mrc();
    let plain = run(&topo, &cfg, &flows, None).unwrap();
    cfg.receiver_penalty = true;
    let penalised = run(&topo, &cfg, &flows, None).unwrap();
    for out in [&plain, &penalised] {
        assert_eq!(out.summary.flows_completed, 15);
        assert_eq!(out.summary.qp_errors, 0);
    }
    assert_ne!(
        plain.flows.iter().map(|f| f.fct_ps).collect::<Vec<_>>(),
        penalised.flows.iter().map(|f| f.fct_ps).collect::<Vec<_>>(),
        "the penalty changed nothing"
    );
    eprintln!(
        "15 -> 1 max FCT {:.1} us plain, {:.1} us with the penalty; trims {} / {}",
        plain.summary.fct_max_us.unwrap(),
        penalised.summary.fct_max_us.unwrap(),
        plain.summary.trims,
        penalised.summary.trims
    );
}

/// MRC 1.0 deployments keep ECN off at the last hop, and so does an MRC
/// run by default (RC keeps it: DCQCN needs it): an incast's queue is at
/// the receiver's port, so marks disappear with `ecn_last_hop` off, while
/// trimming there still works.
#[test]
fn ecn_off_at_the_last_hop_leaves_incast_unmarked() {
    let (topo, _) = fat_tree(FatTreeShape::k_ary(4), LinkSpec::default());
    let flows = sim::fabric::traffic::incast(16, 15, 0, 400_000);
    let mut cfg = SimConfig::mrc();
    assert!(!cfg.switch.ecn_last_hop, "off by default for MRC");
    assert!(SimConfig::rc().switch.ecn_last_hop, "on by default for RC");
    let unmarked = run(&topo, &cfg, &flows, None).unwrap();
    cfg.switch.ecn_last_hop = true;
    let marked = run(&topo, &cfg, &flows, None).unwrap();
    // Marks on the switch ports to hosts (global port order: node by node).
    let to_hosts = |out: &sim::fabric::RunOutput| -> u64 {
        let peers = topo.nodes.iter().flat_map(|n| n.ports.iter().map(|p| p.peer));
        peers
            .zip(&out.ports)
            .filter(|(peer, _)| *peer < topo.n_hosts)
            .map(|(_, s)| s.ecn_marks)
            .sum()
    };
    assert!(to_hosts(&marked) > 0, "the incast queue marks with ECN at the last hop");
    assert_eq!(to_hosts(&unmarked), 0);
    assert!(unmarked.summary.ecn_marks < marked.summary.ecn_marks);
    assert!(unmarked.summary.trims_last_hop > 0);
    assert_eq!(unmarked.summary.flows_completed, 15);
}

/// The time series htsim users log: queue depth per port and goodput per
/// flow. In a 15 -> 1 incast the deepest queue is the last hop's, and each
/// flow's series adds up to what it delivered.
#[test]
fn queue_and_flow_series_of_an_incast() {
    let (topo, ids) = fat_tree(FatTreeShape::k_ary(4), LinkSpec::default());
    let flows = sim::fabric::traffic::incast(16, 15, 0, 400_000);
    let mut cfg = SimConfig::mrc();
    cfg.queue_series = true;
    cfg.flow_series = 15;
    let out = run(&topo, &cfg, &flows, None).unwrap();
    assert_eq!(out.summary.flows_completed, 15);
    let deepest = out.queue_series.iter().max_by_key(|q| q.max_bytes).unwrap();
    let last_hop = topo.nodes[deepest.node as usize].ports[deepest.port as usize].peer;
    assert_eq!(last_hop, 0, "deepest queue {deepest:?} is not on the port to host 0");
    assert_eq!(deepest.node, ids.tors[0][0]);
    assert!(
        out.queue_series.windows(2).all(|w| w[0].bin <= w[1].bin),
        "ordered by bin"
    );
    assert_eq!(
        deepest.max_bytes,
        out.ports.iter().map(|p| p.max_queue_bytes).max().unwrap()
    );
    assert_eq!(out.flow_series.len(), 15);
    for (f, spec) in flows.iter().enumerate() {
        let got: u64 = out.flow_series[f].iter().sum();
        let resent = out.flows[f].retransmissions * u64::from(cfg.mtu);
        assert!(
            got >= spec.size && got <= spec.size + resent,
            "flow {f}: {got} of {}",
            spec.size
        );
    }
    let total: u64 = out.series.bytes.iter().sum();
    assert_eq!(total, out.flow_series.iter().flatten().sum::<u64>());
    // Off by default: nothing recorded.
    let plain = run(&topo, &SimConfig::mrc(), &flows, None).unwrap();
    assert!(plain.queue_series.is_empty() && plain.flow_series.is_empty());
}

/// The RoCE + PFC baseline: with priority flow control the fabric is
/// lossless. A 15 -> 1 RC incast with small buffers loses packets and
/// retransmits without PFC; with it nothing is dropped or resent, pauses
/// were sent, and no switch holds more from one link than XOFF plus what
/// the link carries while the pause travels back.
#[test]
fn pfc_makes_an_rc_incast_lossless() {
    use sim::fabric::net::PfcConfig;
    let (topo, _) = fat_tree(FatTreeShape::k_ary(4), LinkSpec::default());
    let flows = sim::fabric::traffic::incast(16, 15, 0, 400_000);
    let mut cfg = SimConfig::rc();
    cfg.switch.buffer_bytes = 100_000;
    let lossy = run(&topo, &cfg, &flows, None).unwrap();
    assert!(lossy.summary.drops + lossy.summary.trims > 0, "{:?}", lossy.summary);
    assert!(lossy.summary.retransmissions > 0);
    let pfc = PfcConfig::default();
    cfg.switch.pfc = Some(pfc);
    // Under pauses a round trip takes as long as the queues upstream take
    // to drain: RoCE deployments on PFC run RTOs of milliseconds (2^12 x
    // 1.024 us = 4.2 ms); 131 us fires spuriously (176 timeouts here).
    cfg.ack_timeout_exp = 12;
    let lossless = run(&topo, &cfg, &flows, None).unwrap();
    let s = &lossless.summary;
    assert_eq!(s.flows_completed, 15);
    assert_eq!((s.drops, s.trims, s.retransmissions, s.timeouts), (0, 0, 0, 0), "{s:?}");
    assert!(s.pfc_pauses > 0);
    // The pauses reached the senders' NICs (hosts' ports come first in
    // the global port order).
    let host_pauses: u64 = lossless.ports[..16].iter().map(|p| p.pfc_pauses).sum();
    assert!(host_pauses > 0, "no host NIC was paused");
    // Headroom: XOFF + a 1 us link's round trip at 100 Gb/s (25 KB) +
    // one frame in flight each way.
    let headroom = 25_000 + 2 * 4_200;
    let held = lossless.ports.iter().map(|p| p.pfc_max_held).max().unwrap();
    assert!(
        held > pfc.xoff_bytes && held <= pfc.xoff_bytes + headroom,
        "held {held}"
    );
    // MRC over the same lossless fabric completes too.
    let mut mrc = SimConfig::mrc();
    mrc.switch.pfc = Some(pfc);
    let out = run(&topo, &mrc, &flows, None).unwrap();
    assert_eq!(out.summary.flows_completed, 15);
    assert_eq!(out.summary.drops, 0);
}
