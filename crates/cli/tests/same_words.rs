//! Options the facade checks for both front ends (`cachepart::spec::options`,
//! `RunOptions::check`) are refused by the CLI with the exact words
//! Python's `UsageError` carries; `python/tests/test_profile.py`
//! (`test_option_refusals_use_the_clis_words`) asserts the same texts.

mod support;

use support::{cachepart, three_program_metrics};

/// The whole `error: ...` line of a refused command, and that it wrote nothing.
fn refusal(dir: &std::path::Path, args: &[&str]) -> String {
    let o = cachepart(dir, args);
    assert!(!o.status.success(), "{args:?} was accepted");
    assert_eq!(o.status.code(), Some(1), "{args:?}");
    assert!(!dir.join("out.csv").exists(), "{args:?} wrote its output");
    String::from_utf8(o.stderr).unwrap().trim_end().to_string()
}

#[test]
fn one_name_per_trace() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "profile",
        "from-trace",
        "a.cpt",
        "b.cpt",
        "--platform",
        "xeon-5160",
        "--name",
        "x",
        "-o",
        "out.csv",
    ];
    assert_eq!(
        refusal(dir.path(), &args),
        "error: name: 1 names for 2 traces: give one per trace, or none"
    );
}

#[test]
fn a_metrics_file_needs_mixes() {
    let dir = tempfile::tempdir().unwrap();
    three_program_metrics(&dir.path().join("m.csv"));
    let args = ["profile", "eval", "-m", "m.csv", "-o", "out.csv"];
    assert_eq!(
        refusal(dir.path(), &args),
        "error: metrics: a metrics file was given without workloads or mixes: say which mixes to run"
    );
}

#[test]
fn a_negative_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "profile",
        "eval",
        "-a",
        "optc-unf",
        "--time-limit=-1",
        "-o",
        "out.csv",
    ];
    assert_eq!(
        refusal(dir.path(), &args),
        "error: time-limit -1.0: expected a positive number of seconds, at most 31536000 (one year)"
    );
}
