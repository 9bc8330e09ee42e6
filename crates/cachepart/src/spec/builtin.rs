//! The built-in default data of the table-driven machine: two metrics
//! tables, each with default workloads ([`BuiltinSet`]).
//!
//! * [`BuiltinSet::Debian`] (the default): nine Debian programs (xz,
//!   sort, sqlite3, bzip2, md5sum, grep, python3, and the streaming mbw and
//!   sysbench) captured with
//!   valgrind lackey and profiled alone on the simulator at every way count
//!   of the `xeon-gold-6138-small` platform (`cachepart profile
//!   from-trace`); `data/profiles/debian.csv` and
//!   `data/profiles/debian-workloads.csv`, remade by
//!   `scripts/make-builtin-profiles.sh`; see `docs/profiles.md`.
//! * [`BuiltinSet::Parametric`]: eight made-up programs from parametric
//!   curves, below.
//!
//! The parametric platform is an 11-way, 27.5 MiB LLC (2.5 MiB per way) at
//! 2 GHz, as in the LFOC paper. Each program is described by its LLC
//! accesses per kilo-instruction, its working set and its access pattern:
//!
//! * `skewed`: accesses over the working set with a skewed popularity; a
//!   cache of `C` bytes misses a fraction `1 - (C / WS)^alpha` of them
//!   (`alpha = 1` is uniform random access; smaller is more skewed, with
//!   diminishing returns from extra ways);
//! * `stream`: sequential sweeps over a working set far larger than the
//!   cache: every access misses whatever the size.
//!
//! Misses cost `penalty` cycles of which a fraction `mlp` overlaps with
//! other work; IPC follows `1 / (CPI_base + mpki / 1000 * penalty * (1 - mlp))`.
//! Bandwidth is 64 bytes per miss. The numbers are illustrative, not
//! measurements.

use crate::error::Error;
use cachepart_profile::{parse_text, MetricsTable, ProfileError, Workload};
use cachepart_units::Kind as _;
use std::borrow::Cow;
use std::fmt::Write;
use std::path::Path;

/// The Debian programs' metrics table (PBBCache CSV).
pub const DEBIAN_METRICS: &str = include_str!("../../../../data/profiles/debian.csv");
/// The Debian programs' default workloads (one mix per line).
pub const DEBIAN_WORKLOADS: &str = include_str!("../../../../data/profiles/debian-workloads.csv");

/// A built-in data set (`debian`, `parametric`); an unknown name is a usage
/// error that lists them.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
    strum::VariantNames,
    strum::EnumMessage,
)]
#[strum(
    serialize_all = "kebab-case",
    parse_err_ty = Error,
    parse_err_fn = unknown_set
)]
pub enum BuiltinSet {
    /// Real programs profiled on the simulator (the default).
    #[default]
    #[strum(
        message = "Nine Debian programs captured with lackey and profiled on the simulator (xeon-gold-6138-small), see docs/profiles.md"
    )]
    Debian,
    /// Made-up programs from parametric curves.
    #[strum(message = "Eight made-up programs from parametric curves")]
    Parametric,
}

/// The error of an unknown data set.
fn unknown_set(s: &str) -> Error {
    Error::Usage(format!(
        "built-in data set {s:?}: expected {}",
        BuiltinSet::expected_quoted()
    ))
}

impl BuiltinSet {
    /// Its metrics table as PBBCache CSV text.
    pub fn metrics_csv(self) -> Cow<'static, str> {
        match self {
            BuiltinSet::Debian => Cow::Borrowed(DEBIAN_METRICS),
            BuiltinSet::Parametric => Cow::Owned(parametric_metrics_csv()),
        }
    }

    /// Its workloads as text (one mix per line).
    pub fn workloads_text(self) -> &'static str {
        match self {
            BuiltinSet::Debian => DEBIAN_WORKLOADS,
            BuiltinSet::Parametric => PARAMETRIC_WORKLOADS,
        }
    }

    /// Its metrics table.
    pub fn table(self) -> Result<MetricsTable, ProfileError> {
        MetricsTable::from_csv_str(
            &self.metrics_csv(),
            Path::new(&format!("<builtin {} metrics>", self.name())),
        )
    }

    /// Its workloads.
    pub fn workloads(self) -> Result<Vec<Workload>, ProfileError> {
        parse_text(
            self.workloads_text(),
            Path::new(&format!("<builtin {} workloads>", self.name())),
        )
    }
}

/// Ways of the built-in platform.
pub const WAYS: usize = 11;
/// Bytes per way (27.5 MiB / 11).
pub const WAY_BYTES: f64 = 2.5 * 1024.0 * 1024.0;
const FREQ_HZ: f64 = 2.0e9;

struct Program {
    name: &'static str,
    cpi_base: f64,
    apki: f64,
    working_set_mib: f64,
    alpha: f64,
    stream: bool,
    penalty: f64,
    mlp: f64,
}

