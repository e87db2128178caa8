//! Classic pcap (libpcap 2.4), both directions.
//!
//! [`PcapWriter`]: nanosecond timestamps (magic 0xa1b23c4d), Ethernet link
//! type, little-endian headers (the magic tells readers the order).
//!
//! [`PcapReader`]: what other tools write too: either byte order, micro- or
//! nanosecond magic, any link type (reported; the caller decides). Every
//! malformed file or record is a typed [`PcapError`]; after an error the
//! reader yields nothing more (record boundaries are lost).

use std::io::{self, Write};

use crate::Instant;

/// Magic of the nanosecond-resolution pcap format.
pub const PCAP_MAGIC_NS: u32 = 0xa1b2_3c4d;
/// Magic of the microsecond-resolution (original) pcap format.
pub const PCAP_MAGIC_US: u32 = 0xa1b2_c3d4;
/// Bytes of the global header.
pub const GLOBAL_HEADER_LEN: usize = 24;
/// Bytes of a record header.
pub const RECORD_HEADER_LEN: usize = 16;
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

/// Why a capture cannot be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PcapError {
    /// Fewer than 24 bytes: no global header.
    #[error("truncated pcap global header ({len} of 24 bytes)")]
    TruncatedGlobalHeader { len: usize },
    /// Not a classic pcap magic in either byte order (pcapng included).
    #[error("not a classic pcap file (magic {0:#010x})")]
    BadMagic(u32),
    /// The file ends inside record `index`'s 16-byte header.
    #[error("record {index}: truncated record header at byte {at}")]
    TruncatedRecordHeader { index: u64, at: usize },
    /// Record `index` declares more bytes than the file holds.
    #[error("record {index}: {declared} bytes declared, {available} left in the file")]
    TruncatedRecord {
        index: u64,
        declared: usize,
        available: usize,
    },
    /// Record `index` captured more bytes than its original length, or a
    /// sub-second field beyond one second.
    #[error("record {index}: inconsistent record header")]
    BadRecordHeader { index: u64 },
}

/// One captured frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcapRecord<'a> {
    /// Position in the file, from 0.
    pub index: u64,
    /// Capture time in nanoseconds since the epoch (microsecond files are
    /// scaled).
    pub ts_ns: u64,
    /// Length of the frame on the wire.
    pub orig_len: u32,
    /// The captured bytes (shorter than `orig_len` when the snap length cut
    /// the frame).
    pub data: &'a [u8],
}

/// Reads a classic pcap held in memory.
#[derive(Clone, Debug)]
pub struct PcapReader<'a> {
    data: &'a [u8],
    at: usize,
    big_endian: bool,
    nanoseconds: bool,
    link_type: u32,
    snaplen: u32,
    index: u64,
    failed: bool,
}

impl<'a> PcapReader<'a> {
    /// Read the global header.
    pub fn new(data: &'a [u8]) -> Result<Self, PcapError> {
        let Some(h) = data.first_chunk::<GLOBAL_HEADER_LEN>() else {
            return Err(PcapError::TruncatedGlobalHeader { len: data.len() });
        };
        let magic_le = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let magic_be = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
        let (big_endian, nanoseconds) = match (magic_le, magic_be) {
            (PCAP_MAGIC_US, _) => (false, false),
            (PCAP_MAGIC_NS, _) => (false, true),
            (_, PCAP_MAGIC_US) => (true, false),
            (_, PCAP_MAGIC_NS) => (true, true),
            _ => return Err(PcapError::BadMagic(magic_le)),
        };
        let mut r = PcapReader {
            data,
            at: GLOBAL_HEADER_LEN,
            big_endian,
            nanoseconds,
            link_type: 0,
            snaplen: 0,
            index: 0,
            failed: false,
        };
        r.snaplen = r.u32_at(16);
        r.link_type = r.u32_at(20);
        Ok(r)
    }
    fn u32_at(&self, at: usize) -> u32 {
        let b = match self.data.get(at..at + 4) {
            Some(&[a, b, c, d]) => [a, b, c, d],
            _ => [0; 4],
        };
        if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }
    /// The link type of every record ([`LINKTYPE_ETHERNET`] for ours).
    pub fn link_type(&self) -> u32 {
        self.link_type
    }
    /// The snapshot length the file declares.
    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }
    /// Headers are big-endian.
    pub fn big_endian(&self) -> bool {
        self.big_endian
    }
    /// Timestamps are in nanoseconds (else microseconds).
    pub fn nanoseconds(&self) -> bool {
        self.nanoseconds
    }

    fn read_record(&mut self) -> Result<PcapRecord<'a>, PcapError> {
        let index = self.index;
        let at = self.at;
        if self.data.len() - at < RECORD_HEADER_LEN {
            return Err(PcapError::TruncatedRecordHeader { index, at });
        }
        let sec = u64::from(self.u32_at(at));
        let frac = u64::from(self.u32_at(at + 4));
        let incl = self.u32_at(at + 8);
        let orig_len = self.u32_at(at + 12);
        let (frac_limit, ns_per_unit) = if self.nanoseconds {
            (1_000_000_000, 1)
        } else {
            (1_000_000, 1_000)
        };
        if incl > orig_len || frac >= frac_limit {
            return Err(PcapError::BadRecordHeader { index });
        }
        let start = at + RECORD_HEADER_LEN;
        let available = self.data.len() - start;
        let declared = incl as usize;
        if declared > available {
            return Err(PcapError::TruncatedRecord {
                index,
                declared,
                available,
            });
        }
        self.at = start + declared;
        self.index += 1;
        Ok(PcapRecord {
            index,
            ts_ns: sec * 1_000_000_000 + frac * ns_per_unit,
            orig_len,
            data: &self.data[start..start + declared],
        })
    }
}

