//! Dangerous writes: every command that writes a file, pointed at a
//! character device, a symlink, a FIFO or `-`, and at one of its own inputs
//! or at another output of the same command. Devices, links and FIFOs are
//! made in a temporary directory, never the machine's own. For each case:
//! no panic, the exit status, the option or file named in the message, the
//! special file still what it was, and no temporary left behind.

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

mod support;

fn cachepart(dir: &Path, args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("the cachepart binary runs")
}

const PLATFORM: &str = r#"name = "tiny"
cores = 1
core.l1i = { size-bytes = 4096, ways = 4, line-bytes = 64 }
core.l1d = { size-bytes = 4096, ways = 4, line-bytes = 64 }
llc = { size-bytes = 131072, ways = 8, line-bytes = 64 }
memory = { size-bytes = 67108864 }
"#;

const SCENARIO: &str = r#"platform = "xeon-5160"
seed = 7
interval-cycles = 200_000
instructions = 100_000
[[app]]
name = "light"
synth = { seed = 1, accesses = 20_000, pattern = { class = "light", working-set-bytes = 8192 } }
"#;

/// A scenario that reads a platform file, a generator file and a trace.
const SCENARIO_FILES: &str = r#"platform = "platform.toml"
interval-cycles = 200_000
instructions = 100_000
[[app]]
name = "g"
generator = "gen.toml"
[[app]]
name = "t"
trace = "t.cpt"
"#;

const GEN: &str =
    "seed = 2\naccesses = 20000\n[pattern]\nclass = \"light\"\nworking-set-bytes = 8192\n";

/// A directory with the inputs of every writing command.
struct Fixture {
    dir: TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("gen.toml"), GEN).unwrap();
        std::fs::write(d.join("platform.toml"), PLATFORM).unwrap();
        std::fs::write(d.join("scenario.toml"), SCENARIO).unwrap();
        std::fs::write(d.join("scenario-files.toml"), SCENARIO_FILES).unwrap();
        std::fs::write(
            d.join("m.csv"),
            "BENCH,NR_WAYS,ipc,llcmpki,llcmpkc,bandwidth_mbps\n\
             a,1,1.0,2,2,200\na,2,1.5,1,1,100\nb,1,0.5,4,4,400\nb,2,0.6,3,3,300\n",
        )
        .unwrap();
        std::fs::write(d.join("w.csv"), "a,b\n").unwrap();
        std::fs::write(d.join("t.din"), "0 1000\n1 2000\n2 3000\n").unwrap();
        let f = Fixture { dir };
        let o = f.run(&args(&["trace", "generate", "gen.toml", "t.cpt"]));
        assert!(o.status.success(), "{}", stderr(&o));
        f
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn run(&self, a: &[String]) -> Output {
        cachepart(self.dir.path(), a)
    }

    /// The files in the directory whose name marks a temporary.
    fn temporaries(&self) -> Vec<String> {
        std::fs::read_dir(self.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".tmp-") || n.contains(".tmp"))
            .collect()
    }
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every writing command, with `OUT` where its output path goes.
fn writers() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        (
            "profile eval",
            vec![
                "profile",
                "eval",
                "-m",
                "m.csv",
                "-w",
                "w.csv",
                "-a",
                "stock,ucp",
                "--format",
                "csv",
                "-o",
                "OUT",
            ],
        ),
        (
            "profile classify",
            vec!["profile", "classify", "-m", "m.csv", "-o", "OUT"],
        ),
        (
            "profile from-trace",
            vec![
                "profile",
                "from-trace",
                "--platform",
                "platform.toml",
                "t.cpt",
                "-o",
                "OUT",
            ],
        ),
        (
            "sim run",
            vec![
                "sim",
                "run",
                "scenario.toml",
                "--no-alone",
                "-q",
                "-o",
                "OUT",
            ],
        ),
        (
            "sim run --samples",
            vec![
                "sim",
                "run",
                "scenario.toml",
                "--no-alone",
                "-q",
                "-o",
                "report.txt",
                "--samples",
                "OUT",
            ],
        ),
        (
            "trace generate",
            vec!["trace", "generate", "gen.toml", "OUT"],
        ),
        (
            "trace convert",
            vec!["trace", "convert", "--from", "din", "t.din", "OUT"],
        ),
    ]
}

