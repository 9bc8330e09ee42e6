//! The check behind the `shards_index` fuzz target, shared with the curves
//! crate's `tests/fuzz_corpus.rs` (which includes this file as a module):
//! opening a SHARDS sample index and estimating from it never panics, and
//! every error about the file names it and a byte offset inside it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use cachepart_curves::{CurveError, Options, ShardsConfig, ShardsIndex};

static NEXT: AtomicU64 = AtomicU64::new(0);

/// Writes `data` as an index file, opens it and estimates from it.
pub fn check_shards_index(data: &[u8]) {
    let path: PathBuf = std::env::temp_dir().join(format!(
        "cachepart-fuzz-{}-{}.cpt.shards",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, data).expect("write the input");
    let result = ShardsIndex::open(&path).and_then(|index| {
        let opts = Options::default();
        for cfg in [
            ShardsConfig::fixed_rate(0.01),
            ShardsConfig::fixed_rate(0.02).with_exact_below(16),
            ShardsConfig::fixed_rate(0.01).with_exact_below(0),
        ] {
            match index.estimate(&opts, &cfg) {
                Ok(est) => {
                    let _ = est.curve(&[1024, 65536, 1 << 20]);
                }
                Err(CurveError::NotServed(why)) => assert!(!why.is_empty()),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    });
    let _ = std::fs::remove_file(&path);
    if let Err(e) = result {
        let msg = e.to_string();
        match &e {
            CurveError::Index { offset, .. } => {
                assert!(
                    *offset <= data.len() as u64,
                    "offset {offset} past the end ({} bytes): {msg}",
                    data.len()
                );
                assert!(msg.contains(&format!("byte {offset}")), "{msg}");
                assert!(msg.contains(".cpt.shards"), "{msg}");
            }
            CurveError::Io { .. } => assert!(msg.contains(".cpt.shards"), "{msg}"),
            other => panic!("unexpected error kind for a malformed index: {other:?}"),
        }
    }
}
