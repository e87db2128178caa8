//! The CSR block behind the AXI-Lite slave, against a reference register
//! file built from `contract::regmap` (the single definition of the map): a
//! seeded random AXI-Lite master issues writes and reads with independent
//! AW/W/B/AR/R valids and random ready stalls; every read response must
//! equal the reference at the cycle the read reached the CSR port, every
//! write with full strobes must take effect there (partial strobes:
//! SLVERR, no effect), counters count random increment pulses and clear
//! per group, and the fault-injection outputs, config-row pulses, seed-load
//! pulses, doorbell pulses and push-window words must follow the writes
//! cycle by cycle. The
//! test also walks the block list like a driver and asserts its own
//! coverage.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use contract::regmap::{self, cfg, counters, doorbell, fault_inject, push, Access, BLOCKS, COUNTERS, N_COUNTERS};
use hw::axil::{resp, AxiLiteSlave};
use hw::csr::{BuildInfo, Csr};
use rust_hdl::prelude::*;

use tb::rng::Rng;
use tb::stall::Stall;

/// The AW and W channels' pauses, the AR channel's, and the back-pressure on B and R.
const WRITE_PAUSE: Stall = Stall::go_percent(45);
const READ_PAUSE: Stall = Stall::go_percent(50);
const BACKPRESSURE: Stall = Stall::go_percent(60);
/// How often the blocks behind the config port can take a row
/// (`cfg_ready`): a row then waits in the CSR and holds the writes behind it.
const CFG_READY: Stall = Stall::go_percent(40);

#[derive(LogicBlock)]
struct Bus {
    clock: Signal<In, Clock>,
    axil: AxiLiteSlave,
    csr: Csr,
}

impl Logic for Bus {
    #[hdl_gen]
    fn update(&mut self) {
        self.axil.clock.next = self.clock.val();
        self.csr.clock.next = self.clock.val();
        self.csr.wr_en.next = self.axil.wr_en.val();
        self.csr.wr_addr.next = self.axil.wr_addr.val();
        self.csr.wr_data.next = self.axil.wr_data.val();
        self.csr.rd_en.next = self.axil.rd_en.val();
        self.csr.rd_addr.next = self.axil.rd_addr.val();
        self.axil.rd_data.next = self.csr.rd_data.val();
        self.axil.rd_valid.next = self.csr.rd_valid.val();
        self.axil.wr_hold.next = self.csr.wr_hold.val();
    }
}

const BUILD: BuildInfo = BuildInfo {
    git_hash: 0xdead_beef_0bad_cafe,
    build_date: 1_700_000_000,
};

/// Implemented bits of each writable register (the rest read 0).
fn rw_mask(block: &str, name: &str) -> u32 {
    match (block, name) {
        ("fault_inject", "ctrl") => 0x7,
        ("fault_inject", "drop_prob") => 0x1_FFFF,
        ("fault_inject", "ev_en") => 0xF,
        ("cfg", "table") => 0xF,
        ("cfg", "index") => 0xFFFF,
        _ => 0xFFFF_FFFF,
    }
}

/// The reference register file.
#[derive(Default)]
struct RefCsr {
    rw: HashMap<u16, u32>,
    masks: HashMap<u16, u32>,
    ro: HashMap<u16, u32>,
    counts: Vec<u32>,
    cfg_rows: u32,
    go_pending: bool,
}

/// Pulses a write is expected to produce in the next cycle.
#[derive(Default, Debug, PartialEq)]
struct Pulses {
    seed_load: bool,
    db: Option<(u32, u32)>,
    /// A push-window word: (word index, value).
    push: Option<(u32, u32)>,
}

