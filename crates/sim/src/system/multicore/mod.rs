//! The multicore system: cores with private caches and TLBs around one
//! shared LLC, apps with their own address spaces on one shared physical
//! memory, per-core clocks interleaved in simulated-time order.
//!
//! This file owns the [`System`] type, its construction and its public
//! queries and settings; the rest is split by concept:
//!
//! * `open.rs`: each app checked against the platform and its trace
//!   opened, first, so its read-ahead decodes while the rest is built.
//! * `interleave.rs`: the per-core clocks run in simulated-time order within
//!   an interval ([`System::run_interval`]), a record at a time.
//! * `schedule.rs`: time slicing on a core (quantum, context switches,
//!   parking and resuming apps, finishing) and the [`AppEvent`] log.
//! * `records.rs`: feeding each app's records from its trace (batches of
//!   [`BATCH`], restarts).
//! * `counters.rs`: what is attributed to each app (totals and samples).
//! * `recolor.rs`: [`System::recolor`] and the colors-exhausted responder.
//! * `execute.rs`: an app's records run on its core in a slice (flat or
//!   window timing); `fast_step.rs`: their common cases (a first-level TLB
//!   hit, an STLB hit) without the general translation.
//! * `paging.rs`: page-walk and paging stalls charged to an app's time.
//! * `schedule.rs` also runs an app's idle process
//!   ([`IdleQuantum`](crate::system::IdleQuantum)): after each turn of
//!   `run-cycles` the core idles for `idle-cycles`.
//! * `throttle.rs`: per-app duty cycles and prefetcher words, written to
//!   the core's registers when the app runs ([`System::set_throttle`]).
//!
//! Every address space gets the platform's memory costs
//! ([`crate::memory::PagingCosts`]) and its page-table colors
//! (`memory.page-table-colors`).

mod accessors;
mod counters;
mod execute;
mod fast_step;
mod interleave;
mod open;
mod paging;
mod prefetch;
mod recolor;
mod records;
mod schedule;
mod throttle;
mod umon;

use counters::Snap;
pub use recolor::{ExhaustedResponder, RecolorSummary};
pub use throttle::check_throttle;

use cachepart_machine::{AppEvent, Duty};
use cachepart_trace::Record;
use cachepart_units::WayMask;

use super::app::{AppSpec, Counters};
use super::clock_modulation::DutyClock;
use super::dram::Dram;
use super::error::SystemError;
use super::platform::PlatformConfig;
use super::source::RecordBatches;
use super::timing::{StallTable, TICKS_PER_CYCLE};
use super::window::Window;
use crate::cache::Cache;
use crate::error::SimError;
use crate::hierarchy::{Hierarchy, Inclusion};
use crate::memory::{
    AddressSpace, ColorLayout, FrameAllocator, HugePages, PagingStats, PhysicalCore, RecolorEngine,
    Tlb, FRAME_BYTES,
};
use crate::splitmix::SplitMix64;
use crate::umon::Umon;

/// Records decoded per refill of an app's buffer (a source decoded ahead
/// hands over its whole chunks instead, without copying them).
pub const BATCH: usize = 4096;

/// Id of the empty address space of an idle core.
const IDLE_SPACE: u32 = u32::MAX;

struct Core {
    pc: PhysicalCore,
    clock: u64,
    /// Live apps of this core, in round-robin order.
    queue: Vec<usize>,
    running: Option<usize>,
    quantum_end: u64,
    /// When the running app's turn ends and its idle process takes the
    /// core (`u64::MAX`: it has no idle process).
    run_end: u64,
    base: Snap,
    /// The duty cycle its clock-modulation register holds.
    duty: Duty,
}

