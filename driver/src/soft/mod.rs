//! The software NIC: the golden model behind the card's host interface,
//! speaking MRC 1.0 over UDP sockets (docs/host.md).
//!
//! [`SoftNic`] is a [`Device`]: the driver opens it as it opens a card
//! (discovery of the same register map, config rows, doorbells, SQ
//! descriptors and completion rings in the same host-memory layouts), and
//! everything the card does in RTL, a golden-model QP does here
//! ([`engine`]). Packets are real MRC 1.0 packets: the UDP payload of what a
//! card would put on the wire (BTH to ICRC), sent to the peer's IP at the
//! RoCEv2 port, with the traffic class (DSCP, ECN) of the packet. With
//! [`SoftNicConfig::ev_ports`] each EV leaves from its own UDP source port,
//! as on a card, so ECMP in an IP network spreads a QP over paths.
//!
//! One thread per NIC runs the model: it waits on the socket until a
//! datagram arrives or a model timer is due. Doorbells and config rows are
//! applied by the caller's thread at once. A program that polls its CQ
//! drives the NIC itself ([`Device::progress`]): while it does, the thread
//! naps, so a polling program and its NIC share one core instead of
//! contending for the engine from two, and the packets its doorbells
//! allow are made and leave at its next poll, together with those of the
//! doorbells in between (one pass over the QPs, one `sendmmsg`, runs for
//! segmentation offload). Otherwise they leave before the MMIO write
//! returns.

pub mod datagram;
pub mod engine;
pub mod interrupt;
pub mod rings;
pub mod udp;

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::device::{heap_dma, DeviceError, DmaBuffer, HostBacking, IovaAllocator};
use crate::regfile::{MmioWrite, RegisterFile};
use crate::Device;
use engine::Engine;
use proto::time::Instant;
use std::ptr::NonNull;

/// The RoCEv2 UDP port, which MRC 1.0 keeps.
pub const ROCEV2_PORT: u16 = 4791;

/// Datagrams read per pass (one `recvmmsg`) before timers and
/// transmission get a turn.
const RX_BATCH: usize = 16;

/// The receive buffer a soft NIC asks the kernel for (`SO_RCVBUF`; the
/// kernel caps it at `net.core.rmem_max`, 208 KiB on most hosts). The
/// socket buffer is the soft NIC's only buffering between a peer and its
/// model, so it bounds the window a QP may keep in flight
/// ([`engine::path_window`]): with `rmem_max` at least this, a 4 KiB-MTU
/// QP keeps 452 KiB in flight. Between two soft NICs driven by polling
/// programs a window's round trip is 140-230 us on a 2-core host (a
/// window over the rate it reached): a 512 KiB buffer's 224 KiB window
/// held 64 KiB WRITEs to 13.3 Gb/s where this one reaches 16.0 (the OCP
/// benchmark, medians of 6 rounds alternated; docs/benchmarks.md). A
/// 2 MiB buffer was slower again.
pub const RX_BUFFER: usize = 1 << 20;

/// Longest sleep of the NIC's thread with nothing due (it wakes earlier
/// for a datagram or a model timer).
const IDLE_WAIT: std::time::Duration = std::time::Duration::from_millis(5);

/// How long after the program's last poll the NIC's thread leaves the
/// work to the program.
const POLLED_GRACE_NS: u64 = 200_000;

/// The NIC thread's naps while the program polls: the first one after the
/// thread last worked, then each twice the last up to the longest, until
/// it finds the program gone, or the program says it will wait for an
/// interrupt (`Device::program_waits`, which cuts the nap short). Each
/// nap's end is a wake-up that takes a core from a polling program for a
/// context switch: with 100 us naps throughout (10,000 wake-ups a second
/// per NIC), two polling processes on a 2-core host reached 1.2 M 64 B
/// WRITEs/s, with naps growing to 1 ms 1.42 M, with 1 ms naps throughout
/// 1.47 M (docs/benchmarks.md, "64 B WRITEs: a doorbell's packets made at
/// the next poll, naps that grow"). The longest nap bounds, with
/// [`POLLED_GRACE_NS`], how late the thread takes over from a program
/// that stops polling: 1.2 ms (a program that polls again meanwhile runs
/// the NIC itself).
pub const POLLED_NAP_FIRST: std::time::Duration = std::time::Duration::from_micros(100);
pub const POLLED_NAP_LONGEST: std::time::Duration = std::time::Duration::from_millis(1);

