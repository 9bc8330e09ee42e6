//! Locating the shared reference data (`../shared/data/pbbcache` beside the
//! repository, or `$CACHEPART_SHARED/data/pbbcache`).

use std::path::PathBuf;

/// The PBBCache data folder, or `None` (with a printed skip message) when it
/// is not there.
pub fn pbbcache_dir(test: &str) -> Option<PathBuf> {
    let base = std::env::var_os("CACHEPART_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared")));
    let dir = base.join("data/pbbcache");
    if dir.join("metrics.csv").is_file() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED {test}: PBBCache reference data not found at {} (set CACHEPART_SHARED)",
            dir.display()
        );
        None
    }
}
