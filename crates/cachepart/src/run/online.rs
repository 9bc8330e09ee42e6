//! Online controllers a scenario or a Linux mix can run as its policy
//! (`policy = "lfoc-online"`, `cachepart run --policy lfoc-online`), and
//! the file sections that set their parameters (`[lfoc-online]`,
//! `[kpart-dynaway]`, `[dunn-dynamic]`, `[ucp-online]`, the same in both
//! files).
//!
//! One constructor per controller takes an [`OnlineSetup`]: the app count,
//! the clock, the interval and the LLC's way size. A scenario's setup comes
//! from its platform ([`OnlineSetup::of_scenario`]); a Linux run's from the
//! machine's platform, its clock and the interval.

use serde::{Deserialize, Serialize};

use cachepart_policy::lfoc_online::with_lfoc;
use cachepart_policy::{
    DunnDynamic, DynawayParams, KpartDynaway, Lfoc, LfocOnline, LfocOnlineParams, UcpOnline,
};

use crate::error::Error;
use crate::spec::scenario::Scenario;

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
    /// Resample a streaming app after this many monitoring periods even
    /// when its miss rate stays high (default: never, as in the paper).
    #[serde(default)]
    pub streaming_resample_periods: Option<u32>,
}

/// The online controllers' sections of one file (a mix file, a daemon
/// configuration): `None` where the file has no such section.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sections<'a> {
    /// `[lfoc-online]`.
    pub lfoc_online: Option<&'a LfocOnlineFile>,
    /// `[kpart-dynaway]`.
    pub kpart_dynaway: Option<&'a KpartDynawayFile>,
    /// `[dunn-dynamic]`.
    pub dunn_dynamic: Option<&'a DunnDynamicFile>,
    /// `[ucp-online]`.
    pub ucp_online: Option<&'a UcpOnlineFile>,
    /// `[throttle-online]`.
    pub throttle_online: Option<&'a crate::run::online_throttle::ThrottleOnlineFile>,
}

/// What every online controller is built from, whatever the machine.
#[derive(Clone, Debug, PartialEq)]
pub struct OnlineSetup {
    /// Apps in the mix.
    pub apps: usize,
    /// The clock, GHz: periods given in time become cycles with it.
    pub freq_ghz: f64,
    /// The machine's interval, cycles.
    pub interval_cycles: u64,
    /// Bytes per LLC way, when the machine knows them.
    pub way_bytes: Option<f64>,
    /// The file the parameters come from, for errors.
    pub whence: String,
}

impl OnlineSetup {
    /// The setup of `scenario`: its platform's clock and LLC, its
    /// interval.
    pub fn of_scenario(scenario: &Scenario) -> OnlineSetup {
        let llc = &scenario.platform.llc;
        OnlineSetup {
            apps: scenario.apps.len(),
            freq_ghz: scenario.platform.timing.freq_ghz,
            interval_cycles: scenario.file.interval_cycles,
            way_bytes: (llc.ways > 0).then(|| llc.size_bytes as f64 / f64::from(llc.ways)),
            whence: scenario
                .path
                .as_ref()
                .map_or(scenario.name.clone(), |p| p.display().to_string()),
        }
    }

    /// 500 ms of the clock, LFOC's period (and the default of the others).
    fn half_second(&self) -> u64 {
        (self.freq_ghz * 0.5e9) as u64
    }

    pub(crate) fn err(&self, policy: &str, e: impl std::fmt::Display) -> Error {
        Error::config(&self.whence, policy, e)
    }
}

/// Online LFOC: the preset's clustering, the section's periods (`None`:
/// the paper's defaults), LLC way size and clock from the setup.
pub fn lfoc_online(
    section: Option<&LfocOnlineFile>,
    lfoc: Lfoc,
    setup: &OnlineSetup,
) -> Result<LfocOnline, Error> {
    let f = section.cloned().unwrap_or_default();
    let d: LfocOnlineParams = with_lfoc(lfoc);
    let params = LfocOnlineParams {
        warmup_windows: f.warmup_windows.unwrap_or(d.warmup_windows),
        window_instructions: f.window_instructions.unwrap_or(d.window_instructions),
        period_instructions: f.period_instructions.unwrap_or(d.period_instructions),
        history: f.history.unwrap_or(d.history),
        repartition_cycles: f.repartition_cycles.unwrap_or(setup.half_second()),
        way_bytes: setup.way_bytes,
        streaming_resample_periods: f.streaming_resample_periods,
        ..d
    };
    LfocOnline::new(params, setup.apps, Some(setup.interval_cycles))
        .map_err(|e| setup.err("lfoc-online", e))
}

/// Online LFOC for `scenario` ([`lfoc_online`] on its setup).
pub fn lfoc_online_for(scenario: &Scenario, lfoc: Lfoc) -> Result<LfocOnline, Error> {
    lfoc_online(
        scenario.file.lfoc_online.as_ref(),
        lfoc,
        &OnlineSetup::of_scenario(scenario),
    )
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

/// KPart-Dynaway from its section (`None`: the defaults).
pub fn kpart_dynaway(
    section: Option<&KpartDynawayFile>,
    setup: &OnlineSetup,
) -> Result<KpartDynaway, Error> {
    let f = section.cloned().unwrap_or_default();
    let d = DynawayParams::default();
    let params = DynawayParams {
        window_instructions: f.window_instructions.unwrap_or(d.window_instructions),
        reprofile_cycles: f.reprofile_cycles.unwrap_or(setup.half_second()),
    };
    KpartDynaway::new(params, setup.apps).map_err(|e| setup.err("kpart-dynaway", e))
}

/// KPart-Dynaway for `scenario`.
pub fn kpart_dynaway_for(scenario: &Scenario) -> Result<KpartDynaway, Error> {
    kpart_dynaway(
        scenario.file.kpart_dynaway.as_ref(),
        &OnlineSetup::of_scenario(scenario),
    )
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

/// Dynamic Dunn from its section (`None`: the defaults).
pub fn dunn_dynamic(
    section: Option<&DunnDynamicFile>,
    setup: &OnlineSetup,
) -> Result<DunnDynamic, Error> {
    let f = section.cloned().unwrap_or_default();
    let period = f.period_cycles.unwrap_or(setup.half_second());
    DunnDynamic::new(setup.apps, period, f.max_clusters.unwrap_or(8))
        .map_err(|e| setup.err("dunn-dynamic", e))
}

/// Dynamic Dunn for `scenario`.
pub fn dunn_dynamic_for(scenario: &Scenario) -> Result<DunnDynamic, Error> {
    dunn_dynamic(
        scenario.file.dunn_dynamic.as_ref(),
        &OnlineSetup::of_scenario(scenario),
    )
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

/// UCP on utility monitors from its section (`None`: the defaults), and
/// the monitors' set sample.
pub fn ucp_online(
    section: Option<&UcpOnlineFile>,
    setup: &OnlineSetup,
) -> Result<(UcpOnline, u32), Error> {
    let f = section.cloned().unwrap_or_default();
    let c = UcpOnline::new(setup.apps, f.period_cycles.unwrap_or(5_000_000))
        .map_err(|e| setup.err("ucp-online", e))?;
    Ok((c, f.sampled_sets.unwrap_or(32)))
}

/// UCP on utility monitors for `scenario`, and the monitors' set sample.
pub fn ucp_online_for(scenario: &Scenario) -> Result<(UcpOnline, u32), Error> {
    ucp_online(
        scenario.file.ucp_online.as_ref(),
        &OnlineSetup::of_scenario(scenario),
    )
}
