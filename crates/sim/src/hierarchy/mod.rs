//! One core's private caches (L1I, L1D, optional L2) in front of a shared
//! last-level cache (LLC) that the caller owns and lends on each access.
//!
//! The LLC is not inside the [`Hierarchy`]: several cores' hierarchies
//! share one [`Cache`] (passed by `&mut`), and each core fills it through
//! its own way mask ([`Hierarchy::set_llc_mask`], CAT semantics). Each
//! hierarchy also counts its own references to the LLC, so per-core LLC
//! misses are known even though the LLC is shared.
//!
//! Two modes ([`Mode`]):
//!
//! * **write-back** (the default): write-back, write-allocate levels. The
//!   first level counts one reference per access (one miss if any line of
//!   it misses); lower levels count one reference per line requested.
//!   Missing lines are fetched from below, dirty victims are written back
//!   to the next level (allocating there if absent), and dirty LLC victims
//!   go to memory. A modify is one read reference that dirties the line.
//!   All levels must have the same line size.
//! * **cachegrind**: exactly cachegrind's model (`cg_sim.c`), for
//!   validation: two levels (I1, D1, LL), no L2. An access looks up every
//!   line it spans and counts one miss per level; only first-level misses
//!   reach the LL, and the LL sees the whole access (both lines of a
//!   straddling one); a modify is one data read; data sizes are clamped to
//!   the smallest line size (cachegrind does so for large accesses of
//!   helpers such as `fxsave`); no write-backs reach the LL.
//!
//! Inclusion ([`Inclusion`]) concerns the LLC only. Non-inclusive (the
//! default): LLC evictions leave private copies alone. Inclusive: an LLC
//! eviction invalidates the line in this core's private levels
//! ([`Hierarchy::back_invalidate`]; a multicore machine calls it on every
//! core sharing the LLC). L2 never enforces inclusion of L1.
//!
//! Each access reports the level that served it ([`Served`]): the deepest
//! level any of its lines had to go to, which the timing model turns into
//! a latency. Write-backs never delay the access that causes them.
//!
//! An LLC carrying a victim cache ([`Cache::set_victim`], the Power5's
//! L3, see [`crate::victim`]) receives every line the LLC evicts, and an
//! LLC miss looks there before memory ([`Served::L3`]); without one
//! nothing changes (one `Option` checked per LLC miss and eviction).
//!
//! The hierarchy sees addresses as they come in records (virtual, or
//! physical behind [`PhysicalCore`](crate::memory::PhysicalCore)).
//!
//! This file holds the levels, their configuration and cachegrind's
//! demand path; `write_back.rs` the write-back demand path; `plain.rs`
//! that path for the common settings of simulation loops;
//! `prefetching.rs` the prefetchers' fills,
//! `maintenance.rs` back-invalidation, discarded frames, events and
//! flushes, and `tests.rs` the tests.

use cachepart_trace::{Kind, Record};
use cachepart_units::WayMask;
use serde::{Deserialize, Serialize};

use crate::cache::Cache;
use crate::error::{Result, SimError};
use crate::geometry::CacheConfig;
use crate::prefetch::Prefetchers;
use crate::stats::{AccessKind, LevelStats, MemTraffic};
use crate::umon::Umon;
use crate::victim::VictimCounts;

mod maintenance;
mod plain;
mod prefetching;
mod write_back;

use write_back::write_back_kind;

/// cachegrind's smallest line size (`MIN_LINE_SIZE`).
pub const CACHEGRIND_MIN_LINE: u32 = 16;

/// The level that served an access: the deepest level any line of it had
/// to be fetched from (ordered: `L1 < L2 < Llc < L3 < Memory`). Escape
/// records report `L1` (they access nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[repr(u8)]
pub enum Served {
    /// Every line hit in the first level.
    L1 = 0,
    /// A line missed the first level and hit the private L2.
    L2 = 1,
    /// A line reached the shared LLC and hit there.
    Llc = 2,
    /// A line missed the LLC and hit the victim cache below it (the
    /// Power5's L3, [`crate::victim`]).
    L3 = 3,
    /// A line missed the LLC (and the L3, if any) and came from memory.
    Memory = 4,
}

