//! Exact set-associative LRU curves over every way count in one pass: the
//! misses of an `S`-set cache with `1..=W` ways, that is of every CAT way
//! allocation of that cache (a CAT mask of `w` ways leaves an application
//! `w` ways of every set).
//!
//! A line maps to set `line mod S`. Sets are independent, so they are split
//! into one shard per rayon thread; references are buffered in chunks and
//! each shard walks the chunk for its own sets, in trace order, so the
//! result does not depend on the number of threads.

use cachepart_trace::Record;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::curve::Curve;
use crate::error::{CurveError, Result};
use crate::options::{for_each_line, Options};
use crate::set_stacks::{misses_by_ways, tag_bytes, SetIndex, SetStacks};

/// References buffered before the shards process them.
pub(crate) const CHUNK: usize = 1 << 16;

/// Largest associativity of the per-set stacks.
pub const MAX_WAYS: u32 = 1024;

/// A set-associative cache: a number of sets and the largest way count of
/// interest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct SetAssoc {
    /// Number of sets (any positive number; a power of two is faster).
    pub sets: u64,
    /// Curves cover `1..=max_ways` ways (at most [`MAX_WAYS`]).
    pub max_ways: u32,
}

impl SetAssoc {
    /// Checks the parameters.
    pub fn check(&self) -> Result<()> {
        if self.sets == 0 || self.sets > 1 << 32 {
            return Err(CurveError::Geometry(format!(
                "{} sets: expected 1 to 2^32",
                self.sets
            )));
        }
        if self.max_ways == 0 || self.max_ways > MAX_WAYS {
            return Err(CurveError::Geometry(format!(
                "{} ways: expected 1 to {MAX_WAYS}",
                self.max_ways
            )));
        }
        Ok(())
    }

    /// Checks the parameters and that the per-set stacks (8 bytes per set
    /// and way) fit in the host's memory.
    pub fn check_memory(&self) -> Result<()> {
        self.check()?;
        cachepart_units::check_allocation(
            "the set-associative curve's per-set LRU stacks",
            &format!("{} sets x {} ways x 8 B", self.sets, self.max_ways),
            tag_bytes(self.sets, u64::from(self.max_ways)),
        )?;
        Ok(())
    }
}

/// One shard of the sets: those with `set % shards == index`.
struct Shard {
    index: u64,
    stacks: SetStacks,
}

/// The misses of an LRU cache of `geom.sets` sets at every way count
/// `1..=geom.max_ways`: point `w - 1` of the curve is the cache with `w`
/// ways, of `sets * w * line_bytes` bytes.
///
/// ```
/// use cachepart_curves::{set_associative, Options, SetAssoc};
/// use cachepart_trace::{Kind, Record};
/// // Lines 0, 2, 0 all map to set 0 of a 2-set cache.
/// let recs = [0x0u64, 0x80, 0x0].map(|a| Record::access(Kind::Load, a, 8, 0).unwrap());
/// let c = set_associative(recs, &Options::default(), &SetAssoc { sets: 2, max_ways: 2 }).unwrap();
/// assert_eq!(c.sizes_bytes, vec![128, 256]);
/// assert_eq!(c.misses, vec![3, 2]);
/// ```
pub fn set_associative<I: IntoIterator<Item = Record>>(
    records: I,
    opts: &Options,
    geom: &SetAssoc,
) -> Result<Curve> {
    opts.check()?;
    geom.check_memory()?;
    let ways = geom.max_ways as usize;
    let nshards = (rayon::current_num_threads() as u64).clamp(1, geom.sets);
    let mut shards: Vec<Shard> = (0..nshards)
        .map(|k| {
            let sets = (geom.sets - k).div_ceil(nshards) as usize;
            Ok(Shard {
                index: k,
                stacks: SetStacks::new(sets, ways)?,
            })
        })
        .collect::<Result<_>>()?;
    let set_of = SetIndex::new(geom.sets);
    let shard_of = SetIndex::new(nshards);
    let run = |shards: &mut Vec<Shard>, chunk: &[u64]| {
        shards.par_iter_mut().for_each(|sh| {
            for &line in chunk {
                let set = set_of.of(line);
                if shard_of.of(set) == sh.index {
                    sh.stacks.access((set / nshards) as usize, line);
                }
            }
        })
    };
    let mut chunk = Vec::with_capacity(CHUNK);
    let totals = for_each_line(records, opts, |line| {
        chunk.push(line);
        if chunk.len() == CHUNK {
            run(&mut shards, &chunk);
            chunk.clear();
        }
    });
    run(&mut shards, &chunk);
    let mut hist = vec![0u64; ways + 1];
    for sh in &shards {
        sh.stacks.add_hist(&mut hist);
    }
    let per_way = geom.sets * opts.line_bytes;
    Ok(Curve {
        sizes_bytes: (1..=u64::from(geom.max_ways))
            .map(|w| w * per_way)
            .collect(),
        misses: misses_by_ways(&hist),
        accesses: totals.accesses,
        instructions: totals.instructions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CurveError;

    #[test]
    fn refuses_stacks_beyond_the_host_memory_before_allocating() {
        // 2^32 sets x 1024 ways x 8 B = 32 TiB: within the documented
        // limits of each parameter, but not of any machine this runs on.
        let geom = SetAssoc {
            sets: 1 << 32,
            max_ways: MAX_WAYS,
        };
        assert!(geom.check().is_ok());
        let e = set_associative([], &Options::default(), &geom).unwrap_err();
        assert!(matches!(e, CurveError::TooLarge(_)), "{e:?}");
        let m = e.to_string();
        assert!(
            m.contains("32.0 TiB") && m.contains("4294967296 sets x 1024 ways x 8 B"),
            "{m}"
        );
        assert!(m.contains("memory"), "{m}");
        // A small cache still works.
        let ok = SetAssoc {
            sets: 64,
            max_ways: 4,
        };
        assert!(set_associative([], &Options::default(), &ok).is_ok());
    }
}
