//! Every MRC 1.0 wire choice the public record leaves open (grade U in
//! `docs/protocol.md`): ours, named here and nowhere else, so that someone
//! holding the specification corrects the project in this one file (and
//! the layout tables of the header files, whose byte positions within a
//! header of known size and field order are also ours where the table says
//! U).
//!
//! Choices that are runtime configuration (the DSCP numbers, the EV mode)
//! live in a [`Profile`]; the others are constants and functions.

use serde::{Deserialize, Serialize};

use super::erth::EndpointOp;
use super::Opcode;

/// The reserved QP number of connectionless endpoint operations (grade S).
/// Ours: every other opcode to this QP is rejected, and endpoint opcodes to
/// any other QP too.
pub const ENDPOINT_QPN: u32 = 0x2;

/// Ours: an EETH follows the ERTH exactly on EV Probe requests and
/// responses (the operation names an EV); a Port Status Update carries only
/// the ERTH.
pub const fn eeth_follows(op: EndpointOp) -> bool {
    matches!(op, EndpointOp::EvProbe)
}

/// Ours: the TS flag (and so a TSETH) is allowed on data packets only; on
/// any other opcode it is a typed error, not ignored, so a packet never
/// parses with a flag its headers contradict.
pub const fn timestamp_allowed(opcode: Opcode) -> bool {
    opcode.is_write()
}

/// Ours: the unit of the 16-bit TSETH transmit timestamp this
/// implementation sends. The receiver echoes the value untouched (CC_STATE,
/// NETH), so only the sender that stamped it reads it: the unit is the
/// sender's business. 64 ns spans [`TS_RANGE_NS`] (about 4.2 ms) before
/// wrapping, longer than any RTT the congestion control acts on, at a grain
/// far below its delay targets.
pub const TS_UNIT_NS: u64 = 64;
/// One wrap of the 16-bit timestamp, ns.
pub const TS_RANGE_NS: u64 = TS_UNIT_NS << 16;
/// Ours: the TSETH resolution bit this implementation sends (set: the
/// coarse unit, [`TS_UNIT_NS`]).
pub const TS_RESOLUTION: bool = true;
/// Ours: the TSETH format this implementation sends.
pub const TS_FORMAT: u8 = 0;

/// Ours: how a receiver reports its service time (SVC_TIME; where MRC 1.0
/// carries it is not in the public record). A receiver that knows the unit
/// of the echoed timestamp (its resolution bit is [`TS_RESOLUTION`])
/// advances the echo by the time it held the packet before acknowledging
/// it, in whole units, so the sender's `now - echo` is the network RTT
/// without the receiver's SACK coalescing. Other echoes go back untouched.
/// NACKs echo untouched always: the sender matches them against the
/// transmission they name.
pub const fn echo_with_service_time(echo_ts: u16, known_unit: bool, held_ns: u64) -> u16 {
    if known_unit {
        echo_ts.wrapping_add((held_ns / TS_UNIT_NS) as u16)
    } else {
        echo_ts
    }
}

/// Ours: SETH cc flags (4 bits) carry the number of ECN-CE marked data
/// packets the receiver saw since its previous SACK, saturating at 15.
/// (CC_STATE has no ECN field in the public record.)
pub const fn cc_flags_from_ce_count(count: u32) -> u8 {
    if count > CC_FLAGS_CE_MAX as u32 {
        CC_FLAGS_CE_MAX
    } else {
        count as u8
    }
}
/// The largest CE count the cc flags carry.
pub const CC_FLAGS_CE_MAX: u8 = 0x0F;

/// `now` on the 16-bit clock of the MRC 1.0 timestamps (TSETH, PETH,
/// ERTH, NETH; [`TS_UNIT_NS`] units, wrapping).
pub fn ts16(now: crate::time::Instant) -> u16 {
    (now.as_ns() / TS_UNIT_NS) as u16
}

