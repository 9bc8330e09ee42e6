//! The options every command shares (`common_args.rs`): `-o/--output`
//! with `-` for stdout, `--format table|csv|json`, `-q/--quiet`,
//! `--threads`, `--builtin` (alias `--set`) mean the same everywhere.

use std::path::Path;
use std::process::{Command, Output};

fn cachepart(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(args)
        .output()
        .expect("run cachepart")
}

fn ok(args: &[&str]) -> Vec<u8> {
    let o = cachepart(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A three-record lackey trace converted to `.cpt` at `dir/t.cpt`.
fn small_trace(dir: &Path) -> std::path::PathBuf {
    let text = dir.join("t.txt");
    std::fs::write(&text, "I  0400d7d4,8\n L 0010,4\n S 0020,4\n").unwrap();
    let cpt = dir.join("t.cpt");
    ok(&["trace", "convert", "--from", "lackey", s(&text), s(&cpt)]);
    cpt
}

#[test]
fn builtin_and_its_old_spelling_set_are_one_option() {
    let a = ok(&["profile", "builtin", "--builtin", "parametric"]);
    let b = ok(&["profile", "builtin", "--set", "parametric"]);
    assert_eq!(a, b);
    assert!(String::from_utf8_lossy(&a).contains("stream-hi"));
    // the same option name on the data commands, where --set is accepted too
    let c = ok(&[
        "profile",
        "classify",
        "--set",
        "parametric",
        "--format",
        "csv",
    ]);
    let d = ok(&[
        "profile",
        "classify",
        "--builtin",
        "parametric",
        "--format",
        "csv",
    ]);
    assert_eq!(c, d);
    let help = String::from_utf8(ok(&["profile", "builtin", "--help"])).unwrap();
    assert!(
        help.contains("--builtin") && !help.contains("--set"),
        "{help}"
    );
}

#[test]
fn every_writing_command_takes_o_and_dash_is_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cpt = small_trace(d);
    let cases: Vec<Vec<&str>> = vec![
        vec!["profile", "builtin", "--builtin", "parametric"],
        vec!["profile", "builtin", "--workloads"],
        vec!["profile", "classify", "--builtin", "parametric"],
        vec!["trace", "info", s(&cpt)],
        vec!["trace", "info", s(&cpt), "--format", "csv"],
        vec!["curves", s(&cpt), "--max-size", "4096"],
        vec!["sim", "cachegrind", s(&cpt), "--format", "csv"],
    ];
    for (i, args) in cases.iter().enumerate() {
        let stdout = ok(args);
        let dash = ok(&[args.as_slice(), &["-o", "-"]].concat());
        assert_eq!(stdout, dash, "{args:?}");
        let file = d.join(format!("out{i}"));
        let long = ok(&[args.as_slice(), &["--output", s(&file)]].concat());
        assert!(long.is_empty(), "{args:?}: nothing on stdout with -o");
        assert_eq!(std::fs::read(&file).unwrap(), stdout, "{args:?}");
    }
}

#[test]
fn trace_outputs_take_the_argument_or_o_but_not_both() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cpt = small_trace(d);
    let by_o = d.join("o.cpt");
    ok(&["trace", "convert", "--from", "cpt", s(&cpt), "-o", s(&by_o)]);
    let by_arg = d.join("a.cpt");
    ok(&["trace", "convert", "--from", "cpt", s(&cpt), s(&by_arg)]);
    // the header records the source path, so compare the decoded records
    let info = |p: &Path| {
        let text = String::from_utf8(ok(&["trace", "info", s(p), "--format", "csv"])).unwrap();
        text.lines()
            .filter(|l| {
                ["records,", "loads,", "stores,", "instructions,"]
                    .iter()
                    .any(|k| l.starts_with(k))
            })
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(info(&by_o), info(&by_arg));
    assert_eq!(info(&by_o).len(), 4);
    let both = d.join("both.cpt");
    for args in [
        vec![
            "trace",
            "convert",
            "--from",
            "cpt",
            s(&cpt),
            s(&both),
            "-o",
            s(&both),
        ],
        vec!["trace", "convert", "--from", "cpt", s(&cpt)],
        vec!["trace", "generate", "cfg.toml"],
    ] {
        let o = cachepart(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains("OUTPUT"), "{args:?}: {e}");
        assert!(!both.exists());
    }
    let cfg = d.join("g.toml");
    std::fs::write(
        &cfg,
        "seed = 1\naccesses = 1000\n[pattern]\nclass = \"cache-sensitive\"\n\
         working-set-bytes = 65536\ndistribution = \"uniform\"\n",
    )
    .unwrap();
    let by_o = d.join("g-o.cpt");
    ok(&["trace", "generate", s(&cfg), "-o", s(&by_o), "-q"]);
    let by_arg = d.join("g-arg.cpt");
    ok(&["trace", "generate", s(&cfg), s(&by_arg), "--quiet"]);
    assert_eq!(
        std::fs::read(&by_o).unwrap(),
        std::fs::read(&by_arg).unwrap()
    );
}

#[test]
fn format_takes_the_same_three_values_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let cpt = small_trace(dir.path());
    let commands: Vec<Vec<&str>> = vec![
        vec!["profile", "classify", "--builtin", "parametric"],
        vec!["trace", "info", s(&cpt)],
        vec!["curves", s(&cpt), "--max-size", "4096"],
        vec!["sim", "cachegrind", s(&cpt)],
    ];
    for args in &commands {
        let csv = ok(&[args.as_slice(), &["--format", "csv"]].concat());
        let csv = String::from_utf8(csv).unwrap();
        let header = csv.lines().next().unwrap();
        assert!(header.contains(','), "{args:?}: {csv}");
        let json = ok(&[args.as_slice(), &["--format", "json"]].concat());
        let v: serde_json::Value = serde_json::from_slice(&json)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&json)));
        assert!(v.is_object() || v.is_array());
        let o = cachepart(&[args.as_slice(), &["--format", "xml"]].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            e.contains("--format") && e.contains("table, csv, json"),
            "{args:?}: {e}"
        );
    }
}

#[test]
fn threads_out_of_range_are_refused_or_capped_with_a_message() {
    let base = [
        "profile",
        "eval",
        "--apps",
        "stream-hi,sens-mid",
        "--builtin",
        "parametric",
        "-a",
        "optc-stp",
        "-q",
    ];
    for bad in ["0", "-1", "1e3", "abc", "18446744073709551616"] {
        let kv = format!("--threads={bad}");
        let o = cachepart(&[base.as_slice(), &[kv.as_str()]].concat());
        assert!(!o.status.success(), "--threads {bad}");
        assert_ne!(o.status.code(), Some(101), "--threads {bad}: panic");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains("threads"), "--threads {bad}: {e}");
    }
    let o = cachepart(&[base.as_slice(), &["--threads", "100000"]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("capped at"), "{e}");
    assert_eq!(
        o.stdout,
        ok(&[base.as_slice(), &["--threads", "1"]].concat())
    );
}
