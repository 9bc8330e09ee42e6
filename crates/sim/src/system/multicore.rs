//! The multicore system: cores with private caches and TLBs around one
//! shared LLC, apps with their own address spaces on one shared physical
//! memory, per-core clocks interleaved in simulated-time order.
//!
//! **Interleaving.** Each core has a clock (ticks, see
//! [`timing`](super::timing)). The simulator always advances the core
//! with the smallest clock (ties: the lowest core index) and runs it until
//! its clock passes the next core's clock (plus `interleave-slack-cycles`),
//! so a core that runs faster issues more LLC accesses in the same
//! simulated time. Cores without a live app stop.
//!
//! **Time slicing.** Apps sharing a core run round robin for
//! `quantum-cycles` each; a switch costs `context-switch-cycles` of the
//! core's clock (charged to no app), optionally flushes the TLBs, installs
//! the next app's address space and applies its CAT mask. An app that
//! finishes releases its frames and hands the core to the next one.
//!
//! **Counting.** Instructions, cycles and memory-stall cycles are counted
//! per record; LLC references and misses, memory lines and page walks are
//! the core's counters while the app was installed. LLC occupancy is the
//! LLC's per-owner count (owner = app index). Records are decoded in
//! batches of [`BATCH`] per app.
//!
//! **Inclusive LLC.** When the LLC is inclusive and shared by several
//! cores, the blocks one core evicts from it are back-invalidated in the
//! other cores at the end of that core's run slice (a short delay:
//! slices end as soon as the core passes the next one).
//!
//! **Paging and recoloring.** Every address space gets the platform's
//! memory costs ([`crate::memory::PagingCosts`]). The time of page-outs,
//! page-ins and page copies ([`PagingStats::stall_ns`]) is charged to the
//! app's clock and cycles, checked only on the page-walk path (a fault, a
//! page-in or a lazy move happens only there) and when
//! [`System::recolor`] moves pages at once. An app whose colors run out
//! ([`MemoryError::ColorsExhausted`] with no page of its own left to page
//! out) asks the responder given to [`System::run_interval_with`] for
//! more colors (COLORIS's ALLOC_COLORS) and retries; without an answer it
//! is an error naming the app.
//!
//! **Events.** Each app's start (its first time on a core), park and
//! resume (time slicing), restart and finish, and each exhaustion of its
//! colors is logged as an [`AppEvent`] stamped with its core's clock;
//! [`System::take_events`] drains the log.
//!
//! **Recoloring** ([`System::recolor`]) changes an app's colors in the
//! allocator and runs the [`RecolorEngine`] on its address space, installed
//! on its core or parked (time slicing): a shrink marks pages for lazy
//! moves, an expansion moves pages at once (Selective Moving) or opens a
//! Redistribution window, polled at the end of each of the app's run
//! slices against its core's clock (cycles to microseconds by
//! `freq-ghz`).

use cachepart_machine::{AppEvent, EventKind, Sample};
use cachepart_trace::{Kind, Record};
use cachepart_units::{IdSet, WayMask};

use super::app::{AppSpec, AppTotals, Counters};
use super::dram::Dram;
use super::error::SystemError;
use super::platform::PlatformConfig;
use super::source::RecordBatches;
use super::timing::{StallTable, TICKS_PER_CYCLE};
use crate::cache::Cache;
use crate::error::SimError;
use crate::hierarchy::{Hierarchy, Inclusion, Served};
use crate::memory::{
    AddressSpace, ColorLayout, ExpandPolicy, FrameAllocator, HugePages, MemoryError, PagingStats,
    PhysicalCore, PhysicalStats, RecolorConfig, RecolorEngine, Tlb, FRAME_BYTES,
};
use crate::splitmix::SplitMix64;

/// Records decoded per refill of an app's buffer.
pub const BATCH: usize = 4096;

/// Id of the empty address space of an idle core.
const IDLE_SPACE: u32 = u32::MAX;

/// Counters read from a core, to attribute to the app installed on it.
#[derive(Clone, Copy, Debug, Default)]
struct Snap {
    llc_refs: u64,
    llc_misses: u64,
    mem_lines: u64,
    walks: u64,
}

fn snap(pc: &PhysicalCore) -> Snap {
    let h = pc.hierarchy().stats();
    Snap {
        llc_refs: h.llc.total_refs(),
        llc_misses: h.llc.total_misses(),
        mem_lines: h.mem.reads + h.mem.writes,
        walks: pc.tlb().stats().walks,
    }
}

struct Core {
    pc: PhysicalCore,
    clock: u64,
    /// Live apps of this core, in round-robin order.
    queue: Vec<usize>,
    running: Option<usize>,
    quantum_end: u64,
    base: Snap,
}

struct App {
    spec: AppSpec,
    stream: Option<Box<dyn RecordBatches>>,
    buf: Vec<Record>,
    pos: usize,
    /// Its address space while it is not installed on its core.
    space: Option<AddressSpace>,
    stalls: StallTable,
    limit: u64,
    mask: WayMask,
    done: bool,
    c: Counters,
    sampled: Counters,
    /// Records and instructions read since the trace was (re)opened.
    records_since_open: u64,
    instructions_at_open: u64,
    /// Paging and recoloring nanoseconds already charged to its time.
    stall_ns: u64,
    /// Its recoloring engine (created by the first [`System::recolor`]).
    engine: Option<RecolorEngine>,
    /// A Redistribution window is open.
    window: bool,
    /// Its paging counters once it finished (its space is released).
    paging_final: Option<PagingStats>,
    /// Pages recolored at the last sample.
    sampled_recolored: u64,
    /// It has had a core at least once.
    started: bool,
}

