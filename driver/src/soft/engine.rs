//! The soft NIC's state: the config tables as the driver writes them, one
//! golden-model QP ([`proto::model::mrc::MrcQp`]) per enabled send
//! context, the completion and EV-event rings, and the packet path between
//! the models and the socket.
//!
//! The NIC follows the card's host interface (`docs/hw/core.md`,
//! `contract`): config rows, doorbells, SQ descriptors read from host
//! memory, CQEs and EV events written to phase-bit rings. What the card
//! does in RTL, the model does here, speaking MRC 1.0 on the wire.

use std::collections::{BTreeMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use contract::config::{self, table as cfg_table, INDEX_SELECT};
use contract::layout::{self, cqe, ev_event, sqe, CqStatus, EvEvent, EvNewState, EvReason, SqContext, SqDescriptor};
use proto::model::cc::{CcConfig, NsccConfig, QuickAdapt, NSCC_MAX_CUT, NSCC_MIN_CWND_PACKET_DIVISOR};
use proto::model::endpoint::{Endpoint, EndpointConfig, EndpointError, EndpointResult};
use proto::model::ev::{EvChangeReason, EvSetConfig, EvState, EvStateChange};
use proto::model::{Event, Qp, QpSetup, QueuePair, RxError, Transport, WcStatus, WriteRequest};
use proto::time::{Duration, Instant};
use proto::wire::mrc10::choices::{Profile, ENDPOINT_QPN};
use proto::wire::mrc10::frame::{self as mrc10_frame, ParsedFrame};
use proto::wire::mrc10::{EvFormat, Opcode};
use proto::wire::packet::frame_is_mrc10;
use proto::wire::Encap;
use proto::wire::Packet;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
// Maps of small integer keys looked up per packet: SipHash was 1.7% of a
// 64 B WRITE's work (docs/benchmarks.md, "64 B WRITEs: fewer clock reads
// and wake-ups").
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::datagram;
use super::interrupt::Interrupt;
use super::rings::RingWriter;
use super::udp::{EvSockets, Received, RecvBatch, SendBatch, SendOutcome, UdpPort, SEND_BATCH};
use super::{Dialect, SoftNicConfig, SoftStats};
use crate::device::DmaBuffer;
use crate::regfile::CfgRow;
use crate::verbs::NsccParams;

/// The wire QPN of the driver's QP `n` is `n + WIRE_QPN_OFFSET`: the
/// driver numbers QPs from 0, and MRC 1.0 reserves QPN 0x2 for the
/// endpoint (ours: the fabric simulator numbers its QPs from the same
/// base). The peer's QP is named by its wire QPN (`RtrAttr::dest_qp`,
/// the peer's `QueuePair::wire_qpn`), whatever numbers it: a card adds
/// nothing. The legacy dialect numbers QPs as the card does: no offset.
pub const WIRE_QPN_OFFSET: u32 = 0x10;

/// Receives the model holds posted per QP for WRITE-with-immediate (the
/// card has no receive queue: the driver keeps its own and the NIC
/// completes every arrival; a consumed receive is posted again at once).
const MODEL_RECEIVES: u16 = 1024;

/// The core's clock period, ps (322.265625 MHz): the ACK delay row is in
/// cycles.
const CORE_CLOCK_PS: u64 = 3103;

/// Bytes of the largest datagram a peer may send (8 KiB MTU and headers).
pub const MAX_DATAGRAM: usize = 9216;

/// A doorbell reads the socket if it was not read for this long
/// ([`Engine::step_doorbell`]): well under the RTOs a soft NIC runs with
/// (a millisecond and more), and long enough that a program posting
/// small WRITEs back to back does not pay an empty read per doorbell.
pub const DOORBELL_RX_INTERVAL: Duration = Duration::from_us(50);

/// How long a program's polls leave the socket unread after a read that
/// found nothing ([`Engine::step_polled`]): a few empty reads' time, short
/// beside a round trip between two soft NICs (tens of microseconds).
pub const POLL_RX_INTERVAL: Duration = Duration::from_us(2);

/// Bytes of a receive buffer with `UDP_GRO`: the largest run the kernel
/// hands up (one IP datagram's worth).
const GRO_BUFFER: usize = 65_536;

/// Bytes of the arena received frames are rebuilt in when they could not
/// be read in place (runs of small datagrams, a run of a new segment
/// size): reused whole once the model has placed what they carried.
const FRAME_ARENA: usize = 256 << 10;

/// The most bytes a QP of a soft NIC whose socket got `rx_buffer` bytes
/// of receive buffer (kernel accounting, [`UdpPort::set_receive_buffer`])
/// may keep in flight with `mtu`-byte packets: half the full-size
/// datagrams that buffer holds.
///
/// A soft NIC's sends are not paced by a link: the model sends its whole
/// window in one step, straight into the peer's socket buffer, which the
/// peer's model drains more slowly than the sender fills it. Whatever of a
/// window does not fit is dropped by the kernel, and with a fixed window
/// nothing adapts: the tail of every burst was lost, recovered by timeouts
/// that resent the rest of the window into the same full buffer (1 MiB
/// WRITEs with a 4 MiB window: 13 datagrams sent per datagram needed,
/// mostly dropped or duplicates). Within this window a peer that stops
/// reading for a while loses nothing: the sender stops when the window is
/// full. Half, because the socket also takes the SACKs of the NIC's own
/// sends and whatever a spurious timeout resends while the originals are
/// still queued; and the smaller the window, the sooner the queue drains
/// (452 KiB at 4 Gb/s: 0.9 ms, inside a 1 ms RTO). The peer's buffer is
/// assumed to be like ours (soft NICs on one host share the kernel's
/// limits). A datagram is charged about twice its length plus overhead
/// (`2 x (len + 512)` overestimates what Linux charges from 256 B to 8 KiB
/// packets); never less than one packet.
pub fn path_window(rx_buffer: usize, mtu: u32) -> u64 {
    let truesize = 2 * (mtu as u64 + 512);
    (rx_buffer as u64 / truesize / 2).max(1) * mtu as u64
}

/// Defaults of the NSCC parameters given as 0 (libmrc's zero-filled
/// `struct mrc_ctl_cc_nscc_cfg`): an unloaded RTT of a soft NIC pair on
/// one host, and the golden model's own defaults for the rest
/// (`NsccConfig::for_fabric`: target half the base RTT, decrease gain
/// 0.5).
pub const NSCC_DEFAULT_BASE_RTT_NS: u32 = 50_000;
pub const NSCC_DEFAULT_GAMMA: f32 = 0.5;
/// The model's defaults size the ceiling at 1.5 initial windows: a QP
/// starts at this share of its `max_cwnd`.
pub const NSCC_INIT_SHARE: (u64, u64) = (2, 3);

/// The golden model's NSCC for the parameters of libmrc's
/// `struct mrc_ctl_cc_nscc_cfg` and the window `ceiling` (the profile's
/// `max_cwnd`, at most what the path holds: [`path_window`]).
///
/// | libmrc | `NsccConfig` |
/// |---|---|
/// | `max_cwnd` | `max_cwnd` (and `init_cwnd` [`NSCC_INIT_SHARE`] of it) |
/// | `base_rtt`, `target_delay` | the fields of the same names (0: [`NSCC_DEFAULT_BASE_RTT_NS`], half the base RTT) |
/// | `disable_qa`, `qa_gate`, `qa_threshold` | `quick_adapt.enabled` (inverted), `.gate`, `.threshold` (0: four target delays, as the model) |
/// | `gamma` | `decrease_gain` (0: [`NSCC_DEFAULT_GAMMA`]) |
/// | `max_md_jump` | `max_cut` (0: [`NSCC_MAX_CUT`]) |
/// | `eta`, `fi`, `fi_scale`, `adjust_bytes_threshold`, `adjust_period_threshold` | none: the model applies its increases per ACK in steps of one packet (`increase_bytes` = the MTU) instead of UET's batched adjustments |
pub fn nscc_config(p: &NsccParams, ceiling: u64, mtu: u32) -> NsccConfig {
    let ns = |v: u32| Duration::from_ns(u64::from(v));
    let base_rtt = ns(if p.base_rtt_ns == 0 {
        NSCC_DEFAULT_BASE_RTT_NS
    } else {
        p.base_rtt_ns
    });
    let target_delay = if p.target_delay_ns == 0 {
        Duration::from_ps(base_rtt.as_ps() / 2)
    } else {
        ns(p.target_delay_ns)
    };
    let gamma = if p.gamma == 0.0 { NSCC_DEFAULT_GAMMA } else { p.gamma };
    let max_cut = if p.max_md_jump == 0.0 {
        NSCC_MAX_CUT
    } else {
        f64::from(p.max_md_jump)
    };
    let mtu = u64::from(mtu);
    let min_cwnd = (mtu / NSCC_MIN_CWND_PACKET_DIVISOR).max(1);
    NsccConfig {
        base_rtt,
        target_delay,
        increase_bytes: mtu,
        decrease_gain: f64::from(gamma),
        max_cwnd: ceiling.max(min_cwnd),
        min_cwnd,
        init_cwnd: (ceiling * NSCC_INIT_SHARE.0 / NSCC_INIT_SHARE.1).max(min_cwnd),
        quick_adapt: QuickAdapt {
            enabled: !p.disable_qa,
            gate: p.qa_gate,
            threshold: ns(p.qa_threshold_ns),
        },
        max_cut,
    }
}

/// The ECN bits of the IP traffic class byte (below the DSCP).
const ECN_BITS: u8 = 0b11;

/// A peer row of the address table.
#[derive(Clone, Copy, Debug)]
struct Peer {
    mac: [u8; 6],
    ip: IpAddr,
}

/// A registered memory region (MR table row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mr {
    rkey: u32,
    base: u64,
    len: u64,
}

