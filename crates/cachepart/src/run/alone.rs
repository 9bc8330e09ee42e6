//! Profiling a trace on the simulator: alone runs of one app over a sweep
//! of LLC partition sizes, and the stall-rate curves of Tam et al.
//! (WIOSCA'07) made from them.
//!
//! A sweep runs the app alone on core 0 of a platform, once per partition
//! size, each run its own simulation (the runs go in parallel, and the
//! results are the serial runs', in size order):
//!
//! * over **ways** ([`Axis::Ways`]): a CAT mask of the first `w` ways,
//!   `w = 1..=W`;
//! * over **colors** ([`Axis::Colors`]): every way, but the app's frames
//!   confined to its first `c` page colors, `c = 1..=C`, by a
//!   color-aware allocator. The platform's allocator is used when it is
//!   `tam` or `coloris`; a `buddy` platform is switched to `tam` (with its
//!   default settings) for the sweep, since the buddy allocator cannot
//!   confine an app to colors.
//!
//! A stall-rate curve ([`stall_rate_curve`], in [`crate::run::stall_curve`]) gives, at each size, the
//! memory-stall cycles per billion cycles, Tam et al.'s SRC: the cycles
//! the app stalled on accesses served by memory (LLC misses), out of
//! every 10^9 cycles it ran, under the simulator's timing model.
//!
//! ```no_run
//! use cachepart::run::alone::{stall_rate_curve, Axis, ProfileOptions, TraceApp};
//! use cachepart::spec::platforms;
//! let opts = ProfileOptions::new(platforms::resolve("power5", None).unwrap());
//! let app = TraceApp::from_path("app.cpt".as_ref()).unwrap();
//! let curve = stall_rate_curve(&app, Axis::Colors, &opts).unwrap();
//! for p in &curve.points {
//!     println!("{} colors: {:.0} stall cycles per 10^9 cycles", p.size, p.stall_rate);
//! }
//! ```

use cachepart_units::Kind as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cachepart_sim::memory::ColorLayout;
use cachepart_sim::system::{
    run_alone_warmed, sweep_grid, AloneSize, AppSpec, AppTotals, CptFile, PlatformConfig,
};
use serde::{Deserialize, Serialize};

use crate::error::Error;

pub use cachepart_sim::system::AppTiming;
// The stall-rate curves made from these sweeps (their own module).
pub use crate::run::stall_curve::{
    stall_curve_csv, stall_point, stall_rate_curve, stall_rate_curve_with, StallCurve, StallPoint,
};

/// Sampling interval of alone runs, cycles. It only sets how often the
/// LLC occupancy is read for its time average; the totals do not
/// depend on it.
pub const OCCUPANCY_INTERVAL_CYCLES: u64 = 1_000_000;

/// Page size of the color mapping (the simulator's frames).
const FRAME_BYTES: u64 = 4096;

/// What a sweep varies (`ways` or `colors`); an unknown name is a usage
/// error that lists them.
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[strum(
    parse_err_ty = Error,
    parse_err_fn = unknown_axis
)]
pub enum Axis {
    /// CAT masks of the first `1..=W` ways.
    #[strum(message = "CAT masks of the first 1..=W ways")]
    Ways,
    /// The first `1..=C` page colors, every way.
    #[strum(message = "The first 1..=C page colors (color-aware allocator)")]
    Colors,
}

/// The error of an unknown axis.
fn unknown_axis(s: &str) -> Error {
    Error::Usage(format!("axis {s:?}: expected {}", Axis::expected_quoted()))
}

/// The most instructions a run may be asked for, `instructions` and
/// `warmup` each: 10^12, hours of simulation (and 10^12 cycles at CPI 1,
/// the simulator's longest span), so that a runaway count, e.g. `u64::MAX`
/// replaying a short trace, is refused instead of running without end.
pub const MAX_INSTRUCTIONS: u64 = 1_000_000_000_000;

/// How traces are profiled: the platform, the app's core timing, an
/// instruction limit and the seed.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileOptions {
    /// The simulated platform.
    pub platform: PlatformConfig,
    /// The app's CPI without memory stalls and its memory-level
    /// parallelism.
    pub timing: AppTiming,
    /// Stop each run after this many instructions, replaying the trace if
    /// it is shorter (`None`: run the trace once); at most
    /// [`MAX_INSTRUCTIONS`].
    pub instructions: Option<u64>,
    /// Instructions run before the measurement starts (0: none), so that
    /// the cold misses of a warm-up are left out; `instructions` are
    /// counted after it. See [`cachepart_sim::system::run_alone_warmed`].
    /// At most [`MAX_INSTRUCTIONS`].
    pub warmup: u64,
    /// Seed of the simulation (allocator aging, random replacement).
    pub seed: u64,
}

