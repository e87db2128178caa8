//! Parse errors, their counter kinds, and the drop counters.
//!
//! Every malformed frame is dropped *and* counted: callers match on the
//! [`WireError`] for diagnostics and feed it to [`WireCounters::count`].

use thiserror::Error;

/// The header (or trailer) a length check failed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layer {
    Ethernet,
    Vlan,
    Ipv4,
    Ipv6,
    Udp,
    Bth,
    Reth,
    ImmDt,
    Aeth,
    MrcExt,
    Cnp,
    /// MRC 1.0 message extension header.
    Meth,
    /// MRC 1.0 timestamp extension header.
    Tseth,
    /// MRC 1.0 SACK extension header.
    Seth,
    /// MRC 1.0 congestion-control state that follows the SETH.
    CcState,
    /// MRC 1.0 NACK extension header.
    Neth,
    /// MRC 1.0 reliability-probe extension header.
    Peth,
    /// MRC 1.0 endpoint-request extension header.
    Erth,
    /// MRC 1.0 endpoint-EV extension header.
    Eeth,
    /// Payload, pad and ICRC trailer.
    Trailer,
}

/// Why a frame was rejected. One variant per distinct failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum WireError {
    /// The buffer ends inside `layer`.
    #[error("truncated in {layer:?}")]
    Truncated { layer: Layer },
    /// EtherType is neither IPv4, IPv6 nor one 802.1Q tag followed by those.
    #[error("unsupported EtherType {0:#06x}")]
    BadEtherType(u16),
    /// IP version nibble disagrees with the EtherType.
    #[error("bad IP version {0}")]
    BadIpVersion(u8),
    /// IPv4 IHL below 5 words.
    #[error("bad IPv4 header length {0} words")]
    BadIpHeaderLen(u8),
    /// IPv4 header checksum does not verify.
    #[error("bad IPv4 header checksum")]
    BadIpChecksum,
    /// IPv4 fragment (MF set or non-zero offset): RoCEv2 never fragments.
    #[error("IPv4 fragment")]
    IpFragment,
    /// IP protocol / next header is not UDP (17).
    #[error("IP protocol {0} is not UDP")]
    NotUdp(u8),
    /// UDP destination port is not 4791.
    #[error("UDP destination port {0} is not RoCEv2 (4791)")]
    WrongUdpPort(u16),
    /// A length field disagrees with the bytes present (IP total length,
    /// IPv6 payload length or UDP length).
    #[error("{layer:?} length field says {declared}, {actual} bytes available")]
    BadLength {
        layer: Layer,
        declared: usize,
        actual: usize,
    },
    /// BTH opcode this transport never uses.
    #[error("unknown BTH opcode {0:#04x}")]
    UnknownOpcode(u8),
    /// BTH TVer is not 0.
    #[error("bad BTH transport version {0}")]
    BadTransportVersion(u8),
    /// BTH PadCnt larger than the payload it pads, or pad on a packet that
    /// cannot carry payload.
    #[error("bad pad count {pad} for {len} payload bytes")]
    BadPadCount { pad: u8, len: usize },
    /// MRC extension type nibble is not 1..=4.
    #[error("unknown MRC extension type {0}")]
    UnknownExtType(u8),
    /// MRC extension version nibble is not [`super::mrc_ext::MRC_EXT_VERSION`].
    #[error("bad MRC extension version {0}")]
    BadExtVersion(u8),
    /// SACK bitmap width code is not 0 (64), 1 (128) or 2 (256).
    #[error("bad SACK bitmap width code {0}")]
    BadSackWidth(u8),
    /// NACK kind byte is not 1..=3.
    #[error("unknown NACK kind {0}")]
    UnknownNackKind(u8),
    /// The extension type does not fit the opcode (data ext on an ACK, a
    /// SACK on a WRITE, the X bit on a CNP).
    #[error("MRC extension type {ext_type} not allowed on opcode {opcode:#04x}")]
    ExtMismatch { opcode: u8, ext_type: u8 },
    /// AETH syndrome disagrees with the MRC extension (a NACK ext needs the
    /// NAK code of its kind; SACK and probe need an ACK syndrome).
    #[error("AETH syndrome {syndrome:#04x} does not match the MRC extension")]
    SyndromeMismatch { syndrome: u8 },
    /// MRC 1.0 NETH reason code outside the published list.
    #[error("unknown MRC 1.0 NACK reason {0:#04x}")]
    UnknownNackReason(u8),
    /// MRC 1.0 ERTH operation outside the published list.
    #[error("unknown MRC 1.0 endpoint operation {0}")]
    UnknownEndpointOp(u8),
    /// MRC 1.0 SETH skip mode (m) 3, which names no mode.
    #[error("bad MRC 1.0 SACK skip mode {0}")]
    BadSkipMode(u8),
    /// MRC 1.0 EETH EV format code outside the known formats.
    #[error("unknown MRC 1.0 EV format {0}")]
    UnknownEvFormat(u8),
    /// An MRC 1.0 endpoint operation not sent to the reserved endpoint QP,
    /// or a connection opcode sent to it.
    #[error("opcode {opcode:#04x} not allowed to QP {dest_qp:#x}")]
    EndpointQpMismatch { opcode: u8, dest_qp: u32 },
    /// MRC 1.0 BTH TS flag on an opcode that carries no TSETH.
    #[error("TS flag on opcode {0:#04x}, which carries no timestamp header")]
    UnexpectedTimestamp(u8),
    /// Bytes after the headers of an MRC 1.0 packet that carries no payload.
    #[error("{len} bytes after the headers of opcode {opcode:#04x}, which carries no payload")]
    UnexpectedPayload { opcode: u8, len: usize },
    /// ICRC trailer does not match the recomputed value.
    #[error("bad ICRC: frame carries {expected:#010x}, computed {computed:#010x}")]
    BadIcrc { expected: u32, computed: u32 },
}

