//! The network: packets in a slab, output ports that queue and serialise,
//! the switch model (ECN, trimming, drops), ECMP hashing.

use std::collections::VecDeque;

use proto::time::Instant;
use proto::wire::Packet;

use super::topo::{NodeId, NodeKind, Topology};

/// UDP destination port of RoCEv2, part of the hashed 5-tuple.
pub const ROCE_PORT: u64 = 4791;
/// IP protocol number of UDP.
pub const UDP_PROTO: u64 = 17;

/// A packet in flight: the model's packet plus what the fabric needs
/// (addresses, precomputed wire size).
#[derive(Debug)]
pub struct Slot {
    pub pkt: Packet,
    pub src: u32,
    pub dst: u32,
    /// Bytes on the wire (computed once at injection, again on trim).
    pub wire: u32,
    /// [`EcmpMode::EvPath`]: the path digits not consumed yet.
    pub route: u32,
    /// PFC: the port (global index) that sent the packet into the switch
    /// now holding it, whose pause accounting it counts in ([`NO_PORT`]:
    /// none, at the source host or without PFC).
    pub ingress: u32,
}

/// No port ([`Slot::ingress`]).
pub const NO_PORT: u32 = u32::MAX;

/// How a node picks a member of its ECMP group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum EcmpMode {
    /// Hash of the 5-tuple with a per-node salt, mod the group size (what
    /// commodity switches do): EVs map to paths pseudo-randomly, so some
    /// paths get more of a flow's EVs than others. EV values are drawn at
    /// random per flow.
    Hash,
    /// The EV names the path (MRC's NIC-generated EVs built from per-hop
    /// fields): every node with a group of `n > 1` members takes the next
    /// mixed-radix digit of the EV's low 16 bits (`member = rem % n;
    /// rem /= n`), so EV values `0..P` name the `P` paths of a flow (`P` the
    /// product of the group sizes on the way, [`path_count`]).
    ///
    /// A flow's EVs are path indices taken with a stride
    /// ([`ev_path_values`]): EV `i` is `(base + i * stride) mod P` (plus
    /// `P * (i / P)`, which no hop reads, to keep values distinct), with
    /// `base` uniform in `0..P` and `stride` uniform among the values
    /// coprime to `P`, both drawn per flow from the run's seed. So, for any
    /// number of EVs and paths: the first `min(EVs, P)` EVs take distinct
    /// paths, every path carries `floor` or `ceil` of `EVs / P` EVs, the
    /// first choice's members get equal shares within one (the stride is
    /// coprime to its size), and which subset
    /// of paths a flow uses when `EVs < P` differs from flow to flow (with
    /// consecutive EVs from a 256-aligned base, as before, 128 EVs on 256
    /// paths all took the same half of the core). The same EV always takes
    /// the same path. A flow with a single EV (RC) gets a random 16-bit
    /// value: a uniformly random path when the path count divides 2^16.
    EvPath,
}

/// Packets in flight, named by index; freed slots are reused, so the
/// steady state allocates nothing.
#[derive(Debug, Default)]
pub struct Slab {
    slots: Vec<Option<Slot>>,
    free: Vec<u32>,
    pub live: u64,
}

impl Slab {
    #[inline]
    pub fn insert(&mut self, s: Slot) -> u32 {
        self.live += 1;
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(s);
                i
            }
            None => {
                self.slots.push(Some(s));
                (self.slots.len() - 1) as u32
            }
        }
    }
    #[inline]
    pub fn take(&mut self, i: u32) -> Slot {
        self.live -= 1;
        self.free.push(i);
        self.slots[i as usize].take().expect("live packet")
    }
    #[inline]
    pub fn get(&self, i: u32) -> &Slot {
        self.slots[i as usize].as_ref().expect("live packet")
    }
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Slot {
        self.slots[i as usize].as_mut().expect("live packet")
    }
    /// Slots ever allocated (peak packets in flight).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}

/// ECN marking at switch egress queues.
///
/// On enqueue, with `q` the bytes already queued at the port: no mark below
/// `kmin`, always at or above `kmax`, and in between with probability
/// `pmax x (q - kmin) / (kmax - kmin)` (RED-like on the instantaneous
/// queue). `kmin == kmax` gives a step.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EcnConfig {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax: f64,
}

