//! TX builder against the golden codec: a seeded mix of every packet kind
//! (RDMA WRITE First/Middle/Last/Last-Imm/Only/Only-Imm with and without
//! the MRC data extension, RC ACK, SACK 64/128/256, NACK of each kind,
//! probe request and response, CNP), over IPv4 and IPv6, with and without
//! an 802.1Q tag, payloads of 0..300 bytes, is turned into header request
//! records and payload beats and streamed through the rust-hdl simulation
//! with random stalls on the payload input and on `tx_tready`. Every frame
//! on `tx_*` must be byte-identical to `proto::wire::emit_frame` (with the
//! tag inserted after the MAC addresses; the ICRC does not cover Ethernet)
//! and must parse back with `proto::wire::parse_frame` (ICRC checked) to
//! the packet it came from. Malformed requests must produce no frame, pulse
//! `cnt_bad_request`, and leave the following frames intact. A burst of
//! one-beat ACKs with no stalls must leave one per cycle.
//!
//! The design simulated at 0.2 cycles/s unoptimised (1536-bit header
//! images); the workspace's dev profile optimises rust-hdl and `hw`
//! (Cargo.toml), which brings the three tests to a few seconds.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use hw::tx_builder::TxBuilder;
use proto::wire::*;
use proto::Psn;
use rust_hdl::prelude::*;

use tb::rng::RngStar as Rng;

mod mrc10_gen;
use tb::stall::Stall;
use tb::{lockstep, lockstep_sim};

/// One header request record, as the test drives it.
#[derive(Clone, Debug)]
struct Req {
    dst_mac: u64,
    src_mac: u64,
    vlan: Option<u16>,
    ipv6: bool,
    src_ip: u128,
    dst_ip: u128,
    dscp: u8,
    ecn: u8,
    ttl: u8,
    ev: u32,
    opcode: u8,
    se: bool,
    mig: bool,
    pad: u8,
    pkey: u16,
    fecn: bool,
    becn: bool,
    dest_qp: u32,
    ack_req: bool,
    xbit: bool,
    psn: u32,
    reth: (u64, u32, u32),
    imm: u32,
    aeth: (u8, u32),
    ext: Vec<u8>,
    payload: Vec<u8>,
    /// MRC 1.0: the transport bytes (BTH to the end of the chain), sent
    /// as `req_transport` instead of the legacy transport fields.
    mrc10: Option<Vec<u8>>,
    /// `req_drop`: a well-formed request dropped on purpose (the TX path's
    /// packet of a QP in error): no frame, its payload consumed, not
    /// counted as malformed.
    drop: bool,
    /// `req_qp` and `req_flushable` (the flush test's; 0 and false else).
    qp: u8,
    flushable: bool,
}

/// A test case: the request, and the frame the golden codec writes for it
/// (`None` for a request the builder must drop).
struct Case {
    kind: &'static str,
    req: Req,
    want: Option<(Vec<u8>, RocePacket)>,
}

fn mac(b: [u8; 6]) -> u64 {
    b.iter().fold(0, |a, &x| (a << 8) | u64::from(x))
}

fn request(p: &RocePacket, encap: &Encap, vlan: Option<u16>) -> Req {
    let (ipv6, src_ip, dst_ip) = match encap.ip {
        IpPair::V4 { src, dst } => (
            false,
            u128::from(u32::from_be_bytes(src)),
            u128::from(u32::from_be_bytes(dst)),
        ),
        IpPair::V6 { src, dst } => (true, u128::from_be_bytes(src), u128::from_be_bytes(dst)),
    };
    let dscp = if p.trimmed {
        59
    } else if p.bth.opcode == Opcode::Cnp {
        48
    } else {
        26
    };
    let ext = p.ext.as_ref().map_or_else(Vec::new, |e| {
        let mut buf = vec![0u8; e.buffer_len()];
        e.emit(&mut MrcExtPacket::new_unchecked(&mut buf[..]));
        buf
    });
    let b = &p.bth;
    Req {
        dst_mac: mac(encap.dst_mac),
        src_mac: mac(encap.src_mac),
        vlan,
        ipv6,
        src_ip,
        dst_ip,
        dscp,
        ecn: if p.ecn_ce { 3 } else { 2 },
        ttl: 64,
        ev: p.ev,
        opcode: b.opcode.as_u8(),
        se: b.solicited,
        mig: b.mig_req,
        pad: b.pad,
        pkey: b.pkey,
        fecn: b.fecn,
        becn: b.becn,
        dest_qp: b.dest_qp,
        ack_req: b.ack_req,
        xbit: b.mrc_ext,
        psn: b.psn.value(),
        reth: p.reth.map_or((0, 0, 0), |r| (r.va, r.rkey, r.dma_len)),
        imm: p.imm.unwrap_or(0),
        aeth: p.aeth.map_or((0, 0), |a| (a.syndrome.to_u8(), a.msn)),
        ext,
        payload: p.payload.to_vec(),
        mrc10: None,
        drop: false,
        qp: 0,
        flushable: false,
    }
}

