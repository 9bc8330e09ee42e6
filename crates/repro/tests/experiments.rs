//! Experiment files: every shipped one parses and checks; a tiny
//! experiment runs end to end (CSV, PNG, write-up) deterministically; bad
//! files fail before anything runs, naming the field.

use std::path::{Path, PathBuf};

use cachepart_repro::file::Experiment;
use cachepart_repro::{output_files, run_experiment, runner};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cachepart-exp-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn shipped_experiment_files_parse_and_check() {
    let dir = repo().join("experiments");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let exp = Experiment::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert!(!exp.file.claim.is_empty(), "{}: no claims", p.display());
            n += 1;
        }
    }
    assert!(n >= 4, "only {n} experiment files");
}

const TINY: &str = r#"
title = "tiny"
paper = "a test"
notes = "none"
[scenario]
platform = "power5"
allocator = "tam"
interval-cycles = 100_000
instructions = 60_000
alone = false
[program.hot]
synth = { seed = 1, accesses = 20_000, pattern = { class = "cache-sensitive", working-set-bytes = 524288 } }
[program.stream]
synth = { seed = 2, accesses = 20_000, pattern = { class = "streaming", array-bytes = 16777216 } }
[design]
kind = "color-sweep"
programs = ["hot", "stream"]
colors = [1, 16]
[[claim]]
what = "hot: 1 color / 16"
paper = "slower"
metric = "range:hot"
[[claim]]
what = "knee of stream"
paper = "-"
metric = "knee:stream"
"#;

#[test]
fn a_tiny_experiment_runs_end_to_end_deterministically() {
    let d = tmp("tiny");
    let p = d.join("tiny.toml");
    std::fs::write(&p, TINY).unwrap();
    let a = run_experiment(&p, None).unwrap();
    let b = run_experiment(&p, None).unwrap();
    assert_eq!(a.results.len(), 4);
    assert_eq!(a.analysis.table.to_csv(), b.analysis.table.to_csv());
    // One color cannot hold 512 KiB: the hot program is slower with it.
    let range = a.analysis.metrics["range:hot"];
    assert!(range > 1.05, "range {range}");
    let out = d.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let files = output_files(&a);
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["tiny.csv", "tiny.png", "tiny.md"]);
    for f in &files {
        f.write_to(&out.join(&f.name)).unwrap();
    }
    let md = std::fs::read_to_string(out.join("tiny.md")).unwrap();
    assert!(md.contains("| hot: 1 color / 16 | slower |"), "{md}");
    assert!(md.contains("| knee of stream | - | "), "{md}");
    assert!(!md.contains("n/a"), "{md}");
    assert!(md.contains("![tiny](tiny.png)"));
    let png = std::fs::read(out.join("tiny.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let csv = std::fs::read_to_string(out.join("tiny.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5);
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn bad_files_fail_before_running_and_name_the_field() {
    let d = tmp("bad");
    let cases = [
        (
            TINY.replace(
                "programs = [\"hot\", \"stream\"]",
                "programs = [\"hot\", \"cold\"]",
            ),
            "design.programs[1]",
        ),
        (
            TINY.replace("colors = [1, 16]", "colors = [16, 1]"),
            "design.colors[1]",
        ),
        (
            TINY.replace("colors = [1, 16]", "colors = [1, 17]"),
            "colors",
        ),
        (
            TINY.replace("kind = \"color-sweep\"", "kind = \"sweep\""),
            "sweep",
        ),
        (
            TINY.replace("alone = false", "alone = false\nbogus = 1"),
            "bogus",
        ),
        (
            TINY.replace(
                "metric = \"knee:stream\"",
                "metric = \"knee:stream\"\nformat = \"pct\"",
            ),
            "claim[1].format",
        ),
        (
            // An unknown metric was printed as n/a after the runs; now it
            // is refused at load.
            TINY.replace("metric = \"knee:stream\"", "metric = \"nope\""),
            "claim[1].metric",
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let p = d.join(format!("bad{i}.toml"));
        std::fs::write(&p, text).unwrap();
        let e = Experiment::load(&p).and_then(|e| runner::scenarios(&e).map(|_| ()));
        let msg = e.unwrap_err().to_string();
        assert!(msg.contains(want), "case {i}: {msg}");
        assert!(msg.contains(&format!("bad{i}.toml")), "case {i}: {msg}");
    }
    std::fs::remove_dir_all(&d).ok();
}
