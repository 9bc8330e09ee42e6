//! The search's report as users read it: a text table, CSV and JSON.

use crate::run::throttle::search::{Candidate, SearchReport};

fn settings(c: &Candidate) -> String {
    (0..c.duty.len())
        .map(|i| {
            let mut s = c.duty[i].to_string();
            if let Some(w) = c.prefetchers[i] {
                s.push_str(&format!(" pf={w:#x}"));
            }
            if let Some(q) = c.quantum[i] {
                s.push_str(&format!(" idle={q}"));
            }
            if let Some(k) = &c.colors[i] {
                s.push_str(&format!(" colors={k}"));
            }
            s
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The report as a table: the default, the best duty-cycle and hybrid
/// settings, then every candidate.
pub fn to_table(r: &SearchReport) -> String {
    let mut out = format!(
        "scenario {} on {}: apps {}\n",
        r.scenario,
        r.platform,
        r.apps.join(", ")
    );
    let line = |label: &str, c: &Candidate| {
        format!(
            "{label:<12} unfairness factor {:.4}  efficiency {:.4}  [{}]  slowdowns {}\n",
            c.unfairness_factor,
            c.efficiency,
            settings(c),
            c.slowdowns
                .iter()
                .map(|s| format!("{s:.3}"))
                .collect::<Vec<_>>()
                .join(" ")
        )
    };
    out.push_str(&line("default", &r.default));
    out.push_str(&line("duty cycle", &r.best_duty));
    if let Some(h) = &r.best_hybrid {
        out.push_str(&line("hybrid", h));
    }
    if let Some(q) = &r.best_quantum {
        out.push_str(&line("quantum", q));
    }
    if let Some(c) = &r.best_coloring {
        out.push_str(&line("coloring", c));
    }
    out.push_str(&format!("\n{} candidates:\n", r.candidates.len()));
    for c in &r.candidates {
        out.push_str(&line(c.stage, c));
    }
    out
}

/// The candidates as CSV, one row per candidate and app.
pub fn to_csv(r: &SearchReport) -> String {
    let mut out = String::from(
        "scenario,candidate,stage,app,duty,prefetchers,quantum,colors,slowdown,unfairness_factor,efficiency\n",
    );
    for (i, c) in r.candidates.iter().enumerate() {
        for (a, name) in r.apps.iter().enumerate() {
            out.push_str(&format!(
                "{},{i},{},{name},{},{},{},\"{}\",{},{},{}\n",
                r.scenario,
                c.stage,
                c.duty[a],
                c.prefetchers[a].map_or(String::new(), |w| format!("{w:#x}")),
                c.quantum[a].map_or(String::new(), |q| q.to_string()),
                c.colors[a].as_deref().unwrap_or(""),
                c.slowdowns[a],
                c.unfairness_factor,
                c.efficiency
            ));
        }
    }
    out
}

/// The report as JSON.
pub fn to_json(r: &SearchReport) -> String {
    serde_json::to_string_pretty(r).unwrap_or_default() + "\n"
}
