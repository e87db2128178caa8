//! ACK Extended Transport Header (IBTA vol. 1 §9.3.5), 4 bytes.
//!
//! | byte | bits | field |
//! |------|------|-------|
//! | 0    | 7 reserved (0), 6-5 type (00 ACK, 01 RNR NAK, 10 reserved, 11 NAK), 4-0 value | syndrome |
//! | 1-3  | MSN (24 bits) | |
//!
//! The 5-bit value is the credit count (ACK), the RNR timer (RNR NAK) or the
//! NAK code (NAK: 0 PSN sequence error, 1 invalid request, 2 remote access
//! error, 3 remote operational error, 4 invalid RD request).

use super::field::*;
use super::{AethRepr, Layer, NackKind, Syndrome, WireError};

pub const HEADER_LEN: usize = 4;

impl Syndrome {
    /// The syndrome byte.
    pub const fn to_u8(self) -> u8 {
        match self {
            Syndrome::Ack { credits } => credits & 0x1F,
            Syndrome::Rnr { timer } => 0x20 | (timer & 0x1F),
            Syndrome::Reserved(v) => 0x40 | (v & 0x1F),
            Syndrome::Nak { code } => 0x60 | (code & 0x1F),
        }
    }
    /// Decode a syndrome byte; bit 7 (reserved) is ignored. `Reserved` keeps
    /// the 5-bit value.
    pub const fn from_u8(v: u8) -> Syndrome {
        let value = v & 0x1F;
        match (v >> 5) & 0b11 {
            0b00 => Syndrome::Ack { credits: value },
            0b01 => Syndrome::Rnr { timer: value },
            0b10 => Syndrome::Reserved(value),
            _ => Syndrome::Nak { code: value },
        }
    }
    /// The NAK a MRC NACK of `kind` carries, so that third-party decoders
    /// (and an RC requester ignoring the extension) read a NAK:
    /// * `OutOfWindow` -> PSN sequence error (0): the RC meaning exactly.
    /// * `RemoteAccess` -> remote access error (2): the RC meaning exactly.
    /// * `Trimmed` -> PSN sequence error (0): the only non-fatal NAK code;
    ///   its RC reaction (resend from this PSN) is the right one for a packet
    ///   whose payload was cut, whereas codes 1-3 would tear the QP down.
    pub const fn for_nack(kind: NackKind) -> Syndrome {
        match kind {
            NackKind::Trimmed | NackKind::OutOfWindow => Syndrome::Nak {
                code: Syndrome::NAK_PSN_SEQ_ERROR,
            },
            NackKind::RemoteAccess => Syndrome::Nak {
                code: Syndrome::NAK_REMOTE_ACCESS,
            },
        }
    }
}

/// Zero-copy view of an AETH.
#[derive(Debug, Clone)]
pub struct AethPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> AethPacket<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        AethPacket { buffer }
    }
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    #[inline]
    pub fn check_len(&self) -> Result<(), WireError> {
        need(self.buffer.as_ref(), HEADER_LEN, Layer::Aeth)
    }
    pub fn syndrome_raw(&self) -> u8 {
        get_u8(self.buffer.as_ref(), 0)
    }
    pub fn msn(&self) -> u32 {
        get_u24(self.buffer.as_ref(), 1)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> AethPacket<T> {
    pub fn set_syndrome_raw(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), 0, v);
    }
    pub fn set_msn(&mut self, v: u32) {
        set_u24(self.buffer.as_mut(), 1, v & 0xFF_FFFF);
    }
}

impl AethRepr {
    #[inline(always)]
    pub fn parse<T: AsRef<[u8]>>(p: &AethPacket<T>) -> Result<Self, WireError> {
        p.check_len()?;
        Ok(AethRepr {
            syndrome: Syndrome::from_u8(p.syndrome_raw()),
            msn: p.msn(),
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut AethPacket<T>) {
        p.set_syndrome_raw(self.syndrome.to_u8());
        p.set_msn(self.msn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syndromes() {
        // 0x60 is the PSN sequence error NAK of every RoCE trace.
        assert_eq!(Syndrome::for_nack(NackKind::OutOfWindow).to_u8(), 0x60);
        assert_eq!(Syndrome::for_nack(NackKind::RemoteAccess).to_u8(), 0x62);
        assert_eq!(Syndrome::for_nack(NackKind::Trimmed).to_u8(), 0x60);
        assert_eq!(Syndrome::Ack { credits: 0x1F }.to_u8(), 0x1F);
        for v in 0..0x80u8 {
            assert_eq!(Syndrome::from_u8(v).to_u8(), v);
        }
    }

    #[test]
    fn round_trip() {
        let r = AethRepr {
            syndrome: Syndrome::Nak { code: 2 },
            msn: 0xAB_CDEF,
        };
        let mut b = [0u8; 4];
        r.emit(&mut AethPacket::new_unchecked(&mut b[..]));
        assert_eq!(b, [0x62, 0xAB, 0xCD, 0xEF]);
        assert_eq!(AethRepr::parse(&AethPacket::new_checked(&b[..]).unwrap()).unwrap(), r);
    }
}
