//! End-to-end tests of `cachepart sim cachegrind`: its counts equal the
//! library's cachegrind mode on a generated trace, its summary is the
//! library's cachegrind layout, its JSON holds the nine totals, bad options
//! are refused in cachegrind's words, and (when valgrind is installed) the
//! one-pass `-- CMD` summary equals valgrind cachegrind's own, text for
//! text, and an interrupted or failed capture leaves no FIFO directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use cachepart::trace::{Header, Kind, Record, Writer};
use cachepart_sim::{CachegrindConfig, CachegrindSim, CachegrindSummary, EVENTS};

fn cachepart(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(args)
        .output()
        .expect("run cachepart")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A deterministic mix of instruction fetches, loads, stores and
/// modifies (some straddling lines) over a few hundred KiB.
fn records() -> Vec<Record> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut pc = 0x40_0000u64;
    let mut out = Vec::new();
    for _ in 0..200_000 {
        let r = next();
        pc = if r % 16 == 0 {
            0x40_0000 + (r >> 8) % 0x8000
        } else {
            pc + 1 + r % 7
        };
        out.push(Record::access(Kind::Ifetch, pc, 1 + (r >> 4) as u32 % 8, 0).unwrap());
        let kind = [Kind::Load, Kind::Store, Kind::Modify, Kind::Load][(r >> 12) as usize % 4];
        if (r >> 20) % 3 != 0 {
            let hot = (r >> 24) % 4 != 0;
            let span = if hot { 16 << 10 } else { 512 << 10 };
            let addr = 0x7f00_0000 + (r >> 32) % span;
            let size = [1, 2, 4, 8, 16, 32][(r >> 40) as usize % 6];
            out.push(Record::access(kind, addr, size, 0).unwrap());
        }
    }
    out
}

fn write_trace(path: &Path, recs: &[Record]) {
    let mut w = Writer::new(std::fs::File::create(path).unwrap(), &Header::default()).unwrap();
    for r in recs {
        w.push(*r).unwrap();
    }
    w.finish().unwrap();
}

fn library(cfg: &CachegrindConfig, recs: &[Record]) -> CachegrindSummary {
    let mut sim = CachegrindSim::new(cfg).unwrap();
    sim.run(recs.iter().copied());
    sim.summary()
}

fn json_totals(o: &Output) -> Vec<u64> {
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON output");
    let obj = v.as_object().expect("one object");
    assert_eq!(obj.len(), 9, "{v}");
    EVENTS
        .iter()
        .map(|k| {
            obj[*k]
                .as_u64()
                .unwrap_or_else(|| panic!("{k} is not a count: {v}"))
        })
        .collect()
}

#[test]
fn counts_equal_the_librarys_cachegrind_mode() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("mix.cpt");
    let recs = records();
    write_trace(&trace, &recs);
    let t = trace.to_str().unwrap();
    let cases: [(&[&str], CachegrindConfig); 4] = [
        (
            &[
                "--I1",
                "32768,8,64",
                "--D1",
                "32768,8,64",
                "--LL",
                "2097152,16,64",
            ],
            CachegrindConfig::lru((32768, 8, 64), (32768, 8, 64), (2 << 20, 16, 64)),
        ),
        (
            &[
                "--I1",
                "4096,2,32",
                "--D1",
                "8192,4,32",
                "--LL",
                "65536,8,64",
            ],
            CachegrindConfig::lru((4096, 2, 32), (8192, 4, 32), (65536, 8, 64)),
        ),
        // cachegrind's defaults when no option is given
        (
            &[],
            CachegrindConfig::lru((65536, 2, 64), (65536, 2, 64), (262_144, 8, 64)),
        ),
        // a platform's L1I, L1D and LLC, one level overridden
        (
            &["--platform", "xeon-e5506", "--D1", "16384,4,64"],
            CachegrindConfig::lru((32768, 4, 64), (16384, 4, 64), (4 << 20, 16, 64)),
        ),
    ];
    for (args, cfg) in cases {
        let want = library(&cfg, &recs);
        assert!(want.ir > 0 && want.d1mr > 0 && want.dlmw > 0, "{want}");
        let mut a = vec!["sim", "cachegrind", t, "--format", "json"];
        a.extend_from_slice(args);
        let o = cachepart(&a);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert_eq!(json_totals(&o), want.values(), "{args:?}");
        // the table is the library's layout of the same totals
        let mut a = vec!["sim", "cachegrind", t];
        a.extend_from_slice(args);
        let o = cachepart(&a);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let table = String::from_utf8(o.stdout).unwrap();
        assert_eq!(
            table,
            cachepart::run::cachegrind::to_table(&want),
            "{args:?}"
        );
        assert!(table.starts_with("I   refs:      "), "{table}");
    }
}

