//! The multicore system: counting, equivalence with a bare physical core,
//! determinism, timing (faster cores issue more LLC accesses), time
//! slicing, slices and occupancy, errors, alone runs and the machine.

use std::sync::Arc;

use cachepart_machine::{EventKind, Machine, Plan};
use cachepart_sim::memory::{AddressSpace, HugePages, MemoryConfig, PhysicalCore, Tlb};
use cachepart_sim::system::{
    alone_sweep, run_alone, AppSpec, AppTiming, CptFile, PlatformConfig, RecordsSource, SimMachine,
    System, SystemError,
};
use cachepart_sim::{Cache, CacheConfig, Hierarchy, HierarchyConfig, PolicyKind};
use cachepart_trace::synth::SynthConfig;
use cachepart_trace::{Kind, Record};
use cachepart_units::WayMask;
use proptest::prelude::*;

fn platform(cores: u32, llc: CacheConfig) -> PlatformConfig {
    let mut core = HierarchyConfig::split_l1(CacheConfig::lru(8 << 10, 4, 64));
    core.l2 = Some(CacheConfig::lru(32 << 10, 4, 64));
    PlatformConfig::new("test", cores, core, llc, MemoryConfig::aged(64 << 20, 5))
}

fn small_llc() -> CacheConfig {
    CacheConfig::lru(256 << 10, 8, 64)
}

fn synth(json: &str) -> Arc<SynthConfig> {
    Arc::new(serde_json::from_str(json).unwrap())
}

fn sensitive(seed: u64, accesses: u64, ws: u64) -> Arc<SynthConfig> {
    synth(&format!(
        r#"{{"seed": {seed}, "accesses": {accesses},
            "pattern": {{"class": "cache-sensitive", "working-set-bytes": {ws}, "distribution": "zipf"}}}}"#
    ))
}

fn streaming(seed: u64, accesses: u64) -> Arc<SynthConfig> {
    synth(&format!(
        r#"{{"seed": {seed}, "accesses": {accesses},
            "pattern": {{"class": "streaming", "array-bytes": 8388608}}}}"#
    ))
}

fn records(src: &SynthConfig) -> Vec<Record> {
    src.generator().unwrap().collect()
}

/// One app alone in the System counts exactly what a bare physical core
/// counts on the same trace, platform and memory.
#[test]
fn one_app_equals_a_physical_core() {
    let p = platform(1, small_llc());
    let src = sensitive(3, 60_000, 1 << 20);
    let recs = records(&src);
    let mut sys = System::new(&p, vec![AppSpec::new("a", src)], 1).unwrap();
    sys.run_to_end(1_000_000, |_| {}).unwrap();
    assert!(sys.is_done());

    let mut llc = Cache::new(&p.llc).unwrap();
    let hier = Hierarchy::new(&p.core, &llc).unwrap();
    let mut mem = p.memory.build().unwrap();
    let mut pc = PhysicalCore::new(
        hier,
        Tlb::new(&p.tlb).unwrap(),
        AddressSpace::new(0, HugePages::Never),
    );
    pc.run(&mut llc, &mut *mem, recs.iter().copied()).unwrap();
    let want = pc.stats();
    let got = sys.core_stats(0).unwrap();
    assert_eq!(got.hierarchy, want.hierarchy);
    assert_eq!(got.tlb, want.tlb);
    assert_eq!(sys.llc().stats(), llc.stats());
    let t = &sys.totals()[0];
    assert_eq!(t.instructions, want.hierarchy.instructions);
    assert_eq!(t.llc_misses, want.hierarchy.llc.total_misses());
    assert_eq!(t.llc_references, want.hierarchy.llc.total_refs());
    assert_eq!(t.memory_bytes, want.hierarchy.mem.bytes(64));
    assert_eq!(t.tlb_misses, want.tlb.walks);
    assert!(t.done && t.ipc > 0.0 && t.ipc <= 1.0);
}

