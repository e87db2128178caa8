//! MRC 1.0 wire: parse(emit(x)) == x for every opcode and header
//! combination (IPv4, IPv6, both EV modes, a non-default DSCP profile), and
//! the hostile-input contract for every MRC 1.0 header: each truncated,
//! corrupted or forged frame is a typed error, counted once; no prefix of a
//! valid frame parses; nothing panics; whatever parses re-emits to itself.

mod wire_common;

use bytes::Bytes;
use proptest::prelude::*;
use proto::wire::mrc10::catalog;
use proto::wire::mrc10::choices::{TrafficClass, ENDPOINT_QPN};
use proto::wire::mrc10::{
    self, BthRepr, CcStateRepr, EethRepr, EndpointOp, ErthRepr, EvFormat, EvMode, Headers, MethRepr, Mrc10Packet,
    NackReason, NethRepr, Opcode, PethRepr, Profile, SethRepr, SkipMode, TsethRepr, WriteHeaders,
};
use proto::wire::{
    frame::pad_for, frame::ICRC_LEN, AethRepr, Encap, Layer, RethRepr, Syndrome, WireCounters, WireError, WireErrorKind,
};
use proto::Psn;
use wire_common::{arb_encap, refresh};

/// Offsets in an untagged IPv4 frame.
const IP: usize = 14;
const UDP: usize = 34;
const BTH: usize = 42;

fn emit(p: &Mrc10Packet, e: &Encap, profile: &Profile) -> Vec<u8> {
    p.validate(profile).expect("valid packet");
    let mut v = Vec::new();
    mrc10::emit_frame(p, e, profile, &mut v);
    assert_eq!(v.len(), mrc10::frame_len(p, e));
    v
}

fn v4(p: &Mrc10Packet) -> Vec<u8> {
    emit(p, &Encap::test_v4(), &Profile::DEFAULT)
}

/// A profile with every DSCP moved and 16-bit EVs.
fn other_profile() -> Profile {
    let mut p = Profile::DEFAULT;
    p.ev_mode = EvMode::SourcePort;
    p.dscp.control = 46;
    p.dscp.trimmable = 10;
    p.dscp.trimmable_retx = 12;
    p.dscp.no_trim = 14;
    p.dscp.trimmed = 7;
    p.dscp.trimmed_last_hop = 3;
    p.check().unwrap();
    p
}

fn round_trip(pkt: &Mrc10Packet, encap: &Encap, profile: &Profile) {
    let frame = emit(pkt, encap, profile);
    let (p, e) = mrc10::parse_frame(&frame, profile).expect("parse");
    assert_eq!(&p, pkt);
    assert_eq!(&e, encap);
    let h = mrc10::parse_frame_headers(&frame, profile).expect("headers");
    assert_eq!(&frame[h.payload.clone()], &pkt.payload[..]);
    assert_eq!(h.packet.headers, pkt.headers);
}