fn golden(p: &RocePacket, encap: &Encap, vlan: Option<u16>) -> Vec<u8> {
    p.validate().unwrap();
    let mut f = Vec::new();
    emit_frame(p, encap, &mut f);
    if let Some(tci) = vlan {
        let t = tci.to_be_bytes();
        f.splice(12..12, [0x81, 0x00, t[0], t[1]]);
    }
    f
}

fn random_encap(r: &mut Rng, v6: bool) -> Encap {
    let mut e = if v6 { Encap::test_v6() } else { Encap::test_v4() };
    e.src_mac = r.next_u64().to_be_bytes()[2..].try_into().unwrap();
    e.dst_mac = r.next_u64().to_be_bytes()[2..].try_into().unwrap();
    e.ip = if v6 {
        IpPair::V6 {
            src: (u128::from(r.next_u64()) << 64 | u128::from(r.next_u64())).to_be_bytes(),
            dst: (u128::from(r.next_u64()) << 64 | u128::from(r.next_u64())).to_be_bytes(),
        }
    } else {
        IpPair::V4 {
            src: (r.next_u64() as u32).to_be_bytes(),
            dst: (r.next_u64() as u32).to_be_bytes(),
        }
    };
    e
}

fn bth(r: &mut Rng, opcode: Opcode, x: bool, pad: u8) -> BthRepr {
    BthRepr {
        opcode,
        solicited: r.chance(50),
        mig_req: true,
        pad,
        pkey: r.next_u64() as u16,
        fecn: r.chance(20),
        becn: r.chance(20),
        dest_qp: r.next_u64() as u32 & 0xFF_FFFF,
        ack_req: r.chance(50),
        mrc_ext: x,
        psn: Psn::new(r.next_u64() as u32 & 0xFF_FFFF),
    }
}

const KINDS: [&str; 17] = [
    "write first",
    "write middle",
    "write last",
    "write last imm",
    "write only",
    "write only imm",
    "rc write only",
    "rc write middle",
    "rc ack",
    "sack64",
    "sack128",
    "sack256",
    "nack trimmed",
    "nack out of window",
    "nack remote access",
    "probe",
    "cnp",
];

/// A random valid packet of kind `k` (an index into [`KINDS`]).
fn packet(r: &mut Rng, k: usize, v6: bool) -> RocePacket {
    let ev = if v6 {
        r.next_u64() as u32
    } else {
        r.next_u64() as u32 & 0xFFFF
    };
    let writes = Opcode::WRITES;
    let (op, mrc) = match k {
        0..=5 => (writes[k], true),
        6 => (Opcode::WriteOnly, false),
        7 => (Opcode::WriteMiddle, false),
        16 => (Opcode::Cnp, false),
        _ => (Opcode::Ack, k != 8),
    };
    // A quarter of the payloads short (pad 0..3 bytes, single lanes), the
    // rest anywhere in 0..=300 (up to five beats behind the header).
    let len = if r.chance(25) { r.below(9) } else { r.below(301) };
    let payload: Vec<u8> = if op.is_write() {
        (0..len).map(|_| r.next_u64() as u8).collect()
    } else {
        Vec::new()
    };
    let ext = if !mrc {
        None
    } else if op.is_write() {
        Some(MrcExtRepr::Data(DataExtRepr {
            ev_index: r.next_u64() as u16 & 0x7F,
            retransmit: r.chance(20),
            ev_seq: r.next_u64() as u32,
            tx_ts: r.next_u64() as u32,
            msg_offset: r.next_u64() as u32,
            placement: (!op.has_reth()).then(|| PlacementRepr {
                va: r.next_u64(),
                rkey: r.next_u64() as u32,
            }),
        }))
    } else {
        Some(match k {
            9..=11 => {
                let bits = [64u16, 128, 256][k - 9];
                let mut bitmap = SackBitmap::new(bits);
                for w in bitmap.words.iter_mut().take(usize::from(bits) / 64) {
                    *w = r.next_u64();
                }
                MrcExtRepr::Sack(SackExtRepr {
                    ev_index: r.next_u64() as u16 & 0x7F,
                    ecn_ce_count: r.next_u64() as u16,
                    echo_ts: r.next_u64() as u32,
                    service_ns: r.next_u64() as u32,
                    base: Psn::new(r.next_u64() as u32 & 0xFF_FFFF),
                    bitmap,
                })
            }
            12..=14 => MrcExtRepr::Nack(NackExtRepr {
                kind: [NackKind::Trimmed, NackKind::OutOfWindow, NackKind::RemoteAccess][k - 12],
                ev_index: r.next_u64() as u16 & 0x7F,
                cum_psn: Psn::new(r.next_u64() as u32 & 0xFF_FFFF),
                echo_ts: r.next_u64() as u32,
            }),
            _ => MrcExtRepr::Probe(ProbeExtRepr {
                response: r.chance(50),
                ev_index: r.next_u64() as u16 & 0x7F,
                probe_id: r.next_u64() as u32,
                tx_ts: r.next_u64() as u32,
                service_ns: r.next_u64() as u32,
            }),
        })
    };
    let aeth = op.has_aeth().then(|| AethRepr {
        syndrome: match &ext {
            Some(MrcExtRepr::Nack(n)) => Syndrome::for_nack(n.kind),
            _ => Syndrome::Ack {
                credits: r.below(32) as u8,
            },
        },
        msn: r.next_u64() as u32 & 0xFF_FFFF,
    });
    let trimmed = op.is_write() && mrc && r.chance(10);
    RocePacket {
        ev,
        ecn_ce: r.chance(20),
        trimmed,
        bth: bth(r, op, ext.is_some(), pad_for(payload.len())),
        reth: op.has_reth().then(|| RethRepr {
            va: r.next_u64(),
            rkey: r.next_u64() as u32,
            dma_len: r.next_u64() as u32,
        }),
        imm: op.has_imm().then(|| r.next_u64() as u32),
        aeth,
        ext,
        payload: Bytes::from(payload),
    }
}