/// Priority flow control (IEEE 802.1Qbb) as the simulator models it: a
/// switch counts, per ingress link, the data bytes it holds that arrived
/// on it; above `xoff_bytes` it sends a pause back over that link, below
/// `xon_bytes` a resume, each arriving one link delay later. A paused
/// port (switch or host NIC) sends no data but keeps sending its priority
/// queue (acknowledgements, CNPs: another priority). With PFC on, the data
/// queues have no drop limit (the buffer is shared, the ingress limit is
/// what bounds it) and nothing is trimmed: the fabric is lossless, as the
/// RoCE deployments this baseline stands for.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PfcConfig {
    pub xoff_bytes: u64,
    pub xon_bytes: u64,
}

impl Default for PfcConfig {
    /// 64 KB / 32 KB per ingress link.
    fn default() -> PfcConfig {
        PfcConfig {
            xoff_bytes: 64_000,
            xon_bytes: 32_000,
        }
    }
}

/// Switch egress queue model.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SwitchConfig {
    /// Data queue capacity per port, bytes.
    pub buffer_bytes: u64,
    pub ecn: Option<EcnConfig>,
    /// When the data queue is full: cut the payload and forward the header
    /// in the priority header queue (else drop).
    pub trimming: bool,
    /// Header queue capacity per port, bytes (trimmed headers beyond it are
    /// dropped).
    pub header_buffer_bytes: u64,
    /// Priority flow control (lossless Ethernet, the RoCE baseline's
    /// fabric): `None` = off. See [`PfcConfig`].
    #[serde(default)]
    pub pfc: Option<PfcConfig>,
    /// ECN marking also on the ports to hosts. MRC 1.0 deployments keep
    /// ECN off at the last hop ("so marks signal path imbalance",
    /// `../shared/docs/mrc-1.0.md`, C): congestion there, which every path
    /// shares, is the receiver's to signal (its cwnd penalty).
    #[serde(default = "ecn_last_hop_default")]
    pub ecn_last_hop: bool,
}

fn ecn_last_hop_default() -> bool {
    true
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer_bytes: 400_000,
            ecn: Some(EcnConfig {
                kmin_bytes: 80_000,
                kmax_bytes: 320_000,
                pmax: 1.0,
            }),
            trimming: true,
            header_buffer_bytes: 64_000,
            pfc: None,
            ecn_last_hop: true,
        }
    }
}

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// Queue full (and not trimmable, or the header queue full too).
    Overflow,
    /// The link was down.
    LinkDown,
    /// Random loss configured on the link.
    Loss,
    /// Silent blackhole.
    Blackhole,
    /// No route (destination unreachable from here).
    NoRoute,
}

/// Counters of one output port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PortStats {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub drop_overflow: u64,
    pub drop_link_down: u64,
    pub drop_loss: u64,
    pub drop_blackhole: u64,
    pub drop_no_route: u64,
    pub trims: u64,
    /// Of `trims`, at a port leading to the destination host (MRC 1.0
    /// TRIMMED_LASTHOP: the requester does not blame the path).
    pub trims_last_hop: u64,
    pub ecn_marks: u64,
    /// Largest data queue seen, bytes.
    pub max_queue_bytes: u64,
    /// PFC pause frames this port's peer sent it (XOFF; resumes not
    /// counted).
    pub pfc_pauses: u64,
    /// Most data bytes the peer switch held from this port (PFC ingress
    /// accounting): at most XOFF plus what the link carried while the
    /// pause travelled.
    pub pfc_max_held: u64,
}

impl PortStats {
    pub fn drops(&self) -> u64 {
        self.drop_overflow + self.drop_link_down + self.drop_loss + self.drop_blackhole + self.drop_no_route
    }
    pub fn count(&mut self, r: DropReason) {
        match r {
            DropReason::Overflow => self.drop_overflow += 1,
            DropReason::LinkDown => self.drop_link_down += 1,
            DropReason::Loss => self.drop_loss += 1,
            DropReason::Blackhole => self.drop_blackhole += 1,
            DropReason::NoRoute => self.drop_no_route += 1,
        }
    }
    pub fn add(&mut self, o: &PortStats) {
        self.tx_packets += o.tx_packets;
        self.tx_bytes += o.tx_bytes;
        self.drop_overflow += o.drop_overflow;
        self.drop_link_down += o.drop_link_down;
        self.drop_loss += o.drop_loss;
        self.drop_blackhole += o.drop_blackhole;
        self.drop_no_route += o.drop_no_route;
        self.trims += o.trims;
        self.trims_last_hop += o.trims_last_hop;
        self.ecn_marks += o.ecn_marks;
        self.max_queue_bytes = self.max_queue_bytes.max(o.max_queue_bytes);
        self.pfc_pauses += o.pfc_pauses;
        self.pfc_max_held = self.pfc_max_held.max(o.pfc_max_held);
    }
}

