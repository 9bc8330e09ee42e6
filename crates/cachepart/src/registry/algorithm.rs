//! Every algorithm by its kebab-case name: heuristic policies and exact
//! solvers.

use crate::error::Error;
use cachepart_profile::optimal::{Objective, Structure, TieRule};
use cachepart_units::Kind as _;
use std::fmt;
use std::str::FromStr;

/// A partitioning algorithm, named as in the CLI, configs and Python.
///
/// The names come from strum: each variant's kebab-case name (`lfoc+` for
/// [`Algorithm::LfocPlus`]), and for [`Algorithm::Optimal`] the solver's
/// prefix, objective and tie suffix (`optc-unf-bf`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, strum::EnumDiscriminants, strum::FromRepr)]
#[strum_discriminants(
    name(Name),
    vis(),
    derive(strum::EnumString, strum::IntoStaticStr, strum::VariantArray),
    strum(serialize_all = "kebab-case")
)]
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
    #[strum_discriminants(strum(serialize = "lfoc+"))]
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
    #[strum(disabled)]
    #[strum_discriminants(strum(disabled))]
    Optimal(Structure, Objective, TieRule),
}

impl Algorithm {
    /// The algorithms `profile eval` and Python's `evaluate` run when none
    /// are named (one list, so that both run the same ones).
    pub const DEFAULT_LIST: &'static str = "stock,equal-part,ucp,kpart,lfoc,optc-unf,optc-stp";

    /// Every algorithm name, in a stable order: the named ones in
    /// declaration order, then the exact solvers.
    pub fn all_names() -> Vec<String> {
        let mut v: Vec<String> = named().map(|n| <&str>::from(n).to_string()).collect();
        for tie in [TieRule::Serial, TieRule::BestFirst] {
            for structure in Structure::all() {
                for o in Objective::all() {
                    v.push(Algorithm::Optimal(structure, o, tie).to_string());
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

    /// True for the policies that plan from the apps' alone curves (a
    /// profile table on Linux): every one but `stock`, `equal-part` and
    /// the `whirlpool`s (which need only the app count and the ways) and
    /// the online controllers that measure instead (`throttle-online`
    /// needs each app's IPC alone, so it counts).
    pub fn needs_alone_curves(self) -> bool {
        match self {
            Algorithm::Stock
            | Algorithm::EqualPart
            | Algorithm::Whirlpool
            | Algorithm::WhirlpoolC => false,
            Algorithm::ThrottleOnline => true,
            a => !a.is_online(),
        }
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
        if let Some(a) = s
            .parse::<Name>()
            .ok()
            .and_then(|n| Algorithm::from_repr(n as usize))
        {
            return Ok(a);
        }
        let (s_core, tie) = match s.strip_suffix("-bf") {
            Some(core) => (core, TieRule::BestFirst),
            None => (s, TieRule::Serial),
        };
        let (structure, objective) = s_core.split_once('-').ok_or_else(|| unknown(s))?;
        let structure = Structure::from_name(structure).ok_or_else(|| unknown(s))?;
        // Only the objectives' own names (`unf`, not its other spelling).
        Objective::all()
            .find(|o| o.name() == objective)
            .map(|o| Algorithm::Optimal(structure, o, tie))
            .ok_or_else(|| unknown(s))
    }
}

/// The named algorithms (every one but the exact solvers).
fn named() -> impl Iterator<Item = Name> {
    <Name as strum::VariantArray>::VARIANTS
        .iter()
        .copied()
        .filter(|n| *n != Name::Optimal)
}

fn unknown(s: &str) -> Error {
    Error::Usage(format!(
        "unknown algorithm {s:?}; expected one of: {}",
        Algorithm::all_names().join(", ")
    ))
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Algorithm::Optimal(s, o, tie) => {
                write!(f, "{}-{}{}", s.prefix(), o.name(), tie.suffix())
            }
            named => f.write_str(Name::from(named).into()),
        }
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

    #[test]
    fn only_the_policies_that_need_no_table_say_so() {
        let none: Vec<String> = Algorithm::all_names()
            .iter()
            .map(|n| n.parse::<Algorithm>().unwrap())
            .filter(|a| !a.needs_alone_curves())
            .map(|a| a.to_string())
            .collect();
        assert_eq!(
            none,
            [
                "stock",
                "equal-part",
                "whirlpool",
                "whirlpool-c",
                "lfoc-online",
                "kpart-dynaway",
                "dunn-dynamic",
                "ucp-online"
            ]
        );
    }

    #[test]
    fn only_the_listed_names_parse() {
        assert_eq!("lfoc+".parse::<Algorithm>().unwrap(), Algorithm::LfocPlus);
        assert_eq!(
            "optc-unf-bf".parse::<Algorithm>().unwrap(),
            Algorithm::Optimal(
                Structure::Clustering,
                Objective::Unfairness,
                TieRule::BestFirst
            )
        );
        // The variant without a name of its own, the structures' and the
        // objectives' other spellings are not algorithm names.
        for bad in [
            "optimal",
            "lfoc-plus",
            "partitioning-stp",
            "opt-unfairness",
            "opt",
            "optc-",
        ] {
            assert!(bad.parse::<Algorithm>().is_err(), "{bad}");
        }
    }
}
