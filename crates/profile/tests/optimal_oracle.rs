//! The exact solvers against the brute-force oracle, on random mixes:
//! equal objective values for all six solvers and both tie rules under
//! both bandwidth models; an optimal incumbent kept unchanged; the same
//! plan whatever the thread count; a valid plan under a time limit.

use cachepart_machine::AppCurves;
use cachepart_profile::optimal::{brute_force, solve, Objective, SolveOptions, Structure, TieRule};
use cachepart_profile::{evaluate, round3, BwModel, MetricsTable, Mix, ModelConfig};
use cachepart_units::Kind as _;
use proptest::prelude::*;
use std::time::Duration;

fn cost(mix: &Mix, plan: &cachepart_machine::Plan, cfg: &ModelConfig, o: Objective) -> (f64, f64) {
    let m = evaluate(mix, plan, cfg).expect("valid plan").metrics;
    match o {
        Objective::Stp => (-round3(m.stp), 0.0),
        Objective::Unfairness => (round3(m.unfairness), -round3(m.stp)),
        Objective::Antt => (round3(m.antt), -round3(m.stp)),
    }
}

fn check_all(mix: &Mix, cfg: &ModelConfig) -> Result<(), TestCaseError> {
    for structure in [Structure::Partitioning, Structure::Clustering] {
        if structure == Structure::Partitioning && mix.len() > mix.ways {
            continue;
        }
        for o in Objective::all() {
            let oracle = brute_force(mix, cfg, structure, o).unwrap();
            for tie_rule in [TieRule::Serial, TieRule::BestFirst] {
                let opts = SolveOptions {
                    tie_rule,
                    ..Default::default()
                };
                let sol = solve(mix, cfg, structure, o, &opts).unwrap();
                prop_assert!(sol.proven_optimal);
                prop_assert_eq!(
                    cost(mix, &sol.plan, cfg, o),
                    cost(mix, &oracle, cfg, o),
                    "{}-{}{} on {:?}: ours {} oracle {}",
                    structure.prefix(),
                    o.name(),
                    tie_rule.suffix(),
                    mix.names(),
                    sol.plan,
                    oracle
                );
            }
            // an optimal incumbent is returned as it is
            let opts = SolveOptions {
                tie_rule: TieRule::BestFirst,
                incumbent: Some(&oracle),
                ..Default::default()
            };
            let sol = solve(mix, cfg, structure, o, &opts).unwrap();
            prop_assert_eq!(&sol.plan, &oracle);
        }
    }
    Ok(())
}

/// A random app over `ways` ways: noisy rising IPC (not always monotone).
fn app(ways: usize) -> impl Strategy<Value = AppCurves> {
    (
        0.0f64..1.5,
        0.5f64..40.0,
        proptest::collection::vec(-0.08f64..0.08, ways),
        0.2f64..3.0,
    )
        .prop_map(move |(sens, mpkc1, noise, base)| {
            let ipc: Vec<f64> = (1..=ways)
                .map(|w| base * (1.0 + sens * (w as f64).ln()) * (1.0 + noise[w - 1]))
                .collect();
            let mpkc: Vec<f64> = (1..=ways)
                .map(|w| mpkc1 / (1.0 + sens * (w as f64 - 1.0)) + 0.05)
                .collect();
            let mpki: Vec<f64> = mpkc.iter().zip(&ipc).map(|(m, i)| m / i).collect();
            let bw: Vec<f64> = mpkc.iter().map(|m| m * 200.0).collect();
            AppCurves::new("r", ipc, mpki, mpkc, bw)
        })
}

