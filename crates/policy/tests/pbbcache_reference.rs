//! Reproduces the way counts and cluster memberships of every `kpart`,
//! `lfoc`, `lfoc+` and `yu-petrov` row of PBBCache's reference runs
//! (`../shared/data/pbbcache/ref/tidy_results.csv`, tags `simple_b35000`
//! and `stalls_b35000`; `lfoc+` has rows for mix W1 of `simple_b35000`
//! only), running the policies on the table-driven machine. The cluster
//! numbering (list order) of KPart, LFOC and LFOC+ must match too.
//! Skipped, with a message, when `../shared` is absent.

use cachepart_policy::{Kpart, Lfoc, LfocPlus, Policy, YuPetrov};
use cachepart_profile::{BwModel, MetricsTable, Mix, ModelConfig, ProfileMachine};
use std::collections::BTreeMap;
use std::path::Path;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/pbbcache");

/// One reference row: the fields compared.
struct Row {
    bench_id: usize,
    app: String,
    cluster: String,
    ways: u32,
}

/// Canonical cluster labels: first appearance order.
fn canon<T: PartialEq + Clone>(labels: &[T]) -> Vec<usize> {
    let mut seen: Vec<T> = Vec::new();
    labels
        .iter()
        .map(|l| match seen.iter().position(|s| s == l) {
            Some(i) => i,
            None => {
                seen.push(l.clone());
                seen.len() - 1
            }
        })
        .collect()
}

#[test]
fn reference_rows_match() {
    let tidy = Path::new(DATA).join("ref/tidy_results.csv");
    let metrics = Path::new(DATA).join("metrics.csv");
    let (Ok(text), true) = (std::fs::read_to_string(&tidy), metrics.exists()) else {
        eprintln!(
            "SKIPPED reference_rows_match: {} or {} not found (../shared absent)",
            tidy.display(),
            metrics.display()
        );
        return;
    };
    let table = MetricsTable::from_path(&metrics).expect("metrics.csv parses");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let (c_tag, c_set, c_wl, c_alg) =
        (col("tag"), col("set"), col("workload_id"), col("algorithm"));
    let (c_id, c_app, c_cl, c_ways) = (col("bench_id"), col("app"), col("cluster"), col("ways"));
    let mut groups: BTreeMap<(String, String, String, String), Vec<Row>> = BTreeMap::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let f: Vec<&str> = line.split(',').collect();
        let alg = f[c_alg];
        if !["kpart", "lfoc", "lfoc+", "yu-petrov"].contains(&alg) {
            continue;
        }
        if !["simple_b35000", "stalls_b35000"].contains(&f[c_tag]) {
            continue;
        }
        groups
            .entry((f[c_tag].into(), alg.into(), f[c_set].into(), f[c_wl].into()))
            .or_default()
            .push(Row {
                bench_id: f[c_id].parse().unwrap(),
                app: f[c_app].into(),
                cluster: f[c_cl].into(),
                ways: f[c_ways].parse().unwrap(),
            });
    }
    let mut rows_total: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut same_ids: BTreeMap<String, usize> = BTreeMap::new();
    let mut groups_total: BTreeMap<String, usize> = BTreeMap::new();
    for ((tag, alg, set, wl), mut rows) in groups {
        rows.sort_by_key(|r| r.bench_id);
        let indices: Vec<usize> = rows
            .iter()
            .map(|r| table.app_index(&r.app).expect("app in metrics.csv"))
            .collect();
        let bw_model = if tag.starts_with("stalls") {
            "stalls"
        } else {
            "simple"
        };
        let config = ModelConfig {
            bw_model: BwModel::from_name(bw_model).unwrap(),
            max_bw_mbps: Some(35000.0),
        };
        let mut machine = ProfileMachine::new(Mix::from_table(&table, &indices), config);
        let mut policy: Box<dyn Policy> = match alg.as_str() {
            "kpart" => Box::new(Kpart),
            "lfoc" => Box::new(Lfoc::default()),
            "lfoc+" => Box::new(LfocPlus::default()),
            _ => Box::new(YuPetrov),
        };
        let plan = policy.decide(&mut machine).expect("policy decides");
        let n = rows.len();
        let owner: Vec<usize> = plan.cluster_of(n).into_iter().map(|c| c.unwrap()).collect();
        let ways: Vec<u32> = owner
            .iter()
            .map(|&c| plan.clusters[c].mask.0.count_ones())
            .collect();
        let want_members = canon(&rows.iter().map(|r| r.cluster.clone()).collect::<Vec<_>>());
        let got_members = canon(&owner);
        // KPart, LFOC and LFOC+ number clusters 0.. in the order they list
        // them, as the plan does.
        if alg != "yu-petrov" {
            let ids: Vec<String> = owner.iter().map(|c| c.to_string()).collect();
            let want: Vec<String> = rows.iter().map(|r| r.cluster.clone()).collect();
            *same_ids.entry(alg.clone()).or_default() += usize::from(ids == want);
            if ids != want {
                failures.push(format!(
                    "{tag} {alg} {set} {wl}: cluster ids {ids:?} want {want:?}"
                ));
            }
            *groups_total.entry(alg.clone()).or_default() += 1;
        }
        let entry = rows_total.entry(alg.clone()).or_default();
        for (i, r) in rows.iter().enumerate() {
            entry.1 += 1;
            if ways[i] == r.ways && want_members == got_members {
                entry.0 += 1;
            }
        }
        let want_ways: Vec<u32> = rows.iter().map(|r| r.ways).collect();
        if ways != want_ways || want_members != got_members {
            failures.push(format!(
                "{tag} {alg} {set} {wl}: ways {ways:?} want {want_ways:?}, \
                 clusters {got_members:?} want {want_members:?} (plan {plan})"
            ));
        }
    }
    for (alg, (ok, total)) in &rows_total {
        eprintln!("{alg}: {ok}/{total} rows match (ways and cluster membership)");
    }
    for (alg, total) in &groups_total {
        eprintln!(
            "{alg}: {}/{total} workloads with the same cluster numbering and order",
            same_ids.get(alg).copied().unwrap_or(0)
        );
    }
    assert!(!rows_total.is_empty(), "no reference rows found");
    assert_eq!(
        rows_total.get("lfoc+").map(|r| r.1),
        Some(6),
        "the six lfoc+ rows (W1) are checked"
    );
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
}
