//! How an error reaches the terminal: the error's message, then each
//! cause in turn, except a cause whose text the message already holds.
//! Many typed errors name their cause in their own message (`FILE: No
//! such file or directory`) and also expose it as their `source()`;
//! printing the whole chain would say it twice.

/// One line for `e`: its message and the causes it does not already say.
pub fn render(e: &anyhow::Error) -> String {
    let mut out = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !out.contains(&c) {
            out.push_str(": ");
            out.push_str(&c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    /// An error that names its cause in its message and exposes it as
    /// its source, as `#[error("{path}: {source}")]` does.
    #[derive(Debug)]
    struct Named {
        path: String,
        source: io::Error,
    }

    impl std::fmt::Display for Named {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{}: {}", self.path, self.source)
        }
    }

    impl std::error::Error for Named {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.source)
        }
    }

    #[test]
    fn a_cause_the_message_already_names_is_not_repeated() {
        let e = anyhow::Error::new(Named {
            path: "/x.csv".into(),
            source: io::Error::new(io::ErrorKind::NotFound, "No such file or directory"),
        });
        assert_eq!(render(&e), "/x.csv: No such file or directory");
    }

    #[test]
    fn a_cause_the_message_lacks_is_added() {
        let e = anyhow::Error::new(io::Error::other("disk full")).context("writing out.csv");
        assert_eq!(render(&e), "writing out.csv: disk full");
    }
}
