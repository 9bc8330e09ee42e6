//! The RDT platforms cachepart models for tests and development: a
//! [`Preset`] names one, and its [`RdtPlatform`] holds the numbers (resources
//! with their allocation rules, cache domains, CPUs and RMIDs) and the
//! `info/` files the kernel derives from them. Both the plain directory
//! trees of [`crate::fake`] and the FUSE mount of [`crate::emulate`] are
//! written from here, so the two cannot disagree.

/// A platform to model, by its kebab-case name (`skylake`, `cdp`, `amd`).
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Intel Skylake server: 2 L3 domains, 11 ways (7ff), min 1 bit, 16
    /// CLOSIDs, MB gran 10 / min 10, L3_MON with 224 RMIDs.
    Skylake,
    /// Skylake with CDP on: L3CODE and L3DATA, 8 CLOSIDs.
    Cdp,
    /// AMD: 16 ways (ffff), sparse masks, min 0 bits, MB in 1/8 GB/s up to
    /// 2048, 16 CLOSIDs, 256 RMIDs.
    Amd,
}

/// A cache resource (`L3`, or `L3CODE`/`L3DATA` with CDP).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheResource {
    /// The schema name (`L3`, `L3CODE`, `L3DATA`).
    pub name: &'static str,
    /// Bits of the capacity bitmask (`cbm_mask` has this many ones).
    pub cbm_len: u32,
    /// `min_cbm_bits`.
    pub min_cbm_bits: u32,
    /// `num_closids`.
    pub num_closids: u32,
    /// `sparse_masks`: non-contiguous masks allowed (AMD).
    pub sparse: bool,
}

/// Memory bandwidth allocation (`MB`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MbResource {
    /// `bandwidth_gran`: values are rounded up to a multiple of it.
    pub gran: u32,
    /// `min_bandwidth`.
    pub min: u32,
    /// The largest value (100 percent, or AMD's 2048 units).
    pub max: u32,
    /// `delay_linear`.
    pub delay_linear: bool,
    /// Whether the kernel refuses non-linear delay (Intel: yes, AMD: no).
    pub needs_linear: bool,
    /// `num_closids`.
    pub num_closids: u32,
}

/// One emulated platform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RdtPlatform {
    /// Cache resources, in the kernel's schema order.
    pub caches: Vec<CacheResource>,
    /// Memory bandwidth allocation, if any.
    pub mb: Option<MbResource>,
    /// `num_rmids` of `L3_MON`.
    pub num_rmids: u32,
    /// The L3 cache domain ids.
    pub domains: Vec<u32>,
    /// Online CPUs (0..cpus), split evenly over the domains.
    pub cpus: u32,
    /// Bytes of L3 per domain (for the `size` file and `llc_occupancy`).
    pub l3_bytes: u64,
    /// The CPU can do CDP (it pads schema names as if `L3CODE` existed).
    pub cdp_capable: bool,
}

impl RdtPlatform {
    /// The platform of a preset.
    pub fn of(preset: Preset) -> Self {
        let l3 = |name, cbm_len, min_cbm_bits, num_closids, sparse| CacheResource {
            name,
            cbm_len,
            min_cbm_bits,
            num_closids,
            sparse,
        };
        match preset {
            Preset::Skylake => RdtPlatform {
                caches: vec![l3("L3", 11, 1, 16, false)],
                mb: Some(MbResource {
                    gran: 10,
                    min: 10,
                    max: 100,
                    delay_linear: true,
                    needs_linear: true,
                    num_closids: 16,
                }),
                num_rmids: 224,
                domains: vec![0, 1],
                cpus: 16,
                l3_bytes: 11 * 2560 * 1024,
                cdp_capable: true,
            },
            // Skylake with CDP on: code and data masks, half the CLOSIDs
            Preset::Cdp => {
                let mut p = RdtPlatform::of(Preset::Skylake);
                p.caches = vec![l3("L3CODE", 11, 1, 8, false), l3("L3DATA", 11, 1, 8, false)];
                if let Some(mb) = &mut p.mb {
                    mb.num_closids = 8;
                }
                p
            }
            Preset::Amd => RdtPlatform {
                caches: vec![l3("L3", 16, 0, 16, true)],
                mb: Some(MbResource {
                    gran: 1,
                    min: 0,
                    max: 2048,
                    delay_linear: false,
                    needs_linear: false,
                    num_closids: 16,
                }),
                num_rmids: 256,
                domains: vec![0, 1],
                cpus: 16,
                l3_bytes: 32 << 20,
                cdp_capable: true,
            },
        }
    }

