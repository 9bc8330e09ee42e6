//! Small file helpers that put the path into every error.

use crate::error::{Error, Result};
use std::path::Path;

/// Reads a whole file as text.
pub(crate) fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::io(path, e))
}

/// Reads a file holding one number (decimal).
pub(crate) fn read_u32(path: &Path) -> Result<u32> {
    let text = read(path)?;
    text.trim().parse().map_err(|_| {
        Error::parse(
            path,
            format!("expected a decimal number, found '{}'", text.trim()),
        )
    })
}

/// Reads a file holding a hex number (a mask, without `0x`).
pub(crate) fn read_hex(path: &Path) -> Result<u64> {
    let text = read(path)?;
    u64::from_str_radix(text.trim(), 16).map_err(|_| {
        Error::parse(
            path,
            format!("expected a hex mask, found '{}'", text.trim()),
        )
    })
}
