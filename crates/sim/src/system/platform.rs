//! A platform as configured: cores, their private caches, the shared LLC,
//! TLBs, memory and timing; TOML- or JSON-loadable.
//!
//! ```
//! use cachepart_sim::system::PlatformConfig;
//! let p = PlatformConfig::from_toml_str(r#"
//!     name = "quad"
//!     cores = 4
//!     [core.l1i]
//!     size-bytes = 32768
//!     ways = 8
//!     line-bytes = 64
//!     [core.l1d]
//!     size-bytes = 32768
//!     ways = 8
//!     line-bytes = 64
//!     [core.l2]
//!     size-bytes = 262144
//!     ways = 4
//!     line-bytes = 64
//!     [llc]
//!     size-bytes = 8388608
//!     ways = 16
//!     line-bytes = 64
//!     slices = 4
//!     [memory]
//!     size-bytes = 1073741824
//!     [timing]
//!     freq-ghz = 3.0
//! "#).unwrap();
//! assert_eq!(p.platform().ways, 16);
//! ```

use std::path::Path;

use cachepart_machine::Platform;
use cachepart_units::MaskRules;
use serde::{Deserialize, Serialize};

use super::clock_modulation::ClockModulation;
use super::error::SystemError;
use super::timing::TimingConfig;
use crate::geometry::{CacheConfig, Geometry};
use crate::hierarchy::HierarchyConfig;
use crate::memory::page_walk::TABLE_REGION;
use crate::memory::FRAME_BYTES;
use crate::memory::{MemoryConfig, MemoryError, SwapConfig, SwapMap, TlbConfig, WalkMode};
use crate::prefetch::PrefetchPlatform;
use crate::victim::{VictimCache, VictimConfig};
use crate::Mode;

/// A simulated multicore platform.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct PlatformConfig {
    /// A short name (`skylake-11w`).
    pub name: String,
    /// Number of cores.
    pub cores: u32,
    /// Every core's private levels, mode and LLC inclusion.
    pub core: HierarchyConfig,
    /// The shared LLC (with `slices`).
    pub llc: CacheConfig,
    /// Every core's TLBs.
    #[serde(default)]
    pub tlb: TlbConfig,
    /// Physical memory.
    pub memory: MemoryConfig,
    /// Latencies, bandwidth and scheduling.
    #[serde(default)]
    pub timing: TimingConfig,
    /// Fewest ways a CAT mask may have (`min_cbm_bits`).
    #[serde(default = "one")]
    pub mask_min_bits: u32,
    /// Whether CAT masks may be non-contiguous (AMD: yes, Intel: no).
    #[serde(default)]
    pub sparse_masks: bool,
    /// The cores' hardware prefetchers (none when the section is absent).
    #[serde(default, skip_serializing_if = "PrefetchPlatform::is_absent")]
    pub prefetchers: PrefetchPlatform,
    /// The cores' duty-cycle modulation (none when the section is
    /// absent: every app runs at full speed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_modulation: Option<ClockModulation>,
    /// SWAP's bit swap between pseudo-physical and physical addresses
    /// (section `[swap]`, checked even when off; used only when its
    /// `enabled` is set, by a scenario's `swap` key; without it
    /// allocators hand out physical frames, as before). See
    /// docs/simulator-swap.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap: Option<SwapConfig>,
    /// An exclusive victim cache below the LLC, partitioned by the LLC's
    /// colors (section `[l3-victim]`: the Power5's L3; see
    /// [`crate::victim`]). Absent: LLC misses go to memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l3_victim: Option<VictimConfig>,
}

fn one() -> u32 {
    1
}

/// Most cores a platform may have. The largest machines under one
/// operating system today have a few hundred cores (a two-socket AMD EPYC
/// 9965 has 384); 1024 leaves margin while keeping a mistyped count from
/// sizing the per-core hierarchies (caches and TLBs of every core) beyond
/// any host.
pub const MAX_CORES: u32 = 1024;

/// A refusal of the `[l3-victim]` section, named by its key.
fn victim_error(e: crate::victim::VictimError) -> SystemError {
    SystemError::Config {
        field: format!("l3-victim.{}", e.field),
        reason: e.reason,
    }
}

