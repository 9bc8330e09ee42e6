//! Duty-cycle modulation and per-app prefetcher words (Zhang et al.'s
//! execution throttling): a compute-bound app at 4/8 runs at half speed,
//! a DRAM-bound one barely slows; register writes cost what the platform
//! says; settings the platform cannot run are refused, naming the field.

use std::sync::Arc;

use cachepart_machine::{Action, AppThrottle, Duty, Machine};
use cachepart_sim::memory::MemoryConfig;
use cachepart_sim::system::{
    AppSpec, AppTotals, ClockModulation, PlatformConfig, SimMachine, System,
};
use cachepart_sim::{CacheConfig, HierarchyConfig};
use cachepart_trace::synth::SynthConfig;

fn platform(modulation: Option<ClockModulation>) -> PlatformConfig {
    let mut core = HierarchyConfig::split_l1(CacheConfig::lru(32 << 10, 8, 64));
    core.l2 = Some(CacheConfig::lru(256 << 10, 8, 64));
    PlatformConfig {
        clock_modulation: modulation,
        ..PlatformConfig::new(
            "duty-test",
            2,
            core,
            CacheConfig::lru(1 << 20, 16, 64),
            MemoryConfig::aged(256 << 20, 5),
        )
    }
}

fn synth(json: &str) -> Arc<SynthConfig> {
    Arc::new(serde_json::from_str(json).unwrap())
}

/// Uniform accesses over 8 KiB: every access hits the L1 once warm.
fn l1_resident() -> Arc<SynthConfig> {
    synth(
        r#"{"seed": 1, "accesses": 400000,
            "pattern": {"class": "light", "working-set-bytes": 8192}}"#,
    )
}

/// A pointer chase over 64 MiB: nearly every access goes to memory.
fn dram_bound() -> Arc<SynthConfig> {
    synth(
        r#"{"seed": 2, "accesses": 60000,
            "pattern": {"class": "cache-sensitive", "working-set-bytes": 67108864,
                        "distribution": "pointer-chase"}}"#,
    )
}

fn run(p: &PlatformConfig, spec: AppSpec) -> AppTotals {
    let mut sys = System::new(p, vec![spec], 1).unwrap();
    sys.run_to_end(1_000_000, |_| {}).unwrap();
    sys.totals().remove(0)
}

fn duty(s: &str) -> Duty {
    s.parse().unwrap()
}

#[test]
fn half_duty_halves_compute_but_not_memory_latency() {
    let p = platform(Some(ClockModulation::default()));
    let at = |src: Arc<SynthConfig>, d: &str| {
        let mut spec = AppSpec::new("a", src);
        spec.duty = duty(d);
        run(&p, spec)
    };
    let full = at(l1_resident(), "8/8");
    let half = at(l1_resident(), "4/8");
    assert_eq!(full.instructions, half.instructions);
    assert_eq!(full.llc_misses, half.llc_misses);
    let ratio = half.cycles / full.cycles;
    assert!(
        ratio > 1.95 && ratio <= 2.0,
        "L1-resident at 4/8: {ratio:.4}x the cycles of 8/8"
    );
    // Exactly: the core-clocked part doubles, the cold misses' LLC and
    // memory latencies do not.
    let uncore = full.l2_miss_stall_cycles;
    let want = 2.0 * (full.cycles - uncore) + uncore;
    assert!(
        (half.cycles - want).abs() / want < 0.005,
        "{} cycles at 4/8, expected {want:.0}",
        half.cycles
    );

    let full = at(dram_bound(), "8/8");
    let half = at(dram_bound(), "4/8");
    assert!(full.memory_stall_cycles > 0.8 * full.cycles, "{full:?}");
    let ratio = half.cycles / full.cycles;
    assert!(
        ratio < 1.2,
        "DRAM-bound at 4/8: {ratio:.4}x the cycles of 8/8 (its misses run on while the core is halted)"
    );
    assert!(ratio > 1.0, "the compute part does slow down: {ratio:.4}");
    // The same rule, plus a wait of a few cycles when a miss returns
    // while the core is halted.
    let uncore = full.l2_miss_stall_cycles;
    let want = 2.0 * (full.cycles - uncore) + uncore;
    assert!(
        (half.cycles - want).abs() / want < 0.02,
        "{} cycles at 4/8, expected about {want:.0}",
        half.cycles
    );

    // Each step slows the compute-bound app further.
    let steps: Vec<f64> = (1..=8)
        .map(|on| at(l1_resident(), &format!("{on}/8")).cycles)
        .collect();
    assert!(steps.windows(2).all(|w| w[0] > w[1]), "{steps:?}");
}

#[test]
fn longer_periods_make_dram_bound_apps_wait() {
    // With a period far longer than a miss, a miss that returns while the
    // core is halted waits for the next running part.
    let long = ClockModulation {
        period_cycles: Some(30_000),
        ..ClockModulation::default()
    };
    let mut spec = AppSpec::new("a", dram_bound());
    spec.duty = duty("4/8");
    let gated = run(&platform(Some(ClockModulation::default())), spec.clone());
    let bursty = run(&platform(Some(long)), spec);
    assert!(
        bursty.cycles > 1.5 * gated.cycles,
        "{} vs {}",
        bursty.cycles,
        gated.cycles
    );
}