fn valid_case(r: &mut Rng, k: usize) -> Case {
    let v6 = r.chance(50);
    let vlan = r.chance(30).then(|| r.next_u64() as u16);
    case_with(r, k, v6, vlan)
}

fn case_with(r: &mut Rng, k: usize, v6: bool, vlan: Option<u16>) -> Case {
    let encap = random_encap(r, v6);
    let p = packet(r, k, v6);
    let f = golden(&p, &encap, vlan);
    Case {
        kind: KINDS[k],
        req: request(&p, &encap, vlan),
        want: Some((f, p)),
    }
}

/// A malformed request the builder must drop (with its payload).
fn bad_case(r: &mut Rng, n: usize) -> Case {
    let mut c = valid_case(r, [0, 5, 11][n % 3]);
    c.want = None;
    match n % 3 {
        0 => c.req.opcode = 0x04,      // unknown opcode
        1 => c.req.xbit = false,       // extension without the X bit
        _ => c.req.ext.extend([0; 8]), // headers longer than any valid kind
    }
    Case {
        kind: "bad request",
        ..c
    }
}

/// A well-formed request dropped on purpose (`req_drop`), of any kind:
/// no frame, its payload consumed, no `cnt_bad_request`.
fn dropped_case(r: &mut Rng, k: usize) -> Case {
    let mut c = valid_case(r, k);
    c.want = None;
    c.req.drop = true;
    Case { kind: "dropped", ..c }
}

fn bits<const N: usize>(bytes_be: &[u8]) -> Bits<N> {
    // Big-endian byte string into the top of an N-bit vector.
    let mut b = Bits::<N>::default();
    for (i, &x) in bytes_be.iter().enumerate() {
        b.set_bits::<8>(N - 8 - 8 * i, u64::from(x).into());
    }
    b
}

