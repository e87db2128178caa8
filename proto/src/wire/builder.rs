//! A short way to build WRITE data packets and their frames, for test
//! benches, hardware tests and benchmarks that need a valid frame of some
//! shape without spelling out every BTH field.
//!
//! ```
//! use proto::wire::{DataExtRepr, Encap, Opcode, PlacementRepr, RocePacket};
//! use proto::Psn;
//!
//! let pkt = RocePacket::write(Opcode::WriteMiddle, 0x33, Psn::new(7), vec![0xAB; 100])
//!     .on_ev(0x1001)
//!     .with_ack_req(true)
//!     .with_data_ext(DataExtRepr {
//!         ev_index: 1,
//!         retransmit: false,
//!         ev_seq: 2,
//!         tx_ts: 3,
//!         msg_offset: 4096,
//!         placement: Some(PlacementRepr { va: 0x8000, rkey: 9 }),
//!     });
//! let frame = pkt.to_frame(&Encap::test_v4()).expect("a valid packet");
//! assert_eq!(proto::wire::parse_frame(&frame).unwrap().0, pkt);
//! ```

use bytes::Bytes;

use super::{emit_frame, pad_for, BthRepr, DataExtRepr, Encap, MrcExtRepr, Opcode, ReprError, RethRepr, RocePacket};
use crate::Psn;

impl RocePacket {
    /// A WRITE-family packet (`opcode` any WRITE opcode) of `payload` to
    /// `dest_qp` at `psn`, with the fields a RoCEv2 sender sets by default:
    /// MigReq set, default partition 0xFFFF, PadCnt from the payload
    /// length, no ECN, no AckReq, EV 0, no MRC extension. Opcodes that
    /// carry a RETH get one to VA 0, rkey 0 with the payload length as DMA
    /// length, opcodes that carry ImmDt get immediate 0; the `with_*`
    /// methods change those. Other opcodes give a packet that
    /// [`RocePacket::validate`] refuses.
    pub fn write(opcode: Opcode, dest_qp: u32, psn: Psn, payload: impl Into<Bytes>) -> RocePacket {
        let payload: Bytes = payload.into();
        RocePacket {
            ev: 0,
            ecn_ce: false,
            trimmed: false,
            bth: BthRepr {
                opcode,
                solicited: false,
                mig_req: true,
                pad: pad_for(payload.len()),
                pkey: 0xFFFF,
                fecn: false,
                becn: false,
                mrc_ext: false,
                dest_qp,
                ack_req: false,
                psn,
            },
            reth: opcode.has_reth().then_some(RethRepr {
                va: 0,
                rkey: 0,
                dma_len: payload.len() as u32,
            }),
            imm: opcode.has_imm().then_some(0),
            aeth: None,
            ext: None,
            payload,
        }
    }

    /// The same packet on entropy value `ev`.
    pub fn on_ev(mut self, ev: u32) -> RocePacket {
        self.ev = ev;
        self
    }

    /// The same packet with the BTH AckReq bit `ack_req`.
    pub fn with_ack_req(mut self, ack_req: bool) -> RocePacket {
        self.bth.ack_req = ack_req;
        self
    }

    /// The same packet with its RETH (if its opcode carries one) targeting
    /// `va` with `rkey`; the DMA length stays as it was. Opcodes without a
    /// RETH are left alone, so one chain serves every WRITE opcode.
    pub fn with_reth(mut self, va: u64, rkey: u32) -> RocePacket {
        if let Some(r) = &mut self.reth {
            r.va = va;
            r.rkey = rkey;
        }
        self
    }

    /// The same packet with immediate `imm`, if its opcode carries ImmDt
    /// (left alone otherwise, as [`RocePacket::with_reth`]).
    pub fn with_imm(mut self, imm: u32) -> RocePacket {
        if self.imm.is_some() {
            self.imm = Some(imm);
        }
        self
    }

    /// The same packet as an MRC packet: the X bit set and the data
    /// extension `ext` (whose placement must be present exactly when the
    /// opcode has no RETH, as [`RocePacket::validate`] checks).
    pub fn with_data_ext(mut self, ext: DataExtRepr) -> RocePacket {
        self.bth.mrc_ext = true;
        self.ext = Some(MrcExtRepr::Data(ext));
        self
    }

    /// The Ethernet frame of this packet in `encap` (as [`emit_frame`]),
    /// after checking it with [`RocePacket::validate`]: an invalid packet
    /// is refused rather than emitted as a frame the parser would not give
    /// back as this packet.
    pub fn to_frame(&self, encap: &Encap) -> Result<Vec<u8>, ReprError> {
        self.validate()?;
        let mut frame = Vec::new();
        emit_frame(self, encap, &mut frame);
        Ok(frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{parse_frame, PlacementRepr};

    #[test]
    fn every_write_opcode_builds_a_frame_that_parses_back() {
        for (i, op) in Opcode::WRITES.into_iter().enumerate() {
            for len in [0usize, 1, 2, 3, 4, 1023] {
                let plain = RocePacket::write(op, 0x12_3456, Psn::new(0xFF_FFFF), vec![i as u8; len])
                    .on_ev(0x0000_BEEF)
                    .with_reth(0x7F00_0000_1000, 5)
                    .with_imm(0x5555_AAAA);
                assert_eq!(plain.bth.pad, pad_for(len));
                assert_eq!(
                    plain.reth.map(|r| (r.va, r.rkey, r.dma_len)),
                    op.has_reth().then_some((0x7F00_0000_1000, 5, len as u32))
                );
                assert_eq!(plain.imm, op.has_imm().then_some(0x5555_AAAA));
                let placement = (!op.has_reth()).then_some(PlacementRepr { va: 0x4000, rkey: 9 });
                let ext = DataExtRepr {
                    ev_index: 3,
                    retransmit: true,
                    ev_seq: 9,
                    tx_ts: 1000,
                    msg_offset: 64,
                    placement,
                };
                let mrc = plain.clone().with_data_ext(ext).with_ack_req(true);
                for pkt in [plain, mrc] {
                    for encap in [Encap::test_v4(), Encap::test_v6()] {
                        let frame = pkt.to_frame(&encap).expect("valid");
                        assert_eq!(parse_frame(&frame).expect("parses"), (pkt.clone(), encap));
                    }
                }
            }
        }
    }

    #[test]
    fn an_invalid_packet_is_refused_not_emitted() {
        // An ACK opcode needs an AETH, which the WRITE builder never adds.
        let ack = RocePacket::write(Opcode::Ack, 1, Psn::new(0), Bytes::new());
        assert!(matches!(
            ack.to_frame(&Encap::test_v4()),
            Err(ReprError::HeadersDontFitOpcode { .. })
        ));
        // A data extension without the placement a WRITE MIDDLE needs.
        let ext = DataExtRepr {
            ev_index: 0,
            retransmit: false,
            ev_seq: 0,
            tx_ts: 0,
            msg_offset: 0,
            placement: None,
        };
        let middle = RocePacket::write(Opcode::WriteMiddle, 1, Psn::new(0), vec![1u8; 8]).with_data_ext(ext);
        assert!(matches!(
            middle.to_frame(&Encap::test_v4()),
            Err(ReprError::ExtDoesntFit { .. })
        ));
        // A QP number wider than 24 bits.
        let wide = RocePacket::write(Opcode::WriteOnly, 1 << 24, Psn::new(0), vec![1u8; 8]);
        assert!(matches!(
            wide.to_frame(&Encap::test_v4()),
            Err(ReprError::FieldTooWide { .. })
        ));
    }
}
