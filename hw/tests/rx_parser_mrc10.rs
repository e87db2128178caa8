//! The MRC 1.0 transport header parser against the golden parser
//! (`proto::wire::mrc10`): every packet kind of the catalog and random
//! packets of every opcode (random fields, IPv4 and IPv6 frames from
//! `emit_frame`), then hostile copies of their transports (truncated at
//! every length, so at every header boundary; one byte flipped in the
//! headers; forged opcode, TVer, QP, TS flag, enum fields and PadCnt; a
//! forged length with the bytes it claims). Each input goes through the
//! rust-hdl simulation back to back (with some idle cycles), and the record
//! two cycles later must equal the golden verdict: the drop reason, or on
//! acceptance every field of the BTH and of the opcode's headers and the
//! payload position. The same cycles are then replayed on the emitted
//! Verilog (lockstep: every output, every cycle).
//!
//! The golden verdict for a transport is `parse_transport` plus the PadCnt
//! and payload rules of `mrc10::frame::parse_frame_headers`; on whole
//! frames the test checks that this equals `parse_frame_headers` itself
//! (so the copy of those two rules cannot drift).

use std::sync::{Arc, Mutex};

use hw::rx_parser_mrc10::{self as rp, Mrc10RxHeader, RxParserMrc10, WINDOW_BYTES};
use proto::wire::frame::parse_outer;
use proto::wire::mrc10::{
    self, catalog, choices, BthRepr, EndpointOp, Headers, Mrc10Packet, NackReason, Opcode, Profile, SkipMode,
};
use proto::wire::{Encap, WireErrorKind};
use rust_hdl::prelude::*;
use tb::rng::Rng;

mod mrc10_gen;
use mrc10_gen::{is_trimmed, random_packet};
use tb::{lockstep, lockstep_sim};

/// Cycles from an input to its record.
const LATENCY: usize = 2;

/// One input of the block: transport bytes (the golden parser sees exactly
/// these) and the trimmed class.
#[derive(Clone, Debug)]
struct Input {
    t: Vec<u8>,
    trimmed: bool,
    what: String,
}

/// A record as observed: cycle, valid, drop, reason, word.
type Record = (usize, bool, bool, u64, Mrc10RxHeader);

type Golden = Result<(BthRepr, Headers, usize, usize), WireErrorKind>;

/// The golden verdict on a transport: `parse_transport`, then PadCnt and
/// payload as `parse_frame_headers` checks them.
fn golden(t: &[u8], trimmed: bool) -> Golden {
    let (b, h, at) = mrc10::parse_transport(t).map_err(|e| e.kind())?;
    let remaining = t.len() - at;
    let op = b.opcode;
    let pad = if op.is_write() && trimmed {
        0
    } else {
        usize::from(b.pad)
    };
    if pad > remaining || (!op.is_write() && pad != 0) {
        return Err(WireErrorKind::BadPadCount);
    }
    if !op.is_write() && remaining != 0 {
        return Err(WireErrorKind::UnexpectedPayload);
    }
    Ok((b, h, at, remaining - pad))
}

/// The transport of `frame`, its trimmed class and where it starts; the
/// golden frame parser's verdict must equal [`golden`] on it.
fn transport_of(frame: &[u8], what: &str) -> Input {
    let profile = Profile::DEFAULT;
    let o = parse_outer(frame, true).expect("a well-formed frame");
    let trimmed = is_trimmed(profile.dscp.class_of(o.dscp));
    let t = o.transport.to_vec();
    let g = golden(&t, trimmed);
    let f = mrc10::parse_frame_headers(frame, &profile);
    match (&g, &f) {
        (Ok((b, h, at, len)), Ok(p)) => {
            assert_eq!((&p.packet.bth, &p.packet.headers), (b, h), "{what}");
            assert_eq!(p.payload, o.transport_at + at..o.transport_at + at + len, "{what}");
        }
        (Err(k), Err(e)) => assert_eq!(*k, e.kind(), "{what}"),
        _ => panic!("{what}: transport verdict {g:?}, frame verdict {f:?}"),
    }
    Input {
        t,
        trimmed,
        what: what.to_string(),
    }
}

