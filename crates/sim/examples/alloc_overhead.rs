//! Page-fault cost of the three frame allocators (COLORIS's Table 1
//! question: is a color-aware allocator as cheap as the buddy
//! allocator?). Maps 65,536 random 4 KiB pages of a 1 GiB region on
//! 2 GiB of aged memory, then unmaps them, for `buddy`, `tam` (app
//! colored with 16 of 64 colors) and `coloris` (same colors, 1 GiB pool),
//! and prints nanoseconds per fault and per unmapped page.
//!
//! `cargo run --release -p cachepart-sim --example alloc_overhead`

use cachepart_units::Kind as _;
use std::time::Instant;

use cachepart_sim::memory::{AddressSpace, AllocatorKind, ColorLayout, HugePages, MemoryConfig};

fn main() {
    let layout = ColorLayout::with_sets(4096, 64, 4096).expect("64 colors");
    let pages = 65_536u64;
    // A fixed pseudo-random page order (a multiplicative permutation).
    let order: Vec<u64> = (0..pages).map(|i| (i * 40_503) % (1 << 18)).collect();
    for kind in AllocatorKind::all() {
        let cfg = MemoryConfig {
            allocator: kind,
            ..MemoryConfig::aged(2 << 30, 7)
        };
        let t0 = Instant::now();
        let mut mem = cfg.build_colored(&layout).expect("builds");
        let build = t0.elapsed();
        if kind != AllocatorKind::Buddy {
            mem.set_app_colors(0, &"0-15".parse().expect("set"))
                .expect("colors");
        }
        let mut space = AddressSpace::new(0, HugePages::Never);
        let t = Instant::now();
        for &p in &order {
            space.touch(p << 12, mem.as_mut()).expect("memory");
        }
        let fault = t.elapsed();
        let t = Instant::now();
        space.release(mem.as_mut());
        let unmap = t.elapsed();
        println!(
            "{:8} build {:7.1} ms  fault {:6.1} ns/page  unmap {:6.1} ns/page  page-outs {}",
            kind.name(),
            build.as_secs_f64() * 1e3,
            fault.as_secs_f64() * 1e9 / pages as f64,
            unmap.as_secs_f64() * 1e9 / pages as f64,
            space.stats().page_outs,
        );
    }
}
