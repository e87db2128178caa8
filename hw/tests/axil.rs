//! AXI-Lite slave against the AXI4-Lite channel rules, with a behavioural
//! CSR port (a word memory with the CSR's one-cycle registered read) on
//! its master side: a seeded random master presents AW, W and AR with
//! independent delays and stalls B and R at random. Checked: every
//! full-strobe write reaches the port exactly once, in order, with its
//! address and data; partial-strobe writes never reach it and answer
//! SLVERR; B and R answer in order; every read returns the memory word as
//! of the cycle it reached the port; VALID never drops and the payload
//! never changes while a response is stalled; the back-to-back rate with
//! an always-ready master. Coverage of the channel orderings is asserted.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use hw::axil::{resp, AxiLiteSlave};
use rust_hdl::prelude::*;

use tb::rng::Rng;
use tb::stall::Stall;
use tb::{lockstep, lockstep_sim};

#[derive(Default, Debug)]
struct Stats {
    writes: usize,
    reads: usize,
    slverr: usize,
    aw_first: usize,
    w_first: usize,
    together: usize,
    b_stall: usize,
    r_stall: usize,
    read_after_write_same_addr: usize,
    /// Cycles a whole write was held by `wr_hold`.
    held: usize,
    cycles: usize,
}

/// `pause` / `backpressure`: how often the master offers / accepts in a
/// cycle; `csr_free`: how often the CSR can take a write (`!wr_hold`).
/// `write_percent`: the share of writes among the operations.
fn run(seed: u64, n_ops: usize, pause: Stall, backpressure: Stall, csr_free: Stall, write_percent: u64) -> Stats {
    let stats = Arc::new(Mutex::new(Stats::default()));
    let st = stats.clone();
    let mut uut = AxiLiteSlave::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(AxiLiteSlave, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut rng = Rng::from_state(seed);
        let mut st = st.lock().unwrap();
        // The script: writes to a small address set (so reads hit written
        // words), 1 in 8 with a partial strobe; reads of the same set.
        let mut aw_q = VecDeque::new();
        let mut w_q = VecDeque::new();
        let mut ar_q = VecDeque::new();
        let mut b_want = VecDeque::new();
        let mut port_want = VecDeque::new();
        for i in 0..n_ops {
            let addr = ((rng.next_u64() % 8) * 4) as u16;
            if rng.chance(write_percent) {
                let data = rng.next_u64() as u32;
                let strb: u8 = if i % 8 == 3 { 0x3 } else { 0xF };
                aw_q.push_back(addr);
                w_q.push_back((data, strb));
                b_want.push_back(if strb == 0xF { resp::OKAY } else { resp::SLVERR });
                if strb == 0xF {
                    port_want.push_back((addr, data));
                }
            } else {
                ar_q.push_back(addr);
            }
        }
        let mut mem: HashMap<u16, u32> = HashMap::new();
        let mut r_want: VecDeque<u32> = VecDeque::new();
        let mut rd_pending: Option<u32> = None;
        let (mut aw_on, mut w_on, mut ar_on) = (false, false, false);
        let mut balance = 0i64;
        let mut last_b: Option<u8> = None;
        let mut last_r: Option<u32> = None;
        let mut last_write_addr = None;
        wait_clock_true!(sim, clock, x);
        while !(aw_q.is_empty() && w_q.is_empty() && ar_q.is_empty() && b_want.is_empty() && r_want.is_empty())
            || aw_on
            || w_on
        {
            st.cycles += 1;
            sim_assert!(sim, st.cycles < 50_000, x);
            // The CSR port model: read data one cycle after rd_en.
            x.rd_valid.next = rd_pending.is_some();
            x.rd_data.next = u64::from(rd_pending.unwrap_or(0xDEAD_DEAD)).into();
            if !aw_on && !aw_q.is_empty() && pause.go(&mut rng) {
                aw_on = true;
                x.s_axil.awaddr.next = u64::from(aw_q[0]).into();
            }
            if !w_on && !w_q.is_empty() && pause.go(&mut rng) {
                w_on = true;
                x.s_axil.wdata.next = u64::from(w_q[0].0).into();
                x.s_axil.wstrb.next = u64::from(w_q[0].1).into();
            }
            if !ar_on && !ar_q.is_empty() && pause.go(&mut rng) {
                ar_on = true;
                x.s_axil.araddr.next = u64::from(ar_q[0]).into();
            }
            x.s_axil.awvalid.next = aw_on;
            x.s_axil.wvalid.next = w_on;
            x.s_axil.arvalid.next = ar_on;
            x.s_axil.bready.next = backpressure.go(&mut rng);
            x.s_axil.rready.next = backpressure.go(&mut rng);
            let hold = !csr_free.go(&mut rng);
            x.wr_hold.next = hold;
            wait_clock_false!(sim, clock, x);
            // A held CSR gets no write (the write waits in AW/W), and no
            // read passes the held write.
            sim_assert!(sim, !(hold && (x.wr_en.val() || x.rd_en.val())), x);
            // A stalled response holds its payload.
            if let Some(b) = last_b {
                sim_assert!(sim, x.s_axil.bvalid.val(), x);
                sim_assert_eq!(sim, x.s_axil.bresp.val().index() as u8, b, x);
            }
            if let Some(r) = last_r {
                sim_assert!(sim, x.s_axil.rvalid.val(), x);
                sim_assert_eq!(sim, x.s_axil.rdata.val().index() as u32, r, x);
            }
            last_b = None;
            last_r = None;
            let aw_hs = aw_on && x.s_axil.awready.val();
            let w_hs = w_on && x.s_axil.wready.val();
            if aw_hs {
                aw_on = false;
                aw_q.pop_front();
                balance += 1;
            }
            if w_hs {
                w_on = false;
                w_q.pop_front();
                balance -= 1;
            }
            match (aw_hs, w_hs) {
                (true, true) => st.together += 1,
                (true, false) if balance > 0 => st.aw_first += 1,
                (false, true) if balance < 0 => st.w_first += 1,
                _ => {}
            }
            if ar_on && x.s_axil.arready.val() {
                ar_on = false;
                ar_q.pop_front();
            }
            if x.s_axil.bvalid.val() {
                let code = x.s_axil.bresp.val().index() as u8;
                if x.s_axil.bready.val() {
                    sim_assert_eq!(sim, Some(code), b_want.pop_front(), x);
                    st.slverr += usize::from(code == resp::SLVERR);
                } else {
                    last_b = Some(code);
                    st.b_stall += 1;
                }
            }
            if x.s_axil.rvalid.val() {
                let d = x.s_axil.rdata.val().index() as u32;
                sim_assert_eq!(sim, x.s_axil.rresp.val().index() as u8, resp::OKAY, x);
                if x.s_axil.rready.val() {
                    sim_assert_eq!(sim, Some(d), r_want.pop_front(), x);
                    st.reads += 1;
                } else {
                    last_r = Some(d);
                    st.r_stall += 1;
                }
            }
            // The port, at this edge.
            rd_pending = None;
            if x.rd_en.val() {
                let a = x.rd_addr.val().index() as u16;
                let v = mem.get(&a).copied().unwrap_or(0);
                rd_pending = Some(v);
                r_want.push_back(v);
                if last_write_addr == Some(a) {
                    st.read_after_write_same_addr += 1;
                }
            }
            // Both halves held (AW and W not ready: under a hold nothing
            // issues, so a ready would mean an empty holding register):
            // the write would go to the CSR now but for the hold (or a
            // full B queue).
            if hold && !x.s_axil.awready.val() && !x.s_axil.wready.val() {
                st.held += 1;
            }
            if x.wr_en.val() {
                let w = (x.wr_addr.val().index() as u16, x.wr_data.val().index() as u32);
                sim_assert_eq!(sim, Some(w), port_want.pop_front(), x);
                mem.insert(w.0, w.1);
                last_write_addr = Some(w.0);
                st.writes += 1;
            }
            wait_clock_true!(sim, clock, x);
        }
        sim_assert!(sim, port_want.is_empty(), x);
        sim.done(x)
    });
    sim.run(Box::new(uut), 10_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_axi_lite_slave", || {
        hw::flow::emit_block("mrc_axi_lite_slave", &mut AxiLiteSlave::default()).verilog
    });
    let s = std::mem::take(&mut *stats.lock().unwrap());
    eprintln!("seed {seed:#x}: {s:?}");
    s
}

