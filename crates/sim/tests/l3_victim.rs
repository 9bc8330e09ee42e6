//! The L3 victim cache on the multicore system (`[l3-victim]`): a loop
//! too big for the LLC but within the L3 is served by the L3 at its
//! latency under both timing models, its hits and misses reach the app's
//! totals, no section changes nothing, and bad sections are refused
//! naming the field.

use std::sync::Arc;

use cachepart_sim::memory::{HugePages, MemoryConfig};
use cachepart_sim::system::{
    AppSpec, AppTotals, PlatformConfig, RecordsSource, System, TimingConfig, WindowConfig,
};
use cachepart_sim::{CacheConfig, HierarchyConfig, VictimConfig};
use cachepart_trace::{Kind, Record};

/// LLC 64 KiB (hit 40 cycles), memory 40 + 240 = 280 cycles, flat DRAM
/// latency; an L3 of 1 MiB, 256-byte lines, 90 cycles.
fn platform(l3: bool, window: Option<WindowConfig>) -> PlatformConfig {
    let core = HierarchyConfig::split_l1(CacheConfig::lru(4096, 4, 128));
    PlatformConfig {
        timing: TimingConfig {
            llc_cycles: 40,
            dram_ns: 80.0,
            dram_queue_factor: 0.0,
            window,
            ..TimingConfig::default()
        },
        l3_victim: l3.then_some(VictimConfig {
            size_bytes: 1 << 20,
            ways: 8,
            line_bytes: 256,
            slices: 1,
            cycles: 90,
        }),
        ..PlatformConfig::new(
            "l3-test",
            1,
            core,
            CacheConfig::lru(64 << 10, 8, 128),
            MemoryConfig {
                aging: None,
                ..MemoryConfig::aged(256 << 20, 1)
            },
        )
    }
}

/// Ten passes over 256 KiB (2048 lines): bigger than the LLC, within
/// the L3 with it.
fn loops() -> Vec<Record> {
    (0..10)
        .flat_map(|_| {
            (0..2048u64).map(|l| Record::access(Kind::Load, 0x100_0000 + l * 128, 8, 1).unwrap())
        })
        .collect()
}

fn run(p: &PlatformConfig) -> AppTotals {
    let mut spec = AppSpec::new("a", Arc::new(RecordsSource::new(loops())));
    spec.huge_pages = HugePages::Always;
    let mut sys = System::new(p, vec![spec], 1).unwrap();
    sys.run_to_end(1_000_000, |_| {}).unwrap();
    sys.totals().remove(0)
}

#[test]
fn a_loop_within_the_l3_is_served_there() {
    for window in [
        None,
        Some(WindowConfig {
            rob_entries: 1,
            mshrs: 1,
            store_buffer_entries: 4,
        }),
    ] {
        let off = run(&platform(false, window));
        let on = run(&platform(true, window));
        assert_eq!(off.l3_hits, None);
        assert_eq!(off.llc_misses, on.llc_misses, "the LLC sees the same");
        let (hits, misses) = (on.l3_hits.unwrap(), on.l3_misses.unwrap());
        assert_eq!(hits + misses, on.llc_misses);
        // The first pass misses everywhere; the other nine hit the L3.
        assert_eq!(misses, 2048);
        assert_eq!(hits, 9 * 2048);
        assert_eq!(on.memory_bytes, 2048 * 128);
        // Every L3 hit saves 280 - 90 cycles (serialised: one miss buffer,
        // or mlp 1), all of it memory stall.
        let saved = off.cycles - on.cycles;
        assert!(
            (saved - hits as f64 * 190.0).abs() < 1.0,
            "{saved} {window:?}"
        );
        assert!(on.l2_miss_stall_cycles > on.memory_stall_cycles + hits as f64 * 89.0);
    }
}

#[test]
fn bad_sections_name_their_field() {
    let field = |text: &str| {
        let base = "name = \"x\"\ncores = 1\n[core]\nl1i = { size-bytes = 4096, ways = 4, line-bytes = 128 }\nl1d = { size-bytes = 4096, ways = 4, line-bytes = 128 }\n[llc]\nsize-bytes = 65536\nways = 8\nline-bytes = 128\n[memory]\nsize-bytes = 268435456\n[l3-victim]\n";
        let p = PlatformConfig::from_toml_str(&format!("{base}{text}"));
        match p {
            Err(e) => e.to_string(),
            Ok(p) => p.check().unwrap_err().to_string(),
        }
    };
    let ok = "size-bytes = 1048576\nways = 8\nline-bytes = 256\ncycles = 90\n";
    assert!(
        field(&ok.replace("line-bytes = 256", "line-bytes = 64")).contains("l3-victim.line-bytes")
    );
    assert!(field(&ok.replace("ways = 8", "ways = 0")).contains("l3-victim.ways"));
    assert!(field(&ok.replace("1048576", "1048000")).contains("l3-victim.size-bytes"));
    let unknown = field(&format!("{ok}latency = 3\n"));
    assert!(unknown.contains("latency"), "{unknown}");
}
