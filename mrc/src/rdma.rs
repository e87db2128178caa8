//! `mrc rdma`: perftest-style RDMA WRITE bandwidth and latency between two
//! processes, each driving its own NIC through the driver's verbs API:
//! two soft NICs on two machines (or two addresses of one). One side listens (`mrc rdma --device D`), the
//! other connects (`--connect HOST`); they swap QP number, first PSN,
//! buffer address and rkey over TCP as perftest does (port 18515), the
//! client WRITEs into the server's buffer and reports, and at the end both
//! compare a hash of the server's buffer with the client's source.
//!
//! Exit status: 0 every WRITE completed and the buffers match; 1 a WRITE
//! failed, the buffers differ or the peer reported a failure; 2 bad usage,
//! a device that cannot be opened, or a peer that cannot be reached.

use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use contract::layout::CqStatus;
use driver::select::{DeviceSpec, DEVICE_ENV};
use driver::soft::SoftNic;
use driver::{
    Access, CcProfile, CompletionQueue, Context, Device, DmaBuffer, EvProfile, LocalAddress, OpenOptions, PeerAddress,
    QpTransition, QueuePair, RtrAttr, RtsAttr, Timeouts, WriteWr,
};
use serde::Serialize;

use crate::units::{parse_duration, parse_size};

/// perftest's TCP port for the exchange.
pub const DEFAULT_TCP_PORT: u16 = 18515;

/// bw or lat, as `mrc perf`'s.
pub use crate::perf::Mode;

/// `mrc rdma`'s default RTO exponent (4.2 ms).
pub const RDMA_DEFAULT_TIMEOUT_EXP: u8 = 12;