impl RefCsr {
    fn new() -> RefCsr {
        let mut r = RefCsr {
            counts: vec![0; N_COUNTERS],
            ..Default::default()
        };
        for (i, b) in BLOCKS.iter().enumerate() {
            r.ro.insert(b.base + regmap::HDR_TYPE, b.block_type);
            r.ro.insert(b.base + regmap::HDR_VERSION, b.version);
            r.ro.insert(b.base + regmap::HDR_NEXT, u32::from(regmap::next_of(i)));
            for reg in b.regs {
                let a = b.base + reg.offset;
                match reg.access {
                    Access::Rw => {
                        r.rw.insert(a, reg.reset);
                        r.masks.insert(a, rw_mask(b.name, reg.name));
                    }
                    Access::Ro => {
                        r.ro.insert(a, reg.reset);
                    }
                    Access::Wo => {}
                }
            }
        }
        let bi = regmap::build_id::BASE;
        r.ro.insert(bi + regmap::build_id::GIT_HASH_HI, (BUILD.git_hash >> 32) as u32);
        r.ro.insert(bi + regmap::build_id::GIT_HASH_LO, BUILD.git_hash as u32);
        r.ro.insert(bi + regmap::build_id::BUILD_DATE, BUILD.build_date);
        r
    }
    fn read(&self, a: u16) -> u32 {
        if a == cfg::BASE + cfg::STATUS {
            return (self.cfg_rows << 16) | u32::from(self.go_pending);
        }
        let first = counters::BASE + counters::FIRST;
        if (first..first + 4 * counters::MAX as u16).contains(&a) {
            return self.counts.get(usize::from((a - first) / 4)).copied().unwrap_or(0);
        }
        self.rw.get(&a).or(self.ro.get(&a)).copied().unwrap_or(0)
    }
    fn rw(&self, block_base: u16, off: u16) -> u32 {
        self.rw[&(block_base + off)]
    }
    /// One clock edge: `write` (if the CSR port wrote) and the counter
    /// pulses `inc`. Returns the pulses expected in the next cycle.
    /// `cfg_ready`: the blocks took the pending row (if any) this cycle.
    fn edge(&mut self, write: Option<(u16, u32)>, inc: u64, cfg_ready: bool) -> Pulses {
        let mut p = Pulses::default();
        if self.go_pending && cfg_ready {
            self.cfg_rows = (self.cfg_rows + 1) & 0xFFFF;
            self.go_pending = false;
        }
        let mut clear = 0u32;
        if let Some((a, d)) = write {
            if let Some(m) = self.masks.get(&a) {
                self.rw.insert(a, d & m);
            }
            if a == counters::BASE + counters::CLEAR {
                clear = d & 0xFF;
            }
            if a == cfg::BASE + cfg::GO && d & 1 == 1 {
                self.go_pending = true;
            }
            if a == fault_inject::BASE + fault_inject::SEED {
                p.seed_load = true;
            }
            if (doorbell::WINDOW..doorbell::WINDOW + 1024).contains(&a) {
                p.db = Some((u32::from((a - doorbell::WINDOW) / 4), d));
            }
            if (push::WINDOW..push::WINDOW + push::SIZE).contains(&a) {
                p.push = Some((u32::from((a - push::WINDOW) / 4), d));
            }
        }
        for (i, c) in COUNTERS.iter().enumerate() {
            if clear >> c.group & 1 == 1 {
                self.counts[i] = 0;
            } else if inc >> i & 1 == 1 {
                self.counts[i] = self.counts[i].wrapping_add(1);
            }
        }
        p
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Write { addr: u16, data: u32, strb: u8 },
    Read { addr: u16 },
}

/// Every mapped address (headers, registers, counter slots), a few holes,
/// doorbells.
fn addresses() -> Vec<u16> {
    let mut v = Vec::new();
    for b in BLOCKS {
        v.extend([b.base, b.base + 4, b.base + 8]);
        v.extend(b.regs.iter().map(|r| b.base + r.offset));
    }
    v.extend((0..counters::MAX as u16).map(|i| counters::BASE + counters::FIRST + 4 * i));
    v.extend([0x0ffc, 0x01fc, 0x0518, 0x2000, 0xfffc, 0x0300 + 0x1c, push::WINDOW]);
    v
}

#[derive(Default, Debug)]
struct Coverage {
    reads: usize,
    writes: usize,
    slverr: usize,
    aw_before_w: usize,
    w_before_aw: usize,
    aw_with_w: usize,
    b_stalled: usize,
    r_stalled: usize,
    both_ports_same_cycle: usize,
    nonzero_counter_reads: usize,
    group_clears: usize,
    cfg_rows: usize,
    /// Cycles a row waited for `cfg_ready`, and writes held behind it.
    cfg_waits: usize,
    writes_held: usize,
    doorbells: usize,
    push_words: usize,
    seed_loads: usize,
    rw_regs_written: std::collections::HashSet<u16>,
}

fn ops(rng: &mut Rng, n: usize) -> Vec<Op> {
    let addrs = addresses();
    let rw: Vec<u16> = BLOCKS
        .iter()
        .flat_map(|b| {
            b.regs
                .iter()
                .filter(|r| r.access == Access::Rw)
                .map(move |r| b.base + r.offset)
        })
        .collect();
    let mut v = Vec::new();
    for _ in 0..n {
        let op = match rng.below(20) {
            0..=7 => Op::Read {
                addr: addrs[rng.below(addrs.len() as u64) as usize],
            },
            8..=12 => Op::Write {
                addr: rw[rng.below(rw.len() as u64) as usize],
                data: rng.next_u64() as u32,
                strb: 0xF,
            },
            13 => Op::Write {
                addr: counters::BASE + counters::CLEAR,
                data: 1 << rng.below(8),
                strb: 0xF,
            },
            14 => Op::Write {
                addr: cfg::BASE + cfg::GO,
                data: 1,
                strb: 0xF,
            },
            15 => Op::Write {
                addr: if rng.below(2) == 0 {
                    doorbell::WINDOW + 4 * rng.below(256) as u16
                } else {
                    push::WINDOW + 4 * rng.below(u64::from(push::SIZE / 4)) as u16
                },
                data: rng.next_u64() as u32,
                strb: 0xF,
            },
            16 => Op::Write {
                addr: fault_inject::BASE + fault_inject::SEED,
                data: rng.next_u64() as u32,
                strb: [0xF, 0x3, 0x1][rng.below(3) as usize],
            },
            17 => Op::Write {
                addr: rw[rng.below(rw.len() as u64) as usize],
                data: rng.next_u64() as u32,
                strb: 0x7,
            },
            18 => Op::Write {
                addr: addrs[rng.below(addrs.len() as u64) as usize],
                data: rng.next_u64() as u32,
                strb: 0xF,
            },
            _ => Op::Read {
                addr: counters::BASE + counters::FIRST + 4 * rng.below(N_COUNTERS as u64) as u16,
            },
        };
        v.push(op);
    }
    v
}

fn u(b: Bits<32>) -> u32 {
    b.index() as u32
}

#[test]
fn csr_through_axil_matches_regmap_reference() {
    let mut rng = Rng::from_state(0x00C5_2026_1130_0001);
    let script = ops(&mut rng, 700);
    let cov = Arc::new(Mutex::new(Coverage::default()));
    let cv = cov.clone();
    let mut uut = Bus {
        clock: Default::default(),
        axil: Default::default(),
        csr: Csr::new(BUILD),
    };
    // The testbench drives these sub-block inputs directly.
    uut.axil.s_axil.awaddr.connect();
    uut.axil.s_axil.awvalid.connect();
    uut.axil.s_axil.wdata.connect();
    uut.axil.s_axil.wstrb.connect();
    uut.axil.s_axil.wvalid.connect();
    uut.axil.s_axil.bready.connect();
    uut.axil.s_axil.araddr.connect();
    uut.axil.s_axil.arvalid.connect();
    uut.axil.s_axil.rready.connect();
    uut.csr.cnt_inc.connect();
    uut.csr.cfg_ready.connect();
    uut.connect_all();
    let mut sim = simple_sim!(Bus, clock, 100_000_000, sim, {
        let mut x = sim.init()?;
        let mut rng = Rng::from_state(0x5EED_0000_CAFE_0042);
        let mut reference = RefCsr::new();
        let mut cov = cv.lock().unwrap();
        wait_clock_true!(sim, clock, x);
        // ---- Driver walk of the block list, one read at a time (the
        // simplest master: AR, then R).
        let mut addr = 0u16;
        let mut seen = 0;
        loop {
            let mut words = [0u32; 3];
            for (k, w) in words.iter_mut().enumerate() {
                x.axil.s_axil.araddr.next = u64::from(addr + 4 * k as u16).into();
                x.axil.s_axil.arvalid.next = true;
                x.axil.s_axil.rready.next = true;
                wait_clock_cycle!(sim, clock, x);
                x.axil.s_axil.arvalid.next = false;
                let mut guard = 0;
                while !x.axil.s_axil.rvalid.val() {
                    wait_clock_cycle!(sim, clock, x);
                    guard += 1;
                    sim_assert!(sim, guard < 8, x);
                }
                *w = u(x.axil.s_axil.rdata.val());
                wait_clock_cycle!(sim, clock, x);
            }
            x.axil.s_axil.rready.next = false;
            let b = &BLOCKS[seen];
            sim_assert_eq!(sim, (addr, words[0], words[1]), (b.base, b.block_type, b.version), x);
            seen += 1;
            if words[2] == 0 {
                break;
            }
            addr = words[2] as u16;
        }
        sim_assert_eq!(sim, seen, BLOCKS.len(), x);
        // ---- Random traffic.
        let mut aw_q: VecDeque<u16> = VecDeque::new();
        let mut w_q: VecDeque<(u32, u8)> = VecDeque::new();
        let mut b_expect: VecDeque<u8> = VecDeque::new();
        let mut ar_q: VecDeque<u16> = VecDeque::new();
        let mut r_expect: VecDeque<u32> = VecDeque::new();
        // Full-strobe writes sent and not yet seen on the CSR port.
        let mut wr_expect: VecDeque<(u16, u32)> = VecDeque::new();
        for op in &script {
            match *op {
                Op::Write { addr, data, strb } => {
                    aw_q.push_back(addr);
                    w_q.push_back((data, strb));
                    b_expect.push_back(if strb == 0xF { resp::OKAY } else { resp::SLVERR });
                    if strb == 0xF {
                        wr_expect.push_back((addr, data));
                    }
                }
                Op::Read { addr } => ar_q.push_back(addr),
            }
        }
        let mut aw_on = false;
        let mut w_on = false;
        let mut ar_on = false;
        let mut aw_done_first = 0i64; // +: AW ahead of W, -: W ahead
        let mut pulses = Pulses::default();
        let mut cycles = 0;
        while !(aw_q.is_empty() && ar_q.is_empty() && b_expect.is_empty() && r_expect.is_empty() && !aw_on && !w_on) {
            cycles += 1;
            sim_assert!(sim, cycles < 20_000, x);
            // Present (valids stay up until taken, as AXI requires).
            if !aw_on && !aw_q.is_empty() && WRITE_PAUSE.go(&mut rng) {
                aw_on = true;
                x.axil.s_axil.awaddr.next = u64::from(aw_q[0]).into();
            }
            if !w_on && !w_q.is_empty() && WRITE_PAUSE.go(&mut rng) {
                w_on = true;
                x.axil.s_axil.wdata.next = u64::from(w_q[0].0).into();
                x.axil.s_axil.wstrb.next = u64::from(w_q[0].1).into();
            }
            if !ar_on && !ar_q.is_empty() && READ_PAUSE.go(&mut rng) {
                ar_on = true;
                x.axil.s_axil.araddr.next = u64::from(ar_q[0]).into();
            }
            x.axil.s_axil.awvalid.next = aw_on;
            x.axil.s_axil.wvalid.next = w_on;
            x.axil.s_axil.arvalid.next = ar_on;
            x.axil.s_axil.bready.next = BACKPRESSURE.go(&mut rng);
            x.axil.s_axil.rready.next = BACKPRESSURE.go(&mut rng);
            let inc = rng.next_u64() & (u64::MAX >> (64 - N_COUNTERS)) & rng.next_u64();
            x.csr.cnt_inc.next = inc.into();
            let cfg_ready = CFG_READY.go(&mut rng);
            x.csr.cfg_ready.next = cfg_ready;
            wait_clock_false!(sim, clock, x);
            // Registered outputs follow the reference as of the last edge.
            let f = fault_inject::BASE;
            sim_assert_eq!(
                sim,
                x.csr.fi_ctrl.val().index() as u32,
                reference.rw(f, fault_inject::CTRL),
                x
            );
            sim_assert_eq!(sim, u(x.csr.fi_seed.val()), reference.rw(f, fault_inject::SEED), x);
            sim_assert_eq!(
                sim,
                x.csr.fi_drop_prob.val().index() as u32,
                reference.rw(f, fault_inject::DROP_PROB),
                x
            );
            sim_assert_eq!(
                sim,
                x.csr.fi_ev_en.val().index() as u32,
                reference.rw(f, fault_inject::EV_EN),
                x
            );
            sim_assert_eq!(
                sim,
                u(x.csr.fi_ev_match0.val()),
                reference.rw(f, fault_inject::EV_MATCH0),
                x
            );
            sim_assert_eq!(
                sim,
                u(x.csr.fi_ev_match3.val()),
                reference.rw(f, fault_inject::EV_MATCH3),
                x
            );
            // A row goes out only when taken; while it waits, no write
            // reaches the CSR port (it would overwrite the row).
            let row_taken = reference.go_pending && cfg_ready;
            sim_assert_eq!(sim, x.csr.cfg.valid.val(), row_taken, x);
            sim_assert_eq!(sim, x.csr.wr_hold.val(), reference.go_pending, x);
            sim_assert!(sim, !(x.csr.wr_en.val() && reference.go_pending), x);
            cov.cfg_waits += usize::from(reference.go_pending && !cfg_ready);
            cov.writes_held +=
                usize::from(reference.go_pending && x.axil.s_axil.awvalid.val() && x.axil.s_axil.wvalid.val());
            sim_assert_eq!(sim, x.csr.fi_seed_load.val(), pulses.seed_load, x);
            sim_assert_eq!(sim, x.csr.db_valid.val(), pulses.db.is_some(), x);
            if let Some((qp, v)) = pulses.db {
                sim_assert_eq!(
                    sim,
                    (x.csr.db_qp.val().index() as u32, u(x.csr.db_value.val())),
                    (qp, v),
                    x
                );
                cov.doorbells += 1;
            }
            sim_assert_eq!(sim, x.csr.push_valid.val(), pulses.push.is_some(), x);
            if let Some((word, v)) = pulses.push {
                sim_assert_eq!(
                    sim,
                    (x.csr.push_word.val().index() as u32, u(x.csr.push_data.val())),
                    (word, v),
                    x
                );
                cov.push_words += 1;
            }
            if row_taken {
                let c = cfg::BASE;
                sim_assert_eq!(
                    sim,
                    x.csr.cfg.table.val().index() as u32,
                    reference.rw(c, cfg::TABLE),
                    x
                );
                sim_assert_eq!(
                    sim,
                    x.csr.cfg.index.val().index() as u32,
                    reference.rw(c, cfg::INDEX),
                    x
                );
                let data = x.csr.cfg.data.val();
                for k in 0..8u16 {
                    let word = data.get_bits::<32>(32 * usize::from(k)).index() as u32;
                    sim_assert_eq!(sim, word, reference.rw(c, cfg::DATA0 + 4 * k), x);
                }
                cov.cfg_rows += 1;
            }
            cov.seed_loads += usize::from(pulses.seed_load);
            // Handshakes of this cycle.
            let aw_hs = aw_on && x.axil.s_axil.awready.val();
            let w_hs = w_on && x.axil.s_axil.wready.val();
            if aw_hs {
                aw_on = false;
                aw_q.pop_front();
                aw_done_first += 1;
            }
            if w_hs {
                w_on = false;
                w_q.pop_front();
                aw_done_first -= 1;
            }
            match (aw_hs, w_hs) {
                (true, true) => cov.aw_with_w += 1,
                (true, false) if aw_done_first > 0 => cov.aw_before_w += 1,
                (false, true) if aw_done_first < 0 => cov.w_before_aw += 1,
                _ => {}
            }
            if ar_on && x.axil.s_axil.arready.val() {
                ar_on = false;
                ar_q.pop_front();
            }
            if x.axil.s_axil.bvalid.val() {
                if x.axil.s_axil.bready.val() {
                    let want = b_expect.pop_front();
                    sim_assert_eq!(sim, Some(x.axil.s_axil.bresp.val().index() as u8), want, x);
                    cov.slverr += usize::from(want == Some(resp::SLVERR));
                } else {
                    cov.b_stalled += 1;
                }
            }
            if x.axil.s_axil.rvalid.val() {
                if x.axil.s_axil.rready.val() {
                    let want = r_expect.pop_front();
                    sim_assert_eq!(sim, Some(u(x.axil.s_axil.rdata.val())), want, x);
                    sim_assert_eq!(sim, x.axil.s_axil.rresp.val().index() as u8, resp::OKAY, x);
                } else {
                    cov.r_stalled += 1;
                }
            }
            // The CSR port: reads see the state before this edge.
            if x.csr.rd_en.val() {
                let a = x.csr.rd_addr.val().index() as u16;
                let v = reference.read(a);
                let slot = counters::BASE + counters::FIRST;
                if (slot..slot + 4 * N_COUNTERS as u16).contains(&a) && v != 0 {
                    cov.nonzero_counter_reads += 1;
                }
                r_expect.push_back(v);
                cov.reads += 1;
            }
            let write = if x.csr.wr_en.val() {
                let w = (x.csr.wr_addr.val().index() as u16, u(x.csr.wr_data.val()));
                sim_assert_eq!(sim, Some(w), wr_expect.pop_front(), x);
                cov.writes += 1;
                if reference.masks.contains_key(&w.0) {
                    cov.rw_regs_written.insert(w.0);
                }
                if w.0 == counters::BASE + counters::CLEAR {
                    cov.group_clears += 1;
                }
                Some(w)
            } else {
                None
            };
            cov.both_ports_same_cycle += usize::from(x.csr.wr_en.val() && x.csr.rd_en.val());
            pulses = reference.edge(write, inc, cfg_ready);
            wait_clock_true!(sim, clock, x);
        }
        sim_assert!(sim, wr_expect.is_empty(), x);
        sim.done(x)
    });
    sim.run(Box::new(uut), 10_000_000_000).unwrap();
    let cov = cov.lock().unwrap();
    eprintln!("coverage: {cov:?}");
    let rw_total = BLOCKS
        .iter()
        .flat_map(|b| b.regs)
        .filter(|r| r.access == Access::Rw)
        .count();
    assert!(cov.reads >= 100 && cov.writes >= 90, "{cov:?}");
    assert!(cov.slverr >= 5, "{cov:?}");
    assert!(
        cov.aw_before_w >= 5 && cov.w_before_aw >= 5 && cov.aw_with_w >= 5,
        "{cov:?}"
    );
    assert!(cov.b_stalled >= 10 && cov.r_stalled >= 10, "{cov:?}");
    assert!(cov.both_ports_same_cycle >= 3, "{cov:?}");
    assert!(cov.nonzero_counter_reads >= 20, "{cov:?}");
    assert!(
        cov.group_clears >= 5
            && cov.cfg_rows >= 5
            && cov.cfg_waits >= 5
            && cov.writes_held >= 1
            && cov.doorbells >= 5
            && cov.push_words >= 5
            && cov.seed_loads >= 3,
        "{cov:?}"
    );
    assert_eq!(
        cov.rw_regs_written.len(),
        rw_total,
        "every RW register written: {cov:?}"
    );
}
