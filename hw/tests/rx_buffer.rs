//! RX frame buffer against a reference of its documented rules
//! (docs/hw/rx_buffer.md): frames are stored whole or dropped whole when a
//! beat would overrun the ring or the descriptor queue is full at the
//! frame's end; one status per frame, in order, in the parser's record
//! cycle (3 cycles after tlast); commands act on the oldest stored frame;
//! a placement writes exactly the bytes `[off, off + len)` of the frame
//! at `addr..addr + len` (byte lane 0 = addr) and nothing else.
//!
//! Seeded random frames (60..1100 bytes) with input gaps, random
//! discard / place / zero-length / out-of-range / wrong-id commands with
//! random delays, random stalls (and long stall phases, which fill the
//! ring) on the DMA request and data channels. A host-memory model checks
//! every placed byte lands once at the right address. The reference
//! predicts every drop from its own copy of the ring occupancy, updated
//! by the block's free pulses.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use hw::rx_buffer::RxBufferSmall;
use proto::wire::*;
use proto::Psn;
use rust_hdl::prelude::*;

use tb::rng::Rng;
use tb::stall::Stall;
use tb::{lockstep, lockstep_sim};

/// The simulated instance's sizes (RxBufferSmall = RxBufferN<6, 7, 4, 5>).
const RING_BEATS: usize = 64;
const DESC_SLOTS: usize = 16;

fn to_bits512(chunk: &[u8]) -> Bits<512> {
    let mut b = Bits::<512>::default();
    for (k, w) in chunk.chunks(8).enumerate() {
        let mut word = [0u8; 8];
        word[..w.len()].copy_from_slice(w);
        b.set_bits::<64>(64 * k, u64::from_le_bytes(word).into());
    }
    b
}

fn from_bits512(b: Bits<512>) -> [u8; 64] {
    let mut o = [0u8; 64];
    for (k, w) in o.chunks_mut(8).enumerate() {
        w.copy_from_slice(&v(b.get_bits::<64>(64 * k)).to_le_bytes());
    }
    o
}

fn keep(n: usize) -> Bits<64> {
    (if n == 64 { u64::MAX } else { (1u64 << n) - 1 }).into()
}

/// A value of up to 64 bits (`index()` only takes short vectors).
fn v<const N: usize>(b: Bits<N>) -> u64 {
    (0..N.min(64))
        .filter(|&i| b.get_bit(i))
        .fold(0, |acc, i| acc | (1 << i))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Discard,
    Place,
    ZeroLen,
    OutOfRange,
}

#[derive(Clone, Debug)]
struct Cmd {
    frame: usize,
    golden: bool,
    id: u64,
    kind: Kind,
    wrong_id: bool,
    addr: u64,
    off: usize,
    len: usize,
}

/// What the run observed and the reference predicted.
#[derive(Default)]
struct Outcome {
    errors: Vec<String>,
    cycles: u64,
    rec_count: usize,
    predicted_drops: usize,
    drops_seen: usize,
    drop_pulses: usize,
    desc_full_drops: usize,
    ring_full_drops: usize,
    bad_pulses: usize,
    range_pulses: usize,
    placed_pulses: usize,
    discarded_pulses: usize,
    cmds: Vec<Cmd>,
    host: HashMap<u64, u8>,
    double_writes: usize,
    shifts: HashSet<usize>,
    tails: HashSet<usize>,
    data_stall_cycles: u64,
    req_stall_cycles: u64,
    input_gaps: u64,
    back_to_back_beats: u64,
    max_live_beats: usize,
    max_beats_per_placement: usize,
    dma_beats: u64,
    /// Cycles without a data beat inside a placement (first to last beat).
    gaps_inside: u64,
    /// Fewest idle cycles on the data channel between two placements.
    min_gap_between: u64,
    golden_placements: usize,
}

