//! One verilated `MrcCore` with its surroundings: the AXI-Lite master for
//! the CSRs, the host memory behind the DMA port, and the MAC streams as an
//! AXI-Stream source (RX) and sink (TX). Every cycle drives and observes
//! all of them in the order `tb`'s components require.
//!
//! This is what a test or the co-simulation backend of the driver uses to
//! talk to the RTL: register reads and writes (blocking: they run the clock
//! until the access completes), config-table rows, doorbells, and host
//! memory.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use contract::regmap;
use hw::csr::BuildInfo;
use hw::flow::emit_block;
use verilated::{build, default_cache_dir, BuildOptions, Built, Model, VerilatedError};

use tb::axil::{AxilMaster, AxilPorts, AxilResult};
use tb::axis::{AxisPorts, AxisSink, AxisSource};
use tb::dma::{DmaMemory, DmaPorts, DmaServer, DmaTiming, HostMemory};
use tb::rng::Rng;
use tb::stall::Stall;

/// Environment variable naming a directory: when set, [`build_core`]
/// builds the model with line and toggle coverage and every [`Nic`]
/// writes its `coverage.dat` there when dropped (one file per `Nic`), for
/// `scripts/coverage.sh` to merge.
pub const COVERAGE_DIR_ENV: &str = "MRC_COVERAGE_DIR";

