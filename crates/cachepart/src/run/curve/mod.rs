//! Miss-rate curves of a trace file, as the CLI (`cachepart curves`) and
//! Python (`cachepart.curves`) ask for them: one request type (`request.rs`),
//! one runner (here).

use crate::error::Error;
use cachepart_curves::{
    colored, fully_associative, index_path, set_associative, shards, ColorGeometry, Options,
    Sampling, SetAssoc, ShardsConfig, ShardsEstimate, ShardsIndex, UntilError, DEFAULT_EXACT_BELOW,
};
use cachepart_trace::{Prefetch, Reader, TraceError};
use std::io::{BufReader, Read};
use std::path::Path;

mod request;

pub use request::{CurveCounts, CurveKind, CurveRequest, CurveResult, SamplingInfo};

/// Wraps the trace file before it is read, e.g. to count the bytes read
/// for a progress bar. The wrapped reader runs on the decoding thread.
pub type ReadHook = Box<dyn FnOnce(Box<dyn Read + Send>) -> Box<dyn Read + Send>>;

/// Computes the requested curve of the binary trace at `trace`.
pub fn compute_curve(trace: &Path, req: &CurveRequest) -> Result<CurveResult, Error> {
    compute_curve_with(trace, req, None)
}

/// [`compute_curve`], with the trace file read through `hook` when the
/// curve comes from a pass over its records (a sample index is read
/// directly). A trace with none of the references the request counts
/// (no records, or only instruction fetches without `include_ifetch`) is
/// refused: its curve would be a miss ratio of 0 at every size.
pub fn compute_curve_with(
    trace: &Path,
    req: &CurveRequest,
    hook: Option<ReadHook>,
) -> Result<CurveResult, Error> {
    let out = curve_of(trace, req, hook)?;
    if out.curve.accesses == 0 {
        return Err(no_references(trace, req));
    }
    Ok(out)
}

/// The refusal of a trace with none of the references `req` counts.
fn no_references(trace: &Path, req: &CurveRequest) -> Error {
    let what = if req.include_ifetch {
        "0 references (loads, stores, modifies or instruction fetches): expected at least one \
         to make a miss-rate curve"
    } else {
        "0 data references (loads, stores or modifies): expected at least one to make a \
         miss-rate curve; instruction fetches count only with --ifetch (Python: ifetch=True)"
    };
    Error::trace(trace.display(), what)
}

/// The curve of [`compute_curve_with`], whatever its reference count.
fn curve_of(
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
    let sizes = req.sizes().map_err(|e| usage(&e))?;
    Ok(CurveResult {
        curve: est.curve(&sizes).map_err(|e| usage(&e))?,
        counts: None,
        sampling: Some(SamplingInfo {
            sampled_refs: est.sampled_refs,
            sampled_lines: est.sampled_lines,
            final_rate: est.final_rate,
            index,
            index_skipped,
            warning: est.small_sample(),
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
    if !req.adjust && rate < 1.0 {
        // The library refuses it too, in its own words (exact-below-lines).
        return Err(Error::Usage(format!(
            "no-adjust (adjust = false) at rate {rate}: the sizes up to {C} lines come from the \
             reference sample and the larger ones are scaled to agree with it at {C} lines, so \
             SHARDS_adj cancels and no-adjust would change nothing; it applies only to plain \
             SHARDS, here max-lines from rate 1",
            C = DEFAULT_EXACT_BELOW
        )));
    }
    let cfg = ShardsConfig {
        sampling: sampling_mode,
        adjust: req.adjust,
        ..ShardsConfig::fixed_rate(rate)
    };
    cfg.check().map_err(|e| Error::Usage(e.to_string()))?;
    Ok(cfg)
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
    let sizes = || req.sizes().map_err(|e| bad(&e));
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
    fn no_adjust_only_where_it_changes_the_estimate() {
        let shards = CurveRequest {
            kind: CurveKind::Shards,
            adjust: false,
            ..CurveRequest::default()
        };
        let e = shards_config(&shards).unwrap_err().to_string();
        assert!(
            e.contains("no-adjust") && e.contains("reference sample"),
            "{e}"
        );
        // Fixed size from rate 1: plain SHARDS, where it applies.
        let plain = CurveRequest {
            rate: Some(1.0),
            max_lines: Some(100),
            ..shards
        };
        assert!(!shards_config(&plain).unwrap().adjust);
    }

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
