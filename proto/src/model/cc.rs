//! Congestion control behind one trait.
//!
//! CONTRACT FILE: the trait and configuration types below are what the QP
//! uses.
//!
//! * [`Nscc`]: a sender-side window controller driven by queueing delay and
//!   ECN in the spirit of UEC's NSCC (its four ECN x delay quadrants).
//! * [`Dcqcn`]: the rate controller of the DCQCN paper (Zhu et al.,
//!   SIGCOMM 2015), the RoCEv2 RC baseline.
//! * [`FixedWindow`]: no congestion control.
//!
//! All arithmetic is deterministic (no clocks, no randomness). See
//! `docs/model-ev-cc.md` for the formulas and their sources.

use crate::time::{Duration, Instant};
use crate::wire::mrc10::choices;

/// What an acknowledgement tells the congestion controller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckSample {
    /// Newly acknowledged bytes (payload).
    pub acked_bytes: u64,
    /// RTT sample minus the responder's service time, if the ACK carried one.
    pub rtt: Option<Duration>,
    /// CE-marked data packets the ACK reports.
    pub ecn_ce: u32,
    /// Bytes in flight after this ACK.
    pub in_flight: u64,
    /// The receiver's cwnd penalty (CC_STATE, [`choices::cwnd_penalty_share`]):
    /// while non-zero the window may not exceed that share of its ceiling.
    pub cwnd_penalty: u8,
    /// The receiver lifted its penalty (CC_STATE restore bit): the window
    /// goes back to at least what it was before the penalty.
    pub restore: bool,
}

/// A congestion controller of one QP (sender side).
pub trait CongestionControl: Send + std::fmt::Debug {
    /// Short name for reports ("nscc", "dcqcn", "fixed").
    fn name(&self) -> &'static str;
    /// Bytes that may be in flight now (`u64::MAX` if only rate-limited).
    fn window(&self) -> u64;
    /// Earliest time a packet of `bytes` may be sent (pacing); `now` if it
    /// may go at once.
    fn next_send_time(&self, now: Instant, bytes: u32) -> Instant;
    /// A packet of `bytes` was sent.
    fn on_send(&mut self, now: Instant, bytes: u32);
    /// An acknowledgement arrived.
    fn on_ack(&mut self, now: Instant, sample: AckSample);
    /// A loss of `bytes` was inferred (or a trim NACK arrived).
    fn on_loss(&mut self, now: Instant, bytes: u64);
    /// A retransmission timeout fired.
    fn on_timeout(&mut self, now: Instant);
    /// A congestion notification (RoCEv2 CNP) arrived.
    fn on_cnp(&mut self, now: Instant);
    /// Internal timers (DCQCN's rate-increase timer); default none.
    fn next_timer(&self) -> Option<Instant> {
        None
    }
    /// Fire internal timers due at `now`.
    fn on_timer(&mut self, _now: Instant) {}
}

/// Parameters of the NSCC-style window controller (delay + ECN).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NsccConfig {
    /// Unloaded fabric RTT.
    pub base_rtt: Duration,
    /// Queueing delay above base RTT the controller aims at.
    pub target_delay: Duration,
    /// Additive increase per RTT, bytes.
    pub increase_bytes: u64,
    /// Multiplicative decrease gain (fraction of the window cut per
    /// congestion signal, scaled by how far above target).
    pub decrease_gain: f64,
    /// Window ceiling, bytes.
    pub max_cwnd: u64,
    /// Window floor, bytes. A window below one packet is a rate: the
    /// packet is paced at `cwnd / (base_rtt + target_delay)` (a thousand senders into one port
    /// need windows of a fraction of a packet each).
    pub min_cwnd: u64,
    /// Initial window, bytes.
    pub init_cwnd: u64,
    /// UET NSCC's quick adapt (`disable_qa`, `qa_gate`, `qa_threshold`).
    #[serde(default)]
    pub quick_adapt: QuickAdapt,
    /// The largest share of the window one multiplicative decrease cuts
    /// (libmrc's `max_md_jump`), in `[0, 1]`.
    #[serde(default = "default_max_cut")]
    pub max_cut: f64,
}

/// [`NsccConfig::max_cut`] by default: half the window.
pub const NSCC_MAX_CUT: f64 = 0.5;

fn default_max_cut() -> f64 {
    NSCC_MAX_CUT
}

