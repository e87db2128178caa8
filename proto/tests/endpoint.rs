//! The MRC 1.0 endpoint on QPN 0x2: EV probes and Port Status Updates
//! between two endpoints, through the wire format.

use proto::model::api::RxError;
use proto::model::endpoint::*;
use proto::time::{Duration, Instant};
use proto::wire::mrc10::{self, choices, EndpointOp, EvFormat, Headers, Mrc10Packet, Opcode, Profile};
use proto::wire::Encap;

/// Emit `p` as an IPv6 frame (32-bit EVs: source port and flow label) and
/// parse it back: what the peer receives.
fn over_the_wire(p: Mrc10Packet) -> Mrc10Packet {
    let mut f = Vec::new();
    mrc10::emit_frame(&p, &Encap::test_v6(), &Profile::DEFAULT, &mut f);
    let (back, _) = mrc10::parse_frame(&f, &Profile::DEFAULT).expect("a valid MRC 1.0 frame");
    assert_eq!(back, p);
    back
}

fn endpoints() -> (Endpoint, Endpoint) {
    let a = Endpoint::new(EndpointConfig {
        ports_up: 0b0101,
        ..EndpointConfig::default()
    });
    let b = Endpoint::new(EndpointConfig {
        ports_up: 0b1110,
        ..EndpointConfig::default()
    });
    (a, b)
}

#[test]
fn ev_probe_measures_rtt_and_service_time() {
    let (mut a, mut b) = endpoints();
    let t0 = Instant::from_us(10);
    let id = a.probe_ev(t0, 0xBEEF_1234, 1, EvFormat::SourcePortFlowLabel32).unwrap();
    let req = over_the_wire(a.poll_transmit(t0).expect("the request"));
    assert_eq!(
        (req.bth.opcode, req.bth.dest_qp, req.ev),
        (Opcode::EndpointRequest, choices::ENDPOINT_QPN, 0xBEEF_1234)
    );
    assert!(a.poll_transmit(t0).is_none());
    b.handle_packet(t0 + Duration::from_us(1), &req).unwrap();
    let resp = over_the_wire(b.poll_transmit(t0 + Duration::from_ns(1500)).expect("the answer"));
    assert_eq!((resp.bth.opcode, resp.ev), (Opcode::EndpointResponse, 0xBEEF_1234));
    a.handle_packet(t0 + Duration::from_us(3), &resp).unwrap();
    assert_eq!(
        a.poll_result(),
        Some(EndpointResult::EvProbe {
            request_id: id,
            ev: 0xBEEF_1234,
            port: 1,
            rtt: Duration::from_us(3),
            service_time: Duration::from_ns(500),
        })
    );
    assert_eq!(a.counters().responses_matched, 1);
    assert_eq!(b.counters().requests_answered, 1);
    assert_eq!(a.poll_timeout(), None, "nothing awaits an answer");
}

#[test]
fn port_status_update_exchanges_port_masks() {
    let (mut a, mut b) = endpoints();
    let now = Instant::ZERO;
    let id = a.port_status_update(now, 7).unwrap();
    let req = over_the_wire(a.poll_transmit(now).unwrap());
    b.handle_packet(now, &req).unwrap();
    assert_eq!(b.peer_ports_up(), Some(0b0101));
    let resp = over_the_wire(b.poll_transmit(now).unwrap());
    a.handle_packet(now, &resp).unwrap();
    assert_eq!(
        a.poll_result(),
        Some(EndpointResult::PortStatus {
            request_id: id,
            peer_ports_up: 0b1110
        })
    );
    assert_eq!(a.peer_ports_up(), Some(0b1110));
}