/// What the driver wrote for a QP number before (and besides) its send
/// context.
#[derive(Clone, Debug)]
struct Staged {
    recv_psn: u32,
    min_cwnd: u64,
    max_cwnd: u64,
    ack_timeout_exp: u8,
    reorder: u32,
    retry_linear: u8,
    retry_exp: u8,
    evs: [u32; 128],
    /// NSCC instead of the fixed window ([`Device::set_qp_nscc`]).
    nscc: Option<NsccParams>,
}

impl Default for Staged {
    fn default() -> Self {
        Staged {
            recv_psn: 0,
            min_cwnd: 4096,
            max_cwnd: 1 << 20,
            ack_timeout_exp: 8,
            reorder: 3,
            retry_linear: 7,
            retry_exp: 7,
            evs: [0; 128],
            nscc: None,
        }
    }
}

/// A work request the model has, or one refused before it, in SQ order.
#[derive(Clone, Copy, Debug)]
struct Pending {
    sq_index: u32,
    wr_id: u64,
    len: u32,
    opcode: u8,
    signaled: bool,
    /// Refused when read (bad descriptor): completes with this status
    /// when it reaches the head.
    refused: Option<CqStatus>,
}

/// An enabled QP.
struct SoftQp {
    model: Qp,
    ctx: SqContext,
    peer: SocketAddr,
    peer_mac: [u8; 6],
    /// SQ descriptors read so far (free running).
    sq_read: u32,
    pending: VecDeque<Pending>,
}

/// The NIC. See the module doc.
/// How long an endpoint request of our own waits for its answer: the
/// model's default (1 ms) is a card's; a soft NIC's peer is a process that
/// may wait a long time for a core on a loaded host.
pub const ENDPOINT_TIMEOUT: Duration = Duration::from_ms(1000);

/// Results of the program's endpoint requests kept at most (as the
/// model's own queue); beyond it they are counted and dropped.
const RESULT_QUEUE: usize = 1024;

/// A port operation refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PortError {
    #[error("a soft NIC has port 0 only, not {0}")]
    NoSuchPort(u8),
}

pub struct Engine {
    cfg: SoftNicConfig,
    /// Raised when a completion reaches a CQ ring.
    irq: Arc<Interrupt>,
    profile: Profile,
    /// The NIC's own socket and, with `cfg.ev_ports`, one per EV.
    sockets: EvSockets,
    local_mac: [u8; 6],
    ack_every: u16,
    ack_delay: Duration,
    peers: Vec<Option<Peer>>,
    mrs: HashMap<u16, Mr>,
    cqs: HashMap<u16, RingWriter<{ cqe::SIZE }>>,
    ev_ring: Option<RingWriter<{ ev_event::SIZE }>>,
    staged: HashMap<u16, Staged>,
    qps: BTreeMap<u32, SoftQp>,
    /// Send contexts written enabled whose QP could not be built: their
    /// doorbells complete BadDoorbell on their CQ, as a card's do.
    unbuilt: HashMap<u32, SqContext>,
    /// MRC 1.0's endpoint on QPN 0x2: answers the EV probes and Port
    /// Status Updates of peers.
    endpoint: Endpoint,
    /// Where each answer the endpoint owes goes, in the order it answers.
    answer_to: VecDeque<(SocketAddr, [u8; 6])>,
    /// Where each request of our own goes (`send_endpoint_request`), in
    /// the order the endpoint sends them.
    /// Where each endpoint request of ours goes, and its DSCP (`None`:
    /// the packet's own).
    request_to: VecDeque<(SocketAddr, Option<u8>)>,
    /// The traffic class of the last endpoint datagram received.
    endpoint_tos: Option<u8>,
    /// Our ports that are up (MRC 1.0's port status mask; a soft NIC has
    /// one port, bit 0). Port 0 down: nothing is sent or taken.
    ports_up: u32,
    /// Each peer's ports as its last Port Status Update (request or
    /// answer) said.
    peer_ports: HashMap<IpAddr, u32>,
    /// Per QP, the EV values the NIC denied itself because our port or
    /// every port of the QP's peer is down (those that were DENIED by the
    /// control plane already are not in it): the ones lifted when the
    /// ports are up again.
    port_held: HashMap<u32, Vec<u32>>,
    /// Request ids of the Port Status Updates the NIC sent by itself
    /// (a port going down or up): their results are counted, not handed
    /// to the program.
    own_requests: HashSet<u16>,
    /// Results of the program's endpoint requests, waiting to be taken.
    results: VecDeque<EndpointResult>,
    /// Live DMA buffers by IOVA (weak: freed buffers drop out).
    dma: DmaMap,
    rng: ChaCha8Rng,
    /// The frame a received endpoint datagram is rebuilt into.
    frame: Vec<u8>,
    /// Where the frames of received QP datagrams are rebuilt
    /// ([`datagram::frame_in`]).
    frames: BytesMut,
    /// Datagrams produced and not yet sent ([`Engine::flush`]).
    tx: SendBatch,
    /// Buffers of one `recvmmsg` (taken while its datagrams are handled).
    rx_batch: Option<RecvBatch>,
    /// The room the batch leaves before each datagram: the outer headers
    /// of the NIC's address family.
    rx_batch_headroom: usize,
    /// A datagram copied out of the batch.
    gathered: Vec<u8>,
    /// When the socket was last read ([`Engine::step_doorbell`]).
    last_rx: Instant,
    /// The last read found nothing ([`Engine::step_polled`]).
    last_rx_empty: bool,
    /// QP numbers of one pass ([`Engine::step_tx`]).
    qpn_scratch: Vec<u32>,
    /// The receive buffer the NIC's socket got (kernel accounting): it
    /// bounds every QP's window ([`path_window`]).
    rx_buffer: usize,
    stats: SoftStats,
}

fn ip_of_row(row: &CfgRow, v6: bool) -> IpAddr {
    let lo = row.get(config::addr::IP_LO);
    let hi = row.get(config::addr::IP_HI);
    if v6 {
        IpAddr::V6(Ipv6Addr::from(u128::from(hi) << 64 | u128::from(lo)))
    } else {
        IpAddr::V4(Ipv4Addr::from(lo as u32))
    }
}

fn mac_of(v: u64) -> [u8; 6] {
    let b = v.to_be_bytes();
    [b[2], b[3], b[4], b[5], b[6], b[7]]
}

/// The live buffer holding `[iova, iova + len)` and the offset in it.
/// The host memory the NIC reaches (`IovaMap`: one memory may be mapped
/// more than once).
type DmaMap = crate::device::IovaMap;

fn find_dma(dma: &DmaMap, iova: u64, len: usize) -> Option<(DmaBuffer, usize)> {
    dma.find(iova, len)
}

/// `N` bytes of host memory at `iova`, copied (descriptors: the card
/// reads them once).
fn dma_read_array<const N: usize>(dma: &DmaMap, iova: u64) -> Option<[u8; N]> {
    let (b, off) = find_dma(dma, iova, N)?;
    let mut v = [0u8; N];
    b.read(off, &mut v).ok()?;
    Some(v)
}

/// A WRITE's payload, read where it lies in host memory whenever the
/// model builds or resends a packet of it, as a card's DMA reads it, not
/// copied when the WRITE is posted: verbs' rule that a WRITE's buffer
/// stays unchanged until the WRITE completes is what makes this right,
/// and the buffer's handle keeps the mapping alive meanwhile.
/// A received datagram as [`Engine::deliver`] takes it.
enum Arrived<'a> {
    /// Read in place, the room for its outer headers before it
    /// ([`RecvBatch::frame`]).
    InPlace(BytesMut),
    /// Not where a frame could be made of it (a run's datagrams after
    /// the first in a slot they do not start): its bytes, in the batch
    /// or copied out of it.
    Copied(&'a [u8]),
}

struct HostPayload {
    buf: DmaBuffer,
    off: usize,
    len: usize,
}