/// The coverage output directory, if [`COVERAGE_DIR_ENV`] is set.
pub fn coverage_dir() -> Option<PathBuf> {
    std::env::var_os(COVERAGE_DIR_ENV)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

/// The Verilog name of the core's top module.
pub const CORE_MODULE: &str = "mrc_core";

/// Build (or find in the cache) the Verilator model of `mrc_core`, with
/// coverage if [`COVERAGE_DIR_ENV`] is set (whatever `opts` says). A
/// traced model is built from the Verilog with GTKWave-safe internal
/// names ([`crate::waves::traced_verilog`]).
pub fn build_core(opts: &BuildOptions) -> Result<Built, VerilatedError> {
    let rtl = emit_block(CORE_MODULE, &mut hw::core::MrcCore::new(BuildInfo::FIXED));
    let mut opts = opts.clone();
    opts.coverage |= coverage_dir().is_some();
    let verilog = if opts.trace {
        crate::waves::traced_verilog(&rtl.verilog, CORE_MODULE)
    } else {
        rtl.verilog
    };
    build(&verilog, CORE_MODULE, &opts, &default_cache_dir())
}

/// A fresh file name in `dir` for one model's coverage data: the process
/// id, the test thread's name and a per-process sequence number, so that
/// parallel tests and test binaries never overwrite each other.
fn coverage_file(dir: &Path) -> PathBuf {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let thread = std::thread::current()
        .name()
        .unwrap_or("main")
        .replace(|c: char| !c.is_ascii_alphanumeric(), "_");
    dir.join(format!("nic-{}-{thread}-{n}.dat", std::process::id()))
}

/// Stall settings of the surroundings.
#[derive(Clone, Copy, Debug)]
pub struct Stalls {
    /// The MAC TX sink's back-pressure.
    pub tx_ready: Stall,
    /// The MAC RX source's pauses between beats.
    pub rx_valid: Stall,
    pub dma: DmaTiming,
    /// The AXI-Lite master's back-pressure on B and R.
    pub axil_ready: Stall,
}

impl Default for Stalls {
    fn default() -> Self {
        Stalls {
            tx_ready: Stall::go_percent(90),
            rx_valid: Stall::NEVER,
            dma: DmaTiming::default(),
            axil_ready: Stall::go_percent(90),
        }
    }
}

/// The DMA port is served from `M`: a [`HostMemory`] (tests that lay out
/// host memory themselves) or the driver's buffers
/// (`crate::device::DriverMemory`).
pub struct Nic<M = HostMemory> {
    pub model: Model,
    pub axil: AxilMaster,
    pub dma: DmaServer<M>,
    pub rx: AxisSource,
    pub tx: AxisSink,
    pub rng: Rng,
    /// Clock cycles run so far (the core's `now_acc` counts them).
    pub cycles: u64,
    /// Where this model's coverage goes when the `Nic` is dropped.
    coverage_out: Option<PathBuf>,
}

impl<M> Drop for Nic<M> {
    fn drop(&mut self) {
        if let Some(dir) = self.coverage_out.take() {
            // A test that fails still leaves its coverage; a write error is
            // reported, not raised (this runs during unwinding too).
            let _ = std::fs::create_dir_all(&dir);
            if let Err(e) = self.model.write_coverage(&coverage_file(&dir)) {
                eprintln!("coverage of this Nic not written: {e}");
            }
        }
    }
}

impl Nic {
    pub fn new(built: &Built, stalls: Stalls, seed: u64) -> Result<Nic, VerilatedError> {
        Nic::with_memory(built, stalls, seed, HostMemory::default())
    }
}

impl<M: DmaMemory> Nic<M> {
    /// A NIC whose DMA port is served from `mem`.
    pub fn with_memory(built: &Built, stalls: Stalls, seed: u64, mem: M) -> Result<Nic<M>, VerilatedError> {
        let model = Model::load(built)?;
        let axil = AxilMaster::new(AxilPorts::find(&model, "s_axil$")?, stalls.axil_ready);
        let dma = DmaServer::with_memory(DmaPorts::find(&model, "dma_")?, stalls.dma, mem);
        let rx = AxisSource::new(AxisPorts::find(&model, "s_rx$")?, stalls.rx_valid);
        let tx = AxisSink::new(AxisPorts::find(&model, "m_tx$")?, stalls.tx_ready);
        // Only a model built with coverage has any to write.
        let coverage_out = coverage_dir().filter(|_| built.opts.coverage);
        Ok(Nic {
            model,
            axil,
            dma,
            rx,
            tx,
            rng: Rng::new(seed),
            cycles: 0,
            coverage_out,
        })
    }

    /// Start dumping an FST waveform (the model must be built with trace),
    /// its time axis in the core's time (3,093 ps a cycle in the file; the
    /// core's cycle is 3,093.75 ps), and write the saved GTKWave view of
    /// it beside it (`crate::waves`, `out.a.fst` -> `out.a.gtkw`).
    pub fn trace(&mut self, path: &Path) -> Result<(), VerilatedError> {
        self.model
            .trace_clocked(path, crate::fabric::cycles_to_ps(1000) / 1000)?;
        crate::waves::write_core_view(path).map_err(|source| VerilatedError::Io {
            path: crate::waves::gtkw_path(path),
            source,
        })?;
        Ok(())
    }

    /// One clock cycle of everything.
    pub fn step(&mut self) {
        self.cycles += 1;
        let m = &mut self.model;
        self.axil.drive(m, &mut self.rng);
        self.dma.drive(m, &mut self.rng);
        self.rx.drive(m, &mut self.rng);
        self.tx.drive(m, &mut self.rng);
        m.step();
        self.axil.observe(m);
        self.dma.observe(m, &mut self.rng);
        self.rx.observe(m);
        self.tx.observe(m);
    }

    /// The core's nanosecond clock now (`now_ns`, the `tx_ts` it stamps):
    /// `hw::core::NS_STEP_32THS` 32nds of a ns per cycle run, 32 bits.
    pub fn now_ns(&self) -> u32 {
        ((self.cycles * hw::core::NS_STEP_32THS) >> hw::core::NS_FRAC_BITS) as u32
    }

    pub fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step();
        }
    }

    /// Run until every queued CSR access has completed (at most `limit`
    /// cycles); the results in order.
    pub fn finish_csr(&mut self, limit: u64) -> Vec<AxilResult> {
        let mut n = 0;
        while !self.axil.idle() && n < limit {
            self.step();
            n += 1;
        }
        self.axil.results.drain(..).collect()
    }

    pub fn csr_write(&mut self, addr: u16, data: u32) {
        self.axil.write(addr, data);
        self.finish_csr(1000);
    }

    pub fn csr_read(&mut self, addr: u16) -> u32 {
        self.axil.read(addr);
        self.finish_csr(1000).last().map_or(0, |r| r.data)
    }

    /// Write one config-table row (the CSR block's staging registers, then
    /// `go`).
    pub fn cfg_row(&mut self, table: u8, index: u16, row: &[u8; 32]) {
        self.queue_cfg_row(table, index, row);
        self.finish_csr(10_000);
    }

    /// Queue the register writes of one config row without running the
    /// clock (the AXI-Lite master performs them as the NIC is stepped;
    /// drain `axil.results` now and then).
    pub fn queue_cfg_row(&mut self, table: u8, index: u16, row: &[u8; 32]) {
        use regmap::cfg as c;
        for k in 0..8 {
            let w = u32::from_le_bytes([row[4 * k], row[4 * k + 1], row[4 * k + 2], row[4 * k + 3]]);
            self.axil.write(c::BASE + c::DATA0 + 4 * k as u16, w);
        }
        self.axil.write(c::BASE + c::TABLE, u32::from(table));
        self.axil.write(c::BASE + c::INDEX, u32::from(index));
        self.axil.write(c::BASE + c::GO, 1);
    }

    /// Ring QP `qp`'s doorbell with the new send-queue producer index.
    pub fn doorbell(&mut self, qp: u8, producer: u32) {
        self.csr_write(regmap::doorbell::WINDOW + 4 * u16::from(qp), producer);
    }

    /// Read a counter by name.
    pub fn counter(&mut self, name: &str) -> u32 {
        let slot = regmap::counter_slot(name) as u16;
        self.csr_read(regmap::counters::BASE + regmap::counters::FIRST + 4 * slot)
    }
}