/// A packet of `opcode` whose every field comes from `r` (cut to its width).
fn packet_from(opcode: Opcode, r: [u64; 8], payload_len: usize, v6: bool, profile: &Profile) -> Mrc10Packet {
    let w = |i: usize, bits: u32| (r[i] & ((1u64 << bits) - 1)) as u32;
    let timestamp = opcode.is_write() && r[0] & 1 == 1;
    let class = if opcode.is_write() {
        [
            TrafficClass::Trimmable,
            TrafficClass::TrimmableRetx,
            TrafficClass::NoTrim,
            TrafficClass::Trimmed,
            TrafficClass::TrimmedLastHop,
            TrafficClass::Other(1),
        ][(r[0] >> 1) as usize % 6]
    } else {
        TrafficClass::Control
    };
    let trimmed = matches!(class, TrafficClass::Trimmed | TrafficClass::TrimmedLastHop);
    let ev = if v6 && profile.ev_mode == EvMode::SourcePortAndFlowLabel {
        w(1, 32)
    } else {
        w(1, 16)
    };
    let bth = BthRepr {
        opcode,
        solicited: r[0] & 0x10 != 0,
        mig_req: r[0] & 0x20 != 0,
        pad: if !opcode.is_write() {
            0
        } else if trimmed {
            w(2, 2) as u8
        } else {
            pad_for(payload_len)
        },
        pkey: w(2, 16) as u16,
        fecn: r[0] & 0x40 != 0,
        becn: r[0] & 0x80 != 0,
        dest_qp: if opcode.is_endpoint() {
            ENDPOINT_QPN
        } else {
            w(3, 24) | 0x10
        },
        ack_req: r[0] & 0x100 != 0,
        retransmit: r[0] & 0x200 != 0,
        timestamp,
        psn: Psn::new(w(3, 24)),
    };
    let ctx = (w(4, 16) as u16, (r[4] >> 16) as u16);
    let headers = match opcode {
        op if op.is_write() => Headers::Write(WriteHeaders {
            meth: MethRepr {
                rq_msn: w(4, 16) as u16,
                msn: (r[4] >> 32) as u16,
            },
            tseth: timestamp.then_some(TsethRepr {
                tx_ts: w(5, 16) as u16,
                resolution: r[5] & (1 << 20) != 0,
                format: (r[5] >> 24) as u8 & 0x0F,
            }),
            reth: RethRepr {
                va: r[6],
                rkey: w(7, 32),
                dma_len: (r[7] >> 32) as u32,
            },
            imm: op.has_imm().then_some(w(5, 32)),
        }),
        Opcode::Ack => Headers::Ack(AethRepr {
            syndrome: Syndrome::from_u8(w(5, 7) as u8),
            msn: w(6, 24),
        }),
        Opcode::Sack => Headers::Sack {
            seth: SethRepr {
                skip_mode: [SkipMode::None, SkipMode::SkipOnce, SkipMode::AlwaysSkip][r[5] as usize % 3],
                probe_response: r[0] & 0x400 != 0,
                ack_psn_offset: w(6, 16) as i16,
                ev: w(7, 32),
                sender_context: ctx.0,
                receiver_context: ctx.1,
                cum_ack_psn: Psn::new((r[6] >> 16) as u32 & 0xFF_FFFF),
                cc_type: (r[5] >> 8) as u8 & 0x0F,
                cc_flags: (r[5] >> 12) as u8 & 0x0F,
                mpr: (r[5] >> 16) as u8,
                sack_offset: (r[6] >> 40) as i16,
                bitmap: r[2],
            },
            cc_state: CcStateRepr {
                echo_ts: (r[7] >> 32) as u16,
                ooo_count: (r[7] >> 48) as u16 & 0x7FFF,
                restore: r[0] & 0x800 != 0,
                cwnd_penalty: (r[5] >> 24) as u8 & 0x7F,
                rcvd_bytes: (r[5] >> 32) as u32 & 0xFF_FFFF,
            },
        },
        Opcode::Nack => Headers::Nack(NethRepr {
            reason: NackReason::ALL[r[5] as usize % NackReason::ALL.len()],
            vendor_info: (r[5] >> 8) as u16,
            ev: w(7, 32),
            sender_context: ctx.0,
            receiver_context: ctx.1,
            nack_psn: Psn::new(w(6, 24)),
            cc_type: (r[5] >> 24) as u8 & 0x0F,
            cc_flags: (r[5] >> 28) as u8 & 0x0F,
            timestamp: (r[6] >> 32) as u16,
        }),
        Opcode::ReliabilityProbe => Headers::Probe(PethRepr {
            probe_id: w(5, 16) as u16,
            sender_context: ctx.0,
            receiver_context: ctx.1,
            timestamp: w(6, 16) as u16,
        }),
        _ => {
            let op = EndpointOp::ALL[r[5] as usize % 2];
            Headers::Endpoint {
                erth: ErthRepr {
                    op,
                    request_id: (r[5] >> 8) as u16,
                    port_status_mask: w(6, 32),
                    timestamp: (r[6] >> 32) as u16,
                },
                eeth: mrc10::choices::eeth_follows(op).then(|| {
                    let mut ev = [0u8; 32];
                    for (i, b) in ev.iter_mut().enumerate() {
                        *b = (r[i / 8] >> (8 * (i % 8))) as u8;
                    }
                    EethRepr {
                        ev_format: EvFormat::ALL[(r[7] % 4) as usize],
                        port: (r[7] >> 8) as u8,
                        service_time: (r[7] >> 16) as u16,
                        ev,
                    }
                }),
            }
        }
    };
    Mrc10Packet {
        ev,
        ecn: w(0, 2) as u8,
        class,
        bth,
        headers,
        payload: if opcode.is_write() {
            Bytes::from((0..payload_len).map(|i| (i as u8) ^ 0xA5).collect::<Vec<u8>>())
        } else {
            Bytes::new()
        },
    }
}