/// UET NSCC's quick adapt: after a loss, a trim or a delay beyond
/// `threshold`, at the end of the current epoch (one base RTT plus the
/// target delay) the window drops to the bytes actually acknowledged in
/// that epoch, if those were fewer than `max_cwnd >> gate`; ECN feedback
/// about the bytes already in flight is then ignored. This is what stops a
/// many-to-one incast within an RTT, where the per-ACK rules would need
/// many.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct QuickAdapt {
    /// Off is libmrc's `disable_qa`.
    pub enabled: bool,
    /// `qa_gate`: quick adapt only when an epoch acknowledged less than
    /// `max_cwnd >> gate` bytes.
    pub gate: u8,
    /// `qa_threshold`: a queueing delay above it, on the feedback that ends
    /// an epoch, triggers quick adapt by itself. Zero: [`QA_THRESHOLD_TARGETS`]
    /// target delays.
    pub threshold: Duration,
}

/// UET NSCC's default `qa_gate` (a shift: an eighth of the maximum window).
pub const QA_GATE_DEFAULT: u8 = 3;
/// UET NSCC's default `qa_threshold`, in target delays.
pub const QA_THRESHOLD_TARGETS: u64 = 4;

impl Default for QuickAdapt {
    /// Off, for configurations written before quick adapt existed (the
    /// other rules of [`Nscc`] apply to every configuration);
    /// [`NsccConfig::for_fabric`] turns it on.
    fn default() -> QuickAdapt {
        QuickAdapt {
            enabled: false,
            gate: QA_GATE_DEFAULT,
            threshold: Duration::ZERO,
        }
    }
}

impl NsccConfig {
    /// Defaults for a fabric of `line_gbps` links and `base_rtt`: start at
    /// one bandwidth-delay product, cap at 1.5 BDP.
    pub fn for_fabric(line_gbps: f64, base_rtt: Duration, mtu: u32) -> NsccConfig {
        let bdp = (line_gbps * 1e9 / 8.0 * base_rtt.as_secs_f64()) as u64;
        let bdp = bdp.max(mtu as u64 * 4);
        let target_delay = Duration::from_ps(base_rtt.as_ps() / 2);
        NsccConfig {
            base_rtt,
            target_delay,
            increase_bytes: mtu as u64,
            decrease_gain: 0.5,
            max_cwnd: bdp * 3 / 2,
            min_cwnd: (mtu as u64 / NSCC_MIN_CWND_PACKET_DIVISOR).max(1),
            init_cwnd: bdp,
            quick_adapt: QuickAdapt {
                enabled: true,
                gate: QA_GATE_DEFAULT,
                threshold: target_delay.saturating_mul(QA_THRESHOLD_TARGETS),
            },
            max_cut: NSCC_MAX_CUT,
        }
    }
}

/// Parameters of the DCQCN-style rate controller (RC baseline).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DcqcnConfig {
    /// Line rate, Gb/s (start and ceiling).
    pub line_gbps: f64,
    /// Minimum rate, Gb/s.
    pub min_gbps: f64,
    /// Alpha gain g.
    pub g: f64,
    /// Rate-increase timer period.
    pub increase_period: Duration,
    /// Additive increase step, Gb/s.
    pub rai_gbps: f64,
    /// Hyper increase step, Gb/s.
    pub rhai_gbps: f64,
    /// Fast-recovery stages before additive increase.
    pub fast_recovery_steps: u32,
}

impl DcqcnConfig {
    /// Common defaults (as in the DCQCN paper and NIC defaults) at `line_gbps`.
    pub fn for_line_rate(line_gbps: f64) -> DcqcnConfig {
        DcqcnConfig {
            line_gbps,
            min_gbps: line_gbps / 1000.0,
            g: 1.0 / 256.0,
            increase_period: Duration::from_us(55),
            rai_gbps: line_gbps / 200.0,
            rhai_gbps: line_gbps / 20.0,
            fast_recovery_steps: 5,
        }
    }
}

/// Which controller a QP runs.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum CcConfig {
    /// No congestion control: a fixed window of bytes in flight.
    Fixed { window: u64 },
    /// NSCC-style window control (MRC).
    Nscc(NsccConfig),
    /// DCQCN-style rate control (RC baseline).
    Dcqcn(DcqcnConfig),
}

