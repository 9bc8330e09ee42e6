//! A checked scenario as the simulator's machine: the [`SimMachine`] of
//! its platform, apps, seed and interval, and the plan of the colors its
//! apps' `colors` keys fix. The scenario runs ([`crate::run::sim`]) and the
//! experiment runs (`cachepart-repro`'s runner) start from both.

use cachepart_machine::{AppColors, Plan};
use cachepart_sim::system::{SimMachine, SystemError};

use super::Scenario;

impl Scenario {
    /// The simulator machine of the scenario, no plan applied yet.
    pub fn machine(&self) -> Result<SimMachine, SystemError> {
        SimMachine::new(
            self.platform.clone(),
            self.apps.clone(),
            self.file.seed,
            self.file.interval_cycles,
        )
    }

    /// The plan of the colors the scenario fixes for its apps (only
    /// per-app color sets), if it fixes any.
    pub fn fixed_colors(&self) -> Option<Plan> {
        let colors: Vec<AppColors> = self
            .colors
            .iter()
            .enumerate()
            .filter_map(|(app, c)| c.clone().map(|colors| AppColors { app, colors }))
            .collect();
        (!colors.is_empty()).then(|| Plan {
            colors,
            ..Plan::default()
        })
    }
}