const PROGRAMS: [Program; 8] = [
    Program {
        name: "stream-hi",
        cpi_base: 0.55,
        apki: 32.0,
        working_set_mib: 4096.0,
        alpha: 1.0,
        stream: true,
        penalty: 220.0,
        mlp: 0.82,
    },
    Program {
        name: "stream-lo",
        cpi_base: 0.60,
        apki: 22.0,
        working_set_mib: 2048.0,
        alpha: 1.0,
        stream: true,
        penalty: 220.0,
        mlp: 0.85,
    },
    Program {
        name: "sens-small",
        cpi_base: 0.50,
        apki: 12.0,
        working_set_mib: 7.0,
        alpha: 0.8,
        stream: false,
        penalty: 220.0,
        mlp: 0.35,
    },
    Program {
        name: "sens-mid",
        cpi_base: 0.55,
        apki: 16.0,
        working_set_mib: 22.0,
        alpha: 0.6,
        stream: false,
        penalty: 220.0,
        mlp: 0.30,
    },
    Program {
        name: "sens-large",
        cpi_base: 0.60,
        apki: 10.0,
        working_set_mib: 48.0,
        alpha: 0.5,
        stream: false,
        penalty: 220.0,
        mlp: 0.25,
    },
    Program {
        name: "light-a",
        cpi_base: 0.40,
        apki: 1.5,
        working_set_mib: 1.2,
        alpha: 1.0,
        stream: false,
        penalty: 220.0,
        mlp: 0.40,
    },
    Program {
        name: "light-b",
        cpi_base: 0.70,
        apki: 0.8,
        working_set_mib: 2.0,
        alpha: 1.0,
        stream: false,
        penalty: 220.0,
        mlp: 0.40,
    },
    Program {
        name: "light-c",
        cpi_base: 0.45,
        apki: 3.0,
        working_set_mib: 0.8,
        alpha: 1.0,
        stream: false,
        penalty: 220.0,
        mlp: 0.50,
    },
];

/// The default set's workloads (one per line, program names).
pub const WORKLOADS: &str = DEBIAN_WORKLOADS;

/// The parametric set's workloads (one per line, program names).
pub const PARAMETRIC_WORKLOADS: &str = "stream-hi,sens-mid,light-a,sens-small,stream-lo,light-b\n\
stream-hi,stream-lo,sens-large,sens-mid,light-c\n\
sens-small,sens-mid,sens-large,light-a\n";

/// The default set's metrics table as PBBCache-format CSV text.
pub fn metrics_csv() -> String {
    BuiltinSet::default().metrics_csv().into_owned()
}

/// The parametric set's metrics table as PBBCache-format CSV text.
pub fn parametric_metrics_csv() -> String {
    let mut s = String::from(
        "BENCH,NR_WAYS,ipc,llcrpki,llcmpki,llcrpkc,llcmpkc,llc_usage_kb,bandwidth_mbps,stalls_l2_miss,stalls_l3_miss,stalls_total,stalls_store_buf\n",
    );
    for p in &PROGRAMS {
        let ws = p.working_set_mib * 1024.0 * 1024.0;
        for w in 1..=WAYS {
            let cache = w as f64 * WAY_BYTES;
            let miss_ratio = if p.stream {
                1.0
            } else {
                (1.0 - (cache / ws).min(1.0).powf(p.alpha)) + 0.002
            };
            let mpki = p.apki * miss_ratio;
            let stall_cpi = mpki / 1000.0 * p.penalty * (1.0 - p.mlp);
            let l2_stall_cpi = p.apki / 1000.0 * 40.0 * (1.0 - p.mlp);
            let cpi = p.cpi_base + stall_cpi + l2_stall_cpi;
            let ipc = 1.0 / cpi;
            let mpkc = mpki * ipc;
            let rpkc = p.apki * ipc;
            let usage_kb = cache.min(ws) / 1024.0;
            let bw = mpkc / 1000.0 * FREQ_HZ * 64.0 / 1e6;
            let _ = writeln!(
                s,
                "{},{w},{ipc:.6},{:.6},{mpki:.6},{rpkc:.6},{mpkc:.6},{usage_kb:.3},{bw:.6},{:.6},{:.6},{:.6},{:.6}",
                p.name,
                p.apki,
                (stall_cpi + l2_stall_cpi) / cpi,
                stall_cpi / cpi,
                (stall_cpi + l2_stall_cpi + 0.1 * p.cpi_base) / cpi,
                0.0,
            );
        }
    }
    s
}

/// The default set's metrics table.
pub fn table() -> Result<MetricsTable, ProfileError> {
    BuiltinSet::default().table()
}

/// The default set's workloads.
pub fn workloads() -> Result<Vec<Workload>, ProfileError> {
    BuiltinSet::default().workloads()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parametric_table_is_consistent() {
        let t = BuiltinSet::Parametric.table().unwrap();
        assert_eq!(t.ways(), WAYS);
        assert_eq!(t.apps().len(), PROGRAMS.len());
        for w in BuiltinSet::Parametric.workloads().unwrap() {
            w.resolve(&t).unwrap();
        }
        // a cache-sensitive program gains from ways; a streaming one does not
        let sens = t.column("sens-mid", "ipc").unwrap();
        assert!(sens[10] > 1.3 * sens[0]);
        let st = t.column("stream-hi", "ipc").unwrap();
        assert!((st[10] - st[0]).abs() < 1e-9);
    }

    #[test]
    fn debian_table_is_the_default_and_consistent() {
        assert_eq!(BuiltinSet::default(), BuiltinSet::Debian);
        assert_eq!(metrics_csv(), DEBIAN_METRICS);
        let t = table().unwrap();
        assert_eq!(t.ways(), WAYS);
        assert_eq!(t.apps().len(), 9);
        for w in workloads().unwrap() {
            w.resolve(&t).unwrap();
        }
        // every column of from-trace's output is there
        for c in crate::run::from_trace::HEADER.iter().skip(2) {
            assert!(t.column_index(c).is_some(), "{c}");
        }
        // the set has programs that gain from ways and programs that do not
        let gain = |a: &str| {
            let m = t.column(a, "llcmpki").unwrap();
            m[0] / m[WAYS - 1].max(1e-9)
        };
        let gains: Vec<f64> = t.apps().iter().map(|a| gain(&a.name)).collect();
        assert!(gains.iter().any(|&g| g > 2.0), "{gains:?}");
        assert!(gains.iter().any(|&g| g < 1.5), "{gains:?}");
        assert!("parametric".parse::<BuiltinSet>().is_ok());
        assert!("spec".parse::<BuiltinSet>().is_err());
    }
}