/// Every catalog kind and `n_random` random packets (all opcodes in turn),
/// each over IPv4 and IPv6.
fn packets(r: &mut Rng, n_random: usize) -> Vec<Input> {
    let mut pkts: Vec<Mrc10Packet> = catalog::every_kind();
    for i in 0..n_random {
        pkts.push(random_packet(r, Opcode::ALL[i % Opcode::ALL.len()]));
    }
    let mut out = Vec::new();
    for (i, p) in pkts.iter().enumerate() {
        p.validate(&Profile::DEFAULT)
            .unwrap_or_else(|e| panic!("packet {i} invalid: {e}: {p:?}"));
        for (encap, ip) in [(Encap::test_v4(), "v4"), (Encap::test_v6(), "v6")] {
            let mut f = Vec::new();
            mrc10::emit_frame(p, &encap, &Profile::DEFAULT, &mut f);
            out.push(transport_of(&f, &format!("{} #{i} {ip}", p.bth.opcode.name())));
        }
    }
    out
}

/// Hostile copies of a valid transport `x`.
fn hostile(r: &mut Rng, x: &Input, out: &mut Vec<Input>) {
    let hdr_end = match golden(&x.t, x.trimmed) {
        Ok((_, _, at, _)) => at,
        Err(_) => x.t.len(),
    };
    let mut push = |t: Vec<u8>, trimmed: bool, how: String| {
        out.push(Input {
            t,
            trimmed,
            what: format!("{} {how}", x.what),
        })
    };
    // Truncated at every length up to past the headers: every header
    // boundary and every byte inside a header.
    for len in 0..=(hdr_end + 4).min(x.t.len()) {
        push(x.t[..len].to_vec(), x.trimmed, format!("cut to {len}"));
    }
    // One byte flipped in the headers.
    for _ in 0..4 {
        let mut t = x.t.clone();
        let at = r.below(hdr_end.min(WINDOW_BYTES) as u64) as usize;
        t[at] ^= 1 << r.below(8);
        push(t, x.trimmed, format!("bit flip at {at}"));
    }
    // Forged fields.
    let forge = |at: usize, v: u8| {
        let mut t = x.t.clone();
        if at < t.len() {
            t[at] = v;
        }
        t
    };
    let opcode = r.next_u64() as u8;
    push(forge(0, opcode), x.trimmed, format!("opcode {opcode:#x}"));
    let other = Opcode::ALL[r.below(12) as usize].as_u8();
    push(forge(0, other), x.trimmed, format!("opcode {other:#x}"));
    let b1 = x.t[1];
    push(forge(1, b1 | (1 + r.below(15) as u8)), x.trimmed, "TVer".into());
    push(
        forge(1, (b1 & !0x30) | (r.below(4) as u8) << 4),
        x.trimmed,
        "PadCnt".into(),
    );
    push(forge(7, x.t[7] ^ 0x02), x.trimmed, "QP ^ 2".into());
    push(forge(8, x.t[8] ^ 0x10), x.trimmed, "TS flipped".into());
    // The byte after the BTH is every enum field (skip mode, NACK reason,
    // ERTH op); the EETH's format is at byte 28.
    let v = r.next_u64() as u8;
    push(forge(12, v), x.trimmed, format!("byte 12 = {v:#x}"));
    push(forge(12, x.t[12] | 0xC0), x.trimmed, "byte 12 | 0xC0".into());
    let v = r.below(8) as u8;
    push(forge(28, v), x.trimmed, format!("byte 28 = {v}"));
    push(x.t.clone(), !x.trimmed, "trimmed flipped".into());
    // A forged length: extra bytes the length claims.
    let mut t = x.t.clone();
    let extra = 1 + r.below(8) as usize;
    t.extend((0..extra).map(|_| r.next_u64() as u8));
    push(t, x.trimmed, format!("{extra} bytes longer"));
}