/// Asked for more colors when an app's colors are exhausted (the
/// [`EventKind::ColorsExhausted`] event): returns the app's whole new color
/// set (`None`: no more colors to give).
pub type ExhaustedResponder<'a> = &'a mut dyn FnMut(&AppEvent) -> Option<IdSet>;

/// What [`System::recolor`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecolorSummary {
    /// Colors added to the app's set.
    pub added: IdSet,
    /// Colors removed from it.
    pub removed: IdSet,
    /// Pages moved at once (Selective Moving).
    pub moved: u64,
    /// Pages marked for a lazy move (shrink).
    pub marked: u64,
    /// Translations dropped from the TLBs of the app's core.
    pub invalidated: u64,
    /// Whether the TLBs of the app's core were flushed (Redistribution).
    pub flushed_tlb: bool,
    /// Whether the app was installed on its core (else parked).
    pub installed: bool,
}

/// A multicore machine running a mix of apps on one shared LLC.
pub struct System {
    platform: PlatformConfig,
    llc: Cache,
    alloc: Box<dyn FrameAllocator + Send>,
    cores: Vec<Core>,
    apps: Vec<App>,
    dram: Dram,
    now: u64,
    slack: u64,
    switch_ticks: u64,
    quantum_ticks: u64,
    line: u64,
    inclusive_shared: bool,
    evicted: Vec<u64>,
    /// Ticks per nanosecond (`freq-ghz` x ticks per cycle).
    ticks_per_ns: f64,
    ways: u32,
    /// App events not yet taken.
    events: Vec<AppEvent>,
}

fn idle_space() -> AddressSpace {
    AddressSpace::new(IDLE_SPACE, HugePages::Never)
}

