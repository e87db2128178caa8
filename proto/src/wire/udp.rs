//! UDP header (RFC 768), 8 bytes.
//!
//! | bytes | field |
//! |-------|-------|
//! | 0-1 | source port = EV bits 15-0 |
//! | 2-3 | destination port = 4791 |
//! | 4-5 | length (header + payload) |
//! | 6-7 | checksum: emitted 0 (the ICRC protects the datagram, as on RoCEv2 NICs); ignored on receive |

use super::field::*;
use super::{Layer, WireError};

pub const HEADER_LEN: usize = 8;

/// Zero-copy view of a UDP datagram.
#[derive(Debug, Clone)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpPacket<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        UdpPacket { buffer }
    }
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    /// Header, then the length field must equal the bytes the IP layer
    /// handed over (the buffer is exactly the IP payload).
    #[inline]
    pub fn check_len(&self) -> Result<(), WireError> {
        let b = self.buffer.as_ref();
        need(b, HEADER_LEN, Layer::Udp)?;
        let declared = usize::from(self.len());
        if declared != b.len() {
            return Err(WireError::BadLength {
                layer: Layer::Udp,
                declared,
                actual: b.len(),
            });
        }
        Ok(())
    }
    pub fn into_inner(self) -> T {
        self.buffer
    }
    pub fn src_port(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 0)
    }
    pub fn dst_port(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 2)
    }
    pub fn len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 4)
    }
    pub fn is_empty(&self) -> bool {
        usize::from(self.len()) <= HEADER_LEN
    }
    pub fn checksum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 6)
    }
    pub fn payload(&self) -> &[u8] {
        self.buffer
            .as_ref()
            .get(HEADER_LEN..usize::from(self.len()))
            .unwrap_or(&[])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> UdpPacket<T> {
    pub fn set_src_port(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 0, v);
    }
    pub fn set_dst_port(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 2, v);
    }
    pub fn set_len(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 4, v);
    }
    pub fn set_checksum(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 6, v);
    }
}

/// Owned UDP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    pub payload_len: usize,
}

impl UdpRepr {
    #[inline(always)]
    pub fn parse<T: AsRef<[u8]>>(p: &UdpPacket<T>) -> Result<Self, WireError> {
        p.check_len()?;
        Ok(UdpRepr {
            src_port: p.src_port(),
            dst_port: p.dst_port(),
            payload_len: usize::from(p.len()) - HEADER_LEN,
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    /// Emit with checksum 0.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut UdpPacket<T>) {
        p.set_src_port(self.src_port);
        p.set_dst_port(self.dst_port);
        p.set_len((HEADER_LEN + self.payload_len) as u16);
        p.set_checksum(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_length() {
        let r = UdpRepr {
            src_port: 0xC000,
            dst_port: 4791,
            payload_len: 2,
        };
        let mut b = [0u8; 10];
        r.emit(&mut UdpPacket::new_unchecked(&mut b[..]));
        assert_eq!(UdpRepr::parse(&UdpPacket::new_checked(&b[..]).unwrap()).unwrap(), r);
        assert!(matches!(
            UdpPacket::new_checked(&b[..9]),
            Err(WireError::BadLength { .. })
        ));
        assert!(matches!(
            UdpPacket::new_checked(&b[..7]),
            Err(WireError::Truncated { .. })
        ));
    }
}
