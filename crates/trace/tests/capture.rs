//! `capture_lackey` end to end: real valgrind runs (skipped with a
//! `SKIPPED` line when valgrind is absent) compared with lackey's text of
//! a second, separate run of the same program, and a fake valgrind for the
//! failures a real one rarely produces.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cachepart_trace::{
    capture_lackey, convert, info, CaptureError, CaptureOptions, Counts, TraceFormat,
};

fn tmpdir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("capture-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn have_valgrind() -> bool {
    let ok = Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("SKIPPED: valgrind is not installed (apt-get install valgrind)");
    }
    ok
}

fn words(ws: &[&str]) -> Vec<OsString> {
    ws.iter().map(OsString::from).collect()
}

/// Names of the files in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Counts of the trace at `path`, as `trace info` computes them.
fn counts(path: &Path) -> Counts {
    info(path).unwrap().counts
}

#[test]
fn capture_equals_converting_a_separate_lackey_run() {
    if !have_valgrind() {
        return;
    }
    for (name, cmd) in [("true", &["/bin/true"][..]), ("ls", &["ls", "/usr"][..])] {
        let d = tmpdir(name);
        let cpt = d.join("captured.cpt");
        let s = capture_lackey(&words(cmd), &cpt, &CaptureOptions::default()).unwrap();
        assert!(s.success(), "{name}: {:?}", s.status);
        assert!(s.accesses() > 10_000, "{name}: {s:?}");
        assert_eq!(s.records(), s.written.records);
        assert_eq!(s.instructions(), s.counts.ifetches);

        // the file passes `info`, with the same counts and the metadata
        let i = info(&cpt).unwrap();
        assert_eq!(i.counts, s.counts, "{name}");
        let meta = |k: &str| {
            i.meta
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(meta("tool").as_deref(), Some("lackey"));
        assert_eq!(meta("source-format").as_deref(), Some("lackey"));
        assert_eq!(meta("command"), Some(cmd.join(" ")));
        assert!(meta("valgrind-version").unwrap().starts_with("valgrind-"));

        // lackey is deterministic: a second run's text, converted, counts the same
        let text = d.join("lackey.txt");
        let st = Command::new("valgrind")
            .args(["--tool=lackey", "--trace-mem=yes"])
            .arg(format!("--log-file={}", text.display()))
            .args(cmd)
            .status()
            .unwrap();
        assert!(st.success());
        let converted = d.join("converted.cpt");
        convert(&text, TraceFormat::Lackey, &converted).unwrap();
        assert_eq!(counts(&converted), s.counts, "{name}");

        // and lackey's own instruction count agrees
        let log = std::fs::read_to_string(&text).unwrap();
        let guest: u64 = log
            .lines()
            .find_map(|l| l.split("guest instrs:").nth(1))
            .map(|n| n.trim().replace(',', "").parse().unwrap())
            .unwrap();
        assert_eq!(s.instructions(), guest, "{name}");
        assert_eq!(
            listing(&d),
            ["captured.cpt", "converted.cpt", "lackey.txt"],
            "{name}"
        );
    }
}

#[test]
fn failing_program_still_yields_a_trace_with_its_status() {
    if !have_valgrind() {
        return;
    }
    let d = tmpdir("false");
    let cpt = d.join("false.cpt");
    let s = capture_lackey(&words(&["false"]), &cpt, &CaptureOptions::default()).unwrap();
    assert!(!s.success());
    assert_eq!(s.status.code(), Some(1));
    assert!(s.accesses() > 1000);
    assert_eq!(counts(&cpt), s.counts);
    assert_eq!(listing(&d), ["false.cpt"]);
}

#[test]
fn missing_command_is_an_error_and_leaves_nothing() {
    if !have_valgrind() {
        return;
    }
    let d = tmpdir("missing");
    let cpt = d.join("m.cpt");
    for cmd in ["cachepart-no-such-command", "./no/such/program"] {
        let err =
            capture_lackey(&words(&[cmd, "x"]), &cpt, &CaptureOptions::default()).unwrap_err();
        assert!(
            matches!(err, CaptureError::CommandNotFound { .. }),
            "{err:?}"
        );
        assert_eq!(err.to_string(), format!("command not found: {cmd}"));
    }
    let err = capture_lackey(&[], &cpt, &CaptureOptions::default()).unwrap_err();
    assert!(matches!(err, CaptureError::EmptyCommand));
    assert!(listing(&d).is_empty(), "{:?}", listing(&d));
}

/// A stand-in for valgrind: prints a version and writes `body` to the
/// `--log-file`, then exits with `code`.
fn fake_valgrind(dir: &Path, body: &str, code: i32) -> PathBuf {
    let path = dir.join("fake-valgrind");
    let script = format!(
        "#!/bin/sh\n\
         if [ \"$1\" = --version ]; then echo valgrind-fake; exit 0; fi\n\
         for a; do case $a in --log-file=*) log=${{a#--log-file=}};; esac; done\n\
         {body}\n\
         exit {code}\n"
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn fake_valgrind_output_is_converted() {
    let d = tmpdir("fake-ok");
    let opts = CaptureOptions {
        valgrind: fake_valgrind(
            &d,
            r"printf '==1== Lackey\nI  0400,3\n L 1000,8\n S 1008,4\n M 1010,2\n==1== done\n' > $log",
            3,
        ),
        ..CaptureOptions::default()
    };
    let cpt = d.join("t.cpt");
    let s = capture_lackey(&words(&["sh", "-c", "it's"]), &cpt, &opts).unwrap();
    assert_eq!(s.status.code(), Some(3));
    assert_eq!(
        (
            s.records(),
            s.counts.loads,
            s.counts.stores,
            s.counts.modifies
        ),
        (4, 1, 1, 1)
    );
    assert_eq!(s.valgrind_version, "valgrind-fake");
    let i = info(&cpt).unwrap();
    assert!(i
        .meta
        .contains(&("command".to_string(), r"sh -c 'it'\''s'".to_string())));
    assert_eq!(listing(&d), ["fake-valgrind", "t.cpt"]);
}

#[test]
fn malformed_lackey_output_names_the_line_and_leaves_nothing() {
    let d = tmpdir("fake-bad");
    let opts = CaptureOptions {
        valgrind: fake_valgrind(
            &d,
            r"printf '==1== Lackey\nI  0400,3\nnot lackey\n' > $log; seq 1 200000 > $log",
            0,
        ),
        ..CaptureOptions::default()
    };
    let cpt = d.join("t.cpt");
    let err = capture_lackey(&words(&["true"]), &cpt, &opts).unwrap_err();
    assert!(matches!(err, CaptureError::Malformed(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "malformed lackey output: lackey line 3: not a lackey trace line: \"not lackey\""
    );
    assert_eq!(listing(&d), ["fake-valgrind"]);
}

#[test]
fn valgrind_that_cannot_start_the_program_is_an_error() {
    let d = tmpdir("fake-fail");
    let opts = CaptureOptions {
        valgrind: fake_valgrind(&d, "echo 'fake: cannot run' >&2", 126),
        ..CaptureOptions::default()
    };
    let cpt = d.join("t.cpt");
    let err = capture_lackey(&words(&["true"]), &cpt, &opts).unwrap_err();
    assert!(
        matches!(err, CaptureError::ValgrindFailed { ref status, .. } if status.code() == Some(126)),
        "{err:?}"
    );
    let opts = CaptureOptions {
        valgrind: fake_valgrind(&d, "", 127),
        ..CaptureOptions::default()
    };
    let err = capture_lackey(&words(&["true"]), &cpt, &opts).unwrap_err();
    assert!(
        matches!(err, CaptureError::CommandNotFound { .. }),
        "{err:?}"
    );
    assert_eq!(listing(&d), ["fake-valgrind"]);
}
