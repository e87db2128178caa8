//! Integer-exact NSCC: the ACK-driven window rules of [`super::cc::Nscc`]
//! in the fixed-point arithmetic of the RTL block `hw::nscc::NsccUnit`,
//! bit for bit (its lockstep test compares the block with this).
//!
//! Why here and not in `hw`'s tests: it is a model of the same rules as
//! `Nscc`, next to it, so the comparison against the f64 controller is a
//! `proto` unit test; the software engine (`driver::soft`) can run the
//! card's exact window later without depending on `hw`.
//!
//! Fixed-point format (see `docs/hw/nscc.md`):
//!
//! * window: bytes with 8 fractional bits (`cwnd_fx = cwnd * 256`), at most
//!   40 bits (a window below 2^32 bytes);
//! * delays and RTTs: whole nanoseconds, 32 bits (the f64 model counts
//!   picoseconds; samples in whole ns are exact);
//! * the slow delay average: ns with 8 fractional bits, gain 819 / 65536
//!   (0.012497 for the model's 0.0125);
//! * fractions (`acked / cwnd`, `(T - d) / T`, `(D - T) / D`, the decrease
//!   gain and cut, the receiver-penalty share): Q16 (1.0 = 65536), each
//!   division `min(floor(n * 65536 / d), 65536)` (what the block's
//!   16-step restoring divider returns), each product `floor(x * y / 65536)`
//!   (its shift-add multiplier).
//!
//! Not modelled (as in the block): quick adapt, pacing (`next_send_time`,
//! `srtt`), CNPs (`on_cnp`).

use super::cc::NsccConfig;

/// One Q16 unit (1.0).
pub const Q16: u64 = 1 << 16;
/// Gain of the slow delay average, Q16 (`NSCC_AVG_DELAY_GAIN` = 0.0125).
pub const AVG_GAIN_Q16: u64 = 819;
/// `round(2^(-k/8) * 65536)`, k = 0..=7: the receiver-penalty share
/// `2^(-p/8)` is `PENALTY_FRAC[p & 7] >> (p >> 3)` (in Q16).
pub const PENALTY_FRAC: [u64; 8] = [65536, 60097, 55109, 50535, 46341, 42495, 38968, 35734];
/// The largest penalty (`choices::CWND_PENALTY_MAX`).
pub const PENALTY_MAX: u8 = 0x7F;
/// The largest cut of one decrease, Q16 (0.5).
pub const MAX_CUT_Q16: u64 = Q16 / 2;
/// Widths of the block's registers (values are masked to them).
pub const CWND_BITS: u32 = 40;

/// Per-QP parameters (config tables 10 and 14).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NsccFixedParams {
    pub base_rtt_ns: u32,
    pub target_ns: u32,
    /// `increase_bytes` (I).
    pub increase_bytes: u32,
    /// `decrease_gain`, Q16, at most 65536.
    pub decrease_gain_q16: u32,
    pub init_cwnd: u32,
    /// Table 10's window bounds (the CC gate's).
    pub min_cwnd: u32,
    pub max_cwnd: u32,
}

impl NsccFixedParams {
    /// The parameters of `c` (times rounded to ns, gain to Q16, bytes
    /// saturated at 32 bits).
    pub fn from_config(c: &NsccConfig) -> NsccFixedParams {
        let sat = |x: u64| x.min(u64::from(u32::MAX)) as u32;
        NsccFixedParams {
            base_rtt_ns: sat((c.base_rtt.as_ps() + 500) / 1000),
            target_ns: sat((c.target_delay.as_ps() + 500) / 1000),
            increase_bytes: sat(c.increase_bytes),
            decrease_gain_q16: (c.decrease_gain.clamp(0.0, 1.0) * Q16 as f64).round() as u32,
            init_cwnd: sat(c.init_cwnd),
            min_cwnd: sat(c.min_cwnd),
            max_cwnd: sat(c.max_cwnd),
        }
    }
    fn min_fx(&self) -> u64 {
        u64::from(self.min_cwnd.max(1)) << 8
    }
    fn max_fx(&self) -> u64 {
        u64::from(self.max_cwnd.max(self.min_cwnd.max(1))) << 8
    }
}

