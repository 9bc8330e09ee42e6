//! The out-of-order window (`[timing] window`): memory-level parallelism
//! derived from the trace. A pointer chase with dependency hints gets no
//! overlap; independent misses overlap up to the miss buffers or the
//! ROB; a bigger window never makes a run slower; a full store buffer
//! stalls; bad values and a hand-set `mlp` are refused, naming the field.

use std::sync::Arc;

use cachepart_sim::memory::{HugePages, MemoryConfig};
use cachepart_sim::system::{
    AppSpec, AppTiming, AppTotals, PlatformConfig, RecordsSource, System, TimingConfig,
    WindowConfig,
};
use cachepart_sim::{CacheConfig, HierarchyConfig};
use cachepart_trace::{Kind, Record};
use proptest::prelude::*;

/// LLC hit 40 cycles, memory 40 + 80 ns x 3 GHz = 280 cycles, flat DRAM
/// latency (no queueing), so that times per miss are exact.
const MEM_CYCLES: f64 = 280.0;

fn platform(window: Option<WindowConfig>) -> PlatformConfig {
    let core = HierarchyConfig::split_l1(CacheConfig::lru(32 << 10, 8, 64));
    PlatformConfig {
        timing: TimingConfig {
            llc_cycles: 40,
            dram_ns: 80.0,
            dram_queue_factor: 0.0,
            window,
            ..TimingConfig::default()
        },
        ..PlatformConfig::new(
            "window-test",
            1,
            core,
            CacheConfig::lru(256 << 10, 16, 64),
            MemoryConfig {
                aging: None,
                ..MemoryConfig::aged(256 << 20, 1)
            },
        )
    }
}

fn window(rob: u32, mshrs: u32, sb: u32) -> Option<WindowConfig> {
    Some(WindowConfig {
        rob_entries: rob,
        mshrs,
        store_buffer_entries: sb,
    })
}

fn run(p: &PlatformConfig, records: Vec<Record>) -> AppTotals {
    let mut spec = AppSpec::new("a", Arc::new(RecordsSource::new(records)));
    // Superpages: a handful of page walks, so that times are the misses'.
    spec.huge_pages = HugePages::Always;
    let mut sys = System::new(p, vec![spec], 1).unwrap();
    sys.run_to_end(1_000_000, |_| {}).unwrap();
    sys.totals().remove(0)
}

/// `n` accesses of `kind`, one instruction apart, each to a line of a
/// 16 MiB region visited in a scattered order (every one an LLC miss).
fn scattered(kind: Kind, n: u64) -> Vec<Record> {
    let lines = 1u64 << 18;
    (0..n)
        .map(|i| {
            let line = (i * 0x9e37_79b1) % lines;
            Record::access(kind, 0x1000_0000 + line * 64, 8, 1).unwrap()
        })
        .collect()
}

fn per_miss(t: &AppTotals) -> f64 {
    t.cycles / t.llc_misses as f64
}

#[test]
fn a_hinted_pointer_chase_gets_no_overlap() {
    let p = platform(window(224, 10, 56));
    let chase = run(&p, scattered(Kind::DepLoad, 20_000));
    assert!(chase.llc_misses >= 19_900, "{chase:?}");
    // Each miss waits for the one before: its whole latency, plus the
    // instruction between them.
    let c = per_miss(&chase);
    assert!((MEM_CYCLES..MEM_CYCLES + 3.0).contains(&c), "{c}");
    let stall = chase.memory_stall_cycles / chase.llc_misses as f64;
    assert!(stall > MEM_CYCLES - 3.0 && stall <= MEM_CYCLES, "{stall}");
    assert!(chase.stall_cycles >= chase.l2_miss_stall_cycles);
    assert!(chase.l2_miss_stall_cycles >= chase.memory_stall_cycles);
    // The same loads without hints overlap, ten at a time (the miss
    // buffers; the ROB would allow 224).
    let free = run(&p, scattered(Kind::Load, 20_000));
    assert_eq!(free.llc_misses, chase.llc_misses);
    let f = per_miss(&free);
    assert!((f - MEM_CYCLES / 10.0).abs() < 1.5, "{f}");
}

