//! Scheduling-quantum adjustment with an idle process (Zhang et al.'s
//! software comparison): an L1-resident app whose idle process holds the
//! core as long as the app runs gets about half the wall-clock speed; the
//! idle time and the two switches of each turn are the platform's; a bad
//! setting or a shared core is refused, naming the field.

use std::sync::Arc;

use cachepart_machine::EventKind;
use cachepart_sim::memory::MemoryConfig;
use cachepart_sim::system::{AppSpec, AppTotals, IdleQuantum, PlatformConfig, System};
use cachepart_sim::{CacheConfig, HierarchyConfig};
use cachepart_trace::synth::SynthConfig;

fn platform() -> PlatformConfig {
    let mut core = HierarchyConfig::split_l1(CacheConfig::lru(32 << 10, 8, 64));
    core.l2 = Some(CacheConfig::lru(256 << 10, 8, 64));
    PlatformConfig::new(
        "quantum-test",
        2,
        core,
        CacheConfig::lru(1 << 20, 16, 64),
        MemoryConfig::aged(256 << 20, 5),
    )
}

/// Uniform accesses over 8 KiB: every access hits the L1 once warm.
fn l1_resident() -> Arc<SynthConfig> {
    Arc::new(
        serde_json::from_str(
            r#"{"seed": 1, "accesses": 400000,
                "pattern": {"class": "light", "working-set-bytes": 8192}}"#,
        )
        .unwrap(),
    )
}

fn quantum(run_cycles: u64, idle_cycles: u64) -> Option<IdleQuantum> {
    Some(IdleQuantum {
        run_cycles,
        idle_cycles,
    })
}

fn run(p: &PlatformConfig, q: Option<IdleQuantum>) -> (AppTotals, Vec<EventKind>) {
    let mut spec = AppSpec::new("a", l1_resident());
    spec.idle_quantum = q;
    let mut sys = System::new(p, vec![spec], 1).unwrap();
    let mut events = Vec::new();
    while !sys.is_done() {
        sys.run_interval(1_000_000).unwrap();
        events.extend(sys.take_events().into_iter().map(|e| e.kind));
    }
    (sys.totals().remove(0), events)
}

#[test]
fn run_equal_to_idle_halves_an_l1_resident_apps_speed() {
    let mut p = platform();
    p.timing.context_switch_cycles = 1_000;
    let (full, _) = run(&p, None);
    let (half, events) = run(&p, quantum(100_000, 100_000));
    assert_eq!(full.instructions, half.instructions);
    let ratio = half.ipc / full.ipc;
    assert!(
        ratio > 0.45 && ratio < 0.55,
        "IPC with run = idle: {ratio:.4} of full speed"
    );
    let turns = events.iter().filter(|k| **k == EventKind::Parked).count() as u64;
    assert!(turns > 3, "{turns} turns");
    assert_eq!(half.context_switches, 2 * turns);
    assert_eq!(
        events.iter().filter(|k| **k == EventKind::Resumed).count() as u64,
        turns
    );
    // Each turn adds the idle length and two 1,000-cycle switches (plus
    // the TLB refills after the flushes: the caches keep their contents).
    let added = |t: &AppTotals, idle: u64, turns: u64| {
        let want = full.cycles + (turns * (idle + 2_000)) as f64;
        t.cycles / want - 1.0
    };
    let e = added(&half, 100_000, turns);
    assert!((0.0..0.01).contains(&e), "{e:.5} above the expected cycles");
    // A short idle share costs about that share.
    let (light, ev) = run(&p, quantum(100_000, 20_000));
    let turns = ev.iter().filter(|k| **k == EventKind::Parked).count() as u64;
    let e = added(&light, 20_000, turns);
    assert!((0.0..0.01).contains(&e), "{e:.5} above the expected cycles");
    let r = light.ipc / full.ipc;
    assert!(r > 0.8 && r < 0.9, "IPC with 100/20: {r:.4}");
}

#[test]
fn bad_settings_and_shared_cores_name_the_field() {
    let p = platform();
    let err = |specs: Vec<AppSpec>| System::new(&p, specs, 1).err().unwrap().to_string();
    let mut a = AppSpec::new("a", l1_resident());
    a.idle_quantum = quantum(100, 0);
    let e = err(vec![a.clone()]);
    assert!(e.contains("app a: quantum.idle-cycles"), "{e}");
    a.idle_quantum = quantum(0, 10);
    let e = err(vec![a.clone()]);
    assert!(e.contains("app a: quantum.run-cycles"), "{e}");
    a.idle_quantum = quantum(100, 10);
    let b = AppSpec::new("b", l1_resident());
    let e = err(vec![a.clone(), b.clone()]);
    assert!(e.contains("app a: quantum") && e.contains("core 0"), "{e}");
    // Moving another app onto its core is refused too.
    let mut sys = System::new(&p, vec![a, b.on_core(1)], 1).unwrap();
    let e = sys.place_app(1, 0).unwrap_err().to_string();
    assert!(
        e.contains("app b: core") && e.contains("idle process"),
        "{e}"
    );
}
