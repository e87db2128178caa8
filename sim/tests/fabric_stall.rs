//! Stall inference and the tail check on the fabric: a dead core link is
//! detected without any RTO, and a healthy fabric sees no stall marks.

use proto::model::ev::EvChangeReason;
use proto::time::Instant;
use sim::fabric::net::trace_path;
use sim::fabric::testnets::{fat_tree, FatTreeShape, LinkSpec};
use sim::fabric::traffic::permutation;
use sim::fabric::{run, Fault, FaultKind, LinkRef, SimConfig};

#[test]
fn dead_core_link_is_detected_by_stall_not_rto() {
    let shape = FatTreeShape::k_ary(4);
    let (topo, ids) = fat_tree(shape, LinkSpec::default());
    let link = LinkRef {
        node: ids.aggs[0][0],
        port: shape.tors_per_pod as u16,
    };
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
    assert_eq!(s.flows_completed, flows.len());
    assert_eq!(s.qp_errors, 0);
    assert!(s.drop_link_down > 0, "the failure mattered");
    assert!(!out.ev_marks.is_empty());
    assert!(
        out.ev_marks.iter().all(|m| m.reason == EvChangeReason::Stall),
        "{:?}",
        out.ev_marks
    );
    assert_eq!(s.timeouts, 0, "no RTO needed");
    // Every EV whose data crosses the link is marked within 100 us of the
    // failure (the RTO alone is 131 us). (EVs whose SACKs alone cross it
    // may be marked later, by the tail check, when a lost SACK leaves the
    // last packets unacknowledged.)
    let p = topo.nodes[link.node as usize].ports[link.port as usize];
    let ends = [(link.node, link.port), (p.peer, p.peer_port)];
    let mut crossing = 0;
    for (i, f) in flows.iter().enumerate() {
        for (k, &ev) in out.flow_evs[i].iter().enumerate() {
            if trace_path(&topo, cfg.ecmp, cfg.seed, f.src, f.dst, ev)
                .iter()
                .any(|h| ends.contains(h))
            {
                crossing += 1;
                let first = out
                    .ev_marks
                    .iter()
                    .filter(|m| m.flow == i as u32 && m.ev_index == k as u16)
                    .map(|m| m.at_ps)
                    .min();
                let took = first.expect("marked") - down_at.as_ps();
                assert!(
                    took < 100_000_000,
                    "flow {i} EV {k} marked {} us after the failure",
                    took / 1_000_000
                );
            }
        }
    }
    assert!(crossing > 0);
}

#[test]
fn healthy_fabric_has_no_stall_marks() {
    let shape = FatTreeShape::k_ary(4);
    let (topo, _) = fat_tree(shape, LinkSpec::default());
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 16;
    let flows = permutation(16, 1_000_000, 3);
    let out = run(&topo, &cfg, &flows, None).unwrap();
    assert_eq!(out.summary.flows_completed, flows.len());
    assert_eq!(out.summary.retransmissions, 0);
    assert!(out.ev_marks.is_empty(), "{:?}", out.ev_marks);
}
