//! Congestion control behind one trait.
//!
//! CONTRACT FILE: the trait and configuration types below are what the QP
//! uses. The bodies here are a minimal placeholder (a fixed window, no
//! pacing); NSCC-style and DCQCN-style controllers replace them behind the
//! same API.

use crate::time::{Duration, Instant};

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
    /// Window floor, bytes (at least one MTU).
    pub min_cwnd: u64,
    /// Initial window, bytes.
    pub init_cwnd: u64,
}

impl NsccConfig {
    /// Defaults for a fabric of `line_gbps` links and `base_rtt`: start at
    /// one bandwidth-delay product, cap at 1.5 BDP.
    pub fn for_fabric(line_gbps: f64, base_rtt: Duration, mtu: u32) -> NsccConfig {
        let bdp = (line_gbps * 1e9 / 8.0 * base_rtt.as_secs_f64()) as u64;
        let bdp = bdp.max(mtu as u64 * 4);
        NsccConfig {
            base_rtt,
            target_delay: Duration::from_ps(base_rtt.as_ps() / 2),
            increase_bytes: mtu as u64,
            decrease_gain: 0.5,
            max_cwnd: bdp * 3 / 2,
            min_cwnd: mtu as u64,
            init_cwnd: bdp,
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

/// Build the controller `cfg` describes.
pub fn build(cfg: &CcConfig) -> Box<dyn CongestionControl> {
    match *cfg {
        CcConfig::Fixed { window } => Box::new(FixedWindow { window }),
        // Placeholder until the real controllers land: their initial window.
        CcConfig::Nscc(c) => Box::new(FixedWindow { window: c.init_cwnd }),
        CcConfig::Dcqcn(_) => Box::new(FixedWindow { window: u64::MAX }),
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
