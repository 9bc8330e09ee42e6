//! The STP-versus-unfairness chart, normalised to `stock` (as the LFOC
//! paper's Figure 6 shows them), drawn to PNG.
//!
//! Text is drawn with a TrueType font found on the system (DejaVu Sans from
//! Debian's `fonts-dejavu-core`, or the file named by `CACHEPART_FONT`).

use crate::error::Error;
use crate::registry::Algorithm;
use crate::run::profile::Outcome;
use plotters::element::ComposedElement;
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

/// Registers the charts' sans-serif font with plotters, once per process:
/// the file `CACHEPART_FONT` names, else the first DejaVu Sans found in
/// the usual Debian, Fedora and Arch places; an error says what was tried.
pub fn ensure_font() -> Result<(), Error> {
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

/// Matplotlib's `tab10`, the default colour cycle of the Python plots, so
/// that an algorithm has the same colour in the CLI's and Python's charts
/// (both colour algorithms in order of first appearance).
pub const PALETTE: [(u8, u8, u8); 10] = [
    (0x1f, 0x77, 0xb4),
    (0xff, 0x7f, 0x0e),
    (0x2c, 0xa0, 0x2c),
    (0xd6, 0x27, 0x28),
    (0x94, 0x67, 0xbd),
    (0x8c, 0x56, 0x4b),
    (0xe3, 0x77, 0xc2),
    (0x7f, 0x7f, 0x7f),
    (0xbc, 0xbd, 0x22),
    (0x17, 0xbe, 0xcf),
];

/// The `k`-th colour of [`PALETTE`] (cycling).
pub fn palette(k: usize) -> RGBColor {
    let (r, g, b) = PALETTE[k % PALETTE.len()];
    RGBColor(r, g, b)
}

/// Marker shapes, one per workload (cycling; the second round hollow).
const MARKERS: usize = 4;

/// The outline of workload `w`'s marker around (0, 0), in pixels: circle
/// (a 16-gon), triangle, square, diamond.
fn marker_outline(w: usize) -> Vec<(i32, i32)> {
    match w % MARKERS {
        0 => (0..16)
            .map(|i| {
                let a = i as f64 * std::f64::consts::TAU / 16.0;
                (
                    (6.5 * a.cos()).round() as i32,
                    (6.5 * a.sin()).round() as i32,
                )
            })
            .collect(),
        1 => vec![(0, -8), (7, 5), (-7, 5)],
        2 => vec![(-6, -6), (6, -6), (6, 6), (-6, 6)],
        _ => vec![(0, -8), (8, 0), (0, 8), (-8, 0)],
    }
}

/// A marker: a filled outline and its stroke, at a point.
type Marker<C, DB> = ComposedElement<C, DB, Polygon<(i32, i32)>, PathElement<(i32, i32)>>;

/// The marker of workload `w` at `at` (shapes of [`marker_outline`]):
/// half-transparent fill with a solid outline, so that coinciding points
/// of several algorithms stay visible; from the fifth workload on, the
/// same shapes hollow.
fn marker<C, DB: DrawingBackend>(at: C, w: usize, color: RGBColor) -> Marker<C, DB> {
    let hollow = (w / MARKERS) % 2 == 1;
    let fill = if hollow {
        WHITE.mix(0.0).filled()
    } else {
        color.mix(0.45).filled()
    };
    let outline = marker_outline(w);
    let mut closed = outline.clone();
    closed.push(outline[0]);
    EmptyElement::at(at)
        + Polygon::new(outline, fill)
        + PathElement::new(closed, color.stroke_width(2))
}

/// The file name extensions a chart can be written to (compared without
/// case): the bitmap encoder picks the image format by the name.
pub const CHART_EXTENSIONS: [&str; 4] = ["png", "jpg", "jpeg", "bmp"];

/// Refuses a chart path whose extension names no format the chart can be
/// written in, before any work is done (the encoder would only find out
/// once the chart is drawn). The message says which extensions work; the
/// caller names the option or field.
pub fn check_chart_path(path: &Path) -> Result<(), Error> {
    let expected = format!(
        "expected a file name ending in .{}",
        CHART_EXTENSIONS.join(", .")
    );
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if CHART_EXTENSIONS.iter().any(|x| x.eq_ignore_ascii_case(e)) => Ok(()),
        Some(e) => Err(Error::Usage(format!(
            "unsupported chart format .{e}: {expected}"
        ))),
        None => Err(Error::Usage(format!(
            "no file extension to choose the chart's format by: {expected}"
        ))),
    }
}

