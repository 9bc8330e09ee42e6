//! Reproduces the way counts and cluster memberships of every `kpart`,
//! `lfoc`, `lfoc+` and `yu-petrov` row of PBBCache's reference runs
//! (`../shared/data/pbbcache/ref/tidy_results.csv`, tags `simple_b35000`
//! and `stalls_b35000`; `lfoc+` has rows for mix W1 of `simple_b35000`
//! only), running the policies on the table-driven machine. The cluster
//! numbering (list order) of KPart, LFOC and LFOC+ must match too.
//! Fails when `../shared` is absent, unless
//! `CACHEPART_ALLOW_MISSING_SHARED=1` (see `cachepart-testkit`).

use cachepart_policy::{Kpart, Lfoc, LfocPlus, Policy, YuPetrov};
use cachepart_profile::{BwModel, MetricsTable, Mix, ModelConfig, ProfileMachine};
use cachepart_testkit::pbbcache::{canon, load_reference};
use cachepart_units::Kind as _;
use std::collections::BTreeMap;

#[test]
fn reference_rows_match() {
    let Some(dir) = cachepart_testkit::pbbcache_dir("reference_rows_match") else {
        return;
    };
    let table = MetricsTable::from_path(&dir.join("metrics.csv")).expect("metrics.csv parses");
    let (all, _) = load_reference(&dir.join("ref/tidy_results.csv"));
    // In (tag, algorithm, set, workload) order; rows in `bench_id` order.
    let mut groups: BTreeMap<(String, String, String, String), _> = BTreeMap::new();
    for ((tag, set, wl, alg), rows) in all {
        if !["kpart", "lfoc", "lfoc+", "yu-petrov"].contains(&alg.as_str()) {
            continue;
        }
        if !["simple_b35000", "stalls_b35000"].contains(&tag.as_str()) {
            continue;
        }
        groups.insert((tag, alg, set, wl), rows);
    }
    let mut rows_total: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut same_ids: BTreeMap<String, usize> = BTreeMap::new();
    let mut groups_total: BTreeMap<String, usize> = BTreeMap::new();
    for ((tag, alg, set, wl), rows) in groups {
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
            "lfoc" => Box::new(Lfoc::preset(cachepart_policy::LfocPreset::Pbbcache)),
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
