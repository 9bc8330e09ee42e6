//! `throttle-online` on the simulator, end to end: on the example pair it
//! ends far fairer than the default run and close to the fairest duty
//! cycles the offline search finds; two identical apps are never
//! throttled; the same scenario gives the same output; bad sections and
//! platforms it cannot throttle are refused, naming the field; the
//! table-driven model refuses it.

use std::path::{Path, PathBuf};

use cachepart::machine::AppCurves;
use cachepart::output::sim::to_json;
use cachepart::profile::Mix;
use cachepart::run::sim::{run_scenario, SimReport};
use cachepart::run::throttle::search::{search, SearchOptions};
use cachepart::spec::scenario::{Scenario, ScenarioFile};
use cachepart::{run_one, Algorithm, RunOptions};
use cachepart_policy::ThrottleMove;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios/pair-throttle-online.toml")
}

/// The example's file with `edit` applied.
fn example_with(edit: impl FnOnce(&mut ScenarioFile)) -> Result<Scenario, cachepart::Error> {
    let text = std::fs::read_to_string(example()).unwrap();
    let mut file: ScenarioFile = toml::from_str(&text).unwrap();
    edit(&mut file);
    Scenario::from_file(file, "pair-throttle-online".into(), None, None)
}

fn uf(r: &SimReport) -> f64 {
    r.metrics.unwrap().unfairness_factor
}

#[test]
fn the_example_ends_near_the_fairest_duty_cycles() {
    let online = run_scenario(&Scenario::load(&example()).unwrap(), None).unwrap();
    let plain = example_with(|f| {
        f.policy = None;
        f.throttle_online = None;
    })
    .unwrap();
    let default = run_scenario(&plain, None).unwrap();
    let offline = search(&plain, &SearchOptions::default()).unwrap();
    let (on, def, best) = (
        uf(&online),
        uf(&default),
        offline.best_duty.unfairness_factor,
    );
    eprintln!("online {on:.4}, default {def:.4}, best duty-only {best:.4}");
    // The default is very unfair (mcf-like 18x slower, swim-like 1.02x);
    // online throttling cuts the factor to a fifth of it, within 0.1 of
    // the fairest duty setting of the whole run (2/8 of the stream from
    // the start, which the controller reaches after a few decisions).
    assert!(def > 0.85, "default {def}");
    assert!(on < def * 0.25, "online {on} vs default {def}");
    assert!(on < best + 0.1, "online {on} vs best duty-only {best}");
    // It throttled only the stream, one step at a time, down to the floor.
    let log = online.throttle_online.as_ref().unwrap();
    assert!(
        log.iter()
            .all(|d| d.app == 1 && d.action == ThrottleMove::DutyDown),
        "{log:?}"
    );
    assert_eq!(log.last().unwrap().duty.to_string(), "1/8");
    assert_eq!(offline.best_duty.duty[1].to_string(), "1/8");
    // The search sets duty cycles itself: it refuses the online policy.
    let e = search(
        &Scenario::load(&example()).unwrap(),
        &SearchOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("policy: the search sets duty cycles"), "{e}");
}

#[test]
fn the_hybrid_mode_turns_the_stream_s_prefetchers_off() {
    let hybrid = example_with(|f| {
        f.throttle_online.as_mut().unwrap().prefetchers = Some(true);
    })
    .unwrap();
    let r = run_scenario(&hybrid, None).unwrap();
    let log = r.throttle_online.as_ref().unwrap();
    // First the duty cycles, then a prefetcher trial judged at the next
    // decision.
    let first_trial = log
        .iter()
        .position(|d| d.action == ThrottleMove::PrefetcherOff)
        .unwrap();
    assert!(log[..first_trial]
        .iter()
        .all(|d| d.action == ThrottleMove::DutyDown));
    assert!(matches!(
        log[first_trial + 1].action,
        ThrottleMove::Keep | ThrottleMove::Revert
    ));
    assert_eq!(log[first_trial].app, 1);
    assert_eq!(log[first_trial].prefetchers, Some(0x5));
    // Kept prefetchers off make the stream the slowest: it gets its duty
    // cycle back, then a prefetcher.
    assert!(
        log.iter().any(|d| d.action == ThrottleMove::PrefetcherOn),
        "{log:?}"
    );
    // Fairer than the duty-only controller's 0.182, as efficient.
    let m = r.metrics.unwrap();
    assert!(m.unfairness_factor < 0.07, "{m:?}");
    assert!(m.gmean_speedup > 0.28, "{m:?}");
}

