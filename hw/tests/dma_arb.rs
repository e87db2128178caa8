//! DMA arbiters under random stalls on every channel: every read response
//! reaches the source that asked, with its own tag, in order, and every
//! write reaches the memory side whole (request, then exactly its beats up
//! to `last`, never interleaved with the other source's), and both sources
//! get the port (round robin).

use std::sync::{Arc, Mutex};

use hw::dma_arb::{DmaReadArb, DmaWriteArb};
use rust_hdl::prelude::*;

use tb::rng::Rng;
use tb::stall::Stall;
use tb::{lockstep, lockstep_sim};

/// Pauses of the sources' requests (read arbiter), of the write sources' requests and data, of the read responses, and the back-pressure of the sinks.
const REQ_PAUSE: Stall = Stall::go_percent(60);
const PAUSE: Stall = Stall::go_percent(70);
const RSP_PAUSE: Stall = Stall::go_percent(75);
const BACKPRESSURE: Stall = Stall::go_percent(70);

fn beats(len: u64) -> u64 {
    len.div_ceil(64).max(1)
}

/// Marker carried in a beat's low 64 bits: who, which transaction, which beat.
fn marker(src: u64, n: u64, beat: u64) -> u64 {
    src << 48 | n << 16 | beat
}

fn data(m: u64) -> Bits<512> {
    let mut b = Bits::<512>::default();
    b.set_bits::<64>(0, m.into());
    b.set_bits::<64>(448, (!m).into());
    b
}

/// A value of up to 64 bits (`Bits::index` only takes up to 32).
fn v<const N: usize>(b: Bits<N>) -> u64 {
    (0..N.min(64))
        .filter(|&i| b.get_bit(i))
        .fold(0, |acc, i| acc | (1 << i))
}

fn low64(b: Bits<512>) -> u64 {
    v(b.get_bits::<64>(0))
}

#[derive(Clone, Copy, Debug)]
struct ReadReq {
    addr: u64,
    len: u64,
    tag: u64,
}

