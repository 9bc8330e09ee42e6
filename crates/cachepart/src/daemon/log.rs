//! The daemon's log: one JSON object per line, each with `event` and the
//! wall-clock time `unix_ms`, flushed line by line (stderr, or a file
//! opened for appending, so journald and `tail -f` see each decision at
//! once).
//!
//! | event | fields |
//! |---|---|
//! | `start` | `pid`, `config`, `mount`, `policy`, `interval_ms`, `targets`, `removed_at_start` (stale groups of dead managers) |
//! | `plan` | `interval`, `policy`, `apps` (`name`, `pid`, `cluster`), `clusters` (`group`, `mask`, `apps`), `joined`, `left` |
//! | `error` | `interval`, `error` (said once until it changes) |
//! | `reload` | `ok`; with `ok: true` the new `policy`, `interval_ms`, `targets`; with `ok: false` the `error`, and `kept` (the old configuration stays) |
//! | `stop` | `signal` (`SIGINT`, `SIGTERM`), `groups_removed`, `error` if a removal failed |

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use cachepart_linux::machine::Adopter;
use cachepart_machine::Plan;
use serde_json::{json, Value};

use super::config::DaemonConfig;
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

    fn line(&mut self, event: &str, mut fields: Value) -> Result<(), Error> {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let mut obj = serde_json::Map::new();
        obj.insert("event".into(), json!(event));
        obj.insert("unix_ms".into(), json!(ms));
        if let Value::Object(f) = fields.take() {
            obj.extend(f);
        }
        let mut text = Value::Object(obj).to_string();
        text.push('\n');
        self.out
            .write_all(text.as_bytes())
            .and_then(|()| self.out.flush())
            .map_err(|e| Error::Io {
                path: self.name.clone().into(),
                source: e,
            })
    }

    fn targets(config: &DaemonConfig) -> Value {
        config
            .targets
            .iter()
            .map(
                |t| json!({"name": t.name, "select": t.selector.to_string(), "profile": t.profile}),
            )
            .collect()
    }

    /// The daemon took the mount.
    pub fn start(&mut self, config: &DaemonConfig, adopter: &Adopter) -> Result<(), Error> {
        self.line(
            "start",
            json!({
                "pid": std::process::id(),
                "config": config.path.display().to_string(),
                "mount": adopter.resctrl().mount().display().to_string(),
                "policy": config.policy.to_string(),
                "interval_ms": config.interval.as_millis() as u64,
                "targets": Self::targets(config),
                "removed_at_start": adopter.removed_at_start(),
            }),
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
    ) -> Result<(), Error> {
        let apps = adopter.apps();
        let cluster_of = |i: usize| plan.clusters.iter().position(|c| c.apps.contains(&i));
        let groups = adopter.cluster_groups();
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
        self.line(
            "plan",
            json!({
                "interval": interval,
                "policy": config.policy.to_string(),
                "apps": apps.iter().enumerate().map(|(i, a)| json!({
                    "name": a.name, "pid": a.pid, "cluster": cluster_of(i),
                })).collect::<Vec<_>>(),
                "clusters": plan.clusters.iter().enumerate().map(|(c, cl)| json!({
                    "group": groups.get(c).map(|g| g.name.clone()),
                    "mask": format!("0x{}", cl.mask),
                    "apps": cl.apps.iter().map(|&i| apps[i].name.clone()).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
                "joined": joined,
                "left": left,
            }),
        )
    }

    /// A scan or plan failed; the loop goes on.
    pub fn error(&mut self, interval: u64, error: &str) -> Result<(), Error> {
        self.line("error", json!({"interval": interval, "error": error}))
    }

    /// A new configuration was read and is in force.
    pub fn reload_ok(&mut self, config: &DaemonConfig) -> Result<(), Error> {
        self.line(
            "reload",
            json!({
                "ok": true,
                "config": config.path.display().to_string(),
                "policy": config.policy.to_string(),
                "interval_ms": config.interval.as_millis() as u64,
                "targets": Self::targets(config),
            }),
        )
    }

    /// The configuration could not be re-read; the old one stays.
    pub fn reload_refused(&mut self, error: &str) -> Result<(), Error> {
        self.line(
            "reload",
            json!({"ok": false, "error": error, "kept": "the previous configuration"}),
        )
    }

    /// The daemon stops on `signal`, its groups removed.
    pub fn stop(&mut self, signal: i32, groups: usize, error: Option<String>) -> Result<(), Error> {
        let name = match signal {
            2 => "SIGINT".to_string(),
            15 => "SIGTERM".to_string(),
            n => format!("signal {n}"),
        };
        let mut f = json!({"signal": name, "groups_removed": groups});
        if let Some(e) = error {
            f["error"] = json!(e);
        }
        self.line("stop", f)
    }
}
