//! The demand path of a plain hierarchy: write-back mode without an L1
//! prefetcher, the settings a simulation loop checks once for a whole
//! slice instead of on every access ([`Hierarchy::access_at_plain`]).

use cachepart_trace::Record;

use super::{Hierarchy, Mode, Served};
use crate::cache::Cache;
use crate::prefetch::Prefetchers;

impl Hierarchy {
    /// Whether [`Hierarchy::access_at`] takes the plain path
    /// ([`Hierarchy::access_at_plain`]): write-back mode and no L1
    /// prefetcher on. Neither changes while records run: the mode is
    /// fixed and prefetchers are set between slices.
    pub fn is_plain(&self) -> bool {
        self.mode == Mode::WriteBack && !self.prefetch.as_deref().is_some_and(Prefetchers::l1_on)
    }

    /// [`Hierarchy::access_at`] of a plain hierarchy
    /// ([`Hierarchy::is_plain`]), without checking the mode and the
    /// prefetchers again.
    #[inline(always)]
    pub fn access_at_plain(&mut self, llc: &mut Cache, rec: Record, addr: u64) -> Served {
        debug_assert!(self.is_plain());
        if self.l1_repeat_hit::<false>(rec, addr).is_some() {
            Served::L1
        } else {
            self.write_back_at(llc, rec, addr)
        }
    }
}