#[test]
fn read_responses_return_to_their_source_with_their_tag() {
    const N: usize = 40;
    let mut r = Rng::from_state(0x5eed_0001);
    let reqs: Vec<Vec<ReadReq>> = (0..2)
        .map(|s| {
            (0..N)
                .map(|i| ReadReq {
                    addr: (s as u64) << 40 | (i as u64) << 12,
                    len: 1 + r.below(200),
                    tag: r.below(128),
                })
                .collect()
        })
        .collect();
    // Per source: (tag, beat marker, last) received.
    let got = Arc::new(Mutex::new([Vec::<(u64, u64, bool)>::new(), Vec::new()]));
    let g2 = got.clone();
    let reqs2 = reqs.clone();
    let mut uut = DmaReadArb::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(DmaReadArb, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut r = Rng::from_state(0x5eed_0002);
        let mut next = [0usize; 2];
        // Memory side: accepted requests (out tag, addr, len), served in
        // order, one beat per cycle when not stalled.
        let mut queue: std::collections::VecDeque<(u64, u64, u64)> = Default::default();
        let mut beat = 0u64;
        let mut a_valid = false;
        let mut b_valid = false;
        wait_clock_true!(sim, clock, x);
        for _cycle in 0..4000 {
            // Sources keep a request up until it is taken (AXI rule).
            a_valid = REQ_PAUSE.offer(a_valid, next[0] < N, &mut r);
            b_valid = REQ_PAUSE.offer(b_valid, next[1] < N, &mut r);
            x.a.req.valid.next = a_valid && next[0] < N;
            x.b.req.valid.next = b_valid && next[1] < N;
            if next[0] < N {
                let q = reqs2[0][next[0]];
                x.a.req.addr.next = q.addr.into();
                x.a.req.len.next = q.len.into();
                x.a.req.tag.next = q.tag.into();
            }
            if next[1] < N {
                let q = reqs2[1][next[1]];
                x.b.req.addr.next = q.addr.into();
                x.b.req.len.next = q.len.into();
                x.b.req.tag.next = q.tag.into();
            }
            x.m.req.ready.next = BACKPRESSURE.go(&mut r);
            x.a.rsp.ready.next = BACKPRESSURE.go(&mut r);
            x.b.rsp.ready.next = BACKPRESSURE.go(&mut r);
            let serving = queue.front().copied();
            let rsp_valid = serving.is_some() && RSP_PAUSE.go(&mut r);
            x.m.rsp.valid.next = rsp_valid;
            if let Some((tag, addr, len)) = serving {
                x.m.rsp.tag.next = tag.into();
                x.m.rsp.data.next = data(addr + beat);
                x.m.rsp.keep.next = u64::MAX.into();
                x.m.rsp.last.next = beat + 1 == beats(len);
            }
            wait_clock_false!(sim, clock, x);
            if x.m.req.valid.val() && x.m.req.ready.val() {
                let a_taken = x.a.req.ready.val();
                let b_taken = x.b.req.ready.val();
                sim_assert!(sim, a_taken != b_taken, x);
                let s = if a_taken { 0 } else { 1 };
                let q = reqs2[s][next[s]];
                sim_assert!(sim, v(x.m.req.addr.val()) == q.addr, x);
                sim_assert!(sim, v(x.m.req.len.val()) == q.len, x);
                queue.push_back((v(x.m.req.tag.val()), q.addr, q.len));
                next[s] += 1;
                if s == 0 {
                    a_valid = false;
                } else {
                    b_valid = false;
                }
            }
            if rsp_valid && x.m.rsp.ready.val() {
                let (a, b) = (x.a.rsp.valid.val(), x.b.rsp.valid.val());
                sim_assert!(sim, a != b, x);
                let (s, tag, d, last) = if a {
                    (0, x.a.rsp.tag.val(), x.a.rsp.data.val(), x.a.rsp.last.val())
                } else {
                    (1, x.b.rsp.tag.val(), x.b.rsp.data.val(), x.b.rsp.last.val())
                };
                g2.lock().unwrap()[s].push((v(tag), low64(d), last));
                let (_, _, len) = queue[0];
                beat += 1;
                if beat == beats(len) {
                    queue.pop_front();
                    beat = 0;
                }
            }
            wait_clock_true!(sim, clock, x);
        }
        sim.done(x)
    });
    sim.run(Box::new(uut), 1_000_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_dma_read_arb", || {
        hw::flow::emit_block("mrc_dma_read_arb", &mut DmaReadArb::default()).verilog
    });
    let got = got.lock().unwrap();
    for s in 0..2 {
        let want: Vec<(u64, u64, bool)> = reqs[s]
            .iter()
            .flat_map(|q| (0..beats(q.len)).map(move |b| (q.tag, q.addr + b, b + 1 == beats(q.len))))
            .collect();
        assert_eq!(got[s], want, "source {s}");
    }
}

