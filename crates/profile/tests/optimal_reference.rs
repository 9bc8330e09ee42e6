//! The exact solvers against PBBCache's reference answers
//! (`shared/data/pbbcache/ref/tidy_results.csv`): per-app ways and cluster
//! membership (up to renumbering) of every `opt-stp`, `opt-unf`,
//! `optc-stp` and `optc-unf` row and of their best-first (`-bf`) variants,
//! both tags. `optc-*-bf` start from LFOC's plan, taken from the
//! reference's own `lfoc` rows of the same workload. Fails when the
//! shared data is absent unless `CACHEPART_ALLOW_MISSING_SHARED=1`.

use cachepart_machine::Plan;
use cachepart_profile::optimal::{solve, Objective, SolveOptions, Structure, TieRule};
use cachepart_profile::{BwModel, MetricsTable, Mix, ModelConfig};
use cachepart_testkit::pbbcache::{canon, load_reference, RefRow};
use std::collections::BTreeMap;

/// The plan of a reference group: clusters by printed id, apps in
/// workload order, each cluster with its printed ways.
fn plan_of(rows: &[RefRow]) -> Plan {
    let mut clusters: BTreeMap<usize, (Vec<usize>, u32)> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        let e = clusters
            .entry(r.cluster.parse().unwrap())
            .or_insert((Vec::new(), r.ways));
        e.0.push(i);
    }
    Plan::from_clusters(clusters.into_values())
}

#[test]
fn reference_rows_match() {
    check(&["opt-stp", "opt-unf", "optc-stp", "optc-unf"]);
}

#[test]
fn best_first_reference_rows_match() {
    check(&["opt-stp-bf", "opt-unf-bf", "optc-stp-bf", "optc-unf-bf"]);
}

/// Solves every reference group of the `algorithms` and compares.
fn check(algorithms: &[&str]) {
    let Some(dir) = cachepart_testkit::pbbcache_dir("optimal reference rows") else {
        return;
    };
    let table = MetricsTable::from_path(&dir.join("metrics.csv")).unwrap();
    let (all, _) = load_reference(&dir.join("ref/tidy_results.csv"));
    // In (tag, algorithm, set, workload) order; rows in `bench_id` order.
    let mut groups: BTreeMap<(String, String, String, String), Vec<RefRow>> = BTreeMap::new();
    for ((tag, set, wid, alg), rows) in all {
        if !algorithms.contains(&alg.as_str()) && alg != "lfoc" {
            continue;
        }
        groups.insert((tag, alg, set, wid), rows);
    }
    let mut tally: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for ((tag, alg, set, wid), rows) in &groups {
        if alg == "lfoc" {
            continue;
        }
        let lfoc = groups
            .get(&(tag.clone(), "lfoc".to_string(), set.clone(), wid.clone()))
            .map(|rows| plan_of(rows));
        let idx: Vec<usize> = rows
            .iter()
            .map(|r| table.app_index(&r.app).unwrap())
            .collect();
        let mix = Mix::from_table(&table, &idx);
        let cfg = ModelConfig {
            bw_model: if tag.starts_with("stalls") {
                BwModel::Stalls
            } else {
                BwModel::Simple
            },
            max_bw_mbps: Some(35000.0),
        };
        let structure = if alg.starts_with("optc") {
            Structure::Clustering
        } else {
            Structure::Partitioning
        };
        let objective = if alg.contains("stp") {
            Objective::Stp
        } else {
            Objective::Unfairness
        };
        let best_first = alg.ends_with("-bf");
        let opts = SolveOptions {
            tie_rule: if best_first {
                TieRule::BestFirst
            } else {
                TieRule::Serial
            },
            incumbent: if best_first && structure == Structure::Clustering {
                Some(lfoc.as_ref().expect("an lfoc row per workload"))
            } else {
                None
            },
            ..Default::default()
        };
        let sol = solve(&mix, &cfg, structure, objective, &opts).unwrap();
        let cluster_of = sol.plan.cluster_of(mix.len());
        let ours_ways: Vec<usize> = cluster_of
            .iter()
            .map(|c| sol.plan.clusters[c.unwrap()].mask.count() as usize)
            .collect();
        let ours_cl: Vec<String> = cluster_of.iter().map(|c| c.unwrap().to_string()).collect();
        let ref_ways: Vec<usize> = rows.iter().map(|r| r.ways as usize).collect();
        let ref_cl: Vec<String> = rows.iter().map(|r| r.cluster.clone()).collect();
        let ok = ours_ways == ref_ways && canon(&ours_cl) == canon(&ref_cl);
        let e = tally.entry((tag.clone(), alg.clone())).or_default();
        e.1 += 1;
        if ok {
            e.0 += 1;
        } else {
            failures.push(format!(
                "{tag} {alg} {set} {wid}: ref ways {ref_ways:?} clusters {:?}, ours {ours_ways:?} {:?}",
                canon(&ref_cl),
                canon(&ours_cl)
            ));
        }
    }
    for ((tag, alg), (ok, n)) in &tally {
        println!("{tag} {alg}: {ok}/{n} workloads match");
    }
    for f in &failures {
        println!("MISMATCH {f}");
    }
    assert!(
        failures.is_empty(),
        "{} reference workloads differ",
        failures.len()
    );
}
