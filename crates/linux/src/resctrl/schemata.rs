//! Schemata lines as resctrl reads and writes them: `L3:0=7ff;1=7ff`,
//! `L3CODE`/`L3DATA` with CDP, `L2`, and `MB:0=100;1=50` (percent, MBps
//! under `mba_MBps`, or AMD's absolute units of 1/8 GB/s).
//!
//! Cache masks are hexadecimal without `0x`, bandwidth values decimal.
//! The kernel pads resource names when it prints (`    L3:...`); parsing
//! trims them, formatting writes none. [`Schemata::to_write`] ends with the
//! newline the kernel expects.

use crate::error::{Error, Result};
use cachepart_units::{Kind as _, WayMask};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// A resctrl resource that has a schemata line, named as resctrl names it
/// (`L3CODE`, `MB`, ...; also its `info/` directory), in the order resctrl
/// lists them.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
    strum::VariantNames,
    strum::EnumMessage,
)]
#[strum(serialize_all = "UPPERCASE")]
pub enum Resource {
    /// L3 cache allocation (CAT).
    L3,
    /// L3 code half with CDP.
    L3Code,
    /// L3 data half with CDP.
    L3Data,
    /// L2 cache allocation.
    L2,
    /// L2 code half with CDP.
    L2Code,
    /// L2 data half with CDP.
    L2Data,
    /// Memory bandwidth allocation (MBA).
    Mb,
}

impl Resource {
    /// True for the cache resources (values are way masks).
    pub fn is_cache(self) -> bool {
        self != Resource::Mb
    }
}

/// Parses a name as the kernel prints it (padded: the name is trimmed).
impl FromStr for Resource {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Resource::all()
            .find(|r| r.name() == s.trim())
            .ok_or_else(|| format!("Unknown or unsupported resource name '{}'", s.trim()))
    }
}

/// One domain's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// A capacity bitmask (cache resources).
    Mask(WayMask),
    /// A bandwidth value (MB): percent, MBps or AMD units, per the mount.
    Bandwidth(u32),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Mask(m) => write!(f, "{m}"),
            Value::Bandwidth(b) => write!(f, "{b}"),
        }
    }
}

/// One schemata line: a resource and a value per cache domain id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemataLine {
    /// The resource.
    pub resource: Resource,
    /// Domain id to value, in id order.
    pub domains: BTreeMap<u32, Value>,
}

impl SchemataLine {
    /// Parses `L3:0=7ff;1=7ff` (spaces around names and values allowed).
    pub fn parse(line: &str) -> std::result::Result<Self, String> {
        let (name, rest) = line
            .split_once(':')
            .ok_or_else(|| format!("Missing ':' in '{}'", line.trim()))?;
        let resource: Resource = name.parse()?;
        let mut domains = BTreeMap::new();
        for part in rest.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (id, val) = part
                .split_once('=')
                .ok_or_else(|| format!("Missing '=' or non-number domain id in '{part}'"))?;
            let id: u32 = id
                .trim()
                .parse()
                .map_err(|_| format!("Missing '=' or non-number domain id in '{part}'"))?;
            let val = val.trim();
            let value = if resource.is_cache() {
                Value::Mask(
                    val.parse()
                        .map_err(|e: cachepart_units::MaskError| e.to_string())?,
                )
            } else {
                Value::Bandwidth(
                    val.parse()
                        .map_err(|_| format!("Non-decimal digit in MB value {val}"))?,
                )
            };
            if domains.insert(id, value).is_some() {
                return Err(format!("Duplicate domain {id}"));
            }
        }
        if domains.is_empty() {
            return Err(format!("No domain in '{}'", line.trim()));
        }
        Ok(SchemataLine { resource, domains })
    }
}

impl fmt::Display for SchemataLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.resource)?;
        for (i, (id, v)) in self.domains.iter().enumerate() {
            if i > 0 {
                f.write_str(";")?;
            }
            write!(f, "{id}={v}")?;
        }
        Ok(())
    }
}

/// A group's schemata: one line per resource, in resource order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schemata {
    /// The lines, keyed by resource.
    pub lines: BTreeMap<Resource, SchemataLine>,
}

