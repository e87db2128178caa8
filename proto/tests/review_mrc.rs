//! Review findings on the MRC model, one test per bug.

mod mrc_common;

use mrc_common::*;
use proto::model::mrc::MAX_HELD_IMM;
use proto::model::*;
use proto::time::Instant;
use proto::wire::mrc10::{NackReason, Opcode};

/// A peer that keeps sending WRITE-with-immediate while this side posts no
/// receive must not make the held-completion queue grow without bound (the
/// RC baseline caps it at MAX_HELD_IMM; MRC held everything forever).
#[test]
fn review_mrc_held_imm_completions_are_bounded() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    a.post_write(now, write(1, data(0, 0), 0, Some(7))).unwrap();
    let tmpl = a.poll_transmit(now).map(mrc10).unwrap();
    assert_eq!(tmpl.bth.opcode, Opcode::WriteOnlyImm);
    let n = MAX_HELD_IMM as u32 + 100;
    for i in 0..n {
        let mut p = tmpl.clone();
        p.bth.psn = tmpl.bth.psn.add(i);
        let _ = b.handle_packet(now, p.into());
        while b.poll_transmit(now).map(mrc10).is_some() {}
    }
    assert!(
        b.held_recv_completions() <= MAX_HELD_IMM,
        "held {}",
        b.held_recv_completions()
    );
    assert_eq!(b.held_imm_dropped(), 100);
    // The dropped ones were not acknowledged: the in-order point stops at
    // the first of them, so the requester will resend it.
    assert_eq!(b.expected_psn(), Some(tmpl.bth.psn.add(MAX_HELD_IMM as u32)));
    // Receives drain the held completions in order.
    for i in 0..o.max_wimm as u64 {
        b.post_recv(i).unwrap();
    }
    let got = recv_completions(&events(&mut b));
    assert_eq!(got.len(), o.max_wimm as usize);
    assert!(got.iter().all(|c| c.imm == Some(7) && c.status == WcStatus::Success));
}

/// A trim NACK names one transmission (its `echo_ts` is that transmission's
/// `tx_ts`). When it arrives after the PSN was already resent (here by the
/// RTO), it is stale: the requester resent the PSN a second time, took it
/// out of bytes-in-flight although the newest copy is still in flight, cut
/// the window again and blamed the EV of the newest copy (`on_trim`), which
/// never saw the trim.
#[test]
fn review_mrc_stale_trim_nack_does_not_resend_again() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let t0 = Instant::ZERO;
    a.post_write(t0, write(1, data(MTU as usize, 1), 0, None)).unwrap();
    let first = a.poll_transmit(t0).map(mrc10).unwrap();
    // The RTO fires before the trim NACK comes back: resend.
    let t1 = a.poll_timeout().expect("rto armed");
    a.handle_timeout(t1);
    let second = a.poll_transmit(t1).map(mrc10).expect("timeout retransmission");
    assert_eq!(second.bth.psn, first.bth.psn);
    assert!(a.poll_transmit(t1).map(mrc10).is_none());
    let in_flight = a.in_flight();
    assert_eq!(in_flight, MTU as u64);
    // Now the trim NACK of the FIRST transmission arrives.
    let mut t = first.clone();
    trim(&mut t);
    b.handle_packet(t1, t.into()).unwrap();
    let n = drain_tx(&mut b, t1);
    assert_eq!(neth(&n[0]).reason, NackReason::Trimmed);
    a.handle_packet(t1, n[0].clone().into()).unwrap();
    assert!(
        a.poll_transmit(t1).map(mrc10).is_none(),
        "stale trim NACK caused another retransmission"
    );
    assert_eq!(a.in_flight(), in_flight);
    assert_eq!(a.counters().retx_trim, 0);
}

/// A receive completion reported the length the FIRST packet's RETH
/// announced, whatever was actually received: a peer (buggy, or a
/// mutated-and-resealed frame, as the hostile rig found with more inputs
/// than CI runs) announcing 9,571,428 bytes in a 3-packet WRITE-IMM made the
/// application see a 9.5 MB completion for 3 kB placed. The completion now
/// reports the bytes received for the message (FIRST through LAST), which
/// for a well-behaved peer is the RETH length.
#[test]
fn review_mrc_recv_completion_len_is_bytes_received() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    b.post_recv(1).unwrap();
    a.post_write(now, write(1, data(3 * MTU as usize - 100, 3), 0, Some(3)))
        .unwrap();
    let mut pkts = drain_tx(&mut a, now);
    assert_eq!(pkts.len(), 3);
    write_headers(&mut pkts[0]).reth.dma_len = 9_571_428;
    for p in pkts {
        b.handle_packet(now, p.into()).unwrap();
    }
    let rc = recv_completions(&events(&mut b));
    assert_eq!(rc.len(), 1);
    assert_eq!(rc[0].len, 3 * MTU - 100);
}

/// `Psn` derived `Deserialize` on its raw `u32`, so a PSN read from a
/// scenario or attribute file kept bits above 24: `Psn::value()` then
/// exceeded the 24-bit space and equality with wrapped PSNs failed (an RTS
/// `sq_psn` of 2^24 + 5 is PSN 5 on the wire, but the requester's first
/// packet carried Psn(0x1000005), which is not equal to the Psn(5) the
/// responder then expects).
#[test]
fn review_psn_deserialize_masks_to_24_bits() {
    let p: proto::Psn = serde_json::from_str("16777221").unwrap();
    assert_eq!(p, proto::Psn::new(5));
    assert_eq!(p.value(), 5);
}

/// A QP number is 24 bits on the wire (BTH DestQP). A `QpConfig` built
/// without `QpConfig::new` (struct literal, deserialised scenario) could
/// carry a wider one; every packet for it then failed `dest_qp != qpn` and
/// was dropped as `WrongQp`: a QP that can never receive. Refused now.
#[test]
fn review_qpn_wider_than_24_bits_is_refused() {
    for t in [Transport::Mrc, Transport::Rc] {
        let mut cfg = QpConfig::new(t, 0x11);
        cfg.qpn = 0x0100_0011;
        assert!(
            matches!(Qp::new(cfg), Err(ModifyError::BadAttribute { name: "qpn", .. })),
            "{t:?}"
        );
    }
}

/// Going to ERR flushes posted receives; completions held for want of a
/// receive can never be delivered after that (post_recv is refused in ERR),
/// yet MRC kept them (`held_recv_completions()` stayed non-zero in ERR,
/// RC's `held_imm()` is 0).
#[test]
fn review_mrc_error_drops_held_recv_completions() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let mut now = Instant::ZERO;
    a.post_write(now, write(1, data(10, 0), 0, Some(5))).unwrap();
    run(&mut a, &mut b, &mut now);
    assert_eq!(b.held_recv_completions(), 1);
    b.modify(now, QpTransition::Error).unwrap();
    assert_eq!(b.held_recv_completions(), 0);
}
