//! A run cut into parts gives, flow by flow, the output of the run in one
//! part (issue 19): the same per-flow CSV byte for byte, the same EV
//! marks, EV values and delivered goodput series. The parts here are
//! threads (`run_threads`); `mrc/tests/sim_mpi.rs` runs the same protocol
//! over MPI ranks.

mod parts;

use parts::{same_in, tree};
use proto::time::{Duration, Instant};
use sim::fabric::results::RunOutput;
use sim::fabric::run::run_threads;
use sim::fabric::topo::Topology;
use sim::fabric::traffic::{incast, permutation, FlowSpec};
use sim::fabric::{EcmpMode, Fault, FaultKind, LinkRef, SimConfig, SimError};

fn fat_tree(hosts: u32, planes: u8) -> Topology {
    tree(3, hosts, planes, 1)
}

/// [`same_in`] 2 and 4 threads, with something completed to compare.
fn same_in_parts(topo: &Topology, cfg: &SimConfig, flows: &[FlowSpec]) -> RunOutput {
    let one = same_in(topo, cfg, flows, &[2, 4]);
    assert!(
        one.summary.flows_completed > 0,
        "nothing completed: the comparison would be empty"
    );
    one
}

#[test]
fn permutation_with_loss_is_the_same_in_any_number_of_parts() {
    let topo = fat_tree(32, 1);
    let flows = permutation(topo.n_hosts, 256 * 1024, 7);
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 16;
    cfg.loss = 0.002;
    cfg.flow_series = 4;
    cfg.time_limit = Duration::from_ms(20);
    let out = same_in_parts(&topo, &cfg, &flows);
    assert!(
        out.summary.drop_loss > 0,
        "no loss drawn: the test would not cover the ports' draws"
    );
}

#[test]
fn an_incast_that_trims_is_the_same_in_any_number_of_parts() {
    let topo = fat_tree(32, 1);
    // Senders in every pod (and part), one receiver: trims at the last hop
    // and in the core, marks, timeouts.
    let flows = incast(topo.n_hosts, 24, 5, 64 * 1024);
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 8;
    cfg.ecmp = EcmpMode::Hash;
    cfg.time_limit = Duration::from_ms(20);
    let out = same_in_parts(&topo, &cfg, &flows);
    assert!(
        out.summary.trims > 0,
        "no trims: the test would not cover trimmed packets between parts"
    );
}

#[test]
fn rc_is_the_same_in_any_number_of_parts() {
    let topo = fat_tree(32, 1);
    let flows = incast(topo.n_hosts, 12, 30, 32 * 1024);
    let mut cfg = SimConfig::rc();
    cfg.time_limit = Duration::from_ms(20);
    same_in_parts(&topo, &cfg, &flows);
}

#[test]
fn faults_and_port_status_are_the_same_in_any_number_of_parts() {
    let topo = fat_tree(32, 2);
    let flows = permutation(topo.n_hosts, 128 * 1024, 3);
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 16;
    cfg.time_limit = Duration::from_ms(20);
    cfg.reroute_after = Some(Duration::from_us(20));
    // A host's port in plane 1 goes down (Port Status Updates to its
    // senders), a core link degrades, a leaf uplink flaps.
    let host_port = LinkRef { node: 3, port: 1 };
    let core = topo.nodes.len() as u32 - 1;
    let leaf = topo.nodes[9].ports[0].peer;
    let up = topo.nodes[leaf as usize].ports.len() as u16 - 1;
    cfg.faults = vec![
        Fault {
            at: Instant::ZERO + Duration::from_us(5),
            link: host_port,
            kind: FaultKind::Down,
        },
        Fault {
            at: Instant::ZERO + Duration::from_us(8),
            link: LinkRef { node: core, port: 0 },
            kind: FaultKind::Degrade { factor: 0.25 },
        },
        Fault {
            at: Instant::ZERO + Duration::from_us(10),
            link: LinkRef { node: leaf, port: up },
            kind: FaultKind::Flap {
                period: Duration::from_us(30),
                down_for: Duration::from_us(10),
                until: Instant::ZERO + Duration::from_us(200),
            },
        },
    ];
    let out = same_in_parts(&topo, &cfg, &flows);
    assert!(out.summary.port_status_updates > 0, "no Port Status Update sent");
}

#[test]
fn dependencies_across_parts_are_refused_with_a_reason() {
    let topo = fat_tree(32, 1);
    let mut flows = permutation(topo.n_hosts, 4096, 1);
    flows[1].after = Some(0);
    let err = run_threads(&topo, &SimConfig::mrc(), &flows, 2, None).expect_err("refused");
    assert!(
        matches!(err, SimError::Partition(ref m) if m.contains("flow 1")),
        "{err}"
    );
    // One part runs it.
    run_threads(&topo, &SimConfig::mrc(), &flows, 1, None).expect("one part");
}
