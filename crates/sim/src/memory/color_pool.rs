//! The parts that both color-aware allocators share: per-color free lists
//! of 4 KiB frames ([`ColorLists`]), the per-app color sets with their
//! round-robin cursors and counters ([`AppColorTable`]), the two with the
//! buddy allocator behind them ([`ColoredFrames`]), and the
//! [`super::FrameAllocator`] methods that only forward to those
//! (`forward_colored_frames!`).
//!
//! Lists are LIFO stacks (the frame freed last is reused first, as the
//! buddy allocator's lists are), so runs are deterministic.

use std::collections::BTreeMap;

use cachepart_units::IdSet;

use super::allocator::{AllocHint, AppAllocStats, FrameAllocator};
use super::buddy::BuddyAllocator;
use super::color::ColorLayout;
use super::error::MemoryError;
use super::page::{Frame, HUGE_ORDER};
use super::swap_map::SwapMap;

/// One free list of 4 KiB frames per color.
#[derive(Clone, Debug)]
pub struct ColorLists {
    layout: ColorLayout,
    lists: Vec<Vec<Frame>>,
    len: u64,
}

impl ColorLists {
    /// Empty lists for the colors of `layout`.
    pub fn new(layout: ColorLayout) -> ColorLists {
        ColorLists {
            layout,
            lists: vec![Vec::new(); layout.colors() as usize],
            len: 0,
        }
    }

    /// The layout.
    pub fn layout(&self) -> &ColorLayout {
        &self.layout
    }

    /// The color of `frame`.
    #[inline]
    pub fn color_of(&self, frame: Frame) -> u32 {
        self.layout.color_of_frame(frame)
    }

    /// Puts `frame` on its color's list.
    pub fn push(&mut self, frame: Frame) {
        let c = self.color_of(frame) as usize;
        self.lists[c].push(frame);
        self.len += 1;
    }

    /// A frame of color `c`, if its list has one.
    pub fn pop(&mut self, c: u32) -> Option<Frame> {
        let f = self.lists.get_mut(c as usize)?.pop()?;
        self.len -= 1;
        Some(f)
    }

    /// Frames on the list of color `c`.
    pub fn len_of(&self, c: u32) -> usize {
        self.lists.get(c as usize).map_or(0, Vec::len)
    }

    /// Frames on all lists.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when every list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first color at or after `start` (cyclically) whose list is not
    /// empty.
    pub fn next_nonempty(&self, start: u32) -> Option<u32> {
        let n = self.lists.len() as u32;
        (0..n)
            .map(|i| (start + i) % n)
            .find(|&c| !self.lists[c as usize].is_empty())
    }
}

/// One app's colors, round-robin cursor and counters.
#[derive(Clone, Debug, Default)]
pub struct AppColors {
    /// The set.
    pub set: IdSet,
    /// The set as a list, in increasing order.
    pub order: Vec<u32>,
    /// Index in `order` of the next color to try.
    pub cursor: usize,
}

/// The per-app color sets and counters of a color-aware allocator.
#[derive(Clone, Debug, Default)]
pub struct AppColorTable {
    colors: BTreeMap<u32, AppColors>,
    stats: BTreeMap<u32, AppAllocStats>,
}

impl AppColorTable {
    /// Sets (or, with an empty set, removes) `app`'s colors, checked
    /// against `layout`. The round-robin restarts at the lowest color.
    pub fn set(&mut self, layout: &ColorLayout, app: u32, set: &IdSet) -> Result<(), MemoryError> {
        layout.check_colors(set)?;
        if set.is_empty() {
            self.colors.remove(&app);
        } else {
            self.colors.insert(
                app,
                AppColors {
                    set: set.clone(),
                    order: set.iter().collect(),
                    cursor: 0,
                },
            );
        }
        Ok(())
    }

    /// `app`'s colors, if it has a set.
    pub fn get(&self, app: u32) -> Option<&AppColors> {
        self.colors.get(&app)
    }

    /// `app`'s colors, mutably.
    pub fn get_mut(&mut self, app: u32) -> Option<&mut AppColors> {
        self.colors.get_mut(&app)
    }

    /// Takes `app`'s colors out of the table (to use them while the
    /// allocator is borrowed mutably); [`Self::put`] puts them back.
    pub fn take(&mut self, app: u32) -> Option<AppColors> {
        self.colors.remove(&app)
    }

    /// Puts back colors taken by [`Self::take`].
    pub fn put(&mut self, app: u32, colors: AppColors) {
        self.colors.insert(app, colors);
    }

    /// `app`'s counters.
    pub fn stats(&self, app: u32) -> AppAllocStats {
        self.stats.get(&app).copied().unwrap_or_default()
    }

    /// `app`'s counters, mutably.
    pub fn stats_mut(&mut self, app: u32) -> &mut AppAllocStats {
        self.stats.entry(app).or_default()
    }
}