/// An output port: a data queue and a priority header queue, serialised
/// at the port's (possibly degraded) rate onto the link.
#[derive(Debug)]
pub struct PortState {
    pub node: NodeId,
    /// Global index of the peer's port (the receiving end).
    pub peer_node: NodeId,
    /// Picoseconds per byte at the current rate.
    pub ps_per_byte: f64,
    pub nominal_ps_per_byte: f64,
    /// Propagation delay plus the peer's forwarding latency, ps.
    pub delay_ps: u64,
    pub data: VecDeque<u32>,
    pub data_bytes: u64,
    pub hdr: VecDeque<u32>,
    pub hdr_bytes: u64,
    /// The packet being serialised.
    pub busy: Option<u32>,
    pub up: bool,
    /// Routing avoids this port (down and rerouted).
    pub excluded: bool,
    pub loss: f64,
    pub blackhole: bool,
    pub is_switch: bool,
    pub stats: PortStats,
    /// Queue series (`SimConfig::queue_series`): the bin being measured
    /// and the deepest data queue seen in it so far.
    pub series_bin: u32,
    pub series_max: u64,
    /// PFC: data bytes the peer switch holds that came through this port.
    pub pfc_held: u64,
    /// PFC: the peer has sent XOFF (and not XON yet) for this port.
    pub pfc_xoff_sent: bool,
    /// PFC: this port is paused (the XOFF arrived): it sends no data, only
    /// its priority (control) queue.
    pub paused: bool,
    /// The port's own draws (random loss, ECN marking): a port's fate
    /// does not depend on what other ports drew, nor on which process
    /// simulates them.
    pub rng: FastRng,
}

/// All ports of the fabric, indexed globally: node `n`'s port `p` is
/// `base[n] + p`.
#[derive(Debug)]
pub struct Ports {
    pub base: Vec<u32>,
    pub ports: Vec<PortState>,
    /// Per-node ECMP salt.
    pub salt: Vec<u64>,
}

impl Ports {
    pub fn new(topo: &Topology, seed: u64) -> Ports {
        let mut base = Vec::with_capacity(topo.nodes.len() + 1);
        let mut ports = Vec::new();
        let mut salt = Vec::with_capacity(topo.nodes.len());
        for (i, n) in topo.nodes.iter().enumerate() {
            base.push(ports.len() as u32);
            salt.push(node_salt(seed, i as NodeId));
            for p in &n.ports {
                let peer = &topo.nodes[p.peer as usize];
                let ppb = 8000.0 / p.gbps;
                ports.push(PortState {
                    node: i as NodeId,
                    peer_node: p.peer,
                    ps_per_byte: ppb,
                    nominal_ps_per_byte: ppb,
                    delay_ps: p.latency.as_ps() + peer.latency.as_ps(),
                    data: VecDeque::new(),
                    data_bytes: 0,
                    hdr: VecDeque::new(),
                    hdr_bytes: 0,
                    busy: None,
                    up: true,
                    excluded: false,
                    loss: 0.0,
                    blackhole: false,
                    is_switch: matches!(n.kind, NodeKind::Switch { .. }),
                    stats: PortStats::default(),
                    series_bin: 0,
                    series_max: 0,
                    pfc_held: 0,
                    pfc_xoff_sent: false,
                    paused: false,
                    rng: FastRng::new(seed ^ 0xEC4 ^ mix64(ports.len() as u64 + 1)),
                });
            }
        }
        base.push(ports.len() as u32);
        Ports { base, ports, salt }
    }

    /// Global index of (node, port).
    #[inline]
    pub fn index(&self, node: NodeId, port: u16) -> u32 {
        self.base[node as usize] + port as u32
    }
}

/// The ECMP salt of `node` under `seed`.
pub fn node_salt(seed: u64, node: NodeId) -> u64 {
    mix64(seed ^ mix64(node as u64 ^ 0x5A17_0000_0000))
}

/// Pick the member of an ECMP group of `n` at `node` for a packet
/// (`route` is the remaining EV digits in [`EcmpMode::EvPath`]).
#[inline]
pub fn ecmp_pick(mode: EcmpMode, salt: u64, src: u32, dst: u32, ev: u32, route: &mut u32, n: usize) -> usize {
    if n <= 1 {
        return 0;
    }
    match mode {
        EcmpMode::Hash => (ecmp_hash(salt, src, dst, ev) % n as u64) as usize,
        EcmpMode::EvPath => {
            let i = *route % n as u32;
            *route /= n as u32;
            i as usize
        }
    }
}

