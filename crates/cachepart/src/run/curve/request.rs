//! What a curve request asks for ([`CurveRequest`], [`CurveKind`]) and
//! what it gets ([`CurveResult`]: the curve, SHARDS' figures, each
//! point's way or color count).

use cachepart_curves::Curve;
use cachepart_units::Kind as _;
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// Which curve (kebab-case names: `fully-associative`, ...); an unknown
/// name is a usage error that lists them.
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[strum(
    parse_err_ty = Error,
    parse_err_fn = unknown_curve_kind
)]
pub enum CurveKind {
    /// Exact LRU, fully associative, at log-spaced sizes.
    #[strum(message = "Exact LRU, fully associative, at log-spaced sizes")]
    FullyAssociative,
    /// Exact LRU with `sets` sets at every way count `1..=ways`.
    #[strum(message = "Exact LRU with --sets sets at every way count 1..=--ways")]
    SetAssociative,
    /// Exact LRU confined to `1..=C` page colors, at `ways` ways.
    #[strum(message = "Exact LRU confined to 1..=C page colors (at --ways ways)")]
    Colors,
    /// SHARDS estimate of the fully associative curve.
    #[strum(message = "SHARDS estimate of the fully associative curve")]
    Shards,
}

/// The error of an unknown curve kind.
fn unknown_curve_kind(s: &str) -> Error {
    Error::Usage(format!(
        "curve kind {s:?}: expected {}",
        CurveKind::expected()
    ))
}

/// What to compute.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveRequest {
    /// Which curve.
    pub kind: CurveKind,
    /// Cache line size in bytes.
    pub line_bytes: u64,
    /// Count instruction fetches as references too.
    pub include_ifetch: bool,
    /// Smallest size of the fully associative and SHARDS curves, in bytes
    /// (`None`: [`CurveRequest::DEFAULT_MIN_SIZE`], or one line where a
    /// line is larger).
    pub min_size: Option<u64>,
    /// Largest size of those curves, in bytes.
    pub max_size: u64,
    /// Sizes per octave of those curves.
    pub per_octave: u32,
    /// Sets of the set-associative and colored caches.
    pub sets: u64,
    /// Ways of those caches.
    pub ways: u32,
    /// Page size of the color mapping.
    pub page_bytes: u64,
    /// SHARDS sampling rate (the initial rate with `max_lines`; `None`:
    /// [`CurveRequest::DEFAULT_RATE`]). Only for [`CurveKind::Shards`].
    pub rate: Option<f64>,
    /// SHARDS fixed-size mode: at most this many sampled lines.
    pub max_lines: Option<usize>,
    /// SHARDS_adj correction.
    pub adjust: bool,
    /// SHARDS: read the trace's sample index (`TRACE.shards`) when there
    /// is one and it serves the request.
    pub use_index: bool,
}

impl Default for CurveRequest {
    fn default() -> Self {
        CurveRequest {
            kind: CurveKind::FullyAssociative,
            line_bytes: 64,
            include_ifetch: false,
            min_size: None,
            max_size: 64 << 20,
            per_octave: 1,
            sets: 2048,
            ways: 16,
            page_bytes: 4096,
            rate: None,
            max_lines: None,
            adjust: true,
            use_index: true,
        }
    }
}

impl CurveRequest {
    /// The SHARDS sampling rate when none is given.
    pub const DEFAULT_RATE: f64 = 0.01;

    /// Refuses SHARDS options (`rate`, `max-lines`, no `adjust`, no
    /// index) given for another kind of curve, where they would be
    /// silently ignored.
    pub fn check(&self) -> Result<(), Error> {
        if self.kind == CurveKind::Shards {
            return Ok(());
        }
        let given = [
            self.rate.map(|r| format!("rate {r}")),
            self.max_lines.map(|m| format!("max-lines {m}")),
            (!self.adjust).then(|| "no-adjust (adjust = false)".to_string()),
            (!self.use_index).then(|| "no-index (use-index = false)".to_string()),
        ];
        if let Some(opt) = given.into_iter().flatten().next() {
            return Err(Error::Usage(format!(
                "{opt}: a SHARDS sampling option, for kind shards only (this curve is {}, an exact one)",
                self.kind.name()
            )));
        }
        Ok(())
    }

    /// The smallest size of a curve when none is given: 1 KiB.
    pub const DEFAULT_MIN_SIZE: u64 = 1024;

    pub(super) fn rate(&self) -> f64 {
        self.rate.unwrap_or(Self::DEFAULT_RATE)
    }

    /// The sizes of a fully associative or SHARDS curve: `per_octave`
    /// log-spaced sizes from `min_size` to `max_size`, rounded down to
    /// whole lines ([`cachepart_curves::line_sizes`]).
    pub(super) fn sizes(&self) -> cachepart_curves::Result<Vec<u64>> {
        cachepart_curves::line_sizes(
            self.min_size
                .unwrap_or(Self::DEFAULT_MIN_SIZE.max(self.line_bytes)),
            self.max_size,
            self.per_octave,
            self.line_bytes,
        )
    }
}

/// SHARDS' sampling figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SamplingInfo {
    /// Sampled references.
    pub sampled_refs: u64,
    /// Distinct sampled lines tracked.
    pub sampled_lines: u64,
    /// Sampling rate at the end.
    pub final_rate: f64,
    /// The sample index the estimate came from (`None`: a pass over the
    /// trace).
    pub index: Option<std::path::PathBuf>,
    /// Why an index next to the trace was not used.
    pub index_skipped: Option<String>,
    /// Why the sample is too small for the estimate to mean much, if it
    /// is ([`cachepart_curves::ShardsEstimate::small_sample`]).
    pub warning: Option<String>,
}

/// A computed curve.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CurveResult {
    /// The curve.
    pub curve: Curve,
    /// SHARDS only.
    pub sampling: Option<SamplingInfo>,
    /// Set-associative and color curves: each point's way or color count.
    pub counts: Option<CurveCounts>,
}

/// The allocation each point of a set-associative or color curve stands
/// for: `ways` (1..=W at a fixed number of sets) or `colors` (1..=C page
/// colors at W ways).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CurveCounts {
    /// `ways` or `colors`: the column name in every output.
    pub axis: &'static str,
    /// One count per point of the curve.
    pub values: Vec<u64>,
}

impl CurveRequest {
    /// The axis of the request's curve and the bytes one unit of it holds
    /// (a way of `sets` sets; a color of `ways` ways), if it has one.
    fn count_unit(&self) -> Option<(&'static str, u64)> {
        let line = self.line_bytes;
        match self.kind {
            CurveKind::SetAssociative => Some(("ways", self.sets * line)),
            CurveKind::Colors => Some(("colors", u64::from(self.ways) * self.page_bytes)),
            CurveKind::FullyAssociative | CurveKind::Shards => None,
        }
    }

    /// Each point's count on the request's axis (see [`CurveCounts`]).
    pub(super) fn counts(&self, curve: &Curve) -> Option<CurveCounts> {
        let (axis, unit) = self.count_unit()?;
        Some(CurveCounts {
            axis,
            values: curve.sizes_bytes.iter().map(|&b| b / unit.max(1)).collect(),
        })
    }
}
