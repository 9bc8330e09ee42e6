//! The runs of a `mechanisms` design: every workload under every
//! mechanism (a partitioning one giving each app its color units,
//! contiguously in workload order), then every program alone under each
//! mechanism of `alone`.

use super::{Mechanism, Mechanisms};
use crate::build::{Run, RunApp};

impl Mechanisms {
    fn app(&self, m: &Mechanism, program: &str, core: usize) -> RunApp {
        let mut a = RunApp::of(program);
        a.overrides = m.app.clone();
        a.set("core", core as i64)
    }

    pub(crate) fn runs(&self) -> Vec<Run> {
        let mut runs = Vec::new();
        for w in &self.workloads {
            for m in &self.mechanisms {
                let mut first = 0u32;
                let apps = w
                    .programs
                    .iter()
                    .zip(&w.colors)
                    .enumerate()
                    .map(|(core, (p, &units))| {
                        let mut a = self.app(m, p, core);
                        if m.partitioned {
                            let lo = first * self.unit_colors;
                            let hi = (first + units) * self.unit_colors - 1;
                            a = a.set("colors", format!("{lo}-{hi}"));
                        }
                        first += units;
                        a
                    })
                    .collect();
                let mut r = Run::new(format!("{}/{}", w.name, m.label), apps);
                r.scenario = m.scenario.clone();
                r.stop = self.stop(true);
                runs.push(r);
            }
        }
        for a in self.alone_labels() {
            let m = self.mechanism(&a).expect("checked");
            for p in self.programs() {
                let mut r = Run::new(format!("alone/{a}/{p}"), vec![self.app(m, &p, 0)]);
                r.scenario = m.scenario.clone();
                r.stop = self.stop(false);
                runs.push(r);
            }
        }
        runs
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{design, TWO};
    use crate::build::Stop;

    #[test]
    fn partitioned_runs_get_contiguous_unit_ranges() {
        let d = design(TWO);
        d.check().unwrap();
        let runs = d.runs();
        let labels: Vec<&str> = runs.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "WL1/base",
                "WL1/huge",
                "WL1/col",
                "alone/base/a",
                "alone/base/b",
                "alone/huge/a",
                "alone/huge/b"
            ]
        );
        let col = &runs[2];
        assert_eq!(col.stop, Stop::AnyDone);
        assert_eq!(col.apps[0].overrides["colors"].as_str(), Some("0-95"));
        assert_eq!(col.apps[1].overrides["colors"].as_str(), Some("96-127"));
        assert_eq!(col.apps[1].overrides["core"].as_integer(), Some(1));
        assert!(runs[0].apps[0].overrides.get("colors").is_none());
        assert_eq!(
            runs[1].apps[1].overrides["huge-pages"].as_str(),
            Some("always")
        );
        assert_eq!(
            runs[5].apps[0].overrides["huge-pages"].as_str(),
            Some("always")
        );
        assert_eq!(runs[5].stop, Stop::AllDone);
        let windowed = design(&TWO.replace(
            "units = 16",
            "units = 16\nwarmup-instructions = 5\nmeasure-instructions = 7",
        ));
        windowed.check().unwrap();
        assert!(windowed.runs().iter().all(|r| r.stop
            == Stop::Window {
                warmup: 5,
                measure: 7
            }));
    }
}
