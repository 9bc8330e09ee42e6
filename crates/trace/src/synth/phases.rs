//! Phases: patterns run one after another, cycling back to the first.

use rand_chacha::ChaCha8Rng;

use super::State;

/// State of a phase sequence.
pub(super) struct Phases {
    phases: Vec<(u64, State)>,
    cur: usize,
    left: u64,
}

impl Phases {
    pub(super) fn new(phases: Vec<(u64, State)>) -> Phases {
        let left = phases[0].0;
        Phases {
            phases,
            cur: 0,
            left,
        }
    }

    pub(super) fn next(&mut self, rng: &mut ChaCha8Rng) -> (u64, u32) {
        if self.left == 0 {
            self.cur = (self.cur + 1) % self.phases.len();
            self.left = self.phases[self.cur].0;
        }
        self.left -= 1;
        self.phases[self.cur].1.next(rng)
    }

    /// Whether the phase of the last access chases pointers.
    pub(super) fn chases(&self) -> bool {
        self.phases[self.cur].1.chases()
    }
}