impl CcConfig {
    /// Check the parameters: every rate, gain and period a controller
    /// divides by or iterates on must be finite and in range. Refused:
    /// DCQCN line rate not positive (packets would be paced infinitely far
    /// apart), negative or non-finite rates and steps, `g` outside
    /// `[0, 1]`, a zero increase period (`on_timer` would loop without time
    /// advancing); NSCC `decrease_gain` outside `[0, 1]` or NaN (a NaN
    /// window).
    pub fn validate(&self) -> Result<(), String> {
        let unit = |x: f64| x.is_finite() && (0.0..=1.0).contains(&x);
        let nonneg = |x: f64| x.is_finite() && x >= 0.0;
        match *self {
            CcConfig::Fixed { .. } => Ok(()),
            CcConfig::Nscc(c) => {
                if !unit(c.decrease_gain) {
                    return Err(format!("NSCC decrease_gain {} not in [0, 1]", c.decrease_gain));
                }
                if !unit(c.max_cut) {
                    return Err(format!("NSCC max_cut {} not in [0, 1]", c.max_cut));
                }
                if u32::from(c.quick_adapt.gate) >= u64::BITS {
                    return Err(format!(
                        "NSCC qa_gate {} is a shift of a 64-bit window: at most 63",
                        c.quick_adapt.gate
                    ));
                }
                Ok(())
            }
            CcConfig::Dcqcn(c) => {
                if !(c.line_gbps.is_finite() && c.line_gbps > 0.0) {
                    return Err(format!("DCQCN line rate {} Gb/s must be positive", c.line_gbps));
                }
                if !nonneg(c.min_gbps) || !nonneg(c.rai_gbps) || !nonneg(c.rhai_gbps) {
                    return Err("DCQCN min rate and increase steps must be finite and >= 0".into());
                }
                if !unit(c.g) {
                    return Err(format!("DCQCN g {} not in [0, 1]", c.g));
                }
                if c.increase_period == Duration::ZERO {
                    return Err("DCQCN increase period must be positive".into());
                }
                Ok(())
            }
        }
    }
}

/// Build the controller `cfg` describes.
pub fn build(cfg: &CcConfig) -> Box<dyn CongestionControl> {
    match *cfg {
        CcConfig::Fixed { window } => Box::new(FixedWindow { window }),
        CcConfig::Nscc(c) => Box::new(Nscc::new(c)),
        CcConfig::Dcqcn(c) => Box::new(Dcqcn::new(c)),
    }
}

/// Which NSCC quadrant (ECN x delay) an ACK fell in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NsccQuadrant {
    /// No ECN, delay below target: proportional increase.
    ProportionalIncrease,
    /// No ECN, delay at or above target: the queue is draining or belongs
    /// to another path; a small, fair (unscaled) additive increase.
    FairIncrease,
    /// ECN, delay below target: congestion on one path, left to the load
    /// balancer (EV weights); the window holds.
    Hold,
    /// ECN, delay at or above target: multiplicative decrease.
    MultiplicativeDecrease,
}

/// Counters of an [`Nscc`] controller, for tests and reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NsccCounters {
    pub proportional_increase: u64,
    pub fair_increase: u64,
    pub hold: u64,
    pub multiplicative_decrease: u64,
    /// Decreases skipped because one happened less than a base RTT + target ago.
    pub decrease_suppressed: u64,
    pub losses: u64,
    pub timeouts: u64,
    /// Quick adapts: windows set to the bytes an epoch acknowledged.
    pub quick_adapts: u64,
    /// ECN marks and losses ignored after a quick adapt (feedback about
    /// bytes sent under the old window).
    pub qa_ignored: u64,
    /// Windows cut to the receiver's penalty cap (CC_STATE).
    pub receiver_penalties: u64,
    /// Windows given back by the receiver's restore bit.
    pub receiver_restores: u64,
}

/// Near-zero delay threshold for fast increase, as a fraction of target.
const NSCC_FAST_DELAY_FRACTION: f64 = 1.0 / 8.0;
/// Proportional increase gain: at zero delay the per-RTT increase is
/// `increase_bytes * (1 + NSCC_PROP_GAIN)`.
const NSCC_PROP_GAIN: f64 = 4.0;
/// Fair increase per RTT, as a fraction of `increase_bytes`.
const NSCC_FAIR_FRACTION: f64 = 0.25;
/// [`NsccConfig::for_fabric`]'s window floor: this fraction of a packet.
pub const NSCC_MIN_CWND_PACKET_DIVISOR: u64 = 8;
/// Gain of the slow delay average a decrease is sized by (UET NSCC's
/// `delay_alpha`).
pub const NSCC_AVG_DELAY_GAIN: f64 = 0.0125;

