//! TX path glue: data and ACK records in, header requests out. Every
//! header's MRC extension must be byte-identical to what
//! `proto::wire`'s emitter writes for the same fields (data with and
//! without placement, SACK, NACK, legacy probe and probe response), and
//! the other fields must carry the
//! configured peer (MAC, IP, dest QP, P_Key), the selected EV's value and
//! the record's BTH fields; every data packet must produce its payload
//! read (when it has a payload) and its send record, and the (QP, EV)
//! send sequence must count per EV. The EV selector is a model that
//! answers two cycles after each select; the three output handshakes stall
//! randomly. The EV prober's probe records go out as reliability probes
//! in the wire's dialect on the probed EV's value, after any waiting ACK
//! record.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use contract::config::{addr, table, Row, INDEX_SELECT};
use contract::layout::sq_ctx;
use hw::contract_rows::row_bits;
use hw::tx_path::{TxPath, DATA_HDR_FIFO_DEPTH};
use proto::wire::*;
use proto::Psn;
use rust_hdl::prelude::*;

use tb::rng::Rng;
use tb::stall::Stall;
use tb::{lockstep, lockstep_sim};

/// Back-pressure of the header, DMA and sent outputs; pauses of the ACK input.
const BACKPRESSURE: Stall = Stall::go_percent(70);
const ACK_PAUSE: Stall = Stall::go_percent(33);
/// Pauses of the probe input (the prober's record register).
const PROBE_PAUSE: Stall = Stall::go_percent(50);

/// A probe record: EV `ev` of QP `qp`.
#[derive(Clone, Copy, Debug)]
struct Probe {
    qp: u64,
    ev: u64,
}

/// The value the test loads for EV `ev` of QP `qp` (the EV selector's rows).
/// A 32-bit EV value (MRC 1.0): the upper half is not 0.
fn ev_value(qp: u64, ev: u64) -> u64 {
    0x5A00_9000 + (qp << 16) + (qp << 7) / 2 + ev * 3
}

/// The EV of ACK `psn`'s trigger (32 bits).
fn ack_ev(psn: u64) -> u64 {
    ACK_EV_BASE + psn % 16
}
const ACK_EV_BASE: u64 = 0xBEEF_E000;

/// The value the EV selector answers for (`qp`, `ev`) (32 bits).
fn rsp_value(qp: u64, ev: u64) -> u64 {
    RSP_VALUE_BASE + qp * 8 + ev
}
const RSP_VALUE_BASE: u64 = 0x7A11_C000;

fn v<const N: usize>(b: Bits<N>) -> u64 {
    (0..N.min(64))
        .filter(|&i| b.get_bit(i))
        .fold(0, |acc, i| acc | (1 << i))
}

/// The top `len` bytes of a big-endian packed N-bit vector.
fn be_bytes<const N: usize>(b: Bits<N>, len: usize) -> Vec<u8> {
    (0..len).map(|i| v(b.get_bits::<8>(N - 8 - 8 * i)) as u8).collect()
}

fn ext_bytes(e: &MrcExtRepr) -> Vec<u8> {
    let mut buf = vec![0u8; e.buffer_len()];
    e.emit(&mut MrcExtPacket::new_unchecked(&mut buf[..]));
    buf
}

#[derive(Clone, Copy, Debug)]
struct Data {
    qp: u64,
    psn: u64,
    opcode: u8,
    rtx: bool,
    len: u64,
    off: u64,
}

#[derive(Clone, Copy, Debug)]
struct Ack {
    qp: u64,
    sack: bool,
    psn: u64,
    cum: u64,
    base: u64,
    bitmap: u64,
    nack_kind: u8,
    /// A SACK answering a reliability probe (`ack_probe`): its id is the
    /// record's `ev_index`.
    probe: bool,
    /// The probe answered is a legacy one (`ack_probe_legacy`), its id
    /// `legacy_id(psn)` (`ack_probe_id`): on the legacy wire a probe
    /// response.
    legacy: bool,
}

/// The trigger PSN of ACK record `a` (`ack_trigger_psn`): near its
/// cumulative PSN either side, and now and then farther than the SETH's
/// signed 16-bit offset reaches (clamped).
fn trigger_psn(a: &Ack) -> u64 {
    let off: i64 = match a.psn % 11 {
        0 => -40_000,
        1 => 40_000,
        // The ends of the signed 16-bit offset, and one beyond each.
        2 => 32_767,
        3 => 32_768,
        4 => -32_768,
        5 => -32_769,
        k => k as i64 * 9 - 70,
    };
    (a.cum as i64 + off).rem_euclid(1 << 24) as u64
}

/// The SETH ack PSN offset of `a`'s SACK, as the model's `build_sack`
/// computes it (the trigger's distance from the cumulative PSN, clamped
/// to 16 bits; a probe answer's: the probe id).
fn ack_psn_offset(a: &Ack) -> i16 {
    if a.probe {
        (a.psn % 16) as i16
    } else {
        let d = Psn::new(trigger_psn(a) as u32).distance(Psn::new(a.cum as u32));
        d.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16
    }
}

/// The id of the legacy probe an ACK record of `psn` answers.
fn legacy_id(psn: u64) -> u32 {
    0xC0DE_0000 | psn as u32
}

/// How long the responder held each ACK record's trigger when the record
/// is taken: its arrival (`ack_arrival_ns`) is driven as that much before
/// `now_ns`. Multiples of the TSETH's 64 ns and a rest, so that the MRC
/// 1.0 echo's advance (whole units) differs from the legacy service time.
fn held_ns(a: &Ack) -> u64 {
    64 * (a.psn % 40) + 5
}

/// `now_ns` of the test: 1000 ns at cycle 0, 3 ns a cycle.
fn now_at(cycle: u64) -> u64 {
    1000 + cycle * 3
}

/// The ACK sequencer builds the header two cycles after it took the
/// record (peer row, then address row): the service time it sends is the
/// held time plus those two cycles of `now_ns`.
const BUILD_AFTER_TAKE_NS: u64 = 2 * 3;

/// The service time a SACK of `a` carries.
fn service_ns(a: &Ack) -> u64 {
    held_ns(a) + BUILD_AFTER_TAKE_NS
}

#[derive(Clone, Debug, PartialEq)]
struct Hdr {
    dst_mac: u64,
    src_mac: u64,
    dst_ip: u64,
    ev: u64,
    opcode: u64,
    psn: u64,
    dest_qp: u64,
    pkey: u64,
    syndrome: u64,
    ext: Vec<u8>,
    payload_len: u64,
    pad: u64,
    time: u64,
    mrc10: bool,
    dscp: u64,
    ecn: u64,
    /// MRC 1.0 transport bytes (`transport_len` of them).
    transport: Vec<u8>,
}

const QPS: [(u64, u64, u64); 2] = [(5, 0x12_3456, 3), (200, 0x00_0777, 9)];