#[test]
fn two_identical_apps_are_never_throttled() {
    let s = example_with(|f| {
        let twin = f.apps[0].clone();
        f.apps[1] = twin;
        f.apps[1].name = "mcf-twin".into();
    })
    .unwrap();
    let r = run_scenario(&s, None).unwrap();
    assert_eq!(r.throttle_online.as_deref(), Some(&[][..]));
    assert!(uf(&r) < 0.05, "{}", uf(&r));
}

#[test]
fn the_same_scenario_gives_the_same_output() {
    let s = Scenario::load(&example()).unwrap();
    let a = to_json(&run_scenario(&s, None).unwrap());
    let b = to_json(&run_scenario(&s, None).unwrap());
    assert_eq!(a, b);
    assert!(a.contains("\"throttle_online\""));
}

#[test]
fn bad_sections_and_platforms_are_refused_naming_the_field() {
    let refused = |edit: &str, want: &str| {
        let text = std::fs::read_to_string(example()).unwrap();
        let text = text
            .replace("decision-intervals = 1\n", "")
            .replace("target = 0.05", edit);
        let e = match toml::from_str::<ScenarioFile>(&text) {
            Err(e) => e.to_string(),
            Ok(file) => match Scenario::from_file(file, "bad".into(), None, None) {
                Ok(_) => panic!("{edit}: accepted"),
                Err(e) => e.to_string(),
            },
        };
        assert!(e.contains(want), "{edit}: {e:?} lacks {want:?}");
    };
    refused("target = 0.05\nwindow = 3", "unknown field `window`");
    refused(
        "target = 0.0",
        "throttle-online.target: 0: an unfairness factor above 0",
    );
    refused("target = -1.0", "throttle-online.target: -1");
    refused(
        "target = 0.05\ndecision-intervals = 0",
        "throttle-online.decision-intervals: 0",
    );
    refused(
        "target = 0.05\nmin-duty = \"3/16\"",
        "throttle-online.min-duty: 3/16: a duty cycle the platform has: it modulates in 8 steps",
    );
    refused(
        "target = 0.05\nmin-duty = \"0/8\"",
        "the duty cycle must be 1/8 to 8/8",
    );
    // The hybrid mode needs the run's prefetchers.
    let e = example_with(|f| {
        f.prefetchers = None;
        f.throttle_online.as_mut().unwrap().prefetchers = Some(true);
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("throttle-online.prefetchers: the hybrid mode"),
        "{e}"
    );
    // A platform without clock modulation.
    let e = example_with(|f| f.platform = "xeon-e5506".into())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("policy: throttle-online: platform xeon-e5506 has no duty-cycle modulation"),
        "{e}"
    );
    // An app's own duty cycle.
    let e = example_with(|f| f.apps[1].duty = Some("4/8".parse().unwrap()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("app[1] (swim-like).duty: throttle-online sets"),
        "{e}"
    );
    // The section under another policy.
    let e = example_with(|f| f.policy = Some("stock".into()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("throttle-online: is for policy = \"throttle-online\""),
        "{e}"
    );
}

#[test]
fn the_table_driven_model_refuses_it() {
    let app =
        |name: &str| AppCurves::new(name, vec![1.0; 4], vec![1.0; 4], vec![1.0; 4], vec![1.0; 4]);
    let mix = Mix::from_curves(vec![app("a"), app("b")]).unwrap();
    let e = run_one("w", &mix, Algorithm::ThrottleOnline, &RunOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("throttle-online measures the apps as they run") && e.contains("table-driven"),
        "{e}"
    );
}
