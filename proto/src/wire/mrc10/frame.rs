//! Whole MRC 1.0 frames: Ethernet / IPv4|IPv6 / UDP 4791 / BTH / the
//! opcode's headers / payload / pad / ICRC, with the Ethernet, IP, UDP and
//! ICRC code of the legacy profile ([`crate::wire::frame`]).
//!
//! The EV goes to the UDP source port and flow label as the [`Profile`]'s
//! [`EvMode`] and [`super::choices::ev_to_wire`] say; the DSCP is the
//! profile's number for the packet's [`TrafficClass`]; ECN is carried as
//! is. A trimmed packet (class TRIMMED or TRIMMED_LASTHOP) has lost its pad
//! with its payload: PadCnt is ignored and every byte between the headers
//! and the ICRC is (cut) payload, as in the legacy profile.

use core::ops::Range;

use bytes::Bytes;

use super::choices::{self, EvMode, Profile, TrafficClass};
use super::{bth, BthPacket, BthRepr, Headers, Mrc10Packet, Opcode};
use crate::wire::frame::{emit_outer, parse_outer, OuterFields, ICRC_LEN};
use crate::wire::{ethernet, icrc, udp, Encap, IpPair, WireError};

/// Length of the frame [`emit_frame`] writes (no FCS).
pub fn frame_len(pkt: &Mrc10Packet, encap: &Encap) -> usize {
    ethernet::HEADER_LEN + encap.ip_header_len() + udp::HEADER_LEN + pkt.udp_payload_len()
}

/// Write Ethernet through the last transport header into `buf` (which holds
/// [`frame_len`] bytes); return the payload offset. The length fields
/// already count payload, pad and ICRC.
pub fn emit_headers(pkt: &Mrc10Packet, encap: &Encap, profile: &Profile, buf: &mut [u8]) -> usize {
    let (src_port, flow_label) = choices::ev_to_wire(pkt.ev, profile.ev_mode);
    let outer = OuterFields {
        dscp: profile.dscp.dscp_of(pkt.class),
        ecn: pkt.ecn & 0b11,
        src_port,
        flow_label,
        udp_len: pkt.udp_payload_len(),
    };
    let (at, rest) = emit_outer(encap, &outer, buf);
    let (bth_buf, rest) = rest.split_at_mut(bth::HEADER_LEN.min(rest.len()));
    pkt.bth.emit(&mut BthPacket::new_unchecked(bth_buf));
    pkt.headers.emit(rest);
    at + pkt.transport_header_len()
}

/// Append the whole frame of `pkt` (no FCS): headers, payload, zero pad and
/// ICRC. Emitters keep packets valid ([`Mrc10Packet::validate`]).
pub fn emit_frame(pkt: &Mrc10Packet, encap: &Encap, profile: &Profile, out: &mut Vec<u8>) {
    let start = out.len();
    let len = frame_len(pkt, encap);
    // The headers, then the payload appended: a full-size packet's
    // payload is not zero-filled first only to be overwritten.
    let head = len - pkt.payload.len() - pkt.wire_pad() - ICRC_LEN;
    out.reserve(len);
    out.resize(start + head, 0);
    let at = emit_headers(pkt, encap, profile, &mut out[start..]);
    debug_assert_eq!(at, head, "the headers end where the payload starts");
    out.extend_from_slice(&pkt.payload);
    out.resize(start + len, 0);
    let buf = &mut out[start..];
    let icrc_at = len - ICRC_LEN;
    let icrc = icrc::compute_icrc(
        &buf[ethernet::HEADER_LEN..icrc_at],
        encap.ip_header_len(),
        matches!(encap.ip, IpPair::V6 { .. }),
    );
    buf[icrc_at..].copy_from_slice(&icrc.to_le_bytes());
}

/// [`emit_frame`] without copying the payload: appends the headers, the
/// zero pad and the ICRC (computed over the payload where it lies) and
/// returns where, counted from the start of what was appended, the
/// payload belongs. The frame is what was appended up to there,
/// `pkt.payload`, then the rest: a sender gathers the three (`sendmsg`
/// with an `iovec` each) and the payload is copied once, by the kernel.
pub fn emit_frame_around_payload(pkt: &Mrc10Packet, encap: &Encap, profile: &Profile, out: &mut Vec<u8>) -> usize {
    let start = out.len();
    let len = frame_len(pkt, encap);
    let head = len - pkt.payload.len() - pkt.wire_pad() - ICRC_LEN;
    out.reserve(head + pkt.wire_pad() + ICRC_LEN);
    out.resize(start + head, 0);
    let at = emit_headers(pkt, encap, profile, &mut out[start..]);
    debug_assert_eq!(at, head, "the headers end where the payload starts");
    out.resize(start + head + pkt.wire_pad(), 0);
    let icrc = icrc::compute_icrc_parts(
        &out[start + ethernet::HEADER_LEN..start + head],
        &[&pkt.payload, &out[start + head..]],
        encap.ip_header_len(),
        matches!(encap.ip, IpPair::V6 { .. }),
    );
    out.extend_from_slice(&icrc.to_le_bytes());
    head
}

/// Parse the transport part up to the payload: the BTH, the endpoint-QP
/// rule and the opcode's headers. Returns them and the bytes they took.
/// No ICRC here: `t` ends before it.
pub fn parse_transport(t: &[u8]) -> Result<(BthRepr, Headers, usize), WireError> {
    let bth_r = BthRepr::parse(&BthPacket::new_checked(t)?)?;
    let op = bth_r.opcode;
    if op.is_endpoint() != (bth_r.dest_qp == choices::ENDPOINT_QPN) {
        return Err(WireError::EndpointQpMismatch {
            opcode: op.as_u8(),
            dest_qp: bth_r.dest_qp,
        });
    }
    let (headers, len) = Headers::parse(t.get(bth::HEADER_LEN..).unwrap_or(&[]), op, bth_r.timestamp)?;
    Ok((bth_r, headers, bth::HEADER_LEN + len))
}

