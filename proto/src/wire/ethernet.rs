//! Ethernet II header (14 bytes, no FCS), optionally one 802.1Q tag on parse.
//!
//! | bytes | field |
//! |-------|-------|
//! | 0-5   | destination MAC |
//! | 6-11  | source MAC |
//! | 12-13 | EtherType (0x0800 IPv4, 0x86DD IPv6, 0x8100 802.1Q tag) |

use super::field::*;
use super::{Layer, WireError};

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// Ethernet II header length.
pub const HEADER_LEN: usize = 14;
/// 802.1Q tag length (TPID is the outer EtherType; TCI + inner EtherType).
pub const VLAN_TAG_LEN: usize = 4;

/// Zero-copy view of an Ethernet II frame.
#[derive(Debug, Clone)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// Wrap without checking; accessors on a short buffer read zeros.
    pub const fn new_unchecked(buffer: T) -> Self {
        EthernetFrame { buffer }
    }
    /// Wrap after [`Self::check_len`].
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let f = Self::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }
    /// The fixed header, plus the tag if the EtherType says 802.1Q.
    #[inline]
    pub fn check_len(&self) -> Result<(), WireError> {
        let b = self.buffer.as_ref();
        need(b, HEADER_LEN, Layer::Ethernet)?;
        if get_u16(b, 12) == ETHERTYPE_VLAN {
            need(b, HEADER_LEN + VLAN_TAG_LEN, Layer::Vlan)?;
        }
        Ok(())
    }
    pub fn into_inner(self) -> T {
        self.buffer
    }
    pub fn dst_addr(&self) -> [u8; 6] {
        let mut a = [0; 6];
        if let Some(s) = self.buffer.as_ref().get(0..6) {
            a.copy_from_slice(s);
        }
        a
    }
    pub fn src_addr(&self) -> [u8; 6] {
        let mut a = [0; 6];
        if let Some(s) = self.buffer.as_ref().get(6..12) {
            a.copy_from_slice(s);
        }
        a
    }
    /// The outer EtherType (0x8100 when tagged).
    pub fn ethertype(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 12)
    }
    /// EtherType of the payload, looking through one 802.1Q tag.
    pub fn inner_ethertype(&self) -> u16 {
        match self.ethertype() {
            ETHERTYPE_VLAN => get_u16(self.buffer.as_ref(), 16),
            t => t,
        }
    }
    /// Length of the header including any tag.
    pub fn header_len(&self) -> usize {
        if self.ethertype() == ETHERTYPE_VLAN {
            HEADER_LEN + VLAN_TAG_LEN
        } else {
            HEADER_LEN
        }
    }
    /// Bytes after the header (and tag).
    pub fn payload(&self) -> &[u8] {
        self.buffer.as_ref().get(self.header_len()..).unwrap_or(&[])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    pub fn set_dst_addr(&mut self, a: [u8; 6]) {
        set_bytes(self.buffer.as_mut(), 0, &a);
    }
    pub fn set_src_addr(&mut self, a: [u8; 6]) {
        set_bytes(self.buffer.as_mut(), 6, &a);
    }
    pub fn set_ethertype(&mut self, t: u16) {
        set_u16(self.buffer.as_mut(), 12, t);
    }
}

/// The same view under the `XxxPacket` naming used by the other headers.
pub type EthernetPacket<T> = EthernetFrame<T>;

/// Owned Ethernet II header (untagged on emit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EthernetRepr {
    pub src: [u8; 6],
    pub dst: [u8; 6],
    /// Payload EtherType (after any tag on parse).
    pub ethertype: u16,
}

impl EthernetRepr {
    #[inline(always)]
    pub fn parse<T: AsRef<[u8]>>(f: &EthernetFrame<T>) -> Result<Self, WireError> {
        f.check_len()?;
        Ok(EthernetRepr {
            src: f.src_addr(),
            dst: f.dst_addr(),
            ethertype: f.inner_ethertype(),
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, f: &mut EthernetFrame<T>) {
        f.set_dst_addr(self.dst);
        f.set_src_addr(self.src);
        f.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_vlan() {
        let r = EthernetRepr {
            src: [1, 2, 3, 4, 5, 6],
            dst: [7; 6],
            ethertype: ETHERTYPE_IPV6,
        };
        let mut b = [0u8; 14];
        r.emit(&mut EthernetFrame::new_unchecked(&mut b[..]));
        assert_eq!(
            EthernetRepr::parse(&EthernetFrame::new_checked(&b[..]).unwrap()).unwrap(),
            r
        );
        let mut t = [0u8; 18];
        t[..12].copy_from_slice(&b[..12]);
        t[12..14].copy_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
        t[16..18].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let f = EthernetFrame::new_checked(&t[..]).unwrap();
        assert_eq!(f.inner_ethertype(), ETHERTYPE_IPV4);
        assert_eq!(f.header_len(), 18);
        assert!(matches!(
            EthernetFrame::new_checked(&t[..16]),
            Err(WireError::Truncated { layer: Layer::Vlan })
        ));
    }
}
