//! Review of the partitioned simulator: scenarios the first tests of
//! `fabric_partition.rs` did not cover, each held to the run in one part.

mod parts;

use parts::{per_flow, same_in, tree};
use proto::time::{Duration, Instant};
use sim::fabric::net::PfcConfig;
use sim::fabric::results::flows_csv;
use sim::fabric::run::{run, run_threads};
use sim::fabric::topo::{TopoParams, Topology};
use sim::fabric::traffic::{all_to_all, incast, permutation, FlowSpec};
use sim::fabric::{EcmpMode, EcnConfig, Fault, FaultKind, LinkRef, SimConfig};

#[test]
fn staggered_odd_sized_imm_flows_with_probabilistic_ecn() {
    let topo = tree(3, 32, 1, 1);
    let mut flows = permutation(topo.n_hosts, 100_000, 11);
    for (i, f) in flows.iter_mut().enumerate() {
        f.start = Instant::ZERO + Duration::from_ns(137 * i as u64);
        f.size = 50_000 + 777 * i as u64;
        f.imm = i % 2 == 0;
    }
    flows.extend(incast(topo.n_hosts, 10, 7, 30_001).into_iter().map(|mut f| {
        f.start = Instant::ZERO + Duration::from_us(3);
        f
    }));
    for (i, f) in flows.iter_mut().enumerate() {
        f.id = i as u64;
    }
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 8;
    cfg.switch.ecn = Some(EcnConfig {
        kmin_bytes: 4_000,
        kmax_bytes: 200_000,
        pmax: 0.3,
    });
    cfg.time_limit = Duration::from_ms(20);
    let out = same_in(&topo, &cfg, &flows, &[2, 3, 5]);
    assert!(out.summary.ecn_marks > 0);
}

#[test]
fn roce_pfc_is_the_same_in_parts() {
    let topo = tree(3, 32, 1, 1);
    let flows = incast(topo.n_hosts, 20, 3, 64 * 1024);
    let mut cfg = SimConfig::rc();
    cfg.switch.pfc = Some(PfcConfig::default());
    cfg.switch.trimming = false;
    cfg.time_limit = Duration::from_ms(20);
    let out = same_in(&topo, &cfg, &flows, &[2, 3, 4]);
    assert!(out.summary.pfc_pauses > 0, "no PFC pause");
}

#[test]
fn mrc_pfc_is_the_same_in_parts() {
    let topo = tree(2, 16, 1, 2);
    let mut flows = all_to_all(topo.n_hosts, 8 * 1024);
    for (i, f) in flows.iter_mut().enumerate() {
        f.id = i as u64;
    }
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 4;
    cfg.switch.pfc = Some(PfcConfig {
        xoff_bytes: 20_000,
        xon_bytes: 10_000,
    });
    cfg.time_limit = Duration::from_ms(20);
    same_in(&topo, &cfg, &flows, &[2, 3, 4]);
}

#[test]
fn every_fault_kind_with_reroute_is_the_same_in_parts() {
    let topo = tree(3, 32, 1, 1);
    let flows = permutation(topo.n_hosts, 128 * 1024, 5);
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 16;
    cfg.time_limit = Duration::from_ms(10);
    cfg.reroute_after = Some(Duration::from_us(15));
    let core = topo.nodes.len() as u32 - 1;
    let leaf = topo.nodes[20].ports[0].peer;
    let up = topo.nodes[leaf as usize].ports.len() as u16 - 1;
    let t = |us: u64| Instant::ZERO + Duration::from_us(us);
    cfg.faults = vec![
        Fault {
            at: t(2),
            link: LinkRef { node: core, port: 1 },
            kind: FaultKind::Blackhole,
        },
        Fault {
            at: t(3),
            link: LinkRef {
                node: core - 1,
                port: 0,
            },
            kind: FaultKind::Loss { rate: 0.05 },
        },
        Fault {
            at: t(4),
            link: LinkRef {
                node: core - 2,
                port: 2,
            },
            kind: FaultKind::Down,
        },
        Fault {
            at: t(6),
            link: LinkRef { node: leaf, port: up },
            kind: FaultKind::Degrade { factor: 0.5 },
        },
        Fault {
            at: t(40),
            link: LinkRef { node: core, port: 1 },
            kind: FaultKind::Restore,
        },
        Fault {
            at: t(60),
            link: LinkRef {
                node: core - 2,
                port: 2,
            },
            kind: FaultKind::Up,
        },
        Fault {
            at: t(1),
            link: LinkRef { node: 5, port: 0 },
            kind: FaultKind::Flap {
                period: Duration::from_us(25),
                down_for: Duration::from_us(5),
                until: t(120),
            },
        },
    ];
    same_in(&topo, &cfg, &flows, &[2, 3, 4]);
}

