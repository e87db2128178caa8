//! The MRC 1.0 transport header builder against `proto::wire::mrc10`'s
//! emitter, byte for byte: every catalog kind and random packets of every
//! opcode (every field random), IPv4 and IPv6 frames from `emit_frame`;
//! the block gets the packet as the decoded word (`Mrc10RxHeader`) on top
//! of a word of random garbage (fields outside the opcode's chain must not
//! reach the wire), and its 64 output bytes must equal the frame's bytes
//! from the BTH to the end of the chain, then zeros, with the chain's
//! length. Back to back, with idle cycles; then the same cycles on the
//! emitted Verilog (lockstep).

use std::sync::{Arc, Mutex};

use hw::rx_parser_mrc10::{Mrc10RxHeader, WINDOW_BITS, WINDOW_BYTES};
use hw::tx_header_mrc10::TxHeaderMrc10;
use proto::wire::frame::parse_outer;
use proto::wire::mrc10::{self, catalog, Headers, Mrc10Packet, Opcode, Profile};
use proto::wire::Encap;
use rust_hdl::prelude::*;
use tb::rng::Rng;
use tb::{lockstep, lockstep_sim};

mod mrc10_gen;
use mrc10_gen::random_packet;

/// A random `N`-bit value.
fn rnd<const N: usize>(r: &mut Rng) -> Bits<N> {
    let mut b = Bits::<N>::default();
    let mut at = 0;
    while at < N {
        let w = (N - at).min(64);
        let v = r.next_u64() & if w == 64 { u64::MAX } else { (1 << w) - 1 };
        for k in 0..w {
            b = b.replace_bit(at + k, v >> k & 1 == 1);
        }
        at += w;
    }
    b
}

/// A word with every field random.
fn garbage(r: &mut Rng) -> Mrc10RxHeader {
    macro_rules! fill {
        ($h:ident; $($f:ident),*) => { $($h.$f = rnd(r);)* };
    }
    macro_rules! flag {
        ($h:ident; $($f:ident),*) => { $($h.$f = r.chance(50);)* };
    }
    let mut h = Mrc10RxHeader::default();
    fill!(h; opcode, pad, pkey, dest_qp, psn, rq_msn, msn, tx_ts, ts_format, va, rkey, dma_len, imm,
        syndrome, aeth_msn, skip_mode, ack_psn_offset, mpr, sack_offset, bitmap, ctl_ev, ctl_sctx,
        ctl_rctx, ctl_psn, ctl_cc_type, ctl_cc_flags, echo_ts, ooo_count, cwnd_penalty, rcvd_bytes,
        nack_reason, vendor_info, nack_ts, probe_id, probe_sctx, probe_rctx, probe_ts, ep_op,
        request_id, port_status_mask, ep_ts, ev_format, ev_port, service_time, eeth_ev, payload_off,
        payload_len);
    flag!(h; se, mig, fecn, becn, ack_req, retransmit, ts, is_write, has_imm, is_ack, is_sack, is_nack,
        is_probe, is_endpoint, has_eeth, trimmed, ts_res, probe_response, restore);
    h
}

fn b<const N: usize>(v: u64) -> Bits<N> {
    v.into()
}

