//! Workloads: the mixes of programs to evaluate.
//!
//! Three formats, chosen by file extension:
//!
//! * text (`.csv`, `.txt`, anything else): one mix per line, program names
//!   separated by commas; blank lines and lines starting with `#` are skipped;
//!   the trailing newline is optional (PBBCache's `workloads.csv`).
//! * TOML (`.toml`): `[[workload]]` tables with `apps = [...]` and an
//!   optional `name`, or a top-level `workloads = [[...], ...]`.
//! * JSON (`.json`): a list of lists of names, a list of `{"name", "apps"}`
//!   objects, or `{"workloads": ...}` holding either.
//!
//! Mixes are named `W1`, `W2`, ... in file order unless they carry a name.

use crate::error::{Location, ProfileError};
use crate::table::MetricsTable;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One mix of programs.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// `W1`, `W2`, ... or the name given in the file.
    pub name: String,
    /// Program names, in order.
    pub apps: Vec<String>,
    /// Where the mix was defined (file and line, or field).
    pub origin: Origin,
}

/// Where a workload came from, for error messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Origin {
    /// The file.
    pub file: PathBuf,
    /// 1-based line, when the format has lines.
    pub line: Option<u64>,
    /// Field path in structured formats (`workload[2].apps`).
    pub field: Option<String>,
}

impl Workload {
    /// A mix built in code (no file).
    pub fn new(name: &str, apps: &[&str]) -> Self {
        Workload {
            name: name.to_string(),
            apps: apps.iter().map(|s| s.to_string()).collect(),
            origin: Origin {
                file: PathBuf::from("<arguments>"),
                line: None,
                field: None,
            },
        }
    }

    /// Indices of the mix's programs in `table`, or an error naming the file,
    /// line and item of the first unknown program.
    pub fn resolve(&self, table: &MetricsTable) -> Result<Vec<usize>, ProfileError> {
        self.apps
            .iter()
            .enumerate()
            .map(|(k, name)| {
                table.app_index(name).ok_or_else(|| {
                    let col = match &self.origin.field {
                        Some(f) => format!("{f}[{k}]"),
                        None => format!("{}", k + 1),
                    };
                    ProfileError::UnknownProgram {
                        at: Location {
                            file: self.origin.file.clone(),
                            line: self.origin.line,
                            column: Some(col),
                        },
                        name: name.clone(),
                        hint: table
                            .suggest(name)
                            .map(|s| format!("; did you mean {s:?}?"))
                            .unwrap_or_default(),
                    }
                })
            })
            .collect()
    }
}

/// Reads a workload file in the format its extension names.
pub fn read_workloads(path: &Path) -> Result<Vec<Workload>, ProfileError> {
    let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    match path.extension().and_then(|e| e.to_str()) {
        Some("toml") => parse_toml(&text, path),
        Some("json") => parse_json(&text, path),
        _ => parse_text(&text, path),
    }
}

/// Parses the comma-separated text format.
pub fn parse_text(text: &str, file: &Path) -> Result<Vec<Workload>, ProfileError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let lineno = i as u64 + 1;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let apps: Vec<String> = t.split(',').map(|s| s.trim().to_string()).collect();
        if let Some(k) = apps.iter().position(|a| a.is_empty()) {
            return Err(ProfileError::parse(
                file,
                Some(lineno),
                Some(format!("{}", k + 1)),
                "empty program name (expected names separated by single commas)",
            ));
        }
        out.push(Workload {
            name: format!("W{}", out.len() + 1),
            apps,
            origin: Origin {
                file: file.to_path_buf(),
                line: Some(lineno),
                field: None,
            },
        });
    }
    if out.is_empty() {
        return Err(ProfileError::parse(
            file,
            None,
            None,
            "no workload in the file",
        ));
    }
    Ok(out)
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Entry {
    Names(Vec<String>),
    Named {
        name: Option<String>,
        apps: Vec<String>,
    },
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Doc {
    List(Vec<Entry>),
    Table {
        #[serde(alias = "workload")]
        workloads: Vec<Entry>,
    },
}

fn from_entries(
    entries: Vec<Entry>,
    file: &Path,
    key: &str,
) -> Result<Vec<Workload>, ProfileError> {
    let mut out = Vec::new();
    for (i, e) in entries.into_iter().enumerate() {
        let (name, apps) = match e {
            Entry::Names(a) => (None, a),
            Entry::Named { name, apps } => (name, apps),
        };
        let field = format!("{key}[{i}].apps");
        if apps.is_empty() {
            return Err(ProfileError::parse(
                file,
                None,
                Some(field),
                "empty workload (expected at least one program)",
            ));
        }
        out.push(Workload {
            name: name.unwrap_or_else(|| format!("W{}", i + 1)),
            apps,
            origin: Origin {
                file: file.to_path_buf(),
                line: None,
                field: Some(field),
            },
        });
    }
    if out.is_empty() {
        return Err(ProfileError::parse(
            file,
            None,
            None,
            "no workload in the file",
        ));
    }
    Ok(out)
}

/// Parses the TOML format.
pub fn parse_toml(text: &str, file: &Path) -> Result<Vec<Workload>, ProfileError> {
    let doc: Doc = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() as u64 + 1);
        ProfileError::parse(
            file,
            line,
            None,
            format!(
                "expected [[workload]] tables with apps = [...] or workloads = [[...]]: {}",
                e.message()
            ),
        )
    })?;
    match doc {
        Doc::Table { workloads } => from_entries(workloads, file, "workload"),
        Doc::List(_) => Err(ProfileError::parse(
            file,
            None,
            None,
            "expected [[workload]] tables",
        )),
    }
}

/// Parses the JSON format.
pub fn parse_json(text: &str, file: &Path) -> Result<Vec<Workload>, ProfileError> {
    let doc: Doc = serde_json::from_str(text).map_err(|e| {
        ProfileError::parse(
            file,
            Some(e.line() as u64),
            Some(format!("{}", e.column())),
            format!("expected a list of workloads (lists of names or {{\"name\", \"apps\"}} objects): {e}"),
        )
    })?;
    match doc {
        Doc::List(l) => from_entries(l, file, "workloads"),
        Doc::Table { workloads } => from_entries(workloads, file, "workloads"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_format() {
        let w = parse_text("a,b,c\n\n# c\nd, e", Path::new("w.csv")).unwrap();
        assert_eq!(w.len(), 2);
        assert_eq!(w[1].name, "W2");
        assert_eq!(w[1].apps, vec!["d", "e"]);
        assert_eq!(w[1].origin.line, Some(4));
        let e = parse_text("a,,b\n", Path::new("w.csv"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("w.csv:1 column 2"), "{e}");
    }

    #[test]
    fn toml_and_json() {
        let w = parse_toml(
            "[[workload]]\nname='x'\napps=['a','b']\n[[workload]]\napps=['c']\n",
            Path::new("w.toml"),
        )
        .unwrap();
        assert_eq!(w[0].name, "x");
        assert_eq!(w[1].name, "W2");
        let w = parse_toml("workloads=[['a','b']]\n", Path::new("w.toml")).unwrap();
        assert_eq!(w[0].apps, vec!["a", "b"]);
        let w = parse_json(
            r#"[["a","b"],{"name":"q","apps":["c"]}]"#,
            Path::new("w.json"),
        )
        .unwrap();
        assert_eq!(w[1].name, "q");
        let e = parse_json("[[\"a\",", Path::new("w.json"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("w.json:1"), "{e}");
    }
}
