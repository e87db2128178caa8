//! Fault-injection stage against a reference of its documented rules
//! (docs/hw/fault_inject.md): frames built by `proto::wire::emit_frame`
//! (IPv4/IPv6, with and without an 802.1Q tag, 1 to 3 beats) and non-RoCE
//! frames stream in with random valid gaps and random `m_rx_tready`
//! stalls. The reference takes each frame's EV from
//! `proto::wire::parse_frame_headers` (the golden parser, not the block's
//! own extractor), decides per frame (EV compare registers; xorshift32
//! draw below `drop_prob`, advanced once per frame) and must match the
//! block's output frame for frame, byte for byte, and its counter pulses.
//! Checked further: the random drop rate over 3000 frames against the
//! configured probability, reproducibility after reloading the seed,
//! per-EV drop exactness, loopback (TX to RX, MAC RX discarded and
//! counted, MAC TX idle) and TX pass-through.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use hw::fault_inject::{seed_state, xorshift32, FaultInject};
use proto::wire::*;
use proto::Psn;
use rust_hdl::prelude::*;

use tb::rng::Rng;
use tb::stall::Stall;
use tb::{lockstep, lockstep_sim};

/// `release` in a release build, `debug` in a debug one (the simulation
/// runs about 100 times slower there).
fn count(release: usize, debug: usize) -> usize {
    if cfg!(debug_assertions) {
        debug
    } else {
        release
    }
}

fn roce_frame(ev: u32, v6: bool, vlan: bool, payload: usize) -> Vec<u8> {
    let bytes: Vec<u8> = (0..payload).map(|i| i as u8).collect();
    let pkt = RocePacket::write(Opcode::WriteMiddle, 0x12, Psn::new(7), bytes).on_ev(ev);
    let encap = if v6 { Encap::test_v6() } else { Encap::test_v4() };
    let mut f = pkt.to_frame(&encap).expect("a valid WRITE MIDDLE");
    if vlan {
        f.splice(12..12, [0x81, 0x00, 0x00, 0x05]);
    }
    f
}

/// The EV (UDP source port) the golden parser sees, if the frame is RoCEv2.
fn golden_ev(f: &[u8]) -> Option<u16> {
    parse_frame_headers(f).ok().map(|p| p.packet.ev as u16)
}

/// Frames with EVs from `evs`; one in `other_pct` percent is not RoCE
/// (ARP-like, or UDP to another port).
fn frames(rng: &mut Rng, n: usize, evs: &[u32], other_pct: u64) -> Vec<Vec<u8>> {
    (0..n)
        .map(|_| {
            let payload = [0usize, 8, 40, 100, 150][rng.below(5) as usize];
            if rng.chance(other_pct) {
                let mut f = roce_frame(evs[0], rng.chance(50), false, payload);
                if rng.chance(50) {
                    f[12] = 0x08;
                    f[13] = 0x06; // ARP EtherType
                } else {
                    let udp = if f[12] == 0x86 { 54 } else { 34 };
                    f[udp + 3] ^= 1; // destination port 4790
                }
                assert_eq!(golden_ev(&f), None);
                f
            } else {
                let ev = evs[rng.below(evs.len() as u64) as usize];
                let f = roce_frame(ev, rng.chance(40), rng.chance(30), payload);
                assert_eq!(golden_ev(&f), Some(ev as u16));
                f
            }
        })
        .collect()
}

#[derive(Clone, Copy, Default)]
struct Settings {
    rand: bool,
    ev: bool,
    loopback: bool,
    prob: u32,
    ev_en: u8,
    matches: [u32; 4],
}

impl Settings {
    fn ev_hit(&self, f: &[u8]) -> bool {
        let Some(p) = golden_ev(f) else { return false };
        self.ev
            && (0..4)
                .any(|k| self.ev_en >> k & 1 == 1 && (p ^ self.matches[k] as u16) & (self.matches[k] >> 16) as u16 == 0)
    }
}

