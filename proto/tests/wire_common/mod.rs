//! Shared generators and builders for the wire tests.
#![allow(dead_code)]

use bytes::Bytes;
use proptest::prelude::*;
use proto::wire::*;
use proto::Psn;

pub const OPCODES: [Opcode; 8] = Opcode::ALL;

pub fn bth(opcode: Opcode, psn: u32, mrc: bool) -> BthRepr {
    BthRepr {
        opcode,
        solicited: false,
        mig_req: true,
        pad: 0,
        pkey: 0xFFFF,
        fecn: false,
        becn: opcode == Opcode::Cnp,
        mrc_ext: mrc,
        dest_qp: 0x00_1234,
        ack_req: opcode.is_last(),
        psn: Psn::new(psn),
    }
}

pub fn data_ext(opcode: Opcode) -> MrcExtRepr {
    MrcExtRepr::Data(DataExtRepr {
        ev_index: 3,
        retransmit: false,
        ev_seq: 17,
        tx_ts: 123_456,
        msg_offset: 4096,
        placement: (!opcode.has_reth()).then_some(PlacementRepr {
            va: 0x7f00_0000_1000,
            rkey: 0xabcd,
        }),
    })
}

/// A valid MRC WRITE of `payload_len` bytes.
pub fn write_packet(opcode: Opcode, psn: u32, payload_len: usize) -> RocePacket {
    let mut b = bth(opcode, psn, true);
    b.pad = pad_for(payload_len);
    RocePacket {
        ev: 0xC123,
        ecn_ce: false,
        trimmed: false,
        bth: b,
        reth: opcode.has_reth().then_some(RethRepr {
            va: 0x7f00_0000_0000,
            rkey: 0xabcd,
            dma_len: 1 << 20,
        }),
        imm: opcode.has_imm().then_some(0xfeed_f00d),
        aeth: None,
        ext: Some(data_ext(opcode)),
        payload: Bytes::from((0..payload_len).map(|i| i as u8).collect::<Vec<u8>>()),
    }
}

pub fn ack_packet(ext: MrcExtRepr, psn: u32) -> RocePacket {
    let syndrome = match &ext {
        MrcExtRepr::Nack(n) => Syndrome::for_nack(n.kind),
        _ => Syndrome::Ack { credits: 0x1F },
    };
    RocePacket {
        ev: 0xD00D,
        ecn_ce: false,
        trimmed: false,
        bth: bth(Opcode::Ack, psn, true),
        reth: None,
        imm: None,
        aeth: Some(AethRepr { syndrome, msn: 7 }),
        ext: Some(ext),
        payload: Bytes::new(),
    }
}

pub fn sack(bits: u16) -> MrcExtRepr {
    let mut bitmap = SackBitmap::new(bits);
    bitmap.set(0);
    bitmap.set(usize::from(bits) - 1);
    MrcExtRepr::Sack(SackExtRepr {
        ev_index: 5,
        ecn_ce_count: 1,
        echo_ts: 99,
        service_ns: 250,
        base: Psn::new(1000),
        bitmap,
    })
}

pub fn nack(kind: NackKind) -> MrcExtRepr {
    MrcExtRepr::Nack(NackExtRepr {
        kind,
        ev_index: 9,
        cum_psn: Psn::new(999),
        echo_ts: 5,
    })
}

pub fn probe(response: bool) -> MrcExtRepr {
    MrcExtRepr::Probe(ProbeExtRepr {
        response,
        ev_index: 11,
        probe_id: 42,
        tx_ts: 77,
        service_ns: u32::from(response) * 300,
    })
}

pub fn cnp(psn: u32) -> RocePacket {
    RocePacket {
        ev: 0xC0DE,
        ecn_ce: false,
        trimmed: false,
        bth: bth(Opcode::Cnp, psn, false),
        reth: None,
        imm: None,
        aeth: None,
        ext: None,
        payload: Bytes::new(),
    }
}

pub fn emit(pkt: &RocePacket, encap: &Encap) -> Vec<u8> {
    let mut v = Vec::new();
    emit_frame(pkt, encap, &mut v);
    assert_eq!(v.len(), frame_len(pkt, encap));
    v
}

/// Recompute IP checksum (IPv4) and ICRC after a test mutated a frame, so
/// that the mutation reaches the check it targets.
pub fn refresh(frame: &mut [u8]) {
    let is_v6 = frame.get(12..14) == Some(&[0x86, 0xDD][..]);
    if !is_v6 {
        let mut ip = Ipv4Packet::new_unchecked(&mut frame[14..]);
        ip.fill_checksum();
    }
    let n = frame.len();
    let hl = if is_v6 { 40 } else { usize::from(frame[14] & 0x0F) * 4 };
    let icrc = icrc::compute_icrc(&frame[14..n - 4], hl, is_v6);
    frame[n - 4..].copy_from_slice(&icrc.to_le_bytes());
}

