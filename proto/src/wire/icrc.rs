//! RoCEv2 Invariant CRC (IBTA vol. 1 Annex A17, §A17.4.1 with §7.8.1).
//!
//! CRC-32 with the Ethernet polynomial 0x04C11DB7 in its reflected form
//! (0xEDB88320), initial value all-ones, final XOR all-ones — i.e. the
//! ordinary Ethernet/zlib CRC-32 — computed over:
//!
//! 1. 8 bytes of 0xFF (they stand for the LRH of a native IB packet),
//! 2. the IP header, with the variant fields replaced by all-ones:
//!    IPv4 TOS (DSCP+ECN), TTL and header checksum; IPv6 traffic class,
//!    flow label and hop limit,
//! 3. the UDP header with the checksum replaced by all-ones,
//! 4. the BTH with byte 4 (resv8a: FECN, BECN, resv6) replaced by all-ones,
//! 5. everything after the BTH up to and including the pad bytes.
//!
//! The 32-bit result is transmitted least significant byte first (the same
//! byte order as the Ethernet FCS), i.e. stored as `crc.to_le_bytes()`.
//!
//! Verified against a frame captured from a ConnectX-4 Lx NIC (a RoCEv2 CNP,
//! ICRC bytes on the wire `82 fd 00 2a`) published as a hex dump in Scapy's
//! RoCE regression tests (`test/contrib/roce.uts`, "RoCE CNP captured on
//! ConnectX-4 Lx"); the frame bytes are a fact reproduced in the test below.
//! The CRC-32 itself is checked against the standard check value
//! CRC-32("123456789") = 0xCBF43926.

use super::bth;
use super::{ipv4, ipv6, udp};

/// Largest masked prefix: IPv4 with maximal options (60) + UDP + BTH.
const MAX_MASKED: usize = 60 + udp::HEADER_LEN + bth::HEADER_LEN;

/// Plain CRC-32 (Ethernet / zlib) of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// A CRC-32 that has taken the 8 bytes of 0xFF standing for the LRH,
/// where every ICRC starts: a copy of one made once, so a packet's ICRC
/// does not pay the hasher's CPU feature detection and a short update.
fn after_lrh() -> crc32fast::Hasher {
    static AFTER_LRH: std::sync::OnceLock<crc32fast::Hasher> = std::sync::OnceLock::new();
    AFTER_LRH
        .get_or_init(|| {
            let mut h = crc32fast::Hasher::new();
            h.update(&[0xFF; 8]);
            h
        })
        .clone()
}

/// ICRC of an IP packet (`ip` = IP header through the last pad byte,
/// without the ICRC trailer). `ip_header_len` is 20+ for IPv4, 40 for IPv6.
/// Never panics: a short input is hashed as it is.
pub fn compute_icrc(ip: &[u8], ip_header_len: usize, is_ipv6: bool) -> u32 {
    compute_icrc_parts(ip, &[], ip_header_len, is_ipv6)
}

/// [`compute_icrc`] of the IP packet `head` followed by the bytes of
/// `rest` in order, where they lie (a payload sent from host memory
/// with its own `iovec`, not copied behind its headers first). The masked
/// prefix (IP, UDP, BTH) must lie in `head`; what of it does not is hashed
/// unmasked.
pub fn compute_icrc_parts(head: &[u8], rest: &[&[u8]], ip_header_len: usize, is_ipv6: bool) -> u32 {
    let ip = head;
    let masked_len = (ip_header_len + udp::HEADER_LEN + bth::HEADER_LEN)
        .min(ip.len())
        .min(MAX_MASKED);
    let mut head = [0u8; MAX_MASKED];
    let head = &mut head[..masked_len];
    head.copy_from_slice(&ip[..masked_len]);
    if is_ipv6 {
        // Version nibble stays; traffic class + flow label are the low 28
        // bits of the first word.
        if let Some(b) = head.get_mut(0) {
            *b |= 0x0F;
        }
    }
    let mut mask = |at: usize| {
        if let Some(b) = head.get_mut(at) {
            *b = 0xFF;
        }
    };
    if is_ipv6 {
        mask(1);
        mask(2);
        mask(3);
        mask(7); // hop limit
    } else {
        mask(1); // TOS
        mask(8); // TTL
        mask(10); // header checksum
        mask(11);
    }
    let udp_at = ip_header_len;
    mask(udp_at + 6); // UDP checksum
    mask(udp_at + 7);
    mask(udp_at + udp::HEADER_LEN + 4); // BTH resv8a
    let mut h = after_lrh();
    h.update(head);
    h.update(ip.get(masked_len..).unwrap_or(&[]));
    for part in rest {
        h.update(part);
    }
    h.finalize()
}

