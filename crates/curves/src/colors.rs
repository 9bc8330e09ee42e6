//! Exact page-colored LRU curves: the misses of an application confined to
//! `c` of a cache's `C` colors, for every `c` (and every way count up to
//! the associativity, from the same pass).
//!
//! # The color mapping
//!
//! A cache of `S` sets of `L`-byte lines, with `P`-byte pages, has
//! `C = S * L / P` colors; each color is a group of `P / L` consecutive
//! sets (the set-index bits above the page offset). The trace holds
//! virtual addresses, so the curve models the allocator:
//!
//! 1. virtual pages are numbered in first-touch order (`0, 1, 2, ...`:
//!    the order in which the application faults them in);
//! 2. an application given `c` colors gets frames of colors `0..c` (which
//!    `c` colors does not matter to an application alone: every color is
//!    alike), handed out **round-robin in first-touch order**: the page
//!    numbered `k` gets color `k mod c` (COLORIS's color-aware allocator
//!    serves a fault from the next of the application's colors in turn);
//! 3. a line at offset `o` of its page goes to set `color * (P / L) + o / L`
//!    and keeps its own tag (frames are distinct).
//!
//! So the application sees a cache of `c * P / L` sets, `c * P * W` bytes
//! at `W` ways. With all `C` colors this is an `S`-set cache, but not the
//! same one as [`crate::set_associative`]'s, which indexes sets by virtual
//! address bits (an identity mapping).
//!
//! Each color count is its own pass over the references (the set mapping
//! changes with `c`); page numbering is done once, and the passes for the
//! different `c` run in parallel on chunks of references, so the result
//! does not depend on the number of threads.

use cachepart_trace::Record;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::curve::Curve;
use crate::error::{CurveError, Result};
use crate::line_map::LineMap;
use crate::options::{for_each_line, Options};
use crate::set_assoc::{CHUNK, MAX_WAYS};
use crate::set_stacks::{misses_by_ways, tag_bytes, SetStacks};

/// A page-colored cache: sets, associativity and page size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ColorGeometry {
    /// Sets of the whole cache.
    pub sets: u64,
    /// Ways; the curves cover `1..=ways`.
    pub ways: u32,
    /// Page size in bytes, a power of two.
    pub page_bytes: u64,
}

impl ColorGeometry {
    /// Checks the geometry against a line size; returns the number of
    /// colors.
    pub fn colors(&self, line_bytes: u64) -> Result<u32> {
        let bad = |m: String| Err(CurveError::Geometry(m));
        if self.ways == 0 || self.ways > MAX_WAYS {
            return bad(format!("{} ways: expected 1 to {MAX_WAYS}", self.ways));
        }
        if !self.page_bytes.is_power_of_two() || self.page_bytes < line_bytes {
            return bad(format!(
                "page size {} bytes: expected a power of two of at least one line",
                self.page_bytes
            ));
        }
        let per_color = self.page_bytes / line_bytes;
        if self.sets == 0 || self.sets & (per_color - 1) != 0 {
            return bad(format!(
                "{} sets: expected a positive multiple of {per_color} (sets per page)",
                self.sets
            ));
        }
        u32::try_from(self.sets / per_color)
            .map_err(|_| CurveError::Geometry(format!("{} sets: too many colors", self.sets)))
    }
}

/// Misses at every color count (of those asked for) and way count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColorCurves {
    /// Line size in bytes.
    pub line_bytes: u64,
    /// Page size in bytes.
    pub page_bytes: u64,
    /// Colors of the whole cache.
    pub colors: u32,
    /// Associativity.
    pub ways: u32,
    /// The color counts measured, increasing.
    pub color_counts: Vec<u32>,
    /// `misses[i][w - 1]`: misses with `color_counts[i]` colors and `w`
    /// ways.
    pub misses: Vec<Vec<u64>>,
    /// Line references.
    pub accesses: u64,
    /// Instructions.
    pub instructions: u64,
}

impl ColorCurves {
    /// Misses against color count at `ways` ways (sizes
    /// `c * page_bytes * ways`).
    pub fn by_colors(&self, ways: u32) -> Result<Curve> {
        if ways == 0 || ways > self.ways {
            return Err(CurveError::Geometry(format!(
                "{ways} ways: measured 1 to {}",
                self.ways
            )));
        }
        Ok(Curve {
            sizes_bytes: self
                .color_counts
                .iter()
                .map(|&c| u64::from(c) * self.page_bytes * u64::from(ways))
                .collect(),
            misses: self.misses.iter().map(|m| m[ways as usize - 1]).collect(),
            accesses: self.accesses,
            instructions: self.instructions,
        })
    }

