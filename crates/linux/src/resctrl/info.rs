//! What a resctrl mount offers, read from its `info/` directory and the
//! root group's `schemata` (the cache domain ids): [`Capabilities`], and
//! the checks a schemata line must pass before it is written.

use super::fsio::{read, read_hex, read_u32};
use super::schemata::{Resource, Schemata, SchemataLine, Value};
use crate::error::{Error, Result};
use cachepart_units::Kind as _;
use cachepart_units::{MaskRules, WayMask};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A cache resource's allocation rules (`info/L3/`, `info/L3CODE/`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheInfo {
    /// `cbm_mask`: every way the hardware has.
    pub cbm_mask: WayMask,
    /// `min_cbm_bits`.
    pub min_cbm_bits: u32,
    /// `num_closids`.
    pub num_closids: u32,
    /// `shareable_bits`: ways other agents (I/O) may also fill.
    pub shareable_bits: WayMask,
    /// `sparse_masks` (absent before Linux 6.8: false).
    pub sparse_masks: bool,
}

impl CacheInfo {
    /// Number of ways.
    pub fn ways(&self) -> u32 {
        self.cbm_mask.count()
    }

    /// The mask rules resctrl applies (`cbm_validate`).
    pub fn rules(&self) -> MaskRules {
        MaskRules {
            ways: self.ways(),
            min_bits: self.min_cbm_bits,
            sparse_allowed: self.sparse_masks,
        }
    }
}

/// What the values of the `MB` line mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MbUnits {
    /// Percent of the full bandwidth (Intel), 1..=100.
    Percent,
    /// MBps, with the `mba_MBps` mount option (the software controller).
    Mbps,
    /// AMD's absolute units of 1/8 GB/s, up to 2048.
    AmdUnits,
}

/// Memory bandwidth allocation (`info/MB/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MbInfo {
    /// `bandwidth_gran`: values are rounded up to a multiple of it.
    pub bandwidth_gran: u32,
    /// `min_bandwidth`.
    pub min_bandwidth: u32,
    /// `num_closids`.
    pub num_closids: u32,
    /// `delay_linear`, when the file exists.
    pub delay_linear: Option<bool>,
    /// The units of the values.
    pub units: MbUnits,
}

impl MbInfo {
    /// The largest value the kernel accepts.
    pub fn max(&self) -> u32 {
        match self.units {
            MbUnits::Percent => 100,
            MbUnits::Mbps => u32::MAX,
            MbUnits::AmdUnits => 2048,
        }
    }
}

/// Cache monitoring (`info/L3_MON/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MonInfo {
    /// `num_rmids`.
    pub num_rmids: u32,
    /// `mon_features`: `llc_occupancy`, `mbm_total_bytes`, `mbm_local_bytes`.
    pub mon_features: Vec<String>,
}

/// Everything a resctrl mount offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// The mount read.
    pub mount: PathBuf,
    /// Cache resources by name (L3, or L3CODE and L3DATA with CDP; L2...).
    pub caches: BTreeMap<Resource, CacheInfo>,
    /// Memory bandwidth allocation, if present.
    pub mb: Option<MbInfo>,
    /// L3 monitoring, if present.
    pub mon: Option<MonInfo>,
    /// The domain ids of each resource, from the root group's schemata.
    pub domains: BTreeMap<Resource, Vec<u32>>,
}

fn read_bool(path: &Path) -> Result<bool> {
    match read_u32(path)? {
        0 => Ok(false),
        1 => Ok(true),
        n => Err(Error::parse(path, format!("expected 0 or 1, found {n}"))),
    }
}

fn optional<T>(path: &Path, f: impl FnOnce(&Path) -> Result<T>) -> Result<Option<T>> {
    if path.exists() {
        f(path).map(Some)
    } else {
        Ok(None)
    }
}

