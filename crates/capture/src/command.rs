//! The command to capture: finding its program as `execvp` does, and
//! writing it back as one shell-quoted string for the trace's metadata.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The file `program` names, directly (with a `/`) or as an executable on
/// `PATH` (the first one, as `execvp` and valgrind look it up); `None` if
/// there is none. A caller checks its output against this file (the
/// program traced) before a capture.
pub fn resolve_command(program: &OsStr) -> Option<PathBuf> {
    let p = Path::new(program);
    if program.is_empty() {
        return None;
    }
    if program.as_encoded_bytes().contains(&b'/') {
        return p.is_file().then(|| p.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(p))
        .find(|f| {
            std::fs::metadata(f).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The command line as one string a POSIX shell would split back into the
/// same words (non-UTF-8 bytes are replaced).
pub(crate) fn shell_words(command: &[OsString]) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./,:=+@%".contains(c);
    command
        .iter()
        .map(|w| {
            let w = w.to_string_lossy();
            if !w.is_empty() && w.chars().all(safe) {
                w.into_owned()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[&str]) -> Vec<OsString> {
        ws.iter().map(OsString::from).collect()
    }

    #[test]
    fn shell_words_quote_only_what_needs_it() {
        assert_eq!(
            shell_words(&words(&["ls", "-la", "/usr/lib"])),
            "ls -la /usr/lib"
        );
        assert_eq!(
            shell_words(&words(&["sh", "-c", "echo it's", ""])),
            r"sh -c 'echo it'\''s' ''"
        );
    }

    #[test]
    fn commands_are_looked_up_like_valgrind_does() {
        let sh = resolve_command(OsStr::new("sh")).unwrap();
        assert!(sh.is_absolute() && sh.ends_with("sh"), "{}", sh.display());
        assert_eq!(
            resolve_command(OsStr::new("/bin/sh")),
            Some(PathBuf::from("/bin/sh"))
        );
        assert_eq!(
            resolve_command(OsStr::new("cachepart-no-such-command")),
            None
        );
        assert_eq!(resolve_command(OsStr::new("./no/such/file")), None);
        assert_eq!(resolve_command(OsStr::new("")), None);
    }
}
