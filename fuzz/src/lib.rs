//! The checks behind the fuzz targets, shared with the trace crate's
//! `tests/fuzz_corpus.rs` (which includes this file as a module, so the kept
//! corpus runs in the ordinary test suite without a fuzzer).
//!
//! Each `check_*` feeds one input through one reader and panics (a crash
//! for the fuzzer, a failure for the test) when the reader panics or breaks
//! its error contract: every binary-format error names a byte offset inside
//! the input, every text error a line that exists, every message is
//! non-empty, and a reader that reports an error stops there. Where two
//! paths read the same bytes (streaming [`Reader`] and indexed
//! [`TraceFile`]), they must agree.

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use cachepart_trace::codec::fnv1a;
use cachepart_trace::synth::{Distribution, Pattern, SynthConfig};
use cachepart_trace::{
    DinReader, Header, LackeyReader, Reader, Record, Result, TraceError, TraceFile, Writer,
};

/// Accesses generated at most per synthetic configuration.
pub const MAX_SYNTH_ACCESSES: u64 = 2_000;
/// Lines a pointer-chasing working set may have in a fuzzed configuration
/// (the generator builds a table of that many entries on the first draw:
/// legitimate, but too slow for a fuzzer).
pub const MAX_CHASE_LINES: u64 = 1 << 16;
/// Highest address a synthetic generator may touch.
const ADDR_LIMIT: u64 = 1 << 47;

/// The byte offset a binary-format error names, if its variant has one.
pub fn error_offset(e: &TraceError) -> Option<u64> {
    use TraceError::*;
    match e {
        BadMagic { offset }
        | Version { offset, .. }
        | BadHeader { offset, .. }
        | Truncated { offset, .. }
        | BadFrame { offset, .. }
        | BadRecord { offset, .. }
        | CorruptIndex { offset, .. } => Some(*offset),
        _ => None,
    }
}

/// Checks an error of a binary reader given `len` bytes of input.
fn binary_error(e: &TraceError, len: usize, what: &str) {
    let msg = e.to_string();
    assert!(!msg.is_empty(), "{what}: empty error message");
    let off = error_offset(e)
        .unwrap_or_else(|| panic!("{what}: error without a byte offset: {msg} ({e:?})"));
    assert!(
        off <= len as u64,
        "{what}: offset {off} past the end of the input ({len} bytes): {msg}"
    );
    assert!(
        msg.contains(&format!("byte offset {off}")),
        "{what}: message does not name its offset: {msg}"
    );
}

/// Reads `data` with the streaming [`Reader`]; the records if it is a
/// valid trace.
pub fn check_reader(data: &[u8]) -> Option<Vec<Record>> {
    let mut reader = match Reader::new(data) {
        Ok(r) => r,
        Err(e) => {
            binary_error(&e, data.len(), "Reader::new");
            return None;
        }
    };
    let mut records = Vec::new();
    while let Some(r) = reader.next() {
        match r {
            Ok(r) => records.push(r),
            Err(e) => {
                binary_error(&e, data.len(), "Reader");
                assert!(reader.next().is_none(), "Reader goes on after an error");
                return None;
            }
        }
    }
    assert!(reader.next().is_none(), "Reader restarts after its end");
    Some(records)
}

static FILES: AtomicU64 = AtomicU64::new(0);

/// A temporary file holding `data`, removed on drop.
struct TempTrace(PathBuf);

impl TempTrace {
    fn new(data: &[u8]) -> TempTrace {
        let n = FILES.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("cachepart-fuzz-{}-{n}.cpt", std::process::id()));
        fs::write(&path, data).expect("cannot write a temporary file");
        TempTrace(path)
    }
}

