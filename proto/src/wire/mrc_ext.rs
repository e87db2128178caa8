//! MRC extension headers. Present exactly when the BTH X bit is set; they
//! follow RETH / ImmDt / AETH and precede the payload. Big-endian, every
//! header a multiple of 4 bytes so the payload stays 4-byte aligned.
//!
//! Every extension starts with one byte `version (7-4) | type (3-0)`;
//! version is [`MRC_EXT_VERSION`], types are [`EXT_DATA`] .. [`EXT_PROBE`].
//! Reserved bits are sent as 0 and ignored on receive.
//!
//! Data (type 1), on WRITE packets, 16 bytes, or 28 with placement:
//!
//! | bytes | bits | field |
//! |-------|------|-------|
//! | 0     | 7-4 version, 3-0 type = 1 | |
//! | 1     | 7 R (retransmit), 6-0 reserved | flags |
//! | 2-3   | | ev_index |
//! | 4-7   | | ev_seq |
//! | 8-11  | | tx_ts (ns, wrapping) |
//! | 12-15 | | msg_offset (bytes) |
//! | 16-23 | | placement VA (only WRITE MIDDLE / LAST / LAST-IMM) |
//! | 24-27 | | placement R_Key (idem) |
//!
//! SACK (type 2), on ACK packets with an ACK syndrome, 20 + 8/16/32 bytes:
//!
//! | bytes | bits | field |
//! |-------|------|-------|
//! | 0     | 7-4 version, 3-0 type = 2 | |
//! | 1     | 7-2 reserved, 1-0 width code (0: 64, 1: 128, 2: 256 bits; 3 invalid) | |
//! | 2-3   | | ev_index |
//! | 4-5   | | ecn_ce_count |
//! | 6-7   | | reserved |
//! | 8-11  | | echo_ts |
//! | 12-15 | | service_ns |
//! | 16    | | reserved |
//! | 17-19 | | base PSN (24 bits) |
//! | 20-   | | bitmap: 1, 2 or 4 64-bit words, word 0 first, each big-endian; bit `j` (value `1 << j`) of word `k` acknowledges `base + 64k + j` |
//!
//! NACK (type 3), on ACK packets with a NAK syndrome, 12 bytes:
//!
//! | bytes | field |
//! |-------|-------|
//! | 0     | version, type = 3 |
//! | 1     | kind (1 trimmed, 2 out of window, 3 remote access) |
//! | 2-3   | ev_index |
//! | 4     | reserved |
//! | 5-7   | cum_psn (24 bits) |
//! | 8-11  | echo_ts |
//!
//! Probe (type 4), on ACK packets with an ACK syndrome, 16 bytes:
//!
//! | bytes | bits | field |
//! |-------|------|-------|
//! | 0     | 7-4 version, 3-0 type = 4 | |
//! | 1     | 7 response, 6-0 reserved | flags |
//! | 2-3   | | ev_index |
//! | 4-7   | | probe_id |
//! | 8-11  | | tx_ts |
//! | 12-15 | | service_ns (0 on requests) |

use super::field::*;
use super::{
    DataExtRepr, Layer, MrcExtRepr, NackExtRepr, NackKind, Opcode, PlacementRepr, ProbeExtRepr, SackBitmap,
    SackExtRepr, WireError, SACK_MAX_BITS,
};
use crate::Psn;

/// Extension format version carried in the top nibble of byte 0.
pub const MRC_EXT_VERSION: u8 = 1;
pub const EXT_DATA: u8 = 1;
pub const EXT_SACK: u8 = 2;
pub const EXT_NACK: u8 = 3;
pub const EXT_PROBE: u8 = 4;

pub const DATA_EXT_LEN: usize = 16;
pub const PLACEMENT_LEN: usize = 12;
pub const SACK_EXT_FIXED_LEN: usize = 20;
pub const NACK_EXT_LEN: usize = 12;
pub const PROBE_EXT_LEN: usize = 16;

const FLAG_RETRANSMIT: u8 = 0x80;
const FLAG_RESPONSE: u8 = 0x80;

impl NackKind {
    pub const fn from_u8(v: u8) -> Option<NackKind> {
        match v {
            1 => Some(NackKind::Trimmed),
            2 => Some(NackKind::OutOfWindow),
            3 => Some(NackKind::RemoteAccess),
            _ => None,
        }
    }
    pub const fn as_u8(self) -> u8 {
        self as u8
    }
}