fn arb_packet(v6: bool, profile: Profile) -> impl Strategy<Value = Mrc10Packet> {
    (0..Opcode::ALL.len(), any::<[u64; 8]>(), 0usize..80)
        .prop_map(move |(i, r, len)| packet_from(Opcode::ALL[i], r, len, v6, &profile))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn round_trips_ipv4(pkt in arb_packet(false, Profile::DEFAULT), encap in arb_encap(false)) {
        round_trip(&pkt, &encap, &Profile::DEFAULT);
    }

    #[test]
    fn round_trips_ipv6(pkt in arb_packet(true, Profile::DEFAULT), encap in arb_encap(true)) {
        round_trip(&pkt, &encap, &Profile::DEFAULT);
    }

    #[test]
    fn round_trips_other_profile(pkt in arb_packet(true, other_profile()), encap in arb_encap(true)) {
        round_trip(&pkt, &encap, &other_profile());
    }

    /// The trimming switch's output parses as trimmed with the same headers.
    #[test]
    fn trimmed_frames_parse(i in 0..6usize, r in any::<[u64; 8]>(), len in 0usize..80, keep in 0usize..8, last_hop in any::<bool>()) {
        let mut pkt = packet_from(Opcode::WRITES[i], r, len, true, &Profile::DEFAULT);
        pkt.class = TrafficClass::Trimmable;
        pkt.bth.pad = pad_for(len);
        let frame = emit(&pkt, &Encap::test_v6(), &Profile::DEFAULT);
        let t = mrc10::trim_frame(&frame, keep, last_hop, &Profile::DEFAULT).unwrap();
        let (p, _) = mrc10::parse_frame(&t, &Profile::DEFAULT).unwrap();
        prop_assert!(p.trimmed());
        prop_assert_eq!(p.class == TrafficClass::TrimmedLastHop, last_hop);
        prop_assert_eq!(p.bth, pkt.bth);
        prop_assert_eq!(p.headers, pkt.headers);
        prop_assert_eq!(&p.payload[..], &pkt.payload[..keep.min(len)]);
    }
}

#[test]
fn every_catalog_packet_round_trips() {
    for encap in [Encap::test_v4(), Encap::test_v6()] {
        for mut p in catalog::every_kind() {
            if matches!(encap.ip, proto::wire::IpPair::V4 { .. }) {
                p.ev &= 0xFFFF;
            }
            round_trip(&p, &encap, &Profile::DEFAULT);
        }
    }
}

/// `emit_frame` appends: what the buffer held stays, and the frame is the
/// one emitted into an empty buffer, its pad zero even where the buffer's
/// spare memory held other bytes (the payload is appended, not written
/// over a zero-filled frame).
#[test]
fn emit_frame_appends_and_zeroes_the_pad_in_a_used_buffer() {
    let mut padded = 0;
    for encap in [Encap::test_v4(), Encap::test_v6()] {
        for mut p in catalog::every_kind() {
            if matches!(encap.ip, proto::wire::IpPair::V4 { .. }) {
                p.ev &= 0xFFFF;
            }
            let want = emit(&p, &encap, &Profile::DEFAULT);
            let mut used = vec![0xCD; 9000];
            used.truncate(7);
            mrc10::emit_frame(&p, &encap, &Profile::DEFAULT, &mut used);
            assert_eq!(&used[..7], &[0xCD; 7], "{:?}", p.bth.opcode);
            assert_eq!(&used[7..], &want[..], "{:?}", p.bth.opcode);
            let pad_at = used.len() - ICRC_LEN - p.wire_pad();
            assert!(
                used[pad_at..used.len() - ICRC_LEN].iter().all(|&b| b == 0),
                "{:?}: the pad is zero",
                p.bth.opcode
            );
            assert_eq!(
                &used[pad_at - p.payload.len()..pad_at],
                &p.payload[..],
                "{:?}: the payload before the pad",
                p.bth.opcode
            );
            padded += usize::from(p.wire_pad() > 0);
        }
    }
    assert!(
        padded > 0,
        "no catalog packet has a pad: the test shows nothing about it"
    );
}

