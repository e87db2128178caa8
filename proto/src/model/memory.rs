//! Responder-side memory: registered regions, rkey and bounds checks, and
//! direct data placement.

use bytes::Bytes;

/// A memory-registration or access failure.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemoryError {
    #[error("rkey {0:#x} already registered")]
    DuplicateRkey(u32),
    #[error("region [{va:#x}, +{len}) overlaps an existing region")]
    Overlap { va: u64, len: u64 },
    #[error("region length {0} is zero or wraps the address space")]
    BadLength(u64),
    #[error("no region with rkey {0:#x}")]
    UnknownRkey(u32),
    #[error("region of rkey {0:#x} is a sink: its bytes are not kept")]
    Sink(u32),
    #[error("[{va:#x}, +{len}) outside the region of rkey {rkey:#x}")]
    OutOfBounds { rkey: u32, va: u64, len: u64 },
}

/// One registered region, backed by memory this table owns, or a sink.
#[derive(Clone, Debug)]
pub struct Region {
    pub va: u64,
    /// Length in bytes.
    pub len: u64,
    pub rkey: u32,
    /// The bytes; empty for a sink region (see [`MemoryTable::register_sink`]).
    pub data: Vec<u8>,
    /// Writes are checked (rkey, bounds) but not stored.
    pub sink: bool,
    /// Writes are checked and handed to the owner of the table as
    /// [`Placement`]s instead of stored (see
    /// [`MemoryTable::register_deferred`]).
    pub deferred: bool,
}

/// Bytes a QP accepted for a deferred region: the owner copies them to
/// the memory the region stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub rkey: u32,
    /// Byte offset in the region.
    pub offset: u64,
    pub bytes: Bytes,
}

/// The memory regions of one endpoint.
#[derive(Clone, Debug, Default)]
pub struct MemoryTable {
    regions: Vec<Region>,
    /// Writes to deferred regions not yet taken by the owner.
    placements: Vec<Placement>,
}

impl MemoryTable {
    /// Register `[va, va+len)` under `rkey`, zero-filled.
    pub fn register(&mut self, va: u64, len: u64, rkey: u32) -> Result<(), MemoryError> {
        self.add(va, len, rkey, false)
    }

    /// Register `[va, va+len)` under `rkey` as a sink: every access is
    /// checked exactly as for a real region, but written bytes are not
    /// stored and reads return an error. For simulations at fabric scale,
    /// where thousands of multi-megabyte flows would otherwise need their
    /// own memory; use [`MemoryTable::register`] wherever data is verified.
    pub fn register_sink(&mut self, va: u64, len: u64, rkey: u32) -> Result<(), MemoryError> {
        self.add(va, len, rkey, true)
    }

    /// Register `[va, va+len)` under `rkey` for memory the caller owns
    /// (a NIC's host buffers): every access is checked as for a real
    /// region, and the bytes of each accepted write are queued as a
    /// [`Placement`] for [`MemoryTable::take_placements`] instead of
    /// stored here. Reads return [`MemoryError::Sink`].
    /// Unlike regions this table stores, deferred regions may overlap
    /// each other (two registrations of one host buffer, as verbs allow):
    /// the bytes live in the owner's memory, once.
    pub fn register_deferred(&mut self, va: u64, len: u64, rkey: u32) -> Result<(), MemoryError> {
        if len == 0 || va.checked_add(len).is_none() || len > isize::MAX as u64 {
            return Err(MemoryError::BadLength(len));
        }
        if self.regions.iter().any(|r| r.rkey == rkey) {
            return Err(MemoryError::DuplicateRkey(rkey));
        }
        if self
            .regions
            .iter()
            .any(|r| !r.deferred && va < r.va + r.len && r.va < va + len)
        {
            return Err(MemoryError::Overlap { va, len });
        }
        self.regions.push(Region {
            va,
            len,
            rkey,
            data: Vec::new(),
            sink: true,
            deferred: true,
        });
        Ok(())
    }

    /// The writes to deferred regions since the last call, in the order
    /// they were accepted.
    pub fn take_placements(&mut self) -> Vec<Placement> {
        std::mem::take(&mut self.placements)
    }

    /// Whether writes to deferred regions wait to be taken.
    pub fn has_placements(&self) -> bool {
        !self.placements.is_empty()
    }

    fn add(&mut self, va: u64, len: u64, rkey: u32, sink: bool) -> Result<(), MemoryError> {
        if len == 0 || va.checked_add(len).is_none() || len > isize::MAX as u64 {
            return Err(MemoryError::BadLength(len));
        }
        if self.regions.iter().any(|r| r.rkey == rkey) {
            return Err(MemoryError::DuplicateRkey(rkey));
        }
        if self.regions.iter().any(|r| va < r.va + r.len && r.va < va + len) {
            return Err(MemoryError::Overlap { va, len });
        }
        let data = if sink { Vec::new() } else { vec![0; len as usize] };
        self.regions.push(Region {
            va,
            len,
            rkey,
            data,
            sink,
            deferred: false,
        });
        Ok(())
    }

    /// Remove the region of `rkey`.
    pub fn deregister(&mut self, rkey: u32) -> Result<Region, MemoryError> {
        let i = self
            .regions
            .iter()
            .position(|r| r.rkey == rkey)
            .ok_or(MemoryError::UnknownRkey(rkey))?;
        Ok(self.regions.swap_remove(i))
    }

