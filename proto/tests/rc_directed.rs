//! Directed tests of the RoCEv2 RC baseline QP.

mod rc_util;

use bytes::Bytes;
use proto::model::rc::{RcQp, CNP_INTERVAL, CNP_PAYLOAD_LEN};
use proto::model::*;
use proto::wire::{AethRepr, Opcode, RocePacket, Syndrome};
use proto::{Duration, Instant, Psn};
use rc_util::*;

fn success(c: &[Completion]) -> Vec<u64> {
    c.iter()
        .filter(|c| c.status == WcStatus::Success)
        .map(|c| c.wr_id)
        .collect()
}

#[test]
fn single_packet_write() {
    let mut p = Pair::new(Setup::default(), 1);
    let data = pattern(100, 7);
    p.qp[0].post_write(p.now, write(1, &data, 0x40, None)).unwrap();
    assert!(p.run());
    assert_eq!(p.mem(1, 0x40, 100), data);
    assert_eq!(
        p.send_completions(0),
        vec![Completion {
            wr_id: 1,
            status: WcStatus::Success,
            len: 100,
            imm: None
        }]
    );
    let d = p.data_sent(0);
    assert_eq!(d.len(), 1);
    let pkt = d[0];
    assert_eq!(pkt.bth.opcode, Opcode::WriteOnly);
    assert!(!pkt.bth.mrc_ext && pkt.ext.is_none());
    assert!(pkt.bth.ack_req);
    assert_eq!(pkt.bth.dest_qp, QPN[1]);
    assert_eq!(pkt.bth.psn, Setup::default().sq_psn[0]);
    assert_eq!(pkt.bth.pad, 0);
    assert_eq!(pkt.ev, p.qp[0].ev_set().unwrap().value(0));
    let reth = pkt.reth.unwrap();
    assert_eq!((reth.va, reth.rkey, reth.dma_len), (VA + 0x40, RKEY, 100));
    assert_eq!(p.qp[1].counters().rx_data_packets, 1);
    assert_eq!(p.qp[1].counters().tx_acks, 1);
    assert_eq!(p.qp[0].counters().messages_completed, 1);
    // Every packet of the connection, both ways, on EV 0 of its sender.
    for (_, side, pkt) in &p.sent {
        assert_eq!(pkt.ev, p.qp[*side].ev_set().unwrap().value(0));
        assert!(!pkt.bth.mrc_ext);
    }
}

#[test]
fn multi_packet_write() {
    let mut p = Pair::new(Setup::default(), 2);
    let data = pattern(4500, 3);
    p.qp[0].post_write(p.now, write(9, &data, 0, None)).unwrap();
    assert!(p.run());
    assert_eq!(p.mem(1, 0, 4500), data);
    let ops: Vec<Opcode> = p.data_sent(0).iter().map(|p| p.bth.opcode).collect();
    use Opcode::*;
    assert_eq!(ops, vec![WriteFirst, WriteMiddle, WriteMiddle, WriteMiddle, WriteLast]);
    let d = p.data_sent(0);
    assert!(d[0].reth.is_some() && d[1..].iter().all(|p| p.reth.is_none()));
    assert!(d[4].bth.ack_req && !d[1].bth.ack_req);
    assert_eq!(d[4].payload.len(), 4500 - 4 * 1024);
    assert_eq!(d[4].bth.pad, 0);
    assert_eq!(success(&p.send_completions(0)), vec![9]);
    assert_eq!(p.qp[0].counters().retransmitted_packets, 0);
}

#[test]
fn write_imm_completes_in_order_and_waits_for_receives() {
    let mut p = Pair::new(Setup::default(), 3);
    p.qp[1].post_recv(100).unwrap();
    let sizes = [10usize, 3000, 0, 1024];
    for (i, n) in sizes.iter().enumerate() {
        let d = pattern(*n, i as u8);
        p.qp[0]
            .post_write(p.now, write(i as u64, &d, 8192 * i as u64, Some(0xA0 + i as u32)))
            .unwrap();
    }
    assert!(p.run());
    // One receive posted: one completion, three held.
    assert_eq!(p.recv_completions(1).len(), 1);
    assert_eq!(p.qp[1].held_imm(), 3);
    // All sends are complete anyway (no RNR).
    assert_eq!(success(&p.send_completions(0)), vec![0, 1, 2, 3]);
    for wr in 101..104 {
        p.qp[1].post_recv(wr).unwrap();
    }
    while let Some(e) = p.qp[1].poll_event() {
        p.events[1].push(e);
    }
    let rc = p.recv_completions(1);
    let got: Vec<(u64, u32, Option<u32>)> = rc.iter().map(|c| (c.wr_id, c.len, c.imm)).collect();
    assert_eq!(
        got,
        vec![
            (100, 10, Some(0xA0)),
            (101, 3000, Some(0xA1)),
            (102, 0, Some(0xA2)),
            (103, 1024, Some(0xA3))
        ]
    );
    assert!(rc.iter().all(|c| c.status == WcStatus::Success));
    assert_eq!(p.qp[1].counters().recv_completions, 4);
    let ops: Vec<Opcode> = p.data_sent(0).iter().map(|p| p.bth.opcode).collect();
    use Opcode::*;
    assert_eq!(
        ops,
        vec![
            WriteOnlyImm,
            WriteFirst,
            WriteMiddle,
            WriteLastImm,
            WriteOnlyImm,
            WriteOnlyImm
        ]
    );
    assert!(p
        .data_sent(0)
        .iter()
        .filter(|p| p.bth.opcode.has_imm())
        .all(|p| p.imm.is_some()));
}

