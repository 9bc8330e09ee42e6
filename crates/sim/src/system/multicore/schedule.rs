//! Time slicing: which app runs on each core. Apps sharing a core run
//! round robin for `quantum-cycles` each; a switch costs
//! `context-switch-cycles` of the core's clock (charged to no app),
//! optionally flushes the TLBs, installs the next app's address space
//! (charging the page copies done while it was parked) and applies its
//! CAT mask and throttling (duty cycle, prefetcher word). An app with an
//! idle process ([`IdleQuantum`](crate::system::IdleQuantum)) yields its
//! core to it after each turn (`System::run_idle`). An app that
//! finishes releases its frames and hands the core to the next one.
//! Under the out-of-order window model the core first waits for the
//! app's outstanding misses (`System::drain_window`). Placing apps on
//! cores before the run, and the log of
//! [`AppEvent`]s (start, park, resume, finish) stamped with the core's
//! clock, live here too.

use cachepart_machine::{AppEvent, EventKind};

use super::counters::snap;
use super::throttle::write_registers;
use super::{cfg_err, idle_space, System, IDLE_SPACE};
use crate::system::error::SystemError;
use crate::system::timing::TICKS_PER_CYCLE;
use crate::system::window::Waits;

impl System {
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
        let q = &self.cores[core as usize].queue;
        let idle = |a: usize| self.apps[a].spec.idle_quantum.is_some();
        if !q.is_empty() && (idle(app) || q.iter().any(|&a| idle(a))) {
            return Err(cfg_err(
                format!("app {name}: core"),
                format!("core {core} would run an app with an idle process (quantum) beside another app; an idle process needs its app alone on the core"),
            ));
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

    pub(super) fn log(&mut self, app: usize, kind: EventKind, core: usize) {
        self.events.push(AppEvent {
            app,
            kind,
            at_cycles: self.cores[core].clock / TICKS_PER_CYCLE,
            core: Some(core as u32),
        });
    }

    /// Under the out-of-order window model, core `b` waits for its
    /// running app's outstanding misses (at a context switch, before an
    /// idle turn, at the end of the app); the wait counts in the app's
    /// cycles and stall counters, by the level of the miss waited for.
    pub(super) fn drain_window(&mut self, b: usize) {
        let core = &mut self.cores[b];
        let Some(a) = core.running else {
            return;
        };
        let app = &mut self.apps[a];
        let Some(w) = app.ooo.as_mut() else {
            return;
        };
        let mut waits = Waits::default();
        let before = core.clock;
        w.drain(&mut core.clock, &mut waits);
        app.c.ticks += core.clock - before;
        app.c.stall_ticks += waits.all;
        app.c.l2_miss_stall_ticks += waits.beyond_private;
        app.c.mem_stall_ticks += waits.memory;
    }

    /// The app running on core `b` has finished: it leaves the core, which
    /// switches to the next app of its queue if any.
    pub(super) fn finish(&mut self, b: usize) -> Result<(), SystemError> {
        let Some(a) = self.cores[b].running else {
            return Ok(());
        };
        self.drain_window(b);
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

    /// The running app of core `b` has had its turn: its idle process
    /// holds the core for the app's `idle-cycles`, with a context switch
    /// to it and one back (each `context-switch-cycles`, flushing the TLBs
    /// where the platform's switches do). The core issues nothing
    /// meanwhile; the time counts in the app's cycles (its wall-clock
    /// share of the core), the two switches in its `context_switches`.
    pub(super) fn run_idle(&mut self, b: usize) {
        self.drain_window(b);
        let core = &mut self.cores[b];
        let Some(a) = core.running else {
            core.run_end = u64::MAX;
            return;
        };
        let app = &mut self.apps[a];
        let Some(q) = app.spec.idle_quantum else {
            core.run_end = u64::MAX;
            return;
        };
        let at = core.clock / TICKS_PER_CYCLE;
        let held = self
            .switch_ticks
            .saturating_mul(2)
            .saturating_add(q.idle_cycles.saturating_mul(TICKS_PER_CYCLE));
        core.clock = core.clock.saturating_add(held);
        if self.platform.timing.tlb_flush_on_switch {
            core.pc.tlb_mut().flush();
        }
        app.c.ticks = app.c.ticks.saturating_add(held);
        app.c.switches += 2;
        core.run_end = core
            .clock
            .saturating_add(q.run_cycles.saturating_mul(TICKS_PER_CYCLE));
        let back = core.clock / TICKS_PER_CYCLE;
        for (kind, at_cycles) in [(EventKind::Parked, at), (EventKind::Resumed, back)] {
            self.events.push(AppEvent {
                app: a,
                kind,
                at_cycles,
                core: Some(b as u32),
            });
        }
    }

    /// Installs app `next` (or nothing) on core `b` in place of the app
    /// running there; `charge` costs a context switch.
    pub(super) fn switch_to(
        &mut self,
        b: usize,
        next: Option<usize>,
        charge: bool,
    ) -> Result<(), SystemError> {
        self.drain_window(b);
        let prev = self.cores[b].running;
        self.switch_umon(b, prev, next);
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
            app.c.l3_hits += s.l3_hits - core.base.l3_hits;
            app.c.l3_misses += s.l3_misses - core.base.l3_misses;
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
            app.charge_paging(ns, &mut core.clock, self.ticks_per_ns);
            core.pc.hierarchy_mut().set_llc_mask(app.mask, &self.llc)?;
            let writes = write_registers(&self.platform, &app.spec, core);
            if charge {
                core.clock = core
                    .clock
                    .saturating_add(writes.saturating_mul(TICKS_PER_CYCLE));
            }
            core.quantum_end = core.clock.saturating_add(self.quantum_ticks);
            core.run_end = app.spec.idle_quantum.map_or(u64::MAX, |q| {
                core.clock
                    .saturating_add(q.run_cycles.saturating_mul(TICKS_PER_CYCLE))
            });
            app.c.switches += u64::from(charge);
        } else {
            core.run_end = u64::MAX;
        }
        core.base = snap(&core.pc);
        Ok(())
    }
}