impl PlatformConfig {
    /// A platform of `cores` cores with these caches and memory, and every
    /// other section at its platform-file default: default TLBs and
    /// timing, one-way minimum CAT masks, contiguous masks only, no
    /// prefetchers, no duty-cycle modulation, no SWAP. Change the rest
    /// with struct update syntax (`PlatformConfig { tlb, ..PlatformConfig::new(..) }`).
    pub fn new(
        name: impl Into<String>,
        cores: u32,
        core: HierarchyConfig,
        llc: CacheConfig,
        memory: MemoryConfig,
    ) -> PlatformConfig {
        PlatformConfig {
            name: name.into(),
            cores,
            core,
            llc,
            tlb: TlbConfig::default(),
            memory,
            timing: TimingConfig::default(),
            mask_min_bits: one(),
            sparse_masks: false,
            prefetchers: PrefetchPlatform::default(),
            clock_modulation: None,
            swap: None,
            l3_victim: None,
        }
    }

    /// Parses a platform from TOML text.
    pub fn from_toml_str(text: &str) -> Result<PlatformConfig, SystemError> {
        toml::from_str(text).map_err(|e| SystemError::Parse {
            path: "<string>".into(),
            message: cachepart_units::input::plain_type_names(&e.to_string()),
        })
    }

    /// Reads a platform file: TOML, or JSON if the name ends in `.json`;
    /// `-` reads TOML from standard input.
    pub fn load(path: impl AsRef<Path>) -> Result<PlatformConfig, SystemError> {
        let path = path.as_ref();
        let text = cachepart_units::input::read_text(path).map_err(|source| SystemError::Io {
            path: path.into(),
            source,
        })?;
        let parsed = if path.extension().is_some_and(|e| e == "json") {
            serde_json::from_str(&text).map_err(|e| e.to_string())
        } else {
            toml::from_str(&text).map_err(|e| e.to_string())
        };
        parsed.map_err(|message| SystemError::Parse {
            path: path.into(),
            message: cachepart_units::input::plain_type_names(&message),
        })
    }

    /// The rules CAT masks follow on this platform.
    pub fn mask_rules(&self) -> MaskRules {
        MaskRules {
            ways: self.llc.ways,
            min_bits: self.mask_min_bits,
            sparse_allowed: self.sparse_masks,
        }
    }

    /// What a policy may know of it.
    pub fn platform(&self) -> Platform {
        Platform {
            name: self.name.clone(),
            ways: self.llc.ways,
            mask_rules: self.mask_rules(),
            max_bandwidth_mbps: Some(self.timing.dram_bandwidth_gbps * 1000.0),
        }
    }

    /// The first address bit above every private cache's set index
    /// (`line bits + log2(sets)` of the largest; 0 when none is valid).
    pub fn private_index_end(&self) -> u32 {
        [
            Some(&self.core.l1i),
            Some(&self.core.l1d),
            self.core.l2.as_ref(),
        ]
        .into_iter()
        .flatten()
        .filter_map(|c| c.geometry().ok())
        .map(|g| g.line_bits() + g.sets().trailing_zeros())
        .max()
        .unwrap_or(0)
    }

    /// The swap runs use: the `[swap]` section's, checked against the
    /// LLC, the private caches and the memory size, when it is enabled
    /// (`None` without the section or when it is off). A refusal names
    /// its field (`swap.candidate-bits`, ...).
    pub fn swap_map(&self) -> Result<Option<SwapMap>, SystemError> {
        let m = self.declared_swap_map()?;
        Ok(m.filter(|_| self.swap.as_ref().is_some_and(|s| s.enabled)))
    }

    /// The `[swap]` section's map, checked, whether enabled or not.
    fn declared_swap_map(&self) -> Result<Option<SwapMap>, SystemError> {
        let Some(cfg) = &self.swap else {
            return Ok(None);
        };
        let llc = self.llc.geometry().map_err(|e| SystemError::Config {
            field: "llc".into(),
            reason: e.to_string(),
        })?;
        cfg.map(&llc, self.private_index_end(), self.memory.size_bytes)
            .map(Some)
            .map_err(|e| match e {
                MemoryError::Config { field, reason } => SystemError::Config {
                    field: field.into(),
                    reason,
                },
                other => SystemError::Memory {
                    app: None,
                    source: other,
                },
            })
    }

    /// An empty L3 victim cache as the `[l3-victim]` section configures
    /// it, checked against the LLC and the page size (`None` without the
    /// section). A refusal names its field (`l3-victim.line-bytes`, ...).
    pub fn l3_victim_cache(&self) -> Result<Option<VictimCache>, SystemError> {
        let Some(cfg) = &self.l3_victim else {
            return Ok(None);
        };
        self.l3_victim_geometry()?;
        VictimCache::new(cfg, &self.llc, FRAME_BYTES)
            .map(Some)
            .map_err(victim_error)
    }

