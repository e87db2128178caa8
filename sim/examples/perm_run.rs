//! A permutation (or any `.cm`) run configured as `mrc sim` configures it,
//! without building the `mrc` binary (which pulls in the hardware crates).
//!
//!     cargo run --release -p sim --example perm_run -- [options]
//!
//! options (each `--name value`): `--hosts N` (generated 3-tier fat tree,
//! as `mrc sim --tiers 3 --hosts N`; default 1024) or `--topo FILE`
//! (htsim `.topo`); `--tm FILE` (htsim `.cm`; default: a permutation of
//! `--size` bytes, as `mrc sim --traffic perm`); `--size BYTES` (default
//! 2000000); `--traffic perm|a2a` (generated traffic when no `--tm`:
//! a permutation, as `mrc sim --traffic perm`, or an all-to-all, as
//! `mrc sim --traffic all-to-all`; default perm); `--evs N` (default 128); `--ecmp ev-path|hash` (default
//! ev-path, as `mrc sim`); `--seed S` (default 1); `--weighted-spray`
//! (flag, as `mrc sim --weighted-spray`); `--parts N` (the run cut into N
//! parts, threads of this process, as `mrc sim --parts N`; default 1);
//! `--csv FILE` (per-flow records);
//! `--series FILE` (goodput delivered to hosts per time bin, CSV);
//! experiments beyond `mrc sim`: `--ack-every N` (default 4),
//! `--fixed-window BYTES` (instead of NSCC), `--header-buffer BYTES`
//! (switch ports' trimmed-header queue), `--ecn-last-hop on|off` (default
//! per transport, as `mrc sim`), `--receiver-penalty` (flag, as `mrc
//! sim`).
//!
//! Prints ASSUMED_BAD marks by reason (stderr), the summary JSON, then FCT
//! p50 / p99 / max, mean goodput, events, wall time and peak RSS.

use std::path::PathBuf;