/// A [`WireError`] without its data, usable as a counter index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum WireErrorKind {
    Truncated,
    BadEtherType,
    BadIpVersion,
    BadIpHeaderLen,
    BadIpChecksum,
    IpFragment,
    NotUdp,
    WrongUdpPort,
    BadLength,
    UnknownOpcode,
    BadTransportVersion,
    BadPadCount,
    UnknownExtType,
    BadExtVersion,
    BadSackWidth,
    UnknownNackKind,
    ExtMismatch,
    SyndromeMismatch,
    BadIcrc,
    UnknownNackReason,
    UnknownEndpointOp,
    BadSkipMode,
    UnknownEvFormat,
    EndpointQpMismatch,
    UnexpectedTimestamp,
    UnexpectedPayload,
}

impl WireErrorKind {
    /// Number of kinds (size of a counter array).
    pub const COUNT: usize = 26;
    /// Every kind, in index order.
    pub const ALL: [WireErrorKind; Self::COUNT] = [
        WireErrorKind::Truncated,
        WireErrorKind::BadEtherType,
        WireErrorKind::BadIpVersion,
        WireErrorKind::BadIpHeaderLen,
        WireErrorKind::BadIpChecksum,
        WireErrorKind::IpFragment,
        WireErrorKind::NotUdp,
        WireErrorKind::WrongUdpPort,
        WireErrorKind::BadLength,
        WireErrorKind::UnknownOpcode,
        WireErrorKind::BadTransportVersion,
        WireErrorKind::BadPadCount,
        WireErrorKind::UnknownExtType,
        WireErrorKind::BadExtVersion,
        WireErrorKind::BadSackWidth,
        WireErrorKind::UnknownNackKind,
        WireErrorKind::ExtMismatch,
        WireErrorKind::SyndromeMismatch,
        WireErrorKind::BadIcrc,
        WireErrorKind::UnknownNackReason,
        WireErrorKind::UnknownEndpointOp,
        WireErrorKind::BadSkipMode,
        WireErrorKind::UnknownEvFormat,
        WireErrorKind::EndpointQpMismatch,
        WireErrorKind::UnexpectedTimestamp,
        WireErrorKind::UnexpectedPayload,
    ];
    /// Kinds only the MRC 1.0 parser ([`super::mrc10`]) returns.
    pub const MRC10_ONLY: [WireErrorKind; 7] = [
        WireErrorKind::UnknownNackReason,
        WireErrorKind::UnknownEndpointOp,
        WireErrorKind::BadSkipMode,
        WireErrorKind::UnknownEvFormat,
        WireErrorKind::EndpointQpMismatch,
        WireErrorKind::UnexpectedTimestamp,
        WireErrorKind::UnexpectedPayload,
    ];
    /// Kinds only the legacy-profile parser ([`super::parse_frame`]) returns:
    /// its extension header and AETH rules.
    pub const LEGACY_ONLY: [WireErrorKind; 6] = [
        WireErrorKind::UnknownExtType,
        WireErrorKind::BadExtVersion,
        WireErrorKind::BadSackWidth,
        WireErrorKind::UnknownNackKind,
        WireErrorKind::ExtMismatch,
        WireErrorKind::SyndromeMismatch,
    ];
    /// Index into a `[u64; COUNT]`.
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl WireError {
    /// The counter this error increments.
    pub const fn kind(&self) -> WireErrorKind {
        match self {
            WireError::Truncated { .. } => WireErrorKind::Truncated,
            WireError::BadEtherType(_) => WireErrorKind::BadEtherType,
            WireError::BadIpVersion(_) => WireErrorKind::BadIpVersion,
            WireError::BadIpHeaderLen(_) => WireErrorKind::BadIpHeaderLen,
            WireError::BadIpChecksum => WireErrorKind::BadIpChecksum,
            WireError::IpFragment => WireErrorKind::IpFragment,
            WireError::NotUdp(_) => WireErrorKind::NotUdp,
            WireError::WrongUdpPort(_) => WireErrorKind::WrongUdpPort,
            WireError::BadLength { .. } => WireErrorKind::BadLength,
            WireError::UnknownOpcode(_) => WireErrorKind::UnknownOpcode,
            WireError::BadTransportVersion(_) => WireErrorKind::BadTransportVersion,
            WireError::BadPadCount { .. } => WireErrorKind::BadPadCount,
            WireError::UnknownExtType(_) => WireErrorKind::UnknownExtType,
            WireError::BadExtVersion(_) => WireErrorKind::BadExtVersion,
            WireError::BadSackWidth(_) => WireErrorKind::BadSackWidth,
            WireError::UnknownNackKind(_) => WireErrorKind::UnknownNackKind,
            WireError::ExtMismatch { .. } => WireErrorKind::ExtMismatch,
            WireError::SyndromeMismatch { .. } => WireErrorKind::SyndromeMismatch,
            WireError::BadIcrc { .. } => WireErrorKind::BadIcrc,
            WireError::UnknownNackReason(_) => WireErrorKind::UnknownNackReason,
            WireError::UnknownEndpointOp(_) => WireErrorKind::UnknownEndpointOp,
            WireError::BadSkipMode(_) => WireErrorKind::BadSkipMode,
            WireError::UnknownEvFormat(_) => WireErrorKind::UnknownEvFormat,
            WireError::EndpointQpMismatch { .. } => WireErrorKind::EndpointQpMismatch,
            WireError::UnexpectedTimestamp(_) => WireErrorKind::UnexpectedTimestamp,
            WireError::UnexpectedPayload { .. } => WireErrorKind::UnexpectedPayload,
        }
    }
}

/// Drop counters, one per [`WireErrorKind`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WireCounters {
    pub truncated: u64,
    pub bad_ether_type: u64,
    pub bad_ip_version: u64,
    pub bad_ip_header_len: u64,
    pub bad_ip_checksum: u64,
    pub ip_fragment: u64,
    pub not_udp: u64,
    pub wrong_udp_port: u64,
    pub bad_length: u64,
    pub unknown_opcode: u64,
    pub bad_transport_version: u64,
    pub bad_pad_count: u64,
    pub unknown_ext_type: u64,
    pub bad_ext_version: u64,
    pub bad_sack_width: u64,
    pub unknown_nack_kind: u64,
    pub ext_mismatch: u64,
    pub syndrome_mismatch: u64,
    pub bad_icrc: u64,
    pub unknown_nack_reason: u64,
    pub unknown_endpoint_op: u64,
    pub bad_skip_mode: u64,
    pub unknown_ev_format: u64,
    pub endpoint_qp_mismatch: u64,
    pub unexpected_timestamp: u64,
    pub unexpected_payload: u64,
}