/// An MRC RDMA WRITE frame from the golden codec (`proto::wire`): IPv4 or
/// IPv6, RETH + ImmDt or the MRC extension's placement field, so the
/// payload starts at several offsets; `payload` random bytes.
fn golden_frame(r: &mut Rng, payload: usize) -> Vec<u8> {
    let with_reth = r.chance(50);
    let opcode = if with_reth {
        Opcode::WriteOnlyImm
    } else {
        Opcode::WriteMiddle
    };
    let ext = DataExtRepr {
        ev_index: r.below(128) as u16,
        retransmit: false,
        ev_seq: r.next_u64() as u32,
        tx_ts: r.next_u64() as u32,
        msg_offset: 0,
        placement: (!with_reth).then_some(PlacementRepr {
            va: r.next_u64(),
            rkey: r.next_u64() as u32,
        }),
    };
    let bytes: Vec<u8> = (0..payload).map(|_| r.next_u64() as u8).collect();
    let ev = r.below(1 << 16) as u32;
    let dest_qp = r.below(256) as u32;
    let psn = Psn::new(r.below(1 << 24) as u32);
    // Drawn whatever the opcode, so the random stream (and every frame
    // after this one) does not depend on it.
    let (va, rkey, imm) = (r.next_u64(), r.next_u64() as u32, r.next_u64() as u32);
    let pkt = RocePacket::write(opcode, dest_qp, psn, bytes)
        .on_ev(ev)
        .with_ack_req(true)
        .with_reth(va, rkey)
        .with_imm(imm)
        .with_data_ext(ext);
    let encap = if r.chance(50) {
        Encap::test_v4()
    } else {
        Encap::test_v6()
    };
    pkt.to_frame(&encap).expect("a valid MRC WRITE")
}

/// The payload range the parser's record carries for `frame`, from the
/// golden parser (`None` for frames it would drop).
fn golden_payload(frame: &[u8]) -> Option<(usize, usize)> {
    parse_frame_headers(frame)
        .ok()
        .map(|h| (h.payload.start, h.payload.len()))
}

fn make_frames(r: &mut Rng, n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            if i % 24 < 16 && r.chance(35) {
                let payload = r.below(1000) as usize;
                return golden_frame(r, payload);
            }
            // Blocks of 24 frames alternate between mixed sizes and
            // minimum-size frames only (which fill the descriptor queue).
            let small_block = (i / 24) % 3 == 2;
            let len = match if small_block { 0 } else { r.below(10) } {
                0 => 60 + r.below(8) as usize,             // minimum size
                1 => 64 * (1 + r.below(16) as usize),      // whole beats
                2 => 64 * (1 + r.below(16) as usize) + 1,  // one byte into a beat
                _ => 60 + r.below(1100 - 60 + 1) as usize, // anything
            };
            (0..len)
                .map(|k| (r.next_u64() as u8) ^ (i as u8).wrapping_mul(31) ^ (k as u8))
                .collect()
        })
        .collect()
}

fn make_cmd(r: &mut Rng, index: usize, frame: &[u8], id: u64, base: u64) -> Cmd {
    let flen = frame.len();
    let c = r.below(100);
    let golden = golden_payload(frame);
    let (kind, off, len) = match c {
        // A golden frame: place what the parser's record says.
        25.. if golden.is_some() => {
            let (off, len) = golden.unwrap();
            (if len == 0 { Kind::ZeroLen } else { Kind::Place }, off, len)
        }
        0..=24 => (Kind::Discard, r.below(flen as u64) as usize, r.below(64) as usize),
        25..=32 => (Kind::ZeroLen, r.below(flen as u64 + 1) as usize, 0),
        33..=37 => {
            // One byte beyond the frame's end, or more.
            let off = r.below(flen as u64 + 1) as usize;
            (Kind::OutOfRange, off, flen - off + 1 + r.below(200) as usize)
        }
        _ => {
            let off = r.below(flen as u64) as usize;
            let room = flen - off;
            let len = match r.below(4) {
                0 => 1 + r.below(room.min(64) as u64) as usize, // short
                1 => room,                                      // to the frame's end
                _ => 1 + r.below(room as u64) as usize,
            };
            (Kind::Place, off, len)
        }
    };
    // Each command gets its own 64 KiB window; the start is unaligned.
    let addr = base + (index as u64) * 0x1_0000 + r.below(0x8000);
    Cmd {
        frame: index,
        golden: golden.is_some(),
        id,
        kind,
        wrong_id: false,
        addr,
        off,
        len,
    }
}