/// Takes a frame for an app with colors `app`: the first color, in
/// round-robin order from the app's cursor, whose list has a frame; the
/// cursor moves past the color served.
pub fn pop_round_robin(lists: &mut ColorLists, app: &mut AppColors) -> Option<Frame> {
    let n = app.order.len();
    for i in 0..n {
        let k = (app.cursor + i) % n;
        if let Some(f) = lists.pop(app.order[k]) {
            app.cursor = (k + 1) % n;
            return Some(f);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_skips_empty_colors() {
        let layout = ColorLayout::with_sets(512, 64, 4096).unwrap(); // 8 colors
        let mut lists = ColorLists::new(layout);
        for f in 0..32 {
            lists.push(Frame(f));
        }
        assert_eq!(lists.len(), 32);
        assert_eq!(lists.len_of(3), 4);
        let mut table = AppColorTable::default();
        table.set(&layout, 7, &"1,3,5".parse().unwrap()).unwrap();
        assert!(table.set(&layout, 7, &"8".parse().unwrap()).is_err());
        let app = table.get_mut(7).unwrap();
        let got: Vec<u32> = (0..6)
            .map(|_| layout.color_of_frame(pop_round_robin(&mut lists, app).unwrap()))
            .collect();
        assert_eq!(got, vec![1, 3, 5, 1, 3, 5]);
        // Drain color 3: the round-robin goes on over 1 and 5.
        while lists.pop(3).is_some() {}
        let got: Vec<u32> = (0..4)
            .map(|_| layout.color_of_frame(pop_round_robin(&mut lists, app).unwrap()))
            .collect();
        assert_eq!(got, vec![1, 5, 1, 5]);
        assert_eq!(lists.next_nonempty(1), Some(2));
        assert!(pop_round_robin(&mut lists, app).is_none());
    }
}

/// SWAP's `2^k` free lists of pseudo-superpages (order-9 blocks of
/// pseudo-physical frames), one per superpage color, with a round-robin
/// cursor per app over the superpage colors its 4 KiB colors cover.
///
/// A pseudo-superpage of superpage color `s` maps, frame by frame, to the
/// 4 KiB colors [`SwapMap::colors_of`] `s`; an app is given only
/// superpage colors all of whose 4 KiB colors are its own
/// ([`SwapMap::superpage_colors_within`]). Lists are filled from the
/// buddy allocator on demand (blocks of other colors are parked on their
/// lists) and give their blocks back to it when it runs out of frames
/// ([`ColoredFrames::buddy_alloc`]). LIFO, deterministic.
#[derive(Clone, Debug)]
pub struct SuperpageLists {
    swap: SwapMap,
    lists: Vec<Vec<Frame>>,
    len: u64,
    cursors: BTreeMap<u32, usize>,
}

impl SuperpageLists {
    /// Empty lists for the `2^k` superpage colors of `swap`.
    pub fn new(swap: SwapMap) -> SuperpageLists {
        SuperpageLists {
            swap,
            lists: vec![Vec::new(); swap.superpage_colors() as usize],
            len: 0,
            cursors: BTreeMap::new(),
        }
    }

    /// The swap.
    pub fn swap(&self) -> &SwapMap {
        &self.swap
    }

    /// Parks pseudo-superpage `f` (its first frame) on its color's list.
    pub fn push(&mut self, f: Frame) {
        let s = self.swap.superpage_color(f) as usize;
        self.lists[s].push(f);
        self.len += 1;
    }

    /// A parked pseudo-superpage of superpage color `s`.
    pub fn pop(&mut self, s: u32) -> Option<Frame> {
        let f = self.lists.get_mut(s as usize)?.pop()?;
        self.len -= 1;
        Some(f)
    }

    /// A parked pseudo-superpage of any color (the lowest color first).
    pub fn pop_any(&mut self) -> Option<Frame> {
        let s = self.lists.iter().position(|l| !l.is_empty())?;
        self.pop(s as u32)
    }

    /// Pseudo-superpages parked on all lists.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when every list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Pseudo-superpages parked on the list of superpage color `s`.
    pub fn len_of(&self, s: u32) -> usize {
        self.lists.get(s as usize).map_or(0, Vec::len)
    }
}

/// What both color-aware allocators hold: the buddy allocator they take
/// frames from, the per-color lists of 4 KiB frames, under SWAP the
/// per-superpage-color lists of pseudo-superpages, and the apps' colors.
#[derive(Clone, Debug)]
pub struct ColoredFrames {
    /// The buddy allocator underneath.
    pub buddy: BuddyAllocator,
    /// Free 4 KiB frames by color.
    pub lists: ColorLists,
    /// Free pseudo-superpages by superpage color (only when the layout
    /// has a swap, [`ColorLayout::with_swap`]).
    pub supers: Option<SuperpageLists>,
    /// Each app's colors and counters.
    pub apps: AppColorTable,
}

impl ColoredFrames {
    /// `buddy` behind `lists`, no app colored yet; superpage lists when
    /// the lists' layout has a swap.
    pub fn new(buddy: BuddyAllocator, lists: ColorLists) -> ColoredFrames {
        let supers = lists.layout().swap().map(|s| SuperpageLists::new(*s));
        ColoredFrames {
            buddy,
            lists,
            supers,
            apps: AppColorTable::default(),
        }
    }

    /// A block of `order` > 0. Without a swap, superpages are not
    /// colored: from the buddy allocator, except for a colored app or when
    /// `refuse` (out of memory, so that its pages fall back to 4 KiB
    /// frames of its colors). Under SWAP a colored app gets a 2 MiB
    /// pseudo-superpage of one of the superpage colors its colors cover
    /// ([`SuperpageLists`]), round-robin; out of memory when it covers
    /// none or none is free.
    pub fn alloc_block(
        &mut self,
        order: u8,
        hint: AllocHint,
        refuse: bool,
    ) -> Result<Frame, MemoryError> {
        let oom = |s: &ColoredFrames| MemoryError::OutOfMemory {
            order,
            free_frames: s.free_frames(),
        };
        if refuse {
            return Err(oom(self));
        }
        let colored = self.apps.get(hint.app).is_some();
        if self.supers.is_none() || order != HUGE_ORDER {
            if colored {
                return Err(oom(self));
            }
            return self.buddy.alloc(order, hint);
        }
        if !colored {
            return match self.buddy.alloc(order, hint) {
                Ok(f) => Ok(f),
                Err(e) => self.supers.as_mut().and_then(|s| s.pop_any()).ok_or(e),
            };
        }
        self.colored_superpage(hint.app).ok_or_else(|| oom(self))
    }

    /// A pseudo-superpage for colored `app` (see [`Self::alloc_block`]).
    fn colored_superpage(&mut self, app: u32) -> Option<Frame> {
        let supers = self.supers.as_mut()?;
        let layout = *self.lists.layout();
        let set = &self.apps.get(app)?.set;
        let allowed = supers.swap.superpage_colors_within(&layout, set);
        if allowed.is_empty() {
            return None;
        }
        let n = allowed.len();
        let start = supers.cursors.get(&app).copied().unwrap_or(0) % n;
        let mut got = None;
        for i in 0..n {
            let k = (start + i) % n;
            if let Some(f) = supers.pop(allowed[k]) {
                got = Some((f, k));
                break;
            }
        }
        if got.is_none() {
            // Refill from the buddy allocator until a block of an allowed
            // superpage color comes; park the others.
            while let Ok(f) = self.buddy.alloc(HUGE_ORDER, AllocHint::default()) {
                let s = supers.swap.superpage_color(f);
                if let Some(k) = allowed.iter().position(|&x| x == s) {
                    got = Some((f, k));
                    break;
                }
                supers.push(f);
            }
        }
        let (f, k) = got?;
        supers.cursors.insert(app, (k + 1) % n);
        Some(f)
    }

    /// A block of `order` from the buddy allocator; when it has none,
    /// parked pseudo-superpages go back to it first (one at a time), so
    /// that the superpage lists never starve 4 KiB allocations. Without a
    /// swap this is the buddy allocator's `alloc`.
    pub fn buddy_alloc(&mut self, order: u8) -> Result<Frame, MemoryError> {
        loop {
            match self.buddy.alloc(order, AllocHint::default()) {
                Ok(f) => return Ok(f),
                Err(e) => match self.supers.as_mut().and_then(|s| s.pop_any()) {
                    Some(f) => self.buddy.free(f, HUGE_ORDER),
                    None => return Err(e),
                },
            }
        }
    }

    /// Free frames: the buddy allocator's, the lists' and the parked
    /// pseudo-superpages'.
    pub fn free_frames(&self) -> u64 {
        let parked = self.supers.as_ref().map_or(0, |s| s.len() << HUGE_ORDER);
        self.buddy.free_frames() + self.lists.len() + parked
    }
}

/// The [`super::FrameAllocator`] methods of a color-aware allocator that
/// only forward to its [`ColoredFrames`] field `mem` (used inside the
/// trait impl).
macro_rules! forward_colored_frames {
    () => {
        fn free_frames(&self) -> u64 {
            self.mem.free_frames()
        }

        fn total_frames(&self) -> u64 {
            self.mem.buddy.total_frames()
        }

        fn set_app_colors(&mut self, app: u32, colors: &IdSet) -> Result<(), MemoryError> {
            let layout = *self.mem.lists.layout();
            self.mem.apps.set(&layout, app, colors)
        }

        fn app_colors(&self, app: u32) -> Option<&IdSet> {
            self.mem.apps.get(app).map(|a| &a.set)
        }

        fn color_layout(&self) -> Option<&ColorLayout> {
            Some(self.mem.lists.layout())
        }

        fn app_stats(&self, app: u32) -> AppAllocStats {
            self.mem.apps.stats(app)
        }
    };
}
pub(crate) use forward_colored_frames;
