//! How fast MRC reacts to a failed or slow core link, on the htsim anchors
//! (`sim::anchors`: `../shared/anchors/htsim` beside the repository, or
//! under `MRC_SHARED`).
//!
//!     cargo run --release -p sim --example fault_reaction -- [128|1024] [healthy|degraded|down] [hash|ev-path] [rr|weighted]
//!
//! The fault hits the first uplink of the first aggregation switch
//! (`agg0.up0` in `mrc sim`): degraded = 25 % speed from 0 us, down = down
//! at 50 us. Prints FCTs, ASSUMED_BAD marks by reason, and for every
//! (flow, EV) whose data path crosses the link, when it was first marked
//! after the fault (after the mark the EV carries no new packets while a
//! GOOD EV remains), plus marks on EVs that do not cross it.

use std::collections::BTreeMap;

use proto::time::{Duration, Instant};
use sim::fabric::net::trace_path;
use sim::fabric::topo::{NodeKind, Topology};
use sim::fabric::traffic::read_cm;
use sim::fabric::{run, EcmpMode, Fault, FaultKind, LinkRef, SimConfig};

fn agg0_up0(topo: &Topology) -> LinkRef {
    let agg = (topo.n_hosts..topo.nodes.len() as u32)
        .find(|&n| topo.nodes[n as usize].kind == NodeKind::Switch { tier: 1, plane: 0 })
        .expect("a tier-1 switch");
    let port = topo.nodes[agg as usize]
        .ports
        .iter()
        .position(|p| matches!(topo.nodes[p.peer as usize].kind, NodeKind::Switch { tier: 2, .. }))
        .expect("an uplink");
    LinkRef {
        node: agg,
        port: port as u16,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: &'static str| args.get(i).map_or(d.to_string(), |s| s.clone());
    let (size, fault, ecmp, spray) = (arg(1, "128"), arg(2, "down"), arg(3, "hash"), arg(4, "rr"));
    let a = sim::anchors::htsim_dir_or_panic();
    let (tf, cf) = if size == "1024" {
        ("fat_tree_1024.topo", "perm_1024n_1024c_0u_2000000b.cm")
    } else {
        ("fat_tree_128_1os.topo", "perm_128n_128c_2MB.cm")
    };
    let topo = Topology::from_htsim_file(&a.join(tf), 1).expect("topology");
    let flows = read_cm(&a.join(cf)).expect("traffic").flows;
    let mut cfg = SimConfig::mrc();
    if ecmp == "ev-path" {
        cfg.ecmp = EcmpMode::EvPath;
    }
    if spray == "weighted" {
        cfg.spray = proto::model::ev::SprayPolicy::Weighted;
    }
    let link = agg0_up0(&topo);
    let at = if fault == "down" {
        Instant::from_us(50)
    } else {
        Instant::ZERO
    };
    match fault.as_str() {
        "down" => cfg.faults.push(Fault {
            at,
            link,
            kind: FaultKind::Down,
        }),
        "degraded" => cfg.faults.push(Fault {
            at,
            link,
            kind: FaultKind::Degrade { factor: 0.25 },
        }),
        _ => {}
    }
    cfg.time_limit = Duration::from_ms(50);
    let out = run(&topo, &cfg, &flows, None).expect("run");
    let s = &out.summary;
    println!(
        "{} {} {} {}: {} / {} flows",
        size,
        fault,
        ecmp,
        spray,
        s.flows_completed,
        flows.len()
    );
    println!("{}", sim::fabric::summary_json(s));
    let mut by_reason: BTreeMap<String, usize> = BTreeMap::new();
    for m in &out.ev_marks {
        *by_reason.entry(format!("{:?}", m.reason)).or_default() += 1;
    }
    println!("marks by reason: {by_reason:?}");
    let p = topo.nodes[link.node as usize].ports[link.port as usize];
    let ends = [(link.node, link.port), (p.peer, p.peer_port)];
    let mut first_mark: Vec<u64> = Vec::new();
    let (mut crossing, mut unmarked, mut off_path) = (0, 0, 0);
    for (i, f) in flows.iter().enumerate() {
        for (k, &ev) in out.flow_evs[i].iter().enumerate() {
            let marks = out
                .ev_marks
                .iter()
                .filter(|m| m.flow == i as u32 && m.ev_index == k as u16 && m.at_ps >= at.as_ps());
            let data = trace_path(&topo, cfg.ecmp, cfg.seed, f.src, f.dst, ev)
                .iter()
                .any(|h| ends.contains(h));
            let ack = trace_path(&topo, cfg.ecmp, cfg.seed, f.dst, f.src, ev)
                .iter()
                .any(|h| ends.contains(h));
            if data {
                crossing += 1;
                match marks.map(|m| m.at_ps).min() {
                    Some(t) => first_mark.push(t - at.as_ps()),
                    None => unmarked += 1,
                }
            } else if !ack {
                off_path += marks.count();
            }
        }
    }
    first_mark.sort_unstable();
    let us = |ps: u64| ps as f64 / 1e6;
    if !first_mark.is_empty() {
        let q = |f: f64| us(first_mark[((first_mark.len() - 1) as f64 * f) as usize]);
        println!(
            "EVs whose data crosses the link: {crossing}, marked {} (unmarked {unmarked}); first mark after the fault p50/p90/max {:.1}/{:.1}/{:.1} us",
            first_mark.len(),
            q(0.5),
            q(0.9),
            q(1.0)
        );
    } else {
        println!("EVs whose data crosses the link: {crossing}, none marked");
    }
    println!("marks on EVs that do not cross the link either way: {off_path}");
    let mut slow: Vec<usize> = (0..out.flows.len())
        .filter(|&i| out.flows[i].fct_ps.is_some())
        .collect();
    slow.sort_by_key(|&i| std::cmp::Reverse(out.flows[i].fct_ps));
    for &i in slow.iter().take(3) {
        let f = &out.flows[i];
        let marks: Vec<(u16, f64)> = out
            .ev_marks
            .iter()
            .filter(|m| m.flow as usize == i)
            .map(|m| (m.ev_index, us(m.at_ps)))
            .collect();
        let sp = &flows[i];
        let (mut data, mut ack) = (0, 0);
        for &ev in &out.flow_evs[i] {
            data += trace_path(&topo, cfg.ecmp, cfg.seed, sp.src, sp.dst, ev)
                .iter()
                .any(|h| ends.contains(h)) as u32;
            ack += trace_path(&topo, cfg.ecmp, cfg.seed, sp.dst, sp.src, ev)
                .iter()
                .any(|h| ends.contains(h)) as u32;
        }
        println!(
            "slow flow {i} {}->{}: FCT {:.1} us, {} retransmissions ({} timeouts), EVs crossing the link: data {data}, ack {ack}; marks {:?}",
            f.src,
            f.dst,
            us(f.fct_ps.unwrap_or(0)),
            f.retransmissions,
            f.timeouts,
            marks
        );
    }
}
