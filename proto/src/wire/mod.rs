//! Wire formats: RoCEv2 encapsulation plus MRC's extension headers.
//!
//! Two layers, as in smoltcp:
//! * zero-copy views (`XxxPacket<T: AsRef<[u8]>>`) with a `check_len` before
//!   any field is read, and checked accessors/setters;
//! * owned representations (`XxxRepr`) that `parse` from a view and `emit`
//!   into one.
//!
//! Queue pairs speak [`Packet`]: the transport part of a packet (BTH and
//! everything after it, before the ICRC) plus the facts from the outer
//! headers the transport needs (the entropy value, ECN, the DSCP class), in
//! MRC 1.0 ([`mrc10::Mrc10Packet`], the MRC queue pair) or RoCEv2
//! ([`RocePacket`], the RC baseline). The frame functions add the
//! Ethernet/IP/UDP encapsulation ([`Encap`]) and the ICRC.
//! `docs/protocol.md` documents every bit.
//!
//! One file per header: [`ethernet`], [`ipv4`], [`ipv6`], [`udp`], [`bth`],
//! [`reth`], [`immdt`], [`aeth`], [`mrc_ext`]; [`icrc`] is the invariant CRC,
//! [`frame`] the whole-frame API, [`builder`] a short way to build WRITE
//! packets and frames (tests, benchmarks), [`error`] the drop reasons and counters,
//! [`pcap`] a capture writer and reader.
//!
//! Two protocols share the encapsulation: [`mrc10`] is MRC 1.0 as published
//! (opcodes 0xC6-0xDE, its own extension headers, [`mrc10::Mrc10Packet`]);
//! the rest of this module is RoCEv2 (the RC baseline) and the legacy MRC
//! profile (RoCE RC opcodes, the BTH X bit, [`mrc_ext`]) that the RTL still
//! speaks.

use bytes::Bytes;

use crate::Psn;

pub mod aeth;
pub mod bth;
pub mod builder;
pub mod error;
pub mod ethernet;
mod field;
pub mod frame;
pub mod icrc;
pub mod immdt;
pub mod ipv4;
pub mod ipv6;
pub mod mrc10;
pub mod mrc_ext;
pub mod packet;
pub mod pcap;
pub mod reth;
pub mod udp;

pub use aeth::AethPacket;
pub use bth::BthPacket;
pub use error::{Layer, WireCounters, WireError, WireErrorKind};
pub use ethernet::{EthernetFrame, EthernetPacket, EthernetRepr};
pub use frame::{
    emit_frame, emit_headers, emit_transport_headers, frame_len, pad_for, parse_frame, parse_frame_bytes,
    parse_frame_checked_into, parse_frame_headers, parse_frame_headers_into, trim_frame, Encap, IpPair, ParsedHeaders,
    ReprError,
};
pub use immdt::{ImmDtPacket, ImmDtRepr};
pub use ipv4::{Ipv4Packet, Ipv4Repr};
pub use ipv6::{Ipv6Packet, Ipv6Repr};
pub use mrc_ext::MrcExtPacket;
pub use packet::{mark_ce_in_frame, trim_frame_of_either, Packet};
pub use reth::RethPacket;
pub use udp::{UdpPacket, UdpRepr};

/// UDP destination port of RoCEv2.
pub const ROCEV2_UDP_PORT: u16 = 4791;

/// BTH opcodes used by MRC and the RC baseline (RC transport, IBTA values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum Opcode {
    /// RC RDMA WRITE First (carries RETH).
    WriteFirst = 0x06,
    /// RC RDMA WRITE Middle.
    WriteMiddle = 0x07,
    /// RC RDMA WRITE Last.
    WriteLast = 0x08,
    /// RC RDMA WRITE Last with Immediate (carries ImmDt).
    WriteLastImm = 0x09,
    /// RC RDMA WRITE Only (carries RETH).
    WriteOnly = 0x0A,
    /// RC RDMA WRITE Only with Immediate (carries RETH and ImmDt).
    WriteOnlyImm = 0x0B,
    /// RC Acknowledge (carries AETH). MRC's SACK, NACK and probe packets are
    /// ACKs with an MRC extension header, so third-party decoders read them.
    Ack = 0x11,
    /// RoCEv2 Congestion Notification Packet (BTH + 16 reserved bytes), sent
    /// by the RC baseline's responder on CE-marked packets for DCQCN.
    Cnp = 0x81,
}

