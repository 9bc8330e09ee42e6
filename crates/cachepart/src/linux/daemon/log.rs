//! The daemon's log: one JSON object per line, each with `event` and the
//! wall-clock time `unix_ms` first, then the event's fields in the order
//! the table lists them, flushed line by line (stderr, or a file
//! opened for appending, so journald and `tail -f` see each decision at
//! once).
//!
//! | event | fields |
//! |---|---|
//! | `start` | `pid`, `config`, `mount`, `policy`, `interval_ms`, `targets`, `removed_at_start` (stale groups of dead managers) |
//! | `plan` | `interval`, `policy`, `cause` (`targets`: the set of processes changed, or the daemon started or reloaded; `controller`: an online controller re-planned), `apps` (`name`, `pid`, `cluster`), `clusters` (`group`, `mask`, `apps`), `joined`, `left` |
//! | `error` | `interval`, `error` (said once until it changes) |
//! | `reload` | `ok`; with `ok: true` the new `policy`, `interval_ms`, `targets`; with `ok: false` the `error`, and `kept` (the old configuration stays) |
//! | `stop` | `signal` (`SIGINT`, `SIGTERM`), `groups_removed`, `error` if a removal failed |

use cachepart_units::Kind as _;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use cachepart_linux::machine::Adopter;
use cachepart_machine::Plan;
use cachepart_units::WayMask;
use serde::Serialize;

use super::config::DaemonConfig;
use super::Cause;
use crate::error::Error;

/// Where the log goes.
pub struct Log {
    out: Box<dyn Write + Send>,
    /// Where, for errors.
    name: String,
}

impl Log {
    /// A log written to `out`, called `name` in errors (`stderr`, a path).
    pub fn new(out: Box<dyn Write + Send>, name: impl Into<String>) -> Log {
        Log {
            out,
            name: name.into(),
        }
    }

    /// The log appended to `path` (created if missing), or stderr.
    pub fn open(path: Option<&Path>) -> Result<Log, Error> {
        Ok(match path {
            Some(p) => {
                let f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .map_err(|e| Error::Io {
                        path: p.to_path_buf(),
                        source: e,
                    })?;
                Log::new(Box::new(f), p.display().to_string())
            }
            None => Log::new(Box::new(std::io::stderr()), "stderr"),
        })
    }

    /// Writes one line: `event`, `unix_ms`, then `fields` in their
    /// declared order (typed structs keep it; a JSON map would sort it).
    fn line<T: Serialize>(&mut self, event: &str, fields: T) -> Result<(), Error> {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let line = Line {
            event,
            unix_ms: ms,
            fields,
        };
        let mut text = serde_json::to_string(&line).map_err(|e| Error::Output(e.to_string()))?;
        text.push('\n');
        self.out
            .write_all(text.as_bytes())
            .and_then(|()| self.out.flush())
            .map_err(|e| Error::Io {
                path: self.name.clone().into(),
                source: e,
            })
    }

