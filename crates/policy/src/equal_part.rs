//! `equal-part`: strict partitioning with the ways split evenly; the first
//! `W mod n` apps get one way more.

use crate::{require_ways, Policy, PolicyError};
use cachepart_machine::{Machine, Plan};

/// Equal strict partitioning.
#[derive(Clone, Debug, Default)]
pub struct EqualPart;

/// Way counts of an equal split of `ways` over `n` apps.
pub fn equal_split(n: usize, ways: u32) -> Vec<u32> {
    let base = ways / n as u32;
    let extra = ways as usize % n;
    (0..n).map(|i| base + u32::from(i < extra)).collect()
}

impl Policy for EqualPart {
    fn name(&self) -> &str {
        "equal-part"
    }

    fn decide(&mut self, machine: &mut dyn Machine) -> Result<Plan, PolicyError> {
        let ways = machine.platform().ways;
        let n = machine.app_count()?;
        require_ways(n, ways, self.name())?;
        Ok(Plan::from_way_counts(&equal_split(n, ways)))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn split() {
        assert_eq!(super::equal_split(4, 11), vec![3, 3, 3, 2]);
        assert_eq!(super::equal_split(6, 11), vec![2, 2, 2, 2, 2, 1]);
    }
}
