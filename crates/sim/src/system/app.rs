//! An app as the system runs it: its specification ([`AppSpec`]) and its
//! whole-run counters ([`AppTotals`]).

use std::fmt;
use std::sync::Arc;

use cachepart_machine::Duty;
use cachepart_units::WayMask;
use serde::{Deserialize, Serialize};

use super::source::TraceSource;
use super::timing::{AppTiming, TICKS_PER_CYCLE};
use crate::memory::HugePages;

/// One app of a mix: its trace, timing, core and limits.
#[derive(Clone)]
pub struct AppSpec {
    /// Name in samples and messages.
    pub name: String,
    /// Where its records come from.
    pub source: Arc<dyn TraceSource>,
    /// Its core's CPI and memory-level parallelism.
    pub timing: AppTiming,
    /// The core it runs on (apps sharing a core are time-sliced).
    pub core: u32,
    /// Stop after this many instructions (`None`: at the end of the trace).
    pub instructions: Option<u64>,
    /// Replay the trace from its start when it ends before the
    /// instruction limit (multiprogram methodology: every app keeps
    /// running until the slowest has done its share). Without a limit the
    /// app replays its trace for as long as the caller runs the system
    /// (the restart and fixed-time run methods; a `Restarted` event marks
    /// each replay), so [`crate::system::System::run_to_end`] would not end.
    pub restart: bool,
    /// CAT mask of its LLC fills (`None`: every way).
    pub llc_mask: Option<WayMask>,
    /// Superpage policy of its address space.
    pub huge_pages: HugePages,
    /// Its core's duty cycle while it runs (full speed by default; other
    /// values need the platform's `[clock-modulation]`).
    pub duty: Duty,
    /// Its core's prefetcher word (MSR 0x1A4 layout) while it runs
    /// (`None`: the run's word). Needs prefetchers on in the run.
    pub prefetch_word: Option<u64>,
    /// An idle process sharing its core, alternating with it (`None`:
    /// none). See [`IdleQuantum`](crate::system::IdleQuantum).
    pub idle_quantum: Option<crate::system::IdleQuantum>,
}

impl AppSpec {
    /// An app on core 0 with default timing, no limit, no restart, every
    /// LLC way and 4 KiB pages.
    pub fn new(name: impl Into<String>, source: Arc<dyn TraceSource>) -> AppSpec {
        AppSpec {
            name: name.into(),
            source,
            timing: AppTiming::default(),
            core: 0,
            instructions: None,
            restart: false,
            llc_mask: None,
            huge_pages: HugePages::Never,
            duty: Duty::FULL,
            prefetch_word: None,
            idle_quantum: None,
        }
    }

    /// The same app on core `core`.
    pub fn on_core(mut self, core: u32) -> AppSpec {
        self.core = core;
        self
    }

    /// The same app with timing `timing`.
    pub fn with_timing(mut self, timing: AppTiming) -> AppSpec {
        self.timing = timing;
        self
    }

    /// The same app stopping after `n` instructions, restarting its trace
    /// if `restart`.
    pub fn with_limit(mut self, n: u64, restart: bool) -> AppSpec {
        self.instructions = Some(n);
        self.restart = restart;
        self
    }
}

impl fmt::Debug for AppSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppSpec")
            .field("name", &self.name)
            .field("source", &self.source.name())
            .field("timing", &self.timing)
            .field("core", &self.core)
            .field("instructions", &self.instructions)
            .field("restart", &self.restart)
            .field("llc_mask", &self.llc_mask)
            .field("huge_pages", &self.huge_pages)
            .field("duty", &self.duty)
            .field("prefetch_word", &self.prefetch_word)
            .field("idle_quantum", &self.idle_quantum)
            .finish()
    }
}

/// One app's counters over the whole run so far (snake_case field names
/// in JSON, as every output of cachepart spells them).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AppTotals {
    /// The app's name.
    pub name: String,
    /// Instructions retired.
    pub instructions: u64,
    /// Cycles it ran (context switches excluded, except the two around
    /// each turn of its idle process, whose share counts too: see
    /// [`IdleQuantum`](crate::system::IdleQuantum)).
    pub cycles: f64,
    /// Instructions per cycle.
    pub ipc: f64,
    /// Its references to the LLC.
    pub llc_references: u64,
    /// Its LLC misses.
    pub llc_misses: u64,
    /// Cycles stalled on accesses served by memory.
    pub memory_stall_cycles: f64,
    /// Cycles stalled on accesses that left the private levels (served
    /// by the LLC or by memory).
    #[serde(default)]
    pub l2_miss_stall_cycles: f64,
    /// Every stall cycle: cycles beyond `instructions x base-cpi` (private
    /// cache, LLC and memory latencies, page walks).
    #[serde(default)]
    pub stall_cycles: f64,
    /// Bytes it moved to and from memory.
    pub memory_bytes: u64,
    /// Its page walks (STLB misses).
    pub tlb_misses: u64,
    /// Times it was switched in after another app (time slicing).
    pub context_switches: u64,
    /// Times its trace was replayed from the start.
    pub restarts: u64,
    /// Bytes of the LLC it holds now.
    pub llc_occupancy_bytes: u64,
    /// Whether it has finished.
    pub done: bool,
    /// Pages moved to frames of other colors (recoloring).
    pub pages_recolored: u64,
    /// 4 KiB pages paged out to make room (memory or its colors
    /// exhausted).
    pub page_outs: u64,
    /// Paged-out pages paged back in.
    pub page_ins: u64,
    /// Frames it got outside its colors (the `tam` allocator's MaxTry
    /// fallback; each breaks isolation).
    pub fallbacks: u64,
    /// Cycles charged for page copies, page-outs and page-ins (part of
    /// `cycles`).
    pub paging_stall_cycles: f64,
    /// Its LLC misses served by the L3 victim cache (`None`: the platform
    /// has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l3_hits: Option<u64>,
    /// Its LLC misses the L3 victim cache missed too (served by memory;
    /// `None`: the platform has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l3_misses: Option<u64>,
}