/// Options of `mrc rdma`.
#[derive(Args, Debug)]
pub struct RdmaArgs {
    /// The NIC: soft:IP[:PORT], a soft NIC on that address (a card cannot
    /// be named here yet). Default: $MRC_DEVICE.
    #[arg(long)]
    pub device: Option<String>,
    /// Connect to the server on HOST (its TCP exchange address); without
    /// it, this process is the server and waits for a client.
    #[arg(long, value_name = "HOST")]
    pub connect: Option<String>,
    /// TCP port of the exchange.
    #[arg(long, default_value_t = DEFAULT_TCP_PORT)]
    pub tcp_port: u16,
    /// bw (ib_write_bw) or lat (ib_write_lat); the client's choice.
    #[arg(long, value_enum, default_value_t = Mode::Bw)]
    pub mode: Mode,
    /// Bytes per WRITE (e.g. 4096, 64KiB).
    #[arg(short = 's', long, value_parser = parse_size, default_value = "64KiB")]
    pub size: u64,
    /// WRITEs.
    #[arg(short = 'n', long, default_value_t = 1000)]
    pub iters: u32,
    /// WRITEs outstanding (bw).
    #[arg(short = 't', long, default_value_t = 16)]
    pub tx_depth: u32,
    /// Ask for a completion for one WRITE in N, and the last (bw; as
    /// perftest's `--cq-mod`, and the OCP benchmark's 64); completions are
    /// polled up to 16 at a time. 1: every WRITE completes on its own.
    #[arg(long, default_value_t = 1)]
    pub cq_mod: u32,
    /// Path MTU in bytes (256..8192, a power of two). The network must
    /// carry it: 4096 needs jumbo frames (loopback has them).
    #[arg(short = 'm', long, default_value_t = 4096)]
    pub mtu: u32,
    /// EVs of the QP (UDP source ports from --ev-base on).
    #[arg(long, default_value_t = 8)]
    pub evs: u16,
    /// First EV value (UDP source port).
    #[arg(long, default_value_t = 0xC000)]
    pub ev_base: u16,
    /// Soft NIC: probability that a datagram it sends is dropped.
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// Soft NIC: send every packet from the NIC's own UDP port instead of
    /// one source port per EV.
    #[arg(long)]
    pub no_ev_ports: bool,
    /// Soft NIC: only the NIC's own thread runs it (by default a program
    /// polling its CQ runs the NIC on its own thread meanwhile).
    #[arg(long)]
    pub nic_thread_only: bool,
    /// Server: wait for the client's end of run on the TCP exchange and
    /// leave the NIC to its own thread, instead of polling the CQ until
    /// then (which runs a soft NIC on the server's thread, as the OCP
    /// benchmark's receiver does while it polls for the last WRITE's
    /// immediate; its thread then does not sleep between packets, and the
    /// client's sends do not wake it). The client ignores it.
    #[arg(long)]
    pub server_waits: bool,
    /// Soft NIC: send every datagram on its own, not runs of equal-size
    /// datagrams to a loopback peer as one send with UDP segmentation
    /// offload (GSO, the default: a capture on lo shows each run as one
    /// oversized datagram, which `mrc decode` splits and tshark does not).
    #[arg(long)]
    pub no_gso: bool,
    /// Soft NIC: how long (us) its thread keeps stepping after its last
    /// work before it sleeps (default: the soft NIC's, none: it sleeps at
    /// once). Spinning takes a core: for a NIC with one of its own.
    #[arg(long)]
    pub spin_us: Option<u64>,
    /// RTO = 1.024 us x 2^t (0..=24). The default, 4.2 ms, leaves room for
    /// a loaded host that runs its soft NIC late: at 1 ms, two processes
    /// sharing a busy core resent data that was only waiting for them.
    #[arg(long, default_value_t = RDMA_DEFAULT_TIMEOUT_EXP)]
    pub timeout_exp: u8,
    /// Give up when nothing completes for this long.
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    pub timeout: proto::time::Duration,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RdmaError {
    #[error("no device: pass --device or set {DEVICE_ENV}")]
    NoDevice,
    #[error(transparent)]
    Spec(#[from] driver::select::SpecError),
    #[error(transparent)]
    Open(#[from] driver::select::OpenDeviceError),
    #[error("{0}")]
    Setting(String),
    #[error("driver: {0}")]
    Driver(String),
    #[error("exchange with the peer: {0}")]
    Exchange(String),
}

fn drv(e: impl std::fmt::Display) -> RdmaError {
    RdmaError::Driver(e.to_string())
}

fn xchg(e: impl std::fmt::Display) -> RdmaError {
    RdmaError::Exchange(e.to_string())
}

/// What one side tells the other.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Hello {
    qpn: u32,
    psn: u32,
    va: u64,
    rkey: u32,
    len: u64,
    ip: IpAddr,
    mac: [u8; 6],
}

impl Hello {
    fn line(&self) -> String {
        let m = self.mac;
        format!(
            "MRC-RDMA 2 qpn={} psn={} va={:#x} rkey={:#x} len={} ip={} mac={:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}\n",
            self.qpn, self.psn, self.va, self.rkey, self.len, self.ip, m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }

    fn parse(line: &str) -> Result<Hello, RdmaError> {
        let mut it = line.split_whitespace();
        // Version 2: `qpn` is the QP's wire number (`QueuePair::wire_qpn`);
        // version 1 sent the driver's, which a soft NIC then offset.
        if it.next() != Some("MRC-RDMA") || it.next() != Some("2") {
            return Err(xchg(format!("the peer is not `mrc rdma` 2: {:?}", line.trim())));
        }
        let mut h = Hello {
            qpn: 0,
            psn: 0,
            va: 0,
            rkey: 0,
            len: 0,
            ip: IpAddr::from([0, 0, 0, 0]),
            mac: [0; 6],
        };
        let num = |v: &str| {
            let r = match v.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16),
                None => v.parse(),
            };
            r.map_err(|_| xchg(format!("bad number `{v}` from the peer")))
        };
        for kv in it {
            let (k, v) = kv.split_once('=').ok_or_else(|| xchg(format!("bad field `{kv}`")))?;
            match k {
                "qpn" => h.qpn = num(v)? as u32,
                "psn" => h.psn = num(v)? as u32 & 0xFF_FFFF,
                "va" => h.va = num(v)?,
                "rkey" => h.rkey = num(v)? as u32,
                "len" => h.len = num(v)?,
                "ip" => h.ip = v.parse().map_err(|_| xchg(format!("bad IP `{v}`")))?,
                "mac" => {
                    let b: Vec<u8> = v.split(':').filter_map(|x| u8::from_str_radix(x, 16).ok()).collect();
                    h.mac = b.try_into().map_err(|_| xchg(format!("bad MAC `{v}`")))?;
                }
                _ => {}
            }
        }
        Ok(h)
    }
}

/// The report.
#[derive(Debug, Serialize)]
pub struct RdmaReport {
    pub device: String,
    pub peer: String,
    pub mode: Mode,
    pub size: u64,
    pub iters: u32,
    pub tx_depth: u32,
    /// One WRITE in this many asked for a completion.
    pub cq_mod: u32,
    pub mtu: u32,
    pub evs: u16,
    pub elapsed_s: f64,
    pub gbps: f64,
    pub msgs_per_s: f64,
    /// Post to completion, lat mode.
    pub lat_us_p50: Option<f64>,
    pub lat_us_p99: Option<f64>,
    pub lat_us_max: Option<f64>,
    pub buffers_match: bool,
    /// Soft NIC counters of this side.
    pub tx_datagrams: Option<u64>,
    pub tx_lost: Option<u64>,
    /// Datagrams the socket refused (send buffer full).
    pub tx_busy: Option<u64>,
    /// Datagrams to this side the kernel dropped (receive buffer full).
    pub rx_overflows: Option<u64>,
    /// The model's retransmissions, those after a timeout, and its RTOs.
    pub retransmitted: Option<u64>,
    pub retx_timeout: Option<u64>,
    pub rto_fired: Option<u64>,
    pub ok: bool,
}

/// FNV-1a of a buffer (both sides compute it; not a security hash).
fn fnv64(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3)
    })
}