/// NSCC-style sender window controller.
///
/// Per ACK with `acked` bytes, queueing delay `d = rtt - base` (base =
/// min(configured base RTT, smallest RTT seen)), target `T`,
/// increase `I = increase_bytes`:
///
/// | ECN | delay  | action |
/// |-----|--------|--------|
/// | no  | d < T  | `cwnd += I * acked/cwnd * (1 + 4 (T-d)/T)`; if a whole window was acked with `d <= T/8`: fast increase `cwnd += acked/2` |
/// | no  | d >= T | `cwnd += I/4 * acked/cwnd` (fair increase) |
/// | yes | d < T  | hold |
/// | yes | d >= T | `cwnd *= 1 - min(max_cut, gain * (D-T)/D)` (`max_cut` 0.5 by default) with `D` the slow delay average (gain 1/80), none while `D <= T`, at most once per `base + T` |
///
/// Loss or trim of `b` bytes: `cwnd -= b`; timeout: `cwnd = min(cwnd, I)`
/// (one packet).
/// Quick adapt ([`QuickAdapt`]) runs before these rules at each epoch end
/// and, when it sets the window, replaces them for that ACK or loss.
/// Always clamped to `[min_cwnd, max_cwnd]`. ECN without an RTT sample
/// uses the last measured delay; a CNP counts as an ECN mark with the last
/// measured delay. Pacing (off unless [`Nscc::with_pacing`]) spaces packets
/// at `cwnd / srtt`. A window below one packet (the floor `min_cwnd` may be
/// a fraction of a packet) is paced at `cwnd / (base + T)` when pacing is
/// off (an ACK that grows it brings the next packet forward to the new
/// gap), and at `cwnd / srtt` like every packet when it is on.
#[derive(Clone, Debug)]
pub struct Nscc {
    cfg: NsccConfig,
    cwnd: f64,
    base_ps: u64,
    srtt_ps: u64,
    last_delay_ps: u64,
    /// Slow EWMA of the queueing delay (gain [`NSCC_AVG_DELAY_GAIN`]): how
    /// much a decrease cuts.
    avg_delay_ps: f64,
    last_decrease: Option<Instant>,
    /// Bytes acked in the current near-zero-delay streak.
    fast_streak: f64,
    pacing: bool,
    next_send: Instant,
    counters: NsccCounters,
    last_quadrant: Option<NsccQuadrant>,
    qa: QaState,
    /// The window when the receiver's penalty first capped it (restored
    /// by the restore bit).
    pre_penalty: Option<f64>,
    /// When the last packet went and its size: a window below one packet
    /// that grows re-times the next packet from it ([`Nscc::repace`]).
    last_send: Option<(Instant, u32)>,
}

/// Quick adapt's running state (see [`QuickAdapt`]).
#[derive(Clone, Copy, Debug, Default)]
struct QaState {
    /// End of the current epoch; `None` before the first feedback.
    epoch_end: Option<Instant>,
    /// Bytes acknowledged in the current epoch.
    achieved: u64,
    /// A loss or trim since the last quick adapt.
    triggered: bool,
    /// Bytes of feedback still to come about packets sent before the last
    /// quick adapt (their ECN marks are ignored).
    ignore_left: u64,
    /// Bytes in flight as last known (ACK samples, sends, losses).
    in_flight: u64,
}

impl Nscc {
    /// A controller at `cfg.init_cwnd` (clamped), no pacing.
    pub fn new(cfg: NsccConfig) -> Nscc {
        let min = cfg.min_cwnd.max(1) as f64;
        let max = (cfg.max_cwnd as f64).max(min);
        Nscc {
            cwnd: (cfg.init_cwnd as f64).clamp(min, max),
            base_ps: cfg.base_rtt.as_ps(),
            srtt_ps: cfg.base_rtt.as_ps(),
            last_delay_ps: 0,
            avg_delay_ps: 0.0,
            last_decrease: None,
            fast_streak: 0.0,
            pacing: false,
            next_send: Instant::ZERO,
            counters: NsccCounters::default(),
            last_quadrant: None,
            qa: QaState::default(),
            pre_penalty: None,
            last_send: None,
            cfg,
        }
    }

    /// Enable or disable pacing at `cwnd / srtt`.
    pub fn with_pacing(mut self, pacing: bool) -> Nscc {
        self.pacing = pacing;
        self
    }

    /// The window, bytes (unrounded).
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// Smoothed RTT.
    pub fn srtt(&self) -> Duration {
        Duration::from_ps(self.srtt_ps)
    }

    /// Counters.
    pub fn counters(&self) -> NsccCounters {
        self.counters
    }

    /// The quadrant of the last ACK.
    pub fn last_quadrant(&self) -> Option<NsccQuadrant> {
        self.last_quadrant
    }