#[test]
fn zero_length_write() {
    let mut p = Pair::new(Setup::default(), 4);
    // A zero-length write needs no valid rkey (IBTA: no access check).
    let wr = WriteRequest {
        wr_id: 5,
        data: Bytes::new(),
        remote_va: 0,
        rkey: 0xdead,
        imm: None,
    };
    p.qp[0].post_write(p.now, wr).unwrap();
    assert!(p.run());
    assert_eq!(
        p.send_completions(0),
        vec![Completion {
            wr_id: 5,
            status: WcStatus::Success,
            len: 0,
            imm: None
        }]
    );
    let d = p.data_sent(0);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].bth.opcode, Opcode::WriteOnly);
    assert!(d[0].payload.is_empty());
}

#[test]
fn psn_wraps() {
    let setup = Setup {
        sq_psn: [Psn::new(0xFF_FFF0), Psn::new(0xFF_FFFE)],
        mtu: 256,
        ..Setup::default()
    };
    let mut p = Pair::new(setup, 5);
    let a = pattern(256 * 40, 1);
    let b = pattern(256 * 5 + 3, 2);
    p.qp[0].post_write(p.now, write(1, &a, 0, Some(1))).unwrap();
    p.qp[1].post_write(p.now, write(2, &b, 0x8000, None)).unwrap();
    p.qp[1].post_recv(7).unwrap();
    // Lose one packet after the wrap to exercise NAK/go-back-N across it.
    let mut dropped = false;
    p.filter = Some(Box::new(move |side, pkt| {
        if side == 0 && pkt.bth.psn == Psn::new(3) && !dropped {
            dropped = true;
            return Verdict::Drop;
        }
        Verdict::Deliver
    }));
    assert!(p.run());
    assert_eq!(p.mem(1, 0, a.len()), a);
    assert_eq!(p.mem(0, 0x8000, b.len()), b);
    assert_eq!(success(&p.send_completions(0)), vec![1]);
    assert_eq!(success(&p.send_completions(1)), vec![2]);
    assert_eq!(p.recv_completions(1).len(), 1);
    assert_eq!(p.qp[1].expected_psn(), Some(Psn::new(0xFF_FFF0).add(40)));
    assert_eq!(p.qp[0].expected_psn(), Some(Psn::new(0xFF_FFFE).add(6)));
    assert!(p.data_sent(0).iter().any(|p| p.bth.psn == Psn::new(0)));
    assert_eq!(p.qp[1].counters().tx_nacks, 1);
}

#[test]
fn one_lost_packet_one_nak_go_back_n() {
    let mut p = Pair::new(Setup::default(), 6);
    let n = 20u32;
    let data = pattern(1024 * n as usize, 9);
    p.qp[0].post_write(p.now, write(1, &data, 0, None)).unwrap();
    let lost = Setup::default().sq_psn[0].add(5);
    let mut dropped = false;
    p.filter = Some(Box::new(move |side, pkt| {
        if side == 0 && pkt.bth.psn == lost && !dropped {
            dropped = true;
            return Verdict::Drop;
        }
        Verdict::Deliver
    }));
    assert!(p.run());
    assert_eq!(p.mem(1, 0, data.len()), data);
    let (a, b) = (p.qp[0].counters(), p.qp[1].counters());
    // All 20 went out at once (window 128, no pacing): the frontier was 20.
    assert_eq!(b.tx_nacks, 1, "one NAK per gap");
    assert_eq!(b.rx_out_of_order, (n - 6) as u64);
    assert_eq!(a.rx_nacks, 1);
    assert_eq!(a.retx_go_back_n, (n - 5) as u64);
    assert_eq!(a.retransmitted_packets, (n - 5) as u64);
    assert_eq!(a.rto_fired, 0);
    assert_eq!(a.tx_data_packets, (n + n - 5) as u64);
    // The NAK named the lost PSN.
    let nak: Vec<&RocePacket> = p
        .sent
        .iter()
        .filter(|(_, s, q)| {
            *s == 1
                && matches!(
                    q.aeth,
                    Some(AethRepr {
                        syndrome: Syndrome::Nak { .. },
                        ..
                    })
                )
        })
        .map(|(_, _, q)| q)
        .collect();
    assert_eq!(nak.len(), 1);
    assert_eq!(nak[0].bth.psn, lost);
    assert_eq!(
        nak[0].aeth.unwrap().syndrome,
        Syndrome::Nak {
            code: Syndrome::NAK_PSN_SEQ_ERROR
        }
    );
    assert_eq!(success(&p.send_completions(0)), vec![1]);
}

