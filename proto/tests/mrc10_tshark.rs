//! The MRC 1.0 Wireshark dissector (`tools/wireshark/mrc.lua`) against our
//! emitter: a capture holding every MRC 1.0 packet kind (the catalog, over
//! IPv4 and IPv6), written with our pcap writer, read by stock tshark with
//! the dissector loaded. Every packet must decode as MRC 1.0, every field
//! with the value we emitted (and no field of another packet kind), with no
//! malformed packet and no expert error from the dissector; legacy-profile
//! frames in the same capture go to the stock RoCE dissector. The same
//! capture read back through our pcap reader and parser gives the packets.
//!
//! tshark is installed by scripts/deps.sh; without it the test says so and
//! passes (set MRC_REQUIRE_TSHARK=1 to make a missing tshark a failure).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use proto::wire::mrc10::{self, catalog, Headers, Mrc10Packet, Profile, TrafficClass};
use proto::wire::pcap::{PcapReader, PcapWriter};
use proto::wire::{Encap, IpPair, Syndrome};
use proto::Instant;

fn tshark_available() -> bool {
    Command::new("tshark")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn dissector() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tools/wireshark/mrc.lua")
}

/// A field value as we emitted it.
#[derive(Clone, Debug, PartialEq)]
enum V {
    N(i64),
    B(bool),
    S(String),
    Hex(Vec<u8>),
}

