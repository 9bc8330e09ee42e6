//! Alone runs: one app by itself on core 0 of the same simulated platform,
//! with the whole LLC, its first `w` ways (a CAT mask) or its first `k`
//! page colors. They define each app's slowdown (IPC alone / IPC shared)
//! and its curves over way or color counts. This is the one place alone
//! runs are made: the simulator machine's alone curves, the scenario's
//! slowdowns, `profile from-trace` and the color policies all come here.
//!
//! A run over colors needs a color-aware allocator: a platform with the
//! `buddy` allocator is switched to `tam` (its default settings) for it
//! ([`sweep_platform`]). The app's own CAT mask is kept for a color run
//! and replaced for a way run.

use cachepart_machine::{Axis, EventKind};
use cachepart_units::{IdSet, WayMask};
use rayon::prelude::*;

use super::app::{AppSpec, AppTotals};
use super::error::SystemError;
use super::multicore::System;
use super::platform::PlatformConfig;
use crate::memory::AllocatorKind;

/// Global-time interval of alone runs when nothing is sampled (only
/// bounds the loop; the totals do not depend on it).
const ALONE_INTERVAL: u64 = 1 << 40;

/// Interval of an unsampled alone run with a warm-up: how finely the end
/// of the warm-up is found.
const WARMUP_INTERVAL: u64 = 1_000_000;

/// How much of the LLC an alone run gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AloneSize {
    /// Every way and every color.
    Whole,
    /// The first `n` ways (a CAT mask).
    Ways(u32),
    /// The first `n` page colors (colors `0..n`).
    Colors(u32),
}

/// The result of one alone run.
#[derive(Clone, Debug, PartialEq)]
pub struct AloneRun {
    /// Its whole-run counters.
    pub totals: AppTotals,
    /// Its LLC occupancy averaged over the run's sampling intervals
    /// (weighted by cycles), in bytes; its end-of-run occupancy when the
    /// run was not sampled.
    pub mean_occupancy_bytes: f64,
}

/// The platform an alone run of `size` uses: `platform` itself, or for
/// colors with a `buddy` allocator, the same with a `tam` allocator.
pub fn sweep_platform(platform: &PlatformConfig, colors: bool) -> PlatformConfig {
    let mut p = platform.clone();
    if colors && p.memory.allocator == AllocatorKind::Buddy {
        p.memory.allocator = AllocatorKind::Tam;
    }
    p
}

/// Runs `app` alone on core 0 of `platform` with `size` of the LLC until
/// it finishes, sampling its occupancy every `sample_cycles` (`None`: no
/// sampling). It finishes at its instruction limit, or without one at the
/// end of its trace (one pass: an app that replays its trace without a
/// limit, as the restart and fixed-time methodologies run it, is run alone
/// once through).
pub fn run_alone_at(
    platform: &PlatformConfig,
    app: &AppSpec,
    size: AloneSize,
    seed: u64,
    sample_cycles: Option<u64>,
) -> Result<AloneRun, SystemError> {
    run_alone_warmed(platform, app, size, seed, sample_cycles, 0)
}

