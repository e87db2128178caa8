//! The top's control plane end to end: through `MrcCore`'s AXI-Lite port,
//! configure the fault-injection stage (per-EV drop, then loopback), send
//! frames built by `proto::wire::emit_frame` on MAC RX (and the core TX
//! input), and read the counter bank back over AXI-Lite: the parser's
//! records and the counters `rx_parser_ok`, `fi_frames`, `fi_ev_drop`,
//! `fi_lb_discard` must match what the frames and settings imply. Checks
//! the wiring in `MrcCore` (counter slots, CSR -> fault injection ->
//! parser), not the blocks' rules (their own tests do that).

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use hw::core::MrcCore;
use hw::csr::BuildInfo;
use hw::regmap::{counter_slot, counters, fault_inject};
use proto::wire::*;
use proto::Psn;
use rust_hdl::prelude::*;

fn frame(ev: u32) -> Vec<u8> {
    let pkt = RocePacket {
        ev,
        ecn_ce: false,
        trimmed: false,
        bth: BthRepr {
            opcode: Opcode::WriteMiddle,
            solicited: false,
            mig_req: true,
            pad: 0,
            pkey: 0xFFFF,
            fecn: false,
            becn: false,
            dest_qp: 3,
            ack_req: false,
            mrc_ext: false,
            psn: Psn::new(1),
        },
        reth: None,
        imm: None,
        aeth: None,
        ext: None,
        payload: Bytes::from(vec![0x5Au8; 16]),
    };
    let mut f = Vec::new();
    emit_frame(&pkt, &Encap::test_v4(), &mut f);
    f
}

fn beats(f: &[u8]) -> Vec<(Bits<512>, Bits<64>, bool)> {
    let n = f.len().div_ceil(64);
    f.chunks(64)
        .enumerate()
        .map(|(k, ch)| {
            let mut b = Bits::<512>::default();
            for (i, w) in ch.chunks(8).enumerate() {
                let mut word = [0u8; 8];
                word[..w.len()].copy_from_slice(w);
                b.set_bits::<64>(64 * i, u64::from_le_bytes(word).into());
            }
            let keep = if ch.len() == 64 { u64::MAX } else { (1u64 << ch.len()) - 1 };
            (b, keep.into(), k + 1 == n)
        })
        .collect()
}

macro_rules! axil_write {
    ($sim:ident, $x:ident, $addr:expr, $data:expr) => {{
        $x.s_axil_awaddr.next = u64::from($addr).into();
        $x.s_axil_wdata.next = u64::from($data).into();
        $x.s_axil_wstrb.next = 0xFu64.into();
        $x.s_axil_awvalid.next = true;
        $x.s_axil_wvalid.next = true;
        $x.s_axil_bready.next = true;
        wait_clock_cycle!($sim, clock, $x);
        $x.s_axil_awvalid.next = false;
        $x.s_axil_wvalid.next = false;
        let mut n = 0;
        while !$x.s_axil_bvalid.val() {
            wait_clock_cycle!($sim, clock, $x);
            n += 1;
            sim_assert!($sim, n < 8, $x);
        }
        sim_assert_eq!($sim, $x.s_axil_bresp.val().index(), 0, $x);
        wait_clock_cycle!($sim, clock, $x);
        $x.s_axil_bready.next = false;
    }};
}

macro_rules! axil_read {
    ($sim:ident, $x:ident, $addr:expr) => {{
        $x.s_axil_araddr.next = u64::from($addr).into();
        $x.s_axil_arvalid.next = true;
        $x.s_axil_rready.next = true;
        wait_clock_cycle!($sim, clock, $x);
        $x.s_axil_arvalid.next = false;
        let mut n = 0;
        while !$x.s_axil_rvalid.val() {
            wait_clock_cycle!($sim, clock, $x);
            n += 1;
            sim_assert!($sim, n < 8, $x);
        }
        let v = $x.s_axil_rdata.val().index() as u32;
        wait_clock_cycle!($sim, clock, $x);
        $x.s_axil_rready.next = false;
        v
    }};
}

fn slot(name: &str) -> u16 {
    counters::BASE + counters::FIRST + 4 * counter_slot(name) as u16
}

