//! RX header parser against the golden codec: frames built by
//! `proto::wire::emit_frame` (and corrupted copies) stream through the
//! rust-hdl simulation back to back; every record the parser produces must
//! match `proto::wire::parse_frame_checked_into` (the checks of
//! `parse_frame`, ICRC included) on the same bytes (fields on acceptance,
//! the `WireErrorKind` on a drop).

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use hw::rx_parser::{reason, RxParser};
use proto::wire::*;
use proto::Psn;
use rust_hdl::prelude::*;

use tb::{lockstep, lockstep_sim};

fn bth(opcode: Opcode, x: bool, pad: u8) -> BthRepr {
    BthRepr {
        opcode,
        solicited: opcode == Opcode::WriteOnlyImm,
        mig_req: true,
        pad,
        pkey: 0xFFFF,
        fecn: false,
        becn: opcode == Opcode::Cnp,
        dest_qp: 0x00AB_CDEF & 0xFF_FFFF,
        ack_req: true,
        mrc_ext: x,
        psn: Psn::new(0x12_3456),
    }
}

fn data_ext(placement: bool) -> MrcExtRepr {
    MrcExtRepr::Data(DataExtRepr {
        ev_index: 0x1234,
        retransmit: true,
        ev_seq: 0xA1B2_C3D4,
        tx_ts: 0x0102_0304,
        msg_offset: 0x4000,
        placement: placement.then_some(PlacementRepr {
            va: 0x1122_3344_5566_7788,
            rkey: 0xCAFE_F00D,
        }),
    })
}

fn packet(opcode: Opcode, x: bool, payload: usize, ev: u32) -> RocePacket {
    let reth = opcode.has_reth().then_some(RethRepr {
        va: 0x0000_7F00_DEAD_BEEF,
        rkey: 0x1357_9BDF,
        dma_len: 0x10_0000,
    });
    let imm = opcode.has_imm().then_some(0x8765_4321);
    let aeth = opcode.has_aeth().then_some(AethRepr {
        syndrome: Syndrome::Ack { credits: 0x1F },
        msn: 0x00_0042,
    });
    let ext = (x && opcode != Opcode::Cnp && opcode != Opcode::Ack).then(|| data_ext(!opcode.has_reth()));
    let payload: Vec<u8> = (0..payload).map(|i| (i * 7 + 3) as u8).collect();
    RocePacket {
        ev,
        ecn_ce: false,
        trimmed: false,
        bth: bth(opcode, ext.is_some(), pad_for(payload.len())),
        reth,
        imm,
        aeth,
        ext,
        payload: Bytes::from(payload),
    }
}

fn ack_with(ext: MrcExtRepr, syndrome: Syndrome) -> RocePacket {
    let mut p = packet(Opcode::Ack, false, 0, 0x0000_BEEF);
    p.aeth = Some(AethRepr { syndrome, msn: 7 });
    p.bth.mrc_ext = true;
    p.ext = Some(ext);
    p
}

fn sack(bits: u16) -> MrcExtRepr {
    let mut bitmap = SackBitmap::new(bits);
    for (k, w) in bitmap.words.iter_mut().enumerate().take(usize::from(bits) / 64) {
        *w = 0x0F0F_0000_1234_5678 ^ (k as u64);
    }
    MrcExtRepr::Sack(SackExtRepr {
        ev_index: 9,
        ecn_ce_count: 2,
        echo_ts: 0x55AA_55AA,
        service_ns: 1000,
        base: Psn::new(0xFF_FFF0),
        bitmap,
    })
}

fn emit(p: &RocePacket, encap: &Encap) -> Vec<u8> {
    p.validate().unwrap();
    let mut v = Vec::new();
    emit_frame(p, encap, &mut v);
    v
}

