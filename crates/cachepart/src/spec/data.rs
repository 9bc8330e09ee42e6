//! The data a run on the table-driven machine reads, loaded the same way
//! by the CLI (`cachepart profile eval|classify`) and Python
//! (`profile_evaluate`, `profile_classify`): a metrics table from a file
//! or a built-in set ([`BuiltinSet`]), and the mixes to run.
//!
//! The mixes come from, in this order: mixes given by program names
//! (named `W1`, `W2`, ...), a workloads file, the built-in set's own
//! workloads when no metrics file is given, or else one mix `all` of
//! every program of the table. [`MixSources::check`] refuses the
//! combinations that make no sense before anything is read.

use std::path::Path;

use cachepart_profile::{read_workloads, MetricsTable, Workload};

use crate::error::Error;
use crate::spec::builtin::BuiltinSet;
use crate::spec::options::MixSources;

/// Where a table-driven run's metrics table and mixes come from.
#[derive(Clone, Copy, Debug)]
pub struct MixData<'a> {
    /// The metrics table file (`None`: the built-in set's table).
    pub metrics: Option<&'a Path>,
    /// A workloads file.
    pub workloads: Option<&'a Path>,
    /// Mixes by program names, one list per mix.
    pub mixes: Option<&'a [Vec<String>]>,
    /// The built-in set read when no metrics file is given.
    pub builtin: BuiltinSet,
}

impl MixData<'_> {
    /// Reads the table and the mixes; `need_mixes`: the command runs
    /// mixes (an evaluation) rather than looking at programs alone, so a
    /// metrics file without mixes is refused.
    pub fn load(&self, need_mixes: bool) -> Result<(MetricsTable, Vec<Workload>), Error> {
        MixSources {
            metrics: self.metrics.is_some(),
            workloads: self.workloads.is_some(),
            mixes: self.mixes.is_some(),
            need_mixes,
        }
        .check()?;
        let table = match self.metrics {
            Some(p) => MetricsTable::from_path(p)?,
            None => self.builtin.table()?,
        };
        let mixes = if let Some(m) = self.mixes {
            m.iter()
                .enumerate()
                .map(|(i, apps)| {
                    let names: Vec<&str> = apps.iter().map(String::as_str).collect();
                    Workload::new(&format!("W{}", i + 1), &names)
                })
                .collect()
        } else if let Some(p) = self.workloads {
            read_workloads(p)?
        } else if self.metrics.is_none() {
            self.builtin.workloads()?
        } else {
            let names: Vec<&str> = table.apps().iter().map(|a| a.name.as_str()).collect();
            vec![Workload::new("all", &names)]
        };
        Ok((table, mixes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data<'a>(metrics: Option<&'a Path>, mixes: Option<&'a [Vec<String>]>) -> MixData<'a> {
        MixData {
            metrics,
            workloads: None,
            mixes,
            builtin: BuiltinSet::Debian,
        }
    }

    #[test]
    fn the_builtin_set_brings_its_workloads() {
        let (table, mixes) = data(None, None).load(true).unwrap();
        assert_eq!(
            table.apps().len(),
            BuiltinSet::Debian.table().unwrap().apps().len()
        );
        assert_eq!(mixes, BuiltinSet::Debian.workloads().unwrap());
    }

    #[test]
    fn mixes_by_name_are_numbered_in_order() {
        let given = vec![
            vec!["xz".to_string(), "sort".to_string()],
            vec!["grep".to_string()],
        ];
        let (_, mixes) = data(None, Some(&given)).load(true).unwrap();
        let names: Vec<&str> = mixes.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["W1", "W2"]);
        assert_eq!(mixes[0], Workload::new("W1", &["xz", "sort"]));
    }

    #[test]
    fn a_table_file_alone_is_one_mix_of_every_program_or_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.csv");
        std::fs::write(&p, BuiltinSet::Debian.metrics_csv().as_bytes()).unwrap();
        let (table, mixes) = data(Some(&p), None).load(false).unwrap();
        assert_eq!(mixes.len(), 1);
        assert_eq!(mixes[0].name, "all");
        assert_eq!(mixes[0].apps.len(), table.apps().len());
        let e = data(Some(&p), None).load(true).unwrap_err();
        assert!(e.to_string().starts_with("metrics: "), "{e}");
    }

    #[test]
    fn a_missing_table_file_names_it() {
        let e = data(Some(Path::new("/nonexistent/m.csv")), None)
            .load(false)
            .unwrap_err();
        assert!(e.to_string().contains("/nonexistent/m.csv"), "{e}");
    }
}
