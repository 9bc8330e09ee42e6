//! One JSON style across commands (the hardening issue): every
//! `--format json` output is records with snake_case keys, and every way
//! mask in it is a `0x...` hex string. Each command runs on a small input;
//! the whole document is walked.

mod support;

use serde_json::Value;
use std::path::Path;
use support::{cachepart, gen_trace, three_program_metrics};

/// The rule breaks in `v`, each with its JSON path.
fn breaks(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{path}.{k}");
                let snake = !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
                if !snake {
                    out.push(format!("{p}: key not snake_case"));
                }
                let is_mask = k == "mask" || k.ends_with("_mask");
                if is_mask && !x.as_str().is_some_and(|s| s.starts_with("0x")) {
                    out.push(format!("{p}: mask {x} is not a 0x hex string"));
                }
                breaks(x, &p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                breaks(x, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Runs `args` in `dir`, parses its standard output as JSON (one document,
/// or one per line) and returns the documents.
fn json_of(dir: &Path, args: &[&str]) -> Vec<Value> {
    let o = cachepart(dir, args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{args:?}: {err}");
    let text = String::from_utf8(o.stdout).unwrap();
    match serde_json::from_str(&text) {
        Ok(v) => vec![v],
        Err(_) => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{args:?}: {e}: {l}")))
            .collect(),
    }
}

#[test]
fn every_json_output_has_snake_case_keys_and_hex_masks() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    three_program_metrics(&d.join("m.csv"));
    let trace = gen_trace(d, "t", 20_000);
    let trace = trace.to_str().unwrap();
    let tiny = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios/tiny.toml"),
    )
    .unwrap();
    // A plan with two clusters, so that the output holds masks.
    let planned = tiny.replace(
        "instructions = 400_000",
        "instructions = 100_000\npolicy = \"ucp\"",
    );
    assert_ne!(planned, tiny);
    std::fs::write(d.join("s.toml"), planned).unwrap();
    let runs: Vec<Vec<&str>> = vec![
        vec![
            "profile",
            "eval",
            "-m",
            "m.csv",
            "--apps",
            "xz,sort,copy",
            "--format",
            "json",
        ],
        vec!["profile", "classify", "-m", "m.csv", "--format", "json"],
        vec!["profile", "compare", "m.csv", "m.csv", "--format", "json"],
        vec!["trace", "info", trace, "--format", "json"],
        vec!["curves", trace, "--format", "json"],
        vec![
            "curves",
            trace,
            "--kind",
            "set-associative",
            "--sets",
            "64",
            "--format",
            "json",
        ],
        vec!["sim", "run", "s.toml", "-q", "--format", "json"],
    ];
    let mut failures = Vec::new();
    let mut masks = 0;
    for args in &runs {
        for v in json_of(d, args) {
            let text = v.to_string();
            masks += text.matches("\"mask\"").count();
            let mut out = Vec::new();
            breaks(&v, "", &mut out);
            failures.extend(
                out.into_iter()
                    .map(|b| format!("{}: {b}", args[..2].join(" "))),
            );
        }
    }
    assert!(
        masks > 0,
        "no output held a mask: the mask rule was not exercised"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
