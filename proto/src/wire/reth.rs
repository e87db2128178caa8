//! RDMA Extended Transport Header (IBTA vol. 1 §9.3.3), 16 bytes, on WRITE
//! FIRST, WRITE ONLY and WRITE ONLY with Immediate.
//!
//! | bytes | field |
//! |-------|-------|
//! | 0-7   | virtual address |
//! | 8-11  | R_Key |
//! | 12-15 | DMA length (whole message) |

use super::field::*;
use super::{Layer, RethRepr, WireError};

pub const HEADER_LEN: usize = 16;

/// Zero-copy view of a RETH.
#[derive(Debug, Clone)]
pub struct RethPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> RethPacket<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        RethPacket { buffer }
    }
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    #[inline]
    pub fn check_len(&self) -> Result<(), WireError> {
        need(self.buffer.as_ref(), HEADER_LEN, Layer::Reth)
    }
    pub fn va(&self) -> u64 {
        get_u64(self.buffer.as_ref(), 0)
    }
    pub fn rkey(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 8)
    }
    pub fn dma_len(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 12)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> RethPacket<T> {
    pub fn set_va(&mut self, v: u64) {
        set_u64(self.buffer.as_mut(), 0, v);
    }
    pub fn set_rkey(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), 8, v);
    }
    pub fn set_dma_len(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), 12, v);
    }
}

impl RethRepr {
    #[inline(always)]
    pub fn parse<T: AsRef<[u8]>>(p: &RethPacket<T>) -> Result<Self, WireError> {
        p.check_len()?;
        Ok(RethRepr {
            va: p.va(),
            rkey: p.rkey(),
            dma_len: p.dma_len(),
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut RethPacket<T>) {
        p.set_va(self.va);
        p.set_rkey(self.rkey);
        p.set_dma_len(self.dma_len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let r = RethRepr {
            va: 0x0123_4567_89AB_CDEF,
            rkey: 0xDEAD_BEEF,
            dma_len: 4096,
        };
        let mut b = [0u8; 16];
        r.emit(&mut RethPacket::new_unchecked(&mut b[..]));
        assert_eq!(b[0], 0x01);
        assert_eq!(&b[12..], &[0, 0, 0x10, 0]);
        assert_eq!(RethRepr::parse(&RethPacket::new_checked(&b[..]).unwrap()).unwrap(), r);
        assert!(RethPacket::new_checked(&b[..15]).is_err());
    }
}
