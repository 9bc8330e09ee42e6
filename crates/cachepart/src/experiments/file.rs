//! The experiment file: what to run (a base scenario, named programs, a
//! design), what the paper claims and how we differ. TOML, kebab-case,
//! unknown keys rejected; every check happens at load time and names the
//! file and the field.
//!
//! ```toml
//! title = "Run time against the number of colors"
//! paper = "Tam et al., WIOSCA'07, Fig. 3"
//! notes = "How our setting differs from the paper's."
//!
//! [scenario]                 # scenario-file keys, no [[app]]
//! platform = "power5"
//! allocator = "tam"
//! instructions = 4_000_000
//!
//! [program.mcf-like]         # [[app]] keys, no name
//! generator = "../examples/traces/tam-mcf-like.toml"
//!
//! [design]
//! kind = "color-sweep"
//! programs = ["mcf-like"]
//! colors = [1, 2, 4, 8, 16]
//!
//! [[claim]]
//! what = "colors mcf needs"
//! paper = "4 partitions"
//! metric = "knee:mcf-like"
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::design::Design;
use crate::error::Error;

/// A paper's claim and the metric of ours it is compared with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Claim {
    /// What is measured, in words.
    pub what: String,
    /// The paper's figure or words.
    pub paper: String,
    /// Our metric: a name the design computes (`knee:mcf-like`), or the
    /// ratio of two (`stp:C7 / stp:C9`).
    pub metric: String,
    /// How to print our number: `percent` (x 100, with %), `ratio`
    /// (3 decimals) or `count` (integer); default `ratio`.
    #[serde(default)]
    pub format: Option<String>,
}

/// An experiment file as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ExperimentFile {
    /// Its name (default: the file's stem): names the output files.
    #[serde(default)]
    pub name: Option<String>,
    /// A title for the write-up and the figure.
    pub title: String,
    /// The paper and figure reproduced.
    pub paper: String,
    /// Markdown: how the setting differs from the paper's and why.
    #[serde(default)]
    pub notes: Option<String>,
    /// The base scenario: scenario-file keys (no `app`).
    pub scenario: toml::Table,
    /// The programs, by name: `[[app]]` keys without `name`.
    pub program: BTreeMap<String, toml::Table>,
    /// How runs are made from the programs.
    pub design: Design,
    /// The paper's claims next to our metrics.
    #[serde(default)]
    pub claim: Vec<Claim>,
}

/// A loaded experiment: the file, its name and its directory.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// The file's contents.
    pub file: ExperimentFile,
    /// Its name.
    pub name: String,
    /// Where it was read from (relative paths in it start here).
    pub path: PathBuf,
}

impl Experiment {
    /// Reads and checks an experiment file.
    pub fn load(path: &Path) -> Result<Experiment, Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Input(format!("{}: {e}", path.display())))?;
        let file: ExperimentFile =
            toml::from_str(&text).map_err(|e| Error::Input(format!("{}: {e}", path.display())))?;
        let name = file.name.clone().unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "experiment".into())
        });
        let e = Experiment {
            file,
            name,
            path: path.to_path_buf(),
        };
        e.check()?;
        Ok(e)
    }

    /// The directory relative paths are taken from.
    pub fn base_dir(&self) -> Option<&Path> {
        self.path.parent()
    }

    fn err(&self, field: &str, what: String) -> Error {
        Error::Input(format!("{}: {field}: {what}", self.path.display()))
    }

    /// Checks the fields that do not need a run: reserved keys, program
    /// names used by the design, claim formats.
    pub fn check(&self) -> Result<(), Error> {
        let f = &self.file;
        if f.scenario.contains_key("app") {
            return Err(self.err(
                "scenario.app",
                "the design makes the apps; name programs in [program.NAME] instead".into(),
            ));
        }
        for (name, p) in &f.program {
            if p.contains_key("name") {
                return Err(self.err(
                    &format!("program.{name}.name"),
                    "a program's name is its key; remove name".into(),
                ));
            }
        }
        for (field, used) in f.design.programs_used() {
            if !f.program.contains_key(&used) {
                let known: Vec<&str> = f.program.keys().map(String::as_str).collect();
                return Err(self.err(
                    &format!("design.{field}"),
                    format!(
                        "no program {used:?} (programs: {})",
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                ));
            }
        }
        f.design
            .check()
            .map_err(|(field, what)| self.err(&format!("design.{field}"), what))?;
        for (i, c) in f.claim.iter().enumerate() {
            match c.format.as_deref() {
                None | Some("percent") | Some("ratio") | Some("count") => {}
                Some(other) => {
                    return Err(self.err(
                        &format!("claim[{i}].format"),
                        format!("{other:?}: expected percent, ratio or count"),
                    ))
                }
            }
            if c.metric.trim().is_empty() {
                return Err(self.err(&format!("claim[{i}].metric"), "is empty".into()));
            }
        }
        Ok(())
    }
}
