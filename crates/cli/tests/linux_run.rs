//! `cachepart run` start to end: three real programs (xz -9 on generated
//! data, sort on a generated file, a streaming copy with dd) with scripted
//! counters and the LFOC policy, on a plain fake resctrl tree and on the
//! emulated resctrl (`rdt emulate`, FUSE: it refuses what the kernel
//! refuses); and the refusal on a machine without resctrl or PMU, which
//! starts nothing.

mod support;

use cachepart::linux::fake::{self, Preset};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::emulated::{owned, Emulated};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_cachepart")
}

#[test]
fn three_programs_under_lfoc_on_a_fake_tree() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let mount = r.join("resctrl");
    fake::resctrl(&mount, Preset::Skylake).unwrap();
    three_programs_under_lfoc(r, &mount, true);
}

#[test]
fn three_programs_under_lfoc_on_the_emulated_resctrl() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let emu = Emulated::start(r, "skylake");
    three_programs_under_lfoc(r, &emu.mount, false);
}

/// Runs the mix on `mount` (`plain`: a fake tree, opened without the
/// file-system check) and checks the run and its results.
fn three_programs_under_lfoc(r: &Path, mount: &Path, plain: bool) {
    fake::sys_tree(&r.join("sys"), 2, 11264 * 1024, 11, false).unwrap();
    support::three_program_metrics(&r.join("metrics.csv"));
    // Generated inputs: compressible text for xz, shuffled lines for sort.
    let mut data = String::new();
    let mut x: u64 = 12345;
    for i in 0..80_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        data.push_str(&format!("{:016x} line {i}\n", x >> 20));
    }
    std::fs::write(r.join("data.txt"), &data).unwrap();
    let p = |s: &str| r.join(s).to_str().unwrap().to_string();
    let mix = format!(
        r#"interval = "100ms"
[[app]]
name = "xz"
argv = ["xz", "-9", "-c", "-k", "{data}"]
core = 0
[[app]]
name = "sort"
argv = ["sh", "-c", "sort {data} > {sorted}"]
core = 1
restart = true
[[app]]
name = "copy"
argv = ["dd", "if={data}", "of={copy}", "bs=4k"]
restart = true
"#,
        data = p("data.txt"),
        sorted = p("sorted.txt"),
        copy = p("copy.bin"),
    );
    std::fs::write(r.join("mix.toml"), mix).unwrap();
    let mut cmd = Command::new(bin());
    cmd.args([
        "run",
        &p("mix.toml"),
        "--policy",
        "lfoc",
        "-m",
        &p("metrics.csv"),
    ])
    .args(["--resctrl", mount.to_str().unwrap(), "--fake-counters"]);
    if plain {
        cmd.arg("--resctrl-plain");
    }
    let mut child = cmd
        .args(["--sys-root", &p("sys"), "-o", &p("out")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // While it runs, the run's groups hold the apps' threads.
    let mut seen_tasks = 0;
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "cachepart run did not finish");
        for g in owned(mount) {
            let tasks = std::fs::read_to_string(g.join("tasks")).unwrap_or_default();
            seen_tasks = seen_tasks.max(tasks.lines().count());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(seen_tasks >= 1, "no group ever held a task");
    assert_eq!(owned(mount), Vec::<PathBuf>::new(), "groups left behind");
    assert!(stdout.contains("STP "), "{stdout}");
    let res: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(r.join("out/results.json")).unwrap())
            .unwrap();
    assert_eq!(res["policy"], "lfoc");
    let apps = res["apps"].as_array().unwrap();
    assert_eq!(apps.len(), 3);
    for a in apps {
        assert!(a["first_run_s"].as_f64().unwrap() > 0.0, "{a}");
        assert!(a["runs"].as_u64().unwrap() >= 1, "{a}");
        assert!(a["mask"].is_string(), "{a}");
        assert!(a["slowdown"].as_f64().unwrap() > 0.0, "{a}");
    }
    let stp = res["metrics"]["stp"].as_f64().unwrap();
    assert!(stp > 0.0 && stp.is_finite(), "{res}");
    // The copy ran (a restarted copy is stopped when the slowest app
    // finishes its first run, so the file holds a prefix).
    let copy = std::fs::read(r.join("copy.bin")).unwrap();
    assert!(
        data.as_bytes().starts_with(&copy),
        "copy.bin is not a prefix of its input"
    );
    let samples = std::fs::read_to_string(r.join("out/samples.csv")).unwrap();
    assert!(samples.lines().count() > 3, "{samples}");
    assert!(samples.lines().next().unwrap().contains("instructions"));
}

#[test]
fn without_resctrl_and_pmu_it_refuses_and_starts_nothing() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    fake::proc_tree(&r.join("proc"), false, &r.join("resctrl")).unwrap();
    let marker = r.join("started");
    std::fs::write(
        r.join("mix.toml"),
        format!(
            "[[app]]\nname = \"touch\"\nargv = [\"touch\", \"{}\"]\n",
            marker.display()
        ),
    )
    .unwrap();
    let p = |s: &str| r.join(s).to_str().unwrap().to_string();
    let out = Command::new(bin())
        .args(["run", &p("mix.toml"), "--policy", "stock", "-o", &p("out")])
        .args(["--proc-root", &p("proc"), "--sys-root", &p("sys")])
        .args(["--dev-root", &p("dev"), "--resctrl", &p("resctrl")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("nothing was started"), "{stderr}");
    assert!(stderr.contains("MISSING  resctrl mount"), "{stderr}");
    assert!(stderr.contains("perf PMU"), "{stderr}");
    assert!(!marker.exists());
    assert!(!r.join("out").exists(), "the -o directory it made is left");
}

