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
//! packets), the switch port at the link's end if any
//! ([`proto::loopback::switch`]: the same decisions as the runner's, the
//! frame ECN-marked in place or trimmed and re-emitted), then delivery
//! after `base_delay + ev_extra_delay(ev) + uniform jitter`. Duplication and corruption are not modelled here (the
//! RTL's receive side is tested against them elsewhere): a link with them
//! set is refused by [`FabricLink::new`].

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use proto::loopback::switch::{PacketKind, SwitchPort, SwitchVerdict};
use proto::loopback::{keyed_loss, Dir, EvMatch, Flap, LinkConfig, WIRE_OVERHEAD};
use proto::time::{Duration, Instant};
use proto::wire::mrc10::Profile;
use proto::wire::{mark_ce_in_frame, trim_frame_of_either, Packet};

use tb::axis::AxisSource;
use tb::rng::Rng;

/// What an Ethernet frame costs the line beyond the bytes the MAC streams
/// (the frame without its FCS): the FCS (4), the preamble and start
/// delimiter (8) and the minimum inter-frame gap (12). Serialising only
/// the streamed bytes let a 100 Gb/s path carry about 0.6% more 4 KiB
/// frames than 100 GbE does (`mrc perf` measured 1.003 of the wire limit).
pub const LINE_BYTES_PER_FRAME: u64 = 4 + 8 + 12;

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
    /// Frames the switch port trimmed to their headers.
    pub trimmed: u64,
    /// Frames the switch port marked ECN-CE.
    pub ecn_marked: u64,
    /// Frames the full switch port dropped (not trimmable).
    pub switch_dropped: u64,
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
    /// BTH destination QP (24 bits).
    pub dest_qp: u32,
    pub psn: u32,
}

/// Read the EV, BTH opcode, destination QP and PSN of an Ethernet / IPv4-or-IPv6 / UDP /
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
    // The EV: the UDP source port, and over IPv6 the flow label's low 16
    // bits as bits 31-16 (`proto::wire::mrc10::choices::ev_from_wire`).
    let port = u32::from(u16::from_be_bytes([*frame.get(udp)?, *frame.get(udp + 1)?]));
    let ev = if ethertype == 0x86DD {
        let flow_lo = u32::from(u16::from_be_bytes([*frame.get(16)?, *frame.get(17)?]));
        flow_lo << 16 | port
    } else {
        port
    };
    let bth = udp + 8;
    let opcode = *frame.get(bth)?;
    let dest_qp = u32::from_be_bytes([0, *frame.get(bth + 5)?, *frame.get(bth + 6)?, *frame.get(bth + 7)?]);
    let psn = u32::from_be_bytes([0, *frame.get(bth + 9)?, *frame.get(bth + 10)?, *frame.get(bth + 11)?]);
    Some(FrameKey {
        ev,
        opcode,
        dest_qp,
        psn,
    })
}

/// What a MAC lets wait for the wire when it takes the next frame: one
/// jumbo frame's time (9,216 bytes at the line rate), counted from the
/// end of everything already handed to the link, the frame on the wire
/// included. A 100 GbE MAC's transmit FIFO holds the next frame while one
/// leaves, so the wire stays busy, and little more. The golden model's
/// paced runs use the same allowance (`proto::loopback::Scenario::paced`).
pub const MAC_TX_BACKLOG_BYTES: u64 = proto::loopback::PACED_BACKLOG_BYTES;