/// Draws the chart of `outcomes` (which must include `stock` for each
/// workload) to a PNG file (or JPEG or BMP, by the extension: see
/// [`CHART_EXTENSIONS`]).
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
    let mut workloads: Vec<&str> = Vec::new();
    for p in &pts {
        if !workloads.contains(&p.workload.as_str()) {
            workloads.push(&p.workload);
        }
    }
    for (k, a) in algos.iter().enumerate() {
        let color = palette(k);
        let series: Vec<(f64, f64, usize)> = pts
            .iter()
            .filter(|p| p.algorithm == *a)
            .map(|p| {
                let w = workloads.iter().position(|w| *w == p.workload).unwrap_or(0);
                (p.unfairness, p.stp, w)
            })
            .collect();
        chart
            .draw_series(series.iter().map(|&(x, y, w)| marker((x, y), w, color)))
            .map_err(|e| err(&e))?
            .label(a.to_string())
            .legend(move |(x, y)| marker((x + 8, y), 0, color));
    }
    // One legend entry per workload (its marker, in grey) when there are
    // few enough to read.
    if workloads.len() > 1 && workloads.len() <= MARKERS * 2 {
        for (w, name) in workloads.iter().enumerate() {
            chart
                .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
                .map_err(|e| err(&e))?
                .label(name.to_string())
                .legend(move |(x, y)| marker((x + 8, y), w, RGBColor(90, 90, 90)));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A chart path must end in an extension the encoder knows; anything
    /// else is refused up front, saying which work.
    #[test]
    fn chart_paths_need_a_known_extension() {
        for ok in ["c.png", "dir/c.PNG", "c.jpg", "c.jpeg", "c.bmp"] {
            assert!(check_chart_path(Path::new(ok)).is_ok(), "{ok}");
        }
        for (bad, want) in [
            ("c.txt", "unsupported chart format .txt"),
            ("c", "no file extension"),
            ("-", "no file extension"),
            ("c.gif", "unsupported chart format .gif"),
        ] {
            let e = check_chart_path(Path::new(bad)).unwrap_err().to_string();
            assert!(
                e.contains(want) && e.contains(".png, .jpg, .jpeg, .bmp"),
                "{bad}: {e}"
            );
        }
    }

    /// The CLI's palette is the Python plots' (`TAB10` in
    /// `python/cachepart/profile.py`), colour for colour.
    #[test]
    fn palette_matches_the_python_plots() {
        let py = include_str!("../../../../python/cachepart/profile.py");
        let start = py.find("TAB10 = [").expect("TAB10 in profile.py");
        let list = &py[start..start + py[start..].find(']').unwrap()];
        let hex: Vec<(u8, u8, u8)> = list
            .split('"')
            .filter(|s| s.starts_with('#'))
            .map(|s| {
                let v = u32::from_str_radix(&s[1..], 16).unwrap();
                ((v >> 16) as u8, (v >> 8) as u8, v as u8)
            })
            .collect();
        assert_eq!(hex, PALETTE.to_vec());
    }

    /// Every workload's marker is a closed shape around its point, and the
    /// four shapes differ.
    #[test]
    fn markers_differ_by_workload() {
        let shapes: Vec<Vec<(i32, i32)>> = (0..MARKERS).map(marker_outline).collect();
        for (i, a) in shapes.iter().enumerate() {
            assert!(a.len() >= 3);
            assert!(a.iter().all(|&(x, y)| x.abs() <= 8 && y.abs() <= 8));
            for b in &shapes[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(marker_outline(MARKERS), shapes[0]);
    }
}
