//! The EV (entropy value) set of one QP: which paths a QP sprays on.
//!
//! CONTRACT FILE: the public API below is what the requester uses. The
//! bodies are a minimal placeholder (round robin, one loss = ASSUMED_BAD);
//! the full policy (weighted spraying, probing, deny masks, bounded event
//! queue) replaces them behind the same API.

use std::collections::VecDeque;

use crate::time::{Duration, Instant};

/// Most EVs a QP may hold.
pub const MAX_EVS: usize = 256;

/// State of one EV.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum EvState {
    /// Used for spraying.
    Good,
    /// Loss or timeout seen on it: not sprayed on until a probe succeeds.
    AssumedBad,
    /// Excluded by the control plane.
    Denied,
}

/// How packets are spread over GOOD EVs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SprayPolicy {
    /// Each GOOD EV in turn.
    RoundRobin,
    /// GOOD EVs weighted by their recent loss, ECN and delay.
    Weighted,
}

/// Why an EV changed state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum EvChangeReason {
    /// Loss inferred from SACKs on this EV.
    Loss,
    /// Retransmission timeout on a packet sent on this EV.
    Timeout,
    /// A trim NACK arrived for a packet sent on this EV (congestion only;
    /// reported but does not by itself mark an EV bad).
    Trim,
    /// A probe on this EV returned.
    ProbeOk,
    /// The control plane denied it.
    Denied,
    /// The control plane lifted a denial.
    Allowed,
}

/// One EV state change, reported to the control plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EvStateChange {
    pub at: Instant,
    pub ev_index: u16,
    pub from: EvState,
    pub to: EvState,
    pub reason: EvChangeReason,
}

/// Configuration of an EV set.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EvSetConfig {
    /// The entropy values (UDP source port / flow label bits), 1..=256.
    pub evs: Vec<u32>,
    /// Never fewer GOOD EVs than this because of ASSUMED_BAD marking.
    pub min_active: u16,
    pub policy: SprayPolicy,
    /// How long an ASSUMED_BAD EV waits before (re)probing.
    pub probe_interval: Duration,
    /// Capacity of the state-change event queue; overflow is counted.
    pub event_queue_len: usize,
    pub seed: u64,
}

impl Default for EvSetConfig {
    fn default() -> Self {
        EvSetConfig {
            evs: (0..8).map(|i| 0xC000 + i).collect(),
            min_active: 1,
            policy: SprayPolicy::RoundRobin,
            probe_interval: Duration::from_us(100),
            event_queue_len: 1024,
            seed: 0,
        }
    }
}

/// Invalid EV set configuration.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvConfigError {
    #[error("an EV set needs 1 to {MAX_EVS} EVs, got {0}")]
    Count(usize),
    #[error("min_active {min_active} exceeds the {count} EVs in the set")]
    MinActive { min_active: u16, count: usize },
}

/// Counters of an EV set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EvCounters {
    /// Transitions into ASSUMED_BAD.
    pub marked_bad: u64,
    /// ASSUMED_BAD marks refused by the minimum-active guard.
    pub guard_refused: u64,
    /// Transitions back to GOOD after a probe.
    pub readmitted: u64,
    /// Transitions into DENIED.
    pub denied: u64,
    /// Probes requested.
    pub probes: u64,
    /// State-change events dropped because the queue was full.
    pub events_dropped: u64,
}

/// The EV set of one QP.
#[derive(Clone, Debug)]
pub struct EvSet {
    cfg: EvSetConfig,
    state: Vec<EvState>,
    probe_at: Vec<Option<Instant>>,
    cursor: usize,
    events: VecDeque<EvStateChange>,
    counters: EvCounters,
}

impl EvSet {
    /// A set with every EV GOOD.
    pub fn new(cfg: EvSetConfig) -> Result<EvSet, EvConfigError> {
        let n = cfg.evs.len();
        if n == 0 || n > MAX_EVS {
            return Err(EvConfigError::Count(n));
        }
        if cfg.min_active as usize > n {
            return Err(EvConfigError::MinActive { min_active: cfg.min_active, count: n });
        }
        Ok(EvSet {
            state: vec![EvState::Good; n],
            probe_at: vec![None; n],
            cursor: 0,
            events: VecDeque::new(),
            counters: EvCounters::default(),
            cfg,
        })
    }

    /// Number of EVs.
    pub fn len(&self) -> usize {
        self.state.len()
    }

    /// Always false: a set holds at least one EV.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The entropy value of EV `index`.
    pub fn value(&self, index: u16) -> u32 {
        self.cfg.evs[index as usize]
    }

    /// The state of EV `index`.
    pub fn state(&self, index: u16) -> EvState {
        self.state[index as usize]
    }

    /// How many EVs are GOOD.
    pub fn good_count(&self) -> usize {
        self.state.iter().filter(|s| **s == EvState::Good).count()
    }

