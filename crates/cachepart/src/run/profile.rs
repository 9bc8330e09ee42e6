//! Running algorithms on workloads with the table-driven machine.

use crate::error::Error;
use crate::registry::Algorithm;
use cachepart_machine::{Machine, Plan, ShareModel};
use cachepart_policy::{
    Dunn, EqualPart, Kpart, Lfoc, LfocPlus, LfocPreset, Policy, Stock, Ucp, UcpCurve, UserPlan,
    Whirlpool, YuPetrov,
};
use cachepart_profile::optimal::{self, Progress, SolveOptions, Structure, TieRule};
use cachepart_profile::{
    evaluate, Evaluation, MetricsTable, Mix, ModelConfig, ProfileMachine, Workload,
};
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A progress callback: (workload, algorithm, progress).
pub type ProgressFn = Arc<dyn Fn(&str, &str, Progress) + Send + Sync>;

/// Options of [`run_profile`].
#[derive(Clone, Default)]
pub struct RunOptions {
    /// Bandwidth model and maximum bandwidth.
    pub model: ModelConfig,
    /// Use only the first `ways` ways (default: every way of the tables).
    pub ways: Option<usize>,
    /// The plan of the `user` algorithm (`MASK=APPS;...`).
    pub user_plan: Option<String>,
    /// LFOC's parameter set (`paper` by default; `pbbcache` reproduces
    /// PBBCache); the two options below override its values.
    pub lfoc_preset: LfocPreset,
    /// LFOC's maximum number of streaming apps per way (default: the
    /// preset's, 5).
    pub lfoc_max_streaming: Option<usize>,
    /// LFOC's light apps per free streaming slot (default: the preset's, 3
    /// under `paper`, 2 under `pbbcache`).
    pub lfoc_gaps_per_streaming: Option<usize>,
    /// Time limit of each exact solve; the best plan found is returned,
    /// marked as not proven optimal.
    pub time_limit: Option<Duration>,
    /// Threads of the exact solvers (default: all cores).
    pub threads: Option<usize>,
    /// Called while exact solvers run.
    pub progress: Option<ProgressFn>,
}

/// Exact-solver threads allowed per core: more only adds switching (the
/// solvers are CPU-bound), and the result is the same whatever the count.
pub const MAX_THREADS_PER_CORE: usize = 4;

/// The longest time limit accepted, in seconds (one year): longer ones
/// would overflow the solvers' deadlines.
pub const MAX_TIME_LIMIT_SECS: f64 = 365.0 * 24.0 * 3600.0;

/// The most exact-solver threads a run uses: [`MAX_THREADS_PER_CORE`]
/// times the cores of this machine.
pub fn max_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores * MAX_THREADS_PER_CORE
}

/// The time limit of the exact solvers from a number of seconds (the
/// CLI's `--time-limit` and Python's `time_limit`): a positive finite
/// number up to [`MAX_TIME_LIMIT_SECS`].
pub fn time_limit_from_secs(secs: f64) -> Result<Duration, Error> {
    if !(secs.is_finite() && secs > 0.0 && secs <= MAX_TIME_LIMIT_SECS) {
        return Err(Error::Usage(format!(
            "time-limit {secs:?}: expected a positive number of seconds, at most {MAX_TIME_LIMIT_SECS} (one year)"
        )));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| Error::Usage(format!("time-limit {secs:?}: {e}")))
}

