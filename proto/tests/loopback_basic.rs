//! The loopback harness end to end: loss-free and lossy MRC transfers.

use proto::loopback::{Dir, EvMatch, Flap, Scenario, PACED_BACKLOG_BYTES};
use proto::model::{QpState, Transport};
use proto::time::{Duration, Instant};

#[test]
fn loss_free_transfer_completes() {
    let sc = Scenario::new(Transport::Mrc, 8, Scenario::messages(50, 20_000, 5));
    let r = sc.run();
    assert!(r.ok, "{r:#?}");
    assert_eq!(r.counters_a.retransmitted_packets, 0);
    assert_eq!(r.counters_b.rx_duplicates, 0);
    assert!(r.counters_b.rx_out_of_order > 0, "EV spread should reorder");
    assert_eq!(r.final_state_a, QpState::Rts);
}

#[test]
fn psn_wrap_transfer() {
    let sc = Scenario::new(Transport::Mrc, 4, Scenario::messages(20, 9000, 2)).with_start_psn(0xFF_FFF0);
    let r = sc.run();
    assert!(r.ok, "{r:#?}");
}

#[test]
fn lossy_transfer_with_blackhole() {
    let mut sc = Scenario::new(Transport::Mrc, 8, Scenario::messages(40, 16_384, 3));
    sc.link_ab.loss = 0.05;
    sc.link_ba.loss = 0.05;
    sc.link_ab.jitter = Duration::from_ns(300);
    sc.link_ab.duplicate = 0.02;
    sc.link_ab.corrupt = 0.02;
    sc.link_ab.blackholes.push((EvMatch::Index(2), Instant::from_us(5)));
    sc.seed = 7;
    let r = sc.run();
    assert!(r.ok, "{r:#?}");
    assert!(r.counters_a.retransmitted_packets > 0);
}

#[test]
fn a_flapping_ev_drops_only_while_down_and_every_message_completes() {
    let flap = Flap {
        ev: EvMatch::Index(1),
        from: Instant::from_us(3),
        period: Duration::from_us(20),
        down: Duration::from_us(10),
    };
    assert!(!flap.is_down(Instant::from_us(2)));
    assert!(flap.is_down(Instant::from_us(3)));
    assert!(!flap.is_down(Instant::from_us(13)));
    assert!(flap.is_down(Instant::from_us(23)));
    let mut sc = Scenario::new(Transport::Mrc, 4, Scenario::messages(60, 16_384, 3));
    sc.link_ab.flaps.push(flap);
    let r = sc.run();
    assert!(r.ok, "{r:#?}");
    assert!(r.link_ab.blackholed > 0, "the EV was down for half of each period");
    assert!(r.counters_a.retransmitted_packets > 0);
}

#[test]
fn capture_records_packets() {
    let mut sc = Scenario::new(Transport::Mrc, 2, Scenario::messages(2, 5000, 1));
    sc.capture = true;
    let r = sc.run();
    assert!(r.ok);
    assert_eq!(r.captured.len() as u64, r.packets);
    // Stamped when each goes on the wire: one direction's packets queue
    // behind each other on the link, so no two share a time (they did
    // when stamped at posting: a message's packets all at once).
    for dir in [Dir::AtoB, Dir::BtoA] {
        let times: Vec<_> = r.captured.iter().filter(|c| c.dir == dir).map(|c| c.at).collect();
        assert!(times.windows(2).all(|w| w[0] < w[1]), "{dir:?}: {times:?}");
    }
    let json = serde_json::to_string(&r).unwrap();
    assert!(json.contains("goodput_gbps"));
}

/// A paced run hands its link a packet only once no more than a jumbo
/// frame waits for the wire (a NIC at its line rate), and keeps the wire
/// busy while it has packets to send; unpaced, a window handed at once
/// queues for as long as the link takes to carry it.
#[test]
fn paced_endpoints_hand_packets_over_at_the_line_rate() {
    // No acknowledgement comes back for the first 40 us (20 us each
    // way): only the link's draining can wake a held endpoint then.
    let quiet = Duration::from_us(40).as_ps();
    let run = |paced: bool| {
        let mut sc = Scenario::new(Transport::Mrc, 4, Scenario::messages(8, 65_536, 3));
        sc.capture = true;
        sc.paced = paced;
        for l in [&mut sc.link_ab, &mut sc.link_ba] {
            l.line_rate_gbps = Some(100.0);
            l.base_delay = Duration::from_us(20);
        }
        let r = sc.run();
        assert!(r.ok, "paced {paced}: {r:#?}");
        let wait = r
            .captured
            .iter()
            .map(|c| c.at.as_ps() - c.handed.as_ps())
            .max()
            .unwrap();
        let early: Vec<u64> = r
            .captured
            .iter()
            .filter(|c| c.dir == Dir::AtoB && c.at.as_ps() < quiet)
            .map(|c| c.at.as_ps())
            .collect();
        (wait, early)
    };
    let (paced_wait, early) = run(true);
    assert!(paced_wait <= Duration::serialisation(PACED_BACKLOG_BYTES, 100.0).as_ps());
    // Back to back: a 4 KiB packet is about 0.33 us on the wire.
    assert!(early.len() > 100, "{} packets in the first 40 us", early.len());
    let gap = early.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    assert!(gap < Duration::from_us(1).as_ps(), "an idle wire of {gap} ps");
    // 8 x 64 KiB at 100 Gb/s is about 42 us on the wire.
    let (unpaced_wait, _) = run(false);
    assert!(unpaced_wait > Duration::from_us(10).as_ps());
}