#[test]
fn backup_and_reverse_evs_over_ev_path_planes() {
    let topo = tree(3, 32, 2, 1);
    let flows = permutation(topo.n_hosts, 96 * 1024, 9);
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 8;
    cfg.backup_evs = 4;
    cfg.reverse_evs_per_plane = 2;
    cfg.ecmp = EcmpMode::EvPath;
    cfg.loss = 0.003;
    cfg.time_limit = Duration::from_ms(20);
    let leaf = topo.nodes[12].ports[1].peer;
    let up = topo.nodes[leaf as usize].ports.len() as u16 - 1;
    cfg.faults = vec![Fault {
        at: Instant::ZERO + Duration::from_us(4),
        link: LinkRef { node: leaf, port: up },
        kind: FaultKind::Down,
    }];
    same_in(&topo, &cfg, &flows, &[2, 3, 4]);
}

#[test]
fn a_time_limit_mid_flight_is_the_same_in_parts() {
    let topo = tree(3, 32, 1, 1);
    let flows = permutation(topo.n_hosts, 1 << 20, 3);
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 8;
    cfg.time_limit = Duration::from_ns(23_456);
    let out = same_in(&topo, &cfg, &flows, &[2, 3, 4]);
    assert!(out.summary.flows_completed < flows.len());
}

#[test]
fn more_parts_than_pods_and_parts_without_hosts() {
    let topo = tree(2, 16, 1, 1);
    let flows = permutation(topo.n_hosts, 40_000, 2);
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 4;
    cfg.time_limit = Duration::from_ms(20);
    same_in(&topo, &cfg, &flows, &[5, 16, 24]);
}

#[test]
fn an_oversubscribed_leaf_spine_with_switch_latency() {
    let topo = Topology::build(&TopoParams {
        tiers: 2,
        hosts: 32,
        oversubscription: 4,
        switch_latency: Duration::from_ns(300),
        link_latency: Duration::from_ns(500),
        ..TopoParams::default()
    })
    .expect("topology");
    let flows = permutation(topo.n_hosts, 64 * 1024, 4);
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 8;
    cfg.time_limit = Duration::from_ms(20);
    same_in(&topo, &cfg, &flows, &[2, 3, 4]);
}

#[test]
fn an_htsim_topology_file() {
    let path = sim::anchors::htsim_dir_or_panic().join("fat_tree_128_1os.topo");
    let topo = Topology::from_htsim_file(&path, 1).expect("topo file");
    let flows: Vec<FlowSpec> = permutation(topo.n_hosts, 32 * 1024, 1).into_iter().take(40).collect();
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 8;
    cfg.time_limit = Duration::from_ms(20);
    same_in(&topo, &cfg, &flows, &[2, 3]);
}

#[test]
fn spurious_retransmissions_in_flight_at_the_end() {
    // An RTO far below the RTT: copies of data already delivered are
    // still in flight when the last flow finishes.
    let topo = tree(3, 32, 1, 1);
    for seed in 1..4 {
        let flows = permutation(topo.n_hosts, 20_000, seed);
        for transport in [SimConfig::mrc(), SimConfig::rc()] {
            let mut cfg = transport;
            cfg.n_evs = 8;
            cfg.ack_timeout_exp = 1;
            cfg.time_limit = Duration::from_ms(5);
            let out = same_in(&topo, &cfg, &flows, &[2, 4]);
            assert!(out.summary.timeouts > 0);
        }
    }
}

