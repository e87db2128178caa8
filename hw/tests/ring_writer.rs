//! Ring writer against a reference of the ring rules (slot `pi mod size`
//! at `base + slot * entry_bytes`, phase 1 on the first pass and flipping
//! on each wrap, drop and count when `pi - ci == size`, ring reset by its
//! config row): a seeded mix of ring set-ups, entries and consumer-index
//! updates over rings 0, 7 and 255 with random stalls on the DMA write
//! port; every DMA write (address, length, keep, last, the entry with its
//! phase) and every overflow must match, in order.

use std::sync::{Arc, Mutex};

use contract::config::{ring, ring_consumer, table, Row, INDEX_SELECT};
use hw::contract_rows::row_bits;
use hw::ring_writer::RingWriter;
use rust_hdl::prelude::*;

use tb::rng::Rng;
use tb::stall::Stall;
use tb::{lockstep, lockstep_sim};

/// Back-pressure of the DMA write port.
const BACKPRESSURE: Stall = Stall::go_percent(60);

fn v<const N: usize>(b: Bits<N>) -> u64 {
    (0..N.min(64))
        .filter(|&i| b.get_bit(i))
        .fold(0, |acc, i| acc | (1 << i))
}

const TABLE: u8 = table::CQ_RING;

#[derive(Clone, Copy, Debug)]
enum Op {
    Setup { ring: u64, base: u64, log2: u64 },
    Consumed { ring: u64, ci: u64 },
    Entry { ring: u64, tag: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Out {
    Write {
        addr: u64,
        len: u64,
        keep: u64,
        word0: u64,
        word3: u64,
    },
    Overflow,
}

#[derive(Default, Clone, Copy)]
struct RefRing {
    base: u64,
    log2: u64,
    pi: u64,
    ci: u64,
}

fn run(log2_entry: u32, seed: u64) {
    let mut r = Rng::from_state(seed);
    let rings = [0u64, 7, 255];
    let mut ops = Vec::new();
    for (k, &ring) in rings.iter().enumerate() {
        ops.push(Op::Setup {
            ring,
            base: 0x1_0000_0000 * (k as u64 + 1),
            log2: [2, 3, 1][k],
        });
    }
    // The script and the reference are built together so the consumer
    // index follows what was written (a driver consumes only entries it
    // has seen), lagging enough that rings fill up and overflow sometimes.
    let mut refs = [RefRing::default(); 256];
    let mut want = Vec::new();
    let bytes = 1u64 << log2_entry;
    let apply = |op: Op, refs: &mut [RefRing; 256], want: &mut Vec<Out>| match op {
        Op::Setup { ring, base, log2 } => {
            refs[ring as usize] = RefRing {
                base,
                log2,
                pi: 0,
                ci: 0,
            }
        }
        Op::Consumed { ring, ci } => refs[ring as usize].ci = ci,
        Op::Entry { ring, tag } => {
            let rr = &mut refs[ring as usize];
            if rr.pi - rr.ci >= 1 << rr.log2 {
                want.push(Out::Overflow);
            } else {
                let slot = rr.pi & ((1 << rr.log2) - 1);
                let phase = ((rr.pi >> rr.log2) & 1) ^ 1;
                want.push(Out::Write {
                    addr: rr.base + slot * bytes,
                    len: bytes,
                    keep: if bytes >= 64 { u64::MAX } else { (1 << bytes) - 1 },
                    word0: (tag << 8) | 0xFE | phase,
                    word3: !tag,
                });
                rr.pi += 1;
            }
        }
    };
    for op in ops.clone() {
        apply(op, &mut refs, &mut want);
    }
    for i in 0..200 {
        let k = r.below(3) as usize;
        let ring = rings[k];
        let op = match r.below(10) {
            0..=6 => Op::Entry { ring, tag: 0x1000 + i },
            7 | 8 => {
                let rr = refs[ring as usize];
                Op::Consumed {
                    ring,
                    ci: rr.ci + r.below(rr.pi - rr.ci + 1),
                }
            }
            _ if i > 120 => Op::Setup {
                ring,
                base: 0x9_0000_0000 + (k as u64) * 0x1000,
                log2: 2,
            },
            _ => continue,
        };
        // Setting a ring up again resets the driver's consumer index too.
        if let Op::Setup { ring, .. } = op {
            ops.push(op);
            apply(op, &mut refs, &mut want);
            let c = Op::Consumed { ring, ci: 0 };
            ops.push(c);
            apply(c, &mut refs, &mut want);
            continue;
        }
        ops.push(op);
        apply(op, &mut refs, &mut want);
    }
    let got = Arc::new(Mutex::new(Vec::<Out>::new()));
    let g2 = got.clone();
    let ops2 = ops.clone();
    let n_want = want.len();
    let mut uut = RingWriter::new(TABLE, log2_entry);
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(RingWriter, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut r = Rng::from_state(seed ^ 0xabcdef);
        let mut i = 0;
        let mut req: Option<(u64, u64)> = None;
        let mut wait_idle = false;
        wait_clock_true!(sim, clock, x);
        for _ in 0..20_000 {
            if i >= ops2.len() && g2.lock().unwrap().len() >= n_want {
                break;
            }
            x.cfg.valid.next = false;
            x.in_valid.next = false;
            let mut is_entry = false;
            // After an entry, the next op waits until the writer is idle
            // again, so the config changes apply in script order.
            if i < ops2.len() && !wait_idle {
                match ops2[i] {
                    Op::Setup { ring, base, log2 } => {
                        let d = row_bits(&Row::new().set(ring::BASE, base).set(ring::LOG2_SLOTS, log2));
                        x.cfg.valid.next = true;
                        x.cfg.table.next = u64::from(TABLE).into();
                        x.cfg.index.next = ring.into();
                        x.cfg.data.next = d;
                    }
                    Op::Consumed { ring, ci } => {
                        x.cfg.valid.next = true;
                        x.cfg.table.next = u64::from(TABLE).into();
                        x.cfg.index.next = (u64::from(INDEX_SELECT) | ring).into();
                        x.cfg.data.next = row_bits(&Row::new().set(ring_consumer::CONSUMER, ci));
                    }
                    Op::Entry { ring, tag } => {
                        // Bit 0 is the phase's: send the opposite of what
                        // the writer must put there, and 0xFE around it.
                        let mut e = Bits::<256>::default();
                        e.set_bits::<64>(0, ((tag << 8) | 0xFF).into());
                        e.set_bits::<64>(192, (!tag).into());
                        x.in_valid.next = true;
                        x.in_ring.next = ring.into();
                        x.in_entry.next = e;
                        is_entry = true;
                    }
                }
            }
            x.dma_wr.req.ready.next = BACKPRESSURE.go(&mut r);
            x.dma_wr.beat.ready.next = BACKPRESSURE.go(&mut r);
            wait_clock_false!(sim, clock, x);
            let taken = i < ops2.len() && !wait_idle && (!is_entry || x.in_ready.val());
            if wait_idle && x.in_ready.val() {
                wait_idle = false;
            } else if taken && is_entry {
                wait_idle = true;
            }
            if x.cnt_overflow.val() {
                g2.lock().unwrap().push(Out::Overflow);
            }
            if x.dma_wr.req.valid.val() && x.dma_wr.req.ready.val() {
                req = Some((v(x.dma_wr.req.addr.val()), v(x.dma_wr.req.len.val())));
            }
            if x.dma_wr.beat.valid.val() && x.dma_wr.beat.ready.val() {
                let (addr, len) = req.take().unwrap_or((u64::MAX, 0));
                sim_assert!(sim, x.dma_wr.beat.last.val(), x);
                let d = x.dma_wr.beat.data.val();
                g2.lock().unwrap().push(Out::Write {
                    addr,
                    len,
                    keep: v(x.dma_wr.beat.keep.val()),
                    word0: v(d.get_bits::<64>(0)),
                    word3: v(d.get_bits::<64>(192)),
                });
            }
            wait_clock_true!(sim, clock, x);
            if taken {
                i += 1;
            }
        }
        sim.done(x)
    });
    sim.run(Box::new(uut), 1_000_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_ring_writer", || {
        hw::flow::emit_block("mrc_ring_writer", &mut RingWriter::new(TABLE, log2_entry)).verilog
    });
    let got = got.lock().unwrap();
    let overflows = want.iter().filter(|o| **o == Out::Overflow).count();
    let wraps = want
        .iter()
        .filter(|o| matches!(o, Out::Write { word0, .. } if word0 & 1 == 0))
        .count();
    eprintln!(
        "{} outputs: {overflows} overflows, {wraps} second-pass entries",
        want.len()
    );
    assert_eq!(*got, want);
    assert!(
        overflows >= 3 && wraps >= 3,
        "coverage: {overflows} overflows, {wraps} phase-0 entries"
    );
}

#[test]
fn cq_entries_of_32_bytes() {
    run(5, 1);
}

#[test]
fn ev_event_entries_of_16_bytes() {
    run(4, 2);
}