/// Where each header sits in a frame: the fixed offsets a hardware parser
/// or a dissector relies on.
#[test]
fn header_offsets() {
    let f = v4(&catalog::write(Opcode::WriteOnlyImm, 5, 8, true));
    assert_eq!(f[BTH], 0xCB);
    assert_eq!(f[BTH + 8], 0x80 | 0x10, "AckReq + TS");
    assert_eq!(&f[BTH + 12..BTH + 16], &[0x0A, 0x0B, 0x0C, 0x0D], "METH");
    assert_eq!(&f[BTH + 16..BTH + 18], &[0x75, 0x31], "TSETH");
    assert_eq!(
        &f[BTH + 20..BTH + 28],
        &0x0000_7F00_1234_5000u64.to_be_bytes(),
        "RETH VA"
    );
    assert_eq!(&f[BTH + 36..BTH + 40], &[0xFE, 0xED, 0xF0, 0x0D], "ImmDt");
    let f = v4(&catalog::sack(0x123456, false));
    assert_eq!(
        &f[BTH + 12 + 13..BTH + 12 + 16],
        &[0x12, 0x34, 0x56],
        "SETH cumulative PSN"
    );
    assert_eq!(&f[BTH + 40..BTH + 42], &[0x75, 0x31], "CC_STATE echo");
    assert_eq!(f.len(), BTH + 12 + 28 + 8 + 4);
    let f = v4(&catalog::endpoint(true, EndpointOp::EvProbe));
    assert_eq!(&f[BTH + 5..BTH + 8], &[0, 0, 2], "endpoint QP");
    assert_eq!(f.len(), BTH + 12 + 16 + 36 + 4);
    // The UDP source port carries EV bits 15-0; the IPv6 flow label 31-16.
    let p = catalog::ack(1);
    let f6 = emit(&p, &Encap::test_v6(), &Profile::DEFAULT);
    assert_eq!(&f6[14 + 40..14 + 42], &(p.ev as u16).to_be_bytes());
    let fl = u32::from_be_bytes([f6[14], f6[15], f6[16], f6[17]]) & 0xF_FFFF;
    assert_eq!(fl, p.ev >> 16);
    // DSCP: the profile's number for the class.
    assert_eq!(f6[14] & 0x0F, 48 >> 2, "CONTROL = 48 by default");
}

/// A valid IPv4 frame around `transport` (BTH onwards, without ICRC):
/// lengths, IP checksum and ICRC fixed, so the transport parser judges it.
fn seal(transport: &[u8]) -> Vec<u8> {
    let mut f = v4(&catalog::ack(1))[..BTH].to_vec();
    f.extend_from_slice(transport);
    f.extend_from_slice(&[0; 4]);
    let udp_len = (f.len() - UDP) as u16;
    f[UDP + 4..UDP + 6].copy_from_slice(&udp_len.to_be_bytes());
    let ip_len = (f.len() - IP) as u16;
    f[IP + 2..IP + 4].copy_from_slice(&ip_len.to_be_bytes());
    refresh(&mut f);
    f
}

/// The transport bytes (BTH to the ICRC) of a packet.
fn transport(p: &Mrc10Packet) -> Vec<u8> {
    let f = v4(p);
    f[BTH..f.len() - 4].to_vec()
}

fn err(frame: &[u8]) -> WireError {
    let e = mrc10::parse_frame(frame, &Profile::DEFAULT).expect_err("frame must be rejected");
    // Counted once: one counter, by one.
    let mut c = WireCounters::default();
    c.count(&e);
    assert_eq!((c.total(), c.get(e.kind())), (1, 1));
    e
}

