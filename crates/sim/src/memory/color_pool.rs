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
use super::page::Frame;

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

/// What both color-aware allocators hold: the buddy allocator they take
/// frames from, the per-color lists of 4 KiB frames and the apps' colors.
#[derive(Clone, Debug)]
pub struct ColoredFrames {
    /// The buddy allocator underneath.
    pub buddy: BuddyAllocator,
    /// Free 4 KiB frames by color.
    pub lists: ColorLists,
    /// Each app's colors and counters.
    pub apps: AppColorTable,
}

impl ColoredFrames {
    /// `buddy` behind `lists`, no app colored yet.
    pub fn new(buddy: BuddyAllocator, lists: ColorLists) -> ColoredFrames {
        ColoredFrames {
            buddy,
            lists,
            apps: AppColorTable::default(),
        }
    }

    /// A block of `order` > 0 (superpages are not colored): from the buddy
    /// allocator, except for a colored app or when `refuse` (out of
    /// memory, so that its pages fall back to 4 KiB frames of its colors).
    pub fn alloc_block(
        &mut self,
        order: u8,
        hint: AllocHint,
        refuse: bool,
    ) -> Result<Frame, MemoryError> {
        if refuse || self.apps.get(hint.app).is_some() {
            return Err(MemoryError::OutOfMemory {
                order,
                free_frames: self.free_frames(),
            });
        }
        self.buddy.alloc(order, hint)
    }

    /// Free frames: the buddy allocator's and the lists'.
    pub fn free_frames(&self) -> u64 {
        self.buddy.free_frames() + self.lists.len()
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
