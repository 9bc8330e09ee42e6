//! The `shards_index` fuzzer's kept corpus (`fuzz/corpus/shards_index/`),
//! fed through the fuzz target's check in the ordinary test suite: opening
//! and estimating never panics, and errors name the file and a byte offset
//! inside it. Byte flips of each kept file are checked too.

use std::path::Path;

#[path = "../../../fuzz/src/shards_index_check.rs"]
mod check;

#[test]
fn shards_index_corpus_and_its_byte_flips() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/shards_index");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 3, "{files:?}");
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        check::check_shards_index(&bytes);
        // Every byte flipped, one at a time, and every truncation.
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x5a;
            check::check_shards_index(&b);
            check::check_shards_index(&bytes[..i]);
        }
    }
}
