//! The RX parser's emitted Verilog (`mrc_rx_parser`, with its ICRC checker
//! `mrc_rx_icrc` inside), verilated, against the golden codec. The rust-hdl
//! test (hw/tests/rx_parser.rs) runs the Rust models of the hand-written
//! Verilog leaves (`IcrcLanes`, `ByteMask`, `PaddedResidue`, `CrcBlock`,
//! `CrcAdvance`); this one runs their Verilog: frames of many shapes, the
//! same frames with the ICRC's masked fields changed (accepted) and with
//! one byte flipped (mostly `BadIcrc`), with random idle cycles between
//! beats. Every record's reason (and PSN and payload length on
//! acceptance) must match `proto::wire::parse_frame_checked_into`; the
//! same for MRC 1.0 frames against `mrc10::parse_frame_checked_into`
//! (`verilated_parser_matches_golden_on_mrc10_frames`).

use hw::flow::emit_block;
use hw::rx_parser::{reason, RxParser};
use proto::wire::*;
use proto::Psn;
use tb::axis::{AxisPorts, AxisSource};
use tb::rng::Rng;
use tb::stall::Stall;
use verilated::{build, default_cache_dir, BuildOptions, Model};

use verilated::skip_without_verilator;

/// The frame of a WRITE (`opcode`) of `payload` bytes on EV `ev`, an MRC
/// packet (data extension) if `x`.
fn write_frame(opcode: Opcode, payload: usize, ev: u32, x: bool, encap: &Encap) -> Vec<u8> {
    let payload: Vec<u8> = (0..payload).map(|i| (i * 11 + ev as usize) as u8).collect();
    let mut pkt = RocePacket::write(opcode, 0x33, Psn::new(ev & 0xFF_FFFF), payload)
        .on_ev(ev)
        .with_ack_req(true)
        .with_reth(0x8000, 9)
        .with_imm(0x55);
    if x {
        pkt = pkt.with_data_ext(DataExtRepr {
            ev_index: 1,
            retransmit: false,
            ev_seq: 2,
            tx_ts: 3,
            msg_offset: 0,
            placement: (!opcode.has_reth()).then_some(PlacementRepr { va: 0x4000, rkey: 9 }),
        });
    }
    pkt.to_frame(encap).expect("a valid WRITE")
}

/// Frames, each with its IP header offset and IP version.
fn bases(rng: &mut Rng) -> Vec<(Vec<u8>, usize, bool)> {
    let mut out = Vec::new();
    let ops = Opcode::WRITES;
    for i in 0..60usize {
        let is6 = i % 2 == 1;
        let tagged = i % 3 == 0;
        let pay = if i % 20 == 7 {
            3000 + rng.below(6000) as usize
        } else {
            rng.below(200) as usize
        };
        let enc = if is6 { Encap::test_v6() } else { Encap::test_v4() };
        let mut f = write_frame(ops[i % ops.len()], pay, i as u32 + 1, i % 4 != 2, &enc);
        let ip = if tagged {
            f.splice(12..12, [0x81, 0x00, 0x00, i as u8]);
            18
        } else {
            14
        };
        if i % 5 == 4 {
            // Ethernet padding, or hostile trailing bytes over whole beats.
            f.extend((0..rng.below(140)).map(|k| k as u8 ^ 0xC3));
        }
        if !is6 && i % 8 == 2 {
            // IPv4 options (IHL 15), total length, checksum, ICRC fixed.
            f.splice(ip + 20..ip + 20, [1u8; 40]);
            f[ip] = 0x4F;
            let total = u16::from_be_bytes([f[ip + 2], f[ip + 3]]) + 40;
            f[ip + 2..ip + 4].copy_from_slice(&total.to_be_bytes());
            Ipv4Packet::new_unchecked(&mut f[ip..]).fill_checksum();
            let end = ip + usize::from(total);
            let c = icrc::compute_icrc(&f[ip..end - 4], 60, false);
            f[end - 4..end].copy_from_slice(&c.to_le_bytes());
        }
        out.push((f, ip, is6));
    }
    out
}