fn with_out(a: &[&str], out: &str) -> Vec<String> {
    a.iter()
        .map(|s| {
            if *s == "OUT" {
                out.to_string()
            } else {
                s.to_string()
            }
        })
        .collect()
}

fn assert_no_panic(name: &str, o: &Output) {
    assert_ne!(o.status.code(), Some(101), "{name} panicked: {}", stderr(o));
    assert!(!stderr(o).contains("panicked"), "{name}: {}", stderr(o));
}

#[test]
fn a_symlink_is_written_through_to_its_target() {
    let f = Fixture::new();
    for (name, a) in writers() {
        let target = format!("target-{}.csv", name.replace(' ', "-"));
        let link = format!("link-{}.csv", name.replace(' ', "-"));
        std::os::unix::fs::symlink(&target, f.path(&link)).unwrap();
        let o = f.run(&with_out(&a, &link));
        assert_no_panic(name, &o);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let meta = std::fs::symlink_metadata(f.path(&link)).unwrap();
        assert!(
            meta.file_type().is_symlink(),
            "{name}: the link was replaced"
        );
        let len = std::fs::metadata(f.path(&target)).unwrap().len();
        assert!(len > 0, "{name}: the target is empty");
        assert!(f.temporaries().is_empty(), "{name}: {:?}", f.temporaries());
    }
}

#[test]
fn a_fifo_is_written_in_place() {
    let f = Fixture::new();
    for (name, a) in writers() {
        let fifo = f.path("pipe.csv");
        nix_mkfifo(&fifo);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                std::fs::File::open(&fifo)
                    .unwrap()
                    .read_to_end(&mut bytes)
                    .unwrap();
                bytes.len()
            })
        };
        let o = f.run(&with_out(&a, "pipe.csv"));
        assert_no_panic(name, &o);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let n = reader.join().unwrap();
        assert!(n > 0, "{name}: nothing came through the FIFO");
        let meta = std::fs::symlink_metadata(&fifo).unwrap();
        assert!(meta.file_type().is_fifo(), "{name}: the FIFO was replaced");
        std::fs::remove_file(&fifo).unwrap();
        assert!(f.temporaries().is_empty(), "{name}: {:?}", f.temporaries());
    }
}

/// Makes `path` the character device 1,`minor` (3: null, 7: full) with
/// mknod; `false`, with a `SKIPPED` line, where mknod is not allowed
/// (not root).
fn mknod_char(path: &Path, minor: &str) -> bool {
    let made = Command::new("mknod")
        .arg(path)
        .args(["c", "1", minor])
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        eprintln!("SKIPPED: mknod is not allowed here");
    }
    made
}

/// A character device 1,3 (a private /dev/null) made with mknod in the
/// temporary directory; skipped
/// with a `SKIPPED` line where mknod is not allowed (not root).
#[test]
fn a_character_device_is_written_in_place() {
    let f = Fixture::new();
    let dev = f.path("null.csv");
    if !mknod_char(&dev, "3") {
        return;
    }
    for (name, a) in writers() {
        let o = f.run(&with_out(&a, "null.csv"));
        assert_no_panic(name, &o);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let meta = std::fs::symlink_metadata(&dev).unwrap();
        assert!(
            meta.file_type().is_char_device(),
            "{name}: the device was replaced"
        );
        assert!(f.temporaries().is_empty(), "{name}: {:?}", f.temporaries());
    }
}

