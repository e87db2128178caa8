//! The EV (entropy value) set of one QP: which paths a QP sprays on.
//!
//! CONTRACT FILE: the public API below is what the requester uses.
//!
//! * GOOD EVs are kept in a 256-bit mask, so `select` finds the next GOOD EV
//!   with at most four word scans and a `trailing_zeros`, whatever the number
//!   of ASSUMED_BAD or DENIED EVs.
//! * [`SprayPolicy::RoundRobin`] visits GOOD EVs in index order.
//! * [`SprayPolicy::Weighted`] is a credit (deficit) round robin: each visit
//!   adds the EV's weight `w` (in `[W_MIN, 1]`) to its credit and the EV is
//!   chosen when its credit reaches 1, so the long-run share of EV `i` is
//!   `w_i / sum(w)`. The weight is
//!   `w = max(W_MIN, 1 / (1 + K_ECN*ecn + K_DELAY*excess + K_LOSS*loss))`
//!   with per-EV EWMAs (gain 1/8) of the CE fraction (`ecn`), of loss and
//!   trim events per feedback (`loss`), and of the RTT, `excess` being
//!   `(srtt - base) / base` with `base` the smallest RTT seen on any EV.
//!   With `W_MIN = 1/8` a select costs at most 8 visits amortised.
//! * ASSUMED_BAD EVs are probed `probe_interval` after being marked and,
//!   while the probe goes unanswered, again after `probe_interval * 2^k`
//!   (k = 1, 2, ..., capped at 2^PROBE_BACKOFF_MAX_SHIFT = 16x).
//! * See `docs/model-ev-cc.md` for the state machine.

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

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
    /// Stall: its oldest unacknowledged packet is older than packets sent
    /// later (on any EV) that were already acknowledged, by more than the
    /// stall allowance (see [`EvSet::stall_allowance`]).
    Stall,
    /// The receiver's SACK asked for it (SETH m = ALWAYS_SKIP).
    AlwaysSkip,
    /// A probe on this EV returned.
    ProbeOk,
    /// The control plane denied it.
    Denied,
    /// The control plane lifted a denial.
    Allowed,
    /// A backup EV of the same port took the place of an EV that left
    /// GOOD ([`EvSetConfig::backup_evs`]); the event names the backup.
    Promoted,
}

/// One EV state change, reported to the control plane: MRC 1.0's EV event
/// (profile id, EV value and port, drop count, new state) with the index,
/// the old state and the reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EvStateChange {
    pub at: Instant,
    pub ev_index: u16,
    /// The entropy value.
    pub ev: u32,
    /// The NIC port the EV leaves on ([`EvSetConfig::ports`]).
    pub port: u8,
    /// The EV profile ([`EvSetConfig::profile_id`]).
    pub profile_id: u16,
    /// Packets declared lost on the EV (inferred losses, stalls,
    /// timeouts) since its previous state change.
    pub drops: u32,
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
    /// The EV profile this set belongs to (libmrc's EV profile id), named
    /// in its events.
    #[serde(default)]
    pub profile_id: u16,
    /// The NIC port of each EV (MRC 1.0: "each EV entry names a port"),
    /// as long as `evs`, or empty: every EV on port 0.
    #[serde(default)]
    pub ports: Vec<u8>,
    /// Backup EVs (MRC 1.0: "EVs are replaced from a backup set, from the
    /// same plane"): healthy but unused until an EV of the same port leaves
    /// GOOD, when the first of them takes its place. An EV that becomes
    /// GOOD again while the set already sprays on `evs.len()` EVs joins the
    /// backups. Together with `evs`, at most [`MAX_EVS`].
    #[serde(default)]
    pub backup_evs: Vec<BackupEv>,
}

/// A backup EV and the port it leaves on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BackupEv {
    pub ev: u32,
    pub port: u8,
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
            profile_id: 0,
            ports: Vec::new(),
            backup_evs: Vec::new(),
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
    /// A zero probe interval would re-schedule an unanswered probe at the
    /// very instant it was sent: the probe timer would fire forever.
    #[error("probe_interval must be positive")]
    ProbeInterval,
    /// `ports` names a port per EV or none.
    #[error("{ports} EV ports for {count} EVs (one per EV, or none)")]
    Ports { ports: usize, count: usize },
    /// EVs and backup EVs together exceed [`MAX_EVS`].
    #[error("{evs} EVs and {backups} backup EVs exceed the {MAX_EVS} a set may hold")]
    Backups { evs: usize, backups: usize },
}

/// Counters of an EV set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EvCounters {
    /// Transitions into ASSUMED_BAD.
    pub marked_bad: u64,
    /// ASSUMED_BAD marks refused by the minimum-active guard.
    pub guard_refused: u64,
    /// First stalls of GOOD EVs (suspect, not marked; see [`EvSet::on_stall`]).
    pub stall_suspected: u64,
    /// Transitions back to GOOD after a probe.
    pub readmitted: u64,
    /// Transitions into DENIED.
    pub denied: u64,
    /// Probes requested.
    pub probes: u64,
    /// Probe responses that came back too slowly to re-admit their EV.
    pub probe_slow: u64,
    /// State-change events dropped because the queue was full.
    pub events_dropped: u64,
    /// SKIPs requested (trim NACKs, SACKs with m = SKIP_ONCE).
    pub skipped: u64,
    /// Second stalls of a suspect EV that did not mark it because its path
    /// reported congestion since the first.
    pub stall_congestion_excused: u64,
    /// Backup EVs that took the place of an EV leaving GOOD.
    pub promoted: u64,
    /// ASSUMED_BAD marks and denials that found no backup of the EV's
    /// port while the set had backups of other ports.
    pub no_backup: u64,
}

