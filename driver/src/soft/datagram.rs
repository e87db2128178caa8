//! MRC 1.0 frames and the UDP datagrams that carry them: a card puts a
//! whole frame on the wire, a socket sends only the UDP payload (BTH to
//! ICRC) and lets the kernel write Ethernet, IP and UDP. Both directions
//! keep the ICRC valid for the headers the kernel really writes: the
//! source port the datagram leaves from, the RoCEv2 destination port
//! ([`ROCEV2_UDP_PORT`], whatever port the soft NICs use), IPv4
//! identification 0 with DF (`super::udp` sets path-MTU discovery so the
//! kernel sends exactly that).

use std::net::{IpAddr, SocketAddr};

use bytes::{Bytes, BytesMut};

use proto::wire::frame::{emit_outer, OuterFields, ICRC_LEN};
use proto::wire::mrc10::choices::Profile;
use proto::wire::mrc10::frame as mrc10_frame;
use proto::wire::mrc10::Mrc10Packet;
use proto::wire::{ethernet, icrc, udp, Encap, IpPair, RocePacket};

pub use proto::wire::ROCEV2_UDP_PORT;

/// The IP pair of a datagram, if both addresses are of one family.
pub fn ip_pair(src: IpAddr, dst: IpAddr) -> Option<IpPair> {
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => Some(IpPair::V4 {
            src: s.octets(),
            dst: d.octets(),
        }),
        (IpAddr::V6(s), IpAddr::V6(d)) => Some(IpPair::V6 {
            src: s.octets(),
            dst: d.octets(),
        }),
        _ => None,
    }
}

/// What [`to_datagram`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outgoing {
    /// Where the UDP payload starts in the buffer.
    pub payload_at: usize,
    /// The IP traffic class byte: DSCP of the packet's class, its ECN.
    pub tos: u8,
}

/// Emit `pkt`'s whole frame into `out` (cleared first) as sent from UDP
/// port `src_port`, and say where its UDP payload starts. With
/// `src_port` None the EV's own port is the source.
pub fn to_datagram(
    pkt: &Mrc10Packet,
    encap: &Encap,
    profile: &Profile,
    src_port: Option<u16>,
    out: &mut Vec<u8>,
) -> Outgoing {
    out.clear();
    mrc10_frame::emit_frame(pkt, encap, profile, out);
    frame_to_datagram(out, encap, src_port)
}

/// Payloads from this size on leave from host memory with an `iovec` of
/// their own ([`to_datagram_around_payload`]); smaller ones are copied
/// behind their headers, a copy cheaper than the kernel's walk over one
/// more `iovec`.
pub const GATHER_MIN_PAYLOAD: usize = 1024;

/// [`to_datagram`] without copying `pkt`'s payload: `out` gets the frame
/// around it (headers, then pad and ICRC, the ICRC over the payload where
/// it lies). Returns what [`to_datagram`] does and where in `out` the
/// payload belongs: the datagram is `out[payload_at..split]`,
/// `pkt.payload`, `out[split..]`.
pub fn to_datagram_around_payload(
    pkt: &Mrc10Packet,
    encap: &Encap,
    profile: &Profile,
    src_port: Option<u16>,
    out: &mut Vec<u8>,
) -> (Outgoing, usize) {
    out.clear();
    let split = mrc10_frame::emit_frame_around_payload(pkt, encap, profile, out);
    (retarget(out, encap, src_port, &pkt.payload, split), split)
}

/// [`to_datagram`] of a legacy-profile packet (the dialect the RTL speaks).
pub fn legacy_to_datagram(pkt: &RocePacket, encap: &Encap, src_port: Option<u16>, out: &mut Vec<u8>) -> Outgoing {
    out.clear();
    proto::wire::frame::emit_frame(pkt, encap, out);
    frame_to_datagram(out, encap, src_port)
}

/// A whole frame in `frame` (Ethernet without VLAN tag, IP, UDP, BTH to
/// ICRC, of either profile) made ready to leave from UDP port
/// `src_port`: the port rewritten and the ICRC recomputed if it differs
/// from the frame's own.
pub fn frame_to_datagram(frame: &mut [u8], encap: &Encap, src_port: Option<u16>) -> Outgoing {
    let whole = frame.len();
    retarget(frame, encap, src_port, &[], whole)
}