#[test]
fn random_channel_orderings_and_stalls() {
    let mut total = Stats::default();
    for seed in [0xA11_0001u64, 0xA11_0002, 0xA11_0003] {
        let s = run(
            seed,
            400,
            Stall::go_percent(40),
            Stall::go_percent(55),
            Stall::go_percent(70),
            50,
        );
        total.writes += s.writes;
        total.reads += s.reads;
        total.slverr += s.slverr;
        total.aw_first += s.aw_first;
        total.w_first += s.w_first;
        total.together += s.together;
        total.b_stall += s.b_stall;
        total.r_stall += s.r_stall;
        total.read_after_write_same_addr += s.read_after_write_same_addr;
        total.held += s.held;
    }
    assert!(total.writes >= 450 && total.reads >= 450, "{total:?}");
    assert!(total.slverr >= 50, "{total:?}");
    assert!(
        total.aw_first >= 20 && total.w_first >= 20 && total.together >= 20,
        "{total:?}"
    );
    assert!(total.b_stall >= 50 && total.r_stall >= 50, "{total:?}");
    assert!(total.read_after_write_same_addr >= 10, "{total:?}");
    assert!(total.held >= 20, "{total:?}");
}

#[test]
fn back_to_back_rate() {
    // Always offering, always accepting: a write every cycle on the
    // write side, a read every 3 cycles on the read side, the two in
    // parallel.
    let n = 300;
    let s = run(0xB2B, n, Stall::NEVER, Stall::NEVER, Stall::NEVER, 50);
    let (w, r) = (s.writes + s.slverr, s.reads);
    assert_eq!(w + r, n);
    assert!(s.cycles <= w.max(3 * r) + 8, "{s:?}");
    // Writes alone: one per cycle.
    let s = run(0xB2C, 200, Stall::NEVER, Stall::NEVER, Stall::NEVER, 100);
    assert!(s.cycles <= s.writes + s.slverr + 8, "{s:?}");
}
