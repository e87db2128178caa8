//! InfiniBand Base Transport Header (IBTA vol. 1 §9.2), 12 bytes.
//!
//! | byte | bits | field |
//! |------|------|-------|
//! | 0    | 7-0  | OpCode |
//! | 1    | 7 SE, 6 M (MigReq), 5-4 PadCnt, 3-0 TVer (0) | |
//! | 2-3  | P_Key | |
//! | 4    | 7 FECN, 6 BECN, 5-0 reserved (resv6); the whole byte is "resv8a", masked in the ICRC | |
//! | 5-7  | DestQP (24 bits) | |
//! | 8    | 7 AckReq, 6 **X (MRC extension present)**, 5-0 reserved (0) | |
//! | 9-11 | PSN (24 bits) | |

use super::field::*;
use super::{BthRepr, Layer, Opcode, WireError};
use crate::Psn;

pub const HEADER_LEN: usize = 12;
/// Byte 8 bit 7.
pub const ACK_REQ_BIT: u8 = 0x80;
/// Byte 8 bit 6: the most significant of the seven reserved bits, claimed by
/// MRC to mark the extension header.
pub const MRC_EXT_BIT: u8 = 0x40;
/// The only transport header version defined.
pub const TVER: u8 = 0;

/// Zero-copy view of a BTH (and whatever follows it).
#[derive(Debug, Clone)]
pub struct BthPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> BthPacket<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        BthPacket { buffer }
    }
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    #[inline]
    pub fn check_len(&self) -> Result<(), WireError> {
        need(self.buffer.as_ref(), HEADER_LEN, Layer::Bth)
    }
    pub fn into_inner(self) -> T {
        self.buffer
    }
    fn b(&self, i: usize) -> u8 {
        get_u8(self.buffer.as_ref(), i)
    }
    pub fn opcode_raw(&self) -> u8 {
        self.b(0)
    }
    pub fn solicited(&self) -> bool {
        self.b(1) & 0x80 != 0
    }
    pub fn mig_req(&self) -> bool {
        self.b(1) & 0x40 != 0
    }
    pub fn pad(&self) -> u8 {
        (self.b(1) >> 4) & 0b11
    }
    pub fn tver(&self) -> u8 {
        self.b(1) & 0x0F
    }
    pub fn pkey(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 2)
    }
    pub fn fecn(&self) -> bool {
        self.b(4) & 0x80 != 0
    }
    pub fn becn(&self) -> bool {
        self.b(4) & 0x40 != 0
    }
    pub fn dest_qp(&self) -> u32 {
        get_u24(self.buffer.as_ref(), 5)
    }
    pub fn ack_req(&self) -> bool {
        self.b(8) & ACK_REQ_BIT != 0
    }
    pub fn mrc_ext(&self) -> bool {
        self.b(8) & MRC_EXT_BIT != 0
    }
    pub fn psn(&self) -> Psn {
        Psn::new(get_u24(self.buffer.as_ref(), 9))
    }
    /// Bytes after the BTH.
    pub fn payload(&self) -> &[u8] {
        self.buffer.as_ref().get(HEADER_LEN..).unwrap_or(&[])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> BthPacket<T> {
    pub fn set_opcode_raw(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), 0, v);
    }
    /// Byte 1 in one write.
    pub fn set_flags1(&mut self, se: bool, m: bool, pad: u8, tver: u8) {
        let v = (u8::from(se) << 7) | (u8::from(m) << 6) | ((pad & 0b11) << 4) | (tver & 0x0F);
        set_u8(self.buffer.as_mut(), 1, v);
    }
    pub fn set_pkey(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 2, v);
    }
    /// Byte 4: FECN, BECN, reserved bits zero.
    pub fn set_fecn_becn(&mut self, fecn: bool, becn: bool) {
        set_u8(self.buffer.as_mut(), 4, (u8::from(fecn) << 7) | (u8::from(becn) << 6));
    }
    pub fn set_dest_qp(&mut self, v: u32) {
        set_u24(self.buffer.as_mut(), 5, v & 0xFF_FFFF);
    }
    /// Byte 8: AckReq, X, reserved bits zero.
    pub fn set_ack_req_x(&mut self, ack_req: bool, x: bool) {
        let v = if ack_req { ACK_REQ_BIT } else { 0 } | if x { MRC_EXT_BIT } else { 0 };
        set_u8(self.buffer.as_mut(), 8, v);
    }
    pub fn set_psn(&mut self, psn: Psn) {
        set_u24(self.buffer.as_mut(), 9, psn.value());
    }
}