impl Schemata {
    /// Parses a `schemata` file's text; `path` names it in errors, with the
    /// line number.
    pub fn parse(text: &str, path: &std::path::Path) -> Result<Self> {
        let mut lines = BTreeMap::new();
        for (n, raw) in text.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            let line = SchemataLine::parse(raw)
                .map_err(|e| Error::parse(path, format!("line {}: {e}", n + 1)))?;
            if lines.contains_key(&line.resource) {
                return Err(Error::parse(
                    path,
                    format!("line {}: resource {} given twice", n + 1, line.resource),
                ));
            }
            lines.insert(line.resource, line);
        }
        Ok(Schemata { lines })
    }

    /// The domain ids of `resource`, if it has a line.
    pub fn domains(&self, resource: Resource) -> Vec<u32> {
        self.lines
            .get(&resource)
            .map(|l| l.domains.keys().copied().collect())
            .unwrap_or_default()
    }

    /// The text to write: one line per resource, each with its newline.
    pub fn to_write(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Schemata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in self.lines.values() {
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::path::Path;

    #[test]
    fn parses_the_kernels_padded_output() {
        let text = "    L3:0=7ff;1=7ff\n    MB:0=100;1= 50\n";
        let s = Schemata::parse(text, Path::new("schemata")).unwrap();
        assert_eq!(s.domains(Resource::L3), vec![0, 1]);
        assert_eq!(s.to_write(), "L3:0=7ff;1=7ff\nMB:0=100;1=50\n");
    }

    #[test]
    fn cdp_lines() {
        let s = Schemata::parse("L3CODE:0=ff0\nL3DATA:0=00f\n", Path::new("s")).unwrap();
        assert_eq!(
            s.lines[&Resource::L3Code].domains[&0],
            Value::Mask(WayMask(0xff0))
        );
        assert_eq!(
            s.lines[&Resource::L3Data].domains[&0],
            Value::Mask(WayMask(0xf))
        );
    }

    #[test]
    fn errors_name_the_line_and_use_resctrls_words() {
        let p = Path::new("/x/schemata");
        let e = Schemata::parse("L3:0=7ff\nL4:0=1\n", p)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "/x/schemata: line 2: Unknown or unsupported resource name 'L4'"
        );
        let e = Schemata::parse("L3:0=xyz", p).unwrap_err().to_string();
        assert!(e.contains("Non-hex character in the mask xyz"), "{e}");
        let e = Schemata::parse("L3:0=f;0=f", p).unwrap_err().to_string();
        assert!(e.contains("Duplicate domain 0"), "{e}");
        let e = Schemata::parse("MB:0=1x", p).unwrap_err().to_string();
        assert!(e.contains("Non-decimal digit in MB value 1x"), "{e}");
        let e = Schemata::parse("MB:a=10", p).unwrap_err().to_string();
        assert!(e.contains("non-number domain id"), "{e}");
        let e = Schemata::parse("MB 0=10", p).unwrap_err().to_string();
        assert!(e.contains("Missing ':'"), "{e}");
    }

    fn line_strategy() -> impl Strategy<Value = SchemataLine> {
        (
            0usize..7,
            prop::collection::btree_map(0u32..64, any::<u64>(), 1..6),
        )
            .prop_map(|(r, doms)| {
                let resource = Resource::all().nth(r).unwrap();
                let domains = doms
                    .into_iter()
                    .map(|(id, v)| {
                        let val = if resource.is_cache() {
                            Value::Mask(WayMask(v))
                        } else {
                            Value::Bandwidth(v as u32)
                        };
                        (id, val)
                    })
                    .collect();
                SchemataLine { resource, domains }
            })
    }

    proptest! {
        #[test]
        fn format_parse_round_trip(lines in prop::collection::vec(line_strategy(), 1..7)) {
            let mut s = Schemata::default();
            for l in lines {
                s.lines.insert(l.resource, l);
            }
            let text = s.to_write();
            prop_assert!(text.ends_with('\n'));
            let back = Schemata::parse(&text, Path::new("s")).unwrap();
            prop_assert_eq!(back, s);
        }
    }
}