#[test]
fn independent_misses_overlap_up_to_the_buffers_or_the_rob() {
    let loads = scattered(Kind::Load, 20_000);
    for (rob, mshrs, want) in [
        (224, 10, MEM_CYCLES / 10.0),
        (224, 4, MEM_CYCLES / 4.0),
        // One instruction per load: a ROB of 5 holds 5 misses.
        (5, 10, MEM_CYCLES / 5.0),
        (1, 10, MEM_CYCLES),
    ] {
        let t = run(&platform(window(rob, mshrs, 56)), loads.clone());
        let got = per_miss(&t);
        assert!(
            (got - want).abs() < want * 0.02 + 1.5,
            "rob {rob} mshrs {mshrs}: {got} cycles per miss, want {want}"
        );
    }
    // The flat model charges each miss its whole latency (mlp 1).
    let flat = run(&platform(None), loads);
    let got = per_miss(&flat);
    assert!((got - (MEM_CYCLES + 1.0)).abs() < 1.5, "{got}");
}

#[test]
fn a_full_store_buffer_stalls() {
    let stores = scattered(Kind::Store, 20_000);
    // Ten buffers: stores complete at 10 per 280 cycles whatever the
    // store buffer, so the instruction stream (one per store) outruns
    // them; a buffer of 56 only delays the stall.
    let small = run(&platform(window(224, 10, 2)), stores.clone());
    let big = run(&platform(window(224, 10, 56)), stores.clone());
    let many = run(&platform(window(224, 4096, 4096)), stores.clone());
    assert!(small.stall_cycles > 0.0 && small.memory_stall_cycles > 0.0);
    assert!(small.cycles >= big.cycles && big.cycles >= many.cycles);
    // Two entries: two stores in flight at once.
    let s = per_miss(&small);
    assert!((s - MEM_CYCLES / 2.0).abs() < 3.0, "{s}");
    // With room for every store, the core never waits until the end
    // (the other stalls are its few page walks, 30 cycles each).
    let m = many.cycles - many.stall_cycles;
    assert!(many.memory_stall_cycles <= MEM_CYCLES, "{many:?}");
    let walks = many.stall_cycles - many.memory_stall_cycles;
    assert!(walks <= 30.0 * many.tlb_misses as f64, "{many:?}");
    assert!((m - 20_000.0).abs() < 1.0, "{m}");
    // The flat model: stores never stall (its stalls are page walks).
    let flat = run(&platform(None), stores);
    assert_eq!(
        (flat.memory_stall_cycles, flat.l2_miss_stall_cycles),
        (0.0, 0.0)
    );
    assert_eq!(flat.stall_cycles, 30.0 * flat.tlb_misses as f64);
}

#[test]
fn window_values_are_checked_naming_the_field() {
    for (w, field) in [
        (window(0, 10, 56), "timing.window.rob-entries"),
        (window(224, 0, 56), "timing.window.mshrs"),
        (window(224, 10, 0), "timing.window.store-buffer-entries"),
        (window(224, 100_000, 56), "timing.window.mshrs"),
    ] {
        let p = platform(w);
        let spec = AppSpec::new("a", Arc::new(RecordsSource::new(scattered(Kind::Load, 4))));
        let err = System::new(&p, vec![spec], 1).unwrap_err().to_string();
        assert!(err.contains(field), "{err}");
    }
    let text = |window: &str| {
        format!(
            "name = \"w\"\ncores = 1\n[core]\nl1i = {{ size-bytes = 32768, ways = 8, line-bytes = 64 }}\n\
             l1d = {{ size-bytes = 32768, ways = 8, line-bytes = 64 }}\n\
             [llc]\nsize-bytes = 1048576\nways = 16\nline-bytes = 64\n\
             [memory]\nsize-bytes = 268435456\n[timing]\n{window}\n"
        )
    };
    let p = PlatformConfig::from_toml_str(&text(
        "window = { rob-entries = 96, mshrs = 8, store-buffer-entries = 20 }",
    ))
    .unwrap();
    assert_eq!(p.timing.window, window(96, 8, 20));
    for bad in [
        "window = { rob-entries = 96, mshrs = 8 }",
        "window = { rob-entries = 96, mshrs = 8, store-buffer-entries = 20, lsq = 4 }",
        "window = { rob-entries = -1, mshrs = 8, store-buffer-entries = 20 }",
    ] {
        let err = PlatformConfig::from_toml_str(&text(bad))
            .unwrap_err()
            .to_string();
        assert!(err.contains("window"), "{bad}: {err}");
    }
    // Without the key the platform is the flat model, and writes no key.
    let flat = PlatformConfig::from_toml_str(&text("")).unwrap();
    assert_eq!(flat.timing.window, None);
    assert!(!serde_json::to_string(&flat).unwrap().contains("\"window\""));
}

