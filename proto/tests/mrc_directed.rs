//! Directed tests of the MRC queue pair, two QPs back to back.

mod mrc_common;

use mrc_common::*;
use proto::model::ev::EvState;
use proto::model::mrc::MrcQp;
use proto::model::*;
use proto::time::{Duration, Instant};
use proto::wire::mrc10::{choices, Mrc10Packet, NackReason, Opcode, TrafficClass};
use proto::wire::{RethRepr, Syndrome};
use proto::Psn;

fn read(b: &MrcQp, off: u64, len: usize) -> Vec<u8> {
    b.memory().read(RKEY, VA + off, len as u64).unwrap().to_vec()
}

#[test]
fn single_message() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let mut now = Instant::ZERO;
    let d = data(100, 1);
    a.post_write(now, write(7, d.clone(), 0, None)).unwrap();
    run(&mut a, &mut b, &mut now);
    let c = completions(&events(&mut a));
    assert_eq!(
        c,
        vec![Completion {
            wr_id: 7,
            status: WcStatus::Success,
            len: 100,
            imm: None
        }]
    );
    assert_eq!(read(&b, 0, 100), d.to_vec());
    assert_eq!(a.counters().tx_data_packets, 1);
    assert_eq!(a.counters().messages_completed, 1);
    assert_eq!(b.expected_psn(), Some(Psn::new(o.psn + 1)));
}

#[test]
fn multi_packet_segmentation() {
    let o = Opts::default();
    let (mut a, _b) = pair(&o);
    let now = Instant::from_us(3);
    let d = data(3 * MTU as usize + 10, 2);
    a.post_write(now, write(1, d.clone(), 64, None)).unwrap();
    let pkts = drain_tx(&mut a, now);
    let ops: Vec<Opcode> = pkts.iter().map(|p| p.bth.opcode).collect();
    assert_eq!(
        ops,
        vec![
            Opcode::WriteFirst,
            Opcode::WriteMiddle,
            Opcode::WriteMiddle,
            Opcode::WriteLast
        ]
    );
    let evs = a.ev_set().unwrap();
    for (i, p) in pkts.iter().enumerate() {
        assert_eq!(p.bth.psn, Psn::new(o.psn + i as u32));
        assert_eq!(p.bth.dest_qp, QPN_B);
        assert_eq!(p.bth.ack_req, i == 3);
        assert!(!p.bth.retransmit);
        assert!(p.bth.timestamp, "every data packet is stamped");
        assert_eq!(p.class, TrafficClass::Trimmable);
        // Round robin over the EVs.
        assert_eq!(p.ev, evs.value(i as u16));
        let mut q = p.clone();
        let w = *write_headers(&mut q);
        // 3000 ns on the 64 ns TSETH clock.
        assert_eq!(w.tseth.unwrap().tx_ts, (3000 / choices::TS_UNIT_NS) as u16);
        assert_eq!(w.meth.msn, 0, "the first request's MSN");
        let off = i * MTU as usize;
        assert_eq!(&p.payload[..], &d[off..(off + MTU as usize).min(d.len())]);
        // RETH on every packet: this packet's VA, the message length.
        assert_eq!(
            w.reth,
            RethRepr {
                va: VA + 64 + off as u64,
                rkey: RKEY,
                dma_len: d.len() as u32
            }
        );
    }
}

#[test]
fn zero_length_write() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let mut now = Instant::ZERO;
    a.post_write(now, write(3, bytes::Bytes::new(), 0, Some(5))).unwrap();
    b.post_recv(99).unwrap();
    let mut pkts = drain_tx(&mut a, now);
    assert_eq!(pkts.len(), 1);
    assert_eq!(pkts[0].bth.opcode, Opcode::WriteOnlyImm);
    assert!(pkts[0].payload.is_empty());
    assert_eq!(write_headers(&mut pkts[0]).reth.dma_len, 0);
    b.handle_packet(now, pkts[0].clone().into()).unwrap();
    run(&mut a, &mut b, &mut now);
    assert_eq!(completions(&events(&mut a))[0].status, WcStatus::Success);
    assert_eq!(
        recv_completions(&events(&mut b)),
        vec![Completion {
            wr_id: 99,
            status: WcStatus::Success,
            len: 0,
            imm: Some(5)
        }]
    );
}

#[test]
fn write_imm_completions_in_order_with_late_receives() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let mut now = Instant::ZERO;
    a.post_write(now, write(1, data(2500, 1), 0, Some(0x111))).unwrap();
    a.post_write(now, write(2, data(10, 2), 4096, None)).unwrap();
    a.post_write(now, write(3, data(700, 3), 8192, Some(0x333))).unwrap();
    // Deliver in reverse order: completions must still come in PSN order.
    let mut pkts = drain_tx(&mut a, now);
    pkts.reverse();
    for p in pkts {
        b.handle_packet(now, p.into()).unwrap();
    }
    assert!(recv_completions(&events(&mut b)).is_empty());
    assert_eq!(b.held_recv_completions(), 2);
    b.post_recv(10).unwrap();
    let r = recv_completions(&events(&mut b));
    assert_eq!(
        r,
        vec![Completion {
            wr_id: 10,
            status: WcStatus::Success,
            len: 2500,
            imm: Some(0x111)
        }]
    );
    b.post_recv(11).unwrap();
    let r = recv_completions(&events(&mut b));
    assert_eq!(
        r,
        vec![Completion {
            wr_id: 11,
            status: WcStatus::Success,
            len: 700,
            imm: Some(0x333)
        }]
    );
    assert_eq!(b.counters().recv_completions, 2);
    run(&mut a, &mut b, &mut now);
    let ids: Vec<u64> = completions(&events(&mut a)).iter().map(|c| c.wr_id).collect();
    assert_eq!(ids, vec![1, 2, 3]);
}

#[test]
fn psn_wraps() {
    let o = Opts {
        psn: 0xFF_FFF0,
        ..Opts::default()
    };
    let (mut a, mut b) = pair(&o);
    let mut now = Instant::ZERO;
    let d = data(40 * MTU as usize, 9);
    a.post_write(now, write(1, d.clone(), 0, Some(1))).unwrap();
    b.post_recv(1).unwrap();
    run(&mut a, &mut b, &mut now);
    assert_eq!(completions(&events(&mut a)).len(), 1);
    assert_eq!(recv_completions(&events(&mut b)).len(), 1);
    assert_eq!(read(&b, 0, d.len()), d.to_vec());
    assert_eq!(b.expected_psn(), Some(Psn::new(0xFF_FFF0 + 40)));
    assert_eq!(a.send_window(), Some((Psn::new(24), Psn::new(24))));
}

