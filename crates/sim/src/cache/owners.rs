//! Owner tracking: which owner filled each line, and per-owner line
//! counts (LLC occupancy as Intel CMT reports it).

use super::{Cache, NO_OWNER};
use crate::replacement::Replacement;

impl<R: Replacement> Cache<R> {
    /// Starts tracking which of `n_owners` owners (ids `0..n_owners`)
    /// filled each line; lines already present count for nobody. Zero
    /// owners turns tracking off.
    pub fn set_owner_tracking(&mut self, n_owners: usize) {
        if n_owners == 0 {
            self.owners = Vec::new();
            self.owner_lines = Vec::new();
        } else {
            self.owners = vec![NO_OWNER; self.tags.len()];
            self.owner_lines = vec![0; n_owners];
        }
    }

    /// The owner of the lines filled from now on (ids at or above the
    /// tracked count, such as [`NO_OWNER`], count for nobody).
    #[inline]
    pub fn set_owner(&mut self, owner: u16) {
        self.owner = owner;
    }

    /// Lines filled by `owner` and still present (0 when not tracked).
    pub fn occupancy_of(&self, owner: u16) -> u64 {
        self.owner_lines
            .get(usize::from(owner))
            .copied()
            .unwrap_or(0)
    }

    /// Line `i` changes hands: from its old owner (if valid) to `new`.
    #[cold]
    pub(super) fn retag(&mut self, i: usize, was_valid: bool, new: Option<u16>) {
        if was_valid {
            if let Some(n) = self.owner_lines.get_mut(usize::from(self.owners[i])) {
                *n -= 1;
            }
        }
        let new = new.unwrap_or(NO_OWNER);
        self.owners[i] = new;
        if let Some(n) = self.owner_lines.get_mut(usize::from(new)) {
            *n += 1;
        }
    }
}
