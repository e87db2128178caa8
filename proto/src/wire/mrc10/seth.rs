//! SETH, the MRC 1.0 SACK extension header: 28 bytes after the BTH of a SACK
//! (0xDC), followed by the [`super::cc_state`] header. Field list, widths and
//! order are grade S; the byte positions of fields narrower than a byte and
//! the reserved bytes that pad the rest to 28 are ours (U).
//!
//! | bytes | bits | field | grade |
//! |-------|------|-------|-------|
//! | 0     | 7-6 m (skip mode: 0 NONE, 1 SKIP_ONCE, 2 ALWAYS_SKIP; 3 rejected), 5 pr (probe response), 4-0 reserved | | S (fields), U (positions, values) |
//! | 1     | reserved | | U |
//! | 2-3   | ack_psn_offset (signed; the probe id when pr = 1) | | S |
//! | 4-7   | EV of the packet acknowledged (32 bits) | | S |
//! | 8-9   | sender context | | S (a 16-bit context), U (which) |
//! | 10-11 | receiver context | | S, U (which) |
//! | 12    | reserved | | U |
//! | 13-15 | cumulative ack PSN (24 bits) | | S |
//! | 16    | 7-4 cc type, 3-0 cc flags | | S (field), U (split) |
//! | 17    | MPR (units of [`MPR_UNIT_PSNS`] PSNs) | | C |
//! | 18-19 | sack_offset (signed): bitmap bit 0 is PSN cum_ack_psn + sack_offset | | S (field), U (meaning of the base) |
//! | 20-27 | bitmap (64 bits; bit `i`, value `1 << i`, acknowledges base + i) | | S (field), U (bit order) |
//!
//! Reserved bits are sent as 0 and ignored on receive.

use serde::Serialize;

use crate::wire::field::{get_u16, get_u24, get_u32, get_u64, get_u8, set_u16, set_u24, set_u32, set_u64, set_u8};
use crate::wire::{Layer, WireError};
use crate::Psn;

mod field {
    /// m, pr.
    pub const FLAGS: usize = 0;
    pub const RESERVED1: usize = 1;
    pub const ACK_PSN_OFFSET: usize = 2;
    pub const EV: usize = 4;
    pub const SENDER_CONTEXT: usize = 8;
    pub const RECEIVER_CONTEXT: usize = 10;
    pub const RESERVED12: usize = 12;
    pub const CUM_ACK_PSN: usize = 13;
    pub const CC: usize = 16;
    pub const MPR: usize = 17;
    pub const SACK_OFFSET: usize = 18;
    pub const BITMAP: usize = 20;
}

pub const HEADER_LEN: usize = 28;
/// Byte 0 bits 7-6.
const SKIP_MODE_SHIFT: u32 = 6;
/// Byte 0 bit 5.
pub const PROBE_RESPONSE: u8 = 0x20;
/// The MPR field counts PSNs in units of 128 (grade C): at most
/// 255 * 128 = 32,640 PSNs.
pub const MPR_UNIT_PSNS: u32 = 128;
/// Bits of the SACK bitmap.
pub const BITMAP_BITS: u32 = 64;
/// The cc byte: type in the high nibble, flags in the low.
const CC_TYPE_SHIFT: u32 = 4;
const NIBBLE: u8 = 0x0F;

/// The m field: what the receiver asks the sender to do with the EV the
/// acknowledged packet came on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[repr(u8)]
pub enum SkipMode {
    /// Keep using the EV.
    None = 0,
    /// Skip the EV for one rotation.
    SkipOnce = 1,
    /// Stop using the EV (ASSUMED_BAD).
    AlwaysSkip = 2,
}

impl SkipMode {
    pub const fn from_u8(v: u8) -> Option<SkipMode> {
        match v {
            0 => Some(SkipMode::None),
            1 => Some(SkipMode::SkipOnce),
            2 => Some(SkipMode::AlwaysSkip),
            _ => None,
        }
    }
    pub const fn as_u8(self) -> u8 {
        self as u8
    }
}

