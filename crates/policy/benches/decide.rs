//! Decision time of LFOC, LFOC+ and KPart for mixes of 4 to 11 apps.
//!
//! Apps are drawn deterministically from PBBCache's `metrics.csv` (in
//! `../shared/data/pbbcache/`), or synthetic curves when that file is absent.
//! Only the decision is measured: the curves are already in memory.

// `criterion_group!` defines an undocumented `pub fn benches`.
#![allow(missing_docs)]

use cachepart_machine::{
    AppCurves, Axis, Interval, Machine, MachineError, Plan, Platform, Responder,
};
use cachepart_policy::{Kpart, Lfoc, LfocPlus, Policy};
use cachepart_profile::MetricsTable;
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};

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

criterion_group!(benches, bench);
criterion_main!(benches);