fn lanes(chunk: &[u8]) -> Bits<512> {
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

fn drive(x: &mut TxBuilder, q: &Req) {
    x.req_dst_mac.next = q.dst_mac.into();
    x.req_src_mac.next = q.src_mac.into();
    x.req_vlan.next = q.vlan.is_some();
    x.req_vlan_tci.next = u64::from(q.vlan.unwrap_or(0)).into();
    x.req_ipv6.next = q.ipv6;
    x.req_src_ip.next = bits::<128>(&q.src_ip.to_be_bytes());
    x.req_dst_ip.next = bits::<128>(&q.dst_ip.to_be_bytes());
    x.req_dscp.next = u64::from(q.dscp).into();
    x.req_ecn.next = u64::from(q.ecn).into();
    x.req_ttl.next = u64::from(q.ttl).into();
    x.req_ev.next = u64::from(q.ev).into();
    x.req_opcode.next = u64::from(q.opcode).into();
    x.req_se.next = q.se;
    x.req_mig.next = q.mig;
    x.req_pad.next = u64::from(q.pad).into();
    x.req_pkey.next = u64::from(q.pkey).into();
    x.req_fecn.next = q.fecn;
    x.req_becn.next = q.becn;
    x.req_dest_qp.next = u64::from(q.dest_qp).into();
    x.req_ack_req.next = q.ack_req;
    x.req_xbit.next = q.xbit;
    x.req_psn.next = u64::from(q.psn).into();
    x.req_reth_va.next = q.reth.0.into();
    x.req_reth_rkey.next = u64::from(q.reth.1).into();
    x.req_reth_len.next = u64::from(q.reth.2).into();
    x.req_imm.next = u64::from(q.imm).into();
    x.req_aeth_syndrome.next = u64::from(q.aeth.0).into();
    x.req_aeth_msn.next = u64::from(q.aeth.1).into();
    let mut ext = q.ext.clone();
    ext.resize(52, 0);
    x.req_ext.next = bits::<416>(&ext);
    x.req_ext_len.next = (q.ext.len() as u64).into();
    x.req_payload_len.next = (q.payload.len() as u64).into();
    x.req_mrc10.next = q.mrc10.is_some();
    let t = q.mrc10.clone().unwrap_or_default();
    x.req_transport.next = lanes(&t);
    x.req_transport_len.next = (t.len() as u64).into();
    x.req_drop.next = q.drop;
    x.req_qp.next = u64::from(q.qp).into();
    x.req_flushable.next = q.flushable;
}

/// The payload stream of `reqs`, in order: per request `ceil(len / 64)`
/// beats (data, keep, last).
fn payload_beats(reqs: &[Req]) -> Vec<(Bits<512>, Bits<64>, bool)> {
    reqs.iter()
        .flat_map(|q| {
            let n = q.payload.len().div_ceil(64);
            q.payload
                .chunks(64)
                .enumerate()
                .map(move |(i, ch)| (lanes(ch), keep(ch.len()), i + 1 == n))
        })
        .collect()
}

#[derive(Default)]
struct Outcome {
    frames: Vec<Vec<u8>>,
    /// Cycle of each frame's first beat.
    starts: Vec<u64>,
    bad: usize,
    /// `cnt_flushed` pulses.
    flushed: usize,
    mismatch: usize,
    tx_stalls: usize,
    pl_stalls: usize,
    cycles: u64,
}

/// Stream `cases` through the builder. `pl_gap`/`tx_gap`: percent of cycles
/// the payload source holds `pl_tvalid` low / the MAC holds `tx_tready` low.
fn run(cases: &[Case], seed: u64, pl_pause: Stall, tx_backpressure: Stall) -> Outcome {
    let reqs: Vec<Req> = cases.iter().map(|c| c.req.clone()).collect();
    let payload = payload_beats(&reqs);
    let want_frames = cases.iter().filter(|c| c.want.is_some()).count();
    let out = Arc::new(Mutex::new(Outcome::default()));
    let o = out.clone();
    let mut uut = TxBuilder::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(TxBuilder, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut r = Rng::from_state(seed);
        let (mut qi, mut pi) = (0usize, 0usize);
        let mut cur: Vec<u8> = Vec::new();
        let mut res = Outcome::default();
        let mut cycle = 0u64;
        wait_clock_true!(sim, clock, x);
        while (res.frames.len() < want_frames || qi < reqs.len() || pi < payload.len()) && cycle < 20_000 {
            x.req_valid.next = qi < reqs.len();
            if qi < reqs.len() {
                drive(&mut x, &reqs[qi]);
            }
            let pl_on = pi < payload.len() && pl_pause.go(&mut r);
            x.s_payload.tvalid.next = pl_on;
            if pi < payload.len() {
                x.s_payload.tdata.next = payload[pi].0;
                x.s_payload.tkeep.next = payload[pi].1;
                x.s_payload.tlast.next = payload[pi].2;
            }
            let ready = tx_backpressure.go(&mut r);
            x.m_axis.tready.next = ready;
            wait_clock_false!(sim, clock, x);
            if x.req_valid.val() && x.req_ready.val() {
                qi += 1;
            }
            if x.s_payload.tready.val() {
                if x.s_payload.tvalid.val() {
                    pi += 1;
                } else {
                    res.pl_stalls += 1;
                }
            }
            if x.m_axis.tvalid.val() && !x.m_axis.tready.val() {
                res.tx_stalls += 1;
            }
            if x.m_axis.tvalid.val() && x.m_axis.tready.val() {
                let d = x.m_axis.tdata.val();
                let k = x.m_axis.tkeep.val().to_u64();
                let n = k.trailing_ones() as usize;
                sim_assert!(sim, k == if n == 64 { u64::MAX } else { (1u64 << n) - 1 }, x);
                if cur.is_empty() {
                    res.starts.push(cycle);
                }
                for i in 0..n {
                    cur.push(d.get_bits::<8>(8 * i).to_u64() as u8);
                }
                if x.m_axis.tlast.val() {
                    sim_assert!(sim, x.cnt_tx_frame.val(), x);
                    res.frames.push(std::mem::take(&mut cur));
                } else {
                    sim_assert!(sim, n == 64 && !x.cnt_tx_frame.val(), x);
                }
            }
            res.bad += usize::from(x.cnt_bad_request.val());
            res.flushed += usize::from(x.cnt_flushed.val());
            res.mismatch += usize::from(x.cnt_payload_mismatch.val());
            wait_clock_true!(sim, clock, x);
            cycle += 1;
        }
        // Drain: nothing more may come out.
        for _ in 0..16 {
            x.req_valid.next = false;
            x.s_payload.tvalid.next = false;
            x.m_axis.tready.next = true;
            wait_clock_false!(sim, clock, x);
            sim_assert!(sim, !x.m_axis.tvalid.val(), x);
            res.bad += usize::from(x.cnt_bad_request.val());
            res.flushed += usize::from(x.cnt_flushed.val());
            res.mismatch += usize::from(x.cnt_payload_mismatch.val());
            wait_clock_true!(sim, clock, x);
        }
        sim_assert!(sim, qi == reqs.len() && pi == payload.len(), x);
        res.cycles = cycle;
        *o.lock().unwrap() = res;
        sim.done(x)
    });
    let t = std::time::Instant::now();
    sim.run(Box::new(uut), 1_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_tx_builder", || {
        hw::flow::emit_block("mrc_tx_builder", &mut TxBuilder::default()).verilog
    });
    let res = std::mem::take(&mut *out.lock().unwrap());
    eprintln!(
        "{} requests, {} frames, {} cycles simulated in {:?}",
        cases.len(),
        res.frames.len(),
        res.cycles,
        t.elapsed()
    );
    res
}