fn window(t: &[u8]) -> Bits<{ rp::WINDOW_BITS }> {
    // Bytes past the length are garbage: the block must ignore them.
    let mut w = [0xA5u8; WINDOW_BYTES];
    let n = t.len().min(WINDOW_BYTES);
    w[..n].copy_from_slice(&t[..n]);
    let mut b = Bits::<{ rp::WINDOW_BITS }>::default();
    for (k, c) in w.chunks(8).enumerate() {
        b.set_bits::<64>(64 * k, u64::from_le_bytes(c.try_into().unwrap()).into());
    }
    b
}

/// The fields of `h` that the golden `(bth, headers)` defines, compared;
/// the first difference.
fn compare(h: &Mrc10RxHeader, b: &BthRepr, hs: &Headers, at: usize, len: usize, trimmed: bool) -> Result<(), String> {
    let mut d: Vec<(&str, u64, u64)> = Vec::new();
    let mut eq = |name: &'static str, got: u64, want: u64| {
        if got != want {
            d.push((name, got, want));
        }
    };
    let bit = |x: Bit| u64::from(x);
    eq("opcode", h.opcode.to_u64(), u64::from(b.opcode.as_u8()));
    eq("se", bit(h.se), u64::from(b.solicited));
    eq("mig", bit(h.mig), u64::from(b.mig_req));
    eq("pad", h.pad.to_u64(), u64::from(b.pad));
    eq("pkey", h.pkey.to_u64(), u64::from(b.pkey));
    eq("fecn", bit(h.fecn), u64::from(b.fecn));
    eq("becn", bit(h.becn), u64::from(b.becn));
    eq("dest_qp", h.dest_qp.to_u64(), u64::from(b.dest_qp));
    eq("ack_req", bit(h.ack_req), u64::from(b.ack_req));
    eq("retransmit", bit(h.retransmit), u64::from(b.retransmit));
    eq("ts", bit(h.ts), u64::from(b.timestamp));
    eq("psn", h.psn.to_u64(), u64::from(b.psn.value()));
    let op = b.opcode;
    eq("is_write", bit(h.is_write), u64::from(op.is_write()));
    eq("has_imm", bit(h.has_imm), u64::from(op.has_imm()));
    eq("is_ack", bit(h.is_ack), u64::from(op == Opcode::Ack));
    eq("is_sack", bit(h.is_sack), u64::from(op == Opcode::Sack));
    eq("is_nack", bit(h.is_nack), u64::from(op == Opcode::Nack));
    eq("is_probe", bit(h.is_probe), u64::from(op == Opcode::ReliabilityProbe));
    eq("is_endpoint", bit(h.is_endpoint), u64::from(op.is_endpoint()));
    eq("trimmed", bit(h.trimmed), u64::from(trimmed));
    eq("payload_off", h.payload_off.to_u64(), at as u64);
    eq("payload_len", h.payload_len.to_u64(), len as u64);
    match hs {
        Headers::Write(w) => {
            eq("rq_msn", h.rq_msn.to_u64(), u64::from(w.meth.rq_msn));
            eq("msn", h.msn.to_u64(), u64::from(w.meth.msn));
            if let Some(t) = &w.tseth {
                eq("tx_ts", h.tx_ts.to_u64(), u64::from(t.tx_ts));
                eq("ts_res", bit(h.ts_res), u64::from(t.resolution));
                eq("ts_format", h.ts_format.to_u64(), u64::from(t.format));
            }
            eq("va", h.va.to_u64(), w.reth.va);
            eq("rkey", h.rkey.to_u64(), u64::from(w.reth.rkey));
            eq("dma_len", h.dma_len.to_u64(), u64::from(w.reth.dma_len));
            if let Some(imm) = w.imm {
                eq("imm", h.imm.to_u64(), u64::from(imm));
            }
        }
        Headers::Ack(a) => {
            // Bit 7 of the syndrome is reserved: the golden parser drops
            // it, the block passes the byte on (the consumer ignores it).
            eq("syndrome", h.syndrome.to_u64() & 0x7F, u64::from(a.syndrome.to_u8()));
            eq("aeth_msn", h.aeth_msn.to_u64(), u64::from(a.msn));
        }
        Headers::Sack { seth, cc_state } => {
            eq("skip_mode", h.skip_mode.to_u64(), u64::from(seth.skip_mode.as_u8()));
            eq("probe_response", bit(h.probe_response), u64::from(seth.probe_response));
            eq(
                "ack_psn_offset",
                h.ack_psn_offset.to_u64(),
                u64::from(seth.ack_psn_offset as u16),
            );
            eq("ctl_ev", h.ctl_ev.to_u64(), u64::from(seth.ev));
            eq("ctl_sctx", h.ctl_sctx.to_u64(), u64::from(seth.sender_context));
            eq("ctl_rctx", h.ctl_rctx.to_u64(), u64::from(seth.receiver_context));
            eq("ctl_psn", h.ctl_psn.to_u64(), u64::from(seth.cum_ack_psn.value()));
            eq("ctl_cc_type", h.ctl_cc_type.to_u64(), u64::from(seth.cc_type));
            eq("ctl_cc_flags", h.ctl_cc_flags.to_u64(), u64::from(seth.cc_flags));
            eq("mpr", h.mpr.to_u64(), u64::from(seth.mpr));
            eq(
                "sack_offset",
                h.sack_offset.to_u64(),
                u64::from(seth.sack_offset as u16),
            );
            eq("bitmap", h.bitmap.to_u64(), seth.bitmap);
            eq("echo_ts", h.echo_ts.to_u64(), u64::from(cc_state.echo_ts));
            eq("restore", bit(h.restore), u64::from(cc_state.restore));
            eq("ooo_count", h.ooo_count.to_u64(), u64::from(cc_state.ooo_count));
            eq(
                "cwnd_penalty",
                h.cwnd_penalty.to_u64(),
                u64::from(cc_state.cwnd_penalty),
            );
            eq("rcvd_bytes", h.rcvd_bytes.to_u64(), u64::from(cc_state.rcvd_bytes));
        }
        Headers::Nack(n) => {
            eq("nack_reason", h.nack_reason.to_u64(), u64::from(n.reason.as_u8()));
            eq("vendor_info", h.vendor_info.to_u64(), u64::from(n.vendor_info));
            eq("ctl_ev", h.ctl_ev.to_u64(), u64::from(n.ev));
            eq("ctl_sctx", h.ctl_sctx.to_u64(), u64::from(n.sender_context));
            eq("ctl_rctx", h.ctl_rctx.to_u64(), u64::from(n.receiver_context));
            eq("ctl_psn", h.ctl_psn.to_u64(), u64::from(n.nack_psn.value()));
            eq("ctl_cc_type", h.ctl_cc_type.to_u64(), u64::from(n.cc_type));
            eq("ctl_cc_flags", h.ctl_cc_flags.to_u64(), u64::from(n.cc_flags));
            eq("nack_ts", h.nack_ts.to_u64(), u64::from(n.timestamp));
        }
        Headers::Probe(p) => {
            eq("probe_id", h.probe_id.to_u64(), u64::from(p.probe_id));
            eq("probe_sctx", h.probe_sctx.to_u64(), u64::from(p.sender_context));
            eq("probe_rctx", h.probe_rctx.to_u64(), u64::from(p.receiver_context));
            eq("probe_ts", h.probe_ts.to_u64(), u64::from(p.timestamp));
        }
        Headers::Endpoint { erth, eeth } => {
            eq("ep_op", h.ep_op.to_u64(), u64::from(erth.op.as_u8()));
            eq("request_id", h.request_id.to_u64(), u64::from(erth.request_id));
            eq(
                "port_status_mask",
                h.port_status_mask.to_u64(),
                u64::from(erth.port_status_mask),
            );
            eq("ep_ts", h.ep_ts.to_u64(), u64::from(erth.timestamp));
            eq("has_eeth", bit(h.has_eeth), u64::from(eeth.is_some()));
            if let Some(e) = eeth {
                eq("ev_format", h.ev_format.to_u64(), u64::from(e.ev_format.as_u8()));
                eq("ev_port", h.ev_port.to_u64(), u64::from(e.port));
                eq("service_time", h.service_time.to_u64(), u64::from(e.service_time));
                // The EV is big-endian: word k (bits 64k..) is bytes
                // 24-8k..32-8k.
                for k in 0..4 {
                    let want = u64::from_be_bytes(e.ev[24 - 8 * k..32 - 8 * k].try_into().unwrap());
                    eq("eeth_ev word", h.eeth_ev.get_bits::<64>(64 * k).to_u64(), want);
                }
            }
        }
    }
    if d.is_empty() {
        Ok(())
    } else {
        Err(format!("{d:x?}"))
    }
}