/// [`run_alone_at`], measured after a warm-up: the counters (and the
/// sampled occupancy) start at the first interval end at which the app
/// has retired `warmup` instructions, so cold misses of the warm-up are
/// left out. The intervals are `sample_cycles` long (1 M cycles when
/// not sampled), so the measurement starts up to one interval after
/// `warmup` instructions. An app's instruction limit counts from the
/// start of the run, warm-up included. Refused when the app ends before
/// its warm-up does. `warmup = 0` is [`run_alone_at`], bit for bit.
pub fn run_alone_warmed(
    platform: &PlatformConfig,
    app: &AppSpec,
    size: AloneSize,
    seed: u64,
    sample_cycles: Option<u64>,
    warmup: u64,
) -> Result<AloneRun, SystemError> {
    let mut spec = app.clone();
    spec.core = 0;
    if spec.instructions.is_none() {
        spec.restart = false;
    }
    let bad = |what: &str, n: u32, max: u32| SystemError::Config {
        field: format!("llc-{what}"),
        reason: format!("{n} {what}: the LLC has 1..={max}"),
    };
    let mut colors = None;
    match size {
        AloneSize::Whole => spec.llc_mask = None,
        AloneSize::Ways(w) if w == 0 || w > platform.llc.ways => {
            return Err(bad("ways", w, platform.llc.ways))
        }
        AloneSize::Ways(w) => spec.llc_mask = Some(WayMask::contiguous(0, w)),
        AloneSize::Colors(0) => return Err(bad("colors", 0, 0)),
        AloneSize::Colors(k) => colors = Some((0..k).collect::<IdSet>()),
    }
    let color_platform;
    let platform = if colors.is_some() && platform.memory.allocator == AllocatorKind::Buddy {
        color_platform = sweep_platform(platform, true);
        &color_platform
    } else {
        platform
    };
    let mut sys = System::new(platform, vec![spec], seed)?;
    if let Some(set) = &colors {
        sys.set_app_colors(0, set)?;
    }
    let (mut weighted, mut cycles) = (0.0f64, 0.0f64);
    let interval = match (sample_cycles, warmup) {
        (Some(c), _) => c,
        (None, 0) => ALONE_INTERVAL,
        (None, _) => WARMUP_INTERVAL,
    };
    if interval == 0 {
        return Err(SystemError::Config {
            field: "interval-cycles".into(),
            reason: "must be positive".into(),
        });
    }
    // the totals at the end of the warm-up (none yet while warming)
    let mut base: Option<AppTotals> = (warmup == 0).then(AppTotals::default);
    while !sys.is_done() {
        let samples = sys.run_interval(interval)?;
        if base.is_none() {
            let now = sys.totals().remove(0);
            if now.instructions >= warmup {
                base = Some(now);
            }
            continue;
        }
        if sample_cycles.is_some() {
            for s in &samples {
                weighted += s.llc_occupancy_bytes * s.cycles;
                cycles += s.cycles;
            }
        }
    }
    let end = sys.totals().remove(0);
    let totals = match base {
        None => {
            return Err(SystemError::Config {
                field: "warmup".into(),
                reason: format!(
                    "{} ended after {} instructions, within its warm-up of {warmup}",
                    end.name, end.instructions
                ),
            })
        }
        Some(_) if warmup == 0 => end,
        Some(b) => end.since(&b),
    };
    let mean_occupancy_bytes = if cycles > 0.0 {
        weighted / cycles
    } else {
        totals.llc_occupancy_bytes as f64
    };
    Ok(AloneRun {
        totals,
        mean_occupancy_bytes,
    })
}

/// Runs `app` alone on core 0 of `platform` until it finishes, with the
/// whole LLC (`None`) or its first `llc_ways` ways (a CAT mask; the app's
/// own mask is ignored).
pub fn run_alone(
    platform: &PlatformConfig,
    app: &AppSpec,
    llc_ways: Option<u32>,
    seed: u64,
) -> Result<AppTotals, SystemError> {
    let size = llc_ways.map_or(AloneSize::Whole, AloneSize::Ways);
    Ok(run_alone_at(platform, app, size, seed, None)?.totals)
}

/// Runs `app` alone on core 0 of `platform` with the whole LLC for
/// `cycles` of simulated time (rounded up to whole sampling intervals of
/// `interval_cycles`), replaying its trace whenever it ends, as a
/// fixed-time run co-runs it. Its instruction limit is ignored.
pub fn run_alone_for(
    platform: &PlatformConfig,
    app: &AppSpec,
    cycles: u64,
    interval_cycles: u64,
    seed: u64,
) -> Result<AppTotals, SystemError> {
    if interval_cycles == 0 {
        return Err(SystemError::Config {
            field: "interval-cycles".into(),
            reason: "must be positive".into(),
        });
    }
    let mut spec = app.clone();
    spec.core = 0;
    spec.llc_mask = None;
    spec.instructions = None;
    spec.restart = true;
    let mut sys = System::new(platform, vec![spec], seed)?;
    while sys.now() < cycles && !sys.is_done() {
        sys.run_interval(interval_cycles)?;
    }
    Ok(sys.totals().remove(0))
}

/// Runs `app` alone on core 0 of `platform` with the whole LLC, replaying
/// its trace at each end, until it has completed `runs` runs (passes over
/// its trace), as the restart methodology co-runs it; returns its totals
/// and the length in cycles of each run (measured at the replays, within
/// intervals of `interval_cycles`). Its instruction limit is ignored.
pub fn run_alone_runs(
    platform: &PlatformConfig,
    app: &AppSpec,
    runs: u32,
    interval_cycles: u64,
    seed: u64,
) -> Result<(AppTotals, Vec<u64>), SystemError> {
    if interval_cycles == 0 {
        return Err(SystemError::Config {
            field: "interval-cycles".into(),
            reason: "must be positive".into(),
        });
    }
    let mut spec = app.clone();
    spec.core = 0;
    spec.llc_mask = None;
    spec.instructions = None;
    spec.restart = true;
    let mut sys = System::new(platform, vec![spec], seed)?;
    let (mut began, mut lengths) = (0u64, Vec::new());
    while lengths.len() < runs as usize && !sys.is_done() {
        sys.run_interval(interval_cycles)?;
        for e in sys.take_events() {
            if e.kind == EventKind::Restarted {
                lengths.push(e.at_cycles.saturating_sub(began));
                began = e.at_cycles;
            }
        }
    }
    lengths.truncate(runs as usize);
    Ok((sys.totals().remove(0), lengths))
}

