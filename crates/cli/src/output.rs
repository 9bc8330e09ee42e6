//! Writing results: to stdout, or atomically to a file (no partial file is
//! ever left behind).

use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// Writes `text` to `path` through a temporary file renamed into place, or
/// to stdout when `path` is `None`.
pub fn emit(text: &str, path: Option<&Path>) -> Result<()> {
    match path {
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
            Ok(())
        }
        Some(p) => write_atomic(p, text.as_bytes()),
    }
}

/// A temporary path in the directory of `path` (so a rename is atomic).
pub fn temp_beside(path: &Path) -> Result<std::path::PathBuf> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().context("output path has no file name")?;
    Ok(dir.join(format!(
        ".{}.tmp{}",
        name.to_string_lossy(),
        std::process::id()
    )))
}

/// Writes bytes to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = temp_beside(path)?;
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::anyhow!("{}: {e}", path.display())
    })
}
