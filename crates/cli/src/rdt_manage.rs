//! `cachepart rdt set`, `rdt reset` and `rdt monitor`: one-shot control of
//! the resctrl mount, under the manager lock, on cachepart's own groups
//! only (`cachepart-PID-NAME`).
//!
//! `rdt set NAME --pid P ...` makes (or reuses) the control group NAME,
//! owned by the first process it places, so the group lives as long as
//! that process: once it is gone, the next cachepart that starts on the
//! mount removes the group (its CLOSID is freed). `rdt reset` removes every
//! cachepart group at once; `rdt monitor` prints each group's LLC
//! occupancy and memory bandwidth from `mon_data`.

use anyhow::{bail, Context, Result};
use cachepart::linux::resctrl::{
    cleanup::owner_of, remove_stale_groups, ByteCounter, GroupRef, ManagerLock, Resctrl, Resource,
    SchemataLine, PREFIX,
};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Where the resctrl mount and /proc are (shared by the `rdt` commands).
#[derive(clap::Args, Clone)]
pub struct MountArgs {
    /// The resctrl mount (default: the one /proc/mounts lists, else
    /// /sys/fs/resctrl).
    #[arg(long)]
    pub mount: Option<PathBuf>,
    /// Where /proc is.
    #[arg(long, default_value = "/proc")]
    pub proc_root: PathBuf,
    /// Accept a plain directory laid out like resctrl (a fake tree for
    /// development) instead of a resctrl filesystem.
    #[arg(long, hide = true)]
    pub allow_plain_dir: bool,
}

impl MountArgs {
    /// Opens the mount, refusing a machine without resctrl with a pointer
    /// to `cachepart doctor`.
    pub fn open(&self, what: &str) -> Result<Resctrl> {
        let path = match &self.mount {
            Some(p) => p.clone(),
            None => cachepart::linux::resctrl::mount::find(&self.proc_root)?
                .map(|m| m.path)
                .unwrap_or_else(|| cachepart::linux::resctrl::DEFAULT_MOUNT.into()),
        };
        if self.allow_plain_dir {
            Resctrl::open_plain(&path, &self.proc_root)
        } else {
            Resctrl::open(&path, &self.proc_root)
        }
        .with_context(|| format!("{what} (cachepart doctor says what this machine lacks)"))
    }
}

/// The resources `--l3` sets: `L3`, or on a mount with CDP (`L3CODE` and
/// `L3DATA` in place of `L3`) both of those, as `pqos -e llc:...` does.
fn l3_resources(rdt: &Resctrl) -> Vec<Resource> {
    let caches = &rdt.capabilities().caches;
    if !caches.contains_key(&Resource::L3) && caches.contains_key(&Resource::L3Code) {
        vec![Resource::L3Code, Resource::L3Data]
    } else {
        vec![Resource::L3]
    }
}

/// The schemata line that gives `mask` (or MB `value`) on every domain of
/// `resource`.
fn every_domain(rdt: &Resctrl, resource: Resource, value: &str) -> Result<SchemataLine> {
    let doms = rdt
        .capabilities()
        .domains
        .get(&resource)
        .cloned()
        .unwrap_or_default();
    if doms.is_empty() {
        bail!(
            "{}: this mount has no {resource} resource (it has {})",
            rdt.mount().display(),
            rdt.capabilities().resource_names()
        );
    }
    let text = format!(
        "{resource}:{}",
        doms.iter()
            .map(|d| format!("{d}={value}"))
            .collect::<Vec<_>>()
            .join(";")
    );
    SchemataLine::parse(&text).map_err(|e| anyhow::anyhow!("{value}: {e}"))
}

/// `rdt set`.
pub fn set(
    m: &MountArgs,
    name: &str,
    l3: Option<&str>,
    mb: Option<&str>,
    pids: &[u32],
) -> Result<()> {
    let Some(&owner) = pids.first() else {
        bail!("--pid: give at least one process to place (the group lives as long as the first)");
    };
    if l3.is_none() && mb.is_none() {
        bail!("give --l3 MASK, --mb VALUE or both");
    }
    for &p in pids {
        if !m.proc_root.join(p.to_string()).exists() {
            bail!("--pid {p}: no such process");
        }
    }
    let rdt = m.open("rdt set")?.with_owner(owner);
    let _lock = ManagerLock::acquire(rdt.mount(), &m.proc_root)?;
    remove_stale_groups(&rdt)?;
    let full = rdt.owned_name(name);
    let group = match rdt.control_groups()?.into_iter().find(|g| g.name == full) {
        Some(g) => g,
        None => rdt.create_group(name)?,
    };
    let result = (|| -> Result<Vec<u32>> {
        let mut schemata = rdt.read_schemata(&group)?;
        if let Some(mask) = l3 {
            for r in l3_resources(&rdt) {
                let line = every_domain(&rdt, r, mask).context("--l3")?;
                schemata.lines.insert(line.resource, line);
            }
        }
        if let Some(v) = mb {
            let line = every_domain(&rdt, Resource::Mb, v).context("--mb")?;
            schemata.lines.insert(line.resource, line);
        }
        // Only the lines given are written; the kernel keeps the others.
        schemata.lines.retain(|r, _| {
            (matches!(r, Resource::L3 | Resource::L3Code | Resource::L3Data) && l3.is_some())
                || (*r == Resource::Mb && mb.is_some())
        });
        rdt.write_schemata(&group, &schemata)?;
        let mut moved = Vec::new();
        for &p in pids {
            moved.extend(rdt.move_process(&group, p)?);
        }
        Ok(moved)
    })();
    match result {
        Ok(moved) => {
            println!(
                "{}: {} task(s) of {} process(es); schemata now:\n{}",
                group.path_name(),
                moved.len(),
                pids.len(),
                rdt.read_schemata(&group)?.to_write().trim_end()
            );
            Ok(())
        }
        Err(e) => {
            // A group this command made and could not set up is removed.
            if rdt.tasks(&group).map(|t| t.is_empty()).unwrap_or(false) {
                let _ = rdt.remove(&group);
            }
            Err(e)
        }
    }
}