/// How long after the program's last doorbell or poll the NIC's thread
/// sends what the program's doorbells left for its next poll (a program
/// that posts and then does something else than polling): the program
/// gets that long to post more and poll.
pub const UNSENT_GRACE_NS: u64 = 50_000;

/// The NIC thread's spin after its last work ([`SoftNicConfig::spin`]):
/// none. Measured on a 2-core host shared with other work, every spin
/// tried (20 us to 1 ms) cost the receiving NIC more CPU per message, and
/// all but one (200 us, 64 B WRITEs, the host nearly idle) lowered the
/// rates, pinned to a core each or not (docs/benchmarks.md,
/// "Payloads sent from host memory, a NIC thread that can spin"); a host
/// with a core to spare per NIC may gain from one (`mrc rdma --spin-us`).
pub const DEFAULT_SPIN: std::time::Duration = std::time::Duration::ZERO;

/// Build ID the soft NIC reports (no bitstream: any driver build accepts
/// it through `BuildExpectation::Any`).
pub const SOFT_GIT_HASH: u64 = 0x5f07_5f07_5f07_5f07;

/// The MAC a soft NIC takes for `ip` (locally administered, from the
/// address's last four bytes): soft NICs do not use MACs, but the driver's
/// address rows and the frames' Ethernet headers have one, and both ends
/// derive the same one from the address alone.
pub fn mac_for(ip: IpAddr) -> [u8; 6] {
    let o = match ip {
        IpAddr::V4(v) => v.octets(),
        IpAddr::V6(v) => {
            let b = v.octets();
            [b[12], b[13], b[14], b[15]]
        }
    };
    [2, 0, o[0], o[1], o[2], o[3]]
}

/// The largest payload per packet a soft NIC at `ip` can send: its
/// interface's MTU less the IP and UDP headers and the most an MRC 1.0
/// data packet adds ([`proto::wire::mrc10::MAX_DATA_OVERHEAD`]). `None`
/// if no interface holds `ip`. A QP's path MTU must not exceed it, or its
/// packets are refused by the kernel (`SoftStats::tx_too_big`).
pub fn max_payload(ip: IpAddr) -> Option<usize> {
    let ip_header = match ip {
        IpAddr::V4(_) => proto::wire::ipv4::HEADER_LEN,
        IpAddr::V6(_) => proto::wire::ipv6::HEADER_LEN,
    };
    udp::interface_mtu(ip)?
        .checked_sub(ip_header + proto::wire::udp::HEADER_LEN + proto::wire::mrc10::MAX_DATA_OVERHEAD)
}

/// Which wire the soft NIC speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dialect {
    /// MRC 1.0 (`docs/protocol.md`).
    #[default]
    Mrc10,
    /// The legacy profile the RTL still speaks (issue 15 moves it to MRC
    /// 1.0): for interoperating with a co-simulated card over a socket.
    /// Wire QP numbers are the driver's, as the card's.
    Legacy,
}

