//! Miss-rate curves of a trace file, as the CLI (`cachepart curves`) and
//! Python (`cachepart.curves`) ask for them: one request type, one runner.

use crate::error::Error;
use cachepart_curves::{
    colored, fully_associative, index_path, log_sizes, set_associative, shards, ColorGeometry,
    Curve, Options, Sampling, SetAssoc, ShardsConfig, ShardsEstimate, ShardsIndex, UntilError,
};
use cachepart_trace::{Prefetch, Reader, TraceError};
use cachepart_units::Kind as _;
use serde::{Deserialize, Serialize};
use std::io::{BufReader, Read};
use std::path::Path;

/// Which curve (kebab-case names: `fully-associative`, ...); an unknown
/// name is a usage error that lists them.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
    strum::VariantNames,
    strum::EnumMessage,
)]
#[serde(rename_all = "kebab-case")]
#[strum(
    serialize_all = "kebab-case",
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
    /// Smallest size of the fully associative and SHARDS curves, in bytes.
    pub min_size: u64,
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
            min_size: 1024,
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

    fn rate(&self) -> f64 {
        self.rate.unwrap_or(Self::DEFAULT_RATE)
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
    fn counts(&self, curve: &Curve) -> Option<CurveCounts> {
        let (axis, unit) = self.count_unit()?;
        Some(CurveCounts {
            axis,
            values: curve.sizes_bytes.iter().map(|&b| b / unit.max(1)).collect(),
        })
    }
}

/// Wraps the trace file before it is read, e.g. to count the bytes read
/// for a progress bar. The wrapped reader runs on the decoding thread.
pub type ReadHook = Box<dyn FnOnce(Box<dyn Read + Send>) -> Box<dyn Read + Send>>;

/// Computes the requested curve of the binary trace at `trace`.
pub fn compute_curve(trace: &Path, req: &CurveRequest) -> Result<CurveResult, Error> {
    compute_curve_with(trace, req, None)
}

/// [`compute_curve`], with the trace file read through `hook` when the
/// curve comes from a pass over its records (a sample index is read
/// directly).
pub fn compute_curve_with(
    trace: &Path,
    req: &CurveRequest,
    hook: Option<ReadHook>,
) -> Result<CurveResult, Error> {
    req.check()?;
    let opts = Options::default()
        .with_line_bytes(req.line_bytes)
        .with_ifetch(req.include_ifetch);
    let mut index_skipped = None;
    let idx = index_path(trace);
    // standard input (`-`) has no index beside it
    let piped = trace.as_os_str() == "-";
    if req.kind == CurveKind::Shards && req.use_index && !piped && idx.exists() {
        let cfg = shards_config(req)?;
        let index = ShardsIndex::open(&idx).map_err(|e| Error::trace("", e))?;
        index.check_trace(trace).map_err(|e| Error::trace("", e))?;
        match index.serves(&opts, &cfg) {
            Ok(()) => {
                let est = index
                    .estimate(&opts, &cfg)
                    .map_err(|e| Error::trace("", e))?;
                return shards_result(&est, req, Some(idx), None);
            }
            Err(why) => index_skipped = Some(why),
        }
    }
    pass(trace, req, &opts, index_skipped, hook)
}

/// A SHARDS estimate's curve at the request's sizes, with its figures.
fn shards_result(
    est: &ShardsEstimate,
    req: &CurveRequest,
    index: Option<std::path::PathBuf>,
    index_skipped: Option<String>,
) -> Result<CurveResult, Error> {
    let usage = |e: &dyn std::fmt::Display| Error::Usage(e.to_string());
    let sizes = log_sizes(req.min_size, req.max_size, req.per_octave).map_err(|e| usage(&e))?;
    Ok(CurveResult {
        curve: est.curve(&sizes).map_err(|e| usage(&e))?,
        counts: None,
        sampling: Some(SamplingInfo {
            sampled_refs: est.sampled_refs,
            sampled_lines: est.sampled_lines,
            final_rate: est.final_rate,
            index,
            index_skipped,
        }),
    })
}

