//! Immediate Data Extended Transport Header (IBTA vol. 1 §9.3.4), 4 bytes,
//! on WRITE LAST with Immediate and WRITE ONLY with Immediate. The 32-bit
//! value is opaque to the transport and carried big-endian.

use super::field::*;
use super::{Layer, WireError};

pub const HEADER_LEN: usize = 4;

/// Zero-copy view of an ImmDt.
#[derive(Debug, Clone)]
pub struct ImmDtPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> ImmDtPacket<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        ImmDtPacket { buffer }
    }
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    #[inline]
    pub fn check_len(&self) -> Result<(), WireError> {
        need(self.buffer.as_ref(), HEADER_LEN, Layer::ImmDt)
    }
    pub fn imm(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 0)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ImmDtPacket<T> {
    pub fn set_imm(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), 0, v);
    }
}

/// Owned ImmDt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImmDtRepr {
    pub imm: u32,
}

impl ImmDtRepr {
    #[inline(always)]
    pub fn parse<T: AsRef<[u8]>>(p: &ImmDtPacket<T>) -> Result<Self, WireError> {
        p.check_len()?;
        Ok(ImmDtRepr { imm: p.imm() })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut ImmDtPacket<T>) {
        p.set_imm(self.imm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut b = [0u8; 4];
        ImmDtRepr { imm: 0xA1B2_C3D4 }.emit(&mut ImmDtPacket::new_unchecked(&mut b[..]));
        assert_eq!(b, [0xA1, 0xB2, 0xC3, 0xD4]);
        assert_eq!(
            ImmDtRepr::parse(&ImmDtPacket::new_checked(&b[..]).unwrap())
                .unwrap()
                .imm,
            0xA1B2_C3D4
        );
        assert!(ImmDtPacket::new_checked(&b[..3]).is_err());
    }
}
