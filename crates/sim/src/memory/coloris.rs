//! COLORIS's color-aware page allocator (PACT'14, section 3.1): a memory
//! pool of per-color free lists that serves every page request.
//!
//! At start the pool takes [`ColorisPoolConfig::pool_bytes`] (default 1 GiB,
//! or all free memory if less) from the buddy allocator, one 4 KiB frame
//! at a time, sorted by color. An order-0 request of an app with a color
//! set takes a frame of its colors round-robin from the app's cursor,
//! skipping colors whose list is empty; when all of them are empty, the
//! pool is refilled from the buddy allocator with frames of arbitrary
//! colors until one of the app's colors comes (or the buddy allocator is
//! empty). If none comes, the request fails with
//! [`MemoryError::ColorsExhausted`]: COLORIS has no fallback (its monitor
//! adds colors instead, `ALLOC_COLORS(UNIT)`), so the address space pages
//! out one of the app's pages. Code and data pages are colored alike (the
//! allocator does not tell them apart). Apps without a set get every
//! color round-robin.
//!
//! Shared pages ([`AllocHint::shared`]) get a random color
//! ([`SharedColors::Random`]) or one of a reserved set, round-robin
//! ([`SharedColors::Reserved`]); when the reserved colors are exhausted a
//! frame of another color is used and counted as a fallback of the
//! requesting app. A freed frame goes back to its color's list unless the
//! list is full (pool / colors frames), in which case it goes back to the
//! buddy allocator, as in the paper. Colored apps and shared pages get
//! 4 KiB pages only (larger orders are refused as out of memory).

use cachepart_units::IdSet;
use serde::{Deserialize, Serialize};

use super::allocator::{AllocHint, AllocatorKind, AppAllocStats, FrameAllocator};
use super::buddy::BuddyAllocator;
use super::color::ColorLayout;
use super::color_pool::{
    forward_colored_frames, pop_round_robin, AppColors, ColorLists, ColoredFrames,
};
use super::error::MemoryError;
use super::page::{Frame, FRAME_BYTES};
use crate::splitmix::SplitMix64;

/// Colors of shared pages.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum SharedColors {
    /// A color drawn at random (seeded) for each shared page.
    #[default]
    Random,
    /// The colors of this set, round-robin (e.g. `{"reserved": "60-63"}`).
    Reserved(IdSet),
}

/// Parameters of the `coloris` allocator (scenario key `coloris`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ColorisPoolConfig {
    /// Bytes of the memory pool (default 1 GiB, a multiple of 4 KiB).
    #[serde(default = "default_pool")]
    pub pool_bytes: u64,
    /// Colors of shared pages (default `random`).
    #[serde(default)]
    pub shared: SharedColors,
    /// Seed of the random colors of shared pages.
    #[serde(default)]
    pub seed: u64,
}

fn default_pool() -> u64 {
    1 << 30
}

impl Default for ColorisPoolConfig {
    fn default() -> ColorisPoolConfig {
        ColorisPoolConfig {
            pool_bytes: default_pool(),
            shared: SharedColors::Random,
            seed: 0,
        }
    }
}

/// COLORIS's allocator: a pool of per-color lists over a buddy allocator.
#[derive(Clone, Debug)]
pub struct ColorisAllocator {
    mem: ColoredFrames,
    cap: usize,
    any_cursor: u32,
    reserved: Option<AppColors>,
    rng: SplitMix64,
}

impl ColorisAllocator {
    /// A pool as `cfg` says, colored by `layout`, filled from `buddy`.
    pub fn new(
        mut buddy: BuddyAllocator,
        layout: ColorLayout,
        cfg: &ColorisPoolConfig,
    ) -> Result<ColorisAllocator, MemoryError> {
        if cfg.pool_bytes == 0 || !cfg.pool_bytes.is_multiple_of(FRAME_BYTES) {
            return Err(MemoryError::Config {
                field: "coloris.pool-bytes",
                reason: format!(
                    "{} is not a positive multiple of 4096 bytes",
                    cfg.pool_bytes
                ),
            });
        }
        let reserved = match &cfg.shared {
            SharedColors::Random => None,
            SharedColors::Reserved(set) => {
                layout.check_colors(set)?;
                if set.is_empty() {
                    return Err(MemoryError::Config {
                        field: "coloris.shared.reserved",
                        reason: "the reserved color set is empty".into(),
                    });
                }
                Some(AppColors {
                    set: set.clone(),
                    order: set.iter().collect(),
                    cursor: 0,
                })
            }
        };
        let pool = cfg.pool_bytes / FRAME_BYTES;
        let mut lists = ColorLists::new(layout);
        for _ in 0..pool {
            match buddy.alloc(0, AllocHint::default()) {
                Ok(f) => lists.push(f),
                Err(_) => break,
            }
        }
        Ok(ColorisAllocator {
            mem: ColoredFrames::new(buddy, lists),
            cap: (pool / layout.colors()).max(1) as usize,
            any_cursor: 0,
            reserved,
            rng: SplitMix64::new(cfg.seed),
        })
    }

