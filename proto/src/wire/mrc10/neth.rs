//! NETH, the MRC 1.0 NACK extension header: 20 bytes after the BTH of a NACK
//! (0xDD). Fields, widths, order and reason codes are grade S; the byte
//! positions and the reserved bytes that pad to 20 are ours (U).
//!
//! | bytes | bits | field | grade |
//! |-------|------|-------|-------|
//! | 0     | | reason ([`NackReason`]) | S |
//! | 1     | | reserved | U |
//! | 2-3   | | vendor info | S (field), U (width) |
//! | 4-7   | | EV of the packet NACKed | S |
//! | 8-9   | | sender context | S, U (which) |
//! | 10-11 | | receiver context | S, U (which) |
//! | 12    | | reserved | U |
//! | 13-15 | | NACK PSN (24 bits) | S |
//! | 16    | 7-4 cc type, 3-0 cc flags | | S (field), U (split) |
//! | 17    | | reserved | U |
//! | 18-19 | | timestamp (16 bits) | S |

use serde::Serialize;

use super::seth::{cc_join, cc_split};
use crate::wire::field::{get_u16, get_u24, get_u32, get_u8, set_u16, set_u24, set_u32, set_u8};
use crate::wire::{Layer, WireError};
use crate::Psn;

mod field {
    pub const REASON: usize = 0;
    pub const RESERVED1: usize = 1;
    pub const VENDOR_INFO: usize = 2;
    pub const EV: usize = 4;
    pub const SENDER_CONTEXT: usize = 8;
    pub const RECEIVER_CONTEXT: usize = 10;
    pub const RESERVED12: usize = 12;
    pub const NACK_PSN: usize = 13;
    pub const CC: usize = 16;
    pub const RESERVED17: usize = 17;
    pub const TIMESTAMP: usize = 18;
}

pub const HEADER_LEN: usize = 20;

/// Why the receiver NACKs (grade S; 0x01-0x0B are UET's codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[repr(u8)]
pub enum NackReason {
    /// A switch trimmed the payload on the way.
    Trimmed = 0x01,
    /// A switch trimmed it at the last hop: the receiver's port, shared by
    /// every path, is congested (the path is not to blame).
    TrimmedLastHop = 0x02,
    /// No bitmap space for this PSN.
    NoBitmap = 0x06,
    /// No packet buffer.
    NoPktBuffer = 0x07,
    /// No resource.
    NoResource = 0x0A,
    /// PSN outside the receive window (MPR).
    PsnOorWindow = 0x0B,
    /// Unexpected event.
    UnexpEvent = 0x19,
}

impl NackReason {
    /// Every reason, in code order.
    pub const ALL: [NackReason; 7] = [
        NackReason::Trimmed,
        NackReason::TrimmedLastHop,
        NackReason::NoBitmap,
        NackReason::NoPktBuffer,
        NackReason::NoResource,
        NackReason::PsnOorWindow,
        NackReason::UnexpEvent,
    ];
    pub const fn from_u8(v: u8) -> Option<NackReason> {
        Some(match v {
            0x01 => NackReason::Trimmed,
            0x02 => NackReason::TrimmedLastHop,
            0x06 => NackReason::NoBitmap,
            0x07 => NackReason::NoPktBuffer,
            0x0A => NackReason::NoResource,
            0x0B => NackReason::PsnOorWindow,
            0x19 => NackReason::UnexpEvent,
            _ => return None,
        })
    }
    pub const fn as_u8(self) -> u8 {
        self as u8
    }
    /// The specification's name.
    pub const fn name(self) -> &'static str {
        match self {
            NackReason::Trimmed => "TRIMMED",
            NackReason::TrimmedLastHop => "TRIMMED_LASTHOP",
            NackReason::NoBitmap => "NO_BITMAP",
            NackReason::NoPktBuffer => "NO_PKT_BUFFER",
            NackReason::NoResource => "NO_RESOURCE",
            NackReason::PsnOorWindow => "PSN_OOR_WINDOW",
            NackReason::UnexpEvent => "UNEXP_EVENT",
        }
    }
}

fixed_header_view!(
    /// Zero-copy view of a NETH.
    NethPacket,
    HEADER_LEN,
    Layer::Neth
);