impl AppTotals {
    /// The counters from `base` (an earlier snapshot of the same app) to
    /// `self`: every count and cycle total is the difference, the IPC is
    /// recomputed over it; the name, the occupancy and `done` are `self`'s.
    pub fn since(&self, base: &AppTotals) -> AppTotals {
        let cycles = self.cycles - base.cycles;
        let instructions = self.instructions.saturating_sub(base.instructions);
        AppTotals {
            name: self.name.clone(),
            instructions,
            cycles,
            ipc: if cycles > 0.0 {
                instructions as f64 / cycles
            } else {
                0.0
            },
            llc_references: self.llc_references.saturating_sub(base.llc_references),
            llc_misses: self.llc_misses.saturating_sub(base.llc_misses),
            memory_stall_cycles: self.memory_stall_cycles - base.memory_stall_cycles,
            l2_miss_stall_cycles: self.l2_miss_stall_cycles - base.l2_miss_stall_cycles,
            stall_cycles: self.stall_cycles - base.stall_cycles,
            memory_bytes: self.memory_bytes.saturating_sub(base.memory_bytes),
            tlb_misses: self.tlb_misses.saturating_sub(base.tlb_misses),
            context_switches: self.context_switches.saturating_sub(base.context_switches),
            restarts: self.restarts.saturating_sub(base.restarts),
            llc_occupancy_bytes: self.llc_occupancy_bytes,
            done: self.done,
            pages_recolored: self.pages_recolored.saturating_sub(base.pages_recolored),
            page_outs: self.page_outs.saturating_sub(base.page_outs),
            page_ins: self.page_ins.saturating_sub(base.page_ins),
            fallbacks: self.fallbacks.saturating_sub(base.fallbacks),
            paging_stall_cycles: self.paging_stall_cycles - base.paging_stall_cycles,
            l3_hits: self
                .l3_hits
                .map(|h| h.saturating_sub(base.l3_hits.unwrap_or(0))),
            l3_misses: self
                .l3_misses
                .map(|m| m.saturating_sub(base.l3_misses.unwrap_or(0))),
        }
    }

    /// LLC misses per kilo-instruction.
    pub fn llc_mpki(&self) -> f64 {
        per(self.llc_misses as f64 * 1000.0, self.instructions as f64)
    }

    /// LLC misses per kilo-cycle.
    pub fn llc_mpkc(&self) -> f64 {
        per(self.llc_misses as f64 * 1000.0, self.cycles)
    }
}

fn per(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// Raw counters of one app (ticks for time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    pub instructions: u64,
    pub ticks: u64,
    pub mem_stall_ticks: u64,
    pub l2_miss_stall_ticks: u64,
    pub stall_ticks: u64,
    pub llc_refs: u64,
    pub llc_misses: u64,
    pub mem_lines: u64,
    pub walks: u64,
    pub l3_hits: u64,
    pub l3_misses: u64,
    pub switches: u64,
    pub restarts: u64,
    /// Ticks of paging and recoloring stalls (part of `ticks`).
    pub paging_ticks: u64,
}

impl Counters {
    /// `self - o`, field by field.
    pub fn since(&self, o: &Counters) -> Counters {
        Counters {
            instructions: self.instructions - o.instructions,
            ticks: self.ticks - o.ticks,
            mem_stall_ticks: self.mem_stall_ticks - o.mem_stall_ticks,
            l2_miss_stall_ticks: self.l2_miss_stall_ticks - o.l2_miss_stall_ticks,
            stall_ticks: self.stall_ticks - o.stall_ticks,
            llc_refs: self.llc_refs - o.llc_refs,
            llc_misses: self.llc_misses - o.llc_misses,
            mem_lines: self.mem_lines - o.mem_lines,
            walks: self.walks - o.walks,
            l3_hits: self.l3_hits - o.l3_hits,
            l3_misses: self.l3_misses - o.l3_misses,
            switches: self.switches - o.switches,
            restarts: self.restarts - o.restarts,
            paging_ticks: self.paging_ticks - o.paging_ticks,
        }
    }

    pub fn cycles(&self) -> f64 {
        self.ticks as f64 / TICKS_PER_CYCLE as f64
    }

    pub fn mem_stall_cycles(&self) -> f64 {
        self.mem_stall_ticks as f64 / TICKS_PER_CYCLE as f64
    }

    pub fn paging_cycles(&self) -> f64 {
        self.paging_ticks as f64 / TICKS_PER_CYCLE as f64
    }
}