#[test]
fn duplicate_is_reacked_not_placed() {
    let mut p = Pair::new(Setup::default(), 7);
    let data = pattern(100, 1);
    p.qp[0].post_write(p.now, write(1, &data, 0, None)).unwrap();
    assert!(p.run());
    let pkt = p.data_sent(0)[0].clone();
    // Overwrite the target locally; a duplicate must not place again.
    p.qp[1].memory_mut().write(RKEY, VA, &[0xEE; 100]).unwrap();
    let acks_before = p.qp[1].counters().tx_acks;
    p.inject(1, pkt).unwrap();
    assert_eq!(p.qp[1].counters().rx_duplicates, 1);
    let ack = p.qp[1].poll_transmit(p.now).map(roce).expect("re-ACK");
    assert_eq!(ack.bth.opcode, Opcode::Ack);
    assert_eq!(ack.bth.psn, Setup::default().sq_psn[0]);
    assert!(matches!(ack.aeth.unwrap().syndrome, Syndrome::Ack { .. }));
    assert_eq!(ack.aeth.unwrap().msn, 1);
    assert_eq!(p.qp[1].counters().tx_acks, acks_before + 1);
    assert_eq!(p.mem(1, 0, 100), vec![0xEE; 100]);
    // The requester treats the re-ACK as stale: no change, no error.
    p.inject(0, ack).unwrap();
    assert_eq!(p.send_completions(0).len(), 1);
}

#[test]
fn reordered_packet_is_nacked_and_dropped() {
    let mut p = Pair::new(Setup::default(), 8);
    let data = pattern(3 * 1024, 4);
    p.qp[0].post_write(p.now, write(1, &data, 0, None)).unwrap();
    let mut pkts = Vec::new();
    while let Some(x) = p.qp[0].poll_transmit(p.now).map(roce) {
        pkts.push(x);
    }
    assert_eq!(pkts.len(), 3);
    // Deliver 0, 2, 1.
    p.inject(1, pkts[0].clone()).unwrap();
    p.inject(1, pkts[2].clone()).unwrap();
    assert_eq!(p.qp[1].counters().rx_out_of_order, 1);
    let nak = p.qp[1].poll_transmit(p.now).map(roce).expect("NAK");
    assert_eq!(
        nak.aeth.unwrap().syndrome,
        Syndrome::Nak {
            code: Syndrome::NAK_PSN_SEQ_ERROR
        }
    );
    assert_eq!(nak.bth.psn, pkts[1].bth.psn);
    p.inject(1, pkts[1].clone()).unwrap();
    // Packet 2 was dropped: the responder still expects it.
    assert_eq!(p.qp[1].expected_psn(), Some(pkts[2].bth.psn));
    // The NAK makes the requester resend from packet 1 (go-back-N).
    p.inject(0, nak).unwrap();
    let r1 = p.qp[0].poll_transmit(p.now).map(roce).unwrap();
    let r2 = p.qp[0].poll_transmit(p.now).map(roce).unwrap();
    assert_eq!((r1.bth.psn, r2.bth.psn), (pkts[1].bth.psn, pkts[2].bth.psn));
    assert_eq!(p.qp[0].counters().retx_go_back_n, 2);
    p.inject(1, r1).unwrap(); // now a duplicate
    p.inject(1, r2).unwrap();
    assert_eq!(p.qp[1].counters().rx_duplicates, 1);
    assert_eq!(p.mem(1, 0, data.len()), data);
}

#[test]
fn nak_sent_once_until_expected_arrives() {
    let mut p = Pair::new(Setup::default(), 9);
    p.qp[0]
        .post_write(p.now, write(1, &pattern(6 * 1024, 1), 0, None))
        .unwrap();
    let mut pkts = Vec::new();
    while let Some(x) = p.qp[0].poll_transmit(p.now).map(roce) {
        pkts.push(x);
    }
    for i in [0, 2, 3, 4] {
        p.inject(1, pkts[i].clone()).unwrap();
    }
    assert_eq!(p.qp[1].counters().tx_nacks, 0);
    let _ = p.qp[1].poll_transmit(p.now).map(roce).unwrap();
    assert!(
        p.qp[1].poll_transmit(p.now).map(roce).is_none(),
        "only one NAK for the gap"
    );
    p.inject(1, pkts[1].clone()).unwrap();
    p.inject(1, pkts[5].clone()).unwrap(); // a new gap (2..4 were dropped)
    while p.qp[1].poll_transmit(p.now).map(roce).is_some() {}
    assert_eq!(p.qp[1].counters().tx_nacks, 2);
}

#[test]
fn rto_recovers_when_nak_is_lost() {
    let mut p = Pair::new(Setup::default(), 10);
    let data = pattern(10 * 1024, 5);
    p.qp[0].post_write(p.now, write(1, &data, 0, None)).unwrap();
    let lost = Setup::default().sq_psn[0].add(4);
    let mut dropped = false;
    p.filter = Some(Box::new(move |side, pkt| {
        let is_nak = matches!(
            pkt.aeth,
            Some(AethRepr {
                syndrome: Syndrome::Nak { .. },
                ..
            })
        );
        if (side == 0 && pkt.bth.psn == lost && !dropped) || (side == 1 && is_nak) {
            dropped |= side == 0;
            return Verdict::Drop;
        }
        Verdict::Deliver
    }));
    assert!(p.run());
    assert_eq!(p.mem(1, 0, data.len()), data);
    let a = p.qp[0].counters();
    assert_eq!(a.rto_fired, 1);
    assert_eq!(a.retx_timeout, 6, "go back to the oldest unacked (4) and resend 4..10");
    assert_eq!(a.retx_go_back_n, 0);
    assert_eq!(p.qp[1].counters().tx_nacks, 1);
    assert_eq!(success(&p.send_completions(0)), vec![1]);
    assert_eq!(p.qp[0].retries(), 0, "progress resets the retry count");
}