/// One feedback record (the block's input).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feedback {
    /// Start the QP: window `init_cwnd` (clamped), base RTT from the
    /// config, averages and streaks zero.
    Init,
    /// An acknowledgement (`Nscc::on_ack` without quick adapt).
    Ack {
        acked: u32,
        ecn: bool,
        rtt_ns: Option<u32>,
        /// CC_STATE penalty (saturates at 127) and restore bit.
        penalty: u8,
        restore: bool,
    },
    /// `Nscc::on_loss`.
    Loss { bytes: u32 },
    /// `Nscc::on_timeout`.
    Timeout,
}

/// Which of the four quadrants an ACK fell in (for coverage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quadrant {
    ProportionalIncrease,
    FairIncrease,
    Hold,
    MultiplicativeDecrease,
}

/// One QP's state: the fields of the block's state word.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NsccFixed {
    pub cwnd_fx: u64,
    pub base_ns: u32,
    pub last_delay_ns: u32,
    /// Slow delay average, ns << 8.
    pub avg_fx: u64,
    /// Bytes acked in the current near-zero-delay streak (saturating).
    pub streak: u32,
    pub last_dec_ns: u32,
    pub last_dec_valid: bool,
    /// The window the receiver's penalty first capped.
    pub pre_fx: u64,
    pub pre_valid: bool,
}

/// `min(floor(n * 65536 / d), 65536)`.
pub fn frac_q16(n: u64, d: u64) -> u64 {
    if n >= d {
        return Q16;
    }
    // Restoring division, one quotient bit per step (the block's).
    let (mut rem, mut q) = (n, 0u64);
    for _ in 0..16 {
        rem <<= 1;
        q <<= 1;
        if rem >= d {
            rem -= d;
            q |= 1;
        }
    }
    q
}

/// `floor(x * y / 65536)`.
pub fn mul_q16(x: u64, y: u64) -> u64 {
    ((u128::from(x) * u128::from(y)) >> 16) as u64
}

impl NsccFixed {
    /// The state after INIT with `p`.
    pub fn new(p: &NsccFixedParams) -> NsccFixed {
        let mut s = NsccFixed::default();
        s.step(p, 0, Feedback::Init);
        s
    }

    /// The window the CC gate gets (`floor(cwnd)`, bytes).
    pub fn window(&self) -> u32 {
        (self.cwnd_fx >> 8) as u32
    }

    fn clamp(&mut self, p: &NsccFixedParams) {
        self.cwnd_fx = self.cwnd_fx.clamp(p.min_fx(), p.max_fx());
    }

    /// Apply one record at `now_ns` (a free-running ns counter, wrapping);
    /// returns the window written out and the quadrant of an ACK.
    pub fn step(&mut self, p: &NsccFixedParams, now_ns: u32, fb: Feedback) -> (u32, Option<Quadrant>) {
        let mut quadrant = None;
        match fb {
            Feedback::Init => {
                *self = NsccFixed {
                    cwnd_fx: u64::from(p.init_cwnd) << 8,
                    base_ns: p.base_rtt_ns,
                    ..NsccFixed::default()
                };
                self.clamp(p);
            }
            Feedback::Loss { bytes } => {
                self.cwnd_fx = self.cwnd_fx.saturating_sub(u64::from(bytes) << 8);
                self.streak = 0;
                self.clamp(p);
            }
            Feedback::Timeout => {
                self.cwnd_fx = self.cwnd_fx.min(u64::from(p.increase_bytes) << 8);
                self.streak = 0;
                self.last_dec_ns = now_ns;
                self.last_dec_valid = true;
                self.clamp(p);
            }
            Feedback::Ack {
                acked,
                ecn,
                rtt_ns,
                penalty,
                restore,
            } => {
                if let Some(r) = rtt_ns {
                    if r > 0 && r < self.base_ns {
                        self.base_ns = r;
                    }
                    self.last_delay_ns = r.saturating_sub(self.base_ns);
                    let d = u64::from(self.last_delay_ns) << 8;
                    if d >= self.avg_fx {
                        self.avg_fx += mul_q16(d - self.avg_fx, AVG_GAIN_Q16);
                    } else {
                        self.avg_fx -= mul_q16(self.avg_fx - d, AVG_GAIN_Q16);
                    }
                }
                quadrant = Some(self.react(p, now_ns, acked, ecn));
                self.penalty(p, penalty, restore);
            }
        }
        (self.window(), quadrant)
    }

