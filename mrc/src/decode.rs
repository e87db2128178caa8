//! `mrc decode`: run the project's parsers over every packet of a capture
//! and print each packet's verdict: MRC 1.0 (opcodes 0xC6-0xDE), the legacy
//! profile the RTL speaks, or the typed error that dropped it. The
//! tool for interop debugging with captures from other NICs.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use proto::wire::mrc10::{self, EvMode, Mrc10Packet, Profile};
use proto::wire::pcap::{PcapError, PcapReader, PcapRecord, LINKTYPE_ETHERNET};
use proto::wire::{self, Encap, MrcExtRepr, RocePacket, WireError};
use serde_json::json;

/// Options of `mrc decode`.
#[derive(Args, Debug)]
pub struct DecodeArgs {
    /// Capture to decode: classic pcap (either byte order, micro- or
    /// nanosecond timestamps), Ethernet link type.
    pub file: PathBuf,
    /// One JSON object per packet, then one with the summary.
    #[arg(long)]
    pub json: bool,
    /// EVs are 16-bit, in the UDP source port only (default: 32-bit, the
    /// IPv6 flow label carrying bits 31-16).
    #[arg(long)]
    pub ev16: bool,
}

/// Why a capture in memory cannot be decoded at all.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum CaptureError {
    #[error(transparent)]
    Pcap(#[from] PcapError),
    #[error("link type {0} is not Ethernet ({LINKTYPE_ETHERNET})")]
    LinkType(u32),
}

/// Why `mrc decode` cannot decode its file (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("{path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}: {source}")]
    Capture { path: PathBuf, source: CaptureError },
}

/// What the parsers made of one record.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Mrc10(Box<(Mrc10Packet, Encap)>),
    Legacy(Box<(RocePacket, Encap)>),
    /// Both parsers rejected the frame; this is the error of the one its
    /// opcode belongs to (or of the outer headers, which both share).
    Error(WireError),
    /// The file ends inside this record.
    Pcap(PcapError),
}

impl Verdict {
    /// Traffic that is not RoCEv2 at all (not IP, not UDP, or another UDP
    /// port): a capture from a NIC port holds some, and it is no parse
    /// failure.
    pub fn not_rocev2(&self) -> bool {
        matches!(
            self,
            Verdict::Error(WireError::BadEtherType(_) | WireError::NotUdp(_) | WireError::WrongUdpPort(_))
        )
    }
    /// The summary bucket.
    pub fn name(&self) -> String {
        match self {
            Verdict::Mrc10(_) => "mrc1.0".into(),
            Verdict::Legacy(_) => "legacy".into(),
            Verdict::Error(e) if self.not_rocev2() => format!("other:{:?}", e.kind()),
            Verdict::Error(e) => format!("error:{:?}", e.kind()),
            Verdict::Pcap(_) => "error:pcap".into(),
        }
    }
    /// Not a failure: parsed, or not RoCEv2.
    pub fn parsed(&self) -> bool {
        matches!(self, Verdict::Mrc10(_) | Verdict::Legacy(_)) || self.not_rocev2()
    }
}

/// Parse one frame: MRC 1.0 first; a frame whose opcode is not MRC 1.0's
/// goes to the legacy parser.
pub fn classify(frame: &[u8], profile: &Profile) -> Verdict {
    match mrc10::parse_frame(frame, profile) {
        Ok(p) => Verdict::Mrc10(Box::new(p)),
        Err(WireError::UnknownOpcode(op)) if !mrc10::is_mrc10_opcode(op) => match wire::parse_frame(frame) {
            Ok(p) => Verdict::Legacy(Box::new(p)),
            Err(e) => Verdict::Error(e),
        },
        Err(e) => Verdict::Error(e),
    }
}

fn legacy_headers(p: &RocePacket) -> Vec<&'static str> {
    let mut v = Vec::new();
    if p.reth.is_some() {
        v.push("RETH");
    }
    if p.imm.is_some() {
        v.push("ImmDt");
    }
    if p.aeth.is_some() {
        v.push("AETH");
    }
    if p.bth.opcode == wire::Opcode::Cnp {
        v.push("CNP");
    }
    v.push(match p.ext {
        None => "",
        Some(MrcExtRepr::Data(_)) => "MRC_EXT_DATA",
        Some(MrcExtRepr::Sack(_)) => "MRC_EXT_SACK",
        Some(MrcExtRepr::Nack(_)) => "MRC_EXT_NACK",
        Some(MrcExtRepr::Probe(_)) => "MRC_EXT_PROBE",
    });
    v.retain(|s| !s.is_empty());
    v
}

