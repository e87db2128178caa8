//! AXI-Lite master for the CSR port: a queue of reads and writes issued
//! in order (the address and data channels of a write presented
//! together, each held until taken, as AXI requires), with random
//! `bready` / `rready` stalls; results come back in order. Writes are
//! pipelined as a PCIe bridge's AXI-Lite master issues the dwords of its
//! write requests (Corundum's `pcie_us_axil_master`: the next write's AW
//! and W follow as soon as the last ones are taken, the B responses are
//! collected behind, up to [`MAX_WRITES_IN_FLIGHT`]); a read waits until
//! every earlier write has its B response, so it sees them (a non-posted
//! read does not pass posted writes on PCIe).

use std::collections::VecDeque;

use verilated::{Model, PortId, VerilatedError};

use crate::rng::Rng;
use crate::stall::Stall;

/// The AXI-Lite slave ports of a model, found by prefix (`s_axil$`: the
/// bundle's fields, `s_axil$awaddr`, ...).
#[derive(Clone, Copy, Debug)]
pub struct AxilPorts {
    pub awvalid: PortId,
    pub awready: PortId,
    pub awaddr: PortId,
    pub wvalid: PortId,
    pub wready: PortId,
    pub wdata: PortId,
    pub wstrb: Option<PortId>,
    pub bvalid: PortId,
    pub bready: PortId,
    pub bresp: PortId,
    pub arvalid: PortId,
    pub arready: PortId,
    pub araddr: PortId,
    pub rvalid: PortId,
    pub rready: PortId,
    pub rdata: PortId,
    pub rresp: PortId,
}

impl AxilPorts {
    pub fn find(m: &Model, prefix: &str) -> Result<AxilPorts, VerilatedError> {
        let p = |n: &str| m.port(&format!("{prefix}{n}"));
        Ok(AxilPorts {
            awvalid: p("awvalid")?,
            awready: p("awready")?,
            awaddr: p("awaddr")?,
            wvalid: p("wvalid")?,
            wready: p("wready")?,
            wdata: p("wdata")?,
            wstrb: p("wstrb").ok(),
            bvalid: p("bvalid")?,
            bready: p("bready")?,
            bresp: p("bresp")?,
            arvalid: p("arvalid")?,
            arready: p("arready")?,
            araddr: p("araddr")?,
            rvalid: p("rvalid")?,
            rready: p("rready")?,
            rdata: p("rdata")?,
            rresp: p("rresp")?,
        })
    }
}

/// One CSR access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxilOp {
    Write { addr: u16, data: u32 },
    Read { addr: u16 },
}

/// Its outcome: the response code (0 OKAY, 2 SLVERR, ...) and, for a
/// read, the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxilResult {
    pub op: AxilOp,
    pub resp: u8,
    pub data: u32,
}

/// Writes whose AW and W were taken and whose B has not come back: the
/// bridge's response FIFO.
pub const MAX_WRITES_IN_FLIGHT: usize = 16;

pub struct AxilMaster {
    ports: AxilPorts,
    ops: VecDeque<AxilOp>,
    /// Writes issued (AW and W taken) waiting for their B, in order.
    writes_in_flight: VecDeque<AxilOp>,
    aw_done: bool,
    w_done: bool,
    a_done: bool,
    /// What `drive` offered this cycle (AW, W, AR valid): `observe`
    /// counts a handshake only on a channel offered.
    offered: (bool, bool, bool),
    bready: bool,
    rready: bool,
    /// Back-pressure on the B and R channels.
    pub backpressure: Stall,
    pub results: VecDeque<AxilResult>,
}

impl AxilMaster {
    pub fn new(ports: AxilPorts, backpressure: Stall) -> AxilMaster {
        AxilMaster {
            ports,
            ops: VecDeque::new(),
            writes_in_flight: VecDeque::new(),
            aw_done: false,
            w_done: false,
            a_done: false,
            offered: (false, false, false),
            bready: false,
            rready: false,
            backpressure,
            results: VecDeque::new(),
        }
    }
    pub fn push(&mut self, op: AxilOp) {
        self.ops.push_back(op);
    }
    pub fn write(&mut self, addr: u16, data: u32) {
        self.push(AxilOp::Write { addr, data });
    }
    pub fn read(&mut self, addr: u16) {
        self.push(AxilOp::Read { addr });
    }
    pub fn idle(&self) -> bool {
        self.ops.is_empty() && self.writes_in_flight.is_empty()
    }
    pub fn drive(&mut self, m: &mut Model, rng: &mut Rng) {
        let p = self.ports;
        let (mut aw, mut w, mut ar) = (false, false, false);
        match self.ops.front() {
            Some(&AxilOp::Write { addr, data }) if self.writes_in_flight.len() < MAX_WRITES_IN_FLIGHT => {
                aw = !self.aw_done;
                w = !self.w_done;
                m.set(p.awaddr, u64::from(addr));
                m.set(p.wdata, u64::from(data));
                if let Some(s) = p.wstrb {
                    m.set(s, 0xf);
                }
            }
            Some(&AxilOp::Read { addr }) if self.writes_in_flight.is_empty() => {
                ar = !self.a_done;
                m.set(p.araddr, u64::from(addr));
            }
            _ => {}
        }
        self.offered = (aw, w, ar);
        m.set(p.awvalid, u64::from(aw));
        m.set(p.wvalid, u64::from(w));
        m.set(p.arvalid, u64::from(ar));
        self.bready = self.backpressure.go(rng);
        self.rready = self.backpressure.go(rng);
        m.set(p.bready, u64::from(self.bready));
        m.set(p.rready, u64::from(self.rready));
    }
    pub fn observe(&mut self, m: &Model) {
        let p = self.ports;
        // A B response: the oldest write in flight's.
        if self.bready && m.get_bit(p.bvalid) {
            if let Some(op) = self.writes_in_flight.pop_front() {
                self.results.push_back(AxilResult {
                    op,
                    resp: m.get(p.bresp) as u8,
                    data: 0,
                });
            }
        }
        let Some(&op) = self.ops.front() else { return };
        match op {
            AxilOp::Write { .. } => {
                if self.offered.0 && m.get_bit(p.awready) {
                    self.aw_done = true;
                }
                if self.offered.1 && m.get_bit(p.wready) {
                    self.w_done = true;
                }
                if self.aw_done && self.w_done {
                    self.writes_in_flight.push_back(op);
                    self.ops.pop_front();
                    (self.aw_done, self.w_done) = (false, false);
                }
            }
            AxilOp::Read { .. } => {
                if self.offered.2 && m.get_bit(p.arready) {
                    self.a_done = true;
                }
                if self.rready && m.get_bit(p.rvalid) {
                    self.results.push_back(AxilResult {
                        op,
                        resp: m.get(p.rresp) as u8,
                        data: m.get(p.rdata) as u32,
                    });
                    self.ops.pop_front();
                    self.a_done = false;
                }
            }
        }
    }
}
