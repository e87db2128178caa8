//! What the partition tests share (`fabric_partition.rs`,
//! `fabric_partition_review.rs`): a run in parts held to the run in one
//! part, flow by flow.

use sim::fabric::results::{ev_events_csv, flows_csv, goodput_csv, RunOutput};
use sim::fabric::run::{run, run_threads};
use sim::fabric::topo::{TopoParams, Topology};
use sim::fabric::traffic::FlowSpec;
use sim::fabric::SimConfig;

/// A generated tree: `tiers` (2 leaf-spine, 3 fat tree), `hosts`, `planes`,
/// `oversub`:1 at the ToRs.
pub fn tree(tiers: u8, hosts: u32, planes: u8, oversub: u32) -> Topology {
    Topology::build(&TopoParams {
        tiers,
        hosts,
        planes,
        oversubscription: oversub,
        ..TopoParams::default()
    })
    .expect("topology")
}

/// Everything a flow's outcome is made of, in one comparable string: what
/// the CLI writes (per-flow CSV, EV events, goodput series) and the
/// in-memory records behind it (EV marks and promotions in their order,
/// each flow's EVs, the per-flow series).
pub fn per_flow(out: &RunOutput) -> String {
    format!(
        "{}\n{}\n{}\nmarks {:?}\npromotions {:?}\nevs {:?}\nflow series {:?}",
        flows_csv(&out.flows),
        ev_events_csv(&out.ev_marks, &out.ev_promotions),
        goodput_csv(&out.series),
        out.ev_marks,
        out.ev_promotions,
        out.flow_evs,
        out.flow_series
    )
}

/// Run in one part, then in each of `parts` threads: every output equal
/// flow by flow (the first differing line is shown), and each partitioned
/// run's accounting balanced. Returns the one-part output.
pub fn same_in(topo: &Topology, cfg: &SimConfig, flows: &[FlowSpec], parts: &[u32]) -> RunOutput {
    let one = run(topo, cfg, flows, None).expect("run in one part");
    let want = per_flow(&one);
    let s = &one.summary;
    eprintln!(
        "flows {}/{} drops {} trims {} ecn {} pfc {} marks {} retx {} timeouts {} psu {} events {}",
        s.flows_completed,
        s.flows,
        s.drops,
        s.trims,
        s.ecn_marks,
        s.pfc_pauses,
        one.ev_marks.len(),
        s.retransmissions,
        s.timeouts,
        s.port_status_updates,
        s.events
    );
    for &n in parts {
        let got = run_threads(topo, cfg, flows, n, None).expect("partitioned run");
        let have = per_flow(&got);
        if have != want {
            let line = want
                .lines()
                .zip(have.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(want.lines().count().min(have.lines().count()));
            panic!(
                "{n} parts differ from one at line {line}:\n one: {}\n{n}: {}",
                want.lines().nth(line).unwrap_or("<none>"),
                have.lines().nth(line).unwrap_or("<none>")
            );
        }
        assert!(got.summary.conservation.balanced(), "{:?}", got.summary.conservation);
        assert_eq!(got.summary.drops, got.summary.conservation.dropped);
    }
    one
}
