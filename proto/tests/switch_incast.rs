//! A trimming switch port at the end of the A -> B link (an incast's last
//! hop, `LinkConfig::switch`): every message still arrives exactly once,
//! the port marks and trims, and each dialect answers a trim as it says.

use proto::loopback::{Report, Scenario, SwitchQueue};
use proto::model::Transport;

/// A port at a quarter of the line rate (a 4-to-1 incast as the last hop
/// sees it), marking above 16 KiB and trimming beyond 48 KiB queued.
fn port(last_hop: bool) -> SwitchQueue {
    SwitchQueue {
        rate_gbps: 25.0,
        ecn_threshold_bytes: 16 * 1024,
        capacity_bytes: 48 * 1024,
        last_hop,
    }
}

fn run(transport: Transport, last_hop: bool) -> Report {
    let mut sc = Scenario::new(transport, 8, Scenario::messages(60, 16_384, 3));
    sc.link_ab.line_rate_gbps = Some(100.0);
    sc.link_ba.line_rate_gbps = Some(100.0);
    sc.link_ab.switch = Some(port(last_hop));
    // A driver's limit on what is posted: 8 x 16 KiB queue 10.5 us at the
    // sender's own line, below the 32.8 us RTO (the runner serialises a
    // whole window at once, and the RTO runs from there).
    sc.max_outstanding = Some(8);
    sc.seed = 11;
    sc.run()
}

#[test]
fn an_incast_port_marks_and_trims_and_every_message_arrives_once() {
    for transport in [Transport::Mrc, Transport::MrcLegacy] {
        let r = run(transport, true);
        assert!(r.ok, "{transport:?}: {r:#?}");
        assert!(r.delivered_exactly_once && r.data_identical, "{transport:?}");
        assert!(r.link_ab.trimmed > 0, "{transport:?}: no trim: {:?}", r.link_ab);
        assert!(r.link_ab.ecn_marked > 0, "{transport:?}: no mark: {:?}", r.link_ab);
        assert_eq!(r.link_ab.switch_dropped, 0, "{transport:?}");
        // Each trimmed packet is NACKed and resent (nothing waits for an RTO).
        assert!(
            r.counters_a.retx_trim >= r.link_ab.trimmed,
            "{transport:?}: {:?}",
            r.counters_a
        );
        assert!(r.counters_b.rx_ecn_ce > 0, "{transport:?}");
    }
}

#[test]
fn mrc10_says_whether_the_trim_was_at_the_last_hop() {
    let last_hop = run(Transport::Mrc, true);
    let path = run(Transport::Mrc, false);
    assert!(last_hop.ok && path.ok);
    assert!(last_hop.link_ab.trimmed > 0 && path.link_ab.trimmed > 0);
    // TRIMMED_LASTHOP: every path shares the congested port, the sender
    // resends without blaming the EV; TRIMMED (a port on one path): it
    // SKIPs the EV (`EvSet::skip_once`, tested with the EV set).
    assert_eq!(last_hop.counters_a.rx_nacks_last_hop, last_hop.counters_a.retx_trim);
    assert!(path.counters_a.retx_trim > 0);
    assert_eq!(path.counters_a.rx_nacks_last_hop, 0);
}

/// The switch's two frame operations, as the co-simulated fabric applies
/// them to the NICs' frames: on real frames of both dialects, over IPv4
/// and IPv6, the result parses whole (ICRC included) as the same packet
/// marked, or trimmed.
#[test]
fn marking_and_trimming_a_frame_keep_it_valid() {
    use proto::wire::mrc10::{Profile, TrafficClass};
    use proto::wire::{mark_ce_in_frame, trim_frame_of_either, Encap, Packet};
    let profile = Profile::DEFAULT;
    for transport in [Transport::Mrc, Transport::MrcLegacy] {
        let mut sc = Scenario::new(transport, 2, Scenario::messages(2, 5000, 1));
        sc.capture = true;
        let r = sc.run();
        let data = r.captured.iter().find(|c| c.pkt.trimmable()).expect("a data packet");
        for encap in [Encap::test_v4(), Encap::test_v6()] {
            let mut frame = Vec::new();
            data.pkt.emit_frame(&encap, &profile, &mut frame);
            let mut marked = frame.clone();
            mark_ce_in_frame(&mut marked).unwrap();
            let (p, _) = Packet::parse_frame(&marked, &profile).expect("marked frame parses");
            assert!(p.ecn_ce() && !data.pkt.ecn_ce(), "{transport:?}");
            assert_eq!(p.payload(), data.pkt.payload());
            for last_hop in [false, true] {
                let trimmed = trim_frame_of_either(&frame, last_hop, &profile).unwrap();
                let (p, _) = Packet::parse_frame(&trimmed, &profile).expect("trimmed frame parses");
                assert!(p.trimmed() && p.payload().is_empty(), "{transport:?}");
                assert_eq!(p.psn(), data.pkt.psn());
                if let Some(m) = p.as_mrc10() {
                    let class = if last_hop {
                        TrafficClass::TrimmedLastHop
                    } else {
                        TrafficClass::Trimmed
                    };
                    assert_eq!(m.class, class);
                }
            }
        }
    }
}
