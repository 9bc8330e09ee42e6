//! COLORIS's recoloring engine (PACT'14, section 3.3): moving an
//! application's pages when its color set shrinks or grows.
//!
//! The caller first gives the allocator the app's new colors
//! ([`FrameAllocator::set_app_colors`]), then asks the engine to act on
//! the app's [`AddressSpace`]:
//!
//! * **Shrink, lazy recoloring** ([`RecolorEngine::shrink`]): every
//!   resident 4 KiB page whose frame is not of the app's colors is marked
//!   (COLORIS clears its present bit and sets a spare bit). The caller
//!   drops the returned pages from its TLBs; the next touch of each (the
//!   page walk, [`AddressSpace::touch`]) moves it to a frame from the
//!   allocator's round-robin over the app's current colors, so recolored
//!   pages spread evenly.
//! * **Expand, Selective Moving** ([`ExpandPolicy::SelectiveMoving`]): for
//!   each old color, the app's pages of that color in address order, and
//!   every `(n+1)`-th of them (`n` the LLC's associativity: a color holds
//!   `n` pages without conflict) is moved at once to the new colors,
//!   round-robin.
//! * **Expand, Redistribution** ([`ExpandPolicy::Redistribution`]): the
//!   access bits are cleared and the caller flushes its TLBs; when the
//!   window `WIN` has passed ([`RecolorEngine::poll`]), every page touched
//!   in it (walked, so its access bit is set) is marked for lazy
//!   recoloring over all the app's colors.
//!
//! Every move allocates the new frame, remaps, frees the old frame (back
//! to COLORIS's pool) and charges a page copy to the app
//! ([`PagingStats::pages_recolored`](crate::memory::PagingStats),
//! `copy_ns`). Everything is in address order: deterministic.

use std::collections::BTreeMap;

use cachepart_units::IdSet;
use serde::{Deserialize, Serialize};

use super::address_space::{AddressSpace, HugeRecolor};
use super::allocator::FrameAllocator;
use super::error::MemoryError;
use super::page::{Frame, PageSize, HUGE_ORDER};

/// How an expansion picks the pages to move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExpandPolicy {
    /// One in every n+1 pages of each old color, moved at once.
    #[default]
    SelectiveMoving,
    /// Pages touched within the window WIN, moved lazily.
    Redistribution,
}

/// Parameters of the recoloring engine (scenario key `recolor`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct RecolorConfig {
    /// The expansion policy (`selective-moving` or `redistribution`).
    #[serde(default)]
    pub expand: ExpandPolicy,
    /// Redistribution's window WIN in microseconds (default 3000: the
    /// paper's 3 ms).
    #[serde(default = "default_win")]
    pub win_us: f64,
}

fn default_win() -> f64 {
    3000.0
}

impl Default for RecolorConfig {
    fn default() -> RecolorConfig {
        RecolorConfig {
            expand: ExpandPolicy::default(),
            win_us: default_win(),
        }
    }
}

/// What the caller must do after a recoloring step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecolorAction {
    /// 4 KiB virtual pages whose translations must leave the app's TLBs.
    pub invalidate: Vec<u64>,
    /// 2 MiB virtual pages (superpages recolored by a shrink) whose
    /// translations must leave the app's TLBs.
    pub invalidate_huge: Vec<u64>,
    /// Whether the app's TLBs must be flushed whole (access bits cleared).
    pub flush_tlb: bool,
    /// Pages moved at once by this step (lazy moves happen on touch).
    pub moved: u64,
    /// Pages marked for a lazy move by this step.
    pub marked: u64,
}

impl RecolorAction {
    /// The translations to drop, as the TLB names them.
    pub fn tlb_entries(&self) -> impl Iterator<Item = (PageSize, u64)> + '_ {
        self.invalidate
            .iter()
            .map(|&v| (PageSize::Small, v))
            .chain(self.invalidate_huge.iter().map(|&v| (PageSize::Huge, v)))
    }
}

