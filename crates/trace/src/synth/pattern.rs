//! The address patterns a generator draws from ([`Pattern`], [`Phase`],
//! [`Distribution`]) and how they are read from a configuration.
//!
//! A pattern is a table with a `class` and the keys of that class. It is
//! read through [`PatternDoc`], a plain table of every key any class has,
//! so that a misspelt key or a value of the wrong type is reported at the
//! key itself (line and column, in TOML), not at the enclosing table as an
//! internally tagged enum would; the class then checks which keys it takes
//! and needs, naming the key in its refusal.

use cachepart_units::Kind as _;
use serde::{Deserialize, Serialize};

const DEFAULT_ELEMENT: u32 = 8;
const DEFAULT_LIGHT: u64 = 128 << 10;
const DEFAULT_ZIPF: f64 = 0.99;

/// How addresses are drawn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "class", rename_all = "kebab-case", try_from = "PatternDoc")]
pub enum Pattern {
    /// Sequential sweeps over a large array, element by element.
    #[serde(rename_all = "kebab-case")]
    Streaming {
        /// Array size in bytes.
        array_bytes: u64,
        /// Element (access) size in bytes (8 by default).
        element_bytes: u32,
    },
    /// Accesses spread over a working set of cache lines.
    #[serde(rename_all = "kebab-case")]
    CacheSensitive {
        /// Working set in bytes.
        working_set_bytes: u64,
        /// How lines are chosen (uniform by default).
        distribution: Distribution,
        /// Exponent of the zipf distribution (0.99 by default).
        zipf_exponent: f64,
    },
    /// Uniform accesses over a working set that fits in a private L2.
    #[serde(rename_all = "kebab-case")]
    Light {
        /// Working set in bytes (128 KiB by default).
        working_set_bytes: u64,
    },
    /// Constant-stride accesses over an array, wrapping around.
    #[serde(rename_all = "kebab-case")]
    Strided {
        /// Array size in bytes.
        array_bytes: u64,
        /// Stride in bytes.
        stride_bytes: u64,
        /// Element (access) size in bytes (8 by default).
        element_bytes: u32,
    },
    /// Phases run in order, then again from the first, until the
    /// configuration's access count is reached.
    Phases {
        /// The phases.
        phases: Vec<Phase>,
    },
}

/// One phase of a [`Pattern::Phases`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Phase {
    /// Accesses in this phase.
    pub accesses: u64,
    /// The phase's pattern.
    pub pattern: Pattern,
    /// Where the phase's region starts, in bytes above the generator's
    /// `base` (0 by default: every phase at `base`). Separate offsets give
    /// phases disjoint regions, so a hot set and a large random region
    /// interleaved by short phases model one program's two data
    /// structures.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset_bytes: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// How a cache-sensitive pattern picks lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Distribution {
    /// Every line equally likely.
    #[default]
    Uniform,
    /// Line ranks follow a zipf law (hot lines scattered over the set).
    Zipf,
    /// A random cyclic permutation of the lines: each access loads the next
    /// line of the cycle, so every line is visited once per lap.
    PointerChase,
}

/// The pattern classes (the `class` key).
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Class {
    Streaming,
    CacheSensitive,
    Light,
    Strided,
    Phases,
}

impl Class {
    /// The keys the class takes, besides `class`.
    fn keys(self) -> &'static [&'static str] {
        match self {
            Class::Streaming => &["array-bytes", "element-bytes"],
            Class::CacheSensitive => &["working-set-bytes", "distribution", "zipf-exponent"],
            Class::Light => &["working-set-bytes"],
            Class::Strided => &["array-bytes", "stride-bytes", "element-bytes"],
            Class::Phases => &["phases"],
        }
    }
}

/// A pattern table as written: `class` and every key some class takes.
#[derive(Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct PatternDoc {
    class: Class,
    array_bytes: Option<u64>,
    element_bytes: Option<u32>,
    working_set_bytes: Option<u64>,
    distribution: Option<Distribution>,
    zipf_exponent: Option<f64>,
    stride_bytes: Option<u64>,
    phases: Option<Vec<Phase>>,
}

impl PatternDoc {
    /// The keys given, by name.
    fn given(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        let mut add = |present: bool, key| {
            if present {
                v.push(key);
            }
        };
        add(self.array_bytes.is_some(), "array-bytes");
        add(self.element_bytes.is_some(), "element-bytes");
        add(self.working_set_bytes.is_some(), "working-set-bytes");
        add(self.distribution.is_some(), "distribution");
        add(self.zipf_exponent.is_some(), "zipf-exponent");
        add(self.stride_bytes.is_some(), "stride-bytes");
        add(self.phases.is_some(), "phases");
        v
    }
}

