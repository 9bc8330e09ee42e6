//! `cachepart profile measure`: the per-way profile of real programs on
//! this machine, as PBBCache's data were measured. Each program runs
//! alone at every way count `w = 1..=W` (a CAT sweep: `W` from the L3's
//! `cbm_mask`, the mask of `w` contiguous ways from the low end), for its
//! whole run or for `instructions`/`seconds` of it, `repeat` times; each
//! `(program, w)` gives one row of PBBCache's metrics format
//! ([`MetricsRow`], the column-wise median of the repeats), ready for
//! `cachepart profile eval`.
//!
//! The columns come from the run's counters and resctrl's monitoring:
//! `ipc`, `llcrpki`, `llcmpki`, `llcrpkc`, `llcmpkc` from perf;
//! `llc_usage_kb` from CMT (the occupancy averaged over the intervals,
//! weighted by cycles; 0 without CMT); `bandwidth_mbps` from MBM (bytes
//! over the measured wall time; 0 without MBM); `llcm_bandwidth` as LLC
//! misses x line size over the wall time; `stalls_l2_miss` where the
//! counters have the L2-miss stall event. `stalls_l3_miss`, `stalls_total`
//! and `stalls_store_buf` are not counted and are written as 0.
//!
//! A limit is checked at interval ends, so a run counts whole intervals.
//! A program that exits with a failure status fails the measurement. So
//! does SIGINT or SIGTERM (through [`MeasureOptions::interrupt`]): the
//! run in progress stops its program and removes its group, and no later
//! run starts.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cachepart_linux::doctor::Roots;
use cachepart_linux::machine::{AppSpec, LinuxConfig, LinuxMachine};
use cachepart_machine::{Cluster, Machine, Plan};
use cachepart_units::WayMask;

use crate::error::Error;
use crate::linux::counters::{counter_source, CounterChoice};
use crate::linux::mix::MixApp;
use crate::linux::run::preflight;
use crate::run::from_trace::{check_bench_name, MetricsRow};

/// How to measure.
#[derive(Clone, Debug)]
pub struct MeasureOptions<'a> {
    /// Where the kernel interfaces are.
    pub roots: Roots,
    /// The resctrl mount is a plain directory tree (tests).
    pub plain_resctrl: bool,
    /// Where the counts come from.
    pub counters: CounterChoice<'a>,
    /// The interval the counters are read at.
    pub interval: Duration,
    /// Stop each run after this many instructions (whole intervals).
    pub instructions: Option<f64>,
    /// Stop each run after this long (whole intervals).
    pub seconds: Option<f64>,
    /// Runs per program and way count (the median is kept).
    pub repeat: u32,
    /// Raised by SIGINT/SIGTERM, registered once by the caller; `None`:
    /// each run's machine registers its own.
    pub interrupt: Option<Arc<AtomicBool>>,
}

/// What one run counted.
#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    instructions: f64,
    cycles: f64,
    references: f64,
    misses: f64,
    stall_cycles: f64,
    /// Occupancy x cycles, summed.
    occupancy_cycles: f64,
    memory_bytes: f64,
    wall: Duration,
}

/// Parses `NAME=CMD` (`CMD` runs through `sh -c`); `NAME` is the
/// program's name in the table.
pub fn parse_app(text: &str) -> Result<MixApp, String> {
    let (name, cmd) = text
        .split_once('=')
        .ok_or_else(|| format!("'{text}': expected NAME=COMMAND, e.g. xz='xz -9 -c data.txt'"))?;
    let name = name.trim();
    check_bench_name(name).map_err(|e| format!("'{text}': {e}"))?;
    if cmd.trim().is_empty() {
        return Err(format!("'{text}': the command after '=' is empty"));
    }
    Ok(MixApp {
        name: name.to_string(),
        argv: vec!["sh".into(), "-c".into(), cmd.to_string()],
        core: None,
        restart: false,
        profile: None,
    })
}

/// Called after each run with (runs done, runs in all).
pub type MeasureProgress<'a> = &'a dyn Fn(usize, usize);

