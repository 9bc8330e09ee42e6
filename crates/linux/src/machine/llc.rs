//! The last-level cache's geometry from
//! `/sys/devices/system/cpu/cpu*/cache/index*/` (the highest level listed
//! for CPU 0: size, ways, line size).

use crate::error::{Error, Result};
use std::path::Path;

/// The LLC as sysfs describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Llc {
    /// Its level (3 on most servers).
    pub level: u32,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Associativity.
    pub ways: u32,
    /// Line size in bytes.
    pub line_bytes: u32,
}

impl Llc {
    /// Sets per way: `size / (ways x line)`.
    pub fn sets(&self) -> u64 {
        self.size_bytes / (u64::from(self.ways) * u64::from(self.line_bytes)).max(1)
    }

    /// Reads the highest cache level of CPU 0 under `sys_root`.
    pub fn read(sys_root: &Path) -> Result<Llc> {
        let base = sys_root.join("devices/system/cpu/cpu0/cache");
        let entries = std::fs::read_dir(&base).map_err(|e| Error::io(&base, e))?;
        let mut best: Option<Llc> = None;
        for e in entries {
            let dir = e.map_err(|e| Error::io(&base, e))?.path();
            let name = dir.file_name().unwrap_or_default().to_string_lossy();
            if !name.starts_with("index") {
                continue;
            }
            let field = |f: &str| -> Result<String> {
                let p = dir.join(f);
                std::fs::read_to_string(&p)
                    .map(|t| t.trim().to_string())
                    .map_err(|e| Error::io(&p, e))
            };
            let number = |f: &str| -> Result<u64> {
                let t = field(f)?;
                t.parse().map_err(|_| {
                    Error::parse(dir.join(f), format!("expected a number, found '{t}'"))
                })
            };
            if field("type")? == "Instruction" {
                continue;
            }
            let size_text = field("size")?;
            let size_bytes = parse_size(&size_text).ok_or_else(|| {
                Error::parse(
                    dir.join("size"),
                    format!("expected a size such as 11264K, found '{size_text}'"),
                )
            })?;
            let llc = Llc {
                level: number("level")? as u32,
                size_bytes,
                ways: number("ways_of_associativity")? as u32,
                line_bytes: number("coherency_line_size")? as u32,
            };
            if best.is_none_or(|b| llc.level > b.level) {
                best = Some(llc);
            }
        }
        best.ok_or_else(|| Error::parse(&base, "no data or unified cache listed (index*/)"))
    }
}

/// `11264K`, `32M`, `1024`.
fn parse_size(text: &str) -> Option<u64> {
    let (num, mult) = match text.chars().last()? {
        'K' => (&text[..text.len() - 1], 1024),
        'M' => (&text[..text.len() - 1], 1024 * 1024),
        'G' => (&text[..text.len() - 1], 1024 * 1024 * 1024),
        _ => (text, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_highest_level() {
        let t = tempfile::tempdir().unwrap();
        crate::fake::sys_tree(t.path(), 4, 11264 * 1024, 11, false).unwrap();
        let llc = Llc::read(t.path()).unwrap();
        assert_eq!(
            llc,
            Llc {
                level: 3,
                size_bytes: 11264 * 1024,
                ways: 11,
                line_bytes: 64
            }
        );
        assert_eq!(llc.sets(), 16384);
        assert_eq!(parse_size("32M"), Some(32 << 20));
        std::fs::write(
            t.path().join("devices/system/cpu/cpu0/cache/index3/size"),
            "lots\n",
        )
        .unwrap();
        let e = Llc::read(t.path()).unwrap_err().to_string();
        assert!(e.contains("index3/size") && e.contains("'lots'"), "{e}");
    }
}
