//! TSETH, the MRC 1.0 timestamp extension header: 4 bytes after the METH of
//! a data packet whose BTH TS flag is set (grade S for the fields; their
//! bit positions are ours, U).
//!
//! | bytes | bits | field | grade |
//! |-------|------|-------|-------|
//! | 0-1   | | transmit timestamp (16 bits, in units the resolution bit selects) | S |
//! | 2     | 7 resolution, 6-4 reserved, 3-0 format | S (fields), U (positions) |
//! | 3     | reserved | U |

use crate::wire::field::{get_u16, get_u8, set_u16, set_u8};
use crate::wire::{Layer, WireError};

mod field {
    pub const TX_TS: usize = 0;
    /// Resolution bit and format nibble.
    pub const FORMAT: usize = 2;
    pub const RESERVED: usize = 3;
}

pub const HEADER_LEN: usize = 4;
/// Byte 2 bit 7.
pub const RESOLUTION: u8 = 0x80;
/// Byte 2 bits 3-0.
pub const FORMAT_MASK: u8 = 0x0F;

fixed_header_view!(
    /// Zero-copy view of a TSETH.
    TsethPacket,
    HEADER_LEN,
    Layer::Tseth
);

impl<T: AsRef<[u8]>> TsethPacket<T> {
    pub fn tx_ts(&self) -> u16 {
        get_u16(self.bytes(), field::TX_TS)
    }
    pub fn resolution(&self) -> bool {
        get_u8(self.bytes(), field::FORMAT) & RESOLUTION != 0
    }
    pub fn format(&self) -> u8 {
        get_u8(self.bytes(), field::FORMAT) & FORMAT_MASK
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> TsethPacket<T> {
    pub fn set_tx_ts(&mut self, v: u16) {
        set_u16(self.bytes_mut(), field::TX_TS, v);
    }
    /// Byte 2 (reserved bits zero) and the reserved byte 3.
    pub fn set_resolution_format(&mut self, resolution: bool, format: u8) {
        let v = if resolution { RESOLUTION } else { 0 } | (format & FORMAT_MASK);
        set_u8(self.bytes_mut(), field::FORMAT, v);
        set_u8(self.bytes_mut(), field::RESERVED, 0);
    }
}

/// Owned TSETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TsethRepr {
    /// Sender's clock at transmission (16 bits, wrapping).
    pub tx_ts: u16,
    /// The resolution bit (which unit `tx_ts` counts in).
    pub resolution: bool,
    /// Timestamp format (4 bits).
    pub format: u8,
}

impl TsethRepr {
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(p: &TsethPacket<T>) -> Result<Self, WireError> {
        p.check_len()?;
        Ok(TsethRepr {
            tx_ts: p.tx_ts(),
            resolution: p.resolution(),
            format: p.format(),
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    /// Emit; `format` is cut to 4 bits.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut TsethPacket<T>) {
        p.set_tx_ts(self.tx_ts);
        p.set_resolution_format(self.resolution, self.format);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let r = TsethRepr {
            tx_ts: 0xBEEF,
            resolution: true,
            format: 0xA,
        };
        let mut b = [0xFFu8; HEADER_LEN];
        r.emit(&mut TsethPacket::new_unchecked(&mut b[..]));
        assert_eq!(b, [0xBE, 0xEF, 0x8A, 0x00]);
        assert_eq!(TsethRepr::parse(&TsethPacket::new_checked(&b[..]).unwrap()), Ok(r));
        b[2] |= 0x70; // reserved bits are ignored
        assert_eq!(TsethRepr::parse(&TsethPacket::new_unchecked(&b[..])), Ok(r));
        assert_eq!(
            TsethPacket::new_checked(&b[..3]).err(),
            Some(WireError::Truncated { layer: Layer::Tseth })
        );
    }
}
