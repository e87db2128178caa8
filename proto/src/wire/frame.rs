//! Whole frames: Ethernet / IPv4|IPv6 / UDP 4791 / BTH / (RETH) (ImmDt)
//! (AETH) (CNP reserved) (MRC ext) / payload / pad / ICRC.
//!
//! Entropy: UDP source port = EV bits 15-0; on IPv6 the flow label's low 16
//! bits = EV bits 31-16 (its top 4 bits are 0). On IPv4 only 16 EV bits
//! survive: a parsed IPv4 packet has `ev < 65536`.
//!
//! ECN: CE (0b11) when `ecn_ce`, otherwise ECT(0) (0b10), as RoCEv2 NICs do.
//!
//! DSCP: [`DSCP_DATA`] on transport packets, [`DSCP_CNP`] on CNPs,
//! [`DSCP_TRIMMED`] on packets a switch has trimmed. On receive a packet is
//! trimmed iff its DSCP is [`DSCP_TRIMMED`]; other DSCPs are accepted (a
//! fabric may re-mark).
//!
//! Trimming: the switch cuts the bytes after the MRC extension (payload and
//! pad; it may keep a payload prefix), sets DSCP to [`DSCP_TRIMMED`], fixes
//! the IP and UDP lengths and the IP checksum, and **recomputes the ICRC**
//! over the trimmed packet (the lengths it changed are ICRC-covered, so it
//! must). The BTH is untouched, so its PadCnt is stale: receivers ignore it
//! on trimmed packets and read every byte between the headers and the ICRC
//! as (truncated) payload. ICRC checking is thus uniform for all packets.

use core::ops::Range;

use bytes::Bytes;

use super::error::{Layer, WireError};
use super::field::need;
use super::*;

/// DSCP of MRC and RC data/ACK packets (AF31, the usual RoCE class).
pub const DSCP_DATA: u8 = 26;
/// DSCP of CNPs (CS6, the usual CNP class).
pub const DSCP_CNP: u8 = 48;
/// DSCP a trimming switch writes: 59 (0b111011), from RFC 2474 pool 2
/// (`xxxx11`, experimental and local use), so it collides with no standard
/// class.
pub const DSCP_TRIMMED: u8 = 59;
/// Bytes of reserved data following the BTH of a CNP.
pub const CNP_RESERVED_LEN: usize = 16;
/// ICRC trailer length.
pub const ICRC_LEN: usize = 4;

/// Source and destination IP addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IpPair {
    V4 { src: [u8; 4], dst: [u8; 4] },
    V6 { src: [u8; 16], dst: [u8; 16] },
}

/// The outer headers of a frame that the transport does not model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Encap {
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    pub ip: IpPair,
}

impl Encap {
    /// Test encapsulation over IPv4: 02:00:00:00:00:01 10.0.0.1 ->
    /// 02:00:00:00:00:02 10.0.0.2.
    pub const fn test_v4() -> Encap {
        Encap {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            ip: IpPair::V4 {
                src: [10, 0, 0, 1],
                dst: [10, 0, 0, 2],
            },
        }
    }
    /// Test encapsulation over IPv6: fd00::1 -> fd00::2.
    pub const fn test_v6() -> Encap {
        let mut src = [0u8; 16];
        src[0] = 0xfd;
        let mut dst = src;
        src[15] = 1;
        dst[15] = 2;
        Encap {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            ip: IpPair::V6 { src, dst },
        }
    }
    /// The same encapsulation seen from the other end.
    pub const fn reversed(&self) -> Encap {
        Encap {
            src_mac: self.dst_mac,
            dst_mac: self.src_mac,
            ip: match self.ip {
                IpPair::V4 { src, dst } => IpPair::V4 { src: dst, dst: src },
                IpPair::V6 { src, dst } => IpPair::V6 { src: dst, dst: src },
            },
        }
    }
    pub const fn ip_header_len(&self) -> usize {
        match self.ip {
            IpPair::V4 { .. } => ipv4::HEADER_LEN,
            IpPair::V6 { .. } => ipv6::HEADER_LEN,
        }
    }
}

impl Default for Encap {
    fn default() -> Self {
        Encap::test_v4()
    }
}