/// Smallest spraying weight of a GOOD EV (Weighted policy): a GOOD EV
/// always gets at least `W_MIN / sum(w)` of the packets.
pub const W_MIN: f64 = 1.0 / 8.0;
/// Weight penalty per unit of CE-marked fraction.
pub const K_ECN: f64 = 4.0;
/// Weight penalty per unit of relative excess delay `(srtt - base) / base`.
pub const K_DELAY: f64 = 1.0;
/// Weight penalty per unit of loss/trim EWMA.
pub const K_LOSS: f64 = 4.0;
/// EWMA gain of the per-EV statistics (1/8, as TCP's SRTT).
pub const EWMA_GAIN: f64 = 1.0 / 8.0;
/// Stall allowance in units of the set's base RTT (smallest RTT seen): an
/// EV stalls when its oldest unacknowledged packet was sent more than
/// `STALL_RTTS * base` before a packet already acknowledged.
pub const STALL_RTTS: u64 = 2;
/// Gain of the RTT mean-deviation estimate (RFC 6298's beta).
pub const RTTVAR_GAIN: f64 = 1.0 / 4.0;
/// The stall allowance covers the set's RTT spread: at least
/// `srtt + STALL_VAR_K * rttvar - base` (RFC 6298's K = 4).
pub const STALL_VAR_K: f64 = 4.0;
/// Floor of the stall allowance.
pub const STALL_MIN: Duration = Duration::from_us(2);
/// A probe response slower than `SLOW_PROBE_RTTS * base` does not re-admit
/// its EV (the path is alive but persistently slow); it is probed again
/// with backoff.
pub const SLOW_PROBE_RTTS: u64 = 3;
/// Unanswered probes back off up to `probe_interval << PROBE_BACKOFF_MAX_SHIFT`.
pub const PROBE_BACKOFF_MAX_SHIFT: u32 = 4;

/// Recent feedback of one EV (Weighted policy).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EvStats {
    /// EWMA of the CE-marked fraction of acknowledged packets, 0..=1.
    pub ecn: f64,
    /// EWMA of loss/trim events per feedback event, 0..=1.
    pub loss: f64,
    /// Smoothed RTT in picoseconds (0 = no sample yet).
    pub srtt_ps: f64,
}

/// The EV set of one QP.
#[derive(Clone, Debug)]
pub struct EvSet {
    /// The configuration, its EV and port lists moved into `evs` and `ports`.
    cfg: EvSetConfig,
    /// Per port: how many EVs the set sprays on at most (those of
    /// `EvSetConfig::evs` on the port) and how many it sprays on now. A
    /// port's gap is filled only from that port (backups, re-admitted
    /// EVs).
    port_target: Vec<u16>,
    port_sprayed: Vec<u16>,
    /// `cfg.evs` then `cfg.backup_evs`: an EV's index is its place here.
    evs: Vec<u32>,
    /// The port of each EV of `evs` (empty: every EV on port 0).
    ports: Vec<u8>,
    state: Vec<EvState>,
    /// Bit i set iff EV i is a backup: GOOD but not sprayed on (not in
    /// `good_mask`, not counted in `good_n`).
    standby: [u64; 4],
    /// Bit i set iff EV i is GOOD. Plain words, not a `bitvec` array: the
    /// bitvec form (`first_one` over a `BitArray`, with the other bit sets
    /// below) made the model benches execute 14-21% more instructions
    /// (docs/benchmarks.md, "bit sets").
    good_mask: [u64; 4],
    good_n: usize,
    /// Bit i set iff GOOD EV i has stalled once and delivered nothing
    /// since: its next stall marks it ASSUMED_BAD ([`EvSet::on_stall`]).
    suspect: [u64; 4],
    /// Bit i set iff suspect EV i is still to be skipped once by the spray.
    skip: [u64; 4],
    /// The EV's path reported congestion (a trim NACK or a SACK asking to
    /// SKIP it) since its last stall: that stall does not mark it.
    congested: [u64; 4],
    /// Next probe time of each ASSUMED_BAD EV. This and the other per-EV
    /// tables below are allocated on first use (`probe_at`, `probe_tries`,
    /// `bad_since`: the first mark or denial; `stats`: the first feedback;
    /// `weight`, `credit`: Weighted policy only): a QP on a healthy fabric
    /// never needs the probe tables, and one that never sends none of them.
    probe_at: Vec<Option<Instant>>,
    /// Unanswered probes sent on each EV since it was marked.
    probe_tries: Vec<u8>,
    /// Cached minimum of `probe_at`.
    next_probe: Option<Instant>,
    /// When each EV was last marked ASSUMED_BAD (fallback order).
    bad_since: Vec<Instant>,
    /// Per EV, loss events since its last state change (allocated on the
    /// first one: a healthy set never needs it).
    drops: Vec<u32>,
    stats: Vec<EvStats>,
    weight: Vec<f64>,
    credit: Vec<f64>,
    /// Smallest RTT seen on any EV, picoseconds (0 = none yet).
    base_rtt_ps: f64,
    /// EWMA (gain 1/8) of every RTT sample of the set, picoseconds.
    srtt_all_ps: f64,
    /// Mean deviation (gain 1/4, RFC 6298's RTTVAR) of every RTT sample
    /// of the set from `srtt_all_ps`, picoseconds.
    rttvar_all_ps: f64,
    cursor: usize,
    /// The fallback EV while none is GOOD; cleared on every state change.
    fallback_cache: Option<u16>,
    events: VecDeque<EvStateChange>,
    counters: EvCounters,
}

