//! Malformed input gives a typed error with a byte offset or line number,
//! never a panic: random bytes, truncations and mutations of valid files,
//! and a small corpus of hand-made bad files with their expected messages.
//!
//! The corpus lives in `tests/corpus/`: each `NAME.cpt`, `NAME.lackey` or
//! `NAME.din` has a `NAME.expected` holding the error message. Regenerate
//! the binary ones with `cargo test -p cachepart-trace --test malformed --
//! --ignored regenerate_corpus`.

use std::fs;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use cachepart_trace::{
    DinReader, Header, Kind, LackeyReader, Reader, Record, Result, TraceError, TraceFile, Writer,
};
use proptest::prelude::*;

#[allow(dead_code)]
#[path = "../../../fuzz/src/lib.rs"]
mod harness;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("mf-{}-{name}", std::process::id()))
}

/// A valid trace of `n` records in frames of `frame` records.
fn valid(n: u64, frame: u32) -> Vec<u8> {
    let header = Header {
        frame_records: frame,
        ..Header::default()
    }
    .with_meta("command", "corpus");
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    for i in 0..n {
        let k = [Kind::Ifetch, Kind::Load, Kind::Store][(i % 3) as usize];
        w.push(Record::access(k, 0x40_0000 + i * 4, 4, 0).unwrap())
            .unwrap();
    }
    w.finish().unwrap().0
}

/// Reads everything through the streaming reader; the first error.
fn stream_error(bytes: &[u8]) -> Option<TraceError> {
    match Reader::new(bytes) {
        Err(e) => Some(e),
        Ok(r) => r.filter_map(|x| x.err()).next(),
    }
}

/// Reads everything through the indexed reader, sequentially and in
/// parallel; must not panic whatever the file holds.
fn indexed_error(bytes: &[u8], name: &str) -> Option<TraceError> {
    let path = tmp(name);
    fs::write(&path, bytes).unwrap();
    let out = (|| -> Result<()> {
        let f = TraceFile::open(&path)?;
        f.read_all_parallel()?;
        for r in f.records_from(0)? {
            r?;
        }
        Ok(())
    })();
    fs::remove_file(&path).unwrap();
    out.err()
}

fn text_error(path: &Path) -> Option<TraceError> {
    let r = BufReader::new(fs::File::open(path).unwrap());
    match path.extension().and_then(|e| e.to_str()) {
        Some("lackey") => LackeyReader::new(r).filter_map(|x| x.err()).next(),
        Some("din") => DinReader::new(r).filter_map(|x| x.err()).next(),
        _ => unreachable!(),
    }
}

#[test]
fn corpus_errors_match() {
    let mut seen = 0;
    let mut entries: Vec<_> = fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext == "expected" {
            continue;
        }
        let expected = fs::read_to_string(path.with_extension("expected")).unwrap();
        let err = match ext {
            "cpt" => {
                let bytes = fs::read(&path).unwrap();
                // The indexed reader must fail too (its message may differ).
                assert!(indexed_error(&bytes, "corpus").is_some(), "{path:?}");
                stream_error(&bytes)
            }
            _ => text_error(&path),
        };
        let err = err.unwrap_or_else(|| panic!("{path:?} gave no error"));
        assert_eq!(err.to_string(), expected.trim_end(), "{path:?}");
        seen += 1;
    }
    assert!(seen >= 8, "corpus has {seen} files");
}

/// Builds a one-frame file from a raw (untransformed) frame body, after
/// the header of [`valid`]`(0, 16)`, with the fuzz harness's builder (an
/// index and trailer written from the format description alone).
fn assemble(raw: &[u8], records: u32) -> Vec<u8> {
    harness::assemble_after(valid(0, 16), raw, records, 3)
}