/// Found by a robustness probe: `trace convert` blamed its input for a
/// write error ("a.cpt: I/O error: No space left on device") and `trace
/// generate` named no file. A device that refuses every write (as
/// /dev/full) is named as the output by every command.
#[test]
fn a_write_error_names_the_output() {
    let f = Fixture::new();
    let dev = f.path("full.csv");
    if !mknod_char(&dev, "7") {
        return;
    }
    for (name, a) in writers() {
        let o = f.run(&with_out(&a, "full.csv"));
        assert_no_panic(name, &o);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("full.csv: No space left on device"),
            "{name}: {e}"
        );
    }
    // standard output on the device
    let o = Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(["trace", "convert", "--from", "cpt", "t.cpt", "-"])
        .current_dir(f.dir.path())
        .stdout(std::fs::OpenOptions::new().write(true).open(&dev).unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("error: OUTPUT -: No space left on device"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn dash_writes_to_stdout() {
    let f = Fixture::new();
    for (name, a) in writers() {
        let o = f.run(&with_out(&a, "-"));
        assert_no_panic(name, &o);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert!(!o.stdout.is_empty(), "{name}: nothing on stdout");
        assert!(!f.path("-").exists(), "{name}: wrote a file named -");
    }
}

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let f = Fixture::new();
    let cases: Vec<(&str, Vec<&str>, &str)> = vec![
        (
            "profile eval",
            vec![
                "profile", "eval", "-m", "m.csv", "-w", "w.csv", "-o", "m.csv",
            ],
            "m.csv",
        ),
        (
            "profile eval (workloads)",
            vec![
                "profile", "eval", "-m", "m.csv", "-w", "w.csv", "-o", "w.csv",
            ],
            "w.csv",
        ),
        (
            "profile classify",
            vec!["profile", "classify", "-m", "m.csv", "-o", "m.csv"],
            "m.csv",
        ),
        (
            "profile from-trace",
            vec![
                "profile",
                "from-trace",
                "--platform",
                "platform.toml",
                "t.cpt",
                "-o",
                "t.cpt",
            ],
            "t.cpt",
        ),
        (
            "sim run",
            vec!["sim", "run", "scenario.toml", "-o", "scenario.toml"],
            "scenario.toml",
        ),
        (
            "sim run (its platform file)",
            vec!["sim", "run", "scenario-files.toml", "-o", "platform.toml"],
            "platform.toml",
        ),
        (
            "sim run (a generator file)",
            vec!["sim", "run", "scenario-files.toml", "-o", "gen.toml"],
            "gen.toml",
        ),
        (
            "sim run (a trace)",
            vec!["sim", "run", "scenario-files.toml", "-o", "t.cpt"],
            "t.cpt",
        ),
        (
            "sim throttle (its platform file)",
            vec![
                "sim",
                "throttle",
                "scenario-files.toml",
                "-o",
                "platform.toml",
            ],
            "platform.toml",
        ),
        (
            "trace generate",
            vec!["trace", "generate", "gen.toml", "gen.toml"],
            "gen.toml",
        ),
        (
            "trace convert",
            vec!["trace", "convert", "--from", "cpt", "t.cpt", "t.cpt"],
            "t.cpt",
        ),
    ];
    for (name, a, input) in cases {
        let before = std::fs::read(f.path(input)).unwrap();
        let o = f.run(&args(&a));
        assert_no_panic(name, &o);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains(input) && e.contains("is also an input"),
            "{name}: {e}"
        );
        assert_eq!(
            std::fs::read(f.path(input)).unwrap(),
            before,
            "{name}: the input changed"
        );
        assert!(o.stdout.is_empty(), "{name}: wrote to stdout");
        assert!(f.temporaries().is_empty(), "{name}: {:?}", f.temporaries());
    }
}