/// One field of an entropy value generated from per-hop masks: `width`
/// bits at bit `shift`, taking the values `lo..=hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EvField {
    pub shift: u8,
    pub width: u8,
    pub lo: u32,
    pub hi: u32,
}

/// Generate up to `count` entropy values from per-hop fields (e.g. 3 bits
/// of plane, 8 bits for the second hop, 4 + 4 bits for the next two) on top
/// of `base`. Values are enumerated in mixed radix with the FIRST field
/// varying fastest, so consecutive EVs differ in the first hop (e.g. the
/// plane) and a prefix of the list spreads over all its values. Fields are
/// clipped to their width; an empty range yields no EVs.
pub fn entropy_from_masks(base: u32, fields: &[EvField], count: usize) -> Vec<u32> {
    let mut ranges = Vec::with_capacity(fields.len());
    let mut total: u64 = 1;
    let mut clear: u32 = 0;
    for f in fields {
        let mask = if f.width >= 32 { u32::MAX } else { (1u32 << f.width) - 1 };
        let hi = f.hi.min(mask);
        if f.lo > hi {
            return Vec::new();
        }
        let span = (hi - f.lo) as u64 + 1;
        total = total.saturating_mul(span);
        clear |= mask.checked_shl(f.shift as u32).unwrap_or(0);
        ranges.push((f.shift as u32, f.lo, span));
    }
    let n = (count as u64).min(total) as usize;
    let mut out = Vec::with_capacity(n);
    for k in 0..n as u64 {
        let mut rest = k;
        let mut v = base & !clear;
        for &(shift, lo, span) in &ranges {
            let digit = (rest % span) as u32;
            rest /= span;
            v |= (lo + digit).checked_shl(shift).unwrap_or(0);
        }
        out.push(v);
    }
    out
}

impl EvSet {
    /// A set with every EV GOOD.
    pub fn new(mut cfg: EvSetConfig) -> Result<EvSet, EvConfigError> {
        let n = cfg.evs.len();
        if n == 0 || n > MAX_EVS {
            return Err(EvConfigError::Count(n));
        }
        if cfg.min_active as usize > n {
            return Err(EvConfigError::MinActive {
                min_active: cfg.min_active,
                count: n,
            });
        }
        if cfg.probe_interval == Duration::ZERO {
            return Err(EvConfigError::ProbeInterval);
        }
        if !cfg.ports.is_empty() && cfg.ports.len() != n {
            return Err(EvConfigError::Ports {
                ports: cfg.ports.len(),
                count: n,
            });
        }
        let backups = cfg.backup_evs.len();
        if n + backups > MAX_EVS {
            return Err(EvConfigError::Backups { evs: n, backups });
        }
        // The lists move into the set's own tables (a QP holds them once).
        let backup = std::mem::take(&mut cfg.backup_evs);
        let mut evs = std::mem::take(&mut cfg.evs);
        evs.extend(backup.iter().map(|b| b.ev));
        let mut ports = std::mem::take(&mut cfg.ports);
        if !ports.is_empty() || backup.iter().any(|b| b.port != 0) {
            ports.resize(n, 0);
            ports.extend(backup.iter().map(|b| b.port));
        }
        let mut standby = [0u64; 4];
        for i in n..n + backups {
            standby[i / 64] |= 1 << (i % 64);
        }
        // The seed de-synchronises QPs: each starts its rotation at a
        // different EV with different initial credits.
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        let cursor = rng.gen_range(0..n);
        let credit: Vec<f64> = (0..n + backups).map(|_| rng.gen::<f64>()).collect();
        let weighted = cfg.policy == SprayPolicy::Weighted;
        let mut good_mask = [0u64; 4];
        for i in 0..n {
            good_mask[i / 64] |= 1 << (i % 64);
        }
        let n_ports = ports.iter().copied().max().map_or(1, |m| m as usize + 1);
        let mut port_target = vec![0u16; n_ports];
        for i in 0..n {
            port_target[ports.get(i).copied().unwrap_or(0) as usize] += 1;
        }
        Ok(EvSet {
            port_sprayed: port_target.clone(),
            port_target,
            evs,
            ports,
            state: vec![EvState::Good; n + backups],
            standby,
            good_mask,
            good_n: n,
            suspect: [0; 4],
            skip: [0; 4],
            congested: [0; 4],
            probe_at: Vec::new(),
            probe_tries: Vec::new(),
            next_probe: None,
            bad_since: Vec::new(),
            drops: Vec::new(),
            stats: Vec::new(),
            weight: if weighted { vec![1.0; n + backups] } else { Vec::new() },
            credit: if weighted { credit } else { Vec::new() },
            base_rtt_ps: 0.0,
            srtt_all_ps: 0.0,
            rttvar_all_ps: 0.0,
            cursor,
            fallback_cache: None,
            events: VecDeque::new(),
            counters: EvCounters::default(),
            cfg,
        })
    }