/// A 256-bit config row from little-endian fields `(bit, width, value)`.
pub fn row(fields: &[(usize, usize, u128)]) -> [u8; 32] {
    let mut r = [0u8; 32];
    for &(bit, width, value) in fields {
        for i in 0..width {
            if (value >> i) & 1 == 1 {
                let b = bit + i;
                r[b / 8] |= 1 << (b % 8);
            }
        }
    }
    r
}

/// A NIC's station address: the MAC (48 bits) and IP address. An IPv6
/// station sends IPv6 (the own row's `ipv6`), whose flow label carries
/// EV bits 31-16; over IPv4 only EV bits 15-0 reach the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Station {
    pub mac: u64,
    pub ip: IpAddr,
}

impl Station {
    /// An IPv4 station.
    pub const fn v4(mac: u64, ipv4: u32) -> Station {
        Station {
            mac,
            ip: IpAddr::V4(Ipv4Addr::from_bits(ipv4)),
        }
    }

    /// An IPv6 station.
    pub const fn v6(mac: u64, ipv6: u128) -> Station {
        Station {
            mac,
            ip: IpAddr::V6(Ipv6Addr::from_bits(ipv6)),
        }
    }

    /// The address as the address table's `ip_lo` / `ip_hi` fields hold
    /// it (IPv4 in bits 31-0), and whether it is IPv6.
    pub fn ip_bits(&self) -> (u128, bool) {
        match self.ip {
            IpAddr::V4(a) => (u128::from(a.to_bits()), false),
            IpAddr::V6(a) => (a.to_bits(), true),
        }
    }
}

/// Retransmit-engine parameters of one QP (config table 8; see
/// docs/hw/retransmit.md). Times in nanoseconds of the core's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetxParams {
    /// RTO = `ack_timeout(ack_timeout_exp)` = 1.024 us x 2^exp, exp <= 24.
    pub ack_timeout_exp: u8,
    /// Stall allowance `A`, a floor under the core's RTT estimate (0: the
    /// estimate's alone).
    pub stall_allowance_ns: u32,
    pub reorder_allowance: u16,
    pub retry_linear: u8,
    /// 25 = infinite.
    pub retry_exp: u8,
    /// Tail-check age, a floor under the estimate's (0: the estimate's
    /// alone).
    pub stall_age_ns: u32,
}

impl RetxParams {
    /// The one-card set-ups' parameters (the core tests, the hostile-traffic
    /// harness, the binding bench): RTO 1.024 us x 2^8 (262 us), stall
    /// allowance 50 us, reorder 3, 7 + 7 retries, the tail-check age left
    /// to the RTT estimate.
    pub const SINGLE_CARD: RetxParams = RetxParams {
        ack_timeout_exp: 8,
        stall_allowance_ns: 50_000,
        reorder_allowance: 3,
        retry_linear: 7,
        retry_exp: 7,
        stall_age_ns: 0,
    };
}

