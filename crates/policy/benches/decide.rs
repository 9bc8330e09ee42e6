//! Decision time of LFOC, LFOC+ and KPart for mixes of 4 to 11 apps (LFOC's
//! Table 2), and the per-interval step of online LFOC for 4 to 16 apps.
//!
//! Apps are drawn deterministically from PBBCache's `metrics.csv` (in
//! `../shared/data/pbbcache/`), or synthetic curves when that file is absent.
//! Only the decision is measured: the curves are already in memory.
//!
//! The online step (`lfoc-online/step`) is one `on_interval` of a
//! controller whose apps are all classified, on an interval that ends a
//! monitoring period for every app and a repartitioning period: the class
//! heuristics of every app and LFOC's clustering run, the worst case of a
//! step without sampling.

// `criterion_group!` defines an undocumented `pub fn benches`.
#![allow(missing_docs)]

use cachepart_machine::{
    AppCurves, Axis, Interval, Machine, MachineError, Plan, Platform, Responder,
};
use cachepart_machine::{AppEvent, EventKind, Sample};
use cachepart_policy::{Controller, Kpart, Lfoc, LfocOnline, LfocOnlineParams, LfocPlus, Policy};
use cachepart_profile::MetricsTable;
use criterion::{black_box, criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};

/// A machine that only serves curves.
struct Curves {
    platform: Platform,
    curves: Vec<AppCurves>,
}

impl Machine for Curves {
    fn platform(&self) -> &Platform {
        &self.platform
    }
    fn alone_curves_on(&mut self, axis: &Axis) -> Result<&[AppCurves], MachineError> {
        match axis {
            Axis::Ways => Ok(&self.curves),
            Axis::Colors { .. } => Err(MachineError::Unsupported("colors".into())),
        }
    }
    fn apply(&mut self, _: &Plan) -> Result<(), MachineError> {
        Ok(())
    }
    fn run_interval(&mut self, _: Responder<'_>) -> Result<Interval, MachineError> {
        Err(MachineError::Unsupported("bench machine".into()))
    }
}

/// A small deterministic generator (xorshift) for synthetic curves.
fn synthetic(n: usize, ways: usize) -> Vec<AppCurves> {
    let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|a| {
            let base = 0.3 + 2.0 * next();
            let gain = 0.5 * next();
            let miss = 30.0 * next();
            let ipc: Vec<f64> = (1..=ways)
                .map(|w| base * (1.0 + gain * (1.0 - (-(w as f64) / 3.0).exp())))
                .collect();
            let mpkc: Vec<f64> = (1..=ways).map(|w| miss / (w as f64).sqrt()).collect();
            let mpki = mpkc.iter().zip(&ipc).map(|(m, i)| m / i).collect();
            let bw = mpkc.iter().map(|m| m * 64.0).collect();
            AppCurves::new(&format!("app{a}"), ipc, mpki, mpkc, bw)
        })
        .collect()
}

/// `n` apps: every 5th program of metrics.csv from an offset, or synthetic.
fn mix(n: usize) -> (Vec<AppCurves>, u32, &'static str) {
    let metrics = cachepart_testkit::shared_dir().join("data/pbbcache/metrics.csv");
    if let Ok(t) = MetricsTable::from_path(&metrics) {
        let apps = t.apps().len();
        let curves = (0..n).map(|i| t.curves((3 + 5 * i) % apps)).collect();
        (curves, t.ways() as u32, "metrics.csv")
    } else {
        (synthetic(n, 11), 11, "synthetic")
    }
}

fn bench(c: &mut Criterion) {
    for (name, mut policy) in [
        ("lfoc", Box::new(Lfoc::default()) as Box<dyn Policy>),
        ("lfoc+", Box::new(LfocPlus::default())),
        ("kpart", Box::new(Kpart)),
    ] {
        let mut g = c.benchmark_group(format!("decide/{name}"));
        for n in 4..=11 {
            let (curves, ways, source) = mix(n);
            let mut m = Curves {
                platform: Platform::with_ways("bench", ways),
                curves,
            };
            g.bench_with_input(BenchmarkId::new(source, n), &n, |b, _| {
                b.iter(|| black_box(policy.decide(black_box(&mut m)).unwrap()))
            });
        }
        g.finish();
    }
}

/// An interval in which app `a` of `n` behaves as light (`a` even) or
/// streaming (`a` odd), whatever its ways.
fn interval(index: u64, n: usize) -> Interval {
    let samples = (0..n)
        .map(|app| {
            let mpkc = if app % 2 == 0 { 0.5 } else { 30.0 };
            let misses = mpkc * 1000.0;
            Sample {
                app,
                instructions: 1e6,
                cycles: 1e6,
                llc_references: if app % 2 == 0 { misses / 0.01 } else { misses },
                llc_misses: misses,
                ran: true,
                ..Sample::default()
            }
        })
        .collect();
    Interval {
        index,
        end_cycles: (index + 1) * 1_000_000,
        samples,
        events: Vec::new(),
    }
}

fn bench_online(c: &mut Criterion) {
    let mut g = c.benchmark_group("lfoc-online/step");
    for n in [4usize, 8, 11, 16] {
        let params = LfocOnlineParams {
            window_instructions: 1e6,
            period_instructions: 1e6,
            history: 5,
            repartition_cycles: 1_000_000,
            ..LfocOnlineParams::default()
        };
        let mut ctl = LfocOnline::new(params, n, Some(1_000_000)).unwrap();
        let mut m = Curves {
            platform: Platform::with_ways("bench", 11),
            curves: Vec::new(),
        };
        ctl.start(&mut m).unwrap();
        for app in 0..n {
            let e = AppEvent {
                app,
                kind: EventKind::Started,
                at_cycles: 0,
                core: None,
            };
            ctl.on_event(&e).unwrap();
        }
        // run until every app is classified and monitored
        let mut i = 0;
        while i < 20 * n as u64 + 50 {
            ctl.on_interval(&interval(i, n)).unwrap();
            i += 1;
        }
        // each measured step is a new interval (a later clock), so that the
        // repartitioning period ends at every one
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter_batched(
                || {
                    i += 1;
                    interval(i, n)
                },
                |step| black_box(ctl.on_interval(black_box(&step)).unwrap()),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench, bench_online);
criterion_main!(benches);