#[test]
fn out_of_order_placed_directly() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    let d = data(4 * MTU as usize, 4);
    a.post_write(now, write(1, d.clone(), 0, None)).unwrap();
    let pkts = drain_tx(&mut a, now);
    // LAST first: placed at once, in-order point unchanged.
    b.handle_packet(now, pkts[3].clone().into()).unwrap();
    assert_eq!(read(&b, 3 * MTU as u64, MTU as usize), d[3 * MTU as usize..].to_vec());
    assert_eq!(read(&b, 0, 4), vec![0; 4]);
    assert_eq!(b.expected_psn(), Some(Psn::new(o.psn)));
    assert_eq!(b.counters().rx_out_of_order, 1);
    b.handle_packet(now, pkts[1].clone().into()).unwrap();
    b.handle_packet(now, pkts[0].clone().into()).unwrap();
    assert_eq!(b.expected_psn(), Some(Psn::new(o.psn + 2)));
    b.handle_packet(now, pkts[2].clone().into()).unwrap();
    assert_eq!(b.expected_psn(), Some(Psn::new(o.psn + 4)));
    assert_eq!(read(&b, 0, d.len()), d.to_vec());
}

#[test]
fn duplicates_detected_not_replaced_and_acked() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    a.post_write(now, write(1, data(2 * MTU as usize, 5), 0, None)).unwrap();
    let pkts = drain_tx(&mut a, now);
    b.handle_packet(now, pkts[1].clone().into()).unwrap(); // opens a gap: SACK now
    let s1 = drain_tx(&mut b, now);
    assert_eq!(s1.len(), 1);
    // Duplicate beyond expected (already received).
    b.memory_mut().register(0x9000_0000, 16, 1).unwrap();
    b.handle_packet(now, pkts[1].clone().into()).unwrap();
    assert_eq!(b.counters().rx_duplicates, 1);
    assert_eq!(b.counters().rx_data_packets, 1);
    let s2 = drain_tx(&mut b, now);
    assert_eq!(s2.len(), 1, "a duplicate is acknowledged at once");
    let (s, _) = sack(&s2[0]);
    assert_eq!(s2[0].bth.psn, Psn::new(o.psn - 1));
    assert_eq!(s.cum_ack_psn, Psn::new(o.psn - 1));
    // Bit 0 of the bitmap is PSN cum + sack_offset.
    assert_eq!(s.sack_offset, 1);
    assert_eq!(s.bitmap & 0b11, 0b10);
    // Duplicate before expected.
    b.handle_packet(now, pkts[0].clone().into()).unwrap();
    b.handle_packet(now, pkts[0].clone().into()).unwrap();
    assert_eq!(b.counters().rx_duplicates, 2);
    assert_eq!(b.expected_psn(), Some(Psn::new(o.psn + 2)));
}

#[test]
fn out_of_window_nacked() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    a.post_write(now, write(1, data(10, 5), 0, None)).unwrap();
    let mut p = drain_tx(&mut a, now).remove(0);
    p.bth.psn = Psn::new(o.psn + o.mpr_units as u32 * 128);
    let e = b.handle_packet(now, p.clone().into()).unwrap_err();
    assert!(matches!(e, RxError::OutOfWindow { .. }));
    assert_eq!(b.counters().drop_out_of_window, 1);
    assert_eq!(b.counters().rx_data_packets, 0);
    let n = drain_tx(&mut b, now);
    assert_eq!(n.len(), 1);
    assert_eq!(neth(&n[0]).reason, NackReason::PsnOorWindow);
    assert_eq!(neth(&n[0]).nack_psn, p.bth.psn);
    // Last PSN inside the window is accepted.
    p.bth.psn = Psn::new(o.psn + o.mpr_units as u32 * 128 - 1);
    b.handle_packet(now, p.into()).unwrap();
}

#[test]
fn bad_rkey_remote_access_error() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    let mut wr = write(1, data(100, 1), 0, None);
    wr.rkey = 0xBAD;
    a.post_write(now, wr).unwrap();
    a.post_write(now, write(2, data(100, 1), 0, None)).unwrap();
    let pkts = drain_tx(&mut a, now);
    let e = b.handle_packet(now, pkts[0].clone().into()).unwrap_err();
    assert!(matches!(e, RxError::RemoteAccess { rkey: 0xBAD, .. }));
    assert_eq!(b.counters().drop_remote_access, 1);
    assert_eq!(b.expected_psn(), Some(Psn::new(o.psn)), "not marked received");
    let n = drain_tx(&mut b, now);
    // A fatal error: an ACK whose AETH carries the NAK syndrome.
    assert_eq!(n[0].bth.opcode, Opcode::Ack);
    let proto::wire::mrc10::Headers::Ack(aeth) = n[0].headers else {
        panic!("AETH")
    };
    assert_eq!(
        aeth.syndrome,
        Syndrome::Nak {
            code: Syndrome::NAK_REMOTE_ACCESS
        }
    );
    a.handle_packet(now, n[0].clone().into()).unwrap();
    assert_eq!(a.state(), QpState::Error);
    let ev = events(&mut a);
    let c = completions(&ev);
    assert_eq!(c[0].status, WcStatus::RemoteAccessError);
    assert_eq!(c[1].status, WcStatus::Flushed);
    assert!(ev.contains(&Event::StateChanged {
        from: QpState::Rts,
        to: QpState::Error
    }));
    assert!(a.poll_transmit(now).map(mrc10).is_none());
    assert!(matches!(
        a.post_write(now, write(3, data(1, 1), 0, None)),
        Err(PostError::BadState(QpState::Error))
    ));
}

#[test]
fn wrong_qp_dropped_without_state_change() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    a.post_write(now, write(1, data(100, 1), 0, None)).unwrap();
    let mut p = drain_tx(&mut a, now).remove(0);
    p.bth.dest_qp = 0x99;
    let before = *b.counters();
    let e = b.handle_packet(now, p.into()).unwrap_err();
    assert_eq!(
        e,
        RxError::WrongQp {
            expected: QPN_B,
            got: 0x99
        }
    );
    assert_eq!(b.counters().drop_wrong_qp, 1);
    assert_eq!(
        Counters {
            drop_wrong_qp: 0,
            ..*b.counters()
        },
        before
    );
    assert!(b.poll_transmit(now).map(mrc10).is_none(), "no NACK for a wrong QP");
    assert_eq!(b.expected_psn(), Some(Psn::new(o.psn)));
}