fn cfg_rows(mrc10: bool) -> Vec<(u8, u64, Bits<256>)> {
    let mut rows = Vec::new();
    for (qp, dest, addr) in QPS {
        // The fields of the send context the block snoops.
        let d = Row::new()
            .set(sq_ctx::DEST_QP, dest)
            .set(sq_ctx::ADDR_INDEX, addr)
            .set(sq_ctx::PKEY, 0xFF00 | qp);
        rows.push((table::SQ_CTX, qp, row_bits(&d)));
        let a = Row::new()
            .set(addr::MAC, 0x0200_0000_0000 | addr)
            .set(addr::IP_LO, 0x0A00_0000 | addr);
        rows.push((table::ADDR, addr, row_bits(&a)));
    }
    let l = Row::new()
        .set(addr::MAC, 0x0200_0000_0001)
        .set(addr::IP_LO, 0x0A00_0001)
        .set(addr::DSCP, 26)
        .set(addr::TTL, 64)
        .set(addr::WIRE_MRC10, u64::from(mrc10));
    rows.push((table::ADDR, u64::from(INDEX_SELECT), row_bits(&l)));
    rows
}

#[test]
fn headers_match_the_golden_extension_emitter() {
    let (data, acks) = records();
    // Outputs: headers, reads (addr, len), send records (qp, psn, ev, len, time).
    let probes = probes();
    let (hdrs, reads, sents) = simulate(&data, &acks, &probes, false);
    assert_eq!(
        hdrs.len(),
        data.len() + acks.len() + probes.len(),
        "every record became a header"
    );
    let (mut di, mut ai, mut pi) = (0, 0, 0);
    let mut ev_seq = std::collections::HashMap::<(u64, u64), u32>::new();
    let mut next_ev = [0u64; 256];
    let mut want_reads = Vec::new();
    let peer = |qp: u64| QPS.iter().find(|p| p.0 == qp).copied().unwrap();
    for h in hdrs.iter() {
        if h.opcode == 0x11 && h.ext[0] == 0x14 && h.ext[1] == 0 {
            // Our legacy probe (`proto::model::legacy_mrc` `queue_probe`):
            // the EV's index as index and id, the send time (read back,
            // checked plausible), PSN 0, on the EV's value.
            let p = probes[pi];
            pi += 1;
            let (_, dest, addr) = peer(p.qp);
            let ts = u32::from_be_bytes([h.ext[8], h.ext[9], h.ext[10], h.ext[11]]);
            assert!((1000..1000 + 3 * 3000).contains(&ts), "probe tx_ts {ts}");
            let ext = MrcExtRepr::Probe(ProbeExtRepr {
                response: false,
                ev_index: p.ev as u16,
                probe_id: p.ev as u32,
                tx_ts: ts,
                service_ns: 0,
            });
            assert_eq!(h.ext, ext_bytes(&ext), "probe {pi} ({p:?}) extension");
            assert_eq!(
                (h.dst_mac, h.dst_ip, h.dest_qp, h.pkey, h.syndrome, h.psn, h.ev),
                (
                    0x0200_0000_0000 | addr,
                    0x0A00_0000 | addr,
                    dest,
                    0xFF00 | p.qp,
                    0x1F,
                    0,
                    ev_value(p.qp, p.ev)
                ),
                "probe {pi} fields"
            );
            continue;
        }
        if h.opcode == 0x11 {
            let a = acks[ai];
            ai += 1;
            let (_, dest, addr) = peer(a.qp);
            let ext = if a.sack && a.probe && a.legacy {
                // The legacy probe response: the probe's EV index, id and
                // tx_ts echoed, the service time.
                MrcExtRepr::Probe(ProbeExtRepr {
                    response: true,
                    ev_index: (a.psn % 16) as u16,
                    probe_id: legacy_id(a.psn),
                    tx_ts: (0xEC40_0000 + a.psn) as u32,
                    service_ns: service_ns(&a) as u32,
                })
            } else if a.sack {
                let mut bitmap = SackBitmap::new(64);
                bitmap.words[0] = a.bitmap;
                MrcExtRepr::Sack(SackExtRepr {
                    ev_index: (a.psn % 16) as u16,
                    ecn_ce_count: 7,
                    echo_ts: (0xEC40_0000 + a.psn) as u32,
                    service_ns: service_ns(&a) as u32,
                    base: Psn::new(a.base as u32),
                    bitmap,
                })
            } else {
                let kind =
                    [NackKind::Trimmed, NackKind::OutOfWindow, NackKind::RemoteAccess][usize::from(a.nack_kind - 1)];
                MrcExtRepr::Nack(NackExtRepr {
                    kind,
                    ev_index: (a.psn % 16) as u16,
                    cum_psn: Psn::new(a.cum as u32),
                    echo_ts: (0xEC40_0000 + a.psn) as u32,
                })
            };
            assert_eq!(h.ext, ext_bytes(&ext), "ACK {ai} extension");
            assert_eq!(
                (h.dst_mac, h.dst_ip, h.dest_qp, h.pkey),
                (0x0200_0000_0000 | addr, 0x0A00_0000 | addr, dest, 0xFF00 | a.qp)
            );
            assert_eq!(h.ev, ack_ev(a.psn));
            let want_syn = if a.sack {
                0x1F
            } else if a.nack_kind == 3 {
                0x62
            } else {
                0x60
            };
            assert_eq!(h.syndrome, want_syn);
            assert_eq!(h.psn, if a.sack { a.cum } else { a.psn });
        } else {
            let d = data[di];
            di += 1;
            let (_, dest, addr) = peer(d.qp);
            let ev = next_ev[d.qp as usize] % 5;
            next_ev[d.qp as usize] += 1;
            let seq = ev_seq.entry((d.qp, ev)).or_insert(0);
            let placement = matches!(d.opcode, 0x07..=0x09).then_some(PlacementRepr {
                va: 0x5555_0000_0000 + d.off,
                rkey: 0xABCD_0000,
            });
            // tx_ts (bytes 8-11) is the clock when the builder took the
            // header, not when it was built: the wait for the builder is
            // not part of the packet's round trip.
            let ts = u32::from_be_bytes([h.ext[8], h.ext[9], h.ext[10], h.ext[11]]);
            assert_eq!(
                u64::from(ts),
                h.time,
                "data {di}: tx_ts is the time the builder took it"
            );
            let ext = MrcExtRepr::Data(DataExtRepr {
                ev_index: ev as u16,
                retransmit: d.rtx,
                ev_seq: *seq,
                tx_ts: ts,
                msg_offset: d.off as u32,
                placement,
            });
            *seq += 1;
            assert_eq!(h.ext, ext_bytes(&ext), "data {di} ({d:?}) extension");
            assert_eq!(
                (h.dst_mac, h.src_mac, h.dst_ip, h.dest_qp, h.pkey),
                (
                    0x0200_0000_0000 | addr,
                    0x0200_0000_0001,
                    0x0A00_0000 | addr,
                    dest,
                    0xFF00 | d.qp
                )
            );
            assert_eq!(
                (h.opcode, h.psn, h.ev, h.payload_len, h.pad),
                (
                    u64::from(d.opcode),
                    d.psn,
                    rsp_value(d.qp, ev),
                    d.len,
                    (4 - d.len % 4) % 4
                )
            );
            if d.len > 0 {
                want_reads.push((0x7000_0000 + d.psn, d.len));
            }
            assert_eq!(
                sents[di - 1],
                (d.qp, d.psn, ev, d.len, h.time),
                "send record {di}: with the header, at its time"
            );
        }
    }
    assert_eq!(reads, want_reads, "payload reads");
    assert_eq!(sents.len(), data.len());
    assert_eq!(pi, probes.len(), "every probe went out");
    assert!(acks.iter().any(|a| !a.sack) && data.iter().any(|d| d.rtx) && data.iter().any(|d| d.len == 0));
    assert!(
        acks.iter().any(|a| a.sack && a.probe && a.legacy),
        "a legacy probe's answer"
    );
}