fn time(ts_ns: u64) -> String {
    format!("{}.{:09}", ts_ns / 1_000_000_000, ts_ns % 1_000_000_000)
}

/// One line of text for a record.
pub fn text_line(index: u64, ts_ns: u64, len: u32, v: &Verdict) -> String {
    let head = format!("{:>6} {} {:>5}", index + 1, time(ts_ns), len);
    match v {
        Verdict::Mrc10(b) => {
            let p = &b.0;
            format!(
                "{head} ev={:#010x} MRC1.0 {} qp={:#08x} psn={} {} payload={}",
                p.ev,
                p.bth.opcode.name(),
                p.bth.dest_qp,
                p.bth.psn.value(),
                p.headers.names().join(" "),
                p.payload.len()
            )
        }
        Verdict::Legacy(b) => {
            let p = &b.0;
            format!(
                "{head} ev={:#010x} legacy {:?} qp={:#08x} psn={} {} payload={}",
                p.ev,
                p.bth.opcode,
                p.bth.dest_qp,
                p.bth.psn.value(),
                legacy_headers(p).join(" "),
                p.payload.len()
            )
        }
        Verdict::Error(e) if v.not_rocev2() => format!("{head} other (not RoCEv2) {:?}: {e}", e.kind()),
        Verdict::Error(e) => format!("{head} error {:?}: {e}", e.kind()),
        Verdict::Pcap(e) => format!("{head} error pcap: {e}"),
    }
}

/// One JSON object for a record.
pub fn json_line(index: u64, ts_ns: u64, len: u32, v: &Verdict) -> serde_json::Value {
    let mut o = json!({ "index": index + 1, "time": time(ts_ns), "len": len, "verdict": v.name() });
    match v {
        Verdict::Mrc10(b) => {
            let p = &b.0;
            o["ev"] = json!(p.ev);
            o["class"] = json!(p.class.name());
            o["ecn"] = json!(p.ecn);
            o["opcode"] = json!(p.bth.opcode.name());
            o["dest_qp"] = json!(p.bth.dest_qp);
            o["psn"] = json!(p.bth.psn.value());
            o["bth"] = json!(p.bth);
            o["headers"] = json!(p.headers.names());
            o["fields"] = json!(p.headers);
            o["payload_len"] = json!(p.payload.len());
        }
        Verdict::Legacy(b) => {
            let p = &b.0;
            o["ev"] = json!(p.ev);
            o["opcode"] = json!(format!("{:?}", p.bth.opcode));
            o["dest_qp"] = json!(p.bth.dest_qp);
            o["psn"] = json!(p.bth.psn.value());
            o["headers"] = json!(legacy_headers(p));
            o["payload_len"] = json!(p.payload.len());
        }
        Verdict::Error(e) => o["error"] = json!(e.to_string()),
        Verdict::Pcap(e) => o["error"] = json!(e.to_string()),
    }
    o
}

/// One decoded packet: the capture record it is in, which segment of it
/// (a run sent with UDP segmentation offload, [`split_gso`]; `None`: the
/// record is one packet) and the parsers' verdict.
#[derive(Clone, Debug)]
pub struct Decoded<'a> {
    pub rec: PcapRecord<'a>,
    pub segment: Option<usize>,
    pub verdict: Verdict,
}