fn random_mix() -> impl Strategy<Value = (Mix, Option<f64>)> {
    (4usize..=7)
        .prop_flat_map(|ways| {
            (
                proptest::collection::vec(app(ways), 1..=6),
                proptest::option::of(0.3f64..1.2),
            )
        })
        .prop_map(|(apps, frac)| {
            let peak: f64 = apps.iter().map(|a| a.bandwidth_mbps[0]).sum();
            (Mix::from_curves(apps).unwrap(), frac.map(|f| f * peak))
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_curves_match_oracle((mix, max_bw) in random_mix()) {
        let cfg = ModelConfig { bw_model: BwModel::Simple, max_bw_mbps: max_bw };
        check_all(&mix, &cfg)?;
    }
}

/// PBBCache's metrics table (the test fails without the shared data
/// unless `CACHEPART_ALLOW_MISSING_SHARED=1`).
fn table() -> Option<MetricsTable> {
    let dir = cachepart_testkit::pbbcache_dir("metrics_apps_match_oracle")?;
    Some(MetricsTable::from_path(&dir.join("metrics.csv")).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn metrics_apps_match_oracle(seed in proptest::collection::vec(0usize..1000, 2..=6), bw in 0usize..3) {
        let Some(t) = table() else { return Ok(()) };
        let mut idx: Vec<usize> = Vec::new();
        for s in seed {
            let a = s % t.apps().len();
            if !idx.contains(&a) {
                idx.push(a);
            }
        }
        let mix = Mix::from_table(&t, &idx);
        let cfg = match bw {
            0 => ModelConfig { bw_model: BwModel::Simple, max_bw_mbps: Some(35000.0) },
            1 => ModelConfig { bw_model: BwModel::Simple, max_bw_mbps: Some(6000.0) },
            _ => ModelConfig { bw_model: BwModel::Stalls, max_bw_mbps: Some(35000.0) },
        };
        check_all(&mix, &cfg)?;
    }
}

/// Deterministic pseudo-random curves (no data needed).
fn synthetic(n: usize, ways: usize, seed: u64) -> Mix {
    let mut x = seed;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % 10_000) as f64 / 10_000.0
    };
    let apps = (0..n)
        .map(|i| {
            let sens = rnd() * 1.2;
            let base = 0.3 + 2.0 * rnd();
            let mpkc1 = 1.0 + 30.0 * rnd();
            let ipc: Vec<f64> = (1..=ways)
                .map(|w| base * (1.0 + sens * (w as f64).ln()) * (1.0 + 0.04 * (rnd() - 0.5)))
                .collect();
            let mpkc: Vec<f64> = (1..=ways)
                .map(|w| mpkc1 / (1.0 + sens * (w as f64 - 1.0)) + 0.05)
                .collect();
            let mpki: Vec<f64> = mpkc.iter().zip(&ipc).map(|(m, i)| m / i).collect();
            let bw: Vec<f64> = mpkc.iter().map(|m| m * 150.0).collect();
            AppCurves::new(&format!("s{i}"), ipc, mpki, mpkc, bw)
        })
        .collect();
    Mix::from_curves(apps).unwrap()
}

#[test]
fn same_answer_with_one_and_two_threads() {
    let cfg = ModelConfig::default();
    for (n, seed) in [(6, 1), (9, 2), (10, 3)] {
        let mix = synthetic(n, 11, seed);
        for o in Objective::all() {
            let run = |threads| {
                solve(
                    &mix,
                    &cfg,
                    Structure::Clustering,
                    o,
                    &SolveOptions {
                        threads: Some(threads),
                        ..Default::default()
                    },
                )
                .unwrap()
            };
            let (a, b) = (run(1), run(2));
            assert_eq!(a.plan, b.plan, "n={n} {}", o.name());
            assert!(a.proven_optimal && b.proven_optimal);
        }
        let run = |threads| {
            solve(
                &mix,
                &cfg,
                Structure::Partitioning,
                Objective::Unfairness,
                &SolveOptions {
                    threads: Some(threads),
                    ..Default::default()
                },
            )
            .unwrap()
        };
        assert_eq!(run(1).plan, run(2).plan);
    }
}

#[test]
fn time_limit_returns_a_valid_unproven_plan() {
    let mix = synthetic(16, 11, 7);
    let cfg = ModelConfig::default();
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let cb = |_p: cachepart_profile::Progress| {
        calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    };
    let sol = solve(
        &mix,
        &cfg,
        Structure::Clustering,
        Objective::Unfairness,
        &SolveOptions {
            time_limit: Some(Duration::from_millis(1)),
            threads: Some(2),
            progress: Some(&cb),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(!sol.proven_optimal);
    assert!(evaluate(&mix, &sol.plan, &cfg).is_ok());
    assert!(calls.load(std::sync::atomic::Ordering::Relaxed) >= 1);
}

/// The setup (subset tables, dynamic programmes, bounds) checks the clock
/// too: a 500 ms limit on a large mix (whose subset tables alone take about
/// 2 s) ends about 0.6 s after the start (the margin here is for loaded
/// test machines; before the tables checked the clock on every subset it
/// took 2-3 s).
#[test]
fn time_limit_covers_the_setup() {
    let mix = synthetic(18, 11, 5);
    let cfg = ModelConfig::default();
    for o in [Objective::Stp, Objective::Unfairness] {
        let sol = solve(
            &mix,
            &cfg,
            Structure::Clustering,
            o,
            &SolveOptions {
                time_limit: Some(Duration::from_millis(500)),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(!sol.proven_optimal);
        assert!(sol.seconds < 1.5, "{}: {} s", o.name(), sol.seconds);
        assert!(evaluate(&mix, &sol.plan, &cfg).is_ok());
    }
}

#[test]
fn infeasible_requests_are_errors() {
    let mix = synthetic(12, 11, 3);
    let cfg = ModelConfig::default();
    // incumbents that are not plans of the mix, or not strict partitionings
    let small = synthetic(3, 11, 1);
    for (structure, bad) in [
        (
            Structure::Clustering,
            cachepart_machine::Plan::from_clusters([(vec![0, 1], 11)]),
        ),
        (
            Structure::Partitioning,
            cachepart_machine::Plan::from_clusters([(vec![0, 1], 6), (vec![2], 5)]),
        ),
    ] {
        let opts = SolveOptions {
            incumbent: Some(&bad),
            ..Default::default()
        };
        assert!(solve(&small, &cfg, structure, Objective::Stp, &opts).is_err());
    }
    assert!(solve(
        &mix,
        &cfg,
        Structure::Partitioning,
        Objective::Stp,
        &SolveOptions::default()
    )
    .is_err());
    let stalls = ModelConfig {
        bw_model: BwModel::Stalls,
        max_bw_mbps: Some(1000.0),
    };
    assert!(solve(
        &synthetic(3, 11, 1),
        &stalls,
        Structure::Clustering,
        Objective::Stp,
        &SolveOptions::default()
    )
    .is_err());
}
