//! The qemu plugin's stream: raw little-endian 8-byte words that are
//! already [`Record`]s, read from the FIFO by a reader thread into a
//! bounded queue and checked word by word ([`Record::from_raw`]), a
//! chunk's records handed to the capture's sink (the trace writer) at
//! once. A bad word or a stream that stops inside a word is a
//! [`CaptureError::MalformedStream`] naming its byte offset.

use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::mpsc;

use cachepart_trace::{Counts, Record};

use crate::error::{CaptureError, CaptureResult};
use crate::route::Sink;

/// Bytes read from the pipe at a time.
const CHUNK: usize = 1 << 20;
/// Chunks read ahead of the writer (64 MiB at most).
const QUEUE: usize = 64;

/// Reads the plugin's raw little-endian records from `input` into `sink`
/// until end-of-file, checking each one.
///
/// A reader thread drains the pipe into a bounded queue of chunks while
/// this thread checks and compresses them: qemu then keeps running while a
/// frame is compressed instead of blocking on a full pipe (on two cores the
/// capture runs at the slower of the two rather than at their sum).
pub(crate) fn decode_raw(
    input: &mut (dyn Read + Send),
    sink: &mut Sink<'_>,
    source_name: &'static str,
) -> CaptureResult<Counts> {
    let (full_tx, full_rx) = mpsc::sync_channel::<Chunk>(QUEUE);
    let (empty_tx, empty_rx) = mpsc::channel::<Vec<u8>>();
    let mut counts = Counts::default();
    let (consumed, read) = std::thread::scope(|scope| {
        let reader = scope.spawn(move || read_chunks(input, &full_tx, &empty_rx));
        let consumed = (|| -> CaptureResult<u64> {
            let mut offset = 0u64;
            let mut records = Vec::with_capacity(CHUNK / 8);
            for chunk in full_rx {
                let words = chunk.buf.get(..chunk.len).unwrap_or_default();
                records.clear();
                for (i, word) in words.chunks_exact(8).enumerate() {
                    let raw = u64::from_le_bytes(word.try_into().expect("8-byte words"));
                    match Record::from_raw(raw) {
                        Ok(r) => records.push(r),
                        Err(e) => {
                            // the records before the bad word go on first,
                            // as they would one at a time
                            sink.push_slice(&records)?;
                            return Err(CaptureError::MalformedStream {
                                source_name,
                                offset: offset + 8 * i as u64,
                                reason: e.to_string(),
                            });
                        }
                    }
                }
                counts.add_all(&records);
                sink.push_slice(&records)?;
                offset += chunk.len as u64;
                let _ = empty_tx.send(chunk.buf);
            }
            Ok(offset)
        })();
        // on an error `full_rx` is gone: the reader stops at its next chunk
        (consumed, reader.join())
    });
    let offset = consumed?;
    let leftover = read
        .map_err(|_| CaptureError::Io {
            what: "reading the capture tool's output through",
            path: PathBuf::from("the FIFO"),
            source: io::Error::other("the reader thread panicked"),
        })?
        .map_err(|source| CaptureError::Io {
            what: "reading the qemu plugin's output through",
            path: PathBuf::from("the FIFO"),
            source,
        })?;
    if leftover != 0 {
        return Err(CaptureError::MalformedStream {
            source_name,
            offset,
            reason: format!("the stream ends {leftover} bytes into a record"),
        });
    }
    Ok(counts)
}

/// A buffer of [`CHUNK`] bytes whose first `len` (a multiple of 8) hold
/// whole words read from the pipe.
struct Chunk {
    buf: Vec<u8>,
    len: usize,
}