#[test]
fn a_part_that_panics_does_not_leave_the_others_waiting() {
    // A requester setting the QP refuses (an RTS attribute: only the
    // requester's part checks it) for one flow inside part 1 of 2: part 1
    // panics at the flow's start, part 0 (the calling thread) waits on it.
    let topo = tree(3, 32, 1, 1);
    let flows = vec![FlowSpec::new(0, 20, 21, 8192, Instant::ZERO)];
    let mut cfg = SimConfig::mrc();
    cfg.retry_linear = 200;
    assert!(
        std::panic::catch_unwind(|| run(&topo, &cfg, &flows, None)).is_err(),
        "one part panics"
    );
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(|| run_threads(&topo, &cfg, &flows, 2, None).map(|_| ()));
        let msg = r.as_ref().err().and_then(|p| {
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        });
        let _ = tx.send((r.is_err(), msg));
    });
    let (panicked, msg) = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("a part panicked and the others wait for it forever");
    assert!(panicked, "the part's panic reaches the caller");
    let msg = msg.unwrap_or_default();
    assert!(
        msg.contains("QP setup refused"),
        "the first panic, not a consequence: {msg}"
    );
}

#[test]
fn ev_marks_in_memory_are_in_the_same_order() {
    let topo = tree(3, 32, 1, 1);
    let flows = permutation(topo.n_hosts, 20_000, 1);
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 8;
    cfg.ack_timeout_exp = 1;
    cfg.time_limit = Duration::from_ms(5);
    let one = run(&topo, &cfg, &flows, None).expect("one");
    let two = run_threads(&topo, &cfg, &flows, 2, None).expect("two");
    assert!(!one.ev_marks.is_empty());
    assert_eq!(format!("{:?}", one.ev_marks), format!("{:?}", two.ev_marks));
}

#[test]
fn requesters_giving_up_while_their_data_still_arrives() {
    // Retries run out long before the RTT: requesters go to ERR while
    // their WRITE-with-immediate still reaches the responder.
    let topo = tree(3, 32, 1, 1);
    for seed in 1..6 {
        let mut flows = permutation(topo.n_hosts, 30_000 + seed * 1000, seed);
        for f in flows.iter_mut() {
            f.imm = true;
        }
        for (k, mut cfg) in [SimConfig::rc(), SimConfig::mrc(), SimConfig::rc(), SimConfig::mrc()]
            .into_iter()
            .enumerate()
        {
            cfg.n_evs = 4;
            cfg.ack_timeout_exp = 2 + k as u8 / 2;
            cfg.retry_linear = 2 + seed as u8 % 3;
            cfg.retry_exp = 0;
            cfg.time_limit = Duration::from_ms(5);
            let one = run(&topo, &cfg, &flows, None).expect("one");
            if one.flows.iter().all(|r| !r.error) {
                continue;
            }
            eprintln!("seed {seed}: {} errors", one.flows.iter().filter(|r| r.error).count());
            let want = per_flow(&one);
            for n in [2, 3, 4] {
                let got = run_threads(&topo, &cfg, &flows, n, None).expect("parts");
                let have = per_flow(&got);
                if have != want {
                    let line = want.lines().zip(have.lines()).position(|(a, b)| a != b).unwrap_or(0);
                    panic!(
                        "seed {seed}, {n} parts:\n one: {}\n {n}: {}",
                        want.lines().nth(line).unwrap_or(""),
                        have.lines().nth(line).unwrap_or("")
                    );
                }
            }
        }
    }
}

#[test]
fn queue_series_is_the_same_in_parts() {
    let topo = tree(3, 32, 1, 1);
    let flows = incast(topo.n_hosts, 20, 3, 64 * 1024);
    for limit_ns in [30_000u64, 20_000_000] {
        let mut cfg = SimConfig::mrc();
        cfg.n_evs = 8;
        cfg.queue_series = true;
        cfg.series_bin = Duration::from_us(1);
        cfg.time_limit = Duration::from_ns(limit_ns);
        let one = run(&topo, &cfg, &flows, None).expect("one");
        assert!(!one.queue_series.is_empty());
        for n in [2, 3] {
            let got = run_threads(&topo, &cfg, &flows, n, None).expect("parts");
            assert_eq!(
                format!("{:?}", one.queue_series),
                format!("{:?}", got.queue_series),
                "limit {limit_ns} ns, {n} parts"
            );
        }
    }
}