#[test]
fn sack_for_unsent_psn_rejected() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    a.post_write(now, write(1, data(2 * MTU as usize, 1), 0, None)).unwrap();
    let pkts = drain_tx(&mut a, now);
    for p in pkts {
        b.handle_packet(now, p.into()).unwrap();
    }
    let sack = drain_tx(&mut b, now).remove(0);
    // Cumulative ack beyond the next PSN.
    let mut bad = sack.clone();
    if let proto::wire::mrc10::Headers::Sack { seth, .. } = &mut bad.headers {
        seth.cum_ack_psn = Psn::new(o.psn + 2);
    }
    let win = a.send_window();
    assert_eq!(
        a.handle_packet(now, bad.into()).unwrap_err(),
        RxError::AckForUnsent(Psn::new(o.psn + 2))
    );
    // A bitmap bit beyond the next PSN.
    let mut bad = sack.clone();
    if let proto::wire::mrc10::Headers::Sack { seth, .. } = &mut bad.headers {
        // Bit i is PSN cum + sack_offset + i: set the bit of PSN o.psn + 5.
        let base = seth.cum_ack_psn.add(seth.sack_offset as u32);
        seth.bitmap |= 1 << Psn::new(o.psn + 5).distance(base);
    }
    assert!(matches!(
        a.handle_packet(now, bad.into()),
        Err(RxError::AckForUnsent(_))
    ));
    assert_eq!(a.counters().drop_ack_for_unsent, 2);
    assert_eq!(a.send_window(), win);
    assert!(events(&mut a).is_empty());
    // The real one completes; a stale copy is harmless.
    a.handle_packet(now, sack.clone().into()).unwrap();
    a.handle_packet(now, sack.into()).unwrap();
    assert_eq!(completions(&events(&mut a)).len(), 1);
}

#[test]
fn trim_nack_retransmits_at_once() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let mut now = Instant::ZERO;
    a.post_write(now, write(1, data(3 * MTU as usize, 1), 0, None)).unwrap();
    let pkts = drain_tx(&mut a, now);
    let mut t = pkts[1].clone();
    trim(&mut t);
    b.handle_packet(now, t.into()).unwrap();
    assert_eq!(b.counters().rx_trimmed, 1);
    let n = drain_tx(&mut b, now);
    assert_eq!(neth(&n[0]).reason, NackReason::Trimmed);
    assert_eq!(neth(&n[0]).ev, pkts[1].ev);
    a.handle_packet(now, n[0].clone().into()).unwrap();
    let r = a.poll_transmit(now).map(mrc10).expect("immediate retransmission");
    assert_eq!(r.bth.psn, pkts[1].bth.psn);
    assert!(r.bth.retransmit);
    assert_eq!(r.class, TrafficClass::TrimmableRetx);
    assert_ne!(r.ev, pkts[1].ev, "resent on another EV");
    assert_eq!(a.counters().retx_trim, 1);
    assert_eq!(a.ev_set().unwrap().state(1), EvState::Good);
    b.handle_packet(now, pkts[0].clone().into()).unwrap();
    b.handle_packet(now, pkts[2].clone().into()).unwrap();
    b.handle_packet(now, r.into()).unwrap();
    run(&mut a, &mut b, &mut now);
    assert_eq!(completions(&events(&mut a))[0].status, WcStatus::Success);
}

/// Drop the packets A sends that `drop` selects; everything else is
/// delivered at once. Time advances 200 ns per round.
fn run_dropping(
    a: &mut MrcQp,
    b: &mut MrcQp,
    now: &mut Instant,
    drop: impl Fn(&Mrc10Packet) -> bool,
    rounds: usize,
) -> u64 {
    let mut dropped = 0;
    for _ in 0..rounds {
        while let Some(p) = a.poll_transmit(*now).map(mrc10) {
            if drop(&p) {
                dropped += 1;
            } else {
                let _ = b.handle_packet(*now, p.into());
            }
        }
        while let Some(p) = b.poll_transmit(*now).map(mrc10) {
            let _ = a.handle_packet(*now, p.into());
        }
        *now += Duration::from_ns(200);
        a.handle_timeout(*now);
        b.handle_timeout(*now);
    }
    dropped
}

#[test]
fn loss_on_one_ev_marks_it_bad_then_probe_readmits() {
    let o = Opts {
        n_evs: 4,
        min_active: 1,
        ..Opts::default()
    };
    let (mut a, mut b) = pair(&o);
    let mut now = Instant::ZERO;
    for i in 0..8 {
        a.post_write(now, write(i, data(4 * MTU as usize, i as u8), i * 8192, None))
            .unwrap();
    }
    // The first two packets on EV 1 are lost; later ones on EV 1 get through,
    // so their SACKs reveal the loss.
    let ev1 = a.ev_set().unwrap().value(1);
    let lost_on_ev1 = std::cell::Cell::new(0);
    let lossy = |p: &Mrc10Packet| {
        let hit = p.bth.opcode.is_write() && p.ev == ev1 && lost_on_ev1.get() < 2;
        lost_on_ev1.set(lost_on_ev1.get() + u32::from(hit));
        hit
    };
    let dropped = run_dropping(&mut a, &mut b, &mut now, lossy, 40);
    assert!(dropped > 0);
    let ev = events(&mut a);
    assert_eq!(completions(&ev).len(), 8, "all completed despite the bad EV");
    assert!(a.counters().retx_loss_inferred > 0);
    assert!(ev
        .iter()
        .any(|e| matches!(e, Event::EvStateChanged(c) if c.ev_index == 1 && c.to == EvState::AssumedBad)));
    assert_eq!(a.ev_set().unwrap().state(1), EvState::AssumedBad);
    // The path heals: the probe goes through and re-admits it.
    let mut now2 = now;
    let mut readmitted = false;
    for _ in 0..200 {
        now2 += Duration::from_us(1);
        a.handle_timeout(now2);
        while let Some(p) = a.poll_transmit(now2).map(mrc10) {
            let _ = b.handle_packet(now2, p.into());
        }
        while let Some(p) = b.poll_transmit(now2).map(mrc10) {
            let _ = a.handle_packet(now2, p.into());
        }
        if a.ev_set().unwrap().state(1) == EvState::Good {
            readmitted = true;
            break;
        }
    }
    assert!(readmitted);
    assert!(a.counters().tx_probes >= 1);
    assert!(a.counters().rx_probe_responses >= 1);
    let ev = events(&mut a);
    assert!(ev.iter().any(|e| matches!(e, Event::ProbeRtt { ev_index: 1, .. })));
}

#[test]
fn min_active_guard_respected() {
    let o = Opts {
        n_evs: 2,
        min_active: 2,
        ..Opts::default()
    };
    let (mut a, mut b) = pair(&o);
    let mut now = Instant::ZERO;
    for i in 0..4 {
        a.post_write(now, write(i, data(4 * MTU as usize, 1), i * 8192, None))
            .unwrap();
    }
    let ev1 = a.ev_set().unwrap().value(1);
    let on_ev1 = |p: &Mrc10Packet| p.bth.opcode.is_write() && p.ev == ev1;
    run_dropping(&mut a, &mut b, &mut now, on_ev1, 400);
    assert!(a.counters().retransmitted_packets > 0);
    assert_eq!(a.ev_set().unwrap().good_count(), 2);
    assert_eq!(completions(&events(&mut a)).len(), 4);
}

