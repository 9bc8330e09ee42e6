//! The scenario file as written: [`ScenarioFile`] and its apps
//! ([`AppEntry`]), kebab-case keys, unknown keys rejected, and the reader
//! of TOML or JSON configuration files that every file of a scenario goes
//! through.

use std::path::{Path, PathBuf};

use cachepart_machine::Duty;
use cachepart_policy::Thresholds;
use cachepart_sim::memory::{AllocatorKind, HugePages, PagingCosts, TableColors, WalkMode};
use cachepart_sim::system::IdleQuantum;
use cachepart_trace::synth::SynthConfig;
use cachepart_units::GroupMode;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::registry::method::RunMethod;
use crate::run::coloring::ColoringFile;
use crate::spec::key_set::KeySet;

fn default_interval() -> u64 {
    10_000_000
}
fn yes() -> bool {
    true
}

/// A scenario file as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ScenarioFile {
    /// A name for reports (default: the file's stem).
    #[serde(default)]
    pub name: Option<String>,
    /// A built-in platform name or the path of a platform file.
    pub platform: String,
    /// The frame allocator, in place of the platform's
    /// (`memory.allocator`): `buddy`, `tam` or `coloris`; the latter two
    /// are needed for page colors.
    #[serde(default)]
    pub allocator: Option<AllocatorKind>,
    /// Costs of paging and recoloring, in place of the platform's
    /// (`memory.costs`): `page-copy-us`, `page-out-us`, `page-in-us`
    /// (keys left out keep their defaults, not the platform's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paging_costs: Option<PagingCosts>,
    /// Hardware prefetchers: `"off"` (the default: no prefetcher, as
    /// before prefetchers existed), `"platform"` (the platform's hardware
    /// default word) or an MSR 0x1A4 word (`"0x4"`: a set bit turns one
    /// off). See docs/simulator-prefetchers.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefetchers: Option<String>,
    /// SWAP's bit swap (the platform's `[swap]` section): `"off"` (the
    /// default: allocators hand out physical frames), `"platform"` (the
    /// section as declared), `"static"` or `"configurable"` (its bits,
    /// with that mode). See docs/simulator-swap.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap: Option<String>,
    /// Memory in bytes, in place of the platform's (`memory.size-bytes`):
    /// a power of two, checked when the machine is built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// `false`: a freshly booted machine, free memory unfragmented, in
    /// place of the platform's `memory.aging` (a machine that has been up
    /// a while); `true` or absent: the platform's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aging: Option<bool>,
    /// How page walks are modelled, in place of the platform's
    /// (`tlb.walk`): `"flat"` (a fixed cost, no memory traffic) or
    /// `"hierarchy"` (page-table loads through the caches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_walks: Option<WalkMode>,
    /// Which colors page tables take, in place of the platform's
    /// (`memory.page-table-colors`): `"any"` (consecutive pages of every
    /// color) or `"owner"` (the colors of the app they belong to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_table_colors: Option<TableColors>,
    /// Seed of the simulation: added to the platform's memory-aging seed
    /// (so it changes which frames, and colors, pages get) and mixed into
    /// random replacement.
    #[serde(default)]
    pub seed: u64,
    /// Length of a sampling interval, in cycles of simulated time.
    #[serde(default = "default_interval")]
    pub interval_cycles: u64,
    /// Instructions each app runs (`None`: each runs its trace once).
    #[serde(default)]
    pub instructions: Option<u64>,
    /// Whether an app whose trace ends before its instruction limit
    /// replays it (the multiprogram methodology).
    #[serde(default = "yes")]
    pub restart: bool,
    /// Whether to run every app alone too, for slowdowns and mix metrics.
    #[serde(default = "yes")]
    pub alone: bool,
    /// The run methodology (section `[method]`; see [`crate::registry::method`]):
    /// to completion (default), LFOC's restarts, or COLORIS's fixed time.
    #[serde(default, skip_serializing_if = "RunMethod::is_default")]
    pub method: RunMethod,
    /// A policy that decides the CAT masks from the apps' alone curves
    /// (`stock`, `ucp`, `kpart`, `lfoc`, `dunn`, ...).
    #[serde(default)]
    pub policy: Option<String>,
    /// The plan of the `user` policy (`MASK=APPS;...`).
    #[serde(default)]
    pub plan: Option<String>,
    /// LFOC's parameter set for `policy = "lfoc"` or `"lfoc+"`: `paper`
    /// (the default) or `pbbcache`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lfoc_preset: Option<cachepart_policy::LfocPreset>,
    /// Online LFOC's periods for `policy = "lfoc-online"` (section
    /// `[lfoc-online]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lfoc_online: Option<crate::run::online::LfocOnlineFile>,
    /// KPart-Dynaway's window and period for `policy = "kpart-dynaway"`
    /// (section `[kpart-dynaway]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kpart_dynaway: Option<crate::run::online::KpartDynawayFile>,
    /// Dynamic Dunn's period for `policy = "dunn-dynamic"` (section
    /// `[dunn-dynamic]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dunn_dynamic: Option<crate::run::online::DunnDynamicFile>,
    /// UCP's period and monitor sampling for `policy = "ucp-online"`
    /// (section `[ucp-online]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ucp_online: Option<crate::run::online::UcpOnlineFile>,
    /// Online throttling's target, window, lowest duty cycle and hybrid
    /// mode for `policy = "throttle-online"` (section `[throttle-online]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle_online: Option<crate::run::online_throttle::ThrottleOnlineFile>,
    /// A page-color policy (section `[coloring]`).
    #[serde(default)]
    pub coloring: Option<ColoringFile>,
    /// The apps.
    #[serde(rename = "app")]
    pub apps: Vec<AppEntry>,
}