    /// The receiver's back-pressure (CC_STATE): a penalty caps the window
    /// at its share of the ceiling; the restore bit gives back the window
    /// the first cap took.
    fn receiver_penalty(&mut self, penalty: u8, restore: bool) {
        if penalty > 0 {
            let cap = self.cfg.max_cwnd as f64 * choices::cwnd_penalty_share(penalty);
            if self.cwnd > cap {
                self.pre_penalty.get_or_insert(self.cwnd);
                self.cwnd = cap;
                self.counters.receiver_penalties += 1;
                self.clamp();
            }
        } else if let Some(w) = self.pre_penalty.take() {
            // The first SACK without a penalty carries the restore bit; if
            // it was lost, the window is left to grow on its own.
            if restore {
                self.cwnd = self.cwnd.max(w);
                self.counters.receiver_restores += 1;
                self.clamp();
            }
        }
    }

    /// The gap after a packet of `bytes` for a window below one packet:
    /// `cwnd` bytes per base RTT plus target delay (the RTT the window is
    /// sized for). Not the srtt: the window already shrank for the
    /// queueing srtt includes, and counting it twice leaves a flow idle for
    /// hundreds of microseconds once the flows it shared a port with have
    /// finished.
    fn sub_packet_gap(&self, bytes: u32) -> Duration {
        let rtt = self.base_ps + self.cfg.target_delay.as_ps();
        Duration::from_ps((f64::from(bytes) * rtt as f64 / self.cwnd).round() as u64)
    }

    /// The pacing of a window below one packet follows the window it has
    /// now, not the one it had when the last packet went: after an ACK
    /// that grew it, the next packet is due one (shorter) gap after the
    /// last. A flow at the floor is told that the queue drained by the ACK
    /// of a packet sent long before; without this it waited out the
    /// floor's whole gap first (1023 -> 1 incast: the last flows idled up
    /// to 144 us; `docs/benchmarks.md`). Only ever earlier: a cut takes
    /// effect from the next packet, as for a window above one packet.
    fn repace(&mut self, now: Instant) {
        let Some((sent, bytes)) = self.last_send else {
            return;
        };
        if self.pacing || self.cwnd >= f64::from(bytes) || self.next_send <= now {
            return;
        }
        let due = sent + self.sub_packet_gap(bytes);
        if due < self.next_send {
            self.next_send = due.max(now);
        }
    }

    fn clamp(&mut self) {
        let min = self.cfg.min_cwnd.max(1) as f64;
        let max = (self.cfg.max_cwnd as f64).max(min);
        self.cwnd = self.cwnd.clamp(min, max);
    }

    /// Multiplicative decrease sized by the slow delay average, not the
    /// delay of this ACK: a sprayed flow whose few EVs cross a hot link
    /// sees large delays on those alone, and cutting the whole window by
    /// them slows its other paths too (hashed ECMP, `docs/benchmarks.md`).
    fn decrease(&mut self, now: Instant) {
        let target = self.cfg.target_delay.as_ps();
        let period = Duration::from_ps(self.base_ps + target);
        if let Some(t) = self.last_decrease {
            if now < t + period {
                self.counters.decrease_suppressed += 1;
                return;
            }
        }
        let d = self.avg_delay_ps.max(1.0);
        let cut = (self.cfg.decrease_gain * (d - target as f64) / d).clamp(0.0, self.cfg.max_cut);
        if cut <= 0.0 {
            // The average is at or under target: a transient (or one hot
            // path); nothing to cut, and no decrease to space the next from.
            return;
        }
        self.cwnd *= 1.0 - cut;
        self.last_decrease = Some(now);
        self.counters.multiplicative_decrease += 1;
        self.fast_streak = 0.0;
    }

    /// Quick adapt at an epoch's end ([`QuickAdapt`]); true if the window
    /// was set, or the congestion `signal` (ECN mark, loss) is about the
    /// old window, and the caller's own rule must not run.
    fn quick_adapt(&mut self, now: Instant, loss: bool, signal: bool) -> bool {
        let qa = self.cfg.quick_adapt;
        if !qa.enabled {
            return false;
        }
        if self.qa.ignore_left > 0 && signal {
            self.counters.qa_ignored += 1;
            return true;
        }
        let mut done = false;
        if self.qa.epoch_end.is_none_or(|end| now > end) {
            let threshold = if qa.threshold == Duration::ZERO {
                self.cfg.target_delay.saturating_mul(QA_THRESHOLD_TARGETS)
            } else {
                qa.threshold
            };
            let congested = self.qa.triggered || loss || self.last_delay_ps > threshold.as_ps();
            let gate = self.cfg.max_cwnd.checked_shr(u32::from(qa.gate)).unwrap_or(0);
            let starved = self.qa.achieved < gate;
            if self.qa.epoch_end.is_some() && congested && starved {
                // To what the epoch delivered, as UET does: usually a cut;
                // for a window below one packet, whose epochs deliver a
                // whole packet or nothing, sometimes a raise (kept: the
                // 1023 -> 1 incast ends 8,804-8,872 us with it, 8,896-9,059
                // with the window only ever lowered).
                self.cwnd = (self.qa.achieved as f64).max(self.cfg.min_cwnd as f64);
                self.qa.ignore_left = self.qa.in_flight;
                self.fast_streak = 0.0;
                self.counters.quick_adapts += 1;
                self.clamp();
                done = true;
            }
            // The news of an epoch is used (or not) at its end.
            self.qa.triggered = false;
            self.qa.achieved = 0;
            self.qa.epoch_end = Some(now + Duration::from_ps(self.base_ps + self.cfg.target_delay.as_ps()));
        }
        done
    }

