//! The simulated multipath fabric between two NICs' MAC ports, stepped in
//! clock cycles of the core.
//!
//! Time: the core's `now` advances 99/32 ns (3,093.75 ps) per cycle (its
//! CMAC clock is 322 MHz); the fabric keeps the golden model's integer
//! picoseconds and converts once, with [`cycles_to_ps`] and
//! [`ps_to_cycles`] (a frame is due in the first cycle at or after its
//! arrival time).
//!
//! Each direction ([`FabricLink`]) takes the frames one NIC's MAC TX
//! produced, maps each to a path by its EV (the UDP source port, read from
//! the headers; a frame that does not parse goes on path 0) and applies
//! the semantics of [`proto::loopback::LinkConfig`], the very type the
//! golden model's scenario runner uses, in the runner's order:
//! serialisation at the line rate, blackhole (from a set time on, the EV
//! drops everything), loss (random, or keyed by the packet with
//! [`proto::loopback::keyed_loss`] so both simulators lose the same
//! packets), then delivery after `base_delay + ev_extra_delay(ev) +
//! uniform jitter`. Duplication and corruption are not modelled here (the
//! RTL's receive side is tested against them elsewhere): a link with them
//! set is refused by [`FabricLink::new`].

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use proto::loopback::{keyed_loss, Dir, EvMatch, LinkConfig, WIRE_OVERHEAD};
use proto::time::Duration;

use crate::axis::AxisSource;
use crate::rng::Rng;

/// Picoseconds of `cycles` clock cycles (99/32 ns each).
pub fn cycles_to_ps(cycles: u64) -> u64 {
    cycles * 99_000 / 32
}

/// The first cycle at or after `ps`.
pub fn ps_to_cycles(ps: u64) -> u64 {
    (ps * 32).div_ceil(99_000)
}

/// Per-path counters of one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PathStats {
    pub sent: u64,
    pub delivered: u64,
    pub lost: u64,
    pub blackholed: u64,
}

/// A link the fabric cannot model.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FabricError {
    #[error("the fabric does not model {0} (set it to 0)")]
    Unsupported(&'static str),
    #[error("loss probability {0} outside [0, 1)")]
    Loss(f64),
    #[error("a fabric needs 1 to 128 paths, got {0}")]
    Paths(usize),
}

/// What the light header read found in a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameKey {
    /// UDP source port: the EV value.
    pub ev: u32,
    pub opcode: u8,
    pub psn: u32,
}

/// Read the EV, BTH opcode and PSN of an Ethernet / IPv4-or-IPv6 / UDP /
/// BTH frame without checking anything else (the receiving NIC does).
pub fn frame_key(frame: &[u8]) -> Option<FrameKey> {
    let ethertype = u16::from_be_bytes([*frame.get(12)?, *frame.get(13)?]);
    let udp = match ethertype {
        0x0800 => {
            let ihl = usize::from(frame.get(14)? & 0x0F) * 4;
            if ihl < 20 || *frame.get(23)? != 17 {
                return None;
            }
            14 + ihl
        }
        0x86DD => {
            if *frame.get(20)? != 17 {
                return None;
            }
            14 + 40
        }
        _ => return None,
    };
    let ev = u32::from(u16::from_be_bytes([*frame.get(udp)?, *frame.get(udp + 1)?]));
    let bth = udp + 8;
    let opcode = *frame.get(bth)?;
    let psn = u32::from_be_bytes([0, *frame.get(bth + 9)?, *frame.get(bth + 10)?, *frame.get(bth + 11)?]);
    Some(FrameKey { ev, opcode, psn })
}

/// One direction of the fabric.
pub struct FabricLink {
    cfg: LinkConfig,
    dir: Dir,
    seed: u64,
    /// Path `i` carries EV value `paths[i]`.
    paths: Vec<u32>,
    /// (path, from this time on in ps) it drops everything.
    holes: Vec<(usize, u64)>,
    /// The random draws (jitter, and loss unless keyed).
    rng: Rng,
    free_at_ps: u64,
    /// Times each (opcode, PSN) reached the loss decision (keyed loss).
    seen: HashMap<(u8, u32), u32>,
    queue: BinaryHeap<Reverse<(u64, u64)>>,
    /// Frames in flight by sequence number, with their path.
    in_flight: HashMap<u64, (usize, Vec<u8>)>,
    seq: u64,
    /// Counters per path.
    pub stats: Vec<PathStats>,
    /// Frames without a readable EV (sent on path 0).
    pub unparsed: u64,
}