impl Served {
    /// All levels, in order.
    pub const ALL: [Served; 5] = [
        Served::L1,
        Served::L2,
        Served::Llc,
        Served::L3,
        Served::Memory,
    ];
}

/// How the hierarchy counts and moves lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Write-back, write-allocate levels with dirty write-backs.
    #[default]
    WriteBack,
    /// cachegrind's two-level model, for validation against it.
    Cachegrind,
}

/// Whether the LLC holds every line of the private levels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Inclusion {
    /// LLC evictions do not touch private copies.
    #[default]
    NonInclusive,
    /// LLC evictions invalidate private copies (back-invalidation).
    Inclusive,
}

/// The private levels of one core and how they behave.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct HierarchyConfig {
    /// First-level instruction cache.
    pub l1i: CacheConfig,
    /// First-level data cache.
    pub l1d: CacheConfig,
    /// Unified private second level, if any.
    #[serde(default)]
    pub l2: Option<CacheConfig>,
    /// Counting and write-back rules.
    #[serde(default)]
    pub mode: Mode,
    /// Inclusion of the LLC.
    #[serde(default)]
    pub inclusion: Inclusion,
}

impl HierarchyConfig {
    /// The same geometry for the L1 instruction and data caches, no L2, and
    /// the default mode and inclusion.
    pub fn split_l1(l1: CacheConfig) -> HierarchyConfig {
        HierarchyConfig {
            l1i: l1,
            l1d: l1,
            l2: None,
            mode: Mode::default(),
            inclusion: Inclusion::default(),
        }
    }
}

/// Counters of one core.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HierarchyStats {
    /// Instructions retired (fetch records, gaps and gap events).
    pub instructions: u64,
    /// L1 instruction cache.
    pub l1i: LevelStats,
    /// L1 data cache.
    pub l1d: LevelStats,
    /// Private L2, if configured.
    pub l2: Option<LevelStats>,
    /// This core's references to the shared LLC.
    pub llc: LevelStats,
    /// Lines this core moved between the LLC (or its victim cache) and
    /// memory.
    pub mem: MemTraffic,
    /// This core's LLC misses that hit or missed the victim cache below
    /// the LLC (zero without one).
    #[serde(default, skip_serializing_if = "VictimCounts::is_zero")]
    pub l3: VictimCounts,
}

/// One core's private caches; the LLC is lent on each call.
#[derive(Clone, Debug)]
pub struct Hierarchy {
    mode: Mode,
    inclusion: Inclusion,
    l1i: Cache,
    l1d: Cache,
    l2: Option<Cache>,
    llc_mask: u64,
    llc: LevelStats,
    mem: MemTraffic,
    l3: VictimCounts,
    instructions: u64,
    /// Largest data access size the model passes on (cachegrind's clamp).
    data_clamp: u32,
    /// Whether LLC evictions are recorded for other cores to
    /// back-invalidate (inclusive LLC shared by several cores).
    record_evictions: bool,
    llc_evictions: Vec<u64>,
    /// The utility monitor fed this core's demand references to the LLC,
    /// if one is installed.
    umon: Option<Box<Umon>>,
    /// This core's hardware prefetchers, if any are on.
    prefetch: Option<Box<Prefetchers>>,
    /// The address of the last instruction fetched (the IP of the data
    /// accesses that follow it), when the trace has fetch records.
    last_ip: Option<u64>,
}

fn level(name: &'static str, cfg: &CacheConfig) -> Result<Cache> {
    Cache::new(cfg).map_err(|source| SimError::Geometry {
        level: name,
        source,
    })
}

