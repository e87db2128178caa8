//! htsim `.topo` parsing: accepted variations and typed errors with lines.

use proptest::prelude::*;
use sim::fabric::topo::{NodeKind, TopoError, Topology};

const FT128: &str =
    "# comment line\nNodes 128\nTiers 3\nPodsize 16\n\nTier 0\nOversubscribed 1\nDownlink_speed_Gbps 100\n\
Radix_Down 4\nRadix_Up 4\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n\nTier 1\nOversubscribed 1\n\
Downlink_speed_Gbps 100\nRadix_Down 4\nRadix_Up 4\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\nBundle 1\n\n\
Tier 2\nDownlink_speed_Gbps 100\nRadix_Down 8\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\nBundle 1";

fn parse(text: &str) -> Result<Topology, TopoError> {
    Topology::from_htsim_str(text, "t.topo", 1)
}

/// The error line, after checking the error is a Parse error of "t.topo".
fn err_line(text: &str) -> (usize, String) {
    match parse(text) {
        Err(TopoError::Parse { file, line, msg }) => {
            assert_eq!(file, "t.topo");
            (line, msg)
        }
        other => panic!("expected a parse error, got {:?}", other.map(|t| t.description)),
    }
}

/// `FT128` with line `n` (1-based) replaced.
fn with_line(n: usize, new: &str) -> String {
    FT128
        .lines()
        .enumerate()
        .map(|(i, l)| if i + 1 == n { new } else { l })
        .collect::<Vec<_>>()
        .join("\n")
}

fn tiers(t: &Topology) -> [usize; 3] {
    let mut c = [0; 3];
    for n in &t.nodes {
        if let NodeKind::Switch { tier, .. } = n.kind {
            c[tier as usize] += 1;
        }
    }
    c
}

#[test]
fn base_text_parses() {
    assert_eq!(tiers(&parse(FT128).unwrap()), [32, 32, 16]);
}

#[test]
fn order_whitespace_comments_and_case() {
    let text =
        "Tiers\t3 # three\n  nodes 128\nPodsize    16\nTier 2\nBundle 1\nRadix_Down 8\nDownlink_Latency_ns 1000\n\
Downlink_speed_Gbps 100\nTier 0\nRadix_Up 4\nRadix_Down 4\nDownlink_speed_Gbps 100\nDownlink_Latency_ns 1000\n\
Tier 1\nRadix_Down 4\nOversubscribed 1\nDownlink_speed_Gbps 100\nDownlink_Latency_ns 1000\n\r\n";
    let t = parse(text).unwrap();
    assert_eq!(tiers(&t), [32, 32, 16]);
}

#[test]
fn bundles_are_parallel_ports() {
    // Tier 1 bundle 2: each ToR has 2 links to each of 2 aggs per pod.
    let text = with_line(17, "Radix_Down 8").replace(
        "Radix_Up 4\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\nBundle 1",
        "Radix_Up 8\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\nBundle 2",
    );
    let text = text.replace(
        "Oversubscribed 1\nDownlink_speed_Gbps 100\nRadix_Down 8",
        "Downlink_speed_Gbps 100\nRadix_Down 8",
    );
    let t = parse(&text).unwrap();
    assert_eq!(tiers(&t), [32, 16, 16]);
    let tor0 = t.nodes[0].ports[0].peer as usize;
    let ups: Vec<u32> = t.nodes[tor0].ports[4..].iter().map(|p| p.peer).collect();
    assert_eq!(ups.len(), 4);
    assert_eq!(ups[0], ups[1]);
    assert_eq!(ups[2], ups[3]);
    assert_ne!(ups[0], ups[2]);
    assert_eq!(t.next_hops(tor0 as u32, 127).len(), 4);
}