    /// The geometry of the `[l3-victim]` section, checked as
    /// [`Self::l3_victim_cache`] checks it, without allocating the cache.
    pub(super) fn l3_victim_geometry(&self) -> Result<Option<Geometry>, SystemError> {
        let Some(cfg) = &self.l3_victim else {
            return Ok(None);
        };
        if self.core.mode == Mode::Cachegrind {
            return Err(SystemError::Config {
                field: "l3-victim".into(),
                reason: "the cachegrind mode has no level below the LLC".into(),
            });
        }
        cfg.check(&self.llc, FRAME_BYTES)
            .map(Some)
            .map_err(victim_error)
    }

    /// Checks what the parts' own constructors do not.
    pub fn check(&self) -> Result<(), SystemError> {
        if self.cores == 0 || self.cores > MAX_CORES {
            return Err(SystemError::Config {
                field: "cores".into(),
                reason: format!(
                    "{} is outside 1..={MAX_CORES} (a platform needs at least one core; \
                     {MAX_CORES} is above the largest machines' core counts)",
                    self.cores
                ),
            });
        }
        if self.mask_min_bits == 0 || self.mask_min_bits > self.llc.ways {
            return Err(SystemError::Config {
                field: "mask-min-bits".into(),
                reason: format!("must be in 1..={} (the LLC's ways)", self.llc.ways),
            });
        }
        self.prefetchers
            .check()
            .map_err(|(field, reason)| SystemError::Config { field, reason })?;
        if let Some(m) = &self.clock_modulation {
            m.check()?;
        }
        self.declared_swap_map()?;
        // the victim cache's geometry only: building it would allocate
        // its arrays before the size check below
        self.l3_victim_geometry()?;
        if self.tlb.walk == WalkMode::Hierarchy && self.memory.size_bytes > TABLE_REGION {
            return Err(SystemError::Config {
                field: "tlb.walk".into(),
                reason: format!(
                    "\"hierarchy\" places page tables at {TABLE_REGION:#x}, inside memory.size-bytes {}",
                    self.memory.size_bytes
                ),
            });
        }
        self.check_tlb_arrays()?;
        super::timing::check_tlb_limits(&self.tlb)?;
        self.timing.check()?;
        self.check_paging_costs()?;
        self.check_model_size()
    }

    /// Each TLB array's entries and ways (`tlb.stlb`, `tlb.psc.pd`, ...),
    /// checked as building it would, so that `platform show` refuses what a
    /// run would.
    fn check_tlb_arrays(&self) -> Result<(), SystemError> {
        let t = &self.tlb;
        for (name, cfg) in [
            ("l1d-4k", t.l1d_4k),
            ("l1d-2m", t.l1d_2m),
            ("l1i-4k", t.l1i_4k),
            ("l1i-2m", t.l1i_2m),
            ("stlb", t.stlb),
            ("psc.pd", t.psc.pd),
            ("psc.pdpt", t.psc.pdpt),
            ("psc.pml4", t.psc.pml4),
        ] {
            cfg.check(name).map_err(|_| SystemError::Config {
                field: format!("tlb.{name}"),
                reason: format!(
                    "{} entries in {} ways: expected 0 entries, or entries / ways a power of two",
                    cfg.entries, cfg.ways
                ),
            })?;
        }
        Ok(())
    }

    /// `memory.costs`, checked with the platform rather than when its
    /// memory is built, so that a platform file's bad cost is named by its
    /// key (`memory.costs.page-in-us`) and file.
    fn check_paging_costs(&self) -> Result<(), SystemError> {
        self.memory.costs.check().map_err(|e| match e {
            crate::memory::MemoryError::Config { field, reason } => SystemError::Config {
                field: format!("memory.{field}"),
                reason,
            },
            source => SystemError::Memory { app: None, source },
        })
    }

    /// Checks that what the simulator allocates for this platform before
    /// its first access (every core's caches, TLBs and prefetchers, the
    /// LLC, the victim cache and the memory's bookkeeping: see
    /// [`super::host_footprint`]) fits in the host's memory, before any of
    /// it is allocated (each part alone may be valid and still far beyond
    /// the host: `llc.size-bytes = 2^50`). A refusal names the key that
    /// needs the most.
    fn check_model_size(&self) -> Result<(), SystemError> {
        super::host_footprint::check_within(self, cachepart_units::host_memory::host_memory_bytes())
    }
}
