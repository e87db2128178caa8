//! One verilated `MrcCore` with its surroundings: the AXI-Lite master for
//! the CSRs, the host memory behind the DMA port, and the MAC streams as an
//! AXI-Stream source (RX) and sink (TX). Every cycle drives and observes
//! all of them in the order `tb`'s components require.
//!
//! This is what a test or the co-simulation backend of the driver uses to
//! talk to the RTL: register reads and writes (blocking: they run the clock
//! until the access completes), config-table rows, doorbells, and host
//! memory.

use std::path::Path;

use hw::csr::BuildInfo;
use hw::flow::emit_block;
use hw::regmap;
use sim::verilated::{build, default_cache_dir, BuildOptions, Built, Model, VerilatedError};

use crate::axil::{AxilMaster, AxilPorts, AxilResult};
use crate::axis::{AxisPorts, AxisSink, AxisSource};
use crate::dma::{DmaMemory, DmaPorts, DmaServer, DmaTiming, HostMemory};
use crate::rng::Rng;

/// Build (or find in the cache) the Verilator model of `mrc_core`.
pub fn build_core(opts: &BuildOptions) -> Result<Built, VerilatedError> {
    let rtl = emit_block("mrc_core", &mut hw::core::MrcCore::new(BuildInfo::FIXED));
    build(&rtl.verilog, "mrc_core", opts, &default_cache_dir())
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

/// The DMA port is served from `M`: a [`HostMemory`] (tests that lay out
/// host memory themselves) or the driver's buffers
/// (`crate::cosim_device::DriverMemory`).
pub struct Nic<M = HostMemory> {
    pub model: Model,
    pub axil: AxilMaster,
    pub dma: DmaServer<M>,
    pub rx: AxisSource,
    pub tx: AxisSink,
    pub rng: Rng,
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
        let axil = AxilMaster::new(AxilPorts::find(&model, "s_axil_")?, stalls.axil_ready_pct);
        let dma = DmaServer::with_memory(DmaPorts::find(&model, "dma_")?, stalls.dma, mem);
        let rx = AxisSource::new(AxisPorts::find(&model, "s_rx_")?, stalls.rx_valid_pct);
        let tx = AxisSink::new(AxisPorts::find(&model, "m_tx_")?, stalls.tx_ready_pct);
        Ok(Nic { model, axil, dma, rx, tx, rng: Rng::new(seed) })
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
