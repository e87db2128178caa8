//! Seeded generators for the block tests (no new dependencies): the same
//! seed gives the same stimulus on every machine, so a failure found by a
//! seed can be replayed. Two generators because the tests' committed seeds
//! and coverage thresholds were tuned on the sequence of one or the other.
#![allow(dead_code)]

/// xorshift64 (shifts 13, 7, 17). The seed must not be 0.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform enough below `n` for test stimulus (modulo bias ignored).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// xorshift64* (shifts 12, 25, 27, then a multiply). The seed must not
/// be 0.
pub struct RngStar(pub u64);

impl RngStar {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}
