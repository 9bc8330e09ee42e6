//! A mix prepared for the model: each app's columns the model reads.

use crate::bandwidth::BwInput;
use crate::error::ProfileError;
use crate::table::MetricsTable;
use cachepart_machine::share::{interpolate, interpolate_with_floor};
use cachepart_machine::AppCurves;

/// The columns of one app that the sharing and bandwidth models read.
#[derive(Clone, Debug, PartialEq)]
pub struct MixApp {
    /// Program name.
    pub name: String,
    /// Policy view (IPC, MPKI, MPKC, bandwidth, slowdown, stalls).
    pub curves: AppCurves,
    /// `stalls_total`, if the table has it.
    pub stalls_total: Option<Vec<f64>>,
    /// Memory-bound stalls for the `stalls` bandwidth model:
    /// `stalls_l3_miss` (or `stalls_ldm_pending`), if the table has it.
    pub stalls_mem: Option<Vec<f64>>,
    /// `stalls_store_buf`, or zeros.
    pub stalls_store_buf: Option<Vec<f64>>,
}

impl MixApp {
    /// The bandwidth model's inputs at `f` ways: the bandwidth demand as
    /// every column is read ([`interpolate`]), the stall columns with a
    /// floor of 0 below one way, so that an app with no stall cycles has
    /// none at any size (a missing column reads 0).
    pub fn bw_input(&self, f: f64) -> BwInput {
        let stalls = |v: &Option<Vec<f64>>| {
            v.as_ref()
                .map(|v| interpolate_with_floor(v, f, 0.0))
                .unwrap_or(0.0)
        };
        BwInput {
            demand: interpolate(&self.curves.bandwidth_mbps, f),
            stalls_total: stalls(&self.stalls_total),
            stalls_mem: stalls(&self.stalls_mem) + stalls(&self.stalls_store_buf),
        }
    }
}

/// The apps of one workload with the data the model needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Mix {
    /// Way counts `W` of the tables (the platform's ways).
    pub ways: usize,
    /// Apps in workload order.
    pub apps: Vec<MixApp>,
}

impl Mix {
    /// Takes the apps at `indices` of `table`.
    pub fn from_table(table: &MetricsTable, indices: &[usize]) -> Mix {
        let get = |a: usize, n: &str| {
            table
                .column_index(n)
                .map(|c| table.apps()[a].values(c).to_vec())
        };
        let apps = indices
            .iter()
            .map(|&a| MixApp {
                name: table.apps()[a].name.clone(),
                curves: table.curves(a),
                stalls_total: get(a, "stalls_total"),
                stalls_mem: get(a, "stalls_l3_miss").or_else(|| get(a, "stalls_ldm_pending")),
                stalls_store_buf: get(a, "stalls_store_buf"),
            })
            .collect();
        Mix {
            ways: table.ways(),
            apps,
        }
    }

    /// A mix from policy curves only (no stall columns).
    pub fn from_curves(curves: Vec<AppCurves>) -> Result<Mix, ProfileError> {
        let ways = curves.first().map(|c| c.ways()).unwrap_or(0);
        if let Some(c) = curves.iter().find(|c| c.ways() != ways) {
            return Err(ProfileError::Invalid(format!(
                "app {} has curves over {} ways, the others over {ways}",
                c.name,
                c.ways()
            )));
        }
        Ok(Mix {
            ways,
            apps: curves
                .into_iter()
                .map(|curves| MixApp {
                    name: curves.name.clone(),
                    curves,
                    stalls_total: None,
                    stalls_mem: None,
                    stalls_store_buf: None,
                })
                .collect(),
        })
    }

    /// Number of apps.
    pub fn len(&self) -> usize {
        self.apps.len()
    }

    /// True if the mix has no app.
    pub fn is_empty(&self) -> bool {
        self.apps.is_empty()
    }

    /// Program names.
    pub fn names(&self) -> Vec<String> {
        self.apps.iter().map(|a| a.name.clone()).collect()
    }
}
