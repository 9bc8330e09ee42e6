//! The machine on a fake resctrl tree, fake `/sys` and `/dev`, real
//! processes (so the real `/proc`) and scripted counters.

use super::*;
use crate::cpu::CpuModel;
use crate::fake::{self, Preset};
use crate::msr::{IA32_CLOCK_MODULATION, MISC_FEATURE_CONTROL};
use crate::perf::FakeCounters;
use cachepart_machine::{AppThrottle, Cluster};
use cachepart_units::WayMask;
use std::path::Path;
use tempfile::TempDir;

struct Setup {
    t: TempDir,
    flag: Arc<AtomicBool>,
}

impl Setup {
    fn new(preset: Preset) -> Setup {
        let t = tempfile::tempdir().unwrap();
        fake::resctrl(&t.path().join("resctrl"), preset).unwrap();
        fake::sys_tree(&t.path().join("sys"), 4, 11264 * 1024, 11, false).unwrap();
        fake::msr_device(&t.path().join("dev"), 4, &[(MISC_FEATURE_CONTROL, 0x2)]).unwrap();
        Setup {
            t,
            flag: Arc::new(AtomicBool::new(false)),
        }
    }

    fn mount(&self) -> std::path::PathBuf {
        self.t.path().join("resctrl")
    }

    fn config(&self, msr: bool) -> LinuxConfig {
        let dev = self.t.path().join("dev");
        let skx = CpuModel {
            vendor: "GenuineIntel".into(),
            family: 6,
            model: 0x55,
            model_name: "Xeon".into(),
            mhz: None,
        };
        LinuxConfig {
            roots: Roots {
                proc_root: "/proc".into(),
                sys: self.t.path().join("sys"),
                dev: dev.clone(),
                boot: "/boot".into(),
                resctrl: self.mount(),
            },
            plain_resctrl: true,
            interval: Duration::from_millis(40),
            counters: Box::new(FakeCounters::new(Duration::from_millis(40))),
            msr: msr.then(|| MsrControl::new(&dev, &skx, true).unwrap()),
            alone: None,
            interrupt: Some(Arc::clone(&self.flag)),
        }
    }

    /// The `cachepart-*` directories left in the mount.
    fn owned_left(&self) -> Vec<String> {
        let mut left = Vec::new();
        for e in walk(&self.mount()) {
            let n = e.file_name().unwrap().to_string_lossy().into_owned();
            if n.starts_with("cachepart-") {
                left.push(n);
            }
        }
        left
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            out.push(e.path());
            out.extend(walk(&e.path()));
        }
    }
    out
}

fn app(name: &str, argv: &[&str], core: u32, restart: bool) -> AppSpec {
    AppSpec {
        name: name.into(),
        argv: argv.iter().map(|s| s.to_string()).collect(),
        core: Some(core),
        restart,
    }
}

fn two_clusters() -> Plan {
    Plan {
        clusters: vec![
            Cluster {
                mask: WayMask(0x7f0),
                apps: vec![0],
            },
            Cluster {
                mask: WayMask(0x00f),
                apps: vec![1],
            },
        ],
        ..Plan::default()
    }
}

fn nothing(_: &AppEvent) -> Vec<Action> {
    Vec::new()
}

