//! htsim `.cm` triggers: flows that start when other flows finish (how
//! htsim chains flows into collectives).

use sim::fabric::testnets::{star, LinkSpec};
use sim::fabric::traffic::{parse_cm, TriggerKind};
use sim::fabric::{run, SimConfig};

fn run_cm(text: &str) -> sim::fabric::RunOutput {
    let cm = parse_cm(text, "t.cm").unwrap();
    let topo = star(cm.nodes, LinkSpec::default());
    let mut cfg = SimConfig::mrc();
    cfg.triggers = cm.triggers.clone();
    run(&topo, &cfg, &cm.flows, None).unwrap()
}

fn start_us(out: &sim::fabric::RunOutput, i: usize) -> f64 {
    out.flows[i].start_ps.expect("started") as f64 / 1e6
}

fn end_us(out: &sim::fabric::RunOutput, i: usize) -> f64 {
    out.flows[i].end_ps.expect("finished") as f64 / 1e6
}

#[test]
fn triggers_parse_with_their_kinds() {
    let cm = parse_cm(
        "Nodes 4\nConnections 3\nTriggers 2\n\
         trigger id 7 barrier count 2\n\
         0->1 id 1 start 0 size 1000 send_done_trigger 7\n\
         2->1 id 2 start 0 size 1000 recv_done_trigger 7\n\
         1->3 id 3 size 1000 trigger 7\n\
         trigger id 9 oneshot\n",
        "t.cm",
    )
    .unwrap();
    assert_eq!(cm.triggers.len(), 2);
    assert_eq!(cm.triggers[0].kind, TriggerKind::Barrier { count: 2 });
    assert_eq!(cm.triggers[1].kind, TriggerKind::OneShot);
    assert_eq!(cm.flows[0].send_done_trigger, Some(0));
    assert_eq!(cm.flows[1].recv_done_trigger, Some(0));
    assert!(cm.flows[1].imm, "recv_done needs the receive completion");
    assert_eq!(cm.flows[2].trigger, Some(0));
}

#[test]
fn bad_triggers_name_file_and_line() {
    let bad = [
        (
            "Nodes 2\n0->1 size 10 trigger 3\n",
            "t.cm:2: trigger 3 is never declared",
        ),
        (
            "Nodes 2\ntrigger id 1 barrier\n",
            "t.cm:2: barrier trigger 1 needs count >= 1",
        ),
        (
            "Nodes 2\ntrigger id 1\n",
            "t.cm:2: trigger 1 without a kind (oneshot, multishot, barrier)",
        ),
        ("Nodes 2\ntrigger oneshot\n", "t.cm:2: trigger without an id"),
        (
            "Nodes 2\ntrigger id 1 oneshot count 2\n",
            "t.cm:2: count on a oneshot trigger (barriers only)",
        ),
        (
            "Nodes 2\ntrigger id 1 oneshot\ntrigger id 1 multishot\n",
            "t.cm:3: trigger 1 declared twice",
        ),
        (
            "Nodes 2\ntrigger id 1 oneshot\n0->1 start 5 size 10 trigger 1\n",
            "t.cm:3: both a start time and a trigger",
        ),
        (
            "Nodes 2\nTriggers 2\ntrigger id 1 oneshot\n0->1 size 10\n",
            "t.cm:0: Triggers says 2, file has 1",
        ),
        (
            "Nodes 2\ntrigger id 1 oneshot bogus\n",
            "t.cm:2: unknown trigger field \"bogus\"",
        ),
    ];
    for (text, want) in bad {
        assert_eq!(parse_cm(text, "t.cm").unwrap_err().to_string(), want, "{text}");
    }
}

#[test]
fn oneshot_chains_a_flow_after_another() {
    let out = run_cm(
        "Nodes 3\n\
         0->1 size 200000 send_done_trigger 1\n\
         1->2 size 200000 trigger 1\n\
         trigger id 1 oneshot\n",
    );
    assert_eq!(out.summary.flows_completed, 2);
    assert!(
        start_us(&out, 1) >= end_us(&out, 0),
        "{} < {}",
        start_us(&out, 1),
        end_us(&out, 0)
    );
}

#[test]
fn barrier_waits_for_every_activation() {
    // Two flows into host 2 (one activating on send done, one on receive
    // done); the third starts after both.
    let out = run_cm(
        "Nodes 4\n\
         0->2 size 100000 send_done_trigger 5\n\
         1->2 size 400000 recv_done_trigger 5\n\
         2->3 size 100000 trigger 5\n\
         trigger id 5 barrier count 2\n",
    );
    assert_eq!(out.summary.flows_completed, 3);
    let both = end_us(&out, 0).max(out.flows[1].recv_end_ps.unwrap() as f64 / 1e6);
    assert!(start_us(&out, 2) >= both, "{} < {both}", start_us(&out, 2));
    assert!(start_us(&out, 2) > end_us(&out, 0), "not on the first activation");
}

#[test]
fn multishot_starts_one_target_per_activation_in_file_order() {
    // Flow 0 activates the trigger once: only the first target starts; the
    // second never does (the run ends with it unfinished, and says so).
    let out = run_cm(
        "Nodes 4\n\
         0->1 size 50000 send_done_trigger 2\n\
         1->2 size 50000 trigger 2\n\
         2->3 size 50000 trigger 2\n\
         trigger id 2 multishot\n",
    );
    assert!(start_us(&out, 1) >= end_us(&out, 0));
    assert!(out.flows[2].start_ps.is_none());
    assert_eq!(out.summary.flows_completed, 2);
}
