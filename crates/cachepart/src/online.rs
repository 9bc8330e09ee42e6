//! Online controllers a scenario can run as its policy (`policy =
//! "lfoc-online"`), and the scenario section that sets their parameters.

use serde::{Deserialize, Serialize};

use cachepart_policy::lfoc_online::with_lfoc;
use cachepart_policy::{
    DunnDynamic, DynawayParams, KpartDynaway, Lfoc, LfocOnline, LfocOnlineParams, UcpOnline,
};

use crate::error::Error;
use crate::scenario::Scenario;

/// The `[lfoc-online]` section of a scenario: online LFOC's periods, scaled
/// to the run (the paper's defaults are for runs of minutes: 10 M
/// instructions per sampling window, 100 M per monitoring period, 500 ms
/// between repartitionings).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct LfocOnlineFile {
    /// Sampling windows of warm-up (default 3).
    #[serde(default)]
    pub warmup_windows: Option<u32>,
    /// Instructions per sampling-partition size (default 10 M).
    #[serde(default)]
    pub window_instructions: Option<f64>,
    /// Instructions per monitoring period (default 100 M).
    #[serde(default)]
    pub period_instructions: Option<f64>,
    /// Monitoring periods the class-change heuristics average (default 5).
    #[serde(default)]
    pub history: Option<usize>,
    /// Cycles between repartitionings (default: 500 ms of the platform's
    /// clock).
    #[serde(default)]
    pub repartition_cycles: Option<u64>,
}

/// Online LFOC for `scenario`: the preset's clustering, the file's
/// periods, LLC way size and clock from the platform.
pub fn lfoc_online_for(scenario: &Scenario, lfoc: Lfoc) -> Result<LfocOnline, Error> {
    let file = &scenario.file;
    let f = file.lfoc_online.clone().unwrap_or_default();
    let llc = &scenario.platform.llc;
    let d: LfocOnlineParams = with_lfoc(lfoc);
    let params = LfocOnlineParams {
        warmup_windows: f.warmup_windows.unwrap_or(d.warmup_windows),
        window_instructions: f.window_instructions.unwrap_or(d.window_instructions),
        period_instructions: f.period_instructions.unwrap_or(d.period_instructions),
        history: f.history.unwrap_or(d.history),
        repartition_cycles: f
            .repartition_cycles
            .unwrap_or((scenario.platform.timing.freq_ghz * 0.5e9) as u64),
        way_bytes: (llc.ways > 0).then(|| llc.size_bytes as f64 / f64::from(llc.ways)),
        ..d
    };
    let whence = scenario
        .path
        .as_ref()
        .map_or(scenario.name.clone(), |p| p.display().to_string());
    LfocOnline::new(params, scenario.apps.len(), Some(file.interval_cycles))
        .map_err(|e| Error::Input(format!("{whence}: lfoc-online: {e}")))
}

/// The `[kpart-dynaway]` section of a scenario.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct KpartDynawayFile {
    /// Instructions per profiled partition size (default 10 M).
    #[serde(default)]
    pub window_instructions: Option<f64>,
    /// Cycles from one profiling round to the next (default: 500 ms of the
    /// platform's clock, LFOC's period; the KPart paper's is not among
    /// this project's sources).
    #[serde(default)]
    pub reprofile_cycles: Option<u64>,
}

/// KPart-Dynaway for `scenario`.
pub fn kpart_dynaway_for(scenario: &Scenario) -> Result<KpartDynaway, Error> {
    let f = scenario.file.kpart_dynaway.clone().unwrap_or_default();
    let d = DynawayParams::default();
    let params = DynawayParams {
        window_instructions: f.window_instructions.unwrap_or(d.window_instructions),
        reprofile_cycles: f
            .reprofile_cycles
            .unwrap_or((scenario.platform.timing.freq_ghz * 0.5e9) as u64),
    };
    let whence = scenario
        .path
        .as_ref()
        .map_or(scenario.name.clone(), |p| p.display().to_string());
    KpartDynaway::new(params, scenario.apps.len())
        .map_err(|e| Error::Input(format!("{whence}: kpart-dynaway: {e}")))
}

/// The `[dunn-dynamic]` section of a scenario.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct DunnDynamicFile {
    /// Cycles between re-plans (default: 500 ms of the platform's clock,
    /// as the LFOC paper ran Dunn).
    #[serde(default)]
    pub period_cycles: Option<u64>,
    /// Largest number of clusters tried (default 8).
    #[serde(default)]
    pub max_clusters: Option<usize>,
}

/// Dynamic Dunn for `scenario`.
pub fn dunn_dynamic_for(scenario: &Scenario) -> Result<DunnDynamic, Error> {
    let f = scenario.file.dunn_dynamic.clone().unwrap_or_default();
    let period = f
        .period_cycles
        .unwrap_or((scenario.platform.timing.freq_ghz * 0.5e9) as u64);
    let whence = scenario
        .path
        .as_ref()
        .map_or(scenario.name.clone(), |p| p.display().to_string());
    DunnDynamic::new(scenario.apps.len(), period, f.max_clusters.unwrap_or(8))
        .map_err(|e| Error::Input(format!("{whence}: dunn-dynamic: {e}")))
}

/// The `[ucp-online]` section of a scenario.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct UcpOnlineFile {
    /// Cycles between re-partitions (default 5 M, UCP's).
    #[serde(default)]
    pub period_cycles: Option<u64>,
    /// LLC sets each utility monitor samples (default 32, UCP's dynamic
    /// set sampling; 0 monitors every set).
    #[serde(default)]
    pub sampled_sets: Option<u32>,
}

/// UCP on utility monitors for `scenario`, and the monitors' set sample.
pub fn ucp_online_for(scenario: &Scenario) -> Result<(UcpOnline, u32), Error> {
    let f = scenario.file.ucp_online.clone().unwrap_or_default();
    let whence = scenario
        .path
        .as_ref()
        .map_or(scenario.name.clone(), |p| p.display().to_string());
    let c = UcpOnline::new(scenario.apps.len(), f.period_cycles.unwrap_or(5_000_000))
        .map_err(|e| Error::Input(format!("{whence}: ucp-online: {e}")))?;
    Ok((c, f.sampled_sets.unwrap_or(32)))
}
