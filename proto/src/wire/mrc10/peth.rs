//! PETH, the MRC 1.0 reliability-probe extension header: 16 bytes after the
//! BTH of a reliability probe (0xDE), which uses no PSN and is answered by
//! a SACK with pr = 1 carrying the probe id (grade S for the fields; the
//! positions and the reserved tail are ours, U).
//!
//! | bytes | field | grade |
//! |-------|-------|-------|
//! | 0-1   | probe id | S |
//! | 2-3   | sender context | S, U (which) |
//! | 4-5   | receiver context | S, U (which) |
//! | 6-7   | timestamp (16 bits) | S (field), U (width) |
//! | 8-15  | reserved | U |

use crate::wire::field::{get_u16, set_bytes, set_u16};
use crate::wire::{Layer, WireError};

mod field {
    pub const PROBE_ID: usize = 0;
    pub const SENDER_CONTEXT: usize = 2;
    pub const RECEIVER_CONTEXT: usize = 4;
    pub const TIMESTAMP: usize = 6;
    pub const RESERVED: core::ops::Range<usize> = 8..16;
}

pub const HEADER_LEN: usize = 16;

fixed_header_view!(
    /// Zero-copy view of a PETH.
    PethPacket,
    HEADER_LEN,
    Layer::Peth
);

impl<T: AsRef<[u8]>> PethPacket<T> {
    pub fn probe_id(&self) -> u16 {
        get_u16(self.bytes(), field::PROBE_ID)
    }
    pub fn sender_context(&self) -> u16 {
        get_u16(self.bytes(), field::SENDER_CONTEXT)
    }
    pub fn receiver_context(&self) -> u16 {
        get_u16(self.bytes(), field::RECEIVER_CONTEXT)
    }
    pub fn timestamp(&self) -> u16 {
        get_u16(self.bytes(), field::TIMESTAMP)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> PethPacket<T> {
    /// The probe id and the reserved tail.
    pub fn set_probe_id(&mut self, v: u16) {
        set_u16(self.bytes_mut(), field::PROBE_ID, v);
        set_bytes(self.bytes_mut(), field::RESERVED.start, &[0; 8]);
    }
    pub fn set_sender_context(&mut self, v: u16) {
        set_u16(self.bytes_mut(), field::SENDER_CONTEXT, v);
    }
    pub fn set_receiver_context(&mut self, v: u16) {
        set_u16(self.bytes_mut(), field::RECEIVER_CONTEXT, v);
    }
    pub fn set_timestamp(&mut self, v: u16) {
        set_u16(self.bytes_mut(), field::TIMESTAMP, v);
    }
}

/// Owned PETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PethRepr {
    /// Echoed as the `ack_psn_offset` of the SACK that answers.
    pub probe_id: u16,
    pub sender_context: u16,
    pub receiver_context: u16,
    pub timestamp: u16,
}

impl PethRepr {
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(p: &PethPacket<T>) -> Result<Self, WireError> {
        p.check_len()?;
        Ok(PethRepr {
            probe_id: p.probe_id(),
            sender_context: p.sender_context(),
            receiver_context: p.receiver_context(),
            timestamp: p.timestamp(),
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut PethPacket<T>) {
        p.set_probe_id(self.probe_id);
        p.set_sender_context(self.sender_context);
        p.set_receiver_context(self.receiver_context);
        p.set_timestamp(self.timestamp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let r = PethRepr {
            probe_id: 0x0102,
            sender_context: 0x0304,
            receiver_context: 0x0506,
            timestamp: 0x0708,
        };
        let mut b = [0xFFu8; HEADER_LEN];
        r.emit(&mut PethPacket::new_unchecked(&mut b[..]));
        assert_eq!(b, [1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(PethRepr::parse(&PethPacket::new_checked(&b[..]).unwrap()), Ok(r));
        assert_eq!(
            PethPacket::new_checked(&b[..15]).err(),
            Some(WireError::Truncated { layer: Layer::Peth })
        );
    }
}
