//! Every algorithm by its kebab-case name: heuristic policies and exact
//! solvers.

use crate::error::Error;
use cachepart_profile::optimal::{Objective, Structure, TieRule};
use std::fmt;
use std::str::FromStr;

/// A partitioning algorithm, named as in the CLI, configs and Python.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// No partitioning.
    Stock,
    /// Even strict partitioning.
    EqualPart,
    /// UCP lookahead on MPKI.
    Ucp,
    /// UCP lookahead on slowdown.
    UcpSlowdown,
    /// Yu and Petrov's bandwidth-aware allocation.
    YuPetrov,
    /// No partitioning, sharing estimated on MPKI.
    Whirlpool,
    /// No partitioning, sharing estimated on MPKC.
    WhirlpoolC,
    /// KPart clustering.
    Kpart,
    /// Dunn clustering (k-means on stall fractions).
    Dunn,
    /// LFOC clustering.
    Lfoc,
    /// LFOC with pair clustering of the sensitive apps (PBBCache's `lfoc+`).
    LfocPlus,
    /// LFOC's online algorithm (sampling, class-change heuristics): a
    /// controller for machines that run in time (the simulator, Linux).
    LfocOnline,
    /// KPart's dynamic version: periodic full way sweeps of each app, then
    /// KPart's clustering (a controller, like `lfoc-online`).
    KpartDynaway,
    /// Dunn's clustering re-planned every period from measured L2-miss
    /// stall fractions (a controller).
    DunnDynamic,
    /// UCP's lookahead re-run every period on utility monitors (UMON)
    /// instead of offline curves (a controller).
    UcpOnline,
    /// Zhang et al.'s execution throttling online: duty cycles (and,
    /// hybrid, prefetchers) stepped every decision window to drive the
    /// unfairness factor down (a controller).
    ThrottleOnline,
    /// A plan given by hand (`--plan`).
    User,
    /// The exact optimum of an objective, strict partitioning or clustering;
    /// the tie rule picks which of several optimal plans PBBCache's serial
    /// (`opt-*`) or best-first (`opt-*-bf`) search would return.
    Optimal(Structure, Objective, TieRule),
}

const SIMPLE: [(&str, Algorithm); 17] = [
    ("stock", Algorithm::Stock),
    ("equal-part", Algorithm::EqualPart),
    ("ucp", Algorithm::Ucp),
    ("ucp-slowdown", Algorithm::UcpSlowdown),
    ("yu-petrov", Algorithm::YuPetrov),
    ("whirlpool", Algorithm::Whirlpool),
    ("whirlpool-c", Algorithm::WhirlpoolC),
    ("kpart", Algorithm::Kpart),
    ("dunn", Algorithm::Dunn),
    ("lfoc", Algorithm::Lfoc),
    ("lfoc+", Algorithm::LfocPlus),
    ("lfoc-online", Algorithm::LfocOnline),
    ("kpart-dynaway", Algorithm::KpartDynaway),
    ("dunn-dynamic", Algorithm::DunnDynamic),
    ("ucp-online", Algorithm::UcpOnline),
    ("throttle-online", Algorithm::ThrottleOnline),
    ("user", Algorithm::User),
];

const OBJECTIVES: [(&str, Objective); 3] = [
    ("stp", Objective::Stp),
    ("unf", Objective::Unfairness),
    ("antt", Objective::Antt),
];

impl Algorithm {
    /// The algorithms `profile eval` and Python's `evaluate` run when none
    /// are named (one list, so that both run the same ones).
    pub const DEFAULT_LIST: &'static str = "stock,equal-part,ucp,kpart,lfoc,optc-unf,optc-stp";

    /// Every algorithm name, in a stable order.
    pub fn all_names() -> Vec<String> {
        let mut v: Vec<String> = SIMPLE.iter().map(|(n, _)| n.to_string()).collect();
        for suffix in ["", "-bf"] {
            for prefix in ["opt", "optc"] {
                for (o, _) in OBJECTIVES {
                    v.push(format!("{prefix}-{o}{suffix}"));
                }
            }
        }
        v
    }

    /// Parses a comma-separated list (`ucp,lfoc,optc-unf`).
    pub fn parse_list(text: &str) -> Result<Vec<Algorithm>, Error> {
        let list: Vec<Algorithm> = text
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::parse)
            .collect::<Result<_, _>>()?;
        if list.is_empty() {
            return Err(Error::Usage("no algorithm given".into()));
        }
        Ok(list)
    }

    /// True for the exact solvers.
    pub fn is_optimal(self) -> bool {
        matches!(self, Algorithm::Optimal(..))
    }

    /// True for controllers that measure the mix as it runs (they need a
    /// machine with time: the simulator or Linux, not the table-driven
    /// model).
    pub fn is_online(self) -> bool {
        matches!(
            self,
            Algorithm::LfocOnline
                | Algorithm::KpartDynaway
                | Algorithm::DunnDynamic
                | Algorithm::UcpOnline
                | Algorithm::ThrottleOnline
        )
    }
}

impl FromStr for Algorithm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        if let Some((_, a)) = SIMPLE.iter().find(|(n, _)| *n == s) {
            return Ok(*a);
        }
        let (s_core, tie) = match s.strip_suffix("-bf") {
            Some(core) => (core, TieRule::BestFirst),
            None => (s, TieRule::Serial),
        };
        let (structure, rest) = if let Some(r) = s_core.strip_prefix("optc-") {
            (Structure::Clustering, r)
        } else if let Some(r) = s_core.strip_prefix("opt-") {
            (Structure::Partitioning, r)
        } else {
            return Err(unknown(s));
        };
        OBJECTIVES
            .iter()
            .find(|(n, _)| *n == rest)
            .map(|(_, o)| Algorithm::Optimal(structure, *o, tie))
            .ok_or_else(|| unknown(s))
    }
}

fn unknown(s: &str) -> Error {
    Error::Usage(format!(
        "unknown algorithm {s:?}; expected one of: {}",
        Algorithm::all_names().join(", ")
    ))
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some((n, _)) = SIMPLE.iter().find(|(_, a)| a == self) {
            return f.write_str(n);
        }
        let Algorithm::Optimal(s, o, tie) = self else {
            unreachable!("every simple algorithm is in SIMPLE")
        };
        let prefix = match s {
            Structure::Partitioning => "opt",
            Structure::Clustering => "optc",
        };
        let obj = OBJECTIVES
            .iter()
            .find(|(_, x)| x == o)
            .map(|(n, _)| *n)
            .unwrap_or("?");
        write!(f, "{prefix}-{obj}{}", tie.suffix())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_roundtrip() {
        for n in Algorithm::all_names() {
            let a: Algorithm = n.parse().unwrap();
            assert_eq!(a.to_string(), n);
        }
        let e = "ucpp".parse::<Algorithm>().unwrap_err().to_string();
        assert!(e.contains("unknown algorithm \"ucpp\""), "{e}");
        assert!(Algorithm::parse_list(" , ").is_err());
    }
}