/// Ours: the SETH m field a SACK carries for the packet it acknowledges
/// (the EV it names). MRC 1.0 keeps ECN off at the last hop, so a CE mark
/// says that packet's path is loaded: SKIP_ONCE moves the sender's next
/// packet off that EV without cutting its window. The public record does
/// not say when a receiver sets m; ALWAYS_SKIP is never sent here.
pub const fn skip_mode_for(ce: bool) -> super::seth::SkipMode {
    if ce {
        super::seth::SkipMode::SkipOnce
    } else {
        super::seth::SkipMode::None
    }
}
/// Ours: a data packet that arrived ECN-CE marked is acknowledged at once,
/// not coalesced with the next ones. A SACK's m field names one EV, its
/// trigger's (the last packet it acknowledges), so a mark on any earlier
/// packet of a coalesced group would reach the cc flags' count but never
/// SKIP its EV: with a SACK per 4 packets, 3 marks in 4 were lost to the
/// load balancing (`docs/benchmarks.md`, hashed permutation). The public
/// record does not say when a receiver acknowledges.
pub const fn sack_at_once_for(ce: bool) -> bool {
    ce
}
/// Ours: CC_STATE's 7-bit receiver cwnd penalty counts eighths of a
/// halving. A SACK carrying penalty `p` caps its sender's window at
/// `max_cwnd * 2^(-p / 8)` until a SACK says otherwise (so 8 halves it, 80
/// divides it by 1024, 127 by about 60,000). The public record names the
/// field and says it is the receiver's back-pressure (grade S), not its
/// unit.
pub const CWND_PENALTY_STEPS_PER_HALVING: u8 = 8;
/// The largest penalty CC_STATE carries (7 bits).
pub const CWND_PENALTY_MAX: u8 = super::cc_state::CWND_PENALTY_MASK;

/// The share of its window ceiling a sender keeps under penalty `p`:
/// `2^(-p / 8)`, `p` saturating at [`CWND_PENALTY_MAX`].
pub fn cwnd_penalty_share(p: u8) -> f64 {
    let p = p.min(CWND_PENALTY_MAX);
    (-(f64::from(p)) / f64::from(CWND_PENALTY_STEPS_PER_HALVING)).exp2()
}

/// Ours: the penalty a receiver sends while `senders` flows deliver data
/// to it at once: each may keep `2^CWND_PENALTY_HEADROOM_HALVINGS /
/// senders` of its ceiling (`round(8 * log2(senders)) - 16`, 0 for up to
/// four senders).
pub fn cwnd_penalty_for_senders(senders: u32) -> u8 {
    if senders <= 1 {
        return 0;
    }
    let steps = f64::from(CWND_PENALTY_STEPS_PER_HALVING);
    let p = (steps * f64::from(senders).log2()).round() - steps * f64::from(CWND_PENALTY_HEADROOM_HALVINGS);
    p.clamp(0.0, f64::from(CWND_PENALTY_MAX)) as u8
}

/// Ours: how many halvings of headroom [`cwnd_penalty_for_senders`]
/// leaves above an exact `1 / senders` share. The senders' ceilings are
/// sized for line rate at the RTT they aim at, so exact shares leave no
/// slack for senders that pause; measured on the 1023 -> 1 incast
/// (docs/benchmarks.md): exact shares end it at 12.2 ms, one halving of
/// headroom at 9.5 ms, two at 8.86 ms, as without a penalty.
pub const CWND_PENALTY_HEADROOM_HALVINGS: u8 = 2;

/// Ours: the cc type this implementation sends (UET NSCC state).
pub const CC_TYPE_NSCC: u8 = 1;

/// Ours: the 16-bit sender / receiver contexts of SETH, NETH and PETH are
/// the low 16 bits of the sending and the receiving QP numbers. They are
/// informational here; the receiver ignores them (the BTH DestQP selects
/// the QP).
pub const fn context_of(qpn: u32) -> u16 {
    qpn as u16
}

/// Ours: the plane of an EV is its lowest mixed-radix digit over the
/// planes, `(ev & 0xFFFF) % planes`: a structured EV's first per-hop field
/// is the NIC's choice of port (the simulator's `--ecmp ev-path` routes
/// so). MRC 1.0 structures EVs per hop but the layout is not public.
pub const fn ev_plane(ev: u32, planes: u32) -> u32 {
    if planes <= 1 {
        0
    } else {
        (ev & 0xFFFF) % planes
    }
}

