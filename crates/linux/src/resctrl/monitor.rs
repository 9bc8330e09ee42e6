//! Monitoring counters of a group (`mon_data/mon_L3_NN/`): LLC occupancy
//! and memory bandwidth bytes, with "Unavailable" and counter wrap handled.

use super::fsio::read;
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// One L3 domain's counters; `None` where the file is absent or the kernel
/// answers `Unavailable` (RMID not yet counted) or `Error`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DomainCounters {
    /// `llc_occupancy`, bytes.
    pub llc_occupancy: Option<u64>,
    /// `mbm_total_bytes` (running total).
    pub mbm_total_bytes: Option<u64>,
    /// `mbm_local_bytes` (running total).
    pub mbm_local_bytes: Option<u64>,
}

/// A group's counters, by L3 domain id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MonReading {
    /// Domain id to counters.
    pub domains: BTreeMap<u32, DomainCounters>,
}

fn counter(path: &Path) -> Result<Option<u64>> {
    if !path.exists() {
        return Ok(None);
    }
    let text = read(path)?;
    match text.trim() {
        "Unavailable" | "Error" => Ok(None),
        t => t.parse().map(Some).map_err(|_| {
            Error::parse(
                path,
                format!("expected a byte count or 'Unavailable', found '{t}'"),
            )
        }),
    }
}

impl MonReading {
    /// Reads `group_dir/mon_data/mon_L3_*`.
    pub fn read(group_dir: &Path) -> Result<Self> {
        let dir = group_dir.join("mon_data");
        let mut domains = BTreeMap::new();
        let entries = std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(id) = name.strip_prefix("mon_L3_") else {
                continue;
            };
            let id: u32 = id
                .parse()
                .map_err(|_| Error::parse(entry.path(), "expected mon_L3_<domain id>"))?;
            let d = entry.path();
            domains.insert(
                id,
                DomainCounters {
                    llc_occupancy: counter(&d.join("llc_occupancy"))?,
                    mbm_total_bytes: counter(&d.join("mbm_total_bytes"))?,
                    mbm_local_bytes: counter(&d.join("mbm_local_bytes"))?,
                },
            );
        }
        Ok(MonReading { domains })
    }

    /// LLC occupancy summed over the domains that answered.
    pub fn llc_occupancy(&self) -> Option<u64> {
        sum(self.domains.values().map(|d| d.llc_occupancy))
    }
}

fn sum(values: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    values
        .flatten()
        .fold(None, |acc, v| Some(acc.unwrap_or(0) + v))
}

/// Turns a running byte counter into per-interval deltas, across wraps.
///
/// The kernel widens the hardware's 24- to 62-bit MBM counters, but a
/// counter can still wrap at `width` bits (64 by default); a reading below
/// the last one is taken as one wrap. An unavailable reading gives no
/// delta and keeps the last value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteCounter {
    last: Option<u64>,
    width: u32,
}

impl Default for ByteCounter {
    fn default() -> Self {
        ByteCounter::new(64)
    }
}

impl ByteCounter {
    /// A counter that wraps at `width` bits (1..=64).
    pub fn new(width: u32) -> Self {
        ByteCounter {
            last: None,
            width: width.clamp(1, 64),
        }
    }

    /// Feeds a reading; returns the bytes since the previous reading (none
    /// for the first reading or an unavailable one).
    pub fn update(&mut self, reading: Option<u64>) -> Option<u64> {
        let now = reading?;
        let delta = self.last.map(|last| {
            if now >= last {
                now - last
            } else {
                let max = if self.width == 64 {
                    u64::MAX
                } else {
                    (1u64 << self.width) - 1
                };
                (max - last).wrapping_add(now).wrapping_add(1)
            }
        });
        self.last = Some(now);
        delta
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_wraps() {
        let mut c = ByteCounter::new(24);
        assert_eq!(c.update(Some((1 << 24) - 10)), None);
        assert_eq!(c.update(Some(5)), Some(15));
        assert_eq!(c.update(None), None);
        assert_eq!(c.update(Some(105)), Some(100));
        let mut c = ByteCounter::default();
        c.update(Some(u64::MAX - 1));
        assert_eq!(c.update(Some(3)), Some(5));
    }

    #[test]
    fn reads_unavailable_and_values() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("mon_data/mon_L3_01");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("llc_occupancy"), "Unavailable\n").unwrap();
        std::fs::write(d.join("mbm_total_bytes"), "4096\n").unwrap();
        let r = MonReading::read(t.path()).unwrap();
        assert_eq!(
            r.domains[&1],
            DomainCounters {
                llc_occupancy: None,
                mbm_total_bytes: Some(4096),
                mbm_local_bytes: None
            }
        );
        assert_eq!(r.llc_occupancy(), None);
        std::fs::write(d.join("mbm_local_bytes"), "lots\n").unwrap();
        let e = MonReading::read(t.path()).unwrap_err().to_string();
        assert!(e.contains("mbm_local_bytes") && e.contains("'lots'"), "{e}");
    }
}
