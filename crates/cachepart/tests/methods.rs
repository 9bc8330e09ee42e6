//! The run methodologies on the simulator, end to end: LFOC's restarts and
//! COLORIS's fixed time, their stopping rules, slowdowns and checks.

use cachepart::registry::method::RunMethod;
use cachepart::run::sim::{run_scenario, SimReport};
use cachepart::spec::scenario::{Scenario, ScenarioFile};

/// The tiny scenario's two apps (a cache-sensitive one and a streaming
/// one on the dual-core Xeon 5160) with short traces of different
/// lengths, so that their runs take different times.
fn scenario(method: &str) -> Result<Scenario, cachepart::Error> {
    let text = format!(
        r#"
platform = "xeon-5160"
seed = 7
interval-cycles = 100_000
{method}

[[app]]
name = "sensitive"
synth = {{ seed = 1, accesses = 30_000, pattern = {{ class = "cache-sensitive", working-set-bytes = 2_097_152 }} }}
base-cpi = 0.8

[[app]]
name = "streaming"
synth = {{ seed = 2, accesses = 50_000, pattern = {{ class = "streaming", array-bytes = 67_108_864 }} }}
mlp = 4.0
"#
    );
    let file: ScenarioFile = toml::from_str(&text).expect("valid TOML");
    Scenario::from_file(file, "methods".into(), None, None)
}

fn run(method: &str) -> SimReport {
    run_scenario(&scenario(method).unwrap(), None).unwrap()
}

#[test]
fn restart_runs_until_the_slowest_app_completed_n_runs() {
    let r = run("[method]\nkind = \"restart\"\ncompletions = 2\n");
    assert_eq!(r.method, RunMethod::Restart { completions: 2 });
    let runs: Vec<&Vec<u64>> = r.apps.iter().map(|a| a.runs.as_ref().unwrap()).collect();
    // Every app completed at least 2 runs, and the one that ended the run
    // exactly 2 (the run stops at the end of the interval in which the
    // slowest app completed its second run).
    assert!(runs.iter().all(|r| r.len() >= 2), "{runs:?}");
    assert!(runs.iter().any(|r| r.len() == 2), "{runs:?}");
    for (a, app) in r.apps.iter().enumerate() {
        // Completed runs fit in the simulated time.
        let total: u64 = runs[a].iter().sum();
        assert!(
            total <= r.simulated_cycles,
            "{total} > {}",
            r.simulated_cycles
        );
        assert!(runs[a].iter().all(|&c| c > 0));
        // The slowdown is the geometric mean of the runs over one run alone.
        let logs: f64 = runs[a].iter().map(|&c| (c as f64).ln()).sum();
        let gmean = (logs / runs[a].len() as f64).exp();
        let alone = app.run_cycles_alone.unwrap();
        let s = app.slowdown.unwrap();
        assert!(
            (s - gmean / alone).abs() < 1e-9 * s,
            "{s} vs {gmean}/{alone}"
        );
        // The app replayed its trace: it retired more than one pass.
        assert!(app.totals.restarts >= 2, "{}", app.totals.restarts);
    }
    // The streaming co-runner slows the cache-sensitive app down.
    assert!(
        r.apps[0].slowdown.unwrap() > 1.0,
        "{:?}",
        r.apps[0].slowdown
    );
    assert!(r.apps.iter().all(|a| a.run_cycles_alone.unwrap() > 0.0));
}

#[test]
fn fixed_time_co_runs_every_app_to_the_end() {
    // Twice as long as the default method's run, which ends when the
    // longer trace has been run once.
    let once = run("");
    let cycles = 2 * once.simulated_cycles;
    let r = run(&format!(
        "method = {{ kind = \"fixed-time\", cycles = {cycles} }}"
    ));
    assert_eq!(r.simulated_cycles, cycles);
    assert_eq!(r.intervals, cycles / 100_000);
    // Both apps (one per core) ran in every interval: nobody finished early.
    for iv in 0..r.intervals {
        let ran: Vec<bool> = r
            .samples
            .iter()
            .filter(|s| s.interval == iv)
            .map(|s| s.sample.ran)
            .collect();
        assert_eq!(ran, vec![true, true], "interval {iv}");
    }
    for (app, first) in r.apps.iter().zip(&once.apps) {
        assert!(app.runs.is_none());
        // Replayed: more instructions than one pass.
        assert!(app.totals.instructions > first.totals.instructions);
        let ia = app.ipc_alone.unwrap();
        let s = app.slowdown.unwrap();
        assert!((s - ia / app.totals.ipc).abs() < 1e-12 * s);
    }
}

#[test]
fn the_same_scenario_gives_the_same_report() {
    let m = "[method]\nkind = \"restart\"\n";
    let a = serde_json::to_string(&run(m)).unwrap();
    let b = serde_json::to_string(&run(m)).unwrap();
    assert_eq!(a, b);
    assert!(
        a.contains("\"method\":{\"kind\":\"restart\",\"completions\":3}"),
        "{a}"
    );
    // The default method is left out of reports, as before methods existed.
    assert!(!serde_json::to_string(&run(""))
        .unwrap()
        .contains("\"method\""));
}

#[test]
fn bad_methods_fail_before_running_with_the_field_named() {
    let cases = [
        (
            "[method]\nkind = \"restart\"\ncompletions = 0\n",
            "method.completions",
        ),
        (
            "method = { kind = \"fixed-time\", cycles = 150_000 }",
            "method.cycles",
        ),
        (
            "method = { kind = \"fixed-time\", cycles = 0 }",
            "method.cycles",
        ),
        (
            "instructions = 1000\n[method]\nkind = \"restart\"\n",
            "instructions",
        ),
        ("restart = false\n[method]\nkind = \"restart\"\n", "restart"),
    ];
    for (m, field) in cases {
        let e = scenario(m)
            .err()
            .unwrap_or_else(|| panic!("{m} was accepted"));
        assert!(e.to_string().contains(field), "{m}: {e}");
    }
    // A per-app limit is named with its app.
    let file: ScenarioFile = toml::from_str(
        "platform = \"xeon-5160\"\n[method]\nkind = \"restart\"\n[[app]]\nname = \"x\"\ninstructions = 5\nsynth = { seed = 1, accesses = 10, pattern = { class = \"streaming\", array-bytes = 4096 } }\n",
    )
    .unwrap();
    let e = Scenario::from_file(file, "m".into(), None, None)
        .err()
        .unwrap();
    assert!(e.to_string().contains("app[0] (x).instructions"), "{e}");
}