/// `p` as the decoded word, over garbage.
fn word_of(r: &mut Rng, p: &Mrc10Packet) -> Mrc10RxHeader {
    let mut h = garbage(r);
    let t = &p.bth;
    let op = t.opcode;
    h.opcode = b(u64::from(op.as_u8()));
    h.se = t.solicited;
    h.mig = t.mig_req;
    h.pad = b(u64::from(t.pad));
    h.pkey = b(u64::from(t.pkey));
    h.fecn = t.fecn;
    h.becn = t.becn;
    h.dest_qp = b(u64::from(t.dest_qp));
    h.ack_req = t.ack_req;
    h.retransmit = t.retransmit;
    h.ts = t.timestamp;
    h.psn = b(u64::from(t.psn.value()));
    h.is_write = op.is_write();
    h.has_imm = op.has_imm();
    h.is_ack = op == Opcode::Ack;
    h.is_sack = op == Opcode::Sack;
    h.is_nack = op == Opcode::Nack;
    h.is_probe = op == Opcode::ReliabilityProbe;
    h.is_endpoint = op.is_endpoint();
    h.has_eeth = matches!(p.headers, Headers::Endpoint { eeth: Some(_), .. });
    match &p.headers {
        Headers::Write(w) => {
            h.rq_msn = b(u64::from(w.meth.rq_msn));
            h.msn = b(u64::from(w.meth.msn));
            if let Some(s) = &w.tseth {
                h.tx_ts = b(u64::from(s.tx_ts));
                h.ts_res = s.resolution;
                h.ts_format = b(u64::from(s.format));
            }
            h.va = b(w.reth.va);
            h.rkey = b(u64::from(w.reth.rkey));
            h.dma_len = b(u64::from(w.reth.dma_len));
            if let Some(imm) = w.imm {
                h.imm = b(u64::from(imm));
            }
        }
        Headers::Ack(a) => {
            h.syndrome = b(u64::from(a.syndrome.to_u8()));
            h.aeth_msn = b(u64::from(a.msn));
        }
        Headers::Sack { seth, cc_state } => {
            h.skip_mode = b(u64::from(seth.skip_mode.as_u8()));
            h.probe_response = seth.probe_response;
            h.ack_psn_offset = b(u64::from(seth.ack_psn_offset as u16));
            h.ctl_ev = b(u64::from(seth.ev));
            h.ctl_sctx = b(u64::from(seth.sender_context));
            h.ctl_rctx = b(u64::from(seth.receiver_context));
            h.ctl_psn = b(u64::from(seth.cum_ack_psn.value()));
            h.ctl_cc_type = b(u64::from(seth.cc_type));
            h.ctl_cc_flags = b(u64::from(seth.cc_flags));
            h.mpr = b(u64::from(seth.mpr));
            h.sack_offset = b(u64::from(seth.sack_offset as u16));
            h.bitmap = b(seth.bitmap);
            h.echo_ts = b(u64::from(cc_state.echo_ts));
            h.restore = cc_state.restore;
            h.ooo_count = b(u64::from(cc_state.ooo_count));
            h.cwnd_penalty = b(u64::from(cc_state.cwnd_penalty));
            h.rcvd_bytes = b(u64::from(cc_state.rcvd_bytes));
        }
        Headers::Nack(n) => {
            h.nack_reason = b(u64::from(n.reason.as_u8()));
            h.vendor_info = b(u64::from(n.vendor_info));
            h.ctl_ev = b(u64::from(n.ev));
            h.ctl_sctx = b(u64::from(n.sender_context));
            h.ctl_rctx = b(u64::from(n.receiver_context));
            h.ctl_psn = b(u64::from(n.nack_psn.value()));
            h.ctl_cc_type = b(u64::from(n.cc_type));
            h.ctl_cc_flags = b(u64::from(n.cc_flags));
            h.nack_ts = b(u64::from(n.timestamp));
        }
        Headers::Probe(pr) => {
            h.probe_id = b(u64::from(pr.probe_id));
            h.probe_sctx = b(u64::from(pr.sender_context));
            h.probe_rctx = b(u64::from(pr.receiver_context));
            h.probe_ts = b(u64::from(pr.timestamp));
        }
        Headers::Endpoint { erth, eeth } => {
            h.ep_op = b(u64::from(erth.op.as_u8()));
            h.request_id = b(u64::from(erth.request_id));
            h.port_status_mask = b(u64::from(erth.port_status_mask));
            h.ep_ts = b(u64::from(erth.timestamp));
            if let Some(e) = eeth {
                h.ev_format = b(u64::from(e.ev_format.as_u8()));
                h.ev_port = b(u64::from(e.port));
                h.service_time = b(u64::from(e.service_time));
                // Big-endian: bits 64k.. are bytes 24-8k..32-8k.
                let mut ev = Bits::<256>::default();
                for k in 0..4 {
                    let w = u64::from_be_bytes(e.ev[24 - 8 * k..32 - 8 * k].try_into().unwrap());
                    ev.set_bits::<64>(64 * k, w.into());
                }
                h.eeth_ev = ev;
            }
        }
    }
    h
}

