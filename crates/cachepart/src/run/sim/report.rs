//! What a simulated scenario returns: the [`SimReport`], one
//! [`AppResult`] per app and, when prefetchers ran, one [`AppPrefetch`]
//! per app.

use cachepart_machine::Plan;
use cachepart_profile::MixMetrics;
use cachepart_sim::system::AppTotals;
use serde::Serialize;

use crate::output::samples::SampleRow;
use crate::registry::method::RunMethod;
use crate::run::coloring::ColoringReport;

/// One app's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AppResult {
    /// Its core.
    pub core: u32,
    /// Its CAT mask (hex), `all` when unrestricted.
    pub ways: String,
    /// Its page colors at the end (range syntax), `all` when unrestricted.
    pub colors: String,
    /// Its whole-run counters in the mix.
    pub totals: AppTotals,
    /// Its IPC alone with the whole LLC, when alone runs were made.
    pub ipc_alone: Option<f64>,
    /// IPC alone / IPC in the mix; under the restart method, the
    /// geometric mean of its completed runs' times over its time alone.
    pub slowdown: Option<f64>,
    /// Under the restart method: the length of each of its completed runs
    /// in the mix, in cycles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<Vec<u64>>,
    /// Under the restart method: the cycles of one run alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_cycles_alone: Option<f64>,
}

/// The result of a simulated scenario.
#[derive(Clone, Debug, Serialize)]
pub struct SimReport {
    /// The scenario's name.
    pub scenario: String,
    /// The platform's name.
    pub platform: String,
    /// The policy that chose the masks, if any.
    pub policy: Option<String>,
    /// The run methodology, unless the default (to completion).
    #[serde(skip_serializing_if = "RunMethod::is_default")]
    pub method: RunMethod,
    /// The plan it chose.
    pub plan: Option<Plan>,
    /// Per-app results, in scenario order.
    pub apps: Vec<AppResult>,
    /// Mix metrics, when alone runs were made.
    pub metrics: Option<MixMetrics>,
    /// Intervals run.
    pub intervals: u64,
    /// Simulated cycles of the whole run.
    pub simulated_cycles: u64,
    /// The page-color policy's decisions, if one ran.
    pub coloring: Option<ColoringReport>,
    /// Online LFOC's decisions (warm-ups, sampling steps, classes, class
    /// changes, re-plans), if it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lfoc_online: Option<Vec<cachepart_policy::LfocDecision>>,
    /// KPart-Dynaway's profiling steps and plans, if it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kpart_dynaway: Option<Vec<cachepart_policy::kpart_dynaway::DynawayDecision>>,
    /// Dynamic Dunn's re-plans, if it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dunn_dynamic: Option<Vec<cachepart_policy::dunn_dynamic::DunnDecision>>,
    /// Hardware prefetch counts per app (its core's), when the scenario
    /// turned prefetchers on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefetch: Option<Vec<AppPrefetch>>,
    /// UCP's re-partitions on its utility monitors, if it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ucp_online: Option<Vec<cachepart_policy::UcpDecision>>,
    /// Online throttling's steps (duty cycles up and down, prefetcher
    /// trials and their outcome), if it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttle_online: Option<Vec<cachepart_policy::ThrottleDecision>>,
    /// Every sample, interval-major.
    #[serde(skip)]
    pub samples: Vec<SampleRow>,
}

/// One app's hardware prefetch counts (those of its core).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AppPrefetch {
    /// The app.
    pub app: String,
    /// Its core.
    pub core: u32,
    /// The core's counts.
    pub counts: cachepart_sim::prefetch::PrefetchStats,
}