fn frames() -> Vec<Vec<u8>> {
    let mut rng = Rng::new(0x1C4C);
    let mut out = Vec::new();
    for (f, ip, is6) in bases(&mut rng) {
        let udp = ip + if is6 { 40 } else { usize::from(f[ip] & 0x0F) * 4 };
        let mut m = f.clone();
        if is6 {
            m[ip] ^= 0x03;
            m[ip + 2] ^= 0xFF;
            m[ip + 7] ^= 0x10;
        } else {
            m[ip + 1] ^= 0x02;
            m[ip + 8] ^= 0x21;
            Ipv4Packet::new_unchecked(&mut m[ip..]).fill_checksum();
        }
        m[udp + 6] ^= 0x77;
        m[udp + 12] ^= 0x80;
        out.push(f.clone());
        out.push(m);
        for _ in 0..3 {
            let mut g = f.clone();
            let at = rng.below(g.len() as u64) as usize;
            g[at] ^= rng.below(255) as u8 + 1;
            out.push(g);
        }
    }
    out
}

/// (reason, psn, payload length) as the golden model sees the frame.
fn expected(f: &[u8]) -> (u64, u64, u64) {
    let mut h = ParsedHeaders::new();
    match parse_frame_checked_into(f, &mut h) {
        Err(e) => (e.kind() as u64 + 1, 0, 0),
        Ok(()) => (0, u64::from(h.packet.bth.psn.value()), h.payload.len() as u64),
    }
}

/// Run `frames` through the verilated parser (`model`), back to back for
/// the even-numbered ones, with random idle cycles between beats for the
/// odd ones, and compare each record (reason; PSN and payload length on
/// acceptance) with `want`.
fn run_on_verilog(built: &verilated::Built, frames: &[Vec<u8>], want: &[(u64, u64, u64)]) {
    let mut m = Model::load(built).unwrap();
    let mut rng = Rng::new(7);
    for half in [0, 1] {
        let part: Vec<usize> = (0..frames.len()).filter(|i| i % 2 == half).collect();
        let mut src = AxisSource::new(
            AxisPorts::find(&m, "s_axis$").unwrap(),
            if half == 0 { Stall::NEVER } else { Stall::go_percent(60) },
        );
        for &i in &part {
            src.push(frames[i].clone());
        }
        let (valid, drop) = (m.port("out_valid").unwrap(), m.port("out_drop").unwrap());
        let (reason, psn, plen) = (
            m.port("out_reason").unwrap(),
            m.port("out_psn").unwrap(),
            m.port("out_payload_len").unwrap(),
        );
        let mut got = Vec::new();
        let mut cycles = 0;
        while got.len() < part.len() {
            src.drive(&mut m, &mut rng);
            m.step();
            src.observe(&m);
            if m.get_bit(valid) {
                got.push((0, m.get(psn), m.get(plen)));
            } else if m.get_bit(drop) {
                got.push((m.get(reason), 0, 0));
            }
            cycles += 1;
            assert!(cycles < 100_000, "stuck after {} records", got.len());
        }
        for (k, &i) in part.iter().enumerate() {
            assert_eq!(got[k], want[i], "frame {i} ({} bytes)", frames[i].len());
        }
        eprintln!("half {half}: {} frames in {cycles} cycles", part.len());
    }
}

/// The verilated `mrc_rx_parser` (cached build).
fn built_parser() -> verilated::Built {
    let t = std::time::Instant::now();
    let rtl = emit_block("mrc_rx_parser", &mut RxParser::default());
    let built = build(
        &rtl.verilog,
        "mrc_rx_parser",
        &BuildOptions::default(),
        &default_cache_dir(),
    )
    .unwrap();
    eprintln!("model ready in {:.1} s", t.elapsed().as_secs_f64());
    built
}

