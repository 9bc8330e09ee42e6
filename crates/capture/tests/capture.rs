//! `capture_lackey` and `capture_qemu` end to end: real valgrind runs
//! (skipped with a `SKIPPED` line when valgrind is absent) compared with
//! lackey's text of a second, separate run of the same program, a fake
//! valgrind for the failures a real one rarely produces, and real qemu-user
//! runs (skipped with a `SKIPPED` line when qemu-user or gcc is absent)
//! compared with lackey's counts.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use cachepart_capture::{capture_lackey, capture_qemu, CaptureError, CaptureOptions};
use cachepart_trace::{convert, info, Event, Reader, TraceFormat};
use common::{counts, have_qemu, listing, meta, qemu_opts, tmpdir, words};

#[test]
fn capture_equals_converting_a_separate_lackey_run() {
    if !cachepart_testkit::have_valgrind() {
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
    if !cachepart_testkit::have_valgrind() {
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
    if !cachepart_testkit::have_valgrind() {
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
    assert_eq!(s.tool_version, "valgrind-fake");
    let i = info(&cpt).unwrap();
    assert!(i
        .meta
        .contains(&("command".to_string(), r"sh -c 'it'\''s'".to_string())));
    assert_eq!(listing(&d), ["fake-valgrind", "t.cpt"]);
}

#[test]
fn progress_counts_what_the_capture_saw_and_kept() {
    use cachepart_capture::CaptureProgress;
    use std::sync::Arc;
    let d = tmpdir("fake-progress");
    // 3 instructions with 4 data accesses, then 2 more instructions
    let log = r"printf 'I  0400,3\n L 1000,8\n S 1008,4\nI  0403,2\n M 1010,2\n L 1018,8\nI  0405,1\nI  0406,1\n' > $log";
    for (skip, limit, seen, kept) in [(0, None, 4, 8), (1, Some(1), 4, 1)] {
        let progress = Arc::new(CaptureProgress::default());
        let opts = CaptureOptions {
            valgrind: fake_valgrind(&d, log, 0),
            progress: Some(Arc::clone(&progress)),
            skip,
            instructions: limit,
            ..CaptureOptions::default()
        };
        let cpt = d.join("t.cpt");
        let s = capture_lackey(&words(&["true"]), &cpt, &opts).unwrap();
        assert_eq!(progress.records_kept(), s.records(), "skip {skip}");
        assert_eq!(progress.records_kept(), kept, "skip {skip}");
        assert_eq!(progress.instructions_seen(), seen, "skip {skip}");
        std::fs::remove_file(&cpt).unwrap();
    }
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

#[test]
fn qemu_capture_of_real_programs_is_plausible() {
    if !have_qemu() {
        return;
    }
    for (name, cmd) in [("true", &["/bin/true"][..]), ("ls", &["ls", "/usr"][..])] {
        let d = tmpdir(&format!("qemu-{name}"));
        let cpt = d.join("q.cpt");
        let s = capture_qemu(&words(cmd), &cpt, &qemu_opts(false)).unwrap();
        assert!(s.success(), "{name}: {:?}", s.status);
        let c = &s.counts;
        assert!(c.loads > 10_000 && c.stores > 5_000, "{name}: {c:?}");
        assert_eq!((c.ifetches, c.modifies), (0, 0), "{name}");
        // loads outnumber stores in compiled code
        assert!(c.loads > c.stores, "{name}: {c:?}");
        // a few instructions per access, as in any program
        let per_access = c.instructions as f64 / s.accesses() as f64;
        assert!((0.8..4.0).contains(&per_access), "{name}: {per_access}");
        assert_eq!(info(&cpt).unwrap().counts, s.counts, "{name}");
        assert_eq!(meta(&cpt, "tool").as_deref(), Some("qemu"));
        assert_eq!(meta(&cpt, "command"), Some(cmd.join(" ")));
        assert!(meta(&cpt, "qemu-version").unwrap().contains(" version "));
        assert_eq!(meta(&cpt, "ifetch").as_deref(), Some("no"));
        // every record is a valid access of a plausible size, or an escape
        // for a long gap (single-threaded: no thread switch)
        for r in Reader::new(std::fs::File::open(&cpt).unwrap()).unwrap() {
            let r = r.unwrap();
            match r.as_event() {
                None => assert!([1, 2, 4, 8, 16, 32, 64].contains(&r.size()), "{r:?}"),
                Some(e) => assert!(matches!(e, Event::InstrGap(_)), "{e:?}"),
            }
        }

        // qemu-user places the guest's memory deterministically: a second
        // run gives the same file, byte for byte, also with progress shown
        // (its tally takes the runs of records the decoder hands on)
        let again = d.join("q-again.cpt");
        let progress = std::sync::Arc::new(cachepart_capture::CaptureProgress::default());
        let shown = CaptureOptions {
            progress: Some(std::sync::Arc::clone(&progress)),
            ..qemu_opts(false)
        };
        let s1 = capture_qemu(&words(cmd), &again, &shown).unwrap();
        assert_eq!(s1.counts, s.counts, "{name}");
        assert_eq!(progress.records_kept(), s.records(), "{name}");
        assert_eq!(progress.instructions_seen(), c.instructions, "{name}");
        assert!(
            std::fs::read(&again).unwrap() == std::fs::read(&cpt).unwrap(),
            "{name}: two captures differ"
        );

        // a second run, with instruction fetches: the same instructions,
        // one fetch each, and the same data accesses
        let cpt2 = d.join("q-ifetch.cpt");
        let s2 = capture_qemu(&words(cmd), &cpt2, &qemu_opts(true)).unwrap();
        assert_eq!(s2.counts.ifetches, s2.counts.instructions, "{name}");
        assert_eq!(meta(&cpt2, "ifetch").as_deref(), Some("yes"));
        let near = |a: u64, b: u64| (a as f64 / b as f64 - 1.0).abs() < 0.02;
        assert!(
            near(s2.counts.instructions, c.instructions),
            "{name}: {} vs {}",
            s2.counts.instructions,
            c.instructions
        );
        assert!(near(s2.counts.loads, c.loads), "{name}");
        assert!(near(s2.counts.stores, c.stores), "{name}");

        // lackey on the same program: the same order of magnitude
        if cachepart_testkit::have_valgrind() {
            let lk = d.join("l.cpt");
            let l = capture_lackey(&words(cmd), &lk, &CaptureOptions::default()).unwrap();
            let ratio = c.instructions as f64 / l.instructions() as f64;
            let data = (c.loads + c.stores) as f64
                / (l.counts.loads + l.counts.stores + l.counts.modifies) as f64;
            eprintln!(
                "{name}: qemu/lackey instructions {} / {} = {ratio:.3}, data accesses ratio {data:.3}",
                c.instructions,
                l.instructions()
            );
            assert!((0.5..2.0).contains(&ratio), "{name}: {ratio}");
            assert!((0.5..2.0).contains(&data), "{name}: {data}");
        }
    }
}

#[test]
fn qemu_failing_program_still_yields_a_trace_with_its_status() {
    if !have_qemu() {
        return;
    }
    let d = tmpdir("qemu-false");
    let cpt = d.join("false.cpt");
    let s = capture_qemu(&words(&["false"]), &cpt, &qemu_opts(false)).unwrap();
    assert_eq!(s.status.code(), Some(1));
    assert!(s.accesses() > 1000);
    assert_eq!(counts(&cpt), s.counts);
    assert_eq!(listing(&d), ["false.cpt"]);
}

#[test]
fn qemu_program_killing_itself_keeps_its_trace() {
    if !have_qemu() {
        return;
    }
    use std::os::unix::process::ExitStatusExt;
    let d = tmpdir("qemu-kill");
    let cpt = d.join("k.cpt");
    // the plugin writes its buffer before kill(), so the trace is complete
    let s = capture_qemu(
        &words(&["sh", "-c", "kill -SEGV $$"]),
        &cpt,
        &qemu_opts(false),
    )
    .unwrap();
    assert_eq!(s.status.signal(), Some(11), "{:?}", s.status);
    assert!(s.counts.loads > 10_000, "{:?}", s.counts);
    assert_eq!(counts(&cpt), s.counts);
}

#[test]
fn qemu_program_crashing_before_any_record_is_a_typed_error() {
    if !have_qemu() {
        return;
    }
    let d = tmpdir("qemu-crash");
    // a fault (not a kill) loses the plugin's buffer: qemu-user runs no
    // plugin exit callback then; no core file either
    let src = d.join("crash.c");
    std::fs::write(
        &src,
        "#include <sys/resource.h>\n\
         int main(void) {\n\
           struct rlimit r = {0, 0};\n\
           setrlimit(RLIMIT_CORE, &r);\n\
           *(volatile int *)0 = 1;\n\
           return 0;\n\
         }\n",
    )
    .unwrap();
    let exe = d.join("crash");
    let st = Command::new(CaptureOptions::default().cc)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    let cpt = d.join("k.cpt");
    let err = capture_qemu(&[exe.into_os_string()], &cpt, &qemu_opts(false)).unwrap_err();
    assert!(matches!(err, CaptureError::QemuKilled { .. }), "{err:?}");
    assert_eq!(listing(&d), ["crash", "crash.c"]);
}

#[test]
fn qemu_missing_or_unrunnable_command_is_an_error_and_leaves_nothing() {
    if !have_qemu() {
        return;
    }
    let d = tmpdir("qemu-missing");
    let cpt = d.join("m.cpt");
    for cmd in ["cachepart-no-such-command", "./no/such/program"] {
        let err = capture_qemu(&words(&[cmd, "x"]), &cpt, &qemu_opts(false)).unwrap_err();
        assert!(
            matches!(err, CaptureError::CommandNotFound { .. }),
            "{err:?}"
        );
        assert_eq!(err.to_string(), format!("command not found: {cmd}"));
    }
    let err = capture_qemu(&[], &cpt, &qemu_opts(false)).unwrap_err();
    assert!(matches!(err, CaptureError::EmptyCommand));
    // qemu-user runs ELF executables only, not scripts
    let script = d.join("script.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = capture_qemu(&[script.into_os_string()], &cpt, &qemu_opts(false)).unwrap_err();
    assert!(matches!(err, CaptureError::QemuFailed { .. }), "{err:?}");
    assert_eq!(listing(&d), ["script.sh"]);
}

#[test]
fn qemu_capture_needs_qemu_and_a_compiler() {
    let d = tmpdir("qemu-none");
    let cpt = d.join("t.cpt");
    let opts = CaptureOptions {
        qemu: d.join("no-qemu"),
        ..qemu_opts(false)
    };
    let err = capture_qemu(&words(&["true"]), &cpt, &opts).unwrap_err();
    assert!(matches!(err, CaptureError::QemuMissing { .. }), "{err:?}");
    assert!(
        err.to_string().contains("apt-get install qemu-user"),
        "{err}"
    );
    if have_qemu() {
        let opts = CaptureOptions {
            cc: d.join("no-gcc"),
            plugin_dir: Some(d.join("plugin")),
            ..qemu_opts(false)
        };
        let err = capture_qemu(&words(&["true"]), &cpt, &opts).unwrap_err();
        assert!(
            matches!(err, CaptureError::CompilerMissing { .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("apt-get install gcc"), "{err}");
    }
    assert!(!cpt.exists());
}
