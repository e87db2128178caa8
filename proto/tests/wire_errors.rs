//! Every WireError variant is reachable with a crafted frame, no prefix of a
//! valid frame parses, and no input panics (bounded random inputs and
//! mutated valid frames, a few seconds in CI).

mod wire_common;

use bytes::Bytes;
use proptest::prelude::*;
use proto::wire::*;
use wire_common::*;

fn v4_write() -> Vec<u8> {
    emit(&write_packet(Opcode::WriteMiddle, 10, 32), &Encap::test_v4())
}

/// Offsets in an IPv4 frame.
const IP: usize = 14;
const UDP: usize = 34;
const BTH: usize = 42;

fn err(frame: &[u8]) -> WireError {
    let e = parse_frame(frame).expect_err("frame must be rejected");
    assert_eq!(parse_frame_bytes(Bytes::copy_from_slice(frame)).err(), Some(e));
    e
}

/// A ConnectX-4 Lx CNP (hex dump in Scapy's test/contrib/roce.uts): a
/// third-party frame our parser must accept with its real ICRC.
const CX4_CNP: &str = concat!(
    "e41d2dab2bc2",
    "7cfe90643b32",
    "0800", // Ethernet
    "45c2003c718c400040119161",
    "0a001101",
    "0a001201",                         // IPv4
    "000012b700280000",                 // UDP: sport 0, dport 4791, len 40, csum 0
    "8100ffff4000011800000000",         // BTH: CNP, BECN, QP 0x118, PSN 0
    "00000000000000000000000000000000", // CNP reserved
    "82fd002a",                         // ICRC
);

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn accepts_real_connectx4_cnp() {
    let f = hex(CX4_CNP);
    assert_eq!(f.len(), 74);
    let (p, e) = parse_frame(&f).unwrap();
    assert_eq!(p.bth.opcode, Opcode::Cnp);
    assert_eq!(p.bth.dest_qp, 0x118);
    assert!(p.bth.becn);
    assert_eq!(
        e.ip,
        IpPair::V4 {
            src: [10, 0, 17, 1],
            dst: [10, 0, 18, 1]
        }
    );
    // Our emitter produces the same transport bytes.
    let ours = emit(&p, &e);
    assert_eq!(&ours[34..70], &f[34..70]);
    assert_eq!(parse_frame(&ours).unwrap().0, p);
}

#[test]
fn every_variant_is_reachable() {
    let mut c = WireCounters::default();
    let mut seen = std::collections::HashSet::new();
    let mut check = |frame: &[u8], want: WireErrorKind| {
        let e = err(frame);
        assert_eq!(e.kind(), want, "{e}");
        c.count(&e);
        seen.insert(want);
    };
    let good = v4_write();
    assert!(parse_frame(&good).is_ok());

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
    f[IP + 8] = 3; // TTL without checksum update
    check(&f, WireErrorKind::BadIpChecksum);
    let mut f = good.clone();
    f[IP + 6] |= 0x20; // MF
    refresh(&mut f);
    check(&f, WireErrorKind::IpFragment);
    let mut f = good.clone();
    f[IP + 9] = 6;
    refresh(&mut f);
    check(&f, WireErrorKind::NotUdp);
    let mut f = good.clone();
    f[UDP + 2..UDP + 4].copy_from_slice(&4792u16.to_be_bytes());
    refresh(&mut f);
    check(&f, WireErrorKind::WrongUdpPort);
    let mut f = good.clone();
    let l = u16::from_be_bytes([f[UDP + 4], f[UDP + 5]]) - 1;
    f[UDP + 4..UDP + 6].copy_from_slice(&l.to_be_bytes());
    refresh(&mut f);
    check(&f, WireErrorKind::BadLength);
    let mut f = good.clone();
    f[BTH] = 0x04;
    refresh(&mut f);
    check(&f, WireErrorKind::UnknownOpcode);
    let mut f = good.clone();
    f[BTH + 1] |= 0x01;
    refresh(&mut f);
    check(&f, WireErrorKind::BadTransportVersion);
    // ACK with no payload claiming 3 pad bytes.
    let mut f = emit(&ack_packet(probe(false), 1), &Encap::test_v4());
    f[BTH + 1] |= 0x30;
    refresh(&mut f);
    check(&f, WireErrorKind::BadPadCount);
    // Extension byte 0 after BTH + AETH on ACKs.
    let ext = BTH + 12 + 4;
    let mut f = emit(&ack_packet(probe(false), 1), &Encap::test_v4());
    f[ext] = 0x17;
    refresh(&mut f);
    check(&f, WireErrorKind::UnknownExtType);
    let mut f = emit(&ack_packet(probe(false), 1), &Encap::test_v4());
    f[ext] = 0x24;
    refresh(&mut f);
    check(&f, WireErrorKind::BadExtVersion);
    let mut f = emit(&ack_packet(sack(64), 1), &Encap::test_v4());
    f[ext + 1] = 3;
    refresh(&mut f);
    check(&f, WireErrorKind::BadSackWidth);
    let mut f = emit(&ack_packet(nack(NackKind::Trimmed), 1), &Encap::test_v4());
    f[ext + 1] = 7;
    refresh(&mut f);
    check(&f, WireErrorKind::UnknownNackKind);
    let mut f = emit(&ack_packet(probe(true), 1), &Encap::test_v4());
    f[ext] = 0x11; // a data ext on an ACK
    refresh(&mut f);
    check(&f, WireErrorKind::ExtMismatch);
    let mut f = emit(&cnp(1), &Encap::test_v4());
    f[BTH + 8] |= 0x40; // X bit on a CNP
    refresh(&mut f);
    check(&f, WireErrorKind::ExtMismatch);
    let mut f = emit(&ack_packet(nack(NackKind::RemoteAccess), 1), &Encap::test_v4());
    f[BTH + 12] = 0x60; // PSN sequence error NAK, but the ext says remote access
    refresh(&mut f);
    check(&f, WireErrorKind::SyndromeMismatch);
    let mut f = good.clone();
    let n = f.len();
    f[n - 10] ^= 0x01; // payload bit flip
    check(&f, WireErrorKind::BadIcrc);
    // IPv6 flavours: wrong version nibble, short payload length.
    let v6 = emit(&write_packet(Opcode::WriteFirst, 1, 8), &Encap::test_v6());
    let mut f = v6.clone();
    f[IP] = 0x45;
    check(&f, WireErrorKind::BadIpVersion);
    let mut f = v6.clone();
    f[IP + 6] = 6;
    check(&f, WireErrorKind::NotUdp);

    // The MRC 1.0 parser's own kinds are covered by `mrc10_wire.rs`.
    let legacy: Vec<WireErrorKind> = WireErrorKind::ALL
        .into_iter()
        .filter(|k| !WireErrorKind::MRC10_ONLY.contains(k))
        .collect();
    assert_eq!(
        seen.len(),
        legacy.len(),
        "missing: {:?}",
        legacy.iter().filter(|k| !seen.contains(k)).collect::<Vec<_>>()
    );
    assert!(c.total() >= legacy.len() as u64);
}

