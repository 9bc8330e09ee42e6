//! `cachepart profile measure` end to end: a CAT sweep of real short
//! programs on the emulated resctrl (`rdt emulate`, FUSE) with
//! table-driven fake counters gives back the table's values, and the
//! emulator saw every w-way mask; bad input (an `--app` without `=`, an
//! output that can not be written, a command that fails, a machine
//! without resctrl or PMU) fails with a clear message and writes nothing.

mod support;

use cachepart::linux::fake;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{cachepart, owned_masks, three_program_table, with_emulated_resctrl};

/// One row of a metrics CSV: program, ways, the numeric columns.
type Row = (String, u32, Vec<f64>);

/// The header and rows of `csv`.
fn cells(csv: &str) -> (Vec<String>, Vec<Row>) {
    let mut lines = csv.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2..].iter().map(|v| v.parse().unwrap()).collect(),
            )
        })
        .collect();
    (header, rows)
}

#[test]
fn measure_round_trips_a_table_on_the_emulated_resctrl() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let mount = r.join("resctrl");
    std::fs::create_dir(&mount).unwrap();
    fake::sys_tree(&r.join("sys"), 2, 11264 * 1024, 11, false).unwrap();
    let table = r.join("t.csv");
    std::fs::write(&table, three_program_table()).unwrap();
    let p = |s: &str| r.join(s).to_str().unwrap().to_string();
    let masks = with_emulated_resctrl(&mount, "skylake", || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cachepart"))
            .args(["profile", "measure", "--app", "xz=sleep 0.3"])
            .args(["--app", "copy=sleep 0.3", "--interval", "50ms"])
            .args(["--fake-counters-from", &p("t.csv"), "--sys-root", &p("sys")])
            .args(["--resctrl", mount.to_str().unwrap(), "-o", &p("m.csv")])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // What the emulator holds while the sweep runs.
        let mut seen = BTreeSet::new();
        let deadline = Instant::now() + Duration::from_secs(120);
        while child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "profile measure did not finish");
            seen.extend(owned_masks(&mount));
            std::thread::sleep(Duration::from_millis(10));
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(err.contains("fake counters"), "{err}");
        assert_eq!(owned_masks(&mount), Vec::<String>::new(), "groups left");
        seen
    });
    // Every w-way mask from the low end, and nothing else.
    let want: BTreeSet<String> = (1..=11u32)
        .map(|w| format!("{:x}", (1u32 << w) - 1))
        .collect();
    assert_eq!(masks, want);
    let (header, got) = cells(&std::fs::read_to_string(r.join("m.csv")).unwrap());
    assert_eq!(
        header.join(","),
        "BENCH,NR_WAYS,ipc,llcrpki,llcmpki,llcrpkc,llcmpkc,llc_usage_kb,bandwidth_mbps,\
         llcm_bandwidth,stalls_l2_miss,stalls_l3_miss,stalls_total,stalls_store_buf"
    );
    assert_eq!(got.len(), 22);
    let (theader, trows) = cells(&three_program_table());
    let col = |h: &[String], n: &str| h.iter().position(|c| c == n).unwrap() - 2;
    for (i, (bench, w, vals)) in got.iter().enumerate() {
        assert_eq!(
            (bench.as_str(), *w),
            (["xz", "copy"][i / 11], (i % 11) as u32 + 1)
        );
        let want = &trows
            .iter()
            .find(|(b, tw, _)| b == bench && tw == w)
            .unwrap()
            .2;
        for c in ["ipc", "llcrpki", "llcmpki", "stalls_l2_miss"] {
            let (g, e) = (vals[col(&header, c)], want[col(&theader, c)]);
            assert!(
                (g - e).abs() <= 1e-6 + 1e-4 * e.abs(),
                "{bench} at {w} ways, {c}: measured {g}, table {e}"
            );
        }
        // per kilo-cycle is per kilo-instruction times IPC
        let g = vals[col(&header, "llcmpkc")];
        let e = want[col(&theader, "llcmpki")] * want[col(&theader, "ipc")];
        assert!((g - e).abs() <= 1e-6 + 1e-4 * e, "{bench} {w}: {g} vs {e}");
    }
    // The table is ready for the profile machine.
    let o = cachepart(r, &["profile", "eval", "-m", "m.csv", "--apps", "xz,copy"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn bad_input_fails_clearly_and_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let mount = support::fake_skylake_two_cpus(r);
    let marker = r.join("started");
    let touch = format!("a=touch {}", marker.display());
    let common = [
        "--fake-counters",
        "--resctrl",
        mount.to_str().unwrap(),
        "--resctrl-plain",
        "--sys-root",
    ];
    let sys = r.join("sys");
    let run = |args: &[&str]| {
        let mut all = vec!["profile", "measure"];
        all.extend_from_slice(args);
        all.extend_from_slice(&common);
        all.push(sys.to_str().unwrap());
        let o = cachepart(r, &all);
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    // --app without NAME=
    let (code, err) = run(&["--app", "sleep 1", "-o", "m.csv"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("expected NAME=COMMAND"), "{err}");
    // --instructions and --seconds are alternatives: the parser refuses both
    let (code, err) = run(&[
        "--app",
        &touch,
        "--seconds",
        "1",
        "--instructions",
        "5",
        "-o",
        "m.csv",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--seconds") && err.contains("--instructions"),
        "{err}"
    );
    assert!(!marker.exists(), "the program ran");
    // a bad --seconds or --instructions is echoed in its refusal
    for (flag, value, shown) in [("--seconds", "nan", "NaN"), ("--instructions", "0", "0.0")] {
        let (code, err) = run(&["--app", &touch, flag, value, "-o", "m.csv"]);
        assert_eq!(code, Some(1), "{err}");
        let want = format!("{flag} {shown}: expected a positive number");
        assert!(err.contains(&want), "{err}");
        assert!(!marker.exists(), "the program ran");
    }
    // an output in a missing directory: nothing starts
    let (code, err) = run(&["--app", &touch, "-o", "no/such/dir/m.csv"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no/such/dir"), "{err}");
    assert!(!marker.exists(), "the program ran");
    // a command that fails
    let (code, err) = run(&["--app", "a=exit 3", "-o", "m.csv"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("measuring a at 1 ways") && err.contains("exit status: 3"),
        "{err}"
    );
    // a name used twice
    let (code, err) = run(&["--app", "a=true", "--app", "a=true", "-o", "m.csv"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("measured twice"), "{err}");
    assert!(!r.join("m.csv").exists());
    assert!(owned_masks(&mount).is_empty());
    let left: Vec<String> = support::list(r)
        .into_iter()
        .filter(|n| n.starts_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn without_resctrl_and_pmu_it_refuses_and_starts_nothing() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    fake::proc_tree(&r.join("proc"), false, &r.join("resctrl")).unwrap();
    let marker = r.join("started");
    let p = |s: &str| r.join(s).to_str().unwrap().to_string();
    let touch = format!("a=touch {}", marker.display());
    let o = cachepart(
        r,
        &[
            "profile",
            "measure",
            "--app",
            &touch,
            "-o",
            "m.csv",
            "--proc-root",
            &p("proc"),
            "--sys-root",
            &p("sys"),
            "--dev-root",
            &p("dev"),
            "--resctrl",
            &p("resctrl"),
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("nothing was started"), "{err}");
    assert!(
        err.contains("MISSING  resctrl mount") && err.contains("perf PMU"),
        "{err}"
    );
    assert!(!marker.exists());
    assert!(!r.join("m.csv").exists());
}

#[test]
fn an_interrupt_stops_the_program_removes_its_group_and_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let mount = support::fake_skylake_two_cpus(r);
    let mut child = Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args([
            "profile",
            "measure",
            "--app",
            "a=sleep 30",
            "--fake-counters",
        ])
        .args(["--resctrl", mount.to_str().unwrap(), "--resctrl-plain"])
        .args(["--sys-root", r.join("sys").to_str().unwrap()])
        .args(["-o", r.join("m.csv").to_str().unwrap()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the program to be in its group.
    let deadline = Instant::now() + Duration::from_secs(20);
    let pid = loop {
        assert!(
            Instant::now() < deadline,
            "the program never reached its group"
        );
        let tasks = std::fs::read_dir(&mount)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("cachepart-"))
            .filter_map(|e| std::fs::read_to_string(e.path().join("tasks")).ok())
            .find_map(|t| t.lines().next().map(str::to_string));
        if let Some(p) = tasks {
            break p;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // SAFETY: kill sends SIGINT to the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let start = Instant::now();
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "{pid} still runs"
    );
    assert!(owned_masks(&mount).is_empty());
    assert!(!r.join("m.csv").exists());
    assert!(support::list(r).iter().all(|n| !n.starts_with(".tmp")));
}
