//! SHARDS: approximate LRU curves from a spatially hashed sample of lines
//! (Waldspurger, Park, Garthwaite and Ahmad, "Efficient MRC Construction
//! with SHARDS", FAST 2015).
//!
//! A line is sampled when the hash of its number ([`mix64`], salted) is
//! below a threshold `T`; the rate is `R = T / 2^64`. All references to a
//! sampled line are kept and fed to an exact [`LruStack`], so a sampled
//! reference sees `d_s` distinct *sampled* lines since its line's previous
//! reference, about `R` times the true distance `d`; it is counted at the
//! estimated distance `d_s / R`, with weight `1 / R` references.
//!
//! * **Fixed rate** ([`Sampling::FixedRate`]): `T` is fixed. The memory is
//!   about `R` times the footprint.
//! * **Fixed size** ([`Sampling::FixedSize`]): at most `max_lines` sampled
//!   lines are tracked. Sampling starts at `initial_rate`; when a new line
//!   would exceed the bound, the tracked line with the largest hash is
//!   dropped and `T` is lowered to its hash, so later references sample at
//!   the lower rate. Each reference is weighted by `1 / R` at the rate in
//!   force when it is seen, which is the paper's rescaling of earlier
//!   counts by `R_new / R_old` expressed in reference units.
//! * **Adjustment** ([`ShardsConfig::adjust`], the paper's `SHARDS_adj`):
//!   the number of sampled references deviates from its expectation `R N`
//!   when a hot line happens to be sampled or not; the paper adds the
//!   difference to the distance-0 bucket. As distance 0 never misses, this
//!   amounts to dividing the estimated misses by the true reference count
//!   `N` rather than by the sampled weight; that is what `adjust` does
//!   (for fixed size, too).
//!
//! * **Reference sample** ([`ShardsConfig::exact_below_lines`] `= C`,
//!   256 by default for fixed rate): the line sample resolves sizes below
//!   about `1 / R` lines only to whether a sampled line was re-referenced
//!   with no other sampled line in between, and its level swings with
//!   whether the hottest lines are sampled. So the sizes of at most `C`
//!   lines come from a sample of *references* (data records whose record
//!   number hashes below a threshold, at [`ShardsConfig::reference_fraction`]
//!   times the line rate, whatever their address): each
//!   one's exact distance below `C` is found by looking back over the last
//!   [`WINDOW`] line references ([`LookBack`]), and
//!   `misses(n) = N * (sampled references at distance n or more) / k` for
//!   `n <= C`, a binomial estimate with standard error at most
//!   `0.5 / sqrt(k)`, `k` the references sampled. Above `C` the line sample's estimate `S` gives the
//!   shape, scaled to agree at `C`: `misses(n) = misses(C) S(n) / S(C)`.
//!
//! * **Two stages** (rates at or below [`BASE_RATE`]): a line is sampled
//!   when its hash under a fixed base salt is below the base threshold
//!   (rate [`BASE_RATE`]) *and* its salted hash is below a second
//!   threshold (rate `R / BASE_RATE`). Both hashes are independent, so
//!   this is a uniform sample of rate `R` like the one-stage one; but the
//!   first stage does not depend on `R` or the salt, so a
//!   [`crate::ShardsIndex`] that stores a trace's base sample once serves
//!   every such rate and salt and gives the same estimate as a pass over
//!   the trace, bit for bit. The reference sample is drawn the same way
//!   below [`BASE_REF_RATE`].
//!
//! Error: above `C` the line sample's variance comes from which lines are
//! sampled, so it falls roughly as `1 / (R * footprint)`, or is dominated
//! by the hottest lines. `docs/curves.md` has the measured mean absolute
//! errors.
//!
//! The files: [`config`] (the parameters and sampling thresholds),
//! [`sampler`] (the per-chunk filter and the sampling stages), [`state`]
//! (the estimator fed with the sampled references), [`builder`] (the
//! record-by-record builder around them) and [`estimate`] (the result and
//! its curve).