#[test]
fn unanswered_requests_time_out_and_late_answers_are_counted() {
    let (mut a, mut b) = endpoints();
    let t0 = Instant::ZERO;
    let id = a.probe_ev(t0, 3, 0, EvFormat::SourcePort16).unwrap();
    let req = a.poll_transmit(t0).unwrap();
    let deadline = a.poll_timeout().expect("a request awaits its answer");
    assert_eq!(deadline, t0 + EndpointConfig::default().timeout);
    a.handle_timeout(deadline);
    assert_eq!(
        a.poll_result(),
        Some(EndpointResult::TimedOut {
            request_id: id,
            op: EndpointOp::EvProbe
        })
    );
    b.handle_packet(deadline, &req).unwrap();
    let late = b.poll_transmit(deadline).unwrap();
    a.handle_packet(deadline, &late).unwrap();
    assert_eq!(a.counters().responses_unmatched, 1);
    assert_eq!(a.poll_result(), None);
}

#[test]
fn pending_requests_are_bounded() {
    let mut a = Endpoint::new(EndpointConfig {
        max_pending: 2,
        ..EndpointConfig::default()
    });
    let now = Instant::ZERO;
    a.probe_ev(now, 1, 0, EvFormat::SourcePort16).unwrap();
    a.port_status_update(now, 1).unwrap();
    assert_eq!(
        a.probe_ev(now, 2, 0, EvFormat::SourcePort16),
        Err(EndpointError::TooManyPending(2))
    );
}

#[test]
fn hostile_packets_are_typed_errors_counted_once() {
    let (mut a, mut b) = endpoints();
    let now = Instant::ZERO;
    a.probe_ev(now, 9, 0, EvFormat::SourcePort16).unwrap();
    let req = a.poll_transmit(now).unwrap();
    // Another QP number.
    let mut wrong_qp = req.clone();
    wrong_qp.bth.dest_qp = 0x11;
    assert!(matches!(b.handle_packet(now, &wrong_qp), Err(RxError::WrongQp { .. })));
    // An EV probe without its EETH.
    let mut bare = req.clone();
    if let Headers::Endpoint { eeth, .. } = &mut bare.headers {
        *eeth = None;
    }
    assert_eq!(b.handle_packet(now, &bare), Err(RxError::MissingHeader("EETH")));
    assert_eq!(b.counters().rx_errors, 2);
    // Nothing was queued or learnt.
    assert!(b.poll_transmit(now).is_none());
    assert_eq!(b.peer_ports_up(), None);
}

#[test]
fn rtt_and_timeout_count_from_transmission() {
    let (mut a, mut b) = endpoints();
    let queued = Instant::ZERO;
    let id = a.probe_ev(queued, 5, 0, EvFormat::SourcePort16).unwrap();
    assert_eq!(a.poll_timeout(), None, "not sent yet: nothing to time out");
    let sent = queued + Duration::from_us(50);
    let req = a.poll_transmit(sent).unwrap();
    assert_eq!(a.poll_timeout(), Some(sent + EndpointConfig::default().timeout));
    b.handle_packet(sent, &req).unwrap();
    let resp = b.poll_transmit(sent).unwrap();
    a.handle_packet(sent + Duration::from_us(2), &resp).unwrap();
    match a.poll_result() {
        Some(EndpointResult::EvProbe { request_id, rtt, .. }) => {
            assert_eq!((request_id, rtt), (id, Duration::from_us(2)));
        }
        r => panic!("{r:?}"),
    }
}

#[test]
fn peer_requests_waiting_for_answers_are_bounded() {
    let mut a = Endpoint::new(EndpointConfig {
        max_pending: 8,
        ..EndpointConfig::default()
    });
    let mut b = Endpoint::new(EndpointConfig {
        answer_queue_len: 3,
        ..EndpointConfig::default()
    });
    let now = Instant::ZERO;
    for _ in 0..5 {
        a.probe_ev(now, 1, 0, EvFormat::SourcePort16).unwrap();
        let req = a.poll_transmit(now).unwrap();
        b.handle_packet(now, &req).unwrap();
    }
    assert_eq!(b.counters().answers_dropped, 2);
    assert_eq!(std::iter::from_fn(|| b.poll_transmit(now)).count(), 3);
}