fn four_apps(p: &PlatformConfig, restart_limit: Option<u64>) -> Vec<AppSpec> {
    let srcs = [
        sensitive(1, 30_000, 512 << 10),
        streaming(2, 30_000),
        sensitive(3, 30_000, 64 << 10),
        synth(
            r#"{"seed": 4, "accesses": 30000, "pattern": {"class": "cache-sensitive",
                "working-set-bytes": 2097152, "distribution": "pointer-chase"}}"#,
        ),
    ];
    srcs.into_iter()
        .enumerate()
        .map(|(i, s)| {
            let mut a = AppSpec::new(format!("app{i}"), s).on_core(i as u32 % p.cores);
            if let Some(n) = restart_limit {
                a = a.with_limit(n, true);
            }
            a
        })
        .collect()
}

fn run_samples(p: &PlatformConfig, seed: u64) -> (String, String) {
    let mut sys = System::new(p, four_apps(p, Some(40_000)), seed).unwrap();
    let mut all = Vec::new();
    sys.run_to_end(50_000, |s| all.extend_from_slice(s))
        .unwrap();
    (
        serde_json::to_string(&all).unwrap(),
        serde_json::to_string(&sys.totals()).unwrap(),
    )
}

#[test]
fn same_seed_gives_identical_bytes() {
    let llc = small_llc().with_policy(PolicyKind::Random).with_slices(2);
    let p = platform(4, llc);
    let a = run_samples(&p, 11);
    assert_eq!(a, run_samples(&p, 11));
    assert!(a.0.len() > 1000);
}

#[test]
fn faster_core_issues_more_llc_accesses() {
    let p = platform(2, small_llc());
    // Mostly LLC hits: a 96 KiB working set per app, beyond the L2.
    let src = sensitive(9, 50_000, 96 << 10);
    let apps = vec![
        AppSpec::new("fast", src.clone())
            .with_timing(AppTiming::new(0.5, 2.0))
            .with_limit(u64::MAX / 2, true),
        AppSpec::new("slow", src)
            .on_core(1)
            .with_timing(AppTiming::new(3.0, 2.0))
            .with_limit(u64::MAX / 2, true),
    ];
    let mut sys = System::new(&p, apps, 0).unwrap();
    let s = sys.run_interval(2_000_000).unwrap();
    assert_eq!(sys.now(), 2_000_000);
    // Both ran the whole interval (within one record's time).
    for x in &s {
        assert!((x.cycles - 2_000_000.0).abs() < 5_000.0, "{x:?}");
    }
    assert!(
        s[0].llc_references > 1.5 * s[1].llc_references,
        "fast {} vs slow {}",
        s[0].llc_references,
        s[1].llc_references
    );
    assert!(s[0].instructions > s[1].instructions);
}

#[test]
fn time_slicing_shares_a_core() {
    let mut p = platform(1, small_llc());
    p.timing.quantum_cycles = 20_000;
    let apps = vec![
        AppSpec::new("a", sensitive(1, 20_000, 128 << 10)),
        AppSpec::new("b", sensitive(2, 20_000, 128 << 10)),
    ];
    let mut sys = System::new(&p, apps, 0).unwrap();
    let s = sys.run_interval(200_000).unwrap();
    assert!(s[0].instructions > 0.0 && s[1].instructions > 0.0, "{s:?}");
    // The core's time went to the two apps and the switches.
    let used = s[0].cycles + s[1].cycles;
    assert!(used <= 200_000.0 + 5_000.0 && used > 150_000.0, "{used}");
    sys.run_to_end(200_000, |_| {}).unwrap();
    let t = sys.totals();
    assert!(
        t[0].context_switches >= 2 && t[1].context_switches >= 2,
        "{t:?}"
    );
    assert!(t.iter().all(|a| a.done));
    // Without slicing (one app per core) nothing is switched.
    let mut two = platform(2, small_llc());
    two.timing.quantum_cycles = 20_000;
    let apps = vec![
        AppSpec::new("a", sensitive(1, 20_000, 128 << 10)),
        AppSpec::new("b", sensitive(2, 20_000, 128 << 10)).on_core(1),
    ];
    let mut sys = System::new(&two, apps, 0).unwrap();
    sys.run_to_end(200_000, |_| {}).unwrap();
    assert!(sys.totals().iter().all(|a| a.context_switches == 0));
}