/// The PadCnt for a payload of `len` bytes.
pub const fn pad_for(len: usize) -> u8 {
    ((4 - (len % 4)) % 4) as u8
}

/// UDP source port carrying the EV's low 16 bits.
pub const fn ev_udp_port(ev: u32) -> u16 {
    ev as u16
}

/// IPv6 flow label carrying the EV's high 16 bits.
pub const fn ev_flow_label(ev: u32) -> u32 {
    ev >> 16
}

/// The EV back from the UDP source port and (IPv6) flow label.
pub const fn ev_from_wire(udp_src: u16, flow_label: Option<u32>) -> u32 {
    match flow_label {
        Some(fl) => ((fl & 0xFFFF) << 16) | udp_src as u32,
        None => udp_src as u32,
    }
}

impl RocePacket {
    /// Bytes from the BTH to the end of the transport headers (BTH, RETH,
    /// ImmDt, AETH, CNP reserved bytes, MRC extension).
    pub fn transport_header_len(&self) -> usize {
        bth::HEADER_LEN
            + self.reth.map_or(0, |_| reth::HEADER_LEN)
            + self.imm.map_or(0, |_| immdt::HEADER_LEN)
            + self.aeth.map_or(0, |_| aeth::HEADER_LEN)
            + if self.bth.opcode == Opcode::Cnp {
                CNP_RESERVED_LEN
            } else {
                0
            }
            + self.ext.as_ref().map_or(0, MrcExtRepr::buffer_len)
    }
    /// Pad bytes on the wire: PadCnt, or none on trimmed packets.
    pub fn wire_pad(&self) -> usize {
        if self.trimmed {
            0
        } else {
            usize::from(self.bth.pad & 0b11)
        }
    }
    /// UDP payload length: transport headers, payload, pad, ICRC.
    pub fn udp_payload_len(&self) -> usize {
        self.transport_header_len() + self.payload.len() + self.wire_pad() + ICRC_LEN
    }

    /// Check that this packet is one the parser would return, so that
    /// `parse_frame(emit_frame(p))` gives back `p` exactly when this is `Ok`
    /// (IPv4 keeps only EV bits 15-0). Rules: RETH/ImmDt/AETH present
    /// exactly as the opcode says; the extension present exactly when the X
    /// bit is set, never on a CNP, data only on WRITEs with placement exactly
    /// on WRITE MIDDLE/LAST/LAST-IMM, SACK/NACK/probe only on ACKs with the
    /// matching syndrome; fields within their wire widths; the frame within
    /// the 16-bit IP/UDP length fields. Emitters use it in debug assertions.
    pub fn validate(&self) -> Result<(), ReprError> {
        let op = self.bth.opcode;
        if self.reth.is_some() != op.has_reth()
            || self.imm.is_some() != op.has_imm()
            || self.aeth.is_some() != op.has_aeth()
        {
            return Err(ReprError::HeadersDontFitOpcode { opcode: op.as_u8() });
        }
        let too_wide = |field: &'static str, value: u64, bits: u32| {
            if value >> bits != 0 {
                Err(ReprError::FieldTooWide { field, value })
            } else {
                Ok(())
            }
        };
        too_wide("bth.pad", u64::from(self.bth.pad), 2)?;
        too_wide("bth.dest_qp", u64::from(self.bth.dest_qp), 24)?;
        if let Some(a) = &self.aeth {
            too_wide("aeth.msn", u64::from(a.msn), 24)?;
            let raw = match a.syndrome {
                Syndrome::Ack { credits: v }
                | Syndrome::Rnr { timer: v }
                | Syndrome::Nak { code: v }
                | Syndrome::Reserved(v) => v,
            };
            too_wide("aeth.syndrome value", u64::from(raw), 5)?;
        }
        match (&self.ext, self.bth.mrc_ext) {
            (None, false) => {}
            (Some(e), true) => {
                let ok = match e {
                    MrcExtRepr::Data(d) => op.is_write() && d.placement.is_some() != op.has_reth(),
                    _ => op == Opcode::Ack,
                };
                if !ok {
                    return Err(ReprError::ExtDoesntFit {
                        opcode: op.as_u8(),
                        ext_type: e.ext_type(),
                    });
                }
                if let Err(WireError::SyndromeMismatch { syndrome }) = check_syndrome(self.aeth.as_ref(), e) {
                    return Err(ReprError::SyndromeMismatch { syndrome });
                }
                if let MrcExtRepr::Sack(s) = e {
                    let bits = s.bitmap.bits;
                    if !matches!(bits, 64 | 128 | 256) {
                        return Err(ReprError::BadSackWidth(bits));
                    }
                    if s.bitmap.words.iter().skip(usize::from(bits) / 64).any(|&w| w != 0) {
                        return Err(ReprError::SackBitsBeyondWidth);
                    }
                }
            }
            (Some(_), false) => return Err(ReprError::ExtWithoutXBit),
            (None, true) => return Err(ReprError::XBitWithoutExt),
        }
        let ip_payload = udp::HEADER_LEN + self.udp_payload_len();
        if ipv4::HEADER_LEN + ip_payload > usize::from(u16::MAX) {
            return Err(ReprError::TooLong(ip_payload));
        }
        Ok(())
    }
}

