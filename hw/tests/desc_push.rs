//! Descriptor push cache, phase by phase: a scripted requester (reads
//! issued in order, responses taken under random back-pressure) in front,
//! a host behind (forwarded reads answered in order after a latency, one
//! beat per cycle), pushes written word by word as the CSR hands them on.
//! Every read's beats must be the pushed descriptor exactly when the
//! script says hit, the host's otherwise, in request order with the
//! request's tag; the consumed and dropped pulses must add up to the
//! script's. Cases: reads forwarded while earlier ones' last beats come
//! back (the count of reads in flight back to zero, then a hit); hit; miss; a stale push (a batch read covering the
//! slot drops it, the next read of the slot misses); a send-context write
//! clears the cache (another table's does not); a read while a forwarded
//! read is outstanding is not answered from the cache (and drops the
//! entry); a push into a full cache replaces the oldest; a push of a slot
//! already held replaces it; a push at an unaligned IOVA keys on its slot;
//! a send-context row zeroes a push cut off before its commit.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use contract::config::table;
use contract::regmap::push;
use hw::desc_push::DescPushCache;
use rust_hdl::prelude::*;

use tb::rng::Rng;
use tb::stall::Stall;
use tb::{lockstep, lockstep_sim};

mod push_common;
use push_common::{InOrderHost, Issued, Reader};

/// Back-pressure of the requester's response port.
const BACKPRESSURE: Stall = Stall::go_percent(70);
/// Back-pressure of the arbiter's request port.
const ARB_READY: Stall = Stall::go_percent(60);
/// Cycles from a forwarded request to its first beat.
const HOST_LATENCY: u64 = 12;

/// The host's descriptor at `addr`: a marker in word 0-1, its complement in the top word.
fn host_word(addr: u64) -> u64 {
    0x4800_0000_0000_0000 | addr >> 6
}

/// A pushed descriptor's 16 words: a marker (not a host word) in words 0-1, some
/// zero words between, in places that differ between markers (the staging is
/// zeroed after a commit, so they must be zero).
fn pushed(marker: u64) -> [u32; 16] {
    let mut w = [0u32; 16];
    w[0] = marker as u32;
    w[1] = (marker >> 32) as u32;
    w[9] = 0xA5A5_0000 | (marker as u32 & 0xFFFF);
    w[15] = !(marker as u32);
    // One more word whose place depends on the marker: a push that does
    // not write it must find it zeroed by the commit before it.
    w[2 + (marker % 7) as usize] = 0x5A5A_0000 | (marker as u32 & 0xFFFF);
    w
}

fn beat(words: &[u32; 16]) -> Bits<512> {
    let mut b = Bits::<512>::default();
    for (k, w) in words.iter().enumerate() {
        b.set_bits::<32>(32 * k, u64::from(*w).into());
    }
    b
}

fn host_beat(addr: u64) -> Bits<512> {
    let m = host_word(addr);
    let mut w = [0u32; 16];
    w[0] = m as u32;
    w[1] = (m >> 32) as u32;
    beat(&w)
}

#[derive(Clone, Copy, Debug)]
enum Op {
    /// Push `marker`'s descriptor for the slot at `iova` (words 0, 1, 9,
    /// 15, only the nonzero ones, then the slot's two words).
    Push { iova: u64, marker: u64, unaligned_lo: bool },
    /// Read `descs` descriptors from `addr`; the script's verdict: the
    /// beat of the first descriptor is the pushed `Some(marker)`, or the
    /// host's. `wait`: the next op waits until this read is answered.
    Read {
        addr: u64,
        descs: u64,
        hit: Option<u64>,
        wait: bool,
    },
    /// A config row of `table`.
    Cfg { table: u64 },
    /// One raw window word: a push cut off before its commit.
    Stray { word: u64, data: u32 },
    /// Idle cycles.
    Idle(u64),
}

const SLOT: u64 = 0x0000_7f12_3400_0000;