#[test]
fn runs_a_mix_under_a_plan_restarts_the_short_app_and_cleans_up() {
    let s = Setup::new(Preset::Skylake);
    let apps = vec![
        app("long", &["sleep", "1"], 0, false),
        app("short", &["sleep", "0.05"], 1, true),
    ];
    let mut m = LinuxMachine::start(s.config(false), apps).unwrap();
    assert_eq!(m.platform().ways, 11);
    assert_eq!(m.llc().size_bytes, 11264 * 1024);
    m.apply(&two_clusters()).unwrap();
    let groups = m.groups().clusters().to_vec();
    assert_eq!(groups.len(), 2);
    // Only the L3 line is written (the kernel keeps the others).
    assert_eq!(
        std::fs::read_to_string(groups[0].dir.join("schemata")).unwrap(),
        "L3:0=7f0;1=7f0\n"
    );
    let pid0 = m.pid(0).unwrap();
    let tasks = m.groups().resctrl().tasks(&groups[0]).unwrap();
    assert!(tasks.contains(&pid0), "{tasks:?} lacks {pid0}");
    let mon = m.groups().mon_group(1).unwrap().clone();
    assert_eq!(mon.parent.as_deref(), Some(groups[1].name.as_str()));
    assert!(m
        .groups()
        .resctrl()
        .tasks(&mon)
        .unwrap()
        .contains(&m.pid(1).unwrap()));

    let mut events = Vec::new();
    let mut intervals = 0;
    while !m.is_done() {
        let iv = m.run_interval(&mut nothing).unwrap();
        assert_eq!(iv.samples.len(), 2);
        assert_eq!(iv.index, intervals);
        // Scripted counts: 2 GHz over 40 ms, IPC 1.6 for app 0 while it
        // runs; nothing once it has exited.
        let s0 = &iv.samples[0];
        if m.is_done() {
            assert!(s0.cycles == 0.0 || s0.cycles == 8e7, "{s0:?}");
        } else {
            assert_eq!((s0.cycles, s0.instructions, s0.ran), (8e7, 1.28e8, true));
        }
        events.extend(iv.events);
        intervals += 1;
        assert!(intervals < 100, "the mix never finished");
    }
    let kinds = |a: usize| -> Vec<EventKind> {
        events
            .iter()
            .filter(|e| e.app == a)
            .map(|e| e.kind)
            .collect()
    };
    assert_eq!(kinds(0), vec![EventKind::Started, EventKind::Finished]);
    let short = kinds(1);
    assert_eq!(short[0], EventKind::Started);
    assert!(short.contains(&EventKind::Restarted), "{short:?}");
    assert!(m.first_run(0).unwrap() >= Duration::from_secs(1));
    assert!(m.first_run(1).unwrap() < Duration::from_secs(1));
    assert!(m.runs(1).len() >= 2);
    // The restarted short app was stopped when the long one finished.
    assert_eq!(m.pid(1), None);
    drop(m);
    assert_eq!(s.owned_left(), Vec::<String>::new());
}

#[test]
fn a_plan_needing_more_closids_than_free_is_refused() {
    let s = Setup::new(Preset::Cdp); // 8 CLOSIDs
    for i in 0..6 {
        std::fs::create_dir(s.mount().join(format!("theirs{i}"))).unwrap();
    }
    let apps = vec![
        app("a", &["sleep", "5"], 0, false),
        app("b", &["sleep", "5"], 1, false),
    ];
    let mut m = LinuxMachine::start(s.config(false), apps).unwrap();
    let e = m.apply(&two_clusters()).unwrap_err();
    let inner = e.downcast_backend::<Error>().expect("a linux error");
    assert!(
        matches!(
            inner,
            Error::TooManyClusters {
                clusters: 2,
                free: 1,
                total: 8,
                others: 6,
                ..
            }
        ),
        "{inner}"
    );
    assert!(e.to_string().contains("only 1 CLOSIDs are free"), "{e}");
    // One cluster fits, in CDP's code and data masks.
    let one = Plan::shared_all(2, 11);
    m.apply(&one).unwrap();
    let g = &m.groups().clusters()[0];
    let text = std::fs::read_to_string(g.dir.join("schemata")).unwrap();
    assert!(
        text.contains("L3CODE:0=7ff;1=7ff\nL3DATA:0=7ff;1=7ff"),
        "{text}"
    );
    drop(m);
    assert_eq!(s.owned_left(), Vec::<String>::new());
}

