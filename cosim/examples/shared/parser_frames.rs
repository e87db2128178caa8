//! The RX-parser benchmark's frames, shared by `parser_bench` and
//! `binding_bench` so both stream exactly the same bytes.

use proto::wire::*;
use proto::Psn;
use tb::rng::Rng;

/// Frame `i` of the benchmark: a WRITE-ONLY of 0..=1031 payload bytes
/// (five size classes) on one of 64 EVs.
pub fn frame(i: usize, rng: &mut Rng) -> Vec<u8> {
    let payload_len = [0usize, 16, 64, 200, 1024][i % 5] + rng.below(8) as usize;
    let payload: Vec<u8> = (0..payload_len).map(|k| (k * 13 + i) as u8).collect();
    let p = RocePacket::write(Opcode::WriteOnly, 0x11, Psn::new(i as u32), payload)
        .on_ev(0x1000 + (i as u32 % 64))
        .with_ack_req(true)
        .with_reth(0x1000 * i as u64, 7);
    p.to_frame(&Encap::test_v4()).expect("a valid WRITE ONLY")
}