/// Why a [`RocePacket`] cannot be emitted faithfully (it would not parse
/// back to itself). Found by [`RocePacket::validate`]; a bug in the emitter,
/// never a property of received traffic (that is [`WireError`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReprError {
    #[error("RETH/ImmDt/AETH presence does not match opcode {opcode:#04x}")]
    HeadersDontFitOpcode { opcode: u8 },
    #[error("MRC extension type {ext_type} does not fit opcode {opcode:#04x}")]
    ExtDoesntFit { opcode: u8, ext_type: u8 },
    #[error("MRC extension present but the X bit is clear")]
    ExtWithoutXBit,
    #[error("X bit set without an MRC extension")]
    XBitWithoutExt,
    #[error("AETH syndrome {syndrome:#04x} does not match the MRC extension")]
    SyndromeMismatch { syndrome: u8 },
    #[error("SACK bitmap width {0} is not 64, 128 or 256")]
    BadSackWidth(u16),
    #[error("SACK bitmap has bits set beyond its width")]
    SackBitsBeyondWidth,
    #[error("{field} = {value:#x} does not fit its wire field")]
    FieldTooWide { field: &'static str, value: u64 },
    #[error("IP payload of {0} bytes exceeds the 16-bit length fields")]
    TooLong(usize),
    #[error("opcode {opcode:#04x} to QP {dest_qp:#x}: endpoint operations go to the endpoint QP and only they do")]
    WrongQp { opcode: u8, dest_qp: u32 },
    #[error("payload or pad on opcode {opcode:#04x}, which carries none")]
    PayloadNotAllowed { opcode: u8 },
}

fn check_syndrome(aeth: Option<&AethRepr>, ext: &MrcExtRepr) -> Result<(), WireError> {
    let Some(aeth) = aeth else { return Ok(()) };
    let ok = match ext {
        MrcExtRepr::Nack(n) => aeth.syndrome == Syndrome::for_nack(n.kind),
        MrcExtRepr::Sack(_) | MrcExtRepr::Probe(_) => matches!(aeth.syndrome, Syndrome::Ack { .. }),
        MrcExtRepr::Data(_) => true,
    };
    if ok {
        Ok(())
    } else {
        Err(WireError::SyndromeMismatch {
            syndrome: aeth.syndrome.to_u8(),
        })
    }
}

/// Length of the whole frame `emit_frame` writes (no FCS).
pub fn frame_len(pkt: &RocePacket, encap: &Encap) -> usize {
    ethernet::HEADER_LEN + encap.ip_header_len() + udp::HEADER_LEN + pkt.udp_payload_len()
}

/// What the outer layers (Ethernet, IP, UDP) of a RoCEv2-encapsulated
/// frame carry beyond its [`Encap`]; the same for RoCEv2 and MRC 1.0
/// frames, which differ only from the BTH on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OuterFields {
    pub dscp: u8,
    /// IP ECN code point (2 bits).
    pub ecn: u8,
    pub src_port: u16,
    /// IPv6 only (ignored on IPv4).
    pub flow_label: u32,
    /// UDP payload bytes: BTH through ICRC.
    pub udp_len: usize,
}