/// Headers, payload reads (addr, len) and send records (qp, psn, ev, len).
type Outputs = (Vec<Hdr>, Vec<(u64, u64)>, Vec<(u64, u64, u64, u64, u64)>);

/// Run `data` and `acks` through the block (own row with `wire_mrc10` =
/// `mrc10`), with stalls, then replay the cycles on the Verilog.
fn simulate(data: &[Data], acks: &[Ack], probes: &[Probe], mrc10: bool) -> Outputs {
    let hdrs = Arc::new(Mutex::new(Vec::<Hdr>::new()));
    let reads = Arc::new(Mutex::new(Vec::<(u64, u64)>::new()));
    let sents = Arc::new(Mutex::new(Vec::<(u64, u64, u64, u64, u64)>::new()));
    let (h2, r2, s2) = (hdrs.clone(), reads.clone(), sents.clone());
    let (d2, a2, p2) = (data.to_vec(), acks.to_vec(), probes.to_vec());
    let want = data.len() + acks.len() + probes.len();
    let mut uut = TxPath::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(TxPath, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut r = Rng::from_state(5);
        wait_clock_true!(sim, clock, x);
        for (t, idx, row) in cfg_rows(mrc10) {
            x.cfg.valid.next = true;
            x.cfg.table.next = u64::from(t).into();
            x.cfg.index.next = idx.into();
            x.cfg.data.next = row;
            wait_clock_cycle!(sim, clock, x);
        }
        x.cfg.valid.next = false;
        // The EV values of the probed EVs (and their neighbours), as the
        // core writes them when the EV selector takes a value row.
        for p in p2.iter() {
            for ev in p.ev.saturating_sub(1)..=(p.ev + 1).min(127) {
                x.evv_we.next = true;
                x.evv_addr.next = ((p.qp << 7) | ev).into();
                x.evv_value.next = ev_value(p.qp, ev).into();
                wait_clock_cycle!(sim, clock, x);
            }
        }
        x.evv_we.next = false;
        let (mut di, mut ai, mut pi) = (0usize, 0usize, 0usize);
        // EV selector model: (due cycle, qp); EVs rotate per QP.
        let mut pending: Vec<(u64, u64)> = Vec::new();
        let mut next_ev = [0u64; 256];
        let mut payload = PayloadFifo::default();
        let mut cycle = 0u64;
        while cycle < 3000 && (h2.lock().unwrap().len() < want) {
            x.now_ns.next = now_at(cycle).into();
            x.pkt_valid.next = di < d2.len();
            if let Some(d) = d2.get(di) {
                x.pkt_qp.next = d.qp.into();
                x.pkt_psn.next = d.psn.into();
                x.pkt_opcode.next = u64::from(d.opcode).into();
                x.pkt_ack_req.next = d.opcode == 0x09;
                x.pkt_retransmit.next = d.rtx;
                x.pkt_addr.next = (0x7000_0000 + d.psn).into();
                x.pkt_len.next = d.len.into();
                x.pkt_remote_va.next = (0x5555_0000_0000 + d.off).into();
                x.pkt_rkey.next = 0xABCD_0000u64.into();
                x.pkt_dma_len.next = 0x10_0000u64.into();
                x.pkt_imm.next = 0x1234_5678u64.into();
                x.pkt_msg_offset.next = d.off.into();
            }
            x.ack_valid.next = ai < a2.len() && ACK_PAUSE.go(&mut r);
            if let Some(a) = a2.get(ai) {
                x.ack_qp.next = a.qp.into();
                x.ack_kind.next = (if a.sack { 1u64 } else { 2 }).into();
                x.ack_psn.next = a.psn.into();
                x.ack_cum.next = a.cum.into();
                x.ack_trigger_psn.next = trigger_psn(a).into();
                x.ack_msn.next = 0x42u64.into();
                x.ack_nack_kind.next = u64::from(a.nack_kind).into();
                x.ack_nak_code.next = (if a.nack_kind == 3 { 2u64 } else { 0 }).into();
                x.ack_base.next = a.base.into();
                x.ack_bitmap.next = a.bitmap.into();
                x.ack_ecn_count.next = 7u64.into();
                x.ack_ev.next = ack_ev(a.psn).into();
                x.ack_ev_index.next = (a.psn % 16).into();
                x.ack_echo_ts.next = (0xEC40_0000 + a.psn).into();
                x.ack_arrival_ns.next = (now_at(cycle).wrapping_sub(held_ns(a)) & 0xFFFF_FFFF).into();
                x.ack_probe.next = a.probe;
                x.ack_probe_legacy.next = a.legacy;
                x.ack_probe_id.next = u64::from(legacy_id(a.psn)).into();
            }
            x.prb_valid.next = pi < p2.len() && PROBE_PAUSE.go(&mut r);
            if let Some(p) = p2.get(pi) {
                x.prb_qp.next = p.qp.into();
                x.prb_ev.next = p.ev.into();
            }
            // Selector answer for a select two cycles ago.
            x.ev_busy.next = false;
            x.rsp_valid.next = false;
            if let Some(&(due, qp)) = pending.first() {
                if due == cycle {
                    pending.remove(0);
                    let ev = next_ev[qp as usize] % 5;
                    next_ev[qp as usize] += 1;
                    x.rsp_valid.next = true;
                    x.rsp_none.next = false;
                    x.rsp_ev.next = ev.into();
                    x.rsp_value.next = rsp_value(qp, ev).into();
                }
            }
            x.hdr_ready.next = BACKPRESSURE.go(&mut r);
            x.dma_rd_req.ready.next = BACKPRESSURE.go(&mut r);
            x.sent_ready.next = BACKPRESSURE.go(&mut r);
            x.pl_taken.next = payload.takeable() && BACKPRESSURE.go(&mut r);
            x.pl_arrived.next = payload.arrives(cycle);
            wait_clock_false!(sim, clock, x);
            if x.pl_taken.val() {
                payload.taken += 1;
            }
            if x.sel_valid.val() {
                pending.push((cycle + 2, v(x.sel_qp.val())));
            }
            if x.pkt_valid.val() && x.pkt_ready.val() {
                di += 1;
            }
            if x.ack_valid.val() && x.ack_ready.val() {
                ai += 1;
            }
            if x.prb_valid.val() && x.prb_ready.val() {
                pi += 1;
            }
            if x.hdr_valid.val() && x.hdr_ready.val() {
                let h = x.hdr.val();
                if h.data {
                    payload.header(cycle, v(h.payload_len));
                }
                let ext_len = v(h.ext_len) as usize;
                h2.lock().unwrap().push(Hdr {
                    dst_mac: v(h.dst_mac),
                    src_mac: v(h.src_mac),
                    dst_ip: v(h.dst_ip),
                    ev: v(h.ev),
                    opcode: v(h.opcode),
                    psn: v(h.psn),
                    dest_qp: v(h.dest_qp),
                    pkey: v(h.pkey),
                    syndrome: v(h.aeth_syndrome),
                    ext: be_bytes(h.ext, ext_len),
                    payload_len: v(h.payload_len),
                    pad: v(h.pad),
                    // When the builder took it: a data packet's send time.
                    time: now_at(cycle),
                    mrc10: h.mrc10,
                    dscp: v(h.dscp),
                    ecn: v(h.ecn),
                    transport: {
                        let n = v(h.transport_len) as usize;
                        (0..n).map(|k| h.transport.get_bits::<8>(8 * k).index() as u8).collect()
                    },
                });
            }
            if x.dma_rd_req.valid.val() && x.dma_rd_req.ready.val() {
                payload.read(cycle, v(x.dma_rd_req.len.val()));
                r2.lock()
                    .unwrap()
                    .push((v(x.dma_rd_req.addr.val()), v(x.dma_rd_req.len.val())));
            }
            if x.sent_valid.val() && x.sent_ready.val() {
                s2.lock().unwrap().push((
                    v(x.sent_qp.val()),
                    v(x.sent_psn.val()),
                    v(x.sent_ev.val()),
                    v(x.sent_len.val()),
                    v(x.sent_time.val()),
                ));
            }
            payload.arrive(cycle);
            wait_clock_true!(sim, clock, x);
            cycle += 1;
        }
        sim.done(x)
    });
    sim.run(Box::new(uut), 1_000_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_tx_path", || {
        hw::flow::emit_block("mrc_tx_path", &mut TxPath::default()).verilog
    });
    let hdrs = hdrs.lock().unwrap().clone();
    let sents = sents.lock().unwrap().clone();
    let reads = reads.lock().unwrap().clone();
    (hdrs, reads, sents)
}

