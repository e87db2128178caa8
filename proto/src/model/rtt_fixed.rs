//! Integer-exact RTT estimate of a QP's EV set: the smoothed RTT, its mean
//! deviation and the base RTT that [`super::ev::EvSet`] keeps from every
//! acknowledgement's RTT sample, and the stall allowance and stall age it
//! derives from them, in the arithmetic of the RTL block
//! `hw::rtt_est::RttEstimator`, bit for bit (its lockstep test compares
//! the block with this).
//!
//! Why here and not in `hw`'s tests: it is a model of the same rules as
//! `EvSet`, next to it, so the comparison against the f64 set is a
//! `proto` unit test.
//!
//! Fixed-point format (RFC 6298's integer form, as TCP stacks keep it):
//!
//! * samples and the base RTT: whole nanoseconds, 32 bits (the f64 set
//!   counts picoseconds; samples in whole ns are exact);
//! * `srtt8 = 8 * srtt` and `rttvar4 = 4 * rttvar`, ns: the gains 1/8 and
//!   1/4 become a shift of the stored value, so an update is additions
//!   only. `rttvar4` is also the `4 * rttvar` of the allowance as it is.
//!
//! Per sample `r > 0` (the set's `on_ack`, in its order: the deviation
//! from the old `srtt` first): the first sets `srtt8 = 8r`, `rttvar4 =
//! 2r` (`rttvar = r / 2`); later ones `err = r - floor(srtt8 / 8)`,
//! `rttvar4 += |err| - floor(rttvar4 / 4)`, `srtt8 += err`; and `base =
//! min(base, r)`. Then
//!
//! * allowance `A = max(STALL_MIN, STALL_RTTS * base, srtt + rttvar4 -
//!   base)` (the last saturating at 0), `srtt = floor(srtt8 / 8)`;
//! * age = `srtt + A`;
//!
//! both saturating at 2^31 - 1 ns (the retransmit engine compares 32-bit
//! times modulo 2^32, so a deadline must lie within 2^31 ns of the time
//! it is set at). Accuracy against the f64 set: the
//! truncations of `srtt8 / 8` and `rttvar4 / 4` leave both within 8 ns
//! (worst seen 5 ns over 120,000 samples: `tests::tracks_the_f64_set`).

use super::ev::{STALL_MIN, STALL_RTTS};

/// RFC 6298's K: the allowance covers `srtt + K * rttvar` (the set's
/// `STALL_VAR_K`). With `rttvar` kept as `4 * rttvar` it is used as is.
pub const VAR_K: u64 = 4;
const _: () = assert!(VAR_K as f64 == super::ev::STALL_VAR_K);

/// The largest bound: the retransmit engine's 32-bit times are compared
/// modulo 2^32, so a deadline is at most 2^31 - 1 ns away.
pub const NS_MAX: u64 = (1 << 31) - 1;

/// One QP's estimate. All zero: no sample yet (the set's `None`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RttFixed {
    /// `8 * srtt`, ns (35 bits).
    pub srtt8: u64,
    /// `4 * rttvar`, ns (34 bits).
    pub rttvar4: u64,
    /// Smallest sample, ns; 0: none yet.
    pub base: u32,
}

impl RttFixed {
    /// The state after sample `rtt_ns` (0: not a sample, no change).
    pub fn sample(&mut self, rtt_ns: u32) {
        if rtt_ns == 0 {
            return;
        }
        let r = u64::from(rtt_ns);
        if self.base == 0 {
            self.srtt8 = r << 3;
            self.rttvar4 = r << 1;
        } else {
            let srtt = self.srtt8 >> 3;
            let dev = r.abs_diff(srtt);
            // rttvar4 >= rttvar4 / 4: never below 0.
            self.rttvar4 = self.rttvar4 - (self.rttvar4 >> 2) + dev;
            // srtt8 + r - srtt >= 0: srtt8 >= 8 * srtt >= srtt.
            self.srtt8 = self.srtt8 - srtt + r;
        }
        if self.base == 0 || rtt_ns < self.base {
            self.base = rtt_ns;
        }
    }

    /// `srtt`, ns (0 before a sample).
    pub fn srtt(&self) -> u64 {
        self.srtt8 >> 3
    }

    /// The stall allowance in ns (`EvSet::stall_allowance`); 0 before the
    /// first sample (the set's `None`: the stall rule off).
    pub fn allowance(&self) -> u32 {
        if self.base == 0 {
            return 0;
        }
        let base = u64::from(self.base);
        let spread = (self.srtt() + self.rttvar4).saturating_sub(base);
        let a = (STALL_RTTS * base).max(spread).max(STALL_MIN.as_ns());
        a.min(NS_MAX) as u32
    }

