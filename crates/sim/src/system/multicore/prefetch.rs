//! Hardware prefetchers per core (see [`crate::prefetch`]): installed in
//! every core's hierarchy when a run turns them on, switched by an MSR
//! 0x1A4-style word per core, counted per core.

use super::System;
use crate::prefetch::{PrefetchStats, Prefetchers, Word};

impl System {
    /// Turns the platform's prefetchers on in every core, switched by
    /// `word` (those the platform lacks stay off).
    pub fn enable_prefetch(&mut self, word: Word) {
        let platform = self.platform.prefetchers.clone();
        let line_bits = u64::BITS - 1 - self.line.leading_zeros();
        for core in &mut self.cores {
            let h = core.pc.hierarchy_mut();
            match h.prefetchers_mut() {
                Some(p) => p.set_word(word),
                None => {
                    h.swap_prefetchers(Some(Box::new(Prefetchers::new(
                        &platform, word, line_bits,
                    ))));
                }
            }
        }
    }

    /// A new word for core `core`'s prefetchers (as a controller writing
    /// MSR 0x1A4); false when prefetching is not on or there is no such
    /// core.
    pub fn set_prefetch_word(&mut self, core: usize, word: Word) -> bool {
        match self
            .cores
            .get_mut(core)
            .and_then(|c| c.pc.hierarchy_mut().prefetchers_mut())
        {
            Some(p) => {
                p.set_word(word);
                true
            }
            None => false,
        }
    }

    /// Core `core`'s prefetch counts, when prefetching is on.
    pub fn prefetch_stats(&mut self, core: usize) -> Option<PrefetchStats> {
        self.cores
            .get_mut(core)
            .and_then(|c| c.pc.hierarchy_mut().prefetchers_mut())
            .map(|p| p.stats())
    }
}
