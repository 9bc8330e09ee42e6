//! The checks of a `mechanisms` design: each refusal names the field
//! (`workload[0].colors`, `mechanism[1].app.colors`, ...) and says what is
//! wrong.

use super::Mechanisms;
use crate::design::positive;

impl Mechanisms {
    pub(crate) fn check(&self) -> Result<(), (String, String)> {
        positive("units", self.units)?;
        positive("unit-colors", self.unit_colors)?;
        match (self.warmup_instructions, self.measure_instructions) {
            (Some(_), None) | (None, Some(_)) => {
                return Err((
                    "measure-instructions".into(),
                    "warmup-instructions and measure-instructions go together".into(),
                ))
            }
            (_, Some(0)) => return Err(("measure-instructions".into(), "must be positive".into())),
            _ => {}
        }
        if self.workloads.is_empty() {
            return Err((
                "workload".into(),
                "needs at least one [[design.workload]]".into(),
            ));
        }
        if self.mechanisms.is_empty() {
            return Err((
                "mechanism".into(),
                "needs at least one [[design.mechanism]] (the first is the baseline)".into(),
            ));
        }
        let mut names = std::collections::BTreeSet::new();
        for (i, w) in self.workloads.iter().enumerate() {
            let f = |k: &str| format!("workload[{i}].{k}");
            if !names.insert(&w.name) {
                return Err((f("name"), format!("{:?} names two workloads", w.name)));
            }
            if w.name.is_empty() || w.name.contains(['/', ':']) {
                return Err((f("name"), "must be non-empty, without '/' or ':'".into()));
            }
            if w.programs.is_empty() {
                return Err((f("programs"), "needs at least one program".into()));
            }
            if w.colors.len() != w.programs.len() {
                return Err((
                    f("colors"),
                    format!(
                        "has {} shares for {} programs (one per program)",
                        w.colors.len(),
                        w.programs.len()
                    ),
                ));
            }
            if let Some(j) = w.colors.iter().position(|&c| c == 0) {
                return Err((
                    format!("workload[{i}].colors[{j}]"),
                    "must be positive".into(),
                ));
            }
            let sum: u64 = w.colors.iter().map(|&c| u64::from(c)).sum();
            if sum > u64::from(self.units) {
                return Err((
                    f("colors"),
                    format!("shares sum to {sum}, more than the {} units", self.units),
                ));
            }
        }
        let mut labels = std::collections::BTreeSet::new();
        for (i, m) in self.mechanisms.iter().enumerate() {
            if !labels.insert(&m.label) {
                return Err((
                    format!("mechanism[{i}].label"),
                    format!("{:?} labels two mechanisms", m.label),
                ));
            }
            if m.label.is_empty() || m.label.contains(['/', ':']) {
                return Err((
                    format!("mechanism[{i}].label"),
                    "must be non-empty, without '/' or ':'".into(),
                ));
            }
            for k in ["colors", "core", "name"] {
                if m.app.contains_key(k) {
                    return Err((
                        format!("mechanism[{i}].app.{k}"),
                        "is set by the design (colors from the workload's shares, one core per program)".into(),
                    ));
                }
            }
        }
        for (i, a) in self.alone.iter().enumerate() {
            if self.mechanism(a).is_none() {
                return Err((
                    format!("alone[{i}]"),
                    format!("no mechanism labelled {a:?}"),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{design, TWO};

    #[test]
    fn bad_designs_name_the_field() {
        let cases = [
            ("colors = [12, 4]", "colors = [12]", "workload[0].colors"),
            ("colors = [12, 4]", "colors = [12, 8]", "workload[0].colors"),
            (
                "colors = [12, 4]",
                "colors = [12, 0]",
                "workload[0].colors[1]",
            ),
            (
                "alone = [\"base\", \"huge\"]",
                "alone = [\"nope\"]",
                "alone[0]",
            ),
            ("label = \"col\"", "label = \"base\"", "mechanism[2].label"),
            (
                "app = { huge-pages",
                "app = { colors = \"0\", huge-pages",
                "mechanism[1].app.colors",
            ),
            ("units = 16", "units = 0", "units"),
            (
                "units = 16",
                "units = 16\nwarmup-instructions = 5",
                "measure-instructions",
            ),
        ];
        for (from, to, field) in cases {
            let d = design(&TWO.replace(from, to));
            let (f, what) = d.check().unwrap_err();
            assert_eq!(f, field, "{to}: {what}");
        }
    }
}
