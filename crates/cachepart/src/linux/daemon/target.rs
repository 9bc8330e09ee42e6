//! One `[[target]]` of the daemon's configuration: as written
//! ([`TargetFile`]), its checks (a usable name, unique among the targets,
//! and exactly one selector: `pid`, `comm` or `cgroup`) and the checked
//! [`Target`].

use std::ops::Range;
use std::path::PathBuf;

use cachepart_linux::targets::Selector;
use serde::Deserialize;
use toml::Spanned;

use super::config::line_of;
use crate::error::Error;

/// A `[[target]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct TargetFile {
    name: Spanned<String>,
    #[serde(default)]
    pid: Option<Spanned<u32>>,
    #[serde(default)]
    comm: Option<Spanned<String>>,
    #[serde(default)]
    cgroup: Option<Spanned<PathBuf>>,
    #[serde(default)]
    profile: Option<Spanned<String>>,
}

/// One target: the processes one selector names, under one name and one
/// profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// Its name; its processes are `NAME:PID` in plans and logs.
    pub name: String,
    /// Which processes.
    pub selector: Selector,
    /// Its program name in the profile table.
    pub profile: String,
    /// The line of the target's `profile` (else of its `name`), for
    /// errors found when the table is read.
    pub profile_line: usize,
}

/// Checks every target of the file (`text` is the file, for lines);
/// `at(span, field, what)` makes the error of a field at a place.
pub(super) fn check_targets(
    text: &str,
    files: &[Spanned<TargetFile>],
    at: &impl Fn(&Range<usize>, &str, String) -> Error,
) -> Result<Vec<Target>, Error> {
    let mut targets: Vec<Target> = Vec::new();
    for (i, t) in files.iter().enumerate() {
        let field = |f: &str| format!("target[{i}].{f}");
        let t_span = t.span();
        let t = t.get_ref();
        let name = t.name.get_ref();
        let good_name = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
        if !good_name {
            return Err(at(
                &t.name.span(),
                &field("name"),
                format!("'{name}': expected letters, digits, '_', '.' or '-'"),
            ));
        }
        if targets.iter().any(|o| &o.name == name) {
            return Err(at(
                &t.name.span(),
                &field("name"),
                format!("'{name}' names two targets; expected one name per target"),
            ));
        }
        let mut given: Vec<(Selector, Range<usize>, &str)> = Vec::new();
        if let Some(p) = &t.pid {
            given.push((Selector::Pid(*p.get_ref()), p.span(), "pid"));
        }
        if let Some(c) = &t.comm {
            given.push((Selector::Comm(c.get_ref().clone()), c.span(), "comm"));
        }
        if let Some(c) = &t.cgroup {
            given.push((Selector::Cgroup(c.get_ref().clone()), c.span(), "cgroup"));
        }
        if given.len() != 1 {
            let span = given.get(1).map_or(t_span, |g| g.1.clone());
            return Err(at(
                &span,
                &field("pid"),
                format!(
                    "{} given; expected exactly one of pid, comm, cgroup",
                    if given.is_empty() {
                        "none".to_string()
                    } else {
                        given.iter().map(|g| g.2).collect::<Vec<_>>().join(" and ")
                    }
                ),
            ));
        }
        let (selector, span, key) = given.pop().expect("one selector");
        selector.check().map_err(|e| at(&span, &field(key), e))?;
        targets.push(Target {
            name: name.clone(),
            selector,
            profile: t
                .profile
                .as_ref()
                .map_or_else(|| name.clone(), |p| p.get_ref().clone()),
            profile_line: line_of(
                text,
                t.profile.as_ref().map_or(t.name.span(), |p| p.span()).start,
            ),
        });
    }
    Ok(targets)
}