/// A run that is refused or fails removes the `-o` directory it made
/// (with the parents it made) and keeps one that was there; a policy that
/// plans from the alone curves without `-m` is refused naming the option,
/// before an app starts or a directory is made.
#[test]
fn a_failed_run_leaves_no_output_directory_it_made() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let mount = support::fake_skylake_two_cpus(r);
    let marker = r.join("started");
    let app = |core: u32| {
        format!(
            "[[app]]\nname = \"ammp00\"\nargv = [\"touch\", \"{}\"]\ncore = {core}\n",
            marker.display()
        )
    };
    let p = |s: &str| r.join(s).to_str().unwrap().to_string();
    std::fs::create_dir(r.join("old")).unwrap();
    let cases = [
        (
            app(0),
            "lfoc",
            "--policy lfoc: lfoc plans from each program's alone curves",
        ),
        (app(0), "ucp", "give -m/--metrics TABLE.csv"),
        (app(0), "optc-unf", "--policy optc-unf: an exact solver"),
        (
            app(100000),
            "stock",
            "mix.toml: app 0 (ammp00): core 100000",
        ),
    ];
    for (mix, policy, words) in cases {
        std::fs::write(r.join("mix.toml"), &mix).unwrap();
        for out in ["new/a/b", "old"] {
            let o = Command::new(bin())
                .args(["run", &p("mix.toml"), "--policy", policy, "--fake-counters"])
                .args(["--resctrl", &p("resctrl"), "--resctrl-plain"])
                .args(["--sys-root", &p("sys"), "-o", &p(out)])
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{policy} -o {out}: {stderr}");
            assert!(stderr.contains(words), "{policy} -o {out}: {stderr}");
            assert!(!marker.exists(), "{policy} -o {out}: an app started");
            assert!(!r.join("new").exists(), "{policy} -o {out}: new/ left");
            assert!(r.join("old").is_dir(), "{policy} -o {out}: old/ removed");
            assert_eq!(std::fs::read_dir(r.join("old")).unwrap().count(), 0);
            assert_eq!(
                owned(&mount),
                Vec::<PathBuf>::new(),
                "{policy}: groups left"
            );
        }
    }
}

/// A mix the run cannot take is refused before anything starts, naming
/// the mix file: an app pinned to a core the machine lacks, two apps of
/// one name, a policy that is no policy on Linux; and an `-o` that is a
/// file (here the mix itself, which is kept).
#[test]
fn bad_mixes_and_policies_name_the_mix_file_and_start_nothing() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let mount = support::fake_skylake_two_cpus(r);
    let marker = r.join("started");
    let app = |name: &str, core: u32| {
        format!(
            "[[app]]\nname = \"{name}\"\nargv = [\"touch\", \"{}\"]\ncore = {core}\n",
            marker.display()
        )
    };
    let p = |s: &str| r.join(s).to_str().unwrap().to_string();
    let cases = [
        (
            app("ammp00", 100000),
            "stock",
            "mix.toml: app 0 (ammp00): core 100000",
        ),
        (
            app("ammp00", 0) + &app("ammp00", 1),
            "stock",
            "mix.toml: app 1 (ammp00): name \"ammp00\" is app 0's too",
        ),
        (
            app("ammp00", 0),
            "optc-unf",
            "--policy optc-unf: an exact solver",
        ),
        (
            app("ammp00", 0),
            "user",
            "--policy user: it applies a plan given with --plan",
        ),
    ];
    for (mix, policy, words) in cases {
        std::fs::write(r.join("mix.toml"), &mix).unwrap();
        let out = Command::new(bin())
            .args(["run", &p("mix.toml"), "--policy", policy, "--fake-counters"])
            .args(["--resctrl", &p("resctrl"), "--resctrl-plain"])
            .args(["--sys-root", &p("sys")])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{mix}: {stderr}");
        assert!(stderr.contains(words), "{mix}: {stderr}");
        assert!(!marker.exists(), "{mix}: an app started");
        assert_eq!(owned(&mount), Vec::<PathBuf>::new(), "{mix}: groups left");
    }
    // -o naming a file: refused by name, the file kept.
    let mix = app("ammp00", 0);
    std::fs::write(r.join("mix.toml"), &mix).unwrap();
    let out = Command::new(bin())
        .args([
            "run",
            &p("mix.toml"),
            "--policy",
            "stock",
            "--fake-counters",
        ])
        .args(["--resctrl", &p("resctrl"), "--resctrl-plain"])
        .args(["--sys-root", &p("sys"), "-o", &p("mix.toml")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("mix.toml: is not a directory") && !stderr.contains("os error"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(r.join("mix.toml")).unwrap(), mix);
    assert!(!marker.exists());
}
