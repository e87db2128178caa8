//! IPv4 header (RFC 791), 20 bytes as emitted (options accepted on parse).
//!
//! | byte | bits | field |
//! |------|------|-------|
//! | 0    | 7-4 version (4), 3-0 IHL (words) | |
//! | 1    | 7-2 DSCP, 1-0 ECN | |
//! | 2-3  | total length | |
//! | 4-5  | identification (0) | |
//! | 6-7  | 15 reserved, 14 DF (1), 13 MF (0), 12-0 fragment offset (0) | |
//! | 8    | TTL (64) | |
//! | 9    | protocol (17 = UDP) | |
//! | 10-11| header checksum | |
//! | 12-15| source address | |
//! | 16-19| destination address | |

use super::field::*;
use super::{Layer, WireError};

/// Header length without options.
pub const HEADER_LEN: usize = 20;
/// IP protocol number of UDP.
pub const PROTO_UDP: u8 = 17;
/// TTL we emit.
pub const DEFAULT_TTL: u8 = 64;

/// ECN code points (RFC 3168), shared by IPv4 and IPv6.
pub mod ecn {
    pub const NOT_ECT: u8 = 0b00;
    pub const ECT1: u8 = 0b01;
    pub const ECT0: u8 = 0b10;
    pub const CE: u8 = 0b11;
}

/// RFC 1071 one's-complement sum of `data`, folded to 16 bits (not inverted).
pub fn ones_complement_sum(data: &[u8]) -> u16 {
    // Summing 32-bit big-endian words and folding gives the same one's
    // complement sum as 16-bit words (end-around carry), with half the adds.
    let mut sum: u64 = 0;
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        sum += u64::from(u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
    }
    let mut tail = words.remainder().chunks_exact(2);
    for c in &mut tail {
        sum += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = tail.remainder() {
        sum += u64::from(*last) << 8;
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    sum as u16
}

/// Zero-copy view of an IPv4 packet.
#[derive(Debug, Clone)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        Ipv4Packet { buffer }
    }
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    /// The fixed header, then the IHL-declared header, then the total length.
    /// Bytes after `total_len` (Ethernet padding) are allowed.
    #[inline]
    pub fn check_len(&self) -> Result<(), WireError> {
        let b = self.buffer.as_ref();
        need(b, HEADER_LEN, Layer::Ipv4)?;
        let ihl = self.header_len();
        if ihl < HEADER_LEN {
            return Err(WireError::BadIpHeaderLen((ihl / 4) as u8));
        }
        need(b, ihl, Layer::Ipv4)?;
        let total = usize::from(self.total_len());
        if total < ihl || total > b.len() {
            return Err(WireError::BadLength {
                layer: Layer::Ipv4,
                declared: total,
                actual: b.len(),
            });
        }
        Ok(())
    }
    pub fn into_inner(self) -> T {
        self.buffer
    }
    pub fn version(&self) -> u8 {
        get_u8(self.buffer.as_ref(), 0) >> 4
    }
    /// Header length in bytes (IHL * 4).
    pub fn header_len(&self) -> usize {
        usize::from(get_u8(self.buffer.as_ref(), 0) & 0x0F) * 4
    }
    pub fn dscp(&self) -> u8 {
        get_u8(self.buffer.as_ref(), 1) >> 2
    }
    pub fn ecn(&self) -> u8 {
        get_u8(self.buffer.as_ref(), 1) & 0b11
    }
    pub fn total_len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 2)
    }
    pub fn ident(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 4)
    }
    pub fn dont_frag(&self) -> bool {
        get_u16(self.buffer.as_ref(), 6) & 0x4000 != 0
    }
    pub fn more_frags(&self) -> bool {
        get_u16(self.buffer.as_ref(), 6) & 0x2000 != 0
    }
    pub fn frag_offset(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 6) & 0x1FFF
    }
    pub fn ttl(&self) -> u8 {
        get_u8(self.buffer.as_ref(), 8)
    }
    pub fn protocol(&self) -> u8 {
        get_u8(self.buffer.as_ref(), 9)
    }
    pub fn checksum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 10)
    }
    pub fn src_addr(&self) -> [u8; 4] {
        get_u32(self.buffer.as_ref(), 12).to_be_bytes()
    }
    pub fn dst_addr(&self) -> [u8; 4] {
        get_u32(self.buffer.as_ref(), 16).to_be_bytes()
    }
    /// The header checksum verifies (sum over the header is 0xFFFF).
    #[inline]
    pub fn verify_checksum(&self) -> bool {
        match self.buffer.as_ref().get(..self.header_len()) {
            Some(h) => ones_complement_sum(h) == 0xFFFF,
            None => false,
        }
    }
    /// Bytes after the header up to `total_len` (excludes Ethernet padding).
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        b.get(self.header_len()..usize::from(self.total_len())).unwrap_or(&[])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    pub fn set_version_ihl(&mut self, version: u8, ihl_words: u8) {
        set_u8(self.buffer.as_mut(), 0, (version << 4) | (ihl_words & 0x0F));
    }
    pub fn set_dscp_ecn(&mut self, dscp: u8, ecn: u8) {
        set_u8(self.buffer.as_mut(), 1, (dscp << 2) | (ecn & 0b11));
    }
    pub fn set_total_len(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 2, v);
    }
    pub fn set_ident(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 4, v);
    }
    /// Flags and fragment offset: DF only (RoCEv2 never fragments).
    pub fn set_dont_frag(&mut self) {
        set_u16(self.buffer.as_mut(), 6, 0x4000);
    }
    pub fn set_ttl(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), 8, v);
    }
    pub fn set_protocol(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), 9, v);
    }
    pub fn set_checksum(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 10, v);
    }
    pub fn set_src_addr(&mut self, a: [u8; 4]) {
        set_bytes(self.buffer.as_mut(), 12, &a);
    }
    pub fn set_dst_addr(&mut self, a: [u8; 4]) {
        set_bytes(self.buffer.as_mut(), 16, &a);
    }
    /// Recompute the header checksum over the IHL-declared header.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let hl = self.header_len();
        let sum = self.buffer.as_ref().get(..hl).map(ones_complement_sum).unwrap_or(0);
        self.set_checksum(!sum);
    }
}