fn check_frames(cases: &[Case], res: &Outcome) {
    let want: Vec<&Case> = cases.iter().filter(|c| c.want.is_some()).collect();
    assert_eq!(res.frames.len(), want.len(), "one frame per valid request");
    for (i, (got, c)) in res.frames.iter().zip(&want).enumerate() {
        let (f, p) = c.want.as_ref().unwrap();
        assert_eq!(got, f, "frame {i} ({}): not the golden bytes", c.kind);
        let (back, _) = parse_frame(got).unwrap_or_else(|e| panic!("frame {i} ({}) does not parse: {e}", c.kind));
        assert_eq!(&back, p, "frame {i} ({}) parses to another packet", c.kind);
    }
    assert_eq!(
        res.bad,
        cases.iter().filter(|c| c.want.is_none() && !c.req.drop).count(),
        "one cnt_bad_request pulse per malformed request (none for a dropped one)"
    );
    assert_eq!(
        res.flushed,
        cases.iter().filter(|c| c.req.drop).count(),
        "one cnt_flushed pulse per dropped request"
    );
    assert_eq!(res.mismatch, 0);
}

/// The seeded mix with stalls on both streams, and coverage of the
/// shapes that matter to the realignment and the ICRC placement.
#[test]
fn mixed_packets_match_golden_emit() {
    let mut r = Rng::from_state(0x7E57_7B1D);
    let mut cases: Vec<Case> = Vec::new();
    for round in 0..5 {
        for k in 0..KINDS.len() {
            cases.push(valid_case(&mut r, k));
        }
        cases.push(bad_case(&mut r, round));
        cases.push(dropped_case(&mut r, [3, 7, 11, 0, 5][round]));
    }
    // Shuffle (Fisher-Yates) so kinds meet each other back to back.
    for i in (1..cases.len()).rev() {
        let j = r.below(i as u64 + 1) as usize;
        cases.swap(i, j);
    }
    let res = run(&cases, 0x5EED, Stall::stall_percent(25), Stall::stall_percent(25));
    check_frames(&cases, &res);
    // Coverage.
    let frames: Vec<&Vec<u8>> = cases.iter().filter_map(|c| c.want.as_ref().map(|w| &w.0)).collect();
    let count = |f: &dyn Fn(&[u8]) -> bool| frames.iter().filter(|x| f(x)).count();
    let vlan = |x: &[u8]| x[12] == 0x81;
    let v6 = |x: &[u8]| x[if vlan(x) { 16 } else { 12 }] == 0x86;
    let hdr_len = |c: &Case| -> usize {
        let (f, p) = c.want.as_ref().unwrap();
        f.len() - p.payload.len() - p.wire_pad() - 4
    };
    let shapes = [
        ("ipv4", count(&|x| !v6(x))),
        ("ipv6", count(&|x| v6(x))),
        ("802.1Q", count(&|x| vlan(x))),
        ("untagged", count(&|x| !vlan(x))),
        ("one-beat frames", count(&|x| x.len() <= 64)),
        ("frames of 3+ beats", count(&|x| x.len() > 128)),
        ("ICRC split over two beats", count(&|x| (x.len() - 4) % 64 > 60)),
        (
            "ICRC inside one beat",
            count(&|x| (x.len() - 4) % 64 != 0 && (x.len() - 4) % 64 <= 60),
        ),
        (
            "header longer than one beat",
            cases.iter().filter(|c| c.want.is_some() && hdr_len(c) > 64).count(),
        ),
        (
            "payload > 256 bytes",
            cases.iter().filter(|c| c.req.payload.len() > 256).count(),
        ),
        (
            "payload 1..=3 bytes (pad)",
            cases.iter().filter(|c| (1..=3).contains(&c.req.payload.len())).count(),
        ),
        ("trimmed", cases.iter().filter(|c| c.req.dscp == 59).count()),
        ("payload stalls", res.pl_stalls),
        ("tx_tready stalls", res.tx_stalls),
        (
            "malformed requests",
            cases.iter().filter(|c| c.want.is_none() && !c.req.drop).count(),
        ),
        ("dropped requests", cases.iter().filter(|c| c.req.drop).count()),
    ];
    for (name, n) in shapes {
        eprintln!("coverage: {name}: {n}");
        assert!(n > 0, "coverage hole: {name}");
    }
    for k in KINDS {
        assert!(
            cases.iter().any(|c| c.kind == k && c.want.is_some()),
            "kind {k} not exercised"
        );
    }
    let offsets: std::collections::BTreeSet<usize> = cases
        .iter()
        .filter(|c| c.want.is_some() && !c.req.payload.is_empty())
        .map(|c| hdr_len(c) % 64)
        .collect();
    eprintln!(
        "coverage: distinct header lengths mod 64 with a payload: {}",
        offsets.len()
    );
    assert!(offsets.len() >= 8, "payload realignment offsets: {offsets:?}");
}