    fn react(&mut self, now: Instant, acked: u64, ecn: bool) {
        let target = self.cfg.target_delay.as_ps();
        let delay = self.last_delay_ps;
        let acked = acked as f64;
        let quadrant = match (ecn, delay < target) {
            (false, true) => NsccQuadrant::ProportionalIncrease,
            (false, false) => NsccQuadrant::FairIncrease,
            (true, true) => NsccQuadrant::Hold,
            (true, false) => NsccQuadrant::MultiplicativeDecrease,
        };
        let inc = self.cfg.increase_bytes as f64;
        match quadrant {
            NsccQuadrant::ProportionalIncrease => {
                let below = (target - delay) as f64 / target.max(1) as f64;
                self.cwnd += inc * per_window(acked, self.cwnd) * (1.0 + NSCC_PROP_GAIN * below);
                if (delay as f64) <= target as f64 * NSCC_FAST_DELAY_FRACTION {
                    self.fast_streak += acked;
                    if self.fast_streak >= self.cwnd {
                        self.cwnd += acked / 2.0;
                    }
                } else {
                    self.fast_streak = 0.0;
                }
                self.counters.proportional_increase += 1;
            }
            NsccQuadrant::FairIncrease => {
                self.cwnd += inc * NSCC_FAIR_FRACTION * per_window(acked, self.cwnd);
                self.fast_streak = 0.0;
                self.counters.fair_increase += 1;
            }
            NsccQuadrant::Hold => {
                self.fast_streak = 0.0;
                self.counters.hold += 1;
            }
            NsccQuadrant::MultiplicativeDecrease => self.decrease(now),
        }
        self.last_quadrant = Some(quadrant);
        self.clamp();
    }
}

/// The share of a window one ACK of `acked` bytes stands for, at most a
/// whole one: the per-RTT increase laws assume an ACK covers no more than
/// the window, which a window below one packet breaks (one ACK would grow
/// it by many RTTs' worth).
fn per_window(acked: f64, cwnd: f64) -> f64 {
    (acked / cwnd).min(1.0)
}