impl<'a> Iterator for PcapReader<'a> {
    type Item = Result<PcapRecord<'a>, PcapError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.at >= self.data.len() {
            return None;
        }
        let r = self.read_record();
        self.failed = r.is_err();
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A capture written by hand in another tool's flavour.
    fn foreign(big_endian: bool, magic: u32, records: &[(u32, u32, &[u8])]) -> Vec<u8> {
        let w =
            |v: &mut Vec<u8>, x: u32| v.extend_from_slice(&if big_endian { x.to_be_bytes() } else { x.to_le_bytes() });
        let mut v = Vec::new();
        w(&mut v, magic);
        let (major, minor) = (2u16, 4u16);
        for x in [major, minor] {
            v.extend_from_slice(&if big_endian { x.to_be_bytes() } else { x.to_le_bytes() });
        }
        for x in [0, 0, 65_535, LINKTYPE_ETHERNET] {
            w(&mut v, x);
        }
        for &(sec, frac, data) in records {
            for x in [sec, frac, data.len() as u32, data.len() as u32 + 2] {
                w(&mut v, x);
            }
            v.extend_from_slice(data);
        }
        v
    }

    #[test]
    fn reads_every_flavour() {
        for big_endian in [false, true] {
            for (magic, unit) in [(PCAP_MAGIC_US, 1_000u64), (PCAP_MAGIC_NS, 1)] {
                let f = foreign(big_endian, magic, &[(3, 7, &[1, 2, 3]), (4, 0, &[])]);
                let r = PcapReader::new(&f).unwrap();
                assert_eq!(r.big_endian(), big_endian);
                assert_eq!(r.nanoseconds(), unit == 1);
                assert_eq!((r.link_type(), r.snaplen()), (LINKTYPE_ETHERNET, 65_535));
                let recs: Vec<_> = r.map(Result::unwrap).collect();
                assert_eq!(recs.len(), 2);
                assert_eq!(recs[0].ts_ns, 3_000_000_000 + 7 * unit);
                assert_eq!((recs[0].data, recs[0].orig_len), (&[1u8, 2, 3][..], 5));
                assert_eq!((recs[1].index, recs[1].data.len()), (1, 0));
            }
        }
    }

    #[test]
    fn typed_errors_on_bad_files() {
        assert_eq!(
            PcapReader::new(&[0; 23]).err(),
            Some(PcapError::TruncatedGlobalHeader { len: 23 })
        );
        let ng = [0x0a, 0x0d, 0x0d, 0x0a].repeat(6);
        assert_eq!(PcapReader::new(&ng).err(), Some(PcapError::BadMagic(0x0a0d_0d0a)));
        let good = foreign(false, PCAP_MAGIC_NS, &[(1, 2, &[9; 10])]);
        let cut_header = &good[..GLOBAL_HEADER_LEN + 5];
        let mut r = PcapReader::new(cut_header).unwrap();
        assert_eq!(
            r.next(),
            Some(Err(PcapError::TruncatedRecordHeader { index: 0, at: 24 }))
        );
        assert_eq!(r.next(), None, "nothing after an error");
        let cut_body = &good[..good.len() - 1];
        assert_eq!(
            PcapReader::new(cut_body).unwrap().next(),
            Some(Err(PcapError::TruncatedRecord {
                index: 0,
                declared: 10,
                available: 9
            }))
        );
        let mut bad_frac = good.clone();
        bad_frac[28..32].copy_from_slice(&1_000_000_000u32.to_le_bytes());
        assert_eq!(
            PcapReader::new(&bad_frac).unwrap().next(),
            Some(Err(PcapError::BadRecordHeader { index: 0 }))
        );
        // Every prefix of a good file reads without panicking, to an error or
        // to fewer records.
        for n in 0..good.len() {
            if let Ok(r) = PcapReader::new(&good[..n]) {
                assert!(r.last().is_some_and(|x| x.is_err()) || n == GLOBAL_HEADER_LEN);
            }
        }
    }

    #[test]
    fn reads_what_the_writer_writes() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.write_frame(Instant::from_ns(1_500_000_123), &[1, 2, 3]).unwrap();
        w.write_frame(Instant::from_ns(2_000_000_000), &[4; 70]).unwrap();
        let v = w.into_inner();
        let recs: Vec<_> = PcapReader::new(&v).unwrap().map(Result::unwrap).collect();
        assert_eq!(recs.len(), 2);
        assert_eq!((recs[0].ts_ns, recs[0].data), (1_500_000_123, &[1u8, 2, 3][..]));
        assert_eq!((recs[1].ts_ns, recs[1].data.len()), (2_000_000_000, 70));
    }

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
