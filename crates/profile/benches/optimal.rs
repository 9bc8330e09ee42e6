//! Criterion benchmarks of the exact solvers: the 6-app mixes of
//! `shared/data/pbbcache/workloads.csv` and three 8-app mixes drawn from
//! `metrics.csv` with a fixed seed (`simple` model, 35000 MB/s). Skipped
//! when the shared data is absent.

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use cachepart_profile::optimal::{solve, Objective, SolveOptions, Structure};
use cachepart_profile::{read_workloads, BwModel, MetricsTable, Mix, ModelConfig};
use cachepart_units::Kind as _;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

/// The PBBCache data (`$CACHEPART_SHARED/data/pbbcache`, default beside
/// the repository).
fn data() -> std::path::PathBuf {
    cachepart_testkit::shared_dir().join("data/pbbcache")
}

fn mixes() -> Option<Vec<(String, Mix)>> {
    let table = MetricsTable::from_path(&data().join("metrics.csv")).ok()?;
    let mut out = Vec::new();
    for (i, w) in read_workloads(&data().join("workloads.csv"))
        .ok()?
        .iter()
        .enumerate()
    {
        out.push((
            format!("w6-{}", i + 1),
            Mix::from_table(&table, &w.resolve(&table).ok()?),
        ));
    }
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for m in 0..3 {
        let mut idx = Vec::new();
        while idx.len() < 8 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let a = (x % table.apps().len() as u64) as usize;
            if !idx.contains(&a) {
                idx.push(a);
            }
        }
        out.push((format!("r8-{}", m + 1), Mix::from_table(&table, &idx)));
    }
    Some(out)
}

fn bench(c: &mut Criterion) {
    let Some(mixes) = mixes() else {
        eprintln!("SKIPPED: shared data not found under {}", data().display());
        return;
    };
    let cfg = ModelConfig {
        bw_model: BwModel::Simple,
        max_bw_mbps: Some(35000.0),
    };
    let mut g = c.benchmark_group("optimal");
    g.sample_size(10);
    for (structure, o) in [
        (Structure::Clustering, Objective::Unfairness),
        (Structure::Clustering, Objective::Stp),
        (Structure::Partitioning, Objective::Unfairness),
    ] {
        let name = format!("{}-{}", structure.prefix(), o.name());
        for (mix_name, mix) in &mixes {
            g.bench_with_input(BenchmarkId::new(&name, mix_name), mix, |b, mix| {
                b.iter(|| solve(mix, &cfg, structure, o, &SolveOptions::default()).unwrap())
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