#[test]
fn every_header_truncated_is_typed() {
    let cases: [(Mrc10Packet, &[(usize, Layer)]); 5] = [
        (
            catalog::write(Opcode::WriteOnlyImm, 1, 0, true),
            &[
                (11, Layer::Bth),
                (12 + 3, Layer::Meth),
                (16 + 3, Layer::Tseth),
                (20 + 15, Layer::Reth),
                (36 + 3, Layer::ImmDt),
            ],
        ),
        (
            catalog::sack(1, false),
            &[(12 + 27, Layer::Seth), (40 + 7, Layer::CcState)],
        ),
        (catalog::nack(1, NackReason::Trimmed), &[(12 + 19, Layer::Neth)]),
        (catalog::probe(1), &[(12 + 15, Layer::Peth)]),
        (
            catalog::endpoint(false, EndpointOp::EvProbe),
            &[(12 + 15, Layer::Erth), (28 + 35, Layer::Eeth)],
        ),
    ];
    for (p, cuts) in cases {
        let t = transport(&p);
        for &(n, layer) in cuts {
            let e = err(&seal(&t[..n]));
            // A transport shorter than a BTH is cut before the ICRC too.
            assert_eq!(e, WireError::Truncated { layer }, "{:?} cut at {n}", p.bth.opcode);
        }
    }
    let ack = transport(&catalog::ack(1));
    assert_eq!(err(&seal(&ack[..15])), WireError::Truncated { layer: Layer::Aeth });
}

