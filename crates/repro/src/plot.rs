//! The figure of an experiment: one chart of lines with points, x numeric
//! or categorical (tick labels), drawn to PNG with plotters.

use std::path::Path;

use plotters::prelude::*;

use cachepart::Error;

/// One line of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Its legend.
    pub name: String,
    /// Its points (x, y), in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Dashed (drawn thinner, hollow points): the second of a pair.
    pub dashed: bool,
}

/// A chart: axes, lines, optional category labels for x = 0, 1, ...
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chart {
    /// Caption.
    pub title: String,
    /// x axis label.
    pub x_label: String,
    /// y axis label.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
    /// Labels of x = 0, 1, 2, ... (categorical x), if any.
    pub x_ticks: Option<Vec<String>>,
    /// A horizontal reference line (e.g. 1.0 for normalised values).
    pub reference: Option<f64>,
    /// Legend in the upper left corner (default: upper right).
    pub legend_left: bool,
}

impl Chart {
    /// Draws the chart to a PNG file.
    pub fn write_png(&self, path: &Path) -> Result<(), Error> {
        cachepart::output::chart::ensure_font()?;
        let err = |e: &dyn std::fmt::Display| Error::Chart(format!("{}: {e}", path.display()));
        let pts = self.series.iter().flat_map(|s| s.points.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in pts.filter(|p| p.0.is_finite() && p.1.is_finite()) {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        if x0 > x1 {
            return Err(Error::Chart(format!(
                "{}: no points to draw",
                path.display()
            )));
        }
        if let Some(r) = self.reference {
            y0 = y0.min(r);
            y1 = y1.max(r);
        }
        let mx = ((x1 - x0) * 0.05).max(0.5);
        let my = ((y1 - y0) * 0.08).max(0.01);
        let root = BitMapBackend::new(path, (960, 600)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                &self.title,
                (
                    "sans-serif",
                    if self.title.chars().count() > 80 {
                        16
                    } else {
                        20
                    },
                ),
            )
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d((x0 - mx)..(x1 + mx), (y0 - my)..(y1 + my))
            .map_err(|e| err(&e))?;
        let ticks = self.x_ticks.clone();
        let n_ticks = ticks.as_ref().map_or(12, |t| t.len());
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .label_style(("sans-serif", 13))
            .x_labels(n_ticks.max(2))
            .x_label_formatter(&|x: &f64| match &ticks {
                Some(t) => {
                    let i = x.round();
                    if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < t.len() {
                        t[i as usize].clone()
                    } else {
                        String::new()
                    }
                }
                None => format!("{x:.0}"),
            })
            .draw()
            .map_err(|e| err(&e))?;
        if let Some(r) = self.reference {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x0 - mx, r), (x1 + mx, r)],
                    RGBColor(150, 150, 150),
                )))
                .map_err(|e| err(&e))?;
        }
        for (k, s) in self.series.iter().enumerate() {
            let color = cachepart::output::chart::palette(k);
            let style = if s.dashed {
                color.stroke_width(1)
            } else {
                color.stroke_width(2)
            };
            let points: Vec<(f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), style))
                .map_err(|e| err(&e))?
                .label(s.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
            let dashed = s.dashed;
            chart
                .draw_series(points.iter().map(|&(x, y)| {
                    if dashed {
                        Circle::new((x, y), 4, color.stroke_width(1))
                    } else {
                        Circle::new((x, y), 4, color.filled())
                    }
                }))
                .map_err(|e| err(&e))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .position(if self.legend_left {
                SeriesLabelPosition::UpperLeft
            } else {
                SeriesLabelPosition::UpperRight
            })
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
        Ok(())
    }
}