#[test]
fn retry_exhaustion_goes_to_error() {
    let setup = Setup {
        retry_linear: 2,
        retry_exp: 1,
        ..Setup::default()
    };
    let rto = ack_timeout(setup.ack_timeout_exp);
    let mut p = Pair::new(setup, 11);
    p.filter = Some(Box::new(
        |side, _| if side == 0 { Verdict::Drop } else { Verdict::Deliver },
    ));
    for i in 0..3 {
        p.qp[0].post_write(p.now, write(i, &pattern(2000, 1), 0, None)).unwrap();
    }
    assert!(p.run());
    assert_eq!(p.qp[0].state(), QpState::Error);
    // Original + 2 linear retries + 1 exponential, then the 4th RTO fails it:
    // at rto + rto + rto + 2 rto.
    assert_eq!(p.qp[0].counters().rto_fired, 4);
    assert_eq!(p.now, Instant::ZERO + rto.saturating_mul(5));
    let c = p.send_completions(0);
    let st: Vec<(u64, WcStatus)> = c.iter().map(|c| (c.wr_id, c.status)).collect();
    assert_eq!(
        st,
        vec![
            (0, WcStatus::RetryExceeded),
            (1, WcStatus::Flushed),
            (2, WcStatus::Flushed)
        ]
    );
    assert!(p.events[0].contains(&Event::StateChanged {
        from: QpState::Rts,
        to: QpState::Error
    }));
    // Nothing more is sent or accepted.
    assert!(p.qp[0].poll_transmit(p.now).map(roce).is_none());
    assert_eq!(
        p.qp[0].post_write(p.now, write(9, &[1], 0, None)),
        Err(PostError::BadState(QpState::Error))
    );
}

#[test]
fn bad_rkey_is_fatal_for_the_requester() {
    let mut p = Pair::new(Setup::default(), 12);
    p.qp[0].post_write(p.now, write(1, &pattern(10, 1), 0, None)).unwrap();
    let mut bad = write(2, &pattern(3000, 2), 0, None);
    bad.rkey = 0x9999;
    p.qp[0].post_write(p.now, bad).unwrap();
    p.qp[0]
        .post_write(p.now, write(3, &pattern(10, 3), 0x100, None))
        .unwrap();
    // Out of bounds with the right rkey is the same error.
    assert!(p.run());
    assert_eq!(p.qp[0].state(), QpState::Error);
    let st: Vec<(u64, WcStatus)> = p.send_completions(0).iter().map(|c| (c.wr_id, c.status)).collect();
    assert_eq!(
        st,
        vec![
            (1, WcStatus::Success),
            (2, WcStatus::RemoteAccessError),
            (3, WcStatus::Flushed)
        ]
    );
    let b = p.qp[1].counters();
    assert_eq!(b.drop_remote_access, 1);
    assert!(b.tx_nacks >= 1);
    assert_eq!(p.qp[1].state(), QpState::Rts, "the responder stays up");
    assert!(p.events[0].contains(&Event::StateChanged {
        from: QpState::Rts,
        to: QpState::Error
    }));
    assert!(p
        .sent
        .iter()
        .any(|(_, s, q)| *s == 1 && q.aeth.map(|a| a.syndrome) == Some(Syndrome::Nak { code: 2 })));
}

#[test]
fn out_of_bounds_is_remote_access_error() {
    let mut p = Pair::new(Setup::default(), 13);
    p.qp[0]
        .post_write(p.now, write(1, &pattern(100, 1), REGION - 50, None))
        .unwrap();
    assert!(p.run());
    assert_eq!(p.send_completions(0)[0].status, WcStatus::RemoteAccessError);
    assert_eq!(p.qp[1].counters().drop_remote_access, 1);
}

#[test]
fn wrong_qp_is_dropped_without_state_change() {
    let mut p = Pair::new(Setup::default(), 14);
    p.qp[0].post_write(p.now, write(1, &pattern(10, 1), 0, None)).unwrap();
    let mut pkt = p.qp[0].poll_transmit(p.now).map(roce).unwrap();
    pkt.bth.dest_qp = 0x77;
    let before = p.qp[1].expected_psn();
    assert_eq!(
        p.inject(1, pkt),
        Err(RxError::WrongQp {
            expected: QPN[1],
            got: 0x77
        })
    );
    assert_eq!(p.qp[1].counters().drop_wrong_qp, 1);
    assert_eq!(p.qp[1].counters().drops(), 1);
    assert_eq!(p.qp[1].counters().rx_data_packets, 0);
    assert_eq!(p.qp[1].expected_psn(), before);
    assert!(p.qp[1].poll_transmit(p.now).map(roce).is_none(), "no response");
}