    /// The buddy allocator underneath.
    pub fn buddy(&self) -> &BuddyAllocator {
        &self.mem.buddy
    }

    /// Frames in the pool.
    pub fn pool_frames(&self) -> u64 {
        self.mem.lists.len()
    }

    /// Frames in the pool of color `c`.
    pub fn pool_frames_of(&self, c: u32) -> usize {
        self.mem.lists.len_of(c)
    }

    /// Pulls buddy frames into the pool until one of a color `fits`
    /// accepts comes (returned) or the buddy allocator is empty.
    fn refill(&mut self, app: u32, fits: impl Fn(u32) -> bool) -> Option<Frame> {
        while let Ok(f) = self.mem.buddy_alloc(0) {
            self.mem.apps.stats_mut(app).refills += 1;
            if fits(self.mem.lists.color_of(f)) {
                return Some(f);
            }
            self.mem.lists.push(f);
        }
        None
    }

    /// Any frame, round-robin over every color, then the buddy's.
    fn any_frame(&mut self, start: u32) -> Option<Frame> {
        match self.mem.lists.next_nonempty(start) {
            Some(c) => {
                self.any_cursor = (c + 1) % self.mem.lists.layout().colors() as u32;
                self.mem.lists.pop(c)
            }
            None => self.mem.buddy_alloc(0).ok(),
        }
    }

    fn take_of_set(&mut self, app: u32, entry: &mut AppColors) -> Option<Frame> {
        if let Some(f) = pop_round_robin(&mut self.mem.lists, entry) {
            return Some(f);
        }
        let f = self.refill(app, |c| entry.set.contains(c))?;
        let c = self.mem.lists.color_of(f);
        if let Some(k) = entry.order.iter().position(|&x| x == c) {
            entry.cursor = (k + 1) % entry.order.len();
        }
        Some(f)
    }

    fn shared_frame(&mut self, app: u32) -> Result<Frame, MemoryError> {
        let colors = self.mem.lists.layout().colors();
        if let Some(mut entry) = self.reserved.take() {
            let f = self.take_of_set(app, &mut entry);
            self.reserved = Some(entry);
            if let Some(f) = f {
                return Ok(f);
            }
            self.mem.apps.stats_mut(app).fallbacks += 1;
            let start = self.any_cursor;
            return self.any_frame(start).ok_or(MemoryError::OutOfMemory {
                order: 0,
                free_frames: 0,
            });
        }
        let c = self.rng.below(colors) as u32;
        if let Some(f) = self.mem.lists.pop(c) {
            return Ok(f);
        }
        if let Some(f) = self.refill(app, |x| x == c) {
            return Ok(f);
        }
        self.any_frame(c).ok_or(MemoryError::OutOfMemory {
            order: 0,
            free_frames: 0,
        })
    }

    fn alloc_small(&mut self, hint: AllocHint) -> Result<Frame, MemoryError> {
        let app = hint.app;
        let colors = self.mem.lists.layout().colors();
        if hint.shared {
            return self.shared_frame(app);
        }
        if let Some(c) = hint.color.filter(|&c| u64::from(c) < colors) {
            if let Some(f) = self.mem.lists.pop(c) {
                return Ok(f);
            }
            if let Some(f) = self.refill(app, |x| x == c) {
                return Ok(f);
            }
        }
        let Some(mut entry) = self.mem.apps.take(app) else {
            let start = self.any_cursor;
            return self.any_frame(start).ok_or(MemoryError::OutOfMemory {
                order: 0,
                free_frames: 0,
            });
        };
        let got = self.take_of_set(app, &mut entry);
        let result = got.ok_or_else(|| MemoryError::ColorsExhausted {
            app,
            colors: entry.set.to_string(),
            free_frames: self.free_frames(),
        });
        self.mem.apps.put(app, entry);
        if result.is_err() {
            self.mem.apps.stats_mut(app).exhausted += 1;
        }
        result
    }
}