/// Reads `input` to its end in chunks of whole 8-byte words, sent to
/// `full` (buffers come back through `empty`); returns the bytes of an
/// incomplete last word. Stops early when `full`'s receiver is gone.
///
/// Each chunk is filled up to [`CHUNK`] bytes (the pipe gives at most its
/// own capacity, 64 KiB, a read) before it is sent, and a buffer that
/// comes back is filled again as it is: a buffer is zeroed once, when it
/// is made, not on every read.
fn read_chunks(
    input: &mut (dyn Read + Send),
    full: &mpsc::SyncSender<Chunk>,
    empty: &mpsc::Receiver<Vec<u8>>,
) -> io::Result<usize> {
    let mut carry = [0u8; 8];
    let mut carried = 0usize;
    loop {
        let mut buf = empty.try_recv().unwrap_or_else(|_| vec![0; CHUNK]);
        buf[..carried].copy_from_slice(&carry[..carried]);
        let mut have = carried;
        while have < CHUNK {
            match input.read(&mut buf[have..]) {
                Ok(0) => break,
                Ok(n) => have += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let len = have - have % 8;
        carried = have - len;
        carry[..carried].copy_from_slice(&buf[len..have]);
        if len > 0 && full.send(Chunk { buf, len }).is_err() {
            return Ok(0);
        }
        if have < CHUNK {
            // the read loop stopped at the end of the input
            return Ok(carried);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_trace::{Event, Kind};

    fn decode_bytes(bytes: &[u8]) -> CaptureResult<(Counts, Vec<Record>)> {
        let mut got = Vec::new();
        // read in odd-sized pieces, so records straddle reads
        struct Drip<'a>(&'a [u8]);
        impl Read for Drip<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(buf.len()).min(5);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let counts = decode_raw(
            &mut Drip(bytes),
            &mut |r| {
                got.push(r);
                Ok(())
            },
            "qemu plugin",
        )?;
        Ok((counts, got))
    }
    fn raw(records: &[Record]) -> Vec<u8> {
        records.iter().flat_map(|r| r.raw().to_le_bytes()).collect()
    }

    #[test]
    fn raw_records_are_decoded_across_reads() {
        let recs = [
            Record::access(Kind::Load, 0x7fff_0000_1000, 8, 3).unwrap(),
            Record::event(Event::InstrGap(1000), 0).unwrap(),
            Record::access(Kind::Store, 0x1000, 4, 0).unwrap(),
            Record::event(Event::ThreadSwitch(1), 0).unwrap(),
        ];
        let (c, w) = decode_bytes(&raw(&recs)).unwrap();
        assert_eq!((c.records, c.loads, c.stores, c.escapes), (4, 1, 1, 2));
        assert_eq!(c.instructions, 1003);
        assert_eq!(w, recs);
    }

    #[test]
    fn a_stream_of_several_chunks_keeps_every_word_in_order() {
        let n = 2 * CHUNK / 8 + 3;
        let recs: Vec<Record> = (0..n as u64)
            .map(|i| Record::access(Kind::Load, 0x1000 + 64 * i, 8, (i % 64) as u32).unwrap())
            .collect();
        let (c, w) = decode_bytes(&raw(&recs)).unwrap();
        assert_eq!((c.records, c.loads), (n as u64, n as u64));
        assert!(w == recs, "the records came back changed");
    }

    #[test]
    fn records_before_a_bad_word_reach_the_sink() {
        let good = Record::access(Kind::Store, 0x2000, 4, 1).unwrap();
        let mut bytes = raw(&[good, good]);
        bytes.extend_from_slice(&(7u64 << 48).to_le_bytes());
        bytes.extend_from_slice(&raw(&[good]));
        let mut got = Vec::new();
        let err = decode_raw(
            &mut &bytes[..],
            &mut |r| {
                got.push(r);
                Ok(())
            },
            "qemu plugin",
        )
        .unwrap_err();
        assert!(err.to_string().contains("byte offset 16"), "{err}");
        assert_eq!(got, [good, good]);
    }

    #[test]
    fn bad_words_name_their_byte_offset() {
        let mut bytes = raw(&[Record::access(Kind::Load, 0x1000, 8, 0).unwrap()]);
        bytes.extend_from_slice(&(6u64 << 48).to_le_bytes());
        let err = decode_bytes(&bytes).unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed qemu plugin output at byte offset 8: undefined kind code 6"
        );
        bytes.truncate(11);
        let err = decode_bytes(&bytes).unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed qemu plugin output at byte offset 8: the stream ends 3 bytes into a record"
        );
    }
}
