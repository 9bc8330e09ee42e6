//! Recoloring: [`System::recolor`] changes an app's colors in the
//! allocator and runs the [`RecolorEngine`] on its address space, installed
//! on its core or parked (time slicing): a shrink marks pages for lazy
//! moves, an expansion moves pages at once (Selective Moving) or opens a
//! Redistribution window, polled at the end of each of the app's run
//! slices against its core's clock (cycles to microseconds by
//! `freq-ghz`). An app whose colors run out
//! ([`MemoryError::ColorsExhausted`] with no page of its own left to page
//! out) asks the [`ExhaustedResponder`] for more colors (COLORIS's
//! ALLOC_COLORS) and retries; without an answer it is an error naming the
//! app.

use cachepart_machine::{AppEvent, EventKind};
use cachepart_units::IdSet;

use super::{cfg_err, System};
use crate::memory::{ExpandPolicy, MemoryError, RecolorConfig, RecolorEngine};
use crate::system::error::SystemError;

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
    /// Pages moved at once (Selective Moving; a superpage moved whole by
    /// a shrink counts 512).
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

impl System {
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
        let mut inval_huge = Vec::new();
        if !sum.removed.is_empty() {
            let act = engine.shrink(space, &mut *self.alloc);
            sum.marked += act.marked;
            sum.moved += act.moved;
            inval.extend(act.invalidate);
            inval_huge.extend(act.invalidate_huge);
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
            for &v in &inval_huge {
                tlb.invalidate(crate::memory::PageSize::Huge, v);
            }
        }
        sum.invalidated = (inval.len() + inval_huge.len()) as u64;
        if sum.installed {
            a.charge_paging(ns, &mut core.clock, self.ticks_per_ns);
        }
        Ok(sum)
    }

    /// Closes app `a`'s Redistribution window on core `b` if its time has
    /// come (`a` is installed there).
    pub(super) fn poll_window(&mut self, b: usize, a: usize) {
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

    /// App `a`'s colors are exhausted: `respond` gives it more (its
    /// allocation is then retried), else `source` is the error.
    pub(super) fn more_colors(
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
}
