//! The controller a Linux run drives: a static policy, planned once from
//! the apps' alone curves, or an online controller (`lfoc-online`,
//! `dunn-dynamic`, `kpart-dynaway`) built by the same constructors as a
//! scenario's ([`crate::run::online`]) from the machine's platform, its clock,
//! the interval and the mix file's `[lfoc-online]`, `[kpart-dynaway]` and
//! `[dunn-dynamic]` sections.
//!
//! `ucp-online` reads utility monitors (per-app shadow tags, UMON) that no
//! Intel or AMD part exposes: a Linux run takes it only with table-driven
//! counters (`--fake-counters-from`), which derive the monitors from the
//! table, and refuses it otherwise before anything starts.

use std::path::Path;
use std::time::Duration;

use cachepart_linux::machine::{LinuxMachine, Llc};
use cachepart_policy::{Controller, Static};

use crate::error::Error;
use crate::linux::counters::CounterChoice;
use crate::registry::{lfoc, policy_for};
use crate::run::online::{
    dunn_dynamic, kpart_dynaway, lfoc_online, ucp_online, OnlineSetup, Sections,
};
use crate::run::online_throttle::{throttle_online, ThrottleKnobs};
use crate::run::profile::RunOptions;
use crate::Algorithm;

/// Refuses, before anything starts, a policy a Linux machine cannot run:
/// an exact solver (a search of the table-driven model, not a policy),
/// `user` (its plan comes from `--plan`, which Linux runs do not take),
/// one these counters cannot feed, or one that needs MSR writes without
/// `allow_msr` (`throttle-online` writes the cores' clock modulation).
pub fn check_policy(
    policy: Algorithm,
    counters: CounterChoice<'_>,
    allow_msr: bool,
) -> Result<(), Error> {
    if policy.is_optimal() {
        return Err(Error::Usage(format!(
            "--policy {policy}: an exact solver searches every plan of the table-driven model \
             (cachepart profile eval); it is not a policy a machine runs. On Linux use a policy \
             (stock, equal-part, ucp, kpart, dunn, lfoc, ...) or an online controller"
        )));
    }
    if policy == Algorithm::User {
        return Err(Error::Usage(
            "--policy user: it applies a plan given with --plan, which `cachepart run` and the \
             daemon do not take. On Linux use a policy that plans (stock, equal-part, ucp, \
             kpart, dunn, lfoc, ...) or an online controller"
                .into(),
        ));
    }
    if policy == Algorithm::ThrottleOnline && !allow_msr {
        return Err(Error::Usage(
            "--policy throttle-online: it throttles cores through their clock-modulation MSR \
             (0x19A), which needs --allow-msr (cachepart run; the daemon writes no MSRs)"
                .into(),
        ));
    }
    if policy == Algorithm::UcpOnline && !matches!(counters, CounterChoice::Table(_)) {
        return Err(Error::Usage(
            "--policy ucp-online: it reads utility monitors (UMON shadow tags per app), which \
             no Intel or AMD part exposes (table-driven counters, --fake-counters-from, model \
             them). On Linux use lfoc-online, dunn-dynamic or kpart-dynaway, or the static ucp"
                .into(),
        ));
    }
    Ok(())
}

/// How a Linux run is given the profile table of the apps' alone curves,
/// for the message of [`check_alone_curves`].
#[derive(Clone, Copy, Debug)]
pub struct TableOption {
    /// Who reads the table: `` `cachepart run` ``, `the daemon`.
    pub reader: &'static str,
    /// How to give it: `give -m/--metrics TABLE.csv`,
    /// `add metrics = "TABLE.csv"`.
    pub give: &'static str,
    /// Whose profiles it must hold: `every app's`, `every target's`.
    pub whose: &'static str,
}

