//! Online LFOC on the simulator, end to end: a scenario with `policy =
//! "lfoc-online"` runs with no alone curves; each app is sampled in a
//! growing partition on the simulated machine and classified from what
//! the simulator measured.

mod common;

use cachepart::run::sim::{run_scenario, SimReport};
use cachepart::spec::scenario::{Scenario, ScenarioFile};
use cachepart_policy::lfoc_online::DecisionKind;
use cachepart_policy::AppClass;

fn scenario(extra: &str) -> Result<Scenario, cachepart::Error> {
    common::sensitive_and_streaming(
        "lfoc-online",
        100_000,
        &format!(
            "policy = \"lfoc-online\"\n{extra}\n\n[lfoc-online]\nwarmup-windows = 2\n\
             window-instructions = 40_000\nperiod-instructions = 100_000\n\
             repartition-cycles = 1_000_000\n"
        ),
    )
}

fn run() -> SimReport {
    run_scenario(&scenario("").unwrap(), None).unwrap()
}

/// (app, class) of every classification, in order.
fn classes(r: &SimReport) -> Vec<(usize, AppClass)> {
    r.lfoc_online
        .as_ref()
        .unwrap()
        .iter()
        .filter_map(|d| match &d.what {
            DecisionKind::Classified { class, .. } => Some((d.app.unwrap(), *class)),
            _ => None,
        })
        .collect()
}

#[test]
fn apps_are_sampled_and_classified_on_the_simulator() {
    let r = run();
    let got = classes(&r);
    eprintln!("{got:?}");
    for d in r.lfoc_online.as_ref().unwrap() {
        eprintln!("{} {:?} {:?}", d.interval, d.app, d.what);
    }
    // the streaming app's trace sweeps more than the 4 MiB cache on every
    // pass, so it stays streaming
    assert!(got.contains(&(0, AppClass::Sensitive)), "{got:?}");
    assert!(
        got.iter()
            .filter(|g| g.0 == 1)
            .all(|g| g.1 == AppClass::Streaming),
        "{got:?}"
    );
    assert!(got.contains(&(1, AppClass::Streaming)), "{got:?}");
    let log = r.lfoc_online.as_ref().unwrap();
    // the sensitive app was sampled at several sizes, the streaming one
    // stopped early
    let sizes = |app: usize| {
        log.iter()
            .filter(|d| d.app == Some(app) && matches!(d.what, DecisionKind::Sampling { .. }))
            .count()
    };
    assert!(sizes(0) > sizes(1), "{} vs {}", sizes(0), sizes(1));
    // and LFOC's clustering ran on what was measured
    assert!(log
        .iter()
        .any(|d| matches!(d.what, DecisionKind::Replan { .. })));
}

#[test]
fn the_same_scenario_gives_the_same_decisions() {
    let (a, b) = (run(), run());
    assert_eq!(a.lfoc_online, b.lfoc_online);
    assert_eq!(a.samples.len(), b.samples.len());
}

#[test]
fn online_lfoc_settings_are_checked_before_the_run() {
    let short = scenario("").map(|mut s| {
        s.file.lfoc_online.as_mut().unwrap().repartition_cycles = Some(10);
        s
    });
    let e = run_scenario(&short.unwrap(), None).unwrap_err().to_string();
    assert!(e.contains("repartition_cycles"), "{e}");
    // an unknown key in [lfoc-online] is refused, naming it
    let text = "platform = \"xeon-5160\"\npolicy = \"lfoc-online\"\n[lfoc-online]\nwindow = 1\n[[app]]\nname = \"a\"\ntrace = \"a.cpt\"\n";
    let e = toml::from_str::<ScenarioFile>(text)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("window") && e.contains("window-instructions"),
        "{e}"
    );
    // [lfoc-online] with another policy is refused, naming the section
    let other = scenario("").map(|s| s.file).map(|mut f| {
        f.policy = Some("lfoc".into());
        f
    });
    let e = Scenario::from_file(other.unwrap(), "x".into(), None, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("lfoc-online"), "{e}");
}

/// KPart-Dynaway on the same mix: a full sweep of each app, then KPart's
/// plan, deterministic.
#[test]
fn kpart_dynaway_sweeps_each_app_then_plans() {
    let text = scenario("").unwrap().file;
    let mut file = text.clone();
    file.policy = Some("kpart-dynaway".into());
    file.lfoc_online = None;
    file.kpart_dynaway = Some(cachepart::run::online::KpartDynawayFile {
        window_instructions: Some(40_000.0),
        reprofile_cycles: None,
    });
    let s = Scenario::from_file(file, "dynaway".into(), None, None).unwrap();
    let a = run_scenario(&s, None).unwrap();
    let b = run_scenario(&s, None).unwrap();
    let log = a.kpart_dynaway.as_ref().unwrap();
    assert_eq!(a.kpart_dynaway, b.kpart_dynaway);
    use cachepart_policy::kpart_dynaway::DynawayKind;
    let steps: Vec<(usize, u32)> = log
        .iter()
        .filter_map(|d| match d.what {
            DynawayKind::Profile { app, ways } => Some((app, ways)),
            _ => None,
        })
        .collect();
    // app 0 swept from 15 ways (of the 16-way cache) down to 1, then app 1
    // from 15 down until it finished its instructions; then KPart planned
    let app0: Vec<(usize, u32)> = (1..=15).rev().map(|w| (0, w)).collect();
    assert_eq!(steps[..15], app0[..], "{log:?}");
    assert!(
        steps[15..]
            .iter()
            .zip((1..=15).rev())
            .all(|(s, w)| *s == (1, w)),
        "{log:?}"
    );
    assert!(
        matches!(log.last().unwrap().what, DynawayKind::Plan { .. }),
        "{log:?}"
    );
}

/// Dynamic Dunn on the same mix: the streaming app stalls on L2 misses far
/// more than the sensitive one, so they land in different clusters.
#[test]
fn dunn_dynamic_replans_from_measured_stalls() {
    let mut file = scenario("").unwrap().file;
    file.policy = Some("dunn-dynamic".into());
    file.lfoc_online = None;
    file.dunn_dynamic = Some(cachepart::run::online::DunnDynamicFile {
        period_cycles: Some(1_000_000),
        max_clusters: None,
    });
    let s = Scenario::from_file(file, "dunn".into(), None, None).unwrap();
    let r = run_scenario(&s, None).unwrap();
    let log = r.dunn_dynamic.as_ref().unwrap();
    assert!(!log.is_empty());
    let first = &log[0];
    assert_eq!(first.stalls.len(), 2);
    assert!(
        first.stalls.iter().all(|&x| (0.0..=1.0).contains(&x)),
        "{first:?}"
    );
    assert_eq!(first.plan.split(';').count(), 2, "{first:?}");
}
