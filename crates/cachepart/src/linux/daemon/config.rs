//! The daemon's configuration file (TOML): the policy, the interval, the
//! profile table, the targets (each a process id, a command name or a
//! cgroup), and an online controller's parameters in the same sections
//! as a mix file's (`[lfoc-online]`, `[kpart-dynaway]`, `[dunn-dynamic]`,
//! `[ucp-online]`). Every error names the file, the line and the field,
//! and says what is expected: `daemon.toml:7: target[1].comm: ...`.
//!
//! ```toml
//! policy = "lfoc"              # a policy, as `cachepart run --policy`
//! interval = "1s"              # how often the targets are found again (default 1s)
//! metrics = "metrics.csv"      # the profile table; relative to this file
//!
//! [[target]]
//! name = "db"                  # names its processes in the log (db:PID)
//! comm = "postgres"            # or pid = 1234, or cgroup = "system.slice/x.service"
//! profile = "xz"               # its rows in the table (default: name)
//!
//! [lfoc-online]                # with policy = "lfoc-online"
//! window-instructions = 1e7
//! ```

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

pub use super::target::Target;
use super::target::{check_targets, TargetFile};
use crate::error::Error;
use crate::linux::mix::parse_interval;
use crate::run::online::{
    DunnDynamicFile, KpartDynawayFile, LfocOnlineFile, Sections, UcpOnlineFile,
};
use crate::run::online_throttle::ThrottleOnlineFile;
use crate::Algorithm;

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct File {
    policy: Spanned<String>,
    #[serde(default)]
    interval: Option<Spanned<String>>,
    #[serde(default)]
    metrics: Option<Spanned<PathBuf>>,
    #[serde(rename = "target", default)]
    targets: Vec<Spanned<TargetFile>>,
    #[serde(default)]
    lfoc_online: Option<LfocOnlineFile>,
    #[serde(default)]
    kpart_dynaway: Option<KpartDynawayFile>,
    #[serde(default)]
    dunn_dynamic: Option<DunnDynamicFile>,
    #[serde(default)]
    ucp_online: Option<UcpOnlineFile>,
    #[serde(default)]
    throttle_online: Option<ThrottleOnlineFile>,
}

/// A checked configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct DaemonConfig {
    /// The file it was read from.
    pub path: PathBuf,
    /// The policy: a static one (plans when the set of processes
    /// changes) or an online controller (also re-plans from counters).
    pub policy: Algorithm,
    /// The 1-based line of `policy`, for errors found later.
    pub policy_line: usize,
    /// How often the targets are found again.
    pub interval: Duration,
    /// The profile table, resolved against the file's directory.
    pub metrics: Option<PathBuf>,
    /// The 1-based line of `metrics` (0 without it), for errors found
    /// when the table is read.
    pub metrics_line: usize,
    /// The targets, file order.
    pub targets: Vec<Target>,
    /// `[lfoc-online]`.
    pub lfoc_online: Option<LfocOnlineFile>,
    /// `[kpart-dynaway]`.
    pub kpart_dynaway: Option<KpartDynawayFile>,
    /// `[dunn-dynamic]`.
    pub dunn_dynamic: Option<DunnDynamicFile>,
    /// `[ucp-online]`.
    pub ucp_online: Option<UcpOnlineFile>,
    /// `[throttle-online]`.
    pub throttle_online: Option<ThrottleOnlineFile>,
}

impl DaemonConfig {
    /// Its online controllers' sections.
    pub fn sections(&self) -> Sections<'_> {
        Sections {
            lfoc_online: self.lfoc_online.as_ref(),
            kpart_dynaway: self.kpart_dynaway.as_ref(),
            dunn_dynamic: self.dunn_dynamic.as_ref(),
            ucp_online: self.ucp_online.as_ref(),
            throttle_online: self.throttle_online.as_ref(),
        }
    }
}

