//! EETH, the MRC 1.0 endpoint-EV extension header: 36 bytes after the ERTH
//! of an EV Probe ([`super::choices::eeth_follows`]). Its size is grade S;
//! its layout is ours (U): room for the widest EV (256 bits, SRv6), the EV
//! format, the port the EV leaves on and the responder's service time.
//!
//! | bytes | field | grade |
//! |-------|-------|-------|
//! | 0     | EV format ([`EvFormat`]) | U |
//! | 1     | port (the EV entry's port) | C (an EV names a port), U (position) |
//! | 2-3   | service time (ns, saturating; 0 on requests) | U |
//! | 4-35  | EV, big-endian, right-aligned (a 32-bit EV in bytes 32-35) | U |

use serde::Serialize;

use crate::wire::field::{get_u16, get_u8, set_bytes, set_u16, set_u8};
use crate::wire::{Layer, WireError};

mod field {
    pub const EV_FORMAT: usize = 0;
    pub const PORT: usize = 1;
    pub const SERVICE_TIME: usize = 2;
    pub const EV: core::ops::Range<usize> = 4..36;
}

pub const HEADER_LEN: usize = 36;
/// Bytes of the EV field.
pub const EV_BYTES: usize = 32;

/// How many EV bits the probed EV has and where a fabric reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[repr(u8)]
pub enum EvFormat {
    /// 16 bits in the UDP source port.
    SourcePort16 = 0,
    /// 32 bits over the UDP source port and the IPv6 flow label.
    SourcePortFlowLabel32 = 1,
    /// 128-bit SRv6 segment list.
    Srv6_128 = 2,
    /// 256-bit SRv6 segment list.
    Srv6_256 = 3,
}

impl EvFormat {
    pub const ALL: [EvFormat; 4] = [
        EvFormat::SourcePort16,
        EvFormat::SourcePortFlowLabel32,
        EvFormat::Srv6_128,
        EvFormat::Srv6_256,
    ];
    pub const fn from_u8(v: u8) -> Option<EvFormat> {
        match v {
            0 => Some(EvFormat::SourcePort16),
            1 => Some(EvFormat::SourcePortFlowLabel32),
            2 => Some(EvFormat::Srv6_128),
            3 => Some(EvFormat::Srv6_256),
            _ => None,
        }
    }
    pub const fn as_u8(self) -> u8 {
        self as u8
    }
    /// EV width in bits.
    pub const fn bits(self) -> u32 {
        match self {
            EvFormat::SourcePort16 => 16,
            EvFormat::SourcePortFlowLabel32 => 32,
            EvFormat::Srv6_128 => 128,
            EvFormat::Srv6_256 => 256,
        }
    }
}

fixed_header_view!(
    /// Zero-copy view of an EETH.
    EethPacket,
    HEADER_LEN,
    Layer::Eeth
);

impl<T: AsRef<[u8]>> EethPacket<T> {
    pub fn ev_format_raw(&self) -> u8 {
        get_u8(self.bytes(), field::EV_FORMAT)
    }
    pub fn port(&self) -> u8 {
        get_u8(self.bytes(), field::PORT)
    }
    pub fn service_time(&self) -> u16 {
        get_u16(self.bytes(), field::SERVICE_TIME)
    }
    pub fn ev(&self) -> [u8; EV_BYTES] {
        let mut ev = [0; EV_BYTES];
        if let Some(s) = self.bytes().get(field::EV) {
            ev.copy_from_slice(s);
        }
        ev
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EethPacket<T> {
    pub fn set_ev_format(&mut self, v: EvFormat) {
        set_u8(self.bytes_mut(), field::EV_FORMAT, v.as_u8());
    }
    pub fn set_port(&mut self, v: u8) {
        set_u8(self.bytes_mut(), field::PORT, v);
    }
    pub fn set_service_time(&mut self, v: u16) {
        set_u16(self.bytes_mut(), field::SERVICE_TIME, v);
    }
    pub fn set_ev(&mut self, v: &[u8; EV_BYTES]) {
        set_bytes(self.bytes_mut(), field::EV.start, v);
    }
}

/// Owned EETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct EethRepr {
    pub ev_format: EvFormat,
    pub port: u8,
    /// Responder's service time in ns (saturating), 0 on requests.
    pub service_time: u16,
    /// The EV, big-endian, right-aligned.
    pub ev: [u8; EV_BYTES],
}

impl EethRepr {
    /// An EETH naming a 32-bit (or 16-bit) EV.
    pub fn for_ev32(ev_format: EvFormat, port: u8, ev: u32) -> EethRepr {
        let mut b = [0; EV_BYTES];
        b[EV_BYTES - 4..].copy_from_slice(&ev.to_be_bytes());
        EethRepr {
            ev_format,
            port,
            service_time: 0,
            ev: b,
        }
    }
    /// The low 32 bits of the EV.
    pub fn ev32(&self) -> u32 {
        let t = &self.ev[EV_BYTES - 4..];
        u32::from_be_bytes([t[0], t[1], t[2], t[3]])
    }

    #[inline]
    pub fn parse<T: AsRef<[u8]>>(p: &EethPacket<T>) -> Result<Self, WireError> {
        p.check_len()?;
        let f = p.ev_format_raw();
        Ok(EethRepr {
            ev_format: EvFormat::from_u8(f).ok_or(WireError::UnknownEvFormat(f))?,
            port: p.port(),
            service_time: p.service_time(),
            ev: p.ev(),
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut EethPacket<T>) {
        p.set_ev_format(self.ev_format);
        p.set_port(self.port);
        p.set_service_time(self.service_time);
        p.set_ev(&self.ev);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let mut r = EethRepr::for_ev32(EvFormat::SourcePortFlowLabel32, 5, 0xCAFE_F00D);
        r.service_time = 0x0102;
        assert_eq!(r.ev32(), 0xCAFE_F00D);
        let mut b = [0xFFu8; HEADER_LEN];
        r.emit(&mut EethPacket::new_unchecked(&mut b[..]));
        assert_eq!(&b[..4], &[1, 5, 1, 2]);
        assert!(b[4..32].iter().all(|&x| x == 0));
        assert_eq!(&b[32..], &[0xCA, 0xFE, 0xF0, 0x0D]);
        assert_eq!(EethRepr::parse(&EethPacket::new_checked(&b[..]).unwrap()), Ok(r));
        b[0] = 4;
        assert_eq!(
            EethRepr::parse(&EethPacket::new_unchecked(&b[..])),
            Err(WireError::UnknownEvFormat(4))
        );
        assert_eq!(
            EethPacket::new_checked(&b[..35]).err(),
            Some(WireError::Truncated { layer: Layer::Eeth })
        );
    }
}