impl AsRef<[u8]> for HostPayload {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `off + len` lies inside the buffer (`find_dma` checked
        // it) and the buffer lives as long as `self`. The program may
        // not write it until the WRITE completes (verbs' rule).
        unsafe { std::slice::from_raw_parts(self.buf.host_ptr().add(self.off), self.len) }
    }
}

/// The payload of `len` bytes at `iova`, in place.
fn dma_payload(dma: &DmaMap, iova: u64, len: usize) -> Option<Bytes> {
    let (buf, off) = find_dma(dma, iova, len)?;
    Some(Bytes::from_owner(HostPayload { buf, off, len }))
}

/// Read SQ slot `i` of a QP and its local data. `Err`: the descriptor is
/// refused, with the status its completion carries.
fn read_descriptor(dma: &DmaMap, ctx: &SqContext, i: u32) -> Result<(Pending, WriteRequest), Pending> {
    let slots = 1u32 << ctx.sq_log2_size;
    let at = ctx.sq_base + u64::from(i & (slots - 1)) * sqe::SIZE as u64;
    let mut p = Pending {
        sq_index: i,
        wr_id: 0,
        len: 0,
        opcode: 0,
        signaled: true,
        refused: Some(CqStatus::BadOpcode),
    };
    let Some(raw) = dma_read_array::<{ sqe::SIZE }>(dma, at) else {
        // The ring itself is out of reach: nothing to copy.
        return Err(p);
    };
    // The card's checks, in its order (docs/hw/layout.md): opcode, flags,
    // length; a refused descriptor's completion still carries its wr_id
    // and length, and the opcode only if it is one.
    p.wr_id = sqe::WR_ID.get(&raw);
    p.len = sqe::LENGTH.get(&raw) as u32;
    let d = match SqDescriptor::decode(&raw) {
        Ok(d) => d,
        Err(e) => {
            p.refused = Some(match e {
                layout::LayoutError::Unknown { .. } => CqStatus::BadOpcode,
                layout::LayoutError::Reserved { .. } => CqStatus::BadFlags,
                _ => CqStatus::BadLength,
            });
            if p.refused != Some(CqStatus::BadOpcode) {
                p.opcode = raw[0];
            }
            return Err(p);
        }
    };
    p.opcode = d.opcode.code();
    p.signaled = d.signaled;
    let data = if d.length == 0 {
        Some(Bytes::new())
    } else {
        dma_payload(dma, d.local_iova, d.length as usize)
    };
    let Some(data) = data else {
        p.refused = Some(CqStatus::BadLength);
        return Err(p);
    };
    p.refused = None;
    let wr = WriteRequest {
        wr_id: d.wr_id,
        data,
        remote_va: d.remote_va,
        rkey: d.rkey,
        imm: (d.opcode == layout::SqOpcode::WriteImm).then_some(d.imm),
    };
    Ok((p, wr))
}

fn cq_status(s: WcStatus) -> CqStatus {
    match s {
        WcStatus::Success => CqStatus::Success,
        WcStatus::RetryExceeded => CqStatus::RetryExceeded,
        WcStatus::RemoteAccessError => CqStatus::RemoteAccess,
        WcStatus::Flushed => CqStatus::Flushed,
    }
}

impl Engine {
    pub fn new(cfg: SoftNicConfig) -> std::io::Result<Engine> {
        let mut sockets = EvSockets::bind(cfg.ip, cfg.port, cfg.ev_ports, cfg.gso)?;
        // Where the kernel has UDP_GRO, a read takes a whole run of
        // datagrams a peer sent with segmentation offload (`receive`
        // splits it).
        sockets.own.enable_gro();
        let rx_size = if sockets.own.gro { GRO_BUFFER } else { MAX_DATAGRAM };
        // Each datagram read with room for the outer headers a card's MAC
        // would have seen before it: a frame made of it in place.
        let rx_headroom = datagram::outer_len(cfg.ip);
        // Only the NIC's own socket receives (the EV sockets only send).
        let rx_buffer = sockets.own.set_receive_buffer(super::RX_BUFFER)?;
        Ok(Engine {
            rx_buffer,
            profile: Profile::DEFAULT,
            sockets,
            local_mac: [0x02, 0, 0, 0, 0, 0],
            ack_every: 4,
            ack_delay: Duration::from_us(2),
            peers: vec![None; 256],
            mrs: HashMap::default(),
            cqs: HashMap::default(),
            ev_ring: None,
            staged: HashMap::default(),
            qps: BTreeMap::new(),
            unbuilt: HashMap::default(),
            endpoint: Endpoint::new(EndpointConfig {
                timeout: ENDPOINT_TIMEOUT,
                ..EndpointConfig::default()
            }),
            answer_to: VecDeque::new(),
            request_to: VecDeque::new(),
            endpoint_tos: None,
            ports_up: 1,
            peer_ports: HashMap::default(),
            port_held: HashMap::default(),
            own_requests: HashSet::default(),
            results: VecDeque::new(),
            dma: DmaMap::default(),
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            frame: Vec::with_capacity(MAX_DATAGRAM + 64),
            frames: BytesMut::with_capacity(FRAME_ARENA),
            tx: SendBatch::default(),
            rx_batch: Some(RecvBatch::framed(super::RX_BATCH, rx_size, rx_headroom)),
            rx_batch_headroom: rx_headroom,
            gathered: Vec::with_capacity(MAX_DATAGRAM),
            last_rx: Instant::ZERO,
            last_rx_empty: false,
            qpn_scratch: Vec::new(),
            stats: SoftStats::default(),
            irq: Arc::default(),
            cfg,
        })
    }

    /// The interrupt completions raise.
    pub fn interrupt(&self) -> &Arc<Interrupt> {
        &self.irq
    }

    /// The counters, the socket set's included.
    pub fn stats(&self) -> SoftStats {
        SoftStats {
            ev_port_unavailable: self.sockets.unavailable,
            ev_sockets: self.sockets.bound() as u64,
            rx_overflows: self.sockets.own.receive_drops().unwrap_or(0),
            ..self.stats
        }
    }

    /// The golden model's counters of QP `qpn` (the driver's number):
    /// retransmissions and their causes, RTOs, duplicates received.
    /// `None` if the QP is not enabled.
    pub fn qp_counters(&self, qpn: u32) -> Option<proto::model::Counters> {
        self.qps.get(&qpn).map(|q| *q.model.counters())
    }

    /// The IP traffic class byte (DSCP << 2 | ECN) of the last endpoint
    /// datagram (QPN 0x2) received; `None` before one.
    pub fn endpoint_tos(&self) -> Option<u8> {
        self.endpoint_tos
    }

    /// QP `qpn`'s congestion controller ("nscc", "fixed") and its window
    /// in bytes; `None` if the QP is not enabled.
    pub fn qp_window(&self, qpn: u32) -> Option<(&'static str, u64)> {
        self.qps.get(&qpn).and_then(|q| q.model.congestion_window())
    }

    /// QP `qpn` runs NSCC with `params` (`None`: the fixed window) from
    /// its next send context on.
    pub fn set_qp_nscc(&mut self, qpn: u32, params: Option<NsccParams>) {
        if let Ok(q) = u16::try_from(qpn) {
            self.staged.entry(q).or_default().nscc = params;
        }
    }

    pub fn port(&self) -> &UdpPort {
        &self.sockets.own
    }

    /// A DMA buffer the driver allocated (reachable by IOVA while alive).
    pub fn add_dma(&mut self, b: &DmaBuffer) {
        self.dma.add(b);
    }

    fn find_dma(&self, iova: u64, len: usize) -> Option<(DmaBuffer, usize)> {
        find_dma(&self.dma, iova, len)
    }

    // ---- config rows ----