#[test]
fn every_error_kind_is_reachable() {
    let mut seen = std::collections::HashSet::new();
    let mut check = |frame: &[u8], want: WireErrorKind| {
        let e = err(frame);
        assert_eq!(e.kind(), want, "{e}");
        seen.insert(want);
    };
    let good = v4(&catalog::write(Opcode::WriteMiddle, 10, 32, false));
    assert!(mrc10::parse_frame(&good, &Profile::DEFAULT).is_ok());
    // Outer headers: the shared code, through the MRC 1.0 entry point.
    check(&good[..10], WireErrorKind::Truncated);
    let mut f = good.clone();
    f[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    check(&f, WireErrorKind::BadEtherType);
    let mut f = good.clone();
    f[IP] = 0x55;
    check(&f, WireErrorKind::BadIpVersion);
    let mut f = good.clone();
    f[IP] = 0x44;
    check(&f, WireErrorKind::BadIpHeaderLen);
    let mut f = good.clone();
    f[IP + 8] = 3;
    check(&f, WireErrorKind::BadIpChecksum);
    let mut f = good.clone();
    f[IP + 6] |= 0x20;
    refresh(&mut f);
    check(&f, WireErrorKind::IpFragment);
    let mut f = good.clone();
    f[IP + 9] = 6;
    refresh(&mut f);
    check(&f, WireErrorKind::NotUdp);
    let mut f = good.clone();
    f[UDP + 2..UDP + 4].copy_from_slice(&53u16.to_be_bytes());
    refresh(&mut f);
    check(&f, WireErrorKind::WrongUdpPort);
    let mut f = good.clone();
    f[UDP + 4..UDP + 6].copy_from_slice(&4000u16.to_be_bytes());
    check(&f, WireErrorKind::BadLength);
    let mut f = good.clone();
    let n = f.len();
    f[n - 10] ^= 1;
    check(&f, WireErrorKind::BadIcrc);
    // BTH.
    let t = transport(&catalog::write(Opcode::WriteMiddle, 10, 32, false));
    for forged in [0x0Au8, 0xC5, 0xCC, 0xD0, 0xDF] {
        let mut x = t.clone();
        x[0] = forged;
        check(&seal(&x), WireErrorKind::UnknownOpcode);
    }
    let mut x = t.clone();
    x[1] |= 0x01;
    check(&seal(&x), WireErrorKind::BadTransportVersion);
    let mut x = t[..12 + 4 + 16 + 1].to_vec(); // one payload byte, PadCnt 3
    x[1] |= 0x30;
    check(&seal(&x), WireErrorKind::BadPadCount);
    let mut x = t.clone();
    x[8] |= 0x10; // TS without room for the RETH after the TSETH it implies
    x.truncate(12 + 4 + 4 + 15);
    check(&seal(&x), WireErrorKind::Truncated);
    // Endpoint QP, both ways.
    let mut x = t.clone();
    x[5..8].copy_from_slice(&[0, 0, 2]);
    check(&seal(&x), WireErrorKind::EndpointQpMismatch);
    let mut x = transport(&catalog::endpoint(false, EndpointOp::PortStatusUpdate));
    x[7] = 3;
    check(&seal(&x), WireErrorKind::EndpointQpMismatch);
    // Forged header fields.
    let mut x = transport(&catalog::sack(1, false));
    x[12] |= 0xC0;
    check(&seal(&x), WireErrorKind::BadSkipMode);
    let mut x = transport(&catalog::nack(1, NackReason::Trimmed));
    x[12] = 0x03;
    check(&seal(&x), WireErrorKind::UnknownNackReason);
    let mut x = transport(&catalog::endpoint(true, EndpointOp::EvProbe));
    x[12] = 7;
    check(&seal(&x), WireErrorKind::UnknownEndpointOp);
    let mut x = transport(&catalog::endpoint(true, EndpointOp::EvProbe));
    x[28] = 9;
    check(&seal(&x), WireErrorKind::UnknownEvFormat);
    let mut x = transport(&catalog::sack(1, false));
    x[8] |= 0x10;
    check(&seal(&x), WireErrorKind::UnexpectedTimestamp);
    let mut x = transport(&catalog::probe(1));
    x.extend_from_slice(&[0; 4]);
    check(&seal(&x), WireErrorKind::UnexpectedPayload);
    let mut x = transport(&catalog::probe(1));
    x[1] |= 0x10; // pad on a packet without payload
    x.extend_from_slice(&[0; 4]);
    check(&seal(&x), WireErrorKind::BadPadCount);

    let reachable: Vec<WireErrorKind> = WireErrorKind::ALL
        .into_iter()
        .filter(|k| !WireErrorKind::LEGACY_ONLY.contains(k))
        .collect();
    assert_eq!(
        seen.len(),
        reachable.len(),
        "missing: {:?}",
        reachable.iter().filter(|k| !seen.contains(k)).collect::<Vec<_>>()
    );
}

#[test]
fn every_prefix_is_rejected_and_ethernet_padding_accepted() {
    for p in catalog::every_kind() {
        for encap in [Encap::test_v4(), Encap::test_v6()] {
            let mut p = p.clone();
            p.ev &= 0xFFFF;
            let f = emit(&p, &encap, &Profile::DEFAULT);
            for n in 0..f.len() {
                assert!(mrc10::parse_frame(&f[..n], &Profile::DEFAULT).is_err());
            }
            let mut padded = f.clone();
            padded.extend_from_slice(&[0; 8]);
            assert_eq!(
                mrc10::parse_frame(&padded, &Profile::DEFAULT).unwrap(),
                mrc10::parse_frame(&f, &Profile::DEFAULT).unwrap()
            );
        }
    }
}

/// Every single-bit corruption of every packet kind in a byte the ICRC or
/// the IP checksum covers is rejected; the bytes neither covers (MAC
/// addresses, the UDP checksum RoCEv2 leaves 0, BTH byte 4) still parse
/// consistently. Resealed, every corruption is a typed error or a packet
/// that re-emits to the same frame.
#[test]
fn every_bit_flip_is_rejected_or_consistent() {
    let unprotected = |at: usize| at < 12 || (UDP + 6..UDP + 8).contains(&at) || at == BTH + 4;
    for p in catalog::every_kind() {
        let mut p = p;
        p.ev &= 0xFFFF;
        let f = v4(&p);
        for bit in 0..f.len() * 8 {
            let mut x = f.clone();
            x[bit / 8] ^= 1 << (bit % 8);
            if unprotected(bit / 8) {
                consistent(&x);
            } else {
                let _ = err(&x);
            }
            refresh(&mut x);
            consistent(&x);
        }
    }
}

/// The two profiles never take each other's frames.
#[test]
fn legacy_and_mrc10_frames_are_told_apart() {
    let f = v4(&catalog::write(Opcode::WriteOnly, 1, 8, false));
    assert_eq!(proto::wire::parse_frame(&f).err(), Some(WireError::UnknownOpcode(0xCA)));
    let legacy = wire_common::emit(
        &wire_common::write_packet(proto::wire::Opcode::WriteOnly, 1, 8),
        &Encap::test_v4(),
    );
    assert_eq!(
        mrc10::parse_frame(&legacy, &Profile::DEFAULT).err(),
        Some(WireError::UnknownOpcode(0x0A))
    );
}

/// Anything: no panic; an error is counted once; a packet re-emits to a
/// frame that parses to itself.
fn consistent(frame: &[u8]) {
    match mrc10::parse_frame(frame, &Profile::DEFAULT) {
        Err(e) => {
            let mut c = WireCounters::default();
            c.count(&e);
            assert_eq!(c.total(), 1);
        }
        Ok((p, e)) => {
            p.validate(&Profile::DEFAULT).unwrap_or_else(|x| panic!("{x}: {p:?}"));
            let again = emit(&p, &e, &Profile::DEFAULT);
            assert_eq!(mrc10::parse_frame(&again, &Profile::DEFAULT).unwrap(), (p, e));
        }
    }
    let _ = mrc10::parse_frame_headers(frame, &Profile::DEFAULT);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..160)) {
        consistent(&bytes);
    }

    /// Random transport bytes behind valid outer headers, resealed, reach
    /// every header parser.
    #[test]
    fn random_transport_is_typed_or_consistent(op in 0..Opcode::ALL.len(), qp2 in any::<bool>(), tail in proptest::collection::vec(any::<u8>(), 0..120)) {
        let mut t = vec![Opcode::ALL[op].as_u8(), 0, 0xFF, 0xFF, 0, 0, 0, if qp2 { 2 } else { 9 }, 0, 0, 0, 1];
        t.extend_from_slice(&tail);
        consistent(&seal(&t));
    }

    #[test]
    fn mutated_frames_are_typed_or_consistent(
        i in 0..40usize,
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
        cut in any::<Option<usize>>(),
        fix in any::<bool>(),
    ) {
        let all = catalog::every_kind();
        let mut p = all[i % all.len()].clone();
        p.ev &= 0xFFFF;
        let mut f = v4(&p);
        for (at, v) in edits {
            let n = f.len();
            f[at % n] = v;
        }
        if fix {
            refresh(&mut f);
        }
        if let Some(c) = cut {
            let n = f.len();
            f.truncate(c % (n + 1));
        }
        consistent(&f);
    }
}