/// A phase: load `seed`, then stream `rx` (MAC RX) and `tx` (core TX).
struct Phase {
    seed: u32,
    rx: Vec<Vec<u8>>,
    tx: Vec<Vec<u8>>,
}

#[derive(Default, Debug, PartialEq, Clone)]
struct Out {
    to_parser: Vec<Vec<u8>>,
    to_mac: Vec<Vec<u8>>,
    frames: u32,
    rand_drops: u32,
    ev_drops: u32,
    lb_discards: u32,
}

/// The reference: which frames of a phase leave towards the parser, and
/// the counter totals.
fn reference(s: &Settings, p: &Phase) -> (Out, Vec<bool>) {
    let mut state = seed_state(p.seed);
    let mut out = Out::default();
    let mut dropped = Vec::new();
    let (input, other) = if s.loopback { (&p.tx, &p.rx) } else { (&p.rx, &p.tx) };
    for f in input {
        let ev_hit = s.ev_hit(f);
        let rand_hit = s.rand && (state >> 16) < s.prob;
        state = xorshift32(state);
        out.frames += 1;
        if ev_hit {
            out.ev_drops += 1;
        } else if rand_hit {
            out.rand_drops += 1;
        }
        dropped.push(ev_hit || rand_hit);
        if !(ev_hit || rand_hit) {
            out.to_parser.push(f.clone());
        }
    }
    if s.loopback {
        out.lb_discards = other.len() as u32;
    } else {
        out.to_mac = other.clone();
    }
    (out, dropped)
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
            let keep = if ch.len() == 64 {
                u64::MAX
            } else {
                (1u64 << ch.len()) - 1
            };
            (b, keep.into(), k + 1 == n)
        })
        .collect()
}

fn bytes_of(d: Bits<512>, keep: Bits<64>) -> Vec<u8> {
    let n = (0..64).filter(|&i| keep.get_bit(i)).count();
    (0..n).map(|k| d.get_bits::<8>(8 * k).index() as u8).collect()
}

fn set<const N: usize>(s: &mut Signal<In, Bits<N>>, v: u64) {
    s.next = v.into();
}

