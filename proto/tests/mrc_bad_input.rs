//! Bad input gives a typed error, exactly one drop counter, and no other
//! state change: snapshot the QP's observable state before and after each.

mod mrc_common;

use mrc_common::*;
use proto::model::mrc::MrcQp;
use proto::model::*;
use proto::time::Instant;
use proto::wire::*;
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

fn data_ext(p: &mut RocePacket) -> &mut DataExtRepr {
    match &mut p.ext {
        Some(MrcExtRepr::Data(d)) => d,
        _ => panic!("data packet"),
    }
}

fn sack_ext(p: &mut RocePacket) -> &mut SackExtRepr {
    match &mut p.ext {
        Some(MrcExtRepr::Sack(s)) => s,
        _ => panic!("SACK"),
    }
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
    let pkts: Vec<RocePacket> = std::iter::from_fn(|| a.poll_transmit(now)).collect();
    assert_eq!(pkts.len(), 4);
    b.handle_packet(now, pkts[1].clone()).unwrap();
    let sack = b.poll_transmit(now).unwrap();
    let (first, middle, last, only_imm) = (&pkts[0], &pkts[1], &pkts[2], &pkts[3]);

    type Case = (&'static str, RocePacket, fn(&RxError) -> bool);
    let mut to_b: Vec<Case> = Vec::new();
    let mut p = first.clone();
    p.bth.dest_qp = 0x55;
    to_b.push(("wrong QP", p, |e| matches!(e, RxError::WrongQp { .. })));
    let mut p = first.clone();
    p.bth.mrc_ext = false;
    to_b.push(("no X bit", p, |e| matches!(e, RxError::MissingHeader(_))));
    let mut p = first.clone();
    p.ext = None;
    to_b.push(("no data ext", p, |e| matches!(e, RxError::MissingHeader(_))));
    let mut p = first.clone();
    p.ext = sack.ext;
    to_b.push(("SACK ext on data", p, |e| matches!(e, RxError::Malformed(_))));
    let mut p = first.clone();
    p.reth = None;
    to_b.push(("FIRST without RETH", p, |e| matches!(e, RxError::MissingHeader("RETH"))));
    let mut p = last.clone();
    data_ext(&mut p).placement = None;
    to_b.push(("LAST without placement", p, |e| {
        matches!(e, RxError::MissingHeader("placement"))
    }));
    let mut p = only_imm.clone();
    p.imm = None;
    to_b.push(("ONLY_IMM without ImmDt", p, |e| {
        matches!(e, RxError::MissingHeader("ImmDt"))
    }));
    let mut p = first.clone();
    p.payload = bytes::Bytes::from(vec![0u8; MTU as usize + 1]);
    to_b.push(("payload above MTU", p, |e| matches!(e, RxError::Malformed(_))));
    let mut p = only_imm.clone();
    p.reth.as_mut().unwrap().dma_len = 99;
    to_b.push(("ONLY length mismatch", p, |e| matches!(e, RxError::Malformed(_))));
    let mut p = first.clone();
    p.bth.psn = Psn::new(o.psn + 4 * 128);
    to_b.push(("beyond the window", p, |e| matches!(e, RxError::OutOfWindow { .. })));
    let mut p = first.clone();
    p.reth.as_mut().unwrap().rkey = 0x1234;
    to_b.push(("unknown rkey", p, |e| matches!(e, RxError::RemoteAccess { .. })));
    let mut p = last.clone();
    data_ext(&mut p).placement = Some(PlacementRepr {
        va: VA + REGION - 10,
        rkey: RKEY,
    });
    to_b.push(("out of bounds", p, |e| matches!(e, RxError::RemoteAccess { .. })));
    let mut p = sack.clone();
    p.bth.dest_qp = QPN_B;
    p.aeth = None;
    to_b.push(("ACK without AETH", p, |e| matches!(e, RxError::MissingHeader("AETH"))));
    let mut p = sack.clone();
    p.bth.dest_qp = QPN_B;
    p.ext = None;
    to_b.push(("ACK without ext", p, |e| matches!(e, RxError::MissingHeader(_))));
    let mut p = sack.clone();
    p.bth.dest_qp = QPN_B;
    p.ext = first.ext;
    to_b.push(("ACK with data ext", p, |e| matches!(e, RxError::Malformed(_))));

    for (name, pkt, check) in to_b {
        let before = snapshot(&b);
        let drops = b.counters().drops();
        let e = b.handle_packet(now, pkt).expect_err(name);
        assert!(check(&e), "{name}: {e:?}");
        assert_eq!(b.counters().drops(), drops + 1, "{name}: one drop counted");
        assert_eq!(snapshot(&b), before, "{name}: no state change");
        // Only NACKs may result, never data or SACKs.
        while let Some(r) = b.poll_transmit(now) {
            assert!(matches!(r.ext, Some(MrcExtRepr::Nack(_))), "{name}: {r:?}");
        }
    }

    let mut to_a: Vec<Case> = Vec::new();
    let mut p = sack.clone();
    p.bth.psn = Psn::new(o.psn + 10);
    to_a.push(("cum beyond next PSN", p, |e| matches!(e, RxError::AckForUnsent(_))));
    let mut p = sack.clone();
    sack_ext(&mut p).bitmap.set(200);
    to_a.push(("bitmap beyond next PSN", p, |e| matches!(e, RxError::AckForUnsent(_))));
    let mut p = sack.clone();
    sack_ext(&mut p).bitmap.bits = 100;
    to_a.push(("bitmap width", p, |e| matches!(e, RxError::Malformed(_))));
    let mut p = sack.clone();
    sack_ext(&mut p).ev_index = 999;
    to_a.push(("SACK EV not in set", p, |e| matches!(e, RxError::Malformed(_))));
    let mut p = sack.clone();
    p.aeth = Some(AethRepr {
        syndrome: Syndrome::Nak { code: 0 },
        msn: 0,
    });
    to_a.push(("SACK with NAK syndrome", p, |e| matches!(e, RxError::Malformed(_))));
    let mut p = sack.clone();
    p.bth.psn = Psn::new(o.psn + 50);
    p.aeth = Some(AethRepr {
        syndrome: Syndrome::Nak { code: 0 },
        msn: 0,
    });
    p.ext = Some(MrcExtRepr::Nack(NackExtRepr {
        kind: NackKind::Trimmed,
        ev_index: 0,
        cum_psn: Psn::new(0),
        echo_ts: 0,
    }));
    to_a.push(("NACK for unsent PSN", p, |e| matches!(e, RxError::AckForUnsent(_))));
    let mut p = sack.clone();
    p.ext = Some(MrcExtRepr::Probe(ProbeExtRepr {
        response: true,
        ev_index: 999,
        probe_id: 1,
        tx_ts: 0,
        service_ns: 0,
    }));
    to_a.push(("probe response EV not in set", p, |e| {
        matches!(e, RxError::Malformed(_))
    }));
    let mut p = middle.clone();
    p.bth.dest_qp = QPN_A;
    p.bth.opcode = Opcode::WriteFirst;
    to_a.push(("FIRST opcode without RETH", p, |e| {
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
    a.handle_packet(now, sack).unwrap();
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
    let pkts: Vec<RocePacket> = std::iter::from_fn(|| a.poll_transmit(now)).collect();
    b.handle_packet(now, pkts[2].clone()).unwrap();
    let sack = b.poll_transmit(now).unwrap();
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
            if let Some(MrcExtRepr::Data(d)) = &mut p.ext {
                d.ev_index ^= z;
                d.ev_seq ^= x;
                if let Some(pl) = &mut d.placement {
                    pl.va ^= y;
                }
            }
            if let Some(MrcExtRepr::Sack(s)) = &mut p.ext {
                s.bitmap.words[(x % 4) as usize] ^= y;
                s.base = Psn::new(s.base.value() ^ (x >> 8));
                s.ev_index ^= z;
            }
            if let Some(r) = &mut p.reth {
                r.dma_len ^= x;
                r.va ^= y;
            }
            let mut g = qps.borrow_mut();
            let (a, b) = &mut *g;
            let q = if to_a { a } else { b };
            p.bth.dest_qp = q.config().qpn;
            let _ = q.handle_packet(now, p);
            while q.poll_transmit(now).is_some() {}
            Ok(())
        })
        .unwrap();
}
