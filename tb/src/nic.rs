//! One verilated `MrcCore` with its surroundings: the AXI-Lite master for
//! the CSRs, the host memory behind the DMA port, and the MAC streams as an
//! AXI-Stream source (RX) and sink (TX). Every cycle drives and observes
//! all of them in the order `tb`'s components require.
//!
//! This is what a test or the co-simulation backend of the driver uses to
//! talk to the RTL: register reads and writes (blocking: they run the clock
//! until the access completes), config-table rows, doorbells, and host
//! memory.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use hw::csr::BuildInfo;
use hw::flow::emit_block;
use hw::regmap;
use sim::verilated::{build, default_cache_dir, BuildOptions, Built, Model, VerilatedError};

use crate::axil::{AxilMaster, AxilPorts, AxilResult};
use crate::axis::{AxisPorts, AxisSink, AxisSource};
use crate::dma::{DmaPorts, DmaServer, DmaTiming};
use crate::rng::Rng;

/// Environment variable naming a directory: when set, [`build_core`]
/// builds the model with line and toggle coverage and every [`Nic`]
/// writes its `coverage.dat` there when dropped (one file per `Nic`), for
/// `scripts/coverage.sh` to merge.
pub const COVERAGE_DIR_ENV: &str = "MRC_COVERAGE_DIR";

/// The coverage output directory, if [`COVERAGE_DIR_ENV`] is set.
pub fn coverage_dir() -> Option<PathBuf> {
    std::env::var_os(COVERAGE_DIR_ENV).filter(|d| !d.is_empty()).map(PathBuf::from)
}

/// Build (or find in the cache) the Verilator model of `mrc_core`, with
/// coverage if [`COVERAGE_DIR_ENV`] is set (whatever `opts` says).
pub fn build_core(opts: &BuildOptions) -> Result<Built, VerilatedError> {
    let rtl = emit_block("mrc_core", &mut hw::core::MrcCore::new(BuildInfo::FIXED));
    let mut opts = opts.clone();
    opts.coverage |= coverage_dir().is_some();
    build(&rtl.verilog, "mrc_core", &opts, &default_cache_dir())
}

/// A fresh file name in `dir` for one model's coverage data: the process
/// id, the test thread's name and a per-process sequence number, so that
/// parallel tests and test binaries never overwrite each other.
fn coverage_file(dir: &Path) -> PathBuf {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let thread = std::thread::current().name().unwrap_or("main").replace(|c: char| !c.is_ascii_alphanumeric(), "_");
    dir.join(format!("nic-{}-{thread}-{n}.dat", std::process::id()))
}

/// Stall settings of the surroundings.
#[derive(Clone, Copy, Debug)]
pub struct Stalls {
    /// Percent of cycles the MAC TX sink is ready.
    pub tx_ready_pct: u32,
    /// Percent of cycles the RX source offers a pending beat.
    pub rx_valid_pct: u32,
    pub dma: DmaTiming,
    pub axil_ready_pct: u32,
}

impl Default for Stalls {
    fn default() -> Self {
        Stalls { tx_ready_pct: 90, rx_valid_pct: 100, dma: DmaTiming::default(), axil_ready_pct: 90 }
    }
}

pub struct Nic {
    pub model: Model,
    pub axil: AxilMaster,
    pub dma: DmaServer,
    pub rx: AxisSource,
    pub tx: AxisSink,
    pub rng: Rng,
    /// Where this model's coverage goes when the `Nic` is dropped.
    coverage_out: Option<PathBuf>,
}

impl Drop for Nic {
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
        let model = Model::load(built)?;
        let axil = AxilMaster::new(AxilPorts::find(&model, "s_axil_")?, stalls.axil_ready_pct);
        let dma = DmaServer::new(DmaPorts::find(&model, "dma_")?, stalls.dma);
        let rx = AxisSource::new(AxisPorts::find(&model, "s_rx_")?, stalls.rx_valid_pct);
        let tx = AxisSink::new(AxisPorts::find(&model, "m_tx_")?, stalls.tx_ready_pct);
        // Only a model built with coverage has any to write.
        let coverage_out = coverage_dir().filter(|_| built.opts.coverage);
        Ok(Nic { model, axil, dma, rx, tx, rng: Rng::new(seed), coverage_out })
    }

    /// Start dumping an FST waveform (the model must be built with trace).
    pub fn trace(&mut self, path: &Path) -> Result<(), VerilatedError> {
        self.model.trace(path)
    }

    /// One clock cycle of everything.
    pub fn step(&mut self) {
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
        use regmap::cfg as c;
        for k in 0..8 {
            let w = u32::from_le_bytes([row[4 * k], row[4 * k + 1], row[4 * k + 2], row[4 * k + 3]]);
            self.axil.write(c::BASE + c::DATA0 + 4 * k as u16, w);
        }
        self.axil.write(c::BASE + c::TABLE, u32::from(table));
        self.axil.write(c::BASE + c::INDEX, u32::from(index));
        self.axil.write(c::BASE + c::GO, 1);
        self.finish_csr(10_000);
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
