//! Hardware prefetchers from a scenario: off unless asked, the platform's
//! default word or a given one, counted in the report; bad words refused
//! before the run, naming the key.

use cachepart::run::sim::{run_scenario, SimReport};
use cachepart::spec::scenario::{Scenario, ScenarioFile};

fn scenario(platform: &str, key: &str) -> Result<Scenario, cachepart::Error> {
    let text = format!(
        r#"
platform = "{platform}"
seed = 3
interval-cycles = 200_000
instructions = 2_000_000
alone = false
{key}

[[app]]
name = "streaming"
synth = {{ seed = 2, accesses = 1_500_000, pattern = {{ class = "streaming", array-bytes = 67_108_864 }} }}
mlp = 4.0
"#
    );
    let file: ScenarioFile = toml::from_str(&text).expect("valid TOML");
    Scenario::from_file(file, "prefetch".into(), None, None)
}

fn run(key: &str) -> SimReport {
    run_scenario(&scenario("xeon-5160", key).unwrap(), None).unwrap()
}

#[test]
fn the_platforms_prefetchers_cut_a_streams_llc_misses() {
    let off = run("");
    let on = run("prefetchers = \"platform\"");
    assert!(off.prefetch.is_none());
    let (m_off, m_on) = (off.apps[0].totals.llc_misses, on.apps[0].totals.llc_misses);
    assert!(m_on * 4 < m_off, "LLC misses {m_off} -> {m_on}");
    assert!(on.apps[0].totals.ipc > off.apps[0].totals.ipc);
    let counts = on.prefetch.as_ref().unwrap()[0].counts;
    // xeon-5160's default word 0x4: the DCU next-line prefetcher is off
    assert_eq!(counts.issued[2], 0, "{counts:?}");
    assert!(counts.issued[0] > 0, "{counts:?}");
    // every bit set: prefetchers installed but off, the same run as none
    let all_off = run("prefetchers = \"0xf\"");
    assert_eq!(all_off.apps[0].totals, off.apps[0].totals);
}

#[test]
fn bad_words_and_platforms_without_prefetchers_are_refused() {
    for (platform, key, want) in [
        ("xeon-5160", "prefetchers = \"0x10\"", "reserved bits"),
        ("xeon-5160", "prefetchers = \"on\"", "expected \"off\""),
        (
            "power5",
            "prefetchers = \"platform\"",
            "declares no prefetchers",
        ),
    ] {
        let e = scenario(platform, key).unwrap_err().to_string();
        assert!(e.contains("prefetchers") && e.contains(want), "{key}: {e}");
    }
}
