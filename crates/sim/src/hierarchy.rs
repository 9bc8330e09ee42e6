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

use cachepart_trace::{Event, Kind, Record};
use cachepart_units::WayMask;
use serde::{Deserialize, Serialize};

use crate::cache::{Cache, LineOutcome, Victim};
use crate::error::{Result, SimError};
use crate::geometry::CacheConfig;
use crate::prefetch::{Kind as PrefetchKind, Prefetchers, Target};
use crate::stats::{AccessKind, LevelStats, MemTraffic};
use crate::umon::Umon;
use crate::victim::VictimCounts;

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
                self.prefetch_into_l1(llc, b, PrefetchKind::L1IpStride);
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
        let (kind, write, instr) = write_back_kind(rec.kind())?;
        let l1 = if instr { &mut self.l1i } else { &mut self.l1d };
        let bits = l1.geometry().line_bits();
        let first = addr >> bits;
        let last = addr.wrapping_add(u64::from(rec.size()) - 1) >> bits;
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
        if rec.kind() == Kind::Escape {
            self.event(llc, rec);
            return Served::L1;
        }
        self.cachegrind_at(llc, rec, rec.addr())
    }

    /// [`Self::cachegrind`] of access record `rec` at address `addr`.
    #[inline(always)]
    fn cachegrind_at(&mut self, llc: &mut Cache, rec: Record, addr: u64) -> Served {
        let code = rec.kind();
        let instr = code == Kind::Ifetch;
        self.instructions += u64::from(rec.gap()) + u64::from(instr);
        let kind = if instr {
            AccessKind::Instr
        } else if code == Kind::Store {
            AccessKind::Write
        } else {
            AccessKind::Read
        };
        let l1 = if instr { &mut self.l1i } else { &mut self.l1d };
        let size = rec.size().min(self.data_clamp);
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

    /// Write-back, write-allocate rules.
    fn write_back(&mut self, llc: &mut Cache, rec: Record) -> Served {
        self.write_back_at(llc, rec, rec.addr())
    }

    /// [`Self::write_back`] of record `rec` at address `addr`.
    fn write_back_at(&mut self, llc: &mut Cache, rec: Record, addr: u64) -> Served {
        self.instructions += u64::from(rec.gap());
        let Some((kind, write, instr)) = write_back_kind(rec.kind()) else {
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
        let last = addr.wrapping_add(u64::from(rec.size()) - 1) >> bits;
        let mut served = Served::L1;
        let mut b = first;
        loop {
            let l1 = if instr { &mut self.l1i } else { &mut self.l1d };
            let out = l1.line(b, write, u64::MAX);
            if !out.hit {
                served = served.max(self.fetch_below(llc, b, kind));
            }
            if let Some(v) = out.victim {
                if v.dirty {
                    self.write_back_below(llc, v.block);
                }
            }
            if !instr {
                if let Some(p) = self.prefetch.as_deref_mut() {
                    p.demand(Target::L1, &out);
                    self.prefetch_l1(llc, addr, b, (out.hit, out.first_use));
                }
            }
            if b == last {
                break;
            }
            b = b.wrapping_add(1);
        }
        let l1 = if instr { &mut self.l1i } else { &mut self.l1d };
        l1.record(kind, served != Served::L1);
        served
    }

    /// A first-level miss of `block`: fetch it from L2 or the LLC; returns
    /// the level that had it.
    fn fetch_below(&mut self, llc: &mut Cache, block: u64, kind: AccessKind) -> Served {
        if let Some(l2) = &mut self.l2 {
            let out = l2.line(block, false, u64::MAX);
            l2.record(kind, !out.hit);
            if let Some(v) = out.victim.filter(|v| v.dirty) {
                self.write_back_llc(llc, v.block);
            }
            self.second_level_seen(llc, block, &out);
            if out.hit {
                return Served::L2;
            }
        }
        if let Some(u) = self.umon.as_deref_mut() {
            u.access(block);
        }
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
        // Without a private L2 the LLC is the second level (the Xeon
        // 5160's shared L2): the L2 prefetchers watch it and fill it.
        if self.l2.is_none() {
            self.second_level_seen(llc, block, &out);
        }
        served
    }

    /// LLC line `block` missed (and was filled): from the victim cache
    /// below the LLC if it holds it (removed there; the LLC's copy is
    /// dirty if the L3's was), else from memory.
    #[inline(always)]
    fn llc_miss(&mut self, llc: &mut Cache, block: u64) -> Served {
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

    /// A repeated L1D hit of `block` (at byte `addr`) was the first use of
    /// a prefetched line: counted useful, and it feeds the L1 prefetchers
    /// like any other access (see [`Self::access_at_l1_prefetching`]).
    #[inline(never)]
    fn prefetched_line_used(&mut self, llc: &mut Cache, block: u64, addr: u64) {
        if let Some(p) = self.prefetch.as_deref_mut() {
            p.useful(Target::L1);
        }
        self.prefetch_l1(llc, addr, block, (true, true));
    }

    /// The second level (the L2, or the LLC without one) served demand
    /// request `block` with `out`: the prefetch counts, then the L2
    /// prefetchers' lines.
    fn second_level_seen(&mut self, llc: &mut Cache, block: u64, out: &LineOutcome) {
        if let Some(p) = self.prefetch.as_deref_mut() {
            p.demand(Target::L2, out);
            self.prefetch_l2(llc, block, out.hit);
        }
    }

    /// Feeds the L1 prefetchers a demand data access and fetches the
    /// lines they ask for into the L1D (see [`crate::prefetch`]).
    fn prefetch_l1(&mut self, llc: &mut Cache, addr: u64, block: u64, hit: (bool, bool)) {
        let ip = self.last_ip;
        let Some(p) = self.prefetch.as_deref_mut() else {
            return;
        };
        let mut want = p.take_buffer();
        p.l1_access(ip, addr, block, hit, &mut want);
        for &(b, k) in &want {
            self.prefetch_into_l1(llc, b, k);
        }
        if let Some(p) = self.prefetch.as_deref_mut() {
            p.return_buffer(want);
        }
    }

    /// Fetches line `b`, asked for by L1 prefetcher `k`, into the L1D
    /// (and below), unless the L1D has it.
    fn prefetch_into_l1(&mut self, llc: &mut Cache, b: u64, k: PrefetchKind) {
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
    fn prefetch_l2(&mut self, llc: &mut Cache, block: u64, hit: bool) {
        let Some(p) = self.prefetch.as_deref_mut() else {
            return;
        };
        let mut want = p.take_buffer();
        p.l2_access(block, hit, &mut want);
        for &(b, k) in &want {
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
    fn prefetch_below(&mut self, llc: &mut Cache, b: u64, through_l2: bool) {
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
    fn prefetch_llc_miss(&mut self, llc: &mut Cache, b: u64) {
        match llc.victim_mut().map(|l3| l3.take(b)) {
            Some(Some(dirty)) => {
                if dirty {
                    llc.mark_dirty(b);
                }
            }
            _ => self.mem.reads += 1,
        }
    }

    /// A dirty first-level victim goes to L2, or to the LLC without one.
    /// With an inclusive LLC, a victim the LLC dropped meanwhile (while
    /// fetching the line that replaced it) goes straight to memory, so no
    /// private level holds a line the LLC lacks.
    fn write_back_below(&mut self, llc: &mut Cache, block: u64) {
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

    fn write_back_llc(&mut self, llc: &mut Cache, block: u64) {
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
    fn llc_evicted(&mut self, llc: &mut Cache, v: Victim) {
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
    fn event(&mut self, llc: &mut Cache, rec: Record) {
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

/// How the write-back rules see a record kind: the access kind counted,
/// whether it dirties the line, whether it goes to the instruction cache;
/// `None` for an escape.
#[inline(always)]
fn write_back_kind(kind: Kind) -> Option<(AccessKind, bool, bool)> {
    match kind {
        Kind::Ifetch => Some((AccessKind::Instr, false, true)),
        Kind::Load | Kind::DepLoad => Some((AccessKind::Read, false, false)),
        Kind::Modify => Some((AccessKind::Read, true, false)),
        Kind::Store => Some((AccessKind::Write, true, false)),
        Kind::Escape => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cachegrind::CachegrindSummary;
    use crate::reference::reference_cachegrind;
    use crate::replacement::PolicyKind;
    use proptest::prelude::*;

    fn rec(kind: Kind, addr: u64, size: u32) -> Record {
        Record::access(kind, addr, size, 0).unwrap()
    }

    fn config(mode: Mode, l2: bool, policy: PolicyKind) -> (HierarchyConfig, CacheConfig) {
        let l = |size, ways| {
            CacheConfig::lru(size, ways, 64)
                .with_policy(policy)
                .with_seed(9)
        };
        (
            HierarchyConfig {
                l1i: l(2048, 2),
                l1d: l(4096, 4),
                l2: l2.then(|| l(16384, 4)),
                mode,
                inclusion: Inclusion::NonInclusive,
            },
            l(65536, 8),
        )
    }

    fn build(h: &HierarchyConfig, llc: &CacheConfig) -> (Hierarchy, Cache) {
        let llc = Cache::new(llc).unwrap();
        (Hierarchy::new(h, &llc).unwrap(), llc)
    }

    /// Random traces over a 256 KiB region: every kind, sizes 1-32.
    fn trace() -> impl Strategy<Value = Vec<Record>> {
        prop::collection::vec((0u8..4, 0u64..(1 << 18), 1u32..=32), 1..3000).prop_map(|v| {
            v.into_iter()
                .map(|(k, a, s)| rec(Kind::from_code(k).unwrap(), 0x10_0000 + a, s))
                .collect()
        })
    }

    #[test]
    fn dirty_lines_flow_down_to_memory() {
        let (h, l) = config(Mode::WriteBack, false, PolicyKind::Lru);
        let (mut core, mut llc) = build(&h, &l);
        // L1D: 16 sets x 4 ways. Five stores to one set evict a dirty line.
        for i in 0..5 {
            core.access(&mut llc, rec(Kind::Store, i * 1024, 8));
        }
        let s = core.stats();
        assert_eq!(s.l1d.dirty_evictions, 1);
        assert_eq!(s.llc.writebacks_in, 1);
        assert_eq!(s.llc.writeback_misses, 0);
        assert_eq!(llc.is_dirty(0), Some(true));
        assert_eq!(s.mem.reads, 5);
        assert_eq!(s.mem.writes, 0);
    }

    #[test]
    fn inclusive_llc_back_invalidates() {
        let (mut h, _) = config(Mode::WriteBack, false, PolicyKind::Lru);
        h.inclusion = Inclusion::Inclusive;
        // A one-set, 2-way LLC.
        let l = CacheConfig::lru(128, 2, 64);
        let (mut core, mut llc) = build(&h, &l);
        core.access(&mut llc, rec(Kind::Store, 0, 8));
        core.access(&mut llc, rec(Kind::Load, 64, 8));
        core.access(&mut llc, rec(Kind::Load, 128, 8));
        // The LLC evicted line 0, so L1D lost its dirty copy to memory.
        assert!(!core.levels().any(|c| c.contains(0)));
        assert_eq!(core.stats().mem.writes, 1);
        assert!(Hierarchy::new(
            &HierarchyConfig {
                mode: Mode::Cachegrind,
                ..h
            },
            &llc
        )
        .is_err());
    }

    #[test]
    fn reports_the_serving_level() {
        for mode in [Mode::WriteBack, Mode::Cachegrind] {
            let l2 = mode == Mode::WriteBack;
            let (h, l) = config(mode, l2, PolicyKind::Lru);
            let (mut core, mut llc) = build(&h, &l);
            assert_eq!(core.access(&mut llc, rec(Kind::Load, 0, 8)), Served::Memory);
            assert_eq!(core.access(&mut llc, rec(Kind::Load, 8, 8)), Served::L1);
            // A straddling access: one line present, the other from memory.
            assert_eq!(
                core.access(&mut llc, rec(Kind::Load, 60, 8)),
                Served::Memory
            );
            // Evict line 0 from L1D (16 sets x 4 ways) but not from below.
            for i in 1..=4 {
                core.access(&mut llc, rec(Kind::Load, i * 1024, 8));
            }
            let want = if l2 { Served::L2 } else { Served::Llc };
            assert_eq!(
                core.access(&mut llc, rec(Kind::Load, 0, 8)),
                want,
                "{mode:?}"
            );
            let gap = Record::event(Event::InstrGap(1000), 0).unwrap();
            assert_eq!(core.access(&mut llc, gap), Served::L1);
        }
    }

    #[test]
    fn masks_must_name_a_way() {
        let (h, l) = config(Mode::WriteBack, true, PolicyKind::Lru);
        let (mut core, llc) = build(&h, &l);
        assert!(core.set_llc_mask(WayMask(0xf00), &llc).is_err());
        core.set_llc_mask(WayMask(0x0f), &llc).unwrap();
        assert_eq!(core.llc_mask(), WayMask(0x0f));
    }

    /// Lines filled into a cache: the ones it still holds plus the ones
    /// it evicted (nothing is invalidated in these runs).
    fn fills(c: &Cache) -> u64 {
        c.occupancy(u64::MAX) as u64 + c.stats().evictions
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// hits + misses = accesses at every level, where the accesses of
        /// a level are counted independently: records at L1, first-level
        /// misses (cachegrind) or line fills (write-back) below.
        #[test]
        fn hits_plus_misses_is_accesses(t in trace(), l2 in any::<bool>()) {
            let fetches = t.iter().filter(|r| r.kind() == Kind::Ifetch).count() as u64;
            let data = t.len() as u64 - fetches;
            for mode in [Mode::Cachegrind, Mode::WriteBack] {
                let (h, l) = config(mode, l2 && mode == Mode::WriteBack, PolicyKind::Lru);
                let (mut core, mut llc) = build(&h, &l);
                core.run(&mut llc, t.iter().copied());
                let s = core.stats();
                prop_assert_eq!(s.l1i.total_hits() + s.l1i.total_misses(), fetches);
                prop_assert_eq!(s.l1d.total_hits() + s.l1d.total_misses(), data);
                let l1 = core.levels().take(2).map(fills).sum::<u64>();
                let into_llc = match (mode, s.l2) {
                    (Mode::Cachegrind, _) => s.l1i.total_misses() + s.l1d.total_misses(),
                    (Mode::WriteBack, None) => l1,
                    (Mode::WriteBack, Some(l2s)) => {
                        prop_assert_eq!(l2s.total_hits() + l2s.total_misses(), l1);
                        fills(core.levels().nth(2).unwrap()) - l2s.writeback_misses
                    }
                };
                prop_assert_eq!(s.llc.total_hits() + s.llc.total_misses(), into_llc);
                // One core: its view of the LLC is the whole LLC (in
                // cachegrind mode it counts references and misses only).
                if mode == Mode::WriteBack {
                    prop_assert_eq!(*llc.stats(), s.llc);
                }
                for k in AccessKind::ALL {
                    prop_assert_eq!(llc.stats().refs(k), s.llc.refs(k));
                    prop_assert_eq!(llc.stats().misses(k), s.llc.misses(k));
                }
            }
        }

        /// The cachegrind mode agrees with the plain reference loop.
        #[test]
        fn cachegrind_mode_equals_reference(t in trace()) {
            let (h, l) = config(Mode::Cachegrind, false, PolicyKind::Lru);
            let (mut core, mut llc) = build(&h, &l);
            core.run(&mut llc, t.iter().copied());
            let g = |c: &CacheConfig| (c.size_bytes, c.ways, c.line_bytes);
            let want = reference_cachegrind(&t, g(&h.l1i), g(&h.l1d), g(&l));
            prop_assert_eq!(CachegrindSummary::from_stats(&core.stats()), want);
        }

        /// One core whose mask is every way of the LLC (or more bits than
        /// the LLC has) runs exactly as the unpartitioned LLC.
        #[test]
        fn whole_llc_mask_is_unpartitioned(t in trace(), p in 0usize..3, extra in any::<bool>()) {
            let (h, l) = config(Mode::WriteBack, true, PolicyKind::ALL[p]);
            let (mut free, mut llc_free) = build(&h, &l);
            free.run(&mut llc_free, t.iter().copied());
            let (mut masked, mut llc_masked) = build(&h, &l);
            let all = if extra { u64::MAX } else { 0xff };
            masked.set_llc_mask(WayMask(all), &llc_masked).unwrap();
            masked.run(&mut llc_masked, t.iter().copied());
            prop_assert_eq!(free.stats(), masked.stats());
            prop_assert_eq!(llc_free.stats(), llc_masked.stats());
        }

        /// The same configuration and seed give identical counters, for
        /// every policy (random included) and mode.
        #[test]
        fn same_seed_same_results(t in trace(), p in 0usize..3, wb in any::<bool>()) {
            let mode = if wb { Mode::WriteBack } else { Mode::Cachegrind };
            let (h, l) = config(mode, wb, PolicyKind::ALL[p]);
            let run = || {
                let (mut core, mut llc) = build(&h, &l);
                core.set_llc_mask(WayMask(0x3c), &llc).unwrap();
                core.run(&mut llc, t.iter().copied());
                (core.stats(), *llc.stats())
            };
            prop_assert_eq!(run(), run());
        }
    }
}