/// Stream `inputs` through the block (an idle cycle every 7th input) and
/// check each record against the golden verdict; then the Verilog
/// lockstep. Returns (accepted, dropped per reason).
fn run(inputs: Vec<Input>) -> (usize, Vec<(u64, usize)>) {
    let n = inputs.len();
    let got: Arc<Mutex<Vec<Record>>> = Arc::new(Mutex::new(Vec::new()));
    let sent: Arc<Mutex<Vec<usize>>> = Arc::new(Mutex::new(Vec::new()));
    let (g, s) = (got.clone(), sent.clone());
    let ins = inputs.clone();
    let mut uut = RxParserMrc10::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(RxParserMrc10, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        let mut slots: Vec<Option<usize>> = Vec::new();
        for i in 0..ins.len() {
            slots.push(Some(i));
            if i % 7 == 6 {
                slots.push(None);
            }
        }
        slots.extend([None; LATENCY + 1]);
        for (cycle, slot) in slots.into_iter().enumerate() {
            match slot {
                Some(i) => {
                    let t = &ins[i].t;
                    x.in_valid.next = true;
                    x.in_data.next = window(t);
                    x.in_len.next = (t.len() as u64).into();
                    x.in_trimmed.next = ins[i].trimmed;
                    s.lock().unwrap().push(cycle);
                }
                None => {
                    // Garbage on an idle input must not matter.
                    x.in_valid.next = false;
                    x.in_data.next = window(&[0xDD; WINDOW_BYTES]);
                    x.in_len.next = 7.into();
                    x.in_trimmed.next = true;
                }
            }
            wait_clock_false!(sim, clock, x);
            if x.out_valid.val() || x.out_drop.val() {
                g.lock().unwrap().push((
                    cycle,
                    x.out_valid.val(),
                    x.out_drop.val(),
                    x.out_reason.val().to_u64(),
                    x.out_hdr.val(),
                ));
            }
            wait_clock_true!(sim, clock, x);
        }
        sim.done(x)
    });
    let started = std::time::Instant::now();
    sim.run(Box::new(uut), 1_000_000_000_000).unwrap();
    eprintln!("{n} inputs simulated in {:?}", started.elapsed());
    let got = got.lock().unwrap();
    let sent = sent.lock().unwrap();
    assert_eq!(got.len(), n, "one record per input");
    let mut accepted = 0;
    let mut reasons: Vec<(u64, usize)> = Vec::new();
    for (i, inp) in inputs.iter().enumerate() {
        let (cycle, valid, drop, reason, hdr) = &got[i];
        // Records are observed before the edge: an input driven in cycle c
        // is registered at the end of c and c + 1, so it shows in c + 2.
        assert_eq!(*cycle, sent[i] + LATENCY, "{}: latency", inp.what);
        assert!(valid != drop, "{}: exactly one of valid / drop", inp.what);
        match golden(&inp.t, inp.trimmed) {
            Ok((b, hs, at, len)) => {
                assert!(*valid, "{}: golden accepts, block drops with reason {reason}", inp.what);
                assert_eq!(*reason, 0, "{}", inp.what);
                if let Err(e) = compare(hdr, &b, &hs, at, len, inp.trimmed) {
                    panic!("{}: fields differ (name, block, golden): {e}", inp.what);
                }
                accepted += 1;
            }
            Err(k) => {
                let want = k.index() as u64 + 1;
                assert!(*drop, "{}: golden drops ({k:?}), block accepts", inp.what);
                assert_eq!(*reason, want, "{}: golden {k:?}", inp.what);
                match reasons.iter_mut().find(|(r, _)| *r == want) {
                    Some(e) => e.1 += 1,
                    None => reasons.push((want, 1)),
                }
            }
        }
    }
    rec.check_verilog("mrc_rx_parser_mrc10", || {
        hw::flow::emit_block("mrc_rx_parser_mrc10", &mut RxParserMrc10::default()).verilog
    });
    reasons.sort();
    (accepted, reasons)
}

