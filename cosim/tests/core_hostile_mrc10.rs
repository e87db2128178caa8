//! Hostile MRC 1.0 traffic at the MAC of one verilated `MrcCore` set to
//! MRC 1.0 (`wire_mrc10`), on the harness `core_hostile.rs` uses
//! (`hostile/mod.rs`): for every MRC 1.0 header (BTH, METH, TSETH, RETH,
//! ImmDt, AETH, SETH, CC_STATE, NETH, PETH, ERTH, EETH) frames cut inside
//! it, with a bit of it flipped (ICRC recomputed, so only the semantic
//! checks can catch it, and ICRC left wrong), and forged (wrong QPN,
//! PSNs outside the window, opcodes MRC 1.0 does not define, NACK reasons
//! that do not exist, SACKs and probes with nonsense fields, ERTH / EETH
//! on the wrong QP, trimmed data...), and a seeded fuzz loop over the
//! same templates, interleaved with good WRITEs. Every
//! frame also goes to the golden MRC 1.0 QP (`proto::model::mrc`)
//! configured as the core's, and the core's verdict on each, read from
//! its counters, must be the model's ([`Verdict`]); where the two differ
//! by design, the pair is listed in [`KNOWN_GAPS`] and written down in
//! docs/hw/core.md (known gaps). At the end the bench checks what
//! `core_hostile.rs` checks: nothing written outside the region and the
//! CQ, the region equal to the model's memory, the model's completions,
//! the model's NACKs and last cumulative SACK, no stall.

mod hostile;

use bytes::Bytes;
use contract::layout::{SqDescriptor, SqOpcode};
use cosim::nic::{build_core, Nic, Stalls};
use hostile::*;
use proto::model::{Event, QueuePair, RxError, WriteRequest};
use proto::time::{Duration, Instant};
use proto::wire::mrc10::choices;
use proto::wire::mrc10::{
    self, CcStateRepr, EndpointOp, Headers, Mrc10Packet, NackReason, NethRepr, Opcode, PethRepr, Profile, SethRepr,
    SkipMode,
};
use proto::wire::{icrc, AethRepr, Syndrome};
use proto::Psn;
use tb::rng::Rng;
use verilated::{skip_without_verilator, BuildOptions};

/// Payload of the hostile FIRST / MIDDLE templates: the whole MTU, so
/// that a forged TS bit that makes the headers read 4 bytes short (the
/// payload 4 bytes longer) reaches the MTU check, which both sides make
/// (see `payload_above_the_mtu_is_not_placed`).
const TEMPLATE_PAYLOAD: usize = MTU;

/// What happened to one frame, in terms both sides can be read in: the
/// model's `handle_frame` result, the core's counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    /// Taken: placed, a duplicate re-acknowledged, a trimmed packet
    /// NACKed, an acknowledgement applied (the model's `Ok`; the core's
    /// `rx_placed`, `sack_duplicate` or just `rx_parser_ok`).
    Accepted,
    /// Refused by the parser (`RxError::Wire`; `rx_parser_drop`).
    ParserDrop,
    /// Parsed but not for a QP's data path: wrong or dead QP, an endpoint
    /// operation, a malformed data packet or acknowledgement
    /// (`WrongQp`, `UnexpectedMrc10Opcode`, `Malformed`; `rx_not_data`).
    Discarded,
    /// Beyond the receive window, NACKed (`OutOfWindow`;
    /// `sack_out_of_window`).
    OutOfWindow,
    /// rkey or bounds refused, NACKed (`RemoteAccess`;
    /// `placement_reject`).
    Rejected,
    /// An acknowledgement for PSNs never sent (`AckForUnsent`;
    /// `retx_drop`).
    AckForUnsent,
    /// A frame of the legacy dialect, which the MRC 1.0 QP refuses
    /// (`WrongProtocol`: a corruption moved the opcode out of
    /// 0xC0-0xDF); the core, which takes both dialects frame by frame,
    /// never reports this verdict.
    OtherDialect,
}

fn model_verdict(r: &Result<(), RxError>) -> Verdict {
    match r {
        Ok(()) => Verdict::Accepted,
        Err(RxError::Wire(_)) => Verdict::ParserDrop,
        Err(RxError::OutOfWindow { .. }) => Verdict::OutOfWindow,
        Err(RxError::RemoteAccess { .. }) => Verdict::Rejected,
        Err(RxError::AckForUnsent(_)) => Verdict::AckForUnsent,
        Err(RxError::WrongProtocol { .. }) => Verdict::OtherDialect,
        Err(
            RxError::WrongQp { .. }
            | RxError::UnexpectedMrc10Opcode(_)
            | RxError::Malformed(_)
            | RxError::MissingHeader(_),
        ) => Verdict::Discarded,
        Err(e) => panic!("a model verdict these tests do not expect: {e:?}"),
    }
}