/// Every field the dissector must show for `p`, with its value.
fn expected(p: &Mrc10Packet, frame: &[u8], v6: bool) -> BTreeMap<&'static str, V> {
    let n = |x: u64| V::N(x as i64);
    let mut m = BTreeMap::new();
    let ev = if v6 { p.ev } else { p.ev & 0xFFFF };
    m.insert("mrc10.ev", n(ev.into()));
    let class = match p.class {
        TrafficClass::Other(d) => format!("DSCP_{d}"),
        c => c.name(),
    };
    m.insert("mrc10.class", V::S(class));
    m.insert("mrc10.headers", V::S(p.headers.names().join(" ")));
    let b = &p.bth;
    m.insert("mrc10.bth.opcode", n(b.opcode.as_u8().into()));
    m.insert("mrc10.bth.se", V::B(b.solicited));
    m.insert("mrc10.bth.m", V::B(b.mig_req));
    m.insert("mrc10.bth.padcnt", n(b.pad.into()));
    m.insert("mrc10.bth.tver", n(0));
    m.insert("mrc10.bth.pkey", n(b.pkey.into()));
    m.insert("mrc10.bth.fecn", V::B(b.fecn));
    m.insert("mrc10.bth.becn", V::B(b.becn));
    m.insert("mrc10.bth.destqp", n(b.dest_qp.into()));
    m.insert("mrc10.bth.ackreq", V::B(b.ack_req));
    m.insert("mrc10.bth.retx", V::B(b.retransmit));
    m.insert("mrc10.bth.ts", V::B(b.timestamp));
    m.insert("mrc10.bth.psn", n(b.psn.value().into()));
    match &p.headers {
        Headers::Write(w) => {
            m.insert("mrc10.meth.rqmsn", n(w.meth.rq_msn.into()));
            m.insert("mrc10.meth.msn", n(w.meth.msn.into()));
            if let Some(t) = &w.tseth {
                m.insert("mrc10.tseth.tx_ts", n(t.tx_ts.into()));
                m.insert("mrc10.tseth.resolution", V::B(t.resolution));
                m.insert("mrc10.tseth.format", n(t.format.into()));
            }
            m.insert("mrc10.reth.va", n(w.reth.va));
            m.insert("mrc10.reth.rkey", n(w.reth.rkey.into()));
            m.insert("mrc10.reth.dmalen", n(w.reth.dma_len.into()));
            if let Some(imm) = w.imm {
                m.insert("mrc10.immdt", n(imm.into()));
            }
            if !p.payload.is_empty() {
                m.insert("mrc10.payload", V::Hex(p.payload.to_vec()));
            }
            if p.wire_pad() > 0 {
                m.insert("mrc10.pad", V::Hex(vec![0; p.wire_pad()]));
            }
        }
        Headers::Ack(a) => {
            let s = a.syndrome.to_u8();
            m.insert("mrc10.aeth.syndrome", n(s.into()));
            m.insert("mrc10.aeth.syndrome.type", n(((s >> 5) & 3).into()));
            m.insert("mrc10.aeth.syndrome.value", n((s & 0x1F).into()));
            assert!(matches!(a.syndrome, Syndrome::Ack { .. }));
            m.insert("mrc10.aeth.msn", n(a.msn.into()));
        }
        Headers::Sack { seth, cc_state } => {
            m.insert("mrc10.seth.m", n(seth.skip_mode.as_u8().into()));
            m.insert("mrc10.seth.pr", V::B(seth.probe_response));
            m.insert("mrc10.seth.ack_psn_offset", V::N(seth.ack_psn_offset.into()));
            m.insert("mrc10.seth.ev", n(seth.ev.into()));
            m.insert("mrc10.seth.sender_context", n(seth.sender_context.into()));
            m.insert("mrc10.seth.receiver_context", n(seth.receiver_context.into()));
            m.insert("mrc10.seth.cum_ack_psn", n(seth.cum_ack_psn.value().into()));
            m.insert("mrc10.seth.cc_type", n(seth.cc_type.into()));
            m.insert("mrc10.seth.cc_flags", n(seth.cc_flags.into()));
            m.insert("mrc10.seth.mpr", n(seth.mpr.into()));
            m.insert("mrc10.seth.sack_offset", V::N(seth.sack_offset.into()));
            m.insert("mrc10.seth.bitmap", n(seth.bitmap));
            m.insert("mrc10.cc_state.echo_ts", n(cc_state.echo_ts.into()));
            m.insert("mrc10.cc_state.restore", V::B(cc_state.restore));
            m.insert("mrc10.cc_state.ooo_count", n(cc_state.ooo_count.into()));
            m.insert("mrc10.cc_state.cwnd_penalty", n(cc_state.cwnd_penalty.into()));
            m.insert("mrc10.cc_state.rcvd_bytes", n(cc_state.rcvd_bytes.into()));
        }
        Headers::Nack(x) => {
            m.insert("mrc10.neth.reason", n(x.reason.as_u8().into()));
            m.insert("mrc10.neth.vendor_info", n(x.vendor_info.into()));
            m.insert("mrc10.neth.ev", n(x.ev.into()));
            m.insert("mrc10.neth.sender_context", n(x.sender_context.into()));
            m.insert("mrc10.neth.receiver_context", n(x.receiver_context.into()));
            m.insert("mrc10.neth.nack_psn", n(x.nack_psn.value().into()));
            m.insert("mrc10.neth.cc_type", n(x.cc_type.into()));
            m.insert("mrc10.neth.cc_flags", n(x.cc_flags.into()));
            m.insert("mrc10.neth.timestamp", n(x.timestamp.into()));
        }
        Headers::Probe(x) => {
            m.insert("mrc10.peth.probe_id", n(x.probe_id.into()));
            m.insert("mrc10.peth.sender_context", n(x.sender_context.into()));
            m.insert("mrc10.peth.receiver_context", n(x.receiver_context.into()));
            m.insert("mrc10.peth.timestamp", n(x.timestamp.into()));
        }
        Headers::Endpoint { erth, eeth } => {
            m.insert("mrc10.erth.op", n(erth.op.as_u8().into()));
            m.insert("mrc10.erth.request_id", n(erth.request_id.into()));
            m.insert("mrc10.erth.port_status_mask", n(erth.port_status_mask.into()));
            m.insert("mrc10.erth.timestamp", n(erth.timestamp.into()));
            if let Some(e) = eeth {
                m.insert("mrc10.eeth.ev_format", n(e.ev_format.as_u8().into()));
                m.insert("mrc10.eeth.port", n(e.port.into()));
                m.insert("mrc10.eeth.service_time", n(e.service_time.into()));
                m.insert("mrc10.eeth.ev", V::Hex(e.ev.to_vec()));
            }
        }
    }
    let t = &frame[frame.len() - 4..];
    m.insert("mrc10.icrc", n(u32::from_le_bytes([t[0], t[1], t[2], t[3]]).into()));
    m
}

/// Every field name the dissector defines (each must appear in some packet).
fn all_fields(exp: &[BTreeMap<&'static str, V>]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = exp.iter().flat_map(|m| m.keys().copied()).collect();
    v.sort();
    v.dedup();
    v
}

fn matches(shown: &str, want: &V) -> bool {
    let shown = shown.trim();
    match want {
        V::N(x) => {
            let got = match shown.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).ok().map(|u| u as i64),
                None => shown.parse::<i64>().ok(),
            };
            got == Some(*x)
        }
        V::B(b) => matches!(
            (shown, b),
            ("1" | "True" | "true", true) | ("0" | "False" | "false", false)
        ),
        V::S(s) => shown == s,
        V::Hex(bytes) => {
            let h: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            shown.replace(':', "").to_ascii_lowercase() == h
        }
    }
}