impl ProfileOptions {
    /// Default timing (`base-cpi` 1, `mlp` 1), whole trace, seed 0.
    pub fn new(platform: PlatformConfig) -> ProfileOptions {
        ProfileOptions {
            platform,
            timing: AppTiming::default(),
            instructions: None,
            warmup: 0,
            seed: 0,
        }
    }
}

/// A trace to profile and the program name it gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceApp {
    /// The program's name (`BENCH` of the metrics table).
    pub name: String,
    /// The binary trace (`.cpt`).
    pub path: PathBuf,
}

impl TraceApp {
    /// The trace at `path`, named after its file stem (`xz.cpt` -> `xz`).
    pub fn from_path(path: &Path) -> Result<TraceApp, Error> {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                Error::Usage(format!(
                    "{}: no file name to name the program after",
                    path.display()
                ))
            })?;
        Ok(TraceApp::named(name, path))
    }

    /// The trace at `path`, named `name`.
    pub fn named(name: impl Into<String>, path: &Path) -> TraceApp {
        TraceApp {
            name: name.into(),
            path: path.to_path_buf(),
        }
    }

    fn spec(&self, opts: &ProfileOptions) -> AppSpec {
        let spec = AppSpec::new(self.name.clone(), Arc::new(CptFile(self.path.clone())))
            .with_timing(opts.timing);
        match opts.instructions {
            Some(n) => spec.with_limit(n.saturating_add(opts.warmup), true),
            None => spec,
        }
    }

    fn whence(&self) -> String {
        format!("trace {} ({})", self.path.display(), self.name)
    }

    /// A failure of an alone run of this app.
    fn err(&self, e: impl Into<crate::error::Source>) -> Error {
        Error::simulation(self.whence(), e)
    }

    /// What is wrong with this app's trace.
    fn trace_err(&self, what: &str) -> Error {
        Error::trace(self.whence(), what)
    }
}

/// One alone run of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AloneRun {
    /// Ways or colors the app had.
    pub size: u32,
    /// Bytes of LLC that is: `size` ways or colors of the LLC.
    pub size_bytes: u64,
    /// Its whole-run counters.
    pub totals: AppTotals,
    /// Its LLC occupancy averaged over the run (weighted by cycles),
    /// bytes.
    pub mean_occupancy_bytes: f64,
}

/// The number of page colors of `platform`'s LLC (4 KiB pages).
pub fn color_count(platform: &PlatformConfig) -> Result<u32, Error> {
    let bad = |e: &dyn std::fmt::Display| {
        Error::config(format_args!("platform {}", platform.name), "", e)
    };
    let geom = platform.llc.geometry().map_err(|e| bad(&e))?;
    let layout = ColorLayout::new(&geom, FRAME_BYTES).map_err(|e| bad(&e))?;
    u32::try_from(layout.colors()).map_err(|e| bad(&e))
}

/// The sizes a sweep over `axis` visits on `platform`: `1..=W` ways or
/// `1..=C` colors.
pub fn sweep_sizes(platform: &PlatformConfig, axis: Axis) -> Result<Vec<u32>, Error> {
    Ok(match axis {
        Axis::Ways => (1..=platform.llc.ways).collect(),
        Axis::Colors => (1..=color_count(platform)?).collect(),
    })
}

/// The platform a sweep over `axis` runs on: `platform` itself, or for
/// colors with a `buddy` allocator, the same with a `tam` allocator.
pub fn sweep_platform(platform: &PlatformConfig, axis: Axis) -> PlatformConfig {
    cachepart_sim::system::sweep_platform(platform, axis == Axis::Colors)
}

/// Runs `app` alone with `size` ways or colors of `platform` (already
/// adapted by [`sweep_platform`]), sampling its occupancy.
fn alone_at(
    platform: &PlatformConfig,
    app: &TraceApp,
    opts: &ProfileOptions,
    axis: Axis,
    size: u32,
    colors: u32,
) -> Result<AloneRun, Error> {
    let spec = app.spec(opts);
    let llc = platform.llc.size_bytes;
    let (alone, size_bytes) = match axis {
        Axis::Ways => (
            AloneSize::Ways(size),
            llc / u64::from(platform.llc.ways.max(1)) * u64::from(size),
        ),
        Axis::Colors => (
            AloneSize::Colors(size),
            llc / u64::from(colors.max(1)) * u64::from(size),
        ),
    };
    let run = run_alone_warmed(
        platform,
        &spec,
        alone,
        opts.seed,
        Some(OCCUPANCY_INTERVAL_CYCLES),
        opts.warmup,
    )
    .map_err(|e| app.err(e))?;
    if run.totals.instructions == 0 {
        return Err(app.trace_err("the trace has no instructions"));
    }
    Ok(AloneRun {
        size,
        size_bytes,
        totals: run.totals,
        mean_occupancy_bytes: run.mean_occupancy_bytes,
    })
}