impl SackBitmap {
    /// Wire width code of a width; widths other than 64/128/256 round up to
    /// the next one (capped at 256), so emit always writes a valid header.
    pub const fn width_code(bits: u16) -> u8 {
        if bits <= 64 {
            0
        } else if bits <= 128 {
            1
        } else {
            2
        }
    }
    /// Width in bits of a wire code, `None` for the invalid code 3.
    pub const fn width_of_code(code: u8) -> Option<u16> {
        match code {
            0 => Some(64),
            1 => Some(128),
            2 => Some(256),
            _ => None,
        }
    }
}

/// Zero-copy view of any MRC extension header: the common byte and the
/// per-type fields at their documented offsets. `check_len` needs the
/// opcode because the data extension's placement block depends on it.
#[derive(Debug, Clone)]
pub struct MrcExtPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> MrcExtPacket<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        MrcExtPacket { buffer }
    }
    /// Wrap after [`Self::check_len`].
    #[inline]
    pub fn new_checked(buffer: T, opcode: Opcode) -> Result<Self, WireError> {
        let p = Self::new_unchecked(buffer);
        p.check_len(opcode)?;
        Ok(p)
    }
    /// The version/type byte is valid and the whole extension is present.
    #[inline]
    pub fn check_len(&self, opcode: Opcode) -> Result<(), WireError> {
        let len = self.header_len(opcode)?;
        need(self.buffer.as_ref(), len, Layer::MrcExt)
    }
    /// Length of this extension as its first bytes declare it (checks version,
    /// type and SACK width, not that the bytes are present).
    #[inline]
    pub fn header_len(&self, opcode: Opcode) -> Result<usize, WireError> {
        let b = self.buffer.as_ref();
        need(b, 2, Layer::MrcExt)?;
        if self.version() != MRC_EXT_VERSION {
            return Err(WireError::BadExtVersion(self.version()));
        }
        Ok(match self.ext_type() {
            EXT_DATA if opcode.has_reth() => DATA_EXT_LEN,
            EXT_DATA => DATA_EXT_LEN + PLACEMENT_LEN,
            EXT_SACK => {
                let bits = SackBitmap::width_of_code(self.sack_width_code())
                    .ok_or(WireError::BadSackWidth(self.sack_width_code()))?;
                SACK_EXT_FIXED_LEN + usize::from(bits) / 8
            }
            EXT_NACK => NACK_EXT_LEN,
            EXT_PROBE => PROBE_EXT_LEN,
            t => return Err(WireError::UnknownExtType(t)),
        })
    }
    fn b(&self, i: usize) -> u8 {
        get_u8(self.buffer.as_ref(), i)
    }
    pub fn version(&self) -> u8 {
        self.b(0) >> 4
    }
    pub fn ext_type(&self) -> u8 {
        self.b(0) & 0x0F
    }
    /// Byte 1 (flags / width code / NACK kind, by type).
    pub fn byte1(&self) -> u8 {
        self.b(1)
    }
    pub fn ev_index(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 2)
    }
    // Data.
    pub fn retransmit(&self) -> bool {
        self.b(1) & FLAG_RETRANSMIT != 0
    }
    pub fn ev_seq(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 4)
    }
    pub fn data_tx_ts(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 8)
    }
    pub fn msg_offset(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 12)
    }
    pub fn placement_va(&self) -> u64 {
        get_u64(self.buffer.as_ref(), 16)
    }
    pub fn placement_rkey(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 24)
    }
    // SACK.
    pub fn sack_width_code(&self) -> u8 {
        self.b(1) & 0b11
    }
    pub fn ecn_ce_count(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 4)
    }
    pub fn sack_echo_ts(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 8)
    }
    pub fn sack_service_ns(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 12)
    }
    pub fn sack_base(&self) -> Psn {
        Psn::new(get_u24(self.buffer.as_ref(), 17))
    }
    pub fn sack_word(&self, k: usize) -> u64 {
        get_u64(self.buffer.as_ref(), SACK_EXT_FIXED_LEN + 8 * k)
    }
    // NACK.
    pub fn nack_kind_raw(&self) -> u8 {
        self.b(1)
    }
    pub fn nack_cum_psn(&self) -> Psn {
        Psn::new(get_u24(self.buffer.as_ref(), 5))
    }
    pub fn nack_echo_ts(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 8)
    }
    // Probe.
    pub fn probe_response(&self) -> bool {
        self.b(1) & FLAG_RESPONSE != 0
    }
    pub fn probe_id(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 4)
    }
    pub fn probe_tx_ts(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 8)
    }
    pub fn probe_service_ns(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 12)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> MrcExtPacket<T> {
    pub fn set_version_type(&mut self, version: u8, ext_type: u8) {
        set_u8(self.buffer.as_mut(), 0, (version << 4) | (ext_type & 0x0F));
    }
    pub fn set_byte1(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), 1, v);
    }
    pub fn set_ev_index(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 2, v);
    }
    pub fn set_u16_at(&mut self, at: usize, v: u16) {
        set_u16(self.buffer.as_mut(), at, v);
    }
    pub fn set_u24_at(&mut self, at: usize, v: u32) {
        set_u24(self.buffer.as_mut(), at, v);
    }
    pub fn set_u32_at(&mut self, at: usize, v: u32) {
        set_u32(self.buffer.as_mut(), at, v);
    }
    pub fn set_u64_at(&mut self, at: usize, v: u64) {
        set_u64(self.buffer.as_mut(), at, v);
    }
    pub fn set_u8_at(&mut self, at: usize, v: u8) {
        set_u8(self.buffer.as_mut(), at, v);
    }
}

