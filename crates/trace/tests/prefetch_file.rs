//! `Prefetch::file`: an indexed file's frames decoded ahead on several
//! threads come out as the streaming reader gives them, for any decoder
//! count: the same records in the same order, and a damaged frame's error
//! after the records of the frames before it, none of its own, ending the
//! stream.

use std::fs;
use std::path::PathBuf;
use std::sync::Arc;

use cachepart_trace::{Header, Kind, Prefetch, Reader, Record, TraceFile, Writer};

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("pf-{}-{name}", std::process::id()))
}

/// `n` records of mixed kinds in frames of `frame` records.
fn trace(n: u64, frame: u32) -> (Vec<Record>, Vec<u8>) {
    let header = Header {
        frame_records: frame,
        ..Header::default()
    };
    let recs: Vec<Record> = (0..n)
        .map(|i| {
            let k = [Kind::Ifetch, Kind::Load, Kind::Store, Kind::Modify][(i % 4) as usize];
            Record::access(k, 0x40_0000 + (i * 37) % 100_003 * 8, 8, (i % 3) as u32).unwrap()
        })
        .collect();
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    w.extend(recs.iter().copied()).unwrap();
    (recs, w.finish().unwrap().0)
}

fn open(bytes: &[u8], name: &str) -> (PathBuf, Arc<TraceFile>) {
    let path = tmp(name);
    fs::write(&path, bytes).unwrap();
    let f = Arc::new(TraceFile::open(&path).unwrap());
    (path, f)
}

/// Every record and the first error (as text) through the streaming
/// reader's read-ahead.
fn through_reader(bytes: &[u8]) -> (Vec<Record>, Option<String>) {
    let p = Prefetch::reader(Reader::new(std::io::Cursor::new(bytes.to_vec())).unwrap()).unwrap();
    collect(p)
}

fn collect(mut p: Prefetch) -> (Vec<Record>, Option<String>) {
    let mut got = Vec::new();
    loop {
        match p.take_chunk() {
            Ok(Some(c)) => got.extend_from_slice(c),
            Ok(None) => return (got, None),
            Err(e) => {
                // the stream ends at its first error
                assert!(matches!(p.take_chunk(), Ok(None)));
                return (got, Some(e.to_string()));
            }
        }
    }
}

#[test]
fn frames_come_out_in_order_for_any_decoder_count() {
    for (n, frame) in [(10_007u64, 1000u32), (3, 1000), (4000, 1000), (1, 1)] {
        let (recs, bytes) = trace(n, frame);
        let (path, f) = open(&bytes, &format!("order-{n}-{frame}"));
        for decoders in [1, 2, 3, 5, 16] {
            let (got, err) = collect(Prefetch::file(f.clone(), decoders).unwrap());
            assert_eq!(err, None);
            assert_eq!(
                got, recs,
                "{n} records, frames of {frame}, {decoders} decoders"
            );
            // the iterator and `fill` see the same stream
            let it: Vec<Record> = Prefetch::file(f.clone(), decoders)
                .unwrap()
                .map(|r| r.unwrap())
                .collect();
            assert_eq!(it, recs);
            let mut p = Prefetch::file(f.clone(), decoders).unwrap();
            let mut filled = Vec::new();
            while p.fill(&mut filled, 777).unwrap() > 0 {}
            assert_eq!(filled, recs);
        }
        fs::remove_file(path).unwrap();
    }
}

#[test]
fn an_empty_trace_ends_at_once() {
    let (_, bytes) = trace(0, 1000);
    let (path, f) = open(&bytes, "empty");
    for decoders in [1, 3] {
        assert_eq!(
            collect(Prefetch::file(f.clone(), decoders).unwrap()),
            (vec![], None)
        );
    }
    fs::remove_file(path).unwrap();
}

/// A damaged frame body: the records of the frames before it, then the
/// streaming reader's error, for every decoder count.
#[test]
fn a_damaged_frame_gives_the_readers_error_after_the_frames_before_it() {
    let (recs, bytes) = trace(10_000, 1000);
    let f = {
        let (path, f) = open(&bytes, "index");
        fs::remove_file(path).unwrap();
        f
    };
    for bad in [0, 1, 4, 9] {
        let at = f.frames()[bad].offset as usize;
        let mut damaged = bytes.clone();
        // inside the zstd frame, past the 16-byte frame header
        for b in &mut damaged[at + 24..at + 40] {
            *b ^= 0x5a;
        }
        let (want_recs, want_err) = through_reader(&damaged);
        assert!(
            want_err.is_some(),
            "frame {bad}: the damage was not noticed"
        );
        assert_eq!(want_recs[..], recs[..bad * 1000]);
        let (path, df) = open(&damaged, &format!("bad-{bad}"));
        for decoders in [1, 2, 3, 4] {
            let got = collect(Prefetch::file(df.clone(), decoders).unwrap());
            assert_eq!(got.0, want_recs, "frame {bad}, {decoders} decoders");
            assert_eq!(got.1, want_err, "frame {bad}, {decoders} decoders");
        }
        fs::remove_file(path).unwrap();
    }
}

/// Dropping the stream part-way stops every decoding thread.
#[test]
fn dropping_part_way_stops_the_threads() {
    let (recs, bytes) = trace(50_000, 1000);
    let (path, f) = open(&bytes, "drop");
    for decoders in [1, 4] {
        let mut p = Prefetch::file(f.clone(), decoders).unwrap();
        let first = p.take_chunk().unwrap().unwrap().to_vec();
        assert_eq!(first[..], recs[..1000]);
        drop(p); // joins the threads: a hang here is the failure
    }
    // the file is no longer shared with any thread
    assert_eq!(Arc::strong_count(&f), 1);
    fs::remove_file(path).unwrap();
}