/// Split the cc byte into (type, flags).
pub(crate) const fn cc_split(b: u8) -> (u8, u8) {
    (b >> CC_TYPE_SHIFT, b & NIBBLE)
}

/// Join (type, flags) into the cc byte; each is cut to 4 bits.
pub(crate) const fn cc_join(cc_type: u8, cc_flags: u8) -> u8 {
    ((cc_type & NIBBLE) << CC_TYPE_SHIFT) | (cc_flags & NIBBLE)
}

fixed_header_view!(
    /// Zero-copy view of a SETH.
    SethPacket,
    HEADER_LEN,
    Layer::Seth
);

impl<T: AsRef<[u8]>> SethPacket<T> {
    /// The raw 2-bit m field (3 is invalid).
    pub fn skip_mode_raw(&self) -> u8 {
        get_u8(self.bytes(), field::FLAGS) >> SKIP_MODE_SHIFT
    }
    pub fn probe_response(&self) -> bool {
        get_u8(self.bytes(), field::FLAGS) & PROBE_RESPONSE != 0
    }
    pub fn ack_psn_offset(&self) -> i16 {
        get_u16(self.bytes(), field::ACK_PSN_OFFSET) as i16
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
    pub fn cum_ack_psn(&self) -> Psn {
        Psn::new(get_u24(self.bytes(), field::CUM_ACK_PSN))
    }
    pub fn cc_type(&self) -> u8 {
        cc_split(get_u8(self.bytes(), field::CC)).0
    }
    pub fn cc_flags(&self) -> u8 {
        cc_split(get_u8(self.bytes(), field::CC)).1
    }
    pub fn mpr(&self) -> u8 {
        get_u8(self.bytes(), field::MPR)
    }
    pub fn sack_offset(&self) -> i16 {
        get_u16(self.bytes(), field::SACK_OFFSET) as i16
    }
    pub fn bitmap(&self) -> u64 {
        get_u64(self.bytes(), field::BITMAP)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> SethPacket<T> {
    /// Byte 0 (reserved bits zero) and the reserved bytes.
    pub fn set_flags(&mut self, mode: SkipMode, probe_response: bool) {
        let v = (mode.as_u8() << SKIP_MODE_SHIFT) | if probe_response { PROBE_RESPONSE } else { 0 };
        set_u8(self.bytes_mut(), field::FLAGS, v);
        set_u8(self.bytes_mut(), field::RESERVED1, 0);
        set_u8(self.bytes_mut(), field::RESERVED12, 0);
    }
    pub fn set_ack_psn_offset(&mut self, v: i16) {
        set_u16(self.bytes_mut(), field::ACK_PSN_OFFSET, v as u16);
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
    pub fn set_cum_ack_psn(&mut self, v: Psn) {
        set_u24(self.bytes_mut(), field::CUM_ACK_PSN, v.value());
    }
    pub fn set_cc(&mut self, cc_type: u8, cc_flags: u8) {
        set_u8(self.bytes_mut(), field::CC, cc_join(cc_type, cc_flags));
    }
    pub fn set_mpr(&mut self, v: u8) {
        set_u8(self.bytes_mut(), field::MPR, v);
    }
    pub fn set_sack_offset(&mut self, v: i16) {
        set_u16(self.bytes_mut(), field::SACK_OFFSET, v as u16);
    }
    pub fn set_bitmap(&mut self, v: u64) {
        set_u64(self.bytes_mut(), field::BITMAP, v);
    }
}

/// Owned SETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SethRepr {
    pub skip_mode: SkipMode,
    /// This SACK answers a reliability probe; `ack_psn_offset` is then the
    /// probe id.
    pub probe_response: bool,
    pub ack_psn_offset: i16,
    /// EV of the packet being acknowledged.
    pub ev: u32,
    pub sender_context: u16,
    pub receiver_context: u16,
    /// Every PSN up to and including this one has been received.
    pub cum_ack_psn: Psn,
    /// Congestion-control type (4 bits).
    pub cc_type: u8,
    /// Congestion-control flags (4 bits).
    pub cc_flags: u8,
    /// Maximum PSN range the receiver accepts, in units of
    /// [`MPR_UNIT_PSNS`] (dynamic MPR).
    pub mpr: u8,
    pub sack_offset: i16,
    pub bitmap: u64,
}

impl SethRepr {
    /// The probe id a probe response carries in `ack_psn_offset`.
    pub const fn probe_id(&self) -> Option<u16> {
        if self.probe_response {
            Some(self.ack_psn_offset as u16)
        } else {
            None
        }
    }
    /// The MPR in PSNs.
    pub const fn mpr_psns(&self) -> u32 {
        self.mpr as u32 * MPR_UNIT_PSNS
    }
    /// The PSN bitmap bit 0 acknowledges.
    pub fn bitmap_base(&self) -> Psn {
        if self.sack_offset >= 0 {
            self.cum_ack_psn.add(self.sack_offset as u32)
        } else {
            self.cum_ack_psn.sub(self.sack_offset.unsigned_abs().into())
        }
    }

    #[inline]
    pub fn parse<T: AsRef<[u8]>>(p: &SethPacket<T>) -> Result<Self, WireError> {
        p.check_len()?;
        let m = p.skip_mode_raw();
        Ok(SethRepr {
            skip_mode: SkipMode::from_u8(m).ok_or(WireError::BadSkipMode(m))?,
            probe_response: p.probe_response(),
            ack_psn_offset: p.ack_psn_offset(),
            ev: p.ev(),
            sender_context: p.sender_context(),
            receiver_context: p.receiver_context(),
            cum_ack_psn: p.cum_ack_psn(),
            cc_type: p.cc_type(),
            cc_flags: p.cc_flags(),
            mpr: p.mpr(),
            sack_offset: p.sack_offset(),
            bitmap: p.bitmap(),
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    /// Emit; `cc_type` and `cc_flags` are cut to 4 bits.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut SethPacket<T>) {
        p.set_flags(self.skip_mode, self.probe_response);
        p.set_ack_psn_offset(self.ack_psn_offset);
        p.set_ev(self.ev);
        p.set_sender_context(self.sender_context);
        p.set_receiver_context(self.receiver_context);
        p.set_cum_ack_psn(self.cum_ack_psn);
        p.set_cc(self.cc_type, self.cc_flags);
        p.set_mpr(self.mpr);
        p.set_sack_offset(self.sack_offset);
        p.set_bitmap(self.bitmap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> SethRepr {
        SethRepr {
            skip_mode: SkipMode::AlwaysSkip,
            probe_response: true,
            ack_psn_offset: -2,
            ev: 0xDEAD_BEEF,
            sender_context: 0x1111,
            receiver_context: 0x2222,
            cum_ack_psn: Psn::new(0xAB_CDEF),
            cc_type: 0x3,
            cc_flags: 0x5,
            mpr: 0xFF,
            sack_offset: 1,
            bitmap: 0x0102_0304_0506_0708,
        }
    }

    #[test]
    fn layout() {
        let r = sample();
        let mut b = [0xEEu8; HEADER_LEN];
        r.emit(&mut SethPacket::new_unchecked(&mut b[..]));
        assert_eq!(
            b,
            [
                0xA0, 0, 0xFF, 0xFE, 0xDE, 0xAD, 0xBE, 0xEF, 0x11, 0x11, 0x22, 0x22, 0, 0xAB, 0xCD, 0xEF, 0x35, 0xFF,
                0x00, 0x01, 1, 2, 3, 4, 5, 6, 7, 8
            ]
        );
        assert_eq!(SethRepr::parse(&SethPacket::new_checked(&b[..]).unwrap()), Ok(r));
        assert_eq!(r.probe_id(), Some(0xFFFE));
        assert_eq!(r.mpr_psns(), 32_640);
        assert_eq!(r.bitmap_base(), Psn::new(0xAB_CDF0));
        b[0] |= 0xC0;
        assert_eq!(
            SethRepr::parse(&SethPacket::new_unchecked(&b[..])),
            Err(WireError::BadSkipMode(3))
        );
        assert_eq!(
            SethPacket::new_checked(&b[..27]).err(),
            Some(WireError::Truncated { layer: Layer::Seth })
        );
    }
}