    /// Apply a config row.
    pub fn row(&mut self, now: Instant, r: CfgRow) {
        let sel = r.index & INDEX_SELECT != 0;
        let idx = r.index & !INDEX_SELECT;
        match r.table {
            cfg_table::SQ_CTX => self.send_context(now, idx, &r),
            cfg_table::CQ_RING if sel => {
                if let Some(cq) = self.cqs.get_mut(&idx) {
                    if cq.set_consumer(r.get(config::ring_consumer::CONSUMER) as u32) > 0 {
                        self.irq.raise();
                    }
                }
            }
            cfg_table::CQ_RING => {
                let base = r.get(config::ring::BASE);
                let log2 = r.get(config::ring::LOG2_SLOTS);
                match self.ring_memory(base, log2, cqe::SIZE) {
                    Some((b, at)) => {
                        let old = self.cqs.insert(idx, RingWriter::new(b, at, log2 as u8));
                        self.stats.lost_completions += old.map_or(0, |o| o.backlog() as u64);
                    }
                    None => self.stats.bad_rows += 1,
                }
            }
            cfg_table::EV_RING if sel => {
                if let Some(ring) = &mut self.ev_ring {
                    ring.set_consumer(r.get(config::ring_consumer::CONSUMER) as u32);
                }
            }
            cfg_table::EV_RING => {
                let base = r.get(config::ring::BASE);
                let log2 = r.get(config::ring::LOG2_SLOTS);
                match self.ring_memory(base, log2, ev_event::SIZE) {
                    Some((b, at)) => self.ev_ring = Some(RingWriter::new(b, at, log2 as u8)),
                    None => self.stats.bad_rows += 1,
                }
            }
            cfg_table::ACK_PARAMS => {
                self.ack_every = (r.get(config::ack_params::EVERY) as u16).max(1);
                self.ack_delay = Duration::from_ps(r.get(config::ack_params::DELAY) * CORE_CLOCK_PS);
            }
            cfg_table::ACK_QP_INIT | cfg_table::RECV_QP => {
                self.staged.entry(idx).or_default().recv_psn = r.get(config::recv_init::START_PSN) as u32;
            }
            cfg_table::MR => self.memory_region(idx, &r),
            cfg_table::RETX_QP => {
                let s = self.staged.entry(idx).or_default();
                // As the card: an exponent above the model's cap is the cap.
                s.ack_timeout_exp =
                    (r.get(config::retx_qp::ACK_TIMEOUT_EXP) as u8).min(proto::model::MAX_ACK_TIMEOUT_EXP);
                s.reorder = r.get(config::retx_qp::REORDER) as u32;
                s.retry_linear = r.get(config::retx_qp::RETRY_LINEAR) as u8;
                s.retry_exp = r.get(config::retx_qp::RETRY_EXP) as u8;
            }
            cfg_table::RETX_GLOBAL => {}
            // The card's NSCC unit row: this engine runs the model's own
            // controller, set by `set_qp_nscc` from the same parameters.
            cfg_table::NSCC => {}
            cfg_table::CC => {
                let s = self.staged.entry(idx).or_default();
                s.min_cwnd = r.get(config::cc::MIN_CWND).max(1);
                s.max_cwnd = r.get(config::cc::MAX_CWND).max(s.min_cwnd);
            }
            cfg_table::ADDR if sel => {
                self.local_mac = mac_of(r.get(config::addr::MAC));
            }
            cfg_table::ADDR => {
                if let Some(slot) = self.peers.get_mut(usize::from(idx)) {
                    *slot = Some(Peer {
                        mac: mac_of(r.get(config::addr::MAC)),
                        ip: ip_of_row(&r, self.cfg.ip.is_ipv6()),
                    });
                }
            }
            cfg_table::EV if sel => {
                let qpn = u32::from(idx);
                let mask = r.get(config::ev_control::MASK) as u32;
                let value = r.get(config::ev_control::MATCH) as u32;
                if let Some(q) = self.qps.get_mut(&qpn) {
                    if r.get(config::ev_control::ALLOW) == 1 {
                        q.model.allow_evs(now, mask, value);
                    } else {
                        q.model.deny_evs(now, mask, value);
                    }
                }
            }
            cfg_table::EV => {
                let qp = idx >> 7;
                let slot = usize::from(idx & 0x7F);
                self.staged.entry(qp).or_default().evs[slot] = r.get(config::ev_value::VALUE) as u32;
            }
            _ => self.stats.bad_rows += 1,
        }
    }

    /// The memory of a ring of `2^log2` entries of `entry` bytes at
    /// `base` (`log2` 0..=16, as the ring row allows).
    fn ring_memory(&self, base: u64, log2: u64, entry: usize) -> Option<(DmaBuffer, usize)> {
        if log2 > u64::from(crate::ring::MAX_LOG2_SLOTS) {
            return None;
        }
        self.find_dma(base, entry << log2)
    }

    fn memory_region(&mut self, slot: u16, r: &CfgRow) {
        let mr = Mr {
            rkey: r.get(config::mr::RKEY) as u32,
            base: r.get(config::mr::BASE_VA),
            len: r.get(config::mr::LENGTH),
        };
        if let Some(old) = self.mrs.remove(&slot) {
            for q in self.qps.values_mut() {
                let _ = q.model.memory_mut().deregister(old.rkey);
            }
        }
        if r.get(config::mr::VALID) == 1 {
            for q in self.qps.values_mut() {
                if q.model
                    .memory_mut()
                    .register_deferred(mr.base, mr.len, mr.rkey)
                    .is_err()
                {
                    self.stats.bad_rows += 1;
                }
            }
            self.mrs.insert(slot, mr);
        }
    }

    /// A send-context row: enabled, the QP (re)starts with a new model;
    /// disabled, the QP stops (what it had in flight is abandoned, as the
    /// card's).
    fn send_context(&mut self, now: Instant, idx: u16, r: &CfgRow) {
        let qpn = u32::from(idx);
        self.qps.remove(&qpn);
        self.port_held.remove(&qpn);
        self.unbuilt.remove(&qpn);
        let ctx = match SqContext::decode(&r.data[..layout::sq_ctx::SIZE]) {
            Ok(c) => c,
            Err(_) => {
                self.stats.bad_rows += 1;
                return;
            }
        };
        if !ctx.enable {
            return;
        }
        match self.build_qp(now, qpn, ctx) {
            Some(q) => {
                // The EV set holds the values (its config's list moved into
                // it): backups included, each may leave from its own port.
                if let Some(set) = q.model.ev_set() {
                    for i in 0..set.len() as u16 {
                        self.sockets.allow((set.value(i) & 0xFFFF) as u16);
                    }
                }
                self.qps.insert(qpn, q);
                self.port_held.remove(&qpn);
                // Built while our port or its peer's are down: its EVs
                // start DENIED.
                self.hold_or_release(now, qpn);
            }
            None => {
                self.stats.bad_rows += 1;
                self.unbuilt.insert(qpn, ctx);
            }
        }
    }

    fn build_qp(&mut self, now: Instant, qpn: u32, ctx: SqContext) -> Option<SoftQp> {
        let peer = (*self.peers.get(usize::from(ctx.addr_index))?)?;
        let st = self.staged.get(&(qpn as u16)).cloned().unwrap_or_default();
        let n = usize::from(ctx.ev_count).clamp(1, 128);
        let off = self.wire_qpn_offset();
        let transport = match self.cfg.dialect {
            Dialect::Mrc10 => Transport::Mrc,
            Dialect::Legacy => Transport::MrcLegacy,
        };
        let mut s = QpSetup::new(transport, qpn + off, ctx.dest_qp);
        s.cfg.mtu = 1 << ctx.log2_mtu;
        s.cfg.seed = self.cfg.seed ^ u64::from(qpn);
        s.cfg.ack_every = self.ack_every;
        s.cfg.ack_delay = self.ack_delay;
        s.cfg.reorder_allowance = st.reorder.max(1);
        s.rtr.rq_psn = proto::Psn::new(st.recv_psn);
        s.rtr.mpr_units = ctx.send_mpr_units;
        s.rtr.max_wimm = MODEL_RECEIVES;
        s.rts.sq_psn = proto::Psn::new(ctx.start_psn);
        // RTO = 1.024 us x 2^exp: the row carries the exponent.
        s.rts.ack_timeout_exp = st.ack_timeout_exp;
        s.rts.retry_linear = st.retry_linear;
        s.rts.retry_exp = st.retry_exp;
        s.rts.send_mpr_units = ctx.send_mpr_units;
        s.rts.max_wimm = MODEL_RECEIVES;
        s.rts.evs = EvSetConfig {
            evs: st.evs[..n].to_vec(),
            seed: self.cfg.seed ^ u64::from(qpn) << 8,
            // The card's guard: a mark that would leave fewer GOOD EVs is
            // refused.
            min_active: u16::from(ctx.ev_min_active).min(n as u16),
            ..EvSetConfig::default()
        };
        // The card's CC gate is a fixed window (docs/hw/core.md: no
        // ACK-driven congestion control in the RTL yet); the soft NIC runs
        // the window the driver configured, but no more than its path
        // holds: nothing paces a soft NIC's sends, so a window larger than
        // the peer's socket buffer overflows it on every burst, and a fixed
        // window does not shrink after the losses (`path_window`).
        let ceiling = st.max_cwnd.min(path_window(self.rx_buffer, s.cfg.mtu));
        s.rts.cc = match st.nscc {
            Some(p) => CcConfig::Nscc(nscc_config(&p, ceiling, s.cfg.mtu)),
            None => CcConfig::Fixed { window: ceiling },
        };
        let mut model: Qp = s.bring_up(now).ok()?;
        for mr in self.mrs.values() {
            model.memory_mut().register_deferred(mr.base, mr.len, mr.rkey).ok()?;
        }
        for _ in 0..MODEL_RECEIVES {
            model.post_recv(0).ok()?;
        }
        Some(SoftQp {
            model,
            ctx,
            peer: SocketAddr::new(peer.ip, self.cfg.port),
            peer_mac: peer.mac,
            sq_read: 0,
            pending: VecDeque::new(),
        })
    }

    pub fn wire_qpn_offset(&self) -> u32 {
        match self.cfg.dialect {
            Dialect::Mrc10 => WIRE_QPN_OFFSET,
            Dialect::Legacy => 0,
        }
    }

