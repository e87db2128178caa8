//! Bad input gives a typed error, exactly one drop counter, and no other
//! state change: snapshot the QP's observable state before and after each.

mod mrc_common;

use mrc_common::*;
use proto::model::mrc::MrcQp;
use proto::model::*;
use proto::time::Instant;
use proto::wire::mrc10::{Headers, Mrc10Packet, NackReason, NethRepr, Opcode, SethRepr};
use proto::wire::{AethRepr, Packet, RocePacket, Syndrome};
use proto::Psn;

#[derive(Debug, PartialEq)]
struct Snapshot {
    counters: Counters,
    expected: Option<Psn>,
    window: Option<(Psn, Psn)>,
    in_flight: u64,
    retx: usize,
    held: usize,
    posted: usize,
    state: QpState,
    memory: Vec<u8>,
}

fn snapshot(q: &MrcQp) -> Snapshot {
    let mut c = *q.counters();
    c.drop_wrong_qp = 0;
    c.drop_bad_state = 0;
    c.drop_unexpected_opcode = 0;
    c.drop_missing_header = 0;
    c.drop_out_of_window = 0;
    c.drop_remote_access = 0;
    c.drop_ack_for_unsent = 0;
    c.drop_malformed = 0;
    c.drop_wire = 0;
    Snapshot {
        counters: c,
        expected: q.expected_psn(),
        window: q.send_window(),
        in_flight: q.in_flight(),
        retx: q.retransmit_queue_len(),
        held: q.held_recv_completions(),
        posted: q.posted_recvs(),
        state: q.state(),
        memory: q.memory().read(RKEY, VA, 64 * 1024).unwrap().to_vec(),
    }
}

fn seth_mut(p: &mut Mrc10Packet) -> &mut SethRepr {
    match &mut p.headers {
        Headers::Sack { seth, .. } => seth,
        h => panic!("not a SACK: {h:?}"),
    }
}

/// A control packet from B to A's QP.
fn control(template: &Mrc10Packet, opcode: Opcode, headers: Headers) -> Mrc10Packet {
    let mut p = template.clone();
    p.bth.opcode = opcode;
    p.headers = headers;
    p
}

