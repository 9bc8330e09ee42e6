//! The STP-versus-unfairness chart, normalised to `stock` (as the LFOC
//! paper's Figure 6 shows them), drawn to PNG.
//!
//! Text is drawn with a TrueType font found on the system (DejaVu Sans from
//! Debian's `fonts-dejavu-core`, or the file named by `CACHEPART_FONT`).

use crate::algorithm::Algorithm;
use crate::error::Error;
use crate::experiment::Outcome;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use std::path::Path;
use std::sync::OnceLock;

/// One point: an algorithm on a workload, relative to `stock` on it.
#[derive(Clone, Debug, PartialEq)]
pub struct TradeoffPoint {
    /// Workload name.
    pub workload: String,
    /// Algorithm name.
    pub algorithm: String,
    /// Unfairness / unfairness of stock.
    pub unfairness: f64,
    /// STP / STP of stock.
    pub stp: f64,
}

/// Normalises every non-stock outcome to the stock outcome of its workload.
pub fn tradeoff_points(outcomes: &[Outcome]) -> Result<Vec<TradeoffPoint>, Error> {
    let mut pts = Vec::new();
    for o in outcomes.iter().filter(|o| o.algorithm != Algorithm::Stock) {
        let stock = outcomes
            .iter()
            .find(|s| s.workload == o.workload && s.algorithm == Algorithm::Stock)
            .ok_or_else(|| {
                Error::Chart(format!(
                    "workload {} has no stock result to normalise to (add stock to the algorithms)",
                    o.workload
                ))
            })?;
        let (m, s) = (&o.evaluation.metrics, &stock.evaluation.metrics);
        pts.push(TradeoffPoint {
            workload: o.workload.clone(),
            algorithm: o.algorithm.to_string(),
            unfairness: m.unfairness / s.unfairness,
            stp: m.stp / s.stp,
        });
    }
    Ok(pts)
}

const FONT_PATHS: [&str; 3] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

pub(crate) fn ensure_font() -> Result<(), Error> {
    static FONT: OnceLock<Result<(), String>> = OnceLock::new();
    FONT.get_or_init(|| {
        let candidates: Vec<String> = std::env::var("CACHEPART_FONT")
            .into_iter()
            .chain(FONT_PATHS.iter().map(|s| s.to_string()))
            .collect();
        for p in &candidates {
            if let Ok(bytes) = std::fs::read(p) {
                let leaked: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                return register_font("sans-serif", FontStyle::Normal, leaked)
                    .map_err(|_| format!("{p}: not a TrueType font"));
            }
        }
        Err(format!(
            "no font found (tried {}); install Debian's fonts-dejavu-core or set CACHEPART_FONT to a .ttf file",
            candidates.join(", ")
        ))
    })
    .clone()
    .map_err(Error::Chart)
}

/// Draws the chart of `outcomes` (which must include `stock` for each
/// workload) to a PNG file.
pub fn write_tradeoff_png(outcomes: &[Outcome], path: &Path, title: &str) -> Result<(), Error> {
    let pts = tradeoff_points(outcomes)?;
    if pts.is_empty() {
        return Err(Error::Chart("nothing to draw besides stock".into()));
    }
    ensure_font()?;
    let err = |e: &dyn std::fmt::Display| Error::Chart(format!("{}: {e}", path.display()));
    let mut algos: Vec<&str> = Vec::new();
    for p in &pts {
        if !algos.contains(&p.algorithm.as_str()) {
            algos.push(&p.algorithm);
        }
    }
    let (mut x0, mut x1, mut y0, mut y1) = (1.0f64, 1.0f64, 1.0f64, 1.0f64);
    for p in &pts {
        x0 = x0.min(p.unfairness);
        x1 = x1.max(p.unfairness);
        y0 = y0.min(p.stp);
        y1 = y1.max(p.stp);
    }
    let (mx, my) = (((x1 - x0) * 0.08).max(0.01), ((y1 - y0) * 0.08).max(0.01));
    let root = BitMapBackend::new(path, (900, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d((x0 - mx)..(x1 + mx), (y0 - my)..(y1 + my))
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("unfairness / unfairness of stock (lower is better)")
        .y_desc("STP / STP of stock (higher is better)")
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| err(&e))?;
    let grey = RGBColor(150, 150, 150);
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(1.0, y0 - my), (1.0, y1 + my)],
            grey,
        )))
        .map_err(|e| err(&e))?;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(x0 - mx, 1.0), (x1 + mx, 1.0)],
            grey,
        )))
        .map_err(|e| err(&e))?;
    for (k, a) in algos.iter().enumerate() {
        let color = Palette99::pick(k).to_rgba();
        let series: Vec<(f64, f64)> = pts
            .iter()
            .filter(|p| p.algorithm == *a)
            .map(|p| (p.unfairness, p.stp))
            .collect();
        chart
            .draw_series(
                series
                    .iter()
                    .map(|&(x, y)| Circle::new((x, y), 6, color.filled())),
            )
            .map_err(|e| err(&e))?
            .label(a.to_string())
            .legend(move |(x, y)| Circle::new((x + 8, y), 6, color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
