//! Utility monitors per app (UCP's UMON): each app has its own monitor,
//! installed in its core's hierarchy while the app runs there (so only
//! its own LLC references reach it) and kept with the app while it is
//! parked. Hardware has one monitor per core; with one app per core, as
//! UCP runs, the two are the same.

use super::System;
use crate::umon::{Umon, UmonCounts};

impl System {
    /// Gives every app a utility monitor over about `sampled_sets` of the
    /// LLC's sets (0: every set). Its counts appear in each interval's
    /// samples (`umon_hits`, `umon_misses`). Idempotent: monitors already
    /// there keep their contents.
    pub fn enable_umon(&mut self, sampled_sets: u32) {
        let geom = *self.llc.geometry();
        for core in &mut self.cores {
            let h = core.pc.hierarchy_mut();
            if core.running.is_some() && h.umon_mut().is_none() {
                h.swap_umon(Some(Box::new(Umon::new(geom, sampled_sets))));
            }
        }
        for (i, app) in self.apps.iter_mut().enumerate() {
            let installed = self.cores.iter().any(|c| c.running == Some(i));
            if !installed && app.umon.is_none() {
                app.umon = Some(Box::new(Umon::new(geom, sampled_sets)));
            }
        }
    }

    /// Moves app `prev`'s monitor out of core `core`'s hierarchy, and app
    /// `next`'s in (at a context switch).
    pub(super) fn switch_umon(&mut self, core: usize, prev: Option<usize>, next: Option<usize>) {
        let h = self.cores[core].pc.hierarchy_mut();
        let out = h.swap_umon(None);
        if let Some(p) = prev {
            if out.is_some() {
                self.apps[p].umon = out;
            }
        }
        if let Some(n) = next {
            let u = self.apps[n].umon.take();
            self.cores[core].pc.hierarchy_mut().swap_umon(u);
        }
    }

    /// App `i`'s monitor counts since the last call (empty without a
    /// monitor).
    pub(super) fn take_umon(&mut self, i: usize) -> UmonCounts {
        let core = self.apps[i].spec.core as usize;
        if self.cores[core].running == Some(i) {
            if let Some(u) = self.cores[core].pc.hierarchy_mut().umon_mut() {
                return u.take();
            }
        }
        self.apps[i]
            .umon
            .as_mut()
            .map(|u| u.take())
            .unwrap_or_default()
    }
}