/// `validate` refuses every packet that would not parse back to itself.
#[test]
fn validate_refuses_what_would_not_round_trip() {
    use proto::wire::ReprError;
    let d = Profile::DEFAULT;
    let mut p = catalog::write(Opcode::WriteOnly, 1, 4, false);
    p.bth.opcode = Opcode::WriteOnlyImm; // no ImmDt
    assert_eq!(p.validate(&d), Err(ReprError::HeadersDontFitOpcode { opcode: 0xCB }));
    let mut p = catalog::write(Opcode::WriteOnly, 1, 4, false);
    p.bth.timestamp = true; // no TSETH
    assert_eq!(p.validate(&d), Err(ReprError::HeadersDontFitOpcode { opcode: 0xCA }));
    let mut p = catalog::ack(1);
    p.bth.dest_qp = ENDPOINT_QPN;
    assert!(matches!(p.validate(&d), Err(ReprError::WrongQp { .. })));
    let mut p = catalog::endpoint(false, EndpointOp::EvProbe);
    p.bth.dest_qp = 9;
    assert!(matches!(p.validate(&d), Err(ReprError::WrongQp { .. })));
    let mut p = catalog::endpoint(false, EndpointOp::EvProbe);
    if let Headers::Endpoint { eeth, .. } = &mut p.headers {
        *eeth = None; // an EV probe names its EV
    }
    assert!(matches!(p.validate(&d), Err(ReprError::HeadersDontFitOpcode { .. })));
    let mut p = catalog::probe(1);
    p.payload = Bytes::from_static(&[1, 2, 3, 4]);
    assert_eq!(p.validate(&d), Err(ReprError::PayloadNotAllowed { opcode: 0xDE }));
    let mut p = catalog::sack(1, false);
    if let Headers::Sack { cc_state, .. } = &mut p.headers {
        cc_state.cwnd_penalty = 0x80;
    }
    assert!(matches!(p.validate(&d), Err(ReprError::FieldTooWide { .. })));
    let mut p = catalog::ack(1);
    p.class = TrafficClass::Other(48); // CONTROL's number
    assert!(matches!(p.validate(&d), Err(ReprError::FieldTooWide { .. })));
    let mut p = catalog::ack(1);
    p.ev = 0x1_0000;
    assert!(p.validate(&d).is_ok());
    assert!(matches!(
        p.validate(&other_profile()),
        Err(ReprError::FieldTooWide { .. })
    ));
}
