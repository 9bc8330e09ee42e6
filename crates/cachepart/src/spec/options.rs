//! The option checks both front ends make, so that the CLI and Python
//! refuse the same values with the same words: one function per option
//! family. The options a run's own options type already checks
//! (`RunOptions::check`: `max-bw`, `threads`, `time-limit`, `plan`;
//! `CurveRequest::check`; the throttling search's `max-runs` and
//! `quantum-run-cycles`) are checked there, in the facade too.

use std::path::PathBuf;

use crate::error::Error;
use crate::run::alone::TraceApp;

/// The apps of a profile made from traces: each trace named after its
/// file, or by `names` (one per trace, in order; empty for none).
pub fn trace_apps(traces: &[PathBuf], names: &[String]) -> Result<Vec<TraceApp>, Error> {
    if !names.is_empty() && names.len() != traces.len() {
        return Err(Error::Usage(format!(
            "name: {} names for {} traces: give one per trace, or none",
            names.len(),
            traces.len()
        )));
    }
    traces
        .iter()
        .enumerate()
        .map(|(i, p)| match names.get(i) {
            Some(n) => Ok(TraceApp::named(n.clone(), p)),
            None => TraceApp::from_path(p),
        })
        .collect()
}

/// Where the mixes of a table-driven run come from: the metrics table
/// (a file, or the built-in data with its own workloads), a workloads
/// file, and mixes given as program names. `need_mixes`: the command
/// runs mixes (an evaluation), rather than looking at programs alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct MixSources {
    /// A metrics table file was given.
    pub metrics: bool,
    /// A workloads file was given.
    pub workloads: bool,
    /// Mixes were given by program names.
    pub mixes: bool,
    /// The command needs mixes.
    pub need_mixes: bool,
}

impl MixSources {
    /// Refuses a workloads file together with mixes by name, and a
    /// metrics table without mixes where the command runs mixes (the
    /// built-in data brings its own workloads, a file does not).
    pub fn check(&self) -> Result<(), Error> {
        if self.workloads && self.mixes {
            return Err(Error::Usage(
                "workloads, mixes: give either a workloads file or mixes, not both".into(),
            ));
        }
        if self.metrics && self.need_mixes && !self.workloads && !self.mixes {
            return Err(Error::Usage(
                "metrics: a metrics file was given without workloads or mixes: say which mixes to run"
                    .into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_per_trace_or_none() {
        let traces = vec![PathBuf::from("a.cpt"), PathBuf::from("b.cpt")];
        let apps = trace_apps(&traces, &[]).unwrap();
        assert_eq!(apps[1].name, "b");
        let apps = trace_apps(&traces, &["x".into(), "y".into()]).unwrap();
        assert_eq!(apps[0].name, "x");
        let e = trace_apps(&traces, &["x".into()]).unwrap_err();
        assert!(matches!(e, Error::Usage(_)));
        assert_eq!(
            e.to_string(),
            "name: 1 names for 2 traces: give one per trace, or none"
        );
    }

    #[test]
    fn a_metrics_file_needs_mixes_when_mixes_run() {
        let metrics_only = MixSources {
            metrics: true,
            need_mixes: true,
            ..MixSources::default()
        };
        let e = metrics_only.check().unwrap_err();
        assert!(e.to_string().starts_with("metrics: "), "{e}");
        assert!(MixSources {
            need_mixes: false,
            ..metrics_only
        }
        .check()
        .is_ok());
        assert!(MixSources {
            mixes: true,
            ..metrics_only
        }
        .check()
        .is_ok());
        let both = MixSources {
            workloads: true,
            mixes: true,
            ..MixSources::default()
        };
        assert!(both.check().unwrap_err().to_string().contains("not both"));
    }
}