#[test]
fn legacy_mrc_is_the_same_in_parts() {
    let topo = tree(3, 32, 1, 1);
    let mut flows = permutation(topo.n_hosts, 64 * 1024, 8);
    flows.extend(incast(topo.n_hosts, 12, 9, 48 * 1024));
    for (i, f) in flows.iter_mut().enumerate() {
        f.id = i as u64;
    }
    let mut cfg = SimConfig::new(proto::model::Transport::MrcLegacy);
    cfg.n_evs = 8;
    cfg.loss = 0.002;
    cfg.time_limit = Duration::from_ms(20);
    same_in(&topo, &cfg, &flows, &[2, 3]);
}

#[test]
fn flow_records_in_memory_are_equal_to_the_last_bit() {
    let topo = tree(3, 32, 1, 1);
    let mut flows = permutation(topo.n_hosts, 10_000, 5);
    for (i, f) in flows.iter_mut().enumerate() {
        f.size = 7_001 + 1_013 * i as u64;
        f.start = Instant::ZERO + Duration::from_ns(71 * i as u64);
    }
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 4;
    cfg.time_limit = Duration::from_ms(20);
    let one = run(&topo, &cfg, &flows, None).expect("one");
    let two = run_threads(&topo, &cfg, &flows, 2, None).expect("two");
    for (a, b) in one.flows.iter().zip(&two.flows) {
        assert_eq!(
            a,
            b,
            "{:?} vs {:?}",
            a.goodput_gbps.map(f64::to_bits),
            b.goodput_gbps.map(f64::to_bits)
        );
    }
    assert_eq!(one.summary.mean_goodput_pct, two.summary.mean_goodput_pct);
    assert_eq!(one.summary.fct_p99_us, two.summary.fct_p99_us);
}

#[test]
fn idle_gaps_between_flows_and_faults_after_the_last_flow() {
    let topo = tree(3, 32, 2, 1);
    let mut flows = permutation(topo.n_hosts, 16 * 1024, 6);
    for (i, f) in flows.iter_mut().enumerate() {
        f.start = Instant::ZERO + Duration::from_us([0, 300, 1_000, 2_500][i % 4] + i as u64);
    }
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 8;
    cfg.time_limit = Duration::from_ms(50);
    cfg.reroute_after = Some(Duration::from_us(7));
    cfg.faults = vec![
        Fault {
            at: Instant::ZERO + Duration::from_us(290),
            link: LinkRef { node: 7, port: 1 },
            kind: FaultKind::Flap {
                period: Duration::from_us(400),
                down_for: Duration::from_us(150),
                until: Instant::ZERO + Duration::from_ms(40),
            },
        },
        Fault {
            at: Instant::ZERO + Duration::from_ms(30),
            link: LinkRef { node: 2, port: 0 },
            kind: FaultKind::Down,
        },
    ];
    same_in(&topo, &cfg, &flows, &[2, 3, 4]);
}

#[test]
fn no_time_limit_at_all() {
    // The largest time limit (as good as none): the window end past it
    // overflowed (a panic here, an endless loop of empty windows in a
    // release build).
    let topo = tree(3, 16, 1, 1);
    let flows = permutation(topo.n_hosts, 8192, 1);
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 4;
    cfg.time_limit = Duration::from_ps(u64::MAX);
    cfg.series_bin = Duration::from_ps(u64::MAX / 1_000_000);
    let one = run(&topo, &cfg, &flows, None).expect("one part");
    assert_eq!(one.summary.flows_completed, flows.len());
    let two = run_threads(&topo, &cfg, &flows, 2, None).expect("two parts");
    assert_eq!(flows_csv(&one.flows), flows_csv(&two.flows));
    // A flow that waits on one that never finishes (its destination's
    // link is down for good): nothing is left to happen, the run ends.
    let mut flows = permutation(topo.n_hosts, 8192, 1);
    flows[1].after = Some(0);
    flows[1].start = Instant::ZERO;
    cfg.retry_exp = 0;
    cfg.retry_linear = 1;
    cfg.ack_timeout_exp = 1;
    cfg.faults = vec![Fault {
        at: Instant::ZERO,
        link: LinkRef {
            node: flows[0].dst,
            port: 0,
        },
        kind: FaultKind::Down,
    }];
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(run(&topo, &cfg, &flows, None).map(|o| o.summary.flows_completed));
    });
    let done = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the run ends");
    assert!(done.expect("runs") < 16);
}
