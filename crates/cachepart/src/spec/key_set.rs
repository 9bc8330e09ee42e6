//! `--set KEY=VALUE`: changing any key of a configuration file (a
//! scenario) from the command line, Python or a sweep, without writing a
//! new file.
//!
//! `KEY` is a dotted path into the file's tables (`platform`,
//! `lfoc-online.window-instructions`, `app.1.mlp`: a number indexes an array, from
//! 0). `VALUE` is a TOML value (`2`, `1.5`, `true`, `"xeon-5160"`,
//! `[1, 2]`, `{ run-cycles = 3 }`); text that does not parse as one is
//! taken as a string, so `--set platform=xeon-5160` needs no quotes.
//! Tables on the way are created; an array index must exist. The file is
//! then read as if it had been written with those values, so a key the
//! file's schema does not know is refused by the same check as in a file.
//!
//! Values pass through JSON on the way, which has no NaN or infinity, so
//! a non-finite number (`nan`, `inf`, `-inf`) is refused: in a `--set`
//! value by name of its key, in the file being set by its key's path.
//! (It would otherwise become an empty value, read as the key's default.)

use serde::de::DeserializeOwned;
use serde_json::Value;

/// One `KEY=VALUE`, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct KeySet {
    /// The dotted path, split.
    pub path: Vec<String>,
    /// The value.
    pub value: Value,
    /// As given, for messages.
    pub text: String,
}

impl KeySet {
    /// Parses `KEY=VALUE`.
    pub fn parse(text: &str) -> Result<KeySet, String> {
        let (key, value) = text
            .split_once('=')
            .ok_or_else(|| format!("{text:?}: expected KEY=VALUE (a dotted key such as lfoc-online.window-instructions)"))?;
        let key = key.trim();
        let path: Vec<String> = key.split('.').map(|p| p.trim().to_string()).collect();
        if key.is_empty() || path.iter().any(String::is_empty) {
            return Err(format!(
                "{text:?}: {key:?} is not a dotted key (expected names such as lfoc-online.window-instructions)"
            ));
        }
        let value = value.trim();
        let parsed = toml_value(value);
        if let Some((at, element)) = non_finite(&parsed, "") {
            // the value as typed, or the element of a table or array
            let shown = if at.is_empty() {
                value.to_string()
            } else {
                element.to_string()
            };
            return Err(format!(
                "{text:?}: {key}{at}: {shown} is not a finite number; a value set here must be finite"
            ));
        }
        Ok(KeySet {
            path,
            value: serde_json::to_value(&parsed)
                .unwrap_or_else(|_| Value::String(value.to_string())),
            text: text.to_string(),
        })
    }

    /// Sets the value in `doc`.
    pub fn apply(&self, doc: &mut Value) -> Result<(), String> {
        let mut at = doc;
        let (last, steps) = self.path.split_last().expect("a key has a name");
        for (depth, step) in steps.iter().enumerate() {
            let here = self.path[..=depth].join(".");
            at = match at {
                Value::Object(map) => map
                    .entry(step.clone())
                    .or_insert_with(|| Value::Object(Default::default())),
                Value::Array(items) => {
                    let len = items.len();
                    let i = index(step, len, &here)?;
                    &mut items[i]
                }
                other => {
                    return Err(format!(
                        "{here}: is {}, not a table or an array",
                        kind(other)
                    ))
                }
            };
        }
        match at {
            Value::Object(map) => {
                map.insert(last.clone(), self.value.clone());
            }
            Value::Array(items) => {
                let len = items.len();
                let i = index(last, len, &self.path.join("."))?;
                items[i] = self.value.clone();
            }
            other => {
                return Err(format!(
                    "{}: {} is {}, not a table or an array",
                    self.path.join("."),
                    steps.join("."),
                    kind(other)
                ))
            }
        }
        Ok(())
    }
}

fn index(step: &str, len: usize, here: &str) -> Result<usize, String> {
    match step.parse::<usize>() {
        Ok(i) if i < len => Ok(i),
        Ok(i) => Err(format!("{here}: index {i}, but the array has {len} items")),
        Err(_) => Err(format!(
            "{here}: {step:?} is not an index into an array of {len} items"
        )),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    }
}

/// `text` as a TOML value, or as a string when it is not one.
fn toml_value(text: &str) -> toml::Value {
    toml::from_str::<toml::Table>(&format!("v = {text}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(text.to_string()))
}

/// Where in `v` a non-finite float is (`""` for `v` itself, else
/// `.key` or `.0` steps after `at`), and that float, if anywhere.
fn non_finite<'a>(v: &'a toml::Value, at: &str) -> Option<(String, &'a toml::Value)> {
    match v {
        toml::Value::Float(f) if !f.is_finite() => Some((at.to_string(), v)),
        toml::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, x)| non_finite(x, &format!("{at}.{i}"))),
        toml::Value::Table(t) => t
            .iter()
            .find_map(|(k, x)| non_finite(x, &format!("{at}.{k}"))),
        _ => None,
    }
}