/// [`frame_to_datagram`] of a frame whose `payload` lies elsewhere, to
/// go at `split` in `frame`.
fn retarget(out: &mut [u8], encap: &Encap, src_port: Option<u16>, payload: &[u8], split: usize) -> Outgoing {
    let ip_at = ethernet::HEADER_LEN;
    let udp_at = ip_at + encap.ip_header_len();
    let ev_port = u16::from_be_bytes([out[udp_at], out[udp_at + 1]]);
    if let Some(p) = src_port.filter(|&p| p != ev_port) {
        out[udp_at..udp_at + 2].copy_from_slice(&p.to_be_bytes());
        let icrc_at = out.len() - ICRC_LEN;
        let split = split.min(icrc_at);
        let v6 = matches!(encap.ip, IpPair::V6 { .. });
        let c = icrc::compute_icrc_parts(
            &out[ip_at..split],
            &[payload, &out[split..icrc_at]],
            encap.ip_header_len(),
            v6,
        );
        out[icrc_at..].copy_from_slice(&c.to_le_bytes());
    }
    let ip = &out[ip_at..];
    let tos = match encap.ip {
        IpPair::V4 { .. } => ip[1],
        IpPair::V6 { .. } => (ip[0] << 4) | (ip[1] >> 4),
    };
    Outgoing {
        payload_at: udp_at + udp::HEADER_LEN,
        tos,
    }
}

/// Where a datagram arrived: the receiving NIC's address and MAC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub ip: IpAddr,
    pub mac: [u8; 6],
}

/// The outer headers (Ethernet, IP, UDP) a card's MAC would have received
/// for a datagram of `payload_len` bytes from `from` to `at`, with traffic
/// class `tos` (the sender's MAC is unknown: zero); `None` if the two
/// addresses are of different families.
fn outer_of(payload_len: usize, from: SocketAddr, at: Arrival, tos: u8) -> Option<(Encap, OuterFields)> {
    let encap = Encap {
        src_mac: [0; 6],
        dst_mac: at.mac,
        ip: ip_pair(from.ip(), at.ip)?,
    };
    let outer = OuterFields {
        dscp: tos >> 2,
        ecn: tos & 0b11,
        src_port: from.port(),
        flow_label: 0,
        udp_len: payload_len,
    };
    Some((encap, outer))
}

/// Bytes of the longest outer header [`from_datagram`] writes (IPv6).
const MAX_OUTER: usize = ethernet::HEADER_LEN + proto::wire::ipv6::HEADER_LEN + udp::HEADER_LEN;

/// Rebuild into `out` (cleared first) the frame a card's MAC would have
/// received for a datagram of `payload` from `from` to `at`, with traffic
/// class `tos` (the sender's MAC is unknown: zero); `None` if the two
/// addresses are of different families.
pub fn from_datagram(payload: &[u8], from: SocketAddr, at: Arrival, tos: u8, out: &mut Vec<u8>) -> Option<()> {
    let (encap, outer) = outer_of(payload.len(), from, at, tos)?;
    let hdr = ethernet::HEADER_LEN + encap.ip_header_len() + udp::HEADER_LEN;
    out.clear();
    out.extend_from_slice(&[0; MAX_OUTER][..hdr]);
    out.extend_from_slice(payload);
    emit_outer(&encap, &outer, &mut out[..hdr]);
    Some(())
}

/// Bytes of the outer headers (Ethernet, IP, UDP) of a frame to or from
/// `ip`: the room a datagram needs before it to become its frame in place
/// ([`frame_in_place`]).
pub fn outer_len(ip: IpAddr) -> usize {
    let ip_len = match ip {
        IpAddr::V4(_) => proto::wire::ipv4::HEADER_LEN,
        IpAddr::V6(_) => proto::wire::ipv6::HEADER_LEN,
    };
    ethernet::HEADER_LEN + ip_len + udp::HEADER_LEN
}

/// The frame of a datagram read with [`outer_len`]`(at.ip)` bytes of room
/// before it (`frame`: the room, then the datagram), its outer headers
/// written there: [`from_datagram`]'s frame without a copy. `None` if the
/// two addresses are of different families or `frame` is shorter than the
/// room.
pub fn frame_in_place(mut frame: BytesMut, from: SocketAddr, at: Arrival, tos: u8) -> Option<Bytes> {
    let hdr = outer_len(at.ip);
    let payload_len = frame.len().checked_sub(hdr)?;
    let (encap, outer) = outer_of(payload_len, from, at, tos)?;
    emit_outer(&encap, &outer, &mut frame[..hdr]);
    Some(frame.freeze())
}