impl RunOptions {
    /// Checks the options against the algorithms they go with; returns
    /// warnings to print (a thread count above [`max_threads`] is capped
    /// there by [`run_profile`]). Errors name the option: `max-bw`,
    /// `threads`, `plan` (given without the `user` algorithm, which alone
    /// reads it), `time-limit`.
    pub fn check(&self, algorithms: &[Algorithm]) -> Result<Vec<String>, Error> {
        self.model.check()?;
        let mut warnings = Vec::new();
        if let Some(t) = self.threads {
            if t == 0 {
                return Err(Error::Usage("threads 0: expected at least 1 thread".into()));
            }
            let max = max_threads();
            if t > max && algorithms.iter().any(|a| a.is_optimal()) {
                warnings.push(format!(
                    "threads {t}: capped at {max} ({MAX_THREADS_PER_CORE} per core of this machine)"
                ));
            }
        }
        if let Some(d) = self.time_limit {
            if d.is_zero() || d.as_secs_f64() > MAX_TIME_LIMIT_SECS {
                return Err(Error::Usage(format!(
                    "time-limit {}: expected a positive number of seconds, at most {MAX_TIME_LIMIT_SECS} (one year)",
                    d.as_secs_f64()
                )));
            }
        }
        if self.user_plan.is_some() && !algorithms.contains(&Algorithm::User) {
            return Err(Error::Usage(
                "plan: given, but only the user algorithm reads it (add user to the algorithms)"
                    .into(),
            ));
        }
        if algorithms.contains(&Algorithm::User) && self.user_plan.is_none() {
            return Err(Error::Usage(
                "the user algorithm needs a plan (--plan MASK=APPS;...)".into(),
            ));
        }
        Ok(warnings)
    }
}

/// What an exact solver reports beside its plan.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SolverInfo {
    /// False when the time limit stopped the search first.
    pub proven_optimal: bool,
    /// Search nodes explored.
    pub explored_nodes: u64,
}

/// One algorithm's result on one workload.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Workload name.
    pub workload: String,
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The plan it chose.
    pub plan: Plan,
    /// The model's prediction for that plan.
    pub evaluation: Evaluation,
    /// Exact solvers only.
    pub solver: Option<SolverInfo>,
    /// Wall time of the decision (policy or solver), in seconds.
    pub decision_seconds: f64,
}

/// Keeps only the first `ways` way counts of every app. Slowdowns stay
/// relative to the best IPC over every measured way count.
pub fn restrict_ways(mix: &mut Mix, ways: usize) -> Result<(), Error> {
    if ways == 0 || ways > mix.ways {
        return Err(Error::Usage(format!(
            "--ways {ways}: expected 1 to {} (the tables cover {} ways)",
            mix.ways, mix.ways
        )));
    }
    for a in &mut mix.apps {
        let c = &mut a.curves;
        for v in [
            &mut c.ipc,
            &mut c.llcmpki,
            &mut c.llcmpkc,
            &mut c.bandwidth_mbps,
            &mut c.slowdown,
        ] {
            v.truncate(ways);
        }
        for v in [
            &mut c.stalls_l2_miss,
            &mut a.stalls_total,
            &mut a.stalls_mem,
            &mut a.stalls_store_buf,
        ]
        .into_iter()
        .flatten()
        {
            v.truncate(ways);
        }
    }
    mix.ways = ways;
    Ok(())
}

pub(crate) fn lfoc(opts: &RunOptions) -> Lfoc {
    let d = Lfoc::preset(opts.lfoc_preset);
    Lfoc {
        max_streaming: opts.lfoc_max_streaming.unwrap_or(d.max_streaming),
        gaps_per_streaming: opts.lfoc_gaps_per_streaming.unwrap_or(d.gaps_per_streaming),
        ..d
    }
}

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