/// Bytes of a payload beat (the DMA read response and the builder's input).
const BEAT_BYTES: u64 = 64;

/// Cycles from a payload read to its first beat in the model of the
/// core's payload FIFO.
const PAYLOAD_LATENCY: u64 = 12;

/// The core's payload FIFO and the TX builder's use of it, as the block
/// sees them: a read's beats (`ceil(len / 64)`) arrive `PAYLOAD_LATENCY`
/// cycles after it, one per cycle behind the reads before it (each on
/// `pl_arrived`); the builder takes (`pl_taken`) only beats that arrived
/// and belong to a header it took. Every data header the block offers
/// must find its payload arrived, beyond the beats of the headers before
/// it: the builder streams a frame's beats back to back, and a MAC
/// aborts a frame whose next beat is missing.
#[derive(Default)]
struct PayloadFifo {
    /// The cycles at which beats arrive, in order.
    due: VecDeque<u64>,
    arrived: u64,
    /// Beats of the data headers the builder took.
    offered: u64,
    taken: u64,
}

impl PayloadFifo {
    fn read(&mut self, cycle: u64, len: u64) {
        let first = (cycle + PAYLOAD_LATENCY).max(self.due.back().map_or(0, |&d| d + 1));
        self.due.extend(first..first + len.div_ceil(BEAT_BYTES));
    }

    /// Whether a beat arrives in `cycle` (drive `pl_arrived` with it; it
    /// counts from the next cycle on, once `arrive` is called after the
    /// cycle's checks).
    fn arrives(&self, cycle: u64) -> bool {
        self.due.front() == Some(&cycle)
    }

    fn arrive(&mut self, cycle: u64) {
        if self.arrives(cycle) {
            self.due.pop_front();
            self.arrived += 1;
        }
    }

    /// The builder takes a beat this cycle (drive `pl_taken`).
    fn takeable(&self) -> bool {
        self.taken < self.offered && self.taken < self.arrived
    }

    /// A data header taken by the builder in `cycle`, of `len` bytes.
    fn header(&mut self, cycle: u64, len: u64) {
        let beats = len.div_ceil(BEAT_BYTES);
        assert!(
            self.arrived >= self.offered + beats,
            "cycle {cycle}: a header of {beats} beats offered with {} of its payload's beats in the FIFO",
            self.arrived.saturating_sub(self.offered)
        );
        self.offered += beats;
    }
}

/// Back-to-back data packets of one QP while the TX builder is busy (its
/// request port held for `BUSY_CYCLES`, as behind a long frame): the
/// payload reads must run ahead of the headers, as many as the data
/// header FIFO holds or the payload FIFO has room for, and no more; once
/// the builder takes headers and payload beats again, every packet must
/// come out in order with its read and send record. Sizes: 64-byte
/// payloads (1 beat: the header FIFO bounds the reads, at its depth and
/// one more, the packet in the sequencer's hand, whose read goes out
/// while its header waits for room), 1000-byte
/// payloads (16 beats: the payload FIFO's 256 beats bound them at 16,
/// or the header FIFO if it is shallower) and 4 KiB payloads (64 beats:
/// the payload FIFO bounds them at 4). Replayed on the Verilog.
#[test]
fn payload_reads_run_ahead_of_a_busy_builder() {
    use hw::tx_path::PAYLOAD_FIFO_BEATS;
    for len in [64u64, 1000, 4096] {
        let ahead = (DATA_HDR_FIFO_DEPTH as u64 + 1).min(PAYLOAD_FIFO_BEATS / len.div_ceil(BEAT_BYTES));
        let (hdrs, reads, early) = simulate_busy_builder(len);
        assert_eq!(
            early, ahead,
            "{len}-byte packets: payload reads issued while the builder was busy"
        );
        let psns: Vec<u64> = hdrs.iter().map(|h| h.1).collect();
        assert_eq!(
            psns,
            (0..BURST).map(|i| 0x100 + i).collect::<Vec<_>>(),
            "headers in order"
        );
        assert!(hdrs.iter().all(|h| h.0 == len), "payload lengths");
        let want: Vec<(u64, u64)> = (0..BURST).map(|i| (0x7000_0000 + 0x100 + i, len)).collect();
        assert_eq!(reads, want, "payload reads, in the headers' order");
    }
}

/// Packets of the busy-builder burst.
const BURST: u64 = DATA_HDR_FIFO_DEPTH as u64 + 8;
/// Cycles the builder's request port is held at the burst's start.
const BUSY_CYCLES: u64 = 400;

