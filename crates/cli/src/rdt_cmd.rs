//! `cachepart rdt show`: the resctrl mount's capabilities, groups,
//! schemata and owners.

use anyhow::{Context, Result};
use cachepart::linux::resctrl::{cleanup::owner_of, mount, GroupRef, Resctrl, DEFAULT_MOUNT};
use clap::Subcommand;
use std::path::{Path, PathBuf};

/// `cachepart rdt ...`
#[derive(Subcommand)]
pub enum RdtCommand {
    /// Capabilities (info/), every group with its schemata, tasks and owner.
    Show {
        /// The resctrl mount (default: the one /proc/mounts lists, else
        /// /sys/fs/resctrl).
        #[arg(long)]
        mount: Option<PathBuf>,
        /// Where /proc is.
        #[arg(long, default_value = "/proc")]
        proc_root: PathBuf,
        /// Accept a plain directory laid out like resctrl (a fake tree for
        /// development) instead of a resctrl filesystem.
        #[arg(long, hide = true)]
        allow_plain_dir: bool,
    },
}

/// Runs an `rdt` subcommand.
pub fn run(cmd: RdtCommand) -> Result<()> {
    match cmd {
        RdtCommand::Show {
            mount: m,
            proc_root,
            allow_plain_dir,
        } => {
            let path = match m {
                Some(p) => p,
                None => mount::find(&proc_root)?
                    .map(|m| m.path)
                    .unwrap_or_else(|| DEFAULT_MOUNT.into()),
            };
            let rdt = if allow_plain_dir {
                Resctrl::open_plain(&path, &proc_root)
            } else {
                Resctrl::open(&path, &proc_root)
            }
            .context("rdt show (cachepart doctor says what this machine lacks)")?;
            print!("{}", show(&rdt, &proc_root)?);
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
