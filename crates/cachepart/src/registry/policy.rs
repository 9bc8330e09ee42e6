//! An algorithm's policy: the constructor each static policy of the
//! registry gets, with the run options that tune it (LFOC's preset and
//! overrides, the `user` plan). Online controllers are built from their
//! scenario sections instead (`run/online.rs`).

use cachepart_machine::ShareModel;
use cachepart_policy::{
    Dunn, EqualPart, Kpart, Lfoc, LfocPlus, Policy, Stock, Ucp, UcpCurve, UserPlan, Whirlpool,
    YuPetrov,
};

use crate::error::Error;
use crate::registry::Algorithm;
use crate::run::profile::RunOptions;

/// LFOC with the run's preset and its two overrides.
pub(crate) fn lfoc(opts: &RunOptions) -> Lfoc {
    let d = Lfoc::preset(opts.lfoc_preset);
    Lfoc {
        max_streaming: opts.lfoc_max_streaming.unwrap_or(d.max_streaming),
        gaps_per_streaming: opts.lfoc_gaps_per_streaming.unwrap_or(d.gaps_per_streaming),
        ..d
    }
}

/// The policy of `algorithm` (not an exact solver), built with the
/// run's options; an online controller or a `user` run without a plan is
/// a usage error.
pub(crate) fn policy_for(
    algorithm: Algorithm,
    opts: &RunOptions,
) -> Result<Box<dyn Policy>, Error> {
    Ok(match algorithm {
        Algorithm::Stock => Box::new(Stock),
        Algorithm::EqualPart => Box::new(EqualPart),
        Algorithm::Ucp => Box::new(Ucp {
            curve: UcpCurve::Mpki,
        }),
        Algorithm::UcpSlowdown => Box::new(Ucp {
            curve: UcpCurve::Slowdown,
        }),
        Algorithm::YuPetrov => Box::new(YuPetrov),
        Algorithm::Whirlpool => Box::new(Whirlpool {
            share_model: ShareModel::Llcmpki,
        }),
        Algorithm::WhirlpoolC => Box::new(Whirlpool {
            share_model: ShareModel::Llcmpkc,
        }),
        Algorithm::Kpart => Box::new(Kpart),
        Algorithm::Dunn => Box::new(Dunn::default()),
        Algorithm::Lfoc => Box::new(lfoc(opts)),
        Algorithm::LfocPlus => Box::new(LfocPlus { lfoc: lfoc(opts) }),
        Algorithm::LfocOnline
        | Algorithm::KpartDynaway
        | Algorithm::DunnDynamic
        | Algorithm::UcpOnline
        | Algorithm::ThrottleOnline => {
            return Err(Error::Usage(format!(
                "{algorithm} measures the apps as they run: it needs a machine with time (sim run, policy = \"{algorithm}\"); the table-driven model has none"
            )))
        }
        Algorithm::User => Box::new(UserPlan {
            text: opts.user_plan.clone().ok_or_else(|| {
                Error::Usage("the user algorithm needs a plan (--plan MASK=APPS;...)".into())
            })?,
        }),
        Algorithm::Optimal(..) => unreachable!("solvers are not policies"),
    })
}
