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

#[cfg(test)]
mod tests {
    use super::*;

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