/// Run the phases; one `Out` per phase, and the cycles each took.
/// `stalls`: random valid gaps and ready stalls (else always valid, always
/// ready).
fn run(s: Settings, phases: Vec<Phase>, seed: u64, stalls: bool) -> (Vec<Out>, Vec<usize>) {
    let outs = Arc::new(Mutex::new(Vec::<Out>::new()));
    let o = outs.clone();
    let cyc = Arc::new(Mutex::new(Vec::<usize>::new()));
    let cy = cyc.clone();
    let (pause, backpressure) = if stalls {
        (Stall::go_percent(80), Stall::go_percent(70))
    } else {
        (Stall::NEVER, Stall::NEVER)
    };
    let mut uut = FaultInject::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(FaultInject, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut rng = Rng::from_state(seed);
        set(
            &mut x.ctrl,
            u64::from(s.rand) | u64::from(s.ev) << 1 | u64::from(s.loopback) << 2,
        );
        set(&mut x.drop_prob, u64::from(s.prob));
        set(&mut x.ev_en, u64::from(s.ev_en));
        set(&mut x.ev_match0, u64::from(s.matches[0]));
        set(&mut x.ev_match1, u64::from(s.matches[1]));
        set(&mut x.ev_match2, u64::from(s.matches[2]));
        set(&mut x.ev_match3, u64::from(s.matches[3]));
        wait_clock_true!(sim, clock, x);
        for p in &phases {
            set(&mut x.seed, u64::from(p.seed));
            x.seed_load.next = true;
            wait_clock_cycle!(sim, clock, x);
            x.seed_load.next = false;
            let mut rx: VecDeque<_> = p.rx.iter().flat_map(|f| beats(f)).collect();
            let mut tx: VecDeque<_> = p.tx.iter().flat_map(|f| beats(f)).collect();
            let mut out = Out::default();
            let (mut cur, mut cur_tx) = (Vec::new(), Vec::new());
            let (mut rx_on, mut tx_on) = (false, false);
            let mut idle = 0;
            let mut cycles = 0;
            while idle < 4 {
                cycles += 1;
                sim_assert!(sim, cycles < 100_000, x);
                if !rx_on && !rx.is_empty() && pause.go(&mut rng) {
                    let (d, k, l) = rx[0];
                    rx_on = true;
                    x.s_rx.tdata.next = d;
                    x.s_rx.tkeep.next = k;
                    x.s_rx.tlast.next = l;
                }
                if !tx_on && !tx.is_empty() && pause.go(&mut rng) {
                    let (d, k, l) = tx[0];
                    tx_on = true;
                    x.s_tx.tdata.next = d;
                    x.s_tx.tkeep.next = k;
                    x.s_tx.tlast.next = l;
                }
                x.s_rx.tvalid.next = rx_on;
                x.s_tx.tvalid.next = tx_on;
                x.m_rx.tready.next = backpressure.go(&mut rng);
                x.m_tx.tready.next = backpressure.go(&mut rng);
                wait_clock_false!(sim, clock, x);
                if s.loopback {
                    sim_assert!(sim, !x.m_tx.tvalid.val() && x.s_rx.tready.val(), x);
                }
                if rx_on && x.s_rx.tready.val() {
                    rx_on = false;
                    rx.pop_front();
                }
                if tx_on && x.s_tx.tready.val() {
                    tx_on = false;
                    tx.pop_front();
                }
                if x.m_rx.tvalid.val() && x.m_rx.tready.val() {
                    cur.extend(bytes_of(x.m_rx.tdata.val(), x.m_rx.tkeep.val()));
                    if x.m_rx.tlast.val() {
                        out.to_parser.push(std::mem::take(&mut cur));
                    }
                }
                if x.m_tx.tvalid.val() && x.m_tx.tready.val() {
                    cur_tx.extend(bytes_of(x.m_tx.tdata.val(), x.m_tx.tkeep.val()));
                    if x.m_tx.tlast.val() {
                        out.to_mac.push(std::mem::take(&mut cur_tx));
                    }
                }
                out.frames += u32::from(x.cnt_frames.val());
                out.rand_drops += u32::from(x.cnt_rand_drop.val());
                out.ev_drops += u32::from(x.cnt_ev_drop.val());
                out.lb_discards += u32::from(x.cnt_lb_discard.val());
                let busy = rx_on || tx_on || !rx.is_empty() || !tx.is_empty() || x.m_rx.tvalid.val();
                idle = if busy { 0 } else { idle + 1 };
                wait_clock_true!(sim, clock, x);
            }
            o.lock().unwrap().push(out);
            cy.lock().unwrap().push(cycles);
        }
        sim.done(x)
    });
    sim.run(Box::new(uut), 100_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_fault_inject", || {
        hw::flow::emit_block("mrc_fault_inject", &mut FaultInject::default()).verilog
    });
    let v = outs.lock().unwrap().clone();
    let c = cyc.lock().unwrap().clone();
    (v, c)
}

fn check(s: Settings, phases: Vec<Phase>, seed: u64) -> (Vec<Out>, Vec<Vec<bool>>) {
    let want: Vec<(Out, Vec<bool>)> = phases.iter().map(|p| reference(&s, p)).collect();
    let t = std::time::Instant::now();
    let (got, _) = run(s, phases, seed, true);
    for g in &got {
        eprintln!(
            "phase: {} frames in, {} to the parser, {} random drops, {} EV drops, {} loopback discards, {} to the MAC ({:?})",
            g.frames,
            g.to_parser.len(),
            g.rand_drops,
            g.ev_drops,
            g.lb_discards,
            g.to_mac.len(),
            t.elapsed()
        );
    }
    assert_eq!(got.len(), want.len());
    for (i, (g, (w, _))) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.to_parser.len(), w.to_parser.len(), "phase {i}: frames passed");
        assert!(g == w, "phase {i}: output or counters differ from the reference");
    }
    (got, want.into_iter().map(|(_, d)| d).collect())
}

