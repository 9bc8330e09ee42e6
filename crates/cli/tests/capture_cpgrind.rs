//! `trace capture --tool cpgrind` from the command line (skipped with a
//! `SKIPPED` line when valgrind or gcc is absent): a pointer chase
//! captured with dependency hints costs more stall cycles per LLC miss on
//! a platform with an out-of-order window than the same program captured
//! with `--dep-window 0`, and `--dep-window` is refused with another tool.

mod support;

use std::process::{Command, Output};

use support::{cachepart_cached as run, program_runs as have};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The capture crate's pointer chase, built here with `-DN=32768 -DLAPS=2`.
const CHASE: &str = include_str!("../../capture/tests/common/chase.c");

/// Stall cycles per LLC miss of the 1-way row of `bench` in a metrics
/// table: `stalls_l3_miss` (a fraction of the cycles) times cycles per
/// kilo-instruction (1000 / ipc), over `llcmpki`.
fn stall_per_miss(csv: &str, bench: &str) -> f64 {
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let row: Vec<&str> = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|r| r[0] == bench && r[1] == "1")
        .unwrap();
    let f = |name: &str| row[col(name)].parse::<f64>().unwrap();
    f("stalls_l3_miss") * 1000.0 / f("ipc") / f("llcmpki")
}

#[test]
fn hints_make_a_pointer_chase_stall_longer_per_miss() {
    if !have("valgrind") || !have("gcc") {
        eprintln!("SKIPPED: valgrind or gcc is not installed (apt-get install valgrind gcc)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("chase.c"), CHASE).unwrap();
    let st = Command::new("gcc")
        .args(["-O2", "-DN=32768", "-DLAPS=2", "-o", "chase", "chase.c"])
        .current_dir(d)
        .status()
        .unwrap();
    assert!(st.success());
    for (out, extra) in [("hinted.cpt", None), ("plain.cpt", Some("0"))] {
        let mut args = vec!["trace", "capture", "-q", "--tool", "cpgrind", "-o", out];
        if let Some(w) = extra {
            args.extend_from_slice(&["--dep-window", w]);
        }
        args.extend_from_slice(&["--", "./chase"]);
        let o = run(d, &args);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = run(d, &["trace", "info", "--format", "json", "hinted.cpt"]);
    let info = String::from_utf8_lossy(&o.stdout);
    assert!(info.contains("\"dependent_loads\""), "{info}");
    assert!(info.contains("\"dep-window\""), "{info}");

    let o = run(
        d,
        &[
            "profile",
            "from-trace",
            "-q",
            "-p",
            "xeon-gold-6138-ooo",
            "hinted.cpt",
            "plain.cpt",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = String::from_utf8_lossy(&o.stdout);
    let hinted = stall_per_miss(&csv, "hinted");
    let plain = stall_per_miss(&csv, "plain");
    eprintln!("stall cycles per LLC miss, 1 way: hinted {hinted:.1}, without hints {plain:.1}");
    assert!(hinted > 2.0 * plain, "hinted {hinted}, plain {plain}");
}

#[test]
fn dep_window_is_for_cpgrind_only() {
    let dir = tempfile::tempdir().unwrap();
    for tool in ["lackey", "qemu"] {
        let o = run(
            dir.path(),
            &[
                "trace",
                "capture",
                "--tool",
                tool,
                "--dep-window",
                "8",
                "-o",
                "x.cpt",
                "--",
                "true",
            ],
        );
        assert_eq!(o.status.code(), Some(1));
        assert!(
            stderr(&o).contains("--dep-window is for --tool cpgrind"),
            "{}",
            stderr(&o)
        );
        assert!(!dir.path().join("x.cpt").exists());
    }
}