    fn react(&mut self, p: &NsccFixedParams, now_ns: u32, acked: u32, ecn: bool) -> Quadrant {
        let t = p.target_ns;
        let d = self.last_delay_ns;
        let inc_fx = u64::from(p.increase_bytes) << 8;
        let q = match (ecn, d < t) {
            (false, true) => Quadrant::ProportionalIncrease,
            (false, false) => Quadrant::FairIncrease,
            (true, true) => Quadrant::Hold,
            (true, false) => Quadrant::MultiplicativeDecrease,
        };
        match q {
            Quadrant::ProportionalIncrease => {
                let share = frac_q16(u64::from(acked) << 8, self.cwnd_fx);
                let below = frac_q16(u64::from(t - d), u64::from(t));
                let s1 = mul_q16(inc_fx, share);
                let s2 = mul_q16(s1, Q16 + 4 * below);
                self.cwnd_fx += s2;
                if u64::from(d) * 8 <= u64::from(t) {
                    self.streak = self.streak.saturating_add(acked);
                    if u64::from(self.streak) << 8 >= self.cwnd_fx {
                        self.cwnd_fx += u64::from(acked) << 7;
                    }
                } else {
                    self.streak = 0;
                }
            }
            Quadrant::FairIncrease => {
                let share = frac_q16(u64::from(acked) << 8, self.cwnd_fx);
                self.cwnd_fx += mul_q16(inc_fx >> 2, share);
                self.streak = 0;
            }
            Quadrant::Hold => self.streak = 0,
            Quadrant::MultiplicativeDecrease => self.decrease(p, now_ns),
        }
        self.clamp(p);
        q
    }

    fn decrease(&mut self, p: &NsccFixedParams, now_ns: u32) {
        let period = u64::from(self.base_ns) + u64::from(p.target_ns);
        if self.last_dec_valid && u64::from(now_ns.wrapping_sub(self.last_dec_ns)) < period {
            return;
        }
        let t_fx = u64::from(p.target_ns) << 8;
        if self.avg_fx <= t_fx {
            return;
        }
        let f = frac_q16(self.avg_fx - t_fx, self.avg_fx);
        let cut = mul_q16(u64::from(p.decrease_gain_q16), f).min(MAX_CUT_Q16);
        if cut == 0 {
            return;
        }
        self.cwnd_fx -= mul_q16(self.cwnd_fx, cut);
        self.last_dec_ns = now_ns;
        self.last_dec_valid = true;
        self.streak = 0;
    }

