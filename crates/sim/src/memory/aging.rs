//! A deterministic "aged" initial state for a frame allocator: seeded
//! churn that leaves memory fragmented the way a machine that has been up
//! for a while is, so that the frames an application gets (and so their
//! colors) are scattered rather than sequential.
//!
//! [`age`] runs `rounds` rounds; each allocates blocks of random orders
//! (mostly order 0, as page-cache and anonymous memory are) until `fill`
//! of memory is in use, then frees randomly chosen blocks until only
//! `resident` is. The blocks still held at the end stand for the kernel,
//! the page cache and other processes; they are returned so a caller can
//! free them again. The same seed gives the same free lists.
//!
//! The churn covers the lowest `window_bytes` of memory (default 16 GiB,
//! more than any built-in platform has, so there it is all of memory):
//! its fill and resident fractions are of the window, and since the
//! allocator hands out its lowest free blocks first, the churn stays in
//! the window. Above it memory stays as a freshly booted machine's and is
//! handed out, in ascending order, only once the aged part is used up. So
//! a platform with a terabyte of memory ages in the time 16 GiB takes
//! (about 2 s) instead of touching every frame for minutes; the frames
//! (and so the colors) an application gets are as scattered as on a fully
//! aged memory unless it uses more than the window's free part.

use serde::{Deserialize, Serialize};

use super::allocator::{AllocHint, FrameAllocator};
use super::error::MemoryError;
use super::page::Frame;
use crate::splitmix::SplitMix64;

/// How to age an allocator.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct AgingConfig {
    /// Seed of the churn.
    pub seed: u64,
    /// Rounds of fill and release.
    #[serde(default = "default_rounds")]
    pub rounds: u32,
    /// Fraction of memory in use at the peak of each round.
    #[serde(default = "default_fill")]
    pub fill: f64,
    /// Fraction of memory left in use at the end of each round (and of
    /// the aging: unavailable to the simulated applications).
    #[serde(default = "default_resident")]
    pub resident: f64,
    /// Largest order of a churn allocation.
    #[serde(default = "default_max_order")]
    pub max_order: u8,
    /// Bytes of memory, from the lowest address, that the churn covers.
    #[serde(default = "default_window_bytes")]
    pub window_bytes: u64,
}

fn default_rounds() -> u32 {
    3
}
fn default_fill() -> f64 {
    0.9
}
fn default_resident() -> f64 {
    0.2
}
fn default_max_order() -> u8 {
    3
}
/// 16 GiB.
pub const DEFAULT_WINDOW_BYTES: u64 = 16 << 30;
fn default_window_bytes() -> u64 {
    DEFAULT_WINDOW_BYTES
}

impl AgingConfig {
    /// The defaults (3 rounds, 90% peak, 20% resident, orders 0..=3, the
    /// lowest 16 GiB) with seed `seed`.
    pub fn seeded(seed: u64) -> AgingConfig {
        AgingConfig {
            seed,
            rounds: default_rounds(),
            fill: default_fill(),
            resident: default_resident(),
            max_order: default_max_order(),
            window_bytes: default_window_bytes(),
        }
    }

    /// Frames the churn covers in a memory of `total_frames` frames.
    pub fn window_frames(&self, total_frames: u64) -> u64 {
        total_frames.min(self.window_bytes / super::page::FRAME_BYTES)
    }
}