impl MrcExtRepr {
    /// Wire type code.
    pub const fn ext_type(&self) -> u8 {
        match self {
            MrcExtRepr::Data(_) => EXT_DATA,
            MrcExtRepr::Sack(_) => EXT_SACK,
            MrcExtRepr::Nack(_) => EXT_NACK,
            MrcExtRepr::Probe(_) => EXT_PROBE,
        }
    }

    /// Bytes this extension occupies on the wire.
    pub const fn buffer_len(&self) -> usize {
        match self {
            MrcExtRepr::Data(d) => {
                if d.placement.is_some() {
                    DATA_EXT_LEN + PLACEMENT_LEN
                } else {
                    DATA_EXT_LEN
                }
            }
            MrcExtRepr::Sack(s) => {
                let bits = match SackBitmap::width_of_code(SackBitmap::width_code(s.bitmap.bits)) {
                    Some(b) => b as usize,
                    None => SACK_MAX_BITS,
                };
                SACK_EXT_FIXED_LEN + bits / 8
            }
            MrcExtRepr::Nack(_) => NACK_EXT_LEN,
            MrcExtRepr::Probe(_) => PROBE_EXT_LEN,
        }
    }

    /// Parse the extension that follows the standard headers of a packet
    /// with `opcode`. Checks that the type fits the opcode. Returns the
    /// extension and its length.
    #[inline(always)]
    pub fn parse<T: AsRef<[u8]>>(p: &MrcExtPacket<T>, opcode: Opcode) -> Result<(Self, usize), WireError> {
        let mut out = None;
        let len = Self::parse_into(p, opcode, &mut out)?;
        match out {
            Some(e) => Ok((e, len)),
            None => Err(WireError::Truncated { layer: Layer::MrcExt }),
        }
    }