/// One case: the word, the expected 64 bytes and length, a name.
struct Case {
    word: Mrc10RxHeader,
    bytes: [u8; WINDOW_BYTES],
    len: usize,
    what: String,
}

fn cases(r: &mut Rng, n_random: usize) -> Vec<Case> {
    let mut pkts = catalog::every_kind();
    for i in 0..n_random {
        pkts.push(random_packet(r, Opcode::ALL[i % Opcode::ALL.len()]));
    }
    let mut out = Vec::new();
    for (i, p) in pkts.iter().enumerate() {
        for (encap, ip) in [(Encap::test_v4(), "v4"), (Encap::test_v6(), "v6")] {
            let mut f = Vec::new();
            mrc10::emit_frame(p, &encap, &Profile::DEFAULT, &mut f);
            let at = parse_outer(&f, true).expect("a valid frame").transport_at;
            let len = p.transport_header_len();
            let mut bytes = [0u8; WINDOW_BYTES];
            bytes[..len].copy_from_slice(&f[at..at + len]);
            out.push(Case {
                word: word_of(r, p),
                bytes,
                len,
                what: format!("{} #{i} {ip}", p.bth.opcode.name()),
            });
        }
    }
    out
}

/// An output as observed: cycle, bytes, length.
type Output = (usize, [u8; WINDOW_BYTES], u64);

fn to_bytes(b: &Bits<WINDOW_BITS>) -> [u8; WINDOW_BYTES] {
    let mut out = [0u8; WINDOW_BYTES];
    for k in 0..WINDOW_BYTES / 8 {
        out[8 * k..8 * k + 8].copy_from_slice(&b.get_bits::<64>(64 * k).to_u64().to_le_bytes());
    }
    out
}

#[test]
fn headers_match_golden_emit() {
    let mut r = Rng::new(0x7478_6d72_6331);
    let cases = cases(&mut r, 240);
    let n = cases.len();
    let words: Vec<Mrc10RxHeader> = cases.iter().map(|c| c.word).collect();
    let got: Arc<Mutex<Vec<Output>>> = Arc::new(Mutex::new(Vec::new()));
    let sent: Arc<Mutex<Vec<usize>>> = Arc::new(Mutex::new(Vec::new()));
    let (g, s) = (got.clone(), sent.clone());
    let mut uut = TxHeaderMrc10::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(TxHeaderMrc10, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        let mut slots: Vec<Option<usize>> = Vec::new();
        for i in 0..words.len() {
            slots.push(Some(i));
            if i % 5 == 4 {
                slots.push(None);
            }
        }
        slots.extend([None; 3]);
        for (cycle, slot) in slots.into_iter().enumerate() {
            x.in_valid.next = slot.is_some();
            if let Some(i) = slot {
                x.in_hdr.next = words[i];
                s.lock().unwrap().push(cycle);
            }
            wait_clock_false!(sim, clock, x);
            if x.out_valid.val() {
                g.lock()
                    .unwrap()
                    .push((cycle, to_bytes(&x.out_data.val()), x.out_len.val().to_u64()));
            }
            wait_clock_true!(sim, clock, x);
        }
        sim.done(x)
    });
    sim.run(Box::new(uut), 1_000_000_000_000).unwrap();
    let got = got.lock().unwrap();
    let sent = sent.lock().unwrap();
    assert_eq!(got.len(), n, "one output per word");
    for (i, c) in cases.iter().enumerate() {
        let (cycle, bytes, len) = &got[i];
        assert_eq!(*cycle, sent[i] + 1, "{}: latency", c.what);
        assert_eq!(*len, c.len as u64, "{}: chain length", c.what);
        if bytes != &c.bytes {
            let diff: Vec<(usize, u8, u8)> = (0..WINDOW_BYTES)
                .filter(|&k| bytes[k] != c.bytes[k])
                .map(|k| (k, bytes[k], c.bytes[k]))
                .collect();
            panic!("{}: bytes differ (offset, block, golden): {diff:x?}", c.what);
        }
    }
    eprintln!("{n} header chains equal to emit_frame's bytes");
    rec.check_verilog("mrc_tx_header_mrc10", || {
        hw::flow::emit_block("mrc_tx_header_mrc10", &mut TxHeaderMrc10::default()).verilog
    });
}