mod builder;
mod config;
mod estimate;
mod sampler;
mod state;

pub use builder::Shards;
pub(crate) use config::{base_keys, line_key, threshold};
pub use config::{
    Sampling, ShardsConfig, BASE_RATE, BASE_REF_RATE, DEFAULT_EXACT_BELOW,
    DEFAULT_REFERENCE_FRACTION, MAX_EXACT_BELOW,
};
pub use estimate::{ShardsEstimate, MIN_SAMPLE};
pub(crate) use sampler::RefStage;
pub(crate) use state::StoredReach;

use cachepart_trace::Record;

use crate::error::Result;
use crate::options::Options;

/// The SHARDS estimate of `records`' stack-distance histogram.
///
/// ```
/// use cachepart_curves::{fully_associative, shards, Options, ShardsConfig};
/// use cachepart_trace::{Kind, Record};
/// let recs: Vec<Record> = (0..10_000u64)
///     .map(|i| Record::access(Kind::Load, (i * 7919 % 512) * 64, 8, 0).unwrap())
///     .collect();
/// let opts = Options::default();
/// // At rate 1 every line is sampled: the exact histogram.
/// let est = shards(recs.iter().copied(), &opts, &ShardsConfig::fixed_rate(1.0)).unwrap();
/// let exact = fully_associative(recs.iter().copied(), &opts).unwrap();
/// let sizes = [64, 4096, 32768];
/// assert_eq!(est.curve(&sizes).unwrap(), exact.curve(&sizes).unwrap());
/// ```
pub fn shards<I: IntoIterator<Item = Record>>(
    records: I,
    opts: &Options,
    cfg: &ShardsConfig,
) -> Result<ShardsEstimate> {
    let mut b = Shards::new(opts, cfg)?;
    b.extend(records);
    Ok(b.finish())
}

/// [`shards`] of an in-memory trace: the same estimate, without copying
/// the records and with the sampling filter run in parallel.
pub fn shards_slice(
    records: &[Record],
    opts: &Options,
    cfg: &ShardsConfig,
) -> Result<ShardsEstimate> {
    let mut b = Shards::new(opts, cfg)?;
    b.extend_from_slice(records);
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::mix64;
    use cachepart_trace::Kind;

    #[test]
    fn every_way_of_feeding_gives_the_same_estimate() {
        // Loads and stores over 3,000 lines with fetches in between, some
        // crossing lines; 200 Ki records, so several chunks.
        let mut x: u64 = 7;
        let recs: Vec<Record> = (0..200_000u64)
            .map(|i| {
                x = mix64(x);
                let kind = [Kind::Load, Kind::Ifetch, Kind::Store, Kind::Ifetch][(i % 4) as usize];
                let line = if x.is_multiple_of(3) {
                    x % 40
                } else {
                    x % 3000
                };
                Record::access(kind, line * 64 + (x >> 40) % 64, 8, (i % 3) as u32).unwrap()
            })
            .collect();
        let opts = Options::default();
        let cfg = ShardsConfig::fixed_rate(0.05).with_reference_fraction(1.0);
        let a = shards(recs.iter().copied(), &opts, &cfg).unwrap();
        let b = shards_slice(&recs, &opts, &cfg).unwrap();
        let mut one = Shards::new(&opts, &cfg).unwrap();
        for &r in &recs {
            one.push(r);
        }
        let c = one.finish();
        let mut mixed = Shards::new(&opts, &cfg).unwrap();
        mixed.extend_from_slice(&recs[..70_000]);
        mixed.extend(recs[70_000..100_000].iter().copied());
        mixed.extend_from_slice(&recs[100_000..]);
        let d = mixed.finish();
        assert!(a.ref_samples() > 1000 && a.sampled_refs > 1000);
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert_eq!(a, d);
        let exact = crate::fully_associative(recs.iter().copied(), &opts).unwrap();
        assert_eq!(a.accesses, exact.accesses);
        assert_eq!(a.instructions, exact.instructions);
    }
}