/// One QP's `BURST` data records of `len` bytes, back to back, with the
/// header port held for `BUSY_CYCLES` and then the builder modelled as
/// taking one payload beat per cycle of the frames whose headers it has.
/// Returns the headers (payload length, PSN), the reads and how many reads
/// were issued while the port was held.
/// Headers (payload length, PSN), payload reads (addr, len), and the reads
/// issued while the builder was busy.
type BurstOutputs = (Vec<(u64, u64)>, Vec<(u64, u64)>, u64);

/// A WRITE data record of `len` bytes offered on `pkt_*` (`valid` as
/// given): QP `qp`, PSN `psn`, opcode `opcode`, payload at `addr`, remote
/// VA `va`, message length `dma_len`, offset `offset` in it.
struct DataOffer {
    valid: bool,
    qp: u64,
    psn: u64,
    opcode: u64,
    addr: u64,
    len: u64,
    va: u64,
    dma_len: u64,
    offset: u64,
}

fn offer_data(x: &mut TxPath, d: &DataOffer) {
    x.pkt_valid.next = d.valid;
    x.pkt_qp.next = d.qp.into();
    x.pkt_psn.next = d.psn.into();
    x.pkt_opcode.next = d.opcode.into();
    x.pkt_ack_req.next = false;
    x.pkt_retransmit.next = false;
    x.pkt_addr.next = d.addr.into();
    x.pkt_len.next = d.len.into();
    x.pkt_remote_va.next = d.va.into();
    x.pkt_rkey.next = 0xABCD_0000u64.into();
    x.pkt_dma_len.next = d.dma_len.into();
    x.pkt_imm.next = 0u64.into();
    x.pkt_msg_offset.next = d.offset.into();
}

/// The single-EV selector model of the data-only tests: no ACK record,
/// the selector never busy, and a select answered two cycles later
/// (`pending`: the cycles answers are due) with EV 1, value `rsp_value(0, 1)`.
fn answer_selects(x: &mut TxPath, pending: &mut Vec<u64>, cycle: u64) {
    x.ack_valid.next = false;
    x.ev_busy.next = false;
    x.rsp_valid.next = false;
    if pending.first() == Some(&cycle) {
        pending.remove(0);
        x.rsp_valid.next = true;
        x.rsp_none.next = false;
        x.rsp_ev.next = 1u64.into();
        x.rsp_value.next = rsp_value(0, 1).into();
    }
}

fn simulate_busy_builder(len: u64) -> BurstOutputs {
    let hdrs = Arc::new(Mutex::new(Vec::<(u64, u64)>::new()));
    let reads = Arc::new(Mutex::new(Vec::<(u64, u64)>::new()));
    let early = Arc::new(Mutex::new(0u64));
    let (h2, r2, e2) = (hdrs.clone(), reads.clone(), early.clone());
    let mut uut = TxPath::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(TxPath, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        for (t, idx, row) in cfg_rows(true) {
            x.cfg.valid.next = true;
            x.cfg.table.next = u64::from(t).into();
            x.cfg.index.next = idx.into();
            x.cfg.data.next = row;
            wait_clock_cycle!(sim, clock, x);
        }
        x.cfg.valid.next = false;
        let qp = QPS[0].0;
        let mut di = 0u64;
        let mut pending: Vec<u64> = Vec::new();
        // The payload FIFO, and the beats the builder may take of it.
        let mut payload = PayloadFifo::default();
        let mut cycle = 0u64;
        while cycle < 20_000 && ((h2.lock().unwrap().len() as u64) < BURST || (r2.lock().unwrap().len() as u64) < BURST)
        {
            x.now_ns.next = now_at(cycle).into();
            offer_data(
                &mut x,
                &DataOffer {
                    valid: di < BURST,
                    qp,
                    psn: 0x100 + di,
                    opcode: 0x07,
                    addr: 0x7000_0000 + 0x100 + di,
                    len,
                    va: 0x5555_0000_0000 + di * len,
                    dma_len: BURST * len,
                    offset: di * len,
                },
            );
            answer_selects(&mut x, &mut pending, cycle);
            let busy = cycle < BUSY_CYCLES;
            x.hdr_ready.next = !busy;
            x.dma_rd_req.ready.next = true;
            x.sent_ready.next = true;
            x.pl_taken.next = payload.takeable();
            x.pl_arrived.next = payload.arrives(cycle);
            wait_clock_false!(sim, clock, x);
            if x.pl_taken.val() {
                payload.taken += 1;
            }
            if x.sel_valid.val() {
                pending.push(cycle + 2);
            }
            if x.pkt_valid.val() && x.pkt_ready.val() {
                di += 1;
            }
            if x.hdr_valid.val() && x.hdr_ready.val() {
                let h = x.hdr.val();
                payload.header(cycle, v(h.payload_len));
                h2.lock().unwrap().push((v(h.payload_len), v(h.psn)));
            }
            if x.dma_rd_req.valid.val() && x.dma_rd_req.ready.val() {
                if busy {
                    *e2.lock().unwrap() += 1;
                }
                payload.read(cycle, v(x.dma_rd_req.len.val()));
                r2.lock()
                    .unwrap()
                    .push((v(x.dma_rd_req.addr.val()), v(x.dma_rd_req.len.val())));
            }
            payload.arrive(cycle);
            wait_clock_true!(sim, clock, x);
            cycle += 1;
        }
        sim.done(x)
    });
    sim.run(Box::new(uut), 1_000_000_000_000).unwrap();
    rec.check_verilog("mrc_tx_path", || {
        hw::flow::emit_block("mrc_tx_path", &mut TxPath::default()).verilog
    });
    let hdrs = hdrs.lock().unwrap().clone();
    let reads = reads.lock().unwrap().clone();
    let early = *early.lock().unwrap();
    (hdrs, reads, early)
}

/// The records of both tests: 24 data packets (random WRITE opcodes, PSNs
/// across the wrap, 25% retransmissions, payloads 0-1000) and 10 ACK
/// records (SACK and the three NACK kinds) on two QPs.
fn probes() -> Vec<Probe> {
    (0..6)
        .map(|i| Probe {
            qp: QPS[(i % 2) as usize].0,
            ev: [0, 1, 5, 64, 126, 127][i as usize],
        })
        .collect()
}

fn records() -> (Vec<Data>, Vec<Ack>) {
    let mut r = Rng::from_state(77);
    let ops = [0x06u8, 0x07, 0x08, 0x09, 0x0A, 0x0B];
    let data: Vec<Data> = (0..24)
        .map(|i| Data {
            qp: QPS[(i % 2) as usize].0,
            psn: (0xFF_FFF0 + i) & 0xFF_FFFF,
            opcode: ops[r.below(6) as usize],
            rtx: r.below(4) == 0,
            len: [0, 1, 63, 64, 1000][r.below(5) as usize],
            off: r.below(1 << 20),
        })
        .collect();
    let acks: Vec<Ack> = (0..10)
        .map(|i| Ack {
            qp: QPS[(i % 2) as usize].0,
            sack: i % 3 != 2,
            psn: 0x10_0000 + i,
            cum: 0x0F_FFFF + i,
            base: 0x10_0000 + i,
            bitmap: r.next_u64(),
            nack_kind: 1 + (i % 3) as u8,
            probe: i % 3 == 1,
            legacy: i == 4 || i == 7,
        })
        .collect();
    (data, acks)
}

