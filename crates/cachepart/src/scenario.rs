//! Scenario files for the simulator: a platform, apps (trace files or
//! generators) with their cores, timing and CAT masks, the interval
//! length, instruction limits and an optional policy. TOML (or JSON when
//! the name ends in `.json`), kebab-case keys, unknown keys rejected.
//!
//! ```toml
//! platform = "xeon-e5506"        # built-in name, or a platform file path
//! seed = 1
//! interval-cycles = 5_000_000
//! instructions = 20_000_000      # per app (each restarts its trace until then)
//! policy = "lfoc"                # optional: decide CAT masks from alone curves
//!
//! [[app]]
//! name = "omnetpp-like"
//! generator = "../traces/cache-sensitive-zipf.toml"   # or trace = "x.cpt", or [app.synth]
//! core = 0
//! base-cpi = 0.7
//! mlp = 1.5
//! ways = "0x00f"                 # CAT mask, unless a policy decides
//! ```
//!
//! A `[method]` section picks the run methodology (see [`crate::method`]):
//! `kind = "to-completion"` (the default), `kind = "restart"` with
//! `completions = 3` (LFOC's: traces restart until the slowest app has
//! completed N runs) or `kind = "fixed-time"` with `cycles = N` (COLORIS's:
//! every app co-runs for N cycles).
//!
//! `swap = "static"` (or `"configurable"`, `"platform"`, `"off"`, the
//! default) turns on the platform's `[swap]` section: SWAP's bit swap, so
//! colored apps with `huge-pages = "always"` get 2 MiB superpages of their
//! colors (docs/simulator-swap.md).
//!
//! `memory-bytes` and `aging = false` replace the platform's memory size
//! and its aged (fragmented) initial state: a freshly booted machine, as
//! a paper's simulator boots one; `page-walks = "flat"` or `"hierarchy"`
//! replaces its walk model (an ablation switch).
//!
//! A `[coloring]` section runs a page-color policy (`coloris-static`,
//! `coloris-dynamic`, `tam-static`; see [`crate::coloring`]); apps may then
//! carry `thresholds = { low = .., high = .. }` and no `colors`. Without
//! an `allocator`, the policy's allocator is used (`coloris`, or `tam` for
//! `tam-static`).
//!
//! Relative paths are taken from the scenario file's directory. Every
//! check happens at load time, before anything runs, and each error names
//! the file and the field (`app[1] (mcf).core`) and what was expected.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cachepart_machine::Duty;
use cachepart_sim::memory::{
    AllocatorKind, ColorLayout, HugePages, PagingCosts, SwapMode, WalkMode,
};
use cachepart_sim::prefetch::Word;
use cachepart_sim::system::{
    check_throttle, AppSpec, AppTiming, CptFile, IdleQuantum, PlatformConfig, TraceSource,
};
use cachepart_trace::synth::SynthConfig;
use cachepart_units::{check_exclusive, GroupMode, IdSet, WayMask};
use serde::{Deserialize, Serialize};

use crate::algorithm::Algorithm;
use crate::coloring::{Coloring, ColoringFile};
use crate::error::Error;
use crate::key_set::KeySet;
use crate::method::RunMethod;
use crate::platforms;
use cachepart_policy::Thresholds;

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
    /// The run methodology (section `[method]`; see [`crate::method`]):
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
    pub lfoc_online: Option<crate::online::LfocOnlineFile>,
    /// KPart-Dynaway's window and period for `policy = "kpart-dynaway"`
    /// (section `[kpart-dynaway]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kpart_dynaway: Option<crate::online::KpartDynawayFile>,
    /// Dynamic Dunn's period for `policy = "dunn-dynamic"` (section
    /// `[dunn-dynamic]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dunn_dynamic: Option<crate::online::DunnDynamicFile>,
    /// UCP's period and monitor sampling for `policy = "ucp-online"`
    /// (section `[ucp-online]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ucp_online: Option<crate::online::UcpOnlineFile>,
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

