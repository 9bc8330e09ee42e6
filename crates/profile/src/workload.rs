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
//! Names must be unique within a file (a name given twice, or a given name
//! equal to another mix's default `W<n>`, is refused naming both entries):
//! results are reported, and charts normalised, per mix name.

use crate::error::{Location, ProfileError};
use crate::table::MetricsTable;
use serde_json::Value;
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

impl Origin {
    /// The entry this origin points at, for messages: `line 3` or
    /// `workload[1]`.
    fn entry(&self) -> String {
        match (&self.field, self.line) {
            (Some(f), _) => f.strip_suffix(".apps").unwrap_or(f).to_string(),
            (None, Some(l)) => format!("line {l}"),
            (None, None) => "an entry".to_string(),
        }
    }
}

/// Refuses two workloads of `file` with one name, naming both entries.
fn check_unique_names(workloads: &[Workload], file: &Path) -> Result<(), ProfileError> {
    let mut seen: std::collections::HashMap<&str, &Workload> = Default::default();
    for w in workloads {
        if let Some(first) = seen.insert(&w.name, w) {
            return Err(ProfileError::parse(
                file,
                w.origin.line,
                None,
                format!(
                    "{} and {} are both named {:?}: expected unique workload names \
                     (a workload without a name is W<its position>)",
                    first.origin.entry(),
                    w.origin.entry(),
                    w.name
                ),
            ));
        }
    }
    Ok(())
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
    let text = cachepart_units::input::read_text(path).map_err(|source| ProfileError::Io {
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
    check_unique_names(&out, file)?;
    Ok(out)
}

/// One mix as written: a list of names, or a `{name, apps}` table.
struct Entry {
    name: Option<String>,
    apps: Vec<String>,
}

/// A structured document's error at `field`.
fn at(file: &Path, field: &str, what: impl std::fmt::Display) -> ProfileError {
    ProfileError::parse(file, None, None, format!("{field}: {what}"))
}

/// Program names of the list at `field`.
fn names(v: &Value, file: &Path, field: &str) -> Result<Vec<String>, ProfileError> {
    let Value::Array(items) = v else {
        return Err(at(file, field, "expected a list of program names"));
    };
    items
        .iter()
        .enumerate()
        .map(|(k, n)| match n {
            Value::String(s) => Ok(s.clone()),
            other => Err(at(
                file,
                &format!("{field}[{k}]"),
                format!("{other}: expected a program name (a string)"),
            )),
        })
        .collect()
}

/// The mixes of the list at `key`: lists of names or `{name, apps}`
/// tables; any other key in a table is an error naming it.
fn entries(v: &Value, file: &Path, key: &str) -> Result<Vec<Entry>, ProfileError> {
    let Value::Array(items) = v else {
        return Err(at(file, key, "expected a list of workloads"));
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let field = format!("{key}[{i}]");
        out.push(match item {
            Value::Array(_) => Entry {
                name: None,
                apps: names(item, file, &field)?,
            },
            Value::Object(t) => {
                if let Some(k) = t.keys().find(|k| !["name", "apps"].contains(&k.as_str())) {
                    return Err(at(
                        file,
                        &field,
                        format!("unknown key `{k}` (expected `name` and `apps`)"),
                    ));
                }
                let name = match t.get("name") {
                    None => None,
                    Some(Value::String(n)) => Some(n.clone()),
                    Some(other) => {
                        return Err(at(
                            file,
                            &format!("{field}.name"),
                            format!("{other}: expected a string"),
                        ))
                    }
                };
                let apps = t.get("apps").ok_or_else(|| {
                    at(file, &field, "missing key `apps` (the mix's program names)")
                })?;
                Entry {
                    name,
                    apps: names(apps, file, &format!("{field}.apps"))?,
                }
            }
            other => {
                return Err(at(
                    file,
                    &field,
                    format!("{other}: expected a list of program names or a {{name, apps}} table"),
                ))
            }
        });
    }
    Ok(out)
}

/// The workload list of a structured document: the document itself if it
/// is a list (JSON), else its one key `workloads` (or `workload`, TOML's
/// `[[workload]]` tables); other keys are errors naming them.
fn document(doc: &Value, file: &Path, list_ok: bool) -> Result<Vec<Workload>, ProfileError> {
    match doc {
        Value::Array(_) if list_ok => {
            from_entries(entries(doc, file, "workloads")?, file, "workloads")
        }
        Value::Object(t) => {
            if let Some(k) = t
                .keys()
                .find(|k| !["workloads", "workload"].contains(&k.as_str()))
            {
                return Err(at(
                    file,
                    k,
                    "unknown key (expected [[workload]] tables or workloads = [...])",
                ));
            }
            match (t.get("workload"), t.get("workloads")) {
                (Some(_), Some(_)) => Err(at(
                    file,
                    "workloads",
                    "give either [[workload]] tables or workloads = [...], not both",
                )),
                (Some(v), None) => from_entries(entries(v, file, "workload")?, file, "workload"),
                (None, Some(v)) => from_entries(entries(v, file, "workloads")?, file, "workloads"),
                (None, None) => Err(ProfileError::parse(
                    file,
                    None,
                    None,
                    "no workload in the file (expected [[workload]] tables or workloads = [...])",
                )),
            }
        }
        _ => Err(ProfileError::parse(
            file,
            None,
            None,
            if list_ok {
                "expected a list of workloads (lists of names or {\"name\", \"apps\"} objects)"
            } else {
                "expected [[workload]] tables"
            },
        )),
    }
}

fn from_entries(
    entries: Vec<Entry>,
    file: &Path,
    key: &str,
) -> Result<Vec<Workload>, ProfileError> {
    let mut out = Vec::new();
    for (i, Entry { name, apps }) in entries.into_iter().enumerate() {
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
    check_unique_names(&out, file)?;
    Ok(out)
}

/// Parses the TOML format.
pub fn parse_toml(text: &str, file: &Path) -> Result<Vec<Workload>, ProfileError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
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
    let doc = serde_json::to_value(&table).map_err(|e| {
        ProfileError::parse(file, None, None, format!("unsupported TOML value: {e}"))
    })?;
    document(&doc, file, false)
}

/// Parses the JSON format.
pub fn parse_json(text: &str, file: &Path) -> Result<Vec<Workload>, ProfileError> {
    let doc: Value = serde_json::from_str(text).map_err(|e| {
        ProfileError::parse(
            file,
            Some(e.line() as u64),
            Some(format!("{}", e.column())),
            format!("expected a list of workloads (lists of names or {{\"name\", \"apps\"}} objects): {e}"),
        )
    })?;
    document(&doc, file, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` parsed as the file `name` (TOML or JSON by its extension).
    fn parse_named(name: &str, text: &str) -> Result<Vec<Workload>, ProfileError> {
        let p = Path::new(name);
        if name.ends_with("toml") {
            parse_toml(text, p)
        } else {
            parse_json(text, p)
        }
    }

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

    /// Two mixes with one name were merged into one mix of both; now the
    /// file is refused, naming both entries, in every format.
    #[test]
    fn duplicate_names_are_refused() {
        let cases: [(&str, &str, &str); 5] = [
            (
                "b.toml",
                "[[workload]]\napps=['ammp00']\nname='X'\n[[workload]]\napps=['lbm06']\nname='X'\n",
                "workload[0] and workload[1] are both named \"X\"",
            ),
            (
                "b.toml",
                "[[workload]]\napps=['a']\n[[workload]]\napps=['b']\nname='W1'\n",
                "workload[0] and workload[1] are both named \"W1\"",
            ),
            (
                "b.json",
                r#"[{"name":"X","apps":["a"]},{"name":"Y","apps":["b"]},{"name":"X","apps":["c"]}]"#,
                "workloads[0] and workloads[2] are both named \"X\"",
            ),
            (
                "b.json",
                r#"{"workloads": [{"name":"W2","apps":["a"]}, ["b"]]}"#,
                "workloads[0] and workloads[1] are both named \"W2\"",
            ),
            ("b.toml", "workloads=[['a'], ['b']]\n", ""),
        ];
        for (name, text, want) in cases {
            let r = parse_named(name, text);
            if want.is_empty() {
                assert_eq!(r.unwrap().len(), 2, "{text}");
                continue;
            }
            let e = r.unwrap_err().to_string();
            assert!(e.starts_with(name) && e.contains(want), "{text}: {e}");
        }
        // the text format numbers every line's mix: never a duplicate
        let w = parse_text("a\n\nb\n# c\nc\n", Path::new("w.csv")).unwrap();
        let names: Vec<&str> = w.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["W1", "W2", "W3"]);
        let twice = [Workload::new("X", &["a"]), Workload::new("X", &["b"])];
        let e = check_unique_names(&twice, Path::new("w.csv"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("w.csv: ") && e.contains("both named \"X\""),
            "{e}"
        );
    }

    #[test]
    fn unknown_keys_are_named() {
        let cases: [(&str, &str, &str); 8] = [
            (
                "w.toml",
                "[[workload]]\nname='x'\napps=['a']\nbogus=1\n",
                "workload[0]: unknown key `bogus`",
            ),
            (
                "w.toml",
                "wrkloads=[['a']]\n[[workload]]\napps=['a']\n",
                "wrkloads: unknown key",
            ),
            (
                "w.toml",
                "[[workload]]\nname='x'\n",
                "workload[0]: missing key `apps`",
            ),
            (
                "w.toml",
                "[[workload]]\napps=['a', 3]\n",
                "workload[0].apps[1]: 3: expected a program name",
            ),
            (
                "w.json",
                r#"{"workloads": [["a"]], "extra": 1}"#,
                "extra: unknown key",
            ),
            (
                "w.json",
                r#"[{"name":"x","apps":["a"],"nme":2}]"#,
                "workloads[0]: unknown key `nme`",
            ),
            (
                "w.json",
                r#"[{"name":"x","aps":["a"]}]"#,
                "workloads[0]: unknown key `aps`",
            ),
            (
                "w.json",
                r#"[["a"], 7]"#,
                "workloads[1]: 7: expected a list of program names",
            ),
        ];
        for (name, text, want) in cases {
            let r = parse_named(name, text);
            let e = r.unwrap_err().to_string();
            assert!(e.starts_with(name) && e.contains(want), "{text}: {e}");
        }
    }
}
