//! Known answers: one flow alone; two flows sharing a bottleneck.

use proto::model::Transport;
use proto::time::{Duration, Instant};
use sim::fabric::testnets::{dumbbell, star, LinkSpec};
use sim::fabric::{run, FlowSpec, SimConfig};

#[test]
fn single_flow_fct_matches_formula() {
    for transport in [Transport::Mrc, Transport::Rc] {
        let topo = star(2, LinkSpec::default());
        let mut cfg = SimConfig::new(transport);
        cfg.fixed_window = Some(4 << 20);
        cfg.mpr_units = 16;
        let size = 1_000_000u64;
        let flows = vec![FlowSpec::new(0, 0, 1, size, Instant::ZERO)];
        let out = run(&topo, &cfg, &flows, None).unwrap();
        let fct = out.flows[0].fct_ps.expect("completes") as f64;
        assert_eq!(out.flows[0].retransmissions, 0);
        // Formula (100 Gb/s = 80 ps per byte everywhere):
        //   FCT = W_data x 80                      every data frame serialised back to back at the source
        //       + (L(0->1, w_last) - w_last x 80)  the last frame's remaining one-way latency
        //       + L(1->0, w_ack)                   the final ACK's one-way latency
        // with W_data the data wire bytes (payload + headers of every
        // frame, read from the source's port counters), w_last the last
        // frame's wire size, w_ack the ACK's, and L = Topology::base_latency
        // (propagation + switch latency + store-and-forward per hop).
        let src_port = out.ports[topo_port(&topo, 0)];
        let dst_port = out.ports[topo_port(&topo, 1)];
        let n = src_port.tx_packets;
        let hdr = (src_port.tx_bytes - size) / n;
        let mtu = cfg.mtu as u64;
        let last = size - (size.div_ceil(mtu) - 1) * mtu;
        let w_last = (last + hdr) as u32;
        let w_ack = (dst_port.tx_bytes / dst_port.tx_packets) as u32;
        let want = src_port.tx_bytes as f64 * 80.0
            + (topo.base_latency(0, 1, w_last).as_ps() as f64 - w_last as f64 * 80.0)
            + topo.base_latency(1, 0, w_ack).as_ps() as f64;
        let err = (fct - want).abs() / want;
        eprintln!("{transport:?}: fct {fct} want {want} err {err} hdr {hdr} ack {w_ack}");
        assert!(err < 0.01, "{transport:?}: fct {fct} ps, formula {want} ps");
    }
}

/// Global index of host `h`'s port 0 (hosts come first, one port each).
fn topo_port(_t: &sim::fabric::topo::Topology, h: usize) -> usize {
    h
}

#[test]
fn two_flows_share_bottleneck() {
    let (topo, _) = dumbbell(2, 100.0, LinkSpec::default());
    let mut cfg = SimConfig::mrc();
    cfg.n_evs = 8;
    let size = 2_000_000;
    let flows = vec![
        FlowSpec::new(0, 0, 2, size, Instant::ZERO),
        FlowSpec::new(1, 1, 3, size, Instant::ZERO),
    ];
    let out = run(&topo, &cfg, &flows, None).unwrap();
    // Half of the bottleneck's payload rate: 100 Gb/s x payload / wire.
    // (host 0 sends only flow 0's data: its port counts payload + headers).
    let half = 50.0 * size as f64 / out.ports[0].tx_bytes as f64;
    for f in &out.flows {
        let g = f.goodput_gbps.unwrap();
        eprintln!(
            "flow {} goodput {g:.2} Gb/s (half link {half:.2}) fct {:?}",
            f.id, f.fct_ps
        );
        assert!((g - half).abs() / half < 0.05, "goodput {g} vs {half}");
    }
    let _ = Duration::ZERO;
}