#[test]
fn bad_input_typed_error_counter_no_state_change() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    // Some state on both sides: A has packets outstanding; B has a received
    // PSN beyond the in-order point.
    a.post_write(now, write(1, data(3 * MTU as usize, 1), 0, None)).unwrap();
    a.post_write(now, write(2, data(100, 2), 8192, Some(9))).unwrap();
    let pkts: Vec<Mrc10Packet> = std::iter::from_fn(|| a.poll_transmit(now).map(mrc10)).collect();
    assert_eq!(pkts.len(), 4);
    b.handle_packet(now, pkts[1].clone().into()).unwrap();
    let sack = b.poll_transmit(now).map(mrc10).unwrap();
    let (first, middle, last, only_imm) = (&pkts[0], &pkts[1], &pkts[2], &pkts[3]);

    type Case = (&'static str, Packet, fn(&RxError) -> bool);
    let mut to_b: Vec<Case> = Vec::new();
    let mut p = first.clone();
    p.bth.dest_qp = 0x55;
    to_b.push(("wrong QP", p.into(), |e| matches!(e, RxError::WrongQp { .. })));
    let mut p = first.clone();
    p.headers = sack.headers;
    to_b.push(("data opcode with SACK headers", p.into(), |e| {
        matches!(e, RxError::MissingHeader(_))
    }));
    let mut p = only_imm.clone();
    write_headers(&mut p).imm = None;
    to_b.push(("ONLY_IMM without ImmDt", p.into(), |e| {
        matches!(e, RxError::MissingHeader("ImmDt"))
    }));
    let mut p = first.clone();
    p.payload = bytes::Bytes::from(vec![0u8; MTU as usize + 1]);
    to_b.push(("payload above MTU", p.into(), |e| matches!(e, RxError::Malformed(_))));
    let mut p = only_imm.clone();
    write_headers(&mut p).reth.dma_len = 99;
    to_b.push(("ONLY length mismatch", p.into(), |e| matches!(e, RxError::Malformed(_))));
    let mut p = first.clone();
    p.bth.psn = Psn::new(o.psn + 4 * 128);
    to_b.push(("beyond the window", p.into(), |e| {
        matches!(e, RxError::OutOfWindow { .. })
    }));
    let mut p = first.clone();
    write_headers(&mut p).reth.rkey = 0x1234;
    to_b.push(("unknown rkey", p.into(), |e| matches!(e, RxError::RemoteAccess { .. })));
    let mut p = last.clone();
    write_headers(&mut p).reth.va = VA + REGION - 10;
    to_b.push(("out of bounds", p.into(), |e| matches!(e, RxError::RemoteAccess { .. })));
    let mut p = control(&sack, Opcode::EndpointRequest, sack.headers);
    p.bth.dest_qp = QPN_B;
    to_b.push(("endpoint opcode to a QP", p.into(), |e| {
        matches!(e, RxError::UnexpectedMrc10Opcode(_))
    }));
    let roce = RocePacket::write(proto::wire::Opcode::WriteOnly, QPN_B, Psn::new(o.psn), vec![0u8; 8]);
    to_b.push(("RoCEv2 packet to an MRC 1.0 QP", roce.into(), |e| {
        matches!(e, RxError::WrongProtocol { .. })
    }));

    for (name, pkt, check) in to_b {
        let before = snapshot(&b);
        let drops = b.counters().drops();
        let e = b.handle_packet(now, pkt).expect_err(name);
        assert!(check(&e), "{name}: {e:?}");
        assert_eq!(b.counters().drops(), drops + 1, "{name}: one drop counted");
        assert_eq!(snapshot(&b), before, "{name}: no state change");
        // Only NACKs (or the ACK of a fatal NAK) may result, never data or
        // SACKs.
        while let Some(r) = b.poll_transmit(now).map(mrc10) {
            assert!(matches!(r.bth.opcode, Opcode::Nack | Opcode::Ack), "{name}: {r:?}");
        }
    }

    let mut to_a: Vec<Case> = Vec::new();
    let mut p = sack.clone();
    seth_mut(&mut p).cum_ack_psn = Psn::new(o.psn + 10);
    to_a.push(("cum beyond next PSN", p.into(), |e| {
        matches!(e, RxError::AckForUnsent(_))
    }));
    let mut p = sack.clone();
    seth_mut(&mut p).bitmap |= 1 << 63;
    to_a.push(("bitmap beyond next PSN", p.into(), |e| {
        matches!(e, RxError::AckForUnsent(_))
    }));
    let mut p = sack.clone();
    seth_mut(&mut p).probe_response = true;
    seth_mut(&mut p).ack_psn_offset = 999;
    to_a.push(("probe answer for an EV not in the set", p.into(), |e| {
        matches!(e, RxError::Malformed(_))
    }));
    let nack = NethRepr {
        reason: NackReason::Trimmed,
        vendor_info: 0,
        ev: 0,
        sender_context: 0,
        receiver_context: 0,
        nack_psn: Psn::new(o.psn + 50),
        cc_type: 0,
        cc_flags: 0,
        timestamp: 0,
    };
    let p = control(&sack, Opcode::Nack, Headers::Nack(nack));
    to_a.push(("NACK for unsent PSN", p.into(), |e| {
        matches!(e, RxError::AckForUnsent(_))
    }));
    let p = control(&sack, Opcode::Sack, Headers::Nack(nack));
    to_a.push(("SACK opcode with a NETH", p.into(), |e| {
        matches!(e, RxError::Malformed(_))
    }));
    let aeth = AethRepr {
        syndrome: Syndrome::Nak {
            code: Syndrome::NAK_PSN_SEQ_ERROR,
        },
        msn: 0,
    };
    let p = control(&sack, Opcode::Ack, Headers::Ack(aeth));
    to_a.push(("ACK with a sequence-error NAK", p.into(), |e| {
        matches!(e, RxError::Malformed(_))
    }));
    let mut p = control(middle, Opcode::WriteMiddle, sack.headers);
    p.bth.dest_qp = QPN_A;
    to_a.push(("data without METH and RETH", p.into(), |e| {
        matches!(e, RxError::MissingHeader(_))
    }));

    for (name, pkt, check) in to_a {
        let before = snapshot(&a);
        let drops = a.counters().drops();
        let e = a.handle_packet(now, pkt).expect_err(name);
        assert!(check(&e), "{name}: {e:?}");
        assert_eq!(a.counters().drops(), drops + 1, "{name}: one drop counted");
        assert_eq!(snapshot(&a), before, "{name}: no state change");
        assert!(a.poll_event().is_none(), "{name}: no event");
    }
    // The genuine SACK still works afterwards.
    a.handle_packet(now, sack.into()).unwrap();
    assert_eq!(a.counters().rx_acks, 1);
}

#[test]
fn garbage_never_panics() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    a.post_write(now, write(1, data(5 * MTU as usize, 1), 0, Some(3)))
        .unwrap();
    let pkts: Vec<Mrc10Packet> = std::iter::from_fn(|| a.poll_transmit(now).map(mrc10)).collect();
    b.handle_packet(now, pkts[2].clone().into()).unwrap();
    let sack = b.poll_transmit(now).map(mrc10).unwrap();
    let qps = std::cell::RefCell::new((a, b));
    let mut runner = TestRunner::new(Config {
        cases: 256,
        ..Config::default()
    });
    let seeds = (0usize..6, any::<u32>(), any::<u64>(), any::<u16>(), any::<bool>());
    runner
        .run(&seeds, |(i, x, y, z, to_a)| {
            let mut p = if i < 5 { pkts[i].clone() } else { sack.clone() };
            p.bth.psn = Psn::new(p.bth.psn.value() ^ (x & 0xFFFF));
            p.ev ^= x;
            match &mut p.headers {
                Headers::Write(w) => {
                    w.meth.msn ^= z;
                    w.reth.dma_len ^= x;
                    w.reth.va ^= y;
                    if let Some(t) = &mut w.tseth {
                        t.tx_ts ^= z;
                    }
                }
                Headers::Sack { seth, cc_state } => {
                    seth.bitmap ^= y;
                    seth.sack_offset ^= z as i16;
                    seth.ack_psn_offset ^= (x >> 16) as i16;
                    seth.cum_ack_psn = Psn::new(seth.cum_ack_psn.value() ^ (x >> 8));
                    seth.probe_response ^= x & 1 == 1;
                    seth.mpr ^= z as u8;
                    cc_state.echo_ts ^= z;
                }
                _ => {}
            }
            let mut g = qps.borrow_mut();
            let (a, b) = &mut *g;
            let q = if to_a { a } else { b };
            p.bth.dest_qp = q.config().qpn;
            let _ = q.handle_packet(now, p.into());
            while q.poll_transmit(now).map(mrc10).is_some() {}
            Ok(())
        })
        .unwrap();
}
