//! The constructors the seams use to build each kind of [`Error`], and
//! the accessors that find the lower layer's error behind one.

use std::fmt::Display;
use std::path::Path;

use super::{Error, Source};

/// The non-empty parts joined by `": "`.
pub(super) fn joined(parts: &[&str]) -> String {
    let mut out = String::new();
    for p in parts.iter().filter(|p| !p.is_empty()) {
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(p);
    }
    out
}

impl Error {
    /// A configuration error: `whence` (the file, `FILE:LINE`, or the
    /// scenario), the field, and what is wrong. Prints `WHENCE: FIELD: WHAT`.
    pub fn config(whence: impl Display, field: impl Into<String>, what: impl Display) -> Error {
        Error::Config {
            whence: whence.to_string(),
            field: field.into(),
            what: what.to_string(),
        }
    }

    /// A configuration file that is wrong as a whole (a parse error that
    /// names its own line and column): `FILE: WHAT`.
    pub fn config_file(path: &Path, what: impl Display) -> Error {
        Error::config(path.display(), String::new(), what)
    }

    /// A trace (or sample index) that cannot be read: `WHENCE: SOURCE`.
    pub fn trace(whence: impl Display, source: impl Into<Source>) -> Error {
        Error::Trace {
            whence: whence.to_string(),
            source: source.into(),
        }
    }

    /// A run on the real machine that failed with `source`: `WHAT: SOURCE`.
    pub fn machine(what: impl Display, source: impl Into<Source>) -> Error {
        Error::Machine {
            what: what.to_string(),
            source: Some(source.into()),
        }
    }

    /// A run on the real machine refused for the reason `what`.
    pub fn machine_refused(what: impl Display) -> Error {
        Error::Machine {
            what: what.to_string(),
            source: None,
        }
    }

    /// Reading or writing the file at `path` failed.
    pub fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// This error as one of the run `run` (`scenario NAME`): a
    /// configuration error that names no file gets `run` as its place,
    /// any other becomes the run's [`Error::Simulation`].
    pub(crate) fn within(self, run: &str) -> Error {
        match self {
            Error::Config {
                whence,
                field,
                what,
            } if whence.is_empty() => Error::Config {
                whence: run.to_string(),
                field,
                what,
            },
            e => Error::simulation(run, e),
        }
    }

    /// The reader's error `e` of the trace this configuration error
    /// names (as its `what`): a [`Error::Trace`] that says the same words,
    /// `WHENCE: FIELD: TRACE: E`. Any other kind is kept as is.
    pub(crate) fn read_as_trace(self, e: cachepart_trace::TraceError) -> Error {
        match self {
            Error::Config {
                whence,
                field,
                what,
            } => Error::Trace {
                whence: joined(&[&whence, &field, &what]),
                source: Box::new(e),
            },
            other => other,
        }
    }

    /// The trace reader's error behind this one, if it is a trace error.
    pub fn trace_error(&self) -> Option<&cachepart_trace::TraceError> {
        match self {
            Error::Trace { source, .. } => source.downcast_ref(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn a_configuration_error_prints_file_field_and_what() {
        let e = Error::config("s.toml", "app[0].core", "expected a core of the platform");
        assert_eq!(
            e.to_string(),
            "s.toml: app[0].core: expected a core of the platform"
        );
        let e = Error::config_file(Path::new("m.toml"), "TOML parse error at line 1");
        assert_eq!(e.to_string(), "m.toml: TOML parse error at line 1");
    }

    #[test]
    fn a_trace_error_keeps_the_reader_error_as_its_source() {
        let e = Error::trace("t.cpt", cachepart_trace::TraceError::BadMagic { offset: 0 });
        assert_eq!(
            e.to_string(),
            "t.cpt: bad magic at byte offset 0: not a cachepart trace"
        );
        assert!(e.trace_error().is_some());
        let source = e.source().expect("a source");
        assert!(source
            .downcast_ref::<cachepart_trace::TraceError>()
            .is_some());
    }

    #[test]
    fn a_trace_a_configuration_names_keeps_the_words() {
        let e = Error::config("s.toml", "app[0] (a).trace", "t.cpt")
            .read_as_trace(cachepart_trace::TraceError::BadMagic { offset: 0 });
        assert!(e.trace_error().is_some());
        assert_eq!(
            e.to_string(),
            "s.toml: app[0] (a).trace: t.cpt: bad magic at byte offset 0: not a cachepart trace"
        );
    }

    #[test]
    fn a_machine_error_without_source_is_its_reason() {
        let e = Error::machine_refused("this machine cannot run a mix");
        assert_eq!(e.to_string(), "this machine cannot run a mix");
        assert!(e.source().is_none());
    }
}