/// The SHARDS configuration of a request.
fn shards_config(req: &CurveRequest) -> Result<ShardsConfig, Error> {
    let rate = req.rate();
    if !(rate > 0.0 && rate <= 1.0) {
        return Err(Error::Usage(format!(
            "SHARDS rate {rate}: expected 0 < rate <= 1"
        )));
    }
    let sampling_mode = match req.max_lines {
        Some(max_lines) => Sampling::FixedSize {
            max_lines,
            initial_rate: rate,
        },
        None => Sampling::FixedRate { rate },
    };
    Ok(ShardsConfig {
        sampling: sampling_mode,
        adjust: req.adjust,
        ..ShardsConfig::fixed_rate(rate)
    })
}

/// The curve from one pass over the trace's records.
fn pass(
    trace: &Path,
    req: &CurveRequest,
    opts: &Options,
    index_skipped: Option<String>,
    hook: Option<ReadHook>,
) -> Result<CurveResult, Error> {
    let ctx = |e: TraceError| Error::trace(trace.display(), e);
    let opts = *opts;
    let file = cachepart_trace::open_stream(trace).map_err(|e| Error::io(trace, e))?;
    let raw: Box<dyn Read + Send> = match hook {
        Some(wrap) => wrap(file),
        None => Box::new(file),
    };
    let reader = Reader::new(BufReader::with_capacity(1 << 20, raw)).map_err(ctx)?;
    // Frames are decoded on another thread while the curve is built; the
    // records and a reader's error come out as the reader gives them.
    let ahead = Prefetch::reader(reader).map_err(ctx)?;
    let mut records = UntilError::new(ahead);
    let bad = |e: &dyn std::fmt::Display| Error::Usage(e.to_string());
    let sizes = || log_sizes(req.min_size, req.max_size, req.per_octave).map_err(|e| bad(&e));
    let mut sampling = None;
    let curve = match req.kind {
        CurveKind::FullyAssociative => {
            let h = fully_associative(&mut records, &opts).map_err(|e| bad(&e))?;
            h.curve(&sizes()?).map_err(|e| bad(&e))?
        }
        CurveKind::SetAssociative => {
            let geom = SetAssoc {
                sets: req.sets,
                max_ways: req.ways,
            };
            set_associative(&mut records, &opts, &geom).map_err(|e| bad(&e))?
        }
        CurveKind::Colors => {
            let geom = ColorGeometry {
                sets: req.sets,
                ways: req.ways,
                page_bytes: req.page_bytes,
            };
            let cc = colored(&mut records, &opts, &geom, None).map_err(|e| bad(&e))?;
            cc.by_colors(req.ways).map_err(|e| bad(&e))?
        }
        CurveKind::Shards => {
            let cfg = shards_config(req)?;
            let est = shards(&mut records, &opts, &cfg).map_err(|e| bad(&e))?;
            let r = shards_result(&est, req, None, index_skipped)?;
            sampling = r.sampling;
            r.curve
        }
    };
    records.finish().map_err(ctx)?;
    let counts = req.counts(&curve);
    Ok(CurveResult {
        curve,
        sampling,
        counts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_options_are_for_shards_only() {
        let exact = CurveRequest {
            kind: CurveKind::SetAssociative,
            ..CurveRequest::default()
        };
        assert!(exact.check().is_ok());
        for (req, word) in [
            (
                CurveRequest {
                    rate: Some(0.5),
                    ..exact.clone()
                },
                "rate 0.5",
            ),
            (
                CurveRequest {
                    max_lines: Some(9),
                    ..exact.clone()
                },
                "max-lines 9",
            ),
            (
                CurveRequest {
                    adjust: false,
                    ..exact.clone()
                },
                "adjust",
            ),
            (
                CurveRequest {
                    use_index: false,
                    ..exact.clone()
                },
                "index",
            ),
        ] {
            let e = req.check().unwrap_err().to_string();
            assert!(e.contains(word) && e.contains("set-associative"), "{e}");
            let shards = CurveRequest {
                kind: CurveKind::Shards,
                ..req
            };
            assert!(shards.check().is_ok());
        }
    }
}
