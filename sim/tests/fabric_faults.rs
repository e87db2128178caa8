//! Failures: MRC routes around a dead core link without errors; RC flows
//! crossing it stall for their RTO and, with finite retries, end in error.

use proto::time::{Duration, Instant};
use sim::fabric::net::trace_path;
use sim::fabric::testnets::{fat_tree, FatTreeShape, LinkSpec};
use sim::fabric::topo::{NodeId, Topology};
use sim::fabric::traffic::permutation;
use sim::fabric::{run, Fault, FaultKind, LinkRef, SimConfig};

/// k=4 fat tree (16 hosts) and its first agg's first core link, both ends.
fn setup() -> (Topology, LinkRef, [(NodeId, u16); 2]) {
    let shape = FatTreeShape::k_ary(4);
    let (topo, ids) = fat_tree(shape, LinkSpec::default());
    let agg = ids.aggs[0][0];
    let port = shape.tors_per_pod as u16; // first uplink
    let p = topo.nodes[agg as usize].ports[port as usize];
    (topo, LinkRef { node: agg, port }, [(agg, port), (p.peer, p.peer_port)])
}

/// Whether the data path (src -> dst) of `ev` crosses the link.
fn data_crosses(topo: &Topology, cfg: &SimConfig, src: u32, dst: u32, ev: u32, ends: &[(NodeId, u16); 2]) -> bool {
    trace_path(topo, cfg.ecmp, cfg.seed, src, dst, ev)
        .iter()
        .any(|h| ends.contains(h))
}

/// Whether the data path or the ACK path (dst -> src, same EV) crosses it.
fn crosses(topo: &Topology, cfg: &SimConfig, src: u32, dst: u32, ev: u32, ends: &[(NodeId, u16); 2]) -> bool {
    data_crosses(topo, cfg, src, dst, ev, ends) || data_crosses(topo, cfg, dst, src, ev, ends)
}

#[test]
fn mrc_survives_core_link_down() {
    let (topo, link, ends) = setup();
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 16;
    let down_at = Instant::from_us(20);
    cfg.faults.push(Fault {
        at: down_at,
        link,
        kind: FaultKind::Down,
    });
    let flows = permutation(16, 1_000_000, 3);
    let out = run(&topo, &cfg, &flows, None).unwrap();
    let s = &out.summary;
    eprintln!("{}", sim::fabric::summary_json(s));
    assert_eq!(s.flows_completed, flows.len(), "every flow completes");
    assert_eq!(s.qp_errors, 0);
    assert!(s.drop_link_down > 0, "the failure mattered");
    let mut crossing = 0;
    let mut false_marks: Vec<&sim::fabric::results::EvMark> = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        let evs = &out.flow_evs[i];
        for (k, &ev) in evs.iter().enumerate() {
            let marked = out
                .ev_marks
                .iter()
                .any(|m| m.flow == i as u32 && m.ev_index == k as u16);
            // Data lost on the EV: the requester must mark it. (An EV
            // whose ACKs alone cross the link loses only cumulative SACKs,
            // which later SACKs on other EVs cover: no mark needed.)
            if data_crosses(&topo, &cfg, f.src, f.dst, ev, &ends) {
                crossing += 1;
                assert!(
                    marked,
                    "flow {i} EV {ev:#x} carries data over the dead link but was not marked ASSUMED_BAD"
                );
            } else if !crosses(&topo, &cfg, f.src, f.dst, ev, &ends) {
                false_marks.extend(
                    out.ev_marks
                        .iter()
                        .filter(|m| m.flow == i as u32 && m.ev_index == k as u16),
                );
            }
        }
    }
    assert!(crossing > 0, "some EVs cross the dead link");
    // The model attributes an RTO to the EV the oldest packet was last sent
    // on, which can be a good EV carrying a retransmission: a few false
    // marks by timeout, none by loss inference.
    eprintln!("{crossing} EVs carry data over the dead link; marks on other EVs: {false_marks:?}");
    assert!(false_marks
        .iter()
        .all(|m| m.reason != proto::model::ev::EvChangeReason::Loss));
    assert!(false_marks.len() * 2 <= crossing, "mostly accurate marking");
}

