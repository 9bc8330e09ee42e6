//! The host memory a platform takes before its first access: what
//! [`PlatformConfig::check`] compares with the host's memory, so that a
//! platform file whose caches, core count or memory are beyond the host
//! is refused with a message naming the key that needs the most, instead
//! of the process being killed by the kernel's out-of-memory handler
//! while the simulator builds it.
//!
//! Each term is the size of the structures the simulator allocates, from
//! the modules that own them:
//!
//! * every cache level (each core's `l1i`, `l1d`, `l2`, and the LLC):
//!   per line a tag (and, in the LLC, the owner it tracks), per set its
//!   state (64 B), and the replacement state ([`crate::cache`]);
//! * every core's TLB arrays: tag, frame and LRU stamp per entry;
//! * every core's prefetcher tables, when the platform has prefetchers;
//! * the `[l3-victim]`: block, sector bits and stamp per line;
//! * the memory: the buddy allocator's chunk index, the bookkeeping
//!   aging touches, and the frames a coloris pool takes up front
//!   ([`MemoryConfig::planned_bytes`](crate::memory::MemoryConfig::planned_bytes)).
//!
//! What grows as apps run (page tables, frame marks, trace buffers)
//! depends on the apps and is not counted.

use super::error::SystemError;
use super::platform::PlatformConfig;
use crate::cache;
use crate::geometry::CacheConfig;
use crate::memory::tlb_array::HOST_BYTES_PER_ENTRY;
use crate::prefetch::Prefetchers;
use crate::victim::HOST_BYTES_PER_LINE;
use cachepart_units::host_memory::{bytes_text, check_allocation_within};

/// The terms of `p`'s estimate, each with the key that sizes it (cache
/// levels whose geometry is invalid count 0: their own check names them).
pub(super) fn parts(p: &PlatformConfig) -> Vec<(&'static str, u128)> {
    let cores = u128::from(p.cores);
    let level = |c: &CacheConfig, owners: bool| {
        c.geometry()
            .map_or(0, |g| cache::host_bytes(&g, c.policy, owners))
    };
    let t = &p.tlb;
    let tlb_entries: u128 = [t.l1d_4k, t.l1d_2m, t.l1i_4k, t.l1i_2m, t.stlb]
        .iter()
        .map(|a| u128::from(a.entries))
        .sum();
    let mut parts = vec![
        ("core.l1i", cores * level(&p.core.l1i, false)),
        ("core.l1d", cores * level(&p.core.l1d, false)),
    ];
    if let Some(l2) = &p.core.l2 {
        parts.push(("core.l2", cores * level(l2, false)));
    }
    parts.push((
        "tlb",
        cores * tlb_entries * u128::from(HOST_BYTES_PER_ENTRY),
    ));
    if !p.prefetchers.is_absent() {
        parts.push(("prefetchers", cores * u128::from(Prefetchers::HOST_BYTES)));
    }
    parts.push(("llc", level(&p.llc, true)));
    if p.l3_victim.is_some() {
        let lines = p
            .l3_victim_geometry()
            .ok()
            .flatten()
            .map_or(0, |g| g.lines() as u128);
        parts.push(("l3-victim", lines * u128::from(HOST_BYTES_PER_LINE)));
    }
    parts.extend(p.memory.planned_bytes());
    parts
}