#[test]
fn throttling_needs_msr_access_and_is_restored() {
    let s = Setup::new(Preset::Skylake);
    let apps = vec![app("a", &["sleep", "5"], 2, false)];
    let t = AppThrottle {
        app: 0,
        duty: Some("4/8".parse().unwrap()),
        prefetchers: Some(0xf),
    };
    let mut m = LinuxMachine::start(s.config(false), apps.clone()).unwrap();
    let e = m.act(&Action::Throttle(t)).unwrap_err().to_string();
    assert!(e.contains("--allow-msr"), "{e}");
    let e = m.alone_curves().unwrap_err().to_string();
    assert!(e.contains("profile measure"), "{e}");
    drop(m);

    let mut m = LinuxMachine::start(s.config(true), apps).unwrap();
    m.act(&Action::Throttle(t)).unwrap();
    let msr = m.msr.as_mut().unwrap();
    assert_eq!(msr.read(2, IA32_CLOCK_MODULATION).unwrap(), 0x18);
    assert_eq!(msr.read(2, MISC_FEATURE_CONTROL).unwrap(), 0xf);
    assert_eq!(msr.read(1, MISC_FEATURE_CONTROL).unwrap(), 0x2);
    drop(m);
    let raw = std::fs::read(s.t.path().join("dev/cpu/2/msr")).unwrap();
    let at = |msr: u32| u64::from_le_bytes(raw[msr as usize..msr as usize + 8].try_into().unwrap());
    assert_eq!(
        (at(IA32_CLOCK_MODULATION), at(MISC_FEATURE_CONTROL)),
        (0, 0x2)
    );
}

#[test]
fn an_interrupt_stops_the_run_and_leaves_nothing() {
    let s = Setup::new(Preset::Skylake);
    let apps = vec![app("a", &["sleep", "30"], 0, false)];
    let mut m = LinuxMachine::start(s.config(false), apps).unwrap();
    m.apply(&Plan::shared_all(1, 11)).unwrap();
    m.run_interval(&mut nothing).unwrap();
    let pid = m.pid(0).unwrap();
    s.flag.store(true, Ordering::Relaxed);
    let e = m.run_interval(&mut nothing).unwrap_err().to_string();
    assert!(e.contains("interrupted"), "{e}");
    drop(m);
    assert_eq!(s.owned_left(), Vec::<String>::new());
    // The app was stopped and reaped.
    assert!(!Path::new(&format!("/proc/{pid}")).exists());
}

#[test]
fn bad_apps_are_refused_before_anything_starts() {
    let s = Setup::new(Preset::Skylake);
    let e = LinuxMachine::start(s.config(false), vec![app("x", &["true"], 9, false)])
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("app 0 (x)") && e.contains("core 9"), "{e}");
    let mut c = s.config(false);
    c.roots.resctrl = s.t.path().join("nowhere");
    let e = LinuxMachine::start(c, vec![app("x", &["true"], 0, false)])
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("nowhere"), "{e}");
    assert_eq!(s.owned_left(), Vec::<String>::new());
}

#[test]
fn an_exited_app_loses_its_monitoring_group_and_a_replan_still_works() {
    let s = Setup::new(Preset::Skylake);
    let apps = vec![
        app("long", &["sleep", "1"], 0, false),
        app("short", &["sleep", "0.01"], 1, false),
    ];
    let mut m = LinuxMachine::start(s.config(false), apps).unwrap();
    m.apply(&two_clusters()).unwrap();
    assert!(m.groups().mon_group(1).is_some());
    while m.pid(1).is_some() {
        m.run_interval(&mut nothing).unwrap();
    }
    assert!(m.groups().mon_group(1).is_none());
    // One cluster now: the short app's old group goes; its counters
    // read nothing, and the next interval reads without error.
    let one = Plan {
        clusters: vec![Cluster {
            mask: WayMask(0x7ff),
            apps: vec![0, 1],
        }],
        ..Plan::default()
    };
    m.apply(&one).unwrap();
    let iv = m.run_interval(&mut nothing).unwrap();
    assert_eq!(iv.samples[1].llc_occupancy_bytes, 0.0);
    m.shutdown().unwrap();
    assert_eq!(s.owned_left(), Vec::<String>::new());
}