/// The same records with the own row's `wire_mrc10` set: every header
/// request carries the MRC 1.0 transport bytes `mrc10::emit_frame` writes
/// for the packet the golden requester / responder builds from the
/// record (METH MSNs counted per QP, TSETH from the send time, RETH on
/// every WRITE, SETH + CC_STATE, NETH, the remote-access ACK), with the
/// MRC 1.0 classes' DSCP and ECN; reads and send records as in legacy.
/// Replayed on the Verilog.
#[test]
fn mrc10_transport_matches_the_golden_emitter() {
    use proto::wire::mrc10::{
        self, choices, CcStateRepr, Headers, MethRepr, Mrc10Packet, NackReason, NethRepr, Opcode as Op10, Profile,
        SethRepr, SkipMode, TrafficClass, TsethRepr, WriteHeaders,
    };
    let (data, acks) = records();
    let probes = probes();
    let (hdrs, _reads, sents) = simulate(&data, &acks, &probes, true);
    assert_eq!(
        hdrs.len(),
        data.len() + acks.len() + probes.len(),
        "every record became a header"
    );
    let transport_of = |p: &Mrc10Packet| {
        let mut f = Vec::new();
        mrc10::emit_frame(p, &Encap::test_v4(), &Profile::DEFAULT, &mut f);
        let at = 14 + 20 + 8;
        f[at..at + p.transport_header_len()].to_vec()
    };
    let peer = |qp: u64| QPS.iter().find(|p| p.0 == qp).copied().unwrap();
    let mut msn = std::collections::HashMap::<u64, (u16, u16)>::new();
    let mut next_ev = [0u64; 256];
    let (mut di, mut ai, mut pi) = (0, 0, 0);
    for h in hdrs.iter() {
        assert!(h.mrc10, "every header in MRC 1.0");
        if h.transport[0] == Op10::ReliabilityProbe as u8 {
            // Our probe (`proto::model::mrc` `queue_probe`): PSN 0, the
            // probe id the EV's index, the contexts, the timestamp when it
            // goes out (read back, checked plausible), on the EV's value.
            let p = probes[pi];
            pi += 1;
            let (_, dest, _) = peer(p.qp);
            let ts = u16::from_be_bytes([h.transport[12 + 6], h.transport[12 + 7]]);
            assert!(((1000 >> 6)..=((1000 + 3 * 3000) >> 6)).contains(&ts), "probe ts {ts}");
            let ev = ev_value(p.qp, p.ev) as u32;
            let peth = mrc10::PethRepr {
                probe_id: choices::probe_id_of_ev(p.ev as u16),
                sender_context: choices::context_of(p.qp as u32),
                receiver_context: choices::context_of(dest as u32),
                timestamp: ts,
            };
            let pkt = Mrc10Packet::control(
                ev,
                Op10::ReliabilityProbe,
                (0xFF00 | p.qp) as u16,
                dest as u32,
                Psn::new(0),
                Headers::Probe(peth),
            );
            assert_eq!(h.transport, transport_of(&pkt), "probe {pi} ({p:?})");
            assert_eq!((h.dscp, h.ecn, h.ev), (48, 0, u64::from(ev)), "probe {pi} outer fields");
            continue;
        }
        if h.transport[0] >= 0xD0 {
            let a = acks[ai];
            ai += 1;
            let (_, dest, _) = peer(a.qp);
            let ev = ack_ev(a.psn) as u32;
            let echo = ((0xEC40_0000 + a.psn) & 0xFFFF) as u16;
            // A SACK's echo is advanced by the service time in TSETH units;
            // a probe answer's and a NACK's are not.
            let sack_echo = if a.probe {
                echo
            } else {
                echo.wrapping_add((service_ns(&a) / choices::TS_UNIT_NS) as u16)
            };
            let (sctx, rctx) = (choices::context_of(a.qp as u32), choices::context_of(dest as u32));
            let pkt = if a.sack {
                let seth = SethRepr {
                    skip_mode: SkipMode::None,
                    // A probe answer: pr = 1, the probe id (the record's
                    // `ev_index`) in the ack PSN offset.
                    probe_response: a.probe,
                    ack_psn_offset: ack_psn_offset(&a),
                    ev,
                    sender_context: sctx,
                    receiver_context: rctx,
                    cum_ack_psn: Psn::new(a.cum as u32),
                    cc_type: choices::CC_TYPE_NSCC,
                    cc_flags: choices::cc_flags_from_ce_count(7),
                    mpr: (hw::sack_table::MPR / proto::model::MPR_UNIT) as u8,
                    sack_offset: Psn::new(a.base as u32).distance(Psn::new(a.cum as u32)) as i16,
                    bitmap: a.bitmap,
                };
                let cc_state = CcStateRepr {
                    echo_ts: sack_echo,
                    ooo_count: 0,
                    restore: false,
                    cwnd_penalty: 0,
                    rcvd_bytes: 0,
                };
                Mrc10Packet::control(
                    ev,
                    Op10::Sack,
                    (0xFF00 | a.qp) as u16,
                    dest as u32,
                    Psn::new(a.cum as u32),
                    Headers::Sack { seth, cc_state },
                )
            } else if a.nack_kind == 3 {
                let aeth = AethRepr {
                    syndrome: Syndrome::Nak {
                        code: Syndrome::NAK_REMOTE_ACCESS,
                    },
                    msn: 0x42,
                };
                Mrc10Packet::control(
                    ev,
                    Op10::Ack,
                    (0xFF00 | a.qp) as u16,
                    dest as u32,
                    Psn::new(a.psn as u32),
                    Headers::Ack(aeth),
                )
            } else {
                let neth = NethRepr {
                    reason: if a.nack_kind == 1 {
                        NackReason::Trimmed
                    } else {
                        NackReason::PsnOorWindow
                    },
                    vendor_info: 0,
                    ev,
                    sender_context: sctx,
                    receiver_context: rctx,
                    nack_psn: Psn::new(a.psn as u32),
                    cc_type: choices::CC_TYPE_NSCC,
                    cc_flags: 0,
                    timestamp: echo,
                };
                Mrc10Packet::control(
                    ev,
                    Op10::Nack,
                    (0xFF00 | a.qp) as u16,
                    dest as u32,
                    Psn::new(a.psn as u32),
                    Headers::Nack(neth),
                )
            };
            assert_eq!(h.transport, transport_of(&pkt), "ACK {ai} ({a:?})");
            assert_eq!((h.dscp, h.ecn, h.ev), (48, 0, u64::from(ev)), "ACK {ai} outer fields");
        } else {
            let d = data[di];
            di += 1;
            let (_, dest, _) = peer(d.qp);
            let ev = next_ev[d.qp as usize] % 5;
            next_ev[d.qp as usize] += 1;
            // The TSETH is the time the builder took the header, in 64 ns.
            let ts = u16::from_be_bytes([h.transport[16], h.transport[17]]);
            assert_eq!(
                u64::from(ts),
                (h.time >> 6) & 0xFFFF,
                "data {di}: TSETH is the time the builder took it"
            );
            let (m, rq) = *msn.entry(d.qp).or_insert((0, 0));
            let op = Op10::from_u8(0xC0 | d.opcode).expect("a WRITE");
            let pkt = Mrc10Packet {
                ev: 0,
                ecn: 2,
                class: TrafficClass::Trimmable,
                bth: mrc10::BthRepr {
                    opcode: op,
                    solicited: false,
                    mig_req: true,
                    pad: ((4 - d.len % 4) % 4) as u8,
                    pkey: (0xFF00 | d.qp) as u16,
                    fecn: false,
                    becn: false,
                    dest_qp: dest as u32,
                    ack_req: d.opcode == 0x09,
                    retransmit: d.rtx,
                    timestamp: true,
                    psn: Psn::new(d.psn as u32),
                },
                headers: Headers::Write(WriteHeaders {
                    meth: MethRepr { rq_msn: rq, msn: m },
                    tseth: Some(TsethRepr {
                        tx_ts: ts,
                        resolution: choices::TS_RESOLUTION,
                        format: choices::TS_FORMAT,
                    }),
                    reth: RethRepr {
                        va: 0x5555_0000_0000 + d.off,
                        rkey: 0xABCD_0000,
                        dma_len: 0x10_0000,
                    },
                    imm: op.has_imm().then_some(0x1234_5678),
                }),
                payload: Bytes::from(vec![0u8; d.len as usize]),
            };
            assert_eq!(h.transport, transport_of(&pkt), "data {di} ({d:?})");
            let dscp = if d.rtx { 28 } else { 26 };
            assert_eq!(
                (h.dscp, h.ecn, h.payload_len, h.pad),
                (dscp, 2, d.len, (4 - d.len % 4) % 4),
                "data {di}"
            );
            assert_eq!(h.ev, rsp_value(d.qp, ev));
            // The send record's time is the TSETH's, at its grain.
            assert_eq!(
                sents[di - 1],
                (d.qp, d.psn, ev, d.len, h.time & !63),
                "send record {di}: with the header, at its time"
            );
            if !d.rtx {
                let e = msn.get_mut(&d.qp).unwrap();
                if matches!(d.opcode, 0x08..=0x0B) {
                    e.0 += 1;
                }
                if matches!(d.opcode, 0x09 | 0x0B) {
                    e.1 += 1;
                }
            }
        }
    }
    assert!(
        msn.values().any(|&(m, rq)| m > 0 && rq > 0),
        "the counters moved: {msn:?}"
    );
    assert_eq!(pi, probes.len(), "every probe went out");
}