    /// [`Self::parse`] writing the extension into `out` (the hot path: it
    /// avoids moving a large `Result` around). Returns the extension length.
    #[inline(always)]
    pub fn parse_into<T: AsRef<[u8]>>(
        p: &MrcExtPacket<T>,
        opcode: Opcode,
        out: &mut Option<MrcExtRepr>,
    ) -> Result<usize, WireError> {
        let ext_type = p.ext_type();
        if opcode == Opcode::Cnp {
            // CNPs never carry an extension: the X bit on one is an error
            // whatever follows.
            return Err(WireError::ExtMismatch {
                opcode: opcode.as_u8(),
                ext_type,
            });
        }
        let len = p.header_len(opcode)?;
        let allowed = match opcode {
            Opcode::Ack => matches!(ext_type, EXT_SACK | EXT_NACK | EXT_PROBE),
            Opcode::Cnp => false,
            _ => ext_type == EXT_DATA,
        };
        if !allowed {
            return Err(WireError::ExtMismatch {
                opcode: opcode.as_u8(),
                ext_type,
            });
        }
        need(p.buffer.as_ref(), len, Layer::MrcExt)?;
        *out = Some(match ext_type {
            EXT_DATA => {
                // Hot path: fixed offsets into arrays after one length check
                // each (`need` above already covered `len` bytes).
                let b = p.buffer.as_ref();
                let h: &[u8; DATA_EXT_LEN] = b.first_chunk().ok_or(WireError::Truncated { layer: Layer::MrcExt })?;
                let be32 = |i: usize| u32::from_be_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
                let placement = if len > DATA_EXT_LEN {
                    let pl: &[u8; PLACEMENT_LEN] = b
                        .get(DATA_EXT_LEN..)
                        .and_then(<[u8]>::first_chunk)
                        .ok_or(WireError::Truncated { layer: Layer::MrcExt })?;
                    let mut va = [0u8; 8];
                    va.copy_from_slice(&pl[..8]);
                    Some(PlacementRepr {
                        va: u64::from_be_bytes(va),
                        rkey: u32::from_be_bytes([pl[8], pl[9], pl[10], pl[11]]),
                    })
                } else {
                    None
                };
                MrcExtRepr::Data(DataExtRepr {
                    ev_index: u16::from_be_bytes([h[2], h[3]]),
                    retransmit: h[1] & FLAG_RETRANSMIT != 0,
                    ev_seq: be32(4),
                    tx_ts: be32(8),
                    msg_offset: be32(12),
                    placement,
                })
            }
            EXT_SACK => {
                // header_len validated the code; `unwrap_or` keeps this total.
                let bits = SackBitmap::width_of_code(p.sack_width_code()).unwrap_or(64);
                let mut bitmap = SackBitmap::new(bits);
                for (k, w) in bitmap.words.iter_mut().enumerate().take(usize::from(bits) / 64) {
                    *w = p.sack_word(k);
                }
                MrcExtRepr::Sack(SackExtRepr {
                    ev_index: p.ev_index(),
                    ecn_ce_count: p.ecn_ce_count(),
                    echo_ts: p.sack_echo_ts(),
                    service_ns: p.sack_service_ns(),
                    base: p.sack_base(),
                    bitmap,
                })
            }
            EXT_NACK => MrcExtRepr::Nack(NackExtRepr {
                kind: NackKind::from_u8(p.nack_kind_raw()).ok_or(WireError::UnknownNackKind(p.nack_kind_raw()))?,
                ev_index: p.ev_index(),
                cum_psn: p.nack_cum_psn(),
                echo_ts: p.nack_echo_ts(),
            }),
            _ => MrcExtRepr::Probe(ProbeExtRepr {
                response: p.probe_response(),
                ev_index: p.ev_index(),
                probe_id: p.probe_id(),
                tx_ts: p.probe_tx_ts(),
                service_ns: p.probe_service_ns(),
            }),
        });
        Ok(len)
    }