/// Ours: a reliability probe from this implementation uses the index of
/// the EV it probes as its probe id, so the SACK that answers it (SETH pr =
/// 1, the probe id in ack_psn_offset) names the EV without a table.
pub const fn probe_id_of_ev(ev_index: u16) -> u16 {
    ev_index
}

/// How many bits of EV the outer headers carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EvMode {
    /// 32-bit EV over the UDP source port and the IPv6 flow label (grade
    /// C). Over IPv4 only the source-port half exists.
    SourcePortAndFlowLabel,
    /// 16-bit EV in the UDP source port only (UDP mode, grade C); the flow
    /// label is sent as 0 and ignored on receive.
    SourcePort,
}

/// Ours: which EV half goes where (grade U). The UDP source port carries EV
/// bits 15-0, the low 16 bits of the flow label EV bits 31-16; the flow
/// label's top 4 bits are 0. Returns (UDP source port, flow label).
pub const fn ev_to_wire(ev: u32, mode: EvMode) -> (u16, u32) {
    match mode {
        EvMode::SourcePortAndFlowLabel => (ev as u16, ev >> 16),
        EvMode::SourcePort => (ev as u16, 0),
    }
}

/// The inverse of [`ev_to_wire`]; `flow_label` is `None` over IPv4.
pub const fn ev_from_wire(src_port: u16, flow_label: Option<u32>, mode: EvMode) -> u32 {
    match (mode, flow_label) {
        (EvMode::SourcePortAndFlowLabel, Some(fl)) => ((fl & 0xFFFF) << 16) | src_port as u32,
        _ => src_port as u32,
    }
}

/// The DSCP classes of MRC 1.0 (grade S), plus any other DSCP seen on
/// receive (a fabric may re-mark).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum TrafficClass {
    /// ACK, SACK, NACK, probes and endpoint operations.
    Control,
    /// Data a switch may trim.
    Trimmable,
    /// Retransmitted data a switch may trim.
    TrimmableRetx,
    /// Data a switch must not trim.
    NoTrim,
    /// Data a switch trimmed.
    Trimmed,
    /// Data trimmed at the last hop (the congestion is at the receiver's
    /// port, which every path shares).
    TrimmedLastHop,
    /// A DSCP that is none of the profile's classes.
    Other(u8),
}

impl TrafficClass {
    /// The six named classes.
    pub const NAMED: [TrafficClass; 6] = [
        TrafficClass::Control,
        TrafficClass::Trimmable,
        TrafficClass::TrimmableRetx,
        TrafficClass::NoTrim,
        TrafficClass::Trimmed,
        TrafficClass::TrimmedLastHop,
    ];
    /// The specification's name.
    pub fn name(self) -> String {
        match self {
            TrafficClass::Control => "CONTROL".into(),
            TrafficClass::Trimmable => "TRIMMABLE".into(),
            TrafficClass::TrimmableRetx => "TRIMMABLE_RETX".into(),
            TrafficClass::NoTrim => "NO_TRIM".into(),
            TrafficClass::Trimmed => "TRIMMED".into(),
            TrafficClass::TrimmedLastHop => "TRIMMED_LASTHOP".into(),
            TrafficClass::Other(d) => format!("DSCP_{d}"),
        }
    }
}

/// DSCP numbers of the classes: configurable, as the API takes the traffic
/// class as a DSCP (grade S); the defaults are ours (grade U).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DscpMap {
    pub control: u8,
    pub trimmable: u8,
    pub trimmable_retx: u8,
    pub no_trim: u8,
    pub trimmed: u8,
    pub trimmed_last_hop: u8,
}

impl DscpMap {
    /// Ours: CONTROL 48 (CS6, where RoCE fabrics put CNPs), TRIMMABLE 26
    /// (AF31, the usual RoCE data class, as the legacy profile), its
    /// retransmissions 28 (AF32), NO_TRIM 34 (AF41); the two trimmed
    /// classes in RFC 2474 pool 2 (`xxxx11`, local use) so they collide
    /// with no standard class: TRIMMED 59 (as the legacy profile),
    /// TRIMMED_LASTHOP 63.
    pub const DEFAULT: DscpMap = DscpMap {
        control: 48,
        trimmable: 26,
        trimmable_retx: 28,
        no_trim: 34,
        trimmed: 59,
        trimmed_last_hop: 63,
    };