    fn penalty(&mut self, p: &NsccFixedParams, penalty: u8, restore: bool) {
        let pen = penalty.min(PENALTY_MAX);
        if pen > 0 {
            let cap = mul_q16(p.max_fx(), PENALTY_FRAC[usize::from(pen & 7)]) >> (pen >> 3);
            if self.cwnd_fx > cap {
                if !self.pre_valid {
                    self.pre_fx = self.cwnd_fx;
                    self.pre_valid = true;
                }
                self.cwnd_fx = cap;
                self.clamp(p);
            }
        } else if self.pre_valid {
            self.pre_valid = false;
            if restore {
                self.cwnd_fx = self.cwnd_fx.max(self.pre_fx);
                self.clamp(p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cc::{AckSample, CongestionControl, Nscc, NsccConfig};
    use crate::time::{Duration, Instant};
    use crate::wire::mrc10::choices;

    #[test]
    fn penalty_table_is_the_share() {
        for k in 0..8u8 {
            let want = (choices::cwnd_penalty_share(k) * Q16 as f64).round() as u64;
            assert_eq!(PENALTY_FRAC[usize::from(k)], want, "k = {k}");
        }
        assert_eq!(PENALTY_MAX, choices::CWND_PENALTY_MAX);
        assert_eq!(
            AVG_GAIN_Q16,
            (crate::model::cc::NSCC_AVG_DELAY_GAIN * Q16 as f64).round() as u64
        );
    }

    #[test]
    fn divider_and_multiplier() {
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = x & ((1 << 40) - 1);
            let d = (x >> 20).max(1) & ((1 << 40) - 1);
            let d = d.max(1);
            let want = ((u128::from(n) << 16) / u128::from(d)).min(u128::from(Q16)) as u64;
            assert_eq!(frac_q16(n, d), want);
        }
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// The f64 controller (quick adapt off) and the integer one over
    /// random feedback (5000 sequences of 400 records: ACKs with delays
    /// around a drifting congestion level, ECN, receiver penalties,
    /// losses, timeouts): after every record the windows differ by at most
    /// `TOL` of the model's window plus 2 bytes, until the two take a
    /// different decrease decision (at most 2 % of the sequences; the
    /// comparison of that sequence stops there).
    #[test]
    fn tracks_the_f64_model() {
        /// Relative tolerance (see `docs/hw/nscc.md`, "Accuracy").
        const TOL: f64 = 0.005;
        const SEQS: u64 = 5000;
        let mut worst = 0.0f64;
        let mut quads = [0usize; 4];
        let mut flips = 0usize;
        for seed in 1..=SEQS {
            let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let mut c = NsccConfig::for_fabric(
                [100.0, 200.0, 400.0][(seed % 3) as usize],
                Duration::from_ns(1000 + 500 * (seed % 5)),
                4096,
            );
            c.quick_adapt.enabled = false;
            c.min_cwnd = 4096;
            let p = NsccFixedParams::from_config(&c);
            let mut m = Nscc::new(c);
            let mut f = NsccFixed::new(&p);
            assert_eq!(f.window() as u64, m.window());
            let mut now = Instant::from_ns(1000);
            let base = c.base_rtt.as_ns();
            let target = c.target_delay.as_ns();
            // A congestion level that drifts: the delays come around it.
            let mut level = r.below(3 * target);
            let mut cuts = 0u64;
            for i in 0..400 {
                now += Duration::from_ns(r.below(400));
                if r.below(50) == 0 {
                    level = r.below(3 * target);
                }
                let k = r.below(100);
                let fb = if k < 90 {
                    let acked = if r.below(10) == 0 {
                        r.below(64_000)
                    } else {
                        r.below(8193)
                    } as u32;
                    let rtt = if r.below(10) < 8 {
                        Some((base + level + r.below(target / 2 + 1)).saturating_sub(r.below(target / 2 + 1)) as u32)
                    } else {
                        None
                    };
                    let ecn = r.below(100) < if level > target { 50 } else { 10 };
                    let penalty = if r.below(20) == 0 { r.below(40) as u8 } else { 0 };
                    let restore = r.below(2) == 0;
                    m.on_ack(
                        now,
                        AckSample {
                            acked_bytes: u64::from(acked),
                            rtt: rtt.map(|x| Duration::from_ns(u64::from(x))),
                            ecn_ce: u32::from(ecn),
                            in_flight: 0,
                            cwnd_penalty: penalty,
                            restore,
                        },
                    );
                    Feedback::Ack {
                        acked,
                        ecn,
                        rtt_ns: rtt,
                        penalty,
                        restore,
                    }
                } else if k < 97 {
                    let bytes = r.below(20_000) as u32;
                    m.on_loss(now, u64::from(bytes));
                    Feedback::Loss { bytes }
                } else {
                    m.on_timeout(now);
                    Feedback::Timeout
                };
                let before = (f.last_dec_ns, f.last_dec_valid);
                let (w, q) = f.step(&p, now.as_ns() as u32, fb);
                if let Some(q) = q {
                    quads[q as usize] += 1;
                    if q == Quadrant::MultiplicativeDecrease && before != (f.last_dec_ns, f.last_dec_valid) {
                        cuts += 1;
                    }
                }
                if cuts != m.counters().multiplicative_decrease {
                    // A threshold decision went the other way (a cut of
                    // less than 1/65536, an average a rounding away from
                    // the target): the two windows go separate ways from
                    // here, by design of the rule, not by accumulated
                    // error.
                    flips += 1;
                    break;
                }
                let want = m.window() as f64;
                let err = (f64::from(w) - want).abs();
                worst = worst.max((err - 2.0).max(0.0) / want);
                assert!(
                    err <= TOL * want + 2.0,
                    "seed {seed} record {i} {fb:?}: fixed {w}, f64 {want} ({:.4} %)",
                    100.0 * err / want
                );
            }
        }
        eprintln!("worst relative error beyond 2 bytes: {worst:.6}; quadrants {quads:?}; decrease decisions flipped in {flips} sequences");
        assert!(quads.iter().all(|&n| n > 1000), "{quads:?}");
        // 46 of the 5000 on the committed generator.
        assert!(flips * 50 <= SEQS as usize, "{flips} sequences with a flipped decrease");
    }
}
