//! The report of a simulated scenario in its three formats: a human table
//! ([`to_table`]), CSV with one row per app ([`to_csv`]) and pretty JSON
//! ([`to_json`]).

use crate::output::{self, Align, CsvOptions, TextTable};
use crate::registry::method::RunMethod;
use crate::run::sim::SimReport;
use serde::Serialize;

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// The report as a human table (apps, then the mix metrics).
pub fn to_table(r: &SimReport) -> String {
    let right = Align::Right;
    let mut table = TextTable::new(&[
        ("app", Align::Left),
        ("core", right),
        ("ways", right),
        ("colors", right),
        ("instructions", right),
        ("cycles", right),
        ("IPC", right),
        ("IPC alone", right),
        ("slowdown", right),
        ("LLC MPKI", right),
        ("LLC miss %", right),
        ("mem MB", right),
        ("LLC KiB at end", right),
        ("recolored", right),
    ]);
    for a in &r.apps {
        let t = &a.totals;
        let miss = if t.llc_references > 0 {
            100.0 * t.llc_misses as f64 / t.llc_references as f64
        } else {
            0.0
        };
        table.push(vec![
            t.name.clone(),
            a.core.to_string(),
            a.ways.clone(),
            a.colors.clone(),
            t.instructions.to_string(),
            format!("{:.0}", t.cycles),
            format!("{:.3}", t.ipc),
            opt(a.ipc_alone, 3),
            opt(a.slowdown, 3),
            format!("{:.2}", t.llc_mpki()),
            format!("{miss:.1}"),
            format!("{:.1}", t.memory_bytes as f64 / 1e6),
            format!("{}", t.llc_occupancy_bytes / 1024),
            t.pages_recolored.to_string(),
        ]);
    }
    let mut out = format!(
        "scenario {} on {}{}: {} intervals, {} cycles\n",
        r.scenario,
        r.platform,
        r.policy
            .as_ref()
            .map(|p| format!(", policy {p}"))
            .unwrap_or_default()
            + &match r.method {
                RunMethod::ToCompletion {} => String::new(),
                RunMethod::Restart { completions } => {
                    format!(", method restart ({completions} runs of the slowest app)")
                }
                RunMethod::FixedTime { cycles } => format!(", method fixed-time ({cycles} cycles)"),
            },
        r.intervals,
        r.simulated_cycles
    );
    out.push_str(&table.render());
    if let Some(c) = &r.coloring {
        out.push_str(&format!(
            "coloring {}: {} recoloring decisions\n",
            c.policy,
            c.events.len()
        ));
        for e in &c.events {
            out.push_str(&format!(
                "  interval {} {} ({}): +[{}] -[{}] -> {} ({} pages moved, {} marked)\n",
                e.interval,
                e.name,
                e.reason,
                e.added,
                e.removed,
                e.colors,
                e.pages_moved,
                e.pages_marked
            ));
        }
    }
    if let Some(m) = &r.metrics {
        out.push_str(&format!(
            "STP {:.3}  ANTT {:.3}  unfairness {:.3}  CoV {:.3}  Jain {:.3}  unfairness factor {:.3}  efficiency {:.3}\n",
            m.stp, m.antt, m.unfairness, m.unfairness_cov, m.jain, m.unfairness_factor, m.gmean_speedup
        ));
    }
    out
}