/// Checks `opts` before any run; errors name the platform, or the timing
/// option and the traces it applies to.
fn check(opts: &ProfileOptions, apps: &[TraceApp]) -> Result<(), Error> {
    opts.platform
        .check()
        .map_err(|e| Error::config(format_args!("platform {}", opts.platform.name), "", e))?;
    check_timing(opts.timing, apps)?;
    if opts.instructions == Some(0) {
        return Err(Error::Usage(
            "instructions: must be positive (or left out)".into(),
        ));
    }
    check_run_length(opts)
}

/// Refuses a run length past [`MAX_INSTRUCTIONS`].
fn check_run_length(opts: &ProfileOptions) -> Result<(), Error> {
    for (key, n) in [
        ("instructions", opts.instructions.unwrap_or(0)),
        ("warmup", opts.warmup),
    ] {
        if n > MAX_INSTRUCTIONS {
            return Err(Error::Usage(format!(
                "{key}: {n} is above {MAX_INSTRUCTIONS} (10^12), the longest run the simulator takes"
            )));
        }
    }
    Ok(())
}

/// Checks the profiled apps' core timing with the simulator's own check
/// ([`AppTiming::check`]), naming the option that is wrong (`base-cpi`,
/// `mlp`: the CLI's `--base-cpi`, `--mlp` and Python's `base_cpi`, `mlp`)
/// and the traces it was given for, in place of the simulator's app
/// name. The words of what is wrong are the simulator's.
fn check_timing(timing: AppTiming, apps: &[TraceApp]) -> Result<(), Error> {
    let Err(e) = timing.check("") else {
        return Ok(());
    };
    // which value is wrong: the check of the timing with only that value
    // kept from the options fails too
    let defaults = AppTiming::default();
    let option = if (AppTiming {
        mlp: defaults.mlp,
        ..timing
    })
    .check("")
    .is_err()
    {
        "base-cpi"
    } else {
        "mlp"
    };
    let what = match e {
        cachepart_sim::system::SystemError::Config { reason, .. } => reason,
        other => other.to_string(),
    };
    let traces: Vec<String> = apps.iter().map(|a| a.path.display().to_string()).collect();
    let of = match traces.len() {
        0 => String::new(),
        1 => format!(" (the timing of trace {})", traces[0]),
        _ => format!(" (the timing of traces {})", traces.join(", ")),
    };
    Err(Error::Usage(format!("{option}: {what}{of}")))
}

/// Runs every app of `apps` alone at every size of `axis`, in parallel;
/// `out[a][i]` is app `a` at the `i`-th size. Deterministic: the same as
/// running them one by one.
pub fn sweep_many(
    apps: &[TraceApp],
    axis: Axis,
    opts: &ProfileOptions,
) -> Result<Vec<Vec<AloneRun>>, Error> {
    sweep_many_with(apps, axis, opts, None)
}

/// Called after each alone run of a sweep with the runs done and the runs
/// in all (from any worker thread).
pub type SweepProgress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// [`sweep_many`], reporting each finished alone run to `progress`.
pub fn sweep_many_with(
    apps: &[TraceApp],
    axis: Axis,
    opts: &ProfileOptions,
    progress: Option<SweepProgress<'_>>,
) -> Result<Vec<Vec<AloneRun>>, Error> {
    check(opts, apps)?;
    for app in apps {
        if app.path.as_os_str() == "-" {
            return Err(app.trace_err(
                "standard input can not be read here: every alone run replays the trace, \
                 so it needs a file (save the trace to a file first)",
            ));
        }
        if !app.path.is_file() {
            return Err(app.trace_err("no such file"));
        }
    }
    let platform = sweep_platform(&opts.platform, axis);
    let sizes = sweep_sizes(&platform, axis)?;
    let colors = match axis {
        Axis::Colors => color_count(&platform)?,
        Axis::Ways => 0,
    };
    let total = apps.len() * sizes.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    sweep_grid(apps.len(), &sizes, |a, s| {
        let r = alone_at(&platform, &apps[a], opts, axis, s, colors);
        if let (Ok(_), Some(p)) = (&r, progress) {
            let k = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            p(k, total);
        }
        r
    })
}