struct App {
    spec: AppSpec,
    stream: Option<Box<dyn RecordBatches>>,
    buf: Vec<Record>,
    pos: usize,
    /// Its address space while it is not installed on its core.
    space: Option<AddressSpace>,
    stalls: StallTable,
    /// Its core's clock while it runs throttled (`None`: full speed).
    duty_clock: Option<DutyClock>,
    /// Its out-of-order window (`None`: the flat timing model).
    ooo: Option<Window>,
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
    /// Its utility monitor while it is not installed on its core (see
    /// [`System::enable_umon`]).
    umon: Option<Box<Umon>>,
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
        let swap = platform.swap_map()?;
        // A configurable swap sits on the path to the LLC: one more cycle
        // on every LLC access (the paper's 28 -> 29 cycles).
        let platform = &match &platform.swap {
            Some(s) if s.extra_llc_cycles() > 0 => {
                let mut p = platform.clone();
                p.timing.llc_cycles += s.extra_llc_cycles();
                std::borrow::Cow::Owned(p)
            }
            _ => std::borrow::Cow::Borrowed(platform),
        };
        let platform: &PlatformConfig = platform;
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
        // Each app's trace is opened (its read-ahead thread starts decoding)
        // before the caches are built and the allocator aged, so that the
        // first records are ready when the run starts.
        let streams = open::open_apps(platform, &apps)?;
        let n_cores = platform.cores as usize;
        let mut llc_cfg = platform.llc;
        llc_cfg.seed = mixed_seed(seed, llc_cfg.seed, 0);
        let mut llc = Cache::new(&llc_cfg).map_err(|source| SimError::Geometry {
            level: "LLC",
            source,
        })?;
        llc.set_owner_tracking(apps.len());
        llc.set_victim(platform.l3_victim_cache()?);
        // Zeroing skips frames that cannot hold lines (paging.rs); a line
        // larger than a frame would bring in lines of neighbouring frames.
        let c = &platform.core;
        if [
            Some(&c.l1i),
            Some(&c.l1d),
            c.l2.as_ref(),
            Some(&platform.llc),
        ]
        .into_iter()
        .flatten()
        .all(|l| u64::from(l.line_bytes) <= FRAME_BYTES)
        {
            llc.keep_frame_marks();
        }
        let mut layout = ColorLayout::new(llc.geometry(), FRAME_BYTES)
            .map_err(|source| SystemError::Memory { app: None, source })?;
        if let Some(s) = swap {
            layout = layout.with_swap(s);
        }
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
            let mut pc = PhysicalCore::new(hier, tlb, idle_space());
            pc.set_swap(swap);
            cores.push(Core {
                pc,
                clock: 0,
                queue: Vec::new(),
                running: None,
                quantum_end: 0,
                run_end: u64::MAX,
                base: Snap::default(),
                duty: Duty::FULL,
            });
        }
        let dram = Dram::new(&platform.timing);
        let full = WayMask(llc.full_mask());
        let mut states = Vec::with_capacity(apps.len());
        for (i, (spec, stream)) in apps.into_iter().zip(streams).enumerate() {
            cores[spec.core as usize].queue.push(i);
            let mut space = AddressSpace::new(i as u32, spec.huge_pages);
            space.track_fresh_frames(true);
            space.set_table_colors(platform.memory.page_table_colors);
            space
                .set_costs(&platform.memory.costs)
                .map_err(|source| SystemError::Memory {
                    app: Some(spec.name.clone()),
                    source,
                })?;
            states.push(App {
                stalls: StallTable::new(
                    &spec.timing,
                    &platform.timing,
                    &platform.tlb,
                    dram.latency_cycles(),
                    platform.l3_victim.map(|v| v.cycles),
                ),
                duty_clock: platform.clock_modulation.and_then(|m| m.clock(spec.duty)),
                ooo: platform.timing.window.as_ref().map(Window::new),
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
                umon: None,
            });
        }
        for (i, a) in states.iter().enumerate() {
            let shared = cores[a.spec.core as usize].queue.len() > 1;
            if a.spec.idle_quantum.is_some() && shared {
                return Err(cfg_err(
                    format!("app {}: quantum", a.spec.name),
                    format!(
                        "core {} runs other apps too; an idle process needs the app alone on its core (app {i})",
                        a.spec.core
                    ),
                ));
            }
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
        if let Some(w) = platform.prefetchers.run_word {
            let word = crate::prefetch::Word::new(w).map_err(|reason| SystemError::Config {
                field: "prefetchers".into(),
                reason,
            })?;
            sys.enable_prefetch(word);
        }
        for c in 0..n_cores {
            if let Some(&first) = sys.cores[c].queue.first() {
                sys.switch_to(c, Some(first), false)?;
            }
        }
        Ok(sys)
    }
}