impl<T: AsRef<[u8]>> NethPacket<T> {
    pub fn reason_raw(&self) -> u8 {
        get_u8(self.bytes(), field::REASON)
    }
    pub fn vendor_info(&self) -> u16 {
        get_u16(self.bytes(), field::VENDOR_INFO)
    }
    pub fn ev(&self) -> u32 {
        get_u32(self.bytes(), field::EV)
    }
    pub fn sender_context(&self) -> u16 {
        get_u16(self.bytes(), field::SENDER_CONTEXT)
    }
    pub fn receiver_context(&self) -> u16 {
        get_u16(self.bytes(), field::RECEIVER_CONTEXT)
    }
    pub fn nack_psn(&self) -> Psn {
        Psn::new(get_u24(self.bytes(), field::NACK_PSN))
    }
    pub fn cc_type(&self) -> u8 {
        cc_split(get_u8(self.bytes(), field::CC)).0
    }
    pub fn cc_flags(&self) -> u8 {
        cc_split(get_u8(self.bytes(), field::CC)).1
    }
    pub fn timestamp(&self) -> u16 {
        get_u16(self.bytes(), field::TIMESTAMP)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> NethPacket<T> {
    /// The reason byte and the reserved bytes.
    pub fn set_reason(&mut self, r: NackReason) {
        set_u8(self.bytes_mut(), field::REASON, r.as_u8());
        for at in [field::RESERVED1, field::RESERVED12, field::RESERVED17] {
            set_u8(self.bytes_mut(), at, 0);
        }
    }
    pub fn set_vendor_info(&mut self, v: u16) {
        set_u16(self.bytes_mut(), field::VENDOR_INFO, v);
    }
    pub fn set_ev(&mut self, v: u32) {
        set_u32(self.bytes_mut(), field::EV, v);
    }
    pub fn set_sender_context(&mut self, v: u16) {
        set_u16(self.bytes_mut(), field::SENDER_CONTEXT, v);
    }
    pub fn set_receiver_context(&mut self, v: u16) {
        set_u16(self.bytes_mut(), field::RECEIVER_CONTEXT, v);
    }
    pub fn set_nack_psn(&mut self, v: Psn) {
        set_u24(self.bytes_mut(), field::NACK_PSN, v.value());
    }
    pub fn set_cc(&mut self, cc_type: u8, cc_flags: u8) {
        set_u8(self.bytes_mut(), field::CC, cc_join(cc_type, cc_flags));
    }
    pub fn set_timestamp(&mut self, v: u16) {
        set_u16(self.bytes_mut(), field::TIMESTAMP, v);
    }
}

/// Owned NETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct NethRepr {
    pub reason: NackReason,
    pub vendor_info: u16,
    /// EV of the packet NACKed.
    pub ev: u32,
    pub sender_context: u16,
    pub receiver_context: u16,
    /// The PSN NACKed.
    pub nack_psn: Psn,
    /// Congestion-control type (4 bits).
    pub cc_type: u8,
    /// Congestion-control flags (4 bits).
    pub cc_flags: u8,
    pub timestamp: u16,
}

impl NethRepr {
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(p: &NethPacket<T>) -> Result<Self, WireError> {
        p.check_len()?;
        let r = p.reason_raw();
        Ok(NethRepr {
            reason: NackReason::from_u8(r).ok_or(WireError::UnknownNackReason(r))?,
            vendor_info: p.vendor_info(),
            ev: p.ev(),
            sender_context: p.sender_context(),
            receiver_context: p.receiver_context(),
            nack_psn: p.nack_psn(),
            cc_type: p.cc_type(),
            cc_flags: p.cc_flags(),
            timestamp: p.timestamp(),
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    /// Emit; `cc_type` and `cc_flags` are cut to 4 bits.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut NethPacket<T>) {
        p.set_reason(self.reason);
        p.set_vendor_info(self.vendor_info);
        p.set_ev(self.ev);
        p.set_sender_context(self.sender_context);
        p.set_receiver_context(self.receiver_context);
        p.set_nack_psn(self.nack_psn);
        p.set_cc(self.cc_type, self.cc_flags);
        p.set_timestamp(self.timestamp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_and_reasons() {
        let r = NethRepr {
            reason: NackReason::TrimmedLastHop,
            vendor_info: 0xA5A5,
            ev: 0x0102_0304,
            sender_context: 0x0506,
            receiver_context: 0x0708,
            nack_psn: Psn::new(0x09_0A0B),
            cc_type: 0xC,
            cc_flags: 0xD,
            timestamp: 0x0E0F,
        };
        let mut b = [0xFFu8; HEADER_LEN];
        r.emit(&mut NethPacket::new_unchecked(&mut b[..]));
        assert_eq!(
            b,
            [2, 0, 0xA5, 0xA5, 1, 2, 3, 4, 5, 6, 7, 8, 0, 9, 0x0A, 0x0B, 0xCD, 0, 0x0E, 0x0F]
        );
        assert_eq!(NethRepr::parse(&NethPacket::new_checked(&b[..]).unwrap()), Ok(r));
        let known: Vec<u8> = (0..=255u8).filter(|&v| NackReason::from_u8(v).is_some()).collect();
        assert_eq!(known, NackReason::ALL.map(NackReason::as_u8));
        b[0] = 0x03;
        assert_eq!(
            NethRepr::parse(&NethPacket::new_unchecked(&b[..])),
            Err(WireError::UnknownNackReason(3))
        );
        assert_eq!(
            NethPacket::new_checked(&b[..19]).err(),
            Some(WireError::Truncated { layer: Layer::Neth })
        );
    }
}
