//! `user`: a plan written by hand.
//!
//! Syntax (resctrl-like masks, pqos-like association): clusters separated by
//! `;`, each `MASK=APPS`, where `MASK` is a hex way mask (`0x7f0` or `7f0`)
//! and `APPS` lists the apps of the cluster by position in the mix (`0-2,5`)
//! or by program name (`lbm06,milc06`), comma-separated. Example for a mix
//! of four: `0x7fc=0,1;0x3=2-3`.

use crate::{Policy, PolicyError};
use cachepart_machine::{Cluster, Machine, Plan};
use cachepart_units::{IdSet, WayMask};

/// A plan given by hand.
#[derive(Clone, Debug)]
pub struct UserPlan {
    /// The plan text.
    pub text: String,
}

/// Parses `text` for a mix whose programs are `names`.
pub fn parse_plan(text: &str, names: &[String]) -> Result<Plan, PolicyError> {
    let bad = |message: String| PolicyError::BadUserPlan {
        plan: text.to_string(),
        message,
    };
    let mut clusters = Vec::new();
    for (ci, part) in text.split(';').enumerate() {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let Some((mask, apps)) = part.split_once('=') else {
            return Err(bad(format!(
                "cluster {ci} ({part:?}): expected MASK=APPS, e.g. 0x7f0=0-2"
            )));
        };
        let mask: WayMask = mask
            .trim()
            .parse()
            .map_err(|e| bad(format!("cluster {ci}: {e}")))?;
        let mut members = Vec::new();
        for item in apps.split(',') {
            let item = item.trim();
            if item.is_empty() {
                return Err(bad(format!("cluster {ci}: empty app item")));
            }
            if item.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                let ids: IdSet = item
                    .parse()
                    .map_err(|e| bad(format!("cluster {ci}: {e}")))?;
                members.extend(ids.iter().map(|i| i as usize));
            } else {
                let idx = names.iter().position(|n| n == item).ok_or_else(|| {
                    bad(format!(
                        "cluster {ci}: {item:?} is not a program of the mix ({})",
                        names.join(", ")
                    ))
                })?;
                members.push(idx);
            }
        }
        clusters.push(Cluster {
            mask,
            apps: members,
        });
    }
    if clusters.is_empty() {
        return Err(bad("no cluster (expected MASK=APPS;...)".into()));
    }
    Ok(Plan {
        clusters,
        ..Plan::default()
    })
}

impl Policy for UserPlan {
    fn name(&self) -> &str {
        "user"
    }

    fn decide(&mut self, machine: &mut dyn Machine) -> Result<Plan, PolicyError> {
        let rules = machine.platform().mask_rules;
        let names: Vec<String> = machine
            .alone_curves()?
            .iter()
            .map(|c| c.name.clone())
            .collect();
        let plan = parse_plan(&self.text, &names)?;
        plan.validate(names.len(), &rules)
            .map_err(|e| PolicyError::BadUserPlan {
                plan: self.text.clone(),
                message: e.to_string(),
            })?;
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_indices_and_names() {
        let names: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
        let p = parse_plan("0x7fc=0,1; 3=c,3", &names).unwrap();
        assert_eq!(p.clusters.len(), 2);
        assert_eq!(p.clusters[0].apps, vec![0, 1]);
        assert_eq!(p.clusters[1].mask, WayMask(3));
        assert_eq!(p.clusters[1].apps, vec![2, 3]);
        let e = parse_plan("zz=0", &names).unwrap_err().to_string();
        assert!(e.contains("Non-hex"), "{e}");
        let e = parse_plan("0x3=x", &names).unwrap_err().to_string();
        assert!(e.contains("not a program"), "{e}");
        assert!(parse_plan("0x3", &names).is_err());
    }
}