#[test]
fn every_prefix_is_rejected_and_ethernet_padding_accepted() {
    let frames = [
        v4_write(),
        emit(&write_packet(Opcode::WriteOnlyImm, 1, 7), &Encap::test_v6()),
        emit(&ack_packet(sack(256), 1), &Encap::test_v4()),
        emit(&ack_packet(nack(NackKind::OutOfWindow), 1), &Encap::test_v6()),
        emit(&cnp(1), &Encap::test_v4()),
    ];
    for f in &frames {
        for n in 0..f.len() {
            assert!(parse_frame(&f[..n]).is_err(), "prefix {n} of {} parsed", f.len());
        }
        let mut padded = f.clone();
        padded.extend_from_slice(&[0; 8]);
        assert_eq!(parse_frame(&padded).unwrap(), parse_frame(f).unwrap());
    }
}

#[test]
fn one_vlan_tag_is_skipped() {
    let f = v4_write();
    let mut t = f[..12].to_vec();
    t.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    t.extend_from_slice(&f[12..]);
    assert_eq!(parse_frame(&t).unwrap(), parse_frame(&f).unwrap());
}

fn no_panic(frame: &[u8]) {
    let a = parse_frame(frame);
    let b = parse_frame_bytes(Bytes::copy_from_slice(frame));
    assert_eq!(a, b);
    let _ = parse_frame_headers(frame);
    let mut counters = WireCounters::default();
    match a {
        Err(e) => counters.count(&e),
        // Whatever parses re-emits to a frame that parses to the same packet.
        Ok((p, e)) => {
            assert!(p.validate().is_ok(), "{p:?}");
            let again = emit(&p, &e);
            assert_eq!(parse_frame(&again).unwrap(), (p, e));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..160)) {
        no_panic(&bytes);
    }

    /// Random bytes behind a plausible Ethernet/IP/UDP prefix reach the
    /// transport parser.
    #[test]
    fn random_transport_never_panics(pkt in arb_packet(false), tail in proptest::collection::vec(any::<u8>(), 0..96), fix in any::<bool>()) {
        let mut f = emit(&pkt, &Encap::test_v4());
        f.truncate(BTH);
        f.extend_from_slice(&tail);
        let udp_len = (f.len() - UDP) as u16;
        f[UDP + 4..UDP + 6].copy_from_slice(&udp_len.to_be_bytes());
        let ip_len = (f.len() - IP) as u16;
        f[IP + 2..IP + 4].copy_from_slice(&ip_len.to_be_bytes());
        if fix && f.len() >= BTH + 4 {
            refresh(&mut f);
        }
        no_panic(&f);
    }

    #[test]
    fn mutated_frames_never_panic(
        pkt in arb_packet(true),
        v6 in any::<bool>(),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
        cut in any::<Option<usize>>(),
        fix in any::<bool>(),
    ) {
        let mut pkt = pkt;
        if !v6 { pkt.ev &= 0xFFFF; }
        let encap = if v6 { Encap::test_v6() } else { Encap::test_v4() };
        let mut f = emit(&pkt, &encap);
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
        no_panic(&f);
    }
}