#[test]
fn heavy_loss_no_retransmission_storm() {
    // 30% loss each way with jitter: retransmissions stay near the loss
    // rate (ambiguous acknowledgements of resent packets do not feed loss
    // inference, so no cascade of spurious retransmissions).
    let mut sc = Scenario::new(Transport::Mrc, 8, Scenario::messages(100, 20_000, 3));
    for l in [&mut sc.link_ab, &mut sc.link_ba] {
        l.loss = 0.3;
        l.jitter = Duration::from_ns(300);
    }
    sc.seed = 3;
    let r = sc.run();
    assert!(r.ok, "{r:#?}");
    let tx = r.counters_a.tx_data_packets;
    assert!(
        r.counters_a.retransmitted_packets < tx,
        "{} retransmissions for {tx} packets",
        r.counters_a.retransmitted_packets
    );
}

#[test]
fn send_window_larger_than_receive_window_recovers() {
    // Misconfiguration: A may have 8 x 128 PSNs outstanding, B accepts 128.
    let mut sc = Scenario::new(Transport::Mrc, 4, Scenario::messages(10, 100 * 4096, 0));
    sc.a.rts.send_mpr_units = 8;
    sc.b.rtr.mpr_units = 1;
    sc.link_ab.loss = 0.02;
    let r = sc.run();
    assert!(r.ok, "{r:#?}");
    assert!(r.counters_b.drop_out_of_window > 0);
    assert!(r.counters_a.rx_nacks > 0);
}

#[test]
fn all_evs_but_one_blackholed() {
    let mut sc = Scenario::new(Transport::Mrc, 4, Scenario::messages(30, 30_000, 2));
    for i in 1..4 {
        sc.link_ab.blackholes.push((EvMatch::Index(i), Instant::from_us(2)));
    }
    let r = sc.run();
    assert!(r.ok, "{r:#?}");
    assert!(r.counters_a.retx_timeout > 0);
    assert_eq!(r.final_state_a, QpState::Rts);
}

#[test]
fn runs_are_deterministic() {
    let mut sc = Scenario::new(Transport::Mrc, 8, Scenario::messages(20, 12_345, 3));
    sc.link_ab.loss = 0.1;
    sc.link_ab.jitter = Duration::from_ns(200);
    sc.link_ba.duplicate = 0.1;
    sc.seed = 42;
    let a = serde_json::to_string(&sc.run()).unwrap();
    let b = serde_json::to_string(&sc.run()).unwrap();
    assert_eq!(a, b);
    sc.seed = 43;
    assert_ne!(a, serde_json::to_string(&sc.run()).unwrap());
}

/// Bit flips on the wire reach the receiver as bytes: its ICRC check drops
/// them and counts each one; the transport recovers the lost packets.
#[test]
fn corrupted_frames_are_dropped_by_the_receivers_icrc_and_recovered() {
    for transport in [Transport::Mrc, Transport::Rc] {
        let mut sc = Scenario::new(transport, 4, Scenario::messages(40, 20_000, 3));
        sc.link_ab.corrupt = 0.05;
        sc.link_ba.corrupt = 0.05;
        let r = sc.run();
        assert!(r.ok, "{transport:?}: {r:#?}");
        let flipped = r.link_ab.corrupted + r.link_ba.corrupted;
        let dropped = r.link_ab.corrupted_dropped + r.link_ba.corrupted_dropped;
        assert!(flipped > 10, "{transport:?}: only {flipped} corrupted");
        // Flips in the Ethernet header (not covered by the ICRC) or in the
        // ICRC-masked IP fields can leave a frame valid; everything else is
        // dropped, and every drop is counted by the QP as a wire error.
        assert!(
            dropped * 10 >= flipped * 8,
            "{transport:?}: {dropped} of {flipped} dropped"
        );
        let wire_drops = r.counters_a.drop_wire + r.counters_b.drop_wire;
        assert_eq!(wire_drops, dropped, "{transport:?}");
        assert!(r.counters_a.retransmitted_packets > 0);
    }
}
