//! The seeded generators of every testbench: a test must replay the same
//! stimulus from the same seed on every machine, and needs nothing
//! stronger than xorshift. Two generators because the block tests'
//! committed seeds and coverage thresholds were tuned on the sequence of
//! one or the other.

/// Multiplier that spreads a small seed over all 64 bits (the golden
/// ratio in fixed point), so seeds 1, 2, 3 start far apart.
const SEED_SPREAD: u64 = 0x9E37_79B9_7F4A_7C15;

/// xorshift64 (Marsaglia; shifts 13, 7, 17).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// From any seed (0 included): the seed is spread over the state, the
    /// way the system testbenches seed their components.
    pub fn new(seed: u64) -> Rng {
        // Never the all-zero state: xorshift's fixed point.
        Rng(seed.wrapping_mul(SEED_SPREAD) | 1)
    }
    /// From `state` exactly as given (not 0): the block tests' committed
    /// seeds are states.
    pub fn from_state(state: u64) -> Rng {
        assert_ne!(state, 0, "xorshift64 state 0 is a fixed point");
        Rng(state)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform enough in `0..n` for stimulus (modulo bias ignored; `n`
    /// 0 counts as 1).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub fn fill(&mut self, buf: &mut [u8]) {
        for b in buf {
            *b = self.next_u64() as u8;
        }
    }
}

/// xorshift64* (Vigna; shifts 12, 25, 27, then a multiply).
#[derive(Clone, Debug)]
pub struct RngStar(u64);

/// xorshift64*'s output multiplier.
const STAR_MULTIPLIER: u64 = 0x2545_F491_4F6C_DD1D;

impl RngStar {
    /// From `state` exactly as given (not 0).
    pub fn from_state(state: u64) -> RngStar {
        assert_ne!(state, 0, "xorshift64* state 0 is a fixed point");
        RngStar(state)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(STAR_MULTIPLIER)
    }
    /// Uniform enough in `0..n` for stimulus (`n` 0 counts as 1).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// What a stall draw needs from either generator: one percent chance.
pub trait Chance {
    /// True with probability `percent` / 100.
    fn chance(&mut self, percent: u64) -> bool;
}

impl Chance for Rng {
    fn chance(&mut self, percent: u64) -> bool {
        Rng::chance(self, percent)
    }
}

impl Chance for RngStar {
    fn chance(&mut self, percent: u64) -> bool {
        RngStar::chance(self, percent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sequences the committed seeds were tuned on: changing a
    /// generator changes every test's stimulus.
    #[test]
    fn sequences_are_the_committed_ones() {
        let mut x = Rng::from_state(1);
        assert_eq!(
            [x.next_u64(), x.next_u64()],
            [0x0000_0000_4082_2041, 0x1000_4106_0C01_1441]
        );
        let mut s = RngStar::from_state(1);
        assert_eq!(s.next_u64(), 0x47E4_CE4B_896C_DD1D);
        let mut seeded = Rng::new(0);
        assert_eq!(seeded.next_u64(), Rng::from_state(1).next_u64());
    }

    #[test]
    fn below_and_chance_stay_in_range() {
        let mut r = Rng::new(7);
        assert!((0..1000).all(|_| r.below(10) < 10));
        assert_eq!(r.below(0), 0);
        assert!((0..1000).all(|_| r.chance(100)));
        assert!((0..1000).all(|_| !r.chance(0)));
    }
}
