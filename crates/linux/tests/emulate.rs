//! The resctrl layer against the emulated resctrl, mounted over FUSE:
//! every file call goes through the kernel's FUSE as it would go to the
//! kernel's resctrl. These tests need /dev/fuse and root; where FUSE
//! cannot be mounted they fail and say why.

use cachepart_linux::emulate::Emulator;
use cachepart_linux::fake::{self, Preset};
use cachepart_linux::resctrl::{
    mount, Capabilities, GroupRef, ManagerLock, Resctrl, Resource, Schemata, Value,
};
use cachepart_linux::Error;
use cachepart_units::Kind as _;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// An emulator mounted in a temporary directory; unmounted on drop.
struct Mounted {
    emulator: Option<Emulator>,
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        drop(self.emulator.take());
    }
}

fn mount(preset: Preset) -> Mounted {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("resctrl");
    std::fs::create_dir(&path).unwrap();
    let emulator = Emulator::mount(&path, preset, Path::new("/proc")).unwrap_or_else(|e| {
        panic!(
            "the emulated resctrl could not be mounted, so these tests cannot run \
             (they need root and /dev/fuse): {e}"
        )
    });
    Mounted {
        emulator: Some(emulator),
        path,
        _dir: dir,
    }
}

fn open(m: &Mounted) -> Resctrl {
    Resctrl::open(&m.path, Path::new("/proc")).unwrap()
}

fn status(m: &Mounted) -> String {
    std::fs::read_to_string(m.path.join("info/last_cmd_status")).unwrap()
}

fn schemata(text: &str) -> Schemata {
    Schemata::parse(text, Path::new("test")).unwrap()
}

/// A process that sleeps until killed.
struct Sleeper(Child);