fn run(seed: u64, n_frames: usize, stalls: bool) -> Outcome {
    let mut r = Rng::from_state(seed);
    let frames = make_frames(&mut r, n_frames);
    let out = Arc::new(Mutex::new(Outcome::default()));
    let o2 = out.clone();
    let fr = frames.clone();
    let mut uut = RxBufferSmall::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(RxBufferSmall, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        let mut o = Outcome::default();
        let mut r = Rng::from_state(seed ^ 0x9E37_79B9_7F4A_7C15);
        // Input side.
        let (mut fi, mut bi) = (0usize, 0usize);
        let mut tlast_cycles: VecDeque<(usize, u64)> = VecDeque::new();
        // Reference occupancy: stored frames not yet freed (beats each).
        let mut live: VecDeque<usize> = VecDeque::new();
        let mut cur_dropping = false;
        let mut cur_stored_beats = 0usize;
        let mut predicted: VecDeque<bool> = VecDeque::new();
        // Frames stored (frame index, id) in order; commands pending.
        let mut next_id: Option<u64> = None;
        let mut pending: VecDeque<Cmd> = VecDeque::new();
        // DMA side.
        let mut reqs: VecDeque<(u64, usize, usize)> = VecDeque::new(); // (addr, len, bytes done)
        let mut stall_phase = 0u64;
        let mut forced_block = None;
        let (mut in_placement, mut seen_placement, mut gap) = (false, false, 0u64);
        o.min_gap_between = u64::MAX;
        let mut cycle = 0u64;
        let mut last_beat_cycle = u64::MAX - 1;
        let mut idle = 0u64;
        let [pause, req_backpressure, data_backpressure, cmd_pause] = if stalls {
            [85, 70, 75, 70].map(Stall::go_percent)
        } else {
            [Stall::NEVER; 4]
        };
        while idle < 300 && cycle < 200_000 {
            // ---- Drive.
            let present = fi < fr.len() && pause.go(&mut r);
            if present {
                let f = &fr[fi];
                let chunk = &f[64 * bi..f.len().min(64 * bi + 64)];
                x.s_axis.tdata.next = to_bits512(chunk);
                x.s_axis.tkeep.next = keep(chunk.len());
                x.s_axis.tlast.next = 64 * bi + 64 >= f.len();
                x.s_axis.tvalid.next = true;
            } else {
                x.s_axis.tvalid.next = false;
                x.s_axis.tlast.next = false;
                x.s_axis.tdata.next = 0.into();
                x.s_axis.tkeep.next = 0.into();
            }
            // Long stall phases on the DMA side fill the ring.
            if stalls && stall_phase == 0 && r.below(1000) < 4 {
                stall_phase = 40 + r.below(200);
            }
            // A stall phase at the start of each block of minimum-size
            // frames: more than 16 of them arrive, the descriptor queue fills.
            if stalls && fi % 72 == 48 && forced_block != Some(fi / 72) {
                forced_block = Some(fi / 72);
                stall_phase = stall_phase.max(60);
            }
            let stalled = stall_phase > 0;
            stall_phase = stall_phase.saturating_sub(1);
            x.dma_wr.req.ready.next = !stalled && req_backpressure.go(&mut r);
            x.dma_wr.beat.ready.next = !stalled && data_backpressure.go(&mut r);
            let cmd_now = !pending.is_empty() && cmd_pause.go(&mut r);
            x.cmd_valid.next = cmd_now;
            if let Some(c) = pending.front() {
                x.cmd_id.next = (if c.wrong_id { c.id + 16 } else { c.id }).into();
                x.cmd_place.next = c.kind != Kind::Discard;
                x.cmd_addr.next = c.addr.into();
                x.cmd_off.next = (c.off as u64).into();
                x.cmd_len.next = (c.len as u64).into();
            }
            wait_clock_false!(sim, clock, x);
            // ---- Sample (the values an edge would take).
            sim_assert!(sim, x.s_axis.tready.val(), x);
            // Frees first: they are visible to this cycle's ingress check.
            let frees = x.cnt_placed.val() as usize + x.cnt_discarded.val() as usize + x.cnt_place_range.val() as usize;
            sim_assert!(sim, frees <= 1, x);
            if frees == 1 {
                match live.pop_front() {
                    Some(_) => {}
                    None => o.errors.push(format!("cycle {cycle}: a free with no stored frame")),
                }
            }
            o.placed_pulses += x.cnt_placed.val() as usize;
            o.discarded_pulses += x.cnt_discarded.val() as usize;
            o.range_pulses += x.cnt_place_range.val() as usize;
            o.bad_pulses += x.cnt_cmd_bad.val() as usize;
            o.drop_pulses += x.cnt_drop_full.val() as usize;
            let live_beats: usize = live.iter().sum();
            o.max_live_beats = o.max_live_beats.max(live_beats);
            if present {
                if last_beat_cycle + 1 == cycle {
                    o.back_to_back_beats += 1;
                }
                last_beat_cycle = cycle;
                if bi == 0 {
                    cur_dropping = false;
                    cur_stored_beats = 0;
                }
                if !cur_dropping && live_beats + cur_stored_beats == RING_BEATS {
                    cur_dropping = true;
                    o.ring_full_drops += 1;
                }
                if !cur_dropping {
                    cur_stored_beats += 1;
                }
                let f = &fr[fi];
                if 64 * bi + 64 >= f.len() {
                    let desc_full = live.len() == DESC_SLOTS;
                    if desc_full && !cur_dropping {
                        o.desc_full_drops += 1;
                    }
                    let dropped = cur_dropping || desc_full;
                    if !dropped {
                        live.push_back(f.len().div_ceil(64));
                    } else {
                        o.predicted_drops += 1;
                    }
                    predicted.push_back(dropped);
                    tlast_cycles.push_back((fi, cycle));
                    fi += 1;
                    bi = 0;
                } else {
                    bi += 1;
                }
            } else if fi < fr.len() {
                o.input_gaps += 1;
            }
            // Status, in the parser's record cycle.
            if x.rec_valid.val() {
                o.rec_count += 1;
                let stored = x.rec_stored.val();
                let id = v(x.rec_id.val());
                match (tlast_cycles.pop_front(), predicted.pop_front()) {
                    (Some((f, c)), Some(drop)) => {
                        if cycle != c + 3 {
                            o.errors
                                .push(format!("frame {f}: status in cycle {cycle}, tlast in {c}"));
                        }
                        if stored == drop {
                            o.errors
                                .push(format!("frame {f}: stored={stored}, reference drop={drop}"));
                        }
                        if stored {
                            if let Some(n) = next_id {
                                if id != n {
                                    o.errors.push(format!("frame {f}: id {id}, expected {n}"));
                                }
                            }
                            next_id = Some((id + 1) % 32);
                            let mut c = make_cmd(&mut r, f, &fr[f], id, 0x1_0000_0000);
                            // Sometimes a wrong-id command first (counted, ignored).
                            if r.chance(4) {
                                let mut w = c.clone();
                                w.wrong_id = true;
                                pending.push_back(w);
                            }
                            c.wrong_id = false;
                            pending.push_back(c);
                        } else {
                            o.drops_seen += 1;
                        }
                    }
                    _ => o.errors.push(format!("cycle {cycle}: a status with no frame")),
                }
            }
            if cmd_now && x.cmd_ready.val() {
                let c = pending.pop_front().unwrap();
                if !c.wrong_id {
                    if c.kind == Kind::Place {
                        o.max_beats_per_placement = o.max_beats_per_placement.max(c.len.div_ceil(64));
                    }
                    o.cmds.push(c);
                }
            }
            // DMA request channel.
            if x.dma_wr.req.valid.val() {
                if x.dma_wr.req.ready.val() {
                    let addr = v(x.dma_wr.req.addr.val());
                    let len = v(x.dma_wr.req.len.val()) as usize;
                    reqs.push_back((addr, len, 0));
                } else {
                    o.req_stall_cycles += 1;
                }
            }
            // DMA data channel.
            if !(x.dma_wr.beat.valid.val() && x.dma_wr.beat.ready.val()) {
                if in_placement {
                    o.gaps_inside += 1;
                } else {
                    gap += 1;
                }
            }
            if x.dma_wr.beat.valid.val() {
                if x.dma_wr.beat.ready.val() {
                    o.dma_beats += 1;
                    let data = from_bits512(x.dma_wr.beat.data.val());
                    let k = v(x.dma_wr.beat.keep.val());
                    let last = x.dma_wr.beat.last.val();
                    match reqs.front_mut() {
                        None => o.errors.push(format!("cycle {cycle}: data beat before its request")),
                        Some((addr, len, done)) => {
                            let n = (*len - *done).min(64);
                            if k != v(keep(n)) {
                                o.errors.push(format!("cycle {cycle}: keep {k:#x} for {n} bytes"));
                            }
                            if last != (*done + n == *len) {
                                o.errors
                                    .push(format!("cycle {cycle}: last={last} at {done}+{n} of {len}"));
                            }
                            for (lane, b) in data.iter().enumerate() {
                                if k >> lane & 1 == 1 && o.host.insert(*addr + (*done + lane) as u64, *b).is_some() {
                                    o.double_writes += 1;
                                }
                            }
                            if *done == 0 {
                                if seen_placement {
                                    o.min_gap_between = o.min_gap_between.min(gap);
                                }
                                seen_placement = true;
                            }
                            *done += n;
                            in_placement = !last;
                            gap = 0;
                            if last {
                                reqs.pop_front();
                            }
                        }
                    }
                } else {
                    o.data_stall_cycles += 1;
                }
            }
            let busy = fi < fr.len()
                || !pending.is_empty()
                || !tlast_cycles.is_empty()
                || !live.is_empty()
                || !reqs.is_empty();
            idle = if busy { 0 } else { idle + 1 };
            wait_clock_true!(sim, clock, x);
            cycle += 1;
        }
        o.cycles = cycle;
        *o2.lock().unwrap() = o;
        sim.done(x)
    });
    let t = std::time::Instant::now();
    sim.run(Box::new(uut), 100_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_rx_buffer_small", || {
        hw::flow::emit_block("mrc_rx_buffer_small", &mut RxBufferSmall::default()).verilog
    });
    let mut o = std::mem::take(&mut *out.lock().unwrap());
    eprintln!(
        "seed {seed:#x}: {n_frames} frames, {} cycles simulated in {:?}",
        o.cycles,
        t.elapsed()
    );
    // Host memory must be exactly the placements' bytes.
    let mut want: HashMap<u64, u8> = HashMap::new();
    for c in o.cmds.iter().filter(|c| c.kind == Kind::Place) {
        for k in 0..c.len {
            want.insert(c.addr + k as u64, frames[c.frame][c.off + k]);
        }
    }
    if want != o.host {
        let missing = want.iter().filter(|(a, b)| o.host.get(a) != Some(b)).count();
        let extra = o.host.keys().filter(|a| !want.contains_key(a)).count();
        o.errors.push(format!(
            "host memory: {missing} bytes missing or wrong, {extra} bytes written outside placements"
        ));
    }
    for c in o.cmds.iter().filter(|c| c.kind == Kind::Place) {
        o.shifts.insert(c.off % 64);
        o.tails.insert(c.len % 64);
        o.golden_placements += usize::from(c.golden);
    }
    o
}

