//! Mix files: the programs `cachepart run` launches (and `profile
//! measure` profiles), in TOML. Each app is a command line, optionally a
//! core to pin it to, `restart = true` to start it again when it finishes
//! before the slowest app has finished its first run, and the name of its
//! rows in the profile table (`profile`, default its `name`); names are
//! unique (they name the apps in samples and results). The file may
//! set the interval and the online controllers' parameters.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use crate::error::Error;
use crate::run::online::{
    DunnDynamicFile, KpartDynawayFile, LfocOnlineFile, Sections, UcpOnlineFile,
};

/// One app of a mix file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MixApp {
    /// Its name in the results.
    pub name: String,
    /// The command and its arguments (no shell; use `["sh", "-c", ...]`).
    pub argv: Vec<String>,
    /// The core to pin it to.
    #[serde(default)]
    pub core: Option<u32>,
    /// Restart it when it finishes before the slowest app's first run.
    #[serde(default)]
    pub restart: bool,
    /// Its program name in the profile table (default: `name`).
    #[serde(default)]
    pub profile: Option<String>,
}

/// A mix file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MixFile {
    /// The interval (`500ms`, `1s`), unless the command line gives one.
    #[serde(default)]
    pub interval: Option<String>,
    /// The apps.
    #[serde(rename = "app", default)]
    pub apps: Vec<MixApp>,
    /// Online LFOC's parameters (`--policy lfoc-online`).
    #[serde(default)]
    pub lfoc_online: Option<LfocOnlineFile>,
    /// KPart-Dynaway's parameters (`--policy kpart-dynaway`).
    #[serde(default)]
    pub kpart_dynaway: Option<KpartDynawayFile>,
    /// Dynamic Dunn's parameters (`--policy dunn-dynamic`).
    #[serde(default)]
    pub dunn_dynamic: Option<DunnDynamicFile>,
    /// UCP on utility monitors (`--policy ucp-online`; `sampled-sets` has
    /// no effect on Linux).
    #[serde(default)]
    pub ucp_online: Option<UcpOnlineFile>,
    /// Online throttling's parameters (`--policy throttle-online`, with
    /// `--allow-msr`).
    #[serde(default)]
    pub throttle_online: Option<crate::run::online_throttle::ThrottleOnlineFile>,
}

/// Parses `500ms`, `2s`, `1.5s`.
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        return Err(format!("'{t}': expected a duration such as 500ms or 2s"));
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v * scale >= 0.001 && v * scale <= 3600.0 => {
            Ok(Duration::from_secs_f64(v * scale))
        }
        _ => Err(format!(
            "'{t}': expected a duration from 1ms to 3600s, such as 500ms"
        )),
    }
}

impl MixFile {
    /// Reads and checks a mix file (`-`: standard input).
    pub fn read(path: &Path) -> Result<MixFile, Error> {
        let text = cachepart_units::input::read_text(path).map_err(|e| Error::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        let mix: MixFile = toml::from_str(&text).map_err(|e| Error::config_file(path, e))?;
        if mix.apps.is_empty() {
            return Err(Error::config(
                path.display(),
                "no [[app]]",
                "a mix lists at least one app",
            ));
        }
        for (i, a) in mix.apps.iter().enumerate() {
            if a.argv.is_empty() {
                return Err(Error::config(
                    path.display(),
                    format!("app {i} ({})", a.name),
                    "argv is empty; expected the command and its arguments",
                ));
            }
            // The name is the app's in samples and results.
            if let Some(j) = mix.apps[..i].iter().position(|b| b.name == a.name) {
                return Err(Error::config(
                    path.display(),
                    format!("app {i} ({})", a.name),
                    format_args!(
                        "name {:?} is app {j}'s too; expected a name of its own (`profile` names its rows in the profile table)",
                        a.name
                    ),
                ));
            }
        }
        if let Some(iv) = &mix.interval {
            parse_interval(iv)
                .map_err(|e| Error::config_file(path, format_args!("interval {e}")))?;
        }
        Ok(mix)
    }

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

impl MixApp {
    /// Its program's name in a profile table.
    pub fn program(&self) -> &str {
        self.profile.as_deref().unwrap_or(&self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_parse_and_refuse() {
        assert_eq!(parse_interval("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(
            parse_interval(" 1.5s").unwrap(),
            Duration::from_millis(1500)
        );
        for bad in ["500", "0ms", "fast", "-1s", "2h"] {
            let e = parse_interval(bad).unwrap_err();
            assert!(e.contains("expected a duration"), "{bad}: {e}");
        }
    }

    #[test]
    fn mix_files_are_checked() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("mix.toml");
        let bad = [
            ("", "no [[app]]"),
            ("[[app]]\nname = \"a\"\nargv = []\n", "argv is empty"),
            (
                "[[app]]\nname = \"a\"\nargv = [\"x\"]\ncolour = 1\n",
                "unknown field `colour`",
            ),
            (
                "interval = \"soon\"\n[[app]]\nname = \"a\"\nargv = [\"x\"]\n",
                "interval 'soon'",
            ),
            (
                "[[app]]\nname = \"a\"\nargv = [\"x\"]\n[[app]]\nname = \"a\"\nargv = [\"y\"]\n",
                "app 1 (a): name \"a\" is app 0's too",
            ),
        ];
        for (text, words) in bad {
            std::fs::write(&p, text).unwrap();
            let e = MixFile::read(&p).unwrap_err().to_string();
            assert!(e.contains(words) && e.contains("mix.toml"), "{text}: {e}");
        }
        std::fs::write(
            &p,
            "interval = \"200ms\"\n[[app]]\nname = \"xz\"\nargv = [\"xz\", \"-9\"]\ncore = 1\nrestart = true\n",
        )
        .unwrap();
        let m = MixFile::read(&p).unwrap();
        assert_eq!((m.apps[0].core, m.apps[0].restart), (Some(1), true));
    }
}
