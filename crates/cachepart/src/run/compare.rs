//! Two metrics tables of the same programs side by side: typically one
//! measured on real hardware (PBBCache's Skylake CAT sweeps) and one made
//! by `profile from-trace` on the simulator. For each program paired
//! between the two, at every way count: LLC misses per kilo-instruction
//! and IPC normalised to the IPC with every way (the shape LFOC's
//! classes and the partitioning policies see), their differences, and
//! each table's LFOC class.

use cachepart_units::Kind as _;
use std::fmt::Write as _;

use cachepart_policy::{Lfoc, LfocPreset};
use cachepart_profile::MetricsTable;
use serde::Serialize;

use crate::error::Error;
use crate::output::{self, CsvOptions};

/// One program at one way count.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComparePoint {
    /// Way count.
    pub ways: usize,
    /// LLC MPKI, measured table.
    pub llcmpki_measured: f64,
    /// LLC MPKI, simulated table.
    pub llcmpki_simulated: f64,
    /// IPC / IPC at the most ways, measured table.
    pub nipc_measured: f64,
    /// IPC / IPC at the most ways, simulated table.
    pub nipc_simulated: f64,
}

impl ComparePoint {
    /// Simulated minus measured normalised IPC.
    pub fn nipc_diff(&self) -> f64 {
        self.nipc_simulated - self.nipc_measured
    }

    /// Simulated minus measured LLC MPKI.
    pub fn llcmpki_diff(&self) -> f64 {
        self.llcmpki_simulated - self.llcmpki_measured
    }
}

/// One program paired between the tables.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComparedApp {
    /// Its name in the simulated table.
    pub simulated: String,
    /// Its name in the measured table.
    pub measured: String,
    /// LFOC class from the measured table.
    pub class_measured: &'static str,
    /// LFOC class from the simulated table.
    pub class_simulated: &'static str,
    /// Largest |simulated - measured| normalised IPC over the way counts.
    pub max_nipc_diff: f64,
    /// The way count where it is.
    pub max_nipc_diff_ways: usize,
    /// Every way count.
    pub points: Vec<ComparePoint>,
}

impl ComparedApp {
    /// Whether both tables put the program in the same class.
    pub fn same_class(&self) -> bool {
        self.class_measured == self.class_simulated
    }
}

/// Pairs the programs of `simulated` with those of `measured`: each name
/// of `map` (`(simulated, measured)`) with its partner, then every other
/// simulated program that has a namesake in the measured table. Refuses
/// tables of different way counts, a name of `map` that a table lacks,
/// and no pair at all.
pub fn compare(
    measured: &MetricsTable,
    simulated: &MetricsTable,
    map: &[(String, String)],
    preset: LfocPreset,
) -> Result<Vec<ComparedApp>, Error> {
    if measured.ways() != simulated.ways() {
        return Err(Error::Usage(format!(
            "{} has {} way counts and {} has {}: compare tables of one platform's ways",
            measured.source().display(),
            measured.ways(),
            simulated.source().display(),
            simulated.ways()
        )));
    }
    let unknown = |t: &MetricsTable, side: &str, name: &str| {
        let hint = t
            .suggest(name)
            .map(|s| format!(" (did you mean {s:?}?)"))
            .unwrap_or_default();
        Error::Usage(format!(
            "--map: {side} program {name:?} is not in {}{hint}",
            t.source().display()
        ))
    };
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (s, m) in map {
        if simulated.app(s).is_none() {
            return Err(unknown(simulated, "simulated", s));
        }
        if measured.app(m).is_none() {
            return Err(unknown(measured, "measured", m));
        }
        if pairs.iter().any(|(ps, _)| ps == s) {
            return Err(Error::Usage(format!(
                "--map: simulated program {s:?} is mapped twice"
            )));
        }
        pairs.push((s.clone(), m.clone()));
    }
    for a in simulated.apps() {
        if !pairs.iter().any(|(s, _)| *s == a.name) && measured.app(&a.name).is_some() {
            pairs.push((a.name.clone(), a.name.clone()));
        }
    }
    if pairs.is_empty() {
        return Err(Error::Usage(format!(
            "no program of {} is in {}: pair them with --map SIMULATED=MEASURED",
            simulated.source().display(),
            measured.source().display()
        )));
    }
    let lfoc = Lfoc::preset(preset);
    // the policy view of a paired app (its names were checked above);
    // the table has refused IPCs outside (0, 1e3], so the IPC with every
    // way is positive
    let curves = |t: &MetricsTable, name: &str| {
        t.curves(t.app_index(name).expect("paired names are in their tables"))
    };
    let normalised = |ipc: &[f64]| -> Vec<f64> {
        let full = ipc[ipc.len() - 1];
        ipc.iter().map(|x| x / full).collect()
    };
    Ok(pairs
        .into_iter()
        .map(|(s, m)| {
            let (cm, cs) = (curves(measured, &m), curves(simulated, &s));
            let (n_m, n_s) = (normalised(&cm.ipc), normalised(&cs.ipc));
            let points: Vec<ComparePoint> = (0..measured.ways())
                .map(|w| ComparePoint {
                    ways: w + 1,
                    llcmpki_measured: cm.llcmpki[w],
                    llcmpki_simulated: cs.llcmpki[w],
                    nipc_measured: n_m[w],
                    nipc_simulated: n_s[w],
                })
                .collect();
            let (max_nipc_diff, max_nipc_diff_ways) = points
                .iter()
                .map(|p| (p.nipc_diff().abs(), p.ways))
                .fold((0.0, 1), |best, x| if x.0 > best.0 { x } else { best });
            ComparedApp {
                class_measured: lfoc.classify_app(&cm).class.name(),
                class_simulated: lfoc.classify_app(&cs).class.name(),
                simulated: s,
                measured: m,
                max_nipc_diff,
                max_nipc_diff_ways,
                points,
            }
        })
        .collect())
}