/// Write Ethernet, IP and UDP into `buf`; return the offset of the UDP
/// payload (the BTH) and the rest of `buf` from there. Short buffers are
/// written as far as they go.
#[inline]
pub fn emit_outer<'b>(encap: &Encap, o: &OuterFields, buf: &'b mut [u8]) -> (usize, &'b mut [u8]) {
    let (ethertype, ip_len) = match encap.ip {
        IpPair::V4 { .. } => (ethernet::ETHERTYPE_IPV4, ipv4::HEADER_LEN),
        IpPair::V6 { .. } => (ethernet::ETHERTYPE_IPV6, ipv6::HEADER_LEN),
    };
    let (eth_buf, rest) = buf.split_at_mut(ethernet::HEADER_LEN.min(buf.len()));
    EthernetRepr {
        src: encap.src_mac,
        dst: encap.dst_mac,
        ethertype,
    }
    .emit(&mut EthernetFrame::new_unchecked(eth_buf));
    let (ip_buf, rest) = rest.split_at_mut(ip_len.min(rest.len()));
    let ip_payload = udp::HEADER_LEN + o.udp_len;
    match encap.ip {
        IpPair::V4 { src, dst } => Ipv4Repr {
            src,
            dst,
            dscp: o.dscp,
            ecn: o.ecn,
            ttl: ipv4::DEFAULT_TTL,
            protocol: ipv4::PROTO_UDP,
            payload_len: ip_payload,
        }
        .emit(&mut Ipv4Packet::new_unchecked(ip_buf)),
        IpPair::V6 { src, dst } => Ipv6Repr {
            src,
            dst,
            dscp: o.dscp,
            ecn: o.ecn,
            flow_label: o.flow_label,
            next_header: ipv4::PROTO_UDP,
            hop_limit: ipv4::DEFAULT_TTL,
            payload_len: ip_payload,
        }
        .emit(&mut Ipv6Packet::new_unchecked(ip_buf)),
    }
    let (udp_buf, rest) = rest.split_at_mut(udp::HEADER_LEN.min(rest.len()));
    UdpRepr {
        src_port: o.src_port,
        dst_port: ROCEV2_UDP_PORT,
        payload_len: o.udp_len,
    }
    .emit(&mut UdpPacket::new_unchecked(udp_buf));
    (ethernet::HEADER_LEN + ip_len + udp::HEADER_LEN, rest)
}

/// The outer layers of a received frame, checked: what [`parse_outer`]
/// found and where the transport lies.
#[derive(Clone, Copy, Debug)]
pub struct ParsedOuter<'a> {
    pub encap: Encap,
    pub dscp: u8,
    pub ecn: u8,
    pub src_port: u16,
    /// IPv6 only.
    pub flow_label: Option<u32>,
    /// BTH through the last byte before the ICRC.
    pub transport: &'a [u8],
    /// Offset of `transport` in the frame.
    pub transport_at: usize,
}

