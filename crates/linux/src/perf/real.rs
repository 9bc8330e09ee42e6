//! Counting through `perf_event_open` (the `perf-event2` crate): per app,
//! one counter per event on the app's process, inherited by its threads,
//! counting user and kernel cycles on any CPU.

use super::{scaled, CounterSource, Counts};
use crate::cpu::{CpuModel, RawEvent};
use crate::error::{Error, Result};
use perf_event::events::{Event, Hardware, Raw};
use perf_event::{Builder, Counter};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The PMU directory of the CPU under `sys_root`
/// (`bus/event_source/devices/cpu`, or `cpu_core` on hybrid parts), if any.
pub fn pmu_dir(sys_root: &Path) -> Option<PathBuf> {
    let base = sys_root.join("bus/event_source/devices");
    ["cpu", "cpu_core"]
        .into_iter()
        .map(|d| base.join(d))
        .find(|d| d.is_dir())
}

struct AppCounters {
    /// instructions, cycles, LLC references, LLC misses, then the stall event.
    counters: Vec<Counter>,
    /// The scaled totals at the previous read.
    last: Vec<f64>,
}

/// Hardware counters of real processes.
pub struct PerfCounters {
    stall: Option<RawEvent>,
    apps: BTreeMap<usize, AppCounters>,
}

fn no_pmu(what: String) -> Error {
    Error::NoPmu { what }
}

fn open(event: impl Event, pid: u32, what: &str) -> Result<Counter> {
    let mut b = Builder::new(event);
    b.observe_pid(pid as i32)
        .any_cpu()
        .inherit(true)
        .exclude_kernel(false)
        .enabled(true);
    b.build().map_err(|e| match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => no_pmu(format!(
            "perf_event_open({what}) for pid {pid} failed: {e} (the kernel has no such hardware event)"
        )),
        _ => Error::Counter {
            what: format!("perf_event_open({what}) for pid {pid}"),
            source: e,
        },
    })
}

impl PerfCounters {
    /// Counters for the CPU `cpu`; fails with [`Error::NoPmu`] when
    /// `sys_root` shows no CPU PMU (a virtual CPU without one).
    pub fn new(sys_root: &Path, cpu: &CpuModel) -> Result<PerfCounters> {
        if pmu_dir(sys_root).is_none() {
            return Err(no_pmu(format!(
                "no {}/bus/event_source/devices/cpu or cpu_core",
                sys_root.display()
            )));
        }
        Ok(PerfCounters {
            stall: cpu.known().and_then(|k| k.stall_event),
            apps: BTreeMap::new(),
        })
    }
}

impl CounterSource for PerfCounters {
    fn attach(&mut self, app: usize, pid: u32) -> Result<()> {
        let mut counters = vec![
            open(Hardware::INSTRUCTIONS, pid, "instructions")?,
            open(Hardware::CPU_CYCLES, pid, "cycles")?,
            open(Hardware::CACHE_REFERENCES, pid, "LLC references")?,
            open(Hardware::CACHE_MISSES, pid, "LLC misses")?,
        ];
        if let Some(e) = self.stall {
            counters.push(open(Raw::new(e.config()), pid, e.name)?);
        }
        let last = vec![0.0; counters.len()];
        self.apps.insert(app, AppCounters { counters, last });
        Ok(())
    }

    fn detach(&mut self, app: usize) {
        self.apps.remove(&app);
    }

    fn read(&mut self, app: usize, _elapsed: Duration) -> Result<Counts> {
        let Some(a) = self.apps.get_mut(&app) else {
            return Ok(Counts {
                l2_miss_stall_cycles: self.stall.map(|_| 0.0),
                ..Counts::default()
            });
        };
        let mut delta = Vec::with_capacity(a.counters.len());
        for (c, last) in a.counters.iter_mut().zip(a.last.iter_mut()) {
            let v = c.read_count_and_time().map_err(|e| Error::Counter {
                what: format!("reading the counters of app {app}"),
                source: e,
            })?;
            let now = scaled(v.count, v.time_enabled, v.time_running);
            delta.push((now - *last).max(0.0));
            *last = now;
        }
        Ok(Counts {
            instructions: delta[0],
            cycles: delta[1],
            llc_references: delta[2],
            llc_misses: delta[3],
            l2_miss_stall_cycles: delta.get(4).copied(),
        })
    }

    fn stall_event(&self) -> Option<&str> {
        self.stall.map(|e| e.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_pmu_directory_is_a_clear_error() {
        let t = tempfile::tempdir().unwrap();
        let cpu = CpuModel::parse(
            "vendor_id : GenuineIntel\ncpu family : 6\nmodel : 85\n",
            Path::new("c"),
        )
        .unwrap();
        let e = PerfCounters::new(t.path(), &cpu).err().unwrap();
        let msg = e.to_string();
        assert!(matches!(e, Error::NoPmu { .. }), "{msg}");
        assert!(
            msg.contains("bus/event_source/devices/cpu or cpu_core"),
            "{msg}"
        );
        assert!(msg.contains("--fake-counters"), "{msg}");
        std::fs::create_dir_all(t.path().join("bus/event_source/devices/cpu")).unwrap();
        let p = PerfCounters::new(t.path(), &cpu).unwrap();
        assert_eq!(p.stall_event(), Some("CYCLE_ACTIVITY.STALLS_L2_MISS"));
    }

    /// On a kernel without a PMU (this project's VMs) attaching fails with
    /// the missing-PMU error; with one, it counts this very process.
    #[test]
    fn attach_counts_or_names_the_missing_pmu() {
        let cpu = CpuModel::read(Path::new("/proc")).unwrap_or(CpuModel {
            vendor: String::new(),
            family: 0,
            model: 0,
            model_name: String::new(),
            mhz: None,
        });
        let Ok(mut p) = PerfCounters::new(Path::new("/sys"), &cpu) else {
            return; // no PMU directory: the test above covers the error
        };
        match p.attach(0, std::process::id()) {
            Ok(()) => {
                let mut x = 0u64;
                for i in 0..1_000_000u64 {
                    x = x.wrapping_add(std::hint::black_box(i));
                }
                std::hint::black_box(x);
                let c = p.read(0, Duration::from_millis(1)).unwrap();
                assert!(c.instructions > 0.0 && c.cycles > 0.0, "{c:?}");
            }
            Err(e) => assert!(
                matches!(e, Error::NoPmu { .. } | Error::Counter { .. }),
                "{e}"
            ),
        }
    }
}