/// The block's constants are the golden model's.
#[test]
fn constants_match_proto() {
    use rp::{chain, hlen, opcode, reason, value};
    assert_eq!(reason::TRUNCATED, WireErrorKind::Truncated.index() as u64 + 1);
    assert_eq!(reason::UNKNOWN_OPCODE, WireErrorKind::UnknownOpcode.index() as u64 + 1);
    assert_eq!(
        reason::BAD_TRANSPORT_VERSION,
        WireErrorKind::BadTransportVersion.index() as u64 + 1
    );
    assert_eq!(reason::BAD_PAD_COUNT, WireErrorKind::BadPadCount.index() as u64 + 1);
    assert_eq!(
        reason::UNKNOWN_NACK_REASON,
        WireErrorKind::UnknownNackReason.index() as u64 + 1
    );
    assert_eq!(
        reason::UNKNOWN_ENDPOINT_OP,
        WireErrorKind::UnknownEndpointOp.index() as u64 + 1
    );
    assert_eq!(reason::BAD_SKIP_MODE, WireErrorKind::BadSkipMode.index() as u64 + 1);
    assert_eq!(
        reason::UNKNOWN_EV_FORMAT,
        WireErrorKind::UnknownEvFormat.index() as u64 + 1
    );
    assert_eq!(
        reason::ENDPOINT_QP_MISMATCH,
        WireErrorKind::EndpointQpMismatch.index() as u64 + 1
    );
    assert_eq!(
        reason::UNEXPECTED_TIMESTAMP,
        WireErrorKind::UnexpectedTimestamp.index() as u64 + 1
    );
    assert_eq!(
        reason::UNEXPECTED_PAYLOAD,
        WireErrorKind::UnexpectedPayload.index() as u64 + 1
    );
    let ops = [
        (opcode::WRITE_FIRST, Opcode::WriteFirst),
        (opcode::WRITE_MIDDLE, Opcode::WriteMiddle),
        (opcode::WRITE_LAST, Opcode::WriteLast),
        (opcode::WRITE_LAST_IMM, Opcode::WriteLastImm),
        (opcode::WRITE_ONLY, Opcode::WriteOnly),
        (opcode::WRITE_ONLY_IMM, Opcode::WriteOnlyImm),
        (opcode::ACK, Opcode::Ack),
        (opcode::ENDPOINT_REQ, Opcode::EndpointRequest),
        (opcode::ENDPOINT_RESP, Opcode::EndpointResponse),
        (opcode::SACK, Opcode::Sack),
        (opcode::NACK, Opcode::Nack),
        (opcode::PROBE, Opcode::ReliabilityProbe),
    ];
    for (v, op) in ops {
        assert_eq!(v, u64::from(op.as_u8()), "{op:?}");
    }
    use proto::wire::mrc10::{bth, cc_state, eeth, erth, meth, neth, peth, seth, tseth};
    assert_eq!(hlen::BTH, bth::HEADER_LEN);
    assert_eq!(hlen::METH, meth::HEADER_LEN);
    assert_eq!(hlen::TSETH, tseth::HEADER_LEN);
    assert_eq!(hlen::RETH, proto::wire::reth::HEADER_LEN);
    assert_eq!(hlen::IMMDT, proto::wire::immdt::HEADER_LEN);
    assert_eq!(hlen::AETH, proto::wire::aeth::HEADER_LEN);
    assert_eq!(hlen::SETH, seth::HEADER_LEN);
    assert_eq!(hlen::CC_STATE, cc_state::HEADER_LEN);
    assert_eq!(hlen::NETH, neth::HEADER_LEN);
    assert_eq!(hlen::PETH, peth::HEADER_LEN);
    assert_eq!(hlen::ERTH, erth::HEADER_LEN);
    assert_eq!(hlen::EETH, eeth::HEADER_LEN);
    assert_eq!(chain::WRITE_END_BOTH, mrc10::MAX_DATA_OVERHEAD - 3 - 4);
    let reasons: Vec<u64> = NackReason::ALL.iter().map(|r| u64::from(r.as_u8())).collect();
    assert_eq!(reasons, value::NACK_REASONS);
    assert_eq!(value::ENDPOINT_QPN, u64::from(choices::ENDPOINT_QPN));
    assert_eq!(value::EP_OP_EV_PROBE, u64::from(EndpointOp::EvProbe.as_u8()));
    assert!(choices::eeth_follows(EndpointOp::EvProbe) && !choices::eeth_follows(EndpointOp::PortStatusUpdate));
    assert_eq!(SkipMode::from_u8(value::SKIP_MODE_UNDEFINED as u8), None);
    // Every field lies inside the window.
    for (name, bits, off) in rp::WINDOW_FIELDS {
        assert!(off + bits <= rp::WINDOW_BITS, "{name}");
    }
}