fn arb_sack() -> impl Strategy<Value = MrcExtRepr> {
    (
        any::<u16>(),
        any::<u16>(),
        any::<u32>(),
        any::<u32>(),
        0u32..(1 << 24),
        0usize..3,
        any::<[u64; 4]>(),
    )
        .prop_map(|(ev_index, ecn_ce_count, echo_ts, service_ns, base, code, words)| {
            let bits = 64u16 << code;
            let mut bitmap = SackBitmap::new(bits);
            for (k, w) in words.iter().enumerate().take(usize::from(bits) / 64) {
                bitmap.words[k] = *w;
            }
            MrcExtRepr::Sack(SackExtRepr {
                ev_index,
                ecn_ce_count,
                echo_ts,
                service_ns,
                base: Psn::new(base),
                bitmap,
            })
        })
}

fn arb_ack_ext() -> impl Strategy<Value = MrcExtRepr> {
    prop_oneof![
        arb_sack(),
        (0u8..3, any::<u16>(), 0u32..(1 << 24), any::<u32>()).prop_map(|(k, ev_index, cum, echo_ts)| {
            let kind = [NackKind::Trimmed, NackKind::OutOfWindow, NackKind::RemoteAccess][usize::from(k)];
            MrcExtRepr::Nack(NackExtRepr {
                kind,
                ev_index,
                cum_psn: Psn::new(cum),
                echo_ts,
            })
        }),
        (any::<bool>(), any::<u16>(), any::<u32>(), any::<u32>(), any::<u32>()).prop_map(
            |(response, ev_index, probe_id, tx_ts, service_ns)| {
                MrcExtRepr::Probe(ProbeExtRepr {
                    response,
                    ev_index,
                    probe_id,
                    tx_ts,
                    service_ns,
                })
            }
        ),
    ]
}

fn arb_data_ext(opcode: Opcode) -> impl Strategy<Value = MrcExtRepr> {
    (
        any::<u16>(),
        any::<bool>(),
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        any::<u64>(),
        any::<u32>(),
    )
        .prop_map(move |(ev_index, retransmit, ev_seq, tx_ts, msg_offset, va, rkey)| {
            MrcExtRepr::Data(DataExtRepr {
                ev_index,
                retransmit,
                ev_seq,
                tx_ts,
                msg_offset,
                placement: (!opcode.has_reth()).then_some(PlacementRepr { va, rkey }),
            })
        })
}

/// Any packet the parser accepts, for IPv4 (`v6 = false`: 16-bit EVs) or
/// IPv6. Covers every opcode, MRC and RC-baseline forms, trimmed and CE.
pub fn arb_packet(v6: bool) -> impl Strategy<Value = RocePacket> {
    (0usize..OPCODES.len(), any::<bool>()).prop_flat_map(move |(oi, mrc)| {
        let opcode = OPCODES[oi];
        let mrc = mrc && opcode != Opcode::Cnp;
        let ext: BoxedStrategy<Option<MrcExtRepr>> = if !mrc {
            Just(None).boxed()
        } else if opcode == Opcode::Ack {
            arb_ack_ext().prop_map(Some).boxed()
        } else {
            arb_data_ext(opcode).prop_map(Some).boxed()
        };
        let ev = if v6 {
            any::<u32>().boxed()
        } else {
            (0u32..=0xFFFF).boxed()
        };
        (
            ext,
            ev,
            any::<[bool; 7]>(),
            0u8..4,
            any::<u16>(),
            0u32..(1 << 24),
            0u32..(1 << 24),
            (any::<u64>(), any::<u32>(), any::<u32>(), any::<u32>()),
            (0u8..0x80, 0u32..(1 << 24)),
            proptest::collection::vec(any::<u8>(), 0..48),
        )
            .prop_map(
                move |(ext, ev, f, pad, pkey, qp, psn, (va, rkey, dma_len, imm), (syn, msn), payload)| {
                    let syndrome = match &ext {
                        Some(MrcExtRepr::Nack(n)) => Syndrome::for_nack(n.kind),
                        Some(_) => Syndrome::Ack { credits: syn & 0x1F },
                        None => Syndrome::from_u8(syn),
                    };
                    let trimmed = f[6];
                    RocePacket {
                        ev,
                        ecn_ce: f[0],
                        trimmed,
                        bth: BthRepr {
                            opcode,
                            solicited: f[1],
                            mig_req: f[2],
                            pad,
                            pkey,
                            fecn: f[3],
                            becn: f[4],
                            mrc_ext: mrc,
                            dest_qp: qp,
                            ack_req: f[5],
                            psn: Psn::new(psn),
                        },
                        reth: opcode.has_reth().then_some(RethRepr { va, rkey, dma_len }),
                        imm: opcode.has_imm().then_some(imm),
                        aeth: opcode.has_aeth().then_some(AethRepr { syndrome, msn }),
                        ext,
                        payload: Bytes::from(payload),
                    }
                },
            )
    })
}

pub fn arb_encap(v6: bool) -> impl Strategy<Value = Encap> {
    (any::<[u8; 6]>(), any::<[u8; 6]>(), any::<[u8; 16]>(), any::<[u8; 16]>()).prop_map(move |(s, d, a, b)| {
        let ip = if v6 {
            IpPair::V6 { src: a, dst: b }
        } else {
            IpPair::V4 {
                src: [a[0], a[1], a[2], a[3]],
                dst: [b[0], b[1], b[2], b[3]],
            }
        };
        Encap {
            src_mac: s,
            dst_mac: d,
            ip,
        }
    })
}