    /// CLOSIDs usable at once: the smallest `num_closids`.
    pub fn num_closids(&self) -> u32 {
        self.caches
            .iter()
            .map(|c| c.num_closids)
            .chain(self.mb.iter().map(|m| m.num_closids))
            .min()
            .unwrap_or(1)
    }

    /// The width the kernel pads schema names to (`max_name_width`): the
    /// longest name, counting a CDP-capable cache's name as if it had its
    /// `CODE` suffix, so the table keeps its shape across mounts.
    pub fn name_width(&self) -> usize {
        let cdp_on = self.caches.iter().any(|c| c.name.ends_with("CODE"));
        self.caches
            .iter()
            .map(|c| c.name.len() + if self.cdp_capable && !cdp_on { 4 } else { 0 })
            .chain(self.mb.iter().map(|_| 2))
            .max()
            .unwrap_or(0)
    }

    /// The resctrl mount options this platform stands for, as the kernel
    /// lists them in `/proc/mounts`: `cdp` when L3 has `L3CODE`/`L3DATA`,
    /// `cdpl2` when L2 has `L2CODE`/`L2DATA`.
    pub fn mount_options(&self) -> Vec<&'static str> {
        let mut o = Vec::new();
        if self.caches.iter().any(|c| c.name == "L3CODE") {
            o.push("cdp");
        }
        if self.caches.iter().any(|c| c.name == "L2CODE") {
            o.push("cdpl2");
        }
        o
    }

    /// The L3 domain of a CPU.
    pub fn domain_of_cpu(&self, cpu: u32) -> u32 {
        let per = (self.cpus / self.domains.len().max(1) as u32).max(1);
        self.domains[((cpu / per) as usize).min(self.domains.len() - 1)]
    }

    /// Every `info/` file but `last_cmd_status`: (path under `info/`,
    /// contents).
    pub fn info_files(&self) -> Vec<(String, String)> {
        let mut f = Vec::new();
        for c in &self.caches {
            let d = c.name;
            f.push((
                format!("{d}/cbm_mask"),
                format!("{:x}\n", (1u64 << c.cbm_len) - 1),
            ));
            f.push((format!("{d}/min_cbm_bits"), format!("{}\n", c.min_cbm_bits)));
            f.push((format!("{d}/num_closids"), format!("{}\n", c.num_closids)));
            f.push((format!("{d}/shareable_bits"), "0\n".into()));
            f.push((
                format!("{d}/sparse_masks"),
                format!("{}\n", u8::from(c.sparse)),
            ));
        }
        if let Some(mb) = &self.mb {
            f.push(("MB/bandwidth_gran".into(), format!("{}\n", mb.gran)));
            f.push(("MB/min_bandwidth".into(), format!("{}\n", mb.min)));
            f.push((
                "MB/delay_linear".into(),
                format!("{}\n", u8::from(mb.delay_linear)),
            ));
            f.push(("MB/num_closids".into(), format!("{}\n", mb.num_closids)));
        }
        f.push(("L3_MON/num_rmids".into(), format!("{}\n", self.num_rmids)));
        f.push((
            "L3_MON/mon_features".into(),
            "llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n".into(),
        ));
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_pad_names_as_the_kernel_does() {
        assert_eq!(RdtPlatform::of(Preset::Skylake).name_width(), 6);
        assert_eq!(RdtPlatform::of(Preset::Cdp).name_width(), 6);
        assert_eq!(RdtPlatform::of(Preset::Skylake).num_closids(), 16);
        assert_eq!(RdtPlatform::of(Preset::Cdp).num_closids(), 8);
        let p = RdtPlatform::of(Preset::Skylake);
        assert_eq!(
            (p.domain_of_cpu(0), p.domain_of_cpu(7), p.domain_of_cpu(8)),
            (0, 0, 1)
        );
        let info = p.info_files();
        assert!(info.contains(&("L3/cbm_mask".into(), "7ff\n".into())));
    }
}
