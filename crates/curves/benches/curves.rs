//! Throughput of the curve builders, in line references per second: the
//! exact fully associative pass against a plain reference Fenwick loop on
//! the same trace, SHARDS at rate 0.01, the set-associative pass over every
//! way count and the colored pass over every color count. Traces: zipf
//! over 8 MiB (synthetic) and, when valgrind is installed, `sort` captured
//! with lackey at bench time.
//!
//! Run: `cargo bench -p cachepart-curves --bench curves`.

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

mod common;

use cachepart_curves::{
    colored, fully_associative, set_associative, shards, ColorGeometry, Options, SetAssoc,
    ShardsConfig,
};
use cachepart_trace::Record;
use common::{reference, traces};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn data_lines(recs: &[Record]) -> Vec<u64> {
    recs.iter()
        .filter(|r| r.kind().is_data())
        .flat_map(|r| (r.addr() >> 6)..=((r.addr() + u64::from(r.size()) - 1) >> 6))
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut inputs = vec![("zipf-8MiB", traces::zipf(2_000_000, 8 << 20))];
    match traces::sort() {
        Some(r) => inputs.push(("sort-lackey", r)),
        None => println!("valgrind not found: synthetic traces only"),
    }
    let opts = Options::default();
    let mut g = c.benchmark_group("curves");
    g.sample_size(10);
    for (name, recs) in &inputs {
        let lines = data_lines(recs);
        g.throughput(Throughput::Elements(lines.len() as u64));
        g.bench_with_input(
            BenchmarkId::new("exact-fully-associative", name),
            recs,
            |b, r| b.iter(|| fully_associative(r.iter().copied(), &opts).unwrap()),
        );
        g.bench_with_input(
            BenchmarkId::new("plain-fenwick-reference", name),
            &lines,
            |b, l| b.iter(|| reference::plain_fenwick(l)),
        );
        let cfg = ShardsConfig::fixed_rate(0.01);
        g.bench_with_input(BenchmarkId::new("shards-rate-0.01", name), recs, |b, r| {
            b.iter(|| shards(r.iter().copied(), &opts, &cfg).unwrap())
        });
        let sa = SetAssoc {
            sets: 2048,
            max_ways: 16,
        };
        g.bench_with_input(
            BenchmarkId::new("set-assoc-2048x1..16", name),
            recs,
            |b, r| b.iter(|| set_associative(r.iter().copied(), &opts, &sa).unwrap()),
        );
        let geom = ColorGeometry {
            sets: 1024,
            ways: 16,
            page_bytes: 4096,
        };
        g.bench_with_input(BenchmarkId::new("colored-16-colors", name), recs, |b, r| {
            b.iter(|| colored(r.iter().copied(), &opts, &geom, None).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
