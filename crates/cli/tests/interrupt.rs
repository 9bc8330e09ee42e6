//! Interrupting the long-running commands that write: SIGINT (or SIGTERM)
//! during `trace generate` (1e11 accesses), `trace convert`, `sim run`,
//! `profile from-trace`, `profile eval` (an exact solve of 18 apps) and
//! `experiment run`
//! ends cachepart with 130 (143) and leaves neither the output nor a
//! temporary file. Each run is made long (a huge trace, a huge
//! instruction count) and signalled once it is under way: for the trace
//! writers when their temporary appears, polled, not slept for.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

mod support;
use support::EXPERIMENT;

fn spawn(dir: &Path, args: &[&str], stdin: Stdio) -> Child {
    Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(args)
        .current_dir(dir)
        .stdin(stdin)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the cachepart binary runs")
}

/// The entries of `dir` other than `inputs`.
fn extra_files(dir: &Path, inputs: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !inputs.contains(&n.as_str()))
        .collect()
}

/// Waits until a temporary (`.tmp-*`) shows in `dir`, at most 30 s.
fn wait_for_temporary(dir: &Path, child: &mut Child) {
    let start = Instant::now();
    loop {
        let found = std::fs::read_dir(dir).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".tmp-")
        });
        if found {
            return;
        }
        if let Ok(Some(s)) = child.try_wait() {
            panic!("cachepart ended before its temporary appeared: {s}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no temporary after 30 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Sends `sig` and checks the exit status 128 + sig and that nothing but
/// the inputs is left in `dir`.
fn interrupt_and_check(name: &str, mut child: Child, sig: i32, dir: &Path, inputs: &[&str]) {
    // SAFETY: kill(2) on our own child's pid.
    let r = unsafe { libc::kill(child.id() as libc::pid_t, sig) };
    assert_eq!(r, 0, "kill");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{name}: still running 30 s after the signal"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(128 + sig), "{name}: {status}: {err}");
    assert!(!err.contains("panicked"), "{name}: {err}");
    let left = extra_files(dir, inputs);
    assert!(left.is_empty(), "{name}: left behind {left:?}");
}

const HUGE_GEN: &str =
    "seed = 1\naccesses = 100000000000\n[pattern]\nclass = \"light\"\nworking-set-bytes = 8192\n";

fn dir_with(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (n, t) in files {
        std::fs::write(dir.path().join(n), t).unwrap();
    }
    dir
}

#[test]
fn sigint_during_generate_leaves_nothing() {
    let dir = dir_with(&[("huge.toml", HUGE_GEN)]);
    let mut child = spawn(
        dir.path(),
        &["trace", "generate", "huge.toml", "out.cpt"],
        Stdio::null(),
    );
    wait_for_temporary(dir.path(), &mut child);
    interrupt_and_check("generate", child, libc::SIGINT, dir.path(), &["huge.toml"]);
}

#[test]
fn sigterm_during_generate_leaves_nothing() {
    let dir = dir_with(&[("huge.toml", HUGE_GEN)]);
    let mut child = spawn(
        dir.path(),
        &["trace", "generate", "huge.toml", "out.cpt"],
        Stdio::null(),
    );
    wait_for_temporary(dir.path(), &mut child);
    interrupt_and_check("generate", child, libc::SIGTERM, dir.path(), &["huge.toml"]);
}

#[test]
fn sigint_during_convert_from_a_pipe_leaves_nothing() {
    let dir = dir_with(&[]);
    let mut child = spawn(
        dir.path(),
        &["trace", "convert", "--from", "din", "-", "out.cpt"],
        Stdio::piped(),
    );
    // Keep the pipe open (the conversion never ends) and feed it some lines.
    let mut stdin = child.stdin.take().unwrap();
    for i in 0..1000 {
        writeln!(stdin, "0 {:x}", i * 64).unwrap();
    }
    stdin.flush().unwrap();
    wait_for_temporary(dir.path(), &mut child);
    interrupt_and_check("convert", child, libc::SIGINT, dir.path(), &[]);
    drop(stdin);
}

#[test]
fn sigint_during_sim_run_leaves_nothing() {
    let scenario = "platform = \"xeon-5160\"\nseed = 7\ninterval-cycles = 200_000\n\
        instructions = 1_000_000_000_000\n[[app]]\nname = \"light\"\n\
        synth = { seed = 1, accesses = 100_000, pattern = { class = \"light\", working-set-bytes = 8192 } }\n";
    let dir = dir_with(&[("s.toml", scenario)]);
    let child = spawn(
        dir.path(),
        &[
            "sim",
            "run",
            "s.toml",
            "-q",
            "-o",
            "out.txt",
            "--samples",
            "samples.csv",
        ],
        Stdio::null(),
    );
    std::thread::sleep(Duration::from_millis(500));
    interrupt_and_check("sim run", child, libc::SIGINT, dir.path(), &["s.toml"]);
}

#[test]
fn sigint_during_experiment_run_leaves_the_old_outputs_alone() {
    // Two runs of 1e12 instructions: the experiment is still running when
    // the signal comes. The output directory holds an earlier result, which
    // must survive untouched, with nothing beside it.
    let experiment =
        EXPERIMENT.replace("instructions = 100_000", "instructions = 1_000_000_000_000");
    assert_ne!(experiment, EXPERIMENT);
    let dir = dir_with(&[("e.toml", &experiment)]);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("e.csv"), "old\n").unwrap();
    let child = spawn(
        dir.path(),
        &["experiment", "run", "e.toml", "--out", "out"],
        Stdio::null(),
    );
    std::thread::sleep(Duration::from_millis(700));
    interrupt_and_check(
        "experiment run",
        child,
        libc::SIGINT,
        dir.path(),
        &["e.toml", "out"],
    );
    assert_eq!(extra_files(&out, &["e.csv"]), Vec::<String>::new());
    assert_eq!(std::fs::read_to_string(out.join("e.csv")).unwrap(), "old\n");
}

#[test]
fn sigint_during_from_trace_leaves_nothing() {
    let gen =
        "seed = 1\naccesses = 10000\n[pattern]\nclass = \"light\"\nworking-set-bytes = 8192\n";
    let dir = dir_with(&[("t.toml", gen)]);
    let ok = Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(["trace", "generate", "t.toml", "t.cpt"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(ok.success());
    let child = spawn(
        dir.path(),
        &[
            "profile",
            "from-trace",
            "--platform",
            "xeon-5160",
            "--instructions",
            "1000000000000",
            "t.cpt",
            "-o",
            "out.csv",
        ],
        Stdio::null(),
    );
    std::thread::sleep(Duration::from_millis(500));
    interrupt_and_check(
        "from-trace",
        child,
        libc::SIGINT,
        dir.path(),
        &["t.toml", "t.cpt"],
    );
}

/// A metrics table of `n` made-up programs on 11 ways (monotone curves),
/// and their names.
fn big_table(n: usize) -> (String, String) {
    let mut csv = String::from("BENCH,NR_WAYS,ipc,llcmpki,llcmpkc,bandwidth_mbps\n");
    let mut names = Vec::new();
    for i in 0..n {
        let sens = 0.05 + 0.07 * (i % 13) as f64;
        let base = 0.4 + 0.1 * (i % 7) as f64;
        for w in 1..=11 {
            let ipc = base * (1.0 + sens * (w as f64).ln());
            let mpkc = (1.0 + i as f64) / (1.0 + sens * (w as f64 - 1.0)) + 0.05;
            csv += &format!(
                "p{i},{w},{ipc:.6},{:.6},{mpkc:.6},{:.3}\n",
                mpkc / ipc,
                mpkc * 150.0
            );
        }
        names.push(format!("p{i}"));
    }
    (csv, names.join(","))
}

#[test]
fn sigint_during_profile_eval_leaves_nothing() {
    let (csv, apps) = big_table(18);
    let dir = dir_with(&[("m.csv", &csv)]);
    let child = spawn(
        dir.path(),
        &[
            "profile",
            "eval",
            "-m",
            "m.csv",
            "--apps",
            &apps,
            "-a",
            "stock,optc-unf",
            "-q",
            "-o",
            "out.txt",
            "--chart",
            "chart.png",
        ],
        Stdio::null(),
    );
    // the subset tables of 18 apps alone take about 2 s
    std::thread::sleep(Duration::from_millis(500));
    interrupt_and_check("profile eval", child, libc::SIGINT, dir.path(), &["m.csv"]);
}