fn script() -> (Vec<Op>, u64, u64) {
    let a = |k: u64| SLOT + 64 * k;
    let read = |k: u64, hit: Option<u64>| Op::Read {
        addr: a(k),
        descs: 1,
        hit,
        wait: true,
    };
    let p = |k: u64, marker: u64| Op::Push {
        iova: a(k),
        marker,
        unaligned_lo: false,
    };
    let burst = |k: u64, last: bool| Op::Read {
        addr: a(k),
        descs: 1,
        hit: None,
        wait: last,
    };
    let mut ops = vec![];
    // Reads forwarded back to back while the earlier ones' beats come
    // back (a forward and a last beat in one cycle): the count of reads
    // in flight must come back to zero, or the next read of a pushed slot
    // is not answered from the cache.
    for k in 60..72 {
        ops.push(burst(k, k == 71));
    }
    ops.extend([p(50, 0x5050), read(50, Some(0x5050))]);
    ops.extend([
        // Hit, then the same slot again: consumed, so a miss.
        p(1, 0x1111),
        read(1, Some(0x1111)),
        read(1, None),
        // Miss: nothing pushed.
        read(2, None),
        // Stale push: a batch read covering slot 5 (3..=6) drops it.
        p(5, 0x5555),
        Op::Read {
            addr: a(3),
            descs: 4,
            hit: None,
            wait: true,
        },
        read(5, None),
        // A batch read next to a pushed slot leaves it: 8..=9 then 10.
        p(10, 0xAAAA),
        Op::Read {
            addr: a(8),
            descs: 2,
            hit: None,
            wait: true,
        },
        read(10, Some(0xAAAA)),
        // Clear: a send-context row; another table's row does not clear.
        p(11, 0xBBBB),
        Op::Cfg {
            table: u64::from(table::CQ_RING),
        },
        read(11, Some(0xBBBB)),
        p(12, 0xCCCC),
        Op::Cfg {
            table: u64::from(table::SQ_CTX),
        },
        read(12, None),
        // Outstanding: a miss in flight, then a read of a pushed slot is
        // forwarded (and drops it); the next read of it misses too.
        p(13, 0xDDDD),
        Op::Read {
            addr: a(20),
            descs: 1,
            hit: None,
            wait: false,
        },
        read(13, None),
        read(13, None),
        // A full cache: five pushes into four entries, the oldest goes.
        p(30, 0x3030),
        p(31, 0x3131),
        p(32, 0x3232),
        p(33, 0x3333),
        p(34, 0x3434),
        read(30, None),
        read(34, Some(0x3434)),
        read(31, Some(0x3131)),
        // The same slot pushed twice: the second replaces the first.
        p(40, 0x4040),
        p(40, 0x4141),
        read(40, Some(0x4141)),
        // Unaligned slot IOVA: keyed on bits 63-6.
        Op::Push {
            iova: a(41) + 0x24,
            marker: 0x4242,
            unaligned_lo: true,
        },
        read(41, Some(0x4242)),
        // A push cut off before its commit, then a send-context row: the
        // row zeroes the staged words, so the next push (which writes only
        // its nonzero words) inherits nothing.
        Op::Stray {
            word: 12,
            data: 0xDEAD_BEEF,
        },
        Op::Cfg {
            table: u64::from(table::SQ_CTX),
        },
        p(42, 0x4343),
        read(42, Some(0x4343)),
        Op::Idle(4),
    ]);
    // Consumed: 0x5050, 0x1111, 0xAAAA, 0xBBBB, 0x3434, 0x3131, 0x4141, 0x4242, 0x4343 = 9.
    // Dropped: slot 5, slot 13, slot 30 (the oldest of a full cache), slot
    // 40's first copy (refilled in place), slot 32 (the oldest when slot
    // 41 comes) = 5; the clear of slot 12 is not counted.
    (ops, 9, 5)
}

