//! `cachepart rdt emulate MOUNTPOINT --preset NAME`: serves an emulated
//! resctrl filesystem over FUSE in the foreground, for developing and
//! testing without the hardware, until SIGINT or SIGTERM (then it
//! unmounts) or until someone unmounts it.

use anyhow::{Context, Result};
use cachepart::linux::emulate::Emulator;
use cachepart::linux::fake::Preset;
use cachepart::Kind as _;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::path::Path;
use std::time::Duration;

/// A preset by name (`skylake`, `cdp`, `amd`).
pub fn parse_preset(s: &str) -> std::result::Result<Preset, String> {
    Preset::from_name(s).ok_or_else(|| {
        format!(
            "unknown preset '{s}': expected one of {}",
            Preset::names().join(", ")
        )
    })
}

/// Runs the emulator until a signal or an outside unmount.
pub fn run(mountpoint: &Path, preset: Preset, proc_root: &Path) -> Result<()> {
    // Signals are caught before mounting, so none is lost in between.
    let mut signals =
        Signals::new([SIGINT, SIGTERM]).context("installing the SIGINT/SIGTERM handler")?;
    let emulator = Emulator::mount(mountpoint, preset, proc_root).context("rdt emulate")?;
    let name = preset.name();
    eprintln!(
        "emulated resctrl ({name}) mounted at {}; stop with Ctrl-C or SIGTERM",
        mountpoint.display()
    );
    loop {
        if let Some(sig) = signals.pending().next() {
            eprintln!("signal {sig}: unmounting {}", mountpoint.display());
            break;
        }
        if !emulator.is_running() {
            eprintln!("{} was unmounted", mountpoint.display());
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    if emulator.unmount()? {
        eprintln!("unmounted {}", mountpoint.display());
    } else {
        eprintln!(
            "{} is busy (a process uses it): detached; it goes away when the last user lets go",
            mountpoint.display()
        );
    }
    Ok(())
}
