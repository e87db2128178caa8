//! 24-bit packet sequence numbers with serial-number arithmetic.
//!
//! BTH carries a 24-bit PSN that wraps. Comparisons are only meaningful for
//! PSNs less than half the space (2^23) apart, as in RFC 1982; every window in
//! this project (MPR <= 32,640 PSNs) is far below that. `Psn` therefore does
//! not implement `Ord`: use [`Psn::distance`] or the `before`/`after` helpers,
//! which are correct across the wrap.

use core::fmt;

/// A 24-bit packet sequence number.
///
/// (De)serialised as its plain number; deserialising masks to 24 bits like
/// [`Psn::new`], so no `Psn` ever holds a value outside the PSN space.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(from = "u32", into = "u32")]
pub struct Psn(u32);

impl Psn {
    /// Number of bits in a PSN.
    pub const BITS: u32 = 24;
    /// Mask of the valid bits.
    pub const MASK: u32 = (1 << Self::BITS) - 1;
    /// Half the sequence space: the largest distance that compares correctly.
    pub const HALF: u32 = 1 << (Self::BITS - 1);

    /// A PSN from any integer; bits above 24 are dropped.
    pub const fn new(value: u32) -> Psn {
        Psn(value & Self::MASK)
    }

    /// The 24-bit value.
    pub const fn value(self) -> u32 {
        self.0
    }

    /// `self + n`, wrapping at 2^24.
    #[allow(clippy::should_implement_trait)]
    pub const fn add(self, n: u32) -> Psn {
        Psn::new(self.0.wrapping_add(n))
    }

    /// `self - n`, wrapping at 2^24.
    #[allow(clippy::should_implement_trait)]
    pub const fn sub(self, n: u32) -> Psn {
        Psn::new(self.0.wrapping_sub(n))
    }

    /// The next PSN.
    pub const fn next(self) -> Psn {
        self.add(1)
    }

    /// Signed distance `self - other` in `[-2^23, 2^23)`.
    pub const fn distance(self, other: Psn) -> i32 {
        // Shift the 24-bit difference into the top of an i32 and back, which
        // sign-extends it.
        ((self.0.wrapping_sub(other.0) << 8) as i32) >> 8
    }

    /// `self` comes strictly before `other` in sequence order.
    pub const fn before(self, other: Psn) -> bool {
        self.distance(other) < 0
    }

    /// `self` comes strictly after `other` in sequence order.
    pub const fn after(self, other: Psn) -> bool {
        self.distance(other) > 0
    }

    /// `lo <= self < lo + len` across the wrap.
    pub const fn in_window(self, lo: Psn, len: u32) -> bool {
        (self.0.wrapping_sub(lo.0) & Self::MASK) < len
    }

    /// Unsigned offset of `self` from `base` (`(self - base) mod 2^24`).
    pub const fn offset_from(self, base: Psn) -> u32 {
        self.0.wrapping_sub(base.0) & Self::MASK
    }
}

impl fmt::Debug for Psn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Psn({})", self.0)
    }
}

impl fmt::Display for Psn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl From<u32> for Psn {
    /// [`Psn::new`]: bits above 24 are dropped.
    fn from(v: u32) -> Psn {
        Psn::new(v)
    }
}

impl From<Psn> for u32 {
    fn from(p: Psn) -> u32 {
        p.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn wraps() {
        let top = Psn::new(Psn::MASK);
        assert_eq!(top.next(), Psn::new(0));
        assert_eq!(Psn::new(0).sub(1), top);
        assert_eq!(Psn::new(0).distance(top), 1);
        assert!(top.before(Psn::new(5)));
        assert!(Psn::new(5).after(top));
        assert!(Psn::new(3).in_window(top, 5));
        assert!(!Psn::new(4).in_window(top, 5));
        assert_eq!(Psn::new(2).offset_from(top), 3);
    }

    #[test]
    fn truncates_to_24_bits() {
        assert_eq!(Psn::new(0x1234_5678).value(), 0x34_5678);
    }

    proptest! {
        #[test]
        fn distance_inverts_add(a in 0u32..(1 << 24), d in -(1i32 << 23)..(1i32 << 23)) {
            let p = Psn::new(a);
            let q = p.add(d as u32);
            prop_assert_eq!(q.distance(p), d);
            prop_assert_eq!(q.after(p), d > 0);
            prop_assert_eq!(q.before(p), d < 0);
        }
    }
}