/// A record the parsers rejected, split into the datagrams of a run sent
/// with UDP segmentation offload (`UDP_SEGMENT`), as a capture on the
/// sending host records it before the kernel splits it (on `lo`, a soft
/// NIC's default): one oversized datagram whose UDP payload is the
/// segments' payloads back to back, every one `s` bytes but the last. The
/// segment size is not in the capture; MRC packets carry no length, so
/// it is found as the smallest `s` at which a BTH for the same
/// destination QP follows and at which the first segment, given its own
/// IP and UDP lengths, passes the ICRC; then every segment must parse.
/// Each segment's frame is the record's outer headers with its own
/// lengths (IPv4 identification 0, as the sender's ICRC assumed: a real
/// wire would carry 0, 1, 2, ...). `None` if the record is no such run
/// (a run mixing destination QPs is not recognised).
pub fn split_gso(frame: &[u8], profile: &Profile) -> Option<Vec<(Vec<u8>, Verdict)>> {
    let outer = wire::frame::parse_outer(frame, false).ok()?;
    let udp_payload_len = outer.transport.len() + wire::frame::ICRC_LEN;
    let payload = frame.get(outer.transport_at..outer.transport_at + udp_payload_len)?;
    let smallest = wire::bth::HEADER_LEN + wire::frame::ICRC_LEN;
    // BTH bytes 5..8: the destination QP.
    let dest_qp = &payload[5..8];
    let segment_frame = |seg: &[u8]| {
        let fields = wire::frame::OuterFields {
            dscp: outer.dscp,
            ecn: outer.ecn,
            src_port: outer.src_port,
            flow_label: outer.flow_label.unwrap_or(0),
            udp_len: seg.len(),
        };
        let head = outer.transport_at;
        let mut f = vec![0u8; head + seg.len()];
        let (at, _) = wire::frame::emit_outer(&outer.encap, &fields, &mut f);
        f[at..].copy_from_slice(seg);
        f
    };
    let parsed = |v: &Verdict| matches!(v, Verdict::Mrc10(_) | Verdict::Legacy(_));
    for size in smallest..payload.len() {
        let Some(next) = payload.get(size..size + wire::bth::HEADER_LEN) else {
            break;
        };
        if &next[5..8] != dest_qp || payload.len() - size < smallest {
            continue;
        }
        let first = segment_frame(&payload[..size]);
        if !parsed(&classify(&first, profile)) {
            continue;
        }
        let segments: Vec<(Vec<u8>, Verdict)> = payload
            .chunks(size)
            .map(|seg| {
                let f = segment_frame(seg);
                let v = classify(&f, profile);
                (f, v)
            })
            .collect();
        if segments.iter().all(|(_, v)| parsed(v)) {
            return Some(segments);
        }
    }
    None
}

/// Decode a whole capture held in memory: each packet's verdict, in
/// order (a record holding a run sent with segmentation offload gives one
/// per segment, [`split_gso`]).
pub fn decode<'a>(bytes: &'a [u8], profile: &Profile) -> Result<Vec<Decoded<'a>>, CaptureError> {
    let reader = PcapReader::new(bytes)?;
    if reader.link_type() != LINKTYPE_ETHERNET {
        return Err(CaptureError::LinkType(reader.link_type()));
    }
    let mut out = Vec::new();
    let mut next_index = 0;
    for r in reader {
        match r {
            Ok(rec) => {
                next_index = rec.index + 1;
                let verdict = classify(rec.data, profile);
                let split = match verdict {
                    Verdict::Error(_) if !verdict.not_rocev2() => split_gso(rec.data, profile),
                    _ => None,
                };
                match split {
                    Some(segments) => {
                        for (k, (f, verdict)) in segments.into_iter().enumerate() {
                            let rec = PcapRecord {
                                orig_len: f.len() as u32,
                                data: &[],
                                ..rec
                            };
                            out.push(Decoded {
                                rec,
                                segment: Some(k),
                                verdict,
                            });
                        }
                    }
                    None => out.push(Decoded {
                        rec,
                        segment: None,
                        verdict,
                    }),
                }
            }
            Err(e) => {
                let rec = PcapRecord {
                    index: next_index,
                    ts_ns: 0,
                    orig_len: 0,
                    data: &[],
                };
                out.push(Decoded {
                    rec,
                    segment: None,
                    verdict: Verdict::Pcap(e),
                });
            }
        }
    }
    Ok(out)
}