#[test]
fn ack_for_unsent_psn_is_rejected() {
    let mut p = Pair::new(Setup::default(), 15);
    p.qp[0].post_write(p.now, write(1, &pattern(3000, 1), 0, None)).unwrap();
    let _first = p.qp[0].poll_transmit(p.now).map(roce).unwrap(); // only PSN 100 sent
    let before = p.qp[0].send_psns();
    let ack = |psn: Psn, syndrome| RocePacket {
        ev: 0,
        ecn_ce: false,
        trimmed: false,
        bth: proto::wire::BthRepr {
            opcode: Opcode::Ack,
            solicited: false,
            mig_req: true,
            pad: 0,
            pkey: 0xFFFF,
            fecn: false,
            becn: false,
            mrc_ext: false,
            dest_qp: QPN[0],
            ack_req: false,
            psn,
        },
        reth: None,
        imm: None,
        aeth: Some(AethRepr { syndrome, msn: 0 }),
        ext: None,
        payload: Bytes::new(),
    };
    let s0 = Setup::default().sq_psn[0];
    let r = p.inject(0, ack(s0.add(1), Syndrome::Ack { credits: 0x1F }));
    assert_eq!(r, Err(RxError::AckForUnsent(s0.add(1))));
    let r = p.inject(0, ack(s0.add(5), Syndrome::Nak { code: 0 }));
    assert_eq!(r, Err(RxError::AckForUnsent(s0.add(5))));
    assert_eq!(p.qp[0].counters().drop_ack_for_unsent, 2);
    assert_eq!(p.qp[0].send_psns(), before);
    assert!(p.send_completions(0).is_empty());
    // A valid one still works afterwards.
    p.inject(0, ack(s0, Syndrome::Ack { credits: 0x1F })).unwrap();
    assert_eq!(p.qp[0].send_psns().unwrap().1, s0.add(1));
    // Missing AETH is a typed drop.
    let mut bare = ack(s0, Syndrome::Ack { credits: 0 });
    bare.aeth = None;
    assert_eq!(p.inject(0, bare), Err(RxError::MissingHeader("AETH")));
}

#[test]
fn cnp_on_ecn_ce_is_rate_limited() {
    let mut p = Pair::new(Setup::default(), 16);
    for i in 0..4 {
        p.qp[0].post_write(p.now, write(i, &pattern(10, 1), 0, None)).unwrap();
    }
    let mut pkts = Vec::new();
    while let Some(x) = p.qp[0].poll_transmit(p.now).map(roce) {
        pkts.push(x);
    }
    let times = [0u64, 10, 49, 60];
    let mut cnps = Vec::new();
    for (pkt, t) in pkts.into_iter().zip(times) {
        p.now = Instant::from_us(t);
        let mut pkt = pkt;
        pkt.ecn_ce = true;
        p.inject(1, pkt).unwrap();
        while let Some(x) = p.qp[1].poll_transmit(p.now).map(roce) {
            if x.bth.opcode == Opcode::Cnp {
                cnps.push((p.now, x));
            }
        }
    }
    assert_eq!(p.qp[1].counters().rx_ecn_ce, 4);
    assert_eq!(p.qp[1].counters().tx_cnps, 2);
    assert_eq!(cnps[1].0 - cnps[0].0, Duration::from_us(60));
    assert!(CNP_INTERVAL <= Duration::from_us(60));
    let cnp = cnps[0].1.clone();
    assert_eq!(cnp.bth.dest_qp, QPN[0]);
    assert!(!cnp.bth.mrc_ext && cnp.aeth.is_none() && cnp.ext.is_none());
    assert_eq!(cnp.payload.as_ref(), &[0u8; CNP_PAYLOAD_LEN]);
    p.inject(0, cnp).unwrap();
    assert_eq!(p.qp[0].counters().rx_cnps, 1);
}

#[test]
fn trimmed_packet_is_treated_as_lost() {
    let mut p = Pair::new(Setup::default(), 17);
    let data = pattern(5 * 1024, 8);
    p.qp[0].post_write(p.now, write(1, &data, 0, None)).unwrap();
    let trim_psn = Setup::default().sq_psn[0].add(2);
    let mut pkts = Vec::new();
    while let Some(x) = p.qp[0].poll_transmit(p.now).map(roce) {
        pkts.push(x);
    }
    for mut x in pkts {
        if x.bth.psn == trim_psn {
            x.trimmed = true;
            x.payload = Bytes::new();
        }
        p.inject(1, x).unwrap();
    }
    assert_eq!(p.qp[1].counters().rx_trimmed, 1);
    assert_eq!(p.qp[1].expected_psn(), Some(trim_psn));
    assert!(p.run());
    assert_eq!(p.mem(1, 0, data.len()), data);
    assert_eq!(p.qp[0].counters().retx_go_back_n, 3);
}

#[test]
fn send_window_limits_outstanding_psns() {
    let setup = Setup {
        mtu: 256,
        ..Setup::default()
    };
    let mut p = Pair::new(setup, 18);
    p.qp[0]
        .post_write(p.now, write(1, &pattern(256 * 300, 1), 0, None))
        .unwrap();
    let mut n = 0;
    while p.qp[0].poll_transmit(p.now).map(roce).is_some() {
        n += 1;
    }
    assert_eq!(n, MPR_UNIT as usize, "send_mpr_units = 1: 128 unacked PSNs");
    assert!(p.run());
    assert_eq!(p.mem(1, 0, 256 * 300), pattern(256 * 300, 1));
}

#[test]
fn max_wimm_bounds_outstanding_write_imms() {
    let setup = Setup {
        max_wimm: 1,
        ..Setup::default()
    };
    let mut p = Pair::new(setup, 19);
    p.qp[1].post_recv(1).unwrap();
    p.qp[0]
        .post_write(p.now, write(1, &pattern(10, 1), 0, Some(1)))
        .unwrap();
    p.qp[0]
        .post_write(p.now, write(2, &pattern(10, 1), 0, Some(2)))
        .unwrap();
    assert!(p.qp[0].poll_transmit(p.now).map(roce).is_some());
    assert!(
        p.qp[0].poll_transmit(p.now).map(roce).is_none(),
        "second WRITE-IMM waits"
    );
    assert!(p.run());
    assert_eq!(success(&p.send_completions(0)), vec![1, 2]);
    // The second one is held until a receive is posted.
    assert_eq!(p.qp[1].held_imm(), 1);
    assert_eq!(p.qp[1].post_recv(2), Ok(()));
    assert_eq!(p.qp[1].held_imm(), 0);
    assert_eq!(p.qp[1].post_recv(3), Ok(()));
    assert_eq!(p.qp[1].post_recv(4), Err(PostError::RecvQueueFull(1)));
}

