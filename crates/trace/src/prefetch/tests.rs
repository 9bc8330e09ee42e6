use super::*;
use crate::error::TraceError;
use crate::record::Kind;
use crate::writer::Writer;
use crate::Header;

fn recs(n: u64) -> Vec<Record> {
    (0..n)
        .map(|i| Record::access(Kind::Load, 0x1000 + i * 8, 8, (i % 5) as u32).unwrap())
        .collect()
}

fn trace(records: &[Record], frame_records: u32) -> Vec<u8> {
    let header = Header {
        frame_records,
        ..Header::default()
    };
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    w.extend(records.iter().copied()).unwrap();
    w.finish().unwrap().0
}

#[test]
fn take_chunk_hands_over_every_record_once_in_order() {
    let all = recs(10_007);
    let bytes = trace(&all, 1000);
    for (chunk, depth) in [(1, 1), (7, 2), (4096, 4)] {
        let mut p = Prefetch::reader_with(
            Reader::new(std::io::Cursor::new(bytes.clone())).unwrap(),
            chunk,
            depth,
        )
        .unwrap();
        let mut got = Vec::new();
        // a record taken one by one first, then the rest chunk by chunk
        got.push(p.next().unwrap().unwrap());
        while let Some(c) = p.take_chunk().unwrap() {
            // a frame of at least a chunk's records comes whole
            assert!(!c.is_empty() && c.len() <= chunk.max(1000));
            got.extend_from_slice(c);
        }
        assert_eq!(got, all, "chunk {chunk}, depth {depth}");
        assert!(p.take_chunk().unwrap().is_none());
    }
}

#[test]
fn reader_records_come_out_in_order_across_chunks_and_frames() {
    let all = recs(10_007);
    let bytes = trace(&all, 1000);
    for (chunk, depth) in [(1, 1), (7, 2), (1000, 3), (4096, 4), (1 << 16, 4)] {
        let p = Prefetch::reader_with(
            Reader::new(std::io::Cursor::new(bytes.clone())).unwrap(),
            chunk,
            depth,
        )
        .unwrap();
        let got: Vec<Record> = p.map(|r| r.unwrap()).collect();
        assert_eq!(got, all, "chunk {chunk} depth {depth}");
    }
}

/// A `Read` that counts the bytes taken from it.
struct Counted {
    inner: std::io::Cursor<Vec<u8>>,
    taken: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.taken.fetch_add(n, std::sync::atomic::Ordering::SeqCst);
        Ok(n)
    }
}

/// Frames larger than the chunks count whole against the depth: with
/// 4 chunks' records fitting in one frame, a consumer that stops after
/// its first frame lets the thread read at most three frames (the one
/// consumed, one waiting, one decoded and held), not six.
#[test]
fn whole_frames_read_ahead_at_most_one_waiting() {
    let frame = 4096u32;
    let all = recs(u64::from(frame) * 12);
    let bytes = trace(&all, frame);
    let frame_bytes = (bytes.len() - 1) / 12;
    let taken = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = Counted {
        inner: std::io::Cursor::new(bytes),
        taken: taken.clone(),
    };
    // 4 chunks of 256 records: 1,024 records, a quarter of a frame
    let mut p = Prefetch::reader_with(Reader::new(counted).unwrap(), 256, 4).unwrap();
    let first = p.take_chunk().unwrap().unwrap().to_vec();
    assert_eq!(first[..], all[..frame as usize]);
    // let the thread run as far ahead as it may
    let mut last = 0;
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(10));
        let now = taken.load(std::sync::atomic::Ordering::SeqCst);
        if now == last {
            break;
        }
        last = now;
    }
    let frames_read = taken.load(std::sync::atomic::Ordering::SeqCst) / frame_bytes;
    assert!(frames_read <= 3, "read {frames_read} frames ahead");
    let rest: Vec<Record> = p.map(|r| r.unwrap()).collect();
    assert_eq!(rest[..], all[frame as usize..]);
}

#[test]
fn fill_gives_batches_then_zero_at_the_end() {
    let all = recs(2_500);
    let bytes = trace(&all, 300);
    let mut p =
        Prefetch::reader_with(Reader::new(std::io::Cursor::new(bytes)).unwrap(), 700, 2).unwrap();
    let mut got = Vec::new();
    let mut sizes = Vec::new();
    loop {
        let n = p.fill(&mut got, 1000).unwrap();
        if n == 0 {
            break;
        }
        sizes.push(n);
    }
    assert_eq!(sizes, vec![1000, 1000, 500]);
    assert_eq!(got, all);
    assert_eq!(p.fill(&mut got, 10).unwrap(), 0);
}