/// Parse Ethernet, IP (v4 or v6, UDP only) and UDP (port 4791), delimit
/// the transport (Ethernet padding after the datagram is ignored) and,
/// with `verify_icrc`, check the ICRC as soon as the datagram is
/// delimited, before any transport field is trusted (corruption counts as
/// `BadIcrc`, not as the field it hit). Checks in wire order; the first
/// failure is returned.
#[inline]
pub fn parse_outer(frame: &[u8], verify_icrc: bool) -> Result<ParsedOuter<'_>, WireError> {
    let eth = EthernetFrame::new_checked(frame)?;
    let eth_repr = EthernetRepr::parse(&eth)?;
    let ip_at = eth.header_len();
    let ip_bytes = frame.get(ip_at..).unwrap_or(&[]);
    let (ip, ip_hl, ecn, dscp, flow_label, udp_range) = match eth_repr.ethertype {
        ethernet::ETHERTYPE_IPV4 => {
            let p = Ipv4Packet::new_unchecked(ip_bytes);
            let r = Ipv4Repr::parse(&p)?;
            if r.protocol != ipv4::PROTO_UDP {
                return Err(WireError::NotUdp(r.protocol));
            }
            let hl = p.header_len();
            let ip = IpPair::V4 { src: r.src, dst: r.dst };
            (ip, hl, r.ecn, r.dscp, None, hl..hl + r.payload_len)
        }
        ethernet::ETHERTYPE_IPV6 => {
            let r = Ipv6Repr::parse(&Ipv6Packet::new_unchecked(ip_bytes))?;
            if r.next_header != ipv4::PROTO_UDP {
                return Err(WireError::NotUdp(r.next_header));
            }
            let hl = ipv6::HEADER_LEN;
            let ip = IpPair::V6 { src: r.src, dst: r.dst };
            (ip, hl, r.ecn, r.dscp, Some(r.flow_label), hl..hl + r.payload_len)
        }
        t => return Err(WireError::BadEtherType(t)),
    };
    let udp_bytes = ip_bytes
        .get(udp_range.clone())
        .ok_or(WireError::Truncated { layer: Layer::Udp })?;
    let udp_p = UdpPacket::new_checked(udp_bytes)?;
    let udp_r = UdpRepr::parse(&udp_p)?;
    if udp_r.dst_port != ROCEV2_UDP_PORT {
        return Err(WireError::WrongUdpPort(udp_r.dst_port));
    }
    // Transport: BTH through the last pad byte; the ICRC follows (the
    // bytes `UdpPacket::payload` names, borrowed from the frame).
    let transport = udp_bytes.get(udp::HEADER_LEN..usize::from(udp_p.len())).unwrap_or(&[]);
    need(transport, bth::HEADER_LEN + ICRC_LEN, Layer::Bth)?;
    let icrc_at = transport.len() - ICRC_LEN;
    if verify_icrc {
        let covered = ip_bytes
            .get(..udp_range.start + udp::HEADER_LEN + icrc_at)
            .unwrap_or(&[]);
        let computed = icrc::compute_icrc(covered, ip_hl, flow_label.is_some());
        let expected = match transport.get(icrc_at..) {
            Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
            _ => 0,
        };
        if expected != computed {
            return Err(WireError::BadIcrc { expected, computed });
        }
    }
    Ok(ParsedOuter {
        encap: Encap {
            src_mac: eth_repr.src,
            dst_mac: eth_repr.dst,
            ip,
        },
        dscp,
        ecn,
        src_port: udp_r.src_port,
        flow_label,
        transport: transport.get(..icrc_at).unwrap_or(&[]),
        transport_at: ip_at + udp_range.start + udp::HEADER_LEN,
    })
}

/// Write Ethernet through the end of the transport headers into `buf`
/// (which must hold `frame_len` bytes); return the payload offset. The
/// length fields already account for payload, pad and ICRC.
pub fn emit_headers(pkt: &RocePacket, encap: &Encap, buf: &mut [u8]) -> usize {
    let dscp = if pkt.trimmed {
        DSCP_TRIMMED
    } else if pkt.bth.opcode == Opcode::Cnp {
        DSCP_CNP
    } else {
        DSCP_DATA
    };
    let outer = OuterFields {
        dscp,
        ecn: if pkt.ecn_ce { ipv4::ecn::CE } else { ipv4::ecn::ECT0 },
        src_port: ev_udp_port(pkt.ev),
        flow_label: ev_flow_label(pkt.ev),
        udp_len: pkt.udp_payload_len(),
    };
    let (at, rest) = emit_outer(encap, &outer, buf);
    at + emit_transport_headers(pkt, rest)
}

/// Write BTH .. MRC extension into `buf`; return the bytes written.
pub fn emit_transport_headers(pkt: &RocePacket, buf: &mut [u8]) -> usize {
    let mut at = 0;
    let mut next = |len: usize, buf: &mut [u8]| -> Range<usize> {
        let r = at..(at + len).min(buf.len());
        at += len;
        r
    };
    let r = next(bth::HEADER_LEN, buf);
    if let Some(s) = buf.get_mut(r) {
        pkt.bth.emit(&mut BthPacket::new_unchecked(s));
    }
    if let Some(reth) = &pkt.reth {
        let r = next(reth::HEADER_LEN, buf);
        if let Some(s) = buf.get_mut(r) {
            reth.emit(&mut RethPacket::new_unchecked(s));
        }
    }
    if let Some(imm) = pkt.imm {
        let r = next(immdt::HEADER_LEN, buf);
        if let Some(s) = buf.get_mut(r) {
            ImmDtRepr { imm }.emit(&mut ImmDtPacket::new_unchecked(s));
        }
    }
    if let Some(a) = &pkt.aeth {
        let r = next(aeth::HEADER_LEN, buf);
        if let Some(s) = buf.get_mut(r) {
            a.emit(&mut AethPacket::new_unchecked(s));
        }
    }
    if pkt.bth.opcode == Opcode::Cnp {
        let r = next(CNP_RESERVED_LEN, buf);
        if let Some(s) = buf.get_mut(r) {
            s.fill(0);
        }
    }
    if let Some(e) = &pkt.ext {
        let r = next(e.buffer_len(), buf);
        if let Some(s) = buf.get_mut(r) {
            e.emit(&mut MrcExtPacket::new_unchecked(s));
        }
    }
    at
}

