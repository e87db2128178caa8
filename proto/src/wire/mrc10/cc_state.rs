//! CC_STATE, the congestion-control state that follows the SETH of every
//! MRC 1.0 SACK: 8 bytes (grade S for the fields and widths; the bit
//! positions are ours, U).
//!
//! | bytes | bits | field | grade |
//! |-------|------|-------|-------|
//! | 0-1   | | echoed timestamp (the TSETH `tx_ts` of the packet acknowledged) | S |
//! | 2-3   | 15 restore, 14-0 out-of-order count | | S (fields), U (positions) |
//! | 4     | 7 reserved, 6-0 receiver cwnd penalty | | S (field), U (position) |
//! | 5-7   | | received bytes (24 bits, wrapping) | S |

use crate::wire::field::{get_u16, get_u24, get_u8, set_u16, set_u24, set_u8};
use crate::wire::{Layer, WireError};

mod field {
    pub const ECHO_TS: usize = 0;
    /// Restore bit and out-of-order count.
    pub const OOO: usize = 2;
    pub const CWND_PENALTY: usize = 4;
    pub const RCVD_BYTES: usize = 5;
}

pub const HEADER_LEN: usize = 8;
/// Bit 15 of bytes 2-3.
pub const RESTORE: u16 = 0x8000;
/// Bits 14-0 of bytes 2-3.
pub const OOO_COUNT_MASK: u16 = 0x7FFF;
/// Bits 6-0 of byte 4.
pub const CWND_PENALTY_MASK: u8 = 0x7F;
/// 24 bits of received bytes.
pub const RCVD_BYTES_MASK: u32 = 0xFF_FFFF;

fixed_header_view!(
    /// Zero-copy view of a CC_STATE.
    CcStatePacket,
    HEADER_LEN,
    Layer::CcState
);

impl<T: AsRef<[u8]>> CcStatePacket<T> {
    pub fn echo_ts(&self) -> u16 {
        get_u16(self.bytes(), field::ECHO_TS)
    }
    pub fn restore(&self) -> bool {
        get_u16(self.bytes(), field::OOO) & RESTORE != 0
    }
    pub fn ooo_count(&self) -> u16 {
        get_u16(self.bytes(), field::OOO) & OOO_COUNT_MASK
    }
    pub fn cwnd_penalty(&self) -> u8 {
        get_u8(self.bytes(), field::CWND_PENALTY) & CWND_PENALTY_MASK
    }
    pub fn rcvd_bytes(&self) -> u32 {
        get_u24(self.bytes(), field::RCVD_BYTES)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> CcStatePacket<T> {
    pub fn set_echo_ts(&mut self, v: u16) {
        set_u16(self.bytes_mut(), field::ECHO_TS, v);
    }
    pub fn set_restore_ooo(&mut self, restore: bool, ooo_count: u16) {
        let v = if restore { RESTORE } else { 0 } | (ooo_count & OOO_COUNT_MASK);
        set_u16(self.bytes_mut(), field::OOO, v);
    }
    /// Byte 4, reserved bit zero.
    pub fn set_cwnd_penalty(&mut self, v: u8) {
        set_u8(self.bytes_mut(), field::CWND_PENALTY, v & CWND_PENALTY_MASK);
    }
    pub fn set_rcvd_bytes(&mut self, v: u32) {
        set_u24(self.bytes_mut(), field::RCVD_BYTES, v & RCVD_BYTES_MASK);
    }
}

/// Owned CC_STATE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CcStateRepr {
    /// The acknowledged packet's transmit timestamp, echoed (RTT sample).
    pub echo_ts: u16,
    /// Out-of-order packets seen (15 bits).
    pub ooo_count: u16,
    /// The restore bit.
    pub restore: bool,
    /// The receiver's back-pressure on the sender's window (7 bits).
    pub cwnd_penalty: u8,
    /// Bytes received (24 bits, wrapping).
    pub rcvd_bytes: u32,
}

impl CcStateRepr {
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(p: &CcStatePacket<T>) -> Result<Self, WireError> {
        p.check_len()?;
        Ok(CcStateRepr {
            echo_ts: p.echo_ts(),
            ooo_count: p.ooo_count(),
            restore: p.restore(),
            cwnd_penalty: p.cwnd_penalty(),
            rcvd_bytes: p.rcvd_bytes(),
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    /// Emit; fields are cut to their widths.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut CcStatePacket<T>) {
        p.set_echo_ts(self.echo_ts);
        p.set_restore_ooo(self.restore, self.ooo_count);
        p.set_cwnd_penalty(self.cwnd_penalty);
        p.set_rcvd_bytes(self.rcvd_bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let r = CcStateRepr {
            echo_ts: 0x1234,
            ooo_count: 0x7FFE,
            restore: true,
            cwnd_penalty: 0x55,
            rcvd_bytes: 0xAB_CDEF,
        };
        let mut b = [0xFFu8; HEADER_LEN];
        r.emit(&mut CcStatePacket::new_unchecked(&mut b[..]));
        assert_eq!(b, [0x12, 0x34, 0xFF, 0xFE, 0x55, 0xAB, 0xCD, 0xEF]);
        assert_eq!(CcStateRepr::parse(&CcStatePacket::new_checked(&b[..]).unwrap()), Ok(r));
        b[4] |= 0x80; // reserved bit ignored
        assert_eq!(CcStateRepr::parse(&CcStatePacket::new_unchecked(&b[..])), Ok(r));
        assert_eq!(
            CcStatePacket::new_checked(&b[..7]).err(),
            Some(WireError::Truncated { layer: Layer::CcState })
        );
    }
}
