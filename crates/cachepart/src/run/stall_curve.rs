//! Tam et al.'s stall-rate curves (WIOSCA'07) made from the alone sweeps
//! of [`crate::run::alone`]: at each partition size, the memory-stall
//! cycles per 10^9 cycles the app ran, beside its IPC, MPKI and misses per
//! 10^9 cycles (the miss-rate curve on the same axis), and their CSV.

use serde::Serialize;

use crate::error::Error;
use crate::output::{self, CsvOptions};
use crate::run::alone::{sweep_many_with, AloneRun, Axis, ProfileOptions, SweepProgress, TraceApp};

/// One point of a stall-rate curve.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StallPoint {
    /// Ways or colors.
    pub size: u32,
    /// LLC bytes of that partition.
    pub size_bytes: u64,
    /// Memory-stall cycles per 10^9 cycles (Tam et al.'s stall rate).
    pub stall_rate: f64,
    /// Instructions per cycle.
    pub ipc: f64,
    /// LLC misses per kilo-instruction.
    pub llc_mpki: f64,
    /// LLC misses per 10^9 cycles (the miss-rate curve on the same axis).
    pub llc_misses_per_gcycle: f64,
    /// Instructions run.
    pub instructions: u64,
    /// Cycles run.
    pub cycles: f64,
    /// Memory-stall cycles.
    pub memory_stall_cycles: f64,
    /// With an L3 victim cache: LLC misses it served per 10^9 cycles
    /// (Tam et al.'s Fig. 8 "L3 hits").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l3_hits_per_gcycle: Option<f64>,
    /// With an L3 victim cache: LLC misses served by memory per 10^9
    /// cycles (Fig. 8 "local memory hits").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l3_misses_per_gcycle: Option<f64>,
}

/// A stall-rate curve of one trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StallCurve {
    /// The program.
    pub app: String,
    /// The platform it ran on.
    pub platform: String,
    /// Ways or colors.
    pub axis: Axis,
    /// One point per size, smallest first.
    pub points: Vec<StallPoint>,
}

/// A stall-rate point from an alone run.
pub fn stall_point(run: &AloneRun) -> StallPoint {
    let t = &run.totals;
    let per_g = |x: f64| {
        if t.cycles > 0.0 {
            x / t.cycles * 1e9
        } else {
            0.0
        }
    };
    StallPoint {
        size: run.size,
        size_bytes: run.size_bytes,
        stall_rate: per_g(t.memory_stall_cycles),
        ipc: t.ipc,
        llc_mpki: t.llc_mpki(),
        llc_misses_per_gcycle: per_g(t.llc_misses as f64),
        instructions: t.instructions,
        cycles: t.cycles,
        memory_stall_cycles: t.memory_stall_cycles,
        l3_hits_per_gcycle: t.l3_hits.map(|h| per_g(h as f64)),
        l3_misses_per_gcycle: t.l3_misses.map(|m| per_g(m as f64)),
    }
}

/// The stall-rate curve of `app` over `axis` on `opts.platform`.
pub fn stall_rate_curve(
    app: &TraceApp,
    axis: Axis,
    opts: &ProfileOptions,
) -> Result<StallCurve, Error> {
    stall_rate_curve_with(app, axis, opts, None)
}

/// [`stall_rate_curve`], reporting each finished alone run to `progress`.
pub fn stall_rate_curve_with(
    app: &TraceApp,
    axis: Axis,
    opts: &ProfileOptions,
    progress: Option<SweepProgress<'_>>,
) -> Result<StallCurve, Error> {
    let runs = sweep_many_with(std::slice::from_ref(app), axis, opts, progress)?
        .pop()
        .unwrap_or_default();
    Ok(StallCurve {
        app: app.name.clone(),
        platform: opts.platform.name.clone(),
        axis,
        points: runs.iter().map(stall_point).collect(),
    })
}

