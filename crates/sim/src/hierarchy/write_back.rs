//! The write-back, write-allocate demand path: an access looked up in its
//! first level, a miss fetched from L2 and the LLC (or the victim cache
//! below it, or memory), dirty victims written back a level down, and the
//! LLC's evictions (into the victim cache, to memory, back-invalidated
//! above an inclusive LLC).

use cachepart_trace::{Kind, Record};

use super::{Hierarchy, Inclusion, Served};
use crate::cache::{Cache, LineOutcome, Victim};
use crate::prefetch::Target;
use crate::stats::AccessKind;

impl Hierarchy {
    /// Write-back, write-allocate rules.
    pub(super) fn write_back(&mut self, llc: &mut Cache, rec: Record) -> Served {
        self.write_back_at(llc, rec, rec.addr_unchecked())
    }

    /// [`Self::write_back`] of record `rec` at address `addr`.
    pub(super) fn write_back_at(&mut self, llc: &mut Cache, rec: Record, addr: u64) -> Served {
        self.instructions += u64::from(rec.gap());
        let Some((kind, write, instr)) = write_back_kind(rec) else {
            self.event(llc, rec);
            return Served::L1;
        };
        self.instructions += u64::from(instr);
        if instr {
            self.last_ip = Some(addr);
        }
        let l1 = if instr { &self.l1i } else { &self.l1d };
        let bits = l1.geometry().line_bits();
        let first = addr >> bits;
        let last = addr.wrapping_add(rec.size_unchecked() - 1) >> bits;
        let mut served = Served::L1;
        let mut b = first;
        loop {
            let l1 = if instr { &mut self.l1i } else { &mut self.l1d };
            let out = l1.line(b, write, u64::MAX);
            served = served.max(self.after_l1_lookup::<false>(llc, addr, b, kind, instr, &out));
            if b == last {
                break;
            }
            b = b.wrapping_add(1);
        }
        let l1 = if instr { &mut self.l1i } else { &mut self.l1d };
        l1.record(kind, served != Served::L1);
        served
    }

    /// The steps after the first-level lookup `out` of line `block` of an
    /// access at `addr` of `kind` (`instr`: to the L1I): a miss fetched
    /// from below (`INLINE_FETCH`: [`Self::fetch_below_inline`], else the
    /// call), a dirty victim written back a level down, and the L1 demand
    /// shown to the prefetchers. Returns the level that served the line.
    #[inline(always)]
    pub(super) fn after_l1_lookup<const INLINE_FETCH: bool>(
        &mut self,
        llc: &mut Cache,
        addr: u64,
        block: u64,
        kind: AccessKind,
        instr: bool,
        out: &LineOutcome,
    ) -> Served {
        let served = if out.hit {
            Served::L1
        } else if INLINE_FETCH {
            self.fetch_below_inline(llc, block, kind)
        } else {
            self.fetch_below(llc, block, kind)
        };
        if let Some(v) = out.victim {
            if v.dirty {
                self.write_back_below(llc, v.block);
            }
        }
        if !instr {
            if let Some(p) = self.prefetch.as_deref_mut() {
                p.demand(Target::L1, out);
                self.prefetch_l1(llc, addr, block, (out.hit, out.first_use));
            }
        }
        served
    }

    /// A first-level miss of `block`: fetch it from L2 or the LLC; returns
    /// the level that had it.
    #[inline(never)]
    pub(super) fn fetch_below(&mut self, llc: &mut Cache, block: u64, kind: AccessKind) -> Served {
        self.fetch_below_inline(llc, block, kind)
    }

    /// [`Self::fetch_below`], inline in the plain path's one-line access.
    #[inline(always)]
    pub(super) fn fetch_below_inline(
        &mut self,
        llc: &mut Cache,
        block: u64,
        kind: AccessKind,
    ) -> Served {
        if let Some(l2) = &mut self.l2 {
            let out = l2.line(block, false, u64::MAX);
            l2.record(kind, !out.hit);
            if let Some(v) = out.victim.filter(|v| v.dirty) {
                self.write_back_llc_inline(llc, v.block);
            }
            self.second_level_seen(llc, block, &out);
            if out.hit {
                return Served::L2;
            }
        }
        if let Some(u) = self.umon.as_deref_mut() {
            u.access(block);
        }
        let (served, out) = self.fetch_from_llc(llc, block, kind);
        // Without a private L2 the LLC is the second level (the Xeon
        // 5160's shared L2): the L2 prefetchers watch it and fill it.
        if self.l2.is_none() {
            self.second_level_seen(llc, block, &out);
        }
        served
    }