/// Receive-side set-up of a QP (the responder's tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponderParams {
    pub qp: u8,
    /// The first PSN it expects.
    pub start_psn: u32,
    /// The one memory region the peer writes: rkey, base VA, length.
    pub rkey: u32,
    pub region_va: u64,
    pub region_len: u64,
    /// log2 of the path MTU the RX path checks received payloads
    /// against (8..=13; 0 checks nothing).
    pub log2_mtu: u8,
}

/// Configuration through config rows, as a driver does it (the row
/// layouts are the ones of docs/hw/*.md and `contract::config::table`).
impl Nic {
    /// The NIC's own address row and peer row `peer_row`. DSCP 26, TTL 64.
    pub fn set_addresses(&mut self, local: Station, peer_row: u16, peer: Station) {
        self.set_addresses_wire(local, peer_row, peer, false);
    }

    /// [`Nic::set_addresses`] with the wire dialect the core sends:
    /// MRC 1.0 when `mrc10` (the own row's `wire_mrc10`), else legacy.
    pub fn set_addresses_wire(&mut self, local: Station, peer_row: u16, peer: Station, mrc10: bool) {
        use contract::config::{addr, table as cfg_table, Row};
        let station = |s: &Station| {
            let (ip, _) = s.ip_bits();
            Row::new()
                .set(addr::MAC, s.mac)
                .set(addr::IP_LO, ip as u64)
                .set(addr::IP_HI, (ip >> 64) as u64)
        };
        self.cfg_row(cfg_table::ADDR, peer_row, &station(&peer).0);
        let own = station(&local)
            .set(addr::IPV6, u64::from(local.ip_bits().1))
            .set(addr::DSCP, 26)
            .set(addr::TTL, 64)
            .set(addr::WIRE_MRC10, u64::from(mrc10));
        self.cfg_row(cfg_table::ADDR, contract::config::INDEX_SELECT, &own.0);
    }

    /// Completion ring `ring`: `2^log2_slots` 32-byte entries at `base`
    /// (resets its producer index).
    pub fn set_cq_ring(&mut self, ring: u8, base: u64, log2_slots: u8) {
        self.cfg_row(
            contract::config::table::CQ_RING,
            ring.into(),
            &row(&[(0, 64, u128::from(base)), (64, 8, u128::from(log2_slots))]),
        );
    }

    /// The driver consumed `consumed` entries (free running) of CQ `ring`:
    /// queued without waiting, so a running system is not held up.
    pub fn queue_cq_consumed(&mut self, ring: u8, consumed: u32) {
        self.queue_cfg_row(
            contract::config::table::CQ_RING,
            0x8000 | u16::from(ring),
            &row(&[(0, 32, u128::from(consumed))]),
        );
    }

    /// The EV-event ring: `2^log2_slots` 16-byte entries at `base`.
    pub fn set_ev_ring(&mut self, base: u64, log2_slots: u8) {
        self.cfg_row(
            contract::config::table::EV_RING,
            0,
            &row(&[(0, 64, u128::from(base)), (64, 8, u128::from(log2_slots))]),
        );
    }

    /// The driver consumed `consumed` EV events (free running); queued.
    pub fn queue_ev_consumed(&mut self, consumed: u32) {
        self.queue_cfg_row(
            contract::config::table::EV_RING,
            0x8000,
            &row(&[(0, 32, u128::from(consumed))]),
        );
    }

    /// CC gate row of `qp`: window bounds in bytes and the send window in
    /// PSNs.
    pub fn set_cc(&mut self, qp: u8, min_cwnd: u32, max_cwnd: u32, send_window_psns: u16) {
        self.cfg_row(
            contract::config::table::CC,
            qp.into(),
            &row(&[
                (0, 32, u128::from(min_cwnd)),
                (32, 32, u128::from(max_cwnd)),
                (64, 16, u128::from(send_window_psns)),
            ]),
        );
    }

    /// NSCC unit row of `qp` (table 14), enabled: the QP's window follows
    /// NSCC from its next start (send context). The window bounds are
    /// `set_cc`'s.
    pub fn set_nscc(&mut self, qp: u8, p: &proto::model::nscc_fixed::NsccFixedParams) {
        use contract::config::nscc;
        let f = |field: contract::field::Field, v: u32| (field.bit(), field.bits, u128::from(v));
        self.cfg_row(
            contract::config::table::NSCC,
            qp.into(),
            &row(&[
                f(nscc::BASE_RTT_NS, p.base_rtt_ns),
                f(nscc::TARGET_NS, p.target_ns),
                f(nscc::INCREASE_BYTES, p.increase_bytes),
                f(nscc::INIT_CWND, p.init_cwnd),
                f(nscc::DECREASE_GAIN, p.decrease_gain_q16),
                f(nscc::ENABLE, 1),
            ]),
        );
    }

