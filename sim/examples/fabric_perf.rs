//! Release-mode performance and reproduction runs of the fabric engine.
//!
//!     cargo run --release -p sim --example fabric_perf -- [scenario] [evs] [queue]
//!
//! scenarios: perm1024 (default), perm128, incast128, perm1024-degraded,
//! perm1024-down; evs: EVs per flow (1 = single-path ECMP; RC when "rc");
//! queue: radix (default) | heap | wheel. Env knobs: EVPATH=1, WEIGHTED=1,
//! ACK_EVERY=n, ACK_EXP=t, MPR=n, INITBDP=x, MAXBDP=x, FIXED_WINDOW=bytes.
//! Prints the summary, events/s, wall time and peak RSS.

use proto::time::{Duration, Instant};
use sim::fabric::event::{HeapQueue, RadixQueue, WheelQueue};
use sim::fabric::run::bench_with;
use sim::fabric::testnets::{fat_tree, FatTreeShape, LinkSpec};
use sim::fabric::traffic::{incast, permutation, read_cm};
use sim::fabric::{Fault, FaultKind, LinkRef, SimConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let scenario = args.get(1).map_or("perm1024", |s| s.as_str());
    let evs = args.get(2).map_or("128", |s| s.as_str());
    let queue = args.get(3).map_or("radix", |s| s.as_str());
    let shape = if scenario.contains("1024") {
        FatTreeShape::hosts_1024()
    } else {
        FatTreeShape::k_ary(8)
    };
    let (topo, ids) = fat_tree(shape, LinkSpec::default());
    let mut cfg = if evs == "rc" { SimConfig::rc() } else { SimConfig::mrc() };
    cfg.n_evs = evs.parse().unwrap_or(1);
    let anchors = sim::anchors::htsim_dir().unwrap_or_default();
    let flows = match scenario {
        "perm128" => read_cm(&anchors.join("perm_128n_128c_2MB.cm"))
            .map(|c| c.flows)
            .unwrap_or_else(|_| permutation(128, 2_000_000, 1)),
        "single128" => vec![sim::fabric::FlowSpec::new(0, 0, 127, 2_000_000, Instant::ZERO)],
        "incast128" => read_cm(&anchors.join("incast_128.cm"))
            .map(|c| c.flows)
            .unwrap_or_else(|_| incast(128, 127, 0, 2_000_000)),
        _ => read_cm(&anchors.join("perm_1024n_1024c_0u_2000000b.cm"))
            .map(|c| c.flows)
            .unwrap_or_else(|_| permutation(1024, 2_000_000, 1)),
    };
    let core_link = |k: u16| LinkRef {
        node: ids.aggs[0][0],
        port: shape.tors_per_pod as u16 + k,
    };
    if scenario.ends_with("degraded") {
        cfg.faults.push(Fault {
            at: Instant::ZERO,
            link: core_link(0),
            kind: FaultKind::Degrade { factor: 0.25 },
        });
    }
    if scenario.ends_with("down") {
        cfg.faults.push(Fault {
            at: Instant::from_us(50),
            link: core_link(0),
            kind: FaultKind::Down,
        });
    }
    cfg.time_limit = Duration::from_ms(200);
    if let Ok(w) = std::env::var("FIXED_WINDOW") {
        cfg.fixed_window = w.parse().ok();
    }
    if let Ok(w) = std::env::var("ACK_EXP") {
        cfg.ack_timeout_exp = w.parse().unwrap();
    }
    if let Ok(w) = std::env::var("MPR") {
        cfg.mpr_units = w.parse().unwrap();
    }
    if let Ok(w) = std::env::var("INITBDP") {
        cfg.nscc_init_cwnd_bdp = w.parse().unwrap();
    }
    if let Ok(w) = std::env::var("MAXBDP") {
        cfg.nscc_max_cwnd_bdp = w.parse().unwrap();
    }
    if std::env::var("EVPATH").is_ok() {
        cfg.ecmp = sim::fabric::EcmpMode::EvPath;
    }
    if std::env::var("WEIGHTED").is_ok() {
        cfg.spray = proto::model::ev::SprayPolicy::Weighted;
    }
    if let Ok(w) = std::env::var("ACK_EVERY") {
        cfg.ack_every = w.parse().unwrap();
    }
    eprintln!(
        "{} | {} flows | {:?} x {} EVs | queue {queue}",
        topo.description,
        flows.len(),
        cfg.transport,
        cfg.n_evs
    );
    let r = match queue {
        "radix" => bench_with::<RadixQueue>(&topo, &cfg, &flows),
        "wheel" => bench_with::<WheelQueue>(&topo, &cfg, &flows),
        _ => bench_with::<HeapQueue>(&topo, &cfg, &flows),
    }
    .expect("run");
    println!("{}", serde_json::to_string_pretty(&r.summary).unwrap());
    println!(
        "events {} wall {:.3} s events/s {:.2} M peak RSS {:.1} MB",
        r.events,
        r.wall_s,
        r.events_per_s / 1e6,
        sim::fabric::run::peak_rss_bytes().map_or(0.0, |b| b as f64 / (1024.0 * 1024.0))
    );
}