/// The recoloring engine: its configuration and the open Redistribution
/// windows (per app: when the window opened, in microseconds).
#[derive(Clone, Debug, Default)]
pub struct RecolorEngine {
    cfg: RecolorConfig,
    windows: BTreeMap<u32, f64>,
}

/// The longest Redistribution window ([`RecolorConfig::win_us`]): one
/// second, the bound of the paging costs
/// ([`PagingCosts`](super::address_space::PagingCosts)). The paper's
/// window is 3 ms; one that outlasts the run never closes, so the pages
/// touched in it are never moved.
pub const MAX_WIN_US: f64 = 1e6;

impl RecolorEngine {
    /// An engine with `cfg`; a window that is negative, not finite or
    /// longer than [`MAX_WIN_US`] is an error naming `recolor.win-us`.
    pub fn new(cfg: RecolorConfig) -> Result<RecolorEngine, MemoryError> {
        if !(cfg.win_us.is_finite() && (0.0..=MAX_WIN_US).contains(&cfg.win_us)) {
            return Err(MemoryError::Config {
                field: "recolor.win-us",
                reason: format!(
                    "{:?}: expected a finite number of microseconds from 0 to {MAX_WIN_US} (one second)",
                    cfg.win_us
                ),
            });
        }
        Ok(RecolorEngine {
            cfg,
            windows: BTreeMap::new(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &RecolorConfig {
        &self.cfg
    }

    /// Whether a Redistribution window is open for `app`.
    pub fn window_open(&self, app: u32) -> bool {
        self.windows.contains_key(&app)
    }

    /// Lazy recoloring after a shrink: marks every resident 4 KiB page of
    /// `space` whose frame is not of the app's current colors. A
    /// superpage with a frame not of the app's colors (under SWAP) is
    /// recolored by [`AddressSpace::recolor_huge`]: moved whole if a
    /// superpage of the app's colors is free (counted in `moved`, 512
    /// pages), else split and its 4 KiB pages marked. Nothing to do when
    /// the app has no color set.
    pub fn shrink<A: FrameAllocator + ?Sized>(
        &mut self,
        space: &mut AddressSpace,
        alloc: &mut A,
    ) -> RecolorAction {
        let app = space.app();
        let mut act = RecolorAction::default();
        if alloc.app_colors(app).is_none() {
            return act;
        }
        for (vpn, frame) in space.small_pages() {
            if !alloc.frame_fits(app, frame) && space.mark_recolor(vpn) {
                act.invalidate.push(vpn);
                act.marked += 1;
            }
        }
        for (hv, first) in space.huge_pages() {
            let span = first.0..first.0 + (1 << HUGE_ORDER);
            if span.clone().all(|f| alloc.frame_fits(app, Frame(f))) {
                continue;
            }
            match space.recolor_huge(hv, alloc) {
                Some(HugeRecolor::Moved(_)) => act.moved += 1 << HUGE_ORDER,
                Some(HugeRecolor::Split { marked }) => act.marked += marked,
                None => continue,
            }
            act.invalidate_huge.push(hv);
        }
        act
    }

    /// An expansion by the colors `added` (already in the app's set on
    /// the allocator), by the configured policy: Selective Moving moves
    /// pages now; Redistribution opens the window at `now_us` (the caller
    /// flushes the TLBs and later calls [`Self::poll`]). `ways` is the
    /// LLC's associativity.
    pub fn expand<A: FrameAllocator + ?Sized>(
        &mut self,
        space: &mut AddressSpace,
        alloc: &mut A,
        added: &IdSet,
        ways: u32,
        now_us: f64,
    ) -> Result<RecolorAction, MemoryError> {
        match self.cfg.expand {
            ExpandPolicy::SelectiveMoving => selective_moving(space, alloc, added, ways),
            ExpandPolicy::Redistribution => {
                space.clear_accessed();
                self.windows.insert(space.app(), now_us);
                Ok(RecolorAction {
                    flush_tlb: true,
                    ..RecolorAction::default()
                })
            }
        }
    }

    /// Closes `space`'s Redistribution window if `WIN` has passed at
    /// `now_us`: every page touched in the window is marked for a lazy
    /// move. Nothing to do otherwise.
    pub fn poll(&mut self, space: &mut AddressSpace, now_us: f64) -> RecolorAction {
        let mut act = RecolorAction::default();
        let app = space.app();
        match self.windows.get(&app) {
            Some(&opened) if now_us - opened >= self.cfg.win_us => {
                self.windows.remove(&app);
            }
            _ => return act,
        }
        for vpn in space.accessed_pages() {
            if space.mark_recolor(vpn) {
                act.invalidate.push(vpn);
                act.marked += 1;
            }
        }
        act
    }
}

/// Selective Moving: for each of the app's colors not in `added`, every
/// `(ways+1)`-th page of that color (address order) moves now to the
/// colors of `added`, round-robin. A page that finds no frame stays.
pub fn selective_moving<A: FrameAllocator + ?Sized>(
    space: &mut AddressSpace,
    alloc: &mut A,
    added: &IdSet,
    ways: u32,
) -> Result<RecolorAction, MemoryError> {
    let mut act = RecolorAction::default();
    let app = space.app();
    let (Some(layout), Some(colors)) = (alloc.color_layout().copied(), alloc.app_colors(app))
    else {
        return Ok(act);
    };
    if let Some(c) = added.iter().find(|&c| !colors.contains(c)) {
        return Err(MemoryError::Config {
            field: "recolor.added",
            reason: format!("color {c} is not in app {app}'s colors {colors}: set them first"),
        });
    }
    let old = colors.difference(added);
    let targets: Vec<u32> = added.iter().collect();
    if targets.is_empty() {
        return Ok(act);
    }
    let mut by_color: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for (vpn, frame) in space.small_pages() {
        let c = layout.color_of_frame(frame);
        if old.contains(c) {
            by_color.entry(c).or_default().push(vpn);
        }
    }
    let every = ways as usize + 1;
    let mut next = 0usize;
    for pages in by_color.values() {
        for &vpn in pages.iter().skip(every - 1).step_by(every) {
            let target = targets[next % targets.len()];
            next += 1;
            match space.move_page(vpn, Some(target), alloc) {
                Ok(_) => {
                    act.invalidate.push(vpn);
                    act.moved += 1;
                }
                Err(MemoryError::OutOfMemory { .. } | MemoryError::ColorsExhausted { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    // Page-outs done to make room also leave the TLBs.
    act.invalidate
        .extend(space.take_invalidations().into_iter().map(|(_, v)| v));
    Ok(act)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::buddy::BuddyAllocator;
    use crate::memory::color::ColorLayout;
    use crate::memory::coloris::{ColorisAllocator, ColorisPoolConfig};
    use crate::memory::HugePages;

    fn setup() -> (ColorisAllocator, AddressSpace, ColorLayout) {
        let layout = ColorLayout::with_sets(1024, 64, 4096).unwrap(); // 16 colors
        let cfg = ColorisPoolConfig {
            pool_bytes: 4 << 20,
            ..ColorisPoolConfig::default()
        };
        let alloc =
            ColorisAllocator::new(BuddyAllocator::new(8 << 20).unwrap(), layout, &cfg).unwrap();
        (alloc, AddressSpace::new(1, HugePages::Never), layout)
    }

    #[test]
    fn shrink_marks_and_moves_on_touch() {
        let (mut a, mut s, layout) = setup();
        a.set_app_colors(1, &"0-3".parse().unwrap()).unwrap();
        for p in 0..40u64 {
            s.touch(p << 12, &mut a).unwrap();
        }
        a.set_app_colors(1, &"0-1".parse().unwrap()).unwrap();
        let mut e = RecolorEngine::new(RecolorConfig::default()).unwrap();
        let act = e.shrink(&mut s, &mut a);
        assert_eq!(act.marked, 20);
        assert_eq!(s.marked_pages(), 20);
        // Nothing moved yet; touching moves the page into colors 0-1.
        assert_eq!(s.stats().pages_recolored, 0);
        for &v in &act.invalidate {
            let (_, _, f) = s.touch(v << 12, &mut a).unwrap();
            assert!(layout.color_of_frame(f) < 2);
        }
        assert_eq!(s.stats().pages_recolored, 20);
        assert_eq!(s.stats().copy_ns, 20 * 3000);
        assert_eq!(s.marked_pages(), 0);
    }

    #[test]
    fn selective_moving_moves_one_in_n_plus_one() {
        let (mut a, mut s, layout) = setup();
        a.set_app_colors(1, &"0".parse().unwrap()).unwrap();
        for p in 0..20u64 {
            s.touch(p << 12, &mut a).unwrap();
        }
        a.set_app_colors(1, &"0,5-6".parse().unwrap()).unwrap();
        let mut e = RecolorEngine::new(RecolorConfig::default()).unwrap();
        // 4 ways: pages 5, 10, 15, 20 of color 0 (1-based) move.
        let act = e
            .expand(&mut s, &mut a, &"5-6".parse().unwrap(), 4, 0.0)
            .unwrap();
        assert_eq!(act.moved, 4);
        assert_eq!(act.invalidate, vec![4, 9, 14, 19]);
        let colors: Vec<u32> = act
            .invalidate
            .iter()
            .map(|&v| layout.color_of_frame(s.lookup(v << 12).unwrap().2))
            .collect();
        assert_eq!(colors, vec![5, 6, 5, 6]);
        assert_eq!(s.stats().pages_recolored, 4);
    }

    #[test]
    fn redistribution_moves_pages_touched_in_the_window() {
        let (mut a, mut s, _) = setup();
        a.set_app_colors(1, &"0-1".parse().unwrap()).unwrap();
        for p in 0..10u64 {
            s.touch(p << 12, &mut a).unwrap();
        }
        a.set_app_colors(1, &"0-3".parse().unwrap()).unwrap();
        let cfg = RecolorConfig {
            expand: ExpandPolicy::Redistribution,
            win_us: 3000.0,
        };
        let mut e = RecolorEngine::new(cfg).unwrap();
        let act = e
            .expand(&mut s, &mut a, &"2-3".parse().unwrap(), 4, 100.0)
            .unwrap();
        assert!(act.flush_tlb && e.window_open(1));
        for p in [1u64, 3, 5] {
            s.touch(p << 12, &mut a).unwrap();
        }
        assert_eq!(e.poll(&mut s, 2000.0), RecolorAction::default());
        let act = e.poll(&mut s, 3100.0);
        assert_eq!(act.invalidate, vec![1, 3, 5]);
        assert!(!e.window_open(1));
        for p in [1u64, 3, 5] {
            s.touch(p << 12, &mut a).unwrap();
        }
        assert_eq!(s.stats().pages_recolored, 3);
        assert!(RecolorEngine::new(RecolorConfig {
            win_us: f64::NAN,
            ..cfg
        })
        .is_err());
        // a window that never closes in any run is refused; the bound is
        // taken
        for (win_us, ok) in [
            (MAX_WIN_US, true),
            (1000000.5, false),
            (1e300, false),
            (-1.0, false),
        ] {
            let r = RecolorEngine::new(RecolorConfig { win_us, ..cfg });
            assert_eq!(r.is_ok(), ok, "{win_us}");
            if let Err(e) = r {
                assert!(
                    e.to_string()
                        .contains("expected a finite number of microseconds from 0 to 1000000"),
                    "{e}"
                );
            }
        }
    }
}
