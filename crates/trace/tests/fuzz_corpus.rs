//! The fuzzers' kept corpus (`fuzz/corpus/<target>/`) and the hand-made bad
//! files of `tests/corpus/`, fed through the fuzz targets' checks in the
//! ordinary test suite: no panic, binary errors name a byte offset inside
//! the input, text errors an existing line, and both binary readers agree.
//! The checks are the fuzz crate's own (`fuzz/src/lib.rs`), so a crash the
//! fuzzer found and that was fixed stays fixed once its input is in the
//! corpus.

use std::fs;
use std::path::{Path, PathBuf};

#[allow(dead_code)]
#[path = "../../../fuzz/src/lib.rs"]
mod harness;

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir:?}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

fn fuzz_corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let v = files(&dir);
    assert!(!v.is_empty(), "no corpus for {target}");
    v
}

fn run(target: &str, check: fn(&[u8])) {
    for path in fuzz_corpus(target) {
        let bytes = fs::read(&path).unwrap();
        eprintln!("{target}: {}", path.display());
        check(&bytes);
    }
}

/// The two binary targets share their corpora; `check_trace_file` runs the
/// streaming reader's checks too.
#[test]
fn binary_corpus() {
    for target in ["reader", "trace_file"] {
        run(target, |b| {
            harness::check_trace_file(b);
        });
    }
}

#[test]
fn frame_corpus() {
    run("frame", harness::check_frame);
}

#[test]
fn lackey_corpus() {
    run("lackey", harness::check_lackey);
}

#[test]
fn din_corpus() {
    run("din", harness::check_din);
}

#[test]
fn synth_corpus() {
    run("synth", harness::check_synth);
}

/// The hand-made bad files fail through every check, with an offset.
#[test]
fn malformed_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut seen = 0;
    for path in files(&dir) {
        let bytes = fs::read(&path).unwrap();
        match path.extension().and_then(|e| e.to_str()) {
            Some("cpt") => {
                assert!(harness::check_trace_file(&bytes).is_none(), "{path:?}");
                assert!(harness::check_reader(&bytes).is_none(), "{path:?}");
            }
            Some("lackey") => harness::check_lackey(&bytes),
            Some("din") => harness::check_din(&bytes),
            _ => continue,
        }
        seen += 1;
    }
    assert!(seen >= 8, "only {seen} files in {dir:?}");
}

/// The checks themselves fail on what they must reject.
#[test]
fn checks_catch_contract_breaks() {
    let e = cachepart_trace::TraceError::BadFrame {
        offset: 10,
        reason: "x".into(),
    };
    assert_eq!(harness::error_offset(&e), Some(10));
    let e = cachepart_trace::TraceError::Config("x".into());
    assert_eq!(harness::error_offset(&e), None);
    let frame = fuzz_corpus("frame");
    let seed = fs::read(frame.iter().find(|p| p.ends_with("seed-mixed")).unwrap()).unwrap();
    let records = u32::from(u16::from_le_bytes([seed[0], seed[1]])) + 1;
    let file = harness::assemble(&seed[2..], records);
    let recs = harness::check_trace_file(&file).expect("the seed frame is valid");
    assert_eq!(recs.len(), 5);
}