/// The counters a frame's verdict moves, in the order they decide it.
const VERDICT_COUNTERS: [(&str, Verdict); 7] = [
    ("rx_parser_drop", Verdict::ParserDrop),
    ("rx_not_data", Verdict::Discarded),
    ("placement_reject", Verdict::Rejected),
    ("sack_out_of_window", Verdict::OutOfWindow),
    ("retx_drop", Verdict::AckForUnsent),
    ("rx_placed", Verdict::Accepted),
    ("sack_duplicate", Verdict::Accepted),
];

/// Model and core verdicts that differ by design: (model, core, frame
/// kind or `ANY`, why). Each is written down in docs/hw/core.md.
const KNOWN_GAPS: &[(Verdict, Verdict, &str, &str)] = &[
    (
        Verdict::OtherDialect,
        Verdict::ParserDrop,
        ANY,
        "the core judges a frame with a legacy opcode by the legacy parser, which drops what a corrupted MRC 1.0 frame becomes",
    ),
    (
        Verdict::OtherDialect,
        Verdict::Discarded,
        ANY,
        "the same, a legacy frame for no live QP or of no data kind",
    ),
];

/// Any frame kind, in [`KNOWN_GAPS`].
const ANY: &str = "*";

/// Whether (model, core) on a frame of `kind` is a known gap.
fn known_gap(model: Verdict, core: Verdict, kind: &str) -> bool {
    KNOWN_GAPS
        .iter()
        .any(|&(m, h, k, _)| (m, h) == (model, core) && (k == ANY || k == kind))
}

/// Counter snapshot of the verdict counters and `rx_parser_ok`.
fn snapshot(nic: &mut Nic) -> Vec<u32> {
    let mut v: Vec<u32> = VERDICT_COUNTERS.iter().map(|(c, _)| nic.counter(c)).collect();
    v.push(nic.counter("rx_parser_ok"));
    v
}

/// The core's verdict from two snapshots around one frame: exactly one
/// verdict counter may move, by one (or only `rx_parser_ok`: a frame
/// taken with no other trace, such as an acknowledgement that
/// acknowledges nothing new or a trimmed packet).
fn core_verdict(before: &[u32], after: &[u32], what: &str) -> Verdict {
    let moved: Vec<(usize, u32)> = before
        .iter()
        .zip(after)
        .map(|(b, a)| a.wrapping_sub(*b))
        .enumerate()
        .filter(|&(_, d)| d != 0)
        .collect();
    let n = VERDICT_COUNTERS.len();
    let verdicts: Vec<(Verdict, u32)> = moved
        .iter()
        .filter(|&&(i, _)| i < n)
        .map(|&(i, d)| (VERDICT_COUNTERS[i].1, d))
        .collect();
    let parsed = moved.iter().any(|&(i, _)| i == n);
    match verdicts.as_slice() {
        [] if parsed => Verdict::Accepted,
        [(v, 1)] if parsed != (*v == Verdict::ParserDrop) => *v,
        _ => panic!(
            "{what}: the core's counters moved inconsistently for one frame: {:?} (rx_parser_ok moved: {parsed})",
            moved
                .iter()
                .map(|&(i, d)| (VERDICT_COUNTERS.get(i).map_or("rx_parser_ok", |c| c.0), d))
                .collect::<Vec<_>>()
        ),
    }
}

/// One hostile or good frame and its name in failure messages; `kind` is
/// the template's kind (the [`KNOWN_GAPS`] key).
struct Case {
    what: String,
    kind: &'static str,
    frame: Vec<u8>,
}

/// The headers of `p` after the BTH, as (name, first byte, end) in
/// transport bytes.
fn header_spans(p: &Mrc10Packet) -> Vec<(&'static str, usize, usize)> {
    let mut v = vec![("BTH", 0, 12)];
    let mut at = 12;
    let mut push = |name: &'static str, len: usize, v: &mut Vec<(&'static str, usize, usize)>| {
        v.push((name, at, at + len));
        at += len;
    };
    match &p.headers {
        Headers::Write(w) => {
            push("METH", 4, &mut v);
            if w.tseth.is_some() {
                push("TSETH", 4, &mut v);
            }
            push("RETH", 16, &mut v);
            if w.imm.is_some() {
                push("ImmDt", 4, &mut v);
            }
        }
        Headers::Ack(_) => push("AETH", 4, &mut v),
        Headers::Sack { .. } => {
            push("SETH", 28, &mut v);
            push("CC_STATE", 8, &mut v);
        }
        Headers::Nack(_) => push("NETH", 20, &mut v),
        Headers::Probe(_) => push("PETH", 16, &mut v),
        Headers::Endpoint { eeth, .. } => {
            push("ERTH", 16, &mut v);
            if eeth.is_some() {
                push("EETH", 36, &mut v);
            }
        }
    }
    v
}

fn kind_of(p: &Mrc10Packet) -> &'static str {
    match p.bth.opcode {
        op if op.is_write() => "WRITE",
        Opcode::Ack => "ACK",
        Opcode::Sack => "SACK",
        Opcode::Nack => "NACK",
        Opcode::ReliabilityProbe => "PROBE",
        _ => "ENDPOINT",
    }
}

