//! Payload push cache, phase by phase: a scripted TX path (payload reads
//! issued in order, each with its packet's QP; responses taken under
//! random back-pressure) in front, a host behind (forwarded reads answered
//! in order after a latency, one beat per cycle), pushes written word by
//! word as the CSR hands them on. Every read's beats must be the pushed
//! payload exactly when the script says hit (one beat, the length's lanes),
//! the host's otherwise, in request order with the request's tag; the
//! consumed and dropped pulses must add up to the script's. Cases: a hit,
//! then the same read again (consumed: a miss); a read with another length
//! or of another QP misses; a forwarded read of the entry's QP drops it,
//! one of another QP does not; a read while a forwarded read is
//! outstanding is forwarded (and drops the entry); a send-context write
//! clears the cache (another table's does not); a full cache replaces the
//! oldest; the same key pushed twice keeps the second; pushes of length 0
//! and 65 are refused; lengths 1, 37 and 64 give their lanes; a
//! send-context row zeroes a push cut off before its commit.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use contract::config::table;
use contract::regmap::push;
use hw::payload_push::PayloadPushCache;
use rust_hdl::prelude::*;

use tb::rng::Rng;
use tb::stall::Stall;
use tb::{lockstep, lockstep_sim};

mod push_common;
use push_common::{InOrderHost, Issued, Reader};

/// Back-pressure of the TX path's response port (the payload FIFO).
const BACKPRESSURE: Stall = Stall::go_percent(70);
/// Back-pressure of the arbiter's request port.
const ARB_READY: Stall = Stall::go_percent(60);
/// Cycles from a forwarded request to its first beat.
const HOST_LATENCY: u64 = 12;

/// The host's bytes at `addr`: a marker in the first 8 bytes.
fn host_beat(addr: u64) -> Bits<512> {
    let mut b = Bits::<512>::default();
    b.set_bits::<64>(0, (0x4800_0000_0000_0000 | addr).into());
    b.set_bits::<64>(448, (!addr).into());
    b
}

/// A pushed payload's 16 words: a marker in words 0-1 and 15, zero words
/// between, one more in a place that differs between markers (the staging
/// is zeroed after a commit, so the words a push does not write must be
/// zero).
fn pushed(marker: u64) -> [u32; 16] {
    let mut w = [0u32; 16];
    w[0] = marker as u32;
    w[1] = (marker >> 32) as u32 | 0x0100_0000;
    w[15] = !(marker as u32);
    w[2 + (marker % 11) as usize] = 0x5A5A_0000 | (marker as u32 & 0xFFFF);
    w
}

fn beat(words: &[u32; 16]) -> Bits<512> {
    let mut b = Bits::<512>::default();
    for (k, w) in words.iter().enumerate() {
        b.set_bits::<32>(32 * k, u64::from(*w).into());
    }
    b
}