#[test]
fn probe_on_demand() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let now = Instant::from_us(1);
    assert!(a.probe_ev(now, 2));
    assert!(!a.probe_ev(now, 99));
    let p = a.poll_transmit(now).map(mrc10).unwrap();
    assert_eq!(p.ev, 0xC002);
    b.handle_packet(now, p.into()).unwrap();
    let later = now + Duration::from_ns(700);
    // Answered by a SACK with pr = 1 naming the probe, on its EV.
    let r = b.poll_transmit(later).map(mrc10).unwrap();
    assert_eq!(r.bth.opcode, Opcode::Sack);
    let (seth, _) = sack(&r);
    assert!(seth.probe_response);
    assert_eq!(seth.ack_psn_offset, 2, "the probe id: the EV's index");
    assert_eq!(r.ev, 0xC002);
    let back = later + Duration::from_ns(300);
    a.handle_packet(back, r.into()).unwrap();
    // The RTT on the 64 ns timestamp clock, the receiver's hold time
    // included (no service time on the MRC 1.0 wire).
    let unit = choices::TS_UNIT_NS;
    let rtt_ns = (back.as_ns() / unit - now.as_ns() / unit) * unit;
    assert_eq!(events(&mut a), vec![Event::ProbeRtt { ev_index: 2, rtt_ns }]);
}

#[test]
fn rto_and_retry_exhaustion() {
    let o = Opts {
        retry_linear: 2,
        retry_exp: 1,
        ..Opts::default()
    };
    let (mut a, _b) = pair(&o);
    let rto = ack_timeout(4);
    let mut now = Instant::ZERO;
    a.post_write(now, write(1, data(100, 1), 0, None)).unwrap();
    a.post_write(now, write(2, data(100, 1), 1024, None)).unwrap();
    assert_eq!(drain_tx(&mut a, now).len(), 2);
    let mut resend_times = Vec::new();
    while a.state() == QpState::Rts {
        let t = a.poll_timeout().expect("RTO armed");
        assert!(t > now);
        now = t;
        a.handle_timeout(now);
        let sent: Vec<Mrc10Packet> = drain_tx(&mut a, now)
            .into_iter()
            .filter(|p| p.bth.opcode.is_write())
            .collect();
        if !sent.is_empty() {
            assert!(sent.iter().all(|p| p.bth.retransmit));
            resend_times.push(now);
        }
    }
    let gaps: Vec<u64> = resend_times.windows(2).map(|w| (w[1] - w[0]).as_ps()).collect();
    assert_eq!(resend_times[0], Instant::ZERO + rto);
    assert_eq!(gaps, vec![rto.as_ps(), 2 * rto.as_ps()]);
    assert_eq!(now - resend_times[2], rto.saturating_mul(4));
    assert_eq!(a.counters().retx_timeout, 6);
    assert_eq!(a.counters().rto_fired, 4);
    let ev = events(&mut a);
    let c = completions(&ev);
    assert_eq!(
        c.iter().map(|c| (c.wr_id, c.status)).collect::<Vec<_>>(),
        vec![(1, WcStatus::RetryExceeded), (2, WcStatus::Flushed)]
    );
    assert!(ev.contains(&Event::StateChanged {
        from: QpState::Rts,
        to: QpState::Error
    }));
    assert_eq!(a.poll_timeout(), None);
}

#[test]
fn infinite_retries_never_give_up() {
    let o = Opts {
        retry_linear: 0,
        retry_exp: RETRY_INFINITE,
        ..Opts::default()
    };
    let (mut a, _b) = pair(&o);
    let mut now = Instant::ZERO;
    a.post_write(now, write(1, data(100, 1), 0, None)).unwrap();
    drain_tx(&mut a, now);
    let mut last = now;
    let mut gaps = Vec::new();
    for _ in 0..100_000 {
        now = a.poll_timeout().unwrap();
        a.handle_timeout(now);
        if drain_tx(&mut a, now).iter().any(|p| p.bth.opcode.is_write()) {
            gaps.push((now - last).as_ps());
            last = now;
        }
        if a.counters().retx_timeout == 20 {
            break;
        }
    }
    assert_eq!(a.state(), QpState::Rts);
    assert_eq!(a.counters().retx_timeout, 20);
    // Exponential backoff from the first retry, capped at 2^10 x RTO.
    let rto = ack_timeout(4).as_ps();
    assert_eq!(gaps[0], 2 * rto);
    assert_eq!(gaps[1], 4 * rto);
    assert_eq!(*gaps.last().unwrap(), 1024 * rto);
}

#[test]
fn state_machine_refusals() {
    let mut cfg = QpConfig::new(Transport::Mrc, 5);
    cfg.mtu = MTU;
    let mut q = MrcQp::new(cfg.clone()).unwrap();
    let now = Instant::ZERO;
    let o = Opts::default();
    assert_eq!(
        q.post_write(now, write(1, data(1, 1), 0, None)),
        Err(PostError::BadState(QpState::Reset))
    );
    assert_eq!(q.post_recv(1), Err(PostError::BadState(QpState::Reset)));
    assert!(matches!(
        q.modify(now, QpTransition::Rts(rts(&o))),
        Err(ModifyError::BadTransition { .. })
    ));
    q.modify(now, QpTransition::Init(InitAttr::default())).unwrap();
    assert_eq!(q.post_recv(1), Err(PostError::BadState(QpState::Init)));
    let bad = RtrAttr {
        dest_qp: 1,
        rq_psn: Psn::new(0),
        mpr_units: 0,
        max_wimm: 1,
    };
    assert!(matches!(
        q.modify(now, QpTransition::Rtr(bad)),
        Err(ModifyError::BadAttribute { .. })
    ));
    assert_eq!(q.state(), QpState::Init);
    q.modify(
        now,
        QpTransition::Rtr(RtrAttr {
            dest_qp: 1,
            rq_psn: Psn::new(0),
            mpr_units: 1,
            max_wimm: 2,
        }),
    )
    .unwrap();
    assert_eq!(
        q.post_write(now, write(1, data(1, 1), 0, None)),
        Err(PostError::BadState(QpState::Rtr))
    );
    q.post_recv(1).unwrap();
    q.post_recv(2).unwrap();
    assert_eq!(q.post_recv(3), Err(PostError::RecvQueueFull(2)));
    let mut r = rts(&o);
    r.retry_linear = 9;
    assert!(matches!(
        q.modify(now, QpTransition::Rts(r)),
        Err(ModifyError::BadAttribute { .. })
    ));
    let mut r = rts(&o);
    r.evs.evs.clear();
    assert!(matches!(
        q.modify(now, QpTransition::Rts(r)),
        Err(ModifyError::EvSet(_))
    ));
    q.modify(now, QpTransition::Rts(rts(&o))).unwrap();
    q.post_write(now, write(1, data(1, 1), 0, None)).unwrap();
    q.post_write(now, write(2, data(1, 1), 0, None)).unwrap();
    q.modify(now, QpTransition::Error).unwrap();
    let ev = events(&mut q);
    let c = completions(&ev);
    assert_eq!(
        c.iter().map(|c| (c.wr_id, c.status)).collect::<Vec<_>>(),
        vec![(1, WcStatus::Flushed), (2, WcStatus::Flushed)]
    );
    assert_eq!(recv_completions(&ev).len(), 2);
    assert!(matches!(
        q.modify(now, QpTransition::Init(InitAttr::default())),
        Err(ModifyError::BadTransition { .. })
    ));
    // Reset forgets everything but memory.
    q.memory_mut().register(0, 64, 3).unwrap();
    q.modify(now, QpTransition::Reset).unwrap();
    assert_eq!(q.state(), QpState::Reset);
    assert_eq!(*q.counters(), Counters::default());
    assert!(q.ev_set().is_none());
    assert_eq!(q.memory().regions().len(), 1);
    // Packets in RST are refused and counted.
    let mut a = qp(QPN_A, 5, &o);
    a.post_write(now, write(1, data(1, 1), 0, None)).unwrap();
    let mut p = a.poll_transmit(now).map(mrc10).unwrap();
    p.bth.dest_qp = 5;
    assert_eq!(q.handle_packet(now, p.into()), Err(RxError::BadState(QpState::Reset)));
    assert_eq!(q.counters().drop_bad_state, 1);
}