/// Directed: every payload length 0..=130 once behind the same header (the
/// realignment and the ICRC position walk through a whole beat), no stalls.
#[test]
fn payload_lengths_walk_a_beat() {
    let mut r = Rng::from_state(0xBEA7);
    let mut cases = Vec::new();
    for len in 0..=130usize {
        let mut c = valid_case(&mut r, if len % 2 == 0 { 1 } else { 5 });
        let (f, p) = c.want.take().unwrap();
        let _ = f;
        let mut p = p;
        p.payload = Bytes::from((0..len).map(|i| (i as u8) ^ 0x5A).collect::<Vec<u8>>());
        p.bth.pad = pad_for(len);
        // Every third packet trimmed (no pad): the ICRC then starts at any lane.
        p.trimmed = len % 3 == 2;
        let encap = random_encap(&mut r, len % 3 == 0);
        let encap = if len % 3 == 0 {
            encap
        } else {
            Encap {
                ip: Encap::test_v4().ip,
                ..encap
            }
        };
        let vlan = (len % 4 == 1).then_some(0x0123);
        let p = if !matches!(encap.ip, IpPair::V6 { .. }) {
            RocePacket { ev: p.ev & 0xFFFF, ..p }
        } else {
            p
        };
        let f = golden(&p, &encap, vlan);
        c.req = request(&p, &encap, vlan);
        c.want = Some((f, p));
        cases.push(c);
    }
    let res = run(&cases, 1, Stall::NEVER, Stall::NEVER);
    check_frames(&cases, &res);
    let ends: Vec<usize> = res.frames.iter().map(|f| (f.len() - 4) % 64).collect();
    let alone = ends.iter().filter(|&&e| e == 0).count();
    let split = ends.iter().filter(|&&e| e > 60).count();
    let inside = ends.len() - alone - split;
    eprintln!("coverage: ICRC alone in the last beat {alone}, split over two beats {split}, inside one beat {inside}");
    assert!(alone > 0 && split > 0 && inside > 0);
    let distinct: std::collections::BTreeSet<usize> = ends.into_iter().collect();
    eprintln!("coverage: distinct ICRC lanes: {}", distinct.len());
    assert!(distinct.len() >= 32, "{distinct:?}");
}

/// Directed: one-beat ACKs back to back with nothing stalling leave one
/// frame per cycle.
#[test]
fn one_beat_acks_back_to_back() {
    let mut r = Rng::from_state(0xACC);
    let cases: Vec<Case> = (0..24).map(|_| case_with(&mut r, 8, false, None)).collect();
    for c in &cases {
        assert!(c.want.as_ref().unwrap().0.len() <= 64, "a plain ACK fits one beat");
    }
    let res = run(&cases, 2, Stall::NEVER, Stall::NEVER);
    check_frames(&cases, &res);
    let gaps: Vec<u64> = res.starts.windows(2).map(|w| w[1] - w[0]).collect();
    eprintln!("one-beat ACKs: frame start gaps {gaps:?}");
    assert!(gaps.iter().all(|&g| g == 1), "one frame per cycle: {gaps:?}");
}