fn check(a: &RdmaArgs) -> Result<(), RdmaError> {
    let bad = |m: String| Err(RdmaError::Setting(m));
    if !(256..=8192).contains(&a.mtu) || !a.mtu.is_power_of_two() {
        return bad(format!("--mtu {}: 256..8192, a power of two", a.mtu));
    }
    if a.size == 0 || a.size > 1 << 31 {
        return bad(format!("--size {}: 1 B..2 GiB", a.size));
    }
    if a.iters == 0 || a.tx_depth == 0 || a.tx_depth > 1 << 15 {
        return bad("--iters and --tx-depth must be at least 1 (--tx-depth at most 32768)".into());
    }
    // A window of WRITEs none of which asks for a completion would wait
    // for ever.
    if a.cq_mod == 0 || (a.mode == Mode::Bw && a.cq_mod > a.tx_depth) {
        return bad(format!("--cq-mod {}: 1..=--tx-depth ({})", a.cq_mod, a.tx_depth));
    }
    if a.mode == Mode::Lat && a.cq_mod != 1 {
        return bad(format!("--cq-mod {}: lat mode times every WRITE (1 only)", a.cq_mod));
    }
    if a.evs == 0 || a.evs > 128 || u32::from(a.ev_base) + u32::from(a.evs) > 1 << 16 || a.ev_base == 0 {
        return bad(format!(
            "--evs {} from --ev-base {}: 1..=128 nonzero UDP ports",
            a.evs, a.ev_base
        ));
    }
    if a.timeout_exp > proto::model::api::MAX_ACK_TIMEOUT_EXP {
        return bad(format!(
            "--timeout-exp {}: 0..={} (RTO = 1.024 us x 2^t)",
            a.timeout_exp,
            proto::model::api::MAX_ACK_TIMEOUT_EXP
        ));
    }
    if !(0.0..1.0).contains(&a.loss) {
        return bad(format!("--loss {}: in [0, 1)", a.loss));
    }
    Ok(())
}

/// A context with one CQ and one QP, its buffer registered.
struct Host {
    dev: Arc<dyn Device>,
    soft: Option<Arc<SoftNic>>,
    ctx: Context,
    pd: driver::ProtectionDomain,
    cq: CompletionQueue,
    qp: QueuePair,
    buf: DmaBuffer,
    mr: driver::MemoryRegion,
    ip: IpAddr,
    mac: [u8; 6],
}

/// The device named by `--device` or $MRC_DEVICE, checked against the
/// other options.
fn device_spec(a: &RdmaArgs) -> Result<DeviceSpec, RdmaError> {
    let spec: DeviceSpec = match &a.device {
        Some(s) => s.parse()?,
        None => DeviceSpec::from_env().ok_or(RdmaError::NoDevice)??,
    };
    if !matches!(spec, DeviceSpec::Soft(_)) {
        // A card's frames need its own IP and MAC and the peer's MAC,
        // which only a soft NIC's name gives today.
        return Err(RdmaError::Setting(
            "mrc rdma runs on soft NICs (--device soft:IP); a card's IP and MAC cannot be given yet".into(),
        ));
    }
    Ok(spec)
}