#[test]
fn rc_stalls_on_dead_link_and_errors_with_finite_retries() {
    let (topo, link, ends) = setup();
    let mut cfg = SimConfig::rc();
    cfg.ack_timeout_exp = 4; // 16.4 us
    cfg.retry_linear = 2;
    cfg.retry_exp = 1;
    let down_at = Instant::from_us(20);
    cfg.faults.push(Fault {
        at: down_at,
        link,
        kind: FaultKind::Down,
    });
    cfg.time_limit = Duration::from_ms(20);
    let flows = permutation(16, 1_000_000, 3);
    let out = run(&topo, &cfg, &flows, None).unwrap();
    eprintln!("{}", sim::fabric::summary_json(&out.summary));
    let rto = proto::model::ack_timeout(cfg.ack_timeout_exp);
    let (mut hit, mut spared) = (0, 0);
    for (i, f) in flows.iter().enumerate() {
        let r = &out.flows[i];
        let ev = out.flow_evs[i][0];
        if crosses(&topo, &cfg, f.src, f.dst, ev, &ends) {
            hit += 1;
            assert!(r.error, "flow {i} crosses the dead link: QP error expected, got {r:?}");
            assert!(r.timeouts >= 1, "flow {i}: RTO fired");
            assert!(r.end_ps.is_none());
        } else {
            spared += 1;
            assert!(
                !r.error && r.end_ps.is_some(),
                "flow {i} avoids the link and must finish: {r:?}"
            );
        }
    }
    assert!(hit > 0 && spared > 0, "hit {hit} spared {spared}");
    assert!(out.summary.qp_errors >= hit as u64);
    let _ = rto;
}

#[test]
fn rc_with_infinite_retries_stalls_until_link_returns() {
    let (topo, link, ends) = setup();
    let mut cfg = SimConfig::rc();
    cfg.ack_timeout_exp = 4;
    let down_at = Instant::from_us(20);
    let up_at = Instant::from_us(300);
    cfg.faults.push(Fault {
        at: down_at,
        link,
        kind: FaultKind::Down,
    });
    cfg.faults.push(Fault {
        at: up_at,
        link,
        kind: FaultKind::Up,
    });
    let flows = permutation(16, 1_000_000, 3);
    let out = run(&topo, &cfg, &flows, None).unwrap();
    assert_eq!(out.summary.flows_completed, flows.len());
    let rto = proto::model::ack_timeout(cfg.ack_timeout_exp).as_ps();
    for (i, f) in flows.iter().enumerate() {
        let r = &out.flows[i];
        if crosses(&topo, &cfg, f.src, f.dst, out.flow_evs[i][0], &ends) && r.end_ps.unwrap() > down_at.as_ps() {
            assert!(
                r.end_ps.unwrap() >= up_at.as_ps(),
                "flow {i} stalled until the link returned"
            );
            assert!(r.fct_ps.unwrap() >= rto, "stalled at least one RTO");
            assert!(r.timeouts >= 1);
        }
    }
}

/// `SimConfig::loss` drops a fraction of every link's packets; the flows
/// still complete (MRC recovers), and a rate outside [0, 1) is refused.
#[test]
fn global_loss_applies_to_every_link() {
    use sim::fabric::testnets::{star, LinkSpec};
    use sim::fabric::traffic::permutation;
    let topo = star(16, LinkSpec::default());
    let flows = permutation(16, 500_000, 3);
    let mut cfg = sim::fabric::SimConfig::mrc();
    let clean = sim::fabric::run(&topo, &cfg, &flows, None).unwrap();
    assert_eq!(clean.summary.drop_loss, 0);
    cfg.loss = 0.01;
    let lossy = sim::fabric::run(&topo, &cfg, &flows, None).unwrap();
    assert_eq!(lossy.summary.flows_completed, flows.len());
    let carried: u64 = lossy.ports.iter().map(|p| p.tx_packets).sum();
    let lost = lossy.summary.drop_loss as f64;
    assert!(
        lost > 0.003 * carried as f64 && lost < 0.03 * carried as f64,
        "{lost} of {carried}"
    );
    cfg.loss = 1.0;
    assert!(sim::fabric::run(&topo, &cfg, &flows, None).is_err());
}

/// The k=4 fat tree in two planes, and plane 0's first agg's first core
/// uplink.
fn two_planes() -> (Topology, LinkRef) {
    let mut shape = FatTreeShape::k_ary(4);
    shape.planes = 2;
    let (topo, ids) = fat_tree(shape, LinkSpec::default());
    let uplink = LinkRef {
        node: ids.aggs[0][0],
        port: shape.tors_per_pod as u16,
    };
    (topo, uplink)
}