/// The error test's PSNs: records taken (with the cycle), headers the
/// builder took (with the drop flag and the cycle), payload reads, send
/// records; and the in-hand drops counted.
#[derive(Default)]
struct Flushed {
    /// (PSN, the cycle the sequencer took its record).
    taken: Vec<(u64, u64)>,
    /// (PSN, dropped, the cycle the builder took it).
    hdrs: Vec<(u64, bool, u64)>,
    reads: Vec<u64>,
    /// (PSN, the cycle its payload read was issued).
    reads_at: Vec<(u64, u64)>,
    sent: Vec<u64>,
    flushed: u64,
}

/// PSNs of the error test: QP `QPS[0]`'s records have bit 12 clear, QP
/// `QPS[1]`'s set.
const OTHER_QP_PSN: u64 = 0x1000;
const FLUSH_RECORDS: u64 = 80;
/// The row's cycle of the in-hand case: a record of the QP in error is
/// then in the sequencer's hand (states 1-4).
const FLUSH_IN_HAND_SETUP: u64 = 207;

/// Cycles of an error test: the builder held until `busy` (the data
/// header FIFO full), QP `QPS[0]` reported in error at `err`, set up
/// again by its send-context row at `setup`.
#[derive(Clone, Copy)]
struct FlushCase {
    busy: u64,
    err: u64,
    setup: u64,
}

/// A QP in error: the packets of it the block holds (in hand, or queued
/// for the builder with their payload read) never become frames, as the
/// model sends nothing once in ERR; the other QP's are untouched, and the
/// QP's send-context row brings it back. Two QPs' records alternate, the
/// builder is held until the data header FIFO is full, the error comes
/// while it is, and more of the QP's records arrive after it (the
/// requester would send none: the block must not rely on that). The QP is
/// set up again once the FIFO has drained.
#[test]
fn packets_of_a_qp_in_error_are_dropped_until_it_is_set_up_again() {
    let o = run_flush(FlushCase {
        busy: 300,
        err: 200,
        setup: 450,
    });
    let in_hand: Vec<u64> = o
        .taken
        .iter()
        .map(|t| t.0)
        .filter(|p| !o.hdrs.iter().any(|h| h.0 == *p))
        .collect();
    assert!(!in_hand.is_empty(), "records of the QP in error dropped in hand");
    assert!(
        o.hdrs.iter().any(|h| h.1),
        "the QP's queued headers dropped at the FIFO's head"
    );
}

/// The QP set up again while headers of its earlier life still wait in
/// the data header FIFO (the builder held past the row): they are
/// dropped at the FIFO's head, and with no send record, which would reach
/// the retransmit engine after the QP's INIT and release their bytes
/// against the new life's flight.
#[test]
fn headers_of_an_earlier_life_are_dropped_without_a_send_record() {
    let case = FlushCase {
        busy: 300,
        err: 200,
        setup: 230,
    };
    let o = run_flush(case);
    let stale = o.hdrs.iter().filter(|h| h.1 && h.2 > case.setup).count();
    assert!(
        stale > 0,
        "headers of the earlier life taken after the row: {:x?}",
        o.hdrs
    );
}

/// The QP set up again a few cycles after its error, with the builder
/// free: a record of its earlier life still in the sequencer's hand is
/// dropped there (no payload read after the row, no header), before it
/// advances the new life's METH counters.
#[test]
fn a_packet_of_an_earlier_life_in_hand_is_dropped_there() {
    let case = FlushCase {
        busy: 0,
        err: 200,
        setup: FLUSH_IN_HAND_SETUP,
    };
    let o = run_flush(case);
    let in_hand_at_row = o
        .taken
        .iter()
        .filter(|t| t.0 & OTHER_QP_PSN == 0 && t.1 > case.err && t.1 <= case.setup)
        .count();
    assert!(
        in_hand_at_row > 0,
        "a record of the QP taken between the error and the row: {:?}",
        o.taken
    );
}