impl Drop for TempTrace {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// Opens `data` as a [`TraceFile`] (through a temporary file: the indexed
/// reader works on paths), reads it in parallel, sequentially and from its
/// middle record; the records if it is valid. The streaming reader must
/// accept exactly the same records when it accepts the file.
pub fn check_trace_file(data: &[u8]) -> Option<Vec<Record>> {
    let streamed = check_reader(data);
    let tmp = TempTrace::new(data);
    let out = (|| -> Result<Vec<Record>> {
        let f = TraceFile::open(&tmp.0)?;
        assert_eq!(f.len_bytes(), data.len() as u64);
        let all = f.read_all_parallel()?;
        assert_eq!(all.len() as u64, f.records(), "parallel read count");
        let seq = f.records_from(0)?.collect::<Result<Vec<_>>>()?;
        assert_eq!(seq, all, "sequential and parallel reads differ");
        let mid = f.records() / 2;
        let tail = f.records_from(mid)?.collect::<Result<Vec<_>>>()?;
        assert_eq!(tail[..], all[mid as usize..], "seek to record {mid}");
        assert!(f.records_from(f.records())?.next().is_none());
        assert!(f.records_from(f.records() + 1).is_err());
        for (i, fr) in f.frames().iter().enumerate() {
            assert_eq!(f.frame_of(fr.first_record).ok(), Some(i));
        }
        Ok(all)
    })();
    match out {
        Ok(records) => Some(records),
        Err(e) => {
            binary_error(&e, data.len(), "TraceFile");
            assert!(
                streamed.is_none(),
                "the streaming reader accepts a file the indexed reader rejects: {e}"
            );
            None
        }
    }
    .inspect(|indexed| {
        if let Some(s) = &streamed {
            assert_eq!(s, indexed, "streaming and indexed reads differ");
        }
    })
}

/// A header with small frames (the writer's buffer is sized by them).
fn small_frames() -> Header {
    Header {
        frame_records: 1024,
        ..Header::default()
    }
}

/// A complete one-frame trace around `raw`, an uncompressed frame body
/// declaring `records` records (built from `docs/trace-format.md`).
pub fn assemble(raw: &[u8], records: u32) -> Vec<u8> {
    static HEADER: OnceLock<Vec<u8>> = OnceLock::new();
    let header = HEADER
        .get_or_init(|| {
            let (file, _) = Writer::new(Vec::new(), &small_frames())
                .and_then(Writer::finish)
                .expect("an empty trace");
            file
        })
        .clone();
    assemble_after(header, raw, records, 1)
}

/// A one-frame trace: the header of `empty` (a finished trace without
/// records, whose empty index and trailer are dropped), then `raw` as a
/// frame declaring `records` records, compressed at zstd `level`, then an
/// index and trailer written by hand from `docs/trace-format.md`.
pub fn assemble_after(mut empty: Vec<u8>, raw: &[u8], records: u32, level: i32) -> Vec<u8> {
    empty.truncate(empty.len() - 8 - 24); // keep the header only
    let mut file = empty;
    let header_len = file.len() as u64;
    let body = zstd::bulk::compress(raw, level).expect("zstd compresses");
    file.extend_from_slice(b"CPFR");
    file.extend_from_slice(&(body.len() as u32).to_le_bytes());
    file.extend_from_slice(&records.to_le_bytes());
    file.extend_from_slice(&(raw.len() as u32).to_le_bytes());
    file.extend_from_slice(&body);
    let index_at = file.len() as u64;
    let mut idx = Vec::new();
    idx.extend_from_slice(b"CPIX");
    idx.extend_from_slice(&1u32.to_le_bytes());
    idx.extend_from_slice(&header_len.to_le_bytes());
    idx.extend_from_slice(&0u64.to_le_bytes());
    idx.extend_from_slice(&records.to_le_bytes());
    let sum = fnv1a(&idx);
    file.extend_from_slice(&idx);
    file.extend_from_slice(&index_at.to_le_bytes());
    file.extend_from_slice(&u64::from(records).to_le_bytes());
    file.extend_from_slice(&sum.to_le_bytes());
    file.extend_from_slice(b"CPTE");
    file
}

/// Frame decoding past zstd's checksum: the first two bytes give a record
/// count (1..=1024), the rest is the uncompressed frame body; the harness
/// compresses it into a valid container and reads it with both readers.
/// Records that decode must survive a write-and-read round trip.
pub fn check_frame(data: &[u8]) {
    let [a, b, raw @ ..] = data else {
        return;
    };
    let records = u32::from(u16::from_le_bytes([*a, *b]) % 1024) + 1;
    let file = assemble(raw, records);
    let Some(recs) = check_trace_file(&file) else {
        return;
    };
    assert_eq!(recs.len() as u64, u64::from(records));
    let mut w = Writer::new(Vec::new(), &small_frames()).expect("writer");
    for &r in &recs {
        w.push(r).expect("a decoded record can be written");
    }
    let (bytes, summary) = w.finish().expect("writer finishes");
    assert_eq!(summary.records, u64::from(records));
    assert_eq!(check_trace_file(&bytes).as_ref(), Some(&recs), "round trip");
}

/// Number of the last line of `data` (a final line without newline counts).
fn line_count(data: &[u8]) -> u64 {
    let nl = data.iter().filter(|&&c| c == b'\n').count() as u64;
    nl + u64::from(data.last().is_some_and(|&c| c != b'\n'))
}

/// Checks a text reader's output: records until at most one error, which
/// names the format and an existing line.
fn text_records(
    mut it: impl Iterator<Item = Result<Record>>,
    data: &[u8],
    format: &str,
) -> (Vec<Record>, bool) {
    let mut records = Vec::new();
    while let Some(r) = it.next() {
        match r {
            Ok(r) => records.push(r),
            Err(e) => {
                let msg = e.to_string();
                let TraceError::BadLine {
                    format: f, line, ..
                } = e
                else {
                    panic!("{format}: not a line error: {msg}");
                };
                assert_eq!(f, format);
                assert!(!msg.is_empty());
                assert!(
                    (1..=line_count(data)).contains(&line),
                    "{format}: line {line} of {}: {msg}",
                    line_count(data)
                );
                assert!(msg.starts_with(&format!("{format} line {line}: ")), "{msg}");
                assert!(it.next().is_none(), "{format}: goes on after an error");
                return (records, true);
            }
        }
    }
    (records, false)
}

/// Lackey text, strict and lenient: the strict reader's records before its
/// error are the lenient reader's first records, and the lenient reader
/// never fails on in-memory input.
pub fn check_lackey(data: &[u8]) {
    let (strict, _) = text_records(LackeyReader::new(data), data, "lackey");
    let mut lenient = LackeyReader::new(data).lenient(true);
    let (all, failed) = text_records(&mut lenient, data, "lackey");
    assert!(!failed, "the lenient lackey reader failed");
    assert!(
        all.starts_with(&strict),
        "lenient and strict readers differ"
    );
    assert!(lenient.skipped() <= line_count(data));
    for r in &all {
        assert!(r.is_access() && r.gap() == 0, "lackey record {r:?}");
    }
}

/// Dinero text, with the default size and with a size taken from the
/// input's first byte.
pub fn check_din(data: &[u8]) {
    let (recs, _) = text_records(DinReader::new(data), data, "din");
    assert!(recs.len() as u64 <= line_count(data));
    let size = u32::from(data.first().copied().unwrap_or(0));
    text_records(DinReader::new(data).default_size(size), data, "din");
}

/// Whether generating `p` costs more than a fuzzer can afford per input.
fn too_expensive(p: &Pattern, line_bytes: u32) -> bool {
    match p {
        Pattern::CacheSensitive {
            working_set_bytes,
            distribution: Distribution::PointerChase,
            ..
        } => working_set_bytes / u64::from(line_bytes.max(1)) > MAX_CHASE_LINES,
        Pattern::Phases { phases } => phases
            .iter()
            .any(|ph| too_expensive(&ph.pattern, line_bytes)),
        _ => false,
    }
}

/// The first `accesses` accesses of `cfg` (and the escapes among them).
fn generate(cfg: &SynthConfig, accesses: u64) -> Option<Vec<Record>> {
    let gen = match cfg.generator() {
        Ok(g) => g,
        Err(e) => {
            let msg = e.to_string();
            assert!(matches!(e, TraceError::Config(_)), "synth: {msg}");
            assert!(msg.len() > "invalid generator configuration: ".len());
            return None;
        }
    };
    let mut out = Vec::new();
    let mut seen = 0;
    for r in gen {
        // An escape always comes right before an access.
        assert!(out.len() as u64 <= 2 * seen + 1, "escapes without accesses");
        out.push(r);
        if r.is_access() {
            seen += 1;
            if seen == accesses {
                break;
            }
        }
    }
    assert_eq!(seen, accesses, "the generator ended early");
    Some(out)
}

/// A synthetic configuration in TOML: parse errors have a message; a valid
/// configuration generates (at most [`MAX_SYNTH_ACCESSES`] accesses) the
/// same records twice, inside the user address space, and survives the
/// JSON round trip that `SynthConfig::write` records in trace headers.
pub fn check_synth(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let cfg: SynthConfig = match toml::from_str(text) {
        Ok(c) => c,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    if too_expensive(&cfg.pattern, cfg.line_bytes) {
        return;
    }
    let n = cfg.accesses.min(MAX_SYNTH_ACCESSES);
    let Some(first) = generate(&cfg, n) else {
        return;
    };
    assert_eq!(
        generate(&cfg, n).as_ref(),
        Some(&first),
        "not deterministic"
    );
    for r in first.iter().filter(|r| r.is_access()) {
        let end = r.addr() + u64::from(r.size());
        assert!(
            r.addr() >= cfg.base && end <= ADDR_LIMIT,
            "access {r:?} outside [{:#x}, {ADDR_LIMIT:#x})",
            cfg.base
        );
    }
    let json = serde_json::to_string(&cfg).expect("a configuration serialises");
    let back: SynthConfig = serde_json::from_str(&json)
        .unwrap_or_else(|e| panic!("recorded configuration {json} does not parse: {e}"));
    assert_eq!(
        generate(&back, n),
        Some(first),
        "JSON round trip changes it"
    );
}