#[test]
fn json_is_one_object_of_nine_counts_and_goes_to_o() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.cpt");
    let recs = records();
    write_trace(&trace, &recs);
    let out = dir.path().join("cg.json");
    let o = cachepart(&[
        "sim",
        "cachegrind",
        trace.to_str().unwrap(),
        "--format",
        "json",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let text = std::fs::read_to_string(&out).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let mut want: Vec<&str> = EVENTS.to_vec();
    want.sort_unstable();
    let mut got = keys.clone();
    got.sort_unstable();
    assert_eq!(got, want);
    let s = library(&CachegrindConfig::cachegrind_default(), &recs);
    assert_eq!(v["Ir"], s.ir);
    assert_eq!(v["DLmw"], s.dlmw);
}

/// Each refusal: not a panic, the exit code, the expected words.
fn refused(args: &[&str], code: i32, words: &str, failures: &mut Vec<String>) {
    let o = cachepart(args);
    let err = stderr(&o);
    if o.status.code() != Some(code) || !err.contains(words) || err.contains("panicked") {
        failures.push(format!(
            "{args:?}: exit {:?} (want {code}), stderr {err:?} (want {words:?})",
            o.status.code()
        ));
    }
}

#[test]
fn bad_options_are_refused_in_cachegrinds_words() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.cpt");
    write_trace(&trace, &records()[..100]);
    let t = trace.to_str().unwrap();
    let mut f = Vec::new();
    let set = "Cache set count is not a power of two.";
    for (opt, value, words) in [
        ("--I1", "1000,2,64", set),
        ("--D1", "1024,3,64", set),
        ("--LL", "6291456,16,64", set),
        ("--I1", "384,1,48", "Cache line size is not a power of two."),
        ("--D1", "1024,2,8", "Cache line size is too small."),
        ("--LL", "64,1,64", "Cache size <= line size."),
        (
            "--I1",
            "99999999999999,2,64",
            "One of the cache parameters was too large and overflowed.",
        ),
        ("--LL", "1024,2", "Bad argument '1024,2'"),
        ("--LL", "1024,2,64,5", "Bad argument '1024,2,64,5'"),
        ("--D1", "1024,0,64", "Cache associativity is 0"),
        (
            "--D1",
            "65536,-2,64",
            "Cache associativity is negative (-2)",
        ),
        ("--I1", "65536,2,-64", "Cache line size is negative (-64)"),
        (
            "--D1",
            "65536,1024,64",
            "Cache associativity 1024 is above 64",
        ),
    ] {
        let words = format!("invalid value '{value}' for '{opt} <SIZE,WAYS,LINE>': {words}");
        refused(&["sim", "cachegrind", t, opt, value], 2, &words, &mut f);
    }
    // refusals after parsing: the CLI's usual exit code 1
    refused(
        &["sim", "cachegrind", t, "--platform", "xeon-gold-6138"],
        1,
        "platform xeon-gold-6138: bad option --LL=28835840,11,64: Cache set count is not a power of two.",
        &mut f,
    );
    refused(
        &["sim", "cachegrind", t, "--platform", "nope"],
        1,
        "not a built-in platform",
        &mut f,
    );
    refused(&["sim", "cachegrind"], 1, "give a trace", &mut f);
    refused(
        &["sim", "cachegrind", t, "--", "true"],
        1,
        "not both",
        &mut f,
    );
    let missing = dir.path().join("missing.cpt");
    refused(
        &["sim", "cachegrind", missing.to_str().unwrap()],
        1,
        missing.to_str().unwrap(),
        &mut f,
    );
    let notrace = dir.path().join("text.cpt");
    std::fs::write(&notrace, "I  0400d7d4,8\n").unwrap();
    refused(
        &["sim", "cachegrind", notrace.to_str().unwrap()],
        1,
        notrace.to_str().unwrap(),
        &mut f,
    );
    assert!(f.is_empty(), "{}", f.join("\n"));
}

/// `cmd` with the same fixed environment, working directory and no input
/// for both runs, so the program executes the same instructions.
fn fixed(mut cmd: Command, dir: &Path) -> Command {
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .env("TMPDIR", dir)
        .stdin(Stdio::null());
    cmd
}

/// The summary lines of valgrind's log, `==PID== ` prefixes removed.
fn valgrind_summary(log: &str) -> String {
    let lines: Vec<&str> = log
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("==")?;
            let end = rest.find("== ")?;
            rest[..end]
                .bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| &rest[end + 3..])
        })
        .skip_while(|l| !l.starts_with("I   refs:"))
        .collect();
    let last = lines
        .iter()
        .position(|l| l.starts_with("LL miss rate:"))
        .map_or(0, |i| i + 1);
    lines[..last]
        .iter()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect()
}

/// The geometries the one-pass summaries are compared with cachegrind's
/// at: a Skylake-like one, and one with a direct-mapped I1 and three line
/// sizes.
const GEOMETRIES: [[&str; 3]; 2] = [
    ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=2097152,16,64"],
    ["--I1=8192,1,64", "--D1=16384,2,32", "--LL=262144,4,128"],
];