#[test]
fn axil_configures_fault_injection_and_reads_counters() {
    let evs = [0xC001u32, 0xC002, 0xC001, 0xC003, 0xC001, 0xC002];
    let dropped_ev = 0xC001u32;
    let sent = evs.len() as u32;
    let kept = evs.iter().filter(|&&e| e != dropped_ev).count() as u32;
    let records = Arc::new(Mutex::new(Vec::<u32>::new()));
    let rec = records.clone();
    let mut uut = MrcCore::new(BuildInfo::FIXED);
    uut.connect_all();
    let mut sim = simple_sim!(MrcCore, clock, 100_000_000, sim, {
        let mut x = sim.init()?;
        x.m_tx_tready.next = true;
        wait_clock_true!(sim, clock, x);
        let f = fault_inject::BASE;
        axil_write!(sim, x, f + fault_inject::EV_MATCH0, 0xFFFF_0000 | dropped_ev);
        axil_write!(sim, x, f + fault_inject::EV_EN, 1u32);
        axil_write!(sim, x, f + fault_inject::CTRL, fault_inject::CTRL_EV_DROP);
        // MAC RX: the frames back to back; the parser's records collected.
        let mut all: Vec<_> = evs.iter().flat_map(|&e| beats(&frame(e))).collect();
        all.reverse();
        let mut idle = 0;
        while idle < 12 {
            if let Some(&(d, k, l)) = all.last() {
                x.s_rx_tdata.next = d;
                x.s_rx_tkeep.next = k;
                x.s_rx_tlast.next = l;
                x.s_rx_tvalid.next = true;
            } else {
                x.s_rx_tvalid.next = false;
                idle += 1;
            }
            wait_clock_false!(sim, clock, x);
            if x.s_rx_tvalid.val() && x.s_rx_tready.val() {
                all.pop();
            }
            if x.rx_valid.val() {
                rec.lock().unwrap().push(x.rx_ev.val().index() as u32);
            }
            wait_clock_true!(sim, clock, x);
        }
        x.s_rx_tvalid.next = false;
        let ok = axil_read!(sim, x, slot("rx_parser_ok"));
        let drop = axil_read!(sim, x, slot("rx_parser_drop"));
        let frames = axil_read!(sim, x, slot("fi_frames"));
        let ev_drops = axil_read!(sim, x, slot("fi_ev_drop"));
        let rand_drops = axil_read!(sim, x, slot("fi_rand_drop"));
        sim_assert_eq!(sim, (ok, drop, frames, ev_drops, rand_drops), (kept, 0, sent, sent - kept, 0), x);
        // Loopback: the core TX input comes back to the parser, MAC RX is
        // discarded and counted. Clear the fault-injection group first.
        axil_write!(sim, x, counters::BASE + counters::CLEAR, 1u32 << hw::regmap::group::FAULT_INJECT);
        axil_write!(sim, x, f + fault_inject::CTRL, fault_inject::CTRL_LOOPBACK);
        let mut tx: Vec<_> = beats(&frame(0xC00F));
        let mut rx: Vec<_> = beats(&frame(0xC010));
        tx.reverse();
        rx.reverse();
        for _ in 0..12 {
            x.s_tx_tvalid.next = !tx.is_empty();
            if let Some(&(d, k, l)) = tx.last() {
                x.s_tx_tdata.next = d;
                x.s_tx_tkeep.next = k;
                x.s_tx_tlast.next = l;
            }
            x.s_rx_tvalid.next = !rx.is_empty();
            if let Some(&(d, k, l)) = rx.last() {
                x.s_rx_tdata.next = d;
                x.s_rx_tkeep.next = k;
                x.s_rx_tlast.next = l;
            }
            wait_clock_false!(sim, clock, x);
            sim_assert!(sim, !x.m_tx_tvalid.val(), x);
            if x.s_tx_tvalid.val() && x.s_tx_tready.val() {
                tx.pop();
            }
            if x.s_rx_tvalid.val() && x.s_rx_tready.val() {
                rx.pop();
            }
            if x.rx_valid.val() {
                rec.lock().unwrap().push(x.rx_ev.val().index() as u32);
            }
            wait_clock_true!(sim, clock, x);
        }
        x.s_tx_tvalid.next = false;
        x.s_rx_tvalid.next = false;
        let frames = axil_read!(sim, x, slot("fi_frames"));
        let lb = axil_read!(sim, x, slot("fi_lb_discard"));
        let ok = axil_read!(sim, x, slot("rx_parser_ok"));
        sim_assert_eq!(sim, (frames, lb, ok), (1, 1, kept + 1), x);
        sim.done(x)
    });
    let t = std::time::Instant::now();
    sim.run(Box::new(uut), 1_000_000_000).unwrap();
    eprintln!("simulated in {:?}", t.elapsed());
    let mut want: Vec<u32> = evs.iter().copied().filter(|&e| e != dropped_ev).collect();
    want.push(0xC00F);
    assert_eq!(*records.lock().unwrap(), want);
}
