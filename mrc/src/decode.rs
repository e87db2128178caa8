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

/// Decode a whole capture held in memory: each record's verdict, in order.
pub fn decode<'a>(bytes: &'a [u8], profile: &Profile) -> Result<Vec<(PcapRecord<'a>, Verdict)>, CaptureError> {
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
                let v = classify(rec.data, profile);
                out.push((rec, v));
            }
            Err(e) => {
                let rec = PcapRecord {
                    index: next_index,
                    ts_ns: 0,
                    orig_len: 0,
                    data: &[],
                };
                out.push((rec, Verdict::Pcap(e)));
            }
        }
    }
    Ok(out)
}

fn print(json: bool, records: &[(PcapRecord<'_>, Verdict)], counts: &BTreeMap<String, u64>) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (rec, v) in records {
        if json {
            writeln!(out, "{}", json_line(rec.index, rec.ts_ns, rec.orig_len, v))?;
        } else {
            writeln!(out, "{}", text_line(rec.index, rec.ts_ns, rec.orig_len, v))?;
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
    for (_, v) in &records {
        *counts.entry(v.name()).or_default() += 1;
    }
    let all_parsed = records.iter().all(|(_, v)| v.parsed());
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
        for (i, (_, v)) in recs[..kinds].iter().enumerate() {
            let Verdict::Mrc10(b) = v else {
                panic!("record {i}: {v:?}")
            };
            assert_eq!(b.0, catalog::every_kind()[i]);
        }
        assert!(matches!(recs[kinds].1, Verdict::Legacy(_)));
        assert_eq!(recs[kinds + 1].1.name(), "error:BadIcrc");
        assert_eq!(recs[kinds + 2].1.name(), "other:BadEtherType");
        assert!(recs[kinds + 2].1.parsed(), "not RoCEv2 is no failure");
        assert!(!recs[kinds + 1].1.parsed());
        assert!(matches!(
            recs[kinds + 3].1,
            Verdict::Pcap(PcapError::TruncatedRecordHeader { .. })
        ));
        let line = text_line(recs[0].0.index, recs[0].0.ts_ns, recs[0].0.orig_len, &recs[0].1);
        assert!(
            line.contains("MRC1.0 WRITE_FIRST") && line.contains("METH RETH"),
            "{line}"
        );
        let j = json_line(recs[kinds + 1].0.index, 0, 0, &recs[kinds + 1].1);
        assert_eq!(j["verdict"], "error:BadIcrc");
        assert!(j["error"].as_str().unwrap().contains("ICRC"));
        let j = json_line(0, 0, 0, &recs[kinds - 1].1);
        assert_eq!(j["opcode"], "ENDPOINT_RESP");
        assert_eq!(j["headers"], json!(["ERTH", "EETH"]));
    }

    #[test]
    fn bad_files_are_errors() {
        assert!(decode(&[0; 10], &Profile::DEFAULT).is_err());
        let mut cap = capture();
        cap[20] = 101; // LINKTYPE_RAW
        assert_eq!(decode(&cap, &Profile::DEFAULT).err(), Some(CaptureError::LinkType(101)));
    }
}
