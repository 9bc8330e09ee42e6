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

/// A parser's message in the words of the file its user wrote:
///
/// * without the Rust type names serde puts in it: a value of the wrong
///   type for a table reads "expected struct SynthConfig"; users wrote a
///   table, not a struct, so it becomes "expected a table";
/// * without Rust's number type names: "expected u32" becomes "expected a
///   whole number from 0 to 4294967295", "expected u64" "expected a whole
///   number of at least 0", "expected i64" "expected a whole number",
///   "expected f64" "expected a number" (a fraction, `nan` or a negative
///   number given for a count otherwise reads "expected u64");
/// * without serde_json's "at line N column 0" for an input that ends too
///   early (the position after its last newline, a column no editor
///   shows): it becomes "at the end of the input, after line N-1" (or
///   "in an empty input" for line 1).
pub fn plain_type_names(message: &str) -> String {
    let message = plain_end_of_input(message);
    const STRUCT: &str = "expected struct ";
    let mut out = String::with_capacity(message.len());
    let mut rest: &str = &message;
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
    plain_number_names(&out)
}

/// A number in an error message as a person would write it: its plain
/// digits (`-3`, `0.000000000001`), or `1e300` past 1e16 in magnitude
/// rather than 301 digits.
pub fn shown(v: f64) -> String {
    if v.abs() < 1e16 {
        v.to_string()
    } else {
        format!("{v:e}")
    }
}

/// The words for Rust's number types after "expected " in a parser's
/// message.
const NUMBER_NAMES: [(&str, &str); 12] = [
    ("u8", "a whole number from 0 to 255"),
    ("u16", "a whole number from 0 to 65535"),
    ("u32", "a whole number from 0 to 4294967295"),
    ("u64", "a whole number of at least 0"),
    ("usize", "a whole number of at least 0"),
    ("u128", "a whole number of at least 0"),
    ("i8", "a whole number from -128 to 127"),
    ("i16", "a whole number from -32768 to 32767"),
    ("i32", "a whole number from -2147483648 to 2147483647"),
    ("i64", "a whole number"),
    ("f32", "a number"),
    ("f64", "a number"),
];

/// "expected u32" (and the other number types of [`NUMBER_NAMES`]) said
/// in words; "expected u32x" or "expected u32_t" are left alone.
fn plain_number_names(message: &str) -> String {
    const EXPECTED: &str = "expected ";
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find(EXPECTED) {
        let head = i + EXPECTED.len();
        out.push_str(&rest[..head]);
        rest = &rest[head..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if let Some((_, words)) = NUMBER_NAMES.iter().find(|(t, _)| *t == &rest[..end]) {
            out.push_str(words);
            rest = &rest[end..];
        }
    }
    out.push_str(rest);
    out
}

/// serde_json's " at line N column 0" at the end of `message`, said as
/// the end of the input.
fn plain_end_of_input(message: &str) -> std::borrow::Cow<'_, str> {
    const TAIL: &str = " column 0";
    const AT: &str = " at line ";
    let Some(head) = message.strip_suffix(TAIL) else {
        return message.into();
    };
    let Some(at) = head.rfind(AT) else {
        return message.into();
    };
    let Ok(line) = head[at + AT.len()..].parse::<u64>() else {
        return message.into();
    };
    let place = match line {
        0 | 1 => "in an empty input".to_string(),
        n => format!("at the end of the input, after line {}", n - 1),
    };
    format!("{} {place}", &head[..at]).into()
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

    /// A fraction, `nan` or a negative number for a count reads in words
    /// what was expected, not Rust's type name; other words stay.
    #[test]
    fn number_type_names_become_words() {
        assert_eq!(
            plain_type_names("line 9\ninvalid type: floating point `1.5`, expected u32\n"),
            "line 9\ninvalid type: floating point `1.5`, expected a whole number from 0 to 4294967295\n"
        );
        assert_eq!(
            plain_type_names("invalid type: floating point `NaN`, expected u64 at line 2 column 9"),
            "invalid type: floating point `NaN`, expected a whole number of at least 0 at line 2 column 9"
        );
        assert_eq!(
            plain_type_names("invalid value: integer `-1`, expected u64"),
            "invalid value: integer `-1`, expected a whole number of at least 0"
        );
        assert_eq!(
            plain_type_names("invalid type: string \"x\", expected f64"),
            "invalid type: string \"x\", expected a number"
        );
        for kept in [
            "expected u32x",
            "expected u64_t",
            "expected a u32",
            "expected",
        ] {
            assert_eq!(plain_type_names(kept), kept);
        }
        let json_err = serde_json::from_str::<u32>("1.5").unwrap_err().to_string();
        assert!(
            plain_type_names(&json_err).contains("expected a whole number from 0 to 4294967295"),
            "{json_err}"
        );
    }

    #[test]
    fn numbers_are_shown_as_written() {
        assert_eq!(shown(-3.0), "-3");
        assert_eq!(shown(1e-12), "0.000000000001");
        assert_eq!(shown(1000000.5), "1000000.5");
        assert_eq!(shown(1e300), "1e300");
        assert_eq!(shown(-1e20), "-1e20");
        assert_eq!(shown(f64::NAN), "NaN");
        assert_eq!(shown(f64::INFINITY), "inf");
    }

    #[test]
    fn column_zero_at_the_end_becomes_the_end_of_the_input() {
        let cut = serde_json::from_str::<serde_json::Value>("{\n \"a\": 1,\n")
            .unwrap_err()
            .to_string();
        assert_eq!(cut, "EOF while parsing a value at line 3 column 0");
        assert_eq!(
            plain_type_names(&cut),
            "EOF while parsing a value at the end of the input, after line 2"
        );
        let empty = serde_json::from_str::<serde_json::Value>("")
            .unwrap_err()
            .to_string();
        assert_eq!(
            plain_type_names(&empty),
            "EOF while parsing a value in an empty input"
        );
        // Other positions are kept.
        let bad = "expected value at line 2 column 10";
        assert_eq!(plain_type_names(bad), bad);
        assert_eq!(
            plain_type_names("x at line 3 column 0 y"),
            "x at line 3 column 0 y"
        );
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
