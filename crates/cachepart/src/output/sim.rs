//! The report of a simulated scenario in its three formats: a human table
//! ([`to_table`]), CSV with one row per app ([`to_csv`]) and pretty JSON
//! ([`to_json`]).

use crate::registry::method::RunMethod;
use crate::run::sim::SimReport;

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// The report as a human table (apps, then the mix metrics).
pub fn to_table(r: &SimReport) -> String {
    let mut rows: Vec<Vec<String>> = vec![[
        "app",
        "core",
        "ways",
        "colors",
        "instructions",
        "cycles",
        "IPC",
        "IPC alone",
        "slowdown",
        "LLC MPKI",
        "LLC miss %",
        "mem MB",
        "LLC KiB at end",
        "recolored",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()];
    for a in &r.apps {
        let t = &a.totals;
        let miss = if t.llc_references > 0 {
            100.0 * t.llc_misses as f64 / t.llc_references as f64
        } else {
            0.0
        };
        rows.push(vec![
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
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    let mut out = format!(
        "scenario {} on {}{}: {} intervals, {} cycles\n",
        r.scenario,
        r.platform,
        r.policy
            .as_ref()
            .map(|p| format!(", policy {p}"))
            .unwrap_or_default()
            + &match r.method {
                RunMethod::ToCompletion => String::new(),
                RunMethod::Restart { completions } => {
                    format!(", method restart ({completions} runs of the slowest app)")
                }
                RunMethod::FixedTime { cycles } => format!(", method fixed-time ({cycles} cycles)"),
            },
        r.intervals,
        r.simulated_cycles
    );
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if c == 0 {
                    format!("{v:<w$}", w = widths[c])
                } else {
                    format!("{v:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
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

/// The report as CSV: one row per app, the mix metrics repeated; on a
/// platform with an L3 victim cache, two more columns (`l3_hits`,
/// `l3_misses`: the app's LLC misses served by the L3 and by memory).
pub fn to_csv(r: &SimReport) -> String {
    let l3 = r.apps.iter().any(|a| a.totals.l3_hits.is_some());
    let mut out = String::from(
        "scenario,platform,policy,app,core,ways,instructions,cycles,ipc,ipc_alone,slowdown,llc_references,llc_misses,llc_mpki,memory_stall_cycles,memory_bytes,tlb_misses,context_switches,restarts,llc_occupancy_bytes,stp,antt,unfairness,unfairness_cov,unfairness_factor,efficiency,colors,pages_recolored,page_outs,page_ins,fallbacks,paging_stall_cycles",
    );
    out.push_str(if l3 { ",l3_hits,l3_misses\n" } else { "\n" });
    let m = r.metrics;
    let f = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
    for a in &r.apps {
        let t = &a.totals;
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},\"{}\",{},{},{},{},{}",
            r.scenario,
            r.platform,
            r.policy.clone().unwrap_or_default(),
            t.name,
            a.core,
            a.ways,
            t.instructions,
            t.cycles,
            t.ipc,
            f(a.ipc_alone),
            f(a.slowdown),
            t.llc_references,
            t.llc_misses,
            t.llc_mpki(),
            t.memory_stall_cycles,
            t.memory_bytes,
            t.tlb_misses,
            t.context_switches,
            t.restarts,
            t.llc_occupancy_bytes,
            f(m.map(|m| m.stp)),
            f(m.map(|m| m.antt)),
            f(m.map(|m| m.unfairness)),
            f(m.map(|m| m.unfairness_cov)),
            f(m.map(|m| m.unfairness_factor)),
            f(m.map(|m| m.gmean_speedup)),
            a.colors,
            t.pages_recolored,
            t.page_outs,
            t.page_ins,
            t.fallbacks,
            t.paging_stall_cycles,
        ));
        if l3 {
            let n = |v: Option<u64>| v.map_or(String::new(), |x| x.to_string());
            out.push_str(&format!(",{},{}", n(t.l3_hits), n(t.l3_misses)));
        }
        out.push('\n');
    }
    out
}

/// The report as pretty JSON (samples left out: write them with
/// [`crate::output::samples`]).
pub fn to_json(r: &SimReport) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("reports serialise");
    s.push('\n');
    s
}