/// Append the full Ethernet frame of `pkt` (no FCS): headers, payload, pad
/// (zeros) and ICRC. Lengths are written as `u16`: callers keep payloads
/// under the MTU ([`RocePacket::validate`] checks the 64 KiB limit).
pub fn emit_frame(pkt: &RocePacket, encap: &Encap, out: &mut Vec<u8>) {
    let start = out.len();
    let len = frame_len(pkt, encap);
    out.resize(start + len, 0);
    let buf = &mut out[start..];
    let at = emit_headers(pkt, encap, buf);
    let end = at + pkt.payload.len();
    buf[at..end].copy_from_slice(&pkt.payload);
    // Pad bytes are already zero from `resize`.
    let icrc_at = len - ICRC_LEN;
    let ip_hl = encap.ip_header_len();
    let icrc = icrc::compute_icrc(
        &buf[ethernet::HEADER_LEN..icrc_at],
        ip_hl,
        matches!(encap.ip, IpPair::V6 { .. }),
    );
    buf[icrc_at..].copy_from_slice(&icrc.to_le_bytes());
}

/// A frame whose headers parsed: the packet with an empty payload, where
/// its payload lies in the frame, and where the ICRC check covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedHeaders {
    pub packet: RocePacket,
    pub encap: Encap,
    /// Payload byte range within the frame.
    pub payload: Range<usize>,
}

/// Parse and validate every header, without the ICRC check and without
/// copying the payload (the fast path the header benchmark measures; a
/// receiver must still check the ICRC, as [`parse_frame`] does).
pub fn parse_frame_headers(frame: &[u8]) -> Result<ParsedHeaders, WireError> {
    let mut out = ParsedHeaders::new();
    parse_inner(frame, false, &mut out)?;
    Ok(out)
}

/// [`parse_frame_headers`] into a caller-owned, reusable `out` (the
/// allocation- and copy-free receive path). On error `out` holds garbage.
pub fn parse_frame_headers_into(frame: &[u8], out: &mut ParsedHeaders) -> Result<(), WireError> {
    parse_inner(frame, false, out)
}

/// [`parse_frame_headers_into`] with the ICRC check.
pub fn parse_frame_checked_into(frame: &[u8], out: &mut ParsedHeaders) -> Result<(), WireError> {
    parse_inner(frame, true, out)
}

impl ParsedHeaders {
    /// A placeholder to parse into.
    pub fn new() -> ParsedHeaders {
        ParsedHeaders {
            packet: RocePacket {
                ev: 0,
                ecn_ce: false,
                trimmed: false,
                bth: BthRepr {
                    opcode: Opcode::Cnp,
                    solicited: false,
                    mig_req: false,
                    pad: 0,
                    pkey: 0,
                    fecn: false,
                    becn: false,
                    mrc_ext: false,
                    dest_qp: 0,
                    ack_req: false,
                    psn: crate::Psn::new(0),
                },
                reth: None,
                imm: None,
                aeth: None,
                ext: None,
                payload: Bytes::new(),
            },
            encap: Encap::test_v4(),
            payload: 0..0,
        }
    }
}

impl Default for ParsedHeaders {
    fn default() -> Self {
        ParsedHeaders::new()
    }
}

/// Parse a frame, verifying every length, the UDP port, the opcode, IP
/// version and checksum, the extension rules and the ICRC. The payload is
/// copied.
pub fn parse_frame(frame: &[u8]) -> Result<(RocePacket, Encap), WireError> {
    let mut h = ParsedHeaders::new();
    parse_inner(frame, true, &mut h)?;
    let mut pkt = h.packet;
    pkt.payload = Bytes::copy_from_slice(frame.get(h.payload).unwrap_or(&[]));
    Ok((pkt, h.encap))
}