impl CongestionControl for Nscc {
    fn name(&self) -> &'static str {
        "nscc"
    }
    fn window(&self) -> u64 {
        self.cwnd as u64
    }
    fn next_send_time(&self, now: Instant, bytes: u32) -> Instant {
        if self.pacing || self.cwnd < f64::from(bytes) {
            now.max(self.next_send)
        } else {
            now
        }
    }
    fn on_send(&mut self, now: Instant, bytes: u32) {
        self.qa.in_flight += u64::from(bytes);
        if self.pacing {
            // gap = bytes * srtt / cwnd
            let gap = (bytes as f64 * self.srtt_ps as f64 / self.cwnd).round() as u64;
            self.next_send = now.max(self.next_send) + Duration::from_ps(gap);
        } else if self.cwnd < f64::from(bytes) {
            self.next_send = now.max(self.next_send) + self.sub_packet_gap(bytes);
        }
        self.last_send = Some((now, bytes));
    }
    fn on_ack(&mut self, now: Instant, sample: AckSample) {
        if let Some(rtt) = sample.rtt {
            let r = rtt.as_ps();
            if r > 0 && r < self.base_ps {
                self.base_ps = r;
            }
            self.last_delay_ps = r.saturating_sub(self.base_ps);
            self.avg_delay_ps += NSCC_AVG_DELAY_GAIN * (self.last_delay_ps as f64 - self.avg_delay_ps);
            // EWMA 1/8, integer.
            self.srtt_ps = if r > self.srtt_ps {
                self.srtt_ps + (r - self.srtt_ps) / 8
            } else {
                self.srtt_ps - (self.srtt_ps - r) / 8
            };
        }
        self.qa.ignore_left = self.qa.ignore_left.saturating_sub(sample.acked_bytes);
        self.qa.in_flight = sample.in_flight;
        // The epoch this ACK closes (if it does) is judged without it; its
        // bytes count for the next one.
        let handled = self.quick_adapt(now, false, sample.ecn_ce > 0);
        self.qa.achieved += sample.acked_bytes;
        if !handled {
            self.react(now, sample.acked_bytes, sample.ecn_ce > 0);
        }
        self.receiver_penalty(sample.cwnd_penalty, sample.restore);
        self.repace(now);
    }
    fn on_loss(&mut self, now: Instant, bytes: u64) {
        self.counters.losses += 1;
        self.qa.ignore_left = self.qa.ignore_left.saturating_sub(bytes);
        self.qa.in_flight = self.qa.in_flight.saturating_sub(bytes);
        // A loss is a congestion signal like an ECN mark: one about the
        // old window is ignored after a quick adapt (and arms nothing).
        if self.quick_adapt(now, true, true) {
            return;
        }
        self.qa.triggered = true;
        self.cwnd -= bytes as f64;
        self.fast_streak = 0.0;
        self.clamp();
    }
    fn on_timeout(&mut self, now: Instant) {
        // One packet (`increase_bytes` is the MTU), or less if the window
        // already was: a timeout says a packet is gone, not how much
        // capacity is left.
        self.cwnd = self.cwnd.min(self.cfg.increase_bytes as f64);
        self.fast_streak = 0.0;
        self.last_decrease = Some(now);
        self.counters.timeouts += 1;
        self.clamp();
    }
    fn on_cnp(&mut self, now: Instant) {
        self.react(now, 0, true);
    }
}

/// DCQCN's byte counter (paper: 10 MB).
pub const DCQCN_BYTE_COUNTER: u64 = 10 * 1024 * 1024;

/// DCQCN increase stage (for tests and reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DcqcnStage {
    /// At line rate, no recovery in progress.
    Idle,
    FastRecovery,
    AdditiveIncrease,
    HyperIncrease,
}

/// DCQCN reaction point (Zhu et al., SIGCOMM 2015), rate based.
///
/// * CNP: `Rt = Rc; Rc = Rc (1 - alpha/2); alpha = (1-g) alpha + g`; the
///   timer and byte-counter stages restart.
/// * Every `increase_period` without CNP: `alpha = (1-g) alpha` (applied
///   lazily, exactly, as `(1-g)^k`).
/// * Rate increase events (timer expiry every `increase_period`, or every
///   [`DCQCN_BYTE_COUNTER`] bytes sent): with `T` timer events and `B` byte
///   events since the last CNP (counted before the event), fast recovery
///   while `max(T, B) < F` (so F events)
///   (`Rc = (Rt + Rc)/2`), hyper increase when `min(T, B) >= F`
///   (`Rt += Rhai`), otherwise additive (`Rt += Rai`), each followed by
///   `Rc = (Rt + Rc)/2`. Rates are clamped to `[min, line]`.
/// * Pacing: inter-packet gap `bytes * 8 / Rc`.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    cfg: DcqcnConfig,
    rc: f64,
    rt: f64,
    alpha: f64,
    alpha_at: Instant,
    next_increase: Option<Instant>,
    timer_events: u32,
    byte_events: u32,
    byte_acc: u64,
    byte_counter: u64,
    next_send: Instant,
    cnps: u64,
}

impl Dcqcn {
    /// At line rate, alpha = 1 (as in the paper).
    pub fn new(cfg: DcqcnConfig) -> Dcqcn {
        Dcqcn {
            rc: cfg.line_gbps,
            rt: cfg.line_gbps,
            alpha: 1.0,
            alpha_at: Instant::ZERO,
            next_increase: None,
            timer_events: 0,
            byte_events: 0,
            byte_acc: 0,
            byte_counter: DCQCN_BYTE_COUNTER,
            next_send: Instant::ZERO,
            cnps: 0,
            cfg,
        }
    }

    /// Set the byte counter (0 disables byte-counter increase events).
    pub fn with_byte_counter(mut self, bytes: u64) -> Dcqcn {
        self.byte_counter = bytes;
        self
    }

    /// Current rate Rc, Gb/s.
    pub fn rate_gbps(&self) -> f64 {
        self.rc
    }

    /// Target rate Rt, Gb/s.
    pub fn target_gbps(&self) -> f64 {
        self.rt
    }

    /// Alpha as of the last update.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// CNPs received.
    pub fn cnps(&self) -> u64 {
        self.cnps
    }