/// Raw frame body for `kinds` (sizes 8, gaps 0) with one-byte deltas.
fn raw_frame(kinds: &[u8]) -> Vec<u8> {
    let n = kinds.len();
    let ifetch = kinds.iter().filter(|&&k| k == 2).count();
    let data = kinds.iter().filter(|&&k| matches!(k, 0 | 1 | 3)).count();
    let mut raw = Vec::new();
    raw.extend_from_slice(&(ifetch as u32).to_le_bytes());
    raw.extend_from_slice(&(data as u32).to_le_bytes());
    raw.extend_from_slice(kinds);
    raw.resize(raw.len() + n, 8);
    raw.resize(raw.len() + n, 0);
    raw.resize(raw.len() + n, 0x10); // every address varint: +8
    raw
}

#[test]
fn assembled_frames_decode() {
    let bytes = assemble(&raw_frame(&[2, 0, 1, 2]), 4);
    let recs: Vec<Record> = Reader::new(&bytes[..])
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(recs.len(), 4);
    assert_eq!(recs[0].kind(), Kind::Ifetch);
    assert_eq!(recs[0].addr(), 8);
    assert_eq!(recs[2].addr(), 16);
    assert_eq!(recs[3].addr(), 16);
    assert!(indexed_error(&bytes, "assembled").is_none());
}

#[test]
#[ignore = "writes the corpus; run by hand after a format change"]
fn regenerate_corpus() {
    let dir = corpus();
    fs::create_dir_all(&dir).unwrap();
    let good = valid(100, 40);
    let header_len = u32::from_le_bytes(good[12..16].try_into().unwrap()) as usize;
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut b = good.clone();
    b[..8].copy_from_slice(b"NOTTRACE");
    cases.push(("bad_magic", b));
    let mut b = good.clone();
    b[8] = 2;
    cases.push(("wrong_version", b));
    cases.push(("truncated_header", good[..20].to_vec()));
    cases.push(("truncated_frame", good[..header_len + 30].to_vec()));
    let mut b = good.clone();
    b[header_len + 8] ^= 0x40; // record count of the first frame
    cases.push(("bad_frame_header", b));
    let mut b = good.clone();
    let at = b.len() - 24 - 3 * 20; // first index entry
    b[at] ^= 1;
    cases.push(("corrupt_index", b));
    let mut b = good.clone();
    let at = b.len() - 24 - 3 * 20 - 8;
    b.truncate(at);
    cases.push(("missing_index", b));
    cases.push(("bad_record", assemble(&raw_frame(&[2, 0, 6, 1]), 4)));
    cases.push((
        "short_section",
        assemble(&raw_frame(&[2, 0, 1])[..8 + 9 + 1], 3),
    ));
    for (name, bytes) in cases {
        fs::write(dir.join(format!("{name}.cpt")), &bytes).unwrap();
        let err = stream_error(&bytes).expect(name);
        fs::write(dir.join(format!("{name}.expected")), format!("{err}\n")).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let _ = stream_error(&bytes);
        let mut with_magic = b"CPTRACE\0\x01\x00".to_vec();
        with_magic.extend_from_slice(&bytes);
        let _ = stream_error(&with_magic);
        let _ = indexed_error(&with_magic, "random");
    }

    #[test]
    fn truncations_fail_cleanly(cut in any::<prop::sample::Index>()) {
        let good = valid(300, 64);
        let n = cut.index(good.len());
        prop_assert!(stream_error(&good[..n]).is_some());
        prop_assert!(indexed_error(&good[..n], "cut").is_some());
    }

    #[test]
    fn mutations_never_panic(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)
    ) {
        let mut b = valid(300, 64);
        for (at, v) in edits {
            let i = at.index(b.len());
            b[i] = v;
        }
        let _ = stream_error(&b);
        let _ = indexed_error(&b, "mut");
    }
}

#[test]
fn text_readers_never_panic_on_garbage() {
    proptest!(|(text in prop::collection::vec(any::<u8>(), 0..300))| {
        let _ = LackeyReader::new(&text[..]).count();
        let _ = LackeyReader::new(&text[..]).lenient(true).count();
        let _ = DinReader::new(&text[..]).count();
    });
}