/// `kind` happening to `link` at `at_us`.
fn fault(at_us: u64, link: LinkRef, kind: FaultKind) -> Fault {
    Fault {
        at: Instant::from_us(at_us),
        link,
        kind,
    }
}

#[test]
fn backup_evs_replace_marked_evs_from_the_same_plane() {
    let (topo, uplink) = two_planes();
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 4;
    cfg.backup_evs = 8;
    cfg.faults.push(fault(20, uplink, FaultKind::Down));
    let flows = permutation(16, 1_000_000, 3);
    let out = run(&topo, &cfg, &flows, None).unwrap();
    let s = &out.summary;
    assert_eq!(s.flows_completed, flows.len());
    assert_eq!(s.qp_errors, 0);
    assert!(s.ev_marked_bad > 0, "the failure marked EVs");
    eprintln!(
        "marked {} promoted {} ({:?})",
        s.ev_marked_bad,
        s.ev_promoted,
        out.ev_promotions.first()
    );
    assert!(!out.ev_promotions.is_empty(), "backups took their places");
    assert_eq!(s.ev_promoted, out.ev_promotions.len() as u64);
    // The EV event log (`mrc sim --out`): both kinds, in time order.
    let log = sim::fabric::results::ev_events_csv(&out.ev_marks, &out.ev_promotions);
    let lines: Vec<&str> = log.lines().skip(1).collect();
    assert_eq!(lines.len(), out.ev_marks.len() + out.ev_promotions.len());
    assert!(lines.iter().any(|l| l.contains(",promoted,Promoted")), "{log}");
    assert!(lines.iter().any(|l| l.contains(",assumed_bad,")), "{log}");
    let times: Vec<f64> = lines
        .iter()
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{log}");
    // The plane of an EV: the host port its first hop leaves on.
    let plane = |f: u32, index: u16| {
        let spec = &flows[f as usize];
        let ev = out.flow_evs[f as usize][index as usize];
        trace_path(&topo, cfg.ecmp, cfg.seed, spec.src, spec.dst, ev)[0].1
    };
    for p in &out.ev_promotions {
        assert!(p.ev_index >= 4, "a backup index: {p:?}");
        let replaced = out
            .ev_marks
            .iter()
            .find(|m| m.flow == p.flow && m.at_ps == p.at_ps && plane(m.flow, m.ev_index) == plane(p.flow, p.ev_index));
        assert!(
            replaced.is_some(),
            "{p:?} replaced no EV of its plane marked at that time"
        );
    }
}

/// MRC 1.0's reverse EV set, one EV per plane: with a core link of one
/// plane dead, acknowledgements keep flowing (the set holds only EVs that
/// just delivered data) and the flows end as soon as with acknowledgements
/// echoing each packet's EV.
#[test]
fn reverse_ev_set_routes_acknowledgements_around_a_dead_link() {
    let (topo, uplink) = two_planes();
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 16;
    cfg.ecmp = sim::fabric::EcmpMode::EvPath;
    cfg.faults.push(fault(20, uplink, FaultKind::Down));
    let flows = permutation(16, 1_000_000, 3);
    let echo = run(&topo, &cfg, &flows, None).unwrap();
    cfg.reverse_evs_per_plane = 1;
    let reverse = run(&topo, &cfg, &flows, None).unwrap();
    for out in [&echo, &reverse] {
        assert_eq!(out.summary.flows_completed, flows.len());
        assert_eq!(out.summary.qp_errors, 0);
        assert!(out.summary.drop_link_down > 0, "the failure mattered");
    }
    let (e, r) = (echo.summary.fct_max_us.unwrap(), reverse.summary.fct_max_us.unwrap());
    eprintln!(
        "max FCT echo {e:.1} us, reverse set {r:.1} us, {} sets emptied",
        reverse.summary.reverse_evictions
    );
    assert!(r <= e * 1.1, "reverse set {r:.1} us vs echo {e:.1} us");
    assert_eq!(echo.summary.reverse_evictions, 0);
}