#[test]
fn slices_one_is_unsliced_and_occupancy_fits() {
    let run = |llc: CacheConfig| {
        let p = platform(4, llc);
        let mut sys = System::new(&p, four_apps(&p, None), 3).unwrap();
        let mut occ_ok = true;
        let mut seen = [false; 4];
        let lines = (llc.size_bytes / 64) as f64;
        sys.run_to_end(20_000, |s| {
            let total: f64 = s.iter().map(|x| x.llc_occupancy_bytes / 64.0).sum();
            occ_ok &= total <= lines;
            for x in s {
                seen[x.app] |= x.llc_occupancy_bytes > 0.0;
            }
        })
        .unwrap();
        assert!(occ_ok && seen.iter().all(|&s| s), "{seen:?}");
        sys.totals()
    };
    let plain = run(small_llc());
    assert_eq!(plain, run(small_llc().with_slices(1)));
    let sliced = run(small_llc().with_slices(4));
    assert!(sliced.iter().map(|t| t.llc_occupancy_bytes).sum::<u64>() <= 256 << 10);
    assert_ne!(sliced, plain);
}

#[test]
fn llc_misses_never_rise_with_more_ways() {
    // Loads only: no write-backs, so the LLC's reference stream does not
    // depend on its contents, and LRU's stack property holds per set.
    let src = synth(
        r#"{"seed": 5, "accesses": 40000, "mix": {"store-fraction": 0.0},
            "pattern": {"class": "cache-sensitive", "working-set-bytes": 393216, "distribution": "zipf"}}"#,
    );
    let p = platform(1, small_llc());
    let app = AppSpec::new("z", src);
    let sweep = alone_sweep(&p, &app, 0).unwrap();
    assert_eq!(sweep.len(), 8);
    for w in sweep.windows(2) {
        assert!(w[1].llc_misses <= w[0].llc_misses, "{sweep:?}");
    }
    assert!(sweep[0].llc_misses > sweep[7].llc_misses);
    assert!(sweep[7].ipc > sweep[0].ipc);
    // The parallel sweep equals serial runs.
    for (w, t) in sweep.iter().enumerate() {
        assert_eq!(*t, run_alone(&p, &app, Some(w as u32 + 1), 0).unwrap());
    }
    assert_eq!(
        run_alone(&p, &app, None, 0).unwrap(),
        run_alone(&p, &app, Some(8), 0).unwrap()
    );
}

#[test]
fn streaming_loads_memory_and_raises_latency() {
    let mut p = platform(2, small_llc());
    p.timing.dram_bandwidth_gbps = 2.0;
    let apps = vec![
        AppSpec::new("s1", streaming(1, 100_000)).with_timing(AppTiming::new(0.3, 4.0)),
        AppSpec::new("s2", streaming(2, 100_000))
            .on_core(1)
            .with_timing(AppTiming::new(0.3, 4.0)),
    ];
    let mut sys = System::new(&p, apps, 0).unwrap();
    let base = sys.dram_latency_cycles();
    sys.run_interval(300_000).unwrap();
    assert!(
        sys.dram_latency_cycles() > base * 1.2,
        "{} vs {base}",
        sys.dram_latency_cycles()
    );
    let t = sys.totals();
    assert!(t[0].memory_stall_cycles > 0.0 && t[0].memory_bytes > 0);
}

