//! End-to-end tests of the `cachepart` binary.

use std::path::PathBuf;
use std::process::{Command, Output};

mod support;

fn cachepart(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(args)
        .output()
        .expect("run cachepart")
}

/// A scratch directory, removed when the returned guard drops.
fn tmpdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("cachepart-cli-{name}-"))
        .tempdir()
        .expect("create a scratch directory")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn builtin_default_runs() {
    let o = cachepart(&["profile", "eval", "-a", "stock,ucp,lfoc,optc-unf", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.starts_with("workload"), "{out}");
    assert_eq!(out.lines().count(), 1 + 4 * 4, "{out}");
    assert!(out.contains("optc-unf"));
}

#[test]
fn reports_are_deterministic_and_json_is_valid() {
    let a = cachepart(&[
        "profile",
        "eval",
        "-a",
        "kpart,dunn,optc-stp",
        "--format",
        "csv",
        "-q",
    ]);
    let b = cachepart(&[
        "profile",
        "eval",
        "-a",
        "kpart,dunn,optc-stp",
        "--format",
        "csv",
        "-q",
        "--threads",
        "1",
    ]);
    assert!(a.status.success(), "{}", stderr(&a));
    assert_eq!(a.stdout, b.stdout);
    let j = cachepart(&["profile", "eval", "-a", "lfoc", "--format", "json", "-q"]);
    let text = String::from_utf8(j.stdout).unwrap();
    assert!(
        text.trim_start().starts_with('[') && text.contains("\"slowdown\""),
        "{text}"
    );
}

#[test]
fn unknown_algorithm_is_a_clear_error() {
    let o = cachepart(&["profile", "eval", "-a", "ucp,lfocc"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("unknown algorithm \"lfocc\"") && e.contains("lfoc"),
        "{e}"
    );
}

#[test]
fn bad_metrics_file_names_line_and_column() {
    let dir = tmpdir("badcsv");
    let d = dir.path();
    let m = d.join("m.csv");
    std::fs::write(
        &m,
        "BENCH,NR_WAYS,ipc,llcmpki,llcmpkc,bandwidth_mbps\na,1,1.0,1,1,1\na,2,oops,1,1,1\n",
    )
    .unwrap();
    let o = cachepart(&["profile", "eval", "-m", m.to_str().unwrap(), "--apps", "a"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("m.csv:3 column ipc: expected a number, found \"oops\""),
        "{e}"
    );
}

#[test]
fn unknown_program_names_file_line_item_and_suggests() {
    let dir = tmpdir("badwl");
    let d = dir.path();
    let w = d.join("w.csv");
    std::fs::write(&w, "stream-hi,sens-mid\nlight-a,sens-midd\n").unwrap();
    let out = d.join("out.csv");
    let m = d.join("m.csv");
    let builtin = cachepart(&["profile", "builtin", "--set", "parametric"]);
    std::fs::write(&m, builtin.stdout).unwrap();
    let o = cachepart(&[
        "profile",
        "eval",
        "-m",
        m.to_str().unwrap(),
        "-w",
        w.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("w.csv:2 column 2: unknown program \"sens-midd\""),
        "{e}"
    );
    assert!(e.contains("did you mean \"sens-mid\""), "{e}");
    assert!(!out.exists(), "no partial output may be left behind");
    let leftovers: Vec<_> = std::fs::read_dir(d).unwrap().collect();
    assert_eq!(leftovers.len(), 2, "only the inputs remain: {leftovers:?}");
}

#[test]
fn output_file_and_chart() {
    let dir = tmpdir("out");
    let d = dir.path();
    let out = d.join("r.csv");
    let png = d.join("t.png");
    let o = cachepart(&[
        "profile",
        "eval",
        "-a",
        "ucp,lfoc",
        "--format",
        "csv",
        "-o",
        out.to_str().unwrap(),
        "--chart",
        png.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let csv = std::fs::read_to_string(&out).unwrap();
    assert!(csv.starts_with("workload,algorithm,"));
    // stock is added for the chart's normalisation
    assert!(csv.contains(",stock,"));
    assert_eq!(&std::fs::read(&png).unwrap()[..8], b"\x89PNG\r\n\x1a\n");
}

#[test]
fn user_plan_errors_name_the_problem() {
    let o = cachepart(&[
        "profile",
        "eval",
        "--builtin",
        "parametric",
        "--apps",
        "stream-hi,sens-mid",
        "-a",
        "user",
        "--plan",
        "0x5=0;0x7f0=1",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("non-consecutive 1-bits"), "{e}");
    let o = cachepart(&[
        "profile",
        "eval",
        "--builtin",
        "parametric",
        "--apps",
        "stream-hi,sens-mid",
        "-a",
        "user",
    ]);
    assert!(stderr(&o).contains("needs a plan"), "{}", stderr(&o));
}

#[test]
fn time_limit_flags_unproven_plans() {
    // a tiny limit on a larger mix: the result is a valid plan, flagged
    let apps = "stream-hi,stream-lo,sens-small,sens-mid,sens-large,light-a,light-b,light-c,sens-mid,sens-small,stream-hi,light-a";
    let o = cachepart(&[
        "profile",
        "eval",
        "--builtin",
        "parametric",
        "--apps",
        apps,
        "-a",
        "optc-unf",
        "--time-limit",
        "0.001",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    if out.contains("NO (time limit)") {
        assert!(stderr(&o).contains("not proven optimal"), "{}", stderr(&o));
    } else {
        assert!(out.contains("yes"), "{out}");
    }
}

#[test]
fn classify_prints_the_evidence() {
    let o = cachepart(&[
        "profile",
        "classify",
        "--builtin",
        "parametric",
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.lines().any(|l| l.starts_with("stream-hi,streaming,1,")),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.starts_with("sens-mid,sensitive,2,")),
        "{out}"
    );
}

#[test]
fn trace_generate_info_and_convert() {
    let dir = tmpdir("trace");
    let d = dir.path();
    let cfg = d.join("g.toml");
    std::fs::write(
        &cfg,
        "seed = 5\naccesses = 10000\n[pattern]\nclass = \"streaming\"\narray-bytes = 1048576\n",
    )
    .unwrap();
    let cpt = d.join("g.cpt");
    let o = cachepart(&[
        "trace",
        "generate",
        cfg.to_str().unwrap(),
        cpt.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = cachepart(&["trace", "info", cpt.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info = String::from_utf8(o.stdout).unwrap();
    assert!(info.contains("\"accesses\": 10000"), "{info}");

    let din = d.join("t.din");
    std::fs::write(&din, "0 1000\n1 2000\n2 3000\n").unwrap();
    let out = d.join("t.cpt");
    let o = cachepart(&[
        "trace",
        "convert",
        "--from",
        "din",
        din.to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = cachepart(&["trace", "info", out.to_str().unwrap(), "--format", "json"]);
    assert!(String::from_utf8(o.stdout)
        .unwrap()
        .contains("\"accesses\": 3"));

    // a bad line: the error names the line, and no output is left behind
    std::fs::write(&din, "0 1000\n9 zz\n").unwrap();
    let bad_out = d.join("bad.cpt");
    let o = cachepart(&[
        "trace",
        "convert",
        "--from",
        "din",
        din.to_str().unwrap(),
        bad_out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("line 2"), "{}", stderr(&o));
    assert!(!bad_out.exists());
    let tmp_left = std::fs::read_dir(d)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".tmp")
        })
        .count();
    assert_eq!(tmp_left, 0);

    // a file that is not a trace: the error names the byte offset
    let o = cachepart(&["trace", "info", din.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("byte") || stderr(&o).contains("offset"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn trace_capture_lackey() {
    let have_valgrind = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_valgrind {
        println!("SKIPPED: valgrind is not installed (apt-get install valgrind)");
        return;
    }
    let dir = tmpdir("capture");
    let d = dir.path();
    let cpt = d.join("ls.cpt");
    let o = cachepart(&[
        "trace",
        "capture",
        "-o",
        cpt.to_str().unwrap(),
        "--",
        "ls",
        "-la",
        "/usr",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // the program's stdout passes through; the summary is one line on stderr
    assert!(String::from_utf8_lossy(&o.stdout).contains("bin"));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(" records, ") && err.contains(" M accesses/s"),
        "{err}"
    );
    let o = cachepart(&["trace", "info", cpt.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(info["accesses"].as_u64().unwrap() > 100_000, "{info}");
    assert_eq!(info["instructions"], info["ifetches"]);
    assert!(info["meta"]
        .to_string()
        .contains("\"command\",\"ls -la /usr\""));

    // a failing program: the trace is kept, a warning, the program's status
    let f = d.join("false.cpt");
    let o = cachepart(&["trace", "capture", "-o", f.to_str().unwrap(), "--", "false"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("warning: false exited"),
        "{}",
        stderr(&o)
    );
    assert!(f.exists());

    // errors: status 1, no output file, no temporary file
    let m = d.join("missing.cpt");
    let o = cachepart(&[
        "trace",
        "capture",
        "-o",
        m.to_str().unwrap(),
        "--",
        "cachepart-no-such-command",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("command not found: cachepart-no-such-command"),
        "{}",
        stderr(&o)
    );
    let mut names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["false.cpt", "ls.cpt"]);
}

#[test]
fn trace_capture_refuses_its_output_before_the_program_runs() {
    // no tool is needed: every refusal comes before the capture starts
    let dir = tmpdir("capture-out");
    let d = dir.path();
    let prog = d.join("mytrue");
    std::fs::copy("/bin/true", &prog).unwrap();
    let before = std::fs::read(&prog).unwrap();
    let link = d.join("link");
    std::os::unix::fs::symlink("mytrue", &link).unwrap();
    let hard = d.join("hard");
    std::fs::hard_link(&prog, &hard).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cachepart"))
            .args(args)
            .current_dir(d)
            .env("PATH", format!("{}:/usr/bin:/bin", d.display()))
            .output()
            .expect("run cachepart")
    };
    // the traced program, by path, through PATH, a symlink or a hard link
    for (out, program) in [
        ("mytrue", "./mytrue"),
        ("mytrue", "mytrue"),
        ("link", "./mytrue"),
        ("hard", "mytrue"),
    ] {
        let o = run(&["trace", "capture", "-o", out, "--", program]);
        assert_eq!(o.status.code(), Some(1), "{out} {program}");
        assert!(stderr(&o).contains("is also an input"), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(&prog).unwrap(), before);
    // `-` is refused (standard output is the program's), not a file `./-`
    let o = run(&["trace", "capture", "-o", "-", "--", "true"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("standard output"), "{}", stderr(&o));
    assert!(!d.join("-").exists());
    // a directory or a missing directory: refused before the program runs
    // (a program that would leave a mark)
    std::fs::create_dir(d.join("sub")).unwrap();
    let mark = d.join("ran");
    let touch = format!("touch {}", mark.display());
    for (out, what) in [("sub", "is a directory"), ("nodir/x.cpt", "does not exist")] {
        let o = run(&["trace", "capture", "-o", out, "--", "sh", "-c", &touch]);
        assert_eq!(o.status.code(), Some(1));
        assert!(stderr(&o).contains(what), "{}", stderr(&o));
        assert!(!mark.exists(), "the program ran");
    }
    let mut names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["hard", "link", "mytrue", "sub"]);
}

#[test]
fn trace_capture_qemu() {
    let have = |p: &str| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !have("qemu-x86_64") || !have("gcc") {
        eprintln!("SKIPPED: qemu-x86_64 or gcc is not installed (apt-get install qemu-user gcc)");
        return;
    }
    let dir = tmpdir("capture-qemu");
    let d = dir.path();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cachepart"))
            .args(args)
            .env("CACHEPART_CACHE_DIR", d.join("cache"))
            .output()
            .expect("run cachepart")
    };
    let cpt = d.join("ls.cpt");
    let o = run(&[
        "trace",
        "capture",
        "--tool",
        "qemu",
        "-o",
        cpt.to_str().unwrap(),
        "--",
        "ls",
        "-la",
        "/usr",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("bin"));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(" records, ") && err.contains(" M accesses/s"),
        "{err}"
    );
    assert!(d.join("cache/qemu-plugin").is_dir());
    let o = cachepart(&["trace", "info", cpt.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(info["loads"].as_u64().unwrap() > 10_000, "{info}");
    assert!(info["stores"].as_u64().unwrap() > 10_000, "{info}");
    assert_eq!(info["ifetches"], 0);
    assert!(
        info["meta"].to_string().contains("\"tool\",\"qemu\""),
        "{info}"
    );

    // --ifetch records a fetch per instruction
    let i = d.join("ifetch.cpt");
    let o = run(&[
        "trace",
        "capture",
        "--tool",
        "qemu",
        "--ifetch",
        "-o",
        i.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = cachepart(&["trace", "info", i.to_str().unwrap(), "--format", "json"]);
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(info["ifetches"].as_u64().unwrap() > 10_000, "{info}");
    assert_eq!(info["instructions"], info["ifetches"]);

    // errors: status 1, no output
    let m = d.join("missing.cpt");
    let o = run(&[
        "trace",
        "capture",
        "--tool",
        "qemu",
        "-o",
        m.to_str().unwrap(),
        "--",
        "cachepart-no-such-command",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("command not found: cachepart-no-such-command"),
        "{}",
        stderr(&o)
    );
    let o = run(&[
        "trace",
        "capture",
        "--ifetch",
        "-o",
        m.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--ifetch is for --tool qemu"),
        "{}",
        stderr(&o)
    );
    assert!(!m.exists());
}

const TINY_PLATFORM: &str = r#"name = "tiny"
cores = 1
core.l1i = { size-bytes = 4096, ways = 4, line-bytes = 64 }
core.l1d = { size-bytes = 4096, ways = 4, line-bytes = 64 }
llc = { size-bytes = 131072, ways = 8, line-bytes = 64 }
memory = { size-bytes = 67108864 }
"#;

/// Generates `d/NAME.cpt` from a pattern (TOML lines).
fn gen_trace(d: &std::path::Path, name: &str, pattern: &str) -> PathBuf {
    gen_trace_of(d, name, pattern, 30_000)
}

/// [`gen_trace`] of `accesses` accesses.
fn gen_trace_of(d: &std::path::Path, name: &str, pattern: &str, accesses: u64) -> PathBuf {
    let cfg = d.join(format!("{name}.toml"));
    std::fs::write(
        &cfg,
        format!("seed = 2\naccesses = {accesses}\n[pattern]\n{pattern}\n"),
    )
    .unwrap();
    let cpt = d.join(format!("{name}.cpt"));
    let o = cachepart(&[
        "trace",
        "generate",
        cfg.to_str().unwrap(),
        cpt.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    cpt
}

#[test]
fn from_trace_table_feeds_profile_eval() {
    let dir = tmpdir("from-trace");
    let d = dir.path();
    let platform = d.join("tiny.toml");
    std::fs::write(&platform, TINY_PLATFORM).unwrap();
    let sens = gen_trace(
        d,
        "sens",
        "class = \"cache-sensitive\"\nworking-set-bytes = 98304",
    );
    let stream = gen_trace(d, "stream", "class = \"streaming\"\narray-bytes = 4194304");
    let light = gen_trace(d, "light", "class = \"light\"\nworking-set-bytes = 8192");
    let metrics = d.join("m.csv");
    let args = |out: &PathBuf| {
        vec![
            "profile".to_string(),
            "from-trace".into(),
            "--platform".into(),
            platform.to_str().unwrap().into(),
            "--base-cpi".into(),
            "0.7".into(),
            "--mlp".into(),
            "1.5".into(),
            sens.to_str().unwrap().into(),
            stream.to_str().unwrap().into(),
            light.to_str().unwrap().into(),
            "-o".into(),
            out.to_str().unwrap().into(),
        ]
    };
    let a: Vec<String> = args(&metrics);
    let o = cachepart(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&metrics).unwrap();
    assert!(text.starts_with("BENCH,NR_WAYS,ipc,llcrpki,llcmpki,llcrpkc,llcmpkc,llc_usage_kb,bandwidth_mbps,llcm_bandwidth,stalls_l2_miss,stalls_l3_miss,stalls_total,stalls_store_buf\n"), "{text}");
    assert_eq!(text.lines().count(), 1 + 3 * 8);
    // byte-identical on a second run
    let again = d.join("m2.csv");
    let a: Vec<String> = args(&again);
    let o = cachepart(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&again).unwrap(), text.as_bytes());
    let o = cachepart(&[
        "profile",
        "eval",
        "-m",
        metrics.to_str().unwrap(),
        "--apps",
        "sens,stream,light",
        "-a",
        "lfoc,ucp,optc-stp",
        "--format",
        "csv",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.lines().count(), 1 + 3 * 3, "{out}");
    // errors name the trace and the platform
    let o = cachepart(&[
        "profile",
        "from-trace",
        "--platform",
        "tiny-nope",
        sens.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("tiny-nope"), "{}", stderr(&o));
    let ghost = d.join("ghost.cpt");
    let o = cachepart(&[
        "profile",
        "from-trace",
        "--platform",
        platform.to_str().unwrap(),
        ghost.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("ghost.cpt"), "{}", stderr(&o));
    // the stall-rate curve of the sensitive trace falls with ways
    let o = cachepart(&[
        "curves",
        sens.to_str().unwrap(),
        "--kind",
        "stall-rate",
        "--platform",
        platform.to_str().unwrap(),
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    let rate = |line: &str| line.split(',').nth(2).unwrap().parse::<f64>().unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1 + 8, "{out}");
    assert!(rate(lines[1]) > rate(lines[8]), "{out}");
    let o = cachepart(&["curves", sens.to_str().unwrap(), "--kind", "stall-rate"]);
    assert!(stderr(&o).contains("--platform"), "{}", stderr(&o));
}

/// Records are decoded ahead on another thread: a truncated trace still
/// fails with the file and the byte offset, and prints no partial curve,
/// whatever the curve; the whole trace gives the same curve every time.
#[test]
fn curves_of_a_truncated_trace_fail_with_the_offset() {
    let dir = tmpdir("curves-truncated");
    let d = dir.path();
    let whole = gen_trace_of(
        d,
        "z",
        "class = \"cache-sensitive\"\nworking-set-bytes = 1048576\ndistribution = \"zipf\"",
        600_000,
    );
    let bytes = std::fs::read(&whole).unwrap();
    let cut = d.join("cut.cpt");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    for kind in ["fully-associative", "set-associative", "colors", "shards"] {
        let args = |t: &PathBuf| {
            let mut a = vec!["curves".to_string(), t.to_str().unwrap().to_string()];
            a.extend(["--kind", kind].map(String::from));
            if kind == "shards" {
                // A SHARDS option: refused for the exact curves.
                a.push("--no-index".to_string());
            }
            a
        };
        let run = |t: &PathBuf| {
            let a = args(t);
            cachepart(&a.iter().map(String::as_str).collect::<Vec<_>>())
        };
        let (a, b) = (run(&whole), run(&whole));
        assert!(a.status.success(), "{kind}: {}", stderr(&a));
        assert_eq!(a.stdout, b.stdout, "{kind}");
        let o = run(&cut);
        assert_eq!(o.status.code(), Some(1), "{kind}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("cut.cpt") && e.contains("byte offset"),
            "{kind}: {e}"
        );
        assert!(o.stdout.is_empty(), "{kind}: partial output");
    }
}

#[test]
fn shards_from_the_sample_index_matches_the_pass() {
    let dir = tmpdir("shards-index");
    let d = dir.path();
    let cpt = gen_trace(
        d,
        "z",
        "class = \"cache-sensitive\"\nworking-set-bytes = 4194304\ndistribution = \"zipf\"",
    );
    let t = cpt.to_str().unwrap();
    let curve = |extra: &[&str]| {
        let mut args = vec!["curves", t, "--kind", "shards", "--format", "csv"];
        args.extend_from_slice(extra);
        let o = cachepart(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let err = stderr(&o);
        (String::from_utf8(o.stdout).unwrap(), err)
    };
    let (pass, note) = curve(&[]);
    assert!(note.contains("from a pass over the trace"), "{note}");
    let o = cachepart(&["trace", "shards-index", t]);
    assert!(o.status.success(), "{}", stderr(&o));
    let idx = d.join("z.cpt.shards");
    assert!(idx.exists());
    let (indexed, note) = curve(&[]);
    assert!(note.contains("from the sample index"), "{note}");
    assert_eq!(indexed, pass);
    let (_, note) = curve(&["--no-index"]);
    assert!(note.contains("from a pass over the trace"), "{note}");
    // A rate the index does not serve: a pass, and the reason.
    let (_, note) = curve(&["--rate", "0.1"]);
    assert!(note.contains("above the index's base rate"), "{note}");
    // A stale index is an error that says how to rebuild it.
    gen_trace(d, "z", "class = \"streaming\"\narray-bytes = 1048576");
    let o = cachepart(&["curves", t, "--kind", "shards"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("shards-index"), "{}", stderr(&o));
}

#[test]
fn curve_sizes_are_whole_lines() {
    let dir = tmpdir("line-sizes");
    let cpt = gen_trace(
        dir.path(),
        "s",
        "class = \"streaming\"\narray-bytes = 65536",
    );
    let t = cpt.to_str().unwrap();
    // The sizes of the exact and the SHARDS curve, which must agree.
    let sizes = |extra: &[&str]| {
        let [exact, shards] = [
            &["--kind", "fully-associative"][..],
            &["--kind", "shards", "--rate", "0.5"],
        ]
        .map(|kind| {
            let mut args = vec!["curves", t, "--format", "csv", "-q"];
            args.extend_from_slice(kind);
            args.extend_from_slice(extra);
            let o = cachepart(&args);
            assert!(o.status.success(), "{}", stderr(&o));
            let out = String::from_utf8(o.stdout).unwrap();
            out.lines()
                .skip(1)
                .map(|l| l.split(',').next().unwrap().to_string())
                .collect::<Vec<_>>()
        });
        assert_eq!(exact, shards);
        exact
    };
    // A 100-byte cache holds one line: listed as the 64 B it is.
    assert_eq!(sizes(&["--min-size", "100", "--max-size", "100"]), ["64"]);
    // Four per octave: 1218, 1448 and 1722 B are 19, 22 and 26 lines.
    assert_eq!(
        sizes(&["--max-size", "2048", "--per-octave", "4"]),
        ["1024", "1216", "1408", "1664", "2048"]
    );
    // Lines larger than the default smallest size (1 KiB): the curve
    // starts at one line instead of refusing the default.
    assert_eq!(
        sizes(&["--line", "4096", "--max-size", "16384"]),
        ["4096", "8192", "16384"]
    );
}

#[test]
fn shards_warns_of_a_small_sample() {
    let dir = tmpdir("small-sample");
    let cpt = gen_trace(
        dir.path(),
        "u",
        "class = \"cache-sensitive\"\nworking-set-bytes = 131072\ndistribution = \"uniform\"",
    );
    let t = cpt.to_str().unwrap();
    // 2,048 lines at 1 %: about 20 sampled lines, and 30,000 references
    // give a reference sample of about 3.
    let o = cachepart(&["curves", t, "--kind", "shards", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("warning: the SHARDS sample is small (") && err.contains("fewer than 100"),
        "{err}"
    );
    // At rate 1 the estimate is exact: no warning.
    let o = cachepart(&["curves", t, "--kind", "shards", "--rate", "1", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}

#[cfg(unix)]
#[test]
fn a_closed_pipe_is_not_a_panic() {
    // About 25,000 curve points (1 MB) into `head -1`, which closes the
    // pipe long before the end.
    let dir = tmpdir("pipe");
    let d = dir.path();
    let cpt = gen_trace(d, "s", "class = \"streaming\"\narray-bytes = 1048576");
    let bin = env!("CARGO_BIN_EXE_cachepart");
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{bin}' curves '{}' --per-octave 1024 --max-size 1099511627776 --format csv | head -1",
            cpt.display()
        ))
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!err.contains("panicked") && err.is_empty(), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "size_bytes,misses,miss_ratio,mpki"
    );
}

#[test]
fn trace_convert_lenient_skips_and_counts_foreign_lines() {
    let dir = tmpdir("lenient");
    let d = dir.path();
    // valgrind's banner, the program's own output (2>&1), trace lines
    let text =
        "==7== Lackey\nhello from the program\nI  04000000,3\n L 7ff000000,8\n42\n S 7ff000008,8\n";
    let input = d.join("mixed.txt");
    std::fs::write(&input, text).unwrap();
    let out = d.join("mixed.cpt");
    let args = |extra: &[&'static str]| {
        let mut v = vec!["trace", "convert", "--from", "lackey"];
        v.extend_from_slice(extra);
        v
    };
    // strict: the first foreign line is an error naming it, nothing written
    let mut a = args(&[]);
    a.extend([input.to_str().unwrap(), out.to_str().unwrap()]);
    let o = cachepart(&a);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("line 2"), "{}", stderr(&o));
    assert!(!out.exists());
    // lenient: three records, two foreign lines counted
    let mut a = args(&["--lenient"]);
    a.extend([input.to_str().unwrap(), out.to_str().unwrap()]);
    let o = cachepart(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("3 records, 2 foreign lines skipped"),
        "{}",
        stderr(&o)
    );
    // lenient is refused for a format without foreign lines
    let o = cachepart(&[
        "trace",
        "convert",
        "--from",
        "din",
        "--lenient",
        input.to_str().unwrap(),
        d.join("x.cpt").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--lenient"), "{}", stderr(&o));
    assert!(!d.join("x.cpt").exists());
}

/// An input with no trace lines (lackey's output without
/// `--trace-mem=yes`, an empty pipe) converts to a trace of no records,
/// which curves and simulations then refuse: the conversion says so at
/// once instead of only "0 records".
#[test]
fn trace_convert_of_no_trace_lines_warns() {
    let dir = tmpdir("no-lines");
    let d = dir.path();
    let banner = "==7== Lackey, an example Valgrind tool\n==7== Command: ls\n==7== \n";
    let input = d.join("banner.txt");
    std::fs::write(&input, banner).unwrap();
    let out = d.join("banner.cpt");
    let o = cachepart(&[
        "trace",
        "convert",
        "--from",
        "lackey",
        input.to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("warning: ") && err.contains("banner.txt holds no trace lines"),
        "{err}"
    );
    assert!(err.contains("--trace-mem=yes"), "{err}");
    assert!(out.exists());
    let o = cachepart_stdin(
        &["trace", "convert", "--from", "din", "-", "-o", "/dev/null"],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("/dev/null: 0 records\nwarning: - holds no trace lines"),
        "{}",
        stderr(&o)
    );
    // `trace info` of the empty trace: no bytes per access to show (it
    // printed the file's size divided by 1), and its JSON names the file
    for (format, want) in [
        ("table", "bytes per access  - (no records)\n"),
        ("csv", "bytes_per_access,\n"),
        ("json", "\"bytes_per_access\": null"),
    ] {
        let o = cachepart(&["trace", "info", "--format", format, out.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(text.contains(want), "{format}: {text}");
        assert!(
            text.contains("banner.cpt"),
            "{format} names the file: {text}"
        );
    }
    // a trace with records: no warning
    let o = cachepart_stdin(
        &["trace", "convert", "--from", "din", "-", "-o", "/dev/null"],
        b"0 1000\n",
    );
    assert!(
        o.status.success() && !stderr(&o).contains("warning"),
        "{}",
        stderr(&o)
    );
}

/// Runs cachepart with `input` on its standard input.
fn cachepart_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run cachepart");
    // A command that refuses before reading stdin may close it first.
    match child.stdin.take().unwrap().write_all(input) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        r => r.unwrap(),
    }
    child.wait_with_output().unwrap()
}

/// "Extra columns are kept": text and empty columns too, and they change
/// nothing in the results.
#[test]
fn extra_text_and_empty_columns_are_kept() {
    let dir = tmpdir("extra-columns");
    let plain = "BENCH,NR_WAYS,ipc,llcmpki,llcmpkc,bandwidth_mbps\n\
                 a,1,1.0,5,5,100\na,2,1.2,2,2,50\nb,1,2.0,1,1,10\nb,2,2.0,1,1,10\n";
    let extra = "BENCH,NR_WAYS,ipc,note,llcmpki,llcmpkc,bandwidth_mbps,empty\n\
                 a,1,1.0,cold,5,5,100,\na,2,1.2,\"warm, hot\",2,2,50,\n\
                 b,1,2.0,x,1,1,10,\nb,2,2.0,,1,1,10,\n";
    let run = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let o = cachepart(&[
            "profile",
            "eval",
            "-m",
            p.to_str().unwrap(),
            "--apps",
            "a,b",
            "-a",
            "stock,ucp,optc-stp",
            "--format",
            "csv",
            "-q",
        ]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        o.stdout
    };
    assert_eq!(run("plain.csv", plain), run("extra.csv", extra));
}

/// A binary trace read from a pipe by the commands that read it from
/// start to end gives what the file gives.
#[test]
fn dash_reads_a_binary_trace_from_a_pipe() {
    let dir = tmpdir("trace-stdin");
    let t = support::gen_trace(dir.path(), "t", 20_000);
    let bytes = std::fs::read(&t).unwrap();
    for args in [
        vec!["curves", "--format", "csv", "-q"],
        vec!["curves", "--kind", "shards", "--format", "csv", "-q"],
        vec!["sim", "cachegrind"],
    ] {
        let mut from_file = args.clone();
        from_file.push(t.to_str().unwrap());
        let a = cachepart(&from_file);
        assert!(a.status.success(), "{args:?}: {}", stderr(&a));
        let mut piped = args.clone();
        piped.push("-");
        let b = cachepart_stdin(&piped, &bytes);
        assert!(b.status.success(), "{args:?} -: {}", stderr(&b));
        assert_eq!(a.stdout, b.stdout, "{args:?}");
    }
}

#[test]
fn dash_reads_standard_input() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    // a metrics table
    let csv = "BENCH,NR_WAYS,ipc,llcmpki,llcmpkc,bandwidth_mbps\na,1,1.0,5,5,100\na,2,1.2,2,2,50\nb,1,2.0,1,1,10\nb,2,2.0,1,1,10\n";
    let o = cachepart_stdin(
        &[
            "profile", "eval", "-m", "-", "--apps", "a,b", "-a", "ucp", "-q",
        ],
        csv.as_bytes(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("ucp"));
    // stdin once only
    let o = cachepart_stdin(&["profile", "eval", "-m", "-", "-w", "-"], csv.as_bytes());
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("standard input can be read once"),
        "{}",
        stderr(&o)
    );
    // a generator config
    let dir = tmpdir("stdin");
    let out = dir.path().join("g.cpt");
    let cfg = std::fs::read(root.join("examples/traces/light.toml")).unwrap();
    let o = cachepart_stdin(
        &["trace", "generate", "-", out.to_str().unwrap(), "-q"],
        &cfg,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.exists());
    // a scenario (relative paths from the current directory)
    let scen = std::fs::read(root.join("examples/scenarios/tiny.toml")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cachepart"));
    child
        .args(["sim", "run", "-", "--no-alone", "--format", "json"])
        .current_dir(root.join("examples/scenarios"));
    let o = {
        use std::io::Write;
        let mut c = child
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        c.stdin.take().unwrap().write_all(&scen).unwrap();
        c.wait_with_output().unwrap()
    };
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"scenario\": \"stdin\""));
}

#[test]
fn dash_reads_a_platform_and_an_experiment() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    // a platform: `show -` of a platform's TOML prints the same platform
    let a = cachepart(&["platform", "show", "xeon-5160"]);
    assert!(a.status.success(), "{}", stderr(&a));
    let b = cachepart_stdin(&["platform", "show", "-"], &a.stdout);
    assert!(b.status.success(), "{}", stderr(&b));
    assert_eq!(a.stdout, b.stdout);
    let bad = cachepart_stdin(&["platform", "show", "-"], b"[llc]\nways = \"x\"\n");
    assert!(!bad.status.success());
    assert!(stderr(&bad).starts_with("error: -: "), "{}", stderr(&bad));
    // an experiment, relative paths from the current directory: the same
    // runs as from the file, under the name `stdin`
    let dir = root.join("experiments");
    let plan = |args: &[&str], input: Option<&[u8]>| {
        use std::io::Write;
        let mut c = Command::new(env!("CARGO_BIN_EXE_cachepart"))
            .args(args)
            .current_dir(&dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // a command that stops before reading stdin may close it first:
        // its status and stderr, asserted below, then say why
        match c.stdin.take().unwrap().write_all(input.unwrap_or(b"")) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            r => r.unwrap(),
        }
        c.wait_with_output().unwrap()
    };
    let text = std::fs::read(dir.join("coloris-4.2.toml")).unwrap();
    let a = plan(&["experiment", "plan", "coloris-4.2.toml"], None);
    assert!(a.status.success(), "{}", stderr(&a));
    let b = plan(&["experiment", "plan", "-"], Some(&text));
    assert!(b.status.success(), "{}", stderr(&b));
    let (a, b) = (
        String::from_utf8(a.stdout).unwrap(),
        String::from_utf8(b.stdout).unwrap(),
    );
    assert!(
        a.starts_with("coloris-4.2 (") && b.starts_with("stdin ("),
        "{a}\n{b}"
    );
    assert_eq!(a.split_once(' ').unwrap().1, b.split_once(' ').unwrap().1);
    assert!(a.lines().count() > 2);
    // a mix file: read from standard input, its errors name `-`
    let o = cachepart_stdin(
        &["run", "-", "--policy", "stock"],
        b"[[app]]\nname = \"a\"\n",
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("-: ") && stderr(&o).contains("argv"),
        "{}",
        stderr(&o)
    );
    let o = cachepart_stdin(&["daemon", "-"], b"");
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("needs a file, not standard input"),
        "{}",
        stderr(&o)
    );
    let o = cachepart_stdin(&["profile", "compare", "-", "-"], b"");
    assert!(
        stderr(&o).contains("standard input can be read once"),
        "{}",
        stderr(&o)
    );
    let twice = plan(&["experiment", "plan", "-", "-"], Some(&text));
    assert!(!twice.status.success());
    assert!(
        stderr(&twice).contains("standard input can be read once"),
        "{}",
        stderr(&twice)
    );
}
