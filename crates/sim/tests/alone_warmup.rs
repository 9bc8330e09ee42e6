//! Alone runs measured after a warm-up (`run_alone_warmed`, behind
//! `profile from-trace --warmup`): the cold misses are left out, the
//! counters are the run's minus the warm-up's, no warm-up is the plain
//! alone run, and a warm-up longer than the trace is refused.

use std::sync::Arc;

use cachepart_sim::memory::MemoryConfig;
use cachepart_sim::system::{run_alone_at, run_alone_warmed, AloneSize, AppSpec, PlatformConfig};
use cachepart_sim::{CacheConfig, HierarchyConfig};
use cachepart_trace::synth::SynthConfig;

fn platform() -> PlatformConfig {
    let mut core = HierarchyConfig::split_l1(CacheConfig::lru(8 << 10, 4, 64));
    core.l2 = Some(CacheConfig::lru(32 << 10, 4, 64));
    PlatformConfig::new(
        "test",
        1,
        core,
        CacheConfig::lru(256 << 10, 8, 64),
        MemoryConfig::aged(64 << 20, 5),
    )
}

/// Uniform accesses over 64 KiB: more than the L2, well inside the LLC.
fn app(accesses: u64) -> AppSpec {
    let cfg: SynthConfig = serde_json::from_str(&format!(
        r#"{{"seed": 3, "accesses": {accesses},
            "pattern": {{"class": "cache-sensitive", "working-set-bytes": 65536}}}}"#
    ))
    .unwrap();
    AppSpec::new("fits", Arc::new(cfg))
}

#[test]
fn no_warmup_is_the_plain_alone_run() {
    let p = platform();
    let a = app(50_000);
    let plain = run_alone_at(&p, &a, AloneSize::Whole, 0, Some(100_000)).unwrap();
    let zero = run_alone_warmed(&p, &a, AloneSize::Whole, 0, Some(100_000), 0).unwrap();
    assert_eq!(plain, zero);
}

#[test]
fn the_warmup_leaves_out_the_cold_misses() {
    let p = platform();
    let a = app(400_000);
    let cold = run_alone_at(&p, &a, AloneSize::Whole, 0, Some(100_000)).unwrap();
    let warmup = cold.totals.instructions / 2;
    let warm = run_alone_warmed(&p, &a, AloneSize::Whole, 0, Some(100_000), warmup).unwrap();
    let (c, w) = (&cold.totals, &warm.totals);
    // 1024 lines fit the LLC: the cold run's misses are the first touches
    assert!(c.llc_misses >= 1000, "{c:?}");
    assert!(w.llc_misses * 50 < c.llc_misses, "cold {c:?}\nwarm {w:?}");
    // the counters are the run's after the warm-up: fewer instructions
    // (at most one 100 k-cycle interval past the warm-up) and cycles
    assert!(w.instructions <= c.instructions - warmup, "{w:?}");
    assert!(
        w.instructions + 100_000 * 4 >= c.instructions - warmup,
        "{w:?}"
    );
    assert!(w.cycles < c.cycles && w.cycles > 0.0);
    assert!((w.ipc - w.instructions as f64 / w.cycles).abs() < 1e-12);
    assert!(w.llc_references < c.llc_references);
    // deterministic
    let again = run_alone_warmed(&p, &a, AloneSize::Whole, 0, Some(100_000), warmup).unwrap();
    assert_eq!(warm, again);
    // with ways: the same rule, and the limit counts the warm-up too
    let limited = a.clone().with_limit(warmup + 10_000, false);
    let r = run_alone_warmed(&p, &limited, AloneSize::Ways(4), 0, None, warmup).unwrap();
    assert!(r.totals.instructions <= 10_000, "{:?}", r.totals);
}

#[test]
fn a_warmup_past_the_end_is_refused() {
    let p = platform();
    let e = run_alone_warmed(&p, &app(1_000), AloneSize::Whole, 0, None, 1 << 40)
        .unwrap_err()
        .to_string();
    assert!(e.contains("warmup") && e.contains("fits"), "{e}");
}
