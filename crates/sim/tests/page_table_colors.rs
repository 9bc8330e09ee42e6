//! `memory.page-table-colors = "owner"` through the system: a colored
//! app's page walks load page-table lines of its own colors only, so every
//! line it leaves in the LLC lies in its sets; with `"any"` (the default)
//! its page-table lines land in other colors' sets.

use std::sync::Arc;

use cachepart_sim::memory::{AllocatorKind, ColorLayout, MemoryConfig, TableColors, WalkMode};
use cachepart_sim::system::{AppSpec, PlatformConfig, RecordsSource, System};
use cachepart_sim::{CacheConfig, HierarchyConfig};
use cachepart_trace::{Kind, Record};
use cachepart_units::IdSet;

/// 256 KiB 8-way LLC (8 colors of 4 KiB), walks through the caches,
/// COLORIS's allocator over 32 MiB of 64 MiB.
fn platform(tables: TableColors) -> PlatformConfig {
    let mut core = HierarchyConfig::split_l1(CacheConfig::lru(8 << 10, 4, 64));
    core.l2 = Some(CacheConfig::lru(32 << 10, 4, 64));
    let llc = CacheConfig::lru(256 << 10, 8, 64);
    let mut p = PlatformConfig::new("test", 1, core, llc, MemoryConfig::aged(64 << 20, 5));
    p.memory.allocator = AllocatorKind::Coloris;
    p.memory.coloris.pool_bytes = 32 << 20;
    p.memory.page_table_colors = tables;
    p.tlb.walk = WalkMode::Hierarchy;
    p
}

/// Loads at a few pages of each of 700 2 MiB regions spread over 1 TiB of
/// virtual memory: many page tables at every level, few frames.
fn sparse_loads() -> Vec<Record> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..2400)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let region = (x >> 8) % 700;
            let page = (x >> 40) % 2;
            let vaddr = 0x10_0000_0000 + region * (1523 << 21) % (1 << 40) + page * 4096;
            Record::access(Kind::Load, vaddr + (x & 0xfc0), 8, 1).unwrap()
        })
        .collect()
}

/// Runs the app alone in colors `colors`; the LLC lines outside them and
/// the app's page-table loads.
fn run(tables: TableColors, colors: &str) -> (usize, usize, u64) {
    let p = platform(tables);
    let apps = vec![AppSpec::new(
        "a",
        Arc::new(RecordsSource::new(sparse_loads())),
    )];
    let mut sys = System::new(&p, apps, 1).unwrap();
    let set: IdSet = colors.parse().unwrap();
    sys.set_app_colors(0, &set).unwrap();
    sys.run_to_end(10_000, |_| {}).unwrap();
    let layout: ColorLayout = *sys.allocator().color_layout().unwrap();
    assert_eq!(layout.colors(), 8);
    let line_bits = sys.llc().geometry().line().trailing_zeros();
    let blocks: Vec<u64> = sys.llc().blocks().collect();
    let outside = blocks
        .iter()
        .filter(|&&b| !set.contains(layout.color_of(b << line_bits)))
        .count();
    let walk_loads: u64 = sys.core_stats(0).unwrap().tlb.walk_loads.iter().sum();
    (outside, blocks.len(), walk_loads)
}

#[test]
fn owner_colored_tables_keep_walk_loads_in_the_app_s_colors() {
    for colors in ["0-1", "5", "2,6-7"] {
        let (outside, lines, walk_loads) = run(TableColors::Owner, colors);
        assert!(walk_loads > 2000, "{colors}: {walk_loads} walk loads");
        assert!(lines > 400, "{colors}: {lines} lines");
        assert_eq!(outside, 0, "{colors}: {outside} of {lines} lines outside");
        // The default places the same tables on pages of every color.
        let (outside, lines, any_loads) = run(TableColors::Any, colors);
        assert_eq!(any_loads, walk_loads, "{colors}");
        assert!(outside > 50, "{colors}: {outside} of {lines} lines outside");
    }
}
