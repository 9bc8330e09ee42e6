//! UCP on utility monitors, end to end on the simulator: a scenario with
//! `policy = "ucp-online"` turns on each app's UMON, and the lookahead
//! partitions by what the monitors counted, with no alone curves.

mod common;

use cachepart::run::sim::{run_scenario, SimReport};
use cachepart::spec::scenario::{Scenario, ScenarioFile};

fn scenario(section: &str) -> Result<Scenario, cachepart::Error> {
    common::sensitive_and_streaming(
        "ucp-online",
        200_000,
        &format!("policy = \"ucp-online\"\n{section}"),
    )
}

fn run(section: &str) -> SimReport {
    run_scenario(&scenario(section).unwrap(), None).unwrap()
}

#[test]
fn the_cache_sensitive_app_gets_the_ways_the_monitors_say_it_uses() {
    let r = run("[ucp-online]\nperiod-cycles = 1_000_000\nsampled-sets = 64");
    let d = r.ucp_online.as_ref().unwrap();
    assert!(!d.is_empty(), "no re-partition");
    // The 2 MiB working set needs most of the 4 MiB 16-way LLC; the
    // stream reuses nothing, so UMON counts it no hit beyond position 0.
    let last = d.last().unwrap();
    assert!(last.ways[0] >= 12, "{d:?}");
    assert_eq!(last.ways.iter().sum::<u32>(), 16);
    // the samples carry the monitors' counts: 16 positions, and the
    // stream's references are almost all misses
    let s = r
        .samples
        .iter()
        .rev()
        .find(|s| s.app == 1 && s.sample.ran)
        .unwrap();
    assert_eq!(s.sample.umon_hits.len(), 16);
    let hits: f64 = s.sample.umon_hits.iter().sum();
    assert!(s.sample.umon_misses > 10.0 * hits, "{:?}", s.sample);
}

#[test]
fn the_same_scenario_gives_the_same_decisions() {
    let a = run("");
    let b = run("");
    assert_eq!(a.ucp_online, b.ucp_online);
    assert_eq!(
        serde_json::to_string(&a.apps).unwrap(),
        serde_json::to_string(&b.apps).unwrap()
    );
}

#[test]
fn the_section_is_checked() {
    let s = scenario("[ucp-online]\nperiod-cycles = 0").unwrap();
    let e = run_scenario(&s, None).unwrap_err().to_string();
    assert!(
        e.contains("ucp-online") && e.contains("period_cycles"),
        "{e}"
    );
    let text = "platform = \"xeon-5160\"\n[ucp-online]\nwindow = 3\n";
    let e = toml::from_str::<ScenarioFile>(text)
        .unwrap_err()
        .to_string();
    assert!(e.contains("window"), "{e}");
}
