//! The directory tree of an emulated mount, derived from its [`State`]:
//! what each path is, what a directory holds, which files can be
//! written, and what reading a file gives.

use super::counters::EVENTS;
use super::state::{State, Target};

/// A directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dir {
    /// The mount root (also the default group).
    Root,
    /// `info/`.
    Info,
    /// `info/RESOURCE/`.
    InfoResource(String),
    /// A control group's directory (not the root).
    Group(String),
    /// `mon_groups/` of a control group (None: the root's).
    MonGroups(Option<String>),
    /// A monitoring group's directory.
    MonGroup(Target),
    /// `mon_data/` of a group.
    MonData(Target),
    /// `mon_data/mon_L3_NN/` of a group.
    MonDomain(Target, u32),
}

/// A file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum File {
    /// `info/last_cmd_status`.
    LastCmdStatus,
    /// A fixed `info/` file (path under `info/`).
    Info(String),
    /// A control group's `schemata`.
    Schemata(Option<String>),
    /// A control group's `size`.
    Size(Option<String>),
    /// A control group's `mode`.
    Mode(Option<String>),
    /// A group's `tasks`.
    Tasks(Target),
    /// A group's `cpus` (false) or `cpus_list` (true).
    Cpus(Target, bool),
    /// A monitoring counter: group, domain id, event.
    Counter(Target, u32, &'static str),
}

/// A node of the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// A directory.
    Dir(Dir),
    /// A file.
    File(File),
}

fn group_files(t: &Target, out: &mut Vec<(String, Node)>) {
    let ctrl = t.ctrl.clone();
    let mut add = |n: &str, f: File| out.push((n.to_string(), Node::File(f)));
    add("cpus", File::Cpus(t.clone(), false));
    add("cpus_list", File::Cpus(t.clone(), true));
    if t.mon.is_none() {
        add("mode", File::Mode(ctrl.clone()));
        add("schemata", File::Schemata(ctrl.clone()));
        add("size", File::Size(ctrl.clone()));
    }
    add("tasks", File::Tasks(t.clone()));
    if t.mon.is_none() {
        out.push(("mon_groups".into(), Node::Dir(Dir::MonGroups(ctrl))));
    }
    out.push(("mon_data".into(), Node::Dir(Dir::MonData(t.clone()))));
}

impl File {
    /// True when the kernel gives the file a write handler (mode 0644).
    pub fn writable(&self) -> bool {
        matches!(
            self,
            File::Schemata(_) | File::Mode(_) | File::Tasks(_) | File::Cpus(..)
        )
    }

    /// The file's contents now.
    pub fn read(&self, s: &mut State) -> String {
        match self {
            File::LastCmdStatus => s.last_cmd_status(),
            File::Info(path) => s
                .platform()
                .info_files()
                .into_iter()
                .find(|(p, _)| p == path)
                .map(|(_, c)| c)
                .unwrap_or_default(),
            File::Schemata(c) => s.schemata(c.as_deref()),
            File::Size(c) => s.size(c.as_deref()),
            File::Mode(c) => s.mode(c.as_deref()),
            File::Tasks(t) => s.tasks(t),
            File::Cpus(t, list) => s.cpus(t, *list),
            File::Counter(t, d, e) => s.counter(t, *d, e),
        }
    }
}

impl Dir {
    /// The entries of the directory, in a stable order.
    pub fn children(&self, s: &State) -> Vec<(String, Node)> {
        let mut out = Vec::new();
        match self {
            Dir::Root => {
                out.push(("info".into(), Node::Dir(Dir::Info)));
                group_files(&Target::root(), &mut out);
                for n in s.ctrl_names() {
                    out.push((n.clone(), Node::Dir(Dir::Group(n))));
                }
            }
            Dir::Info => {
                out.push(("last_cmd_status".into(), Node::File(File::LastCmdStatus)));
                let mut res: Vec<String> = s
                    .platform()
                    .info_files()
                    .into_iter()
                    .filter_map(|(p, _)| p.split_once('/').map(|(r, _)| r.to_string()))
                    .collect();
                res.dedup();
                for r in res {
                    out.push((r.clone(), Node::Dir(Dir::InfoResource(r))));
                }
            }
            Dir::InfoResource(r) => {
                for (p, _) in s.platform().info_files() {
                    if let Some(name) = p.strip_prefix(&format!("{r}/")) {
                        out.push((name.to_string(), Node::File(File::Info(p.clone()))));
                    }
                }
            }
            Dir::Group(n) => group_files(
                &Target {
                    ctrl: Some(n.clone()),
                    mon: None,
                },
                &mut out,
            ),
            Dir::MonGroups(c) => {
                for m in s.mon_names(c.as_deref()) {
                    let t = Target {
                        ctrl: c.clone(),
                        mon: Some(m.clone()),
                    };
                    out.push((m, Node::Dir(Dir::MonGroup(t))));
                }
            }
            Dir::MonGroup(t) => group_files(t, &mut out),
            Dir::MonData(t) => {
                for &d in &s.platform().domains {
                    out.push((
                        format!("mon_L3_{d:02}"),
                        Node::Dir(Dir::MonDomain(t.clone(), d)),
                    ));
                }
            }
            Dir::MonDomain(t, d) => {
                for e in EVENTS {
                    out.push((e.to_string(), Node::File(File::Counter(t.clone(), *d, e))));
                }
            }
        }
        out
    }
}

/// The node at `path` (components from the mount root), if it exists.
pub fn resolve(s: &State, path: &[&str]) -> Option<Node> {
    let mut node = Node::Dir(Dir::Root);
    for part in path {
        let Node::Dir(d) = node else {
            return None;
        };
        node = d.children(s).into_iter().find(|(n, _)| n == part)?.1;
    }
    Some(node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preset::Preset;
    use crate::preset::RdtPlatform;

    #[test]
    fn the_tree_follows_the_state() {
        let mut s = State::new(RdtPlatform::of(Preset::Skylake), "/proc".into());
        s.mkdir_ctrl("g").unwrap();
        s.mkdir_mon(Some("g"), "m").unwrap();
        let names = |p: &[&str]| match resolve(&s, p) {
            Some(Node::Dir(d)) => d
                .children(&s)
                .into_iter()
                .map(|(n, _)| n)
                .collect::<Vec<_>>()
                .join(" "),
            other => panic!("{p:?}: {other:?}"),
        };
        assert_eq!(
            names(&[]),
            "info cpus cpus_list mode schemata size tasks mon_groups mon_data g"
        );
        assert_eq!(names(&["info"]), "last_cmd_status L3 MB L3_MON");
        assert_eq!(
            names(&["g", "mon_groups", "m"]),
            "cpus cpus_list tasks mon_data"
        );
        assert_eq!(names(&["g", "mon_data"]), "mon_L3_00 mon_L3_01");
        assert_eq!(resolve(&s, &["g", "nope"]), None);
        assert_eq!(resolve(&s, &["info", "L3", "cbm_mask", "x"]), None);
        let f = resolve(&s, &["info", "L3", "cbm_mask"]).unwrap();
        let Node::File(f) = f else { panic!() };
        assert!(!f.writable());
        assert_eq!(f.read(&mut s), "7ff\n");
    }
}