/// The hostile variants of template `p` (`name` in messages): cut inside
/// and at the end of every header (outer lengths made for the cut, so the
/// transport checks judge it; and the frame itself cut, so the outer
/// checks do); a byte of every header corrupted, resealed and not; and,
/// for data, the trimmed form.
fn variants(name: &str, p: &Mrc10Packet, rng: &mut Rng) -> Vec<Case> {
    let kind = kind_of(p);
    let frame = mrc10_frame(p);
    let t = transport_of(&frame).to_vec();
    let spans = header_spans(p);
    let mut v = Vec::new();
    let case = |what: String, frame: Vec<u8>| Case { what, kind, frame };
    for &(h, start, end) in &spans {
        let mut cuts = vec![start + 1, (start + end) / 2, end - 1];
        if end == spans.last().unwrap().2 && !p.payload.is_empty() {
            // Into the payload, which a pad of 1-3 bytes follows.
            cuts.push(end + 1);
        }
        cuts.dedup();
        for n in cuts {
            v.push(case(
                format!("{name}: transport cut at {n} (in {h})"),
                frame_with_transport(&t[..n]),
            ));
        }
        let n = TRANSPORT_AT + (start + end) / 2;
        v.push(case(format!("{name}: frame cut at {n} (in {h})"), frame[..n].to_vec()));
        for _ in 0..2 {
            let at = TRANSPORT_AT + start + rng.below((end - start) as u64) as usize;
            let bit = 1u8 << rng.below(8);
            let mut f = frame.clone();
            f[at] ^= bit;
            v.push(case(format!("{name}: {h} byte {at} ^ {bit:#x}, ICRC wrong"), f.clone()));
            icrc::reseal_frame(&mut f);
            v.push(case(format!("{name}: {h} byte {at} ^ {bit:#x}, resealed"), f));
        }
    }
    if p.bth.opcode.is_write() {
        let trimmed = mrc10::trim_frame(&frame, 0, false, &Profile::DEFAULT).expect("trimmable");
        v.push(case(format!("{name}: trimmed"), trimmed));
    }
    v
}

/// Transport edits of template `p` that forge one field the parser
/// checks (resealed): opcodes MRC 1.0 does not define, TVer, PadCnt on a
/// control packet, TS on a control packet, DestQP moved to / from the
/// endpoint QP, a payload after a control packet's chain, and the enum
/// byte after the BTH (NETH reason, SETH skip mode, ERTH op) set to each
/// undefined value class.
fn forged_transports(name: &str, p: &Mrc10Packet) -> Vec<Case> {
    let kind = kind_of(p);
    let t = transport_of(&mrc10_frame(p)).to_vec();
    let mut v = Vec::new();
    let mut forge = |what: &str, edit: &dyn Fn(&mut Vec<u8>)| {
        let mut t2 = t.clone();
        edit(&mut t2);
        v.push(Case {
            what: format!("{name}: {what}"),
            kind,
            frame: frame_with_transport(&t2),
        });
    };
    for op in [0xC0u8, 0xC5, 0xCC, 0xD0, 0xDF] {
        forge(&format!("opcode {op:#x}"), &|t| t[0] = op);
    }
    forge("TVer 1", &|t| t[1] |= 0x01);
    forge("TS set", &|t| t[8] ^= 0x10);
    forge("DestQP ^ 2", &|t| t[7] ^= 0x02);
    forge("DestQP 2", &|t| t[5..8].copy_from_slice(&[0, 0, 2]));
    if p.bth.opcode.is_write() {
        forge("PadCnt 3, no pad", &|t| {
            let chain = t.len() - p.payload.len() - p.wire_pad();
            t.truncate(chain);
            t[1] |= 0x30;
        });
    } else {
        forge("PadCnt 1", &|t| t[1] |= 0x10);
        forge("4 payload bytes", &|t| t.extend_from_slice(&[1, 2, 3, 4]));
        forge("byte 12 = 0x33", &|t| t[12] = 0x33);
        forge("byte 12 | 0xC0", &|t| t[12] |= 0xC0);
        forge("byte 12 = 0xFF", &|t| t[12] = 0xFF);
        if matches!(p.headers, Headers::Endpoint { eeth: Some(_), .. }) {
            // The EETH's EV format, 0-3 defined.
            forge("EETH format 7", &|t| t[28] = 7);
        }
    }
    v
}

/// A good WRITE-ONLY of the interleaved traffic: PSN `psn`, `len` bytes
/// at `va`.
fn good_write(psn: u32, va: u64, len: usize) -> Vec<u8> {
    mrc10_frame(&mrc10_write(
        Opcode::WriteOnly,
        psn,
        va,
        len as u32,
        pattern(len, psn),
        RKEY,
        psn.is_multiple_of(2),
    ))
}

/// A control packet of the peer to `qp`.
fn control(qp: u32, opcode: Opcode, psn: u32, headers: Headers) -> Mrc10Packet {
    Mrc10Packet::control(EV_BASE + 1, opcode, 0xFFFF, qp, Psn::new(psn), headers)
}