/// The 1-based line of byte offset `at` in `text`.
pub(super) fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// The key on the line of `span`, when the line is `key = value`.
fn key_at(text: &str, span: &Range<usize>) -> Option<String> {
    let start = text[..span.start.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line = text[start..].lines().next()?;
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    (!key.is_empty() && !key.starts_with('[')).then(|| key.to_string())
}

impl DaemonConfig {
    /// Reads and checks the file at `path` (a file: standard input, `-`,
    /// is refused, as the daemon reads its configuration again on SIGHUP).
    pub fn read(path: &Path) -> Result<DaemonConfig, Error> {
        if cachepart_units::input::is_stdin(path) {
            return Err(Error::Usage(
                "-: the daemon reads its configuration again on SIGHUP, so it needs a file, not standard input".into(),
            ));
        }
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        DaemonConfig::parse(&text, path)
    }

    /// Parses and checks `text`, read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<DaemonConfig, Error> {
        let at = |span: &Range<usize>, field: &str, what: String| {
            Error::config(
                format_args!("{}:{}", path.display(), line_of(text, span.start)),
                field,
                what,
            )
        };
        let file: File = toml::from_str(text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            let missing = e
                .message()
                .strip_prefix("missing field `")
                .and_then(|m| m.split('`').next());
            let field = match missing {
                Some(m) => m.to_string(),
                None => key_at(text, &span).unwrap_or_else(|| "file".into()),
            };
            at(
                &span,
                &field,
                format!(
                    "{} (expected policy, interval, metrics, [[target]] tables with name and one of pid, comm, cgroup, and the online controllers' [lfoc-online], [kpart-dynaway], [dunn-dynamic], [ucp-online], [throttle-online])",
                    e.message().trim_end()
                ),
            )
        })?;
        let policy: Algorithm = file
            .policy
            .get_ref()
            .parse()
            .map_err(|e: Error| at(&file.policy.span(), "policy", e.to_string()))?;
        let interval = match &file.interval {
            Some(s) => parse_interval(s.get_ref()).map_err(|e| at(&s.span(), "interval", e))?,
            None => Duration::from_secs(1),
        };
        let base = path.parent().unwrap_or(Path::new("."));
        let metrics = file.metrics.as_ref().map(|m| base.join(m.get_ref()));
        if file.targets.is_empty() {
            return Err(at(
                &(text.len()..text.len()),
                "target",
                "no [[target]]: expected at least one, with name and one of pid, comm, cgroup"
                    .into(),
            ));
        }
        let targets = check_targets(text, &file.targets, &at)?;
        Ok(DaemonConfig {
            path: path.to_path_buf(),
            policy,
            policy_line: line_of(text, file.policy.span().start),
            interval,
            metrics,
            metrics_line: file
                .metrics
                .as_ref()
                .map_or(0, |m| line_of(text, m.span().start)),
            targets,
            lfoc_online: file.lfoc_online,
            kpart_dynaway: file.kpart_dynaway,
            dunn_dynamic: file.dunn_dynamic,
            ucp_online: file.ucp_online,
            throttle_online: file.throttle_online,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_linux::targets::Selector;

    fn parse(text: &str) -> Result<DaemonConfig, String> {
        DaemonConfig::parse(text, Path::new("/etc/cachepart/daemon.toml"))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_good_file_reads() {
        let c = parse(
            "policy = \"lfoc\"\ninterval = \"200ms\"\nmetrics = \"m.csv\"\n\
             [[target]]\nname = \"db\"\ncomm = \"postgres\"\nprofile = \"xz\"\n\
             [[target]]\nname = \"web\"\ncgroup = \"system.slice/nginx.service\"\n\
             [[target]]\nname = \"one\"\npid = 42\n",
        )
        .unwrap();
        assert_eq!(c.policy, Algorithm::Lfoc);
        assert_eq!(c.interval, Duration::from_millis(200));
        assert_eq!(c.metrics, Some(PathBuf::from("/etc/cachepart/m.csv")));
        assert_eq!(c.metrics_line, 3);
        assert_eq!(c.targets.len(), 3);
        assert_eq!(c.targets[0].selector, Selector::Comm("postgres".into()));
        assert_eq!(c.targets[0].profile, "xz");
        assert_eq!(c.targets[1].profile, "web");
        assert_eq!(c.targets[2].selector, Selector::Pid(42));
        let c = parse("policy = \"stock\"\n[[target]]\nname = \"a\"\npid = 1\n").unwrap();
        assert_eq!((c.interval, c.metrics), (Duration::from_secs(1), None));
        let c = parse(
            "policy = \"lfoc-online\"\n[[target]]\nname = \"a\"\npid = 1\n\
             [lfoc-online]\nwindow-instructions = 2e6\n",
        )
        .unwrap();
        assert_eq!(c.policy, Algorithm::LfocOnline);
        let section = c.sections().lfoc_online.expect("the section is read");
        assert_eq!(section.window_instructions, Some(2e6));
        assert!(c.sections().dunn_dynamic.is_none());
    }

    #[test]
    fn errors_name_the_file_the_line_and_the_field() {
        let t = "[[target]]\nname = \"a\"\npid = 1\n";
        let cases = [
            (format!("policy = \"lfox\"\n{t}"), ":1: policy: ", "lfox"),
            (
                format!("policy = \"lfoc-online\"\n{t}[lfoc-online]\nwindow = 1\n"),
                ":6: window: ",
                "unknown field `window`",
            ),
            (
                format!("policy = \"lfoc\"\ninterval = \"soon\"\n{t}"),
                ":2: interval: ",
                "expected a duration",
            ),
            (
                format!("policy = \"lfoc\"\ncolour = 1\n{t}"),
                ":2: colour: ",
                "unknown field `colour`",
            ),
            (
                "policy = \"lfoc\"\n[[target]]\nname = \"a\"\npid = \"x\"\n".into(),
                ":4: pid: ",
                "invalid type",
            ),
            (
                "policy = \"lfoc\"\n[[target]]\nname = \"a\"\npid = 1\ncomm = \"x\"\n".into(),
                ":5: target[0].pid: ",
                "pid and comm given; expected exactly one of pid, comm, cgroup",
            ),
            (
                "policy = \"lfoc\"\n[[target]]\nname = \"a\"\n".into(),
                ":2: target[0].pid: ",
                "none given",
            ),
            (
                format!("policy = \"lfoc\"\n{t}[[target]]\nname = \"b\"\ncomm = \"a-name-longer-than-15\"\n"),
                ":7: target[1].comm: ",
                "1 to 15 bytes",
            ),
            (
                format!("policy = \"lfoc\"\n{t}[[target]]\nname = \"b\"\ncgroup = \"/sys/fs/cgroup/x\"\n"),
                ":7: target[1].cgroup: ",
                "relative to the cgroup root",
            ),
            (
                format!("policy = \"lfoc\"\n{t}{t}"),
                ":6: target[1].name: ",
                "names two targets",
            ),
            (
                "policy = \"lfoc\"\n".into(),
                ":2: target: ",
                "no [[target]]",
            ),
            (
                format!("interval = \"1s\"\n{t}"),
                ": policy: ",
                "missing field `policy`",
            ),
            (
                "policy = \"lfoc\"\n[[target]]\npid = 1\n".into(),
                ":2: name: ",
                "missing field `name`",
            ),
        ];
        for (text, place, words) in cases {
            let e = parse(&text).unwrap_err();
            assert!(
                e.starts_with("/etc/cachepart/daemon.toml")
                    && e.contains(place)
                    && e.contains(words),
                "{text}\n-> {e}"
            );
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }
}
