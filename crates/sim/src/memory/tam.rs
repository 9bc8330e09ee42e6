//! Tam et al.'s color-aware allocator (WIOSCA'07, section 3): per-color
//! free lists refilled from the buddy allocator, with a MaxTry fallback.
//!
//! An order-0 request of an app with a color set takes a frame from the
//! lists of its colors, round-robin from the app's cursor. When all of
//! them are empty it asks the buddy allocator for frames, up to
//! [`TamConfig::max_try`] times (default 100): a frame of one of the app's
//! colors is handed out, any other is parked on its color's list. After
//! MaxTry misses (or when the buddy allocator is empty), a frame of
//! another color is handed out (from a list chosen at random, as the
//! paper does, else from the buddy allocator), which
//! breaks isolation and is counted in [`AppAllocStats::fallbacks`]; with
//! [`TamConfig::fallback`] off the request fails with
//! [`MemoryError::ColorsExhausted`] and the address space pages out.
//!
//! A request that names a color ([`AllocHint::color`], a recoloring move)
//! tries that color first (its list, then MaxTry buddy frames), then the
//! app's colors as above. Apps without a set get frames from the buddy
//! allocator, then from any list. Freed order-0 frames go to their color's
//! list; larger blocks go back to the buddy allocator. Colored apps get
//! only 4 KiB pages (an order above 0 is refused as out of memory, so a
//! transparent huge page falls back to 4 KiB): the paper colors 4 KiB
//! pages only.

use cachepart_units::IdSet;
use serde::{Deserialize, Serialize};

use super::allocator::{AllocHint, AllocatorKind, AppAllocStats, FrameAllocator};
use super::buddy::BuddyAllocator;
use super::color::ColorLayout;
use super::color_pool::{forward_colored_frames, pop_round_robin, ColorLists, ColoredFrames};
use super::error::MemoryError;
use super::page::Frame;
use crate::splitmix::SplitMix64;

/// Parameters of the `tam` allocator (scenario key `tam`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct TamConfig {
    /// Buddy allocations tried for a frame of the app's colors before
    /// falling back (the paper's MaxTry, default 100).
    #[serde(default = "default_max_try")]
    pub max_try: u32,
    /// Whether a frame of another color is handed out after MaxTry misses
    /// (default true, as in the paper); false pages out instead.
    #[serde(default = "default_true")]
    pub fallback: bool,
    /// Seed of the random choice of a fallback list.
    #[serde(default)]
    pub seed: u64,
}

fn default_max_try() -> u32 {
    100
}
fn default_true() -> bool {
    true
}

impl Default for TamConfig {
    fn default() -> TamConfig {
        TamConfig {
            max_try: default_max_try(),
            fallback: true,
            seed: 0,
        }
    }
}

/// Tam et al.'s allocator over a buddy allocator.
#[derive(Clone, Debug)]
pub struct TamAllocator {
    mem: ColoredFrames,
    cfg: TamConfig,
    rng: SplitMix64,
    any_cursor: u32,
}

impl TamAllocator {
    /// Colors by `layout`, taking frames from `buddy` (aged or not).
    pub fn new(buddy: BuddyAllocator, layout: ColorLayout, cfg: TamConfig) -> TamAllocator {
        TamAllocator {
            mem: ColoredFrames::new(buddy, ColorLists::new(layout)),
            rng: SplitMix64::new(cfg.seed),
            cfg,
            any_cursor: 0,
        }
    }

    /// The buddy allocator underneath.
    pub fn buddy(&self) -> &BuddyAllocator {
        &self.mem.buddy
    }

    /// Frames parked on the per-color lists.
    pub fn listed_frames(&self) -> u64 {
        self.mem.lists.len()
    }

    /// Up to `max_try` buddy frames: the first of a color `fits` accepts
    /// is returned, the others parked on their lists.
    fn try_buddy(&mut self, app: u32, fits: impl Fn(u32) -> bool) -> Option<Frame> {
        for _ in 0..self.cfg.max_try {
            let f = self.mem.buddy_alloc(0).ok()?;
            self.mem.apps.stats_mut(app).refills += 1;
            if fits(self.mem.lists.color_of(f)) {
                return Some(f);
            }
            self.mem.lists.push(f);
        }
        None
    }

    /// A frame of an app without colors: the buddy allocator's, else one
    /// from the lists, round-robin.
    fn any_frame(&mut self) -> Option<Frame> {
        if let Ok(f) = self.mem.buddy_alloc(0) {
            return Some(f);
        }
        let c = self.mem.lists.next_nonempty(self.any_cursor)?;
        self.any_cursor = c + 1;
        self.mem.lists.pop(c)
    }

    /// The fallback frame: from a list chosen at random (the first
    /// non-empty one from a random color), else the buddy allocator's.
    fn fallback_frame(&mut self) -> Option<Frame> {
        let start = self.rng.below(self.mem.lists.layout().colors()) as u32;
        match self.mem.lists.next_nonempty(start) {
            Some(c) => self.mem.lists.pop(c),
            None => self.mem.buddy_alloc(0).ok(),
        }
    }