#[test]
fn ack_coalescing_every_n_and_on_timer() {
    let setup = Setup {
        ack_every: 4,
        mtu: 256,
        ..Setup::default()
    };
    let mut p = Pair::new(setup, 20);
    // 10 packets: AckReq only on the last, so ACKs after 4, 8 and 10.
    p.qp[0].post_write(p.now, write(1, &pattern(2560, 1), 0, None)).unwrap();
    let mut acked = Vec::new();
    while let Some(x) = p.qp[0].poll_transmit(p.now).map(roce) {
        p.inject(1, x).unwrap();
        while let Some(a) = p.qp[1].poll_transmit(p.now).map(roce) {
            acked.push(a.bth.psn.offset_from(Setup::default().sq_psn[0]));
        }
    }
    assert_eq!(acked, vec![3, 7, 9]);
    assert_eq!(p.qp[1].counters().tx_acks, 3);
    // ACK triggers between two polls merge into one cumulative ACK.
    let mut m = Pair::new(
        Setup {
            ack_every: 1,
            ..Setup::default()
        },
        25,
    );
    m.qp[0].post_write(m.now, write(1, &pattern(4096, 1), 0, None)).unwrap();
    assert!(m.run());
    assert_eq!(m.qp[1].counters().tx_acks, 1);
    // Without AckReq the delay timer ACKs: inject a middle-of-message
    // packet by hand.
    let mut q = Pair::new(
        Setup {
            ack_every: 4,
            mtu: 256,
            ..Setup::default()
        },
        21,
    );
    q.qp[0].post_write(q.now, write(1, &pattern(2560, 1), 0, None)).unwrap();
    let first = q.qp[0].poll_transmit(q.now).map(roce).unwrap();
    assert!(!first.bth.ack_req);
    q.inject(1, first).unwrap();
    assert!(q.qp[1].poll_transmit(q.now).map(roce).is_none());
    let t = q.qp[1].poll_timeout().unwrap();
    assert_eq!(t, q.now + QpConfig::new(Transport::Rc, 0).ack_delay);
    q.qp[1].handle_timeout(t);
    let ack = q.qp[1].poll_transmit(t).map(roce).unwrap();
    assert_eq!(ack.bth.psn, Setup::default().sq_psn[0]);
}

#[test]
fn modify_error_flushes_in_order() {
    let mut p = Pair::new(Setup::default(), 22);
    for i in 0..3 {
        p.qp[0].post_write(p.now, write(i, &pattern(10, 1), 0, None)).unwrap();
    }
    p.qp[0].post_recv(50).unwrap();
    p.qp[0].modify(p.now, QpTransition::Error).unwrap();
    while let Some(e) = p.qp[0].poll_event() {
        p.events[0].push(e);
    }
    let st: Vec<(u64, WcStatus)> = p.send_completions(0).iter().map(|c| (c.wr_id, c.status)).collect();
    assert_eq!(
        st,
        vec![(0, WcStatus::Flushed), (1, WcStatus::Flushed), (2, WcStatus::Flushed)]
    );
    assert_eq!(p.recv_completions(0)[0].status, WcStatus::Flushed);
    assert!(p.qp[0].poll_transmit(p.now).map(roce).is_none());
    assert_eq!(p.qp[0].poll_timeout(), None);
}