/// One line of a stall-rate curve's CSV; the size's column is named by
/// the axis (`ways` or `colors`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StallCsvRow {
    /// Way count (on the `ways` axis).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ways: Option<u32>,
    /// Color count (on the `colors` axis).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub colors: Option<u32>,
    /// The LLC bytes at this size.
    pub size_bytes: u64,
    /// Memory-stall cycles per 10^9 cycles.
    #[serde(serialize_with = "output::fixed::<3, _>")]
    pub stall_rate: f64,
    /// Instructions per cycle.
    #[serde(serialize_with = "output::fixed::<6, _>")]
    pub ipc: f64,
    /// LLC misses per kilo-instruction.
    #[serde(serialize_with = "output::fixed::<6, _>")]
    pub llc_mpki: f64,
    /// LLC misses per 10^9 cycles.
    #[serde(serialize_with = "output::fixed::<3, _>")]
    pub llc_misses_per_gcycle: f64,
    /// Instructions run.
    pub instructions: u64,
    /// Cycles.
    #[serde(serialize_with = "output::fixed::<3, _>")]
    pub cycles: f64,
    /// Memory-stall cycles.
    #[serde(serialize_with = "output::fixed::<3, _>")]
    pub memory_stall_cycles: f64,
    /// L3 hits per 10^9 cycles (the column only on a platform with an L3
    /// victim cache).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "l3_cell")]
    pub l3_hits_per_gcycle: Option<Option<f64>>,
    /// L3 misses per 10^9 cycles (as `l3_hits_per_gcycle`).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "l3_cell")]
    pub l3_misses_per_gcycle: Option<Option<f64>>,
}

fn l3_cell<S: serde::Serializer>(v: &Option<Option<f64>>, s: S) -> Result<S::Ok, S::Error> {
    output::fixed_opt::<3, S>(&v.flatten(), s)
}

/// The curve's CSV rows.
pub fn stall_csv_rows(curve: &StallCurve) -> Vec<StallCsvRow> {
    let l3 = curve.points.iter().any(|p| p.l3_hits_per_gcycle.is_some());
    curve
        .points
        .iter()
        .map(|p| StallCsvRow {
            ways: (curve.axis == Axis::Ways).then_some(p.size),
            colors: (curve.axis == Axis::Colors).then_some(p.size),
            size_bytes: p.size_bytes,
            stall_rate: p.stall_rate,
            ipc: p.ipc,
            llc_mpki: p.llc_mpki,
            llc_misses_per_gcycle: p.llc_misses_per_gcycle,
            instructions: p.instructions,
            cycles: p.cycles,
            memory_stall_cycles: p.memory_stall_cycles,
            l3_hits_per_gcycle: l3.then_some(p.l3_hits_per_gcycle),
            l3_misses_per_gcycle: l3.then_some(p.l3_misses_per_gcycle),
        })
        .collect()
}

/// The curve as CSV ([`StallCsvRow`]: `ways` or `colors`, `size_bytes`,
/// `stall_rate`, `ipc`, `llc_mpki`, ...; on a platform with an L3 victim
/// cache, two more columns: `l3_hits_per_gcycle,l3_misses_per_gcycle`).
pub fn stall_curve_csv(curve: &StallCurve) -> String {
    output::to_csv(&stall_csv_rows(curve), CsvOptions::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(l3: Option<(f64, f64)>) -> StallPoint {
        StallPoint {
            size: 1,
            size_bytes: 122880,
            stall_rate: 5e8,
            ipc: 0.5,
            llc_mpki: 10.0,
            llc_misses_per_gcycle: 3e6,
            instructions: 1000,
            cycles: 2000.0,
            memory_stall_cycles: 1000.0,
            l3_hits_per_gcycle: l3.map(|x| x.0),
            l3_misses_per_gcycle: l3.map(|x| x.1),
        }
    }

    fn curve(p: StallPoint) -> StallCurve {
        StallCurve {
            app: "a".into(),
            platform: "p".into(),
            axis: Axis::Colors,
            points: vec![p],
        }
    }

    #[test]
    fn l3_columns_only_with_an_l3() {
        let plain = stall_curve_csv(&curve(point(None)));
        assert!(plain.starts_with(
            "colors,size_bytes,stall_rate,ipc,llc_mpki,llc_misses_per_gcycle,instructions,cycles,memory_stall_cycles\n"
        ));
        assert!(plain.ends_with(",1000.000\n"), "{plain}");
        let json = serde_json::to_string(&point(None)).unwrap();
        assert!(!json.contains("l3"), "{json}");
        let l3 = stall_curve_csv(&curve(point(Some((2e6, 1e6)))));
        assert!(l3.contains("memory_stall_cycles,l3_hits_per_gcycle,l3_misses_per_gcycle\n"));
        assert!(l3.ends_with(",1000.000,2000000.000,1000000.000\n"), "{l3}");
    }
}
