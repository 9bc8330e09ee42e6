//! LFOC's application classes (Table 1 of the LFOC paper, with the
//! thresholds of an LFOC preset: the paper's or PBBCache's) for the
//! programs of workloads, with the numbers that decided each class; one
//! writer per output format.

use crate::error::Error;
use crate::output::{self, Align, CsvOptions, TextTable};
use cachepart_policy::{Classification, Lfoc, LfocPreset};
use cachepart_profile::{MetricsTable, Workload};
use cachepart_units::Kind as _;
use serde::Serialize;
use std::collections::BTreeSet;

/// One program's class and the evidence.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassRow {
    /// Program name.
    pub app: String,
    /// PBBCache's numeric code (0 light, 1 streaming, 2 sensitive).
    pub code: u8,
    /// The class and the numbers that decided it.
    #[serde(flatten)]
    pub evidence: Classification,
}

/// Classifies every distinct program of `workloads`, in order of first
/// appearance, with `preset`'s thresholds.
pub fn classify_workloads(
    table: &MetricsTable,
    workloads: &[Workload],
    preset: LfocPreset,
) -> Result<Vec<ClassRow>, Error> {
    let lfoc = Lfoc::preset(preset);
    let mut seen = BTreeSet::new();
    let mut rows = Vec::new();
    for w in workloads {
        for idx in w.resolve(table)? {
            if !seen.insert(idx) {
                continue;
            }
            let curves = table.curves(idx);
            let evidence = lfoc.classify_app(&curves);
            rows.push(ClassRow {
                app: curves.name.clone(),
                code: evidence.class.code(),
                evidence,
            });
        }
    }
    Ok(rows)
}

/// A human table with the deciding numbers; `preset` (the one the rows
/// were classified with) gives the streaming threshold that the evidence
/// column names.
pub fn to_table(rows: &[ClassRow], preset: LfocPreset) -> String {
    let min_mpkc = Lfoc::preset(preset).streaming_min_llcmpkc;
    let mut t = TextTable::new(&[
        ("app", Align::Left),
        ("class", Align::Left),
        ("min sd (ways)", Align::Right),
        ("max sd (ways)", Align::Right),
        ("max sd>=2 (ways)", Align::Right),
        ("max MPKC (w)", Align::Right),
        ("streaming evidence", Align::Left),
    ]);
    for row in rows {
        let r = &row.evidence;
        t.push(vec![
            row.app.clone(),
            format!("{:<9}", r.class.name()),
            format!("{:>9.5} ({:>2})", r.min_slowdown, r.min_slowdown_ways),
            format!("{:>9.5} ({:>2})", r.max_slowdown, r.max_slowdown_ways),
            format!(
                "{:>11.5} ({:>2})",
                r.max_slowdown_from_2, r.max_slowdown_from_2_ways
            ),
            format!("{:>8.3} ({:>2})", r.max_llcmpkc, r.max_llcmpkc_ways),
            match r.streaming_ways {
                Some(x) => format!("sd<=1.03 & MPKC>={min_mpkc} at {x} ways"),
                None => "-".into(),
            },
        ]);
    }
    t.render()
}

/// One line of the CSV: a program's class and the numbers behind it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ClassCsvRow {
    /// Program name.
    pub app: String,
    /// The class (`light`, `streaming`, `sensitive`).
    pub class: &'static str,
    /// PBBCache's numeric code (0 light, 1 streaming, 2 sensitive).
    pub code: u8,
    /// Least slowdown over the way counts.
    pub min_slowdown: f64,
    /// Its way count.
    pub min_slowdown_ways: u32,
    /// Largest slowdown over the way counts.
    pub max_slowdown: f64,
    /// Its way count.
    pub max_slowdown_ways: u32,
    /// Largest slowdown from 2 ways up.
    pub max_slowdown_from_2: f64,
    /// Its way count.
    pub max_slowdown_from_2_ways: u32,
    /// Largest LLC misses per kilo-cycle.
    pub max_llcmpkc: f64,
    /// Its way count.
    pub max_llcmpkc_ways: u32,
    /// The way count that showed streaming behaviour, if any.
    pub streaming_ways: Option<u32>,
}

impl From<&ClassRow> for ClassCsvRow {
    fn from(row: &ClassRow) -> ClassCsvRow {
        let r = &row.evidence;
        ClassCsvRow {
            app: row.app.clone(),
            class: r.class.name(),
            code: row.code,
            min_slowdown: r.min_slowdown,
            min_slowdown_ways: r.min_slowdown_ways,
            max_slowdown: r.max_slowdown,
            max_slowdown_ways: r.max_slowdown_ways,
            max_slowdown_from_2: r.max_slowdown_from_2,
            max_slowdown_from_2_ways: r.max_slowdown_from_2_ways,
            max_llcmpkc: r.max_llcmpkc,
            max_llcmpkc_ways: r.max_llcmpkc_ways,
            streaming_ways: r.streaming_ways,
        }
    }
}

/// CSV with a header ([`ClassCsvRow`]); floats with 6 decimals.
pub fn to_csv(rows: &[ClassRow]) -> String {
    let rows: Vec<ClassCsvRow> = rows.iter().map(ClassCsvRow::from).collect();
    output::to_csv(&rows, CsvOptions::fixed(6))
}

/// JSON list of rows.
pub fn to_json(rows: &[ClassRow]) -> String {
    output::to_json(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::builtin::BuiltinSet;
    use cachepart_policy::AppClass;

    /// The committed built-in Debian set (`data/profiles/debian.csv`) has
    /// programs of each of LFOC's three classes under both presets, and its
    /// two streaming programs, mbw and sysbench, are classified streaming.
    #[test]
    fn builtin_debian_set_has_every_class() {
        let set = BuiltinSet::Debian;
        let table = set.table().unwrap();
        let workloads = set.workloads().unwrap();
        for preset in [LfocPreset::Paper, LfocPreset::Pbbcache] {
            let rows = classify_workloads(&table, &workloads, preset).unwrap();
            // every program of the table is in some default mix
            assert_eq!(rows.len(), table.apps().len(), "{preset:?}");
            let class_of = |app: &str| {
                rows.iter()
                    .find(|r| r.app == app)
                    .unwrap_or_else(|| panic!("{app} is in no default mix"))
                    .evidence
                    .class
            };
            for app in ["mbw", "sysbench"] {
                assert_eq!(class_of(app), AppClass::Streaming, "{app} ({preset:?})");
            }
            // the evidence names the preset's streaming threshold
            let threshold = match preset {
                LfocPreset::Paper => "MPKC>=10 at",
                LfocPreset::Pbbcache => "MPKC>=14 at",
            };
            let table = to_table(&rows, preset);
            let mbw = table.lines().find(|l| l.starts_with("mbw ")).unwrap();
            assert!(mbw.contains(threshold), "{preset:?}: {mbw}");
            for class in [AppClass::Light, AppClass::Streaming, AppClass::Sensitive] {
                assert!(
                    rows.iter().any(|r| r.evidence.class == class),
                    "no {} program ({preset:?}): {:?}",
                    class.name(),
                    rows.iter()
                        .map(|r| (&r.app, r.evidence.class.name()))
                        .collect::<Vec<_>>()
                );
            }
        }
    }
}