#[test]
fn random_drop_rate_and_seed_reproducibility() {
    let mut rng = Rng::from_state(0xF1_0001);
    let evs = [0xC001, 0xC002, 0x1234];
    // 3000 frames take 17 s in a release build and several minutes in a
    // debug one: `cargo test --release` runs the full count, a debug build
    // 400 frames with the tolerance widened to the same 4 sd.
    let n_long = count(3000, 400);
    let long = frames(&mut rng, n_long, &evs, 10);
    let short = frames(&mut rng, count(300, 100), &evs, 10);
    // 25 % drop.
    let s = Settings {
        rand: true,
        prob: 16384,
        ..Default::default()
    };
    let (got, drops) = check(
        s,
        vec![
            Phase {
                seed: 0x1234_5678,
                rx: long.clone(),
                tx: vec![],
            },
            Phase {
                seed: 0xCAFE_0001,
                rx: short.clone(),
                tx: vec![],
            },
            Phase {
                seed: 0xCAFE_0001,
                rx: short.clone(),
                tx: vec![],
            },
            Phase {
                seed: 0x0BAD_F00D,
                rx: short.clone(),
                tx: vec![],
            },
        ],
        7,
    );
    let rate = f64::from(got[0].rand_drops) / n_long as f64;
    let sd = (0.25f64 * 0.75 / n_long as f64).sqrt();
    eprintln!("drop rate {rate:.4} over {n_long} frames (configured 0.25, sd {sd:.4})");
    assert!((rate - 0.25).abs() < 4.0 * sd, "rate {rate}");
    assert_eq!(got[0].frames as usize, n_long);
    // Same seed, same frames: the same frames pass (the hardware's own
    // output compared, besides both matching the reference); another seed
    // gives another pattern.
    assert_eq!(got[1].to_parser, got[2].to_parser);
    assert_eq!(drops[1], drops[2]);
    assert_ne!(drops[1], drops[3]);
    // Probability 0 and 1.
    let none = Settings {
        rand: true,
        prob: 0,
        ..Default::default()
    };
    let (g, _) = check(
        none,
        vec![Phase {
            seed: 3,
            rx: short[..50].to_vec(),
            tx: vec![],
        }],
        8,
    );
    assert_eq!(g[0].to_parser.len(), 50);
    let all = Settings {
        rand: true,
        prob: 1 << 16,
        ..Default::default()
    };
    let (g, _) = check(
        all,
        vec![Phase {
            seed: 0,
            rx: short[..50].to_vec(),
            tx: vec![],
        }],
        9,
    );
    assert_eq!((g[0].to_parser.len(), g[0].rand_drops), (0, 50));
}