impl BthRepr {
    /// Parse a BTH: known opcode and TVer 0. Reserved bits are ignored.
    #[inline(always)]
    pub fn parse<T: AsRef<[u8]>>(p: &BthPacket<T>) -> Result<Self, WireError> {
        // One length check, then fixed offsets into a 12-byte array (the
        // same fields as the view's accessors, without per-field checks).
        let h: &[u8; HEADER_LEN] = match p.buffer.as_ref().first_chunk() {
            Some(h) => h,
            None => return Err(WireError::Truncated { layer: Layer::Bth }),
        };
        let opcode = Opcode::from_u8(h[0]).ok_or(WireError::UnknownOpcode(h[0]))?;
        let tver = h[1] & 0x0F;
        if tver != TVER {
            return Err(WireError::BadTransportVersion(tver));
        }
        Ok(BthRepr {
            opcode,
            solicited: h[1] & 0x80 != 0,
            mig_req: h[1] & 0x40 != 0,
            pad: (h[1] >> 4) & 0b11,
            pkey: u16::from_be_bytes([h[2], h[3]]),
            fecn: h[4] & 0x80 != 0,
            becn: h[4] & 0x40 != 0,
            mrc_ext: h[8] & MRC_EXT_BIT != 0,
            dest_qp: u32::from_be_bytes([0, h[5], h[6], h[7]]),
            ack_req: h[8] & ACK_REQ_BIT != 0,
            psn: Psn::new(u32::from_be_bytes([0, h[9], h[10], h[11]])),
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    /// Emit; `pad` is truncated to 2 bits and `dest_qp` to 24.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut BthPacket<T>) {
        let qp = (self.dest_qp & 0xFF_FFFF).to_be_bytes();
        let psn = self.psn.value().to_be_bytes();
        let pkey = self.pkey.to_be_bytes();
        let h: [u8; HEADER_LEN] = [
            self.opcode.as_u8(),
            (u8::from(self.solicited) << 7) | (u8::from(self.mig_req) << 6) | ((self.pad & 0b11) << 4) | TVER,
            pkey[0],
            pkey[1],
            (u8::from(self.fecn) << 7) | (u8::from(self.becn) << 6),
            qp[1],
            qp[2],
            qp[3],
            if self.ack_req { ACK_REQ_BIT } else { 0 } | if self.mrc_ext { MRC_EXT_BIT } else { 0 },
            psn[1],
            psn[2],
            psn[3],
        ];
        set_bytes(p.buffer.as_mut(), 0, &h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcode_lists_hold_exactly_the_decodable_opcodes() {
        let decodable: Vec<Opcode> = (0..=255u8).filter_map(Opcode::from_u8).collect();
        assert_eq!(decodable, Opcode::ALL, "ALL: every decodable opcode, in byte order");
        let writes: Vec<Opcode> = Opcode::ALL.into_iter().filter(|o| o.is_write()).collect();
        assert_eq!(writes, Opcode::WRITES);
    }

    #[test]
    fn layout_matches_ibta() {
        let r = BthRepr {
            opcode: Opcode::WriteOnlyImm,
            solicited: true,
            mig_req: true,
            pad: 3,
            pkey: 0xFFFF,
            fecn: false,
            becn: true,
            mrc_ext: true,
            dest_qp: 0x12_3456,
            ack_req: true,
            psn: Psn::new(0xFF_FFFF),
        };
        let mut b = [0u8; 12];
        r.emit(&mut BthPacket::new_unchecked(&mut b[..]));
        assert_eq!(
            b,
            [0x0B, 0xF0, 0xFF, 0xFF, 0x40, 0x12, 0x34, 0x56, 0xC0, 0xFF, 0xFF, 0xFF]
        );
        assert_eq!(BthRepr::parse(&BthPacket::new_checked(&b[..]).unwrap()).unwrap(), r);
    }

    #[test]
    fn rejects_unknown_opcode_and_tver() {
        let mut b = [0u8; 12];
        b[0] = 0x04; // RC SEND Only: never used by MRC
        assert_eq!(
            BthRepr::parse(&BthPacket::new_unchecked(&b[..])),
            Err(WireError::UnknownOpcode(4))
        );
        b[0] = 0x06;
        b[1] = 0x01;
        assert_eq!(
            BthRepr::parse(&BthPacket::new_unchecked(&b[..])),
            Err(WireError::BadTransportVersion(1))
        );
    }
}