#[test]
fn malformed_lines_name_their_line() {
    assert_eq!(err_line(&with_line(2, "Nodes abc")).0, 2);
    assert_eq!(err_line(&with_line(2, "Nodes")).0, 2);
    assert_eq!(err_line(&with_line(2, "Nodes 128 129")).0, 2);
    assert_eq!(err_line(&with_line(2, "Nodes -4")).0, 2);
    assert_eq!(err_line(&with_line(2, "Nodes 128.5")).0, 2);
    assert_eq!(err_line(&with_line(4, "Podsize 1e400")).0, 4);
    assert_eq!(err_line(&with_line(9, "Radix_Down 4.5")).0, 9);
    assert_eq!(err_line(&with_line(6, "Tier x")).0, 6);
    assert_eq!(err_line(&with_line(6, "Tier 7")).0, 6);
    let (l, m) = err_line(&with_line(11, "Downlink_Latency 1000"));
    assert_eq!(l, 11);
    assert!(m.contains("unknown key"), "{m}");
    assert_eq!(err_line(&with_line(1, "Colour blue")).0, 1);
    let (l, m) = err_line(&with_line(12, "Radix_Up 4"));
    assert_eq!(l, 12);
    assert!(m.contains("repeated"), "{m}");
    assert_eq!(err_line(&with_line(14, "Tier 0")).0, 14);
}

#[test]
fn inconsistent_numbers_name_their_line() {
    // Hosts not a multiple of the ToR radix.
    assert_eq!(err_line(&with_line(2, "Nodes 130")).0, 2);
    // Podsize not dividing the hosts.
    assert_eq!(err_line(&with_line(4, "Podsize 24")).0, 4);
    // Oversubscribed disagreeing with the radices.
    assert_eq!(err_line(&with_line(7, "Oversubscribed 2")).0, 7);
    // Aggregation radix down not matching 4 ToRs per pod: Oversubscribed 1
    // (line 15) contradicts 8/4 first; without it, Radix_Down is blamed.
    assert_eq!(err_line(&with_line(17, "Radix_Down 8")).0, 15);
    let (l, m) = err_line(&with_line(15, "").replace(
        "Radix_Down 4\nRadix_Up 4\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\nBundle",
        "Radix_Down 8\nRadix_Up 4\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\nBundle",
    ));
    assert_eq!(l, 17, "{m}");
    assert!(m.contains("4 ToRs per pod"), "{m}");
    // Core radix down not matching 8 pods.
    assert_eq!(err_line(&with_line(25, "Radix_Down 16")).0, 25);
    // Unsupported tier counts.
    assert_eq!(err_line(&with_line(3, "Tiers 4")).0, 3);
    // Missing block / field.
    let no_core = FT128.split("Tier 2").next().unwrap();
    assert!(err_line(no_core).1.contains("Tier 2"));
    let (l, m) = err_line(&with_line(8, ""));
    assert_eq!(l, 6);
    assert!(m.contains("Downlink_speed_Gbps"), "{m}");
    // Radix_Up on the top tier.
    assert_eq!(err_line(&with_line(28, "Radix_Up 2")).0, 28);
}

#[test]
fn missing_file_is_io_error() {
    let r = Topology::from_htsim_file(std::path::Path::new("/nonexistent/x.topo"), 1);
    assert!(matches!(r, Err(TopoError::Io { .. })));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    /// Arbitrary edits never panic: the result is a topology or an error.
    #[test]
    fn never_panics(line in 1usize..29, key in "[A-Za-z_]{0,20}", val in "[-0-9.a-z]{0,6}") {
        let _ = parse(&with_line(line, &format!("{key} {val}")));
        let _ = parse(&with_line(line, &key));
    }

    /// Arbitrary (large) values of the real keys never panic either.
    #[test]
    fn huge_values_never_panic(line in prop::sample::select(vec![2usize, 4, 9, 10, 17, 18, 21, 25, 28]), val in 0u64..5_000_000_000) {
        let old = FT128.lines().nth(line - 1).unwrap();
        let key = old.split_whitespace().next().unwrap();
        let _ = parse(&with_line(line, &format!("{key} {val}")));
    }
}