/// Keeps another buffer's memory alive (the soft NIC's identity-mapped
/// view of a heap buffer).
struct KeepAlive(#[allow(dead_code)] DmaBuffer);

impl crate::device::DmaBacking for KeepAlive {}

/// How a soft NIC is set up.
#[derive(Clone, Debug, PartialEq)]
pub struct SoftNicConfig {
    /// The NIC's IP address: its socket binds it, and peers' address rows
    /// name theirs. Two soft NICs on one host take two addresses
    /// (127.0.0.1 and 127.0.0.2 on loopback): every soft NIC sends to its
    /// peers' `port`, its own.
    pub ip: IpAddr,
    /// The UDP port the NIC receives on and sends to (every soft NIC of a
    /// deployment uses the same one).
    pub port: u16,
    /// Give each EV its own socket so it leaves from UDP source port =
    /// EV value, as a card's packets do. Off: every packet leaves from
    /// `port`.
    pub ev_ports: bool,
    /// Probability that a datagram is dropped instead of sent (a loss
    /// knob for tests and demonstrations).
    pub tx_loss: f64,
    /// Seed of the loss draws and of the models' random choices.
    pub seed: u64,
    /// A program polling its CQ runs the NIC on its own thread (the NIC's
    /// thread naps meanwhile). Off: only the NIC's thread runs it.
    pub poll_driven: bool,
    /// Runs of equal-size datagrams to a loopback peer leave as one send
    /// with UDP segmentation offload (`UDP_SEGMENT`), where the kernel has
    /// it: each is still its own datagram to the peer (whole runs to a
    /// peer reading with `UDP_GRO`, as every soft NIC does where the
    /// kernel has it). On by default. A capture on `lo` records each run
    /// as one oversized datagram, before the kernel splits it: `mrc
    /// decode` splits it again; for tools that do not (tshark), turn it
    /// off.
    pub gso: bool,
    /// How long the NIC's thread keeps stepping after its last work
    /// before it sleeps in `ppoll` ([`DEFAULT_SPIN`]): within a stream of
    /// datagrams the next one finds the thread awake, and neither side
    /// pays the sleep and the wake-up. Zero: it sleeps as soon as a step
    /// finds nothing to do. Spinning takes the core it runs on: for a NIC
    /// with a core of its own.
    pub spin: std::time::Duration,
    pub dialect: Dialect,
}

impl Default for SoftNicConfig {
    fn default() -> Self {
        SoftNicConfig {
            ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: ROCEV2_PORT,
            ev_ports: true,
            tx_loss: 0.0,
            seed: 1,
            poll_driven: true,
            gso: true,
            spin: DEFAULT_SPIN,
            dialect: Dialect::Mrc10,
        }
    }
}

/// What the soft NIC counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SoftStats {
    pub tx_datagrams: u64,
    /// Datagrams whose payload left from where it lies in host memory
    /// (an `iovec` of its own) instead of copied into the frame first
    /// ([`datagram::GATHER_MIN_PAYLOAD`] or more).
    pub tx_payloads_gathered: u64,
    /// Dropped by the kernel on arrival: the NIC's receive buffer was
    /// full (the socket's `SK_MEMINFO_DROPS`).
    pub rx_overflows: u64,
    /// Dropped by the `tx_loss` knob.
    pub tx_lost: u64,
    /// The socket buffer was full: the datagram is lost (the protocol
    /// recovers it).
    pub tx_busy: u64,
    /// Larger than the path MTU: the QP's MTU does not fit the network
    /// (4 KiB needs jumbo frames; a 1500-byte network takes `log2_mtu` 10).
    pub tx_too_big: u64,
    /// A packet the NIC could not frame (no MRC 1.0 packet, address
    /// families differ).
    pub tx_dropped: u64,
    pub rx_datagrams: u64,
    /// Refused by the model (parse, ICRC, QP checks; the model counts why).
    pub rx_dropped: u64,
    /// For no enabled QP.
    pub rx_unknown_qp: u64,
    pub placed_bytes: u64,
    /// Accepted data with no live buffer behind its region.
    pub lost_placements: u64,
    pub completions: u64,
    /// A completion for a CQ never set up (or queued for a ring the
    /// driver then set up again).
    pub lost_completions: u64,
    /// A model's send completion for another WRITE than the oldest one
    /// waiting (a completion the model lost).
    pub completion_mismatches: u64,
    pub ev_events: u64,
    /// EV events the EV-event ring had no room for (the driver had not
    /// consumed them): lost, as on the card, and served as its
    /// `ev_event_lost` counter.
    pub ev_events_lost: u64,
    /// Endpoint (QPN 0x2) packets taken: peers' EV probes and Port Status
    /// Updates, answered.
    pub endpoint_requests: u64,
    pub bad_rows: u64,
    pub bad_doorbells: u64,
    pub bad_descriptors: u64,
    /// EV source ports that could not be bound (in use, privileged): those
    /// EVs leave from the NIC's own port.
    pub ev_port_unavailable: u64,
    /// Sockets bound to an EV's source port (one per EV that has sent).
    pub ev_sockets: u64,
    pub socket_errors: u64,
    /// Segmentation-offload sends the kernel refused (the socket sends
    /// datagram by datagram from then on).
    pub gso_refused: u64,
    /// Datagrams not sent because the port was down: endpoint answers and
    /// requests (the QPs are held while it is down: they send nothing).
    pub tx_port_down: u64,
    /// Datagrams that arrived while the port was down, dropped (also
    /// counted in `rx_datagrams`).
    pub rx_port_down: u64,
    /// Times the port was taken down and brought up
    /// ([`Device::set_port_up`]).
    pub port_downs: u64,
    pub port_ups: u64,
    /// Port Status Updates the NIC sent by itself when its port went down
    /// or up (one per peer it has QPs with), how many were answered and
    /// how many got no answer within [`engine::ENDPOINT_TIMEOUT`] (the
    /// answer to a "down" update reaches a port that is down: it times
    /// out), and how many could not be sent (too many endpoint requests
    /// awaiting answers).
    pub port_updates_sent: u64,
    pub port_updates_answered: u64,
    pub port_updates_timed_out: u64,
    pub port_updates_refused: u64,
    /// Port Status Updates received from peers (their requests, and the
    /// answers to ours).
    pub peer_port_updates: u64,
    /// Results of the program's endpoint requests dropped because 1,024
    /// were waiting to be taken.
    pub endpoint_results_dropped: u64,
    /// Times the NIC's thread slept in `ppoll` (each paid a wake-up:
    /// [`SoftNicConfig::spin`] keeps it awake within a stream).
    pub thread_sleeps: u64,
}

