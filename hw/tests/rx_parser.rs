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
    // The MRC 1.0 probe's translated type: never from a legacy frame.
    out.push(("ext type 6", sealed(&base, &|f| f[54] = 0x16)));
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
    /// The record is an MRC 1.0 frame's (`out_mrc10`).
    mrc10: bool,
    /// It asks to SKIP its EV once (`out_skip`: a TRIMMED NACK, a SACK
    /// with m = SKIP_ONCE) or always (`out_always_skip`).
    skip: bool,
    always_skip: bool,
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
                mrc10: false,
                skip: false,
                always_skip: false,
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
        mrc10: x.out_mrc10.val(),
        skip: x.out_skip.val(),
        always_skip: x.out_always_skip.val(),
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
    run_against(frames, want, drops);
}

/// The parser's clock during the tests: its 64 ns count (bits 21-6,
/// 0x1159) lies inside the range of the frames' random echoes, so both
/// sides of the wrap occur.
const TEST_NOW_NS: u64 = 0x1234_5678;

/// An MRC 1.0 echo (16 bits of 64 ns) as the retransmit engine must get
/// it: the latest ns time at or before [`TEST_NOW_NS`] whose 64 ns count
/// ends in those 16 bits (`proto::wire::mrc10::choices::TS_UNIT_NS`).
fn unwrap_echo(echo: u16) -> u32 {
    let unit = proto::wire::mrc10::choices::TS_UNIT_NS;
    let now_units = TEST_NOW_NS / unit;
    let age = (now_units as u16).wrapping_sub(echo);
    ((now_units - u64::from(age)) * unit) as u32
}

