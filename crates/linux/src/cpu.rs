//! The CPU model (vendor, family, model from `/proc/cpuinfo`) and what
//! cachepart knows of it: the raw perf event that counts cycles stalled on
//! L2 misses, and whether its prefetcher (MSR 0x1A4) and clock-modulation
//! (MSR 0x19A) bits are the ones cachepart writes.
//!
//! The table is deliberately short: a model is listed only where Intel's
//! SDM (volume 3B, chapter 14.7, and volume 4's MSR tables) and its event
//! lists give the bits. Everything else is unknown, and MSR writes are
//! refused there.

use crate::error::{Error, Result};
use std::path::Path;

/// A raw perf event: Intel's event select, unit mask and counter mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawEvent {
    /// The event's name in Intel's lists.
    pub name: &'static str,
    /// Event select.
    pub event: u8,
    /// Unit mask.
    pub umask: u8,
    /// Counter mask (cmask): count cycles with at least this many.
    pub cmask: u8,
}

impl RawEvent {
    /// The `config` of a `PERF_TYPE_RAW` event on Intel's core PMU
    /// (`event | umask << 8 | cmask << 24`, as perf's `cpu/event=..,umask=..,cmask=../`).
    pub fn config(&self) -> u64 {
        u64::from(self.event) | u64::from(self.umask) << 8 | u64::from(self.cmask) << 24
    }
}

/// CYCLE_ACTIVITY.STALLS_L2_MISS (Skylake and later; Haswell and Broadwell
/// call the same encoding STALLS_L2_PENDING): event A3H, umask 05H, cmask 5.
const STALLS_L2_MISS: RawEvent = RawEvent {
    name: "CYCLE_ACTIVITY.STALLS_L2_MISS",
    event: 0xa3,
    umask: 0x05,
    cmask: 5,
};
const STALLS_L2_PENDING: RawEvent = RawEvent {
    name: "CYCLE_ACTIVITY.STALLS_L2_PENDING",
    ..STALLS_L2_MISS
};

/// What cachepart knows of one family of Intel models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelInfo {
    /// Microarchitecture name.
    pub name: &'static str,
    /// The L2-miss stall event, where the model has one.
    pub stall_event: Option<RawEvent>,
    /// Extended clock modulation (16 duty steps, CPUID.06H:EAX bit 5).
    pub extended_modulation: bool,
}

/// Intel family-6 models whose MSR 0x1A4 bits 0-3 are the four
/// prefetchers and whose MSR 0x19A is on-demand clock modulation.
const KNOWN: [(&[u8], ModelInfo); 7] = [
    (
        &[0x1a, 0x1e, 0x1f, 0x2e, 0x25, 0x2c, 0x2f],
        ModelInfo {
            name: "Nehalem/Westmere",
            stall_event: None,
            extended_modulation: false,
        },
    ),
    (
        &[0x2a, 0x2d, 0x3a, 0x3e],
        ModelInfo {
            name: "Sandy Bridge/Ivy Bridge",
            stall_event: None,
            extended_modulation: true,
        },
    ),
    (
        &[0x3c, 0x3f, 0x45, 0x46, 0x3d, 0x47, 0x4f, 0x56],
        ModelInfo {
            name: "Haswell/Broadwell",
            stall_event: Some(STALLS_L2_PENDING),
            extended_modulation: true,
        },
    ),
    (
        &[0x4e, 0x5e, 0x8e, 0x9e, 0xa5, 0xa6],
        ModelInfo {
            name: "Skylake (client)",
            stall_event: Some(STALLS_L2_MISS),
            extended_modulation: true,
        },
    ),
    (
        &[0x55],
        ModelInfo {
            name: "Skylake/Cascade Lake server",
            stall_event: Some(STALLS_L2_MISS),
            extended_modulation: true,
        },
    ),
    (
        &[0x6a, 0x6c, 0x7d, 0x7e],
        ModelInfo {
            name: "Ice Lake",
            stall_event: Some(STALLS_L2_MISS),
            extended_modulation: true,
        },
    ),
    (
        &[0x8f],
        ModelInfo {
            name: "Sapphire Rapids",
            stall_event: None,
            extended_modulation: true,
        },
    ),
];