/// [`from_datagram`] into the free end of `arena`, handed back as a frame
/// of its own that slices of it (a packet's payload, as the model keeps
/// it until its bytes are placed) share without a copy. The arena's
/// memory is reused once every frame cut from it is dropped
/// ([`BytesMut::reserve`]): no allocation per datagram.
pub fn frame_in(payload: &[u8], from: SocketAddr, at: Arrival, tos: u8, arena: &mut BytesMut) -> Option<Bytes> {
    let (encap, outer) = outer_of(payload.len(), from, at, tos)?;
    let hdr = ethernet::HEADER_LEN + encap.ip_header_len() + udp::HEADER_LEN;
    arena.clear();
    arena.reserve(hdr + payload.len());
    arena.extend_from_slice(&[0; MAX_OUTER][..hdr]);
    arena.extend_from_slice(payload);
    emit_outer(&encap, &outer, &mut arena[..hdr]);
    Some(arena.split().freeze())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    /// A frame cut from the arena keeps its bytes while later frames are
    /// rebuilt (the model holds a packet's payload until the engine places
    /// it), and the arena's memory is used again once every frame cut from
    /// it is dropped: no allocation per datagram.
    #[test]
    fn arena_frames_stay_intact_and_the_memory_is_reused() {
        let from = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)), 49_152);
        let at = Arrival {
            ip: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)),
            mac: [2, 0, 127, 0, 0, 2],
        };
        let mut arena = BytesMut::with_capacity(64 << 10);
        let first = frame_in(&[0xA5; 4000], from, at, 0, &mut arena).unwrap();
        let base = first.as_ptr();
        let mut want = Vec::new();
        from_datagram(&[0xA5; 4000], from, at, 0, &mut want).unwrap();
        let payload = first.slice(first.len() - 4000..);
        drop(first);
        let second = frame_in(&[0x5A; 4000], from, at, 0, &mut arena).unwrap();
        assert_eq!(&payload[..], &[0xA5; 4000][..], "a held payload is not overwritten");
        assert_eq!(&second[second.len() - 4000..], &[0x5A; 4000][..]);
        assert_ne!(second.as_ptr(), base, "the next frame goes after the held one");
        drop((payload, second));
        // Nothing from the arena is held: the next frame that does not fit
        // after the others takes the arena's memory again.
        let mut reused = false;
        for _ in 0..32 {
            let f = frame_in(&[0xA5; 4000], from, at, 0, &mut arena).unwrap();
            assert_eq!(&f[..], &want[..], "the same frame as from_datagram's");
            reused |= f.as_ptr() == base;
        }
        assert!(reused, "the arena's first bytes were used again");
    }

    /// A payload sent from where it lies: the headers, the payload and
    /// the pad and ICRC gathered are the datagram [`to_datagram`] copies
    /// into one buffer, of either family, padded or not, leaving from the
    /// EV's port or another one (the ICRC recomputed over the three).
    #[test]
    fn a_datagram_around_its_payload_is_the_copied_one() {
        use proto::wire::mrc10::{catalog, Opcode};
        let (v4, v6) = (Encap::test_v4(), Encap::test_v6());
        for (encap, len, src_port) in [
            (v4, 4096, None),
            (v4, 4093, Some(49_999)),
            (v6, 2049, None),
            (v6, 8192, Some(50_001)),
        ] {
            let pkt = catalog::write(Opcode::WriteOnly, 0x12_3456, len, true);
            let profile = Profile::DEFAULT;
            let mut copied = Vec::new();
            let want = to_datagram(&pkt, &encap, &profile, src_port, &mut copied);
            let mut around = Vec::new();
            let (got, split) = to_datagram_around_payload(&pkt, &encap, &profile, src_port, &mut around);
            assert_eq!(got, want);
            let mut gathered = around[..split].to_vec();
            gathered.extend_from_slice(&pkt.payload);
            gathered.extend_from_slice(&around[split..]);
            assert!(gathered == copied, "{len} B over {:?}, from {src_port:?}", encap.ip);
            assert_eq!(around.len(), copied.len() - len, "the payload is not in the frame");
        }
    }

    /// A datagram read after room for its outer headers becomes the frame
    /// `from_datagram` rebuilds, of either family; a sender of the other
    /// family, or less than the room, is refused.
    #[test]
    fn a_frame_made_in_place_is_the_rebuilt_one() {
        let payload: Vec<u8> = (0..300u16).map(|i| i as u8).collect();
        let cases = [
            ("127.0.0.1:49152", IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2))),
            ("[::1]:49153", IpAddr::V6(std::net::Ipv6Addr::LOCALHOST)),
        ];
        for (from, ip) in cases {
            let from: SocketAddr = from.parse().unwrap();
            let at = Arrival {
                ip,
                mac: [2, 0, 0, 0, 0, 9],
            };
            let mut want = Vec::new();
            from_datagram(&payload, from, at, 0x2E, &mut want).unwrap();
            let room = outer_len(ip);
            let mut read = BytesMut::zeroed(room);
            read.extend_from_slice(&payload);
            let got = frame_in_place(read, from, at, 0x2E).unwrap();
            assert_eq!(&got[..], &want[..], "{ip}");
            assert!(
                frame_in_place(BytesMut::zeroed(room - 1), from, at, 0).is_none(),
                "{ip}: short"
            );
            let other: SocketAddr = if ip.is_ipv4() { "[::1]:1" } else { "127.0.0.1:1" }.parse().unwrap();
            let mut read = BytesMut::zeroed(room);
            read.extend_from_slice(&payload);
            assert!(frame_in_place(read, other, at, 0).is_none(), "{ip}: other family");
        }
    }
}
