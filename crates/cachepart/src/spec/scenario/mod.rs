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
//! A `[method]` section picks the run methodology (see [`crate::registry::method`]):
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
//! replaces its walk model and `page-table-colors = "any"` or `"owner"`
//! where its page tables lie (ablation switches).
//!
//! A `[coloring]` section runs a page-color policy (`coloris-static`,
//! `coloris-dynamic`, `tam-static`; see [`crate::run::coloring`]); apps may then
//! carry `thresholds = { low = .., high = .. }` and no `colors`. Without
//! an `allocator`, the policy's allocator is used (`coloris`, or `tam` for
//! `tam-static`).
//!
//! Relative paths are taken from the scenario file's directory. Every
//! check happens at load time, before anything runs, and each error names
//! the file and the field (`app[1] (mcf).core`) and what was expected.
//!
//! One file each: the file as written and the reader of configuration
//! files (`file.rs`), the platform with the scenario's replacements
//! (`platform.rs`), the run keys and the `[method]` (`run_keys.rs`), the
//! CAT policy and its sections (`policy.rs`), the per-app keys (`apps.rs`)
//! and each app's trace source (`source.rs`). This file loads a scenario
//! and checks it in that order; `machine.rs` makes the checked scenario
//! the simulator's machine.

mod apps;
mod file;
mod machine;
mod platform;
mod policy;
mod run_keys;
mod source;

use std::path::{Path, PathBuf};

use cachepart_policy::Thresholds;
use cachepart_sim::memory::ColorLayout;
use cachepart_sim::system::{AppSpec, PlatformConfig};
use cachepart_units::IdSet;

use crate::error::Error;
use crate::registry::Algorithm;
use crate::run::coloring::Coloring;
use crate::spec::key_set::KeySet;

use file::read_config;
pub use file::{AppEntry, ScenarioFile};
pub(crate) use platform::prefetch_word;

/// Builds the error of a field: `err(field, what)` names the scenario's
/// file, the field and what was expected.
type FieldError<'a> = &'a dyn Fn(String, String) -> Error;

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
    /// Every file it reads: the scenario file (when it has one), the
    /// platform file (unless built in), generator files and traces; an
    /// output must be none of them.
    pub inputs: Vec<PathBuf>,
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
        let err = |field: String, what: String| Error::config(&whence, field, what);
        let platform = platform::resolve(&file, base, &err)?;
        run_keys::check(&file, &err)?;
        let policy = policy::parse(&file, &err)?;
        policy::check_plan(&file, &platform, &err)?;
        let layout = ColorLayout::new(
            &platform
                .llc
                .geometry()
                .map_err(|e| err("platform.llc".into(), e.to_string()))?,
            4096,
        )
        .map_err(|e| err("platform.llc".into(), e.to_string()))?;
        let (apps, colors) = apps::build(&file, &platform, policy, &layout, base, &err)?;
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
        apps::check_groups(&file, &apps, &err)?;
        let inputs = input_files(&file, base, path);
        let scenario = Scenario {
            inputs,
            coloring,
            name,
            path: path.map(Path::to_path_buf),
            platform,
            apps,
            colors,
            file,
            policy,
        };
        if scenario.policy == Some(crate::Algorithm::ThrottleOnline) {
            // Its section and the platform checked before anything runs.
            crate::run::online_throttle::throttle_online_for(&scenario, None)?;
        }
        Ok(scenario)
    }
}

/// The files scenario `file` (read from `path`, relative paths taken from
/// `base`) reads.
fn input_files(file: &ScenarioFile, base: Option<&Path>, path: Option<&Path>) -> Vec<PathBuf> {
    let join = |p: &Path| match base {
        Some(b) if p.is_relative() => b.join(p),
        _ => p.to_path_buf(),
    };
    let mut inputs: Vec<PathBuf> = path.map(Path::to_path_buf).into_iter().collect();
    inputs.extend(crate::spec::platforms::file_path(&file.platform, base));
    for a in &file.apps {
        inputs.extend(a.trace.iter().chain(&a.generator).map(|p| join(p)));
    }
    inputs
}

