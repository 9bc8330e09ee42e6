//! Kind arguments (`bw_model="stalls"`, `kind="shards"`, ...): each is
//! parsed by the library's own enum, and an unknown name raises
//! `UsageError` listing the names. `python/cachepart/kinds.py` spells
//! each enum's names as a `Literal[...]` type, which the stub
//! `python/cachepart/_core.pyi` and the public wrappers use for those
//! parameters; a test here keeps the names equal to the enums' and the
//! stub's parameters typed with them.

use crate::{to_py, UsageError};
use cachepart::policy::UnknownPreset;
use cachepart::units::strum::ParseError;
use cachepart::{Error, Kind};
use pyo3::PyErr;
use pyo3::PyResult;

/// The kind `K` named `value`, given as the parameter `param`.
pub(crate) fn parse<K>(param: &str, value: &str) -> PyResult<K>
where
    K: Kind,
    K::Err: Refusal,
{
    value
        .parse()
        .map_err(|e: K::Err| e.refusal::<K>(param, value))
}

/// How an enum's parse error reaches Python.
pub(crate) trait Refusal {
    /// The exception for `value`, given as `param`, that no `K` is named.
    fn refusal<K: Kind>(self, param: &str, value: &str) -> PyErr;
}

/// The facade's usage error already names the kind and lists its names.
impl Refusal for Error {
    fn refusal<K: Kind>(self, _param: &str, _value: &str) -> PyErr {
        to_py(self)
    }
}

/// LFOC's preset error lists the presets; the parameter goes in front.
impl Refusal for UnknownPreset {
    fn refusal<K: Kind>(self, param: &str, _value: &str) -> PyErr {
        UsageError::new_err(format!("{param}: {self}"))
    }
}

/// strum's bare error: the parameter, the value and the names.
impl Refusal for ParseError {
    fn refusal<K: Kind>(self, param: &str, value: &str) -> PyErr {
        UsageError::new_err(format!(
            "{param} {value:?}: expected {}",
            K::expected_quoted()
        ))
    }
}

#[cfg(test)]
mod tests {
    use cachepart::policy::LfocPreset;
    use cachepart::profile::BwModel;
    use cachepart::run::alone::Axis;
    use cachepart::spec::builtin::BuiltinSet;
    use cachepart::{CurveKind, Kind};

    /// The Literal types, as shipped.
    const KINDS: &str = include_str!("../../../python/cachepart/kinds.py");
    /// The stub, as shipped.
    const STUB: &str = include_str!("../../../python/cachepart/_core.pyi");

    /// The names of `Alias = Literal[...]` in kinds.py.
    fn literal(alias: &str) -> Vec<String> {
        let at = KINDS
            .find(&format!("\n{alias} = Literal["))
            .unwrap_or_else(|| panic!("kinds.py has no {alias} = Literal[...]"));
        let list = &KINDS[at..];
        let list = &list[list.find('[').unwrap() + 1..list.find(']').unwrap()];
        list.split(',')
            .map(|s| s.trim().trim_matches('"').to_string())
            .collect()
    }

    /// The type of `param` in the stub's `def function(`.
    fn stub_type(function: &str, param: &str) -> String {
        let start = STUB
            .find(&format!("def {function}("))
            .unwrap_or_else(|| panic!("the stub has no def {function}"));
        let sig = &STUB[start..];
        let sig = &sig[..sig.find(") ->").expect("a signature ends in ) ->")];
        let at = sig
            .find(&format!("\n    {param}: "))
            .or_else(|| sig.find(&format!("({param}: ")))
            .unwrap_or_else(|| panic!("{function} has no parameter {param} in the stub"));
        let ty = &sig[at..];
        let ty = &ty[ty.find(": ").unwrap() + 2..];
        ty[..ty.find(" =").unwrap_or(ty.len())].to_string()
    }

    fn names<K: Kind>() -> Vec<String> {
        K::names().iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn the_literal_types_are_the_enums_names() {
        let cases = [
            ("BwModel", names::<BwModel>()),
            ("LfocPreset", names::<LfocPreset>()),
            ("BuiltinSet", names::<BuiltinSet>()),
            ("CurveKind", names::<CurveKind>()),
            ("Axis", names::<Axis>()),
        ];
        for (alias, expected) in cases {
            assert_eq!(literal(alias), expected, "kinds.py {alias}");
        }
    }

    #[test]
    fn the_stubs_kind_parameters_use_the_literal_types() {
        let cases = [
            ("profile_evaluate", "bw_model", "BwModel"),
            ("profile_evaluate", "lfoc_preset", "LfocPreset"),
            ("profile_evaluate", "builtin", "BuiltinSet"),
            ("profile_classify", "builtin", "BuiltinSet"),
            ("profile_classify", "lfoc_preset", "LfocPreset"),
            ("curves", "kind", "CurveKind"),
            ("stall_curve", "axis", "Axis"),
            ("builtin_metrics_csv", "set", "BuiltinSet"),
            ("builtin_workloads", "set", "BuiltinSet"),
        ];
        for (function, param, alias) in cases {
            assert_eq!(stub_type(function, param), alias, "{function}({param})");
        }
    }
}