    fn find(&self, rkey: u32, va: u64, len: u64) -> Result<(usize, usize), MemoryError> {
        let (i, r) = self
            .regions
            .iter()
            .enumerate()
            .find(|(_, r)| r.rkey == rkey)
            .ok_or(MemoryError::UnknownRkey(rkey))?;
        let end = va.checked_add(len);
        match end {
            Some(end) if va >= r.va && end <= r.va + r.len => Ok((i, (va - r.va) as usize)),
            _ => Err(MemoryError::OutOfBounds { rkey, va, len }),
        }
    }

    /// Check that `[va, va+len)` lies in the region of `rkey`.
    pub fn check(&self, rkey: u32, va: u64, len: u64) -> Result<(), MemoryError> {
        self.find(rkey, va, len).map(|_| ())
    }

    /// Place `bytes` at `va` after the rkey and bounds checks.
    pub fn write(&mut self, rkey: u32, va: u64, bytes: &[u8]) -> Result<(), MemoryError> {
        self.place(rkey, va, bytes, || Bytes::copy_from_slice(bytes))
    }

    /// [`MemoryTable::write`] of a payload the caller already holds as
    /// `Bytes` (a deferred region keeps a reference instead of a copy).
    pub fn write_bytes(&mut self, rkey: u32, va: u64, bytes: &Bytes) -> Result<(), MemoryError> {
        self.place(rkey, va, bytes, || bytes.clone())
    }

    /// The write itself: stored, checked only (sink), or queued as a
    /// placement of `owned()` (deferred).
    fn place(&mut self, rkey: u32, va: u64, bytes: &[u8], owned: impl FnOnce() -> Bytes) -> Result<(), MemoryError> {
        let (i, off) = self.find(rkey, va, bytes.len() as u64)?;
        let r = &mut self.regions[i];
        if r.deferred {
            self.placements.push(Placement {
                rkey,
                offset: off as u64,
                bytes: owned(),
            });
        } else if !r.sink {
            r.data[off..off + bytes.len()].copy_from_slice(bytes);
        }
        Ok(())
    }

    /// Read `[va, va+len)` of the region of `rkey`.
    pub fn read(&self, rkey: u32, va: u64, len: u64) -> Result<&[u8], MemoryError> {
        let (i, off) = self.find(rkey, va, len)?;
        let r = &self.regions[i];
        if r.sink {
            return Err(MemoryError::Sink(rkey));
        }
        Ok(&r.data[off..off + len as usize])
    }

    /// The registered regions.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_rkey_and_bounds() {
        let mut m = MemoryTable::default();
        m.register(0x1000, 0x100, 7).unwrap();
        assert_eq!(
            m.register(0x1080, 0x100, 8),
            Err(MemoryError::Overlap { va: 0x1080, len: 0x100 })
        );
        assert_eq!(m.register(0x4000, 0x10, 7), Err(MemoryError::DuplicateRkey(7)));
        m.write(7, 0x10f0, &[1; 16]).unwrap();
        assert_eq!(m.read(7, 0x10f0, 16).unwrap(), &[1; 16]);
        assert!(matches!(
            m.write(7, 0x10f1, &[1; 16]),
            Err(MemoryError::OutOfBounds { .. })
        ));
        assert!(matches!(m.write(9, 0x1000, &[1]), Err(MemoryError::UnknownRkey(9))));
        assert!(matches!(
            m.write(7, u64::MAX, &[1, 2]),
            Err(MemoryError::OutOfBounds { .. })
        ));
    }

    #[test]
    fn sink_checks_but_does_not_store() {
        let mut m = MemoryTable::default();
        m.register_sink(0x10_0000, 1 << 30, 5).unwrap();
        m.write(5, 0x10_0000 + 4096, &[9; 4096]).unwrap();
        assert!(matches!(
            m.write(5, 0x10_0000 + (1 << 30) - 1, &[1, 2]),
            Err(MemoryError::OutOfBounds { .. })
        ));
        assert!(matches!(m.write(6, 0x10_0000, &[1]), Err(MemoryError::UnknownRkey(6))));
        assert_eq!(m.read(5, 0x10_0000, 1), Err(MemoryError::Sink(5)));
        assert_eq!(
            m.register(0x10_0000, 16, 8),
            Err(MemoryError::Overlap { va: 0x10_0000, len: 16 })
        );
    }

    #[test]
    fn deferred_region_hands_accepted_writes_to_its_owner() {
        let mut m = MemoryTable::default();
        m.register_deferred(0x2000, 0x100, 3).unwrap();
        m.write_bytes(3, 0x2010, &Bytes::from_static(&[1, 2, 3])).unwrap();
        m.write(3, 0x20fe, &[4, 5]).unwrap();
        assert!(matches!(
            m.write(3, 0x20ff, &[4, 5]),
            Err(MemoryError::OutOfBounds { .. })
        ));
        assert_eq!(m.read(3, 0x2010, 1), Err(MemoryError::Sink(3)));
        let p = m.take_placements();
        assert_eq!(p.len(), 2, "the refused write is not queued");
        assert_eq!((p[0].offset, &p[0].bytes[..]), (0x10, &[1, 2, 3][..]));
        assert_eq!((p[1].offset, &p[1].bytes[..]), (0xfe, &[4, 5][..]));
        assert!(!m.has_placements());
        // A second registration of the same memory under another rkey.
        m.register_deferred(0x2000, 0x100, 4).unwrap();
        assert_eq!(
            m.register(0x2000, 0x10, 5),
            Err(MemoryError::Overlap { va: 0x2000, len: 0x10 })
        );
        assert_eq!(m.register_deferred(0x2000, 0x10, 4), Err(MemoryError::DuplicateRkey(4)));
    }
}
