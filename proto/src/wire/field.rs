//! Big-endian field access for the typed views. Callers index only after
//! their view's `check_len`, so these never see a short buffer on a checked
//! path; they still use `get` so that an unchecked view cannot index out of
//! bounds (it reads zeros / writes nothing instead).

#[inline]
pub(crate) fn get_u8(b: &[u8], at: usize) -> u8 {
    b.get(at).copied().unwrap_or(0)
}

#[inline]
pub(crate) fn get_u16(b: &[u8], at: usize) -> u16 {
    match b.get(at..at + 2) {
        Some(s) => u16::from_be_bytes([s[0], s[1]]),
        None => 0,
    }
}

#[inline]
pub(crate) fn get_u24(b: &[u8], at: usize) -> u32 {
    match b.get(at..at + 3) {
        Some(s) => u32::from_be_bytes([0, s[0], s[1], s[2]]),
        None => 0,
    }
}

#[inline]
pub(crate) fn get_u32(b: &[u8], at: usize) -> u32 {
    match b.get(at..at + 4) {
        Some(s) => u32::from_be_bytes([s[0], s[1], s[2], s[3]]),
        None => 0,
    }
}

#[inline]
pub(crate) fn get_u64(b: &[u8], at: usize) -> u64 {
    match b.get(at..at + 8) {
        Some(s) => {
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            u64::from_be_bytes(a)
        }
        None => 0,
    }
}

#[inline]
pub(crate) fn set_u8(b: &mut [u8], at: usize, v: u8) {
    if let Some(x) = b.get_mut(at) {
        *x = v;
    }
}

#[inline]
pub(crate) fn set_bytes(b: &mut [u8], at: usize, v: &[u8]) {
    if let Some(s) = b.get_mut(at..at + v.len()) {
        s.copy_from_slice(v);
    }
}

#[inline]
pub(crate) fn set_u16(b: &mut [u8], at: usize, v: u16) {
    set_bytes(b, at, &v.to_be_bytes());
}

#[inline]
pub(crate) fn set_u24(b: &mut [u8], at: usize, v: u32) {
    set_bytes(b, at, &v.to_be_bytes()[1..]);
}

#[inline]
pub(crate) fn set_u32(b: &mut [u8], at: usize, v: u32) {
    set_bytes(b, at, &v.to_be_bytes());
}

#[inline]
pub(crate) fn set_u64(b: &mut [u8], at: usize, v: u64) {
    set_bytes(b, at, &v.to_be_bytes());
}

/// Check that `b` holds at least `len` bytes of `layer`.
#[inline]
pub(crate) fn need(b: &[u8], len: usize, layer: super::Layer) -> Result<(), super::WireError> {
    if b.len() < len {
        Err(super::WireError::Truncated { layer })
    } else {
        Ok(())
    }
}