/// Refuses, before anything starts, a policy that needs the apps' alone
/// curves ([`Algorithm::needs_alone_curves`]) when no profile table gives
/// them (`has_table` false). The reason names the policy and how to give
/// the table (`how`); the caller places it (an option, a file's line).
pub fn check_alone_curves(
    policy: Algorithm,
    has_table: bool,
    how: TableOption,
) -> Result<(), String> {
    if has_table || !policy.needs_alone_curves() {
        return Ok(());
    }
    let needs = if policy == Algorithm::ThrottleOnline {
        "normalises each app by its IPC alone"
    } else {
        "plans from each program's alone curves"
    };
    Err(format!(
        "{policy} {needs}, which {} reads from a profile table: {} (PBBCache metrics CSV, \
         e.g. from `cachepart profile measure`) with {} profile, or use a policy that needs \
         none (stock, equal-part, an online controller)",
        how.reader, how.give, how.whose
    ))
}

/// The online setup of a run of `mix` (read from `mix_path`) on
/// `machine` with `interval`.
pub fn linux_setup(machine: &LinuxMachine, interval: Duration, mix_path: &Path) -> OnlineSetup {
    host_setup(
        machine.specs().len(),
        machine.clock_mhz(),
        machine.llc(),
        interval,
        mix_path,
    )
}

/// The online setup of `apps` apps on a host whose clock is `mhz` and
/// whose LLC is `llc`, sampled every `interval`; errors name `whence`
/// (the launcher's mix file, the daemon's configuration).
pub fn host_setup(
    apps: usize,
    mhz: f64,
    llc: &Llc,
    interval: Duration,
    whence: &Path,
) -> OnlineSetup {
    OnlineSetup {
        apps,
        freq_ghz: mhz / 1000.0,
        interval_cycles: (interval.as_secs_f64() * mhz * 1e6) as u64,
        way_bytes: (llc.ways > 0).then(|| llc.size_bytes as f64 / f64::from(llc.ways)),
        whence: whence.display().to_string(),
    }
}

/// The controller of `policy`, its parameters from `sections` (a mix
/// file's or a daemon configuration's).
pub fn linux_controller(
    policy: Algorithm,
    sections: Sections<'_>,
    setup: &OnlineSetup,
    opts: &RunOptions,
) -> Result<Box<dyn Controller>, Error> {
    Ok(match policy {
        Algorithm::LfocOnline => Box::new(lfoc_online(sections.lfoc_online, lfoc(opts), setup)?),
        Algorithm::DunnDynamic => Box::new(dunn_dynamic(sections.dunn_dynamic, setup)?),
        Algorithm::KpartDynaway => Box::new(kpart_dynaway(sections.kpart_dynaway, setup)?),
        Algorithm::UcpOnline => Box::new(ucp_online(sections.ucp_online, setup)?.0),
        Algorithm::ThrottleOnline => Box::new(throttle_online(
            sections.throttle_online,
            setup,
            ThrottleKnobs::linux(),
            None,
        )?),
        p => Box::new(Static::new(policy_for(p, opts)?)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solvers_and_user_are_refused_policies_pass() {
        let fake = CounterChoice::from_flags(true, None);
        for (name, words) in [("optc-unf", "exact solver"), ("user", "--plan")] {
            let e = check_policy(name.parse().unwrap(), fake, true)
                .unwrap_err()
                .to_string();
            assert!(e.contains(name) && e.contains(words), "{e}");
        }
        for ok in ["stock", "lfoc", "lfoc-online", "throttle-online"] {
            check_policy(ok.parse().unwrap(), fake, true).unwrap();
        }
    }

    #[test]
    fn a_policy_that_plans_from_alone_curves_needs_a_table() {
        let how = TableOption {
            reader: "the reader",
            give: "give -t",
            whose: "every app's",
        };
        let e = check_alone_curves(Algorithm::Lfoc, false, how).unwrap_err();
        assert!(
            e.starts_with("lfoc plans from each program's alone curves, which the reader")
                && e.contains(": give -t (")
                && e.contains("with every app's profile"),
            "{e}"
        );
        let e = check_alone_curves(Algorithm::ThrottleOnline, false, how).unwrap_err();
        assert!(e.contains("IPC alone") && e.contains("give -t"), "{e}");
        check_alone_curves(Algorithm::Lfoc, true, how).unwrap();
        for ok in [
            Algorithm::Stock,
            Algorithm::EqualPart,
            Algorithm::LfocOnline,
        ] {
            check_alone_curves(ok, false, how).unwrap();
        }
    }
}