impl WireCounters {
    fn slot(&mut self, kind: WireErrorKind) -> &mut u64 {
        match kind {
            WireErrorKind::Truncated => &mut self.truncated,
            WireErrorKind::BadEtherType => &mut self.bad_ether_type,
            WireErrorKind::BadIpVersion => &mut self.bad_ip_version,
            WireErrorKind::BadIpHeaderLen => &mut self.bad_ip_header_len,
            WireErrorKind::BadIpChecksum => &mut self.bad_ip_checksum,
            WireErrorKind::IpFragment => &mut self.ip_fragment,
            WireErrorKind::NotUdp => &mut self.not_udp,
            WireErrorKind::WrongUdpPort => &mut self.wrong_udp_port,
            WireErrorKind::BadLength => &mut self.bad_length,
            WireErrorKind::UnknownOpcode => &mut self.unknown_opcode,
            WireErrorKind::BadTransportVersion => &mut self.bad_transport_version,
            WireErrorKind::BadPadCount => &mut self.bad_pad_count,
            WireErrorKind::UnknownExtType => &mut self.unknown_ext_type,
            WireErrorKind::BadExtVersion => &mut self.bad_ext_version,
            WireErrorKind::BadSackWidth => &mut self.bad_sack_width,
            WireErrorKind::UnknownNackKind => &mut self.unknown_nack_kind,
            WireErrorKind::ExtMismatch => &mut self.ext_mismatch,
            WireErrorKind::SyndromeMismatch => &mut self.syndrome_mismatch,
            WireErrorKind::BadIcrc => &mut self.bad_icrc,
            WireErrorKind::UnknownNackReason => &mut self.unknown_nack_reason,
            WireErrorKind::UnknownEndpointOp => &mut self.unknown_endpoint_op,
            WireErrorKind::BadSkipMode => &mut self.bad_skip_mode,
            WireErrorKind::UnknownEvFormat => &mut self.unknown_ev_format,
            WireErrorKind::EndpointQpMismatch => &mut self.endpoint_qp_mismatch,
            WireErrorKind::UnexpectedTimestamp => &mut self.unexpected_timestamp,
            WireErrorKind::UnexpectedPayload => &mut self.unexpected_payload,
        }
    }
    /// Count one dropped frame.
    pub fn count(&mut self, err: &WireError) {
        *self.slot(err.kind()) += 1;
    }
    /// The counter for `kind`.
    pub fn get(&self, kind: WireErrorKind) -> u64 {
        let mut copy = *self;
        *copy.slot(kind)
    }
    /// All drops.
    pub fn total(&self) -> u64 {
        WireErrorKind::ALL.iter().map(|&k| self.get(k)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_index_in_order() {
        for (i, k) in WireErrorKind::ALL.iter().enumerate() {
            assert_eq!(k.index(), i);
        }
    }

    #[test]
    fn counters_count_per_kind() {
        let mut c = WireCounters::default();
        c.count(&WireError::WrongUdpPort(53));
        c.count(&WireError::BadIcrc {
            expected: 1,
            computed: 2,
        });
        c.count(&WireError::BadIcrc {
            expected: 3,
            computed: 4,
        });
        assert_eq!(c.wrong_udp_port, 1);
        assert_eq!(c.get(WireErrorKind::BadIcrc), 2);
        assert_eq!(c.total(), 3);
    }
}