fn open_host(a: &RdmaArgs, spec: DeviceSpec, buf_len: usize) -> Result<Host, RdmaError> {
    let (dev, soft, ip): (Arc<dyn Device>, _, IpAddr) = match spec {
        DeviceSpec::Soft(mut cfg) => {
            cfg.tx_loss = a.loss;
            cfg.ev_ports = !a.no_ev_ports;
            cfg.poll_driven = !a.nic_thread_only;
            cfg.gso = !a.no_gso;
            if let Some(us) = a.spin_us {
                cfg.spin = std::time::Duration::from_micros(us);
            }
            let ip = cfg.ip;
            let nic = Arc::new(
                SoftNic::new(cfg.clone()).map_err(|source| driver::select::OpenDeviceError::Soft {
                    addr: SocketAddr::new(cfg.ip, cfg.port),
                    source,
                })?,
            );
            (nic.clone(), Some(nic), ip)
        }
        other => {
            let dev = other.open()?;
            (dev, None, IpAddr::from([0, 0, 0, 0]))
        }
    };
    let ctx = Context::open(dev.clone(), &OpenOptions::default()).map_err(drv)?;
    let mac = driver::soft::mac_for(ip);
    ctx.set_local_address(&LocalAddress {
        mac,
        ip,
        vlan_tci: None,
        dscp: 26,
        ttl: 64,
        // A soft NIC speaks its configuration's dialect; a card would send
        // MRC 1.0, as libmrc sets every device.
        wire_mrc10: true,
    });
    let pd = ctx.alloc_pd();
    let mut cq = ctx.create_cq(12).map_err(drv)?;
    let log2_sq = a.tx_depth.next_power_of_two().trailing_zeros().max(4) as u8;
    let qp = pd.create_qp(&mut cq, log2_sq).map_err(drv)?;
    let buf = pd.alloc_buffer(buf_len.max(1)).map_err(drv)?;
    let mr = pd.register(&buf, Access::RemoteWrite).map_err(drv)?;
    Ok(Host {
        dev,
        soft,
        ctx,
        pd,
        cq,
        qp,
        buf,
        mr,
        ip,
        mac,
    })
}

impl Host {
    /// Replace the registered buffer with one of `len` bytes.
    fn set_buffer(&mut self, len: usize) -> Result<(), RdmaError> {
        let buf = self.pd.alloc_buffer(len).map_err(drv)?;
        self.mr = self.pd.register(&buf, Access::RemoteWrite).map_err(drv)?;
        self.buf = buf;
        Ok(())
    }
}

fn connect_qp(a: &RdmaArgs, h: &mut Host, me: &Hello, peer: &Hello) -> Result<(), RdmaError> {
    h.qp.modify(QpTransition::Init { pkey: 0xFFFF }).map_err(drv)?;
    h.qp.modify(QpTransition::Rtr(RtrAttr {
        dest_qp: peer.qpn,
        rq_psn: peer.psn,
        peer: PeerAddress {
            mac: peer.mac,
            ip: peer.ip,
        },
        log2_mtu: a.mtu.trailing_zeros() as u8,
        max_wimm: 64,
    }))
    .map_err(drv)?;
    h.qp.modify(QpTransition::Rts(RtsAttr {
        sq_psn: me.psn,
        send_mpr_units: 16,
        max_wimm: 64,
        timeouts: Timeouts {
            ack_timeout_exp: a.timeout_exp,
            ..Timeouts::default()
        },
        evs: EvProfile {
            values: (0..a.evs).map(|i| u32::from(a.ev_base + i)).collect(),
            min_active: 1,
        },
        cc: CcProfile {
            min_cwnd: 4096,
            max_cwnd: 4 << 20,
            nscc: None,
        },
    }))
    .map_err(drv)
}

/// Run one side. `Ok(true)`: everything completed and matched.
pub fn run(a: &RdmaArgs) -> Result<bool, RdmaError> {
    check(a)?;
    let spec = device_spec(a)?;
    match &a.connect {
        Some(host) => client(a, spec, host),
        None => server(a, spec),
    }
}

fn hello_of(h: &Host, psn: u32) -> Hello {
    Hello {
        qpn: h.qp.wire_qpn(),
        psn,
        va: h.mr.remote_va(),
        rkey: h.mr.rkey().unwrap_or(0),
        len: h.mr.len() as u64,
        ip: h.ip,
        mac: h.mac,
    }
}