/// Every cachepart group of the mount, control groups first.
fn owned(rdt: &Resctrl) -> Result<Vec<GroupRef>> {
    let mut out = Vec::new();
    for g in std::iter::once(rdt.root()).chain(rdt.control_groups()?) {
        if g.name.starts_with(PREFIX) {
            out.push(g.clone());
        }
        for mg in rdt.mon_groups(&g)? {
            if mg.name.starts_with(PREFIX) {
                out.push(mg);
            }
        }
    }
    Ok(out)
}

/// `rdt reset`.
pub fn reset(m: &MountArgs) -> Result<()> {
    let rdt = m.open("rdt reset")?;
    let _lock = ManagerLock::acquire(rdt.mount(), &m.proc_root)?;
    let groups = owned(&rdt)?;
    // Monitoring groups first: removing a control group removes its own.
    let (mon, ctl): (Vec<_>, Vec<_>) = groups.into_iter().partition(|g| g.parent.is_some());
    for g in mon.iter().chain(&ctl) {
        if g.dir.exists() {
            rdt.remove(g)?;
            println!("removed {}", g.path_name());
        }
    }
    if mon.is_empty() && ctl.is_empty() {
        println!("no cachepart group on {}", rdt.mount().display());
    }
    Ok(())
}

fn mib(bytes: Option<u64>) -> String {
    bytes.map_or("-".into(), |b| {
        format!("{:.2}", b as f64 / (1 << 20) as f64)
    })
}

/// `rdt monitor`: `count` readings, `interval` apart; from the second on,
/// memory bandwidth over the interval (the counters' wrap handled).
pub fn monitor(m: &MountArgs, interval: Duration, count: u32) -> Result<()> {
    let rdt = m.open("rdt monitor")?;
    if rdt.capabilities().mon.is_none() {
        bail!(
            "{}: no L3 monitoring (info/L3_MON); this mount has {}",
            rdt.mount().display(),
            rdt.capabilities().resource_names()
        );
    }
    let groups = owned(&rdt)?;
    if groups.is_empty() {
        println!("no cachepart group on {}", rdt.mount().display());
        return Ok(());
    }
    // The kernel widens the hardware's MBM counters: the files count
    // bytes on 64 bits.
    // Each group's byte counter and when it was read: the bandwidth is
    // over the time between its two readings (the interval, plus reading
    // every group once).
    let mut totals: Vec<(ByteCounter, Option<Instant>)> = groups
        .iter()
        .map(|_| (ByteCounter::default(), None))
        .collect();
    println!("{:<40} {:>14} {:>14}", "group", "LLC MiB", "MBM MB/s");
    for round in 0..count {
        if round > 0 {
            std::thread::sleep(interval);
        }
        for (g, (c, last)) in groups.iter().zip(&mut totals) {
            let r = rdt.read_monitor(g)?;
            let now = Instant::now();
            let mbm = r
                .domains
                .values()
                .map(|d| d.mbm_total_bytes)
                .try_fold(0u64, |a, b| b.map(|b| a.wrapping_add(b)));
            let delta = c.update(mbm);
            // the time of the reading the counter keeps (an unavailable
            // one it skips)
            let secs = mbm
                .and_then(|_| last.replace(now))
                .map(|t| now.duration_since(t).as_secs_f64());
            let rate = match (secs, delta) {
                (Some(s), Some(d)) if s > 0.0 => format!("{:.1}", d as f64 / 1e6 / s),
                _ => "-".to_string(),
            };
            let owner = owner_of(&g.name).map_or(String::new(), |p| format!(" (pid {p})"));
            println!(
                "{:<40} {:>14} {:>14}",
                format!("{}{owner}", g.path_name()),
                mib(r.llc_occupancy()),
                rate
            );
        }
    }
    Ok(())
}

/// A process id given on the command line.
pub fn parse_pid(s: &str) -> Result<u32, String> {
    s.parse::<u32>()
        .ok()
        .filter(|&p| p > 0)
        .ok_or_else(|| format!("{s:?}: expected a process id (a positive whole number)"))
}