fn seth(cum: u32, sack_offset: i16, bitmap: u64) -> SethRepr {
    SethRepr {
        skip_mode: SkipMode::None,
        probe_response: false,
        ack_psn_offset: 0,
        ev: EV_BASE + 1,
        sender_context: choices::context_of(RESP_QP),
        receiver_context: choices::context_of(PEER_QP),
        cum_ack_psn: Psn::new(cum & 0xFF_FFFF),
        cc_type: choices::CC_TYPE_NSCC,
        cc_flags: 0,
        mpr: WINDOW_UNITS,
        sack_offset,
        bitmap,
    }
}

fn cc_state(echo_ts: u16) -> CcStateRepr {
    CcStateRepr {
        echo_ts,
        ooo_count: 0,
        restore: false,
        cwnd_penalty: 0,
        rcvd_bytes: 0,
    }
}

fn sack_to(qp: u32, cum: u32, sack_offset: i16, bitmap: u64) -> Mrc10Packet {
    control(
        qp,
        Opcode::Sack,
        cum,
        Headers::Sack {
            seth: seth(cum, sack_offset, bitmap),
            cc_state: cc_state(0),
        },
    )
}

fn nack_to(qp: u32, psn: u32, reason: NackReason, timestamp: u16) -> Mrc10Packet {
    control(
        qp,
        Opcode::Nack,
        psn,
        Headers::Nack(NethRepr {
            reason,
            vendor_info: 0,
            ev: EV_BASE + 1,
            sender_context: choices::context_of(RESP_QP),
            receiver_context: choices::context_of(PEER_QP),
            nack_psn: Psn::new(psn & 0xFF_FFFF),
            cc_type: choices::CC_TYPE_NSCC,
            cc_flags: 0,
            timestamp,
        }),
    )
}

fn ack_to(qp: u32, psn: u32, syndrome: Syndrome) -> Mrc10Packet {
    control(qp, Opcode::Ack, psn, Headers::Ack(AethRepr { syndrome, msn: 0 }))
}

fn probe_to(qp: u32, probe_id: u16) -> Mrc10Packet {
    control(
        qp,
        Opcode::ReliabilityProbe,
        0,
        Headers::Probe(PethRepr {
            probe_id,
            sender_context: 0xFFFF,
            receiver_context: 0xABCD,
            // Each probe's own timestamp, so the answer's echo is told
            // apart.
            timestamp: probe_id ^ 0x5A5A,
        }),
    )
}

/// An endpoint operation (the catalog's, with an EETH for EV Probe) to
/// `qp`.
fn endpoint_to(qp: u32, response: bool, op: EndpointOp) -> Mrc10Packet {
    let mut p = mrc10::catalog::endpoint(response, op);
    p.bth.dest_qp = qp;
    p
}

/// Counts of (model verdict, core verdict) pairs, printed at the end.
type Tally = std::collections::BTreeMap<(Verdict, Verdict), u32>;

/// Feed `c` to both sides of the bench; the two verdicts must agree or
/// be a known gap for the frame's kind. Returns the model's verdict.
fn judge(b: &mut ResponderBench, c: Case, tally: &mut Tally, mismatches: &mut Vec<String>) -> Verdict {
    let before = snapshot(&mut b.nic);
    let r = b.inject(c.frame);
    assert!(b.nic.rx.idle(), "{}: the core's RX stalled", c.what);
    let after = snapshot(&mut b.nic);
    let model = model_verdict(&r);
    let core = core_verdict(&before, &after, &c.what);
    *tally.entry((model, core)).or_default() += 1;
    let gap = known_gap(model, core, c.kind);
    if model != core && !gap {
        mismatches.push(format!("{}: model {model:?} ({r:?}), core {core:?}", c.what));
    }
    model
}

/// Hostile data goes to PSNs this far ahead, which the good traffic
/// never reaches, and to the region's upper half.
const HOSTILE_PSN: u32 = RQ_PSN + 150;
const HOSTILE_VA: u64 = MR_VA + 0x8000;