    /// The stall age in ns (`EvSet::stall_age`: `srtt` + the allowance);
    /// 0 before the first sample (the tail check off).
    pub fn age(&self) -> u32 {
        if self.base == 0 {
            return 0;
        }
        (self.srtt() + u64::from(self.allowance())).min(NS_MAX) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ev::{EvSet, EvSetConfig};
    use crate::time::{Duration, Instant};
    use rand::{Rng, SeedableRng};

    /// Within a few ns of the f64 set after every sample, across
    /// congestion levels that jump and drift, samples under the base and
    /// zero samples (ignored by both).
    #[test]
    fn tracks_the_f64_set() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut worst = 0u64;
        for seq in 0..300 {
            let mut set = EvSet::new(EvSetConfig::default()).unwrap();
            let mut fx = RttFixed::default();
            let base_ns: u64 = rng.gen_range(500..20_000);
            let mut level = 0u64;
            for k in 0..400 {
                if rng.gen_bool(0.05) {
                    level = rng.gen_range(0..base_ns * 20);
                }
                let r = match rng.gen_range(0..100) {
                    0..=1 => 0,
                    2..=4 => rng.gen_range(1..base_ns),
                    _ => base_ns + level + rng.gen_range(0..base_ns),
                };
                let r = r.min(u64::from(u32::MAX)) as u32;
                let rtt = (r > 0).then(|| Duration::from_ns(u64::from(r)));
                set.on_ack(0, Instant::from_ns(1_000 * k), rtt, false);
                fx.sample(r);
                let want_a = set.stall_allowance().map_or(0, |d| d.as_ns());
                let want_age = set.stall_age().map_or(0, |d| d.as_ns());
                let (a, age) = (u64::from(fx.allowance()), u64::from(fx.age()));
                for (got, want, what) in [(a, want_a, "allowance"), (age, want_age, "age")] {
                    let d = got.abs_diff(want);
                    worst = worst.max(d);
                    // Each sample's truncations: srtt's floor (< 1 ns), the
                    // deviation's (< 1 ns, times K = 4) and the set's own
                    // rounding of ps to ns; they decay with the gains
                    // (worst seen: 5 ns).
                    assert!(d <= 8, "sequence {seq}, sample {k}: {what} {got} against {want}");
                }
            }
        }
        assert!(
            worst > 0,
            "the two differ somewhere: the comparison sees the truncation"
        );
    }

    /// The set's rules, each on its own: the first sample, the floor, twice
    /// the base, the spread.
    #[test]
    fn each_bound_of_the_allowance() {
        let mut fx = RttFixed::default();
        assert_eq!((fx.allowance(), fx.age()), (0, 0), "no sample: off");
        fx.sample(0);
        assert_eq!(fx, RttFixed::default(), "a zero sample is none");
        // First sample 500 ns: srtt 500, rttvar 250: spread 500 + 1000 -
        // 500 = 1000, twice the base 1000: the floor (2 us) wins.
        fx.sample(500);
        assert_eq!((fx.srtt8, fx.rttvar4, fx.base), (4000, 1000, 500));
        assert_eq!(fx.allowance(), STALL_MIN.as_ns() as u32);
        assert_eq!(fx.age(), 500 + 2000);
        // Base 10 us: twice it (20 us) beats the spread (10 + 20 - 10).
        let mut fx = RttFixed::default();
        fx.sample(10_000);
        assert_eq!(fx.allowance(), 20_000);
        // A sample far above: err = 90,000; rttvar4 = 20,000 - 5,000 +
        // 90,000 = 105,000; srtt8 = 80,000 + 90,000 = 170,000 (21,250).
        fx.sample(100_000);
        assert_eq!((fx.srtt(), fx.rttvar4, fx.base), (21_250, 105_000, 10_000));
        assert_eq!(fx.allowance(), 21_250 + 105_000 - 10_000);
        assert_eq!(fx.age(), 21_250 + 116_250);
        // A sample of seconds: the spread (2r) and the age saturate at
        // 2^31 - 1 ns.
        let mut fx = RttFixed::default();
        fx.sample((1 << 31) - 10);
        assert_eq!((u64::from(fx.allowance()), u64::from(fx.age())), (NS_MAX, NS_MAX));
    }
}