impl Capabilities {
    /// Reads `mount/info/` and `mount/schemata`. `mba_mbps` says whether
    /// the mount has the `mba_MBps` option (see [`super::mount`]).
    pub fn read(mount: &Path, mba_mbps: bool) -> Result<Self> {
        let info = mount.join("info");
        if !info.is_dir() {
            return Err(Error::parse(
                mount,
                "no info/ directory: resctrl is not mounted here (mount -t resctrl resctrl /sys/fs/resctrl)",
            ));
        }
        let mut caches = BTreeMap::new();
        for r in Resource::all().filter(|r| r.is_cache()) {
            let dir = info.join(r.name());
            if !dir.is_dir() {
                continue;
            }
            let ci = CacheInfo {
                cbm_mask: WayMask(read_hex(&dir.join("cbm_mask"))?),
                min_cbm_bits: read_u32(&dir.join("min_cbm_bits"))?,
                num_closids: read_u32(&dir.join("num_closids"))?,
                shareable_bits: WayMask(read_hex(&dir.join("shareable_bits"))?),
                sparse_masks: optional(&dir.join("sparse_masks"), read_bool)?.unwrap_or(false),
            };
            caches.insert(r, ci);
        }
        let root_path = mount.join("schemata");
        let root = Schemata::parse(&read(&root_path)?, &root_path)?;
        let mbdir = info.join("MB");
        let mb = if mbdir.is_dir() {
            let bandwidth_gran = read_u32(&mbdir.join("bandwidth_gran"))?;
            let min_bandwidth = read_u32(&mbdir.join("min_bandwidth"))?;
            let delay_linear = optional(&mbdir.join("delay_linear"), read_bool)?;
            // AMD: linear delay absent, granularity 1, no minimum, and the
            // root group's default is 2048 units rather than 100 percent.
            let root_max = root
                .lines
                .get(&Resource::Mb)
                .and_then(|l| l.domains.values().next().copied());
            let units = if mba_mbps {
                MbUnits::Mbps
            } else if root_max.is_some_and(|v| v == Value::Bandwidth(2048))
                || (delay_linear == Some(false) && bandwidth_gran == 1 && min_bandwidth == 0)
            {
                MbUnits::AmdUnits
            } else {
                MbUnits::Percent
            };
            Some(MbInfo {
                bandwidth_gran,
                min_bandwidth,
                num_closids: read_u32(&mbdir.join("num_closids"))?,
                delay_linear,
                units,
            })
        } else {
            None
        };
        let mondir = info.join("L3_MON");
        let mon = if mondir.is_dir() {
            Some(MonInfo {
                num_rmids: read_u32(&mondir.join("num_rmids"))?,
                mon_features: read(&mondir.join("mon_features"))?
                    .split_whitespace()
                    .map(str::to_string)
                    .collect(),
            })
        } else {
            None
        };
        let domains = root.lines.keys().map(|&r| (r, root.domains(r))).collect();
        Ok(Capabilities {
            mount: mount.to_path_buf(),
            caches,
            mb,
            mon,
            domains,
        })
    }

    /// True when L3 code/data prioritization is on.
    pub fn cdp(&self) -> bool {
        self.caches.contains_key(&Resource::L3Code)
    }

    /// CLOSIDs usable at once: the smallest `num_closids` of the resources
    /// (the root group holds one).
    pub fn num_closids(&self) -> u32 {
        self.caches
            .values()
            .map(|c| c.num_closids)
            .chain(self.mb.iter().map(|m| m.num_closids))
            .min()
            .unwrap_or(0)
    }

    /// The resources this mount has, by name, for messages.
    pub fn resource_names(&self) -> String {
        let mut names: Vec<&str> = self.caches.keys().map(|r| r.name()).collect();
        if self.mb.is_some() {
            names.push("MB");
        }
        if self.mon.is_some() {
            names.push("L3_MON");
        }
        if names.is_empty() {
            "nothing".into()
        } else {
            names.join(", ")
        }
    }

    /// Checks a line as the kernel would at write time, with its words.
    pub fn check_line(&self, line: &SchemataLine) -> Result<()> {
        let invalid = |reason: String| Error::Invalid {
            resource: line.resource.name().into(),
            reason,
        };
        let known = self.domains.get(&line.resource).ok_or_else(|| {
            invalid(format!(
                "Unknown or unsupported resource name '{}'",
                line.resource
            ))
        })?;
        for (&id, value) in &line.domains {
            if !known.contains(&id) {
                return Err(invalid(format!(
                    "Unknown or unsupported domain id {id} (domains: {known:?})"
                )));
            }
            match (*value, line.resource) {
                (Value::Mask(m), r) if r.is_cache() => {
                    let ci = &self.caches[&r];
                    ci.rules()
                        .check(m)
                        .map_err(|e| invalid(format!("domain {id}: {e}")))?;
                }
                (Value::Bandwidth(b), Resource::Mb) => {
                    let mb = self.mb.as_ref().ok_or_else(|| {
                        invalid("Unknown or unsupported resource name 'MB'".into())
                    })?;
                    if b < mb.min_bandwidth || b > mb.max() {
                        return Err(invalid(format!(
                            "domain {id}: MB value {b} out of range [{},{}]",
                            mb.min_bandwidth,
                            mb.max()
                        )));
                    }
                    if mb.units == MbUnits::Percent && b % mb.bandwidth_gran.max(1) != 0 {
                        return Err(invalid(format!(
                            "domain {id}: MB value {b} is not a multiple of bandwidth_gran {} (the kernel would round it up)",
                            mb.bandwidth_gran
                        )));
                    }
                }
                _ => {
                    return Err(invalid(format!(
                        "domain {id}: value {value} of the wrong kind"
                    )))
                }
            }
        }
        Ok(())
    }
}