fn check(o: &Outcome, n_frames: usize) {
    for e in o.errors.iter().take(20) {
        eprintln!("{e}");
    }
    assert!(o.errors.is_empty(), "{} errors", o.errors.len());
    assert_eq!(o.double_writes, 0, "a host byte written twice");
    assert_eq!(o.rec_count, n_frames, "one status per frame");
    assert_eq!(o.drop_pulses, o.predicted_drops, "every drop counted");
    assert_eq!(o.drops_seen, o.predicted_drops);
    let n = |k: Kind| o.cmds.iter().filter(|c| c.kind == k).count();
    assert_eq!(o.cmds.len() + o.drops_seen, n_frames, "one command per stored frame");
    assert_eq!(o.placed_pulses, n(Kind::Place) + n(Kind::ZeroLen));
    assert_eq!(o.discarded_pulses, n(Kind::Discard));
    assert_eq!(o.range_pulses, n(Kind::OutOfRange));
    let bad = o.bad_pulses;
    eprintln!(
        "coverage: {} placed ({} golden, {} max beats), {} zero-length, {} discarded, {} out of range, {} wrong id; drops {} (ring full {}, descriptors full {}); \
         {} shifts and {} tail lengths of 64; stalls: data {} req {} input gaps {}; back-to-back beats {}; max live beats {}/{}; DMA beats {}; \
         idle cycles inside placements {}, fewest between placements {}",
        n(Kind::Place),
        o.golden_placements,
        o.max_beats_per_placement,
        n(Kind::ZeroLen),
        n(Kind::Discard),
        n(Kind::OutOfRange),
        bad,
        o.predicted_drops,
        o.ring_full_drops,
        o.desc_full_drops,
        o.shifts.len(),
        o.tails.len(),
        o.data_stall_cycles,
        o.req_stall_cycles,
        o.input_gaps,
        o.back_to_back_beats,
        o.max_live_beats,
        RING_BEATS,
        o.dma_beats,
        o.gaps_inside,
        o.min_gap_between
    );
}

