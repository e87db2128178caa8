//! Cross-check with a third-party decoder: write a pcap of a mix of our
//! packets and assert Wireshark's RoCE dissector (tshark) reads every one as
//! InfiniBand over UDP 4791 with the opcode, destination QP and PSN we sent.
//!
//! tshark is required (CI installs it); set MRC_SKIP_TSHARK=1 to skip.
//! Wireshark 4.0 displays the ICRC (`infiniband.invariant.crc`, read from
//! the last 4 bytes and shown big-endian) but has no field or expert info
//! for its validity, so we assert that what it shows is our trailer; the
//! value itself is checked against a NIC capture in `icrc.rs`.
//! On IPv6 it adds the expert note "Illegal checksum value (0)" for the UDP
//! checksum: RoCEv2 NICs send 0 there too (the ICRC protects the datagram).

mod wire_common;

use std::process::Command;

use proto::wire::pcap::PcapWriter;
use proto::wire::*;
use proto::Instant;
use wire_common::*;

fn tshark_available() -> bool {
    Command::new("tshark")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn packets() -> Vec<(RocePacket, Encap)> {
    let mut v = Vec::new();
    let mut psn = 0xFF_FFF0u32; // crosses the 24-bit wrap
    for encap in [Encap::test_v4(), Encap::test_v6()] {
        for op in [
            Opcode::WriteFirst,
            Opcode::WriteMiddle,
            Opcode::WriteLast,
            Opcode::WriteOnly,
            Opcode::WriteOnlyImm,
            Opcode::WriteLastImm,
        ] {
            let mut p = write_packet(op, psn, 256 + (psn as usize % 4));
            p.bth.dest_qp = 0x00AB_CD00 | (psn & 0xFF);
            v.push((p, encap));
            psn = (psn + 1) & 0xFF_FFFF;
        }
        // The RC baseline form of a WRITE (no X bit, no extension).
        let mut rc = write_packet(Opcode::WriteOnly, psn, 64);
        rc.bth.mrc_ext = false;
        rc.ext = None;
        v.push((rc, encap));
        for bits in [64, 128, 256] {
            v.push((ack_packet(sack(bits), psn), encap.reversed()));
        }
        for kind in [NackKind::Trimmed, NackKind::OutOfWindow, NackKind::RemoteAccess] {
            v.push((ack_packet(nack(kind), psn), encap.reversed()));
        }
        v.push((ack_packet(probe(false), psn), encap));
        v.push((ack_packet(probe(true), psn), encap.reversed()));
        v.push((cnp(0), encap.reversed()));
    }
    v
}

fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

#[test]
fn tshark_decodes_our_frames() {
    if std::env::var("MRC_SKIP_TSHARK").as_deref() == Ok("1") {
        eprintln!("MRC_SKIP_TSHARK=1: skipping the tshark cross-check");
        return;
    }
    assert!(
        tshark_available(),
        "tshark not found: install it (apt-get install -y tshark) or set MRC_SKIP_TSHARK=1"
    );
    let pkts = packets();
    let dir = std::env::temp_dir().join(format!("mrc-wire-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mix.pcap");
    let mut frames = Vec::new();
    {
        let mut w = PcapWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
        for (i, (p, e)) in pkts.iter().enumerate() {
            let f = emit(p, e);
            assert_eq!(parse_frame(&f).unwrap(), (p.clone(), *e));
            w.write_frame(Instant::from_ns(1_000 * i as u64), &f).unwrap();
            frames.push(f);
        }
        w.flush().unwrap();
    }
    let out = Command::new("tshark")
        .arg("-r")
        .arg(&path)
        .args(["-T", "fields", "-E", "separator=;", "-E", "occurrence=f"])
        .args(["-e", "frame.protocols", "-e", "udp.dstport"])
        .args([
            "-e",
            "infiniband.bth.opcode",
            "-e",
            "infiniband.bth.destqp",
            "-e",
            "infiniband.bth.psn",
        ])
        .args(["-e", "infiniband.invariant.crc"])
        .output()
        .expect("run tshark");
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), pkts.len(), "tshark output:\n{text}");
    let mut icrc_seen = 0;
    for (i, ((p, _), line)) in pkts.iter().zip(&lines).enumerate() {
        let f: Vec<&str> = line.split(';').collect();
        assert_eq!(f.len(), 6, "frame {i}: {line}");
        assert!(f[0].contains("udp:infiniband"), "frame {i} not decoded as RoCE: {line}");
        assert_eq!(parse_num(f[1]), Some(4791), "frame {i}: {line}");
        assert_eq!(
            parse_num(f[2]),
            Some(u64::from(p.bth.opcode.as_u8())),
            "frame {i} opcode: {line}"
        );
        assert_eq!(
            parse_num(f[3]),
            Some(u64::from(p.bth.dest_qp)),
            "frame {i} dest QP: {line}"
        );
        assert_eq!(
            parse_num(f[4]),
            Some(u64::from(p.bth.psn.value())),
            "frame {i} PSN: {line}"
        );
        // Where Wireshark located the ICRC (it does for packets whose
        // headers it fully understands), it must be the trailer we wrote.
        if let Some(v) = parse_num(f[5]) {
            let fr = &frames[i];
            let n = fr.len();
            let be = u32::from_be_bytes([fr[n - 4], fr[n - 3], fr[n - 2], fr[n - 1]]);
            let le = u32::from_le_bytes([fr[n - 4], fr[n - 3], fr[n - 2], fr[n - 1]]);
            assert!(
                v == u64::from(be) || v == u64::from(le),
                "frame {i}: ICRC {v:#x} is not our trailer"
            );
            icrc_seen += 1;
        }
    }
    eprintln!(
        "tshark decoded {} frames; it displayed the ICRC of {icrc_seen}",
        pkts.len()
    );
    if std::env::var("MRC_KEEP_PCAP").is_err() {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        eprintln!("pcap kept at {}", path.display());
    }
}