#[test]
fn state_machine_refusals() {
    let s = Setup::default();
    let mut q = RcQp::new(QpConfig::new(Transport::Rc, QPN[0])).unwrap();
    let t = Instant::ZERO;
    assert_eq!(q.state(), QpState::Reset);
    assert!(matches!(
        q.modify(t, QpTransition::Rtr(rtr_attr(&s, 0))),
        Err(ModifyError::BadTransition { .. })
    ));
    assert!(matches!(
        q.modify(t, QpTransition::Rts(rts_attr(&s, 0))),
        Err(ModifyError::BadTransition { .. })
    ));
    assert_eq!(
        q.post_write(t, write(1, &[1], 0, None)),
        Err(PostError::BadState(QpState::Reset))
    );
    assert_eq!(q.post_recv(1), Err(PostError::BadState(QpState::Reset)));
    q.modify(t, QpTransition::Init(InitAttr::default())).unwrap();
    assert!(matches!(
        q.modify(t, QpTransition::Init(InitAttr::default())),
        Err(ModifyError::BadTransition { .. })
    ));
    assert_eq!(q.post_recv(1), Err(PostError::BadState(QpState::Init)));
    let bad_rtr = RtrAttr {
        mpr_units: 0,
        ..rtr_attr(&s, 0)
    };
    assert!(matches!(
        q.modify(t, QpTransition::Rtr(bad_rtr)),
        Err(ModifyError::BadAttribute { .. })
    ));
    assert_eq!(q.state(), QpState::Init);
    q.modify(t, QpTransition::Rtr(rtr_attr(&s, 0))).unwrap();
    assert_eq!(
        q.post_write(t, write(1, &[1], 0, None)),
        Err(PostError::BadState(QpState::Rtr))
    );
    q.post_recv(1).unwrap();
    let bad_rts = RtsAttr {
        retry_linear: 8,
        ..rts_attr(&s, 0)
    };
    assert!(matches!(
        q.modify(t, QpTransition::Rts(bad_rts)),
        Err(ModifyError::BadAttribute { .. })
    ));
    let bad_rts = RtsAttr {
        ack_timeout_exp: 25,
        ..rts_attr(&s, 0)
    };
    assert!(matches!(
        q.modify(t, QpTransition::Rts(bad_rts)),
        Err(ModifyError::BadAttribute { .. })
    ));
    let mut bad_ev = rts_attr(&s, 0);
    bad_ev.evs.evs.clear();
    assert!(matches!(
        q.modify(t, QpTransition::Rts(bad_ev)),
        Err(ModifyError::EvSet(_))
    ));
    assert_eq!(q.state(), QpState::Rtr);
    q.modify(t, QpTransition::Rts(rts_attr(&s, 0))).unwrap();
    assert!(matches!(
        q.modify(t, QpTransition::Rts(rts_attr(&s, 0))),
        Err(ModifyError::BadTransition { .. })
    ));
    let big = WriteRequest {
        wr_id: 1,
        data: Bytes::from(vec![0u8; (MAX_MESSAGE_LEN + 1) as usize]),
        remote_va: VA,
        rkey: RKEY,
        imm: None,
    };
    assert_eq!(q.post_write(t, big), Err(PostError::TooLong(MAX_MESSAGE_LEN + 1)));
    // RTS -> ERR -> RST -> INIT again; RST forgets counters and queues.
    q.modify(t, QpTransition::Error).unwrap();
    assert!(matches!(
        q.modify(t, QpTransition::Rtr(rtr_attr(&s, 0))),
        Err(ModifyError::BadTransition { .. })
    ));
    q.modify(t, QpTransition::Reset).unwrap();
    assert_eq!(q.poll_event(), None);
    assert_eq!(*q.counters(), Counters::default());
    assert!(q.ev_set().is_none());
    q.modify(t, QpTransition::Init(InitAttr::default())).unwrap();
    assert_eq!(q.state(), QpState::Init);
    // Invalid config is refused at creation.
    let mut cfg = QpConfig::new(Transport::Rc, 1);
    cfg.mtu = 100;
    assert!(RcQp::new(cfg).is_err());
}

#[test]
fn packets_in_wrong_state_are_dropped() {
    let s = Setup::default();
    let mut src = qp(&s, 0);
    src.post_write(Instant::ZERO, write(1, &[1, 2, 3], 0, None)).unwrap();
    let pkt = src.poll_transmit(Instant::ZERO).map(roce).unwrap();
    let mut q = RcQp::new(QpConfig::new(Transport::Rc, QPN[1])).unwrap();
    assert_eq!(
        q.handle_packet(Instant::ZERO, pkt.clone().into()),
        Err(RxError::BadState(QpState::Reset))
    );
    q.modify(Instant::ZERO, QpTransition::Init(InitAttr::default()))
        .unwrap();
    q.memory_mut().register(VA, REGION, RKEY).unwrap();
    assert_eq!(
        q.handle_packet(Instant::ZERO, pkt.clone().into()),
        Err(RxError::BadState(QpState::Init))
    );
    q.modify(Instant::ZERO, QpTransition::Rtr(rtr_attr(&s, 1))).unwrap();
    // A responder in RTR accepts data and ACKs it...
    q.handle_packet(Instant::ZERO, pkt.into()).unwrap();
    let ack = q.poll_transmit(Instant::ZERO).map(roce).unwrap();
    assert_eq!(ack.bth.opcode, Opcode::Ack);
    // ...but an ACK for its (nonexistent) send side is refused.
    let mut back = ack.clone();
    back.bth.dest_qp = QPN[1];
    assert_eq!(
        q.handle_packet(Instant::ZERO, back.into()),
        Err(RxError::BadState(QpState::Rtr))
    );
    assert_eq!(q.counters().drop_bad_state, 3);
}

#[test]
fn opcode_sequence_errors_are_typed() {
    let mut p = Pair::new(Setup::default(), 23);
    p.qp[0].post_write(p.now, write(1, &pattern(3000, 1), 0, None)).unwrap();
    let first = p.qp[0].poll_transmit(p.now).map(roce).unwrap();
    let middle = p.qp[0].poll_transmit(p.now).map(roce).unwrap();
    // MIDDLE with the expected PSN but no FIRST before it.
    let mut m = middle.clone();
    m.bth.psn = first.bth.psn;
    assert_eq!(p.inject(1, m), Err(RxError::UnexpectedOpcode(Opcode::WriteMiddle)));
    p.inject(1, first.clone()).unwrap();
    // FIRST while a message is open.
    let mut f = first.clone();
    f.bth.psn = middle.bth.psn;
    assert_eq!(p.inject(1, f), Err(RxError::UnexpectedOpcode(Opcode::WriteFirst)));
    assert_eq!(p.qp[1].counters().drop_unexpected_opcode, 2);
    // An MRC-extended packet is malformed on RC; a FIRST without RETH too.
    let mut x = middle.clone();
    x.bth.mrc_ext = true;
    assert!(matches!(p.inject(1, x), Err(RxError::Malformed(_))));
    let mut r = first.clone();
    r.reth = None;
    assert_eq!(p.inject(1, r), Err(RxError::MissingHeader("RETH")));
    p.inject(1, middle).unwrap();
    assert_eq!(p.qp[1].expected_psn(), Some(first.bth.psn.add(2)));
}

