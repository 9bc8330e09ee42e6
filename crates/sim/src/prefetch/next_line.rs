//! L1 DCU next-line prefetcher (Intel: "fetches the next cache line into
//! the L1 data cache" on ascending accesses to recently loaded data): a
//! load that misses the L1D, or that is the first to use a line this
//! prefetcher brought in, fetches the next line into the L1D too, so a
//! sequential sweep keeps one line ahead.

/// The next-line prefetcher (stateless).
#[derive(Clone, Debug, Default)]
pub struct NextLine;

impl NextLine {
    /// The line to prefetch after a demand access to `block` that missed
    /// or first used a prefetched line (`trigger`), if any.
    pub fn on_access(&mut self, block: u64, trigger: bool) -> Option<u64> {
        trigger.then(|| block.wrapping_add(1))
    }
}