    /// The stage the next increase event will run.
    pub fn stage(&self) -> DcqcnStage {
        let f = self.cfg.fast_recovery_steps;
        if self.next_increase.is_none() {
            DcqcnStage::Idle
        } else if self.timer_events.max(self.byte_events) < f {
            DcqcnStage::FastRecovery
        } else if self.timer_events.min(self.byte_events) >= f {
            DcqcnStage::HyperIncrease
        } else {
            DcqcnStage::AdditiveIncrease
        }
    }

    fn catch_up_alpha(&mut self, now: Instant) {
        let p = self.cfg.increase_period.as_ps().max(1);
        let k = now.saturating_since(self.alpha_at).as_ps() / p;
        if k > 0 {
            self.alpha *= (1.0 - self.cfg.g).powi(k.min(i32::MAX as u64) as i32);
            self.alpha_at += Duration::from_ps(k * p);
        }
    }

    /// One increase event; the stage is chosen from the counts before this
    /// event is counted, so fast recovery lasts exactly F events.
    fn increase(&mut self, timer: bool) {
        let stage = self.stage();
        if timer {
            self.timer_events += 1;
        } else {
            self.byte_events += 1;
        }
        match stage {
            DcqcnStage::Idle => return,
            DcqcnStage::FastRecovery => {}
            DcqcnStage::AdditiveIncrease => self.rt += self.cfg.rai_gbps,
            DcqcnStage::HyperIncrease => self.rt += self.cfg.rhai_gbps,
        }
        self.rt = self.rt.min(self.cfg.line_gbps);
        self.rc = ((self.rt + self.rc) / 2.0).clamp(self.min_rate(), self.cfg.line_gbps);
        if self.cfg.line_gbps - self.rc < 1e-9 * self.cfg.line_gbps {
            self.rc = self.cfg.line_gbps;
            self.rt = self.cfg.line_gbps;
            self.next_increase = None;
        }
    }

    fn min_rate(&self) -> f64 {
        self.cfg.min_gbps.max(1e-6).min(self.cfg.line_gbps)
    }
}

impl CongestionControl for Dcqcn {
    fn name(&self) -> &'static str {
        "dcqcn"
    }
    fn window(&self) -> u64 {
        u64::MAX
    }
    fn next_send_time(&self, now: Instant, _bytes: u32) -> Instant {
        now.max(self.next_send)
    }
    fn on_send(&mut self, now: Instant, bytes: u32) {
        self.next_send = now.max(self.next_send) + Duration::serialisation(bytes as u64, self.rc);
        if self.next_increase.is_some() && self.byte_counter > 0 {
            self.byte_acc += bytes as u64;
            while self.byte_acc >= self.byte_counter && self.next_increase.is_some() {
                self.byte_acc -= self.byte_counter;
                self.increase(false);
            }
        }
    }
    fn on_ack(&mut self, _now: Instant, _sample: AckSample) {}
    fn on_loss(&mut self, _now: Instant, _bytes: u64) {}
    fn on_timeout(&mut self, _now: Instant) {}
    fn on_cnp(&mut self, now: Instant) {
        self.catch_up_alpha(now);
        self.cnps += 1;
        self.rt = self.rc;
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.min_rate());
        self.alpha = (1.0 - self.cfg.g) * self.alpha + self.cfg.g;
        self.alpha_at = now;
        self.timer_events = 0;
        self.byte_events = 0;
        self.byte_acc = 0;
        self.next_increase = Some(now + self.cfg.increase_period);
    }
    fn next_timer(&self) -> Option<Instant> {
        self.next_increase
    }
    fn on_timer(&mut self, now: Instant) {
        self.catch_up_alpha(now);
        while let Some(t) = self.next_increase {
            if t > now {
                break;
            }
            self.increase(true);
            if let Some(t2) = self.next_increase {
                self.next_increase = Some(t2.max(t) + self.cfg.increase_period);
            }
        }
    }
}

/// A fixed window, no pacing.
#[derive(Clone, Copy, Debug)]
pub struct FixedWindow {
    pub window: u64,
}

impl CongestionControl for FixedWindow {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn window(&self) -> u64 {
        self.window
    }
    fn next_send_time(&self, now: Instant, _bytes: u32) -> Instant {
        now
    }
    fn on_send(&mut self, _now: Instant, _bytes: u32) {}
    fn on_ack(&mut self, _now: Instant, _sample: AckSample) {}
    fn on_loss(&mut self, _now: Instant, _bytes: u64) {}
    fn on_timeout(&mut self, _now: Instant) {}
    fn on_cnp(&mut self, _now: Instant) {}
}