#[test]
fn send_window_and_max_wimm_respected() {
    let o = Opts {
        mpr_units: 1,
        max_wimm: 2,
        ..Opts::default()
    };
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    a.post_write(now, write(1, data(200 * MTU as usize, 1), 0, None))
        .unwrap();
    assert_eq!(drain_tx(&mut a, now).len(), 128, "window of 128 PSNs");
    let (mut a, _) = pair(&o);
    for i in 0..4 {
        a.post_write(now, write(i, data(10, 1), i * 64, Some(i as u32)))
            .unwrap();
    }
    assert_eq!(drain_tx(&mut a, now).len(), 2, "two WRITE-IMMs outstanding at most");
    let _ = &mut b;
}

#[test]
fn sack_coalescing() {
    let o = Opts {
        ack_every: 4,
        ..Opts::default()
    };
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    a.post_write(now, write(1, data(10 * MTU as usize, 1), 0, None))
        .unwrap();
    let pkts = drain_tx(&mut a, now);
    for p in &pkts[..3] {
        b.handle_packet(now, p.clone().into()).unwrap();
    }
    assert!(b.poll_transmit(now).map(mrc10).is_none(), "coalesced");
    assert_eq!(b.poll_timeout(), Some(now + Duration::from_us(2)), "ack_delay timer");
    b.handle_packet(now, pkts[3].clone().into()).unwrap();
    let s = drain_tx(&mut b, now);
    assert_eq!(s.len(), 1, "ack_every");
    assert_eq!(s[0].bth.psn, Psn::new(o.psn + 3));
    b.handle_packet(now, pkts[4].clone().into()).unwrap();
    assert!(b.poll_transmit(now).map(mrc10).is_none());
    let t = Instant::from_us(2);
    b.handle_timeout(t);
    let s = drain_tx(&mut b, t);
    assert_eq!(s.len(), 1, "ack_delay");
    // It reports on the packet that started the delay.
    let (x, _) = sack(&s[0]);
    let trigger = x.cum_ack_psn.add(x.ack_psn_offset as u32);
    assert_eq!(trigger, pkts[4].bth.psn);
    // Out of order, opening a gap: at once, the bitmap from the in-order
    // point.
    b.handle_packet(t, pkts[9].clone().into()).unwrap();
    let s = drain_tx(&mut b, t);
    assert_eq!(s.len(), 1);
    let (x, _) = sack(&s[0]);
    assert_eq!(x.cum_ack_psn, Psn::new(o.psn + 4));
    assert_eq!(x.cum_ack_psn.add(x.sack_offset as u32), Psn::new(o.psn + 5));
    assert_eq!(x.bitmap, 1 << 4);
    assert_eq!(s[0].ev, pkts[9].ev, "SACK goes back on the data packet's EV");
    // Filling in below the highest PSN does not open a gap.
    b.handle_packet(t, pkts[7].clone().into()).unwrap();
    assert!(b.poll_transmit(t).map(mrc10).is_none());
}

/// A SACK's 64-bit bitmap starts at the in-order point; what it cannot
/// name of the packets placed since the previous SACK follows in more
/// SACKs, lowest first.
#[test]
fn sack_bitmap_covers_what_was_placed_since_the_last_sack() {
    let o = Opts::default(); // window 512; the SACK bitmap is 64 bits
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    a.post_write(now, write(1, data(400 * MTU as usize, 1), 0, None))
        .unwrap();
    let pkts = drain_tx(&mut a, now);
    b.handle_packet(now, pkts[10].clone().into()).unwrap();
    drain_tx(&mut b, now);
    b.handle_packet(now, pkts[300].clone().into()).unwrap();
    let s = drain_tx(&mut b, now);
    assert_eq!(s.len(), 2);
    let (x, _) = sack(&s[0]);
    assert_eq!(s[0].bth.psn, Psn::new(o.psn - 1));
    assert_eq!(x.cum_ack_psn.add(x.sack_offset as u32), Psn::new(o.psn));
    assert_eq!(x.bitmap, 1 << 10, "PSN 10 again");
    let (x, _) = sack(&s[1]);
    assert_eq!(x.cum_ack_psn.add(x.sack_offset as u32), Psn::new(o.psn + 300));
    assert_eq!(x.bitmap, 1);
    // The requester learns exactly PSNs 10 and 300.
    a.handle_packet(now, s[0].clone().into()).unwrap();
    a.handle_packet(now, s[1].clone().into()).unwrap();
    assert_eq!(a.send_window(), Some((Psn::new(o.psn), Psn::new(o.psn + 400))));
    // A burst of 150 PSNs placed between two SACKs: one from the in-order
    // point, then three, ascending, that together name every one of them.
    for p in &pkts[100..250] {
        b.handle_packet(now, p.clone().into()).unwrap_or(());
    }
    let s = drain_tx(&mut b, now);
    let bases: Vec<Psn> = s
        .iter()
        .map(|p| sack(p).0)
        .map(|x| x.cum_ack_psn.add(x.sack_offset as u32))
        .collect();
    assert_eq!(
        bases,
        vec![
            Psn::new(o.psn),
            Psn::new(o.psn + 100),
            Psn::new(o.psn + 164),
            Psn::new(o.psn + 228)
        ]
    );
    let named: u32 = s[1..].iter().map(|p| sack(p).0.bitmap.count_ones()).sum();
    assert_eq!(named, 150);
}

/// A controller that allows one packet per 100 ns.
#[derive(Debug)]
struct Paced {
    next: Instant,
}

impl proto::model::cc::CongestionControl for Paced {
    fn name(&self) -> &'static str {
        "paced"
    }
    fn window(&self) -> u64 {
        u64::MAX
    }
    fn next_send_time(&self, now: Instant, _bytes: u32) -> Instant {
        self.next.max(now)
    }
    fn on_send(&mut self, now: Instant, _bytes: u32) {
        self.next = now + Duration::from_ns(100);
    }
    fn on_ack(&mut self, _now: Instant, _s: proto::model::cc::AckSample) {}
    fn on_loss(&mut self, _now: Instant, _bytes: u64) {}
    fn on_timeout(&mut self, _now: Instant) {}
    fn on_cnp(&mut self, _now: Instant) {}
}

