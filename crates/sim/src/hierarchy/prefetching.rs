//! The hierarchy's side of the hardware prefetchers: a first use of a
//! prefetched line, the L1 and L2 prefetchers' requests, and the fills
//! they cause below (respecting the LLC's way mask, counted as prefetches
//! at every level they reach). [`crate::prefetch`] decides what to fetch;
//! this decides where it goes.

use crate::cache::{line_frames, Cache, LineOutcome};
use crate::prefetch::{Kind as PrefetchKind, Target};

use super::Hierarchy;

impl Hierarchy {
    /// A repeated L1D hit of `block` (at byte `addr`) was the first use of
    /// a prefetched line: counted useful, and it feeds the L1 prefetchers
    /// like any other access (see [`Self::access_at_l1_prefetching`]).
    #[inline(never)]
    pub(super) fn prefetched_line_used(&mut self, llc: &mut Cache, block: u64, addr: u64) {
        if let Some(p) = self.prefetch.as_deref_mut() {
            p.useful(Target::L1);
        }
        self.prefetch_l1(llc, addr, block, (true, true));
    }

    /// The second level (the L2, or the LLC without one) served demand
    /// request `block` with `out`: the prefetch counts, then the L2
    /// prefetchers' lines.
    /// Inline: without prefetchers it is one test.
    #[inline(always)]
    pub(super) fn second_level_seen(&mut self, llc: &mut Cache, block: u64, out: &LineOutcome) {
        if self.prefetch.is_some() {
            self.second_level_prefetch(llc, block, out);
        }
    }

    /// [`Self::second_level_seen`] with prefetchers on.
    #[inline(never)]
    fn second_level_prefetch(&mut self, llc: &mut Cache, block: u64, out: &LineOutcome) {
        if let Some(p) = self.prefetch.as_deref_mut() {
            p.demand(Target::L2, out);
            self.prefetch_l2(llc, block, out.hit);
        }
    }

    /// Feeds the L1 prefetchers a demand data access and fetches the
    /// lines they ask for into the L1D (see [`crate::prefetch`]).
    pub(super) fn prefetch_l1(
        &mut self,
        llc: &mut Cache,
        addr: u64,
        block: u64,
        hit: (bool, bool),
    ) {
        let ip = self.last_ip;
        let Some(p) = self.prefetch.as_deref_mut() else {
            return;
        };
        let mut want = p.take_buffer();
        p.l1_access(ip, addr, block, hit, &mut want);
        let line_bits = self.l1d.geometry().line_bits();
        for &(b, k) in &want {
            note_crossing(llc, block, b, line_bits);
            self.prefetch_into_l1(llc, b, k);
        }
        if let Some(p) = self.prefetch.as_deref_mut() {
            p.return_buffer(want);
        }
    }

    /// The IP stride prefetcher asked for line `b` on a repeated L1D hit
    /// of demand line `block` (trained without the buffer of
    /// [`Self::prefetch_l1`]): `b`'s frame is marked if it is not
    /// `block`'s, as for every other prefetch, then `b` is fetched.
    pub(super) fn ip_stride_prefetch(&mut self, llc: &mut Cache, block: u64, b: u64) {
        note_crossing(llc, block, b, self.l1d.geometry().line_bits());
        self.prefetch_into_l1(llc, b, PrefetchKind::L1IpStride);
    }

    /// Fetches line `b`, asked for by L1 prefetcher `k`, into the L1D
    /// (and below), unless the L1D has it.
    pub(super) fn prefetch_into_l1(&mut self, llc: &mut Cache, b: u64, k: PrefetchKind) {
        if self.l1d.contains(b) {
            return;
        }
        let out = self.l1d.line(b, false, u64::MAX);
        self.l1d.mark_prefetched(b);
        if let Some(p) = self.prefetch.as_deref_mut() {
            p.issued(k);
            if let Some(v) = &out.victim {
                p.evicted(Target::L1, v);
            }
        }
        if let Some(v) = out.victim.filter(|v| v.dirty) {
            self.write_back_below(llc, v.block);
        }
        self.prefetch_below(llc, b, true);
    }

    /// Feeds the L2 prefetchers a request and fetches the lines they ask
    /// for into the L2.
    pub(super) fn prefetch_l2(&mut self, llc: &mut Cache, block: u64, hit: bool) {
        let Some(p) = self.prefetch.as_deref_mut() else {
            return;
        };
        let mut want = p.take_buffer();
        p.l2_access(block, hit, &mut want);
        let line_bits = match &self.l2 {
            Some(l2) => l2.geometry().line_bits(),
            None => llc.geometry().line_bits(),
        };
        for &(b, k) in &want {
            note_crossing(llc, block, b, line_bits);
            let present = match &self.l2 {
                Some(l2) => l2.contains(b),
                None => llc.contains(b),
            };
            if present {
                continue;
            }
            if let Some(p) = self.prefetch.as_deref_mut() {
                p.issued(k);
            }
            self.prefetch_below(llc, b, false);
        }
        if let Some(p) = self.prefetch.as_deref_mut() {
            p.return_buffer(want);
        }
    }

    /// Brings prefetched line `b` in below the L1: into the L2 (looked up
    /// first when `through_l2`, filled either way), and from the LLC or
    /// memory; no demand statistics, but memory traffic counts.
    pub(super) fn prefetch_below(&mut self, llc: &mut Cache, b: u64, through_l2: bool) {
        if let Some(l2) = &mut self.l2 {
            let out = l2.line(b, false, u64::MAX);
            if !through_l2 {
                // an L2 prefetcher's own line
                l2.mark_prefetched(b);
            }
            if let Some(v) = out.victim {
                if let Some(p) = self.prefetch.as_deref_mut() {
                    p.evicted(Target::L2, &v);
                }
                if v.dirty {
                    self.write_back_llc(llc, v.block);
                }
            }
            if out.hit && through_l2 {
                return;
            }
        }
        let out = llc.line(b, false, self.llc_mask);
        if !out.hit {
            self.prefetch_llc_miss(llc, b);
        }
        if self.l2.is_none() && !through_l2 {
            llc.mark_prefetched(b);
        }
        if let Some(v) = out.victim {
            if self.l2.is_none() {
                if let Some(p) = self.prefetch.as_deref_mut() {
                    p.evicted(Target::L2, &v);
                }
            }
            self.llc_evicted(llc, v);
        }
    }

    /// A prefetch missed the LLC for `b`: from the victim cache if it
    /// holds it (not counted as a demand L3 hit), else from memory.
    pub(super) fn prefetch_llc_miss(&mut self, llc: &mut Cache, b: u64) {
        match llc.victim_mut().map(|l3| l3.take(b)) {
            Some(Some(dirty)) => {
                if dirty {
                    llc.mark_dirty(b);
                }
            }
            _ => self.mem.reads += 1,
        }
    }
}

/// Marks in `llc`'s frame marks (if kept) the frames of prefetched line
/// `b` when they are not those of `trigger`, the demand line that caused
/// the prefetch (whose frame its owner marked when it handed the frame
/// out): a prefetch across a page boundary may bring in a line of a frame
/// no application was handed (see [`crate::cache::FrameMarks`]).
#[inline(always)]
fn note_crossing(llc: &mut Cache, trigger: u64, b: u64, line_bits: u32) {
    if let Some(m) = llc.frame_marks_mut() {
        if line_frames(b, line_bits) != line_frames(trigger, line_bits) {
            m.mark_line(b, line_bits);
        }
    }
}