/// Owned IPv4 header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Repr {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub dscp: u8,
    pub ecn: u8,
    pub ttl: u8,
    pub protocol: u8,
    /// Bytes after the IP header.
    pub payload_len: usize,
}

impl Ipv4Repr {
    /// Validate version, header length, total length, checksum and
    /// fragmentation. Does not check the protocol (the caller does).
    #[inline(always)]
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv4Packet<T>) -> Result<Self, WireError> {
        let b = p.buffer.as_ref();
        if p.version() != 4 {
            // Check before the length so a garbled version is reported as such.
            need(b, 1, Layer::Ipv4)?;
            return Err(WireError::BadIpVersion(p.version()));
        }
        p.check_len()?;
        let h: &[u8; HEADER_LEN] = match b.first_chunk() {
            Some(h) => h,
            None => return Err(WireError::Truncated { layer: Layer::Ipv4 }),
        };
        let ihl = usize::from(h[0] & 0x0F) * 4;
        let sum = if ihl == HEADER_LEN {
            ones_complement_sum(h)
        } else {
            ones_complement_sum(b.get(..ihl).unwrap_or(&[]))
        };
        if sum != 0xFFFF {
            return Err(WireError::BadIpChecksum);
        }
        if h[6] & 0x20 != 0 || u16::from_be_bytes([h[6], h[7]]) & 0x1FFF != 0 {
            return Err(WireError::IpFragment);
        }
        Ok(Ipv4Repr {
            src: [h[12], h[13], h[14], h[15]],
            dst: [h[16], h[17], h[18], h[19]],
            dscp: h[1] >> 2,
            ecn: h[1] & 0b11,
            ttl: h[8],
            protocol: h[9],
            payload_len: usize::from(u16::from_be_bytes([h[2], h[3]])).saturating_sub(ihl),
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    /// Emit a 20-byte header with DF set, identification 0 and a valid
    /// checksum. `payload_len` must fit the 16-bit total length.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Ipv4Packet<T>) {
        // Assemble the header in registers and store it once.
        let total = ((HEADER_LEN + self.payload_len) as u16).to_be_bytes();
        let csum = self.header_checksum().to_be_bytes();
        let h: [u8; HEADER_LEN] = [
            0x45,
            (self.dscp << 2) | (self.ecn & 0b11),
            total[0],
            total[1],
            0, // identification
            0,
            0x40, // DF
            0,
            self.ttl,
            self.protocol,
            csum[0],
            csum[1],
            self.src[0],
            self.src[1],
            self.src[2],
            self.src[3],
            self.dst[0],
            self.dst[1],
            self.dst[2],
            self.dst[3],
        ];
        set_bytes(p.buffer.as_mut(), 0, &h);
    }

    /// Header checksum of the 20-byte header `emit` writes.
    pub fn header_checksum(&self) -> u16 {
        let total = (HEADER_LEN + self.payload_len) as u16;
        let words: [u16; 9] = [
            0x4500 | u16::from((self.dscp << 2) | (self.ecn & 0b11)),
            total,
            0,      // identification
            0x4000, // DF
            (u16::from(self.ttl) << 8) | u16::from(self.protocol),
            u16::from_be_bytes([self.src[0], self.src[1]]),
            u16::from_be_bytes([self.src[2], self.src[3]]),
            u16::from_be_bytes([self.dst[0], self.dst[1]]),
            u16::from_be_bytes([self.dst[2], self.dst[3]]),
        ];
        let mut sum: u32 = words.iter().map(|&w| u32::from(w)).sum();
        while sum > 0xFFFF {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        !(sum as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Ipv4Repr {
        Ipv4Repr {
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            dscp: 26,
            ecn: ecn::ECT0,
            ttl: 64,
            protocol: PROTO_UDP,
            payload_len: 8,
        }
    }

    #[test]
    fn round_trip_and_checksum() {
        let mut b = [0u8; 28];
        sample().emit(&mut Ipv4Packet::new_unchecked(&mut b[..]));
        let p = Ipv4Packet::new_checked(&b[..]).unwrap();
        assert!(p.verify_checksum());
        assert_eq!(Ipv4Repr::parse(&p).unwrap(), sample());
        b[8] = 1; // TTL change without checksum update
        assert_eq!(
            Ipv4Repr::parse(&Ipv4Packet::new_unchecked(&b[..])),
            Err(WireError::BadIpChecksum)
        );
    }

    #[test]
    fn sum_matches_16_bit_definition() {
        let data: Vec<u8> = (0..=40u8).map(|i| i.wrapping_mul(37)).collect();
        for n in 0..data.len() {
            let mut s16: u32 = 0;
            for (i, b) in data[..n].iter().enumerate() {
                s16 += u32::from(*b) << if i % 2 == 0 { 8 } else { 0 };
            }
            while s16 > 0xFFFF {
                s16 = (s16 & 0xFFFF) + (s16 >> 16);
            }
            assert_eq!(ones_complement_sum(&data[..n]), s16 as u16, "n = {n}");
        }
    }

    /// A header whose checksum was written by a real NIC.
    #[test]
    fn checksum_known_header() {
        // The IPv4 header of the ConnectX-4 Lx CNP capture used by the ICRC
        // test (see icrc.rs); its checksum 0x9161 was written by the NIC.
        let h = [
            0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00,
            0x12, 0x01,
        ];
        assert!(Ipv4Packet::new_unchecked(&h[..]).verify_checksum());
    }
}