    /// The configuration, without its lists of EVs and ports (see
    /// [`EvSet::value`], [`EvSet::port`]).
    pub fn config(&self) -> &EvSetConfig {
        &self.cfg
    }

    /// Number of EVs, backups included (EV indices run over `0..len()`).
    pub fn len(&self) -> usize {
        self.state.len()
    }

    /// Always false: a set holds at least one EV.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The entropy value of EV `index`.
    pub fn value(&self, index: u16) -> u32 {
        self.evs[index as usize]
    }

    /// The port of EV `index` ([`EvSetConfig::ports`], [`BackupEv::port`]).
    pub fn port(&self, index: u16) -> u8 {
        self.ports.get(index as usize).copied().unwrap_or(0)
    }

    /// Whether EV `index` is a backup: GOOD, but not sprayed on until it
    /// replaces an EV of its port.
    pub fn is_backup(&self, index: u16) -> bool {
        let i = index as usize;
        i < self.len() && self.standby[i / 64] >> (i % 64) & 1 == 1
    }

    /// How many backup EVs wait.
    pub fn backup_count(&self) -> usize {
        self.standby.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The state of EV `index`.
    pub fn state(&self, index: u16) -> EvState {
        self.state[index as usize]
    }

    /// How many EVs are GOOD and sprayed on (backups not counted).
    pub fn good_count(&self) -> usize {
        self.good_n
    }

    /// Recent feedback statistics of EV `index`: kept under the Weighted
    /// policy, whose weights they drive; under RoundRobin only a
    /// re-admitting probe's RTT is recorded (all zero otherwise).
    pub fn stats(&self, index: u16) -> EvStats {
        self.stats.get(index as usize).copied().unwrap_or_default()
    }

    /// Current spraying weight of EV `index` (Weighted policy), in `[W_MIN, 1]`.
    pub fn weight(&self, index: u16) -> f64 {
        self.weight.get(index as usize).copied().unwrap_or(1.0)
    }

    /// The first GOOD EV at or after `from` (wrapping). Requires good_n > 0.
    #[inline]
    fn next_good(&self, from: usize) -> usize {
        let from = if from >= self.len() { 0 } else { from };
        let mut w = from / 64;
        let bits = self.good_mask[w] & (!0u64 << (from % 64));
        if bits != 0 {
            return w * 64 + bits.trailing_zeros() as usize;
        }
        for _ in 0..4 {
            w = (w + 1) % 4;
            if self.good_mask[w] != 0 {
                return w * 64 + self.good_mask[w].trailing_zeros() as usize;
            }
        }
        unreachable!("next_good with no GOOD EV")
    }

    /// The EV for the next new packet. Never an ASSUMED_BAD or DENIED EV
    /// while a GOOD one exists; if none is GOOD, the least recently marked
    /// ASSUMED_BAD one (a QP never stops sending for lack of paths); if
    /// every EV is DENIED, every EV in turn (the control plane denied all
    /// paths; the QP keeps spreading rather than stopping).
    #[inline]
    pub fn select(&mut self, _now: Instant) -> u16 {
        if self.good_n == 0 {
            return self.fallback();
        }
        match self.cfg.policy {
            SprayPolicy::RoundRobin => loop {
                let i = self.next_good(self.cursor);
                self.cursor = i + 1;
                if self.take_skip(i) {
                    continue;
                }
                return i as u16;
            },
            SprayPolicy::Weighted => loop {
                let i = self.next_good(self.cursor);
                self.cursor = i + 1;
                if self.take_skip(i) {
                    continue;
                }
                let c = self.credit[i] + self.weight[i];
                if c >= 1.0 {
                    self.credit[i] = c - 1.0;
                    return i as u16;
                }
                self.credit[i] = c;
            },
        }
    }

    /// SKIP (once): a suspect EV is passed over by the next visit of the
    /// rotation while another GOOD EV exists.
    #[inline]
    fn take_skip(&mut self, i: usize) -> bool {
        let bit = 1u64 << (i % 64);
        if self.skip[i / 64] & bit == 0 || self.good_n <= 1 {
            return false;
        }
        self.skip[i / 64] &= !bit;
        true
    }

    /// The EV for a retransmission: a GOOD EV other than `avoid` if any.
    pub fn select_other(&mut self, now: Instant, avoid: u16) -> u16 {
        let a = avoid as usize;
        let avoid_good = a < self.len() && self.state[a] == EvState::Good;
        if self.good_n == 0 || (self.good_n == 1 && avoid_good) {
            return self.select(now);
        }
        for k in 0..64 {
            let i = self.select(now);
            if i != avoid && (k >= 32 || !self.is_suspect(i)) {
                return i;
            }
        }
        // Weighted with `avoid` far heavier than the rest: take the next
        // GOOD EV after it directly.
        self.next_good(a + 1) as u16
    }

    /// No GOOD EV: the least recently marked ASSUMED_BAD one (cached until
    /// the next state change, so this is O(1) per packet too), else (all
    /// DENIED) every EV in turn.
    fn fallback(&mut self) -> u16 {
        if let Some(b) = self.fallback_cache {
            return b;
        }
        let mut best: Option<usize> = None;
        for i in 0..self.len() {
            if self.state[i] == EvState::AssumedBad {
                let older = match best {
                    None => true,
                    Some(b) => self.bad_since[i] < self.bad_since[b],
                };
                if older {
                    best = Some(i);
                }
            }
        }
        match best {
            Some(b) => {
                self.fallback_cache = Some(b as u16);
                b as u16
            }
            None => {
                // Everything DENIED.
                let i = self.cursor % self.len();
                self.cursor = i + 1;
                i as u16
            }
        }
    }

    /// The per-EV feedback statistics, allocated on first use.
    fn stats_mut(&mut self, i: usize) -> &mut EvStats {
        if self.stats.is_empty() {
            self.stats = vec![EvStats::default(); self.len()];
        }
        &mut self.stats[i]
    }

    /// The probe tables, allocated on the first mark or denial.
    fn probe_tables(&mut self) {
        if self.probe_at.is_empty() {
            let n = self.len();
            self.probe_at = vec![None; n];
            self.probe_tries = vec![0; n];
            self.bad_since = vec![Instant::ZERO; n];
        }
    }

    fn recompute_weight(&mut self, i: usize) {
        if self.weight.is_empty() {
            // RoundRobin: weights are not used.
            return;
        }
        let s = &self.stats[i];
        let excess = if self.base_rtt_ps > 0.0 && s.srtt_ps > 0.0 {
            ((s.srtt_ps - self.base_rtt_ps) / self.base_rtt_ps).max(0.0)
        } else {
            0.0
        };
        let w = 1.0 / (1.0 + K_ECN * s.ecn + K_DELAY * excess + K_LOSS * s.loss);
        self.weight[i] = w.clamp(W_MIN, 1.0);
    }

    /// Feedback: a packet sent on `index` was acknowledged.
    pub fn on_ack(&mut self, index: u16, _now: Instant, rtt: Option<Duration>, ecn_ce: bool) {
        let i = index as usize;
        if i >= self.len() {
            return;
        }
        if let (Some(r), Some(age)) = (rtt, self.stall_age()) {
            if r <= age {
                // The path delivered promptly: no longer suspect.
                self.suspect[i / 64] &= !(1 << (i % 64));
                self.skip[i / 64] &= !(1 << (i % 64));
                self.congested[i / 64] &= !(1 << (i % 64));
            }
        }
        let r = rtt.map_or(0.0, |r| r.as_ps() as f64);
        if r > 0.0 {
            if self.srtt_all_ps == 0.0 {
                self.srtt_all_ps = r;
                self.rttvar_all_ps = r / 2.0;
            } else {
                self.rttvar_all_ps += RTTVAR_GAIN * ((r - self.srtt_all_ps).abs() - self.rttvar_all_ps);
                self.srtt_all_ps += EWMA_GAIN * (r - self.srtt_all_ps);
            }
            if self.base_rtt_ps == 0.0 || r < self.base_rtt_ps {
                self.base_rtt_ps = r;
            }
        }
        if self.weight.is_empty() {
            // RoundRobin: no per-EV statistics (they only drive weights).
            return;
        }
        let s = self.stats_mut(i);
        s.ecn += EWMA_GAIN * (if ecn_ce { 1.0 } else { 0.0 } - s.ecn);
        s.loss -= EWMA_GAIN * s.loss;
        if r > 0.0 {
            s.srtt_ps = if s.srtt_ps == 0.0 {
                r
            } else {
                s.srtt_ps + EWMA_GAIN * (r - s.srtt_ps)
            };
        }
        self.recompute_weight(i);
    }

    /// A packet on EV `i` was declared lost: counted for its next event.
    fn count_drop(&mut self, i: usize) {
        if self.drops.is_empty() {
            self.drops = vec![0; self.len()];
        }
        self.drops[i] = self.drops[i].saturating_add(1);
    }

    fn note_loss(&mut self, i: usize) {
        if self.weight.is_empty() {
            return;
        }
        let s = self.stats_mut(i);
        s.loss += EWMA_GAIN * (1.0 - s.loss);
        self.recompute_weight(i);
    }

    /// A loss was inferred on `index`. Returns true if the EV became
    /// ASSUMED_BAD (false if already not GOOD or the guard refused).
    pub fn on_loss(&mut self, index: u16, now: Instant) -> bool {
        self.mark_bad(index, now, EvChangeReason::Loss)
    }

    /// Its oldest unacknowledged packets stalled (see [`EvSet::stall_allowance`]).
    /// One stall is not evidence of a failed path (a packet that waited
    /// behind a congested queue looks the same): the first stall of a GOOD
    /// EV makes it *suspect* (a loss for the Weighted policy's statistics,
    /// `stall_suspected` counted) and returns false; a stall of an EV
    /// already suspect, with nothing acknowledged on it in between, marks
    /// it ASSUMED_BAD (reason `Stall`, subject to `min_active`). Any
    /// acknowledgement of a packet sent on the EV clears the suspicion.
    pub fn on_stall(&mut self, index: u16, now: Instant) -> bool {
        let i = index as usize;
        if i >= self.len() {
            return false;
        }
        let bit = 1u64 << (i % 64);
        if self.is_backup(index) {
            // Not sprayed on: a late report about it says nothing now.
            return false;
        }
        if self.state[i] == EvState::Good && self.suspect[i / 64] & bit == 0 {
            self.suspect[i / 64] |= bit;
            self.skip[i / 64] |= bit;
            // Only news after this stall excuses the next one.
            self.congested[i / 64] &= !bit;
            self.counters.stall_suspected += 1;
            self.count_drop(i);
            self.note_loss(i);
            return false;
        }
        if self.state[i] == EvState::Good && self.congested[i / 64] & bit != 0 {
            // Suspect, but its path said it was congested since: a queue,
            // not a failure (MRC 1.0 SKIPs a congested EV). The next stall
            // without fresh news of congestion marks it.
            self.congested[i / 64] &= !bit;
            self.skip[i / 64] |= bit;
            self.counters.stall_congestion_excused += 1;
            self.count_drop(i);
            self.note_loss(i);
            return false;
        }
        self.mark_bad(index, now, EvChangeReason::Stall)
    }

    /// Whether EV `index`'s path reported congestion (a trim NACK or a SACK
    /// asking to SKIP it) since its last stall, prompt delivery or state
    /// change.
    pub fn is_congested(&self, index: u16) -> bool {
        let i = index as usize;
        i < self.len() && self.congested[i / 64] >> (i % 64) & 1 == 1
    }

    /// Whether EV `index` stalled once and has delivered nothing since.
    pub fn is_suspect(&self, index: u16) -> bool {
        let i = index as usize;
        i < self.len() && self.suspect[i / 64] >> (i % 64) & 1 == 1
    }

    /// How much later than a packet already acknowledged another packet may
    /// have been sent before its non-acknowledgement makes its EV stalled:
    /// `max(STALL_MIN, STALL_RTTS * base RTT)`; `None` before the first RTT
    /// sample.
    pub fn stall_allowance(&self) -> Option<Duration> {
        if self.base_rtt_ps <= 0.0 {
            return None;
        }
        let d = Duration::from_ps(self.base_rtt_ps as u64).saturating_mul(STALL_RTTS);
        let spread = self.srtt_all_ps + STALL_VAR_K * self.rttvar_all_ps - self.base_rtt_ps;
        let d = d.max(Duration::from_ps(spread.max(0.0) as u64));
        Some(if d < STALL_MIN { STALL_MIN } else { d })
    }

    /// How old an unacknowledged packet may get before the requester's tail
    /// check declares it lost: `srtt + stall_allowance()`, `srtt` being
    /// the EWMA (gain 1/8) of every RTT sample of the set; `None` before the
    /// first sample.
    pub fn stall_age(&self) -> Option<Duration> {
        let a = self.stall_allowance()?;
        Some(Duration::from_ps(self.srtt_all_ps as u64) + a)
    }

    /// Smallest RTT seen on any EV of the set (`None` before any sample).
    pub fn base_rtt(&self) -> Option<Duration> {
        (self.base_rtt_ps > 0.0).then(|| Duration::from_ps(self.base_rtt_ps as u64))
    }

    /// A retransmission timeout hit a packet sent on `index`.
    pub fn on_timeout(&mut self, index: u16, now: Instant) -> bool {
        self.mark_bad(index, now, EvChangeReason::Timeout)
    }

    /// A trim NACK (not at the last hop) came back for a packet sent on
    /// `index`: congestion on its path, which lowers its weight but does
    /// not mark it bad. (MRC 1.0 also SKIPs it: the MRC model calls
    /// [`EvSet::skip_once`] too; the legacy profile's model does not.)
    pub fn on_trim(&mut self, index: u16, _now: Instant) {
        if (index as usize) < self.len() {
            self.note_loss(index as usize);
        }
    }

    /// The receiver's SACK said m = ALWAYS_SKIP for a packet sent on
    /// `index`: ASSUMED_BAD (subject to `min_active`), as MRC 1.0 has it.
    pub fn on_always_skip(&mut self, index: u16, now: Instant) -> bool {
        self.mark_bad(index, now, EvChangeReason::AlwaysSkip)
    }

    /// SKIP: the next visit of the rotation passes EV `index` over (a trim
    /// NACK, or a SACK with m = SKIP_ONCE). Only a GOOD EV is skipped.
    pub fn skip_once(&mut self, index: u16) {
        let i = index as usize;
        if i < self.len() && self.state[i] == EvState::Good && !self.is_backup(index) {
            self.skip[i / 64] |= 1 << (i % 64);
            self.congested[i / 64] |= 1 << (i % 64);
            self.counters.skipped += 1;
        }
    }

    fn mark_bad(&mut self, index: u16, now: Instant, reason: EvChangeReason) -> bool {
        let i = index as usize;
        if i >= self.len() {
            return false;
        }
        if matches!(
            reason,
            EvChangeReason::Loss | EvChangeReason::Timeout | EvChangeReason::Stall
        ) {
            self.count_drop(i);
        }
        self.note_loss(i);
        if self.state[i] != EvState::Good {
            return false;
        }
        if self.good_n <= self.cfg.min_active as usize
            && !self.is_backup(index)
            && self.backup_of(self.port(index)).is_none()
        {
            self.counters.guard_refused += 1;
            return false;
        }
        self.probe_tables();
        self.set_state(i, EvState::AssumedBad, reason, now);
        self.counters.marked_bad += 1;
        self.bad_since[i] = now;
        self.probe_tries[i] = 0;
        self.set_probe(i, Some(now + self.cfg.probe_interval));
        true
    }

    fn set_probe(&mut self, i: usize, at: Option<Instant>) {
        self.probe_tables();
        let old = self.probe_at[i];
        self.probe_at[i] = at;
        match (at, self.next_probe) {
            (Some(t), Some(m)) if t < m => self.next_probe = Some(t),
            (Some(t), None) => self.next_probe = Some(t),
            _ => {
                if old.is_some() && old == self.next_probe {
                    self.next_probe = self.probe_at.iter().flatten().min().copied();
                }
            }
        }
    }

    /// The first backup EV on `port`.
    fn backup_of(&self, port: u8) -> Option<usize> {
        let mut w = self.standby;
        for (k, word) in w.iter_mut().enumerate() {
            while *word != 0 {
                let i = k * 64 + word.trailing_zeros() as usize;
                *word &= *word - 1;
                if self.port(i as u16) == port {
                    return Some(i);
                }
            }
        }
        None
    }

    fn set_state(&mut self, i: usize, to: EvState, reason: EvChangeReason, at: Instant) {
        let from = self.state[i];
        let bit = 1u64 << (i % 64);
        self.suspect[i / 64] &= !bit;
        self.skip[i / 64] &= !bit;
        self.congested[i / 64] &= !bit;
        let was_backup = self.standby[i / 64] & bit != 0;
        self.standby[i / 64] &= !bit;
        let port = self.port(i as u16) as usize;
        if from == EvState::Good && !was_backup {
            self.good_mask[i / 64] &= !bit;
            self.good_n -= 1;
            self.port_sprayed[port] -= 1;
        }
        if to == EvState::Good {
            if self.port_sprayed[port] >= self.port_target[port] {
                // Every place of its port in the spray is taken: a backup.
                self.standby[i / 64] |= bit;
            } else {
                self.good_mask[i / 64] |= bit;
                self.good_n += 1;
                self.port_sprayed[port] += 1;
            }
        }
        self.state[i] = to;
        self.fallback_cache = None;
        self.push_change(i, from, to, reason, at);
        if from == EvState::Good && to != EvState::Good && !was_backup {
            self.promote_backup(i, at);
        }
    }

    /// EV `gone` left the spray: the first backup of its port takes its
    /// place (an event with reason `Promoted` names it).
    fn promote_backup(&mut self, gone: usize, at: Instant) {
        if self.backup_count() == 0 {
            return;
        }
        let same_port = self.backup_of(self.port(gone as u16));
        if same_port.is_none() && self.backup_count() > 0 {
            self.counters.no_backup += 1;
        }
        // No backup on the port: the set sprays on fewer EVs, unless it
        // has none left, when a backup of any port beats an ASSUMED_BAD
        // fallback (a QP never stops sending for lack of paths).
        let any_port = || {
            (0..4)
                .find(|&k| self.standby[k] != 0)
                .map(|k| k * 64 + self.standby[k].trailing_zeros() as usize)
        };
        let Some(j) = same_port.or_else(|| if self.good_n == 0 { any_port() } else { None }) else {
            return;
        };
        let bit = 1u64 << (j % 64);
        self.standby[j / 64] &= !bit;
        // Whatever a backup picked up while it waited does not follow it.
        self.suspect[j / 64] &= !bit;
        self.skip[j / 64] &= !bit;
        self.congested[j / 64] &= !bit;
        self.good_mask[j / 64] |= bit;
        self.good_n += 1;
        let port = self.port(j as u16) as usize;
        self.port_sprayed[port] += 1;
        self.counters.promoted += 1;
        self.push_change(j, EvState::Good, EvState::Good, EvChangeReason::Promoted, at);
    }

    /// Queue an EV event (counted in `events_dropped` when the queue is full).
    fn push_change(&mut self, i: usize, from: EvState, to: EvState, reason: EvChangeReason, at: Instant) {
        let drops = self.drops.get_mut(i).map_or(0, std::mem::take);
        if self.events.len() >= self.cfg.event_queue_len {
            self.counters.events_dropped += 1;
        } else {
            self.events.push_back(EvStateChange {
                at,
                ev_index: i as u16,
                ev: self.evs[i],
                port: self.port(i as u16),
                profile_id: self.cfg.profile_id,
                drops,
                from,
                to,
                reason,
            });
        }
    }

    fn reset_stats(&mut self, i: usize, rtt: Option<Duration>) {
        *self.stats_mut(i) = EvStats {
            srtt_ps: rtt.map_or(0.0, |r| r.as_ps() as f64),
            ..EvStats::default()
        };
        if let Some(c) = self.credit.get_mut(i) {
            *c = 0.0;
        }
        self.recompute_weight(i);
    }

    /// An ASSUMED_BAD EV whose probe is due at `now`, if any; the caller
    /// sends a probe on it. The earliest due EV comes first (ties: lowest
    /// index); it is rescheduled `probe_interval * 2^k` later, k being the
    /// number of its probes so far (capped at 2^PROBE_BACKOFF_MAX_SHIFT), so
    /// an unanswered probe is retried with backoff.
    pub fn probe_due(&mut self, now: Instant) -> Option<u16> {
        match self.next_probe {
            Some(t) if t <= now => {}
            _ => return None,
        }
        let mut best: Option<(Instant, usize)> = None;
        for (i, t) in self.probe_at.iter().enumerate() {
            if let Some(t) = *t {
                let earlier = match best {
                    None => true,
                    Some((bt, _)) => t < bt,
                };
                if t <= now && earlier {
                    best = Some((t, i));
                }
            }
        }
        let (_, i) = best?;
        self.probe_tries[i] = self.probe_tries[i].saturating_add(1);
        let shift = (self.probe_tries[i] as u32).min(PROBE_BACKOFF_MAX_SHIFT);
        self.set_probe(i, Some(now + self.cfg.probe_interval.saturating_mul(1 << shift)));
        self.counters.probes += 1;
        Some(i as u16)
    }

    /// When the next probe falls due (O(1)).
    pub fn next_probe_deadline(&self) -> Option<Instant> {
        self.next_probe
    }

    /// A probe on `index` returned: re-admit it (GOOD), its statistics
    /// reset with the probe RTT as its first sample. Ignored unless the EV
    /// is ASSUMED_BAD (a late probe for a DENIED or already GOOD EV). A
    /// probe RTT above `SLOW_PROBE_RTTS` times the set's base RTT does not
    /// re-admit: the EV stays ASSUMED_BAD and its next probe (already
    /// scheduled with backoff) tries again (`probe_slow`).
    pub fn on_probe_response(&mut self, index: u16, now: Instant, rtt: Duration) {
        let i = index as usize;
        if i < self.len() && self.state[i] == EvState::AssumedBad {
            if self.base_rtt_ps > 0.0 && rtt.as_ps() as f64 > self.base_rtt_ps * SLOW_PROBE_RTTS as f64 {
                self.counters.probe_slow += 1;
                return;
            }
            self.set_probe(i, None);
            self.probe_tries[i] = 0;
            self.set_state(i, EvState::Good, EvChangeReason::ProbeOk, now);
            self.reset_stats(i, Some(rtt));
            self.counters.readmitted += 1;
        }
    }

    /// Control plane: deny every EV whose value matches `value` under `mask`.
    /// Returns how many changed. Not subject to `min_active`: the control
    /// plane wins, even if that leaves no GOOD EV (then `select` falls back
    /// to ASSUMED_BAD EVs, see [`EvSet::select`]).
    pub fn deny(&mut self, mask: u32, value: u32, now: Instant) -> usize {
        self.deny_where(now, |ev, _| ev & mask == value & mask)
    }

    /// Deny every EV on NIC port `port` (its link is down: MRC 1.0's port
    /// status). Returns how many changed.
    pub fn deny_port(&mut self, port: u8, now: Instant) -> usize {
        self.deny_where(now, |_, p| p == port)
    }

    /// Lift the denial of every EV on `port` (its link is back).
    pub fn allow_port(&mut self, port: u8, now: Instant) -> usize {
        self.allow_where(now, |_, p| p == port)
    }

    fn deny_where(&mut self, now: Instant, matches: impl Fn(u32, u8) -> bool) -> usize {
        let mut n = 0;
        for i in 0..self.len() {
            if matches(self.evs[i], self.port(i as u16)) && self.state[i] != EvState::Denied {
                self.set_probe(i, None);
                self.probe_tries[i] = 0;
                self.set_state(i, EvState::Denied, EvChangeReason::Denied, now);
                self.counters.denied += 1;
                n += 1;
            }
        }
        n
    }

    /// Control plane: lift the denial of matching EVs (they become GOOD,
    /// with fresh statistics).
    pub fn allow(&mut self, mask: u32, value: u32, now: Instant) -> usize {
        self.allow_where(now, |ev, _| ev & mask == value & mask)
    }

    fn allow_where(&mut self, now: Instant, matches: impl Fn(u32, u8) -> bool) -> usize {
        let mut n = 0;
        for i in 0..self.len() {
            if matches(self.evs[i], self.port(i as u16)) && self.state[i] == EvState::Denied {
                self.set_state(i, EvState::Good, EvChangeReason::Allowed, now);
                self.reset_stats(i, None);
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
