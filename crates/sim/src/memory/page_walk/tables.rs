//! Where the page tables lie in physical memory ([`TablePlacement`]), and
//! whether they take their owner's page colors ([`TableColors`],
//! `memory.page-table-colors`).

use std::collections::{HashMap, HashSet};

use cachepart_units::IdSet;
use serde::{Deserialize, Serialize};

use super::level_shift;
use crate::memory::color::ColorLayout;
use crate::memory::page::Frame;

/// Physical address where page tables start: above any simulated
/// memory (platforms with `walk = "hierarchy"` must have at most this many
/// bytes), so table lines never alias data lines.
pub const TABLE_REGION: u64 = 1 << 46;

/// Bits of the table region each address space gets (4 GiB: 2^20 table
/// pages).
const SPACE_BITS: u32 = 32;

/// Table pages in one address space's slice.
const SLICE_PAGES: u64 = 1 << (SPACE_BITS - 12);

/// Address spaces with distinct table regions (app ids are taken modulo).
const SPACES: u64 = 1 << 14;

/// Which page colors an address space's page-table pages take
/// (`memory.page-table-colors`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableColors {
    /// Any color (the default): the tables take consecutive pages of the
    /// table region, whose colors cycle through every color, as Linux,
    /// which does not color page tables, would place them.
    #[default]
    Any,
    /// The colors the app's partition gives it when the table is created
    /// (a page-coloring kernel that also colors page tables). Tables made
    /// while the app has no color set are placed as with `Any`; a table
    /// stays where it was placed when the app is recolored (Linux never
    /// migrates page tables), so only tables created after the recoloring
    /// take the new colors.
    Owner,
}

/// Where one address space's page tables lie in physical memory.
///
/// Tables are not allocated from the frame allocator (they would take
/// frames, and colors, from the apps and change their data placement);
/// each space gets a 4 GiB slice of a reserved region at
/// [`TABLE_REGION`] (slice `app mod 2^14`), and its tables take the 4 KiB
/// pages of its slice in the order walks first read them (the PML4 table
/// first), so the placement is deterministic and tables are physically
/// contiguous, as a kernel's early page-table pages tend to be. The entry
/// of virtual address `v` at level `l` lies at `table + 8 x index`, the
/// index being the 9 bits of `v` at [`level_shift`]`(l)`. Tables are
/// never freed or moved (unmapping keeps them, as Linux keeps empty page
/// tables until the region is freed). A space with more than 2^20 tables
/// wraps around its slice.
///
/// [`TablePlacement::place_colored`] places a table on a page of given
/// colors instead ([`TableColors::Owner`]): the next page of the slice,
/// from a cursor of its own, whose color is in the set and which no
/// table holds; tables placed without colors then skip the pages colored
/// tables took.
#[derive(Clone, Debug, Default)]
pub struct TablePlacement {
    /// Table page number within the slice, per (level, virtual prefix).
    pages: HashMap<u64, u64>,
    /// Once a table was placed by color: the pages taken and the cursors.
    colored: Option<Box<Cursors>>,
}

/// The slice's pages taken, and where the next search of each kind
/// starts.
#[derive(Clone, Debug)]
struct Cursors {
    taken: HashSet<u64>,
    /// Next page for a table of any color.
    any: u64,
    /// Next page to try for a colored table.
    colored: u64,
}

/// The key of the level-`level` table that translates `vaddr` (48 bits).
fn key(level: u32, vaddr: u64) -> u64 {
    (u64::from(level) << 56) | (vaddr >> (level_shift(level) + 9))
}

fn slice(app: u32) -> u64 {
    TABLE_REGION + ((u64::from(app) % SPACES) << SPACE_BITS)
}

/// The page for a new table of any color: the count of tables so far
/// (consecutive pages), or with colored tables the next page none holds.
fn next_any(colored: &mut Option<Box<Cursors>>, n: u64) -> u64 {
    let Some(c) = colored else {
        return n;
    };
    for _ in 0..SLICE_PAGES {
        let p = c.any % SLICE_PAGES;
        c.any = p + 1;
        if c.taken.insert(p) {
            return p;
        }
    }
    // Every page of the slice holds a table: wrap as uncolored tables do.
    n
}