fn capture() -> Vec<(Mrc10Packet, Encap, Vec<u8>)> {
    let mut v = Vec::new();
    for encap in [Encap::test_v4(), Encap::test_v6()] {
        for mut p in catalog::every_kind() {
            if matches!(encap.ip, IpPair::V4 { .. }) {
                p.ev &= 0xFFFF;
            }
            p.validate(&Profile::DEFAULT).unwrap();
            let mut f = Vec::new();
            mrc10::emit_frame(&p, &encap, &Profile::DEFAULT, &mut f);
            v.push((p, encap, f));
        }
    }
    v
}

/// Legacy-profile frames (a data packet and a CNP).
fn legacy_frames() -> Vec<Vec<u8>> {
    use proto::wire::{emit_frame, Opcode, RocePacket};
    let data = RocePacket::write(Opcode::WriteOnly, 0x12, proto::Psn::new(9), vec![7u8; 32]);
    let mut cnp = RocePacket::write(Opcode::WriteOnly, 0x12, proto::Psn::new(0), Vec::new());
    cnp.bth.opcode = Opcode::Cnp;
    cnp.bth.becn = true;
    cnp.reth = None;
    [data, cnp]
        .iter()
        .map(|p| {
            p.validate().expect("valid legacy packet");
            let mut f = Vec::new();
            emit_frame(p, &Encap::test_v4(), &mut f);
            f
        })
        .collect()
}

#[test]
fn tshark_decodes_every_mrc10_packet_kind() {
    let pkts = capture();
    let dir = std::env::temp_dir().join(format!("mrc10-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mrc10.pcap");
    let mut w = PcapWriter::new(Vec::new()).unwrap();
    for (i, (_, _, f)) in pkts.iter().enumerate() {
        w.write_frame(Instant::from_ns(1_000 * i as u64), f).unwrap();
    }
    // Legacy-profile frames after them: the stock RoCE dissector must keep
    // them.
    let legacy = legacy_frames();
    for (i, f) in legacy.iter().enumerate() {
        w.write_frame(Instant::from_ns(1_000 * (pkts.len() + i) as u64), f)
            .unwrap();
    }
    let file = w.into_inner();
    std::fs::write(&path, &file).unwrap();

    // Our reader and parser give back what was written.
    let back: Vec<_> = PcapReader::new(&file).unwrap().map(Result::unwrap).collect();
    assert_eq!(back.len(), pkts.len() + legacy.len());
    for (r, (p, e, f)) in back.iter().zip(&pkts) {
        assert_eq!(r.data, &f[..]);
        assert_eq!(mrc10::parse_frame(r.data, &Profile::DEFAULT).unwrap(), (p.clone(), *e));
    }

    if !tshark_available() {
        assert!(
            std::env::var("MRC_REQUIRE_TSHARK").is_err(),
            "tshark not found and MRC_REQUIRE_TSHARK is set"
        );
        eprintln!("SKIPPED the dissector check: tshark not found (scripts/deps.sh installs it)");
        return;
    }
    let lua = format!("lua_script:{}", dissector().display());
    let exp: Vec<_> = pkts
        .iter()
        .map(|(p, e, f)| expected(p, f, matches!(e.ip, IpPair::V6 { .. })))
        .collect();
    let fields = all_fields(&exp);
    let mut cmd = Command::new("tshark");
    cmd.args(["-X", &lua, "-r"]).arg(&path);
    cmd.args(["-T", "fields", "-E", "separator=\t", "-E", "occurrence=f"]);
    cmd.args(["-e", "frame.protocols"]);
    for f in &fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("run tshark");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tshark failed: {stderr}");
    assert!(!stderr.contains("Lua"), "dissector error: {stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    let all_lines: Vec<&str> = text.lines().collect();
    assert_eq!(all_lines.len(), pkts.len() + legacy.len(), "tshark output:\n{text}");
    let (lines, legacy_lines) = all_lines.split_at(pkts.len());
    for (i, line) in legacy_lines.iter().enumerate() {
        let cols: Vec<&str> = line.split('\t').collect();
        assert!(
            cols[0].contains(":infiniband"),
            "legacy frame {i} not given to RoCE: {line}"
        );
        assert!(
            cols[1..].iter().all(|c| c.is_empty()),
            "legacy frame {i} has MRC 1.0 fields: {line}"
        );
    }
    let mut checked = 0;
    for (i, (line, want)) in lines.iter().zip(&exp).enumerate() {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), fields.len() + 1, "frame {i}: {line}");
        assert!(
            cols[0].ends_with("udp:mrc10"),
            "frame {i} not decoded as MRC 1.0: {}",
            cols[0]
        );
        for (name, shown) in fields.iter().zip(&cols[1..]) {
            match want.get(name) {
                Some(v) => {
                    assert!(
                        matches(shown, v),
                        "frame {i} {name}: tshark shows {shown:?}, we sent {v:?}"
                    );
                    checked += 1;
                }
                None => assert!(shown.is_empty(), "frame {i}: {name} = {shown:?} on a packet without it"),
            }
        }
    }

    // No malformed packet, no expert error from the dissector. (Over IPv6
    // the UDP dissector flags the zero UDP checksum, which RoCEv2 NICs send
    // too: the ICRC protects the datagram.)
    let verbose = Command::new("tshark")
        .args(["-X", &lua, "-r"])
        .arg(&path)
        .arg("-V")
        .output()
        .expect("run tshark -V");
    let v = String::from_utf8_lossy(&verbose.stdout);
    assert!(!v.contains("Malformed"), "malformed packet:\n{v}");
    let errors: Vec<&str> = v
        .lines()
        .filter(|l| l.contains("Expert Info (Error") && !l.contains("Illegal checksum value (0)"))
        .collect();
    assert!(errors.is_empty(), "expert errors: {errors:#?}");
    assert!(v.matches("MRC 1.0, ").count() >= pkts.len());
    eprintln!(
        "tshark decoded {} MRC 1.0 frames, {} field values checked over {} fields",
        pkts.len(),
        checked,
        fields.len()
    );
    if std::env::var("MRC_KEEP_PCAP").is_err() {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        eprintln!("pcap kept at {}", path.display());
    }
}

