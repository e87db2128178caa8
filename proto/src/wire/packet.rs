//! [`Packet`]: what a queue pair sends and receives, in either of the two
//! protocols that share the RoCEv2 encapsulation. The MRC queue pair speaks
//! MRC 1.0 ([`Mrc10Packet`]); the RC baseline speaks standard RoCEv2 RC
//! ([`RocePacket`] without the legacy extension). Fabrics (the loopback
//! link, the simulator) handle both through the methods here: the EV they
//! route on, the ECN mark they set, the trim they apply, the bytes on the
//! wire.
//!
//! A received frame is told apart by its BTH opcode: MRC 1.0 uses
//! 0xC6-0xDE ([`mrc10::Opcode::RANGE`]), which no RC opcode uses.

use super::mrc10::{self, Mrc10Packet, Profile, TrafficClass};
use super::{ethernet, ipv4, ipv6, udp, Encap, RocePacket, WireError};
use crate::Psn;
use bytes::Bytes;

/// ECN code point "congestion experienced".
pub const ECN_CE: u8 = 0b11;
/// ECN code point "ECN-capable transport" (what an MRC 1.0 sender marks).
pub const ECN_ECT0: u8 = 0b10;

/// One packet of either protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Packet {
    /// RoCEv2 (the RC baseline; the legacy MRC profile in RTL tests).
    Roce(RocePacket),
    /// MRC 1.0.
    Mrc10(Mrc10Packet),
}

impl From<RocePacket> for Packet {
    fn from(p: RocePacket) -> Packet {
        Packet::Roce(p)
    }
}

impl From<Mrc10Packet> for Packet {
    fn from(p: Mrc10Packet) -> Packet {
        Packet::Mrc10(p)
    }
}

impl Packet {
    pub fn as_roce(&self) -> Option<&RocePacket> {
        match self {
            Packet::Roce(p) => Some(p),
            Packet::Mrc10(_) => None,
        }
    }
    pub fn into_roce(self) -> Option<RocePacket> {
        match self {
            Packet::Roce(p) => Some(p),
            Packet::Mrc10(_) => None,
        }
    }
    pub fn as_mrc10(&self) -> Option<&Mrc10Packet> {
        match self {
            Packet::Mrc10(p) => Some(p),
            Packet::Roce(_) => None,
        }
    }
    pub fn into_mrc10(self) -> Option<Mrc10Packet> {
        match self {
            Packet::Mrc10(p) => Some(p),
            Packet::Roce(_) => None,
        }
    }
    /// Entropy value (UDP source port, and flow label where carried).
    pub fn ev(&self) -> u32 {
        match self {
            Packet::Roce(p) => p.ev,
            Packet::Mrc10(p) => p.ev,
        }
    }
    /// Destination QP.
    pub fn dest_qp(&self) -> u32 {
        match self {
            Packet::Roce(p) => p.bth.dest_qp,
            Packet::Mrc10(p) => p.bth.dest_qp,
        }
    }
    pub fn psn(&self) -> Psn {
        match self {
            Packet::Roce(p) => p.bth.psn,
            Packet::Mrc10(p) => p.bth.psn,
        }
    }
    /// The BTH opcode byte.
    pub fn opcode_byte(&self) -> u8 {
        match self {
            Packet::Roce(p) => p.bth.opcode as u8,
            Packet::Mrc10(p) => p.bth.opcode.as_u8(),
        }
    }
    /// A WRITE (data) packet.
    pub fn is_data(&self) -> bool {
        match self {
            Packet::Roce(p) => p.bth.opcode.is_write(),
            Packet::Mrc10(p) => p.bth.opcode.is_write(),
        }
    }
    pub fn payload(&self) -> &Bytes {
        match self {
            Packet::Roce(p) => &p.payload,
            Packet::Mrc10(p) => &p.payload,
        }
    }
    /// The IP header says congestion experienced.
    pub fn ecn_ce(&self) -> bool {
        match self {
            Packet::Roce(p) => p.ecn_ce,
            Packet::Mrc10(p) => p.ecn_ce(),
        }
    }
    /// A switch marks congestion experienced.
    pub fn mark_ce(&mut self) {
        match self {
            Packet::Roce(p) => p.ecn_ce = true,
            Packet::Mrc10(p) => p.ecn = ECN_CE,
        }
    }
    /// A switch cut the payload.
    pub fn trimmed(&self) -> bool {
        match self {
            Packet::Roce(p) => p.trimmed,
            Packet::Mrc10(p) => p.trimmed(),
        }
    }
    /// A switch may cut this packet's payload: a data packet with payload,
    /// and (MRC 1.0) in a trimmable class.
    pub fn trimmable(&self) -> bool {
        match self {
            Packet::Roce(p) => p.bth.opcode.is_write() && !p.payload.is_empty() && !p.trimmed,
            Packet::Mrc10(p) => {
                p.bth.opcode.is_write()
                    && !p.payload.is_empty()
                    && matches!(p.class, TrafficClass::Trimmable | TrafficClass::TrimmableRetx)
            }
        }
    }
    /// A switch cuts the payload (and pad). `last_hop`: the switch port that
    /// trims leads to the destination host, so every path shares the
    /// congestion; MRC 1.0 says so with its own DSCP (TRIMMED_LASTHOP), the
    /// legacy profile cannot.
    pub fn trim(&mut self, last_hop: bool) {
        match self {
            Packet::Roce(p) => {
                p.payload = Bytes::new();
                p.trimmed = true;
            }
            Packet::Mrc10(p) => {
                p.payload = Bytes::new();
                p.class = if last_hop {
                    TrafficClass::TrimmedLastHop
                } else {
                    TrafficClass::Trimmed
                };
            }
        }
    }
    /// Length of the frame [`Packet::emit_frame`] writes (no FCS).
    pub fn frame_len(&self, encap: &Encap) -> usize {
        match self {
            Packet::Roce(p) => super::frame_len(p, encap),
            Packet::Mrc10(p) => mrc10::frame_len(p, encap),
        }
    }
    /// Append the whole frame; `profile` gives MRC 1.0's DSCP numbers and EV
    /// mode.
    pub fn emit_frame(&self, encap: &Encap, profile: &Profile, out: &mut Vec<u8>) {
        match self {
            Packet::Roce(p) => super::emit_frame(p, encap, out),
            Packet::Mrc10(p) => mrc10::emit_frame(p, encap, profile, out),
        }
    }
    /// Check that the packet is one the parser returns (see
    /// [`RocePacket::validate`] and [`Mrc10Packet::validate`]).
    pub fn validate(&self, profile: &Profile) -> Result<(), super::ReprError> {
        match self {
            Packet::Roce(p) => p.validate(),
            Packet::Mrc10(p) => p.validate(profile),
        }
    }
    /// Parse a frame of either protocol, by its BTH opcode.
    pub fn parse_frame(frame: &[u8], profile: &Profile) -> Result<(Packet, Encap), WireError> {
        if frame_is_mrc10(frame) {
            mrc10::parse_frame(frame, profile).map(|(p, e)| (Packet::Mrc10(p), e))
        } else {
            super::parse_frame(frame).map(|(p, e)| (Packet::Roce(p), e))
        }
    }
}