impl Opcode {
    /// Every opcode this transport uses, in BTH byte order.
    pub const ALL: [Opcode; 8] = [
        Opcode::WriteFirst,
        Opcode::WriteMiddle,
        Opcode::WriteLast,
        Opcode::WriteLastImm,
        Opcode::WriteOnly,
        Opcode::WriteOnlyImm,
        Opcode::Ack,
        Opcode::Cnp,
    ];
    /// The WRITE opcodes (data packets), in BTH byte order.
    pub const WRITES: [Opcode; 6] = [
        Opcode::WriteFirst,
        Opcode::WriteMiddle,
        Opcode::WriteLast,
        Opcode::WriteLastImm,
        Opcode::WriteOnly,
        Opcode::WriteOnlyImm,
    ];

    /// Decode a BTH opcode byte; `None` for opcodes this transport never uses.
    pub const fn from_u8(v: u8) -> Option<Opcode> {
        Some(match v {
            0x06 => Opcode::WriteFirst,
            0x07 => Opcode::WriteMiddle,
            0x08 => Opcode::WriteLast,
            0x09 => Opcode::WriteLastImm,
            0x0A => Opcode::WriteOnly,
            0x0B => Opcode::WriteOnlyImm,
            0x11 => Opcode::Ack,
            0x81 => Opcode::Cnp,
            _ => return None,
        })
    }
    /// The BTH byte.
    pub const fn as_u8(self) -> u8 {
        self as u8
    }
    /// Carries a RETH.
    pub const fn has_reth(self) -> bool {
        matches!(self, Opcode::WriteFirst | Opcode::WriteOnly | Opcode::WriteOnlyImm)
    }
    /// Carries an ImmDt.
    pub const fn has_imm(self) -> bool {
        matches!(self, Opcode::WriteLastImm | Opcode::WriteOnlyImm)
    }
    /// Carries an AETH.
    pub const fn has_aeth(self) -> bool {
        matches!(self, Opcode::Ack)
    }
    /// A data (WRITE) packet.
    pub const fn is_write(self) -> bool {
        !matches!(self, Opcode::Ack | Opcode::Cnp)
    }
    /// Starts a message.
    pub const fn is_first(self) -> bool {
        matches!(self, Opcode::WriteFirst | Opcode::WriteOnly | Opcode::WriteOnlyImm)
    }
    /// Ends a message.
    pub const fn is_last(self) -> bool {
        matches!(
            self,
            Opcode::WriteLast | Opcode::WriteLastImm | Opcode::WriteOnly | Opcode::WriteOnlyImm
        )
    }
}

/// Base Transport Header, 12 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BthRepr {
    pub opcode: Opcode,
    /// Solicited event.
    pub solicited: bool,
    /// MigReq bit (always set by us, as RoCEv2 NICs do).
    pub mig_req: bool,
    /// Pad count: bytes of padding before the ICRC to reach a 4-byte multiple.
    pub pad: u8,
    /// Partition key (0xFFFF default partition).
    pub pkey: u16,
    /// Forward ECN (unused on RoCEv2; IP ECN is used instead).
    pub fecn: bool,
    /// Backward ECN.
    pub becn: bool,
    /// MRC extension present: the "X" bit, the top bit of BTH byte 8's
    /// reserved field. Set on every MRC packet, clear on RC-baseline packets.
    pub mrc_ext: bool,
    /// Destination QP number (24 bits).
    pub dest_qp: u32,
    /// Acknowledge request.
    pub ack_req: bool,
    pub psn: Psn,
}

/// RDMA Extended Transport Header, 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RethRepr {
    pub va: u64,
    pub rkey: u32,
    /// DMA length of the whole message.
    pub dma_len: u32,
}

/// AETH syndrome, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Syndrome {
    /// Positive ACK with the 5-bit credit count (0x1F = invalid/unlimited).
    Ack { credits: u8 },
    /// RNR NAK with its timer code (never sent by MRC).
    Rnr { timer: u8 },
    /// NAK with its 5-bit code (0 = PSN sequence error, 1 = invalid request,
    /// 2 = remote access error, 3 = remote operational error).
    Nak { code: u8 },
    /// Reserved encodings (0b10 prefix), kept so parse/emit round-trips.
    Reserved(u8),
}

impl Syndrome {
    pub const NAK_PSN_SEQ_ERROR: u8 = 0;
    pub const NAK_INVALID_REQUEST: u8 = 1;
    pub const NAK_REMOTE_ACCESS: u8 = 2;
    pub const NAK_REMOTE_OP: u8 = 3;
}

/// ACK Extended Transport Header, 4 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AethRepr {
    pub syndrome: Syndrome,
    /// Message sequence number (24 bits): messages completed at the responder.
    pub msn: u32,
}

