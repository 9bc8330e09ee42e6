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
use cachepart::spec::scenario::AppEntry;
use cachepart::Error;

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
    /// Reads and checks an experiment file (`-`: standard input, named
    /// `stdin` unless the file sets `name`; its relative paths are taken
    /// from the current directory).
    pub fn load(path: &Path) -> Result<Experiment, Error> {
        let stdin = cachepart_units::input::is_stdin(path);
        let text = cachepart_units::input::read_text(path).map_err(|e| Error::io(path, e))?;
        let file: ExperimentFile = toml::from_str(&text).map_err(|e| {
            Error::config_file(
                path,
                cachepart_units::input::plain_type_names(&e.to_string()),
            )
        })?;
        let name = file.name.clone().unwrap_or_else(|| {
            if stdin {
                return "stdin".into();
            }
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
        Error::config(self.path.display(), field, what)
    }

    /// Checks the fields that do not need a run: reserved keys, program
    /// names used by the design, claim formats.
    pub fn check(&self) -> Result<(), Error> {
        let f = &self.file;
        check_name(&self.name).map_err(|what| self.err("name", what))?;
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
            // Unknown or mistyped keys, named here rather than in a run.
            let mut app = p.clone();
            app.insert("name".into(), toml::Value::String(name.clone()));
            if let Err(e) = AppEntry::deserialize(toml::Value::Table(app)) {
                return Err(self.err(&format!("program.{name}"), e.to_string().trim().into()));
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
            self.check_metric(&format!("claim[{i}].metric"), &c.metric)?;
        }
        Ok(())
    }

    /// Checks that every name in a claim's metric (`a`, `a / b` or
    /// `a - b`) is one the design computes.
    fn check_metric(&self, field: &str, expr: &str) -> Result<(), Error> {
        let known = self.file.design.metric_names();
        let names: Vec<&str> = match expr.split_once(" / ").or_else(|| expr.split_once(" - ")) {
            Some((a, b)) => vec![a.trim(), b.trim()],
            None => vec![expr.trim()],
        };
        for name in names {
            if known.iter().any(|k| k == name) {
                continue;
            }
            let kind = name.split(':').next().unwrap_or(name);
            let same_kind: Vec<&str> = known
                .iter()
                .filter(|k| k.split(':').next() == Some(kind))
                .map(String::as_str)
                .take(4)
                .collect();
            let mut kinds: Vec<&str> = known.iter().filter_map(|k| k.split(':').next()).collect();
            kinds.sort_unstable();
            kinds.dedup();
            let hint = if same_kind.is_empty() {
                format!("its metrics are of the kinds {}", kinds.join(", "))
            } else {
                format!("e.g. {}", same_kind.join(", "))
            };
            return Err(self.err(
                field,
                format!(
                    "{name:?} is not a metric of this {} design ({hint}); a metric is NAME, NAME / NAME or NAME - NAME",
                    self.file.design.kind_name()
                ),
            ));
        }
        Ok(())
    }
}

/// An experiment's name names its output files (`NAME.csv`, ...) in the
/// output directory, so it must be one plain file name: not empty, not `.`
/// or `..`, no path separator, no control character.
fn check_name(name: &str) -> Result<(), String> {
    let bad = name.is_empty()
        || name == "."
        || name == ".."
        || name
            .chars()
            .any(|c| c == '/' || c == '\\' || c.is_control());
    if bad {
        return Err(format!(
            "{name:?} is not a plain file name (it names the output files): use letters, digits, '-', '_' or '.', without '/', '\\' or a name of only dots"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::RunResult;

    fn committed() -> Vec<PathBuf> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        v.sort();
        assert!(!v.is_empty());
        v
    }

    /// `metric_names` is what `analyse` computes: fed placeholder results,
    /// every design computes exactly its declared names (`colors:` ones
    /// need a report and may be absent).
    #[test]
    fn declared_metrics_are_the_computed_ones() {
        for path in committed() {
            let e = Experiment::load(&path).unwrap_or_else(|e| panic!("{e}"));
            let runs = e.file.design.runs(&e.file);
            let results: Vec<RunResult> = runs
                .iter()
                .map(|r| RunResult {
                    label: r.label.clone(),
                    totals: vec![Default::default(); r.apps.len()],
                    fallbacks: vec![0; r.apps.len()],
                    cycles: 0,
                    report: None,
                })
                .collect();
            let a = e.file.design.analyse(&runs, &results);
            let declared: std::collections::BTreeSet<String> =
                e.file.design.metric_names().into_iter().collect();
            for k in a.metrics.keys() {
                assert!(declared.contains(k), "{}: {k} not declared", path.display());
            }
            for k in &declared {
                assert!(
                    a.metrics.contains_key(k) || k.starts_with("colors:"),
                    "{}: {k} declared, not computed",
                    path.display()
                );
            }
        }
    }

    fn load_text(name: &str, text: &str) -> Result<Experiment, Error> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        Experiment::load(&p)
    }

    const BASE: &str = r#"title = "t"
paper = "p"
[scenario]
platform = "power5"
[program.a]
generator = "a.toml"
[design]
kind = "color-sweep"
programs = ["a"]
colors = [1, 2]
"#;

    #[test]
    fn names_that_leave_the_output_directory_are_refused() {
        for name in ["..", "../escape", "a/b", "a\\b", "", ".", "x\ny"] {
            let text = format!("name = {name:?}\n{BASE}");
            let e = load_text("n.toml", &text).unwrap_err().to_string();
            assert!(e.contains("n.toml: name:"), "{name:?}: {e}");
        }
        for name in ["fig-3", "a..b", "v1.2_x"] {
            let text = format!("name = {name:?}\n{BASE}");
            assert_eq!(load_text("n.toml", &text).unwrap().name, name);
        }
    }

    #[test]
    fn unknown_claim_metrics_and_program_keys_are_named() {
        let ok = format!(
            "{BASE}[[claim]]\nwhat = \"w\"\npaper = \"p\"\nmetric = \"knee:a / time:a:2\"\n"
        );
        assert!(load_text("ok.toml", &ok).is_ok());
        let bad = format!("{BASE}[[claim]]\nwhat = \"w\"\npaper = \"p\"\nmetric = \"knee:b\"\n");
        let e = load_text("bad.toml", &bad).unwrap_err().to_string();
        assert!(
            e.contains("bad.toml: claim[0].metric")
                && e.contains("\"knee:b\"")
                && e.contains("knee:a"),
            "{e}"
        );
        let bad = format!(
            "{BASE}[[claim]]\nwhat = \"w\"\npaper = \"p\"\nmetric = \"knee:a - speed:a\"\n"
        );
        let e = load_text("bad.toml", &bad).unwrap_err().to_string();
        assert!(
            e.contains("\"speed:a\"") && e.contains("knee, range, time"),
            "{e}"
        );
        let bad = BASE.replace(
            "generator = \"a.toml\"",
            "generator = \"a.toml\"\nmpl = 2.0",
        );
        let e = load_text("bad.toml", &bad).unwrap_err().to_string();
        assert!(
            e.contains("bad.toml: program.a") && e.contains("mpl"),
            "{e}"
        );
    }
}