impl TablePlacement {
    /// The physical address of the level-`level` entry (4 = PML4 ... 1 =
    /// PT) of `vaddr` in the page table of address space `app`, placing
    /// its table if it is new (on a page of any color).
    pub fn entry(&mut self, app: u32, level: u32, vaddr: u64) -> u64 {
        let shift = level_shift(level);
        let vaddr = vaddr & ((1 << 48) - 1);
        let n = self.pages.len() as u64;
        let page = match self.pages.entry(key(level, vaddr)) {
            std::collections::hash_map::Entry::Occupied(o) => *o.get(),
            std::collections::hash_map::Entry::Vacant(v) => {
                *v.insert(next_any(&mut self.colored, n))
            }
        } & (SLICE_PAGES - 1);
        slice(app) + (page << 12) + 8 * ((vaddr >> shift) & 511)
    }

    /// Places the level-`level` table of `vaddr` in address space `app`
    /// on a page whose color (`layout`'s, through its swap if any) is in
    /// `colors`, unless the table exists. An empty set places nothing.
    pub fn place_colored(
        &mut self,
        app: u32,
        level: u32,
        vaddr: u64,
        colors: &IdSet,
        layout: &ColorLayout,
    ) {
        let key = key(level, vaddr & ((1 << 48) - 1));
        if colors.is_empty() || self.pages.contains_key(&key) {
            return;
        }
        let n = self.pages.len() as u64;
        let c = self.colored.get_or_insert_with(|| {
            // The tables placed so far took pages 0..n (wrapped).
            Box::new(Cursors {
                taken: (0..n.min(SLICE_PAGES)).collect(),
                any: n,
                colored: 0,
            })
        });
        let base = slice(app) >> 12;
        let fits = |p: u64| colors.contains(layout.color_of_frame(Frame(base + p)));
        let start = c.colored;
        let mut found = None;
        for i in 0..SLICE_PAGES {
            let p = (start + i) % SLICE_PAGES;
            if fits(p) && !c.taken.contains(&p) {
                found = Some(p);
                break;
            }
        }
        // Every page of the colors holds a table: share one, as uncolored
        // tables wrap.
        let page = found
            .or_else(|| (0..SLICE_PAGES).find(|&p| fits(p)))
            .unwrap_or(start);
        c.taken.insert(page);
        c.colored = page + 1;
        self.pages.insert(key, page);
    }

