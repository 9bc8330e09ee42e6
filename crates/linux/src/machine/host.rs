//! What a machine reads of its host before it manages anything: the
//! platform policies plan for (the ways and mask rules of the L3's
//! `cbm_mask` and `min_cbm_bits`), the LLC's geometry from sysfs, the
//! core count and the clock (for cycle stamps). Shared by the launcher
//! ([`super::LinuxMachine`]) and the adopter ([`super::Adopter`]).

use std::time::Instant;

use super::Llc;
use crate::cpu::CpuModel;
use crate::doctor::Roots;
use crate::error::{Error, Result};
use crate::resctrl::{Resctrl, Resource};
use cachepart_machine::Platform;

/// The host as a machine sees it.
#[derive(Clone, Debug)]
pub(super) struct Host {
    pub platform: Platform,
    pub llc: Llc,
    /// The CPU's clock in MHz (`/proc/cpuinfo`; 1000 when unknown).
    pub mhz: f64,
    /// How many CPUs `SYS/devices/system/cpu/cpuN` lists.
    pub cores: u32,
}

impl Host {
    /// Reads the host under `roots`, with the mount `rdt` already open.
    pub fn read(rdt: &Resctrl, roots: &Roots) -> Result<Host> {
        let caps = rdt.capabilities();
        let cache = caps
            .caches
            .get(&Resource::L3)
            .or(caps.caches.get(&Resource::L3Code))
            .ok_or_else(|| Error::Unsupported {
                mount: roots.resctrl.clone(),
                what: "L3 cache allocation".into(),
                found: caps.resource_names(),
            })?;
        let llc = Llc::read(&roots.sys)?;
        let cpu_dir = roots.sys.join("devices/system/cpu");
        let cores = std::fs::read_dir(&cpu_dir)
            .map_err(|e| Error::io(&cpu_dir, e))?
            .filter_map(|e| e.ok())
            .filter(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.strip_prefix("cpu")
                    .is_some_and(|r| !r.is_empty() && r.chars().all(|c| c.is_ascii_digit()))
            })
            .count() as u32;
        let cpu = CpuModel::read(&roots.proc_root).ok();
        let platform = Platform {
            name: format!(
                "linux {}",
                cpu.as_ref().map_or("cpu", |c| c.model_name.as_str())
            ),
            ways: cache.ways(),
            mask_rules: cache.rules(),
            max_bandwidth_mbps: None,
        };
        Ok(Host {
            platform,
            llc,
            mhz: cpu.as_ref().and_then(|c| c.mhz).unwrap_or(1000.0),
            cores,
        })
    }
}

/// Cycles of a `mhz` clock since `t0` (the machines' cycle stamps).
pub(super) fn cycles_since(t0: Instant, mhz: f64) -> u64 {
    (t0.elapsed().as_nanos() as f64 * mhz / 1000.0) as u64
}
