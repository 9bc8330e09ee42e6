//! `trace info`: what a trace file holds, computed with parallel decode.

use std::path::Path;

use serde::Serialize;

use crate::error::Result;
use crate::file::TraceFile;
use crate::stats::{Counts, Footprint};

/// Summary of a trace file.
#[derive(Clone, Debug, Serialize)]
pub struct TraceInfo {
    /// Record and instruction counts.
    #[serde(flatten)]
    pub counts: Counts,
    /// Accesses (records that are not escapes).
    pub accesses: u64,
    /// Distinct pages touched, in units of `page_size`.
    pub footprint_pages: u64,
    /// Page size used for the footprint (the header's hint).
    pub page_size: u32,
    /// Frames in the file.
    pub frames: u64,
    /// File size in bytes.
    pub file_bytes: u64,
    /// File bytes per access (per record when there are no accesses);
    /// `None` (JSON `null`) for a trace without records, which has none
    /// to divide by.
    pub bytes_per_access: Option<f64>,
    /// Header metadata.
    pub meta: Vec<(String, String)>,
}

/// Reads the whole trace at `path` (frames decoded in parallel) and
/// summarises it.
pub fn info(path: impl AsRef<Path>) -> Result<TraceInfo> {
    let file = TraceFile::open(path)?;
    let page = u64::from(file.header().page_size);
    let parts = file.par_map_frames(|_, recs| {
        let mut c = Counts::default();
        let mut f = Footprint::new(page);
        c.add_all(recs);
        for &r in recs {
            f.add(r);
        }
        (c, f)
    })?;
    let mut counts = Counts::default();
    let mut foot = Footprint::new(page);
    for (c, f) in parts {
        counts.merge(&c);
        foot.merge(f);
    }
    let accesses = counts.accesses();
    let per = if accesses > 0 {
        accesses
    } else {
        counts.records
    };
    Ok(TraceInfo {
        accesses,
        footprint_pages: foot.len(),
        page_size: file.header().page_size,
        frames: file.frames().len() as u64,
        file_bytes: file.len_bytes(),
        bytes_per_access: (per > 0).then(|| file.len_bytes() as f64 / per as f64),
        meta: file.header().meta.clone(),
        counts,
    })
}