/// Stream `frames` through the parser; record `i` must equal `want[i]`.
fn run_against(frames: Vec<(&'static str, Vec<u8>)>, want: Vec<Rec>, drops: Drops) {
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
        x.now_ns.next = TEST_NOW_NS.into();
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
                g.lock()
                    .unwrap()
                    .push(if x.out_mrc10.val() { read_mrc10(&x) } else { read(&x) });
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

// ---- MRC 1.0 frames through the same front end (the switch of the RX
// core, docs/hw/mrc10-wire.md "The RX core").

mod mrc10_gen;

use hw::rx_parser::translate;
use proto::wire::frame::{emit_outer, OuterFields};
use proto::wire::mrc10::seth::SkipMode;
use proto::wire::mrc10::{self, choices, Mrc10Packet, NackReason, Profile};
use tb::rng::Rng;

/// A record of an MRC 1.0 frame as observed: the legacy record it is
/// written into (`hw::rx_parser::translate`).
fn read_mrc10(x: &RxParser) -> Rec {
    let reason = v(x.out_reason.val()) as u8;
    if reason != 0 {
        return Rec {
            reason,
            ..Default::default()
        };
    }
    let u = |b: bool| u64::from(b);
    let op = v(x.out_opcode.val());
    let ext_bits = x.out_ext.val();
    let is_write = (0x06..=0x0B).contains(&op);
    Rec {
        reason,
        ipv6: x.out_ipv6.val(),
        vlan: x.out_vlan.val(),
        ecn_ce: x.out_ecn_ce.val(),
        trimmed: x.out_trimmed.val(),
        ev: v(x.out_ev.val()) as u32,
        bth: [
            op,
            u(x.out_se.val()),
            u(x.out_mig.val()),
            v(x.out_pad.val()),
            v(x.out_pkey.val()),
            u(x.out_fecn.val()),
            u(x.out_becn.val()),
            v(x.out_dest_qp.val()),
            u(x.out_ack_req.val()),
            u(x.out_xbit.val()),
            v(x.out_psn.val()),
        ],
        reth: if is_write {
            [
                v(x.out_reth_va.val()),
                v(x.out_reth_rkey.val()),
                v(x.out_reth_len.val()),
            ]
        } else {
            [0; 3]
        },
        imm: if op == 0x09 || op == 0x0B {
            v(x.out_imm.val()) as u32
        } else {
            0
        },
        aeth: if op == translate::LEGACY_ACK {
            [v(x.out_aeth_syndrome.val()) as u32, v(x.out_aeth_msn.val()) as u32]
        } else {
            [0; 2]
        },
        ext: (0..28)
            .map(|i| ext_bits.get_bits::<8>(216 - 8 * i).index() as u8)
            .collect(),
        payload: (v(x.out_payload_off.val()) as usize, v(x.out_payload_len.val()) as usize),
        mrc10: true,
        skip: x.out_skip.val(),
        always_skip: x.out_always_skip.val(),
    }
}

/// Where the transport starts in `frame` (Ethernet, an 802.1Q tag, IPv4
/// with its IHL or IPv6, UDP).
fn transport_at(frame: &[u8]) -> usize {
    let eth = if frame[12..14] == [0x81, 0x00] { 18 } else { 14 };
    let ip = if frame[eth] >> 4 == 6 {
        40
    } else {
        usize::from(frame[eth] & 0x0F) * 4
    };
    eth + ip + 8
}

/// The record the parser must give for an MRC 1.0 frame: the golden
/// parser's reason on a drop; on acceptance the legacy record the MRC 1.0
/// headers are written into (each rule of `translate` spelled out here
/// from `proto::wire::mrc10`'s fields), or reason 31 when the chain ends
/// past the 128-byte window (the golden parser has no window).
fn expected_mrc10(frame: &[u8]) -> Rec {
    let profile = Profile::DEFAULT;
    let (p, encap) = match mrc10::parse_frame(frame, &profile) {
        Err(e) => {
            return Rec {
                reason: e.kind() as u8 + 1,
                ..Default::default()
            }
        }
        Ok(x) => x,
    };
    let at = transport_at(frame);
    let hdr_end = at + p.transport_header_len();
    if hdr_end > 128 {
        return Rec {
            reason: reason::HEADER_BEYOND_WINDOW,
            ..Default::default()
        };
    }
    let payload = mrc10::parse_frame_headers(frame, &profile).unwrap().payload;
    let b = &p.bth;
    let ipv6 = matches!(encap.ip, IpPair::V6 { .. });
    let eth = at - 8 - if ipv6 { 40 } else { 20 };
    let sport = u32::from(u16::from_be_bytes([frame[at - 8], frame[at - 7]]));
    let ev = if ipv6 {
        sport | u32::from(u16::from_be_bytes([frame[eth + 2], frame[eth + 3]])) << 16
    } else {
        sport
    };
    let op = b.opcode.as_u8();
    let mut ext = vec![0u8; 28];
    let mut legacy_op = u64::from(op);
    let (mut skip, mut always_skip) = (false, false);
    let mut psn = b.psn.value();
    let mut reth = [0u64; 3];
    let mut imm = 0;
    let put = |ext: &mut Vec<u8>, at: usize, bytes: &[u8]| ext[at..at + bytes.len()].copy_from_slice(bytes);
    match &p.headers {
        mrc10::Headers::Write(w) => {
            legacy_op = u64::from(op - 0xC0);
            ext[0] = 0x11;
            put(&mut ext, 8, &u32::from(w.tseth.map_or(0, |t| t.tx_ts)).to_be_bytes());
            put(&mut ext, 16, &w.reth.va.to_be_bytes());
            put(&mut ext, 24, &w.reth.rkey.to_be_bytes());
            reth = [w.reth.va, u64::from(w.reth.rkey), u64::from(w.reth.dma_len)];
            imm = w.imm.unwrap_or(0);
        }
        mrc10::Headers::Sack { seth, cc_state } => {
            legacy_op = 0x11;
            psn = seth.cum_ack_psn.value();
            ext[0] = 0x12;
            skip = !seth.probe_response && seth.skip_mode == SkipMode::SkipOnce;
            always_skip = !seth.probe_response && seth.skip_mode == SkipMode::AlwaysSkip;
            if seth.probe_response {
                // A probe answer: its own type, the EV index in bytes 4-5.
                ext[0] = 0x15;
                put(&mut ext, 4, &(seth.ack_psn_offset as u16).to_be_bytes());
            } else {
                // The congestion feedback: CE marks, penalty, restore; and
                // the trigger (bit 13, the ack PSN offset in bytes 12-13).
                put(&mut ext, 4, &u16::from(seth.cc_flags).to_be_bytes());
                let cc = u16::from(cc_state.cwnd_penalty) | if cc_state.restore { 1 << 15 } else { 0 } | 1 << 13;
                put(&mut ext, 6, &cc.to_be_bytes());
                put(&mut ext, 12, &(seth.ack_psn_offset as u16).to_be_bytes());
            }
            put(&mut ext, 2, &(seth.ev as u16).to_be_bytes());
            put(&mut ext, 8, &unwrap_echo(cc_state.echo_ts).to_be_bytes());
            let base = psn.wrapping_add(seth.sack_offset as i32 as u32) & 0xFF_FFFF;
            put(&mut ext, 17, &base.to_be_bytes()[1..]);
            put(&mut ext, 20, &seth.bitmap.to_be_bytes());
        }
        mrc10::Headers::Ack(a) => {
            legacy_op = 0x11;
            let s = a.syndrome.to_u8();
            if (s >> 5) & 0b11 == 0 {
                // A positive ACK: everything up to its PSN, no bitmap.
                ext[0] = 0x12;
                let base = (psn + 1) & 0xFF_FFFF;
                put(&mut ext, 17, &base.to_be_bytes()[1..]);
                // No CC_STATE: no RTT sample.
                put(&mut ext, 6, &(translate::SACK_CC_NO_SAMPLE as u16).to_be_bytes());
            } else if s & 0x7F == 0x60 | proto::wire::Syndrome::NAK_REMOTE_ACCESS {
                ext[0] = 0x13;
                ext[1] = NackKind::RemoteAccess as u8;
            }
        }
        mrc10::Headers::Nack(n) => {
            legacy_op = 0x11;
            psn = n.nack_psn.value();
            skip = n.reason == NackReason::Trimmed;
            ext[0] = 0x13;
            ext[1] = match n.reason {
                NackReason::Trimmed | NackReason::TrimmedLastHop => NackKind::Trimmed,
                _ => NackKind::OutOfWindow,
            } as u8;
            put(&mut ext, 2, &(n.ev as u16).to_be_bytes());
            put(&mut ext, 8, &unwrap_echo(n.timestamp).to_be_bytes());
        }
        mrc10::Headers::Probe(peth) => {
            // Type 6 (not the legacy probe's 4), the probe id in bytes 2-3,
            // the PETH timestamp zero-extended in bytes 8-11.
            legacy_op = 0x11;
            ext[0] = 0x16;
            put(&mut ext, 2, &peth.probe_id.to_be_bytes());
            put(&mut ext, 8, &u32::from(peth.timestamp).to_be_bytes());
        }
        mrc10::Headers::Endpoint { .. } => {}
    }
    let aeth = if legacy_op == 0x11 {
        // The bytes where an AETH would be: the AETH of an ACK, the first
        // bytes of the other headers (the RX path reads them only for ACKs).
        let t = &frame[at..];
        [u32::from(t[12]), u32::from_be_bytes([0, t[13], t[14], t[15]])]
    } else {
        [0; 2]
    };
    Rec {
        reason: 0,
        ipv6,
        vlan: frame[12..14] == [0x81, 0x00],
        ecn_ce: p.ecn == 3,
        trimmed: mrc10_gen::is_trimmed(p.class),
        ev,
        bth: [
            legacy_op,
            u64::from(b.solicited),
            u64::from(b.mig_req),
            u64::from(b.pad),
            u64::from(b.pkey),
            u64::from(b.fecn),
            u64::from(b.becn),
            u64::from(b.dest_qp),
            u64::from(b.ack_req),
            1,
            u64::from(psn),
        ],
        reth,
        imm,
        aeth,
        ext,
        payload: (payload.start, payload.len()),
        mrc10: true,
        skip,
        always_skip,
    }
}

/// A whole frame around transport bytes `t` (BTH onwards, no ICRC): the
/// outer headers with consistent lengths and checksum, then the ICRC over
/// it, so the frame reaches the transport checks whatever `t` holds.
fn frame_with_transport(t: &[u8], encap: &Encap, dscp: u8) -> Vec<u8> {
    let udp_len = t.len() + 4;
    let mut f = vec![0u8; 14 + encap.ip_header_len() + 8 + udp_len];
    let outer = OuterFields {
        dscp,
        ecn: 0,
        src_port: 0x4321,
        flow_label: 0x8765,
        udp_len,
    };
    let (at, _) = emit_outer(encap, &outer, &mut f);
    f[at..at + t.len()].copy_from_slice(t);
    let icrc_at = f.len() - 4;
    let icrc = icrc::compute_icrc(
        &f[14..icrc_at],
        encap.ip_header_len(),
        matches!(encap.ip, IpPair::V6 { .. }),
    );
    f[icrc_at..].copy_from_slice(&icrc.to_le_bytes());
    f
}

/// `frame` with an 802.1Q tag (the ICRC does not cover Ethernet).
fn tagged(frame: &[u8]) -> Vec<u8> {
    let mut f = frame[..12].to_vec();
    f.extend([0x81, 0x00, 0x20, 0x05]);
    f.extend(&frame[12..]);
    f
}

fn emit_mrc10(p: &Mrc10Packet, encap: &Encap) -> Vec<u8> {
    p.validate(&Profile::DEFAULT).unwrap();
    let mut f = Vec::new();
    mrc10::emit_frame(p, encap, &Profile::DEFAULT, &mut f);
    f
}

/// MRC 1.0 frames and hostile copies of them, with legacy frames between.
fn mrc10_frames() -> Vec<(&'static str, Vec<u8>)> {
    let v4 = Encap::test_v4();
    let v6 = Encap::test_v6();
    let mut r = Rng::new(0x10_15);
    let mut pkts = mrc10::catalog::every_kind();
    for i in 0..24 {
        pkts.push(mrc10_gen::random_packet(
            &mut r,
            mrc10::Opcode::ALL[i % mrc10::Opcode::ALL.len()],
        ));
    }
    // A positive ACK and a remote-access NAK (the AETH forms the core
    // reads), and NACKs of both legacy kinds.
    let mut nak = mrc10::catalog::ack(0x00_0777);
    if let mrc10::Headers::Ack(a) = &mut nak.headers {
        a.syndrome = proto::wire::Syndrome::Nak {
            code: proto::wire::Syndrome::NAK_REMOTE_ACCESS,
        };
    }
    pkts.push(nak);
    pkts.push(mrc10::catalog::ack(0xFF_FFFF));
    pkts.push(mrc10::catalog::nack(0x12_3456, NackReason::TrimmedLastHop));
    pkts.push(mrc10::catalog::nack(0x12_3457, NackReason::NoResource));
    let mut out: Vec<(&'static str, Vec<u8>)> = Vec::new();
    for (i, p) in pkts.iter().enumerate() {
        out.push(("mrc10 v4", emit_mrc10(p, &v4)));
        out.push(("mrc10 v6", emit_mrc10(p, &v6)));
        if i % 5 == 0 {
            out.push(("mrc10 v6 802.1Q", tagged(&emit_mrc10(p, &v6))));
        }
        if i % 9 == 4 {
            // The legacy dialect in the same stream.
            let op = Opcode::ALL[i % Opcode::ALL.len()];
            out.push(("legacy v4", emit(&packet(op, true, 40, 0x0000_2000 + i as u32), &v4)));
        }
    }
    // Hostile transports, resealed so the transport checks see them: cut
    // at every length up to 4 bytes past the chain, and forged fields.
    let dscp = Profile::DEFAULT.dscp.dscp_of(choices::TrafficClass::Trimmable);
    let trimmed = Profile::DEFAULT.dscp.dscp_of(choices::TrafficClass::Trimmed);
    let sources = [
        mrc10::catalog::write(mrc10::Opcode::WriteFirst, 0x40, 100, false),
        mrc10::catalog::write(mrc10::Opcode::WriteLastImm, 0x41, 33, true),
        mrc10::catalog::sack(0x44, false),
        mrc10::catalog::nack(0x45, NackReason::Trimmed),
        mrc10::catalog::ack(0x46),
    ];
    for (k, p) in sources.iter().enumerate() {
        let f = emit_mrc10(p, &v4);
        let at = transport_at(&f);
        let t = f[at..f.len() - 4].to_vec();
        let end = p.transport_header_len();
        for n in 0..=(end + 4).min(t.len()) {
            out.push(("mrc10 cut", frame_with_transport(&t[..n], &v4, dscp)));
        }
        let forge = |edit: &dyn Fn(&mut Vec<u8>)| {
            let mut t2 = t.clone();
            edit(&mut t2);
            t2
        };
        let mut forged = vec![
            forge(&|t| t[0] = 0xC5),                         // in the range, not MRC 1.0
            forge(&|t| t[0] = 0xDC ^ (t[0] & 1)),            // another MRC 1.0 opcode
            forge(&|t| t[1] |= 0x03),                        // TVer
            forge(&|t| t[1] |= 0x30),                        // PadCnt 3
            forge(&|t| t[5..8].copy_from_slice(&[0, 0, 2])), // the endpoint QP
            forge(&|t| t[8] ^= 0x10),                        // TS flipped
            forge(&|t| t[12] |= 0xC0),                       // SETH m = 3, NETH reason
            forge(&|t| t[12] = 0x33),                        // an enum field
            forge(&|t| t.extend([0xAA, 0xBB, 0xCC])),        // bytes after the chain
        ];
        let mut noise = vec![0u8; t.len()];
        r.fill(&mut noise);
        forged.push(noise);
        for (j, t2) in forged.iter().enumerate() {
            let d = if (j + k) % 3 == 0 { trimmed } else { dscp };
            out.push(("mrc10 forged", frame_with_transport(t2, &v4, d)));
        }
    }
    out
}

/// MRC 1.0 frames (every kind of the catalog, random packets of every
/// opcode, IPv4 / IPv6 / 802.1Q, legacy frames between them) and hostile
/// MRC 1.0 transports (cut at every length across the headers, forged
/// opcode, TVer, PadCnt, QP, TS, enum fields, trailing bytes, random
/// bytes), resealed: each record equals the golden parser's verdict
/// (`mrc10::parse_frame`: the reason of a drop), and an accepted frame's
/// record is its legacy translation (`translate`).
#[test]
fn mrc10_frames_judged_by_the_mrc10_parser_and_translated() {
    // The translation's SETH m values are the wire's.
    assert_eq!(translate::SKIP_ONCE, SkipMode::SkipOnce as u64);
    assert_eq!(translate::ALWAYS_SKIP, SkipMode::AlwaysSkip as u64);
    let frames = mrc10_frames();
    let want: Vec<Rec> = frames
        .iter()
        .map(|(_, f)| {
            // The golden parser of the dialect the opcode names (a frame
            // too short to have one is judged alike by both).
            let at = transport_at(f);
            if f.len() > at && u64::from(f[at] >> 5) == translate::MRC10_RANGE {
                expected_mrc10(f)
            } else {
                expected(f)
            }
        })
        .collect();
    let mut by_reason = std::collections::BTreeMap::<u8, usize>::new();
    for w in &want {
        *by_reason.entry(w.reason).or_default() += 1;
    }
    eprintln!("{} frames, by reason: {by_reason:?}", frames.len());
    // Every transport reason the MRC 1.0 parser has, and acceptance.
    for r in [0, 1, 10, 11, 12, 20, 22, 24, 25, 26, reason::HEADER_BEYOND_WINDOW] {
        assert!(by_reason.contains_key(&r), "reason {r} covered: {by_reason:?}");
    }
    // The translation's constants are the protocol's.
    assert_eq!(translate::KIND_TRIMMED, NackKind::Trimmed as u64);
    assert_eq!(translate::KIND_OUT_OF_WINDOW, NackKind::OutOfWindow as u64);
    assert_eq!(translate::KIND_REMOTE_ACCESS, NackKind::RemoteAccess as u64);
    assert_eq!(translate::NACK_TRIMMED, NackReason::Trimmed as u64);
    assert_eq!(translate::NACK_TRIMMED_LAST_HOP, NackReason::TrimmedLastHop as u64);
    assert_eq!(
        translate::SYNDROME_REMOTE_ACCESS,
        u64::from(
            proto::wire::Syndrome::Nak {
                code: proto::wire::Syndrome::NAK_REMOTE_ACCESS
            }
            .to_u8()
        )
    );
    assert_eq!(translate::LEGACY_ACK, u64::from(Opcode::Ack.as_u8()));
    let map = Profile::DEFAULT.dscp;
    assert_eq!(translate::DSCP_TRIMMED, u64::from(map.trimmed));
    assert_eq!(translate::DSCP_TRIMMED_LAST_HOP, u64::from(map.trimmed_last_hop));
    for op in 0..=255u8 {
        let in_range = u64::from(op >> 5) == translate::MRC10_RANGE;
        assert!(!mrc10::is_mrc10_opcode(op) || in_range, "{op:#x}");
        assert!(
            Opcode::from_u8(op).is_none() || !in_range,
            "legacy {op:#x} in the range"
        );
    }
    run_against(frames, want, Drops::Some);
}