#[test]
fn register_writes_cost_the_core_and_full_speed_is_unchanged() {
    let p = platform(Some(ClockModulation::default()));
    // Two apps time-sliced on one core with different duty cycles: every
    // switch rewrites the register.
    let two = |d0: &str, d1: &str, write: u64| {
        let mut p = p.clone();
        p.clock_modulation.as_mut().unwrap().msr_write_cycles = write;
        p.timing.quantum_cycles = 100_000;
        let mut a = AppSpec::new("a", l1_resident());
        a.duty = duty(d0);
        let mut b = AppSpec::new("b", l1_resident());
        b.duty = duty(d1);
        let mut sys = System::new(&p, vec![a, b], 1).unwrap();
        let mut intervals = 0u64;
        sys.run_to_end(1_000_000, |_| intervals += 1).unwrap();
        (sys.totals(), intervals)
    };
    let (free, free_end) = two("8/8", "4/8", 0);
    let (costly, costly_end) = two("8/8", "4/8", 100_000);
    // The writes are charged to the core, not to the apps: the apps do the
    // same work, but finish later in global time (about 25 switches of
    // 100,000 cycles each here).
    assert_eq!(free[0].instructions, costly[0].instructions);
    assert!(free[0].context_switches >= 10, "{:?}", free[0]);
    assert!(
        costly_end >= free_end + 2,
        "{costly_end} intervals with costly writes, {free_end} without"
    );
    let (same, _) = two("8/8", "8/8", 100_000);
    let (same_free, _) = two("8/8", "8/8", 0);
    assert_eq!(
        serde_json::to_string(&same).unwrap(),
        serde_json::to_string(&same_free).unwrap(),
        "equal settings never write the register"
    );

    // Without a duty cycle, the platform section changes nothing.
    let spec = AppSpec::new("a", dram_bound());
    let with = run(&p, spec.clone());
    let without = run(&platform(None), spec);
    assert_eq!(
        serde_json::to_string(&with).unwrap(),
        serde_json::to_string(&without).unwrap()
    );
}

#[test]
fn a_controller_throttles_a_running_app() {
    let p = platform(Some(ClockModulation::default()));
    let apps = vec![
        AppSpec::new("a", l1_resident()).with_limit(3_000_000, true),
        AppSpec::new("b", l1_resident())
            .on_core(1)
            .with_limit(3_000_000, true),
    ];
    let mut m = SimMachine::new(p, apps, 1, 500_000).unwrap();
    let first = m.run_interval(&mut |_| Vec::new()).unwrap();
    let ipc = |s: &cachepart_machine::Sample| s.instructions / s.cycles;
    let before = ipc(&first.samples[0]) / ipc(&first.samples[1]);
    assert!((before - 1.0).abs() < 0.05, "{before}");
    m.act(&Action::Throttle(AppThrottle::duty(0, duty("2/8"))))
        .unwrap();
    let next = m.run_interval(&mut |_| Vec::new()).unwrap();
    let after = next.samples[0].instructions / next.samples[1].instructions;
    assert!(
        (after - 0.25).abs() < 0.03,
        "app 0 at 2/8 ran {after:.3}x app 1's instructions"
    );
    assert_eq!(m.system().app_duty(0), Some(duty("2/8")));
}

#[test]
fn settings_the_platform_cannot_run_are_refused() {
    let refuse = |p: &PlatformConfig, spec: AppSpec, want: &[&str]| {
        let msg = match System::new(p, vec![spec], 1) {
            Ok(_) => panic!("accepted"),
            Err(e) => e.to_string(),
        };
        for w in want {
            assert!(msg.contains(w), "{msg:?} lacks {w:?}");
        }
    };
    let mut spec = AppSpec::new("a", l1_resident());
    spec.duty = duty("4/8");
    refuse(
        &platform(None),
        spec,
        &["app a: duty", "4/8", "no duty-cycle modulation"],
    );
    let mut spec = AppSpec::new("a", l1_resident());
    spec.duty = duty("3/16");
    refuse(
        &platform(Some(ClockModulation::default())),
        spec,
        &["app a: duty", "3/16", "8 steps"],
    );
    let mut spec = AppSpec::new("a", l1_resident());
    spec.prefetch_word = Some(0x4);
    refuse(
        &platform(None),
        spec,
        &["app a: prefetchers", "no prefetchers on"],
    );
    let mut p = platform(None);
    p.prefetchers = cachepart_sim::prefetch::PrefetchPlatform {
        available: vec!["l2-streamer".into()],
        run_word: Some(0),
        ..Default::default()
    };
    let mut spec = AppSpec::new("a", l1_resident());
    spec.prefetch_word = Some(0x100);
    refuse(&p, spec, &["app a: prefetchers", "reserved"]);
    // A 16-step platform takes eighths too.
    let sixteen = ClockModulation {
        steps: 16,
        ..ClockModulation::default()
    };
    let mut spec = AppSpec::new("a", l1_resident());
    spec.duty = duty("4/8");
    assert!(System::new(&platform(Some(sixteen)), vec![spec], 1).is_ok());
}
