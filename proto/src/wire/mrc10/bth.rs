//! The BTH of MRC 1.0: the IBTA layout (12 bytes) with MRC 1.0's opcodes
//! and its flags in byte 8 (grade S).
//!
//! | byte | bits | field | grade |
//! |------|------|-------|-------|
//! | 0    | 7-0  | OpCode (0xC6-0xDE, [`Opcode`]) | S |
//! | 1    | 7 SE, 6 M (MigReq), 5-4 PadCnt, 3-0 TVer (0) | IBTA | S |
//! | 2-3  | P_Key | IBTA | S |
//! | 4    | 7 FECN, 6 BECN, 5-0 reserved (masked in the ICRC) | IBTA | S |
//! | 5-7  | DestQP (24 bits; [`super::choices::ENDPOINT_QPN`] for endpoint operations) | | S |
//! | 8    | 7 AckReq, 6 reserved, 5 retransmission, 4 TS (a TSETH follows), 3-0 reserved | | S |
//! | 9-11 | PSN (24 bits) | | S |
//!
//! Reserved bits are sent as 0 and ignored on receive (ours, U).

use super::Opcode;
use crate::wire::field::{get_u16, get_u24, get_u8, set_bytes, set_u16, set_u24, set_u8};
use crate::wire::{Layer, WireError};
use crate::Psn;

mod field {
    pub const OPCODE: usize = 0;
    /// SE, M, PadCnt, TVer.
    pub const FLAGS1: usize = 1;
    pub const PKEY: usize = 2;
    /// FECN, BECN, reserved.
    pub const RESV8A: usize = 4;
    pub const DEST_QP: usize = 5;
    /// AckReq, retransmission, TS.
    pub const FLAGS8: usize = 8;
    pub const PSN: usize = 9;
}

pub const HEADER_LEN: usize = 12;
/// Byte 1 bit 7.
pub const SOLICITED: u8 = 0x80;
/// Byte 1 bit 6.
pub const MIG_REQ: u8 = 0x40;
/// Byte 1 bits 5-4.
const PAD_SHIFT: u32 = 4;
const PAD_MASK: u8 = 0b11;
/// Byte 1 bits 3-0.
const TVER_MASK: u8 = 0x0F;
/// Byte 4 bit 7.
pub const FECN: u8 = 0x80;
/// Byte 4 bit 6.
pub const BECN: u8 = 0x40;
/// Byte 8 bit 7.
pub const ACK_REQ: u8 = 0x80;
/// Byte 8 bit 5.
pub const RETRANSMIT: u8 = 0x20;
/// Byte 8 bit 4.
pub const TIMESTAMP: u8 = 0x10;
/// The only transport header version defined.
pub const TVER: u8 = 0;

fixed_header_view!(
    /// Zero-copy view of an MRC 1.0 BTH.
    BthPacket,
    HEADER_LEN,
    Layer::Bth
);