/// A block per program (its classes, then a row per way count), and a
/// summary: programs in the same class, and within `tolerance` of the
/// measured normalised IPC at every way count.
pub fn to_table(apps: &[ComparedApp], tolerance: f64) -> String {
    let mut s = String::new();
    for a in apps {
        let name = if a.simulated == a.measured {
            a.simulated.clone()
        } else {
            format!("{} (measured as {})", a.simulated, a.measured)
        };
        let _ = writeln!(
            s,
            "{name}: class {} measured, {} simulated{}; max |nIPC diff| {:.3} at {} way{}",
            a.class_measured,
            a.class_simulated,
            if a.same_class() { "" } else { " (differ)" },
            a.max_nipc_diff,
            a.max_nipc_diff_ways,
            if a.max_nipc_diff_ways == 1 { "" } else { "s" }
        );
        let _ = writeln!(
            s,
            "  {:>4}  {:>9}  {:>9}  {:>9}  {:>7}  {:>7}  {:>7}",
            "ways", "MPKI meas", "MPKI sim", "diff", "nIPC m", "nIPC s", "diff"
        );
        for p in &a.points {
            let _ = writeln!(
                s,
                "  {:>4}  {:>9.3}  {:>9.3}  {:>+9.3}  {:>7.3}  {:>7.3}  {:>+7.3}",
                p.ways,
                p.llcmpki_measured,
                p.llcmpki_simulated,
                p.llcmpki_diff(),
                p.nipc_measured,
                p.nipc_simulated,
                p.nipc_diff()
            );
        }
        s.push('\n');
    }
    let same = apps.iter().filter(|a| a.same_class()).count();
    let close = apps.iter().filter(|a| a.max_nipc_diff <= tolerance).count();
    let _ = writeln!(
        s,
        "{same} of {n} programs in the same class; {close} of {n} within {tolerance} of the measured normalised IPC at every way count",
        n = apps.len()
    );
    s
}

/// One line of the CSV: a program at a way count.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CompareRow {
    /// Its name in the simulated table.
    pub simulated: String,
    /// Its name in the measured table.
    pub measured: String,
    /// Way count.
    pub ways: usize,
    /// LLC MPKI, measured table.
    pub llcmpki_measured: f64,
    /// LLC MPKI, simulated table.
    pub llcmpki_simulated: f64,
    /// Simulated minus measured LLC MPKI.
    pub llcmpki_diff: f64,
    /// IPC / IPC at the most ways, measured table.
    pub nipc_measured: f64,
    /// IPC / IPC at the most ways, simulated table.
    pub nipc_simulated: f64,
    /// Simulated minus measured normalised IPC.
    pub nipc_diff: f64,
    /// LFOC class from the measured table.
    pub class_measured: &'static str,
    /// LFOC class from the simulated table.
    pub class_simulated: &'static str,
}