#[derive(Clone, Copy, Debug)]
enum Op {
    /// Push `marker`'s payload for (`qp`, `iova`, `len`): the nonzero words
    /// within `len` bytes, the IOVA's two words, then the key word.
    Push { qp: u64, iova: u64, len: u64, marker: u64 },
    /// Read `len` bytes at `addr` for `qp`; the script's verdict: the
    /// pushed `Some(marker)`, or the host's. `wait`: the next op waits
    /// until this read is answered.
    Read {
        qp: u64,
        addr: u64,
        len: u64,
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

const BUF: u64 = 0x0000_7f55_1200_0013;

fn script() -> (Vec<Op>, u64, u64) {
    let a = |k: u64| BUF + 0x100 * k;
    let p = |qp: u64, k: u64, len: u64, marker: u64| Op::Push {
        qp,
        iova: a(k),
        len,
        marker,
    };
    let read = |qp: u64, k: u64, len: u64, hit: Option<u64>| Op::Read {
        qp,
        addr: a(k),
        len,
        hit,
        wait: true,
    };
    let ops = vec![
        // Reads forwarded back to back, then a hit: the count of reads in
        // flight must come back to zero.
        Op::Read {
            qp: 9,
            addr: a(90),
            len: 512,
            hit: None,
            wait: false,
        },
        Op::Read {
            qp: 9,
            addr: a(91),
            len: 100,
            hit: None,
            wait: true,
        },
        p(1, 1, 64, 0x1111),
        read(1, 1, 64, Some(0x1111)),
        // Consumed: the same read again misses.
        read(1, 1, 64, None),
        // Nothing pushed: a miss.
        read(1, 2, 64, None),
        // Another length, then another QP: misses; the other QP's read
        // leaves QP 3's entry, QP 3's own forwarded read drops it.
        p(3, 3, 40, 0x3333),
        read(4, 3, 40, None),
        read(3, 3, 41, None),
        read(3, 3, 40, None),
        // A forwarded read of another QP leaves the entry.
        p(5, 5, 37, 0x5555),
        read(6, 7, 300, None),
        read(5, 5, 37, Some(0x5555)),
        // Outstanding: a miss in flight, then the pushed read is forwarded
        // (and drops the entry); the next read of it misses too.
        p(8, 8, 64, 0x8888),
        Op::Read {
            qp: 2,
            addr: a(20),
            len: 64,
            hit: None,
            wait: false,
        },
        read(8, 8, 64, None),
        read(8, 8, 64, None),
        // Clear: a send-context row; another table's row does not clear.
        p(10, 10, 1, 0xAAAA),
        Op::Cfg {
            table: u64::from(table::CQ_RING),
        },
        read(10, 10, 1, Some(0xAAAA)),
        p(11, 11, 64, 0xBBBB),
        Op::Cfg {
            table: u64::from(table::SQ_CTX),
        },
        read(11, 11, 64, None),
        // A full cache: five pushes into four entries, the oldest goes.
        p(30, 30, 64, 0x3030),
        p(31, 31, 64, 0x3131),
        p(32, 32, 64, 0x3232),
        p(33, 33, 64, 0x3333),
        p(34, 34, 64, 0x3434),
        read(30, 30, 64, None),
        read(34, 34, 64, Some(0x3434)),
        read(31, 31, 64, Some(0x3131)),
        // The same key pushed twice: the second replaces the first.
        p(40, 40, 48, 0x4040),
        p(40, 40, 48, 0x4141),
        read(40, 40, 48, Some(0x4141)),
        // Refused lengths: nothing is kept.
        p(41, 41, 0, 0x4242),
        p(41, 41, 65, 0x4343),
        read(41, 41, 64, None),
        // A push cut off before its commit, then a send-context row: the
        // row zeroes the staged words, so the next push (which writes only
        // its nonzero words) inherits nothing.
        Op::Stray {
            word: 37,
            data: 0xDEAD_BEEF,
        },
        Op::Cfg {
            table: u64::from(table::SQ_CTX),
        },
        p(50, 50, 64, 0x5050),
        read(50, 50, 64, Some(0x5050)),
        Op::Idle(4),
    ];
    // Consumed: 0x1111, 0x5555, 0xAAAA, 0x3434, 0x3131, 0x4141, 0x5050 = 7.
    // Dropped: QP 3's entry (its own forwarded read), QP 8's (forwarded
    // while another read was outstanding), 0x3030 (the oldest of a full
    // cache), 0x4040 (refilled in place), the two refused pushes = 6; the
    // clear of 0xBBBB is not counted, 0x3232 and 0x3333 stay.
    (ops, 7, 6)
}

#[test]
fn hits_misses_drops_by_qp_clears_and_outstanding_reads() {
    let (ops, want_consumed, want_dropped) = script();
    let log = Arc::new(Mutex::new((Vec::<String>::new(), 0u64, 0u64, 0usize)));
    let log2 = log.clone();
    let ops2 = ops.clone();
    let mut uut = PayloadPushCache::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(PayloadPushCache, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut r = Rng::from_state(0x5eed_9a70);
        let mut op_i = 0usize;
        let mut words: VecDeque<(u64, u32)> = VecDeque::new();
        let mut reader = Reader::new(host_beat);
        let mut host = InOrderHost::new(HOST_LATENCY, host_beat);
        let mut cur_read: Option<(Issued, u64)> = None;
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
            } else if let Some((read, qp)) = cur_read.clone() {
                x.s.req.valid.next = true;
                x.s.req.addr.next = read.addr.into();
                x.s.req.len.next = read.len.into();
                x.s.req.tag.next = read.tag.into();
                x.s_qp.next = qp.into();
            } else if op_i < ops2.len() {
                let waiting = ops2[..op_i]
                    .iter()
                    .rev()
                    .find(|o| matches!(o, Op::Read { .. }))
                    .is_some_and(|o| matches!(o, Op::Read { wait: true, .. }));
                if !waiting || reader.issued.is_empty() {
                    match ops2[op_i] {
                        Op::Push { qp, iova, len, marker } => {
                            let bytes = len.min(64);
                            for (k, w) in pushed(marker).iter().enumerate() {
                                // Only the words within the length (the
                                // last one's bytes beyond it too: the
                                // lanes must hide them).
                                if *w != 0 && 4 * (k as u64) < bytes {
                                    words.push_back((u64::from(push::PAYLOAD / 4) + k as u64, *w));
                                }
                            }
                            words.push_back((u64::from(push::PAYLOAD_IOVA_LO / 4), iova as u32));
                            words.push_back((u64::from(push::PAYLOAD_IOVA_HI / 4), (iova >> 32) as u32));
                            words.push_back((
                                u64::from(push::PAYLOAD_KEY / 4),
                                (len as u32) | (qp as u32) << push::PAYLOAD_KEY_QP_SHIFT,
                            ));
                        }
                        Op::Read { qp, addr, len, hit, .. } => {
                            cur_read = Some((
                                Issued {
                                    addr,
                                    len,
                                    tag: next_tag,
                                    hit: hit.map(|m| beat(&pushed(m))),
                                },
                                qp,
                            ));
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
                let (read, _) = cur_read.take().expect("a read was offered");
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
    rec.check_verilog("mrc_payload_push", || {
        hw::flow::emit_block("mrc_payload_push", &mut PayloadPushCache::default()).verilog
    });
    let l = log.lock().unwrap();
    assert!(l.0.is_empty(), "{:#?}", l.0);
    assert_eq!(l.3, ops.len(), "the script ran to its end");
    assert_eq!((l.1, l.2), (want_consumed, want_dropped), "(consumed, dropped) pulses");
}