/// The dissector's expert errors fire on forged input (the check above
/// cannot pass vacuously): an unknown NACK reason, a connection opcode to
/// the endpoint QP, a truncated SETH.
#[test]
fn tshark_flags_forged_mrc10_packets() {
    if !tshark_available() {
        eprintln!("SKIPPED: tshark not found (scripts/deps.sh installs it)");
        return;
    }
    let profile = Profile::DEFAULT;
    let mut frames = Vec::new();
    let forge = |p: Mrc10Packet, at: usize, v: &[u8], cut: usize| {
        let mut f = Vec::new();
        mrc10::emit_frame(&p, &Encap::test_v4(), &profile, &mut f);
        f[42 + at..42 + at + v.len()].copy_from_slice(v);
        let keep = f.len() - cut;
        let mut g = f[..keep - 4].to_vec();
        g.extend_from_slice(&f[f.len() - 4..]);
        let udp_len = (g.len() - 34) as u16;
        g[38..40].copy_from_slice(&udp_len.to_be_bytes());
        let ip_len = (g.len() - 14) as u16;
        g[16..18].copy_from_slice(&ip_len.to_be_bytes());
        proto::wire::icrc::reseal_frame(&mut g);
        g
    };
    frames.push(forge(catalog::nack(1, mrc10::NackReason::Trimmed), 12, &[0x03], 0));
    frames.push(forge(catalog::ack(1), 5, &[0, 0, 2], 0));
    frames.push(forge(catalog::sack(1, false), 0, &[0xDC], 10));
    let dir = std::env::temp_dir().join(format!("mrc10-tshark-forged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("forged.pcap");
    let mut w = PcapWriter::new(Vec::new()).unwrap();
    for (i, f) in frames.iter().enumerate() {
        w.write_frame(Instant::from_ns(i as u64), f).unwrap();
    }
    std::fs::write(&path, w.into_inner()).unwrap();
    let lua = format!("lua_script:{}", dissector().display());
    let out = Command::new("tshark")
        .args(["-X", &lua, "-r"])
        .arg(&path)
        .args(["-T", "fields", "-e", "_ws.expert.message"])
        .output()
        .expect("run tshark");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !stderr.contains("Lua"), "tshark: {stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].contains("outside MRC 1.0"), "{text}");
    assert!(lines[1].contains("QP 0x2"), "{text}");
    assert!(lines[2].contains("truncated"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