/// MRC 1.0 requests (`req_mrc10`): the transport bytes of random packets
/// of every MRC 1.0 opcode (`mrc10_gen`, not trimmed: a sender never
/// sends a trimmed packet), over IPv4 and IPv6, tagged or not, with
/// stalls on both streams, among legacy requests; every frame equal to
/// `proto::wire::mrc10::emit_frame` (ICRC included) and parsed back by
/// `mrc10::parse_frame`; a chain shorter than a BTH and an opcode outside
/// the dialect's range dropped and counted. Replayed on the Verilog.
#[test]
fn mrc10_transports_match_golden_emit() {
    use proto::wire::mrc10::{self, choices::TrafficClass, Opcode as Op10, Profile};
    let profile = Profile::DEFAULT;
    let mut r = Rng::from_state(0x3C10_7E57);
    let mut g = tb::rng::Rng::new(0x3C10_6E4E);
    let mut cases: Vec<Case> = Vec::new();
    let mut golden10: Vec<Option<mrc10::Mrc10Packet>> = Vec::new();
    for round in 0..4 {
        for op in Op10::ALL {
            let mut p = mrc10_gen::random_packet(&mut g, op);
            if mrc10_gen::is_trimmed(p.class) {
                p.class = TrafficClass::Trimmable;
                p.bth.pad = pad_for(p.payload.len());
            }
            let v6 = r.chance(50);
            let vlan = r.chance(30).then(|| r.next_u64() as u16);
            let encap = random_encap(&mut r, v6);
            let mut f = Vec::new();
            mrc10::emit_frame(&p, &encap, &profile, &mut f);
            let at = 14 + encap.ip_header_len() + 8;
            let transport = f[at..at + p.transport_header_len()].to_vec();
            if let Some(tci) = vlan {
                let t = tci.to_be_bytes();
                f.splice(12..12, [0x81, 0x00, t[0], t[1]]);
            }
            let (ipv6, src_ip, dst_ip) = match encap.ip {
                IpPair::V4 { src, dst } => (
                    false,
                    u128::from(u32::from_be_bytes(src)),
                    u128::from(u32::from_be_bytes(dst)),
                ),
                IpPair::V6 { src, dst } => (true, u128::from_be_bytes(src), u128::from_be_bytes(dst)),
            };
            // The legacy transport fields hold garbage: the builder must
            // not read them.
            let mut req = request(&packet(&mut r, round % KINDS.len(), v6), &encap, vlan);
            req = Req {
                dst_mac: mac(encap.dst_mac),
                src_mac: mac(encap.src_mac),
                vlan,
                ipv6,
                src_ip,
                dst_ip,
                dscp: profile.dscp.dscp_of(p.class),
                ecn: p.ecn,
                ttl: 64,
                ev: p.ev,
                pad: p.bth.pad,
                payload: p.payload.to_vec(),
                mrc10: Some(transport),
                ..req
            };
            let dummy = packet(&mut r, 0, v6);
            cases.push(Case {
                kind: "mrc10",
                req,
                want: Some((f, dummy)),
            });
            golden10.push(Some(p));
        }
        // Malformed: a chain shorter than a BTH, an opcode outside 0xC0-0xDF.
        let mut bad = cases.last().unwrap().req.clone();
        if round % 2 == 0 {
            bad.mrc10.as_mut().unwrap().truncate(11);
        } else {
            bad.mrc10.as_mut().unwrap()[0] = 0x06;
        }
        cases.push(Case {
            kind: "bad mrc10 request",
            req: bad,
            want: None,
        });
        golden10.push(None);
        // A legacy request between them.
        cases.push(valid_case(&mut r, round));
        golden10.push(None);
    }
    let res = run(&cases, 0x10, Stall::stall_percent(25), Stall::stall_percent(25));
    let want: Vec<(&Case, &Option<mrc10::Mrc10Packet>)> =
        cases.iter().zip(&golden10).filter(|(c, _)| c.want.is_some()).collect();
    assert_eq!(res.frames.len(), want.len(), "one frame per valid request");
    let mut n10 = 0;
    for (i, (got, (c, p10))) in res.frames.iter().zip(&want).enumerate() {
        let (f, p) = c.want.as_ref().unwrap();
        assert_eq!(got, f, "frame {i} ({}): not the golden bytes", c.kind);
        if let Some(p10) = p10 {
            let (back, _) =
                mrc10::parse_frame(got, &profile).unwrap_or_else(|e| panic!("frame {i} does not parse: {e:?}"));
            assert_eq!((back.bth, &back.headers), (p10.bth, &p10.headers), "frame {i}");
            n10 += 1;
        } else {
            assert_eq!(parse_frame(got).map(|x| x.0).as_ref(), Ok(p), "legacy frame {i}");
        }
    }
    assert_eq!(res.bad, 4, "one cnt_bad_request per malformed request");
    assert_eq!(res.mismatch, 0);
    eprintln!(
        "{n10} MRC 1.0 frames equal to emit_frame's, {} legacy between them",
        want.len() - n10
    );
}

/// A data request of `qp` (flushable) whose payload is at least `min`
/// bytes, its frame expected unless `dropped`.
fn qp_case(r: &mut Rng, qp: u8, flushable: bool, min: usize) -> Case {
    loop {
        let mut c = valid_case(r, 0);
        if c.req.payload.len() >= min {
            c.req.qp = qp;
            c.req.flushable = flushable;
            return c;
        }
    }
}