/// Measures every app of `apps` at every way count; rows are
/// program-major in `apps` order, then by way count. Names (the rows'
/// `BENCH`) are the apps' programs and must be unique.
pub fn measure(
    apps: &[MixApp],
    opts: &MeasureOptions<'_>,
    progress: Option<MeasureProgress<'_>>,
) -> Result<Vec<MetricsRow>, Error> {
    if apps.is_empty() {
        return Err(Error::Usage(
            "no program to measure: give --app NAME=COMMAND or a mix file".into(),
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for a in apps {
        check_bench_name(a.program()).map_err(|e| Error::Usage(format!("app {}: {e}", a.name)))?;
        if !seen.insert(a.program()) {
            return Err(Error::Usage(format!(
                "program {:?} is measured twice: give each app its own name",
                a.program()
            )));
        }
    }
    if opts.repeat == 0 {
        return Err(Error::Usage("--repeat 0: expected at least 1 run".into()));
    }
    for (what, v) in [
        ("--instructions", opts.instructions),
        ("--seconds", opts.seconds),
    ] {
        if let Some(v) = v.filter(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(Error::Usage(format!(
                "{what} {v:?}: expected a positive number"
            )));
        }
    }
    preflight(&opts.roots, opts.plain_resctrl, opts.counters.is_fake())?;
    let mut rows = Vec::new();
    let mut ways: Option<u32> = None;
    let mut done = 0;
    for app in apps {
        let mut w = 1;
        while ways.is_none_or(|all| w <= all) {
            let mut runs = Vec::with_capacity(opts.repeat as usize);
            for _ in 0..opts.repeat {
                if opts
                    .interrupt
                    .as_ref()
                    .is_some_and(|f| f.load(Ordering::Relaxed))
                {
                    return Err(Error::Interrupted(
                        "interrupted by SIGINT/SIGTERM: the measure stopped, nothing written"
                            .into(),
                    ));
                }
                let (row, all) = run_once(app, w, opts)?;
                ways.get_or_insert(all);
                runs.push(row);
                done += 1;
                if let (Some(p), Some(all)) = (progress, ways) {
                    p(done, apps.len() * all as usize * opts.repeat as usize);
                }
            }
            rows.push(median(&runs));
            w += 1;
        }
    }
    Ok(rows)
}

/// One run of `app` alone with `ways` ways; its row and the machine's way
/// count.
fn run_once(
    app: &MixApp,
    ways: u32,
    opts: &MeasureOptions<'_>,
) -> Result<(MetricsRow, u32), Error> {
    let counters = counter_source(
        opts.counters,
        &[(app.name.as_str(), app.program())],
        opts.interval,
        &opts.roots,
    )?;
    let config = LinuxConfig {
        roots: opts.roots.clone(),
        plain_resctrl: opts.plain_resctrl,
        interval: opts.interval,
        counters,
        msr: None,
        alone: None,
        interrupt: opts.interrupt.clone(),
    };
    let spec = AppSpec {
        name: app.name.clone(),
        argv: app.argv.clone(),
        core: app.core,
        restart: false,
    };
    let mut m = LinuxMachine::start(config, vec![spec])?;
    let all = m.platform().ways;
    let at = |e: &dyn std::fmt::Display| {
        Error::machine(
            format_args!("measuring {} at {ways} ways", app.name),
            e.to_string(),
        )
    };
    if ways > all {
        return Err(at(&format!("the L3 has {all} ways")));
    }
    let plan = Plan {
        clusters: vec![Cluster {
            mask: WayMask::contiguous(0, ways),
            apps: vec![0],
        }],
        ..Plan::default()
    };
    m.apply(&plan).map_err(|e| at(&e))?;
    let mut t = Totals::default();
    let started = Instant::now();
    let stall_event = m.stall_event().is_some();
    loop {
        let iv = m.run_interval(&mut |_| Vec::new()).map_err(|e| at(&e))?;
        for s in &iv.samples {
            t.instructions += s.instructions;
            t.cycles += s.cycles;
            t.references += s.llc_references;
            t.misses += s.llc_misses;
            t.stall_cycles += s.l2_miss_stall_cycles;
            t.occupancy_cycles += s.llc_occupancy_bytes * s.cycles;
            t.memory_bytes += s.memory_bytes;
        }
        let limit = opts.instructions.is_some_and(|n| t.instructions >= n)
            || opts
                .seconds
                .is_some_and(|s| started.elapsed().as_secs_f64() >= s);
        if m.is_done() || limit {
            break;
        }
    }
    t.wall = started.elapsed();
    if let Some(status) = m.exit_status(0).filter(|s| !s.success()) {
        return Err(at(&format!(
            "`{}` exited with {status}; a failed run is not a profile",
            app.argv.join(" ")
        )));
    }
    let line = m.llc().line_bytes;
    m.shutdown()?;
    Ok((row(app.program(), ways, &t, line, stall_event), all))
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

fn row(bench: &str, ways: u32, t: &Totals, line_bytes: u32, stalls: bool) -> MetricsRow {
    let (i, c) = (t.instructions, t.cycles);
    let secs = t.wall.as_secs_f64();
    MetricsRow {
        bench: bench.to_string(),
        nr_ways: ways,
        ipc: ratio(i, c),
        llcrpki: ratio(t.references * 1000.0, i),
        llcmpki: ratio(t.misses * 1000.0, i),
        llcrpkc: ratio(t.references * 1000.0, c),
        llcmpkc: ratio(t.misses * 1000.0, c),
        llc_usage_kb: ratio(t.occupancy_cycles, c) / 1024.0,
        bandwidth_mbps: ratio(t.memory_bytes, secs) / 1e6,
        llcm_bandwidth: ratio(t.misses * f64::from(line_bytes), secs) / 1e6,
        stalls_l2_miss: if stalls {
            ratio(t.stall_cycles, c).clamp(0.0, 1.0)
        } else {
            0.0
        },
        stalls_l3_miss: 0.0,
        stalls_total: 0.0,
        stalls_store_buf: 0.0,
    }
}

/// The column-wise median of the rows of one program and way count (the
/// mean of the middle two for an even count).
fn median(rows: &[MetricsRow]) -> MetricsRow {
    let mid = |f: fn(&MetricsRow) -> f64| {
        let mut v: Vec<f64> = rows.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    MetricsRow {
        bench: rows[0].bench.clone(),
        nr_ways: rows[0].nr_ways,
        ipc: mid(|r| r.ipc),
        llcrpki: mid(|r| r.llcrpki),
        llcmpki: mid(|r| r.llcmpki),
        llcrpkc: mid(|r| r.llcrpkc),
        llcmpkc: mid(|r| r.llcmpkc),
        llc_usage_kb: mid(|r| r.llc_usage_kb),
        bandwidth_mbps: mid(|r| r.bandwidth_mbps),
        llcm_bandwidth: mid(|r| r.llcm_bandwidth),
        stalls_l2_miss: mid(|r| r.stalls_l2_miss),
        stalls_l3_miss: mid(|r| r.stalls_l3_miss),
        stalls_total: mid(|r| r.stalls_total),
        stalls_store_buf: mid(|r| r.stalls_store_buf),
    }
}

/// Reads the apps of a mix file for measuring (each app's `profile`, else
/// its name, names its rows).
pub fn apps_of_mix(path: &Path) -> Result<Vec<MixApp>, Error> {
    Ok(crate::linux::mix::MixFile::read(path)?.apps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apps_parse_and_refuse() {
        let a = parse_app("xz=xz -9 -c data.txt").unwrap();
        assert_eq!(a.name, "xz");
        assert_eq!(a.argv, ["sh", "-c", "xz -9 -c data.txt"]);
        for (bad, words) in [
            ("xz", "expected NAME=COMMAND"),
            ("=sleep 1", "non-empty"),
            ("a,b=sleep 1", "without commas"),
            ("xz=  ", "command after '=' is empty"),
        ] {
            let e = parse_app(bad).unwrap_err();
            assert!(e.contains(words), "{bad}: {e}");
        }
    }

    #[test]
    fn rows_are_ratios_and_repeats_take_the_median() {
        let t = Totals {
            instructions: 2e6,
            cycles: 4e6,
            references: 4e4,
            misses: 1e4,
            stall_cycles: 1e6,
            occupancy_cycles: 4e6 * 2048.0,
            memory_bytes: 64e6,
            wall: Duration::from_secs(2),
        };
        let r = row("a", 3, &t, 64, true);
        assert_eq!((r.ipc, r.llcmpki, r.llcrpki), (0.5, 5.0, 20.0));
        assert_eq!((r.llcmpkc, r.llc_usage_kb), (2.5, 2.0));
        assert_eq!((r.bandwidth_mbps, r.llcm_bandwidth), (32.0, 0.32));
        assert_eq!(r.stalls_l2_miss, 0.25);
        assert_eq!(row("a", 3, &t, 64, false).stalls_l2_miss, 0.0);
        let mut slow = r.clone();
        slow.ipc = 0.1;
        let mut fast = r.clone();
        fast.ipc = 0.9;
        assert_eq!(median(&[slow.clone(), fast.clone(), r.clone()]).ipc, 0.5);
        assert_eq!(median(&[slow, fast]).ipc, 0.5);
    }
}
