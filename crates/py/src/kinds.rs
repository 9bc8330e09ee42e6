//! Kind arguments (`bw_model="stalls"`, `kind="shards"`, ...): each is
//! parsed by the library's own enum, and an unknown name raises
//! `UsageError` listing the names. The stub `python/cachepart/_core.pyi`
//! types each such parameter as a `Literal[...]` of the same names; a test
//! here keeps the two equal.

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

    /// The stub, as shipped.
    const STUB: &str = include_str!("../../../python/cachepart/_core.pyi");

    /// The `Literal[...]` names of `param` in the stub's `def function(`.
    fn literal(function: &str, param: &str) -> Vec<String> {
        let start = STUB
            .find(&format!("def {function}("))
            .unwrap_or_else(|| panic!("the stub has no def {function}"));
        let sig = &STUB[start..];
        let sig = &sig[..sig.find(") ->").expect("a signature ends in ) ->")];
        let at = sig
            .find(&format!("\n    {param}: Literal["))
            .or_else(|| sig.find(&format!("({param}: Literal[")))
            .unwrap_or_else(|| panic!("{function}: {param} is not a Literal in the stub"));
        let list = &sig[at..];
        let list = &list[list.find('[').unwrap() + 1..list.find(']').unwrap()];
        list.split(',')
            .map(|s| s.trim().trim_matches('"').to_string())
            .collect()
    }

    fn names<K: Kind>() -> Vec<String> {
        K::names().iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn the_stub_literals_are_the_enums_names() {
        let cases: [(&str, &str, Vec<String>); 9] = [
            ("profile_evaluate", "bw_model", names::<BwModel>()),
            ("profile_evaluate", "lfoc_preset", names::<LfocPreset>()),
            ("profile_evaluate", "builtin", names::<BuiltinSet>()),
            ("profile_classify", "builtin", names::<BuiltinSet>()),
            ("profile_classify", "lfoc_preset", names::<LfocPreset>()),
            ("curves", "kind", names::<CurveKind>()),
            ("stall_curve", "axis", names::<Axis>()),
            ("builtin_metrics_csv", "set", names::<BuiltinSet>()),
            ("builtin_workloads", "set", names::<BuiltinSet>()),
        ];
        for (function, param, expected) in cases {
            assert_eq!(literal(function, param), expected, "{function}({param})");
        }
    }
}