/// A flush of a QP in error (a pulse): the data request of the QP that R1
/// holds while the generator sends an earlier frame is dropped, as is one
/// taken in the flush's own cycle; the frame being sent finishes, a
/// request of the QP that is not flushable (an ACK) and the other QP's
/// requests are sent. Each drop consumes its payload and pulses
/// `cnt_flushed` once, never `cnt_bad_request`.
#[test]
fn a_flush_drops_the_qps_waiting_data_request_not_the_frame_being_sent() {
    let mut r = Rng::from_state(0xF1_05);
    // A1 (sent: being generated at the flush), A2 (in R1: dropped), A3
    // (the QP's ACK: sent), B1 (sent); then, idle, A4 offered in the
    // flush's cycle (dropped), B2 (sent).
    let a1 = qp_case(&mut r, 3, true, 250);
    let a2 = qp_case(&mut r, 3, true, 1);
    let a3 = qp_case(&mut r, 3, false, 1);
    let b1 = qp_case(&mut r, 4, true, 1);
    let a4 = qp_case(&mut r, 3, true, 1);
    let b2 = qp_case(&mut r, 4, true, 1);
    let reqs: Vec<Req> = [&a1, &a2, &a3, &b1, &a4, &b2].iter().map(|c| c.req.clone()).collect();
    let payload = payload_beats(&reqs);
    let out = Arc::new(Mutex::new(Outcome::default()));
    let o = out.clone();
    let mut uut = TxBuilder::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(TxBuilder, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let (mut qi, mut pi) = (0usize, 0usize);
        let mut cur: Vec<u8> = Vec::new();
        let mut res = Outcome::default();
        // The cycle R1 took A2 (the first flush 2 cycles later, while the
        // generator is busy with A1's 5 or more beats); the cycle the
        // third frame (B1) ended (A4 offered 8 cycles later, R1 empty
        // then).
        let mut a2_taken: Option<u64> = None;
        let mut third_done: Option<u64> = None;
        let mut tail = 0u64;
        let mut cycle = 0u64;
        wait_clock_true!(sim, clock, x);
        while cycle < 2_000 && tail < 16 {
            let hold = qi == 4 && third_done.is_none_or(|c| cycle < c + 8);
            x.req_valid.next = qi < reqs.len() && !hold;
            if qi < reqs.len() {
                drive(&mut x, &reqs[qi]);
            }
            let flush_r1 = a2_taken.is_some_and(|c| cycle == c + 2);
            let flush_in = qi == 4 && !hold;
            x.flush_valid.next = flush_r1 || flush_in;
            x.flush_qp.next = 3u64.into();
            x.s_payload.tvalid.next = pi < payload.len();
            if pi < payload.len() {
                x.s_payload.tdata.next = payload[pi].0;
                x.s_payload.tkeep.next = payload[pi].1;
                x.s_payload.tlast.next = payload[pi].2;
            }
            x.m_axis.tready.next = true;
            wait_clock_false!(sim, clock, x);
            if flush_in {
                sim_assert!(sim, x.req_ready.val(), x);
            }
            if qi == reqs.len() && pi == payload.len() && !x.m_axis.tvalid.val() {
                tail += 1;
            }
            if x.req_valid.val() && x.req_ready.val() {
                qi += 1;
                if qi == 2 {
                    a2_taken = Some(cycle);
                }
            }
            if x.s_payload.tready.val() && x.s_payload.tvalid.val() {
                pi += 1;
            }
            if x.m_axis.tvalid.val() && x.m_axis.tready.val() {
                let d = x.m_axis.tdata.val();
                let n = x.m_axis.tkeep.val().to_u64().trailing_ones() as usize;
                for i in 0..n {
                    cur.push(d.get_bits::<8>(8 * i).to_u64() as u8);
                }
                if x.m_axis.tlast.val() {
                    res.frames.push(std::mem::take(&mut cur));
                    if res.frames.len() == 3 {
                        third_done = Some(cycle);
                    }
                }
            }
            res.bad += usize::from(x.cnt_bad_request.val());
            res.flushed += usize::from(x.cnt_flushed.val());
            res.mismatch += usize::from(x.cnt_payload_mismatch.val());
            wait_clock_true!(sim, clock, x);
            cycle += 1;
        }
        sim_assert!(sim, qi == reqs.len() && pi == payload.len(), x);
        *o.lock().unwrap() = res;
        sim.done(x)
    });
    sim.run(Box::new(uut), 1_000_000_000).unwrap();
    rec.check_verilog("mrc_tx_builder", || {
        hw::flow::emit_block("mrc_tx_builder", &mut TxBuilder::default()).verilog
    });
    let res = std::mem::take(&mut *out.lock().unwrap());
    let want: Vec<&Vec<u8>> = [&a1, &a3, &b1, &b2]
        .iter()
        .map(|c| &c.want.as_ref().unwrap().0)
        .collect();
    let got: Vec<&Vec<u8>> = res.frames.iter().collect();
    assert_eq!(
        got, want,
        "A1 (being sent), A3 (not flushable), B1, B2: the golden bytes"
    );
    assert_eq!(
        (res.flushed, res.bad, res.mismatch),
        (2, 0, 0),
        "A2 and A4 dropped, each counted once as flushed"
    );
}
