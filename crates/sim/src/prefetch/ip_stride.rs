//! L1 DCU IP-based stride prefetcher: per load instruction (its address,
//! the instruction pointer), the distance between its successive data
//! addresses; once the same stride is seen twice in a row, the line at
//! the next address (address + stride) is prefetched into the L1D.
//! Strides up to 2 KiB either way are followed, as Intel documents. A
//! table of 256 entries indexed by a hash of the IP's low bits, each
//! tagged with its IP.
//!
//! A trace records the IP of a data access only when it has instruction
//! fetch records (lackey traces, or `trace capture --tool qemu --ifetch`):
//! the data access belongs to the fetch before it. Without fetch records
//! this prefetcher sees no IP and issues nothing.

const ENTRIES: usize = 256;
const MAX_STRIDE: i64 = 2048;

/// One load instruction's history; an entry whose `ip` is [`NO_IP`] is
/// empty (no instruction sits at the last byte of the address space).
#[derive(Clone, Copy, Debug)]
struct Entry {
    ip: u64,
    last: u64,
    stride: i64,
}

const NO_IP: u64 = u64::MAX;
const EMPTY: Entry = Entry {
    ip: NO_IP,
    last: 0,
    stride: 0,
};

/// Host bytes of one prefetcher's table.
pub(super) const TABLE_BYTES: usize = std::mem::size_of::<[Entry; ENTRIES]>();

/// The IP stride prefetcher.
#[derive(Clone, Debug)]
pub struct IpStride {
    table: Box<[Entry; ENTRIES]>,
    line_bits: u32,
}

impl IpStride {
    /// A prefetcher for lines of `1 << line_bits` bytes.
    pub fn new(line_bits: u32) -> Self {
        IpStride {
            table: Box::new([EMPTY; ENTRIES]),
            line_bits,
        }
    }

    /// The line to prefetch after the load at `ip` read `addr`, if any.
    #[inline]
    pub fn on_access(&mut self, ip: u64, addr: u64) -> Option<u64> {
        let slot = ((ip >> 2) ^ (ip >> 10)) as usize % ENTRIES;
        let e = &mut self.table[slot];
        if e.ip != ip {
            *e = Entry {
                ip,
                last: addr,
                stride: 0,
            };
            return None;
        }
        let stride = addr.wrapping_sub(e.last) as i64;
        let confident = stride != 0 && stride == e.stride && stride.abs() <= MAX_STRIDE;
        e.stride = stride;
        e.last = addr;
        if !confident {
            return None;
        }
        let next = addr.wrapping_add(stride as u64) >> self.line_bits;
        (next != addr >> self.line_bits).then_some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constant_stride_is_followed_after_two_equal_steps() {
        let mut p = IpStride::new(6);
        assert_eq!(p.on_access(0x400, 0x1000), None);
        assert_eq!(p.on_access(0x400, 0x1100), None); // first stride seen
        assert_eq!(p.on_access(0x400, 0x1200), Some(0x1300 >> 6));
        // another instruction's accesses do not disturb it
        assert_eq!(p.on_access(0x404, 0x9000), None);
        assert_eq!(p.on_access(0x400, 0x1300), Some(0x1400 >> 6));
        // a stride beyond 2 KiB is not followed
        let mut q = IpStride::new(6);
        for k in 0..5u64 {
            assert_eq!(q.on_access(0x500, k * 4096), None);
        }
    }
}