#[test]
fn a_hand_set_mlp_is_refused_with_the_window() {
    let p = platform(window(224, 10, 56));
    let spec = AppSpec::new(
        "chase",
        Arc::new(RecordsSource::new(scattered(Kind::Load, 4))),
    )
    .with_timing(AppTiming::new(1.0, 4.0));
    let err = System::new(&p, vec![spec.clone()], 1)
        .unwrap_err()
        .to_string();
    assert!(err.contains("app chase: mlp"), "{err}");
    // The default (1) is accepted, and so is any mlp without the window.
    assert!(System::new(&platform(None), vec![spec], 1).is_ok());
    let spec = AppSpec::new(
        "chase",
        Arc::new(RecordsSource::new(scattered(Kind::Load, 4))),
    )
    .with_timing(AppTiming::new(0.5, 1.0));
    assert!(System::new(&p, vec![spec], 1).is_ok());
}

/// Two apps time-sliced on one core: the window drains at each switch,
/// so every miss's wait is charged to the app that issued it, and the
/// run is deterministic.
#[test]
fn misses_drain_at_context_switches() {
    let mut p = platform(window(224, 10, 56));
    p.timing.quantum_cycles = 50_000;
    let go = || {
        let a = AppSpec::new(
            "a",
            Arc::new(RecordsSource::new(scattered(Kind::Load, 20_000))),
        );
        let b = AppSpec::new(
            "b",
            Arc::new(RecordsSource::new(scattered(Kind::DepLoad, 5_000))),
        );
        let mut sys = System::new(&p, vec![a, b], 1).unwrap();
        sys.run_to_end(1_000_000, |_| {}).unwrap();
        sys.totals()
    };
    let t = go();
    assert!(t[0].context_switches > 5 && t[1].context_switches > 5);
    for a in &t {
        assert!(a.stall_cycles >= a.l2_miss_stall_cycles - 1e-9);
        assert!(a.l2_miss_stall_cycles >= a.memory_stall_cycles - 1e-9);
        assert!(a.cycles >= a.stall_cycles + a.instructions as f64 - 1e-9);
    }
    // The chase still pays each miss whole.
    let c = per_miss(&t[1]);
    assert!(c > MEM_CYCLES - 1.0, "{c}");
    assert_eq!(t, go());
}

fn any_trace() -> impl Strategy<Value = Vec<Record>> {
    proptest::collection::vec((0u8..4, 0u64..4096, 0u32..4), 1..400).prop_map(|v| {
        v.into_iter()
            .map(|(k, line, gap)| {
                let kind = [Kind::Load, Kind::DepLoad, Kind::Store, Kind::Modify][k as usize];
                Record::access(kind, 0x1000_0000 + line * 4096, 8, gap).unwrap()
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A bigger ROB, more miss buffers or a bigger store buffer never
    /// make a run slower (one core, DRAM latency fixed).
    #[test]
    fn a_bigger_window_is_never_slower(
        trace in any_trace(),
        rob in 1u32..64,
        mshrs in 1u32..8,
        sb in 1u32..8,
        more in 1u32..64,
    ) {
        let base = run(&platform(window(rob, mshrs, sb)), trace.clone()).cycles;
        for w in [
            window(rob + more, mshrs, sb),
            window(rob, mshrs + more, sb),
            window(rob, mshrs, sb + more),
        ] {
            let c = run(&platform(w), trace.clone()).cycles;
            prop_assert!(c <= base, "{:?}: {} > {}", w, c, base);
        }
    }
}