    fn targets(config: &DaemonConfig) -> Vec<TargetLine<'_>> {
        config
            .targets
            .iter()
            .map(|t| TargetLine {
                name: &t.name,
                select: t.selector.to_string(),
                profile: &t.profile,
            })
            .collect()
    }

    /// The daemon took the mount.
    pub fn start(&mut self, config: &DaemonConfig, adopter: &Adopter) -> Result<(), Error> {
        #[derive(Serialize)]
        struct Start<'a> {
            pid: u32,
            config: String,
            mount: String,
            policy: String,
            interval_ms: u64,
            targets: Vec<TargetLine<'a>>,
            removed_at_start: &'a [String],
        }
        self.line(
            "start",
            Start {
                pid: std::process::id(),
                config: config.path.display().to_string(),
                mount: adopter.groups().resctrl().mount().display().to_string(),
                policy: config.policy.to_string(),
                interval_ms: config.interval.as_millis() as u64,
                targets: Self::targets(config),
                removed_at_start: adopter.groups().removed_at_start(),
            },
        )
    }

    /// A plan was applied to the adopted processes; `before` is the set
    /// of the previous plan (name to pid).
    pub fn plan(
        &mut self,
        interval: u64,
        config: &DaemonConfig,
        adopter: &Adopter,
        plan: &Plan,
        before: &BTreeMap<String, u32>,
        cause: Cause,
    ) -> Result<(), Error> {
        #[derive(Serialize)]
        struct AppLine<'a> {
            name: &'a str,
            pid: u32,
            cluster: Option<usize>,
        }
        #[derive(Serialize)]
        struct ClusterLine<'a> {
            group: Option<&'a str>,
            mask: WayMask,
            apps: Vec<&'a str>,
        }
        #[derive(Serialize)]
        struct PlanLine<'a> {
            interval: u64,
            policy: String,
            cause: &'a str,
            apps: Vec<AppLine<'a>>,
            clusters: Vec<ClusterLine<'a>>,
            joined: Vec<&'a str>,
            left: Vec<&'a str>,
        }
        let apps = adopter.apps();
        let cluster_of = |i: usize| plan.clusters.iter().position(|c| c.apps.contains(&i));
        let groups = adopter.groups().clusters();
        let now: BTreeMap<&str, u32> = apps.iter().map(|a| (a.name.as_str(), a.pid)).collect();
        let joined: Vec<&str> = now
            .keys()
            .filter(|n| !before.contains_key(**n))
            .copied()
            .collect();
        let left: Vec<&str> = before
            .keys()
            .filter(|n| !now.contains_key(n.as_str()))
            .map(String::as_str)
            .collect();
        let line = PlanLine {
            interval,
            policy: config.policy.to_string(),
            cause: cause.name(),
            apps: apps
                .iter()
                .enumerate()
                .map(|(i, a)| AppLine {
                    name: &a.name,
                    pid: a.pid,
                    cluster: cluster_of(i),
                })
                .collect(),
            clusters: plan
                .clusters
                .iter()
                .enumerate()
                .map(|(c, cl)| ClusterLine {
                    group: groups.get(c).map(|g| g.name.as_str()),
                    mask: cl.mask,
                    apps: cl.apps.iter().map(|&i| apps[i].name.as_str()).collect(),
                })
                .collect(),
            joined,
            left,
        };
        self.line("plan", line)
    }

    /// A scan or plan failed; the loop goes on.
    pub fn error(&mut self, interval: u64, error: &str) -> Result<(), Error> {
        #[derive(Serialize)]
        struct ErrorLine<'a> {
            interval: u64,
            error: &'a str,
        }
        self.line("error", ErrorLine { interval, error })
    }

    /// A new configuration was read and is in force.
    pub fn reload_ok(&mut self, config: &DaemonConfig) -> Result<(), Error> {
        #[derive(Serialize)]
        struct Reloaded<'a> {
            ok: bool,
            config: String,
            policy: String,
            interval_ms: u64,
            targets: Vec<TargetLine<'a>>,
        }
        self.line(
            "reload",
            Reloaded {
                ok: true,
                config: config.path.display().to_string(),
                policy: config.policy.to_string(),
                interval_ms: config.interval.as_millis() as u64,
                targets: Self::targets(config),
            },
        )
    }

    /// The configuration could not be re-read; the old one stays.
    pub fn reload_refused(&mut self, error: &str) -> Result<(), Error> {
        #[derive(Serialize)]
        struct Refused<'a> {
            ok: bool,
            error: &'a str,
            kept: &'a str,
        }
        self.line(
            "reload",
            Refused {
                ok: false,
                error,
                kept: "the previous configuration",
            },
        )
    }

    /// The daemon stops on `signal`, its groups removed.
    pub fn stop(&mut self, signal: i32, groups: usize, error: Option<String>) -> Result<(), Error> {
        #[derive(Serialize)]
        struct Stop {
            signal: String,
            groups_removed: usize,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<String>,
        }
        let signal = match signal {
            2 => "SIGINT".to_string(),
            15 => "SIGTERM".to_string(),
            n => format!("signal {n}"),
        };
        self.line(
            "stop",
            Stop {
                signal,
                groups_removed: groups,
                error,
            },
        )
    }
}

/// One log line: the event and its time first, then its fields.
#[derive(Serialize)]
struct Line<'a, T> {
    event: &'a str,
    unix_ms: u64,
    #[serde(flatten)]
    fields: T,
}

/// A target as the `start` and `reload` lines list it.
#[derive(Serialize)]
struct TargetLine<'a> {
    name: &'a str,
    select: String,
    profile: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer whose bytes the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The keys of a line, in the order they were written.
    fn keys(line: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut de = serde_json::Deserializer::from_str(line);
        struct Keys<'a>(&'a mut Vec<String>);
        impl<'de> serde::de::Visitor<'de> for Keys<'_> {
            type Value = ();
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
                while let Some(k) = m.next_key::<String>()? {
                    m.next_value::<serde::de::IgnoredAny>()?;
                    self.0.push(k);
                }
                Ok(())
            }
        }
        serde::Deserializer::deserialize_map(&mut de, Keys(&mut out)).unwrap();
        out
    }

    #[test]
    fn lines_start_with_the_event_and_keep_the_fields_order() {
        let buf = Shared::default();
        let mut log = Log::new(Box::new(buf.clone()), "test");
        log.error(3, "no such process").unwrap();
        log.reload_refused("bad.toml:2: policy").unwrap();
        log.stop(15, 2, Some("busy".into())).unwrap();
        log.stop(2, 0, None).unwrap();
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(keys(lines[0]), ["event", "unix_ms", "interval", "error"]);
        assert_eq!(keys(lines[1]), ["event", "unix_ms", "ok", "error", "kept"]);
        assert_eq!(
            keys(lines[2]),
            ["event", "unix_ms", "signal", "groups_removed", "error"]
        );
        assert_eq!(
            keys(lines[3]),
            ["event", "unix_ms", "signal", "groups_removed"]
        );
        let v: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(v["event"], "stop");
        assert_eq!(v["signal"], "SIGTERM");
    }
}
