//! Counters and samples: what is attributed to each app. Instructions,
//! cycles and stall cycles are counted per record (in
//! [`interleave`](super::interleave)); LLC references and misses, memory
//! lines, L3 victim-cache hits and misses and page walks are the core's counters while the app was
//! installed ([`Snap`] differences); LLC occupancy is the LLC's per-owner
//! count (owner = app index). Whole-run totals and per-interval samples
//! are built from them.

use cachepart_machine::Sample;

use super::System;
use crate::memory::PhysicalCore;
use crate::system::app::{AppTotals, Counters};
use crate::system::timing::TICKS_PER_CYCLE;

/// Counters read from a core, to attribute to the app installed on it.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Snap {
    pub(super) llc_refs: u64,
    pub(super) llc_misses: u64,
    pub(super) mem_lines: u64,
    pub(super) walks: u64,
    pub(super) l3_hits: u64,
    pub(super) l3_misses: u64,
}

pub(super) fn snap(pc: &PhysicalCore) -> Snap {
    let h = pc.hierarchy().stats();
    Snap {
        llc_refs: h.llc.total_refs(),
        llc_misses: h.llc.total_misses(),
        mem_lines: h.mem.reads + h.mem.writes,
        walks: pc.tlb().walks(),
        l3_hits: h.l3.hits,
        l3_misses: h.l3.misses,
    }
}

impl System {
    /// Whole-run counters of every app so far.
    pub fn totals(&self) -> Vec<AppTotals> {
        let has_l3 = self.llc.victim().is_some();
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
                    l3_hits: has_l3.then_some(c.l3_hits),
                    l3_misses: has_l3.then_some(c.l3_misses),
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
            c.l3_hits += s.l3_hits - core.base.l3_hits;
            c.l3_misses += s.l3_misses - core.base.l3_misses;
        }
        c
    }

    pub(super) fn take_samples(&mut self) -> Vec<Sample> {
        (0..self.apps.len())
            .map(|i| {
                let now = self.counters_now(i);
                let d = now.since(&self.apps[i].sampled);
                self.apps[i].sampled = now;
                let umon = self.take_umon(i);
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
                    umon_hits: umon.hits,
                    umon_misses: umon.misses,
                }
            })
            .collect()
    }
}
