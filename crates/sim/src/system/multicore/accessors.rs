//! The system's accessors (platform, apps, caches, cores, DRAM, the
//! allocator, address spaces and paging counters) and the per-app
//! settings a controller changes between intervals (LLC way masks and
//! page colors).

use cachepart_units::{IdSet, WayMask};

use super::System;
use crate::cache::Cache;
use crate::memory::{AddressSpace, FrameAllocator, PagingStats, PhysicalCore, PhysicalStats};
use crate::system::error::SystemError;
use crate::system::platform::PlatformConfig;
use crate::system::timing::TICKS_PER_CYCLE;

impl System {
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