#[test]
fn deny_marks_but_does_not_move_and_probe_is_refused() {
    let mut p = Pair::new(Setup::default(), 24);
    let ev0 = p.qp[0].ev_set().unwrap().value(0);
    assert_eq!(p.qp[0].deny_evs(p.now, 0xFFFF_FFFF, ev0), 1);
    assert!(!p.qp[0].probe_ev(p.now, 0));
    p.qp[0].post_write(p.now, write(1, &[1; 10], 0, None)).unwrap();
    assert!(p.run());
    assert!(p.data_sent(0).iter().all(|x| x.ev == ev0));
    assert!(p.events[0].iter().any(|e| matches!(e, Event::EvStateChanged(_))));
    assert_eq!(p.qp[0].allow_evs(p.now, 0xFFFF_FFFF, ev0), 1);
}

/// A controller that spaces packets `gap` apart and records CNPs.
#[derive(Debug)]
struct Paced {
    gap: Duration,
    next: Instant,
    cnps: std::sync::Arc<std::sync::atomic::AtomicU32>,
}

impl proto::model::cc::CongestionControl for Paced {
    fn name(&self) -> &'static str {
        "paced-test"
    }
    fn window(&self) -> u64 {
        u64::MAX
    }
    fn next_send_time(&self, now: Instant, _bytes: u32) -> Instant {
        now.max(self.next)
    }
    fn on_send(&mut self, now: Instant, _bytes: u32) {
        self.next = now + self.gap;
    }
    fn on_ack(&mut self, _now: Instant, _s: proto::model::cc::AckSample) {}
    fn on_loss(&mut self, _now: Instant, _bytes: u64) {}
    fn on_timeout(&mut self, _now: Instant) {}
    fn on_cnp(&mut self, _now: Instant) {
        self.cnps.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

#[test]
fn pacing_is_reported_by_poll_timeout() {
    let mut p = Pair::new(Setup::default(), 26);
    let cnps = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let cc = Paced {
        gap: Duration::from_us(3),
        next: Instant::ZERO,
        cnps: cnps.clone(),
    };
    assert!(p.qp[0].set_congestion_control(Box::new(cc)));
    p.qp[0]
        .post_write(p.now, write(1, &pattern(4 * 1024, 1), 0, None))
        .unwrap();
    let first = p.qp[0].poll_transmit(p.now).map(roce).unwrap();
    p.inject(1, first).unwrap();
    assert!(p.qp[0].poll_transmit(p.now).map(roce).is_none(), "paced");
    assert_eq!(p.qp[0].poll_timeout(), Some(Instant::from_us(3)));
    assert!(p.run());
    let times: Vec<Instant> = p
        .sent
        .iter()
        .filter(|(_, s, x)| *s == 0 && x.bth.opcode.is_write())
        .map(|(t, _, _)| *t)
        .collect();
    assert_eq!(
        times,
        vec![Instant::from_us(3), Instant::from_us(6), Instant::from_us(9)]
    );
    assert_eq!(p.qp[0].counters().retransmitted_packets, 0);
    assert_eq!(p.mem(1, 0, 4096), pattern(4096, 1));
    // CNPs reach the controller.
    let mut q = Pair::new(Setup::default(), 27);
    let cc = Paced {
        gap: Duration::ZERO,
        next: Instant::ZERO,
        cnps: cnps.clone(),
    };
    q.qp[0].set_congestion_control(Box::new(cc));
    q.qp[0].post_write(q.now, write(1, &[1; 10], 0, None)).unwrap();
    let mut x = q.qp[0].poll_transmit(q.now).map(roce).unwrap();
    x.ecn_ce = true;
    q.inject(1, x).unwrap();
    while let Some(r) = q.qp[1].poll_transmit(q.now).map(roce) {
        q.inject(0, r).unwrap();
    }
    assert_eq!(cnps.load(std::sync::atomic::Ordering::Relaxed), 1);
}

#[test]
fn works_through_the_qp_enum() {
    let s = Setup::default();
    let mut q: Vec<Qp> = (0..2)
        .map(|side| {
            let mut st = setup(&s, side);
            st.cfg = QpConfig::new(Transport::Rc, QPN[side]);
            let mut q: Qp = proto::test_support::ready(&st);
            q.memory_mut().register(VA, REGION, RKEY).unwrap();
            q
        })
        .collect();
    let data = pattern(10_000, 2);
    q[0].post_write(Instant::ZERO, write(1, &data, 0, None)).unwrap();
    let mut now = Instant::ZERO;
    for _ in 0..100 {
        for side in 0..2 {
            while let Some(x) = q[side].poll_transmit(now).map(roce) {
                q[1 - side].handle_packet(now, x.into()).unwrap();
            }
        }
        now += Duration::from_us(1);
        for qp in q.iter_mut() {
            if qp.poll_timeout().is_some_and(|t| t <= now) {
                qp.handle_timeout(now);
            }
        }
    }
    assert_eq!(q[1].memory().read(RKEY, VA, 10_000).unwrap(), &data[..]);
    assert!(matches!(
        q[0].poll_event(),
        Some(Event::SendCompleted(Completion {
            wr_id: 1,
            status: WcStatus::Success,
            ..
        }))
    ));
}
