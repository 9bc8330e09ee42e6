//! Tasks of an emulated mount (`rdtgroup_tasks_write`, `show_rdt_tasks`):
//! which control and monitoring group each thread is in, moves one id at
//! a time with the kernel's refusals, and listings without the threads
//! that have exited.

use super::refusal::{kstrtoint, Outcome, Refusal};
use super::state::{State, Target};

impl State {
    fn alive(&self, tid: u32) -> bool {
        self.proc_root.join(tid.to_string()).exists()
    }

    /// The `tasks` file: the threads in the group (a control group lists
    /// those of its monitoring groups too; the root lists every thread
    /// not in another control group). Exited threads are dropped.
    pub fn tasks(&mut self, t: &Target) -> String {
        let gone: Vec<u32> = self
            .tasks
            .keys()
            .copied()
            .filter(|&tid| !self.alive(tid))
            .collect();
        for tid in gone {
            self.tasks.remove(&tid);
        }
        let mut tids: Vec<u32> = match (&t.ctrl, &t.mon) {
            (None, None) => {
                let mut all = self.system_threads();
                all.retain(|tid| self.tasks.get(tid).is_none_or(|x| x.ctrl.is_none()));
                all
            }
            (c, None) => self
                .tasks
                .iter()
                .filter(|(_, x)| &x.ctrl == c)
                .map(|(k, _)| *k)
                .collect(),
            _ => self
                .tasks
                .iter()
                .filter(|(_, x)| *x == t)
                .map(|(k, _)| *k)
                .collect(),
        };
        tids.sort_unstable();
        tids.iter().map(|t| format!("{t}\n")).collect()
    }

    fn system_threads(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let Ok(procs) = std::fs::read_dir(&self.proc_root) else {
            return out;
        };
        for p in procs.flatten() {
            if p.file_name().to_string_lossy().parse::<u32>().is_err() {
                continue;
            }
            if let Ok(threads) = std::fs::read_dir(p.path().join("task")) {
                out.extend(
                    threads
                        .flatten()
                        .filter_map(|t| t.file_name().to_string_lossy().parse::<u32>().ok()),
                );
            }
        }
        out
    }

    /// A write to `tasks`: comma-separated thread ids (0: the writer),
    /// moved one by one until one fails.
    pub fn write_tasks(&mut self, t: &Target, buf: &str, writer: u32) -> Outcome {
        self.status.clear();
        let r = self.try_write_tasks(t, buf, writer);
        self.record(r)
    }

    fn try_write_tasks(&mut self, t: &Target, buf: &str, writer: u32) -> Outcome {
        let mut rest = Some(buf);
        while let Some(b) = rest.filter(|b| !b.is_empty() && !b.starts_with('\n')) {
            let (item, tail) = match b.split_once(',') {
                Some((i, tail)) => (i, Some(tail)),
                None => (b, None),
            };
            rest = tail;
            let item = item.trim();
            let Some(pid) = kstrtoint(item) else {
                return Err(Refusal::inval(format!(
                    "Task list parsing error pid {item}"
                )));
            };
            let Ok(pid) = u32::try_from(pid) else {
                return Err(Refusal::inval(format!("Invalid pid {pid}")));
            };
            let tid = if pid == 0 { writer } else { pid };
            self.move_task(t, tid).map_err(|e| Refusal {
                errno: e.errno,
                status: Some(format!(
                    "{}Error while processing task {pid}",
                    e.status.map(|s| s + "\n").unwrap_or_default()
                )),
            })?;
        }
        Ok(())
    }

    fn move_task(&mut self, t: &Target, tid: u32) -> Outcome {
        if !self.alive(tid) {
            return Err(Refusal::with(libc::ESRCH, format!("No task {tid}")));
        }
        let current_ctrl = self.tasks.get(&tid).and_then(|x| x.ctrl.clone());
        if t.mon.is_some() && current_ctrl != t.ctrl {
            return Err(Refusal::inval("Can't move task to different control group"));
        }
        if t.ctrl.is_none() && t.mon.is_none() {
            self.tasks.remove(&tid);
        } else {
            self.tasks.insert(tid, t.clone());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::emulate::refusal::Refusal;
    use crate::emulate::state::tests::{g, state};
    use crate::emulate::state::Target;
    use crate::preset::Preset;

    #[test]
    fn tasks_live_in_one_group_and_return_on_rmdir() {
        let (t, mut s) = state(Preset::Skylake);
        s.mkdir_ctrl("a").unwrap();
        s.mkdir_ctrl("b").unwrap();
        s.mkdir_mon(Some("a"), "m").unwrap();
        s.write_tasks(&g("a", None), "10", 1).unwrap();
        assert_eq!(s.tasks(&g("a", None)), "10\n");
        assert_eq!(
            s.write_tasks(&g("b", Some("x")), "10", 1)
                .map_err(|e| e.errno),
            Err(libc::EINVAL)
        );
        assert_eq!(
            s.write_tasks(&g("a", None), "99", 1),
            Err(Refusal::with(
                libc::ESRCH,
                "No task 99\nError while processing task 99"
            ))
        );
        assert_eq!(
            s.last_cmd_status(),
            "No task 99\nError while processing task 99\n"
        );
        s.write_tasks(&g("a", Some("m")), "10,11", 1)
            .map_err(|e| e.errno)
            .unwrap_err();
        s.write_tasks(&g("a", None), "11", 1).unwrap();
        s.write_tasks(&g("a", Some("m")), "10,11", 1).unwrap();
        assert_eq!(s.tasks(&g("a", None)), "10\n11\n");
        assert_eq!(s.tasks(&g("a", Some("m"))), "10\n11\n");
        s.write_tasks(&g("b", None), "11", 1).unwrap();
        assert_eq!(s.tasks(&g("a", Some("m"))), "10\n");
        assert_eq!(s.tasks(&Target::root()), "12\n");
        s.rmdir_mon(Some("a"), "m").unwrap();
        assert_eq!(s.tasks(&g("a", None)), "10\n");
        s.rmdir_ctrl("a").unwrap();
        assert_eq!(s.tasks(&Target::root()), "10\n12\n");
        std::fs::remove_dir_all(t.path().join("11")).unwrap();
        assert_eq!(s.tasks(&g("b", None)), "");
    }
}
