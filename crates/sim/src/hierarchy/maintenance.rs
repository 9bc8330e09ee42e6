//! Keeping the private levels consistent with what happens outside a
//! demand access: an inclusive LLC's back-invalidations, frames handed to
//! a new owner (their lines dropped, as the kernel's zeroing does), the
//! trace's escape events and whole-hierarchy flushes.

use cachepart_trace::{Event, Record};

use crate::cache::Cache;

use super::{Hierarchy, Mode};

impl Hierarchy {
    /// Removes `block` from every private level (the LLC evicted it and is
    /// inclusive). A dirty private copy is written to memory. Returns
    /// whether any copy was present.
    pub fn back_invalidate(&mut self, block: u64) -> bool {
        let mut present = false;
        let mut dirty = false;
        for c in [&mut self.l1i, &mut self.l1d]
            .into_iter()
            .chain(self.l2.as_mut())
        {
            if let Some(d) = c.invalidate(block) {
                present = true;
                dirty |= d;
            }
        }
        self.mem.writes += u64::from(dirty);
        present
    }

    /// Drops every line of physical range `[addr, addr + bytes)` from the
    /// private levels and `llc` (a frame handed to a new owner, which the
    /// kernel zeroes first: no owner finds another's data). Dirty lines
    /// are written to memory (in write-back mode; a line dirty in two
    /// levels counts twice, as in [`Hierarchy::flush`]). Returns the lines
    /// dropped.
    #[cold]
    pub fn discard_range(&mut self, llc: &mut Cache, addr: u64, bytes: u64) -> u64 {
        let mut dropped = 0;
        let mut dirty = 0;
        for c in [&mut self.l1i, &mut self.l1d]
            .into_iter()
            .chain(self.l2.as_mut())
            .chain(std::iter::once(&mut *llc))
        {
            let g = c.geometry();
            let (first, last) = (g.block_of(addr), g.block_of(addr + bytes - 1));
            for block in first..=last {
                if let Some(d) = c.invalidate(block) {
                    dropped += 1;
                    dirty += u64::from(d);
                }
            }
        }
        let line = 1u64 << llc.geometry().line_bits();
        if let Some(l3) = llc.victim_mut() {
            for block in addr / line..=(addr + bytes - 1) / line {
                if let Some(d) = l3.invalidate(block) {
                    dropped += 1;
                    dirty += u64::from(d);
                }
            }
        }
        if self.mode == Mode::WriteBack {
            self.mem.writes += dirty;
        }
        dropped
    }

    /// An escape record.
    #[cold]
    pub(super) fn event(&mut self, llc: &mut Cache, rec: Record) {
        match rec.as_event() {
            Some(Event::InstrGap(n)) => self.instructions += n,
            Some(Event::Flush) => self.flush(llc),
            _ => {}
        }
    }

    /// Empties the private levels and `llc`, writing dirty lines to memory
    /// (in write-back mode; a line dirty in two levels counts twice).
    pub fn flush(&mut self, llc: &mut Cache) {
        let mut dirty = 0;
        for c in [&mut self.l1i, &mut self.l1d]
            .into_iter()
            .chain(self.l2.as_mut())
        {
            dirty += c.flush();
        }
        dirty += llc.flush();
        if let Some(l3) = llc.victim_mut() {
            dirty += l3.flush();
        }
        if self.mode == Mode::WriteBack {
            self.mem.writes += dirty;
        }
    }
}