fn print(json: bool, records: &[Decoded<'_>], counts: &BTreeMap<String, u64>) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for d in records {
        let rec = &d.rec;
        if json {
            let mut o = json_line(rec.index, rec.ts_ns, rec.orig_len, &d.verdict);
            if let Some(k) = d.segment {
                o["segment"] = json!(k);
            }
            writeln!(out, "{o}")?;
        } else {
            let line = text_line(rec.index, rec.ts_ns, rec.orig_len, &d.verdict);
            match d.segment {
                Some(k) => writeln!(out, "{line} (segment {k} of an offloaded run)")?,
                None => writeln!(out, "{line}")?,
            }
        }
    }
    if json {
        writeln!(
            out,
            "{}",
            json!({ "summary": { "packets": records.len(), "verdicts": counts } })
        )?;
    } else {
        let per: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
        writeln!(out, "{} packets: {}", records.len(), per.join(", "))?;
    }
    out.flush()
}

/// Run `mrc decode`: `Ok(true)` when every record parsed.
pub fn run(args: &DecodeArgs) -> Result<bool, DecodeError> {
    let bytes = std::fs::read(&args.file).map_err(|source| DecodeError::Read {
        path: args.file.clone(),
        source,
    })?;
    let mut profile = Profile::DEFAULT;
    if args.ev16 {
        profile.ev_mode = EvMode::SourcePort;
    }
    let records = decode(&bytes, &profile).map_err(|source| DecodeError::Capture {
        path: args.file.clone(),
        source,
    })?;
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for d in &records {
        *counts.entry(d.verdict.name()).or_default() += 1;
    }
    let all_parsed = records.iter().all(|d| d.verdict.parsed());
    // A reader that stops early (`| head`) is not an error of the capture.
    let _ = print(args.json, &records, &counts);
    Ok(all_parsed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::wire::mrc10::catalog;
    use proto::wire::pcap::PcapWriter;
    use proto::wire::{emit_frame, RocePacket};
    use proto::{Instant, Psn};

    fn capture() -> Vec<u8> {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let mut t = 0;
        let mut put = |f: &[u8]| {
            t += 1_000;
            w.write_frame(Instant::from_ns(t), f).unwrap();
        };
        for p in catalog::every_kind() {
            let mut f = Vec::new();
            mrc10::emit_frame(&p, &Encap::test_v6(), &Profile::DEFAULT, &mut f);
            put(&f);
        }
        let legacy = RocePacket::write(wire::Opcode::WriteOnly, 0x12, Psn::new(7), vec![1u8; 16]);
        let mut f = Vec::new();
        emit_frame(&legacy, &Encap::test_v4(), &mut f);
        put(&f);
        let mut bad = f.clone();
        let n = bad.len();
        bad[n - 6] ^= 1;
        put(&bad);
        let mut arp = f.clone();
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        put(&arp);
        let mut w = w.into_inner();
        w.extend_from_slice(&[0; 7]); // a record header cut short
        w
    }

    #[test]
    fn verdicts_per_packet_and_summary() {
        let cap = capture();
        let recs = decode(&cap, &Profile::DEFAULT).unwrap();
        let kinds = catalog::every_kind().len();
        assert_eq!(recs.len(), kinds + 4);
        for (i, d) in recs[..kinds].iter().enumerate() {
            let v = &d.verdict;
            let Verdict::Mrc10(b) = v else {
                panic!("record {i}: {v:?}")
            };
            assert_eq!(b.0, catalog::every_kind()[i]);
        }
        assert!(matches!(recs[kinds].verdict, Verdict::Legacy(_)));
        assert_eq!(recs[kinds + 1].verdict.name(), "error:BadIcrc");
        assert_eq!(recs[kinds + 2].verdict.name(), "other:BadEtherType");
        assert!(recs[kinds + 2].verdict.parsed(), "not RoCEv2 is no failure");
        assert!(!recs[kinds + 1].verdict.parsed());
        assert!(matches!(
            recs[kinds + 3].verdict,
            Verdict::Pcap(PcapError::TruncatedRecordHeader { .. })
        ));
        assert!(recs.iter().all(|d| d.segment.is_none()), "no record is a run");
        let r0 = &recs[0].rec;
        let line = text_line(r0.index, r0.ts_ns, r0.orig_len, &recs[0].verdict);
        assert!(
            line.contains("MRC1.0 WRITE_FIRST") && line.contains("METH RETH"),
            "{line}"
        );
        let j = json_line(recs[kinds + 1].rec.index, 0, 0, &recs[kinds + 1].verdict);
        assert_eq!(j["verdict"], "error:BadIcrc");
        assert!(j["error"].as_str().unwrap().contains("ICRC"));
        let j = json_line(0, 0, 0, &recs[kinds - 1].verdict);
        assert_eq!(j["opcode"], "ENDPOINT_RESP");
        assert_eq!(j["headers"], json!(["ERTH", "EETH"]));
    }

    /// `packets` as a capture on `lo` records a segmentation-offload send
    /// of them: one frame whose UDP payload is theirs back to back.
    fn offloaded_run(packets: &[mrc10::Mrc10Packet], encap: &Encap) -> Vec<u8> {
        let mut payload = Vec::new();
        let mut f = Vec::new();
        for p in packets {
            f.clear();
            mrc10::emit_frame(p, encap, &Profile::DEFAULT, &mut f);
            let at = wire::frame::parse_outer(&f, true).unwrap().transport_at;
            payload.extend_from_slice(&f[at..]);
        }
        let outer = wire::frame::parse_outer(&f, true).unwrap();
        let head = outer.transport_at;
        let fields = wire::frame::OuterFields {
            dscp: outer.dscp,
            ecn: outer.ecn,
            src_port: outer.src_port,
            flow_label: outer.flow_label.unwrap_or(0),
            udp_len: payload.len(),
        };
        let mut frame = vec![0u8; head + payload.len()];
        let (at, _) = wire::frame::emit_outer(&outer.encap, &fields, &mut frame);
        frame[at..].copy_from_slice(&payload);
        frame
    }

    #[test]
    fn a_run_sent_with_segmentation_offload_decodes_as_its_packets() {
        for encap in [Encap::test_v4(), Encap::test_v6()] {
            // Three full WRITE_MIDDLEs and a shorter WRITE_LAST, as the soft
            // NIC's runs are: every segment of one size but the last.
            let mut run: Vec<_> = (0..3)
                .map(|i| catalog::write(mrc10::Opcode::WriteMiddle, 100 + i, 256, false))
                .collect();
            run.push(catalog::write(mrc10::Opcode::WriteLast, 103, 40, false));
            let acks: Vec<_> = (0..5).map(|i| catalog::ack(200 + i)).collect();
            let mut w = PcapWriter::new(Vec::new()).unwrap();
            w.write_frame(Instant::from_ns(1), &offloaded_run(&run, &encap))
                .unwrap();
            w.write_frame(Instant::from_ns(2), &offloaded_run(&acks, &encap))
                .unwrap();
            let cap = w.into_inner();
            let recs = decode(&cap, &Profile::DEFAULT).unwrap();
            let got: Vec<_> = recs
                .iter()
                .map(|d| match &d.verdict {
                    Verdict::Mrc10(b) => (d.rec.index, d.segment, b.0.clone()),
                    v => panic!("{v:?}"),
                })
                .collect();
            // Each as its own frame decodes to.
            let alone = |p: &mrc10::Mrc10Packet| {
                let mut f = Vec::new();
                mrc10::emit_frame(p, &encap, &Profile::DEFAULT, &mut f);
                match classify(&f, &Profile::DEFAULT) {
                    Verdict::Mrc10(b) => b.0,
                    v => panic!("{v:?}"),
                }
            };
            let want: Vec<_> = run
                .iter()
                .enumerate()
                .map(|(k, p)| (0, Some(k), alone(p)))
                .chain(acks.iter().enumerate().map(|(k, p)| (1, Some(k), alone(p))))
                .collect();
            assert_eq!(got, want);
            let j = json_line(recs[1].rec.index, 0, 0, &recs[1].verdict);
            assert_eq!(j["psn"], 101);
        }
    }

    #[test]
    fn bad_files_are_errors() {
        assert!(decode(&[0; 10], &Profile::DEFAULT).is_err());
        let mut cap = capture();
        cap[20] = 101; // LINKTYPE_RAW
        assert_eq!(decode(&cap, &Profile::DEFAULT).err(), Some(CaptureError::LinkType(101)));
    }
}
