//! The sorting of a chunk of records into one bucket per partition of a
//! split cachegrind simulation (see `part`), so that each simulating
//! thread reads only the records it has a share in.

use cachepart_trace::{Kind, Record};

/// The records of one slice of a chunk that one partition has a share
/// in, in trace order.
#[derive(Debug, Default)]
pub(super) struct Bucket {
    pub(super) records: Vec<Record>,
    /// The chunk indexes of the references among them that straddle
    /// partitions, in order.
    pub(super) splits: Vec<u32>,
}

impl Bucket {
    pub(super) fn with_capacity(records: usize) -> Self {
        Bucket {
            records: Vec::with_capacity(records),
            splits: Vec::new(),
        }
    }

    pub(super) fn clear(&mut self) {
        self.records.clear();
        self.splits.clear();
    }
}

/// Scatters `records` (a slice of a chunk, its first at chunk index
/// `from`) into `out`, one bucket per partition of `mask + 1`, the
/// partition bits from `shift`, data references clamped to `clamp` bytes:
/// a reference wholly in one partition goes to that one's, a reference
/// that straddles partitions to each of theirs (its index also to the
/// bucket's `splits`), an escape to every one.
pub(super) fn scatter(
    shift: u32,
    mask: u64,
    clamp: u32,
    records: &[Record],
    from: u32,
    out: &mut [Bucket],
) {
    let clamp = u64::from(clamp);
    let escape = Kind::Escape as u64;
    let ifetch = Kind::Ifetch as u64;
    for (idx, rec) in (from..).zip(records) {
        let code = rec.kind_code();
        let addr = rec.addr_unchecked();
        let size = rec.size_unchecked();
        // data references are clamped to the smallest line
        let size = if code == ifetch {
            size
        } else {
            size.min(clamp)
        };
        let last = addr.wrapping_add(size.max(1) - 1);
        let first = ((addr >> shift) & mask) as usize;
        if (addr ^ last) >> shift == 0 && code != escape {
            if let Some(b) = out.get_mut(first) {
                b.records.push(*rec);
            }
            continue;
        }
        if code == escape {
            for b in out.iter_mut() {
                b.records.push(*rec);
            }
            continue;
        }
        // the partitions of the blocks it spans, each once: blocks take
        // the partitions in turn, so its first `mask + 1` blocks name
        // every partition it has
        let last_block = last >> shift;
        let block_mask = u64::MAX >> shift;
        let mut b = addr >> shift;
        for _ in 0..out.len() {
            if let Some(bucket) = out.get_mut((b & mask) as usize) {
                bucket.records.push(*rec);
                bucket.splits.push(idx);
            }
            if b == last_block {
                break;
            }
            b = b.wrapping_add(1) & block_mask;
        }
    }
}