/// Every catalog kind and random packets of every opcode, IPv4 and IPv6:
/// all accepted, every field equal.
#[test]
fn every_kind_matches_golden() {
    let mut r = Rng::new(0x6d72_6331_3077);
    let inputs = packets(&mut r, 240);
    let n = inputs.len();
    let (accepted, reasons) = run(inputs);
    eprintln!("{n} packets: {accepted} accepted, drops {reasons:?}");
    assert_eq!(accepted, n, "every emitted packet parses");
}

/// Hostile copies: the block's verdict equals the golden parser's on
/// every one, and each drop reason the transport checks is reached.
#[test]
fn hostile_inputs_match_golden() {
    let mut r = Rng::new(0x686f_7374_696c);
    let base = packets(&mut r, 24);
    let mut inputs = Vec::new();
    for x in &base {
        hostile(&mut r, x, &mut inputs);
    }
    let n = inputs.len();
    let (accepted, reasons) = run(inputs);
    eprintln!("{n} hostile inputs: {accepted} accepted, drops (reason, count) {reasons:?}");
    for k in [
        WireErrorKind::Truncated,
        WireErrorKind::UnknownOpcode,
        WireErrorKind::BadTransportVersion,
        WireErrorKind::BadPadCount,
        WireErrorKind::UnknownNackReason,
        WireErrorKind::UnknownEndpointOp,
        WireErrorKind::BadSkipMode,
        WireErrorKind::UnknownEvFormat,
        WireErrorKind::EndpointQpMismatch,
        WireErrorKind::UnexpectedTimestamp,
        WireErrorKind::UnexpectedPayload,
    ] {
        assert!(
            reasons.iter().any(|(r, _)| *r == k.index() as u64 + 1),
            "{k:?} never reached: {reasons:?}"
        );
    }
}
