//! Throughput of the golden model.
//!
//! * `mrc_qp/direct_4k`: a requester and a responder MRC QP, loss-free,
//!   4 KiB packets handed directly from one to the other (no harness):
//!   segmentation, spraying, placement, SACK generation and processing,
//!   completions. Elements = data packets. `rc_qp/direct_4k`: the same
//!   traffic through the RoCEv2 RC baseline (its DCQCN pacing off: a fixed
//!   window), so the two models' costs compare in one run.
//! * `loopback/loss_free`: the same through the scenario harness (event
//!   queue, links with per-EV delay and line rate, verification of the
//!   written data), 64 KiB messages; `loopback/loss_free_256b` the same with
//!   256-byte messages and MTU. Elements = packets in both directions.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use proto::loopback::Scenario;
use proto::model::cc::CcConfig;
use proto::model::*;
use proto::test_support::ready;
use proto::time::{Duration, Instant};

const MTU: u32 = 4096;
const MSG: usize = 64 * 1024;
const MSGS_PER_ITER: usize = 16;
const VA: u64 = 0x1000_0000;
const RKEY: u32 = 9;
const QPN_A: u32 = 0x11;
const QPN_B: u32 = 0x12;

fn qp(transport: Transport, qpn: u32, peer: u32) -> Qp {
    let mut s = QpSetup::new(transport, qpn, peer);
    s.cfg.mtu = MTU;
    s.rtr.mpr_units = 255;
    s.rts.send_mpr_units = 255;
    s.rts.cc = CcConfig::Fixed { window: 1 << 30 };
    let mut q: Qp = ready(&s);
    q.memory_mut().register(VA, MSG as u64, RKEY).unwrap();
    q
}

/// Transfer `MSGS_PER_ITER` messages; returns data packets moved.
fn transfer(a: &mut Qp, b: &mut Qp, now: &mut Instant, data: &Bytes) -> u64 {
    let before = a.counters().tx_data_packets;
    for i in 0..MSGS_PER_ITER {
        a.post_write(
            *now,
            WriteRequest {
                wr_id: i as u64,
                data: data.clone(),
                remote_va: VA,
                rkey: RKEY,
                imm: None,
            },
        )
        .unwrap();
    }
    let mut done = 0;
    while done < MSGS_PER_ITER {
        let mut moved = false;
        while let Some(p) = a.poll_transmit(*now) {
            let _ = b.handle_packet(*now, p);
            moved = true;
        }
        while let Some(p) = b.poll_transmit(*now) {
            let _ = a.handle_packet(*now, p);
            moved = true;
        }
        while let Some(e) = a.poll_event() {
            if matches!(e, Event::SendCompleted(_)) {
                done += 1;
            }
        }
        if !moved {
            if let Some(t) = b.poll_timeout() {
                *now = (*now).max(t);
                b.handle_timeout(*now);
            }
        }
        *now += Duration::from_ns(1);
    }
    a.counters().tx_data_packets - before
}

fn bench_direct(c: &mut Criterion) {
    // MRC and the RC baseline side by side, same traffic, same API.
    for (group, transport) in [("mrc_qp", Transport::Mrc), ("rc_qp", Transport::Rc)] {
        // Not QPN 0x2: MRC 1.0 reserves it for endpoint operations.
        let mut a = qp(transport, QPN_A, QPN_B);
        let mut b = qp(transport, QPN_B, QPN_A);
        let data = Bytes::from(vec![0x5Au8; MSG]);
        let mut now = Instant::ZERO;
        let pkts = transfer(&mut a, &mut b, &mut now, &data);
        let mut g = c.benchmark_group(group);
        g.throughput(Throughput::Elements(pkts));
        g.bench_function("direct_4k", |bch| {
            bch.iter(|| transfer(&mut a, &mut b, &mut now, &data))
        });
        g.finish();
    }
}

fn bench_loopback(c: &mut Criterion) {
    let sc = Scenario::new(Transport::Mrc, 8, Scenario::messages(64, MSG as u32, 4));
    let r = sc.run();
    assert!(r.ok);
    let mut g = c.benchmark_group("loopback");
    g.throughput(Throughput::Elements(r.packets));
    g.bench_function("loss_free", |bch| bch.iter(|| sc.run().packets));
    // Small packets: the harness's own per-packet cost (event queue, links,
    // both QPs) rather than data generation and copying.
    let mut sc = Scenario::new(Transport::Mrc, 8, Scenario::messages(4096, 256, 0));
    sc.a.cfg.mtu = 256;
    sc.b.cfg.mtu = 256;
    let r = sc.run();
    assert!(r.ok);
    g.throughput(Throughput::Elements(r.packets));
    g.bench_function("loss_free_256b", |bch| bch.iter(|| sc.run().packets));
    g.finish();
}

criterion_group!(benches, bench_direct, bench_loopback);
criterion_main!(benches);