fn need<T>(v: Option<T>, class: Class, key: &str) -> Result<T, String> {
    v.ok_or_else(|| format!("missing key `{key}` (class {} needs it)", class.name()))
}

impl TryFrom<PatternDoc> for Pattern {
    type Error = String;

    fn try_from(d: PatternDoc) -> Result<Pattern, String> {
        let class = d.class;
        if let Some(k) = d.given().into_iter().find(|k| !class.keys().contains(k)) {
            return Err(format!(
                "key `{k}` does not apply to class {} (its keys: {})",
                class.name(),
                class.keys().join(", ")
            ));
        }
        let element = d.element_bytes.unwrap_or(DEFAULT_ELEMENT);
        Ok(match class {
            Class::Streaming => Pattern::Streaming {
                array_bytes: need(d.array_bytes, class, "array-bytes")?,
                element_bytes: element,
            },
            Class::CacheSensitive => Pattern::CacheSensitive {
                working_set_bytes: need(d.working_set_bytes, class, "working-set-bytes")?,
                distribution: d.distribution.unwrap_or_default(),
                zipf_exponent: d.zipf_exponent.unwrap_or(DEFAULT_ZIPF),
            },
            Class::Light => Pattern::Light {
                working_set_bytes: d.working_set_bytes.unwrap_or(DEFAULT_LIGHT),
            },
            Class::Strided => Pattern::Strided {
                array_bytes: need(d.array_bytes, class, "array-bytes")?,
                stride_bytes: need(d.stride_bytes, class, "stride-bytes")?,
                element_bytes: element,
            },
            Class::Phases => Pattern::Phases {
                phases: need(d.phases, class, "phases")?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: &str) -> Result<Pattern, String> {
        #[derive(Deserialize)]
        struct Doc {
            #[allow(dead_code)]
            pattern: Pattern,
        }
        toml::from_str::<Doc>(&format!("[pattern]\n{body}"))
            .map(|d| d.pattern)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_apply_per_class() {
        assert_eq!(
            parse("class = \"light\"").unwrap(),
            Pattern::Light {
                working_set_bytes: 128 << 10
            }
        );
        assert_eq!(
            parse("class = \"strided\"\narray-bytes = 4096\nstride-bytes = 64").unwrap(),
            Pattern::Strided {
                array_bytes: 4096,
                stride_bytes: 64,
                element_bytes: 8
            }
        );
        assert_eq!(
            parse("class = \"cache-sensitive\"\nworking-set-bytes = 64").unwrap(),
            Pattern::CacheSensitive {
                working_set_bytes: 64,
                distribution: Distribution::Uniform,
                zipf_exponent: 0.99
            }
        );
    }

    #[test]
    fn errors_name_the_key_and_where_it_is() {
        // a misspelt key: named, at its own line
        let e = parse("class = \"light\"\nworking-set-byte = 1").unwrap_err();
        assert!(
            e.contains("working-set-byte") && e.contains("line 3"),
            "{e}"
        );
        // a wrong type: at the key's line, so the key is shown
        let e = parse("class = \"streaming\"\narray-bytes = \"x\"").unwrap_err();
        assert!(e.contains("line 3") && e.contains("array-bytes"), "{e}");
        // a missing key: named with its class
        let e = parse("class = \"streaming\"").unwrap_err();
        assert!(
            e.contains("`array-bytes`") && e.contains("streaming"),
            "{e}"
        );
        // a key of another class: named, with the class's keys
        let e = parse("class = \"light\"\narray-bytes = 8").unwrap_err();
        assert!(
            e.contains("`array-bytes`") && e.contains("working-set-bytes"),
            "{e}"
        );
        // inside a phase
        let e = parse(
            "class = \"phases\"\n[[pattern.phases]]\naccesses = 1\n\
             pattern = { class = \"light\", foo = 1 }",
        )
        .unwrap_err();
        assert!(e.contains("`foo`"), "{e}");
    }

    #[test]
    fn serialisation_round_trips_through_the_document() {
        for p in [
            Pattern::Streaming {
                array_bytes: 1 << 20,
                element_bytes: 4,
            },
            Pattern::Phases {
                phases: vec![Phase {
                    accesses: 10,
                    pattern: Pattern::Light {
                        working_set_bytes: 4096,
                    },
                    offset_bytes: 64,
                }],
            },
        ] {
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(serde_json::from_str::<Pattern>(&json).unwrap(), p, "{json}");
        }
    }
}
