//! Plans: which apps share which ways.

use cachepart_units::{MaskError, MaskRules, WayMask};
use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// A group of apps that share one way mask (one CAT class of service).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    /// The ways the cluster may fill.
    pub mask: WayMask,
    /// Indices of the apps in the mix, in the order the policy listed them.
    pub apps: Vec<usize>,
}

/// Which per-app curve drives the estimate of how sharers split their ways.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShareModel {
    /// Misses per kilo-cycle (the default; Whirlpool-C in PBBCache).
    #[default]
    Llcmpkc,
    /// Misses per kilo-instruction (Whirlpool in PBBCache).
    Llcmpki,
}

/// A partitioning plan: clusters of apps, each with a way mask.
///
/// Strict partitioning is the case of one app per cluster; no partitioning is
/// one cluster holding every app and every way. Masks may overlap (Dunn).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The clusters, in the order the policy produced them.
    pub clusters: Vec<Cluster>,
    /// How the machine should estimate the split of shared ways when it has
    /// to estimate it (the table-driven model); real machines ignore it.
    #[serde(default)]
    pub share_model: ShareModel,
}

/// Why a plan is not valid for a mix on a platform.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum PlanError {
    /// A cluster's mask breaks the platform's rules.
    #[error("cluster {cluster}: {source}")]
    Mask {
        /// Index of the cluster.
        cluster: usize,
        /// What is wrong with the mask.
        source: MaskError,
    },
    /// A cluster has no app.
    #[error("cluster {cluster} has no app")]
    EmptyCluster {
        /// Index of the cluster.
        cluster: usize,
    },
    /// An app index is not in the mix.
    #[error("cluster {cluster} names app {app}, but the mix has {n_apps} apps (0..{n_apps})")]
    UnknownApp {
        /// Index of the cluster.
        cluster: usize,
        /// The app index given.
        app: usize,
        /// Apps in the mix.
        n_apps: usize,
    },
    /// An app is in two clusters.
    #[error("app {app} is in clusters {first} and {second}; each app belongs to one cluster")]
    DuplicateApp {
        /// The app index.
        app: usize,
        /// First cluster naming it.
        first: usize,
        /// Second cluster naming it.
        second: usize,
    },
    /// An app is in no cluster.
    #[error("app {app} is in no cluster")]
    MissingApp {
        /// The app index.
        app: usize,
    },
    /// More clusters than ways: some cluster cannot get a way.
    #[error("{clusters} clusters need at least {clusters} ways, the platform has {ways}")]
    TooManyClusters {
        /// Clusters asked for.
        clusters: usize,
        /// Ways available.
        ways: u32,
    },
}

impl Plan {
    /// Strict partitioning from way counts: app `i` gets `ways[i]` contiguous
    /// ways, laid out from way 0 upward in app order.
    pub fn from_way_counts(ways: &[u32]) -> Plan {
        Plan::from_clusters(ways.iter().enumerate().map(|(i, &w)| (vec![i], w)))
    }

    /// Clusters from (apps, way count) pairs, laid out from way 0 upward in
    /// the order given.
    pub fn from_clusters<I: IntoIterator<Item = (Vec<usize>, u32)>>(clusters: I) -> Plan {
        let mut next = 0;
        let clusters = clusters
            .into_iter()
            .map(|(apps, w)| {
                let c = Cluster {
                    mask: WayMask::contiguous(next, w),
                    apps,
                };
                next += w;
                c
            })
            .collect();
        Plan {
            clusters,
            share_model: ShareModel::default(),
        }
    }

    /// Every app shares every way.
    pub fn shared_all(n_apps: usize, ways: u32) -> Plan {
        Plan::from_clusters([((0..n_apps).collect(), ways)])
    }

    /// Checks that every app of an `n_apps` mix is in exactly one non-empty
    /// cluster and that every mask follows `rules`.
    pub fn validate(&self, n_apps: usize, rules: &MaskRules) -> Result<(), PlanError> {
        let mut owner: Vec<Option<usize>> = vec![None; n_apps];
        for (ci, c) in self.clusters.iter().enumerate() {
            if c.apps.is_empty() {
                return Err(PlanError::EmptyCluster { cluster: ci });
            }
            rules.check(c.mask).map_err(|source| PlanError::Mask {
                cluster: ci,
                source,
            })?;
            for &a in &c.apps {
                if a >= n_apps {
                    return Err(PlanError::UnknownApp {
                        cluster: ci,
                        app: a,
                        n_apps,
                    });
                }
                if let Some(first) = owner[a] {
                    return Err(PlanError::DuplicateApp {
                        app: a,
                        first,
                        second: ci,
                    });
                }
                owner[a] = Some(ci);
            }
        }
        if let Some(app) = owner.iter().position(Option::is_none) {
            return Err(PlanError::MissingApp { app });
        }
        Ok(())
    }

    /// For each app, the index of its cluster (`None` if in none).
    pub fn cluster_of(&self, n_apps: usize) -> Vec<Option<usize>> {
        let mut out = vec![None; n_apps];
        for (ci, c) in self.clusters.iter().enumerate() {
            for &a in &c.apps {
                if a < n_apps {
                    out[a] = Some(ci);
                }
            }
        }
        out
    }

    /// True when no two clusters share a way.
    pub fn is_disjoint(&self) -> bool {
        let mut seen = 0u64;
        for c in &self.clusters {
            if c.mask.0 & seen != 0 {
                return false;
            }
            seen |= c.mask.0;
        }
        true
    }
}

impl fmt::Display for Plan {
    /// `MASK=APPS` per cluster, `;`-separated (the syntax the `user` policy reads).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.clusters.iter().enumerate() {
            if i > 0 {
                f.write_str(";")?;
            }
            let apps: cachepart_units::IdSet = c.apps.iter().map(|&a| a as u32).collect();
            write!(f, "{}={}", c.mask.to_hex(), apps)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_and_validation() {
        let p = Plan::from_way_counts(&[2, 3, 6]);
        assert_eq!(p.clusters[0].mask, WayMask(0x3));
        assert_eq!(p.clusters[1].mask, WayMask(0x1c));
        assert_eq!(p.clusters[2].mask, WayMask(0x7e0));
        let rules = MaskRules::intel(11, 1);
        assert!(p.validate(3, &rules).is_ok());
        assert!(p.is_disjoint());
        assert_eq!(p.to_string(), "0x3=0;0x1c=1;0x7e0=2");
        assert_eq!(p.validate(4, &rules), Err(PlanError::MissingApp { app: 3 }));
        assert!(matches!(
            p.validate(2, &rules),
            Err(PlanError::UnknownApp { app: 2, .. })
        ));
        let bad = Plan::from_way_counts(&[6, 6]);
        assert!(matches!(
            bad.validate(2, &rules),
            Err(PlanError::Mask { cluster: 1, .. })
        ));
        let mut dup = Plan::shared_all(2, 11);
        dup.clusters.push(Cluster {
            mask: WayMask(1),
            apps: vec![1],
        });
        assert!(matches!(
            dup.validate(2, &rules),
            Err(PlanError::DuplicateApp { app: 1, .. })
        ));
    }
}
