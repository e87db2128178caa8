//! ERTH, the MRC 1.0 endpoint-request extension header: 16 bytes after the
//! BTH of a connectionless endpoint request (0xD8) or response (0xD9) to
//! the reserved QP [`super::choices::ENDPOINT_QPN`] (grade S for the
//! operations and fields; the positions, the request id and the reserved
//! tail are ours, U).
//!
//! | bytes | field | grade |
//! |-------|-------|-------|
//! | 0     | operation ([`EndpointOp`]: 0 Port Status Update, 1 EV Probe) | S |
//! | 1     | reserved | U |
//! | 2-3   | request id (matches a response to its request in a batch) | U |
//! | 4-7   | port status mask (32 bits) | S |
//! | 8-9   | timestamp (16 bits) | S (field), U (width) |
//! | 10-15 | reserved | U |

use serde::Serialize;

use crate::wire::field::{get_u16, get_u32, get_u8, set_bytes, set_u16, set_u32, set_u8};
use crate::wire::{Layer, WireError};

mod field {
    pub const OP: usize = 0;
    pub const RESERVED1: usize = 1;
    pub const REQUEST_ID: usize = 2;
    pub const PORT_STATUS_MASK: usize = 4;
    pub const TIMESTAMP: usize = 8;
    pub const RESERVED: core::ops::Range<usize> = 10..16;
}

pub const HEADER_LEN: usize = 16;

/// Endpoint operations (grade S).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[repr(u8)]
pub enum EndpointOp {
    /// Tell the peer which of our ports are up.
    PortStatusUpdate = 0,
    /// Test one EV's path (RTT and service time); an EETH names the EV.
    EvProbe = 1,
}

impl EndpointOp {
    pub const ALL: [EndpointOp; 2] = [EndpointOp::PortStatusUpdate, EndpointOp::EvProbe];
    pub const fn from_u8(v: u8) -> Option<EndpointOp> {
        match v {
            0 => Some(EndpointOp::PortStatusUpdate),
            1 => Some(EndpointOp::EvProbe),
            _ => None,
        }
    }
    pub const fn as_u8(self) -> u8 {
        self as u8
    }
    pub const fn name(self) -> &'static str {
        match self {
            EndpointOp::PortStatusUpdate => "PORT_STATUS_UPDATE",
            EndpointOp::EvProbe => "EV_PROBE",
        }
    }
}

fixed_header_view!(
    /// Zero-copy view of an ERTH.
    ErthPacket,
    HEADER_LEN,
    Layer::Erth
);

impl<T: AsRef<[u8]>> ErthPacket<T> {
    pub fn op_raw(&self) -> u8 {
        get_u8(self.bytes(), field::OP)
    }
    pub fn request_id(&self) -> u16 {
        get_u16(self.bytes(), field::REQUEST_ID)
    }
    pub fn port_status_mask(&self) -> u32 {
        get_u32(self.bytes(), field::PORT_STATUS_MASK)
    }
    pub fn timestamp(&self) -> u16 {
        get_u16(self.bytes(), field::TIMESTAMP)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ErthPacket<T> {
    /// The operation byte and every reserved byte.
    pub fn set_op(&mut self, op: EndpointOp) {
        set_u8(self.bytes_mut(), field::OP, op.as_u8());
        set_u8(self.bytes_mut(), field::RESERVED1, 0);
        set_bytes(self.bytes_mut(), field::RESERVED.start, &[0; 6]);
    }
    pub fn set_request_id(&mut self, v: u16) {
        set_u16(self.bytes_mut(), field::REQUEST_ID, v);
    }
    pub fn set_port_status_mask(&mut self, v: u32) {
        set_u32(self.bytes_mut(), field::PORT_STATUS_MASK, v);
    }
    pub fn set_timestamp(&mut self, v: u16) {
        set_u16(self.bytes_mut(), field::TIMESTAMP, v);
    }
}

/// Owned ERTH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ErthRepr {
    pub op: EndpointOp,
    pub request_id: u16,
    /// One bit per port: up.
    pub port_status_mask: u32,
    pub timestamp: u16,
}

impl ErthRepr {
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(p: &ErthPacket<T>) -> Result<Self, WireError> {
        p.check_len()?;
        let op = p.op_raw();
        Ok(ErthRepr {
            op: EndpointOp::from_u8(op).ok_or(WireError::UnknownEndpointOp(op))?,
            request_id: p.request_id(),
            port_status_mask: p.port_status_mask(),
            timestamp: p.timestamp(),
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut ErthPacket<T>) {
        p.set_op(self.op);
        p.set_request_id(self.request_id);
        p.set_port_status_mask(self.port_status_mask);
        p.set_timestamp(self.timestamp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let r = ErthRepr {
            op: EndpointOp::EvProbe,
            request_id: 0x0203,
            port_status_mask: 0x0405_0607,
            timestamp: 0x0809,
        };
        let mut b = [0xFFu8; HEADER_LEN];
        r.emit(&mut ErthPacket::new_unchecked(&mut b[..]));
        assert_eq!(b, [1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0, 0, 0]);
        assert_eq!(ErthRepr::parse(&ErthPacket::new_checked(&b[..]).unwrap()), Ok(r));
        b[0] = 2;
        assert_eq!(
            ErthRepr::parse(&ErthPacket::new_unchecked(&b[..])),
            Err(WireError::UnknownEndpointOp(2))
        );
        assert_eq!(
            ErthPacket::new_checked(&b[..15]).err(),
            Some(WireError::Truncated { layer: Layer::Erth })
        );
    }
}
