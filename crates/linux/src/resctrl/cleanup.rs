//! Removal of owned groups whose manager is gone: a manager killed even
//! with SIGKILL leaves nothing behind after the next start.
//!
//! Owned groups are named `cachepart-PID-NAME` (see [`super`]); a group is
//! stale when no `/proc/PID` exists. Removing a control group (`rmdir`)
//! makes the kernel move its tasks back to the default group and free its
//! CLOSID and RMIDs.

use super::group::Resctrl;
use super::PREFIX;
use crate::error::Result;

/// The owner pid recorded in an owned group's name, if it is one.
pub fn owner_of(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let (pid, tail) = rest.split_once('-')?;
    if tail.is_empty() {
        return None;
    }
    pid.parse().ok()
}

/// Removes the owned control and monitoring groups whose owner is not
/// running; returns their names.
pub fn remove_stale_groups(rdt: &Resctrl) -> Result<Vec<String>> {
    let alive = |pid: u32| rdt.proc_root().join(pid.to_string()).exists();
    let mut removed = Vec::new();
    let groups = std::iter::once(rdt.root()).chain(rdt.control_groups()?);
    for g in groups {
        if owner_of(&g.name).is_some_and(|p| !alive(p)) {
            rdt.remove(&g)?;
            removed.push(g.name.clone());
            continue;
        }
        for m in rdt.mon_groups(&g)? {
            if owner_of(&m.name).is_some_and(|p| !alive(p)) {
                rdt.remove(&m)?;
                removed.push(m.path_name());
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_is_read_from_the_name() {
        assert_eq!(owner_of("cachepart-123-web"), Some(123));
        assert_eq!(owner_of("cachepart-123-"), None);
        assert_eq!(owner_of("cachepart-x-web"), None);
        assert_eq!(owner_of("other-123-web"), None);
    }
}