/// MRC 1.0 frames: every kind of the catalog (`mrc10::catalog::every_kind`:
/// each WRITE with and without TSETH, retransmitted, NoTrim, trimmed and
/// last-hop trimmed, ACK, both SACK forms, a NACK per reason, a probe,
/// each endpoint operation) and WRITEs of random payload lengths (up to
/// 9 KiB, every pad), over IPv4 and IPv6, a third with an 802.1Q tag,
/// some with Ethernet padding; each as sent, with the fields the ICRC
/// masks changed, and with a random byte flipped.
fn mrc10_frames(rng: &mut Rng) -> Vec<Vec<u8>> {
    use proto::wire::mrc10::{self, catalog, Profile};
    let mut packets = catalog::every_kind();
    for (k, op) in mrc10::Opcode::WRITES.into_iter().enumerate() {
        for ts in [false, true] {
            let len = if k % 3 == 0 {
                3000 + rng.below(6000) as usize
            } else {
                rng.below(300) as usize
            };
            packets.push(catalog::write(op, rng.below(1 << 24) as u32, len, ts));
        }
    }
    let mut out = Vec::new();
    for (i, pkt) in packets.iter().enumerate() {
        for is6 in [false, true] {
            let tagged = (i + usize::from(is6)) % 3 == 0;
            let enc = if is6 { Encap::test_v6() } else { Encap::test_v4() };
            let mut f = Vec::new();
            mrc10::emit_frame(pkt, &enc, &Profile::DEFAULT, &mut f);
            let ip = if tagged {
                f.splice(12..12, [0x81, 0x00, 0x00, i as u8]);
                18
            } else {
                14
            };
            if i % 5 == 4 {
                f.extend((0..rng.below(140)).map(|k| k as u8 ^ 0xC3));
            }
            let udp = ip + if is6 { 40 } else { 20 };
            // The fields the ICRC masks: ECN (IPv4; the traffic class's
            // low bits and the flow label for IPv6), TTL / hop limit with
            // the IPv4 checksum refilled, the UDP checksum.
            let mut m = f.clone();
            if is6 {
                m[ip + 1] ^= 0x30;
                m[ip + 3] ^= 0x5A;
                m[ip + 7] ^= 0x10;
            } else {
                m[ip + 1] ^= 0x01;
                m[ip + 8] ^= 0x21;
                Ipv4Packet::new_unchecked(&mut m[ip..]).fill_checksum();
            }
            m[udp + 6] ^= 0x77;
            out.push(f.clone());
            out.push(m);
            let mut g = f.clone();
            let at = rng.below(g.len() as u64) as usize;
            g[at] ^= rng.below(255) as u8 + 1;
            out.push(g);
        }
    }
    out
}

/// (reason, psn, payload length) as the MRC 1.0 golden parser sees the
/// frame; an accepted chain that ends past the parser's 128-byte window
/// (an EETH behind IPv6 + 802.1Q) is the parser's `HEADER_BEYOND_WINDOW`
/// (docs/hw/mrc10-wire.md, "The RX core").
fn expected_mrc10(f: &[u8]) -> (u64, u64, u64) {
    use proto::wire::mrc10::{self, ParsedFrame, Profile};
    let mut h = ParsedFrame::new();
    match mrc10::parse_frame_checked_into(f, &Profile::DEFAULT, &mut h) {
        Err(e) => (e.kind() as u64 + 1, 0, 0),
        Ok(()) if h.payload.start > PARSER_WINDOW_BYTES => (u64::from(reason::HEADER_BEYOND_WINDOW), 0, 0),
        Ok(()) => (0, u64::from(h.packet.bth.psn.value()), h.payload.len() as u64),
    }
}

/// The bytes of a frame the RX parser's front end holds (beats 0 and 1).
const PARSER_WINDOW_BYTES: usize = 128;

/// MRC 1.0 frames through the parser's Verilog (the legacy front end, the
/// `mrc_rx_parser_mrc10` block inside, the ICRC checker): every record
/// equals the MRC 1.0 golden parser's verdict, PSN and payload length,
/// back to back and with idle cycles between beats.
#[test]
fn verilated_parser_matches_golden_on_mrc10_frames() {
    if skip_without_verilator("the RX parser's Verilog") {
        return;
    }
    let frames = mrc10_frames(&mut Rng::new(0x10C4));
    let want: Vec<(u64, u64, u64)> = frames.iter().map(|f| expected_mrc10(f)).collect();
    let count = |r: u8| want.iter().filter(|w| w.0 == u64::from(r)).count();
    eprintln!(
        "{} MRC 1.0 frames: {} accepted, {} BadIcrc, {} beyond the window",
        want.len(),
        count(reason::OK),
        count(reason::BAD_ICRC),
        count(reason::HEADER_BEYOND_WINDOW)
    );
    assert!(count(reason::OK) >= 150 && count(reason::BAD_ICRC) >= 40, "{want:?}");
    run_on_verilog(&built_parser(), &frames, &want);
}

#[test]
fn verilated_parser_matches_golden_with_icrc() {
    if skip_without_verilator("the RX parser's Verilog") {
        return;
    }
    let frames = frames();
    let want: Vec<(u64, u64, u64)> = frames.iter().map(|f| expected(f)).collect();
    let bad_icrc = want.iter().filter(|w| w.0 == u64::from(reason::BAD_ICRC)).count();
    let accepted = want.iter().filter(|w| w.0 == 0).count();
    eprintln!("{} frames: {bad_icrc} BadIcrc, {accepted} accepted", want.len());
    assert!(
        bad_icrc >= 100 && accepted >= 120,
        "{bad_icrc} BadIcrc, {accepted} accepted of {}",
        want.len()
    );
    run_on_verilog(&built_parser(), &frames, &want);
}