/// Largest number of paths [`EcmpMode::EvPath`] names: EVs travel in the
/// 16-bit UDP source port.
pub const MAX_EV_PATHS: u32 = 1 << 16;

/// Number of paths from host `src` to host `dst` that [`EcmpMode::EvPath`]
/// EVs name: the product of the ECMP group sizes along the way (following
/// member 0; in the Clos fabrics built here every choice at a tier sees
/// groups of the same size), capped at the largest product of the first
/// hops' group sizes that fits [`MAX_EV_PATHS`] (later hops then take
/// member 0 for EVs below it). 1 when there is no choice or no route.
pub fn path_count(topo: &Topology, src: u32, dst: u32) -> u32 {
    let mut paths: u32 = 1;
    let mut node = src;
    for _ in 0..64 {
        if node == dst {
            break;
        }
        let group = topo.next_hops(node, dst);
        let Some(&first) = group.first() else { break };
        let n = group.len() as u32;
        if n > 1 {
            match paths.checked_mul(n) {
                Some(p) if p <= MAX_EV_PATHS => paths = p,
                _ => break,
            }
        }
        node = topo.nodes[node as usize].ports[first as usize].peer;
    }
    paths
}

/// The EV values of a flow with `n_evs` EVs over `n_paths` paths under
/// [`EcmpMode::EvPath`]: EV `i` is path `(base + i * stride) mod n_paths`,
/// plus `n_paths * (i / n_paths)` so that values stay distinct when there
/// are more EVs than paths (no hop reads those high digits). With `stride`
/// coprime to `n_paths`, EVs `i .. i + n_paths` take every path once.
pub fn ev_path_values(n_paths: u32, n_evs: usize, base: u32, stride: u32) -> Vec<u32> {
    let p = n_paths.max(1) as u64;
    (0..n_evs as u64)
        .map(|i| ((base as u64 + i * stride as u64) % p + p * (i / p)) as u32)
        .collect()
}

/// Greatest common divisor.
pub fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The hops (node, egress port) a packet from host `src` to host `dst` on
/// entropy value `ev` takes with no faults, under ECMP `mode` and `seed`
/// (the simulator's salts): to find which EVs cross a link.
pub fn trace_path(topo: &Topology, mode: EcmpMode, seed: u64, src: u32, dst: u32, ev: u32) -> Vec<(NodeId, u16)> {
    let mut hops = Vec::new();
    let mut node = src;
    let mut route = ev & 0xFFFF;
    while node != dst && hops.len() < 64 {
        let group = topo.next_hops(node, dst);
        if group.is_empty() {
            break;
        }
        let i = ecmp_pick(mode, node_salt(seed, node), src, dst, ev, &mut route, group.len());
        hops.push((node, group[i]));
        node = topo.nodes[node as usize].ports[group[i] as usize].peer;
    }
    hops
}

/// A 64-bit mixer (splitmix64 finaliser).
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// ECMP hash of the 5-tuple (src host, dst host, UDP source port = EV low
/// 16 bits, UDP destination port 4791, protocol UDP) under a per-node salt.
#[inline]
pub fn ecmp_hash(salt: u64, src: u32, dst: u32, ev: u32) -> u64 {
    let t = ((src as u64) << 40) ^ ((dst as u64) << 16) ^ (ev as u64 & 0xFFFF);
    let t2 = (ROCE_PORT << 8) | UDP_PROTO;
    mix64(salt ^ mix64(t) ^ t2.rotate_left(48))
}

/// Deterministic fast RNG (xorshift64*), for ECN marking and loss.
#[derive(Clone, Debug)]
pub struct FastRng(u64);

impl FastRng {
    pub fn new(seed: u64) -> FastRng {
        FastRng(mix64(seed) | 1)
    }
    /// Uniform in [0, 1).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Time to serialise `bytes` at `ps_per_byte`.
#[inline]
pub fn ser_ps(bytes: u32, ps_per_byte: f64) -> u64 {
    (bytes as f64 * ps_per_byte).round() as u64
}

/// Instant + ps.
#[inline]
pub fn at(now: Instant, ps: u64) -> Instant {
    Instant(now.as_ps() + ps)
}