    /// Tables placed so far.
    pub fn tables(&self) -> usize {
        self.pages.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Geometry;
    use crate::memory::swap_map::{SwapConfig, SwapMode, SwapPosition};

    #[test]
    fn tables_are_placed_in_first_use_order() {
        let mut t = TablePlacement::default();
        let v = 0x7f12_3456_7000u64;
        let pml4 = t.entry(3, 4, v);
        let slice = TABLE_REGION + (3 << 32);
        assert_eq!(pml4, slice + 8 * ((v >> 39) & 511));
        assert_eq!(t.entry(3, 3, v), slice + 4096 + 8 * ((v >> 30) & 511));
        assert_eq!(t.entry(3, 2, v), slice + 2 * 4096 + 8 * ((v >> 21) & 511));
        assert_eq!(t.entry(3, 1, v), slice + 3 * 4096 + 8 * ((v >> 12) & 511));
        // The next page of the same 2 MiB region: same PT, next entry.
        assert_eq!(t.entry(3, 1, v + 4096), t.entry(3, 1, v) + 8);
        // Another 2 MiB region: a new PT.
        assert_eq!(t.entry(3, 1, v + (2 << 20)) & !0xfff, slice + 4 * 4096);
        assert_eq!(t.tables(), 5);
    }

    /// Places the tables of `regions` 2 MiB regions spread over 64 GiB
    /// (every level, walk order) with `colors`, then reads every entry.
    fn colored_walks(
        t: &mut TablePlacement,
        app: u32,
        regions: u64,
        colors: &IdSet,
        layout: &ColorLayout,
    ) -> Vec<u64> {
        let mut entries = Vec::new();
        for r in 0..regions {
            let v = 0x7f00_0000_0000 + r * (r + 1) * (2 << 20) % (64 << 30);
            for level in (1..=4).rev() {
                t.place_colored(app, level, v, colors, layout);
            }
            for level in (1..=4).rev() {
                entries.push(t.entry(app, level, v));
            }
        }
        entries
    }

    /// Checks that the tables of `entries` hold distinct pages in the
    /// slice of `app`, each of a color of `colors`.
    fn check_tables(t: &TablePlacement, app: u32, colors: &IdSet, layout: &ColorLayout) {
        let mut seen = HashSet::new();
        for &p in t.pages.values() {
            assert!(p < SLICE_PAGES);
            assert!(seen.insert(p), "page {p} holds two tables");
            let color = layout.color_of_frame(Frame((slice(app) >> 12) + p));
            assert!(colors.contains(color), "table page {p}: color {color}");
        }
    }

    #[test]
    fn owner_colored_tables_take_only_the_owners_colors() {
        // 8 MiB 16-way LLC, 64 B lines: 128 colors of 4 KiB.
        let layout = ColorLayout::with_sets(8192, 64, 4096).unwrap();
        for (app, text) in [(0, "0-63"), (1, "64-95"), (2, "3,17,100-101"), (7, "127")] {
            let colors: IdSet = text.parse().unwrap();
            let mut t = TablePlacement::default();
            let entries = colored_walks(&mut t, app, 3000, &colors, &layout);
            assert!(t.tables() > 1000, "{}", t.tables());
            check_tables(&t, app, &colors, &layout);
            // Table by table: every entry's line is of the app's colors.
            for e in entries {
                assert!(colors.contains(layout.color_of(e)), "{e:#x} in {text}");
                assert_eq!(e >> 32, slice(app) >> 32);
            }
        }
    }

    #[test]
    fn owner_colored_tables_follow_the_swap() {
        // SWAP's bits: the LLC sees the table page through the swap map,
        // so the color is the one of its swapped address.
        let layout = ColorLayout::with_sets(8192, 64, 4096).unwrap();
        let swap = SwapConfig {
            superpage_bits: vec![21, 22, 23, 24],
            candidate_bits: vec![15, 16, 17, 18],
            position: SwapPosition::BeforeLlc,
            mode: SwapMode::Static,
            enabled: true,
        }
        .map(&Geometry::new(8 << 20, 16, 64).unwrap(), 15, 16 << 30)
        .unwrap();
        let layout = layout.with_swap(swap);
        let colors: IdSet = "8-15,40".parse().unwrap();
        let mut t = TablePlacement::default();
        let entries = colored_walks(&mut t, 5, 500, &colors, &layout);
        check_tables(&t, 5, &colors, &layout);
        for e in entries {
            let c = layout.color_of(swap.to_physical(e));
            assert!(colors.contains(c), "{e:#x}: color {c}");
        }
    }

    #[test]
    fn uncolored_and_colored_tables_never_share_a_page() {
        let layout = ColorLayout::with_sets(8192, 64, 4096).unwrap();
        let mut t = TablePlacement::default();
        // Uncolored first (pages 0..4), then colored, then uncolored
        // again: the latter skip the colored tables' pages.
        let v = 0x7f00_0000_0000u64;
        for level in (1..=4).rev() {
            t.entry(0, level, v);
        }
        let colors: IdSet = "2-3".parse().unwrap();
        colored_walks(&mut t, 0, 40, &colors, &layout);
        for r in 0..200u64 {
            t.entry(0, 1, v + (r + 1000) * (2 << 20));
        }
        let pages: HashSet<u64> = t.pages.values().copied().collect();
        assert_eq!(pages.len(), t.tables(), "a page holds two tables");
        // The first four kept their places.
        assert_eq!(t.entry(0, 4, v) >> 12, slice(0) >> 12);
        assert_eq!(t.entry(0, 1, v) >> 12, (slice(0) >> 12) + 3);
    }

    #[test]
    fn recoloring_leaves_existing_tables_where_they_are() {
        let layout = ColorLayout::with_sets(8192, 64, 4096).unwrap();
        let mut t = TablePlacement::default();
        let old: IdSet = "0-7".parse().unwrap();
        let new: IdSet = "64-71".parse().unwrap();
        let v = 0x7f00_0000_0000u64;
        let w = v + (1 << 30);
        for level in (1..=4).rev() {
            t.place_colored(0, level, v, &old, &layout);
        }
        let before: Vec<u64> = (1..=4).map(|l| t.entry(0, l, v)).collect();
        for level in (1..=4).rev() {
            t.place_colored(0, level, v, &new, &layout);
            t.place_colored(0, level, w, &new, &layout);
        }
        let after: Vec<u64> = (1..=4).map(|l| t.entry(0, l, v)).collect();
        assert_eq!(before, after);
        assert!(before.iter().all(|&e| old.contains(layout.color_of(e))));
        // w is 1 GiB above v: its PD and PT are new, of the new colors;
        // its PDPT and PML4 tables are v's.
        for level in 1..=2 {
            assert!(new.contains(layout.color_of(t.entry(0, level, w))));
        }
        for level in 3..=4 {
            let i = level as usize - 1;
            assert_eq!(t.entry(0, level, w) & !0xfff, before[i] & !0xfff);
        }
        // An empty set places nothing.
        t.place_colored(0, 1, v + (9 << 30), &IdSet::new(), &layout);
        assert_eq!(t.tables(), 6);
    }
}