/// Convenience for IPv4 (header length from the IHL) and IPv6.
pub fn compute_icrc_auto(ip: &[u8]) -> u32 {
    match ip.first().map(|b| b >> 4) {
        Some(6) => compute_icrc(ip, ipv6::HEADER_LEN, true),
        Some(_) => {
            let ihl = ip.first().map_or(ipv4::HEADER_LEN, |b| usize::from(b & 0x0F) * 4);
            compute_icrc(ip, ihl.max(ipv4::HEADER_LEN), false)
        }
        None => compute_icrc(ip, 0, false),
    }
}

/// Recompute the IPv4 header checksum (untagged Ethernet + IPv4 frames) and
/// the ICRC trailer of `frame` in place, so that a frame whose bytes a test
/// or fuzzer mutated reaches the transport parser instead of stopping at
/// `BadIpChecksum`/`BadIcrc`. Frames too short to hold Ethernet + IP + ICRC
/// are left alone. Never panics.
pub fn reseal_frame(frame: &mut [u8]) {
    const ETH: usize = 14;
    let n = frame.len();
    if n < ETH + ipv4::HEADER_LEN + 4 {
        return;
    }
    let is_v6 = frame[12..14] == [0x86, 0xDD];
    if !is_v6 {
        super::Ipv4Packet::new_unchecked(&mut frame[ETH..]).fill_checksum();
    }
    let c = compute_icrc_auto(&frame[ETH..n - 4]);
    frame[n - 4..].copy_from_slice(&c.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    /// A RoCEv2 CNP captured on a ConnectX-4 Lx (source: the hex dump in
    /// Scapy's `test/contrib/roce.uts`). Ethernet(14) IPv4(20) UDP(8)
    /// BTH(12) 16 reserved bytes, ICRC `82 fd 00 2a`.
    pub(crate) const CX4_CNP: [u8; 74] = [
        0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32, 0x08, 0x00, // eth
        0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00,
        0x12, 0x01, // ipv4
        0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, // udp
        0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00, // bth
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // CNP reserved
        0x82, 0xfd, 0x00, 0x2a, // ICRC
    ];

    #[test]
    fn matches_connectx4_capture() {
        let ip = &CX4_CNP[14..70];
        let icrc = compute_icrc(ip, 20, false);
        assert_eq!(icrc.to_le_bytes(), [0x82, 0xfd, 0x00, 0x2a]);
        assert_eq!(compute_icrc_auto(ip), icrc);
        // Variant fields do not matter: change TOS, TTL, checksum, UDP
        // checksum and BTH byte 4.
        let mut v = ip.to_vec();
        v[1] = 0;
        v[8] = 1;
        v[10] = 0;
        v[26] = 0x12;
        v[32] = 0x80;
        assert_eq!(compute_icrc(&v, 20, false), icrc);
        // An invariant one does.
        v[40] ^= 1;
        assert_ne!(compute_icrc(&v, 20, false), icrc);
    }

    #[test]
    fn short_inputs_do_not_panic() {
        for n in 0..80 {
            let v = vec![0x60u8; n];
            let _ = compute_icrc_auto(&v);
            let _ = compute_icrc(&v, 60, false);
        }
    }
}
