//! Responder-side memory: registered regions, rkey and bounds checks, and
//! direct data placement.

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
    #[error("[{va:#x}, +{len}) outside the region of rkey {rkey:#x}")]
    OutOfBounds { rkey: u32, va: u64, len: u64 },
}

/// One registered region, backed by memory this table owns.
#[derive(Clone, Debug)]
pub struct Region {
    pub va: u64,
    pub rkey: u32,
    pub data: Vec<u8>,
}

/// The memory regions of one endpoint.
#[derive(Clone, Debug, Default)]
pub struct MemoryTable {
    regions: Vec<Region>,
}

impl MemoryTable {
    /// Register `[va, va+len)` under `rkey`, zero-filled.
    pub fn register(&mut self, va: u64, len: u64, rkey: u32) -> Result<(), MemoryError> {
        if len == 0 || va.checked_add(len).is_none() || len > isize::MAX as u64 {
            return Err(MemoryError::BadLength(len));
        }
        if self.regions.iter().any(|r| r.rkey == rkey) {
            return Err(MemoryError::DuplicateRkey(rkey));
        }
        if self.regions.iter().any(|r| va < r.va + r.data.len() as u64 && r.va < va + len) {
            return Err(MemoryError::Overlap { va, len });
        }
        self.regions.push(Region { va, rkey, data: vec![0; len as usize] });
        Ok(())
    }

    /// Remove the region of `rkey`.
    pub fn deregister(&mut self, rkey: u32) -> Result<Region, MemoryError> {
        let i = self.regions.iter().position(|r| r.rkey == rkey).ok_or(MemoryError::UnknownRkey(rkey))?;
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
            Some(end) if va >= r.va && end <= r.va + r.data.len() as u64 => Ok((i, (va - r.va) as usize)),
            _ => Err(MemoryError::OutOfBounds { rkey, va, len }),
        }
    }

    /// Check that `[va, va+len)` lies in the region of `rkey`.
    pub fn check(&self, rkey: u32, va: u64, len: u64) -> Result<(), MemoryError> {
        self.find(rkey, va, len).map(|_| ())
    }

    /// Place `bytes` at `va` after the rkey and bounds checks.
    pub fn write(&mut self, rkey: u32, va: u64, bytes: &[u8]) -> Result<(), MemoryError> {
        let (i, off) = self.find(rkey, va, bytes.len() as u64)?;
        self.regions[i].data[off..off + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }

    /// Read `[va, va+len)` of the region of `rkey`.
    pub fn read(&self, rkey: u32, va: u64, len: u64) -> Result<&[u8], MemoryError> {
        let (i, off) = self.find(rkey, va, len)?;
        Ok(&self.regions[i].data[off..off + len as usize])
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
        assert_eq!(m.register(0x1080, 0x100, 8), Err(MemoryError::Overlap { va: 0x1080, len: 0x100 }));
        assert_eq!(m.register(0x4000, 0x10, 7), Err(MemoryError::DuplicateRkey(7)));
        m.write(7, 0x10f0, &[1; 16]).unwrap();
        assert_eq!(m.read(7, 0x10f0, 16).unwrap(), &[1; 16]);
        assert!(matches!(m.write(7, 0x10f1, &[1; 16]), Err(MemoryError::OutOfBounds { .. })));
        assert!(matches!(m.write(9, 0x1000, &[1]), Err(MemoryError::UnknownRkey(9))));
        assert!(matches!(m.write(7, u64::MAX, &[1, 2]), Err(MemoryError::OutOfBounds { .. })));
    }
}
