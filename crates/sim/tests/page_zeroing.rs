//! Page zeroing on frame reuse (issue 16): an app handed a frame another
//! app used (and freed on finishing) must not find that app's lines in the
//! caches: the kernel zeroes a page before mapping it.

use std::sync::Arc;

use cachepart_sim::memory::MemoryConfig;
use cachepart_sim::system::{AppSpec, PlatformConfig, RecordsSource, System};
use cachepart_sim::{CacheConfig, HierarchyConfig};
use cachepart_trace::{Kind, Record};

fn platform(memory: MemoryConfig) -> PlatformConfig {
    let mut core = HierarchyConfig::split_l1(CacheConfig::lru(8 << 10, 4, 64));
    core.l2 = Some(CacheConfig::lru(32 << 10, 4, 64));
    PlatformConfig::new(
        "zeroing",
        1,
        core,
        CacheConfig::lru(256 << 10, 8, 64),
        memory,
    )
}

/// Loads of every line of `bytes` bytes from address 0, `passes` times.
fn sweep(bytes: u64, passes: u32) -> Arc<RecordsSource> {
    let mut recs = Vec::new();
    for _ in 0..passes {
        for a in (0..bytes).step_by(64) {
            recs.push(Record::access(Kind::Load, a, 8, 1).unwrap());
        }
    }
    Arc::new(RecordsSource::new(recs))
}

/// Two identical apps one after the other on one core: the second gets
/// the frames the first freed, and misses as much as the first did (its
/// working set fits the LLC, so without zeroing it would hit on the
/// first app's lines almost every time).
fn second_app_starts_cold(memory: MemoryConfig) {
    let ws = 96 << 10; // fits the 256 KiB LLC, not the 32 KiB L2
    let apps = vec![
        AppSpec::new("first", sweep(ws, 2)),
        AppSpec::new("second", sweep(ws, 2)),
    ];
    let mut sys = System::new(&platform(memory), apps, 0).unwrap();
    sys.run_to_end(100_000, |_| {}).unwrap();
    let t = sys.totals();
    assert!(t.iter().all(|a| a.done), "{t:?}");
    let lines = ws / 64;
    // The first app misses each line once (cold), then hits in the LLC.
    assert_eq!(t[0].llc_misses, lines, "{t:?}");
    assert_eq!(
        t[1].llc_misses, t[0].llc_misses,
        "the second app found the first one's data: {t:?}"
    );
    assert!(t[1].ipc <= t[0].ipc * 1.01, "{t:?}");
}

#[test]
fn reused_frames_hold_no_previous_data_buddy() {
    second_app_starts_cold(MemoryConfig::aged(64 << 20, 5));
}

#[test]
fn reused_frames_hold_no_previous_data_unaged() {
    second_app_starts_cold(MemoryConfig {
        aging: None,
        ..MemoryConfig::aged(64 << 20, 5)
    });
}
