//! Where a frame's records go as they are decoded ([`RecordSink`]): a
//! vector, or a consumer that puts each record where it is needed (a
//! split simulation's per-thread buckets, say), so that the records take
//! no second pass after decoding.

use crate::record::Record;

/// Takes a frame's records in trace order, as
/// [`TraceFile::decode_frame`](crate::TraceFile::decode_frame) decodes
/// them: a block at a time ([`RecordSink::push_slice`]) or one by one. On
/// an error in the frame, the records before it have been pushed.
pub trait RecordSink {
    /// Called once per frame, before its `records` records are pushed.
    fn reserve(&mut self, records: usize);
    /// The next record.
    fn push(&mut self, record: Record);
    /// The next records, in order: as many [`RecordSink::push`]es (the
    /// frame decoder hands over its records a block at a time).
    #[inline]
    fn push_slice(&mut self, records: &[Record]) {
        for &r in records {
            self.push(r);
        }
    }
}

impl RecordSink for Vec<Record> {
    #[inline]
    fn reserve(&mut self, records: usize) {
        Vec::reserve(self, records);
    }

    #[inline(always)]
    fn push(&mut self, record: Record) {
        Vec::push(self, record);
    }

    #[inline]
    fn push_slice(&mut self, records: &[Record]) {
        self.extend_from_slice(records);
    }
}
