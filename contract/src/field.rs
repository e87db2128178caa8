//! [`Field`]: one field of a record or config row.

/// One field of a layout.
///
/// All multi-byte fields are little-endian, so a field at byte `offset`
/// with `shift` occupies bits `[8 * offset + shift, 8 * offset + shift +
/// bits)` of the record seen as one little-endian integer: its bit offset
/// in a 512-bit DMA beat or in `cfg$data` (byte 0 in bits `[7:0]`), see
/// [`Field::bit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    /// Byte offset of the field's least significant byte.
    pub offset: usize,
    /// Bit position of the field's least significant bit in that byte.
    pub shift: usize,
    /// Width in bits (1..=64).
    pub bits: usize,
    pub meaning: &'static str,
}

impl Field {
    /// A field at byte `offset`, bit `shift` of that byte.
    pub const fn new(name: &'static str, offset: usize, shift: usize, bits: usize, meaning: &'static str) -> Field {
        Field {
            name,
            offset,
            shift,
            bits,
            meaning,
        }
    }

    /// A field whose least significant bit is bit `lsb` of the record.
    pub const fn at_bit(name: &'static str, lsb: usize, bits: usize, meaning: &'static str) -> Field {
        Field::new(name, lsb / 8, lsb % 8, bits, meaning)
    }

    /// Bit offset of the field's LSB in the record as a little-endian
    /// integer (= in a DMA beat / `cfg$data` whose byte 0 is bits `[7:0]`).
    pub const fn bit(&self) -> usize {
        self.offset * 8 + self.shift
    }

    /// Mask of the field's value (`bits` ones).
    pub const fn mask(&self) -> u64 {
        if self.bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        }
    }

    /// Read the field from `buf` (which must hold the whole layout).
    pub fn get(&self, buf: &[u8]) -> u64 {
        let nbytes = (self.shift + self.bits).div_ceil(8);
        let mut acc: u128 = 0;
        for i in 0..nbytes {
            acc |= u128::from(buf[self.offset + i]) << (8 * i);
        }
        ((acc >> self.shift) as u64) & self.mask()
    }

    /// Write `value` (masked to the field's width) into `buf`, keeping the
    /// other bits of the bytes it shares.
    pub fn put(&self, buf: &mut [u8], value: u64) {
        let nbytes = (self.shift + self.bits).div_ceil(8);
        let m = u128::from(self.mask()) << self.shift;
        let v = (u128::from(value & self.mask())) << self.shift;
        for i in 0..nbytes {
            let bm = (m >> (8 * i)) as u8;
            let bv = (v >> (8 * i)) as u8;
            buf[self.offset + i] = (buf[self.offset + i] & !bm) | (bv & bm);
        }
    }
}

/// Bits from bit 0 of the record through the end of its last field: what
/// a block must keep of a row to hold every field in `fields`.
pub const fn span(fields: &[Field]) -> usize {
    let mut end = 0;
    let mut i = 0;
    while i < fields.len() {
        let f = &fields[i];
        if f.bit() + f.bits > end {
            end = f.bit() + f.bits;
        }
        i += 1;
    }
    end
}

/// Panics when two fields of `fields` share a bit or one reaches past
/// `size_bytes` (the tests of every layout run it).
pub fn assert_disjoint(size_bytes: usize, fields: &[Field]) {
    let mut used = vec![false; size_bytes * 8];
    for f in fields {
        assert!(f.bits >= 1 && f.bits <= 64, "{}: width {}", f.name, f.bits);
        assert!(f.bit() + f.bits <= size_bytes * 8, "{} past the end", f.name);
        for u in &mut used[f.bit()..f.bit() + f.bits] {
            assert!(!*u, "{} overlaps", f.name);
            *u = true;
        }
    }
}
