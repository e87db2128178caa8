//! One direction of a loopback run's link: its configuration resolved
//! against the EV set (blackholed, flapping and degraded EVs by entropy
//! value), its serialisation queue, its switch port, what it did ([`LinkStats`]) and the
//! count of carriages that keyed loss needs. The runner
//! ([`super::runner`]) applies it to every packet; the pairs of a
//! multi-pair run share the two links.

use super::switch::SwitchPort;
use super::{keyed_loss, Dir, EvMatch, Flap, LinkConfig, LinkStats};
use crate::time::Instant;
use crate::wire::Packet;

/// One direction of the link, as a run applies it.
pub(super) struct Link {
    pub(super) cfg: LinkConfig,
    /// Entropy values blackholed and since when.
    pub(super) holes: Vec<(u32, Instant)>,
    /// Flapping EVs, each with its entropy value.
    pub(super) flaps: Vec<(u32, Flap)>,
    /// Degraded EVs: entropy value, rate factor, their path's queue.
    pub(super) degraded: Vec<(u32, f64, Instant)>,
    pub(super) free_at: Instant,
    /// The switch port at the link's end, if any.
    pub(super) switch: Option<SwitchPort>,
    pub(super) stats: LinkStats,
    /// Times each (opcode, PSN) was carried (for `LinkConfig::loss_keyed`).
    seen: std::collections::HashMap<(u8, u32), u32>,
}

impl Link {
    pub(super) fn new(cfg: &LinkConfig, evs: &[u32]) -> Link {
        let value = |m: EvMatch| match m {
            EvMatch::Index(i) => evs.get(i as usize).copied().unwrap_or(u32::MAX),
            EvMatch::Value(v) => v,
        };
        let holes = cfg.blackholes.iter().map(|&(m, t)| (value(m), t)).collect();
        let flaps = cfg.flaps.iter().map(|&f| (value(f.ev), f)).collect();
        let degraded = cfg
            .degraded
            .iter()
            .map(|&(m, f)| (value(m), f, Instant::ZERO))
            .collect();
        Link {
            cfg: cfg.clone(),
            holes,
            flaps,
            degraded,
            free_at: Instant::ZERO,
            switch: cfg.switch.map(SwitchPort::new),
            stats: LinkStats::default(),
            seen: std::collections::HashMap::new(),
        }
    }

    /// The keyed loss decision of `pkt` on this link (counts the packet).
    pub(super) fn keyed_loss(&mut self, seed: u64, dir: Dir, pkt: &Packet) -> bool {
        let key = (pkt.opcode_byte(), pkt.psn().value());
        let nth = self.seen.entry(key).or_insert(0);
        *nth += 1;
        keyed_loss(seed, dir, key.0, key.1, *nth, self.cfg.loss)
    }
}
