//! Page colors from the LLC geometry.
//!
//! With a physically indexed LLC of `sets` sets of `line`-byte lines, the
//! set index of a physical address is its bits `line_bits ..
//! line_bits + log2(sets)`. Those of them above the page offset are the
//! page's **color**: the operating system chooses them when it picks a
//! frame, and pages of different colors never share a set. There are
//! `LLC size / (ways x page size)` = `sets x line / page` colors (1 when a
//! page spans every set, as 2 MiB pages do on most LLCs).
//!
//! A sliced LLC hashes lines to slices and indexes sets within a slice,
//! so its colors are those of one slice: build the layout from the sets
//! per slice with [`ColorLayout::with_sets`]. Color sets are written in
//! the range syntax (`0-15,32`, [`IdSet`]) and checked against the color
//! count by [`ColorLayout::check_colors`].

use cachepart_units::IdSet;

use super::error::MemoryError;
use super::page::{Frame, FRAME_BYTES};
use super::swap_map::SwapMap;
use crate::geometry::Geometry;

/// The color layout of one LLC (or one slice of it) for one page size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColorLayout {
    colors: u64,
    page_bits: u32,
    line_bits: u32,
    set_bits: u32,
    /// SWAP's bit swap between the frames allocators hand out
    /// (pseudo-physical) and the physical addresses the LLC sees.
    swap: Option<SwapMap>,
}

impl ColorLayout {
    /// Colors of `llc` for pages of `page_bytes` (a power of two). A
    /// sliced LLC has the colors of one slice: the slice hash spreads a
    /// page's lines over every slice, at the same set of each.
    pub fn new(llc: &Geometry, page_bytes: u64) -> Result<ColorLayout, MemoryError> {
        ColorLayout::with_sets(llc.sets_per_slice(), llc.line(), page_bytes)
    }

    /// Colors of a cache (or one slice of a sliced cache) of `sets` sets
    /// of `line`-byte lines, for pages of `page_bytes`; all three powers
    /// of two.
    pub fn with_sets(sets: u64, line: u32, page_bytes: u64) -> Result<ColorLayout, MemoryError> {
        if !page_bytes.is_power_of_two() {
            return Err(MemoryError::PageSize { page: page_bytes });
        }
        if !sets.is_power_of_two() || !line.is_power_of_two() {
            return Err(MemoryError::ColorGeometry { sets, line });
        }
        let way_bytes = sets * u64::from(line);
        Ok(ColorLayout {
            colors: (way_bytes / page_bytes).max(1),
            page_bits: page_bytes.trailing_zeros(),
            line_bits: line.trailing_zeros(),
            set_bits: sets.trailing_zeros(),
            swap: None,
        })
    }

    /// The same layout for allocators that hand out pseudo-physical
    /// frames under SWAP: [`Self::color_of_frame`] colors a frame by its
    /// physical address, `swap.to_physical(frame)`.
    pub fn with_swap(mut self, swap: SwapMap) -> ColorLayout {
        self.swap = Some(swap);
        self
    }

    /// The swap between allocated frames and physical addresses, if any.
    pub fn swap(&self) -> Option<&SwapMap> {
        self.swap.as_ref()
    }

    /// log2 of the page size.
    pub fn page_bits(&self) -> u32 {
        self.page_bits
    }

    /// The physical-address bits that make the color, `lo..hi` (empty
    /// when there is one color): the set-index bits above the page offset.
    pub fn color_bits(&self) -> std::ops::Range<u32> {
        let hi = self.line_bits + self.set_bits;
        self.page_bits.min(hi)..hi
    }

    /// The physical-address bits of the set index, `lo..hi`.
    pub fn set_index_bits(&self) -> std::ops::Range<u32> {
        self.line_bits..self.line_bits + self.set_bits
    }

    /// Checks that every color of `set` exists (is below [`Self::colors`]).
    pub fn check_colors(&self, set: &IdSet) -> Result<(), MemoryError> {
        let limit = u32::try_from(self.colors).unwrap_or(u32::MAX);
        match set.first_at_or_above(limit) {
            Some(color) => Err(MemoryError::ColorOutOfRange {
                color,
                colors: self.colors,
            }),
            None => Ok(()),
        }
    }

