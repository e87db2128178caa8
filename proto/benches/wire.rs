//! Wire-format throughput.
//!
//! (a) `headers/*`: header-only emit and parse of a 4 KiB-payload MRC WRITE
//!     MIDDLE (BTH + data extension with placement) over IPv4: the target is
//!     >= 20 M packets/s on one core, i.e. <= 50 ns for emit + parse.
//! (b) `frame/*`: whole-frame emit and parse including the payload copy (on
//!     emit) and the ICRC over the 4 KiB payload.
//! (c) `mrc10_headers/*`: (a) for MRC 1.0: a 4 KiB-payload WRITE_MIDDLE with
//!     METH, TSETH and RETH over IPv4, and a SACK (SETH + CC_STATE); same
//!     target.
//!
//! Run: cargo bench -j2 -p proto --bench wire -- --warm-up-time 1 --measurement-time 3

use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use proto::wire::mrc10::{self, catalog, Profile};
use proto::wire::*;
use proto::Psn;

fn packet() -> RocePacket {
    RocePacket::write(Opcode::WriteMiddle, 0x1234, Psn::new(77), vec![0x5Au8; 4096])
        .on_ev(0xC123)
        .with_data_ext(DataExtRepr {
            ev_index: 3,
            retransmit: false,
            ev_seq: 9,
            tx_ts: 1000,
            msg_offset: 8192,
            placement: Some(PlacementRepr {
                va: 0x7f00_0000_2000,
                rkey: 0xabcd,
            }),
        })
}

fn bench(c: &mut Criterion) {
    let pkt = packet();
    let encap = Encap::test_v4();
    let mut frame = Vec::new();
    emit_frame(&pkt, &encap, &mut frame);
    let frame_bytes = Bytes::from(frame.clone());
    // Measure the success path only.
    assert_eq!(parse_frame(&frame).expect("valid frame").0, pkt);
    let mut check = frame.clone();
    emit_headers(&pkt, &encap, &mut check);
    assert!(parse_frame_headers(&check).is_ok());

    let mut g = c.benchmark_group("headers");
    g.throughput(Throughput::Elements(1));
    let mut buf = frame.clone();
    g.bench_function("emit", |b| {
        b.iter(|| black_box(emit_headers(black_box(&pkt), &encap, &mut buf)))
    });
    g.bench_function("parse", |b| {
        b.iter(|| black_box(parse_frame_headers(black_box(&frame)).is_ok()))
    });
    let mut parsed = ParsedHeaders::new();
    g.bench_function("parse_into", |b| {
        b.iter(|| black_box(parse_frame_headers_into(black_box(&frame), &mut parsed).is_ok()))
    });
    g.bench_function("emit+parse", |b| {
        b.iter(|| {
            let n = emit_headers(black_box(&pkt), &encap, &mut buf);
            black_box(n);
            black_box(parse_frame_headers(black_box(&buf)).is_ok())
        })
    });
    g.bench_function("emit+parse_into", |b| {
        b.iter(|| {
            let n = emit_headers(black_box(&pkt), &encap, &mut buf);
            black_box(n);
            black_box(parse_frame_headers_into(black_box(&buf), &mut parsed).is_ok())
        })
    });
    assert!(parse_frame_headers_into(&buf, &mut parsed).is_ok());
    assert_eq!(parsed.packet.bth, pkt.bth);
    g.finish();

    let mut g = c.benchmark_group("frame");
    g.throughput(Throughput::Bytes(frame.len() as u64));
    let mut out = Vec::with_capacity(frame.len());
    g.bench_function("emit", |b| {
        b.iter(|| {
            out.clear();
            emit_frame(black_box(&pkt), &encap, &mut out);
            black_box(out.len())
        })
    });
    g.bench_function("parse_bytes", |b| {
        b.iter(|| black_box(parse_frame_bytes(black_box(frame_bytes.clone())).is_ok()))
    });
    g.bench_function("parse_copy", |b| {
        b.iter(|| black_box(parse_frame(black_box(&frame)).is_ok()))
    });
    g.bench_function("emit+parse_bytes", |b| {
        b.iter(|| {
            let mut v = Vec::with_capacity(frame.len());
            emit_frame(black_box(&pkt), &encap, &mut v);
            black_box(parse_frame_bytes(Bytes::from(v)).is_ok())
        })
    });
    g.finish();
}

fn bench_mrc10(c: &mut Criterion) {
    let profile = Profile::DEFAULT;
    let encap = Encap::test_v4();
    let mut data = catalog::write(mrc10::Opcode::WriteMiddle, 77, 4096, true);
    data.ev &= 0xFFFF;
    let mut sack = catalog::sack(77, false);
    sack.ev &= 0xFFFF;
    let mut g = c.benchmark_group("mrc10_headers");
    g.throughput(Throughput::Elements(1));
    for (name, pkt) in [("write", &data), ("sack", &sack)] {
        let mut frame = Vec::new();
        mrc10::emit_frame(pkt, &encap, &profile, &mut frame);
        // Measure the success path only.
        assert_eq!(&mrc10::parse_frame(&frame, &profile).expect("valid frame").0, pkt);
        let mut buf = frame.clone();
        g.bench_function(format!("{name}/emit"), |b| {
            b.iter(|| black_box(mrc10::emit_headers(black_box(pkt), &encap, &profile, &mut buf)))
        });
        g.bench_function(format!("{name}/parse"), |b| {
            b.iter(|| black_box(mrc10::parse_frame_headers(black_box(&frame), &profile).is_ok()))
        });
        let mut parsed = mrc10::ParsedFrame::new();
        g.bench_function(format!("{name}/parse_into"), |b| {
            b.iter(|| black_box(mrc10::parse_frame_headers_into(black_box(&frame), &profile, &mut parsed).is_ok()))
        });
        g.bench_function(format!("{name}/emit+parse"), |b| {
            b.iter(|| {
                let n = mrc10::emit_headers(black_box(pkt), &encap, &profile, &mut buf);
                black_box(n);
                black_box(mrc10::parse_frame_headers(black_box(&buf), &profile).is_ok())
            })
        });
        g.bench_function(format!("{name}/emit+parse_into"), |b| {
            b.iter(|| {
                let n = mrc10::emit_headers(black_box(pkt), &encap, &profile, &mut buf);
                black_box(n);
                black_box(mrc10::parse_frame_headers_into(black_box(&buf), &profile, &mut parsed).is_ok())
            })
        });
        assert!(mrc10::parse_frame_headers_into(&buf, &profile, &mut parsed).is_ok());
        assert_eq!(parsed.packet.headers, pkt.headers);
    }
    g.finish();
}

criterion_group!(benches, bench, bench_mrc10);
criterion_main!(benches);
