//! Online controllers on Linux (`cachepart run --policy lfoc-online`,
//! `dunn-dynamic`, `kpart-dynaway`) over table-driven fake counters
//! (`--fake-counters-from`): the counts follow each app's row at the ways
//! its plan gives it, so the controllers see partitioning act. LFOC's
//! online algorithm runs a three-program mix to the end on the emulated
//! resctrl and re-plans; the static LFOC plans once; `ucp-online` runs on
//! the utility monitors the table gives, and without them (scripted
//! counters, like hardware) is refused before anything starts.

mod support;

use cachepart::linux::fake::{self, Preset};
use std::path::Path;
use support::{cachepart, three_program_table, with_emulated_resctrl};

/// Writes the mix (three `sleep`s named after the table's programs) and
/// the table into `r`.
fn setup(r: &Path, seconds: f64) {
    fake::sys_tree(&r.join("sys"), 2, 11264 * 1024, 11, false).unwrap();
    std::fs::write(r.join("t.csv"), three_program_table()).unwrap();
    let mut mix = String::from("interval = \"100ms\"\n");
    for (i, name) in ["xz", "sort", "copy"].iter().enumerate() {
        let s = seconds - 0.2 * i as f64;
        mix.push_str(&format!(
            "[[app]]\nname = \"{name}-app\"\nprofile = \"{name}\"\nargv = [\"sleep\", \"{s}\"]\n"
        ));
    }
    mix.push_str("[lfoc-online]\nwindow-instructions = 5e7\nperiod-instructions = 2e8\n");
    std::fs::write(r.join("mix.toml"), mix).unwrap();
}

/// Runs `policy` on the mix; returns results.json.
fn run(r: &Path, mount: &Path, plain: bool, policy: &str) -> serde_json::Value {
    let p = |s: &str| r.join(s).to_str().unwrap().to_string();
    let out_dir = format!("out-{policy}");
    let mut args = vec![
        "run".to_string(),
        p("mix.toml"),
        "--policy".into(),
        policy.into(),
        "-m".into(),
        p("t.csv"),
        "--fake-counters-from".into(),
        p("t.csv"),
        "--resctrl".into(),
        mount.to_str().unwrap().into(),
        "--sys-root".into(),
        p("sys"),
        "-o".into(),
        p(&out_dir),
    ];
    if plain {
        args.push("--resctrl-plain".into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = cachepart(r, &args);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{policy}: {stdout}\n{stderr}");
    assert!(stdout.contains("STP "), "{stdout}");
    serde_json::from_str(&std::fs::read_to_string(r.join(out_dir).join("results.json")).unwrap())
        .unwrap()
}

fn plans(res: &serde_json::Value) -> Vec<String> {
    res["plans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["plan"].as_str().unwrap().to_string())
        .collect()
}

fn ran_to_the_end(res: &serde_json::Value) {
    let apps = res["apps"].as_array().unwrap();
    assert_eq!(apps.len(), 3);
    for a in apps {
        assert!(a["first_run_s"].as_f64().unwrap() > 0.0, "{a}");
        assert!(a["instructions"].as_f64().unwrap() > 0.0, "{a}");
    }
}

#[test]
fn lfoc_online_replans_on_the_emulated_resctrl_and_static_lfoc_plans_once() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let mount = r.join("resctrl");
    std::fs::create_dir(&mount).unwrap();
    setup(r, 3.0);
    let (online, fixed) = with_emulated_resctrl(&mount, "skylake", || {
        (
            run(r, &mount, false, "lfoc-online"),
            run(r, &mount, false, "lfoc"),
        )
    });
    ran_to_the_end(&online);
    let ps = plans(&online);
    assert!(ps.len() >= 2, "lfoc-online applied {ps:?}");
    assert!(
        ps.windows(2).any(|w| w[0] != w[1]),
        "the masks never changed: {ps:?}"
    );
    ran_to_the_end(&fixed);
    assert_eq!(plans(&fixed).len(), 1, "{fixed}");
}

#[test]
fn dunn_dynamic_kpart_dynaway_and_ucp_online_run_to_the_end() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let mount = r.join("resctrl");
    fake::resctrl(&mount, Preset::Skylake).unwrap();
    setup(r, 1.5);
    for policy in ["dunn-dynamic", "kpart-dynaway", "ucp-online"] {
        let res = run(r, &mount, true, policy);
        ran_to_the_end(&res);
        assert!(!plans(&res).is_empty(), "{policy}: {res}");
    }
}

#[test]
fn ucp_online_without_utility_monitors_is_refused_before_anything_starts() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let mount = r.join("resctrl");
    fake::resctrl(&mount, Preset::Skylake).unwrap();
    setup(r, 1.0);
    let marker = r.join("started");
    std::fs::write(
        r.join("mix.toml"),
        format!(
            "[[app]]\nname = \"xz\"\nargv = [\"touch\", \"{}\"]\n",
            marker.display()
        ),
    )
    .unwrap();
    let o = cachepart(
        r,
        &[
            "run",
            "mix.toml",
            "--policy",
            "ucp-online",
            "--fake-counters",
            "--resctrl",
            mount.to_str().unwrap(),
            "--resctrl-plain",
            "-o",
            "out",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("utility monitors") && err.contains("lfoc-online"),
        "{err}"
    );
    assert!(!marker.exists());
    assert!(!r.join("out/results.json").exists());
}

#[test]
fn throttle_online_without_msr_writes_or_a_profile_table_is_refused_before_anything_starts() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let mount = r.join("resctrl");
    fake::resctrl(&mount, Preset::Skylake).unwrap();
    setup(r, 1.0);
    let marker = r.join("started");
    std::fs::write(
        r.join("mix.toml"),
        format!(
            "[[app]]\nname = \"xz\"\nargv = [\"touch\", \"{}\"]\n[throttle-online]\ntarget = 0.1\n",
            marker.display()
        ),
    )
    .unwrap();
    let base = [
        "run",
        "mix.toml",
        "--policy",
        "throttle-online",
        "--fake-counters",
        "--resctrl",
        mount.to_str().unwrap(),
        "--resctrl-plain",
        "-o",
        "out",
    ];
    let o = cachepart(r, &base);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("throttle-online") && err.contains("--allow-msr"),
        "{err}"
    );
    let o = cachepart(r, &[&base[..], &["--allow-msr"]].concat());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("profile table") && err.contains("--metrics"),
        "{err}"
    );
    assert!(!marker.exists());
    assert!(!r.join("out/results.json").exists());
}
