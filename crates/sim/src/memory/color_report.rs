//! What page coloring can do on a platform: the color count and what one
//! color is worth, for `cachepart platform colors` to print.
//!
//! ```
//! use cachepart_sim::memory::{ColorLayout, ColorReport};
//! // COLORIS's machine: 4 MiB 16-way LLC, 64 B lines, 8 GiB, 1 GiB pool.
//! let layout = ColorLayout::with_sets(4096, 64, 4096).unwrap();
//! let r = ColorReport::new(&layout, 16, 1, Some(1 << 30));
//! assert_eq!(r.colors, 64);
//! assert_eq!(r.memory_bytes_per_color, Some(16 << 20));
//! assert!(r.to_string().contains("64 colors"));
//! ```

use std::fmt;
use std::ops::Range;

use cachepart_units::IdSet;

use super::color::ColorLayout;

/// The color layout of an LLC, summarized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColorReport {
    /// Number of colors (per slice: every slice has the same colors).
    pub colors: u64,
    /// Page size the colors are for.
    pub page_bytes: u64,
    /// Ways of the LLC.
    pub ways: u32,
    /// Slices of the LLC (1 when not sliced).
    pub slices: u32,
    /// LLC bytes one color holds, over all slices (`ways x page x
    /// slices` when there is more than one color).
    pub llc_bytes_per_color: u64,
    /// Memory bytes of one color, given the memory (or pool) size.
    pub memory_bytes_per_color: Option<u64>,
    /// Physical-address bits of the set index within a slice.
    pub set_index_bits: Range<u32>,
    /// Physical-address bits that make the color (set-index bits above
    /// the page offset; empty when there is one color).
    pub color_bits: Range<u32>,
}

impl ColorReport {
    /// The report of `layout` (built per slice) for an LLC of `ways` ways
    /// and `slices` slices, with `memory_bytes` of memory (or pool) to
    /// color, if known.
    pub fn new(
        layout: &ColorLayout,
        ways: u32,
        slices: u32,
        memory_bytes: Option<u64>,
    ) -> ColorReport {
        let slices = slices.max(1);
        let set_index_bits = layout.set_index_bits();
        let slice_bytes = (1u64 << (set_index_bits.end)) * u64::from(ways);
        ColorReport {
            colors: layout.colors(),
            page_bytes: 1 << layout.page_bits(),
            ways,
            slices,
            llc_bytes_per_color: slice_bytes / layout.colors() * u64::from(slices),
            memory_bytes_per_color: memory_bytes.map(|m| m / layout.colors()),
            color_bits: layout.color_bits(),
            set_index_bits,
        }
    }

    /// One line about a color set: its colors, LLC and memory bytes.
    pub fn describe_set(&self, set: &IdSet) -> String {
        let n = set.len() as u64;
        let mut s = format!(
            "colors {set}: {n} of {} ({} of LLC",
            self.colors,
            bytes(n * self.llc_bytes_per_color)
        );
        if let Some(m) = self.memory_bytes_per_color {
            s.push_str(&format!(", {} of memory", bytes(n * m)));
        }
        s.push(')');
        s
    }
}

/// Bytes in the largest binary unit that divides them (or B).
fn bytes(b: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if b >= 1 << shift && b.is_multiple_of(1 << shift) {
            return format!("{} {unit}", b >> shift);
        }
    }
    format!("{b} B")
}

fn bit_range(r: &Range<u32>) -> String {
    if r.is_empty() {
        "none".into()
    } else {
        format!("{}-{}", r.start, r.end - 1)
    }
}

impl fmt::Display for ColorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} colors for {} pages (colors = LLC size / (ways x page size), per slice)",
            self.colors,
            bytes(self.page_bytes)
        )?;
        writeln!(
            f,
            "set-index bits   {} (physical address, within a slice)",
            bit_range(&self.set_index_bits)
        )?;
        writeln!(
            f,
            "color bits       {} (set-index bits above the page offset)",
            bit_range(&self.color_bits)
        )?;
        writeln!(
            f,
            "LLC per color    {} ({} ways x {} x {} slice{})",
            bytes(self.llc_bytes_per_color),
            self.ways,
            bytes(self.llc_bytes_per_color / u64::from(self.ways) / u64::from(self.slices)),
            self.slices,
            if self.slices == 1 { "" } else { "s" }
        )?;
        if let Some(m) = self.memory_bytes_per_color {
            writeln!(f, "memory per color {}", bytes(m))?;
        }
        if self.slices > 1 {
            writeln!(
                f,
                "slices           {}: lines are hashed to slices, and every slice has the same {} colors, so a color takes its share of each slice",
                self.slices, self.colors
            )?;
        }
        match self.colors {
            // one color: its only set is {0}
            0 | 1 => write!(
                f,
                "color sets use the range syntax; this layout has color 0 only"
            ),
            2 => write!(f, "color sets use the range syntax, e.g. 0,1"),
            n => write!(
                f,
                "color sets use the range syntax, e.g. 0-{},{}",
                n / 2 - 1,
                n - 1
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_a_sliced_llc() {
        // 8 MiB, 16 ways, 4 slices: 2048 sets per slice, 32 colors.
        let layout = ColorLayout::with_sets(2048, 64, 4096).unwrap();
        let r = ColorReport::new(&layout, 16, 4, Some(8 << 30));
        assert_eq!(r.colors, 32);
        assert_eq!(r.llc_bytes_per_color, 256 << 10);
        assert_eq!(r.llc_bytes_per_color * r.colors, 8 << 20);
        assert_eq!(r.memory_bytes_per_color, Some(256 << 20));
        assert_eq!(r.color_bits, 12..17);
        let text = r.to_string();
        assert!(text.contains("32 colors for 4 KiB pages"), "{text}");
        assert!(text.contains("color bits       12-16"), "{text}");
        assert!(
            text.contains("LLC per color    256 KiB (16 ways x 4 KiB x 4 slices)"),
            "{text}"
        );
        assert!(text.contains("slices           4"), "{text}");
        assert_eq!(
            r.describe_set(&"0-3,8".parse().unwrap()),
            "colors 0-3,8: 5 of 32 (1280 KiB of LLC, 1280 MiB of memory)"
        );
        // 2 MiB pages: one color, no color bits.
        let huge = ColorLayout::with_sets(2048, 64, 2 << 20).unwrap();
        let r = ColorReport::new(&huge, 16, 1, None);
        assert_eq!((r.colors, r.color_bits.is_empty()), (1, true));
        assert!(r.to_string().contains("color bits       none"));
        // its example set is not "0-0,0"
        let text = r.to_string();
        assert!(text.contains("this layout has color 0 only"), "{text}");
        assert!(!text.contains("0-0"), "{text}");
        let sliced = ColorReport::new(&layout, 16, 4, None).to_string();
        assert!(sliced.contains("e.g. 0-15,31"), "{sliced}");
    }
}