    /// The EV for the next new packet. Never an ASSUMED_BAD or DENIED EV
    /// while a GOOD one exists; if none is GOOD, the least recently marked
    /// ASSUMED_BAD one (a QP never stops sending for lack of paths).
    pub fn select(&mut self, _now: Instant) -> u16 {
        let n = self.len();
        for _ in 0..n {
            let i = self.cursor;
            self.cursor = (self.cursor + 1) % n;
            if self.state[i] == EvState::Good {
                return i as u16;
            }
        }
        self.fallback()
    }

    /// The EV for a retransmission: a GOOD EV other than `avoid` if any.
    pub fn select_other(&mut self, now: Instant, avoid: u16) -> u16 {
        let n = self.len();
        for _ in 0..n {
            let i = self.select(now);
            if i != avoid || self.good_count() <= 1 {
                return i;
            }
        }
        avoid
    }

    fn fallback(&self) -> u16 {
        self.state.iter().position(|s| *s != EvState::Denied).unwrap_or(0) as u16
    }

    /// Feedback: a packet sent on `index` was acknowledged.
    pub fn on_ack(&mut self, _index: u16, _now: Instant, _rtt: Option<Duration>, _ecn_ce: bool) {}

    /// A loss was inferred on `index`. Returns true if the EV became
    /// ASSUMED_BAD (false if already not GOOD or the guard refused).
    pub fn on_loss(&mut self, index: u16, now: Instant) -> bool {
        self.mark_bad(index, now, EvChangeReason::Loss)
    }

    /// A retransmission timeout hit a packet sent on `index`.
    pub fn on_timeout(&mut self, index: u16, now: Instant) -> bool {
        self.mark_bad(index, now, EvChangeReason::Timeout)
    }

    /// A trim NACK came back for a packet sent on `index`.
    pub fn on_trim(&mut self, _index: u16, _now: Instant) {}

    fn mark_bad(&mut self, index: u16, now: Instant, reason: EvChangeReason) -> bool {
        let i = index as usize;
        if self.state[i] != EvState::Good {
            return false;
        }
        if self.good_count() <= self.cfg.min_active as usize {
            self.counters.guard_refused += 1;
            return false;
        }
        self.set_state(i, EvState::AssumedBad, reason, now);
        self.counters.marked_bad += 1;
        self.probe_at[i] = Some(now + self.cfg.probe_interval);
        true
    }

    fn set_state(&mut self, i: usize, to: EvState, reason: EvChangeReason, at: Instant) {
        let from = self.state[i];
        self.state[i] = to;
        if self.events.len() >= self.cfg.event_queue_len {
            self.counters.events_dropped += 1;
        } else {
            self.events.push_back(EvStateChange { at, ev_index: i as u16, from, to, reason });
        }
    }

    /// An ASSUMED_BAD EV whose probe is due at `now`, if any; the caller
    /// sends a probe on it.
    pub fn probe_due(&mut self, now: Instant) -> Option<u16> {
        let i = self.probe_at.iter().position(|t| matches!(t, Some(t) if *t <= now))?;
        self.probe_at[i] = Some(now + self.cfg.probe_interval);
        self.counters.probes += 1;
        Some(i as u16)
    }

    /// When the next probe falls due.
    pub fn next_probe_deadline(&self) -> Option<Instant> {
        self.probe_at.iter().flatten().min().copied()
    }

    /// A probe on `index` returned: re-admit it.
    pub fn on_probe_response(&mut self, index: u16, now: Instant, _rtt: Duration) {
        let i = index as usize;
        if i < self.len() && self.state[i] == EvState::AssumedBad {
            self.probe_at[i] = None;
            self.set_state(i, EvState::Good, EvChangeReason::ProbeOk, now);
            self.counters.readmitted += 1;
        }
    }

    /// Control plane: deny every EV whose value matches `value` under `mask`.
    /// Returns how many changed.
    pub fn deny(&mut self, mask: u32, value: u32, now: Instant) -> usize {
        let mut n = 0;
        for i in 0..self.len() {
            if self.cfg.evs[i] & mask == value & mask && self.state[i] != EvState::Denied {
                self.probe_at[i] = None;
                self.set_state(i, EvState::Denied, EvChangeReason::Denied, now);
                self.counters.denied += 1;
                n += 1;
            }
        }
        n
    }

    /// Control plane: lift the denial of matching EVs (they become GOOD).
    pub fn allow(&mut self, mask: u32, value: u32, now: Instant) -> usize {
        let mut n = 0;
        for i in 0..self.len() {
            if self.cfg.evs[i] & mask == value & mask && self.state[i] == EvState::Denied {
                self.set_state(i, EvState::Good, EvChangeReason::Allowed, now);
                n += 1;
            }
        }
        n
    }

    /// The next state-change event.
    pub fn poll_change(&mut self) -> Option<EvStateChange> {
        self.events.pop_front()
    }

    /// Counters.
    pub fn counters(&self) -> EvCounters {
        self.counters
    }
}