impl Sleeper {
    fn new() -> Self {
        Sleeper(Command::new("sleep").arg("600").spawn().unwrap())
    }
    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_mount_is_recognised_and_matches_the_fake_presets() {
    for preset in Preset::all() {
        let name = preset.name();
        let m = mount(preset);
        let rdt = open(&m);
        let t = tempfile::tempdir().unwrap();
        fake::resctrl(t.path(), preset).unwrap();
        let want = Capabilities::read(t.path(), false).unwrap();
        let got = rdt.capabilities();
        assert_eq!(
            (&got.caches, &got.mb, &got.mon, &got.domains),
            (&want.caches, &want.mb, &want.mon, &want.domains),
            "{name}"
        );
        let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
        let source = if preset == Preset::Cdp {
            "resctrl:cdp"
        } else {
            "resctrl"
        };
        assert!(
            mounts.contains(&format!(
                "{source} {} fuse.cachepart-resctrl ",
                m.path.display()
            )),
            "{mounts}"
        );
        // The options the emulated mount stands for, as on the kernel's.
        let opts = mount::options_of(Path::new("/proc"), &m.path);
        assert!(opts.iter().any(|o| o == "rw"), "{name}: {opts:?}");
        assert_eq!(
            opts.iter().any(|o| o == "cdp"),
            preset == Preset::Cdp,
            "{name}: {opts:?}"
        );
        let found = mount::find(Path::new("/proc")).unwrap().unwrap();
        if found.path == m.path {
            assert_eq!(found.options, opts, "{name}");
        }
    }
}

#[test]
fn every_schemata_form_round_trips() {
    let cases = [
        (
            Preset::Skylake,
            "L3:0=f;1=7f0\nMB:0=50;1=100\n",
            "    L3:0=f;1=7f0\n    MB:0=50;1=100\n",
        ),
        (
            Preset::Cdp,
            "L3CODE:0=7f0;1=7f0\nL3DATA:0=f;1=f\nMB:0=30;1=70\n",
            "L3CODE:0=7f0;1=7f0\nL3DATA:0=f;1=f\n    MB:0=30;1=70\n",
        ),
        (
            Preset::Amd,
            "L3:0=f0f;1=0\nMB:0=1024;1=3\n",
            "    L3:0=f0f;1=0\n    MB:0=1024;1=3\n",
        ),
    ];
    for (preset, text, shown) in cases {
        let m = mount(preset);
        let rdt = open(&m);
        let g = rdt.create_group("rt").unwrap();
        let s = schemata(text);
        rdt.write_schemata(&g, &s).unwrap();
        assert_eq!(rdt.read_schemata(&g).unwrap(), s, "{preset:?}");
        assert_eq!(
            std::fs::read_to_string(g.dir.join("schemata")).unwrap(),
            shown
        );
        assert_eq!(status(&m), "ok\n");
        // One line alone leaves the others as they were.
        let first = text.lines().next().unwrap().replace("=f", "=3");
        rdt.write_schemata_text(&g, &first).unwrap();
        let after = rdt.read_schemata(&g).unwrap();
        let r: Resource = first.split(':').next().unwrap().parse().unwrap();
        assert_eq!(after.lines[&r], schemata(&first).lines[&r], "{preset:?}");
        for (other, line) in &s.lines {
            if *other != r {
                assert_eq!(&after.lines[other], line, "{preset:?}");
            }
        }
    }
}

#[test]
fn the_kernels_refusals_come_back_in_its_words() {
    let m = mount(Preset::Skylake);
    let rdt = open(&m);
    let g = rdt.create_group("no").unwrap();
    let before = std::fs::read_to_string(g.dir.join("schemata")).unwrap();
    let cases = [
        ("L3:0=5", "The mask 5 has non-consecutive 1-bits"),
        ("L3:0=800", "Mask out of range"),
        ("L3:0=xyz", "Non-hex character in the mask xyz"),
        ("L4:0=f", "Unknown or unsupported resource name 'L4'"),
        (
            "L3CODE:0=f",
            "Unknown or unsupported resource name 'L3CODE'",
        ),
        ("MB:0=5", "MB value 5 out of range [10,100]"),
        ("MB:0=1x", "Invalid MB value 1x"),
        ("L3:0=f;0=3", "Duplicate domain 0"),
        ("L3 0=f", "Missing ':'"),
        ("L3:a=f", "Missing '=' or non-numeric domain"),
        ("L3:0=f\nMB:0=5", "MB value 5 out of range [10,100]"),
    ];
    for (text, words) in cases {
        let e = rdt.write_schemata_text(&g, text).unwrap_err();
        match &e {
            Error::Refused { source, status, .. } => {
                assert_eq!(source.raw_os_error(), Some(libc::EINVAL), "{text}");
                assert_eq!(status, words, "{text}");
            }
            other => panic!("{text}: {other}"),
        }
        assert!(e.to_string().contains(words), "{e}");
        assert_eq!(
            std::fs::read_to_string(g.dir.join("schemata")).unwrap(),
            before,
            "{text}"
        );
    }
    // An unknown domain: EINVAL with no words, as the kernel does.
    let e = std::fs::write(g.dir.join("schemata"), "L3:7=f\n").unwrap_err();
    assert_eq!(
        (e.raw_os_error(), status(&m).as_str()),
        (Some(libc::EINVAL), "ok\n")
    );
    // No trailing newline: refused before anything else.
    let e = std::fs::write(g.dir.join("schemata"), "L3:0=f").unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    // MB rounds up to the granularity.
    rdt.write_schemata_text(&g, "MB:0=55").unwrap();
    let mb = &rdt.read_schemata(&g).unwrap().lines[&Resource::Mb];
    assert_eq!(mb.domains[&0], Value::Bandwidth(60));
    // A task that does not exist.
    let e = std::fs::OpenOptions::new()
        .append(true)
        .open(g.dir.join("tasks"))
        .unwrap()
        .write_all(b"999999999\n")
        .unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ESRCH));
    assert_eq!(
        status(&m),
        "No task 999999999\nError while processing task 999999999\n"
    );
    // Read-only files stay so, even for root.
    let e = std::fs::write(m.path.join("info/L3/cbm_mask"), "f\n").unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EACCES));
    let e = std::fs::write(m.path.join("stray"), "x").unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EACCES));
    let e = std::fs::remove_dir(m.path.join("info")).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EPERM));
}

#[test]
fn closid_exhaustion_is_refused_by_both_the_layer_and_the_kernel() {
    let m = mount(Preset::Cdp);
    let rdt = open(&m);
    for i in 0..7 {
        rdt.create_group(&format!("g{i}")).unwrap();
    }
    let e = rdt.create_group("g7").unwrap_err();
    assert!(
        e.to_string().contains("no free CLOSID: 8 of 8 in use"),
        "{e}"
    );
    let e = std::fs::create_dir(m.path.join("raw")).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
    assert_eq!(status(&m), "Out of CLOSIDs\n");
    // Freed by rmdir, usable again.
    let g0 = rdt.control_groups().unwrap().into_iter().next().unwrap();
    rdt.remove(&g0).unwrap();
    assert!(!g0.dir.exists());
    rdt.create_group("again").unwrap();
    // RMIDs: 224, one per group; monitoring groups take the rest.
    let g = rdt.control_groups().unwrap().into_iter().next().unwrap();
    for i in 0..(224 - 8) {
        std::fs::create_dir(g.dir.join(format!("mon_groups/m{i}"))).unwrap();
    }
    let e = rdt.create_mon_group(&g, "one-more").unwrap_err();
    assert!(e.to_string().contains("no free RMID: 224 of 224"), "{e}");
    let e = std::fs::create_dir(g.dir.join("mon_groups/raw")).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
    assert_eq!(status(&m), "Out of RMIDs\n");
}

