//! Runs one header path N times, for counting instructions under valgrind:
//! a figure the shared, noisy benchmark machines cannot disturb, used to
//! compare the MRC 1.0 and legacy-profile header paths (`docs/benchmarks.md`).
//!
//!     cargo build --release -p proto --example header_instructions
//!     valgrind --tool=lackey --basic-counts=yes \
//!         target/release/examples/header_instructions PATH 100000
//!
//! PATH: `mrc10-parse`, `mrc10-emit`, `legacy-parse`, `legacy-emit` or
//! `none` (setup only); instructions per packet = (count(PATH) -
//! count(none)) / N. The packets are those of `benches/wire.rs`.

use std::hint::black_box;
use std::process::ExitCode;

use proto::wire::mrc10::{self, catalog, Profile};
use proto::wire::*;
use proto::Psn;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(Ok(n))) = (args.get(1), args.get(2).map(|s| s.parse::<usize>())) else {
        eprintln!("usage: header_instructions mrc10-parse|mrc10-emit|legacy-parse|legacy-emit|none N");
        return ExitCode::from(2);
    };
    let profile = Profile::DEFAULT;
    let encap = Encap::test_v4();
    let mut mrc10_pkt = catalog::write(mrc10::Opcode::WriteMiddle, 77, 4096, true);
    mrc10_pkt.ev &= 0xFFFF;
    let mut mrc10_frame = Vec::new();
    mrc10::emit_frame(&mrc10_pkt, &encap, &profile, &mut mrc10_frame);
    let legacy_pkt = RocePacket::write(Opcode::WriteMiddle, 0x1234, Psn::new(77), vec![0x5Au8; 4096])
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
        });
    let mut legacy_frame = Vec::new();
    emit_frame(&legacy_pkt, &encap, &mut legacy_frame);
    let mut mrc10_out = mrc10::ParsedFrame::new();
    let mut legacy_out = ParsedHeaders::new();
    let mut sum = 0usize;
    for _ in 0..n {
        sum += match path.as_str() {
            "mrc10-parse" => {
                usize::from(mrc10::parse_frame_headers_into(black_box(&mrc10_frame), &profile, &mut mrc10_out).is_ok())
            }
            "legacy-parse" => usize::from(parse_frame_headers_into(black_box(&legacy_frame), &mut legacy_out).is_ok()),
            "mrc10-emit" => mrc10::emit_headers(black_box(&mrc10_pkt), &encap, &profile, &mut mrc10_frame),
            "legacy-emit" => emit_headers(black_box(&legacy_pkt), &encap, &mut legacy_frame),
            _ => 0,
        };
    }
    println!("{sum}");
    ExitCode::SUCCESS
}