#[test]
fn random_frames_commands_and_stalls() {
    let n = 480;
    let o = run(0x5EED_0001, n, true);
    check(&o, n);
    let n_place = o.cmds.iter().filter(|c| c.kind == Kind::Place).count();
    // Coverage this seed must reach.
    assert!(n_place >= 50, "placements {n_place}");
    assert!(o.shifts.len() >= 30, "shift values {}", o.shifts.len());
    assert!(o.ring_full_drops >= 1, "no ring-full drop");
    assert!(o.desc_full_drops >= 1, "no descriptor-queue-full drop");
    assert!(o.bad_pulses >= 1, "no wrong-id command");
    assert!(o.data_stall_cycles > 100 && o.req_stall_cycles > 10 && o.input_gaps > 100);
    assert!(o.max_beats_per_placement >= 10);
    assert!(o.golden_placements >= 30, "golden placements {}", o.golden_placements);
}

/// No stalls anywhere: the input takes a beat every cycle and a
/// placement's data beats leave one per cycle, without a gap.
#[test]
fn full_rate_without_stalls() {
    let n = 120;
    let o = run(0x5EED_0002, n, false);
    check(&o, n);
    assert_eq!(o.input_gaps, 0, "the input must take a beat every cycle");
    assert_eq!(o.gaps_inside, 0, "a placement's beats must leave back to back");
    assert!(o.data_stall_cycles == 0 && o.req_stall_cycles == 0);
    // docs/hw/rx_buffer.md: 2 idle cycles between placements.
    assert!(o.min_gap_between <= 2, "gap between placements {}", o.min_gap_between);
}

