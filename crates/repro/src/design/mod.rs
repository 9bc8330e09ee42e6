//! The designs of experiments: each makes the runs from the programs and
//! reads their results into an [`Analysis`]. One file each:
//!
//! * [`color_sweep`]: each program alone with 1..n colors (Tam et al.,
//!   Fig. 3);
//! * [`split`]: two programs sharing the colors N / total-N, IPC
//!   normalised to sharing all of them (Tam et al., Fig. 4);
//! * [`background`]: a foreground against heavy, medium and light
//!   backgrounds, with and without coloring, against running alone
//!   (COLORIS 4.2);
//! * [`variants`]: the same apps under several scenario configurations
//!   (COLORIS 4.3 thresholds, 4.4 over-commitment);
//! * [`mechanisms`]: workloads under memory-system mechanisms (pages,
//!   coloring, bit swapping), by weighted speedup and TLB and LLC misses
//!   (SWAP, Figs. 2 and 7-10);
//! * [`stall_sweep`]: the color sweep read as stall rates, miss rates and
//!   L3 victim-cache hits (Tam et al., Figs. 6-8).

pub mod background;
pub mod color_sweep;
pub mod mechanisms;
pub mod split;
pub mod stall_sweep;
pub mod variants;

use serde::{Deserialize, Serialize};

use super::build::Run;
use super::file::ExperimentFile;
use super::runner::{Analysis, RunResult};

/// How runs are made from the programs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Design {
    /// Each program alone with 1..n colors.
    ColorSweep(color_sweep::ColorSweep),
    /// Two programs sharing the colors N / total-N.
    Split(split::Split),
    /// A foreground against backgrounds, with and without coloring.
    Background(background::Background),
    /// The same apps under several configurations.
    Variants(variants::Variants),
    /// Workloads under several mechanisms.
    Mechanisms(mechanisms::Mechanisms),
    /// Each program alone with 1..n colors, read as stall and miss rates.
    StallSweep(stall_sweep::StallSweep),
}

impl Design {
    /// (field, program) for every program the design names.
    pub fn programs_used(&self) -> Vec<(String, String)> {
        match self {
            Design::ColorSweep(d) => d.programs_used(),
            Design::Split(d) => d.programs_used(),
            Design::Background(d) => d.programs_used(),
            Design::Variants(d) => d.programs_used(),
            Design::Mechanisms(d) => d.programs_used(),
            Design::StallSweep(d) => d.programs_used(),
        }
    }

    /// Checks the design's own fields: (field, what is wrong).
    pub fn check(&self) -> Result<(), (String, String)> {
        match self {
            Design::ColorSweep(d) => d.check(),
            Design::Split(d) => d.check(),
            Design::Background(d) => d.check(),
            Design::Variants(d) => d.check(),
            Design::Mechanisms(d) => d.check(),
            Design::StallSweep(d) => d.check(),
        }
    }

    /// The design's `kind`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Design::ColorSweep(_) => "color-sweep",
            Design::Split(_) => "split",
            Design::Background(_) => "background",
            Design::Variants(_) => "variants",
            Design::Mechanisms(_) => "mechanisms",
            Design::StallSweep(_) => "stall-sweep",
        }
    }

    /// Every metric name [`Design::analyse`] may compute, which claims
    /// may refer to.
    pub fn metric_names(&self) -> Vec<String> {
        match self {
            Design::ColorSweep(d) => d.metric_names(),
            Design::Split(d) => d.metric_names(),
            Design::Background(d) => d.metric_names(),
            Design::Variants(d) => d.metric_names(),
            Design::Mechanisms(d) => d.metric_names(),
            Design::StallSweep(d) => d.metric_names(),
        }
    }

    /// The runs, in table order.
    pub fn runs(&self, file: &ExperimentFile) -> Vec<Run> {
        let _ = file;
        match self {
            Design::ColorSweep(d) => d.runs(),
            Design::Split(d) => d.runs(),
            Design::Background(d) => d.runs(),
            Design::Variants(d) => d.runs(),
            Design::Mechanisms(d) => d.runs(),
            Design::StallSweep(d) => d.runs(),
        }
    }

    /// Whether runs need the full scenario loop (policies, reports).
    pub fn wants_reports(&self) -> bool {
        matches!(self, Design::Variants(_))
    }

    /// Reads the results (in the order of [`Design::runs`]).
    pub fn analyse(&self, runs: &[Run], results: &[RunResult]) -> Analysis {
        match self {
            Design::ColorSweep(d) => d.analyse(runs, results),
            Design::Split(d) => d.analyse(runs, results),
            Design::Background(d) => d.analyse(runs, results),
            Design::Variants(d) => d.analyse(runs, results),
            Design::Mechanisms(d) => d.analyse(runs, results),
            Design::StallSweep(d) => d.analyse(runs, results),
        }
    }
}

/// Colors `first..first+n` in range syntax.
pub fn color_range(first: u32, n: u32) -> String {
    if n <= 1 {
        first.to_string()
    } else {
        format!("{first}-{}", first + n - 1)
    }
}

/// LLC misses / LLC references of an app (0 without references).
pub fn miss_rate(t: &cachepart_sim::system::AppTotals) -> f64 {
    if t.llc_references > 0 {
        t.llc_misses as f64 / t.llc_references as f64
    } else {
        0.0
    }
}

fn positive(field: &str, v: u32) -> Result<(), (String, String)> {
    if v == 0 {
        Err((field.into(), "must be positive".into()))
    } else {
        Ok(())
    }
}
