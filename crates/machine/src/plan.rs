//! Plans: which apps share which ways, per-app page colors and per-app
//! execution throttling.

use cachepart_units::{IdSet, MaskError, MaskRules, WayMask};
use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

use crate::throttle::AppThrottle;

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

/// One app's page colors in a [`Plan`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppColors {
    /// The app's index in the mix.
    pub app: usize,
    /// Its colors.
    pub colors: IdSet,
}

/// A partitioning plan: clusters of apps, each with a way mask, and
/// per-app page colors.
///
/// Strict partitioning is the case of one app per cluster; no partitioning is
/// one cluster holding every app and every way. Masks may overlap (Dunn).
/// A plan without clusters but with colors or throttle settings leaves
/// the way masks as they are (a page-coloring or throttling plan).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The clusters, in the order the policy produced them.
    pub clusters: Vec<Cluster>,
    /// How the machine should estimate the split of shared ways when it has
    /// to estimate it (the table-driven model); real machines ignore it.
    #[serde(default)]
    pub share_model: ShareModel,
    /// Per-app page colors, for the apps whose colors the plan sets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub colors: Vec<AppColors>,
    /// Per-app execution throttling (duty cycle, prefetcher word), for
    /// the apps whose throttling the plan sets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throttle: Vec<AppThrottle>,
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
    /// A color set names an app that is not in the mix.
    #[error("colors name app {app}, but the mix has {n_apps} apps (0..{n_apps})")]
    UnknownColorApp {
        /// The app index given.
        app: usize,
        /// Apps in the mix.
        n_apps: usize,
    },
    /// An app is given colors twice.
    #[error("app {app} is given colors twice")]
    DuplicateColors {
        /// The app index.
        app: usize,
    },
    /// A throttle setting names an app that is not in the mix.
    #[error("throttle names app {app}, but the mix has {n_apps} apps (0..{n_apps})")]
    UnknownThrottleApp {
        /// The app index given.
        app: usize,
        /// Apps in the mix.
        n_apps: usize,
    },
    /// An app is throttled twice.
    #[error("app {app} is given throttle settings twice")]
    DuplicateThrottle {
        /// The app index.
        app: usize,
    },
    /// An app is given no color at all.
    #[error("app {app} is given an empty color set")]
    EmptyColors {
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
            colors: Vec::new(),
            throttle: Vec::new(),
        }
    }

    /// A page-coloring plan: app `i` gets `colors[i]`; way masks are left
    /// as they are.
    pub fn from_colors(colors: impl IntoIterator<Item = IdSet>) -> Plan {
        Plan {
            colors: colors
                .into_iter()
                .enumerate()
                .map(|(app, colors)| AppColors { app, colors })
                .collect(),
            ..Plan::default()
        }
    }

    /// The colors the plan gives `app`, if it gives any.
    pub fn colors_of(&self, app: usize) -> Option<&IdSet> {
        self.colors.iter().find(|c| c.app == app).map(|c| &c.colors)
    }

    /// Every app shares every way.
    pub fn shared_all(n_apps: usize, ways: u32) -> Plan {
        Plan::from_clusters([((0..n_apps).collect(), ways)])
    }

    /// Checks that every app of an `n_apps` mix is in exactly one non-empty
    /// cluster and that every mask follows `rules` (a plan with colors and
    /// no cluster leaves masks alone), and that color sets name each app
    /// of the mix at most once and are not empty.
    pub fn validate(&self, n_apps: usize, rules: &MaskRules) -> Result<(), PlanError> {
        let mut colored = vec![false; n_apps];
        for c in &self.colors {
            if c.app >= n_apps {
                return Err(PlanError::UnknownColorApp { app: c.app, n_apps });
            }
            if std::mem::replace(&mut colored[c.app], true) {
                return Err(PlanError::DuplicateColors { app: c.app });
            }
            if c.colors.is_empty() {
                return Err(PlanError::EmptyColors { app: c.app });
            }
        }
        let mut throttled = vec![false; n_apps];
        for t in &self.throttle {
            if t.app >= n_apps {
                return Err(PlanError::UnknownThrottleApp { app: t.app, n_apps });
            }
            if std::mem::replace(&mut throttled[t.app], true) {
                return Err(PlanError::DuplicateThrottle { app: t.app });
            }
        }
        if self.clusters.is_empty() && !(self.colors.is_empty() && self.throttle.is_empty()) {
            return Ok(());
        }
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

    #[test]
    fn color_plans() {
        let rules = MaskRules::intel(11, 1);
        let p = Plan::from_colors(["0-3".parse().unwrap(), "4-7".parse().unwrap()]);
        assert!(p.validate(2, &rules).is_ok());
        assert_eq!(p.colors_of(1).map(ToString::to_string), Some("4-7".into()));
        assert_eq!(
            p.validate(1, &rules),
            Err(PlanError::UnknownColorApp { app: 1, n_apps: 1 })
        );
        let mut twice = p.clone();
        twice.colors.push(AppColors {
            app: 0,
            colors: "8".parse().unwrap(),
        });
        assert_eq!(
            twice.validate(2, &rules),
            Err(PlanError::DuplicateColors { app: 0 })
        );
        let empty = Plan::from_colors([IdSet::new()]);
        assert_eq!(
            empty.validate(1, &rules),
            Err(PlanError::EmptyColors { app: 0 })
        );
        // Colors with clusters: the clusters are checked as usual.
        let mut both = Plan::from_way_counts(&[2]);
        both.colors = p.colors.clone();
        assert_eq!(
            both.validate(2, &rules),
            Err(PlanError::MissingApp { app: 1 })
        );
        // Serialised without a colors field when it has none.
        let json = serde_json::to_string(&Plan::from_way_counts(&[2])).unwrap();
        assert!(!json.contains("colors"), "{json}");
    }
}