    // ---- send queue ----

    /// A doorbell: read the new descriptors and hand them to the model.
    pub fn doorbell(&mut self, now: Instant, qp: u8, producer: u32) {
        let qpn = u32::from(qp);
        let Some(q) = self.qps.get_mut(&qpn) else {
            self.stats.bad_doorbells += 1;
            if let Some(cq) = self.unbuilt.get(&qpn).map(|c| c.cq_index) {
                self.complete(cq, qpn, CqStatus::BadDoorbell, 0, 0, 0, None, producer);
            }
            return;
        };
        let slots = 1u32 << q.ctx.sq_log2_size;
        let oldest = q.pending.front().map_or(q.sq_read, |p| p.sq_index);
        if producer.wrapping_sub(oldest) > slots || producer.wrapping_sub(q.sq_read) > slots {
            self.stats.bad_doorbells += 1;
            let cq = q.ctx.cq_index;
            self.complete(cq, qpn, CqStatus::BadDoorbell, 0, 0, 0, None, producer);
            return;
        }
        let mut bad = 0;
        while q.sq_read != producer {
            let i = q.sq_read;
            q.sq_read = i.wrapping_add(1);
            match read_descriptor(&self.dma, &q.ctx, i) {
                Ok((mut p, wr)) => {
                    if q.model.post_write(now, wr).is_err() {
                        p.refused = Some(CqStatus::Flushed);
                    }
                    q.pending.push_back(p);
                }
                Err(p) => {
                    bad += 1;
                    q.pending.push_back(p);
                }
            }
        }
        self.stats.bad_descriptors += bad;
        self.drain_refused(qpn);
    }