fn server(a: &RdmaArgs, spec: DeviceSpec) -> Result<bool, RdmaError> {
    // Open the NIC first, so a device that cannot be opened is said before
    // any client waits on it (the buffer, sized by the client, comes later).
    let mut h = open_host(a, spec, 0)?;
    let listener = TcpListener::bind(("0.0.0.0", a.tcp_port))
        .or_else(|_| TcpListener::bind(("::", a.tcp_port)))
        .map_err(|e| xchg(format!("listen on TCP port {}: {e}", a.tcp_port)))?;
    eprintln!("mrc rdma: waiting for a client on TCP port {}", a.tcp_port);
    let (stream, from) = listener.accept().map_err(xchg)?;
    let mut rd = BufReader::new(stream.try_clone().map_err(xchg)?);
    let mut wr = stream;
    let mut line = String::new();
    rd.read_line(&mut line).map_err(xchg)?;
    let peer = Hello::parse(&line)?;
    // The buffer the client writes into: as large as the client's source.
    h.set_buffer(peer.len.max(1) as usize)?;
    let me = hello_of(&h, 0x1000);
    wr.write_all(me.line().as_bytes()).map_err(xchg)?;
    connect_qp(a, &mut h, &me, &peer)?;
    wr.write_all(b"READY\n").map_err(xchg)?;
    // Wait for the client's end of run, then hash what arrived.
    line.clear();
    // Only a NIC that a polling program runs (a soft NIC, unless
    // --nic-thread-only) gains from the polls.
    if a.server_waits || a.nic_thread_only {
        rd.read_line(&mut line).map_err(xchg)?;
    } else {
        read_line_polling(&mut rd, &mut line, &mut h.cq)?;
    }
    let done = line
        .trim()
        .strip_prefix("DONE ")
        .ok_or_else(|| xchg(format!("expected DONE from the client, got {:?}", line.trim())))?;
    let field = |k: &str| {
        done.split_whitespace()
            .find_map(|kv| kv.strip_prefix(k))
            .map(str::to_string)
    };
    let want = field("hash=").ok_or_else(|| xchg(format!("no hash in {done:?}")))?;
    let client_ok = field("ok=").as_deref() == Some("1");
    let mut got = vec![0u8; h.buf.len().min(peer.len as usize)];
    h.buf.read(0, &mut got).map_err(drv)?;
    let ours = format!("{:#x}", fnv64(&got));
    let matched = ours == want;
    wr.write_all(format!("HASH {ours}\n").as_bytes()).map_err(xchg)?;
    let stats = h.soft.as_ref().map(|s| s.stats());
    let dups = h
        .soft
        .as_ref()
        .and_then(|s| s.qp_counters(h.qp.qpn()))
        .map_or(0, |c| c.rx_duplicates);
    eprintln!(
        "mrc rdma: client {from}: {}, buffers {}{}",
        if client_ok {
            "every WRITE completed"
        } else {
            "the client reports a failure"
        },
        if matched { "match" } else { "DIFFER" },
        stats.map_or(String::new(), |s| format!(
            "; soft NIC rx {} datagrams ({} duplicates, {} lost to a full socket buffer), {} bytes placed, {} dropped; tx {} datagrams; its thread slept {} times",
            s.rx_datagrams, dups, s.rx_overflows, s.placed_bytes, s.rx_dropped, s.tx_datagrams, s.thread_sleeps
        ))
    );
    drop(h.ctx);
    let _ = h.dev;
    Ok(matched && client_ok)
}

/// CQ polls between two looks at the TCP exchange while the server polls
/// (each poll runs a soft NIC; a look is a system call): about 100 us.
const POLLS_PER_LOOK: u32 = 256;

/// A line of the exchange, the CQ polled while it has not come: the server
/// runs its NIC as a polling program does, so a soft NIC's thread does not
/// sleep between the client's packets (and the client's sends do not wake
/// it). The server expects no completion; any is dropped.
fn read_line_polling(
    rd: &mut BufReader<TcpStream>,
    line: &mut String,
    cq: &mut CompletionQueue,
) -> Result<(), RdmaError> {
    rd.get_ref().set_nonblocking(true).map_err(xchg)?;
    let mut wcs = Vec::with_capacity(16);
    let r = loop {
        match rd.read_line(line) {
            Ok(0) => break Err(xchg("the client closed the exchange")),
            Ok(_) if line.ends_with('\n') => break Ok(()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if let Err(e) = (0..POLLS_PER_LOOK).try_for_each(|_| {
                    wcs.clear();
                    cq.poll_batch(&mut wcs, 16).map(|_| ())
                }) {
                    break Err(drv(e));
                }
            }
            Err(e) => break Err(xchg(e)),
        }
    };
    rd.get_ref().set_nonblocking(false).map_err(xchg)?;
    r
}

