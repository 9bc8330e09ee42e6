//! `cachepart rdt`: the subcommands, and `rdt show` (the resctrl mount's
//! capabilities, groups, schemata and owners); `set`, `reset` and
//! `monitor` are in [`crate::rdt_manage`], `emulate` in
//! [`crate::rdt_emulate`].

use anyhow::Result;
use cachepart::linux::resctrl::{cleanup::owner_of, GroupRef, Resctrl};
use clap::Subcommand;
use std::path::Path;

/// `cachepart rdt ...`
#[derive(Subcommand)]
pub enum RdtCommand {
    /// Capabilities (info/), every group with its schemata, tasks and owner.
    Show {
        #[command(flatten)]
        at: crate::rdt_manage::MountArgs,
    },
    /// Make (or update) the control group NAME with an L3 mask and/or a
    /// memory bandwidth limit on every domain, and place processes in it
    /// (every thread, now). The group is owned by the first process and
    /// lives as long as it does, e.g.
    /// `cachepart rdt set batch --l3 0x7 --mb 30 --pid 4242`.
    Set {
        /// The group's name (cachepart-PID-NAME on the mount).
        name: String,
        /// Capacity bitmask in hex, checked against info/L3 (cbm_mask,
        /// min_cbm_bits, contiguity) before writing.
        #[arg(long)]
        l3: Option<String>,
        /// Memory bandwidth: percent (or MBps with mba_MBps), checked
        /// against info/MB.
        #[arg(long)]
        mb: Option<String>,
        /// A process to place (repeat for more); at least one.
        #[arg(long = "pid", value_parser = crate::rdt_manage::parse_pid)]
        pids: Vec<u32>,
        #[command(flatten)]
        at: crate::rdt_manage::MountArgs,
    },
    /// Remove every cachepart group (their tasks return to the default
    /// group, their CLOSIDs and RMIDs are freed).
    Reset {
        #[command(flatten)]
        at: crate::rdt_manage::MountArgs,
    },
    /// Serve an emulated resctrl filesystem (FUSE) at MOUNTPOINT, in the
    /// foreground, for developing without the hardware: it refuses what the
    /// kernel refuses, with its words. Needs root and /dev/fuse; Ctrl-C or
    /// SIGTERM unmounts it.
    Emulate {
        /// An empty directory to mount on.
        mountpoint: std::path::PathBuf,
        /// The platform to model: skylake (11-way L3, 16 CLOSIDs, MB in
        /// percent), cdp (L3CODE/L3DATA, 8 CLOSIDs) or amd (16 ways,
        /// sparse masks, MB in 1/8 GB/s).
        #[arg(long, default_value = "skylake", value_parser = crate::rdt_emulate::parse_preset)]
        preset: cachepart::linux::fake::Preset,
        /// Where processes are looked up (for writes to `tasks`).
        #[arg(long, default_value = "/proc")]
        proc_root: std::path::PathBuf,
    },
    /// Print each cachepart group's LLC occupancy and memory bandwidth.
    Monitor {
        /// Seconds between readings (0.001 to 3600).
        #[arg(long, default_value_t = 1.0)]
        interval: f64,
        /// Readings to take, at least 1 (bandwidth from the second on).
        #[arg(long, default_value_t = 2)]
        count: u32,
        #[command(flatten)]
        at: crate::rdt_manage::MountArgs,
    },
}