impl FrameAllocator for ColorisAllocator {
    fn alloc(&mut self, order: u8, hint: AllocHint) -> Result<Frame, MemoryError> {
        if order > 0 {
            return self.mem.alloc_block(order, hint, hint.shared);
        }
        let f = self.alloc_small(hint)?;
        self.mem.apps.stats_mut(hint.app).frames += 1;
        Ok(f)
    }

    fn free(&mut self, frame: Frame, order: u8) {
        if order == 0 && self.mem.lists.len_of(self.mem.lists.color_of(frame)) < self.cap {
            self.mem.lists.push(frame);
        } else {
            self.mem.buddy.free(frame, order);
        }
    }

    fn kind(&self) -> AllocatorKind {
        AllocatorKind::Coloris
    }

    forward_colored_frames!();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> ColorLayout {
        ColorLayout::with_sets(1024, 64, 4096).unwrap() // 16 colors
    }

    #[test]
    fn pool_serves_colors_round_robin_and_takes_frees_back() {
        let cfg = ColorisPoolConfig {
            pool_bytes: 512 << 10, // 128 frames: 8 per color
            ..ColorisPoolConfig::default()
        };
        let mut c =
            ColorisAllocator::new(BuddyAllocator::new(1 << 20).unwrap(), layout(), &cfg).unwrap();
        assert_eq!(c.pool_frames(), 128);
        assert_eq!(c.free_frames(), 256);
        c.set_app_colors(0, &"4-5".parse().unwrap()).unwrap();
        let h = AllocHint::for_page(0, 0);
        let got: Vec<u32> = (0..16)
            .map(|_| {
                let f = c.alloc(0, h).unwrap();
                c.mem.lists.color_of(f)
            })
            .collect();
        assert_eq!(&got[..4], &[4, 5, 4, 5]);
        assert!(got.iter().all(|&x| x == 4 || x == 5));
        assert_eq!(c.app_stats(0).refills, 0);
        // The pool's colors 4 and 5 are empty: the buddy refills them.
        let f = c.alloc(0, h).unwrap();
        assert!([4, 5].contains(&c.mem.lists.color_of(f)));
        assert!(c.app_stats(0).refills > 0);
        // A freed frame returns to its list.
        let before = c.pool_frames_of(4);
        c.free(Frame(4), 0);
        assert_eq!(c.pool_frames_of(4), before + 1);
    }

    #[test]
    fn no_fallback_and_shared_reserved_colors() {
        let cfg = ColorisPoolConfig {
            pool_bytes: 1 << 30, // more than memory: all of it
            shared: SharedColors::Reserved("15".parse().unwrap()),
            seed: 1,
        };
        let mut c =
            ColorisAllocator::new(BuddyAllocator::new(256 << 10).unwrap(), layout(), &cfg).unwrap();
        assert_eq!(c.pool_frames(), 64); // 4 per color
        c.set_app_colors(2, &"3".parse().unwrap()).unwrap();
        for _ in 0..4 {
            c.alloc(0, AllocHint::for_page(2, 0)).unwrap();
        }
        assert!(matches!(
            c.alloc(0, AllocHint::for_page(2, 0)),
            Err(MemoryError::ColorsExhausted { app: 2, .. })
        ));
        let shared = AllocHint {
            shared: true,
            ..AllocHint::for_page(2, 0)
        };
        for _ in 0..4 {
            let f = c.alloc(0, shared).unwrap();
            assert_eq!(c.mem.lists.color_of(f), 15);
        }
        let f = c.alloc(0, shared).unwrap();
        assert_ne!(c.mem.lists.color_of(f), 15);
        assert_eq!(c.app_stats(2).fallbacks, 1);
        let bad = ColorisPoolConfig {
            shared: SharedColors::Reserved("16".parse().unwrap()),
            ..ColorisPoolConfig::default()
        };
        assert!(matches!(
            ColorisAllocator::new(BuddyAllocator::new(1 << 20).unwrap(), layout(), &bad),
            Err(MemoryError::ColorOutOfRange {
                color: 16,
                colors: 16
            })
        ));
    }

    #[test]
    fn config_serde() {
        let c: ColorisPoolConfig =
            serde_json::from_str(r#"{"pool-bytes": 4096, "shared": {"reserved": "60-63"}}"#)
                .unwrap();
        assert_eq!(c.shared, SharedColors::Reserved("60-63".parse().unwrap()));
        let d: ColorisPoolConfig = serde_json::from_str(r#"{"shared": "random"}"#).unwrap();
        assert_eq!(d.pool_bytes, 1 << 30);
        assert!(serde_json::from_str::<ColorisPoolConfig>(r#"{"pool": 1}"#).is_err());
    }
}