fn threads(pid: u32) -> BTreeSet<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().parse().unwrap())
        .collect()
}

#[test]
fn a_process_whose_threads_start_later_ends_up_wholly_in_its_group() {
    let m = mount(Preset::Skylake);
    let rdt = open(&m);
    let g = rdt.create_group("threads").unwrap();
    // python3 starts 3 threads when told to, then says so.
    let script = "import sys,threading,time\nsys.stdin.readline()\n\
                  ts=[threading.Thread(target=time.sleep,args=(600,),daemon=True) for _ in range(3)]\n\
                  [t.start() for t in ts]\nprint('started',flush=True)\nsys.stdin.readline()\n";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is needed to start a process with threads");
    let pid = child.id();
    assert_eq!(rdt.move_process(&g, pid).unwrap(), vec![pid]);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"go\n").unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "started\n");
    let all = threads(pid);
    assert_eq!(all.len(), 4, "{all:?}");
    assert_eq!(rdt.tasks(&g).unwrap(), BTreeSet::from([pid]));
    let moved: BTreeSet<u32> = rdt.resync(&g, pid).unwrap().into_iter().collect();
    assert_eq!(moved, &all - &BTreeSet::from([pid]));
    assert_eq!(rdt.tasks(&g).unwrap(), all);
    let root = rdt.tasks(&rdt.root()).unwrap();
    assert!(
        root.is_disjoint(&all),
        "the root still lists some of {all:?}"
    );
    assert!(rdt.resync(&g, pid).unwrap().is_empty());
    drop(stdin);
    child.wait().unwrap();
    // Exited threads drop out of the group, as on the kernel.
    assert!(rdt.tasks(&g).unwrap().is_empty());
}

#[test]
fn rmdir_returns_tasks_to_the_parent() {
    let m = mount(Preset::Skylake);
    let rdt = open(&m);
    let p = Sleeper::new();
    let g = rdt.create_group("ctl").unwrap();
    rdt.move_process(&g, p.pid()).unwrap();
    let mg = rdt.create_mon_group(&g, "mon").unwrap();
    rdt.move_process(&mg, p.pid()).unwrap();
    assert_eq!(rdt.tasks(&mg).unwrap(), BTreeSet::from([p.pid()]));
    assert_eq!(rdt.tasks(&g).unwrap(), BTreeSet::from([p.pid()]));
    // A monitoring group of the root cannot take a task of another
    // control group.
    let other = rdt.create_mon_group(&rdt.root(), "rootmon").unwrap();
    let e = rdt.move_process(&other, p.pid()).unwrap_err();
    assert!(
        e.to_string()
            .contains("Can't move task to different control group"),
        "{e}"
    );
    rdt.remove(&mg).unwrap();
    assert_eq!(rdt.tasks(&g).unwrap(), BTreeSet::from([p.pid()]));
    rdt.remove(&g).unwrap();
    assert!(rdt.tasks(&rdt.root()).unwrap().contains(&p.pid()));
    assert!(rdt.control_groups().unwrap().is_empty());
}

#[test]
fn two_managers_on_one_mount_the_second_is_refused() {
    let m = mount(Preset::Amd);
    let first = ManagerLock::acquire(&m.path, Path::new("/proc")).unwrap();
    let e = ManagerLock::acquire(&m.path, Path::new("/proc")).unwrap_err();
    assert!(matches!(e, Error::Locked { .. }), "{e}");
    assert!(
        e.to_string()
            .contains(&format!("pid {}", std::process::id())),
        "{e}"
    );
    drop(first);
    ManagerLock::acquire(&m.path, Path::new("/proc")).unwrap();
}

#[test]
fn counters_move_and_stale_groups_are_cleaned() {
    let m = mount(Preset::Skylake);
    let rdt = open(&m);
    let g = rdt.create_group("mon").unwrap();
    let a = rdt.read_monitor(&g).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let b = rdt.read_monitor(&g).unwrap();
    assert_eq!(a.domains.len(), 2);
    for d in [0, 1] {
        assert!(b.domains[&d].mbm_total_bytes > a.domains[&d].mbm_total_bytes);
        assert!(b.domains[&d].mbm_local_bytes <= b.domains[&d].mbm_total_bytes);
        assert!(b.domains[&d].llc_occupancy.unwrap() > 0);
    }
    // A group whose owner is gone is removed at the next start.
    let gone = GroupRef {
        name: "cachepart-999999999-old".into(),
        parent: None,
        dir: m.path.join("cachepart-999999999-old"),
    };
    std::fs::create_dir(&gone.dir).unwrap();
    let removed = cachepart_linux::resctrl::remove_stale_groups(&rdt).unwrap();
    assert_eq!(removed, vec!["cachepart-999999999-old".to_string()]);
    assert!(!gone.dir.exists());
}