fn fix_ipv4_checksum(f: &mut [u8]) {
    f[24] = 0;
    f[25] = 0;
    let mut sum = 0u32;
    for i in 0..10 {
        sum += u32::from(u16::from_be_bytes([f[14 + 2 * i], f[15 + 2 * i]]));
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    let c = !(sum as u16);
    f[24..26].copy_from_slice(&c.to_be_bytes());
}

/// Valid frames of every shape plus one corruption per drop reason the
/// parser checks.
fn frames() -> Vec<(&'static str, Vec<u8>)> {
    let v4 = Encap::test_v4();
    let v6 = Encap::test_v6();
    let mut out: Vec<(&'static str, Vec<u8>)> = Vec::new();
    for (i, op) in Opcode::ALL.into_iter().enumerate() {
        let pay = if op.is_write() { [0, 1, 70, 130][i % 4] } else { 0 };
        out.push(("mrc v4", emit(&packet(op, true, pay, 0x0000_1000 + i as u32), &v4)));
        out.push(("mrc v6", emit(&packet(op, true, pay + 3, 0xABCD_0000 + i as u32), &v6)));
    }
    out.push(("rc v4 write only", emit(&packet(Opcode::WriteOnly, false, 33, 77), &v4)));
    let mut ce = packet(Opcode::WriteMiddle, true, 8, 5);
    ce.ecn_ce = true;
    out.push(("ecn ce v6", emit(&ce, &v6)));
    for bits in [64, 128, 256] {
        out.push((
            "sack v4",
            emit(&ack_with(sack(bits), Syndrome::Ack { credits: 0x1F }), &v4),
        ));
    }
    out.push((
        "sack256 v6",
        emit(&ack_with(sack(256), Syndrome::Ack { credits: 3 }), &v6),
    ));
    for kind in [NackKind::Trimmed, NackKind::OutOfWindow, NackKind::RemoteAccess] {
        let n = MrcExtRepr::Nack(NackExtRepr {
            kind,
            ev_index: 3,
            cum_psn: Psn::new(0xAB_CDEF),
            echo_ts: 99,
        });
        out.push(("nack", emit(&ack_with(n, Syndrome::for_nack(kind)), &v4)));
    }
    let probe = MrcExtRepr::Probe(ProbeExtRepr {
        response: true,
        ev_index: 0xFFFF,
        probe_id: 0xDEAD_0001,
        tx_ts: 5,
        service_ns: 6,
    });
    out.push(("probe v6", emit(&ack_with(probe, Syndrome::Ack { credits: 0 }), &v6)));
    let long = emit(&packet(Opcode::WriteLast, true, 200, 1), &v4);
    out.push(("trimmed", trim_frame(&long, 10).unwrap()));
    // 802.1Q tag inserted on receive.
    let mut tagged = emit(&packet(Opcode::WriteLastImm, true, 9, 0xFACE), &v4);
    tagged.splice(12..12, [0x81, 0x00, 0x20, 0x05]);
    out.push(("vlan v4", tagged));
    let mut tagged6 = emit(&packet(Opcode::WriteOnlyImm, true, 2, 0x1234_5678), &v6);
    tagged6.splice(12..12, [0x81, 0x00, 0x00, 0x07]);
    out.push(("vlan v6", tagged6));
    // ---- Corruptions (v4 unless stated; offsets: IP 14, UDP 34, BTH 42).
    let base = emit(&packet(Opcode::WriteMiddle, true, 20, 0x99), &v4);
    let ack = emit(&ack_with(sack(64), Syndrome::Ack { credits: 0 }), &v4);
    let corrupt = |f: &[u8], edit: &dyn Fn(&mut Vec<u8>)| {
        let mut g = f.to_vec();
        edit(&mut g);
        g
    };
    // A transport-level corruption with a fresh ICRC (and IPv4 checksum),
    // so that it reaches the check it targets instead of `BadIcrc`.
    let sealed = |f: &[u8], edit: &dyn Fn(&mut Vec<u8>)| {
        let mut g = corrupt(f, edit);
        icrc::reseal_frame(&mut g);
        g
    };
    out.push(("truncated eth", base[..10].to_vec()));
    out.push(("truncated ip", base[..30].to_vec()));
    out.push((
        "ethertype arp",
        corrupt(&base, &|f| f[12..14].copy_from_slice(&[0x08, 0x06])),
    ));
    out.push(("ip version 5", corrupt(&base, &|f| f[14] = 0x55)));
    out.push(("ihl 4", corrupt(&base, &|f| f[14] = 0x44)));
    out.push((
        "ip total too long",
        corrupt(&base, &|f| {
            f[16] = 0x05;
            fix_ipv4_checksum(f);
        }),
    ));
    out.push(("ip checksum", corrupt(&base, &|f| f[22] ^= 1)));
    out.push((
        "fragment",
        corrupt(&base, &|f| {
            f[20] = 0x20;
            fix_ipv4_checksum(f);
        }),
    ));
    out.push((
        "tcp",
        corrupt(&base, &|f| {
            f[23] = 6;
            fix_ipv4_checksum(f);
        }),
    ));
    out.push(("udp port", corrupt(&base, &|f| f[37] ^= 1)));
    out.push(("udp length", corrupt(&base, &|f| f[39] ^= 4)));
    out.push(("unknown opcode", sealed(&base, &|f| f[42] = 0x04)));
    out.push(("tver 1", sealed(&base, &|f| f[43] |= 1)));
    out.push(("ext version 2", sealed(&base, &|f| f[54] = 0x21)));
    out.push(("ext type 5", sealed(&base, &|f| f[54] = 0x15)));
    out.push(("sack on write", sealed(&base, &|f| f[54] = 0x12)));
    out.push((
        "x bit on cnp",
        sealed(&emit(&packet(Opcode::Cnp, false, 0, 1), &v4), &|f| f[50] |= 0x40),
    ));
    out.push(("sack width 3", sealed(&ack, &|f| f[59] |= 3)));
    out.push((
        "nack kind 0",
        sealed(
            &emit(
                &ack_with(
                    MrcExtRepr::Nack(NackExtRepr {
                        kind: NackKind::Trimmed,
                        ev_index: 1,
                        cum_psn: Psn::new(1),
                        echo_ts: 1,
                    }),
                    Syndrome::for_nack(NackKind::Trimmed),
                ),
                &v4,
            ),
            &|f| f[59] = 0,
        ),
    ));
    out.push(("syndrome mismatch", sealed(&ack, &|f| f[54] = 0x60)));
    out.push(("pad count", sealed(&ack, &|f| f[43] |= 0x30)));
    out.push((
        "icrc trailer",
        corrupt(&base, &|f| {
            let n = f.len();
            f[n - 2] ^= 0x80;
        }),
    ));
    out.push(("payload byte", corrupt(&base, &|f| f[70] ^= 0x10)));
    out.push((
        "v6 payload length",
        corrupt(&emit(&packet(Opcode::WriteFirst, true, 5, 1), &v6), &|f| f[19] = 0xFF),
    ));
    out
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Rec {
    reason: u8,
    ipv6: bool,
    vlan: bool,
    ecn_ce: bool,
    trimmed: bool,
    ev: u32,
    bth: [u64; 11],
    reth: [u64; 3],
    imm: u32,
    aeth: [u32; 2],
    ext: Vec<u8>,
    payload: (usize, usize),
}

fn expected(frame: &[u8]) -> Rec {
    let mut h = ParsedHeaders::new();
    match parse_frame_checked_into(frame, &mut h) {
        Err(e) => Rec {
            reason: e.kind() as u8 + 1,
            ..Default::default()
        },
        Ok(()) => {
            let p = &h.packet;
            let b = &p.bth;
            let ext = p.ext.as_ref().map_or_else(Vec::new, |e| {
                let mut buf = vec![0u8; e.buffer_len()];
                e.emit(&mut MrcExtPacket::new_unchecked(&mut buf[..]));
                buf.truncate(28);
                buf
            });
            Rec {
                reason: 0,
                ipv6: matches!(h.encap.ip, IpPair::V6 { .. }),
                vlan: frame[12..14] == [0x81, 0x00],
                ecn_ce: p.ecn_ce,
                trimmed: p.trimmed,
                ev: p.ev,
                bth: [
                    u64::from(b.opcode.as_u8()),
                    u64::from(b.solicited),
                    u64::from(b.mig_req),
                    u64::from(b.pad),
                    u64::from(b.pkey),
                    u64::from(b.fecn),
                    u64::from(b.becn),
                    u64::from(b.dest_qp),
                    u64::from(b.ack_req),
                    u64::from(b.mrc_ext),
                    u64::from(b.psn.value()),
                ],
                reth: p
                    .reth
                    .map_or([0; 3], |r| [r.va, u64::from(r.rkey), u64::from(r.dma_len)]),
                imm: p.imm.unwrap_or(0),
                aeth: p.aeth.map_or([0; 2], |a| [u32::from(a.syndrome.to_u8()), a.msn]),
                ext,
                payload: (h.payload.start, h.payload.len()),
            }
        }
    }
}

fn to_bits512(chunk: &[u8]) -> Bits<512> {
    let mut b = Bits::<512>::default();
    for (k, w) in chunk.chunks(8).enumerate() {
        let mut word = [0u8; 8];
        word[..w.len()].copy_from_slice(w);
        b.set_bits::<64>(64 * k, u64::from_le_bytes(word).into());
    }
    b
}

fn keep(n: usize) -> Bits<64> {
    (if n == 64 { u64::MAX } else { (1u64 << n) - 1 }).into()
}

/// A value of up to 64 bits (`index()` only takes short vectors).
fn v<const N: usize>(b: Bits<N>) -> u64 {
    (0..N.min(64))
        .filter(|&i| b.get_bit(i))
        .fold(0, |acc, i| acc | (1 << i))
}

fn read(x: &RxParser) -> Rec {
    let reason = v(x.out_reason.val()) as u8;
    if reason != 0 {
        return Rec {
            reason,
            ..Default::default()
        };
    }
    let u = |b: bool| u64::from(b);
    let xbit = x.out_xbit.val();
    let ext_bits = x.out_ext.val();
    let op = v(x.out_opcode.val()) as u8;
    let op = Opcode::from_u8(op).unwrap();
    let ext_len = if !xbit {
        0
    } else {
        let t = ext_bits.get_bits::<4>(216).index();
        let b1 = ext_bits.get_bits::<2>(208).index();
        match t {
            1 if op.has_reth() => 16,
            1 => 28,
            2 => [28, 36, 52, 0][b1].min(28),
            3 => 12,
            _ => 16,
        }
    };
    let ext = (0..ext_len)
        .map(|i| ext_bits.get_bits::<8>(216 - 8 * i).index() as u8)
        .collect();
    Rec {
        reason,
        ipv6: x.out_ipv6.val(),
        vlan: x.out_vlan.val(),
        ecn_ce: x.out_ecn_ce.val(),
        trimmed: x.out_trimmed.val(),
        ev: v(x.out_ev.val()) as u32,
        bth: [
            v(x.out_opcode.val()),
            u(x.out_se.val()),
            u(x.out_mig.val()),
            v(x.out_pad.val()),
            v(x.out_pkey.val()),
            u(x.out_fecn.val()),
            u(x.out_becn.val()),
            v(x.out_dest_qp.val()),
            u(x.out_ack_req.val()),
            u(xbit),
            v(x.out_psn.val()),
        ],
        reth: if op.has_reth() {
            [
                v(x.out_reth_va.val()),
                v(x.out_reth_rkey.val()),
                v(x.out_reth_len.val()),
            ]
        } else {
            [0; 3]
        },
        imm: if op.has_imm() { v(x.out_imm.val()) as u32 } else { 0 },
        aeth: if op.has_aeth() {
            [v(x.out_aeth_syndrome.val()) as u32, v(x.out_aeth_msn.val()) as u32]
        } else {
            [0; 2]
        },
        ext,
        payload: (v(x.out_payload_off.val()) as usize, v(x.out_payload_len.val()) as usize),
    }
}

/// Valid frames (first of two halves, run in parallel: rust-hdl simulates
/// the 1024-bit window as bool arrays, about 8 cycles/s in debug builds).
#[test]
fn valid_frames_match_golden_parser() {
    let all = frames();
    let n = all.iter().position(|(n, _)| n.starts_with("truncated")).unwrap();
    run(all[..n].to_vec(), Drops::None);
}

/// Malformed frames: dropped with the golden model's reason.
#[test]
fn malformed_frames_dropped_with_golden_reason() {
    let all = frames();
    let n = all.iter().position(|(n, _)| n.starts_with("truncated")).unwrap();
    run(all[n..].to_vec(), Drops::All);
}

/// The IPv4 header of `f` (IP header at `ip`) grown to IHL 15 with 40
/// bytes of options (NOPs), total length, checksum and ICRC fixed.
fn with_ip_options(f: &[u8], ip: usize) -> Vec<u8> {
    let mut g = f.to_vec();
    g.splice(ip + 20..ip + 20, [1u8; 40]);
    g[ip] = 0x4F;
    let total = u16::from_be_bytes([g[ip + 2], g[ip + 3]]) + 40;
    g[ip + 2..ip + 4].copy_from_slice(&total.to_be_bytes());
    Ipv4Packet::new_unchecked(&mut g[ip..]).fill_checksum();
    let end = ip + usize::from(total);
    let c = icrc::compute_icrc(&g[ip..end - 4], 60, false);
    g[end - 4..end].copy_from_slice(&c.to_le_bytes());
    g
}

/// Valid frames of many shapes (IPv4, IPv6, 802.1Q, IPv4 options that push
/// the UDP checksum and BTH byte 4 into beat 1, Ethernet padding, trailing
/// bytes past the IP length that fill whole beats, partial last beats,
/// jumbo frames), each also with the masked (variant) fields changed,
/// which must not change the ICRC, and with one byte corrupted at random
/// places (header, payload, trailer, padding).
fn corrupted_frames() -> Vec<(&'static str, Vec<u8>)> {
    let v4 = Encap::test_v4();
    let v6 = Encap::test_v6();
    let vlan = |mut f: Vec<u8>| {
        f.splice(12..12, [0x81, 0x00, 0x20, 0x05]);
        f
    };
    let pad = |mut f: Vec<u8>, n: usize| {
        f.extend((0..n).map(|i| (i * 13 + 1) as u8));
        f
    };
    // (name, frame, IP header offset, IPv6, corruptions)
    let bases: Vec<(&'static str, Vec<u8>, usize, bool, usize)> = vec![
        (
            "v4 write middle",
            emit(&packet(Opcode::WriteMiddle, true, 20, 0x99), &v4),
            14,
            false,
            8,
        ),
        (
            "v6 write only imm",
            emit(&packet(Opcode::WriteOnlyImm, true, 100, 0x1234_5678), &v6),
            14,
            true,
            8,
        ),
        (
            "vlan v4 write first",
            vlan(emit(&packet(Opcode::WriteFirst, true, 64, 3), &v4)),
            18,
            false,
            6,
        ),
        (
            "vlan v6 sack",
            vlan(emit(&ack_with(sack(256), Syndrome::Ack { credits: 1 }), &v6)),
            18,
            true,
            6,
        ),
        (
            "v4 cnp padded",
            pad(emit(&packet(Opcode::Cnp, false, 0, 5), &v4), 6),
            14,
            false,
            4,
        ),
        (
            "v6 ack trailing",
            pad(emit(&packet(Opcode::Ack, true, 0, 6), &v6), 150),
            14,
            true,
            4,
        ),
        (
            "v4 trailing",
            pad(emit(&packet(Opcode::WriteLast, true, 3, 7), &v4), 70),
            14,
            false,
            4,
        ),
        (
            "vlan v4 ihl 15",
            with_ip_options(&vlan(emit(&packet(Opcode::WriteMiddle, true, 30, 8), &v4)), 18),
            18,
            false,
            6,
        ),
        (
            "v4 ihl 15 padded",
            pad(
                with_ip_options(&emit(&packet(Opcode::WriteOnly, false, 61, 9), &v4), 14),
                9,
            ),
            14,
            false,
            4,
        ),
        (
            "v4 jumbo",
            emit(&packet(Opcode::WriteOnly, true, 9000, 10), &v4),
            14,
            false,
            2,
        ),
        (
            "vlan v6 4k",
            vlan(emit(&packet(Opcode::WriteMiddle, true, 4096, 11), &v6)),
            18,
            true,
            1,
        ),
    ];
    let mut out = Vec::new();
    let mut rng = tb::rng::Rng::from_state(0x5DEE_CE66_D1CE_4E5B);
    for (name, f, ip, is6, n) in bases {
        let ip_len = if is6 {
            40 + usize::from(u16::from_be_bytes([f[ip + 4], f[ip + 5]]))
        } else {
            usize::from(u16::from_be_bytes([f[ip + 2], f[ip + 3]]))
        };
        let udp = ip + if is6 { 40 } else { usize::from(f[ip] & 0x0F) * 4 };
        // Masked fields changed: TOS/TTL (checksum refreshed) or traffic
        // class, flow label and hop limit; UDP checksum; BTH byte 4.
        let mut m = f.clone();
        if is6 {
            m[ip] ^= 0x0A;
            m[ip + 1] ^= 0x5C;
            m[ip + 3] ^= 0x81;
            m[ip + 7] = m[ip + 7].wrapping_sub(9);
        } else {
            m[ip + 1] ^= 0x01; // ECN ECT(1)
            m[ip + 8] = m[ip + 8].wrapping_sub(17);
            Ipv4Packet::new_unchecked(&mut m[ip..]).fill_checksum();
        }
        m[udp + 6] ^= 0xA5;
        m[udp + 7] ^= 0x3C;
        m[udp + 12] ^= 0xC0; // FECN and BECN
        out.push((name, f.clone()));
        out.push(("masked fields changed", m));
        // One byte corrupted: random places, and the trailer.
        let mut places: Vec<usize> = (0..n).map(|_| rng.next_u64() as usize % f.len()).collect();
        places.push(ip + ip_len - 1 - rng.next_u64() as usize % 4);
        if f.len() > ip + ip_len {
            places.push(ip + ip_len + rng.next_u64() as usize % (f.len() - ip - ip_len));
        }
        for at in places {
            let mut g = f.clone();
            g[at] ^= (rng.next_u64() as u8) | 1;
            out.push(("one byte corrupted", g));
        }
    }
    out
}

/// Frames with masked fields changed (accepted) and single corrupted bytes
/// (mostly `BadIcrc`; other reasons where an earlier check sees them
/// first): the parser's reason and fields match the golden model's.
#[test]
fn corrupted_frames_match_golden_parser() {
    let all = corrupted_frames();
    let want: Vec<Rec> = all.iter().map(|(_, f)| expected(f)).collect();
    // The set exercises the ICRC both ways.
    let bad_icrc = want.iter().filter(|r| r.reason == reason::BAD_ICRC).count();
    eprintln!(
        "{} frames, {bad_icrc} BadIcrc, {} accepted",
        want.len(),
        want.iter().filter(|r| r.reason == 0).count()
    );
    assert!(bad_icrc >= 30);
    for ((name, _), w) in all.iter().zip(&want) {
        if *name == "masked fields changed" {
            assert_eq!(w.reason, 0, "the golden model accepts masked-field changes");
        }
    }
    run(all, Drops::Some);
}

/// How many of a run's frames the golden model drops.
#[derive(PartialEq)]
enum Drops {
    None,
    All,
    Some,
}

fn run(frames: Vec<(&'static str, Vec<u8>)>, drops: Drops) {
    let want: Vec<Rec> = frames.iter().map(|(_, f)| expected(f)).collect();
    let got = Arc::new(Mutex::new(Vec::<Rec>::new()));
    let cycles = Arc::new(Mutex::new(0u64));
    // Cycle of every tlast beat and of every record: the latency.
    let lat = Arc::new(Mutex::new((Vec::<u64>::new(), Vec::<u64>::new())));
    let (g, c, l) = (got.clone(), cycles.clone(), lat.clone());
    let fr: Vec<Vec<u8>> = frames.iter().map(|(_, f)| f.clone()).collect();
    let mut uut = RxParser::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(RxParser, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        let mut n = 0u64;
        // Beats back to back: a new frame starts in the cycle after the
        // previous frame's last beat; one idle cycle after every 7th frame.
        let mut beats: Vec<Option<(Bits<512>, Bits<64>, bool)>> = Vec::new();
        for (i, f) in fr.iter().enumerate() {
            let chunks: Vec<&[u8]> = f.chunks(64).collect();
            for (k, ch) in chunks.iter().enumerate() {
                beats.push(Some((to_bits512(ch), keep(ch.len()), k + 1 == chunks.len())));
            }
            if i % 7 == 6 {
                beats.push(None);
            }
        }
        beats.extend([None; 7]); // drain the pipeline (record 6 cycles after tlast)
        for b in beats {
            match b {
                Some((d, k, last)) => {
                    x.s_axis.tdata.next = d;
                    x.s_axis.tkeep.next = k;
                    x.s_axis.tlast.next = last;
                    x.s_axis.tvalid.next = true;
                }
                None => {
                    x.s_axis.tvalid.next = false;
                    x.s_axis.tlast.next = false;
                }
            }
            wait_clock_false!(sim, clock, x);
            sim_assert!(sim, x.s_axis.tready.val(), x);
            sim_assert!(sim, !(x.out_valid.val() & x.out_drop.val()), x);
            if x.out_valid.val() | x.out_drop.val() {
                g.lock().unwrap().push(read(&x));
                l.lock().unwrap().1.push(n);
            }
            if matches!(b, Some((_, _, true))) {
                l.lock().unwrap().0.push(n);
            }
            wait_clock_true!(sim, clock, x);
            n += 1;
        }
        *c.lock().unwrap() = n;
        sim.done(x)
    });
    let t = std::time::Instant::now();
    sim.run(Box::new(uut), 1_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_rx_parser", || {
        hw::flow::emit_block("mrc_rx_parser", &mut RxParser::default()).verilog
    });
    let got = got.lock().unwrap();
    eprintln!(
        "{} frames, {} cycles simulated in {:?}",
        frames.len(),
        cycles.lock().unwrap(),
        t.elapsed()
    );
    assert_eq!(got.len(), want.len(), "one record per frame");
    for (i, ((name, _), (g, w))) in frames.iter().zip(got.iter().zip(&want)).enumerate() {
        assert_eq!(g, w, "frame {i} ({name})");
    }
    // The record comes 6 cycles after the tlast beat (six pipeline stages).
    let lat = lat.lock().unwrap();
    assert!(
        lat.0.iter().zip(&lat.1).all(|(t, r)| r - t == 6),
        "latency: tlast {:?} records {:?}",
        lat.0,
        lat.1
    );
    let dropped = want.iter().filter(|r| r.reason != 0).count();
    match drops {
        Drops::None => assert_eq!(dropped, 0),
        Drops::All => assert_eq!(dropped, want.len()),
        Drops::Some => assert!(dropped > 0 && dropped < want.len()),
    }
}