#[test]
fn pacing_is_respected_and_reported() {
    let o = Opts::default();
    let (mut a, _b) = pair(&o);
    assert!(a.set_congestion_control(Box::new(Paced { next: Instant::ZERO })));
    let now = Instant::ZERO;
    a.post_write(now, write(1, data(3 * MTU as usize, 1), 0, None)).unwrap();
    assert!(a.poll_transmit(now).map(mrc10).is_some());
    assert!(a.poll_transmit(now).map(mrc10).is_none(), "paced");
    let t = Instant::from_ns(100);
    assert_eq!(a.poll_timeout(), Some(t));
    a.handle_timeout(t);
    assert!(a.poll_transmit(t).map(mrc10).is_some());
    assert!(a.poll_transmit(t).map(mrc10).is_none());
    assert_eq!(a.poll_timeout(), Some(Instant::from_ns(200)));
}

#[test]
fn deny_and_allow_evs() {
    let o = Opts::default();
    let (mut a, _b) = pair(&o);
    let now = Instant::ZERO;
    assert_eq!(a.deny_evs(now, 0xFFFF, 0xC001), 1);
    let ev = events(&mut a);
    assert!(matches!(ev[..], [Event::EvStateChanged(c)] if c.ev_index == 1 && c.to == EvState::Denied));
    a.post_write(now, write(1, data(8 * MTU as usize, 1), 0, None)).unwrap();
    let pkts = drain_tx(&mut a, now);
    assert!(pkts.iter().all(|p| p.ev != 0xC001), "denied EV not used");
    assert_eq!(a.allow_evs(now, 0xFFFF, 0xC001), 1);
    assert_eq!(a.ev_set().unwrap().state(1), EvState::Good);
}

/// A retransmission timeout after a trim NACK of the same QP, at the last
/// hop or not, resends without blaming the EV (MRC 1.0 marks an EV on "a
/// timeout without a trim"); without a trim the EV takes the timeout.
#[test]
fn timeout_after_a_trim_does_not_blame_the_ev() {
    for last_hop in [true, false] {
        let o = Opts::default();
        let (mut a, mut b) = pair(&o);
        let t0 = Instant::ZERO;
        a.post_write(t0, write(1, data(2 * MTU as usize, 1), 0, None)).unwrap();
        let pkts = drain_tx(&mut a, t0);
        let mut t = pkts[1].clone();
        trim(&mut t);
        if last_hop {
            t.class = TrafficClass::TrimmedLastHop;
        }
        b.handle_packet(t0, t.into()).unwrap();
        let n = drain_tx(&mut b, t0);
        let want = if last_hop {
            NackReason::TrimmedLastHop
        } else {
            NackReason::Trimmed
        };
        assert_eq!(neth(&n[0]).reason, want);
        a.handle_packet(t0, n[0].clone().into()).unwrap();
        assert_eq!(a.counters().rx_nacks_last_hop, u64::from(last_hop));
        // The resend and packet 0 are lost too: the RTO fires.
        drain_tx(&mut a, t0);
        let rto = a.poll_timeout().expect("RTO armed");
        a.handle_timeout(rto);
        assert!(a.counters().rto_fired >= 1);
        assert_eq!(
            a.counters().rto_trim_excused,
            2,
            "both timed-out packets went out before the trim"
        );
        let evs = a.ev_set().unwrap();
        assert_eq!(evs.counters().marked_bad, 0);
        if !last_hop {
            let trimmed_ev = (0..evs.len() as u16).find(|&i| evs.value(i) == pkts[1].ev).unwrap();
            assert!(
                evs.is_congested(trimmed_ev),
                "a TRIMMED NACK is news of congestion on its EV"
            );
        }
    }
    // No trim: the timeout marks the EVs of the lost packets.
    let o = Opts::default();
    let (mut a, _b) = pair(&o);
    let t0 = Instant::ZERO;
    a.post_write(t0, write(1, data(2 * MTU as usize, 1), 0, None)).unwrap();
    drain_tx(&mut a, t0);
    let rto = a.poll_timeout().expect("RTO armed");
    a.handle_timeout(rto);
    assert_eq!(a.counters().rto_trim_excused, 0);
    assert_eq!(a.ev_set().unwrap().counters().marked_bad, 2);
}

/// Answering a reliability probe does not swallow the SACK a data packet
/// had armed: the SACK-delay timer still fires and reports it.
#[test]
fn probe_answer_keeps_the_pending_sack() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    a.post_write(now, write(1, data(4 * MTU as usize, 1), 0, None)).unwrap();
    let pkts = drain_tx(&mut a, now);
    // One in-order packet: below ack_every, so only the delay timer is armed.
    b.handle_packet(now, pkts[0].clone().into()).unwrap();
    assert!(drain_tx(&mut b, now).is_empty());
    assert!(a.probe_ev(now, 1));
    let probe = a.poll_transmit(now).map(mrc10).unwrap();
    b.handle_packet(now, probe.into()).unwrap();
    let answer = drain_tx(&mut b, now);
    assert_eq!(answer.len(), 1);
    assert!(sack(&answer[0]).0.probe_response);
    let t = b.poll_timeout().expect("the SACK-delay timer still armed");
    b.handle_timeout(t);
    let s = drain_tx(&mut b, t);
    assert_eq!(s.len(), 1, "the delayed SACK goes out");
    assert!(!sack(&s[0]).0.probe_response);
    assert_eq!(sack(&s[0]).0.cum_ack_psn, pkts[0].bth.psn);
}

/// A CE-marked packet is acknowledged at once, not coalesced behind the
/// next ones: the SACK's m field names the trigger's EV only, so a mark
/// on the first packet of a group of `ack_every` would never SKIP its EV.
#[test]
fn a_ce_marked_packet_is_acknowledged_at_once_and_names_its_ev() {
    use proto::wire::mrc10::SkipMode;
    use proto::wire::Packet;
    let o = Opts {
        ack_every: 4,
        ..Opts::default()
    };
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    a.post_write(now, write(1, data(10 * MTU as usize, 1), 0, None))
        .unwrap();
    let pkts = drain_tx(&mut a, now);
    b.handle_packet(now, pkts[0].clone().into()).unwrap();
    assert!(
        b.poll_transmit(now).map(mrc10).is_none(),
        "an unmarked packet is coalesced"
    );
    let mut marked: Packet = pkts[1].clone().into();
    marked.mark_ce();
    b.handle_packet(now, marked).unwrap();
    let s = drain_tx(&mut b, now);
    assert_eq!(s.len(), 1, "the marked packet is acknowledged at once");
    assert_eq!(s[0].bth.psn, Psn::new(o.psn + 1));
    assert_eq!(sack(&s[0]).0.skip_mode, SkipMode::SkipOnce);
    assert_eq!(sack(&s[0]).0.ev, pkts[1].ev);
    // The next unmarked packets coalesce again.
    for p in &pkts[2..5] {
        b.handle_packet(now, p.clone().into()).unwrap();
    }
    assert!(b.poll_transmit(now).map(mrc10).is_none());
}

