//! The search's report as users read it: a text table, CSV and JSON.

use crate::output::{self, CsvOptions};
use crate::run::throttle::search::{Candidate, SearchReport};
use serde::Serialize;

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

/// One line of the search's CSV: an app's setting in one candidate, with
/// the candidate's unfairness factor and efficiency.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CandidateRow {
    /// Scenario name.
    pub scenario: String,
    /// The candidate's index in the report.
    pub candidate: usize,
    /// The search stage that tried it.
    pub stage: &'static str,
    /// The app's name.
    pub app: String,
    /// The app's duty cycle (`5/8`).
    pub duty: String,
    /// The app's prefetcher word (`0x4`), empty when left as is.
    pub prefetchers: String,
    /// The app's idle quantum, empty without one.
    pub quantum: String,
    /// The app's page colors, empty when not colored; always quoted.
    #[serde(serialize_with = "output::quoted")]
    pub colors: String,
    /// The app's slowdown.
    pub slowdown: f64,
    /// The candidate's unfairness factor.
    pub unfairness_factor: f64,
    /// The candidate's efficiency.
    pub efficiency: f64,
}

/// The candidates flattened to a row per candidate and app.
pub fn csv_rows(r: &SearchReport) -> Vec<CandidateRow> {
    let mut rows = Vec::new();
    for (i, c) in r.candidates.iter().enumerate() {
        for (a, name) in r.apps.iter().enumerate() {
            rows.push(CandidateRow {
                scenario: r.scenario.clone(),
                candidate: i,
                stage: c.stage,
                app: name.clone(),
                duty: c.duty[a].to_string(),
                prefetchers: c.prefetchers[a].map_or(String::new(), |w| format!("{w:#x}")),
                quantum: c.quantum[a].map_or(String::new(), |q| q.to_string()),
                colors: c.colors[a].clone().unwrap_or_default(),
                slowdown: c.slowdowns[a],
                unfairness_factor: c.unfairness_factor,
                efficiency: c.efficiency,
            });
        }
    }
    rows
}

/// The candidates as CSV, one row per candidate and app
/// ([`CandidateRow`]).
pub fn to_csv(r: &SearchReport) -> String {
    output::to_csv(&csv_rows(r), CsvOptions::default())
}

/// The report as JSON.
pub fn to_json(r: &SearchReport) -> String {
    output::to_json(r)
}
