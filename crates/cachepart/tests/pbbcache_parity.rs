//! Parity with PBBCache: every row of `ref/tidy_results.csv` (per-app ways,
//! cluster membership up to renumbering, slowdowns, STP, ANTT, unfairness).

use cachepart::profile::{round3, BwModel, MetricsTable, Mix, ModelConfig};
use cachepart::Kind as _;
use cachepart::{Algorithm, RunOptions};
use cachepart_testkit::pbbcache::{load_reference, partition};
use std::collections::{BTreeMap, BTreeSet};

#[test]
fn every_reference_row() {
    let Some(dir) = cachepart_testkit::pbbcache_dir("every_reference_row") else {
        return;
    };
    let table = MetricsTable::from_path(&dir.join("metrics.csv")).unwrap();
    let (groups, tags) = load_reference(&dir.join("ref/tidy_results.csv"));
    let mut stats: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut unsupported = BTreeSet::new();
    for ((tag, set, wid, alg), rows) in &groups {
        let Ok(algorithm) = alg.parse::<Algorithm>() else {
            unsupported.insert(alg.clone());
            continue;
        };
        let (bw, maxbw) = &tags[tag];
        let model = ModelConfig {
            bw_model: BwModel::from_name(bw).expect("bw model"),
            max_bw_mbps: Some(*maxbw),
        };
        let idx: Vec<usize> = rows
            .iter()
            .map(|r| table.app_index(&r.app).unwrap())
            .collect();
        let mix = Mix::from_table(&table, &idx);
        // PBBCache's LFOC and LFOC+ are the `pbbcache` preset's.
        let opts = RunOptions {
            model,
            lfoc_preset: cachepart::policy::LfocPreset::Pbbcache,
            ..Default::default()
        };
        let label = format!("{tag}/{set}/{wid}/{alg}");
        let out = match cachepart::run_one(wid, &mix, algorithm, &opts) {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{label}: error {e}"));
                stats.entry(alg.clone()).or_default().1 += rows.len();
                continue;
            }
        };
        let ev = &out.evaluation;
        let m = &ev.metrics;
        let mut problems = Vec::new();
        let close = |a: f64, b: f64| (a - b).abs() <= 6e-6 * b.abs().max(1.0);
        if round3(m.stp) != rows[0].stp {
            problems.push(format!("STP {} vs {}", round3(m.stp), rows[0].stp));
        }
        if !close(m.antt, rows[0].antt) {
            problems.push(format!("ANTT {:.6} vs {}", m.antt, rows[0].antt));
        }
        if !close(m.unfairness, rows[0].unfairness) {
            problems.push(format!(
                "unfairness {:.6} vs {}",
                m.unfairness, rows[0].unfairness
            ));
        }
        let ways: Vec<u32> = ev.apps.iter().map(|a| a.cluster_ways).collect();
        let ref_ways: Vec<u32> = rows.iter().map(|r| r.ways).collect();
        if ways != ref_ways {
            problems.push(format!("ways {ways:?} vs {ref_ways:?}"));
        }
        let ours_p = partition(&ev.apps.iter().map(|a| a.cluster).collect::<Vec<_>>());
        let ref_p = partition(&rows.iter().map(|r| r.cluster.clone()).collect::<Vec<_>>());
        if ours_p != ref_p {
            problems.push(format!("clusters {ours_p:?} vs {ref_p:?}"));
        }
        for (a, r) in ev.apps.iter().zip(rows) {
            if !close(a.slowdown, r.slowdown) || !close(a.slowdown_nobw, r.slowdown_nobw) {
                problems.push(format!(
                    "{} slowdown {:.6}/{:.6} vs {}/{}",
                    r.app, a.slowdown, a.slowdown_nobw, r.slowdown, r.slowdown_nobw
                ));
            }
        }
        let e = stats.entry(alg.clone()).or_default();
        if problems.is_empty() {
            e.0 += rows.len();
        } else {
            e.1 += rows.len();
            failures.push(format!("{label}: {}", problems.join("; ")));
        }
    }
    eprintln!("algorithm        rows matched / rows");
    for (alg, (ok, bad)) in &stats {
        eprintln!("{alg:<16} {ok:>5} / {}", ok + bad);
    }
    for u in &unsupported {
        eprintln!("not compared (algorithm not implemented): {u}");
    }
    for f in &failures {
        eprintln!("MISMATCH {f}");
    }
    assert!(
        failures.is_empty(),
        "{} workload/algorithm groups differ from PBBCache",
        failures.len()
    );
    assert!(
        unsupported.is_empty(),
        "reference algorithms without a counterpart: {unsupported:?}"
    );
    let compared: usize = stats.values().map(|(ok, bad)| ok + bad).sum();
    let total: usize = groups.values().map(Vec::len).sum();
    assert_eq!(compared, total, "every reference row is compared");
    assert_eq!(total, 1734, "ref/tidy_results.csv has 1734 rows");
}
