//! The JSON writer every command uses: serde_json's pretty form (two-space
//! indents) and a final newline.

use serde::Serialize;

/// `value` as pretty JSON with a final newline.
///
/// # Panics
///
/// When `value` cannot be written as JSON (a map with non-text keys):
/// output types are fixed in code, and each has a test that writes it.
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", std::any::type_name::<T>()));
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_with_a_final_newline() {
        #[derive(Serialize)]
        struct R {
            a: u8,
            b: Option<f64>,
        }
        assert_eq!(
            to_json(&[R { a: 1, b: None }]),
            "[\n  {\n    \"a\": 1,\n    \"b\": null\n  }\n]\n"
        );
    }
}
