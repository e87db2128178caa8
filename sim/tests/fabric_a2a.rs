//! All-to-all on a healthy fabric (issue 14): congestion is not a path
//! failure. Every host sends 64 KiB to every other host of a 32-host
//! 3-tier fat tree: queues build everywhere, packets are trimmed and
//! delayed, but no link fails, so no EV may be marked ASSUMED_BAD and
//! retransmission timeouts may not outnumber the packets really lost.

use proto::time::Duration;
use sim::fabric::run::run;
use sim::fabric::topo::{TopoParams, Topology};
use sim::fabric::traffic::all_to_all;
use sim::fabric::{EcmpMode, SimConfig};

#[test]
fn all_to_all_marks_no_ev_and_times_out_no_more_than_it_loses() {
    let topo = Topology::build(&TopoParams {
        hosts: 32,
        ..TopoParams::default()
    })
    .expect("topology");
    let flows = all_to_all(topo.n_hosts, 64 * 1024);
    let mut cfg = SimConfig::mrc();
    cfg.ecmp = EcmpMode::EvPath;
    cfg.time_limit = Duration::from_ms(100);
    let out = run(&topo, &cfg, &flows, None).expect("run");
    let s = &out.summary;
    assert_eq!(s.flows_completed, flows.len());
    assert_eq!(s.qp_errors, 0);
    assert!(s.conservation.balanced());
    assert_eq!(
        s.ev_marked_bad,
        0,
        "EVs marked on a healthy fabric: {:?}",
        &out.ev_marks[..out.ev_marks.len().min(8)]
    );
    let lost = s.drops + s.trims;
    assert!(
        s.timeouts as f64 <= 1.1 * lost as f64,
        "{} RTOs for {} packets lost",
        s.timeouts,
        lost
    );
    // Every host sends 31 x 64 KiB through one 100 Gb/s port: 163 us at
    // line rate; spraying keeps the fabric near it.
    let ideal_us = 31.0 * 65536.0 * 8.0 / 100e3;
    let max = s.fct_max_us.expect("completed");
    assert!(
        max < 1.3 * ideal_us,
        "max FCT {max:.1} us against {ideal_us:.1} us at line rate"
    );
}
