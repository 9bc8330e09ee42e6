//! End-to-end tests of `cachepart sim run` and `cachepart platform`.

use std::path::PathBuf;
use std::process::{Command, Output};

fn cachepart(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(args)
        .output()
        .expect("run cachepart")
}

fn repo(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
        .display()
        .to_string()
}

/// A scratch directory, removed when the returned guard drops.
fn tmpdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("cachepart-sim-{name}-"))
        .tempdir()
        .expect("create a scratch directory")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn tiny_scenario_runs_and_is_deterministic() {
    let dir = tmpdir("tiny");
    let d = dir.path();
    let scen = repo("examples/scenarios/tiny.toml");
    let mut outs = Vec::new();
    for i in 0..2 {
        let csv = d.join(format!("s{i}.csv"));
        let pq = d.join(format!("s{i}.parquet"));
        let o = cachepart(&[
            "sim",
            "run",
            &scen,
            "--format",
            "json",
            "--samples",
            csv.to_str().unwrap(),
        ]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        let o2 = cachepart(&["sim", "run", &scen, "-q", "--samples", pq.to_str().unwrap()]);
        assert!(o2.status.success(), "{}", text(&o2).1);
        outs.push((
            out,
            std::fs::read(&csv).unwrap(),
            std::fs::read(&pq).unwrap(),
        ));
    }
    assert_eq!(outs[0], outs[1], "same scenario and seed, different output");
    let v: serde_json::Value = serde_json::from_str(&outs[0].0).unwrap();
    let apps = v["apps"].as_array().unwrap();
    assert_eq!(apps.len(), 2);
    for a in apps {
        assert!(a["totals"]["instructions"].as_u64().unwrap() >= 400_000);
        let s = a["slowdown"].as_f64().unwrap();
        assert!(s > 0.9 && s < 3.0, "slowdown {s}");
    }
    let stp = v["metrics"]["stp"].as_f64().unwrap();
    assert!(stp > 0.5 && stp <= 2.1, "{stp}");
    let csv = String::from_utf8(outs[0].1.clone()).unwrap();
    assert!(csv.starts_with("interval,end_cycles,app,name,instructions"));
    // Samples add up to the totals.
    let instr: f64 = csv
        .lines()
        .skip(1)
        .filter(|l| l.split(',').nth(2) == Some("0"))
        .map(|l| l.split(',').nth(4).unwrap().parse::<f64>().unwrap())
        .sum();
    assert_eq!(
        instr as u64,
        apps[0]["totals"]["instructions"].as_u64().unwrap()
    );
    assert_eq!(&outs[0].2[..4], b"PAR1");
    // Another seed changes the allocator's aging, so physical pages and
    // results differ.
    let o = cachepart(&["sim", "run", &scen, "--seed", "8", "--format", "json", "-q"]);
    assert!(o.status.success());
    assert_ne!(text(&o).0, outs[0].0);
}

#[test]
fn a_policy_sets_the_masks() {
    let scen = repo("examples/scenarios/tiny.toml");
    let o = cachepart(&[
        "sim",
        "run",
        &scen,
        "--policy",
        "equal-part",
        "--format",
        "csv",
        "-q",
        "--no-alone",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    // 16 ways split in two: 0xff and 0xff00 (in some order).
    assert!(out.contains(",0xff,") && out.contains(",0xff00,"), "{out}");
}

#[test]
fn bad_scenarios_fail_before_running_and_leave_nothing() {
    let dir = tmpdir("bad");
    let d = dir.path();
    let s = d.join("s.toml");
    std::fs::write(
        &s,
        "platform = \"xeon-5160\"\n[[app]]\nname = \"a\"\nsynth = { seed = 1, accesses = 10, pattern = { class = \"light\" } }\ncore = 2\n",
    )
    .unwrap();
    let out = d.join("out.csv");
    let o = cachepart(&[
        "sim",
        "run",
        s.to_str().unwrap(),
        "--samples",
        out.to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("s.toml") && err.contains("app[0] (a).core"),
        "{err}"
    );
    assert!(!out.exists());
    let o = cachepart(&["sim", "run", s.to_str().unwrap(), "--samples", "x.txt"]);
    assert!(text(&o).1.contains(".parquet"), "{}", text(&o).1);
}

#[test]
fn platform_colors_prints_the_layout() {
    let o = cachepart(&["platform", "colors", "xeon-e5506", "--colors", "0-15"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("64 colors"), "{out}");
    assert!(out.contains("colors 0-15: 16 of 64 (1 MiB of LLC"), "{out}");
    let o = cachepart(&["platform", "colors", "power5"]);
    assert!(text(&o).0.contains("16 colors"));
    let o = cachepart(&["platform", "colors", "xeon-e5506", "--colors", "60-70"]);
    assert!(!o.status.success());
    assert!(text(&o).1.contains("64"), "{}", text(&o).1);
    let o = cachepart(&["platform", "list"]);
    assert_eq!(
        text(&o).0.lines().count(),
        cachepart::spec::platforms::BUILTIN.len()
    );
}

/// `--set KEY=VALUE` changes a scenario key as if the file had it: the
/// result equals a copy of the file with that key edited; a key the
/// schema does not know is refused with the key and nothing is written.
#[test]
fn set_changes_a_key_as_the_file_would() {
    let dir = tmpdir("set");
    let d = dir.path();
    let scen = repo("examples/scenarios/tiny.toml");
    let run = |args: &[&str]| {
        let mut all = vec!["sim", "run", "--format", "json", "--no-alone", "-q"];
        all.extend_from_slice(args);
        let o = cachepart(&all);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{args:?}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v
    };
    // The same edit made in a copy of the file (base-cpi of the first app,
    // the platform), with the copy beside the original so that relative
    // paths stay the same.
    let text_of = std::fs::read_to_string(&scen).unwrap();
    let edited = text_of
        .replace("base-cpi = 0.8", "base-cpi = 1.6")
        .replace("platform = \"xeon-5160\"", "platform = \"xeon-e5506\"");
    assert_ne!(edited, text_of);
    let copy = d.join("tiny-edited.toml");
    std::fs::write(&copy, edited).unwrap();
    let by_file = run(&[copy.to_str().unwrap()]);
    let by_set = run(&[
        &scen,
        "--set",
        "app.0.base-cpi=1.6",
        "--set",
        "platform=xeon-e5506",
    ]);
    let plain = run(&[&scen]);
    let apps = |v: &serde_json::Value| v["apps"].to_string();
    assert_eq!(apps(&by_set), apps(&by_file));
    assert_ne!(apps(&by_set), apps(&plain));
    assert_eq!(by_set["platform"], by_file["platform"]);

    for (set, words) in [
        ("colour=1", "unknown field `colour`"),
        ("app.5.mlp=2", "app.5: index 5, but the array has 2 items"),
        ("seed", "expected KEY=VALUE"),
        // not read as the key's default (mlp 1, no limit) nor as "null"
        ("app.1.mlp=nan", "app.1.mlp: nan is not a finite number"),
        (
            "instructions=inf",
            "instructions: inf is not a finite number",
        ),
        (
            "interval-cycles=-inf",
            "interval-cycles: -inf is not a finite number",
        ),
    ] {
        let out = d.join("out.json");
        let o = cachepart(&[
            "sim",
            "run",
            &scen,
            "--set",
            set,
            "-o",
            out.to_str().unwrap(),
        ]);
        let (_, err) = text(&o);
        assert!(!o.status.success(), "{set}");
        assert!(err.contains(words), "{set}: {err}");
        assert!(!out.exists(), "{set}: an output was left");
    }
}