impl Hierarchy {
    /// Private caches as configured, in front of `llc` (used only to check
    /// that the two fit together; it is lent again on each access).
    pub fn new(cfg: &HierarchyConfig, llc: &Cache) -> Result<Hierarchy> {
        let l1i = level("L1I", &cfg.l1i)?;
        let l1d = level("L1D", &cfg.l1d)?;
        let l2 = cfg.l2.as_ref().map(|c| level("L2", c)).transpose()?;
        let llc_line = llc.geometry().line();
        let mut lines = vec![("L1I", &l1i), ("L1D", &l1d)];
        if let Some(c) = &l2 {
            lines.push(("L2", c));
        }
        let data_clamp = match cfg.mode {
            Mode::Cachegrind => {
                if l2.is_some() {
                    return Err(SimError::Unsupported(
                        "cachegrind mode has two levels (I1, D1, LL): remove the L2".into(),
                    ));
                }
                if cfg.inclusion != Inclusion::NonInclusive {
                    return Err(SimError::Unsupported(
                        "cachegrind mode is non-inclusive (cachegrind never back-invalidates)"
                            .into(),
                    ));
                }
                let mut min = llc_line;
                for (name, g) in lines
                    .iter()
                    .map(|(n, c)| (*n, *c.geometry()))
                    .chain(std::iter::once(("LLC", *llc.geometry())))
                {
                    if g.line() < CACHEGRIND_MIN_LINE {
                        return Err(SimError::Unsupported(format!(
                            "cachegrind mode: {name} line size {} B is below cachegrind's minimum of {CACHEGRIND_MIN_LINE} B",
                            g.line()
                        )));
                    }
                    if g.size() <= u64::from(g.line()) {
                        return Err(SimError::Unsupported(format!(
                            "cachegrind mode: {name} size {} B is not larger than its line size",
                            g.size()
                        )));
                    }
                    min = min.min(g.line());
                }
                min
            }
            Mode::WriteBack => {
                for (name, c) in &lines {
                    if c.geometry().line() != llc_line {
                        return Err(SimError::Unsupported(format!(
                            "write-back mode needs one line size: {name} has {} B, the LLC {llc_line} B",
                            c.geometry().line()
                        )));
                    }
                }
                u32::MAX
            }
        };
        Ok(Hierarchy {
            mode: cfg.mode,
            inclusion: cfg.inclusion,
            l1i,
            l1d,
            l2,
            llc_mask: llc.full_mask(),
            llc: LevelStats::default(),
            mem: MemTraffic::default(),
            l3: VictimCounts::default(),
            instructions: 0,
            data_clamp,
            record_evictions: false,
            llc_evictions: Vec::new(),
            umon: None,
            prefetch: None,
            last_ip: None,
        })
    }

    /// With an inclusive LLC shared by several cores, records the blocks
    /// this core's accesses evict from the LLC, so that the owner of the
    /// cores can back-invalidate them in the other cores
    /// ([`Hierarchy::take_llc_evictions`]). Off by default.
    pub fn set_record_llc_evictions(&mut self, on: bool) {
        self.record_evictions = on;
        self.llc_evictions.clear();
    }