struct Inner {
    regs: Mutex<RegisterFile>,
    engine: Mutex<Engine>,
    stop: AtomicBool,
    /// The engine's socket, to sleep on (it lives as long as the engine).
    wait_fd: std::os::fd::RawFd,
    /// Ends the thread's wait when a doorbell or a row may have armed an
    /// earlier timer.
    wake: udp::Wake,
    /// When the NIC's thread wakes next from a wait that the wake-up
    /// ends, ns since `epoch` (0: it is running, or napping while the
    /// program polls).
    wakes_at_ns: AtomicU64,
    /// When the program last drove the NIC (`progress`), ns since `epoch`.
    last_poll_ns: AtomicU64,
    epoch: std::time::Instant,
    /// Raised by the engine when a completion reaches a CQ ring.
    irq: Arc<interrupt::Interrupt>,
    /// A doorbell left its descriptors' packets to the program's next poll
    /// (`SoftNic::write32`); the NIC's thread makes and sends them if the
    /// program does not poll again. Cleared by a poll that ran the engine.
    unsent: AtomicBool,
    /// The program said it will wait for an interrupt
    /// (`Device::program_waits`): the thread's naps start again from the
    /// first.
    handed_back: AtomicBool,
    /// [`SoftNicConfig::spin`] in ns.
    spin_ns: u64,
    /// Times the NIC's thread went to sleep in `ppoll` (and so was woken
    /// by a datagram, a doorbell or its timer).
    sleeps: AtomicU64,
}

impl Inner {
    fn now(&self) -> Instant {
        Instant::from_ns(self.epoch.elapsed().as_nanos() as u64)
    }

    fn engine(&self) -> MutexGuard<'_, Engine> {
        self.engine.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// After a doorbell or a row, with the engine's next timer then: a
    /// program that drives the NIC is busy with it (the thread naps until
    /// the program has left it alone for [`POLLED_GRACE_NS`]); and if the
    /// write armed a timer earlier than the thread's wake-up, the thread's
    /// wait ends.
    fn after_mmio(&self, now: Instant, poll_driven: bool, next: Option<Instant>) {
        if poll_driven {
            self.last_poll_ns.store(now.as_ns().max(1), Ordering::Relaxed);
        }
        if next.is_some_and(|t| t.as_ns() < self.wakes_at_ns.load(Ordering::Relaxed)) {
            self.wake.wake();
        }
    }

    /// Make and send what a doorbell left for the program's next poll, if
    /// the program has not polled for [`UNSENT_GRACE_NS`] (a program that
    /// posts and then does not poll: its packets leave at the thread's
    /// first look after the grace, a nap of up to [`POLLED_NAP_LONGEST`]
    /// later).
    fn send_unsent(&self) {
        if !self.unsent.load(Ordering::Relaxed) {
            return;
        }
        // Held by the program: its poll sends them, else the next nap's
        // try.
        let Ok(mut e) = self.engine.try_lock() else { return };
        // Again under the lock: a doorbell marks its time before it lets
        // the engine go, so a doorbell rung since the caller looked is
        // seen here, and its datagrams stay for the program's poll.
        let polled = self.last_poll_ns.load(Ordering::Relaxed);
        let now = self.now();
        if now.as_ns().saturating_sub(polled) >= UNSENT_GRACE_NS {
            self.unsent.store(false, Ordering::Relaxed);
            e.step_tx(now);
        }
    }

