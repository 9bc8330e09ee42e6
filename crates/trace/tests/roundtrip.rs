//! Write -> read round trips of the binary format, seeking and parallel
//! decoding, across frame boundaries and with escape records.

use std::path::PathBuf;

use cachepart_trace::{
    Event, FrameScratch, Header, Kind, Reader, Record, RecordSink, TraceFile, Writer,
};
use proptest::prelude::*;

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("rt-{}-{name}", std::process::id()))
}

fn any_record() -> impl Strategy<Value = Record> {
    let access = (
        prop_oneof![
            Just(Kind::Load),
            Just(Kind::Store),
            Just(Kind::Ifetch),
            Just(Kind::Modify)
        ],
        prop_oneof![
            0u64..1 << 47,
            (0u64..1 << 20).prop_map(|a| 0x7fff_0000_0000 + a),
            (0u64..4096).prop_map(|a| 0xffff_ffff_ff60_0000 + a),
        ],
        1u32..=127,
        0u32..=63,
    )
        .prop_map(|(k, a, s, g)| Record::access(k, a, s, g).unwrap());
    let event = (
        prop_oneof![
            (0u64..1 << 48).prop_map(Event::InstrGap),
            (0u64..1 << 16).prop_map(Event::ThreadSwitch),
            (0u64..8).prop_map(Event::RoiBegin),
            (0u64..8).prop_map(Event::RoiEnd),
            (0u64..1 << 47).prop_map(Event::Mmap),
            (0u64..1 << 40).prop_map(Event::Length),
            (0u64..1 << 47).prop_map(Event::Brk),
            Just(Event::Flush),
        ],
        0u32..=63,
    )
        .prop_map(|(e, g)| Record::event(e, g).unwrap());
    prop_oneof![8 => access, 1 => event]
}

fn write(records: &[Record], frame_records: u32) -> Vec<u8> {
    let header = Header {
        frame_records,
        ..Header::default()
    }
    .with_meta("command", "test");
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    w.extend(records.iter().copied()).unwrap();
    let (bytes, summary) = w.finish().unwrap();
    assert_eq!(summary.records, records.len() as u64);
    assert_eq!(summary.bytes, bytes.len() as u64);
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn stream_round_trip(records in prop::collection::vec(any_record(), 0..600), frame in 1u32..100) {
        let bytes = write(&records, frame);
        let r = Reader::new(&bytes[..]).unwrap();
        prop_assert_eq!(r.header().get("command"), Some("test"));
        let back: Vec<Record> = r.collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(back, records);
    }

    #[test]
    fn seek_and_parallel_match_sequential(
        records in prop::collection::vec(any_record(), 1..600),
        frame in 1u32..64,
        at in any::<prop::sample::Index>(),
    ) {
        let path = tmp(&format!("seek-{frame}-{}", records.len()));
        std::fs::write(&path, write(&records, frame)).unwrap();
        let f = TraceFile::open(&path).unwrap();
        prop_assert_eq!(f.records(), records.len() as u64);
        prop_assert_eq!(f.frames().len(), records.len().div_ceil(frame as usize));
        let n = at.index(records.len());
        let tail: Vec<Record> = f.records_from(n as u64).unwrap().collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(&tail[..], &records[n..]);
        prop_assert_eq!(f.read_all_parallel().unwrap(), records.clone());
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn frames_decoded_into_a_sink_equal_read_frame(
        records in prop::collection::vec(any_record(), 1..600),
        frame in 1u32..64,
    ) {
        let path = tmp(&format!("sink-{frame}-{}", records.len()));
        std::fs::write(&path, write(&records, frame)).unwrap();
        let f = TraceFile::open(&path).unwrap();
        // one scratch for every frame, frames out of order
        let mut scratch = FrameScratch::new().unwrap();
        for i in (0..f.frames().len()).rev() {
            let mut sink = Counted::default();
            f.decode_frame(i, &mut scratch, &mut sink).unwrap();
            prop_assert_eq!(&sink.reserved, &[f.frames()[i].records as usize]);
            prop_assert_eq!(sink.records, f.read_frame(i).unwrap());
        }
        std::fs::remove_file(&path).unwrap();
    }
}

/// A sink that notes its `reserve` calls.
#[derive(Default)]
struct Counted {
    reserved: Vec<usize>,
    records: Vec<Record>,
}

impl RecordSink for Counted {
    fn reserve(&mut self, records: usize) {
        self.reserved.push(records);
    }

    fn push(&mut self, record: Record) {
        self.records.push(record);
    }
}

#[test]
fn a_bad_frame_fails_decode_frame_as_read_frame() {
    let records: Vec<Record> = (0..1000u64)
        .map(|i| Record::access(Kind::Load, i * 64, 8, (i % 64) as u32).unwrap())
        .collect();
    let mut bytes = write(&records, 100);
    let path = tmp("bad-sink");
    std::fs::write(&path, &bytes).unwrap();
    let at = TraceFile::open(&path).unwrap().frames()[4].offset as usize;
    // a byte inside frame 4's compressed body
    bytes[at + 20] ^= 0x55;
    std::fs::write(&path, &bytes).unwrap();
    let f = TraceFile::open(&path).unwrap();
    let want = f.read_frame(4).unwrap_err().to_string();
    let mut scratch = FrameScratch::new().unwrap();
    let mut sink = Vec::new();
    let got = f.decode_frame(4, &mut scratch, &mut sink).unwrap_err();
    assert_eq!(got.to_string(), want);
    // the scratch goes on with the next frame
    sink.clear();
    f.decode_frame(5, &mut scratch, &mut sink).unwrap();
    assert_eq!(sink, &records[500..600]);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn seek_edges() {
    let records: Vec<Record> = (0..1000u64)
        .map(|i| Record::access(Kind::Load, i * 64, 8, (i % 64) as u32).unwrap())
        .collect();
    let path = tmp("edges");
    std::fs::write(&path, write(&records, 100)).unwrap();
    let f = TraceFile::open(&path).unwrap();
    assert_eq!(f.frame_of(0).unwrap(), 0);
    assert_eq!(f.frame_of(99).unwrap(), 0);
    assert_eq!(f.frame_of(100).unwrap(), 1);
    assert_eq!(f.frame_of(999).unwrap(), 9);
    assert_eq!(f.records_from(1000).unwrap().count(), 0);
    let err = f.records_from(1001).err().unwrap();
    assert_eq!(
        err.to_string(),
        "record 1001 is past the end of the trace (1000 records)"
    );
    assert_eq!(f.read_frame(3).unwrap(), &records[300..400]);
    let first = f.records_from(250).unwrap().next().unwrap().unwrap();
    assert_eq!(first, records[250]);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn empty_trace_round_trips() {
    let bytes = write(&[], 10);
    assert_eq!(Reader::new(&bytes[..]).unwrap().count(), 0);
    let path = tmp("empty");
    std::fs::write(&path, &bytes).unwrap();
    let f = TraceFile::open(&path).unwrap();
    assert_eq!(f.records(), 0);
    assert!(f.read_all_parallel().unwrap().is_empty());
    std::fs::remove_file(&path).unwrap();
}