/// One line of the report's CSV: an app's totals, the mix metrics
/// repeated on every line.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SimCsvRow {
    /// Scenario name.
    pub scenario: String,
    /// Platform name.
    pub platform: String,
    /// The policy, empty without one.
    pub policy: String,
    /// The app's name.
    pub app: String,
    /// Its core.
    pub core: u32,
    /// Its LLC ways (mask or count, as the report gives it).
    pub ways: String,
    /// Instructions retired.
    pub instructions: u64,
    /// Cycles.
    pub cycles: f64,
    /// Instructions per cycle.
    pub ipc: f64,
    /// IPC alone, when the scenario measured it.
    pub ipc_alone: Option<f64>,
    /// IPC alone / IPC in the mix.
    pub slowdown: Option<f64>,
    /// LLC references.
    pub llc_references: u64,
    /// LLC misses.
    pub llc_misses: u64,
    /// LLC misses per kilo-instruction.
    pub llc_mpki: f64,
    /// Cycles stalled on memory.
    pub memory_stall_cycles: f64,
    /// Bytes moved to and from memory.
    pub memory_bytes: u64,
    /// TLB misses.
    pub tlb_misses: u64,
    /// Context switches.
    pub context_switches: u64,
    /// Restarts (method `restart`).
    pub restarts: u64,
    /// LLC occupancy at the end, bytes.
    pub llc_occupancy_bytes: u64,
    /// Mix STP.
    pub stp: Option<f64>,
    /// Mix ANTT.
    pub antt: Option<f64>,
    /// Mix unfairness (max/min slowdown).
    pub unfairness: Option<f64>,
    /// Mix CoV of slowdowns.
    pub unfairness_cov: Option<f64>,
    /// Mix unfairness factor.
    pub unfairness_factor: Option<f64>,
    /// Mix efficiency (geometric-mean speedup).
    pub efficiency: Option<f64>,
    /// The app's page colors, always quoted.
    #[serde(serialize_with = "output::quoted")]
    pub colors: String,
    /// Pages recolored.
    pub pages_recolored: u64,
    /// Pages paged out.
    pub page_outs: u64,
    /// Pages paged in.
    pub page_ins: u64,
    /// Allocations that fell back to another color.
    pub fallbacks: u64,
    /// Cycles stalled on paging.
    pub paging_stall_cycles: f64,
    /// LLC misses served by the L3 victim cache (the column only on a
    /// platform with one; an empty cell for an app without the count).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l3_hits: Option<Option<u64>>,
    /// LLC misses served by memory past the L3 (as `l3_hits`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l3_misses: Option<Option<u64>>,
}

/// The report's CSV rows, one per app.
pub fn csv_rows(r: &SimReport) -> Vec<SimCsvRow> {
    let l3 = r.apps.iter().any(|a| a.totals.l3_hits.is_some());
    let m = r.metrics;
    r.apps
        .iter()
        .map(|a| {
            let t = &a.totals;
            SimCsvRow {
                scenario: r.scenario.clone(),
                platform: r.platform.clone(),
                policy: r.policy.clone().unwrap_or_default(),
                app: t.name.clone(),
                core: a.core,
                ways: a.ways.clone(),
                instructions: t.instructions,
                cycles: t.cycles,
                ipc: t.ipc,
                ipc_alone: a.ipc_alone,
                slowdown: a.slowdown,
                llc_references: t.llc_references,
                llc_misses: t.llc_misses,
                llc_mpki: t.llc_mpki(),
                memory_stall_cycles: t.memory_stall_cycles,
                memory_bytes: t.memory_bytes,
                tlb_misses: t.tlb_misses,
                context_switches: t.context_switches,
                restarts: t.restarts,
                llc_occupancy_bytes: t.llc_occupancy_bytes,
                stp: m.map(|m| m.stp),
                antt: m.map(|m| m.antt),
                unfairness: m.map(|m| m.unfairness),
                unfairness_cov: m.map(|m| m.unfairness_cov),
                unfairness_factor: m.map(|m| m.unfairness_factor),
                efficiency: m.map(|m| m.gmean_speedup),
                colors: a.colors.clone(),
                pages_recolored: t.pages_recolored,
                page_outs: t.page_outs,
                page_ins: t.page_ins,
                fallbacks: t.fallbacks,
                paging_stall_cycles: t.paging_stall_cycles,
                l3_hits: l3.then_some(t.l3_hits),
                l3_misses: l3.then_some(t.l3_misses),
            }
        })
        .collect()
}

/// The report as CSV: one row per app ([`SimCsvRow`]), the mix metrics
/// repeated; on a platform with an L3 victim cache, two more columns
/// (`l3_hits`, `l3_misses`: the app's LLC misses served by the L3 and by
/// memory).
pub fn to_csv(r: &SimReport) -> String {
    output::to_csv(&csv_rows(r), CsvOptions::default())
}

/// The report as pretty JSON (samples left out: write them with
/// [`crate::output::samples`]).
pub fn to_json(r: &SimReport) -> String {
    output::to_json(r)
}