/// Runs an `rdt` subcommand.
pub fn run(cmd: RdtCommand) -> Result<()> {
    match cmd {
        RdtCommand::Show { at } => {
            let rdt = at.open("rdt show")?;
            print!("{}", show(&rdt, &at.proc_root)?);
        }
        RdtCommand::Set {
            name,
            l3,
            mb,
            pids,
            at,
        } => crate::rdt_manage::set(&at, &name, l3.as_deref(), mb.as_deref(), &pids)?,
        RdtCommand::Reset { at } => crate::rdt_manage::reset(&at)?,
        RdtCommand::Emulate {
            mountpoint,
            preset,
            proc_root,
        } => crate::rdt_emulate::run(&mountpoint, preset, &proc_root)?,
        RdtCommand::Monitor {
            interval,
            count,
            at,
        } => {
            // below a millisecond the readings are as far apart as reading
            // the files takes, and a Duration rounds 1e-10 s to 0
            if !(interval.is_finite() && (0.001..=3600.0).contains(&interval)) {
                let shown = cachepart::units::input::shown(interval);
                anyhow::bail!("--interval {shown}: expected seconds from 0.001 to 3600");
            }
            if count == 0 {
                anyhow::bail!("--count 0: expected at least 1 reading");
            }
            crate::rdt_manage::monitor(&at, std::time::Duration::from_secs_f64(interval), count)?
        }
    }
    Ok(())
}

fn show(rdt: &Resctrl, proc_root: &Path) -> Result<String> {
    use std::fmt::Write;
    let c = rdt.capabilities();
    let mut o = String::new();
    writeln!(o, "resctrl at {}", rdt.mount().display())?;
    let doms = |r| {
        c.domains
            .get(&r)
            .map(|d: &Vec<u32>| d.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
            .unwrap_or_default()
    };
    for (r, ci) in &c.caches {
        writeln!(
            o,
            "{r}: {} ways (cbm_mask {}), min_cbm_bits {}, {} CLOSIDs, shareable_bits {}, sparse masks {}, domains {}",
            ci.ways(),
            ci.cbm_mask,
            ci.min_cbm_bits,
            ci.num_closids,
            ci.shareable_bits,
            if ci.sparse_masks { "yes" } else { "no" },
            doms(*r)
        )?;
    }
    if let Some(mb) = &c.mb {
        writeln!(
            o,
            "MB: {:?} up to {}, bandwidth_gran {}, min_bandwidth {}, {} CLOSIDs, delay_linear {}, domains {}",
            mb.units,
            mb.max(),
            mb.bandwidth_gran,
            mb.min_bandwidth,
            mb.num_closids,
            mb.delay_linear.map_or("-".into(), |d| u8::from(d).to_string()),
            doms(cachepart::linux::resctrl::Resource::Mb)
        )?;
    }
    match &c.mon {
        Some(m) => writeln!(
            o,
            "L3_MON: {} RMIDs: {}",
            m.num_rmids,
            m.mon_features.join(" ")
        )?,
        None => writeln!(o, "L3_MON: none")?,
    }
    let groups = rdt.control_groups()?;
    writeln!(
        o,
        "groups: {} of {} CLOSIDs in use",
        groups.len() + 1,
        c.num_closids()
    )?;
    let root = rdt.root();
    group(&mut o, rdt, &root, proc_root, "")?;
    for g in &groups {
        group(&mut o, rdt, g, proc_root, "")?;
    }
    Ok(o)
}

fn group(
    o: &mut String,
    rdt: &Resctrl,
    g: &GroupRef,
    proc_root: &Path,
    indent: &str,
) -> Result<()> {
    use std::fmt::Write;
    let owner = match owner_of(&g.name) {
        Some(pid) if proc_root.join(pid.to_string()).exists() => {
            format!("owner pid {pid} (running)")
        }
        Some(pid) => format!("owner pid {pid} (gone: removed at the next start)"),
        None if g.name.is_empty() => "default group".into(),
        None => "not cachepart's".into(),
    };
    let tasks = rdt.tasks(g).map(|t| t.len()).unwrap_or(0);
    writeln!(o, "{indent}{}  {owner}, {tasks} tasks", g.path_name())?;
    if g.parent.is_none() {
        for line in rdt.read_schemata(g)?.lines.values() {
            writeln!(o, "{indent}    {line}")?;
        }
        let sub = format!("{indent}  ");
        for m in rdt.mon_groups(g)? {
            group(o, rdt, &m, proc_root, &sub)?;
        }
    }
    Ok(())
}