/// A frame whose headers parsed: the packet with an empty payload, its
/// encapsulation, and where the payload lies in the frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedFrame {
    pub packet: Mrc10Packet,
    pub encap: Encap,
    /// Payload byte range within the frame.
    pub payload: Range<usize>,
}

impl ParsedFrame {
    /// A placeholder to parse into.
    pub fn new() -> ParsedFrame {
        ParsedFrame {
            packet: super::catalog::ack(0),
            encap: Encap::test_v4(),
            payload: 0..0,
        }
    }
}

impl Default for ParsedFrame {
    fn default() -> Self {
        ParsedFrame::new()
    }
}

/// Parse a frame, checking every length, the UDP port, IP version and
/// checksum, the ICRC, the opcode and its headers; the payload is copied.
pub fn parse_frame(frame: &[u8], profile: &Profile) -> Result<(Mrc10Packet, Encap), WireError> {
    let mut p = ParsedFrame::new();
    parse_inner(frame, profile, true, &mut p)?;
    let mut pkt = p.packet;
    pkt.payload = Bytes::copy_from_slice(frame.get(p.payload).unwrap_or(&[]));
    Ok((pkt, p.encap))
}

/// [`parse_frame`] without the ICRC check and the payload copy (a receiver
/// still checks the ICRC); the payload is the range `payload`.
pub fn parse_frame_headers(frame: &[u8], profile: &Profile) -> Result<ParsedFrame, WireError> {
    let mut p = ParsedFrame::new();
    parse_inner(frame, profile, false, &mut p)?;
    Ok(p)
}

/// [`parse_frame_headers`] into a caller-owned, reusable `out` (the
/// allocation- and copy-free receive path the benchmark measures). On error
/// `out` holds garbage.
pub fn parse_frame_headers_into(frame: &[u8], profile: &Profile, out: &mut ParsedFrame) -> Result<(), WireError> {
    parse_inner(frame, profile, false, out)
}

/// [`parse_frame_headers_into`] with the ICRC check.
pub fn parse_frame_checked_into(frame: &[u8], profile: &Profile, out: &mut ParsedFrame) -> Result<(), WireError> {
    parse_inner(frame, profile, true, out)
}

/// Checks in wire order ([`parse_outer`] first, the ICRC included); the
/// first failure is returned.
fn parse_inner(frame: &[u8], profile: &Profile, verify_icrc: bool, out: &mut ParsedFrame) -> Result<(), WireError> {
    let o = parse_outer(frame, verify_icrc)?;
    let t = o.transport;
    let (bth_r, headers, at) = parse_transport(t)?;
    let class = profile.dscp.class_of(o.dscp);
    let trimmed = matches!(class, TrafficClass::Trimmed | TrafficClass::TrimmedLastHop);
    let remaining = t.len().saturating_sub(at);
    let op = bth_r.opcode;
    let pad = if op.is_write() && trimmed {
        0
    } else {
        usize::from(bth_r.pad)
    };
    if pad > remaining || (!op.is_write() && pad != 0) {
        return Err(WireError::BadPadCount {
            pad: bth_r.pad,
            len: remaining,
        });
    }
    if !op.is_write() && remaining != 0 {
        return Err(WireError::UnexpectedPayload {
            opcode: op.as_u8(),
            len: remaining,
        });
    }
    let flow_label = match profile.ev_mode {
        EvMode::SourcePortAndFlowLabel => o.flow_label,
        EvMode::SourcePort => None,
    };
    let payload_start = o.transport_at + at;
    let pkt = &mut out.packet;
    pkt.ev = choices::ev_from_wire(o.src_port, flow_label, profile.ev_mode);
    pkt.ecn = o.ecn;
    pkt.class = class;
    pkt.bth = bth_r;
    pkt.headers = headers;
    if !pkt.payload.is_empty() {
        // Release a payload left from a previous use of `out` (skipping the
        // drop of an already-empty one keeps the hot path free of calls).
        pkt.payload = Bytes::new();
    }
    out.encap = o.encap;
    out.payload = payload_start..payload_start + (remaining - pad);
    Ok(())
}

/// What a trimming switch does to an MRC 1.0 data frame: keep the headers
/// and the first `keep` payload bytes, mark the class TRIMMED (or
/// TRIMMED_LASTHOP when `last_hop`), fix lengths and checksums, recompute
/// the ICRC. The input must be a valid frame under `profile`.
pub fn trim_frame(frame: &[u8], keep: usize, last_hop: bool, profile: &Profile) -> Result<Vec<u8>, WireError> {
    let (mut pkt, encap) = parse_frame(frame, profile)?;
    pkt.class = if last_hop {
        TrafficClass::TrimmedLastHop
    } else {
        TrafficClass::Trimmed
    };
    pkt.payload.truncate(keep);
    let mut out = Vec::with_capacity(frame_len(&pkt, &encap));
    emit_frame(&pkt, &encap, profile, &mut out);
    Ok(out)
}

/// True when the opcode byte of a RoCEv2 transport (the byte after the UDP
/// header) names MRC 1.0, so decoders pick this parser over the legacy one.
pub const fn is_mrc10_opcode(opcode: u8) -> bool {
    Opcode::from_u8(opcode).is_some()
}