/// The responder tests' templates, one per header chain: WRITE-FIRST
/// without TSETH, WRITE-MIDDLE and WRITE-LAST-IMM with TSETH,
/// WRITE-ONLY-IMM; SACK, NACK, ACK and probe to the responder QP; an EV
/// Probe (ERTH + EETH) and a port status update to the endpoint QP.
fn responder_templates() -> Vec<(&'static str, Mrc10Packet)> {
    let (h, hva) = (HOSTILE_PSN, HOSTILE_VA);
    let data = [
        (
            "WRITE-FIRST",
            mrc10_write(
                Opcode::WriteFirst,
                h,
                hva,
                (2 * TEMPLATE_PAYLOAD + 101) as u32,
                pattern(TEMPLATE_PAYLOAD, 1),
                RKEY,
                false,
            ),
        ),
        (
            "WRITE-MIDDLE+TS",
            mrc10_write(
                Opcode::WriteMiddle,
                h + 1,
                hva + TEMPLATE_PAYLOAD as u64,
                (2 * TEMPLATE_PAYLOAD + 101) as u32,
                pattern(TEMPLATE_PAYLOAD, 2),
                RKEY,
                true,
            ),
        ),
        (
            "WRITE-LAST-IMM+TS",
            mrc10_write(
                Opcode::WriteLastImm,
                h + 2,
                hva + 2 * TEMPLATE_PAYLOAD as u64,
                (2 * TEMPLATE_PAYLOAD + 101) as u32,
                pattern(101, 3),
                RKEY,
                true,
            ),
        ),
        (
            "WRITE-ONLY-IMM",
            mrc10_write(
                Opcode::WriteOnlyImm,
                h + 3,
                hva + 0x1000,
                61,
                pattern(61, 4),
                RKEY,
                false,
            ),
        ),
    ];
    let ctl = [
        ("SACK", sack_to(RESP_QP, 0xFF_FFFF, 1, 0)),
        ("NACK", nack_to(RESP_QP, 3, NackReason::Trimmed, 0)),
        ("ACK", ack_to(RESP_QP, 0xFF_FFFF, Syndrome::Ack { credits: 0x1F })),
        ("PROBE", probe_to(RESP_QP, 7)),
        (
            "EP-REQ EV-PROBE",
            endpoint_to(choices::ENDPOINT_QPN, false, EndpointOp::EvProbe),
        ),
        (
            "EP-RESP PORT-STATUS",
            endpoint_to(choices::ENDPOINT_QPN, true, EndpointOp::PortStatusUpdate),
        ),
    ];
    data.into_iter().chain(ctl).collect()
}