#[test]
fn an_input_reached_through_a_symlink_is_refused_too() {
    let f = Fixture::new();
    std::os::unix::fs::symlink("gen.toml", f.path("alias.toml")).unwrap();
    let o = f.run(&args(&["trace", "generate", "gen.toml", "alias.toml"]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("is also an input"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(f.path("gen.toml")).unwrap(), GEN);
}

#[test]
fn two_outputs_on_one_file_are_refused() {
    let f = Fixture::new();
    let cases: Vec<(&str, Vec<&str>, &str)> = vec![
        (
            "profile eval -o X --chart X",
            vec![
                "profile", "eval", "-m", "m.csv", "-w", "w.csv", "-a", "stock", "-o", "x.png",
                "--chart", "x.png",
            ],
            "--chart",
        ),
        (
            "sim run -o X --samples X",
            vec![
                "sim",
                "run",
                "scenario.toml",
                "-o",
                "x.csv",
                "--samples",
                "./x.csv",
            ],
            "--samples",
        ),
        (
            "sim run --samples - (stdout taken)",
            vec!["sim", "run", "scenario.toml", "--samples", "-"],
            "--samples",
        ),
    ];
    for (name, a, option) in cases {
        let o = f.run(&args(&a));
        assert_no_panic(name, &o);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(option) && stderr(&o).contains("same file"),
            "{name}: {}",
            stderr(&o)
        );
        assert!(!f.path("x.png").exists() && !f.path("x.csv").exists());
        assert!(f.temporaries().is_empty(), "{name}: {:?}", f.temporaries());
    }
}

#[test]
fn a_directory_as_output_is_refused_by_name() {
    let f = Fixture::new();
    std::fs::create_dir(f.path("d.csv")).unwrap();
    for (name, a) in writers() {
        let o = f.run(&with_out(&a, "d.csv"));
        assert_no_panic(name, &o);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("d.csv: is a directory"),
            "{name}: {}",
            stderr(&o)
        );
        assert_eq!(std::fs::read_dir(f.path("d.csv")).unwrap().count(), 0);
    }
}

/// An output in a directory that does not exist is refused by name when
/// the command starts, not after its work when the result is written.
#[test]
fn an_output_in_a_missing_directory_is_refused_up_front() {
    let f = Fixture::new();
    for (name, a) in writers() {
        let o = f.run(&with_out(&a, "missing/out.csv"));
        assert_no_panic(name, &o);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("missing/out.csv: the directory missing does not exist"),
            "{name}: {}",
            stderr(&o)
        );
        assert!(!f.path("missing").exists(), "{name}");
    }
}

/// mkfifo(1), from coreutils.
fn nix_mkfifo(p: &Path) {
    let ok = Command::new("mkfifo")
        .arg(p)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "mkfifo {}", p.display());
}

#[test]
fn a_runaway_generate_is_refused_before_writing() {
    let f = Fixture::new();
    std::fs::write(
        f.path("huge.toml"),
        "seed = 1\naccesses = 1000000000000000000\n[pattern]\nclass = \"light\"\nworking-set-bytes = 8192\n",
    )
    .unwrap();
    let o = f.run(&args(&["trace", "generate", "huge.toml", "huge.cpt"]));
    assert_no_panic("generate 1e18", &o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("OUTPUT huge.cpt") && stderr(&o).contains("bytes free"),
        "{}",
        stderr(&o)
    );
    assert!(!f.path("huge.cpt").exists());
    assert!(f.temporaries().is_empty(), "{:?}", f.temporaries());
}