#[test]
fn per_ev_drop_is_exact() {
    let mut rng = Rng::from_state(0xE7_0002);
    // EVs on both sides of every compare.
    let evs = [
        0xC000, 0xC001, 0xC002, 0xC003, 0xC010, 0xC011, 0x1234, 0x1235, 0xFFFF, 0x0000,
    ];
    let n = count(500, 200);
    let fr = frames(&mut rng, n, &evs, 15);
    let s = Settings {
        ev: true,
        ev_en: 0b0111,
        matches: [
            0xFFFF_C001, // exactly 0xC001
            0xFFF0_C010, // 0xC010..=0xC01F
            0xFFFF_1234, // exactly 0x1234
            0x0000_0000, // everything, but disabled in ev_en
        ],
        ..Default::default()
    };
    let (got, drops) = check(
        s,
        vec![Phase {
            seed: 1,
            rx: fr.clone(),
            tx: vec![],
        }],
        11,
    );
    let dropped_evs: std::collections::BTreeSet<u16> = fr
        .iter()
        .zip(&drops[0])
        .filter(|(_, d)| **d)
        .filter_map(|(f, _)| golden_ev(f))
        .collect();
    assert_eq!(
        dropped_evs.into_iter().collect::<Vec<_>>(),
        vec![0x1234, 0xC001, 0xC010, 0xC011]
    );
    // Coverage: drops and passes of RoCE frames, tagged and IPv6 ones, and
    // non-RoCE frames.
    assert!(
        got[0].ev_drops as usize >= n / 5 && got[0].to_parser.len() >= n / 2,
        "{} {}",
        got[0].ev_drops,
        got[0].to_parser.len()
    );
    let kinds = |f: &Vec<u8>| (f[12] == 0x81, f[12] == 0x86 || (f[12] == 0x81 && f[16] == 0x86));
    for want in [(false, false), (false, true), (true, false), (true, true)] {
        assert!(
            fr.iter().zip(&drops[0]).any(|(f, d)| *d && kinds(f) == want),
            "no dropped frame of kind {want:?}"
        );
    }
    // EV drop and random drop together: the EV drop wins the count.
    let both = Settings {
        rand: true,
        prob: 32768,
        ..s
    };
    let (g, _) = check(
        both,
        vec![Phase {
            seed: 99,
            rx: fr[..count(200, 80)].to_vec(),
            tx: vec![],
        }],
        12,
    );
    assert!(g[0].rand_drops > 0 && g[0].ev_drops > 0);
}

#[test]
fn loopback_and_tx_pass_through() {
    let mut rng = Rng::from_state(0x1B_0003);
    let evs = [0xC001, 0xC002];
    let rx = frames(&mut rng, 60, &evs, 10);
    let tx = frames(&mut rng, 80, &evs, 10);
    // Normal mode: RX to the parser, TX to the MAC, both untouched.
    let (g, _) = check(
        Settings::default(),
        vec![Phase {
            seed: 1,
            rx: rx.clone(),
            tx: tx.clone(),
        }],
        21,
    );
    assert_eq!((g[0].to_parser.len(), g[0].to_mac.len()), (60, 80));
    // Loopback: TX comes back on the RX path (through the drop stage: here
    // EV 0xC002 is dropped), MAC RX is discarded and counted.
    let s = Settings {
        loopback: true,
        ev: true,
        ev_en: 1,
        matches: [0xFFFF_C002, 0, 0, 0],
        ..Default::default()
    };
    let (g, _) = check(s, vec![Phase { seed: 1, rx, tx }], 22);
    assert_eq!(g[0].lb_discards, 60);
    assert!(g[0].ev_drops > 10 && g[0].to_parser.len() > 10);
}

#[test]
fn one_beat_per_cycle() {
    // Always valid, always ready: the stage takes a beat every cycle, drops
    // included (a frame starts in the cycle after the previous one's last
    // beat).
    let mut rng = Rng::from_state(0x0B_0004);
    let fr = frames(&mut rng, count(150, 40), &[0xC001, 0xC002], 10);
    let beats: usize = fr.iter().map(|f| f.len().div_ceil(64)).sum();
    let s = Settings {
        rand: true,
        prob: 20000,
        ev: true,
        ev_en: 1,
        matches: [0xFFFF_C002, 0, 0, 0],
        ..Default::default()
    };
    let phase = Phase {
        seed: 5,
        rx: fr,
        tx: vec![],
    };
    let (want, _) = reference(&s, &phase);
    let (got, cycles) = run(s, vec![phase], 31, false);
    assert!(got[0] == want);
    // + 2 pipeline stages + the 4 idle cycles the driver waits.
    assert!(cycles[0] <= beats + 2 + 4, "{} cycles for {beats} beats", cycles[0]);
}