/// The SETH m field (MRC 1.0): a SACK for a CE-marked packet says
/// SKIP_ONCE, and the sender passes that EV over once in its rotation; a
/// SACK saying ALWAYS_SKIP marks the EV ASSUMED_BAD.
#[test]
fn sack_m_field_skips_the_ev_of_a_marked_packet() {
    use proto::model::ev::EvChangeReason;
    use proto::wire::mrc10::{Headers, SkipMode};
    use proto::wire::Packet;
    let o = Opts {
        ack_every: 1,
        ..Opts::default()
    };
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    a.post_write(now, write(1, data(4 * MTU as usize, 1), 0, None)).unwrap();
    let pkts = drain_tx(&mut a, now);
    assert_eq!(pkts.len(), 4);
    let skipped_ev = pkts[0].ev;
    let mut marked: Packet = pkts[0].clone().into();
    marked.mark_ce();
    b.handle_packet(now, marked).unwrap();
    let s = drain_tx(&mut b, now);
    assert_eq!(sack(&s[0]).0.skip_mode, SkipMode::SkipOnce);
    assert_eq!(sack(&s[0]).0.ev, skipped_ev);
    a.handle_packet(now, s[0].clone().into()).unwrap();
    assert_eq!(a.ev_set().unwrap().counters().skipped, 1);
    // An unmarked packet's SACK asks nothing.
    b.handle_packet(now, pkts[1].clone().into()).unwrap();
    let s = drain_tx(&mut b, now);
    assert_eq!(sack(&s[0]).0.skip_mode, SkipMode::None);
    a.handle_packet(now, s[0].clone().into()).unwrap();
    // The rotation is back at the skipped EV: it is passed over once,
    // then used again.
    a.post_write(now, write(2, data(4 * MTU as usize, 2), 0, None)).unwrap();
    let next: Vec<u32> = drain_tx(&mut a, now).iter().map(|p| p.ev).collect();
    assert_eq!(next.len(), 4);
    assert!(!next[..3].contains(&skipped_ev), "{next:x?} skips {skipped_ev:#x} once");
    assert_eq!(next[3], skipped_ev);
    // ALWAYS_SKIP (never sent by our receiver) marks the EV ASSUMED_BAD.
    b.handle_packet(now, pkts[2].clone().into()).unwrap();
    let mut s = drain_tx(&mut b, now).remove(0);
    match &mut s.headers {
        Headers::Sack { seth, .. } => seth.skip_mode = SkipMode::AlwaysSkip,
        h => panic!("not a SACK: {h:?}"),
    }
    a.handle_packet(now, s.into()).unwrap();
    let evs = a.ev_set().unwrap();
    let i = (0..evs.len() as u16).find(|&i| evs.value(i) == pkts[2].ev).unwrap();
    assert_eq!(evs.state(i), EvState::AssumedBad);
    let change = events(&mut a)
        .into_iter()
        .find_map(|e| match e {
            Event::EvStateChanged(c) => Some(c),
            _ => None,
        })
        .expect("an EV event");
    assert_eq!(change.reason, EvChangeReason::AlwaysSkip);
}

/// MRC 1.0's per-QP "the peer lacks ...": towards a peer without trim
/// NACK data goes as NO_TRIM; without dynamic MPR the SETH MPR is ignored;
/// without SVC_TIME the echoed timestamp goes back untouched.
#[test]
fn peer_capabilities_change_what_is_sent_and_believed() {
    use proto::model::api::{Capabilities, MODEL_CAPABILITIES};
    use proto::test_support::ready;
    assert_eq!(MODEL_CAPABILITIES, Capabilities::ALL);
    let o = Opts::default();
    let lacking = |caps: Capabilities| {
        let mut s = setup(QPN_A, QPN_B, &o);
        s.cfg.peer_caps = caps;
        let mut a: MrcQp = ready(&s);
        a.memory_mut().register(VA, REGION, RKEY).unwrap();
        a
    };
    let now = Instant::ZERO;
    // Trim NACK: NO_TRIM data.
    for (trim_nack, class) in [(true, TrafficClass::Trimmable), (false, TrafficClass::NoTrim)] {
        let mut a = lacking(Capabilities {
            trim_nack,
            ..Capabilities::ALL
        });
        a.post_write(now, write(1, data(MTU as usize, 1), 0, None)).unwrap();
        assert_eq!(drain_tx(&mut a, now)[0].class, class);
    }
    // Service time: a responder holding a packet 1 us before its SACK
    // advances the echo by 1 us / 64 ns = 15 units, unless the peer lacks
    // SVC_TIME.
    let every = Opts {
        ack_every: 1,
        ..Opts::default()
    };
    for (svc_time, advance) in [(true, 15u16), (false, 0)] {
        let (mut a, _) = pair(&every);
        let mut b = {
            let mut s = setup(QPN_B, QPN_A, &every);
            s.cfg.peer_caps = Capabilities {
                svc_time,
                ..Capabilities::ALL
            };
            let mut b: MrcQp = ready(&s);
            b.memory_mut().register(VA, REGION, RKEY).unwrap();
            b
        };
        a.post_write(now, write(1, data(MTU as usize, 1), 0, None)).unwrap();
        let p = drain_tx(&mut a, now).remove(0);
        let tx_ts = write_headers(&mut p.clone()).tseth.expect("stamped").tx_ts;
        b.handle_packet(now, p.into()).unwrap();
        let s = drain_tx(&mut b, now + Duration::from_us(1));
        assert_eq!(
            sack(&s[0]).1.echo_ts,
            tx_ts.wrapping_add(advance),
            "svc_time {svc_time}"
        );
    }
    // Dynamic MPR: a SACK advertising one unit (128 PSNs) shrinks the send
    // window of a QP whose peer has dynamic MPR, and not of one whose
    // peer lacks it.
    for (dynamic_mpr, max_first_burst) in [(true, 128usize), (false, 4 * 128)] {
        let (_, mut b) = pair(&o);
        let mut a = lacking(Capabilities {
            dynamic_mpr,
            ..Capabilities::ALL
        });
        a.post_write(now, write(1, data(MTU as usize, 1), 0, None)).unwrap();
        let p = drain_tx(&mut a, now).remove(0);
        b.handle_packet(now, p.into()).unwrap();
        let mut s = drain_tx(&mut b, now).remove(0);
        match &mut s.headers {
            proto::wire::mrc10::Headers::Sack { seth, .. } => seth.mpr = 1,
            h => panic!("not a SACK: {h:?}"),
        }
        a.handle_packet(now, s.into()).unwrap();
        a.post_write(now, write(2, data(1000 * MTU as usize, 2), 0, None))
            .unwrap();
        let sent = drain_tx(&mut a, now).len();
        assert!(sent <= max_first_burst, "dynamic_mpr {dynamic_mpr}: {sent} sent");
        if !dynamic_mpr {
            assert!(sent > 128, "the configured window (4 x 128), not the SACK's: {sent}");
        }
    }
}