/// Churns `alloc` as `cfg` says; returns the blocks left allocated
/// (first frame and order).
pub fn age<A: FrameAllocator + ?Sized>(
    alloc: &mut A,
    cfg: &AgingConfig,
) -> Result<Vec<(Frame, u8)>, MemoryError> {
    for (field, value) in [("fill", cfg.fill), ("resident", cfg.resident)] {
        if !(0.0..=1.0).contains(&value) {
            return Err(MemoryError::Aging { field, value });
        }
    }
    if cfg.window_bytes < super::page::FRAME_BYTES {
        return Err(MemoryError::AgingWindow {
            bytes: cfg.window_bytes,
        });
    }
    let total = cfg.window_frames(alloc.total_frames()) as f64;
    let peak = (cfg.fill * total) as u64;
    let keep = (cfg.resident.min(cfg.fill) * total) as u64;
    let mut rng = SplitMix64::new(cfg.seed);
    let mut held: Vec<(Frame, u8)> = Vec::new();
    let mut used = 0u64;
    let hint = AllocHint {
        app: u32::MAX,
        ..AllocHint::default()
    };
    for _ in 0..cfg.rounds {
        while used < peak {
            // Order 0 three times in four, else uniform in 1..=max_order.
            let order = if cfg.max_order == 0 || rng.below(4) != 0 {
                0
            } else {
                1 + rng.below(u64::from(cfg.max_order)) as u8
            };
            match alloc.alloc(order, hint) {
                Ok(f) => {
                    held.push((f, order));
                    used += 1 << order;
                }
                Err(MemoryError::OutOfMemory { .. }) => break,
                Err(e) => return Err(e),
            }
        }
        while used > keep && !held.is_empty() {
            let (f, k) = held.swap_remove(rng.below(held.len() as u64) as usize);
            alloc.free(f, k);
            used -= 1 << k;
        }
    }
    Ok(held)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::buddy::BuddyAllocator;

    #[test]
    fn aging_scatters_and_is_deterministic() {
        let run = |seed| {
            let mut b = BuddyAllocator::new(64 << 20).unwrap();
            let held = age(&mut b, &AgingConfig::seeded(seed)).unwrap();
            let next: Vec<Frame> = (0..64)
                .map(|_| b.alloc(0, AllocHint::default()).unwrap())
                .collect();
            (held, next)
        };
        let (held, next) = run(1);
        assert_eq!((held.clone(), next.clone()), run(1));
        assert_ne!(next, run(2).1);
        // Not sequential: fewer than half the consecutive pairs adjacent.
        let adjacent = next.windows(2).filter(|w| w[1].0 == w[0].0 + 1).count();
        assert!(adjacent < 32, "{adjacent} adjacent of 63");
        let used: u64 = held.iter().map(|&(_, k)| 1u64 << k).sum();
        let total = (64 << 20) / 4096;
        assert!(used <= total / 5 + 8 && used >= total / 5 - 8, "{used}");
    }

    #[test]
    fn the_churn_stays_in_its_window() {
        let window = 64u64 << 20;
        let cfg = AgingConfig {
            window_bytes: window,
            ..AgingConfig::seeded(3)
        };
        // A memory no larger than the window ages as with no window.
        let run = |bytes: u64, cfg: &AgingConfig| {
            let mut b = BuddyAllocator::new(bytes).unwrap();
            let held = age(&mut b, cfg).unwrap();
            let next: Vec<Frame> = (0..256)
                .map(|_| b.alloc(0, AllocHint::default()).unwrap())
                .collect();
            (held, next)
        };
        assert_eq!(run(window, &cfg), run(window, &AgingConfig::seeded(3)));
        // In a memory 64 times larger, what the churn leaves and what an
        // application gets next lie in the window (plus the few largest
        // blocks a fragmented round splits above it), scattered as there.
        let (held, next) = run(64 * window, &cfg);
        let window_frames = window / 4096;
        let ends = held.iter().map(|&(f, k)| f.0 + (1 << k));
        let top = ends.chain(next.iter().map(|f| f.0 + 1)).max().unwrap();
        assert!(
            top <= window_frames + window_frames / 8,
            "{top} of {window_frames}"
        );
        let adjacent = next.windows(2).filter(|w| w[1].0 == w[0].0 + 1).count();
        assert!(adjacent < 128, "{adjacent} adjacent of 255");
        let used: u64 = held.iter().map(|&(_, k)| 1u64 << k).sum();
        assert!(used.abs_diff(window_frames / 5) <= 8, "{used}");
        let tiny = AgingConfig {
            window_bytes: 4095,
            ..cfg
        };
        let e = age(&mut BuddyAllocator::new(window).unwrap(), &tiny).unwrap_err();
        assert_eq!(
            e.to_string(),
            "aging: window-bytes = 4095 is less than one 4096 B frame"
        );
    }

    #[test]
    fn freeing_the_residents_restores_the_fresh_state() {
        let fresh = BuddyAllocator::new(16 << 20).unwrap();
        let mut b = fresh.clone();
        let held = age(&mut b, &AgingConfig::seeded(5)).unwrap();
        for (f, k) in held {
            b.free(f, k);
        }
        let mut lists: Vec<Frame> = b.free_list(10);
        lists.sort();
        assert_eq!(lists, fresh.free_list(10));
        assert_eq!(b.free_frames(), fresh.free_frames());
        let cfg = AgingConfig {
            fill: 1.5,
            ..AgingConfig::seeded(0)
        };
        assert!(age(&mut b, &cfg).is_err());
    }
}