/// The `EvExtract` leaf's hand-written Verilog against its Rust model
/// (`roce_sport`, which the simulation runs and the tests above check
/// against the golden parser): Verilator builds the leaf with a small C++
/// driver and evaluates first beats of generated frames, of the same
/// frames with every IPv4 IHL and of randomly corrupted copies.
#[test]
fn ev_extract_verilog_matches_model() {
    use hw::fault_inject::{roce_sport, EvExtract};
    if verilated::skip_without_tool("verilator", hw::flow::tool_available("verilator"), "the EvExtract leaf") {
        return;
    }
    let mut rng = Rng::from_state(0xEE_0005);
    let mut beats: Vec<[u8; 64]> = Vec::new();
    let first = |f: &[u8]| {
        let mut b = [0u8; 64];
        let n = f.len().min(64);
        b[..n].copy_from_slice(&f[..n]);
        b
    };
    for f in frames(&mut rng, 300, &[0xC001, 0x1234, 0xFFFF, 0x0000, 0x8100, 0x12B7], 20) {
        let b = first(&f);
        beats.push(b);
        // Every IHL (the UDP header moves; the frame is no longer valid IP,
        // which this stage does not check).
        let l3 = if b[12] == 0x81 { 18 } else { 14 };
        if b[l3] >> 4 == 4 {
            for ihl in 0..16u8 {
                let mut c = b;
                c[l3] = 0x40 | ihl;
                let udp = l3 + 4 * usize::from(ihl);
                if ihl >= 5 && udp + 4 <= 64 {
                    c[udp..udp + 4].copy_from_slice(&[0xC0, ihl, 0x12, 0xB7]);
                }
                beats.push(c);
            }
        }
        for _ in 0..3 {
            let mut c = b;
            for _ in 0..1 + rng.below(2) {
                let at = rng.below(64) as usize;
                c[at] ^= 1 << rng.below(8);
            }
            beats.push(c);
        }
    }
    let want: Vec<Option<u16>> = beats.iter().map(roce_sport).collect();
    let hits = want.iter().filter(|w| w.is_some()).count();
    assert!(hits > 300 && beats.len() - hits > 300, "{hits} of {}", beats.len());

    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("ev_extract");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let rtl = hw::flow::emit_block("ev_extract", &mut EvExtract::default());
    std::fs::write(dir.join("ev_extract.v"), &rtl.verilog).unwrap();
    std::fs::write(
        dir.join("main.cpp"),
        r#"#include "Vev_extract.h"
#include <cstdio>
int main() {
    Vev_extract m;
    unsigned w[16];
    while (1) {
        for (int i = 0; i < 16; i++)
            if (scanf("%x", &w[i]) != 1) return 0;
        for (int i = 0; i < 16; i++) m.tdata[i] = w[i];
        m.eval();
        printf("%d %u\n", (int)m.roce, (unsigned)m.sport);
    }
}
"#,
    )
    .unwrap();
    let st = std::process::Command::new("verilator")
        .args([
            "--cc",
            "--exe",
            "--build",
            "-Wno-WIDTH",
            "-Wno-fatal",
            "--top-module",
            "ev_extract",
            "-Mdir",
        ])
        .arg(dir.join("obj"))
        .arg(dir.join("ev_extract.v"))
        .arg(dir.join("main.cpp"))
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let input: String = beats
        .iter()
        .map(|b| {
            let words: Vec<String> = b
                .chunks(4)
                .map(|c| format!("{:x}", u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect();
            words.join(" ") + "\n"
        })
        .collect();
    let inp = dir.join("vectors.txt");
    std::fs::write(&inp, input).unwrap();
    let out = std::process::Command::new(dir.join("obj").join("Vev_extract"))
        .stdin(std::fs::File::open(&inp).unwrap())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let got: Vec<Option<u16>> = text
        .lines()
        .map(|l| {
            let mut it = l.split_whitespace();
            let roce: u32 = it.next().unwrap().parse().unwrap();
            let sport: u32 = it.next().unwrap().parse().unwrap();
            (roce == 1).then_some(sport as u16)
        })
        .collect();
    assert_eq!(got.len(), beats.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "beat {i}: {:02x?}", &beats[i][..]);
    }
    eprintln!("{} beats, {hits} with an EV: Verilog = model", beats.len());
}