/// MRC 1.0's reverse EV set: SACKs and NACKs travel on EVs the responder
/// took from arriving packets, one per plane here; a duplicate or a probe
/// (acknowledgements were lost) empties the set, which the next arrivals
/// refill. The SETH still names the EV of the packet acknowledged.
#[test]
fn reverse_ev_set_carries_acks_and_is_refreshed_by_duplicates_and_probes() {
    use proto::model::reverse_ev::ReverseEvConfig;
    use proto::test_support::ready;
    let o = Opts {
        ack_every: 1,
        ..Opts::default()
    };
    let mut a = qp(QPN_A, QPN_B, &o);
    let mut b: MrcQp = {
        let mut s = setup(QPN_B, QPN_A, &o);
        s.cfg.reverse_evs = ReverseEvConfig {
            per_plane: 1,
            planes: 2,
        };
        let mut b: MrcQp = ready(&s);
        b.memory_mut().register(VA, REGION, RKEY).unwrap();
        b
    };
    let now = Instant::from_us(1);
    a.post_write(now, write(1, data(6 * MTU as usize, 1), 0, None)).unwrap();
    let sent = drain_tx(&mut a, now);
    assert_eq!(sent.len(), 6);
    // The EVs 0xC000.. alternate planes ((ev & 0xFFFF) % 2); the set holds
    // the latest EV of each plane.
    let plane = |ev: u32| choices::ev_plane(ev, 2) as usize;
    let mut held: [Option<u32>; 2] = [None; 2];
    let mut travel = Vec::new();
    for p in &sent[..4] {
        held[plane(p.ev)] = Some(p.ev);
        b.handle_packet(now, p.clone().into()).unwrap();
        let s = drain_tx(&mut b, now).remove(0);
        assert_eq!(sack(&s).0.ev, p.ev, "the SETH names the packet acknowledged");
        assert!(held.contains(&Some(s.ev)), "{:x} not held: {held:x?}", s.ev);
        travel.push(s.ev);
    }
    assert_eq!(travel[0], sent[0].ev, "the only EV held");
    let planes_used: std::collections::BTreeSet<usize> = travel.iter().map(|&t| plane(t)).collect();
    assert_eq!(planes_used.len(), 2, "rotation over both planes: {travel:x?}");
    assert_eq!(b.counters().reverse_evictions, 0);

    // A duplicate: the set empties and starts again from its EV.
    b.handle_packet(now, sent[1].clone().into()).unwrap();
    let s = drain_tx(&mut b, now).remove(0);
    assert_eq!(s.ev, sent[1].ev);
    assert_eq!(b.counters().reverse_evictions, 1);

    // A reliability probe: answered on its own EV, which the emptied set
    // holds alone.
    // Probe the EV two places from sent[4]'s: same plane, another EV.
    let next = &sent[4];
    assert!(a.probe_ev(now, ((next.ev - 0xC000 + 2) % 4) as u16));
    let probe = a.poll_transmit(now).map(mrc10).unwrap();
    b.handle_packet(now, probe.clone().into()).unwrap();
    let answer = drain_tx(&mut b, now).remove(0);
    assert!(sack(&answer).0.probe_response);
    assert_eq!(answer.ev, probe.ev);
    assert_eq!(b.counters().reverse_evictions, 2);
    assert_eq!(plane(probe.ev), plane(next.ev));
    assert_ne!(probe.ev, next.ev);
    b.handle_packet(now, next.clone().into()).unwrap();
    let s = drain_tx(&mut b, now).remove(0);
    assert_eq!(s.ev, next.ev, "a newer EV of the plane replaces the probe's");
    assert_eq!(b.counters().reverse_evictions, 2);

    // Shapes beyond the set's capacity, or with no plane, are refused.
    for bad in [
        ReverseEvConfig {
            per_plane: 33,
            planes: 2,
        },
        ReverseEvConfig {
            per_plane: 1,
            planes: 0,
        },
    ] {
        let mut s = setup(QPN_B, QPN_A, &o);
        s.cfg.reverse_evs = bad;
        assert!(
            matches!(
                MrcQp::new(s.cfg),
                Err(proto::model::ModifyError::BadAttribute {
                    name: "reverse_evs",
                    ..
                })
            ),
            "{bad:?}"
        );
    }

    // Off (the default): every acknowledgement echoes its packet's EV.
    let (mut a, mut b) = pair(&o);
    a.post_write(now, write(1, data(2 * MTU as usize, 1), 0, None)).unwrap();
    for p in drain_tx(&mut a, now) {
        b.handle_packet(now, p.clone().into()).unwrap();
        assert_eq!(drain_tx(&mut b, now).remove(0).ev, p.ev);
    }
}

/// The receiving host's back-pressure: SACKs carry the penalty it set;
/// lifting it sets the restore bit of the next SACK only.
#[test]
fn receive_penalty_goes_out_in_cc_state_and_its_end_as_restore() {
    let o = Opts {
        ack_every: 1,
        ..Opts::default()
    };
    let (mut a, mut b) = pair(&o);
    let now = Instant::from_us(1);
    a.post_write(now, write(1, data(4 * MTU as usize, 1), 0, None)).unwrap();
    let sent = drain_tx(&mut a, now);
    let mut cc = Vec::new();
    for (p, penalty) in sent.iter().zip([40u8, 200, 0, 0]) {
        b.set_receive_penalty(penalty);
        b.handle_packet(now, p.clone().into()).unwrap();
        let (_, c) = sack(&drain_tx(&mut b, now).remove(0));
        cc.push((c.cwnd_penalty, c.restore));
    }
    assert_eq!(cc, [(40, false), (127, false), (0, true), (0, false)]);
}

/// QPN 0x2 is MRC 1.0's endpoint: no MRC queue pair takes it, as its own
/// number or as its peer's.
#[test]
fn the_endpoint_qpn_is_no_queue_pair() {
    use proto::wire::mrc10::choices::ENDPOINT_QPN;
    let o = Opts::default();
    let own = setup(ENDPOINT_QPN, QPN_B, &o);
    assert!(matches!(
        MrcQp::new(own.cfg),
        Err(proto::model::ModifyError::BadAttribute { name: "qpn", .. })
    ));
    let peer = setup(QPN_A, ENDPOINT_QPN, &o);
    let mut q = MrcQp::new(peer.cfg.clone()).unwrap();
    let now = Instant::ZERO;
    q.modify(now, QpTransition::Init(peer.init)).unwrap();
    assert!(matches!(
        q.modify(now, QpTransition::Rtr(peer.rtr.clone())),
        Err(proto::model::ModifyError::BadAttribute { name: "dest_qp", .. })
    ));
}