/// What the command line (or Python) may change in a scenario file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    /// Keys set as if the file had them (`--set KEY=VALUE`), applied
    /// before the others.
    pub set: Vec<KeySet>,
    /// Another seed.
    pub seed: Option<u64>,
    /// A policy in place of the file's (masks come from it).
    pub policy: Option<String>,
    /// Skip the alone runs.
    pub no_alone: bool,
}

/// A loaded, checked scenario, ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Its name.
    pub name: String,
    /// The file it came from, if any.
    pub path: Option<PathBuf>,
    /// The platform.
    pub platform: PlatformConfig,
    /// The apps, in file order.
    pub apps: Vec<AppSpec>,
    /// Each app's color set, if it has one.
    pub colors: Vec<Option<IdSet>>,
    /// The file's settings.
    pub file: ScenarioFile,
    /// The policy, if any.
    pub policy: Option<Algorithm>,
    /// The page-color policy, if any.
    pub coloring: Option<Coloring>,
}

fn read_config<T: serde::de::DeserializeOwned>(path: &Path, sets: &[KeySet]) -> Result<T, Error> {
    let text = cachepart_units::input::read_text(path)
        .map_err(|e| Error::Input(format!("{}: {e}", path.display())))?;
    let json = path.extension().is_some_and(|e| e == "json");
    if !sets.is_empty() {
        return crate::key_set::read_with(&text, json, sets)
            .map_err(|e| Error::Input(format!("{}: {e}", path.display())));
    }
    if json {
        serde_json::from_str(&text).map_err(|e| Error::Input(format!("{}: {e}", path.display())))
    } else {
        toml::from_str(&text).map_err(|e| Error::Input(format!("{}: {e}", path.display())))
    }
}

/// Turns the platform's swap on or off as a scenario's `swap` key asks.
fn apply_swap(key: &str, platform: &mut PlatformConfig) -> Result<(), String> {
    let mode = match key {
        "off" => {
            if let Some(s) = &mut platform.swap {
                s.enabled = false;
            }
            return Ok(());
        }
        "platform" => None,
        "static" => Some(SwapMode::Static),
        "configurable" => Some(SwapMode::Configurable),
        other => {
            return Err(format!(
                "{other:?}: expected \"off\", \"platform\", \"static\" or \"configurable\""
            ))
        }
    };
    let name = platform.name.clone();
    let Some(s) = &mut platform.swap else {
        return Err(format!(
            "platform {name} declares no swap (its [swap] section)"
        ));
    };
    s.enabled = true;
    if let Some(m) = mode {
        s.mode = m;
    }
    platform.swap_map().map_err(|e| e.to_string())?;
    Ok(())
}

/// The word a scenario's `prefetchers` key asks for (`None`: off).
pub(crate) fn prefetch_word(key: &str, platform: &PlatformConfig) -> Result<Option<u64>, String> {
    let word = match key {
        "off" => return Ok(None),
        "platform" => platform.prefetchers.default_word,
        w => {
            let hex = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X"));
            let parsed = match hex {
                Some(h) => u64::from_str_radix(h, 16),
                None => w.parse::<u64>(),
            };
            parsed.map_err(|_| {
                format!(
                    "{w:?}: expected \"off\", \"platform\" or an MSR 0x1A4 word such as \"0x4\""
                )
            })?
        }
    };
    cachepart_sim::prefetch::Word::new(word)?;
    if platform.prefetchers.is_absent() {
        return Err(format!(
            "platform {} declares no prefetchers (its [prefetchers] section)",
            platform.name
        ));
    }
    Ok(Some(word))
}