/// The programs flattened to a row per program and way count.
pub fn rows(apps: &[ComparedApp]) -> Vec<CompareRow> {
    apps.iter()
        .flat_map(|a| {
            a.points.iter().map(|p| CompareRow {
                simulated: a.simulated.clone(),
                measured: a.measured.clone(),
                ways: p.ways,
                llcmpki_measured: p.llcmpki_measured,
                llcmpki_simulated: p.llcmpki_simulated,
                llcmpki_diff: p.llcmpki_diff(),
                nipc_measured: p.nipc_measured,
                nipc_simulated: p.nipc_simulated,
                nipc_diff: p.nipc_diff(),
                class_measured: a.class_measured,
                class_simulated: a.class_simulated,
            })
        })
        .collect()
}

/// CSV, a row per program and way count ([`rows`]); floats with 6
/// decimals.
pub fn to_csv(apps: &[ComparedApp]) -> String {
    output::to_csv(&rows(apps), CsvOptions::fixed(6))
}

/// JSON: a list of programs, each with its points.
pub fn to_json(apps: &[ComparedApp]) -> String {
    output::to_json(apps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const HDR: &str = "BENCH,NR_WAYS,ipc,llcmpki,llcmpkc,bandwidth_mbps";

    /// A table of `apps` on 3 ways: (name, ipc by ways, mpki by ways).
    fn table(file: &str, apps: &[(&str, [f64; 3], [f64; 3])]) -> MetricsTable {
        let mut s = format!("{HDR}\n");
        for (n, ipc, mpki) in apps {
            for w in 0..3 {
                let _ = writeln!(
                    s,
                    "{n},{},{},{},{},100",
                    w + 1,
                    ipc[w],
                    mpki[w],
                    mpki[w] * ipc[w]
                );
            }
        }
        MetricsTable::from_csv_str(&s, Path::new(file)).unwrap()
    }

    #[test]
    fn pairs_by_name_and_map_and_computes_the_differences() {
        let m = table(
            "m.csv",
            &[
                ("gcc06", [0.5, 0.8, 1.0], [10.0, 5.0, 2.0]),
                ("lbm", [1.0, 1.0, 1.0], [30.0, 30.0, 30.0]),
            ],
        );
        let s = table(
            "s.csv",
            &[
                ("gcc", [1.2, 1.8, 2.0], [8.0, 4.0, 2.0]),
                ("lbm", [0.5, 0.5, 0.5], [29.0, 29.0, 29.0]),
                ("other", [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]),
            ],
        );
        let map = [("gcc".to_string(), "gcc06".to_string())];
        let r = compare(&m, &s, &map, LfocPreset::Paper).unwrap();
        assert_eq!(r.len(), 2, "gcc by map, lbm by name; other unpaired");
        let gcc = &r[0];
        assert_eq!(
            (gcc.simulated.as_str(), gcc.measured.as_str()),
            ("gcc", "gcc06")
        );
        // normalised: measured 0.5, 0.8, 1; simulated 0.6, 0.9, 1
        assert!((gcc.points[0].nipc_diff() - 0.1).abs() < 1e-12);
        assert!((gcc.max_nipc_diff - 0.1).abs() < 1e-12);
        assert_eq!(gcc.max_nipc_diff_ways, 1);
        assert!((gcc.points[0].llcmpki_diff() + 2.0).abs() < 1e-12);
        // lbm: flat IPC in both, so nIPC is 1 everywhere
        assert_eq!(r[1].max_nipc_diff, 0.0);
        let text = to_table(&r, 0.1);
        assert!(text.contains("gcc (measured as gcc06)"), "{text}");
        assert!(text.contains("of 2 programs in the same class"), "{text}");
        assert_eq!(to_csv(&r).lines().count(), 1 + 2 * 3);
        let json: serde_json::Value = serde_json::from_str(&to_json(&r)).unwrap();
        assert_eq!(json[0]["points"][2]["ways"], 3);
    }

    #[test]
    fn refusals_name_what_is_wrong() {
        let m = table("m.csv", &[("a", [1.0; 3], [1.0; 3])]);
        let s = table("s.csv", &[("b", [1.0; 3], [1.0; 3])]);
        let e = compare(&m, &s, &[], LfocPreset::Paper)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--map") && e.contains("s.csv"), "{e}");
        let e = compare(&m, &s, &[("bb".into(), "a".into())], LfocPreset::Paper)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"bb\"") && e.contains("\"b\""), "{e}");
        let e = compare(&m, &s, &[("b".into(), "z".into())], LfocPreset::Paper)
            .unwrap_err()
            .to_string();
        assert!(e.contains("measured program \"z\""), "{e}");
    }
}
