//! `cachepart profile compare MEASURED SIMULATED`: two metrics tables of
//! the same programs side by side (LLC MPKI and normalised IPC at every
//! way count, each table's LFOC class), typically real-hardware
//! measurements against `profile from-trace` on the simulator.

use anyhow::{bail, Result};
use cachepart::policy::LfocPreset;
use cachepart::profile::MetricsTable;
use cachepart::run::compare;
use clap::Args;
use std::path::PathBuf;

use crate::common_args::{Format, FormatArg, OutputArg};

/// Arguments of `profile compare`.
#[derive(Args)]
pub struct CompareArgs {
    /// The measured metrics table (PBBCache CSV format; `-`: standard
    /// input, for one of the two tables).
    measured: PathBuf,
    /// The simulated metrics table (e.g. from `profile from-trace`).
    simulated: PathBuf,
    /// Pairs whose names differ, SIMULATED=MEASURED, comma-separated
    /// (e.g. `gcc=gcc06,bzip2=bzip206`); programs of the same name in both
    /// tables are paired without it.
    #[arg(long, value_delimiter = ',', value_parser = parse_pair)]
    map: Vec<(String, String)>,
    /// The LFOC preset whose thresholds classify the programs.
    #[arg(long, default_value = "paper", value_parser = crate::profile_cmd::parse_preset)]
    lfoc_preset: LfocPreset,
    /// The normalised-IPC difference the summary counts as close.
    #[arg(long, default_value_t = 0.1)]
    tolerance: f64,
    #[command(flatten)]
    format: FormatArg,
    #[command(flatten)]
    output: OutputArg,
}

/// `SIMULATED=MEASURED`.
fn parse_pair(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((a, b)) if !a.trim().is_empty() && !b.trim().is_empty() => {
            Ok((a.trim().to_string(), b.trim().to_string()))
        }
        _ => Err(format!(
            "{s:?}: expected SIMULATED=MEASURED (two program names)"
        )),
    }
}

/// Runs `profile compare`.
pub fn run(a: CompareArgs) -> Result<()> {
    let output = a.output.resolve()?;
    output.check_not_input([a.measured.as_path(), a.simulated.as_path()])?;
    if !(a.tolerance.is_finite() && a.tolerance >= 0.0) {
        bail!("--tolerance {}: expected a finite number >= 0", a.tolerance);
    }
    let stdin = cachepart::units::input::is_stdin;
    if stdin(&a.measured) && stdin(&a.simulated) {
        bail!("MEASURED and SIMULATED are both -: standard input can be read once; give one of them as a file");
    }
    let measured = MetricsTable::from_path(&a.measured)?;
    let simulated = MetricsTable::from_path(&a.simulated)?;
    let apps = compare::compare(&measured, &simulated, &a.map, a.lfoc_preset)?;
    if let Some(note) = unpaired(&measured, &simulated, &apps) {
        eprintln!("{note}");
    }
    let text = match a.format.format {
        Format::Table => compare::to_table(&apps, a.tolerance),
        Format::Csv => compare::to_csv(&apps),
        Format::Json => compare::to_json(&apps),
    };
    output.write_bytes(text.as_bytes())
}

/// A note naming the programs of either table left out for want of a
/// partner (the summary counts only the pairs), if any.
fn unpaired(
    measured: &MetricsTable,
    simulated: &MetricsTable,
    apps: &[compare::ComparedApp],
) -> Option<String> {
    let left = |t: &MetricsTable, side: &str, paired: &dyn Fn(&str) -> bool| {
        let names: Vec<&str> = t
            .apps()
            .iter()
            .map(|p| p.name.as_str())
            .filter(|n| !paired(n))
            .collect();
        (!names.is_empty())
            .then(|| format!("{} in {} ({side})", names.join(", "), t.source().display()))
    };
    let sides: Vec<String> = [
        left(measured, "measured", &|n| {
            apps.iter().any(|a| a.measured == n)
        }),
        left(simulated, "simulated", &|n| {
            apps.iter().any(|a| a.simulated == n)
        }),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!sides.is_empty()).then(|| {
        format!(
            "note: not compared, with no program of that name in the other table: {}; \
             pair programs of different names with --map SIMULATED=MEASURED",
            sides.join("; ")
        )
    })
}