/// A small deterministic program for the one-pass comparisons: `xz -0`
/// of a generated file in `d` (or `ls -la /usr/lib` without xz).
fn test_program(d: &Path) -> Vec<String> {
    let input = d.join("input.txt");
    let text: String = (0..400)
        .map(|i| format!("line {i} {}\n", "xyz".repeat(i % 5)))
        .collect();
    std::fs::write(&input, text).unwrap();
    if Path::new("/usr/bin/xz").exists() {
        ["xz", "-0", "-T1", "-c", input.to_str().unwrap()]
            .map(String::from)
            .to_vec()
    } else {
        ["ls", "-la", "/usr/lib"].map(String::from).to_vec()
    }
}

/// Runs `sim cachegrind [tool_args] GEOMETRY -- program` and valgrind
/// cachegrind on the same program, both in `fixed` environments plus
/// `env`; returns a failure message if the summaries differ.
fn one_pass_against_cachegrind(
    d: &Path,
    program: &[String],
    geometry: [&str; 3],
    tool_args: &[&str],
    env: &[(&str, &Path)],
) -> Option<String> {
    // the program's output is on stdout too: the summary goes to -o
    let summary = d.join("summary.txt");
    let mut ours = fixed(Command::new(env!("CARGO_BIN_EXE_cachepart")), d);
    ours.args(["sim", "cachegrind"])
        .args(tool_args)
        .args(geometry)
        .arg("-o")
        .arg(&summary)
        .arg("--")
        .args(program)
        .stdout(Stdio::null());
    let mut cg = fixed(Command::new("valgrind"), d);
    cg.args([
        "--tool=cachegrind",
        "--cache-sim=yes",
        "--cachegrind-out-file=/dev/null",
    ])
    .args(geometry)
    .args(program)
    .stdout(Stdio::null());
    for (k, v) in env {
        ours.env(k, v);
        cg.env(k, v);
    }
    let o = ours.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = std::fs::read_to_string(&summary).unwrap();
    let o = cg.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let theirs = valgrind_summary(&stderr(&o));
    println!(
        "{} with {} {}:\n{theirs}",
        program.join(" "),
        tool_args.join(" "),
        geometry.join(" ")
    );
    assert!(
        theirs.starts_with("I   refs:") && theirs.contains("LL miss rate:"),
        "{theirs}"
    );
    (ours != theirs)
        .then(|| format!("{tool_args:?} {geometry:?}:\nours:\n{ours}\ncachegrind:\n{theirs}"))
}

#[test]
fn one_pass_summary_equals_valgrind_cachegrinds() {
    if !cachepart_testkit::have_valgrind() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = test_program(d);
    let failures: Vec<String> = GEOMETRIES
        .into_iter()
        .filter_map(|g| one_pass_against_cachegrind(d, &program, g, &[], &[]))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `--tool cpgrind`: cachepart's own valgrind tool gives cachegrind's
/// summary too. cachepart runs valgrind with `VALGRIND_LIB` set to the
/// tool's directory, which the program sees in its environment (and so on
/// its stack): cachegrind runs with the same value, and both with the
/// same cache directory.
#[test]
fn one_pass_summary_with_cpgrind_equals_valgrind_cachegrinds() {
    if !cachepart_testkit::have_valgrind() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cache = d.join("cache");
    let opts = cachepart_capture::CaptureOptions {
        tool_dir: Some(cache.join("valgrind-tool")),
        ..Default::default()
    };
    let lib = match cachepart_capture::cpgrind_lib(&opts) {
        Ok(lib) => lib,
        Err(e) => {
            eprintln!("skipped: cpgrind cannot be built here: {e}");
            return;
        }
    };
    let program = test_program(d);
    let env = [
        ("CACHEPART_CACHE_DIR", cache.as_path()),
        ("VALGRIND_LIB", lib.as_path()),
    ];
    let failures: Vec<String> = GEOMETRIES
        .into_iter()
        .filter_map(|g| one_pass_against_cachegrind(d, &program, g, &["--tool", "cpgrind"], &env))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_capture_tool_with_a_trace_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.cpt");
    write_trace(&t, &records());
    let o = cachepart(&[
        "sim",
        "cachegrind",
        t.to_str().unwrap(),
        "--tool",
        "cpgrind",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--tool cpgrind: the capture tool is for a command after `--`"),
        "{}",
        stderr(&o)
    );
}

/// Every entry of `dir` (the capture's `$TMPDIR`).
fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}

#[test]
fn interrupted_or_failed_capture_leaves_no_fifo_directory() {
    if !cachepart_testkit::have_valgrind() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // valgrind cannot start a file that is not executable: an error after
    // the FIFO was made
    let script = tmp.path().join("not-executable");
    std::fs::write(&script, "#!/bin/sh\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(["sim", "cachegrind", "--"])
        .arg(&script)
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert_eq!(entries(tmp.path()), vec![script.clone()], "{}", stderr(&o));
    std::fs::remove_file(&script).unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(["sim", "cachegrind", "--", "sh", "-c", "while :; do :; done"])
        .env("TMPDIR", tmp.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while entries(tmp.path()).is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "no FIFO directory appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("cachepart did not end within 10 s of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let o = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(130), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "no summary after an interruption");
    assert!(
        entries(tmp.path()).is_empty(),
        "left behind: {:?}",
        entries(tmp.path())
    );
}
