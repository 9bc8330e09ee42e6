//! CPUs of an emulated mount (`cpus`, `cpus_list`; `rdtgroup_cpus_write`):
//! every CPU belongs to one control group (the root at first) and at most
//! one of its monitoring groups.

use super::refusal::{Outcome, Refusal};
use super::state::{State, Target};
use std::collections::BTreeSet;

impl State {
    /// The `cpus` (hex mask) or `cpus_list` (ranges) file.
    pub fn cpus(&self, t: &Target, list: bool) -> String {
        let cpus = self.mon(t).map(|m| m.cpus.clone()).unwrap_or_default();
        if list {
            format!("{}\n", format_list(&cpus))
        } else {
            let mask: u64 = cpus.iter().map(|c| 1u64 << c).sum();
            let width = self.platform.cpus.div_ceil(4) as usize;
            format!("{mask:0width$x}\n")
        }
    }

    /// A write to `cpus` or `cpus_list`: the group takes the CPUs given
    /// (from whichever group had them); CPUs it drops go to its parent.
    pub fn write_cpus(&mut self, t: &Target, buf: &str, list: bool) -> Outcome {
        self.status.clear();
        let r = self.try_write_cpus(t, buf, list);
        self.record(r)
    }

    fn try_write_cpus(&mut self, t: &Target, buf: &str, list: bool) -> Outcome {
        let text = buf.trim_end_matches('\n');
        let new = if list {
            parse_list(text)
        } else {
            parse_mask(text)
        }
        .ok_or_else(|| Refusal::inval("Bad CPU list/mask"))?;
        if new.iter().any(|&c| c >= self.platform.cpus) {
            return Err(Refusal::inval("Can only assign online CPUs"));
        }
        let ctrl = t.ctrl.as_deref();
        let g = self.ctrl(ctrl).ok_or(Refusal::bare(libc::ENOENT))?;
        match &t.mon {
            None => {
                let dropped: BTreeSet<u32> = g.mon.cpus.difference(&new).copied().collect();
                if ctrl.is_none() && !dropped.is_empty() {
                    return Err(Refusal::inval("Can't drop CPUs from default group"));
                }
                for other in std::iter::once(&mut self.root).chain(self.groups.values_mut()) {
                    other.mon.cpus.retain(|c| !new.contains(c));
                    for m in other.mons.values_mut() {
                        m.cpus.retain(|c| !new.contains(c));
                    }
                }
                self.root.mon.cpus.extend(dropped);
                let me = self.ctrl_mut(ctrl).expect("checked");
                me.mon.cpus = new;
                // The kernel clears the monitoring groups' masks: the
                // parent has a new one.
                for m in me.mons.values_mut() {
                    m.cpus.clear();
                }
            }
            Some(m) => {
                if !new.is_subset(&g.mon.cpus) {
                    return Err(Refusal::inval(
                        "Can only add CPUs to mongroup that belong to parent",
                    ));
                }
                let g = self.ctrl_mut(ctrl).expect("checked");
                for (name, other) in g.mons.iter_mut() {
                    if name == m {
                        other.cpus = new.clone();
                    } else {
                        other.cpus.retain(|c| !new.contains(c));
                    }
                }
            }
        }
        Ok(())
    }
}

fn parse_mask(text: &str) -> Option<BTreeSet<u32>> {
    let hex: String = text.chars().filter(|&c| c != ',').collect();
    if hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let mut set = BTreeSet::new();
    for (i, c) in hex.chars().rev().enumerate() {
        let v = c.to_digit(16)?;
        for b in 0..4 {
            if v & (1 << b) != 0 {
                set.insert(u32::try_from(i * 4 + b).ok()?);
            }
        }
    }
    Some(set)
}

fn parse_list(text: &str) -> Option<BTreeSet<u32>> {
    let mut set = BTreeSet::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
        if a > b || b > 4095 {
            return None;
        }
        set.extend(a..=b);
    }
    Some(set)
}

fn format_list(cpus: &BTreeSet<u32>) -> String {
    let mut parts = Vec::new();
    let mut it = cpus.iter().copied().peekable();
    while let Some(a) = it.next() {
        let mut b = a;
        while it.peek() == Some(&(b + 1)) {
            b = it.next().expect("peeked");
        }
        parts.push(if a == b {
            a.to_string()
        } else {
            format!("{a}-{b}")
        });
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use crate::emulate::refusal::Refusal;
    use crate::emulate::state::tests::{g, state};
    use crate::emulate::state::Target;
    use crate::preset::Preset;

    #[test]
    fn cpus_move_between_groups() {
        let (_t, mut s) = state(Preset::Skylake);
        s.mkdir_ctrl("a").unwrap();
        s.mkdir_mon(Some("a"), "m").unwrap();
        assert_eq!(s.cpus(&Target::root(), false), "ffff\n");
        assert_eq!(s.cpus(&g("a", None), false), "0000\n");
        s.write_cpus(&g("a", None), "0-3,8\n", true).unwrap();
        assert_eq!(s.cpus(&Target::root(), true), "4-7,9-15\n");
        assert_eq!(s.cpus(&g("a", None), false), "010f\n");
        assert_eq!(
            s.write_cpus(&g("a", Some("m")), "10", false),
            Err(Refusal::inval(
                "Can only add CPUs to mongroup that belong to parent"
            ))
        );
        s.write_cpus(&g("a", Some("m")), "3", false).unwrap();
        assert_eq!(s.cpus(&g("a", Some("m")), true), "0-1\n");
        assert_eq!(
            s.write_cpus(&Target::root(), "1", false),
            Err(Refusal::inval("Can't drop CPUs from default group"))
        );
        assert_eq!(
            s.write_cpus(&g("a", None), "10000", false),
            Err(Refusal::inval("Can only assign online CPUs"))
        );
        assert_eq!(
            s.write_cpus(&g("a", None), "xyz", false),
            Err(Refusal::inval("Bad CPU list/mask"))
        );
        s.write_cpus(&g("a", None), "0-3\n", true).unwrap();
        assert_eq!(s.cpus(&g("a", Some("m")), true), "\n");
        assert_eq!(s.cpus(&Target::root(), true), "4-15\n");
        s.rmdir_ctrl("a").unwrap();
        assert_eq!(s.cpus(&Target::root(), true), "0-15\n");
    }
}