    /// Emit into a buffer of at least [`Self::buffer_len`] bytes. Reserved
    /// bytes are written as zero.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut MrcExtPacket<T>) {
        let len = self.buffer_len();
        // Every byte, reserved ones included, is written below (no fill:
        // this is on the per-packet hot path).
        p.set_version_type(MRC_EXT_VERSION, self.ext_type());
        match self {
            MrcExtRepr::Data(d) => {
                p.set_byte1(if d.retransmit { FLAG_RETRANSMIT } else { 0 });
                p.set_ev_index(d.ev_index);
                p.set_u32_at(4, d.ev_seq);
                p.set_u32_at(8, d.tx_ts);
                p.set_u32_at(12, d.msg_offset);
                if let Some(pl) = d.placement {
                    p.set_u64_at(16, pl.va);
                    p.set_u32_at(24, pl.rkey);
                }
            }
            MrcExtRepr::Sack(s) => {
                let code = SackBitmap::width_code(s.bitmap.bits);
                p.set_byte1(code);
                p.set_ev_index(s.ev_index);
                p.set_u16_at(4, s.ecn_ce_count);
                p.set_u16_at(6, 0);
                p.set_u32_at(8, s.echo_ts);
                p.set_u32_at(12, s.service_ns);
                p.set_u32_at(16, s.base.value()); // byte 16 reserved (0)
                let words = (len - SACK_EXT_FIXED_LEN) / 8;
                for (k, w) in s.bitmap.words.iter().enumerate().take(words) {
                    p.set_u64_at(SACK_EXT_FIXED_LEN + 8 * k, *w);
                }
            }
            MrcExtRepr::Nack(n) => {
                p.set_byte1(n.kind.as_u8());
                p.set_ev_index(n.ev_index);
                p.set_u32_at(4, n.cum_psn.value()); // byte 4 reserved (0)
                p.set_u32_at(8, n.echo_ts);
            }
            MrcExtRepr::Probe(pr) => {
                p.set_byte1(if pr.response { FLAG_RESPONSE } else { 0 });
                p.set_ev_index(pr.ev_index);
                p.set_u32_at(4, pr.probe_id);
                p.set_u32_at(8, pr.tx_ts);
                p.set_u32_at(12, pr.service_ns);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(e: MrcExtRepr, op: Opcode) -> Vec<u8> {
        let mut b = vec![0xAAu8; e.buffer_len()];
        e.emit(&mut MrcExtPacket::new_unchecked(&mut b[..]));
        let p = MrcExtPacket::new_checked(&b[..], op).unwrap();
        assert_eq!(MrcExtRepr::parse(&p, op).unwrap(), (e, b.len()));
        b
    }

    #[test]
    fn data_layout() {
        let d = DataExtRepr {
            ev_index: 0x0102,
            retransmit: true,
            ev_seq: 0x0304_0506,
            tx_ts: 0x0708_090A,
            msg_offset: 0x1000,
            placement: Some(PlacementRepr {
                va: 0x1122_3344_5566_7788,
                rkey: 0x99AA_BBCC,
            }),
        };
        let b = rt(MrcExtRepr::Data(d), Opcode::WriteMiddle);
        assert_eq!(
            b,
            [
                0x11, 0x80, 0x01, 0x02, 3, 4, 5, 6, 7, 8, 9, 10, 0, 0, 0x10, 0, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66,
                0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC
            ]
        );
        let d = DataExtRepr { placement: None, ..d };
        assert_eq!(rt(MrcExtRepr::Data(d), Opcode::WriteFirst).len(), 16);
    }

    #[test]
    fn sack_layout_and_width() {
        let mut bitmap = SackBitmap::new(128);
        bitmap.set(0);
        bitmap.set(65);
        let s = SackExtRepr {
            ev_index: 7,
            ecn_ce_count: 2,
            echo_ts: 3,
            service_ns: 4,
            base: Psn::new(0xFF_FFFF),
            bitmap,
        };
        let b = rt(MrcExtRepr::Sack(s), Opcode::Ack);
        assert_eq!(b.len(), 36);
        assert_eq!(&b[..2], &[0x12, 0x01]);
        assert_eq!(&b[16..20], &[0, 0xFF, 0xFF, 0xFF]);
        assert_eq!(b[27], 0x01); // word 0, bit 0
        assert_eq!(b[35], 0x02); // word 1, bit 1
        let mut bad = b.clone();
        bad[1] = 3;
        assert_eq!(
            MrcExtPacket::new_checked(&bad[..], Opcode::Ack).err(),
            Some(WireError::BadSackWidth(3))
        );
    }

    #[test]
    fn nack_and_probe() {
        let n = NackExtRepr {
            kind: NackKind::Trimmed,
            ev_index: 9,
            cum_psn: Psn::new(5),
            echo_ts: 6,
        };
        let b = rt(MrcExtRepr::Nack(n), Opcode::Ack);
        assert_eq!(b, [0x13, 1, 0, 9, 0, 0, 0, 5, 0, 0, 0, 6]);
        let mut bad = b.clone();
        bad[1] = 9;
        let p = MrcExtPacket::new_unchecked(&bad[..]);
        assert_eq!(
            MrcExtRepr::parse(&p, Opcode::Ack).err(),
            Some(WireError::UnknownNackKind(9))
        );
        let pr = ProbeExtRepr {
            response: true,
            ev_index: 1,
            probe_id: 2,
            tx_ts: 3,
            service_ns: 4,
        };
        assert_eq!(rt(MrcExtRepr::Probe(pr), Opcode::Ack)[..2], [0x14, 0x80]);
        // A probe on a WRITE is a mismatch; version 2 is rejected.
        let b = rt(MrcExtRepr::Probe(pr), Opcode::Ack);
        let p = MrcExtPacket::new_unchecked(&b[..]);
        assert_eq!(
            MrcExtRepr::parse(&p, Opcode::WriteOnly).err(),
            Some(WireError::ExtMismatch {
                opcode: 0x0A,
                ext_type: 4
            })
        );
        let mut v2 = b.clone();
        v2[0] = 0x24;
        assert_eq!(
            MrcExtPacket::new_checked(&v2[..], Opcode::Ack).err(),
            Some(WireError::BadExtVersion(2))
        );
        v2[0] = 0x15;
        assert_eq!(
            MrcExtPacket::new_checked(&v2[..], Opcode::Ack).err(),
            Some(WireError::UnknownExtType(5))
        );
    }
}