    /// Misses against way count with `colors` colors (one of
    /// `color_counts`).
    pub fn by_ways(&self, colors: u32) -> Result<Curve> {
        let i = self
            .color_counts
            .iter()
            .position(|&c| c == colors)
            .ok_or_else(|| CurveError::Geometry(format!("{colors} colors were not measured")))?;
        let per_way = u64::from(colors) * self.page_bytes;
        Ok(Curve {
            sizes_bytes: (1..=u64::from(self.ways)).map(|w| w * per_way).collect(),
            misses: self.misses[i].clone(),
            accesses: self.accesses,
            instructions: self.instructions,
        })
    }
}

/// One color count's cache.
struct Pass {
    colors: u64,
    stacks: SetStacks,
}

/// Exact LRU misses of an application confined to each of `color_counts`
/// colors (all of `1..=C` when `None`) of the cache `geom`, at every way
/// count `1..=geom.ways`, with the page mapping of the module docs.
pub fn colored<I: IntoIterator<Item = Record>>(
    records: I,
    opts: &Options,
    geom: &ColorGeometry,
    color_counts: Option<&[u32]>,
) -> Result<ColorCurves> {
    opts.check()?;
    let total = geom.colors(opts.line_bytes)?;
    let mut counts: Vec<u32> = match color_counts {
        Some(c) => c.to_vec(),
        None => (1..=total).collect(),
    };
    counts.sort_unstable();
    counts.dedup();
    if counts.is_empty() || counts[0] == 0 || *counts.last().unwrap_or(&0) > total {
        return Err(CurveError::Geometry(format!(
            "color counts must be in 1..={total}"
        )));
    }
    let per_color = geom.page_bytes / opts.line_bytes;
    let page_shift = per_color.trailing_zeros();
    let ways = geom.ways as usize;
    let sum: u128 = counts.iter().map(|&c| u128::from(c)).sum();
    cachepart_units::check_allocation(
        "the colored curves' per-set LRU stacks",
        &format!(
            "{} color counts, {sum} colors in all x {per_color} sets per color x {} ways x 8 B",
            counts.len(),
            geom.ways
        ),
        sum * tag_bytes(per_color, u64::from(geom.ways)),
    )?;
    let mut passes: Vec<Pass> = counts
        .iter()
        .map(|&c| {
            Ok(Pass {
                colors: u64::from(c),
                stacks: SetStacks::new(c as usize * per_color as usize, ways)?,
            })
        })
        .collect::<Result<_>>()?;
    let run = |passes: &mut Vec<Pass>, chunk: &[(u64, u64)]| {
        passes.par_iter_mut().for_each(|p| {
            for &(ord, line) in chunk {
                let set = (ord % p.colors) * per_color + (line & (per_color - 1));
                p.stacks.access(set as usize, line);
            }
        })
    };
    let mut pages = LineMap::new();
    let mut chunk: Vec<(u64, u64)> = Vec::with_capacity(CHUNK);
    let totals = for_each_line(records, opts, |line| {
        let next = pages.len() as u32;
        let ord = pages
            .get_or_insert(line >> page_shift, || next)
            .unwrap_or(next);
        chunk.push((u64::from(ord), line));
        if chunk.len() == CHUNK {
            run(&mut passes, &chunk);
            chunk.clear();
        }
    });
    run(&mut passes, &chunk);
    let misses = passes
        .iter()
        .map(|p| {
            let mut hist = vec![0u64; ways + 1];
            p.stacks.add_hist(&mut hist);
            misses_by_ways(&hist)
        })
        .collect();
    Ok(ColorCurves {
        line_bytes: opts.line_bytes,
        page_bytes: geom.page_bytes,
        colors: total,
        ways: geom.ways,
        color_counts: counts,
        misses,
        accesses: totals.accesses,
        instructions: totals.instructions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_stacks_beyond_the_host_memory_before_allocating() {
        // 2^32 sets of 64 B lines, 4 KiB pages: 2^26 colors; every color
        // count 1..=2^26 at 1024 ways is far beyond any memory.
        let geom = ColorGeometry {
            sets: 1 << 32,
            ways: MAX_WAYS,
            page_bytes: 4096,
        };
        let e = colored([], &Options::default(), &geom, Some(&[1, 1 << 26])).unwrap_err();
        assert!(matches!(e, CurveError::TooLarge(_)), "{e:?}");
        let m = e.to_string();
        assert!(
            m.contains("colored curves") && m.contains("more than"),
            "{m}"
        );
        let small = ColorGeometry {
            sets: 256,
            ways: 4,
            page_bytes: 4096,
        };
        assert_eq!(
            colored([], &Options::default(), &small, None)
                .unwrap()
                .color_counts,
            vec![1, 2, 3, 4]
        );
    }
}