use proto::time::Duration;
use sim::fabric::run::{peak_rss_bytes, run, run_threads};
use sim::fabric::topo::{TopoParams, Topology};
use sim::fabric::traffic::{all_to_all, permutation, read_cm};
use sim::fabric::{EcmpMode, SimConfig};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let topo = match opt("--topo") {
        Some(f) => Topology::from_htsim_file(&PathBuf::from(f), 1).expect("topology file"),
        None => Topology::build(&TopoParams {
            hosts: opt("--hosts").map_or(1024, |s| s.parse().expect("--hosts")),
            ..TopoParams::default()
        })
        .expect("topology"),
    };
    let size: u64 = opt("--size").map_or(2_000_000, |s| s.parse().expect("--size"));
    let seed: u64 = opt("--seed").map_or(1, |s| s.parse().expect("--seed"));
    let flows = match opt("--tm") {
        Some(f) => read_cm(&PathBuf::from(f)).expect("connection matrix").flows,
        None => match opt("--traffic").as_deref() {
            None | Some("perm") => permutation(topo.n_hosts, size, seed),
            Some("a2a") => all_to_all(topo.n_hosts, size),
            Some(o) => panic!("--traffic {o}: perm or a2a"),
        },
    };
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = opt("--evs").map_or(128, |s| s.parse().expect("--evs"));
    cfg.min_active_evs = cfg.min_active_evs.min(cfg.n_evs as u16);
    cfg.seed = seed;
    cfg.time_limit = Duration::from_ms(1000);
    cfg.ecmp = match opt("--ecmp").as_deref() {
        None | Some("ev-path") => EcmpMode::EvPath,
        Some("hash") => EcmpMode::Hash,
        Some(o) => panic!("--ecmp {o}: ev-path or hash"),
    };
    if let Some(n) = opt("--ack-every") {
        cfg.ack_every = n.parse().expect("--ack-every");
    }
    if let Some(w) = opt("--fixed-window") {
        cfg.fixed_window = Some(w.parse().expect("--fixed-window"));
    }
    if let Some(e) = opt("--ecn") {
        let (a, b) = e.split_once(',').expect("--ecn KMIN,KMAX");
        let c = cfg.switch.ecn.as_mut().expect("ECN on");
        c.kmin_bytes = a.parse().expect("kmin");
        c.kmax_bytes = b.parse().expect("kmax");
    }
    if let Some(b) = opt("--header-buffer") {
        cfg.switch.header_buffer_bytes = b.parse().expect("--header-buffer");
    }
    if args.iter().any(|a| a == "--receiver-penalty") {
        cfg.receiver_penalty = true;
    }
    match opt("--ecn-last-hop").as_deref() {
        None => {}
        Some("on") => cfg.switch.ecn_last_hop = true,
        Some("off") => cfg.switch.ecn_last_hop = false,
        Some(o) => panic!("--ecn-last-hop {o}: on or off"),
    }
    if args.iter().any(|a| a == "--weighted-spray") {
        cfg.spray = proto::model::ev::SprayPolicy::Weighted;
    }
    eprintln!(
        "{} | {} flows | {} EVs | {:?} | {:?}",
        topo.description,
        flows.len(),
        cfg.n_evs,
        cfg.ecmp,
        cfg.spray
    );
    let t0 = std::time::Instant::now();
    let parts: u32 = opt("--parts").map_or(1, |s| s.parse().expect("--parts"));
    let out = if parts > 1 {
        run_threads(&topo, &cfg, &flows, parts, None).expect("run")
    } else {
        run(&topo, &cfg, &flows, None).expect("run")
    };
    let wall_s = t0.elapsed().as_secs_f64();
    if let Some(f) = opt("--csv") {
        sim::fabric::results::write_flows_csv(&PathBuf::from(f), &out.flows).expect("write CSV");
    }
    if let Some(f) = opt("--series") {
        let mut text = String::from("t_us,gbps\n");
        for i in 0..out.series.bytes.len() {
            let t_us = (i as u64 * out.series.bin_ps) as f64 / 1e6;
            text += &format!("{t_us},{:.2}\n", out.series.gbps(i));
        }
        std::fs::write(f, text).expect("write series");
    }
    let s = &out.summary;
    if !out.ev_marks.is_empty() {
        let mut by: std::collections::BTreeMap<String, (u64, u64, u64)> = Default::default();
        for m in &out.ev_marks {
            let e = by.entry(format!("{:?}", m.reason)).or_insert((0, u64::MAX, 0));
            e.0 += 1;
            e.1 = e.1.min(m.at_ps);
            e.2 = e.2.max(m.at_ps);
        }
        for (r, (n, lo, hi)) in by {
            eprintln!(
                "EVs marked bad ({r}): {n}, from {:.1} to {:.1} us",
                lo as f64 / 1e6,
                hi as f64 / 1e6
            );
        }
    }
    println!("{}", serde_json::to_string(s).unwrap());
    println!(
        "FCT p50/p99/max {:.0} / {:.0} / {:.0} us | goodput {:.0}% | events {} | wall {:.2} s | peak RSS {:.0} MB",
        s.fct_p50_us.unwrap_or(f64::NAN),
        s.fct_p99_us.unwrap_or(f64::NAN),
        s.fct_max_us.unwrap_or(f64::NAN),
        s.mean_goodput_pct.unwrap_or(f64::NAN),
        s.events,
        wall_s,
        peak_rss_bytes().map_or(0.0, |b| b as f64 / (1024.0 * 1024.0))
    );
    for p in out.parts.iter().filter(|_| parts > 1) {
        println!(
            "part {}: {} nodes, {} events, busy {:.2} s, waiting {:.2} s, {} windows, {:.1} MB sent",
            p.rank,
            p.nodes,
            p.events,
            p.busy_s,
            p.wait_s,
            p.windows,
            p.mail_bytes as f64 / 1e6
        );
    }
}