    /// Before the NIC's thread sleeps until `until_ns` (its next timer):
    /// while less than [`SoftNicConfig::spin`] has passed since its last
    /// work (`worked_ns`), look at the socket and the wake-up (a zero
    /// `ppoll`, outside the engine's lock: a spinning thread must not keep
    /// the program's doorbells from the engine) until there is something
    /// to step for. Returns whether there is (a datagram, a wake-up, the
    /// timer, the program polling, the NIC stopping); false: the spin
    /// ended with nothing, sleep.
    fn spin(&self, worked_ns: u64, until_ns: u64) -> bool {
        if worked_ns == 0 || self.spin_ns == 0 {
            return false;
        }
        loop {
            let t = self.now().as_ns();
            if t.saturating_sub(worked_ns) >= self.spin_ns {
                return false;
            }
            let polled = self.last_poll_ns.load(Ordering::Relaxed);
            if t >= until_ns
                || self.stop.load(Ordering::Acquire)
                || (polled != 0 && t.saturating_sub(polled) < POLLED_GRACE_NS)
                || udp::wait_readable(self.wait_fd, &self.wake, std::time::Duration::ZERO)
            {
                return true;
            }
            std::hint::spin_loop();
        }
    }

    /// The NIC's thread: run the models, sleep on the socket (after
    /// spinning for [`SoftNicConfig::spin`] since its last work).
    fn run(&self) {
        // When a step last found work, ns since `epoch`.
        let mut worked_ns = 0u64;
        let mut nap = POLLED_NAP_FIRST;
        while !self.stop.load(Ordering::Acquire) {
            let polled = self.last_poll_ns.load(Ordering::Relaxed);
            let t = self.now().as_ns();
            if polled != 0 && t.saturating_sub(polled) < POLLED_GRACE_NS {
                if t.saturating_sub(polled) >= UNSENT_GRACE_NS {
                    self.send_unsent();
                }
                // `wakes_at_ns` stays 0 (running): a nap is not cut short
                // by the wake-up, and what falls due meanwhile is the
                // polling program's to run. Marked as a wait, every
                // doorbell arming a timer inside the nap wrote the wake-up
                // (a system call) for nothing: one per 40 64 B WRITEs. A
                // program about to wait for an interrupt, and the NIC's
                // end, unpark the thread.
                std::thread::park_timeout(nap);
                nap = if self.handed_back.swap(false, Ordering::Relaxed) {
                    POLLED_NAP_FIRST
                } else {
                    (nap * 2).min(POLLED_NAP_LONGEST)
                };
                continue;
            }
            nap = POLLED_NAP_FIRST;
            let (busy, wait, until) = {
                let mut e = self.engine();
                let now = self.now();
                // The program may have driven the NIC while this thread
                // waited for the engine (a doorbell marks it before it
                // lets the engine go): the work, and what its doorbells
                // left for its next poll, are the program's.
                let polled = self.last_poll_ns.load(Ordering::Relaxed);
                if polled != 0 && now.as_ns().saturating_sub(polled) < POLLED_GRACE_NS {
                    continue;
                }
                let busy = e.step(now);
                let wait = e
                    .next_timeout()
                    .map_or(IDLE_WAIT, |t| {
                        std::time::Duration::from_nanos(t.as_ns().saturating_sub(now.as_ns()))
                    })
                    .min(IDLE_WAIT);
                // Published before the engine is let go: a doorbell that
                // takes it next and arms an earlier timer sees this wait
                // and ends it. Stored after, a doorbell in between saw 0
                // (running), wrote no wake-up, and its timer (or the
                // datagrams it left for a program that does not poll)
                // waited for this wait's end, up to `IDLE_WAIT`.
                let until = now.as_ns() + wait.as_nanos() as u64;
                if !busy && !wait.is_zero() {
                    self.wakes_at_ns.store(until, Ordering::Relaxed);
                }
                (busy, wait, until)
            };
            // Without a spin, no clock read more than before it existed.
            let spinning = self.spin_ns > 0;
            if busy && spinning {
                worked_ns = self.now().as_ns();
            }
            if !busy && !wait.is_zero() {
                // Wait outside the lock: the driver's doorbells go on.
                if !self.spin(worked_ns, until) {
                    self.sleeps.fetch_add(1, Ordering::Relaxed);
                    let left = if spinning {
                        std::time::Duration::from_nanos(until.saturating_sub(self.now().as_ns()))
                    } else {
                        wait
                    };
                    udp::wait_readable(self.wait_fd, &self.wake, left);
                }
            }
            self.wakes_at_ns.store(0, Ordering::Relaxed);
        }
    }
}

