//! Faults on a schedule: link down/up, periodic flap, degraded rate,
//! random loss, and a silent blackhole of one switch egress port.

use proto::time::{Duration, Instant};

use super::topo::{NodeId, PortId};

/// A link, named by one of its ends. Link-level faults act on both
/// directions; [`FaultKind::Blackhole`] acts on this end's egress only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LinkRef {
    pub node: NodeId,
    pub port: PortId,
}

/// What happens.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum FaultKind {
    /// Both directions drop everything from now on (the packet being
    /// serialised and everything queued or sent later).
    Down,
    /// Back up.
    Up,
    /// Down for `down_for` every `period`, starting at the fault time,
    /// until `until`.
    Flap {
        period: Duration,
        down_for: Duration,
        until: Instant,
    },
    /// Both directions run at `factor` x their rate (e.g. 0.25).
    Degrade { factor: f64 },
    /// Both directions lose each packet with probability `rate`.
    Loss { rate: f64 },
    /// This end's egress silently drops everything while routing keeps
    /// using it (never rerouted around).
    Blackhole,
    /// Undo degrade, loss and blackhole on this link.
    Restore,
}

/// A fault at an instant.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fault {
    pub at: Instant,
    pub link: LinkRef,
    pub kind: FaultKind,
}

/// A primitive action after expanding flaps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Action {
    Down,
    Up,
    Degrade(f64),
    Loss(f64),
    Blackhole,
    Restore,
    /// Routing excludes this link (the `reroute_after` delay has passed
    /// and it is still down).
    Reroute,
}

/// Expand a schedule into primitive actions, sorted by time (stable).
pub(crate) fn expand(faults: &[Fault], reroute_after: Option<Duration>) -> Vec<(Instant, LinkRef, Action)> {
    let mut v = Vec::new();
    for f in faults {
        match f.kind {
            FaultKind::Down => {
                v.push((f.at, f.link, Action::Down));
                if let Some(d) = reroute_after {
                    v.push((f.at + d, f.link, Action::Reroute));
                }
            }
            FaultKind::Up => v.push((f.at, f.link, Action::Up)),
            FaultKind::Flap {
                period,
                down_for,
                until,
            } => {
                let mut t = f.at;
                while t < until && period > Duration::ZERO {
                    v.push((t, f.link, Action::Down));
                    if let Some(d) = reroute_after.filter(|&d| d < down_for) {
                        v.push((t + d, f.link, Action::Reroute));
                    }
                    v.push((t + down_for, f.link, Action::Up));
                    t += period;
                }
            }
            FaultKind::Degrade { factor } => v.push((f.at, f.link, Action::Degrade(factor))),
            FaultKind::Loss { rate } => v.push((f.at, f.link, Action::Loss(rate))),
            FaultKind::Blackhole => v.push((f.at, f.link, Action::Blackhole)),
            FaultKind::Restore => v.push((f.at, f.link, Action::Restore)),
        }
    }
    v.sort_by_key(|e| e.0);
    v
}
