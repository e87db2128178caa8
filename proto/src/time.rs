//! Simulated time in integer picoseconds.
//!
//! The golden model never reads a clock: callers pass `now`. Picoseconds
//! because the fabric simulator serialises 64-byte packets at 800 Gb/s
//! (640 ps) and must not round; a `u64` of picoseconds spans 213 days.

use core::fmt;
use core::ops::{Add, AddAssign, Sub};

/// A point in simulated time, picoseconds since the start of the run.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Instant(pub u64);

/// A span of simulated time in picoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Duration(pub u64);

impl Instant {
    /// The start of time.
    pub const ZERO: Instant = Instant(0);
    /// Picoseconds since the start.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Nanoseconds since the start (truncated).
    pub const fn as_ns(self) -> u64 {
        self.0 / 1_000
    }
    /// An instant `ns` nanoseconds after the start.
    pub const fn from_ns(ns: u64) -> Instant {
        Instant(ns * 1_000)
    }
    /// An instant `us` microseconds after the start.
    pub const fn from_us(us: u64) -> Instant {
        Instant(us * 1_000_000)
    }
    /// `self - earlier`, or zero if `earlier` is later.
    pub const fn saturating_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    /// No time.
    pub const ZERO: Duration = Duration(0);
    /// From picoseconds.
    pub const fn from_ps(ps: u64) -> Duration {
        Duration(ps)
    }
    /// From nanoseconds.
    pub const fn from_ns(ns: u64) -> Duration {
        Duration(ns * 1_000)
    }
    /// From microseconds.
    pub const fn from_us(us: u64) -> Duration {
        Duration(us * 1_000_000)
    }
    /// From milliseconds.
    pub const fn from_ms(ms: u64) -> Duration {
        Duration(ms * 1_000_000_000)
    }
    /// Picoseconds.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Nanoseconds (truncated).
    pub const fn as_ns(self) -> u64 {
        self.0 / 1_000
    }
    /// Seconds as a float, for reports.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-12
    }
    /// `self * k`, saturating.
    pub const fn saturating_mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
    /// Time to serialise `bytes` at `gbps` gigabits per second.
    pub fn serialisation(bytes: u64, gbps: f64) -> Duration {
        Duration((bytes as f64 * 8.0 * 1_000.0 / gbps).round() as u64)
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, earlier: Instant) -> Duration {
        self.saturating_since(earlier)
    }
}

impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}us", self.0 as f64 / 1e6)
    }
}

impl fmt::Debug for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}us", self.0 as f64 / 1e6)
    }
}