/// The responder (`RESP_QP`, the core set to MRC 1.0) under every
/// hostile MRC 1.0 header: data templates (WRITE-FIRST without TSETH,
/// WRITE-LAST-IMM with TSETH, WRITE-ONLY-IMM, WRITE-MIDDLE) at PSNs
/// ahead in the window and control packets to the responder QP (SACK,
/// NACK, ACK, probe) and to the endpoint QP (EV Probe with EETH, port
/// status), each with its cuts, corruptions and forgeries, plus forged
/// data fields (wrong QPs, PSNs behind and beyond the window, rkey,
/// bounds, DMA length) and nonsense control packets; a good WRITE after
/// every five. Every verdict as the model's, then the bench's checks.
#[test]
fn hostile_mrc10_headers_at_the_responder_match_the_golden_model() {
    if skip_without_verilator("the verilated core") {
        return;
    }
    let mut b = ResponderBench::new_in(Dialect::Mrc10, 41);
    let mut rng = Rng::new(0x4057_11e0);
    let (h, hva) = (HOSTILE_PSN, HOSTILE_VA);
    let mut cases = Vec::new();
    for (name, p) in responder_templates() {
        cases.extend(variants(name, &p, &mut rng));
        cases.extend(forged_transports(name, &p));
    }
    // Forged fields, re-emitted (valid ICRC): the decision after the
    // parser.
    let only = |psn: u32, va: u64, rkey: u32| mrc10_write(Opcode::WriteOnly, psn, va, 40, pattern(40, psn), rkey, true);
    let mut forged: Vec<(String, &'static str, Mrc10Packet)> = Vec::new();
    for qp in [0x78, 0x1234, 0xFF_FFFF, 0] {
        let mut p = only(h + 4, hva + 0x2000, RKEY);
        p.bth.dest_qp = qp;
        forged.push((format!("WRITE-ONLY to QP {qp:#x}"), "WRITE", p));
    }
    for psn in [
        RQ_PSN + 256 + 40,
        RQ_PSN + 4000,
        (RQ_PSN + (1 << 23) - 1) & 0xFF_FFFF,
        RQ_PSN - 1,
        RQ_PSN.wrapping_sub(300) & 0xFF_FFFF,
    ] {
        forged.push((
            format!("WRITE-ONLY PSN {psn:#x}"),
            "WRITE",
            only(psn, hva + 0x2100, RKEY),
        ));
    }
    for (what, va, rkey) in [
        ("bad rkey", hva + 0x2200, RKEY ^ 0x100),
        ("unregistered rkey", hva + 0x2200, 0x77),
        ("VA below the region", MR_VA - 8, RKEY),
        ("VA across the region's end", MR_VA + MR_LEN - 20, RKEY),
    ] {
        forged.push((format!("WRITE-ONLY {what}"), "WRITE", only(h + 5, va, rkey)));
    }
    let mut long = only(h + 6, hva + 0x2300, RKEY);
    if let Headers::Write(w) = &mut long.headers {
        w.reth.dma_len = 41;
    }
    forged.push(("WRITE-ONLY DMA length != payload".into(), "WRITE", long));
    let huge = mrc10_write(
        Opcode::WriteFirst,
        h + 7,
        hva + 0x2400,
        u32::MAX,
        pattern(MTU, 7),
        RKEY,
        false,
    );
    forged.push(("WRITE-FIRST DMA length 4 GiB".into(), "WRITE", huge));
    for (what, bitmap, off, cum) in [
        ("cumulative beyond", 0, 1, 50),
        ("bitmap beyond", u64::MAX, 1, 0xFF_FFFF),
        ("offset -32768", 1, i16::MIN, 0xFF_FFFF),
    ] {
        forged.push((format!("SACK {what}"), "SACK", sack_to(RESP_QP, cum, off, bitmap)));
    }
    for reason in [
        NackReason::PsnOorWindow,
        NackReason::TrimmedLastHop,
        NackReason::NoResource,
    ] {
        forged.push((
            format!("NACK {reason:?}"),
            "NACK",
            nack_to(RESP_QP, 0x123, reason, 0x4444),
        ));
    }
    for syndrome in [
        Syndrome::Nak {
            code: Syndrome::NAK_REMOTE_ACCESS,
        },
        Syndrome::Nak {
            code: Syndrome::NAK_PSN_SEQ_ERROR,
        },
        Syndrome::Rnr { timer: 3 },
    ] {
        forged.push((format!("ACK {syndrome:?}"), "ACK", ack_to(RESP_QP, 9, syndrome)));
    }
    forged.push(("PROBE id 0xFFFF".into(), "PROBE", probe_to(RESP_QP, 0xFFFF)));
    forged.push((
        "EP-REQ to the data QP's neighbour".into(),
        "ENDPOINT",
        endpoint_to(3, false, EndpointOp::PortStatusUpdate),
    ));
    for (what, kind, p) in forged {
        cases.push(Case {
            what,
            kind,
            frame: mrc10_frame(&p),
        });
    }
    run_responder(&mut b, cases);
}

/// Feed `cases` to the responder bench with a good WRITE-ONLY after
/// every five, each verdict as the model's (or a known gap); then the
/// NACKs, no RX buffer loss, and a valid tail placed and completed as
/// the model does, the region equal to its memory.
fn run_responder(b: &mut ResponderBench, cases: Vec<Case>) {
    let hostile = cases.len();
    let mut tally = Tally::new();
    let mut mismatches = Vec::new();
    let mut good_psn = RQ_PSN;
    for (i, c) in cases.into_iter().enumerate() {
        judge(b, c, &mut tally, &mut mismatches);
        if i % 5 == 4 {
            let k = good_psn - RQ_PSN;
            let good = Case {
                what: format!("good WRITE-ONLY PSN {good_psn:#x}"),
                kind: "WRITE",
                frame: good_write(good_psn, MR_VA + 0x40 * u64::from(k), 17 + (k as usize % 23)),
            };
            let v = judge(b, good, &mut tally, &mut mismatches);
            assert_eq!(v, Verdict::Accepted, "the model takes the good WRITE at {good_psn:#x}");
            good_psn += 1;
        }
    }
    eprintln!(
        "{hostile} hostile MRC 1.0 frames and {} good ones; (model, core) verdicts: {tally:?}",
        good_psn - RQ_PSN
    );
    assert!(
        mismatches.is_empty(),
        "{} verdicts differ from the model's:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    b.settle();
    b.check_same_nacks();
    b.check_same_probe_answers();
    assert_eq!(b.delta("rx_discards"), 0, "no frame lost at the RX buffer");
    // The good traffic after it all: placed and completed as the model
    // does (the model may have completed hostile WRITE-IMMs a corrupted
    // PSN moved into the good sequence; the core must have too).
    let cqes = b.recv_cqes;
    valid_tail(b, good_psn, 4);
    b.settle();
    b.check_memory_and_completions();
    b.check_final_cum();
    b.check_same_nacks();
    assert_eq!(b.recv_cqes, cqes + 3, "the valid tail completes");
}

/// The core's requester (`PEER_QP`, MRC 1.0) with a 3-packet WRITE in
/// flight is sent hostile MRC 1.0 acknowledgements: SACKs for PSNs never
/// sent (cumulative, bitmap, offsets), a probe answer for an EV it does
/// not have, NACKs of every reason for unsent PSNs, ACKs with unused
/// syndromes, probes, endpoint operations, acknowledgements for another
/// QP, and every SACK / NACK header cut or corrupted (ICRC wrong). The
/// golden MRC 1.0 requester, with the same WRITE in flight, is fed the
/// same frames: the verdicts agree, nothing completes; then the genuine
/// SACK completes the WRITE exactly once on both.
#[test]
fn hostile_mrc10_acks_at_the_requester_complete_nothing() {
    if skip_without_verilator("the verilated core") {
        return;
    }
    let built = build_core(&BuildOptions::default()).unwrap();
    let mut nic = Nic::new(&built, Stalls::default(), 42).unwrap();
    configure_globals_in(&mut nic, Dialect::Mrc10);
    configure_qp(&mut nic, PEER_QP, req_ctx());
    let wr = SqDescriptor {
        opcode: SqOpcode::Write,
        signaled: true,
        length: 2500,
        wr_id: 0x5A,
        local_iova: 0x2000_0000,
        remote_va: MR_VA,
        rkey: RKEY,
        imm: 0,
    };
    nic.dma.mem.fill(SQ_BASE, &wr.encode().unwrap());
    let payload = pattern(2500, 9);
    nic.dma.mem.fill(wr.local_iova, &payload);
    let mut model = model_requester(
        Dialect::Mrc10,
        &WriteRequest {
            wr_id: 0x5A,
            data: Bytes::from(payload),
            remote_va: MR_VA,
            rkey: RKEY,
            imm: None,
        },
    );
    nic.doorbell(PEER_QP as u8, 1);
    let mut cycles = 0;
    while nic.tx.frames.len() < 3 && cycles < 20_000 {
        nic.step();
        cycles += 1;
    }
    let psns: Vec<u32> = nic
        .tx
        .frames
        .drain(..)
        .map(|f| match parse_sent(Dialect::Mrc10, &f) {
            proto::wire::Packet::Mrc10(p) => p.bth.psn.value(),
            p => panic!("not MRC 1.0: {p:?}"),
        })
        .collect();
    let first = REQ_START_PSN;
    let last = first + 2;
    assert_eq!(psns, [first, first + 1, last], "the WRITE's three packets");
    let mut rng = Rng::new(0x4057_11e1);

    let none = first - 1;
    let mut cases: Vec<(String, &'static str, Mrc10Packet)> = vec![
        (
            "SACK cumulative last + 1".into(),
            "SACK",
            sack_to(PEER_QP, last + 1, 1, 0),
        ),
        (
            "SACK cumulative last + 100".into(),
            "SACK",
            sack_to(PEER_QP, last + 100, 1, 0),
        ),
        (
            "SACK bits 1 and 3 from first".into(),
            "SACK",
            sack_to(PEER_QP, none, 1, 0b1010),
        ),
        (
            "SACK bits 0 and 63 from last + 6".into(),
            "SACK",
            sack_to(PEER_QP, none, 9, 1 | 1 << 63),
        ),
        ("SACK offset -32768".into(), "SACK", sack_to(PEER_QP, none, i16::MIN, 1)),
        ("SACK offset 32767".into(), "SACK", sack_to(PEER_QP, none, i16::MAX, 1)),
        ("SACK for QP 0x66".into(), "SACK", sack_to(0x66, last, 1, 0)),
        (
            "ACK cumulative last + 1".into(),
            "ACK",
            ack_to(PEER_QP, last + 1, Syndrome::Ack { credits: 0 }),
        ),
        (
            "ACK RNR".into(),
            "ACK",
            ack_to(PEER_QP, first, Syndrome::Rnr { timer: 1 }),
        ),
        (
            "ACK NAK PSN sequence".into(),
            "ACK",
            ack_to(
                PEER_QP,
                first,
                Syndrome::Nak {
                    code: Syndrome::NAK_PSN_SEQ_ERROR,
                },
            ),
        ),
        (
            "ACK NAK remote access for last + 1".into(),
            "ACK",
            ack_to(
                PEER_QP,
                last + 1,
                Syndrome::Nak {
                    code: Syndrome::NAK_REMOTE_ACCESS,
                },
            ),
        ),
        ("PROBE".into(), "PROBE", probe_to(PEER_QP, 1)),
        (
            "EP-REQ EV-PROBE to the endpoint QP".into(),
            "ENDPOINT",
            endpoint_to(choices::ENDPOINT_QPN, false, EndpointOp::EvProbe),
        ),
    ];
    // Probe answers naming EV indices the QP does not have (the first
    // past its set, one far beyond, one negative as an offset) and its
    // last one, acknowledging nothing new.
    for ev_index in [EVS as i16, 200, -1, EVS as i16 - 1] {
        let mut pr = sack_to(PEER_QP, none, 1, 0);
        if let Headers::Sack { seth, .. } = &mut pr.headers {
            seth.probe_response = true;
            seth.ack_psn_offset = ev_index;
        }
        cases.push((format!("SACK probe answer for EV {ev_index}"), "SACK-PR", pr));
    }
    for reason in [
        NackReason::Trimmed,
        NackReason::TrimmedLastHop,
        NackReason::NoBitmap,
        NackReason::NoPktBuffer,
        NackReason::NoResource,
        NackReason::PsnOorWindow,
        NackReason::UnexpEvent,
    ] {
        for psn in [last + 1, last + 50] {
            cases.push((
                format!("NACK {reason:?} for {psn:#x}"),
                "NACK",
                nack_to(PEER_QP, psn, reason, 0),
            ));
        }
    }
    let mut frames: Vec<Case> = cases
        .iter()
        .map(|(what, kind, p)| Case {
            what: what.clone(),
            kind,
            frame: mrc10_frame(p),
        })
        .collect();
    // Every SACK / NACK header cut and corrupted (of a SACK that
    // acknowledges nothing and a NACK for an unsent PSN), the corruptions
    // left unsealed: resealed, a flipped cumulative PSN could acknowledge
    // a packet that was sent, which is not hostile.
    for (name, p) in [
        ("SACK", sack_to(PEER_QP, none, 1, 0)),
        ("NACK", nack_to(PEER_QP, last + 1, NackReason::Trimmed, 0)),
    ] {
        frames.extend(
            variants(name, &p, &mut rng)
                .into_iter()
                .filter(|c| !c.what.ends_with("resealed")),
        );
        frames.extend(forged_transports(name, &p));
    }
    let mut now = Instant::from_us(2);
    let mut tally = Tally::new();
    let mut mismatches = Vec::new();
    let base_drop = nic.counter("retx_drop");
    let n = frames.len();
    for c in frames {
        let before = snapshot(&mut nic);
        let r = model.handle_frame(now, &c.frame);
        now += Duration::from_ns(600);
        nic.rx.push(c.frame);
        nic.run(200);
        let after = snapshot(&mut nic);
        let (m, h) = (model_verdict(&r), core_verdict(&before, &after, &c.what));
        *tally.entry((m, h)).or_default() += 1;
        let gap = known_gap(m, h, c.kind);
        if m != h && !gap {
            mismatches.push(format!("{}: model {m:?} ({r:?}), core {h:?}", c.what));
        }
    }
    nic.run(3000);
    eprintln!("{n} hostile MRC 1.0 acknowledgements; (model, core) verdicts: {tally:?}");
    assert!(
        mismatches.is_empty(),
        "{} verdicts differ from the model's:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    while let Some(e) = model.poll_event() {
        assert!(
            !matches!(e, Event::SendCompleted(_)),
            "the model completed on a forged acknowledgement: {e:?}"
        );
    }
    assert!(
        !send_cqe_written(&nic, 0),
        "a forged acknowledgement completed the WRITE"
    );
    assert_eq!(nic.counter("completion"), 0);
    assert!(
        nic.counter("retx_drop") > base_drop,
        "the forged acknowledgements counted"
    );
    let resent = nic.counter("retransmit");

    // The genuine SACK: everything up to the last PSN.
    genuine_sack_completes_once(
        &mut nic,
        &mut model,
        now,
        mrc10_frame(&sack_to(PEER_QP, last, 1, 0)),
        0x5A,
    );
    assert_eq!(
        nic.counter("retransmit"),
        resent,
        "nothing resent after the genuine SACK"
    );
    requester_wrote_only_its_cq(&nic);
}

/// A seeded fuzz loop over the responder's templates:
/// `HOSTILE_FRAMES` (default 300) frames, each a template with 1-3 bits
/// flipped anywhere past Ethernet and resealed, a random byte in its
/// headers resealed, its transport cut at a random length (outer lengths
/// made for it), or bits flipped with the ICRC left wrong; a good WRITE
/// after every five; the same checks as the enumerated test.
#[test]
fn fuzzed_mrc10_frames_match_the_golden_model() {
    if skip_without_verilator("the verilated core") {
        return;
    }
    let frames: usize = std::env::var("HOSTILE_FRAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let mut b = ResponderBench::new_in(Dialect::Mrc10, 44);
    let mut rng = Rng::new(0x4057_11e2);
    let templates = responder_templates();
    let mut cases = Vec::new();
    for i in 0..frames {
        let (name, p) = &templates[rng.below(templates.len() as u64) as usize];
        let f = mrc10_frame(p);
        let chain = header_spans(p).last().expect("a BTH at least").2;
        let (what, frame) = match rng.below(4) {
            0 => {
                let mut g = f.clone();
                for _ in 0..=rng.below(3) {
                    let at = 14 + rng.below((f.len() - 14) as u64) as usize;
                    g[at] ^= 1 << rng.below(8);
                }
                icrc::reseal_frame(&mut g);
                ("bits flipped, resealed", g)
            }
            1 => {
                let mut g = f.clone();
                let at = TRANSPORT_AT + rng.below(chain as u64) as usize;
                g[at] = rng.below(256) as u8;
                icrc::reseal_frame(&mut g);
                ("a header byte set, resealed", g)
            }
            2 => {
                let t = transport_of(&f);
                let n = rng.below(t.len() as u64) as usize;
                ("transport cut", frame_with_transport(&t[..n]))
            }
            _ => {
                let mut g = f.clone();
                let at = 14 + rng.below((f.len() - 14) as u64) as usize;
                g[at] ^= 1 << rng.below(8);
                ("a bit flipped, ICRC wrong", g)
            }
        };
        cases.push(Case {
            what: format!("fuzz {i}: {name}, {what}"),
            kind: kind_of(p),
            frame,
        });
    }
    run_responder(&mut b, cases);
}

/// MRC 1.0 data packets whose payloads are longer than the path MTU
/// (`hostile::frames_above_the_mtu`: ONLY, FIRST, MIDDLE, LAST-IMM): the
/// golden responder refuses each (`Malformed`, "payload longer than the
/// MTU"), places nothing and sends nothing; so does the core (the RX
/// path's MTU check, `recv_init.log2_mtu`: counted in `rx_not_data`).
/// The PSNs stay unreceived: valid WRITEs at the same PSNs are then
/// placed and completed on both sides.
#[test]
fn payload_above_the_mtu_is_not_placed() {
    if skip_without_verilator("the verilated core") {
        return;
    }
    above_the_mtu_nothing_placed(ResponderBench::new_in(Dialect::Mrc10, 43));
}