/// The frame's BTH opcode is an MRC 1.0 one. Reads the opcode byte where an
/// Ethernet (one 802.1Q tag allowed) / IP / UDP frame puts it; a frame too
/// short or of another shape goes to the RoCEv2 parser, which names what is
/// wrong with it.
pub fn frame_is_mrc10(frame: &[u8]) -> bool {
    let ethertype_at = |at: usize| frame.get(at..at + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
    const ETHERTYPE_AT: usize = ethernet::HEADER_LEN - 2;
    let mut l2 = ethernet::HEADER_LEN;
    let mut ethertype = ethertype_at(ETHERTYPE_AT);
    if ethertype == Some(ethernet::ETHERTYPE_VLAN) {
        l2 += ethernet::VLAN_TAG_LEN;
        ethertype = ethertype_at(ETHERTYPE_AT + ethernet::VLAN_TAG_LEN);
    }
    let ip_len = match ethertype {
        Some(ethernet::ETHERTYPE_IPV4) => ipv4::HEADER_LEN,
        Some(ethernet::ETHERTYPE_IPV6) => ipv6::HEADER_LEN,
        _ => return false,
    };
    // The opcode is the BTH's first byte.
    let at = l2 + ip_len + udp::HEADER_LEN;
    frame.get(at).is_some_and(|op| mrc10::Opcode::RANGE.contains(op))
}

/// Where the IP header of an Ethernet frame (one 802.1Q tag allowed)
/// starts, and its ethertype.
fn ip_header_of(frame: &[u8]) -> Result<(usize, u16), WireError> {
    let ethertype_at = |at: usize| {
        frame
            .get(at..at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or(WireError::Truncated {
                layer: super::error::Layer::Ethernet,
            })
    };
    const ETHERTYPE_AT: usize = ethernet::HEADER_LEN - 2;
    let ethertype = ethertype_at(ETHERTYPE_AT)?;
    if ethertype == ethernet::ETHERTYPE_VLAN {
        let inner = ethertype_at(ETHERTYPE_AT + ethernet::VLAN_TAG_LEN)?;
        return Ok((ethernet::HEADER_LEN + ethernet::VLAN_TAG_LEN, inner));
    }
    Ok((ethernet::HEADER_LEN, ethertype))
}

/// ECN code point "congestion experienced".
const ECN_CE_BITS: u8 = 0b11;

/// What an ECN-marking switch does to a frame of either protocol: set the
/// IP ECN field to CE in place (and the IPv4 header checksum). The ICRC
/// masks the field, so it stays valid.
pub fn mark_ce_in_frame(frame: &mut [u8]) -> Result<(), WireError> {
    let (ip_at, ethertype) = ip_header_of(frame)?;
    match ethertype {
        ethernet::ETHERTYPE_IPV4 => {
            let mut ip = ipv4::Ipv4Packet::new_checked(&mut frame[ip_at..])?;
            let dscp = ip.dscp();
            ip.set_dscp_ecn(dscp, ECN_CE_BITS);
            ip.fill_checksum();
        }
        ethernet::ETHERTYPE_IPV6 => {
            let mut ip = ipv6::Ipv6Packet::new_checked(&mut frame[ip_at..])?;
            let (tc, flow) = (ip.traffic_class(), ip.flow_label());
            ip.set_word0((tc & !0b11) | ECN_CE_BITS, flow);
        }
        other => return Err(WireError::BadEtherType(other)),
    }
    Ok(())
}

/// What a trimming switch does to a data frame of either protocol: cut
/// the payload (and pad), mark the trimmed class (MRC 1.0: TRIMMED, or
/// TRIMMED_LASTHOP when `last_hop`; the legacy profile has one), fix
/// lengths and checksums, recompute the ICRC.
pub fn trim_frame_of_either(frame: &[u8], last_hop: bool, profile: &Profile) -> Result<Vec<u8>, WireError> {
    if frame_is_mrc10(frame) {
        mrc10::trim_frame(frame, 0, last_hop, profile)
    } else {
        super::trim_frame(frame, 0)
    }
}