/// Parses TOML (or, for `json`, JSON) text, sets `sets`, and reads the
/// result as `T`. Errors are messages without the file's name.
pub fn read_with<T: DeserializeOwned>(
    text: &str,
    json: bool,
    sets: &[KeySet],
) -> Result<T, String> {
    let mut doc: Value = if json {
        serde_json::from_str(text)
            .map_err(|e| cachepart_units::input::plain_type_names(&e.to_string()))?
    } else {
        let doc: toml::Value = toml::from_str(text).map_err(|e| e.to_string())?;
        if let Some((at, _)) = non_finite(&doc, "") {
            return Err(format!(
                "{}: a non-finite number, which can not be carried through --set; \
                 write a finite number",
                at.trim_start_matches('.')
            ));
        }
        serde_json::to_value(doc).map_err(|e| e.to_string())?
    };
    for s in sets {
        s.apply(&mut doc)?;
    }
    let given: Vec<&str> = sets.iter().map(|s| s.text.as_str()).collect();
    serde_json::from_value(doc).map_err(|e| format!("{e} (with --set {})", given.join(" --set ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    struct Doc {
        name: String,
        #[serde(default)]
        timing: Option<Timing>,
        #[serde(default)]
        apps: Vec<App>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    struct Timing {
        quantum_cycles: u64,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct App {
        trace: String,
        #[serde(default)]
        mlp: Option<f64>,
    }

    const TEXT: &str = "name = \"a\"\n[[apps]]\ntrace = \"x\"\n[[apps]]\ntrace = \"y\"\n";

    fn sets(list: &[&str]) -> Vec<KeySet> {
        list.iter().map(|s| KeySet::parse(s).unwrap()).collect()
    }

    #[test]
    fn values_land_where_the_keys_say() {
        let d: Doc = read_with(
            TEXT,
            false,
            &sets(&["name=b c", "timing.quantum-cycles=5", "apps.1.mlp=2.5"]),
        )
        .unwrap();
        assert_eq!(d.name, "b c");
        assert_eq!(d.timing, Some(Timing { quantum_cycles: 5 }));
        assert_eq!(d.apps[1].mlp, Some(2.5));
        assert_eq!(d.apps[0].mlp, None);
        // a quoted string, a whole table
        let d: Doc = read_with(
            TEXT,
            false,
            &sets(&["name=\"7\"", "timing={ quantum-cycles = 9 }"]),
        )
        .unwrap();
        assert_eq!(d.name, "7");
        assert_eq!(d.timing, Some(Timing { quantum_cycles: 9 }));
        // JSON files too
        let d: Doc = read_with(r#"{"name": "j"}"#, true, &sets(&["name=k"])).unwrap();
        assert_eq!(d.name, "k");
    }

    #[test]
    fn bad_keys_are_refused_with_the_key() {
        for (set, words) in [
            ("nokey", "expected KEY=VALUE"),
            ("a..b=1", "not a dotted key"),
            ("apps.2.mlp=1", "apps.2: index 2, but the array has 2 items"),
            ("apps.x.mlp=1", "apps.x: \"x\" is not an index"),
            ("name.first=1", "name is a string"),
        ] {
            let e = KeySet::parse(set)
                .and_then(|s| read_with::<Doc>(TEXT, false, &[s]))
                .unwrap_err();
            assert!(e.contains(words), "{set}: {e}");
        }
        let e = read_with::<Doc>(TEXT, false, &sets(&["colour=1"])).unwrap_err();
        assert!(
            e.contains("unknown field `colour`") && e.contains("--set colour=1"),
            "{e}"
        );
        let e = read_with::<Doc>(TEXT, false, &sets(&["timing.quantum-cycles=-1"])).unwrap_err();
        assert!(e.contains("quantum-cycles=-1"), "{e}");
    }

    #[test]
    fn non_finite_numbers_are_refused_not_read_as_absent() {
        for (set, at) in [
            ("apps.1.mlp=nan", "apps.1.mlp: nan"),
            ("apps.1.mlp=inf", "apps.1.mlp: inf"),
            ("apps.1.mlp=-inf", "apps.1.mlp: -inf"),
            ("apps.1.mlp=+nan", "apps.1.mlp: +nan"),
            (
                "timing={ quantum-cycles = nan }",
                "timing.quantum-cycles: nan",
            ),
            ("apps=[1.0, inf]", "apps.1: inf"),
        ] {
            let e = KeySet::parse(set).unwrap_err();
            assert!(
                e.contains(set) && e.contains(at) && e.contains("not a finite number"),
                "{set}: {e}"
            );
        }
        // a string that merely spells one is still a string
        assert_eq!(
            KeySet::parse("name=\"nan\"").unwrap().value,
            Value::String("nan".into())
        );
        // the file's own non-finite value is refused, not dropped
        let e = read_with::<Doc>(
            "name = \"a\"\n[[apps]]\ntrace = \"x\"\nmlp = nan\n",
            false,
            &sets(&["name=b"]),
        )
        .unwrap_err();
        assert!(e.contains("apps.0.mlp") && e.contains("non-finite"), "{e}");
    }
}
