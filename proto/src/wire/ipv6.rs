//! IPv6 fixed header (RFC 8200), 40 bytes. Extension headers are not
//! supported: the next header must be UDP.
//!
//! | byte | bits | field |
//! |------|------|-------|
//! | 0-3  | 31-28 version (6), 27-22 DSCP, 21-20 ECN, 19-0 flow label | |
//! | 4-5  | payload length | |
//! | 6    | next header (17 = UDP) | |
//! | 7    | hop limit (64) | |
//! | 8-23 | source address | |
//! | 24-39| destination address | |

use super::field::*;
use super::{Layer, WireError};

pub const HEADER_LEN: usize = 40;
/// Mask of the 20-bit flow label.
pub const FLOW_LABEL_MASK: u32 = 0xF_FFFF;

/// Zero-copy view of an IPv6 packet.
#[derive(Debug, Clone)]
pub struct Ipv6Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv6Packet<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        Ipv6Packet { buffer }
    }
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    /// Fixed header, then the payload length (trailing Ethernet padding is
    /// allowed).
    #[inline]
    pub fn check_len(&self) -> Result<(), WireError> {
        let b = self.buffer.as_ref();
        need(b, HEADER_LEN, Layer::Ipv6)?;
        let declared = HEADER_LEN + usize::from(self.payload_len());
        if declared > b.len() {
            return Err(WireError::BadLength {
                layer: Layer::Ipv6,
                declared,
                actual: b.len(),
            });
        }
        Ok(())
    }
    pub fn into_inner(self) -> T {
        self.buffer
    }
    fn word0(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 0)
    }
    pub fn version(&self) -> u8 {
        get_u8(self.buffer.as_ref(), 0) >> 4
    }
    /// Traffic class (DSCP << 2 | ECN).
    pub fn traffic_class(&self) -> u8 {
        (self.word0() >> 20) as u8
    }
    pub fn dscp(&self) -> u8 {
        self.traffic_class() >> 2
    }
    pub fn ecn(&self) -> u8 {
        self.traffic_class() & 0b11
    }
    pub fn flow_label(&self) -> u32 {
        self.word0() & FLOW_LABEL_MASK
    }
    pub fn payload_len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 4)
    }
    pub fn next_header(&self) -> u8 {
        get_u8(self.buffer.as_ref(), 6)
    }
    pub fn hop_limit(&self) -> u8 {
        get_u8(self.buffer.as_ref(), 7)
    }
    pub fn src_addr(&self) -> [u8; 16] {
        let mut a = [0; 16];
        if let Some(s) = self.buffer.as_ref().get(8..24) {
            a.copy_from_slice(s);
        }
        a
    }
    pub fn dst_addr(&self) -> [u8; 16] {
        let mut a = [0; 16];
        if let Some(s) = self.buffer.as_ref().get(24..40) {
            a.copy_from_slice(s);
        }
        a
    }
    /// Bytes after the header up to the payload length.
    pub fn payload(&self) -> &[u8] {
        let end = HEADER_LEN + usize::from(self.payload_len());
        self.buffer.as_ref().get(HEADER_LEN..end).unwrap_or(&[])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv6Packet<T> {
    /// Version 6, traffic class and flow label in one write.
    pub fn set_word0(&mut self, traffic_class: u8, flow_label: u32) {
        let w = (6u32 << 28) | (u32::from(traffic_class) << 20) | (flow_label & FLOW_LABEL_MASK);
        set_u32(self.buffer.as_mut(), 0, w);
    }
    pub fn set_payload_len(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 4, v);
    }
    pub fn set_next_header(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), 6, v);
    }
    pub fn set_hop_limit(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), 7, v);
    }
    pub fn set_src_addr(&mut self, a: [u8; 16]) {
        set_bytes(self.buffer.as_mut(), 8, &a);
    }
    pub fn set_dst_addr(&mut self, a: [u8; 16]) {
        set_bytes(self.buffer.as_mut(), 24, &a);
    }
}

/// Owned IPv6 header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv6Repr {
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub dscp: u8,
    pub ecn: u8,
    pub flow_label: u32,
    pub next_header: u8,
    pub hop_limit: u8,
    pub payload_len: usize,
}

impl Ipv6Repr {
    #[inline(always)]
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv6Packet<T>) -> Result<Self, WireError> {
        need(p.buffer.as_ref(), 1, Layer::Ipv6)?;
        if p.version() != 6 {
            return Err(WireError::BadIpVersion(p.version()));
        }
        p.check_len()?;
        Ok(Ipv6Repr {
            src: p.src_addr(),
            dst: p.dst_addr(),
            dscp: p.dscp(),
            ecn: p.ecn(),
            flow_label: p.flow_label(),
            next_header: p.next_header(),
            hop_limit: p.hop_limit(),
            payload_len: usize::from(p.payload_len()),
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Ipv6Packet<T>) {
        p.set_word0((self.dscp << 2) | (self.ecn & 0b11), self.flow_label);
        p.set_payload_len(self.payload_len as u16);
        p.set_next_header(self.next_header);
        p.set_hop_limit(self.hop_limit);
        p.set_src_addr(self.src);
        p.set_dst_addr(self.dst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let r = Ipv6Repr {
            src: [0xfe; 16],
            dst: [1; 16],
            dscp: 59,
            ecn: 3,
            flow_label: 0xABCDE,
            next_header: 17,
            hop_limit: 64,
            payload_len: 4,
        };
        let mut b = [0u8; 44];
        r.emit(&mut Ipv6Packet::new_unchecked(&mut b[..]));
        assert_eq!(b[0] >> 4, 6);
        assert_eq!(Ipv6Repr::parse(&Ipv6Packet::new_checked(&b[..]).unwrap()).unwrap(), r);
        assert!(matches!(
            Ipv6Packet::new_checked(&b[..43]),
            Err(WireError::BadLength { layer: Layer::Ipv6, .. })
        ));
    }
}
