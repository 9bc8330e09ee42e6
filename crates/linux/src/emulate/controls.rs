//! A control group's allocation: one value per schema and domain, the
//! `schemata` file as the kernel prints it and parses a write to it
//! (`rdtgroup_schemata_write`: all lines checked first, applied only if
//! every one passes, lines not given left as they were), and the `size`
//! file.

use super::refusal::{kstrtoul, Outcome, Refusal};
use crate::preset::{CacheResource, RdtPlatform};
use cachepart_units::{MaskError, MaskRules, WayMask};

/// A group's mode (the `mode` file, in the words its kebab-case names
/// give).
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Masks may overlap other shareable groups' masks.
    Shareable,
    /// No other group may use this group's ways.
    Exclusive,
}

/// Values by schema (the platform's caches, then MB) and domain index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Controls {
    values: Vec<Vec<u32>>,
}

/// Another control group, as a schemata write must see it.
pub struct Peer<'a> {
    /// Its mode.
    pub mode: Mode,
    /// Its values.
    pub controls: &'a Controls,
}

impl Controls {
    /// What a new group gets: every way, full bandwidth.
    pub fn default_for(p: &RdtPlatform) -> Self {
        let n = p.domains.len();
        let mut values: Vec<Vec<u32>> = p
            .caches
            .iter()
            .map(|c| vec![((1u64 << c.cbm_len) - 1) as u32; n])
            .collect();
        if let Some(mb) = &p.mb {
            values.push(vec![mb.max; n]);
        }
        Controls { values }
    }