    /// Retransmit-engine row of `qp`, and the scanner's last QP (global row).
    pub fn set_retransmit(&mut self, qp: u8, p: &RetxParams, last_scanned_qp: u8) {
        use contract::config::table as cfg_table;
        self.cfg_row(
            cfg_table::RETX_QP,
            qp.into(),
            &row(&[
                (0, 5, u128::from(p.ack_timeout_exp)),
                (32, 32, u128::from(p.stall_allowance_ns)),
                (64, 16, u128::from(p.reorder_allowance)),
                (80, 3, u128::from(p.retry_linear)),
                (83, 5, u128::from(p.retry_exp)),
                (88, 32, u128::from(p.stall_age_ns)),
            ]),
        );
        self.cfg_row(cfg_table::RETX_GLOBAL, 0, &row(&[(0, 8, u128::from(last_scanned_qp))]));
    }

    /// EV set of `qp`: EVs `0..count` get the values `first_value + i`;
    /// every other EV of the QP is denied (value 0, all 32 bits compared: the EV
    /// selector reports each as a DENIED event).
    pub fn set_ev_set(&mut self, qp: u8, count: u16, first_value: u32) {
        use contract::config::{ev_control, ev_value, table as cfg_table, Row, INDEX_SELECT};
        for e in 0..count {
            let value = Row::new().set(ev_value::VALUE, u64::from(first_value + u32::from(e)));
            self.cfg_row(cfg_table::EV, (u16::from(qp) << 7) | e, &value.0);
        }
        // Deny the slots beyond the set (value 0), as the driver does.
        let deny_unused = Row::new()
            .set(ev_control::MASK, u64::from(u32::MAX))
            .set(ev_control::MATCH, 0)
            .set(ev_control::ALLOW, 0);
        self.cfg_row(cfg_table::EV, INDEX_SELECT | u16::from(qp), &deny_unused.0);
    }

    /// Write `qp`'s send context: this starts the QP (the CC row must be
    /// written before).
    pub fn start_send_qp(&mut self, qp: u8, ctx: &contract::layout::SqContext) {
        let bytes = ctx.encode().expect("a valid send context");
        let mut r = [0u8; 32];
        r[..bytes.len()].copy_from_slice(&bytes);
        self.cfg_row(contract::config::table::SQ_CTX, qp.into(), &r);
    }

    /// ACK generator parameters (global): SACK every `ack_every` packets
    /// or `ack_delay_cycles` after the first unacknowledged one.
    pub fn set_ack_params(&mut self, ack_every: u16, ack_delay_cycles: u16) {
        self.cfg_row(
            contract::config::table::ACK_PARAMS,
            0,
            &row(&[(0, 16, u128::from(ack_every)), (16, 16, u128::from(ack_delay_cycles))]),
        );
    }

    /// The receive side of a QP: its memory region (slot = rkey mod 256),
    /// its expected PSN in the completion tracker, the ACK generator and
    /// the SACK table, and its path MTU (the RX path's check).
    pub fn set_responder(&mut self, p: &ResponderParams) {
        use contract::config::table as cfg_table;
        self.cfg_row(
            cfg_table::MR,
            (p.rkey & 0xFF) as u16,
            &row(&[
                (0, 32, u128::from(p.rkey)),
                (32, 64, u128::from(p.region_va)),
                (96, 64, u128::from(p.region_len)),
                (160, 1, 1),
            ]),
        );
        self.cfg_row(
            cfg_table::RECV_QP,
            p.qp.into(),
            &row(&[(0, 24, u128::from(p.start_psn)), (24, 4, u128::from(p.log2_mtu))]),
        );
        self.cfg_row(
            cfg_table::ACK_QP_INIT,
            p.qp.into(),
            &row(&[(0, 24, u128::from(p.start_psn))]),
        );
    }
}
