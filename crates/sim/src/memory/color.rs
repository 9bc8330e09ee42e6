//! Page colors from the LLC geometry.
//!
//! With a physically indexed LLC of `sets` sets of `line`-byte lines, the
//! set index of a physical address is its bits `line_bits ..
//! line_bits + log2(sets)`. Those of them above the page offset are the
//! page's **color**: the operating system chooses them when it picks a
//! frame, and pages of different colors never share a set. There are
//! `LLC size / (ways x page size)` = `sets x line / page` colors (1 when a
//! page spans every set, as 2 MiB pages do on most LLCs).

use super::error::MemoryError;
use super::page::{Frame, FRAME_BYTES};
use crate::geometry::Geometry;

/// The color layout of one LLC for one page size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColorLayout {
    colors: u64,
    page_bits: u32,
}

impl ColorLayout {
    /// Colors of `llc` for pages of `page_bytes` (a power of two).
    pub fn new(llc: &Geometry, page_bytes: u64) -> Result<ColorLayout, MemoryError> {
        if !page_bytes.is_power_of_two() {
            return Err(MemoryError::PageSize { page: page_bytes });
        }
        let way_bytes = llc.sets() * u64::from(llc.line());
        Ok(ColorLayout {
            colors: (way_bytes / page_bytes).max(1),
            page_bits: page_bytes.trailing_zeros(),
        })
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

    /// The color of a 4 KiB frame (for 4 KiB layouts).
    #[inline]
    pub fn color_of_frame(&self, frame: Frame) -> u32 {
        self.color_of(frame.addr())
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
