//! Command-line values of a [`Kind`]: its kebab-case names, each with its
//! one-line help (strum's `message`), parsed back into the variant. A flag
//! that takes a kind says `value_parser = kind_parser::<K>()`; clap then
//! lists the names in `--help` and in its "invalid value" error as it does
//! for its own `ValueEnum`s.

use cachepart::Kind;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

/// The parser of every variant of `K`, in declaration order.
pub fn kind_parser<K: Kind + Send + Sync>() -> impl TypedValueParser<Value = K> {
    kind_parser_of(K::all())
}

/// The parser of the variants `kinds` of `K`, listed in that order.
pub fn kind_parser_of<K: Kind + Send + Sync>(
    kinds: impl IntoIterator<Item = K>,
) -> impl TypedValueParser<Value = K> {
    PossibleValuesParser::new(kind_values(kinds)).map(|name: String| {
        // The possible values are names of K, so each parses.
        K::from_name(&name).unwrap_or_else(|| unreachable!("{name} is a name of the kind"))
    })
}

/// The values of the variants `kinds`, each with its help: for a flag that
/// takes a kind and other words too.
pub fn kind_values<K: Kind>(kinds: impl IntoIterator<Item = K>) -> Vec<PossibleValue> {
    kinds
        .into_iter()
        .map(|k| {
            let v = PossibleValue::new(k.name());
            match k.help() {
                Some(h) => v.help(h),
                None => v,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart::profile::BwModel;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[arg(long, value_parser = kind_parser::<BwModel>(), default_value = "simple")]
        bw_model: BwModel,
    }

    #[test]
    fn a_kind_flag_parses_its_names_and_refuses_others() {
        let c = Cli::try_parse_from(["x", "--bw-model", "stalls"]).unwrap();
        assert_eq!(c.bw_model, BwModel::Stalls);
        let c = Cli::try_parse_from(["x"]).unwrap();
        assert_eq!(c.bw_model, BwModel::Simple);
        let e = Cli::try_parse_from(["x", "--bw-model", "fast"])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("[possible values: simple, stalls]"), "{e}");
    }
}