fn client(a: &RdmaArgs, spec: DeviceSpec, host: &str) -> Result<bool, RdmaError> {
    let depth = if a.mode == Mode::Lat { 1 } else { a.tx_depth };
    let slots = depth.min(a.iters) as usize;
    let size = a.size as usize;
    let h = open_host(a, spec, slots * size)?;
    let mut h = h;
    // A pattern in every slot; message i copies slot i mod slots to the
    // same slot on the server, so the server's buffer ends equal to ours.
    let pattern: Vec<u8> = (0..slots * size)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).rotate_right(13) as u8)
        .collect();
    h.buf.write(0, &pattern).map_err(drv)?;
    let addr = if host.contains(':') && !host.starts_with('[') && host.parse::<IpAddr>().is_ok() {
        format!("[{host}]:{}", a.tcp_port)
    } else {
        format!("{host}:{}", a.tcp_port)
    };
    let stream = connect_retrying(&addr, Duration::from_secs(10))?;
    let mut rd = BufReader::new(stream.try_clone().map_err(xchg)?);
    let mut wr = stream;
    let me = hello_of(&h, 0x20_0000);
    wr.write_all(me.line().as_bytes()).map_err(xchg)?;
    let mut line = String::new();
    rd.read_line(&mut line).map_err(xchg)?;
    let peer = Hello::parse(&line)?;
    if peer.len < (slots * size) as u64 {
        return Err(xchg(format!(
            "the server's buffer holds {} bytes, {} needed",
            peer.len,
            slots * size
        )));
    }
    connect_qp(a, &mut h, &me, &peer)?;
    line.clear();
    rd.read_line(&mut line).map_err(xchg)?;
    if line.trim() != "READY" {
        return Err(xchg(format!("expected READY, got {:?}", line.trim())));
    }
    let guard = Duration::from_nanos(a.timeout.as_ns());
    // Completions taken per poll (the OCP benchmark's 16).
    const POLL_BATCH: usize = 16;
    let mut wcs = Vec::with_capacity(POLL_BATCH);
    let mut lat = Vec::new();
    let mut all_ok = true;
    let mut posted = 0u32;
    let mut done = 0u32;
    let mut post_times = std::collections::VecDeque::new();
    let start = Instant::now();
    let mut last_progress = Instant::now();
    while done < a.iters {
        while posted < a.iters && posted - done < depth {
            let slot = posted as usize % slots;
            let wr = WriteWr {
                wr_id: u64::from(posted),
                local: &h.mr,
                local_offset: (slot * size) as u64,
                len: size as u32,
                remote_va: peer.va + (slot * size) as u64,
                rkey: peer.rkey,
                // One in `--cq-mod`, and the last: its completion stands
                // for every WRITE before it.
                signaled: posted % a.cq_mod == a.cq_mod - 1 || posted + 1 == a.iters,
                imm: None,
            };
            // From before the post: the post's own work (with a soft NIC,
            // sending its packets, at once or at the next poll) is part of
            // the latency.
            if a.mode == Mode::Lat {
                post_times.push_back(Instant::now());
            }
            h.qp.post_write(&wr).map_err(drv)?;
            posted += 1;
        }
        wcs.clear();
        let got = h.cq.poll_batch(&mut wcs, POLL_BATCH).map_err(drv)?;
        if let Some(wc) = wcs.iter().find(|wc| wc.status != CqStatus::Success) {
            eprintln!("mrc rdma: WRITE {} completed {:?}", wc.wr_id, wc.status);
            all_ok = false;
            break;
        }
        match wcs.last() {
            Some(wc) => {
                if let Some(t) = post_times.pop_front() {
                    lat.push(t.elapsed().as_secs_f64() * 1e6);
                }
                // In order: the last completion covers every WRITE up to
                // its own (its wr_id is the WRITE's index; held within
                // what was posted whatever the CQ says).
                let upto = wc.wr_id.saturating_add(1).min(u64::from(posted));
                done = done.max(upto as u32);
                debug_assert!(got > 0);
                last_progress = Instant::now();
            }
            None => {
                if last_progress.elapsed() > guard {
                    eprintln!("mrc rdma: no completion for {guard:?}: {done} of {} done", a.iters);
                    all_ok = false;
                    break;
                }
                std::hint::spin_loop();
            }
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let ours = format!("{:#x}", fnv64(&pattern));
    let sent_ok = all_ok && done == a.iters;
    wr.write_all(format!("DONE ok={} hash={ours}\n", u8::from(sent_ok)).as_bytes())
        .map_err(xchg)?;
    line.clear();
    rd.read_line(&mut line).map_err(xchg)?;
    let matched = line.trim().strip_prefix("HASH ") == Some(ours.as_str());
    lat.sort_by(f64::total_cmp);
    let pct = |q: f64| (!lat.is_empty()).then(|| lat[((lat.len() - 1) as f64 * q).round() as usize]);
    let stats = h.soft.as_ref().map(|s| s.stats());
    let counters = h.soft.as_ref().and_then(|s| s.qp_counters(h.qp.qpn()));
    let report = RdmaReport {
        device: h.dev.name(),
        peer: addr,
        mode: a.mode,
        size: a.size,
        iters: a.iters,
        tx_depth: depth,
        cq_mod: a.cq_mod,
        mtu: a.mtu,
        evs: a.evs,
        elapsed_s: elapsed,
        gbps: (f64::from(done) * a.size as f64 * 8.0) / elapsed / 1e9,
        msgs_per_s: f64::from(done) / elapsed,
        lat_us_p50: pct(0.5),
        lat_us_p99: pct(0.99),
        lat_us_max: lat.last().copied(),
        buffers_match: matched,
        tx_datagrams: stats.map(|s| s.tx_datagrams),
        tx_lost: stats.map(|s| s.tx_lost),
        tx_busy: stats.map(|s| s.tx_busy),
        rx_overflows: stats.map(|s| s.rx_overflows),
        retransmitted: counters.map(|c| c.retransmitted_packets),
        retx_timeout: counters.map(|c| c.retx_timeout),
        rto_fired: counters.map(|c| c.rto_fired),
        ok: all_ok && matched && done == a.iters,
    };
    if let (false, Some(st)) = (report.ok, stats) {
        // Say what the NIC saw: a packet too large for the network, EV
        // ports it could not bind, socket errors.
        eprintln!(
            "mrc rdma: soft NIC: {} datagrams sent, {} larger than the path MTU, {} EV ports unavailable, {} socket errors, {} received, {} refused",
            st.tx_datagrams, st.tx_too_big, st.ev_port_unavailable, st.socket_errors, st.rx_datagrams, st.rx_dropped
        );
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("report serialises"));
    } else {
        println!(
            "{} x {} B WRITEs over {} ({} MTU, {} EVs, depth {}{}): {:.3} s, {:.2} Gb/s, {:.0} msg/s{}{}{}",
            done,
            a.size,
            report.device,
            a.mtu,
            a.evs,
            depth,
            if a.cq_mod > 1 {
                format!(", a completion per {} WRITEs", a.cq_mod)
            } else {
                String::new()
            },
            elapsed,
            report.gbps,
            report.msgs_per_s,
            report.lat_us_p50.map_or(String::new(), |p| format!(
                ", latency p50 {p:.2} us p99 {:.2} us",
                report.lat_us_p99.unwrap_or(p)
            )),
            if matched { ", buffers match" } else { ", BUFFERS DIFFER" },
            match (stats, counters) {
                (Some(st), Some(c)) => format!(
                    "; {} datagrams, {} resent ({} after timeouts, {} RTOs)",
                    st.tx_datagrams, c.retransmitted_packets, c.retx_timeout, c.rto_fired
                ),
                _ => String::new(),
            }
        );
    }
    Ok(report.ok)
}

fn connect_retrying(addr: &str, patience: Duration) -> Result<TcpStream, RdmaError> {
    let start = Instant::now();
    loop {
        match TcpStream::connect(addr) {
            Ok(s) => {
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(e) if start.elapsed() < patience => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(xchg(format!("connect to {addr}: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_round_trips() {
        let h = Hello {
            qpn: 3,
            psn: 0xABCDEF,
            va: 0x10_0000_0000,
            rkey: 0x1234_5678,
            len: 65536,
            ip: "127.0.0.2".parse().unwrap(),
            mac: [2, 0, 127, 0, 0, 2],
        };
        assert_eq!(Hello::parse(&h.line()).unwrap(), h);
        assert!(Hello::parse("SSH-2.0 hello").is_err());
    }
}
