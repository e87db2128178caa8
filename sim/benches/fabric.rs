//! Criterion benchmarks of the fabric engine on small cases (the
//! 1024-host figures come from `examples/fabric_perf.rs`).

use criterion::{criterion_group, criterion_main, Criterion};
use proto::time::Instant;
use sim::fabric::event::{EventList, HeapQueue, RadixQueue};
use sim::fabric::run::run_with;
use sim::fabric::testnets::{fat_tree, FatTreeShape, LinkSpec};
use sim::fabric::traffic::{incast, permutation};
use sim::fabric::SimConfig;

fn engine(c: &mut Criterion) {
    let (topo, _) = fat_tree(FatTreeShape::k_ary(8), LinkSpec::default());
    let perm = permutation(128, 200_000, 1);
    let mut g = c.benchmark_group("fabric");
    g.sample_size(10);
    for (name, evs) in [("perm128_200KB_mrc128", 128), ("perm128_200KB_1ev", 1)] {
        let mut cfg = SimConfig::mrc();
        cfg.n_evs = evs;
        g.bench_function(name, |b| {
            b.iter(|| run_with::<RadixQueue>(&topo, &cfg, &perm, None).unwrap())
        });
    }
    let cfg = SimConfig::mrc();
    g.bench_function("perm128_200KB_mrc128_heap", |b| {
        b.iter(|| run_with::<HeapQueue>(&topo, &cfg, &perm, None).unwrap())
    });
    let inc = incast(128, 32, 0, 100_000);
    g.bench_function("incast32_100KB_mrc", |b| {
        b.iter(|| run_with::<RadixQueue>(&topo, &cfg, &inc, None).unwrap())
    });
    let rc = SimConfig::rc();
    g.bench_function("perm128_200KB_rc", |b| {
        b.iter(|| run_with::<RadixQueue>(&topo, &rc, &perm, None).unwrap())
    });
    g.finish();
}

fn queues(c: &mut Criterion) {
    // Hold-model workload: 10 K pending events, pop one, push one later.
    let mut g = c.benchmark_group("event_queue");
    fn hold<Q: EventList + Default>() -> u64 {
        let mut q = Q::default();
        let mut x = 1u64;
        for i in 0..10_000u64 {
            q.push(Instant(i * 37), i, sim::fabric::event::Event::PortDone(i as u32));
        }
        let mut acc = 0;
        for _ in 0..100_000 {
            let (t, _, _) = q.pop().unwrap();
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            q.push(
                Instant(t.as_ps() + 1 + (x >> 44)),
                x,
                sim::fabric::event::Event::PortDone(0),
            );
            acc += t.as_ps();
        }
        acc
    }
    g.bench_function("heap_hold_10k", |b| b.iter(hold::<HeapQueue>));
    g.bench_function("radix_hold_10k", |b| b.iter(hold::<RadixQueue>));
    g.finish();
}

criterion_group!(benches, engine, queues);
criterion_main!(benches);
