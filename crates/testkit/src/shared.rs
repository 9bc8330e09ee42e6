//! Locating the shared reference data: `$CACHEPART_SHARED`, or `../shared`
//! beside the repository.
//!
//! Tests that need the data must not pass silently without it: when the
//! folder is missing they panic with the path looked at and what to set,
//! unless `CACHEPART_ALLOW_MISSING_SHARED=1` allows skipping (then the
//! locator returns `None` and prints `SKIPPED`).

use std::path::PathBuf;

/// The variable that names the shared folder.
pub const SHARED_VAR: &str = "CACHEPART_SHARED";
/// The variable that allows tests to skip when the shared data is missing.
pub const ALLOW_MISSING_VAR: &str = "CACHEPART_ALLOW_MISSING_SHARED";

/// The shared folder: `$CACHEPART_SHARED`, else `../shared` beside the
/// repository (whether or not it exists).
pub fn shared_dir() -> PathBuf {
    std::env::var_os(SHARED_VAR)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared")))
}

/// Whether `CACHEPART_ALLOW_MISSING_SHARED` is set to `1` (or `true`).
pub fn missing_allowed() -> bool {
    matches!(
        std::env::var(ALLOW_MISSING_VAR).as_deref(),
        Ok("1") | Ok("true")
    )
}

/// `rel` under the shared folder, if `probe` (a file under it) exists;
/// otherwise a panic naming the path and the variables, or `None` (with a
/// `SKIPPED` line naming `test`) when missing data is allowed.
pub fn shared_path(test: &str, rel: &str, probe: &str) -> Option<PathBuf> {
    let dir = shared_dir().join(rel);
    let want = dir.join(probe);
    if want.is_file() {
        return Some(dir);
    }
    let why = format!(
        "{test}: shared reference data not found: {} does not exist \
         (set {SHARED_VAR} to the shared folder, or {ALLOW_MISSING_VAR}=1 to skip)",
        want.display()
    );
    if missing_allowed() {
        eprintln!("SKIPPED {why}");
        None
    } else {
        panic!("{why}");
    }
}

/// The PBBCache data folder (`data/pbbcache`, with `metrics.csv` and
/// `ref/tidy_results.csv`), as [`shared_path`]: a panic when missing
/// unless missing data is allowed.
pub fn pbbcache_dir(test: &str) -> Option<PathBuf> {
    let dir = shared_path(test, "data/pbbcache", "metrics.csv")?;
    let tidy = dir.join("ref/tidy_results.csv");
    if !tidy.is_file() {
        let why = format!("{test}: {} does not exist", tidy.display());
        if missing_allowed() {
            eprintln!("SKIPPED {why}");
            return None;
        }
        panic!("{why} (set {SHARED_VAR}, or {ALLOW_MISSING_VAR}=1 to skip)");
    }
    Some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_beside_the_repository() {
        if std::env::var_os(SHARED_VAR).is_none() {
            let d = shared_dir();
            assert!(d.ends_with("shared"), "{}", d.display());
            // crates/testkit/../../../shared: the repository's parent.
            let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
            assert_eq!(d.parent(), Some(repo.join("..").as_path()));
        }
    }

    #[test]
    fn a_missing_file_panics_with_the_path() {
        let r = std::panic::catch_unwind(|| {
            if missing_allowed() {
                panic!("not found (allowed by the environment)");
            }
            shared_path("t", "no/such/dir", "x.csv")
        });
        let msg = r.expect_err("must panic");
        let msg = msg
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| msg.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        assert!(msg.contains("not found"), "{msg}");
    }
}
