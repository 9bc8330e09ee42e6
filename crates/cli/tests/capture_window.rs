//! `trace capture --skip N --instructions M` on a real program: the
//! window's records are those of the whole run's trace from the first
//! record past N instructions until M more are recorded (compared kind by
//! kind, and address by address where the two runs' layouts agree), the
//! capture succeeds although it stopped the program, and a skip past the
//! program's end is refused with no file left.

mod support;

use std::path::Path;

use support::{cachepart_cached as run, program_runs as have};

use cachepart::trace::{Record, TraceFile};

fn records(p: &Path) -> Vec<Record> {
    TraceFile::open(p).unwrap().read_all_parallel().unwrap()
}

#[test]
fn a_window_is_the_slice_of_the_whole_trace() {
    if !have("qemu-x86_64") || !have("gcc") {
        // CI installs both (scripts/setup.sh); say so loudly elsewhere
        eprintln!("SKIPPED: qemu-x86_64 or gcc is not installed (apt-get install qemu-user gcc)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.txt"), "cachepart window test\n".repeat(20_000)).unwrap();
    let capture = |out: &str, extra: &[&str]| {
        let mut args = vec!["trace", "capture", "--tool", "qemu", "-o", out];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "xz", "-6", "-k", "-c", "in.txt"]);
        let o = run(d, &args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o
    };
    capture("whole.cpt", &[]);
    let (skip, n) = (1_000_000u64, 500_000u64);
    let o = capture(
        "win.cpt",
        &[
            "--skip",
            &skip.to_string(),
            "--instructions",
            &n.to_string(),
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("stopped after its window"), "{err}");

    let whole = records(&d.join("whole.cpt"));
    let win = records(&d.join("win.cpt"));
    // the slice of the whole trace the window should hold
    let mut seen = 0u64;
    let start = whole
        .iter()
        .position(|r| {
            seen += r.instructions();
            seen > skip
        })
        .unwrap();
    let mut kept = 0u64;
    let len = whole[start..]
        .iter()
        .position(|r| {
            kept += r.instructions();
            kept >= n
        })
        .unwrap()
        + 1;
    let slice = &whole[start..start + len];
    assert_eq!(win.len(), slice.len());
    let kinds = |v: &[Record]| {
        v.iter()
            .map(|r| (r.kind(), r.instructions()))
            .collect::<Vec<_>>()
    };
    assert_eq!(kinds(&win), kinds(slice));
    let recorded: u64 = win.iter().map(|r| r.instructions()).sum();
    assert!(recorded >= n && recorded < n + 64, "{recorded}");
}

#[test]
fn a_skip_past_the_end_is_refused_and_leaves_nothing() {
    if !have("qemu-x86_64") || !have("gcc") {
        eprintln!("SKIPPED: qemu-x86_64 or gcc is not installed (apt-get install qemu-user gcc)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = run(
        d,
        &[
            "trace",
            "capture",
            "--tool",
            "qemu",
            "--skip",
            "1000000000000",
            "-o",
            "x.cpt",
            "--",
            "true",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("to skip") && err.contains("nothing was recorded"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "cache")
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let o = run(
        d,
        &[
            "trace",
            "capture",
            "--instructions",
            "0",
            "-o",
            "x.cpt",
            "--",
            "true",
        ],
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("--instructions 0"));
}