/// Runs one algorithm on a prepared mix.
pub fn run_one(
    workload: &str,
    mix: &Mix,
    algorithm: Algorithm,
    opts: &RunOptions,
) -> Result<Outcome, Error> {
    let start = Instant::now();
    let (plan, solver) = match algorithm {
        Algorithm::Optimal(structure, objective, tie_rule) => {
            // PBBCache's best-first clustering search starts from LFOC's plan
            // and keeps it when nothing is strictly better.
            let incumbent = if tie_rule == TieRule::BestFirst && structure == Structure::Clustering
            {
                let mut machine = ProfileMachine::new(mix.clone(), opts.model);
                Some(
                    lfoc(opts)
                        .decide(&mut machine)
                        .map_err(|source| Error::Policy {
                            workload: workload.to_string(),
                            algorithm: algorithm.to_string(),
                            source: Box::new(source),
                        })?,
                )
            } else {
                None
            };
            let name = algorithm.to_string();
            let cb = opts.progress.clone();
            let progress = move |p: Progress| {
                if let Some(cb) = &cb {
                    cb(workload, &name, p)
                }
            };
            let sopts = SolveOptions {
                time_limit: opts.time_limit,
                threads: opts.threads.map(|t| t.min(max_threads())),
                progress: Some(&progress),
                tie_rule,
                incumbent: incumbent.as_ref(),
            };
            let sol = optimal::solve(mix, &opts.model, structure, objective, &sopts)?;
            (
                sol.plan,
                Some(SolverInfo {
                    proven_optimal: sol.proven_optimal,
                    explored_nodes: sol.explored_nodes,
                }),
            )
        }
        _ => {
            let mut machine = ProfileMachine::new(mix.clone(), opts.model);
            let mut policy = policy_for(algorithm, opts)?;
            let plan = policy
                .decide(&mut machine)
                .map_err(|source| Error::Policy {
                    workload: workload.to_string(),
                    algorithm: algorithm.to_string(),
                    source: Box::new(source),
                })?;
            machine.apply(&plan).map_err(|e| Error::Policy {
                workload: workload.to_string(),
                algorithm: algorithm.to_string(),
                source: Box::new(e.into()),
            })?;
            (plan, None)
        }
    };
    let decision_seconds = start.elapsed().as_secs_f64();
    let evaluation = evaluate(mix, &plan, &opts.model)?;
    Ok(Outcome {
        workload: workload.to_string(),
        algorithm,
        plan,
        evaluation,
        solver,
        decision_seconds,
    })
}

/// Runs every algorithm on every workload, in order (workload-major).
pub fn run_profile(
    table: &MetricsTable,
    workloads: &[Workload],
    algorithms: &[Algorithm],
    opts: &RunOptions,
) -> Result<Vec<Outcome>, Error> {
    opts.check(algorithms)?;
    let mut mixes = Vec::with_capacity(workloads.len());
    for w in workloads {
        let idx = w.resolve(table)?;
        let mut mix = Mix::from_table(table, &idx);
        if let Some(ways) = opts.ways {
            restrict_ways(&mut mix, ways)?;
        }
        mixes.push(mix);
    }
    let mut out = Vec::with_capacity(workloads.len() * algorithms.len());
    for (w, mix) in workloads.iter().zip(&mixes) {
        for &a in algorithms {
            out.push(run_one(&w.name, mix, a, opts)?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_profile::BwModel;

    #[test]
    fn time_limits_that_would_overflow_are_usage_errors() {
        for t in [
            1e300,
            f64::INFINITY,
            f64::NAN,
            0.0,
            -1.0,
            MAX_TIME_LIMIT_SECS * 2.0,
        ] {
            let e = time_limit_from_secs(t).unwrap_err().to_string();
            assert!(e.starts_with("time-limit "), "{e}");
        }
        assert_eq!(
            time_limit_from_secs(2.5).unwrap(),
            Duration::from_millis(2500)
        );
    }

    #[test]
    fn check_names_the_option() {
        let opt = [Algorithm::Stock];
        let bad_bw = RunOptions {
            model: ModelConfig {
                bw_model: BwModel::Simple,
                max_bw_mbps: Some(-5.0),
            },
            ..Default::default()
        };
        assert!(bad_bw
            .check(&opt)
            .unwrap_err()
            .to_string()
            .contains("max-bw -5"));
        let plan_alone = RunOptions {
            user_plan: Some("0x3=0".into()),
            ..Default::default()
        };
        let e = plan_alone.check(&opt).unwrap_err().to_string();
        assert!(e.starts_with("plan:") && e.contains("user"), "{e}");
        assert!(plan_alone.check(&[Algorithm::User]).is_ok());
        let zero = RunOptions {
            threads: Some(0),
            ..Default::default()
        };
        assert!(zero
            .check(&opt)
            .unwrap_err()
            .to_string()
            .contains("threads 0"));
    }

    #[test]
    fn thread_counts_above_the_cap_warn() {
        let solver: Algorithm = "optc-unf".parse().unwrap();
        let many = RunOptions {
            threads: Some(max_threads() + 1),
            ..Default::default()
        };
        let w = many.check(&[solver]).unwrap();
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("capped at"), "{w:?}");
        let few = RunOptions {
            threads: Some(1),
            ..Default::default()
        };
        assert!(few.check(&[solver]).unwrap().is_empty());
    }
}
