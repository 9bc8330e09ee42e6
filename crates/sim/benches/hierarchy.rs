//! Benchmark (a): the cachegrind-compatible two-level model, one core, on
//! a real trace of over 100 M accesses (`xz -9` captured with lackey into
//! a `.cpt` file under the temporary directory on first use, reused
//! afterwards; a synthetic trace without valgrind), beside the plain
//! reference loop of `cachepart_sim::reference` on the same trace.
//!
//! The trace is decoded into memory once, outside the timings; throughput
//! is in accesses per second (criterion's `elem/s`).
//!
//! Run: `cargo bench -p cachepart-sim --bench hierarchy`.

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

mod support;

use std::time::Duration;

use cachepart_sim::reference::reference_cachegrind;
use cachepart_sim::{CacheConfig, CachegrindSim};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn geom(c: &CacheConfig) -> (u64, u32, u32) {
    (c.size_bytes, c.ways, c.line_bytes)
}

fn bench(c: &mut Criterion) {
    let (records, what) = support::trace();
    let n = support::accesses(&records);
    let cfg = support::geometry();
    println!("trace: {what}: {n} accesses");
    let mut g = c.benchmark_group("cachegrind-two-level");
    g.throughput(Throughput::Elements(n));
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(100));
    g.measurement_time(Duration::from_secs(10));
    g.bench_function("cachepart-sim", |b| {
        b.iter(|| {
            let mut sim = CachegrindSim::new(&cfg).unwrap();
            sim.run(records.iter().copied());
            sim.summary()
        })
    });
    g.bench_function("reference-loop", |b| {
        b.iter(|| reference_cachegrind(&records, geom(&cfg.i1), geom(&cfg.d1), geom(&cfg.ll)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