    fn names(p: &RdtPlatform) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = p.caches.iter().map(|c| c.name).collect();
        if p.mb.is_some() {
            v.push("MB");
        }
        v
    }

    /// The cache mask of schema `schema` on domain index `d`.
    pub fn mask(&self, schema: usize, d: usize) -> u64 {
        u64::from(self.values[schema][d])
    }

    /// The `schemata` file: `%*s:` padded names, `id=%x` masks, `id=%u`
    /// bandwidth, `;` between domains.
    pub fn show(&self, p: &RdtPlatform) -> String {
        self.table(p, |schema, v| {
            if schema < p.caches.len() {
                format!("{v:x}")
            } else {
                v.to_string()
            }
        })
    }

    /// The `size` file: bytes of cache per domain (MB: the value).
    pub fn size(&self, p: &RdtPlatform) -> String {
        self.table(p, |schema, v| match p.caches.get(schema) {
            Some(c) => (p.l3_bytes / u64::from(c.cbm_len) * u64::from(v.count_ones())).to_string(),
            None => v.to_string(),
        })
    }

    fn table(&self, p: &RdtPlatform, cell: impl Fn(usize, u32) -> String) -> String {
        let w = p.name_width();
        let mut out = String::new();
        for (s, name) in Self::names(p).into_iter().enumerate() {
            let cells: Vec<String> = p
                .domains
                .iter()
                .zip(&self.values[s])
                .map(|(id, v)| format!("{id}={}", cell(s, *v)))
                .collect();
            out.push_str(&format!("{name:>w$}:{}\n", cells.join(";")));
        }
        out
    }

    /// Applies a write to `schemata` as the kernel does, or refuses it
    /// whole. `closid` is this group's, `mode` its mode and `peers` the
    /// other allocated CLOSIDs (for the exclusive-mode overlap checks).
    pub fn write(&mut self, p: &RdtPlatform, buf: &str, mode: Mode, peers: &[Peer<'_>]) -> Outcome {
        let names = Self::names(p);
        let mut staged: Vec<Vec<Option<u32>>> = vec![vec![None; p.domains.len()]; names.len()];
        for tok in buf.split('\n') {
            let Some((resname, rest)) = tok.split_once(':') else {
                return Err(Refusal::inval("Missing ':'"));
            };
            let resname = resname.trim();
            if rest.is_empty() {
                return Err(Refusal::inval(format!("Missing '{resname}' value")));
            }
            let Some(schema) = names.iter().position(|n| *n == resname) else {
                return Err(Refusal::inval(format!(
                    "Unknown or unsupported resource name '{resname}'"
                )));
            };
            parse_line(p, schema, rest, &mut staged[schema], mode, peers)?;
        }
        for (s, doms) in staged.into_iter().enumerate() {
            for (d, v) in doms.into_iter().enumerate() {
                if let Some(v) = v {
                    self.values[s][d] = v;
                }
            }
        }
        Ok(())
    }

    /// Whether this group may become exclusive: none of its cache masks
    /// overlaps another group's (`rdtgroup_mode_test_exclusive`).
    pub fn test_exclusive(&self, p: &RdtPlatform, peers: &[Peer<'_>]) -> Outcome {
        if p.caches.is_empty() {
            return Err(Refusal::inval("Cannot be exclusive without CAT/CDP"));
        }
        for s in 0..p.caches.len() {
            for d in 0..p.domains.len() {
                if overlaps(p, s, d, self.mask(s, d), peers, false) {
                    return Err(Refusal::inval("Schemata overlaps"));
                }
            }
        }
        Ok(())
    }
}

/// True when `cbm` overlaps a peer's mask of schema `s` (and, with CDP, of
/// its code/data twin) on domain index `d`; only exclusive peers count
/// when `exclusive_only`.
fn overlaps(
    p: &RdtPlatform,
    s: usize,
    d: usize,
    cbm: u64,
    peers: &[Peer<'_>],
    exclusive_only: bool,
) -> bool {
    let twins: Vec<usize> = if p.caches.len() > 1 {
        (0..p.caches.len()).collect()
    } else {
        vec![s]
    };
    peers.iter().any(|peer| {
        (!exclusive_only || peer.mode == Mode::Exclusive)
            && twins.iter().any(|&t| peer.controls.mask(t, d) & cbm != 0)
    })
}

/// `parse_line`: `id=value` items separated by `;`; an unknown domain id
/// is refused with no status text, as the kernel does.
fn parse_line(
    p: &RdtPlatform,
    schema: usize,
    line: &str,
    staged: &mut [Option<u32>],
    mode: Mode,
    peers: &[Peer<'_>],
) -> Outcome {
    for item in line.split(';') {
        if item.is_empty() {
            // strsep leaves an empty tail after a final ';': the kernel stops there.
            break;
        }
        let Some((id, val)) = item.split_once('=') else {
            return Err(Refusal::inval("Missing '=' or non-numeric domain"));
        };
        let Some(id) = kstrtoul(id, 10) else {
            return Err(Refusal::inval("Missing '=' or non-numeric domain"));
        };
        let val = val.trim();
        let Some(d) = p.domains.iter().position(|&x| u64::from(x) == id) else {
            return Err(Refusal::bare(libc::EINVAL));
        };
        if staged[d].is_some() {
            return Err(Refusal::inval(format!("Duplicate domain {id}")));
        }
        staged[d] = Some(match p.caches.get(schema) {
            Some(c) => {
                let cbm = cbm_validate(c, val)?;
                if overlaps(p, schema, d, cbm, peers, true) {
                    return Err(Refusal::inval("Overlaps with exclusive group"));
                }
                if mode == Mode::Exclusive && overlaps(p, schema, d, cbm, peers, false) {
                    return Err(Refusal::inval("Overlaps with other group"));
                }
                cbm as u32
            }
            None => bw_validate(p, val)?,
        });
    }
    Ok(())
}

/// `cbm_validate`, with the mask rules of `cachepart_units`.
fn cbm_validate(c: &CacheResource, val: &str) -> Outcome<u64> {
    let Some(v) = kstrtoul(val, 16) else {
        return Err(Refusal::inval(format!(
            "Non-hex character in the mask {val}"
        )));
    };
    let rules = MaskRules {
        ways: c.cbm_len,
        min_bits: c.min_cbm_bits,
        sparse_allowed: c.sparse,
    };
    rules.check(WayMask(v)).map_err(|e| {
        Refusal::inval(match e {
            MaskError::OutOfRange { .. } => "Mask out of range".to_string(),
            MaskError::NonContiguous(_) => format!("The mask {v:x} has non-consecutive 1-bits"),
            MaskError::TooFewBits { min, .. } => format!("Need at least {min} bits in the mask"),
            other => other.to_string(),
        })
    })?;
    Ok(v)
}

/// `bw_validate`: a decimal value within [min, max], rounded up to the
/// granularity.
fn bw_validate(p: &RdtPlatform, val: &str) -> Outcome<u32> {
    let mb = p.mb.as_ref().expect("MB schema exists only with MB");
    if !mb.delay_linear && mb.needs_linear {
        return Err(Refusal::inval("No support for non-linear MB domains"));
    }
    let Some(bw) = kstrtoul(val, 10).and_then(|v| u32::try_from(v).ok()) else {
        return Err(Refusal::inval(format!("Invalid MB value {val}")));
    };
    if bw < mb.min || bw > mb.max {
        return Err(Refusal::inval(format!(
            "MB value {bw} out of range [{},{}]",
            mb.min, mb.max
        )));
    }
    Ok(bw.div_ceil(mb.gran.max(1)) * mb.gran.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preset::Preset;

    fn refused(p: &RdtPlatform, text: &str) -> Refusal {
        let mut c = Controls::default_for(p);
        let before = c.clone();
        let r = c.write(p, text, Mode::Shareable, &[]).unwrap_err();
        assert_eq!(c, before, "a refused write changes nothing");
        r
    }

    #[test]
    fn prints_padded_and_applies_only_given_lines() {
        let p = RdtPlatform::of(Preset::Skylake);
        let mut c = Controls::default_for(&p);
        assert_eq!(c.show(&p), "    L3:0=7ff;1=7ff\n    MB:0=100;1=100\n");
        c.write(&p, "L3:1=0x3c", Mode::Shareable, &[]).unwrap();
        c.write(&p, "MB:0=55;", Mode::Shareable, &[]).unwrap();
        assert_eq!(c.show(&p), "    L3:0=7ff;1=3c\n    MB:0=60;1=100\n");
        assert_eq!(
            c.size(&p).lines().next().unwrap(),
            "    L3:0=28835840;1=10485760"
        );
        let cdp = RdtPlatform::of(Preset::Cdp);
        assert_eq!(
            Controls::default_for(&cdp).show(&cdp),
            "L3CODE:0=7ff;1=7ff\nL3DATA:0=7ff;1=7ff\n    MB:0=100;1=100\n"
        );
    }

    #[test]
    fn refusals_in_the_kernels_words() {
        let p = RdtPlatform::of(Preset::Skylake);
        let cases = [
            ("L3 0=f", "Missing ':'"),
            ("L3:", "Missing 'L3' value"),
            ("L2:0=f", "Unknown or unsupported resource name 'L2'"),
            ("L3:x=f", "Missing '=' or non-numeric domain"),
            ("L3:0", "Missing '=' or non-numeric domain"),
            ("L3:0=fg", "Non-hex character in the mask fg"),
            ("L3:0=800", "Mask out of range"),
            ("L3:0=0", "Mask out of range"),
            ("L3:0=5", "The mask 5 has non-consecutive 1-bits"),
            ("L3:0=f;0=f", "Duplicate domain 0"),
            ("MB:0=5", "MB value 5 out of range [10,100]"),
            ("MB:0=1x", "Invalid MB value 1x"),
            ("L3:0=f\n", "Missing ':'"),
        ];
        for (text, words) in cases {
            assert_eq!(refused(&p, text), Refusal::inval(words), "{text:?}");
        }
        assert_eq!(refused(&p, "L3:7=f"), Refusal::bare(libc::EINVAL));
        let amd = RdtPlatform::of(Preset::Amd);
        let mut c = Controls::default_for(&amd);
        c.write(&amd, "L3:0=f0f;1=0\nMB:0=1024;1=3", Mode::Shareable, &[])
            .unwrap();
        assert_eq!(c.show(&amd), "    L3:0=f0f;1=0\n    MB:0=1024;1=3\n");
        assert_eq!(
            refused(&amd, "MB:0=4096"),
            Refusal::inval("MB value 4096 out of range [0,2048]")
        );
    }

    #[test]
    fn exclusive_groups_keep_their_ways() {
        let p = RdtPlatform::of(Preset::Skylake);
        let mut excl = Controls::default_for(&p);
        excl.write(&p, "L3:0=3;1=3", Mode::Shareable, &[]).unwrap();
        let peers = [Peer {
            mode: Mode::Exclusive,
            controls: &excl,
        }];
        let mut other = Controls::default_for(&p);
        let e = other
            .write(&p, "L3:0=6", Mode::Shareable, &peers)
            .unwrap_err();
        assert_eq!(e, Refusal::inval("Overlaps with exclusive group"));
        other
            .write(&p, "L3:0=7fc;1=7fc", Mode::Shareable, &peers)
            .unwrap();
        let peers = [Peer {
            mode: Mode::Shareable,
            controls: &other,
        }];
        excl.test_exclusive(&p, &peers).unwrap();
        let full = Controls::default_for(&p);
        let peers = [Peer {
            mode: Mode::Shareable,
            controls: &full,
        }];
        assert_eq!(
            excl.test_exclusive(&p, &peers),
            Err(Refusal::inval("Schemata overlaps"))
        );
    }
}