/// One app of a scenario file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct AppEntry {
    /// Its name in reports.
    pub name: String,
    /// A binary trace (`.cpt`).
    #[serde(default)]
    pub trace: Option<PathBuf>,
    /// A generator configuration file (TOML or JSON).
    #[serde(default)]
    pub generator: Option<PathBuf>,
    /// A generator configuration, inline.
    #[serde(default)]
    pub synth: Option<SynthConfig>,
    /// Its core (default: apps are spread round robin, app `i` on core
    /// `i mod cores`).
    #[serde(default)]
    pub core: Option<u32>,
    /// Cycles per instruction when every access hits the L1.
    #[serde(default)]
    pub base_cpi: Option<f64>,
    /// Memory-level parallelism.
    #[serde(default)]
    pub mlp: Option<f64>,
    /// CAT way mask, hex (`0x00f`); not allowed with a scenario policy.
    #[serde(default)]
    pub ways: Option<String>,
    /// resctrl mode of the app's CAT group: `shareable` (default) or
    /// `exclusive` (no other app's mask may overlap it).
    #[serde(default)]
    pub mask_mode: GroupMode,
    /// Page colors (`0-15,32`); needs a color-aware allocator
    /// (`memory.allocator = "tam"` or `"coloris"` in the platform).
    #[serde(default)]
    pub colors: Option<String>,
    /// This app's instruction limit (overrides the scenario's).
    #[serde(default)]
    pub instructions: Option<u64>,
    /// Superpages: `never` (default) or `always`. A colored app gets
    /// superpages only under the platform's swap (`swap` key); without it
    /// its pages fall back to 4 KiB.
    #[serde(default)]
    pub huge_pages: Option<HugePages>,
    /// This app's Low/High miss-rate thresholds (QoS) for
    /// `coloris-dynamic`.
    #[serde(default)]
    pub thresholds: Option<Thresholds>,
    /// Its core's duty cycle while it runs (`"5/8"`; default full speed);
    /// needs the platform's `[clock-modulation]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duty: Option<Duty>,
    /// Its core's prefetchers while it runs: `"off"`, `"platform"` or an
    /// MSR 0x1A4 word (`"0x5"`); needs the scenario's `prefetchers` on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefetchers: Option<String>,
    /// Scheduling-quantum adjustment: an idle process shares the app's
    /// core, the app running `run-cycles` and the idle process then
    /// `idle-cycles` every round (`{ run-cycles = 1_000_000, idle-cycles =
    /// 300_000 }`); the app must be alone on its core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum: Option<IdleQuantum>,
}

/// Reads a configuration file: JSON when the name ends in `.json`, TOML
/// otherwise, with `sets` applied to its keys first; errors name the file.
pub(crate) fn read_config<T: serde::de::DeserializeOwned>(
    path: &Path,
    sets: &[KeySet],
) -> Result<T, Error> {
    let text = cachepart_units::input::read_text(path).map_err(|e| Error::io(path, e))?;
    let json = path.extension().is_some_and(|e| e == "json");
    if !sets.is_empty() {
        return crate::spec::key_set::read_with(&text, json, sets)
            .map_err(|e| Error::config_file(path, e));
    }
    if json {
        serde_json::from_str(&text).map_err(|e| {
            Error::config_file(
                path,
                cachepart_units::input::plain_type_names(&e.to_string()),
            )
        })
    } else {
        toml::from_str(&text).map_err(|e| {
            Error::config_file(
                path,
                cachepart_units::input::plain_type_names(&e.to_string()),
            )
        })
    }
}
