//! How the cachegrind-compatible simulation splits over threads: by
//! address bits that lie inside the set index of every level.
//!
//! A cache's set index is the block address's low bits: bits
//! `line_bits .. line_bits + log2(sets)` of the byte address. An address
//! bit inside that range of I1, D1 and LL alike sends addresses that differ
//! in it to different sets of every level, so threads that own the values
//! of `k` such bits (`2^k` threads) look up disjoint sets everywhere and
//! each simulates its own lines exactly as one thread would. The bits taken
//! are the lowest shared ones, `s .. s + k` with `s` the largest line-size
//! bit count: neighbouring blocks of `2^s` bytes go to different threads,
//! which spreads the work evenly.
//!
//! A partition's blocks are aligned to `2^s` bytes, at least every level's
//! line, so a line never straddles two partitions; a reference does when
//! it crosses a `2^s`-byte boundary, at every level alike.

use crate::error::{Result, SimError};

use super::CachegrindConfig;

/// The most threads a simulation is split over.
pub const MAX_THREADS: usize = 1024;

/// The split of a cachegrind simulation over a power-of-two number of
/// threads: address bits `shift .. shift + log2(threads)` name the thread
/// that owns an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    threads: usize,
    shift: u32,
}

impl Partition {
    /// The split of `cfg` over `threads` threads; fails when `threads` is
    /// not a power of two, or when the set indexes of I1, D1 and LL share
    /// fewer than `log2(threads)` address bits (for example a level with
    /// one set shares none). `cfg` must be a geometry
    /// [`CachegrindSim::new`](super::CachegrindSim::new) accepts.
    pub fn new(cfg: &CachegrindConfig, threads: usize) -> Result<Partition> {
        let refuse = |reason: String| SimError::Threads { threads, reason };
        if !threads.is_power_of_two() {
            return Err(refuse(
                "the thread count must be a power of two (1, 2, 4, 8, ...)".into(),
            ));
        }
        if threads > MAX_THREADS {
            return Err(refuse(format!(
                "at most {MAX_THREADS} threads are supported"
            )));
        }
        let (shift, bits, ranges) = shared_bits(cfg)?;
        let want = threads.trailing_zeros();
        if want > bits {
            return Err(refuse(format!(
                "the set indexes ({ranges}) share {bits} address bit{}, enough for at most {} thread{}",
                if bits == 1 { "" } else { "s" },
                1u64 << bits,
                if bits == 0 { "" } else { "s" },
            )));
        }
        Ok(Partition { threads, shift })
    }

    /// The most threads `cfg` can be split over.
    pub fn max_threads(cfg: &CachegrindConfig) -> Result<usize> {
        let (_, bits, _) = shared_bits(cfg)?;
        Ok(1usize << bits.min(usize::BITS - 1))
    }

    /// The number of threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The lowest address bit that names the thread (the largest line
    /// size's bit count).
    pub fn shift(&self) -> u32 {
        self.shift
    }

    /// The thread that owns the line holding byte `addr`, at every level.
    pub fn owner(&self, addr: u64) -> usize {
        ((addr >> self.shift) & (self.threads as u64 - 1)) as usize
    }
}

/// The lowest address bit shared by every level's set index, how many
/// bits are shared, and each level's range in words (`I1 bits 6..12, ...`).
fn shared_bits(cfg: &CachegrindConfig) -> Result<(u32, u32, String)> {
    let mut low = 0;
    let mut high = u32::MAX;
    let mut ranges = Vec::new();
    for (level, c) in [("I1", &cfg.i1), ("D1", &cfg.d1), ("LL", &cfg.ll)] {
        let g = c
            .geometry()
            .map_err(|source| SimError::Geometry { level, source })?;
        let (from, to) = (g.line_bits(), g.line_bits() + g.sets().trailing_zeros());
        ranges.push(if from == to {
            format!("{level} has one set")
        } else {
            format!("{level} bits {from}..{to}")
        });
        low = low.max(from);
        high = high.min(to);
    }
    Ok((low, high.saturating_sub(low), ranges.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(i1: (u64, u32, u32), d1: (u64, u32, u32), ll: (u64, u32, u32)) -> CachegrindConfig {
        CachegrindConfig::lru(i1, d1, ll)
    }

    #[test]
    fn takes_the_lowest_bits_every_set_index_shares() {
        // 64 sets of 64 B lines (bits 6..12) and 2048 sets (bits 6..17)
        let c = cfg((32 << 10, 8, 64), (32 << 10, 8, 64), (2 << 20, 16, 64));
        assert_eq!(Partition::max_threads(&c).unwrap(), 64);
        let p = Partition::new(&c, 4).unwrap();
        assert_eq!(p.shift(), 6);
        assert_eq!(p.owner(0x40), 1);
        assert_eq!(p.owner(0x7f), 1);
        assert_eq!(p.owner(0xc0), 3);
        assert_eq!(p.owner(0x100), 0);
        // a 128 B LL line moves the shared range up a bit
        let c = cfg((32 << 10, 8, 64), (32 << 10, 8, 64), (2 << 20, 16, 128));
        assert_eq!(Partition::new(&c, 2).unwrap().shift(), 7);
        assert_eq!(Partition::max_threads(&c).unwrap(), 32);
    }

    #[test]
    fn refuses_what_cannot_be_split() {
        let c = cfg((32 << 10, 8, 64), (32 << 10, 8, 64), (2 << 20, 16, 64));
        for n in [0, 3, 6] {
            let e = Partition::new(&c, n).unwrap_err().to_string();
            assert!(e.contains("must be a power of two"), "{e}");
            assert!(e.contains(&format!("{n} threads")), "{e}");
        }
        let e = Partition::new(&c, 2048).unwrap_err().to_string();
        assert!(e.ends_with("at most 1024 threads are supported"), "{e}");
        let e = Partition::new(&c, 128).unwrap_err().to_string();
        assert_eq!(
            e,
            "cannot split the simulation over 128 threads: the set indexes \
             (I1 bits 6..12, D1 bits 6..12, LL bits 6..17) share 6 address bits, \
             enough for at most 64 threads"
        );
        // a fully associative I1 has one set: nothing to split by
        let fa = cfg((1024, 16, 64), (32 << 10, 8, 64), (2 << 20, 16, 64));
        assert_eq!(Partition::max_threads(&fa).unwrap(), 1);
        assert!(Partition::new(&fa, 1).is_ok());
        let e = Partition::new(&fa, 2).unwrap_err().to_string();
        assert!(e.contains("I1 has one set"), "{e}");
        assert!(
            e.ends_with("share 0 address bits, enough for at most 1 thread"),
            "{e}"
        );
    }
}