/// The CPU as `/proc/cpuinfo` describes its first processor.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuModel {
    /// `vendor_id` (`GenuineIntel`, `AuthenticAMD`).
    pub vendor: String,
    /// `cpu family`.
    pub family: u32,
    /// `model`.
    pub model: u32,
    /// `model name`.
    pub model_name: String,
    /// `cpu MHz` of the first processor, when listed.
    pub mhz: Option<f64>,
}

impl CpuModel {
    /// The clock the Linux machine converts wall time to cycles with (its
    /// intervals' `end_cycles`, the controllers' periods): the first
    /// processor's MHz under `proc_root`, else 1000.
    pub fn clock_mhz(proc_root: &Path) -> f64 {
        CpuModel::read(proc_root)
            .ok()
            .and_then(|c| c.mhz)
            .unwrap_or(1000.0)
    }

    /// Reads `proc_root/cpuinfo`.
    pub fn read(proc_root: &Path) -> Result<CpuModel> {
        let path = proc_root.join("cpuinfo");
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        CpuModel::parse(&text, &path)
    }

    /// Parses the text of `/proc/cpuinfo` (`path` names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<CpuModel> {
        let first = text.split("\n\n").next().unwrap_or("");
        let field = |key: &str| {
            first.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        let number = |key: &str| -> Result<u32> {
            let v = field(key).ok_or_else(|| {
                Error::parse(path, format!("no '{key}' line for the first processor"))
            })?;
            v.parse()
                .map_err(|_| Error::parse(path, format!("'{key}': expected a number, found '{v}'")))
        };
        Ok(CpuModel {
            vendor: field("vendor_id").unwrap_or_default(),
            family: number("cpu family")?,
            model: number("model")?,
            model_name: field("model name").unwrap_or_default(),
            mhz: field("cpu MHz").and_then(|v| v.parse().ok()),
        })
    }

    /// What cachepart knows of this model, if it is in the table.
    pub fn known(&self) -> Option<ModelInfo> {
        if self.vendor != "GenuineIntel" || self.family != 6 {
            return None;
        }
        KNOWN
            .iter()
            .find(|(models, _)| models.iter().any(|&m| u32::from(m) == self.model))
            .map(|(_, info)| *info)
    }

    /// `GenuineIntel family 6 model 0x55 (Intel Xeon ...)`.
    pub fn describe(&self) -> String {
        format!(
            "{} family {} model {:#x} ({})",
            self.vendor, self.family, self.model, self.model_name
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SKX: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Gold 6138 CPU @ 2.00GHz\ncpu MHz\t\t: 2000.000\n\nprocessor\t: 1\nmodel\t\t: 1\n";

    #[test]
    fn skylake_server_is_known_with_its_stall_event() {
        let m = CpuModel::parse(SKX, Path::new("cpuinfo")).unwrap();
        assert_eq!((m.family, m.model, m.mhz), (6, 0x55, Some(2000.0)));
        let k = m.known().unwrap();
        let e = k.stall_event.unwrap();
        assert_eq!(e.name, "CYCLE_ACTIVITY.STALLS_L2_MISS");
        // perf's cpu/event=0xa3,umask=0x05,cmask=5/
        assert_eq!(e.config(), 0x0500_05a3);
        assert!(m.describe().contains("model 0x55"));
    }

    #[test]
    fn amd_and_unknown_models_are_not_known() {
        let amd = SKX.replace("GenuineIntel", "AuthenticAMD");
        assert!(CpuModel::parse(&amd, Path::new("c"))
            .unwrap()
            .known()
            .is_none());
        let odd = SKX.replace(": 85", ": 250");
        assert!(CpuModel::parse(&odd, Path::new("c"))
            .unwrap()
            .known()
            .is_none());
        let e = CpuModel::parse("vendor_id : x\n", Path::new("/p/cpuinfo")).unwrap_err();
        assert!(
            e.to_string().contains("/p/cpuinfo: no 'cpu family' line"),
            "{e}"
        );
    }
}