/// The Verilog of the two custom leaves is what the simulation's Rust
/// models compute (the simulation never runs the Verilog): Yosys proves
/// the three-stage funnel equal to the plain part-select
/// `{hi, lo}[8s +: 512]` (= `Funnel::update`) for all inputs, and
/// `KeepLast` equal to "byte count - 1" for every packed `tkeep` (1..64
/// lanes). Needs `yosys` (MRC_SKIP_EDA=1 skips when it is missing).
#[test]
fn custom_leaves_verilog_proven_equal_to_models() {
    if verilated::skip_without_tool("yosys", hw::flow::tool_available("yosys"), "the custom leaves' proof") {
        return;
    }
    let rtl = hw::flow::emit_block("mrc_rx_buffer", &mut RxBufferSmall::default());
    let module = |name: &str| -> String {
        let start = rtl
            .verilog
            .find(&format!("module {name}("))
            .unwrap_or_else(|| panic!("no module {name}"));
        let end = start + rtl.verilog[start..].find("endmodule").unwrap() + "endmodule".len();
        rtl.verilog[start..end].to_string()
    };
    let reference = "
module ref_funnel(lo, hi, s, o);
  input [511:0] lo; input [511:0] hi; input [5:0] s; output [511:0] o;
  wire [1023:0] c = {hi, lo};
  assign o = c[{s, 3'b000} +: 512];
endmodule
module kl_check(n, ok);
  input [6:0] n; output ok;
  wire [64:0] packed_keep = (65'd1 << n) - 65'd1;
  wire [5:0] idx;
  mrc_rx_buffer__kl u(.keep(packed_keep[63:0]), .idx(idx));
  wire [6:0] want = n - 7'd1;
  assign ok = (n == 7'd0) || (n > 7'd64) || (idx == want[5:0]);
endmodule
";
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("rx_buffer_leaves");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("leaves.v");
    std::fs::write(
        &file,
        format!(
            "{}\n{}\n{reference}",
            module("mrc_rx_buffer__funnel"),
            module("mrc_rx_buffer__kl")
        ),
    )
    .unwrap();
    // The funnel by per-output-bit equivalence (`equiv_simple`: seconds; a
    // monolithic `miter` + `sat` over all 1030 inputs takes minutes), the
    // keep encoder by SAT over its 7-bit lane count.
    let script = format!(
        "read_verilog {}; proc; opt_clean; equiv_make mrc_rx_buffer__funnel ref_funnel eq; hierarchy -top eq; \
         equiv_simple; equiv_status -assert; design -reset; read_verilog {}; proc; flatten; sat -verify -prove ok 1 kl_check",
        file.display(),
        file.display()
    );
    let out = std::process::Command::new("yosys")
        .arg("-p")
        .arg(script)
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "yosys failed:\n{}",
        &log[log.len().saturating_sub(3000)..]
    );
    assert!(log.contains("Equivalence successfully proven!"), "{log}");
    assert!(log.contains("SAT proof finished - no model found: SUCCESS!"), "{log}");
}