    /// Complete refused descriptors that reached the head of their QP.
    fn drain_refused(&mut self, qpn: u32) {
        loop {
            let Some(q) = self.qps.get_mut(&qpn) else { return };
            let Some(&p) = q.pending.front() else { return };
            let Some(status) = p.refused else { return };
            q.pending.pop_front();
            let cq = q.ctx.cq_index;
            self.complete(cq, qpn, status, p.opcode, p.wr_id, p.len, None, p.sq_index);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn complete(
        &mut self,
        cq: u16,
        qp: u32,
        status: CqStatus,
        opcode: u8,
        wr_id: u64,
        byte_len: u32,
        imm: Option<u32>,
        sq_index: u32,
    ) {
        let c = layout::Completion {
            phase: false,
            status,
            opcode,
            qp,
            wr_id,
            byte_len,
            imm,
            sq_index,
        };
        match (self.cqs.get_mut(&cq), c.encode()) {
            (Some(ring), Ok(e)) => {
                if ring.push(e) > 0 {
                    self.irq.raise();
                }
                self.stats.completions += 1;
            }
            _ => self.stats.lost_completions += 1,
        }
    }

    // ---- the packet path ----

    /// Everything due at `now`: datagrams waiting on the socket, timers,
    /// events, placements, and packets to send. Returns whether anything
    /// happened.
    pub fn step(&mut self, now: Instant) -> bool {
        let busy = self.receive(now);
        busy | self.step_tx(now)
    }

    /// [`Engine::step`] for a program's poll that found its CQ empty: the
    /// socket is read unless the last read found it empty less than
    /// [`POLL_RX_INTERVAL`] ago. A program waiting for its completions
    /// polls in a loop: reading the socket at every poll spent most of
    /// its time in empty `recvmmsg` calls (3.6 per 64 B WRITE at depth
    /// 64), and on a shared host that time is taken from the peer.
    pub fn step_polled(&mut self, now: Instant) -> bool {
        let since = now.as_ns().saturating_sub(self.last_rx.as_ns());
        let busy = if !self.last_rx_empty || since >= POLL_RX_INTERVAL.as_ns() {
            self.receive(now)
        } else {
            false
        };
        busy | self.step_tx(now)
    }

    /// After a doorbell: [`Engine::step_tx`], and the socket too if it
    /// was last read [`DOORBELL_RX_INTERVAL`] ago or more. A program
    /// posting in a loop keeps the NIC's thread napping and reads the
    /// socket only when it polls; without this, the ACKs of its WRITEs
    /// would wait unread (their RTOs firing) and the socket's buffer fill.
    ///
    /// What it produced is left in the send batch ([`Engine::unsent`]):
    /// the caller sends it ([`Engine::flush`]) or leaves it to the
    /// program's next poll, so WRITEs posted one by one between two polls
    /// leave together (one `sendmmsg`, and runs for segmentation offload)
    /// instead of one system call each.
    pub fn step_doorbell(&mut self, now: Instant) -> bool {
        let busy = if now.as_ns().saturating_sub(self.last_rx.as_ns()) >= DOORBELL_RX_INTERVAL.as_ns() {
            self.receive(now)
        } else {
            false
        };
        busy | self.step_tx_unsent(now)
    }

    /// After a polling program's doorbell: [`Engine::step_doorbell`] if
    /// the socket was last read [`DOORBELL_RX_INTERVAL`] ago or more (a
    /// program posting in a loop), else nothing: the packets the doorbell
    /// allows are made at the program's next poll ([`Engine::step_polled`]),
    /// with those of the doorbells in between, in one pass over the QPs
    /// instead of one pass per doorbell. Returns whether it stepped.
    pub fn step_doorbell_polled(&mut self, now: Instant) -> bool {
        if now.as_ns().saturating_sub(self.last_rx.as_ns()) < DOORBELL_RX_INTERVAL.as_ns() {
            return false;
        }
        self.step_doorbell(now);
        true
    }

    /// Datagrams produced and not yet sent.
    pub fn unsent(&self) -> usize {
        self.tx.len()
    }

    /// [`Engine::step`] without reading the socket: timers, events,
    /// placements and sends (after a doorbell, whose caller reads the
    /// socket when it polls: an empty read costs a system call).
    ///
    /// While the port is down the QPs are held: nothing can leave, so
    /// their timers do not run (no retransmission timeout is spent on a
    /// packet the port could not send) and they are not asked for packets;
    /// what they hold leaves when the port is up.
    pub fn step_tx(&mut self, now: Instant) -> bool {
        let busy = self.step_tx_unsent(now);
        self.flush();
        busy
    }

    /// [`Engine::step_tx`] leaving what it produced in the send batch.
    fn step_tx_unsent(&mut self, now: Instant) -> bool {
        let mut busy = false;
        let held = !self.port_is_up();
        if !held {
            for q in self.qps.values_mut() {
                if q.model.poll_timeout().is_some_and(|t| t <= now) {
                    q.model.handle_timeout(now);
                    busy = true;
                }
            }
        }
        // The QP numbers in a list kept between passes (a program's poll
        // steps the engine each time: no allocation per poll); `service`
        // needs the whole engine.
        let mut qpns = std::mem::take(&mut self.qpn_scratch);
        qpns.clear();
        qpns.extend(self.qps.keys().copied());
        for &n in &qpns {
            busy |= self.service(now, n, !held);
        }
        self.qpn_scratch = qpns;
        busy |= self.service_endpoint(now);
        busy
    }

    /// The next time a model wants `handle_timeout`.
    pub fn next_timeout(&self) -> Option<Instant> {
        // Held while the port is down (`step_tx`).
        let qps = if self.port_is_up() {
            self.qps.values().filter_map(|q| q.model.poll_timeout()).min()
        } else {
            None
        };
        [qps, self.endpoint.poll_timeout()].into_iter().flatten().min()
    }

    fn receive(&mut self, now: Instant) -> bool {
        self.last_rx = now;
        let mut batch = std::mem::take(&mut self.rx_batch);
        let got = match batch.as_mut().map(|b| self.sockets.own.recv_batch(b)) {
            Some(Ok(n)) => n,
            Some(Err(_)) => {
                self.stats.socket_errors += 1;
                0
            }
            None => 0,
        };
        if let Some(b) = &mut batch {
            for i in 0..b.got.len() {
                let r = b.got[i];
                if !self.port_is_up() {
                    // The port is down: whatever reached it is lost, each
                    // datagram of a run counted.
                    let n = if r.segment == 0 {
                        1
                    } else {
                        r.len.div_ceil(r.segment).max(1)
                    };
                    self.stats.rx_datagrams += n as u64;
                    self.stats.rx_port_down += n as u64;
                    continue;
                }
                if r.truncated {
                    self.stats.rx_datagrams += 1;
                    self.stats.rx_dropped += 1;
                    continue;
                }
                // Each datagram (a run handed up whole by UDP_GRO: each
                // `segment` bytes but the last): in place with room for
                // its outer headers where the batch could lay it so,
                // else copied out.
                for (at, len) in r.datagrams() {
                    let one = Received { len, ..r };
                    if let Some(frame) = b.frame(i, at, len) {
                        self.deliver(now, Arrived::InPlace(frame), one);
                        continue;
                    }
                    match b.datagram_at(i, at, len) {
                        Some(d) => self.deliver(now, Arrived::Copied(d), one),
                        None => {
                            let mut copy = std::mem::take(&mut self.gathered);
                            b.copy_datagram(i, at, len, &mut copy);
                            self.deliver(now, Arrived::Copied(&copy), one);
                            self.gathered = copy;
                        }
                    }
                }
            }
        }
        self.rx_batch = batch;
        self.last_rx_empty = got == 0;
        got > 0
    }

    /// One datagram: make the frame a card's MAC would have seen (the
    /// sender's IP and source port from the socket, the traffic class
    /// from the ancillary data) and give it to the QP the BTH names.
    fn deliver(&mut self, now: Instant, arrived: Arrived<'_>, r: Received) {
        self.stats.rx_datagrams += 1;
        let headroom = self.rx_batch_headroom;
        let payload = match &arrived {
            Arrived::InPlace(f) => &f[headroom..],
            Arrived::Copied(p) => p,
        };
        // BTH dest QP: bytes 5..8 of the transport.
        let Some(dq) = payload.get(5..8) else {
            self.stats.rx_dropped += 1;
            return;
        };
        let wire_qpn = u32::from_be_bytes([0, dq[0], dq[1], dq[2]]);
        let at = datagram::Arrival {
            ip: self.cfg.ip,
            mac: self.local_mac,
        };
        if datagram::ip_pair(r.from.ip(), at.ip).is_none() {
            self.stats.rx_dropped += 1;
            return;
        }
        if wire_qpn == ENDPOINT_QPN && self.cfg.dialect == Dialect::Mrc10 {
            self.endpoint_tos = Some(r.tos);
            if datagram::from_datagram(payload, r.from, at, r.tos, &mut self.frame).is_some() {
                self.endpoint_request(now, r.from);
            }
            return;
        }
        let Some(qpn) = wire_qpn.checked_sub(self.wire_qpn_offset()) else {
            self.stats.rx_unknown_qp += 1;
            return;
        };
        let Some(q) = self.qps.get_mut(&qpn) else {
            self.stats.rx_unknown_qp += 1;
            return;
        };
        // The frame: the datagram as it was read, its outer headers
        // written in the room left before it, or rebuilt in the arena
        // (`datagram::frame_in`). An MRC 1.0 data packet's payload is a
        // slice of it, which the model keeps until the engine places its
        // bytes in host memory (one copy, the placement's), not copied
        // out of the frame by the parser.
        let frame = match arrived {
            Arrived::InPlace(f) => datagram::frame_in_place(f, r.from, at, r.tos),
            Arrived::Copied(p) => datagram::frame_in(p, r.from, at, r.tos, &mut self.frames),
        };
        let Some(frame) = frame else {
            self.stats.rx_dropped += 1;
            return;
        };
        let taken = if self.cfg.dialect == Dialect::Mrc10 && frame_is_mrc10(&frame) {
            // What `QueuePair::handle_frame` does, but for the payload's
            // copy: the same checks (the ICRC's included), the same
            // counter for a frame that does not parse.
            let profile = q.model.config().profile;
            let mut parsed = ParsedFrame::new();
            match mrc10_frame::parse_frame_checked_into(&frame, &profile, &mut parsed) {
                Ok(()) => {
                    let mut pkt = parsed.packet;
                    pkt.payload = frame.slice(parsed.payload);
                    q.model.handle_packet(now, Packet::Mrc10(pkt))
                }
                Err(e) => {
                    let e = RxError::Wire(e);
                    q.model.count_drop(&e);
                    Err(e)
                }
            }
        } else {
            q.model.handle_frame(now, &frame)
        };
        if taken.is_err() {
            self.stats.rx_dropped += 1;
        }
    }

    /// A datagram for the endpoint (its frame in `self.frame`): a request
    /// is answered to where it came from.
    fn endpoint_request(&mut self, now: Instant, from: SocketAddr) {
        let pkt = match mrc10_frame::parse_frame(&self.frame, &self.profile) {
            Ok((p, _)) => p,
            Err(_) => {
                self.stats.rx_dropped += 1;
                return;
            }
        };
        let dropped = self.endpoint.counters().answers_dropped;
        if self.endpoint.handle_packet(now, &pkt).is_err() {
            self.stats.rx_dropped += 1;
            return;
        }
        if let proto::wire::mrc10::Headers::Endpoint { erth, .. } = pkt.headers {
            if erth.op == proto::wire::mrc10::EndpointOp::PortStatusUpdate {
                // A request tells us its sender's ports, and so does the
                // answer to ours.
                self.peer_port_status(now, from.ip(), erth.port_status_mask);
            }
        }
        if pkt.bth.opcode == Opcode::EndpointRequest && self.endpoint.counters().answers_dropped == dropped {
            // The requester's address: its IP and the RoCEv2 port (its
            // request left from the port of the EV probed).
            let to = SocketAddr::new(from.ip(), self.cfg.port);
            self.answer_to.push_back((to, [0; 6]));
        }
        self.stats.endpoint_requests += 1;
    }

    /// Send the endpoint's answers and requests, and give up requests
    /// unanswered for [`ENDPOINT_TIMEOUT`].
    fn service_endpoint(&mut self, now: Instant) -> bool {
        let mut busy = false;
        if self.endpoint.poll_timeout().is_some_and(|t| t <= now) {
            self.endpoint.handle_timeout(now);
            busy = true;
        }
        self.take_endpoint_results();
        while let Some(pkt) = self.endpoint.poll_transmit(now) {
            busy = true;
            let to = if pkt.bth.opcode == Opcode::EndpointRequest {
                self.request_to.pop_front().map(|(a, dscp)| (a, [0; 6], dscp))
            } else {
                self.answer_to.pop_front().map(|(a, mac)| (a, mac, None))
            };
            match to {
                Some((to, mac, dscp)) => self.transmit_dscp(&Packet::Mrc10(pkt), to, mac, dscp),
                None => self.stats.tx_dropped += 1,
            }
        }
        busy
    }

    /// An endpoint request of our own to the soft NIC at `peer` (its
    /// QPN 0x2, on our RoCEv2 port): probe EV `ev` leaving on `port`, or
    /// tell it which of our ports are up, on EV `ev`. Sent now; its result
    /// comes from [`Engine::endpoint_result`] (`TimedOut` after
    /// [`ENDPOINT_TIMEOUT`]).
    pub fn send_endpoint_request(
        &mut self,
        now: Instant,
        req: crate::device::EndpointRequest,
    ) -> Result<u16, EndpointError> {
        use crate::device::EndpointRequest as R;
        // Six bits (`SoftNic::endpoint_request` refuses more).
        let dscp = match req {
            R::EvProbe { dscp, .. } | R::PortStatusUpdate { dscp, .. } => dscp.map(|d| d & crate::device::MAX_DSCP),
        };
        let (peer, id) = match req {
            R::EvProbe { peer, ev, port, .. } => {
                // The EV as the wire carries it: the source port over
                // IPv4, with the flow label over IPv6.
                let format = if peer.is_ipv4() {
                    EvFormat::SourcePort16
                } else {
                    EvFormat::SourcePortFlowLabel32
                };
                (peer, self.endpoint.probe_ev(now, ev, port, format)?)
            }
            R::PortStatusUpdate { peer, ev, .. } => (peer, self.endpoint.port_status_update(now, ev)?),
        };
        self.request_to.push_back((SocketAddr::new(peer, self.cfg.port), dscp));
        self.service_endpoint(now);
        self.flush();
        Ok(id)
    }

    /// The oldest result of our endpoint requests not yet taken.
    pub fn endpoint_result(&mut self) -> Option<EndpointResult> {
        self.take_endpoint_results();
        self.results.pop_front()
    }

    /// Move the endpoint's results to the program's queue, counting (and
    /// keeping out of it) those of the NIC's own Port Status Updates.
    fn take_endpoint_results(&mut self) {
        while let Some(r) = self.endpoint.poll_result() {
            let id = match r {
                EndpointResult::EvProbe { request_id, .. }
                | EndpointResult::PortStatus { request_id, .. }
                | EndpointResult::TimedOut { request_id, .. } => request_id,
            };
            if self.own_requests.remove(&id) {
                match r {
                    EndpointResult::TimedOut { .. } => self.stats.port_updates_timed_out += 1,
                    _ => self.stats.port_updates_answered += 1,
                }
                continue;
            }
            if self.results.len() >= RESULT_QUEUE {
                self.stats.endpoint_results_dropped += 1;
            } else {
                self.results.push_back(r);
            }
        }
    }

    // ---- ports ----

    fn port_is_up(&self) -> bool {
        self.ports_up & 1 != 0
    }

    /// Whether port `port` is administratively up (`None`: no such port;
    /// a soft NIC has port 0 only).
    pub fn port_up(&self, port: u8) -> Option<bool> {
        (port == 0).then_some(self.port_is_up())
    }

    /// The ports of the NIC at `peer` as its last Port Status Update said
    /// (`None`: it sent none).
    pub fn peer_ports_up(&self, peer: IpAddr) -> Option<u32> {
        self.peer_ports.get(&peer).copied()
    }

    /// Take port `port` down or up (docs/host.md, "Ports"). Down: every
    /// peer we have a QP with is sent a Port Status Update with the new
    /// mask while the port still sends, then the port stops (nothing sent,
    /// nothing taken: counted `tx_port_down`, `rx_port_down`), every QP's
    /// EVs on it are DENIED (`EvSet::deny_port`) and the QPs are held
    /// ([`Engine::step_tx`]). Up: the port sends and takes again, the EVs
    /// the NIC denied are allowed, the peers are told, and the QPs send
    /// what they hold. Setting the state the port has changes nothing.
    pub fn set_port_up(&mut self, now: Instant, port: u8, up: bool) -> Result<(), PortError> {
        if port != 0 {
            return Err(PortError::NoSuchPort(port));
        }
        if self.port_is_up() == up {
            return Ok(());
        }
        let mask = if up { self.ports_up | 1 } else { self.ports_up & !1 };
        self.endpoint.set_ports_up(mask);
        if up {
            self.ports_up = mask;
            self.stats.port_ups += 1;
            let qpns: Vec<u32> = self.qps.keys().copied().collect();
            for n in qpns {
                self.hold_or_release(now, n);
            }
            self.tell_peers(now);
        } else {
            // The update leaves before the port stops.
            self.tell_peers(now);
            self.ports_up = mask;
            self.stats.port_downs += 1;
            let qpns: Vec<u32> = self.qps.keys().copied().collect();
            for n in qpns {
                self.hold_or_release(now, n);
            }
        }
        // The EV events of the denials and allowances, and what the QPs
        // send (nothing while down).
        self.step_tx(now);
        Ok(())
    }

    /// A Port Status Update with our mask to every peer we have a QP with,
    /// on the first EV of one of its QPs (the path its traffic takes).
    fn tell_peers(&mut self, now: Instant) {
        if self.cfg.dialect != Dialect::Mrc10 {
            // The legacy profile has no endpoint (QPN 0x2): nobody to tell.
            return;
        }
        let mut peers: Vec<(IpAddr, u32)> = Vec::new();
        for q in self.qps.values() {
            let ev = q.model.ev_set().map_or(u32::from(self.cfg.port), |s| s.value(0));
            if !peers.iter().any(|(ip, _)| *ip == q.peer.ip()) {
                peers.push((q.peer.ip(), ev));
            }
        }
        for (peer, ev) in peers {
            match self.endpoint.port_status_update(now, ev) {
                Ok(id) => {
                    self.own_requests.insert(id);
                    self.request_to.push_back((SocketAddr::new(peer, self.cfg.port), None));
                    self.stats.port_updates_sent += 1;
                }
                // Too many requests await answers: this peer learns the
                // state from its QP's losses (or the next update).
                Err(_) => self.stats.port_updates_refused += 1,
            }
        }
        self.service_endpoint(now);
        self.flush();
    }

    /// Peer `peer` says its ports are `mask`: with none up, our QPs to it
    /// deny their EVs (every path to it is dead); with one up again, the
    /// denials are lifted. Which of its ports an EV of ours reaches is the
    /// fabric's business (MRC 1.0's EVs name the sender's port), so a peer
    /// with some ports down and some up changes nothing here.
    fn peer_port_status(&mut self, now: Instant, peer: IpAddr, mask: u32) {
        self.stats.peer_port_updates += 1;
        if self.peer_ports.insert(peer, mask) == Some(mask) {
            return;
        }
        let qpns: Vec<u32> = self
            .qps
            .iter()
            .filter(|(_, q)| q.peer.ip() == peer)
            .map(|(&n, _)| n)
            .collect();
        for n in qpns {
            self.hold_or_release(now, n);
        }
    }

    /// Deny QP `qpn`'s EVs if our port or every port of its peer is down
    /// (recording which the NIC denied), or lift the NIC's denials if
    /// neither is. The EV events reach the EV-event ring at the QP's next
    /// service.
    fn hold_or_release(&mut self, now: Instant, qpn: u32) {
        let own_down = !self.port_is_up();
        let Some(q) = self.qps.get_mut(&qpn) else { return };
        let peer_down = self.peer_ports.get(&q.peer.ip()) == Some(&0);
        let held = self.port_held.contains_key(&qpn);
        if own_down || peer_down {
            if held {
                return;
            }
            let Some(set) = q.model.ev_set() else { return };
            let values: Vec<u32> = (0..set.len() as u16)
                .filter(|&i| set.state(i) != EvState::Denied)
                .map(|i| set.value(i))
                .collect();
            if own_down {
                // MRC 1.0's port status: every EV on our port.
                q.model.deny_port_evs(now, 0);
            } else {
                for &v in &values {
                    q.model.deny_evs(now, u32::MAX, v);
                }
            }
            self.port_held.insert(qpn, values);
        } else if let Some(values) = self.port_held.remove(&qpn) {
            // Only the NIC's own denials: an EV the control plane denied
            // stays DENIED (the model's `allow_port` would lift it too).
            for v in values {
                q.model.allow_evs(now, u32::MAX, v);
            }
        }
    }

    /// One QP: place what it accepted, report its events, send what it
    /// has (if `send`: not while the port is down). Returns whether
    /// anything happened.
    fn service(&mut self, now: Instant, qpn: u32, send: bool) -> bool {
        let mut busy = false;
        let Some(q) = self.qps.get_mut(&qpn) else { return false };
        if q.model.memory().has_placements() {
            let placements = q.model.memory_mut().take_placements();
            for p in placements {
                let base = self.mrs.values().find(|m| m.rkey == p.rkey).map(|m| m.base);
                let ok = base.and_then(|b| self.find_dma(b + p.offset, p.bytes.len()));
                match ok {
                    Some((buf, off)) if buf.write(off, &p.bytes).is_ok() => {
                        self.stats.placed_bytes += p.bytes.len() as u64
                    }
                    _ => self.stats.lost_placements += 1,
                }
            }
            busy = true;
        }
        while let Some(ev) = self.qps.get_mut(&qpn).and_then(|q| q.model.poll_event()) {
            busy = true;
            self.event(qpn, ev);
        }
        self.drain_refused(qpn);
        while let Some(q) = self.qps.get_mut(&qpn).filter(|_| send) {
            let Some(pkt) = q.model.poll_transmit(now) else { break };
            let (peer, peer_mac) = (q.peer, q.peer_mac);
            busy = true;
            self.transmit(&pkt, peer, peer_mac);
        }
        busy
    }

    fn event(&mut self, qpn: u32, ev: Event) {
        match ev {
            Event::SendCompleted(c) => {
                // Refused descriptors ahead of this WRITE complete first.
                self.drain_refused(qpn);
                let Some(q) = self.qps.get_mut(&qpn) else { return };
                let Some(p) = q.pending.pop_front() else {
                    self.stats.lost_completions += 1;
                    return;
                };
                if p.wr_id != c.wr_id {
                    // The model completes in posting order: a mismatch is
                    // a completion it lost (its event queue overflowed).
                    self.stats.completion_mismatches += 1;
                }
                let cq = q.ctx.cq_index;
                let status = cq_status(c.status);
                if p.signaled || status != CqStatus::Success {
                    self.complete(cq, qpn, status, p.opcode, p.wr_id, p.len, None, p.sq_index);
                }
            }
            Event::RecvCompleted(c) => {
                let Some(q) = self.qps.get_mut(&qpn) else { return };
                let _ = q.model.post_recv(0);
                let cq = q.ctx.cq_index;
                if c.status == WcStatus::Success {
                    self.complete(
                        cq,
                        qpn,
                        CqStatus::Success,
                        sqe::OP_WRITE_IMM,
                        0,
                        c.len,
                        c.imm.or(Some(0)),
                        0,
                    );
                }
            }
            Event::EvStateChanged(ch) => self.ev_event(qpn, &ch),
            Event::ProbeRtt { .. } | Event::StateChanged { .. } => {}
        }
    }

    fn ev_event(&mut self, qpn: u32, ch: &EvStateChange) {
        let Some(ring) = &mut self.ev_ring else { return };
        let new_state = match ch.to {
            EvState::Good => EvNewState::Good,
            EvState::AssumedBad => EvNewState::AssumedBad,
            EvState::Denied => EvNewState::Denied,
        };
        let reason = match ch.reason {
            EvChangeReason::Loss | EvChangeReason::Trim | EvChangeReason::Stall | EvChangeReason::AlwaysSkip => {
                EvReason::Loss
            }
            EvChangeReason::Timeout => EvReason::Timeout,
            EvChangeReason::ProbeOk | EvChangeReason::Promoted => EvReason::ProbeOk,
            EvChangeReason::Denied | EvChangeReason::Allowed => EvReason::Control,
        };
        let e = EvEvent {
            phase: false,
            new_state,
            reason,
            qp: qpn,
            ev: ch.ev,
            ev_index: (ch.ev_index & 0x7F) as u8,
            time_ns: ch.at.as_ns() as u32,
        };
        if let Ok(b) = e.encode() {
            // As the card: an event the ring has no room for is lost, and
            // counted (`ev_event_lost`), not held back.
            if ring.push_or_drop(b) {
                self.stats.ev_events += 1;
            } else {
                self.stats.ev_events_lost += 1;
            }
            // A program asleep on its EV-event CQ's channel wakes for it.
            self.irq.raise();
        }
    }

    /// Emit `pkt`'s frame and send its UDP payload (BTH to ICRC) from the
    /// socket of its EV. The ICRC covers the UDP ports: it is computed over
    /// the source port the datagram really leaves from and the RoCEv2
    /// destination port (4791, whatever `cfg.port` is).
    fn transmit(&mut self, pkt: &Packet, peer: SocketAddr, peer_mac: [u8; 6]) {
        self.transmit_dscp(pkt, peer, peer_mac, None);
    }

    /// [`Engine::transmit`] with DSCP `dscp` in the datagram's traffic
    /// class instead of the packet's (its ECN bits kept).
    fn transmit_dscp(&mut self, pkt: &Packet, peer: SocketAddr, peer_mac: [u8; 6], dscp: Option<u8>) {
        let Some(ip) = datagram::ip_pair(self.cfg.ip, peer.ip()) else {
            self.stats.tx_dropped += 1;
            return;
        };
        let encap = Encap {
            src_mac: self.local_mac,
            dst_mac: peer_mac,
            ip,
        };
        if !self.port_is_up() {
            self.stats.tx_port_down += 1;
            return;
        }
        if self.cfg.tx_loss > 0.0 && self.rng.gen::<f64>() < self.cfg.tx_loss {
            self.stats.tx_lost += 1;
            return;
        }
        // The EV's own socket is bound to the EV's port itself; without
        // one the packet leaves from the NIC's port.
        let (_, src) = self.sockets.for_ev((pkt.ev() & 0xFFFF) as u16);
        if self.tx.len() >= SEND_BATCH {
            self.flush();
        }
        let o = self.tx.push();
        let out = match pkt {
            // A large payload leaves from host memory (an `iovec` of its
            // own): not copied into the frame first.
            Packet::Mrc10(m) if m.payload.len() >= datagram::GATHER_MIN_PAYLOAD => {
                let (out, split) =
                    datagram::to_datagram_around_payload(m, &encap, &self.profile, Some(src), &mut o.frame);
                o.payload = m.payload.clone();
                o.split = split;
                self.stats.tx_payloads_gathered += 1;
                out
            }
            Packet::Mrc10(m) => datagram::to_datagram(m, &encap, &self.profile, Some(src), &mut o.frame),
            Packet::Roce(r) => datagram::legacy_to_datagram(r, &encap, Some(src), &mut o.frame),
        };
        o.payload_at = out.payload_at;
        o.to = peer;
        o.tos = dscp.map_or(out.tos, |d| d << 2 | (out.tos & ECN_BITS));
        o.src_port = src;
    }

    /// Send the datagrams waiting in the batch: per socket, as few system
    /// calls as the kernel takes ([`UdpPort::send_batch`]).
    pub fn flush(&mut self) {
        if self.tx.is_empty() {
            return;
        }
        let mut out = SendOutcome::default();
        for (src, from, to) in self.tx.runs() {
            self.sockets.by_port(src).send_batch(&mut self.tx, from, to, &mut out);
        }
        self.tx.clear();
        self.stats.tx_datagrams += out.sent;
        self.stats.tx_busy += out.busy;
        self.stats.tx_too_big += out.too_big;
        self.stats.socket_errors += out.errors;
        self.stats.gso_refused += out.gso_refused;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, UdpSocket};

    /// libmrc's NSCC parameters reach the model's as documented, zeros
    /// taking the defaults.
    #[test]
    fn nscc_parameters_map_onto_the_models() {
        let p = NsccParams {
            base_rtt_ns: 20_000,
            target_delay_ns: 3_000,
            disable_qa: true,
            qa_gate: 5,
            qa_threshold_ns: 9_000,
            gamma: 0.25,
            max_md_jump: 0.125,
            ..NsccParams::default()
        };
        let c = nscc_config(&p, 300_000, 4096);
        assert_eq!(c.base_rtt, Duration::from_us(20));
        assert_eq!(c.target_delay, Duration::from_us(3));
        assert_eq!(
            c.quick_adapt,
            QuickAdapt {
                enabled: false,
                gate: 5,
                threshold: Duration::from_us(9)
            }
        );
        assert_eq!((c.decrease_gain, c.max_cut), (0.25, 0.125));
        assert_eq!((c.max_cwnd, c.init_cwnd, c.min_cwnd), (300_000, 200_000, 512));
        assert_eq!(c.increase_bytes, 4096);
        let d = nscc_config(&NsccParams::default(), 300_000, 4096);
        assert_eq!(d.base_rtt, Duration::from_ns(u64::from(NSCC_DEFAULT_BASE_RTT_NS)));
        assert_eq!(
            d.target_delay,
            Duration::from_ns(u64::from(NSCC_DEFAULT_BASE_RTT_NS) / 2)
        );
        assert_eq!(
            (d.decrease_gain, d.max_cut),
            (f64::from(NSCC_DEFAULT_GAMMA), NSCC_MAX_CUT)
        );
        assert!(d.quick_adapt.enabled);
        assert!(CcConfig::Nscc(d).validate().is_ok());
    }

    /// A program's poll reads the socket unless the last read found it
    /// empty less than `POLL_RX_INTERVAL` ago: a program waiting for its
    /// completions does not spend its time in empty reads, and what
    /// arrives is read within the interval.
    #[test]
    fn a_poll_after_an_empty_read_leaves_the_socket_for_the_interval() {
        let ip = IpAddr::V4(Ipv4Addr::new(127, 0, 232, 1));
        let cfg = SoftNicConfig {
            ip,
            port: 47_232,
            ..SoftNicConfig::default()
        };
        let mut e = Engine::new(cfg).expect("bind 127.0.232.1:47232");
        let peer = UdpSocket::bind((Ipv4Addr::new(127, 0, 232, 2), 0)).unwrap();
        let send = || {
            // Too short to be MRC: read, counted, dropped.
            peer.send_to(&[0u8; 3], (ip, 47_232)).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let t0 = Instant::ZERO + Duration::from_ms(1);
        e.step_polled(t0);
        assert_eq!(e.stats().rx_datagrams, 0, "nothing sent yet: an empty read");
        send();
        e.step_polled(t0 + Duration::from_us(1));
        assert_eq!(e.stats().rx_datagrams, 0, "read empty 1 us ago: not read again");
        e.step_polled(t0 + POLL_RX_INTERVAL);
        assert_eq!(e.stats().rx_datagrams, 1, "the interval passed: read");
        send();
        e.step_polled(t0 + POLL_RX_INTERVAL + Duration::from_ns(100));
        assert_eq!(
            e.stats().rx_datagrams,
            2,
            "the last read found a datagram: read at once"
        );
    }

    /// A doorbell reads the socket only when it has not been read for
    /// `DOORBELL_RX_INTERVAL`: a program that posts without polling still
    /// has its NIC's datagrams read, and back-to-back doorbells do not
    /// each pay an empty read.
    #[test]
    fn a_doorbell_reads_the_socket_after_the_interval() {
        let ip = IpAddr::V4(Ipv4Addr::new(127, 0, 231, 1));
        let cfg = SoftNicConfig {
            ip,
            port: 47_231,
            ..SoftNicConfig::default()
        };
        let mut e = Engine::new(cfg).expect("bind 127.0.231.1:47231");
        let peer = UdpSocket::bind((Ipv4Addr::new(127, 0, 231, 2), 0)).unwrap();
        let send = |n: usize| {
            for _ in 0..n {
                // Too short to be MRC: read, counted, dropped.
                peer.send_to(&[0u8; 3], (ip, 47_231)).unwrap();
            }
            // Loopback delivers at once; leave it a moment anyway.
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let t0 = Instant::ZERO + DOORBELL_RX_INTERVAL;
        send(2);
        e.step_doorbell(t0);
        assert_eq!(e.stats().rx_datagrams, 2, "not read for an interval: read");
        send(1);
        e.step_doorbell(t0 + Duration::from_us(10));
        assert_eq!(e.stats().rx_datagrams, 2, "read 10 us ago: left for the next poll");
        e.step_doorbell(t0 + DOORBELL_RX_INTERVAL);
        assert_eq!(e.stats().rx_datagrams, 3);
        assert_eq!(e.stats().rx_dropped, 3);
    }
}
