//! Reading a text input that may be standard input: the path `-` means
//! stdin, as on every command that reads a file.

use std::io::Read;
use std::path::Path;

/// Whether `path` names standard input (`-`).
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The whole text of `path`, or of standard input when `path` is `-`.
pub fn read_text(path: &Path) -> std::io::Result<String> {
    if is_stdin(path) {
        let mut s = String::new();
        std::io::stdin().lock().read_to_string(&mut s)?;
        Ok(s)
    } else {
        std::fs::read_to_string(path)
    }
}

/// A parser's message without the Rust type names serde puts in it: a
/// value of the wrong type for a table reads "expected struct SynthConfig";
/// users wrote a table, not a struct, so it becomes "expected a table".
pub fn plain_type_names(message: &str) -> String {
    const STRUCT: &str = "expected struct ";
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find(STRUCT) {
        out.push_str(&rest[..i]);
        out.push_str("expected a table");
        let after = &rest[i + STRUCT.len()..];
        let end = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_names_become_tables() {
        assert_eq!(
            plain_type_names("line 4\ninvalid type: integer `5`, expected struct SynthConfig\n"),
            "line 4\ninvalid type: integer `5`, expected a table\n"
        );
        assert_eq!(
            plain_type_names("expected struct A, expected struct B_2"),
            "expected a table, expected a table"
        );
        assert_eq!(plain_type_names("expected a string"), "expected a string");
    }

    #[test]
    fn a_file_is_read_and_only_dash_is_stdin() {
        let dir = std::env::temp_dir().join(format!("cachepart-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.txt");
        std::fs::write(&f, "x,y\n").unwrap();
        assert_eq!(read_text(&f).unwrap(), "x,y\n");
        assert!(is_stdin(Path::new("-")));
        assert!(!is_stdin(Path::new("./-")));
        assert!(read_text(&dir.join("missing")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
