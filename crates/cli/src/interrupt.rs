//! Interruption of the commands that write: the registry of temporary
//! files and the SIGINT/SIGTERM handler that removes them. [`install`]
//! starts a signal-hook thread; on SIGINT or SIGTERM it removes every
//! registered temporary and exits with 128 + the signal (130, 143), so an
//! interrupted command leaves neither a temporary nor a partial output
//! (outputs are renamed into place only when complete). `trace capture`
//! has its own handling (its library stops the traced program first) and
//! does not install this one.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// The temporaries alive now. Renames happen under this lock, so the
/// handler either removes a temporary or finds it already renamed.
static TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temps() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    TEMPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers a temporary for removal on interruption.
pub fn register_temp(path: &Path) {
    temps().push(path.to_path_buf());
}

/// Forgets a temporary (renamed or removed).
pub fn unregister_temp(path: &Path) {
    temps().retain(|p| p != path);
}

/// Renames a registered temporary to `dest` and forgets it, atomically
/// with respect to the handler.
pub fn rename_registered(tmp: &Path, dest: &Path) -> std::io::Result<()> {
    let mut t = temps();
    std::fs::rename(tmp, dest)?;
    t.retain(|p| p != tmp);
    Ok(())
}

/// Starts the handler thread: on SIGINT or SIGTERM it removes the
/// registered temporaries and exits with 128 + the signal.
pub fn install() -> Result<()> {
    let mut signals =
        Signals::new([SIGINT, SIGTERM]).context("installing the SIGINT/SIGTERM handler")?;
    std::thread::Builder::new()
        .name("interrupt".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let t = temps();
                for p in t.iter() {
                    let _ = std::fs::remove_file(p);
                }
                eprintln!("interrupted by signal {sig}: no output written");
                std::process::exit(128 + sig);
            }
        })
        .context("starting the signal handler thread")?;
    Ok(())
}
