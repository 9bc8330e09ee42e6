//! PBBCache's reference results (`data/pbbcache/ref/tidy_results.csv`),
//! loaded once for the parity tests of the policy, profile and facade
//! crates, and the comparisons of cluster labels they share.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One reference row: one app of one workload under one algorithm.
#[derive(Clone, Debug, PartialEq)]
pub struct RefRow {
    /// Position of the app in its workload.
    pub bench_id: usize,
    /// App name.
    pub app: String,
    /// Cluster label as printed (a number, or a name).
    pub cluster: String,
    /// Ways of the app's cluster.
    pub ways: u32,
    /// Slowdown without the bandwidth model.
    pub slowdown_nobw: f64,
    /// Slowdown.
    pub slowdown: f64,
    /// The workload's STP.
    pub stp: f64,
    /// The workload's ANTT.
    pub antt: f64,
    /// The workload's unfairness.
    pub unfairness: f64,
}

/// A group's key: tag, set, workload id, algorithm.
pub type Key = (String, String, String, String);
/// Reference rows grouped by [`Key`], each group in `bench_id` order.
pub type Groups = BTreeMap<Key, Vec<RefRow>>;
/// Tag -> (bandwidth model, maximum bandwidth).
pub type Tags = BTreeMap<String, (String, f64)>;

/// Loads `tidy_results.csv` at `path`: the rows grouped and sorted, and the
/// bandwidth setting of every tag. Panics on a malformed file (a test
/// harness: the reference data is fixed).
pub fn load_reference(path: &Path) -> (Groups, Tags) {
    let mut rdr =
        csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let hdr = rdr.headers().expect("tidy_results.csv header").clone();
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
    let mut groups: Groups = BTreeMap::new();
    let mut tags = BTreeMap::new();
    for r in rdr.records() {
        let r = r.expect("tidy_results.csv row");
        let f = |i: usize| {
            r[i].parse::<f64>()
                .unwrap_or_else(|e| panic!("{}: {e}", &r[i]))
        };
        tags.insert(r[tag].to_string(), (r[bw].to_string(), f(maxbw)));
        groups
            .entry((r[tag].into(), r[set].into(), r[wid].into(), r[alg].into()))
            .or_default()
            .push(RefRow {
                bench_id: r[bid].parse().expect("bench_id"),
                app: r[app].into(),
                cluster: r[cl].into(),
                ways: r[ways].parse().expect("ways"),
                slowdown_nobw: f(sdnb),
                slowdown: f(sd),
                stp: f(stp),
                antt: f(antt),
                unfairness: f(unf),
            });
    }
    for rows in groups.values_mut() {
        rows.sort_by_key(|r| r.bench_id);
    }
    (groups, tags)
}

/// Canonical cluster labels: each label replaced by the order of its first
/// appearance (compares cluster numbering, list order included).
pub fn canon<T: PartialEq + Clone>(labels: &[T]) -> Vec<usize> {
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

/// The partition of `0..labels.len()` by label (compares cluster
/// membership up to renumbering).
pub fn partition<T: Ord + Clone>(labels: &[T]) -> BTreeSet<BTreeSet<usize>> {
    let mut m: BTreeMap<T, BTreeSet<usize>> = BTreeMap::new();
    for (i, l) in labels.iter().enumerate() {
        m.entry(l.clone()).or_default().insert(i);
    }
    m.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_compare_by_first_appearance_or_membership() {
        assert_eq!(canon(&["b", "a", "b", "c"]), vec![0, 1, 0, 2]);
        assert_ne!(canon(&[2, 1]), canon(&[1, 1]));
        let p = partition(&["x", "y", "x"]);
        assert_eq!(p, partition(&[5, 3, 5]));
        assert_ne!(p, partition(&[5, 5, 5]));
    }
}