/// MRC data extension: what the requester needs to infer loss per EV and to
/// measure delay, and what the responder needs to place a packet directly
/// when it arrives before the packet carrying the RETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DataExtRepr {
    /// Index of the EV in the QP's EV set this packet was sprayed on.
    pub ev_index: u16,
    /// Retransmission of an earlier PSN.
    pub retransmit: bool,
    /// Sequence number of this packet among those sent on this EV
    /// (wrapping u32), for loss inference per EV.
    pub ev_seq: u32,
    /// Sender's clock when sent, in ns (wrapping u32), echoed in the SACK.
    pub tx_ts: u32,
    /// Byte offset of this packet's payload within its message.
    pub msg_offset: u32,
    /// Target virtual address of this packet's payload and the rkey, present
    /// on packets without a RETH (WRITE MIDDLE / LAST / LAST-IMM).
    pub placement: Option<PlacementRepr>,
}

/// Per-packet placement (RETH minus the DMA length).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlacementRepr {
    pub va: u64,
    pub rkey: u32,
}

/// Maximum SACK bitmap width in bits.
pub const SACK_MAX_BITS: usize = 256;

/// A selective-acknowledgement bitmap: bit `i` acknowledges `base + i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SackBitmap {
    /// Width in bits: 64, 128 or 256.
    pub bits: u16,
    /// Words, least significant bit of word 0 = `base`.
    pub words: [u64; SACK_MAX_BITS / 64],
}

impl SackBitmap {
    /// An all-zero bitmap of `bits` width (64, 128 or 256).
    pub const fn new(bits: u16) -> SackBitmap {
        SackBitmap {
            bits,
            words: [0; SACK_MAX_BITS / 64],
        }
    }
    /// Bit `i`.
    pub fn get(&self, i: usize) -> bool {
        i < self.bits as usize && self.words[i / 64] >> (i % 64) & 1 == 1
    }
    /// Set bit `i` (ignored beyond the width).
    pub fn set(&mut self, i: usize) {
        if i < self.bits as usize {
            self.words[i / 64] |= 1 << (i % 64);
        }
    }
    /// Indices of set bits.
    pub fn iter_ones(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.bits as usize).filter(move |&i| self.get(i))
    }
}

/// MRC SACK extension, carried by ACK packets (AETH syndrome ACK). The BTH
/// PSN is the cumulative acknowledgement: every PSN up to and including it
/// has been received.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SackExtRepr {
    /// EV index of the data packet that triggered this SACK.
    pub ev_index: u16,
    /// ECN echo: number of CE-marked data packets since the previous SACK.
    pub ecn_ce_count: u16,
    /// `tx_ts` of the triggering data packet, echoed for an RTT sample.
    pub echo_ts: u32,
    /// Time the responder held the triggering packet before this SACK
    /// (ns), so the requester can subtract it from the RTT (delay sample).
    pub service_ns: u32,
    /// PSN of bit 0 of the bitmap.
    pub base: Psn,
    pub bitmap: SackBitmap,
}

/// Why a NACK was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum NackKind {
    /// A switch trimmed the payload; resend this PSN now.
    Trimmed = 1,
    /// PSN outside the responder's MPR window.
    OutOfWindow = 2,
    /// rkey or bounds check failed; fatal for the QP.
    RemoteAccess = 3,
}

/// MRC NACK extension, carried by ACK packets with an AETH NAK syndrome.
/// The BTH PSN is the PSN being NACKed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NackExtRepr {
    pub kind: NackKind,
    pub ev_index: u16,
    /// Cumulative PSN at the responder (all PSNs up to it received).
    pub cum_psn: Psn,
    pub echo_ts: u32,
}

/// MRC probe extension: an EV probe request or its response, carried by ACK
/// packets (AETH syndrome ACK). Probes test one EV's path and measure its RTT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProbeExtRepr {
    /// false = request, true = response.
    pub response: bool,
    pub ev_index: u16,
    /// Identifies the probe (echoed).
    pub probe_id: u32,
    /// Requester's send time (ns, wrapping), echoed.
    pub tx_ts: u32,
    /// Responder's service time (ns) on responses, 0 on requests.
    pub service_ns: u32,
}

/// The MRC extension header that follows the standard RoCE headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MrcExtRepr {
    Data(DataExtRepr),
    Sack(SackExtRepr),
    Nack(NackExtRepr),
    Probe(ProbeExtRepr),
}

/// The transport part of a RoCEv2 packet, as the golden model sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RocePacket {
    /// Entropy value: UDP source port (and, on IPv6, the flow label).
    pub ev: u32,
    /// The IP header carried ECN CE (congestion experienced).
    pub ecn_ce: bool,
    /// A switch cut the payload (set by fabrics that trim; the trimmed
    /// packet keeps its headers). On the wire: IP DSCP trim code point.
    pub trimmed: bool,
    pub bth: BthRepr,
    pub reth: Option<RethRepr>,
    pub imm: Option<u32>,
    pub aeth: Option<AethRepr>,
    pub ext: Option<MrcExtRepr>,
    /// Payload bytes (zero-copy: `Bytes` is reference-counted).
    pub payload: Bytes,
}