#[test]
fn errors_name_the_app() {
    let p = platform(1, small_llc());
    // A missing file.
    let app = AppSpec::new("ghost", Arc::new(CptFile("/nonexistent/x.cpt".into())));
    let e = System::new(&p, vec![app], 0).unwrap_err();
    assert!(
        matches!(e, SystemError::Trace { ref app, .. } if app == "ghost"),
        "{e}"
    );
    // A truncated file is refused when the system opens it (its trailer
    // and index are checked then): the error has the app and a byte offset.
    let dir = std::env::temp_dir().join(format!("cachepart-system-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.cpt");
    sensitive(1, 200_000, 1 << 20).write(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let app = AppSpec::new("cut", Arc::new(CptFile(path)));
    let e = System::new(&p, vec![app], 0).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("app cut") && msg.contains("offset"), "{msg}");
    std::fs::remove_dir_all(&dir).ok();
    // A footprint larger than memory pages out (the app's own pages) and
    // finishes.
    let mut tiny = platform(1, small_llc());
    tiny.memory = MemoryConfig::aged(1 << 20, 1);
    let app = AppSpec::new("big", streaming(1, 400_000));
    let mut sys = System::new(&tiny, vec![app], 0).unwrap();
    let mut page_outs = 0;
    while !sys.is_done() {
        sys.run_interval(100_000).unwrap();
        page_outs = page_outs.max(sys.core_stats(0).unwrap().paging.page_outs);
    }
    assert!(page_outs > 0);
    // Bad masks, cores, timing.
    let mut app = AppSpec::new("m", streaming(1, 10));
    app.llc_mask = Some(WayMask(0x101));
    assert!(matches!(
        System::new(&p, vec![app], 0),
        Err(SystemError::Mask { .. })
    ));
    let app = AppSpec::new("c", streaming(1, 10)).on_core(3);
    assert!(System::new(&p, vec![app], 0).is_err());
    let app = AppSpec::new("t", streaming(1, 10)).with_timing(AppTiming::new(1.0, 0.0));
    assert!(System::new(&p, vec![app], 0).is_err());
    let mut sys = System::new(&p, vec![AppSpec::new("x", streaming(1, 10))], 0).unwrap();
    assert!(sys.set_llc_mask(0, WayMask(0)).is_err());
    assert!(sys.set_llc_mask(3, WayMask(1)).is_err());
    assert!(sys.set_llc_mask(0, WayMask(0x3)).is_ok());
}

#[test]
fn sim_machine_runs_plans() {
    let p = platform(2, small_llc());
    let apps = vec![
        AppSpec::new("a", sensitive(1, 20_000, 512 << 10)).with_limit(20_000, true),
        AppSpec::new("b", streaming(2, 20_000))
            .on_core(1)
            .with_limit(20_000, true),
    ];
    let mut m = SimMachine::new(p, apps, 0, 50_000).unwrap();
    assert_eq!(m.platform().ways, 8);
    let curves = m.alone_curves().unwrap().to_vec();
    assert_eq!(curves.len(), 2);
    assert!(curves
        .iter()
        .all(|c| c.ways() == 8 && c.ipc.iter().all(|&x| x > 0.0)));
    m.apply(&Plan::from_way_counts(&[6, 2])).unwrap();
    assert!(m.apply(&Plan::from_way_counts(&[6, 6])).is_err());
    // The plan takes effect: each app's LLC occupancy stays within the
    // ways of its mask, and the streaming app fills its two.
    let way_bytes = (small_llc().size_bytes / 8) as f64;
    let mut n = 0;
    let mut peak = [0.0f64; 2];
    while !m.is_done() {
        let iv = m.run_interval(&mut |_| Vec::new()).unwrap();
        assert_eq!((iv.index, iv.samples.len()), (n, 2));
        for s in &iv.samples {
            peak[s.app] = peak[s.app].max(s.llc_occupancy_bytes);
        }
        n += 1;
    }
    assert!(n > 1);
    assert!(
        peak[0] <= 6.0 * way_bytes && peak[1] <= 2.0 * way_bytes,
        "{peak:?}"
    );
    assert!(peak[1] > 1.0 * way_bytes, "{peak:?}");
}

#[test]
fn sim_machine_alone_curves_over_colors() {
    let mut p = platform(1, small_llc());
    p.memory.allocator = cachepart_sim::memory::AllocatorKind::Tam;
    let apps = vec![AppSpec::new("a", sensitive(1, 20_000, 256 << 10))];
    let mut m = SimMachine::new(p.clone(), apps.clone(), 0, 50_000).unwrap();
    let axis = cachepart_machine::Axis::Colors {
        counts: vec![1, 2, 4],
    };
    let c = m.alone_curves_on(&axis).unwrap()[0].clone();
    assert_eq!(c.ipc.len(), 3);
    // More colors, fewer misses; each point is its own alone run.
    assert!(c.llcmpki[0] > c.llcmpki[2], "{:?}", c.llcmpki);
    let one = cachepart_sim::system::run_alone_at(
        &p,
        &apps[0],
        cachepart_sim::system::AloneSize::Colors(2),
        0,
        None,
    )
    .unwrap();
    assert_eq!(c.ipc[1], one.totals.ipc);
    assert!(c.stalls_memory.as_ref().unwrap()[0] > 0.0);
    let bad = cachepart_machine::Axis::Colors { counts: vec![2, 1] };
    assert!(m.alone_curves_on(&bad).is_err());
}

#[test]
fn inclusive_llc_holds_every_private_line() {
    for cores in [1u32, 2] {
        let mut p = platform(cores, CacheConfig::lru(64 << 10, 4, 64));
        p.core.inclusion = cachepart_sim::Inclusion::Inclusive;
        let mut sys = System::new(&p, four_apps(&p, None), 0).unwrap();
        let mut checks = 0;
        while !sys.is_done() {
            sys.run_interval(20_000).unwrap();
            // Every line of every core's private levels is in the LLC
            // (other cores' copies are dropped at the end of each slice).
            for c in 0..cores as usize {
                for level in sys.core(c).unwrap().hierarchy().levels() {
                    for b in level.blocks() {
                        assert!(
                            sys.llc().contains(b),
                            "{cores} cores: core {c}: block {b:#x}"
                        );
                        checks += 1;
                    }
                }
            }
        }
        assert!(checks > 1000);
    }
}

fn records_trace() -> impl Strategy<Value = Vec<Record>> {
    prop::collection::vec((0u8..4, 0u64..(1 << 21), 1u32..=16, 0u32..4), 1..2000).prop_map(|v| {
        v.into_iter()
            .map(|(k, a, s, g)| {
                Record::access(Kind::from_code(k).unwrap(), 0x10_0000 + a, s, g).unwrap()
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Per core: L1 hits + misses = accesses after translation (records
    /// plus page splits); the cores' LLC references add up to the LLC's.
    #[test]
    fn hits_plus_misses_are_accesses(t0 in records_trace(), t1 in records_trace()) {
        let p = platform(2, small_llc());
        let apps = vec![
            AppSpec::new("a", Arc::new(RecordsSource::new(t0.clone()))),
            AppSpec::new("b", Arc::new(RecordsSource::new(t1.clone()))).on_core(1),
        ];
        let mut sys = System::new(&p, apps, 0).unwrap();
        sys.run_to_end(10_000, |_| {}).unwrap();
        let mut llc_refs = 0;
        for (c, t) in [t0, t1].iter().enumerate() {
            let s = sys.core_stats(c).unwrap();
            let h = s.hierarchy;
            let l1 = h.l1i.total_hits() + h.l1i.total_misses() + h.l1d.total_hits() + h.l1d.total_misses();
            prop_assert_eq!(l1, t.len() as u64 + s.split_accesses);
            prop_assert_eq!(h.l1i.total_refs() + h.l1d.total_refs(), l1);
            let l2 = h.l2.unwrap();
            prop_assert_eq!(l2.total_hits() + l2.total_misses(), l2.total_refs());
            llc_refs += h.llc.total_refs();
            let tot = &sys.totals()[c];
            prop_assert_eq!(tot.llc_references, h.llc.total_refs());
            prop_assert_eq!(tot.instructions, h.instructions);
        }
        prop_assert_eq!(llc_refs, sys.llc().stats().total_refs());
    }
}

fn colored_platform(cores: u32) -> PlatformConfig {
    // 256 KiB, 8 ways, 4 KiB pages: 8 colors; 64 MiB of memory.
    let mut p = platform(cores, small_llc());
    p.memory.allocator = cachepart_sim::memory::AllocatorKind::Coloris;
    p.memory.coloris.pool_bytes = 32 << 20;
    p.timing.quantum_cycles = 100_000;
    p
}

/// Every app's resident and paged-out pages, and the frames of all of
/// them: no frame mapped twice.
fn check_mappings(sys: &System) -> Vec<std::collections::BTreeSet<u64>> {
    let mut frames = std::collections::BTreeSet::new();
    let mut pages = Vec::new();
    for i in 0..sys.n_apps() {
        let mut set = std::collections::BTreeSet::new();
        if let Some(s) = sys.address_space(i) {
            for (size, vpn, f) in s.mappings() {
                assert_eq!(size, cachepart_sim::memory::PageSize::Small);
                assert!(frames.insert(f.0), "frame {} mapped twice", f.0);
                assert!(set.insert(vpn));
            }
            for vpn in s.swapped_pages() {
                assert!(set.insert(vpn), "page {vpn} both resident and swapped");
            }
        }
        pages.push(set);
    }
    pages
}

/// Every frame of a colored app is of its colors, or its page is marked
/// for a lazy move, or counted as a fallback.
fn check_colors(sys: &System) {
    let layout = *sys.allocator().color_layout().unwrap();
    for i in 0..sys.n_apps() {
        let (Some(s), Some(colors)) = (sys.address_space(i), sys.app_colors(i)) else {
            continue;
        };
        let fallbacks = sys.allocator().app_stats(i as u32).fallbacks;
        let outside = s
            .small_pages()
            .into_iter()
            .filter(|&(v, f)| !colors.contains(layout.color_of_frame(f)) && !s.is_marked(v))
            .count() as u64;
        assert!(
            outside <= fallbacks,
            "app {i}: {outside} frames out of {colors}"
        );
    }
}

#[test]
fn recoloring_moves_pages_charges_copies_and_loses_none() {
    use cachepart_sim::memory::{ExpandPolicy, RecolorConfig};
    let p = colored_platform(2);
    let apps = vec![
        AppSpec::new("a", sensitive(1, 400_000, 96 << 10)).on_core(1),
        AppSpec::new("b", sensitive(2, 400_000, 64 << 10)).on_core(0),
        AppSpec::new("c", sensitive(3, 400_000, 64 << 10)).on_core(0),
    ];
    let mut sys = System::new(&p, apps, 1).unwrap();
    let set = |s: &str| s.parse::<cachepart_units::IdSet>().unwrap();
    sys.set_app_colors(0, &set("0-1")).unwrap();
    sys.set_app_colors(1, &set("2-4")).unwrap();
    sys.set_app_colors(2, &set("5-7")).unwrap();
    let mut recolored_samples = 0.0;
    for _ in 0..3 {
        for s in sys.run_interval(300_000).unwrap() {
            recolored_samples += s.pages_recolored;
        }
    }
    check_colors(&sys);
    let before = check_mappings(&sys);
    assert!(before[0].len() > 16, "a touched {} pages", before[0].len());
    // Selective Moving of the installed app: pages move at once, their
    // copies are charged to its cycles.
    let cyc0 = sys.totals()[0].cycles;
    let sm = RecolorConfig::default();
    let sum = sys.recolor(0, &set("0-3"), &sm).unwrap();
    assert!(sum.installed && sum.moved > 0 && sum.removed.is_empty());
    assert_eq!(sum.added, set("2-3"));
    let t = &sys.totals()[0];
    // moved x page-copy-us x freq-ghz x 1000 cycles.
    let want = sum.moved as f64 * 3.0 * p.timing.freq_ghz * 1000.0;
    assert!(
        (t.cycles - cyc0 - want).abs() < 1.0,
        "{} vs {want}",
        t.cycles - cyc0
    );
    assert_eq!(t.pages_recolored, sum.moved);
    assert!(t.paging_stall_cycles >= want);
    assert_eq!(check_mappings(&sys), before);
    check_colors(&sys);
    // A parked app (c or b, whichever is not installed) shrinks lazily.
    let parked = if sys.core(0).unwrap().address_space().app() == 1 {
        2
    } else {
        1
    };
    let old = sys.app_colors(parked).unwrap();
    let keep: cachepart_units::IdSet = old.iter().take(1).collect();
    let sum = sys.recolor(parked, &keep, &sm).unwrap();
    assert!(!sum.installed, "{sum:?}");
    assert!(sum.marked > 0 && sum.moved == 0, "{sum:?}");
    check_colors(&sys);
    assert_eq!(check_mappings(&sys), before);
    // The installed app b/c expands by Redistribution with a short window.
    let rd = RecolorConfig {
        expand: ExpandPolicy::Redistribution,
        win_us: 20.0,
    };
    let other = 3 - parked;
    let sum = sys.recolor(other, &old.union(&set("0-1")), &rd).unwrap();
    assert!(sum.flushed_tlb);
    let before_moves: Vec<u64> = (0..3)
        .map(|i| sys.paging_stats(i).pages_recolored)
        .collect();
    for _ in 0..4 {
        let pages = check_mappings(&sys);
        for (i, s) in before.iter().enumerate() {
            assert!(s.is_subset(&pages[i]), "app {i} lost pages");
        }
        for s in sys.run_interval(300_000).unwrap() {
            recolored_samples += s.pages_recolored;
        }
        check_colors(&sys);
    }
    let after: Vec<u64> = (0..3)
        .map(|i| sys.paging_stats(i).pages_recolored)
        .collect();
    assert!(
        after[parked] > before_moves[parked],
        "lazy moves of the parked app"
    );
    assert!(
        after[other] > before_moves[other],
        "redistribution moved nothing"
    );
    while !sys.is_done() {
        for s in sys.run_interval(1_000_000).unwrap() {
            recolored_samples += s.pages_recolored;
        }
    }
    let t = sys.totals();
    let total: u64 = t.iter().map(|a| a.pages_recolored).sum();
    assert_eq!(recolored_samples as u64, total);
    for a in &t {
        let ns = a.pages_recolored as f64 * 3000.0
            + a.page_outs as f64 * 20_000.0
            + a.page_ins as f64 * 100_000.0;
        assert!(
            (a.paging_stall_cycles - ns * p.timing.freq_ghz).abs() < 2.0,
            "{a:?}"
        );
    }
}

#[test]
fn exhausted_colors_name_the_app_or_call_the_hook() {
    // 4 MiB of memory: 128 frames per color; app a touches ~400 pages.
    let mut p = colored_platform(1);
    p.memory = cachepart_sim::memory::MemoryConfig {
        size_bytes: 4 << 20,
        aging: None,
        ..p.memory.clone()
    };
    p.memory.coloris.pool_bytes = 4 << 20;
    let app = || vec![AppSpec::new("a", sensitive(1, 200_000, 1600 << 10))];
    let one: cachepart_units::IdSet = "0".parse().unwrap();
    let mut sys = System::new(&p, app(), 1).unwrap();
    sys.set_app_colors(0, &one).unwrap();
    sys.run_to_end(1_000_000, |_| {}).unwrap();
    // Page-outs make room first: the app keeps running in its color.
    let t = &sys.totals()[0];
    assert!(t.page_outs > 0 && t.paging_stall_cycles > 0.0, "{t:?}");
    assert_eq!(sys.app_colors(0), Some(one.clone()));
    // b holds every frame of color 0 when a, sharing it, first faults: a
    // has no page to page out. Without a hook that is an error naming a;
    // with one, a gets color 1 and runs.
    p.timing.quantum_cycles = 5_000_000;
    let two = || {
        vec![
            AppSpec::new("b", sensitive(1, 100_000, 1600 << 10)),
            AppSpec::new("a", sensitive(2, 20_000, 64 << 10)),
        ]
    };
    let mut sys = System::new(&p, two(), 1).unwrap();
    sys.set_app_colors(0, &one).unwrap();
    sys.set_app_colors(1, &one).unwrap();
    let e = sys.run_to_end(1_000_000, |_| {}).unwrap_err().to_string();
    assert!(e.contains("app a") && e.contains("colors 0"), "{e}");
    let mut sys = System::new(&p, two(), 1).unwrap();
    sys.set_app_colors(0, &one).unwrap();
    sys.set_app_colors(1, &one).unwrap();
    let mut asked = Vec::new();
    while !sys.is_done() {
        sys.run_interval_with(1_000_000, &mut |e| {
            asked.push((e.app, e.kind));
            Some("0-1".parse().unwrap())
        })
        .unwrap();
    }
    assert_eq!(asked, vec![(1, EventKind::ColorsExhausted)]);
    assert_eq!(sys.app_colors(1), Some("0-1".parse().unwrap()));
    assert!(sys.totals().iter().all(|t| t.done));
    // The exhaustion is in the event log, with the app's core and time.
    let events = sys.take_events();
    let e = events
        .iter()
        .find(|e| e.kind == EventKind::ColorsExhausted)
        .unwrap();
    assert_eq!((e.app, e.core), (1, Some(0)));
    assert!(e.at_cycles > 0);
}

/// Events: two apps time-sliced on one core start, park, resume and
/// finish, in time order; a third alone on core 1 starts and finishes;
/// samples say which app ran in each interval.
#[test]
fn events_follow_time_slicing() {
    let mut p = platform(2, CacheConfig::lru(1 << 20, 16, 64));
    p.timing.quantum_cycles = 200_000;
    let apps = vec![
        AppSpec::new("a", sensitive(1, 60_000, 64 << 10)),
        AppSpec::new("b", sensitive(2, 60_000, 64 << 10)),
        AppSpec::new("c", sensitive(3, 20_000, 64 << 10)).on_core(1),
    ];
    let mut sys = System::new(&p, apps, 1).unwrap();
    let mut all = Vec::new();
    let mut ran = vec![0u32; 3];
    while !sys.is_done() {
        for s in sys.run_interval(100_000).unwrap() {
            ran[s.app] += u32::from(s.ran);
        }
        all.extend(sys.take_events());
    }
    let of = |app: usize| -> Vec<EventKind> {
        all.iter()
            .filter(|e| e.app == app)
            .map(|e| e.kind)
            .collect()
    };
    use EventKind::*;
    let a = of(0);
    assert_eq!(a.first(), Some(&Started));
    assert_eq!(a.last(), Some(&Finished));
    assert!(a.contains(&Parked) && a.contains(&Resumed), "{a:?}");
    let b = of(1);
    assert_eq!(b.first(), Some(&Started));
    assert!(b.contains(&Parked), "{b:?}");
    assert_eq!(of(2), vec![Started, Finished]);
    // Per core, events are in time order; parks and resumes alternate.
    for core in 0..2 {
        let t: Vec<u64> = all
            .iter()
            .filter(|e| e.core == Some(core))
            .map(|e| e.at_cycles)
            .collect();
        assert!(t.windows(2).all(|w| w[0] <= w[1]), "{t:?}");
    }
    for k in [a, b] {
        let mid: Vec<&EventKind> = k.iter().filter(|e| matches!(e, Parked | Resumed)).collect();
        assert!(mid.windows(2).all(|w| w[0] != w[1]), "{mid:?}");
    }
    // Each app ran in some intervals, and a time-sliced one not in all.
    assert!(ran.iter().all(|&r| r > 0), "{ran:?}");
    let intervals = all.iter().map(|e| e.at_cycles).max().unwrap() / 100_000 + 1;
    assert!(u64::from(ran[0]) < intervals, "{ran:?} of {intervals}");
}

/// Placing an app before the start equals building the system with the
/// app on that core; after the start it is refused.
#[test]
fn placement_before_the_start_equals_construction() {
    let p = platform(2, CacheConfig::lru(1 << 20, 16, 64));
    let apps = || {
        vec![
            AppSpec::new("a", sensitive(1, 20_000, 64 << 10)),
            AppSpec::new("b", sensitive(2, 20_000, 64 << 10)),
            AppSpec::new("c", sensitive(3, 20_000, 64 << 10)),
        ]
    };
    let mut moved = System::new(&p, apps(), 1).unwrap();
    moved.place_app(1, 1).unwrap();
    let mut built = apps();
    built[1] = built[1].clone().on_core(1);
    let mut direct = System::new(&p, built, 1).unwrap();
    assert_eq!(moved.take_events(), direct.take_events());
    moved.run_to_end(50_000, |_| {}).unwrap();
    direct.run_to_end(50_000, |_| {}).unwrap();
    assert_eq!(moved.totals(), direct.totals());
    let e = moved.place_app(0, 1).unwrap_err().to_string();
    assert!(e.contains("before the run starts"), "{e}");
    assert!(direct.place_app(0, 9).is_err());
}