/// A host's own link goes down (one plane of two): with port status its
/// NIC stops sending on that plane at once (its QPs deny the port's EVs)
/// and sends on it again when the link returns; without it the EVs lose
/// packets until they are marked.
#[test]
fn a_nic_denies_the_evs_of_its_dead_port_and_allows_them_back() {
    let (topo, _) = two_planes();
    let host_link = LinkRef { node: 0, port: 0 };
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 16;
    cfg.ecmp = sim::fabric::EcmpMode::EvPath;
    cfg.faults = vec![
        fault(20, host_link, FaultKind::Down),
        fault(100, host_link, FaultKind::Up),
    ];
    // Host 0 sends 8 MB to host 15 over its two 100 Gb/s ports.
    let flows = vec![sim::fabric::FlowSpec::new(0, 0, 15, 8_000_000, Instant::ZERO)];
    let back = run(&topo, &cfg, &flows, None).unwrap();
    cfg.faults.pop();
    let stays_down = run(&topo, &cfg, &flows, None).unwrap();
    cfg.port_status = false;
    let unaware = run(&topo, &cfg, &flows, None).unwrap();
    for out in [&back, &stays_down, &unaware] {
        assert_eq!(out.summary.flows_completed, 1);
        assert_eq!(out.summary.qp_errors, 0);
    }
    let fct = |o: &sim::fabric::RunOutput| o.summary.fct_max_us.unwrap();
    let dead = |o: &sim::fabric::RunOutput| o.summary.drop_link_down;
    eprintln!(
        "FCT {:.1} us (link back at 100 us) / {:.1} (stays down) / {:.1} (no port status); \
         link-down drops {} / {} / {}",
        fct(&back),
        fct(&stays_down),
        fct(&unaware),
        dead(&back),
        dead(&stays_down),
        dead(&unaware)
    );
    // Denied at once: only what was already queued on the port dies, and
    // no EV is marked; unaware, the EVs keep losing packets until marked.
    assert!(
        dead(&stays_down) * 4 < dead(&unaware),
        "{} vs {}",
        dead(&stays_down),
        dead(&unaware)
    );
    assert_eq!(stays_down.summary.ev_marked_bad, 0, "denied, not marked");
    assert!(unaware.summary.ev_marked_bad > 0);
    // Allowed back: two ports again after 100 us, so it ends clearly
    // before the run whose port stays down (8 MB at 100 Gb/s is 640 us).
    assert!(
        fct(&back) < 0.85 * fct(&stays_down),
        "{} vs {}",
        fct(&back),
        fct(&stays_down)
    );
}

/// The other half of port status: host 0's NIC tells the hosts that send
/// to it (a Port Status Update on QPN 0x2) that its plane-0 link is down;
/// their QPs deny their plane-0 EVs towards it without losing packets on
/// them first, and allow them again when the link is back.
#[test]
fn a_port_status_update_makes_senders_avoid_a_receivers_dead_port() {
    let (topo, _) = two_planes();
    let host_link = LinkRef { node: 0, port: 0 };
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 16;
    cfg.ecmp = sim::fabric::EcmpMode::EvPath;
    cfg.faults = vec![
        fault(20, host_link, FaultKind::Down),
        fault(150, host_link, FaultKind::Up),
    ];
    // Hosts 15 and 9 send 4 MB each to host 0.
    let flows = vec![
        sim::fabric::FlowSpec::new(0, 15, 0, 4_000_000, Instant::ZERO),
        sim::fabric::FlowSpec::new(1, 9, 0, 4_000_000, Instant::ZERO),
    ];
    let told = run(&topo, &cfg, &flows, None).unwrap();
    cfg.port_status = false;
    let untold = run(&topo, &cfg, &flows, None).unwrap();
    for out in [&told, &untold] {
        assert_eq!(out.summary.flows_completed, 2);
        assert_eq!(out.summary.qp_errors, 0);
    }
    let s = &told.summary;
    eprintln!(
        "updates {} applied {}; link-down drops {} / {}; marks {} / {}; FCT {:.1} / {:.1} us",
        s.port_status_updates,
        s.port_status_applied,
        s.drop_link_down,
        untold.summary.drop_link_down,
        s.ev_marked_bad,
        untold.summary.ev_marked_bad,
        s.fct_max_us.unwrap(),
        untold.summary.fct_max_us.unwrap()
    );
    // Down and up: two updates to each of the two senders, each applied.
    assert_eq!((s.port_status_updates, s.port_status_applied), (4, 4));
    assert_eq!(untold.summary.port_status_updates, 0);
    // What was already on its way to the dead link is lost either way;
    // told, the senders stop before losing enough to mark an EV.
    assert!(s.drop_link_down < untold.summary.drop_link_down);
    assert_eq!(s.ev_marked_bad, 0);
    assert!(untold.summary.ev_marked_bad > 0);
}
