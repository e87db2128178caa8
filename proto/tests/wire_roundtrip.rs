//! parse(emit(x)) == x for every opcode / extension combination, IPv4 and
//! IPv6, plus the fixed layouts a hardware parser relies on.

mod wire_common;

use bytes::Bytes;
use proptest::prelude::*;
use proto::wire::*;
use proto::Psn;
use wire_common::*;

fn round_trip(pkt: &RocePacket, encap: &Encap) {
    pkt.validate().expect("generator builds valid packets");
    let frame = emit(pkt, encap);
    let (p, e) = parse_frame(&frame).expect("parse");
    assert_eq!(&p, pkt);
    assert_eq!(&e, encap);
    let (p2, _) = parse_frame_bytes(Bytes::from(frame.clone())).expect("parse bytes");
    assert_eq!(&p2, pkt);
    let h = parse_frame_headers(&frame).expect("headers");
    assert_eq!(&frame[h.payload.clone()], &pkt.payload[..]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn round_trips_ipv4(pkt in arb_packet(false), encap in arb_encap(false)) {
        round_trip(&pkt, &encap);
    }

    #[test]
    fn round_trips_ipv6(pkt in arb_packet(true), encap in arb_encap(true)) {
        round_trip(&pkt, &encap);
    }

    /// The trimming switch's output parses as trimmed with the same headers.
    #[test]
    fn trimmed_frames_parse(pkt in arb_packet(true), keep in 0usize..8) {
        let mut pkt = pkt;
        pkt.trimmed = false;
        let frame = emit(&pkt, &Encap::test_v6());
        let t = trim_frame(&frame, keep).unwrap();
        let (p, _) = parse_frame(&t).unwrap();
        prop_assert!(p.trimmed);
        prop_assert_eq!(p.bth, pkt.bth);
        prop_assert_eq!(p.ext, pkt.ext);
        prop_assert_eq!(&p.payload[..], &pkt.payload[..keep.min(pkt.payload.len())]);
    }
}

#[test]
fn every_named_combination_round_trips() {
    for encap in [Encap::test_v4(), Encap::test_v6()] {
        for op in OPCODES.iter().copied().filter(|o| o.is_write()) {
            for len in [0, 1, 2, 3, 4, 1024, 4096] {
                round_trip(&write_packet(op, 5, len), &encap);
            }
        }
        for bits in [64, 128, 256] {
            round_trip(&ack_packet(sack(bits), 6), &encap);
        }
        for kind in [NackKind::Trimmed, NackKind::OutOfWindow, NackKind::RemoteAccess] {
            round_trip(&ack_packet(nack(kind), 7), &encap);
        }
        round_trip(&ack_packet(probe(false), 8), &encap);
        round_trip(&ack_packet(probe(true), 8), &encap);
        round_trip(&cnp(0), &encap);
    }
}

#[test]
fn psn_wrap_round_trips() {
    for encap in [Encap::test_v4(), Encap::test_v6()] {
        let p = write_packet(Opcode::WriteMiddle, 0xFF_FFFF, 64);
        round_trip(&p, &encap);
        let f = emit(&p, &encap);
        let (q, _) = parse_frame(&f).unwrap();
        assert_eq!(q.bth.psn, Psn::new(0xFF_FFFF));
        assert_eq!(q.bth.psn.next(), Psn::new(0));
    }
}

#[test]
fn entropy_and_ecn_mapping() {
    let mut p = write_packet(Opcode::WriteOnly, 1, 16);
    p.ev = 0xABCD_1234;
    p.ecn_ce = true;
    let f = emit(&p, &Encap::test_v6());
    // Flow label = EV[31:16], traffic class = DSCP 26 << 2 | CE.
    let word0 = u32::from_be_bytes([f[14], f[15], f[16], f[17]]);
    assert_eq!(word0 >> 28, 6);
    assert_eq!((word0 >> 20) & 0xFF, (26 << 2) | 3);
    assert_eq!(word0 & 0xF_FFFF, 0xABCD);
    assert_eq!(&f[54..56], &[0x12, 0x34]); // UDP source port = EV[15:0]
    assert_eq!(&f[56..58], &[0x12, 0xB7]); // 4791
                                           // IPv4 keeps only the low 16 bits; not-CE is ECT(0).
    p.ecn_ce = false;
    let f = emit(&p, &Encap::test_v4());
    assert_eq!(f[15], (26 << 2) | 0b10);
    assert_eq!(&f[34..36], &[0x12, 0x34]);
    assert_eq!(parse_frame(&f).unwrap().0.ev, 0x1234);
}

#[test]
fn x_bit_and_header_order() {
    let p = write_packet(Opcode::WriteOnlyImm, 0x01_0203, 4);
    let f = emit(&p, &Encap::test_v4());
    let bth = &f[42..54];
    assert_eq!(bth[0], 0x0B);
    assert_eq!(bth[8] & 0x40, 0x40, "X bit");
    // RETH, then ImmDt, then the data ext (16 bytes, no placement), payload.
    assert_eq!(&f[54 + 16..54 + 20], &0xfeed_f00du32.to_be_bytes());
    assert_eq!(f[74], 0x11);
    assert_eq!(&f[90..94], &[0, 1, 2, 3]);
    assert_eq!(f.len(), 94 + 4);
    // CNP: BTH + 16 zero bytes + ICRC; DSCP 48.
    let f = emit(&cnp(0), &Encap::test_v4());
    assert_eq!(f.len(), 14 + 20 + 8 + 12 + 16 + 4);
    assert_eq!(f[15] >> 2, 48);
}

/// Payload pad: PadCnt zero bytes before the ICRC, excluded from payload.
#[test]
fn pad_bytes() {
    let p = write_packet(Opcode::WriteLast, 1, 5);
    assert_eq!(p.bth.pad, 3);
    let f = emit(&p, &Encap::test_v4());
    assert_eq!(&f[f.len() - 7..f.len() - 4], &[0, 0, 0]);
    assert_eq!((f.len() - 14 - 20 - 8) % 4, 0);
}

#[test]
fn validate_rejects_what_would_not_round_trip() {
    let good = write_packet(Opcode::WriteMiddle, 1, 8);
    assert_eq!(good.validate(), Ok(()));
    let mut p = good.clone();
    p.reth = Some(RethRepr {
        va: 0,
        rkey: 0,
        dma_len: 0,
    });
    assert_eq!(p.validate(), Err(ReprError::HeadersDontFitOpcode { opcode: 0x07 }));
    let mut p = good.clone();
    p.bth.mrc_ext = false;
    assert_eq!(p.validate(), Err(ReprError::ExtWithoutXBit));
    let mut p = good.clone();
    p.ext = None;
    assert_eq!(p.validate(), Err(ReprError::XBitWithoutExt));
    let mut p = good.clone();
    p.bth.dest_qp = 1 << 24;
    assert!(matches!(p.validate(), Err(ReprError::FieldTooWide { .. })));
    let mut p = ack_packet(nack(NackKind::RemoteAccess), 1);
    p.aeth = Some(AethRepr {
        syndrome: Syndrome::Nak { code: 0 },
        msn: 0,
    });
    assert_eq!(p.validate(), Err(ReprError::SyndromeMismatch { syndrome: 0x60 }));
    let mut s = ack_packet(sack(64), 1);
    if let Some(MrcExtRepr::Sack(x)) = &mut s.ext {
        x.bitmap.words[1] = 1;
    }
    assert_eq!(s.validate(), Err(ReprError::SackBitsBeyondWidth));
    let p = ack_packet(data_ext(Opcode::WriteFirst), 1);
    assert_eq!(
        p.validate(),
        Err(ReprError::ExtDoesntFit {
            opcode: 0x11,
            ext_type: 1
        })
    );
}