impl Scenario {
    /// Reads and checks a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, Error> {
        Scenario::load_setting(path, &[])
    }

    /// [`Scenario::load`] with `sets` applied to the file's keys first.
    fn load_setting(path: &Path, sets: &[KeySet]) -> Result<Scenario, Error> {
        let file: ScenarioFile = read_config(path, sets)?;
        let name = file.name.clone().unwrap_or_else(|| {
            if cachepart_units::input::is_stdin(path) {
                return "stdin".into();
            }
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "scenario".into())
        });
        let base = path.parent().map(Path::to_path_buf);
        Scenario::from_file(file, name, base.as_deref(), Some(path))
    }

    /// Reads and checks a scenario file with command-line overrides: keys
    /// set (`--set`), another seed, a policy (which replaces every app's
    /// `ways`), or no alone runs.
    pub fn load_with(path: &Path, overrides: &Overrides) -> Result<Scenario, Error> {
        let s = Scenario::load_setting(path, &overrides.set)?;
        if overrides.seed.is_none() && overrides.policy.is_none() && !overrides.no_alone {
            return Ok(s);
        }
        let mut file = s.file;
        if let Some(seed) = overrides.seed {
            file.seed = seed;
        }
        if let Some(p) = &overrides.policy {
            file.policy = Some(p.clone());
            for app in &mut file.apps {
                app.ways = None;
            }
        }
        if overrides.no_alone {
            file.alone = false;
        }
        Scenario::from_file(file, s.name, path.parent(), Some(path))
    }

    /// Checks a parsed scenario; relative paths are taken from `base`.
    pub fn from_file(
        file: ScenarioFile,
        name: String,
        base: Option<&Path>,
        path: Option<&Path>,
    ) -> Result<Scenario, Error> {
        let whence = path
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| name.clone());
        let err = |field: String, what: String| Error::Input(format!("{whence}: {field}: {what}"));
        let mut platform = platforms::resolve(&file.platform, base)
            .map_err(|e| err("platform".into(), e.to_string()))?;
        if let Some(k) = file.allocator {
            platform.memory.allocator = k;
        }
        if let Some(c) = file.paging_costs {
            c.check()
                .map_err(|e| err("paging-costs".into(), e.to_string()))?;
            platform.memory.costs = c;
        }
        if let Some(p) = &file.prefetchers {
            platform.prefetchers.run_word =
                prefetch_word(p, &platform).map_err(|e| err("prefetchers".into(), e))?;
        }
        if let Some(b) = file.memory_bytes {
            if !b.is_power_of_two() || b < 1 << 21 {
                return Err(err(
                    "memory-bytes".into(),
                    format!("{b} is not a power of two of at least 2 MiB"),
                ));
            }
            platform.memory.size_bytes = b;
        }
        if file.aging == Some(false) {
            platform.memory.aging = None;
        }
        if let Some(w) = file.page_walks {
            platform.tlb.walk = w;
        }
        if let Some(k) = &file.swap {
            apply_swap(k, &mut platform).map_err(|e| err("swap".into(), e))?;
        }
        if let Some(c) = &file.coloring {
            match file.allocator {
                Some(AllocatorKind::Buddy) => {
                    return Err(err(
                        "allocator".into(),
                        "a [coloring] policy needs a color-aware allocator (tam or coloris)".into(),
                    ))
                }
                Some(_) => {}
                None if platform.memory.allocator == AllocatorKind::Buddy => {
                    // The policy's own allocator.
                    platform.memory.allocator = match c.policy.as_str() {
                        "tam-static" => AllocatorKind::Tam,
                        _ => AllocatorKind::Coloris,
                    };
                }
                None => {}
            }
        }
        // The scenario's seed also ages memory differently, so another seed
        // gives other physical pages (and colors).
        if let Some(a) = &mut platform.memory.aging {
            a.seed = a.seed.wrapping_add(file.seed);
        }
        if file.apps.is_empty() {
            return Err(err(
                "app".into(),
                "a scenario needs at least one [[app]]".into(),
            ));
        }
        if file.interval_cycles == 0 {
            return Err(err(
                "interval-cycles".into(),
                "must be a positive number of cycles".into(),
            ));
        }
        if file.instructions == Some(0) {
            return Err(err(
                "instructions".into(),
                "must be positive (or left out)".into(),
            ));
        }
        file.method
            .check(file.interval_cycles)
            .map_err(|(f, why)| err(f, why))?;
        if file.method.replays() {
            let replay = "the method replays every trace to its end (an app's run is its trace): leave out instruction limits";
            if file.instructions.is_some() {
                return Err(err("instructions".into(), replay.into()));
            }
            if let Some(i) = file.apps.iter().position(|a| a.instructions.is_some()) {
                return Err(err(
                    format!("app[{i}] ({}).instructions", file.apps[i].name),
                    replay.into(),
                ));
            }
            if !file.restart {
                return Err(err(
                    "restart".into(),
                    "the method replays every trace; restart = false contradicts it".into(),
                ));
            }
        }
        let policy = match &file.policy {
            None => None,
            Some(p) => {
                let a: Algorithm = p
                    .parse()
                    .map_err(|e: Error| err("policy".into(), e.to_string()))?;
                if a.is_optimal() {
                    return Err(err(
                        "policy".into(),
                        format!("{a} is an exact solver of the table-driven model; the simulator runs policies (stock, ucp, kpart, lfoc, dunn, ...)"),
                    ));
                }
                if a == Algorithm::User && file.plan.is_none() {
                    return Err(err(
                        "plan".into(),
                        "the user policy needs plan = \"MASK=APPS;...\"".into(),
                    ));
                }
                Some(a)
            }
        };
        if file.lfoc_preset.is_some()
            && !matches!(
                policy,
                Some(Algorithm::Lfoc | Algorithm::LfocPlus | Algorithm::LfocOnline)
            )
        {
            return Err(err(
                "lfoc-preset".into(),
                "is for policy = \"lfoc\", \"lfoc+\" or \"lfoc-online\"; this scenario's policy is another".into(),
            ));
        }
        if file.ucp_online.is_some() && policy != Some(Algorithm::UcpOnline) {
            return Err(err(
                "ucp-online".into(),
                "is for policy = \"ucp-online\"; this scenario's policy is another".into(),
            ));
        }
        if file.dunn_dynamic.is_some() && policy != Some(Algorithm::DunnDynamic) {
            return Err(err(
                "dunn-dynamic".into(),
                "is for policy = \"dunn-dynamic\"; this scenario's policy is another".into(),
            ));
        }
        if file.kpart_dynaway.is_some() && policy != Some(Algorithm::KpartDynaway) {
            return Err(err(
                "kpart-dynaway".into(),
                "is for policy = \"kpart-dynaway\"; this scenario's policy is another".into(),
            ));
        }
        if file.lfoc_online.is_some() && policy != Some(Algorithm::LfocOnline) {
            return Err(err(
                "lfoc-online".into(),
                "is for policy = \"lfoc-online\"; this scenario's policy is another".into(),
            ));
        }
        let layout = ColorLayout::new(
            &platform
                .llc
                .geometry()
                .map_err(|e| err("platform.llc".into(), e.to_string()))?,
            4096,
        )
        .map_err(|e| err("platform.llc".into(), e.to_string()))?;
        let rules = platform.mask_rules();
        let mut apps = Vec::with_capacity(file.apps.len());
        let mut colors = Vec::with_capacity(file.apps.len());
        let mut names = std::collections::BTreeSet::new();
        for (i, a) in file.apps.iter().enumerate() {
            let field = |f: &str| format!("app[{i}] ({}).{f}", a.name);
            if !names.insert(a.name.clone()) {
                return Err(err(
                    format!("app[{i}].name"),
                    format!(
                        "{:?} is used by an earlier app; names must be unique",
                        a.name
                    ),
                ));
            }
            let join = |p: &Path| match base {
                Some(b) if p.is_relative() => b.join(p),
                _ => p.to_path_buf(),
            };
            let source: Arc<dyn TraceSource> = match (&a.trace, &a.generator, &a.synth) {
                (Some(t), None, None) => {
                    let p = join(t);
                    if !p.is_file() {
                        return Err(err(field("trace"), format!("{}: no such file", p.display())));
                    }
                    // header, trailer and index checked before anything runs
                    let file = cachepart_trace::TraceFile::open(&p)
                        .map_err(|e| err(field("trace"), format!("{}: {e}", p.display())))?;
                    if file.records() == 0 {
                        return Err(err(
                            field("trace"),
                            format!("{}: the trace has no records", p.display()),
                        ));
                    }
                    Arc::new(CptFile(p))
                }
                (None, Some(g), None) => {
                    let p = join(g);
                    let cfg: SynthConfig = read_config(&p, &[]).map_err(|e| err(field("generator"), e.to_string()))?;
                    cfg.generator().map_err(|e| err(field("generator"), format!("{}: {e}", p.display())))?;
                    Arc::new(cfg)
                }
                (None, None, Some(s)) => {
                    s.generator().map_err(|e| err(field("synth"), e.to_string()))?;
                    Arc::new(s.clone())
                }
                _ => {
                    return Err(err(
                        field("trace"),
                        "give exactly one of trace (a .cpt file), generator (a generator file) or [app.synth]".into(),
                    ))
                }
            };
            let core = a.core.unwrap_or(i as u32 % platform.cores);
            if core >= platform.cores {
                return Err(err(
                    field("core"),
                    format!("{core}: the platform has cores 0..{} ", platform.cores - 1),
                ));
            }
            let d = AppTiming::default();
            let timing = AppTiming {
                base_cpi: a.base_cpi.unwrap_or(d.base_cpi),
                mlp: a.mlp.unwrap_or(d.mlp),
            };
            timing
                .check(&a.name)
                .map_err(|e| err(field("timing"), e.to_string()))?;
            let llc_mask = match &a.ways {
                None => None,
                Some(_) if policy.is_some() => {
                    return Err(err(
                        field("ways"),
                        format!(
                        "the scenario's policy ({}) decides the masks; remove ways or the policy",
                        file.policy.as_deref().unwrap_or_default()
                    ),
                    ))
                }
                Some(text) => {
                    let m: WayMask = text
                        .parse()
                        .map_err(|e| err(field("ways"), format!("{e}")))?;
                    rules
                        .check(m)
                        .map_err(|e| err(field("ways"), e.to_string()))?;
                    Some(m)
                }
            };
            let color_set = match &a.colors {
                None => None,
                Some(_) if file.coloring.is_some() => {
                    return Err(err(
                        field("colors"),
                        "the [coloring] policy decides the colors; remove colors or the policy"
                            .into(),
                    ))
                }
                Some(text) if text.trim().is_empty() => {
                    return Err(err(
                        field("colors"),
                        format!("{text:?} is an empty color set: give at least one color (range syntax, 0-15,32) or remove colors"),
                    ))
                }
                Some(text) => {
                    if platform.memory.allocator == AllocatorKind::Buddy {
                        return Err(err(
                            field("colors"),
                            "page colors need a color-aware allocator: set allocator = \"tam\" or \"coloris\" in the scenario".into(),
                        ));
                    }
                    let set = layout
                        .parse_colors(text)
                        .map_err(|e| err(field("colors"), e.to_string()))?;
                    Some(set)
                }
            };
            let instructions = a.instructions.or(file.instructions);
            if instructions == Some(0) {
                return Err(err(field("instructions"), "must be positive".into()));
            }
            let duty = a.duty.unwrap_or(Duty::FULL);
            let prefetch_word = match &a.prefetchers {
                None => None,
                Some(k) if k == "off" => Some(Word::ALL_OFF.bits()),
                Some(k) => prefetch_word(k, &platform).map_err(|e| err(field("prefetchers"), e))?,
            };
            check_throttle(&platform, duty, prefetch_word)
                .map_err(|(f, why)| err(field(f), why))?;
            if let Some(q) = &a.quantum {
                q.check()
                    .map_err(|(f, why)| err(field(&format!("quantum.{f}")), why))?;
                let shared = file
                    .apps
                    .iter()
                    .enumerate()
                    .filter(|&(j, b)| j != i && b.core.unwrap_or(j as u32 % platform.cores) == core)
                    .map(|(j, b)| format!("app[{j}] ({})", b.name))
                    .collect::<Vec<_>>();
                if !shared.is_empty() {
                    return Err(err(
                        field("quantum"),
                        format!(
                            "core {core} also runs {}; an idle process needs its app alone on the core",
                            shared.join(", ")
                        ),
                    ));
                }
            }
            apps.push(AppSpec {
                name: a.name.clone(),
                source,
                timing,
                core,
                instructions,
                restart: (instructions.is_some() || file.method.replays()) && file.restart,
                llc_mask,
                huge_pages: a.huge_pages.unwrap_or_default(),
                duty,
                prefetch_word,
                idle_quantum: a.quantum,
            });
            colors.push(color_set);
        }
        let coloring = match &file.coloring {
            None => {
                if let Some(i) = file.apps.iter().position(|a| a.thresholds.is_some()) {
                    return Err(err(
                        format!("app[{i}] ({}).thresholds", file.apps[i].name),
                        "thresholds need a [coloring] section with policy coloris-dynamic".into(),
                    ));
                }
                None
            }
            Some(c) => {
                let per_app: Vec<(String, Option<Thresholds>)> = file
                    .apps
                    .iter()
                    .enumerate()
                    .map(|(i, a)| (format!("app[{i}] ({}).thresholds", a.name), a.thresholds))
                    .collect();
                Some(c.check(layout.colors() as u32, platform.cores, &per_app, &err)?)
            }
        };
        let groups: Vec<(&str, WayMask, GroupMode)> = file
            .apps
            .iter()
            .zip(&apps)
            .filter_map(|(e, a)| a.llc_mask.map(|m| (e.name.as_str(), m, e.mask_mode)))
            .collect();
        check_exclusive(&groups).map_err(|e| err("app.ways".into(), e.to_string()))?;
        if let Some((i, e)) = file
            .apps
            .iter()
            .enumerate()
            .find(|(_, e)| e.mask_mode == GroupMode::Exclusive && e.ways.is_none())
        {
            return Err(err(
                format!("app[{i}] ({}).mask-mode", e.name),
                "exclusive needs a way mask (ways = \"0x...\")".into(),
            ));
        }
        Ok(Scenario {
            coloring,
            name,
            path: path.map(Path::to_path_buf),
            platform,
            apps,
            colors,
            file,
            policy,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_traces::Scratch;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    const GEN: &str = r#"seed = 1
accesses = 1000
pattern = { class = "light" }
"#;

    fn tmp(tag: &str) -> Scratch {
        Scratch::new(&format!("scenario-{tag}"))
    }

    #[test]
    fn loads_a_scenario_with_generators() {
        let dir = tmp("ok");
        let d = dir.path();
        write(d, "light.toml", GEN);
        let p = write(
            d,
            "s.toml",
            r#"platform = "xeon-e5506"
instructions = 5000
[[app]]
name = "a"
generator = "light.toml"
ways = "0x00f"
[[app]]
name = "b"
synth = { seed = 2, accesses = 100, pattern = { class = "light" } }
base-cpi = 0.5
"#,
        );
        let s = Scenario::load(&p).unwrap();
        assert_eq!(s.name, "s");
        assert_eq!(s.apps.len(), 2);
        assert_eq!(s.apps[1].core, 1);
        assert_eq!(s.apps[0].llc_mask, Some(WayMask(0xf)));
        assert!(s.apps[0].restart && s.apps[0].instructions == Some(5000));
        assert_eq!(s.apps[1].timing.base_cpi, 0.5);
    }

    #[test]
    fn memory_size_and_aging_replace_the_platform_s() {
        let dir = tmp("memory");
        let d = dir.path();
        write(d, "light.toml", GEN);
        let app = "[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n";
        let p = write(
            d,
            "s.toml",
            &format!("platform = \"sandybridge-8m\"\n{app}"),
        );
        let s = Scenario::load(&p).unwrap();
        assert_eq!(s.platform.memory.size_bytes, 4 << 30);
        assert!(s.platform.memory.aging.is_some());
        let p = write(
            d,
            "t.toml",
            &format!("platform = \"sandybridge-8m\"\nmemory-bytes = 17_179_869_184\naging = false\npage-walks = \"flat\"\n{app}"),
        );
        let s = Scenario::load(&p).unwrap();
        assert_eq!(s.platform.memory.size_bytes, 16 << 30);
        assert!(s.platform.memory.aging.is_none());
        assert_eq!(s.platform.tlb.walk, WalkMode::Flat);
        let p = write(
            d,
            "u.toml",
            &format!("platform = \"sandybridge-8m\"\n{app}"),
        );
        assert_eq!(
            Scenario::load(&p).unwrap().platform.tlb.walk,
            WalkMode::Hierarchy
        );
    }

    #[test]
    fn colors_need_and_get_a_color_aware_allocator() {
        let dir = tmp("colors");
        let d = dir.path();
        write(d, "light.toml", GEN);
        let p = write(
            d,
            "s.toml",
            "platform = \"xeon-e5506\"\nallocator = \"tam\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\ncolors=\"0-15\"\n",
        );
        let s = Scenario::load(&p).unwrap();
        assert_eq!(s.colors[0].as_ref().unwrap().len(), 16);
        assert_eq!(s.platform.memory.allocator, AllocatorKind::Tam);
        let p = write(
            d,
            "t.toml",
            "platform = \"xeon-e5506\"\nallocator = \"tam\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\ncolors=\"0-64\"\n",
        );
        let e = Scenario::load(&p).unwrap_err().to_string();
        assert!(e.contains("app[0] (a).colors") && e.contains("64"), "{e}");
    }

    #[test]
    fn errors_name_the_file_and_field() {
        let dir = tmp("bad");
        let d = dir.path();
        write(d, "light.toml", GEN);
        let cases = [
            ("platform = \"nope\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n", "platform"),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\ncore=9\n", "app[0] (a).core"),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\nways=\"0x101\"\n", "app[0] (a).ways"),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\n", "app[0] (a).trace"),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\ntrace=\"none.cpt\"\n", "none.cpt"),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\ncolors=\"0-3\"\n", "color-aware allocator"),
            ("platform = \"xeon-e5506\"\nallocator = \"tam\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\ncolors=\" \"\n", "app[0] (a).colors: \" \" is an empty color set"),
            ("platform = \"xeon-e5506\"\npolicy = \"optc-stp\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n", "policy"),
            ("platform = \"xeon-e5506\"\npolicy = \"lfoc\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\nways=\"0x3\"\n", "decides the masks"),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n", "app[1].name"),
            ("platform = \"xeon-e5506\"\nbogus = 1\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n", "bogus"),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\nways=\"0x00f\"\nmask-mode=\"exclusive\"\n[[app]]\nname=\"b\"\ngenerator=\"light.toml\"\nways=\"0x018\"\n", "Overlaps with exclusive group: b (mask 18) and exclusive a"),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\nmask-mode=\"exclusive\"\n", "app[0] (a).mask-mode"),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\nmlp=0.5\n", "app[0] (a).timing"),
            ("platform = \"xeon-e5506\"\n[coloring]\npolicy = \"coloris\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n", "coloring.policy"),
            ("platform = \"xeon-e5506\"\n[coloring]\npolicy = \"coloris-dynamic\"\nlow = 0.5\nhigh = 0.2\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n", "coloring.low"),
            ("platform = \"xeon-e5506\"\n[coloring]\npolicy = \"coloris-static\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\ncolors=\"0-3\"\n", "app[0] (a).colors"),
            ("platform = \"xeon-e5506\"\nallocator = \"buddy\"\n[coloring]\npolicy = \"coloris-static\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n", "allocator"),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\nthresholds = { low = 0.1, high = 0.2 }\n", "app[0] (a).thresholds"),
            ("platform = \"xeon-e5506\"\n[coloring]\npolicy = \"coloris-dynamic\"\nlow = 0.1\nhigh = 0.2\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\nthresholds = { low = 0.3, high = 0.2 }\n", "app[0] (a).thresholds"),
            ("platform = \"xeon-e5506\"\nallocator = \"coloris\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\ncolors=\"0-64\"\n", "app[0] (a).colors"),
            ("platform = \"xeon-e5506\"\nmemory-bytes = 3000000000\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n", "memory-bytes: 3000000000 is not a power of two"),
            ("platform = \"xeon-e5506\"\nmemory-bytes = 4096\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n", "memory-bytes"),
            ("platform = \"xeon-e5506\"\naging = \"off\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n", "aging"),
            ("platform = \"xeon-e5506\"\npage-walks = \"deep\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n", "page-walks"),
        ];
        for (i, (text, want)) in cases.iter().enumerate() {
            let p = write(d, &format!("s{i}.toml"), text);
            let e = Scenario::load(&p).unwrap_err().to_string();
            assert!(e.contains(want), "case {i}: {e}");
            assert!(e.contains(&format!("s{i}.toml")), "case {i}: {e}");
        }
    }
}