    /// The shared part of a fetch: `block`'s lookup in the LLC (filled on
    /// a miss, from the victim cache below or memory), its counts, and
    /// the LLC's victim, if any, sent on. Inline, except in a build with
    /// `--cfg cachepart_split_llc`, which keeps it (and
    /// [`Self::write_back_llc_inline`]) out of line so that a profile
    /// gives the LLC's share of the simulating thread apart
    /// (`scripts/bench/llc_share.sh`).
    #[cfg_attr(cachepart_split_llc, inline(never))]
    #[cfg_attr(not(cachepart_split_llc), inline(always))]
    fn fetch_from_llc(
        &mut self,
        llc: &mut Cache,
        block: u64,
        kind: AccessKind,
    ) -> (Served, LineOutcome) {
        let out = llc.line(block, false, self.llc_mask);
        llc.record(kind, !out.hit);
        self.llc.record(kind, !out.hit);
        let served = if out.hit {
            Served::Llc
        } else {
            self.llc_miss(llc, block)
        };
        if let Some(v) = out.victim {
            self.llc_evicted(llc, v);
        }
        (served, out)
    }

    /// LLC line `block` missed (and was filled): from the victim cache
    /// below the LLC if it holds it (removed there; the LLC's copy is
    /// dirty if the L3's was), else from memory.
    #[inline(always)]
    pub(super) fn llc_miss(&mut self, llc: &mut Cache, block: u64) -> Served {
        let Some(l3) = llc.victim_mut() else {
            self.mem.reads += 1;
            return Served::Memory;
        };
        match l3.take(block) {
            Some(dirty) => {
                self.l3.hits += 1;
                if dirty {
                    llc.mark_dirty(block);
                }
                Served::L3
            }
            None => {
                self.l3.misses += 1;
                self.mem.reads += 1;
                Served::Memory
            }
        }
    }

    /// A dirty first-level victim goes to L2, or to the LLC without one.
    /// With an inclusive LLC, a victim the LLC dropped meanwhile (while
    /// fetching the line that replaced it) goes straight to memory, so no
    /// private level holds a line the LLC lacks.
    #[inline(always)]
    pub(super) fn write_back_below(&mut self, llc: &mut Cache, block: u64) {
        if self.inclusion == Inclusion::Inclusive && !llc.contains(block) {
            self.mem.writes += 1;
            return;
        }
        match &mut self.l2 {
            Some(l2) => {
                if let Some(v) = l2.write_back(block, u64::MAX).filter(|v| v.dirty) {
                    self.write_back_llc(llc, v.block);
                }
            }
            None => self.write_back_llc(llc, block),
        }
    }

    pub(super) fn write_back_llc(&mut self, llc: &mut Cache, block: u64) {
        self.write_back_llc_inline(llc, block);
    }

    /// [`Self::write_back_llc`], inline (out of line in a build with
    /// `--cfg cachepart_split_llc`, as [`Self::fetch_from_llc`]).
    #[cfg_attr(cachepart_split_llc, inline(never))]
    #[cfg_attr(not(cachepart_split_llc), inline(always))]
    pub(super) fn write_back_llc_inline(&mut self, llc: &mut Cache, block: u64) {
        self.llc.writebacks_in += 1;
        let before = llc.stats().writeback_misses;
        let victim = llc.write_back(block, self.llc_mask);
        let missed = llc.stats().writeback_misses - before;
        self.llc.writeback_misses += missed;
        if missed > 0 {
            // the LLC holds the newer copy now: the L3 keeps none
            if let Some(l3) = llc.victim_mut() {
                l3.invalidate(block);
            }
        }
        if let Some(v) = victim {
            self.llc_evicted(llc, v);
        }
    }

    /// The LLC evicted `v`: into the victim cache below it if there is
    /// one (its dirty victims then go to memory), else a dirty `v` goes to
    /// memory.
    pub(super) fn llc_evicted(&mut self, llc: &mut Cache, v: Victim) {
        self.llc.evictions += 1;
        if v.dirty {
            self.llc.dirty_evictions += 1;
        }
        match llc.victim_mut() {
            Some(l3) => self.mem.writes += l3.insert(v.block, v.dirty),
            None => self.mem.writes += u64::from(v.dirty),
        }
        if self.inclusion == Inclusion::Inclusive {
            self.back_invalidate(v.block);
            if self.record_evictions {
                self.llc_evictions.push(v.block);
            }
        }
    }
}

/// How the write-back rules see a record kind: the access kind counted,
/// whether it dirties the line, whether it goes to the instruction cache;
/// `None` for an escape.
#[inline(always)]
pub(super) fn write_back_kind(rec: Record) -> Option<(AccessKind, bool, bool)> {
    WRITE_BACK_KINDS[rec.kind_code() as usize]
}

/// [`write_back_kind`] by kind code (`Kind as u64`; codes 6 and 7 never
/// reach a record): one table load instead of a jump on the kind.
const WRITE_BACK_KINDS: [Option<(AccessKind, bool, bool)>; 8] = {
    let mut t = [None; 8];
    t[Kind::Ifetch as usize] = Some((AccessKind::Instr, false, true));
    t[Kind::Load as usize] = Some((AccessKind::Read, false, false));
    t[Kind::DepLoad as usize] = Some((AccessKind::Read, false, false));
    t[Kind::Modify as usize] = Some((AccessKind::Read, true, false));
    t[Kind::Store as usize] = Some((AccessKind::Write, true, false));
    t
};