/// The alone sizes of `axis` on `platform`.
pub fn axis_sizes(platform: &PlatformConfig, axis: &Axis) -> Vec<AloneSize> {
    match axis {
        Axis::Ways => (1..=platform.llc.ways).map(AloneSize::Ways).collect(),
        Axis::Colors { counts } => counts.iter().map(|&k| AloneSize::Colors(k)).collect(),
    }
}

/// Every app of `apps` alone at every size of `axis`, in parallel (rayon);
/// `out[a][i]` is app `a` at the `i`-th size, equal to the serial runs'.
pub fn alone_sweep_many(
    platform: &PlatformConfig,
    apps: &[AppSpec],
    axis: &Axis,
    seed: u64,
    sample_cycles: Option<u64>,
) -> Result<Vec<Vec<AloneRun>>, SystemError> {
    let sizes = axis_sizes(platform, axis);
    sweep_grid(apps.len(), &sizes, |a, s| {
        run_alone_at(platform, &apps[a], s, seed, sample_cycles)
    })
}

/// The loop of every alone sweep: `run(a, size)` for each of `apps` apps
/// at each of `sizes`, in parallel (rayon); `out[a][i]` is app `a` at the
/// `i`-th size, equal to the serial runs' whatever the thread count. Its
/// callers choose how one alone run is made ([`alone_sweep_many`]: the
/// simulator machine's alone curves; the facade's profiling sweeps, with
/// a warm-up, occupancy sampling and progress).
pub fn sweep_grid<S, T, E>(
    apps: usize,
    sizes: &[S],
    run: impl Fn(usize, S) -> Result<T, E> + Sync,
) -> Result<Vec<Vec<T>>, E>
where
    S: Copy + Sync,
    T: Send,
    E: Send,
{
    let jobs: Vec<(usize, S)> = (0..apps)
        .flat_map(|a| sizes.iter().map(move |&s| (a, s)))
        .collect();
    let runs: Vec<T> = jobs
        .par_iter()
        .map(|&(a, s)| run(a, s))
        .collect::<Result<_, _>>()?;
    let mut out: Vec<Vec<T>> = (0..apps).map(|_| Vec::with_capacity(sizes.len())).collect();
    for ((a, _), r) in jobs.into_iter().zip(runs) {
        out[a].push(r);
    }
    Ok(out)
}

/// [`run_alone`] at every way count `1..=W`, in parallel (rayon); the
/// results equal the serial runs', in way order.
pub fn alone_sweep(
    platform: &PlatformConfig,
    app: &AppSpec,
    seed: u64,
) -> Result<Vec<AppTotals>, SystemError> {
    let mut runs = alone_sweep_many(platform, std::slice::from_ref(app), &Axis::Ways, seed, None)?;
    Ok(runs
        .pop()
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.totals)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::sweep_grid;

    #[test]
    fn a_grid_is_per_app_in_size_order_and_stops_at_an_error() {
        let sizes = [Size(1), Size(2), Size(3)];
        let out: Vec<Vec<u32>> =
            sweep_grid(2, &sizes, |a, s| Ok::<_, String>(10 * a as u32 + s.0)).unwrap();
        assert_eq!(out, vec![vec![1, 2, 3], vec![11, 12, 13]]);
        let none: Vec<Vec<u32>> = sweep_grid(0, &sizes, |_, s| Ok::<_, String>(s.0)).unwrap();
        assert!(none.is_empty());
        let e = sweep_grid(2, &sizes, |a, s| {
            if a == 1 && s.0 == 2 {
                Err(format!("app {a} at {}", s.0))
            } else {
                Ok(s.0)
            }
        })
        .unwrap_err();
        assert_eq!(e, "app 1 at 2");
    }

    #[derive(Clone, Copy)]
    struct Size(u32);
}