    /// The DSCP of a class.
    pub const fn dscp_of(&self, class: TrafficClass) -> u8 {
        match class {
            TrafficClass::Control => self.control,
            TrafficClass::Trimmable => self.trimmable,
            TrafficClass::TrimmableRetx => self.trimmable_retx,
            TrafficClass::NoTrim => self.no_trim,
            TrafficClass::Trimmed => self.trimmed,
            TrafficClass::TrimmedLastHop => self.trimmed_last_hop,
            TrafficClass::Other(d) => d,
        }
    }
    /// The class of a DSCP (first match in [`TrafficClass::NAMED`] order).
    pub const fn class_of(&self, dscp: u8) -> TrafficClass {
        if dscp == self.control {
            TrafficClass::Control
        } else if dscp == self.trimmable {
            TrafficClass::Trimmable
        } else if dscp == self.trimmable_retx {
            TrafficClass::TrimmableRetx
        } else if dscp == self.no_trim {
            TrafficClass::NoTrim
        } else if dscp == self.trimmed {
            TrafficClass::Trimmed
        } else if dscp == self.trimmed_last_hop {
            TrafficClass::TrimmedLastHop
        } else {
            TrafficClass::Other(dscp)
        }
    }
}

impl Default for DscpMap {
    fn default() -> Self {
        DscpMap::DEFAULT
    }
}

/// Why a [`Profile`] cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error("DSCP {0} does not fit 6 bits")]
    DscpTooWide(u8),
    #[error("DSCP {0} names two classes")]
    DscpShared(u8),
}

/// The runtime wire configuration of an MRC 1.0 endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Profile {
    pub ev_mode: EvMode,
    pub dscp: DscpMap,
}

impl Profile {
    /// 32-bit EVs and the default DSCP numbers.
    pub const DEFAULT: Profile = Profile {
        ev_mode: EvMode::SourcePortAndFlowLabel,
        dscp: DscpMap::DEFAULT,
    };

    /// Every DSCP fits 6 bits and names one class, so parse inverts emit.
    pub fn check(&self) -> Result<(), ProfileError> {
        let numbers = TrafficClass::NAMED.map(|c| self.dscp.dscp_of(c));
        for (i, &d) in numbers.iter().enumerate() {
            if d >= 64 {
                return Err(ProfileError::DscpTooWide(d));
            }
            if numbers[..i].contains(&d) {
                return Err(ProfileError::DscpShared(d));
            }
        }
        Ok(())
    }
}

impl Default for Profile {
    fn default() -> Self {
        Profile::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_profile_is_usable_and_classes_invert() {
        Profile::DEFAULT.check().unwrap();
        for c in TrafficClass::NAMED {
            assert_eq!(DscpMap::DEFAULT.class_of(DscpMap::DEFAULT.dscp_of(c)), c);
        }
        assert_eq!(DscpMap::DEFAULT.class_of(0), TrafficClass::Other(0));
        let mut shared = Profile::DEFAULT;
        shared.dscp.no_trim = shared.dscp.control;
        assert_eq!(shared.check(), Err(ProfileError::DscpShared(48)));
        shared.dscp.no_trim = 64;
        assert_eq!(shared.check(), Err(ProfileError::DscpTooWide(64)));
    }

    #[test]
    fn ev_halves() {
        let m = EvMode::SourcePortAndFlowLabel;
        assert_eq!(ev_to_wire(0xABCD_1234, m), (0x1234, 0xABCD));
        assert_eq!(ev_from_wire(0x1234, Some(0xF_ABCD), m), 0xABCD_1234);
        assert_eq!(ev_from_wire(0x1234, None, m), 0x1234);
        assert_eq!(ev_to_wire(0xABCD_1234, EvMode::SourcePort), (0x1234, 0));
        assert_eq!(ev_from_wire(0x1234, Some(0xABCD), EvMode::SourcePort), 0x1234);
    }
}