    /// Parses a color set in the range syntax and checks it
    /// ([`Self::check_colors`]).
    pub fn parse_colors(&self, text: &str) -> Result<IdSet, MemoryError> {
        let set: IdSet =
            text.parse()
                .map_err(|e: cachepart_units::IdSetError| MemoryError::ColorSyntax {
                    reason: e.to_string(),
                })?;
        self.check_colors(&set)?;
        Ok(set)
    }

    /// Every color.
    pub fn all_colors(&self) -> IdSet {
        (0..u32::try_from(self.colors).unwrap_or(u32::MAX)).collect()
    }

    /// Colors of `llc` for 4 KiB pages.
    pub fn for_frames(llc: &Geometry) -> ColorLayout {
        ColorLayout::new(llc, FRAME_BYTES).expect("4 KiB is a power of two")
    }

    /// Number of colors.
    pub fn colors(&self) -> u64 {
        self.colors
    }

    /// The color of physical address `paddr`.
    #[inline]
    pub fn color_of(&self, paddr: u64) -> u32 {
        ((paddr >> self.page_bits) & (self.colors - 1)) as u32
    }

    /// The color of a 4 KiB frame as an allocator hands it out (for
    /// 4 KiB layouts): the color of its physical address, through the
    /// swap when there is one ([`Self::with_swap`]).
    #[inline]
    pub fn color_of_frame(&self, frame: Frame) -> u32 {
        match &self.swap {
            Some(s) => self.color_of(s.to_physical(frame.addr())),
            None => self.color_of(frame.addr()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn counts_colors_as_the_papers_do() {
        // 4 MiB 16-way, 64 B lines: 4 MiB / (16 x 4 KiB) = 64 colors.
        let g = Geometry::new(4 << 20, 16, 64).unwrap();
        assert_eq!(ColorLayout::for_frames(&g).colors(), 64);
        // 2 MiB pages span every set: one color.
        assert_eq!(ColorLayout::new(&g, 2 << 20).unwrap().colors(), 1);
        // A small LLC whose way is below a page: one color.
        let small = Geometry::new(32 << 10, 16, 64).unwrap();
        assert_eq!(ColorLayout::for_frames(&small).colors(), 1);
        assert!(ColorLayout::new(&g, 3000).is_err());
        // One slice of a 4-slice 8 MiB LLC: 2048 sets per slice.
        let sliced = ColorLayout::with_sets(2048, 64, 4096).unwrap();
        assert_eq!(sliced.colors(), 32);
        assert_eq!(sliced.color_bits(), 12..17);
        assert_eq!(sliced.set_index_bits(), 6..17);
        assert!(ColorLayout::with_sets(1000, 64, 4096).is_err());
    }

    #[test]
    fn color_sets_are_checked_against_the_count() {
        let c = ColorLayout::with_sets(4096, 64, 4096).unwrap();
        assert_eq!(c.colors(), 64);
        assert_eq!(c.parse_colors("0-15,32").unwrap().len(), 17);
        let e = c.parse_colors("0-3,64").unwrap_err();
        assert_eq!(
            e,
            MemoryError::ColorOutOfRange {
                color: 64,
                colors: 64
            }
        );
        assert!(e.to_string().contains("color 64"), "{e}");
        assert!(matches!(
            c.parse_colors("3-1"),
            Err(MemoryError::ColorSyntax { .. })
        ));
        assert_eq!(c.all_colors().to_string(), "0-63");
    }

    proptest! {
        /// The color is the set-index bits above the page offset: two
        /// addresses of different colors never map to the same set, and
        /// the color is a function of the set.
        #[test]
        fn color_is_the_set_bits_above_the_page(a in any::<u32>(), b in any::<u32>(), ways_log in 0u32..5) {
            let g = Geometry::new((1 << 20) << ways_log >> 2, 1 << ways_log, 64).unwrap();
            let c = ColorLayout::for_frames(&g);
            let set = |x: u64| g.set_of(g.block_of(x));
            let (a, b) = (u64::from(a), u64::from(b));
            if set(a) == set(b) {
                prop_assert_eq!(c.color_of(a), c.color_of(b));
            }
            prop_assert_eq!(u64::from(c.color_of(a)), (set(a) as u64 * 64 / 4096) % c.colors());
        }
    }
}
