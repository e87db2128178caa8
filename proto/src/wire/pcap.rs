//! Minimal pcap writer: nanosecond timestamps (magic 0xa1b23c4d), Ethernet
//! link type, little-endian headers (the magic tells readers the order).

use std::io::{self, Write};

use crate::Instant;

/// Magic of the nanosecond-resolution pcap format.
pub const PCAP_MAGIC_NS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_ETHERNET.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Snapshot length we declare (frames are written whole).
pub const SNAPLEN: u32 = 262_144;

/// Writes frames to a pcap stream.
pub struct PcapWriter<W: Write> {
    out: W,
}

impl<W: Write> PcapWriter<W> {
    /// Write the global header.
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&PCAP_MAGIC_NS.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes()); // version 2.4
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        h.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        h.extend_from_slice(&SNAPLEN.to_le_bytes());
        h.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out })
    }

    /// Append one frame stamped `ts` (simulated time; picoseconds are
    /// truncated to nanoseconds). Frames longer than the snap length are cut.
    pub fn write_frame(&mut self, ts: Instant, frame: &[u8]) -> io::Result<()> {
        let ns = ts.as_ns();
        let sec = u32::try_from(ns / 1_000_000_000).unwrap_or(u32::MAX);
        let nsec = (ns % 1_000_000_000) as u32;
        let orig = u32::try_from(frame.len()).unwrap_or(u32::MAX);
        let incl = orig.min(SNAPLEN);
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&sec.to_le_bytes());
        h[4..8].copy_from_slice(&nsec.to_le_bytes());
        h[8..12].copy_from_slice(&incl.to_le_bytes());
        h[12..16].copy_from_slice(&orig.to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(&frame[..incl as usize])
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_record() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.write_frame(Instant::from_ns(1_500_000_123), &[1, 2, 3]).unwrap();
        let v = w.into_inner();
        assert_eq!(&v[..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(&v[20..24], &[1, 0, 0, 0]);
        assert_eq!(&v[24..28], &1u32.to_le_bytes());
        assert_eq!(&v[28..32], &500_000_123u32.to_le_bytes());
        assert_eq!(&v[32..36], &3u32.to_le_bytes());
        assert_eq!(&v[40..], &[1, 2, 3]);
    }
}
