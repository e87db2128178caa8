//! The driver's own cost against `NullDevice` (MMIO writes go nowhere):
//! posting a WRITE and ringing its doorbell, posting in batches of 32
//! with one doorbell, and polling an empty CQ. The targets:
//! >= 10 M work requests/s on one core, an empty poll < 20 ns.
//!
//! The machine these run on is shared (other builds compete for its two
//! cores), so each figure is measured twice: wall time (criterion's
//! default) and, in the `*_cpu` variants, this thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`), which preemption does not inflate.
//!
//! Completions are played by the benchmark between timed stretches: the
//! last WR of each half ring is signaled, and its CQE is written into the
//! CQ ring (as the card would) and polled outside the measured time, so
//! the queue never fills.

use contract::layout::{Completion, CqStatus};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use driver::discovery::DeviceInfo;
use driver::*;
use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// This thread's CPU time.
fn cpu_now() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid out pointer; the clock exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[derive(Clone, Copy)]
enum Clock {
    Wall,
    Cpu,
}

struct Stopwatch(Clock, Instant, Duration);

impl Stopwatch {
    fn start(c: Clock) -> Stopwatch {
        match c {
            Clock::Wall => Stopwatch(c, Instant::now(), Duration::ZERO),
            Clock::Cpu => Stopwatch(c, Instant::now(), cpu_now()),
        }
    }
    fn elapsed(&self) -> Duration {
        match self.0 {
            Clock::Wall => self.1.elapsed(),
            Clock::Cpu => cpu_now() - self.2,
        }
    }
}

struct Bench {
    _ctx: Context,
    cq: CompletionQueue,
    qp: QueuePair,
    mr: MemoryRegion,
    cq_pi: u32,
    posted: u32,
}

fn bring_up(log2_sq: u8) -> Bench {
    let dev: Arc<dyn Device> = Arc::new(NullDevice::new());
    let ctx = Context::open_unverified(dev, DeviceInfo::this_driver(), &OpenOptions::default()).unwrap();
    let pd = ctx.alloc_pd();
    let mut cq = ctx.create_cq(12).unwrap();
    let mut qp = pd.create_qp(&mut cq, log2_sq).unwrap();
    qp.modify(QpTransition::Init { pkey: 0xFFFF }).unwrap();
    let peer = PeerAddress {
        mac: [2, 0, 0, 0, 0, 2],
        ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
    };
    qp.modify(QpTransition::Rtr(RtrAttr {
        dest_qp: 1,
        rq_psn: 0,
        peer,
        log2_mtu: 12,
        max_wimm: 16,
    }))
    .unwrap();
    let rts = RtsAttr {
        sq_psn: 0,
        send_mpr_units: 255,
        max_wimm: 16,
        timeouts: Timeouts::default(),
        evs: EvProfile {
            values: (1..=32).collect(),
            min_active: 1,
        },
        cc: CcProfile::default(),
    };
    qp.modify(QpTransition::Rts(rts)).unwrap();
    let buf = pd.alloc_buffer(1 << 20).unwrap();
    let mr = pd.register(&buf, Access::LocalOnly).unwrap();
    Bench {
        _ctx: ctx,
        cq,
        qp,
        mr,
        cq_pi: 0,
        posted: 0,
    }
}

fn wr(mr: &MemoryRegion, i: u64, signaled: bool) -> WriteWr<'_> {
    WriteWr {
        wr_id: i,
        local: mr,
        local_offset: (i & 255) * 4096,
        len: 4096,
        remote_va: 0x5000_0000,
        rkey: 0x1234,
        signaled,
        imm: None,
    }
}

impl Bench {
    /// The card completes everything up to the last WR posted (signaled).
    fn complete_all(&mut self) {
        let c = Completion {
            phase: false,
            status: CqStatus::Success,
            opcode: 1,
            qp: self.qp.qpn(),
            wr_id: u64::from(self.posted - 1),
            byte_len: 4096,
            imm: None,
            sq_index: self.posted - 1,
        };
        let mut b = c.encode().unwrap();
        let log2 = self.cq.slots().trailing_zeros();
        b[0] = (1 - ((self.cq_pi >> log2) & 1)) as u8;
        let slot = (self.cq_pi & (self.cq.slots() - 1)) as usize;
        self.cq.buffer().write(32 * slot, &b).unwrap();
        self.cq_pi += 1;
        let wc = self.cq.poll_cq().unwrap().expect("the CQE just written");
        assert_eq!(wc.wr_id, u64::from(self.posted - 1));
        assert_eq!(self.qp.outstanding(), 0);
    }

    /// Post `iters` WRs in runs of `run` (one doorbell per WR, or per
    /// batch of `batch`), timing only the posting.
    fn timed(&mut self, iters: u64, batch: usize, clock: Clock) -> Duration {
        let run = (self.qp.sq_slots() / 2) as u64 / batch as u64 * batch as u64;
        let mut total = Duration::ZERO;
        let mut left = iters;
        while left > 0 {
            let mut wrs: Vec<WriteWr> = Vec::with_capacity(batch);
            let n = left.min(run);
            let n = n.div_ceil(batch as u64) * batch as u64;
            let t = Stopwatch::start(clock);
            if batch == 1 {
                for k in 0..n {
                    let w = wr(&self.mr, u64::from(self.posted) + k, k == n - 1);
                    self.qp.post_write(black_box(&w)).unwrap();
                }
            } else {
                let mut k = 0;
                while k < n {
                    wrs.clear();
                    for j in 0..batch as u64 {
                        wrs.push(wr(&self.mr, u64::from(self.posted) + k + j, k + j == n - 1));
                    }
                    self.qp.post_writes(black_box(&wrs)).unwrap();
                    k += batch as u64;
                }
            }
            total += t.elapsed();
            self.posted += n as u32;
            self.complete_all();
            left = left.saturating_sub(n);
        }
        total
    }
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("driver");
    g.throughput(Throughput::Elements(1));
    for (suffix, clock) in [("", Clock::Wall), ("_cpu", Clock::Cpu)] {
        let mut b = bring_up(12);
        g.bench_function(format!("post_write_and_doorbell{suffix}"), |bn| {
            bn.iter_custom(|iters| b.timed(iters, 1, clock))
        });
        let mut b = bring_up(12);
        g.bench_function(format!("post_writes_batch32_per_wr{suffix}"), |bn| {
            bn.iter_custom(|iters| {
                let n = iters.div_ceil(32) * 32;
                let d = b.timed(n, 32, clock);
                d.mul_f64(iters as f64 / n as f64)
            })
        });
        let mut b = bring_up(4);
        g.bench_function(format!("poll_empty_cq{suffix}"), |bn| {
            bn.iter_custom(|iters| {
                let t = Stopwatch::start(clock);
                for _ in 0..iters {
                    assert!(black_box(b.cq.poll_cq()).unwrap().is_none());
                }
                t.elapsed()
            })
        });
    }
    g.finish();
}

criterion_group!(name = driver_benches; config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2)); targets = benches);
criterion_main!(driver_benches);