/// [`sweep_many`] of one app.
pub fn sweep(app: &TraceApp, axis: Axis, opts: &ProfileOptions) -> Result<Vec<AloneRun>, Error> {
    Ok(sweep_many(std::slice::from_ref(app), axis, opts)?
        .pop()
        .unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_traces::{sensitive, tiny_platform, write_trace, Scratch};

    #[test]
    fn stall_rate_falls_as_ways_grow() {
        let dir = Scratch::new("stall-ways");
        let p = write_trace(dir.path(), "sens", &sensitive(96 * 1024), 60_000);
        let app = TraceApp::from_path(&p).unwrap();
        assert_eq!(app.name, "sens");
        let c = stall_rate_curve(&app, Axis::Ways, &ProfileOptions::new(tiny_platform())).unwrap();
        assert_eq!(c.points.len(), 8);
        let first = &c.points[0];
        let last = &c.points[7];
        assert!(first.stall_rate > 2.0 * last.stall_rate, "{c:?}");
        assert!(first.stall_rate < 1e9 && first.ipc < last.ipc);
        assert_eq!(last.size_bytes, 131072);
        // the same curve again: byte-identical
        let again =
            stall_rate_curve(&app, Axis::Ways, &ProfileOptions::new(tiny_platform())).unwrap();
        assert_eq!(stall_curve_csv(&c), stall_curve_csv(&again));
    }

    #[test]
    fn color_sweep_confines_the_app() {
        let dir = Scratch::new("stall-colors");
        let p = write_trace(dir.path(), "sens", &sensitive(96 * 1024), 40_000);
        let app = TraceApp::from_path(&p).unwrap();
        let opts = ProfileOptions::new(tiny_platform());
        assert_eq!(color_count(&opts.platform).unwrap(), 4);
        let c = stall_rate_curve(&app, Axis::Colors, &opts).unwrap();
        assert_eq!(c.points.len(), 4);
        assert!(c.points[0].llc_mpki > 1.5 * c.points[3].llc_mpki, "{c:?}");
    }

    #[test]
    fn runaway_run_lengths_are_refused() {
        let ok = ProfileOptions {
            instructions: Some(MAX_INSTRUCTIONS),
            warmup: MAX_INSTRUCTIONS,
            ..ProfileOptions::new(tiny_platform())
        };
        assert!(check(&ok, &[]).is_ok());
        for (opts, key) in [
            (
                ProfileOptions {
                    instructions: Some(u64::MAX),
                    ..ok.clone()
                },
                "instructions: 18446744073709551615 is above 1000000000000",
            ),
            (
                ProfileOptions {
                    warmup: MAX_INSTRUCTIONS + 1,
                    ..ok.clone()
                },
                "warmup: 1000000000001 is above",
            ),
        ] {
            let e = check(&opts, &[]).unwrap_err().to_string();
            assert!(e.contains(key), "{e}");
        }
    }

    #[test]
    fn errors_name_the_trace_and_platform() {
        let app = TraceApp::named("ghost", Path::new("/nonexistent/ghost.cpt"));
        let e = sweep(&app, Axis::Ways, &ProfileOptions::new(tiny_platform()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("ghost.cpt"), "{e}");
        let mut bad = tiny_platform();
        bad.cores = 0;
        let e = sweep(&app, Axis::Ways, &ProfileOptions::new(bad))
            .unwrap_err()
            .to_string();
        assert!(e.contains("platform tiny"), "{e}");
        assert!("sets".parse::<Axis>().is_err());
    }

    /// A bad `base-cpi` or `mlp` is named as the option, with the traces
    /// it was given for, not as the simulator's placeholder app
    /// ("app profiled app: mlp: ...").
    #[test]
    fn timing_errors_name_the_option_and_the_traces() {
        let apps = [
            TraceApp::named("a", Path::new("dir/a.cpt")),
            TraceApp::named("b", Path::new("b.cpt")),
        ];
        for (cpi, mlp, option) in [
            (1.0, 0.5, "mlp: "),
            (1.0, f64::INFINITY, "mlp: "),
            (1.0, f64::NAN, "mlp: "),
            (f64::NAN, 1.0, "base-cpi: "),
            (0.0, 2.0, "base-cpi: "),
            (1e30, 0.5, "base-cpi: "),
        ] {
            let opts = ProfileOptions {
                timing: AppTiming::new(cpi, mlp),
                ..ProfileOptions::new(tiny_platform())
            };
            let e = sweep_many(&apps[..1], Axis::Ways, &opts).unwrap_err();
            assert!(matches!(e, Error::Usage(_)), "{e:?}");
            let e = e.to_string();
            assert!(e.starts_with(option), "{cpi} {mlp}: {e}");
            assert!(e.ends_with("(the timing of trace dir/a.cpt)"), "{e}");
            assert!(!e.contains("profiled app"), "{e}");
            let e = sweep_many(&apps, Axis::Ways, &opts)
                .unwrap_err()
                .to_string();
            assert!(
                e.ends_with("(the timing of traces dir/a.cpt, b.cpt)"),
                "{e}"
            );
        }
        let ok = ProfileOptions {
            timing: AppTiming::new(0.5, 2.0),
            ..ProfileOptions::new(tiny_platform())
        };
        assert!(check_timing(ok.timing, &apps).is_ok());
    }
}