/// Checks `p`'s estimate against `memory` bytes (`None`: unknown, only
/// the `u64` bound applies). A refusal names the key of the largest term
/// and lists every term that is not 0.
pub(super) fn check_within(p: &PlatformConfig, memory: Option<u64>) -> Result<(), SystemError> {
    let parts = parts(p);
    let total: u128 = parts.iter().map(|(_, b)| b).sum();
    let (field, _) = parts
        .iter()
        .max_by_key(|(_, b)| *b)
        .copied()
        .unwrap_or(("cores", 0));
    let why = parts
        .iter()
        .filter(|(_, b)| *b > 0)
        .map(|(k, b)| format!("{k} {}", bytes_text(*b)))
        .collect::<Vec<_>>()
        .join(", ");
    check_allocation_within(
        "the simulated platform (caches, TLBs, prefetchers, memory bookkeeping)",
        &format!("{} cores; {why}", p.cores),
        total,
        memory,
    )
    .map_err(|e| SystemError::Config {
        field: field.into(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{AgingConfig, AllocatorKind, MemoryConfig};

    fn platform(toml: &str) -> PlatformConfig {
        PlatformConfig::from_toml_str(&format!(
            "name = \"t\"\n{toml}\n\
             core.l1i = {{ size-bytes = 32768, ways = 8, line-bytes = 64 }}\n\
             llc = {{ size-bytes = 8388608, ways = 16, line-bytes = 64 }}\n"
        ))
        .unwrap()
    }

    fn refusal(p: &PlatformConfig, limit: u64) -> (String, String) {
        match check_within(p, Some(limit)) {
            Err(SystemError::Config { field, reason }) => (field, reason),
            other => panic!("{other:?}"),
        }
    }

    /// Direct-mapped private caches cost their per-set state (64 B a set)
    /// on top of the 8 B tags: 64 cores of a 32 MiB one-way L1d need
    /// 2.6 GiB, where the estimate of tags alone (256 MiB) let such a
    /// platform past a 1 GiB host.
    #[test]
    fn per_set_state_counts() {
        let p = platform(
            "cores = 64\nmemory = { size-bytes = 1073741824 }\n\
             core.l1d = { size-bytes = 33554432, ways = 1, line-bytes = 64 }",
        );
        let l1d = parts(&p)
            .into_iter()
            .find(|(k, _)| *k == "core.l1d")
            .unwrap();
        let lines: u128 = 64 * (32 << 20) / 64;
        assert!(l1d.1 >= lines * (8 + 64), "{l1d:?}");
        let (field, reason) = refusal(&p, 1 << 30);
        assert_eq!(field, "core.l1d");
        assert!(
            reason.starts_with("the simulated platform (caches, TLBs, prefetchers, memory bookkeeping) would need 2.")
                && reason.contains("64 cores; core.l1i ")
                && reason.contains("more than this machine's 1.0 GiB of memory"),
            "{reason}"
        );
        assert!(check_within(&p, Some(8 << 30)).is_ok());
    }

    /// A coloris pool takes its frames from the buddy allocator when the
    /// memory is built: a 16 TiB memory with an 8 TiB pool would need
    /// 2^31 frames of bookkeeping and list entries (56 GiB), refused
    /// naming the pool's key.
    #[test]
    fn a_coloris_pool_beyond_the_host_is_refused() {
        let mut p = platform("cores = 1\nmemory = { size-bytes = 4096 }\ncore.l1d = { size-bytes = 32768, ways = 8, line-bytes = 64 }");
        p.memory = MemoryConfig {
            size_bytes: (1 << 44) - 8192,
            allocator: AllocatorKind::Coloris,
            aging: None,
            ..MemoryConfig::aged(0, 0)
        };
        p.memory.coloris.pool_bytes = 8 << 40;
        let (field, reason) = refusal(&p, 16 << 30);
        assert_eq!(field, "memory.coloris.pool-bytes");
        assert!(
            reason.contains("memory.coloris.pool-bytes 56.0 GiB"),
            "{reason}"
        );
        // the default 1 GiB pool is 7 MiB
        p.memory.coloris.pool_bytes = 1 << 30;
        assert!(check_within(&p, Some(16 << 30)).is_ok());
        // aging all of it: 48 GiB of bookkeeping
        p.memory.allocator = AllocatorKind::Buddy;
        let mut aging = AgingConfig::seeded(1);
        aging.window_bytes = p.memory.size_bytes;
        p.memory.aging = Some(aging);
        let (field, reason) = refusal(&p, 16 << 30);
        assert_eq!(field, "memory.aging");
        assert!(reason.contains("memory.aging 48.0 GiB"), "{reason}");
    }

    /// An `[l3-victim]` far beyond the host is refused by the platform
    /// check naming it, before anything is allocated: before, the check
    /// built the victim cache (its arrays: 4.5 TiB here) to validate the
    /// section, before the size check ran.
    #[test]
    fn a_huge_victim_cache_is_refused_before_it_is_built() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../platforms");
        let mut p = PlatformConfig::load(dir.join("power5-l3.toml")).unwrap();
        let v = p.l3_victim.as_mut().unwrap();
        v.size_bytes <<= 20;
        let (field, reason) = refusal(&p, 1 << 40);
        assert_eq!(field, "l3-victim");
        assert!(reason.contains("l3-victim 4.5 TiB"), "{reason}");
        let host = cachepart_units::host_memory::host_memory_bytes();
        if host.is_some_and(|m| m < 4 << 40) {
            match p.check() {
                Err(SystemError::Config { field, reason }) => {
                    assert_eq!(field, "l3-victim", "{reason}");
                    assert!(reason.contains("more than this machine's"), "{reason}");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    /// The shipped platforms' estimates stay small (no false refusal).
    #[test]
    fn shipped_platforms_need_little() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../platforms");
        let mut seen = 0;
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_some_and(|x| x == "toml") {
                let p = PlatformConfig::load(&path).unwrap();
                let total: u128 = parts(&p).iter().map(|(_, b)| b).sum();
                assert!(total < 1 << 30, "{path:?}: {total}");
                seen += 1;
            }
        }
        assert!(seen > 0);
    }
}
