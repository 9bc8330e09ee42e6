//! Benchmark (a) as a program: the cachegrind-compatible two-level model,
//! one core, on a real trace of over 100 M accesses (`xz -9` captured with
//! lackey, see `benches/support`), beside the plain reference loop of
//! `cachepart_sim::reference` on the same decoded trace. Prints accesses
//! per second of both and their ratio.
//!
//! The trace is decoded into memory once; the timings cover simulation
//! only (building the caches included, decoding excluded). Each model
//! runs `RUNS` times (default 3, first argument), alternating, and the
//! best time of each is reported.
//!
//! Run: `cargo run --release -p cachepart-sim --example bench_sim [RUNS]`.

#[path = "../benches/support/mod.rs"]
mod support;

use std::time::Instant;

use cachepart_sim::reference::reference_cachegrind;
use cachepart_sim::{CacheConfig, CachegrindSim};

fn geom(c: &CacheConfig) -> (u64, u32, u32) {
    (c.size_bytes, c.ways, c.line_bytes)
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3);
    let (records, what) = support::trace();
    let n = support::accesses(&records);
    let cfg = support::geometry();
    println!("trace: {what}: {n} accesses, {} records", records.len());
    println!("geometry: {}", cfg.valgrind_args().join(" "));
    let (mut ours, mut reference) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..runs {
        let t = Instant::now();
        let mut sim = CachegrindSim::new(&cfg).expect("valid geometry");
        sim.run(records.iter().copied());
        let s_ours = sim.summary();
        ours = ours.min(t.elapsed().as_secs_f64());

        let t = Instant::now();
        let s_ref = reference_cachegrind(&records, geom(&cfg.i1), geom(&cfg.d1), geom(&cfg.ll));
        reference = reference.min(t.elapsed().as_secs_f64());
        assert_eq!(s_ours, s_ref, "the two models disagree");
        println!("totals: {s_ours}");
    }
    let (r_ours, r_ref) = (n as f64 / ours, n as f64 / reference);
    println!(
        "cachepart-sim (cachegrind mode): {:8.1} M accesses/s",
        r_ours / 1e6
    );
    println!(
        "reference loop:                  {:8.1} M accesses/s",
        r_ref / 1e6
    );
    println!("ratio ours / reference:          {:8.3}", r_ours / r_ref);
}
