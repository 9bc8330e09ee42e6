//! `cachepart daemon` on the emulated resctrl (`rdt emulate`, FUSE: it
//! refuses what the kernel refuses): processes found by pid, command name
//! and cgroup join and leave, each change re-planned and logged; SIGHUP
//! reloads a good configuration and keeps the old one over a bad one; a
//! second manager is refused; SIGTERM removes every group and exits 0.
//! And the configuration's errors, which name the file, line and field.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use cachepart::linux::fake;
use serde_json::Value;
use support::emulated::{owned, tasks, wait_for, Emulated, Sleeper};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_cachepart")
}

/// The log's lines, parsed.
fn log_lines(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

fn events(log: &Path, event: &str) -> Vec<Value> {
    log_lines(log)
        .into_iter()
        .filter(|l| l["event"] == event)
        .collect()
}

/// The names of the apps of a plan line.
fn plan_apps(plan: &Value) -> Vec<String> {
    plan["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_string())
        .collect()
}

/// The owned control group (at the mount's top) whose tasks hold `pid`.
fn group_of(mount: &Path, pid: u32) -> Option<PathBuf> {
    owned(mount)
        .into_iter()
        .filter(|g| g.parent() == Some(mount))
        .find(|g| tasks(g).contains(&pid))
}

fn start_daemon(dir: &Path, emu: &Emulated, config: &Path, log: &Path) -> Child {
    Command::new(bin())
        .args(["daemon", config.to_str().unwrap(), "--log"])
        .arg(log)
        .args(["--resctrl", emu.arg(), "--sys-root"])
        .arg(dir.join("sys"))
        .args(["--cgroup-root"])
        .arg(dir.join("cgroup"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill sends a signal to a child we started.
    unsafe { libc::kill(child.id() as i32, sig) };
}

const CONFIG: &str = r#"policy = "lfoc"
interval = "100ms"
metrics = "metrics.csv"

[[target]]
name = "one"
pid = PID
profile = "xz"

[[target]]
name = "svc"
cgroup = "system.slice/svc.service"
profile = "sort"

[[target]]
name = "cpd"
comm = "cpd-sleeper"
profile = "copy"
"#;

#[test]
fn the_daemon_follows_its_targets_reloads_and_cleans_up() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let emu = Emulated::start(dir, "skylake");
    fake::sys_tree(&dir.join("sys"), 2, 11264 * 1024, 11, false).unwrap();
    support::three_program_metrics(&dir.join("metrics.csv"));
    // A program whose command name only this test uses.
    let sleeper = dir.join("cpd-sleeper");
    std::fs::copy("/bin/sleep", &sleeper).unwrap();
    let named = || Sleeper(Command::new(&sleeper).arg("600").spawn().unwrap());
    let one = Sleeper::new();
    let svc = Sleeper::new();
    let cpd1 = named();
    let cg = dir.join("cgroup/system.slice/svc.service");
    std::fs::create_dir_all(&cg).unwrap();
    std::fs::write(cg.join("cgroup.procs"), format!("{}\n", svc.pid())).unwrap();
    let config = dir.join("daemon.toml");
    std::fs::write(&config, CONFIG.replace("PID", &one.pid().to_string())).unwrap();
    let log = dir.join("daemon.log");
    let mut daemon = start_daemon(dir, &emu, &config, &log);
    let me = daemon.id();

    // The first plan: the three processes, each in a cluster's group.
    wait_for(20, "the first plan", || !events(&log, "plan").is_empty());
    let start = &events(&log, "start")[0];
    assert_eq!(start["pid"], me);
    assert_eq!(start["policy"], "lfoc");
    assert_eq!(start["removed_at_start"], serde_json::json!([]));
    let plan = &events(&log, "plan")[0];
    let want = [
        format!("one:{}", one.pid()),
        format!("svc:{}", svc.pid()),
        format!("cpd:{}", cpd1.pid()),
    ];
    assert_eq!(plan_apps(plan), want, "{plan}");
    assert_eq!(plan["policy"], "lfoc");
    for c in plan["clusters"].as_array().unwrap() {
        let g = c["group"].as_str().unwrap();
        assert!(g.starts_with(&format!("cachepart-{me}-c")), "{plan}");
        let schemata = std::fs::read_to_string(emu.mount.join(g).join("schemata")).unwrap();
        let mask = c["mask"].as_str().unwrap().trim_start_matches("0x");
        assert!(
            schemata.contains(&format!("L3:0={mask};1={mask}")),
            "{schemata}"
        );
    }
    for p in [one.pid(), svc.pid(), cpd1.pid()] {
        assert!(
            group_of(&emu.mount, p).is_some(),
            "{p} is in no group of the daemon"
        );
        assert!(!emu.root_tasks().contains(&p));
    }

    // A second manager on the mount is refused and named.
    let second = Command::new(bin())
        .args(["daemon", config.to_str().unwrap(), "--resctrl", emu.arg()])
        .arg("--sys-root")
        .arg(dir.join("sys"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "managed by another process (pid {me} (cachepart))"
        )),
        "{err}"
    );

    // A process started later joins; one that exits leaves.
    let cpd2 = named();
    wait_for(20, "cpd2 to join", || events(&log, "plan").len() >= 2);
    let plan = events(&log, "plan")[1].clone();
    assert_eq!(
        plan["joined"],
        serde_json::json!([format!("cpd:{}", cpd2.pid())])
    );
    wait_for(5, "cpd2 in a group", || {
        group_of(&emu.mount, cpd2.pid()).is_some()
    });
    let gone = format!("one:{}", one.pid());
    drop(one);
    wait_for(20, "one to leave", || events(&log, "plan").len() >= 3);
    let plan = events(&log, "plan")[2].clone();
    assert_eq!(plan["left"], serde_json::json!([gone]), "{plan}");
    assert_eq!(plan_apps(&plan).len(), 3, "{plan}");

    // A bad configuration is refused with its place, the old one kept.
    std::fs::write(&config, "policy = \"lfox\"\n").unwrap();
    signal(&daemon, libc::SIGHUP);
    wait_for(20, "the refused reload", || {
        !events(&log, "reload").is_empty()
    });
    let r = &events(&log, "reload")[0];
    assert_eq!(r["ok"], false, "{r}");
    let e = r["error"].as_str().unwrap();
    assert!(
        e.contains("daemon.toml:1: policy: ") && e.contains("lfox"),
        "{e}"
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(events(&log, "plan").len(), 3, "a refused reload re-planned");
    assert!(group_of(&emu.mount, svc.pid()).is_some());

    // A good one is applied: the cgroup target is gone, svc goes back to
    // the default group.
    let good = CONFIG.replace("lfoc", "equal-part");
    let good = &good[..good.find("[[target]]\nname = \"one\"").unwrap()];
    std::fs::write(
        &config,
        format!("{good}[[target]]\nname = \"cpd\"\ncomm = \"cpd-sleeper\"\nprofile = \"copy\"\n"),
    )
    .unwrap();
    signal(&daemon, libc::SIGHUP);
    wait_for(20, "the new plan", || events(&log, "plan").len() >= 4);
    let r = &events(&log, "reload")[1];
    assert_eq!(
        (r["ok"].clone(), r["policy"].clone()),
        (true.into(), "equal-part".into())
    );
    let plan = events(&log, "plan")[3].clone();
    assert_eq!(plan["policy"], "equal-part");
    assert_eq!(
        plan_apps(&plan),
        [format!("cpd:{}", cpd1.pid()), format!("cpd:{}", cpd2.pid())]
    );
    assert_eq!(
        plan["left"],
        serde_json::json!([format!("svc:{}", svc.pid())])
    );
    assert!(emu.root_tasks().contains(&svc.pid()));
    assert!(group_of(&emu.mount, svc.pid()).is_none());

    // SIGTERM: every group removed, the tasks back in the default group.
    signal(&daemon, libc::SIGTERM);
    let status = daemon.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(daemon.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    let last = log_lines(&log).pop().unwrap();
    assert_eq!(last["event"], "stop", "{last}");
    assert_eq!(last["signal"], "SIGTERM", "{last}");
    assert_eq!(owned(&emu.mount), Vec::<PathBuf>::new());
    let root = emu.root_tasks();
    for p in [svc.pid(), cpd1.pid(), cpd2.pid()] {
        assert!(root.contains(&p), "{p} not back in the default group");
    }
}

#[test]
fn configuration_errors_name_the_file_line_and_field() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let cases = [
        (
            "policy = \"lfoc\"\n[[target]]\nname = \"db\"\ncomm = \"a-name-longer-than-15\"\n",
            "daemon.toml:4: target[0].comm: ",
        ),
        ("policy = \"lfoc\"\n[[target]]\nname = \"db\"\n", "daemon.toml:2: target[0].pid: "),
        (
            "policy = \"ucp-online\"\n[[target]]\nname = \"db\"\npid = 1\n",
            "daemon.toml:1: policy: ",
        ),
        (
            "policy = \"throttle-online\"\n[[target]]\nname = \"db\"\npid = 1\n[throttle-online]\ntarget = 0.1\n",
            "daemon.toml:1: policy: --policy throttle-online: it throttles cores",
        ),
        (
            "policy = \"lfoc\"\nmetrics = \"m.csv\"\n[[target]]\nname = \"db\"\npid = 1\nprofile = \"xy\"\n",
            "daemon.toml:6: target[0].profile: no program 'xy'",
        ),
        // A policy that plans from curves, and no table to read them from.
        (
            "policy = \"lfoc\"\n[[target]]\nname = \"db\"\npid = 1\n",
            "daemon.toml:1: policy: lfoc plans from each program's alone curves",
        ),
        (
            "interval = \"1s\"\npolicy = \"ucp\"\n[[target]]\nname = \"db\"\npid = 1\n",
            "daemon.toml:2: policy: ucp plans from each program's alone curves",
        ),
        (
            "policy = \"lfoc\"\nmetrics = \"nonexist.csv\"\n[[target]]\nname = \"db\"\npid = 1\n",
            "daemon.toml:2: metrics: ",
        ),
        (
            "policy = \"optc-unf\"\n[[target]]\nname = \"db\"\npid = 1\n",
            "daemon.toml:1: policy: --policy optc-unf: an exact solver",
        ),
        (
            "policy = \"user\"\n[[target]]\nname = \"db\"\npid = 1\n",
            "daemon.toml:1: policy: --policy user: ",
        ),
    ];
    support::three_program_metrics(&dir.join("m.csv"));
    let mut failures = Vec::new();
    for (text, words) in cases {
        std::fs::write(dir.join("daemon.toml"), text).unwrap();
        let log = dir.join("log");
        support::refused_cleanly(
            dir,
            &["daemon", "daemon.toml", "--log", "log", "--resctrl", "none"],
            &[words],
            text,
            &mut failures,
        );
        assert!(!log.exists());
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn threads_a_target_starts_later_join_its_group() {
    use std::io::{BufRead, BufReader, Write};
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let emu = Emulated::start(dir, "skylake");
    fake::sys_tree(&dir.join("sys"), 2, 11264 * 1024, 11, false).unwrap();
    // python3 starts 3 threads when told to, then says so.
    let script = "import sys,threading,time\nsys.stdin.readline()\n\
                  ts=[threading.Thread(target=time.sleep,args=(600,),daemon=True) for _ in range(3)]\n\
                  [t.start() for t in ts]\nprint('started',flush=True)\nsys.stdin.readline()\n";
    let mut py = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is needed to start a process with threads");
    let pid = py.id();
    let config = dir.join("daemon.toml");
    std::fs::write(
        &config,
        format!("policy = \"equal-part\"\ninterval = \"100ms\"\n[[target]]\nname = \"py\"\npid = {pid}\n"),
    )
    .unwrap();
    let log = dir.join("daemon.log");
    let mut daemon = start_daemon(dir, &emu, &config, &log);
    wait_for(20, "the plan", || !events(&log, "plan").is_empty());
    let group = group_of(&emu.mount, pid).expect("the process is in a group");
    let mut stdin = py.stdin.take().unwrap();
    stdin.write_all(b"go\n").unwrap();
    let mut line = String::new();
    BufReader::new(py.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "started\n");
    let all: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().parse().unwrap())
        .collect();
    assert_eq!(all.len(), 4, "{all:?}");
    wait_for(5, "every thread in the group", || {
        let in_group = tasks(&group);
        all.iter().all(|t| in_group.contains(t))
    });
    signal(&daemon, libc::SIGTERM);
    assert_eq!(daemon.wait().unwrap().code(), Some(0));
    let root = emu.root_tasks();
    assert!(
        all.iter().all(|t| root.contains(t)),
        "threads not back in the default group"
    );
    drop(stdin);
    py.wait().unwrap();
}

#[test]
fn a_plan_that_fails_is_logged_once_and_the_daemon_goes_on() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let emu = Emulated::start(dir, "skylake");
    fake::sys_tree(&dir.join("sys"), 2, 11264 * 1024, 11, false).unwrap();
    support::three_program_metrics(&dir.join("metrics.csv"));
    // UCP gives each process its own ways: 12 processes do not fit 11.
    let sleeper = dir.join("cpd-many");
    std::fs::copy("/bin/sleep", &sleeper).unwrap();
    let mut many: Vec<Sleeper> = (0..12)
        .map(|_| Sleeper(Command::new(&sleeper).arg("600").spawn().unwrap()))
        .collect();
    let config = dir.join("daemon.toml");
    std::fs::write(
        &config,
        "policy = \"ucp\"\ninterval = \"100ms\"\nmetrics = \"metrics.csv\"\n\
         [[target]]\nname = \"m\"\ncomm = \"cpd-many\"\nprofile = \"xz\"\n",
    )
    .unwrap();
    let log = dir.join("daemon.log");
    let mut daemon = start_daemon(dir, &emu, &config, &log);
    wait_for(20, "the refused plan", || !events(&log, "error").is_empty());
    let e = events(&log, "error")[0]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(e.contains("ucp") && e.contains("12"), "{e}");
    std::thread::sleep(std::time::Duration::from_millis(400));
    assert_eq!(events(&log, "error").len(), 1, "said more than once");
    assert!(events(&log, "plan").is_empty());
    // One fewer process: the plan fits.
    many.pop();
    wait_for(20, "the plan for 11", || !events(&log, "plan").is_empty());
    let plan = &events(&log, "plan")[0];
    assert_eq!(plan_apps(plan).len(), 11, "{plan}");
    assert_eq!(plan["clusters"].as_array().unwrap().len(), 11, "{plan}");
    for s in &many {
        assert!(group_of(&emu.mount, s.pid()).is_some());
    }
    signal(&daemon, libc::SIGTERM);
    assert_eq!(daemon.wait().unwrap().code(), Some(0));
    assert_eq!(owned(&emu.mount), Vec::<PathBuf>::new());
}

#[test]
fn an_online_controller_replans_from_the_counters_of_adopted_processes() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let emu = Emulated::start(dir, "skylake");
    fake::sys_tree(&dir.join("sys"), 2, 11264 * 1024, 11, false).unwrap();
    support::three_program_metrics(&dir.join("metrics.csv"));
    let apps = [Sleeper::new(), Sleeper::new(), Sleeper::new()];
    let mut config = String::from("policy = \"lfoc-online\"\ninterval = \"100ms\"\n");
    for (a, program) in apps.iter().zip(["xz", "sort", "copy"]) {
        config.push_str(&format!(
            "[[target]]\nname = \"{program}\"\npid = {}\n",
            a.pid()
        ));
    }
    config.push_str("[lfoc-online]\nwindow-instructions = 5e7\nperiod-instructions = 2e8\n");
    let path = dir.join("daemon.toml");
    std::fs::write(&path, config).unwrap();
    let log = dir.join("daemon.log");
    let mut daemon = Command::new(bin())
        .args(["daemon", path.to_str().unwrap(), "--log"])
        .arg(&log)
        .args(["--resctrl", emu.arg(), "--sys-root"])
        .arg(dir.join("sys"))
        .arg("--fake-counters-from")
        .arg(dir.join("metrics.csv"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // The first plan comes from the set; the controller's re-plans follow
    // from the table-driven counters, each one a change of masks.
    wait_for(30, "two re-plans of the controller", || {
        events(&log, "plan")
            .iter()
            .filter(|p| p["cause"] == "controller")
            .count()
            >= 2
    });
    let plans = events(&log, "plan");
    assert_eq!(plans[0]["cause"], "targets", "{}", plans[0]);
    assert_eq!(plans[0]["policy"], "lfoc-online");
    let masks = |p: &Value| -> Vec<String> {
        p["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| format!("{}={}", c["mask"], c["apps"]))
            .collect()
    };
    for w in plans.windows(2) {
        if w[1]["cause"] == "controller" {
            assert_ne!(masks(&w[0]), masks(&w[1]), "a re-plan changed nothing");
            assert_eq!(w[1]["joined"], serde_json::json!([]));
        }
    }
    // The last plan is what the mount holds.
    let last = plans.last().unwrap();
    for c in last["clusters"].as_array().unwrap() {
        let Some(g) = c["group"].as_str() else {
            continue;
        };
        let schemata = std::fs::read_to_string(emu.mount.join(g).join("schemata")).unwrap();
        let mask = c["mask"].as_str().unwrap().trim_start_matches("0x");
        assert!(schemata.contains(&format!("L3:0={mask}")), "{schemata}");
    }

    signal(&daemon, libc::SIGTERM);
    let status = daemon.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(daemon.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert_eq!(owned(&emu.mount), Vec::<PathBuf>::new());
    let root = emu.root_tasks();
    for a in &apps {
        assert!(
            root.contains(&a.pid()),
            "{} not back in the default group",
            a.pid()
        );
    }
    assert!(
        events(&log, "error").is_empty(),
        "{:?}",
        events(&log, "error")
    );
}
