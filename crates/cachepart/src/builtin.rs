//! The built-in default scenario: a small metrics table of cachepart's own
//! making, from parametric curves, and a default workload over it.
//!
//! The platform is an 11-way, 27.5 MiB LLC (2.5 MiB per way) at 2 GHz, as in
//! the LFOC paper. Each program is described by its LLC accesses per
//! kilo-instruction, its working set and its access pattern:
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
//! measurements; real profiles made from traces will replace them.

use cachepart_profile::{parse_text, MetricsTable, ProfileError, Workload};
use std::fmt::Write;
use std::path::Path;

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

/// The built-in default workloads (one per line, program names).
pub const WORKLOADS: &str = "stream-hi,sens-mid,light-a,sens-small,stream-lo,light-b\n\
stream-hi,stream-lo,sens-large,sens-mid,light-c\n\
sens-small,sens-mid,sens-large,light-a\n";

/// The built-in metrics table as PBBCache-format CSV text.
pub fn metrics_csv() -> String {
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

/// The built-in metrics table.
pub fn table() -> Result<MetricsTable, ProfileError> {
    MetricsTable::from_csv_str(&metrics_csv(), Path::new("<builtin metrics>"))
}

/// The built-in workloads.
pub fn workloads() -> Result<Vec<Workload>, ProfileError> {
    parse_text(WORKLOADS, Path::new("<builtin workloads>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_table_is_consistent() {
        let t = table().unwrap();
        assert_eq!(t.ways(), WAYS);
        assert_eq!(t.apps().len(), PROGRAMS.len());
        for w in workloads().unwrap() {
            w.resolve(&t).unwrap();
        }
        // a cache-sensitive program gains from ways; a streaming one does not
        let sens = t.column("sens-mid", "ipc").unwrap();
        assert!(sens[10] > 1.3 * sens[0]);
        let st = t.column("stream-hi", "ipc").unwrap();
        assert!((st[10] - st[0]).abs() < 1e-9);
    }
}