#[test]
fn hits_misses_stale_pushes_clears_and_outstanding_reads() {
    let (ops, want_consumed, want_dropped) = script();
    let log = Arc::new(Mutex::new((Vec::<String>::new(), 0u64, 0u64, 0usize)));
    let log2 = log.clone();
    let ops2 = ops.clone();
    let mut uut = DescPushCache::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(DescPushCache, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut r = Rng::from_state(0x5eed_d5c0);
        // Requester side.
        let mut op_i = 0usize;
        // Push words still to write for the current push op.
        let mut words: VecDeque<(u64, u32)> = VecDeque::new();
        let mut reader = Reader::new(host_beat);
        let mut host = InOrderHost::new(HOST_LATENCY, host_beat);
        let mut cur_read: Option<Issued> = None;
        let mut idle = 0u64;
        let mut next_tag = 0u64;
        let mut cycle = 0u64;
        let (mut consumed, mut dropped) = (0u64, 0u64);
        let mut errors = Vec::new();
        wait_clock_true!(sim, clock, x);
        while cycle < 3000 {
            // ---- Drive the next op.
            x.push_valid.next = false;
            x.cfg.valid.next = false;
            x.s.req.valid.next = false;
            if let Some((word, data)) = words.pop_front() {
                x.push_valid.next = true;
                x.push_word.next = word.into();
                x.push_data.next = u64::from(data).into();
            } else if idle > 0 {
                idle -= 1;
            } else if let Some(read) = cur_read.clone() {
                x.s.req.valid.next = true;
                x.s.req.addr.next = read.addr.into();
                x.s.req.len.next = read.len.into();
                x.s.req.tag.next = read.tag.into();
            } else if op_i < ops2.len() {
                let waiting = ops2[..op_i]
                    .iter()
                    .rev()
                    .find(|o| matches!(o, Op::Read { .. }))
                    .is_some_and(|o| matches!(o, Op::Read { wait: true, .. }));
                if !waiting || reader.issued.is_empty() {
                    match ops2[op_i] {
                        Op::Push {
                            iova,
                            marker,
                            unaligned_lo,
                        } => {
                            for (k, w) in pushed(marker).iter().enumerate() {
                                if *w != 0 {
                                    words.push_back((k as u64, *w));
                                }
                            }
                            let lo = if unaligned_lo { iova } else { iova & !63 };
                            words.push_back((u64::from(push::SLOT_LO / 4), lo as u32));
                            words.push_back((u64::from(push::SLOT_HI / 4), (iova >> 32) as u32));
                        }
                        Op::Read { addr, descs, hit, .. } => {
                            cur_read = Some(Issued {
                                addr,
                                len: 64 * descs,
                                tag: next_tag,
                                hit: hit.map(|m| beat(&pushed(m))),
                            });
                            next_tag = (next_tag + 1) % 128;
                        }
                        Op::Cfg { table } => {
                            x.cfg.valid.next = true;
                            x.cfg.table.next = table.into();
                            x.cfg.index.next = 3.into();
                        }
                        Op::Stray { word, data } => words.push_back((word, data)),
                        Op::Idle(n) => idle = n,
                    }
                    op_i += 1;
                }
            }
            x.s.rsp.ready.next = BACKPRESSURE.go(&mut r);
            x.m.req.ready.next = ARB_READY.go(&mut r);
            host.drive(&mut x.m, cycle);
            wait_clock_false!(sim, clock, x);
            // ---- Observe at the edge.
            consumed += u64::from(x.cnt_consumed.val());
            dropped += u64::from(x.cnt_dropped.val());
            if x.s.req.valid.val() && x.s.req.ready.val() {
                let read = cur_read.take().expect("a read was offered");
                reader.issued.push_back(read);
            }
            host.observe(&x.m, cycle);
            reader.observe(&x.s, cycle, &mut errors);
            wait_clock_true!(sim, clock, x);
            cycle += 1;
            if op_i == ops2.len() && words.is_empty() && cur_read.is_none() && reader.issued.is_empty() && idle == 0 {
                break;
            }
        }
        let mut l = log2.lock().unwrap();
        l.0 = errors;
        l.1 = consumed;
        l.2 = dropped;
        l.3 = op_i;
        sim.done(x)
    });
    sim.run(Box::new(uut), 1_000_000_000_000).unwrap();
    rec.check_verilog("mrc_desc_push", || {
        hw::flow::emit_block("mrc_desc_push", &mut DescPushCache::default()).verilog
    });
    let l = log.lock().unwrap();
    assert!(l.0.is_empty(), "{:#?}", l.0);
    assert_eq!(l.3, ops.len(), "the script ran to its end");
    assert_eq!((l.1, l.2), (want_consumed, want_dropped), "(consumed, dropped) pulses");
}