#[test]
fn errors_come_at_the_same_position_with_the_same_offset() {
    let all = recs(5_000);
    let bytes = trace(&all, 1000);
    // Cut inside the third frame: the synchronous reader's sequence of
    // items is the reference.
    let cut = bytes[..bytes.len() * 3 / 5].to_vec();
    let sync: Vec<String> = Reader::new(&cut[..])
        .unwrap()
        .map(|r| format!("{r:?}"))
        .collect();
    assert!(sync.last().unwrap().starts_with("Err"), "{:?}", sync.last());
    for (chunk, depth) in [(1, 1), (333, 2), (1 << 16, 4)] {
        let p = Prefetch::reader_with(
            Reader::new(std::io::Cursor::new(cut.clone())).unwrap(),
            chunk,
            depth,
        )
        .unwrap();
        let got: Vec<String> = p.map(|r| format!("{r:?}")).collect();
        assert_eq!(got, sync, "chunk {chunk} depth {depth}");
    }
    // fill: the records before the error are appended, then the error.
    let mut p =
        Prefetch::reader_with(Reader::new(std::io::Cursor::new(cut)).unwrap(), 64, 1).unwrap();
    let mut got = Vec::new();
    let e = loop {
        match p.fill(&mut got, 1000) {
            Ok(0) => panic!("no error"),
            Ok(_) => {}
            Err(e) => break e,
        }
    };
    assert_eq!(got.len(), sync.len() - 1);
    assert_eq!(format!("{:?}", Err::<Record, _>(e)), *sync.last().unwrap());
    assert!(matches!(p.fill(&mut got, 10), Ok(0)));
}

#[test]
fn iterator_items_pass_through_errors_included() {
    let items: Vec<Result<Record>> = (0..50u64)
        .map(|i| {
            if i % 17 == 16 {
                Err(TraceError::Truncated {
                    what: "test",
                    offset: i,
                })
            } else {
                Ok(Record::access(Kind::Store, i * 64, 4, 0).unwrap())
            }
        })
        .collect();
    let want: Vec<String> = items.iter().map(|r| format!("{r:?}")).collect();
    let p = Prefetch::iter_with(items.into_iter(), 5, 1).unwrap();
    let got: Vec<String> = p.map(|r| format!("{r:?}")).collect();
    assert_eq!(got, want);
}

#[test]
fn dropping_early_stops_the_thread() {
    // An endless source: dropping the consumer must still end the
    // thread (the drop joins it, so this returns).
    let r = Record::access(Kind::Load, 64, 8, 0).unwrap();
    let endless = std::iter::repeat(r).map(Ok);
    let mut p = Prefetch::iter_with(endless, 128, 2).unwrap();
    let mut buf = Vec::new();
    assert_eq!(p.fill(&mut buf, 1000).unwrap(), 1000);
    drop(p);
}

#[test]
fn swap_chunk_hands_over_whole_chunks_then_zero_at_the_end() {
    let all = recs(2_500);
    let bytes = trace(&all, 300);
    let mut p =
        Prefetch::reader_with(Reader::new(std::io::Cursor::new(bytes)).unwrap(), 700, 2).unwrap();
    let mut got = Vec::new();
    let mut buf = vec![Record::access(Kind::Load, 8, 8, 0).unwrap(); 5];
    loop {
        let n = p.swap_chunk(&mut buf).unwrap();
        assert_eq!(n, buf.len());
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf);
    }
    assert_eq!(got, all);
    assert_eq!(p.swap_chunk(&mut buf).unwrap(), 0);
    assert!(buf.is_empty());
}

#[test]
fn swap_chunk_after_fill_gives_the_rest_of_the_chunk() {
    let all = recs(2_500);
    let bytes = trace(&all, 300);
    let mut p =
        Prefetch::reader_with(Reader::new(std::io::Cursor::new(bytes)).unwrap(), 700, 2).unwrap();
    let mut got = Vec::new();
    assert_eq!(p.fill(&mut got, 10).unwrap(), 10);
    let mut buf = Vec::new();
    while p.swap_chunk(&mut buf).unwrap() > 0 {
        got.extend_from_slice(&buf);
    }
    assert_eq!(got, all);
}