/// One direction of the fabric.
pub struct FabricLink {
    cfg: LinkConfig,
    dir: Dir,
    seed: u64,
    /// Path `i` carries EV value `paths[i]`.
    paths: Vec<u32>,
    /// (path, from this time on in ps) it drops everything.
    holes: Vec<(usize, u64)>,
    /// Flapping paths (by path index).
    flaps: Vec<(usize, Flap)>,
    /// Degraded paths: path, rate factor, the path's queue (ps).
    degraded: Vec<(usize, f64, u64)>,
    /// The random draws (jitter, and loss unless keyed).
    rng: Rng,
    free_at_ps: u64,
    /// The switch port at the link's end, if any.
    switch: Option<SwitchPort>,
    /// Frames the switch could not mark or trim (not a frame of either
    /// dialect the golden parsers read): forwarded as they were.
    pub switch_unreadable: u64,
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
        if cfg.degraded.iter().any(|&(_, f)| !(f > 0.0 && f <= 1.0)) {
            return Err(FabricError::Unsupported("a degrade factor outside (0, 1]"));
        }
        if paths.is_empty() || paths.len() > 128 {
            return Err(FabricError::Paths(paths.len()));
        }
        let path_of = |m: EvMatch| {
            let path = match m {
                EvMatch::Index(i) => usize::from(i),
                EvMatch::Value(v) => paths.iter().position(|&p| p == v)?,
            };
            (path < paths.len()).then_some(path)
        };
        let holes = cfg
            .blackholes
            .iter()
            .filter_map(|&(m, at)| Some((path_of(m)?, at.as_ps())))
            .collect();
        let flaps = cfg.flaps.iter().filter_map(|&f| Some((path_of(f.ev)?, f))).collect();
        let degraded = cfg
            .degraded
            .iter()
            .filter_map(|&(m, f)| Some((path_of(m)?, f, 0)))
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
            flaps,
            degraded,
            rng: Rng::new(seed.wrapping_mul(31).wrapping_add(tag)),
            free_at_ps: 0,
            switch: cfg.switch.map(SwitchPort::new),
            switch_unreadable: 0,
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
        key.and_then(|k| self.paths.iter().position(|&p| p == k.ev))
            .unwrap_or(0)
    }

    /// Frames in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Whether the sender's MAC takes no new frame at `cycle`: more than
    /// [`MAC_TX_BACKLOG_BYTES`] at the line rate still wait for the wire.
    /// Without it a card's TX path, faster than the line, would queue a
    /// window here, its packets stamped and given their EVs long before
    /// they leave.
    pub fn mac_full(&self, cycle: u64) -> bool {
        let Some(gbps) = self.cfg.line_rate_gbps else {
            return false;
        };
        let backlog = self.free_at_ps.saturating_sub(cycles_to_ps(cycle));
        backlog > Duration::serialisation(MAC_TX_BACKLOG_BYTES, gbps).as_ps()
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
            // estimate of the headers); here the real frame is at hand,
            // and the line's own per-frame bytes are added.
            let bytes = frame.len() as u64 + LINE_BYTES_PER_FRAME;
            let start = self.free_at_ps.max(now);
            depart = start + Duration::serialisation(bytes.max(WIRE_OVERHEAD), gbps).as_ps();
            self.free_at_ps = depart;
            // A degraded path serialises the frame again at its rate.
            if let Some(d) = self.degraded.iter_mut().find(|d| d.0 == path) {
                let start = d.2.max(depart);
                depart = start + Duration::serialisation(bytes.max(WIRE_OVERHEAD), gbps * d.1).as_ps();
                d.2 = depart;
            }
        }
        if self.holes.iter().any(|&(p, t)| p == path && depart >= t)
            || self
                .flaps
                .iter()
                .any(|&(p, f)| p == path && f.is_down(proto::Instant(depart)))
        {
            self.stats[path].blackholed += 1;
            return;
        }
        let lost = if self.cfg.loss_keyed {
            let k = key.map_or((0, 0), |k| (k.opcode, k.psn));
            let nth = self.seen.entry(k).or_insert(0);
            *nth += 1;
            keyed_loss(self.seed, self.dir, k.0, k.1, *nth, self.cfg.loss)
        } else {
            self.cfg.loss > 0.0 && ((self.rng.next_u64() >> 11) as f64) / ((1u64 << 53) as f64) < self.cfg.loss
        };
        if lost {
            self.stats[path].lost += 1;
            return;
        }
        let Some((depart, frame)) = self.through_switch(path, depart, frame) else {
            return;
        };
        let ev = self.paths[path];
        let jitter = self.cfg.jitter.as_ps();
        let jitter = if jitter > 0 { self.rng.below(jitter) } else { 0 };
        let arrive = depart + self.cfg.base_delay.as_ps() + self.cfg.ev_extra_delay(ev).as_ps() + jitter;
        self.seq += 1;
        self.queue.push(Reverse((ps_to_cycles(arrive), self.seq)));
        self.in_flight.insert(self.seq, (path, frame));
    }

    /// Pass `frame`, reaching the switch port at `at_ps`, through it (as
    /// the golden runner does a packet, [`SwitchPort::admit`]): its
    /// departure and the frame as it leaves (marked or trimmed), or `None`
    /// when the port drops it; a link without a port passes it as it is.
    /// The port sizes a frame as the line does (its bytes plus
    /// [`LINE_BYTES_PER_FRAME`]).
    fn through_switch(&mut self, path: usize, at_ps: u64, mut frame: Vec<u8>) -> Option<(u64, Vec<u8>)> {
        let profile = Profile::DEFAULT;
        let Some(port) = self.switch.as_mut() else {
            return Some((at_ps, frame));
        };
        let parsed = Packet::parse_frame(&frame, &profile).ok();
        let kind = parsed.as_ref().map_or(PacketKind::Control, |(p, _)| PacketKind::of(p));
        let bytes = frame.len() as u64 + LINE_BYTES_PER_FRAME;
        let payload = parsed.as_ref().map_or(0, |(p, _)| p.payload().len() as u64);
        let last_hop = port.config().last_hop;
        match port.admit(Instant(at_ps), bytes, bytes - payload, kind) {
            SwitchVerdict::Forward { depart, mark_ce } => {
                if mark_ce {
                    match mark_ce_in_frame(&mut frame) {
                        Ok(()) => self.stats[path].ecn_marked += 1,
                        Err(_) => self.switch_unreadable += 1,
                    }
                }
                Some((depart.as_ps(), frame))
            }
            SwitchVerdict::Trim { depart } => match trim_frame_of_either(&frame, last_hop, &profile) {
                Ok(trimmed) => {
                    self.stats[path].trimmed += 1;
                    Some((depart.as_ps(), trimmed))
                }
                Err(_) => {
                    self.switch_unreadable += 1;
                    Some((depart.as_ps(), frame))
                }
            },
            SwitchVerdict::Drop => {
                self.stats[path].switch_dropped += 1;
                None
            }
        }
    }

    /// The next frame due at or before `cycle`, if any (counted as
    /// delivered).
    pub fn pop_due(&mut self, cycle: u64) -> Option<Vec<u8>> {
        while let Some(&Reverse((due, seq))) = self.queue.peek() {
            if due > cycle {
                return None;
            }
            self.queue.pop();
            if let Some((path, frame)) = self.in_flight.remove(&seq) {
                self.stats[path].delivered += 1;
                return Some(frame);
            }
        }
        None
    }

    /// Hand every frame due at or before `cycle` to the receiver's MAC RX.
    pub fn deliver(&mut self, cycle: u64, rx: &mut AxisSource) {
        while let Some(frame) = self.pop_due(cycle) {
            rx.push(frame);
        }
    }

    /// Sum of the per-path counters.
    pub fn total(&self) -> PathStats {
        self.stats.iter().fold(PathStats::default(), |a, s| PathStats {
            sent: a.sent + s.sent,
            delivered: a.delivered + s.delivered,
            lost: a.lost + s.lost,
            blackholed: a.blackholed + s.blackholed,
            trimmed: a.trimmed + s.trimmed,
            ecn_marked: a.ecn_marked + s.ecn_marked,
            switch_dropped: a.switch_dropped + s.switch_dropped,
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

#[cfg(test)]
mod tests {
    use super::*;
    use proto::loopback::EvMatch;
    use proto::time::Instant;
    use proto::wire::{Encap, Opcode, RocePacket};
    use proto::Psn;

    fn frame(ev: u32, psn: u32, encap: &Encap) -> Vec<u8> {
        let pkt = RocePacket::write(Opcode::WriteMiddle, 0x77, Psn::new(psn), vec![0xAB; 256]).on_ev(ev);
        pkt.to_frame(encap).expect("a valid WRITE MIDDLE")
    }

    #[test]
    fn frame_key_reads_ev_opcode_qp_and_psn_of_ipv4_and_ipv6_frames() {
        for encap in [Encap::test_v4(), Encap::test_v6()] {
            let k = frame_key(&frame(0x1003, 0xABCDEF, &encap)).expect("parses");
            assert_eq!(
                k,
                FrameKey {
                    ev: 0x1003,
                    opcode: Opcode::WriteMiddle as u8,
                    dest_qp: 0x77,
                    psn: 0xABCDEF
                }
            );
        }
        // A 32-bit EV: IPv6 carries it whole (bits 31-16 in the flow
        // label), IPv4 its source-port half.
        for (encap, want) in [(Encap::test_v6(), 0xA5C3_1003), (Encap::test_v4(), 0x1003)] {
            let k = frame_key(&frame(0xA5C3_1003, 5, &encap)).expect("parses");
            assert_eq!(k.ev, want, "{encap:?}");
        }
        assert_eq!(frame_key(&[0u8; 10]), None, "too short");
        let mut f = frame(0x1003, 1, &Encap::test_v4());
        f[12] = 0x88; // not IP
        assert_eq!(frame_key(&f), None);
    }

    #[test]
    fn cycle_conversion_is_99_32_ns() {
        assert_eq!(cycles_to_ps(32), 99_000);
        assert_eq!(ps_to_cycles(99_000), 32);
        assert_eq!(ps_to_cycles(99_001), 33, "due in the first cycle at or after");
        assert_eq!(ps_to_cycles(cycles_to_ps(12_345)), 12_345);
    }

    fn link(cfg: LinkConfig) -> FabricLink {
        FabricLink::new(&cfg, Dir::AtoB, (0..8).map(|i| 0x1000 + i).collect(), 5).unwrap()
    }

    /// (cycle, frame) of everything delivered in `from..until`.
    fn drain(l: &mut FabricLink, from: u64, until: u64) -> Vec<(u64, Vec<u8>)> {
        let mut out = Vec::new();
        for c in from..until {
            while let Some(f) = l.pop_due(c) {
                out.push((c, f));
            }
        }
        out
    }

    #[test]
    fn a_switch_port_queues_marks_and_trims_frames_as_the_model_decides() {
        use proto::loopback::switch::SwitchQueue;
        use proto::wire::mrc10::Profile;
        let port = SwitchQueue {
            rate_gbps: 25.0,
            ecn_threshold_bytes: 1_000,
            capacity_bytes: 2_000,
            last_hop: true,
        };
        let cfg = LinkConfig {
            line_rate_gbps: Some(100.0),
            switch: Some(port),
            ..LinkConfig::default()
        };
        let mut l = link(cfg);
        let v4 = Encap::test_v4();
        // Ten 256-byte WRITEs at once: ~342 bytes each on the line, so the
        // port (25 Gb/s, 4x slower than the line) fills as they arrive.
        for psn in 0..10 {
            l.send(0, frame(0x1000, psn, &v4));
        }
        let got = drain(&mut l, 0, 10_000);
        assert_eq!(got.len(), 10, "trimmed, not dropped");
        let mut seen = (0, 0, 0);
        for (_, f) in &got {
            let (p, _) = Packet::parse_frame(f, &Profile::DEFAULT).expect("every frame stays valid");
            match (p.trimmed(), p.ecn_ce()) {
                (true, _) => seen.2 += 1,
                (false, true) => seen.1 += 1,
                (false, false) => seen.0 += 1,
            }
        }
        let stats = l.total();
        assert!(
            seen.0 > 0 && seen.1 > 0 && seen.2 > 0,
            "plain / marked / trimmed: {seen:?}"
        );
        assert_eq!((stats.ecn_marked, stats.trimmed), (seen.1, seen.2));
        assert_eq!(l.switch_unreadable, 0);
        // Trimmed headers take the priority queue: the first of them
        // arrives before the last full frame.
        let first_trimmed = got.iter().position(|(_, f)| f.len() < 100).expect("a trimmed frame");
        assert!(first_trimmed < got.len() - 1, "trimmed headers wait behind the data");
    }

    #[test]
    fn the_mac_takes_frames_at_the_line_rate_with_one_jumbo_frame_waiting() {
        let mut l = link(LinkConfig {
            line_rate_gbps: Some(100.0),
            ..LinkConfig::default()
        });
        let v4 = Encap::test_v4();
        let f = frame(0x1000, 0, &v4);
        let on_line = |n: u64| Duration::serialisation(n * (f.len() as u64 + LINE_BYTES_PER_FRAME), 100.0).as_ps();
        // Frames handed at once queue until more than a jumbo frame's time
        // waits for the wire; then the MAC takes none.
        let mut n = 0;
        while !l.mac_full(0) {
            l.send(0, f.clone());
            n += 1;
        }
        let jumbo = Duration::serialisation(MAC_TX_BACKLOG_BYTES, 100.0).as_ps();
        assert!(on_line(n) > jumbo && on_line(n - 1) <= jumbo, "{n} frames");
        // It takes the next one once the backlog has drained below that.
        let free_at = on_line(n);
        let mut c = 0;
        while l.mac_full(c) {
            c += 1;
        }
        assert!(free_at - cycles_to_ps(c) <= jumbo);
        assert!(free_at - cycles_to_ps(c - 1) > jumbo);
        // Without a line rate nothing paces it.
        let unpaced = link(LinkConfig {
            line_rate_gbps: None,
            ..LinkConfig::default()
        });
        assert!(!unpaced.mac_full(0));
    }

    #[test]
    fn paths_have_their_own_delay_and_a_blackhole_drops_from_its_time_on() {
        let cfg = LinkConfig {
            base_delay: Duration::from_ns(1000),
            ev_delay_spread: Duration::from_ns(500),
            line_rate_gbps: None,
            blackholes: vec![(EvMatch::Index(2), Instant::from_ns(2000))],
            ..LinkConfig::default()
        };
        let mut l = link(cfg.clone());
        let v4 = Encap::test_v4();
        for ev in 0..8 {
            l.send(0, frame(0x1000 + ev, ev, &v4));
        }
        // Each frame is due at base + the EV's extra delay (the model's hash).
        let got = drain(&mut l, 0, 1000);
        assert_eq!(got.len(), 8);
        let mut due: Vec<u64> = (0..8)
            .map(|ev| ps_to_cycles(1_000_000 + cfg.ev_extra_delay(0x1000 + ev).as_ps()))
            .collect();
        due.sort_unstable();
        assert_eq!(got.iter().map(|(c, _)| *c).collect::<Vec<_>>(), due);
        // After 2 us (647 cycles), path 2 swallows; the others deliver.
        for ev in 0..8 {
            l.send(700, frame(0x1000 + ev, 100 + ev, &v4));
        }
        assert_eq!(l.stats[2].blackholed, 1);
        assert_eq!(l.stats[2].sent, 2);
        assert_eq!(drain(&mut l, 700, 2000).len(), 7);
        // An unknown EV and a frame that does not parse go on path 0.
        l.send(2000, frame(0x4242, 7, &v4));
        l.send(2000, vec![1, 2, 3]);
        assert_eq!(l.stats[0].sent, 4);
        assert_eq!(l.unparsed, 1);
        assert_eq!(l.in_flight(), 2);
    }

    #[test]
    fn a_degraded_path_serialises_again_at_its_share_of_the_rate() {
        // 10 Gb/s, path 1 at 25%, no per-EV spread: a frame of EV 0 and
        // one of EV 1 sent together; EV 1's is serialised once more at
        // 2.5 Gb/s after the link's serialisation.
        let cfg = LinkConfig {
            base_delay: Duration::from_ns(1000),
            ev_delay_spread: Duration::ZERO,
            line_rate_gbps: Some(10.0),
            degraded: vec![(EvMatch::Index(1), 0.25)],
            ..LinkConfig::default()
        };
        let mut l = link(cfg);
        let v4 = Encap::test_v4();
        let (f0, f1) = (frame(0x1000, 1, &v4), frame(0x1001, 2, &v4));
        // The line's bytes: the streamed frame and its FCS, preamble and gap.
        let (n0, n1) = (
            f0.len() as u64 + LINE_BYTES_PER_FRAME,
            f1.len() as u64 + LINE_BYTES_PER_FRAME,
        );
        l.send(0, f0);
        l.send(0, f1);
        let got = drain(&mut l, 0, 2000);
        assert_eq!(got.len(), 2);
        let ser = |bytes: u64, g: f64| Duration::serialisation(bytes.max(WIRE_OVERHEAD), g).as_ps();
        let t0 = ser(n0, 10.0);
        let t1 = t0 + ser(n1, 10.0) + ser(n1, 2.5);
        assert_eq!(got[0].0, ps_to_cycles(t0 + 1_000_000));
        assert_eq!(got[1].0, ps_to_cycles(t1 + 1_000_000));
        let bad = LinkConfig {
            degraded: vec![(EvMatch::Index(1), 0.0)],
            ..LinkConfig::default()
        };
        assert!(FabricLink::new(&bad, Dir::AtoB, vec![0x1000, 0x1001], 1).is_err());
    }

    #[test]
    fn a_flapping_path_drops_only_while_it_is_down() {
        // Path 3 down for 1 us of every 4 us, from 2 us on.
        let flap = Flap {
            ev: EvMatch::Value(0x1003),
            from: Instant::from_ns(2000),
            period: Duration::from_ns(4000),
            down: Duration::from_ns(1000),
        };
        let cfg = LinkConfig {
            line_rate_gbps: None,
            flaps: vec![flap],
            ..LinkConfig::default()
        };
        let mut l = link(cfg);
        let v4 = Encap::test_v4();
        // Frames leave at once (no line rate): sent at 0, 2.5, 4, 6.5 and
        // 10 us; down over [2, 3), [6, 7), [10, 11) us.
        let mut dropped = 0;
        for (psn, ns) in [0u64, 2500, 4000, 6500, 10_000].into_iter().enumerate() {
            l.send(ps_to_cycles(ns * 1000), frame(0x1003, psn as u32, &v4));
            l.send(ps_to_cycles(ns * 1000), frame(0x1004, psn as u32, &v4));
            let down = flap.is_down(Instant(cycles_to_ps(ps_to_cycles(ns * 1000))));
            dropped += u64::from(down);
        }
        assert_eq!(dropped, 3);
        assert_eq!(l.stats[3].blackholed, 3);
        assert_eq!(l.stats[4].blackholed, 0);
        assert_eq!(drain(&mut l, 0, 10_000).len(), 7);
    }

    #[test]
    fn keyed_loss_loses_the_same_packets_as_the_models_rule() {
        let cfg = LinkConfig {
            loss: 0.05,
            loss_keyed: true,
            line_rate_gbps: None,
            ..LinkConfig::default()
        };
        let mut l = link(cfg.clone());
        let v4 = Encap::test_v4();
        let mut expect_lost = 0;
        for psn in 0..2000u32 {
            // Every PSN twice: the second carriage has its own decision.
            for nth in 1..=2 {
                l.send(u64::from(psn), frame(0x1000 + psn % 8, psn, &v4));
                if keyed_loss(5, Dir::AtoB, Opcode::WriteMiddle as u8, psn, nth, 0.05) {
                    expect_lost += 1;
                }
            }
        }
        let t = l.total();
        assert_eq!(t.lost, expect_lost);
        // About 5% of 4000.
        assert!((120..=280).contains(&t.lost), "{} lost", t.lost);
        assert_eq!(t.sent, 4000);
    }

    #[test]
    fn unsupported_impairments_are_refused() {
        let e = FabricLink::new(
            &LinkConfig {
                duplicate: 0.1,
                ..LinkConfig::default()
            },
            Dir::AtoB,
            vec![1],
            1,
        );
        assert!(matches!(e, Err(FabricError::Unsupported(_))));
        let e = FabricLink::new(
            &LinkConfig {
                loss: 1.0,
                ..LinkConfig::default()
            },
            Dir::AtoB,
            vec![1],
            1,
        );
        assert!(matches!(e, Err(FabricError::Loss(_))));
        assert!(matches!(
            FabricLink::new(&LinkConfig::default(), Dir::AtoB, vec![], 1),
            Err(FabricError::Paths(0))
        ));
    }
}
