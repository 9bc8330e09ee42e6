//! L2 adjacent-line prefetcher: a request that misses the L2 also fetches
//! the other line of its 128-byte-aligned pair into the L2.

/// The adjacent-line prefetcher (stateless).
#[derive(Clone, Debug, Default)]
pub struct Adjacent;

impl Adjacent {
    /// The line to prefetch after an L2 request for `block`, if any.
    pub fn on_access(&mut self, block: u64, miss: bool) -> Option<u64> {
        miss.then_some(block ^ 1)
    }
}