    fn alloc_small(&mut self, hint: AllocHint) -> Result<Frame, MemoryError> {
        let app = hint.app;
        let colors = self.mem.lists.layout().colors();
        if let Some(c) = hint.color.filter(|&c| u64::from(c) < colors) {
            if let Some(f) = self.mem.lists.pop(c) {
                return Ok(f);
            }
            if let Some(f) = self.try_buddy(app, |x| x == c) {
                return Ok(f);
            }
        }
        let Some(mut entry) = self.mem.apps.take(app) else {
            return self.any_frame().ok_or(MemoryError::OutOfMemory {
                order: 0,
                free_frames: 0,
            });
        };
        let got = match pop_round_robin(&mut self.mem.lists, &mut entry) {
            Some(f) => Some(f),
            None => {
                let f = self.try_buddy(app, |x| entry.set.contains(x));
                if let Some(f) = f {
                    let c = self.mem.lists.color_of(f);
                    if let Some(k) = entry.order.iter().position(|&x| x == c) {
                        entry.cursor = (k + 1) % entry.order.len();
                    }
                }
                f
            }
        };
        let result = match got {
            Some(f) => Ok(f),
            None if self.cfg.fallback => match self.fallback_frame() {
                Some(f) => {
                    self.mem.apps.stats_mut(app).fallbacks += 1;
                    Ok(f)
                }
                None => Err(MemoryError::OutOfMemory {
                    order: 0,
                    free_frames: 0,
                }),
            },
            None => {
                self.mem.apps.stats_mut(app).exhausted += 1;
                Err(MemoryError::ColorsExhausted {
                    app,
                    colors: entry.set.to_string(),
                    free_frames: self.free_frames(),
                })
            }
        };
        self.mem.apps.put(app, entry);
        result
    }
}

impl FrameAllocator for TamAllocator {
    fn alloc(&mut self, order: u8, hint: AllocHint) -> Result<Frame, MemoryError> {
        if order > 0 {
            return self.mem.alloc_block(order, hint, false);
        }
        let f = self.alloc_small(hint)?;
        self.mem.apps.stats_mut(hint.app).frames += 1;
        Ok(f)
    }

    fn free(&mut self, frame: Frame, order: u8) {
        if order == 0 {
            self.mem.lists.push(frame);
        } else {
            self.mem.buddy.free(frame, order);
        }
    }

    fn kind(&self) -> AllocatorKind {
        AllocatorKind::Tam
    }

    forward_colored_frames!();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tam(mb: u64, cfg: TamConfig) -> TamAllocator {
        // 16 colors: 64 KiB per way.
        let layout = ColorLayout::with_sets(1024, 64, 4096).unwrap();
        TamAllocator::new(BuddyAllocator::new(mb << 20).unwrap(), layout, cfg)
    }

    #[test]
    fn colors_round_robin_and_counts_the_fallback() {
        let mut t = tam(1, TamConfig::default()); // 256 frames, 16 per color
        t.set_app_colors(1, &"2,5".parse().unwrap()).unwrap();
        let h = AllocHint::for_page(1, 0);
        let colors: Vec<u32> = (0..32)
            .map(|_| {
                let f = t.alloc(0, h).unwrap();
                t.mem.lists.color_of(f)
            })
            .collect();
        assert_eq!(&colors[..4], &[2, 5, 2, 5]);
        assert!(colors.iter().all(|&c| c == 2 || c == 5));
        assert_eq!(t.app_stats(1).fallbacks, 0);
        // Colors 2 and 5 are used up: the next frame is another color.
        let f = t.alloc(0, h).unwrap();
        assert!(![2, 5].contains(&t.mem.lists.color_of(f)));
        assert_eq!(t.app_stats(1).fallbacks, 1);
        assert_eq!(t.free_frames() + 33, t.total_frames());
        // Freed frames come back to their list and serve the app again.
        t.free(Frame(2), 0);
        let f = t.alloc(0, h).unwrap();
        assert_eq!(t.mem.lists.color_of(f), 2);
    }

    #[test]
    fn without_fallback_the_colors_run_out() {
        let cfg = TamConfig {
            fallback: false,
            ..TamConfig::default()
        };
        let mut t = tam(1, cfg);
        t.set_app_colors(3, &"7".parse().unwrap()).unwrap();
        for _ in 0..16 {
            t.alloc(0, AllocHint::for_page(3, 0)).unwrap();
        }
        let e = t.alloc(0, AllocHint::for_page(3, 0)).unwrap_err();
        assert!(
            matches!(e, MemoryError::ColorsExhausted { app: 3, .. }),
            "{e}"
        );
        assert_eq!(t.app_stats(3).exhausted, 1);
        // An app without a set still gets frames, and superpages.
        assert!(t.alloc(0, AllocHint::for_page(4, 0)).is_ok());
        assert!(t.alloc(9, AllocHint::for_page(3, 0)).is_err());
        assert!(BuddyAllocator::new(4096)
            .unwrap()
            .set_app_colors(0, &IdSet::new())
            .is_err());
    }

    #[test]
    fn max_try_bounds_the_search() {
        // MaxTry 3 on a fresh (sequential) buddy: frames 0, 1, 2 are
        // colors 0, 1, 2, so an app of color 9 falls back at once.
        let cfg = TamConfig {
            max_try: 3,
            ..TamConfig::default()
        };
        let mut t = tam(1, cfg);
        t.set_app_colors(0, &"9".parse().unwrap()).unwrap();
        let f = t.alloc(0, AllocHint::for_page(0, 0)).unwrap();
        assert_ne!(t.mem.lists.color_of(f), 9);
        assert_eq!(t.app_stats(0).fallbacks, 1);
        assert_eq!(t.app_stats(0).refills, 3);
        // The fallback frame came from one of the three parked ones.
        assert!(f.0 < 3);
        assert_eq!(t.listed_frames(), 2);
    }
}