#[test]
fn curves_writes_with_dash_o_and_refuses_its_trace() {
    let f = Fixture::new();
    let o = f.run(&args(&[
        "curves", "t.cpt", "--format", "csv", "-o", "c.csv",
    ]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    assert!(
        std::fs::read_to_string(f.path("c.csv"))
            .unwrap()
            .lines()
            .count()
            > 1
    );
    let before = std::fs::read(f.path("t.cpt")).unwrap();
    let o = f.run(&args(&["curves", "t.cpt", "-o", "t.cpt"]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("is also an input"), "{}", stderr(&o));
    assert_eq!(std::fs::read(f.path("t.cpt")).unwrap(), before);
}

/// An experiment writes its three files all or nothing: with `e.md`
/// blocked by a directory nothing is replaced (`e.csv` keeps its old
/// content) and no temporary is left.
#[test]
fn an_experiment_writes_all_or_nothing() {
    let f = Fixture::new();
    std::fs::write(f.path("e.toml"), support::EXPERIMENT).unwrap();
    let out = f.path("out");
    std::fs::create_dir_all(out.join("e.md")).unwrap();
    std::fs::write(out.join("e.csv"), "old\n").unwrap();
    let args: Vec<String> = ["experiment", "run", "e.toml", "--out", "out", "--quiet"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let o = f.run(&args);
    assert_no_panic("experiment run", &o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("e.md") && stderr(&o).contains("directory"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(out.join("e.csv")).unwrap(), "old\n");
    let mut left: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["e.csv", "e.md"]);
    // Unblocked, all three are written.
    std::fs::remove_dir(out.join("e.md")).unwrap();
    let o = f.run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    for n in ["e.csv", "e.png", "e.md"] {
        assert!(out.join(n).is_file(), "{n}");
    }
    assert_ne!(std::fs::read_to_string(out.join("e.csv")).unwrap(), "old\n");
}

/// Two experiments of one name would write the same three files, and an
/// output may be one of the experiment files: both are refused before
/// anything runs, and nothing is written or replaced.
#[test]
fn experiments_whose_outputs_collide_or_are_inputs_are_refused_before_running() {
    let f = Fixture::new();
    for d in ["a", "b", "o2", "out"] {
        std::fs::create_dir(f.path(d)).unwrap();
    }
    std::fs::write(f.path("a/x.toml"), support::EXPERIMENT).unwrap();
    std::fs::write(f.path("b/x.toml"), support::EXPERIMENT).unwrap();
    std::fs::write(f.path("o2/e1.md"), support::EXPERIMENT).unwrap();
    let cases: Vec<(&str, Vec<&str>, Vec<&str>)> = vec![
        (
            "two files named x",
            vec!["experiment", "run", "a/x.toml", "b/x.toml", "--out", "out"],
            vec!["a/x.toml and b/x.toml", "\"x\"", "out/x.csv", "`name`"],
        ),
        (
            "the write-up on its input",
            vec!["experiment", "run", "o2/e1.md", "--out", "o2"],
            vec!["--out o2/e1.md: is also an input (o2/e1.md)"],
        ),
    ];
    for (name, a, words) in cases {
        let o = f.run(&args(&a));
        assert_no_panic(name, &o);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
        for w in words {
            assert!(stderr(&o).contains(w), "{name}: {}", stderr(&o));
        }
        // refused before the first run: its progress line never came
        assert!(!stderr(&o).contains("runs in"), "{name}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{name}: wrote to stdout");
    }
    assert_eq!(std::fs::read_dir(f.path("out")).unwrap().count(), 0);
    assert_eq!(
        std::fs::read_to_string(f.path("o2/e1.md")).unwrap(),
        support::EXPERIMENT
    );
    assert_eq!(std::fs::read_dir(f.path("o2")).unwrap().count(), 1);
}

/// An `--out` that is a file is refused by name before anything runs, not
/// with the OS's `File exists`.
#[test]
fn an_experiment_out_that_is_a_file_is_refused_by_name() {
    let f = Fixture::new();
    std::fs::write(f.path("e.toml"), support::EXPERIMENT).unwrap();
    std::fs::write(f.path("afile"), "keep\n").unwrap();
    for out in ["afile", "afile/sub"] {
        let o = f.run(&args(&["experiment", "run", "e.toml", "--out", out]));
        assert_no_panic(out, &o);
        assert_eq!(o.status.code(), Some(1), "{out}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains(&format!("--out {out}: "))
                && e.contains("afile")
                && e.contains("is not a directory")
                && !e.contains("os error"),
            "{out}: {e}"
        );
        assert!(!e.contains("runs in"), "{out}: ran first: {e}");
    }
    assert_eq!(std::fs::read_to_string(f.path("afile")).unwrap(), "keep\n");
    assert!(f.temporaries().is_empty(), "{:?}", f.temporaries());
}