/// Where the counter bank holds `ev_event_lost` (the soft NIC serves it
/// from [`SoftStats::ev_events_lost`]).
static EV_EVENT_LOST_OFFSET: std::sync::LazyLock<u64> = std::sync::LazyLock::new(|| {
    let slot = contract::regmap::COUNTERS
        .iter()
        .position(|c| c.name == "ev_event_lost")
        .expect("the register map names ev_event_lost");
    u64::from(contract::regmap::counters::BASE + contract::regmap::counters::FIRST) + 4 * slot as u64
});

/// A software MRC NIC. See the module doc.
pub struct SoftNic {
    inner: Arc<Inner>,
    iovas: IovaAllocator,
    thread: Option<JoinHandle<()>>,
    name: String,
    poll_driven: bool,
    /// `Device::wire_qpn_offset`, by the dialect.
    wire_qpn_offset: u32,
}

impl SoftNic {
    /// Bind the socket and start the NIC's thread.
    pub fn new(cfg: SoftNicConfig) -> std::io::Result<SoftNic> {
        if cfg.ip.is_unspecified() || cfg.ip.is_multicast() {
            // The NIC's address is in every packet's ICRC and in what its
            // peers are told: it must be the one address it is reached at.
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} is not one host's address: name the address peers reach", cfg.ip),
            ));
        }
        let name = format!("soft:{}", std::net::SocketAddr::new(cfg.ip, cfg.port));
        let poll_driven = cfg.poll_driven;
        let spin_ns = cfg.spin.as_nanos() as u64;
        let engine = Engine::new(cfg)?;
        let wire_qpn_offset = engine.wire_qpn_offset();
        let wait_fd = engine.port().raw_fd();
        let irq = Arc::clone(engine.interrupt());
        let inner = Arc::new(Inner {
            regs: Mutex::new(RegisterFile::new(SOFT_GIT_HASH)),
            engine: Mutex::new(engine),
            stop: AtomicBool::new(false),
            wait_fd,
            wake: udp::Wake::new()?,
            last_poll_ns: AtomicU64::new(0),
            wakes_at_ns: AtomicU64::new(0),
            epoch: std::time::Instant::now(),
            irq,
            unsent: AtomicBool::new(false),
            handed_back: AtomicBool::new(false),
            spin_ns,
            sleeps: AtomicU64::new(0),
        });
        let run = Arc::clone(&inner);
        let thread = std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || run.run())?;
        Ok(SoftNic {
            inner,
            iovas: IovaAllocator::new(),
            thread: Some(thread),
            name,
            poll_driven,
            wire_qpn_offset,
        })
    }

    /// The counters so far.
    pub fn stats(&self) -> SoftStats {
        let mut s = self.inner.engine().stats();
        s.thread_sleeps = self.inner.sleeps.load(Ordering::Relaxed);
        s
    }

    /// The golden model's counters of QP `qpn` (the driver's QP number):
    /// what the protocol did, as [`SoftNic::stats`] says what the sockets
    /// did. `None` if the QP is not enabled.
    pub fn qp_counters(&self, qpn: u32) -> Option<proto::model::Counters> {
        self.inner.engine().qp_counters(qpn)
    }

    /// The IP traffic class byte (DSCP << 2 | ECN) of the last endpoint
    /// datagram (a peer's EV probe or Port Status Update, or its answer)
    /// received; `None` before one.
    pub fn endpoint_tos(&self) -> Option<u8> {
        self.inner.engine().endpoint_tos()
    }

    /// QP `qpn`'s congestion controller ("nscc" or "fixed") and its window
    /// in bytes now; `None` if the QP is not enabled.
    pub fn qp_window(&self, qpn: u32) -> Option<(&'static str, u64)> {
        self.inner.engine().qp_window(qpn)
    }

    /// The ports of the soft NIC at `peer` as its last Port Status Update
    /// said (bit 0: its one port is up); `None` if it sent none.
    pub fn peer_ports_up(&self, peer: IpAddr) -> Option<u32> {
        self.inner.engine().peer_ports_up(peer)
    }

    /// The address the NIC receives on.
    pub fn local_addr(&self) -> std::io::Result<std::net::SocketAddr> {
        self.inner.engine().port().local_addr()
    }
}

