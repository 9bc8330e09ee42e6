//! The qemu plugin's stream: raw little-endian 8-byte words that are
//! already [`Record`]s, read from the FIFO by a reader thread into a
//! bounded queue and checked word by word ([`Record::from_raw`]) into the
//! capture's sink (the trace writer). A bad word or a stream that stops inside a word is a
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
    let (full_tx, full_rx) = mpsc::sync_channel::<Vec<u8>>(QUEUE);
    let (empty_tx, empty_rx) = mpsc::channel::<Vec<u8>>();
    let mut counts = Counts::default();
    let (consumed, read) = std::thread::scope(|scope| {
        let reader = scope.spawn(move || read_chunks(input, &full_tx, &empty_rx));
        let consumed = (|| -> CaptureResult<u64> {
            let mut offset = 0u64;
            for chunk in full_rx {
                for (i, word) in chunk.chunks_exact(8).enumerate() {
                    let mut bytes = [0u8; 8];
                    bytes.copy_from_slice(word);
                    let r = Record::from_raw(u64::from_le_bytes(bytes)).map_err(|e| {
                        CaptureError::MalformedStream {
                            source_name,
                            offset: offset + 8 * i as u64,
                            reason: e.to_string(),
                        }
                    })?;
                    counts.add(r);
                    sink(r)?;
                }
                offset += chunk.len() as u64;
                let _ = empty_tx.send(chunk);
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

/// Reads `input` to its end in chunks of whole 8-byte words, sent to
/// `full` (buffers come back through `empty`); returns the bytes of an
/// incomplete last word. Stops early when `full`'s receiver is gone.
fn read_chunks(
    input: &mut (dyn Read + Send),
    full: &mpsc::SyncSender<Vec<u8>>,
    empty: &mpsc::Receiver<Vec<u8>>,
) -> io::Result<usize> {
    let mut carry = [0u8; 8];
    let mut carried = 0usize;
    loop {
        let mut buf = empty.try_recv().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(&carry[..carried]);
        let start = buf.len();
        buf.resize(CHUNK, 0);
        let n = loop {
            match input.read(&mut buf[start..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => break r?,
            }
        };
        if n == 0 {
            return Ok(carried);
        }
        let have = start + n;
        let whole = have - have % 8;
        carried = have - whole;
        carry[..carried].copy_from_slice(&buf[whole..have]);
        buf.truncate(whole);
        if !buf.is_empty() && full.send(buf).is_err() {
            return Ok(0);
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
