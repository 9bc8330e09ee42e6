//! Figures for the exact solvers: seconds per mix size and solver (median
//! and maximum over the mixes, and each mix), next to PBBCache's (median
//! of `ref/summary_results.csv`), and the largest mix solved exactly
//! within 60 s.
//!
//! `cargo run --release -p cachepart-profile --example bench_optimal [-- SIZES [SOLVERS [LIMIT]]]`
//! where SIZES is a comma-separated list (default 4,6,8,10,12,14,16),
//! SOLVERS a comma-separated subset of `optc-unf,optc-stp,opt-unf` (or
//! `all`) and LIMIT the time limit in seconds (default 60).
//! Mixes are drawn from `shared/data/pbbcache/metrics.csv` with a fixed
//! seed; bandwidth model `simple`, 35000 MB/s (as the reference runs).

use cachepart_profile::optimal::{solve, Objective, SolveOptions, Structure};
use cachepart_profile::{BwModel, MetricsTable, Mix, ModelConfig};
use std::collections::BTreeMap;
use std::time::Duration;

/// The PBBCache data (`$CACHEPART_SHARED/data/pbbcache`, default beside
/// the repository).
fn data() -> std::path::PathBuf {
    cachepart_testkit::shared_dir().join("data/pbbcache")
}
const LIMIT_S: u64 = 60;
const MIXES_PER_SIZE: usize = 3;

/// `count` distinct apps drawn with a fixed xorshift seed.
fn draw(table: &MetricsTable, count: usize, seed: u64) -> Vec<usize> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::new();
    while out.len() < count {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let a = (x % table.apps().len() as u64) as usize;
        if !out.contains(&a) {
            out.push(a);
        }
    }
    out
}

fn pbbcache_medians() -> BTreeMap<(String, usize), f64> {
    let mut all: BTreeMap<(String, usize), Vec<f64>> = BTreeMap::new();
    let p = data().join("ref/summary_results.csv");
    let Ok(mut rdr) = csv::Reader::from_path(&p) else {
        return BTreeMap::new();
    };
    let h = rdr.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|x| x == n).unwrap();
    let (ct, ca, cn, cs, cst) = (
        col("tag"),
        col("algorithm"),
        col("n_apps"),
        col("solver_seconds"),
        col("status"),
    );
    for r in rdr.records().map(|r| r.unwrap()) {
        if &r[ct] != "simple_b35000" || &r[cst] != "ok" {
            continue;
        }
        if let (Ok(n), Ok(s)) = (r[cn].parse::<usize>(), r[cs].parse::<f64>()) {
            all.entry((r[ca].to_string(), n)).or_default().push(s);
        }
    }
    all.into_iter()
        .map(|(k, mut v)| {
            v.sort_by(f64::total_cmp);
            (k, v[v.len() / 2])
        })
        .collect()
}

/// PBBCache anchors from `ref/NOTES.md` where the summary has no row.
fn pbbcache_anchor(alg: &str, n: usize) -> Option<(f64, bool)> {
    match (alg, n) {
        ("optc-unf", 8) => Some((154.0, false)),
        ("optc-stp", 8) => Some((152.0, false)),
        ("optc-unf" | "optc-stp", 12) => Some((600.0, true)),
        _ => None,
    }
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .nth(1)
        .map(|s| s.split(',').map(|x| x.parse().expect("size")).collect())
        .unwrap_or_else(|| vec![4, 6, 8, 10, 12, 14, 16]);
    let table =
        MetricsTable::from_path(&data().join("metrics.csv")).expect("metrics.csv (shared data)");
    let cfg = ModelConfig {
        bw_model: BwModel::Simple,
        max_bw_mbps: Some(35000.0),
    };
    let pbb = pbbcache_medians();
    let only: Option<Vec<String>> = std::env::args()
        .nth(2)
        .filter(|s| s != "all")
        .map(|s| s.split(',').map(str::to_string).collect());
    let limit_s: u64 = std::env::args()
        .nth(3)
        .map(|s| s.parse().expect("seconds"))
        .unwrap_or(LIMIT_S);
    let solvers: Vec<_> = [
        ("optc-unf", Structure::Clustering, Objective::Unfairness),
        ("optc-stp", Structure::Clustering, Objective::Stp),
        ("opt-unf", Structure::Partitioning, Objective::Unfairness),
    ]
    .into_iter()
    .filter(|(name, _, _)| only.as_ref().is_none_or(|o| o.iter().any(|x| x == name)))
    .collect();
    println!(
        "{:>5} {:>9} {:>12} {:>12} {:>12} {:>10} {:>7}  per mix",
        "apps", "solver", "median_s", "max_s", "pbbcache_s", "ratio", "proven"
    );
    let mut largest: BTreeMap<&str, usize> = BTreeMap::new();
    for &n in &sizes {
        for &(name, structure, o) in &solvers {
            if structure == Structure::Partitioning && n > table.ways() {
                println!(
                    "{n:>5} {name:>9} {:>12} {:>12} {:>12} {:>10} {:>7}",
                    "n/a", "n/a", "n/a", "-", "-"
                );
                continue;
            }
            let mut secs = Vec::new();
            let mut proven = true;
            for m in 0..MIXES_PER_SIZE {
                let mix = Mix::from_table(&table, &draw(&table, n, (n * 100 + m) as u64));
                let opts = SolveOptions {
                    time_limit: Some(Duration::from_secs(limit_s)),
                    ..Default::default()
                };
                let sol = solve(&mix, &cfg, structure, o, &opts).expect("solve");
                proven &= sol.proven_optimal;
                secs.push(sol.seconds);
            }
            let each: Vec<String> = secs.iter().map(|s| format!("{s:.3}")).collect();
            secs.sort_by(f64::total_cmp);
            let ours = secs[secs.len() / 2];
            let max = secs[secs.len() - 1];
            let (theirs, lower) = match pbb.get(&(name.to_string(), n)) {
                Some(&s) => (Some(s), false),
                None => match pbbcache_anchor(name, n) {
                    Some((s, l)) => (Some(s), l),
                    None => (None, false),
                },
            };
            let (ts, ratio) = match theirs {
                Some(s) => (
                    format!("{}{s:.3}", if lower { ">" } else { "" }),
                    format!("{}{:.0}x", if lower { ">" } else { "" }, s / ours),
                ),
                None => ("-".into(), "-".into()),
            };
            println!(
                "{n:>5} {name:>9} {ours:>12.5} {max:>12.5} {ts:>12} {ratio:>10} {proven:>7}  {}",
                each.join(" ")
            );
            if proven {
                let e = largest.entry(name).or_default();
                *e = (*e).max(n);
            }
        }
    }
    for (name, n) in largest {
        println!(
            "largest mix solved exactly within {limit_s} s by {name}: {n} apps (of the sizes tried)"
        );
    }
}