fn mixed_seed(seed: u64, cfg_seed: u64, salt: u64) -> u64 {
    SplitMix64::new(seed ^ cfg_seed.rotate_left(32) ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .next_u64()
}

fn cfg_err(field: String, reason: String) -> SystemError {
    SystemError::Config { field, reason }
}

/// Runs `app`'s buffered records on `pc` until the clock reaches `stop`,
/// the buffer is empty or the app reaches its instruction limit.
#[inline(never)]
fn run_records(
    pc: &mut PhysicalCore,
    llc: &mut Cache,
    alloc: &mut (dyn FrameAllocator + Send),
    app: &mut App,
    clock: &mut u64,
    stop: u64,
    ticks_per_ns: f64,
) -> Result<(), MemoryError> {
    let stalls = app.stalls;
    let limit = app.limit;
    let start = *clock;
    let mut t = start;
    let mut instr = app.c.instructions;
    let mut mem_stall = 0u64;
    let mut paging = 0u64;
    let mut beyond_private = 0u64;
    let mut all_stall = 0u64;
    let mut pos = app.pos;
    let buf = &app.buf[..];
    let result = loop {
        if t >= stop || instr >= limit {
            break Ok(());
        }
        let Some(&rec) = buf.get(pos) else {
            break Ok(());
        };
        let mut stall = 0;
        let single = match pc.translate_fast(rec) {
            // The common case: one record, no walk, no paging.
            Some(p) => Some(p),
            // An access within one page: the TLBs, else a walk.
            None => {
                let walks = pc.tlb().stats().walks;
                match pc.translate_single(rec, alloc) {
                    None => None,
                    Some(Ok(p)) => {
                        stall = walk_stall(
                            pc,
                            walks,
                            &stalls,
                            &mut app.stall_ns,
                            ticks_per_ns,
                            &mut paging,
                        );
                        Some(p)
                    }
                    // The record is retried (after more colors, say).
                    Some(Err(e)) => break Err(e),
                }
            }
        };
        let kind = rec.kind();
        let store = kind == Kind::Store;
        let n = if let Some(p) = single {
            pos += 1;
            let served = pc.hierarchy_mut().access_at(llc, rec, p);
            stall += served_stall(&stalls, store, served, &mut beyond_private, &mut mem_stall);
            // An access's instructions (`Record::instructions`).
            u64::from(rec.gap()) + u64::from(kind == Kind::Ifetch)
        } else {
            let walks = pc.tlb().stats().walks;
            let tr = match pc.translate(rec, alloc) {
                Ok(tr) => tr,
                // The record is retried (after more colors, say).
                Err(e) => break Err(e),
            };
            pos += 1;
            stall = walk_stall(
                pc,
                walks,
                &stalls,
                &mut app.stall_ns,
                ticks_per_ns,
                &mut paging,
            );
            for &r in tr.records() {
                let served = pc.hierarchy_mut().access(llc, r);
                stall += served_stall(&stalls, store, served, &mut beyond_private, &mut mem_stall);
            }
            rec.instructions()
        };
        instr += n;
        all_stall += stall;
        t += n * stalls.cpi + stall;
    };
    app.pos = pos;
    app.c.instructions = instr;
    app.c.ticks += t - start;
    app.c.mem_stall_ticks += mem_stall;
    app.c.paging_ticks += paging;
    app.c.l2_miss_stall_ticks += beyond_private;
    app.c.stall_ticks += all_stall;
    *clock = t;
    result
}

/// Stall ticks of the page walks `pc` made since its TLBs counted `walks`,
/// plus those of the faults, page-ins and lazy moves they did (which
/// happen only on a walk; also added to `paging`). `stall_ns` is the app's
/// paging time already charged.
#[inline(always)]
fn walk_stall(
    pc: &PhysicalCore,
    walks: u64,
    stalls: &StallTable,
    stall_ns: &mut u64,
    ticks_per_ns: f64,
    paging: &mut u64,
) -> u64 {
    let walked = pc.tlb().stats().walks - walks;
    let mut stall = walked * stalls.walk;
    if walked > 0 {
        let ns = pc.address_space().stats().stall_ns();
        if ns != *stall_ns {
            let d = ns_ticks(ns, ticks_per_ns) - ns_ticks(*stall_ns, ticks_per_ns);
            *stall_ns = ns;
            stall += d;
            *paging += d;
        }
    }
    stall
}

/// Stall ticks of an access served at `served`, also counted in
/// `beyond_private` (LLC or memory) and `mem_stall` (memory).
#[inline(always)]
fn served_stall(
    stalls: &StallTable,
    store: bool,
    served: Served,
    beyond_private: &mut u64,
    mem_stall: &mut u64,
) -> u64 {
    let s = stalls.stall(store, served);
    if served >= Served::Llc {
        *beyond_private += s;
        if served == Served::Memory {
            *mem_stall += s;
        }
    }
    s
}

/// Ticks of `ns` nanoseconds (cumulative counts convert exactly).
fn ns_ticks(ns: u64, ticks_per_ns: f64) -> u64 {
    (ns as f64 * ticks_per_ns).round() as u64
}

impl System {
    /// Builds the platform and installs `apps` (each on its core; the
    /// first app of a core runs first). `seed` perturbs every cache's
    /// replacement seed (random replacement only); the same platform,
    /// apps and seed give identical runs.
    pub fn new(
        platform: &PlatformConfig,
        apps: Vec<AppSpec>,
        seed: u64,
    ) -> Result<System, SystemError> {
        platform.check()?;
        if apps.len() >= usize::from(u16::MAX) {
            return Err(cfg_err(
                "apps".into(),
                format!(
                    "{} apps; at most {} are supported",
                    apps.len(),
                    u16::MAX - 1
                ),
            ));
        }
        let n_cores = platform.cores as usize;
        let mut llc_cfg = platform.llc;
        llc_cfg.seed = mixed_seed(seed, llc_cfg.seed, 0);
        let mut llc = Cache::new(&llc_cfg).map_err(|source| SimError::Geometry {
            level: "LLC",
            source,
        })?;
        llc.set_owner_tracking(apps.len());
        let layout = ColorLayout::new(llc.geometry(), FRAME_BYTES)
            .map_err(|source| SystemError::Memory { app: None, source })?;
        let alloc = platform
            .memory
            .build_colored(&layout)
            .map_err(|source| SystemError::Memory { app: None, source })?;
        let inclusive_shared = platform.core.inclusion == Inclusion::Inclusive && n_cores > 1;
        let mut cores = Vec::with_capacity(n_cores);
        for c in 0..n_cores {
            let mut h = platform.core.clone();
            let salt = (c as u64 + 1) << 8;
            h.l1i.seed = mixed_seed(seed, h.l1i.seed, salt + 1);
            h.l1d.seed = mixed_seed(seed, h.l1d.seed, salt + 2);
            if let Some(l2) = &mut h.l2 {
                l2.seed = mixed_seed(seed, l2.seed, salt + 3);
            }
            let mut hier = Hierarchy::new(&h, &llc)?;
            hier.set_record_llc_evictions(inclusive_shared);
            let tlb = Tlb::new(&platform.tlb)
                .map_err(|source| SystemError::Memory { app: None, source })?;
            cores.push(Core {
                pc: PhysicalCore::new(hier, tlb, idle_space()),
                clock: 0,
                queue: Vec::new(),
                running: None,
                quantum_end: 0,
                base: Snap::default(),
            });
        }
        let dram = Dram::new(&platform.timing);
        let rules = platform.mask_rules();
        let full = WayMask(llc.full_mask());
        let mut states = Vec::with_capacity(apps.len());
        platform
            .memory
            .costs
            .check()
            .map_err(|source| SystemError::Memory { app: None, source })?;
        for (i, spec) in apps.into_iter().enumerate() {
            let field = |f: &str| format!("app {}: {f}", spec.name);
            if spec.core >= platform.cores {
                return Err(cfg_err(
                    field("core"),
                    format!("core {} does not exist (0..{})", spec.core, platform.cores),
                ));
            }
            spec.timing.check(&spec.name)?;
            if let Some(m) = spec.llc_mask {
                rules.check(m).map_err(|source| SystemError::Mask {
                    app: spec.name.clone(),
                    source,
                })?;
            }
            let stream = spec
                .source
                .open_batches()
                .map_err(|source| SystemError::Trace {
                    app: spec.name.clone(),
                    source,
                })?;
            cores[spec.core as usize].queue.push(i);
            let mut space = AddressSpace::new(i as u32, spec.huge_pages);
            space
                .set_costs(&platform.memory.costs)
                .map_err(|source| SystemError::Memory {
                    app: Some(spec.name.clone()),
                    source,
                })?;
            states.push(App {
                stalls: StallTable::new(&spec.timing, &platform.timing, dram.latency_cycles()),
                limit: spec.instructions.unwrap_or(u64::MAX),
                mask: spec.llc_mask.unwrap_or(full),
                space: Some(space),
                spec,
                stream: Some(stream),
                buf: Vec::with_capacity(BATCH),
                pos: 0,
                done: false,
                c: Counters::default(),
                sampled: Counters::default(),
                records_since_open: 0,
                instructions_at_open: 0,
                stall_ns: 0,
                engine: None,
                window: false,
                paging_final: None,
                sampled_recolored: 0,
                started: false,
            });
        }
        let t = &platform.timing;
        let mut sys = System {
            platform: platform.clone(),
            line: u64::from(llc.geometry().line()),
            llc,
            alloc,
            cores,
            apps: states,
            dram,
            now: 0,
            slack: t.interleave_slack_cycles.saturating_mul(TICKS_PER_CYCLE),
            switch_ticks: t.context_switch_cycles.saturating_mul(TICKS_PER_CYCLE),
            quantum_ticks: t.quantum_cycles.saturating_mul(TICKS_PER_CYCLE),
            inclusive_shared,
            evicted: Vec::new(),
            ticks_per_ns: t.freq_ghz * TICKS_PER_CYCLE as f64,
            ways: platform.llc.ways,
            events: Vec::new(),
        };
        for c in 0..n_cores {
            if let Some(&first) = sys.cores[c].queue.first() {
                sys.switch_to(c, Some(first), false)?;
            }
        }
        Ok(sys)
    }

    /// The platform.
    pub fn platform(&self) -> &PlatformConfig {
        &self.platform
    }

    /// Number of apps.
    pub fn n_apps(&self) -> usize {
        self.apps.len()
    }

    /// The apps' names, in mix order.
    pub fn app_names(&self) -> Vec<String> {
        self.apps.iter().map(|a| a.spec.name.clone()).collect()
    }

    /// Global simulated time: the end of the last interval, cycles.
    pub fn now(&self) -> u64 {
        self.now / TICKS_PER_CYCLE
    }

    /// Whether every app has finished.
    pub fn is_done(&self) -> bool {
        self.apps.iter().all(|a| a.done)
    }

    /// The shared LLC.
    pub fn llc(&self) -> &Cache {
        &self.llc
    }

    /// Core `core`: its private caches, TLBs and the address space
    /// installed on it.
    pub fn core(&self, core: usize) -> Option<&PhysicalCore> {
        self.cores.get(core).map(|c| &c.pc)
    }

    /// The counters of core `core` (all apps it ran).
    pub fn core_stats(&self, core: usize) -> Option<PhysicalStats> {
        self.cores.get(core).map(|c| c.pc.stats())
    }

    /// The DRAM latency now, cycles (grows with bandwidth use).
    pub fn dram_latency_cycles(&self) -> f64 {
        self.dram.latency_cycles()
    }

    /// Restricts app `app`'s LLC fills to `mask` from now on (checked
    /// against the platform's mask rules).
    pub fn set_llc_mask(&mut self, app: usize, mask: WayMask) -> Result<(), SystemError> {
        let n = self.apps.len();
        let a = self.apps.get_mut(app).ok_or(SystemError::NoSuchApp {
            index: app,
            apps: n,
        })?;
        self.platform
            .mask_rules()
            .check(mask)
            .map_err(|source| SystemError::Mask {
                app: a.spec.name.clone(),
                source,
            })?;
        a.mask = mask;
        let core = &mut self.cores[a.spec.core as usize];
        if core.running == Some(app) {
            core.pc.hierarchy_mut().set_llc_mask(mask, &self.llc)?;
        }
        Ok(())
    }

    /// Confines the frames `app` gets from now on to the colors of `set`
    /// (a color-aware allocator only: `tam` or `coloris`).
    pub fn set_app_colors(&mut self, app: usize, set: &IdSet) -> Result<(), SystemError> {
        if app >= self.apps.len() {
            return Err(SystemError::NoSuchApp {
                index: app,
                apps: self.apps.len(),
            });
        }
        let name = self.apps[app].spec.name.clone();
        self.alloc
            .set_app_colors(app as u32, set)
            .map_err(|source| SystemError::Memory {
                app: Some(name),
                source,
            })
    }

    /// The frame allocator (colors, per-app counters).
    pub fn allocator(&self) -> &(dyn FrameAllocator + Send) {
        &*self.alloc
    }

    /// The colors of `app` (`None`: any color).
    pub fn app_colors(&self, app: usize) -> Option<IdSet> {
        self.alloc.app_colors(app as u32).cloned()
    }

    /// Moves app `app` to core `core` before the run starts (after that it
    /// is an error): it joins that core's queue in app order and, if it is
    /// the first there, is the one installed.
    pub fn place_app(&mut self, app: usize, core: u32) -> Result<(), SystemError> {
        if app >= self.apps.len() {
            return Err(SystemError::NoSuchApp {
                index: app,
                apps: self.apps.len(),
            });
        }
        let name = self.apps[app].spec.name.clone();
        if core >= self.platform.cores {
            return Err(cfg_err(
                format!("app {name}: core"),
                format!("core {core} does not exist (0..{})", self.platform.cores),
            ));
        }
        if self.now > 0 || self.cores.iter().any(|c| c.clock > 0) {
            return Err(cfg_err(
                format!("app {name}: core"),
                "apps are placed before the run starts".into(),
            ));
        }
        let old = self.apps[app].spec.core as usize;
        if old == core as usize {
            return Ok(());
        }
        // Undo both cores' installs, move the app, install again: nothing
        // has run, so this equals building the system with the new core.
        for c in [old, core as usize] {
            self.switch_to(c, None, false)?;
        }
        self.cores[old].queue.retain(|&a| a != app);
        let q = &mut self.cores[core as usize].queue;
        let at = q.partition_point(|&a| a < app);
        q.insert(at, app);
        self.apps[app].spec.core = core;
        for c in [old, core as usize] {
            if let Some(&first) = self.cores[c].queue.first() {
                self.switch_to(c, Some(first), false)?;
            }
        }
        // The undone installs happened at no time: the log is that of a
        // system built with the app on its new core.
        self.events.clear();
        for a in &mut self.apps {
            a.started = false;
        }
        for c in 0..self.cores.len() {
            if let Some(n) = self.cores[c].running {
                self.apps[n].started = true;
                self.log(n, EventKind::Started, c);
            }
        }
        Ok(())
    }

    /// The app events logged since the last call, in time order per core
    /// (and in the order they happened).
    pub fn take_events(&mut self) -> Vec<AppEvent> {
        std::mem::take(&mut self.events)
    }

    fn log(&mut self, app: usize, kind: EventKind, core: usize) {
        self.events.push(AppEvent {
            app,
            kind,
            at_cycles: self.cores[core].clock / TICKS_PER_CYCLE,
            core: Some(core as u32),
        });
    }

    /// App `app`'s address space, installed on its core or parked; `None`
    /// once it finished (its frames were released).
    pub fn address_space(&self, app: usize) -> Option<&AddressSpace> {
        let a = self.apps.get(app)?;
        let core = &self.cores[a.spec.core as usize];
        if core.running == Some(app) {
            Some(core.pc.address_space())
        } else {
            a.space.as_ref()
        }
    }

    /// App `app`'s paging counters (kept after it finished).
    pub fn paging_stats(&self, app: usize) -> PagingStats {
        match self.address_space(app) {
            Some(s) => *s.stats(),
            None => self
                .apps
                .get(app)
                .and_then(|a| a.paging_final)
                .unwrap_or_default(),
        }
    }

    /// Gives `app` the colors `new` and moves its pages as COLORIS does:
    /// removed colors are recolored lazily (pages marked, their TLB
    /// entries dropped), added colors by `cfg`'s expansion policy
    /// (Selective Moving now, or a Redistribution window of `win-us` of
    /// its core's clock). Works whether the app is installed on its core
    /// or parked; page copies done at once are charged to its time.
    pub fn recolor(
        &mut self,
        app: usize,
        new: &IdSet,
        cfg: &RecolorConfig,
    ) -> Result<RecolorSummary, SystemError> {
        let n = self.apps.len();
        let a = self.apps.get_mut(app).ok_or(SystemError::NoSuchApp {
            index: app,
            apps: n,
        })?;
        let name = a.spec.name.clone();
        let mem = |source| SystemError::Memory {
            app: Some(name.clone()),
            source,
        };
        if new.is_empty() {
            return Err(cfg_err(
                format!("app {name}: colors"),
                "recoloring to an empty color set".into(),
            ));
        }
        let layout = self.alloc.color_layout().copied();
        let old = match (self.alloc.app_colors(app as u32), layout) {
            (Some(c), _) => c.clone(),
            (None, Some(l)) => l.all_colors(),
            (None, None) => IdSet::new(),
        };
        self.alloc.set_app_colors(app as u32, new).map_err(&mem)?;
        let mut sum = RecolorSummary {
            added: new.difference(&old),
            removed: old.difference(new),
            ..RecolorSummary::default()
        };
        if a.engine.as_ref().map(|e| e.config()) != Some(cfg) {
            a.engine = Some(RecolorEngine::new(*cfg).map_err(&mem)?);
            a.window = false;
        }
        let b = a.spec.core as usize;
        let core = &mut self.cores[b];
        sum.installed = core.running == Some(app);
        let now_us = core.clock as f64 / (self.ticks_per_ns * 1000.0);
        let space = if sum.installed {
            core.pc.address_space_mut()
        } else {
            match a.space.as_mut() {
                Some(s) => s,
                None => return Ok(sum), // finished: nothing to move
            }
        };
        let engine = a.engine.as_mut().expect("created above");
        let mut inval = Vec::new();
        if !sum.removed.is_empty() {
            let act = engine.shrink(space, &*self.alloc);
            sum.marked += act.marked;
            inval.extend(act.invalidate);
        }
        if !sum.added.is_empty() {
            let act = engine
                .expand(space, &mut *self.alloc, &sum.added, self.ways, now_us)
                .map_err(&mem)?;
            sum.moved += act.moved;
            sum.marked += act.marked;
            sum.flushed_tlb |= act.flush_tlb;
            inval.extend(act.invalidate);
            if cfg.expand == ExpandPolicy::Redistribution {
                a.window = engine.window_open(app as u32);
            }
        }
        let ns = space.stats().stall_ns();
        let tlb = core.pc.tlb_mut();
        // Without address-space ids the core's TLBs hold the installed
        // app's translations; a parked app's are dropped too, in case the
        // TLBs are not flushed on switches.
        if sum.flushed_tlb {
            tlb.flush();
        } else {
            for &v in &inval {
                tlb.invalidate(crate::memory::PageSize::Small, v);
            }
        }
        sum.invalidated = inval.len() as u64;
        if sum.installed && ns != a.stall_ns {
            let d = ns_ticks(ns, self.ticks_per_ns) - ns_ticks(a.stall_ns, self.ticks_per_ns);
            a.stall_ns = ns;
            core.clock = core.clock.saturating_add(d);
            a.c.ticks += d;
            a.c.paging_ticks += d;
        }
        Ok(sum)
    }

    /// Closes app `a`'s Redistribution window on core `b` if its time has
    /// come (`a` is installed there).
    fn poll_window(&mut self, b: usize, a: usize) {
        let core = &mut self.cores[b];
        let app = &mut self.apps[a];
        let Some(engine) = app.engine.as_mut() else {
            app.window = false;
            return;
        };
        let now_us = core.clock as f64 / (self.ticks_per_ns * 1000.0);
        let act = engine.poll(core.pc.address_space_mut(), now_us);
        app.window = engine.window_open(a as u32);
        for (s, v) in act.tlb_entries() {
            core.pc.tlb_mut().invalidate(s, v);
        }
    }

    /// Runs `cycles` more cycles of global time and returns one sample per
    /// app (deltas over the interval; occupancy at its end). An app whose
    /// colors run out is an error.
    pub fn run_interval(&mut self, cycles: u64) -> Result<Vec<Sample>, SystemError> {
        self.run_interval_with(cycles, &mut |_| None)
    }

    /// [`System::run_interval`], asking `more_colors` for an app's whole
    /// new color set when its colors run out (`None`: the run fails).
    pub fn run_interval_with(
        &mut self,
        cycles: u64,
        more_colors: ExhaustedResponder<'_>,
    ) -> Result<Vec<Sample>, SystemError> {
        let target = self
            .now
            .saturating_add(cycles.saturating_mul(TICKS_PER_CYCLE));
        self.advance(target, more_colors)?;
        self.now = target;
        Ok(self.take_samples())
    }

    /// Runs intervals of `interval_cycles` until every app has finished,
    /// handing each interval's samples to `on_interval`.
    pub fn run_to_end(
        &mut self,
        interval_cycles: u64,
        mut on_interval: impl FnMut(&[Sample]),
    ) -> Result<(), SystemError> {
        if interval_cycles == 0 {
            return Err(cfg_err("interval-cycles".into(), "must be positive".into()));
        }
        while !self.is_done() {
            let s = self.run_interval(interval_cycles)?;
            on_interval(&s);
        }
        Ok(())
    }

    /// Whole-run counters of every app so far.
    pub fn totals(&self) -> Vec<AppTotals> {
        (0..self.apps.len())
            .map(|i| {
                let c = self.counters_now(i);
                let p = self.paging_stats(i);
                let a = &self.apps[i];
                let cycles = c.cycles();
                AppTotals {
                    name: a.spec.name.clone(),
                    instructions: c.instructions,
                    cycles,
                    ipc: if cycles > 0.0 {
                        c.instructions as f64 / cycles
                    } else {
                        0.0
                    },
                    llc_references: c.llc_refs,
                    llc_misses: c.llc_misses,
                    memory_stall_cycles: c.mem_stall_cycles(),
                    l2_miss_stall_cycles: c.l2_miss_stall_ticks as f64 / TICKS_PER_CYCLE as f64,
                    stall_cycles: c.stall_ticks as f64 / TICKS_PER_CYCLE as f64,
                    memory_bytes: c.mem_lines * self.line,
                    tlb_misses: c.walks,
                    context_switches: c.switches,
                    restarts: c.restarts,
                    llc_occupancy_bytes: self.llc.occupancy_of(i as u16) * self.line,
                    done: a.done,
                    pages_recolored: p.pages_recolored,
                    page_outs: p.page_outs,
                    page_ins: p.page_ins,
                    fallbacks: self.alloc.app_stats(i as u32).fallbacks,
                    paging_stall_cycles: c.paging_cycles(),
                }
            })
            .collect()
    }

    /// App `i`'s counters including its running segment.
    fn counters_now(&self, i: usize) -> Counters {
        let a = &self.apps[i];
        let mut c = a.c;
        let core = &self.cores[a.spec.core as usize];
        if core.running == Some(i) {
            let s = snap(&core.pc);
            c.llc_refs += s.llc_refs - core.base.llc_refs;
            c.llc_misses += s.llc_misses - core.base.llc_misses;
            c.mem_lines += s.mem_lines - core.base.mem_lines;
            c.walks += s.walks - core.base.walks;
        }
        c
    }

    fn take_samples(&mut self) -> Vec<Sample> {
        (0..self.apps.len())
            .map(|i| {
                let now = self.counters_now(i);
                let d = now.since(&self.apps[i].sampled);
                self.apps[i].sampled = now;
                let moved = self.paging_stats(i).pages_recolored;
                let recolored = moved - self.apps[i].sampled_recolored;
                self.apps[i].sampled_recolored = moved;
                Sample {
                    app: i,
                    instructions: d.instructions as f64,
                    cycles: d.cycles(),
                    llc_references: d.llc_refs as f64,
                    llc_misses: d.llc_misses as f64,
                    memory_stall_cycles: d.mem_stall_cycles(),
                    llc_occupancy_bytes: (self.llc.occupancy_of(i as u16) * self.line) as f64,
                    memory_bytes: (d.mem_lines * self.line) as f64,
                    tlb_misses: d.walks as f64,
                    pages_recolored: recolored as f64,
                    l2_miss_stall_cycles: d.l2_miss_stall_ticks as f64 / TICKS_PER_CYCLE as f64,
                    ran: d.ticks > 0 || d.instructions > 0,
                }
            })
            .collect()
    }

    /// Runs every core until its clock reaches `target` (ticks) or it has
    /// nothing left to run.
    fn advance(
        &mut self,
        target: u64,
        more_colors: ExhaustedResponder<'_>,
    ) -> Result<(), SystemError> {
        loop {
            let mut best: Option<usize> = None;
            let mut next = u64::MAX;
            for (i, c) in self.cores.iter().enumerate() {
                if c.running.is_none() {
                    continue;
                }
                match best {
                    Some(b) if c.clock >= self.cores[b].clock => next = next.min(c.clock),
                    Some(b) => {
                        next = self.cores[b].clock;
                        best = Some(i);
                    }
                    None => best = Some(i),
                }
            }
            let Some(b) = best else { break };
            let clock = self.cores[b].clock;
            if clock >= target {
                break;
            }
            if clock >= self.dram.window_end() {
                self.update_dram(clock);
            }
            let core = &self.cores[b];
            let sliced = core.queue.len() > 1;
            if sliced && clock >= core.quantum_end {
                let next_app = core
                    .running
                    .and_then(|r| core.queue.iter().position(|&a| a == r))
                    .map(|p| core.queue[(p + 1) % core.queue.len()]);
                self.switch_to(b, next_app, true)?;
                continue;
            }
            let mut stop = target
                .min(self.dram.window_end())
                .min(next.saturating_add(self.slack + 1));
            if sliced {
                stop = stop.min(core.quantum_end);
            }
            self.run_slice(b, stop, more_colors)?;
        }
        Ok(())
    }

    /// Closes a bandwidth window at global time `now` and reprices memory
    /// accesses.
    fn update_dram(&mut self, now: u64) {
        let lines: u64 = self
            .cores
            .iter()
            .map(|c| {
                let m = c.pc.hierarchy().stats().mem;
                m.reads + m.writes
            })
            .sum();
        let lat = self.dram.update(now, lines * self.line);
        for a in &mut self.apps {
            a.stalls = StallTable::new(&a.spec.timing, &self.platform.timing, lat);
        }
    }

    /// Runs core `b`'s app until the core's clock reaches `stop`.
    fn run_slice(
        &mut self,
        b: usize,
        stop: u64,
        more_colors: ExhaustedResponder<'_>,
    ) -> Result<(), SystemError> {
        let Some(a) = self.cores[b].running else {
            return Ok(());
        };
        self.llc.set_owner(a as u16);
        loop {
            let app = &mut self.apps[a];
            if app.c.instructions >= app.limit {
                self.finish(b)?;
                break;
            }
            if app.pos >= app.buf.len() {
                if !self.refill(a)? {
                    self.finish(b)?;
                    break;
                }
                continue;
            }
            let core = &mut self.cores[b];
            let r = run_records(
                &mut core.pc,
                &mut self.llc,
                &mut *self.alloc,
                app,
                &mut core.clock,
                stop,
                self.ticks_per_ns,
            );
            match r {
                Ok(()) => {}
                Err(source @ MemoryError::ColorsExhausted { .. }) => {
                    self.more_colors(a, source, more_colors)?;
                    continue;
                }
                Err(source) => {
                    return Err(SystemError::Memory {
                        app: Some(app.spec.name.clone()),
                        source,
                    })
                }
            }
            let core = &mut self.cores[b];
            let app = &mut self.apps[a];
            if core.clock >= stop {
                if app.c.instructions >= app.limit {
                    self.finish(b)?;
                }
                break;
            }
        }
        if self.apps[a].window && self.cores[b].running == Some(a) {
            self.poll_window(b, a);
        }
        if self.inclusive_shared {
            self.cores[b]
                .pc
                .hierarchy_mut()
                .take_llc_evictions(&mut self.evicted);
            for &blk in &self.evicted {
                for (i, c) in self.cores.iter_mut().enumerate() {
                    if i != b {
                        c.pc.hierarchy_mut().back_invalidate(blk);
                    }
                }
            }
            self.evicted.clear();
        }
        Ok(())
    }

    /// App `a`'s colors are exhausted: `respond` gives it more (its
    /// allocation is then retried), else `source` is the error.
    fn more_colors(
        &mut self,
        a: usize,
        source: MemoryError,
        respond: ExhaustedResponder<'_>,
    ) -> Result<(), SystemError> {
        let name = self.apps[a].spec.name.clone();
        self.log(
            a,
            EventKind::ColorsExhausted,
            self.apps[a].spec.core as usize,
        );
        let old = self.alloc.app_colors(a as u32).cloned();
        let new = self.events.last().copied().and_then(|e| respond(&e));
        match new {
            Some(set) if Some(&set) != old.as_ref() && !set.is_empty() => self
                .alloc
                .set_app_colors(a as u32, &set)
                .map_err(|source| SystemError::Memory {
                    app: Some(name),
                    source,
                }),
            _ => Err(SystemError::Memory {
                app: Some(name),
                source,
            }),
        }
    }

    /// Decodes the next batch of app `a`'s records, reopening its trace
    /// if it ended and restarts; `false` when it has no more.
    fn refill(&mut self, a: usize) -> Result<bool, SystemError> {
        let app = &mut self.apps[a];
        app.buf.clear();
        app.pos = 0;
        loop {
            let Some(stream) = app.stream.as_mut() else {
                return Ok(false);
            };
            if let Err(source) = stream.fill(&mut app.buf, BATCH) {
                return Err(SystemError::Trace {
                    app: app.spec.name.clone(),
                    source,
                });
            }
            if !app.buf.is_empty() {
                app.records_since_open += app.buf.len() as u64;
                return Ok(true);
            }
            // The trace ended: replay it if that makes progress.
            let progressed = app.c.instructions > app.instructions_at_open;
            if app.spec.restart && app.records_since_open > 0 && progressed {
                // Drop the old reader first: two decoded frames at once
                // would raise the peak memory at every restart.
                app.stream = None;
                let s = app
                    .spec
                    .source
                    .open_batches()
                    .map_err(|source| SystemError::Trace {
                        app: app.spec.name.clone(),
                        source,
                    })?;
                app.stream = Some(s);
                app.c.restarts += 1;
                let core = app.spec.core as usize;
                self.events.push(AppEvent {
                    app: a,
                    kind: EventKind::Restarted,
                    at_cycles: self.cores[core].clock / TICKS_PER_CYCLE,
                    core: Some(core as u32),
                });
                app.records_since_open = 0;
                app.instructions_at_open = app.c.instructions;
            } else {
                app.stream = None;
                return Ok(false);
            }
        }
    }

    /// The app running on core `b` has finished: it leaves the core, which
    /// switches to the next app of its queue if any.
    fn finish(&mut self, b: usize) -> Result<(), SystemError> {
        let Some(a) = self.cores[b].running else {
            return Ok(());
        };
        self.log(a, EventKind::Finished, b);
        let app = &mut self.apps[a];
        app.done = true;
        app.stream = None;
        app.buf = Vec::new();
        app.pos = 0;
        let core = &mut self.cores[b];
        let pos = core.queue.iter().position(|&x| x == a);
        let next = pos.and_then(|p| {
            core.queue.remove(p);
            (!core.queue.is_empty()).then(|| core.queue[p % core.queue.len()])
        });
        self.switch_to(b, next, next.is_some())
    }

    /// Installs app `next` (or nothing) on core `b` in place of the app
    /// running there; `charge` costs a context switch.
    fn switch_to(
        &mut self,
        b: usize,
        next: Option<usize>,
        charge: bool,
    ) -> Result<(), SystemError> {
        let new_space = next
            .and_then(|n| self.apps[n].space.take())
            .unwrap_or_else(idle_space);
        let core = &mut self.cores[b];
        let old = core.pc.replace_address_space(new_space);
        let mut flush = self.platform.timing.tlb_flush_on_switch;
        if let Some(prev) = core.running {
            let s = snap(&core.pc);
            let app = &mut self.apps[prev];
            app.c.llc_refs += s.llc_refs - core.base.llc_refs;
            app.c.llc_misses += s.llc_misses - core.base.llc_misses;
            app.c.mem_lines += s.mem_lines - core.base.mem_lines;
            app.c.walks += s.walks - core.base.walks;
            if app.done {
                let mut old = old;
                app.paging_final = Some(*old.stats());
                old.release(&mut *self.alloc);
                flush = true;
            } else {
                app.space = Some(old);
                if next.is_some() {
                    self.events.push(AppEvent {
                        app: prev,
                        kind: EventKind::Parked,
                        at_cycles: core.clock / TICKS_PER_CYCLE,
                        core: Some(b as u32),
                    });
                }
            }
        }
        if charge {
            core.clock = core.clock.saturating_add(self.switch_ticks);
        }
        if flush {
            core.pc.tlb_mut().flush();
        }
        // Without a flush, entries are tagged by app (PCIDs), so the next
        // app never uses the previous one's translations.
        core.pc
            .tlb_mut()
            .set_asid(next.map_or(IDLE_SPACE, |n| n as u32));
        core.running = next;
        if let Some(n) = next {
            let app = &mut self.apps[n];
            let kind = if std::mem::replace(&mut app.started, true) {
                EventKind::Resumed
            } else {
                EventKind::Started
            };
            self.events.push(AppEvent {
                app: n,
                kind,
                at_cycles: core.clock / TICKS_PER_CYCLE,
                core: Some(b as u32),
            });
            // Page copies done while it was parked.
            let ns = core.pc.address_space().stats().stall_ns();
            if ns != app.stall_ns {
                let d = ns_ticks(ns, self.ticks_per_ns) - ns_ticks(app.stall_ns, self.ticks_per_ns);
                app.stall_ns = ns;
                core.clock = core.clock.saturating_add(d);
                app.c.ticks += d;
                app.c.paging_ticks += d;
            }
            core.pc.hierarchy_mut().set_llc_mask(app.mask, &self.llc)?;
            core.quantum_end = core.clock.saturating_add(self.quantum_ticks);
            app.c.switches += u64::from(charge);
        }
        core.base = snap(&core.pc);
        Ok(())
    }
}

impl std::fmt::Debug for System {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("System")
            .field("platform", &self.platform.name)
            .field("apps", &self.app_names())
            .field("now", &self.now())
            .finish()
    }
}