/// [`parse_frame`] with a zero-copy payload (a `Bytes::slice` of `frame`).
pub fn parse_frame_bytes(frame: Bytes) -> Result<(RocePacket, Encap), WireError> {
    let mut h = ParsedHeaders::new();
    parse_inner(&frame, true, &mut h)?;
    let mut pkt = h.packet;
    pkt.payload = frame.slice(h.payload);
    Ok((pkt, h.encap))
}

/// Checks in wire order; the first failure is returned. The ICRC is checked
/// as soon as the UDP datagram is delimited, before any transport field is
/// trusted, so corruption counts as `BadIcrc` rather than as whatever field
/// it happened to garble.
fn parse_inner(frame: &[u8], verify_icrc: bool, out: &mut ParsedHeaders) -> Result<(), WireError> {
    let o = parse_outer(frame, verify_icrc)?;
    let t = o.transport;
    let bth_p = BthPacket::new_checked(t)?;
    let bth_r = BthRepr::parse(&bth_p)?;
    let op = bth_r.opcode;
    let mut at = bth::HEADER_LEN;
    let rest = |at: usize| t.get(at..).unwrap_or(&[]);
    let reth = if op.has_reth() {
        let r = RethRepr::parse(&RethPacket::new_checked(rest(at))?)?;
        at += reth::HEADER_LEN;
        Some(r)
    } else {
        None
    };
    let imm = if op.has_imm() {
        let r = ImmDtRepr::parse(&ImmDtPacket::new_checked(rest(at))?)?;
        at += immdt::HEADER_LEN;
        Some(r.imm)
    } else {
        None
    };
    let aeth_r = if op.has_aeth() {
        let r = AethRepr::parse(&AethPacket::new_checked(rest(at))?)?;
        at += aeth::HEADER_LEN;
        Some(r)
    } else {
        None
    };
    if op == Opcode::Cnp {
        need(rest(at), CNP_RESERVED_LEN, Layer::Cnp)?;
        at += CNP_RESERVED_LEN;
    }
    let pkt = &mut out.packet;
    pkt.ext = None;
    if bth_r.mrc_ext {
        let p = MrcExtPacket::new_unchecked(rest(at));
        at += MrcExtRepr::parse_into(&p, op, &mut pkt.ext)?;
        if let Some(e) = &pkt.ext {
            check_syndrome(aeth_r.as_ref(), e)?;
        }
    }
    let trimmed = o.dscp == DSCP_TRIMMED;
    let remaining = t.len() - at.min(t.len());
    let pad = if trimmed { 0 } else { usize::from(bth_r.pad) };
    if pad > remaining {
        return Err(WireError::BadPadCount {
            pad: bth_r.pad,
            len: remaining,
        });
    }
    let payload_start = o.transport_at + at;
    pkt.ev = ev_from_wire(o.src_port, o.flow_label);
    pkt.ecn_ce = o.ecn == ipv4::ecn::CE;
    pkt.trimmed = trimmed;
    pkt.bth = bth_r;
    pkt.reth = reth;
    pkt.imm = imm;
    pkt.aeth = aeth_r;
    if !pkt.payload.is_empty() {
        // Release a payload left from a previous use of `out` (skipping the
        // drop of an already-empty one keeps the hot path free of calls).
        pkt.payload = Bytes::new();
    }
    out.encap = o.encap;
    out.payload = payload_start..payload_start + (remaining - pad);
    Ok(())
}

/// What a trimming switch does to a frame: keep the headers and the first
/// `keep` payload bytes, mark DSCP [`DSCP_TRIMMED`], fix lengths and
/// checksums and recompute the ICRC. The input must be a valid frame.
pub fn trim_frame(frame: &[u8], keep: usize) -> Result<Vec<u8>, WireError> {
    let (mut pkt, encap) = parse_frame(frame)?;
    pkt.trimmed = true;
    pkt.payload.truncate(keep);
    let mut out = Vec::with_capacity(frame_len(&pkt, &encap));
    emit_frame(&pkt, &encap, &mut out);
    Ok(out)
}