impl<T: AsRef<[u8]>> BthPacket<T> {
    pub fn opcode_raw(&self) -> u8 {
        get_u8(self.bytes(), field::OPCODE)
    }
    pub fn solicited(&self) -> bool {
        get_u8(self.bytes(), field::FLAGS1) & SOLICITED != 0
    }
    pub fn mig_req(&self) -> bool {
        get_u8(self.bytes(), field::FLAGS1) & MIG_REQ != 0
    }
    pub fn pad(&self) -> u8 {
        (get_u8(self.bytes(), field::FLAGS1) >> PAD_SHIFT) & PAD_MASK
    }
    pub fn tver(&self) -> u8 {
        get_u8(self.bytes(), field::FLAGS1) & TVER_MASK
    }
    pub fn pkey(&self) -> u16 {
        get_u16(self.bytes(), field::PKEY)
    }
    pub fn fecn(&self) -> bool {
        get_u8(self.bytes(), field::RESV8A) & FECN != 0
    }
    pub fn becn(&self) -> bool {
        get_u8(self.bytes(), field::RESV8A) & BECN != 0
    }
    pub fn dest_qp(&self) -> u32 {
        get_u24(self.bytes(), field::DEST_QP)
    }
    pub fn ack_req(&self) -> bool {
        get_u8(self.bytes(), field::FLAGS8) & ACK_REQ != 0
    }
    pub fn retransmit(&self) -> bool {
        get_u8(self.bytes(), field::FLAGS8) & RETRANSMIT != 0
    }
    pub fn timestamp(&self) -> bool {
        get_u8(self.bytes(), field::FLAGS8) & TIMESTAMP != 0
    }
    pub fn psn(&self) -> Psn {
        Psn::new(get_u24(self.bytes(), field::PSN))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> BthPacket<T> {
    pub fn set_opcode_raw(&mut self, v: u8) {
        set_u8(self.bytes_mut(), field::OPCODE, v);
    }
    /// Byte 1 in one write.
    pub fn set_flags1(&mut self, solicited: bool, mig_req: bool, pad: u8, tver: u8) {
        let v = if solicited { SOLICITED } else { 0 }
            | if mig_req { MIG_REQ } else { 0 }
            | ((pad & PAD_MASK) << PAD_SHIFT)
            | (tver & TVER_MASK);
        set_u8(self.bytes_mut(), field::FLAGS1, v);
    }
    pub fn set_pkey(&mut self, v: u16) {
        set_u16(self.bytes_mut(), field::PKEY, v);
    }
    /// Byte 4: FECN, BECN, reserved bits zero.
    pub fn set_fecn_becn(&mut self, fecn: bool, becn: bool) {
        let v = if fecn { FECN } else { 0 } | if becn { BECN } else { 0 };
        set_u8(self.bytes_mut(), field::RESV8A, v);
    }
    pub fn set_dest_qp(&mut self, v: u32) {
        set_u24(self.bytes_mut(), field::DEST_QP, v & 0xFF_FFFF);
    }
    /// Byte 8: AckReq, retransmission, TS; reserved bits zero.
    pub fn set_flags8(&mut self, ack_req: bool, retransmit: bool, timestamp: bool) {
        let v = if ack_req { ACK_REQ } else { 0 }
            | if retransmit { RETRANSMIT } else { 0 }
            | if timestamp { TIMESTAMP } else { 0 };
        set_u8(self.bytes_mut(), field::FLAGS8, v);
    }
    pub fn set_psn(&mut self, psn: Psn) {
        set_u24(self.bytes_mut(), field::PSN, psn.value());
    }
}

/// Owned MRC 1.0 BTH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BthRepr {
    pub opcode: Opcode,
    /// Solicited event.
    pub solicited: bool,
    /// MigReq (set by RoCEv2 NICs).
    pub mig_req: bool,
    /// Pad count: bytes before the ICRC that make the payload a 4-byte
    /// multiple.
    pub pad: u8,
    /// Partition key.
    pub pkey: u16,
    pub fecn: bool,
    pub becn: bool,
    /// Destination QP number (24 bits).
    pub dest_qp: u32,
    /// Acknowledge request.
    pub ack_req: bool,
    /// A retransmission of an earlier PSN.
    pub retransmit: bool,
    /// A TSETH follows (data packets).
    pub timestamp: bool,
    pub psn: Psn,
}

impl BthRepr {
    /// Parse: an MRC 1.0 opcode and TVer 0; reserved bits ignored.
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(p: &BthPacket<T>) -> Result<Self, WireError> {
        // One length check, then the `field` offsets into a fixed array (the
        // accessors' reads without their per-field bounds checks).
        let Some(h) = p.bytes().first_chunk::<HEADER_LEN>() else {
            return Err(WireError::Truncated { layer: Layer::Bth });
        };
        let raw = h[field::OPCODE];
        let opcode = Opcode::from_u8(raw).ok_or(WireError::UnknownOpcode(raw))?;
        let flags1 = h[field::FLAGS1];
        if flags1 & TVER_MASK != TVER {
            return Err(WireError::BadTransportVersion(flags1 & TVER_MASK));
        }
        let resv8a = h[field::RESV8A];
        let flags8 = h[field::FLAGS8];
        let qp = field::DEST_QP;
        let psn = field::PSN;
        Ok(BthRepr {
            opcode,
            solicited: flags1 & SOLICITED != 0,
            mig_req: flags1 & MIG_REQ != 0,
            pad: (flags1 >> PAD_SHIFT) & PAD_MASK,
            pkey: u16::from_be_bytes([h[field::PKEY], h[field::PKEY + 1]]),
            fecn: resv8a & FECN != 0,
            becn: resv8a & BECN != 0,
            dest_qp: u32::from_be_bytes([0, h[qp], h[qp + 1], h[qp + 2]]),
            ack_req: flags8 & ACK_REQ != 0,
            retransmit: flags8 & RETRANSMIT != 0,
            timestamp: flags8 & TIMESTAMP != 0,
            psn: Psn::new(u32::from_be_bytes([0, h[psn], h[psn + 1], h[psn + 2]])),
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    /// Emit; `pad` is cut to 2 bits and `dest_qp` to 24.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut BthPacket<T>) {
        // Reserved bits are zero because every byte is written whole.
        set_bytes(p.bytes_mut(), 0, &[0; HEADER_LEN]);
        p.set_opcode_raw(self.opcode.as_u8());
        p.set_flags1(self.solicited, self.mig_req, self.pad, TVER);
        p.set_pkey(self.pkey);
        p.set_fecn_becn(self.fecn, self.becn);
        p.set_dest_qp(self.dest_qp);
        p.set_flags8(self.ack_req, self.retransmit, self.timestamp);
        p.set_psn(self.psn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let r = BthRepr {
            opcode: Opcode::WriteOnlyImm,
            solicited: true,
            mig_req: true,
            pad: 3,
            pkey: 0xFFFF,
            fecn: false,
            becn: true,
            dest_qp: 0x12_3456,
            ack_req: true,
            retransmit: true,
            timestamp: true,
            psn: Psn::new(0xFF_FFFE),
        };
        let mut b = [0u8; HEADER_LEN];
        r.emit(&mut BthPacket::new_unchecked(&mut b[..]));
        assert_eq!(
            b,
            [0xCB, 0xF0, 0xFF, 0xFF, 0x40, 0x12, 0x34, 0x56, 0xB0, 0xFF, 0xFF, 0xFE]
        );
        assert_eq!(BthRepr::parse(&BthPacket::new_checked(&b[..]).unwrap()), Ok(r));
        // Reserved bits of byte 8 are ignored.
        b[8] |= 0x4F;
        assert_eq!(BthRepr::parse(&BthPacket::new_unchecked(&b[..])), Ok(r));
        assert_eq!(
            BthPacket::new_checked(&b[..11]).err(),
            Some(WireError::Truncated { layer: Layer::Bth })
        );
    }

    #[test]
    fn rejects_legacy_opcodes_and_tver() {
        let mut b = [0u8; HEADER_LEN];
        b[0] = 0x0A; // RC WRITE Only: the legacy profile's, not MRC 1.0's
        assert_eq!(
            BthRepr::parse(&BthPacket::new_unchecked(&b[..])),
            Err(WireError::UnknownOpcode(0x0A))
        );
        b[0] = 0xCA;
        b[1] = 1;
        assert_eq!(
            BthRepr::parse(&BthPacket::new_unchecked(&b[..])),
            Err(WireError::BadTransportVersion(1))
        );
    }
}
