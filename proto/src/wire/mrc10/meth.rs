//! METH, the MRC 1.0 message extension header: 4 bytes after the BTH of
//! every data packet (grade S).
//!
//! | bytes | field | grade |
//! |-------|-------|-------|
//! | 0-1   | RQMSN: the requester's message sequence number of this packet's message | S |
//! | 2-3   | MSN | S |

use crate::wire::field::{get_u16, set_u16};
use crate::wire::{Layer, WireError};

mod field {
    pub const RQMSN: usize = 0;
    pub const MSN: usize = 2;
}

pub const HEADER_LEN: usize = 4;

fixed_header_view!(
    /// Zero-copy view of a METH.
    MethPacket,
    HEADER_LEN,
    Layer::Meth
);

impl<T: AsRef<[u8]>> MethPacket<T> {
    pub fn rq_msn(&self) -> u16 {
        get_u16(self.bytes(), field::RQMSN)
    }
    pub fn msn(&self) -> u16 {
        get_u16(self.bytes(), field::MSN)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> MethPacket<T> {
    pub fn set_rq_msn(&mut self, v: u16) {
        set_u16(self.bytes_mut(), field::RQMSN, v);
    }
    pub fn set_msn(&mut self, v: u16) {
        set_u16(self.bytes_mut(), field::MSN, v);
    }
}

/// Owned METH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MethRepr {
    pub rq_msn: u16,
    pub msn: u16,
}

impl MethRepr {
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(p: &MethPacket<T>) -> Result<Self, WireError> {
        p.check_len()?;
        Ok(MethRepr {
            rq_msn: p.rq_msn(),
            msn: p.msn(),
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut MethPacket<T>) {
        p.set_rq_msn(self.rq_msn);
        p.set_msn(self.msn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let r = MethRepr {
            rq_msn: 0x0102,
            msn: 0xA0B0,
        };
        let mut b = [0u8; HEADER_LEN];
        r.emit(&mut MethPacket::new_unchecked(&mut b[..]));
        assert_eq!(b, [0x01, 0x02, 0xA0, 0xB0]);
        assert_eq!(MethRepr::parse(&MethPacket::new_checked(&b[..]).unwrap()), Ok(r));
        assert_eq!(
            MethPacket::new_checked(&b[..3]).err(),
            Some(WireError::Truncated { layer: Layer::Meth })
        );
    }
}