impl Drop for SoftNic {
    fn drop(&mut self) {
        self.inner.stop.store(true, Ordering::Release);
        self.inner.wake.wake();
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

impl Device for SoftNic {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn bar_len(&self) -> u64 {
        RegisterFile::BAR_LEN
    }

    fn read32(&self, offset: u64) -> u32 {
        // The engine's counters the card keeps in its counter bank.
        if offset == *EV_EVENT_LOST_OFFSET {
            return self.inner.engine().stats().ev_events_lost as u32;
        }
        self.inner.regs.lock().unwrap_or_else(|e| e.into_inner()).read(offset)
    }

    fn write32(&self, offset: u64, value: u32) {
        // A descriptor push: the software NIC reads every descriptor from
        // the ring anyway (no round trip to save), so the words go
        // nowhere, without taking the register file's lock.
        let push = u64::from(contract::regmap::push::WINDOW);
        if (push..push + u64::from(contract::regmap::push::SIZE)).contains(&offset) {
            return;
        }
        let w = self
            .inner
            .regs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .write(offset, value, true);
        match w {
            MmioWrite::Row(r) => {
                let now = self.inner.now();
                let mut e = self.inner.engine();
                e.row(now, r);
                // As after a doorbell: the row's work took time.
                let now = self.inner.now();
                e.step(now);
                let next = e.next_timeout();
                drop(e);
                // Not a poll: a row may come from a thread beside the
                // program (a notifier reporting a CQ's consumer index).
                self.inner.after_mmio(now, false, next);
            }
            MmioWrite::Doorbell { qp, producer } => {
                // One clock read, once the engine is ours: the NIC's
                // thread may have held it meanwhile (an earlier time would
                // run the model backwards, and stamp the packets that far
                // in the past, their RTO firing that much early). The
                // doorbell copies nothing (a WRITE's data is read where it
                // lies when its packets are built), so its time is the
                // time of the packets it gives. A clock read is about 8%
                // of a 64 B WRITE's work here (docs/benchmarks.md, "64 B
                // WRITEs: fewer clock reads and wake-ups").
                let mut e = self.inner.engine();
                let now = self.inner.now();
                e.doorbell(now, qp, producer);
                if !self.poll_driven {
                    // The NIC's thread reads the socket (it wakes for a
                    // datagram); the packets leave now.
                    e.step_doorbell(now);
                    e.flush();
                    let next = e.next_timeout();
                    drop(e);
                    self.inner.after_mmio(now, false, next);
                    return;
                }
                // A polling program's doorbell leaves its packets to the
                // next poll, which makes and sends those of every doorbell
                // since (WRITEs posted one by one between two polls leave
                // in one batch, made in one pass over the QPs); the socket
                // is read here only if it was last read a while ago (a
                // program posting without polling: `step_doorbell_polled`).
                let stepped = e.step_doorbell_polled(now);
                // The program's grace counts from the doorbell (its own
                // work is microseconds against a grace of tens). Marked
                // before the engine is let go: the NIC's thread, if it
                // waits for the engine, then leaves the work to the
                // program's poll.
                self.inner.unsent.store(true, Ordering::Relaxed);
                self.inner.last_poll_ns.store(now.as_ns().max(1), Ordering::Relaxed);
                // The NIC's thread makes and sends them if the program does
                // not poll: it must not sleep past the grace (and a first
                // nap: woken from a sleep, it naps from the first again).
                let due = Instant::from_ns(now.as_ns() + UNSENT_GRACE_NS + POLLED_NAP_FIRST.as_nanos() as u64);
                let next = if stepped {
                    e.next_timeout().map_or(due, |t| t.min(due))
                } else {
                    due
                };
                drop(e);
                self.inner.after_mmio(now, true, Some(next));
            }
            _ => {}
        }
    }

    /// Heap memory whose IOVA is its host address, as for the program's
    /// own memory ([`Device::map_host_memory`]): one address space, so two
    /// live buffers never share an IOVA range.
    fn alloc_dma(&self, len: usize) -> Result<DmaBuffer, DeviceError> {
        let heap = heap_dma(&self.iovas, len)?;
        let ptr = NonNull::new(heap.host_ptr()).expect("heap memory is not null");
        // SAFETY: the memory is the heap buffer's, kept alive by the
        // backing for as long as the new buffer lives.
        let b = unsafe { DmaBuffer::from_raw(ptr, heap.len(), ptr.as_ptr() as u64, Box::new(KeepAlive(heap))) };
        self.inner.engine().add_dma(&b);
        Ok(b)
    }

    /// The soft NIC reaches the program's memory directly: the IOVA is the
    /// host address (no IOMMU), so a peer writes to the address the
    /// program registered, as with a verbs NIC.
    unsafe fn map_host_memory(&self, ptr: NonNull<u8>, len: usize) -> Result<DmaBuffer, DeviceError> {
        if len == 0 {
            return Err(DeviceError::DmaAlloc {
                len,
                why: "an empty region".into(),
            });
        }
        // SAFETY: the caller's promise (the trait's contract).
        let b = unsafe { DmaBuffer::from_raw(ptr, len, ptr.as_ptr() as u64, Box::new(HostBacking)) };
        self.inner.engine().add_dma(&b);
        Ok(b)
    }

    /// The program polls: run what is due on its thread (never waiting
    /// for the NIC's thread: if that one holds the engine, it is working).
    fn progress(&self) {
        let now = self.inner.now();
        self.inner.last_poll_ns.store(now.as_ns().max(1), Ordering::Relaxed);
        if let Ok(mut e) = self.inner.engine.try_lock() {
            e.step_polled(now);
            // Every doorbell's packets made and sent (under the lock: a
            // doorbell sets it under the lock too).
            self.inner.unsent.store(false, Ordering::Relaxed);
        }
    }

    fn needs_progress(&self) -> bool {
        self.poll_driven
    }

    fn wire_qpn_offset(&self) -> u32 {
        self.wire_qpn_offset
    }

    fn program_waits(&self) {
        if !self.poll_driven {
            return;
        }
        // No poll on record: the thread, at its nap's end cut short here,
        // takes over; if the program polls or rings once more before it
        // waits (arm, poll, post, wait), the thread's naps start again
        // from the first, so it takes over within the grace and a few
        // short naps.
        self.inner.last_poll_ns.store(0, Ordering::Relaxed);
        self.inner.handed_back.store(true, Ordering::Relaxed);
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
    }

    fn endpoint_request(&self, req: crate::device::EndpointRequest) -> Result<u16, DeviceError> {
        use crate::device::EndpointRequest as R;
        if let R::EvProbe { dscp: Some(d), .. } | R::PortStatusUpdate { dscp: Some(d), .. } = req {
            if d > crate::device::MAX_DSCP {
                return Err(DeviceError::Unsupported("a DSCP above 63"));
            }
        }
        let now = self.inner.now();
        let r = self.inner.engine().send_endpoint_request(now, req);
        // Its timeout may be earlier than the thread's wake-up.
        self.inner.wake.wake();
        r.map_err(|_| DeviceError::Busy("the queue of endpoint requests awaiting an answer"))
    }

    fn endpoint_result(&self) -> Option<proto::model::endpoint::EndpointResult> {
        let now = self.inner.now();
        let mut e = self.inner.engine();
        if let Some(r) = e.endpoint_result() {
            return Some(r);
        }
        // Nothing yet: run what is due, as a poll does.
        e.step(now);
        e.endpoint_result()
    }

    /// A soft NIC has one port (0). Down, it tells its peers, then sends
    /// and takes nothing ([`engine::Engine::set_port_up`]).
    /// The golden model's NSCC for the QP ([`engine::nscc_config`]).
    fn set_qp_nscc(&self, qpn: u32, params: Option<crate::verbs::NsccParams>) -> Result<(), DeviceError> {
        self.inner.engine().set_qp_nscc(qpn, params);
        Ok(())
    }

    fn set_port_up(&self, port: u8, up: bool) -> Result<(), DeviceError> {
        let now = self.inner.now();
        let r = self.inner.engine().set_port_up(now, port, up);
        // Updates await answers: their timeouts may be earlier than the
        // thread's wake-up.
        self.inner.wake.wake();
        r.map_err(|_| DeviceError::Unsupported("a port other than 0 (a soft NIC has one)"))
    }

    fn port_up(&self, port: u8) -> Option<bool> {
        self.inner.engine().port_up(port)
    }

    /// One vector: a completion reached a CQ ring ([`interrupt`]).
    fn interrupt_vectors(&self) -> u32 {
        1
    }

    fn wait_interrupt(&self, vector: u32, timeout: std::time::Duration) -> Result<bool, DeviceError> {
        if vector != 0 {
            return Err(DeviceError::Unsupported("interrupt vectors other than 0"));
        }
        // What the program's doorbells left for its next poll leaves if
        // the program has not polled for the grace (the caller may be a
        // notifier thread beside a polling program, not the program).
        self.inner.send_unsent();
        Ok(self.inner.irq.wait(timeout))
    }
}