#[test]
fn writes_pass_whole_and_unmixed() {
    const N: usize = 30;
    let mut r = Rng::from_state(0x5eed_0003);
    // Per source: lengths of its writes.
    let lens: Vec<Vec<u64>> = (0..2).map(|_| (0..N).map(|_| 1 + r.below(300)).collect()).collect();
    // Memory side log: Req(addr, len) or Beat(marker, last).
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Ev {
        Req(u64, u64),
        Beat(u64, bool),
    }
    let log = Arc::new(Mutex::new(Vec::<Ev>::new()));
    let l2 = log.clone();
    let lens2 = lens.clone();
    let mut uut = DmaWriteArb::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(DmaWriteArb, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut r = Rng::from_state(0x5eed_0004);
        // Per source: next write to request, next write and beat to send.
        let mut req_i = [0usize; 2];
        let mut dat_i = [0usize; 2];
        let mut dat_b = [0u64; 2];
        wait_clock_true!(sim, clock, x);
        for _cycle in 0..6000 {
            for s in 0..2 {
                // Requests run ahead of data by at most one write; data may
                // be offered before its request is taken (AXI allows it).
                let rv = req_i[s] < N && req_i[s] <= dat_i[s] && PAUSE.go(&mut r);
                let dv = dat_i[s] < N && PAUSE.go(&mut r);
                let (addr, len) = (
                    ((s as u64) << 40) | (req_i[s] as u64) << 16,
                    lens2[s].get(req_i[s]).copied().unwrap_or(1),
                );
                let dlen = lens2[s].get(dat_i[s]).copied().unwrap_or(1);
                let m = data(marker(s as u64, dat_i[s] as u64, dat_b[s]));
                let last = dat_b[s] + 1 == beats(dlen);
                if s == 0 {
                    x.a.req.valid.next = rv;
                    x.a.req.addr.next = addr.into();
                    x.a.req.len.next = len.into();
                    x.a.beat.valid.next = dv;
                    x.a.beat.data.next = m;
                    x.a.beat.keep.next = u64::MAX.into();
                    x.a.beat.last.next = last;
                } else {
                    x.b.req.valid.next = rv;
                    x.b.req.addr.next = addr.into();
                    x.b.req.len.next = len.into();
                    x.b.beat.valid.next = dv;
                    x.b.beat.data.next = m;
                    x.b.beat.keep.next = u64::MAX.into();
                    x.b.beat.last.next = last;
                }
            }
            x.m.req.ready.next = BACKPRESSURE.go(&mut r);
            x.m.beat.ready.next = BACKPRESSURE.go(&mut r);
            wait_clock_false!(sim, clock, x);
            if x.m.req.valid.val() && x.m.req.ready.val() {
                let s = if x.a.req.ready.val() { 0 } else { 1 };
                l2.lock()
                    .unwrap()
                    .push(Ev::Req(v(x.m.req.addr.val()), v(x.m.req.len.val())));
                req_i[s] += 1;
            }
            if x.m.beat.valid.val() && x.m.beat.ready.val() {
                let s = if x.a.beat.ready.val() { 0 } else { 1 };
                sim_assert!(sim, x.a.beat.ready.val() != x.b.beat.ready.val(), x);
                l2.lock()
                    .unwrap()
                    .push(Ev::Beat(low64(x.m.beat.data.val()), x.m.beat.last.val()));
                dat_b[s] += 1;
                if dat_b[s] == beats(lens2[s][dat_i[s]]) {
                    dat_i[s] += 1;
                    dat_b[s] = 0;
                }
            }
            wait_clock_true!(sim, clock, x);
        }
        sim.done(x)
    });
    sim.run(Box::new(uut), 1_000_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_dma_write_arb", || {
        hw::flow::emit_block("mrc_dma_write_arb", &mut DmaWriteArb::default()).verilog
    });
    // Parse the log into writes; each must be its source's next write.
    let log = log.lock().unwrap();
    let mut next = [0usize; 2];
    let mut i = 0;
    let mut order = Vec::new();
    while i < log.len() {
        let Ev::Req(addr, len) = log[i] else {
            panic!("beat without a request at {i}: {:?}", log[i])
        };
        let s = (addr >> 40) as usize;
        let n = ((addr >> 16) & 0xff_ffff) as usize;
        assert_eq!(n, next[s], "source {s} writes out of order");
        assert_eq!(len, lens[s][n]);
        for b in 0..beats(len) {
            i += 1;
            assert_eq!(
                log[i],
                Ev::Beat(marker(s as u64, n as u64, b), b + 1 == beats(len)),
                "write {s}/{n} beat {b}"
            );
        }
        next[s] += 1;
        order.push(s);
        i += 1;
    }
    assert_eq!(next, [N, N], "every write passed");
    // Round robin: the port changes hands often (not all of a, then all of b).
    let switches = order.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(switches >= N / 2, "only {switches} hand-overs in {order:?}");
}
