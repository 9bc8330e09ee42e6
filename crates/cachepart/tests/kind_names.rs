//! Every kind that serde also reads or writes spells its names the same
//! way there as strum does (`Kind::name`, the CLI, Python and messages),
//! and every name parses back to its variant.

use cachepart::policy::{AppClass, LfocPreset};
use cachepart::profile::BwModel;
use cachepart::run::alone::Axis;
use cachepart::run::coloring::ColorPolicy;
use cachepart::spec::builtin::BuiltinSet;
use cachepart::trace::TraceFormat;
use cachepart::{CurveKind, Kind};
use cachepart_sim::memory::AllocatorKind;
use cachepart_sim::replacement::PolicyKind;
use serde::Serialize;

/// Each variant's serde name is its strum name, and the name parses back.
fn same_names<K: Kind + Serialize + std::fmt::Debug + std::fmt::Display>() {
    assert!(!K::names().is_empty());
    for k in K::all() {
        let serde = serde_json::to_value(k).expect("a kind serialises");
        assert_eq!(serde.as_str(), Some(k.name()), "{k:?}");
        assert_eq!(k.to_string(), k.name(), "{k:?}");
        assert_eq!(K::from_name(k.name()), Some(k), "{k:?}");
    }
    assert_eq!(
        K::all().map(K::name).collect::<Vec<_>>(),
        K::names(),
        "names in declaration order"
    );
}

#[test]
fn serde_and_strum_agree_on_every_kind() {
    same_names::<PolicyKind>();
    same_names::<AllocatorKind>();
    same_names::<TraceFormat>();
    same_names::<BwModel>();
    same_names::<LfocPreset>();
    same_names::<AppClass>();
    same_names::<CurveKind>();
    same_names::<Axis>();
    same_names::<ColorPolicy>();
}

#[test]
fn names_without_serde_are_the_ones_users_write() {
    assert_eq!(BuiltinSet::names(), ["debian", "parametric"]);
    assert_eq!(
        cachepart_sim::prefetch::Kind::names(),
        ["l2-streamer", "l2-adjacent", "l1-next-line", "l1-ip-stride"]
    );
    assert_eq!(
        cachepart::linux::resctrl::Resource::names(),
        ["L3", "L3CODE", "L3DATA", "L2", "L2CODE", "L2DATA", "MB"]
    );
    assert_eq!(
        cachepart::linux::preset::Preset::names(),
        ["skylake", "cdp", "amd"]
    );
}

#[test]
fn unknown_names_are_refused_with_the_names_listed() {
    let e = "lfu".parse::<AllocatorKind>().unwrap_err().to_string();
    assert!(e.contains("expected buddy, tam or coloris"), "{e}");
    let e = "xyz".parse::<TraceFormat>().unwrap_err().to_string();
    assert!(e.contains("(cpt, lackey, din)"), "{e}");
    let e = "x".parse::<CurveKind>().unwrap_err().to_string();
    assert!(
        e.contains("expected fully-associative, set-associative, colors or shards"),
        "{e}"
    );
    let e = "x".parse::<LfocPreset>().unwrap_err().to_string();
    assert!(e.ends_with("expected one of paper, pbbcache"), "{e}");
}