impl FabricLink {
    /// A direction whose paths carry the EV values `paths` (a blackhole's
    /// [`EvMatch::Index`] is an index in it); `dir` and `seed` key the
    /// loss decisions.
    pub fn new(cfg: &LinkConfig, dir: Dir, paths: Vec<u32>, seed: u64) -> Result<FabricLink, FabricError> {
        if cfg.duplicate > 0.0 {
            return Err(FabricError::Unsupported("duplication"));
        }
        if cfg.corrupt > 0.0 {
            return Err(FabricError::Unsupported("corruption"));
        }
        if !(0.0..1.0).contains(&cfg.loss) {
            return Err(FabricError::Loss(cfg.loss));
        }
        if paths.is_empty() || paths.len() > 128 {
            return Err(FabricError::Paths(paths.len()));
        }
        let holes = cfg
            .blackholes
            .iter()
            .filter_map(|&(m, at)| {
                let path = match m {
                    EvMatch::Index(i) => usize::from(i),
                    EvMatch::Value(v) => paths.iter().position(|&p| p == v)?,
                };
                (path < paths.len()).then_some((path, at.as_ps()))
            })
            .collect();
        let n = paths.len();
        let tag = match dir {
            Dir::AtoB => 1,
            Dir::BtoA => 2,
        };
        Ok(FabricLink {
            cfg: cfg.clone(),
            dir,
            seed,
            paths,
            holes,
            rng: Rng::new(seed.wrapping_mul(31).wrapping_add(tag)),
            free_at_ps: 0,
            seen: HashMap::new(),
            queue: BinaryHeap::new(),
            in_flight: HashMap::new(),
            seq: 0,
            stats: vec![PathStats::default(); n],
            unparsed: 0,
        })
    }

    /// Path of a frame (0 when it does not parse or its EV is unknown).
    pub fn path_of(&self, key: Option<FrameKey>) -> usize {
        key.and_then(|k| self.paths.iter().position(|&p| p == k.ev)).unwrap_or(0)
    }

    /// Frames in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Take a frame that left the sender's MAC at `cycle`.
    pub fn send(&mut self, cycle: u64, frame: Vec<u8>) {
        let key = frame_key(&frame);
        if key.is_none() {
            self.unparsed += 1;
        }
        let path = self.path_of(key);
        self.stats[path].sent += 1;
        let now = cycles_to_ps(cycle);
        let mut depart = now;
        if let Some(gbps) = self.cfg.line_rate_gbps {
            // The model serialises payload + WIRE_OVERHEAD bytes (an
            // estimate of the headers); here the real frame is at hand.
            let bytes = frame.len() as u64;
            let start = self.free_at_ps.max(now);
            depart = start + Duration::serialisation(bytes.max(WIRE_OVERHEAD), gbps).as_ps();
            self.free_at_ps = depart;
        }
        if self.holes.iter().any(|&(p, t)| p == path && depart >= t) {
            self.stats[path].blackholed += 1;
            return;
        }
        let lost = if self.cfg.loss_keyed {
            let k = key.map_or((0, 0), |k| (k.opcode, k.psn));
            let nth = self.seen.entry(k).or_insert(0);
            *nth += 1;
            keyed_loss(self.seed, self.dir, k.0, k.1, *nth, self.cfg.loss)
        } else {
            self.cfg.loss > 0.0 && (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= self.cfg.loss
        };
        if lost {
            self.stats[path].lost += 1;
            return;
        }
        let ev = self.paths[path];
        let jitter = self.cfg.jitter.as_ps();
        let jitter = if jitter > 0 { self.rng.below(jitter) } else { 0 };
        let arrive = depart + self.cfg.base_delay.as_ps() + self.cfg.ev_extra_delay(ev).as_ps() + jitter;
        self.seq += 1;
        self.queue.push(Reverse((ps_to_cycles(arrive), self.seq)));
        self.in_flight.insert(self.seq, (path, frame));
    }

    /// Hand every frame due at or before `cycle` to the receiver's MAC RX.
    pub fn deliver(&mut self, cycle: u64, rx: &mut AxisSource) {
        while let Some(&Reverse((due, seq))) = self.queue.peek() {
            if due > cycle {
                break;
            }
            self.queue.pop();
            if let Some((path, frame)) = self.in_flight.remove(&seq) {
                self.stats[path].delivered += 1;
                rx.push(frame);
            }
        }
    }

    /// Sum of the per-path counters.
    pub fn total(&self) -> PathStats {
        self.stats.iter().fold(PathStats::default(), |a, s| PathStats {
            sent: a.sent + s.sent,
            delivered: a.delivered + s.delivered,
            lost: a.lost + s.lost,
            blackholed: a.blackholed + s.blackholed,
        })
    }
}

/// Both directions.
pub struct Fabric {
    /// NIC A (requester) to NIC B.
    pub ab: FabricLink,
    /// NIC B to NIC A (the ACKs).
    pub ba: FabricLink,
}

impl Fabric {
    pub fn new(ab: &LinkConfig, ba: &LinkConfig, paths: &[u32], seed: u64) -> Result<Fabric, FabricError> {
        Ok(Fabric {
            ab: FabricLink::new(ab, Dir::AtoB, paths.to_vec(), seed)?,
            ba: FabricLink::new(ba, Dir::BtoA, paths.to_vec(), seed)?,
        })
    }

    pub fn in_flight(&self) -> usize {
        self.ab.in_flight() + self.ba.in_flight()
    }
}
