//! The controllers a scenario runs, in the order they are chained: its
//! `[coloring]` page-color policy, then its CAT policy (a static one
//! wrapped in [`Static`], or one of the online controllers). Building them
//! also readies the machine for them (the recoloring engine's
//! configuration, UCP's utility monitors).

use cachepart_policy::{
    Chain, Controller, DunnDynamic, KpartDynaway, LfocOnline, Static, ThrottleOnline, UcpOnline,
};
use cachepart_sim::system::SimMachine;

use crate::error::Error;
use crate::run::coloring::ColorController;
use crate::run::online::{dunn_dynamic_for, kpart_dynaway_for, lfoc_online_for, ucp_online_for};
use crate::run::profile::{lfoc, policy_for, RunOptions};
use crate::spec::scenario::Scenario;
use crate::Algorithm;

/// The scenario's controllers; each is present when the scenario asks
/// for it.
pub(super) struct Controllers {
    /// The page-color policy.
    pub coloring: Option<ColorController>,
    /// A static CAT policy.
    policy: Option<Static>,
    /// Online LFOC.
    pub lfoc_online: Option<LfocOnline>,
    /// Dynamic Dunn.
    pub dunn_dynamic: Option<DunnDynamic>,
    /// KPart-Dynaway.
    pub kpart_dynaway: Option<KpartDynaway>,
    /// UCP on utility monitors.
    pub ucp_online: Option<UcpOnline>,
    /// Online throttling.
    pub throttle_online: Option<ThrottleOnline>,
}

impl Controllers {
    /// The controllers of `scenario` over `machine`; `alone_ipc`, each
    /// app's IPC alone under the run method, when the run made the alone
    /// runs; `sim_err` words a failure of the coloring's setup as the
    /// run's (a refused `[coloring]` value stays a configuration error).
    pub(super) fn new(
        scenario: &Scenario,
        machine: &mut SimMachine,
        alone_ipc: Option<Vec<f64>>,
        sim_err: impl Fn(Error) -> Error,
    ) -> Result<Controllers, Error> {
        let file = &scenario.file;
        let coloring = match &scenario.coloring {
            None => None,
            Some(c) => {
                machine.set_recolor_config(c.recolor);
                let pinned: Vec<Option<u32>> = file
                    .apps
                    .iter()
                    .zip(&scenario.apps)
                    .map(|(f, a)| f.core.is_some().then_some(a.core))
                    .collect();
                Some(ColorController::new(c, &pinned).map_err(sim_err)?)
            }
        };
        let opts = RunOptions {
            user_plan: file.plan.clone(),
            lfoc_preset: file.lfoc_preset.unwrap_or_default(),
            ..RunOptions::default()
        };
        let lfoc_online = match scenario.policy {
            Some(Algorithm::LfocOnline) => Some(lfoc_online_for(scenario, lfoc(&opts))?),
            _ => None,
        };
        let dunn_dynamic = match scenario.policy {
            Some(Algorithm::DunnDynamic) => Some(dunn_dynamic_for(scenario)?),
            _ => None,
        };
        let kpart_dynaway = match scenario.policy {
            Some(Algorithm::KpartDynaway) => Some(kpart_dynaway_for(scenario)?),
            _ => None,
        };
        let ucp_online = match scenario.policy {
            Some(Algorithm::UcpOnline) => {
                let (c, sampled_sets) = ucp_online_for(scenario)?;
                machine.enable_umon(sampled_sets);
                Some(c)
            }
            _ => None,
        };
        let throttle_online = match scenario.policy {
            Some(Algorithm::ThrottleOnline) => Some(
                crate::run::online_throttle::throttle_online_for(scenario, alone_ipc)?,
            ),
            _ => None,
        };
        let policy = match scenario.policy {
            Some(a) if !a.is_online() => Some(Static::new(policy_for(a, &opts)?)),
            _ => None,
        };
        Ok(Controllers {
            coloring,
            policy,
            lfoc_online,
            dunn_dynamic,
            kpart_dynaway,
            ucp_online,
            throttle_online,
        })
    }

    /// All of them as one controller: the coloring first, then the CAT
    /// policy.
    pub(super) fn chain(&mut self) -> Chain<'_> {
        let mut parts: Vec<&mut dyn Controller> = Vec::new();
        if let Some(c) = self.coloring.as_mut() {
            parts.push(c.as_controller());
        }
        if let Some(p) = self.policy.as_mut() {
            parts.push(p);
        }
        if let Some(o) = self.lfoc_online.as_mut() {
            parts.push(o);
        }
        if let Some(d) = self.kpart_dynaway.as_mut() {
            parts.push(d);
        }
        if let Some(d) = self.dunn_dynamic.as_mut() {
            parts.push(d);
        }
        if let Some(u) = self.ucp_online.as_mut() {
            parts.push(u);
        }
        if let Some(t) = self.throttle_online.as_mut() {
            parts.push(t);
        }
        Chain::new(parts)
    }
}