    /// The LLC evictions recorded since the last call (see
    /// [`Hierarchy::set_record_llc_evictions`]), oldest first.
    pub fn take_llc_evictions(&mut self, into: &mut Vec<u64>) {
        into.append(&mut self.llc_evictions);
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Installs `umon` (or none) as this core's utility monitor and
    /// returns the one it replaces.
    pub fn swap_umon(&mut self, umon: Option<Box<Umon>>) -> Option<Box<Umon>> {
        std::mem::replace(&mut self.umon, umon)
    }

    /// Installs (or removes) this core's prefetchers; returns the ones it
    /// replaces.
    pub fn swap_prefetchers(&mut self, p: Option<Box<Prefetchers>>) -> Option<Box<Prefetchers>> {
        std::mem::replace(&mut self.prefetch, p)
    }

    /// This core's prefetchers.
    pub fn prefetchers_mut(&mut self) -> Option<&mut Prefetchers> {
        self.prefetch.as_deref_mut()
    }

    /// The installed utility monitor.
    pub fn umon_mut(&mut self) -> Option<&mut Umon> {
        self.umon.as_deref_mut()
    }

    /// The ways of the LLC this core may fill.
    pub fn llc_mask(&self) -> WayMask {
        WayMask(self.llc_mask)
    }

    /// Restricts this core's LLC fills to the ways of `mask` (hits are
    /// still found in every way). Fails if `mask` names no way of `llc`;
    /// bits above its ways are ignored.
    pub fn set_llc_mask(&mut self, mask: WayMask, llc: &Cache) -> Result<()> {
        let m = mask.0 & llc.full_mask();
        if m == 0 {
            return Err(SimError::EmptyMask {
                mask,
                ways: llc.geometry().ways(),
            });
        }
        self.llc_mask = m;
        Ok(())
    }

    /// The counters so far.
    pub fn stats(&self) -> HierarchyStats {
        HierarchyStats {
            instructions: self.instructions,
            l1i: *self.l1i.stats(),
            l1d: *self.l1d.stats(),
            l2: self.l2.as_ref().map(|c| *c.stats()),
            llc: self.llc,
            mem: self.mem,
            l3: self.l3,
        }
    }

    /// The private levels, first to last (L1I, L1D, then L2 if any).
    pub fn levels(&self) -> impl Iterator<Item = &Cache> {
        [&self.l1i, &self.l1d].into_iter().chain(self.l2.as_ref())
    }

    /// Simulates every record of `records` against `llc`.
    pub fn run<I: IntoIterator<Item = Record>>(&mut self, llc: &mut Cache, records: I) {
        match self.mode {
            Mode::Cachegrind => records.into_iter().for_each(|r| {
                self.cachegrind(llc, r);
            }),
            Mode::WriteBack => records.into_iter().for_each(|r| {
                self.write_back(llc, r);
            }),
        }
    }

    /// Simulates one record against `llc`; returns the level that served
    /// it.
    #[inline]
    pub fn access(&mut self, llc: &mut Cache, rec: Record) -> Served {
        match self.mode {
            Mode::Cachegrind => self.cachegrind(llc, rec),
            Mode::WriteBack => self.write_back(llc, rec),
        }
    }

    /// Simulates access record `rec` as if its address were `addr` (its
    /// translation: [`Hierarchy::access`] of the physical record, without
    /// building it); returns the level that served it.
    #[inline(always)]
    pub fn access_at(&mut self, llc: &mut Cache, rec: Record, addr: u64) -> Served {
        match self.mode {
            Mode::Cachegrind => self.cachegrind_at(llc, rec, addr),
            Mode::WriteBack => {
                if self.prefetch.as_deref().is_some_and(Prefetchers::l1_on) {
                    self.access_at_l1_prefetching(llc, rec, addr)
                } else if self.l1_repeat_hit::<false>(rec, addr).is_some() {
                    Served::L1
                } else {
                    self.write_back_at(llc, rec, addr)
                }
            }
        }
    }

    /// [`Self::access_at`] in write-back mode with an L1 prefetcher on. A
    /// repeated L1 hit (nearly every access of a real program) is kept
    /// inline: an instruction fetch only sets the IP of the data accesses
    /// that follow it; a data hit that is not the first use of a
    /// prefetched line trains only the IP stride prefetcher, directly,
    /// without the buffer of `prefetch_l1`.
    #[inline(always)]
    fn access_at_l1_prefetching(&mut self, llc: &mut Cache, rec: Record, addr: u64) -> Served {
        let Some((instr, block, first_use)) = self.l1_repeat_hit::<true>(rec, addr) else {
            return self.write_back_at(llc, rec, addr);
        };
        let Some(p) = self.prefetch.as_deref_mut() else {
            return Served::L1;
        };
        if instr {
            if p.wants_ip() {
                self.last_ip = Some(addr);
            }
        } else if first_use {
            self.prefetched_line_used(llc, block, addr);
        } else if let Some(ip) = self.last_ip {
            if let Some(b) = p.ip_stride_access(ip, addr) {
                self.ip_stride_prefetch(llc, block, b);
            }
        }
        Served::L1
    }

    /// A page walker's 8-byte load of a page-table entry at physical
    /// address `addr` (8-aligned: one line): looked up in the L1D, then
    /// below, like a demand load, and counted as a data read at every
    /// level it reaches, but without instructions and without training
    /// the L1 prefetchers (the walker's loads carry no instruction
    /// pointer and do not come from the load pipeline); the L2
    /// prefetchers see its L2 request like any other. Returns the level
    /// that served it.
    pub fn walk_load(&mut self, llc: &mut Cache, addr: u64) -> Served {
        let rec = Record::access(Kind::Load, addr, 8, 0).expect("a table address fits in 48 bits");
        if self.mode == Mode::Cachegrind {
            return self.cachegrind_at(llc, rec, addr);
        }
        let b = addr >> self.l1d.geometry().line_bits();
        let out = self.l1d.line(b, false, u64::MAX);
        let served = if out.hit {
            Served::L1
        } else {
            self.fetch_below(llc, b, AccessKind::Read)
        };
        if let Some(v) = out.victim.filter(|v| v.dirty) {
            self.write_back_below(llc, v.block);
        }
        self.l1d.record(AccessKind::Read, !out.hit);
        served
    }

    /// [`Self::write_back_at`] of an access within one line that is its
    /// first-level set's most recent block (inline: the common case of a
    /// real program): whether it was an instruction fetch, the block and,
    /// with `MARKS`, whether it was the first use of a prefetched line
    /// (the mark is taken; without `MARKS` it is left, and `false`);
    /// `None` (nothing done) for any other record.
    #[inline(always)]
    fn l1_repeat_hit<const MARKS: bool>(
        &mut self,
        rec: Record,
        addr: u64,
    ) -> Option<(bool, u64, bool)> {
        let (kind, write, instr) = write_back_kind(rec)?;
        let l1 = if instr { &mut self.l1i } else { &mut self.l1d };
        let bits = l1.geometry().line_bits();
        let first = addr >> bits;
        let last = addr.wrapping_add(rec.size_unchecked() - 1) >> bits;
        if first != last {
            return None;
        }
        let first_use = if MARKS {
            l1.repeat_hit_taking_mark(first, write)?
        } else if l1.repeat_hit(first, write) {
            false
        } else {
            return None;
        };
        l1.record(kind, false);
        self.instructions += u64::from(rec.gap()) + u64::from(instr);
        Some((instr, first, first_use))
    }

    /// cachegrind's rules (`cachesim_I1_doref`, `cachesim_D1_doref`).
    /// Written without a jump on the record kind: the kind picks the
    /// first level and the counter by selection, which mispredicts less
    /// on mixed instruction and data streams.
    #[inline(always)]
    fn cachegrind(&mut self, llc: &mut Cache, rec: Record) -> Served {
        if rec.kind_code() == Kind::Escape as u64 {
            self.event(llc, rec);
            return Served::L1;
        }
        self.cachegrind_at(llc, rec, rec.addr_unchecked())
    }

    /// [`Self::cachegrind`] of access record `rec` at address `addr`.
    #[inline(always)]
    fn cachegrind_at(&mut self, llc: &mut Cache, rec: Record, addr: u64) -> Served {
        let code = rec.kind_code();
        let instr = code == Kind::Ifetch as u64;
        self.instructions += u64::from(rec.gap()) + u64::from(instr);
        let kind = if instr {
            AccessKind::Instr
        } else if code == Kind::Store as u64 {
            AccessKind::Write
        } else {
            AccessKind::Read
        };
        let l1 = if instr { &mut self.l1i } else { &mut self.l1d };
        let size = (rec.size_unchecked() as u32).min(self.data_clamp);
        if l1.access(addr, size, kind, u64::MAX) {
            let miss = llc.access(addr, size, kind, self.llc_mask);
            self.llc.record(kind, miss);
            self.mem.reads += u64::from(miss);
            if miss {
                Served::Memory
            } else {
                Served::Llc
            }
        } else {
            Served::L1
        }
    }
}

#[cfg(test)]
mod tests;