/// One error run, its checks made; what it saw, for the case's own.
fn run_flush(case: FlushCase) -> Flushed {
    let out = Arc::new(Mutex::new(Flushed::default()));
    let o2 = out.clone();
    let mut uut = TxPath::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(TxPath, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        let rows = cfg_rows(false);
        for &(t, idx, row) in &rows {
            x.cfg.valid.next = true;
            x.cfg.table.next = u64::from(t).into();
            x.cfg.index.next = idx.into();
            x.cfg.data.next = row;
            wait_clock_cycle!(sim, clock, x);
        }
        x.cfg.valid.next = false;
        let setup = rows
            .iter()
            .find(|r| r.0 == table::SQ_CTX && r.1 == QPS[0].0)
            .copied()
            .unwrap();
        let len = 256u64;
        let mut di = 0u64;
        let mut pending: Vec<u64> = Vec::new();
        let mut payload = PayloadFifo::default();
        let mut cycle = 0u64;
        while cycle < 4_000 {
            let psn = if di.is_multiple_of(2) { di } else { OTHER_QP_PSN + di };
            x.now_ns.next = now_at(cycle).into();
            offer_data(
                &mut x,
                &DataOffer {
                    valid: di < FLUSH_RECORDS,
                    qp: QPS[(di % 2) as usize].0,
                    psn,
                    opcode: 0x0A,
                    addr: 0x7000_0000 + psn,
                    len,
                    va: 0x5555_0000_0000,
                    dma_len: len,
                    offset: 0,
                },
            );
            answer_selects(&mut x, &mut pending, cycle);
            x.qerr_valid.next = cycle == case.err;
            x.qerr_qp.next = QPS[0].0.into();
            x.cfg.valid.next = cycle == case.setup;
            x.cfg.table.next = u64::from(setup.0).into();
            x.cfg.index.next = setup.1.into();
            x.cfg.data.next = setup.2;
            // The builder's own drop count, which an in-hand drop waits
            // out.
            x.flushed_elsewhere.next = cycle % 7 == 3;
            x.hdr_ready.next = cycle >= case.busy && !cycle.is_multiple_of(3);
            x.dma_rd_req.ready.next = cycle % 4 != 1;
            x.sent_ready.next = cycle % 5 != 2;
            x.pl_taken.next = payload.takeable();
            x.pl_arrived.next = payload.arrives(cycle);
            wait_clock_false!(sim, clock, x);
            let mut o = o2.lock().unwrap();
            if x.pl_taken.val() {
                payload.taken += 1;
            }
            if x.sel_valid.val() {
                pending.push(cycle + 2);
            }
            if x.pkt_valid.val() && x.pkt_ready.val() {
                o.taken.push((psn, cycle));
                di += 1;
            }
            if x.hdr_valid.val() && x.hdr_ready.val() {
                let h = x.hdr.val();
                // The builder consumes a dropped header's payload too.
                payload.header(cycle, v(h.payload_len));
                let qp = QPS[usize::from(v(h.psn) & OTHER_QP_PSN != 0)].0;
                assert!(h.data && v(h.qp) == qp, "PSN {:#x}: QP and data flag", v(h.psn));
                o.hdrs.push((v(h.psn), x.hdr_drop.val(), cycle));
            } else {
                assert!(
                    !x.hdr_drop.val() || x.hdr_valid.val(),
                    "cycle {cycle}: a drop with no header offered"
                );
            }
            if x.dma_rd_req.valid.val() && x.dma_rd_req.ready.val() {
                payload.read(cycle, v(x.dma_rd_req.len.val()));
                o.reads.push(v(x.dma_rd_req.addr.val()) - 0x7000_0000);
                o.reads_at.push((v(x.dma_rd_req.addr.val()) - 0x7000_0000, cycle));
            }
            if x.sent_valid.val() && x.sent_ready.val() {
                o.sent.push(v(x.sent_psn.val()));
            }
            assert!(
                !(x.cnt_flushed.val() && x.flushed_elsewhere.val()),
                "cycle {cycle}: a drop counted beside the builder's"
            );
            o.flushed += u64::from(x.cnt_flushed.val());
            drop(o);
            payload.arrive(cycle);
            wait_clock_true!(sim, clock, x);
            cycle += 1;
        }
        sim.done(x)
    });
    sim.run(Box::new(uut), 1_000_000_000_000).unwrap();
    rec.check_verilog("mrc_tx_path", || {
        hw::flow::emit_block("mrc_tx_path", &mut TxPath::default()).verilog
    });
    let o = std::mem::take(&mut *out.lock().unwrap());
    let of_err_qp = |p: u64| p & OTHER_QP_PSN == 0;
    let taken_at = |p: u64| o.taken.iter().find(|t| t.0 == p).map(|t| t.1).unwrap();
    assert_eq!(o.taken.len() as u64, FLUSH_RECORDS, "every record taken");
    // A header of the QP is dropped if taken by the builder in the
    // error's span (its report's next cycle to the set-up row's), or
    // after it but of the QP's earlier life (its record taken by the
    // sequencer by the row's cycle: the requester applies the row a cycle
    // later). Nothing else is dropped.
    let stale = |h: &(u64, bool, u64)| of_err_qp(h.0) && h.2 > case.setup && taken_at(h.0) <= case.setup;
    for h @ &(psn, dropped, c) in &o.hdrs {
        let dead = of_err_qp(psn) && c > case.err && c <= case.setup;
        assert_eq!(dropped, dead || stale(h), "PSN {psn:#x} taken at cycle {c}");
    }
    assert!(
        o.hdrs.iter().any(|h| of_err_qp(h.0) && h.2 > case.setup && !h.1),
        "the QP sends again once set up"
    );
    // A header was issued with its payload read, and with its send record
    // unless of an earlier life; a record dropped in hand has none of the
    // three.
    let hdr_psns: Vec<u64> = o.hdrs.iter().map(|h| h.0).collect();
    assert_eq!(o.reads, hdr_psns, "one payload read per header, in order");
    let mut sent = o.sent.clone();
    sent.sort();
    let mut recorded: Vec<u64> = o.hdrs.iter().filter(|h| !stale(h)).map(|h| h.0).collect();
    recorded.sort();
    assert_eq!(sent, recorded, "one send record per header, none for an earlier life's");
    // A record of the earlier life still in the sequencer's hand at the
    // row is dropped there: no payload read for it after the row.
    for &(psn, at) in &o.reads_at {
        assert!(
            !(of_err_qp(psn) && at > case.setup && taken_at(psn) <= case.setup),
            "PSN {psn:#x} of the earlier life read at cycle {at}, after the row"
        );
    }
    let in_hand: Vec<u64> = o.taken.iter().map(|t| t.0).filter(|p| !hdr_psns.contains(p)).collect();
    assert!(
        in_hand.iter().all(|&p| of_err_qp(p)),
        "only records of the QP in error dropped in hand: {in_hand:x?}"
    );
    assert!(
        o.taken
            .iter()
            .filter(|t| !of_err_qp(t.0))
            .all(|t| hdr_psns.contains(&t.0)),
        "every record of the other QP sent"
    );
    assert_eq!(
        o.flushed,
        in_hand.len() as u64,
        "one cnt_flushed per packet dropped in hand (the builder counts the others)"
    );
    o
}
