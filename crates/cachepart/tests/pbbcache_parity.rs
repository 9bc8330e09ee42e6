//! Parity with PBBCache: every row of `ref/tidy_results.csv` (per-app ways,
//! cluster membership up to renumbering, slowdowns, STP, ANTT, unfairness).

mod common;

use cachepart::profile::{round3, BwModel, MetricsTable, Mix, ModelConfig};
use cachepart::{Algorithm, RunOptions};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone)]
struct RefRow {
    app: String,
    cluster: String,
    ways: u32,
    slowdown_nobw: f64,
    slowdown: f64,
    stp: f64,
    antt: f64,
    unfairness: f64,
}

type Key = (String, String, String, String); // tag, set, workload, algorithm

/// Reference rows grouped by (tag, set, workload, algorithm), in app order.
type Groups = BTreeMap<Key, Vec<RefRow>>;
/// Tag -> (bandwidth model, maximum bandwidth).
type Tags = BTreeMap<String, (String, f64)>;

fn load_ref(path: &std::path::Path) -> (Groups, Tags) {
    let mut rdr = csv::Reader::from_path(path).expect("tidy_results.csv");
    let hdr = rdr.headers().unwrap().clone();
    let col = |n: &str| {
        hdr.iter()
            .position(|h| h == n)
            .unwrap_or_else(|| panic!("column {n}"))
    };
    let (tag, bw, maxbw, set, wid, alg, bid, app, cl, ways, sdnb, sd, stp, antt, unf) = (
        col("tag"),
        col("bw_model"),
        col("max_bw"),
        col("set"),
        col("workload_id"),
        col("algorithm"),
        col("bench_id"),
        col("app"),
        col("cluster"),
        col("ways"),
        col("slowdown_nobw"),
        col("slowdown"),
        col("STP"),
        col("ANTT"),
        col("unfairness"),
    );
    let mut groups: BTreeMap<Key, Vec<(u32, RefRow)>> = BTreeMap::new();
    let mut tags = BTreeMap::new();
    for r in rdr.records() {
        let r = r.unwrap();
        let f = |i: usize| r[i].parse::<f64>().unwrap();
        tags.insert(r[tag].to_string(), (r[bw].to_string(), f(maxbw)));
        groups
            .entry((r[tag].into(), r[set].into(), r[wid].into(), r[alg].into()))
            .or_default()
            .push((
                r[bid].parse().unwrap(),
                RefRow {
                    app: r[app].into(),
                    cluster: r[cl].into(),
                    ways: r[ways].parse().unwrap(),
                    slowdown_nobw: f(sdnb),
                    slowdown: f(sd),
                    stp: f(stp),
                    antt: f(antt),
                    unfairness: f(unf),
                },
            ));
    }
    let groups = groups
        .into_iter()
        .map(|(k, mut v)| {
            v.sort_by_key(|(b, _)| *b);
            (k, v.into_iter().map(|(_, r)| r).collect())
        })
        .collect();
    (groups, tags)
}

fn partition<T: Ord + Clone>(labels: &[T]) -> BTreeSet<BTreeSet<usize>> {
    let mut m: BTreeMap<T, BTreeSet<usize>> = BTreeMap::new();
    for (i, l) in labels.iter().enumerate() {
        m.entry(l.clone()).or_default().insert(i);
    }
    m.into_values().collect()
}

#[test]
fn every_reference_row() {
    let Some(dir) = common::pbbcache_dir("every_reference_row") else {
        return;
    };
    let table = MetricsTable::from_path(&dir.join("metrics.csv")).unwrap();
    let (groups, tags) = load_ref(&dir.join("ref/tidy_results.csv"));
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
        let opts = RunOptions {
            model,
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
