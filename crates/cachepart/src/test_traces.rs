//! Test helpers (tests only): a small simulated platform and small
//! synthetic traces written to a scratch directory.

use std::path::{Path, PathBuf};

use cachepart_sim::system::PlatformConfig;
use cachepart_trace::synth::SynthConfig;
use cachepart_trace::{Header, Writer};

/// A scratch directory removed when dropped.
pub(crate) struct Scratch(tempfile::TempDir);

impl Scratch {
    /// A fresh directory whose name starts with `tag`.
    pub fn new(tag: &str) -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix(&format!("cachepart-{tag}-"))
            .tempdir()
            .expect("create a scratch directory");
        Scratch(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

/// A single-core platform: no L2, an 8-way 128 KiB LLC (16 KiB per way,
/// 4 colors of 4 KiB pages), 64 MiB of memory.
pub(crate) fn tiny_platform() -> PlatformConfig {
    PlatformConfig::from_toml_str(
        r#"
        name = "tiny"
        cores = 1
        core.l1i = { size-bytes = 4096, ways = 4, line-bytes = 64 }
        core.l1d = { size-bytes = 4096, ways = 4, line-bytes = 64 }
        llc = { size-bytes = 131072, ways = 8, line-bytes = 64 }
        memory = { size-bytes = 67108864 }
    "#,
    )
    .unwrap()
}

/// The JSON pattern of uniform accesses over a working set of `ws` bytes.
pub(crate) fn sensitive(ws: u64) -> String {
    format!(r#"{{"class": "cache-sensitive", "working-set-bytes": {ws}}}"#)
}

/// Writes `dir/NAME.cpt`: `accesses` synthetic accesses of `pattern`
/// (JSON, as in a generator file).
pub(crate) fn write_trace(dir: &Path, name: &str, pattern: &str, accesses: u64) -> PathBuf {
    let cfg: SynthConfig = serde_json::from_str(&format!(
        r#"{{"seed": 3, "accesses": {accesses}, "pattern": {pattern}}}"#
    ))
    .unwrap();
    let path = dir.join(format!("{name}.cpt"));
    let f = std::fs::File::create(&path).unwrap();
    let mut w = Writer::new(std::io::BufWriter::new(f), &Header::default()).unwrap();
    for r in cfg.generator().unwrap() {
        w.push(r).unwrap();
    }
    w.finish().unwrap();
    path
}
