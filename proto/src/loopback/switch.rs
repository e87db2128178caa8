//! A trimming switch's egress port on a link's way: the receiver's last
//! hop, where an incast builds its queue.
//!
//! Data packets queue in bytes and leave at the port's rate. A data packet
//! arriving while the queue holds more than [`SwitchQueue::ecn_threshold_bytes`]
//! is marked ECN-CE; one that would take it beyond
//! [`SwitchQueue::capacity_bytes`] is trimmed to its headers when its class
//! allows (and dropped otherwise, e.g. MRC 1.0's NO_TRIM). Trimmed headers
//! and control packets (ACKs, SACKs, NACKs, probes) take the port's
//! priority queue: they leave after their own serialisation, not behind
//! the data (as NDP and UET switches serve them).
//!
//! The port decides from the time a packet reaches it and its size only,
//! so the golden model's runner ([`super::runner`]) and the co-simulated
//! fabric (`cosim::fabric`), which read their packets differently, make
//! the same decision from the same inputs: both call
//! [`SwitchPort::admit`].

use crate::time::{Duration, Instant};
use crate::wire::Packet;

/// A trimming switch's egress port ([`super::LinkConfig::switch`]).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SwitchQueue {
    /// The port's rate, Gb/s. Below the link's line rate, it is the
    /// bottleneck of an incast: N senders at the line rate into one port
    /// look to the port as one sender at N times its rate.
    pub rate_gbps: f64,
    /// Queued bytes above which an arriving data packet is marked ECN-CE.
    pub ecn_threshold_bytes: u64,
    /// Bytes the data queue holds: a data packet that does not fit is
    /// trimmed (or dropped when its class forbids trimming).
    pub capacity_bytes: u64,
    /// The port leads to the destination host, so every path to it shares
    /// the congestion: MRC 1.0 trims to class TRIMMED_LASTHOP (the legacy
    /// profile has one trimmed class).
    pub last_hop: bool,
}

/// What the port does with one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchVerdict {
    /// It leaves the port at `depart`, ECN-CE marked when `mark_ce`.
    Forward { depart: Instant, mark_ce: bool },
    /// Its payload is cut; its headers leave at `depart` (priority queue).
    Trim { depart: Instant },
    /// The queue is full and the packet may not be trimmed.
    Drop,
}

/// What a packet is to the port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    /// A data packet whose class allows trimming.
    TrimmableData,
    /// A data packet that may not be trimmed (MRC 1.0's NO_TRIM class, or
    /// one already trimmed upstream).
    Data,
    /// Everything else: served by the priority queue.
    Control,
}

impl PacketKind {
    /// What `pkt` is to a switch port: data with payload queues, and is
    /// trimmable as its class says; the rest is control.
    pub fn of(pkt: &Packet) -> PacketKind {
        if pkt.trimmable() {
            PacketKind::TrimmableData
        } else if pkt.is_data() && !pkt.payload().is_empty() {
            PacketKind::Data
        } else {
            PacketKind::Control
        }
    }
}

/// Bits per byte (rates are in Gb/s, queues in bytes).
const BITS_PER_BYTE: f64 = 8.0;
/// Picoseconds per nanosecond: Gb/s are bits per ns.
const PS_PER_NS: f64 = 1000.0;

/// The port's state: its configuration and when its data queue empties.
#[derive(Clone, Debug)]
pub struct SwitchPort {
    cfg: SwitchQueue,
    /// The last queued data byte leaves at this time.
    free_at: Instant,
}

impl SwitchPort {
    /// An empty port.
    pub fn new(cfg: SwitchQueue) -> SwitchPort {
        SwitchPort {
            cfg,
            free_at: Instant::ZERO,
        }
    }

    /// The port's configuration.
    pub fn config(&self) -> &SwitchQueue {
        &self.cfg
    }

    /// Bytes in the data queue at `at`: what is left to serialise of the
    /// packets queued before.
    pub fn queued_bytes(&self, at: Instant) -> u64 {
        let backlog_ps = self.free_at.as_ps().saturating_sub(at.as_ps());
        (backlog_ps as f64 * self.cfg.rate_gbps / BITS_PER_BYTE / PS_PER_NS) as u64
    }

    /// Admit a packet of `bytes` on the wire reaching the port at `at`
    /// (after the links before it); `trimmed_bytes` is what is left of it
    /// when trimmed.
    pub fn admit(&mut self, at: Instant, bytes: u64, trimmed_bytes: u64, kind: PacketKind) -> SwitchVerdict {
        let priority = |len: u64| at + Duration::serialisation(len, self.cfg.rate_gbps);
        if kind == PacketKind::Control {
            return SwitchVerdict::Forward {
                depart: priority(bytes),
                mark_ce: false,
            };
        }
        let queued = self.queued_bytes(at);
        if queued + bytes > self.cfg.capacity_bytes {
            return match kind {
                PacketKind::TrimmableData => SwitchVerdict::Trim {
                    depart: priority(trimmed_bytes),
                },
                _ => SwitchVerdict::Drop,
            };
        }
        let start = self.free_at.max(at);
        self.free_at = start + Duration::serialisation(bytes, self.cfg.rate_gbps);
        SwitchVerdict::Forward {
            depart: self.free_at,
            mark_ce: queued > self.cfg.ecn_threshold_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PORT: SwitchQueue = SwitchQueue {
        rate_gbps: 25.0,
        ecn_threshold_bytes: 4_000,
        capacity_bytes: 10_000,
        last_hop: true,
    };

    #[test]
    fn data_queues_at_the_port_rate_then_is_marked_then_trimmed() {
        let mut p = SwitchPort::new(PORT);
        let t = Instant::from_us(1);
        // 1,000 bytes at 25 Gb/s: 320 ns each, all arriving at once.
        let mut verdicts = Vec::new();
        for _ in 0..12 {
            verdicts.push(p.admit(t, 1_000, 100, PacketKind::TrimmableData));
        }
        for (i, v) in verdicts.iter().enumerate().take(10) {
            let depart = t + Duration::from_ns(320 * (i as u64 + 1));
            // Queued ahead of packet i: i x 1,000 bytes; marked above 4,000.
            assert_eq!(
                *v,
                SwitchVerdict::Forward {
                    depart,
                    mark_ce: i * 1_000 > 4_000
                },
                "packet {i}"
            );
        }
        // The 11th and 12th do not fit in 10,000 bytes: trimmed, and their
        // 100 header bytes leave after 32 ns, ahead of the queue.
        assert_eq!(
            verdicts[10],
            SwitchVerdict::Trim {
                depart: t + Duration::from_ns(32)
            }
        );
        assert_eq!(verdicts[11], verdicts[10]);
        // Untrimmable data is dropped instead; control passes.
        assert_eq!(p.admit(t, 1_000, 100, PacketKind::Data), SwitchVerdict::Drop);
        assert_eq!(
            p.admit(t, 100, 100, PacketKind::Control),
            SwitchVerdict::Forward {
                depart: t + Duration::from_ns(32),
                mark_ce: false
            }
        );
        // Once the queue drained, a packet passes unmarked.
        let later = t + Duration::from_us(10);
        assert_eq!(p.queued_bytes(later), 0);
        assert_eq!(
            p.admit(later, 1_000, 100, PacketKind::TrimmableData),
            SwitchVerdict::Forward {
                depart: later + Duration::from_ns(320),
                mark_ce: false
            }
        );
    }
}
