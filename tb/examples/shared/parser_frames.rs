//! The RX-parser benchmark's frames, shared by `parser_bench` and
//! `binding_bench` so both stream exactly the same bytes.

use bytes::Bytes;
use proto::wire::*;
use proto::Psn;
use tb::rng::Rng;

/// Frame `i` of the benchmark: a WRITE-ONLY of 0..=1031 payload bytes
/// (five size classes) on one of 64 EVs.
pub fn frame(i: usize, rng: &mut Rng) -> Vec<u8> {
    let payload_len = [0usize, 16, 64, 200, 1024][i % 5] + rng.below(8) as usize;
    let payload: Vec<u8> = (0..payload_len).map(|k| (k * 13 + i) as u8).collect();
    let pad = ((4 - payload_len % 4) % 4) as u8;
    let p = RocePacket {
        ev: 0x1000 + (i as u32 % 64),
        ecn_ce: false,
        trimmed: false,
        bth: BthRepr {
            opcode: Opcode::WriteOnly,
            solicited: false,
            mig_req: true,
            pad,
            pkey: 0xFFFF,
            fecn: false,
            becn: false,
            dest_qp: 0x11,
            ack_req: true,
            mrc_ext: false,
            psn: Psn::new(i as u32),
        },
        reth: Some(RethRepr { va: 0x1000 * i as u64, rkey: 7, dma_len: payload_len as u32 }),
        imm: None,
        aeth: None,
        ext: None,
        payload: Bytes::from(payload),
    };
    let mut v = Vec::new();
    emit_frame(&p, &Encap::test_v4(), &mut v);
    v
}