#[test]
fn the_adopter_follows_its_processes_and_returns_them() {
    use cachepart_linux::doctor::Roots;
    use cachepart_linux::machine::{Adopted, Adopter};
    use cachepart_machine::{Cluster, Machine, Plan};
    use cachepart_units::WayMask;

    let m = mount(Preset::Skylake);
    let t = tempfile::tempdir().unwrap();
    fake::sys_tree(t.path(), 2, 11264 * 1024, 11, false).unwrap();
    let roots = Roots {
        proc_root: "/proc".into(),
        sys: t.path().into(),
        dev: t.path().join("dev"),
        boot: t.path().join("boot"),
        resctrl: m.path.clone(),
    };
    let rdt = open(&m);
    let root_has = |pid: u32| rdt.tasks(&rdt.root()).unwrap().contains(&pid);
    let (a, b, c) = (Sleeper::new(), Sleeper::new(), Sleeper::new());
    let app = |s: &Sleeper| Adopted {
        name: format!("s{}", s.pid()),
        pid: s.pid(),
        curves: None,
    };
    let mut ad = Adopter::start(&roots, false).unwrap();
    assert_eq!(ad.platform().ways, 11);
    ad.adopt(vec![app(&a), app(&b)]).unwrap();
    // Adopted: in the default group, each with a monitoring group.
    assert!(root_has(a.pid()) && root_has(b.pid()));
    let mon = ad.groups().mon_group(0).unwrap().clone();
    assert!(
        mon.name.ends_with(&format!("-p{}", a.pid())),
        "{}",
        mon.name
    );
    assert!(rdt.tasks(&mon).unwrap().contains(&a.pid()));
    let e = ad.alone_curves().unwrap_err().to_string();
    assert!(
        e.contains(&format!("no profile for s{}, s{}", a.pid(), b.pid())),
        "{e}"
    );

    let mask = WayMask;
    let two = Plan {
        clusters: vec![
            Cluster {
                mask: mask(0x7),
                apps: vec![0],
            },
            Cluster {
                mask: mask(0x7f8),
                apps: vec![1],
            },
        ],
        ..Plan::default()
    };
    ad.apply(&two).unwrap();
    let groups = ad.groups().clusters().to_vec();
    assert_eq!(groups.len(), 2);
    assert!(rdt.tasks(&groups[0]).unwrap().contains(&a.pid()));
    assert!(rdt.tasks(&groups[1]).unwrap().contains(&b.pid()));
    assert_eq!(
        std::fs::read_to_string(groups[1].dir.join("schemata")).unwrap(),
        "    L3:0=7f8;1=7f8\n    MB:0=100;1=100\n"
    );

    // a leaves (back to the default group), c joins, b keeps its place.
    ad.adopt(vec![app(&b), app(&c)]).unwrap();
    assert!(root_has(a.pid()) && root_has(c.pid()));
    assert!(!rdt.tasks(&groups[0]).unwrap().contains(&a.pid()));
    assert_eq!(ad.groups().control_group(0), groups[1]);
    let one = Plan {
        clusters: vec![Cluster {
            mask: mask(0x7ff),
            apps: vec![0, 1],
        }],
        ..Plan::default()
    };
    ad.apply(&one).unwrap();
    let g0 = ad.groups().clusters()[0].clone();
    let in_g0 = rdt.tasks(&g0).unwrap();
    assert!(in_g0.contains(&b.pid()) && in_g0.contains(&c.pid()));
    assert!(!groups[1].dir.exists(), "the second cluster's group stays");

    // No process left: the plan without clusters removes the groups.
    ad.adopt(Vec::new()).unwrap();
    ad.apply(&Plan::default()).unwrap();
    assert!(ad.groups().clusters().is_empty() && !g0.dir.exists());
    assert!(root_has(b.pid()) && root_has(c.pid()));
    ad.adopt(vec![app(&c)]).unwrap();
    assert!(rdt
        .tasks(ad.groups().mon_group(0).unwrap())
        .unwrap()
        .contains(&c.pid()));
    drop(ad);
    let left: Vec<String> = rdt
        .control_groups()
        .unwrap()
        .into_iter()
        .chain(rdt.mon_groups(&rdt.root()).unwrap())
        .map(|g| g.name)
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