#[cfg(test)]
mod tests {
    use super::fixtures::{tmp, write, APP, GEN};
    use super::*;
    use cachepart_units::WayMask;

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
    fn inputs_are_every_file_the_scenario_reads() {
        let dir = tmp("inputs");
        let d = dir.path();
        write(d, "light.toml", GEN);
        let platform = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../platforms/xeon-5160.toml"),
        )
        .unwrap();
        write(d, "plat.toml", &platform);
        let p = write(
            d,
            "s.toml",
            "platform = \"plat.toml\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n[[app]]\nname=\"b\"\nsynth = { seed = 2, accesses = 100, pattern = { class = \"light\" } }\n",
        );
        let s = Scenario::load(&p).unwrap();
        assert_eq!(
            s.inputs,
            vec![p.clone(), d.join("plat.toml"), d.join("light.toml")]
        );
        let p = write(
            d,
            "t.toml",
            "platform = \"xeon-5160\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n",
        );
        assert_eq!(
            Scenario::load(&p).unwrap().inputs,
            vec![p, d.join("light.toml")]
        );
    }

    #[test]
    fn errors_name_the_file_and_field() {
        let dir = tmp("bad");
        let d = dir.path();
        write(d, "light.toml", GEN);
        write(
            d,
            "none.toml",
            &GEN.replace("accesses = 1000", "accesses = 0"),
        );
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
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\nbase-cpi=1e300\n", "base-cpi: 1e300 is outside"),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\nbase-cpi=1e-6\n", "base-cpi: 1e-6 is outside"),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\ngenerator=\"none.toml\"\n", "app[0] (a).generator: "),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\nsynth = { seed = 1, accesses = 0, pattern = { class = \"light\" } }\n", "app[0] (a).synth: accesses is 0"),
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
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\ntrace=\".\"\n", "app[0] (a).trace: "),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\ntrace=\".\"\n", "is a directory; expected a trace file"),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"\"\ngenerator=\"light.toml\"\n", "app[0].name: \"\" is empty"),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\" \t\"\ngenerator=\"light.toml\"\n", "app[0].name: \" \\t\" is empty"),
            ("platform = \"xeon-e5506\"\n[method]\nkind = \"to-completion\"\nbogus = \"x\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n", "unknown field `bogus`"),
            ("platform = \"xeon-e5506\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\nmlp=inf\n", "mlp: inf is not a finite number: mlp must be a finite number >= 1"),
        ];
        for (i, (text, want)) in cases.iter().enumerate() {
            let p = write(d, &format!("s{i}.toml"), text);
            let e = Scenario::load(&p).unwrap_err().to_string();
            assert!(e.contains(want), "case {i}: {e}");
            assert!(e.contains(&format!("s{i}.toml")), "case {i}: {e}");
        }
    }

    /// The numbers of `[coloring]` and an app's `quantum`: a NaN, an
    /// infinity, a negative number, a fraction where a whole number is
    /// needed, or a zero where it makes no sense is refused naming the
    /// file, the key and what is expected (in words, not Rust's types).
    #[test]
    fn bad_coloring_and_quantum_numbers_name_the_key_and_what_is_expected() {
        let dir = tmp("numbers");
        let d = dir.path();
        write(d, "light.toml", GEN);
        let dynamic = "[coloring]\npolicy = \"coloris-dynamic\"\n";
        let app = APP;
        let cases: [(String, &[&str]); 18] = [
            (format!("{dynamic}low = nan\nhigh = 0.5\n{app}"), &["coloring.low: ", "NaN: expected a miss rate between 0 and 1"]),
            (format!("{dynamic}low = 0.1\nhigh = inf\n{app}"), &["coloring.high: ", "inf: expected a miss rate between 0 and 1"]),
            (format!("{dynamic}low = -0.5\nhigh = 0.5\n{app}"), &["coloring.low: ", "-0.5: expected a miss rate"]),
            (format!("{dynamic}low = 0.1\nhigh = 0.5\nwin-us = nan\n{app}"), &["coloring.win-us: NaN: expected a finite number of microseconds from 0 to 1000000 (one second)"]),
            (format!("{dynamic}low = 0.1\nhigh = 0.5\nwin-us = -inf\n{app}"), &["coloring.win-us: -inf: expected a finite number"]),
            (format!("{dynamic}low = 0.1\nhigh = 0.5\nwin-us = 1e20\n{app}"), &["coloring.win-us: 1e20: expected a finite number of microseconds from 0 to 1000000 (one second)"]),
            (format!("{dynamic}low = 0.1\nhigh = 0.5\nwin-us = 1e300\n{app}"), &["coloring.win-us: 1e300: expected a finite number of microseconds from 0 to 1000000 (one second)"]),
            (format!("{dynamic}low = 0.1\nhigh = 0.5\nunit = 1.5\n{app}"), &["unit = 1.5", "expected a whole number from 0 to 4294967295"]),
            (format!("{dynamic}low = 0.1\nhigh = 0.5\nunit = 0\n{app}"), &["coloring.unit: ", "expected between 1 and the number of colors"]),
            (format!("{dynamic}low = 0.1\nhigh = 0.5\nperiod-intervals = -1\n{app}"), &["period-intervals = -1", "expected a whole number of at least 0"]),
            (format!("{dynamic}low = 0.1\nhigh = 0.5\nperiod-intervals = 0\n{app}"), &["coloring.period-intervals: 0: expected a whole number of sampling intervals of at least 1"]),
            (format!("{dynamic}low = 0.1\nhigh = 0.5\nmin-references = 2.5\n{app}"), &["min-references = 2.5", "expected a whole number of at least 0"]),
            (format!("[coloring]\npolicy = \"tam-static\"\nsweep-step = nan\n{app}"), &["sweep-step = nan", "expected a whole number from 0 to 4294967295"]),
            (format!("{app}quantum = {{ run-cycles = 0, idle-cycles = 3 }}\n"), &["app[0] (a).quantum.run-cycles: 0: expected at least 1 cycle"]),
            (format!("{app}quantum = {{ run-cycles = 10, idle-cycles = 0 }}\n"), &["app[0] (a).quantum.idle-cycles: 0: expected at least 1 cycle"]),
            (format!("{app}quantum = {{ run-cycles = 1.5, idle-cycles = 3 }}\n"), &["run-cycles = 1.5", "expected a whole number of at least 0"]),
            (format!("{app}quantum = {{ run-cycles = 10, idle-cycles = nan }}\n"), &["idle-cycles = nan", "expected a whole number of at least 0"]),
            (format!("{app}quantum = {{ run-cycles = 10, idle-cycles = -1 }}\n"), &["idle-cycles = -1", "expected a whole number of at least 0"]),
        ];
        for (i, (body, wants)) in cases.iter().enumerate() {
            let name = format!("n{i}.toml");
            let p = write(d, &name, &format!("platform = \"xeon-e5506\"\n{body}"));
            let e = Scenario::load(&p).unwrap_err().to_string();
            assert!(e.contains(&name), "case {i}: {e}");
            for want in *wants {
                assert!(e.contains(want), "case {i}: {want:?} in {e}");
            }
            assert!(!e.contains(" u32") && !e.contains(" u64"), "case {i}: {e}");
        }
    }
}

/// Scratch files the tests of this module's files share.
#[cfg(test)]
mod fixtures {
    use std::path::{Path, PathBuf};

    use crate::test_traces::Scratch;

    pub(super) fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    pub(super) const GEN: &str = r#"seed = 1
accesses = 1000
pattern = { class = "light" }
"#;

    /// One app, `a`, replaying [`GEN`] written as `light.toml`.
    pub(super) const APP: &str = "[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\n";

    pub(super) fn tmp(tag: &str) -> Scratch {
        Scratch::new(&format!("scenario-{tag}"))
    }
}
