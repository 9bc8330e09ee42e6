//! `cachepart sweep plan|run|report ...`: forwards to the Python package's
//! sweep command (`python -m cachepart.sweep`, Dask distributed), with the
//! same arguments. The Python is `$CACHEPART_PYTHON`, else the `.venv`
//! of the project the binary was built in (or of the current directory),
//! else `python3`. On Unix the Python replaces this process, so signals
//! (Ctrl-C resumes later) and the exit status are the Python command's.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use clap::Args;

/// The environment variable naming the Python to run.
const PYTHON_ENV: &str = "CACHEPART_PYTHON";

/// Arguments of `cachepart sweep`: passed on as they are.
#[derive(Args)]
pub struct SweepArgs {
    /// `plan FILE [--format table|csv|json]`, `run FILE [--scheduler
    /// tcp://HOST:PORT] [--workers N] [--out DIR] [--batch N] [-q]` or
    /// `report DIR -o FILE.html` (`cachepart sweep run --help` for more).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        num_args = 0..,
        value_name = "ARGS"
    )]
    pub args: Vec<OsString>,
}

/// The Python to run and where the choice came from (for errors).
fn python() -> (PathBuf, String) {
    if let Some(p) = std::env::var_os(PYTHON_ENV).filter(|p| !p.is_empty()) {
        return (PathBuf::from(p), format!("${PYTHON_ENV}"));
    }
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf));
    let cwd = std::env::current_dir().ok();
    for start in exe_dir.iter().chain(cwd.iter()) {
        for dir in start.ancestors() {
            let venv = dir.join(".venv").join("bin").join("python");
            if venv.is_file() {
                let from = format!("the virtualenv {}", dir.join(".venv").display());
                return (venv, from);
            }
        }
    }
    (PathBuf::from("python3"), "PATH".into())
}

/// Runs `python -m cachepart.sweep ARGS`.
pub fn run(args: SweepArgs) -> Result<()> {
    let (py, from) = python();
    let probe = Command::new(&py)
        .args([
            "-c",
            "import importlib.util as u, sys; sys.exit(0 if u.find_spec('cachepart') else 3)",
        ])
        .status();
    let hint = format!(
        "run ./scripts/setup.sh in the cachepart checkout (it builds .venv), or set {PYTHON_ENV} \
         to a Python where `import cachepart` works (maturin develop, or pip install of the \
         project, with dask[distributed], pyarrow and tqdm)"
    );
    match probe {
        Err(e) => bail!(
            "cannot run Python {} (from {from}): {e}; {hint}",
            py.display()
        ),
        Ok(s) if s.code() == Some(3) => bail!(
            "the Python package cachepart is not installed in {} (from {from}); {hint}",
            py.display()
        ),
        Ok(s) if !s.success() => bail!(
            "Python {} (from {from}) failed to start ({s}); {hint}",
            py.display()
        ),
        Ok(_) => {}
    }
    let mut cmd = Command::new(&py);
    cmd.args(["-m", "cachepart.sweep"]).args(&args.args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let e = cmd.exec();
        Err(e).with_context(|| format!("running {} -m cachepart.sweep", py.display()))
    }
    #[cfg(not(unix))]
    {
        let status = cmd
            .status()
            .with_context(|| format!("running {} -m cachepart.sweep", py.display()))?;
        std::process::exit(status.code().unwrap_or(1));
    }
}
